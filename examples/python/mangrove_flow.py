"""A GPU Mangrove-style notebook flow as a script (docs/python.md): import the
GPU Mangrove tutorial databases into a kcast dataset, read it as a
DataFrame, cross-validate kcast's forest per application (leave one
application out) and plot predicted against measured times.

  python3 mangrove_flow.py MANGROVE_DIR OUT_DIR [KCAST]
"""
import os
import subprocess
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import LeaveOneGroupOut, cross_val_predict

import kcast

src, out = sys.argv[1], sys.argv[2]
kcast_bin = sys.argv[3] if len(sys.argv) > 3 else "kcast"
os.makedirs(out, exist_ok=True)
db = os.path.join(out, "mangrove.db")
if os.path.exists(db):
    os.remove(db)
subprocess.run([kcast_bin, "dataset", "import-mangrove",
                "--features", os.path.join(src, "cuda_flux_metrics.db"),
                "--time", os.path.join(src, "kernel_time_T4.db"), "--gpu", "T4", "-o", db],
               check=True, capture_output=True)

df = kcast.read_dataset(db, counts_as_zero=True)  # launches x features, time_ns@T4
df = df[df["time_ns@T4"].notna()]
features = [c for c in df.columns if c.split(".")[0] in ("launch", "op", "class", "mem")
            and df[c].notna().all()]
X, y, groups = df[features], df["time_ns@T4"].to_numpy(), df["app"].to_numpy()
pred = cross_val_predict(kcast.Regressor(n_estimators=100), X, y, groups=groups,
                         cv=LeaveOneGroupOut())
ape = 100 * np.abs(pred - y) / y
print(f"{len(df)} launches of {len(set(groups))} applications: leave one application out, "
      f"median APE {np.median(ape):.1f} %")

fig, ax = plt.subplots(figsize=(5, 5))
ax.loglog(y / 1e3, pred / 1e3, ".", alpha=0.5)
lim = [min(y.min(), pred.min()) / 1e3, max(y.max(), pred.max()) / 1e3]
ax.plot(lim, lim, "k--", lw=1)
ax.set_xlabel("measured time on T4 (us)")
ax.set_ylabel("predicted, application held out (us)")
fig.tight_layout()
fig.savefig(os.path.join(out, "predicted_vs_measured.png"), dpi=100)
print("wrote", os.path.join(out, "predicted_vs_measured.png"))
