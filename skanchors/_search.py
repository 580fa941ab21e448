"""Beam search over predicate sets (Ribeiro et al. 2018, Algorithm 2, beam version).

The search talks to an *instance sampler* (one explained row, document or image) through the
protocol of :mod:`skanchors.samplers._protocol` (:class:`~skanchors.samplers.InstanceSampler`
and its :class:`~skanchors.samplers.Capabilities`), and to the bandit through arms
(:mod:`skanchors._arms`); it never asks which modality the instance is.

Samples are stored once (their keys or places in streams, their labels, and what the estimate
needs of them: which predicates they satisfy, or their base rows) and reused by every candidate
they are valid draws for (see :class:`skanchors._samples.SampleStore`); all samples one bandit
step needs go to the model in one call, and perturbations that repeat are predicted once.
"""

from __future__ import annotations

import numpy as np

from ._acceptance import (  # noqa: F401 (re-exported)
    _MAX_VALIDATION_SAMPLES,
    ACCEPTANCE_TOLERANCE,
    VALIDATION_TOLERANCE,
    _below_threshold,
    _summary,
    _validate,
)
from ._bandit import _ranking, arm_bounds, arm_means
from ._reference import ReferenceArms, ReferenceStore
from ._samples import CandidateArms, SampleStore, _key_dtype  # noqa: F401 (re-exported)
from ._stratified import StratifiedArms, _arm_kernel  # noqa: F401 (re-exported)
from .samplers._protocol import check_instance

__all__ = [
    "SampleStore",
    "ReferenceStore",
    "CandidateArms",
    "ReferenceArms",
    "StratifiedArms",
    "beam_search",
    "estimate",
    "SearchResult",
]


def make_arms(store, candidates, parents):
    """The bandit's arms for ``candidates`` (``parents[i]`` is ``candidates[i]`` minus one)."""
    return store.arms(candidates, parents)


def estimate(store, order, beta):
    """Estimates of the anchor built by adding ``order``, and of each partial anchor on the way.

    ``order`` lists the anchor's predicates in the order the search added them (each
    predicate's parent is the ones before it), as the search estimated them. Returns
    ``(n_samples, precision, lower, upper)``: arrays of samples and precision of the partial
    anchors ``order[:1], ..., order[:k]`` (of the empty rule alone when ``order`` is empty),
    and the confidence bounds of the whole anchor.
    """
    order = list(order)
    prefixes = [tuple(sorted(order[:k])) for k in range(1, len(order) + 1)] or [()]
    parents = [tuple(order[: k - 1]) for k in range(1, len(order) + 1)] if order else None
    arms = store.arms(prefixes, parents)
    lb, ub = arm_bounds(arms, [len(prefixes) - 1], beta)
    n = arms.n_samples.astype(np.int64)
    return n, np.asarray(arm_means(arms), dtype=float), float(lb[0]), float(ub[0])


class SearchResult:
    """What the search found for one instance, before it becomes an :class:`~skanchors.Anchor`."""

    def __init__(
        self,
        anchor,
        order,
        is_anchor,
        store,
        coverage,
        beta,
        groups=None,
        width=None,
        validated=None,
    ):
        self.anchor = tuple(anchor)
        self.order = list(order)
        self.is_anchor = is_anchor
        self.store = store
        self.coverage = coverage
        self.beta = beta  # the rate the candidates were validated at (union bound included)
        self._groups, self._width = groups, width
        # (n_samples, precision, lower, upper) of the anchor's validation, on the samples
        # drawn after it was chosen; None when no rule was validated as an anchor
        self.validated = validated

    def shown(self, k=None):
        """The predicates of the first ``k`` steps (all by default) that the rule needs:
        those of ``order[:k]`` without the ones a narrower predicate of their group implies
        (the same rule, as it is printed)."""
        order = self.order[: len(self.order) if k is None else k]
        if self._width is None:
            return list(order)
        narrowest = {}
        for p in order:
            g = self._groups[p]
            if g not in narrowest or self._width[p] < self._width[narrowest[g]]:
                narrowest[g] = p
        return [p for p in order if narrowest[self._groups[p]] == p]


def _extensions(parent, d, groups, width):
    """The predicates (of ``d``) that extend rule ``parent``: those it does not hold, where a
    predicate of a group the rule already has must be narrower (smaller ``width``, its
    coverage) than the rule's narrowest one of that group. ``width`` None: any predicate."""
    if width is None:
        return [p for p in range(d) if p not in parent]
    narrowest = {}
    for q in parent:
        narrowest[groups[q]] = min(narrowest.get(groups[q], np.inf), width[q])
    return [p for p in range(d) if width[p] < narrowest.get(groups[p], np.inf)]


def beam_search(
    instance,
    predict,
    target,
    *,
    threshold,
    delta,
    epsilon,
    beam_size,
    max_anchor_size,
    batch_size,
    bandit,
    rng,
    shared=None,
):
    """Find the anchor of one instance (Ribeiro et al. 2018, Algorithm 2, beam version).

    Returns a :class:`SearchResult`. The search maximises coverage among candidates validated
    to reach ``threshold``; rounds extend each of the ``beam_size`` best candidates (chosen by
    the bandit on precision) by one predicate, and stop when no extension can beat the coverage
    of the best anchor found, or at ``max_anchor_size`` predicates.
    """
    check_instance(instance)
    make_store = ReferenceStore if instance.capabilities.reference_rows else SampleStore
    store = make_store(instance, predict, target, rng, shared)
    d = instance.n_predicates
    # Predicates of one group are nested (tabular: the bounds on one side of a feature): a
    # rule gains one only if it is narrower than the rule's own (the wider one is then
    # redundant, and left out of the anchor as printed; see SearchResult.shown).
    groups = instance.predicate_groups
    if groups is None:
        groups, width = list(range(d)), None
    else:
        groups = [int(g) for g in groups]
        width = instance.coverage([(p,) for p in range(d)]).tolist()
    # Samples from D(z) itself serve every candidate of the first round.
    store.draw([((), batch_size)])
    max_size = d if max_anchor_size is None else min(max_anchor_size, d)
    # Union bound over every candidate the search validates: the empty rule and at most
    # beam_size candidates in each of at most max_size rounds. (The authors' code uses
    # 1 + (beam_size - 1) * d, which for beam_size=1 is no union at all: rules below the
    # threshold then pass more often than delta allows.)
    beta = np.log((1.0 + beam_size * max_size) / delta)
    empty = store.arms([()])
    known_precision = {}  # the estimated precision of each beam, when it was chosen
    valid, rates = _validate(empty, [0], threshold, beta, batch_size)
    if valid[0]:
        validated = _summary(empty, 0, rates[0])
        return SearchResult((), [], True, store, 1.0, beta, groups, width, validated)
    known_precision[()] = float(arm_means(empty)[0])

    beams = {0: [()]}
    # The order predicates were added in and the parent, of the beams only: a round of a
    # document of d words has about d candidates, and keeping them all for every round grew
    # with d times the rounds squared.
    order = {(): []}
    parent_of = {}
    best, best_coverage, best_key = None, -1.0, None
    size = 1
    while size <= max_size:
        candidates = []
        added = {}  # candidate -> (its parent, the predicate it adds)
        for parent in beams[size - 1]:
            for p in _extensions(parent, d, groups, width):
                cand = tuple(sorted(parent + (p,)))
                if cand in added:
                    continue
                added[cand] = (parent, p)
                candidates.append(cand)
        if not candidates:
            break
        coverage = instance.coverage(candidates)
        keep = coverage > best_coverage
        if store.draws_reference_rows:  # a rule no reference row satisfies has no samples
            keep &= coverage > 0
        candidates = [c for c, k in zip(candidates, keep) if k]
        if not candidates:
            break
        cov = dict(zip(candidates, coverage[keep]))
        arms = make_arms(store, candidates, [added[c][0] for c in candidates])
        arms.coverage = coverage[keep]  # ties in precision go to the broader rule
        n_best = min(beam_size, len(candidates))
        # A round in which every candidate is confidently below the threshold holds no
        # anchor: its only use is to choose the rules the next round extends, and those are
        # then simply the most precise ones, without the bandit's epsilon-identification
        # (whose samples at precisions far from 0 or 1 are the search's most expensive).
        # Only for arms that say it pays (capabilities.hopeless_rounds: the tabular ones): a
        # text sample counts for every candidate whose words it kept, so there the bandit
        # ranks the candidates from shared samples while the check would sample each of
        # them (more rows for the same valid anchors).
        if (
            arms.capabilities.hopeless_rounds
            and n_best < len(candidates)
            and _below_threshold(
                arms,
                threshold,
                beta,
                batch_size,
                [known_precision.get(added[c][0], 0.0) for c in candidates],
            )
        ):
            chosen = _ranking(arms)[-n_best:]
        else:
            chosen = bandit.select(
                arms, n_best, epsilon=epsilon, delta=delta, batch_size=batch_size
            )
        chosen = np.asarray(chosen)
        beams[size] = [candidates[i] for i in chosen]
        for cand in beams[size]:
            parent, p = added[cand]
            parent_of[cand] = parent
            order[cand] = order[parent] + [p]
        del added
        known_precision.update(zip(beams[size], arm_means(arms)[chosen].tolist()))
        # The chosen rules are validated on samples drawn after the choice: the samples that
        # chose them are the best looking of many (the winner's curse), and counting them
        # again let rules of precision 0.92 pass a threshold of 0.95 in most searches of a
        # text whose every rule was that precise (tests/test_acceptance.py).
        fresh = store.arms(beams[size], fresh=True)
        positions = np.arange(len(chosen))
        valid, rates = _validate(fresh, positions, threshold, beta, batch_size)
        # Ties in perturbation coverage (text: keep_proba ** size, the same for every rule of
        # a size) go to the more precise rule: breaking them by reference-document coverage
        # instead picks common words ("movie", "some") that hold less often on real
        # held-out sentences.
        precision = arm_means(fresh)[positions]
        for i, (cand, ok, prec) in enumerate(zip(beams[size], valid, precision)):
            if not ok or cov[cand] < best_coverage:
                continue
            key = (cov[cand], prec)
            if best is None or key > best_key:
                best, best_coverage, best_key = cand, cov[cand], key
                validated = _summary(fresh, i, rates[i])
        size += 1
    if best is not None:
        return SearchResult(
            best, order[best], True, store, best_coverage, beta, groups, width, validated
        )
    # No valid anchor: among the beams of every round, the rule the bandit finds best. With
    # unlimited samples that is the best precision within epsilon (KL-LUCB's guarantee). When
    # the samples run out (reference rows: a rule covering k rows has at most k), the bandit
    # can no longer tell the rules apart and the best mean goes to some rule of 2 or 3 rows
    # at 1.00: rank by the lower confidence bound instead, the precision the rule surely has.
    # With reference rows this gives fallbacks that hold more often on held-out rows, and
    # broader ones.
    pool = [c for s in range(1, size) for c in beams.get(s, [])]
    if not pool:  # nothing to add to the empty rule (no informative predicate)
        return SearchResult((), [], False, store, 1.0, beta, groups, width)
    arms = make_arms(store, pool, [parent_of[c] for c in pool])
    arms.coverage = instance.coverage(pool)
    pick = bandit.select(arms, 1, epsilon=epsilon, delta=delta, batch_size=batch_size)
    best = pool[int(np.asarray(pick)[-1])]
    if arms.capabilities.finite_supply:
        best = pool[int(np.argmax(arm_bounds(arms, np.arange(len(pool)), beta)[0]))]
    cov = float(instance.coverage([best])[0])
    return SearchResult(best, order[best], False, store, cov, beta, groups, width)
