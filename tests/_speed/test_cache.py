"""Perturbation streams and the speed layer's prediction cache (skanchors._speed.cache)."""

import threading

import numpy as np
import pandas as pd
import pytest

from skanchors import config_context
from skanchors._hashing import STREAM_BLOCK
from skanchors._speed.cache import SampleCache
from skanchors.samplers import TabularSampler


@pytest.fixture(scope="module")
def sampler():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "age": rng.integers(18, 80, size=500).astype(float),
            "sex": rng.choice(["f", "m"], size=500),
            "hours": rng.normal(40, 5, size=500),
        }
    )
    return TabularSampler(perturbation="replace").fit(X)


def _row(age, sex, hours):
    return pd.DataFrame({"age": [float(age)], "sex": [sex], "hours": [float(hours)]})


def _predicate(inst, text):
    return [str(p) for p in inst.predicates].index(text)


def test_stream_depends_on_predicates_not_on_the_row(sampler):
    a = sampler.instance(_row(20, "f", 30))
    b = sampler.instance(_row(21, "f", 55))  # same age bin and sex, other hours bin
    assert a.stream_key(()) == b.stream_key(())
    sex_a, sex_b = _predicate(a, "sex = f"), _predicate(b, "sex = f")
    assert a.stream_key((sex_a,)) == b.stream_key((sex_b,))
    keys_a, _, _ = a.stream_samples((sex_a,), 0, 300, 7, SampleCache(0))
    keys_b, _, _ = b.stream_samples((sex_b,), 0, 300, 7, SampleCache(0))
    np.testing.assert_array_equal(keys_a, keys_b)
    assert (a.decode(keys_a)["sex"] == "f").all()
    # Other predicates, another seed: other streams.
    hours = [i for i, p in enumerate(a.predicates) if p.feature == "hours"][0]
    assert a.stream_key((hours,)) != a.stream_key((sex_a,))
    other, _, _ = a.stream_samples((sex_a,), 0, 300, 8, SampleCache(0))
    assert not np.array_equal(other, keys_a)


def test_stream_reads_do_not_depend_on_how_they_are_split(sampler):
    inst = sampler.instance(_row(50, "m", 40))
    anchor = (0, 1) if inst.n_predicates > 1 else (0,)
    whole = inst.stream_samples(anchor, 0, 3 * STREAM_BLOCK + 5, 3, SampleCache(10_000))
    cache = SampleCache(10_000)
    cuts = [0, 100, 101, STREAM_BLOCK, 2 * STREAM_BLOCK + 7, 3 * STREAM_BLOCK + 5]
    parts = [inst.stream_samples(anchor, s, e, 3, cache) for s, e in zip(cuts, cuts[1:])]
    for j in range(3):
        np.testing.assert_array_equal(whole[j], np.concatenate([p[j] for p in parts]))
    # Every sample satisfies the anchor it was drawn for.
    assert whole[1][:, list(anchor)].all()


def test_blocks_do_not_depend_on_which_blocks_are_generated_with_them(sampler):
    inst = sampler.instance(_row(50, "m", 40))
    sex = _predicate(inst, "sex = m")
    wanted = [((inst.stream_key(()), 0), ()), ((inst.stream_key((sex,)), 3), (sex,))]
    together = inst._make_blocks(wanted, 11)
    for block, one in zip(together, wanted):
        alone = inst._make_blocks([one], 11)[0]
        for part, same in zip(block, alone):
            np.testing.assert_array_equal(part, same)


def _chi_square_p(counts, expected):
    from scipy.stats import chisquare

    return chisquare(counts, expected * counts.sum() / expected.sum()).pvalue


def test_stream_draws_rows_uniformly_and_replaces_values_from_the_pool(sampler):
    """Counter-based streams: base rows uniform over the reference rows; a replaced value is
    uniform over the rows that satisfy the predicate (chi-square, fixed seeds)."""
    inst = sampler.instance(_row(50, "f", 40))
    n_ref = sampler.n_reference_
    keys, _, native = inst.stream_samples((), 0, 200 * STREAM_BLOCK, 5, SampleCache(0))
    assert len(keys) == len(native) == 200 * STREAM_BLOCK
    blocks = inst._make_blocks([((inst.stream_key(()), b), ()) for b in range(200)], 5)
    rows = np.concatenate([blk[1] for blk in blocks])
    np.testing.assert_array_equal(keys, np.concatenate([blk[2] for blk in blocks]))
    assert _chi_square_p(np.bincount(rows, minlength=n_ref), np.ones(n_ref)) > 0.001
    # Anchored on sex = f: base rows with sex = m take the sex of a random female row.
    sex = _predicate(inst, "sex = f")
    f = inst.predicate_features[sex]
    blocks = inst._make_blocks([((inst.stream_key((sex,)), b), (sex,)) for b in range(200)], 5)
    src = np.concatenate([blk[0] for blk in blocks])
    base = np.concatenate([blk[1] for blk in blocks])
    female = inst._holds[:n_ref, sex]
    replaced = ~female[base]
    assert female[src[:, f]].all()  # every sample satisfies the anchor
    np.testing.assert_array_equal(src[~replaced, f], base[~replaced])  # others untouched
    pool = np.flatnonzero(female)
    counts = np.bincount(src[replaced, f], minlength=n_ref)[pool]
    assert _chi_square_p(counts, np.ones(len(pool))) > 0.001
    # sample() reads the start of a fresh stream: the same rules, any number of draws.
    keys, holds, native = inst.sample((sex,), 300, np.random.default_rng(2), return_native=True)
    assert keys.shape == (300, src.shape[1]) and holds[:, sex].all()
    assert native.shape == holds.shape and not native[:, sex].all()  # some were replaced
    empty = inst.sample((sex,), 0, np.random.default_rng(2))
    assert empty[0].shape == (0, src.shape[1]) and empty[1].shape == (0, inst.n_predicates)
    # Other features keep the base row's value.
    others = [j for j in range(src.shape[1]) if j != f]
    np.testing.assert_array_equal(src[:, others], np.repeat(base[:, None], len(others), axis=1))


def test_weighted_stream_draws_rows_in_proportion_to_their_weight():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.choice(["x", "y"], size=60)})
    weight = np.where(np.arange(60) < 20, 3.0, 1.0)
    sampler = TabularSampler(perturbation="replace").fit(X, sample_weight=weight)
    inst = sampler.instance(X.iloc[[0]])
    blocks = inst._make_blocks([((inst.stream_key(()), b), ()) for b in range(100)], 2)
    rows = np.concatenate([blk[1] for blk in blocks])
    assert _chi_square_p(np.bincount(rows, minlength=60), weight) > 0.001
    b = _predicate(inst, f"b = {X['b'].iloc[0]}")
    blocks = inst._make_blocks([((inst.stream_key((b,)), k), (b,)) for k in range(100)], 2)
    src = np.concatenate([blk[0] for blk in blocks])
    base = np.concatenate([blk[1] for blk in blocks])
    col = inst.predicate_features[b]
    ok = (X["b"] == X["b"].iloc[0]).to_numpy()
    replaced = ~ok[base]
    pool = np.flatnonzero(ok)
    counts = np.bincount(src[replaced, col], minlength=60)[pool]
    assert _chi_square_p(counts, weight[pool]) > 0.001


def _has_numba():
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(params=["compiled", "dicts"])
def make_cache(request):
    """SampleCache with predictions in the compiled table (numba) or in dictionaries."""

    def make(size):
        cache = SampleCache(size)
        if request.param == "dicts":
            cache._kernels = None
        elif size and cache._kernels is None:
            pytest.skip("numba is not installed")
        return cache

    return make


def test_claim_fill_wait_between_two_searches(make_cache):
    cache = make_cache(100)
    hashes = np.array([11, 12, 13], dtype=np.uint64)
    first, second = object(), object()
    labels, mine, theirs = cache.claim("ns", hashes, first)
    assert labels.tolist() == [-1, -1, -1] and mine.tolist() == [0, 1, 2] and theirs.size == 0
    labels, mine, theirs = cache.claim("ns", hashes[1:], second)
    assert mine.size == 0 and theirs.tolist() == [0, 1]
    got = []
    waiter = threading.Thread(target=lambda: got.append(cache.wait("ns", hashes[1:])))
    waiter.start()
    cache.fill("ns", hashes, np.array([0, 1, 0]), first)
    waiter.join(timeout=5)
    assert got[0].tolist() == [1, 0]
    labels, mine, theirs = cache.claim("ns", hashes, second)
    assert labels.tolist() == [0, 1, 0] and mine.size == theirs.size == 0
    # Another namespace (e.g. another regression target) knows nothing of them.
    assert cache.claim("other", hashes, second)[0].tolist() == [-1, -1, -1]


def test_failed_prediction_releases_its_claims(make_cache):
    cache = make_cache(100)
    hashes = np.array([5, 6], dtype=np.uint64)
    owner, other = object(), object()
    cache.claim("ns", hashes, owner)
    cache.fill("ns", hashes, None, owner)  # the model raised
    labels, mine, theirs = cache.claim("ns", hashes, other)
    assert mine.tolist() == [0, 1] and theirs.size == 0


def test_cache_size_bounds_the_predictions_kept(make_cache):
    cache = make_cache(10)
    owner = object()
    for start in range(0, 40, 4):
        h = np.arange(start, start + 4, dtype=np.uint64)
        cache.claim("ns", h, owner)
        cache.fill("ns", h, np.zeros(4, dtype=np.int64), owner)
        assert len(cache) <= 10
    off = make_cache(0)
    h = np.arange(3, dtype=np.uint64)
    assert off.claim("ns", h, owner)[1].tolist() == [0, 1, 2]
    off.fill("ns", h, np.zeros(3, dtype=np.int64), owner)
    assert len(off) == 0 and off.claim("ns", h, owner)[0].tolist() == [-1, -1, -1]


def test_claim_rows_predicts_each_distinct_row_once_and_copies_the_repeats(make_cache):
    cache = make_cache(100)
    owner, other = object(), object()
    hashes = np.array([7, 0, 7, 9, 0, 7], dtype=np.uint64)  # 0 is a hash like any other
    labels, mine, theirs, dups, dup_of = cache.claim_rows("ns", hashes, owner)
    assert labels.tolist() == [-1] * 6 and theirs.size == 0
    assert mine.tolist() == [0, 1, 3]
    assert dups.tolist() == [2, 4, 5] and dup_of.tolist() == [0, 1, 0]
    # another search meanwhile waits for all of them, repeats included
    assert cache.claim_rows("ns", hashes[:3], other)[2].tolist() == [0, 1, 2]
    cache.fill("ns", hashes[mine], np.array([1, 2, 3]), owner)
    labels, mine, theirs, dups, _ = cache.claim_rows("ns", hashes, other)
    assert labels.tolist() == [1, 2, 1, 3, 2, 1] and mine.size == theirs.size == dups.size == 0
    assert cache.hits == 6


def test_a_search_interrupted_before_its_fill_predicts_its_rows_again(make_cache):
    # A claim left open (the search was interrupted between its claim and its fill) stays
    # the owner's: its next claim predicts those rows itself, and copies nothing from them.
    cache = make_cache(100)
    owner = object()
    cache.claim_rows("ns", np.array([4, 5], dtype=np.uint64), owner)
    hashes = np.array([5, 6, 5], dtype=np.uint64)
    labels, mine, theirs, dups, dup_of = cache.claim_rows("ns", hashes, owner)
    assert mine.tolist() == [0, 1] and theirs.size == 0
    assert dups.tolist() == [2] and dup_of.tolist() == [0]


def test_compiled_table_answers_as_the_dictionaries_do():
    """Random claims, fills, failures and restarts by three searches, replayed on both
    back ends (the table grows from 1,024 slots to hold 5,000 hashes)."""
    compiled = SampleCache(4_000)
    if compiled._kernels is None:
        pytest.skip("numba is not installed")
    dicts = SampleCache(4_000)
    dicts._kernels = None
    owners = [object() for _ in range(3)]
    rng = np.random.default_rng(0)
    pending = {}
    for _ in range(400):
        k = int(rng.integers(3))
        if k in pending:
            hashes, mine = pending.pop(k)
            labels = None if rng.random() < 0.1 else rng.integers(0, 3, size=mine.size)
            for cache in (compiled, dicts):
                cache.fill("ns", hashes[mine], labels, owners[k])
            assert len(compiled) == len(dicts)
            continue
        hashes = rng.integers(0, 5_000, size=int(rng.integers(1, 60))).astype(np.uint64)
        got = [cache.claim_rows("ns", hashes, owners[k]) for cache in (compiled, dicts)]
        for a, b in zip(*got):
            np.testing.assert_array_equal(a, b)
        pending[k] = (hashes, got[0][1])
        for cache in (compiled, dicts):
            assert cache.wait("other", hashes).tolist() == [-1] * len(hashes)
    assert compiled.hits == dicts.hits > 0


def test_coverage_is_the_weighted_share_of_reference_rows_satisfying_every_predicate():
    """Coverage of many rules at once (bit-sets ANDed per rule length) against the
    predicates evaluated on the reference data itself."""
    import itertools

    rng = np.random.default_rng(3)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=301),
            "b": rng.choice(list("xyz"), size=301),
            "c": rng.integers(0, 5, size=301).astype(float),
        }
    )
    weight = rng.random(301)
    for w in (None, weight):
        sampler = TabularSampler(perturbation="replace").fit(X, sample_weight=w)
        inst = sampler.instance(X.iloc[[7]])
        d = inst.n_predicates
        rules = [r for k in range(4) for r in itertools.combinations(range(d), k)]
        share = np.full(301, 1 / 301) if w is None else w / w.sum()
        expected = [
            share[np.logical_and.reduce([inst.predicates[p].evaluate(X) for p in r])].sum()
            if r
            else 1.0
            for r in rules
        ]
        np.testing.assert_allclose(inst.coverage(rules), expected, rtol=1e-12)
        # Asked again (now from the cache, in another order): the same values.
        np.testing.assert_allclose(inst.coverage(rules[::-1]), expected[::-1], rtol=1e-12)


def test_rows_explained_together_with_a_small_cache_that_starts_over_do_not_deadlock():
    # A search waiting for rows another search predicts must not wait for rows claimed
    # *again* after the cache started over (and forgot their labels): their new owner may be
    # waiting for it in a merged model call. 8 Titanic rows with a 300-prediction cache hung
    # (found in review); the anchors must be those of the rows explained one by one.
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    from skanchors import AnchorExplainer
    from skanchors.datasets import load_titanic

    X, y = load_titanic(return_X_y=True)
    cat = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    encode = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    model = make_pipeline(
        make_column_transformer((encode, cat), remainder="passthrough"),
        HistGradientBoostingClassifier(max_iter=50, random_state=0),
    ).fit(X, y)
    rows = X.iloc[:8]
    found = []

    def together():
        with config_context(cache_size=300):
            explainer = AnchorExplainer(
                model, sampler=TabularSampler(perturbation="replace"), random_state=0
            )
            found.extend(explainer.fit(X).explain(rows))

    thread = threading.Thread(target=together, daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the searches deadlocked"
    with config_context(cache_size=0):
        alone = AnchorExplainer(
            model, sampler=TabularSampler(perturbation="replace"), random_state=0
        ).fit(X)
        expected = [alone.explain(rows.iloc[[i]])[0] for i in range(len(rows))]
    assert [str(a) for a in found] == [str(a) for a in expected]


@pytest.mark.parametrize("size", [0, 1000])
def test_a_failed_prediction_ends_the_waits_for_its_rows(size):
    # A search whose model call failed releases its claims: a search waiting for those rows
    # predicts them itself rather than wait for a search that claims them again.
    cache = SampleCache(size)
    hashes = np.array([11, 12, 13], dtype=np.uint64)
    owner, other = object(), object()
    epoch = cache.epoch
    labels, mine, theirs = cache.claim("c", hashes, owner)
    assert mine.tolist() == [0, 1, 2] and not len(theirs)
    cache.fill("c", hashes[:1], np.array([1]), owner)
    cache.fill("c", hashes[1:], None, owner)
    assert cache.epoch == epoch + 1
    # rows 12 and 13 are claimed again by another search: a waiter from before gives up
    cache.claim("c", hashes[1:], other)
    done = []
    waiter = threading.Thread(target=lambda: done.append(cache.wait("c", hashes, since=epoch)))
    waiter.start()
    waiter.join(10)
    assert not waiter.is_alive()
    assert done[0].tolist() == ([1, -1, -1] if size else [-1, -1, -1])


# ----------------------------------------------------------------- each anchor's counts
class _Counting:
    """A forest's probabilities from a model whose calls take a random time (0 or 4 ms: on
    either side of the one-row time above which explain shares calls across rows), counting
    the rows it predicts."""

    def __init__(self, forest, seed):
        self.forest = forest
        self.classes_ = forest.classes_
        self.rng = np.random.default_rng(seed)
        self.rows = 0

    def predict_proba(self, X):
        import time

        time.sleep(float(self.rng.choice([0.0, 0.004])))
        self.rows += len(X)
        return self.forest.predict_proba(X)


@pytest.fixture(scope="module")
def titanic():
    from sklearn.ensemble import RandomForestClassifier

    from skanchors.datasets import load_titanic

    X, y = load_titanic(return_X_y=True)
    X = X[["Pclass", "Age", "SibSp", "Fare"]].fillna(30.0)
    return X, RandomForestClassifier(n_estimators=15, random_state=0).fit(X, y)


@pytest.mark.filterwarnings("ignore:Row .*no rule reached")
@pytest.mark.parametrize("numba", [True, False], ids=["compiled table", "dictionaries"])
def test_an_anchor_s_counts_do_not_depend_on_sharing_or_turns(titanic, numba, monkeypatch):
    # Rows explained together share model calls when a one-row call is slow (a timing), in
    # threads that take turns in whatever order: which search predicted a row two of them
    # needed, and so each anchor's n_model_calls and n_rows_predicted, varied between
    # identical runs. They are now those of the rows explained one after the other.
    import skanchors.explainer as explainer_module
    from skanchors import AnchorExplainer

    if not numba:
        monkeypatch.setattr(SampleCache, "compiled", property(lambda self: False))
        monkeypatch.setattr("skanchors._speed.cache._table_kernels", lambda: None)
    X, forest = titanic
    rows = X.iloc[:10]
    runs = []
    for limit, seed in [(float("inf"), 0), (0.0, 0), (explainer_module._SHARE_CALLS_ABOVE, 1)]:
        # never shared, always shared, decided by the timing of a randomly slow model
        monkeypatch.setattr(explainer_module, "_SHARE_CALLS_ABOVE", limit)
        model = _Counting(forest, seed)
        anchors = AnchorExplainer(model, random_state=0).fit(X).explain(rows)
        counts = [(a.n_model_calls, a.n_rows_predicted) for a in anchors]
        runs.append(([str(a) for a in anchors], counts))
        # every row the model predicted is counted once, by the first row that needed it
        assert sum(n for _, n in counts) == model.rows
    assert runs[1] == runs[0] and runs[2] == runs[0]
    assert len({n for _, n in runs[0][1]}) > 3  # (the rows do cost different amounts)


@pytest.mark.filterwarnings("ignore:Row .*no rule reached")
@pytest.mark.parametrize("limit", [float("inf"), 0.0], ids=["one after the other", "shared"])
def test_rows_with_one_search_are_searched_once_whether_or_not_they_share_calls(
    titanic, limit, monkeypatch
):
    # Searches that share calls run at the same time and could not find each other's result
    # in the cache: two rows with the same search (the same bins) were searched twice when a
    # one-row call happened to take more than 2 ms (a loaded machine), once otherwise.
    import skanchors._explain_rows as rows_module
    import skanchors.explainer as explainer_module
    from skanchors import AnchorExplainer

    monkeypatch.setattr(explainer_module, "_SHARE_CALLS_ABOVE", limit)
    searched = []
    search = rows_module._search_one

    def counting(instance, task, row, *args, **kwargs):
        searched.append(row)
        return search(instance, task, row, *args, **kwargs)

    monkeypatch.setattr(rows_module, "_search_one", counting)
    X, forest = titanic
    twins = X.iloc[[0, 0, 1, 0, 1]]  # two rows' searches for five rows
    model = _Counting(forest, seed=0)
    anchors = AnchorExplainer(model, random_state=0).fit(X).explain(twins)
    # each row's search is on the reference rows, then, if no rule validates there, on
    # replaced rows (perturbation="auto")
    replaced = sum(a.perturbation == "replace" for a in anchors[:3:2])
    assert len(searched) == 2 + replaced
    assert [str(a) for a in anchors] == [str(anchors[i]) for i in (0, 0, 2, 0, 2)]
    assert [anchors[i].n_model_calls for i in (1, 3, 4)] == [1, 1, 1]  # their row's call only
    assert sum(a.n_rows_predicted for a in anchors) == model.rows
