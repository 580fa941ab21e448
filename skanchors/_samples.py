"""The samples of one search: their keys, labels and what the estimates need of them.

A :class:`SampleStore` keeps every perturbation drawn for an instance once (its keys or its
place in a stream, its label, and which predicates it satisfies or its base row) and counts,
for any candidate anchor, the stored samples that are valid draws for it;
:class:`CandidateArms` is the bandit's view of a list of candidates over a store. The
sampler protocol the store talks to is described in :mod:`skanchors.samplers._protocol`.
"""

from __future__ import annotations

import contextlib

import numpy as np
import scipy.sparse

from ._arms import Arms, ArmsCapabilities
from ._hashing import lookup
from ._stratified import StratifiedArms
from ._wide import ExtensionCounts, PackedMasks

__all__ = ["SampleStore", "CandidateArms"]

# SampleStore.counts takes the rows in blocks of at most this many cells (rows x candidates).
_COUNT_CELLS = 1 << 22
# ... and multiplies by the candidates' matrix as a sparse one from this many predicates.
_SPARSE_FROM = 64

# Samples of at least this many keys (features, words) are kept in a narrower integer type,
# or as bits (PackedMasks) when the instance is replayable.
_NARROW_FROM = 64
_PACK_FROM = 64


def _key_dtype(keys):
    """The narrowest integer dtype holding ``keys`` (their own dtype if not integers)."""
    if keys.dtype.kind not in "iu" or keys.size == 0:
        return keys.dtype if keys.size else np.dtype(np.int8)
    low, high = int(keys.min()), int(keys.max())
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return np.dtype(dtype)
    return keys.dtype


class _Predictions:
    """The model's predictions for one search: each distinct row predicted once, and counted.

    ``predict`` maps model input to class indices (one model call); ``target`` is the class
    whose precision is measured; ``shared`` (:class:`skanchors._sharing.Shared` or None) sends
    predictions through the explainer's prediction cache, if it has one, for the searches of
    other rows.
    """

    draws_reference_rows = False

    def __init__(self, instance, predict, target, rng, shared):
        self.instance = instance
        self.predict = predict
        self.target = target
        self.rng = rng
        self.shared = shared
        self._cache = {}
        self.n_model_calls = 0
        self.n_rows_predicted = 0

    @property
    def correct(self):
        return self.labels[: self.size] == self.target

    def _label(self, keys, hashes=None, blocks=None):
        """Predicted class of every row of ``keys``; each distinct row is predicted once.

        ``hashes`` are the rows' ``instance.hash_rows`` when already known. ``blocks``
        (stream reads with an enabled shared cache): ``(key, lo, hi)`` segments of stream
        blocks that tile the rows: rows whose block's labels the cache already knows
        (the cache's ``label_memo``) skip the hash lookups. Only the dictionary cache reads
        them; the compiled table (numba) is cheaper per row than they.
        """
        shared = self.shared is not None and self.shared.caching
        if blocks is not None and shared and not self.shared.cache.compiled:
            return self._label_memo(keys, hashes, blocks)
        if hashes is None:
            hashes = self.instance.hash_rows(keys)
        if shared:
            # The shared cache already holds every prediction this search made.
            return self._label_shared(keys, hashes)
        uniq, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        cache = self._cache
        labels = lookup(cache, uniq)
        todo = np.flatnonzero(labels < 0)
        if todo.size and self.shared is not None and self.shared.cache is not None:
            labels[todo] = self._label_shared(keys[first[todo]], uniq[todo])
        elif todo.size:
            labels[todo] = self._call(keys[first[todo]])
        if todo.size:
            cache.update(zip(uniq[todo].tolist(), labels[todo].tolist()))
        return labels[inverse.ravel()]

    def _label_memo(self, keys, hashes, blocks):
        """:meth:`_label` through the cache's labels of stream blocks (see there)."""
        space = (self.shared.namespace, self.instance.stream_namespace)
        memo = self.shared.cache.label_memo
        arrays = [(memo(space, key), lo, hi) for key, lo, hi in blocks]
        if len(arrays) == 1:
            labels = arrays[0][0][arrays[0][1] : arrays[0][2]].copy()
        else:
            labels = np.concatenate([known[lo:hi] for known, lo, hi in arrays])
        todo = np.flatnonzero(labels < 0)
        self.shared.cache.count_hits(len(labels) - len(todo))
        if todo.size:
            labels[todo] = self._label(keys[todo], hashes[todo])
            at = 0
            for known, lo, hi in arrays:
                known[lo:hi] = labels[at : at + hi - lo]
                at += hi - lo
        return labels

    def _call(self, keys):
        predicted = np.asarray(self.predict(self.instance.decode(keys)))
        if len(keys):
            self.n_model_calls += 1
            self.n_rows_predicted += len(keys)
        return predicted

    def _label_shared(self, keys, hashes):
        """Labels through the shared cache: known ones are free, the rest predicted once
        (rows may repeat)."""
        shared = self.shared
        cache, space = shared.cache, (shared.namespace, self.instance.stream_namespace)
        epoch = cache.epoch  # read before the claim: a restart after it ends the wait below
        labels, mine, theirs, dups, dup_of = cache.claim_rows(space, hashes, self)
        if mine.size or (theirs.size and shared.merged):
            try:
                predicted = self._call(keys[mine])
            except BaseException:
                cache.fill(space, hashes[mine], None, self)
                raise
            labels[mine] = predicted
            cache.fill(space, hashes[mine], predicted, self)
        if dups.size:
            labels[dups] = labels[dup_of]
        if theirs.size:
            # Rows explained together: the searches predicting them need the turn to store them.
            turn = shared.merged.paused() if shared.merged else contextlib.nullcontext()
            with turn:
                labels[theirs] = cache.wait(space, hashes[theirs], since=epoch)
            lost = theirs[labels[theirs] < 0]
            if lost.size:  # their search failed, or the cache started over
                labels[lost] = self._call(keys[lost])
        return labels


class SampleStore(_Predictions):
    """Every perturbation drawn while explaining one instance.

    A sample drawn from ``D(z | A_s)`` counts for candidate ``A`` when it is a draw from
    ``D(z | A)``. For samplers whose flag ``exact_reuse`` is true (a product distribution, such
    as the text samplers with independent masking), that holds whenever ``A_s`` is a subset of
    ``A`` and the predicates of ``A`` hold on the sample. The tabular sampler keeps the feature
    correlations of real rows, and there a sample that satisfies ``A`` *by chance* comes from a
    different distribution than one made to satisfy it (its other features are correlated with
    the chance event): reusing it as is inflated precision by up to 0.09 on Adult. There a
    sample counts for the set it was drawn for (across rounds and the validation) and, through
    :class:`StratifiedArms`, for its children in the stratum it is an exact draw of.

    Parameters
    ----------
    instance : instance sampler
    predict : callable
        Maps model input to predicted class indices (one model call).
    target : int
        Class index whose precision is measured.
    rng : numpy.random.Generator
    shared : skanchors._sharing.Shared or None
        When given and the instance offers streams (``capabilities.streams``), samples are read
        from the instance's streams instead of drawn with ``rng``, and predictions go
        through the prediction cache (where there is one), so searches of other rows reuse
        them.
    """

    def __init__(self, instance, predict, target, rng, shared=None):
        caps = instance.capabilities
        shared = shared if caps.streams else None
        super().__init__(instance, predict, target, rng, shared)
        self._cursor = {}  # stream positions read so far, per conditioning set
        cap = 1024
        self.exact_reuse = caps.exact_reuse
        self.streamed = self.shared is not None
        # Which predicates each sample satisfies: only subset reuse (exact_reuse) reads it,
        # and it is kept unless the store keeps the keys and can read it off them
        # (``keys_tell_holds``: ``holds_of``).
        self.holds = None
        if self.exact_reuse and (self.streamed or not caps.keys_tell_holds):
            self.holds = np.zeros((cap, instance.n_predicates), dtype=bool)
        self.anchor_id = np.zeros(cap, dtype=np.int64)
        self.labels = np.zeros(cap, dtype=np.int64)
        self.keys = None
        # A long document's samples are kept as bits and their draws' states, not as keys.
        self.masks = None
        if (
            self.exact_reuse
            and not self.streamed
            and self.holds is None
            and caps.replayable
            and instance.n_predicates >= _PACK_FROM
        ):
            self.masks = PackedMasks(instance, rng, cap)
        self.size = 0
        # Samples read from streams are kept as their places in the streams, from which the
        # examples' keys are read again, not as their keys (a thousand of them per sample on
        # a wide table): the store rows of each window read start at ``_window_rows[k]``
        # with sample ``_window_starts[k]`` of its stream.
        self._window_rows, self._window_starts = [], []
        self._key_columns = None  # (width, dtype) of the keys
        # Stratified reuse (StratifiedArms) needs the base rows' own predicate values: kept as
        # the base row (``base``) when the instance reads them off it (``stream_base_rows``:
        # ``native_of``).
        self.stratified = caps.stratified
        self.native = self.base = None
        if self.stratified and self.streamed and caps.stream_base_rows:
            self.base = np.zeros(cap, dtype=np.int64)
        elif self.stratified:
            self.native = np.zeros((cap, instance.n_predicates), dtype=bool)
        self._anchors = []  # conditioning sets, indexed by anchor_id
        self._conditioning = None  # their sparse matrix (_conditioning_matrix)
        self._anchor_index = {}

    def arms(self, candidates, parents=None, fresh=False):
        """The bandit's arms for ``candidates`` (``parents[i]``: ``candidates[i]`` minus one
        predicate, for the stratified estimate; None for plain counts). With ``fresh``, the
        arms count only the samples drawn from now on (the validation of chosen rules)."""
        if fresh:
            return CandidateArms(self, candidates, since=self.size)
        if self.stratified and parents is not None:
            return StratifiedArms(self, candidates, parents)
        return CandidateArms(self, candidates, parents=parents)

    def _id(self, anchor):
        anchor = tuple(sorted(anchor))
        i = self._anchor_index.get(anchor)
        if i is None:
            i = self._anchor_index[anchor] = len(self._anchors)
            self._anchors.append(anchor)
        return i

    def _grow(self, extra):
        need = self.size + extra
        cap = self.anchor_id.shape[0]
        if need <= cap:
            return
        new_cap = max(need, 2 * cap)
        for name in ("holds", "anchor_id", "labels", "keys", "native", "base"):
            old = getattr(self, name)
            if old is None:
                continue
            new = np.zeros((new_cap,) + old.shape[1:], dtype=old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)
        if self.masks is not None:
            self.masks.grow(self.size, new_cap)

    def draw(self, requests):
        """Draw samples for several anchors and label them with a single model call.

        Parameters
        ----------
        requests : list of (tuple of int, int)
            ``(anchor, n)`` pairs.

        Returns
        -------
        start, stop : int
            The new samples are rows ``start:stop`` of the store.
        """
        if self.shared is not None:
            windows, ids, sizes = [], [], []
            for anchor, n in requests:
                i = self._id(anchor)
                start = self._cursor.get(i, 0)
                self._cursor[i] = start + n
                windows.append((self._anchors[i], start, start + n))
                ids.append(i)
                sizes.append(n)
            extra = {"return_base": True} if self.base is not None else {}
            keys, holds, native, hashes, blocks = self.instance.stream_windows(
                windows,
                self.shared.seed,
                self.shared.cache,
                return_holds=self.holds is not None,
                **extra,
            )
            at = self.size
            ids = np.repeat(np.array(ids, dtype=np.int64), sizes)
            out = self._store(np.ascontiguousarray(keys), holds, ids, native, hashes, blocks)
            for (_, start, _), n in zip(windows, sizes):
                self._window_rows.append(at)
                self._window_starts.append(start)
                at += n
            return out
        keys, holds, ids, native, states = [], [], [], [], []
        for anchor, n in requests:
            if self.masks is not None:
                states.append(self.rng.bit_generator.state)
            if self.stratified:
                k, h, nat = self.instance.sample(anchor, n, self.rng, return_native=True)
                native.append(nat)
            else:
                k, h = self.instance.sample(anchor, n, self.rng)
            keys.append(k)
            holds.append(h)
            ids.append(np.full(n, self._id(anchor)))
        # (one request: its arrays as they are, not copies: a long document's are large)
        join = (lambda parts: parts[0]) if len(requests) == 1 else np.concatenate
        keys = np.ascontiguousarray(join(keys))
        native = join(native) if self.stratified else None
        if self.masks is not None:
            self.masks.record(self.size, requests, states)
        return self._store(keys, join(holds), join(ids), native, None)

    def _store(self, keys, holds, ids, native, hashes, blocks=None):
        """Label new samples (one model call) and append them; returns ``(start, stop)``.
        ``ids`` are the samples' conditioning-set ids, ``native`` the native matrix or, with
        ``self.base``, the base rows."""
        labels = self._label(keys, hashes, blocks)
        n_new = len(labels)
        if self._key_columns is None:
            self._key_columns = (keys.shape[1], keys.dtype)
        if not self.streamed and self.masks is None:
            # The keys are kept (for the examples) in the narrowest integer type that holds
            # them, widened when a later batch needs it: a search of a long document keeps
            # hundreds of thousands of samples of a thousand keys each. (narrow rows cost
            # little to keep whatever their type: not worth a min and a max)
            narrow = _key_dtype(keys) if keys.shape[1] >= _NARROW_FROM else keys.dtype
            if self.keys is None:
                self.keys = np.zeros((self.anchor_id.shape[0], keys.shape[1]), dtype=narrow)
            elif np.promote_types(self.keys.dtype, narrow) != self.keys.dtype:
                self.keys = self.keys.astype(np.promote_types(self.keys.dtype, narrow))
        self._grow(n_new)
        start, stop = self.size, self.size + n_new
        if self.masks is not None:
            self.masks.put(start, holds)
        elif not self.streamed:
            self.keys[start:stop] = keys
        if self.holds is not None:
            self.holds[start:stop] = holds
        self.anchor_id[start:stop] = ids
        self.labels[start:stop] = labels
        if self.base is not None:
            self.base[start:stop] = native
        elif self.stratified:
            self.native[start:stop] = native
        self.size = stop
        return start, stop

    def keys_of(self, rows):
        """The keys of samples ``rows`` (kept, or read again from their streams)."""
        rows = np.asarray(rows, dtype=np.intp)
        if self.masks is not None:
            return self.masks.keys_of(rows)
        if not self.streamed:
            return self.keys[rows]
        width, dtype = self._key_columns or (0, np.int64)
        if not rows.size:
            return np.zeros((0, width), dtype=dtype)
        windows = [
            (self._anchors[i], p, p + 1)
            for i, p in zip(self.anchor_id[rows].tolist(), self.positions(rows).tolist())
        ]
        shared = self.shared
        return self.instance.stream_windows(windows, shared.seed, shared.cache, False)[0]

    def positions(self, rows):
        """Places of samples ``rows`` in their streams (streamed stores)."""
        rows = np.asarray(rows, dtype=np.int64)
        first = np.array(self._window_rows, dtype=np.int64)
        k = np.searchsorted(first, rows, side="right") - 1
        return np.array(self._window_starts, dtype=np.int64)[k] + rows - first[k]

    def native_rows(self, start, stop):
        """``(matrix, rows)``: the native values of sample ``start + s`` are row ``rows[s]``
        of ``matrix`` (the store's own, or the instance's reference rows')."""
        if self.base is None:
            return self.native, np.arange(start, stop, dtype=np.intp)
        return self.instance.native_of(slice(None)), self.base[start:stop]

    def native_cells(self, rows, columns):
        """``native[rows, columns]`` (broadcast as numpy indexing does)."""
        if self.base is None:
            return self.native[rows, columns]
        return self.instance.native_of(self.base[rows], columns)

    def valid(self, candidates, start=0, stop=None, reuse=None):
        """Boolean matrix (rows start:stop x candidates) of which samples count for which.

        ``reuse="subset"`` counts samples drawn for any subset of the candidate that satisfy
        it; ``"exact"`` only samples drawn for the candidate itself. ``None`` picks the
        unbiased choice for the sampler (see the class docstring).
        """
        stop = self.size if stop is None else stop
        out = np.zeros((max(stop - start, 0), len(candidates)), dtype=bool)
        if not candidates or stop <= start:
            return out
        relevant, validity = self._validity(candidates, reuse)
        rows = start + np.flatnonzero(relevant[self.anchor_id[start:stop]])
        for block in self._blocks(rows, len(candidates)):
            out[block - start] = validity(block)
        return out

    def counts(self, candidates, start=0, stop=None, reuse=None, extensions=None):
        """(n_samples, n_positives) of each candidate over rows ``start:stop`` (all rows by
        default), as :meth:`valid` counts them.

        Only the samples drawn for a set some candidate can count them for are read, in
        blocks, so that the (rows x candidates) matrices stay small: a round of a long
        document has thousands of candidates and the store hundreds of thousands of rows
        (one matrix over all of them took 2.5 GB). ``extensions``
        (:class:`skanchors._wide.ExtensionCounts` of the candidates) counts candidates that
        each add one predicate to a parent rule with one pass over the parents' samples.
        """
        stop = self.size if stop is None else stop
        n_samples = np.zeros(len(candidates))
        n_positives = np.zeros(len(candidates))
        if not candidates or stop <= start:
            return n_samples, n_positives
        if extensions is not None and self._reuse(reuse) == "subset":
            return extensions.count(self, start, stop)
        relevant, validity = self._validity(candidates, reuse)
        rows = start + np.flatnonzero(relevant[self.anchor_id[start:stop]])
        correct = (self.labels[rows] == self.target).astype(np.float32)
        at = 0
        for block in self._blocks(rows, len(candidates)):
            valid = validity(block)
            n_samples += valid.sum(axis=0)
            # float32 products are exact for counts below 2**24 (a block has fewer rows).
            n_positives += correct[at : at + len(block)] @ valid
            at += len(block)
        return n_samples, n_positives

    def valid_indices(self, candidate, reuse=None):
        """Indices of the samples that count for ``candidate`` (in blocks, as :meth:`counts`)."""
        relevant, validity = self._validity([candidate], reuse)
        rows = np.flatnonzero(relevant[self.anchor_id[: self.size]])
        found = [block[validity(block)[:, 0]] for block in self._blocks(rows, 1)]
        return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)

    def _blocks(self, rows, n_candidates):
        """``rows`` in blocks of at most ``_COUNT_CELLS`` (rows x candidates or predicates)."""
        step = max(1, _COUNT_CELLS // max(n_candidates, self.instance.n_predicates))
        return [rows[lo : lo + step] for lo in range(0, len(rows), step)]

    def _reuse(self, reuse):
        if reuse is None:
            return "subset" if self.exact_reuse else "exact"
        return reuse

    def _validity(self, candidates, reuse):
        """``(relevant, validity)`` for :meth:`valid`: which conditioning sets some candidate
        can count samples of, and a function ``rows -> valid matrix of those rows``."""
        reuse = self._reuse(reuse)
        relevant = np.zeros(len(self._anchors), dtype=bool)
        if reuse == "exact":
            cand_ids = np.array([self._anchor_index.get(tuple(sorted(c)), -1) for c in candidates])
            relevant[cand_ids[cand_ids >= 0]] = True
            return relevant, lambda rows: self.anchor_id[rows, None] == cand_ids[None, :]
        if not self.exact_reuse:
            raise ValueError(
                "reuse='subset' needs which predicates each sample satisfies, which the store "
                "keeps only for samplers with exact_reuse."
            )
        # Conditioning set of the sample contained in the candidate, and candidate holds, as
        # products with the candidates' 0/1 matrix, sparse for long texts (a thousand words
        # make thousands of candidates of a few words each: dense products took a fifth of a
        # long document's search; for a sentence they are cheaper than scipy's set-up).
        # float32 sums of 0/1 are exact below 2**24.
        d = self.instance.n_predicates
        members = [sorted(set(c)) for c in candidates]
        sizes = np.array([len(m) for m in members], dtype=np.float32)
        if d >= _SPARSE_FROM:
            mat = scipy.sparse.csr_matrix(
                (
                    np.ones(int(sizes.sum()), dtype=np.float32),
                    np.fromiter((p for m in members for p in m), dtype=np.intp),
                    np.concatenate([[0], np.cumsum(sizes, dtype=np.intp)]),
                ),
                shape=(len(candidates), d),
            )
        else:
            mat = np.zeros((len(candidates), d), dtype=np.float32)
            for j, m in enumerate(members):
                mat[j, m] = 1.0
        # A conditioning set is in a candidate when the candidate holds all its predicates.
        conditioning, set_sizes = self._conditioning_matrix()
        shared = conditioning @ mat.T
        shared = shared.toarray() if scipy.sparse.issparse(shared) else np.asarray(shared)
        subset = shared == set_sizes[:, None]
        relevant |= subset.any(axis=1)

        def validity(rows):
            holds = self._holds_rows(rows).astype(np.float32)
            return subset[self.anchor_id[rows]] & ((mat @ holds.T).T == sizes)

        return relevant, validity

    def _holds_rows(self, rows):
        """Which predicates samples ``rows`` (indices or a slice) satisfy (kept, or read off
        their keys or bits)."""
        if self.masks is not None:
            return self.masks.rows(rows)
        if self.holds is not None:
            return self.holds[rows]
        return self.instance.holds_of(self.keys[rows])

    def _holds_columns(self, rows, columns):
        """``_holds_rows(rows)[:, columns]`` (only those bits, for samples kept as bits)."""
        if self.masks is not None:
            return self.masks.columns(rows, columns)
        return self._holds_rows(rows)[:, columns]

    def _holds_at(self, rows, columns):
        """Whether sample ``rows[i]`` satisfies predicate ``columns[i]``, for each ``i``."""
        if self.masks is not None:
            return self.masks.at(rows, columns)
        return self._holds_rows(rows)[np.arange(len(rows)), columns]

    def _conditioning_matrix(self):
        """The conditioning sets as a sparse (sets x predicates) float32 0/1 matrix, and their
        sizes; made again when sets were added."""
        known = self._conditioning
        n = len(self._anchors)
        if known is None or known[0].shape[0] < n:
            sizes = np.array([len(a) for a in self._anchors], dtype=np.intp)
            indices = np.fromiter(
                (p for a in self._anchors for p in a), dtype=np.intp, count=int(sizes.sum())
            )
            matrix = scipy.sparse.csr_matrix(
                (
                    np.ones(len(indices), dtype=np.float32),
                    indices,
                    np.concatenate([[0], np.cumsum(sizes)]),
                ),
                shape=(n, self.instance.n_predicates),
            )
            self._conditioning = known = (matrix, sizes.astype(np.float32))
        return known

    def stats(self, candidates, reuse=None):
        """(n_samples, n_positives) of each candidate over the whole store."""
        return self.counts(candidates, reuse=reuse)


class CandidateArms(Arms):
    """The bandit's view of a list of candidate anchors.

    ``pull`` draws for the requested arms in one model call; the new samples then update the
    counts of *every* arm they are valid for, not only the pulled ones. ``since``: only the
    store's samples from that row on count (0: all of them).
    """

    capabilities = ArmsCapabilities(pulls_each=True)

    def __init__(self, store, candidates, reuse=None, since=0, parents=None):
        self.store = store
        self.candidates = list(candidates)
        self.reuse = reuse
        # candidates that each add one predicate to a parent: counted parent by parent
        self._extensions = None
        if parents is not None and store.exact_reuse:
            self._extensions = ExtensionCounts.build(self.candidates, parents)
        self.n_samples, self.n_positives = store.counts(
            self.candidates, since, reuse=reuse, extensions=self._extensions
        )

    def pull(self, indices, n):
        self.pull_each(indices, [n] * len(indices))

    def pull_each(self, indices, counts):
        """Draw ``counts[j]`` samples for arm ``indices[j]``, all in one model call."""
        requests = [(self.candidates[i], int(c)) for i, c in zip(indices, counts)]
        start, stop = self.store.draw(requests)
        n_samples, n_positives = self.store.counts(
            self.candidates, start, stop, self.reuse, extensions=self._extensions
        )
        self.n_samples += n_samples
        self.n_positives += n_positives
