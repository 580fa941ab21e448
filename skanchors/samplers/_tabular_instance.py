"""The sampling algorithm of tabular data: ``D(z | A)`` for one explained row.

:class:`TabularInstance` builds the row's predicates from the fitted
:class:`~skanchors.samplers.TabularSampler` (its bins, value codes and reference pools) and
draws perturbations that satisfy an anchor: a base reference row whose values that violate the
anchor are replaced, feature by feature, by values of reference rows that satisfy it
(``perturbation="replace"``, Ribeiro et al. 2018), or a reference row that satisfies the anchor
(``perturbation="reference"``). Samples come in counter-based streams, so that searches of
different rows read the same samples and share their predictions.

The speed pieces it uses are modules of their own: the stream's random numbers
(:mod:`._splitmix`), bit counts of packed row masks (:mod:`._popcount`), hashing rows by a tree
model's splits (:mod:`._tree_splits`) and the compiled kernels (:mod:`._tabular_kernels`,
optional, the same to the last bit as the numpy code here).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .._hashing import STREAM_BLOCK, hash_multipliers, row_hash
from . import _tabular_kernels as kernels
from ._conditions import Condition, Kind, predicate_of
from ._popcount import bitcount, popcounts
from ._protocol import Capabilities, InstanceSampler
from ._splitmix import (
    GAMMA,
    block_seed,
    mix64_array,
    pick,
    stable_hash,
    stream_seed,
    uniform_below,
)
from ._tabular_values import _code_of, _flatten, _numpy_dtype, _scalar, _with_value
from ._tree_splits import extended_split_codes

__all__ = ["TabularInstance"]

# Whether frames whose columns share one numpy dtype are decoded as one block of that dtype
# (one gather) rather than column by column.
_BLOCK_DECODE = True

# The capabilities of an instance (see skanchors.samplers._protocol): a draw of "replace"
# starts from a random reference row (the stratified estimate), one of "reference" is a
# reference row satisfying the rule (every rule it satisfies may count it).
_REPLACE = Capabilities(stratified=True, streams=True, stream_base_rows=True)
_REFERENCE = Capabilities(exact_reuse=True, streams=True, reference_rows=True)


class TabularInstance(InstanceSampler):
    """Sampler for one explained row; see :mod:`skanchors.samplers._protocol` for the protocol.

    Besides ``sample`` (draws from a generator), it offers *streams*
    (:meth:`stream_samples`): sample ``i`` of the stream of ``D(z | A)`` depends on a seed,
    the predicates of ``A`` in the reference data's terms (``age <= 37`` is the same predicate
    for every row in that bin) and ``i`` only, so searches of different rows read the same
    samples and, where the explainer has a prediction cache, share their predictions (see
    :mod:`skanchors._sharing`).
    """

    def __init__(self, parent, data, perturbation="replace"):
        """``data``: the row as a validated 1-row DataFrame or 2-d array."""
        self.parent = parent
        names = parent.feature_names()
        n_ref = parent.n_reference_
        n_feat = len(names)
        # Row n_ref of the sampler's row space is the explained row itself; it is only drawn
        # when no reference row satisfies one of its predicates (e.g. an unseen category).
        x_codes = np.empty(n_feat, dtype=np.int32)
        x_missing = np.zeros(n_feat, dtype=bool)
        self._values = list(parent._values)
        self._own_values = False  # values the reference data never had were appended
        self._flat = None
        is_array = isinstance(data, np.ndarray)
        if is_array:
            row = data[0].tolist()
        else:
            row = [data.iat[0, j] for j in range(n_feat)]
        for j in range(n_feat):
            value = row[j]
            x_missing[j] = pd.isna(value)
            code = parent._n_missing_code[j] if x_missing[j] else _code_of(parent._lookup[j], value)
            if code is None or code >= len(self._values[j]):
                # A value the reference data never had: it becomes a code of its own.
                code = len(self._values[j])
                self._own_values = True
                if not is_array:
                    self._values[j] = _with_value(self._values[j], data.iloc[:, j])
                else:
                    value = np.array([row[j]], dtype=data.dtype)
                    self._values[j] = np.concatenate([self._values[j], value])
            x_codes[j] = code
        self.x_codes = x_codes
        # An array's values reach the model in the reference data's dtype, widened to hold the
        # row's own values (NaN or 2.5 in an integer reference would be cast to garbage).
        self._array_dtype = None
        if is_array:
            self._array_dtype = parent._dtype
            if self._own_values:
                # (pairwise: numpy 1.x's result_type takes at most 32 arguments)
                dtypes = (np.asarray(v).dtype for v in self._values)
                self._array_dtype = functools.reduce(np.promote_types, dtypes, parent._dtype)
        self._block_dtype = None  # frames whose columns share a numpy dtype decode as a block
        if _BLOCK_DECODE and not is_array:
            dtypes = {_numpy_dtype(v) for v in self._values}
            if len(dtypes) == 1 and None not in dtypes:
                (dtype,) = dtypes
                if dtype.kind in "biuf":
                    self._block_dtype = dtype
                    # the columns as a frame built from a dict gets them (integer names an
                    # integer index, tuples a MultiIndex)
                    self._block_columns = pd.Index(list(parent.feature_names_in_))
        self._hash_flat = parent._hash_flat
        # the appended values get their intervals too, when hash_rows first needs them (the
        # compiled stream windows hash the reference rows' own codes and never do)
        self._hash_stale = parent._hash_maps is not None and self._own_values
        gids = []  # the row's conditions (its predicates in the reference data's codes)
        nested = parent.bounds == "all"
        x_bins = parent._row_bins(row) if parent._numeric.size else None
        num_pos = {j: k for k, j in enumerate(parent._numeric)}
        for j in range(len(names)):
            if parent.categorical_[j]:
                # equal for rows with equal codes; a missing value has a code of its own
                gids.append(Condition(j, Kind.CODE, int(x_codes[j])))
                continue
            k = num_pos[j]
            if np.isnan(x_bins[k]):
                gids.append(Condition(j, Kind.MISSING, -1))
                continue
            # The bounds of the row's bin; with bounds="all" then the looser ones on each side
            # (the authors' predicate set: a row of age 21 in bins split at 23, 28 and 36 has
            # "age <= 23", "age <= 28" and "age <= 36"), so that a rule can span bins.
            # With bounds="interval", an inner bin is one condition (Kind.IN_BIN).
            b = int(x_bins[k])
            n_edges = len(parent.bin_edges_[k])
            bounds = [(Kind.AT_MOST, b)] if b < n_edges else []
            bounds += [(Kind.ABOVE, b)] if b > 0 else []
            if nested:
                bounds += [(Kind.AT_MOST, v) for v in range(b + 1, n_edges)]
                bounds += [(Kind.ABOVE, v) for v in range(b - 1, 0, -1)]
            elif len(bounds) == 2 and parent.bounds == "interval":
                bounds = [parent._interval_predicate(j, b)]
            gids += [Condition(j, kind, v) for kind, v in bounds]
        # A predicate that every reference row satisfies (e.g. "Pclass <= 3.0" when 3 is the
        # largest value) constrains nothing: it would only lengthen rules.
        informative = [i for i, g in enumerate(gids) if parent._informative(g)]
        self._gids = [gids[i] for i in informative]
        edges = {j: parent.bin_edges_[k] for j, k in num_pos.items()}
        self._predicates = [self._predicate(g, names, row, x_missing, edges) for g in self._gids]
        masks = [parent._predicate_mask(gids[i]) for i in informative]
        self._n_predicates = d = len(self._predicates)
        self._feature_of = np.array([g.feature for g in self._gids], dtype=np.intp)
        # The bounds on one side of one feature are nested: one group (see the search's
        # predicate_groups). With bounds="bin" there is one per side: no groups needed.
        self.predicate_groups = None
        if nested:
            sides = {}
            self.predicate_groups = np.array(
                [
                    sides.setdefault((g.feature, g.kind == Kind.ABOVE), len(sides))
                    for g in self._gids
                ],
                dtype=np.intp,
            )
        holds = np.empty((n_ref + 1, d), dtype=bool)
        for i, m in enumerate(masks):
            holds[:n_ref, i] = m
        holds[n_ref] = True
        self._holds = holds
        self._holds_flat = holds.ravel()
        self._n_ref = n_ref
        self._weights = parent._weights
        self._weight_levels = parent._weight_levels
        self._cum = parent._cum
        self._choice_cache = {}
        self._slot_cache = {}
        self._group_cache = {}
        self._window_plans = {}
        self._window = None  # (cache, the window kernel for it)
        # the most predicates on one feature (two: a bin's lower and upper edge)
        self._width = int(np.bincount(self._feature_of).max()) if d else 1
        self._stream_keys = {}
        self._coverages = {}
        # Coverage by bit-sets: one packed row of reference rows per predicate.
        self._bits = np.stack([parent._predicate_bits(g) for g in self._gids]) if d else None
        self._bits_words = None
        # The explained row is drawn (as a replacement value) only when no reference row
        # satisfies its predicates on a feature. Its streams are then its own: their samples
        # can hold values no other row has.
        by_feature = {}  # feature -> its predicates (in the reference data's terms)
        for f, g in zip(self._feature_of.tolist(), self._gids):
            by_feature.setdefault(f, []).append(g)
        fallback = any(parent._pool_empty(tuple(g)) for g in by_feature.values())
        self._fallback = fallback
        if fallback:
            self.stream_namespace = ("row", stable_hash(repr(row)))
        else:
            self.stream_namespace = "reference"
        # perturbation="reference": samples are reference rows that satisfy the anchor, so
        # one drawn for A that satisfies a longer rule is an exact draw for it too.
        self.perturbation = perturbation
        self.draws_reference_rows = perturbation == "reference"
        self.capabilities = _REFERENCE if self.draws_reference_rows else _REPLACE

    @property
    def n_predicates(self):
        """Number of the row's predicates (those some reference row does not satisfy)."""
        return self._n_predicates

    @property
    def predicates(self):
        """The row's predicates (:class:`~skanchors.Predicate`), by index."""
        return self._predicates

    def _predicate(self, condition, names, row, missing, edges):
        """The public form of one of the row's conditions (``edges``: the bin edges of each
        numeric feature, by column position)."""
        j = condition.feature
        if condition.kind != Kind.CODE:
            return predicate_of(condition, names[j], edges=edges[j])
        if missing[j]:
            return predicate_of(Condition(j, Kind.MISSING, -1), names[j])
        return predicate_of(condition, names[j], value=_scalar(row[j]))

    def search_key(self):
        """What a search of this row depends on, hashable: its predicates, printed and in the
        reference data's terms; None when its streams are its own (see ``stream_namespace``),
        so that its search depends on the row itself."""
        if self._fallback:
            return None
        printed = tuple((p.feature, p.op, repr(p.value), p.position) for p in self.predicates)
        return (self.stream_namespace, self.perturbation, tuple(self._gids), printed)

    # -- the search protocol
    def _pool(self, feature, preds):
        key = (feature, preds)
        pool = self._choice_cache.get(key)
        if pool is None:
            if not self._fallback:
                pool = self.parent._pool(tuple(self._gids[p] for p in preds))
            else:
                ok = self._holds[: self._n_ref, list(preds)].all(axis=1)
                rows = np.flatnonzero(ok)
                if rows.size == 0:
                    pool = (np.array([self._n_ref]), None)  # the explained row itself
                else:
                    pool = self.parent._make_pool(rows)
            self._choice_cache[key] = pool
        return pool

    def _slot(self, feature, preds):
        """The sampler's :meth:`~TabularSampler._pool_slot` of :meth:`_pool`'s pool."""
        key = (feature, preds)
        slot = self._slot_cache.get(key)
        if slot is None:
            gids = tuple(self._gids[p] for p in preds)
            slot = self._slot_cache[key] = self.parent._pool_slot(gids)
        return slot

    @property
    def predicate_features(self):
        """Index of the feature each predicate constrains (the search's stratification)."""
        return self._feature_of

    def _groups(self, anchor):
        """``(feature, predicates on it)`` of ``anchor``, by feature (kept per anchor: the
        blocks of a stream, and the rounds of a search, ask for the same ones)."""
        anchor = tuple(anchor)
        groups = self._group_cache.get(anchor)
        if groups is None:
            by_feature = {}
            for p in anchor:
                by_feature.setdefault(int(self._feature_of[p]), []).append(p)
            groups = [(f, tuple(sorted(by_feature[f]))) for f in sorted(by_feature)]
            if len(self._group_cache) < 4096:
                self._group_cache[anchor] = groups
        return groups

    def _reference_pool(self, anchor):
        """Reference rows that satisfy ``anchor`` (``perturbation="reference"``)."""
        if not anchor:
            return None  # every reference row (see _draw)
        # The sampler's pools of rows satisfying predicates, shared by all explained rows.
        pool = self.parent._pool(tuple(sorted({self._gids[p] for p in anchor})))
        rows = pool[0]
        if rows.size == 0 or (self._weights is not None and self._weights[rows].sum() <= 0):
            raise ValueError(
                "No reference row satisfies the rule "
                f"{[str(self.predicates[p]) for p in sorted(anchor)]}: with "
                "perturbation='reference' it has no samples."
            )
        return pool

    def reference_order(self, seed):
        """Reference rows in the search's drawing order, for ``perturbation="reference"``.

        Returns ``(keys, hashes, predicates)``: the rows' value codes, their
        :func:`~skanchors._hashing.row_hash` and, for each of this row's predicates, a boolean
        mask of the rows that satisfy it and their positions, in the order fixed by ``seed``
        (the explainer's ``random_state``): the same for every explained row, so their
        searches read the same rows and share predictions.
        """
        _, keys, hashes = self.parent._reference_order(seed)
        preds = [self.parent._ordered_predicate(seed, g) for g in self._gids]
        return keys, hashes, preds

    def _keys(self, src):
        """Value codes of the rows ``src`` (one reference row per feature) pick."""
        n_feat = len(self._values)
        # codes[src, arange(n_feat)] as one take on the flat matrix (no fancy indexing).
        codes = self.parent._codes.ravel()
        if not self._fallback:
            return codes.take(src.astype(np.intp) * n_feat + np.arange(n_feat))
        rows = np.minimum(src, self._n_ref - 1).astype(np.intp)
        keys = codes.take(rows * n_feat + np.arange(n_feat))
        own = src == self._n_ref
        if own.any():
            keys[own] = np.broadcast_to(self.x_codes, src.shape)[own]
        return keys

    def hash_rows(self, keys):
        """:func:`~skanchors._hashing.row_hash` of rows of value codes, or of the intervals
        between the model's split thresholds they fall in (see
        :meth:`TabularSampler.hash_by_splits`)."""
        if self._hash_stale:
            parent = self.parent
            maps = [
                extended_split_codes(v, t, m, parent._split_dtype)
                for v, t, m in zip(self._values, parent._split_thresholds, parent._hash_maps)
            ]
            self._hash_flat, self._hash_stale = _flatten(maps), False
        if self._hash_flat is None:
            return row_hash(keys)
        flat, offsets = self._hash_flat
        return row_hash(flat.take(keys + offsets))

    def _holds_of(self, src):
        d = self.n_predicates
        if d:
            at = src[:, self._feature_of].astype(np.intp) * d + np.arange(d)
            return self._holds_flat.take(at)
        return np.ones((len(src), 0), bool)

    def sample(self, anchor, n, rng, *, return_native=False):
        """``n`` draws from ``D(z | anchor)``: (codes matrix, predicate-holds matrix).

        A draw takes a random reference row (the *base* row) and replaces, feature by feature,
        the values that violate the anchor's predicates on that feature by values of reference
        rows that satisfy them (``perturbation="reference"``: a random reference row that
        satisfies the anchor, unchanged). With ``return_native=True`` a third matrix says which
        predicates the base row satisfied before any replacement: the strata of
        :class:`skanchors._stratified.StratifiedArms`. The draws are the start of a stream
        (:meth:`stream_windows`) under a seed taken from ``rng``.
        """
        n = int(n)
        if n == 0:
            keys = np.zeros((0, len(self._values)), dtype=self.parent._codes.dtype)
            holds = np.zeros((0, self.n_predicates), dtype=bool)
            return (keys, holds, holds.copy()) if return_native else (keys, holds)
        seed = int(rng.integers(2**63))
        keys, holds, native, _, _ = self.stream_windows([(anchor, 0, n)], seed, None)
        return (keys, holds, native) if return_native else (keys, holds)

    def stream_key(self, anchor):
        """64-bit key of the stream of ``D(z | anchor)``: equal for equal predicate sets."""
        anchor = tuple(sorted(anchor))
        key = self._stream_keys.get(anchor)
        if key is None:
            gids = tuple(sorted(self._gids[p] for p in anchor))
            plain = tuple(g.plain() for g in gids)
            key = self._stream_keys[anchor] = self.parent._stream_key(
                (self.stream_namespace, plain)
            )
        return key

    def stream_samples(
        self, anchor, start, stop, seed, cache, return_hashes=False, return_holds=True
    ):
        """Samples ``start:stop`` of the stream of ``D(z | anchor)``: (codes, holds, native).

        Block ``b`` of a stream (:data:`~skanchors._hashing.STREAM_BLOCK` samples) is drawn
        from counter-based random numbers keyed by ``(seed, stream key, b)`` and kept in
        ``cache`` (the explainer's prediction cache, or None) with its
        codes and their :func:`~skanchors._hashing.row_hash` (which ``return_hashes``
        adds as a fourth array): searches of other rows reading the block do not compute them
        again. ``return_holds=False`` skips the holds matrix (None in its place).
        """
        keys, holds, native, hashes, _ = self.stream_windows(
            [(anchor, start, stop)], seed, cache, return_holds=return_holds
        )
        out = (keys, holds, native)
        return out + (hashes,) if return_hashes else out

    def stream_windows(self, requests, seed, cache, return_holds=True, return_base=False):
        """Samples ``start:stop`` of several streams, one after the other.

        ``requests`` lists ``(anchor, start, stop)``. Returns ``(keys, holds, native,
        hashes, blocks)`` over all requests in order (``holds`` None with
        ``return_holds=False``; with ``return_base=True``, the base rows in place of
        ``native``, which is their :meth:`native_of`); ``blocks`` lists ``(key, lo, hi)``,
        one per block read, in order: rows ``lo:hi`` of the block ``key`` (by which the
        cache keeps the labels of the block's rows). The blocks missing from ``cache`` (the
        explainer's prediction cache, given by the search; None: no
        cache) are generated together, in one pass of array operations whatever their
        number (:meth:`_make_blocks`).

        With numba (the ``fast`` extra), the default perturbation and a cache whose
        predictions are compiled too (or no cache), the samples are drawn directly by
        compiled code, the same to the last bit, without making or keeping their blocks
        (``blocks`` is then None).
        """
        kernel = self._window_kernel(cache)
        if kernel is not None:
            return self._compiled_windows(kernel, requests, seed, return_holds, return_base)
        n = STREAM_BLOCK
        plan, have, todo = [], {}, {}
        for anchor, start, stop in requests:
            key = self.stream_key(anchor)
            first, last = start // n, (stop - 1) // n
            names = [(key, b) for b in range(first, last + 1)]
            for name in names:
                if name not in have and name not in todo:
                    block = None if cache is None else cache.get_block(name)
                    if block is None:
                        todo[name] = anchor
                    else:
                        have[name] = block
            plan.append((names, start - first * n, stop - first * n))
        if todo:
            for name, block in zip(todo, self._make_blocks(list(todo.items()), seed)):
                have[name] = block
                if cache is not None:
                    cache.put_block(name, block)
        src, base, keys, hashes, blocks = [], [], [], [], []
        for names, lo, hi in plan:
            for k, name in enumerate(names):
                blocks.append((name, max(lo - k * n, 0), min(hi - k * n, n)))
            if len(names) == 1:
                parts = have[names[0]]
            else:
                parts = [np.concatenate([have[name][j] for name in names]) for j in range(4)]
            for out, part in zip((src, base, keys, hashes), parts):
                out.append(part[lo:hi])
        if len(plan) == 1:
            src, base, keys, hashes = src[0], base[0], keys[0], hashes[0]
        else:
            src, base, keys, hashes = (np.concatenate(a) for a in (src, base, keys, hashes))
        holds = self._holds_of(src) if return_holds else None
        return keys, holds, base if return_base else self._holds[base], hashes, blocks

    def native_of(self, base, columns=None):
        """Which predicates the reference rows ``base`` satisfy (the ``native`` matrix of
        samples built on them), or its cells ``[base, columns]``."""
        return self._holds[base] if columns is None else self._holds[base, columns]

    def _window_kernel(self, cache):
        """The compiled kernel that draws stream windows without their blocks, where it
        applies: the default perturbation from the sampler's flat pools, and a cache that
        keeps no blocks (disabled) or whose predictions are the compiled table's (the
        dictionaries read the labels the cache keeps by block)."""
        known = self._window
        if known is not None and known[0] is cache:
            return known[1]
        kernel = kernels.window_kernel()
        if self._fallback or self._cum is not None or self.draws_reference_rows:
            kernel = None
        elif cache is not None and cache.enabled and not cache.compiled:
            kernel = None
        self._window = (cache, kernel)
        return kernel

    def _window_plan(self, anchor, seed):
        """``(seed, stream seed, features, predicates, slots)`` of the stream of ``anchor``
        as the window kernel reads it (kept per anchor): the stream's ``mix(mix(seed) ^
        key)`` and its (feature, predicates padded to :attr:`_width`, pool slot) groups."""
        plan = self._window_plans.get(anchor)
        if plan is None or plan[0] != seed:
            stream = stream_seed(seed, self.stream_key(anchor))
            width, features, preds, slots = self._width, [], [], []
            for f, group in self._groups(anchor):
                features.append(f)
                preds.extend(group + (group[-1],) * (width - len(group)))
                slots.extend(self._slot(f, group))
            plan = (seed, stream, features, preds, slots)
            if len(self._window_plans) < 4096:
                self._window_plans[anchor] = plan
        return plan

    def _compiled_windows(self, kernel, requests, seed, return_holds, return_base=False):
        """:meth:`stream_windows` by the compiled window kernel: the same samples, drawn
        directly (their blocks are neither made nor kept; no block keys)."""
        streams, starts, stops, ptr, features, preds, slots = [], [], [], [0], [], [], []
        for anchor, start, stop in requests:
            _, stream, f, p, slot = self._window_plan(tuple(anchor), seed)
            streams.append(stream)
            starts.append(start)
            stops.append(stop)
            features += f
            preds += p
            slots += slot
            ptr.append(len(features))
        parent = self.parent
        codes = parent._codes
        src, base, keys, hashes = kernel(
            np.array(streams, dtype=np.uint64),
            np.array(starts, dtype=np.intp),
            np.array(stops, dtype=np.intp),
            STREAM_BLOCK,
            np.array(ptr, dtype=np.intp),
            np.array(features, dtype=np.intp),
            np.array(preds, dtype=np.intp).reshape(len(features), self._width),
            np.array(slots, dtype=np.intp).reshape(len(features), 2),
            self._n_ref,
            parent._pool_rows,
            self._holds,
            codes,
            codes if parent._hash_codes is None else parent._hash_codes,
            hash_multipliers(codes.shape[1]),
        )
        holds = self._holds_of(src) if return_holds else None
        return keys, holds, base if return_base else self._holds[base], hashes, None

    def _make_blocks(self, blocks, seed):
        """Stream blocks ``[((stream key, b), anchor), ...]``: ``(src, base, keys, hashes)``
        each, generated together.

        Sample ``i`` of block ``b`` reads the random numbers of counters ``(column, i)`` of
        the block's key ``mix(seed, stream key, b)`` (SplitMix64, Steele et al. 2014): column
        0 picks the base row, column ``1 + f`` the row whose value replaces feature ``f``'s.
        A block is thus the same whichever blocks it is generated with. With numba (the
        ``fast`` extra) the default perturbation's blocks come from compiled code
        (:mod:`skanchors._speed.kernels.blocks`), the same to the last bit.
        """
        n, n_feat, d = STREAM_BLOCK, len(self._values), self.n_predicates
        n_blocks = len(blocks)
        # Pools are drawn uniformly with one gather from the sampler's flat store of pools,
        # unless they are weighted (balance) or the explained row's own (fallback).
        flat = not (self._fallback or self._cum is not None or self.draws_reference_rows)
        block_seeds, pair_block, pair_feature, pair_preds, pools = [], [], [], [], []
        for j, ((key, b), anchor) in enumerate(blocks):
            block_seeds.append(block_seed(seed, key, b))
            if self.draws_reference_rows:
                pools.append(self._reference_pool(anchor))
                continue
            for f, preds in self._groups(anchor):
                pair_block.append(j)
                pair_feature.append(f)
                pair_preds.append(preds)
                pools.append(self._slot(f, preds) if flat else self._pool(f, preds))
        block_seeds = np.array(block_seeds, dtype=np.uint64)
        pair_block = np.array(pair_block, dtype=np.intp)
        pair_feature = np.array(pair_feature, dtype=np.intp)
        width = max((len(p) for p in pair_preds), default=1)
        at = np.array([p + (p[-1],) * (width - len(p)) for p in pair_preds], dtype=np.intp)
        kernel = kernels.block_kernel() if flat else None
        if kernel is not None:
            codes = self.parent._codes
            src, base, keys, hashes = kernel(
                block_seeds,
                n,
                self._n_ref,
                pair_block,
                pair_feature,
                at.reshape(len(pair_preds), width),
                np.array(pools, dtype=np.intp).reshape(len(pools), 2),
                self.parent._pool_rows,
                self._holds,
                codes,
                codes if self.parent._hash_codes is None else self.parent._hash_codes,
                hash_multipliers(codes.shape[1]),
            )
            keys = keys.reshape(n_blocks, n, n_feat)
            return [(src[j], base[j], keys[j], hashes[j]) for j in range(n_blocks)]
        # One row of random numbers per block (its base rows) and per (block, feature) pair.
        columns = np.concatenate([np.zeros(n_blocks, dtype=np.intp), pair_feature + 1])
        counters = columns.astype(np.uint64)[:, None] * np.uint64(n) + np.arange(
            1, n + 1, dtype=np.uint64
        )
        seeds = np.concatenate([block_seeds, block_seeds[pair_block]])
        z = mix64_array(seeds[:, None] + counters * np.uint64(GAMMA))
        if self.draws_reference_rows:
            base = np.stack([pick(pool, z[j], self) for j, pool in enumerate(pools)])
            src = np.repeat(base[:, :, None].astype(np.int32), n_feat, axis=2)
        else:
            base = pick(None, z[:n_blocks], self)
            src = np.empty((n_blocks, n, n_feat), dtype=np.int32)
            src[:] = base[:, :, None]
            if len(pair_block):
                pair_base = base[pair_block]
                ok = self._holds_flat[(pair_base * d)[:, :, None] + at[:, None, :]].all(axis=2)
                if flat:
                    slots = np.array(pools, dtype=np.intp)  # (offset, size) per pair
                    drawn = uniform_below(z[n_blocks:], slots[:, 1:])
                    picks = self.parent._pool_rows[drawn + slots[:, :1]]
                else:
                    picks = np.empty_like(pair_base)
                    for p, pool in enumerate(pools):
                        picks[p] = pick(pool, z[n_blocks + p], self)
                src[pair_block[:, None], np.arange(n), pair_feature[:, None]] = np.where(
                    ok, pair_base, picks
                )
        keys = self._keys(src.reshape(n_blocks * n, n_feat))
        hashes = self.hash_rows(keys).reshape(n_blocks, n)
        keys = keys.reshape(n_blocks, n, n_feat)
        return [(src[j], base[j], keys[j], hashes[j]) for j in range(n_blocks)]

    def decode(self, keys):
        """Model input (DataFrame or array in the reference dtypes) for rows of codes."""
        parent = self.parent
        if parent._frame_input:
            if self._block_dtype is None:
                cols = [values.take(keys[:, j]) for j, values in enumerate(self._values)]
                return pd.DataFrame(dict(zip(parent.feature_names_in_, cols)), copy=False)
            # Columns all of one numpy dtype: one gather and one block (pandas builds a wide
            # frame column by column slowly)
            if self._flat is None:
                self._flat = _flatten([np.asarray(v) for v in self._values])
            flat, offsets = self._flat
            return pd.DataFrame(flat.take(keys + offsets), columns=self._block_columns, copy=False)
        # Arrays: every feature's values in one flat array, read with one gather.
        if self._flat is None:
            self._flat = _flatten(self._values) if self._own_values else parent._flat_values()
        flat, offsets = self._flat
        return flat.take(keys + offsets).astype(self._array_dtype, copy=False)

    def _covered_bits(self, anchor):
        bits = self._bits[anchor[0]].copy()
        for p in anchor[1:]:
            bits &= self._bits[p]
        return bits

    def coverage(self, anchors):
        """Coverage of each anchor under the (possibly weighted) reference distribution."""
        out = np.empty(len(anchors))
        known = self._coverages
        todo = {}  # anchors not known yet, by length: their bit-sets are ANDed together
        for i, anchor in enumerate(anchors):
            if not anchor:
                out[i] = 1.0
                continue
            anchor = tuple(anchor)
            value = known.get(anchor)
            if value is None:
                todo.setdefault(len(anchor), []).append((i, anchor))
            else:
                out[i] = value
        kernel = kernels.coverage_kernel() if self._weights is None else None
        for size, items in todo.items():
            index = np.array([anchor for _, anchor in items], dtype=np.intp)
            if kernel is not None:
                values = (kernel(self._word_filter(), index) / self._n_ref).tolist()
            else:
                bits = self._bits[index]
                bits = np.bitwise_and.reduce(bits, axis=1) if size > 1 else bits[:, 0]
                if self._weights is None:
                    values = (popcounts(bits) / self._n_ref).tolist()
                elif self._weight_levels is not None:
                    # the rows of each weight the rule covers, times that weight
                    weights, levels = self._weight_levels
                    counts = popcounts(bits[:, None, :] & levels[None, :, :])
                    values = (counts.astype(float) @ weights).tolist()
                else:
                    covered = np.unpackbits(bits, axis=1, count=self._n_ref).astype(bool)
                    values = [float(self._weights[c].sum()) for c in covered]
            for (i, anchor), value in zip(items, values):
                out[i] = value
                # The stratified arms ask for the same predicate groups at every search step.
                if len(known) < 4096:
                    known[anchor] = value
        return out

    def _word_filter(self):
        """The packed predicate masks as 64-bit words (rows are padded to whole words)."""
        if self._bits_words is None:
            self._bits_words = np.ascontiguousarray(self._bits).view(np.uint64)
        return self._bits_words

    def reference_coverage(self, anchor):
        """Fraction of the (unweighted) reference rows that satisfy the anchor."""
        if not anchor:
            return 1.0
        return bitcount(self._covered_bits(anchor)) / self._n_ref
