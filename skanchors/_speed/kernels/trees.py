"""The compiled traversal of the compact trees of :mod:`skanchors._trees`, the twin of
scikit-learn's own (registered in :mod:`skanchors._speed.kernels`; see
:mod:`skanchors._compiled`)."""

import numba
import numpy as np

# Rows walked down a tree in lockstep: enough independent loads in flight to hide a load's
# latency, few enough to keep each lane's state in registers.
LANES = 6
# From this many rows on, rows are taken in the order of their leaf in the first tree: alike
# rows one after the other find the same nodes in cache.
SORT_FROM = 64


@numba.njit(nogil=True, cache=True)
def _walk(X, rows, n_rows, root, nodes, thresholds, values, bits, sums, where, reached):
    # adds the tree's leaf values of rows[:n_rows] to sums, LANES rows at a time
    n_columns = values.shape[1]
    mask = (1 << bits) - 1
    for first in range(0, n_rows, LANES):
        width = min(LANES, n_rows - first)
        for lane in range(width):
            where[lane] = root
        moving = width
        while moving:
            moving = 0
            for lane in range(width):
                node = where[lane]
                word = nodes[node, 1]
                feature = word & mask
                if feature != mask:
                    # left (the next node) or right, by arithmetic rather than a branch; NaN
                    # goes right as in scikit-learn
                    right = not (X[rows[first + lane], feature] <= thresholds[node, 0])
                    where[lane] = node + 1 + right * ((word >> bits) - 1)
                    moving += 1
        for lane in range(width):
            row = rows[first + lane]
            node = where[lane]
            reached[row] = node
            value = thresholds[node, 0]
            if value == value:  # the leaf's value is in the node (see _trees.compact)
                if n_columns == 1:
                    sums[row, 0] += value
                else:
                    sums[row, 0] += 1.0 - value
                    sums[row, 1] += value
            else:
                leaf = nodes[node, 1] >> bits
                for c in range(n_columns):
                    sums[row, c] += values[leaf, c]


@numba.njit(nogil=True, cache=True)
def forest_sums(X, roots, nodes, thresholds, values, bits):
    """Each row's sum over the trees (in order) of its leaf values."""
    n = X.shape[0]
    sums = np.zeros((n, values.shape[1]))
    rows = np.arange(n)
    where = np.empty(LANES, np.int64)
    reached = np.empty(n, np.int64)
    for t in range(roots.shape[0]):
        _walk(X, rows, n, roots[t], nodes, thresholds, values, bits, sums, where, reached)
        if t == 0 and n >= SORT_FROM:
            rows = np.argsort(reached, kind="mergesort")
    return sums


@numba.njit(nogil=True, cache=True)
def forest_labels(X, roots, nodes, thresholds, values, bits, margin):
    """Each row's class: the argmax of its summed leaf values divided by the number of
    trees, leaving the traversal once the class is decided."""
    n = X.shape[0]
    n_trees = roots.shape[0]
    n_classes = values.shape[1]
    sums = np.zeros((n, n_classes))
    rows = np.arange(n)
    n_rows = n
    labels = np.empty(n, np.int64)
    where = np.empty(LANES, np.int64)
    reached = np.empty(n, np.int64)
    for t in range(n_trees):
        if 2 * t >= n_trees:
            kept = 0
            for k in range(n_rows):
                row = rows[k]
                first = -np.inf
                second = -np.inf
                for c in range(n_classes):
                    v = sums[row, c]
                    if v > first:
                        second = first
                        first = v
                    elif v > second:
                        second = v
                if first - second > n_trees - t + margin:
                    best = 0
                    for c in range(1, n_classes):
                        if sums[row, c] > sums[row, best]:
                            best = c
                    labels[row] = best
                else:
                    rows[kept] = row
                    kept += 1
            n_rows = kept
            if n_rows == 0:
                break
        _walk(X, rows, n_rows, roots[t], nodes, thresholds, values, bits, sums, where, reached)
        if t == 0 and n >= SORT_FROM:
            rows = np.argsort(reached, kind="mergesort")
    for k in range(n_rows):
        row = rows[k]
        best = 0
        for c in range(1, n_classes):
            if sums[row, c] / n_trees > sums[row, best] / n_trees:
                best = c
        labels[row] = best
    return labels


@numba.njit(nogil=True, cache=True)
def boosting_add(X, features, thresholds, leaves, columns, depth, raw):
    """Adds each tree's leaf value for each row to ``raw[row, columns[tree]]``, tree after
    tree, for complete binary trees of ``depth`` levels stored level by level (the children
    of position ``i`` are ``2i + 1`` and ``2i + 2``; the leaves follow the splits).

    The rows go down a tree one level at a time, each row's next position computed from a
    comparison rather than a branch: no misprediction to wait for, and the rows of one level
    are independent of each other."""
    n = X.shape[0]
    inner = features.shape[1]
    at = np.empty(n, np.int64)
    for t in range(features.shape[0]):
        feature = features[t, 0]
        threshold = thresholds[t, 0]
        for row in range(n):
            at[row] = 1 + (X[row, feature] > threshold)
        for _ in range(depth - 1):
            for row in range(n):
                i = at[row]
                at[row] = 2 * i + 1 + (X[row, features[t, i]] > thresholds[t, i])
        c = columns[t]
        for row in range(n):
            raw[row, c] += leaves[t, at[row] - inner]
    return raw
