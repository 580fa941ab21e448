"""Set bits of packed row masks: the coverage of rules is counted from the predicates' row
masks packed eight rows a byte and ANDed together.

numpy 2 has a bit count (:func:`numpy.bitwise_count`); numpy 1.x has none, so it counts by a
byte lookup table (narrow masks: one numpy call) or by the SWAR popcount on 64-bit words (wide
masks: a fixed eight array operations whatever the width). Every version is exact; masks are
padded to whole 64-bit words with rows that hold nothing.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bitcount", "popcounts"]

# the SWAR popcount's masks and shifts (also those of the compiled coverage counts)
_M1, _M2, _M4 = (np.uint64(m) for m in (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F))
_H01, _ONE, _TWO, _FOUR, _TOP = (np.uint64(v) for v in (0x0101010101010101, 1, 2, 4, 56))


def _popcounts_swar(bits):
    """Set bits in each row of a 2-d uint8 array whose rows are whole 64-bit words, by the
    SWAR popcount on those words (numpy 1.x has no bit count; on wide masks this takes fewer
    numpy calls per byte than a lookup table)."""
    x = np.ascontiguousarray(bits).view(np.uint64)
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> _TWO) & _M2)
    x = (x + (x >> _FOUR)) & _M4
    return ((x * _H01) >> _TOP).sum(axis=-1, dtype=np.int64)


def _popcounts_numpy(bits):
    return np.bitwise_count(bits).sum(axis=-1, dtype=np.int64)


_LUT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcounts_1x(bits):
    """numpy 1.x: a byte lookup table for narrow masks (one numpy call), the SWAR count for
    wide ones (its eight calls pay for themselves from a few hundred bytes a row)."""
    if bits.shape[-1] <= 256:
        return _LUT[bits].sum(axis=-1, dtype=np.int64)
    return _popcounts_swar(bits)


# Set bits per row of packed predicate masks (see TabularSampler._predicate_bits).
popcounts = _popcounts_numpy if hasattr(np, "bitwise_count") else _popcounts_1x


def bitcount(bits):
    """Set bits of one packed mask."""
    return int(popcounts(bits[None, :])[0])
