"""Reliance of a model on features or words, from its anchors, and a scorer for model selection.

A model *relies* on a feature (a column of a table, a word of a document) for a row when the
row's anchor -- the rule that holds its prediction in place -- names that feature. The share of
explained rows whose anchor names any of a set of features is the model's reliance on them:
:func:`make_reliance_scorer` turns it into a scikit-learn scorer, so that a grid search or a
cross-validation can prefer the pipeline, preprocessing or estimator that relies less on an
artefact (a header, an identifier, a watermark) at the same time as it scores accuracy.
"""

from __future__ import annotations

import dataclasses
import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils import check_random_state

from ._base import is_text, take_rows
from ._bounds import kl_upper_bound
from ._documents import check_documents, tokenize

__all__ = ["make_reliance_scorer"]

# Fresh perturbations on which an anchor's rule without the features is checked (``needs``).
CHECK_SAMPLES = 1000


def _default_explainer():
    from .explainer import AnchorExplainer

    return AnchorExplainer(None)


def _check_explainer(explainer, name="explainer"):
    """The explainer template: an unfitted AnchorExplainer (its estimator is replaced)."""
    from .explainer import AnchorExplainer

    if explainer is None:
        return _default_explainer()
    if not isinstance(explainer, AnchorExplainer):
        raise ValueError(
            f"{name} must be an AnchorExplainer whose parameters are used for every model (its "
            f"estimator is replaced), got {type(explainer).__name__}."
        )
    return explainer


def _check_n_rows(n_rows, name="n_rows"):
    if n_rows is None:
        return None
    if not isinstance(n_rows, Integral) or isinstance(n_rows, bool) or n_rows < 1:
        raise ValueError(f"{name} must be an integer >= 1 or None, got {n_rows!r}.")
    return int(n_rows)


def _as_table(X, name="X"):
    """A table as a DataFrame or a 2-d array (as the explainer takes it), refused when empty."""
    if isinstance(X, pd.DataFrame):
        table = X
    else:
        try:
            table = np.asarray(X)
        except Exception as error:  # noqa: BLE001 - ragged lists and the like
            raise ValueError(f"{name} must be a table (DataFrame or 2-d array): {error}") from None
        if table.ndim != 2:
            raise ValueError(
                f"{name} must be a table (DataFrame or 2-d array) or a list of documents, got "
                f"an array of shape {table.shape}."
            )
    if len(table) == 0:
        raise ValueError(f"{name} has no rows.")
    return table


def _check_data(X, name="X"):
    """``(data, is_text)``: documents as a list of str, a table as a DataFrame or array."""
    if isinstance(X, str):
        raise ValueError(f"{name} must be a collection of rows or documents, not one string.")
    if is_text(X):
        return check_documents(X, name, allow_wordless=True), True
    return _as_table(X, name), False


def feature_names(X):
    """The features an anchor of a row of ``X`` can name: a DataFrame's columns, else
    ``x0, x1, ...`` as the tabular sampler names the columns of an array."""
    if isinstance(X, pd.DataFrame):
        return list(X.columns)
    return [f"x{j}" for j in range(np.shape(X)[1])]


def words_of(documents):
    """The lowercased words of a collection of documents."""
    return {w.lower() for d in documents for w, _, _ in tokenize(d)}


def check_features(features, X, text, name="features"):
    """The features (columns) or words to measure reliance on, checked against ``X``.

    Tables: names of the columns of ``X`` (an array's columns are ``x0, x1, ...`` or their
    positions). Documents: words, compared lowercased, each of which must occur in a document
    of ``X``. Returns a frozenset of what anchors name (column names, lowercased words).
    """
    if isinstance(features, (str, bytes)) or not hasattr(features, "__iter__"):
        features = [features]
    features = list(features)
    if not features:
        raise ValueError(f"{name} is empty: name at least one feature or word.")
    if text:
        bad = [f for f in features if not isinstance(f, str)]
        if bad:
            raise ValueError(f"{name} must be words (str) for documents; got {bad[:5]}.")
        # an anchor names one word: "e-mail" (two words to the tokenizer) could never match
        split = [f for f in features if [w for w, _, _ in tokenize(f)] != [f]]
        if split:
            raise ValueError(
                f"{name}: {split[:5]} are not single words as documents are split into words "
                "(runs of letters, digits and underscores): give them one word at a time."
            )
        wanted = {f.lower() for f in features}
        missing = sorted(wanted - words_of(X))
        if missing:
            raise ValueError(
                f"{name}: {missing[:10]} occur in none of the documents, so no anchor can use "
                "them (words are compared lowercased; check the spelling)."
            )
        return frozenset(wanted)
    names = feature_names(X)
    array = not isinstance(X, pd.DataFrame)
    out, missing = set(), []
    for f in features:
        if array and isinstance(f, Integral) and not isinstance(f, bool) and 0 <= f < len(names):
            out.add(names[int(f)])
        elif f in names:
            out.add(f)
        else:
            missing.append(f)
    if missing:
        raise ValueError(
            f"{name}: {missing[:10]} are not features of the data; its features are "
            f"{names[:30]}{' ...' if len(names) > 30 else ''}."
        )
    return frozenset(out)


def anchor_features(anchor, text):
    """What an anchor names: its columns, or its words lowercased."""
    if text:
        return {str(p.value).lower() for p in anchor.predicates if p.op == "contains"}
    return {p.feature for p in anchor.predicates}


def needs(explainer, anchor, features, text, seed):
    """Whether ``anchor`` needs its predicates on ``features``: the rule without them is
    confidently below the threshold (the KL upper confidence bound, at the explainer's
    ``delta``, of its precision on ``CHECK_SAMPLES`` fresh perturbations)."""
    kept = tuple(
        p
        for p in anchor.predicates
        if (str(p.value).lower() if text else p.feature) not in features
    )
    reduced = dataclasses.replace(anchor, predicates=kept, steps=[])
    precision = explainer.perturbation_precision(reduced, CHECK_SAMPLES, random_state=seed)
    level = np.log(1.0 / explainer.delta) / CHECK_SAMPLES
    return bool(kl_upper_bound(precision, level) < anchor.threshold)


def relies(anchors, features, text, explainer, seed):
    """For each anchor (one per explained row): it is an anchor, names any of ``features``
    and needs them (see :func:`needs`). A row without an anchor (no rule reached the
    threshold) does not count as relying on anything."""
    return [
        a.is_anchor
        and bool(anchor_features(a, text) & features)
        and needs(explainer, a, features, text, seed)
        for a in anchors
    ]


def reliance_of(hits):
    """The share of rows that rely (NaN for no rows)."""
    return float(np.mean(hits)) if len(hits) else float("nan")


def explainable(documents):
    """Positions of the documents that have a word (the others cannot be explained)."""
    return np.array([i for i, d in enumerate(documents) if tokenize(d)], dtype=np.intp)


def sample_rows(candidates, n_rows, rng):
    """``n_rows`` of the candidate positions at random (all when fewer), ascending."""
    candidates = np.asarray(candidates, dtype=np.intp)
    if n_rows is None or len(candidates) <= n_rows:
        return candidates
    return np.sort(rng.choice(candidates, size=n_rows, replace=False))


def explain_rows(template, model, reference, X, rows, seed, n_jobs=None):
    """Fit a clone of the explainer template for ``model`` on ``reference`` and explain the
    rows ``rows`` of ``X``: ``(explainer, anchors)``. Rows without an anchor are returned
    with ``is_anchor=False`` and no warning (the callers count them)."""
    from .explainer import NoAnchorWarning

    params = {"estimator": model, "random_state": seed}
    if n_jobs is not None:
        params["n_jobs"] = n_jobs
    explainer = clone(template).set_params(**params).fit(reference)
    if len(rows) == 0:
        return explainer, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(take_rows(X, rows))
    return explainer, anchors


class RelianceScorer:
    """Scorer returned by :func:`make_reliance_scorer`: ``scorer(estimator, X, y=None)``."""

    def __init__(self, features, n_rows, explainer, random_state):
        self.features = features
        self.n_rows = n_rows
        self.explainer = explainer
        self.random_state = random_state

    def __repr__(self):
        return (
            f"make_reliance_scorer({self.features!r}, n_rows={self.n_rows!r}, "
            f"random_state={self.random_state!r})"
        )

    def reliance(self, estimator, X):
        """The share of the sampled rows of ``X`` whose anchor uses any of the features."""
        data, text = _check_data(X, "X")
        wanted = check_features(self.features, data, text)
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        candidates = explainable(data) if text else np.arange(len(data))
        if len(candidates) == 0:
            raise ValueError("X has no document with a word: there is nothing to explain.")
        rows = sample_rows(candidates, self.n_rows, np.random.default_rng(seed))
        explainer, anchors = explain_rows(self.explainer, estimator, data, data, rows, seed)
        return reliance_of(relies(anchors, wanted, text, explainer, seed))

    def __call__(self, estimator, X, y=None, **kwargs):
        return 1.0 - self.reliance(estimator, X)


def make_reliance_scorer(features, *, n_rows=50, explainer=None, random_state=0):
    """A scorer that prefers models relying less on ``features``: for model selection.

    The scorer is called as scikit-learn calls scorers, ``scorer(estimator, X, y)``: it
    explains ``n_rows`` rows of ``X`` (chosen with ``random_state``) with anchors of the fitted
    ``estimator`` and returns ``1 - reliance``, where the reliance is the share of those rows
    whose anchor uses any of ``features`` (columns of a table, words of documents) and needs
    them (see the notes). Higher is better, as for every scikit-learn score: 1 when no anchor
    relies on them. ``y`` is not used: an anchor holds the model's own prediction in place.

    Use it as ``GridSearchCV(pipeline, grid, scoring=make_reliance_scorer([...]))``, or in a
    dict of scorers with accuracy and ``refit`` naming the one to choose by. In a
    cross-validation ``X`` is the held-out fold, which is also the explainer's reference data.

    Parameters
    ----------
    features : str, int or list
        Tables: column names of ``X`` (for an array, ``x0, x1, ...`` or their positions).
        Documents: words, compared lowercased. Each must be a column of ``X`` or occur in
        one of its documents, else the scorer raises a ``ValueError`` (a misspelt word would
        otherwise score every model 1).
    n_rows : int >= 1 or None, default=50
        Rows (documents) of ``X`` explained per call; ``None`` explains all of them. Documents
        without a word cannot be explained and are not sampled.
    explainer : AnchorExplainer or None, default=None
        Its parameters (``threshold``, ``sampler``, ...) are used for every estimator scored: a
        clone gets the estimator and the seed. ``None`` is ``AnchorExplainer``'s defaults.
    random_state : int, default=0
        Seeds the choice of rows and the perturbations; fixed, so that every candidate of a
        search is explained on the same rows and the same perturbations.

    Returns
    -------
    scorer : callable ``(estimator, X, y=None) -> float`` in [0, 1]
        It also has ``scorer.reliance(estimator, X)``, the reliance itself.

    Notes
    -----
    A row relies on the features when its anchor names one of them and the rule without them
    does not hold: its precision on 1,000 fresh perturbations (``perturbation_precision``) is
    confidently below the threshold (its KL upper confidence bound, at the explainer's
    ``delta``, is under ``threshold``). An anchor can carry a predicate the model does not
    read (a long rule of a hard row picks up a feature among candidates of equal precision);
    such a predicate is not reliance. A row whose search finds no rule that reaches the
    ``threshold`` has no anchor and counts as not relying on the features (the rule returned
    for it is not evidence).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.integers(0, 4, 400), "b": rng.integers(0, 4, 400)})
    >>> y = (X["a"] >= 2).astype(int)
    >>> tree = DecisionTreeClassifier(max_depth=1).fit(X, y)
    >>> make_reliance_scorer(["a"], n_rows=20)(tree, X, y)
    0.0
    >>> make_reliance_scorer(["b"], n_rows=20)(tree, X, y)
    1.0
    """
    check_features_argument(features)
    n_rows = _check_n_rows(n_rows)
    explainer = _check_explainer(explainer)
    if random_state is None or not isinstance(random_state, Integral):
        raise ValueError(
            "random_state must be an integer: every candidate of a model selection is "
            f"explained on the same rows and perturbations; got {random_state!r}."
        )
    return RelianceScorer(features, n_rows, explainer, int(random_state))


def check_features_argument(features, name="features"):
    """Refuse an empty list of features before any data is seen."""
    listed = [features] if isinstance(features, (str, bytes)) else features
    if not hasattr(listed, "__iter__"):
        listed = [listed]
    if len(list(listed)) == 0:
        raise ValueError(f"{name} is empty: name at least one feature or word.")
