"""The stratified estimate of a candidate's precision from its parent's samples
(:class:`StratifiedArms`).

Its counts, estimates and bounds have compiled twins in the speed layer (stratum counts,
stratified bounds, extreme bounds, precision estimates; see :mod:`skanchors._compiled`), used
when registered and switched on, the same to the last bit."""

from __future__ import annotations

import math

import numpy as np

from . import _compiled
from ._arms import Arms, ArmsCapabilities
from ._bounds import stratified_bound, two_term_rate

__all__ = ["StratifiedArms"]

# The compiled twins of StratifiedArms' loops, by the names they are registered under.
_KERNEL_NAMES = ("stratum_counts", "stratified_bounds", "extreme_bounds", "precision_estimates")


def _arm_kernel():
    """The compiled ``(stratum_counts, stratified_bounds, extreme_bounds,
    precision_estimates)``, loaded (compiled) at the first call, or None where compiled
    kernels are not in use (numba missing, ``SKANCHORS_NUMBA=0``, the speed layer not loaded
    or switched off)."""
    kernels = tuple(_compiled.kernel(name) for name in _KERNEL_NAMES)
    return None if None in kernels else kernels


_RATES = np.zeros(0)  # _RATES[j]: the two-strata rate of j / 8 (see _rate_table)
# Rates from this one on (delta near 0) are not tabled: the plain-float bounds serve them.
_MAX_TABLED_RATE = 4096.0


def _rate_table(at):
    """The two-strata rates of every multiple of 1/8 up to ``at`` (and beyond), as an array:
    the rates the compiled extreme bounds read for the rounded rates their bounds were
    computed at."""
    global _RATES
    need = int(at * 8.0) + 1
    table = _RATES
    if need > len(table):
        size = max(need, 2 * len(table), 256)
        table = _RATES = np.array([two_term_rate(j / 8.0) for j in range(size)])
    return table


class StratifiedArms(Arms):
    """Candidates ``parent + (q,)`` whose precision uses the parent's samples, without bias.

    The tabular ``D(z | A)`` starts from a random reference row (the base row) and replaces the
    values that violate ``A``. Let ``G`` be the predicates of a candidate ``C = P + (q,)`` on
    the feature of ``q`` and ``E`` the event "the base row satisfies ``G`` on its own" (nothing
    of that feature is replaced). ``D(z | C)`` is the mixture of ``D(z | C, E)``, with weight
    ``pi = P(E)`` (the reference share of rows satisfying ``G``, known exactly), and
    ``D(z | C, not E)``. A sample drawn for the parent ``P`` whose base row satisfies ``G`` is
    built exactly as one drawn for ``C`` would be, so it is a draw of the first component;
    samples drawn for ``C`` fall in either. The precision is estimated per stratum and
    combined, ``pi * p1 + (1 - pi) * p2``; its confidence bounds are the extremes of that
    combination over one joint KL region of the two strata
    (:func:`~skanchors._bounds.stratified_kl_bounds`). Reusing parent samples that satisfy
    ``q`` *without* this weighting (as other anchor packages do) mixes the strata in the wrong
    proportion and inflated precision by up to 0.09 on Adult.

    Parameters
    ----------
    store : SampleStore
        With ``store.stratified`` true.
    candidates, parents : lists of tuples of int
        Each candidate is its parent plus one predicate.
    """

    capabilities = ArmsCapabilities(
        pulls_each=True,
        own_estimator=True,
        extreme_bounds=True,
        parent_draws=True,
        hopeless_rounds=True,
    )
    _kernel = _bounds_kernel = None  # the compiled counts and bounds (set in __init__)

    def __init__(self, store, candidates, parents):
        inst = store.instance
        feat = np.asarray(inst.predicate_features)
        self.store = store
        self.candidates = [tuple(sorted(c)) for c in candidates]
        self.parents = [tuple(sorted(p)) for p in parents]
        feat = feat.tolist()
        groups = []
        for cand, parent in zip(self.candidates, self.parents):
            added = set(cand).difference(parent)
            if len(added) != 1 or len(cand) != len(parent) + 1:
                raise ValueError(f"candidate {cand} is not parent {parent} plus one predicate.")
            f = feat[added.pop()]
            groups.append([p for p in cand if feat[p] == f])
        self._groups = groups
        # The predicates of each group as one row of a matrix (short rows padded by repeating
        # their last predicate), so that E is computed for every arm at once.
        width = max((len(g) for g in groups), default=1)
        self._group_index = np.array(
            [g + [g[-1]] * (width - len(g)) for g in groups], dtype=np.intp
        ).reshape(len(groups), width)
        self.pi = np.asarray(inst.coverage([tuple(g) for g in groups]), dtype=float)
        m = len(self.candidates)
        index = store._anchor_index
        own = [index.get(c) for c in self.candidates]
        par = [index.get(p) for p in self.parents]
        if None in own or None in par:  # conditioning sets not seen yet (sorted already)
            own = [store._id(c) for c in self.candidates]
            par = [store._id(p) for p in self.parents]
        self._own = np.array(own, dtype=np.int64)
        self._par = np.array(par, dtype=np.int64)
        self.n1, self.pos1 = np.zeros(m), np.zeros(m)
        self.n2, self.pos2 = np.zeros(m), np.zeros(m)
        # side -> (beta each arm's cached bound was computed at, NaN: stale; the bounds)
        betas, values = np.full((2, m), np.nan), np.zeros((2, m))
        self._cache = {"lower": (betas[0], values[0]), "upper": (betas[1], values[1])}
        # Which arm a sample drawn for anchor id i belongs to (-1: none), and the arms of each
        # parent: a sample serves its own arm (either stratum) and its parent's children.
        self._own_arm = np.full(max(own, default=-1) + 1, -1, dtype=np.intp)
        self._own_arm[self._own] = np.arange(m)
        kernels = _arm_kernel() or (None,) * 4
        self._kernel, self._bounds_kernel, self._extreme_kernel, self._estimates_kernel = kernels
        if self._kernel is None:
            self._children = {
                int(pid): np.flatnonzero(self._par == pid) for pid in np.unique(self._par).tolist()
            }
        else:  # the compiled counts': the arms of parent id i are arms[ptr[i]:ptr[i + 1]]
            self._parent_arms = np.argsort(self._par, kind="stable").astype(np.intp)
            self._parent_ptr = np.searchsorted(
                self._par[self._parent_arms], np.arange(max(par, default=-1) + 2)
            ).astype(np.intp)
        self._estimates = None
        self._update(0, store.size)

    @property
    def n_samples(self):
        return self.n1 + self.n2

    @property
    def n_positives(self):
        return self.pos1 + self.pos2

    def _update(self, start, stop):
        """Add samples ``start:stop`` of the store to the stratum counts.

        Work grows with the samples of each arm and the parent samples times the parent's
        children, not with every sample times every arm (a table with 60 features has about
        60 arms a round). The compiled ``stratum_counts`` (the speed layer's, where in use)
        counts them one sample at a time: the same counts.
        """
        if stop <= start:
            return
        store = self.store
        m = len(self.candidates)
        if not m:
            return
        ids = store.anchor_id[start:stop]
        changed = np.zeros(m, dtype=bool)
        if self._kernel is not None:
            self._kernel(
                ids,
                *store.native_rows(start, stop),
                store.labels[start:stop],
                store.target,
                self._own_arm,
                self._group_index,
                self._parent_ptr,
                self._parent_arms,
                self.n1,
                self.pos1,
                self.n2,
                self.pos2,
                changed,
            )
            self._stale(changed)
            return
        # Samples drawn for an arm itself: stratum 1 where E holds, else stratum 2.
        lookup = self._own_arm
        top = int(ids.max())
        if top >= len(lookup):  # conditioning sets registered since (none of them an arm)
            grown = np.full(top + 1, -1, dtype=np.intp)
            grown[: len(lookup)] = lookup
            lookup = self._own_arm = grown
        arm = lookup[ids]
        rows = np.flatnonzero(arm >= 0)
        if rows.size:
            arm = arm[rows]
            at = start + rows
            e = store.native_cells(at[:, None], self._group_index[arm]).all(axis=1)
            right = store.labels[at] == store.target
            slot = 2 * arm + ~e  # arm's stratum 1 (even) or 2 (odd)
            n = np.bincount(slot, minlength=2 * m)
            pos = np.bincount(slot[right], minlength=2 * m)
            self.n1 += n[0::2]
            self.n2 += n[1::2]
            self.pos1 += pos[0::2]
            self.pos2 += pos[1::2]
            changed[arm] = True
        # Samples drawn for a parent: stratum 1 of each child whose group they satisfy.
        for pid, children in self._children.items():
            rows = start + np.flatnonzero(ids == pid)
            if not rows.size:
                continue
            e = store.native_cells(rows[:, None, None], self._group_index[children][None]).all(
                axis=2
            )
            right = (store.labels[rows] == store.target).astype(float)
            self.n1[children] += e.sum(axis=0)
            self.pos1[children] += right @ e  # float64: exact integer counts
            changed[children] = True
        self._stale(changed)

    def _stale(self, changed):
        for cached_beta, _ in self._cache.values():
            cached_beta[changed] = np.nan  # counts changed: bounds are stale
        self._estimates = None

    def pull(self, indices, n):
        """Draw ``n`` samples of ``D(z | C)`` for each arm ``C``, in one model call.

        The draws are not restricted to one stratum: unrestricted draws also serve the arm's
        own children (as their parent samples), which draws restricted to the stratum whose
        uncertainty weighs more would not.
        """
        self.pull_each(indices, [n] * len(indices))

    def pull_each(self, indices, counts):
        """Draw ``counts[j]`` samples for arm ``indices[j]``, all in one model call."""
        requests = [(self.candidates[i], int(c)) for i, c in zip(indices, counts)]
        start, stop = self.store.draw(requests)
        self._update(start, stop)

    def parent_can_settle(self, threshold, beta, n, parent_precision):
        """Which arms ``n`` samples of their parent could show below ``threshold``.

        A parent sample serves an arm's stratum 1 with probability ``pi``; with stratum 2
        still empty, the arm's upper bound is ``pi * u1 + (1 - pi)``. ``u1`` is predicted
        from ``pi * n`` samples at the parent's precision (``parent_precision[i]``; None:
        0, every arm that ``pi`` allows).
        """
        m = len(self.candidates)
        p = np.zeros(m) if parent_precision is None else np.asarray(parent_precision, float)
        upper = [
            stratified_bound(q, pi * n, 0.0, 0, pi, beta, False)
            for q, pi in zip(p.tolist(), self.pi.tolist())
        ]
        return np.asarray(upper) < threshold

    def pull_parents(self, indices, n, own=()):
        """Draw ``n`` samples for each parent of the arms ``indices``, and for each arm in
        ``own`` itself, in one model call.

        A parent sample serves every child of the parent whose group its base row satisfies
        (stratum 1).
        """
        parents = list(dict.fromkeys(self.parents[i] for i in np.asarray(indices).tolist()))
        requests = [(p, int(n)) for p in parents]
        requests += [(self.candidates[i], int(n)) for i in np.asarray(own, dtype=np.intp)]
        start, stop = self.store.draw(requests)
        self._update(start, stop)

    def _strata(self, indices, missing=np.nan):
        """Each stratum's mean (``missing`` where it has no samples)."""
        n1, n2 = self.n1[indices], self.n2[indices]
        p1 = np.where(n1 > 0, self.pos1[indices] / np.maximum(n1, 1), missing)
        p2 = np.where(n2 > 0, self.pos2[indices] / np.maximum(n2, 1), missing)
        return p1, p2

    def precision_estimates(self):
        """Estimated precision of every arm (read-only; kept until the counts change)."""
        if self._estimates is None:
            # A stratum without samples is guessed from the other one (for ranking only: its
            # bounds stay trivial).
            if self._estimates_kernel is not None:
                # the arithmetic below, compiled
                self._estimates = self._estimates_kernel(
                    self.n1, self.pos1, self.n2, self.pos2, self.pi
                )
            else:
                p1, p2 = self._strata(slice(None))
                p1, p2 = np.where(np.isnan(p1), p2, p1), np.where(np.isnan(p2), p1, p2)
                mixed = self.pi * p1 + (1.0 - self.pi) * p2
                self._estimates = np.where(np.isnan(mixed), 0.0, mixed)
            self._estimates.flags.writeable = False
        return self._estimates

    def precision_bounds(self, indices, beta, side="both"):
        """Lower and upper bounds of the given arms (``side``: only one of them, other None).

        Bounds are cached per arm until its counts change. They are computed at ``beta``
        rounded *up* to a multiple of 1/8 and reused for any smaller rate (a larger rate only
        widens them), so KL-LUCB's slowly growing exploration rate recomputes mostly the arms
        pulled since the last round.
        """
        indices = np.asarray(indices, dtype=np.intp)
        beta = float(beta)
        at = math.ceil(beta * 8.0) / 8.0
        out = []
        for name in ("lower", "upper"):
            if side not in ("both", name):
                out.append(None)
                continue
            cached_beta, values = self._cache[name]
            stale = indices[~(cached_beta[indices] >= beta)]
            if stale.size:
                self._compute(stale, at, name)
            out.append(values[indices].copy())
        return tuple(out)

    def extreme_bound(self, indices, beta, side, k=1):
        """``(positions, values)`` of the ``k`` highest upper (``side="upper"``) or lowest lower
        bounds, the most extreme first.

        The same answer as ``precision_bounds`` followed by a stable sort (first positions on
        ties), computing only the arms that can still be among the ``k`` extremes. An arm whose
        counts did not change since its bound was computed at rate ``b`` cannot move far at a
        rate ``b' > b``: the confidence region at ``b'`` lies inside the one at ``b`` scaled by
        ``s = rate(b') / rate(b)`` about the estimate ``c`` (the KL constraint is convex and
        zero there), so the new upper bound is at most ``c + s (u - c)`` and the new lower
        bound at least ``c - s (c - l)``. Arms that cannot reach the ``k``-th best exact value
        are skipped: KL-LUCB asks this every round at a slightly larger rate, and most of its
        arms are far from the boundary.
        """
        indices = np.asarray(indices, dtype=np.intp)
        beta = float(beta)
        # In plain floats (numpy's per-call overhead would cost more than the arithmetic for a
        # round's arms), or the compiled extreme_bounds, its twin step for step.
        at = math.ceil(beta * 8.0) / 8.0
        cached_beta, values = self._cache[side]
        if self._extreme_kernel is not None and at < _MAX_TABLED_RATE:
            return self._extreme_kernel(
                indices, beta, at, side == "upper", k, cached_beta, values,
                self.n1, self.pos1, self.n2, self.pos2, self.pi, _rate_table(at), _PRUNE_MARGIN,
            )  # fmt: skip
        sign = 1.0 if side == "upper" else -1.0
        idx = indices.tolist()
        cb = cached_beta[indices].tolist()
        must = [i for i, b in zip(idx, cb) if b != b]  # NaN: counts changed
        if must:
            self._compute(np.array(must, dtype=np.intp), at, side)
        vals = values[indices].tolist()
        exact = [b >= beta or b != b for b in cb]
        known, moving = [], []
        for t, ok in enumerate(exact):
            (known if ok else moving).append(t)
        if moving:
            # Optimistic values of the arms whose bound was computed at a smaller rate.
            est = self.precision_estimates()
            rate_at = two_term_rate(at)
            optimistic = []
            for t in moving:
                c, old, old_at = float(est[idx[t]]), vals[t], cb[t]
                s = max(at / old_at, rate_at / two_term_rate(old_at))
                optimistic.append(sign * (c + s * (old - c)))
            order = sorted(range(len(moving)), key=lambda u: -optimistic[u])
            todo = [moving[u] for u in order]
            optimistic = [optimistic[u] for u in order]
            best = [sign * vals[t] for t in known]
            if len(best) < k:
                first = todo[: k - len(best)]
                self._compute(indices[first], at, side)
                fresh = values[indices[first]].tolist()
                for t, v in zip(first, fresh):
                    vals[t] = v
                    exact[t] = True
                best += [sign * v for v in fresh]
                todo, optimistic = todo[len(first) :], optimistic[len(first) :]
            kth = sorted(best)[-k] if len(best) >= k else -math.inf
            reach = [t for t, o in zip(todo, optimistic) if o >= kth - _PRUNE_MARGIN]
            if reach:
                self._compute(indices[reach], at, side)
                for t, v in zip(reach, values[indices[reach]].tolist()):
                    vals[t] = v
                    exact[t] = True
        # Skipped arms are below the k-th best by more than the margin (exact or not).
        score = [sign * v if ok else -math.inf for v, ok in zip(vals, exact)]
        pos = sorted(range(len(score)), key=lambda t: -score[t])[:k]
        pos = np.array([t for t in pos if score[t] != -math.inf], dtype=np.intp)
        return pos, np.array([vals[t] for t in pos.tolist()], dtype=float)

    def _compute(self, stale, at, name):
        """Bounds of arms ``stale`` on side ``name`` at rate ``at``, cached (an index given
        twice is computed twice: callers pass distinct arms)."""
        cached_beta, values = self._cache[name]
        lower = name == "lower"
        if self._bounds_kernel is not None:
            # stratified_bound of each arm, compiled (the same bounds to the last bit)
            self._bounds_kernel(
                self.n1,
                self.pos1,
                self.n2,
                self.pos2,
                self.pi,
                stale,
                at,
                two_term_rate(at),
                lower,
                values,
            )
        else:
            counts = zip(*(a[stale].tolist() for a in (self.n1, self.pos1, self.n2, self.pos2)))
            values[stale] = [
                stratified_bound(
                    k1 / n1 if n1 else 0.0, n1, k2 / n2 if n2 else 0.0, n2, pi, at, lower
                )
                for (n1, k1, n2, k2), pi in zip(counts, self.pi[stale].tolist())
            ]
        cached_beta[stale] = at


# Pruning in StratifiedArms.extreme_bound keeps every arm within this distance of the k-th best
# exact bound (the bound solvers stop within about 1e-8 of the exact value).
_PRUNE_MARGIN = 1e-6
