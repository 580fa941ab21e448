"""Checks made at every public entry point, not only in ``fit``.

scikit-learn validates an estimator's parameters in ``fit`` (``_fit_context``); a parameter set
afterwards (``set_params(batch_size=0)``, or an attribute assigned) reached the search
unchecked, where it looped forever or failed inside with a message about something else.
:func:`check_params` runs the same constraints, with scikit-learn's messages, wherever a
parameter is used: ``explain``, ``transform``, ``score``, ``partial_fit``, a sampler's
``instance``; parameters found valid before are not checked again while they stay the same.

The other checks here turn what a careless user can pass into errors that name the argument:
a model given as a class or unfitted (:func:`check_model`), a model's output that is not an
array of numbers (:func:`model_output`), probabilities outside [0, 1]
(:func:`check_probabilities`), a request for more memory than the machine has
(:func:`check_memory`), and table columns whose cells cannot be categories or numbers
(:func:`refuse_unhashable`, :func:`refuse_complex`).
"""

from __future__ import annotations

import os
import warnings
import weakref

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn import get_config
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

__all__ = [
    "refuse_class",
    "check_memory",
    "check_model",
    "check_param",
    "check_params",
    "check_probabilities",
    "model_output",
    "refuse_complex",
    "refuse_unhashable",
]


def check_params(estimator):
    """Validate ``estimator``'s parameters against its ``_parameter_constraints``.

    The message is scikit-learn's ("The 'batch_size' parameter of AnchorExplainer must be an
    int in the range [1, inf). Got 0 instead."). The model of an explainer or aggregator (its
    ``estimator``) is also refused when it is a class rather than an instance. Nothing is
    checked under ``sklearn.config_context(skip_parameter_validation=True)``.
    """
    if get_config()["skip_parameter_validation"]:
        return
    constraints = getattr(estimator, "_parameter_constraints", None)
    if constraints is None:
        return
    names = tuple(constraints)
    values = tuple(getattr(estimator, name, None) for name in names)
    checked = _CHECKED.get(estimator)
    if checked is not None and checked[0] == names and _unchanged(checked[1], values):
        return  # (checked already: every row's search passes here)
    owner = type(estimator).__name__
    if "estimator" in constraints:
        refuse_class(getattr(estimator, "estimator", None), f"The 'estimator' parameter of {owner}")
    validate_parameter_constraints(constraints, dict(zip(names, values)), caller_name=owner)
    _CHECKED[estimator] = (names, values)


# The parameters each estimator was last found valid with (not pickled, not cloned).
_CHECKED = weakref.WeakKeyDictionary()
# Values compared by value; any other object by identity. The constraints check no more of
# an object than its type and methods (HasMethods, "array-like", callable), which changing it
# in place does not change; the values are kept, so an identity is never reused meanwhile.
_PLAIN = (bool, int, float, str, bytes, type(None), np.generic)


def _unchanged(before, now):
    return all(
        a is b or (type(a) is type(b) and isinstance(a, _PLAIN) and bool(a == b))
        for a, b in zip(before, now)
    )


def check_param(name, value, constraints, owner):
    """Validate one argument of a method (``compute_scores(alpha=...)``) as a parameter."""
    if not get_config()["skip_parameter_validation"]:
        validate_parameter_constraints({name: constraints}, {name: value}, caller_name=owner)


def refuse_class(model, what):
    """Refuse a model given as a class (``LogisticRegression``, not an instance): ``what``
    begins the message ("The 'estimator' parameter of AnchorExplainer")."""
    if isinstance(model, type):
        raise InvalidParameterError(
            f"{what} must be a fitted model instance, got the class {model.__name__} itself; "
            f"pass an instance fitted on your data, e.g. {model.__name__}().fit(X, y)."
        )


def check_model(model, name="estimator", owner=None):
    """Refuse a model given as a class, or a scikit-learn estimator that is not fitted.

    ``name`` is the argument the model was given as (``"estimator"`` for the explainers'
    parameter, ``"model"`` for :func:`~skanchors.metrics.aopc_k`); ``owner`` the class or
    function it was given to. A plain function or an object that is not a scikit-learn
    estimator is taken as it is: only calling it can tell.
    """
    what = f"The {name!r} parameter of {owner}" if owner else f"The {name!r} argument"
    refuse_class(model, what)
    fitted = getattr(model, "__self__", model)  # a bound predict_proba: its estimator
    if isinstance(fitted, type) or not hasattr(fitted, "fit") or not hasattr(fitted, "get_params"):
        return
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(fitted)
    except NotFittedError:
        raise NotFittedError(
            f"{what} must be a fitted model: this {type(fitted).__name__} is not fitted. Fit "
            "it on your data first; the explainers only call it."
        ) from None
    except TypeError:  # (not an estimator after all)
        return


def model_output(values, expected, hint=""):
    """The output of a model's ``predict_proba`` or ``predict`` as a float array.

    ``expected`` says what it should have returned and ``hint`` what to do about strings
    (for the messages). None, a sparse matrix, strings, dates or complex numbers are refused
    with what was returned.
    """
    if values is None:
        raise ValueError(f"The model returned None; it must return {expected}.")
    if sparse.issparse(values):
        raise TypeError(
            f"The model returned a sparse matrix ({type(values).__name__}); it must return "
            f"{expected} as a dense array (convert its output with .toarray())."
        )
    array = np.asarray(values)
    kind = array.dtype.kind
    if kind in "USO":
        text = [v for v in array.ravel()[:1000].tolist() if isinstance(v, (str, bytes))]
        if kind != "O" or text:
            sample = text[:3] if text else array.ravel()[:3].tolist()
            raise ValueError(
                f"The model returned strings such as {sample}; it must return numbers: "
                f"{expected}. {hint}".rstrip()
            )
    if kind in "cmM":
        raise ValueError(
            f"The model returned values of type {array.dtype}; it must return real numbers: "
            f"{expected}."
        )
    try:
        return array.astype(float, copy=False)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"The model returned values that are not numbers ({error}); it must return "
            f"numbers: {expected}."
        ) from None


# Probabilities may stray this far outside [0, 1] (and their sums from 1) by rounding.
_PROBABILITY_TOLERANCE = 1e-6


def check_probabilities(proba, use):
    """Refuse class probabilities outside [0, 1] where their values matter (``use`` says
    what for: LIME regresses them, AOPC measures their drops); warn when a row does not
    sum to 1 (a one-vs-rest model's columns need not), as the LIME package does. Returns
    whether every row sums to 1."""
    tol = _PROBABILITY_TOLERANCE
    low, high = float(proba.min(initial=0.0)), float(proba.max(initial=0.0))
    if low < -tol or high > 1 + tol:
        raise ValueError(
            f"The model returned values from {low:.4g} to {high:.4g}, which are not "
            f"probabilities in [0, 1]; {use}. Pass a model whose predict_proba returns "
            "probabilities (not scores, logits or log-probabilities), or wrap its scores, e.g. "
            "in a softmax."
        )
    return bool(np.all(np.abs(proba.sum(axis=1) - 1.0) <= 1e-3))


def warn_probabilities_do_not_sum_to_1(stacklevel):
    warnings.warn(
        "The model's class probabilities do not sum to 1 for every row (a one-vs-rest or "
        "multi-label model?): each class's probability is explained on its own. Check that "
        "the model returns probabilities, not scores or log-probabilities.",
        UserWarning,
        stacklevel=stacklevel,
    )


def available_memory():
    """Bytes of memory available to this process, or None where it cannot be read."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _size(n_bytes):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n_bytes < 1024 or unit == "PiB":
            return f"{n_bytes:.0f} {unit}" if unit == "bytes" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1024


_SMALL = 256 << 20


def check_memory(name, value, n_bytes, what):
    """Refuse ``name=value`` when it needs ``n_bytes`` (a lower bound) for ``what`` and the
    machine has less memory available: a clear error instead of a MemoryError or the
    operating system killing the process."""
    if n_bytes < _SMALL:
        return  # (not worth reading the system's figures for)
    available = available_memory()
    if available is not None and n_bytes > available:
        raise ValueError(
            f"{name}={value!r} needs at least {_size(n_bytes)} of memory for {what}, and "
            f"{_size(available)} are available; lower {name}."
        )


# What pandas.api.types.infer_dtype says of columns whose values are all hashable.
_HASHABLE_KINDS = frozenset(
    ("string", "bytes", "integer", "floating", "mixed-integer-float", "boolean", "decimal",
     "empty")
)  # fmt: skip


def refuse_unhashable(frame):
    """Refuse a DataFrame column holding lists, dicts or other unhashable cells, by name: a
    table's cells must be values a category can be (pandas said "unhashable type: 'list'")."""
    for j, dtype in enumerate(frame.dtypes.tolist()):
        if not pd.api.types.is_object_dtype(dtype):
            continue
        column, name = frame.iloc[:, j], frame.columns[j]
        if pd.api.types.infer_dtype(column, skipna=True) in _HASHABLE_KINDS:
            continue  # (decided in C: the common case)
        for value in column.tolist():
            try:
                hash(value)
            except TypeError:
                raise ValueError(
                    f"X column {name!r} holds {type(value).__name__} values such as "
                    f"{value!r:.60}, which are not hashable: a cell must hold one number, "
                    "string or other hashable value. Turn the column into such values (e.g. "
                    ".astype(str), or one column per element) or drop it."
                ) from None


def refuse_complex(frame):
    """Refuse a DataFrame column of complex numbers, by name: they have no order to bin them
    by, and float() would drop their imaginary part without a word."""
    for name, dtype in frame.dtypes.items():
        complex_ = pd.api.types.is_complex_dtype(dtype) or (
            pd.api.types.is_object_dtype(dtype)
            and pd.api.types.infer_dtype(frame[name], skipna=True).startswith("complex")
        )
        if complex_:
            raise ValueError(
                f"X column {name!r} holds complex numbers; anchors need real numbers or "
                "categories. Split it into its real and imaginary parts (or its modulus), or "
                "make it strings for categories."
            )
