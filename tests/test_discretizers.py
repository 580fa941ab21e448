"""TreeDiscretizer: bin edges where a target (the model's predictions) changes."""

import numpy as np
import pandas as pd
import pytest

from skanchors.discretizers import TreeDiscretizer, bin_spread, make_discretizer


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
