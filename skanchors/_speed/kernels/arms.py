"""The compiled twins of :class:`skanchors._stratified.StratifiedArms`' loops (registered in
:mod:`skanchors._speed.kernels`; see :mod:`skanchors._compiled`).

:func:`stratum_counts` adds new samples to the arms' stratum counts as
``StratifiedArms._update`` does with numpy arrays, one sample at a time instead of through
fancy-indexed temporaries: the counts are whole numbers, so adding them one by one gives the
same float64 values. :func:`stratified_bounds` is :func:`skanchors._bounds.stratified_bound`
(with :func:`~skanchors._bounds.joint_lower_pair` and :func:`~skanchors._bounds.kl_bound`)
operation for operation: the same C library calls in the same order and Python's
``min``/``max`` tie rules, so the same bounds to the last bit. :func:`extreme_bound_small` is
``StratifiedArms.extreme_bound`` step for step and :func:`precision_estimates`
``StratifiedArms.precision_estimates``. A change to one side of a pair must be made to the
other (``tests/test_kernels.py`` compares every pair).
"""

import math

import numba
import numpy as np

from ..._bounds import DUAL_STEPS, NEWTON_STEPS


@numba.njit(inline="always")
def _inside(native, r, groups, arm):
    # whether row r of native (a sample's base row) satisfies every predicate of the arm's group
    for k in range(groups.shape[1]):
        if not native[r, groups[arm, k]]:
            return False
    return True


@numba.njit(nogil=True, cache=True)
def stratum_counts(ids, native, rows, labels, target, own_arm, groups, parent_ptr, parent_arms,
                   n1, pos1, n2, pos2, changed):  # fmt: skip
    """Count samples ``ids`` (their anchor ids), ``native[rows]`` (their base rows' predicate
    values: sample ``s``'s is row ``rows[s]`` of ``native``) and ``labels`` into the arms'
    strata.

    A sample drawn for arm ``own_arm[id]`` counts in its stratum 1 when its base row satisfies
    every predicate of the arm's group (``groups[arm]``), else in stratum 2; one drawn for a
    parent counts in stratum 1 of each of the parent's arms
    (``parent_arms[parent_ptr[id]:parent_ptr[id + 1]]``) whose group it satisfies. Arms that
    got samples are flagged in ``changed``.
    """
    n_own = own_arm.shape[0]
    n_par = parent_ptr.shape[0] - 1
    for s in range(ids.shape[0]):
        i = ids[s]
        right = 1.0 if labels[s] == target else 0.0
        if i < n_own:
            arm = own_arm[i]
            if arm >= 0:
                if _inside(native, rows[s], groups, arm):
                    n1[arm] += 1.0
                    pos1[arm] += right
                else:
                    n2[arm] += 1.0
                    pos2[arm] += right
                changed[arm] = True
        if i < n_par:
            for t in range(parent_ptr[i], parent_ptr[i + 1]):
                arm = parent_arms[t]
                changed[arm] = True
                if _inside(native, rows[s], groups, arm):
                    n1[arm] += 1.0
                    pos1[arm] += right


# -- confidence bounds: skanchors._bounds.stratified_bound, operation for operation


@numba.njit(inline="always")
def _min(a, b):
    # Python's min(a, b): b only when b < a
    return b if b < a else a


@numba.njit(inline="always")
def _max(a, b):
    # Python's max(a, b): b only when b > a
    return b if b > a else a


@numba.njit
def _kl(p, q):
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


@numba.njit
def _xlogx(x):
    return x * math.log(x) if x > 0.0 else 0.0


@numba.njit
def _kl_bound(p, level, upper):
    if level <= 0.0:
        return p
    if upper:
        if p >= 1.0:
            return 1.0
        tail = (1.0 - p) * math.exp(-(level - _xlogx(p)) / (1.0 - p))
        q = _min(p + math.sqrt(level / 2.0), 1.0 - tail)
    else:
        if p <= 0.0:
            return 0.0
        q = _max(p - math.sqrt(level / 2.0), p * math.exp(-(level - _xlogx(1.0 - p)) / p))
    for _ in range(NEWTON_STEPS):
        if not 0.0 < q < 1.0:
            break
        f = _kl(p, q) - level
        slope = (q - p) / (q * (1.0 - q))
        if slope == 0.0 or not math.isfinite(f):
            break
        new = q - f / slope
        new = _min(_max(new, p), q) if upper else _min(_max(new, q), p)
        done = abs(new - q) <= 1e-15
        q = new
        if done:
            break
    return q


@numba.njit
def _evaluate(u, p1, n1, w1, p2, n2, w2, rate):
    lam = math.exp(u)
    k = 0.0
    g = 0.0
    slope = 0.0
    for s in range(2):
        p, n, w = (p1, n1, w1) if s == 0 else (p2, n2, w2)
        c = w / (lam * n)
        root = math.sqrt(_max((1.0 + c) ** 2.0 - 4.0 * c * p, 0.0))
        q = _min(2.0 * p / ((1.0 + c) + root), p)
        k += n * _kl(p, q)
        g += w * q
        if root > 0.0:
            slope -= n * c * c * q * (1.0 - q) / root
    h = k - rate
    return h, (g + lam * h if math.isfinite(h) else -math.inf), slope


@numba.njit
def _joint_lower_pair(p1, n1, w1, p2, n2, w2, rate):
    center = math.log(_max(w1 / n1, w2 / n2))
    lo, hi = center - 15.0, center + 15.0
    spread = 0.0
    spread += w1 * w1 * _max(p1 * (1.0 - p1), 1.0 / n1) / n1
    spread += w2 * w2 * _max(p2 * (1.0 - p2), 1.0 / n2) / n2
    u = _min(_max(0.5 * math.log(spread / (2.0 * rate)), lo), hi)
    best = -math.inf
    for _ in range(DUAL_STEPS):
        h, g, slope = _evaluate(u, p1, n1, w1, p2, n2, w2, rate)
        best = _max(best, g)
        if h > 0.0:
            lo = u
        else:
            hi = u
        if abs(h) < 1e-8 or hi - lo < 1e-12:
            break
        step = u - h / slope if slope < 0.0 and math.isfinite(h) else math.nan
        u = step if lo < step < hi else 0.5 * (lo + hi)
    return _max(math.floor(best * 1e12) / 1e12, 0.0)


@numba.njit(nogil=True, cache=True)
def stratified_bounds(n1, pos1, n2, pos2, pi, stale, beta, rate, lower, values):
    """``values[a]`` = :func:`skanchors._bounds.stratified_bound` of each arm ``a`` in
    ``stale`` (``rate``: the two-strata rate of ``beta``, computed by the caller)."""
    for t in range(stale.shape[0]):
        a = stale[t]
        m1, m2, w = n1[a], n2[a], pi[a]
        p1 = pos1[a] / m1 if m1 != 0.0 else 0.0
        p2 = pos2[a] / m2 if m2 != 0.0 else 0.0
        use1 = m1 > 0 and w > 0
        use2 = m2 > 0 and 1.0 - w > 0
        if use1 and use2:
            if lower:
                values[a] = _joint_lower_pair(p1, m1, w, p2, m2, 1.0 - w, rate)
            else:
                values[a] = 1.0 - _joint_lower_pair(1.0 - p1, m1, w, 1.0 - p2, m2, 1.0 - w, rate)
        elif use1 or use2:
            p, m, ww = (p1, m1, w) if use1 else (p2, m2, 1.0 - w)
            bound = _kl_bound(p, beta / m, not lower)
            values[a] = ww * bound if lower else ww * bound + (1.0 - ww)
        else:
            values[a] = 0.0 if lower else 1.0


@numba.njit(nogil=True, cache=True)
def precision_estimates(n1, pos1, n2, pos2, pi):
    """``StratifiedArms.precision_estimates`` in its plain-float form: each stratum's share of
    positives (a stratum without samples takes the other's), mixed by ``pi``; 0 for an arm
    without samples."""
    m = pi.shape[0]
    out = np.empty(m)
    for a in range(m):
        has1, has2 = n1[a] > 0, n2[a] > 0
        p1 = pos1[a] / n1[a] if has1 else 0.0
        p2 = pos2[a] / n2[a] if has2 else p1
        if not has1:
            p1 = p2
        out[a] = pi[a] * p1 + (1.0 - pi[a]) * p2 if (has1 or has2) else 0.0
    return out


@numba.njit(inline="always")
def _larger(a, b):
    # Python's max(a, b): b only when it is strictly larger
    return b if b > a else a


@numba.njit(inline="always")
def _settle(arms, indices, vals, exact, at, rate_at, lower, cached_beta, values, n1, pos1, n2,
            pos2, pi):  # fmt: skip
    # compute and cache the bounds of positions `arms` of `indices`; they become exact
    stale = indices[arms]
    stratified_bounds(n1, pos1, n2, pos2, pi, stale, at, rate_at, lower, values)
    cached_beta[stale] = at
    for t in arms:
        vals[t] = values[indices[t]]
        exact[t] = True


@numba.njit(nogil=True, cache=True)
def extreme_bound_small(indices, beta, at, upper, k, cached_beta, values, n1, pos1, n2, pos2,
                        pi, rates, margin):  # fmt: skip
    """``StratifiedArms.extreme_bound`` step for step (see there): ``(positions,
    values)`` of the ``k`` most extreme bounds of arms ``indices`` on one side, computing
    (and caching in ``cached_beta``, ``values``) only the bounds that can be among them.

    ``at``: ``beta`` rounded up to a multiple of 1/8; ``rates[j]``: the two-strata rate of
    ``j / 8`` (the rates of the rounded rates the bounds were cached at).
    """
    sign = 1.0 if upper else -1.0
    lower = not upper
    m = indices.shape[0]
    rate_at = rates[int(at * 8.0)]
    cb = cached_beta[indices].copy()
    n_must = 0
    for t in range(m):
        if cb[t] != cb[t]:
            n_must += 1
    if n_must:
        must = np.empty(n_must, np.intp)
        j = 0
        for t in range(m):
            if cb[t] != cb[t]:
                must[j] = indices[t]
                j += 1
        stratified_bounds(n1, pos1, n2, pos2, pi, must, at, rate_at, lower, values)
        cached_beta[must] = at
    vals = values[indices].copy()
    exact = np.empty(m, np.bool_)
    n_moving = 0
    for t in range(m):
        exact[t] = cb[t] >= beta or cb[t] != cb[t]
        if not exact[t]:
            n_moving += 1
    if n_moving:
        est = precision_estimates(n1, pos1, n2, pos2, pi)
        moving = np.empty(n_moving, np.intp)
        optimistic = np.empty(n_moving)
        j = 0
        for t in range(m):
            if exact[t]:
                continue
            c, old, old_at = est[indices[t]], vals[t], cb[t]
            s = _larger(at / old_at, rate_at / rates[int(old_at * 8.0)])
            moving[j] = t
            optimistic[j] = sign * (c + s * (old - c))
            j += 1
        order = np.argsort(-optimistic, kind="mergesort")  # stable, as sorted()
        todo = moving[order]
        optimistic = optimistic[order]
        n_known = m - n_moving
        best = np.empty(m)
        n_best = 0
        for t in range(m):
            if exact[t]:
                best[n_best] = sign * vals[t]
                n_best += 1
        start = 0
        if n_known < k:
            n_first = min(k - n_known, n_moving)
            first = todo[:n_first]
            _settle(first, indices, vals, exact, at, rate_at, lower, cached_beta, values,
                    n1, pos1, n2, pos2, pi)  # fmt: skip
            for t in first:
                best[n_best] = sign * vals[t]
                n_best += 1
            start = n_first
        kth = np.sort(best[:n_best])[n_best - k] if n_best >= k else -math.inf
        n_reach = 0
        for u in range(start, n_moving):
            if optimistic[u] >= kth - margin:
                n_reach += 1
        if n_reach:
            reach = np.empty(n_reach, np.intp)
            j = 0
            for u in range(start, n_moving):
                if optimistic[u] >= kth - margin:
                    reach[j] = todo[u]
                    j += 1
            _settle(reach, indices, vals, exact, at, rate_at, lower, cached_beta, values,
                    n1, pos1, n2, pos2, pi)  # fmt: skip
    score = np.empty(m)
    for t in range(m):
        score[t] = sign * vals[t] if exact[t] else -math.inf
    order = np.argsort(-score, kind="mergesort")[:k]
    n_out = 0
    for u in range(order.shape[0]):
        if score[order[u]] != -math.inf:
            n_out += 1
    pos = np.empty(n_out, np.intp)
    out = np.empty(n_out)
    j = 0
    for u in range(order.shape[0]):
        t = order[u]
        if score[t] != -math.inf:
            pos[j] = t
            out[j] = vals[t]
            j += 1
    return pos, out
