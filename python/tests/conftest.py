"""Fixtures of the kcast package's tests: the repository, the kcast binary
of the build under test (KCAST_BIN, as the CUnit suites use it) and small
models trained for the tests."""
import os
import shutil
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KCAST_BUILD", os.path.join(ROOT, "build"))
KCAST = os.environ.get("KCAST_BIN", os.path.join(BUILD, "kcast"))
SHARED = os.path.join(ROOT, "..", "shared", "data")


def run_kcast(*args, check=True, **kw):
    """Run the kcast binary; its CompletedProcess (text)."""
    r = subprocess.run([KCAST, *map(str, args)], capture_output=True, text=True, **kw)
    if check and r.returncode:
        raise AssertionError(f"kcast {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr}")
    return r


def have_nvcc():
    return shutil.which("nvcc") is not None


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def synth_csv(tmp_path_factory):
    """A CSV of 300 rows: features a, b, c and a positive target y."""
    rng = np.random.default_rng(7)
    a = rng.uniform(1, 100, 300)
    b = rng.integers(1, 9, 300).astype(float)
    c = rng.normal(0, 1, 300)
    y = 3 * a + 10 * b + np.exp(c) + 1
    p = tmp_path_factory.mktemp("synth") / "synth.csv"
    with open(p, "w") as f:
        f.write("a,b,c,y\n")
        for row in zip(a, b, c, y):
            f.write(",".join(repr(float(v)) for v in row) + "\n")
    return str(p)


@pytest.fixture(scope="session")
def synth_model(synth_csv, tmp_path_factory):
    """A model of synth.csv trained by `kcast train` (20 trees)."""
    out = tmp_path_factory.mktemp("model") / "synth.kcm"
    run_kcast("train", "--csv", synth_csv, "--target", "y", "--trees", 20, "-o", out)
    return str(out)
