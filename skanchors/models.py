"""Adapters that turn any classifier into a ``predict_proba`` function.

The explainer only ever *calls* the model: it is never fitted, cloned or modified.

Some models can be predicted faster than through their own methods, with the same numbers:
that is the speed layer's business (:mod:`skanchors._speed`). It plugs in here through two
hooks, and this module imports nothing of it: :func:`register_fast_predictor`, consulted
when a model is wrapped, and :func:`register_split_reader`, consulted by
:func:`split_thresholds`. Without anything registered, every model is called through its own
method.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._refit import changed_attributes, fitted_state
from ._validation import model_output, refuse_class
from .hf import HFTextClassifier  # (its home until it got a module of its own)

__all__ = [
    "ProbabilityModel",
    "RegressionModel",
    "LabelsAsProbabilities",
    "as_probability_model",
    "split_thresholds",
    "register_fast_predictor",
    "register_split_reader",
    "HFTextClassifier",
]


# (matches, build) pairs, consulted in the order they were registered (see
# register_fast_predictor), and the functions reading split thresholds (see
# register_split_reader).
_FAST_PREDICTORS = []
_SPLIT_READERS = []


def register_fast_predictor(matches, build):
    """Have the adapters compute a model's ``predict_proba`` (or, for a regressor,
    ``predict``) with ``build(estimator, method)`` wherever ``matches(estimator, method)``.

    ``method`` is ``"predict_proba"`` or ``"predict"``. ``build`` returns a callable that
    computes exactly what ``getattr(estimator, method)`` does, to the last bit, or None to
    leave the model to the predictors registered after it (and in the end to its own
    method). The callable may also have ``labels(X)`` (the index of each row's most probable
    class), ``prepare(X)`` (see :meth:`ProbabilityModel.prepare`) and
    ``favours_large_batches``; the adapters use them where present. The first registered
    pair that matches and builds something is used.
    """
    _FAST_PREDICTORS.append((matches, build))


def register_split_reader(read):
    """Have :func:`split_thresholds` ask ``read(estimator)``, which returns what that
    function describes or None for a model it does not know; the first answer is used."""
    _SPLIT_READERS.append(read)


def fast_predictor(estimator, method="predict_proba"):
    """The registered fast way to compute ``getattr(estimator, method)``, or None (see
    :func:`register_fast_predictor`)."""
    for matches, build in _FAST_PREDICTORS:
        if matches(estimator, method):
            built = build(estimator, method)
            if built is not None:
                return built
    return None


class ProbabilityModel:
    """A black box with ``predict_proba``, its class labels, and a call counter.

    Parameters
    ----------
    estimator : object or callable
        A fitted estimator with ``predict_proba`` (scikit-learn estimators, Pipelines,
        :class:`~skanchors.HFTextClassifier`), or a callable mapping a batch of inputs to an
        array of shape (n_inputs, n_classes) of class probabilities.
    classes : array-like or None
        Labels of the probability columns; defaults to ``estimator.classes_`` when present,
        else ``0 .. n_classes - 1``.

    Notes
    -----
    Three kinds of fitted scikit-learn classifiers, alone or as the last step of a
    ``Pipeline``, are evaluated by the speed layer (:mod:`skanchors._speed`) rather than
    through their ``predict_proba``, with the same probabilities to the last bit and without
    its fixed cost per call (input validation, a thread pool per call), which is most of the
    cost of the few hundred rows an anchor search predicts at a time:

    - ``RandomForestClassifier`` and ``ExtraTreesClassifier`` (single output, ``n_jobs`` None
      or 1, ``predict_proba`` not overridden) are traversed tree by tree. Batches of 256 rows
      or more are traversed grouped by the leaves their rows reach in the first two trees
      (alike rows one after the other find the trees' nodes in cache), each row summed over
      the trees in the same order as before. With numba installed (the ``fast`` extra),
      compiled code traverses a compact copy of the trees instead (:mod:`skanchors._trees`).
    - ``GradientBoostingClassifier`` (``init`` left at the class prior or ``"zero"``, its
      prediction methods not overridden) runs scikit-learn's own loop over its stages without
      validating the input twice first. With numba installed, compiled code adds up the
      stages instead (:func:`skanchors._trees.complete`), all rows down a tree one level at
      a time.
    - ``HistGradientBoostingClassifier`` (its prediction methods not overridden) gets its
      categorical columns encoded here as its own ``ColumnTransformer`` would, and its trees
      added up by its own predictors.

    A ``Pipeline`` whose first step is a ``ColumnTransformer`` of column-wise parts (see
    :mod:`skanchors._speed.columnwise`) gets that transformer's output assembled from tables of
    each value's output, which :meth:`prepare` learns from the reference data, then its other
    transforming steps, then its last step's fast path above or the last step's own method
    (its first two calls are checked against the transformer).

    These paths read scikit-learn internals. The first call checks the two against each
    other and keeps to ``predict_proba`` if they differ, or if the internals are not as
    expected (another scikit-learn version); input the model would reject, warn about or
    convert itself goes to ``predict_proba``. Pass ``model.predict_proba`` instead of the
    model to have every call go to ``predict_proba`` (or wrap it within
    ``skanchors._speed.disabled()``).
    They read the estimator as it was fitted when first called: refit it (or warm-start
    more trees) and wrap it again, as :meth:`AnchorExplainer.fit` does (a wrapper kept from
    before the refit returns the old model's probabilities). :meth:`refitted` tells: it
    compares a fingerprint of the estimator's fitted attributes taken when it was wrapped
    (:func:`skanchors._refit.fitted_state`) with the current one; the explainers check it
    before they use the model.
    """

    def __init__(self, estimator, classes=None):
        refuse_class(estimator, "estimator")
        fast = None
        if hasattr(estimator, "predict_proba") and callable(estimator.predict_proba):
            fast = fast_predictor(estimator, "predict_proba")
            self._fn = fast or estimator.predict_proba
        elif callable(estimator) and not isinstance(estimator, type):
            self._fn = estimator
        else:
            raise TypeError(
                "estimator must be a fitted model with a predict_proba method or a callable "
                f"returning class probabilities; got {type(estimator).__name__}, which has "
                "neither. For a classifier without probabilities, wrap it, e.g. "
                "CalibratedClassifierCV(model)."
            )
        if classes is None:
            classes = getattr(estimator, "classes_", None)
        if classes is None and getattr(estimator, "__name__", None) == "predict_proba":
            # model.predict_proba given as the model: its columns are the model's classes
            classes = getattr(getattr(estimator, "__self__", None), "classes_", None)
        self.classes_ = None if classes is None else np.asarray(classes)
        # whether _fn is a registered fast predictor, whose ``labels`` give the classes alone
        # (a user's callable may have an attribute of that name meaning something else)
        self._adapted = fast is not None
        if isinstance(estimator, LabelsAsProbabilities):
            estimator = estimator.estimator
        self._source = estimator
        self._state = fitted_state(estimator)

    def refitted(self):
        """Names of the estimator's fitted attributes that changed since it was wrapped (a
        refit in place, a warm start): the wrapper still computes the old model's
        probabilities, and must be built again. Empty for a plain function, which cannot be
        read."""
        return changed_attributes(self._state, fitted_state(self._source))

    def predict_proba(self, X):
        proba = model_output(
            self._fn(X),
            "class probabilities of shape (n_inputs, n_classes)",
            "Labels are what a classifier's predict returns: pass the classifier itself, "
            "whose predict_proba the explainers call.",
        )
        if proba.ndim != 2 or proba.shape[0] != _n_inputs(X):
            hint = ""
            columns = getattr(X, "columns", None)
            if columns is not None and proba.ndim == 2 and proba.shape[0] == len(columns):
                hint = (
                    " It returned one row per column: a text model given a DataFrame iterates "
                    "over its column names; fit and explain the text column itself (X['text'])."
                )
            if proba.ndim == 1 and proba.shape[0] == _n_inputs(X):
                hint = (
                    " It returned one number per input: for a regressor, pass "
                    "mode='regression' (or the regressor itself rather than its predict)."
                )
            raise ValueError(
                "The model must return class probabilities of shape (n_inputs, n_classes); "
                f"for {_n_inputs(X)} inputs it returned an array of shape {proba.shape}.{hint}"
            )
        if self.classes_ is None:
            if proba.shape[1] < 2:
                raise ValueError(
                    f"The model returned {proba.shape[1]} probability column; the explainers "
                    "need one column per class, at least two. For a binary model that "
                    "returns P(class 1) alone, return both columns, e.g. "
                    "np.column_stack([1 - p, p])."
                )
            self.classes_ = np.arange(proba.shape[1])
        elif proba.shape[1] != len(self.classes_):
            raise ValueError(
                f"The model returned {proba.shape[1]} probability columns for "
                f"{len(self.classes_)} classes."
            )
        if not np.isfinite(proba).all():
            raise ValueError(
                "The model returned NaN or infinite class probabilities for "
                f"{int((~np.isfinite(proba)).any(axis=1).sum())} of {len(proba)} inputs."
            )
        return proba

    @property
    def favours_large_batches(self):
        """Whether the model predicts many inputs in one call faster per input than few."""
        return bool(getattr(self._fn, "favours_large_batches", False))

    def prepare(self, X):
        """Show the model the inputs its later inputs are made of (the reference data, in
        the model's input format), where that makes later calls cheaper: a Pipeline whose
        ``ColumnTransformer`` is computed from tables (:mod:`skanchors._speed.columnwise`) learns
        the output of every value of ``X`` in one call. Predicts nothing."""
        prepare = getattr(self._fn, "prepare", None) if self._adapted else None
        if prepare is not None:
            prepare(X)

    def predict_index(self, X):
        """Index (into ``classes_``) of the most probable class of each input."""
        labels = getattr(self._fn, "labels", None) if self._adapted else None
        if labels is not None and self.classes_ is not None:
            return labels(X)
        return self.predict_proba(X).argmax(axis=1)


class RegressionModel:
    """A black-box regressor: ``predict`` returning one number per input.

    Parameters
    ----------
    estimator : object or callable
        A fitted regressor with ``predict`` (sklearn estimators and Pipelines), or a callable
        mapping a batch of inputs to an array of shape (n_inputs,).

    Notes
    -----
    Fitted ``RandomForestRegressor``, ``ExtraTreesRegressor``, ``GradientBoostingRegressor``
    and ``HistGradientBoostingRegressor`` models (alone or ending a ``Pipeline``) are
    predicted as :class:`ProbabilityModel` predicts the classifiers: the forests' trees
    traversed by the speed layer, the boosting's stages without its input validation, the histogram
    boosting's columns encoded here and its trees added up by its own predictors; the same
    numbers to the last bit as their ``predict`` (checked on the first call). Pass
    ``model.predict`` to have every call go to ``predict``. As for :class:`ProbabilityModel`,
    wrap a refitted model again.
    """

    def __init__(self, estimator):
        refuse_class(estimator, "estimator")
        fast = None
        if hasattr(estimator, "predict") and callable(estimator.predict):
            fast = fast_predictor(estimator, "predict")
            self._fn = fast or estimator.predict
        elif callable(estimator) and not isinstance(estimator, type):
            self._fn = estimator
        else:
            raise TypeError(
                "estimator must be a fitted regressor with a predict method or a callable "
                f"returning one number per input; got {type(estimator).__name__}."
            )
        self._adapted = fast is not None  # (a user's callable may have its own prepare)
        self._source = estimator
        self._state = fitted_state(estimator)

    def refitted(self):
        """See :meth:`ProbabilityModel.refitted`."""
        return changed_attributes(self._state, fitted_state(self._source))

    def prepare(self, X):
        """See :meth:`ProbabilityModel.prepare`."""
        prepare = getattr(self._fn, "prepare", None) if self._adapted else None
        if prepare is not None:
            prepare(X)

    def predict(self, X):
        values = model_output(
            self._fn(X),
            "one number per input (a regression model)",
            "For a classifier use mode='classification'.",
        )
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1 or values.shape[0] != _n_inputs(X):
            raise ValueError(
                "A regression model must return one number per input, shape (n_inputs,); "
                f"for {_n_inputs(X)} inputs it returned an array of shape {values.shape}."
            )
        if not np.isfinite(values).all():
            raise ValueError(
                "The regression model returned NaN or infinite predictions for "
                f"{int((~np.isfinite(values)).sum())} of {len(values)} inputs."
            )
        return values


def _n_inputs(X):
    """Number of inputs in a batch: rows of an array or DataFrame, items of a list."""
    shape = getattr(X, "shape", None)
    return shape[0] if shape is not None and len(shape) else len(X)


def split_thresholds(estimator):
    """``(thresholds, dtype)``: per feature, the sorted thresholds at which the trees of
    ``estimator`` split it, and the precision they compare values in; None unless it is a
    scikit-learn random forest, extra trees, gradient boosting or histogram gradient boosting
    model, classifier or regressor, whose predictions are the library's own. A categorical
    feature of histogram boosting, split by sets of categories, has None: every category is
    a value of its own.

    Such a model sees a value only through comparisons ``dtype(x) <= threshold`` (float32
    for the first three, float64 for histogram boosting): two inputs whose features fall
    between the same thresholds get the same prediction to the last bit, and the explainer
    predicts one of them (see :meth:`skanchors.samplers.TabularSampler.hash_by_splits`).

    The thresholds are read by the functions registered with :func:`register_split_reader`
    (the speed layer's :mod:`skanchors._speed.splits`); None where none reads them.
    """
    for read in _SPLIT_READERS:
        found = read(estimator)
        if found is not None:
            return found
    return None


class LabelsAsProbabilities:
    """A classifier without ``predict_proba`` (``LinearSVC``, ``RidgeClassifier``, an ``SVC``
    without probabilities) as a probability function: 1 for the class it predicts, 0 for the
    others. Anchors only compare predicted classes, so they need nothing more.

    >>> import numpy as np
    >>> from sklearn.svm import LinearSVC
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> svc = LinearSVC().fit(X, ["no", "no", "yes", "yes"])
    >>> LabelsAsProbabilities(svc)(np.array([[0.2], [2.8]])).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    def __init__(self, estimator):
        self.estimator = estimator
        self.classes_ = np.asarray(estimator.classes_)

    def __call__(self, X):
        labels = np.asarray(self.estimator.predict(X)).ravel()
        # (a lookup, not searchsorted: a third-party classifier's classes_ need not be sorted)
        index = pd.Index(self.classes_).get_indexer(labels)
        missing = index < 0
        if missing.any():  # labels equal to a class but of another type: True for 1
            equal = labels[missing, None] == self.classes_[None, :]
            index[missing] = np.where(equal.any(axis=1), equal.argmax(axis=1), -1)
            missing = index < 0
        if missing.any():
            unknown = pd.unique(labels[missing])[:5].tolist()
            raise ValueError(
                f"The classifier predicted labels {unknown} that are not in its classes_ "
                f"{self.classes_.tolist()}."
            )
        out = np.zeros((len(labels), len(self.classes_)))
        out[np.arange(len(labels)), index] = 1.0
        return out


def as_probability_model(estimator, labels_only=False):
    """Wrap ``estimator`` (see :class:`ProbabilityModel`) unless it already is one. With
    ``labels_only`` (what anchors need), a classifier with only ``predict`` and ``classes_``
    is read through :class:`LabelsAsProbabilities`."""
    if isinstance(estimator, ProbabilityModel):
        return estimator
    if (
        labels_only
        and not (hasattr(estimator, "predict_proba") or callable(estimator))
        and hasattr(estimator, "predict")
        and hasattr(estimator, "classes_")
    ):
        return ProbabilityModel(LabelsAsProbabilities(estimator), estimator.classes_)
    return ProbabilityModel(estimator)
