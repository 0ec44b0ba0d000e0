"""kcast.kerneltuner: a Kernel Tuner space predicted by kcast equals kcast
tune-space's, and Kernel Tuner itself -- installed from PyPI into a virtual
environment, unmodified -- runs its strategies on it in simulation mode."""
import csv
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections import OrderedDict

import numpy as np
import pytest

import kcast
import kcast.kerneltuner as kt
from conftest import BUILD, ROOT, have_nvcc, run_kcast

SRC = os.path.join(ROOT, "tests", "tuning", "scale_add.cu")
PARAMS = OrderedDict([("block_size_x", [32, 64, 128, 256]), ("tile_size_x", [1, 2, 4]),
                      ("use_bias", [0, 1])])
# Kernel Tuner 1.x; the version is pinned for a repeatable test
KT_SPEC = os.environ.get("KCAST_KERNEL_TUNER", "kernel_tuner==1.0.0")

pytestmark = pytest.mark.skipif(not have_nvcc(), reason="nvcc not on PATH (the space is compiled)")


def args():
    n = 100000
    return [np.zeros(n, np.float32), np.zeros(n, np.float32), np.int32(n)]


@pytest.fixture(scope="module")
def space():
    return kt.predict_space("scale_add", SRC, 100000, args(), PARAMS, gpu="A100",
                            grid_div_x=["block_size_x", "tile_size_x"],
                            cmem_args={"scale": np.ones(4, np.float32)}, jobs=2)


def test_space_equals_kcast_tune_space(space, tmp_path):
    assert len(space) == 24 and all(e is None for e in space.errors)
    ranked = tmp_path / "ranked.csv"
    run_kcast("tune-space", "--source", SRC, "--kernel", "scale_add",
              "--param", "block_size_x=32,64,128,256", "--param", "tile_size_x=1,2,4",
              "--param", "use_bias=0,1", "--problem-size", 100000,
              "--grid-div-x", "block_size_x,tile_size_x", "--arg", "buf:400000:randf",
              "--arg", "buf:400000:randf", "--arg", 100000, "--const", "scale=randf",
              "--gpu", "A100", "--csv", ranked, "-j", 2)
    with open(ranked) as f:
        rows = {r["key"]: r for r in csv.DictReader(f)}
    for key, t in zip(space.keys, space.time_ns):
        assert float(rows[key]["time_ns"]) == pytest.approx(t, rel=1e-8), key
    df = space.frame()
    assert list(df["rank"][:3]) == [1, 2, 3] and df["time_ns"].is_monotonic_increasing
    best = space.best(3)
    assert len(best) == 3 and set(best[0]) == set(PARAMS)
    assert kt.measure_first("scale_add", SRC, 100000, args(), PARAMS, gpu="A100",
                            grid_div_x=["block_size_x", "tile_size_x"],
                            cmem_args={"scale": None}, k=2, jobs=2) == best[:2]


def test_cachefile_format(space, tmp_path):
    p = tmp_path / "scale_add.json"
    space.write_cachefile(p)
    c = json.loads(p.read_text())
    assert c["kernel_name"] == "scale_add" and c["problem_size"] == 100000
    assert c["tune_params_keys"] == list(PARAMS) and c["tune_params"]["tile_size_x"] == [1, 2, 4]
    e = c["cache"]["64,2,1"]
    assert e["block_size_x"] == 64 and e["time"] == pytest.approx(
        space.time_ns[space.keys.index("64,2,1")] / 1e6)
    assert c["device_name"].startswith("NVIDIA A100")


def test_restrictions_and_bad_input():
    with pytest.raises(ValueError, match="gpu"):
        kt.predict_space("scale_add", SRC, 100000, args(), PARAMS)
    with pytest.raises(ValueError, match="restrictions"):
        kt.predict_space("scale_add", SRC, 100000, args(), PARAMS, gpu="A100",
                         restrictions=["block_size_x > 1000"])
    with pytest.raises(kcast.KcastError) as e:
        kt.predict_space("scale_add", SRC, 100000, args(), {"bad name": [1]}, gpu="A100")
    assert "C identifier" in str(e.value)
    s = kt.predict_space("scale_add", SRC, 100000, args(), PARAMS, gpu="A100",
                         grid_div_x=["block_size_x", "tile_size_x"], cmem_args={"scale": None},
                         restrictions=["block_size_x * tile_size_x <= 256"], jobs=2)
    assert len(s) == 24 - 3 * 2  # (128,4), (256,2), (256,4), each with use_bias 0 and 1


def venv_with_kernel_tuner():
    """A virtual environment with Kernel Tuner from PyPI (made once in the
    build folder); None with the reason when PyPI cannot be reached."""
    venv = os.path.join(BUILD, "kernel-tuner-venv")
    py = os.path.join(venv, "bin", "python")
    if os.path.exists(py) and subprocess.run(
            [py, "-c", "import kernel_tuner"], capture_output=True).returncode == 0:
        return py, None
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
    probe = subprocess.run([py, "-m", "pip", "download", "-q", "--no-deps", "-d",
                            os.path.join(venv, "probe"), KT_SPEC], capture_output=True,
                           text=True, timeout=120)
    if probe.returncode:
        shutil.rmtree(venv, ignore_errors=True)
        return None, f"PyPI not reachable ({probe.stderr.strip().splitlines()[-1:]})"
    r = subprocess.run([py, "-m", "pip", "install", "-q", KT_SPEC], capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, f"pip install {KT_SPEC}: {r.stderr[-2000:]}"
    return py, None


def test_kernel_tuner_runs_its_strategies_on_the_predicted_space(space, tmp_path):
    py, why = venv_with_kernel_tuner()
    if py is None:
        pytest.skip(why)
    cache = tmp_path / "scale_add_A100.json"
    space.write_cachefile(cache)
    script = tmp_path / "simulate.py"
    script.write_text(textwrap.dedent(f"""
        import json, shutil, sys
        from collections import OrderedDict
        import numpy as np
        import kernel_tuner
        tp = OrderedDict({list(PARAMS.items())!r})
        n = 100000
        args = [np.zeros(n, np.float32), np.zeros(n, np.float32), np.int32(n)]
        out = {{"version": getattr(kernel_tuner, "__version__", "?")}}
        for strategy, opts in [("brute_force", None), ("random_sample", {{"max_fevals": 10}}),
                               ("greedy_ils", {{"max_fevals": 12}})]:
            copy = {str(cache)[:-5]!r} + "-" + strategy + ".json"  # Kernel Tuner adds .json
            shutil.copy({str(cache)!r}, copy)
            res, env = kernel_tuner.tune_kernel(
                "scale_add", {SRC!r}, n, args, tp,
                grid_div_x=["block_size_x", "tile_size_x"],
                cache=copy, simulation_mode=True,
                strategy=strategy, strategy_options=opts, quiet=True)
            best = min(res, key=lambda r: r["time"])
            out[strategy] = {{"n": len(res), "best": {{k: best[k] for k in tp}},
                             "time": best["time"]}}
        print(json.dumps(out))
    """))
    r = subprocess.run([py, str(script)], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"Kernel Tuner {out['version']}: {out}")
    top = space.best(1)[0]
    assert out["brute_force"]["n"] == 24
    assert out["brute_force"]["best"] == top  # the configuration kcast ranks first
    assert out["brute_force"]["time"] == pytest.approx(min(space.time_ns) / 1e6)
    for s in ("random_sample", "greedy_ils"):
        b = out[s]["best"]
        i = space.keys.index(",".join(str(b[k]) for k in PARAMS))
        assert out[s]["time"] == pytest.approx(space.time_ns[i] / 1e6)  # its pick's predicted time
