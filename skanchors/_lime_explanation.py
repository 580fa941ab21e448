"""LimeExplanation: the result of one LIME explanation (:class:`~skanchors.LimeExplainer`).

The surrogate's weights over the interpretable features, how to read them (names, ranked list,
map by position), compare them, display them (text, HTML, matplotlib bars) and serialise them
(a JSON-safe dict, checked field by field when read back).
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _serial
from ._explanation import _number, _plain, _predicate, _scalar, _unserialisable, plain_text
from .discretizers import format_value

__all__ = ["LimeExplanation"]


def _component_name(preds):
    """Readable name of one interpretable feature (a tuple of predicates of one feature)."""
    if len(preds) == 1:
        return str(preds[0])
    lo = [p for p in preds if p.op == ">"]
    hi = [p for p in preds if p.op == "<="]
    if len(lo) + len(hi) == len(preds):
        # a numeric column's bin: its tightest bound on each side (with bounds="all" the
        # column has the bound the row satisfies at every edge; the others are implied)
        lo = max(lo, key=lambda p: p.value, default=None)
        hi = min(hi, key=lambda p: p.value, default=None)
        if lo is not None and hi is not None:
            return f"{format_value(lo.value)} < {lo.name} <= {format_value(hi.value)}"
        return str(lo if hi is None else hi)
    return " AND ".join(str(p) for p in preds)


@dataclass(eq=False)
class LimeExplanation:
    """A local linear explanation of one prediction.

    The surrogate is ``g(z') = intercept + sum_j weights[j] * z'_j`` over the binary
    interpretable features (``z'_j = 1``: feature ``j`` of the explained instance is present),
    fitted to the model's probability of class ``prediction`` around the instance.

    Attributes
    ----------
    features : tuple of tuple of Predicate
        The interpretable features: for tables, the predicates of one column (its value lies
        in the instance's bin); for text, one word at its position.
    weights : ndarray of float, shape (n_interpretable_features,)
        Coefficients of the surrogate; 0 for the features the selection left out.
    selected : tuple of int
        Indices into ``features`` chosen by the feature selection, in the order chosen.
    intercept : float
    score : float
        Weighted R^2 of the surrogate on the perturbations (local fidelity).
    prediction : object
        The class whose probability is explained (a label of the model).
    class_probability : float
        The model's probability of ``prediction`` for the instance.
    local_prediction : float
        The surrogate's prediction at the instance (all features present).
    kernel_width : float
    feature_selection : str
        The method that chose the features (``"auto"`` resolved).
    n_samples : int
        Perturbations the surrogate was fitted on (the instance excluded).
    n_model_calls, n_rows_predicted : int
        True number of model calls and of rows predicted for this explanation.
    wall_time : float
        Seconds spent.
    instance : object
        The explained row or document (not serialised).

    Examples
    --------
    >>> from skanchors._explanation import Predicate
    >>> exp = LimeExplanation(
    ...     features=((Predicate("nice", "contains", "nice", 4),),
    ...               (Predicate("very", "contains", "very", 3),)),
    ...     weights=np.array([0.5, 0.2]), selected=(0, 1), intercept=0.1, score=0.9,
    ...     prediction="good", class_probability=0.8, local_prediction=0.8)
    >>> exp.as_list()
    [('nice', 0.5), ('very', 0.2)]
    >>> LimeExplanation.from_json(exp.to_json()).as_map()
    {4: 0.5, 3: 0.2}
    """

    features: tuple
    weights: np.ndarray
    selected: tuple
    intercept: float
    score: float
    prediction: Any
    class_probability: float
    local_prediction: float
    kernel_width: float = float("nan")
    feature_selection: str = ""
    n_samples: int = 0
    n_model_calls: int = 0
    n_rows_predicted: int = 0
    wall_time: float = 0.0
    instance: Any = None

    # The key a subclass's to_dict adds (ImageLimeExplanation: "segments"), by which
    # LimeExplanation.from_dict rebuilds it as that subclass (a class attribute, not a field).
    _dict_key = None

    # ----------------------------------------------------------------- comparing
    def _identity(self):
        numbers = (
            self.intercept, self.score, self.class_probability, self.local_prediction,
            self.kernel_width,
        )  # fmt: skip
        return (
            tuple(self.features),
            tuple(_number(w) for w in np.asarray(self.weights, dtype=float).tolist()),
            tuple(int(j) for j in self.selected),
            _scalar(self.prediction),
            tuple(_number(x) for x in numbers),  # NaN as None, so NaN equals NaN
            self.feature_selection,
            int(self.n_samples),
        )

    def __eq__(self, other):
        """Equal explanations: the same features, weights, selection and numbers (the cost,
        wall time and instance aside), so that ``==``, ``in`` and ``list.index`` work."""
        if not isinstance(other, LimeExplanation):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self):
        return hash(self._identity()[:3])

    # ----------------------------------------------------------------- reading it
    @property
    def feature_names(self):
        """Readable name of each interpretable feature.

        Text: the word; a word that occurs more than once in the document is suffixed with its
        position (``"the[3]"``) so that names are unique.
        """
        names = [_component_name(preds) for preds in self.features]
        counts = {}
        for n in names:
            counts[n] = counts.get(n, 0) + 1
        out = []
        for name, preds in zip(names, self.features):
            if counts[name] > 1 and preds[0].op == "contains" and preds[0].position is not None:
                name = f"{name}[{preds[0].position}]"
            out.append(name)
        return out

    def _ranked(self):
        sel = np.asarray(self.selected, dtype=np.intp)
        w = np.asarray(self.weights, dtype=float)[sel]
        return sel[np.argsort(-np.abs(w), kind="stable")]

    def as_list(self):
        """``[(name, weight), ...]`` of the selected features, by decreasing ``|weight|``."""
        names = self.feature_names
        return [(names[j], float(self.weights[j])) for j in self._ranked()]

    def as_map(self):
        """``{position: weight}`` of the selected features, by decreasing ``|weight|``.

        The position is the column index (tables) or the word index in the document (text).
        """
        out = {}
        for j in self._ranked():
            pos = self.features[j][0].position
            key = j if pos is None else int(pos)
            out[key] = out.get(key, 0.0) + float(self.weights[j])
        return out

    def __str__(self):
        head = (
            f"LIME: P({self.prediction}) = {self.class_probability:.3f}, local model "
            f"{self.local_prediction:.3f} (R^2 {self.score:.2f}, intercept {self.intercept:+.3f})"
        )
        lines = [f"  {w:+.4f}  {name}" for name, w in self.as_list()]
        return "\n".join([head, *lines])

    def __repr__(self):
        terms = ", ".join(f"{name}: {w:+.3f}" for name, w in self.as_list()[:5])
        more = "" if len(self.selected) <= 5 else ", ..."
        return f"<LimeExplanation P({self.prediction})={self.class_probability:.3f} {terms}{more}>"

    # ----------------------------------------------------------------- serialisation
    def to_dict(self):
        """Plain-Python dict (JSON-safe) with everything but the instance."""
        width = float(self.kernel_width)
        return {
            "version": 1,
            "features": [
                [{k: _plain(v) for k, v in vars(p).items()} for p in preds]
                for preds in self.features
            ],
            "weights": [float(w) for w in self.weights],
            "selected": [int(j) for j in self.selected],
            "intercept": float(self.intercept),
            "score": float(self.score),
            "prediction": _plain(self.prediction),
            "class_probability": float(self.class_probability),
            "local_prediction": float(self.local_prediction),
            "kernel_width": width if math.isfinite(width) else None,  # strict JSON: no NaN
            "feature_selection": str(self.feature_selection),
            "n_samples": int(self.n_samples),
            "n_model_calls": int(self.n_model_calls),
            "n_rows_predicted": int(self.n_rows_predicted),
            "wall_time": float(self.wall_time),
        }

    def to_json(self, **kwargs):
        """JSON string of :meth:`to_dict`; keyword arguments go to :func:`json.dumps`."""
        kwargs.setdefault("default", _unserialisable)
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data):
        """Rebuild an explanation from :meth:`to_dict` output (the instance is not kept).

        Every field is checked, as :meth:`Anchor.from_dict <skanchors.Anchor.from_dict>`
        checks an anchor's, and anything else raises a ``ValueError`` that names the field:
        the features are non-empty lists of well-formed predicates (words or columns, not
        both); one finite weight per feature, 0 for those not ``selected``; ``selected``
        holds distinct positions among the features; intercept, local prediction and class
        probability are finite numbers, ``score`` (an R^2) a finite number at most 1;
        ``kernel_width`` is a positive number, or NaN or null when unknown;
        ``feature_selection`` is the method that ran (or ``""``); counts are non-negative
        integers and ``wall_time`` a non-negative number; ``"version"``, when present, is 1;
        no key is unknown.
        """
        variant = _serial.variant(LimeExplanation, cls, data) if isinstance(data, dict) else None
        if variant is not None:  # (an image's explanation: ImageLimeExplanation)
            return variant.from_dict(data)
        return cls(**_serial.lime_fields(data, _predicate))

    @classmethod
    def from_json(cls, text):
        """Rebuild an explanation from :meth:`to_json` output, checked as :meth:`from_dict`
        checks it; text that is not JSON raises ``ValueError`` too."""
        return cls.from_dict(_serial.parse_json(text, "LimeExplanation.to_json"))

    # ------------------------------------------------------------------- display
    def _repr_html_(self):
        esc = html.escape
        items = self.as_list()
        scale = max((abs(w) for _, w in items), default=1.0) or 1.0
        rows = []
        for name, w in items:
            width = int(round(100 * abs(w) / scale))
            color = "#2a7ab0" if w > 0 else "#c0392b"
            rows.append(
                f"<tr><td><code>{esc(name)}</code></td><td>{w:+.4f}</td><td style='width:12em'>"
                f"<div style='background:{color};height:0.8em;width:{width}%'></div></td></tr>"
            )
        return (
            "<div class='skanchors-lime'>"
            f"<p>P(<code>{esc(str(self.prediction))}</code>) = "
            f"<strong>{self.class_probability:.3f}</strong>; local model "
            f"{self.local_prediction:.3f}, weighted R<sup>2</sup> {self.score:.3f}, intercept "
            f"{self.intercept:+.3f} ({self.n_samples} samples, {self.n_model_calls} model "
            f"calls, {self.wall_time:.3f} s)</p>"
            "<table><thead><tr><th>feature</th><th>weight</th><th></th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )

    def plot(self, ax=None):
        """Horizontal bars of the selected features' weights (positive: towards the class).

        Requires matplotlib (``pip install skanchors[plot]``). Returns the Axes.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "LimeExplanation.plot needs matplotlib: pip install 'skanchors[plot]'."
            ) from exc
        items = self.as_list()
        if ax is None:
            # constrained layout keeps the feature names, axis label and title inside the
            # saved figure
            height = 1.6 + 0.4 * max(len(items), 1)
            _, ax = plt.subplots(figsize=(7, height), layout="constrained")
        labels = [name for name, _ in items]
        values = [w for _, w in items]
        y = np.arange(len(items))
        ax.barh(y, values, color=["#2a7ab0" if v > 0 else "#c0392b" for v in values])
        ax.axvline(0, color="k", linewidth=0.8)
        ax.set_yticks(y, [plain_text(label) for label in labels])
        ax.invert_yaxis()
        ax.set_xlabel(plain_text(f"weight on P({self.prediction})"))
        ax.set_title(
            plain_text(
                f"P({self.prediction}) = {self.class_probability:.2f}, R^2 = {self.score:.2f}"
            )
        )
        return ax
