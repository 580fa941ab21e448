"""Submodular pick of anchors and of LIME explanations (SP-LIME)."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from figures import assert_drawn_inside

from skanchors import SubmodularPick, pick
from skanchors._explanation import Anchor, Predicate
from skanchors.lime import LimeExplainer, LimeExplanation
from skanchors.samplers import UnkSampler
from skanchors.samplers.text import tokenize


def rule(*predicates, prediction=0):
    return Anchor(tuple(predicates), prediction, 1.0, 0.0, True, 0.95)


@pytest.fixture
def three_rules():
    """Ten rows; A covers rows 0-5, B rows 4-8, C rows 6-9."""
    X = pd.DataFrame({"v": np.arange(10.0)})
    rules = [
        rule(Predicate("v", "<=", 5.0), prediction=0),  # A: 6 rows
        rule(Predicate("v", ">", 3.0), Predicate("v", "<=", 8.0), prediction=1),  # B: 5 rows
        rule(Predicate("v", ">", 5.0), prediction=1),  # C: 4 rows
    ]
    return X, rules


def test_anchor_greedy_known_answer(three_rules):
    X, rules = three_rules
    result = pick(rules, X, 3)
    # A first (largest alone); then C adds rows 6-9 (4) while B adds only 6-8 (3).
    assert result.indices_.tolist() == [0, 2, 1]
    np.testing.assert_allclose(result.coverage_curve, [0.6, 1.0, 1.0])
    np.testing.assert_allclose(result.coverage, [0.6, 0.4, 0.5])
    assert result.explanations == [rules[0], rules[2], rules[1]]
    assert result.kind == "anchor" and result.precision is None and len(result) == 3
    assert np.all(np.diff(result.coverage_curve) >= 0)
    assert result.coverage[0] == max(r.covers(X).mean() for r in rules)


def test_anchor_k_is_a_budget(three_rules):
    X, rules = three_rules
    assert pick(rules, X, 1).indices_.tolist() == [0]
    assert pick(rules, X, 10).indices_.tolist() == [0, 2, 1]  # at most all of them


def test_anchor_held_out_precision(three_rules):
    X, rules = three_rules

    def model(df):  # predicts 1 from v >= 5
        p = (np.asarray(df["v"]) >= 5).astype(float)
        return np.column_stack([1 - p, p])

    result = pick(rules, X, 3, model=model)
    # A (class 0) covers 0-5: the model says 0 on 0-4 -> 5/6. C (class 1) covers 6-9 -> 1.
    # B (class 1) covers 4-8: the model says 1 on 5-8 -> 4/5.
    np.testing.assert_allclose(result.precision, [5 / 6, 1.0, 4 / 5])
    text = str(result)
    assert "held-out precision 0.83" in text and text.count("\n") == 3
    html = result._repr_html_()
    assert "held-out precision" in html and "v &lt;= 5.0" in html


def test_anchor_text_documents():
    docs = ["a good movie", "a bad movie", "good fun", "bad plot", "fun fun"]
    rules = [
        rule(Predicate("good", "contains", "good", 1)),
        rule(Predicate("bad", "contains", "bad", 1)),
        rule(Predicate("movie", "contains", "movie", 2), Predicate("a", "contains", "a", 0)),
        rule(Predicate("fun", "contains", "fun", 0)),
    ]
    result = pick(rules, docs, 3)
    covers = np.array([r.covers(docs) for r in rules])  # the per-anchor reference
    best = max(itertools.combinations(range(4), 3), key=lambda s: covers[list(s)].any(axis=0).sum())
    assert covers[result.indices_].any(axis=0).sum() == covers[list(best)].any(axis=0).sum()
    np.testing.assert_allclose(result.coverage, covers[result.indices_].mean(axis=1))
    assert result.coverage_curve[-1] == 1.0


def lime(weights, words, prediction=1):
    """A LIME explanation of a document with these words and weights (0 = not selected)."""
    features = tuple((Predicate(w, "contains", w, i),) for i, w in enumerate(words))
    weights = np.asarray(weights, dtype=float)
    return LimeExplanation(
        features=features,
        weights=weights,
        selected=tuple(np.flatnonzero(weights).tolist()),
        intercept=0.0,
        score=1.0,
        prediction=prediction,
        class_probability=0.9,
        local_prediction=0.9,
    )


def splime_value(W, V):
    importance = np.sqrt(np.abs(W).sum(axis=0))
    return importance[(np.abs(W[list(V)]) > 0).any(axis=0)].sum() / importance.sum()


def test_splime_matches_brute_force():
    words = ["f1", "f2", "f3", "f4", "f5"]
    W = np.array(
        [
            [0.9, 0.8, 0.0, 0.0, 0.0],
            [0.7, 0.0, 0.6, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.5, 0.4],
            [0.8, 0.7, 0.0, 0.0, 0.1],
        ]
    )
    explanations = [lime(row * sign, words) for row, sign in zip(W, [1, -1, 1, 1])]
    result = pick(explanations, None, 2)
    best = max(itertools.combinations(range(4), 2), key=lambda V: splime_value(W, V))
    assert splime_value(W, result.indices_) == pytest.approx(splime_value(W, best))
    assert result.coverage_curve[-1] == pytest.approx(splime_value(W, best))
    assert result.indices_.tolist() == [3, 1]
    assert result.feature_names == words
    np.testing.assert_allclose(result.importance, np.sqrt(W.sum(axis=0)))
    assert np.all(np.diff(result.coverage_curve) >= 0)
    assert "feature importance covered" in str(result)


def test_splime_words_are_merged_across_documents():
    # The same word in two documents is one feature (a column of W), wherever it stands.
    a = lime([0.5, 0.1], ["nice", "day"])
    b = lime([0.0, 0.4, 0.3], ["a", "nice", "film"])
    result = pick([a, b], None, 2)
    assert result.feature_names == ["nice", "day", "film"]
    np.testing.assert_allclose(result.importance**2, [0.9, 0.1, 0.3])


def test_splime_on_real_explanations():
    scores = {"nice": 3.0, "bad": -3.0, "very": 1.0}

    def model(docs):
        s = np.array([sum(scores.get(w, 0.0) for w, _, _ in tokenize(d)) for d in docs])
        p = 1 / (1 + np.exp(-s))
        return np.column_stack([1 - p, p])

    docs = ["a very nice day", "a bad day", "very bad food", "nice food", "a day"]
    explainer = LimeExplainer(
        model, n_samples=200, n_features=2, sampler=UnkSampler(), target_class=1, random_state=0
    ).fit(docs)
    explanations = explainer.explain(docs)
    result = pick(explanations, docs, 2)
    assert isinstance(result, SubmodularPick) and result.kind == "lime"
    covered = {result.feature_names[j] for j in range(len(result.feature_names))}
    assert {"nice", "bad"} <= covered
    top = result.explanations[0].as_list()
    assert {top[0][0], top[1][0]} & {"nice", "bad"}


def test_tabular_anchor_pick_with_explainer():
    from skanchors.explainer import AnchorExplainer

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(size=300), "b": rng.uniform(size=300)})

    def model(df):
        p = (np.asarray(df["a"]) > 0.5).astype(float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(model, random_state=0).fit(X[:200])
    with warnings.catch_warnings():  # rows at the class boundary may have no anchor
        warnings.simplefilter("ignore")
        anchors = explainer.explain(X[200:210])
    held_out = X[200:]
    result = pick(anchors, held_out, 3, model=model)
    predicted = model(held_out).argmax(axis=1)
    for anchor, precision, coverage in zip(result.explanations, result.precision, result.coverage):
        mask = anchor.covers(held_out)
        assert coverage == pytest.approx(mask.mean())
        assert precision == pytest.approx(np.mean(predicted[mask] == anchor.prediction))
    union = np.any([a.covers(held_out) for a in result.explanations], axis=0).mean()
    assert result.coverage_curve[-1] == pytest.approx(union)
    assert result.coverage_curve[0] == max(a.covers(held_out).mean() for a in anchors)


def test_plot(three_rules):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, rules = three_rules
    ax = pick(rules, X, 2, model=lambda df: np.tile([0.5, 0.5], (len(df), 1))).plot()
    assert len(ax.lines) == 2
    assert_drawn_inside(ax.figure)
    plt.close("all")


def test_errors(three_rules):
    X, rules = three_rules
    with pytest.raises(ValueError, match="k must be"):
        pick(rules, X, 0)
    with pytest.raises(ValueError, match="k must be"):
        pick(rules, X, 1.5)
    with pytest.raises(ValueError, match="empty"):
        pick([], X, 2)
    with pytest.raises(TypeError, match="all be Anchor or all be LimeExplanation"):
        pick([rules[0], lime([1.0], ["x"])], X, 1)
    with pytest.raises(ValueError, match="X is required"):
        pick(rules, None, 2)
    with pytest.raises(TypeError, match="single string"):
        pick(rules, "text", 2)


def test_held_out_precision_of_regression_anchors_and_of_predict_only_classifiers():
    from sklearn.svm import LinearSVC
    from sklearn.tree import DecisionTreeRegressor

    from skanchors import AnchorExplainer

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(size=(600, 3)), columns=["a", "b", "c"])
    reg = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, 10.0 * (X["b"] > 0.5))
    explainer = AnchorExplainer(reg, random_state=0, beam_size=1).fit(X)
    result = pick(explainer.explain(X.iloc[:8]), X, k=2, model=reg)
    predicted = reg.predict(X)
    for anchor, precision in zip(result.explanations, result.precision):
        covered = predicted[anchor.covers(X)]
        assert precision == np.mean(np.abs(covered - anchor.prediction) <= anchor.tolerance)
        assert precision >= 0.95
    svc = LinearSVC().fit(X, np.where(X["a"] > 0.5, "hi", "lo"))
    anchors = AnchorExplainer(svc, random_state=0).fit(X).explain(X.iloc[:6])
    result = pick(anchors, X, k=2, model=svc)
    assert all(p >= 0.9 for p in result.precision)
    with pytest.raises(ValueError, match="mix regression and classification"):
        pick([anchors[0], explainer.explain(X.iloc[:1])[0]], X, k=1, model=svc)


def test_text_coverage_counts_a_word_kept_twice():
    # pick compared sets of words: "IF good AND good" covered "good bad", so its coverage
    # curve read 0.75 and its precision 0.67 where the rule covers 0.5 at precision 1
    def model(texts):
        p = np.array([float(t.split().count("good") >= 2) for t in texts])
        return np.column_stack([1 - p, p])

    rule = Anchor(
        (Predicate("good", "contains", "good", 0), Predicate("good", "contains", "good", 2)),
        1, 1.0, 0.25, True, 0.95,
    )  # fmt: skip
    docs = ["good bad", "good good", "bad", "good x good"]
    result = pick([rule], docs, k=1, model=model)
    assert result.coverage_curve.tolist() == [0.5]
    assert result.precision.tolist() == [1.0]
