"""AnchorExplainer on tables: planted rules, parameters, honesty, the scikit-learn workflow."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier
from tabular_planted import (
    Graded,
    PlantedModel,
    _content,
    _explain,
    _graded,
    planted_data,
    row,
)

from skanchors import (
    Anchor,
    AnchorExplainer,
    LimeExplainer,
    NoAnchorWarning,
    anchor_scorer,
)
from skanchors.discretizers import EdgesDiscretizer
from skanchors.samplers import TabularSampler


# ----------------------------------------------------------------- known answers
def test_planted_rule_is_recovered_exactly(planted_explainer):
    anchor = planted_explainer.explain(row(0.9, "red"))[0]
    assert anchor.is_anchor
    assert sorted(str(p) for p in anchor.predicates) == ["colour = red", "x0 > 0.7"]
    assert anchor.prediction == 1
    assert anchor.precision == 1.0
    # Exact coverage on the reference data.
    ref = planted_data()
    expected = np.mean((ref["x0"] > 0.7) & (ref["colour"] == "red"))
    assert anchor.coverage == pytest.approx(expected)
    assert anchor.covers(ref).mean() == pytest.approx(expected)


def _x0_predicates(data, x0, bounds, edges=(0.3, 0.5, 0.7)):
    """A red row's predicates on x0, cut at ``edges``, as printed; and the instance."""
    disc = EdgesDiscretizer(edges={"x0": list(edges)}, default="none")
    explainer = AnchorExplainer(
        PlantedModel(), sampler=TabularSampler(discretizer=disc, bounds=bounds)
    ).fit(data)
    inst = explainer.sampler_.instance(row(x0, "red"))
    return [str(p) for p in inst.predicates if p.feature == "x0"], inst


def test_all_bounds_are_the_bins_bounds_and_the_looser_ones(data):
    # bounds="all", the authors' predicate set: a row's own bin's bounds, then every looser
    # bound on each side, so that a rule can span several bins ("x0 <= 0.7" for a row at 0.2)
    def bounds(x0, which):
        return _x0_predicates(data, x0, which)

    assert bounds(0.2, "all")[0] == ["x0 <= 0.3", "x0 <= 0.5", "x0 <= 0.7"]
    assert bounds(0.6, "all")[0] == ["x0 <= 0.7", "x0 > 0.5", "x0 > 0.3"]
    assert bounds(0.9, "all")[0] == ["x0 > 0.7", "x0 > 0.5", "x0 > 0.3"]
    assert bounds(0.6, "bin")[0] == ["x0 <= 0.7", "x0 > 0.5"]
    # the bounds on one side of a feature are one group for the search; "bin" needs none
    names, inst = bounds(0.6, "all")
    groups = dict(zip(map(str, inst.predicates), inst.predicate_groups.tolist()))
    assert groups["x0 > 0.5"] == groups["x0 > 0.3"] != groups["x0 <= 0.7"]
    assert len(set(groups.values())) == 3  # x0's two sides, colour
    assert bounds(0.6, "bin")[1].predicate_groups is None


def test_all_bounds_find_the_broadest_rule_across_bins(data):
    # Negative side of the planted rule (x0 > 0.7 and red): "x0 <= 0.3" (cov 0.3) and
    # "colour = green" (cov 1/3) are precise within the row's own bins, but "x0 <= 0.7", the
    # planted boundary two bins away, covers 0.7
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    explainer = AnchorExplainer(
        PlantedModel(), sampler=TabularSampler(discretizer=disc, bounds="all"), random_state=0
    )
    anchor = explainer.fit(data).explain(row(0.2, "green"))[0]
    assert anchor.is_anchor and [str(p) for p in anchor.predicates] == ["x0 <= 0.7"]
    assert anchor.coverage == pytest.approx(np.mean(data["x0"] <= 0.7))
    assert explainer.transform(row(0.2, "green")).tolist() == [[1, 0, 0, 0]]
    # the positive side keeps exactly the planted rule
    anchor = explainer.explain(row(0.9, "red"))[0]
    assert sorted(str(p) for p in anchor.predicates) == ["colour = red", "x0 > 0.7"]


def test_all_bounds_anchors_hold_one_bound_per_side_of_a_feature(data):
    explainer = AnchorExplainer(Graded(), sampler=TabularSampler(bounds="all"), random_state=0).fit(
        data
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(data.iloc[:30])
    for a in anchors:
        for step in a.steps:
            sides = [(p.feature, p.op) for p in step.predicates]
            assert len(sides) == len(set(sides))
    # ... and use bounds beyond the row's own bin, which "bin" never does
    edges = dict(zip(["x0", "x1", "x3"], explainer.sampler_.discretizer_.bin_edges_))

    def beyond(anchors):
        out = 0
        for a, (_, x) in zip(anchors, data.iloc[:30].iterrows()):
            for p in a.predicates:
                if p.feature in edges:
                    b = int(np.searchsorted(edges[p.feature], x[p.feature], side="left"))
                    own = edges[p.feature][b] if p.op == "<=" else edges[p.feature][b - 1]
                    out += p.value != own
        return out

    assert beyond(anchors) >= 5
    narrow = AnchorExplainer(Graded(), sampler=TabularSampler(bounds="bin"), random_state=0).fit(
        data
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        assert beyond(narrow.explain(data.iloc[:30])) == 0


class Band:
    """Predicts 1 iff 0.3 < x0 <= 0.7: the true anchor of a row in that band is the bin."""

    classes_ = np.array([0, 1])

    def predict_proba(self, X):
        x0 = X["x0"].to_numpy()
        p = ((x0 > 0.3) & (x0 <= 0.7)).astype(float)
        return np.column_stack([1 - p, p])


def test_interval_bounds_make_a_bin_one_predicate(data):
    def bounds(x0, which):
        return _x0_predicates(data, x0, which)

    assert bounds(0.6, "interval")[0] == ["0.5 < x0 <= 0.7"]
    assert bounds(0.4, "interval")[0] == ["0.3 < x0 <= 0.5"]
    # the lowest and highest bins are one-sided anyway
    assert bounds(0.2, "interval")[0] == ["x0 <= 0.3"]
    assert bounds(0.9, "interval")[0] == ["x0 > 0.7"]
    names, inst = bounds(0.6, "interval")
    assert inst.predicate_groups is None
    (p,) = [p for p in inst.predicates if p.feature == "x0"]
    assert p.op == "in" and p.value == pd.Interval(0.5, 0.7, closed="right")
    # a side that every reference row satisfies (x0 <= 1.0 of a uniform x0) is left out
    assert _x0_predicates(data, 0.6, "interval", edges=(0.3, 1.0))[0] == ["x0 > 0.3"]
    # ... also when missing values, which break both sides, are in the column
    holes = data.assign(x0=data["x0"].mask(data.index % 50 == 0))
    assert _x0_predicates(holes, 0.6, "interval", edges=(0.3, 1.0))[0] == ["x0 > 0.3"]
    names, inst = _x0_predicates(holes, 0.2, "interval", edges=(0.3, 1.0))
    assert names == ["x0 <= 0.3"]
    coverage = inst.coverage([(0,)])[0]
    assert coverage == pytest.approx(np.mean(holes["x0"] <= 0.3))


def test_interval_bounds_recover_a_planted_bin(data):
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]}, default="none")
    explainer = AnchorExplainer(
        Band(), sampler=TabularSampler(discretizer=disc, bounds="interval"), random_state=0
    )
    anchor = explainer.fit(data).explain(row(0.5, "blue"))[0]
    assert anchor.is_anchor and anchor.precision == 1.0
    assert [str(p) for p in anchor.predicates] == ["0.3 < x0 <= 0.7"]
    assert anchor.coverage == pytest.approx(np.mean((data["x0"] > 0.3) & (data["x0"] <= 0.7)))
    assert anchor.covers(pd.DataFrame({"x0": [0.3, 0.31, 0.7, 0.71, np.nan]})).tolist() == [
        False,
        True,
        True,
        False,
        False,
    ]
    assert explainer.transform(row(0.5, "blue")).tolist() == [[1, 0, 0, 0]]
    assert Anchor.from_json(anchor.to_json()) == anchor
    assert str(anchor).startswith("IF 0.3 < x0 <= 0.7 THEN PREDICT 1")
    # the same rule as two predicates with bounds="bin"
    narrow = AnchorExplainer(
        Band(), sampler=TabularSampler(discretizer=disc, bounds="bin"), random_state=0
    ).fit(data)
    anchor = narrow.explain(row(0.5, "blue"))[0]
    assert sorted(str(p) for p in anchor.predicates) == ["x0 <= 0.7", "x0 > 0.3"]
    assert anchor.conditions() == ["0.3 < x0 <= 0.7"]
    # the negative side: a row above the band gets the top bin
    anchor = explainer.explain(row(0.9, "blue"))[0]
    assert [str(p) for p in anchor.predicates] == ["x0 > 0.7"] and anchor.prediction == 0


def test_check_measures_the_rule_on_rows_of_ones_own(planted_explainer):
    anchor = planted_explainer.explain(row(0.9, "red"))[0]  # x0 > 0.7 and colour = red
    held_out = planted_data(n=500, seed=11)
    truth = ((held_out["x0"] > 0.7) & (held_out["colour"] == "red")).to_numpy()
    predicted = PlantedModel().predict_proba(held_out).argmax(axis=1)
    check = anchor.check(held_out, predicted)
    assert check == (1.0, truth.mean(), truth.sum())  # the planted rule: always right
    assert (check.precision, check.coverage, check.n_covered) == tuple(check)
    # a model that disagrees on every other covered row
    flipped = predicted.copy()
    flipped[np.flatnonzero(truth)[::2]] = 0
    assert anchor.check(held_out, flipped).precision == pytest.approx(
        truth.sum() // 2 / truth.sum()
    )
    # exclude leaves rows out of both counts (e.g. the explained row itself)
    first = int(np.flatnonzero(truth)[0])
    assert anchor.check(held_out, predicted, exclude=[first]) == (
        1.0,
        (truth.sum() - 1) / (len(truth) - 1),
        truth.sum() - 1,
    )
    # no covered row: precision NaN
    nothing = anchor.check(held_out[~truth], predicted[~truth])
    assert np.isnan(nothing.precision) and nothing.coverage == 0 and nothing.n_covered == 0
    with pytest.raises(ValueError, match="predictions must hold one model output per row"):
        anchor.check(held_out, predicted[:-1])
    with pytest.raises(ValueError, match="exclude must hold positions of rows of X"):
        anchor.check(held_out, predicted, exclude=[len(held_out)])


def test_negative_side_gets_the_broadest_sufficient_rule(planted_explainer):
    anchor = planted_explainer.explain(row(0.2, "green"))[0]
    assert anchor.prediction == 0 and anchor.is_anchor
    # Either "x0 <= 0.3" (cov 0.3) or "colour = green" (cov 1/3) is precise; coverage is
    # maximised, so the colour wins.
    assert [str(p) for p in anchor.predicates] == ["colour = green"]


def test_empty_anchor_when_prediction_never_changes(data):
    def constant(X):
        return np.tile([0.2, 0.8], (len(X), 1))

    anchor = AnchorExplainer(constant, random_state=0).fit(data).explain(row(0.5, "blue"))[0]
    assert anchor.predicates == () and anchor.is_anchor and anchor.coverage == 1.0


def test_reports_true_model_calls_and_rows(data):
    model = PlantedModel()
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(discretizer=disc), random_state=0
    ).fit(data)
    before_calls, before_rows = model.calls, model.rows
    anchor = explainer.explain(row(0.9, "red"))[0]
    # every call explain() made, the one predicting the explained row included
    assert anchor.n_model_calls == model.calls - before_calls
    assert anchor.n_rows_predicted == model.rows - before_rows
    assert anchor.n_samples <= anchor.n_rows_predicted * 10
    assert anchor.wall_time > 0


@pytest.mark.parametrize("explainer_class", [AnchorExplainer, LimeExplainer])
def test_fitting_a_callable_predicts_one_reference_row(data, explainer_class):
    # a callable's classes come from the width of its output on one row, not on all of them
    model = PlantedModel()
    explainer = explainer_class(lambda Z: model.predict_proba(Z), random_state=0).fit(data)
    assert (model.calls, model.rows) == (1, 1)
    assert explainer.classes_.tolist() == [0, 1]


def test_duplicate_perturbations_are_predicted_once():
    # Two binary features: only 4 distinct inputs exist, so at most 4 rows are ever predicted.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["u", "v"], 500), "b": rng.choice(["s", "t"], 500)})

    def model(X):
        p = ((X["a"] == "u") & (X["b"] == "s")).to_numpy(dtype=float) * 0.6 + 0.2
        return np.column_stack([1 - p, p])

    anchor = AnchorExplainer(model, random_state=0).fit(X).explain(X.iloc[[0]])[0]
    assert anchor.n_rows_predicted <= 4 + 1  # (+ the explained row, predicted first)
    assert anchor.n_samples > 4


def test_explaining_a_chosen_class(planted_explainer):
    # Asking why row (0.2, green) would be class 1: no rule makes the model say 1 there.
    with pytest.warns(NoAnchorWarning):
        anchor = planted_explainer.explain(row(0.2, "green"), y=[1])[0]
    assert anchor.prediction == 1
    assert not anchor.is_anchor
    assert anchor.precision < 0.95


def test_the_no_anchor_warning_names_the_row_and_points_at_the_callers_line(planted_explainer):
    rows = pd.concat([row(0.9, "red"), row(0.2, "green")]).set_axis([298, 609])
    with pytest.warns(NoAnchorWarning, match=r"^Row 1 \(index 609\): no rule") as caught:
        planted_explainer.explain(rows, y=[1, 1])
    assert [w.filename for w in caught] == [__file__]

    def flipping(X):  # the class flips within every bin of x0: no rule holds it
        p = (np.sin(60 * X["x0"].to_numpy()) > 0).astype(float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(flipping, random_state=0).fit(planted_data(n=400))
    with pytest.warns(NoAnchorWarning, match=r"^Row 0 \(index 609\)") as caught:
        explainer.transform(rows.iloc[[1]])
    assert [w.filename for w in caught] == [__file__]


def test_multiclass_model():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"x": rng.uniform(size=1000), "y": rng.uniform(size=1000)})

    class ThreeWay:
        classes_ = np.array(["low", "mid", "high"])

        def predict_proba(self, X):
            idx = np.digitize(X["x"].to_numpy(), [0.25, 0.75])
            return np.eye(3)[idx]

    disc = EdgesDiscretizer(edges={"x": [0.25, 0.75]})
    explainer = AnchorExplainer(
        ThreeWay(), sampler=TabularSampler(discretizer=disc), random_state=0
    ).fit(X)
    anchors = explainer.explain(pd.DataFrame({"x": [0.1, 0.5, 0.9], "y": [0.5] * 3}))
    assert [a.prediction for a in anchors] == ["low", "mid", "high"]
    assert [str(p) for p in anchors[0].predicates] == ["x <= 0.25"]
    assert [str(p) for p in anchors[2].predicates] == ["x > 0.75"]
    assert all(a.is_anchor and a.precision == 1.0 for a in anchors)
    assert [str(p) for p in anchors[1].predicates] == ["0.25 < x <= 0.75"]
    assert anchors[1].conditions() == ["0.25 < x <= 0.75"]


def test_numpy_input_and_nan_values():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(600, 3))
    X[rng.random(600) < 0.2, 1] = np.nan

    def model(X):
        X = np.asarray(X, dtype=float)
        p = np.isnan(X[:, 1]).astype(float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(model, random_state=0).fit(X)
    x = np.array([[0.5, np.nan, 0.5]])
    anchor = explainer.explain(x)[0]
    assert [str(p) for p in anchor.predicates] == ["x1 is missing"]
    assert anchor.covers(X).mean() == pytest.approx(np.isnan(X[:, 1]).mean())


def test_object_array_columns_of_numbers_are_numeric():
    # a mixed DataFrame's to_numpy(): numbers and strings as Python objects in one array
    frame = planted_data()
    X = frame.astype({"colour": object}).to_numpy()
    assert X.dtype == object

    def model(X):
        X = np.asarray(X, dtype=object)
        p = ((X[:, 0].astype(float) > 0.7) & (X[:, 2] == "red")).astype(float)
        return np.column_stack([1 - p, p])

    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(discretizer=disc), random_state=0
    ).fit(X)
    assert explainer.sampler_.categorical_.tolist() == [False, False, True, False]
    x = np.array([[0.9, 0.5, "red", 0.0]], dtype=object)
    anchor = explainer.explain(x)[0]
    assert sorted(str(p) for p in anchor.predicates) == ["x0 > 0.7", "x2 = red"]
    assert anchor.covers(X).mean() == pytest.approx(
        np.mean((frame["x0"] > 0.7) & (frame["colour"] == "red"))
    )


def test_unseen_category_value_is_sampled_from_the_instance():
    X = pd.DataFrame({"c": ["a", "b"] * 100, "v": np.arange(200.0)})

    def model(X):
        p = (X["c"] == "zzz").to_numpy(dtype=float)
        return np.column_stack([1 - p, p])

    anchor = (
        AnchorExplainer(model, random_state=0)
        .fit(X)
        .explain(pd.DataFrame({"c": ["zzz"], "v": [3.0]}))[0]
    )
    assert [str(p) for p in anchor.predicates] == ["c = zzz"]
    assert anchor.precision == 1.0 and anchor.coverage == 0.0


@pytest.mark.parametrize("ordered", [False, True])
def test_an_unseen_category_keeps_the_column_categorical(ordered):
    # concatenating categoricals of other categories made the column object: a model
    # reading .cat (as LightGBM and XGBoost do) crashed inside explain
    rng = np.random.default_rng(0)
    categories = ["a", "b", "c"]
    X = pd.DataFrame(
        {
            "c": pd.Categorical(rng.choice(categories, 300), categories, ordered=ordered),
            "x": rng.normal(size=300),
        }
    )
    dtypes = []

    def model(Z):
        dtypes.append(Z["c"].dtype)
        p = (Z["c"].cat.codes.to_numpy() == 3).astype(float)  # the category "d"
        return np.column_stack([1 - p, p])

    row = pd.DataFrame(
        {"c": pd.Categorical(["d"], categories + ["d"], ordered=ordered), "x": [0.0]}
    )
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    dtypes.clear()
    anchor = explainer.explain(row)[0]
    assert [str(p) for p in anchor.predicates] == ["c = d"] and anchor.precision == 1.0
    assert {str(d) for d in dtypes} == {"category"}
    assert all(list(d.categories) == categories + ["d"] and d.ordered == ordered for d in dtypes)


def test_unseen_category_value_in_an_array_reaches_the_model():
    # Arrays decode all features from one flat value array; a value the reference data
    # never had is the explained row's own and must reach the model as itself.
    X = np.column_stack([np.tile([0.0, 1.0], 100), np.arange(200.0)])
    seen = []

    def model(X):
        seen.append(X[:, 0].copy())
        p = (X[:, 0] == 7.0).astype(float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(
        model, sampler=TabularSampler(categorical_features=[0]), random_state=0
    ).fit(X)
    anchor = explainer.explain(np.array([[7.0, 3.0]]))[0]
    assert [str(p) for p in anchor.predicates] == ["x0 = 7.0"]
    assert anchor.precision == 1.0 and anchor.coverage == 0.0
    values = np.concatenate(seen)
    assert set(np.unique(values).tolist()) == {0.0, 1.0, 7.0}
    # The reference rows decode to themselves.
    inst = explainer.sampler_.instance(X[:1])
    keys, _, _ = inst.stream_samples((), 0, 50, 0, explainer._cache)
    decoded = inst.decode(keys)
    assert decoded.dtype == X.dtype
    assert all((row == X).all(axis=1).any() for row in decoded)


@pytest.mark.parametrize("value", [np.nan, 2.5])
def test_an_integer_reference_array_passes_the_row_s_own_values_intact(value):
    # the row's NaN (or 2.5) was cast back to the int64 reference dtype: the model saw
    # INT64_MIN (or 2) for the rule "x0 is missing" (or "x0 = 2.5") and found no anchor
    rng = np.random.default_rng(0)
    X = rng.integers(0, 10, (400, 2))
    seen = []

    def model(Z):
        seen.append(np.asarray(Z[:, 0], dtype=float))
        p = (np.isnan(Z[:, 0]) | (Z[:, 0] == 2.5)).astype(float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(
        model, sampler=TabularSampler(categorical_features=[0]), random_state=0
    ).fit(X)
    anchor = explainer.explain(np.array([[value, 3.0]]))[0]
    assert [str(p) for p in anchor.predicates] == [
        "x0 is missing" if np.isnan(value) else "x0 = 2.5"
    ]
    assert anchor.is_anchor and anchor.precision == 1.0
    shown = np.concatenate(seen)
    assert np.isin(shown, np.arange(10.0)).sum() + np.sum(np.isnan(shown) | (shown == 2.5)) == (
        shown.size
    )
    assert explainer.perturbation_precision(anchor, 200, random_state=0) == 1.0


@pytest.mark.parametrize("names", [[1, 0], [0, 1, 5]])
def test_covers_reads_an_array_by_position_when_columns_are_named_by_numbers(names):
    # the integer name was taken for the position: columns [1, 0] read the wrong column
    # (0 rows covered instead of 179) and [0, 1, 5] raised KeyError
    rng = np.random.default_rng(0)
    X = pd.DataFrame({name: rng.uniform(size=300) for name in names})
    last = names[-1]
    X[last] = rng.choice(["a", "b"], 300)
    model = lambda Z: np.column_stack([Z[last] != "a", Z[last] == "a"]).astype(float)  # noqa: E731
    anchor = AnchorExplainer(model, random_state=0).fit(X).explain(X[X[last] == "a"].iloc[[0]])[0]
    assert [(p.feature, p.position) for p in anchor.predicates] == [(last, len(names) - 1)]
    assert anchor.covers(X.to_numpy()).tolist() == anchor.covers(X).tolist()
    assert anchor.covers(X).sum() == (X[last] == "a").sum()


def test_rows_with_different_unseen_values_never_share_predictions():
    # Both unseen values get the same code in the sampler; their samples must not be taken
    # for each other's in the prediction cache.
    X = pd.DataFrame({"c": ["a", "b"] * 100, "v": np.arange(200.0)})

    def model(X):
        p = (X["c"] == "zzz").to_numpy(dtype=float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(model, random_state=0).fit(X)
    rows = pd.DataFrame({"c": ["zzz", "yyy", "zzz"], "v": [3.0, 3.0, 3.0]})
    first = explainer.explain(rows.iloc[[0]])[0]
    assert [str(p) for p in first.predicates] == ["c = zzz"] and first.precision == 1.0
    # "What would make the model predict 1 for yyy?": samples with c = yyy are predicted 0.
    with pytest.warns(NoAnchorWarning):
        second = explainer.explain(rows.iloc[[1]], y=[1])[0]
    assert not second.is_anchor and second.precision < 0.5
    again = explainer.explain(rows.iloc[[2]])[0]
    assert again.n_rows_predicted == 1  # the same row again: all but the row from the cache
    assert again.to_dict()["predicates"] == first.to_dict()["predicates"]


# ----------------------------------------------------------------- a real pipeline


def test_pipeline_on_raw_adult_dataframe(adult_model):
    model, X_train, X_test = adult_model
    explainer = AnchorExplainer(model, random_state=0).fit(X_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(X_test.iloc[:5])
    predicted = model.predict(X_test)
    for i, anchor in enumerate(anchors):
        assert anchor.prediction == predicted[i]
        assert anchor.covers(X_test.iloc[[i]])[0]  # the rule applies to its own row
        assert anchor.n_model_calls > 0
    valid = [a for a in anchors if a.is_anchor]
    assert len(valid) >= 4


@pytest.mark.parametrize("bounds", ["bin", "interval", "all"])
def test_statistical_honesty_on_adult(adult_model, bounds):
    """>= 95% of returned anchors reach threshold - 0.025 on fresh perturbations (the issue's
    bar is threshold - 0.05; the validation accepts within 0.025, see skanchors._search), and
    >= 95% the threshold itself (38/38 here; with the authors' acceptance tolerance of 0.05,
    35/38, the least precise at 0.87)."""
    model, X_train, X_test = adult_model
    explainer = AnchorExplainer(
        model, threshold=0.9, sampler=TabularSampler(bounds=bounds), random_state=0
    )
    explainer.fit(X_train)
    rows = X_test.iloc[:40]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(rows)
    precisions = []
    for i, anchor in enumerate(anchors):
        if not anchor.is_anchor:
            continue
        fresh = explainer.sample(anchor, 2000, random_state=123 + i)
        assert anchor.covers(fresh).all()
        precision = np.mean(model.predict(fresh) == anchor.prediction)
        assert precision == explainer.perturbation_precision(anchor, 2000, random_state=123 + i)
        precisions.append(precision)
    precisions = np.array(precisions)
    assert len(precisions) >= 30
    assert np.mean(precisions >= 0.9 - 0.025) >= 0.95
    assert np.mean(precisions >= 0.9) >= 0.95


# ------------------------------------------------------- an anchor on fresh perturbations
def test_sample_draws_from_the_distribution_the_anchor_is_about(planted_explainer):
    anchor = planted_explainer.explain(row(0.9, "red"))[0]
    Z = planted_explainer.sample(anchor, 500, random_state=0)
    assert isinstance(Z, pd.DataFrame) and len(Z) == 500
    assert list(Z.columns) == ["x0", "x1", "colour", "x3"]
    assert anchor.covers(Z).all()
    # the features the rule leaves free vary as in the reference data
    assert Z["x1"].std() > 0.2 and Z["x3"].std() > 0.5
    pd.testing.assert_frame_equal(Z, planted_explainer.sample(anchor, 500, random_state=0))
    # the planted model predicts 1 exactly where the rule holds
    assert planted_explainer.perturbation_precision(anchor, 500, random_state=0) == 1.0
    # "x0 > 0.7" alone: the colour comes from random reference rows, red a third of the time
    x0_only = dataclasses.replace(
        anchor, predicates=tuple(p for p in anchor.predicates if p.feature == "x0")
    )
    precision = planted_explainer.perturbation_precision(x0_only, 4000, random_state=0)
    assert precision == pytest.approx(np.mean(planted_data()["colour"] == "red"), abs=0.03)


def test_sample_errors(planted_explainer, data):
    anchor = planted_explainer.explain(row(0.9, "red"))[0]
    with pytest.raises(ValueError, match="anchor has no instance"):
        planted_explainer.sample(Anchor.from_json(anchor.to_json()))
    with pytest.raises(ValueError, match="n_samples must be a positive integer"):
        planted_explainer.sample(anchor, 0)
    with pytest.raises(TypeError, match="anchor must be an Anchor"):
        planted_explainer.perturbation_precision("x0 > 0.7")
    with pytest.raises(ValueError, match="random_state must be"):
        planted_explainer.sample(anchor, random_state="seed")
    quartiles = AnchorExplainer(PlantedModel(), random_state=0).fit(data)  # no "x0 > 0.7"
    with pytest.raises(ValueError, match="'x0 > 0.7' is not one this explainer forms"):
        quartiles.sample(anchor)
    with pytest.raises(NotFittedError):
        AnchorExplainer(PlantedModel()).sample(anchor)


def test_held_out_precision_on_adult(adult_model):
    model, X_train, X_test = adult_model
    explainer = AnchorExplainer(model, threshold=0.95, random_state=1).fit(X_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(X_test.iloc[:15])
    predicted = model.predict(X_test)
    precisions = []
    for i, anchor in enumerate(anchors):
        mask = anchor.covers(X_test)
        mask[i] = False
        if anchor.is_anchor and mask.sum() >= 20:
            precisions.append(np.mean(predicted[mask] == anchor.prediction))
    assert len(precisions) >= 8
    assert np.median(precisions) >= 0.9


def test_threshold_changes_the_anchor(data):
    x = row(0.8, "blue", x1=0.8)
    low, high = _graded(data, x, threshold=0.7), _graded(data, x, threshold=0.99)
    assert low.coverage > high.coverage
    assert len(low) < len(high)


def test_delta_changes_sampling(data):
    x = row(0.8, "blue", x1=0.8)
    loose, strict = _graded(data, x, delta=0.5), _graded(data, x, delta=0.001)
    assert loose.n_rows_predicted < strict.n_rows_predicted


def test_epsilon_changes_sampling(data):
    x = row(0.8, "blue", x1=0.8)
    loose, tight = _graded(data, x, epsilon=0.5), _graded(data, x, epsilon=0.05)
    assert loose.n_rows_predicted < tight.n_rows_predicted


def test_beam_size_changes_the_search(data):
    x = row(0.8, "blue", x1=0.8)
    one, four = _graded(data, x, beam_size=1), _graded(data, x, beam_size=4)
    assert one.n_rows_predicted < four.n_rows_predicted


def test_max_anchor_size_limits_length(data):
    anchor = _explain(data, row(0.9, "red"), max_anchor_size=1)
    assert len(anchor) == 1 and not anchor.is_anchor


def test_batch_size_changes_sampling(data):
    small, big = (
        _explain(data, row(0.9, "red"), batch_size=10),
        _explain(data, row(0.9, "red"), batch_size=400),
    )
    assert small.n_rows_predicted < big.n_rows_predicted


def test_discretizer_changes_predicates(data):
    x = row(0.8, "blue", x1=0.8)
    quart = _graded(data, x, sampler=TabularSampler(discretizer="quartile"))
    dec = _graded(data, x, sampler=TabularSampler(discretizer="decile"))
    explainer = AnchorExplainer(PlantedModel(), sampler=TabularSampler(discretizer="decile")).fit(
        data
    )
    inst = explainer.sampler_.instance(row(0.2, "blue", x1=0.05))
    (edge,) = [p.value for p in inst.predicates if str(p).startswith("x1 <= ")]
    # the first decile, moved to the shortest number that splits the data where it does
    col = data["x1"].to_numpy()
    assert ((col <= edge) == (col <= np.percentile(col, 10))).all()
    assert edge != np.percentile(col, 10) and len(repr(edge)) <= 6
    assert quart.predicates != dec.predicates


def test_categorical_features_changes_predicates():
    X = pd.DataFrame({"k": np.tile([1, 2, 3, 4], 100), "z": np.arange(400.0)})

    def model(X):
        p = (X["k"].to_numpy() == 3).astype(float)
        return np.column_stack([1 - p, p])

    x = pd.DataFrame({"k": [3], "z": [5.0]})
    numeric = AnchorExplainer(model, random_state=0).fit(X).explain(x)[0]
    categorical = (
        AnchorExplainer(model, sampler=TabularSampler(categorical_features=["k"]), random_state=0)
        .fit(X)
        .explain(x)[0]
    )
    assert [str(p) for p in categorical.predicates] == ["k = 3"]
    assert {p.op for p in numeric.predicates} <= {"<=", ">", "in"}


def test_custom_sampler_is_used(data):
    sampler = TabularSampler(discretizer=EdgesDiscretizer(edges={"x0": [0.3, 0.7]}))
    anchor = _explain(data, row(0.9, "red"), sampler=sampler)
    assert sorted(str(p) for p in anchor.predicates) == ["colour = red", "x0 > 0.7"]
    # an option of the sampler's given to the explainer too (the old spelling) is refused
    with pytest.raises(ValueError, match=r"with sampler= given, set them on it: sampler=Tab"):
        AnchorExplainer(PlantedModel(), sampler=sampler, discretizer="decile")


def test_balance_reweights_the_reference(data):
    plain = _explain(data, row(0.9, "red"), balance=False)
    balanced = _explain(data, row(0.9, "red"), balance=True)
    assert plain.coverage_perturbation == pytest.approx(plain.coverage)
    # Class 1 is ~10% of the data; balancing gives it half of the perturbation mass.
    assert balanced.coverage_perturbation > 3 * balanced.coverage
    assert balanced.coverage == pytest.approx(balanced.covers(data).mean())


def test_bandit_choice_changes_sampling(data):
    x = row(0.8, "blue", x1=0.8)
    kl = _graded(data, x, bandit="kl-lucb")
    sar = _graded(data, x, bandit="batch-sar")
    assert sar.n_model_calls != kl.n_model_calls or sar.n_rows_predicted != kl.n_rows_predicted
    assert sar.prediction == kl.prediction == 1


@pytest.mark.parametrize("n_jobs, workers", [(1, 1), (2, 2), (None, 1)])
def test_n_jobs_sets_the_number_of_workers(data, n_jobs, workers, monkeypatch):
    import threading
    import time

    from joblib import parallel_config

    import skanchors.explainer

    # Rows share model calls (in threads of their own) when a one-row call is slow; on a
    # loaded machine even this model's call can take over the 2 ms limit. Never share here.
    monkeypatch.setattr(skanchors.explainer, "_SHARE_CALLS_ABOVE", float("inf"))

    class Recording(Graded):  # a fast model: no threads of skanchors' own (no shared calls)
        def __init__(self):
            self.threads = set()

        def predict_proba(self, X):
            self.threads.add(threading.get_ident())
            # slow enough that the second worker takes its chunk before the first is done
            # (on a loaded machine one thread could otherwise run every chunk)
            time.sleep(0.002)
            return super().predict_proba(X)

    X = pd.concat([row(0.9, "red"), row(0.2, "green"), row(0.8, "red", x1=0.1), row(0.1, "red")])
    model = Recording()
    explainer = AnchorExplainer(model, random_state=3, n_jobs=n_jobs).fit(data)
    with parallel_config(backend="threading"):  # workers are threads of this process
        model.threads.clear()
        explainer.explain(X)
    # explain() predicts the rows itself in this thread; the searches run in the workers.
    searches = model.threads - {threading.get_ident()} if workers > 1 else model.threads
    assert len(searches) == workers


@pytest.mark.parametrize("bandit", ["kl-lucb", "batch-sar"])
@pytest.mark.parametrize("beam_size", [1, 2])
def test_bounds_all_keeps_the_broadest_bound_that_holds(bandit, beam_size):
    # class 1 iff b is missing: for a row with b = 2.5 every lower bound "b > e" holds at
    # precision 1, and the anchor is the broadest (BatchSAR returned the narrowest, 0.17)
    rng = np.random.default_rng(1)
    n = 1500
    b = np.where(rng.uniform(size=n) < 0.3, np.nan, rng.normal(size=n))
    X = pd.DataFrame({"a": rng.uniform(size=n), "b": b})

    def missing_b(Z):
        p = pd.isna(pd.DataFrame(Z)["b"]).to_numpy(dtype=float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(
        missing_b,
        sampler=TabularSampler(bounds="all"),
        bandit=bandit,
        beam_size=beam_size,
        random_state=0,
    ).fit(X)
    anchor = explainer.explain(pd.DataFrame({"a": [0.5], "b": [2.5]}))[0]
    edges = explainer.sampler_.bin_edges_[1]
    assert [(p.feature, p.op, p.value) for p in anchor.predicates] == [("b", ">", edges[0])]
    assert anchor.precision == 1.0 and anchor.coverage == pytest.approx(anchor.covers(X).mean())


def test_score_rows_limits_work(data):
    X = planted_data(n=40, seed=9)
    counts = []
    for score_rows in (3, 12):
        model = PlantedModel()
        explainer = AnchorExplainer(model, random_state=0).fit(data)
        model.calls = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoAnchorWarning)
            anchor_scorer(rows=score_rows)(explainer, X)
        counts.append(model.calls)
    assert counts[0] < counts[1]


def test_verbose_prints_each_row(data, capsys):
    _explain(data, row(0.9, "red"), verbose=1)
    assert "[skanchors] row 0: IF" in capsys.readouterr().out
    _explain(data, row(0.9, "red"), verbose=0)
    assert capsys.readouterr().out == ""
    # rows explained together finish in any order: each line names its row
    X = pd.concat([row(0.9, "red"), row(0.2, "green"), row(0.8, "red", x1=0.1)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        AnchorExplainer(PlantedModel(), verbose=1, random_state=0).fit(data).explain(X)
    lines = capsys.readouterr().out.splitlines()
    rows = sorted(line.split(":")[0] for line in lines)
    assert rows == [f"[skanchors] row {i}" for i in range(3)]


def test_verbose_prints_the_class_label_the_anchor_has(data, capsys):
    # the line was printed before the label was filled in: "THEN PREDICT 1" for "yes"
    from sklearn.tree import DecisionTreeClassifier

    X = data.drop(columns="colour")
    labels = np.where(PlantedModel().predict_proba(data)[:, 1] > 0.5, "yes", "no")
    tree = DecisionTreeClassifier(random_state=0).fit(X, labels)
    anchors = AnchorExplainer(tree, verbose=1, random_state=0).fit(X).explain(X.iloc[:2])
    printed = capsys.readouterr().out
    for anchor in anchors:
        assert f"THEN PREDICT {anchor.prediction} " in printed
    assert {a.prediction for a in anchors} <= {"yes", "no"}


# ----------------------------------------------------------------- sklearn workflow
def test_transform_marks_anchor_features(planted_explainer, data):
    X = pd.concat([row(0.9, "red"), row(0.2, "green")])
    Xt = planted_explainer.transform(X)
    assert Xt.tolist() == [[1, 0, 1, 0], [0, 0, 1, 0]]
    names = ["x0", "x1", "colour", "x3"]
    assert list(planted_explainer.get_feature_names_out()) == names
    assert list(planted_explainer.get_feature_names_out(names)) == names
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        planted_explainer.get_feature_names_out(["a", "b", "c", "d"])
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        planted_explainer.get_feature_names_out(["x0"])
    # LIME's transform has the same columns, checked alike (it returned wrong names as given)
    lime = LimeExplainer(PlantedModel(), n_samples=50, random_state=0).fit(data)
    assert list(lime.get_feature_names_out()) == names == list(lime.get_feature_names_out(names))
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        lime.get_feature_names_out(["a", "b", "c", "d"])
    on_array = LimeExplainer(PlantedModel(), n_samples=50).fit(data.to_numpy())
    assert list(on_array.get_feature_names_out()) == ["x0", "x1", "x2", "x3"]
    with pytest.raises(ValueError, match=r"length equal to number of features \(4\), got 1"):
        on_array.get_feature_names_out(["x0"])


def test_clone_shares_the_fitted_model(planted_explainer):
    model = planted_explainer.estimator
    copy = clone(planted_explainer)
    assert copy.estimator is model
    assert copy.get_params()["threshold"] == 0.95


def test_the_fitted_models_parameters_are_not_the_explainers():
    model = LogisticRegression(C=1.0).fit(planted_data(n=60, seed=1)[["x0", "x1"]], [0, 1] * 30)
    explainer = AnchorExplainer(model)
    assert "estimator" in explainer.get_params()
    assert not [k for k in explainer.get_params(deep=True) if k.startswith("estimator__")]
    with pytest.raises(ValueError, match="Cannot set estimator__C: .* never refit"):
        explainer.set_params(estimator__C=0.001)
    with pytest.raises(ValueError, match="Cannot set estimator__C"):
        GridSearchCV(explainer, {"estimator__C": [0.001, 100.0]}, cv=2).fit(
            planted_data(n=60, seed=2)[["x0", "x1"]]
        )
    assert model.C == 1.0  # the user's model is untouched
    assert explainer.set_params(threshold=0.9).threshold == 0.9


def test_grid_search_over_threshold_and_beam_size(data):
    model = DecisionTreeClassifier(max_depth=3, random_state=0)
    X = data.assign(colour=data["colour"].cat.codes)
    y = ((X["x0"] > 0.7) & (X["colour"] == 2)).astype(int)
    model.fit(X, y)
    search = GridSearchCV(
        AnchorExplainer(model, random_state=0),
        {"threshold": [0.6, 0.95], "beam_size": [1, 2]},
        cv=2,
        scoring=anchor_scorer(rows=6),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        search.fit(X)
    assert search.best_estimator_.estimator is model  # never refitted or copied
    scores = search.cv_results_["mean_test_score"]
    assert np.all((scores >= 0) & (scores <= 1)) and scores.max() > 0


@pytest.mark.parametrize("score_threshold, best", [(0.95, 0.95), (None, 0.5)])
def test_grid_search_over_threshold_holds_every_setting_to_one_bar(data, score_threshold, best):
    # Graded's class rises with x0 and x1: a 0.5 threshold accepts broad rules that are
    # right only about half the time on held-out rows. Against the fixed bar (the scorer's
    # default threshold=0.95) they score nothing and the honest setting wins; measured
    # against their own threshold (threshold=None), the loosest setting wins.
    X = planted_data(n=400, seed=5)
    search = GridSearchCV(
        AnchorExplainer(Graded(), random_state=0),
        {"threshold": [0.5, 0.95]},
        cv=2,
        scoring=anchor_scorer(rows=10, threshold=score_threshold),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        search.fit(X)
    assert search.best_params_["threshold"] == best
    loose, strict = search.cv_results_["mean_test_score"]
    assert (strict > loose) if best == 0.95 else (loose > strict)


def test_score_rewards_honest_coverage(data):
    X = planted_data(n=400, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        scores = {
            t: anchor_scorer(rows=20)(
                AnchorExplainer(Graded(), threshold=t, random_state=0).fit(data), X
            )
            for t in (0.5, 0.7, 0.95)
        }
    # Held to precision 0.95 on held-out rows, looser rules score less (0.5: nothing).
    assert scores[0.5] < scores[0.7] < scores[0.95] <= 1
    assert scores[0.5] == 0.0


def test_score_is_the_mean_held_out_check_of_each_anchor_on_the_other_rows(data):
    # the coverage of an anchor on "the other rows" divides by n - 1, as Anchor.check with
    # exclude=i does (score divided by n: 0.085 against 0.087 on 40 Titanic rows)
    X = planted_data(n=30, seed=5)
    explainer = AnchorExplainer(Graded(), random_state=0).fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        score = anchor_scorer(rows=None)(explainer, X)
        anchors = explainer.explain(X)
    predicted = explainer.classes_[Graded().predict_proba(X).argmax(axis=1)]
    expected = []
    for i, anchor in enumerate(anchors):
        check = anchor.check(X, predicted, exclude=i)
        ok = check.n_covered > 0 and check.precision >= explainer.threshold
        expected.append(check.coverage if ok else 0.0)
    assert any(expected) and score == pytest.approx(np.mean(expected), rel=1e-12)


def test_explainer_inside_a_pipeline(data):
    pipe = make_pipeline(AnchorExplainer(PlantedModel(), random_state=0, max_anchor_size=2)).fit(
        data
    )
    Xt = pipe.transform(pd.concat([row(0.9, "red"), row(0.1, "blue")]))
    assert Xt.shape == (2, 4)


def test_an_explainer_saved_by_an_earlier_version_still_explains(data):
    # A fitted sampler pickled before the weight levels, the 32-bit pools and the emptiness
    # cache existed: loading derives them, and the anchors are those of a fresh explainer.
    import pickle

    X = data
    explainer = AnchorExplainer(PlantedModel(), random_state=0).fit(X)
    expected = [str(a) for a in explainer.explain(X.iloc[:4])]
    old = AnchorExplainer(PlantedModel(), random_state=0).fit(X)
    sampler = old.sampler_
    for name in ("_weight_levels", "_empty_pools"):
        del sampler.__dict__[name]
    sampler._pool_rows = sampler._pool_rows.astype(np.intp)
    loaded = pickle.loads(pickle.dumps(old))
    assert loaded.sampler_._pool_rows.dtype == np.intp and loaded.sampler_._weight_levels is None
    assert [str(a) for a in loaded.explain(X.iloc[:4])] == expected


def test_beam_size_auto_is_ten_for_tables_and_two_for_documents(data):
    from sklearn.utils._param_validation import InvalidParameterError

    table = AnchorExplainer(PlantedModel(), random_state=0).fit(data)
    assert table.beam_size == "auto" and table._beam_size() == 10
    documents = AnchorExplainer(lambda d: np.tile([0.5, 0.5], (len(d), 1)), random_state=0)
    assert documents.fit(["a good movie", "a bad one"])._beam_size() == 2
    assert AnchorExplainer(PlantedModel(), beam_size=3).fit(data)._beam_size() == 3
    # "auto" is the beam of 10 on tables, to the anchor
    x = row(0.8, "blue", x1=0.8)
    ten = AnchorExplainer(Graded(), beam_size=10, random_state=0).fit(data).explain(x)[0]
    auto = AnchorExplainer(Graded(), random_state=0).fit(data).explain(x)[0]
    assert _content(auto) == _content(ten)
    with pytest.raises(InvalidParameterError, match="beam_size"):
        AnchorExplainer(PlantedModel(), beam_size="wide").fit(data)
