"""A scikit-learn forest's trees in compact arrays, traversed by compiled code (optional).

With the ``fast`` extra (numba) installed, :class:`skanchors.models.ProbabilityModel` and
:class:`~skanchors.models.RegressionModel` sum a random forest's (or extra trees') tree
predictions here instead of calling each tree's ``predict``: the same numbers to the last bit,
with less memory traffic.

- scikit-learn stores a node in 64 bytes (children, feature, threshold, impurity, sample
  counts) and its values apart. Here a node is 8 bytes: the threshold, and the feature and the
  distance to the right child packed in one int32; the nodes are laid out depth first, so the
  left child is the next node. Leaves hold the index of their row of values. The benchmark's
  Adult forest (100 trees, 669,000 nodes, depth 42) takes 5.4 MB of nodes and 5.4 MB of leaf
  values instead of 43 MB and 11 MB, and fits in the processor's cache.
- A traversal is a chain of dependent loads: each node's address comes from the one before.
  Eight rows are walked down a tree in lockstep (:data:`~skanchors._tree_kernels.LANES`), so
  their loads overlap instead of waiting one after another. From 64 rows on, after the first
  tree the rows are taken in the order of the leaf they reached there: alike rows one after
  the other find the same nodes in cache. Each row still sums its trees in the forest's order.
- Deciding only the class (``forest_labels``), a row leaves at the first tree past half where
  its leading class is ahead by more than the remaining trees could close (each tree adds
  class fractions in [0, 1], so moves any difference between two classes by at most 1).

Explaining 20 Adult rows with the forest took 0.68 times the CPU time of scikit-learn's
traversal (``bench/revisions.py``, same anchors); the median explanation took 0.56, 0.66 and
0.59 times as long on the benchmark's three row sets (head to head, in the same repetitions,
``bench/results_tabular*.md``).

Thresholds. scikit-learn compares a float32 feature value with a float64 threshold. For a
float32 ``x`` and any ``t``, ``x <= t`` exactly when ``x <= f``, with ``f`` the largest float32
not above ``t``, so the threshold is stored as that float32 and the comparison is unchanged.

Nothing here is imported by ``import skanchors``: numba is loaded at the first forest's
``fit`` (its code compiled once, a few seconds, and cached on disk by numba). Setting the
environment variable ``SKANCHORS_NUMBA=0`` keeps to scikit-learn's traversal.
"""

from __future__ import annotations

import numpy as np

from ._numba import compiled

_KERNELS = None  # (forest_sums, forest_labels) once compiled; False: numba missing or disabled


def kernels():
    """The compiled ``(forest_sums, forest_labels)`` functions, or None without numba (or
    with ``SKANCHORS_NUMBA=0``)."""
    global _KERNELS
    if _KERNELS is None:
        _KERNELS = compiled(_load) or False
    return _KERNELS or None


def _load():
    from ._tree_kernels import forest_labels, forest_sums

    # compile now (or load numba's cached machine code), where a failure only means
    # scikit-learn's traversal: one tree that is a single leaf
    X = np.zeros((1, 1), dtype=np.float32)
    roots = np.zeros(1, dtype=np.int64)
    nodes = np.array([[0, 1]], dtype=np.int32)
    values = np.array([[0.25, 0.75]])
    parts = (roots, nodes, nodes.view(np.float32), values, 1)
    if forest_sums(X, *parts)[0, 1] != 0.75 or forest_labels(X, *parts, 1e-6)[0] != 1:
        raise RuntimeError("compiled forest traversal failed its check")
    return forest_sums, forest_labels


def compact(trees, n_columns, n_features):
    """The trees of a fitted forest as ``(roots, nodes, thresholds, values, bits)``, or None
    where they do not fit 8 bytes per node.

    Nodes are laid out depth first, each tree after the one before (``roots`` are the first
    nodes), so that a node's left child is the next node. ``nodes`` is int32 of shape
    (n_nodes, 2) and ``thresholds`` its float32 view. A split node holds its threshold in
    column 0, and in column 1 its feature in the low ``bits`` bits and the distance to its right
    child above them; a leaf holds the index of its row of ``values`` in column 0 and only ones
    in the low bits of column 1. ``values`` are the leaves' first ``n_columns`` value columns,
    float64 as in the trees.
    """
    bits = max(int(n_features).bit_length(), 1)  # all ones is then no feature
    mask = (1 << bits) - 1
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
        below = tree.threshold[order]
        single = below.astype(np.float32)
        # the largest float32 not above the float64 threshold
        single = np.where(single > below, np.nextafter(single, np.float32(-np.inf)), single)
        rows = slice(start, start + count)
        thresholds[rows, 0] = single
        n_leaves = int(leaf.sum())
        nodes[rows, 0][leaf] = np.arange(first_leaf, first_leaf + n_leaves)
        nodes[rows, 1] = np.where(leaf, mask, (right << bits) | tree.feature[order])
        values[first_leaf : first_leaf + n_leaves] = tree.value[order[leaf], 0, :n_columns]
    return starts[:-1], nodes, thresholds, values, bits


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
