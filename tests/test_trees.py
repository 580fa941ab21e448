"""The compiled forest traversal (:mod:`skanchors._trees`, the ``fast`` extra): compact trees
that give scikit-learn's predictions to the last bit."""

import pickle

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

from skanchors import _trees
from skanchors.models import ProbabilityModel, RegressionModel

kernels = _trees.kernels()
pytestmark = pytest.mark.skipif(kernels is None, reason="numba (the fast extra) is not installed")


def _sums(forest, X):
    columns = len(getattr(forest, "classes_", [0]))
    packed = _trees.compact([t.tree_ for t in forest.estimators_], columns, forest.n_features_in_)
    return kernels[0](np.ascontiguousarray(X, dtype=np.float32), *packed)


def test_thresholds_between_two_float32_values_split_as_in_scikit_learn():
    # Two neighbouring float32 values (far enough apart for scikit-learn to split them): the
    # tree's float64 threshold is their midpoint, which no float32 equals (rounded to nearest,
    # it would be one of them). Stored as the float32 below it, the comparison must not
    # change: the lower value goes left, the upper one right, and so do their neighbours.
    low = np.float32(1000.5)
    high = np.nextafter(low, np.float32(np.inf))
    X = np.array([[low], [high]] * 20, dtype=np.float32)
    y = np.array([0, 1] * 20)
    forest = RandomForestClassifier(n_estimators=3, bootstrap=False, random_state=0).fit(X, y)
    threshold = forest.estimators_[0].tree_.threshold[0]
    assert low < threshold < high and np.float32(threshold) != threshold
    below, above = np.nextafter(low, np.float32(0)), np.nextafter(high, np.float32(np.inf))
    probe = np.array([[below], [low], [high], [above]], dtype=np.float32)
    expected = forest.predict_proba(probe)
    assert expected[:, 1].tolist() == [0.0, 0.0, 1.0, 1.0]
    assert np.array_equal(_sums(forest, probe) / 3, expected)


def test_trees_grown_best_first_are_laid_out_depth_first():
    # max_leaf_nodes grows trees best first: a left child is not the node after its parent
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=10, max_leaf_nodes=40, random_state=0).fit(X, y)
    tree = forest.estimators_[0].tree_
    split = tree.children_left >= 0
    assert not (tree.children_left[split] == np.flatnonzero(split) + 1).all()
    order = _trees._depth_first(tree)
    assert sorted(order) == list(range(tree.node_count)) and order[0] == 0
    X_new = rng.normal(size=(300, 6))
    assert np.array_equal(_sums(forest, X_new) / 10, forest.predict_proba(X_new))
    model = ProbabilityModel(forest)
    for batch in (X_new, X_new[:1]):
        assert np.array_equal(model.predict_proba(batch), forest.predict_proba(batch))
        assert np.array_equal(model.predict_index(batch), forest.predict(batch))
    assert model._fn.verified is True and model._fn._compact


def test_trees_that_do_not_fit_eight_bytes_a_node_keep_to_scikit_learn():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    trees = [t.tree_ for t in forest.estimators_]
    assert _trees.compact(trees, 2, 4) is not None
    # 31 bits for the feature leave none for the distance to a right child
    assert _trees.compact(trees, 2, 2**30) is None
    model = ProbabilityModel(forest)
    model._fn.estimator.n_features_in_ = 2**30  # (read only by the packing)
    try:
        assert model._fn._compiled() is None
    finally:
        forest.n_features_in_ = 4
    assert np.array_equal(model.predict_proba(X[:20]), forest.predict_proba(X[:20]))
    assert model._fn.verified is True


def test_leaf_values_held_in_the_node_or_read_from_the_values_give_the_same_sums():
    # Repeated rows with different labels leave impure leaves: a fraction like 1/3 or 0.1 is
    # no float32, so its leaf points to its row of values (NaN in the node); 0.5 or 1 is held
    # in the node itself. Both kinds in one forest, and both must add up to the last bit.
    rng = np.random.default_rng(3)
    X = np.repeat(rng.integers(0, 4, size=(60, 3)).astype(float), 10, axis=0)
    y = rng.integers(0, 2, size=len(X))
    for forest in (
        RandomForestClassifier(n_estimators=30, random_state=0).fit(X, y),
        RandomForestRegressor(n_estimators=30, random_state=0).fit(X, y * 3.0),
    ):
        columns = len(getattr(forest, "classes_", [0]))
        roots, nodes, thresholds, values, bits = _trees.compact(
            [t.tree_ for t in forest.estimators_], columns, 3
        )
        held = thresholds[(nodes[:, 1] & ((1 << bits) - 1)) == (1 << bits) - 1, 0]
        assert np.isnan(held).any() and np.isfinite(held).any()
        X_new = np.vstack([X[::7], rng.uniform(-1, 5, size=(200, 3))])
        expected = forest.predict_proba(X_new) if columns == 2 else forest.predict(X_new)[:, None]
        assert np.array_equal(_sums(forest, X_new) / 30, expected)
        if columns == 2:
            parts = (roots, nodes, thresholds, values, bits)
            labels = kernels[1](X_new.astype(np.float32), *parts, 1e-6)
            assert np.array_equal(labels, forest.predict(X_new))


def test_a_decided_row_does_not_reach_the_trees_after_its_decision():
    # 40 trees that all vote for each row's true class: after 21 of them a row leads by 21,
    # which the 19 left cannot close, so the traversal stops there. The leaves of trees 21-39
    # are then rewritten to vote 1e6 for another class: the sums see them, the labels must not.
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 100)
    X = rng.normal(size=(300, 4)) + 10.0 * y[:, None]
    forest = RandomForestClassifier(n_estimators=40, random_state=0).fit(X, y)
    X_new = rng.normal(size=(90, 4)) + 10.0 * (np.arange(90) % 3)[:, None]
    X_new = X_new.astype(np.float32)
    roots, nodes, thresholds, values, bits = _trees.compact(
        [t.tree_ for t in forest.estimators_], 3, 4
    )
    mask = (1 << bits) - 1
    late = np.arange(roots[21], len(nodes))
    late_leaves = nodes[late[(nodes[late, 1] & mask) == mask], 1] >> bits
    values[late_leaves] = [1e6, 0.0, 0.0]
    values[late_leaves[::2]] = [0.0, 1e6, 0.0]
    parts = (roots, nodes, thresholds, values, bits)
    sums_, labels, _ = kernels
    assert not np.array_equal(sums_(X_new, *parts).argmax(axis=1), np.arange(90) % 3)
    assert np.array_equal(labels(X_new, *parts, 1e-6), np.arange(90) % 3)


def test_the_compact_trees_are_not_pickled_and_are_rebuilt():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 5))
    target = X[:, 0] * X[:, 1]
    forest = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, target)
    model = RegressionModel(forest)
    model.prepare(X)
    assert model._fn._compact
    size = len(pickle.dumps(model._fn))
    assert size < len(pickle.dumps(forest)) + 10_000  # the forest, not its compact copy
    copy = pickle.loads(pickle.dumps(model))
    assert copy._fn._compact is None
    assert np.array_equal(copy.predict(X[:50]), forest.predict(X[:50]))
    assert copy._fn._compact and copy._fn.engaged


def test_numba_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("SKANCHORS_NUMBA", "0")
    assert _trees.kernels() is None
    monkeypatch.setenv("SKANCHORS_NUMBA", "1")
    assert _trees.kernels() is not None


def _leaf_depths(tree):
    depths, stack = [], [(0, 0)]
    while stack:
        node, depth = stack.pop()
        if tree.children_left[node] < 0:
            depths.append(depth)
        else:
            stack += [(tree.children_left[node], depth + 1), (tree.children_right[node], depth + 1)]
    return depths


def test_boosting_stages_as_complete_trees_give_scikit_learns_sums_to_the_last_bit():
    # Few rows and min_samples_split stop branches early: leaves above the last level fill
    # the positions below them. Three classes: three trees a stage, one column each.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    boost = GradientBoostingClassifier(
        n_estimators=30, max_depth=4, min_samples_split=12, learning_rate=0.3, random_state=0
    ).fit(X, y)
    trees = [t.tree_ for t in boost.estimators_.ravel()]
    assert any(len(set(_leaf_depths(t))) > 1 for t in trees)  # unbalanced trees exist
    model = ProbabilityModel(boost)
    model.prepare(X)
    features, thresholds, leaves, columns, depth = model._fn._complete[1]
    assert depth == 4 and features.shape == (90, 15) and leaves.shape == (90, 16)
    assert columns.tolist() == [0, 1, 2] * 30
    X_new = rng.normal(size=(500, 4)) * 2
    for batch in (X_new, X_new[:1], X_new[7:80]):
        assert np.array_equal(model.predict_proba(batch), boost.predict_proba(batch))
        assert np.array_equal(model.predict_index(batch), boost.predict(batch))
    assert model._fn.verified is True and model._fn.engaged
    # rows exactly at a split's threshold go left, as in scikit-learn
    at = X_new[:40].astype(np.float32)
    root = boost.estimators_[0, 0].tree_
    at[:, root.feature[0]] = _trees._float32_below(root.threshold[:1])[0]
    assert np.array_equal(model.predict_proba(at), boost.predict_proba(at))


def test_boosting_regression_and_deep_stages():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 5))
    target = X[:, 0] * X[:, 1] + X[:, 2]
    boost = GradientBoostingRegressor(n_estimators=25, random_state=0).fit(X, target)
    model = RegressionModel(boost)
    model.prepare(X)
    assert model._fn._complete
    assert np.array_equal(model.predict(X[:100]), boost.predict(X[:100]))
    # deeper than MAX_COMPLETE_DEPTH: scikit-learn's own loop, the same numbers
    deep = GradientBoostingRegressor(
        n_estimators=5, max_depth=_trees.MAX_COMPLETE_DEPTH + 2, random_state=0
    ).fit(X, target)
    assert max(t.tree_.max_depth for t in deep.estimators_.ravel()) > _trees.MAX_COMPLETE_DEPTH
    model = RegressionModel(deep)
    model.prepare(X)
    assert model._fn._complete is False
    assert np.array_equal(model.predict(X[:100]), deep.predict(X[:100]))
    assert model._fn.verified is True
    copy = pickle.loads(pickle.dumps(RegressionModel(boost)))
    assert copy._fn._complete is None
    assert np.array_equal(copy.predict(X[:50]), boost.predict(X[:50])) and copy._fn._complete
