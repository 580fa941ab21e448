"""Adapters that turn any classifier into a ``predict_proba`` function.

The explainer only ever *calls* the model: it is never fitted, cloned or modified.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from . import _trees
from ._columnwise import ColumnwiseHead
from ._refit import changed_attributes, fitted_state
from ._validation import model_output, refuse_class

__all__ = [
    "ProbabilityModel",
    "RegressionModel",
    "LabelsAsProbabilities",
    "as_probability_model",
    "split_thresholds",
]


# The scikit-learn model kind whose prediction method each adapter computes.
_KIND = {"predict_proba": "Classifier", "predict": "Regressor"}


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


def _predict_stages():
    """scikit-learn's own loop adding the boosting stages' tree predictions, or None where
    this scikit-learn does not have it (it lives in a private module)."""
    try:
        from sklearn.ensemble._gradient_boosting import predict_stages
    except ImportError:
        return None
    return predict_stages


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


class _ForestProba(_CheckedProba):
    """A forest's ``predict_proba``, its trees traversed here (see :class:`_CheckedProba`).

    A scikit-learn forest validates the input and then dispatches each tree through
    ``joblib.Parallel``; for the few hundred rows of one bandit round that fixed cost is most
    of the call (about 10 ms for 100 trees, against well under 1 ms to traverse them). This
    sums what the trees' ``predict_proba(X, check_input=False)`` return, in the forest's
    order, and divides by their number, exactly as the forest does.
    """

    @property
    def favours_large_batches(self):
        # Traversing the trees costs less per row in large batches (each tree's nodes stay
        # in cache across the batch): 0.075 ms per row for 100 Adult rows, 0.026 for 1,000.
        # Input that goes to the forest's predict_proba (sparse text features, say) does not.
        # Compact trees smaller than a core's cache gain nothing from large batches, and
        # sharing calls between rows costs thread hand-overs: 20 Titanic rows in one explain
        # call took 0.35 s shared against 0.22 s not (0.4 MB of trees); Adult's 10.7 MB,
        # 1.17 s against 1.28 s.
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
        forest's own argmax (the difference is far above rounding). On the benchmark's Adult
        forest (100 trees of about 6,700 nodes) the recorded batches of 20 searches took
        0.86 times the time of the full traversal; a Titanic forest (270 nodes) 0.91 times.
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


class _BoostingProba(_CheckedProba):
    """A gradient boosting classifier's ``predict_proba`` without its input validation (see
    :class:`_CheckedProba`).

    ``GradientBoostingClassifier.predict_proba`` validates the input twice (once itself, once
    for its initial estimator, the class prior) before scikit-learn's own loop over the stages
    adds up the trees: for the hundred rows of a bandit round, 0.58 ms per call of which the
    trees take 0.13 (Titanic, 100 trees). This runs that same loop from the prior's raw
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
        tree one level at a time without branching: 2.4-3.0 times as fast for 80-600 rows
        of the benchmark's Titanic and Adult models (100 stages of depth 3), the same sums.
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
                except Exception:  # noqa: BLE001 (trees not as expected: scikit-learn's loop)
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
        ``predict_proba`` makes, without building the probability matrix (a sixth of the
        model's time in a bandit round on Titanic). The first call checks it against that
        argmax; other losses and more classes take the argmax."""
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


class _HistBoostingProba(_CheckedProba):
    """A histogram gradient boosting classifier's ``predict_proba`` without its preprocessing
    (see :class:`_CheckedProba`).

    On a DataFrame with categorical columns, ``HistGradientBoostingClassifier.predict_proba``
    runs a ``ColumnTransformer`` (an ``OrdinalEncoder`` for the categories, a validation for
    the numbers) before its trees: 2.6 ms for one raw Titanic row against 0.65 ms this way
    (``bench/results_models.md``). This encodes the columns as that transformer does (a
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


class _PipelineProba:
    """``pipeline.predict_proba`` as its transforming steps followed by a faster final
    step (see :class:`_CheckedProba`)."""

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


def _fast_predict_proba(estimator, method="predict_proba"):
    """A function computing exactly ``estimator.predict_proba`` (or ``predict``, for
    regressors) with less overhead per call, or None when there is none for this kind of
    estimator."""
    if method == "predict_proba":
        if _is_forest(estimator):
            return _ForestProba(estimator)
        if _is_boosting(estimator):
            return _BoostingProba(estimator)
        if _is_hist_boosting(estimator, "predict_proba"):
            return _HistBoostingProba(estimator)
    elif _is_forest(estimator, "predict"):
        return _ForestRegression(estimator)
    elif _is_boosting(estimator, "predict"):
        return _BoostingRegression(estimator)
    elif _is_hist_boosting(estimator, "predict"):
        return _HistBoostingRegression(estimator)
    pipeline = sys.modules.get("sklearn.pipeline")
    # only a Pipeline itself: a subclass may change what predict_proba does
    if pipeline is not None and type(estimator) is pipeline.Pipeline and len(estimator) > 1:
        last = estimator.steps[-1][1]
        final = _fast_predict_proba(last, method)
        head = ColumnwiseHead.make(estimator[:-1])
        if head is not None and final is None and callable(getattr(last, method, None)):
            final = _FinalStep(last, method)
        if final is not None:
            return _PipelineProba(estimator[:-1] if head is None else head, final)
    return None


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
    ``Pipeline``, are evaluated here rather than through their ``predict_proba``, with the
    same probabilities to the last bit and without its fixed cost per call, which is most of
    the cost of the few hundred rows an anchor search predicts at a time:

    - ``RandomForestClassifier`` and ``ExtraTreesClassifier`` (single output, ``n_jobs`` None
      or 1, ``predict_proba`` not overridden) are traversed tree by tree, saving about 10 ms
      per call for 100 trees. Batches of 256 rows or more are traversed grouped by the leaves
      their rows reach in the first two trees (alike rows one after the other find the
      trees' nodes in cache), each row summed over the trees in the same order as before.
      With numba installed (the ``fast`` extra), compiled code traverses a compact copy of
      the trees instead (:mod:`skanchors._trees`): Adult explanations 1.5-1.8 times as fast
      again.
    - ``GradientBoostingClassifier`` (``init`` left at the class prior or ``"zero"``, its
      prediction methods not overridden) runs scikit-learn's own loop over its stages without
      validating the input twice first, saving about 0.4 ms per call. With numba installed,
      compiled code adds up the stages instead (:func:`skanchors._trees.complete`): 2.4-3.0
      times as fast as that loop for 80-600 rows of 100 stages of depth 3.
    - ``HistGradientBoostingClassifier`` (its prediction methods not overridden) gets its
      categorical columns encoded here as its own ``ColumnTransformer`` would, and its trees
      added up by its own predictors: 2.4 ms instead of 8.0 for one raw Titanic row.

    A ``Pipeline`` whose first step is a ``ColumnTransformer`` of column-wise parts (see
    :mod:`skanchors._columnwise`) gets that transformer's output assembled from tables of
    each value's output, which :meth:`prepare` learns from the reference data, then its other
    transforming steps, then its last step's fast path above or the last step's own method:
    0.47 ms instead of 6.2 for one raw Titanic row through the user guide's one-hot/imputer
    pipeline (its first two calls are checked against the transformer).

    These paths read scikit-learn internals. The first call checks the two against each
    other and keeps to ``predict_proba`` if they differ, or if the internals are not as
    expected (another scikit-learn version); input the model would reject, warn about or
    convert itself goes to ``predict_proba``. Pass
    ``model.predict_proba`` instead of the model to have every call go to ``predict_proba``.
    They read the estimator as it was fitted when first called: refit it (or warm-start
    more trees) and wrap it again, as :meth:`AnchorExplainer.fit` does (a wrapper kept from
    before the refit returns the old model's probabilities). :meth:`refitted` tells: it
    compares a fingerprint of the estimator's fitted attributes taken when it was wrapped
    (:func:`skanchors._refit.fitted_state`) with the current one; the explainers check it
    before they use the model.
    """

    def __init__(self, estimator, classes=None):
        refuse_class(estimator, "estimator")
        if hasattr(estimator, "predict_proba") and callable(estimator.predict_proba):
            self._fn = _fast_predict_proba(estimator) or estimator.predict_proba
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
        # whether _fn is an adapter of this module, whose ``labels`` give the classes alone
        # (a user's callable may have an attribute of that name meaning something else)
        self._adapted = isinstance(self._fn, (_CheckedProba, _PipelineProba))
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
        ``ColumnTransformer`` is computed from tables (:mod:`skanchors._columnwise`) learns
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
    traversed here, the boosting's stages without its input validation, the histogram
    boosting's columns encoded here and its trees added up by its own predictors; the same
    numbers to the last bit as their ``predict`` (checked on the first call). Pass
    ``model.predict`` to have every call go to ``predict``. As for :class:`ProbabilityModel`,
    wrap a refitted model again.
    """

    def __init__(self, estimator):
        refuse_class(estimator, "estimator")
        if hasattr(estimator, "predict") and callable(estimator.predict):
            self._fn = _fast_predict_proba(estimator, "predict") or estimator.predict
        elif callable(estimator) and not isinstance(estimator, type):
            self._fn = estimator
        else:
            raise TypeError(
                "estimator must be a fitted regressor with a predict method or a callable "
                f"returning one number per input; got {type(estimator).__name__}."
            )
        self._source = estimator
        self._state = fitted_state(estimator)

    def refitted(self):
        """See :meth:`ProbabilityModel.refitted`."""
        return changed_attributes(self._state, fitted_state(self._source))

    def prepare(self, X):
        """See :meth:`ProbabilityModel.prepare`."""
        if isinstance(self._fn, (_PipelineProba, _ForestProba, _BoostingProba)):
            self._fn.prepare(X)

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
    """
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


# --------------------------------------------------------------------------- Hugging Face
# (Imports here rather than at the top: this section was added after the adapters above.)
import os  # noqa: E402
import threading  # noqa: E402
from collections import OrderedDict  # noqa: E402
from numbers import Integral  # noqa: E402

from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.utils._param_validation import Interval  # noqa: E402

__all__ += ["HFTextClassifier"]


def _is_name(value):
    return isinstance(value, (str, os.PathLike))


# Models loaded from a name or path, shared within the process: joblib sends each chunk of
# work a fresh (weightless) copy of a sampler or classifier, and this keeps the weights from
# being read again for every chunk. Keyed by kind, name, device and the files' modification
# times (a model saved again to the same folder is reloaded). Models and tokenizers are
# counted apart: of more than _PRETRAINED_MAX of either, the least recently used is dropped
# (a classifier, its tokenizer, a masked language model and its tokenizer all stay).
_PRETRAINED = OrderedDict()
_PRETRAINED_MAX = 2
_PRETRAINED_LOCK = threading.Lock()


def _stamp(name):
    if not os.path.isdir(name):
        return None
    return tuple(
        sorted(
            (entry.name, entry.stat().st_mtime_ns, entry.stat().st_size)
            for entry in os.scandir(name)
            if entry.is_file()
        )
    )


def check_pretrained_source(name, argument):
    """Refuse ``name`` when it is a local path (absolute, starting with ``.`` or ``~``, or
    with more than one ``/``: a Hub name is ``name`` or ``namespace/name``) to a folder that
    does not exist, naming ``argument``; Hugging Face would report it as a malformed Hub
    name."""
    text = os.fspath(name)
    pathlike = (
        os.path.isabs(text) or text.startswith((".", "~")) or text.count("/") > 1 or "\\" in text
    )
    if pathlike and not os.path.exists(os.path.expanduser(text)):
        raise FileNotFoundError(
            f"{argument}={text!r}: no such folder. Pass the folder of a model saved with "
            "save_pretrained, or a Hugging Face Hub name such as 'namespace/model-name'."
        )


def _load_pretrained(kind, name, device, load):
    """``load()`` once per (kind, name, device) and process; later calls share its result."""
    key = (kind, os.fspath(name), str(device), _stamp(os.fspath(name)))
    with _PRETRAINED_LOCK:
        hit = _PRETRAINED.get(key)
        if hit is not None:
            _PRETRAINED.move_to_end(key)
            return hit
    value = load()
    with _PRETRAINED_LOCK:
        _PRETRAINED[key] = value
        same = [k for k in _PRETRAINED if (k[0] == "tokenizer") == (kind == "tokenizer")]
        for old in same[: max(len(same) - _PRETRAINED_MAX, 0)]:  # least recently used first
            del _PRETRAINED[old]
    return value


def _token_positions(model):
    """How many tokens a Hugging Face model can place, or None if it does not say: its
    ``max_position_embeddings``, less the positions a RoBERTa-style model reserves below its
    first one (its embeddings' ``padding_idx`` + 1: 514 - 2 = 512 for roberta-base)."""
    limit = None
    max_pos = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if isinstance(max_pos, int) and max_pos > 0:
        limit = max_pos
    embeddings = getattr(getattr(model, "base_model", None), "embeddings", None)
    n_table = getattr(getattr(embeddings, "position_embeddings", None), "num_embeddings", None)
    if isinstance(n_table, int):
        pad = getattr(embeddings, "padding_idx", None)
        usable = n_table - (pad + 1 if isinstance(pad, int) else 0)
        limit = usable if limit is None else min(limit, usable)
    return limit


def _model_max_length(tokenizer, model, requested, use_tokenizer=True):
    """``requested`` tokens, capped at the model's positions and (``use_tokenizer``) at the
    tokenizer's ``model_max_length`` when it sets one."""
    limit = requested
    tok_max = getattr(tokenizer, "model_max_length", None)
    if use_tokenizer and tok_max is not None and tok_max < 1_000_000:
        limit = min(limit, int(tok_max))
    positions = _token_positions(model)
    return limit if positions is None else min(limit, positions)


class HFTextClassifier(ClassifierMixin, BaseEstimator):
    """A Hugging Face sequence-classification model as a scikit-learn classifier of texts.

    The model is pre-trained: ``fit`` only loads it (it never trains), and the classifier is
    usable without ``fit``: the model and tokenizer are loaded on first use. torch and
    transformers are imported only then (``pip install 'skanchors[text]'``).

    Parameters
    ----------
    model : str, path or transformers.PreTrainedModel
        Hub name or local folder (loaded with ``AutoModelForSequenceClassification``), or an
        already loaded model (used as is, put in evaluation mode).
    tokenizer : str, path, tokenizer object or None, default=None
        ``None`` loads the tokenizer from ``model`` (from ``model.name_or_path`` for a loaded
        model).
    batch_size : int >= 1, default=32
        Texts per forward pass. Without a pad token in the tokenizer or a ``pad_token_id``
        in the model's config (GPT-2's), a pass takes texts of equal token length only, and
        one text while the config has no ``pad_token_id`` (set ``model.config.pad_token_id``,
        e.g. to the EOS id, for batches).
    max_length : int >= 1 or None, default=None
        Texts are truncated to this many tokens, capped at the model's positions (its
        ``max_position_embeddings``, less the two a RoBERTa-style model reserves). ``None``:
        the tokenizer's ``model_max_length``, capped at 512 and at those positions.
    device : str, torch.device or None, default=None
        ``None``: CUDA when available, else CPU, for a model loaded from a name; a loaded model
        stays where it is. Otherwise the model is moved there.
    cache_size : int >= 0, default=100_000
        Probabilities of up to this many distinct texts are kept (least recently used evicted),
        so predicting the same perturbations again costs no model call. 0 disables the cache.

    Attributes
    ----------
    classes_ : ndarray
        Class labels from ``config.id2label``, in id order (column order of
        :meth:`predict_proba`). Reading it loads the model.

    Notes
    -----
    Pickling (also how joblib sends the classifier to worker processes) drops the cache and,
    when ``model`` (respectively ``tokenizer``) was given as a name or path, the loaded model
    (tokenizer): the copy reloads it from that name on first use, so the pickle is light. A
    model or tokenizer given as an object is pickled with the classifier.

    ``sklearn.base.clone`` (used by ``GridSearchCV``) returns a classifier that *shares* the
    loaded model and tokenizer instead of copying them. Within a process, classifiers that load
    the same model name on the same device share one copy of the weights (the two most recently
    used models, and apart from them two tokenizers, are kept).

    Examples
    --------
    With a fine-tuned model from the hub (downloaded on first use; outputs are illustrative):

    >>> clf = HFTextClassifier("distilbert-base-uncased-finetuned-sst-2-english")  # doctest: +SKIP
    >>> clf.classes_  # doctest: +SKIP
    array(['NEGATIVE', 'POSITIVE'], dtype='<U8')
    >>> clf.predict_proba(["a great movie", "a dull movie"]).round(2)  # doctest: +SKIP
    array([[0.  , 1.  ],
           [1.  , 0.  ]])
    """

    _parameter_constraints: dict = {
        "model": "no_validation",
        "tokenizer": "no_validation",
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_length": [Interval(Integral, 1, None, closed="left"), None],
        "device": "no_validation",
        "cache_size": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        model,
        *,
        tokenizer=None,
        batch_size=32,
        max_length=None,
        device=None,
        cache_size=100_000,
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.cache_size = cache_size

    def __sklearn_is_fitted__(self):
        return True  # pre-trained: nothing to fit

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        return tags

    def __sklearn_clone__(self):
        clone = type(self)(**self.get_params(deep=False))
        for name in ("_model", "_tokenizer", "_classes", "_device", "_loaded"):
            if name in self.__dict__:
                setattr(clone, name, self.__dict__[name])
        return clone

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_cache", None)
        state.pop("_cache_key", None)
        if _is_name(self.model):
            for name in ("_model", "_device", "_loaded"):
                state.pop(name, None)
        if (_is_name(self.model) and self.tokenizer is None) or _is_name(self.tokenizer):
            state.pop("_tokenizer", None)
            state.pop("_loaded", None)
        return state

    # ------------------------------------------------------------------ loading
    def _load(self):
        """Load (or reuse) the model and tokenizer matching the current parameters."""
        key = (
            os.fspath(self.model) if _is_name(self.model) else id(self.model),
            os.fspath(self.tokenizer) if _is_name(self.tokenizer) else id(self.tokenizer),
            str(self.device),
        )
        if self.__dict__.get("_loaded") == key and self.__dict__.get("_model") is not None:
            return
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "HFTextClassifier needs torch and transformers: pip install 'skanchors[text]'."
            ) from exc
        if _is_name(self.model):
            check_pretrained_source(self.model, "model")
            if self.device is not None:
                device = torch.device(self.device)
            else:
                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = _load_pretrained(
                "sequence-classification",
                self.model,
                device,
                lambda: (
                    AutoModelForSequenceClassification.from_pretrained(os.fspath(self.model))
                    .to(device)
                    .eval()
                ),
            )
        else:
            model = self.model
            if not (hasattr(model, "config") and callable(model)):
                raise TypeError(
                    "model must be a hub name, a path or a loaded transformers model; got "
                    f"{type(model).__name__}."
                )
            if self.device is not None:
                model = model.to(torch.device(self.device))
            try:
                device = next(model.parameters()).device
            except (StopIteration, AttributeError):
                device = torch.device("cpu")
        model.eval()
        if self.tokenizer is None:
            source = os.fspath(self.model) if _is_name(self.model) else model.name_or_path
            if not source:
                raise ValueError(
                    "Pass tokenizer=...: the model was given as an object without a "
                    "name_or_path to load its tokenizer from."
                )
            tokenizer = _load_pretrained(
                "tokenizer", source, None, lambda: AutoTokenizer.from_pretrained(source)
            )
        elif _is_name(self.tokenizer):
            check_pretrained_source(self.tokenizer, "tokenizer")
            source = os.fspath(self.tokenizer)
            tokenizer = _load_pretrained(
                "tokenizer", source, None, lambda: AutoTokenizer.from_pretrained(source)
            )
        else:
            tokenizer = self.tokenizer
        config = model.config
        id2label = {int(k): v for k, v in getattr(config, "id2label", {}).items()}
        n = int(getattr(config, "num_labels", len(id2label)))
        problem = getattr(config, "problem_type", None)
        if n < 2 or problem in ("regression", "multi_label_classification"):
            # a softmax over one logit is 1.0 for every text; over independent sigmoid
            # logits it is not the model's probability of any label
            what = (
                "one output (a regression head or a single sigmoid logit)"
                if n < 2
                else (f"problem_type={problem!r}")
            )
            raise ValueError(
                f"HFTextClassifier explains single-label classifiers (a softmax over at least 2 "
                f"labels); the model has {what}. Explain it through a function that maps a "
                "list of texts to the probabilities you mean, e.g. [1 - p, p] for a sigmoid."
            )
        labels = [id2label.get(i, i) for i in range(n)]
        self._model, self._tokenizer, self._device = model, tokenizer, device
        self._classes = np.asarray(labels)
        self._loaded = key

    def _max_length(self):
        limit = 512 if self.max_length is None else int(self.max_length)
        return _model_max_length(self._tokenizer, self._model, limit, self.max_length is None)

    def fit(self, X=None, y=None):
        """Load the model and tokenizer (no training).

        Parameters
        ----------
        X, y : ignored
            Accepted for compatibility with scikit-learn.

        Returns
        -------
        self
        """
        self._validate_params()
        self._load()
        return self

    @property
    def classes_(self):
        self._load()
        return self._classes

    # --------------------------------------------------------------- predicting
    def predict_proba(self, X):
        """Class probabilities (softmax of the logits) in the order of ``classes_``.

        Parameters
        ----------
        X : list, tuple, 1-d array or Series of str
            Texts to classify (a single string is refused).

        Returns
        -------
        proba : ndarray of shape (n_texts, n_classes)
        """
        from .samplers.text import check_documents

        texts = check_documents(X, "X", allow_wordless=True, allow_empty=True)
        self._validate_params()
        self._load()
        n_classes = len(self._classes)
        out = np.empty((len(texts), n_classes), dtype=float)
        key = (self._loaded, self._max_length())
        if self.__dict__.get("_cache_key") != key:
            self._cache, self._cache_key = OrderedDict(), key
        cache = self._cache
        todo = {}
        for i, text in enumerate(texts):
            hit = cache.get(text) if self.cache_size else None
            if hit is None:
                todo.setdefault(text, []).append(i)
            else:
                cache.move_to_end(text)
                out[i] = hit
        if todo:
            unique = list(todo)
            proba = self._forward(unique)
            for text, row in zip(unique, proba):
                out[todo[text]] = row
                if self.cache_size:
                    cache[text] = row
            while len(cache) > self.cache_size:
                cache.popitem(last=False)
        return out

    def _batches(self, texts):
        """``(indices, encoding)`` per model call. Similar lengths share a batch (less
        padding); without a pad token in the tokenizer or a ``pad_token_id`` in the model's
        config (GPT-2's), texts of equal token length share a batch, which needs no padding,
        and without a ``pad_token_id`` one text goes at a time (such heads refuse batches of
        more than one text)."""
        max_length = self._max_length()
        tokenizer = self._tokenizer
        # GPT-2 style heads find each text's last token by the config's pad_token_id and
        # refuse a batch without one, whatever the tokenizer pads with
        pad_id = getattr(self._model.config, "pad_token_id", None)
        padded = tokenizer.pad_token is not None and pad_id is not None
        size = self.batch_size
        if padded:
            groups = [sorted(range(len(texts)), key=lambda i: len(texts[i]))]
        else:
            ids = tokenizer(list(texts), truncation=True, max_length=max_length)["input_ids"]
            by_length = {}
            for i, row in enumerate(ids):
                by_length.setdefault(len(row), []).append(i)
            groups = [by_length[n] for n in sorted(by_length)]
            if pad_id is None:
                size = 1
        for members in groups:
            for b in range(0, len(members), size):
                idx = members[b : b + size]
                batch = [texts[i] for i in idx]
                yield idx, tokenizer(
                    batch, padding=padded, truncation=True, max_length=max_length,
                    return_tensors="pt",
                )  # fmt: skip

    def _forward(self, texts):
        import torch

        out = np.empty((len(texts), len(self._classes)), dtype=float)
        for idx, enc in self._batches(texts):
            enc = {k: v.to(self._device) for k, v in enc.items()}
            with torch.inference_mode():
                logits = self._model(**enc).logits
                proba = torch.softmax(logits.float(), dim=-1)
            out[idx] = proba.cpu().numpy().astype(float)
        return out

    def predict(self, X):
        """Most probable class label of each text."""
        return self.classes_[self.predict_proba(X).argmax(axis=1)]
