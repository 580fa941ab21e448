"""Regression anchors: the prediction is held within a tolerance band."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.tree import DecisionTreeRegressor

from skanchors import AnchorExplainer, NoAnchorWarning, anchor_scorer
from skanchors.datasets import make_bike_sharing
from skanchors.discretizers import QuantileDiscretizer, TreeDiscretizer
from skanchors.samplers import TabularSampler


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(size=(2000, 4)), columns=["a", "b", "c", "d"])
    y = np.where(X["b"] > 0.5, 10.0, 0.0) + 2.0 * (X["b"] > 0.75)
    return X, DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)


def test_regressor_depending_on_one_feature(data):
    X, model = data
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    assert explainer.tolerance_ == pytest.approx(0.25 * np.std(model.predict(X)))
    assert not hasattr(explainer, "classes_")
    anchors = explainer.explain(X.iloc[:6])
    predicted = model.predict(X)
    for i, anchor in enumerate(anchors):
        assert anchor.is_anchor
        assert anchor.features == ["b"]  # the only feature the model uses
        assert anchor.prediction == pytest.approx(predicted[i])
        mask = anchor.covers(X)
        within = np.abs(predicted[mask] - anchor.prediction) <= explainer.tolerance_
        assert within.mean() >= 0.95
        assert "+-" in str(anchor)
        # check() counts a prediction within the band as agreeing
        assert anchor.check(X, predicted) == (within.mean(), mask.mean(), mask.sum())
        assert anchor.check(X, predicted + 10 * explainer.tolerance_).precision == 0.0


def test_perturbation_precision_counts_predictions_within_the_band(data):
    X, model = data
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    anchor = explainer.explain(X.iloc[[0]])[0]
    Z = explainer.sample(anchor, 1000, random_state=1)
    assert anchor.covers(Z).all()
    within = np.abs(model.predict(Z) - anchor.prediction) <= explainer.tolerance_
    assert explainer.perturbation_precision(anchor, 1000, random_state=1) == within.mean()
    assert within.mean() == 1.0  # the rule bounds b, the only feature the model reads


def test_perturbation_precision_reads_the_anchors_own_band():
    # it read the explainer's current tolerance_: refitted with another tolerance, the same
    # anchor was checked against the wrong band (0.70 -> 0.26)
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(size=(1000, 3)), columns=["a", "b", "c"])
    model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, 10 * X.a + X.b)
    # (quartile bins, which the tree's steps cross: an anchor that does not always hold)
    explainer = AnchorExplainer(
        model,
        sampler=TabularSampler(discretizer="quartile"),
        tolerance=1.0,
        tolerance_unit="absolute",
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchor = explainer.fit(X).explain(X.iloc[[0]])[0]
    before = explainer.perturbation_precision(anchor, 2000, random_state=1)
    Z = explainer.sample(anchor, 2000, random_state=1)
    assert before == np.mean(np.abs(model.predict(Z) - anchor.prediction) <= 1.0) < 1
    explainer.set_params(tolerance=0.05).fit(X)
    assert explainer.perturbation_precision(anchor, 2000, random_state=1) == before


def test_a_value_prints_with_the_digits_its_band_needs():
    # 1e7 + 50.37 +- 6.93 printed as "10000100 +- 6.9305": a band without the prediction
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(500, 2))

    def model(Z):
        return 1e7 + 100 * np.floor(np.asarray(Z)[:, 0] * 4) / 4 + 0.37

    explainer = AnchorExplainer(model, mode="regression", random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(X[:3])
    for anchor in anchors:
        printed = str(anchor).split("PREDICT ")[1].split(" +- ")[0]
        assert abs(float(printed) - anchor.prediction) < anchor.tolerance / 10
    assert len({str(a).split(" WITH")[0].split("PREDICT ")[1] for a in anchors}) == 3
    assert "PREDICT 10000050.37 +- 6.9305" in str(anchors[0])
    # up to float64's 17 digits (15 printed 1000000000000003.8 +- 0.5 as 1e+15)
    far = dataclasses.replace(anchors[0], prediction=1000000000000003.8, tolerance=0.5)
    assert "PREDICT 1000000000000003.8 +- 0.5" in str(far)


def test_tolerance_changes_the_band(data):
    X, model = data
    row = X.iloc[[0]]
    wide = AnchorExplainer(model, tolerance=20, tolerance_unit="absolute", random_state=0)
    narrow = AnchorExplainer(model, tolerance=0.5, tolerance_unit="absolute", random_state=0)
    wide_anchor = wide.fit(X).explain(row)[0]
    assert wide.tolerance_ == 20
    assert wide_anchor.predicates == ()  # every prediction is within 20 of every other
    narrow_anchor = narrow.fit(X).explain(row)[0]
    assert len(narrow_anchor) >= 1


def test_callable_regressor_and_chosen_value():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(1000, 3))

    def f(X):
        return 4.0 * (np.asarray(X)[:, 2] > 0.5)

    explainer = AnchorExplainer(
        f, mode="regression", tolerance=1.0, tolerance_unit="absolute", random_state=0
    )
    anchor = explainer.fit(X).explain(np.array([[0.1, 0.1, 0.9]]))[0]
    assert anchor.features == ["x2"] and anchor.prediction == 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        other = explainer.explain(np.array([[0.1, 0.1, 0.9]]), y=[2.0])[0]
    assert not other.is_anchor  # nothing keeps f within 1 of 2.0
    assert 0.0 <= anchor_scorer(rows=5)(explainer, X[:100]) <= 1.0


def test_regression_errors(data):
    X, model = data
    with pytest.raises(ValueError, match="balance"):
        AnchorExplainer(model, balance=True).fit(X)
    with pytest.raises(ValueError, match="Regressor has neither. For a regressor use mode="):
        AnchorExplainer(model, mode="classification").fit(X)
    with pytest.raises(ValueError, match="tolerance_unit='absolute'"):
        AnchorExplainer(lambda X: np.ones(len(X)), mode="regression").fit(X)
    from sklearn.dummy import DummyRegressor  # a mean: its std is rounding noise, not 0

    dummy = DummyRegressor().fit(X, np.random.default_rng(0).uniform(size=len(X)))
    with pytest.raises(ValueError, match="tolerance_unit='absolute'"):
        AnchorExplainer(dummy).fit(X)
    with pytest.raises(ValueError, match="one number per input"):
        AnchorExplainer(
            lambda X: np.ones((len(X), 2)), mode="regression", tolerance_unit="absolute"
        ).fit(X).explain(X.iloc[[0]])
    with pytest.raises(ValueError, match="'tolerance' parameter"):
        AnchorExplainer(model, tolerance=0).fit(X)
    # a regressor's bound predict reads as a classifier by default; a classifier read as a
    # regressor gives strings: both used to fail without saying which mode to use
    with pytest.raises(ValueError, match="pass mode='regression'"):
        AnchorExplainer(model.predict).fit(X).explain(X.iloc[[0]])
    labels = DecisionTreeRegressor().fit(X, np.arange(len(X)))  # any fitted model
    labels.predict = lambda Z: np.where(np.asarray(Z)[:, 0] > 0.5, "yes", "no")
    with pytest.raises(ValueError, match="must return numbers.*mode='classification'"):
        AnchorExplainer(labels, mode="regression", tolerance_unit="absolute").fit(X)
    with pytest.raises(ValueError, match="y must hold numbers"):
        AnchorExplainer(model).fit(X).explain(X.iloc[[0]], y=["abc"])
    for bad in (np.nan, np.inf):  # "PREDICT NaN +- 10.1" came back, with a warning only
        with pytest.raises(ValueError, match="y must hold finite regression targets"):
            AnchorExplainer(model).fit(X).explain(X.iloc[[0, 1]], y=[1.0, bad])


def test_verbose_prints_the_value_and_its_band(data, capsys):
    X, model = data
    explainer = AnchorExplainer(model, verbose=1, random_state=0).fit(X)
    anchor = explainer.explain(X.iloc[[0]])[0]
    printed = capsys.readouterr().out
    assert f"PREDICT {anchor.prediction:.4g}" in str(anchor) and str(anchor) in printed
    assert "+-" in printed


def test_reference_perturbation_holds_the_band_on_real_rows(data):
    X, model = data
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(perturbation="reference"), random_state=0
    ).fit(X)
    anchors = explainer.explain(X.iloc[:6])
    predicted = model.predict(X)
    for anchor in anchors:
        assert anchor.is_anchor and anchor.features == ["b"]
        mask = anchor.covers(X)
        within = np.abs(predicted[mask] - anchor.prediction) <= explainer.tolerance_
        # The samples are reference rows the rule covers, each counted once.
        assert anchor.precision >= 0.95 and anchor.n_samples <= mask.sum()
        assert within.mean() >= 0.95


def test_grid_search_over_tolerance_does_not_pick_the_widest_band(data):
    from sklearn.model_selection import GridSearchCV

    X, model = data
    X = X.iloc[:600]
    grid = {"tolerance": [0.25, 5.0]}  # 5 standard deviations: the empty rule holds
    params = dict(random_state=0, beam_size=1)
    scoring = anchor_scorer(rows=10)
    search = GridSearchCV(AnchorExplainer(model, **params), grid, cv=2, scoring=scoring).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert search.best_params_ == {"tolerance": 0.25} and scores[1] == 0 < scores[0]
    wide = search.best_estimator_.set_params(tolerance=5.0).fit(X)
    assert wide.explain(X.iloc[[0]])[0].predicates == ()
    # against each setting's own band, the empty rule would have won
    own_band = anchor_scorer(rows=10, tolerance=None)
    own = GridSearchCV(AnchorExplainer(model, **params), grid, cv=2, scoring=own_band)
    assert own.fit(X).best_params_ == {"tolerance": 5.0}


@pytest.fixture(scope="module")
def bikes():
    X, y = make_bike_sharing(8000, random_state=0, return_X_y=True)
    model = HistGradientBoostingRegressor(random_state=0).fit(X.iloc[:6000], y.iloc[:6000])
    return model, X.iloc[:6000], X.iloc[6000:]


def _heldout(anchors, model, X_test):
    """Valid anchors' pooled held-out precision: of the other test rows each covers, the
    share predicted within its band."""
    predicted = model.predict(X_test)
    within = covered = 0
    for i, anchor in enumerate(anchors):
        if anchor.is_anchor:
            mask = anchor.covers(X_test)
            mask[i] = False
            covered += mask.sum()
            within += np.sum(np.abs(predicted[mask] - anchor.prediction) <= anchor.tolerance)
    return within / covered, covered


def test_most_bike_sharing_rows_get_an_anchor_that_holds_on_held_out_rows(bikes):
    # Issue 44: quartile bins (the old default) gave 1 of these 20 rows an anchor, the hour's
    # four bins being far too coarse for the feature the prediction moves with (18 now).
    model, X_train, X_test = bikes
    rows = X_test.iloc[:20]
    explainer = AnchorExplainer(model, random_state=0).fit(X_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(rows)
        old = AnchorExplainer(
            model, sampler=TabularSampler(discretizer="quartile"), random_state=0
        ).fit(X_train)
        old_anchors = old.explain(rows)
    valid = [a for a in anchors if a.is_anchor]
    assert len(valid) >= 15 and sum(a.is_anchor for a in old_anchors) <= 3
    precision, covered = _heldout(anchors, model, X_test)  # 0.991 on 1,944 rows
    assert precision >= 0.9 and covered >= 500
    # and on fresh draws of the distribution searched (the guarantee's threshold - 0.025)
    fresh = [explainer.perturbation_precision(a, 2000, random_state=1) for a in valid]
    assert sum(f < explainer.threshold - 0.025 for f in fresh) <= 1
    # the hour is cut where the prediction moves: each commute-peak hour a bin of its own
    hour = list(explainer.sampler_.feature_names_in_).index("hour")
    edges = explainer.sampler_.bin_edges_[hour].tolist()
    assert {7.0, 8.0, 16.0, 17.0, 18.0} <= set(edges)


def test_a_regressor_is_binned_where_its_prediction_moves(data):
    # the model steps at b = 0.5 and 0.75 and ignores a, c and d
    X, model = data
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    discretizer = explainer.sampler_.discretizer_
    assert isinstance(discretizer, TreeDiscretizer)
    # bins resolve the band: two predictions of a bin (the row's and a perturbation's) are
    # within tolerance_ of each other with probability threshold, were they normal
    spread = explainer.tolerance_ / (np.sqrt(2) * norm.ppf(0.975))
    assert discretizer.max_std == pytest.approx(spread)
    thresholds = model.tree_.threshold[model.tree_.feature == 1]
    assert [e.size for e in explainer.sampler_.bin_edges_] == [0, len(thresholds), 0, 0]
    # (edges moved to short numbers that split the reference rows as the model's thresholds)
    ours = np.searchsorted(explainer.sampler_.bin_edges_[1], X["b"], side="left")
    np.testing.assert_array_equal(ours, np.searchsorted(np.sort(thresholds), X["b"], side="left"))
    anchor = explainer.explain(X.iloc[[0]])[0]
    assert anchor.features == ["b"] and anchor.precision == 1.0
    # the bin is the model's step: every reference row it covers is predicted alike
    mask = anchor.covers(X)
    assert np.ptp(model.predict(X[mask])) == 0.0
    # tolerance and threshold set how finely: a band too narrow for the steps cuts nothing more
    # (the model is flat between them), a wide one merges the two steps at 0.5 and 0.75
    wide = AnchorExplainer(model, tolerance=3.0, random_state=0).fit(X)
    assert wide.sampler_.bin_edges_[1].size < explainer.sampler_.bin_edges_[1].size
    strict = AnchorExplainer(model, threshold=0.999, tolerance=3.0, random_state=0).fit(X)
    assert strict.sampler_.discretizer_.max_std < wide.sampler_.discretizer_.max_std


def test_discretizer_settings_for_regression_and_classification(data):
    X, model = data
    # quartiles on request, as before
    old = AnchorExplainer(
        model, sampler=TabularSampler(discretizer="quartile"), random_state=0
    ).fit(X)
    assert isinstance(old.sampler_.discretizer_, QuantileDiscretizer)
    assert [e.size for e in old.sampler_.bin_edges_] == [3, 3, 3, 3]
    # a TreeDiscretizer of one's own is fitted on the model's predictions, with its settings
    mine = AnchorExplainer(
        model, sampler=TabularSampler(discretizer=TreeDiscretizer(max_std=100.0))
    ).fit(X)
    assert mine.sampler_.discretizer_.max_std == 100.0
    assert [e.size for e in mine.sampler_.bin_edges_] == [0, 0, 0, 0]  # all within 100
    # so is a TreeDiscretizer with its defaults (its own default spread: std / 8) ...
    sampler = TabularSampler(discretizer=TreeDiscretizer())
    custom = AnchorExplainer(model, sampler=sampler, random_state=0).fit(X)
    assert custom.sampler_.bin_edges_[1].size == 2
    # ... while the sampler's "tree", named, is cut for the explainer's band, as by default
    named = AnchorExplainer(model, sampler=TabularSampler(discretizer="tree"), random_state=0)
    default = AnchorExplainer(model, random_state=0).fit(X)
    assert [e.tolist() for e in named.fit(X).sampler_.bin_edges_] == [
        e.tolist() for e in default.sampler_.bin_edges_
    ]
    assert named.sampler_.discretizer_.max_std == default.sampler_.discretizer_.max_std
    # a classifier keeps quartile bins by default; "tree" cuts where its class changes
    labels = (X["c"] > 0.62).astype(int)
    classifier = HistGradientBoostingClassifier(random_state=0).fit(X, labels)
    auto = AnchorExplainer(classifier, random_state=0).fit(X)
    assert isinstance(auto.sampler_.discretizer_, QuantileDiscretizer)
    tree = AnchorExplainer(
        classifier, sampler=TabularSampler(discretizer="tree"), random_state=0
    ).fit(X)
    assert tree.sampler_.discretizer_.target == "classes"
    assert tree.sampler_.discretizer_.min_share == tree.threshold
    assert tree.sampler_.bin_edges_[2].tolist() == [0.62]
    anchor = tree.explain(X.iloc[[int(np.argmax(X["c"] > 0.62))]])[0]
    assert [str(p) for p in anchor.predicates] == ["c > 0.62"]
    assert anchor.coverage == pytest.approx(np.mean(X["c"] > 0.62))
    with pytest.raises(ValueError, match="'discretizer' parameter"):
        AnchorExplainer(model, sampler=TabularSampler(discretizer="octile")).fit(X)


def test_a_text_regressor_keeps_its_sampler():
    # "auto" bins tables only: documents have no numeric features to cut
    documents = ["good movie", "bad movie", "good plot", "bad plot", "fine film"] * 4

    def stars(texts):
        return np.array([4.0 * ("good" in t) + 1.0 for t in texts])

    explainer = AnchorExplainer(stars, mode="regression", random_state=0).fit(documents)
    anchor = explainer.explain(["a good movie"])[0]
    assert anchor.words == ["good"] and anchor.prediction == 5.0
