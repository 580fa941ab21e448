"""Perturbation distribution for tabular data, learned from raw reference data.

``D(z | A)``, ``perturbation="replace"`` (the default): draw a reference row, then make every
anchored predicate hold by replacing the value of each anchored feature that violates it with
the value of a reference row that satisfies it (Ribeiro et al. 2018; the authors'
``sample_from_train``). ``perturbation="reference"``: the reference rows that satisfy ``A``,
unchanged (the data's own conditional distribution). Values are always real reference values in
their original dtype (categories, strings, NaN), so any model that accepts the raw data -
including a whole Pipeline - can predict the perturbations.
"""

from __future__ import annotations

import functools
import hashlib
import numbers
import threading

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from .._cache import STREAM_BLOCK, SampleCache, hash_multipliers, row_hash
from .._explanation import Predicate
from .._numba import compiled
from .._validation import check_params, refuse_complex, refuse_unhashable
from ..discretizers import (
    EdgesDiscretizer,
    _BaseDiscretizer,
    _shortest_between,
    make_discretizer,
)

__all__ = ["TabularSampler"]

_PERTURBATIONS = ("replace", "reference", "auto")
_BOUNDS = ("bin", "interval", "all")
_SLOTS_LOCK = threading.Lock()
# The sampler keeps the stream keys of at most this many predicate sets (then starts over).
_MAX_STREAM_KEYS = 100_000

_M1, _M2, _M4 = (np.uint64(m) for m in (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F))
_H01, _ONE, _TWO, _FOUR, _TOP = (np.uint64(v) for v in (0x0101010101010101, 1, 2, 4, 56))


# Weighted coverage counts the covered rows of each distinct weight when there are at most
# this many (TabularSampler._levels_of), instead of summing the weights of the covered rows.
_MAX_WEIGHT_LEVELS = 16


def _popcounts_swar(bits):
    """Set bits in each row of a 2-d uint8 array whose rows are whole 64-bit words, by the
    SWAR popcount on those words (numpy 1.x has no bit count: 2.5x faster than a byte
    lookup table on Adult's 22,792 reference rows, 14 rules at a time)."""
    x = np.ascontiguousarray(bits).view(np.uint64)
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> _TWO) & _M2)
    x = (x + (x >> _FOUR)) & _M4
    return ((x * _H01) >> _TOP).sum(axis=-1, dtype=np.int64)


def _popcounts_numpy(bits):
    return np.bitwise_count(bits).sum(axis=-1, dtype=np.int64)


_LUT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcounts_1x(bits):
    """numpy 1.x: a byte lookup table for narrow masks (one numpy call: Titanic's 623 rows),
    the SWAR count for wide ones (its eight calls pay from a few hundred bytes a row)."""
    if bits.shape[-1] <= 256:
        return _LUT[bits].sum(axis=-1, dtype=np.int64)
    return _popcounts_swar(bits)


# Set bits per row of packed predicate masks (see TabularSampler._predicate_bits).
_popcounts = _popcounts_numpy if hasattr(np, "bitwise_count") else _popcounts_1x


def _bitcount(bits):
    return int(_popcounts(bits[None, :])[0])


class TabularSampler(BaseEstimator):
    """Samples perturbations of a table row from reference data.

    Parameters
    ----------
    discretizer : {"quartile", "decile", "tree"} or transformer, default="quartile"
        Bins numeric features; the bins' edges make the predicates (see ``bounds``).
        ``"tree"`` bins where the model's prediction changes and needs the predictions as
        ``y`` in :meth:`fit` (:class:`~skanchors.discretizers.TreeDiscretizer`).
        A transformer must have ``fit``, ``transform`` (each value's bin index) and
        ``bin_edges_`` (see :mod:`skanchors.discretizers`);
        :class:`~sklearn.preprocessing.KBinsDiscretizer` with ``encode="ordinal"`` is one. The
        predicates' edges are the fitted sampler's ``bin_edges_``.
    categorical_features : "auto", list of str/int, or boolean mask, default="auto"
        Features whose predicates are equalities. ``"auto"``: non-numeric columns (object,
        string, category, bool); in an object array, the columns whose values are not all
        numbers. A list or mask replaces ``"auto"``: it names every categorical feature
        (a number that is a column's name is that column; other numbers are positions).
    perturbation : {"auto", "replace", "reference"}, default="auto"
        ``D(z | A)``. ``"replace"``: a random reference row whose values that violate ``A``
        are replaced, feature by feature, by values of reference rows that satisfy ``A`` on
        that feature (Ribeiro et al. 2018): rules are tested on combinations of values the
        data may not hold. ``"reference"``: a reference row that satisfies ``A``, unchanged:
        the data's own distribution conditioned on ``A``, so precision is measured where the
        model is used (held-out rows). A sample drawn for a rule that satisfies a longer rule
        is then an exact draw for it too, so every sample serves every rule it satisfies. The
        anchor search draws these rows without replacement (in an order fixed by the
        explainer's ``random_state``) and counts each row once, so a rule that covers ``k``
        reference rows has at most ``k`` samples, and its confidence bounds say what ``k``
        rows can say: a rule covering few rows rarely validates. ``"auto"``: both, for an
        explainer that searches the reference rows first and the replaced ones where no rule
        validates on them (:class:`~skanchors.AnchorExplainer`'s default); its instances
        draw reference rows unless :meth:`instance` is asked for the other.
    bounds : {"interval", "bin", "all"}, default="interval"
        The predicates of a numeric feature. ``"interval"``: the row's bin as one predicate
        (``lower < x <= upper``; one-sided in the lowest and highest bins, or when one side
        constrains no reference row): a rule keeps a numeric feature to the row's bin or
        leaves it free. ``"bin"``: the two bounds of the row's bin (``x <= upper edge``,
        ``x > lower edge``), each a predicate of its own. ``"all"``: the bound the row
        satisfies at every edge, as in the authors' code (a row in the lowest bin gets
        ``x <= e`` for each edge ``e``), so a rule can span several bins; a rule then holds
        at most one bound per side of a feature (the search may narrow it, never widen it).

    Attributes
    ----------
    feature_names_in_ : ndarray of str or None
    n_features_in_ : int
    categorical_ : ndarray of bool
    discretizer_ : fitted discretizer of the numeric features
    bin_edges_ : list of ndarray
        The inner bin edges of each numeric feature, as the predicates read them: bin ``b``
        holds the values ``x`` with ``edges[b - 1] < x <= edges[b]``. The discretizer's own,
        except for a transformer whose bins are ``edges[b - 1] <= x < edges[b]`` (such as
        :class:`~sklearn.preprocessing.KBinsDiscretizer`): its edges are moved to the
        shortest number that splits the reference data as its bins do.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> X = pd.DataFrame({"age": np.arange(100.0), "sex": ["f", "m"] * 50})
    >>> s = TabularSampler().fit(X)
    >>> inst = s.instance(X.iloc[[10]])
    >>> [str(p) for p in inst.predicates]
    ['age <= 24.0', 'sex = f']
    >>> keys, holds = inst.sample((1,), 5, np.random.default_rng(0))
    >>> inst.decode(keys)["sex"].tolist()
    ['f', 'f', 'f', 'f', 'f']
    >>> wide = TabularSampler(bounds="all").fit(X).instance(X.iloc[[10]])
    >>> [str(p) for p in wide.predicates]
    ['age <= 24.0', 'age <= 49.0', 'age <= 74.0', 'sex = f']
    """

    _parameter_constraints: dict = {
        "discretizer": [
            StrOptions({"quartile", "decile", "tree"}),
            HasMethods(["fit", "transform"]),
        ],
        "categorical_features": [StrOptions({"auto"}), "array-like"],
        "perturbation": [StrOptions(set(_PERTURBATIONS))],
        "bounds": [StrOptions(set(_BOUNDS))],
    }

    def __init__(
        self,
        *,
        discretizer="quartile",
        categorical_features="auto",
        perturbation="auto",
        bounds="interval",
    ):
        self.discretizer = discretizer
        self.categorical_features = categorical_features
        self.perturbation = perturbation
        self.bounds = bounds

    # ------------------------------------------------------------------ fitting
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Learn the reference distribution from raw data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw reference data (the data the model is used on); NaN allowed.
        y : array-like of shape (n_samples,) or None, default=None
            Passed to the discretizer's ``fit``: the model's predictions on ``X``, which
            :class:`~skanchors.discretizers.TreeDiscretizer` (``discretizer="tree"``) needs and
            the other discretizers ignore.
        sample_weight : array-like of shape (n_samples,), default=None
            Sampling weight of each reference row (used to class-balance the reference data).

        Returns
        -------
        self
        """
        frame = self._as_frame(X, reset=True)
        _refuse_dates(frame)
        refuse_complex(frame)
        _refuse_bools_among_numbers(frame)
        n = len(frame)
        if n < 2:
            raise ValueError(
                f"Found X with {n} sample(s) while a minimum of 2 is required: the reference "
                "data must have at least 2 rows."
            )
        self.categorical_ = self._categorical_mask(frame)
        empty = [
            name
            for j, name in enumerate(frame.columns)
            if self.categorical_[j] and frame.iloc[:, j].isna().all()
        ]
        if empty:
            # (Numeric ones are reported by the discretizer, with the same wording.)
            raise ValueError(
                f"Cannot use feature(s) {empty}: every value is missing. Drop the column or "
                "impute it before explaining."
            )
        self._values, self._lookup = [], []
        codes = np.empty((n, frame.shape[1]), dtype=np.int32)
        for j, name in enumerate(frame.columns):
            col = frame[name]
            try:
                code, uniques = pd.factorize(col, use_na_sentinel=True)
            except TypeError:  # unhashable cells: say which
                refuse_unhashable(frame.iloc[:, [j]])
                raise
            code = code.astype(np.int32)
            code[code < 0] = len(uniques)
            _, first = np.unique(code, return_index=True)
            self._values.append(col.array[first] if self._frame_input else col.to_numpy()[first])
            self._lookup.append(_value_lookup(uniques))
            codes[:, j] = code
        self._codes = codes
        self._n_missing_code = [len(lk) for lk in self._lookup]
        numeric = np.flatnonzero(~self.categorical_)
        self._numeric = numeric
        if numeric.size:
            num = frame.iloc[:, numeric]
            bad = [c for c in num.columns if not pd.api.types.is_numeric_dtype(num[c])]
            if bad:
                raise ValueError(
                    f"Features {bad} are not numeric; list them in categorical_features."
                )
            self.discretizer_ = make_discretizer(self.discretizer)
            num = num.astype(float)
            # (Arrays with infinite values are refused by check_array, with its own words.)
            infinite = [c for c in num.columns if np.isinf(num[c].to_numpy()).any()]
            if infinite:
                raise ValueError(
                    f"Feature(s) {infinite} of X hold infinite values; the reference data's "
                    "numbers must be finite (missing values, NaN, are allowed)."
                )
            if not self._frame_input:
                num.columns = [f"x{j}" for j in numeric]
            elif not all(isinstance(c, str) for c in num.columns):
                # scikit-learn keeps string column names only (and refuses a mix): the
                # discretizer names a column called 0 "column 0", as the rules print it
                names = [c if isinstance(c, str) else f"column {c}" for c in num.columns]
                if len(set(names)) < len(names):  # a column 1 and a column "column 1"
                    names = [repr(c) for c in num.columns]
                self.discretizer_ = _renamed_edges(
                    self.discretizer_, dict(zip(num.columns, names)), list(frame.columns)
                )
                num.columns = names
            self.bin_edges_ = _fitted_edges(self.discretizer_, num, y)
            bins = np.column_stack(
                [np.searchsorted(e, c, side="left") for e, c in zip(self.bin_edges_, num.T.values)]
            )
            self._bins = np.where(np.isnan(num.to_numpy()), -1, bins).astype(np.int32)
        else:
            self.discretizer_ = None
            self.bin_edges_ = []
            self._bins = np.empty((n, 0), dtype=np.int32)
        if sample_weight is None:
            self._weights = None
        else:
            w = np.asarray(sample_weight, dtype=float)
            if w.shape != (n,) or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
                raise ValueError(
                    f"sample_weight must be {n} non-negative finite numbers with a positive sum."
                )
            self._weights = w / w.sum()
        self._cum = None if self._weights is None else np.cumsum(self._weights)
        self._weight_levels = self._levels_of(self._weights)
        # Per-predicate row masks, packed bits and sampling pools, shared by all instances.
        self._masks, self._packed, self._pools, self._constrains = {}, {}, {}, {}
        # Every pool's rows, back to back in one array (see _pool_slot).
        # Row indices of the pools: 32-bit below 2**31 reference rows.
        rows = np.zeros(0, dtype=np.int32 if n < 2**31 else np.intp)
        self._slots, self._pool_rows, self._slots_used = {}, rows, 0
        self._empty_pools = {}
        self._stream_keys = {}  # (namespace, predicates in the reference data's terms) -> key
        self._flat = None
        self._orders, self._ordered = {}, {}
        # rows are hashed by their value codes unless hash_by_splits says otherwise
        self._split_thresholds = self._split_dtype = self._hash_maps = self._hash_codes = None
        self._hash_flat = None
        self.n_reference_ = n
        if self._cum is None and self.perturbation != "reference":
            _block_kernel()  # numba's one-time start belongs to fit, not to the first row
        return self

    def __getstate__(self):
        # The drawing orders are rebuilt in a few milliseconds where needed: joblib workers
        # need not receive them (their predicate positions are ~100 kB per predicate on Adult),
        # nor the stream keys kept so far (one hash each).
        state = dict(super().__getstate__())
        for name in ("_orders", "_ordered", "_stream_keys"):
            if name in state:
                state[name] = {}
        # Nor the row masks and pools the searches built so far: rebuilt on first use, they
        # made a fitted Adult sampler's pickle grow from 4.0 to 7.2 MB over 10 explained rows
        # (sent to every joblib worker at each call, kept in every saved explainer).
        if "_pool_rows" in state:
            for name in ("_masks", "_packed", "_pools", "_constrains", "_slots", "_empty_pools"):
                state[name] = {}
            state["_pool_rows"], state["_slots_used"] = state["_pool_rows"][:0].copy(), 0
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "n_reference_" in state:
            # fitted by an earlier version: what it did not keep, derived from what it did
            if "_weight_levels" not in state:
                self._weight_levels = self._levels_of(self._weights)
            if "_empty_pools" not in state:
                self._empty_pools = {}

    def hash_by_splits(self, thresholds, dtype=np.float32):
        """Identify rows the model cannot tell apart, so that one of them is predicted.

        ``thresholds`` lists, per feature, the sorted values at which a tree model splits it
        (``skanchors.models.split_thresholds``), and ``dtype`` the precision it compares
        values in. The model sees a feature only through ``dtype(x) <= t``, so values
        between the same two thresholds are one value to it:
        rows are hashed (the search's deduplication and prediction cache) by those intervals
        instead of by their values. The samples, the search and its answers are unchanged;
        fewer rows go to the model. Returns False, changing nothing, when a feature holds
        values that are not numbers or the thresholds do not match the features.
        """
        check_is_fitted(self, "n_reference_")
        if thresholds is None or len(thresholds) != self.n_features_in_:
            return False
        thresholds = [None if t is None else np.asarray(t, dtype=np.float64) for t in thresholds]
        maps = [_split_codes(v, t, dtype) for v, t in zip(self._values, thresholds)]
        if any(m is None for m in maps):
            return False
        self._split_thresholds, self._split_dtype, self._hash_maps = thresholds, dtype, maps
        self._hash_flat = _flatten(maps)  # for TabularInstance.hash_rows
        self._hash_codes = np.column_stack(
            [m.take(self._codes[:, j]) for j, m in enumerate(maps)]
        ).astype(np.int32)
        self._orders = {}  # their hashes were of the values
        return True

    def _reference_order(self, seed):
        """The reference rows in the order the search draws them (``perturbation="reference"``).

        A random permutation fixed by ``seed``, with the rows' codes and
        :func:`~skanchors._cache.row_hash` in that order. With weights (``balance``), each row
        is first kept with probability ``weight / max(weight)``: the kept rows are a sample of
        the weighted distribution, so a rule's rows in the order, counted alike (up to all of
        them), are draws of the weighted distribution conditioned on the rule.
        """
        out = self._orders.get(seed)
        if out is None:
            rng = np.random.default_rng([int(seed), 0x5EF])
            n = self.n_reference_
            if self._weights is None:
                order = rng.permutation(n)
            else:
                w = self._weights
                rows = np.flatnonzero(rng.random(n) * w.max() < w)
                order = rows[rng.permutation(rows.size)]
            keys = np.ascontiguousarray(self._codes[order])
            hashed = keys if self._hash_codes is None else self._hash_codes[order]
            out = self._orders[seed] = (order, keys, row_hash(hashed))
        return out

    def _ordered_predicate(self, seed, gid):
        """Predicate ``gid`` over the reference rows in the order of ``seed``: (mask, the
        positions where it holds). Kept for every row that has the predicate."""
        out = self._ordered.get((seed, gid))
        if out is None:
            mask = self._predicate_mask(gid)[self._reference_order(seed)[0]]
            out = self._ordered[(seed, gid)] = (mask, np.flatnonzero(mask).astype(np.int32))
        return out

    def _predicate_mask(self, gid):
        """Reference rows satisfying a predicate given as ``(feature, kind, value)``."""
        mask = self._masks.get(gid)
        if mask is None:
            j, kind, value = gid
            if kind == 0:  # category code (NaN has a code of its own)
                mask = self._codes[:, j] == value
            else:
                bins = self._bins[:, int(np.searchsorted(self._numeric, j))]
                if kind == 1:  # missing
                    mask = bins < 0
                elif kind == 2:  # x <= edge[value]
                    mask = (bins <= value) & (bins >= 0)
                elif kind == 3:  # x > edge[value - 1]
                    mask = bins >= value
                else:  # bin value: edge[value - 1] < x <= edge[value]
                    mask = bins == value
            self._masks[gid] = mask
        return mask

    def _flat_values(self):
        """The reference values as one flat array (see :meth:`TabularInstance.decode`)."""
        if self._flat is None:
            self._flat = _flatten(self._values)
        return self._flat

    def _interval_predicate(self, j, b):
        """``(kind, b)`` of inner bin ``b`` of numeric feature ``j`` as one predicate: the
        bin (kind 4), or the one side that holds the same reference rows when no value lies
        beyond the other (``Pclass > 1.0``, not ``1.0 < Pclass <= 3.0``). Missing values,
        which break both sides, do not count."""
        kind = self._constrains.get((j, "interval", b))
        if kind is None:
            whole = self._predicate_mask((j, 4, b))
            kind = 4
            if np.array_equal(self._predicate_mask((j, 3, b)), whole):
                kind = 3
            elif np.array_equal(self._predicate_mask((j, 2, b)), whole):
                kind = 2
            self._constrains[(j, "interval", b)] = kind
        return kind, b

    def _informative(self, gid):
        """Whether some reference row violates the predicate ``gid``."""
        flag = self._constrains.get(gid)
        if flag is None:
            flag = self._constrains[gid] = not self._predicate_mask(gid).all()
        return flag

    @staticmethod
    def _levels_of(weights):
        """``(values, bits)`` of weights that take few distinct values (``balance``: one per
        predicted class): the values, and the rows of each as a packed mask (as
        :meth:`_predicate_bits`); None without weights or with too many values."""
        if weights is None:
            return None
        values, level = np.unique(weights, return_inverse=True)
        if len(values) > _MAX_WEIGHT_LEVELS:
            return None
        padded = np.zeros((len(values), -(-len(weights) // 64) * 64), dtype=bool)
        padded[level.ravel(), np.arange(len(weights))] = True
        return values, np.packbits(padded, axis=1)

    def _predicate_bits(self, gid):
        bits = self._packed.get(gid)
        if bits is None:
            # padded to whole 64-bit words (see _popcounts) with rows that hold nothing
            mask = self._predicate_mask(gid)
            padded = np.zeros(-(-len(mask) // 64) * 64, dtype=bool)
            padded[: len(mask)] = mask
            bits = self._packed[gid] = np.packbits(padded)
        return bits

    def _make_pool(self, rows):
        cum = None if self._weights is None else np.cumsum(self._weights[rows])
        if cum is not None and cum[-1] <= 0:
            cum = None
        return rows, cum

    def _pool(self, gids):
        """Rows to draw a feature's value from when predicates ``gids`` must hold, and their
        cumulative weights (None unweighted). Kept: weighted draws and
        ``perturbation="reference"`` read them; unweighted draws read the same rows from
        :meth:`_pool_slot`'s one array, which does not keep them here too."""
        pool = self._pools.get(gids)
        if pool is None:
            pool = self._pools[gids] = self._make_pool(np.flatnonzero(self._pool_mask(gids)))
        return pool

    def _pool_mask(self, gids):
        """Which reference rows satisfy predicates ``gids``."""
        ok = self._predicate_mask(gids[0])
        for g in gids[1:]:
            ok = ok & self._predicate_mask(g)
        return ok

    def _pool_empty(self, gids):
        """Whether no reference row satisfies predicates ``gids`` (kept per ``gids``)."""
        empty = self._empty_pools.get(gids)
        if empty is None:
            pool = self._pools.get(gids)
            empty = pool[0].size == 0 if pool is not None else not self._pool_mask(gids).any()
            self._empty_pools[gids] = empty
        return empty

    def _stream_key(self, name):
        """:meth:`TabularInstance.stream_key` of ``name``, ``(namespace, predicates in the
        reference data's terms)``: kept here, for the searches of every row."""
        key = self._stream_keys.get(name)
        if key is None:
            if len(self._stream_keys) >= _MAX_STREAM_KEYS:
                self._stream_keys.clear()
            key = self._stream_keys[name] = _stable_hash(repr(name))
        return key

    def _pool_slot(self, gids):
        """``(offset, size)`` of the rows of pool ``gids`` in ``_pool_rows``, the rows of
        every pool back to back, so that rows of many pools are drawn with one gather."""
        slot = self._slots.get(gids)
        if slot is None:
            pool = self._pools.get(gids)
            rows = pool[0] if pool is not None else np.flatnonzero(self._pool_mask(gids))
            with _SLOTS_LOCK:  # searches in threads (rows explained together) share pools
                slot = self._slots.get(gids)
                if slot is None:
                    used, flat = self._slots_used, self._pool_rows
                    if used + len(rows) > len(flat):
                        grown = np.empty(max(2 * len(flat), used + len(rows)), dtype=flat.dtype)
                        grown[:used] = flat[:used]
                        flat = grown
                    flat[used : used + len(rows)] = rows
                    # Published after the rows: a reader holding a slot finds them in the array.
                    self._pool_rows, self._slots_used = flat, used + len(rows)
                    slot = self._slots[gids] = (used, len(rows))
        return slot

    def _row_bins(self, row):
        """Bin of each numeric feature of one row (NaN where missing); ``row`` lists its
        values."""
        # searchsorted on the edges, without a transformer's input validation (a millisecond
        # per explained row)
        values = [row[j] for j in self._numeric.tolist()]
        values = np.array([np.nan if pd.isna(v) else float(v) for v in values])
        out = np.array(
            [
                np.searchsorted(edges, v, side="left")
                for edges, v in zip(self.bin_edges_, values.tolist())
            ],
            dtype=float,
        )
        out[np.isnan(values)] = np.nan
        return out

    def _as_frame(self, X, reset):
        if isinstance(X, pd.Series):
            raise ValueError("X must be 2-dimensional (a DataFrame or 2-d array), got a Series.")
        if reset:
            self._frame_input = isinstance(X, pd.DataFrame)
        if isinstance(X, pd.DataFrame):
            if not self._frame_input:
                raise ValueError(
                    "The explainer was fitted on an array; pass an array, not a DataFrame."
                )
            frame = X
            names = [str(c) for c in frame.columns]
            if reset:
                if len(set(names)) != len(names):
                    twice = frame.columns[frame.columns.duplicated()].unique().tolist()
                    if twice:
                        raise ValueError(f"X has duplicate column names: {twice}.")
                    alike = [c for c in frame.columns if names.count(str(c)) > 1]
                    raise ValueError(
                        f"X has columns whose names read alike: {alike!r}; rename them (column "
                        "names are shown and exported as text)."
                    )
                self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
                self.n_features_in_ = frame.shape[1]
            elif list(frame.columns) != list(self.feature_names_in_):
                expected = list(self.feature_names_in_)
                missing = [c for c in expected if c not in frame.columns]
                unknown = [c for c in frame.columns if c not in expected]
                if missing or unknown:
                    what = []
                    if unknown:
                        what.append(
                            f"the column(s) {unknown} that the reference data did not have "
                            "(drop them: a label column?)"
                        )
                    if missing:
                        what.append(f"no column(s) {missing}, which the reference data had")
                    raise ValueError(
                        f"X has {' and '.join(what)}; the rows to explain need the reference "
                        "data's columns."
                    )
                frame = frame[expected]
        else:
            if not reset and self._frame_input:
                raise ValueError(
                    "The explainer was fitted on a DataFrame; pass a DataFrame with the columns "
                    f"{list(self.feature_names_in_)}, got {type(X).__name__}."
                )
            arr = self._check_array(X, reset)
            if reset:
                self.feature_names_in_ = None
                self.n_features_in_ = arr.shape[1]
                self._dtype = arr.dtype
            elif arr.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {arr.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input (the reference data's)."
                )
            frame = pd.DataFrame(arr)
            if arr.dtype == object:
                # An object array (say, a mixed DataFrame's to_numpy()) holds each column's
                # values as Python objects: a column of numbers is numeric, as in the frame.
                frame = frame.infer_objects()
        if frame.shape[1] == 0:
            raise ValueError("X has no columns.")
        return frame

    def _check_array(self, X, reset):
        if reset and isinstance(X, (list, tuple, np.ndarray)) and np.ndim(X) == 1:
            if any(isinstance(v, (str, bytes)) for v in X):
                raise ValueError(
                    "X holds documents (a 1-d collection of str), but TabularSampler samples "
                    "the rows of a table; for documents use a text sampler (UnkSampler, "
                    "CorpusSampler or MaskedLMSampler)."
                )
        if (
            not reset
            and type(X) is np.ndarray
            and X.ndim == 2
            and X.dtype.kind in "biuf"
            and X.shape[0] >= 1
            and X.shape[1] >= 1
            and (X.dtype.kind != "f" or not np.isinf(X).any())
        ):
            # What check_array would return for a finite-or-NaN numeric matrix (it costs a
            # tenth of a millisecond per explained row).
            return X
        return check_array(
            X,
            dtype=None,
            accept_sparse=False,
            ensure_all_finite="allow-nan",
            ensure_min_samples=2 if reset else 1,
            input_name="X",
        )

    def _as_rows(self, X):
        """``X`` validated: a DataFrame (in the reference column order) or a 2-d array."""
        if self._frame_input or isinstance(X, (pd.DataFrame, pd.Series)):
            return self._as_frame(X, reset=False)
        arr = self._check_array(X, reset=False)
        if arr.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {arr.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input (the reference data's)."
            )
        return arr

    def _categorical_mask(self, frame):
        cf = self.categorical_features
        n = frame.shape[1]
        if isinstance(cf, str) and cf == "auto":
            return np.array(
                [
                    not pd.api.types.is_numeric_dtype(frame[c])
                    or pd.api.types.is_bool_dtype(frame[c])
                    for c in frame.columns
                ]
            )
        # (item by item: np.asarray made [0, "Sex"] the strings ["0", "Sex"])
        items = cf.tolist() if isinstance(cf, (np.ndarray, pd.Index, pd.Series)) else list(cf)
        if items and all(isinstance(c, (bool, np.bool_)) for c in items):
            if len(items) != n:
                raise ValueError(
                    f"categorical_features as a mask must have {n} entries, got {len(items)}."
                )
            return np.array(items, dtype=bool)
        mask = np.zeros(n, dtype=bool)
        names = list(frame.columns) if self._frame_input else []
        for c in items:
            if c in names:  # a name first: in pd.DataFrame(array) the names are numbers
                mask[names.index(c)] = True
            elif isinstance(c, numbers.Integral) and not isinstance(c, bool):
                if not -n <= c < n:
                    raise ValueError(f"categorical_features index {c} is out of range for {n}.")
                mask[c] = True
            else:
                raise ValueError(
                    f"categorical_features names unknown feature {c!r}; features are "
                    f"{names or list(range(n))}."
                )
        return mask

    # ------------------------------------------------------------------- explaining
    def split(self, X):
        """Validate rows to explain and return them one by one (as 1-row frames or arrays)."""
        check_is_fitted(self, "n_reference_")
        rows = self._as_rows(X)
        if len(rows) == 0:
            raise ValueError("X has no rows to explain.")
        if self._frame_input:
            self._check_numbers(rows)
            refuse_unhashable(rows)
            return [rows.iloc[[i]] for i in range(len(rows))]
        return [rows[i : i + 1] for i in range(len(rows))]

    def _check_numbers(self, frame):
        """Columns that are numeric in the reference data hold numbers (or nothing) in
        ``frame``: numbers stored as text are fine, other text is refused by name."""
        for j in np.flatnonzero(~self.categorical_):
            column = frame.iloc[:, j]
            if pd.api.types.is_complex_dtype(column.dtype):
                refuse_complex(frame.iloc[:, [j]])
            if pd.api.types.is_numeric_dtype(column.dtype):
                if not pd.api.types.is_float_dtype(column.dtype):
                    continue  # (integers and flags are finite)
                values = column.to_numpy()
                if values.dtype.kind != "f":  # pandas' nullable floats
                    values = column.to_numpy(dtype=float, na_value=np.nan)
                if np.isinf(values).any():
                    raise ValueError(
                        f"X column {frame.columns[j]!r} holds infinite values; the numbers of "
                        "the rows to explain must be finite, as the reference data's (missing "
                        "values, NaN, are allowed)."
                    )
                continue
            bad = pd.to_numeric(column, errors="coerce").isna() & column.notna()
            if bad.any():
                raise ValueError(
                    f"X column {frame.columns[j]!r} is numeric in the reference data, but "
                    f"holds {column[bad].iloc[0]!r}, which is not a number."
                )

    def to_model_input(self, X):
        """The rows as the model expects them (reordered columns for DataFrames)."""
        return self._as_rows(X)

    def instance(self, row, perturbation=None):
        """A ``TabularInstance`` sampler for one row (1-row DataFrame or array).

        ``perturbation`` ("replace" or "reference") picks its ``D(z | A)`` when the sampler
        was made with ``perturbation="auto"``; None: the sampler's own ("reference" for
        "auto").
        """
        check_is_fitted(self, "n_reference_")
        check_params(self)  # (set_params may have changed them since fit)
        if perturbation is None:
            perturbation = "reference" if self.perturbation == "auto" else self.perturbation
        if perturbation not in ("replace", "reference"):
            raise ValueError(
                f"perturbation must be 'replace', 'reference' or None, got {perturbation!r}."
            )
        if self.perturbation not in ("auto", perturbation):
            raise ValueError(
                f"This sampler was made with perturbation={self.perturbation!r}; instances "
                f"with perturbation={perturbation!r} need one made with 'auto'."
            )
        data = self._as_rows(row)
        if len(data) != 1:
            raise ValueError(f"instance() takes exactly one row, got {len(data)}.")
        return TabularInstance(self, data, perturbation)

    def feature_names(self):
        """Names used in predicates: column names, or ``x0, x1, ...`` for arrays."""
        if self.feature_names_in_ is not None:
            return list(self.feature_names_in_)
        return [f"x{j}" for j in range(self.n_features_in_)]


# Whether frames whose columns share one numpy dtype are decoded as one block (bench/wide.py
# measures it against column by column).
_BLOCK_DECODE = True
# Columns with more distinct values than this find the explained row's code by binary search
# in their sorted numbers (or, for other values, in a pandas Index): 8 to 16 bytes a value
# rather than a dict's 100 or so; a million distinct floats took 400 MB as a dict, and the
# fitted explainer is pickled to every joblib worker.
_DICT_LOOKUP_MAX = 4096


def _numpy_dtype(values):
    """The numpy dtype of a column's values held in numpy (not, say, pandas strings, masked
    integers or categoricals), else None."""
    if isinstance(values, np.ndarray):
        return values.dtype
    if type(values) is pd.arrays.NumpyExtensionArray:
        return values.dtype.numpy_dtype
    return None


class _SortedCodes:
    """A column's many distinct numbers, sorted, with their codes: a value's code by binary
    search (a few microseconds; pandas' get_indexer cost about 100 per explained row)."""

    def __init__(self, values):
        self.order = np.argsort(values, kind="stable")
        self.sorted = values[self.order]

    def __len__(self):
        return len(self.order)

    def get(self, value):
        if not isinstance(value, numbers.Number):  # as a dict: "3.5" is not 3.5
            return None
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            return None
        at = int(np.searchsorted(self.sorted, number))
        if at < len(self.sorted) and self.sorted[at] == number:
            return int(self.order[at])
        return None


def _value_lookup(uniques):
    """What finds a value's code (its position in ``uniques``) for the explained row."""
    if len(uniques) <= _DICT_LOOKUP_MAX:
        return {v: i for i, v in enumerate(uniques.tolist())}  # the fastest for a few
    if pd.api.types.is_numeric_dtype(uniques.dtype) and not pd.api.types.is_bool_dtype(
        uniques.dtype
    ):
        values = np.asarray(uniques, dtype=float)
        if np.all(np.abs(values) < 2.0**53):  # (as floats, larger integers could collide)
            return _SortedCodes(values)
    return pd.Index(uniques)


def _code_of(lookup, value):
    """The code of ``value`` in a :func:`_value_lookup`, or None for a value not seen."""
    if not isinstance(lookup, pd.Index):
        return lookup.get(value)
    try:
        at = lookup.get_indexer([value])[0]
    except (TypeError, ValueError):  # a value the index cannot compare with its own
        return None
    return None if at < 0 else int(at)


def _with_value(values, column):
    """The reference's values of a column and the row's own value (``column``, 1 row): a
    categorical stays categorical, its categories extended (concatenating categoricals of
    other categories gives an object column, which a model reading ``.cat`` cannot take)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        value = column.iloc[0]
        categorical = pd.Categorical(values)
        if pd.isna(value):
            code = -1
        else:
            if value not in categorical.categories:
                categorical = categorical.add_categories([value])
            code = categorical.categories.get_loc(value)
        return pd.Categorical.from_codes(
            np.append(categorical.codes, code), dtype=categorical.dtype
        )
    return pd.concat([pd.Series(values), column], ignore_index=True).array


class TabularInstance:
    """Sampler for one explained row; see :mod:`skanchors._search` for the protocol.

    Besides ``sample`` (draws from a generator), it offers *streams*
    (:meth:`stream_samples`): sample ``i`` of the stream of ``D(z | A)`` depends on a seed,
    the predicates of ``A`` in the reference data's terms (``age <= 37`` is the same predicate
    for every row in that bin) and ``i`` only, so searches of different rows read the same
    samples and share their predictions (:mod:`skanchors._cache`).
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
        preds, gids, feats = [], [], []
        nested = parent.bounds == "all"
        x_bins = parent._row_bins(row) if parent._numeric.size else None
        num_pos = {j: k for k, j in enumerate(parent._numeric)}
        for j, name in enumerate(names):
            if parent.categorical_[j]:
                if x_missing[j]:
                    preds.append(Predicate(name, "isna", None, j))
                else:
                    preds.append(Predicate(name, "==", _scalar(row[j]), j))
                # Predicates in the reference data's terms (equal for rows with equal codes).
                gids.append((j, 0, int(x_codes[j])))
                feats.append(j)
                continue
            k = num_pos[j]
            if np.isnan(x_bins[k]):
                preds.append(Predicate(name, "isna", None, j))
                gids.append((j, 1, -1))
                feats.append(j)
                continue
            # The bounds of the row's bin; with bounds="all" then the looser ones on each side
            # (the authors' predicate set: a row of age 21 in bins split at 23, 28 and 36 has
            # "age <= 23", "age <= 28" and "age <= 36"), so that a rule can span bins.
            # With bounds="interval", an inner bin is one predicate (kind 4).
            b = int(x_bins[k])
            edges = parent.bin_edges_[k]
            bounds = ([(2, b)] if b < len(edges) else []) + ([(3, b)] if b > 0 else [])
            if nested:
                bounds += [(2, v) for v in range(b + 1, len(edges))]
                bounds += [(3, v) for v in range(b - 1, 0, -1)]
            elif len(bounds) == 2 and parent.bounds == "interval":
                bounds = [parent._interval_predicate(j, b)]
            for kind, v in bounds:
                if kind == 4:
                    interval = pd.Interval(float(edges[v - 1]), float(edges[v]), closed="right")
                    preds.append(Predicate(name, "in", interval, j))
                    gids.append((j, kind, v))
                    feats.append(j)
                    continue
                op, edge = ("<=", edges[v]) if kind == 2 else (">", edges[v - 1])
                preds.append(Predicate(name, op, float(edge), j))
                gids.append((j, kind, v))
                feats.append(j)
        # A predicate that every reference row satisfies (e.g. "Pclass <= 3.0" when 3 is the
        # largest value) constrains nothing: it would only lengthen rules.
        informative = [i for i, g in enumerate(gids) if parent._informative(g)]
        self.predicates = [preds[i] for i in informative]
        self._gids = [gids[i] for i in informative]
        masks = [parent._predicate_mask(gids[i]) for i in informative]
        self.n_predicates = d = len(self.predicates)
        self._feature_of = np.array([feats[i] for i in informative], dtype=np.intp)
        # The bounds on one side of one feature are nested: one group (see the search's
        # predicate_groups). With bounds="bin" there is one per side: no groups needed.
        self.predicate_groups = None
        if nested:
            sides = {}
            self.predicate_groups = np.array(
                [sides.setdefault((g[0], g[1] == 3), len(sides)) for g in self._gids],
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
            self.stream_namespace = ("row", _stable_hash(repr(row)))
        else:
            self.stream_namespace = "reference"
        # perturbation="reference": samples are reference rows that satisfy the anchor, so
        # one drawn for A that satisfies a longer rule is an exact draw for it too.
        self.perturbation = perturbation
        self.draws_reference_rows = perturbation == "reference"
        self.exact_reuse = self.draws_reference_rows

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
        :func:`~skanchors._cache.row_hash` and, for each of this row's predicates, a boolean
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
        # codes[src, arange(n_feat)] as a take on the flat matrix (twice as fast).
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
        """:func:`~skanchors._cache.row_hash` of rows of value codes, or of the intervals
        between the model's split thresholds they fall in (see
        :meth:`TabularSampler.hash_by_splits`)."""
        if self._hash_stale:
            parent = self.parent
            maps = [
                _extended_split_codes(v, t, m, parent._split_dtype)
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
        :class:`skanchors._search.StratifiedArms`. The draws are the start of a stream
        (:meth:`stream_windows`) under a seed taken from ``rng``.
        """
        n = int(n)
        if n == 0:
            keys = np.zeros((0, len(self._values)), dtype=self.parent._codes.dtype)
            holds = np.zeros((0, self.n_predicates), dtype=bool)
            return (keys, holds, holds.copy()) if return_native else (keys, holds)
        seed = int(rng.integers(2**63))
        keys, holds, native, _, _ = self.stream_windows([(anchor, 0, n)], seed, SampleCache(0))
        return (keys, holds, native) if return_native else (keys, holds)

    def stream_key(self, anchor):
        """64-bit key of the stream of ``D(z | anchor)``: equal for equal predicate sets."""
        anchor = tuple(sorted(anchor))
        key = self._stream_keys.get(anchor)
        if key is None:
            gids = tuple(sorted(self._gids[p] for p in anchor))
            key = self._stream_keys[anchor] = self.parent._stream_key((self.stream_namespace, gids))
        return key

    def stream_samples(
        self, anchor, start, stop, seed, cache, return_hashes=False, return_holds=True
    ):
        """Samples ``start:stop`` of the stream of ``D(z | anchor)``: (codes, holds, native).

        Block ``b`` of a stream (:data:`~skanchors._cache.STREAM_BLOCK` samples) is drawn from
        counter-based random numbers keyed by ``(seed, stream key, b)`` and kept in ``cache``
        with its codes and their :func:`~skanchors._cache.row_hash` (which ``return_hashes``
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
        hashes, memos)`` over all requests in order (``holds`` None with
        ``return_holds=False``; with ``return_base=True``, the base rows in place of
        ``native``, which is their :meth:`native_of`); ``memos`` lists ``(memo, lo, hi)``,
        one per block read, in order: rows ``lo:hi`` of a block whose dict ``memo`` the
        search may keep the rows' labels in. The blocks missing from ``cache`` are
        generated together, in one pass of array operations whatever their number
        (:meth:`_make_blocks`).

        With numba (the ``fast`` extra), the default perturbation and a cache whose
        predictions are compiled too (or no cache), the samples are drawn directly by
        compiled code, the same to the last bit, without making or keeping their blocks
        (``memos`` is then None): on the benchmark's rows this step took 0.71 (Titanic) to
        0.97 (Adult) of the time it took with the blocks (``bench/results_revisions_windows``).
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
                    block = cache.get_block(name)
                    if block is None:
                        todo[name] = anchor
                    else:
                        have[name] = block
            plan.append((names, start - first * n, stop - first * n))
        if todo:
            for name, block in zip(todo, self._make_blocks(list(todo.items()), seed)):
                have[name] = block
                cache.put_block(name, block)
        src, base, keys, hashes, memos = [], [], [], [], []
        for names, lo, hi in plan:
            for k, name in enumerate(names):
                memos.append((have[name][4], max(lo - k * n, 0), min(hi - k * n, n)))
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
        return keys, holds, base if return_base else self._holds[base], hashes, memos

    def native_of(self, base, columns=None):
        """Which predicates the reference rows ``base`` satisfy (the ``native`` matrix of
        samples built on them), or its cells ``[base, columns]``."""
        return self._holds[base] if columns is None else self._holds[base, columns]

    def _window_kernel(self, cache):
        """The compiled kernel that draws stream windows without their blocks, where it
        applies: the default perturbation from the sampler's flat pools, and a cache that
        keeps no blocks (disabled) or whose predictions are the compiled table's (the
        dictionaries read the blocks' label memos)."""
        known = self._window
        if known is not None and known[0] is cache:
            return known[1]
        kernel = _window_kernel()
        if self._fallback or self._cum is not None or self.draws_reference_rows:
            kernel = None
        elif cache.enabled and not cache.compiled:
            kernel = None
        self._window = (cache, kernel)
        return kernel

    def _window_plan(self, anchor, seed):
        """``(seed, stream seed, features, predicates, slots)`` of the stream of ``anchor``
        as the window kernel reads it (kept per anchor): the stream's ``mix(mix(seed) ^
        key)`` and its (feature, predicates padded to :attr:`_width`, pool slot) groups."""
        plan = self._window_plans.get(anchor)
        if plan is None or plan[0] != seed:
            stream = _mix64(_mix64(seed & _MASK64) ^ self.stream_key(anchor))
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
        directly (their blocks are neither made nor kept; no label memos)."""
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
        """Stream blocks ``[((stream key, b), anchor), ...]``: ``(src, base, keys, hashes,
        memo)`` each, generated together (``memo``: an empty dict for the searches to keep
        the block's labels in).

        Sample ``i`` of block ``b`` reads the random numbers of counters ``(column, i)`` of
        the block's key ``mix(seed, stream key, b)`` (SplitMix64, Steele et al. 2014): column
        0 picks the base row, column ``1 + f`` the row whose value replaces feature ``f``'s.
        A block is thus the same whichever blocks it is generated with. With numba (the
        ``fast`` extra) the default perturbation's blocks come from compiled code
        (:mod:`skanchors.samplers._block_kernels`), the same to the last bit.
        """
        n, n_feat, d = STREAM_BLOCK, len(self._values), self.n_predicates
        n_blocks = len(blocks)
        # Pools are drawn uniformly with one gather from the sampler's flat store of pools,
        # unless they are weighted (balance) or the explained row's own (fallback).
        flat = not (self._fallback or self._cum is not None or self.draws_reference_rows)
        block_seeds, pair_block, pair_feature, pair_preds, pools = [], [], [], [], []
        for j, ((key, b), anchor) in enumerate(blocks):
            block_seeds.append(_mix64(_mix64(_mix64(seed & _MASK64) ^ key) ^ b))
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
        kernel = _block_kernel() if flat else None
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
            return [(src[j], base[j], keys[j], hashes[j], {}) for j in range(n_blocks)]
        # One row of random numbers per block (its base rows) and per (block, feature) pair.
        columns = np.concatenate([np.zeros(n_blocks, dtype=np.intp), pair_feature + 1])
        counters = columns.astype(np.uint64)[:, None] * np.uint64(n) + np.arange(
            1, n + 1, dtype=np.uint64
        )
        seeds = np.concatenate([block_seeds, block_seeds[pair_block]])
        z = _mix64_array(seeds[:, None] + counters * np.uint64(_GAMMA))
        if self.draws_reference_rows:
            base = np.stack([_pick(pool, z[j], self) for j, pool in enumerate(pools)])
            src = np.repeat(base[:, :, None].astype(np.int32), n_feat, axis=2)
        else:
            base = _pick(None, z[:n_blocks], self)
            src = np.empty((n_blocks, n, n_feat), dtype=np.int32)
            src[:] = base[:, :, None]
            if len(pair_block):
                pair_base = base[pair_block]
                ok = self._holds_flat[(pair_base * d)[:, :, None] + at[:, None, :]].all(axis=2)
                if flat:
                    slots = np.array(pools, dtype=np.intp)  # (offset, size) per pair
                    pick = _uniform_below(z[n_blocks:], slots[:, 1:])
                    picks = self.parent._pool_rows[pick + slots[:, :1]]
                else:
                    picks = np.empty_like(pair_base)
                    for p, pool in enumerate(pools):
                        picks[p] = _pick(pool, z[n_blocks + p], self)
                src[pair_block[:, None], np.arange(n), pair_feature[:, None]] = np.where(
                    ok, pair_base, picks
                )
        keys = self._keys(src.reshape(n_blocks * n, n_feat))
        hashes = self.hash_rows(keys).reshape(n_blocks, n)
        keys = keys.reshape(n_blocks, n, n_feat)
        return [(src[j], base[j], keys[j], hashes[j], {}) for j in range(n_blocks)]

    def decode(self, keys):
        """Model input (DataFrame or array in the reference dtypes) for rows of codes."""
        parent = self.parent
        if parent._frame_input:
            if self._block_dtype is None:
                cols = [values.take(keys[:, j]) for j, values in enumerate(self._values)]
                return pd.DataFrame(dict(zip(parent.feature_names_in_, cols)), copy=False)
            # Columns all of one numpy dtype: one gather and one block (a frame of 1,000
            # float columns built column by column cost most of a search's time)
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
        kernel = _coverage_kernel() if self._weights is None else None
        for size, items in todo.items():
            index = np.array([anchor for _, anchor in items], dtype=np.intp)
            if kernel is not None:
                values = (kernel(self._words(), index) / self._n_ref).tolist()
            else:
                bits = self._bits[index]
                bits = np.bitwise_and.reduce(bits, axis=1) if size > 1 else bits[:, 0]
                if self._weights is None:
                    values = (_popcounts(bits) / self._n_ref).tolist()
                elif self._weight_levels is not None:
                    # the rows of each weight the rule covers, times that weight
                    weights, levels = self._weight_levels
                    counts = _popcounts(bits[:, None, :] & levels[None, :, :])
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

    def _words(self):
        """The packed predicate masks as 64-bit words (rows are padded to whole words)."""
        if self._bits_words is None:
            self._bits_words = np.ascontiguousarray(self._bits).view(np.uint64)
        return self._bits_words

    def reference_coverage(self, anchor):
        """Fraction of the (unweighted) reference rows that satisfy the anchor."""
        if not anchor:
            return 1.0
        return _bitcount(self._covered_bits(anchor)) / self._n_ref


_BLOCK_KERNEL = None  # the compiled make_blocks; False: numba missing or disabled


def _block_kernel():
    """:func:`skanchors.samplers._block_kernels.make_blocks`, compiled, or None (numba
    missing, or ``SKANCHORS_NUMBA=0``)."""
    global _BLOCK_KERNEL
    if _BLOCK_KERNEL is None:
        _BLOCK_KERNEL = compiled(_load_block_kernel) or False
    return _BLOCK_KERNEL or None


def _coverage_kernel():
    """:func:`skanchors.samplers._block_kernels.coverage_counts`, compiled, or None: loaded
    with, and switched off with, :func:`_block_kernel`."""
    if _block_kernel() is None:
        return None
    from ._block_kernels import coverage_counts

    return coverage_counts


def _window_kernel():
    """:func:`skanchors.samplers._block_kernels.make_windows`, compiled, or None: loaded
    with, and switched off with, :func:`_block_kernel`."""
    if _block_kernel() is None:
        return None
    from ._block_kernels import make_windows

    return make_windows


def _load_block_kernel():
    from ._block_kernels import make_blocks, make_windows

    # compile both now (or load numba's cached machine code): two rows, one feature, no pair
    empty = np.zeros(0, dtype=np.intp)
    codes = np.array([[5], [9]], dtype=np.int32)
    pairs = (empty, np.zeros((0, 1), dtype=np.intp), np.zeros((0, 2), dtype=np.intp))
    pool_rows = np.zeros(0, dtype=np.int32)  # TabularSampler._pool_rows
    rest = (pool_rows, np.ones((3, 1), dtype=bool), codes, codes, np.array([3], dtype=np.uint64))
    seed = 7
    src, base, keys, hashes = make_blocks(
        np.array([_mix64(seed ^ 1)], dtype=np.uint64), 4, 2, empty, *pairs, *rest
    )
    # samples 1:3 of block 1 of the stream whose blocks' seeds are mix(seed ^ b)
    _, w_base, w_keys, w_hashes = make_windows(
        np.array([seed], dtype=np.uint64), np.array([5]), np.array([7]), 4, np.array([0, 0]),
        *pairs, 2, *rest,
    )  # fmt: skip
    if not (
        np.array_equal(keys[:, 0], codes[base[0], 0])
        and np.array_equal(w_base, base[0, 1:3])
        and np.array_equal(w_hashes, hashes[0, 1:3])
    ):
        raise RuntimeError("compiled stream blocks failed their check")
    from ._block_kernels import coverage_counts

    words = np.array([[0b1011, 2**63 + 1], [0b0110, 2**63]], dtype=np.uint64)
    if coverage_counts(words, np.array([[0, 1], [0, 0], [1, 1]])).tolist() != [2, 5, 3]:
        raise RuntimeError("compiled coverage counts failed their check")
    return make_blocks


def _split_codes(values, thresholds, dtype=np.float32):
    """The interval between ``thresholds`` (sorted) that each value falls in, as a tree
    model compares it (``dtype(x) <= t``): the number of thresholds below it; missing
    values get a code of their own. None when the values are not numbers. Without
    thresholds (a categorical feature) every value keeps a code of its own."""
    if thresholds is None:
        return np.arange(len(values))
    if not isinstance(values, np.ndarray):
        values = pd.Series(values)
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    single = numbers.astype(dtype).astype(np.float64)
    codes = np.searchsorted(thresholds, single, side="left").astype(np.int64)
    codes[np.isnan(numbers)] = len(thresholds) + 1
    return codes


def _extended_split_codes(values, thresholds, known, dtype):
    """:func:`_split_codes` of ``values`` whose first ``len(known)`` codes are ``known``:
    the explained row's values the reference data lacked, appended after them. One that is
    not a number gets a code of its own."""
    if thresholds is None:  # a categorical feature: a code per value
        return np.arange(len(values))
    out = [known]
    for k in range(len(known), len(values)):
        code = _split_codes(values[k : k + 1], thresholds, dtype)
        out.append(code if code is not None else np.array([len(thresholds) + 2 + k]))
    return np.concatenate(out)


def _flatten(values):
    """Per-feature value arrays as one array and each feature's offset into it."""
    sizes = [len(v) for v in values]
    offsets = np.zeros(len(values), dtype=np.int64)
    np.cumsum(sizes[:-1], out=offsets[1:])
    return np.concatenate(values), offsets


def _stable_hash(text):
    """A 63-bit integer from a string, the same in every process (unlike ``hash``)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def _mix64(x):
    """SplitMix64's output function on a Python int (a 64-bit hash of a 64-bit counter)."""
    x = (x + _GAMMA) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _mix64_array(x):
    """:func:`_mix64` of every element of a uint64 array (products wrap modulo 2**64)."""
    x = x + np.uint64(_GAMMA)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _uniform_below(z, size):
    """Integers in ``[0, size)`` from random 64-bit words ``z`` (``size`` below 2**32, scalar
    or broadcasting): the top 32 bits times the size, divided by 2**32, uniform up to a
    relative bias of ``size / 2**32``."""
    size = np.asarray(size).astype(np.uint64)
    return (((z >> np.uint64(32)) * size) >> np.uint64(32)).astype(np.intp)


def _pick(pool, z, instance):
    """Rows drawn from ``pool`` (``(rows, cum)``; None: all reference rows) by the random
    64-bit words ``z``: uniformly, or by the pool's cumulative weights."""
    if pool is None:
        rows, cum, size = None, instance._cum, instance._n_ref
    else:
        rows, cum = pool
        size = len(rows)
    if cum is None:
        pick = _uniform_below(z, size)
    else:
        u = (z >> np.uint64(11)).astype(np.float64) * 2.0**-53
        pick = np.minimum(np.searchsorted(cum, u * cum[-1], side="right"), size - 1)
    return pick if rows is None else rows[pick]


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value


def _renamed_edges(discretizer, renamed, columns):
    """An :class:`EdgesDiscretizer` whose ``edges`` dict names the columns of a frame with
    number names (``renamed``: name -> the name the discretizer sees) by those names: in such
    a frame a number is the column's name, not its position among the numeric features (the
    edges ``{1: [50]}`` went to the second numeric column, not the column called 1)."""
    if not isinstance(discretizer, EdgesDiscretizer) or not isinstance(discretizer.edges, dict):
        return discretizer
    edges = {}
    for key, value in discretizer.edges.items():
        if key in renamed:
            edges[renamed[key]] = value
        elif key in columns:
            raise ValueError(
                f"edges names feature {key!r}, which is categorical: only numeric features "
                "are binned."
            )
        elif isinstance(key, numbers.Integral) and not isinstance(key, bool):
            raise ValueError(
                f"edges has the key {key!r}, but no column of X is called {key!r}; its columns "
                f"are named by numbers, so edges names them by their names {list(renamed)}."
            )
        else:
            edges[key] = value
    return discretizer.set_params(edges=edges)


def _fitted_edges(discretizer, num, y=None):
    """The inner bin edges of a discretizer fitted to ``num`` (DataFrame of numeric
    features), as the predicates read them: bin ``b`` is ``edges[b - 1] < x <= edges[b]``.

    The package's discretizers give these edges. Another transformer must have
    ``bin_edges_``, one array per feature, and ``transform`` must give each value's bin index
    (an ordinal encoding). Edges that include the outer ones (as
    :class:`~sklearn.preprocessing.KBinsDiscretizer`'s do: ``n_bins_ + 1`` per feature) lose
    them. Bins ``edges[b - 1] <= x < edges[b]`` (KBinsDiscretizer's) become the bins of the
    same reference values under ``<=``: each edge moves down to the shortest number between
    the largest value below it and itself (an edge with no value below it is dropped).
    Anything else is refused: the rules would not say which bins the search sampled.
    """
    # (y only when there is one: a transformer of the user's may not take it)
    fitted = discretizer.fit(num) if y is None else discretizer.fit(num, y)
    if isinstance(fitted, _BaseDiscretizer):
        return [np.asarray(e, dtype=float) for e in fitted.bin_edges_]
    name = type(discretizer).__name__
    edges = getattr(fitted, "bin_edges_", None)
    if edges is None or len(edges) != num.shape[1]:
        raise ValueError(
            f"discretizer {name} must have bin_edges_ after fit, one array of edges per "
            f"numeric feature ({num.shape[1]}); see skanchors.discretizers."
        )
    bins = fitted.transform(num)
    if hasattr(bins, "toarray"):
        bins = bins.toarray()
    bins = np.asarray(bins, dtype=float)
    if bins.shape != num.shape:
        raise ValueError(
            f"discretizer {name}.transform must give one bin index per numeric feature, shape "
            f"{num.shape}; it gave {bins.shape}. (KBinsDiscretizer needs encode='ordinal'.)"
        )
    n_bins = getattr(fitted, "n_bins_", None)
    out = []
    for j, column in enumerate(num.columns):
        e = np.asarray(edges[j], dtype=float).ravel()
        if n_bins is not None and len(e) == int(n_bins[j]) + 1:
            e = e[1:-1]  # the minimum and the maximum split nothing
        if np.any(np.isnan(e)) or np.any(np.diff(e) <= 0):
            raise ValueError(
                f"discretizer {name}'s bin_edges_ for feature {column!r} must be increasing "
                f"numbers, got {edges[j]!r}."
            )
        x = num.iloc[:, j].to_numpy(dtype=float)
        seen = ~np.isnan(x)
        x, got = x[seen], bins[seen, j]
        if np.array_equal(got, np.searchsorted(e, x, side="left")):
            out.append(e)
            continue
        if not np.array_equal(got, np.searchsorted(e, x, side="right")):
            raise ValueError(
                f"discretizer {name}.transform does not bin feature {column!r} at its "
                "bin_edges_: a value's bin must be the number of edges below it (or below "
                "or at it)."
            )
        values = np.unique(x)
        below = np.searchsorted(values, e, side="left")  # values[:below] < edge
        # (an edge at or below the smallest value has an empty bin below it: it splits nothing)
        moved = [
            _shortest_between(values[i - 1], edge)
            for edge, i in zip(e.tolist(), below.tolist())
            if i > 0
        ]
        out.append(np.unique(np.asarray(moved, dtype=float)))
    return out


def _refuse_bools_among_numbers(frame):
    """An object column with True and 1 (or False and 0) would hold one value for both: they
    are equal and hash alike, so the sampler could never draw the one it met second."""
    for name in frame.columns:
        column = frame[name]
        if not pd.api.types.is_object_dtype(column.dtype):
            continue
        if not pd.api.types.infer_dtype(column, skipna=True).startswith("mixed"):
            continue  # one type of value (the common case, decided in C)
        values = column.dropna().tolist()
        flags = {v for v in values if isinstance(v, (bool, np.bool_))}
        amounts = [  # Decimal(1) == True too
            v
            for v in values
            if isinstance(v, numbers.Number) and not isinstance(v, (bool, np.bool_))
        ]
        clash = [f for f in flags if any(f == v for v in amounts)]
        if clash:
            raise ValueError(
                f"X column {name!r} holds both {clash[0]!r} and the number {int(clash[0])}, which "
                "are equal in Python (True == 1), so they cannot be told apart as categories; "
                "make the column one type (e.g. .astype(str))."
            )


def _refuse_dates(frame):
    """Dates, times and durations are neither bins nor categories the rules could print: every
    date would be a category of its own, and a Timestamp no JSON can hold."""
    dated = {}
    for name, dtype in frame.dtypes.items():
        values = frame[name]
        if isinstance(dtype, pd.CategoricalDtype):  # what the categories hold
            values = dtype.categories
            dtype = values.dtype
        if isinstance(dtype, pd.IntervalDtype):  # pd.cut of dates: intervals of dates
            dtype = dtype.subtype
        if (
            pd.api.types.is_datetime64_any_dtype(dtype)
            or pd.api.types.is_timedelta64_dtype(dtype)
            or isinstance(dtype, pd.PeriodDtype)
        ):
            dated[name] = str(dtype)
        elif pd.api.types.is_object_dtype(dtype):
            # Python dates and times in an object column (.dt.date, read_sql)
            kind = pd.api.types.infer_dtype(values, skipna=True)
            if kind in ("date", "datetime", "datetime64", "time", "timedelta", "period"):
                dated[name] = kind
    if dated:
        name = next(iter(dated))
        raise ValueError(
            f"Feature(s) {list(dated)} of X hold dates, times or durations "
            f"({', '.join(sorted(set(dated.values())))}); anchors need numbers or categories. "
            f"Give the model and the explainer numbers derived from them instead (for instance "
            f"pd.to_datetime(X[{name!r}]).dt.year, or the days since a date), or strings for "
            "categories."
        )
