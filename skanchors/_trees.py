"""A scikit-learn forest's (or gradient boosting's) trees in compact arrays, traversed by
compiled code (optional).

With the ``fast`` extra (numba) installed, :class:`skanchors.models.ProbabilityModel` and
:class:`~skanchors.models.RegressionModel` sum a random forest's (or extra trees') tree
predictions here instead of calling each tree's ``predict``: the same numbers to the last bit,
with less memory traffic.

- scikit-learn stores a node in 64 bytes (children, feature, threshold, impurity, sample
  counts) and its values apart. Here a node is 8 bytes: the threshold, and the feature and the
  distance to the right child packed in one int32; the nodes are laid out depth first, so the
  left child is the next node. A leaf holds the value the traversal adds in place of the
  threshold when a float32 holds it exactly (a classifier of two classes: the second class's
  fraction, the first's being one minus it; a regressor: the value), and the index of its row of
  values otherwise, so most leaves cost no second load. The nodes take an eighth of
  scikit-learn's memory, and a forest grown to pure leaves (a random forest's default) holds
  every leaf's value in its nodes, so its traversal reads the nodes alone.
- A traversal is a chain of dependent loads: each node's address comes from the one before.
  Six rows are walked down a tree in lockstep (``LANES`` of
  :mod:`skanchors._speed.kernels.trees`), so their loads overlap instead of waiting one after
  another, each step to the left or right child computed rather than branched to. From 64
  rows on, after the first tree the rows are taken in the order of the leaf they reached
  there: alike rows one after the other find the same nodes in cache. Each row still sums
  its trees in the forest's order.
- Deciding only the class (``forest_labels``), a row leaves at the first tree past half where
  its leading class is ahead by more than the remaining trees could close (each tree adds
  class fractions in [0, 1], so moves any difference between two classes by at most 1).

Gradient boosting. Its stages are shallow regression trees (depth 3 by default), where a
traversal's cost is not memory but the processor's branch prediction: each split sends a row
left or right at random, and scikit-learn's loop waits for every misprediction. ``complete``
lays each stage's tree out as a complete binary tree of the deepest stage's depth (the
children of position ``i`` are ``2i + 1`` and ``2i + 2``; a leaf above the last level fills
every position below it), and ``boosting_add`` moves all rows of a call down a tree one level
at a time, each row's next position computed from its comparison without a branch, then adds
each leaf's value times the learning rate (the product scikit-learn adds) to the row's raw
prediction, stage after stage: no branch to mispredict, and the same sums to the last bit.

Thresholds. scikit-learn compares a float32 feature value with a float64 threshold. For a
float32 ``x`` and any ``t``, ``x <= t`` exactly when ``x <= f``, with ``f`` the largest float32
not above ``t``, so the threshold is stored as that float32 and the comparison is unchanged.

The compiled traversal is the speed layer's (:mod:`skanchors._speed.kernels.trees`), asked
for by name through :mod:`skanchors._compiled`: numba is loaded at the first forest's ``fit``
(its code compiled once and cached on disk by numba), not by ``import skanchors``. Setting the
environment variable ``SKANCHORS_NUMBA=0`` keeps to scikit-learn's traversal.
"""

from __future__ import annotations

import numpy as np

from . import _compiled

# Boosting stages deeper than this keep to scikit-learn's own loop (a complete tree of depth
# k takes 2**k leaves; gradient boosting's default depth is 3).
MAX_COMPLETE_DEPTH = 8


def kernels():
    """The compiled ``(forest_sums, forest_labels, boosting_add)`` of the speed layer, or None
    where compiled kernels are not in use (numba missing, ``SKANCHORS_NUMBA=0``, switched off;
    see :mod:`skanchors._compiled`): scikit-learn's own traversal then runs."""
    found = tuple(
        _compiled.kernel(name) for name in ("forest_sums", "forest_labels", "boosting_add")
    )
    return None if None in found else found


def _float32_below(thresholds):
    """The largest float32 not above each float64 threshold (see the module's notes)."""
    single = thresholds.astype(np.float32)
    return np.where(single > thresholds, np.nextafter(single, np.float32(-np.inf)), single)


def compact(trees, n_columns, n_features):
    """The trees of a fitted forest as ``(roots, nodes, thresholds, values, bits)``, or None
    where they do not fit 8 bytes per node.

    Nodes are laid out depth first, each tree after the one before (``roots`` are the first
    nodes), so that a node's left child is the next node. ``nodes`` is int32 of shape
    (n_nodes, 2) and ``thresholds`` its float32 view. A split node holds its threshold in
    column 0, and in column 1 its feature in the low ``bits`` bits and the distance to its right
    child above them; a leaf holds only ones in the low bits of column 1 and the index of its
    row of ``values`` above them, and in column 0 its value as a float32 where that is exact
    (see ``_inline``), NaN otherwise. ``values`` are the leaves' first ``n_columns`` value
    columns, float64 as in the trees.
    """
    bits = max(int(n_features).bit_length(), 1)  # all ones is then no feature
    mask = (1 << bits) - 1
    if sum(int((tree.children_left < 0).sum()) for tree in trees) >= 1 << (31 - bits):
        return None
    orders = [_depth_first(tree) for tree in trees]
    counts = np.array([len(order) for order in orders], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])
    nodes = np.empty((starts[-1], 2), dtype=np.int32)
    thresholds = nodes.view(np.float32)
    leaves = [tree.children_left[order] < 0 for tree, order in zip(trees, orders)]
    leaf_starts = np.concatenate([[0], np.cumsum([leaf.sum() for leaf in leaves])])
    values = np.empty((leaf_starts[-1], n_columns), dtype=np.float64)
    for tree, order, leaf, start, first_leaf in zip(trees, orders, leaves, starts, leaf_starts):
        count = len(order)
        position = np.empty(count, dtype=np.int64)  # new index of each original node
        position[order] = np.arange(count)
        right = position[tree.children_right[order]] - np.arange(count)
        if (right[~leaf] >= 1 << (31 - bits)).any():
            return None
        rows = slice(start, start + count)
        n_leaves = int(leaf.sum())
        leaf_values = tree.value[order[leaf], 0, :n_columns]
        values[first_leaf : first_leaf + n_leaves] = leaf_values
        index = np.zeros(count, dtype=np.int64)
        index[leaf] = np.arange(first_leaf, first_leaf + n_leaves)
        split_word = (right << bits) | tree.feature[order]
        nodes[rows, 1] = np.where(leaf, (index << bits) | mask, split_word)
        split_thresholds = _float32_below(tree.threshold[order])
        split_thresholds[leaf] = _inline(leaf_values)
        thresholds[rows, 0] = split_thresholds
    return starts[:-1], nodes, thresholds, values, bits


def _inline(leaf_values):
    """What a leaf node holds in its float32: the value the traversal adds where that is
    exact (one column: the value; two: the second column's, the first being one minus it),
    NaN where the traversal must read the leaf's row of values."""
    n_columns = leaf_values.shape[1]
    if n_columns > 2:
        return np.full(len(leaf_values), np.nan, dtype=np.float32)
    value = leaf_values[:, -1]
    single = value.astype(np.float32)
    exact = single == value
    if n_columns == 2:
        exact &= leaf_values[:, 0] == 1.0 - value
    return np.where(exact, single, np.float32(np.nan))


def _depth_first(tree):
    """The tree's node indices in depth-first order, left subtree first (scikit-learn's own
    order, unless the tree was grown best first)."""
    left, right = tree.children_left, tree.children_right
    count = tree.node_count
    split = left >= 0
    if (left[split] == np.flatnonzero(split) + 1).all():
        return np.arange(count)
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if left[node] >= 0:
            stack.append(right[node])
            stack.append(left[node])
    return np.array(order, dtype=np.int64)


def complete(trees, columns, scale, max_depth=MAX_COMPLETE_DEPTH):
    """Boosting stages' regression trees as complete binary trees of one depth, for
    ``boosting_add``: ``(features, thresholds, leaves, columns, depth)``, or None where a
    tree is deeper than ``max_depth``.

    Row ``t`` of ``features`` (int32) and ``thresholds`` (float32, see the module's notes)
    holds tree ``t``'s splits level by level, ``leaves`` (float64) its leaf values times
    ``scale`` (the learning rate: the product scikit-learn adds), and ``columns[t]`` the raw
    prediction column it adds to. A leaf above the last level fills every leaf position
    below it with its value, under splits that every row passes the same way (threshold
    +inf: left; the inputs are finite).
    """
    depth = max([1] + [int(tree.max_depth) for tree in trees])
    if depth > max_depth:
        return None
    inner = (1 << depth) - 1
    features = np.zeros((len(trees), inner), dtype=np.int32)
    thresholds = np.full((len(trees), inner), np.inf, dtype=np.float32)
    leaves = np.zeros((len(trees), inner + 1), dtype=np.float64)
    for t, tree in enumerate(trees):
        left, right = tree.children_left, tree.children_right
        below = _float32_below(tree.threshold)
        stack = [(0, 0, 0)]  # node, its position, its level
        while stack:
            node, at, level = stack.pop()
            if left[node] < 0:
                first = last = at
                for _ in range(depth - level):
                    first, last = 2 * first + 1, 2 * last + 2
                leaves[t, first - inner : last - inner + 1] = scale * tree.value[node, 0, 0]
                continue
            features[t, at] = tree.feature[node]
            thresholds[t, at] = below[node]
            stack.append((left[node], 2 * at + 1, level + 1))
            stack.append((right[node], 2 * at + 2, level + 1))
    return features, thresholds, leaves, np.asarray(columns, dtype=np.int64), depth
