"""The compiled twins of the tabular sampler's stream blocks, windows and rule coverage
(:mod:`skanchors.samplers._tabular_instance`; registered in :mod:`skanchors._speed.kernels`,
see :mod:`skanchors._compiled`).

:func:`make_blocks` does what ``TabularInstance._make_blocks`` does with numpy arrays for the
default perturbation (uniform draws from the sampler's flat store of pools), in one pass and
without the intermediate arrays: the same SplitMix64 words, the same rows, codes and hashes to
the last bit. A replacement value's random word is only computed where the base row violates
the feature's predicates (the words are counter-based, so skipping one changes no other).
"""

import numba
import numpy as np

# the SWAR popcount's masks and shifts, as _popcount._popcounts_swar uses them
from ...samplers._popcount import _FOUR, _H01, _M1, _M2, _M4, _ONE, _TOP, _TWO

# whether row r satisfies every predicate of pair p: _inside(holds, r, pair_preds, p)
from .arms import _inside

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)


@numba.njit(inline="always")
def _word(seed, counter):
    # SplitMix64's output for counter `counter` of `seed` (_splitmix.mix64_array)
    x = seed + counter * _GAMMA + _GAMMA
    x ^= x >> _S30
    x *= _MUL1
    x ^= x >> _S27
    x *= _MUL2
    x ^= x >> _S31
    return x


@numba.njit(inline="always")
def _below(z, size):
    # _splitmix.uniform_below: the top 32 bits times the size, divided by 2**32
    return ((z >> _S32) * size) >> _S32


@numba.njit(nogil=True, cache=True)
def make_blocks(seeds, n, n_ref, pair_block, pair_feature, pair_preds, slots, pool_rows, holds,
                codes, hash_codes, mult):  # fmt: skip
    """``(src, base, keys, hashes)`` of the blocks with seeds ``seeds``, ``n`` samples each.

    Pair ``p`` replaces feature ``pair_feature[p]`` of block ``pair_block[p]`` where the base
    row violates one of predicates ``pair_preds[p]`` (``holds[row, predicate]``) by the row at
    a uniform position of ``pool_rows[slots[p, 0]:slots[p, 0] + slots[p, 1]]``. ``codes``:
    the reference rows' value codes; ``hash_codes``: what the rows are hashed by (the value
    codes, or the intervals of a tree model's splits they fall in); ``mult``:
    :func:`skanchors._hashing.row_hash`'s multipliers.
    """
    n_blocks = seeds.shape[0]
    n_feat = codes.shape[1]
    src = np.empty((n_blocks, n, n_feat), np.int32)
    base = np.empty((n_blocks, n), np.intp)
    keys = np.empty((n_blocks * n, n_feat), codes.dtype)
    hashes = np.empty(n_blocks * n, np.uint64)
    rows_total = np.uint64(n_ref)
    for j in range(n_blocks):
        seed = seeds[j]
        for i in range(n):
            row = _below(_word(seed, np.uint64(i + 1)), rows_total)
            base[j, i] = row
            for f in range(n_feat):
                src[j, i, f] = row
    for p in range(pair_block.shape[0]):
        j = pair_block[p]
        f = pair_feature[p]
        seed = seeds[j]
        offset = slots[p, 0]
        size = np.uint64(slots[p, 1])
        column = np.uint64(f + 1) * np.uint64(n)
        for i in range(n):
            row = base[j, i]
            if not _inside(holds, row, pair_preds, p):
                z = _word(seed, column + np.uint64(i + 1))
                src[j, i, f] = pool_rows[offset + np.intp(_below(z, size))]
    for j in range(n_blocks):
        for i in range(n):
            r = j * n + i
            h = np.uint64(0)
            for f in range(n_feat):
                row = src[j, i, f]
                keys[r, f] = codes[row, f]
                h += np.uint64(hash_codes[row, f]) * mult[f]
            hashes[r] = h
    return src, base, keys, hashes.reshape(n_blocks, n)


@numba.njit(nogil=True, cache=True)
def make_windows(stream_seeds, starts, stops, block, pair_ptr, pair_feature, pair_preds, slots,
                 n_ref, pool_rows, holds, codes, hash_codes, mult):  # fmt: skip
    """``(src, base, keys, hashes)`` of samples ``starts[r]:stops[r]`` of stream ``r``, one
    stream after the other: the rows :func:`make_blocks` gives those samples, without the
    blocks around them (their native values are ``holds[base]``, read where needed).

    Sample ``s`` of a stream is sample ``s % block`` of its block ``s // block``, whose seed is
    ``mix(stream_seeds[r] ^ (s // block))`` (``stream_seeds[r]``: the stream's
    ``mix(mix(seed) ^ key)``). Stream ``r``'s (feature, predicates, pool slot) groups are
    ``pair_ptr[r]:pair_ptr[r + 1]`` of ``pair_feature``, ``pair_preds`` and ``slots``.
    """
    n_req = starts.shape[0]
    total = 0
    for r in range(n_req):
        total += stops[r] - starts[r]
    n_feat = codes.shape[1]
    src = np.empty((total, n_feat), np.int32)
    base = np.empty(total, np.intp)
    keys = np.empty((total, n_feat), codes.dtype)
    hashes = np.empty(total, np.uint64)
    rows_total = np.uint64(n_ref)
    out = 0
    for r in range(n_req):
        stream = stream_seeds[r]
        for s in range(starts[r], stops[r]):
            b = s // block
            i = s - b * block
            seed = _word(stream ^ np.uint64(b), np.uint64(0))
            row = _below(_word(seed, np.uint64(i + 1)), rows_total)
            base[out] = row
            for f in range(n_feat):
                src[out, f] = row
            for p in range(pair_ptr[r], pair_ptr[r + 1]):
                if not _inside(holds, row, pair_preds, p):
                    f = pair_feature[p]
                    column = np.uint64(f + 1) * np.uint64(block)
                    z = _word(seed, column + np.uint64(i + 1))
                    pick = np.intp(_below(z, np.uint64(slots[p, 1])))
                    src[out, f] = pool_rows[slots[p, 0] + pick]
            h = np.uint64(0)
            for f in range(n_feat):
                at = src[out, f]
                keys[out, f] = codes[at, f]
                h += np.uint64(hash_codes[at, f]) * mult[f]
            hashes[out] = h
            out += 1
    return src, base, keys, hashes


@numba.njit(nogil=True, cache=True)
def coverage_counts(words, anchors):
    """Reference rows satisfying every predicate of each anchor: ``words[p]`` is predicate
    ``p``'s packed mask as 64-bit words, ``anchors[a]`` the predicates of anchor ``a``
    (shorter anchors padded by repeating one). The AND of the masks, counted by the SWAR
    popcount, without the intermediate arrays of ``TabularInstance.coverage``'s numpy twin."""
    n_anchors, size = anchors.shape
    out = np.zeros(n_anchors, np.int64)
    for a in range(n_anchors):
        total = np.uint64(0)
        for w in range(words.shape[1]):
            x = words[anchors[a, 0], w]
            for k in range(1, size):
                x &= words[anchors[a, k], w]
            x = x - ((x >> _ONE) & _M1)
            x = (x & _M2) + ((x >> _TWO) & _M2)
            x = (x + (x >> _FOUR)) & _M4
            total += (x * _H01) >> _TOP
        out[a] = np.int64(total)
    return out
