"""No leak over 1,000,000 predictions: Python's allocations (tracemalloc)
and the process's resident memory stay flat."""
import gc
import tracemalloc

import numpy as np
import pandas as pd

import kcast


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_a_million_predictions_leak_nothing(synth_model, synth_csv):
    m = kcast.Model(synth_model)
    df = pd.read_csv(synth_csv).drop(columns="y")
    rows = [r for r in df.head(100).to_dict("records")]
    fs = [kcast.Features(r) for r in rows]
    X = np.ascontiguousarray(df.to_numpy())
    names = list(df.columns)

    def work(n):
        for i in range(n):
            m.predict(rows[i % 100])
            m.predict(fs[i % 100])
        for _ in range(n // 1000):
            m.predict(X, feature_names=names)

    work(20000)  # warm-up: caches, arenas
    gc.collect()
    tracemalloc.start()
    r0 = rss_kb()
    s0 = tracemalloc.take_snapshot()
    work(500000)  # 1,000,000 single predictions and 150,000 in batches
    gc.collect()
    s1 = tracemalloc.take_snapshot()
    r1 = rss_kb()
    tracemalloc.stop()
    grown = sum(d.size_diff for d in s1.compare_to(s0, "filename"))
    print(f"tracemalloc {grown} bytes, RSS {r0} -> {r1} kB")
    assert grown < 64 * 1024
    assert r1 - r0 < 8 * 1024
