"""Perturbation streams and the shared prediction cache (skanchors._cache)."""

import threading

import numpy as np
import pandas as pd
import pytest

from skanchors._cache import STREAM_BLOCK, SampleCache
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
    return TabularSampler().fit(X)


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


def test_claim_fill_wait_between_two_searches():
    cache = SampleCache(100)
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


def test_failed_prediction_releases_its_claims():
    cache = SampleCache(100)
    hashes = np.array([5, 6], dtype=np.uint64)
    owner, other = object(), object()
    cache.claim("ns", hashes, owner)
    cache.fill("ns", hashes, None, owner)  # the model raised
    labels, mine, theirs = cache.claim("ns", hashes, other)
    assert mine.tolist() == [0, 1] and theirs.size == 0


def test_cache_size_bounds_the_predictions_kept():
    cache = SampleCache(10)
    owner = object()
    for start in range(0, 40, 4):
        h = np.arange(start, start + 4, dtype=np.uint64)
        cache.claim("ns", h, owner)
        cache.fill("ns", h, np.zeros(4, dtype=np.int64), owner)
        assert len(cache) <= 10
    off = SampleCache(0)
    h = np.arange(3, dtype=np.uint64)
    assert off.claim("ns", h, owner)[1].tolist() == [0, 1, 2]
    off.fill("ns", h, np.zeros(3, dtype=np.int64), owner)
    assert len(off) == 0 and off.claim("ns", h, owner)[0].tolist() == [-1, -1, -1]
