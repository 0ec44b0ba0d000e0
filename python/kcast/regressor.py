"""kcast.Regressor: kcast's own forest as a scikit-learn estimator.

It trains through the C API (kcast_model_train) with kcast's defaults --
the defaults of ``kcast train`` (extremely randomized trees, every feature
tried at each split, leaves of one sample, a log target when every target is
positive, calibrated intervals) -- so the same rows, order and parameters
give the forest ``kcast train --csv`` gives, bit for bit, and the folds of
:func:`kcast.cv_folds` reproduce ``kcast cv``'s out-of-fold predictions.
It works in ``cross_val_score``, ``cross_val_predict``, ``GridSearchCV`` and
pipelines; without scikit-learn installed it still fits and predicts.
"""
from __future__ import annotations

import os
from typing import Optional, Sequence, Union

import numpy as np

from . import _kcast

try:  # scikit-learn is optional
    from sklearn.base import BaseEstimator, RegressorMixin
except ImportError:  # pragma: no cover
    class BaseEstimator:  # the two methods scikit-learn's clone needs
        def get_params(self, deep=True):
            return {k: getattr(self, k) for k in Regressor._PARAMS}

        def set_params(self, **params):
            for k, v in params.items():
                if k not in Regressor._PARAMS:
                    raise ValueError(f"unknown parameter {k!r}")
                setattr(self, k, v)
            return self

    class RegressorMixin:
        def score(self, X, y, sample_weight=None):
            y = np.asarray(y, dtype=np.float64)
            p = self.predict(X)
            ss = ((y - y.mean()) ** 2).sum()
            return 1.0 - ((y - p) ** 2).sum() / ss if ss else 0.0


class Regressor(RegressorMixin, BaseEstimator):
    """kcast's random forest (CART or extremely randomized trees, quantile
    intervals), trained by libkcast.

    Parameters (kcast's defaults):
      n_estimators      trees (100)
      extra_trees       extremely randomized trees (True) or a random forest
      max_features      features tried per split: a fraction in (0, 1], a
                        whole count, or None (every feature for extra trees,
                        a third for a random forest)
      min_samples_leaf  smallest leaf (1)
      max_depth         None: unlimited
      bootstrap         None: the kind's default (off for extra trees)
      log_target        "auto" (log when every y > 0), True, False
      calibrate         calibrate the intervals on held-out rows (True)
      bins              histogram bins per feature (256)
      random_state      the seed (1); the same seed gives the same forest
                        whatever n_jobs
      n_jobs            OpenMP threads (0 or None: the default)
      base              a column whose value is the target's base (the forest
                        learns y / base; needs the log target), or None
      target            the target's name stored in a saved model ("time" for
                        ns makes it a time model for the CLI and the C API)
      gpu               the GPU the rows were measured on, stored in the model
      coverage          interval coverage of predict_interval (0.9)
    """

    _PARAMS = ("n_estimators", "extra_trees", "max_features", "min_samples_leaf", "max_depth",
               "bootstrap", "log_target", "calibrate", "bins", "random_state", "n_jobs",
               "base", "target", "gpu", "coverage")

    def __init__(self, n_estimators: int = 100, extra_trees: bool = True,
                 max_features: Optional[float] = None, min_samples_leaf: int = 1,
                 max_depth: Optional[int] = None, bootstrap: Optional[bool] = None,
                 log_target: Union[str, bool] = "auto", calibrate: bool = True, bins: int = 256,
                 random_state: int = 1, n_jobs: Optional[int] = 0, base: Optional[str] = None,
                 target: Optional[str] = None, gpu: Optional[str] = None, coverage: float = 0.9):
        self.n_estimators = n_estimators
        self.extra_trees = extra_trees
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.bootstrap = bootstrap
        self.log_target = log_target
        self.calibrate = calibrate
        self.bins = bins
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.base = base
        self.target = target
        self.gpu = gpu
        self.coverage = coverage

    # -- scikit-learn's conventions -------------------------------------------

    def _matrix(self, X, fitting: bool):
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover
            pd = None
        if pd is not None and isinstance(X, pd.DataFrame):
            names = [str(c) for c in X.columns]
            arr = X.to_numpy(dtype=np.float64)
            if fitting:
                self.feature_names_in_ = np.asarray(names, dtype=object)
            elif hasattr(self, "feature_names_in_") and list(self.feature_names_in_) != names:
                # the model finds its features by name: any order works
                pass
        else:
            arr = np.asarray(X, dtype=np.float64)
            if arr.ndim == 1:
                arr = arr.reshape(-1, 1) if fitting else arr.reshape(1, -1)
            if fitting:
                names = [f"x{j}" for j in range(arr.shape[1])]
                if hasattr(self, "feature_names_in_"):
                    del self.feature_names_in_
                self._names = names
            else:
                names = (list(self.feature_names_in_) if hasattr(self, "feature_names_in_")
                         else self._names)
                if arr.shape[1] != len(names):
                    raise ValueError(f"X has {arr.shape[1]} features; the model was fitted on "
                                     f"{len(names)}")
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-D, not {arr.ndim}-D")
        if fitting:
            self.n_features_in_ = arr.shape[1]
            self._names = names
        return np.ascontiguousarray(arr), names

    def fit(self, X, y, groups=None):
        """Train on X (2-D array or DataFrame) and y.  groups is accepted for
        scikit-learn's group-aware splitters and not used by the forest."""
        arr, names = self._matrix(X, True)
        yv = np.ascontiguousarray(np.asarray(y, dtype=np.float64).reshape(-1))
        if yv.shape[0] != arr.shape[0]:
            raise ValueError(f"X has {arr.shape[0]} rows, y {yv.shape[0]}")
        lt = {"auto": -1, True: 1, False: 0}.get(self.log_target)
        if lt is None:
            raise ValueError("log_target is 'auto', True or False")
        mf = 0.0 if self.max_features is None else float(self.max_features)
        boot = -1 if self.bootstrap is None else int(bool(self.bootstrap))
        native = _kcast.train(arr, names, yv, int(self.n_estimators), mf,
                              int(self.min_samples_leaf), int(self.max_depth or 0),
                              int(bool(self.extra_trees)), boot, lt, int(bool(self.calibrate)),
                              int(self.bins), int(self.random_state) & ((1 << 64) - 1),
                              int(self.n_jobs or 0), self.base, self.target, self.gpu)
        from . import Model
        self.model_ = Model(_native=native)
        return self

    def _fitted(self):
        if not hasattr(self, "model_"):
            raise RuntimeError("this Regressor is not fitted yet: call fit(X, y) first")
        return self.model_

    def predict(self, X):
        """Point predictions of X's rows."""
        return self.predict_interval(X)[0]

    def predict_interval(self, X, coverage: Optional[float] = None):
        """(prediction, lower, upper) of X's rows at coverage (default
        self.coverage)."""
        m = self._fitted()
        arr, names = self._matrix(X, False)
        return m.predict(arr, coverage=self.coverage if coverage is None else coverage,
                         feature_names=names, threads=int(self.n_jobs or 0))

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Write the fitted forest as a .kcm file (kcast predict --model, the
        C API and kcast.Model load it)."""
        self._fitted().save(path)

    @property
    def feature_importances_(self) -> np.ndarray:
        m = self._fitted()
        imp = m.importances()
        return np.array([imp[n] for n in self._names])
