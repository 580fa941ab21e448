"""KL confidence bounds and the two bandits against known answers."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import rel_entr

from skanchors import KLLUCB, BatchSAR
from skanchors._arms import Arms, ArmsCapabilities
from skanchors._bandit import compute_beta, make_bandit
from skanchors._bounds import (
    _kl as kl_divergence,
)
from skanchors._bounds import (
    kl_bound,
    kl_lower_bound,
    kl_upper_bound,
    stratified_bound,
    stratified_kl_bounds,
    two_term_rate,
)


def kl_bernoulli(p, q):
    """KL(Bern(p) || Bern(q)) by scipy, element-wise (independent of the code under test)."""
    return rel_entr(p, q) + rel_entr(1.0 - p, 1.0 - q)


def _kl(p, q):
    out = 0.0
    if p > 0:
        out += p * math.log(p / q)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q))
    return out


@pytest.mark.parametrize(
    "p, q, expected",
    [
        (0.5, 0.25, 0.5 * math.log(2) + 0.5 * math.log(0.5 / 0.75)),
        (0.9, 0.5, 0.9 * math.log(1.8) + 0.1 * math.log(0.2)),
        (0.0, 0.3, -math.log(0.7)),
        (1.0, 0.8, -math.log(0.8)),
        (0.4, 0.4, 0.0),
    ],
)
def test_kl_bernoulli_golden(p, q, expected):
    assert kl_divergence(p, q) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_kl_bernoulli_infinite_when_support_differs():
    assert kl_divergence(0.5, 0.0) == np.inf
    assert kl_divergence(0.5, 1.0) == np.inf


# Golden values computed independently with Brent's method on the closed-form KL.
GOLDEN = [
    (0.5, 0.1, 0.7128786),
    (0.9, 0.05, 0.9687216),
    (0.0, 0.2, 0.1812692),
    (0.95, 0.01, 0.9750189),
]


@pytest.mark.parametrize("p, level, approx", GOLDEN)
def test_upper_bound_golden(p, level, approx):
    q = kl_upper_bound(p, level)
    exact = brentq(lambda x: _kl(p, x) - level, p + 1e-15, 1 - 1e-15, xtol=1e-15)
    assert q == pytest.approx(exact, abs=1e-12)
    assert q == pytest.approx(approx, abs=1e-6)
    assert q >= p


@pytest.mark.parametrize("p, level", [(0.5, 0.1), (0.9, 0.05), (1.0, 0.2), (0.3, 0.001)])
def test_lower_bound_matches_brent(p, level):
    q = kl_lower_bound(p, level)
    exact = brentq(lambda x: _kl(p, x) - level, 1e-15, p - 1e-15, xtol=1e-15)
    assert q == pytest.approx(exact, abs=1e-12)
    assert q <= p


def test_bounds_are_vectorised_and_monotone():
    p = np.array([0.1, 0.5, 0.5, 0.99])
    level = np.array([0.1, 0.1, 0.01, 0.5])
    ub, lb = kl_upper_bound(p, level), kl_lower_bound(p, level)
    assert ub.shape == lb.shape == (4,)
    for i in range(4):
        assert ub[i] == pytest.approx(kl_upper_bound(p[i], level[i]))
        assert lb[i] == pytest.approx(kl_lower_bound(p[i], level[i]))
    # More samples (smaller level) give a tighter interval.
    assert ub[2] < ub[1] and lb[2] > lb[1]


def test_array_bounds_are_the_one_arm_bound_of_each_arm():
    """One formula: the array functions give each arm's kl_bound, to the last bit, whatever
    the number of arms (and the KL at the bound is the level)."""
    rng = np.random.default_rng(3)
    m = 130
    p = rng.uniform(size=m)
    p[:5], p[5:10] = 1.0, 0.0
    level = rng.uniform(0.0, 0.5, size=m)
    level[10:12] = 0.0
    for bound, upper in ((kl_upper_bound, True), (kl_lower_bound, False)):
        together = bound(p, level)
        alone = [kl_bound(a, b, upper) for a, b in zip(p.tolist(), level.tolist())]
        assert together.tolist() == alone
        assert [bound(p[i : i + 1], level[i : i + 1])[0] for i in range(m)] == alone
        # each is the root of KL(p || q) = level on its side (Brent's method, independent)
        for a, b, q in zip(p.tolist(), level.tolist(), alone):
            if b == 0.0 or a == (1.0 if upper else 0.0):
                assert q == a
                continue
            far = 1 - 1e-15 if upper else 1e-15
            if _kl(a, far) <= b:  # the whole side is inside: the bound is its end
                assert abs(q - far) <= 1e-12
                continue
            side = (a + 1e-15, far) if upper else (far, a - 1e-15)
            exact = brentq(lambda x, a=a, b=b: _kl(a, x) - b, *side, xtol=1e-15)
            assert abs(q - exact) <= 1e-12


def test_upper_bound_is_one_at_p_one_and_zero_level_gives_point():
    assert kl_upper_bound(1.0, 0.3) == 1.0
    # At level 0 the interval collapses to p, up to the resolution of KL near p (~1e-8).
    assert kl_upper_bound(0.3, 0.0) == pytest.approx(0.3, abs=1e-7)
    assert kl_lower_bound(0.3, 0.0) == pytest.approx(0.3, abs=1e-7)


def test_light_exploration_golden_and_sample_savings():
    # log((log t + 1) / delta) by hand; it does not depend on the number of arms
    assert compute_beta(10, 1, 0.1, "light") == pytest.approx(math.log(10))
    assert compute_beta(3, 7, 0.05, "light") == pytest.approx(math.log((math.log(7) + 1) / 0.05))
    assert compute_beta(15, 1, 0.1, "light") < compute_beta(15, 1, 0.1) / 5
    with pytest.raises(ValueError, match="exploration"):
        compute_beta(3, 1, 0.1, "heavy")
    with pytest.raises(ValueError, match="exploration"):
        KLLUCB(exploration="heavy")
    # the lighter rate stops with fewer samples, and still finds the best two arms
    light, theory = Coins(MEANS, 3), Coins(MEANS, 3)
    a = KLLUCB(exploration="light").select(light, 2, epsilon=0.05, delta=0.1, batch_size=20)
    b = KLLUCB(exploration="theory").select(theory, 2, epsilon=0.05, delta=0.1, batch_size=20)
    assert sorted(a.tolist()) == sorted(b.tolist()) == [3, 4]
    assert light.n_samples.sum() < 0.6 * theory.n_samples.sum()


def test_compute_beta_golden():
    # log(405.5 * K * t^1.1 / delta) + log log(...), evaluated by hand.
    inner = math.log(405.5 * 10 * 1**1.1 / 0.1)
    assert compute_beta(10, 1, 0.1) == pytest.approx(inner + math.log(inner))
    inner = math.log(405.5 * 3 * 7**1.1 / 0.05)
    assert compute_beta(3, 7, 0.05) == pytest.approx(inner + math.log(inner))
    assert compute_beta(10, 2, 0.1) > compute_beta(10, 1, 0.1)


class Coins(Arms):
    """Bernoulli arms with known means; counts pulls and model calls."""

    def __init__(self, means, seed):
        self.means = np.asarray(means, dtype=float)
        self.rng = np.random.default_rng(seed)
        self.n_samples = np.zeros(len(means))
        self.n_positives = np.zeros(len(means))
        self.calls = 0

    def pull(self, idx, n):
        self.calls += 1
        for i in np.atleast_1d(idx):
            self.n_samples[i] += n
            self.n_positives[i] += self.rng.binomial(n, self.means[i])


MEANS = [0.3, 0.55, 0.6, 0.85, 0.92, 0.5]


@pytest.mark.parametrize("bandit", [KLLUCB(), BatchSAR()], ids=["kl-lucb", "batch-sar"])
def test_bandits_find_the_top_two_arms(bandit):
    hits = 0
    for seed in range(20):
        coins = Coins(MEANS, seed)
        chosen = bandit.select(coins, 2, epsilon=0.05, delta=0.05, batch_size=20)
        hits += sorted(np.asarray(chosen).tolist()) == [3, 4]
        # Best last: ordered by empirical mean.
        emp = coins.n_positives[chosen] / coins.n_samples[chosen]
        assert emp[-1] >= emp[0]
    assert hits >= 19


@pytest.mark.parametrize("bandit", [KLLUCB(), BatchSAR()], ids=["kl-lucb", "batch-sar"])
@pytest.mark.parametrize("n_best", [1, 2])
def test_ties_in_precision_go_to_the_broader_rule(bandit, n_best):
    # four rules that all hold (precision 1): the search maximises coverage, so the bandit
    # keeps the broadest ones, whatever their order (BatchSAR kept the first, KL-LUCB the last)
    for coverage in ([0.51, 0.34, 0.17, 0.9], [0.17, 0.34, 0.51, 0.05], [0.3, 0.6, 0.45, 0.2]):
        coins = Coins([1.0, 1.0, 1.0, 1.0], seed=0)
        coins.coverage = np.array(coverage)
        chosen = np.asarray(bandit.select(coins, n_best, epsilon=0.1, delta=0.1, batch_size=20))
        assert chosen.tolist() == np.argsort(coverage)[-n_best:].tolist()  # best last
    # without coverage, ties go to the later arm in both
    coins = Coins([1.0, 1.0, 1.0], seed=0)
    assert np.asarray(bandit.select(coins, 1, epsilon=0.1, delta=0.1, batch_size=20)).tolist() == [
        2
    ]


@pytest.mark.parametrize("bandit", [KLLUCB(), BatchSAR()], ids=["kl-lucb", "batch-sar"])
def test_bandits_are_epsilon_correct(bandit):
    # Arms 0.90 and 0.88 are within epsilon of each other: either is a correct answer.
    means = [0.9, 0.88, 0.4, 0.3]
    for seed in range(10):
        chosen = bandit.select(Coins(means, seed), 1, epsilon=0.1, delta=0.1, batch_size=20)
        assert int(chosen[-1]) in (0, 1)


@pytest.mark.parametrize("exploration", ["light", "theory"])
def test_klucb_stops_with_separated_bounds(exploration):
    coins = Coins(MEANS, 0)
    delta, eps = 0.05, 0.05
    KLLUCB(exploration=exploration).select(coins, 2, epsilon=eps, delta=delta, batch_size=20)
    means = coins.n_positives / coins.n_samples
    # At the end the weakest chosen arm's LCB and strongest other arm's UCB overlap <= eps
    # for some round's beta; with the first-round beta (smallest) that must hold too.
    beta = compute_beta(len(MEANS), 1, delta, exploration)
    ub = kl_upper_bound(means[[0, 1, 2, 5]], beta / coins.n_samples[[0, 1, 2, 5]])
    lb = kl_lower_bound(means[[3, 4]], beta / coins.n_samples[[3, 4]])
    assert ub.max() - lb.min() <= eps


def test_klucb_larger_epsilon_needs_fewer_samples():
    loose = Coins(MEANS, 1)
    tight = Coins(MEANS, 1)
    KLLUCB().select(loose, 2, epsilon=0.3, delta=0.1, batch_size=10)
    KLLUCB().select(tight, 2, epsilon=0.05, delta=0.1, batch_size=10)
    assert loose.n_samples.sum() < tight.n_samples.sum()


def test_batchsar_pulls_all_surviving_arms_in_one_call():
    coins = Coins(MEANS, 0)
    BatchSAR(samples_per_arm=200).select(coins, 2, epsilon=0.1, delta=0.1, batch_size=10)
    # One call per phase: at most K - 1 phases.
    assert coins.calls <= len(MEANS) - 1
    assert coins.n_samples.sum() <= 200 * len(MEANS) + 10 * len(MEANS)


class ExactArms(Arms):
    """Arms whose empirical mean is always their true mean, starting with samples of their
    own (as rules that share samples do); ``pull_each`` draws a count per arm in one call."""

    def __init__(self, means, start, per_arm=True):
        self.means = np.asarray(means, dtype=float)
        self.n_samples = np.asarray(start, dtype=float)
        self.n_positives = self.means * self.n_samples
        self.calls = 0
        self.capabilities = ArmsCapabilities(pulls_each=per_arm)

    def pull(self, idx, n):
        self.pull_each(idx, np.full(len(idx), n))

    def pull_each(self, idx, counts):
        self.calls += 1
        for i, n in zip(np.atleast_1d(idx), counts):
            assert n > 0
            self.n_samples[i] += n
            self.n_positives[i] += self.means[i] * n


@pytest.mark.parametrize("per_arm", [True, False])
def test_batchsar_pulls_each_arm_by_what_it_lacks(per_arm):
    # K = 6, T = 1200: logbar = 1.95 and the phase counts are ceil(1194 / (1.95 (7 - s))) =
    # 103, 123, 154, 205, 307. With exact means SAR rejects arm 0, rejects 5, accepts 4,
    # rejects 1, rejects 2: {3, 4}. Arms 1, 3 and 4 start with 300, 120 and 40 samples.
    means = [0.3, 0.55, 0.6, 0.85, 0.92, 0.5]
    arms = ExactArms(means, [0, 300, 0, 120, 40, 0], per_arm=per_arm)
    chosen = BatchSAR(samples_per_arm=200).select(arms, 2, epsilon=0.1, delta=0.1, batch_size=10)
    assert chosen.tolist() == [3, 4]
    assert arms.calls == 5  # one model call per phase
    if per_arm:  # each arm exactly up to the count of the last phase it took part in
        assert arms.n_samples.tolist() == [103, 300, 307, 307, 154, 123]
    else:  # the arms that lack samples, by the largest lack (arm 1 is never pulled)
        assert arms.n_samples.tolist() == [103, 300, 307, 324, 174, 123]
    # (every surviving arm pulled by the largest lack, as before, ended at
    # [103, 505, 307, 427, 194, 123]: 1199 samples drawn instead of 834)


def test_batchsar_budget_changes_samples():
    small, large = Coins(MEANS, 0), Coins(MEANS, 0)
    BatchSAR(samples_per_arm=50).select(small, 2, epsilon=0.1, delta=0.1, batch_size=10)
    BatchSAR(samples_per_arm=500).select(large, 2, epsilon=0.1, delta=0.1, batch_size=10)
    assert small.n_samples.sum() < large.n_samples.sum()


def test_all_arms_when_n_best_covers_them():
    chosen = KLLUCB().select(Coins([0.1, 0.9], 0), 3, epsilon=0.1, delta=0.1, batch_size=5)
    assert sorted(chosen.tolist()) == [0, 1]


def test_bad_bandit_arguments():
    with pytest.raises(ValueError, match="n_best"):
        KLLUCB().select(Coins(MEANS, 0), 0, epsilon=0.1, delta=0.1, batch_size=5)
    for value in (-3, 0, 2.5):
        with pytest.raises(ValueError, match="samples_per_arm must be a positive integer"):
            BatchSAR(samples_per_arm=value)
    with pytest.raises(ValueError, match="max_rounds must be a positive integer"):
        KLLUCB(max_rounds=0)
    with pytest.raises(ValueError, match="warm_start must be True or False"):
        KLLUCB(warm_start="yes")
    with pytest.raises(ValueError, match="bandit must be"):
        make_bandit("ucb1")
    assert isinstance(make_bandit("batch-sar"), BatchSAR)


def test_klucb_ambiguous_pulls_need_fewer_calls():
    pair, ambiguous = Coins(MEANS, 2), Coins(MEANS, 2)
    a = KLLUCB(pulls="pair").select(pair, 2, epsilon=0.05, delta=0.1, batch_size=10)
    b = KLLUCB(pulls="ambiguous").select(ambiguous, 2, epsilon=0.05, delta=0.1, batch_size=10)
    assert sorted(a.tolist()) == sorted(b.tolist()) == [3, 4]
    assert ambiguous.calls < pair.calls


def test_klucb_warm_start_saves_calls():
    # Many weak arms: without a warm start each one costs a model call of its own.
    means = [0.3] * 16 + [0.5, 0.6, 0.9, 0.95]
    for seed in range(3):
        warm, cold = Coins(means, seed), Coins(means, seed)
        a = KLLUCB(warm_start=True).select(warm, 2, epsilon=0.1, delta=0.1, batch_size=50)
        b = KLLUCB(warm_start=False).select(cold, 2, epsilon=0.1, delta=0.1, batch_size=50)
        assert sorted(a.tolist()) == sorted(b.tolist()) == [18, 19]
        assert warm.n_samples.min() >= 50
        assert 3 * warm.calls < cold.calls
    with pytest.raises(ValueError, match="pulls"):
        KLLUCB(pulls="all")


# ----------------------------------------------------------------- stratified bounds
def test_stratified_bounds_reduce_to_kl_bounds_with_one_stratum():
    # All the weight on a stratum with samples, or the other stratum empty: plain KL bounds,
    # the empty stratum ranging over [0, 1].
    for p, n, level in [(0.9, 100, 2.0), (1.0, 30, 2.3), (0.0, 10, 1.0), (0.5, 7, 3.0)]:
        lb, ub = stratified_kl_bounds([[p, 0.3]], [[n, 0]], [1.0], level)
        assert lb[0] == pytest.approx(kl_lower_bound(p, level / n), abs=1e-12)
        assert ub[0] == pytest.approx(kl_upper_bound(p, level / n), abs=1e-12)
    lb, ub = stratified_kl_bounds([[0.9, 0.3]], [[100, 0]], [0.6], 2.0)
    assert lb[0] == pytest.approx(0.6 * kl_lower_bound(0.9, 0.02))
    assert ub[0] == pytest.approx(0.6 * kl_upper_bound(0.9, 0.02) + 0.4)


def test_two_term_rate_golden():
    # (1 + b) exp(-b) = exp(-beta): the Gamma(2, 1) tail at b equals delta.
    beta = math.log(10)
    b = two_term_rate(beta)
    assert (1 + b) * math.exp(-b) == pytest.approx(0.1, rel=1e-9)
    assert b == pytest.approx(3.8897, abs=1e-4)


def test_stratified_bounds_match_brute_force_optimum():
    """The bounds are the extremes of the weighted mean over the joint KL region."""
    p1, p2, n1, n2, w = 1.0, 0.85, 200, 20, 0.8
    beta = math.log(10)
    lb, ub = stratified_kl_bounds([[p1, p2]], [[n1, n2]], [w], beta)
    rate = two_term_rate(beta)
    q1 = np.linspace(0.9, 1.0, 4001)[:, None]
    q2 = np.linspace(0.3, 1.0, 4001)[None, :]
    inside = n1 * kl_bernoulli(p1, q1) + n2 * kl_bernoulli(p2, q2) <= rate
    values = np.where(inside, w * q1 + (1 - w) * q2, np.nan)
    assert np.nanmin(values) - 2e-4 <= lb[0] <= np.nanmin(values)  # never above: conservative
    assert np.nanmax(values) <= ub[0] <= np.nanmax(values) + 2e-4


def test_stratified_bounds_cover_the_true_mean():
    """Monte Carlo (fixed seed): each bound misses the true weighted mean less than delta."""
    rng = np.random.default_rng(0)
    delta = 0.1
    for p1, p2, n1, n2, w in [(0.97, 0.85, 60, 40, 0.6), (0.99, 0.9, 200, 20, 0.8)]:
        m = 20000
        x = np.column_stack([rng.binomial(n1, p1, m) / n1, rng.binomial(n2, p2, m) / n2])
        n = np.tile([n1, n2], (m, 1)).astype(float)
        lb, ub = stratified_kl_bounds(x, n, w, math.log(1 / delta))
        true = w * p1 + (1 - w) * p2
        assert np.mean(lb > true) < delta
        assert np.mean(ub < true) < delta
        # Tighter than adding one bound per stratum (each at delta / 2).
        level = math.log(2 / delta)
        added = w * kl_lower_bound(x[:, 0], level / n1) + (1 - w) * kl_lower_bound(
            x[:, 1], level / n2
        )
        assert np.mean(lb) > np.mean(added)


def test_array_stratified_bounds_are_the_one_arm_bound_of_each_arm():
    """One formula: stratified_kl_bounds gives each arm's stratified_bound, to the last bit."""
    rng = np.random.default_rng(1)
    m = 500
    p = rng.uniform(size=(m, 2))
    p[rng.uniform(size=(m, 2)) < 0.3] = 1.0
    n = rng.integers(0, 500, size=(m, 2)).astype(float)
    pi = np.array([rng.choice([0.0, rng.uniform(), 1.0], p=[0.05, 0.9, 0.05]) for _ in range(m)])
    beta = rng.uniform(0.5, 15, size=m)
    lb, ub = stratified_kl_bounds(p, n, pi, beta)
    for i in range(m):
        args = (float(p[i, 0]), float(n[i, 0]), float(p[i, 1]), float(n[i, 1]), float(pi[i]))
        assert stratified_bound(*args, float(beta[i]), True) == lb[i]
        assert stratified_bound(*args, float(beta[i]), False) == ub[i]
    assert ((lb > 0) & (ub < 1)).sum() > 100  # two informative strata, mostly


# ------------------------------------------------------- pruned extremes of the bounds
class _StratCoins:
    """Stratified arms with known stratum means (the bandit's view of tabular candidates)."""

    def __new__(cls, means1, means2, pi, seed):
        from skanchors import _search
        from skanchors._search import StratifiedArms

        arms = StratifiedArms.__new__(StratifiedArms)
        m = len(pi)
        arms.pi = np.asarray(pi, dtype=float)
        arms.n1, arms.pos1, arms.n2, arms.pos2 = (np.zeros(m) for _ in range(4))
        arms._cache = {name: (np.full(m, np.nan), np.zeros(m)) for name in ("lower", "upper")}
        arms._estimates = None
        # the compiled bounds where numba is installed, as real arms have them
        kernels = _search._arm_kernel() or (None,) * 4
        arms._kernel, arms._bounds_kernel, arms._extreme_kernel, arms._estimates_kernel = kernels
        rng = np.random.default_rng(seed)

        def pull(idx, n):
            for i in np.atleast_1d(idx):
                k1 = rng.binomial(n, arms.pi[i])
                arms.n1[i] += k1
                arms.pos1[i] += rng.binomial(k1, means1[i])
                arms.n2[i] += n - k1
                arms.pos2[i] += rng.binomial(n - k1, means2[i])
                for cached_beta, _ in arms._cache.values():
                    cached_beta[i] = np.nan
                arms._estimates = None

        arms.pull = pull
        return arms


class _Hidden(Arms):
    """The same arms without ``extreme_bound``: every bound is computed."""

    capabilities = ArmsCapabilities(own_estimator=True)

    def __init__(self, arms):
        self.arms = arms

    n_samples = property(lambda self: self.arms.n_samples)
    n_positives = property(lambda self: self.arms.n_positives)

    def pull(self, idx, n):
        self.arms.pull(idx, n)

    def precision_estimates(self):
        return self.arms.precision_estimates()

    def precision_bounds(self, indices, beta, side="both"):
        return self.arms.precision_bounds(indices, beta, side=side)


def test_bound_region_scales_about_the_estimate():
    """The claim the pruning rests on: at a larger rate the bound moves at most
    ``(s - 1)`` times its distance from the estimate, ``s`` the ratio of the rates."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        p = rng.uniform(size=(1, 2))
        n = rng.integers(0, 300, size=(1, 2)).astype(float)
        pi = rng.uniform()
        w = np.array([[pi, 1 - pi]])
        b0 = rng.uniform(0.5, 5)
        b1 = b0 * rng.uniform(1.0, 3.0)
        s = max(b1 / b0, two_term_rate(b1) / two_term_rate(b0))
        lb0, ub0 = stratified_kl_bounds(p, n, pi, b0)
        lb1, ub1 = stratified_kl_bounds(p, n, pi, b1)
        p_fill = p.copy()
        if n[0, 0] == 0:
            p_fill[0, 0] = p[0, 1]
        if n[0, 1] == 0:
            p_fill[0, 1] = p_fill[0, 0]
        c = float((w * p_fill).sum()) if n.any() else 0.0
        assert ub1[0] <= c + s * (ub0[0] - c) + 1e-9
        assert lb1[0] >= c - s * (c - lb0[0]) - 1e-9
        assert ub1[0] >= ub0[0] - 1e-12 and lb1[0] <= lb0[0] + 1e-12


@pytest.mark.parametrize("path", ["compiled", "plain floats"])
@pytest.mark.parametrize("side", ["upper", "lower"])
def test_extreme_bound_equals_the_full_argmax_and_computes_fewer(side, path, monkeypatch):
    from skanchors import _search

    if path == "compiled" and _search._arm_kernel() is None:
        pytest.skip("numba (the fast extra) is not installed")
    rng = np.random.default_rng(0)
    m = 14
    means1 = rng.uniform(0.3, 1.0, size=m)
    means2 = rng.uniform(0.3, 1.0, size=m)
    means1[5], means2[5] = means1[2], means2[2]  # a tie in distribution
    pi = rng.uniform(0.05, 0.95, size=m)
    pi[7] = 0.0  # one informative stratum at most
    fast = _StratCoins(means1, means2, pi, 0)
    full = _StratCoins(means1, means2, pi, 0)
    if path != "compiled":
        fast._extreme_kernel = fast._estimates_kernel = None
    computed = 0  # bounds computed: cached at a new rate (or where stale)
    idx = np.arange(m)
    fast.pull(idx, 30)
    full.pull(idx, 30)
    n_full = 0
    for t in range(1, 40):
        beta = compute_beta(m, t, 0.1, "light")
        k = 1 + t % 3
        before = fast._cache[side][0].copy()
        pos, value = fast.extreme_bound(idx, beta, side, k=k)
        computed += int(np.count_nonzero(fast._cache[side][0] != before))  # NaN != anything
        bounds = full.precision_bounds(idx, beta, side=side)[0 if side == "lower" else 1]
        n_full += m
        sign = 1.0 if side == "upper" else -1.0
        want = np.argsort(-sign * bounds, kind="stable")[:k]
        np.testing.assert_array_equal(pos, want)
        np.testing.assert_allclose(value, bounds[want], atol=1e-9)
        pick = rng.choice(m, size=2, replace=False)
        fast.pull(pick, 20)
        full.pull(pick, 20)
    assert 0 < computed < 0.5 * n_full


def test_klucb_selects_the_same_with_and_without_pruning():
    rng = np.random.default_rng(4)
    for seed in range(8):
        m = 10
        means1 = rng.uniform(0.5, 1.0, size=m)
        means2 = rng.uniform(0.5, 1.0, size=m)
        pi = rng.uniform(0.1, 0.9, size=m)
        for challengers in (1, 3):
            fast = _StratCoins(means1, means2, pi, seed)
            full = _StratCoins(means1, means2, pi, seed)
            bandit = KLLUCB(challengers=challengers)
            a = bandit.select(fast, 2, epsilon=0.1, delta=0.1, batch_size=20)
            b = bandit.select(_Hidden(full), 2, epsilon=0.1, delta=0.1, batch_size=20)
            assert a.tolist() == b.tolist()
            np.testing.assert_array_equal(fast.n_samples, full.n_samples)


def test_klucb_more_challengers_fewer_rounds_same_answer():
    """Sampling the three strongest challengers a round finds the same top arms in fewer
    model calls (rounds) on many close arms."""
    means = [0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.82, 0.84, 0.86, 0.93, 0.95]
    calls = {1: 0, 3: 0}
    for seed in range(10):
        for k in calls:
            coins = Coins(means, seed)
            chosen = KLLUCB(challengers=k).select(coins, 2, epsilon=0.05, delta=0.1, batch_size=20)
            assert sorted(chosen.tolist()) == [9, 10]
            calls[k] += coins.calls
    assert calls[3] < 0.8 * calls[1]
    with pytest.raises(ValueError, match="challengers"):
        KLLUCB(challengers=0)


class _FiniteCoins(Coins):
    """Arms with ``n_available`` samples each (reference rows): a pull stops at the supply."""

    capabilities = ArmsCapabilities(finite_supply=True)

    def __init__(self, means, available, seed):
        super().__init__(means, seed)
        self.n_available = np.asarray(available, dtype=float)

    def pull(self, idx, n):
        self.calls += 1
        for i in np.atleast_1d(idx):
            k = int(min(n, self.n_available[i] - self.n_samples[i]))
            assert k > 0, "an arm without samples left was pulled"
            self.n_samples[i] += k
            self.n_positives[i] += self.rng.binomial(k, self.means[i])


@pytest.mark.parametrize("pulls", ["pair", "ambiguous"])
def test_klucb_stops_when_the_deciding_arms_are_spent(pulls):
    # Two close arms with 30 samples each cannot be told apart at epsilon 0.01: the bandit
    # returns once both are spent instead of pulling them for max_rounds rounds.
    coins = _FiniteCoins([0.9, 0.92, 0.2], [30, 30, 10_000], seed=0)
    chosen = KLLUCB(pulls=pulls).select(coins, 1, epsilon=0.01, delta=0.05, batch_size=10)
    assert coins.n_samples[:2].tolist() == [30, 30]
    assert coins.calls < 10
    assert chosen[-1] in (0, 1)
