"""What a search keeps of the samples of a long document, and how it counts them per candidate.

A text search draws perturbations that keep each word or not, and it reads two things off them
again: which words each sample kept (to count the samples of a candidate anchor, round after
round) and, at the end, the keys of a few samples (the anchor's examples). Kept as one integer
per word and sample, a document of ``d`` words costs ``d`` bytes a sample at best; a search of
a long document near the decision boundary draws tens of thousands of samples.

:class:`PackedMasks` keeps, for instances whose draws can be made again cheaply
(``replayable``), one bit per word and sample, and the state of the generator before each
draw: the keys of a sample are drawn again when asked for (the same keys, the generator being
in the same state).

:class:`ExtensionCounts` counts the samples of a round's candidates, each of them a rule of the
round before (its *parent*) plus one predicate, under subset reuse (a sample drawn for ``S``
counts for a candidate ``C`` that contains ``S`` when it satisfies ``C``). For ``C = P + {q}``
the samples that count are those drawn for a subset of ``P`` that satisfy ``P`` and ``q``,
and those drawn for a set ``S`` with ``S - P = {q}`` that satisfy ``C``. So one pass over the
samples drawn for subsets of ``P`` that satisfy ``P`` counts every extension of ``P`` at once
(how many of them kept each word), where testing each sample against each candidate costs
(samples x candidates x predicates): with ``d`` words a round has about ``d`` candidates.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ExtensionCounts", "PackedMasks"]

# Rows are unpacked and counted in blocks of at most this many cells (rows x predicates).
_BLOCK_CELLS = 1 << 22


class PackedMasks:
    """Which predicates each sample of a store satisfies, one bit each, and its draw.

    ``record(start, requests, states)`` notes the draws whose samples are rows ``start:...``
    of the store: ``requests`` the ``(anchor, n)`` given to ``instance.sample`` and
    ``states`` the generator's state before each. :meth:`keys_of` draws them again.
    """

    def __init__(self, instance, rng, capacity):
        self.instance = instance
        self.width = int(instance.n_predicates)
        self.bytes = np.zeros((capacity, (self.width + 7) // 8), dtype=np.uint8)
        self._bit_generator = type(rng.bit_generator)
        self._starts, self._requests, self._states = [], [], []

    def grow(self, size, capacity):
        new = np.zeros((capacity, self.bytes.shape[1]), dtype=np.uint8)
        new[:size] = self.bytes[:size]
        self.bytes = new

    def put(self, start, holds):
        holds = np.asarray(holds, dtype=bool)
        self.bytes[start : start + len(holds)] = np.packbits(holds, axis=1, bitorder="little")

    def record(self, start, requests, states):
        for (anchor, n), state in zip(requests, states):
            self._starts.append(start)
            self._requests.append((tuple(anchor), int(n)))
            self._states.append(state)
            start += int(n)

    def rows(self, rows):
        """The boolean matrix of rows ``rows`` (an index array or a slice)."""
        packed = self.bytes[rows]
        return np.unpackbits(packed, axis=1, count=self.width, bitorder="little").view(bool)

    def columns(self, rows, columns):
        """``rows(rows)[:, columns]`` without unpacking the other columns."""
        columns = np.asarray(columns, dtype=np.intp)
        rows = np.asarray(rows, dtype=np.intp)
        cells = self.bytes[rows[:, None], (columns >> 3)[None, :]]
        return ((cells >> (columns & 7).astype(np.uint8)) & 1).view(bool)

    def at(self, rows, columns):
        """Bit ``columns[i]`` of row ``rows[i]``, for each ``i``."""
        columns = np.asarray(columns, dtype=np.intp)
        cells = self.bytes[np.asarray(rows, dtype=np.intp), columns >> 3]
        return ((cells >> (columns & 7).astype(np.uint8)) & 1).view(bool)

    def keys_of(self, rows):
        """The keys of rows ``rows``: their draws made again from the saved states."""
        rows = np.asarray(rows, dtype=np.intp)
        starts = np.asarray(self._starts, dtype=np.intp)
        which = np.searchsorted(starts, rows, side="right") - 1
        out = None
        for k in np.unique(which).tolist():
            generator = self._bit_generator()
            generator.state = self._states[k]
            anchor, n = self._requests[k]
            keys, _ = self.instance.sample(anchor, n, np.random.Generator(generator))
            if out is None:
                out = np.zeros((len(rows), keys.shape[1]), dtype=keys.dtype)
            mine = which == k
            out[mine] = keys[rows[mine] - starts[k]]
        if out is None:
            return np.zeros((0, self.width), dtype=np.int32)
        return out


class ExtensionCounts:
    """Counts of candidates that are each a parent rule plus one predicate (subset reuse).

    Parameters
    ----------
    candidates, parents : lists of tuples of int
        ``candidates[j]`` is ``parents[j]`` plus one predicate. :meth:`build` returns None
        when they are not.
    """

    def __init__(self, n_candidates, groups):
        self.n_candidates = n_candidates
        # parent -> (positions of its candidates in the list, the predicate each adds)
        self.groups = groups

    @classmethod
    def build(cls, candidates, parents):
        if parents is None or len(parents) != len(candidates):
            return None
        groups = {}
        inside = {}  # each parent as given -> (sorted tuple, set)
        seen = set()
        for j, (cand, parent) in enumerate(zip(candidates, parents)):
            known = inside.get(parent)
            if known is None:
                ordered = tuple(sorted(parent))
                known = inside[parent] = (ordered, set(ordered))
            ordered, members = known
            extra = [q for q in cand if q not in members]
            key = frozenset(cand)
            # (a candidate holding its parent, one predicate more, none twice; a rule given
            # twice is left to the general path)
            if len(extra) != 1 or len(key) != len(cand) or len(cand) != len(ordered) + 1:
                return None
            if key in seen:
                return None
            seen.add(key)
            positions, added = groups.setdefault(ordered, ([], []))
            positions.append(j)
            added.append(extra[0])
        groups = {
            p: (np.array(js, dtype=np.intp), np.array(qs, dtype=np.intp))
            for p, (js, qs) in groups.items()
        }
        return cls(len(candidates), groups)

    def count(self, store, start, stop):
        """``(n_samples, n_positives)`` of every candidate over rows ``start:stop`` of
        ``store`` (a :class:`~skanchors._samples.SampleStore`)."""
        n = np.zeros(self.n_candidates)
        pos = np.zeros(self.n_candidates)
        if stop <= start:
            return n, pos
        ids = store.anchor_id[start:stop]
        present = np.unique(ids).tolist()
        correct = store.labels[start:stop] == store.target
        anchors = store._anchors
        width = store.instance.n_predicates
        for parent, (positions, added) in self.groups.items():
            inside = set(parent)
            within, one_id, one_q = [], [], []
            for i in present:
                extra = [q for q in anchors[i] if q not in inside]
                if not extra:
                    within.append(i)
                elif len(extra) == 1:
                    one_id.append(i)
                    one_q.append(extra[0])
            # Samples drawn for a subset of the parent that satisfy it: each counts for every
            # extension by a predicate it satisfies.
            if within:
                rows = np.flatnonzero(np.isin(ids, within))
                if rows.size and parent:
                    rows = rows[store._holds_columns(start + rows, list(parent)).all(axis=1)]
                if rows.size:
                    many = len(added) * 16 >= width
                    cnt, good = _column_counts(store, start + rows, correct[rows], added, many)
                    n[positions] += cnt
                    pos[positions] += good
            # Samples drawn for the parent plus one predicate q (minus some of the parent):
            # they count for that extension only, when they satisfy it.
            if one_id:
                slot = np.full(width, -1, dtype=np.intp)
                slot[added] = np.arange(len(added))
                target = slot[np.asarray(one_q, dtype=np.intp)]
                keep = target >= 0
                if not keep.any():
                    continue
                lookup = np.full(max(one_id) + 1, -1, dtype=np.intp)
                lookup[np.asarray(one_id)[keep]] = target[keep]
                inside_ids = ids < len(lookup)
                local = np.full(len(ids), -1, dtype=np.intp)
                local[inside_ids] = lookup[ids[inside_ids]]
                rows = np.flatnonzero(local >= 0)
                if not rows.size:
                    continue
                local = local[rows]
                need = list(parent)
                ok = store._holds_columns(start + rows, need).all(axis=1) if need else True
                kept = store._holds_at(start + rows, added[local])
                ok = ok & kept
                hit = local[ok]
                n[positions] += np.bincount(hit, minlength=len(added))
                pos[positions] += np.bincount(hit[correct[rows][ok]], minlength=len(added))
        return n, pos


def _column_counts(store, rows, correct, columns, many):
    """How many of the samples ``rows`` (and of those ``correct``) satisfy each predicate of
    ``columns``: whole rows unpacked in blocks when ``many`` columns are asked for, else the
    columns alone."""
    if not many:
        cells = store._holds_columns(rows, columns)
        return cells.sum(axis=0), cells[correct].sum(axis=0)
    width = store.instance.n_predicates
    step = max(1, _BLOCK_CELLS // max(width, 1))
    total = np.zeros(width, dtype=np.int64)
    good = np.zeros(width, dtype=np.int64)
    for lo in range(0, len(rows), step):
        block = store._holds_rows(rows[lo : lo + step])
        total += np.count_nonzero(block, axis=0)
        good += np.count_nonzero(block[correct[lo : lo + step]], axis=0)
    return total[columns], good[columns]
