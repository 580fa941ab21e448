"""Candidate filtering of :class:`~skanchors.GlobalAnchorAggregator`: which words to test.

Before each batch the aggregator asks, for every word ``w`` and class ``c``, whether testing
the occurrences of ``w`` in the batch can still matter for the top-k of ``c``. Two answers:

:func:`exact_worth_testing` (``WordFilter(filtering="exact")``, the default)
    A word is skipped only when *no* outcome of the tests still to come -- those of the call's
    remaining documents and those skipped before -- can lift it into the top-k at the end of
    the call: the upper bound of its final score (every remaining occurrence an anchor) is
    compared with the ``k``-th largest *lower* bound of the other words' final scores (every
    remaining occurrence a non-anchor), which can only rise as documents are processed. With
    the same outcome of every test it runs, the top-k is then that of a run without filtering.
    Per aggregation:

    ``sq``, ``av``
        A word's score depends on its own counts only and grows with ``A+`` and falls with
        ``A-`` (``G_sq = sqrt(A+)``, ``G_av = A+ / (A+ + A-)``): the bounds are per word and
        class.
    ``h``
        ``G_h = (1 - (H_w - H_min) / (H_max - H_min)) sqrt(A+)`` also depends on the extreme
        entropies ``H_min``, ``H_max`` over all words, and a word's entropy on its counts in
        *every* class. A word is skipped (in every class at once) only when its upper bound
        ``sqrt(A+ + remaining)`` is below the ``k``-th lower bound in every class, and when it
        cannot be the word that sets ``H_min`` or ``H_max`` (its entropy is bounded away from
        them, or pinned at 0): then skipping it changes no other word's score. Lower bounds of
        the other words use ``H_min >= 0`` and ``H_max >= max_u H_lo(u)``; entropy bounds are
        exact for two classes and conservative beyond (``log`` of the classes a word can reach,
        min-entropy below).
    ``pr``, ``inverse_pr``
        ``G_pr`` divides by the totals ``sum_w A+(w, c)`` and ``sum_w A-(w, c)``, which every
        occurrence of every word enters: an untested occurrence leaves them unknown, and with
        them the order of the words. No occurrence can be proven irrelevant, so nothing is
        skipped.
    ``base``
        Ignores anchors; the aggregator tests nothing.

:func:`optimistic_worth_testing` (``WordFilter(filtering="optimistic")``)
    The seed's filter: the upper bound is compared with the *current* ``k``-th score, which
    for ``av``, ``h``, ``pr`` and ``inverse_pr`` can still fall; approximate (a word skipped
    early can belong to the final top-k), and cheaper.

Both take the counts as arrays of shape ``(n_words, n_classes)``; ``remaining`` holds, per word
and class, the occurrences whose outcome is not counted but would be in a run without
filtering (the call's pending occurrences of the words that are tested at all, plus the ones
filtering skipped before).
"""

from __future__ import annotations

import numpy as np

from .functions import pr_estimates

__all__ = ["exact_worth_testing", "optimistic_worth_testing"]

# Relative margin of the bounds of ``h``, whose scores are computed by other float operations
# than the bounds (logs and divisions); the bounds of ``sq`` and ``av`` compare exactly.
_TOL = 1e-9


def _kth_largest(values, ranked, k):
    """Per class, the ``k``-th largest of ``values`` over the ``ranked`` words (``-inf`` when
    fewer than ``k`` are ranked: then every word may still enter the top-k)."""
    out = np.full(values.shape[1], -np.inf)
    for c in range(values.shape[1]):
        vals = values[ranked[:, c], c]
        if len(vals) >= k:
            out[c] = np.partition(vals, len(vals) - k)[len(vals) - k]
    return out


def exact_worth_testing(name, a_pos, a_neg, remaining, ranked, k):
    """Which (word, class) may still reach the final top-k (see the module notes).

    Parameters
    ----------
    name : str
        The aggregation.
    a_pos, a_neg : ndarray of shape (n_words, n_classes)
        Tested anchors and non-anchors so far.
    remaining : ndarray of shape (n_words, n_classes)
        Occurrences whose outcome a run without filtering would count and this one does not
        know (yet).
    ranked : bool ndarray of shape (n_words, n_classes)
        Words that will be ranked in the class whatever the remaining outcomes (scored and
        already an anchor there).
    k : int

    Returns
    -------
    worth : bool ndarray of shape (n_words, n_classes)
        False where the word's occurrences in the class can be left untested.
    """
    a_pos = np.asarray(a_pos, dtype=float)
    a_neg = np.asarray(a_neg, dtype=float)
    rem = np.asarray(remaining, dtype=float)
    worth = np.ones(a_pos.shape, dtype=bool)
    if name in ("sq", "av"):
        if name == "sq":  # sqrt is monotone: compare the counts themselves, exactly
            low, high = a_pos, a_pos + rem
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                low = a_pos / (a_pos + a_neg + rem)
                high = (a_pos + rem) / (a_pos + a_neg + rem)
        # (one correctly rounded operation each: float(high) < float(low) implies high < low)
        kth = _kth_largest(low, ranked, k)
        worth = ~(high < kth[None, :])
    elif name == "h":
        worth = _h_worth_testing(a_pos, rem, ranked, k)
    return worth


def _entropy(p):
    """Binary entropy (natural log) of ``p``, 0 at 0 and 1."""
    p = np.clip(p, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
        u = np.where(p < 1, -(1 - p) * np.log(np.where(p < 1, 1 - p, 1.0)), 0.0)
    return t + u


def entropy_bounds(low, high):
    """Bounds ``(H_lo, H_hi)`` of the entropy of ``sqrt(A+) / sum sqrt(A+)`` over the classes,
    for every ``A+`` between ``low`` and ``high`` (per word and class) with an anchor somewhere.

    Two classes: exact (the share of class 1 is monotone in each count, the entropy unimodal in
    it). More: ``log`` of the number of classes the word can reach above, the min-entropy
    ``-log max_c p_c`` below. A word that can reach at most one class has entropy exactly 0.
    """
    s_lo, s_hi = np.sqrt(low), np.sqrt(high)
    reach = (high > 0).sum(axis=1)
    n_classes = low.shape[1]
    if n_classes == 2:
        with np.errstate(divide="ignore", invalid="ignore"):
            p_lo = np.where(s_hi[:, 0] > 0, s_lo[:, 1] / (s_lo[:, 1] + s_hi[:, 0]), 1.0)
            p_hi = np.where(s_hi[:, 1] > 0, s_hi[:, 1] / (s_hi[:, 1] + s_lo[:, 0]), 0.0)
        p_lo = np.nan_to_num(p_lo, nan=0.0)
        p_hi = np.nan_to_num(p_hi, nan=1.0)
        e_lo, e_hi = _entropy(p_lo), _entropy(p_hi)
        h_lo = np.minimum(e_lo, e_hi)
        h_hi = np.where((p_lo <= 0.5) & (p_hi >= 0.5), np.log(2.0), np.maximum(e_lo, e_hi))
    else:
        h_hi = np.log(np.maximum(reach, 1)).astype(float)
        others = s_lo.sum(axis=1, keepdims=True) - s_lo
        with np.errstate(divide="ignore", invalid="ignore"):
            p_max = np.where(s_hi > 0, s_hi / (s_hi + others), 0.0)
        p_max = np.nan_to_num(p_max, nan=1.0).max(axis=1)
        with np.errstate(divide="ignore"):
            h_lo = np.where(p_max > 0, -np.log(np.where(p_max > 0, p_max, 1.0)), 0.0)
    pinned = reach <= 1
    h_lo = np.where(pinned, 0.0, np.maximum(h_lo, 0.0))
    h_hi = np.where(pinned, 0.0, h_hi)
    return h_lo, h_hi


def _h_worth_testing(a_pos, rem, ranked, k):
    low, high = a_pos, a_pos + rem
    h_lo, h_hi = entropy_bounds(low, high)
    pinned = (high > 0).sum(axis=1) <= 1  # entropy exactly 0 whenever defined
    certain = (low > 0).any(axis=1)  # has an anchor in every completion
    floor = h_lo[certain].max() if certain.any() else -np.inf  # H_max >= floor
    ceil = h_hi[certain].min() if certain.any() else np.inf  # H_min <= ceil
    min_is_zero = bool((certain & pinned).any())  # a word whose entropy is 0 for sure
    # Can the word's unknown outcomes move H_min or H_max (and so every other word's score)?
    invariant = pinned & certain
    max_safe = (pinned & certain.any()) | (h_hi < floor - _TOL)
    min_safe = min_is_zero | (h_lo > ceil + _TOL)
    safe = invariant | (max_safe & min_safe)
    # Lower bound of the factor 1 - (H_w - H_min) / (H_max - H_min): at most H_hi / H_max with
    # H_min >= 0, and H_max >= max(H_w, floor).
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(floor > 0, np.clip(1.0 - h_hi / floor, 0.0, 1.0), 0.0)
    factor = np.where(pinned, 1.0, factor)
    lower = np.sqrt(low) * factor[:, None] * (1 - _TOL)
    upper = np.sqrt(high)  # the factor is at most 1
    kth = _kth_largest(lower, ranked, k)
    out_of_reach = (upper < kth[None, :]) | (high == 0)
    skip = safe & out_of_reach.all(axis=1)
    return np.repeat(~skip[:, None], a_pos.shape[1], axis=1)


def optimistic_worth_testing(
    name, a_pos, a_neg, remaining, others, scores, ranked, totals, k, alpha
):
    """The seed's approximate filter: the word's upper bound against the *current* ``k``-th
    score of its class.

    The bound is the word's pseudo-score when all its remaining occurrences in the class are
    anchors (``inverse_pr``: none is) and, for ``pr``, when every remaining occurrence of the
    *other* words (``others``) is not an anchor (which lowers the word's share ``A- / sum A-``
    the most). The current ``k``-th score can still fall (``av``, ``h``, ``pr``,
    ``inverse_pr``), so a word skipped early may belong to the final top-k.
    """
    a_pos = np.asarray(a_pos, dtype=float)
    a_neg = np.asarray(a_neg, dtype=float)
    rem = np.asarray(remaining, dtype=float)
    sp, sn = (np.asarray(t, dtype=float)[None, :] for t in totals)
    with np.errstate(divide="ignore", invalid="ignore"):
        if name in ("pr", "inverse_pr"):
            q, _ = pr_estimates(a_pos, a_neg, alpha, totals)
            if name == "pr":
                key = q
                fn_low = np.where(a_neg > 0, a_neg / np.maximum(sn + others, 1), 0.0)
                fp_high = (a_pos + rem) / np.maximum(sp + rem, 1)
                bound = fp_high / alpha - (1 / alpha - 1) * fn_low
            else:  # inverse: the fewer anchors the better; rank by -q
                key = -q
                fp_low = np.where(a_pos > 0, a_pos / np.maximum(sp + others, 1), 0.0)
                low = fp_low / alpha - (1 / alpha - 1) * (a_neg + rem) / np.maximum(sn + rem, 1)
                bound = -low
        elif name in ("sq", "h"):
            key = scores
            bound = np.sqrt(a_pos + rem)
        else:  # av
            key = scores
            bound = (a_pos + rem) / np.maximum(a_pos + a_neg + rem, 1)
    out = np.ones(scores.shape, dtype=bool)
    for c in range(scores.shape[1]):
        vals = key[ranked[:, c], c]
        if len(vals) < k:
            continue
        kth = np.partition(vals, len(vals) - k)[len(vals) - k]
        out[:, c] = bound[:, c] >= kth
    return out
