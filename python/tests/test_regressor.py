"""kcast.Regressor: scikit-learn's conventions, the same forest as kcast
train, and the same out-of-fold predictions as kcast cv (to 1e-12)."""
import csv
import os

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import (GridSearchCV, PredefinedSplit, cross_val_predict,
                                     cross_val_score)

import kcast
from conftest import SHARED, run_kcast

DEDISP = os.path.join(SHARED, "tuning-dedispersion", "A100.csv")


def oof(path):
    with open(path) as f:
        return np.array([float(r["predicted"]) for r in csv.DictReader(f)])


def test_estimator_conventions(synth_csv):
    df = pd.read_csv(synth_csv, float_precision="round_trip")
    X, y = df[["a", "b", "c"]], df["y"]
    r = kcast.Regressor(n_estimators=10, min_samples_leaf=2)
    p = r.get_params()
    assert p["n_estimators"] == 10 and p["min_samples_leaf"] == 2 and p["extra_trees"] is True
    c = clone(r).set_params(n_estimators=5)
    assert c.get_params()["n_estimators"] == 5 and r.n_estimators == 10
    with pytest.raises(RuntimeError, match="not fitted"):
        r.predict(X)
    r.fit(X, y)
    assert r.n_features_in_ == 3 and list(r.feature_names_in_) == ["a", "b", "c"]
    assert r.score(X, y) > 0.9
    pr, lo, hi = r.predict_interval(X)
    assert np.all(lo <= pr) and np.all(pr <= hi)
    assert abs(r.feature_importances_.sum() - 1) < 1e-9
    s = cross_val_score(kcast.Regressor(n_estimators=10), X, y, cv=3)
    assert len(s) == 3 and np.all(s > 0.5)
    g = GridSearchCV(kcast.Regressor(n_estimators=5), {"min_samples_leaf": [1, 4]}, cv=3).fit(X, y)
    assert g.best_params_["min_samples_leaf"] in (1, 4)
    # arrays too (the feature names are x0, x1, ...)
    ra = kcast.Regressor(n_estimators=5).fit(X.to_numpy(), y.to_numpy())
    assert ra.predict(X.to_numpy()).shape == (len(X),)
    with pytest.raises(ValueError):
        ra.predict(np.ones((2, 5)))
    with pytest.raises(ValueError):
        kcast.Regressor(log_target="sometimes").fit(X, y)
    with pytest.raises(kcast.KcastError) as e:
        kcast.Regressor().fit(X.assign(a=np.nan), y)
    assert e.value.status == "KCAST_E_FEATURE"


def test_same_forest_as_kcast_train(synth_csv, tmp_path):
    df = pd.read_csv(synth_csv, float_precision="round_trip")
    X, y = df[["a", "b", "c"]], df["y"]
    r = kcast.Regressor(n_estimators=15, target="y").fit(X, y)
    saved = tmp_path / "py.kcm"
    r.save(saved)
    cli = tmp_path / "cli.kcm"
    run_kcast("train", "--csv", synth_csv, "--target", "y", "--trees", 15, "-o", cli)
    a = run_kcast("predict", "--model", saved, "--features", synth_csv, "--format", "csv").stdout
    b = run_kcast("predict", "--model", cli, "--features", synth_csv, "--format", "csv").stdout
    assert a == b  # the CLI loads the Python model and predicts as from its own
    np.testing.assert_array_equal(kcast.Model(saved).predict(X)["prediction"], r.predict(X))


def cv_check(csv_path, target, ignore, tmp_path, trees):
    out = tmp_path / "oof.csv"
    args = ["cv", "--csv", csv_path, "--target", target, "--trees", trees, "--predictions", out]
    if ignore:
        args += ["--ignore", ",".join(ignore)]
    run_kcast(*args)
    df = pd.read_csv(csv_path, float_precision="round_trip")
    y = df[target].to_numpy()
    X = df.drop(columns=[target, *ignore])
    folds = kcast.cv_folds(len(df), 5, 1)
    got = cross_val_predict(kcast.Regressor(n_estimators=trees), X, y, cv=PredefinedSplit(folds))
    want = oof(out)
    return np.max(np.abs(got - want) / np.abs(want))


def test_same_folds_as_kcast_cv(synth_csv, tmp_path):
    assert cv_check(synth_csv, "y", [], tmp_path, 20) <= 1e-12


def test_same_folds_as_kcast_cv_on_the_dedispersion_space(tmp_path):
    if not os.path.exists(DEDISP):
        pytest.skip(f"{DEDISP} not there")
    err = cv_check(DEDISP, "time_ms_median", ["time_ms_mean", "repeats"], tmp_path, 30)
    print(f"dedispersion A100, 5 folds: largest relative difference {err:.3g}")
    assert err <= 1e-12


def test_cv_folds_checks_its_arguments():
    f = kcast.cv_folds(10, 3, 1)
    assert f.dtype == np.uint32 and sorted(set(f)) == [0, 1, 2]
    with pytest.raises(kcast.KcastError):
        kcast.cv_folds(2, 3, 1)
