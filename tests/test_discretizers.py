"""TreeDiscretizer: bin edges where a target (the model's predictions) changes."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from tabular_planted import PlantedModel

from skanchors import (
    AnchorExplainer,
)
from skanchors.discretizers import (
    EdgesDiscretizer,
    QuantileDiscretizer,
    TreeDiscretizer,
    bin_spread,
    make_discretizer,
)
from skanchors.samplers import TabularSampler


def _uniform(n=4000, d=2, seed=0):
    return np.random.default_rng(seed).uniform(size=(n, d))


def test_a_planted_step_is_cut_where_it_is_and_nowhere_else():
    X = _uniform()
    y = np.where(X[:, 0] > 0.62, 3.0, 1.0)
    d = TreeDiscretizer().fit(X, y)
    assert d.bin_edges_[0].tolist() == [0.62]  # the shortest number between its neighbours
    assert d.bin_edges_[1].tolist() == []  # ignored by y: a single bin
    assert d.n_bins_.tolist() == [2, 1]
    assert d.bin_names(1) == ["x1 (any value)"]


def test_hours_are_cut_where_the_profile_moves_and_merged_where_it_is_flat():
    # a commute profile over the hour: flat at night, peaks at 8 h and 17 h
    rng = np.random.default_rng(0)
    hour = rng.integers(0, 24, size=6000)
    profile = np.array([10] * 6 + [100, 300, 600, 300, 150] + [200] * 5 + [350, 650, 600, 300]
                       + [150, 100, 60, 30], dtype=float)  # fmt: skip
    X = pd.DataFrame({"hour": hour, "noise": rng.uniform(size=6000)})
    d = TreeDiscretizer(max_std=10).fit(X, profile[hour])
    # every change of the profile is an edge, and there is no other
    changes = [h + 0.0 for h in range(23) if profile[h] != profile[h + 1]]
    assert d.bin_edges_[0].tolist() == changes
    assert d.bin_names("hour")[0] == "hour <= 5.0"  # the six night hours in one bin
    assert d.bin_edges_[1].size == 0
    # a wider max_std leaves in one bin what varies less: 10-15 h (150 once, 200 five times:
    # a spread of 18.6) and 22-23 h (60, 30: 15), not 21-23 h (100, 60, 30: 28.7)
    wide = TreeDiscretizer(max_std=20).fit(X, profile[hour]).bin_edges_[0].tolist()
    assert wide == [h for h in changes if h not in (10.0, 22.0)]


def test_max_std_sets_how_finely_a_slope_is_cut():
    X = _uniform(n=20000, d=1)
    y = X[:, 0]  # a slope: a bin of width w holds a spread of w / sqrt(12)
    coarse = TreeDiscretizer(max_std=0.1).fit(X, y).bin_edges_[0]
    fine = TreeDiscretizer(max_std=0.03).fit(X, y).bin_edges_[0]
    # halving until w / sqrt(12) <= max_std: widths 1/4 (0.072) and 1/16 (0.018)
    assert len(coarse) == 3 and len(fine) == 15
    np.testing.assert_allclose(coarse, [0.25, 0.5, 0.75], atol=0.02)
    np.testing.assert_allclose(fine, np.arange(1, 16) / 16, atol=0.02)
    # None: the bins of the explainer's default band, a quarter of y's spread, at 0.95
    spread = bin_spread(0.25 * y.std(), 0.95)
    assert spread == pytest.approx(0.25 * y.std() / (np.sqrt(2) * 1.959964))
    default = TreeDiscretizer().fit(X, y).bin_edges_[0].tolist()
    assert default == TreeDiscretizer(max_std=spread).fit(X, y).bin_edges_[0].tolist()
    assert len(default) == 15  # 0.026: widths 1/16 (0.018), not 1/8 (0.036)


def test_min_samples_leaf_keeps_bins_the_data_can_support():
    X = _uniform(n=5000, d=1)
    y = np.where(X[:, 0] > 0.995, 10.0, 0.0)  # a step that only 0.5 % of rows are above
    assert TreeDiscretizer(min_samples_leaf=5).fit(X, y).bin_edges_[0].tolist() == [0.995]
    edges = TreeDiscretizer(min_samples_leaf=0.02).fit(X, y).bin_edges_[0]
    bins = np.searchsorted(edges, X[:, 0], side="left")
    assert np.bincount(bins).min() >= 100  # 2 % of 5,000 rows in every bin
    assert edges.max() < 0.995


def test_max_leaf_nodes_bounds_the_number_of_edges():
    X = _uniform(n=4000, d=3)
    y = X @ np.array([1.0, 2.0, 3.0])
    d = TreeDiscretizer(max_leaf_nodes=5).fit(X, y)
    assert sum(len(e) for e in d.bin_edges_) <= 4
    assert len(d.bin_edges_[2]) >= 1  # the split that explains the most comes first


def test_classes_are_cut_until_one_holds_min_share():
    X = _uniform(n=4000, d=2)
    labels = np.where(X[:, 1] > 0.3, "yes", "no")
    flip = np.random.default_rng(1).uniform(size=4000) < 0.03  # 3 % noise
    labels[flip] = np.where(labels[flip] == "yes", "no", "yes")
    d = TreeDiscretizer().fit(X, labels)  # strings: classes
    assert d.bin_edges_[1].tolist() == [0.3] and d.bin_edges_[0].size == 0
    # integer labels are classes too; asking for purer leaves than the noise allows cuts on
    as_int = TreeDiscretizer().fit(X, (labels == "yes").astype(int))
    assert as_int.bin_edges_[1].tolist() == [0.3]
    purer = TreeDiscretizer(min_share=0.999, min_samples_leaf=20).fit(X, labels)
    assert sum(len(e) for e in purer.bin_edges_) > 1
    # clean labels read as numbers: variance, also one cut at 0.3
    clean = (X[:, 1] > 0.3).astype(int)
    assert TreeDiscretizer(target="continuous").fit(X, clean).bin_edges_[1].tolist() == [0.3]


def test_missing_values_stay_out_of_the_bins():
    X = _uniform(n=3000, d=1)
    y = np.where(X[:, 0] > 0.4, 1.0, 0.0)
    X[::10, 0] = np.nan
    d = TreeDiscretizer().fit(X, y)
    assert d.bin_edges_[0].tolist() == [0.4]
    assert np.isnan(d.transform(X)[::10, 0]).all()


def test_errors_name_what_is_wrong():
    X = _uniform(n=100, d=2)
    with pytest.raises(ValueError, match="requires y.*pass the model's predictions on X"):
        TreeDiscretizer().fit(X)
    with pytest.raises(ValueError, match=r"one value per row of X \(100\)"):
        TreeDiscretizer().fit(X, np.ones(99))
    with pytest.raises(ValueError, match="finite numbers"):
        TreeDiscretizer().fit(X, np.r_[np.nan, np.ones(99)])
    with pytest.raises(ValueError, match="target='classes' for labels"):
        TreeDiscretizer(target="continuous").fit(X, np.array(["a", "b"] * 50))
    with pytest.raises(ValueError, match="'max_std' parameter"):
        TreeDiscretizer(max_std=-1.0).fit(X, np.ones(100))
    with pytest.raises(ValueError, match="'min_samples_leaf' parameter"):
        TreeDiscretizer(min_samples_leaf=0.7).fit(X, np.ones(100))
    assert isinstance(make_discretizer("tree"), TreeDiscretizer)
    with pytest.raises(ValueError, match=r"\['quartile', 'decile', 'tree'\]"):
        make_discretizer("octile")


def test_the_sampler_passes_y_to_a_tree_and_needs_it():
    from skanchors.samplers import TabularSampler

    X = pd.DataFrame(_uniform(n=500, d=2), columns=["a", "b"])
    y = np.where(X["b"] > 0.3, 1.0, 0.0)
    sampler = TabularSampler(discretizer="tree").fit(X, y=y)
    assert [e.tolist() for e in sampler.bin_edges_] == [[], [0.3]]
    with pytest.raises(ValueError, match="requires y"):
        TabularSampler(discretizer="tree").fit(X)
    # the unsupervised discretizers ignore it
    quartiles = TabularSampler().fit(X, y=y).bin_edges_
    assert [len(e) for e in quartiles] == [3, 3]


# ------------------------------------------------- discretizers inside the explainer
def test_quantile_discretizer_is_used_for_numeric_columns(data):
    explainer = AnchorExplainer(PlantedModel()).fit(data)
    assert isinstance(explainer.sampler_.discretizer_, QuantileDiscretizer)
    assert list(explainer.sampler_.categorical_) == [False, False, True, False]


def _step_model(column, cut, strict=False):
    """Class 1 iff ``X[:, column] > cut`` (``>= cut`` with ``strict``), as probabilities."""

    def model(X):
        x = np.asarray(X, dtype=float)[:, column]
        p = (x >= cut if strict else x > cut).astype(float)
        return np.column_stack([1 - p, p])

    return model


def test_kbins_discretizer_edges_are_the_rules_edges():
    # scikit-learn's bin_edges_ hold the minimum and the maximum too: read as inner edges,
    # every rule was one bin off (it printed "a > 0.299" for samples drawn at a > 0.561)
    from sklearn.preprocessing import KBinsDiscretizer

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(size=300), "b": rng.normal(size=300)})
    kb = KBinsDiscretizer(n_bins=4, encode="ordinal", strategy="uniform")
    explainer = AnchorExplainer(
        _step_model(0, 0.5), sampler=TabularSampler(discretizer=kb, bounds="bin"), random_state=0
    )
    explainer.fit(X)
    inner = clone(kb).fit(X).bin_edges_[0][1:-1]
    np.testing.assert_array_equal(explainer.sampler_.bin_edges_[0], inner)
    anchor = explainer.explain(X.iloc[[0]])[0]  # a = 0.637: the bin above the middle edge
    assert [(p.feature, p.op, p.value) for p in anchor.predicates] == [("a", ">", inner[1])]
    assert anchor.coverage == pytest.approx(anchor.covers(X).mean())
    samples = explainer.sample(anchor, 500)
    assert (samples["a"] > inner[1]).all()
    # the default bounds="interval": the row's bin between the same edges
    interval = clone(explainer).set_params(sampler__bounds="interval")
    instance = interval.fit(X).sampler_.instance(X[:1])
    bin_ = pd.Interval(inner[1], inner[2], closed="right")
    assert ("a", "in", bin_) in [(p.feature, p.op, p.value) for p in instance.predicates]


def test_kbins_discretizer_bins_closed_on_the_left_are_moved_onto_the_data():
    # KBinsDiscretizer's bins are [e0, e1): on integers, a quantile edge of 3 puts 3 above
    # it, and the rule that says so is "k > 2.0" (the shortest number splitting the data
    # alike); an edge with no value below it splits nothing
    from sklearn.preprocessing import KBinsDiscretizer

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"k": rng.integers(0, 6, size=300).astype(float)})
    kb = KBinsDiscretizer(n_bins=4, encode="ordinal", strategy="quantile")
    assert clone(kb).fit(X).bin_edges_[0].tolist() == [0.0, 1.0, 3.0, 4.0, 5.0]
    explainer = AnchorExplainer(
        _step_model(0, 3, strict=True), sampler=TabularSampler(discretizer=kb), random_state=0
    )
    explainer.fit(X)
    assert explainer.sampler_.bin_edges_[0].tolist() == [0.0, 2.0, 3.0]
    # every reference value in the bin KBinsDiscretizer gives it
    bins = clone(kb).fit(X).transform(X)[:, 0]
    ours = np.searchsorted(explainer.sampler_.bin_edges_[0], X["k"], side="left")
    np.testing.assert_array_equal(ours, bins)
    row = X.index[X["k"] == 3][0]
    anchor = explainer.explain(X.loc[[row]])[0]
    assert [str(p) for p in anchor.predicates] == ["2.0 < k <= 3.0"]
    assert anchor.precision == 1.0 and anchor.coverage == pytest.approx(anchor.covers(X).mean())
    anchor = explainer.set_params(sampler__bounds="bin").fit(X).explain(X.loc[[row]])[0]
    assert [str(p) for p in anchor.predicates] == ["k > 2.0"]


def test_a_discretizer_whose_bins_do_not_match_its_edges_is_refused():
    from sklearn.preprocessing import KBinsDiscretizer

    X = pd.DataFrame({"a": np.linspace(0, 1, 50)})
    with pytest.raises(ValueError, match=r"one bin index per numeric feature.*encode='ordinal'"):
        AnchorExplainer(
            _step_model(0, 0.5), sampler=TabularSampler(discretizer=KBinsDiscretizer(n_bins=3))
        ).fit(X)

    class Reversed(KBinsDiscretizer):  # bins counted from the top: not its edges' bins
        def transform(self, X):
            return self.n_bins_ - 1 - super().transform(X)

    with pytest.raises(ValueError, match=r"does not bin feature 'a' at its bin_edges_"):
        AnchorExplainer(
            _step_model(0, 0.5),
            sampler=TabularSampler(discretizer=Reversed(n_bins=3, encode="ordinal")),
        ).fit(X)

    class NoEdges:
        def fit(self, X, y=None):
            return self

        def transform(self, X):
            return np.zeros(np.shape(X))

        def get_params(self, deep=True):
            return {}

    with pytest.raises(ValueError, match="NoEdges must have bin_edges_ after fit"):
        AnchorExplainer(_step_model(0, 0.5), sampler=TabularSampler(discretizer=NoEdges())).fit(X)


def test_quantile_edges_are_short_numbers_that_split_the_data_as_the_percentiles():
    from skanchors.discretizers import _shortest_between

    X = np.random.default_rng(0).normal(size=(500, 3)) * [1, 1e-3, 1e4] + [0, 0, 1e6]
    disc = QuantileDiscretizer(percentiles=range(10, 100, 10)).fit(X)
    for j, edges in enumerate(disc.bin_edges_):
        exact = np.percentile(X[:, j], range(10, 100, 10))
        assert not np.array_equal(edges, exact)
        for edge, q in zip(edges, exact):
            assert ((X[:, j] <= edge) == (X[:, j] <= q)).all()
    one = np.random.default_rng(0).normal(size=(500, 1))  # the docstring's example
    assert QuantileDiscretizer().fit(one).bin_edges_[0].tolist() == [-0.704, -0.05, 0.69]
    # golden values: the fewest digits in [lo, hi)
    assert _shortest_between(1234.0, 2000.0) == 1300.0
    assert _shortest_between(-5.0, 3.0) == 0.0 and str(_shortest_between(-0.5, 0.5)) == "0.0"
    assert _shortest_between(0.5361, 0.5372) == 0.537
    assert _shortest_between(25.0, 26.0) == 25.0
    assert _shortest_between(-0.3, -0.2) == -0.3
    assert _shortest_between(0.1, np.nextafter(0.1, 1)) == 0.1
    rng = np.random.default_rng(1)
    lows = rng.normal(size=300) * 10.0 ** rng.integers(-5, 9, 300)
    for lo, gap in zip(lows, rng.uniform(size=300)):
        hi = lo + gap * 10.0 ** rng.integers(-8, 3)
        if lo < hi:
            assert lo <= _shortest_between(lo, hi) < hi
    # integers stay integers; an edge on the largest value stays there
    ints = np.arange(100.0).reshape(-1, 1)
    assert QuantileDiscretizer().fit(ints).bin_edges_[0].tolist() == [24.0, 49.0, 74.0]
    binary = np.array([[0.0], [1.0], [1.0], [1.0]])
    assert QuantileDiscretizer().fit(binary).bin_edges_[0].tolist() == [0.0, 1.0]
    # ... unless every edge is there: a flag that is 1 on 80 % of the rows (every quartile is
    # 1) sat in one bin, x <= 1, and never appeared in a rule; 0 at 80 % always split
    flags = np.repeat([[0.0, 1.0, 0.0], [1.0, 0.0, 2.0], [1.0, 0.0, 3.0]], [20, 40, 40], axis=0)
    edges = QuantileDiscretizer().fit(flags).bin_edges_
    assert [e.tolist() for e in edges] == [[0.0], [0.0], [2.0, 3.0]]  # (3 still splits at 2)
    bins = QuantileDiscretizer().fit_transform(flags)
    assert np.bincount(bins[:, 0].astype(int)).tolist() == [20, 80]


def test_discretizer_arguments_are_checked():
    X = pd.DataFrame({"age": [5.0, 20.0, 40.0, 70.0], "fare": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(ValueError, match=r"percentages.*pass \(25.0, 50.0, 75.0\) instead"):
        QuantileDiscretizer(percentiles=(0.25, 0.5, 0.75)).fit(X)
    # pandas.cut's outer bins
    disc = EdgesDiscretizer(edges={"age": [-np.inf, 18, 65, np.inf]}).fit(X)
    assert disc.bin_edges_[0].tolist() == [18.0, 65.0]
    assert disc.bin_names("age") == ["age <= 18.0", "18.0 < age <= 65.0", "age > 65.0"]
    for bad in (7, -1, 1.5):
        with pytest.raises(KeyError, match=r"an index in \[0, 2\)"):
            disc.bin_names(bad)
    assert disc.bin_names(1)[0] == "fare <= 1.0"  # quartile 1.75, moved onto the data
    assert list(disc.get_feature_names_out(["age", "fare"])) == ["age", "fare"]
    with pytest.raises(ValueError, match="not equal to the fitted feature_names_in_"):
        disc.get_feature_names_out(["fare", "age"])
