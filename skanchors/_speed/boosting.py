"""Gradient boosting predicted by scikit-learn's own loop over the stages, or by the compiled
one of :mod:`skanchors._trees`, without the estimator's input validation (see
:class:`_BoostingProba`)."""

from __future__ import annotations

import numpy as np

from .. import _trees
from ._base import _KIND, _CheckedProba, _own_ensemble


def _predict_stages():
    """scikit-learn's own loop adding the boosting stages' tree predictions, or None where
    this scikit-learn does not have it (it lives in a private module)."""
    try:
        from sklearn.ensemble._gradient_boosting import predict_stages
    except ImportError:
        return None
    return predict_stages


def _is_boosting(estimator, method="predict_proba"):
    """A fitted scikit-learn gradient boosting model (``GradientBoostingClassifier`` for
    ``method="predict_proba"``, ``GradientBoostingRegressor`` for ``"predict"``) whose
    prediction path is the library's own and whose initial raw prediction is the same for
    every row (``init`` left at its default, a constant, or ``"zero"``)."""
    kind = _KIND[method]
    methods = (method, "_raw_predict", "_raw_predict_init")
    if method == "predict_proba":
        methods += ("decision_function",)
    if not _own_ensemble(estimator, f"GradientBoosting{kind}", methods):
        return False
    from sklearn import dummy

    init = getattr(estimator, "init_", None)
    constant = (isinstance(init, str) and init == "zero") or (
        type(init) is getattr(dummy, f"Dummy{kind}")
        and init.strategy in ("prior", "mean", "median", "quantile")
    )
    stages = getattr(estimator, "estimators_", None)
    return (
        constant
        and isinstance(stages, np.ndarray)
        and stages.ndim == 2
        and stages.size > 0
        and hasattr(estimator, "_loss")
        and _predict_stages() is not None
    )


class _BoostingProba(_CheckedProba):
    """A gradient boosting classifier's ``predict_proba`` without its input validation (see
    :class:`_CheckedProba`).

    ``GradientBoostingClassifier.predict_proba`` validates the input twice (once itself, once
    for its initial estimator, the class prior) before scikit-learn's own loop over the stages
    adds up the trees: for the hundred rows of a bandit round, the validation costs several
    times what the trees do. This runs that same loop from the prior's raw
    prediction, computed once (it is the same for every row), and the estimator's own link
    from raw predictions to probabilities.
    """

    _complete = None  # the stages as complete trees for the compiled traversal (or False)
    _binary = None  # whether labels compare the two probabilities directly (see _labels)

    def __init__(self, estimator):
        super().__init__(estimator)
        self._init = None  # raw prediction of the initial estimator, one row

    def prepare(self, X=None):
        """Lay the stages out for the compiled traversal (:func:`skanchors._trees.complete`)
        and compile it, if numba is installed; ``X`` is not needed."""
        self._compiled()

    def _compiled(self):
        """``(boosting_add, complete trees)`` for the compiled traversal, or None.

        scikit-learn's loop walks each row down each tree by branches that go either way
        at random, and waits for each misprediction; the compiled one moves all rows down a
        tree one level at a time without branching, and adds the same values in the same
        order: the same sums.
        """
        if self._complete is None:
            self._complete = False
            found = _trees.kernels()
            if found is not None:
                stages = self.estimator.estimators_
                n_stages, n_columns = stages.shape
                # stage by stage, as scikit-learn adds them
                trees = [stages[i, k].tree_ for i in range(n_stages) for k in range(n_columns)]
                columns = np.tile(np.arange(n_columns), n_stages)
                try:
                    packed = _trees.complete(trees, columns, self.estimator.learning_rate)
                except AttributeError:  # trees of another layout: scikit-learn's own loop
                    packed = None
                self._complete = False if packed is None else (found[2], packed)
        return self._complete or None

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_complete", None)  # rebuilt where it is needed
        return state

    def _raw(self, X):
        est = self.estimator
        if self._init is None:
            self._init = np.array(est._raw_predict_init(X[:1]), dtype=np.float64)
        raw = np.empty((X.shape[0], self._init.shape[1]))
        raw[:] = self._init
        compiled = self._compiled()
        if compiled is None:
            _predict_stages()(est.estimators_, X, est.learning_rate, raw)
        else:
            add, packed = compiled
            add(X, *packed, raw)
        return raw

    def _compute(self, X):
        return self._output(self._raw(X))

    def _labels(self, X):
        """Two classes with the log loss: the second class wherever its probability
        ``expit(raw)`` exceeds the first's ``1 - expit(raw)``, the comparison the argmax of
        ``predict_proba`` makes, without building the probability matrix (a large part of
        the model's time in a bandit round, which wants labels only). The first call checks
        it against that argmax; other losses and more classes take the argmax."""
        raw = self._raw(X)
        binary = self._binary
        if binary is None:
            loss = self.estimator._loss
            binary = raw.shape[1] == 1 and type(loss).__name__ == "HalfBinomialLoss"
            if binary:
                second = loss.link.inverse(raw.ravel())
                binary = np.array_equal(second > 1.0 - second, self._output(raw).argmax(axis=1))
            self._binary = binary
        if binary:
            second = self.estimator._loss.link.inverse(raw.ravel())
            return (second > 1.0 - second).astype(np.intp)
        return self._output(raw).argmax(axis=1)

    def _output(self, raw):
        if raw.shape[1] == 1:  # what decision_function returns for two classes
            raw = raw.ravel()
        return self.estimator._loss.predict_proba(raw)


class _BoostingRegression(_BoostingProba):
    """A gradient boosting regressor's ``predict`` without its input validation (see
    :class:`_BoostingProba`): its raw predictions, as its ``predict`` returns them."""

    method = "predict"
    _labels = None  # a regressor has no classes

    def _output(self, raw):
        return raw.ravel()
