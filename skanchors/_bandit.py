"""Best-arm identification for anchor candidates: the bandits KL-LUCB and BatchSAR.

Every candidate rule is an *arm* whose unknown payoff is its precision, a Bernoulli mean.
This module knows nothing about rules, features or models: it sees arrays of sample counts
and successes, and asks an ``arms`` object (see :class:`skanchors._samples.CandidateArms`)
to draw more samples. Arms whose precision is not a plain Bernoulli mean (a stratified
estimate, :class:`skanchors._stratified.StratifiedArms`) supply ``precision_estimates()`` and
``precision_bounds(indices, beta)``; otherwise both come from ``n_samples`` and
``n_positives``, with the KL confidence bounds of :mod:`skanchors._bounds`.

References
----------
Kaufmann, E. and Kalyanakrishnan, S. (2013). Information complexity in bandit subset selection.
Ribeiro, M. T., Singh, S. and Guestrin, C. (2018). Anchors: high-precision model-agnostic
explanations, Algorithm 1-3.
Jun, K.-S., Jamieson, K., Nowak, R. and Zhu, X. (2016). Top arm identification in multi-armed
bandits with batch arm pulls.
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from ._arms import check_arms
from ._bounds import kl_lower_bound, kl_upper_bound

__all__ = [
    "BatchSAR",
    "KLLUCB",
    "compute_beta",
]


def compute_beta(n_arms, t, delta, exploration="theory"):
    """Exploration rate of KL-LUCB at round ``t``.

    ``exploration="theory"`` (Kaufmann & Kalyanakrishnan 2013, eq. 7):
    ``beta(t, delta) = log(k1 K t^alpha / delta) + log log(k1 K t^alpha / delta)`` with
    ``k1 = 405.5`` and ``alpha = 1.1``, the constants for which the paper proves that the
    returned arms are epsilon-optimal with probability at least ``1 - delta`` (the rate the
    authors' anchor code and alibi use).

    ``exploration="light"``: ``beta(t, delta) = log((log t + 1) / delta)``, a rate that grows
    like the confidence level of one arm and round; it is not covered by the proof (the
    selection may then miss the epsilon-best arms more often than ``delta``), and is several
    times smaller than the theory's rate for a dozen arms, so the bandit stops with far fewer
    samples.

    Examples
    --------
    >>> round(compute_beta(10, 1, 0.1), 4)
    12.9721
    >>> round(compute_beta(10, 1, 0.1, "light"), 4)
    2.3026
    """
    if exploration == "light":
        return math.log((math.log(t) + 1.0) / delta)
    if exploration != "theory":
        raise ValueError(f"exploration must be 'theory' or 'light', got {exploration!r}.")
    alpha, k1 = 1.1, 405.5
    temp = math.log(k1 * n_arms * t**alpha / delta)
    return temp + math.log(temp)


def _check_arms(arms, n_best):
    check_arms(arms)
    n_arms = len(arms.n_samples)
    if not isinstance(n_best, Integral) or not 1 <= n_best:
        raise ValueError(f"n_best must be a positive integer, got {n_best!r}.")
    return n_arms


class KLLUCB:
    """KL-LUCB: the ``n_best`` arms with the highest precision, up to a tolerance.

    Each round computes KL confidence bounds of all arms, finds the weakest arm of the current
    top set (lowest lower bound) and the strongest arms outside it (highest upper bounds), and
    samples them *in one model call*, until the bounds overlap by at most ``epsilon``.

    Parameters
    ----------
    pulls : {"pair", "ambiguous"}, default="pair"
        Which arms each round samples: ``"pair"`` is KL-LUCB proper (the weakest arm of the
        top set and the strongest challenger: fewest samples); ``"ambiguous"`` samples every
        arm whose bound still crosses the boundary by more than ``epsilon``: fewer model
        calls for more rows predicted, for models with a high cost per call and a low cost per
        row.
    challengers : int, default=2
        With ``pulls="pair"``, how many of the strongest arms outside the top set are sampled
        each round with its weakest arm (those whose upper bound still exceeds that arm's lower
        bound by more than ``epsilon``). 1 is KL-LUCB as published; 2 makes fewer model calls
        for slightly more rows predicted, at the same held-out precision (see the documentation's
        performance page). The rounds are fewer, so the round-dependent exploration rate grows
        more slowly;
        the confidence bounds still hold for every arm and round, as the proof's union bound
        is over rounds and arms, not over how many arms a round samples.
    warm_start : bool, default=True
        Give every arm without samples ``batch_size`` of them in one model call before the
        first round. ``False`` draws a single sample per arm as the authors' code does, which
        then costs about one model call per arm.
    exploration : {"light", "theory"}, default="light"
        Exploration rate of the confidence bounds (``skanchors._bandit.compute_beta``).
        ``"theory"`` is the rate of the KL-LUCB proof (epsilon-correct selection with
        probability ``1 - delta``), as in the authors' code and alibi. ``"light"``
        (``log((log t + 1) / delta)``) is not covered by that proof (see :meth:`select`);
        it stops much sooner, with a fraction of the rows and model calls. The selection only
        chooses which candidates the search validates and extends; every anchor returned is
        still validated against ``threshold`` at confidence ``delta`` with the search's own
        rate, so the precision guarantee does not depend on this choice.
    max_rounds : int, default=10_000
        Safety cap on the number of rounds.

    Examples
    --------
    >>> import numpy as np
    >>> from skanchors import KLLUCB, Arms
    >>> class Coins(Arms):  # arms with true means 0.2, 0.5 and 0.9
    ...     def __init__(self):
    ...         self.means = np.array([0.2, 0.5, 0.9]); self.rng = np.random.default_rng(0)
    ...         self.n_samples = np.zeros(3); self.n_positives = np.zeros(3)
    ...     def pull(self, idx, n):
    ...         for i in idx:
    ...             self.n_samples[i] += n
    ...             self.n_positives[i] += self.rng.binomial(n, self.means[i])
    >>> sorted(KLLUCB().select(Coins(), 1, epsilon=0.1, delta=0.05, batch_size=10).tolist())
    [2]
    """

    def __init__(
        self,
        *,
        pulls="pair",
        challengers=2,
        warm_start=True,
        exploration="light",
        max_rounds=10_000,
    ):
        if pulls not in ("pair", "ambiguous"):
            raise ValueError(f"pulls must be 'pair' or 'ambiguous', got {pulls!r}.")
        if not isinstance(challengers, Integral) or challengers < 1:
            raise ValueError(f"challengers must be a positive integer, got {challengers!r}.")
        self.challengers = int(challengers)
        if exploration not in ("light", "theory"):
            raise ValueError(f"exploration must be 'light' or 'theory', got {exploration!r}.")
        if not isinstance(warm_start, (bool, np.bool_)):
            raise ValueError(f"warm_start must be True or False, got {warm_start!r}.")
        if not isinstance(max_rounds, Integral) or max_rounds < 1:
            raise ValueError(f"max_rounds must be a positive integer, got {max_rounds!r}.")
        self.pulls = pulls
        self.warm_start = bool(warm_start)
        self.exploration = exploration
        self.max_rounds = max_rounds

    def __repr__(self):
        return (
            f"KLLUCB(pulls={self.pulls!r}, challengers={self.challengers}, "
            f"warm_start={self.warm_start}, "
            f"exploration={self.exploration!r}, max_rounds={self.max_rounds})"
        )

    def select(self, arms, n_best, *, epsilon, delta, batch_size):
        """Return the indices of the ``n_best`` best arms, best last.

        Parameters
        ----------
        arms : skanchors.Arms
            Has arrays ``n_samples`` and ``n_positives`` (updated in place) and a method
            ``pull(indices, n)`` that draws ``n`` more samples for each arm in ``indices``;
            its ``capabilities`` say which optional members it has. An array ``coverage``,
            when set, breaks ties in estimated precision: the broader rule ranks higher (the
            anchor search sets it).
        n_best : int
        epsilon : float
            Tolerance: stop when the best excluded arm's upper bound exceeds the worst
            included arm's lower bound by at most ``epsilon``.
        delta : float
            Confidence parameter of the exploration rate (:func:`compute_beta`). Only with
            ``exploration="theory"`` does it carry Kaufmann and Kalyanakrishnan's guarantee:
            the ``n_best`` arms returned all have a mean above the ``n_best``-th best mean
            minus ``epsilon``, with probability at least ``1 - delta`` (for arms whose
            confidence bounds hold as the proof's KL bounds do, independent samples of each
            arm). With ``"light"`` (the default) there is no such guarantee: its rate,
            ``log((log t + 1) / delta)``, is the level of one arm's bound at one round,
            whereas the proof needs the bounds of all arms at all rounds to hold together;
            ``delta`` then sets how wide the bounds are, and how often the selection misses
            the epsilon-best arms is not bounded by it. (The anchor search validates every
            rule it returns on its own, at its own rate.)
        batch_size : int
            Samples drawn per arm and round.
        """
        n_arms = _check_arms(arms, n_best)
        empty = np.flatnonzero(arms.n_samples == 0)
        if empty.size:
            warm = self.warm_start
            size = (batch_size if warm is True else int(warm)) if warm and n_best < n_arms else 1
            arms.pull(empty, size)
        if n_best >= n_arms:
            return _ranking(arms)[-n_arms:]
        # Arms with a finite supply of samples (arms.n_available) are not pulled once spent.
        available = _available(arms)
        for t in range(1, self.max_rounds + 1):
            order = _ranking(arms)
            top, rest = order[-n_best:], order[:-n_best]
            beta = compute_beta(n_arms, t, delta, self.exploration)
            k = min(self.challengers, len(rest))
            if self.pulls == "pair" and arms.capabilities.extreme_bounds:
                # Only the extremes matter: arms that can tell them apart compute their bounds.
                i, ub_top = arms.extreme_bound(rest, beta, "upper", k=k)
                j, lb_min = arms.extreme_bound(top, beta, "lower")
                lb_min = lb_min[0]
                if ub_top[0] - lb_min <= epsilon:
                    break
                strong = rest[i[ub_top - lb_min > epsilon]]
                if not _pull(arms, np.concatenate([top[j], strong]), batch_size, available):
                    break
                continue
            ub = arm_bounds(arms, rest, beta, side="upper")[1]
            lb = arm_bounds(arms, top, beta, side="lower")[0]
            weakest = top[np.argmin(lb)]
            if ub.max() - lb.min() <= epsilon:
                break
            if self.pulls == "pair":
                strongest = np.argsort(-ub, kind="stable")[:k]
                strong = rest[strongest[ub[strongest] - lb.min() > epsilon]]
                pulled = np.concatenate([[weakest], strong])
            else:
                pulled = np.concatenate(
                    [rest[ub - lb.min() > epsilon], top[ub.max() - lb > epsilon]]
                )
            if not _pull(arms, pulled, batch_size, available):
                break
        return _ranking(arms)[-n_best:]


def _available(arms):
    """``arms.n_available`` for arms of finite supply, else None."""
    return arms.n_available if arms.capabilities.finite_supply else None


def _pull(arms, indices, n, available):
    """Pull the arms that still have samples to give; False when none has."""
    indices = np.asarray(indices, dtype=np.intp)
    if available is not None:
        indices = indices[arms.n_samples[indices] < available[indices]]
        if not indices.size:
            return False
    arms.pull(indices, n)
    return True


class BatchSAR:
    """Successive Accepts and Rejects with batched pulls (Jun et al. 2016).

    A fixed-budget bandit made for parallel evaluation: each phase tops every surviving arm
    up to the phase's count in one batch (one model call), then either accepts the
    empirically best arm or rejects the worst, whichever gap is larger. Phase counts follow
    the SAR schedule ``n_s = ceil((T - K) / (logbar(K) (K + 1 - s)))`` (Bubeck et al. 2013).
    In the paper every surviving arm has the same count, so a phase pulls each by the same
    number; here arms can start with samples of their own (shared with other rules, or drawn
    in an earlier round), so each arm is pulled by what it lacks, and an arm already past
    the phase's count is not pulled. Arms that can draw a different number of samples per arm
    in one call (``pull_each(indices, counts)``, with ``capabilities.pulls_each``) get exactly
    that; with only ``pull(indices, n)``, the arms that lack samples are pulled by the largest
    lack (one call still; those that lacked fewer get more than the schedule asks).

    Parameters
    ----------
    samples_per_arm : int or None, default=None
        Budget ``T / K``. ``None`` derives it from the tolerance and confidence with
        Hoeffding's inequality, ``2 log(2K / delta) / epsilon^2``: the samples that would
        know one arm's mean to ``epsilon / 2``. SAR spends the budget unevenly: the first arm
        is decided after about ``(T - K) / (logbar(K) K)`` samples each, fewer than ``T / K``
        (180 against 508 for 15 arms at ``epsilon=0.15, delta=0.1``), the last ones after
        more. Its picks are validated apart, so this changes costs, not the guarantee.

    Examples
    --------
    >>> import numpy as np
    >>> from skanchors import Arms, BatchSAR
    >>> class Coins(Arms):
    ...     def __init__(self):
    ...         self.means = np.array([0.2, 0.5, 0.9]); self.rng = np.random.default_rng(0)
    ...         self.n_samples = np.zeros(3); self.n_positives = np.zeros(3)
    ...     def pull(self, idx, n):
    ...         for i in idx:
    ...             self.n_samples[i] += n
    ...             self.n_positives[i] += self.rng.binomial(n, self.means[i])
    >>> BatchSAR().select(Coins(), 1, epsilon=0.1, delta=0.05, batch_size=10).tolist()
    [2]
    """

    def __init__(self, *, samples_per_arm=None):
        if samples_per_arm is not None and (
            not isinstance(samples_per_arm, Integral) or samples_per_arm < 1
        ):
            raise ValueError(
                f"samples_per_arm must be a positive integer or None, got {samples_per_arm!r}."
            )
        self.samples_per_arm = samples_per_arm

    def __repr__(self):
        return f"BatchSAR(samples_per_arm={self.samples_per_arm})"

    def select(self, arms, n_best, *, epsilon, delta, batch_size):
        """Return the indices of the ``n_best`` best arms, best last (see :meth:`KLLUCB.select`).

        ``batch_size`` is the least number of samples each surviving arm has after a phase
        (the first phase draws at least that many); later phases top every surviving arm up to
        the schedule's count, in one model call each: each arm is pulled by what it lacks (see
        the class notes).
        """
        n_arms = _check_arms(arms, n_best)
        if n_best >= n_arms:
            empty = np.flatnonzero(arms.n_samples == 0)
            if empty.size:
                arms.pull(empty, 1)
            return _ranking(arms)[-n_arms:]
        per_arm = self.samples_per_arm
        if per_arm is None:
            per_arm = math.ceil(2.0 * math.log(2.0 * n_arms / delta) / epsilon**2)
        budget = per_arm * n_arms
        logbar = 0.5 + sum(1.0 / i for i in range(2, n_arms + 1))
        surviving = list(range(n_arms))
        accepted = []
        for phase in range(1, n_arms):
            if len(accepted) == n_best or len(accepted) + len(surviving) == n_best:
                break
            target = math.ceil((budget - n_arms) / (logbar * (n_arms + 1 - phase)))
            target = max(target, batch_size)
            need = np.array([target - arms.n_samples[i] for i in surviving])
            if need.max() > 0:
                self._top_up(arms, np.array(surviving), need)
            means = arm_means(arms)[surviving]
            order = _ranking(arms, surviving)[::-1]  # best first
            k_left = n_best - len(accepted)
            gap_top = means[order[0]] - means[order[k_left]]
            gap_bottom = means[order[k_left - 1]] - means[order[-1]]
            if gap_top > gap_bottom:
                accepted.append(surviving[order[0]])
                del surviving[order[0]]
            else:
                del surviving[order[-1]]
        if len(accepted) < n_best:
            order = _ranking(arms, surviving)[::-1]
            accepted += [surviving[i] for i in order[: n_best - len(accepted)]]
        chosen = np.array(accepted)
        return chosen[_ranking(arms, chosen)]

    @staticmethod
    def _top_up(arms, indices, need):
        """Pull each arm of ``indices`` by its ``need`` (the samples it lacks), in one model
        call: ``arms.pull_each(indices, counts)`` where the arms can, else ``arms.pull``
        of the arms that lack samples by the largest lack."""
        lacking = need > 0
        indices = indices[lacking]
        counts = np.ceil(need[lacking]).astype(np.int64)
        if arms.capabilities.pulls_each:
            arms.pull_each(indices, counts)
        else:
            arms.pull(indices, int(counts.max()))


def arm_means(arms):
    """Estimated precision of every arm (``arms.precision_estimates()`` for arms with their
    own estimator)."""
    if arms.capabilities.own_estimator:
        return np.asarray(arms.precision_estimates(), dtype=float)
    return arms.n_positives / np.maximum(arms.n_samples, 1)


def arm_bounds(arms, indices, beta, side="both"):
    """(lower, upper) confidence bounds of the given arms at exploration rate ``beta``.

    For plain arms, the KL bounds of the empirical mean at level ``beta / n_samples``; arms
    with their own estimator (``arms.precision_bounds``) compute them themselves. An arm
    without samples gets the trivial bounds ``(0, 1)``.
    """
    indices = np.asarray(indices)
    if arms.capabilities.own_estimator:
        return arms.precision_bounds(indices, beta, side=side)
    n = arms.n_samples[indices]
    means = arms.n_positives[indices] / np.maximum(n, 1)
    level = beta / np.maximum(n, 1)
    lb = np.where(n > 0, kl_lower_bound(means, level), 0.0)
    ub = np.where(n > 0, kl_upper_bound(means, level), 1.0)
    return lb, ub


def _ranking(arms, subset=None):
    """Arms (of ``subset``: positions in it) sorted by estimated precision, ascending.

    Ties in precision go to the broader rule: arms that know their rules' coverage
    (``arms.coverage``, which the anchor search sets: its objective) rank the larger one
    higher; then the higher index, for determinism. Without it, bounds="all" made BatchSAR
    keep the narrowest of three bounds that all held at precision 1 (coverage 0.17, where
    0.51 held too)."""
    means = arm_means(arms)
    coverage = arms.coverage
    if subset is not None:
        means = means[subset]
        coverage = None if coverage is None else np.asarray(coverage)[subset]
    if coverage is None:
        return means.argsort(kind="stable")
    return np.lexsort((np.arange(len(means)), coverage, means))


def make_bandit(bandit):
    """Resolve the ``bandit`` parameter of the explainer into a bandit object."""
    if bandit == "kl-lucb":
        return KLLUCB()
    if bandit == "batch-sar":
        return BatchSAR()
    if hasattr(bandit, "select") and callable(bandit.select):
        return bandit
    raise ValueError(
        "bandit must be 'kl-lucb', 'batch-sar' or an object with a select(arms, n_best, "
        f"epsilon=, delta=, batch_size=) method; got {bandit!r}."
    )
