"""Reading anchors and LIME explanations back from JSON: hostile or broken input (issue 48).

A catalogue of bad inputs, one case each, every one of which must raise a ValueError naming
the field; what the readers must accept (every anchor and explanation the package makes, of
every modality and sampler); and property-based tests: random JSON put anywhere into a valid
anchor either loads into an anchor that round-trips or raises ValueError, nothing else.
"""

import copy
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tabular import PlantedModel, planted_data, row

from skanchors import AnchorExplainer, LimeExplainer, LimeExplanation, NoAnchorWarning
from skanchors._explanation import Anchor, Predicate, Step
from skanchors.discretizers import EdgesDiscretizer
from skanchors.samplers import CorpusSampler, TabularSampler, UnkSampler

DOCS = [
    "a good movie with a good cast",
    "a bad plot and bad acting",
    "good fun from start to end",
    "boring , slow and bad",
    "the best film of the year",
    "not good , not bad",
] * 5


def _words_model(texts):
    p = np.array([float("good" in t.split() or "best" in t.split()) for t in texts])
    return np.column_stack([1 - p, p])


def _explain(explainer, X, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        return explainer.explain(X, **kwargs)


@pytest.fixture(scope="module")
def anchors():
    """Real anchors of every kind, by name."""
    data = planted_data(n=1000)
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    rows = pd.concat([row(0.9, "red"), row(0.9, "blue"), row(0.1, "red")], ignore_index=True)
    out = {}
    for perturbation in ("replace", "reference", "auto"):
        explainer = AnchorExplainer(
            PlantedModel(),
            sampler=TabularSampler(discretizer=disc, perturbation=perturbation),
            random_state=0,
        ).fit(data)
        for i, a in enumerate(_explain(explainer, rows)):
            out[f"{perturbation}-{i}"] = a
        # not an anchor: class 1 for a blue row
        out[f"{perturbation}-not"] = _explain(explainer, rows.iloc[[1]], y=[1])[0]
    explainer = AnchorExplainer(
        PlantedModel(),
        sampler=TabularSampler(bounds="interval", discretizer="decile"),
        balance=True,
        random_state=0,
    ).fit(data)
    for i, a in enumerate(_explain(explainer, rows)):
        out[f"interval-balanced-{i}"] = a
    # bounds="all": a step may hold "c > 0.30" that a narrower "c > 0.60" replaced later
    uniform = pd.DataFrame(
        np.random.default_rng(0).uniform(size=(1000, 3)), columns=["a", "b", "c"]
    )

    def either(Z):
        Z = pd.DataFrame(Z)
        p = ((Z["a"] > 0.85) | ((Z["a"] > 0.3) & (Z["b"] > 0.6))).to_numpy(float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(
        either,
        sampler=TabularSampler(bounds="all", discretizer="decile"),
        beam_size=1,
        random_state=0,
    ).fit(uniform)
    for i in (4, 15):
        out[f"all-{i}"] = _explain(explainer, uniform.iloc[[i]])[0]
    numbers = data[["x0", "x1", "x3"]]

    def regressor(X):
        X = pd.DataFrame(X, columns=numbers.columns)
        return np.where(X["x0"] > 0.5, 10.0, 0.0) + X["x1"]

    explainer = AnchorExplainer(
        regressor, mode="regression", sampler=TabularSampler(discretizer="quartile"), random_state=0
    ).fit(numbers)
    for i, a in enumerate(_explain(explainer, numbers.iloc[:2])):
        out[f"regression-{i}"] = a
    for name, sampler in (("unk", UnkSampler()), ("corpus", CorpusSampler())):
        explainer = AnchorExplainer(_words_model, sampler=sampler, random_state=0).fit(DOCS)
        for i, a in enumerate(_explain(explainer, DOCS[:3])):
            out[f"{name}-{i}"] = a
        out[f"{name}-not"] = _explain(explainer, DOCS[:1], y=[0])[0]
    return out


@pytest.fixture(scope="module")
def lime_explanations():
    data = planted_data(n=500)
    table = LimeExplainer(PlantedModel(), n_samples=200, random_state=0).fit(data)
    text = LimeExplainer(_words_model, n_samples=200, random_state=0).fit(DOCS)
    return [*table.explain(data.iloc[:2]), *text.explain(DOCS[:2])]


def _round_trips(anchor):
    """``from_dict(to_dict())`` and ``from_json(to_json())`` give the anchor back, field for
    field, and it displays."""
    data = anchor.to_dict()
    for back in (Anchor.from_dict(data), Anchor.from_json(anchor.to_json())):
        assert back == anchor
        assert back.to_dict() == data
        assert str(back) == str(anchor) and back._repr_html_()


# ---------------------------------------------------------------- what must be read back
def test_every_kind_of_anchor_round_trips(anchors):
    kinds = {
        (a.perturbation, a.tolerance is None, a.is_anchor, a.predicates[0].op if a else None)
        for a in anchors.values()
    }
    # what the fixture is meant to cover is there
    assert {k[0] for k in kinds} == {"replace", "reference", None}
    assert {k[2] for k in kinds} == {True, False} and (None, True, False, "contains") in kinds
    assert any(not k[1] for k in kinds)  # regression
    assert any(k[3] == "in" for k in kinds)  # bounds="interval"
    assert any(
        "full" in s for a in anchors.values() for s in a.to_dict()["steps"]
    )  # bounds="all": a step holding a predicate a narrower one replaced
    for name, anchor in anchors.items():
        assert anchor.to_dict()["version"] == 1, name
        _round_trips(anchor)


def test_a_masked_lm_anchor_round_trips(hf):
    from hf_models import CORPUS

    from skanchors.samplers import MaskedLMSampler

    sampler = MaskedLMSampler(hf["bert_mlm"], top_k=5, batch_size=16)
    explainer = AnchorExplainer(_words_model, sampler=sampler, batch_size=20, random_state=0).fit(
        CORPUS
    )
    (anchor,) = _explain(explainer, ["the movie was good and the acting was great"])
    assert anchor.predicates and anchor.predicates[0].op == "contains"
    _round_trips(anchor)


def test_every_lime_explanation_round_trips(lime_explanations):
    for exp in lime_explanations:
        for back in (
            LimeExplanation.from_dict(exp.to_dict()),
            LimeExplanation.from_json(exp.to_json()),
        ):
            assert back == exp and back.to_dict() == exp.to_dict()


def test_what_an_anchor_may_hold_is_accepted():
    # a rule of the user's own: infinite bounds, an interval category, a decimal, a tuple
    # column name, no estimates (NaN), counts written as floats, no version (older files)
    import decimal

    preds = (
        Predicate("age", "<=", math.inf, 0),
        Predicate("fare", ">", -math.inf, 1),
        Predicate("band", "==", pd.Interval(-math.inf, 0.0, closed="left"), 2),
        Predicate(("price", "v"), "==", decimal.Decimal("9.99"), 3),
        Predicate("bin", "in", pd.Interval(1, 2, closed="right"), None),
        Predicate("x", "isna", None, 4),
    )
    rule = Anchor(preds, "yes", math.nan, 0.5, False, 0.95, steps=[Step(preds[:1], math.nan, 0.5)])
    _round_trips(rule)
    text = rule.to_json()
    assert "Infinity" in text and "NaN" not in text
    data = rule.to_dict()
    del data["version"]
    data["n_samples"] = 5.0
    back = Anchor.from_dict(data)
    assert back == rule and back.n_samples == 5 and isinstance(back.n_samples, int)
    # steps written before they had indices name the anchor's predicates by their text
    data["steps"] = [{"predicates": [str(preds[0])], "precision": None, "coverage": 0.5}]
    assert Anchor.from_dict(data).steps[0].predicates == preds[:1]


# --------------------------------------------------------------------------- catalogue
def _tabular():
    p = [
        {"feature": "x0", "op": ">", "value": 0.7, "position": 0},
        {"feature": "colour", "op": "==", "value": "red", "position": 2},
    ]
    return {
        "version": 1,
        "predicates": p,
        "prediction": 1,
        "precision": 0.98,
        "precision_bounds": [0.96, 0.99],
        "coverage": 0.1,
        "coverage_perturbation": 0.1,
        "is_anchor": True,
        "threshold": 0.95,
        "n_samples": 500,
        "steps": [
            {"predicates": ["x0 > 0.7"], "indices": [0], "precision": 0.5, "coverage": 0.3},
            {
                "predicates": ["x0 > 0.7", "colour = red"],
                "indices": [0, 1],
                "precision": 0.98,
                "coverage": 0.1,
            },
        ],
        "n_model_calls": 3,
        "n_rows_predicted": 700,
        "wall_time": 0.05,
        "tolerance": None,
        "perturbation": "replace",
    }


def _text():
    data = _tabular()
    data["predicates"] = [{"feature": "good", "op": "contains", "value": "good", "position": 1}]
    data["steps"] = [{"predicates": ["good"], "indices": [0], "precision": 0.98, "coverage": 0.2}]
    data["perturbation"] = None
    return data


def _regression():
    data = _tabular()
    data["prediction"], data["tolerance"] = 12.5, 0.8
    return data


def _at(data, path):
    for key in path:
        data = data[key]
    return data


def _set(path, value):
    """A change: ``path`` (keys and positions from the top) set to ``value``. Changes return
    the changed data."""

    def change(data):
        _at(data, path[:-1])[path[-1]] = value
        return data

    return change


def _drop(path):
    def change(data):
        del _at(data, path[:-1])[path[-1]]
        return data

    return change


def _append(path, value):
    def change(data):
        _at(data, path).append(value)
        return data

    return change


def _chain(*changes):
    def change(data):
        for c in changes:
            data = c(data)
        return data

    return change


def _whole(value):
    """A change that puts ``value`` in place of the whole dict."""
    return lambda data: value


P0, P1 = ("predicates", 0), ("predicates", 1)
S0 = ("steps", 0)
NAN, INF = math.nan, math.inf
DEEP = {"tuple": ["x"]}
for _ in range(40):
    DEEP = {"tuple": [DEEP]}
NESTED = []  # a list nested deeper than repr() can go
for _ in range(100_000):
    NESTED = [NESTED]
HUGE = 10**5000  # (an int of more than 4,300 digits has no repr)

# (case id, base, change, the field the error must name)
ANCHOR_CASES = [
    ("top-level-list", _tabular, _whole([_tabular()]), "data must be a dict"),
    ("top-level-null", _tabular, _whole(None), "data must be a dict"),
    ("top-level-str", _tabular, _whole(json.dumps(_tabular())), "data must be a dict"),
    # the version of the format
    ("version-2", _tabular, _set(("version",), 2), r"data\['version'\] is 2"),
    ("version-str", _tabular, _set(("version",), "1"), r"data\['version'\]"),
    ("version-bool", _tabular, _set(("version",), True), r"data\['version'\]"),
    ("version-float", _tabular, _set(("version",), 1.5), r"data\['version'\]"),
    ("version-null", _tabular, _set(("version",), None), r"data\['version'\]"),
    # keys
    *[
        (f"missing-{k}", _tabular, _drop((k,)), rf"lacks \['{k}'\]")
        for k in ("predicates", "prediction", "precision", "coverage", "is_anchor", "threshold")
    ],
    ("unknown-key", _tabular, _set(("tolerence",), 0.5), r"unknown keys \['tolerence'\]"),
    # precision
    ("precision-7.5", _tabular, _set(("precision",), 7.5), r"data\['precision'\]"),
    ("precision-negative", _tabular, _set(("precision",), -0.1), r"data\['precision'\]"),
    ("precision-inf", _tabular, _set(("precision",), INF), r"data\['precision'\]"),
    ("precision-nan", _tabular, _set(("precision",), NAN), r"data\['precision'\]"),
    ("precision-str", _tabular, _set(("precision",), "0.98"), r"data\['precision'\]"),
    ("precision-bool", _tabular, _set(("precision",), True), r"data\['precision'\]"),
    ("precision-list", _tabular, _set(("precision",), [0.98]), r"data\['precision'\]"),
    ("precision-dict", _tabular, _set(("precision",), {"p": 1}), r"data\['precision'\]"),
    ("precision-huge-int", _tabular, _set(("precision",), HUGE), r"data\['precision'\]"),
    ("precision-nested", _tabular, _set(("precision",), NESTED), r"data\['precision'\]"),
    ("anchor-below-threshold", _tabular, _set(("precision",), 0.5), r"data\['is_anchor'\]"),
    ("anchor-without-precision", _tabular, _set(("precision",), None), r"data\['is_anchor'\]"),
    # coverage
    ("coverage-negative", _tabular, _set(("coverage",), -1), r"data\['coverage'\]"),
    ("coverage-1.5", _tabular, _set(("coverage",), 1.5), r"data\['coverage'\]"),
    ("coverage-null", _tabular, _set(("coverage",), None), r"data\['coverage'\]"),
    ("coverage-nan", _tabular, _set(("coverage",), NAN), r"data\['coverage'\]"),
    ("coverage-list", _tabular, _set(("coverage",), []), r"data\['coverage'\]"),
    ("cov-perturbation-2", _tabular, _set(("coverage_perturbation",), 2.0), "coverage_pert"),
    ("cov-perturbation-str", _tabular, _set(("coverage_perturbation",), "x"), "coverage_pert"),
    ("cov-perturbation-nan", _tabular, _set(("coverage_perturbation",), NAN), "coverage_pert"),
    # threshold
    ("threshold-2", _tabular, _set(("threshold",), 2), r"data\['threshold'\]"),
    ("threshold-0", _tabular, _set(("threshold",), 0), r"data\['threshold'\]"),
    ("threshold-negative", _tabular, _set(("threshold",), -0.5), r"data\['threshold'\]"),
    ("threshold-null", _tabular, _set(("threshold",), None), r"data\['threshold'\]"),
    ("threshold-nan", _tabular, _set(("threshold",), NAN), r"data\['threshold'\]"),
    ("threshold-inf", _tabular, _set(("threshold",), INF), r"data\['threshold'\]"),
    ("threshold-str", _tabular, _set(("threshold",), "0.95"), r"data\['threshold'\]"),
    # confidence bounds
    ("bounds-one", _tabular, _set(("precision_bounds",), [0.5]), "precision_bounds"),
    ("bounds-three", _tabular, _set(("precision_bounds",), [0.1, 0.5, 0.9]), "precision_bounds"),
    ("bounds-reversed", _tabular, _set(("precision_bounds",), [0.99, 0.96]), "precision_bounds"),
    ("bounds-half-null", _tabular, _set(("precision_bounds",), [0.96, None]), "precision_bounds"),
    ("bounds-negative", _tabular, _set(("precision_bounds",), [-1, 1]), "precision_bounds"),
    ("bounds-above-1", _tabular, _set(("precision_bounds",), [0.9, 2]), "precision_bounds"),
    ("bounds-miss-precision", _tabular, _set(("precision_bounds",), [0.1, 0.5]), "precision_bo"),
    ("bounds-str", _tabular, _set(("precision_bounds",), "0.9, 1"), "precision_bounds"),
    ("bounds-null", _tabular, _set(("precision_bounds",), None), "precision_bounds"),
    ("bounds-dict", _tabular, _set(("precision_bounds",), {"low": 0.9}), "precision_bounds"),
    ("bounds-nested", _tabular, _set(("precision_bounds",), [[0.9], 1]), "precision_bounds"),
    # is_anchor
    ("is-anchor-str", _tabular, _set(("is_anchor",), "false"), r"data\['is_anchor'\]"),
    ("is-anchor-int", _tabular, _set(("is_anchor",), 1), r"data\['is_anchor'\]"),
    ("is-anchor-null", _tabular, _set(("is_anchor",), None), r"data\['is_anchor'\]"),
    # counts
    ("n-samples-negative", _tabular, _set(("n_samples",), -5), r"data\['n_samples'\]"),
    ("n-samples-2.5", _tabular, _set(("n_samples",), 2.5), r"data\['n_samples'\]"),
    ("n-samples-bool", _tabular, _set(("n_samples",), True), r"data\['n_samples'\]"),
    ("n-samples-str", _tabular, _set(("n_samples",), "10"), r"data\['n_samples'\]"),
    ("n-samples-null", _tabular, _set(("n_samples",), None), r"data\['n_samples'\]"),
    ("n-samples-inf", _tabular, _set(("n_samples",), INF), r"data\['n_samples'\]"),
    ("n-samples-nan", _tabular, _set(("n_samples",), NAN), r"data\['n_samples'\]"),
    ("n-samples-huge", _tabular, _set(("n_samples",), 2**70), r"data\['n_samples'\]"),
    ("n-samples-huge-int", _tabular, _set(("n_samples",), HUGE), r"data\['n_samples'\]"),
    ("n-calls-negative", _tabular, _set(("n_model_calls",), -1), r"data\['n_model_calls'\]"),
    ("n-calls-list", _tabular, _set(("n_model_calls",), [1]), r"data\['n_model_calls'\]"),
    ("n-rows-float", _tabular, _set(("n_rows_predicted",), 0.5), r"data\['n_rows_predicted'\]"),
    ("n-rows-dict", _tabular, _set(("n_rows_predicted",), {}), r"data\['n_rows_predicted'\]"),
    # wall time
    ("wall-time-negative", _tabular, _set(("wall_time",), -1), r"data\['wall_time'\]"),
    ("wall-time-str", _tabular, _set(("wall_time",), "fast"), r"data\['wall_time'\]"),
    ("wall-time-null", _tabular, _set(("wall_time",), None), r"data\['wall_time'\]"),
    ("wall-time-inf", _tabular, _set(("wall_time",), INF), r"data\['wall_time'\]"),
    # regression
    ("tolerance-0", _regression, _set(("tolerance",), 0), r"data\['tolerance'\]"),
    ("tolerance-negative", _regression, _set(("tolerance",), -1.0), r"data\['tolerance'\]"),
    ("tolerance-str", _regression, _set(("tolerance",), "1"), r"data\['tolerance'\]"),
    ("tolerance-inf", _regression, _set(("tolerance",), INF), r"data\['tolerance'\]"),
    ("tolerance-nan", _regression, _set(("tolerance",), NAN), r"data\['tolerance'\]"),
    ("tolerance-bool", _regression, _set(("tolerance",), True), r"data\['tolerance'\]"),
    ("regression-label", _regression, _set(("prediction",), "high"), r"data\['prediction'\]"),
    ("regression-null", _regression, _set(("prediction",), None), r"data\['prediction'\]"),
    ("regression-inf", _regression, _set(("prediction",), INF), r"data\['prediction'\]"),
    ("regression-list", _regression, _set(("prediction",), [1.0]), r"data\['prediction'\]"),
    # class label
    ("label-null", _tabular, _set(("prediction",), None), r"data\['prediction'\]"),
    ("label-list", _tabular, _set(("prediction",), [1]), r"data\['prediction'\]"),
    ("label-dict", _tabular, _set(("prediction",), {"a": 1}), r"data\['prediction'\]"),
    ("label-nan", _tabular, _set(("prediction",), NAN), r"data\['prediction'\]"),
    ("label-inf", _tabular, _set(("prediction",), INF), r"data\['prediction'\]"),
    ("label-int-huge", _tabular, _set(("prediction",), 2**80), r"data\['prediction'\]"),
    ("label-nested", _tabular, _set(("prediction",), NESTED), r"data\['prediction'\]"),
    # perturbation
    ("perturbation-other", _tabular, _set(("perturbation",), "sometimes"), "perturbation"),
    ("perturbation-int", _tabular, _set(("perturbation",), 1), "perturbation"),
    ("perturbation-list", _tabular, _set(("perturbation",), ["replace"]), "perturbation"),
    ("perturbation-dict", _tabular, _set(("perturbation",), {}), "perturbation"),
    # predicates
    ("predicates-null", _tabular, _set(("predicates",), None), r"data\['predicates'\]"),
    ("predicates-str", _tabular, _set(("predicates",), "x0 > 0.7"), r"data\['predicates'\]"),
    ("predicates-dict", _tabular, _set(("predicates",), {"0": {}}), r"data\['predicates'\]"),
    ("predicate-int", _tabular, _set(P0, 1), r"data\['predicates'\]\[0\]"),
    ("predicate-null", _tabular, _set(P0, None), r"data\['predicates'\]\[0\]"),
    ("predicate-list", _tabular, _set(P0, ["x0", ">", 0.7]), r"data\['predicates'\]\[0\]"),
    ("predicate-no-op", _tabular, _drop((*P0, "op")), r"data\['predicates'\]\[0\]"),
    ("predicate-no-feature", _tabular, _drop((*P0, "feature")), r"data\['predicates'\]\[0\]"),
    ("predicate-unknown", _tabular, _set((*P0, "column"), "x0"), r"data\['predicates'\]\[0\]"),
    ("op-unknown", _tabular, _set((*P0, "op"), "=~"), r"\[0\]\['op'\]"),
    ("op-int", _tabular, _set((*P0, "op"), 1), r"\[0\]\['op'\]"),
    ("op-list", _tabular, _set((*P0, "op"), [">"]), r"\[0\]\['op'\]"),
    ("op-null", _tabular, _set((*P0, "op"), None), r"\[0\]\['op'\]"),
    ("feature-list", _tabular, _set((*P0, "feature"), ["x0"]), r"\[0\]\['feature'\]"),
    ("feature-dict", _tabular, _set((*P0, "feature"), {"a": 1}), r"\[0\]\['feature'\]"),
    ("feature-nan", _tabular, _set((*P0, "feature"), NAN), r"\[0\]\['feature'\]"),
    ("bound-str", _tabular, _set((*P0, "value"), "high"), r"\[0\]\['value'\]"),
    ("bound-null", _tabular, _set((*P0, "value"), None), r"\[0\]\['value'\]"),
    ("bound-nan", _tabular, _set((*P0, "value"), NAN), r"\[0\]\['value'\]"),
    ("bound-bool", _tabular, _set((*P0, "value"), True), r"\[0\]\['value'\]"),
    ("bound-list", _tabular, _set((*P0, "value"), [0.7]), r"\[0\]\['value'\]"),
    ("bound-missing", _tabular, _drop((*P0, "value")), r"\[0\]\['value'\]"),
    ("value-list", _tabular, _set((*P1, "value"), ["red"]), r"\[1\]\['value'\]"),
    ("value-dict", _tabular, _set((*P1, "value"), {"colour": "red"}), r"\[1\]\['value'\]"),
    ("value-nan", _tabular, _set((*P1, "value"), NAN), r"\[1\]\['value'\]"),
    ("value-decimal-bad", _tabular, _set((*P1, "value"), {"decimal": "abc"}), r"\['decimal'\]"),
    ("value-decimal-int", _tabular, _set((*P1, "value"), {"decimal": 5}), r"\['decimal'\]"),
    ("value-decimal-nan", _tabular, _set((*P1, "value"), {"decimal": "sNaN"}), r"\['decimal'\]"),
    ("value-tuple-str", _tabular, _set((*P1, "value"), {"tuple": "ab"}), r"\['tuple'\]"),
    ("value-tuple-deep", _tabular, _set((*P1, "value"), DEEP), r"\[1\]\['value'\]"),
    (
        "value-interval-1",
        _tabular,
        _set((*P1, "value"), {"interval": [0], "closed": "right"}),
        r"\[1\]\['value'\]\['interval'\]",
    ),
    (
        "value-interval-reversed",
        _tabular,
        _set((*P1, "value"), {"interval": [1, 0], "closed": "right"}),
        r"\['interval'\]",
    ),
    (
        "value-interval-str",
        _tabular,
        _set((*P1, "value"), {"interval": [0, "a"], "closed": "right"}),
        r"\['interval'\]\[1\]",
    ),
    (
        "value-interval-closed",
        _tabular,
        _set((*P1, "value"), {"interval": [0, 1], "closed": "sideways"}),
        r"\['closed'\]",
    ),
    (
        "in-not-interval",
        _tabular,
        _set(P0, {"feature": "x0", "op": "in", "value": 0.5}),
        r"\[0\]\['value'\]",
    ),
    (
        "in-left-closed",
        _tabular,
        _set(P0, {"feature": "x0", "op": "in", "value": {"interval": [0, 1], "closed": "left"}}),
        r"\[0\]\['value'\]",
    ),
    (
        "isna-value",
        _tabular,
        _set(P0, {"feature": "x0", "op": "isna", "value": 0}),
        r"\[0\]\['value'\]",
    ),
    ("position-negative", _tabular, _set((*P0, "position"), -1), r"\[0\]\['position'\]"),
    ("position-float", _tabular, _set((*P0, "position"), 1.5), r"\[0\]\['position'\]"),
    ("position-str", _tabular, _set((*P0, "position"), "0"), r"\[0\]\['position'\]"),
    ("position-bool", _tabular, _set((*P0, "position"), True), r"\[0\]\['position'\]"),
    ("word-int", _text, _set((*P0, "value"), 5), r"\[0\]\['value'\]"),
    ("word-empty", _text, _set(P0, {"feature": "", "op": "contains", "value": ""}), r"\['value'\]"),
    ("word-not-feature", _text, _set((*P0, "value"), "bad"), r"\[0\]\['feature'\]"),
    (
        "words-and-columns",
        _text,
        _append(("predicates",), {"feature": "x0", "op": ">", "value": 0.7}),
        "mixes word",
    ),
    # steps
    ("steps-null", _tabular, _set(("steps",), None), r"data\['steps'\]"),
    ("steps-str", _tabular, _set(("steps",), "x0 > 0.7"), r"data\['steps'\]"),
    ("step-int", _tabular, _set(S0, 1), r"data\['steps'\]\[0\]"),
    ("step-empty", _tabular, _set(S0, {}), r"data\['steps'\]\[0\]"),
    ("step-unknown-key", _tabular, _set((*S0, "extra"), 1), r"data\['steps'\]\[0\]"),
    ("step-index-out", _tabular, _set((*S0, "indices"), [5]), r"\[0\]\['indices'\]\[0\]"),
    ("step-index-negative", _tabular, _set((*S0, "indices"), [-1]), r"\['indices'\]\[0\]"),
    ("step-index-str", _tabular, _set((*S0, "indices"), ["0"]), r"\['indices'\]\[0\]"),
    ("step-index-bool", _tabular, _set((*S0, "indices"), [True]), r"\['indices'\]\[0\]"),
    ("step-index-float", _tabular, _set((*S0, "indices"), [0.5]), r"\['indices'\]\[0\]"),
    ("step-indices-int", _tabular, _set((*S0, "indices"), 0), r"\[0\]\['indices'\]"),
    ("step-indices-and-full", _tabular, _set((*S0, "full"), []), r"data\['steps'\]\[0\]"),
    (
        "step-full-bad",
        _tabular,
        _chain(_drop((*S0, "indices")), _set((*S0, "full"), [{"feature": "x0", "op": "<"}])),
        r"\[0\]\['full'\]\[0\]",
    ),
    ("step-printed-count", _tabular, _set((*S0, "predicates"), []), r"\[0\]\['predicates'\]"),
    ("step-printed-int", _tabular, _set((*S0, "predicates"), [1]), r"\['predicates'\]\[0\]"),
    ("step-printed-null", _tabular, _set((*S0, "predicates"), None), r"\[0\]\['predicates'\]"),
    (
        "step-old-unknown",
        _tabular,
        _chain(_drop((*S0, "indices")), _set((*S0, "predicates"), ["x9 > 1"])),
        r"\['predicates'\]\[0\]",
    ),
    ("step-precision-1.5", _tabular, _set((*S0, "precision"), 1.5), r"\[0\]\['precision'\]"),
    ("step-precision-str", _tabular, _set((*S0, "precision"), "x"), r"\[0\]\['precision'\]"),
    ("step-coverage-null", _tabular, _set((*S0, "coverage"), None), r"\[0\]\['coverage'\]"),
    ("step-coverage-nan", _tabular, _set((*S0, "coverage"), NAN), r"\[0\]\['coverage'\]"),
]

# (case id, JSON text, what the error must name): from_json
JSON_CASES = [
    ("not-json", "IF x0 > 0.7 THEN PREDICT 1", "text must be the JSON"),
    ("empty", "", "text must be the JSON"),
    ("truncated", json.dumps(_tabular())[:-10], "text must be the JSON"),
    ("not-utf8", b"\xff\xfe{", "text must be the JSON"),
    ("deeply-nested", "[" * 100_000 + "]" * 100_000, "text must be the JSON"),
    ("not-text", None, "text must be the JSON"),
    ("not-text-dict", _tabular(), "text must be the JSON"),
    ("top-level-list", "[1, 2]", "data must be a dict"),
    ("top-level-null", "null", "data must be a dict"),
    ("top-level-number", "7.5", "data must be a dict"),
    (
        "nan-token",
        json.dumps(_tabular()).replace('"precision": 0.98', '"precision": NaN'),
        r"data\['precision'\]",
    ),
    (
        "inf-token",
        json.dumps(_tabular()).replace('"threshold": 0.95', '"threshold": Infinity'),
        r"data\['threshold'\]",
    ),
    (
        "1e999",
        json.dumps(_tabular()).replace('"precision": 0.98', '"precision": 1e999'),
        r"data\['precision'\]",
    ),
    (
        "huge-integer",
        json.dumps(_tabular()).replace('"n_samples": 500', '"n_samples": ' + "9" * 5000),
        "text must be the JSON",
    ),
    (
        "nan-bound",
        json.dumps(_tabular()).replace('"value": 0.7', '"value": NaN'),
        r"\[0\]\['value'\]",
    ),
]


def _lime():
    pred = {"feature": "good", "op": "contains", "value": "good", "position": 1}
    other = {"feature": "movie", "op": "contains", "value": "movie", "position": 2}
    return {
        "features": [[pred], [other]],
        "weights": [0.4, 0.0],
        "selected": [0],
        "intercept": 0.2,
        "score": 0.8,
        "prediction": "pos",
        "class_probability": 0.7,
        "local_prediction": 0.6,
        "kernel_width": 35.0,
        "feature_selection": "forward_selection",
        "n_samples": 200,
        "n_model_calls": 1,
        "n_rows_predicted": 201,
        "wall_time": 0.01,
    }


LIME_CASES = [
    ("not-dict", _whole([1, 2]), r"data must be a dict"),
    ("missing-weights", _drop(("weights",)), r"lacks \['weights'\]"),
    ("unknown-key", _set(("weigths",), []), r"unknown keys \['weigths'\]"),
    ("version-2", _set(("version",), 2), r"data\['version'\]"),
    ("features-null", _set(("features",), None), r"data\['features'\]"),
    ("feature-empty", _set(("features", 1), []), r"data\['features'\]\[1\]"),
    ("feature-str", _set(("features", 1), "movie"), r"data\['features'\]\[1\]"),
    ("feature-bad-predicate", _set(("features", 1, 0), {"op": "contains"}), r"\[1\]\[0\]"),
    (
        "features-mixed",
        _set(("features", 1, 0), {"feature": "x", "op": ">", "value": 1}),
        "mixes words",
    ),
    ("weights-short", _set(("weights",), [0.4]), r"data\['weights'\]"),
    ("weights-str", _set(("weights",), "0.4"), r"data\['weights'\]"),
    ("weight-nan", _set(("weights", 0), NAN), r"data\['weights'\]\[0\]"),
    ("weight-inf", _set(("weights", 0), INF), r"data\['weights'\]\[0\]"),
    ("weight-null", _set(("weights", 0), None), r"data\['weights'\]\[0\]"),
    ("weight-str", _set(("weights", 0), "big"), r"data\['weights'\]\[0\]"),
    ("weight-not-selected", _set(("weights", 1), 0.3), r"data\['weights'\]\[1\]"),
    ("selected-out", _set(("selected",), [5]), r"data\['selected'\]\[0\]"),
    ("selected-negative", _set(("selected",), [-1]), r"data\['selected'\]\[0\]"),
    ("selected-repeated", _set(("selected",), [0, 0]), r"data\['selected'\]"),
    ("selected-bool", _set(("selected",), [True]), r"data\['selected'\]\[0\]"),
    ("selected-int", _set(("selected",), 0), r"data\['selected'\]"),
    ("intercept-nan", _set(("intercept",), NAN), r"data\['intercept'\]"),
    ("intercept-str", _set(("intercept",), "0.2"), r"data\['intercept'\]"),
    ("score-above-1", _set(("score",), 1.5), r"data\['score'\]"),
    ("score-inf", _set(("score",), -INF), r"data\['score'\]"),
    ("class-probability-nan", _set(("class_probability",), NAN), r"data\['class_probability'\]"),
    ("class-probability-list", _set(("class_probability",), [0.7]), "class_probability"),
    ("local-prediction-inf", _set(("local_prediction",), INF), r"data\['local_prediction'\]"),
    ("kernel-width-0", _set(("kernel_width",), 0), r"data\['kernel_width'\]"),
    ("kernel-width-negative", _set(("kernel_width",), -1), r"data\['kernel_width'\]"),
    ("kernel-width-str", _set(("kernel_width",), "wide"), r"data\['kernel_width'\]"),
    ("feature-selection-other", _set(("feature_selection",), "magic"), "feature_selection"),
    ("feature-selection-int", _set(("feature_selection",), 1), "feature_selection"),
    ("prediction-null", _set(("prediction",), None), r"data\['prediction'\]"),
    ("prediction-list", _set(("prediction",), ["pos"]), r"data\['prediction'\]"),
    ("n-samples-negative", _set(("n_samples",), -1), r"data\['n_samples'\]"),
    ("n-samples-float", _set(("n_samples",), 2.5), r"data\['n_samples'\]"),
    ("wall-time-negative", _set(("wall_time",), -1.0), r"data\['wall_time'\]"),
]


def _catalogue_ids(cases):
    return [case[0] for case in cases]


@pytest.mark.parametrize("case", ANCHOR_CASES, ids=_catalogue_ids(ANCHOR_CASES))
def test_a_bad_anchor_dict_raises_a_value_error_naming_the_field(case):
    _, base, change, field = case
    data = base()
    Anchor.from_dict(copy.deepcopy(data))  # the base itself is valid
    data = change(data)
    with pytest.raises(ValueError, match=field):
        Anchor.from_dict(data)


@pytest.mark.parametrize("case", JSON_CASES, ids=_catalogue_ids(JSON_CASES))
def test_bad_anchor_json_raises_a_value_error_naming_the_field(case):
    _, text, field = case
    with pytest.raises(ValueError, match=field):
        Anchor.from_json(text)


@pytest.mark.parametrize("case", LIME_CASES, ids=_catalogue_ids(LIME_CASES))
def test_a_bad_lime_dict_raises_a_value_error_naming_the_field(case):
    _, change, field = case
    data = _lime()
    LimeExplanation.from_dict(copy.deepcopy(data))
    data = change(data)
    with pytest.raises(ValueError, match=field):
        LimeExplanation.from_dict(data)
    with pytest.raises(ValueError, match=field):
        LimeExplanation.from_json(json.dumps(data))


@pytest.mark.parametrize(
    "text",
    ["LIME", "", None, b"\xff", "[" * 100_000],
    ids=["words", "empty", "none", "not-utf8", "deeply-nested"],
)
def test_lime_json_that_is_not_json_raises_a_value_error(text):
    with pytest.raises(ValueError, match="text must be the JSON of LimeExplanation"):
        LimeExplanation.from_json(text)


def test_a_lime_explanation_of_unknown_width_round_trips():
    # an unknown (NaN) width is written as null, so the JSON is strict: no NaN token
    data = _lime()
    data["kernel_width"] = NAN
    exp = LimeExplanation.from_dict(data)
    assert math.isnan(exp.kernel_width)
    assert exp.to_dict()["kernel_width"] is None and exp.to_dict()["version"] == 1
    text = exp.to_json()
    json.loads(text, parse_constant=lambda token: pytest.fail(f"{token} in the JSON"))
    assert LimeExplanation.from_json(text) == exp


# ------------------------------------------------------------------ property-based tests
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
_tagged = st.one_of(
    st.fixed_dictionaries(
        {"interval": st.lists(_json_scalars, max_size=3), "closed": _json_scalars}
    ),
    st.fixed_dictionaries({"decimal": st.text(max_size=8) | _json_scalars}),
    st.fixed_dictionaries({"tuple": st.lists(_json_scalars, max_size=3)}),
)
json_values = st.recursive(
    _json_scalars | _tagged,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


def _paths(value, path=()):
    """Every place in a JSON value: keys of objects and positions of arrays."""
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


def _bases():
    bases = [_tabular(), _text(), _regression()]
    bounded = _tabular()
    bounded["predicates"][0] = {
        "feature": "x0",
        "op": "in",
        "value": {"interval": [0.7, 1.0], "closed": "right"},
        "position": 0,
    }
    bounded["steps"][0] = {
        "predicates": ["x0 > 0.5"],
        "full": [{"feature": "x0", "op": ">", "value": 0.5, "position": 0}],
        "precision": None,
        "coverage": 0.4,
    }
    bounded.update(is_anchor=False, precision=None, precision_bounds=[None, None])
    return [*bases, bounded]


_BASES = _bases()


def _loads_or_refuses(data):
    """``Anchor.from_dict(data)`` raises ValueError, or gives an anchor that round-trips."""
    try:
        anchor = Anchor.from_dict(data)
    except ValueError:
        return None
    written = anchor.to_dict()
    for back in (Anchor.from_dict(written), Anchor.from_json(anchor.to_json())):
        assert back == anchor and back.to_dict() == written
        hash(back)
    assert str(anchor) and repr(anchor) and anchor._repr_html_()
    return anchor


def _values_near(base):
    """Random JSON, and values a reader may well accept there: numbers around [0, 1], small
    integers, the ops, and the values found elsewhere in the same dict (swapped in)."""
    found = [_at(base, p) for p in _paths(base)]
    return st.one_of(
        json_values,
        st.floats(-0.5, 1.5) | st.integers(-3, 10),
        st.sampled_from(["==", "<=", ">", "in", "isna", "contains", "right", "reference"]),
        st.sampled_from(found).map(copy.deepcopy),
    )


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.data())
def test_random_json_anywhere_in_an_anchor_loads_or_raises_value_error(data):
    base = copy.deepcopy(data.draw(st.sampled_from(_BASES)))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(list(_paths(base))))
        value = data.draw(_values_near(base))
        base = _set(path, value)(base) if path else value
        if not isinstance(base, dict):
            break
    anchor = _loads_or_refuses(base)
    # the same from JSON text
    try:
        text = json.dumps(base)
    except (TypeError, ValueError):  # (a key that is not a string; an integer too long)
        return
    try:
        again = Anchor.from_json(text)
    except ValueError:
        assert anchor is None
    else:
        assert again == anchor and again.to_dict() == anchor.to_dict()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data())
def test_random_json_anywhere_in_a_lime_explanation_loads_or_raises_value_error(data):
    base = _lime()
    path = data.draw(st.sampled_from(list(_paths(base))))
    value = data.draw(_values_near(base))
    base = _set(path, value)(base) if path else value
    try:
        exp = LimeExplanation.from_dict(base)
    except ValueError:
        return
    written = exp.to_dict()
    for back in (LimeExplanation.from_dict(written), LimeExplanation.from_json(exp.to_json())):
        assert back == exp and back.to_dict() == written
    assert str(exp) and repr(exp) and exp._repr_html_()


def test_dropping_any_key_loads_or_raises_and_an_unknown_key_raises():
    loaded = 0
    for base in _BASES:
        for path in _paths(base):
            if not (path and isinstance(path[-1], str)):
                continue
            loaded += _loads_or_refuses(_drop(path)(copy.deepcopy(base))) is not None
            added = _set((*path[:-1], "extra"), 1)(copy.deepcopy(base))
            with pytest.raises(ValueError, match="'extra'"):
                Anchor.from_dict(added)
    assert loaded >= 40  # the optional keys (43 of the 4 bases' 104)


_numbers = st.floats(allow_nan=False, allow_infinity=False)
_labels = st.text(max_size=6) | st.integers(-(2**63), 2**64 - 1) | st.booleans() | _numbers
_bounds = st.floats(allow_nan=False)  # infinite bounds are rules too


@st.composite
def column_predicates(draw, position):
    feature = draw(_labels | st.tuples(st.text(max_size=3), st.integers(0, 9)))
    op = draw(st.sampled_from(["==", "<=", ">", "in", "isna"]))
    if op in ("<=", ">"):
        value = draw(_bounds)
    elif op == "in":
        low, high = sorted(draw(st.lists(_bounds, min_size=2, max_size=2)))
        value = pd.Interval(low, high, closed="right")
    elif op == "isna":
        value = None
    else:
        value = draw(_labels)
    return Predicate(feature, op, value, draw(st.none() | st.just(position)))


@st.composite
def anchors_(draw):
    text = draw(st.booleans())
    n = draw(st.integers(0, 4))
    if text:
        words = draw(st.lists(st.text(min_size=1, max_size=6), min_size=n, max_size=n))
        preds = tuple(Predicate(w, "contains", w, i) for i, w in enumerate(words))
    else:
        preds = tuple(draw(column_predicates(i)) for i in range(n))
    unit = st.floats(0, 1)
    threshold = draw(st.floats(0, 1, exclude_min=True))
    is_anchor = draw(st.booleans())
    precision = draw(st.floats(threshold, 1) if is_anchor else unit | st.just(math.nan))
    if math.isnan(precision) or draw(st.booleans()):
        bounds = (math.nan, math.nan)
    else:
        bounds = (draw(st.floats(0, precision)), draw(st.floats(precision, 1)))
    regression = not text and draw(st.booleans())
    steps = [Step(preds[: k + 1], draw(unit | st.just(math.nan)), draw(unit)) for k in range(n)]
    if not text and n and draw(st.booleans()):  # a step holding a predicate replaced later
        steps[0] = Step((draw(column_predicates(0)),), math.nan, draw(unit))
    return Anchor(
        preds,
        draw(_numbers) if regression else draw(_labels),
        precision,
        draw(unit),
        is_anchor,
        threshold,
        precision_bounds=bounds,
        coverage_perturbation=draw(unit | st.just(math.nan)),
        n_samples=draw(st.integers(0, 10**9)),
        steps=steps,
        n_model_calls=draw(st.integers(0, 10**6)),
        n_rows_predicted=draw(st.integers(0, 10**9)),
        wall_time=draw(st.floats(0, 1e6)),
        tolerance=draw(st.floats(0, 1e6, exclude_min=True)) if regression else None,
        perturbation=None if text else draw(st.sampled_from([None, "reference", "replace"])),
    )


@settings(max_examples=200, deadline=None, derandomize=True)
@given(anchors_())
def test_random_valid_anchors_round_trip(anchor):
    written = anchor.to_dict()
    for back in (Anchor.from_dict(written), Anchor.from_json(anchor.to_json())):
        assert back == anchor and back.to_dict() == written
