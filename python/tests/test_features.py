"""Features from the emulator, from feature models and from datasets; the
analytic estimate and the GPU table -- each equal to what the CLI gives."""
import json
import os

import numpy as np
import pandas as pd
import pytest

import kcast
from conftest import ROOT, run_kcast

SAXPY = os.path.join(ROOT, "tests", "ptx", "saxpy_nvcc.ptx")
SUITE_DB = os.path.join(ROOT, "datasets", "data", "suite-features.db")


def saxpy_features():
    return kcast.features_from_ptx(SAXPY, grid=4096, block=256, sample=64,
                                   args=[1 << 20, np.float32(2.0), kcast.buffer(4 << 20, "randf"),
                                         kcast.buffer(4 << 20)])


def test_features_from_ptx_equal_kcast_emulate():
    fs = saxpy_features()
    r = run_kcast("emulate", SAXPY, "--grid", 4096, "--block", 256, "--arg", 1 << 20, "--arg",
                  "2.0", "--arg", "buf:4M:randf", "--arg", "buf:4M", "--sample", 64, "--format",
                  "json")
    want = json.loads(r.stdout)["features"]
    got = fs.to_dict()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-12), k
    assert fs["launch.ctas"] == 4096 and len(fs) >= len(want)


def test_launch_arguments_are_checked():
    with pytest.raises(TypeError, match="np.float32"):
        kcast.features_from_ptx(SAXPY, grid=1, block=32, args=[1, 2.0, kcast.buffer(4), kcast.buffer(4)])
    with pytest.raises(kcast.KcastError) as e:
        kcast.features_from_ptx(SAXPY, grid=1, block=32, args=[1])
    assert e.value.status == "KCAST_E_ARG"
    with pytest.raises(kcast.KcastError) as e:
        kcast.features_from_ptx(SAXPY, kernel="nope", grid=1, block=32, args=[])
    assert e.value.status == "KCAST_E_NOTFOUND"
    with pytest.raises(ValueError):
        kcast.buffer(0)


def test_racecheck_counts_races():
    races = os.path.join(ROOT, "tests", "kernels", "races.cu")
    # Parboil histo's pattern: 4 CTAs store 96 words 64 apart (3 x 32 words
    # overlap); 64 words 64 apart are disjoint
    fs = kcast.features_from_ptx(races, "chunk_store", grid=4, block=64, racecheck=True,
                                 args=[kcast.buffer(4 * 96 * 4), 96, 64])
    assert fs["emu.races"] == 96
    fs = kcast.features_from_ptx(races, "chunk_store", grid=4, block=64, racecheck=True,
                                 args=[kcast.buffer(4 * 96 * 4), 64, 64])
    assert "emu.races" not in fs.to_dict()


def test_features_from_op_equal_kcast_predict_op():
    desc = "bmm B=8 M=512 N=512 K=64"
    fs, assumed = kcast.features_from_op(desc)
    r = run_kcast("predict", "--op", desc, "--gpu", "T4", "--format", "json")
    op = json.loads(r.stdout)["operators"][0]
    assert assumed == op["assumed"] and "kernel sgemm_64x64_nn" in assumed
    got = fs.to_dict()
    for k, v in op["features"].items():
        assert got[k] == v, k
    # its analytic estimate is the CLI's (no model: --gpu alone answers with it)
    fs2, note = kcast.features_from_op(desc + " kernel=volta_sgemm_64x64_nn grid=1,8,8 block=64")
    assert note == "" and fs2["opr.tile_m"] == 64
    with pytest.raises(kcast.KcastError) as e:
        kcast.features_from_op("bmm B=8 M=512")
    assert e.value.status == "KCAST_E_ARG" and "needs N=" in str(e.value)
    with pytest.raises(TypeError):
        kcast.features_from_op(8)


def test_features_from_op_on_a_gpu_is_kcast_predict_ops_kernel():
    # a GEMM without its kernel: on a GPU the tile predicted fastest there,
    # the kernel kcast predict --op names for that GPU (analytic: no model)
    desc = "linear B=1 M=178 N=3860 K=1550"
    fs, assumed = kcast.features_from_op(desc, gpu="T4")
    assert "the fastest predicted on T4" in assumed
    kernel = assumed.split()[1]
    r = run_kcast("predict", "--op", desc, "--gpu", "T4", "--format", "json",
                  env={**os.environ, "KCAST_OP_MODEL": ""})
    pred = json.loads(r.stdout)["operators"][0]["predictions"][0]
    assert pred["kernel"] == kernel
    t = kcast.analytic(fs, "T4")["time_ns"]
    assert abs(t / 1000 - pred["time_us"]) <= 1e-6 * pred["time_us"]
    with pytest.raises(kcast.KcastError) as e:
        kcast.features_from_op(desc, gpu="NOPE")
    assert e.value.status == "KCAST_E_NOTFOUND"
    with pytest.raises(ValueError):
        kcast.features_from_op(desc, model=object())


def test_analytic_equals_kcast_predict():
    fs = saxpy_features()
    a = kcast.analytic(fs, "A100")
    r = run_kcast("predict", SAXPY, "--grid", 4096, "--block", 256, "--arg", 1 << 20, "--arg",
                  "2.0", "--arg", "buf:4M:randf", "--arg", "buf:4M", "--sample", 64, "--gpu",
                  "A100", "--format", "json")
    j = json.loads(r.stdout)
    text = json.dumps(j)
    assert a["time_ns"] > 0 and a["time_lo_ns"] <= a["time_ns"] <= a["time_hi_ns"]
    # the CLI prints the analytic time in us
    assert f"{a['time_ns'] / 1e3:.4g}"[:4] in text
    with pytest.raises(kcast.KcastError) as e:
        kcast.analytic(fs, "NoSuchGPU")
    assert e.value.status == "KCAST_E_NOTFOUND"
    assert kcast.analytic(fs.to_dict(), "A100") == a


def test_gpus_is_the_table():
    g = kcast.gpus()
    assert isinstance(g, pd.DataFrame) and "A100" in g.index and "H200" in g.index
    r = run_kcast("gpus", "--format", "csv")
    assert len(g) == len(r.stdout.strip().splitlines()) - 1
    assert g.loc["A100", "sms"] == 108


def test_read_dataset_is_the_export(tmp_path):
    df = kcast.read_dataset(SUITE_DB)
    out = tmp_path / "export.csv"
    run_kcast("dataset", "export", SUITE_DB, "-o", out)
    ex = pd.read_csv(out, float_precision="round_trip")
    assert len(df) == len(ex) and list(df["id"]) == list(ex["id"])
    feats = [c for c in ex.columns if "." in c and "@" not in c]
    for c in feats[:40]:
        np.testing.assert_array_equal(df[c].to_numpy(), ex[c].to_numpy(dtype=float), err_msg=c)
    assert list(df.columns[:5]) == ["id", "app", "dataset", "lseq", "kernel"]
    with pytest.raises(kcast.KcastError):
        kcast.read_dataset(tmp_path / "missing.db")


def test_features_from_launch_and_feature_models(tmp_path):
    df = kcast.read_dataset(SUITE_DB)
    row = df[df["kernel"].str.contains("triad")].iloc[0]
    fs = kcast.features_from_launch(SUITE_DB, int(row["id"]))
    assert fs["launch.ctas"] == row["launch.ctas"]
    kcf = tmp_path / "triad.kcf"
    run_kcast("featmodel", "fit", SUITE_DB, "--kernel", "triad", "-o", kcf)
    fm = kcast.FeatureModel(kcf)
    assert "triad" in fm.kernel
    n_args = max(fm.arg_params) + 1 if fm.arg_params else 0
    args = [0.0] * max(n_args, 5)
    for p in fm.arg_params:
        args[p] = row[f"arg.{p}"] if f"arg.{p}" in row else 1 << 20
    filled, flags = fm.fill((row["launch.grid_x"], 1, 1), (row["launch.block_x"], 1, 1),
                            args=args, with_flags=True)
    assert filled["launch.ctas"] == row["launch.ctas"] and isinstance(flags, int)
    with pytest.raises(kcast.KcastError):
        fm.fill((0, 1, 1), (32, 1, 1), args=args)
