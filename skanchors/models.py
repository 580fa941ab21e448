"""Adapters that turn any classifier into a ``predict_proba`` function.

The explainer only ever *calls* the model: it is never fitted, cloned or modified.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ProbabilityModel", "as_probability_model"]


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
    """

    def __init__(self, estimator, classes=None):
        if hasattr(estimator, "predict_proba") and callable(estimator.predict_proba):
            self._fn = estimator.predict_proba
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
        self.classes_ = None if classes is None else np.asarray(classes)

    def predict_proba(self, X):
        proba = np.asarray(self._fn(X), dtype=float)
        if proba.ndim != 2:
            raise ValueError(
                "The model must return class probabilities of shape (n_inputs, n_classes); "
                f"it returned an array of shape {proba.shape}."
            )
        if self.classes_ is None:
            self.classes_ = np.arange(proba.shape[1])
        elif proba.shape[1] != len(self.classes_):
            raise ValueError(
                f"The model returned {proba.shape[1]} probability columns for "
                f"{len(self.classes_)} classes."
            )
        return proba

    def predict_index(self, X):
        """Index (into ``classes_``) of the most probable class of each input."""
        return self.predict_proba(X).argmax(axis=1)


def as_probability_model(estimator):
    """Wrap ``estimator`` (see :class:`ProbabilityModel`) unless it already is one."""
    if isinstance(estimator, ProbabilityModel):
        return estimator
    return ProbabilityModel(estimator)
