"""KL confidence bounds of Bernoulli means, for plain and for stratified estimates.

Arrays of means and levels in, bounds out: the bandits (:mod:`skanchors._bandit`), the
stratified arms (:mod:`skanchors._stratified`) and the aggregations read them.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import rel_entr

__all__ = [
    "kl_bernoulli",
    "kl_lower_bound",
    "kl_upper_bound",
    "stratified_kl_bounds",
]

# Newton converges quadratically; 50 steps is a safety cap, never reached in practice.
_NEWTON_STEPS = 50

# Up to this many arms, bounds are computed arm by arm in plain floats: for a handful of arms
# numpy's fixed cost per call (about 20 calls per Newton step) outweighs the arithmetic; both
# compute the same KL bound, to 1e-9 (tests/test_bandit.py).
SCALAR_ARMS = 32


def kl_bernoulli(p, q):
    """Kullback-Leibler divergence KL(Bern(p) || Bern(q)), element-wise.

    Parameters
    ----------
    p, q : array-like of float in [0, 1]
        Means of the two Bernoulli distributions (broadcast against each other).

    Returns
    -------
    kl : ndarray or float
        ``p log(p/q) + (1-p) log((1-p)/(1-q))`` with the conventions ``0 log 0 = 0`` and
        ``KL = inf`` where ``q`` puts zero mass on an outcome that ``p`` has.

    Examples
    --------
    >>> round(float(kl_bernoulli(0.5, 0.25)), 6)
    0.143841
    >>> float(kl_bernoulli(0.3, 0.3))
    0.0
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    out = rel_entr(p, q) + rel_entr(1.0 - p, 1.0 - q)
    return out if out.ndim else float(out)


def _kl_bound(p, level, upper):
    """KL confidence bound by Newton's method from a point on the safe side of the root.

    ``f(q) = KL(p || q) - level`` is convex in q and monotone on each side of p, so Newton's
    iterates started where ``f >= 0`` move monotonically towards the root without crossing
    it: every iterate is a valid (conservative) bound, and convergence to float precision
    takes a handful of steps. Two starting points are valid and the closer one is used:
    Pinsker's ``p +- sqrt(level / 2)`` and, for the upper bound, the solution of
    ``p log p + (1 - p) log((1 - p) / (1 - q)) = level`` (a lower bound on KL for q > p; the
    lower bound's start is its mirror image), which always lies inside (0, 1).
    """
    p = np.asarray(p, dtype=float)
    level = np.broadcast_to(np.asarray(level, dtype=float), p.shape)
    shape = p.shape
    p, level = p.ravel(), np.maximum(level.ravel(), 0.0)
    if p.size <= SCALAR_ARMS:
        out = [_kl_bound_scalar(a, b, upper) for a, b in zip(p.tolist(), level.tolist())]
        return np.array(out, dtype=float).reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if upper:
            edge = p >= 1.0
            tail = (1.0 - p) * np.exp(-(level - _xlogx(p)) / (1.0 - p))
            q = np.minimum(p + np.sqrt(level / 2.0), 1.0 - tail)
        else:
            edge = p <= 0.0
            q = np.maximum(p - np.sqrt(level / 2.0), p * np.exp(-(level - _xlogx(1.0 - p)) / p))
    work = ~edge & (level > 0)
    out = p.copy()
    if work.any():
        pn, ln, qn = p[work], level[work], q[work]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for _ in range(_NEWTON_STEPS):
                f = rel_entr(pn, qn) + rel_entr(1.0 - pn, 1.0 - qn) - ln
                slope = (qn - pn) / (qn * (1.0 - qn))
                new = qn - f / slope
                new = np.where(np.isfinite(new), new, qn)
                # Monotone towards p; a step past the root through rounding is clipped back.
                new = np.clip(new, pn, qn) if upper else np.clip(new, qn, pn)
                done = np.abs(new - qn) <= 1e-15
                qn = new
                if done.all():
                    break
        out[work] = qn
    return out.reshape(shape)


def _xlogx(x):
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def kl_upper_bound(p, level):
    """Largest q >= p with ``KL(p || q) <= level`` (the KL-UCB upper confidence bound).

    Vectorised over arms and computed to float64 precision by Newton's method started on the
    safe side of the root (so the result is never tighter than the exact bound).

    Parameters
    ----------
    p : array-like of float in [0, 1]
        Empirical means.
    level : array-like of float >= 0
        Exploration level divided by the number of samples, ``beta / n``.

    Returns
    -------
    q : ndarray or float

    Examples
    --------
    >>> q = kl_upper_bound(0.5, 0.1)
    >>> round(float(q), 6)
    0.712879
    >>> bool(abs(kl_bernoulli(0.5, q) - 0.1) < 1e-12)
    True
    """
    out = _kl_bound(p, level, upper=True)
    return out if out.ndim else float(out)


def kl_lower_bound(p, level):
    """Smallest q <= p with ``KL(p || q) <= level`` (the KL-LCB lower confidence bound).

    Parameters
    ----------
    p : array-like of float in [0, 1]
        Empirical means.
    level : array-like of float >= 0
        Exploration level divided by the number of samples, ``beta / n``.

    Returns
    -------
    q : ndarray or float

    Examples
    --------
    >>> round(float(kl_lower_bound(0.5, 0.1)), 6)
    0.287121
    """
    out = _kl_bound(p, level, upper=False)
    return out if out.ndim else float(out)


def _two_term_rate(beta):
    """Rate ``b`` with ``(1 + b) exp(-b) = exp(-beta)``: the sum of two independent deviations
    whose tails are at most ``exp(-x)`` (a Gamma(2, 1) tail) exceeds ``b`` with probability at
    most ``exp(-beta)``.

    Newton's method on the convex ``h(b) = b - log(1 + b) - beta``: the first step lands on the
    right of the root and the iterates then decrease to it, so the result is never below the
    root (never a smaller, optimistic rate).
    """
    beta = np.asarray(beta, dtype=float)
    b = beta + np.log1p(beta)
    for _ in range(8):
        b = b - (b - np.log1p(b) - beta) * (1.0 + b) / np.maximum(b, 1e-300)
    return b * (1.0 + 1e-12)  # rounding stays on the safe side


def _joint_lower(p, n, w, rate, iters=60):
    """A lower bound on ``min sum_s w_s q_s`` s.t. ``sum_s n_s KL(p_s || q_s) <= rate``.

    Rows are arms, every stratum with samples and a positive weight. By weak duality, for every
    multiplier ``lam >= 0`` the dual function
    ``g(lam) = min_q [sum_s w_s q_s + lam (sum_s n_s KL(p_s || q_s) - rate)]`` is at most the
    constrained minimum, so *any* ``lam`` gives a valid (conservative) bound and the best one
    seen is (nearly) the exact minimum (strong duality: the problem is convex). The inner
    minimiser of each stratum solves ``(p - q) / (q (1 - q)) = c`` with ``c = w / (lam n)``,
    a quadratic with the stable root ``q = 2p / ((1 + c) + sqrt((1 + c)^2 - 4cp))``. The
    constraint ``h(u) = sum_s n_s KL(p_s || q_s) - rate`` (the derivative of ``g``) is solved
    in ``u = log lam`` by Newton's method from the Gaussian approximation, kept inside a
    bracket (bisection when a step leaves it), all arms at once: the vectorised twin of
    :func:`_joint_lower_pair`, typically 4-6 steps instead of 32 bisections.
    """
    m = p.shape[0]
    rate = np.asarray(rate, dtype=float).reshape(-1)
    # c = w / (lam n) is of order 1 near lam = w / n: bracket log lam around it.
    center = np.log(np.maximum((w / n).max(axis=1), 1e-300))
    lo, hi = center - 15.0, center + 15.0
    spread = (w * w * np.maximum(p * (1.0 - p), 1.0 / n) / n).sum(axis=1)
    u = np.clip(0.5 * np.log(spread / (2.0 * rate)), lo, hi)
    best = np.full(m, -np.inf)
    active = np.ones(m, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        best = _joint_lower_loop(p, n, w, rate, u, lo, hi, best, active, iters)
    # Rounding down to 1e-12 makes the bound independent of last-bit differences between
    # processes (n_jobs).
    return np.maximum(np.floor(best * 1e12) / 1e12, 0.0)


def _joint_lower_loop(p, n, w, rate, u, lo, hi, best, active, iters):
    """Newton/bisection iterations of :func:`_joint_lower` (inside one ``np.errstate``)."""
    for _ in range(iters):
        lam = np.exp(u)
        c = w / (lam[:, None] * n)
        root = np.sqrt(np.maximum((1.0 + c) ** 2 - 4.0 * c * p, 0.0))
        # The root lies in (0, p]; clipping removes rounding past p (KL would be inf at 1).
        q = np.minimum(2.0 * p / ((1.0 + c) + root), p)
        h = (n * (rel_entr(p, q) + rel_entr(1.0 - p, 1.0 - q))).sum(axis=1) - rate
        g = np.where(np.isfinite(h), (w * q).sum(axis=1) + lam * h, -np.inf)
        slope = -np.where(root > 0.0, n * c * c * q * (1.0 - q) / root, 0.0).sum(axis=1)
        best = np.where(active, np.maximum(best, g), best)
        lo = np.where(active & (h > 0.0), u, lo)
        hi = np.where(active & ~(h > 0.0), u, hi)
        active &= ~((np.abs(h) < 1e-8) | (hi - lo < 1e-12))
        if not active.any():
            break
        step = np.where((slope < 0.0) & np.isfinite(h), u - h / slope, np.nan)
        u = np.where(active, np.where((lo < step) & (step < hi), step, 0.5 * (lo + hi)), u)
    return best


def _kl_scalar(p, q):
    out = 0.0
    if p > 0.0:
        if q <= 0.0:
            return math.inf
        out += p * math.log(p / q)
    if p < 1.0:
        if q >= 1.0:
            return math.inf
        out += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return out


# Searches ask for the same bounds again (equal counts at the same rate: 45 % of the one-stratum
# bounds and 20 % of the two-strata ones over the benchmark's 20 Adult rows).
@functools.lru_cache(maxsize=8192)
def _joint_lower_pair(p1, n1, w1, p2, n2, w2, rate):
    """:func:`_joint_lower` for one arm with two informative strata, in plain floats.

    The bandit recomputes one or two arms per round, where numpy's per-call overhead would
    dominate. This scalar version solves ``h(u) = sum_s n_s KL(p_s || q_s) - rate = 0`` in
    ``u = log lam`` by Newton's method (``dh/du = -sum_s n_s c_s^2 q_s (1 - q_s) / sqrt(D_s)``),
    started from the Gaussian approximation and kept inside a bracket (bisection when a step
    leaves it); it keeps the best dual value seen, each one a valid lower bound.
    """
    strata = ((p1, n1, w1), (p2, n2, w2))

    def evaluate(u):
        lam = math.exp(u)
        k = g = slope = 0.0
        for p, n, w in strata:
            c = w / (lam * n)
            root = math.sqrt(max((1.0 + c) ** 2 - 4.0 * c * p, 0.0))
            q = min(2.0 * p / ((1.0 + c) + root), p)
            k += n * _kl_scalar(p, q)
            g += w * q
            if root > 0.0:
                slope -= n * c * c * q * (1.0 - q) / root
        h = k - rate
        return h, (g + lam * h if math.isfinite(h) else -math.inf), slope

    center = math.log(max(w1 / n1, w2 / n2))
    lo, hi = center - 15.0, center + 15.0
    spread = sum(w * w * max(p * (1.0 - p), 1.0 / n) / n for p, n, w in strata)
    u = min(max(0.5 * math.log(spread / (2.0 * rate)), lo), hi)
    best = -math.inf
    for _ in range(60):
        h, g, slope = evaluate(u)
        best = max(best, g)
        if h > 0.0:
            lo = u
        else:
            hi = u
        if abs(h) < 1e-8 or hi - lo < 1e-12:
            break
        step = u - h / slope if slope < 0.0 and math.isfinite(h) else math.nan
        u = step if lo < step < hi else 0.5 * (lo + hi)
    return max(math.floor(best * 1e12) / 1e12, 0.0)


def _xlogx_scalar(x):
    return x * math.log(x) if x > 0.0 else 0.0


@functools.lru_cache(maxsize=8192)
def _kl_bound_scalar(p, level, upper):
    """:func:`_kl_bound` for one float (same safe start and monotone Newton steps)."""
    if level <= 0.0:
        return p
    if upper:
        if p >= 1.0:
            return 1.0
        tail = (1.0 - p) * math.exp(-(level - _xlogx_scalar(p)) / (1.0 - p))
        q = min(p + math.sqrt(level / 2.0), 1.0 - tail)
    else:
        if p <= 0.0:
            return 0.0
        q = max(p - math.sqrt(level / 2.0), p * math.exp(-(level - _xlogx_scalar(1.0 - p)) / p))
    for _ in range(_NEWTON_STEPS):
        if not 0.0 < q < 1.0:
            break
        f = _kl_scalar(p, q) - level
        slope = (q - p) / (q * (1.0 - q))
        if slope == 0.0 or not math.isfinite(f):
            break
        new = q - f / slope
        new = min(max(new, p), q) if upper else min(max(new, q), p)
        done = abs(new - q) <= 1e-15
        q = new
        if done:
            break
    return q


@functools.lru_cache(maxsize=1024)
def _two_term_rate_scalar(beta):
    return float(_two_term_rate(beta))


def stratified_bound_scalar(p1, n1, p2, n2, pi, beta, lower):
    """One bound of :func:`stratified_kl_bounds` for one arm, in plain floats.

    Weights ``(pi, 1 - pi)``. Used when a bandit round recomputes up to :data:`SCALAR_ARMS`
    arms, where numpy's per-call overhead would cost more than the arithmetic. With numba (the
    ``fast`` extra) the stratified arms compute it in compiled code instead:
    :func:`skanchors._arm_kernels.stratified_bounds`, its twin operation for operation (with
    :func:`_joint_lower_pair` and :func:`_kl_bound_scalar`), equal to the last bit. A change
    here must be made there too (``tests/test_search_kernels.py`` compares them).
    """
    useful = [(p, n, w) for p, n, w in ((p1, n1, pi), (p2, n2, 1.0 - pi)) if n > 0 and w > 0]
    if len(useful) == 2:
        rate = _two_term_rate_scalar(float(beta))
        if lower:
            return _joint_lower_pair(p1, n1, pi, p2, n2, 1.0 - pi, rate)
        return 1.0 - _joint_lower_pair(1.0 - p1, n1, pi, 1.0 - p2, n2, 1.0 - pi, rate)
    if len(useful) == 1:
        p, n, w = useful[0]
        bound = _kl_bound_scalar(p, beta / n, upper=not lower)
        return w * bound if lower else w * bound + (1.0 - w)
    return 0.0 if lower else 1.0


def stratified_kl_bounds(p, n, w, beta, side="both"):
    """Confidence bounds of ``sum_s w_s p_s`` from independent Bernoulli strata.

    Parameters
    ----------
    p, n, w : ndarray of shape (n_arms, n_strata)
        Empirical mean, number of samples and (known) weight of each stratum; weights of an
        arm sum to 1.
    beta : float or ndarray of shape (n_arms,)
        Exploration rate, as for :func:`kl_lower_bound` (``level = beta / n``).
    side : {"both", "lower", "upper"}, default="both"
        Bounds to compute; the other one is returned as None.

    Returns
    -------
    lower, upper : ndarray of shape (n_arms,)
        The extremes of ``sum_s w_s q_s`` over all ``q`` with
        ``sum_s n_s KL(p_s || q_s) <= rate`` (up to the dual's tolerance, on the safe side):
        one joint KL constraint instead of one bound per stratum, whose widths would add up.
        With one informative stratum the rate is ``beta`` (and the bounds are
        :func:`kl_lower_bound` / :func:`kl_upper_bound` scaled by its weight, the other
        stratum ranging over [0, 1]); with two it is the ``b`` of
        ``(1 + b) exp(-b) = exp(-beta)``, because each stratum's deviation ``n KL`` has a tail
        at most ``exp(-x)`` (Chernoff) and the sum of two such independent deviations a
        Gamma(2, 1) tail.

    Examples
    --------
    >>> import numpy as np
    >>> lb, ub = stratified_kl_bounds(np.array([[0.9, 0.5]]), np.array([[100.0, 0.0]]),
    ...                               np.array([[1.0, 0.0]]), 2.0)
    >>> bool(np.isclose(lb[0], kl_lower_bound(0.9, 0.02)))
    True
    """
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    n = np.asarray(n, dtype=float)
    w = np.asarray(w, dtype=float)
    if p.shape[1] > 2:
        raise ValueError("stratified_kl_bounds supports at most two strata.")
    beta = np.broadcast_to(np.asarray(beta, dtype=float), (p.shape[0],))
    useful = (n > 0) & (w > 0)
    two = useful.sum(axis=1) >= 2
    # One informative stratum: the plain KL bounds of that stratum, scaled by its weight.
    pick = np.argmax(useful, axis=1)
    rows = np.arange(p.shape[0])
    ps, ns, ws = p[rows, pick], n[rows, pick], w[rows, pick] * useful.any(axis=1)
    level = beta / np.maximum(ns, 1)
    lower = upper = None
    rate = _two_term_rate(beta[two]) if two.any() else None
    if side in ("both", "lower"):
        lower = ws * np.where(ns > 0, kl_lower_bound(ps, level), 0.0)
        if rate is not None:
            lower[two] = _joint_lower(p[two], n[two], w[two], rate)
    if side in ("both", "upper"):
        upper = ws * np.where(ns > 0, kl_upper_bound(ps, level), 1.0) + (1.0 - ws)
        if rate is not None:
            upper[two] = 1.0 - _joint_lower(1.0 - p[two], n[two], w[two], rate)
    return lower, upper
