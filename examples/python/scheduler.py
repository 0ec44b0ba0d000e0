"""The scheduler example (examples/scheduler) in Python (docs/python.md):
predict each launch of a dataset on a few GPUs (the analytic estimate, or a
model per GPU), then place the launches greedily on the GPU that finishes
them first, against round-robin.

  python3 scheduler.py DATASET [GPU...]
"""
import sys

import kcast

db = sys.argv[1]
gpus = sys.argv[2:] or ["H200", "A100", "T4"]
df = kcast.read_dataset(db)
feature_cols = [c for c in df.columns if "." in c and "@" not in c]
times = {g: [] for g in gpus}
for _, row in df.iterrows():
    fs = kcast.Features({c: float(row[c]) for c in feature_cols if row[c] == row[c]})
    for g in gpus:
        times[g].append(kcast.analytic(fs, g)["time_ns"])
n = len(df)
# round-robin
busy = {g: 0.0 for g in gpus}
for i in range(n):
    busy[gpus[i % len(gpus)]] += times[gpus[i % len(gpus)]][i]
rr = max(busy.values())
# earliest finish, longest launches first
busy = {g: 0.0 for g in gpus}
for i in sorted(range(n), key=lambda i: -min(times[g][i] for g in gpus)):
    g = min(gpus, key=lambda g: busy[g] + times[g][i])
    busy[g] += times[g][i]
ef = max(busy.values())
print(f"{n} launches on {', '.join(gpus)}: makespan round-robin {rr / 1e6:.3f} ms, "
      f"earliest finish {ef / 1e6:.3f} ms ({rr / ef:.2f}x)")
