"""sklearn_bench.py -- scikit-learn's side of the forest benchmark.

Reads the datasets and CV folds rf_bench wrote (NAME.bin, NAME.folds; see
bench/rf_bench.c for the layout) and prints the same tab-separated result
lines as rf_bench, for RandomForestRegressor and ExtraTreesRegressor with
kcast's settings: 100 trees, max_features 1/3 (RF) or 1.0 (ET), 5 samples
per leaf, bootstrap for RF only, n_jobs=2, log target (fit ln y, predict
exp).  Single-row latency is the median of LAT_CALLS predict calls on one
row with n_jobs=1 (scikit-learn's fastest single-row setting).

Usage: sklearn_bench.py OUTDIR NAME [--quick]
       sklearn_bench.py OUTDIR --scale [--quick]
"""
import sys
import time

try:
    import numpy as np
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
except ImportError as e:  # the driver prints the skip line
    print("SKIP\tsklearn\t%s" % e)
    sys.exit(0)

LAT_CALLS = 200


def load(d, name):
    with open("%s/%s.bin" % (d, name), "rb") as f:
        n, p = np.fromfile(f, dtype="<i8", count=2)
        x = np.fromfile(f, dtype="<f8", count=n * p).reshape(n, p)
        y = np.fromfile(f, dtype="<f8", count=n)
    folds = np.fromfile("%s/%s.folds" % (d, name), dtype="<i4")
    return x, y, folds


def model(kind, trees=100):
    common = dict(n_estimators=trees, min_samples_leaf=5, n_jobs=2, random_state=1)
    if kind == "RF":
        return RandomForestRegressor(max_features=1.0 / 3.0, bootstrap=True, **common)
    return ExtraTreesRegressor(max_features=1.0, bootstrap=False, **common)


def run(d, name):
    x, y, _ = load(d, name)
    if name == "synth":
        cx, cy, cf = load(d, "synth_cv")
    else:
        cx, cy, cf = load(d, name)
    for kind in ("RF", "ET"):
        m = model(kind)
        t0 = time.perf_counter()
        m.fit(x, np.log(y))
        train = time.perf_counter() - t0
        t0 = time.perf_counter()
        m.predict(x)
        rps = len(y) / (time.perf_counter() - t0)
        m.n_jobs = 1
        row = x[:1]
        lat = []
        for _ in range(LAT_CALLS):
            t0 = time.perf_counter()
            m.predict(row)
            lat.append(time.perf_counter() - t0)
        pred = np.empty_like(cy)
        for k in range(5):
            te = cf == k
            mk = model(kind)
            mk.fit(cx[~te], np.log(cy[~te]))
            pred[te] = np.exp(mk.predict(cx[te]))
        ape = 100 * np.abs(pred - cy) / np.abs(cy)
        print("R\t%s\tsklearn\t%s\t%.3f\t%.2f\t%.2f\t%.2f\t%.0f" % (
            name, kind, train, np.median(ape), ape.mean(), 1e6 * np.median(lat), rps), flush=True)


def scale(d, quick):
    x, y, _ = load(d, "synth_scale")
    # rf_bench.c's SCALE_POINTS that the peers share (quick halves the rows)
    points = [(5000, 100), (10000, 100), (10000, 25)]
    if quick:
        points = [(r // 2, t) for r, t in points]
    for kind in ("RF", "ET"):
        for rows, trees in points:
            m = model(kind, trees)
            t0 = time.perf_counter()
            m.fit(x[:rows], np.log(y[:rows]))
            print("S\tsklearn\t%s\t%d\t%d\t%.3f" % (kind, rows, trees, time.perf_counter() - t0),
                  flush=True)


if __name__ == "__main__":
    if sys.argv[2] == "--scale":
        scale(sys.argv[1], "--quick" in sys.argv)
    else:
        run(sys.argv[1], sys.argv[2])
