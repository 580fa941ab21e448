"""Global aggregations of one-word anchors: pure functions of count arrays.

Every function takes arrays of shape ``(n_words, n_classes)`` (a row per word, a column per
class) and returns scores of the same shape; ``NaN`` means "not ranked" (the word does not occur
in the class, or a filter removed it). The counts are those of Mor, Belinkov and Kimelfeld
(AAAI 2024):

``a_pos`` -- A+(w, c), eq. 2
    occurrences of ``w`` in documents predicted ``c`` that were tested and are anchors.
``a_neg`` -- A-(w, c), eq. 3
    occurrences of ``w`` in documents predicted ``c`` that were tested and are *not* anchors.
``doc_freq``
    number of documents predicted ``c`` that contain ``w`` (for ``G_base``, eq. 12).

The same formulas applied to the counts of the documents processed so far are the anytime
*pseudo-scores* of the seed.

Examples
--------
>>> import numpy as np
>>> a_pos = np.array([[4, 0], [1, 0], [0, 3]])
>>> a_neg = np.array([[0, 2], [6, 1], [1, 0]])
>>> g_sq(a_pos)[:, 0].round(3).tolist()
[2.0, 1.0, 0.0]
>>> g_av(a_pos, a_neg)[:, 0].round(3).tolist()
[1.0, 0.143, 0.0]
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "AGGREGATIONS",
    "aggregate",
    "g_av",
    "g_base",
    "g_h",
    "g_pr",
    "g_sq",
    "inverse_pr",
    "pr_estimates",
]

#: Names accepted by :func:`aggregate` (and ``GlobalAnchorAggregator(aggregation=...)``).
AGGREGATIONS = ("pr", "sq", "av", "h", "base", "inverse_pr")


def _as_counts(*arrays):
    out = []
    for a in arrays:
        a = np.asarray(a, dtype=float)
        if a.ndim != 2:
            raise ValueError(f"counts must be 2-d (n_words, n_classes), got shape {a.shape}.")
        if not np.isfinite(a).all() or (a < 0).any():
            raise ValueError("counts must be finite and non-negative.")
        out.append(a)
    if len({a.shape for a in out}) > 1:
        raise ValueError(f"count arrays have different shapes: {[a.shape for a in out]}.")
    return out


def _shaped(value, name, shape, dtype=float):
    """``value`` as an array of ``shape`` (that of the counts, or its first axis), or an
    error that names the argument."""
    out = np.asarray(value, dtype=dtype)
    if out.shape != shape:
        per = "word" if len(shape) == 1 else "word and class"
        raise ValueError(
            f"{name} must have shape {shape}, one value per {per} of the counts; got shape "
            f"{out.shape}."
        )
    return out


def g_sq(a_pos):
    """``G_sq(w, c) = sqrt(A+(w, c))`` (eq. 4; Ribeiro et al. 2016).

    Examples
    --------
    >>> g_sq([[4, 9], [0, 1]]).tolist()
    [[2.0, 3.0], [0.0, 1.0]]
    """
    (a_pos,) = _as_counts(a_pos)
    return np.sqrt(a_pos)


def g_av(a_pos, a_neg):
    """``G_av(w, c) = A+ / (A+ + A-)`` (eq. 5; van der Linden et al. 2019).

    ``NaN`` where ``w`` was never tested in class ``c``. With a minimum-count filter
    (``aggregate(..., min_count=5)``) this is the seed's ``G_av^+5``.

    Examples
    --------
    >>> g_av([[1, 0]], [[3, 0]]).tolist()
    [[0.25, nan]]
    """
    a_pos, a_neg = _as_counts(a_pos, a_neg)
    total = a_pos + a_neg
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, a_pos / np.where(total > 0, total, 1.0), np.nan)


def g_h(a_pos):
    """Entropy-weighted ``G_sq`` (eq. 6; van der Linden et al. 2019).

    ``h(w, c) = G_sq(w, c) / sum_c' G_sq(w, c')``, ``H_w`` its Shannon entropy over the classes,
    and ``G_h = (1 - (H_w - H_min) / (H_max - H_min)) G_sq`` with ``H_min``, ``H_max`` taken over
    the words that are an anchor at least once. When every such word has the same entropy the
    factor is 1. Words that are never an anchor score 0.

    Examples
    --------
    >>> g_h([[4, 0], [1, 1], [0, 0]]).round(3).tolist()
    [[2.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
    """
    (a_pos,) = _as_counts(a_pos)
    sq = np.sqrt(a_pos)
    total = sq.sum(axis=1, keepdims=True)
    some = total[:, 0] > 0
    h = np.divide(sq, total, out=np.zeros_like(sq), where=total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(h > 0, h * np.log(np.where(h > 0, h, 1.0)), 0.0).sum(axis=1)
    factor = np.zeros(len(sq))
    if some.any():
        lo, hi = ent[some].min(), ent[some].max()
        factor[some] = 1.0 if hi - lo <= 0 else 1.0 - (ent[some] - lo) / (hi - lo)
    return factor[:, None] * sq


def pr_estimates(a_pos, a_neg, alpha=0.5, totals=None):
    """Maximum-likelihood estimates ``(q~, p~)`` of the generative model (eq. 10).

    ``q~(w, c) = (1/alpha) A+(w, c) / sum_w' A+(w', c) - (1/alpha - 1) A-(w, c) / sum_w' A-(w', c)``
    and ``p~(w, c) = A-(w, c) / sum_w' A-(w', c)``. A class without any anchor (or without any
    non-anchor) contributes 0 for the corresponding term.

    ``totals=(sum_pos, sum_neg)`` (one value per class each) replaces the column sums
    ``sum_w' A+(w', c)`` and ``sum_w' A-(w', c)``: an aggregator that does not test every
    occurrence passes estimates of the totals over all occurrences.

    Examples
    --------
    >>> q, p = pr_estimates([[3], [1]], [[1], [3]])
    >>> q.ravel().tolist(), p.ravel().tolist()
    ([1.25, -0.25], [0.25, 0.75])
    """
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}.")
    a_pos, a_neg = _as_counts(a_pos, a_neg)
    if totals is None:
        sp = a_pos.sum(axis=0, keepdims=True)
        sn = a_neg.sum(axis=0, keepdims=True)
    else:
        sp, sn = (np.asarray(t, dtype=float).reshape(1, -1) for t in totals)
        if sp.shape[1] != a_pos.shape[1] or sn.shape[1] != a_pos.shape[1]:
            raise ValueError(
                f"totals must hold one value per class ({a_pos.shape[1]}), got shapes "
                f"{np.shape(totals[0])} and {np.shape(totals[1])}."
            )
    fp = np.divide(a_pos, sp, out=np.zeros_like(a_pos), where=sp > 0)
    fn = np.divide(a_neg, sn, out=np.zeros_like(a_neg), where=sn > 0)
    return fp / alpha - (1.0 / alpha - 1.0) * fn, fn


def g_pr(a_pos, a_neg, alpha=0.5, present=None, totals=None):
    """Probabilistic aggregation ``G_pr = L(q~, |q_min|)`` (eqs. 8-10).

    ``q~`` from :func:`pr_estimates`, then Laplace smoothing over the words ``W(S[c])`` that
    occur in class ``c`` with the absolute minimum of ``q~`` as smoothing parameter:
    ``(q~(w, c) + b) / (sum_{w' in W(S[c])} q~(w', c) + b |W(S[c])|)`` with
    ``b = |min_w q~(w, c)|``. Smoothing is monotone, so the ranking is that of ``q~``; the
    result is a probability distribution over ``W(S[c])`` (``NaN`` elsewhere); when
    ``q_min < 0`` the word(s) attaining it get probability exactly 0.

    Parameters
    ----------
    a_pos, a_neg : array-like of shape (n_words, n_classes)
    alpha : float in (0, 1], default=0.5
        Probability that an anchor position holds a true anchor word.
    present : bool array of shape (n_words, n_classes) or None
        ``W(S[c])``; default: the words tested at least once in the class (``A+ + A- > 0``).
    totals : (array, array) or None
        Totals of A+ and A- per class (see :func:`pr_estimates`); default: the column sums.

    Examples
    --------
    >>> g_pr([[3], [1]], [[1], [3]]).ravel().round(4).tolist()
    [1.0, 0.0]
    >>> g_pr([[3], [1], [0]], [[1], [1], [2]]).ravel().round(4).tolist()
    [0.7, 0.3, 0.0]
    """
    a_pos, a_neg = _as_counts(a_pos, a_neg)
    q, _ = pr_estimates(a_pos, a_neg, alpha, totals)
    if present is None:
        present = a_pos + a_neg > 0
    else:
        present = _shaped(present, "present", a_pos.shape, bool)
    out = np.full(q.shape, np.nan)
    for c in range(q.shape[1]):
        m = present[:, c]
        if not m.any():
            continue
        qc = q[m, c]
        b = abs(qc.min())
        denom = qc.sum() + b * m.sum()
        out[m, c] = (qc + b) / denom if denom > 0 else 1.0 / m.sum()
    return out


def inverse_pr(a_pos, a_neg, alpha=0.5, present=None, totals=None):
    """``1 / G_pr``: the seed's sanity-check baseline (words least likely to be anchors first).

    Examples
    --------
    >>> inverse_pr([[3], [1], [0]], [[1], [1], [2]]).ravel().round(2).tolist()
    [1.43, 3.33, inf]
    """
    pr = g_pr(a_pos, a_neg, alpha, present, totals)
    with np.errstate(divide="ignore"):
        return np.where(np.isnan(pr), np.nan, 1.0 / pr)


def g_base(doc_freq):
    """``G_base(w, c) = |{d in S[c] : w in d}| / |{d in S : w in d}|`` (eq. 12).

    Ignores the anchors: the share of the documents containing ``w`` that the model assigns to
    ``c``. ``NaN`` for words in no document.

    Examples
    --------
    >>> g_base([[3, 1], [0, 2]]).tolist()
    [[0.75, 0.25], [0.0, 1.0]]
    """
    (df,) = _as_counts(doc_freq)
    total = df.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, df / np.where(total > 0, total, 1.0), np.nan)


def aggregate(
    name, a_pos, a_neg, doc_freq=None, *, alpha=0.5, n_occurrences=None, min_count=1, totals=None
):
    """Scores of aggregation ``name`` with the rare-word filter applied.

    Parameters
    ----------
    name : {"pr", "sq", "av", "h", "base", "inverse_pr"}
    a_pos, a_neg : array-like of shape (n_words, n_classes)
        A+ and A- (eqs. 2-3).
    doc_freq : array-like of shape (n_words, n_classes) or None
        Documents of each class containing each word; required by ``"base"``, and used as
        ``W(S[c])`` (the words of class ``c``) by ``"pr"`` and ``"inverse_pr"`` when given.
    alpha : float in (0, 1], default=0.5
        For ``"pr"`` and ``"inverse_pr"``.
    n_occurrences : array-like of shape (n_words,) or None
        Occurrences of each word in the collection (all classes); default ``A+ + A-`` summed
        over classes.
    min_count : int, default=1
        Words with fewer occurrences score ``NaN`` (``"av"`` with 5 is the seed's G_av^+5).
    totals : (array, array) or None
        For ``"pr"`` and ``"inverse_pr"``: totals of A+ and A- per class over *all*
        occurrences when the counts cover only some (see :func:`pr_estimates`).

    Returns
    -------
    scores : ndarray of shape (n_words, n_classes)

    Examples
    --------
    >>> aggregate("av", [[1, 0], [5, 0]], [[0, 1], [2, 0]], min_count=5).tolist()
    [[nan, nan], [0.714..., nan]]
    """
    if name not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {list(AGGREGATIONS)}, got {name!r}.")
    a_pos, a_neg = _as_counts(a_pos, a_neg)
    if doc_freq is not None:
        (doc_freq,) = _as_counts(_shaped(doc_freq, "doc_freq", a_pos.shape))
    present = None if doc_freq is None else doc_freq > 0
    if name == "pr":
        scores = g_pr(a_pos, a_neg, alpha, present, totals)
    elif name == "inverse_pr":
        scores = inverse_pr(a_pos, a_neg, alpha, present, totals)
    elif name == "sq":
        scores = g_sq(a_pos)
    elif name == "h":
        scores = g_h(a_pos)
    elif name == "av":
        scores = g_av(a_pos, a_neg)
    else:
        if doc_freq is None:
            raise ValueError("aggregation 'base' needs doc_freq.")
        scores = g_base(doc_freq)
    if present is not None and name in ("sq", "h"):
        scores = np.where(present, scores, np.nan)
    if n_occurrences is None:
        n_occurrences = (a_pos + a_neg).sum(axis=1)
    rare = _shaped(n_occurrences, "n_occurrences", a_pos.shape[:1]) < min_count
    scores = np.array(scores, dtype=float)
    scores[rare] = np.nan
    return scores
