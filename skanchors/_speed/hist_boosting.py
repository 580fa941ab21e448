"""Histogram gradient boosting predicted by its own tree predictors from columns encoded here
as its preprocessing would (see :class:`_HistBoostingProba`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._base import _KIND, _CheckedProba, _own_ensemble


def _is_hist_boosting(estimator, method):
    """A fitted scikit-learn histogram gradient boosting model whose prediction path is the
    library's own: a ``HistGradientBoostingClassifier`` for ``method="predict_proba"``, a
    ``HistGradientBoostingRegressor`` for ``"predict"``."""
    kind = _KIND[method]
    methods = (method, "_raw_predict", "_predict_iterations", "_preprocess_X")
    if not _own_ensemble(estimator, f"HistGradientBoosting{kind}", methods):
        return False
    return all(
        hasattr(estimator, name)
        for name in ("_predictors", "_baseline_prediction", "_bin_mapper", "_loss")
    )


class _HistBoostingProba(_CheckedProba):
    """A histogram gradient boosting classifier's ``predict_proba`` without its preprocessing
    (see :class:`_CheckedProba`).

    On a DataFrame with categorical columns, ``HistGradientBoostingClassifier.predict_proba``
    runs a ``ColumnTransformer`` (an ``OrdinalEncoder`` for the categories, a validation for
    the numbers) before its trees, which costs several times what the trees do for the few
    rows of a call. This encodes the columns as that transformer does (a
    category's position in the encoder's ``categories_``; missing and unknown values NaN;
    categorical columns first) and adds up the trees with the estimator's own predictors, from
    its baseline, in its order.
    Input that is not a DataFrame of the fitted columns, or whose numeric columns are not
    plain numpy numbers, goes to ``predict_proba``.
    """

    def __init__(self, estimator):
        super().__init__(estimator)
        self._layout = None

    def _setup(self):
        from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

        est = self.estimator
        pre = est._preprocessor
        n = est.n_features_in_
        categorical = np.zeros(n, dtype=bool)
        if pre is None:
            order, categories = np.arange(n), [None] * n
        else:
            columns = {name: cols for name, _, cols in pre.transformers_}
            categorical[np.asarray(columns["encoder"])] = True
            encoder = pre.named_transformers_["encoder"]
            # the transformer's output: the encoded columns first, then the numeric ones
            order = np.concatenate([np.flatnonzero(categorical), np.flatnonzero(~categorical)])
            slices = pre.output_indices_
            layout = (slices["encoder"].stop, slices["numerical"].stop)
            if layout != (categorical.sum(), n):
                raise ValueError(f"unexpected preprocessing layout {layout}")
            categories = [None] * n
            for j, cats in zip(np.flatnonzero(categorical), encoder.categories_):
                known = pd.Index(cats)
                categories[j] = known[known.notna()]  # a missing category encodes as NaN
        bitsets, index_map = est._bin_mapper.make_known_categories_bitsets()
        self._layout = (categorical, order, categories, bitsets, index_map)
        # asked on every call, as the model does (threadpoolctl limits may change between)
        self._threads = _openmp_effective_n_threads
        self._codes = {}  # (column, its pandas categories) -> encoder codes of those categories

    def _prepare(self, X):
        est = self.estimator
        if self._layout is None:
            try:
                self._setup()
            except Exception:  # noqa: BLE001 (internals not as expected: predict_proba)
                self.verified = None
                return None
        names = getattr(est, "feature_names_in_", None)
        if est._preprocessor is None:
            return self._dense(X, dtype=np.float64, allow_nan=True)
        if not (hasattr(X, "columns") and hasattr(X, "dtypes")):
            return None
        if names is None or list(X.columns) != list(names) or len(X) == 0:
            return None
        try:
            return self._encode(X)
        except Exception:  # noqa: BLE001 (values not encoded here: the model's preprocessing)
            return None

    def _encode(self, frame):
        """The preprocessor's output for ``frame``, or None for columns it is not sure of."""
        categorical, order, categories, _, _ = self._layout
        out = np.empty((len(frame), len(order)), dtype=np.float64)
        for position, j in enumerate(order.tolist()):
            column = frame.iloc[:, j]
            dtype = column.dtype
            if not categorical[j]:
                if not (isinstance(dtype, np.dtype) and np.issubdtype(dtype, np.number)):
                    return None  # nullable, boolean-like or text numbers: the transformer's job
                values = column.to_numpy(dtype=np.float64)
                if np.isinf(values).any():
                    return None
                out[:, position] = values
                continue
            values_dtype = (
                dtype.categories.dtype if isinstance(dtype, pd.CategoricalDtype) else dtype
            )
            if _kind(values_dtype) != _kind(categories[j].dtype):
                return None  # bools against numbers, numbers against text: the encoder's job
            if _kind(values_dtype) == "number":
                values = (
                    dtype.categories.to_numpy(np.float64)  # (a category may be unused: safe)
                    if isinstance(dtype, pd.CategoricalDtype)
                    else column.to_numpy(dtype=np.float64, na_value=np.nan)
                )
                if np.isinf(values).any():
                    return None  # the encoder refuses infinity
            if isinstance(dtype, pd.CategoricalDtype):
                key = (j, tuple(dtype.categories.tolist()))
                lookup = self._codes.get(key)
                if lookup is None:
                    found = categories[j].get_indexer(dtype.categories)
                    lookup = np.append(np.where(found < 0, np.nan, found), np.nan)
                    self._codes[key] = lookup
                out[:, position] = lookup[column.cat.codes.to_numpy()]  # code -1: missing
            else:  # text or numbers, looked up as the encoder does
                found = categories[j].get_indexer(column)
                out[:, position] = np.where(found < 0, np.nan, found)
        return out

    def _compute(self, encoded):
        est = self.estimator
        _, _, _, bitsets, index_map = self._layout
        threads = self._threads()
        raw = np.zeros(
            (encoded.shape[0], est.n_trees_per_iteration_),
            dtype=est._baseline_prediction.dtype,
            order="F",
        )
        raw += est._baseline_prediction
        for predictors in est._predictors:
            for k, predictor in enumerate(predictors):
                raw[:, k] += predictor.predict(
                    encoded, known_cat_bitsets=bitsets, f_idx_map=index_map, n_threads=threads
                )
        return self._output(raw)

    def _output(self, raw):
        return self.estimator._loss.predict_proba(raw)


def _kind(dtype):
    """Which values a dtype holds, as the encoder's matching tells them apart."""
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return "bool"
    if isinstance(dtype, np.dtype) and dtype.kind in "iuf":
        return "number"
    return "other"


class _HistBoostingRegression(_HistBoostingProba):
    """A histogram gradient boosting regressor's ``predict`` without its preprocessing (see
    :class:`_HistBoostingProba`)."""

    method = "predict"

    def _output(self, raw):
        # what the regressor's predict does with the raw predictions
        return self.estimator._loss.link.inverse(raw.ravel())
