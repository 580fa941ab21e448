"""What every re-implemented scikit-learn predictor of the speed layer shares: the check
against the estimator's own method (:class:`_CheckedProba`) and the test that a model's
prediction path is scikit-learn's own."""

from __future__ import annotations

import sys

import numpy as np

# The scikit-learn model kind whose prediction method each adapter computes.
_KIND = {"predict_proba": "Classifier", "predict": "Regressor"}


def _own_ensemble(estimator, class_name, methods):
    """Whether ``estimator`` is a ``sklearn.ensemble.<class_name>`` whose ``methods`` are the
    library's own (a subclass may change what they compute)."""
    ensemble = sys.modules.get("sklearn.ensemble")
    if ensemble is None:  # not imported, so no such model exists (and none is imported here)
        return False
    base = getattr(ensemble, class_name)
    if not isinstance(estimator, base):
        return False
    kind = type(estimator)
    return all(getattr(kind, name, None) is getattr(base, name, None) for name in methods)


class _CheckedProba:
    """``estimator.predict_proba`` (or, for regressors, ``predict``: :attr:`method`) without
    its fixed cost per call, checked against it.

    Subclasses turn the input into what the estimator's trees read (:meth:`_prepare`; by
    default a validated float32 matrix) and compute the probabilities from it the way the
    estimator does (:meth:`_compute`), so that they are the same to the last bit. Input the
    estimator would reject or treat specially (a DataFrame whose columns are not the ones it
    was fitted on, a bare array for an estimator fitted with feature names, NaN or infinity,
    sparse matrices, other widths) goes to ``estimator.predict_proba`` itself, with its errors
    and warnings. The first call also runs ``estimator.predict_proba`` and keeps to it for good
    if the two differ at all, or if computing them here fails.
    """

    method = "predict_proba"  # the estimator's method this computes
    _labels = None  # X -> class indices, where a subclass has a faster way than the argmax

    def __init__(self, estimator):
        self.estimator = estimator
        self.verified = False
        self.engaged = False  # whether the last call computed the probabilities here

    @property
    def favours_large_batches(self):
        return False

    def _dense(self, X, dtype=np.float32, allow_nan=False):
        """``X`` as a C-ordered ``dtype`` matrix, or None where the estimator's own
        ``predict_proba`` must see it (NaN counts as such unless ``allow_nan``)."""
        estimator = self.estimator
        names = getattr(estimator, "feature_names_in_", None)
        if hasattr(X, "columns") and hasattr(X, "dtypes"):
            if names is None or list(X.columns) != list(names):
                return None
            # plain numpy number columns only (not pandas' nullable or categorical dtypes)
            if not all(
                isinstance(dtype, np.dtype) and np.issubdtype(dtype, np.number)
                for dtype in X.dtypes
            ):
                return None
            X = X.to_numpy()
        elif names is not None or not isinstance(X, np.ndarray) or isinstance(X, np.matrix):
            return None  # (np.matrix: scikit-learn refuses it)
        if X.ndim != 2 or X.shape[1] != estimator.n_features_in_ or X.shape[0] == 0:
            return None  # the estimator's own error
        if X.dtype.kind not in "iuf":  # real numbers (not booleans, complex or objects)
            return None
        X = np.ascontiguousarray(X, dtype=dtype)
        ok = not np.isinf(X).any() if allow_nan else np.isfinite(X).all()
        return X if ok else None

    def _prepare(self, X):
        """``X`` as :meth:`_compute` takes it, or None to call ``predict_proba``."""
        return self._dense(X)

    def _compute(self, X):
        raise NotImplementedError

    def __call__(self, X):
        own = getattr(self.estimator, self.method)
        prepared = None if self.verified is None else self._prepare(X)
        if prepared is None:
            self.engaged = False
            return own(X)
        try:
            proba = self._compute(prepared)
        except Exception:  # noqa: BLE001 (any failure: the estimator's own path)
            # The fast path reads the estimator's internals: if they are not what it expects
            # (another scikit-learn version, say), the estimator predicts for itself, for good.
            self.verified, self.engaged = None, False
            return own(X)
        if not self.verified:
            reference = own(X)
            self.verified = True if np.array_equal(proba, reference) else None
            self.engaged = self.verified is True
            return reference
        self.engaged = True
        return proba

    def labels(self, X):
        """Index of the most probable class of each row of ``X``: ``self(X).argmax(axis=1)``,
        with less work where the subclass knows a way (:meth:`_labels`, once verified)."""
        if self.verified is True and self._labels is not None:
            prepared = self._prepare(X)
            if prepared is not None:
                try:
                    labels = self._labels(prepared)
                except Exception:  # noqa: BLE001 (as in __call__: the estimator's own, for good)
                    self.verified, self.engaged = None, False
                else:
                    self.engaged = True
                    return labels
        return np.asarray(self(X)).argmax(axis=1)
