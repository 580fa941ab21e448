"""The compiled kernels (numba, the ``fast`` extra), registered with the core's interface
:mod:`skanchors._compiled` under their names.

Each is the twin of a piece of the core's numpy (or plain-float) code and computes the same
numbers to the last bit (``tests/_speed/test_kernels.py`` compares every registered kernel with its
twin):

- :mod:`.arms`: the stratified arms' counts, bounds, extreme bounds and estimates
  (:class:`skanchors._stratified.StratifiedArms`, :func:`skanchors._bounds.stratified_bound`);
- :mod:`.table`: the prediction cache's hash table (:class:`skanchors._speed.cache.SampleCache`);
- :mod:`.blocks`: the tabular sampler's stream blocks, windows and rule coverage
  (:mod:`skanchors.samplers._tabular_instance`);
- :mod:`.trees`: a forest's and gradient boosting's traversal (:mod:`skanchors._trees`,
  against scikit-learn's own).

Importing this package registers loaders and imports neither numba nor the kernels; a
kernel's loader imports it and compiles it with a first call on a small input (numba keeps the
machine code on disk, so later processes load it). A loader that fails raises
:class:`skanchors._compiled.CompiledKernelError`: nothing falls back silently.
"""

from __future__ import annotations

import importlib

import numpy as np

from ..._compiled import register

__all__ = ["KERNELS"]


def _warm_arms(module):
    # arm 0 is its own sample's, arm 1 a child of its parent's; one arm with two strata, one
    # with one
    counts = [np.zeros(2) for _ in range(4)]
    module.stratum_counts(
        np.array([1, 0], dtype=np.int64), np.array([[False], [True], [False]]),
        np.array([1, 2], dtype=np.intp), np.array([3, 3], dtype=np.int64), 3,
        np.array([-1, 0], dtype=np.intp),
        np.zeros((2, 1), dtype=np.intp), np.array([0, 1], dtype=np.intp),
        np.array([1], dtype=np.intp), *counts, np.zeros(2, dtype=bool),
    )  # fmt: skip
    table = [[40.0, 30.0], [38.0, 20.0], [25.0, 0.0], [20.0, 0.0], [0.7, 0.4]]
    n1, pos1, n2, pos2, pi = (np.array(column) for column in table)
    rates = np.linspace(0.0, 8.0, 64)
    for lower in (True, False):
        module.stratified_bounds(n1, pos1, n2, pos2, pi, np.arange(2), 3.0, 4.0, lower, np.zeros(2))
        module.extreme_bound_small(
            np.arange(2), 3.0, 3.0, not lower, 1, np.full(2, np.nan), np.zeros(2),
            n1, pos1, n2, pos2, pi, rates, 1e-6,
        )  # fmt: skip
    module.precision_estimates(n1, pos1, n2, pos2, pi)


def _warm_table(module):
    from ..cache import _Table

    table = _Table(module, 4)
    hashes = np.array([0, 5, 0], dtype=np.uint64)
    _, mine, *_ = table.claim(hashes, 1)
    table.fill(hashes[mine], np.arange(len(mine)), 1)
    table.lookup(hashes)
    table.restart()


def _warm_trees(module):
    # two trees that are single leaves, the first holding its value (0.75) in the node, the
    # second pointing to its row of values (NaN in the node); then one boosting stump
    X = np.zeros((1, 1), dtype=np.float32)
    nodes = np.array([[0, 1], [0, 1]], dtype=np.int32)
    thresholds = nodes.view(np.float32)
    thresholds[:, 0] = [0.75, np.nan]
    parts = (np.arange(2, dtype=np.int64), nodes, thresholds, np.array([[0.125, 0.875]]), 1)
    module.forest_sums(X, *parts)
    module.forest_labels(X, *parts, 1e-6)
    module.boosting_add(
        X, np.zeros((1, 1), dtype=np.int32), np.full((1, 1), 0.5, dtype=np.float32),
        np.array([[0.25, 0.75]]), np.zeros(1, dtype=np.int64), 1, np.ones((1, 1)),
    )  # fmt: skip


def _warm_blocks(module):
    # two reference rows, one feature, no pair (the dtypes of TabularSampler's arrays)
    empty = np.zeros(0, dtype=np.intp)
    codes = np.array([[5], [9]], dtype=np.int32)
    pairs = (empty, np.zeros((0, 1), dtype=np.intp), np.zeros((0, 2), dtype=np.intp))
    pool_rows = np.zeros(0, dtype=np.int32)
    rest = (pool_rows, np.ones((3, 1), dtype=bool), codes, codes, np.array([3], dtype=np.uint64))
    module.make_blocks(np.array([7], dtype=np.uint64), 4, 2, empty, *pairs, *rest)
    module.make_windows(
        np.array([7], dtype=np.uint64), np.array([5]), np.array([7]), 4, np.array([0, 0]),
        *pairs, 2, *rest,
    )  # fmt: skip
    words = np.array([[0b1011, 2**63 + 1], [0b0110, 2**63]], dtype=np.uint64)
    module.coverage_counts(words, np.array([[0, 1], [0, 0], [1, 1]]))


# name -> (module, attribute (None: the module itself), warm-up, the core's twin)
KERNELS = {
    "stratum_counts": ("arms", "stratum_counts", _warm_arms,
                       "skanchors._stratified.StratifiedArms._update"),
    "stratified_bounds": ("arms", "stratified_bounds", _warm_arms,
                          "skanchors._bounds.stratified_bound"),
    "extreme_bounds": ("arms", "extreme_bound_small", _warm_arms,
                       "skanchors._stratified.StratifiedArms.extreme_bound"),
    "precision_estimates": ("arms", "precision_estimates", _warm_arms,
                            "skanchors._stratified.StratifiedArms.precision_estimates"),
    "prediction_table": ("table", None, _warm_table,
                         "the dictionaries of skanchors._speed.cache.SampleCache"),
    "forest_sums": ("trees", "forest_sums", _warm_trees,
                    "scikit-learn's forest traversal (skanchors._speed.forest)"),
    "forest_labels": ("trees", "forest_labels", _warm_trees,
                      "scikit-learn's forest traversal (skanchors._speed.forest)"),
    "boosting_add": ("trees", "boosting_add", _warm_trees,
                     "scikit-learn's boosting stages (skanchors._speed.boosting)"),
    "make_blocks": ("blocks", "make_blocks", _warm_blocks,
                    "skanchors.samplers._tabular_instance.TabularInstance._make_blocks"),
    "make_windows": ("blocks", "make_windows", _warm_blocks,
                     "skanchors.samplers._tabular_instance.TabularInstance.stream_windows"),
    "coverage_counts": ("blocks", "coverage_counts", _warm_blocks,
                        "skanchors.samplers._tabular_instance.TabularInstance.coverage"),
}  # fmt: skip

_WARMED = set()  # modules whose kernels are compiled


def _loader(module_name, attribute, warm):
    def load():
        module = importlib.import_module(f"{__name__}.{module_name}")
        if module_name not in _WARMED:
            warm(module)  # compiles every kernel of the module (or loads numba's cache)
            _WARMED.add(module_name)
        return module if attribute is None else getattr(module, attribute)

    return load


for _name, (_module, _attribute, _warm, _twin) in KERNELS.items():
    register(_name, _loader(_module, _attribute, _warm), _twin)
