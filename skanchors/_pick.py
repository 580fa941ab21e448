"""Submodular pick: a few explanations that together explain most of the data.

Explaining every row is too much to read; the *submodular pick* of the LIME paper (Ribeiro,
Singh and Guestrin, KDD 2016, section 4) and of the Anchors paper (Ribeiro et al., AAAI 2018,
section 3.2) chooses a budget of ``k`` explanations that cover the data as well as possible,
greedily: each step adds the explanation with the largest coverage gain. Coverage is monotone
and submodular, so the greedy choice is within ``1 - 1/e`` of the best possible set.

- Anchors: coverage is the share of the rows of ``X`` that at least one picked rule covers
  (``anchor.covers(X)``; for text anchors, the documents that contain every anchor word).
- LIME explanations (SP-LIME): with ``W`` the explanations x features matrix of ``|weights|``
  and the global importance ``I_j = sqrt(sum_i W_ij)`` (paper, section 4), coverage is
  ``c(V) = sum_j 1[exists i in V: W_ij > 0] I_j``, reported as a share of ``sum_j I_j``.
  Features are columns for tables and words for text.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from ._explanation import Anchor
from ._lime_explanation import LimeExplanation
from ._validation import check_model

__all__ = ["SubmodularPick", "pick"]


@dataclass
class SubmodularPick:
    """The result of :func:`pick`.

    Attributes
    ----------
    indices_ : ndarray of int
        Positions of the picked explanations in the input list, in the order picked.
    explanations : list
        The picked explanations, in the order picked.
    coverage_curve : ndarray of float
        Coverage of the first ``1, 2, ..., k`` picks (non-decreasing, in [0, 1]).
    coverage : ndarray of float
        Coverage of each picked explanation alone (anchors: share of the rows of ``X`` it
        covers; LIME: share of the total importance of its features).
    precision : ndarray of float or None
        Anchors with ``model``: held-out precision of each picked anchor, the share of the rows
        of ``X`` it covers on which the model predicts the anchor's class (regression: a
        value within the anchor's tolerance of its prediction); NaN if it covers none.
    kind : {"anchor", "lime"}
    feature_names : list of str or None
        LIME: the features (columns of ``W``).
    importance : ndarray of float or None
        LIME: global importance ``I_j`` of each feature.
    n_candidates : int
        Number of explanations picked from.
    """

    indices_: np.ndarray
    explanations: list
    coverage_curve: np.ndarray
    coverage: np.ndarray
    precision: np.ndarray | None = None
    kind: str = "anchor"
    feature_names: list | None = None
    importance: np.ndarray | None = None
    n_candidates: int = 0
    _labels: list = field(default_factory=list, repr=False)

    def __len__(self):
        return len(self.indices_)

    def _rows(self):
        out = []
        for step, (i, label) in enumerate(zip(self.indices_, self._labels)):
            prec = None if self.precision is None else float(self.precision[step])
            out.append(
                (
                    step + 1,
                    int(i),
                    label,
                    float(self.coverage[step]),
                    float(self.coverage_curve[step]),
                    prec,
                )
            )
        return out

    def __str__(self):
        what = "rows covered" if self.kind == "anchor" else "feature importance covered"
        lines = [
            f"Submodular pick of {len(self)} of {self.n_candidates} {self.kind} explanations "
            f"({what}):"
        ]
        for step, i, label, cov, total, prec in self._rows():
            extra = "" if prec is None else f", held-out precision {prec:.2f}"
            lines.append(
                f"  {step}. #{i}: {label} (coverage {cov:.2f}{extra}) -> total {total:.2f}"
            )
        return "\n".join(lines)

    def __repr__(self):
        curve = ", ".join(f"{c:.2f}" for c in self.coverage_curve)
        return f"<SubmodularPick {self.kind} indices={list(map(int, self.indices_))} [{curve}]>"

    def _repr_html_(self):
        esc = html.escape
        has_prec = self.precision is not None
        head = "<th>pick</th><th>#</th><th>explanation</th><th>coverage</th><th>total</th>"
        if has_prec:
            head += "<th>held-out precision</th>"
        body = []
        for step, i, label, cov, total, prec in self._rows():
            cells = (
                f"<td>{step}</td><td>{i}</td><td><code>{esc(label)}</code></td>"
                f"<td>{cov:.3f}</td><td>{total:.3f}</td>"
            )
            if has_prec:
                cells += f"<td>{prec:.3f}</td>"
            body.append(f"<tr>{cells}</tr>")
        return (
            "<div class='skanchors-pick'>"
            f"<p>Submodular pick of {len(self)} of {self.n_candidates} "
            f"{esc(self.kind)} explanations</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        )

    def plot(self, ax=None):
        """Coverage after each pick. Requires matplotlib. Returns the Axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("SubmodularPick.plot needs matplotlib.") from exc
        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3), layout="constrained")
        steps = np.arange(1, len(self) + 1)
        ax.plot(steps, self.coverage_curve, marker="o", label="coverage")
        if self.precision is not None:
            ax.plot(steps, self.precision, marker="s", linestyle="--", label="precision")
            ax.legend(loc="lower right", fontsize="small")
        ax.set_xticks(steps)
        ax.set_xlabel("explanations picked")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"Submodular pick ({self.kind})")
        return ax


def _greedy(covers, values, k):
    """Greedy maximisation of ``sum_j values[j] * 1[some picked row of covers has j]``.

    ``covers`` is a boolean (candidates x items) matrix. Returns the order of the ``k`` picks
    and the covered value after each; ties go to the earliest candidate.
    """
    n, _ = covers.shape
    covered = np.zeros(covers.shape[1], dtype=bool)
    available = np.ones(n, dtype=bool)
    order, curve = [], []
    total = 0.0
    for _ in range(min(k, n)):
        gain = (covers & ~covered) @ values
        gain[~available] = -np.inf
        i = int(np.argmax(gain))
        order.append(i)
        available[i] = False
        covered |= covers[i]
        total += float(gain[i])
        curve.append(total)
    return order, np.asarray(curve)


def _anchor_coverage(anchors, X):
    """Boolean (anchors x rows) matrix; documents are tokenised once for all text anchors."""
    import pandas as pd

    texts = None
    if isinstance(X, (list, tuple, pd.Series)) or (isinstance(X, np.ndarray) and X.ndim == 1):
        from .samplers.text import check_documents, tokenize

        docs = check_documents(X, "X", allow_wordless=True)
        texts = [Counter(w for w, _, _ in tokenize(d)) for d in docs]
    out = np.empty((len(anchors), len(X)), dtype=bool)
    for i, anchor in enumerate(anchors):
        if texts is not None and all(p.op == "contains" for p in anchor.predicates):
            out[i] = anchor._covers_counted(texts)
        else:
            out[i] = anchor.covers(X)
    return out


def _lime_matrix(explanations):
    """|weights| of each explanation per global feature (column name, or word for text)."""
    index, cols, rows, vals = {}, [], [], []
    for i, e in enumerate(explanations):
        for j in e.selected:
            weight = abs(float(e.weights[j]))
            if weight == 0:
                continue
            p = e.features[j][0]
            key = str(p.value) if p.op == "contains" else str(p.feature)
            col = index.setdefault(key, len(index))
            rows.append(i)
            cols.append(col)
            vals.append(weight)
    W = np.zeros((len(explanations), len(index)))
    np.add.at(W, (rows, cols), vals)
    return W, list(index)


def pick(explanations, X=None, k=5, *, model=None):
    """Choose ``k`` explanations that together cover the most, greedily (submodular pick).

    Parameters
    ----------
    explanations : list of Anchor or list of LimeExplanation
        Candidate explanations (for example of a sample of rows), all of one kind.
    X : DataFrame, 2-d array or list of str, default=None
        Anchors: the rows (or documents) whose coverage is maximised, preferably held out
        from the explained ones. Not used for LIME explanations (their coverage is over
        features), so it may be ``None`` there.
    k : int >= 1, default=5
        Budget of explanations; at most ``len(explanations)`` are picked.
    model : fitted model or callable, default=None
        Anchors only: the explained model (classifier or, for regression anchors, regressor),
        to report the held-out precision of each picked anchor on ``X``. Not used for LIME
        explanations.

    Returns
    -------
    result : SubmodularPick
        With ``indices_``, ``explanations``, ``coverage_curve`` and, for anchors with a model,
        ``precision``.

    Notes
    -----
    Ties in the coverage gain go to the earliest explanation. Once every row (feature) is
    covered, further picks have no gain and follow the input order.

    Examples
    --------
    >>> import pandas as pd
    >>> from skanchors import Anchor, Predicate
    >>> X = pd.DataFrame({"age": [20, 30, 40, 50, 60, 70]})
    >>> rules = [
    ...     Anchor((Predicate("age", "<=", 35),), 0, 1.0, 0.0, True, 0.95),
    ...     Anchor((Predicate("age", "<=", 55),), 0, 1.0, 0.0, True, 0.95),
    ...     Anchor((Predicate("age", ">", 55),), 1, 1.0, 0.0, True, 0.95),
    ... ]
    >>> result = pick(rules, X, k=2)
    >>> result.indices_.tolist(), result.coverage_curve.round(2).tolist()
    ([1, 2], [0.67, 1.0])
    """
    if not isinstance(k, Integral) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}.")
    if isinstance(explanations, (Anchor, LimeExplanation, str)) or not hasattr(
        explanations, "__iter__"
    ):
        what = type(explanations).__name__
        raise TypeError(
            "explanations must be a list of Anchor or LimeExplanation objects (what explain "
            f"returns), got {'an' if what[0] in 'AEIOU' else 'a'} {what}; for one, pass [it]."
        )
    explanations = list(explanations)
    if not explanations:
        raise ValueError("explanations is empty: there is nothing to pick from.")
    if all(isinstance(e, Anchor) for e in explanations):
        kind = "anchor"
    elif all(isinstance(e, LimeExplanation) for e in explanations):
        kind = "lime"
    else:
        kinds = sorted({type(e).__name__ for e in explanations})
        raise TypeError(
            "explanations must all be Anchor or all be LimeExplanation objects; got "
            f"{', '.join(kinds)}."
        )
    k = min(int(k), len(explanations))
    precision = feature_names = importance = None
    if kind == "anchor":
        if X is None:
            raise ValueError("X is required to pick anchors: coverage is measured on its rows.")
        if isinstance(X, str):
            raise TypeError("X must be a collection of rows or documents, not a single string.")
        n_rows = len(X)
        if n_rows == 0:
            raise ValueError("X has no rows to measure coverage on.")
        covers = _anchor_coverage(explanations, X)
        # Row counts (exact ties); shares of X are taken at the end.
        values, scale = np.ones(n_rows), float(n_rows)
        labels = [str(a).split(" WITH PRECISION")[0] for a in explanations]
    else:
        W, feature_names = _lime_matrix(explanations)
        importance = np.sqrt(W.sum(axis=0))  # I_j, LIME paper section 4
        total = importance.sum()
        covers = W > 0
        values, scale = importance, float(total) if total > 0 else 1.0
        labels = [
            f"P({e.prediction}): " + ", ".join(f"{n} {w:+.3f}" for n, w in e.as_list()[:4])
            for e in explanations
        ]
    order, curve = _greedy(covers, values, k)
    curve = np.minimum(curve / scale, 1.0)
    single = (covers[order] @ values) / scale
    if kind == "anchor" and model is not None:
        predicted, regression = _predictions(model, X, explanations)

        def agree(anchor, values):
            if regression:
                return np.abs(values - anchor.prediction) <= anchor.tolerance
            return values == anchor.prediction

        precision = np.array(
            [
                float(np.mean(agree(explanations[i], predicted[covers[i]])))
                if covers[i].any()
                else float("nan")
                for i in order
            ]
        )
    return SubmodularPick(
        indices_=np.asarray(order, dtype=np.intp),
        explanations=[explanations[i] for i in order],
        coverage_curve=curve,
        coverage=np.asarray(single, dtype=float),
        precision=precision,
        kind=kind,
        feature_names=feature_names,
        importance=importance,
        n_candidates=len(explanations),
        _labels=[labels[i] for i in order],
    )


def _predictions(model, X, anchors):
    """The model's outcome on every row of ``X``: predicted values for regression anchors
    (those with a ``tolerance``), predicted classes otherwise: ``(values, is_regression)``."""
    from .models import RegressionModel, as_probability_model

    check_model(model, "model", "pick")
    regression = {a.tolerance is not None for a in anchors}
    if len(regression) > 1:
        raise ValueError("explanations mix regression and classification anchors.")
    if regression == {True}:
        return np.asarray(RegressionModel(model).predict(X), dtype=float), True
    wrapped = as_probability_model(model, labels_only=True)
    proba = wrapped.predict_proba(X)
    return np.asarray(wrapped.classes_)[proba.argmax(axis=1)], False
