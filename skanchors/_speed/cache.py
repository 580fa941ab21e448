"""The prediction cache: perturbations and model predictions shared by the searches of one
fitted explainer (part of the speed layer; the core asks for it through
:mod:`skanchors._sharing`).

A tabular perturbation of ``D(z | A)`` depends on the predicates of ``A`` only, not on the row
being explained, and the tabular sampler draws it from a *stream* (see
:mod:`skanchors._sharing`): sample ``i`` of the stream of a predicate set depends on the
explainer's seed, the set and ``i`` alone. :class:`SampleCache` is what makes streams pay: the
model's prediction of every perturbation is kept (keyed by a 64-bit hash of the perturbation)
and a later search reading the same stream positions gets them without a model call; so are
the stream blocks drawn, and whole searches (a later row whose search would be the same gets
its anchor). The cache only changes costs, never results, as long as the model does not
change; it belongs to the fitted explainer, and ``fit`` starts a new one.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

from .. import _compiled
from .._hashing import STREAM_BLOCK, lookup

__all__ = ["SampleCache"]

# At most this many searches' results are kept (see SampleCache.get_search); when full the
# cache of searches starts over.
_MAX_SEARCHES = 10_000

_IN_FLIGHT = -2  # the compiled table's IN_FLIGHT (skanchors._speed.kernels.table)


def _table_kernels():
    """The compiled prediction table (the speed layer's ``prediction_table``: ``claim``,
    ``fill``, ``lookup``, ``rehash``), or None where compiled kernels are not in use (see
    :mod:`skanchors._compiled`): the dictionaries then keep the predictions."""
    return _compiled.kernel("prediction_table")


class _Table:
    """One namespace's predictions in the compiled hash table (``kernels``: the
    ``prediction_table`` kernel, see :func:`_table_kernels`); grown to keep it at most half
    full."""

    def __init__(self, kernels, capacity=1024):
        self.k = kernels
        self._allocate(capacity)
        self.used = 0  # occupied slots
        self.n_calls = 0  # claim calls so far (each claim's own stamp)

    def _allocate(self, capacity):
        self.keys = np.zeros(capacity, dtype=np.uint64)
        self.vals = np.zeros(capacity, dtype=np.int64)
        self.owners = np.zeros(capacity, dtype=np.int64)
        self.rows = np.zeros(capacity, dtype=np.int64)
        self.calls = np.zeros(capacity, dtype=np.int64)
        self.shift = np.uint64(64 - (capacity.bit_length() - 1))

    def _reserve(self, n):
        capacity = self.keys.shape[0]
        if 2 * (self.used + n) <= capacity:
            return
        while 2 * (self.used + n) > capacity:
            capacity *= 2
        old = (self.keys, self.vals, self.owners)
        self._allocate(capacity)
        self.k.rehash(*old, self.keys, self.vals, self.owners, self.shift, False)

    def restart(self):
        """Forget every label, keeping the claims of searches still predicting (as the
        dictionaries keep them)."""
        old = (self.keys, self.vals, self.owners)
        self._allocate(self.keys.shape[0])
        self.used = self.k.rehash(*old, self.keys, self.vals, self.owners, self.shift, True)

    def claim(self, hashes, owner):
        n = hashes.shape[0]
        self._reserve(n)
        labels = np.empty(n, dtype=np.int64)
        mine, dups, dup_of, theirs = (np.empty(n, dtype=np.intp) for _ in range(4))
        self.n_calls += 1
        n_mine, n_dups, n_theirs, n_known, n_new = self.k.claim(
            self.keys, self.vals, self.owners, self.rows, self.calls, self.shift, hashes, owner,
            self.n_calls, labels, mine, dups, dup_of, theirs,
        )  # fmt: skip
        self.used += n_new
        return labels, mine[:n_mine], dups[:n_dups], dup_of[:n_dups], theirs[:n_theirs], n_known

    def fill(self, hashes, labels, owner):
        """Record labels (None: release the claims); returns the number of new labels."""
        self._reserve(hashes.shape[0])
        release = labels is None
        values = np.zeros(hashes.shape[0], dtype=np.int64) if release else labels
        n_known, n_new = self.k.fill(
            self.keys, self.vals, self.owners, self.shift, hashes,
            np.asarray(values, dtype=np.int64), owner, release,
        )  # fmt: skip
        self.used += n_new
        return n_known

    def lookup(self, hashes):
        out = np.empty(hashes.shape[0], dtype=np.int64)
        self.k.lookup(self.keys, self.vals, self.shift, hashes, out)
        return out


class SampleCache:
    """Stream blocks and model predictions, shared by searches (and threads) of one explainer.

    Predictions are kept in a compiled hash table per namespace with numba (the ``fast``
    extra), in dictionaries otherwise: the same labels either way.

    Parameters
    ----------
    max_size : int
        At most this many predictions are kept; when full the cache starts over (which costs
        model calls, never changes a result). 0 disables sharing.
    """

    def __init__(self, max_size):
        self.max_size = int(max_size)
        self._cond = threading.Condition()
        self._kernels = _table_kernels() if self.max_size > 0 else None
        self._tables = {}  # namespace -> _Table (compiled)
        self._labels = {}  # namespace -> {hash: label} (without numba)
        self._inflight = {}  # namespace -> {hash: owner token} (without numba)
        self._blocks = {}
        # (namespace, stream block key) -> the labels of the block's rows known so far (-1:
        # not yet), read before the hash lookups (see label_memo)
        self._memos = {}
        self._size = 0
        # Times the cache started over (or was cleared): see wait().
        self.epoch = 0
        self.hits = 0  # predictions served from the cache (for diagnostics and tests)
        self._searches = {}  # search key -> what the search found (see get_search)

    @property
    def enabled(self):
        return self.max_size > 0

    @property
    def compiled(self):
        """Whether predictions go to the compiled table (cheap enough per row that the stream
        blocks' label memos would not pay)."""
        return self._kernels is not None and self.max_size > 0

    def __len__(self):
        return self._size

    def __getstate__(self):
        # Pickled (joblib workers, a saved explainer) empty: the lock cannot travel, and the
        # predictions of one model are worth little elsewhere.
        return {"max_size": self.max_size}

    def __setstate__(self, state):
        self.__init__(state["max_size"])

    def clear(self):
        with self._cond:
            for table in self._tables.values():
                table.restart()
            self._labels.clear()
            self._blocks.clear()
            self._memos.clear()
            self._searches.clear()
            self._size = 0
            self.epoch += 1
            self._cond.notify_all()

    # -- whole searches
    def get_search(self, key):
        """What an earlier search with this key found, or None.

        A search reads only streams, which depend on the predicates of its candidate rules,
        the explainer's seed and the search's parameters, never on the row itself (see the
        module docstring): two rows whose predicates are the same in the reference data's
        terms (the same bins and categories) and that anchor the same class go through the
        same search, sample for sample, and find the same anchor. ``key`` says all of that;
        the caller builds it only where it holds.
        """
        return self._searches.get(key) if self.enabled else None

    def has_searches(self):
        """Whether any search's result is kept."""
        return bool(self._searches) and self.enabled

    def put_search(self, key, result):
        """Keep what the search ``key`` found (not when sharing is disabled)."""
        if self.enabled:
            if len(self._searches) >= _MAX_SEARCHES:
                self._searches.clear()
            self._searches[key] = result

    # -- stream blocks
    def get_block(self, key):
        """The stream block ``key``, or None when it is not kept."""
        return self._blocks.get(key)

    def put_block(self, key, block):
        """Keep the stream block ``key`` (not when sharing is disabled)."""
        if self.enabled:
            if len(self._blocks) * STREAM_BLOCK >= 2 * self.max_size:
                self._blocks.clear()
                self._memos.clear()
            self._blocks[key] = block

    def label_memo(self, namespace, block):
        """The labels in ``namespace`` of the rows of stream block ``block`` (its key), as
        known so far: an int64 array of :data:`STREAM_BLOCK` entries, -1 where unknown, that
        the searches reading the block fill in. Searches reading the same block then find its
        labels without hashing and looking up its rows (the dictionary predictions only: the
        compiled table is cheaper per row). Kept as long as the stream blocks are."""
        key = (namespace, block)
        known = self._memos.get(key)
        if known is None:
            known = self._memos[key] = np.full(STREAM_BLOCK, -1, dtype=np.int64)
        return known

    # -- predictions
    def count_hits(self, n):
        """Count ``n`` predictions served without the hash lookups (:meth:`label_memo`)."""
        with self._cond:
            self.hits += n

    def claim_rows(self, namespace, hashes, owner):
        """:meth:`claim` for hashes that may repeat: ``(labels, mine, theirs, dups,
        dup_of)``, where ``mine`` are the first occurrences of the hashes the caller must
        predict and ``dups`` the later occurrences, whose label is that of row ``dup_of``
        once the caller has it."""
        if self._kernels is None or not self.enabled:
            uniq, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
            inverse = inverse.ravel()
            labels, mine, theirs = self.claim(namespace, uniq, owner)
            # every row of a hash the caller predicts copies its first occurrence
            row_labels = labels[inverse]
            with self._cond:  # hits count rows, as the table does
                self.hits += int(np.count_nonzero(row_labels >= 0) - np.count_nonzero(labels >= 0))
            predicted = np.zeros(len(uniq), dtype=bool)
            predicted[mine] = True
            waiting = np.zeros(len(uniq), dtype=bool)
            waiting[theirs] = True
            copies = predicted[inverse]
            copies[first[mine]] = False
            dups = np.flatnonzero(copies)
            return (
                row_labels,
                np.sort(first[mine]).astype(np.intp),  # in row order, as the table gives them
                np.flatnonzero(waiting[inverse]).astype(np.intp),
                dups.astype(np.intp),
                first[inverse[dups]].astype(np.intp),
            )
        with self._cond:
            table = self._tables.get(namespace)
            if table is None:
                table = self._tables[namespace] = _Table(self._kernels)
            labels, mine, dups, dup_of, theirs, n_known = table.claim(hashes, id(owner))
            self.hits += n_known
            return labels, mine, theirs, dups, dup_of

    def claim(self, namespace, hashes, owner):
        """Split hashes into known labels, ones this caller must predict, ones in flight.

        Returns ``(labels, mine, theirs)``: ``labels`` has -1 where unknown; ``mine`` and
        ``theirs`` are index arrays into ``hashes``. The caller predicts ``mine`` and hands
        them to :meth:`fill`; ``theirs`` are being predicted by another search and come with
        :meth:`wait`.
        """
        if self._kernels is not None and self.enabled:
            labels, mine, theirs, _, _ = self.claim_rows(namespace, hashes, owner)
            return labels, mine, theirs
        with self._cond:
            known = self._labels.setdefault(namespace, {})
            busy = self._inflight.setdefault(namespace, {})
            labels = lookup(known, hashes)
            unknown = np.flatnonzero(labels < 0)
            self.hits += len(hashes) - len(unknown)
            if not self.enabled:
                return labels, unknown.astype(np.intp), np.zeros(0, dtype=np.intp)
            todo = hashes[unknown].tolist()
            if busy:
                owners = list(map(busy.get, todo))
                free = np.array([o is None for o in owners], dtype=bool)
                ours = np.array([o is owner for o in owners], dtype=bool)
            else:  # nothing in flight (one search at a time): all of them are the caller's
                free = ours = np.ones(len(todo), dtype=bool)
            busy.update(dict.fromkeys(itertools.compress(todo, free.tolist()), owner))
            mine = unknown[free | ours].astype(np.intp)
            theirs = unknown[~(free | ours)].astype(np.intp)
            return labels, mine, theirs

    def fill(self, namespace, hashes, labels, owner):
        """Record predictions (``labels`` None: the prediction failed; release the claims,
        and end every wait as a restart does, so that no search waits for rows that another
        claims again)."""
        if labels is None:
            with self._cond:
                self.epoch += 1
        if self._kernels is not None and self.enabled:
            with self._cond:
                table = self._tables.get(namespace)
                if table is None:
                    table = self._tables[namespace] = _Table(self._kernels)
                if labels is not None and self._size + len(hashes) > self.max_size:
                    for each in self._tables.values():
                        each.restart()
                    self._blocks.clear()
                    self._size = 0
                    self.epoch += 1
                self._size += table.fill(hashes, labels, id(owner))
                self._cond.notify_all()
            return
        with self._cond:
            busy = self._inflight.get(namespace, {})
            known = self._labels.setdefault(namespace, {})
            # Only their owner releases claims, so every hash handed in is the caller's (and
            # distinct): when the claims are all of them, no other search has any.
            if len(busy) == len(hashes):
                busy.clear()
            else:
                for h in hashes.tolist():
                    busy.pop(h, None)
            if labels is not None and self.enabled:
                if self._size + len(hashes) > self.max_size:
                    self._labels.clear()
                    self._blocks.clear()
                    self._size = 0
                    self.epoch += 1
                    known = self._labels.setdefault(namespace, {})
                before = len(known)
                known.update(zip(hashes.tolist(), labels.tolist()))
                self._size += len(known) - before
            self._cond.notify_all()

    def wait(self, namespace, hashes, since=None):
        """Labels of hashes another search is predicting, once it has them.

        ``since``: the :attr:`epoch` read before the caller's claim. Once the cache has
        started over since then, the wait ends, with -1 for the labels not known (the caller
        predicts those itself): the labels it waited for may have been forgotten and the rows
        claimed again by a search that is waiting for the caller, in a merged model call
        (:mod:`skanchors._speed.batching`), which would never come.
        """
        with self._cond:
            while self._kernels is not None and self.enabled:
                table = self._tables.get(namespace)
                if table is None:
                    return np.full(len(hashes), -1, dtype=np.int64)
                out = table.lookup(hashes)
                if since is not None and self.epoch != since:
                    out[out == _IN_FLIGHT] = -1
                    return out
                if not (out == _IN_FLIGHT).any():
                    # all known, or the owner failed, or the cache started over meanwhile
                    # (-1: the caller predicts those itself)
                    return out
                self._cond.wait()
            while True:
                known = self._labels.get(namespace, {})
                busy = self._inflight.get(namespace, {})
                out = lookup(known, hashes)
                missing = hashes[out < 0].tolist()
                if since is not None and self.epoch != since:
                    return out
                if not missing or not any(h in busy for h in missing):
                    # All known; or the owner failed (its error reaches the caller through the
                    # model), or the cache started over meanwhile: the caller predicts the
                    # missing ones itself.
                    return out
                self._cond.wait()
