"""A model refitted in place after an explainer's ``fit``: how it is noticed.

The explainers wrap the model at ``fit`` (:class:`~skanchors.models.ProbabilityModel`: compiled
trees, boosting's prior, encoder tables) and keep what they read from it (its classes, the
rows hashed by its split thresholds, a cache of its predictions). ``model.fit(X, other_y)`` on
the same object changes none of that. :func:`fitted_state` is a cheap fingerprint of what a
fitted estimator predicts from, taken when it is wrapped and compared at every ``explain``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["changed_attributes", "fitted_state", "reads_other_columns", "refit_error"]


# Private attributes that scikit-learn's histogram boosting sets at fit and that its
# prediction (and skanchors.models' path for it) reads; the public fitted attributes (names ending
# in "_") are read for every estimator.
_PRIVATE_FITTED = ("_predictors", "_baseline_prediction", "_bin_mapper", "_preprocessor")
# Fitted arrays of at most this many elements are also compared by value, so that an update in
# place (partial_fit, say) is seen; larger ones by identity and shape.
_SMALL_ARRAY = 4096


def _token(value):
    """What is kept of one fitted attribute: numbers and strings by value, arrays and other
    objects by identity (a reference is kept, so the identity cannot be reused), lists and
    arrays also by length or shape (a warm start appends trees to the same list), small
    arrays also by value."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return ("value", value)
    if isinstance(value, np.ndarray):
        small = value.dtype != object and value.size <= _SMALL_ARRAY
        return ("array", value, value.shape, value.copy() if small else None)
    if isinstance(value, (list, tuple, dict)):
        return ("object", value, len(value))
    return ("object", value, None)


def _same_token(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "value":
        x, y = a[1], b[1]
        return type(x) is type(y) and (x == y or (x != x and y != y))  # (NaN equals NaN here)
    if a[1] is not b[1] or a[2] != b[2]:
        return False
    if a[0] == "array" and a[3] is not None:
        try:
            return bool(np.array_equal(a[3], b[1], equal_nan=True))
        except TypeError:  # (strings: no NaN)
            return bool(np.array_equal(a[3], b[1]))
    return True


def _sub_estimators(value):
    """The estimators a parameter holds: itself, or the steps of a list (a Pipeline's
    ``steps``, a ColumnTransformer's ``transformers``)."""
    if hasattr(value, "get_params") and not isinstance(value, type):
        return [value]
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            if isinstance(item, tuple):
                out += [v for v in item if hasattr(v, "get_params") and not isinstance(v, type)]
            elif hasattr(item, "get_params") and not isinstance(item, type):
                out.append(item)
        return out
    return []


def fitted_state(estimator):
    """A cheap fingerprint of what a fitted estimator predicts from, or None where it cannot
    be read (a plain function).

    The public fitted attributes (names ending in ``_``: ``estimators_``, ``classes_``,
    ``coef_``, a ColumnTransformer's ``transformers_``...) and histogram boosting's private
    ones, of the estimator and of the estimators its parameters hold (a Pipeline's steps,
    recursively), each by :func:`_token`. ``fit`` assigns new objects to them, so a refit in
    place (``rf.fit(X, other_y)`` on the same object, with as many trees or not) changes the
    fingerprint; a warm start that appends trees changes a length. Compare two with
    :func:`changed_attributes`.
    """
    estimator = getattr(estimator, "__self__", estimator)  # a bound method: its estimator
    if not hasattr(estimator, "get_params") or isinstance(estimator, type):
        return None
    out = {}
    _collect(estimator, "", out, set())
    return out


_PARAM_NAMES = {}  # estimator class -> its parameter names (get_params reads a signature)


def _collect(estimator, path, out, seen):
    if id(estimator) in seen:
        return
    seen.add(id(estimator))
    kind = type(estimator)
    names = _PARAM_NAMES.get(kind)
    if names is None:
        try:
            names = tuple(estimator.get_params(deep=False))
        except Exception:  # noqa: BLE001 (an estimator-like object: its attributes alone)
            names = ()
        _PARAM_NAMES[kind] = names
    params = {name: getattr(estimator, name, None) for name in names}
    for name, value in vars(estimator).items():
        fitted = (name.endswith("_") and not name.startswith("_")) or name in _PRIVATE_FITTED
        if fitted and name not in params:
            out[path + name] = _token(value)
    for name, value in params.items():
        for i, sub in enumerate(_sub_estimators(value)):
            _collect(sub, f"{path}{name}[{i}].", out, seen)


def changed_attributes(before, after):
    """Names of the fitted attributes that differ between two :func:`fitted_state`
    fingerprints (empty when either is None)."""
    if before is None or after is None:
        return []
    names = sorted(set(before) | set(after))
    return [
        n
        for n in names
        if n not in before or n not in after or not _same_token(before[n], after[n])
    ]


def reads_other_columns(estimator, sampler):
    """Whether a refitted estimator reads other columns than the sampler's reference data."""
    model = getattr(estimator, "__self__", estimator)
    n = getattr(model, "n_features_in_", None)
    if n is not None and getattr(sampler, "n_features_in_", n) != n:
        return True
    names = getattr(model, "feature_names_in_", None)
    ours = getattr(sampler, "feature_names_in_", None)
    return names is not None and ours is not None and list(names) != list(ours)


def refit_error(explainer, changed, reason):
    """The error for a model refitted after ``explainer.fit`` that cannot be read again."""
    what = f"{', '.join(changed[:4])}{', ...' if len(changed) > 4 else ''} changed"
    return ValueError(
        f"The model was refitted after {type(explainer).__name__}.fit ({what}) and {reason}: "
        "call fit(X) again to explain the refitted model."
    )
