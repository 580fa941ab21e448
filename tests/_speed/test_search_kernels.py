"""The compiled kernels of the tabular search (the ``fast`` extra): stream blocks
(:mod:`skanchors._speed.kernels.blocks`), stratum counts and bounds
(:mod:`skanchors._speed.kernels.arms`) and the prediction table
(:mod:`skanchors._speed.kernels.table`), each the same to the last bit as its numpy or
dictionary twin, in the searches that use them."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier

from skanchors import AnchorExplainer, _compiled, _sharing
from skanchors import _stratified as stratified
from skanchors._search import SampleStore, StratifiedArms
from skanchors._speed import cache
from skanchors.samplers import _tabular_kernels as tabular
from skanchors.samplers.tabular import TabularSampler

kernel = tabular.block_kernel()
arm_kernel = stratified._arm_kernel()
table_kernels = cache._table_kernels()
pytestmark = pytest.mark.skipif(
    kernel is None or arm_kernel is None or table_kernels is None,
    reason="numba (the fast extra) is not installed",
)


def _mixed_frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.normal(40, 12, n).round()
    age[rng.random(n) < 0.1] = np.nan  # missing values have predicates of their own
    return pd.DataFrame(
        {
            "age": age,
            "fare": rng.exponential(30, n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "flag": rng.choice([0, 1], n),
            "city": pd.Categorical(rng.choice(["a", "b", "c", "d"], n)),
        }
    )


def _blocks(instance, rng, n_blocks):
    d = instance.n_predicates
    out = []
    for _ in range(n_blocks):
        size = int(rng.integers(0, min(d, 4) + 1))
        anchor = tuple(sorted(rng.choice(d, size=size, replace=False).tolist()))
        out.append(((int(rng.integers(2**62)), int(rng.integers(4))), anchor))
    return out


@pytest.mark.parametrize("as_frame", [True, False])
def test_compiled_blocks_equal_the_numpy_blocks(monkeypatch, as_frame):
    X = _mixed_frame()
    if not as_frame:
        X = X[["age", "fare", "flag"]].to_numpy()
    sampler = TabularSampler(
        perturbation="replace", categorical_features=[2, 3, 4] if as_frame else [2]
    ).fit(X)
    rng = np.random.default_rng(1)
    compared, replaced, counts = 0, False, []
    for i in range(12):
        instance = sampler.instance(X.iloc[[i]] if as_frame else X[i : i + 1])
        blocks = _blocks(instance, rng, int(rng.integers(1, 5)))
        counts.append(len(blocks))
        seed = int(rng.integers(2**63))
        monkeypatch.setenv("SKANCHORS_NUMBA", "1")
        fast = instance._make_blocks(blocks, seed)
        monkeypatch.setenv("SKANCHORS_NUMBA", "0")
        slow = instance._make_blocks(blocks, seed)
        assert len(fast) == len(slow) == len(blocks)
        for got, want in zip(fast, slow):
            for a, b in zip(got[:4], want[:4]):  # src, base, keys, hashes
                assert a.dtype == b.dtype and a.shape == b.shape
                assert np.array_equal(a, b)
                compared += 1
            replaced |= bool((got[0] != got[1][:, None]).any())
    assert compared == sum(4 * n for n in counts)
    assert replaced  # values were replaced, not only base rows copied


@pytest.mark.parametrize("as_frame", [True, False])
def test_compiled_stream_windows_are_the_samples_of_the_blocks(monkeypatch, as_frame):
    # Windows drawn directly by the window kernel (no blocks made) against the blocks the
    # numpy code makes and cuts: the same rows, codes, hashes and predicate matrices, for
    # windows that start and stop anywhere, span blocks, or are empty, several per call.
    X = _mixed_frame()
    if not as_frame:
        X = X[["age", "fare", "flag"]].to_numpy()
    sampler = TabularSampler(
        perturbation="replace", categorical_features=[2, 3, 4] if as_frame else [2]
    ).fit(X)
    rng = np.random.default_rng(4)
    n = cache.STREAM_BLOCK
    spans = set()
    for i in range(12):
        instance = sampler.instance(X.iloc[[i]] if as_frame else X[i : i + 1])
        requests = []
        for (_, _), anchor in _blocks(instance, rng, int(rng.integers(1, 5))):
            start = int(rng.integers(0, 3 * n))
            stop = start + int(rng.choice([0, 1, 100, n, 2 * n + 7]))
            requests.append((anchor, start, stop))
            spans.add(stop // n - start // n)
        seed = int(rng.integers(2**63))
        # a disabled cache keeps no blocks: the window kernel applies
        monkeypatch.setenv("SKANCHORS_NUMBA", "1")
        assert instance._window_kernel(cache.SampleCache(0)) is not None
        fast = instance.stream_windows(requests, seed, cache.SampleCache(0))
        monkeypatch.setenv("SKANCHORS_NUMBA", "0")
        assert instance._window_kernel(cache.SampleCache(0)) is None
        slow = instance.stream_windows(requests, seed, cache.SampleCache(0))
        assert fast[4] is None  # no label memos
        for got, want in zip(fast[:4], slow[:4]):  # keys, holds, native, hashes
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want)
    assert {0, 1, 2} <= spans  # windows within a block and across one and two boundaries


def test_the_dictionary_cache_keeps_the_blocks_and_their_label_memos():
    X = _mixed_frame()
    sampler = TabularSampler(perturbation="replace", categorical_features=[2, 3, 4]).fit(X)
    instance = sampler.instance(X.iloc[[0]])
    dictionaries = cache.SampleCache(10_000)
    dictionaries._kernels = None  # what SKANCHORS_NUMBA=0 or a missing numba gives
    assert instance._window_kernel(dictionaries) is None
    *_, blocks = instance.stream_windows([((0,), 0, 100)], 3, dictionaries)
    key = (instance.stream_key((0,)), 0)
    assert blocks == [(key, 0, 100)] and dictionaries.get_block(key)
    # the labels of a block's rows are the cache's, by namespace and block
    memo = dictionaries.label_memo("space", key)
    assert memo.shape == (cache.STREAM_BLOCK,) and (memo == -1).all()
    memo[:3] = 1
    assert dictionaries.label_memo("space", key)[:3].tolist() == [1, 1, 1]
    assert (dictionaries.label_memo("other", key) == -1).all()
    compiled = cache.SampleCache(10_000)
    assert compiled.compiled and instance._window_kernel(compiled) is not None


def test_anchors_are_the_same_with_and_without_the_compiled_kernels(monkeypatch):
    X = _mixed_frame(800, seed=3)
    y = ((X["colour"] == "red") & (X["fare"] > 20)).astype(int)

    def encode(frame):
        return frame.assign(
            age=frame["age"].fillna(-1),
            colour=frame["colour"].map({"red": 0, "green": 1, "blue": 2}),
            city=frame["city"].cat.codes,
        )

    model = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(encode(X), y)

    def proba(frame):
        return model.predict_proba(encode(frame))

    out = []
    for compiled in (True, False):
        monkeypatch.setenv("SKANCHORS_NUMBA", "1" if compiled else "0")
        explainer = AnchorExplainer(
            proba, sampler=TabularSampler(perturbation="replace"), random_state=0
        ).fit(X)
        assert explainer._cache.compiled == compiled
        # one row per call: rows explained together share model calls in threads, and which
        # search predicts a shared row (and counts it) depends on timing
        out.append([explainer.explain(X.iloc[[i]])[0].to_dict() for i in range(6)])
    for fast, slow in zip(*out):
        fast.pop("wall_time")
        slow.pop("wall_time")
        assert fast == slow


@pytest.mark.parametrize(
    "load",
    [
        tabular.block_kernel,
        tabular.window_kernel,
        tabular.coverage_kernel,
        stratified._arm_kernel,
        cache._table_kernels,
    ],
)
def test_the_compiled_kernels_can_be_switched_off(monkeypatch, load):
    for setting, compiled in (("0", False), ("1", True), ("0", False)):
        monkeypatch.setenv("SKANCHORS_NUMBA", setting)
        assert (load() is not None) == compiled


def _counted_arms(monkeypatch, compiled, seed, streamed=False):
    """A search's store after draws for the empty rule, a parent, some of its children and a
    grandchild, and the stratified arms of the parent's children, counted with or without the
    compiled kernel; then more draws for some arms. ``streamed``: the samples are read from
    streams (the store keeps their base rows, not their native values)."""
    X = _mixed_frame(700, seed=seed)
    sampler = TabularSampler(
        perturbation="replace", categorical_features=[2, 3, 4], bounds="bin"
    ).fit(X)
    row = next(i for i in range(len(X)) if not np.isnan(X["age"].iloc[i]))
    instance = sampler.instance(X.iloc[[row]])
    feat = np.asarray(instance.predicate_features)
    # a parent on a feature with two predicates, so some children have two-predicate groups
    two = [q for q in range(instance.n_predicates) if np.count_nonzero(feat == feat[q]) == 2]
    parent = (two[0],) if two else (0,)
    children = [
        tuple(sorted(parent + (q,))) for q in range(instance.n_predicates) if q != parent[0]
    ]

    def predict(frame):
        return (frame["fare"].to_numpy() > 25).astype(np.int64)

    monkeypatch.setenv("SKANCHORS_NUMBA", "1" if compiled else "0")
    if streamed:
        shared = _sharing.Shared(cache.SampleCache(0), seed, 1)
        store = SampleStore(instance, predict, 1, None, shared)
        assert store.native is None and store.base is not None
    else:
        store = SampleStore(instance, predict, 1, np.random.default_rng(seed))
    grandchild = tuple(sorted(set(children[0]) | set(children[-1])))
    store.draw([((), 200), (parent, 150), (grandchild, 30)] + [(c, 40) for c in children[::2]])
    arms = StratifiedArms(store, children, [parent] * len(children))
    assert (arms._kernel is not None) == compiled
    counts = [a.copy() for a in (arms.n1, arms.pos1, arms.n2, arms.pos2)]
    arms.pull([0, len(children) - 1], 60)
    arms.pull_parents([1], 50, own=[2])
    groups = arms._groups
    return groups, counts, [a.copy() for a in (arms.n1, arms.pos1, arms.n2, arms.pos2)]


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_stratum_counts_equal_the_numpy_counts(monkeypatch, seed, streamed):
    groups, first_fast, then_fast = _counted_arms(monkeypatch, True, seed, streamed)
    _, first_slow, then_slow = _counted_arms(monkeypatch, False, seed, streamed)
    assert any(len(group) == 2 for group in groups)  # a child with a two-predicate group
    for fast, slow in zip(first_fast + then_fast, first_slow + then_slow):
        assert fast.dtype == slow.dtype and np.array_equal(fast, slow)
    n1, pos1, n2, pos2 = then_fast
    # both strata and both outcomes were counted, and the later draws added to the counts
    assert n1.sum() > 0 and n2.sum() > 0 and 0 < pos1.sum() < n1.sum()
    assert (then_fast[0] + then_fast[2]).sum() > (first_fast[0] + first_fast[2]).sum()


@pytest.mark.parametrize("lower", [True, False])
def test_compiled_bounds_equal_the_plain_float_bounds(lower):
    # Every kind of arm: two informative strata, one (the other empty or of weight 0 or 1),
    # none; precisions 0, 1 and between; several rates. Equal to the last bit.
    from skanchors._bounds import stratified_bound, two_term_rate

    bounds = arm_kernel[1]
    rng = np.random.default_rng(0)
    m = 4000
    n1, n2 = (rng.integers(0, 300, m).astype(float) for _ in range(2))
    n1[rng.random(m) < 0.1] = 0
    n2[rng.random(m) < 0.1] = 0

    def positives(n):
        u = rng.random(m)
        share = np.where(u < 0.2, 1.0, np.where(u < 0.3, 0.0, rng.random(m)))
        return np.floor(share * n)

    pos1, pos2 = positives(n1), positives(n2)
    pi = rng.random(m)
    pi[rng.random(m) < 0.05] = 0.0
    pi[rng.random(m) < 0.05] = 1.0
    for beta in (0.5, 2.375, 9.125):
        values = np.full(m, np.nan)
        rate = two_term_rate(beta)
        bounds(n1, pos1, n2, pos2, pi, np.arange(m), beta, rate, lower, values)
        want = [
            stratified_bound(k1 / a if a else 0.0, a, k2 / b if b else 0.0, b, w, beta, lower)
            for a, k1, b, k2, w in zip(*(v.tolist() for v in (n1, pos1, n2, pos2, pi)))
        ]
        assert values.tolist() == want


def _arms_state(rng, m, compiled):
    """A StratifiedArms of ``m`` arms with random counts and bounds cached at random rates
    (some stale), without a store: what its bound methods read."""
    arms = object.__new__(StratifiedArms)
    n1, n2 = (rng.integers(0, 200, m).astype(float) for _ in range(2))
    n1[rng.random(m) < 0.15] = 0
    n2[rng.random(m) < 0.15] = 0
    arms.n1, arms.n2 = n1, n2
    arms.pos1 = np.floor(n1 * np.where(rng.random(m) < 0.3, 1.0, rng.random(m)))
    arms.pos2 = np.floor(n2 * rng.random(m))
    arms.pi = rng.random(m)
    arms._estimates = None
    arms._bounds_kernel = arm_kernel[1]
    arms._extreme_kernel = arm_kernel[2] if compiled else None
    arms._estimates_kernel = arm_kernel[3] if compiled else None
    arms._cache = {}
    for side in ("lower", "upper"):
        betas = rng.integers(1, 40, m) / 8.0
        betas[rng.random(m) < 0.2] = np.nan
        values = np.zeros(m)
        for b in np.unique(betas[~np.isnan(betas)]):
            arms._cache[side] = (np.full(m, np.nan), values)
            arms._compute(np.flatnonzero(betas == b), float(b), side)
        arms._cache[side] = (betas, values)
    return arms


def test_compiled_extreme_bounds_and_estimates_equal_the_plain_float_ones():
    # The compiled StratifiedArms.extreme_bound and precision_estimates against their
    # plain-float twins: the same positions, bounds and cache updates, to the last bit, for
    # arms in any order, k = 1-3, both sides, rates above, below and at the cached ones.
    rng = np.random.default_rng(5)
    computed = 0
    for trial in range(400):
        m = int(rng.integers(1, 14))
        seed = int(rng.integers(2**32))
        fast = _arms_state(np.random.default_rng(seed), m, compiled=True)
        slow = _arms_state(np.random.default_rng(seed), m, compiled=False)
        assert fast.precision_estimates().tolist() == slow.precision_estimates().tolist()
        indices = rng.permutation(m)[: int(rng.integers(1, m + 1))].astype(np.intp)
        beta = float(rng.choice([rng.uniform(0.1, 6.0), rng.integers(1, 40) / 8.0]))
        side = "upper" if trial % 2 else "lower"
        k = int(rng.integers(1, 4))
        before = fast._cache[side][0].copy()
        got = fast.extreme_bound(indices, beta, side, k)
        want = slow.extreme_bound(indices, beta, side, k)
        assert got[0].dtype == want[0].dtype and got[0].tolist() == want[0].tolist()
        assert got[1].tolist() == want[1].tolist()
        for name in ("lower", "upper"):
            for a, b in zip(fast._cache[name], slow._cache[name]):
                assert np.array_equal(a, b, equal_nan=True)
        computed += int(np.sum(~np.isclose(before, fast._cache[side][0], equal_nan=True)))
    assert computed > 100  # bounds were computed (stale, moved, or needed), not only read


def test_rates_beyond_the_table_take_the_plain_float_bounds(monkeypatch):
    arms = _arms_state(np.random.default_rng(1), 6, compiled=True)
    monkeypatch.setattr(stratified, "_MAX_TABLED_RATE", 2.0)

    def untabled(at):
        raise AssertionError(f"rate {at} looked up in the table")

    monkeypatch.setattr(stratified, "_rate_table", untabled)
    pos, values = arms.extreme_bound(np.arange(6), 3.0, "upper", 2)
    slow = _arms_state(np.random.default_rng(1), 6, compiled=False)
    want = slow.extreme_bound(np.arange(6), 3.0, "upper", 2)
    assert pos.tolist() == want[0].tolist() and values.tolist() == want[1].tolist()


def test_fit_loads_the_search_kernels_not_the_first_explanation(monkeypatch):
    # numba compiles (or loads its cached code) at a kernel's first use, which belongs to fit
    # rather than to the first row explained
    X = _mixed_frame(200)
    names = (*stratified._KERNEL_NAMES, "make_blocks", "prediction_table")
    loaded = {k: v for k, v in _compiled._LOADED.items() if k not in names}
    monkeypatch.setattr(_compiled, "_LOADED", loaded)
    explainer = AnchorExplainer(lambda frame: np.tile([0.5, 0.5], (len(frame), 1)))
    explainer.fit(X)
    assert set(names) <= set(_compiled._LOADED)
    assert tuple(_compiled._LOADED[name] for name in stratified._KERNEL_NAMES) == arm_kernel
