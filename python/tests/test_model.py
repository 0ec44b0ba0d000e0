"""kcast.Model: loading, predicting a dict, a Features, an array and a
DataFrame alike and as the CLI does, and failing with KcastError."""
import csv
import math
import os

import numpy as np
import pandas as pd
import pytest

import kcast
from conftest import run_kcast


def cli_predictions(model, csv_path):
    r = run_kcast("predict", "--model", model, "--features", csv_path, "--format", "csv")
    rows = list(csv.DictReader(r.stdout.splitlines()))
    return np.array([float(x["prediction"]) for x in rows]), rows


def test_version_and_facts(synth_model):
    assert kcast.__version__ == kcast._kcast.version()
    m = kcast.Model(synth_model)
    assert m.feature_names == ["a", "b", "c"]
    assert m.target == "y"
    info = m.info()
    assert info["n_trees"] == 20 and info["n_rows"] == 300 and info["n_features"] == 3
    imp = m.importances()
    assert set(imp) == {"a", "b", "c"} and abs(sum(imp.values()) - 1) < 1e-9
    assert "kcast.Model" in repr(m)


def test_every_input_form_agrees_with_the_cli(synth_model, synth_csv):
    m = kcast.Model(synth_model)
    df = pd.read_csv(synth_csv, float_precision="round_trip").drop(columns="y")
    want, _ = cli_predictions(synth_model, synth_csv)
    out = m.predict(df)
    assert list(out.columns) == ["prediction", "lower", "upper"]
    assert out.index.equals(df.index)
    np.testing.assert_allclose(out["prediction"].to_numpy(), want, rtol=1e-8)  # 9 digits printed
    p, lo, hi = m.predict(df.to_numpy(), feature_names=list(df.columns))
    np.testing.assert_array_equal(p, out["prediction"].to_numpy())
    assert np.all(lo <= p) and np.all(p <= hi)
    # columns in another order, and one the model does not read
    df2 = df[["c", "a", "b"]].assign(extra=1.0)
    np.testing.assert_array_equal(m.predict(df2)["prediction"].to_numpy(), p)
    row = df.iloc[5].to_dict()
    one = m.predict(row)
    assert isinstance(one, kcast.Prediction) and one.value == p[5]
    assert m.predict(kcast.Features(row)).value == p[5]
    assert m.predict(row, coverage=0.5).upper <= one.upper


def test_a_dataset_frame_predicts_as_the_cli(root, tmp_path):
    """docs/python.md's m.predict(kcast.read_dataset(db)) raised pandas'
    "could not convert string to float: 'atax'" (the app, kernel ... text
    columns) and, past that, "feature op.* is NaN" (a count the launch
    lacks), where `kcast predict --features` on the export of the same
    dataset answers: text columns the model does not read are no
    features, a missing count is 0."""
    db = os.path.join(root, "datasets", "data", "suite-features.db")
    exp = tmp_path / "export.csv"
    run_kcast("dataset", "export", db, "-o", exp)
    table = pd.read_csv(exp)
    table["y"] = 2.0 * table["launch.threads"] + table["launch.ctas"] + 1.0
    train = tmp_path / "train.csv"
    table.to_csv(train, index=False)
    model = tmp_path / "m.kcm"
    # (the export's launch columns grid_x .. shmem repeat launch.*, and a
    # read_dataset frame has only the latter)
    run_kcast("train", "--csv", train, "--target", "y", "--trees", 5, "--no-calibrate",
              "--ignore", "grid_*,block_*,shmem", "-o", model)
    m = kcast.Model(model)
    frame = kcast.read_dataset(db)
    assert frame["app"].dtype == object and frame.isna().to_numpy().any()
    got = m.predict(frame)["prediction"].to_numpy()
    want, _ = cli_predictions(str(model), str(exp))
    np.testing.assert_allclose(got, want, rtol=1e-8)
    # a column the model reads that holds text is an error naming it
    bad = frame.assign(**{"launch.ctas": frame["launch.ctas"].astype(str)})
    with pytest.raises(ValueError, match="launch.ctas"):
        m.predict(bad)


def test_batch_on_threads_equals_one_thread(synth_model, synth_csv):
    m = kcast.Model(synth_model)
    df = pd.read_csv(synth_csv).drop(columns="y")
    X = np.ascontiguousarray(np.tile(df.to_numpy(), (20, 1)))
    a = m.predict(X, feature_names=list(df.columns), threads=1)
    b = m.predict(X, feature_names=list(df.columns), threads=2)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_bad_input_raises_with_kcasts_message(synth_model, tmp_path):
    m = kcast.Model(synth_model)
    with pytest.raises(kcast.KcastError) as e:
        m.predict({"a": 1.0, "c": 2.0})  # b is not a count: it cannot be 0
    assert "b" in str(e.value) and e.value.status == "KCAST_E_FEATURE"
    with pytest.raises(kcast.KcastError) as e:
        m.predict(np.array([[1.0, math.nan, 3.0]]), feature_names=["a", "b", "c"])
    assert "NaN" in str(e.value) and "row 0" in str(e.value)
    with pytest.raises(ValueError):
        m.predict(np.ones((2, 3)), feature_names=["a", "b"])
    with pytest.raises(ValueError):
        m.predict(np.ones((2, 2, 2)), feature_names=["a", "b"])
    with pytest.raises(ValueError):
        m.predict(np.ones((2, 3)))  # no names
    with pytest.raises(ValueError):
        m.predict({"a": 1}, coverage=1.5)
    with pytest.raises(TypeError):
        m.predict({"a": "x", "b": 1, "c": 1})
    bad = tmp_path / "truncated.kcm"
    with open(synth_model, "rb") as f:
        bad.write_bytes(f.read()[:100])
    with pytest.raises(kcast.KcastError) as e:
        kcast.Model(bad)
    assert "truncated.kcm" in str(e.value) and e.value.status == "KCAST_E_FORMAT"
    with pytest.raises(kcast.KcastError) as e:
        kcast.Model(tmp_path / "missing.kcm")
    assert e.value.status == "KCAST_E_IO"


def test_check_flags_extrapolation(synth_model):
    m = kcast.Model(synth_model)
    inside = m.check({"a": 50.0, "b": 3.0, "c": 0.1})
    assert inside == {"out_of_range": False, "unseen_gpu": False, "other_estimate": False,
                      "feature": None}
    outside = m.check({"a": 5000.0, "b": 3.0, "c": 0.1})
    assert outside["out_of_range"] and outside["feature"] == "a"
    df = pd.DataFrame({"a": [50.0, 5000.0], "b": [3.0, 3.0], "c": [0.1, 0.1]})
    flags = m.check(df)
    assert list(flags["out_of_range"]) == [False, True]
