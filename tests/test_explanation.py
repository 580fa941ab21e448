"""The Anchor result object: partial anchors, examples, JSON, HTML and the plot."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from figures import assert_drawn_inside
from test_tabular import PlantedModel, planted_data, row

from skanchors import AnchorExplainer, NoAnchorWarning
from skanchors._explanation import Anchor, Predicate, Step
from skanchors.discretizers import EdgesDiscretizer, QuantileDiscretizer
from skanchors.samplers import TabularSampler


@pytest.fixture(scope="module")
def data():
    return planted_data()


@pytest.fixture(scope="module")
def anchor(data):
    """The planted rule "x0 > 0.7 AND colour = red" found for a red row with x0 = 0.9."""
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    explainer = AnchorExplainer(
        PlantedModel(), sampler=TabularSampler(discretizer=disc), random_state=0
    ).fit(data)
    return explainer.explain(row(0.9, "red"))[0]


def _strict_loads(text):
    def refuse(constant):
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_steps_are_the_prefixes_of_the_rule(anchor, data):
    assert len(anchor.steps) == len(anchor.predicates) == 2
    for k, step in enumerate(anchor.steps, start=1):
        assert step.predicates == anchor.predicates[:k]
        partial = Anchor(step.predicates, 1, step.precision, step.coverage, True, 0.95)
        assert step.coverage == pytest.approx(partial.covers(data).mean())
    # One planted condition alone is not enough; both are exactly the rule.
    assert anchor.steps[0].precision < 0.95
    assert anchor.steps[-1].precision == anchor.precision == 1.0
    assert anchor.steps[-1].coverage == anchor.coverage
    assert anchor.steps[0].coverage > anchor.steps[1].coverage


def test_examples_are_covered_perturbations_split_by_the_prediction(data):
    model = PlantedModel()
    explainer = AnchorExplainer(model, random_state=0).fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        # Anchoring class 1 for a blue row: the prediction changes on many perturbations.
        anchor = explainer.explain(row(0.9, "blue"), y=[1])[0]
    hold, fail = anchor.examples_hold, anchor.examples_fail
    assert isinstance(hold, pd.DataFrame) and isinstance(fail, pd.DataFrame)
    assert len(hold) and len(fail)
    assert anchor.covers(hold).all() and anchor.covers(fail).all()
    assert (model.predict_proba(hold)[:, 1] == 1).all()
    assert (model.predict_proba(fail)[:, 1] == 0).all()


def test_json_round_trip(anchor, data):
    text = anchor.to_json()
    payload = _strict_loads(text)
    assert payload["predicates"][0].keys() == {"feature", "op", "value", "position"}
    back = Anchor.from_json(text)
    assert str(back) == str(anchor)
    assert back.predicates == anchor.predicates
    assert all(isinstance(p, Predicate) for s in back.steps for p in s.predicates)
    assert [s.precision for s in back.steps] == [s.precision for s in anchor.steps]
    assert back.precision_bounds == pytest.approx(anchor.precision_bounds)
    assert (back.n_model_calls, back.n_rows_predicted) == (
        anchor.n_model_calls,
        anchor.n_rows_predicted,
    )
    np.testing.assert_array_equal(back.covers(data), anchor.covers(data))


def test_from_json_refuses_what_is_not_an_anchor(anchor):
    # a bare KeyError: 'predicates' said nothing about the input
    with pytest.raises(
        ValueError, match=r"not an anchor's to_dict output: it lacks \['predicates'"
    ):
        Anchor.from_json('{"foo": 1}')
    with pytest.raises(ValueError, match="text must be the JSON of Anchor.to_json"):
        Anchor.from_json("IF x THEN y")
    with pytest.raises(ValueError, match="data must be a dict from Anchor.to_dict, got list"):
        Anchor.from_json("[1, 2]")
    data = anchor.to_dict()
    data["predicates"] = [{"column": "x0", "op": ">"}]
    with pytest.raises(ValueError, match=r"data\['predicates'\]\[0\] is not a predicate: it lacks"):
        Anchor.from_dict(data)
    # counts and flags were taken as given: "false" made an anchor, markup reached the HTML
    for key, value, match in [
        ("is_anchor", "false", "must be true or false"),
        ("n_samples", "<img src=x onerror=alert(1)>", "must be a non-negative integer"),
        ("n_model_calls", "<script>alert(2)</script>", "must be a non-negative integer"),
        ("n_rows_predicted", 2.5, "must be a non-negative integer"),
    ]:
        with pytest.raises(ValueError, match=rf"data\['{key}'\] {match}"):
            Anchor.from_dict({**anchor.to_dict(), key: value})


def test_steps_with_replaced_bounds_keep_their_predicates_through_json():
    # bounds="all": a step may hold "c > 0.3024" that a narrower "c > 0.5973" replaced
    # later; it came back from JSON as strings, and covers() of the step failed
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(size=(2000, 3)), columns=["a", "b", "c"])

    def model(Z):
        Z = pd.DataFrame(Z)
        p = ((Z["a"] > 0.85) | ((Z["a"] > 0.3) & (Z["b"] > 0.6))).to_numpy(float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(
        model,
        sampler=TabularSampler(bounds="all", discretizer="decile"),
        beam_size=1,
        random_state=0,
    ).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(X.iloc[:60])
    replaced = [
        a for a in anchors if any(p not in a.predicates for s in a.steps for p in s.predicates)
    ]
    assert replaced
    for a in replaced:
        back = Anchor.from_json(a.to_json())
        assert [s.predicates for s in back.steps] == [s.predicates for s in a.steps]
        for s in back.steps:
            step = Anchor(s.predicates, a.prediction, s.precision, s.coverage, True, 0.95)
            assert step.covers(X).mean() == pytest.approx(s.coverage)


def test_anchors_with_the_same_rule_and_numbers_are_equal(anchor, data):
    # examples are DataFrames: comparing them field by field would raise
    assert isinstance(anchor.examples_hold, pd.DataFrame)
    back = Anchor.from_json(anchor.to_json())
    assert back == anchor and hash(back) == hash(anchor)
    assert len({anchor, back}) == 1 and [anchor].index(back) == 0
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    again = AnchorExplainer(
        PlantedModel(), sampler=TabularSampler(discretizer=disc), random_state=0
    ).fit(data)
    assert again.explain(row(0.9, "red"))[0] == anchor  # another run, other timings
    shorter = Anchor(anchor.predicates[:1], 1, anchor.precision, anchor.coverage, True, 0.95)
    assert shorter != anchor
    other_class = Anchor.from_dict({**anchor.to_dict(), "prediction": 0})
    assert other_class != anchor and anchor != "IF ..."
    nan = Anchor((), 1, math.nan, 1.0, False, 0.95)
    assert nan == Anchor((), 1, math.nan, 1.0, False, 0.95)


@pytest.mark.parametrize(
    "precision, threshold, shown",
    [
        (0.9489, 0.95, "0.949"),
        (0.94999, 0.95, "0.94999"),
        (0.9, 0.95, "0.90"),
        (0.96, 0.95, "0.96"),
    ],
)
def test_the_printed_precision_never_crosses_the_threshold(precision, threshold, shown):
    anchor = Anchor((Predicate("x", ">", 1.0, 0),), 1, precision, 0.5, False, threshold)
    assert f"WITH PRECISION {shown} AND" in str(anchor)


def test_a_printed_edge_means_what_the_rule_tests():
    # Titanic's fares include 31.275 exactly: "Fare > 31.27" would seem to cover them
    fares = pd.DataFrame({"Fare": [31.27, 31.275, 31.28]})
    rule = Anchor((Predicate("Fare", ">", 31.275, 0),), 0, 0.97, 0.1, True, 0.95)
    assert str(rule).startswith("IF Fare > 31.275 THEN")
    assert rule.covers(fares).tolist() == [False, False, True]
    # edges of a column around 1e12 must stay apart (6 significant digits all read 1e+12)
    big = 1e12 + np.random.default_rng(0).normal(size=(400, 1)) * 1e3
    names = QuantileDiscretizer(percentiles=range(10, 100, 10)).fit(big).bin_names(0)
    assert len(set(names)) == 10
    edges = QuantileDiscretizer(percentiles=range(10, 100, 10)).fit(big).bin_edges_[0]
    for name, edge in zip(names, edges):  # each printed edge splits the data as the edge does
        printed = float(name.split(" <= ")[-1])
        assert ((big <= printed) == (big <= edge)).all()


def test_a_bin_predicate_is_a_right_closed_interval():
    fares = pd.DataFrame({"Fare": [7.925, 7.93, 31.275, 31.28, np.nan]})
    p = Predicate("Fare", "in", pd.Interval(7.925, 31.275, closed="right"), 0)
    assert str(p) == "7.925 < Fare <= 31.275"
    assert p.evaluate(fares).tolist() == [False, True, True, False, False]
    rule = Anchor((p,), 0, 0.97, 0.1, True, 0.95)
    assert rule.conditions() == ["7.925 < Fare <= 31.275"]
    assert Anchor.from_json(rule.to_json()).predicates == (p,)
    for value in (7.9, (7.9, 31.3), pd.Interval(7.9, 31.3, closed="left")):
        with pytest.raises(ValueError, match="op 'in' needs a right-closed pandas.Interval"):
            Predicate("Fare", "in", value)


def test_json_of_missing_estimates_is_strict_and_restores_nan():
    anchor = Anchor(
        predicates=(Predicate("age", "isna", None, 0),),
        prediction=np.int64(1),
        precision=math.nan,
        coverage=0.25,
        is_anchor=False,
        threshold=0.95,
        steps=[Step((Predicate("age", "isna", None, 0),), math.nan, 0.25)],
    )
    payload = _strict_loads(anchor.to_json())
    assert payload["precision"] is None and payload["coverage_perturbation"] is None
    back = Anchor.from_json(anchor.to_json())
    assert math.isnan(back.precision) and math.isnan(back.steps[0].precision)
    assert math.isnan(back.precision_bounds[0]) and back.coverage == 0.25
    assert back.prediction == 1 and not back.is_anchor


def test_html_is_escaped_and_has_no_script():
    evil = "<script>alert(1)</script>"
    pred = Predicate(evil, "==", "<b>x</b>", 0)
    anchor = Anchor((pred,), "<i>yes</i>", 0.97, 0.2, True, 0.95, steps=[Step((pred,), 0.97, 0.2)])
    out = anchor._repr_html_()
    assert "<script" not in out.lower() and "javascript" not in out.lower()
    assert "&lt;script&gt;" in out and "&lt;b&gt;x&lt;/b&gt;" in out and "&lt;i&gt;" in out
    assert out.count("<tr>") == 2  # header and the one step


def test_displays_show_dollars_literally_and_the_regression_band():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import cbook

    money = Predicate("income", "==", "$10k-$20k", 0)
    anchor = Anchor((money,), "$", 0.97, 0.2, True, 0.95, steps=[Step((money,), 0.97, 0.2)])
    ax = anchor.plot()
    try:  # "$...$" was drawn as maths: "income = 10k-20k" in italics
        texts = [t.get_text() for t in ax.get_yticklabels()] + [ax.get_title()]
        assert not any(cbook.is_math_text(t) for t in texts)
        assert texts[0].replace("\\$", "$") == "income = $10k-$20k"
    finally:
        plt.close(ax.figure)
    # a regression anchor: the value and its band everywhere, as str() shows them
    value = Anchor((money,), 67.8096078042328, 0.97, 0.2, True, 0.95, tolerance=9.974716)
    assert "PREDICT 67.8096 +- 9.97472" in str(value)
    assert "<code>67.8096 +- 9.97472</code>" in value._repr_html_()
    ax = value.plot()
    try:
        assert ax.get_title() == "PREDICT 67.8096 +- 9.97472"
    finally:
        plt.close(ax.figure)


def test_html_flags_a_candidate_that_is_not_an_anchor():
    anchor = Anchor((Predicate("x0", ">", 0.7, 0),), 1, 0.6, 0.3, False, 0.95)
    assert "Not an anchor" in anchor._repr_html_()
    assert "Not an anchor" not in Anchor((), 1, 0.99, 1.0, True, 0.95)._repr_html_()


def test_plot_shows_each_step_against_the_threshold(anchor):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    ax = anchor.plot()
    try:
        bars = [p for p in ax.patches]
        widths = sorted(round(b.get_width(), 6) for b in bars)
        expected = [s.precision for s in anchor.steps] + [s.coverage for s in anchor.steps]
        assert widths == sorted(round(v, 6) for v in expected)
        labels = [t.get_text() for t in ax.get_yticklabels()]
        # each step's bar is labelled with the predicate it adds
        assert labels == [
            ("AND " if k else "") + str(s.predicates[-1]) for k, s in enumerate(anchor.steps)
        ]
        assert_drawn_inside(ax.figure)
        (line,) = ax.get_lines()
        assert line.get_xdata()[0] == pytest.approx(anchor.threshold)
    finally:
        plt.close(ax.figure)


def test_no_informative_predicate_gives_a_flagged_empty_rule():
    # Every reference row is the same: no predicate can narrow the perturbations, and class 1
    # is never predicted.
    X = pd.DataFrame({"a": np.ones(50), "b": np.zeros(50)})

    def model(X):
        return np.tile([0.7, 0.3], (len(X), 1))

    explainer = AnchorExplainer(model, random_state=0).fit(X)
    with pytest.warns(NoAnchorWarning):
        (anchor,) = explainer.explain(X.iloc[[0]], y=[1])
    assert anchor.predicates == () and not anchor.is_anchor
    assert anchor.precision == 0.0 and anchor.coverage == 1.0
    assert str(anchor).startswith("IF (any input) THEN PREDICT 1")


def test_columns_named_by_numbers_print_as_columns():
    # pd.DataFrame(array) names its columns 0, 1, ...: "0 > 2.0" would read as arithmetic
    frame = pd.DataFrame(np.arange(12.0).reshape(4, 3))
    rule = Anchor(
        (Predicate(0, ">", 2.0, 0), Predicate(2, "<=", 11.0, 2), Predicate(2, ">", 5.0, 2)),
        1, 0.97, 0.25, True, 0.95,
    )  # fmt: skip
    assert str(rule).startswith("IF column 0 > 2.0 AND 5.0 < column 2 <= 11.0 THEN")
    assert rule.conditions() == ["column 0 > 2.0", "5.0 < column 2 <= 11.0"]
    assert rule.features == [0, 2]  # the names themselves, for the user's frame
    assert rule.covers(frame).tolist() == [False, False, True, True]
    assert str(Predicate("Age", "isna", None, 0)) == "Age is missing"


def test_a_document_word_that_reads_as_the_rule_s_own_is_quoted():
    rule = Anchor(
        (Predicate("AND", "contains", "AND", 1), Predicate("bad", "contains", "bad", 2)),
        0, 0.97, 0.2, True, 0.95,
    )  # fmt: skip
    assert str(rule).startswith('IF "AND" AND bad THEN PREDICT 0')
    assert rule.words == ["AND", "bad"]
    assert str(Predicate("and", "contains", "and", 0)) == "and"


def test_json_keeps_intervals_decimals_and_tuple_column_names():
    # a pd.cut category, a Decimal (read_sql) and a MultiIndex column: to_json raised
    # TypeError on the first two, and from_json gave the tuple back as an unhashable list
    import decimal

    rng = np.random.default_rng(0)
    prices = [decimal.Decimal(v) for v in ("9.99", "19.99", "29.99")]
    X = pd.DataFrame(
        {
            ("price", "v"): pd.Series([prices[i] for i in rng.integers(0, 3, 300)], dtype=object),
            ("age", "group"): pd.cut(rng.uniform(0, 60, 300), [0, 12, 30, 60]),
            ("x", ""): rng.normal(size=300),
        }
    )
    young = pd.Interval(0, 12)

    def model(Z):
        p = ((Z[("price", "v")] == prices[0]) & (Z[("age", "group")] == young)).to_numpy()
        return np.column_stack([1 - p, p]).astype(float)

    explainer = AnchorExplainer(model, random_state=0).fit(X)
    rule = explainer.explain(X[model(X)[:, 1] == 1].iloc[[0]])[0]
    assert {(p.feature, p.value) for p in rule.predicates} == {
        (("price", "v"), prices[0]),
        (("age", "group"), young),
    }
    back = Anchor.from_json(rule.to_json())
    assert back == rule and back.covers(X).tolist() == rule.covers(X).tolist()
    assert back.covers(X).sum() == (model(X)[:, 1] == 1).sum()


def test_to_json_names_a_value_json_cannot_hold():
    rule = Anchor((Predicate("x", "==", object(), 0),), 1, 1.0, 0.5, True, 0.95)
    with pytest.raises(TypeError, match="an anchor holds a object .* pickle or joblib"):
        rule.to_json()


def test_a_word_kept_twice_must_occur_twice():
    # "IF good AND good" covered every document with one "good": check() gave 0.5 to a rule
    # that is exact, its coverage counted single occurrences, and from_json pointed both
    # steps at the second "good"
    from skanchors.samplers import UnkSampler

    def model(texts):
        p = np.array([float(t.split().count("good") >= 2) for t in texts])
        return np.column_stack([1 - p, p])

    reference = ["good good", "good bad", "bad", "good"] * 5
    explainer = AnchorExplainer(model, sampler=UnkSampler(), random_state=0).fit(reference)
    rule = explainer.explain(["good bad good"])[0]
    assert rule.words == ["good", "good"] and [p.position for p in rule.predicates] == [0, 2]
    assert rule.coverage == 0.25
    docs = ["good bad", "good good", "bad", "good x good"]
    assert rule.covers(docs).tolist() == [False, True, False, True]
    assert rule.check(docs, model(docs).argmax(axis=1)).precision == 1.0
    back = Anchor.from_json(rule.to_json())
    assert [s.predicates for s in back.steps] == [s.predicates for s in rule.steps]


def test_why_a_rule_is_not_an_anchor_names_its_distribution():
    rule = (Predicate("x0", ">", 0.7, 0),)
    kinds = {
        None: "not confirmed on fresh samples",
        "replace": "not confirmed on fresh samples",
        "reference": "12 samples cannot show precision >= threshold",
    }
    for perturbation, why in kinds.items():
        anchor = Anchor(rule, 1, 0.97, 0.1, False, 0.95, n_samples=12, perturbation=perturbation)
        assert str(anchor).endswith(f"[NOT AN ANCHOR: {why}]")
    low = Anchor(rule, 1, 0.9, 0.1, False, 0.95, n_samples=500, perturbation="replace")
    assert str(low).endswith("[NOT AN ANCHOR: precision below threshold]")
