"""A model refitted in place after the explainer's fit is noticed and read again.

The explainers wrap the model at ``fit`` (compiled trees, boosting's prior, a Pipeline's
encoder tables, the classes, the rows hashed by the trees' split thresholds, cached
predictions and searches). ``rf.fit(X, other_y)`` on the same object used to leave all of that
in place: ``explain`` and ``perturbation_precision`` went on answering for the old trees.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skanchors import AnchorExplainer, LimeExplainer
from skanchors._refit import fitted_state
from skanchors.aggregation import GlobalAnchorAggregator, WordFilter
from skanchors.models import ProbabilityModel, RegressionModel
from skanchors.samplers import TabularSampler

pytestmark = pytest.mark.filterwarnings("ignore:Row .*no rule reached")

RNG = np.random.default_rng(0)
X = pd.DataFrame(RNG.normal(size=(400, 3)), columns=["x0", "x1", "x2"])
X["c"] = RNG.choice(["a", "b", "c"], size=len(X))
Y_OLD = (X["x0"] > 0).astype(int).to_numpy()  # the model first decides by x0 ...
Y_NEW = (X["x1"] > 0).astype(int).to_numpy()  # ... and, refitted, by x1
NUMERIC = ["x0", "x1", "x2"]
# rows far from both boundaries: each model has a clear anchor for them
ROWS = X[(X["x0"].abs() > 0.8) & (X["x1"].abs() > 0.8)].iloc[:4]


def _forest():
    return RandomForestClassifier(n_estimators=20, random_state=0)


MODELS = {
    "forest": lambda: make_pipeline(_numeric(), _forest()),
    "boosting": lambda: make_pipeline(
        _numeric(), GradientBoostingClassifier(n_estimators=20, random_state=0)
    ),
    "hist boosting": lambda: HistGradientBoostingClassifier(
        max_iter=20, categorical_features=["c"], random_state=0
    ),
    # a ColumnTransformer computed from tables learned at fit (skanchors._speed.columnwise)
    "pipeline": lambda: make_pipeline(
        ColumnTransformer(
            [("num", StandardScaler(), NUMERIC), ("cat", OneHotEncoder(), ["c"])],
            sparse_threshold=0,
        ),
        _forest(),
    ),
}


def _numeric():
    return ColumnTransformer([("num", "passthrough", NUMERIC)])


def _bare_forest_data():
    return X[NUMERIC].to_numpy()


def _rules(anchors):
    return [([str(p) for p in a.predicates], a.precision, a.coverage) for a in anchors]


@pytest.mark.parametrize("kind", list(MODELS))
def test_explain_reads_a_model_refitted_in_place(kind):
    model = MODELS[kind]().fit(X, Y_OLD)
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    before = explainer.explain(ROWS)  # compiles, caches predictions and searches
    assert all(a.is_anchor and any(p.feature == "x0" for p in a.predicates) for a in before)
    model.fit(X, Y_NEW)  # the same object, as many trees
    assert explainer.model_.refitted()
    after = explainer.explain(ROWS)
    fresh = AnchorExplainer(model, random_state=0).fit(X)
    assert _rules(after) == _rules(fresh.explain(ROWS))
    assert all(a.is_anchor and any(p.feature == "x1" for p in a.predicates) for a in after)
    assert not explainer.model_.refitted()
    # perturbation_precision asks the refitted model: the new anchors hold, the old ones not
    for anchor in after[:2]:
        got = explainer.perturbation_precision(anchor, 500, random_state=1)
        assert got == fresh.perturbation_precision(anchor, 500, random_state=1)
        assert got >= 0.9
    model.fit(X, Y_OLD)
    old = before[0]
    assert explainer.perturbation_precision(old, 500, random_state=1) >= 0.9
    model.fit(X, Y_NEW)
    assert explainer.perturbation_precision(old, 500, random_state=1) < 0.8


def test_lime_reads_a_model_refitted_in_place():
    model = MODELS["forest"]().fit(X, Y_OLD)
    lime = LimeExplainer(model, n_features=2, random_state=0).fit(X)
    assert lime.explain(ROWS[:1])[0].as_list()[0][0].startswith("x0")
    model.fit(X, Y_NEW)
    got = lime.explain(ROWS[:2])
    fresh = LimeExplainer(model, n_features=2, random_state=0).fit(X).explain(ROWS[:2])
    assert [e.as_list() for e in got] == [e.as_list() for e in fresh]
    assert got[0].as_list()[0][0].startswith("x1")


def test_a_warm_start_that_adds_trees_to_the_same_list_is_seen():
    forest = RandomForestClassifier(n_estimators=10, warm_start=True, random_state=0)
    forest.fit(_bare_forest_data(), Y_OLD)
    wrapper = ProbabilityModel(forest)
    trees = forest.estimators_
    forest.set_params(n_estimators=20).fit(_bare_forest_data(), Y_NEW)
    assert forest.estimators_ is trees  # appended in place
    assert "estimators_" in wrapper.refitted()


def test_the_fingerprint_sees_refits_not_predictions():
    data = _bare_forest_data()
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(data, Y_OLD)
    wrapper = ProbabilityModel(forest)
    wrapper.predict_proba(data[:50])
    forest.predict_proba(data[:50])
    assert wrapper.refitted() == []
    # a refit that grows the same trees still makes new objects: read again (harmless)
    forest.fit(data, Y_OLD)
    assert "estimators_" in wrapper.refitted()
    # an update in place of a small fitted array
    sgd = SGDClassifier(loss="log_loss", random_state=0).fit(data, Y_OLD)
    wrapper = ProbabilityModel(sgd)
    sgd.partial_fit(data, Y_NEW)
    assert "coef_" in wrapper.refitted()
    # nested: a Pipeline's step refitted alone
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(data, Y_OLD)
    wrapper = ProbabilityModel(pipe)
    pipe[-1].fit(pipe[0].transform(data), Y_NEW)
    assert any(name.startswith("steps[1].") for name in wrapper.refitted())
    # a bound method reads its estimator; a plain function cannot be read
    assert ProbabilityModel(pipe.predict_proba).refitted() == []
    assert fitted_state(lambda Z: np.ones((len(Z), 2)) / 2) is None
    # a pickled explainer keeps the identities it compares
    explainer = AnchorExplainer(pipe, random_state=0).fit(data)
    assert pickle.loads(pickle.dumps(explainer)).model_.refitted() == []


def test_what_fit_computed_from_the_old_predictions_asks_for_fit_again():
    model = MODELS["forest"]().fit(X, Y_OLD)
    balanced = AnchorExplainer(model, balance=True, random_state=0).fit(X)
    model.fit(X, Y_NEW)
    with pytest.raises(ValueError, match=r"refitted after AnchorExplainer.fit .*balance.*fit\(X\)"):
        balanced.explain(ROWS[:1])
    target = X["x0"].to_numpy() * 3 + X["x1"].to_numpy()
    forest = make_pipeline(_numeric(), RandomForestRegressor(n_estimators=10, random_state=0))
    forest.fit(X, target)
    std = AnchorExplainer(forest, random_state=0).fit(X)
    absolute = AnchorExplainer(
        forest,
        tolerance=0.5,
        tolerance_unit="absolute",
        sampler=TabularSampler(discretizer="quartile"),
        random_state=0,
    ).fit(X)
    # a regressor's default bins are cut where its predictions change
    tree_bins = AnchorExplainer(forest, tolerance=0.5, tolerance_unit="absolute").fit(X)
    forest.fit(X, X["x1"].to_numpy() * 3)
    assert isinstance(std.model_, RegressionModel) and std.model_.refitted()
    with pytest.raises(ValueError, match="standard deviations"):
        std.explain(ROWS[:1])
    with pytest.raises(ValueError, match="bins were cut where the old model's predictions"):
        tree_bins.explain(ROWS[:1])
    fresh = AnchorExplainer(
        forest,
        tolerance=0.5,
        tolerance_unit="absolute",
        sampler=TabularSampler(discretizer="quartile"),
        random_state=0,
    )
    assert _rules(absolute.explain(ROWS[:2])) == _rules(fresh.fit(X).explain(ROWS[:2]))
    # refitted on other columns
    bare = _forest().fit(_bare_forest_data(), Y_OLD)
    explainer = AnchorExplainer(bare, random_state=0).fit(_bare_forest_data())
    bare.fit(_bare_forest_data()[:, :2], Y_NEW)
    with pytest.raises(ValueError, match="other columns"):
        explainer.explain(_bare_forest_data()[:1])


def test_aggregators_refuse_to_add_a_refitted_model_s_counts():
    docs = [f"good {w} day" for w in "abcdefgh"] + [f"bad {w} day" for w in "abcdefgh"]
    labels = [1] * 8 + [0] * 8
    model = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(docs, labels)
    agg = GlobalAnchorAggregator(model, k=2, vocabulary=WordFilter(min_count=1), random_state=0)
    agg.fit(docs)
    agg.score(docs)
    model.fit(docs, labels[::-1])
    with pytest.raises(ValueError, match="refitted .* Call fit"):
        agg.partial_fit(docs)
    with pytest.raises(ValueError, match="score"):
        agg.score(docs)
    agg.fit(docs)  # from scratch: the refitted model's words
    assert agg.top_terms_[1][0][0] == "bad"


def test_a_model_given_in_a_wrapper_built_before_the_refit_is_refused():
    forest = _forest().fit(_bare_forest_data(), Y_OLD)
    wrapped = ProbabilityModel(forest)
    explainer = AnchorExplainer(wrapped, random_state=0).fit(_bare_forest_data())
    lime = LimeExplainer(wrapped, random_state=0).fit(_bare_forest_data())
    forest.fit(_bare_forest_data(), Y_NEW)
    for refitted in (explainer, lime):
        for _ in range(2):  # (and stays refused: nothing was half read)
            with pytest.raises(ValueError, match="wrap it again"):
                refitted.explain(_bare_forest_data()[:1])
