"""The per-row tabular sampler: packed masks, coverage, pools, codes and decoding."""

import numpy as np
import pandas as pd
import pytest
from tabular_planted import (
    PlantedModel,
)

from skanchors import (
    AnchorExplainer,
)
from skanchors.samplers import TabularSampler


def test_bit_counts_of_packed_masks_match_a_plain_count():
    # The coverage of rules is counted from packed masks: numpy's bit count where numpy has
    # one (>= 2), the SWAR count on 64-bit words otherwise; both must be exact.
    from skanchors.samplers import _popcount as pc
    from skanchors.samplers import tabular as tab

    rng = np.random.default_rng(0)
    masks = rng.random((5, 1000)) < [[0.0], [1.0], [0.5], [0.01], [0.99]]
    padded = np.zeros((5, 1024), dtype=bool)
    padded[:, :1000] = masks
    bits = np.packbits(padded, axis=1)
    expected = masks.sum(axis=1).tolist()
    assert pc._popcounts_swar(bits).tolist() == expected
    assert pc._popcounts_1x(bits).tolist() == expected  # lookup table (narrow rows)
    wide = np.packbits(np.tile(padded, (1, 3)), axis=1)  # 384 bytes a row: SWAR
    assert pc._popcounts_1x(wide).tolist() == [3 * e for e in expected]
    assert pc.popcounts(bits).tolist() == expected
    assert pc.bitcount(bits[2]) == expected[2]
    # the sampler's own masks are padded to whole words, and counted alike
    X = pd.DataFrame({"a": np.arange(1001.0), "b": ["u", "v", "w"] * 333 + ["u", "u"]})
    sampler = tab.TabularSampler().fit(X)
    inst = sampler.instance(X.iloc[[0]])
    assert inst._bits.shape[1] % 8 == 0
    for k, p in enumerate(inst.predicates):
        assert inst.reference_coverage((k,)) == pytest.approx(p.evaluate(X).mean())


@pytest.mark.parametrize("compiled", [True, False])
def test_coverage_of_rules_is_the_share_of_reference_rows_they_cover(compiled, monkeypatch):
    # compiled: the AND-and-count kernel (with numba); else numpy's arrays, the same counts
    from skanchors.samplers import _tabular_kernels as kernels
    from skanchors.samplers import tabular as tab

    if compiled and kernels.block_kernel() is None:
        pytest.skip("numba is not installed")
    if not compiled:
        monkeypatch.setenv("SKANCHORS_NUMBA", "0")
    rng = np.random.default_rng(3)
    X = pd.DataFrame(
        {"a": rng.normal(size=1500), "b": rng.normal(size=1500), "c": rng.choice(list("uvw"), 1500)}
    )
    inst = tab.TabularSampler(bounds="all").fit(X).instance(X.iloc[[0]])
    d = inst.n_predicates
    rules = [(p,) for p in range(d)] + [(p, q) for p in range(d) for q in range(p + 1, d)]
    rules += [tuple(range(d))]
    got = inst.coverage(rules)
    for rule, value in zip(rules, got):
        mask = np.ones(len(X), dtype=bool)
        for p in rule:
            mask &= inst.predicates[p].evaluate(X)
        assert value == mask.mean()


@pytest.mark.parametrize("levels", [2, 5, 1500])
def test_weighted_coverage_is_the_weight_of_the_rows_covered(levels):
    # balance=True weighs rows by their predicted class: coverage under the balanced
    # distribution counts the covered rows of each weight (few distinct weights) or sums the
    # covered rows' weights (many)
    from skanchors.samplers import tabular as tab

    rng = np.random.default_rng(4)
    n = 1500
    X = pd.DataFrame(
        {"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.choice(list("uvw"), n)}
    )
    weight = rng.random(levels)[rng.integers(0, levels, n)] + 0.01
    sampler = tab.TabularSampler(bounds="all").fit(X, sample_weight=weight)
    assert (sampler._weight_levels is None) == (levels > tab._MAX_WEIGHT_LEVELS)
    inst = sampler.instance(X.iloc[[0]])
    d = inst.n_predicates
    rules = [(p,) for p in range(d)] + [(p, q) for p in range(d) for q in range(p + 1, d)]
    rules += [tuple(range(d)), ()]
    got = inst.coverage(rules)
    for rule, value in zip(rules, got):
        mask = np.ones(n, dtype=bool)
        for p in rule:
            mask &= inst.predicates[p].evaluate(X)
        assert value == pytest.approx(weight[mask].sum() / weight.sum(), rel=1e-12, abs=1e-15)
    # the unweighted share of reference rows is reported too, unchanged
    assert inst.reference_coverage(rules[0]) == inst.predicates[0].evaluate(X).mean()


def test_unweighted_pools_are_kept_once_as_32_bit_rows(data):
    # The rows a feature's value is drawn from are kept in the sampler's one flat array
    # (32-bit), not also per pool: a million reference rows held 176 MB of pools twice.
    X = data
    explainer = AnchorExplainer(PlantedModel(), random_state=0).fit(X)
    explainer.explain(X.iloc[:5])
    sampler = explainer.sampler_
    assert sampler._slots and not sampler._pools
    assert sampler._pool_rows.dtype == np.int32
    for gids, (offset, size) in sampler._slots.items():
        ok = np.logical_and.reduce([sampler._predicate_mask(g) for g in gids])
        assert sampler._pool_rows[offset : offset + size].tolist() == np.flatnonzero(ok).tolist()
        assert sampler._pool_empty(gids) == (size == 0)


def test_a_column_of_many_values_finds_codes_as_a_dict_would(monkeypatch):
    # columns of more than 4096 distinct values look them up by binary search (numbers) or in
    # a pandas Index (a million floats took 400 MB as a dict): the codes, and so the
    # anchors, must not change
    import skanchors.samplers._tabular_values as tabular

    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "x": rng.normal(size=400),
            "k": rng.integers(0, 50, 400),
            "c": rng.choice(["a", "b", "c"], 400),
        }
    )
    edge = X["x"].median()  # a quartile edge: exact anchors exist
    model = lambda Z: np.column_stack([Z["x"] <= edge, Z["x"] > edge]).astype(float)  # noqa: E731
    rows = pd.concat(
        [X.iloc[:5], pd.DataFrame({"x": [0.123456789, X["x"][3]], "k": [7, 1000], "c": ["z", "a"]})]
    )
    with_dicts = AnchorExplainer(model, random_state=0).fit(X).explain(rows)
    assert all(anchor.is_anchor for anchor in with_dicts)
    monkeypatch.setattr(tabular, "_DICT_LOOKUP_MAX", 0)
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    kinds = [type(lookup).__name__ for lookup in explainer.sampler_._lookup]
    assert kinds == ["_SortedCodes", "_SortedCodes", "Index"]
    assert explainer.explain(rows) == with_dicts
    # the binary search answers as the dict would
    lookup = tabular._value_lookup(pd.Index(np.arange(5000.0) * 0.5))
    assert isinstance(lookup, tabular._SortedCodes)
    assert [tabular._code_of(lookup, v) for v in (3, 1.5, np.float32(2.0), True, "1.5")] == [
        6,
        3,
        4,
        2,
        None,
    ]
    assert tabular._code_of(lookup, 0.25) is None and tabular._code_of(lookup, -1) is None
    big = tabular._value_lookup(pd.Index(np.arange(5000) + 2**60))  # beyond exact floats
    assert isinstance(big, pd.Index) and tabular._code_of(big, 2**60 + 7) == 7


@pytest.mark.parametrize("names", [["a", "b", "c"], [2, 0, 1], [("g", "a"), ("g", "b"), ("h", "")]])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32])
def test_a_frame_of_one_numpy_dtype_decodes_as_one_block_to_the_same_frame(names, dtype):
    # (a frame of 1,000 float columns built column by column cost most of a search's time:
    # 488 -> 272 ms a row for 200 features)
    rng = np.random.default_rng(0)
    X = pd.DataFrame((rng.normal(size=(300, 3)) * 10).astype(dtype), columns=names)
    sampler = TabularSampler().fit(X)
    inst = sampler.instance(X.iloc[[0]])
    assert inst._block_dtype == np.dtype(dtype)
    keys, _ = inst.sample((), 50, np.random.default_rng(1))
    block = inst.decode(keys)
    inst._block_dtype = None  # column by column, as frames of mixed dtypes are decoded
    pd.testing.assert_frame_equal(block, inst.decode(keys))
    assert list(block.dtypes) == [np.dtype(dtype)] * 3
