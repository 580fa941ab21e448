"""Model selection by explanations: compare candidate models by what they rely on.

Two models can score alike on a validation split and still decide for different reasons, one of
them for a bad one: an e-mail header, a watermark, an identifier that happens to encode the
label. When the artefact is in the validation split too, accuracy prefers the model that uses
it. :func:`compare_models` explains every candidate on the same rows, with the same
perturbations, and puts side by side what each relies on: the features (words) its anchors
use per class, its reliance on features you suspect, and the rows the models predict
differently, with each model's anchor.
"""

from __future__ import annotations

import html
import json
import time
from collections import Counter
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils import check_random_state

from ._base import _check_reference_data, is_text
from ._pick import pick
from ._reliance import (
    _check_data,
    _check_explainer,
    _check_n_rows,
    check_features,
    explain_rows,
    explainable,
    feature_names,
    reliance_of,
    relies,
    sample_rows,
)
from ._serial import shown as _serial_shown
from ._validation import check_model
from .explainer import _is_regressor
from .models import as_probability_model

__all__ = ["ModelComparison", "compare_models"]

_FORMAT_VERSION = 1


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _check_models(models):
    """``{name: model}`` from a dict or a list (named by position), each a fitted classifier."""
    if isinstance(models, dict):
        named = dict(models)
    elif isinstance(models, (list, tuple)):
        named = dict(enumerate(models))
    else:
        raise ValueError(
            "models must be a dict {name: fitted model} or a list of fitted models, got "
            f"{type(models).__name__}."
        )
    if not named:
        raise ValueError("models is empty: give at least one fitted model to explain.")
    seen = {}
    for name in named:  # (names become columns, "<name> prediction", and JSON keys)
        if str(name) in seen:
            raise ValueError(
                f"models: the names {seen[str(name)]!r} and {name!r} are the same as text; "
                "give the models distinct names."
            )
        seen[str(name)] = name
    for name, model in named.items():
        if model is None:
            raise ValueError(f"models[{name!r}] is None, not a fitted model.")
        check_model(model, f"models[{name!r}]", "compare_models")
        if _is_regressor(model):
            raise ValueError(
                f"models[{name!r}] is a regressor ({type(model).__name__}); compare_models "
                "compares classifiers (their anchors per predicted class)."
            )
        if not (callable(model) or hasattr(model, "predict_proba") or hasattr(model, "predict")):
            raise ValueError(
                f"models[{name!r}] is a {type(model).__name__}, not a fitted classifier "
                "(predict_proba, or predict and classes_) or a callable."
            )
    return named


def _predict(model, data):
    """``(labels, classes)``: the model's predicted class of every row, and its classes."""
    wrapped = as_probability_model(model, labels_only=True)
    proba = wrapped.predict_proba(data)
    classes = np.asarray(wrapped.classes_)
    return classes[np.asarray(proba).argmax(axis=1)], classes


class ModelComparison:
    """What :func:`compare_models` found: each model's anchors on the same rows, side by side.

    Attributes
    ----------
    names_ : list
        The models' names (a list of models is named by position: 0, 1, ...).
    kind : {"table", "text"}
    classes_ : ndarray
        The models' classes (the same for every model, in the first model's order).
    rows_ : ndarray of int
        Positions in ``X`` of the explained sample, on which :meth:`reliance` and
        ``top_features_`` are measured.
    anchors_ : dict
        ``{name: [Anchor, ...]}``, one per row of ``rows_``, in that order.
    top_features_ : dict
        ``{name: {class: [(feature or word, score), ...]}}``, best first, at most ``k`` per
        class. Tables: the features ranked by the share of the class's anchors (rows of the
        sample with an anchor predicting the class) that use them, ties in column order.
        Text: the top words of :class:`~skanchors.GlobalAnchorAggregator` over all documents
        of ``X`` (its score, ``G_pr`` by default).
    picks_ : dict
        ``{name: SubmodularPick or None}``: ``k`` of the model's anchors that together cover the
        most rows (documents) of ``X`` (:func:`~skanchors.pick`), with their precision on
        ``X``; None when no row of the sample got an anchor.
    predictions_ : dict
        ``{name: ndarray}``: the predicted class of every row of ``X``.
    accuracy_ : dict or None
        ``{name: accuracy on X}`` when ``y`` was given.
    disagreements_ : pandas.DataFrame
        The explained rows of ``X`` that the models predict differently (index: position in
        ``X``): those of the sample and up to ``n_disagreements`` more, with each model's
        prediction (column ``"<name> prediction"``) and anchor (``"<name> anchor"``, its
        conditions as text, marked ``[not an anchor]`` when no rule reached the threshold).
    n_disagreements_ : int
        Rows of all of ``X`` that the models predict differently.
    disagreement_anchors_ : dict
        ``{name: {row: Anchor}}`` for the explained rows of ``disagreements_``.
    explainers_ : dict
        ``{name: fitted AnchorExplainer}``, to explain more rows the same way.
    aggregators_ : dict or None
        Text: ``{name: fitted GlobalAnchorAggregator}``.
    random_state_ : int
        The seed every model was explained with.
    seconds_ : dict
        ``{name: seconds}`` spent explaining each model (fit, anchors, aggregation, pick).
    n_rows_ : int
        Rows (documents) in ``X``.
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    # ------------------------------------------------------------------ questions
    def reliance(self, features, *, by_class=False):
        """The share of the explained rows whose anchor uses any of ``features``.

        Parameters
        ----------
        features : str, int or list
            Tables: columns of ``X`` (for an array, ``x0, x1, ...`` or positions). Text:
            words, compared lowercased, that occur in the documents of ``X``.
        by_class : bool, default=False
            Also split by the class each model predicts: the share among the sampled rows the
            model predicts that class (NaN for a class it never predicts there).

        Returns
        -------
        reliance : dict
            ``{name: share}``, or with ``by_class`` ``{name: {class: share}}``.

        Notes
        -----
        A row relies on the features when its anchor names one of them and the rule without
        them does not hold: its precision on 1,000 fresh perturbations is confidently below the
        threshold (the KL upper confidence bound at the explainer's ``delta``). An anchor can
        carry a predicate the model does not read (a long rule of a hard row picks one up among
        candidates of equal precision): that is not reliance. A row without an anchor (no rule
        reached the threshold) counts as not relying on anything; :meth:`summary` gives the
        share of rows with an anchor. The check uses the comparison's seed: the same call
        gives the same answer.
        """
        text = self.kind == "text"
        wanted = check_features(features, self._data, text)
        out = {}
        for name in self.names_:
            key = (name, wanted)
            if key not in self._relies:  # (the check of a rule without the features is random)
                self._relies[key] = np.array(
                    relies(self.anchors_[name], wanted, text, self.explainers_[name], self._seed)
                )
            hits = self._relies[key]
            if not by_class:
                out[name] = reliance_of(hits)
                continue
            predicted = np.array([_plain(a.prediction) for a in self.anchors_[name]], dtype=object)
            out[name] = {
                _plain(c): reliance_of(hits[predicted == _plain(c)]) for c in self.classes_
            }
        return out

    def summary(self):
        """One row per model: accuracy (with ``y``), rows explained, the share of them with an
        anchor, the anchors' mean length and precision, the rows of ``X`` the models predict
        differently, seconds."""
        out = []
        for name in self.names_:
            anchors = self.anchors_[name]
            found = [a for a in anchors if a.is_anchor]
            row = {"model": str(name)}
            if self.accuracy_ is not None:
                row["accuracy"] = self.accuracy_[name]
            row.update(
                rows_explained=len(anchors),
                with_anchor=len(found) / len(anchors) if anchors else float("nan"),
                mean_length=float(np.mean([len(a) for a in found])) if found else float("nan"),
                mean_precision=(
                    float(np.mean([a.precision for a in found])) if found else float("nan")
                ),
                disagreements=self.n_disagreements_,
                seconds=self.seconds_[name],
            )
            out.append(row)
        return pd.DataFrame(out).set_index("model")

    def to_frame(self):
        """The top features per class, one row per (model, class, rank): columns ``model``,
        ``class``, ``rank``, ``feature`` and ``score``."""
        records = [
            {"model": str(name), "class": c, "rank": rank, "feature": f, "score": s}
            for name in self.names_
            for c, terms in self.top_features_[name].items()
            for rank, (f, s) in enumerate(terms, 1)
        ]
        return pd.DataFrame(records, columns=["model", "class", "rank", "feature", "score"])

    # ------------------------------------------------------------------ export
    def to_dict(self):
        """The comparison as plain data (str, numbers, lists, dicts): JSON-ready."""

        def number(x):
            x = float(x)
            return x if np.isfinite(x) else None

        def key(c):
            return str(_plain(c))

        dis = []
        for row, values in self.disagreements_.iterrows():
            entry = {"row": int(row), "predictions": {}, "anchors": {}}
            for name in self.names_:
                entry["predictions"][str(name)] = _plain(values[f"{name} prediction"])
                anchor = self.disagreement_anchors_[name].get(int(row))
                entry["anchors"][str(name)] = None if anchor is None else anchor.to_dict()
            dis.append(entry)
        return {
            "version": _FORMAT_VERSION,
            "kind": self.kind,
            "models": [str(n) for n in self.names_],
            "classes": [_plain(c) for c in self.classes_],
            "random_state": self.random_state_,
            "n_rows": self.n_rows_,
            "rows": [int(r) for r in self.rows_],
            "accuracy": (
                None
                if self.accuracy_ is None
                else {str(n): number(a) for n, a in self.accuracy_.items()}
            ),
            "summary": json.loads(self.summary().to_json(orient="index")),
            "top_features": {
                str(n): {
                    key(c): [[_plain(f), number(s)] for f, s in terms]
                    for c, terms in self.top_features_[n].items()
                }
                for n in self.names_
            },
            "picks": {
                str(n): None
                if p is None
                else {
                    "rows": [int(self.rows_[i]) for i in p.indices_],
                    "coverage_curve": [number(c) for c in p.coverage_curve],
                    "precision": [number(c) for c in p.precision],
                }
                for n, p in self.picks_.items()
            },
            "anchors": {str(n): [a.to_dict() for a in self.anchors_[n]] for n in self.names_},
            "n_disagreements": int(self.n_disagreements_),
            "disagreements": dis,
            "seconds": {str(n): number(s) for n, s in self.seconds_.items()},
        }

    def to_json(self, **kwargs):
        """:meth:`to_dict` as strict JSON (keyword arguments go to :func:`json.dumps`)."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    # ------------------------------------------------------------------ display
    def __repr__(self):
        names = ", ".join(map(str, self.names_))
        return (
            f"<ModelComparison of {len(self.names_)} models ({names}) on {len(self.rows_)} "
            f"explained {'documents' if self.kind == 'text' else 'rows'}>"
        )

    def __str__(self):
        lines = [repr(self), "", self.summary().to_string(float_format=lambda x: f"{x:.3f}")]
        for c in self.classes_:
            lines.append(f"\ntop {'words' if self.kind == 'text' else 'features'} of class {c}:")
            for name in self.names_:
                terms = self.top_features_[name].get(_plain(c), [])
                listed = ", ".join(f"{f} ({s:.3g})" for f, s in terms) or "(none)"
                lines.append(f"  {name}: {listed}")
        if self.n_disagreements_:
            lines.append(
                f"\n{self.n_disagreements_} rows predicted differently; "
                f"{len(self.disagreements_)} of them explained (disagreements_)"
            )
        return "\n".join(lines)

    def _repr_html_(self, max_disagreements=20):
        esc = html.escape
        what = "words" if self.kind == "text" else "features"
        parts = [
            "<div class='skanchors-comparison'>",
            f"<p>{esc(repr(self))}</p>",
            self.summary().to_html(float_format=lambda x: f"{x:.3f}", escape=True),
            f"<p>Top {what} per class</p><table><thead><tr><th>class</th>",
        ]
        parts += [f"<th>{esc(str(n))}</th>" for n in self.names_]
        parts.append("</tr></thead><tbody>")
        for c in self.classes_:
            parts.append(f"<tr><th>{esc(str(c))}</th>")
            for name in self.names_:
                terms = self.top_features_[name].get(_plain(c), [])
                rows = "".join(f"<tr><td>{esc(str(f))}</td><td>{s:.3g}</td></tr>" for f, s in terms)
                parts.append(f"<td style='vertical-align:top'><table>{rows}</table></td>")
            parts.append("</tr>")
        parts.append("</tbody></table>")
        if len(self.disagreements_):
            shown = self.disagreements_.head(max_disagreements)
            parts.append(
                f"<p>{self.n_disagreements_} rows predicted differently; {len(shown)} of the "
                f"{len(self.disagreements_)} explained:</p>"
            )
            parts.append(shown.to_html(escape=True, na_rep=""))
        parts.append("</div>")
        return "".join(parts)

    def to_html(self, *, title="Model comparison", features=None):
        """A self-contained HTML page (no script, no external file): the summary, the reliance
        on ``features`` (when given, by class too), bar charts of the top features of each
        class side by side (inline SVG) and the rows the models predict differently."""
        esc = html.escape
        what = "words" if self.kind == "text" else "features"
        parts = [
            "<!DOCTYPE html><html><head><meta charset='utf-8'>",
            f"<title>{esc(title)}</title><style>body{{font-family:sans-serif}}"
            "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}</style>"
            "</head><body>",
            f"<h1>{esc(title)}</h1><p>{esc(repr(self))}; seed {self.random_state_}</p>",
            "<h2>Summary</h2>",
            self.summary().to_html(float_format=lambda x: f"{x:.3f}", escape=True),
        ]
        if features is not None:
            listed = [features] if isinstance(features, (str, int)) else list(features)
            overall, by_class = self.reliance(listed), self.reliance(listed, by_class=True)
            parts.append(
                f"<h2>Reliance on {esc(', '.join(map(str, listed)))}</h2><p>Share of the "
                "explained rows whose anchor needs them.</p><table><tr><th>model</th>"
                "<th>all rows</th>"
                + "".join(f"<th>predicted {esc(str(c))}</th>" for c in self.classes_)
                + "</tr>"
            )
            for name in self.names_:
                cells = "".join(f"<td>{v:.3f}</td>" for v in by_class[name].values())
                parts.append(
                    f"<tr><td>{esc(str(name))}</td><td>{overall[name]:.3f}</td>{cells}</tr>"
                )
            parts.append("</table>")
        parts.append(f"<h2>Top {what} per class</h2><table><tr><th>class</th>")
        parts += [f"<th>{esc(str(n))}</th>" for n in self.names_]
        parts.append("</tr>")
        for c in self.classes_:
            parts.append(f"<tr><th>{esc(str(c))}</th>")
            for name in self.names_:
                terms = self.top_features_[name].get(_plain(c), [])
                parts.append(f"<td style='vertical-align:top'>{_svg_bars(terms)}</td>")
            parts.append("</tr>")
        parts.append("</table>")
        if len(self.disagreements_):
            parts.append(
                f"<h2>Rows predicted differently</h2><p>{self.n_disagreements_} rows of the "
                f"data; the {len(self.disagreements_)} explained, with each model's anchor:</p>"
            )
            parts.append(self.disagreements_.to_html(escape=True, na_rep=""))
        parts.append("</body></html>")
        return "\n".join(parts)

    def plot(self, n=None, *, axes=None):
        """The top features of each class as bars: one column of panels per model, one row per
        class. Requires matplotlib. Tables: the share of the class's anchors that use each
        feature, on one scale (0 to 1) in every panel. Text: the aggregator's scores, each
        panel on its own scale (a score is relative to the other words of its model).

        Parameters
        ----------
        n : int or None, default=None
            Bars per panel (default: all of ``top_features_``).
        axes : array of matplotlib Axes of shape (n_classes, n_models), default=None

        Returns
        -------
        axes : ndarray of Axes, shape (n_classes, n_models)
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("ModelComparison.plot needs matplotlib.") from exc
        classes = [_plain(c) for c in self.classes_]
        shape = (len(classes), len(self.names_))
        if axes is None:
            longest = max(
                [len(t) for tops in self.top_features_.values() for t in tops.values()] + [1]
            )
            bars = longest if n is None else min(n, longest)
            _, axes = plt.subplots(
                *shape,
                figsize=(3.6 * shape[1] + 0.8, (0.28 * bars + 0.9) * shape[0]),
                layout="constrained",
                squeeze=False,
            )
        axes = np.asarray(axes, dtype=object).reshape(shape)
        colours = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0", "C1"])
        for i, c in enumerate(classes):
            for j, name in enumerate(self.names_):
                ax = axes[i, j]
                terms = self.top_features_[name].get(c, [])[:n]
                labels = [str(f) for f, _ in terms][::-1]
                scores = [s if np.isfinite(s) else 0.0 for _, s in terms][::-1]
                ax.barh(range(len(terms)), scores, color=colours[i % len(colours)])
                ax.set_yticks(range(len(terms)), labels, fontsize="small")
                ax.set_title(f"{name}: class {c}", fontsize="medium")
                if not terms:
                    ax.text(0.5, 0.5, "no anchors", ha="center", transform=ax.transAxes)
                if self.kind == "table":  # shares of the class's anchors: one scale for all
                    ax.set_xlim(0, 1)
        what = "score" if self.kind == "text" else "share of the class's anchors"
        for ax in axes[-1]:
            ax.set_xlabel(what, fontsize="small")
        return axes


def _svg_bars(terms):
    """Inline SVG: one horizontal bar per (feature, score), the longest scaled to 300 px."""
    if not terms:
        return "<p>no anchors</p>"
    finite = [s for _, s in terms if np.isfinite(s)]
    top = max(finite) if finite and max(finite) > 0 else 1.0
    out = [f"<svg width='520' height='{22 * len(terms) + 6}' role='img'>"]
    for i, (feature, score) in enumerate(terms):
        width = 300 * (min(score, top) / top if np.isfinite(score) else 1.0)
        y = 22 * i + 3
        out.append(
            f"<text x='150' y='{y + 14}' text-anchor='end' font-size='13'>"
            f"{html.escape(str(feature))}</text><rect x='158' y='{y}' "
            f"width='{max(width, 1):.1f}' height='18' fill='#4c78a8'/>"
            f"<text x='{163 + width:.1f}' y='{y + 14}' font-size='11'>{score:.3g}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def _rule(anchor):
    """An anchor's conditions as text, flagged when no rule reached the threshold."""
    rule = " AND ".join(anchor.conditions()) or "(any input)"
    return rule if anchor.is_anchor else f"{rule} [not an anchor]"


def _top_features(anchors, classes, k, columns):
    """Per class: features ranked by the share of the class's anchors that use them (ties in
    the order of the columns)."""
    order = {f: j for j, f in enumerate(columns)}
    out = {}
    for c in classes:
        found = [a for a in anchors if a.is_anchor and _plain(a.prediction) == c]
        counts = Counter(f for a in found for f in a.features)
        ranked = sorted(counts.items(), key=lambda fc: (-fc[1], order.get(fc[0], len(order))))
        ranked = ranked[:k]
        out[c] = [(_plain(f), n / len(found)) for f, n in ranked]
    return out


def compare_models(
    models,
    X,
    *,
    y=None,
    reference=None,
    n_rows=200,
    n_disagreements=20,
    k=10,
    explainer=None,
    aggregator=None,
    random_state=None,
    n_jobs=None,
):
    """Explain candidate models on the same rows and compare what they rely on.

    Every model is explained with anchors (:class:`~skanchors.AnchorExplainer`) on the same
    sample of rows of ``X``, with the same parameters and the same seed; for documents the
    top words of each class come from a :class:`~skanchors.GlobalAnchorAggregator` over all of
    ``X``. What is shared: the rows and their sample, the reference data (checked once), the
    explainer's parameters and one seed, so that each model's explainer draws the same
    perturbation streams (a rule's ``i``-th sample is the same rows for every model) and two
    models differ by what they predict, not by the samples they were tested on. What cannot be
    shared is not: each model gets its own fitted explainer (fitting it on the reference data
    takes milliseconds, and a tree model attaches its split thresholds to it) and its own
    predictions. With a discretizer cut where the model's predictions change
    (``TreeDiscretizer``) the bins, and so the rules, are each model's own.

    Parameters
    ----------
    models : dict or list
        ``{name: fitted model}``, or a list (named by position: 0, 1, ...). Classifiers with
        ``predict_proba`` (a whole Pipeline on the raw data), classifiers with ``predict`` and
        ``classes_``, or callables, all with the same classes (in any order: ``classes_`` is
        the first model's).
    X : DataFrame, 2-d array or list of str
        The rows or documents to explain, for instance a validation split.
    y : array-like of shape (n_rows,), default=None
        True labels of ``X``: the comparison then reports each model's accuracy on ``X`` beside
        its explanations. Labels none of which is a class of the models (``"1"`` for ``1``)
        are refused.
    reference : DataFrame or 2-d array, default=None
        Tables: the reference data the perturbations are drawn from and coverage is measured
        on (see :meth:`AnchorExplainer.fit`); default ``X``. Not used with documents.
    n_rows : int >= 1 or None, default=200
        Rows of ``X`` explained, at random (with ``random_state``); ``None`` explains all.
        ``top_features_`` of tables, :meth:`~ModelComparison.reliance` and the pick are
        measured on them.
    n_disagreements : int >= 0, default=20
        Rows the models predict differently that are outside the sample are explained as well,
        up to this many (at random), so that ``disagreements_`` shows why.
    k : int >= 1, default=10
        Top features (words) per class, and anchors in the submodular pick. For documents the
        aggregator's ``k`` is set to it.
    explainer : AnchorExplainer or None, default=None
        Its parameters (``threshold``, ``sampler``, ...) are used for every model: a clone of
        it gets the model, the seed and ``n_jobs``. ``None``: the defaults.
    aggregator : GlobalAnchorAggregator or None, default=None
        Documents: likewise for the global aggregation (``k``, the seed and ``n_jobs`` are set
        on the clone). ``None``: the defaults.
    random_state : int, RandomState or None, default=None
        Drawn from once: the one seed of the sample and of every model's explanations.
    n_jobs : int or None, default=None
        Workers of each explainer and aggregator (``None``: theirs).

    Returns
    -------
    comparison : ModelComparison

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.integers(0, 4, 400), "b": rng.integers(0, 4, 400)})
    >>> y = (X["a"] >= 2).astype(int)
    >>> models = {  # one decides by a, the other by b
    ...     "on a": DecisionTreeClassifier(max_depth=1).fit(X, y),
    ...     "on b": DecisionTreeClassifier(max_depth=1).fit(X, (X["b"] >= 2).astype(int)),
    ... }
    >>> result = compare_models(models, X, y=y, n_rows=40, random_state=0)
    >>> result.accuracy_
    {'on a': 1.0, 'on b': 0.4975}
    >>> result.reliance(["a"])
    {'on a': 1.0, 'on b': 0.0}
    >>> result.top_features_["on b"]
    {0: [('b', 1.0)], 1: [('b', 1.0)]}
    """
    named = _check_models(models)
    data, text = _check_data(X, "X")
    n_rows = _check_n_rows(n_rows)
    if not isinstance(n_disagreements, Integral) or isinstance(n_disagreements, bool):
        raise ValueError(f"n_disagreements must be an integer >= 0, got {n_disagreements!r}.")
    if n_disagreements < 0:
        raise ValueError(f"n_disagreements must be an integer >= 0, got {n_disagreements!r}.")
    if not isinstance(k, Integral) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}.")
    template = _check_explainer(explainer)
    if text:
        if reference is not None:
            raise ValueError(
                "reference applies to tables; X holds documents (the text samplers perturb "
                "each document itself). Leave reference=None."
            )
        ref = data
        agg_template = _check_aggregator(aggregator)
    else:
        if aggregator is not None:
            raise ValueError("aggregator applies to documents; X is a table.")
        ref = data if reference is None else _check_reference(reference, data)
    if y is not None:
        y = np.asarray(y).ravel()
        if len(y) != len(data):
            raise ValueError(f"y has {len(y)} labels for {len(data)} rows of X.")
    seed = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    rng = np.random.default_rng(seed)

    # The models' predictions on X: their classes (which must agree), accuracy, disagreements.
    predictions, classes = {}, None
    for name, model in named.items():
        labels, own = _predict(model, data)
        if classes is None:
            classes, first = own, name
        elif len(own) != len(classes) or not np.array_equal(np.sort(own), np.sort(classes)):
            # (the same classes in another order are the same: predictions are labels)
            raise ValueError(
                f"models: all models must have the same classes to be compared; "
                f"models[{first!r}] has {classes.tolist()} and models[{name!r}] has "
                f"{own.tolist()}."
            )
        predictions[name] = labels
    classes_list = [_plain(c) for c in classes]
    accuracy = None
    if y is not None:
        if not np.isin(y, classes).any():  # ("1" for 1: every model would score 0)
            raise ValueError(
                f"y holds none of the models' classes {classes_list}; its labels are "
                f"{_serial_shown(np.unique(y)[:10].tolist())}. Pass the true labels of X."
            )
        accuracy = {name: float(np.mean(p == y)) for name, p in predictions.items()}
    stacked = np.column_stack([predictions[n] for n in named])
    differ = np.flatnonzero((stacked != stacked[:, :1]).any(axis=1))

    candidates = explainable(data) if text else np.arange(len(data))
    if len(candidates) == 0:
        raise ValueError("X has no document with a word: there is nothing to explain.")
    rows = sample_rows(candidates, n_rows, rng)
    extra = np.setdiff1d(np.intersect1d(differ, candidates), rows)
    extra = sample_rows(extra, n_disagreements, rng) if n_disagreements else extra[:0]
    explained = np.concatenate([rows, extra])

    anchors, explainers, aggregators, picks, tops, seconds = {}, {}, {}, {}, {}, {}
    dis_anchors = {}
    for name, model in named.items():
        start = time.perf_counter()
        fitted, found = explain_rows(template, model, ref, data, explained, seed, n_jobs)
        explainers[name] = fitted
        anchors[name] = found[: len(rows)]
        by_row = dict(zip(explained.tolist(), found))
        dis_anchors[name] = {int(r): by_row[int(r)] for r in differ if int(r) in by_row}
        if text:
            params = {"estimator": model, "random_state": seed, "k": k}
            if n_jobs is not None:
                params["n_jobs"] = n_jobs
            agg = clone(agg_template).set_params(**params).fit(data)
            aggregators[name] = agg
            tops[name] = {
                _plain(c): [(w, float(s)) for w, s in agg.top_terms_.get(c, [])]
                for c in agg.classes_
            }
            for c in classes_list:
                tops[name].setdefault(c, [])
        else:
            tops[name] = _top_features(anchors[name], classes_list, k, feature_names(data))
        valid = [a for a in anchors[name] if a.is_anchor]
        picks[name] = pick(valid, data, k=k, model=model) if valid else None
        seconds[name] = time.perf_counter() - start

    shown = np.sort(np.intersect1d(differ, explained))
    frame = pd.DataFrame(index=pd.Index(shown, name="row"))
    for name in named:
        frame[f"{name} prediction"] = predictions[name][shown]
        frame[f"{name} anchor"] = [_rule(dis_anchors[name][int(r)]) for r in shown]
    return ModelComparison(
        names_=list(named),
        kind="text" if text else "table",
        classes_=classes,
        rows_=rows,
        anchors_=anchors,
        top_features_=tops,
        picks_=picks,
        predictions_=predictions,
        accuracy_=accuracy,
        disagreements_=frame,
        n_disagreements_=len(differ),
        disagreement_anchors_=dis_anchors,
        explainers_=explainers,
        aggregators_=aggregators if text else None,
        random_state_=seed,
        seconds_=seconds,
        n_rows_=len(data),
        _data=data if text else data.iloc[:0] if isinstance(data, pd.DataFrame) else data[:0],
        _seed=seed,
        _relies={},
    )


def _check_aggregator(aggregator):
    from .aggregation import GlobalAnchorAggregator

    if aggregator is None:
        return GlobalAnchorAggregator(None)
    if not isinstance(aggregator, GlobalAnchorAggregator):
        raise ValueError(
            "aggregator must be a GlobalAnchorAggregator whose parameters are used for every "
            f"model (its estimator is replaced), got {type(aggregator).__name__}."
        )
    return aggregator


def _check_reference(reference, data):
    """The reference table: the columns of ``X``."""
    _check_reference_data(reference)
    if isinstance(reference, str) or is_text(reference):
        raise ValueError("reference must be a table (DataFrame or 2-d array) like X.")
    if isinstance(data, pd.DataFrame):
        if not isinstance(reference, pd.DataFrame) or list(reference.columns) != list(data.columns):
            raise ValueError(
                "reference must have the columns of X, in the same order; got "
                f"{list(getattr(reference, 'columns', []))[:10]} for {list(data.columns)[:10]}."
            )
    elif np.shape(reference)[1:] != np.shape(data)[1:]:
        raise ValueError(
            f"reference must have the {np.shape(data)[1]} columns of X, got shape "
            f"{np.shape(reference)}."
        )
    return reference
