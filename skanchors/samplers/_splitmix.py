"""Counter-based random numbers for sample streams (SplitMix64, Steele et al. 2014).

Sample ``i`` of block ``b`` of a stream reads the 64-bit words of counters ``(column, i)``
under the block's seed :func:`block_seed`, itself a hash of the explainer's seed, the stream's
key (:func:`stable_hash` of the predicates in the reference data's terms) and ``b``: a block is
the same whichever blocks it is generated with, in whichever process. The compiled twin of
:func:`mix64_array` and :func:`uniform_below` is in :mod:`skanchors._speed.kernels.blocks`.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = [
    "GAMMA",
    "block_seed",
    "mix64",
    "mix64_array",
    "pick",
    "stable_hash",
    "stream_seed",
    "uniform_below",
]


def stable_hash(text):
    """A 63-bit integer from a string, the same in every process (unlike ``hash``)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix64(x):
    """SplitMix64's output function on a Python int (a 64-bit hash of a 64-bit counter)."""
    x = (x + GAMMA) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def mix64_array(x):
    """:func:`mix64` of every element of a uint64 array (products wrap modulo 2**64)."""
    x = x + np.uint64(GAMMA)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def uniform_below(z, size):
    """Integers in ``[0, size)`` from random 64-bit words ``z`` (``size`` below 2**32, scalar
    or broadcasting): the top 32 bits times the size, divided by 2**32, uniform up to a
    relative bias of ``size / 2**32``."""
    size = np.asarray(size).astype(np.uint64)
    return (((z >> np.uint64(32)) * size) >> np.uint64(32)).astype(np.intp)


def pick(pool, z, instance):
    """Rows drawn from ``pool`` (``(rows, cum)``; None: all reference rows) by the random
    64-bit words ``z``: uniformly, or by the pool's cumulative weights."""
    if pool is None:
        rows, cum, size = None, instance._cum, instance._n_ref
    else:
        rows, cum = pool
        size = len(rows)
    if cum is None:
        pick = uniform_below(z, size)
    else:
        u = (z >> np.uint64(11)).astype(np.float64) * 2.0**-53
        pick = np.minimum(np.searchsorted(cum, u * cum[-1], side="right"), size - 1)
    return pick if rows is None else rows[pick]


def stream_seed(seed, key):
    """The seed of the stream of key ``key`` under the explainer's ``seed``: ``mix(mix(seed)
    ^ key)``."""
    return mix64(mix64(seed & MASK64) ^ key)


def block_seed(seed, key, b):
    """The seed of block ``b`` of the stream of key ``key``: ``mix(stream seed ^ b)``."""
    return mix64(stream_seed(seed, key) ^ b)
