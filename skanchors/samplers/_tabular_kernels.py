"""The compiled kernels of the tabular sampler (the ``fast`` extra), loaded on first use.

:mod:`skanchors.samplers._block_kernels` holds them: stream blocks (``make_blocks``), stream
windows drawn without their blocks (``make_windows``) and rule coverage from packed masks
(``coverage_counts``), each the same to the last bit as the numpy code of
:class:`~skanchors.samplers.tabular.TabularInstance`. Loading them imports numba and compiles
(or loads numba's cached machine code) once, and checks them on a small known case; without
numba, or with ``SKANCHORS_NUMBA=0``, each getter returns None and the numpy code runs.
"""

from __future__ import annotations

import numpy as np

from .._numba import compiled
from ._splitmix import mix64

__all__ = ["block_kernel", "coverage_kernel", "window_kernel"]

_BLOCK_KERNEL = None  # the compiled make_blocks; False: numba missing or disabled


def block_kernel():
    """:func:`skanchors.samplers._block_kernels.make_blocks`, compiled, or None (numba
    missing, or ``SKANCHORS_NUMBA=0``)."""
    global _BLOCK_KERNEL
    if _BLOCK_KERNEL is None:
        _BLOCK_KERNEL = compiled(_load_block_kernel) or False
    return _BLOCK_KERNEL or None


def coverage_kernel():
    """:func:`skanchors.samplers._block_kernels.coverage_counts`, compiled, or None: loaded
    with, and switched off with, :func:`block_kernel`."""
    if block_kernel() is None:
        return None
    from ._block_kernels import coverage_counts

    return coverage_counts


def window_kernel():
    """:func:`skanchors.samplers._block_kernels.make_windows`, compiled, or None: loaded
    with, and switched off with, :func:`block_kernel`."""
    if block_kernel() is None:
        return None
    from ._block_kernels import make_windows

    return make_windows


def _load_block_kernel():
    from ._block_kernels import make_blocks, make_windows

    # compile both now (or load numba's cached machine code): two rows, one feature, no pair
    empty = np.zeros(0, dtype=np.intp)
    codes = np.array([[5], [9]], dtype=np.int32)
    pairs = (empty, np.zeros((0, 1), dtype=np.intp), np.zeros((0, 2), dtype=np.intp))
    pool_rows = np.zeros(0, dtype=np.int32)  # TabularSampler._pool_rows
    rest = (pool_rows, np.ones((3, 1), dtype=bool), codes, codes, np.array([3], dtype=np.uint64))
    seed = 7
    src, base, keys, hashes = make_blocks(
        np.array([mix64(seed ^ 1)], dtype=np.uint64), 4, 2, empty, *pairs, *rest
    )
    # samples 1:3 of block 1 of the stream whose blocks' seeds are mix(seed ^ b)
    _, w_base, w_keys, w_hashes = make_windows(
        np.array([seed], dtype=np.uint64), np.array([5]), np.array([7]), 4, np.array([0, 0]),
        *pairs, 2, *rest,
    )  # fmt: skip
    if not (
        np.array_equal(keys[:, 0], codes[base[0], 0])
        and np.array_equal(w_base, base[0, 1:3])
        and np.array_equal(w_hashes, hashes[0, 1:3])
    ):
        raise RuntimeError("compiled stream blocks failed their check")
    from ._block_kernels import coverage_counts

    words = np.array([[0b1011, 2**63 + 1], [0b0110, 2**63]], dtype=np.uint64)
    if coverage_counts(words, np.array([[0, 1], [0, 0], [1, 1]])).tolist() != [2, 5, 3]:
        raise RuntimeError("compiled coverage counts failed their check")
    return make_blocks
