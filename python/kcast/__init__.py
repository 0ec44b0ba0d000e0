"""kcast: predict the execution time and power of CUDA kernel launches.

A Python interface to libkcast (include/kcast.h): trained models and the
analytic estimate, kernel features from PTX or CUDA source (by emulating a
launch on the CPU) and from feature models, kcast datasets as DataFrames, a
scikit-learn estimator training kcast's own forest, and Kernel Tuner spaces
predicted on a GPU nobody measured (:mod:`kcast.kerneltuner`).  No GPU and
no CUDA toolkit are needed to import it; emulating a ``.cu`` file needs
nvcc.  docs/python.md walks through it.

Errors from the library raise :class:`KcastError` (``.status`` is the
``KCAST_E_*`` name) carrying the library's one-line message.
"""
from __future__ import annotations

import os
import struct
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _kcast
from ._kcast import Features, KcastError

__all__ = [
    "KcastError", "Features", "Prediction", "Model", "FeatureModel", "Regressor", "buffer",
    "features_from_ptx", "features_from_launch", "features_from_op", "analytic", "gpus",
    "read_dataset", "cv_folds",
    "__version__",
]

__version__: str = _kcast.version()

# Contents of an emulated buffer (kcast_fill, include/kcast.h).
FILLS = {"zero": 0, "seq": 1, "seqf": 2, "rand": 3, "randf": 4}


# One prediction: the point value and its interval (the target's unit: ns
# for time, W for power, J for energy); a named tuple (value, lower, upper).
Prediction = _kcast.Prediction


def _pandas():
    try:
        import pandas  # noqa: F401
    except ImportError:  # pragma: no cover - pandas is optional
        return None
    return pandas


def _check_coverage(coverage: float) -> float:
    coverage = float(coverage)
    if not 0.0 < coverage < 1.0:
        raise ValueError(f"coverage {coverage} is not in (0, 1)")
    return coverage


def _as_matrix(X, feature_names, reads=None):
    """(C-contiguous float64 2-D array, names list) of X, copying only when
    the layout or the type asks for it.  A DataFrame is read as ``kcast
    predict --features`` reads a CSV: its text columns (app, kernel, ...: a
    :func:`read_dataset` frame has them) are not features unless the model
    reads them (``reads``: its feature names; then an error naming the
    column), and a missing count (NaN in an op.*, class.*, mem.*, static.*,
    tensor.* or opr.* column) is 0."""
    pd = _pandas()
    if pd is not None and isinstance(X, pd.DataFrame):
        keep = []
        for c in X.columns:
            col = X[c]
            if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
                keep.append(c)
            elif reads is not None and str(c) in reads:
                raise ValueError(f"column {c!r} holds text, not numbers: the model reads it "
                                 f"as a feature")
        names = [str(c) for c in keep]
        arr = X[keep].to_numpy(dtype=np.float64) if len(keep) != X.shape[1] \
            else X.to_numpy(dtype=np.float64)
        counts = [j for j, n in enumerate(names) if n.startswith(COUNT_FAMILIES)]
        if counts and np.isnan(arr[:, counts]).any():
            arr = np.array(arr, dtype=np.float64, copy=True)
            sub = arr[:, counts]
            sub[np.isnan(sub)] = 0.0
            arr[:, counts] = sub
    else:
        arr = np.asarray(X, dtype=np.float64)
        if feature_names is None:
            raise ValueError("a 2-D array needs feature_names (one name per column)")
        names = [str(n) for n in feature_names]
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D, not {arr.ndim}-D")
    if arr.shape[1] != len(names):
        raise ValueError(f"X has {arr.shape[1]} columns for {len(names)} feature names")
    if len(set(names)) != len(names):
        raise ValueError("feature names must be unique")
    return np.ascontiguousarray(arr), names


class Model:
    """A trained forest: a ``.kcm`` file of ``kcast train`` or
    :meth:`Regressor.save`.

    >>> m = kcast.Model("t4-time.kcm")          # doctest: +SKIP
    >>> m.predict({"launch.ctas": 64, ...})     # doctest: +SKIP
    Prediction(value=..., lower=..., upper=...)

    One model serves any number of threads.
    """

    def __init__(self, path: Union[str, os.PathLike, None] = None, *, _native=None):
        if _native is not None:
            self._m = _native
        elif path is None:
            raise TypeError("Model(path): the .kcm file to load")
        else:
            self._m = _kcast.Model(os.fspath(path))

    @property
    def feature_names(self) -> list:
        """The features the model reads, in its order."""
        return list(self._m.feature_names)

    @property
    def gpus(self) -> list:
        """The GPUs it was trained on (the table's names)."""
        g = self._m.gpu
        return [x for x in g.split(",") if x] if g else []

    @property
    def target(self) -> str:
        """What it predicts: time (ns), power (W), energy (J) or a CSV column."""
        return self._m.target

    def info(self) -> dict:
        """The model's facts: target, GPUs, trees, training rows, features."""
        return {"target": self.target, "gpus": self.gpus, "n_trees": self._m.n_trees,
                "n_rows": self._m.n_rows, "n_features": len(self._m.feature_names),
                "features": self.feature_names}

    def importances(self) -> dict:
        """Impurity importance per feature (they sum to 1)."""
        return dict(zip(self._m.feature_names, self._m.importances))

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Write the model as a ``.kcm`` file (the CLI and the C API load it)."""
        self._m.save(os.fspath(path))

    def predict(self, X, gpu: Optional[str] = None, coverage: float = 0.9, *,
                feature_names: Optional[Sequence[str]] = None, threads: int = 0):
        """Predict launches.

        ``X`` is a dict of feature values or a :class:`Features` (one launch:
        a :class:`Prediction` back), a 2-D array with ``feature_names`` (the
        arrays ``(value, lower, upper)`` back), or a pandas DataFrame (a
        DataFrame with columns ``prediction``, ``lower``, ``upper`` and X's
        index back).  ``gpu`` is the GPU to predict for (a model of several
        GPUs needs it); the interval is at ``coverage``.  Features the model
        does not read are ignored; a count it reads that X lacks is 0 and
        derived features (``an.*``, ``occ.*``, ...) are computed from the
        row, as in the C API.  Batches run on ``threads`` OpenMP threads
        (0: the default) without the GIL.
        """
        if not 0.0 < coverage < 1.0:
            raise ValueError(f"coverage {coverage} is not in (0, 1)")
        t = type(X)
        if t is Features:  # one launch: the shortest paths
            return self._m.predict_features(X, gpu, coverage)
        if t is dict:
            return self._m.predict_dict(X, gpu, coverage)
        if isinstance(X, Mapping):
            return self._m.predict_dict(X if type(X) is dict else dict(X), gpu, coverage)
        if isinstance(X, Features):
            return self._m.predict_features(X, gpu, coverage)
        pd = _pandas()
        frame = pd is not None and isinstance(X, pd.DataFrame)
        arr, names = _as_matrix(X, feature_names, set(self._m.feature_names))
        n = arr.shape[0]
        pred = np.empty(n)
        lo = np.empty(n)
        hi = np.empty(n)
        self._m.predict_matrix(arr, names, gpu, coverage, pred, lo, hi, int(threads))
        if frame:
            return pd.DataFrame({"prediction": pred, "lower": lo, "upper": hi}, index=X.index)
        return pred, lo, hi

    def check(self, X, gpu: Optional[str] = None, *,
              feature_names: Optional[Sequence[str]] = None):
        """What predictions of X rest on (kcast_predict_check): for one launch
        (a dict or Features) a dict -- ``out_of_range`` (a feature the forest
        splits on lies outside its training values: the answer extrapolates,
        ``feature`` names the most important such one), ``unseen_gpu`` (the
        model was not trained on the GPU), ``other_estimate`` (its base is
        another version of the analytic estimate than this kcast's: trained
        by an older kcast, train it again); for a DataFrame or an array one
        row of those per launch (a DataFrame with pandas)."""
        def one(fs):
            flags, feat = self._m.check_features(fs, gpu)
            return {"out_of_range": bool(flags & 1), "unseen_gpu": bool(flags & 2),
                    "other_estimate": bool(flags & 4),
                    "feature": feat}
        if isinstance(X, Features):
            return one(X)
        if isinstance(X, Mapping):
            return one(Features(dict(X)))
        arr, names = _as_matrix(X, feature_names, set(self._m.feature_names))
        rows = [one(Features(dict(zip(names, r)))) for r in arr]
        pd = _pandas()
        if pd is None:
            return rows
        index = X.index if isinstance(X, pd.DataFrame) else None
        return pd.DataFrame(rows, index=index)

    def __repr__(self) -> str:
        return (f"kcast.Model(target={self.target!r}, gpus={self.gpus!r}, "
                f"features={len(self._m.feature_names)}, trees={self._m.n_trees})")


class FeatureModel:
    """A kernel's feature model (``.kcf`` of ``kcast featmodel fit``): the
    features of a launch without emulating it, in microseconds."""

    EXTRAPOLATED = 1
    UNRELIABLE = 2

    def __init__(self, path: Union[str, os.PathLike]):
        self._fm = _kcast.FeatureModel(os.fspath(path))

    @property
    def kernel(self) -> str:
        """The kernel it models, or a template's signature (T0, T1, ...)."""
        return self._fm.kernel

    @property
    def arg_params(self) -> list:
        """Indexes of the kernel parameters whose values it reads."""
        return self._fm.arg_params

    @property
    def heldout_error(self) -> float:
        """Median held-out relative error of its class.* and mem.* features."""
        return self._fm.heldout_error

    def fill(self, grid, block, shared: int = 0, args: Sequence[float] = (),
             instance: Optional[str] = None, *, with_flags: bool = False):
        """Features of one launch: grid and block as ints or 1-3 tuples,
        ``args[i]`` kernel parameter i's value as a number (pointers
        ignored), ``instance`` a template instance ("k<16>").  With
        ``with_flags`` also the flags (EXTRAPOLATED, UNRELIABLE)."""
        fs, flags = self._fm.fill(_dim3(grid), _dim3(block), int(shared),
                                  [float(a) for a in args], instance)
        return (fs, flags) if with_flags else fs


def _dim3(d) -> tuple:
    if isinstance(d, (int, np.integer)):
        return (int(d), 1, 1)
    t = tuple(int(x) for x in d)
    if not 1 <= len(t) <= 3:
        raise ValueError(f"a grid or block has 1 to 3 dimensions, not {len(t)}")
    return t + (1,) * (3 - len(t))


class buffer:
    """A device buffer argument of :func:`features_from_ptx`: ``nbytes``
    bytes filled with ``fill`` (zero, seq, seqf, rand, randf; the rand
    fills from ``seed``), made page by page as the launch reaches it."""

    def __init__(self, nbytes: int, fill: str = "zero", seed: int = 1):
        if int(nbytes) <= 0:
            raise ValueError("a buffer has more than 0 bytes")
        if fill not in FILLS:
            raise ValueError(f"fill {fill!r} is not one of {sorted(FILLS)}")
        self.nbytes, self.fill, self.seed = int(nbytes), fill, int(seed)

    def __repr__(self) -> str:
        return f"kcast.buffer({self.nbytes}, {self.fill!r}, seed={self.seed})"


def _arg(a) -> tuple:
    """A launch argument as the extension takes it."""
    if isinstance(a, buffer):
        return ("buffer", a.nbytes, FILLS[a.fill], a.seed)
    if isinstance(a, np.ndarray):
        # an array stands for a buffer of its size; its contents are not
        # copied (the emulator fills buffers by pattern): random values
        return ("buffer", int(a.nbytes), FILLS["randf" if a.dtype.kind == "f" else "rand"], 1)
    if isinstance(a, (bool, np.bool_)):
        return ("scalar", int(a))
    if isinstance(a, (int, np.integer)):
        v = int(a)
        if not -(1 << 63) <= v < (1 << 64):
            raise ValueError(f"integer argument {v} does not fit 64 bits")
        return ("scalar", v & ((1 << 64) - 1))
    if isinstance(a, np.float32):
        return ("scalar", struct.unpack("<I", struct.pack("<f", float(a)))[0])
    if isinstance(a, np.float64):
        return ("scalar", struct.unpack("<Q", struct.pack("<d", float(a)))[0])
    if isinstance(a, float):
        raise TypeError(f"a float argument ({a}) needs its width: np.float32({a}) for a float "
                        f"parameter, np.float64({a}) for a double")
    raise TypeError(f"cannot pass {type(a).__name__} as a kernel argument "
                    "(int, np.float32/np.float64, kcast.buffer or a numpy array)")


def features_from_ptx(path: Union[str, os.PathLike], kernel: Optional[str] = None, *, grid,
                      block, args: Sequence[Any] = (), shared: int = 0, sample: int = 0,
                      oob: str = "error", budget: int = 0, time_limit: float = 0.0,
                      threads: int = 0, racecheck: bool = False) -> Features:
    """The features of one launch of ``kernel`` in ``path`` (.ptx, .cu, .ll,
    .bc), emulated on the CPU -- what ``kcast predict FILE`` computes.

    ``args`` has one entry per kernel parameter: ints, ``np.float32`` /
    ``np.float64`` scalars, :class:`buffer` objects or numpy arrays (a
    buffer of the array's size with random contents).  ``sample`` CTAs are
    emulated (0: as many as a 0.5 % relative standard error of the counts
    needs, the feature emu.sample_rse), ``oob`` is "error" or "warn" (reads out of bounds
    give 0).  ``racecheck`` looks for data races between CTAs (global memory) and
    between a CTA's warps (shared memory, between barriers): the launch still
    succeeds and the feature emu.races counts the 4-byte words found racing.
    The GIL is released while it runs.
    """
    if oob not in ("error", "warn"):
        raise ValueError("oob is 'error' or 'warn'")
    return _kcast.features_from_ptx(os.fspath(path), kernel, _dim3(grid), _dim3(block),
                                    int(shared), int(sample), [_arg(a) for a in args],
                                    1 if oob == "warn" else 0, int(budget), float(time_limit),
                                    int(threads), bool(racecheck))


def features_from_launch(dataset: Union[str, os.PathLike], launch_id: int) -> Features:
    """The stored features of launch ``launch_id`` of a kcast dataset."""
    return _kcast.features_from_launch(os.fspath(dataset), int(launch_id))


def features_from_op(description: str, gpu: Optional[str] = None,
                     model: Optional["Model"] = None) -> Tuple[Features, str]:
    """The features of an operator launch -- a library kernel described by
    its operator and shape, ``"bmm B=8 M=512 N=512 K=64"``, optionally with
    ``kernel=``, ``grid=``, ``block=`` and ``kernels=`` (``kcast predict --op
    list`` names the operators): the opr.* and launch.* features that
    ``kcast predict --op`` computes (kcast_features_from_op).  Returns the
    features and what was assumed where the description is silent (the
    kernel, grid and block; "" when nothing was).  A model trained on
    operator launches (``make models``' operators-time.kcm) predicts them::

        fs, assumed = kcast.features_from_op("bmm B=8 M=512 N=512 K=64")
        kcast.Model("operators-time.kcm").predict(fs, gpu="H100")

    With ``gpu``, the features on that GPU (kcast_features_from_op_gpu): a
    GEMM given without its kernel gets the one of cuBLAS's SGEMM tiles that
    ``model`` (a :class:`Model` predicting time; None: the analytic
    estimate) predicts fastest there, as ``kcast predict --op`` does.
    """
    if not isinstance(description, str):
        raise TypeError("features_from_op(description): a str such as 'bmm B=8 M=512 N=512 K=64'")
    if gpu is None:
        if model is not None:
            raise ValueError("features_from_op: model= chooses a GEMM's kernel on a gpu=; give gpu too")
        return _kcast.features_from_op(description)
    if not isinstance(gpu, str):
        raise TypeError("features_from_op: gpu must be a GPU name (str)")
    if model is not None and not isinstance(model, Model):
        raise TypeError("features_from_op: model must be a kcast.Model or None")
    return _kcast.features_from_op(description, gpu, model._m if model is not None else None)


def analytic(features, gpu: str) -> dict:
    """The analytic (roofline) estimate of a launch on ``gpu``: time (ns)
    and average power (W), each with its band.  ``features`` is a
    :class:`Features` or a dict."""
    if not isinstance(features, Features):
        features = Features(dict(features))
    t, tl, th, p, pl, ph = _kcast.analytic(features, gpu)
    return {"time_ns": t, "time_lo_ns": tl, "time_hi_ns": th, "power_w": p, "power_lo_w": pl,
            "power_hi_w": ph}


def gpus():
    """The GPU table (``kcast gpus``, docs/gpus.md): a DataFrame indexed by
    name when pandas is there, else a list of dicts."""
    rows = _kcast.gpus()
    pd = _pandas()
    return pd.DataFrame(rows).set_index("name") if pd is not None else rows


# Families whose missing value is 0 (a kernel without a barrier has no
# op.bar.sync), as kcast's matrices and its CSV reader take them.
COUNT_FAMILIES = ("op.", "class.", "mem.", "static.", "tensor.", "opr.")


def read_dataset(path: Union[str, os.PathLike], counts_as_zero: bool = False):
    """A kcast dataset as a DataFrame: one row per launch (id, app, dataset,
    lseq, kernel), a column per feature (NaN where a launch lacks it) and
    one per GPU and metric measured, ``METRIC@GPU`` (the median), as
    ``kcast dataset export`` writes it -- a table ``kcast train --csv``
    reads back (its empty cells are these NaNs).  With ``counts_as_zero``
    a missing count (op.*, class.*, mem.*, static.*, tensor.*, opr.*) is 0, as kcast's own
    training matrices have it.  Without pandas: a dict of column name to
    array or list."""
    names, cols, n = _kcast.read_dataset(os.fspath(path))
    data = {}
    for name, col in zip(names, cols):
        if isinstance(col, bytes):
            arr = np.frombuffer(col, dtype=np.float64).copy()
            if name in ("id", "lseq"):
                arr = arr.astype(np.int64)
            elif counts_as_zero and name.startswith(COUNT_FAMILIES):
                arr[np.isnan(arr)] = 0.0
            data[name] = arr
        else:
            data[name] = col
    pd = _pandas()
    return pd.DataFrame(data, columns=names) if pd is not None else data


def cv_folds(n: int, k: int = 5, seed: int = 1) -> np.ndarray:
    """The fold of each of ``n`` rows in ``kcast cv --folds k --seed seed``:
    training on the other folds' rows, in order, with the same parameters
    gives the forest ``kcast cv`` trains (kcast_cv_folds)."""
    out = np.empty(int(n), dtype=np.uint32)
    _kcast.cv_folds(int(n), int(k), int(seed), out)
    return out


def __getattr__(name: str):
    # kcast.Regressor imports scikit-learn, which takes a while: only when used
    if name == "Regressor":
        from .regressor import Regressor
        return Regressor
    raise AttributeError(f"module 'kcast' has no attribute {name!r}")
