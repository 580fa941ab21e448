"""Regression anchors: the prediction is held within a tolerance band."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from skanchors import AnchorExplainer, NoAnchorWarning


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
    explainer = AnchorExplainer(model, tolerance=1.0, tolerance_unit="absolute", random_state=0)
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
    assert 0.0 <= explainer.set_params(score_rows=5).score(X[:100]) <= 1.0


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
    explainer = AnchorExplainer(model, perturbation="reference", random_state=0).fit(X)
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
    params = dict(random_state=0, score_rows=10, beam_size=1)
    search = GridSearchCV(AnchorExplainer(model, **params), grid, cv=2).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert search.best_params_ == {"tolerance": 0.25} and scores[1] == 0 < scores[0]
    wide = search.best_estimator_.set_params(tolerance=5.0).fit(X)
    assert wide.explain(X.iloc[[0]])[0].predicates == ()
    # against each setting's own band, the empty rule would have won
    own = GridSearchCV(AnchorExplainer(model, score_tolerance=None, **params), grid, cv=2)
    assert own.fit(X).best_params_ == {"tolerance": 5.0}
