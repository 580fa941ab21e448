"""What the samplers' streams and the search's stores of predictions both need: the 64-bit hash
of a row of integer keys, and the size of a stream block.

A neutral module, so that the samplers (which hash the perturbations they generate) and the
cache of predictions (:mod:`skanchors._speed.cache`, which keys predictions by those hashes)
agree on both without the samplers importing the cache; and :func:`lookup`, which reads a
dictionary of predictions by hash.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["STREAM_BLOCK", "hash_multipliers", "lookup", "row_hash"]

# Stream positions are generated in blocks of this many samples (one generator per block).
STREAM_BLOCK = 128

_HASH_MULT = {}
# row_hash reads at most this many cells (rows x keys) at once.
_HASH_BLOCK_CELLS = 1 << 20


def row_hash(keys):
    """64-bit hash of each row of an integer matrix (a random linear map, wrapping mod 2**64).

    Two different rows collide with probability about 2**-64, so equal hashes are taken as
    equal model inputs (the search's deduplication and the shared prediction cache).
    """
    mult = hash_multipliers(keys.shape[1])
    # Integer array arithmetic wraps silently (no overflow warning to silence). In blocks of
    # rows: a long document's rows would make a (rows x words) uint64 matrix at once.
    step = max(1, _HASH_BLOCK_CELLS // max(keys.shape[1], 1))
    if len(keys) <= step:
        return (keys.astype(np.uint64) * mult).sum(axis=1, dtype=np.uint64)
    out = np.empty(len(keys), dtype=np.uint64)
    for lo in range(0, len(keys), step):
        block = keys[lo : lo + step].astype(np.uint64)
        out[lo : lo + step] = (block * mult).sum(axis=1, dtype=np.uint64)
    return out


def hash_multipliers(width):
    """The odd 64-bit multipliers of :func:`row_hash` for rows of ``width`` integers."""
    mult = _HASH_MULT.get(width)
    if mult is None:
        gen = np.random.default_rng([0x5CA1AB1E, width])
        mult = _HASH_MULT[width] = gen.integers(1, 2**63, size=width, dtype=np.uint64) | 1
    return mult


def lookup(table, hashes):
    """``table[h]`` for each of the uint64 ``hashes`` (-1 where missing), as an int64 array."""
    keys = hashes.tolist()
    return np.fromiter(map(table.get, keys, itertools.repeat(-1)), np.int64, len(keys))
