"""Perturbation distribution for tabular data, learned from raw reference data.

``D(z | A)``, ``perturbation="replace"`` (the default): draw a reference row, then make every
anchored predicate hold by replacing the value of each anchored feature that violates it with
the value of a reference row that satisfies it (Ribeiro et al. 2018; the authors'
``sample_from_train``). ``perturbation="reference"``: the reference rows that satisfy ``A``,
unchanged (the data's own conditional distribution). Values are always real reference values in
their original dtype (categories, strings, NaN), so any model that accepts the raw data -
including a whole Pipeline - can predict the perturbations.

This module fits the distribution (value codes, bins, the predicates' row masks and the pools
of rows to draw from); :mod:`._tabular_instance` holds the sampling algorithm for one row,
:mod:`._tabular_input` the input checks and :mod:`._tabular_edges` the bin edges.
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._hashing import row_hash
from .._validation import check_params, refuse_complex, refuse_unhashable
from ..discretizers import make_discretizer
from . import _tabular_kernels as kernels
from ._conditions import Condition, Kind
from ._protocol import Sampler, SamplerCapabilities
from ._splitmix import stable_hash
from ._tabular_edges import fitted_edges, renamed_edges
from ._tabular_input import TableInput, refuse_bools_among_numbers, refuse_dates
from ._tabular_instance import TabularInstance
from ._tabular_values import _flatten, _value_lookup
from ._tree_splits import split_codes

__all__ = ["TabularInstance", "TabularSampler"]

_PERTURBATIONS = ("replace", "reference", "auto")
_BOUNDS = ("bin", "interval", "all")
_SLOTS_LOCK = threading.Lock()
# The sampler keeps the stream keys of at most this many predicate sets (then starts over).
_MAX_STREAM_KEYS = 100_000

# Weighted coverage counts the covered rows of each distinct weight when there are at most
# this many (TabularSampler._levels_of), instead of summing the weights of the covered rows.
_MAX_WEIGHT_LEVELS = 16


class TabularSampler(TableInput, BaseEstimator, Sampler):
    """Samples perturbations of a table row from reference data.

    Parameters
    ----------
    discretizer : {"auto", "quartile", "decile", "tree"} or transformer, default="auto"
        Bins numeric features; the bins' edges make the predicates (see ``bounds``).
        ``"quartile"`` and ``"decile"``: percentiles of the reference data. ``"tree"`` bins
        where the model's prediction changes and needs the predictions as ``y`` in
        :meth:`fit` (:class:`~skanchors.discretizers.TreeDiscretizer`); an
        :class:`~skanchors.AnchorExplainer` fits it on the model's predictions on the
        reference rows, with bins narrow enough for its ``threshold`` (and, for a regressor,
        its ``tolerance``). ``"auto"``: ``"tree"`` in an ``AnchorExplainer`` of a regressor,
        ``"quartile"`` otherwise (a sampler fitted on its own, a classifier, LIME).
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
            StrOptions({"auto", "quartile", "decile", "tree"}),
            HasMethods(["fit", "transform"]),
        ],
        "categorical_features": [StrOptions({"auto"}), "array-like"],
        "perturbation": [StrOptions(set(_PERTURBATIONS))],
        "bounds": [StrOptions(set(_BOUNDS))],
    }

    def __init__(
        self,
        *,
        discretizer="auto",
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
        refuse_dates(frame)
        refuse_complex(frame)
        refuse_bools_among_numbers(frame)
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
            # ("auto" is resolved by the explainer that knows the model; on its own: quartiles)
            named = "quartile" if _is_auto(self.discretizer) else self.discretizer
            self.discretizer_ = make_discretizer(named)
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
                self.discretizer_ = renamed_edges(
                    self.discretizer_, dict(zip(num.columns, names)), list(frame.columns)
                )
                num.columns = names
            self.bin_edges_ = fitted_edges(self.discretizer_, num, y)
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
            kernels.block_kernel()  # numba's one-time start belongs to fit, not to the first row
        return self

    def __getstate__(self):
        # The drawing orders are cheap to rebuild where needed: joblib workers need not
        # receive them (their predicate positions take a mask and an index per predicate), nor
        # the stream keys kept so far (one hash each).
        state = dict(super().__getstate__())
        for name in ("_orders", "_ordered", "_stream_keys"):
            if name in state:
                state[name] = {}
        # Nor the row masks and pools the searches built so far: rebuilt on first use, they
        # would make the pickle grow with every explained row (it is sent to every joblib
        # worker at each call, and kept in every saved explainer).
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
        maps = [split_codes(v, t, dtype) for v, t in zip(self._values, thresholds)]
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
        :func:`~skanchors._hashing.row_hash` in that order. With weights (``balance``), each row
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
        """Reference rows satisfying a :class:`~skanchors.samplers._conditions.Condition`."""
        mask = self._masks.get(gid)
        if mask is None:
            j, kind, level = gid
            if kind == Kind.CODE:  # NaN has a code of its own
                mask = self._codes[:, j] == level
            else:
                bins = self._bins[:, int(np.searchsorted(self._numeric, j))]
                if kind == Kind.MISSING:
                    mask = bins < 0
                elif kind == Kind.AT_MOST:
                    mask = (bins <= level) & (bins >= 0)
                elif kind == Kind.ABOVE:
                    mask = bins >= level
                else:  # Kind.IN_BIN
                    mask = bins == level
            self._masks[gid] = mask
        return mask

    def _flat_values(self):
        """The reference values as one flat array (see :meth:`TabularInstance.decode`)."""
        if self._flat is None:
            self._flat = _flatten(self._values)
        return self._flat

    def _interval_predicate(self, j, b):
        """``(kind, b)`` of inner bin ``b`` of numeric feature ``j`` as one condition: the
        bin (``Kind.IN_BIN``), or the one side that holds the same reference rows when no
        value lies beyond the other (``Pclass > 1.0``, not ``1.0 < Pclass <= 3.0``). Missing
        values, which break both sides, do not count."""
        kind = self._constrains.get((j, "interval", b))
        if kind is None:
            whole = self._predicate_mask(Condition(j, Kind.IN_BIN, b))
            kind = Kind.IN_BIN
            if np.array_equal(self._predicate_mask(Condition(j, Kind.ABOVE, b)), whole):
                kind = Kind.ABOVE
            elif np.array_equal(self._predicate_mask(Condition(j, Kind.AT_MOST, b)), whole):
                kind = Kind.AT_MOST
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
            key = self._stream_keys[name] = stable_hash(repr(name))
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
        # searchsorted on the edges, without a transformer's input validation for every
        # explained row
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

    # ------------------------------------------------------------------- explaining
    modality = "tabular"

    @property
    def capabilities(self):
        """:class:`~skanchors.samplers.SamplerCapabilities`: rows hashed by a tree model's
        splits, the stratified estimate, and with ``perturbation="auto"`` a second search
        (:meth:`fallback_instance`) where the first finds no anchor."""
        return SamplerCapabilities(
            split_hashing=True, stratified=True, fallback=self.perturbation == "auto"
        )

    def fallback_instance(self, row):
        """With ``perturbation="auto"``: the instance searched when no rule validates on the
        reference rows (``instance(row, perturbation="replace")``)."""
        return self.instance(row, perturbation="replace")

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


def _is_auto(discretizer):
    return isinstance(discretizer, str) and discretizer == "auto"
