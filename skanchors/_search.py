"""Beam search over predicate sets, and the sample bookkeeping shared by all modalities.

The search talks to an *instance sampler* (one explained row or document), which knows the
modality, through four members:

``n_predicates``
    number of candidate predicates of the instance.
``sample(anchor, n, rng) -> (keys, holds)``
    ``n`` perturbations drawn from ``D(z | anchor)``: ``keys`` is an integer matrix with one
    row per perturbation that identifies it exactly (equal rows are equal model inputs), and
    ``holds`` is the boolean matrix of which of the instance's predicates each one satisfies.
``decode(keys)``
    the model input for rows of ``keys``.
``coverage(anchors)``
    coverage of each anchor (a tuple of predicate indices) under the perturbation
    distribution; the search maximises it.
``reference_coverage(anchor)``
    share of the reference data the anchor applies to (reported as ``Anchor.coverage``).
``exact_reuse`` (optional, default False)
    True when a sample drawn for ``A_s`` that satisfies ``A`` (a superset of ``A_s``) is an
    exact draw of ``D(z | A)``, as with independent word masking.
``holds_of(keys)`` (optional, with ``exact_reuse``)
    The ``holds`` matrix of rows of ``keys``, when the keys tell it (text: a word is kept
    exactly when its key is -1); the store then keeps the keys only.
``replayable`` (optional, default False, with ``holds_of``)
    True when ``sample`` draws from its generator only, and cheaply: a store of an instance
    of many predicates then keeps one bit per predicate and sample and the generator's state
    before each draw, and draws a sample again when its keys are asked for
    (:class:`skanchors._wide.PackedMasks`).
``predicate_groups`` (optional)
    An integer per predicate; the predicates of a group are nested sets (tabular: the bounds
    on one side of a feature, ``age <= 28`` inside ``age <= 36``). A rule is extended by a
    predicate of a group it already has only to narrow it; the wider predicate is then left
    out of the printed anchor. Default: every predicate a group of its own.
``predicate_features`` and ``sample(..., return_native=True)`` (optional)
    For samplers that build a perturbation from a random reference row (tabular): the
    feature each predicate constrains, and which predicates the reference row satisfied
    before the anchor was imposed. They enable the stratified estimate of
    :class:`StratifiedArms`.

``stream_windows(requests, seed, cache, return_holds)``, ``stream_namespace`` (optional)
    Samplers whose ``D(z | A)`` depends on the predicates of ``A`` and not on the instance
    (tabular) offer streams: sample ``i`` of a predicate set depends on the seed, the set and
    ``i`` only. Searches of different rows then read the same samples and share their
    predictions through :class:`skanchors._cache.SampleCache`, without changing any result.
    ``requests`` lists ``(anchor, start, stop)`` windows of streams, all read at once (one
    bandit step's draws); the answer is ``(keys, holds, native, hashes, memos)`` over all of
    them: ``hashes`` are the :func:`~skanchors._cache.row_hash` of the keys, computed once
    per stream block rather than once per search; with ``return_holds=False`` the holds
    matrix is None (asked by stores that do not keep it); ``memos`` are
    ``(memo, lo, hi)`` segments, one per stream block read, where the search keeps the
    labels of those rows of the block (see :meth:`_Predictions._label`). A store keeps a
    streamed sample as its place in its stream, and reads the keys of the examples again
    from the streams when the search ends.
``stream_windows(..., return_base=True)`` and ``native_of(base, columns=None)`` (optional)
    The base rows (indices) in place of ``native``, and the native values of base rows
    (the cells ``[base, columns]`` with ``columns``): the store then keeps one integer per
    streamed sample instead of its row of ``native``.

Samples are stored once (their keys or places in streams, their labels, and what the estimate
needs of them: which predicates they satisfy, or their base rows) and reused by every candidate
they are valid draws for (see :class:`SampleStore`); all samples one bandit step needs go to
the model in one call, and perturbations that repeat are predicted once.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import scipy.sparse

from ._bandit import (
    SCALAR_ARMS,
    _ranking,
    _two_term_rate_scalar,
    arm_bounds,
    arm_means,
    stratified_bound_scalar,
    stratified_kl_bounds,
)
from ._cache import STREAM_BLOCK, lookup, row_hash
from ._numba import compiled
from ._wide import ExtensionCounts, PackedMasks

__all__ = [
    "SampleStore",
    "ReferenceStore",
    "CandidateArms",
    "ReferenceArms",
    "StratifiedArms",
    "beam_search",
    "estimate",
    "SearchResult",
]

# The validation step accepts a candidate whose estimated precision reaches the threshold and
# whose lower confidence bound is within ACCEPTANCE_TOLERANCE of it; it stops sampling a
# candidate whose estimate is below the threshold once its upper bound is within
# VALIDATION_TOLERANCE (Ribeiro et al.'s epsilon_stop, 0.05 in the authors' code, which uses it
# for both sides). The statistical guarantee reported in the documentation and tested in
# tests/test_tabular.py is "precision >= threshold - 0.025".
#
# Why half the authors' tolerance on the accepting side: a rule whose precision is just below
# the threshold (0.93-0.94 for 0.95) passes "estimate >= threshold, bound > threshold - 0.05"
# after 150-300 samples with a fair chance (4.5-15 % of validations, tests/test_search.py), and
# the search keeps the widest rule that passes, so such rules were over-represented among the
# returned anchors; with half the tolerance far more of the valid anchors reach the threshold
# itself on fresh draws, for a few per cent more rows predicted. The rejecting side keeps the
# authors' 0.05: halving it too predicted more rows for the same held-out precision
# (doc/performance.rst has the measurements). (At threshold 0.95 it rejects a rule
# as soon as its estimate is below the threshold: no upper bound reaches 1.)
ACCEPTANCE_TOLERANCE = 0.025
VALIDATION_TOLERANCE = 0.05
_MAX_VALIDATION_SAMPLES = 100_000
# A round whose candidates all have an estimated precision below threshold - HOPELESS_MARGIN
# is first tested for holding no anchor at all (see _below_threshold).
HOPELESS_MARGIN = 0.1
# ... at the cost of at most this many batches beyond each arm's first (see _below_threshold).
HOPELESS_BUDGET = 20


class _Predictions:
    """The model's predictions for one search: each distinct row predicted once, and counted.

    ``predict`` maps model input to class indices (one model call); ``target`` is the class
    whose precision is measured; ``shared`` (:class:`skanchors._cache.Shared` or None) sends
    predictions through the explainer's cache, for the searches of other rows.
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

    def _label(self, keys, hashes=None, memos=None):
        """Predicted class of every row of ``keys``; each distinct row is predicted once.

        ``hashes`` are the rows' :func:`~skanchors._cache.row_hash` when already known.
        ``memos`` (stream reads with an enabled shared cache): ``(memo, lo, hi)`` segments
        that tile the rows, ``memo`` the dict a stream block keeps its rows' labels in, by
        namespace: rows whose block already knows their label skip the hash lookups. Only the
        dictionary cache reads them; the compiled table (numba) is cheaper per row than they.
        """
        shared = self.shared is not None and self.shared.cache.enabled
        if memos is not None and shared and not self.shared.cache.compiled:
            return self._label_memo(keys, hashes, memos)
        if hashes is None:
            hashes = getattr(self.instance, "hash_rows", row_hash)(keys)
        if shared:
            # The shared cache already holds every prediction this search made.
            return self._label_shared(keys, hashes)
        uniq, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        cache = self._cache
        labels = lookup(cache, uniq)
        todo = np.flatnonzero(labels < 0)
        if todo.size and self.shared is not None:
            labels[todo] = self._label_shared(keys[first[todo]], uniq[todo])
        elif todo.size:
            labels[todo] = self._call(keys[first[todo]])
        if todo.size:
            cache.update(zip(uniq[todo].tolist(), labels[todo].tolist()))
        return labels[inverse.ravel()]

    def _label_memo(self, keys, hashes, memos):
        """:meth:`_label` through the stream blocks' label memos (see there)."""
        space = (self.shared.namespace, self.instance.stream_namespace)
        arrays = []
        for memo, lo, hi in memos:
            known = memo.get(space)
            if known is None:
                known = memo[space] = np.full(STREAM_BLOCK, -1, dtype=np.int64)
            arrays.append((known, lo, hi))
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
    shared : skanchors._cache.Shared or None
        When given and the instance offers streams (``stream_windows``), samples are read
        from the instance's streams instead of drawn with ``rng``, and predictions go
        through the shared cache, so searches of other rows reuse them.
    """

    def __init__(self, instance, predict, target, rng, shared=None):
        shared = shared if hasattr(instance, "stream_windows") else None
        super().__init__(instance, predict, target, rng, shared)
        self._cursor = {}  # stream positions read so far, per conditioning set
        cap = 1024
        self.exact_reuse = bool(getattr(instance, "exact_reuse", False))
        self.streamed = self.shared is not None
        # Which predicates each sample satisfies: only subset reuse (exact_reuse) reads it,
        # and it is kept unless the store keeps the keys and can read it off them
        # (``holds_of``).
        self.holds = None
        if self.exact_reuse and (self.streamed or not hasattr(instance, "holds_of")):
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
            and getattr(instance, "replayable", False)
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
        # the base row (``base``) when the instance reads them off it (``native_of``).
        self.stratified = not self.exact_reuse and hasattr(instance, "predicate_features")
        self.native = self.base = None
        if self.stratified and self.streamed and hasattr(instance, "native_of"):
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
            keys, holds, native, hashes, memos = self.instance.stream_windows(
                windows,
                self.shared.seed,
                self.shared.cache,
                return_holds=self.holds is not None,
                **extra,
            )
            at = self.size
            ids = np.repeat(np.array(ids, dtype=np.int64), sizes)
            out = self._store(np.ascontiguousarray(keys), holds, ids, native, hashes, memos)
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

    def _store(self, keys, holds, ids, native, hashes, memos=None):
        """Label new samples (one model call) and append them; returns ``(start, stop)``.
        ``ids`` are the samples' conditioning-set ids, ``native`` the native matrix or, with
        ``self.base``, the base rows."""
        labels = self._label(keys, hashes, memos)
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


class CandidateArms:
    """The bandit's view of a list of candidate anchors.

    ``pull`` draws for the requested arms in one model call; the new samples then update the
    counts of *every* arm they are valid for, not only the pulled ones. ``since``: only the
    store's samples from that row on count (0: all of them).
    """

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


class ReferenceStore(_Predictions):
    """The samples of an instance whose ``D(z | A)`` is the reference rows satisfying ``A``.

    For samplers with ``draws_reference_rows`` (the tabular ``perturbation="reference"``).
    The reference rows are read in one random order (``instance.reference_order``, fixed by
    the explainer's seed). The samples of a rule are its rows, in that order, up to the first
    one not drawn yet: a uniform draw without replacement from the rows that satisfy it,
    whichever rules the rows were drawn for (a draw for a rule takes its next rows, so a rule
    covering a drawn rule's rows finds no gap in them). Every sample thus serves every rule it
    satisfies, without bias, and counts once: a rule that covers ``k`` reference rows has at
    most ``k`` samples, so its confidence bounds are those of ``k`` rows of the data, not of
    as many draws as the search would like.

    The order is cut in two halves (``part`` 0 and 1): the search chooses rules on the rows of
    the first and validates them on those of the second, whose predictions the choice never
    saw. (A rule's rows that merely were not drawn yet when it was chosen are no such sample:
    a row that satisfies more of the explained row's predicates is more likely to have been
    drawn for some rule, so the undrawn rows differ from the rule's other rows.)

    Parameters are those of :class:`SampleStore`; with ``shared`` the order comes from its
    seed (the same for every explained row), else from ``rng``.
    """

    draws_reference_rows = True
    exact_reuse = True
    stratified = False

    def __init__(self, instance, predict, target, rng, shared=None):
        super().__init__(instance, predict, target, rng, shared)
        seed = shared.seed if shared is not None else int(rng.integers(2**31))
        self._keys, self._hashes, self._predicates = instance.reference_order(seed)
        n = len(self._hashes)
        self._drawn = np.zeros(n, dtype=bool)
        self._class = np.full(n, -1, dtype=np.int64)  # predictions of the drawn rows
        self._order = []  # positions drawn, one array per draw
        self._rows = {(): np.arange(n)}  # positions of the rows satisfying each rule
        self._half = n // 2  # the first position of part 1
        self._parts = {}  # (rule, part) -> its rows in that part
        self._prefix = {}  # (rule, part) -> [samples, positives]

    def _positions(self):
        if len(self._order) > 1:
            self._order = [np.concatenate(self._order)]
        return self._order[0] if self._order else np.zeros(0, dtype=np.intp)

    @property
    def size(self):
        return int(self._drawn.sum())

    @property
    def keys(self):
        return self._keys[self._positions()]

    @property
    def labels(self):
        return self._class[self._positions()]

    def arms(self, candidates, parents=None, fresh=False):
        """The bandit's arms for ``candidates``; with ``fresh``, on the rows of part 1 (the
        validation of chosen rules)."""
        return ReferenceArms(self, candidates, part=1 if fresh else 0)

    def rows(self, anchor, part=0):
        """Positions (in the drawing order) of the reference rows of ``part`` (0 or 1) that
        satisfy ``anchor``."""
        anchor = tuple(sorted(anchor))
        rows = self._parts.get((anchor, part))
        if rows is None:
            every = self._all_rows(anchor)
            cut = int(np.searchsorted(every, self._half))
            rows = self._parts[(anchor, part)] = every[cut:] if part else every[:cut]
        return rows

    def _all_rows(self, anchor):
        """Positions of all the reference rows that satisfy the sorted rule ``anchor``."""
        rows = self._rows.get(anchor)
        if rows is None:
            if len(anchor) == 1:
                rows = self._predicates[anchor[0]][1]
            else:
                # Filter the fewest rows of a known rule one predicate shorter (the search's
                # parent, usually), else of the rule without its last predicate.
                known = [
                    (len(r), i)
                    for i in range(len(anchor))
                    if (r := self._rows.get(anchor[:i] + anchor[i + 1 :])) is not None
                ]
                i = min(known)[1] if known else len(anchor) - 1
                shorter = self._all_rows(anchor[:i] + anchor[i + 1 :])
                rows = shorter[self._predicates[anchor[i]][0][shorter]]
            self._rows[anchor] = rows
        return rows

    def prefix(self, anchor, part=0):
        """``(samples, positives)`` of ``anchor`` in ``part``: its rows up to the first not
        drawn."""
        return self._prefix_of(tuple(sorted(anchor)), part)

    def _prefix_of(self, anchor, part=0):
        """:meth:`prefix` of a sorted rule."""
        state = self._prefix.get((anchor, part))
        if state is None:
            state = self._prefix[(anchor, part)] = [0, 0]
        rows = self._parts.get((anchor, part))
        if rows is None:
            rows = self.rows(anchor, part)
        p = state[0]
        if p < len(rows) and self._drawn[rows[p]]:
            start = p
            while p < len(rows):
                window = self._drawn[rows[p : p + 512]]
                k = int(np.argmin(window))
                if not window[k]:
                    p += k
                    break
                p += len(window)
            got = self._class[rows[start:p]] == self.target
            state[0], state[1] = p, state[1] + int(np.count_nonzero(got))
        return state[0], state[1]

    def draw(self, requests, part=0):
        """Draw the next ``n`` rows of ``part`` of each ``(anchor, n)`` request, in one model
        call.

        Returns the store's ``(start, stop)`` of the rows not drawn before.
        """
        new = []
        for anchor, n in requests:
            p, _ = self.prefix(anchor, part)
            new.append(self.rows(anchor, part)[p : p + int(n)])
        new = np.unique(np.concatenate(new)) if new else np.zeros(0, dtype=np.intp)
        new = new[~self._drawn[new]]
        start = self.size
        if new.size:
            self._class[new] = self._label(self._keys[new], self._hashes[new])
            self._drawn[new] = True
            self._order.append(new)
        return start, start + new.size

    def valid(self, candidates, start=0, stop=None, reuse=None):
        """Boolean matrix (drawn rows start:stop x candidates): the candidate's samples, in
        both parts."""
        pos = self._positions()[start:stop]
        out = np.zeros((len(pos), len(candidates)), dtype=bool)
        inside = np.zeros(len(self._drawn), dtype=bool)
        for j, cand in enumerate(candidates):
            inside[:] = False
            for part in (0, 1):
                p, _ = self.prefix(cand, part)
                inside[self.rows(cand, part)[:p]] = True
            out[:, j] = inside[pos]
        return out

    def keys_of(self, rows):
        """The keys of drawn rows ``rows``."""
        return self.keys[np.asarray(rows, dtype=np.intp)]

    def valid_indices(self, candidate, reuse=None):
        """Indices of the drawn rows that count for ``candidate``."""
        return np.flatnonzero(self.valid([candidate])[:, 0])


class ReferenceArms:
    """The bandit's arms on a :class:`ReferenceStore`: counts read from each rule's rows of
    ``part`` (0: the rows rules are chosen on; 1: those they are validated on).

    ``n_available`` is how many samples an arm can ever have (the rule's rows of its part);
    the bandit and the validation stop sampling an arm that has them all.
    """

    def __init__(self, store, candidates, part=0):
        self.store = store
        self.part = part
        self.candidates = [tuple(sorted(c)) for c in candidates]
        m = len(self.candidates)
        self.n_available = np.array(
            [len(store.rows(c, part)) for c in self.candidates], dtype=float
        )
        self.n_samples, self.n_positives = np.zeros(m), np.zeros(m)
        self._refresh()

    def _refresh(self):
        prefix = self.store._prefix_of
        for i, cand in enumerate(self.candidates):
            self.n_samples[i], self.n_positives[i] = prefix(cand, self.part)

    def pull(self, indices, n):
        """Draw ``n`` more rows for each arm in ``indices`` (one model call); a drawn row
        then counts for every arm whose rows reach it without a gap."""
        self.pull_each(indices, [n] * len(indices))

    def pull_each(self, indices, counts):
        """Draw ``counts[j]`` more rows for arm ``indices[j]``, all in one model call."""
        requests = [(self.candidates[i], int(c)) for i, c in zip(indices, counts)]
        self.store.draw(requests, self.part)
        self._refresh()


_ARM_KERNEL = None  # the compiled stratum counts and bounds; False: numba missing or disabled


def _arm_kernel():
    """``(stratum_counts, stratified_bounds)`` of :mod:`skanchors._arm_kernels`, compiled, or
    None (numba missing, or ``SKANCHORS_NUMBA=0``)."""
    global _ARM_KERNEL
    if _ARM_KERNEL is None:
        _ARM_KERNEL = compiled(_load_arm_kernel) or False
    return _ARM_KERNEL or None


_RATES = np.zeros(0)  # _RATES[j]: the two-strata rate of j / 8 (see _rate_table)
# Rates from this one on (delta near 0) are not tabled: the plain-float bounds serve them.
_MAX_TABLED_RATE = 4096.0


def _rate_table(at):
    """The two-strata rates of every multiple of 1/8 up to ``at`` (and beyond), as an array:
    the rates the compiled :meth:`StratifiedArms._extreme_bound_small` reads for the rounded
    rates its bounds were computed at."""
    global _RATES
    need = int(at * 8.0) + 1
    table = _RATES
    if need > len(table):
        size = max(need, 2 * len(table), 256)
        table = _RATES = np.array([_two_term_rate_scalar(j / 8.0) for j in range(size)])
    return table


def _load_arm_kernel():
    from ._arm_kernels import (
        extreme_bound_small,
        precision_estimates,
        stratified_bounds,
        stratum_counts,
    )

    # compile now (or load numba's cached machine code), and check: arm 0 is its own
    # sample's, arm 1 a child of its parent's
    counts = [np.zeros(2) for _ in range(4)]
    changed = np.zeros(2, dtype=bool)
    stratum_counts(
        np.array([1, 0], dtype=np.int64), np.array([[False], [True], [False]]),
        np.array([1, 2], dtype=np.intp), np.array([3, 3], dtype=np.int64), 3,
        np.array([-1, 0], dtype=np.intp),
        np.zeros((2, 1), dtype=np.intp), np.array([0, 1], dtype=np.intp),
        np.array([1], dtype=np.intp), *counts, changed,
    )  # fmt: skip
    if [c.tolist() for c in counts] != [[1, 0], [1, 0], [0, 0], [0, 0]] or not changed.all():
        raise RuntimeError("compiled stratum counts failed their check")
    # one arm with two strata, one with one
    table = [[40.0, 30.0], [38.0, 20.0], [25.0, 0.0], [20.0, 0.0], [0.7, 0.4]]
    n1, pos1, n2, pos2, pi = (np.array(column) for column in table)
    rate = _two_term_rate_scalar(3.0)
    for lower in (True, False):
        values = np.zeros(2)
        stratified_bounds(n1, pos1, n2, pos2, pi, np.arange(2), 3.0, rate, lower, values)
        want = [
            stratified_bound_scalar(k1 / m1, m1, k2 / m2 if m2 else 0.0, m2, w, 3.0, lower)
            for m1, k1, m2, k2, w in zip(*table)
        ]
        if values.tolist() != want:
            raise RuntimeError("compiled bounds failed their check")
        # the most extreme bound of the two arms, both computed here (none cached yet)
        beta, values = np.full(2, np.nan), np.zeros(2)
        pos, best = extreme_bound_small(
            np.arange(2), 3.0, 3.0, not lower, 1, beta, values, n1, pos1, n2, pos2, pi,
            _rate_table(3.0), _PRUNE_MARGIN,
        )  # fmt: skip
        top = int(np.argmax(want)) if not lower else int(np.argmin(want))
        if pos.tolist() != [top] or best.tolist() != [want[top]] or beta.tolist() != [3.0] * 2:
            raise RuntimeError("compiled extreme bounds failed their check")
    estimates = precision_estimates(n1, pos1, n2, pos2, pi)
    want = [w * a + (1.0 - w) * b for w, a, b in ((0.7, 0.95, 0.8), (0.4, 2 / 3, 2 / 3))]
    if estimates.tolist() != want:
        raise RuntimeError("compiled precision estimates failed their check")
    return stratum_counts, stratified_bounds, extreme_bound_small, precision_estimates


class StratifiedArms:
    """Candidates ``parent + (q,)`` whose precision uses the parent's samples, without bias.

    The tabular ``D(z | A)`` starts from a random reference row (the base row) and replaces the
    values that violate ``A``. Let ``G`` be the predicates of a candidate ``C = P + (q,)`` on
    the feature of ``q`` and ``E`` the event "the base row satisfies ``G`` on its own" (nothing
    of that feature is replaced). ``D(z | C)`` is the mixture of ``D(z | C, E)``, with weight
    ``pi = P(E)`` (the reference share of rows satisfying ``G``, known exactly), and
    ``D(z | C, not E)``. A sample drawn for the parent ``P`` whose base row satisfies ``G`` is
    built exactly as one drawn for ``C`` would be, so it is a draw of the first component;
    samples drawn for ``C`` fall in either. The precision is estimated per stratum and
    combined, ``pi * p1 + (1 - pi) * p2``; its confidence bounds are the extremes of that
    combination over one joint KL region of the two strata
    (:func:`~skanchors._bandit.stratified_kl_bounds`). Reusing parent samples that satisfy
    ``q`` *without* this weighting (as other anchor packages do) mixes the strata in the wrong
    proportion and inflated precision by up to 0.09 on Adult.

    Parameters
    ----------
    store : SampleStore
        With ``store.stratified`` true.
    candidates, parents : lists of tuples of int
        Each candidate is its parent plus one predicate.
    """

    _kernel = _bounds_kernel = None  # the compiled counts and bounds (set in __init__)

    def __init__(self, store, candidates, parents):
        inst = store.instance
        feat = np.asarray(inst.predicate_features)
        self.store = store
        self.candidates = [tuple(sorted(c)) for c in candidates]
        self.parents = [tuple(sorted(p)) for p in parents]
        feat = feat.tolist()
        groups = []
        for cand, parent in zip(self.candidates, self.parents):
            added = set(cand).difference(parent)
            if len(added) != 1 or len(cand) != len(parent) + 1:
                raise ValueError(f"candidate {cand} is not parent {parent} plus one predicate.")
            f = feat[added.pop()]
            groups.append([p for p in cand if feat[p] == f])
        self._groups = groups
        # The predicates of each group as one row of a matrix (short rows padded by repeating
        # their last predicate), so that E is computed for every arm at once.
        width = max((len(g) for g in groups), default=1)
        self._group_index = np.array(
            [g + [g[-1]] * (width - len(g)) for g in groups], dtype=np.intp
        ).reshape(len(groups), width)
        self.pi = np.asarray(inst.coverage([tuple(g) for g in groups]), dtype=float)
        m = len(self.candidates)
        index = store._anchor_index
        own = [index.get(c) for c in self.candidates]
        par = [index.get(p) for p in self.parents]
        if None in own or None in par:  # conditioning sets not seen yet (sorted already)
            own = [store._id(c) for c in self.candidates]
            par = [store._id(p) for p in self.parents]
        self._own = np.array(own, dtype=np.int64)
        self._par = np.array(par, dtype=np.int64)
        self.n1, self.pos1 = np.zeros(m), np.zeros(m)
        self.n2, self.pos2 = np.zeros(m), np.zeros(m)
        # side -> (beta each arm's cached bound was computed at, NaN: stale; the bounds)
        betas, values = np.full((2, m), np.nan), np.zeros((2, m))
        self._cache = {"lower": (betas[0], values[0]), "upper": (betas[1], values[1])}
        # Which arm a sample drawn for anchor id i belongs to (-1: none), and the arms of each
        # parent: a sample serves its own arm (either stratum) and its parent's children.
        self._own_arm = np.full(max(own, default=-1) + 1, -1, dtype=np.intp)
        self._own_arm[self._own] = np.arange(m)
        kernels = _arm_kernel() or (None,) * 4
        self._kernel, self._bounds_kernel, self._extreme_kernel, self._estimates_kernel = kernels
        if self._kernel is None:
            self._children = {
                int(pid): np.flatnonzero(self._par == pid) for pid in np.unique(self._par).tolist()
            }
        else:  # the compiled counts': the arms of parent id i are arms[ptr[i]:ptr[i + 1]]
            self._parent_arms = np.argsort(self._par, kind="stable").astype(np.intp)
            self._parent_ptr = np.searchsorted(
                self._par[self._parent_arms], np.arange(max(par, default=-1) + 2)
            ).astype(np.intp)
        self._estimates = None
        self._update(0, store.size)

    @property
    def n_samples(self):
        return self.n1 + self.n2

    @property
    def n_positives(self):
        return self.pos1 + self.pos2

    def _update(self, start, stop):
        """Add samples ``start:stop`` of the store to the stratum counts.

        Work grows with the samples of each arm and the parent samples times the parent's
        children, not with every sample times every arm (a table with 60 features has about
        60 arms a round). With numba (the ``fast`` extra) compiled code counts them
        (:mod:`skanchors._arm_kernels`), the same counts.
        """
        if stop <= start:
            return
        store = self.store
        m = len(self.candidates)
        if not m:
            return
        ids = store.anchor_id[start:stop]
        changed = np.zeros(m, dtype=bool)
        if self._kernel is not None:
            self._kernel(
                ids,
                *store.native_rows(start, stop),
                store.labels[start:stop],
                store.target,
                self._own_arm,
                self._group_index,
                self._parent_ptr,
                self._parent_arms,
                self.n1,
                self.pos1,
                self.n2,
                self.pos2,
                changed,
            )
            self._stale(changed)
            return
        # Samples drawn for an arm itself: stratum 1 where E holds, else stratum 2.
        lookup = self._own_arm
        top = int(ids.max())
        if top >= len(lookup):  # conditioning sets registered since (none of them an arm)
            grown = np.full(top + 1, -1, dtype=np.intp)
            grown[: len(lookup)] = lookup
            lookup = self._own_arm = grown
        arm = lookup[ids]
        rows = np.flatnonzero(arm >= 0)
        if rows.size:
            arm = arm[rows]
            at = start + rows
            e = store.native_cells(at[:, None], self._group_index[arm]).all(axis=1)
            right = store.labels[at] == store.target
            slot = 2 * arm + ~e  # arm's stratum 1 (even) or 2 (odd)
            n = np.bincount(slot, minlength=2 * m)
            pos = np.bincount(slot[right], minlength=2 * m)
            self.n1 += n[0::2]
            self.n2 += n[1::2]
            self.pos1 += pos[0::2]
            self.pos2 += pos[1::2]
            changed[arm] = True
        # Samples drawn for a parent: stratum 1 of each child whose group they satisfy.
        for pid, children in self._children.items():
            rows = start + np.flatnonzero(ids == pid)
            if not rows.size:
                continue
            e = store.native_cells(rows[:, None, None], self._group_index[children][None]).all(
                axis=2
            )
            right = (store.labels[rows] == store.target).astype(float)
            self.n1[children] += e.sum(axis=0)
            self.pos1[children] += right @ e  # float64: exact integer counts
            changed[children] = True
        self._stale(changed)

    def _stale(self, changed):
        for cached_beta, _ in self._cache.values():
            cached_beta[changed] = np.nan  # counts changed: bounds are stale
        self._estimates = None

    def pull(self, indices, n):
        """Draw ``n`` samples of ``D(z | C)`` for each arm ``C``, in one model call.

        The draws are not restricted to one stratum: unrestricted draws also serve the arm's
        own children (as their parent samples). Drawing only from the stratum whose
        uncertainty weighs more was measured: 1.9 times the rows on Adult.
        """
        self.pull_each(indices, [n] * len(indices))

    def pull_each(self, indices, counts):
        """Draw ``counts[j]`` samples for arm ``indices[j]``, all in one model call."""
        requests = [(self.candidates[i], int(c)) for i, c in zip(indices, counts)]
        start, stop = self.store.draw(requests)
        self._update(start, stop)

    def parent_can_settle(self, threshold, beta, n, parent_precision):
        """Which arms ``n`` samples of their parent could show below ``threshold``.

        A parent sample serves an arm's stratum 1 with probability ``pi``; with stratum 2
        still empty, the arm's upper bound is ``pi * u1 + (1 - pi)``. ``u1`` is predicted
        from ``pi * n`` samples at the parent's precision (``parent_precision[i]``; None:
        0, every arm that ``pi`` allows).
        """
        m = len(self.candidates)
        p = np.zeros(m) if parent_precision is None else np.asarray(parent_precision, float)
        upper = [
            stratified_bound_scalar(q, pi * n, 0.0, 0, pi, beta, False)
            for q, pi in zip(p.tolist(), self.pi.tolist())
        ]
        return np.asarray(upper) < threshold

    def pull_parents(self, indices, n, own=()):
        """Draw ``n`` samples for each parent of the arms ``indices``, and for each arm in
        ``own`` itself, in one model call.

        A parent sample serves every child of the parent whose group its base row satisfies
        (stratum 1).
        """
        parents = list(dict.fromkeys(self.parents[i] for i in np.asarray(indices).tolist()))
        requests = [(p, int(n)) for p in parents]
        requests += [(self.candidates[i], int(n)) for i in np.asarray(own, dtype=np.intp)]
        start, stop = self.store.draw(requests)
        self._update(start, stop)

    def _strata(self, indices, missing=np.nan):
        """Each stratum's mean (``missing`` where it has no samples)."""
        n1, n2 = self.n1[indices], self.n2[indices]
        p1 = np.where(n1 > 0, self.pos1[indices] / np.maximum(n1, 1), missing)
        p2 = np.where(n2 > 0, self.pos2[indices] / np.maximum(n2, 1), missing)
        return p1, p2

    def precision_estimates(self):
        """Estimated precision of every arm (read-only; kept until the counts change)."""
        if self._estimates is None:
            # A stratum without samples is guessed from the other one (for ranking only: its
            # bounds stay trivial).
            if len(self.pi) <= SCALAR_ARMS and self._estimates_kernel is not None:
                # the plain-float arithmetic below, compiled
                self._estimates = self._estimates_kernel(
                    self.n1, self.pos1, self.n2, self.pos2, self.pi
                )
            elif len(self.pi) <= SCALAR_ARMS:
                # the same arithmetic in plain floats (numpy's per-call overhead would cost
                # more than the arithmetic for a round's few arms)
                columns = (self.n1, self.pos1, self.n2, self.pos2, self.pi)
                values = []
                for n1, k1, n2, k2, pi in zip(*(c.tolist() for c in columns)):
                    p1 = k1 / n1 if n1 > 0 else None
                    p2 = k2 / n2 if n2 > 0 else p1
                    p1 = p2 if p1 is None else p1
                    values.append(0.0 if p1 is None else pi * p1 + (1.0 - pi) * p2)
                self._estimates = np.array(values, dtype=float)
            else:
                p1, p2 = self._strata(slice(None))
                p1, p2 = np.where(np.isnan(p1), p2, p1), np.where(np.isnan(p2), p1, p2)
                mixed = self.pi * p1 + (1.0 - self.pi) * p2
                self._estimates = np.where(np.isnan(mixed), 0.0, mixed)
            self._estimates.flags.writeable = False
        return self._estimates

    def precision_bounds(self, indices, beta, side="both"):
        """Lower and upper bounds of the given arms (``side``: only one of them, other None).

        Bounds are cached per arm until its counts change. They are computed at ``beta``
        rounded *up* to a multiple of 1/8 and reused for any smaller rate (a larger rate only
        widens them), so KL-LUCB's slowly growing exploration rate recomputes mostly the arms
        pulled since the last round; up to ``SCALAR_ARMS`` arms are computed in plain floats.
        """
        indices = np.asarray(indices, dtype=np.intp)
        beta = float(beta)
        at = math.ceil(beta * 8.0) / 8.0
        out = []
        for name in ("lower", "upper"):
            if side not in ("both", name):
                out.append(None)
                continue
            cached_beta, values = self._cache[name]
            stale = indices[~(cached_beta[indices] >= beta)]
            if stale.size:
                self._compute(stale, at, name)
            out.append(values[indices].copy())
        return tuple(out)

    def extreme_bound(self, indices, beta, side, k=1):
        """``(positions, values)`` of the ``k`` highest upper (``side="upper"``) or lowest lower
        bounds, the most extreme first.

        The same answer as ``precision_bounds`` followed by a stable sort (first positions on
        ties), computing only the arms that can still be among the ``k`` extremes. An arm whose
        counts did not change since its bound was computed at rate ``b`` cannot move far at a
        rate ``b' > b``: the confidence region at ``b'`` lies inside the one at ``b`` scaled by
        ``s = rate(b') / rate(b)`` about the estimate ``c`` (the KL constraint is convex and
        zero there), so the new upper bound is at most ``c + s (u - c)`` and the new lower
        bound at least ``c - s (c - l)``. Arms that cannot reach the ``k``-th best exact value
        are skipped: KL-LUCB asks this every round at a slightly larger rate, and most of its
        arms are far from the boundary.
        """
        indices = np.asarray(indices, dtype=np.intp)
        beta = float(beta)
        if indices.size <= SCALAR_ARMS:
            return self._extreme_bound_small(indices, beta, side, k)
        at = math.ceil(beta * 8.0) / 8.0
        sign = 1.0 if side == "upper" else -1.0  # maximise sign * bound
        cached_beta, values = self._cache[side]
        cb = cached_beta[indices]
        exact = cb >= beta
        changed = np.isnan(cb)
        must = indices[changed]
        if must.size:
            self._compute(must, at, side)
            exact = exact | changed
        movable = ~exact
        if movable.any():
            # Optimistic values of the arms whose bound was computed at a smaller rate.
            c = self.precision_estimates()[indices[movable]]
            old = values[indices[movable]]
            old_at = cb[movable]
            s = np.maximum(at / old_at, _two_term_rate_array(at) / _two_term_rate_array(old_at))
            optimistic = sign * (c + s * (old - c))
            order = np.argsort(-optimistic, kind="stable")
            todo = indices[movable][order]
            optimistic = optimistic[order]
            known = sign * values[indices[exact]]
            if known.size < k:
                # Too few exact bounds: compute the most promising arms first.
                first = todo[: k - known.size]
                self._compute(first, at, side)
                known = np.concatenate([known, sign * values[first]])
                todo, optimistic = todo[len(first) :], optimistic[len(first) :]
            # The k-th best exact bound: arms that might reach it (margin: the solvers'
            # tolerance) get computed.
            kth = np.sort(known)[-k] if known.size >= k else -np.inf
            reach = todo[optimistic >= kth - _PRUNE_MARGIN]
            if reach.size:
                self._compute(reach, at, side)
        # Skipped arms are below the k-th best by more than the margin (exact or not).
        score = np.where(cached_beta[indices] >= beta, sign * values[indices], -np.inf)
        pos = np.argsort(-score, kind="stable")[:k]
        pos = pos[np.isfinite(score[pos])]
        return pos, values[indices[pos]].copy()

    def _extreme_bound_small(self, indices, beta, side, k):
        """:meth:`extreme_bound` in plain floats, for up to ``SCALAR_ARMS`` arms (the same
        operations in the same order, so the same answer: numpy's per-call overhead would
        cost more than the arithmetic). With numba (the ``fast`` extra) compiled code does
        it (:func:`skanchors._arm_kernels.extreme_bound_small`), step for step."""
        at = math.ceil(beta * 8.0) / 8.0
        cached_beta, values = self._cache[side]
        if self._extreme_kernel is not None and at < _MAX_TABLED_RATE:
            return self._extreme_kernel(
                indices, beta, at, side == "upper", k, cached_beta, values,
                self.n1, self.pos1, self.n2, self.pos2, self.pi, _rate_table(at), _PRUNE_MARGIN,
            )  # fmt: skip
        sign = 1.0 if side == "upper" else -1.0
        idx = indices.tolist()
        cb = cached_beta[indices].tolist()
        must = [i for i, b in zip(idx, cb) if b != b]  # NaN: counts changed
        if must:
            self._compute(np.array(must, dtype=np.intp), at, side)
        vals = values[indices].tolist()
        exact = [b >= beta or b != b for b in cb]
        known, moving = [], []
        for t, ok in enumerate(exact):
            (known if ok else moving).append(t)
        if moving:
            # Optimistic values of the arms whose bound was computed at a smaller rate.
            est = self.precision_estimates()
            rate_at = _two_term_rate_scalar(at)
            optimistic = []
            for t in moving:
                c, old, old_at = float(est[idx[t]]), vals[t], cb[t]
                s = max(at / old_at, rate_at / _two_term_rate_scalar(old_at))
                optimistic.append(sign * (c + s * (old - c)))
            order = sorted(range(len(moving)), key=lambda u: -optimistic[u])
            todo = [moving[u] for u in order]
            optimistic = [optimistic[u] for u in order]
            best = [sign * vals[t] for t in known]
            if len(best) < k:
                first = todo[: k - len(best)]
                self._compute(indices[first], at, side)
                fresh = values[indices[first]].tolist()
                for t, v in zip(first, fresh):
                    vals[t] = v
                    exact[t] = True
                best += [sign * v for v in fresh]
                todo, optimistic = todo[len(first) :], optimistic[len(first) :]
            kth = sorted(best)[-k] if len(best) >= k else -math.inf
            reach = [t for t, o in zip(todo, optimistic) if o >= kth - _PRUNE_MARGIN]
            if reach:
                self._compute(indices[reach], at, side)
                for t, v in zip(reach, values[indices[reach]].tolist()):
                    vals[t] = v
                    exact[t] = True
        # Skipped arms are below the k-th best by more than the margin (exact or not).
        score = [sign * v if ok else -math.inf for v, ok in zip(vals, exact)]
        pos = sorted(range(len(score)), key=lambda t: -score[t])[:k]
        pos = np.array([t for t in pos if score[t] != -math.inf], dtype=np.intp)
        return pos, np.array([vals[t] for t in pos.tolist()], dtype=float)

    def _compute(self, stale, at, name):
        """Bounds of arms ``stale`` on side ``name`` at rate ``at``, cached (an index given
        twice is computed twice: callers pass distinct arms)."""
        cached_beta, values = self._cache[name]
        if stale.size <= SCALAR_ARMS and self._bounds_kernel is not None:
            # the same bounds as the plain-float path below, to the last bit
            self._bounds_kernel(
                self.n1,
                self.pos1,
                self.n2,
                self.pos2,
                self.pi,
                stale,
                at,
                _two_term_rate_scalar(at),
                name == "lower",
                values,
            )
        elif stale.size <= SCALAR_ARMS:
            lower = name == "lower"
            counts = zip(*(a[stale].tolist() for a in (self.n1, self.pos1, self.n2, self.pos2)))
            values[stale] = [
                stratified_bound_scalar(
                    k1 / n1 if n1 else 0.0, n1, k2 / n2 if n2 else 0.0, n2, pi, at, lower
                )
                for (n1, k1, n2, k2), pi in zip(counts, self.pi[stale].tolist())
            ]
        else:
            p1, p2 = self._strata(stale, missing=0.0)
            pi = self.pi[stale]
            n1, n2 = self.n1[stale], self.n2[stale]
            bounds = stratified_kl_bounds(
                np.column_stack([p1, p2]),
                np.column_stack([n1, n2]),
                np.column_stack([pi, 1.0 - pi]),
                at,
                side=name,
            )
            values[stale] = bounds[0] if name == "lower" else bounds[1]
        cached_beta[stale] = at


# Pruning in StratifiedArms.extreme_bound keeps every arm within this distance of the k-th best
# exact bound (the bound solvers stop within about 1e-8 of the exact value).
_PRUNE_MARGIN = 1e-6


def _two_term_rate_array(beta):
    beta = np.asarray(beta, dtype=float)
    return np.array([_two_term_rate_scalar(float(b)) for b in beta.ravel()]).reshape(beta.shape)


def make_arms(store, candidates, parents):
    """The bandit's arms for ``candidates`` (``parents[i]`` is ``candidates[i]`` minus one)."""
    return store.arms(candidates, parents)


def estimate(store, order, beta):
    """Estimates of the anchor built by adding ``order``, and of each partial anchor on the way.

    ``order`` lists the anchor's predicates in the order the search added them (each
    predicate's parent is the ones before it), as the search estimated them. Returns
    ``(n_samples, precision, lower, upper)``: arrays of samples and precision of the partial
    anchors ``order[:1], ..., order[:k]`` (of the empty rule alone when ``order`` is empty),
    and the confidence bounds of the whole anchor.
    """
    order = list(order)
    prefixes = [tuple(sorted(order[:k])) for k in range(1, len(order) + 1)] or [()]
    parents = [tuple(order[: k - 1]) for k in range(1, len(order) + 1)] if order else None
    arms = store.arms(prefixes, parents)
    lb, ub = arm_bounds(arms, [len(prefixes) - 1], beta)
    n = arms.n_samples.astype(np.int64)
    return n, np.asarray(arm_means(arms), dtype=float), float(lb[0]), float(ub[0])


class SearchResult:
    """What the search found for one instance, before it becomes an :class:`~skanchors.Anchor`."""

    def __init__(
        self,
        anchor,
        order,
        is_anchor,
        store,
        coverage,
        beta,
        groups=None,
        width=None,
        validated=None,
    ):
        self.anchor = tuple(anchor)
        self.order = list(order)
        self.is_anchor = is_anchor
        self.store = store
        self.coverage = coverage
        self.beta = beta  # the rate the candidates were validated at (union bound included)
        self._groups, self._width = groups, width
        # (n_samples, precision, lower, upper) of the anchor's validation, on the samples
        # drawn after it was chosen; None when no rule was validated as an anchor
        self.validated = validated

    def shown(self, k=None):
        """The predicates of the first ``k`` steps (all by default) that the rule needs:
        those of ``order[:k]`` without the ones a narrower predicate of their group implies
        (the same rule, as it is printed)."""
        order = self.order[: len(self.order) if k is None else k]
        if self._width is None:
            return list(order)
        narrowest = {}
        for p in order:
            g = self._groups[p]
            if g not in narrowest or self._width[p] < self._width[narrowest[g]]:
                narrowest[g] = p
        return [p for p in order if narrowest[self._groups[p]] == p]


def _sample_cap(arms):
    """How many samples each arm may have: its supply (reference rows), at most
    ``_MAX_VALIDATION_SAMPLES`` (that number alone for arms of unlimited supply)."""
    available = getattr(arms, "n_available", None)
    if available is None:
        return _MAX_VALIDATION_SAMPLES
    return np.minimum(available, _MAX_VALIDATION_SAMPLES)


def _validate(arms, indices, threshold, beta, batch_size):
    """Sample the given arms until each is confidently above or below ``threshold``.

    Returns ``(valid, rates)``: which arms are valid anchors (mean >= threshold and lower bound
    within :data:`ACCEPTANCE_TOLERANCE` of it), and the rate each arm's bounds were last read
    at. An arm is sampled further while its mean reaches the threshold and its lower bound is
    not yet within that tolerance, or while its mean is below the threshold and its upper bound
    still reaches ``threshold +`` :data:`VALIDATION_TOLERANCE`. Undecided arms are sampled
    together, one model call per step.

    The bounds are read after every draw (a *look*), and a rule that is just below the
    tolerance gets a chance to pass at each: read at one rate ``beta`` every time, the looks
    accepted such rules up to 1.7 times as often as ``beta`` allows. The ``j``-th look's lower
    bound is therefore read at ``beta + log(j (j + 1))``, shares of the rule's risk that add up
    to it (a union bound over the looks; rejecting needs none: a wrongly rejected rule breaks
    no promise). An arm without samples first draws enough for a rule whose every sample agrees
    to pass at its first look.
    """
    indices = np.asarray(indices)
    accept, reject = threshold - ACCEPTANCE_TOLERANCE, threshold + VALIDATION_TOLERANCE
    first = batch_size
    if accept > 0:  # n * KL(1 || accept) reaches the first look's rate
        first = max(batch_size, math.ceil((beta + math.log(2)) / -math.log(accept)))
    cap = _sample_cap(arms)
    cap = np.full(len(indices), cap) if np.isscalar(cap) else np.asarray(cap)[indices]
    looks = np.zeros(len(indices))
    open_ = np.ones(len(indices), dtype=bool)
    valid = np.zeros(len(indices), dtype=bool)
    while True:
        n = arms.n_samples[indices]
        empty = open_ & (n == 0) & (cap > 0)
        if empty.any():  # (the first draw: its look comes with the samples)
            arms.pull(indices[empty], first)
            n = arms.n_samples[indices]
        looks[open_] += 1
        rates = beta + np.log(looks * (looks + 1))
        mean = arm_means(arms)[indices]
        lb = arm_bounds(arms, indices, rates, side="lower")[0]
        ub = arm_bounds(arms, indices, beta, side="upper")[1]
        valid = (mean >= threshold) & (lb > accept) & (n > 0)
        rejected = (mean < threshold) & (ub < reject)
        open_ &= ~valid & ~rejected & (n < cap)
        if not open_.any():
            return valid, np.where(looks > 0, rates, beta)
        arms.pull(indices[open_], batch_size)


def _below_threshold(arms, threshold, beta, batch_size, parent_precision=None):
    """True when every arm is confidently below ``threshold``: no candidate can be an anchor.

    Arms whose upper confidence bound (at the search's rate ``beta``, the validation's) still
    reaches ``threshold`` are sampled together, one model call per step, until none does
    (True) or until some arm's estimated precision reaches ``threshold - HOPELESS_MARGIN``
    or the arms that are still open run out of samples (False: the round may hold an anchor,
    and the bandit decides). Every sample drawn stays with its arm for the bandit.

    Proving every arm below the threshold samples every arm, where the bandit samples only the
    contenders; with many candidates that costs more than it saves. So the check draws at most
    ``HOPELESS_BUDGET`` batches beyond each arm's first (which the bandit's warm start would
    draw too) and otherwise leaves the round to the bandit. On the benchmark's Adult and
    Titanic rounds (at most about 20 candidates) the budget never binds; on a synthetic
    60-feature table (about 110 candidates a round) the check without it predicted 11 % more
    rows per explanation than the bandit alone (seeds 0-9), and 5 % with it (seeds 0-8,
    within the seeds' noise).

    A round after a round without anchor extends a rule that was never drawn for (it was
    chosen on its parent's samples), so none of its arms has a sample. Stratified arms
    (``pull_parents``) then first draw one batch for that rule: each of its samples serves
    every arm whose group its base row satisfies, and that often suffices to show an arm
    below the threshold. Arms the parent's batch cannot settle (predicted from the parent's
    precision, ``parent_precision[i]`` for arm ``i``, see
    :meth:`StratifiedArms.parent_can_settle`) are drawn for in the same model call, which
    predicts fewer rows than drawing for every arm, in the same number of calls.
    """
    idx = np.arange(arms.n_samples.shape[0])
    cap = _sample_cap(arms)
    budget = HOPELESS_BUDGET
    # Arms without samples are drawn for free: the bandit would start with them too.
    fresh = arms.n_samples == 0
    if fresh.any() and hasattr(arms, "pull_parents"):
        settle = fresh & arms.parent_can_settle(threshold, beta, batch_size, parent_precision)
        if settle.any():
            own = fresh & ~settle
            arms.pull_parents(idx[settle], batch_size, own=idx[own])
            fresh &= ~own
    while arm_means(arms).max() < threshold - HOPELESS_MARGIN:
        reach = arm_bounds(arms, idx, beta, side="upper")[1] >= threshold
        if not reach.any():
            return True
        reach &= arms.n_samples < cap
        budget -= int(np.count_nonzero(reach & ~fresh))
        if not reach.any() or budget < 0:
            return False
        arms.pull(idx[reach], batch_size)
        fresh &= ~reach
    return False


def _summary(arms, i, rate):
    """``(n_samples, precision, lower, upper)`` of arm ``i``, bounds at ``rate`` (the one
    its validation was decided at)."""
    lb, ub = arm_bounds(arms, [i], rate)
    return int(arms.n_samples[i]), float(arm_means(arms)[i]), float(lb[0]), float(ub[0])


def _extensions(parent, d, groups, width):
    """The predicates (of ``d``) that extend rule ``parent``: those it does not hold, where a
    predicate of a group the rule already has must be narrower (smaller ``width``, its
    coverage) than the rule's narrowest one of that group. ``width`` None: any predicate."""
    if width is None:
        return [p for p in range(d) if p not in parent]
    narrowest = {}
    for q in parent:
        narrowest[groups[q]] = min(narrowest.get(groups[q], np.inf), width[q])
    return [p for p in range(d) if width[p] < narrowest.get(groups[p], np.inf)]


def beam_search(
    instance,
    predict,
    target,
    *,
    threshold,
    delta,
    epsilon,
    beam_size,
    max_anchor_size,
    batch_size,
    bandit,
    rng,
    shared=None,
):
    """Find the anchor of one instance (Ribeiro et al. 2018, Algorithm 2, beam version).

    Returns a :class:`SearchResult`. The search maximises coverage among candidates validated
    to reach ``threshold``; rounds extend each of the ``beam_size`` best candidates (chosen by
    the bandit on precision) by one predicate, and stop when no extension can beat the coverage
    of the best anchor found, or at ``max_anchor_size`` predicates.
    """
    make_store = ReferenceStore if getattr(instance, "draws_reference_rows", False) else SampleStore
    store = make_store(instance, predict, target, rng, shared)
    d = instance.n_predicates
    # Predicates of one group are nested (tabular: the bounds on one side of a feature): a
    # rule gains one only if it is narrower than the rule's own (the wider one is then
    # redundant, and left out of the anchor as printed; see SearchResult.shown).
    groups = getattr(instance, "predicate_groups", None)
    if groups is None:
        groups, width = list(range(d)), None
    else:
        groups = [int(g) for g in groups]
        width = instance.coverage([(p,) for p in range(d)]).tolist()
    # Samples from D(z) itself serve every candidate of the first round.
    store.draw([((), batch_size)])
    max_size = d if max_anchor_size is None else min(max_anchor_size, d)
    # Union bound over every candidate the search validates: the empty rule and at most
    # beam_size candidates in each of at most max_size rounds. (The authors' code uses
    # 1 + (beam_size - 1) * d, which for beam_size=1 is no union at all: rules below the
    # threshold then pass more often than delta allows.)
    beta = np.log((1.0 + beam_size * max_size) / delta)
    empty = store.arms([()])
    known_precision = {}  # the estimated precision of each beam, when it was chosen
    valid, rates = _validate(empty, [0], threshold, beta, batch_size)
    if valid[0]:
        validated = _summary(empty, 0, rates[0])
        return SearchResult((), [], True, store, 1.0, beta, groups, width, validated)
    known_precision[()] = float(arm_means(empty)[0])

    beams = {0: [()]}
    # The order predicates were added in and the parent, of the beams only: a round of a
    # document of d words has about d candidates, and keeping them all for every round grew
    # with d times the rounds squared.
    order = {(): []}
    parent_of = {}
    best, best_coverage, best_key = None, -1.0, None
    size = 1
    while size <= max_size:
        candidates = []
        added = {}  # candidate -> (its parent, the predicate it adds)
        for parent in beams[size - 1]:
            for p in _extensions(parent, d, groups, width):
                cand = tuple(sorted(parent + (p,)))
                if cand in added:
                    continue
                added[cand] = (parent, p)
                candidates.append(cand)
        if not candidates:
            break
        coverage = instance.coverage(candidates)
        keep = coverage > best_coverage
        if store.draws_reference_rows:  # a rule no reference row satisfies has no samples
            keep &= coverage > 0
        candidates = [c for c, k in zip(candidates, keep) if k]
        if not candidates:
            break
        cov = dict(zip(candidates, coverage[keep]))
        arms = make_arms(store, candidates, [added[c][0] for c in candidates])
        arms.coverage = coverage[keep]  # ties in precision go to the broader rule
        n_best = min(beam_size, len(candidates))
        # A round in which every candidate is confidently below the threshold holds no
        # anchor: its only use is to choose the rules the next round extends, and those are
        # then simply the most precise ones, without the bandit's epsilon-identification
        # (whose samples at precisions far from 0 or 1 are the search's most expensive).
        # Tables only: a text sample counts for every candidate whose words it kept, so there
        # the bandit ranks the candidates from shared samples while the check would sample
        # each of them (more rows for the same valid anchors).
        tabular = isinstance(arms, (StratifiedArms, ReferenceArms))
        if (
            tabular
            and n_best < len(candidates)
            and _below_threshold(
                arms,
                threshold,
                beta,
                batch_size,
                [known_precision.get(added[c][0], 0.0) for c in candidates],
            )
        ):
            chosen = _ranking(arms)[-n_best:]
        else:
            chosen = bandit.select(
                arms, n_best, epsilon=epsilon, delta=delta, batch_size=batch_size
            )
        chosen = np.asarray(chosen)
        beams[size] = [candidates[i] for i in chosen]
        for cand in beams[size]:
            parent, p = added[cand]
            parent_of[cand] = parent
            order[cand] = order[parent] + [p]
        del added
        known_precision.update(zip(beams[size], arm_means(arms)[chosen].tolist()))
        # The chosen rules are validated on samples drawn after the choice: the samples that
        # chose them are the best looking of many (the winner's curse), and counting them
        # again let rules of precision 0.92 pass a threshold of 0.95 in most searches of a
        # text whose every rule was that precise (tests/test_honesty.py).
        fresh = store.arms(beams[size], fresh=True)
        positions = np.arange(len(chosen))
        valid, rates = _validate(fresh, positions, threshold, beta, batch_size)
        # Ties in perturbation coverage (text: keep_proba ** size, the same for every rule of
        # a size) go to the more precise rule: breaking them by reference-document coverage
        # instead picks common words ("movie", "some") that hold less often on real
        # held-out sentences.
        precision = arm_means(fresh)[positions]
        for i, (cand, ok, prec) in enumerate(zip(beams[size], valid, precision)):
            if not ok or cov[cand] < best_coverage:
                continue
            key = (cov[cand], prec)
            if best is None or key > best_key:
                best, best_coverage, best_key = cand, cov[cand], key
                validated = _summary(fresh, i, rates[i])
        size += 1
    if best is not None:
        return SearchResult(
            best, order[best], True, store, best_coverage, beta, groups, width, validated
        )
    # No valid anchor: among the beams of every round, the rule the bandit finds best. With
    # unlimited samples that is the best precision within epsilon (KL-LUCB's guarantee). When
    # the samples run out (reference rows: a rule covering k rows has at most k), the bandit
    # can no longer tell the rules apart and the best mean goes to some rule of 2 or 3 rows
    # at 1.00: rank by the lower confidence bound instead, the precision the rule surely has.
    # With reference rows this gives fallbacks that hold more often on held-out rows, and
    # broader ones.
    pool = [c for s in range(1, size) for c in beams.get(s, [])]
    if not pool:  # nothing to add to the empty rule (no informative predicate)
        return SearchResult((), [], False, store, 1.0, beta, groups, width)
    arms = make_arms(store, pool, [parent_of[c] for c in pool])
    arms.coverage = instance.coverage(pool)
    pick = bandit.select(arms, 1, epsilon=epsilon, delta=delta, batch_size=batch_size)
    best = pool[int(np.asarray(pick)[-1])]
    if getattr(arms, "n_available", None) is not None:
        best = pool[int(np.argmax(arm_bounds(arms, np.arange(len(pool)), beta)[0]))]
    cov = float(instance.coverage([best])[0])
    return SearchResult(best, order[best], False, store, cov, beta, groups, width)


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
