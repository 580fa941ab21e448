"""Rows hashed by a tree model's splits: rows it cannot tell apart are predicted once."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skanchors import (
    AnchorExplainer,
)
from skanchors.samplers import TabularSampler


def test_split_codes_compare_as_the_trees_do():
    from skanchors.samplers._tree_splits import split_codes as _split_codes

    codes = _split_codes(np.array([1.0, 1.5, 2.0, 3.0, 3.5, np.nan]), np.array([1.5, 3.0]))
    assert codes.tolist() == [0, 0, 1, 1, 2, 3]
    # scikit-learn's trees compare float32(x) <= t: float32(0.1) is above the float64 0.1
    assert _split_codes(np.array([0.1]), np.array([0.1])).tolist() == [1]
    # histogram boosting compares the float64 value itself
    assert _split_codes(np.array([0.1]), np.array([0.1]), np.float64).tolist() == [0]
    assert _split_codes(np.array(["a", "b"], dtype=object), np.array([0.5])) is None


@pytest.mark.parametrize("kind", ["gb", "rf", "gb-regressor", "hgb"])
def test_rows_a_tree_model_cannot_tell_apart_are_predicted_once(kind):
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(800, 4)).round(3), columns=["a", "b", "c", "d"])
    X["k"] = rng.integers(0, 3, 800)
    y = ((X["a"] > 0) & (X["k"] != 1)).astype(int)
    model = {
        "gb": GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0),
        "rf": RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0),
        "gb-regressor": GradientBoostingRegressor(n_estimators=20, max_depth=2, random_state=0),
        "hgb": HistGradientBoostingClassifier(max_iter=20, max_depth=2, random_state=0),
    }[kind].fit(X, y)
    method = model.predict if kind == "gb-regressor" else model.predict_proba
    params = dict(random_state=0, sampler=TabularSampler(categorical_features=["k"]))
    if kind == "gb-regressor":
        params["mode"] = "regression"
    split = AnchorExplainer(model, **params).fit(X)
    plain = AnchorExplainer(lambda Z: method(Z), **params).fit(X)
    assert split.sampler_._hash_codes is not None and plain.sampler_._hash_codes is None
    rows = X.iloc[:8]
    ours, theirs = split.explain(rows), plain.explain(rows)
    for a, b in zip(ours, theirs):  # the same search: only fewer rows predicted
        assert (a.predicates, a.precision, a.coverage, a.n_samples) == (
            b.predicates, b.precision, b.coverage, b.n_samples
        )  # fmt: skip
    assert sum(a.n_rows_predicted for a in ours) < sum(b.n_rows_predicted for b in theirs)
    # rows with one hash are one input to the model
    instance = split.sampler_.instance(rows.iloc[[0]])
    keys, _ = instance.sample((), 3000, np.random.default_rng(1))
    hashes = instance.hash_rows(keys)
    predicted = method(instance.decode(keys))
    for h in np.unique(hashes):
        same = predicted[hashes == h]
        assert (same == same[0]).all()
    assert len(np.unique(hashes)) < len(np.unique(keys, axis=0))
    # a value the reference data lacks is hashed by its interval too (0.0001 away from a
    # 3-decimal value: the same interval between the model's thresholds)
    unseen = split.sampler_.instance(rows.iloc[[0]].assign(a=rows["a"].iloc[0] + 1e-4))
    assert unseen._own_values and unseen.x_codes[0] != instance.x_codes[0]
    assert unseen.hash_rows(unseen.x_codes[None, :]) == instance.hash_rows(
        instance.x_codes[None, :]
    )


def test_only_a_tree_model_reading_the_sampler_s_columns_is_hashed_by_splits():
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = (X["a"] > 0).astype(int)
    for model in (
        LogisticRegression().fit(X, y),
        make_pipeline(StandardScaler(), GradientBoostingClassifier(n_estimators=5)).fit(X, y),
    ):
        explainer = AnchorExplainer(model, random_state=0).fit(X[["a", "b", "c"]])
        assert explainer.sampler_._hash_codes is None
    # a forest of the same columns in another order: refused at fit (its predictions would
    # fail at explain), not hashed by the splits of other columns
    other_order = GradientBoostingClassifier(n_estimators=5).fit(X[["c", "b", "a"]], y)
    with pytest.raises(ValueError, match="another order"):
        AnchorExplainer(other_order, random_state=0).fit(X[["a", "b", "c"]])


def test_histogram_boosting_with_categories_keeps_each_category_apart():
    from sklearn.ensemble import HistGradientBoostingClassifier

    from skanchors.models import split_thresholds

    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=800).round(3),
            "s": pd.Categorical(rng.choice(["u", "v", "w"], 800)),
            "b": rng.normal(size=800).round(3),
        }
    )
    y = ((X["a"] > 0) & (X["s"] != "v")).astype(int)
    hgb = HistGradientBoostingClassifier(max_iter=20, max_depth=3, random_state=0).fit(X, y)
    thresholds, dtype = split_thresholds(hgb)
    assert thresholds[1] is None and dtype is np.float64  # the categorical column
    assert len(thresholds[0]) > 0 and len(thresholds[2]) < len(np.unique(X["b"]))
    split = AnchorExplainer(hgb, random_state=0).fit(X)
    plain = AnchorExplainer(lambda Z: hgb.predict_proba(Z), random_state=0).fit(X)
    assert split.sampler_._hash_codes is not None
    rows = pd.concat([X.iloc[:6], X.iloc[[0]].assign(s=pd.Categorical(["x"]))])  # unseen "x"
    ours, theirs = split.explain(rows), plain.explain(rows)
    for a, b in zip(ours, theirs):
        assert (a.predicates, a.precision, a.coverage) == (b.predicates, b.precision, b.coverage)
    assert sum(a.n_rows_predicted for a in ours) < sum(b.n_rows_predicted for b in theirs)
    instance = split.sampler_.instance(rows.iloc[[6]])
    keys, _ = instance.sample((), 3000, np.random.default_rng(1))
    hashes = instance.hash_rows(keys)
    predicted = hgb.predict_proba(instance.decode(keys))[:, 1]
    for h in np.unique(hashes):
        assert (predicted[hashes == h] == predicted[hashes == h][0]).all()
