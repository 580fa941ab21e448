"""The compiled prediction table of :class:`skanchors._speed.cache.SampleCache`, the twin of its
dictionaries (registered in :mod:`skanchors._speed.kernels`; see :mod:`skanchors._compiled`).

An open-addressing hash table of 64-bit row hashes: ``keys`` (0 marks an empty slot; a row
hash of 0 is kept as a fixed odd constant, one more collision of probability 2**-64), ``vals``
(a label >= 0, :data:`IN_FLIGHT` while a search predicts the row, :data:`RELEASED` when that
search failed) and ``owners`` (the search predicting it). Linear probing from the top bits of
the hash times the golden ratio. The kernels run with the GIL held (no ``nogil``), so each call
is atomic for the other Python threads, as the dictionaries it replaces were under the cache's
lock. A row costs a hash and a probe or two, with no Python object per row, so the stream
blocks' label memos, which saved dictionary lookups, are not needed.
"""

import numba
import numpy as np

IN_FLIGHT = -2
RELEASED = -3
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


_ZERO = np.uint64(0xD1B54A32D192ED03)  # where a row hash of 0 is kept (0 marks empty slots)


@numba.njit(inline="always")
def _key(h):
    return h if h != 0 else _ZERO


@numba.njit(inline="always")
def _slot(keys, shift, h):
    # the slot holding h, or the empty slot where it would go
    mask = np.uint64(keys.shape[0] - 1)
    s = (h * _GOLDEN) >> shift
    while keys[s] != 0 and keys[s] != h:
        s = (s + np.uint64(1)) & mask
    return s


@numba.njit(cache=True)
def claim(keys, vals, owners, rows, calls, shift, hashes, owner, call, labels, mine, dups,
          dup_of, theirs):  # fmt: skip
    """Look up every row hash; claim the unknown ones for ``owner``.

    Writes ``labels`` (-1 where unknown) and the index arrays ``mine`` (first occurrence of
    each hash the caller must predict), ``dups`` with ``dup_of`` (later occurrences of those,
    and the row they copy) and ``theirs`` (rows another search is predicting). ``rows`` and
    ``calls`` keep the row and the call (``call``, distinct for every call) that claimed each
    slot: a claim of the same owner from an earlier call (one interrupted before it filled or
    released) is the caller's again, as with the dictionaries. Returns ``(n_mine, n_dups,
    n_theirs, n_known, n_new_slots)``.
    """
    n_mine = n_dups = n_theirs = n_known = n_new = 0
    for i in range(hashes.shape[0]):
        h = _key(hashes[i])
        s = _slot(keys, shift, h)
        labels[i] = -1
        v = vals[s]
        if keys[s] != 0 and v >= 0:
            labels[i] = v
            n_known += 1
        elif keys[s] != 0 and v == IN_FLIGHT and owners[s] == owner and calls[s] == call:
            dups[n_dups] = i  # claimed by an earlier row of this call
            dup_of[n_dups] = rows[s]
            n_dups += 1
        elif keys[s] != 0 and v == IN_FLIGHT and owners[s] != owner:
            theirs[n_theirs] = i
            n_theirs += 1
        else:  # free, released, or the owner's own claim from an earlier call
            if keys[s] == 0:
                keys[s] = h
                n_new += 1
            vals[s] = IN_FLIGHT
            owners[s] = owner
            rows[s] = i
            calls[s] = call
            mine[n_mine] = i
            n_mine += 1
    return n_mine, n_dups, n_theirs, n_known, n_new


@numba.njit(cache=True)
def fill(keys, vals, owners, shift, hashes, labels, owner, release):
    """Record the labels of rows ``owner`` predicted (``release``: it failed; free its
    claims). Returns ``(new known labels, new slots)``."""
    n_known = n_new = 0
    for i in range(hashes.shape[0]):
        h = _key(hashes[i])
        s = _slot(keys, shift, h)
        if keys[s] == 0:  # the table started over since the claim
            if release:
                continue
            keys[s] = h
            n_new += 1
        elif vals[s] >= 0:
            continue
        elif owners[s] != owner and vals[s] == IN_FLIGHT:
            continue
        if release:
            vals[s] = RELEASED
        else:
            vals[s] = labels[i]
            n_known += 1
    return n_known, n_new


@numba.njit(cache=True)
def lookup(keys, vals, shift, hashes, out):
    """``out[i]``: the label of row hash ``i``, -1 where unknown, :data:`IN_FLIGHT` where a
    search is predicting it."""
    for i in range(hashes.shape[0]):
        h = _key(hashes[i])
        s = _slot(keys, shift, h)
        if keys[s] == 0 or vals[s] == RELEASED:
            out[i] = -1
        else:
            out[i] = vals[s]


@numba.njit(cache=True)
def rehash(keys, vals, owners, new_keys, new_vals, new_owners, shift, in_flight_only):
    """Move every entry (``in_flight_only``: only the claims, when the cache starts over)
    into the empty new arrays; returns how many moved. ``rows`` and ``calls`` need not move:
    they are read within the claiming call only."""
    moved = 0
    for s in range(keys.shape[0]):
        h = keys[s]
        if h != 0 and (vals[s] == IN_FLIGHT or not in_flight_only):
            t = _slot(new_keys, shift, h)
            new_keys[t] = h
            new_vals[t] = vals[s]
            new_owners[t] = owners[s]
            moved += 1
    return moved
