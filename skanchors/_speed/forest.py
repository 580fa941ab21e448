"""Random forests and extra trees predicted from their fitted trees (see
:class:`_ForestProba`)."""

from __future__ import annotations

import sys

import numpy as np

from .. import _trees
from ._base import _KIND, _CheckedProba


def _is_forest(estimator, method="predict_proba"):
    """A fitted single-output scikit-learn forest whose ``method`` is the library's own (not
    overridden) and that predicts its trees one after another: a random forest or extra trees
    classifier for ``method="predict_proba"``, regressor for ``"predict"``."""
    ensemble = sys.modules.get("sklearn.ensemble")
    if ensemble is None:  # not imported, so no forest exists (and none is imported here)
        return False
    from sklearn import tree as tree_module

    kind = _KIND[method]
    RandomForest = getattr(ensemble, f"RandomForest{kind}")
    Tree = getattr(tree_module, f"DecisionTree{kind}")
    if not isinstance(estimator, (RandomForest, getattr(ensemble, f"ExtraTrees{kind}"))):
        return False
    # both inherit one method; a subclass that overrides it is left alone
    if getattr(type(estimator), method) is not getattr(RandomForest, method):
        return False
    trees = getattr(estimator, "estimators_", None)
    if not trees or getattr(estimator, "n_outputs_", None) != 1:
        return False
    if getattr(estimator, "n_jobs", None) not in (None, 1):
        return False  # the user asked the forest to predict its trees in parallel
    return all(
        isinstance(tree, Tree) and getattr(type(tree), method) is getattr(Tree, method)
        for tree in trees
    )


# Forest calls of at least this many rows are traversed in the order of the leaves the rows
# reach in the first _SORT_TREES trees (see _ForestProba._compute).
_SORT_ROWS_FROM = 256
_SORT_TREES = 2
# Forests of at least _DECIDE_TREES trees stop traversing a row once its class is decided
# (see _ForestProba._traverse); the margin keeps the decision far above rounding.
_DECIDE_TREES = 20
_DECIDE_MARGIN = 1e-6
# Compact trees (see skanchors._trees) above this size favour large batches.
_LARGE_FOREST_BYTES = 2 << 20


class _ForestProba(_CheckedProba):
    """A forest's ``predict_proba``, its trees traversed here (see :class:`_CheckedProba`).

    A scikit-learn forest validates the input and then dispatches each tree through
    ``joblib.Parallel``; for the few hundred rows of one bandit round that fixed cost is most
    of the call, many times what traversing the trees takes. This sums what the trees'
    ``predict_proba(X, check_input=False)`` return, in the forest's order, and divides by
    their number, exactly as the forest does.
    """

    @property
    def favours_large_batches(self):
        # Traversing the trees costs less per row in large batches (each tree's nodes stay
        # in cache across the batch). Input that goes to the forest's predict_proba (sparse
        # text features, say) does not. Compact trees smaller than a core's cache gain
        # nothing from large batches, while sharing calls between rows costs thread
        # hand-overs: only compact trees larger than _LARGE_FOREST_BYTES favour them.
        if not self.engaged:
            return False
        compiled = self._compact
        if compiled:
            size = sum(part.nbytes for part in compiled[1] if isinstance(part, np.ndarray))
            return size > _LARGE_FOREST_BYTES
        return True

    _compact = None  # the trees in compact arrays for the compiled traversal (or False)

    def prepare(self, X=None):
        """Build the compact trees and compile their traversal (:mod:`skanchors._trees`),
        if numba is installed; ``X`` is not needed."""
        self._compiled()

    def _compiled(self):
        """``(kernels, compact trees)`` for the compiled traversal, or None."""
        if self._compact is None:
            self._compact = False
            found = _trees.kernels()
            if found is not None:
                columns = 1 if self.method == "predict" else len(self.estimator.classes_)
                trees = [tree.tree_ for tree in self.estimator.estimators_]
                packed = _trees.compact(trees, columns, self.estimator.n_features_in_)
                self._compact = False if packed is None else (found, packed)
        return self._compact or None

    def __getstate__(self):
        # the compact trees are rebuilt where they are needed (a joblib worker, say)
        state = self.__dict__.copy()
        state.pop("_compact", None)
        return state

    def _compute(self, X):
        compiled = self._compiled()
        if compiled is None:
            return self._traverse(X, decide=False)
        (sums, _, _), trees = compiled
        roots = trees[0]
        proba = sums(X, *trees)
        proba /= len(roots)  # the sum over the trees divided by their number, as the forest
        return proba[:, 0] if self.method == "predict" else proba

    def _labels(self, X):
        compiled = self._compiled()
        if compiled is None:
            return self._traverse(X, decide=True)
        (_, labels, _), trees = compiled
        return labels(X, *trees, _DECIDE_MARGIN)

    def _traverse(self, X, decide):
        """The forest's probabilities, or with ``decide`` each row's most probable class.

        Deciding, a row leaves the traversal at the first checkpoint (half the trees, then
        every tenth of them) where its leading class is ahead of every other by more than
        the trees still to come could close: each tree adds class probabilities in [0, 1],
        so it moves any difference between two classes by at most 1. The class is then the
        forest's own argmax (the difference is far above rounding). Most rows of a bandit
        round are far from the decision boundary, so most leave early.
        """
        forest = self.estimator
        trees = [tree.tree_ for tree in forest.estimators_]
        n_trees = len(trees)
        # a regressor's trees hold one value per node, a classifier's the class fractions
        n_classes = 1 if self.method == "predict" else len(forest.classes_)
        proba = np.zeros((X.shape[0], n_classes), dtype=np.float64)
        order, first = None, 0
        if X.shape[0] >= _SORT_ROWS_FROM and n_trees > _SORT_TREES:
            # Rows that reach the same leaves of the first trees are alike, and traversed one
            # after the other they find the other trees' nodes still in cache. Each row's
            # probabilities are summed over the trees in the same order, so the result is the
            # same to the last bit.
            leaves = [tree.apply(X) for tree in trees[:_SORT_TREES]]
            order = np.lexsort(leaves[::-1])
            X = X[order]
            for tree, leaf in zip(trees, leaves):
                proba += tree.value[leaf[order], 0, :n_classes]
            first = _SORT_TREES
        checkpoints = set()
        if decide and n_trees >= _DECIDE_TREES:
            checkpoints = {n_trees * k // 10 for k in range(5, 10)}
        labels = np.empty(X.shape[0], dtype=np.intp) if decide else None
        rows = np.arange(X.shape[0])  # the rows still traversed (deciding)
        for t in range(first, n_trees):
            if t in checkpoints:
                top = np.sort(proba, axis=1)[:, -2:] if n_classes > 2 else proba
                done = np.abs(top[:, -1] - top[:, -2]) > n_trees - t + _DECIDE_MARGIN
                if done.any():
                    labels[rows[done]] = proba[done].argmax(axis=1)
                    keep = ~done
                    rows, X, proba = rows[keep], X[keep], proba[keep]
                    if not rows.size:
                        break
            # what DecisionTreeClassifier.predict_proba(X, check_input=False) returns for one
            # output, without its check_is_fitted and feature-count checks on every tree
            proba += trees[t].predict(X)[:, :n_classes]
        proba /= n_trees
        if decide:
            labels[rows] = proba.argmax(axis=1)
            if order is not None:
                labels[order] = labels.copy()
            return labels
        if order is not None:
            proba[order] = proba.copy()
        return proba[:, 0] if self.method == "predict" else proba


class _ForestRegression(_ForestProba):
    """A forest regressor's ``predict``, its trees traversed here: the trees' predictions
    summed in the forest's order and divided by their number, as the forest does."""

    method = "predict"
    _labels = None
