"""Perturbation distribution for tabular data, learned from raw reference data.

``D(z | A)``: draw a reference row, then make every anchored predicate hold by replacing the
value of each anchored feature that violates it with the value of a reference row that
satisfies it (Ribeiro et al. 2018; the authors' ``sample_from_train``). Values are always real
reference values in their original dtype (categories, strings, NaN), so any model that accepts
the raw data - including a whole Pipeline - can predict the perturbations.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted

from .._explanation import Predicate
from ..discretizers import make_discretizer

__all__ = ["TabularSampler"]

try:  # numpy >= 2
    _popcount = np.bitwise_count
except AttributeError:  # pragma: no cover - numpy 1.x
    _LUT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)

    def _popcount(a):
        return _LUT[a]


def _bitcount(bits):
    return int(_popcount(bits).sum(dtype=np.int64))


class TabularSampler(BaseEstimator):
    """Samples perturbations of a table row from reference data.

    Parameters
    ----------
    discretizer : {"quartile", "decile"} or transformer, default="quartile"
        Bins numeric features into the one-sided predicates ``x <= edge`` and ``x > edge``.
        A transformer must have ``fit``, ``transform`` and ``bin_edges_`` (see
        :mod:`skanchors.discretizers`).
    categorical_features : "auto", list of str/int, or boolean mask, default="auto"
        Features whose predicates are equalities. ``"auto"``: non-numeric columns (object,
        string, category, bool).

    Attributes
    ----------
    feature_names_in_ : ndarray of str or None
    n_features_in_ : int
    categorical_ : ndarray of bool
    discretizer_ : fitted discretizer of the numeric features

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> X = pd.DataFrame({"age": np.arange(100.0), "sex": ["f", "m"] * 50})
    >>> s = TabularSampler().fit(X)
    >>> inst = s.instance(X.iloc[[10]])
    >>> [str(p) for p in inst.predicates]
    ['age <= 24.75', 'sex = f']
    >>> keys, holds = inst.sample((1,), 5, np.random.default_rng(0))
    >>> inst.decode(keys)["sex"].tolist()
    ['f', 'f', 'f', 'f', 'f']
    """

    def __init__(self, *, discretizer="quartile", categorical_features="auto"):
        self.discretizer = discretizer
        self.categorical_features = categorical_features

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, sample_weight=None):
        """Learn the reference distribution from raw data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw reference data (the data the model is used on); NaN allowed.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Sampling weight of each reference row (used to class-balance the reference data).

        Returns
        -------
        self
        """
        frame = self._as_frame(X, reset=True)
        n = len(frame)
        if n < 2:
            raise ValueError(
                f"Found X with {n} sample(s) while a minimum of 2 is required: the reference "
                "data must have at least 2 rows."
            )
        self.categorical_ = self._categorical_mask(frame)
        self._values, self._lookup = [], []
        codes = np.empty((n, frame.shape[1]), dtype=np.int32)
        for j, name in enumerate(frame.columns):
            col = frame[name]
            code, uniques = pd.factorize(col, use_na_sentinel=True)
            code = code.astype(np.int32)
            code[code < 0] = len(uniques)
            _, first = np.unique(code, return_index=True)
            self._values.append(col.array[first] if self._frame_input else col.to_numpy()[first])
            self._lookup.append({v: i for i, v in enumerate(uniques.tolist())})
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
            if not self._frame_input:
                num.columns = [f"x{j}" for j in numeric]
            bins = self.discretizer_.fit(num).transform(num)
            if not hasattr(self.discretizer_, "bin_edges_"):
                raise ValueError("discretizer must expose bin_edges_ after fit.")
            self._bins = np.where(np.isnan(bins), -1, bins).astype(np.int32)
        else:
            self.discretizer_ = None
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
        self.n_reference_ = n
        return self

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
                    raise ValueError("X has duplicate column names.")
                self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
                self.n_features_in_ = frame.shape[1]
            else:
                expected = list(self.feature_names_in_)
                missing = [c for c in expected if c not in frame.columns]
                unknown = [c for c in frame.columns if c not in expected]
                if missing or unknown:
                    raise ValueError(
                        f"X has different columns than the reference data: missing {missing}, "
                        f"unknown {unknown}."
                    )
                frame = frame[expected]
        else:
            if not reset and self._frame_input:
                raise ValueError(
                    "The explainer was fitted on a DataFrame; pass a DataFrame with the columns "
                    f"{list(self.feature_names_in_)}, got {type(X).__name__}."
                )
            arr = check_array(
                X,
                dtype=None,
                accept_sparse=False,
                ensure_all_finite="allow-nan",
                ensure_min_samples=2 if reset else 1,
                input_name="X",
            )
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
        if frame.shape[1] == 0:
            raise ValueError("X has no columns.")
        return frame

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
        cf = np.asarray(cf)
        if cf.dtype == bool:
            if cf.shape != (n,):
                raise ValueError(
                    f"categorical_features as a mask must have {n} entries, got {cf.shape}."
                )
            return cf.copy()
        mask = np.zeros(n, dtype=bool)
        names = list(frame.columns) if self._frame_input else []
        for c in cf.tolist():
            if isinstance(c, numbers.Integral) and not isinstance(c, bool):
                if not -n <= c < n:
                    raise ValueError(f"categorical_features index {c} is out of range for {n}.")
                mask[c] = True
            elif c in names:
                mask[names.index(c)] = True
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
        frame = self._as_frame(X, reset=False)
        if len(frame) == 0:
            raise ValueError("X has no rows to explain.")
        if self._frame_input:
            return [frame.iloc[[i]] for i in range(len(frame))]
        arr = np.asarray(X)
        return [arr[i : i + 1] for i in range(len(arr))]

    def to_model_input(self, X):
        """The rows as the model expects them (reordered columns for DataFrames)."""
        frame = self._as_frame(X, reset=False)
        return frame if self._frame_input else np.asarray(X)

    def instance(self, row):
        """An :class:`TabularInstance` sampler for one row (1-row DataFrame or array)."""
        check_is_fitted(self, "n_reference_")
        frame = self._as_frame(row, reset=False)
        if len(frame) != 1:
            raise ValueError(f"instance() takes exactly one row, got {len(frame)}.")
        return TabularInstance(self, frame)

    def feature_names(self):
        """Names used in predicates: column names, or ``x0, x1, ...`` for arrays."""
        if self.feature_names_in_ is not None:
            return list(self.feature_names_in_)
        return [f"x{j}" for j in range(self.n_features_in_)]


class TabularInstance:
    """Sampler for one explained row; see :mod:`skanchors._search` for the protocol."""

    def __init__(self, parent, frame):
        self.parent = parent
        names = parent.feature_names()
        n_ref = parent.n_reference_
        n_feat = len(names)
        # Row n_ref of the local code matrix is the explained row itself; it is only drawn when
        # no reference row satisfies one of its predicates (e.g. an unseen category).
        x_codes = np.empty(n_feat, dtype=np.int32)
        x_missing = np.zeros(n_feat, dtype=bool)
        self._values = list(parent._values)
        for j in range(n_feat):
            value = frame.iloc[0, j]
            x_missing[j] = pd.isna(value)
            code = parent._n_missing_code[j] if x_missing[j] else parent._lookup[j].get(value)
            if code is None or code >= len(self._values[j]):
                # A value the reference data never had: it becomes a code of its own.
                code = len(self._values[j])
                if parent._frame_input:
                    self._values[j] = pd.concat(
                        [pd.Series(self._values[j]), frame.iloc[:, j]], ignore_index=True
                    ).array
                else:
                    self._values[j] = np.concatenate([self._values[j], frame.iloc[:, j]])
            x_codes[j] = code
        self.x_codes = x_codes
        preds, masks, feats = [], [], []
        x_bins = None
        if parent._numeric.size:
            num = frame.iloc[:, parent._numeric].astype(float)
            if not parent._frame_input:
                num.columns = [f"x{j}" for j in parent._numeric]
            x_bins = parent.discretizer_.transform(num)[0]
        num_pos = {j: k for k, j in enumerate(parent._numeric)}
        codes, bins = parent._codes, parent._bins
        for j, name in enumerate(names):
            if parent.categorical_[j]:
                if x_missing[j]:
                    preds.append(Predicate(name, "isna", None, j))
                else:
                    preds.append(Predicate(name, "==", _scalar(frame.iloc[0, j]), j))
                masks.append(codes[:, j] == x_codes[j])
                feats.append(j)
                continue
            k = num_pos[j]
            if np.isnan(x_bins[k]):
                preds.append(Predicate(name, "isna", None, j))
                masks.append(bins[:, k] < 0)
                feats.append(j)
                continue
            b = int(x_bins[k])
            edges = parent.discretizer_.bin_edges_[k]
            if b < len(edges):
                preds.append(Predicate(name, "<=", float(edges[b]), j))
                masks.append((bins[:, k] <= b) & (bins[:, k] >= 0))
                feats.append(j)
            if b > 0:
                preds.append(Predicate(name, ">", float(edges[b - 1]), j))
                masks.append(bins[:, k] >= b)
                feats.append(j)
        # A predicate that every reference row satisfies (e.g. "Pclass <= 3.0" when 3 is the
        # largest value) constrains nothing: it would only lengthen rules.
        informative = [i for i, m in enumerate(masks) if not m.all()]
        preds = [preds[i] for i in informative]
        masks = [masks[i] for i in informative]
        feats = [feats[i] for i in informative]
        self.predicates = preds
        self.n_predicates = len(preds)
        self._feature_of = np.array(feats, dtype=np.intp)
        d = len(preds)
        holds = np.ones((n_ref + 1, d), dtype=bool)
        if d:
            holds[:n_ref] = np.column_stack(masks)
        self._holds = holds
        self._codes = np.vstack([codes, x_codes[None, :]])
        self._n_ref = n_ref
        self._weights = parent._weights
        self._cum = None if parent._weights is None else np.cumsum(parent._weights)
        self._choice_cache = {}
        # Coverage by bit-sets: one packed row of reference rows per predicate.
        self._bits = np.packbits(holds[:n_ref].T, axis=1) if d else None
        self._class_bits = None

    # -- the search protocol
    def _draw(self, rng, n, pool=None):
        if pool is None:
            if self._cum is None:
                return rng.integers(self._n_ref, size=n)
            return np.minimum(
                np.searchsorted(self._cum, rng.random(n) * self._cum[-1], side="right"),
                self._n_ref - 1,
            )
        rows, cum = pool
        if cum is None:
            return rows[rng.integers(len(rows), size=n)]
        pick = np.searchsorted(cum, rng.random(n) * cum[-1], side="right")
        return rows[np.minimum(pick, len(rows) - 1)]

    def _pool(self, feature, preds):
        key = (feature, preds)
        pool = self._choice_cache.get(key)
        if pool is None:
            ok = self._holds[: self._n_ref, list(preds)].all(axis=1)
            rows = np.flatnonzero(ok)
            if rows.size == 0:
                rows = np.array([self._n_ref])  # the explained row itself
                cum = None
            else:
                cum = None if self._weights is None else np.cumsum(self._weights[rows])
                if cum is not None and cum[-1] <= 0:
                    cum = None
            pool = (rows, cum)
            self._choice_cache[key] = pool
        return pool

    @property
    def predicate_features(self):
        """Index of the feature each predicate constrains (the search's stratification)."""
        return self._feature_of

    def sample(self, anchor, n, rng, *, return_native=False):
        """``n`` draws from ``D(z | anchor)``: (codes matrix, predicate-holds matrix).

        A draw takes a random reference row (the *base* row) and replaces, feature by feature,
        the values that violate the anchor's predicates on that feature by values of reference
        rows that satisfy them. With ``return_native=True`` a third matrix says which
        predicates the base row satisfied before any replacement: the strata of
        :class:`skanchors._search.StratifiedArms`.
        """
        base = self._draw(rng, n)
        n_feat = self._codes.shape[1]
        src = np.repeat(base[:, None], n_feat, axis=1)
        by_feature = {}
        for p in anchor:
            by_feature.setdefault(int(self._feature_of[p]), []).append(p)
        for f, preds in by_feature.items():
            preds = tuple(sorted(preds))
            bad = ~self._holds[base][:, list(preds)].all(axis=1)
            n_bad = int(bad.sum())
            if n_bad:
                src[bad, f] = self._draw(rng, n_bad, self._pool(f, preds))
        keys = self._codes[src, np.arange(n_feat)]
        d = self.n_predicates
        holds = self._holds[src[:, self._feature_of], np.arange(d)] if d else np.ones((n, 0), bool)
        if return_native:
            return keys, holds, self._holds[base]
        return keys, holds

    def decode(self, keys):
        """Model input (DataFrame or array in the reference dtypes) for rows of codes."""
        parent = self.parent
        cols = [values.take(keys[:, j]) for j, values in enumerate(self._values)]
        if parent._frame_input:
            return pd.DataFrame(dict(zip(parent.feature_names_in_, cols)), copy=False)
        return np.column_stack(cols).astype(parent._dtype, copy=False)

    def _covered_bits(self, anchor):
        bits = self._bits[anchor[0]].copy()
        for p in anchor[1:]:
            bits &= self._bits[p]
        return bits

    def coverage(self, anchors):
        """Coverage of each anchor under the (possibly weighted) reference distribution."""
        out = np.empty(len(anchors))
        for i, anchor in enumerate(anchors):
            if not anchor:
                out[i] = 1.0
                continue
            bits = self._covered_bits(anchor)
            if self._weights is None:
                out[i] = _bitcount(bits) / self._n_ref
            else:
                covered = np.unpackbits(bits, count=self._n_ref).astype(bool)
                out[i] = self._weights[covered].sum()
        return out

    def reference_coverage(self, anchor):
        """Fraction of the (unweighted) reference rows that satisfy the anchor."""
        if not anchor:
            return 1.0
        return _bitcount(self._covered_bits(anchor)) / self._n_ref


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value
