"""Parameters where they belong (issue 45): the sampler's options on the sampler, the score's
on :func:`skanchors.anchor_scorer` / :func:`skanchors.aggregation.aopc_scorer`, the cache's
size in :func:`skanchors.set_config`, the aggregators' word filter and adaptive threshold on
objects of their own; the old keywords still work for one release, with a FutureWarning that
says where they went."""

import inspect
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

from skanchors import (
    AnchorExplainer,
    GlobalAnchorAggregator,
    GlobalLimeAggregator,
    LimeExplainer,
    NoAnchorWarning,
    anchor_scorer,
    config_context,
    get_config,
)
from skanchors._scoring import AnchorScorer
from skanchors.aggregation import AdaptiveThreshold, WordFilter, aopc_scorer
from skanchors.discretizers import EdgesDiscretizer
from skanchors.samplers import TabularSampler


def planted(X):
    """Class 1 iff x0 > 0.7 and colour == "red"."""
    p = ((X["x0"].to_numpy() > 0.7) & (X["colour"].to_numpy() == "red")).astype(float)
    return np.column_stack([1 - p, p])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 1500
    return pd.DataFrame(
        {
            "x0": rng.uniform(size=n),
            "x1": rng.uniform(size=n),
            "colour": rng.choice(["red", "green", "blue"], size=n),
        }
    )


ROW = pd.DataFrame({"x0": [0.9], "x1": [0.5], "colour": ["red"]})


def _anchor(explainer, data, row=ROW):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        a = explainer.fit(data).explain(row)[0]
    return (tuple(str(p) for p in a.predicates), a.precision, a.n_samples, a.perturbation)


def test_constructors_list_only_the_current_parameters():
    anchor = list(inspect.signature(AnchorExplainer).parameters)
    lime = list(inspect.signature(LimeExplainer).parameters)
    assert len(anchor) == 16 and len(lime) == 11
    moved = {"discretizer", "categorical_features", "perturbation", "bounds", "cache_size"}
    moved |= {"score_rows", "score_threshold", "score_tolerance", "moved"}
    assert not moved & set(anchor) and not moved & set(lime)
    assert set(AnchorExplainer(planted).get_params()) == set(anchor)


@pytest.mark.parametrize(
    "old, new",
    [
        ({"perturbation": "replace"}, TabularSampler(perturbation="replace")),
        (
            {"bounds": "all", "discretizer": "decile"},
            TabularSampler(bounds="all", discretizer="decile"),
        ),
        ({"categorical_features": ["colour"]}, TabularSampler(categorical_features=["colour"])),
    ],
)
def test_old_sampler_keywords_warn_and_build_the_sampler(data, old, new):
    with pytest.warns(
        FutureWarning, match=r"deprecated .* use AnchorExplainer\(\.\.\., sampler=Tab"
    ):
        explainer = AnchorExplainer(planted, random_state=0, **old)
    # the value is in a real parameter: get_params, clone and a grid search see it
    assert explainer.sampler.get_params() == new.get_params()
    copy = clone(explainer)
    assert copy.sampler is not explainer.sampler
    assert copy.sampler.get_params() == new.get_params()
    # and the anchors are those of the new spelling
    current = AnchorExplainer(planted, sampler=new, random_state=0)
    assert _anchor(explainer, data) == _anchor(current, data) == _anchor(copy, data)


def test_an_option_in_both_places_is_refused():
    with pytest.raises(ValueError, match=r"set them on it: sampler=TabularSampler\(bounds='all'\)"):
        AnchorExplainer(planted, sampler=TabularSampler(), bounds="all")


def test_an_unknown_keyword_is_refused_as_python_does():
    with pytest.raises(TypeError, match="unexpected keyword argument 'score_row'"):
        AnchorExplainer(planted, score_row=5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'perturbation'"):
        LimeExplainer(planted, perturbation="replace")


def test_nested_sampler_parameters_are_searchable(data):
    explainer = AnchorExplainer(planted, sampler=TabularSampler(), random_state=0)
    params = explainer.get_params(deep=True)
    for name in ("discretizer", "categorical_features", "perturbation", "bounds"):
        assert f"sampler__{name}" in params
    explainer.set_params(sampler__perturbation="replace", sampler__bounds="all")
    assert explainer.sampler.perturbation == "replace"
    rule, _, _, perturbation = _anchor(explainer, data)
    assert perturbation == "replace"
    # quartile edges (the top one near 0.75): the row's bound at the top edge, and its colour
    top = explainer.sampler_.bin_edges_[0][-1]
    assert 0.7 < top < 0.8
    assert sorted(rule) == ["colour = red", f"x0 > {top:.4g}"]
    edges = EdgesDiscretizer(edges={"x0": [0.7]})
    explainer.set_params(sampler__discretizer=edges, sampler__bounds="interval")
    assert sorted(_anchor(explainer, data)[0]) == ["colour = red", "x0 > 0.7"]
    # without a sampler object there is nothing to set: the error says what to do
    with pytest.raises(ValueError, match=r"sampler is None .* sampler=TabularSampler\(\)"):
        AnchorExplainer(planted).set_params(sampler__bounds="all")
    # setting the sampler and its options at once works
    both = AnchorExplainer(planted).set_params(
        sampler=TabularSampler(), sampler__perturbation="reference"
    )
    assert both.sampler.perturbation == "reference"


def test_grid_search_over_sampler_options_with_anchor_scorer(data):
    # the planted rule needs x0 > 0.7: with bins cut at 0.7 (exact) the anchors are precise
    # on held-out rows and broad; with one cut at 0.2 the rule must also hold colour... and
    # x0 > 0.2 alone is wrong for most red rows: it is not an anchor
    grid = {
        "sampler__discretizer": [
            EdgesDiscretizer(edges={"x0": [0.2]}),
            EdgesDiscretizer(edges={"x0": [0.7]}),
        ]
    }
    search = GridSearchCV(
        AnchorExplainer(planted, sampler=TabularSampler(), random_state=0),
        grid,
        scoring=anchor_scorer(rows=10),
        cv=2,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        search.fit(data.iloc[:600])
    coarse, exact = search.cv_results_["mean_test_score"]
    assert exact > coarse
    assert search.best_params_["sampler__discretizer"].edges == {"x0": [0.7]}
    assert search.best_estimator_.sampler_.bin_edges_[0].tolist() == [0.7]


def test_anchor_scorer_is_the_default_score_and_a_cross_val_scorer(data):
    explainer = AnchorExplainer(planted, random_state=0).fit(data.iloc[:600])
    held_out = data.iloc[600:700]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        assert explainer.score(held_out) == anchor_scorer()(explainer, held_out)
        strict = anchor_scorer(rows=5, threshold=1.0)(explainer, held_out)
        assert 0.0 <= strict <= 1.0
        scores = cross_val_score(
            AnchorExplainer(planted, random_state=0),
            data.iloc[:400],
            scoring=anchor_scorer(rows=5),
            cv=2,
        )
    assert scores.shape == (2,) and np.all((scores > 0) & (scores <= 1))
    assert repr(anchor_scorer(rows=5)) == "anchor_scorer(rows=5, threshold=0.95, tolerance=0.25)"
    assert anchor_scorer(rows=5) == anchor_scorer(rows=5) != anchor_scorer(rows=6)


def test_old_score_keywords_warn_and_keep_scoring_as_they_did(data):
    with pytest.warns(FutureWarning, match=r"scoring=anchor_scorer\(rows=5, threshold=None"):
        old = AnchorExplainer(planted, random_state=0, score_rows=5, score_threshold=None)
    assert old._scorer == AnchorScorer(rows=5, threshold=None)
    held_out = data.iloc[600:700]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        old.fit(data.iloc[:600])
        expected = anchor_scorer(rows=5, threshold=None)(old, held_out)
        assert old.score(held_out) == expected
        # a clone (what GridSearchCV fits) scores alike
        assert clone(old).fit(data.iloc[:600]).score(held_out) == expected
        assert pickle.loads(pickle.dumps(old)).score(held_out) == expected
    with pytest.raises(ValueError, match=r"rows must be an integer in \[1, inf\)"):
        AnchorExplainer(planted, score_rows=0)


def test_cache_size_is_a_setting(data):
    assert get_config()["cache_size"] == 250_000
    with config_context(cache_size=0):
        explainer = AnchorExplainer(planted, random_state=0)
        nothing = _anchor(explainer, data)
        assert explainer._cache is None  # no prediction cache at all
    assert get_config()["cache_size"] == 250_000
    # the anchors do not depend on it
    assert _anchor(AnchorExplainer(planted, random_state=0), data) == nothing
    # the old keyword: this explainer (and its clones) keep that many
    with pytest.warns(FutureWarning, match=r"skanchors.set_config\(cache_size=300\)"):
        old = AnchorExplainer(planted, random_state=0, cache_size=300)
    assert _anchor(old, data) == nothing and old._cache.max_size == 300
    copy = clone(old)
    assert _anchor(copy, data) == nothing and copy._cache.max_size == 300
    with pytest.raises(ValueError, match="cache_size must be an integer >= 0, got -1"):
        AnchorExplainer(planted, cache_size=-1)


def test_lime_sampler_keywords_moved_too(data):
    with pytest.warns(FutureWarning, match=r"LimeExplainer\(\.\.\., sampler=TabularSampler\(dis"):
        old = LimeExplainer(planted, n_samples=300, discretizer="decile", random_state=0)
    assert old.sampler.get_params() == TabularSampler(discretizer="decile").get_params()
    new = LimeExplainer(
        planted, n_samples=300, sampler=TabularSampler(discretizer="decile"), random_state=0
    )
    weights = [e.fit(data).explain(ROW)[0].as_list() for e in (old, new, clone(old))]
    assert weights[0] == weights[1] == weights[2]
    # deciles: the row's x0 bin is the top decile, (0.9.., 1]
    assert any(name.startswith("x0 > 0.8") for name, _ in weights[0])


# ---------------------------------------------------------------- the global aggregators
def spam_model(texts):
    """Spam iff "prize" or "cash" is in the message."""
    p = np.array([0.9 if {"prize", "cash"} & set(t.split()) else 0.1 for t in texts])
    return np.column_stack([1 - p, p])


DOCS = [
    "win a prize today",
    "cash for you now",
    "see you at lunch today",
    "lunch now or later",
    "claim your cash prize",
] * 6


def _counts(agg):
    return (
        agg.positive_counts_.sort_index().to_numpy().tolist(),
        agg.negative_counts_.sort_index().to_numpy().tolist(),
        agg.n_rows_predicted_,
        agg.top_terms_,
    )


def test_aggregators_list_only_the_current_parameters():
    anchor = list(inspect.signature(GlobalAnchorAggregator).parameters)
    lime = list(inspect.signature(GlobalLimeAggregator).parameters)
    assert len(anchor) == 18 and len(lime) == 18
    moved = {"adaptive_threshold", "omega", "min_threshold", "stop_words", "min_count"}
    moved |= {"lowercase", "candidate_filtering", "removal", "shared_pool", "moved"}
    assert not moved & set(anchor) and not moved & set(lime)


@pytest.mark.parametrize(
    "old, new",
    [
        (
            dict(min_count=1, stop_words=None, candidate_filtering=False),
            dict(vocabulary=WordFilter(min_count=1, stop_words=None, filtering=False)),
        ),
        (
            dict(min_count=1, adaptive_threshold=False),
            dict(vocabulary=WordFilter(min_count=1), threshold=AdaptiveThreshold(omega=0.0)),
        ),
        (
            dict(min_count=1, threshold=0.9, omega=0.2, min_threshold=0.6),
            dict(
                vocabulary=WordFilter(min_count=1),
                threshold=AdaptiveThreshold(0.9, omega=0.2, minimum=0.6),
            ),
        ),
        (
            dict(min_count=1, adaptive_threshold="precision"),
            dict(vocabulary=WordFilter(min_count=1), threshold=AdaptiveThreshold(mode="precision")),
        ),
    ],
)
def test_old_aggregator_keywords_warn_and_count_as_the_new_objects(old, new):
    params = dict(k=2, sample_size=16, batch_size=10, random_state=0)
    with pytest.warns(FutureWarning, match=r"deprecated since skanchors 0.2 .* use "):
        before = GlobalAnchorAggregator(spam_model, **params, **old)
    after = GlobalAnchorAggregator(spam_model, **params, **new)
    assert repr(before) == repr(after)
    assert before._state_params() == after._state_params()  # (what a checkpoint compares)
    assert _counts(before.fit(DOCS)) == _counts(after.fit(DOCS)) == _counts(clone(before).fit(DOCS))


def test_a_threshold_that_does_not_move_counts_as_the_test_without_eq_11():
    # omega=0: every token against the start, as adaptive_threshold=False did; the schedule
    # (a number: AdaptiveThreshold(number)) accepts on fewer rows
    words = WordFilter(min_count=1, filtering=False)
    params = dict(k=2, sample_size=16, batch_size=10, random_state=0, vocabulary=words)
    fixed = GlobalAnchorAggregator(spam_model, threshold=AdaptiveThreshold(omega=0), **params)
    moving = GlobalAnchorAggregator(spam_model, threshold=0.95, **params).fit(DOCS)
    assert fixed._adaptive_mode() is None and moving._adaptive_mode() == "confidence"
    assert fixed.fit(DOCS).top_terms_.keys() == moving.top_terms_.keys()
    assert moving.n_rows_predicted_ <= fixed.n_rows_predicted_
    # a checkpoint written before the parameter objects describes the defaults alike
    described = GlobalAnchorAggregator(spam_model)._state_params()
    assert described["adaptive_threshold"] == "True" and described["omega"] == "0.4"
    assert described["min_threshold"] == "0.55" and described["threshold"] == "0.95"
    assert described["candidate_filtering"] == "True" and described["min_count"] == "5"


def test_aggregator_objects_are_searchable_and_scored_by_aopc_scorer():
    agg = GlobalAnchorAggregator(
        spam_model,
        k=2,
        threshold=AdaptiveThreshold(0.95),
        vocabulary=WordFilter(),
        sample_size=16,
        random_state=0,
    )
    params = agg.get_params(deep=True)
    assert params["vocabulary__min_count"] == 5 and params["threshold__omega"] == 0.4
    agg.set_params(vocabulary__min_count=1, threshold__omega=0.2)
    assert agg.vocabulary.min_count == 1 and agg.threshold.omega == 0.2
    search = GridSearchCV(
        agg,
        {"vocabulary__min_count": [1, 100]},  # 100: no word is ranked, nothing to remove
        scoring=aopc_scorer(removal="UNK"),
        cv=2,
    ).fit(DOCS)
    low, high = search.cv_results_["mean_test_score"]
    assert low > 0 and high == 0 and search.best_params_ == {"vocabulary__min_count": 1}
    fitted = search.best_estimator_
    assert fitted.score(DOCS) == aopc_scorer()(fitted, DOCS)
    assert aopc_scorer(removal="UNK")(fitted, DOCS) > 0


def test_old_removal_and_shared_pool_keywords_still_work():
    params = dict(k=2, sample_size=16, vocabulary=WordFilter(min_count=1), random_state=0)
    with pytest.warns(FutureWarning, match=r"scoring=aopc_scorer\(removal='UNK'\)"):
        old = GlobalAnchorAggregator(spam_model, removal="UNK", **params)
    old.fit(DOCS)
    assert old.score(DOCS) == aopc_scorer(removal="UNK")(old, DOCS)
    assert clone(old).fit(DOCS).score(DOCS) == old.score(DOCS)
    with pytest.warns(FutureWarning, match=r"shared_pool=\.\.\.\) is deprecated"):
        naive = GlobalAnchorAggregator(spam_model, shared_pool=False, **params)
    pooled = GlobalAnchorAggregator(spam_model, **params).fit(DOCS)
    direct = GlobalAnchorAggregator(spam_model, **params)
    direct._shared_pool = False  # (the internal the benchmarks set)
    naive_rows = direct.fit(DOCS).n_rows_predicted_
    assert naive_rows != pooled.n_rows_predicted_
    for agg in (naive, clone(naive)):
        assert agg._shared_pool is False
        assert agg.fit(DOCS).n_rows_predicted_ == naive_rows
    with pytest.raises(ValueError, match="with vocabulary=WordFilter"):
        GlobalAnchorAggregator(spam_model, vocabulary=WordFilter(), min_count=1)
    with pytest.raises(ValueError, match="with threshold=AdaptiveThreshold"):
        GlobalAnchorAggregator(spam_model, threshold=AdaptiveThreshold(), omega=0.1)


def test_lime_aggregator_word_filter():
    with pytest.warns(FutureWarning, match=r"vocabulary=WordFilter\(min_count=1\)"):
        old = GlobalLimeAggregator(spam_model, k=2, n_samples=100, min_count=1, random_state=0)
    new = GlobalLimeAggregator(
        spam_model, k=2, n_samples=100, vocabulary=WordFilter(min_count=1), random_state=0
    )
    assert old.fit(DOCS).top_terms_ == new.fit(DOCS).top_terms_
    assert sorted(w for w, _ in new.top_terms_[1]) == ["cash", "prize"]


@pytest.mark.parametrize(
    "make, old, new",
    [
        (AnchorExplainer, "perturbation", r"sampler__perturbation \(with sampler=TabularSampler"),
        (AnchorExplainer, "discretizer", r"sampler__discretizer"),
        (AnchorExplainer, "score_rows", r"scoring=anchor_scorer\(rows=\.\.\.\)"),
        (AnchorExplainer, "score_tolerance", r"scoring=anchor_scorer\(tolerance=\.\.\.\)"),
        (AnchorExplainer, "cache_size", r"skanchors.set_config\(cache_size=\.\.\.\)"),
        (LimeExplainer, "categorical_features", r"sampler__categorical_features"),
        (GlobalAnchorAggregator, "omega", r"threshold__omega \(with threshold=AdaptiveThreshold"),
        (GlobalAnchorAggregator, "min_threshold", r"threshold__minimum"),
        (GlobalAnchorAggregator, "candidate_filtering", r"vocabulary__filtering \(with vocab"),
        (GlobalAnchorAggregator, "removal", r"scoring=aopc_scorer\(removal=\.\.\.\)"),
        (GlobalLimeAggregator, "min_count", r"vocabulary__min_count"),
    ],
)
def test_set_params_with_an_old_name_says_where_it_went(make, old, new):
    # what a grid over an old name meets: the new spelling, not only the list of parameters
    with pytest.raises(ValueError, match=rf"{old}=\.\.\.\): .* since skanchors 0.2; use .*{new}"):
        make(planted).set_params(**{old: 1})
    with pytest.raises(ValueError, match=rf"use .*{new}"):
        never = lambda estimator, X, y=None: 0.0  # noqa: E731 (the grid fails before scoring)
        GridSearchCV(make(planted), {old: [1, 2]}, scoring=never, cv=2).fit(np.ones((4, 2)))
    # a name that never was a parameter gets scikit-learn's error
    with pytest.raises(ValueError, match="Invalid parameter 'no_such'"):
        make(planted).set_params(no_such=1)
