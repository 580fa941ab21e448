"""A Pipeline predicted as its transforming steps (or the column-wise tables of
:mod:`skanchors._speed.columnwise`) followed by a faster last step."""

from __future__ import annotations

import sys

import numpy as np

from ..models import fast_predictor
from .columnwise import ColumnwiseHead


class _PipelineProba:
    """``pipeline.predict_proba`` as its transforming steps followed by a faster final
    step (see :class:`~skanchors._speed._base._CheckedProba`)."""

    def __init__(self, head, final):
        self.head = head
        self.final = final

    @property
    def favours_large_batches(self):
        return bool(getattr(self.final, "favours_large_batches", False))

    def __call__(self, X):
        return self.final(self.head.transform(X))

    def labels(self, X):
        return self.final.labels(self.head.transform(X))

    def prepare(self, X):
        """See :meth:`ProbabilityModel.prepare`."""
        learn = getattr(self.head, "learn", None)
        if learn is not None:
            learn(X)
        prepare = getattr(self.final, "prepare", None)
        if prepare is not None:
            prepare()


def _is_pipeline(estimator, method="predict_proba"):
    """A scikit-learn ``Pipeline`` itself (a subclass may change what ``method`` does) of more
    than one step."""
    pipeline = sys.modules.get("sklearn.pipeline")
    if pipeline is None:  # not imported, so no Pipeline exists (and none is imported here)
        return False
    return type(estimator) is pipeline.Pipeline and len(estimator) > 1


def _pipeline_predictor(pipeline, method="predict_proba"):
    """``pipeline``'s ``method`` as its transforming steps (or the column-wise tables that
    compute its first ``ColumnTransformer``) followed by its last step's fast predictor (or
    its own method, after column-wise tables); None if neither part is faster."""
    last = pipeline.steps[-1][1]
    final = fast_predictor(last, method)
    head = ColumnwiseHead.make(pipeline[:-1])
    if head is not None and final is None and callable(getattr(last, method, None)):
        final = _FinalStep(last, method)
    if final is None:
        return None
    return _PipelineProba(pipeline[:-1] if head is None else head, final)


class _FinalStep:
    """A Pipeline's last step called as the Pipeline calls it (for a faster head)."""

    favours_large_batches = False

    def __init__(self, estimator, method):
        self.estimator = estimator
        self.method = method

    def __call__(self, X):
        return getattr(self.estimator, self.method)(X)

    def labels(self, X):
        return np.asarray(self(X)).argmax(axis=1)
