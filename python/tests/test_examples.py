"""The example scripts of docs/python.md run and say what they found."""
import os
import subprocess
import sys

import pytest

from conftest import KCAST, ROOT, SHARED

EX = os.path.join(ROOT, "examples", "python")


def run(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=900)


def test_scheduler_example():
    r = run(os.path.join(EX, "scheduler.py"), os.path.join(ROOT, "datasets", "data",
                                                           "suite-features.db"))
    assert r.returncode == 0, r.stderr
    assert "makespan round-robin" in r.stdout and "earliest finish" in r.stdout


def test_mangrove_flow_example(tmp_path):
    src = os.path.join(SHARED, "mangrove-tutorial")
    if not os.path.exists(os.path.join(src, "cuda_flux_metrics.db")):
        pytest.skip(f"{src} not there")
    r = run(os.path.join(EX, "mangrove_flow.py"), src, str(tmp_path), KCAST)
    assert r.returncode == 0, r.stderr
    assert "leave one application out, median APE" in r.stdout
    assert (tmp_path / "predicted_vs_measured.png").stat().st_size > 1000
