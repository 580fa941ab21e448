"""Reading explanations back from their ``to_dict`` / JSON form, strictly.

A file read back may have been edited by hand, truncated or written by a hostile party: every
field is checked for its type and range before an object is built from it, and anything else
raises a :class:`ValueError` that names the field (``data['steps'][1]['indices'][0]``), never
a ``TypeError``, ``KeyError`` or ``IndexError`` from inside.

The forms the values take are :func:`skanchors._explanation._plain`'s: JSON scalars, with
``null`` for a missing number, and tagged objects for an interval (``{"interval": [left,
right], "closed": ...}``), a Decimal (``{"decimal": "9.99"}``) and a tuple, a MultiIndex
column name (``{"tuple": [...]}``).
"""

from __future__ import annotations

import decimal
import json
import math
from numbers import Integral, Real

import numpy as np
import pandas as pd

# Integers of a label or a value fit 64 bits, signed or not (numpy's int64 and uint64 labels).
_INT_LOW, _INT_HIGH = -(2**63), 2**64
# Counts and positions: numpy's int64.
_COUNT_HIGH = 2**63
# How deep tuples of tuples (a column name) may nest.
_MAX_DEPTH = 16
_CLOSED = ("right", "left", "both", "neither")
# A LIME explanation's keys, those it needs and those with defaults, and the feature
# selections it may name ("" for one made by hand).
_LIME_REQUIRED = (
    "features", "weights", "selected", "intercept", "score", "prediction",
    "class_probability", "local_prediction",
)  # fmt: skip
_LIME_OPTIONAL = (
    "version", "kernel_width", "feature_selection", "n_samples", "n_model_calls",
    "n_rows_predicted", "wall_time",
)  # fmt: skip
_SELECTIONS = ("", "forward_selection", "highest_weights", "lasso_path", "none")


def shown(value):
    """A value as an error message quotes it (at most 60 characters)."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deeply; an integer of 4,300+ digits
        return f"<{type(value).__name__} too large to show>"
    return text if len(text) <= 60 else text[:57] + "..."


def _float(value):
    """``float(value)`` of a real number, infinite where it is too large for a float."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def parse_json(text, what):
    """``json.loads(text)``, with every failure a ValueError that says what ``text`` should be.

    ``NaN``, ``Infinity`` and ``-Infinity`` (and numbers too large for a float, ``1e999``) are
    read as floats: the readers of the fields refuse them wherever they make no sense, with
    the field's name (``to_json`` writes a missing number as ``null``, never ``NaN``; only a
    predicate's value, a bound of the rule, may be infinite)."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise ValueError(
            f"text must be the JSON of {what}, a str or bytes, got {type(text).__name__}."
        )
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"text must be the JSON of {what}: it nests too deeply.") from None
    except ValueError as error:  # (json.JSONDecodeError, UnicodeDecodeError, int digit limits)
        raise ValueError(f"text must be the JSON of {what}: {error}.") from None


def variant(base, cls, data):
    """For ``base.from_dict`` (``cls`` is the class it was called on): the subclass of
    ``base`` whose ``_dict_key`` is a key of ``data`` (an image's explanation carries its
    ``"segments"``), so that the base class rebuilds it as what it was; else None."""
    if cls is not base:
        return None
    for sub in base.__subclasses__():
        if sub._dict_key is not None and sub._dict_key in data:
            return sub
    return None


def check_keys(data, where, required, optional=(), what="an object"):
    """Check that ``data`` is a dict with all the ``required`` keys and no others than
    ``required`` and ``optional`` (``what`` names what it should be)."""
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be {what} (a dict), got {type(data).__name__}.")
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(
            f"{where} is not {what}: it lacks {missing} (it has {sorted(map(str, data))[:10]})."
        )
    unknown = [k for k in data if k not in required and k not in optional]
    if unknown:
        raise ValueError(
            f"{where} has unknown keys {sorted(map(str, unknown))[:10]}: {what} has only "
            f"{[*required, *optional]}."
        )


def check_version(data, where, version, what):
    """The ``"version"`` of a format: absent (written before formats had one, the same
    fields) or exactly ``version``."""
    found = data.get("version", version)
    if isinstance(found, bool) or not isinstance(found, Integral):
        raise ValueError(f"{where}['version'] must be an integer, got {shown(found)}.")
    if found != version:
        raise ValueError(
            f"{where}['version'] is {found}: {what} written in format {found}; this skanchors "
            f"reads format {version} (a newer skanchors wrote it, or it is not {what})."
        )


def real(value, where, low=-math.inf, high=math.inf, *, closed="both", missing=False):
    """A finite float from ``low`` to ``high`` (``closed``: which ends belong to the range);
    ``None`` is NaN (a missing estimate) when ``missing``."""
    if value is None and missing:
        return math.nan
    expected = "a finite number"
    if math.isfinite(low) or math.isfinite(high):
        left = "[" if closed in ("both", "left") else "("
        right = "]" if closed in ("both", "right") else ")"
        expected += f" in {left}{low}, {high}{right}"
    if missing:
        expected += " or null"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{where} must be {expected}, got {shown(value)}.")
    value = _float(value)
    ok = (value >= low if closed in ("both", "left") else value > low) and (
        value <= high if closed in ("both", "right") else value < high
    )
    if not (ok and math.isfinite(value)):
        null = " (a missing number is written null)" if missing and math.isnan(value) else ""
        raise ValueError(f"{where} must be {expected}, got {shown(value)}{null}.")
    return value


def count(value, where, high=_COUNT_HIGH, what="a non-negative integer"):
    """A non-negative integer below ``high`` (a float that is an integer, ``5.0``, is one;
    ``true`` is not)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, Integral) or not 0 <= value < high:
        raise ValueError(f"{where} must be {what}, got {shown(value)}.")
    return int(value)


def index(value, where, n, of):
    """A position in a sequence of ``n`` items (``of`` names it)."""
    if n == 0:
        raise ValueError(f"{where} must be a position in {of}, which is empty; got {shown(value)}.")
    return count(value, where, high=n, what=f"a position in {of} (0 to {n - 1})")


def text(value, where, *, empty=True):
    """A string (non-empty unless ``empty``)."""
    if not isinstance(value, str) or not (empty or value):
        raise ValueError(
            f"{where} must be a{'' if empty else ' non-empty'} string, got {shown(value)}."
        )
    return value


def sequence(value, where, what="a list"):
    """A JSON array (a list or tuple)."""
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{where} must be {what}, got {shown(value)}.")
    return value


def _number(value, where, infinite):
    """A number of a value (not a bool); infinite ones when ``infinite``, never NaN."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{where} must be a number, got {shown(value)}.")
    if isinstance(value, Integral):
        if not _INT_LOW <= value < _INT_HIGH:
            raise ValueError(f"{where} must be an integer of 64 bits, got {shown(value)}.")
        return int(value)
    value = _float(value)
    if math.isnan(value) or (math.isinf(value) and not infinite):
        finite = "" if infinite else " finite"
        raise ValueError(f"{where} must be a{finite} number (not NaN), got {shown(value)}.")
    return value


def label(value, where, *, infinite=False, depth=0):
    """A class label, column name or compared value as ``_plain`` wrote it: a string, a bool,
    a number (no NaN: a missing value is ``null``; infinite only when ``infinite``), ``None``,
    or a tagged interval, Decimal or tuple, turned back."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, Real):
        return _number(value, where, infinite)
    if isinstance(value, dict):
        keys = set(value)
        if keys == {"interval", "closed"}:
            return interval(value, where)
        if keys == {"decimal"}:
            digits = text(value["decimal"], f"{where}['decimal']")
            try:
                number = decimal.Decimal(digits)
            except (decimal.InvalidOperation, ValueError):
                number = None
            if number is None or not number.is_finite():
                raise ValueError(
                    f"{where}['decimal'] must be a finite decimal number, got {shown(digits)}."
                )
            return number
        if keys == {"tuple"}:
            if depth >= _MAX_DEPTH:
                raise ValueError(f"{where} nests tuples more than {_MAX_DEPTH} deep.")
            items = sequence(value["tuple"], f"{where}['tuple']")
            return tuple(
                label(v, f"{where}['tuple'][{i}]", infinite=infinite, depth=depth + 1)
                for i, v in enumerate(items)
            )
    raise ValueError(
        f"{where} must be a string, a number, true, false, null or a tagged interval, decimal "
        f"or tuple, got {shown(value)}."
    )


def interval(value, where):
    """A :class:`pandas.Interval` from ``{"interval": [left, right], "closed": ...}``."""
    ends = sequence(value["interval"], f"{where}['interval']", "a list [left, right]")
    if len(ends) != 2:
        raise ValueError(f"{where}['interval'] must be a list [left, right], got {shown(ends)}.")
    left, right = (_number(v, f"{where}['interval'][{i}]", True) for i, v in enumerate(ends))
    if not left <= right:
        raise ValueError(f"{where}['interval'] must have left <= right, got {shown(list(ends))}.")
    closed = value["closed"]
    if closed not in _CLOSED:
        raise ValueError(f"{where}['closed'] must be one of {_CLOSED}, got {shown(closed)}.")
    return pd.Interval(left, right, closed=closed)


def predicate(data, where, ops):
    """The fields of a :class:`~skanchors.Predicate` from its ``to_dict`` form, checked as the
    predicate's op needs them: ``"<="`` and ``">"`` a number (possibly infinite), ``"in"`` a
    right-closed interval, ``"isna"`` null, ``"contains"`` (a word) the word itself as feature
    and value; a position is null or a non-negative integer."""
    check_keys(data, where, ("feature", "op"), ("value", "position"), "a predicate")
    op = data["op"]
    if not isinstance(op, str) or op not in ops:
        raise ValueError(f"{where}['op'] must be one of {ops}, got {shown(op)}.")
    feature = label(data["feature"], f"{where}['feature']")
    value = data.get("value")
    at = f"{where}['value']"
    if op in ("<=", ">"):
        value = _number(value, at, infinite=True)
    elif op == "isna":
        if value is not None:
            raise ValueError(f"{at} must be null for op 'isna', got {shown(value)}.")
    elif op == "in":
        value = label(value, at, infinite=True)
        if not isinstance(value, pd.Interval) or value.closed != "right":
            raise ValueError(
                f"{at} must be a right-closed interval for op 'in' ({{'interval': [low, "
                f"high], 'closed': 'right'}}), got {shown(data.get('value'))}."
            )
    elif op == "kept":
        if value is not None:
            raise ValueError(f"{at} must be null for op 'kept', got {shown(value)}.")
        feature = count(data["feature"], f"{where}['feature']", what="a superpixel's label")
    elif op == "contains":
        value = text(value, at, empty=False)
        if feature != value:
            raise ValueError(
                f"{where}['feature'] must be the word itself for op 'contains' "
                f"({shown(value)}), got {shown(feature)}."
            )
    else:
        value = label(value, at, infinite=True)
    position = data.get("position")
    if position is not None:
        position = count(position, f"{where}['position']")
    return {"feature": feature, "op": op, "value": value, "position": position}


def lime_fields(data, make_predicate):
    """The fields of a :class:`~skanchors.LimeExplanation` from its ``to_dict`` form, checked
    (see :meth:`~skanchors.LimeExplanation.from_dict`); ``make_predicate(form, where)``
    builds a predicate from its form."""
    if not isinstance(data, dict):
        raise ValueError(
            f"data must be a dict from LimeExplanation.to_dict, got {type(data).__name__}."
        )
    check_version(data, "data", 1, "a LIME explanation")
    check_keys(data, "data", _LIME_REQUIRED, _LIME_OPTIONAL, "a LIME explanation")
    features = []
    for i, preds in enumerate(sequence(data["features"], "data['features']")):
        at = f"data['features'][{i}]"
        if not sequence(preds, at, "a non-empty list of predicates"):
            raise ValueError(f"{at} must be a non-empty list of predicates, got [].")
        features.append(tuple(make_predicate(p, f"{at}[{j}]") for j, p in enumerate(preds)))
    if len({p.op == "contains" for preds in features for p in preds}) > 1:
        raise ValueError(
            "data['features'] mixes words (op 'contains') with columns: an explanation "
            "is of a document or of a row."
        )
    weights = sequence(data["weights"], "data['weights']")
    if len(weights) != len(features):
        raise ValueError(
            f"data['weights'] must hold one weight per feature ({len(features)}), got "
            f"{len(weights)}."
        )
    weights = [real(w, f"data['weights'][{j}]") for j, w in enumerate(weights)]
    selected = tuple(
        index(j, f"data['selected'][{k}]", len(features), "data['features']")
        for k, j in enumerate(sequence(data["selected"], "data['selected']"))
    )
    if len(set(selected)) != len(selected):
        raise ValueError(f"data['selected'] must not repeat a feature, got {list(selected)}.")
    left_out = [j for j, w in enumerate(weights) if w != 0 and j not in set(selected)]
    if left_out:
        raise ValueError(f"data['weights'][{left_out[0]}] must be 0: the feature is not selected.")
    prediction = label(data["prediction"], "data['prediction']")
    if prediction is None:
        raise ValueError("data['prediction'] must be a class label, got None.")
    width = data.get("kernel_width")
    if isinstance(width, float) and math.isnan(width):  # (to_dict writes NaN as it is)
        width = None
    selection = data.get("feature_selection", "")
    if not isinstance(selection, str) or selection not in _SELECTIONS:
        raise ValueError(
            f"data['feature_selection'] must be one of {_SELECTIONS}, got {shown(selection)}."
        )
    return dict(
        features=tuple(features),
        weights=np.asarray(weights, dtype=float),
        selected=selected,
        intercept=real(data["intercept"], "data['intercept']"),
        score=real(data["score"], "data['score']", high=1.0),
        prediction=prediction,
        class_probability=real(data["class_probability"], "data['class_probability']"),
        local_prediction=real(data["local_prediction"], "data['local_prediction']"),
        kernel_width=real(
            width, "data['kernel_width']", 0, math.inf, closed="neither", missing=True
        ),
        feature_selection=selection,
        n_samples=count(data.get("n_samples", 0), "data['n_samples']"),
        n_model_calls=count(data.get("n_model_calls", 0), "data['n_model_calls']"),
        n_rows_predicted=count(data.get("n_rows_predicted", 0), "data['n_rows_predicted']"),
        wall_time=real(data.get("wall_time", 0.0), "data['wall_time']", 0),
    )
