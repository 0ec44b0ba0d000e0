"""Kernel Tuner from kcast's predictions.

Kernel Tuner measures every configuration it tries on the GPU.  kcast
predicts them all without one: each configuration of a tuning space is
compiled as Kernel Tuner compiles it (its parameters prepended as
``#define`` lines), emulated on the CPU, and its time predicted on the GPU
you name -- by a trained model or the analytic estimate.  The result ranks
the space (which configurations to measure first) and is written as a
Kernel Tuner cachefile, which ``kernel_tuner.tune_kernel(...,
cache=FILE, simulation_mode=True)`` loads, so any of Kernel Tuner's
strategies runs on the predicted space, unmodified.

The arguments follow ``kernel_tuner.tune_kernel``::

    space = kcast.kerneltuner.predict_space(
        "vector_add", "vector_add.cu", 10_000_000,
        [c, a, b, np.int32(n)], {"block_size_x": [128, 256, 512]}, gpu="A100")
    space.best(3)                       # the three to measure first
    space.write_cachefile("vector_add_A100_predicted.json")

The same as ``kcast tune-space`` (docs/cli.md).
"""
from __future__ import annotations

import itertools
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

from . import FILLS, Model, _kcast, buffer

__all__ = ["predict_space", "measure_first", "Space"]


def _text(v: Any) -> str:
    """A parameter value as Kernel Tuner writes it in its #define line and
    its cache key (str())."""
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        v = v.item()
    return str(v)


def _arg_spec(a: Any) -> str:
    """A kernel argument as kcast emulate's --arg text."""
    if isinstance(a, buffer):
        seed = f":{a.seed}" if a.fill in ("rand", "randf") else ""
        return f"buf:{a.nbytes}:{a.fill}{seed}"
    if isinstance(a, np.ndarray):
        # its size; its contents are made by the emulator (random values)
        return f"buf:{int(a.nbytes)}:{'randf' if a.dtype.kind == 'f' else 'rand'}"
    if isinstance(a, (bool, np.bool_)):
        return str(int(a))
    if isinstance(a, (int, np.integer)):
        return str(int(a))
    if isinstance(a, (float, np.floating)):
        return repr(float(a))
    raise TypeError(f"cannot pass {type(a).__name__} as a kernel argument")


def _div(d) -> str:
    """Kernel Tuner's grid_div_* (None, a name, an int, or a list of them)."""
    if d is None:
        return ""
    items = d if isinstance(d, (list, tuple)) else [d]
    out = []
    for x in items:
        if isinstance(x, (int, np.integer)):
            out.append(str(int(x)))
        elif isinstance(x, str) and x.isidentifier():
            out.append(x)
        else:
            raise ValueError(f"grid divisor {x!r}: kcast takes parameter names and integers")
    return ",".join(out)


def _space(tune_params: Mapping[str, Sequence], restrictions) -> list:
    """The configurations of tune_params (Kernel Tuner's order: the last
    parameter varies fastest) that pass the restrictions."""
    names = list(tune_params)
    checks: list = []
    if restrictions is None:
        pass
    elif callable(restrictions):
        checks = [restrictions]
    else:
        checks = list(restrictions)
    out = []
    for vals in itertools.product(*(tune_params[n] for n in names)):
        p = dict(zip(names, vals))
        ok = True
        for r in checks:
            if isinstance(r, str):
                ok = bool(eval(r, {"__builtins__": {}}, dict(p)))  # Kernel Tuner's string rules
            else:
                ok = bool(r(p))
            if not ok:
                break
        if ok:
            out.append(vals)
    return out


class Space:
    """A predicted tuning space: one row per configuration with its
    parameters, predicted time (ns) and interval, or the reason it failed."""

    def __init__(self, native, names, configs, times, lower, upper, gpu, kernel_name):
        self._ts = native
        self.param_names = list(names)
        self.configs = configs
        self.time_ns = times
        self.lower_ns = lower
        self.upper_ns = upper
        self.gpu = gpu
        self.kernel_name = kernel_name
        self.keys = []
        self.errors = []
        for i in range(len(native)):
            key, _, err, _, _ = native.entry(i)
            self.keys.append(key)
            self.errors.append(err)
        order = np.argsort(np.where(np.isnan(times), np.inf, times), kind="stable")
        self.rank = np.empty(len(times), dtype=np.int64)
        self.rank[order] = np.arange(1, len(times) + 1)
        self.rank[np.isnan(times)] = 0

    def __len__(self) -> int:
        return len(self.keys)

    def features(self, i: int):
        """The features of configuration i (None when it failed)."""
        return self._ts.entry(int(i))[1]

    def best(self, k: int = 1) -> list:
        """The k configurations predicted fastest, as parameter dicts."""
        order = [i for i in np.argsort(self.rank) if self.rank[i] > 0][: int(k)]
        return [dict(zip(self.param_names, self.configs[i])) for i in order]

    def frame(self):
        """A DataFrame ranked fastest first: rank, key, the parameters,
        time_ns, lower_ns, upper_ns, error."""
        import pandas as pd
        cols = {"rank": self.rank, "key": self.keys}
        for j, n in enumerate(self.param_names):
            cols[n] = [c[j] for c in self.configs]
        cols.update({"time_ns": self.time_ns, "lower_ns": self.lower_ns,
                     "upper_ns": self.upper_ns, "error": self.errors})
        df = pd.DataFrame(cols)
        df["_r"] = np.where(df["rank"] > 0, df["rank"], len(df) + 1)
        return df.sort_values(["_r", "key"]).drop(columns="_r").reset_index(drop=True)

    def write_cachefile(self, path: Union[str, os.PathLike], device_name: Optional[str] = None):
        """Write the space as a Kernel Tuner cachefile (times in ms; a
        configuration that failed holds RuntimeFailedConfig).  device_name
        defaults to the GPU table's name of the GPU."""
        if device_name is None:
            device_name = self.gpu
            for row in _kcast.gpus():
                if row["name"].lower() == str(self.gpu).lower():
                    device_name = row["full_name"]
        self._ts.write(os.fspath(path), device_name, np.ascontiguousarray(self.time_ns))


def predict_space(kernel_name: str, kernel_source: Union[str, os.PathLike], problem_size,
                  arguments: Sequence[Any], tune_params: Mapping[str, Sequence], *,
                  gpu: Optional[str] = None, model: Union[Model, str, os.PathLike, None] = None,
                  grid_div_x=None, grid_div_y=None, grid_div_z=None,
                  block_size_names: Optional[Sequence[str]] = None,
                  restrictions: Union[Callable, Sequence, None] = None,
                  cmem_args: Optional[Mapping[str, Any]] = None,
                  compiler_options: Optional[Sequence[str]] = None, arch: Optional[str] = None,
                  smem_bytes: int = 0, sample: int = 0, jobs: int = 0) -> Space:
    """Predict every configuration of a Kernel Tuner tuning space on ``gpu``.

    The first five arguments and the grid divisors, block size names,
    restrictions (a callable or a list of Kernel Tuner's strings and
    callables) and ``cmem_args`` (constant memory: each filled with random
    values) mean what they mean to ``kernel_tuner.tune_kernel``;
    ``kernel_source`` is a ``.cu`` file.  Arrays among ``arguments`` stand
    for buffers of their size (the emulator fills them with random values:
    kernels whose work depends on their data need :class:`kcast.buffer`
    with the right fill).  ``model`` (a time model or its path) predicts,
    else the analytic estimate; ``gpu`` names the GPU (default: the
    model's).  ``sample`` CTAs are emulated per configuration (0: as many
    as a 0.5 % relative standard error of the counts needs, as kcast
    tune-space), on ``jobs`` worker threads (0: one per CPU).
    """
    if model is not None and not isinstance(model, Model):
        model = Model(model)
    if model is not None and model.target != "time":
        raise ValueError(f"the model predicts {model.target!r}, not time")
    if gpu is None:
        if model is None:
            raise ValueError("predict_space needs gpu= (the analytic estimate) or model=")
        gpu = model.gpus[0] if len(model.gpus) == 1 else None
        if gpu is None:
            raise ValueError(f"the model was trained on {model.gpus}: name the GPU (gpu=)")
    names = list(tune_params)
    if not names:
        raise ValueError("tune_params is empty")
    configs = _space(tune_params, restrictions)
    if not configs:
        raise ValueError("no configuration passes the restrictions")
    scalar = isinstance(problem_size, (int, np.integer))
    ps = [int(problem_size)] if scalar else [int(x) for x in problem_size]
    if not 1 <= len(ps) <= 3:
        raise ValueError("problem_size has 1 to 3 dimensions")
    ps += [0] * (3 - len(ps))
    values = [_text(v) for c in configs for v in c]
    consts = [f"{k}=randf" for k in (cmem_args or {})]
    bn = ",".join(block_size_names) if block_size_names else None
    ts = _kcast.TuneSpace(os.fspath(kernel_source), kernel_name, tuple(ps), scalar,
                          [_div(grid_div_x), _div(grid_div_y), _div(grid_div_z)], bn, names,
                          values, [_arg_spec(a) for a in arguments], consts,
                          list(compiler_options or []), arch, int(smem_bytes), int(sample),
                          int(jobs))
    n = len(ts)
    t = np.full(n, np.nan)
    lo = np.full(n, np.nan)
    hi = np.full(n, np.nan)
    for i in range(n):
        fs = ts.entry(i)[1]
        if fs is None:
            continue
        if model is not None:
            t[i], lo[i], hi[i] = model._m.predict_features(fs, gpu, 0.9)
        else:
            t[i], lo[i], hi[i] = _kcast.analytic(fs, gpu)[:3]
    return Space(ts, names, configs, t, lo, hi, gpu, kernel_name)


def measure_first(*args, k: int = 5, **kwargs) -> list:
    """The k configurations to measure first (predicted fastest), as
    parameter dicts: predict_space(*args, **kwargs).best(k)."""
    return predict_space(*args, **kwargs).best(k)
