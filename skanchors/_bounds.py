"""KL confidence bounds of Bernoulli means, for plain and for stratified estimates.

Each formula is written once, for one arm in plain Python floats (:func:`kl_bound`,
:func:`stratified_bound`, :func:`two_term_rate`); the array functions (:func:`kl_lower_bound`,
:func:`kl_upper_bound`, :func:`stratified_kl_bounds`) apply it arm by arm. Plain floats, not
numpy's array functions, because their ``exp`` and ``log`` are the C library's, which the
compiled twins of the speed layer (:mod:`skanchors._compiled`) call too: numpy's own
vectorised ``exp`` and ``log`` may differ from them in the last bit, and a bound must not
depend on whether numba is installed, nor on how many arms a round recomputes. A bandit round
recomputes a few arms, where numpy's fixed cost per call would outweigh the arithmetic anyway;
repeated questions (equal counts at the same rate) are answered from a cache.

References
----------
Kaufmann, E. and Kalyanakrishnan, S. (2013). Information complexity in bandit subset
selection. COLT (the KL confidence bounds of KL-LUCB, eq. 3-4).
Ribeiro, M. T., Singh, S. and Guestrin, C. (2018). Anchors: high-precision model-agnostic
explanations. AAAI (the bounds of a candidate's precision, Algorithm 2).
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = [
    "kl_bound",
    "kl_lower_bound",
    "kl_upper_bound",
    "stratified_bound",
    "stratified_kl_bounds",
    "two_term_rate",
]

# Newton converges quadratically; 50 steps is a safety cap, never reached in practice.
NEWTON_STEPS = 50
# The dual's Newton/bisection iterations (joint_lower_pair); a cap, rarely reached.
DUAL_STEPS = 60


def _kl(p, q):
    """``KL(Bern(p) || Bern(q))`` of two floats (``0 log 0 = 0``; ``inf`` where ``q`` puts no
    mass on an outcome ``p`` has)."""
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


def _xlogx(x):
    return x * math.log(x) if x > 0.0 else 0.0


@functools.lru_cache(maxsize=8192)
def kl_bound(p, level, upper):
    """The KL confidence bound of one Bernoulli mean (Kaufmann & Kalyanakrishnan 2013, eq. 3-4):
    the largest ``q >= p`` (``upper``) or the smallest ``q <= p`` with ``KL(p || q) <= level``.

    Newton's method from a point on the safe side of the root: ``f(q) = KL(p || q) - level``
    is convex in q and monotone on each side of p, so iterates started where ``f >= 0`` move
    monotonically towards the root without crossing it; every iterate is a valid
    (conservative) bound, and convergence to float precision takes a handful of steps. Two
    starting points are valid and the closer one is used: Pinsker's ``p +- sqrt(level / 2)``
    and, for the upper bound, the solution of ``p log p + (1 - p) log((1 - p) / (1 - q)) =
    level`` (a lower bound on KL for q > p; the lower bound's start is its mirror image), which
    always lies inside (0, 1). A step that rounding carries past the root is clipped back.

    Parameters
    ----------
    p : float in [0, 1]
    level : float
        ``beta / n``; ``level <= 0`` gives ``p``.
    upper : bool
    """
    if level <= 0.0:
        return p
    if upper:
        if p >= 1.0:
            return 1.0
        tail = (1.0 - p) * math.exp(-(level - _xlogx(p)) / (1.0 - p))
        q = min(p + math.sqrt(level / 2.0), 1.0 - tail)
    else:
        if p <= 0.0:
            return 0.0
        q = max(p - math.sqrt(level / 2.0), p * math.exp(-(level - _xlogx(1.0 - p)) / p))
    for _ in range(NEWTON_STEPS):
        if not 0.0 < q < 1.0:
            break
        f = _kl(p, q) - level
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


def _bounds_of(p, level, upper):
    p = np.asarray(p, dtype=float)
    level = np.maximum(np.broadcast_to(np.asarray(level, dtype=float), p.shape), 0.0)
    out = [kl_bound(a, b, upper) for a, b in zip(p.ravel().tolist(), level.ravel().tolist())]
    return np.array(out, dtype=float).reshape(p.shape) if p.ndim else float(out[0])


def kl_upper_bound(p, level):
    """Largest q >= p with ``KL(p || q) <= level`` (the KL-UCB upper confidence bound),
    element-wise (:func:`kl_bound`).

    Computed to float64 precision by Newton's method started on the safe side of the root (so
    the result is never tighter than the exact bound).

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
    >>> bool(abs(_kl(0.5, q) - 0.1) < 1e-12)
    True
    """
    return _bounds_of(p, level, True)


def kl_lower_bound(p, level):
    """Smallest q <= p with ``KL(p || q) <= level`` (the KL-LCB lower confidence bound),
    element-wise (:func:`kl_bound`).

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
    return _bounds_of(p, level, False)


def _two_term_rate(beta):
    # Newton's method on the convex h(b) = b - log(1 + b) - beta (see two_term_rate)
    beta = np.asarray(beta, dtype=float)
    b = beta + np.log1p(beta)
    for _ in range(8):
        b = b - (b - np.log1p(b) - beta) * (1.0 + b) / np.maximum(b, 1e-300)
    return b * (1.0 + 1e-12)  # rounding stays on the safe side


@functools.lru_cache(maxsize=1024)
def two_term_rate(beta):
    """Rate ``b`` with ``(1 + b) exp(-b) = exp(-beta)``: the sum of two independent deviations
    whose tails are at most ``exp(-x)`` (a Gamma(2, 1) tail) exceeds ``b`` with probability at
    most ``exp(-beta)``.

    Newton's method on the convex ``h(b) = b - log(1 + b) - beta``: the first step lands on the
    right of the root and the iterates then decrease to it, so the result is never below the
    root (never a smaller, optimistic rate).

    Examples
    --------
    >>> b = two_term_rate(2.0)
    >>> round((1 + b) * math.exp(-b), 6) == round(math.exp(-2.0), 6)
    True
    """
    return float(_two_term_rate(float(beta)))


# Searches ask for the same bounds again (equal counts at the same rate).
@functools.lru_cache(maxsize=8192)
def joint_lower_pair(p1, n1, w1, p2, n2, w2, rate):
    """A lower bound on ``min w1 q1 + w2 q2`` s.t. ``n1 KL(p1 || q1) + n2 KL(p2 || q2) <= rate``,
    for two strata with samples and positive weights.

    By weak duality, for every multiplier ``lam >= 0`` the dual function
    ``g(lam) = min_q [sum_s w_s q_s + lam (sum_s n_s KL(p_s || q_s) - rate)]`` is at most the
    constrained minimum, so *any* ``lam`` gives a valid (conservative) bound and the best one
    seen is (nearly) the exact minimum (strong duality: the problem is convex). The inner
    minimiser of each stratum solves ``(p - q) / (q (1 - q)) = c`` with ``c = w / (lam n)``,
    a quadratic with the stable root ``q = 2p / ((1 + c) + sqrt((1 + c)^2 - 4cp))``. The
    constraint ``h(u) = sum_s n_s KL(p_s || q_s) - rate`` (the derivative of ``g``) is solved
    in ``u = log lam`` by Newton's method (``dh/du = -sum_s n_s c_s^2 q_s (1 - q_s) /
    sqrt(D_s)``) from the Gaussian approximation, kept inside a bracket (bisection when a step
    leaves it). Rounding the result down to 1e-12 keeps it on the safe side of the solver's
    tolerance.
    """
    strata = ((p1, n1, w1), (p2, n2, w2))

    def evaluate(u):
        lam = math.exp(u)
        k = g = slope = 0.0
        for p, n, w in strata:
            c = w / (lam * n)
            root = math.sqrt(max((1.0 + c) ** 2 - 4.0 * c * p, 0.0))
            # The root lies in (0, p]; clipping removes rounding past p (KL would be inf at 1).
            q = min(2.0 * p / ((1.0 + c) + root), p)
            k += n * _kl(p, q)
            g += w * q
            if root > 0.0:
                slope -= n * c * c * q * (1.0 - q) / root
        h = k - rate
        return h, (g + lam * h if math.isfinite(h) else -math.inf), slope

    # c = w / (lam n) is of order 1 near lam = w / n: bracket log lam around it.
    center = math.log(max(w1 / n1, w2 / n2))
    lo, hi = center - 15.0, center + 15.0
    spread = sum(w * w * max(p * (1.0 - p), 1.0 / n) / n for p, n, w in strata)
    u = min(max(0.5 * math.log(spread / (2.0 * rate)), lo), hi)
    best = -math.inf
    for _ in range(DUAL_STEPS):
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


def stratified_bound(p1, n1, p2, n2, pi, beta, lower):
    """One confidence bound of ``pi p1 + (1 - pi) p2`` from two independent Bernoulli strata.

    The extreme of ``pi q1 + (1 - pi) q2`` over all ``q`` with
    ``n1 KL(p1 || q1) + n2 KL(p2 || q2) <= rate`` (:func:`joint_lower_pair`, on the safe
    side): one joint KL constraint instead of one bound per stratum, whose widths would add
    up. With one informative stratum (samples and a positive weight) the rate is ``beta`` and
    the bound is :func:`kl_bound` at level ``beta / n`` scaled by its weight, the other stratum
    ranging over [0, 1]; with two it is :func:`two_term_rate` of ``beta``, because each
    stratum's deviation ``n KL`` has a tail at most ``exp(-x)`` (Chernoff) and the sum of two
    such independent deviations a Gamma(2, 1) tail. Without any: 0 or 1.

    Parameters
    ----------
    p1, p2 : float in [0, 1]
        The strata's empirical means (any value for a stratum without samples).
    n1, n2 : float >= 0
        Their numbers of samples.
    pi : float in [0, 1]
        The first stratum's weight.
    beta : float
        Exploration rate.
    lower : bool
        The lower bound, else the upper one.
    """
    useful = [(p, n, w) for p, n, w in ((p1, n1, pi), (p2, n2, 1.0 - pi)) if n > 0 and w > 0]
    if len(useful) == 2:
        rate = two_term_rate(float(beta))
        if lower:
            return joint_lower_pair(p1, n1, pi, p2, n2, 1.0 - pi, rate)
        return 1.0 - joint_lower_pair(1.0 - p1, n1, pi, 1.0 - p2, n2, 1.0 - pi, rate)
    if len(useful) == 1:
        p, n, w = useful[0]
        bound = kl_bound(p, beta / n, not lower)
        return w * bound if lower else w * bound + (1.0 - w)
    return 0.0 if lower else 1.0


def stratified_kl_bounds(p, n, pi, beta, side="both"):
    """Confidence bounds of ``pi p_1 + (1 - pi) p_2`` from two independent Bernoulli strata,
    arm by arm (:func:`stratified_bound`).

    Parameters
    ----------
    p, n : array-like of shape (n_arms, 2)
        Empirical mean and number of samples of each stratum (means are clipped to [0, 1]).
    pi : array-like of shape (n_arms,)
        The first stratum's (known) weight; the second's is ``1 - pi``.
    beta : float or array-like of shape (n_arms,)
        Exploration rate, as for :func:`kl_lower_bound` (``level = beta / n``).
    side : {"both", "lower", "upper"}, default="both"
        Bounds to compute; the other one is returned as None.

    Returns
    -------
    lower, upper : ndarray of shape (n_arms,)

    Examples
    --------
    >>> import numpy as np
    >>> lb, ub = stratified_kl_bounds([[0.9, 0.5]], [[100.0, 0.0]], [1.0], 2.0)
    >>> bool(lb[0] == kl_lower_bound(0.9, 0.02)) and bool(ub[0] == 1.0 * kl_upper_bound(0.9, 0.02))
    True
    """
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    n = np.asarray(n, dtype=float)
    if p.ndim != 2 or p.shape[1] != 2 or n.shape != p.shape:
        raise ValueError(f"p and n must have shape (n_arms, 2), got {p.shape} and {n.shape}.")
    m = p.shape[0]
    pi = np.broadcast_to(np.asarray(pi, dtype=float), (m,)).tolist()
    beta = np.broadcast_to(np.asarray(beta, dtype=float), (m,)).tolist()
    if side not in ("both", "lower", "upper"):
        raise ValueError(f"side must be 'both', 'lower' or 'upper', got {side!r}.")
    rows = list(zip(p[:, 0].tolist(), n[:, 0].tolist(), p[:, 1].tolist(), n[:, 1].tolist()))
    out = []
    for name in ("lower", "upper"):
        if side not in ("both", name):
            out.append(None)
            continue
        lower = name == "lower"
        out.append(
            np.array(
                [stratified_bound(*row, w, b, lower) for row, w, b in zip(rows, pi, beta)],
                dtype=float,
            )
        )
    return tuple(out)
