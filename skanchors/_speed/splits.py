"""The split thresholds of scikit-learn tree ensembles, read from their fitted trees."""

from __future__ import annotations

import numpy as np

from .boosting import _is_boosting
from .forest import _is_forest
from .hist_boosting import _HistBoostingProba, _is_hist_boosting


def split_thresholds(estimator):
    """What :func:`skanchors.models.split_thresholds` returns: per feature, the sorted
    thresholds at which the trees of a scikit-learn forest, gradient boosting or histogram
    gradient boosting model (classifier or regressor, its prediction path the library's own)
    split it (None for a categorical feature of histogram boosting, split by sets of
    categories), and the precision they compare values in (float32 for the first two, float64
    for histogram boosting); None for other models."""
    methods = ("predict_proba", "predict")
    n = getattr(estimator, "n_features_in_", None)
    if any(check(estimator, m) for check in (_is_forest, _is_boosting) for m in methods):
        trees = np.asarray(estimator.estimators_, dtype=object).ravel()
        features = np.concatenate([t.tree_.feature for t in trees])
        thresholds = np.concatenate([t.tree_.threshold for t in trees])
        categorical, dtype = np.zeros(n, dtype=bool), np.float32
    elif any(_is_hist_boosting(estimator, m) for m in methods):
        if getattr(estimator, "_preprocessor", None) is None:
            order = np.arange(n)
            flags = getattr(estimator, "is_categorical_", None)
            categorical = np.zeros(n, bool) if flags is None else np.asarray(flags, dtype=bool)
        else:  # the preprocessor's output: the categorical columns first (see there)
            layout = _HistBoostingProba(estimator)
            try:
                layout._setup()
            except Exception:  # noqa: BLE001 (internals not as expected: no hashing)
                return None
            categorical, order = layout._layout[:2]
        nodes = np.concatenate([p.nodes for stage in estimator._predictors for p in stage])
        nodes = nodes[(nodes["is_leaf"] == 0) & (nodes["is_categorical"] == 0)]
        features, thresholds = order[nodes["feature_idx"]], nodes["num_threshold"]
        dtype = np.float64
    else:
        return None
    # a category is split by a set of categories: each keeps a code of its own (None)
    out = [None if categorical[j] else np.unique(thresholds[features == j]) for j in range(n)]
    return out, dtype
