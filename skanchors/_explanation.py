"""The result of an explanation: an :class:`Anchor` made of structured :class:`Predicate` s."""

from __future__ import annotations

import decimal
import html
import json
import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from . import _serial
from ._documents import check_documents, tokenize
from .discretizers import format_value

__all__ = ["Predicate", "Anchor", "RuleCheck"]

_OPS = ("==", "<=", ">", "in", "isna", "contains", "kept")


def _scalar(value):
    """A numpy scalar as the Python one (NaN as None): for keys and comparisons."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _plain(value):
    """JSON-safe version of a value (:func:`_scalar`); an interval (a ``pd.cut`` category), a
    Decimal or a tuple (a MultiIndex column name) becomes a tagged dict that :func:`._serial.label`
    turns back."""
    value = _scalar(value)
    if isinstance(value, pd.Interval):
        return {"interval": [_plain(value.left), _plain(value.right)], "closed": value.closed}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, tuple):  # a MultiIndex column name
        return {"tuple": [_plain(v) for v in value]}
    return value


def _step_indices(step, predicates):
    """``{"indices": [...]}``: where a step's predicates are among the anchor's (a text
    anchor's two "good" print alike but keep different words), or, for a step holding one
    that a narrower predicate replaced later (``bounds="all"``), the predicates themselves.
    A predicate is found where one equal to it prints alike: ``x = 0`` is not ``x = False``."""
    printed = [str(p) for p in predicates]
    try:
        return {
            "indices": [
                next(i for i, q in enumerate(predicates) if q == p and printed[i] == str(p))
                for p in step.predicates
            ]
        }
    except StopIteration:
        return {"full": [{k: _plain(v) for k, v in asdict(p).items()} for p in step.predicates]}


def _predicate(data, where="predicate"):
    """A :class:`Predicate` from its ``to_dict`` form, checked (:func:`._serial.predicate`);
    ``where`` names it in errors."""
    return Predicate(**_serial.predicate(data, where, _OPS))


def _unserialisable(value):
    raise TypeError(
        f"an anchor holds a {type(value).__name__} ({value!r:.60}), which JSON cannot hold; "
        "to_dict() keeps it, and pickle or joblib keep the whole anchor."
    )


def _number(value):
    """A float for JSON: NaN (no estimate) becomes null, which strict JSON allows."""
    value = float(value)
    return None if math.isnan(value) else value


def _beside(value, threshold):
    """``value`` with two decimals, or as many more as it takes (up to six) for the printed
    number to stay on the same side of ``threshold`` as the value itself: 0.9489 is not
    printed as 0.95 against a threshold of 0.95."""
    digits = 2
    while digits < 6 and (round(value, digits) >= threshold) != (value >= threshold):
        digits += 1
    return f"{value:.{digits}f}"


_RULE_WORDS = frozenset({"IF", "AND", "THEN", "PREDICT", "WITH", "PRECISION", "COVERAGE"})


@dataclass(frozen=True)
class Predicate:
    """One condition of an anchor: ``feature op value``.

    Parameters
    ----------
    feature : str or int
        Column name (DataFrames) or column index (arrays); for text, the word.
    op : {"==", "<=", ">", "in", "isna", "contains", "kept"}
        ``"in"`` means the value lies in ``value``, a right-closed :class:`pandas.Interval`
        (a bin, ``23.0 < Age <= 28.0``: ``bounds="interval"``); ``"isna"`` means the value
        is missing; ``"contains"`` is a text predicate (the word at ``position``);
        ``"kept"`` an image's (superpixel ``feature`` shows the image's own pixels).
    value : object
        The compared value (``None`` for ``"isna"``; an interval for ``"in"``).
    position : int or None
        Index of the feature (tabular) or of the word (text) in the explained instance.

    Examples
    --------
    >>> import pandas as pd
    >>> p = Predicate("Age", "<=", 37.0)
    >>> str(p)
    'Age <= 37.0'
    >>> p.evaluate(pd.DataFrame({"Age": [30.0, 40.0, float("nan")]})).tolist()
    [True, False, False]
    >>> b = Predicate("Age", "in", pd.Interval(23.0, 28.0, closed="right"))
    >>> str(b), b.evaluate(pd.DataFrame({"Age": [23.0, 28.0, 30.0]})).tolist()
    ('23.0 < Age <= 28.0', [False, True, False])
    """

    feature: Any
    op: str
    value: Any = None
    position: int | None = None

    def __post_init__(self):
        if self.op not in _OPS:
            raise ValueError(f"op must be one of {_OPS}, got {self.op!r}.")
        if self.op == "in" and not (
            isinstance(self.value, pd.Interval) and self.value.closed == "right"
        ):
            raise ValueError(
                "a predicate with op 'in' needs a right-closed pandas.Interval as its value "
                f"(low < x <= high), got {self.value!r}."
            )

    @property
    def name(self):
        """The feature as a rule prints it: a column named by a number (a DataFrame built
        from an array) reads ``column 0``, so that ``column 0 > 2.0`` is not ``0 > 2.0``."""
        return self.feature if isinstance(self.feature, str) else f"column {self.feature}"

    def __str__(self):
        if self.op == "isna":
            return f"{self.name} is missing"
        if self.op == "kept":
            return f"superpixel {self.feature}"
        if self.op == "contains":
            # a document's word "AND" would read as the rule's own AND: quoted
            return f'"{self.value}"' if self.value in _RULE_WORDS else str(self.value)
        if self.op == "in":
            low, high = format_value(self.value.left), format_value(self.value.right)
            return f"{low} < {self.name} <= {high}"
        op = "=" if self.op == "==" else self.op
        return f"{self.name} {op} {format_value(self.value)}"

    def _column(self, X):
        if isinstance(X, pd.DataFrame):
            if self.feature not in X.columns:
                raise KeyError(
                    f"X has no column {self.feature!r} (needed by the predicate '{self}'); "
                    f"columns are {list(X.columns)}."
                )
            return X[self.feature]
        X = np.asarray(X, dtype=object if np.asarray(X).dtype == object else None)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}.")
        # the position in the reference data; an integer name is a position only without one
        # (columns named [1, 0] have the name 1 at position 0)
        index = self.position
        if index is None and isinstance(self.feature, (int, np.integer)):
            index = int(self.feature)
        if index is None or index >= X.shape[1]:
            raise KeyError(f"X has {X.shape[1]} columns; predicate '{self}' needs {index}.")
        return pd.Series(X[:, index])

    def evaluate(self, X):
        """Boolean mask of the rows of ``X`` (DataFrame or 2-d array) that satisfy it; for a
        word predicate, of the documents of ``X`` (a list, 1-d array or Series of str)."""
        if self.op == "contains":
            # (a DataFrame was read column name by column name, a str letter by letter)
            docs = check_documents(X, "X", allow_wordless=True, allow_empty=True)
            return np.array([self.value in {t for t, _, _ in tokenize(d)} for d in docs], bool)
        if self.op == "kept":
            raise ValueError(
                f"'{self}' is a superpixel of the explained image: it holds in perturbations "
                "of that image only, and is not defined on other images or rows."
            )
        col = self._column(X)
        if self.op == "isna":
            return col.isna().to_numpy()
        if self.op == "==":
            return (col == self.value).fillna(False).to_numpy(dtype=bool)
        values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            if self.op == "<=":
                return values <= self.value
            if self.op == "in":
                return (values > self.value.left) & (values <= self.value.right)
            return values > self.value


@dataclass(frozen=True)
class Step:
    """A partial anchor of the search: the first ``len(predicates)`` predicates chosen."""

    predicates: tuple
    precision: float
    coverage: float


def _step(data, where, predicates):
    """A :class:`Step` from its ``to_dict`` form: its predicates by ``"indices"`` into the
    anchor's ``predicates``, ``"full"`` (predicates of their own), or (written before either)
    by their printed form, each one of the anchor's."""
    _serial.check_keys(
        data, where, ("predicates", "precision", "coverage"), ("indices", "full"), "a step"
    )
    printed = _serial.sequence(data["predicates"], f"{where}['predicates']")
    for j, name in enumerate(printed):
        _serial.text(name, f"{where}['predicates'][{j}]")
    if "indices" in data and "full" in data:
        raise ValueError(f"{where} must have 'indices' or 'full', not both.")
    if "indices" in data:
        at = f"{where}['indices']"
        held = tuple(
            predicates[_serial.index(i, f"{at}[{j}]", len(predicates), "data['predicates']")]
            for j, i in enumerate(_serial.sequence(data["indices"], at))
        )
    elif "full" in data:
        at = f"{where}['full']"
        held = tuple(
            _predicate(p, f"{at}[{j}]") for j, p in enumerate(_serial.sequence(data["full"], at))
        )
    else:
        by_str = {str(p): p for p in predicates}
        for j, name in enumerate(printed):
            if name not in by_str:
                raise ValueError(
                    f"{where}['predicates'][{j}] ({_serial.shown(name)}) is none of the anchor's "
                    "predicates."
                )
        held = tuple(by_str[name] for name in printed)
    if len(held) != len(printed):
        raise ValueError(
            f"{where}['predicates'] must print the step's {len(held)} predicates, got "
            f"{len(printed)}."
        )
    return Step(
        held,
        _serial.real(data["precision"], f"{where}['precision']", 0, 1, missing=True),
        _serial.real(data["coverage"], f"{where}['coverage']", 0, 1),
    )


class RuleCheck(NamedTuple):
    """What :meth:`Anchor.check` finds on rows of your own."""

    precision: float  #: share of the covered rows on which the model agrees (NaN: none)
    coverage: float  #: share of the rows the rule covers
    n_covered: int  #: rows the rule covers


def plain_text(text):
    """``text`` as matplotlib shows it literally: a ``$`` (``income = $10k-$20k``) would start
    its maths mode and vanish."""
    return str(text).replace("$", r"\$")


# The version of the form Anchor.to_dict writes; from_dict reads this one only.
_FORMAT = 1
# the keys an anchor cannot be rebuilt without, and those with defaults
_REQUIRED_KEYS = ("predicates", "prediction", "precision", "coverage", "is_anchor", "threshold")
_OPTIONAL_KEYS = (
    "version", "precision_bounds", "coverage_perturbation", "n_samples", "steps",
    "n_model_calls", "n_rows_predicted", "wall_time", "tolerance", "perturbation",
)  # fmt: skip
_PERTURBATIONS = (None, "reference", "replace")
# How far a bound may lie past the precision it bounds (rounding) in a file read back.
_BOUND_SLACK = 1e-9


def _samples_of(anchor):
    """What an anchor's samples are, for display."""
    if anchor.perturbation == "reference":
        return "reference rows"
    if anchor.perturbation == "replace":
        return "perturbed rows"
    return "samples"


@dataclass(eq=False)
class Anchor:
    """An IF-THEN rule that holds the model's prediction in place.

    Two anchors are equal (``==``) when they state the same rule with the same numbers:
    the same predicates in the same order, prediction, ``is_anchor``, threshold, precision,
    coverage, regression tolerance and perturbation distribution. Samples, counts, timings
    and examples are not compared, so the anchors of two runs, or an anchor and its JSON
    round trip, compare equal. Anchors hash by their predicates and prediction.

    Attributes
    ----------
    predicates : tuple of Predicate
        The conditions, in the order the search added them.
    prediction : object
        The class the rule predicts (the model's class label).
    precision : float
        Fraction of perturbations satisfying the rule for which the model predicts
        ``prediction``, estimated from ``n_samples`` samples of ``D(z | A)``: for an anchor,
        those of its validation, drawn after the search chose the rule (the reference rows
        the choice did not see, with ``perturbation="reference"``); for a rule that is not
        an anchor, all the search's samples of it.
    precision_bounds : (float, float)
        KL confidence interval of the precision at the level the search validated rules at:
        ``1 - delta`` shared (a union bound) among the ``1 + beam_size * max_anchor_size``
        rules it may validate and the looks of each validation. A rule is an anchor when its
        precision reaches the threshold and the lower bound is within 0.025 of it.
    coverage : float
        Fraction of the (unweighted) reference data that satisfies the rule.
    coverage_perturbation : float
        Coverage under the perturbation distribution, the one the search maximises. Tables:
        the same as ``coverage`` unless the reference data was class-balanced (then weighted).
        Text: the chance that a perturbation keeps every anchor word, ``keep_proba ** len(words)``
        (0.5 ** 5 = 0.031 for five words), where ``coverage`` is the share of reference
        documents containing them.
    is_anchor : bool
        Whether the rule was validated to reach the threshold. ``False`` means no rule did and
        this is the best candidate found (a warning is raised at explanation time): the
        most precise by the bandit, or with ``perturbation="reference"`` the one with the
        highest lower confidence bound.
    threshold : float
    n_samples : int
        Perturbations the precision estimate is based on.
    steps : list of Step
        Precision and coverage of each partial anchor.
    examples_hold, examples_fail : DataFrame, ndarray or list
        Perturbations covered by the rule on which the prediction holds / changes.
    n_model_calls, n_rows_predicted : int
        Calls to the model and rows it predicted for this anchor: the call that predicted the
        explained row (the class to anchor) and the search's. When several rows are
        explained in one call, the counts are those of explaining them one after the other in
        their order: a perturbation two searches need counts for the first, which the other
        then finds in the prediction cache, and a search counts one call per request with a
        row of its own. They do not depend on whether the searches shared model calls (a
        slow model's are merged: the model then makes fewer calls than the anchors count;
        the rows themselves are predicted in two calls, the first row alone) nor on the
        order their threads ran in, so identical runs report identical counts; the rows
        add up to the rows the model predicted. A row whose search was reused (see the user
        guide) counts its own prediction only.
    wall_time : float
        Seconds from the start of this row's search to its end. Rows explained in one
        ``explain`` call share model calls and overlap in time, so their wall times add up to
        more than the call took; compare explainers on rows explained one per call, or on
        the call's own time.
    instance : object
        The explained row or document.
    tolerance : float or None
        Regression only: the band the prediction is held within.
    perturbation : {"reference", "replace"} or None
        Tables: the distribution ``D(z | A)`` the precision is about. ``"reference"``: the
        reference rows that satisfy the rule, as they are (the data's own distribution);
        ``"replace"``: reference rows whose values that break the rule are replaced by values
        that keep it. None for documents.
    """

    predicates: tuple
    prediction: Any
    precision: float
    coverage: float
    is_anchor: bool
    threshold: float
    precision_bounds: tuple = (float("nan"), float("nan"))
    coverage_perturbation: float = float("nan")
    n_samples: int = 0
    steps: list = field(default_factory=list)
    examples_hold: Any = None
    examples_fail: Any = None
    n_model_calls: int = 0
    n_rows_predicted: int = 0
    wall_time: float = 0.0
    instance: Any = None
    tolerance: float | None = None
    perturbation: str | None = None

    # The key a subclass's to_dict adds (ImageAnchor: "segments"), by which Anchor.from_dict
    # rebuilds it as that subclass (a class attribute, not a field).
    _dict_key = None

    def _identity(self):
        numbers = (self.threshold, self.precision, self.coverage)
        tolerance = None if self.tolerance is None else float(self.tolerance)
        return (
            tuple(self.predicates),
            _scalar(self.prediction),
            bool(self.is_anchor),
            tuple(_number(x) for x in numbers),  # NaN as None, so NaN equals NaN
            tolerance,
            self.perturbation,
        )

    def __eq__(self, other):
        if not isinstance(other, Anchor):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self):
        return hash(self._identity()[:2])

    # ----------------------------------------------------------------- reading the rule
    def __len__(self):
        return len(self.predicates)

    @property
    def features(self):
        """The distinct features (or words) of the rule, in order of appearance."""
        return list(dict.fromkeys(p.feature for p in self.predicates))

    @property
    def words(self):
        """Text anchors: the anchor words in the order they appear in the document."""
        preds = sorted(self.predicates, key=lambda p: -1 if p.position is None else p.position)
        return [p.value if p.op == "contains" else str(p) for p in preds]

    def conditions(self):
        """One readable condition per feature; two bin predicates become ``a < x <= b``."""
        out = []
        for feat in self.features:
            preds = [p for p in self.predicates if p.feature == feat]
            lo = [p for p in preds if p.op == ">"]
            hi = [p for p in preds if p.op == "<="]
            if lo and hi:
                out.append(
                    f"{format_value(max(p.value for p in lo))} < {preds[0].name} <= "
                    f"{format_value(min(p.value for p in hi))}"
                )
            else:
                out.extend(str(p) for p in preds)
        return out

    def _why_not(self):
        """Why a returned rule is not an anchor, for display."""
        if self.precision >= self.threshold:  # (False for NaN)
            if self.perturbation == "reference":
                # its reference rows ran out before the bound could decide
                n = self.n_samples
                return f"{n} sample{'' if n == 1 else 's'} cannot show precision >= threshold"
            # the search's estimate reaches it, but not on the samples drawn after the choice
            return "not confirmed on fresh samples"
        return "precision below threshold"

    def _predicted(self):
        """What the rule predicts, as every display shows it (regression: the value and its
        band, ``8.7175 +- 10.1242``)."""
        if self.tolerance is None:
            return str(self.prediction)
        # 6 significant digits, or as many as keep the rounding a tenth of the band: 1e7 + 50.37
        # +- 6.93 printed as 10000100 +- 6.93, a band without the prediction in it
        digits = 6
        value, band = abs(float(self.prediction)), abs(float(self.tolerance))
        if np.isfinite(value) and np.isfinite(band) and value > 0 and band > 0:
            digits = int(min(max(6, np.floor(np.log10(value)) - np.floor(np.log10(band)) + 3), 17))
        return f"{format_value(self.prediction, digits)} +- {format_value(self.tolerance, 6)}"

    def __str__(self):
        cond = " AND ".join(self.conditions()) if self.predicates else "(any input)"
        flag = "" if self.is_anchor else f" [NOT AN ANCHOR: {self._why_not()}]"
        return (
            f"IF {cond} THEN PREDICT {self._predicted()} WITH PRECISION "
            f"{_beside(self.precision, self.threshold)} "
            f"AND COVERAGE {self.coverage:.2f}{flag}"
        )

    def __repr__(self):
        return f"<Anchor {self}>"

    def covers(self, X):
        """Boolean mask of the rows of new data that satisfy every predicate.

        Parameters
        ----------
        X : DataFrame, 2-d array, or list of str (text anchors)

        Returns
        -------
        mask : ndarray of bool, shape (n_rows,)
        """
        if isinstance(X, str):
            raise TypeError("X must be a collection of rows or documents, not a single string.")
        if any(p.op == "contains" for p in self.predicates):  # a text anchor: documents
            X = check_documents(X, allow_wordless=True, allow_empty=True)
            if all(p.op == "contains" for p in self.predicates):
                return self._covers_counted([Counter(w for w, _, _ in tokenize(d)) for d in X])
        n = len(X)
        mask = np.ones(n, dtype=bool)
        for p in self.predicates:
            mask &= p.evaluate(X)
        return mask

    def _covers_counted(self, counted):
        """:meth:`covers` for documents given as word counts (``Counter`` s): a word the
        anchor keeps twice ("IF good AND good") must occur twice."""
        need = Counter(p.value for p in self.predicates).items()
        return np.array([all(doc[w] >= m for w, m in need) for doc in counted], dtype=bool)

    def check(self, X, predictions, *, exclude=None):
        """The rule on rows of your own: how many it covers, and whether the model agrees.

        Parameters
        ----------
        X : DataFrame, 2-d array, or list of str (text anchors)
            Rows the search never saw (held-out data), as :meth:`covers` takes them.
        predictions : array-like of shape (n_rows,)
            The model's outputs on ``X`` (``model.predict(X)``): class labels, or predicted
            values for a regression anchor.
        exclude : int or array-like of int, default=None
            Positions of rows of ``X`` to leave out, e.g. the explained row itself.

        Returns
        -------
        RuleCheck
            ``(precision, coverage, n_covered)``: the share of the rows (those not excluded)
            the rule covers, and of those the share on which the prediction is the anchor's
            (for regression: within ``tolerance`` of it); precision is NaN when the rule
            covers no row.

        Examples
        --------
        >>> from skanchors import Anchor, Predicate
        >>> a = Anchor((Predicate("x", ">", 0.5),), prediction=1, precision=1.0,
        ...            coverage=0.5, is_anchor=True, threshold=0.95)
        >>> X = pd.DataFrame({"x": [0.9, 0.7, 0.2, 0.6]})
        >>> a.check(X, [1, 1, 0, 0])
        RuleCheck(precision=0.666..., coverage=0.75, n_covered=3)
        >>> a.check(X, [1, 1, 0, 0], exclude=0)  # e.g. the explained row itself
        RuleCheck(precision=0.5, coverage=0.666..., n_covered=2)
        """
        mask = self.covers(X)
        predictions = np.asarray(predictions)
        if predictions.ndim != 1 or len(predictions) != len(mask):
            raise ValueError(
                f"predictions must hold one model output per row of X ({len(mask)}), got an "
                f"array of shape {predictions.shape}."
            )
        keep = np.ones(len(mask), dtype=bool)
        if exclude is not None:
            exclude = np.atleast_1d(np.asarray(exclude))
            if exclude.dtype.kind not in "iu" or ((exclude < 0) | (exclude >= len(mask))).any():
                raise ValueError(
                    f"exclude must hold positions of rows of X (0 to {len(mask) - 1}), got "
                    f"{exclude.tolist()}."
                )
            keep[exclude] = False
        mask &= keep
        n_rows, n_covered = int(keep.sum()), int(mask.sum())
        coverage = n_covered / n_rows if n_rows else float("nan")
        if not n_covered:
            return RuleCheck(float("nan"), coverage, 0)
        covered = predictions[mask]
        if self.tolerance is not None:  # regression: within tolerance of the prediction
            agree = np.abs(covered.astype(float) - float(self.prediction)) <= self.tolerance
        else:
            agree = covered == self.prediction
        return RuleCheck(float(np.mean(agree)), coverage, n_covered)

    # ------------------------------------------------------------------- serialisation
    def to_dict(self):
        """Plain-Python dict (strict JSON: NaN is ``None``) with everything but the examples
        and the instance; :meth:`from_dict` reads it back. ``"version"`` is the version of
        this form."""
        return {
            "version": _FORMAT,
            "predicates": [{k: _plain(v) for k, v in asdict(p).items()} for p in self.predicates],
            "prediction": _plain(self.prediction),
            "precision": _number(self.precision),
            "precision_bounds": [_number(b) for b in self.precision_bounds],
            "coverage": _number(self.coverage),
            "coverage_perturbation": _number(self.coverage_perturbation),
            "is_anchor": bool(self.is_anchor),
            "threshold": _number(self.threshold),
            "n_samples": int(self.n_samples),
            "steps": [
                {
                    "predicates": [str(p) for p in s.predicates],
                    **_step_indices(s, self.predicates),
                    "precision": _number(s.precision),
                    "coverage": _number(s.coverage),
                }
                for s in self.steps
            ],
            "n_model_calls": int(self.n_model_calls),
            "n_rows_predicted": int(self.n_rows_predicted),
            "wall_time": _number(self.wall_time),
            "tolerance": None if self.tolerance is None else float(self.tolerance),
            "perturbation": self.perturbation,
        }

    def to_json(self, **kwargs):
        """JSON string of :meth:`to_dict`; keyword arguments go to :func:`json.dumps`."""
        kwargs.setdefault("default", _unserialisable)
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data):
        """Rebuild an anchor from :meth:`to_dict` output (examples and instance are not kept).

        Every field is checked, so that a file edited by hand or by someone else cannot give
        an anchor that states impossible numbers; anything else raises a ``ValueError`` that
        names the field (``data['steps'][0]['indices'][1]``):

        - ``"version"``: 1, the form this skanchors writes (absent: the same form, written
          before it had a version);
        - precision, coverages and bounds are numbers in [0, 1] and the threshold in (0, 1],
          finite (``null`` where an estimate may be missing: the precision and bounds of a rule
          without samples, ``coverage_perturbation``); the bounds are both ``null`` or both
          numbers, ``lower <= precision <= upper``; an anchor (``is_anchor`` true, a JSON
          boolean) has a precision that reaches its threshold;
        - counts are non-negative integers (``5.0`` is one, ``true`` is not), ``wall_time``
          a non-negative number, ``tolerance`` ``null`` (classification) or a positive number;
          a regression anchor's prediction is a finite number, a class label is a string,
          number or boolean;
        - predicates have a known op and the value it needs (a number, possibly infinite,
          for ``"<="`` and ``">"``, a right-closed interval for ``"in"``, ``null`` for
          ``"isna"``, the word itself for ``"contains"``), a non-negative integer or null
          position, and word predicates are not mixed with column predicates;
        - steps point at predicates that exist; ``perturbation`` is ``"reference"``,
          ``"replace"`` or null;
        - no key is unknown: a misspelt optional key (``"tolerence"``) would otherwise be
          dropped silently and change what the anchor means.

        NaN is refused everywhere: a missing number is ``null``.
        """
        if not isinstance(data, dict):
            raise ValueError(f"data must be a dict from Anchor.to_dict, got {type(data).__name__}.")
        variant = _serial.variant(Anchor, cls, data)
        if variant is not None:  # (an image's anchor: ImageAnchor)
            return variant.from_dict(data)
        what = "an anchor's to_dict output"
        _serial.check_version(data, "data", _FORMAT, "an anchor")
        _serial.check_keys(data, "data", _REQUIRED_KEYS, _OPTIONAL_KEYS, what)
        preds = tuple(
            _predicate(p, f"data['predicates'][{i}]")
            for i, p in enumerate(_serial.sequence(data["predicates"], "data['predicates']"))
        )
        if len({p.op == "contains" for p in preds}) > 1:
            raise ValueError(
                "data['predicates'] mixes word predicates (op 'contains') with column "
                "predicates: an anchor holds one or the other."
            )
        tolerance = data.get("tolerance")
        if tolerance is not None:  # a regression anchor: the prediction is a number
            tolerance = _serial.real(tolerance, "data['tolerance']", 0, math.inf, closed="neither")
            prediction = _serial.real(data["prediction"], "data['prediction']")
        else:
            prediction = _serial.label(data["prediction"], "data['prediction']")
            if prediction is None:
                raise ValueError("data['prediction'] must be a class label, got None.")
        is_anchor = data["is_anchor"]
        if not isinstance(is_anchor, (bool, np.bool_)):
            raise ValueError(
                f"data['is_anchor'] must be true or false, got {_serial.shown(is_anchor)}."
            )
        threshold = _serial.real(data["threshold"], "data['threshold']", 0, 1, closed="right")
        precision = _serial.real(data["precision"], "data['precision']", 0, 1, missing=True)
        if is_anchor and not precision >= threshold:
            raise ValueError(
                f"data['is_anchor'] is true but data['precision'] ({precision}) does not reach "
                f"data['threshold'] ({threshold}): an anchor's precision reaches its threshold."
            )
        bounds = _serial.sequence(
            data.get("precision_bounds", [None, None]), "data['precision_bounds']"
        )
        if len(bounds) != 2:
            raise ValueError(
                "data['precision_bounds'] must be a list [lower, upper], got "
                f"{_serial.shown(bounds)}."
            )
        low, high = (
            _serial.real(b, f"data['precision_bounds'][{i}]", 0, 1, missing=True)
            for i, b in enumerate(bounds)
        )
        if math.isnan(low) != math.isnan(high) or not (math.isnan(low) or low <= high):
            raise ValueError(
                "data['precision_bounds'] must be null, null or lower <= upper, got "
                f"{_serial.shown(bounds)}."
            )
        if not (math.isnan(low) or math.isnan(precision)) and not (
            low - _BOUND_SLACK <= precision <= high + _BOUND_SLACK
        ):
            raise ValueError(
                f"data['precision_bounds'] ({low}, {high}) must hold data['precision'] "
                f"({precision}): they are its confidence interval."
            )
        coverage_perturbation = _serial.real(
            data.get("coverage_perturbation"), "data['coverage_perturbation']", 0, 1, missing=True
        )
        steps = _serial.sequence(data.get("steps", []), "data['steps']")
        perturbation = data.get("perturbation")
        if not isinstance(perturbation, (str, type(None))) or perturbation not in _PERTURBATIONS:
            raise ValueError(
                "data['perturbation'] must be 'reference', 'replace' or null, got "
                f"{_serial.shown(perturbation)}."
            )
        return cls(
            predicates=preds,
            prediction=prediction,
            precision=precision,
            coverage=_serial.real(data["coverage"], "data['coverage']", 0, 1),
            is_anchor=bool(is_anchor),
            threshold=threshold,
            precision_bounds=(low, high),
            coverage_perturbation=coverage_perturbation,
            n_samples=_serial.count(data.get("n_samples", 0), "data['n_samples']"),
            steps=[_step(step, f"data['steps'][{k}]", preds) for k, step in enumerate(steps)],
            n_model_calls=_serial.count(data.get("n_model_calls", 0), "data['n_model_calls']"),
            n_rows_predicted=_serial.count(
                data.get("n_rows_predicted", 0), "data['n_rows_predicted']"
            ),
            wall_time=_serial.real(data.get("wall_time", 0.0), "data['wall_time']", 0),
            tolerance=tolerance,
            perturbation=perturbation,
        )

    @classmethod
    def from_json(cls, text):
        """Rebuild an anchor from :meth:`to_json` output, checked as :meth:`from_dict` checks
        it; text that is not JSON raises ``ValueError`` too. ``Infinity`` is read only in a
        predicate's value (a bound may be infinite), ``NaN`` nowhere (``to_json`` writes
        ``null`` for a missing number)."""
        return cls.from_dict(_serial.parse_json(text, "Anchor.to_json"))

    # -------------------------------------------------------------------- display
    def _repr_html_(self):
        esc = html.escape
        cond = "".join(f"<li><code>{esc(c)}</code></li>" for c in self.conditions())
        cond = cond or "<li><em>any input</em></li>"
        status = (
            ""
            if self.is_anchor
            else (
                "<p style='color:#b00'><strong>Not an anchor:</strong> "
                f"{esc(self._why_not())} (threshold {self.threshold:.2f}).</p>"
            )
        )
        rows = "".join(
            f"<tr><td>{i + 1}</td><td>{esc(' AND '.join(str(p) for p in s.predicates))}</td>"
            f"<td>{s.precision:.3f}</td><td>{s.coverage:.3f}</td></tr>"
            for i, s in enumerate(self.steps)
        )
        return (
            "<div class='skanchors-anchor'>"
            f"<p><strong>IF</strong></p><ul>{cond}</ul>"
            f"<p><strong>THEN PREDICT</strong> <code>{esc(self._predicted())}</code> "
            f"with precision <strong>{self.precision:.3f}</strong> and coverage "
            f"<strong>{self.coverage:.3f}</strong> ({self.n_samples} {_samples_of(self)}, "
            f"{self.n_model_calls} model calls, {self.wall_time:.3f} s)</p>{status}"
            "<table><thead><tr><th>step</th><th>rule</th><th>precision</th>"
            f"<th>coverage</th></tr></thead><tbody>{rows}</tbody></table></div>"
        )

    def plot(self, ax=None):
        """Bar chart of precision and coverage after each step of the search.

        Requires matplotlib (``pip install skanchors[plot]``). Returns the Axes.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Anchor.plot needs matplotlib: pip install 'skanchors[plot]'."
            ) from exc
        if ax is None:
            # constrained layout keeps the rule's labels, the legend and the title inside the
            # saved figure
            height = 1.6 + 0.5 * max(len(self.steps), 1)
            _, ax = plt.subplots(figsize=(7, height), layout="constrained")
        # each step adds one predicate to the rule of the step before
        labels = [
            ("AND " if k else "") + str(s.predicates[-1]) if s.predicates else "(any input)"
            for k, s in enumerate(self.steps)
        ] or ["(any input)"]
        prec = [s.precision for s in self.steps] or [self.precision]
        cov = [s.coverage for s in self.steps] or [self.coverage]
        y = np.arange(len(labels))
        ax.barh(y - 0.2, prec, height=0.4, label="precision")
        ax.barh(y + 0.2, cov, height=0.4, label="coverage")
        ax.axvline(self.threshold, color="k", linestyle="--", linewidth=1, label="threshold")
        ax.set_yticks(y, [plain_text(label) for label in labels])
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_title(plain_text(f"PREDICT {self._predicted()}"))
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
        return ax
