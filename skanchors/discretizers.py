"""Discretizers: scikit-learn transformers that bin numeric features and name their bins.

Anchors on numeric features are bin predicates (``28.0 < Age <= 37.0``, ``Fare > 14.455``), so
the explainer needs the bin *edges* and a readable name for each bin in the original units.
These transformers provide both, and they accept missing values (NaN stays NaN: the explainer
treats "is missing" as a value of its own).

:class:`~sklearn.preprocessing.KBinsDiscretizer` (with ``encode="ordinal"``) can be given to
the explainers too, on data without NaN (it rejects them); its strategies give equal-width,
equal-frequency or k-means bins, not custom percentiles such as (10, 50, 90) nor given edges.
The explainers read its inner edges, and move an edge that a value equals (its bins are
``e0 <= x < e1``) to the shortest number that splits the data alike, so that a rule's
``x <= edge`` holds exactly the values of its bins.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._stacklevel import outside_stacklevel

__all__ = [
    "QuantileDiscretizer",
    "EdgesDiscretizer",
    "TreeDiscretizer",
    "bin_spread",
    "make_discretizer",
    "format_value",
]


def format_value(value, digits=15):
    """Readable rendering of a bin edge or a feature value, exact where it matters.

    A float is written with ``digits`` significant digits (15: the value itself, less the
    noise of binary fractions): an edge of 31.275 must not read 31.27, or a fare of exactly
    31.275 would seem to satisfy ``Fare > 31.27`` but not ``Fare > 31.275``; and the edges
    1000000412.7381 and 1000000977.03 of a column around 1e12 must not both read 1e+12.
    Predicted numbers, which no rule tests, take ``digits=6``, without an exponent below
    1e15.

    >>> format_value(28.0), format_value(31.275), format_value(0.1 + 0.2), format_value(3)
    ('28.0', '31.275', '0.3', '3')
    >>> format_value(1000000412.7381), format_value(34214412.3456, digits=6)
    ('1000000412.7381', '34214400')
    >>> format_value("a")
    'a'
    """
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        value = float(value)
        if np.isnan(value):
            return "NaN"
        if value.is_integer() and abs(value) < 1e15:
            return f"{value:.1f}"
        if digits < 15 and 1e-4 <= abs(value) < 1e15:
            return np.format_float_positional(
                value, precision=digits, unique=False, fractional=False, trim="-"
            )
        return f"{value:.{digits}g}"
    return str(value)


class _BaseDiscretizer(TransformerMixin, BaseEstimator):
    """Shared transform/naming logic; subclasses implement ``_compute_edges``."""

    def _compute_edges(self, X, y):  # pragma: no cover - abstract
        raise NotImplementedError

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the bin edges of every feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data; NaN is allowed.
        y : array-like of shape (n_samples,) or None
            Ignored by :class:`QuantileDiscretizer` and :class:`EdgesDiscretizer`;
            :class:`TreeDiscretizer` bins where it changes.

        Returns
        -------
        self
        """
        dtypes = getattr(X, "dtypes", None)
        if dtypes is not None:  # a DataFrame: name the columns that are not numbers
            text = [c for c, t in dtypes.items() if not pd.api.types.is_numeric_dtype(t)]
            if text:
                raise ValueError(
                    f"{type(self).__name__} bins numbers; column(s) {text} of X are not numeric "
                    f"({', '.join(sorted({str(dtypes[c]) for c in text}))}). Bin the numeric "
                    "columns only: the explainers do, and take the others as categories."
                )
        try:
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan")
        except ValueError as error:
            if "could not convert" not in str(error):
                raise
            raise ValueError(
                f"{type(self).__name__} bins numbers; X holds values that are not ({error}). "
                "Bin the numeric columns only: the explainers do, and take the others as "
                "categories."
            ) from None
        all_nan = np.isnan(X).all(axis=0)
        if all_nan.any():
            names = self._names()[all_nan]
            raise ValueError(
                f"Cannot discretize feature(s) {list(names)}: every value is NaN. "
                "Drop the column or impute it before explaining."
            )
        edges = self._compute_edges(X, y)
        self.bin_edges_ = [np.unique(np.asarray(e, dtype=float)) for e in edges]
        constant = [
            name for name, col in zip(self._names(), X.T) if np.nanmin(col) == np.nanmax(col)
        ]
        if constant:
            warnings.warn(
                f"Feature(s) {constant} have a single value in X: no bin edge can split "
                "the data, so they never appear in a rule or an explanation.",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
        self.n_bins_ = np.array([len(e) + 1 for e in self.bin_edges_])
        return self

    def _column(self, feature):
        """Position of ``feature`` (a name or an index) among the fitted features."""
        names = list(self._names())
        if isinstance(feature, str):
            if feature not in names:
                raise KeyError(f"Unknown feature {feature!r}; expected one of {names}.")
            return names.index(feature)
        if not isinstance(feature, Integral) or not 0 <= feature < len(names):
            raise KeyError(
                f"feature must be a name in {names} or an index in [0, {len(names)}), got "
                f"{feature!r}."
            )
        return int(feature)

    def _names(self):
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = np.array([f"x{i}" for i in range(self.n_features_in_)], dtype=object)
        return np.asarray(names, dtype=object)

    def transform(self, X):
        """Bin index of every value (``x <= e0`` is bin 0, ``e0 < x <= e1`` is bin 1, ...).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_features), float
            Bin indices; NaN where the input is NaN.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        out = np.empty_like(X)
        for j, edges in enumerate(self.bin_edges_):
            col = X[:, j]
            out[:, j] = np.searchsorted(edges, col, side="left")
            out[np.isnan(col), j] = np.nan
        return out

    def bin_names(self, feature):
        """Readable names of the bins of one feature, in the original units.

        Parameters
        ----------
        feature : int or str
            Index or name of the feature.

        Returns
        -------
        names : list of str
        """
        check_is_fitted(self)
        j = self._column(feature)
        name, edges = self._names()[j], [format_value(e) for e in self.bin_edges_[j]]
        if not edges:
            return [f"{name} (any value)"]
        out = [f"{name} <= {edges[0]}"]
        out += [f"{lo} < {name} <= {hi}" for lo, hi in zip(edges[:-1], edges[1:])]
        out.append(f"{name} > {edges[-1]}")
        return out

    def get_feature_names_out(self, input_features=None):
        """One output column per input feature, with the same name."""
        check_is_fitted(self)
        if input_features is not None:
            input_features = np.asarray(input_features, dtype=object)
            if len(input_features) != self.n_features_in_:
                raise ValueError(
                    f"input_features has {len(input_features)} names, expected "
                    f"{self.n_features_in_}."
                )
            known = getattr(self, "feature_names_in_", None)
            if known is not None and not np.array_equal(input_features, known):
                raise ValueError(
                    f"input_features {list(input_features)} is not equal to the fitted "
                    f"feature_names_in_ {list(known)}."
                )
            return input_features
        return self._names()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class QuantileDiscretizer(_BaseDiscretizer):
    """Bins at given percentiles of the reference data (quartiles by default).

    Parameters
    ----------
    percentiles : array-like of float in (0, 100), default=(25, 50, 75)
        Percentiles that become bin edges; ``range(10, 100, 10)`` gives deciles. They are
        percentages: ``(0.25, 0.5, 0.75)`` is refused as fractions. Repeated edges (features
        with few distinct values) are merged.

    Notes
    -----
    A percentile usually falls between two neighbouring values of the data. Every number
    from the lower of them up to the upper one splits the data alike, and the edge is the
    one with the fewest digits: rules read ``x <= 0.537`` and ``Age <= 20.0``, not
    ``x <= 0.536724726369211`` and ``Age <= 20.125``, and test exactly what they print. On
    the data the discretizer is fitted on the bins are the percentiles' bins; a new value
    inside such a gap may fall on the other side. One exception: when every percentile falls
    on a column's largest value (a 0/1 flag that is 1 on more than 75 % of the rows, for
    quartiles), the bins ``x <= max`` and the empty ``x > max`` would never split the data,
    so the edge goes between the two largest values.

    Attributes
    ----------
    bin_edges_ : list of ndarray
        Inner edges of each feature (``n_bins_[j] - 1`` values).
    n_bins_ : ndarray of int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from skanchors.discretizers import QuantileDiscretizer
    >>> X = np.random.default_rng(0).normal(size=(500, 1))
    >>> d = QuantileDiscretizer().fit(X)
    >>> np.percentile(X, [25, 50, 75]).round(6).tolist()
    [-0.703836, -0.050203, 0.686308]
    >>> d.bin_names(0)
    ['x0 <= -0.704', '-0.704 < x0 <= -0.05', '-0.05 < x0 <= 0.69', 'x0 > 0.69']
    >>> d.transform([[-3.0], [0.5], [np.nan]]).ravel().tolist()
    [0.0, 2.0, nan]
    """

    _parameter_constraints: dict = {"percentiles": ["array-like"]}

    def __init__(self, *, percentiles=(25, 50, 75)):
        self.percentiles = percentiles

    def _compute_edges(self, X, y):
        try:
            q = np.asarray(self.percentiles, dtype=float).ravel()
        except (TypeError, ValueError):
            q = np.array([np.nan])  # (refused below, with what was given)
        if q.size == 0 or np.any((q <= 0) | (q >= 100)) or np.any(np.isnan(q)):
            raise ValueError(
                f"percentiles must be a non-empty sequence of numbers in (0, 100), got "
                f"{self.percentiles!r}."
            )
        if q.max() < 1:
            raise ValueError(
                f"percentiles are percentages in (0, 100), got {self.percentiles!r}: for "
                f"fractions of the data, pass {tuple(float(v) for v in q * 100)} instead."
            )
        return _percentile_edges(X, np.sort(q))


class EdgesDiscretizer(_BaseDiscretizer):
    """Bins at edges given by the user, in the features' own units.

    Parameters
    ----------
    edges : dict or list
        ``{feature name or index: sorted edges}``, or a list with one sequence of edges per
        feature. They are used as given; ``-inf`` and ``inf`` (the outer bins of
        :func:`pandas.cut`) split nothing and are dropped. Features missing from a dict fall
        back to ``default``. Inside an explainer the discretizer sees the numeric features
        only, so an index counts among those: name the features to be sure (in a DataFrame
        whose columns are named by numbers, as ``pd.DataFrame(array)`` names them, a number
        is a column's name). An unknown name or index is an error.
    default : {"quartile", "none"}, default="quartile"
        Bins for features without given edges: their quartiles (moved as
        :class:`QuantileDiscretizer` moves them), or a single bin.

    Examples
    --------
    >>> import pandas as pd
    >>> from skanchors.discretizers import EdgesDiscretizer
    >>> X = pd.DataFrame({"age": [5.0, 20.0, 40.0, 70.0]})
    >>> EdgesDiscretizer(edges={"age": [18, 65]}).fit(X).bin_names("age")
    ['age <= 18.0', '18.0 < age <= 65.0', 'age > 65.0']
    """

    _parameter_constraints: dict = {
        "edges": [dict, list],
        "default": [StrOptions({"quartile", "none"})],
    }

    def __init__(self, *, edges, default="quartile"):
        self.edges = edges
        self.default = default

    def _compute_edges(self, X, y):
        names = list(self._names())
        given = {}
        if isinstance(self.edges, list):
            if len(self.edges) != X.shape[1]:
                raise ValueError(
                    f"edges has {len(self.edges)} entries but X has {X.shape[1]} features."
                )
            given = dict(enumerate(self.edges))
        else:
            # (Inside AnchorExplainer and LimeExplainer the discretizer sees the numeric
            # features only: the hint says so.)
            hint = " (the numeric features; categorical ones are not binned)"
            for key, value in self.edges.items():
                if isinstance(key, str):
                    if key not in names:
                        raise ValueError(
                            f"edges names unknown feature {key!r}; the features are {names}{hint}."
                        )
                    key = names.index(key)
                elif not 0 <= int(key) < X.shape[1]:
                    raise ValueError(
                        f"edges has feature index {key}, but there are {X.shape[1]} features "
                        f"{names}{hint}; name the feature instead."
                    )
                given[int(key)] = value
        out = []
        for j in range(X.shape[1]):
            if j in given:
                try:
                    e = np.asarray(given[j], dtype=float).ravel()
                except (TypeError, ValueError):
                    e = np.array([np.nan])  # (refused below, with what was given)
                if np.any(np.isnan(e)) or np.any(np.diff(e) <= 0):
                    raise ValueError(
                        f"edges for feature {names[j]!r} must be strictly increasing numbers, "
                        f"got {given[j]!r}."
                    )
                out.append(e[np.isfinite(e)])  # pandas.cut's -inf and inf split nothing
            elif self.default == "quartile":
                out.append(_percentile_edges(X[:, [j]], [25, 50, 75])[0])
            else:
                out.append(np.empty(0))
        return out


class TreeDiscretizer(_BaseDiscretizer):
    """Bins where a target changes: the split points of a decision tree fitted on ``y``.

    :class:`~skanchors.AnchorExplainer` fits it on the reference data with ``y`` the *model's
    predictions* on it, so that the bin edges sit where the model's prediction moves: narrow
    bins where it changes fast (the hours around a commute peak), one wide bin where it is
    flat (every hour of the night), and a single bin for a feature the model ignores. Only
    predictions on reference rows are used, never the model's internals: any model can be
    explained this way.

    Only the numeric features are binned (and seen by the tree); what categorical features
    contribute to ``y`` stays in the nodes' spread, so the tree then cuts the numeric ones
    until ``max_leaf_nodes`` or ``min_samples_leaf`` stops it.

    One tree is grown on all the (numeric) features together, so that a feature that
    matters only together with another (the hour, on working days) is cut too; a node is
    split only while ``y`` still varies in it by more than the tree is asked to resolve
    (``max_std``, or ``min_share`` for classes). Each feature's edges are the thresholds of
    the splits on it, wherever they are in the tree, each moved as
    :class:`QuantileDiscretizer` moves its edges (to the shortest number that splits the
    data alike).

    Parameters
    ----------
    target : {"auto", "continuous", "classes"}, default="auto"
        What ``y`` holds. ``"continuous"``: numbers (a regressor's predictions), split by
        variance; ``"classes"``: labels (a classifier's predicted classes), split by Gini
        impurity. ``"auto"``: continuous for floating-point ``y``, classes otherwise.
    max_std : float >= 0 or None, default=None
        Continuous ``y`` only: a node is split while the standard deviation of ``y`` in it is
        above ``max_std`` (in ``y``'s units). :class:`~skanchors.AnchorExplainer` passes
        ``bin_spread(tolerance_, threshold)``: bins in which two predictions (the explained
        row's and a perturbation's) are within the band of each other with probability
        ``threshold``, were they independent and normal. ``None`` means the same for the
        explainer's defaults, ``bin_spread(0.25 * std(y), 0.95)``, about 0.09 standard
        deviations of ``y``.
    min_share : float in (0, 1], default=0.95
        Classes only: a node is split while its most frequent class holds less than this
        share of its rows.
    min_samples_leaf : int >= 1 or float in (0, 0.5), default=5
        The fewest reference rows on each side of a split (a float is a share of the rows),
        so that no bin is narrower than the data can support.
    max_leaf_nodes : int >= 2, default=256
        Bounds the size of the tree (and the time to grow it); the tree grows best split
        first, so a bound that stops it keeps the splits that explain the most of ``y``.

    Attributes
    ----------
    bin_edges_ : list of ndarray
        Inner edges of each feature; empty for a feature the tree never splits on.
    n_bins_ : ndarray of int
    tree_ : sklearn.tree.DecisionTreeRegressor or DecisionTreeClassifier
        The fitted tree (all its splits, including those below the stopping point).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from skanchors.discretizers import TreeDiscretizer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(1000, 2))
    >>> y = np.where(X[:, 0] > 7, 5.0, 0.0)  # a step at x0 = 7; x1 is ignored
    >>> d = TreeDiscretizer().fit(X, y)
    >>> d.bin_names(0), d.bin_names(1)
    (['x0 <= 7.0', 'x0 > 7.0'], ['x1 (any value)'])
    """

    _parameter_constraints: dict = {
        "target": [StrOptions({"auto", "continuous", "classes"})],
        "max_std": [Interval(Real, 0, None, closed="left"), None],
        "min_share": [Interval(Real, 0, 1, closed="right")],
        "min_samples_leaf": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 0.5, closed="neither"),
        ],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(
        self,
        *,
        target="auto",
        max_std=None,
        min_share=0.95,
        min_samples_leaf=5,
        max_leaf_nodes=256,
    ):
        self.target = target
        self.max_std = max_std
        self.min_share = min_share
        self.min_samples_leaf = min_samples_leaf
        self.max_leaf_nodes = max_leaf_nodes

    def _compute_edges(self, X, y):
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        if y is None:
            raise ValueError(
                "TreeDiscretizer requires y to be passed, but the target y is None: it bins "
                "where y changes; pass the model's predictions on X (AnchorExplainer does)."
            )
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(X):
            raise ValueError(f"y must hold one value per row of X ({len(X)}), got shape {y.shape}.")
        classes = self.target == "classes" or (self.target == "auto" and y.dtype.kind not in "fc")
        if classes:
            y = y.astype(str) if y.dtype.kind == "O" else y
            if pd.isna(y).any():
                raise ValueError("y must not hold missing values.")
            tree = DecisionTreeClassifier
        else:
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    "y must hold numbers for target='continuous' (the model's predictions); "
                    "use target='classes' for labels."
                ) from None
            if not np.isfinite(y).all():
                raise ValueError("y must hold finite numbers for target='continuous'.")
            tree = DecisionTreeRegressor
        # (random_state only breaks ties between equally good splits, for repeatable edges)
        self.tree_ = tree(
            min_samples_leaf=self.min_samples_leaf,
            max_leaf_nodes=self.max_leaf_nodes,
            random_state=0,
        ).fit(X, y)
        t = self.tree_.tree_
        if classes:
            counts = t.value[:, 0, :]
            done = counts.max(axis=1) >= self.min_share * counts.sum(axis=1)
        else:
            if self.max_std is None:
                std = bin_spread(0.25 * float(np.std(y)), 0.95)
            else:
                std = float(self.max_std)
            done = t.impurity <= std**2  # (impurity: the variance of y in the node)
        cuts = [set() for _ in range(X.shape[1])]
        stack = [0]
        while stack:
            node = stack.pop()
            left, right = t.children_left[node], t.children_right[node]
            if left == -1 or done[node]:
                continue
            cuts[t.feature[node]].add(float(t.threshold[node]))
            stack += [left, right]
        return [_moved(col, sorted(c)) for col, c in zip(X.T, cuts)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


def bin_spread(tolerance, threshold):
    """The largest standard deviation of the predictions in a bin for which two of them are
    within ``tolerance`` of each other with probability ``threshold``, were they independent
    and normal (their difference has ``sqrt(2)`` times their standard deviation).

    :class:`~skanchors.AnchorExplainer` bins a regressor's features with
    ``TreeDiscretizer(max_std=bin_spread(tolerance_, threshold))``: the explained row's
    prediction and a perturbation's are two such predictions.

    >>> from skanchors.discretizers import bin_spread
    >>> round(bin_spread(1.0, 0.95), 4)  # 1 / (sqrt(2) * 1.96)
    0.3608
    """
    from scipy.stats import norm

    return float(tolerance) / (2**0.5 * float(norm.ppf((1 + float(threshold)) / 2)))


def _moved(col, thresholds):
    """Thresholds of a tree (``x <= t`` goes left) as the shortest numbers that split the
    column's values alike."""
    values = np.unique(col[~np.isnan(col)])
    at = np.searchsorted(values, thresholds, side="right")  # values[:at] <= threshold
    return np.array(
        [_shortest_between(values[i - 1], values[i]) for i in at.tolist() if 0 < i < len(values)]
    )


def _percentile_edges(X, q):
    """Percentiles ``q`` of every column of ``X``, each moved to the shortest decimal number
    that splits the column's values where the percentile does.

    A percentile usually falls between two neighbouring values of the data (or on one of
    them): any number from the lower of the two up to (not including) the upper one puts the
    same values on each side. The edge is the one with the fewest digits, so that a rule
    prints as ``x <= 0.537`` rather than ``x <= 0.536724726369211`` and still tests exactly
    what it prints. An edge at or above the largest value stays where it is (its top bin is
    empty), unless every edge is there: the column, whose largest value holds more rows than
    the percentiles leave above the smallest of them (a 0/1 flag that is 1 on 80 % of the rows,
    for quartiles), would then sit in one bin and never appear in a rule, so its edge goes
    between its two largest values instead.
    """
    out = []
    for col in X.T:
        values = np.unique(col[~np.isnan(col)])
        edges = np.nanpercentile(col, q)
        at = np.searchsorted(values, edges, side="right")  # values[:at] <= edge
        moved = [
            _shortest_between(values[i - 1], values[i]) if 0 < i < len(values) else e
            for e, i in zip(edges.tolist(), at.tolist())
        ]
        if len(values) > 1 and min(moved) >= values[-1]:
            moved = [_shortest_between(values[-2], values[-1])]
        out.append(np.array(moved))
    return out


def _shortest_between(lo, hi):
    """The number with the fewest decimal digits in ``[lo, hi)`` (``lo < hi``, finite)."""
    top = int(np.floor(np.log10(max(abs(lo), abs(hi))))) if max(abs(lo), abs(hi)) > 0 else 0
    for digits in range(-top - 1, 18):
        for value in (round(lo, digits), round(lo + 10.0**-digits, digits)):
            if lo <= value < hi:
                return value + 0.0  # no negative zero
    return float(lo)


_NAMED = {
    "quartile": (25, 50, 75),
    "decile": tuple(range(10, 100, 10)),
}
_NAMES = [*_NAMED, "tree"]


def make_discretizer(discretizer):
    """Turn the explainer's ``discretizer`` parameter into an unfitted transformer."""
    from sklearn.base import clone

    if isinstance(discretizer, str):
        if discretizer == "tree":
            return TreeDiscretizer()
        if discretizer not in _NAMED:
            raise ValueError(
                f"discretizer must be one of {_NAMES} or a transformer with "
                f"fit/transform and bin_edges_, got {discretizer!r}."
            )
        return QuantileDiscretizer(percentiles=_NAMED[discretizer])
    if hasattr(discretizer, "fit") and hasattr(discretizer, "transform"):
        return clone(discretizer)
    raise ValueError(
        f"discretizer must be 'quartile', 'decile', 'tree' or a transformer, got {discretizer!r}."
    )
