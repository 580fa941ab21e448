"""AnchorExplainer on tabular data: planted rules, parameters, honesty, bad input."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier

from skanchors import (
    Anchor,
    AnchorExplainer,
    LimeExplainer,
    NoAnchorWarning,
    anchor_scorer,
    config_context,
)
from skanchors.discretizers import EdgesDiscretizer, QuantileDiscretizer
from skanchors.samplers import TabularSampler

COLOURS = ["blue", "green", "red"]


def planted_data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x0": rng.uniform(size=n),
            "x1": rng.uniform(size=n),
            "colour": pd.Categorical(rng.choice(COLOURS, size=n), categories=COLOURS),
            "x3": rng.normal(size=n),
        }
    )


class PlantedModel:
    """Predicts 1 iff x0 > 0.7 and colour == 'red'; counts calls and rows."""

    classes_ = np.array([0, 1])

    def __init__(self):
        self.calls = 0
        self.rows = 0

    def predict_proba(self, X):
        self.calls += 1
        self.rows += len(X)
        p = ((X["x0"].to_numpy() > 0.7) & (X["colour"].to_numpy() == "red")).astype(float)
        return np.column_stack([1 - p, p])


def row(x0, colour, x1=0.5, x3=0.0):
    return pd.DataFrame(
        {
            "x0": [x0],
            "x1": [x1],
            "colour": pd.Categorical([colour], categories=COLOURS),
            "x3": [x3],
        }
    )


@pytest.fixture(scope="module")
def data():
    return planted_data()


@pytest.fixture
def planted_explainer(data):
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    return AnchorExplainer(
        PlantedModel(), sampler=TabularSampler(discretizer=disc), random_state=0
    ).fit(data)


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
@pytest.fixture(scope="module")
def adult_model():
    from skanchors.datasets import load_adult

    X, y = load_adult(return_X_y=True)
    X_train, X_test = X.iloc[:20000], X.iloc[20000:]
    y_train = y.iloc[:20000]
    cat = list(X.select_dtypes("category").columns)
    pre = make_column_transformer(
        (
            OrdinalEncoder(
                handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=-2
            ),
            cat,
        ),
        remainder="passthrough",
    )
    model = make_pipeline(pre, DecisionTreeClassifier(max_depth=8, random_state=0))
    return model.fit(X_train, y_train), X_train, X_test


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


# ----------------------------------------------------------------- every parameter matters
def _explain(data, x, **params):
    params.setdefault("random_state", 0)
    explainer = AnchorExplainer(PlantedModel(), **params).fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        return explainer.explain(x)[0]


class Graded:
    """P(class 1) rises with x0 and x1: lower thresholds allow broader rules."""

    classes_ = np.array([0, 1])

    def predict_proba(self, X):
        score = 0.6 * X["x0"].to_numpy() + 0.4 * X["x1"].to_numpy()
        p = (score > 0.55).astype(float)
        return np.column_stack([1 - p, p])


def _graded(data, x, **params):
    params.setdefault("random_state", 0)
    explainer = AnchorExplainer(Graded(), **params).fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        return explainer.explain(x)[0]


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


# What an explanation cost (not what it says): it depends on what the prediction cache held.
_COSTS = ("wall_time", "n_model_calls", "n_rows_predicted")


def _content(anchor):
    d = anchor.to_dict()
    for key in _COSTS:
        d.pop(key)
    return d


@pytest.mark.parametrize("n_jobs, workers", [(1, 1), (2, 2), (None, 1)])
def test_n_jobs_sets_the_number_of_workers(data, n_jobs, workers, monkeypatch):
    import threading

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


@pytest.mark.parametrize("kind", ["anchor", "lime"])
def test_n_jobs_above_the_number_of_rows_starts_one_worker_per_chunk(data, kind, monkeypatch):
    # n_jobs=64 on 4 rows started 64 processes (7 s instead of 1.3 s on 2 cores)
    import joblib

    import skanchors.explainer
    import skanchors.lime

    module = skanchors.explainer if kind == "anchor" else skanchors.lime
    asked = []

    class Recorded(joblib.Parallel):
        def __init__(self, n_jobs=None, **kwargs):
            asked.append(n_jobs)
            super().__init__(n_jobs=1, **kwargs)  # run them here: the count is what matters

    monkeypatch.setattr(module, "Parallel", Recorded)
    X = pd.concat([row(0.9, "red"), row(0.2, "green"), row(0.8, "red", x1=0.1), row(0.1, "red")])
    make = AnchorExplainer if kind == "anchor" else LimeExplainer
    explainer = make(Graded(), random_state=3, n_jobs=64).fit(data)
    many = explainer.explain(X)
    assert asked and max(asked) <= len(X)
    alone = make(Graded(), random_state=3).fit(data).explain(X)
    assert [str(a) for a in many] == [str(a) for a in alone]


@pytest.mark.parametrize("bounds", ["bin", "all"])
def test_random_state_and_n_jobs_determinism(data, bounds):
    X = pd.concat([row(0.9, "red"), row(0.2, "green"), row(0.8, "red", x1=0.1)])
    runs = []
    for n_jobs in (1, 2):
        explainer = AnchorExplainer(
            Graded(), random_state=3, n_jobs=n_jobs, sampler=TabularSampler(bounds=bounds)
        )
        runs.append([_content(a) for a in explainer.fit(data).explain(X)])
    assert runs[0] == runs[1]
    # A row's anchor does not depend on which other rows are explained with it.
    alone = AnchorExplainer(Graded(), random_state=3, sampler=TabularSampler(bounds=bounds)).fit(
        data
    )
    assert _content(alone.explain(X.iloc[[1]])[0]) == runs[0][1]
    other = (
        AnchorExplainer(Graded(), random_state=4, sampler=TabularSampler(bounds=bounds))
        .fit(data)
        .explain(X)
    )
    assert [a.n_samples for a in other] != [r["n_samples"] for r in runs[0]]


def test_prediction_cache_changes_costs_never_anchors(data):
    X = pd.concat([row(0.9, "red"), row(0.8, "red", x1=0.1), row(0.85, "red", x1=0.2)])
    runs, rows = {}, {}
    for cache_size in (0, 250_000):
        explainer = AnchorExplainer(
            Graded(), sampler=TabularSampler(perturbation="replace"), random_state=1
        )
        with warnings.catch_warnings(), config_context(cache_size=cache_size):
            warnings.simplefilter("ignore", NoAnchorWarning)
            explainer.fit(data)
            anchors = [explainer.explain(X.iloc[[i]])[0] for i in range(len(X))]
            anchors += explainer.explain(X)  # the same rows again, together
        runs[cache_size] = [_content(a) for a in anchors]
        rows[cache_size] = [a.n_rows_predicted for a in anchors]
    assert runs[0] == runs[250_000]
    assert runs[0][:3] == runs[0][3:]
    # Rows in the same bins read the same streams: the second and third rows, and every row
    # the second time, cost fewer model rows with the cache, and the repeat costs none.
    assert rows[250_000][0] == rows[0][0]
    assert rows[250_000][1] < rows[0][1] and rows[250_000][2] < rows[0][2]
    assert rows[250_000][3:] == [1, 1, 1]  # the rows themselves only
    assert rows[0][3:] == rows[0][:3]


def test_searches_made_by_joblib_workers_come_back_to_the_explainer(data):
    # Each worker's copy of the cache ended with the call: explaining the same rows again
    # with n_jobs=2 searched them all again.
    X = pd.concat([row(0.9, "red"), row(0.2, "green"), row(0.8, "red", x1=0.1)])
    new = row(0.85, "green", x1=0.3)
    explainer = AnchorExplainer(Graded(), random_state=3, n_jobs=2).fit(data)
    alone = AnchorExplainer(Graded(), random_state=3).fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        first = explainer.explain(X)
        again = explainer.explain(X)
        mixed = explainer.explain(pd.concat([new, X.iloc[[1]], X.iloc[[0]]]))
        one = [alone.explain(x)[0] for x in (X.iloc[[0]], X.iloc[[1]], X.iloc[[2]], new)]
    assert [_content(a) for a in again] == [_content(a) for a in first]
    assert [a.n_rows_predicted for a in again] == [1, 1, 1]  # the rows themselves only
    assert [_content(a) for a in mixed] == [_content(one[i]) for i in (3, 1, 0)]
    assert mixed[0].n_rows_predicted > 1 and [a.n_rows_predicted for a in mixed[1:]] == [1, 1]
    assert [_content(a) for a in one[:3]] == [_content(a) for a in first]
    assert all("_search_key" not in vars(a) for a in first + again + mixed + one)


def test_a_row_repeated_in_one_call_is_searched_once_with_workers(data):
    # in one process the copies find the first search in the cache; with n_jobs=2 each
    # worker searched its own copy again
    X = pd.concat([row(0.9, "red"), row(0.2, "green"), row(0.9, "red"), row(0.9, "red")])
    runs = {}
    for n_jobs, cache_size in ((1, 250_000), (2, 250_000), (2, 0)):
        explainer = AnchorExplainer(Graded(), random_state=3, n_jobs=n_jobs)
        with warnings.catch_warnings(), config_context(cache_size=cache_size):
            warnings.simplefilter("ignore", NoAnchorWarning)
            runs[n_jobs, cache_size] = explainer.fit(data).explain(X)
    assert len({str([_content(a) for a in r]) for r in runs.values()}) == 1
    for n_jobs in (1, 2):
        rows = [a.n_rows_predicted for a in runs[n_jobs, 250_000]]
        assert rows[2:] == [1, 1] and rows[0] > 1
    assert runs[2, 0][2].n_rows_predicted == runs[2, 0][0].n_rows_predicted  # 0 keeps nothing


def test_prediction_cache_is_bounded_and_not_pickled(data):
    import pickle

    with config_context(cache_size=300):
        explainer = AnchorExplainer(Graded(), random_state=1).fit(data)
        fitted = len(pickle.dumps(explainer.sampler_))
        explainer.explain(pd.concat([row(0.9, "red"), row(0.2, "green")]))
        assert 0 < len(explainer._cache) <= 300
        copy = pickle.loads(pickle.dumps(explainer))
        assert len(copy._cache) == 0 and copy._cache.max_size == 300
    # nor the stream keys the sampler kept (workers make their own), nor its row masks and
    # pools: the pickle is the fitted one's, whatever was explained since
    assert explainer.sampler_._stream_keys and not copy.sampler_._stream_keys
    assert explainer.sampler_._masks and not copy.sampler_._masks
    assert len(pickle.dumps(explainer.sampler_)) == fitted
    assert _content(copy.explain(row(0.9, "red"))[0]) == _content(
        explainer.explain(row(0.9, "red"))[0]
    )
    assert copy.sampler_._slots_used == len(
        np.concatenate(
            [copy.sampler_._pool_rows[o : o + n] for o, n in copy.sampler_._slots.values()]
        )
    )
    # Refitting starts a new cache (the model may have changed).
    explainer.fit(data)
    assert len(explainer._cache) == 0


@pytest.fixture
def searches(monkeypatch):
    """The rows whose anchor was searched for (not taken from an earlier search), in order."""
    import skanchors._explain_rows as rows_module

    searched = []
    search = rows_module._search_one

    def counting(instance, task, row, *args, **kwargs):
        searched.append(row)
        return search(instance, task, row, *args, **kwargs)

    monkeypatch.setattr(rows_module, "_search_one", counting)
    return searched


def test_rows_in_the_same_bins_share_one_search(data, searches, monkeypatch):
    # Two rows whose predicates are the same in the reference data's terms (the same bins and
    # colour) read the same streams, so the second gets the first one's search, unchanged.
    # (Rows explained one after the other: explain shares model calls across rows in threads
    # when a timed one-row call is slow, and on a loaded machine this model's can be; two
    # searches running at once cannot wait for each other's result.)
    import skanchors.explainer as explainer_module

    monkeypatch.setattr(explainer_module, "_SHARE_CALLS_ABOVE", float("inf"))
    first, second = row(0.9, "red", x1=0.6, x3=0.1), row(0.95, "red", x1=0.65, x3=0.3)
    other = row(0.6, "red", x1=0.6, x3=0.1)  # x0 in another bin
    explainer = AnchorExplainer(
        PlantedModel(), sampler=TabularSampler(perturbation="replace"), random_state=1
    ).fit(data)
    keys = [explainer.sampler_.instance(r).search_key() for r in (first, second, other)]
    assert keys[0] == keys[1] != keys[2]
    anchors = explainer.explain(pd.concat([first, second, other]))
    assert len(searches) == 2 and searches[1]["x0"].iloc[0] == 0.6  # first and other
    a, b = anchors[0], anchors[1]
    assert _content(a) == _content(b) and a.is_anchor
    # b's only model call is the one predicting its row (shared with the other rows)
    assert b.n_model_calls == 1 and b.n_rows_predicted == 1 and a.n_rows_predicted > 1
    assert b.instance.equals(second) and a.instance.equals(first)
    b.examples_hold.iloc[0, 0] = -1.0  # each anchor has its own examples
    assert a.examples_hold.iloc[0, 0] != -1.0
    # The same anchors as searching every row (no cache of searches with cache_size=0).
    with config_context(cache_size=0):
        alone = AnchorExplainer(
            PlantedModel(), sampler=TabularSampler(perturbation="replace"), random_state=1
        ).fit(data)
        alone_anchors = alone.explain(pd.concat([first, second]))
    assert [_content(x) for x in alone_anchors] == [
        _content(a),
        _content(anchors[1]),
    ]
    assert len(searches) == 4
    # Parameters the search depends on are part of what it is kept under.
    explainer.set_params(threshold=0.9)
    looser = explainer.explain(second)[0]
    assert len(searches) == 5
    fresh = AnchorExplainer(
        PlantedModel(),
        sampler=TabularSampler(perturbation="replace"),
        random_state=1,
        threshold=0.9,
    ).fit(data)
    assert _content(looser) == _content(fresh.explain(second)[0])
    # Explaining another class of the same row is another search.
    explainer.explain(second, y=[0])
    assert len(searches) == 7


def test_rows_in_different_inner_bins_do_not_share_a_search(data, searches, monkeypatch):
    # bounds="interval": an inner bin is one predicate, and the bin is what the search is
    # kept under (x0's quartile edges are near 0.25, 0.5 and 0.75)
    import skanchors.explainer as explainer_module

    monkeypatch.setattr(explainer_module, "_SHARE_CALLS_ABOVE", float("inf"))
    rows = [row(x0, "red", x1=0.6, x3=0.1) for x0 in (0.35, 0.4, 0.6, 0.65)]
    explainer = AnchorExplainer(
        PlantedModel(), sampler=TabularSampler(perturbation="replace"), random_state=1
    ).fit(data)
    instances = [explainer.sampler_.instance(r) for r in rows]
    x0 = [[str(p) for p in i.predicates if p.feature == "x0"] for i in instances]
    assert x0[0] == x0[1] != x0[2] == x0[3]
    assert all(" < x0 <= " in names[0] for names in x0)
    keys = [i.search_key() for i in instances]
    assert keys[0] == keys[1] != keys[2] == keys[3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)  # (rows 0.6 and 0.65: 0.949)
        anchors = explainer.explain(pd.concat(rows))
    assert len(searches) == 2
    assert [a.n_model_calls for a in anchors][1::2] == [1, 1]


def test_searches_that_depend_on_the_row_are_not_shared(data, searches):
    from skanchors import KLLUCB

    twins = pd.concat([row(0.9, "red", x1=0.6), row(0.95, "red", x1=0.65)])

    class MyBandit(KLLUCB):  # a bandit of the user's own may keep state between searches
        pass

    explainer = AnchorExplainer(
        PlantedModel(),
        bandit=MyBandit(),
        sampler=TabularSampler(perturbation="replace"),
        random_state=1,
    ).fit(data)
    explainer.explain(twins)
    assert len(searches) == 2
    explainer.set_params(bandit=KLLUCB(challengers=1))  # the library's own: shared
    explainer.explain(twins)
    assert len(searches) == 3
    # A value the reference data never had: the row's streams are its own.
    unseen = data.assign(x3=data["x3"].round(1))
    explainer = AnchorExplainer(
        PlantedModel(),
        sampler=TabularSampler(categorical_features=["colour", "x3"], perturbation="replace"),
        random_state=1,
    ).fit(unseen)
    odd = pd.concat([row(0.9, "red", x3=99.0), row(0.9, "red", x3=99.0)])
    assert explainer.sampler_.instance(odd.iloc[[0]]).search_key() is None
    searches.clear()
    explainer.explain(odd)
    assert len(searches) == 2


class SlowPlantedModel(PlantedModel):
    """The planted model with a fixed cost of 5 ms per call (like a random forest's)."""

    def predict_proba(self, X):
        import time

        time.sleep(0.005)
        return super().predict_proba(X)


@pytest.mark.parametrize("slow", [True, False])
def test_rows_explained_together_share_model_calls_of_a_slow_model(data, slow):
    X = planted_data(n=8, seed=5)
    model = SlowPlantedModel() if slow else PlantedModel()
    explainer = AnchorExplainer(model, random_state=0).fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        alone = [explainer.explain(X.iloc[[i]])[0] for i in range(len(X))]
        explainer.fit(data)  # an empty prediction cache
        model.calls = 0
        together = explainer.explain(X)
    for a, b in zip(alone, together):
        assert _content(a) == _content(b)  # same samples, same predictions, same anchor
    # Two calls for the rows themselves (the first one alone, timed), then every search's
    # own calls (one after the other) or merged ones: at least as many as the longest
    # search made, fewer than all of them together.
    searches = [a.n_model_calls - 1 for a in together]  # (each counts its row's call)
    assert max(searches) <= model.calls - 2 <= sum(searches)
    if slow:
        assert model.calls - 2 < sum(searches)


def test_rows_explained_together_wait_for_each_others_predictions(data):
    """Rows in the same bins read the same streams: explained together, a search waits for
    predictions another search is making. It must give up its turn meanwhile (a hang here)."""
    import threading

    X = pd.concat([row(0.9, "red"), row(0.91, "red"), row(0.9, "red"), row(0.92, "red")] * 2)
    model = SlowPlantedModel()  # slow: the rows' searches share calls
    explainer = AnchorExplainer(model, random_state=0).fit(data)
    alone = [_content(explainer.explain(X.iloc[[i]])[0]) for i in range(len(X))]
    for _ in range(3):  # the searches' order of turns varies from run to run
        explainer.fit(data)  # an empty prediction cache
        out = []
        worker = threading.Thread(
            target=lambda out=out: out.append(explainer.explain(X)), daemon=True
        )
        worker.start()
        worker.join(timeout=120)
        assert not worker.is_alive(), "rows explained together hung"
        assert [_content(a) for a in out[0]] == alone
        # Every row after the first reads predictions made for another search.
        # (each also counts its own row, predicted before the searches)
        assert sum(a.n_rows_predicted - 1 for a in out[0]) == out[0][0].n_rows_predicted - 1


def test_model_error_in_rows_explained_together_is_raised():
    import threading

    class Failing(SlowPlantedModel):  # slow: the rows' searches share calls
        def predict_proba(self, X):
            if self.calls == 4:
                raise RuntimeError("model crashed")
            return super().predict_proba(X)

    data = planted_data(n=300, seed=2)
    model = Failing()
    explainer = AnchorExplainer(model, random_state=0).fit(data)
    model.calls = 0
    raised = []

    def run():
        try:
            explainer.explain(planted_data(n=5, seed=3))
        except RuntimeError as exc:
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "explain() hung after the model failed"
    assert raised and "model crashed" in str(raised[0])


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


# ----------------------------------------------------------------- bad input
def test_explain_before_fit():
    with pytest.raises(NotFittedError):
        AnchorExplainer(PlantedModel()).explain(row(0.5, "red"))


def test_model_without_predict_proba(data):
    class NoProba:
        def predict(self, X):
            return np.zeros(len(X))

    with pytest.raises(ValueError, match="'estimator' parameter"):
        AnchorExplainer(NoProba()).fit(data)


@pytest.mark.parametrize(
    "param, value",
    [
        ("threshold", 0.0),
        ("threshold", 1.5),
        ("delta", 1.0),
        ("epsilon", -0.1),
        ("beam_size", 0),
        ("batch_size", 0),
        ("max_anchor_size", 0),
        ("bandit", "ucb"),
    ],
)
def test_impossible_parameters(data, param, value):
    with pytest.raises(ValueError, match=f"'{param}' parameter"):
        AnchorExplainer(PlantedModel(), **{param: value}).fit(data)


def test_impossible_sampler_and_scorer_options(data):
    # the options that moved are checked where they live, naming the argument and its owner
    with pytest.raises(ValueError, match="The 'discretizer' parameter of TabularSampler"):
        AnchorExplainer(PlantedModel(), sampler=TabularSampler(discretizer="octile")).fit(data)
    for value in (0.0, 1.2):
        with pytest.raises(ValueError, match=r"threshold must be a number in \(0, 1\]"):
            anchor_scorer(threshold=value)
    with pytest.raises(ValueError, match=r"rows must be an integer in \[1, inf\) or None"):
        anchor_scorer(rows=0)
    with pytest.raises(ValueError, match=r"tolerance must be a number in \(0, inf\)"):
        anchor_scorer(tolerance=-1.0)


def test_wrong_columns_and_shapes(planted_explainer):
    with pytest.raises(ValueError, match=r"X has no column\(s\) \['x3'\], which the reference"):
        planted_explainer.explain(row(0.5, "red").drop(columns="x3"))
    # an extra column named as fit names it ("missing [], unknown ['extra']" before)
    with pytest.raises(ValueError, match=r"the column\(s\) \['extra'\] that the reference"):
        planted_explainer.explain(row(0.5, "red").assign(extra=1))
    with pytest.raises(ValueError, match="fitted on an array|fitted on a DataFrame|DataFrame"):
        planted_explainer.explain(np.zeros((1, 4)))
    with pytest.raises(ValueError, match="no rows"):
        planted_explainer.explain(row(0.5, "red").iloc[:0])
    with pytest.raises(ValueError, match="y has 2 entries"):
        planted_explainer.explain(row(0.5, "red"), y=[0, 1])
    with pytest.raises(ValueError, match="does not predict"):
        planted_explainer.explain(row(0.5, "red"), y=[7])


def test_text_in_a_numeric_column_is_refused_by_name(planted_explainer):
    bad = row(0.5, "red").astype({"x0": object})
    bad.loc[bad.index[0], "x0"] = "abc"
    with pytest.raises(ValueError, match="X column 'x0' is numeric .* holds 'abc'"):
        planted_explainer.explain(bad)
    as_text = row(0.9, "red").astype({"x0": str})  # numbers stored as text are numbers
    assert len(planted_explainer.sampler_.split(as_text)) == 1


def test_n_jobs_zero_is_refused_when_fitting(data):
    with pytest.raises(ValueError, match="'n_jobs' parameter .* Got 0"):
        AnchorExplainer(PlantedModel(), n_jobs=0).fit(data)


def test_array_shape_errors():
    X = np.random.default_rng(0).uniform(size=(50, 3))

    def model(X):
        return np.tile([0.5, 0.5], (len(X), 1))

    explainer = AnchorExplainer(model).fit(X)
    with pytest.raises(
        ValueError, match="X has 2 features, but TabularSampler is expecting 3 features"
    ):
        explainer.explain(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="Expected 2D array"):
        explainer.explain(np.zeros(3))
    with pytest.raises(ValueError, match="minimum of 2 is required"):
        AnchorExplainer(model).fit(X[:1])


def test_duplicate_and_alike_column_names_are_told_apart():
    # columns 1 and "1" were called "duplicate column names"
    model = lambda X: np.tile([0.5, 0.5], (len(X), 1))  # noqa: E731
    frame = pd.DataFrame([[0.0, 1.0, 2.0]] * 5, columns=["a", "b", "a"])
    with pytest.raises(ValueError, match=r"X has duplicate column names: \['a'\]\.$"):
        AnchorExplainer(model).fit(frame)
    frame.columns = [1, "1", "c"]
    with pytest.raises(ValueError, match=r"names read alike: \[1, '1'\]; rename them"):
        AnchorExplainer(model).fit(frame)


def test_an_object_column_with_true_and_1_is_refused():
    # True == 1 and they hash alike: the sampler kept one value for both, never drew the
    # other, and a model telling them apart got no anchor
    model = lambda X: np.tile([0.5, 0.5], (len(X), 1))  # noqa: E731
    import decimal

    for one in (1, decimal.Decimal(1)):
        mixed = pd.Series([True, one, "x", False, 2.5] * 4, dtype=object)
        with pytest.raises(ValueError, match=r"X column 'c' holds both True and the number 1"):
            AnchorExplainer(model).fit(pd.DataFrame({"c": mixed, "z": np.arange(20.0)}))
    fine = pd.Series([True, "1", "x", False, 2.5] * 4, dtype=object)  # "1" is not 1
    AnchorExplainer(model).fit(pd.DataFrame({"c": fine, "z": np.arange(20.0)}))


def test_infinite_reference_values_are_refused_by_column():
    X = pd.DataFrame({"a": [1.0, np.inf, 3.0], "b": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"\['a'\] of X hold infinite values"):
        AnchorExplainer(lambda X: np.tile([0.5, 0.5], (len(X), 1))).fit(X)


def test_all_nan_column_is_rejected():
    X = pd.DataFrame({"a": np.arange(10.0), "b": np.full(10, np.nan)})
    with pytest.raises(ValueError, match=r"\['b'\]: every value is NaN"):
        AnchorExplainer(lambda X: np.tile([0.5, 0.5], (len(X), 1))).fit(X)


@pytest.mark.parametrize("make", [AnchorExplainer, LimeExplainer])
@pytest.mark.parametrize("balance", [False, True])
def test_reference_data_the_model_was_not_fitted_on_is_refused_at_fit(make, balance):
    # the model's own error came at explain (or, with the compiled trees, none at all)
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    y = (X[:, 0] > 0).astype(int)
    frame = pd.DataFrame(X, columns=list("abcd"))
    on_array = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    on_frame = RandomForestClassifier(n_estimators=3, random_state=0).fit(frame, y)
    options = {"balance": True} if balance and make is AnchorExplainer else {}
    for model, data in [
        (on_array, X[:, :3]),
        (on_array.predict_proba, np.hstack([X, X])),
        (on_array, frame.iloc[:, :3]),
    ]:
        with pytest.raises(
            ValueError, match=r"X has \d feature\(s\), but the model was fitted on 4"
        ):
            make(model, **options).fit(data)
    with pytest.raises(ValueError, match=r"X lacks the column\(s\) \['a'\] that the model"):
        make(on_frame, **options).fit(frame.rename(columns={"a": "A"}))
    # a column the model never saw (a label left in the data) was accepted and anchored
    with pytest.raises(ValueError, match=r"X has the column\(s\) \['y'\] that the model was not"):
        make(on_frame, **options).fit(frame.assign(y=y))
    # an array for a model fitted on names was not counted
    for data in (X[:, :3], np.hstack([X, X])):
        with pytest.raises(ValueError, match=r"X has \d feature\(s\), but the model was fitted"):
            make(on_frame, **options).fit(data)
    make(on_frame, **options).fit(frame)
    make(on_array, **options).fit(X)
    make(on_array, **options).fit(frame)  # names the model never had: it counts columns


@pytest.mark.parametrize("make", [AnchorExplainer, LimeExplainer])
def test_columns_a_pipeline_drops_or_selects_by_name_are_not_required(make):
    # a ColumnTransformer fitted on [a, b, id] that drops id predicts on [a, b], but fit
    # refused [a, b] ("lacks ['id']"); a plain model given its columns in another order was
    # accepted and failed at explain in scikit-learn's words
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200), "id": range(200)})
    y = (X["a"] > 0).astype(int)
    pipe = make_pipeline(
        make_column_transformer((StandardScaler(), ["a", "b"]), remainder="drop"),
        LogisticRegression(),
    ).fit(X, y)
    make(pipe).fit(X[["a", "b"]])
    make(pipe).fit(X[["b", "a"]])  # selected by name: any order
    plain = RandomForestClassifier(n_estimators=3, random_state=0).fit(X[["a", "b"]], y)
    with pytest.raises(ValueError, match=r"another order .*pass X\[\['a', 'b'\]\]"):
        make(plain).fit(X[["b", "a"]])


@pytest.mark.parametrize("make", [AnchorExplainer, LimeExplainer])
@pytest.mark.parametrize("empty", [[], (), np.array([]), pd.Series([], dtype=object)])
def test_empty_reference_data_is_refused_in_words(make, empty):
    # a text model given [] got scikit-learn's "Expected 2D array, got 1D array instead"
    with pytest.raises(ValueError, match="X is empty: fit needs reference data"):
        make(lambda X: np.tile([0.5, 0.5], (len(X), 1))).fit(empty)


@pytest.mark.parametrize("make", [AnchorExplainer, LimeExplainer])
def test_date_and_duration_columns_are_refused_by_name(make):
    # they were taken as categories (every date its own, "when = 2020-11-06" covering 0.00)
    # and the anchor's to_json then failed on the Timestamp
    X = pd.DataFrame(
        {
            "a": np.arange(10.0),
            "when": pd.date_range("2020-01-01", periods=10, tz="UTC"),
            "wait": pd.to_timedelta(np.arange(10), unit="D"),
            "month": pd.period_range("2020-01", periods=10, freq="M"),
        }
    )
    model = lambda X: np.tile([0.5, 0.5], (len(X), 1))  # noqa: E731
    with pytest.raises(ValueError, match=r"\['when', 'wait', 'month'\] of X hold dates"):
        make(model).fit(X)
    with pytest.raises(ValueError, match=r"pd\.to_datetime\(X\['when'\]\)\.dt\.year"):
        make(model, sampler=TabularSampler(categorical_features=["when"])).fit(X[["a", "when"]])
    make(model).fit(X.assign(when=X["when"].dt.year)[["a", "when"]])  # numbers: fine
    # Python dates in an object column (.dt.date, read_sql) and categories that are dates
    # slipped through, and to_json failed on them later
    for held, kind in [
        (X["when"].dt.date.astype(object), "date"),
        (X["when"].astype("category"), "datetime64"),
        (pd.Series([pd.Timedelta(days=d) for d in range(10)], dtype=object), "timedelta"),
        (X["when"].dt.date.astype(object).astype("category"), "date"),  # categories of dates
        (pd.cut(X["when"], 3), "datetime64"),  # intervals of dates
    ]:
        with pytest.raises(ValueError, match=rf"\['day'\] of X hold dates.*{kind}"):
            make(model).fit(pd.DataFrame({"a": X["a"], "day": held}))


@pytest.mark.parametrize("dtype", ["object", "category"])
def test_all_missing_categorical_column_is_rejected(dtype):
    X = pd.DataFrame({"a": np.arange(10.0), "c": pd.Series([None] * 10, dtype=dtype)})
    with pytest.raises(ValueError, match=r"\['c'\]: every value is missing"):
        AnchorExplainer(lambda X: np.tile([0.5, 0.5], (len(X), 1))).fit(X)


def test_model_returning_wrong_shape(data):
    with pytest.raises(ValueError, match=r"shape \(n_inputs, n_classes\)"):
        AnchorExplainer(lambda X: np.zeros(len(X))).fit(data).explain(row(0.5, "red"))


def test_unknown_categorical_feature(data):
    with pytest.raises(ValueError, match="unknown feature 'nope'"):
        AnchorExplainer(PlantedModel(), sampler=TabularSampler(categorical_features=["nope"])).fit(
            data
        )


def test_edges_for_features_the_discretizer_does_not_see_are_refused():
    X = np.random.default_rng(0).uniform(size=(50, 2))
    for key in (5, -1):
        with pytest.raises(ValueError, match=f"feature index {key}, but there are 2 features"):
            EdgesDiscretizer(edges={key: [0.5]}).fit(X)
    # inside the explainer the discretizer sees the numeric columns only
    frame = pd.DataFrame({"s": ["u", "v"] * 25, "a": X[:, 0], "b": X[:, 1]})
    model = lambda Z: np.tile([0.5, 0.5], (len(Z), 1))  # noqa: E731
    with pytest.raises(ValueError, match="unknown feature 's'.*categorical ones are not binned"):
        AnchorExplainer(
            model, sampler=TabularSampler(discretizer=EdgesDiscretizer(edges={"s": [5]}))
        ).fit(frame)
    with pytest.raises(ValueError, match="feature index 2, but there are 2 features"):
        AnchorExplainer(
            model, sampler=TabularSampler(discretizer=EdgesDiscretizer(edges={2: [0.5]}))
        ).fit(frame)


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


def test_stratified_reuse_of_parent_samples_is_unbiased(adult_model):
    """A child's precision from its parent's samples plus its own matches fresh samples.

    The naive reuse (parent samples that happen to satisfy the child, counted as if drawn
    for it) is the bias the stratified estimate removes; the test checks it is really there.
    """
    from skanchors._search import SampleStore, StratifiedArms

    model, X_train, X_test = adult_model
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(perturbation="replace"), random_state=0
    ).fit(X_train)
    rng = np.random.default_rng(7)
    errors, naive_errors, reused = [], [], []
    n_parent, n_own = 4000, 1500
    for i in range(6):
        x = X_test.iloc[[i]]
        cls = model.predict(x)[0]
        instance = explainer.sampler_.instance(x)

        def predict(frame, cls=cls):
            return (model.predict(frame) == cls).astype(int)

        feat = instance.predicate_features
        parent = (0,)
        children = [(0, q) for q in range(1, instance.n_predicates) if feat[q] != feat[0]][:4]
        store = SampleStore(instance, predict, 1, rng)
        store.draw([(parent, n_parent)])
        store.draw([(c, n_own) for c in children])
        arms = StratifiedArms(store, children, [parent] * len(children))
        estimate = arms.precision_estimates()
        ids = store.anchor_id[: store.size]
        for j, child in enumerate(children):
            keys, _ = instance.sample(child, 40000, rng)
            truth = np.mean(predict(instance.decode(keys)))
            errors.append(estimate[j] - truth)
            # Parent samples that satisfy the child: the child's predicate is on another
            # feature than the parent's, which the parent leaves as the base row had it.
            naive = (ids == store._id(child)) | (
                (ids == store._id(parent)) & store.native[: store.size, child[1]]
            )
            naive_errors.append(store.correct[naive].mean() - truth)
            reused.append(arms.n_samples[j] - n_own)
    errors, naive_errors = np.abs(errors), np.abs(naive_errors)
    assert min(reused) > 0  # parent samples were used
    assert np.mean(errors) < 0.01
    assert max(errors) < 0.03
    assert max(naive_errors) > 0.04  # the bias the stratification removes


def test_stratified_counts_match_their_definition(adult_model):
    """Stratum counts, built once and then updated pull by pull, against a direct count.

    Arms of mixed sizes (one arm's candidate is another's parent, as in the search's
    fallback pool) and samples of unrelated anchors in the store.
    """
    from skanchors._search import SampleStore, StratifiedArms

    model, X_train, X_test = adult_model
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(perturbation="replace"), random_state=0
    ).fit(X_train)
    instance = explainer.sampler_.instance(X_test.iloc[[3]])
    cls = model.predict(X_test.iloc[[3]])[0]
    feat = np.asarray(instance.predicate_features)
    p = [q for q in range(instance.n_predicates)]
    first = next(q for q in p[1:] if feat[q] != feat[0])
    third = next(q for q in p[1:] if feat[q] not in (feat[0], feat[first]))
    candidates = [(0, first), (0, third), tuple(sorted((0, first, third)))]
    parents = [(0,), (0,), (0, first)]
    store = SampleStore(
        instance,
        lambda frame: (model.predict(frame) == cls).astype(int),
        1,
        np.random.default_rng(0),
    )
    store.draw([((0,), 300), ((first,), 200), ((0, first), 150)])
    arms = StratifiedArms(store, candidates, parents)
    arms.pull([0, 2], 120)
    arms.pull([1], 90)
    ids = store.anchor_id[: store.size]
    native = store.native[: store.size]
    right = store.correct
    for j, (cand, parent) in enumerate(zip(candidates, parents)):
        (added,) = set(cand) - set(parent)
        group = [q for q in cand if feat[q] == feat[added]]
        e = native[:, group].all(axis=1)
        own, par = ids == store._id(cand), ids == store._id(parent)
        s1, s2 = (own | par) & e, own & ~e
        assert arms.n1[j] == s1.sum() and arms.pos1[j] == (s1 & right).sum()
        assert arms.n2[j] == s2.sum() and arms.pos2[j] == (s2 & right).sum()
    assert arms.n_samples.min() > 0


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


def test_discretizers_name_the_columns_that_are_not_numbers():
    X = pd.DataFrame({"age": [5.0, 20.0, 40.0], "sex": ["m", "f", "m"], "c": list("abc")})
    X["c"] = X["c"].astype("category")
    for disc in (QuantileDiscretizer(), EdgesDiscretizer(edges={"age": [18]})):
        with pytest.raises(ValueError, match=r"column\(s\) \['sex', 'c'\] of X are not numeric"):
            disc.fit(X)
        with pytest.raises(ValueError, match=r"X holds values that are not .*'m'"):
            disc.fit(X.to_numpy())


def test_the_constant_feature_warning_names_constant_features_only():
    X = pd.DataFrame({"c": [3.0] * 6, "v": [1.0, 2, 3, 4, 5, np.nan]})
    with pytest.warns(UserWarning, match=r"\['c'\] have a single value"):
        QuantileDiscretizer().fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a feature left in one bin on purpose is not constant
        EdgesDiscretizer(edges={}, default="none").fit(X[["v"]])


def test_columns_named_by_numbers_and_strings_alike():
    # scikit-learn refuses a mix of int and str column names; the explainer takes them
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {0: rng.uniform(size=400), "b": rng.uniform(size=400), "c": rng.choice(["u", "v"], 400)}
    )

    def model(frame):
        p = ((frame[0] > 0.5) & (frame["c"] == "v")).to_numpy(float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(
        model, sampler=TabularSampler(perturbation="replace"), random_state=0
    ).fit(X)
    x = pd.DataFrame({0: [0.9], "b": [0.1], "c": ["v"]})
    anchor = explainer.explain(x)[0]
    assert anchor.is_anchor and set(anchor.features) == {0, "c"}
    assert sorted(anchor.conditions()) == ["c = v", "column 0 > 0.797"]
    assert "THEN PREDICT 1" in str(anchor)
    covered = anchor.covers(X)
    assert (model(X[covered])[:, 1] == 1).all()


def test_edges_and_categorical_features_name_number_named_columns():
    # In pd.DataFrame(array) the names are numbers: edges={1: [50]} went to the second
    # numeric column (column 3), column 1 kept its quartiles; and categorical_features
    # [0, "c"] was read as the strings ["0", "c"] ("unknown feature '0'").
    from skanchors.discretizers import EdgesDiscretizer

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 100, size=(300, 3)), columns=[5, 3, 1])

    def model(frame):
        p = (frame[1] > 50).to_numpy(float)
        return np.column_stack([1 - p, p])

    disc = EdgesDiscretizer(edges={1: [50]})
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(discretizer=disc), random_state=0
    ).fit(X)
    assert [e.tolist() for e in explainer.sampler_.bin_edges_][2] == [50.0]
    assert disc.edges == {1: [50]}  # the user's discretizer is left as it was
    anchor = explainer.explain(X.iloc[[int(np.argmax(X[1]))]])[0]
    assert str(anchor).startswith("IF column 1 > 50.0 THEN PREDICT 1 WITH PRECISION 1.00")
    with pytest.raises(ValueError, match=r"no column of X is called 7"):
        AnchorExplainer(
            model, sampler=TabularSampler(discretizer=EdgesDiscretizer(edges={7: [1]}))
        ).fit(X)
    Y = X.assign(c=rng.choice(["u", "v"], 300))
    mixed = AnchorExplainer(
        model, sampler=TabularSampler(categorical_features=[0, "c"]), random_state=0
    ).fit(Y)
    assert mixed.sampler_.categorical_.tolist() == [True, False, False, True]
    # a number that names a column is that column (as for edges); others are positions
    named = AnchorExplainer(
        model, sampler=TabularSampler(categorical_features=[0, 1, "c"]), random_state=0
    ).fit(Y)
    assert named.sampler_.categorical_.tolist() == [True, False, True, True]
    with pytest.raises(ValueError, match="edges names feature 'c', which is categorical"):
        AnchorExplainer(
            model, sampler=TabularSampler(discretizer=EdgesDiscretizer(edges={"c": [1]}))
        ).fit(Y.rename(columns={5: "a"}))


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
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
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
