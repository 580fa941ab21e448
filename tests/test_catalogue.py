"""A catalogue of bad or unusual inputs, tried as a careless or hostile user would (issue 48).

Every case either works, and its result is checked (an anchor that holds on the reference
rows, weights of the right sign, ...), or raises a named exception whose message names the
argument at fault and what was expected. One parametrised test runs them all.

Nothing here may hang: every case runs under an alarm (:func:`_deadline`), and the models of
the parameter cases count their calls and refuse any once the parameter is set
(:class:`Model`), so that a parameter checked too late fails at once rather than loops.

The end of the module has the property-based tests: random tables with mixed dtypes and
missing values, and random unicode documents.
"""

from __future__ import annotations

import contextlib
import re
import signal
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from skanchors import (
    Anchor,
    AnchorExplainer,
    GlobalAnchorAggregator,
    GlobalLimeAggregator,
    LimeExplainer,
    NoAnchorWarning,
    anchor_scorer,
    config_context,
    pick,
    set_config,
)
from skanchors.aggregation import AdaptiveThreshold, WordFilter, aopc_scorer
from skanchors.discretizers import EdgesDiscretizer, QuantileDiscretizer, TreeDiscretizer
from skanchors.metrics import aopc_k
from skanchors.samplers import CorpusSampler, TabularSampler, UnkSampler
from skanchors.samplers.text import tokenize

# Seconds any one case may take before it counts as hung (the slowest takes under one).
_SECONDS = 30


class _Hung(Exception):
    """A case ran past its deadline."""


class _Runaway(Exception):
    """The model was called after a bad parameter was set: it was checked too late."""


@contextlib.contextmanager
def _deadline(seconds):
    """Raise :class:`_Hung` in the test after ``seconds`` (SIGALRM; main thread only)."""

    def fire(signum, frame):
        raise _Hung(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# ----------------------------------------------------------------------------- models
class Model:
    """A classifier of tables or documents that counts its calls.

    Tables: class 1 exactly when column ``a`` (the first column of an array) exceeds 0.5.
    Documents: class 1 exactly when the word "good" occurs. ``positive``: another rule.
    ``budget``: calls left (None: any number); a call past it raises :class:`_Runaway`.
    """

    def __init__(self, budget=None, positive=None):
        self.budget = budget
        self.positive = positive
        self.calls = 0

    def __call__(self, X):
        if self.budget is not None and self.calls >= self.budget:
            raise _Runaway("the model was called after a bad parameter was set")
        self.calls += 1
        return _proba((self.positive or _positive)(X))


def _positive(X):
    if isinstance(X, list):
        return np.array(["good" in [w.lower() for w, _, _ in tokenize(d)] for d in X])
    if isinstance(X, pd.DataFrame):
        return pd.to_numeric(X["a"], errors="coerce").to_numpy(dtype=float) > 0.5
    return np.asarray(X, dtype=float)[:, 0] > 0.5


def _proba(positive):
    p = np.asarray(positive, dtype=float)
    return np.column_stack([1 - p, p])


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": rng.uniform(size=n),
            "b": rng.uniform(size=n),
            "c": rng.choice(["x", "y", "z"], size=n),
        }
    )


_DOCS = [
    "a good film with a fine cast",
    "a bad film and a dull plot",
    "good acting but a weak script",
    "the plot was dull and slow",
    "good music good story",
    "weak and slow",
    "a fine story and good acting",
    "bad acting bad music",
] * 4


def _anchor_holds(anchor, X, predicted, row=None):
    """The anchor is one, covers its row, and holds on the reference rows it covers."""
    assert anchor.is_anchor, anchor
    covered = anchor.covers(X)
    assert covered.any(), anchor
    if row is not None:
        assert anchor.covers(row).all(), (anchor, row)
    agree = np.mean(np.asarray(predicted)[covered] == anchor.prediction)
    assert agree >= 0.9, (anchor, agree)


def _explain_table(X, row=None, model=None, **params):
    """Fit on ``X``, explain ``row`` (the first row of X), check the anchor holds."""
    model = Model() if model is None else model
    params.setdefault("random_state", 0)
    explainer = AnchorExplainer(model, **params).fit(X)
    row = X.iloc[[0]] if row is None and isinstance(X, pd.DataFrame) else row
    row = X[:1] if row is None else row
    anchor = explainer.explain(row)[0]
    _anchor_holds(anchor, X, _positive(X).astype(int), row)
    return explainer, anchor


def _fitted_anchor(**params):
    model = Model()
    return AnchorExplainer(model, random_state=0, **params).fit(_table()), model


def _fitted_lime(**params):
    model = Model()
    return LimeExplainer(model, random_state=0, n_samples=300, **params).fit(_table()), model


def _fitted_aggregator(cls=GlobalAnchorAggregator, **params):
    model = Model()
    words = WordFilter(min_count=1, stop_words=None)
    params = {"vocabulary": words, "random_state": 0, **params}
    if cls is GlobalAnchorAggregator:
        params.setdefault("sample_size", 16)
    else:
        params.setdefault("n_samples", 50)
    return cls(model, **params).fit(_DOCS[:8]), model


# ----------------------------------------------------------------------------- catalogue
CASES = {}


def case(expect=None, match=None):
    """Register a case: it works (``expect`` None) or raises ``expect`` matching ``match``."""

    def register(fn):
        name = fn.__name__.removeprefix("case_")
        assert name not in CASES, name
        CASES[name] = (fn, expect, match)
        return fn

    return register


def _param(name, owner):
    """sklearn's wording for a parameter that breaks its constraint."""
    return rf"The '{name}' parameter of {owner} must be"


def _after_fit(fit, method, calls=0, **params):
    """Set ``params`` on a fitted estimator and call ``method``: the model must not be called
    (more than ``calls`` times)."""
    estimator, model = fit()
    estimator.set_params(**params)
    model.budget = model.calls + calls
    method(estimator)


# -- parameters of AnchorExplainer set after fit -----------------------------------------
_ANCHOR_BAD = {
    "batch_size_0": ("batch_size", 0),
    "batch_size_negative": ("batch_size", -5),
    "batch_size_float": ("batch_size", 2.5),
    "delta_0": ("delta", 0),
    "delta_1": ("delta", 1.0),
    "beam_size_0": ("beam_size", 0),
    "beam_size_str": ("beam_size", "wide"),
    "threshold_2": ("threshold", 2.0),
    "threshold_0": ("threshold", 0.0),
    "threshold_nan": ("threshold", float("nan")),
    "max_anchor_size_0": ("max_anchor_size", 0),
    "epsilon_0": ("epsilon", 0),
    "n_jobs_0": ("n_jobs", 0),
    "bandit_unknown": ("bandit", "ucb"),
    "verbose_negative": ("verbose", -1),
}


def _anchor_param_case(key, name, value):
    def run():
        row = _table().iloc[[0]]
        _after_fit(_fitted_anchor, lambda e: e.explain(row), **{name: value})

    run.__name__ = f"case_anchor_explain_{key}"
    case(ValueError, _param(name, "AnchorExplainer"))(run)


for _key, (_name, _value) in _ANCHOR_BAD.items():
    _anchor_param_case(_key, _name, _value)


def _near_the_threshold(X):
    """Class 1 when a > 0.5, except where b > 0.93: rules whose precision is near 0.95."""
    return (X["a"].to_numpy() > 0.5) ^ (X["b"].to_numpy() > 0.93)


@case(ValueError, _param("batch_size", "AnchorExplainer"))
def case_anchor_explain_batch_size_0_near_the_threshold():
    # (before: the search drew 0 samples per step, for ever, on rows of precision near 0.95)
    model = Model(positive=_near_the_threshold)
    explainer = AnchorExplainer(
        model, random_state=0, sampler=TabularSampler(perturbation="replace")
    ).fit(_table())
    explainer.set_params(batch_size=0)
    model.budget = model.calls
    explainer.explain(_table().iloc[:3])


@case()
def case_anchor_bad_then_good_batch_size():
    # parameters found valid are not checked again; changed, they are, each time
    explainer, _ = _fitted_anchor()
    row = _table().iloc[[0]]
    for bad in (0, -1, 0):
        with pytest.raises(ValueError, match=_param("batch_size", "AnchorExplainer")):
            explainer.set_params(batch_size=bad).explain(row)
        anchor = explainer.set_params(batch_size=20).explain(row)[0]
        _anchor_holds(anchor, _table(), _positive(_table()).astype(int), row)


@case(ValueError, _param("batch_size", "AnchorExplainer"))
def case_anchor_transform_batch_size_0():
    row = _table().iloc[[0]]
    _after_fit(_fitted_anchor, lambda e: e.transform(row), batch_size=0)


@case(ValueError, r"rows must be an integer in \[1, inf\) or None, got 0")
def case_anchor_scorer_rows_0():
    anchor_scorer(rows=0)


@case(ValueError, r"threshold must be a number in \(0, 1\] or None, got 1.5")
def case_anchor_scorer_threshold_above_1():
    anchor_scorer(threshold=1.5)


@case(TypeError, r"anchor_scorer\(\) takes 0 positional arguments")
def case_anchor_scorer_positional():
    anchor_scorer(10)


@case(ValueError, r"cache_size must be an integer >= 0, got -1")
def case_set_config_cache_size_negative():
    set_config(cache_size=-1)


@case(ValueError, r"cache_size must be an integer >= 0, got 2.5")
def case_config_context_cache_size_float():
    with config_context(cache_size=2.5):
        pass


@case(TypeError, r"config_context\(\) got unknown setting\(s\) \['cache'\]")
def case_config_context_unknown_setting():
    with config_context(cache=10):
        pass


@case(TypeError, r"AnchorExplainer.__init__\(\) got an unexpected keyword argument 'treshold'")
def case_anchor_misspelled_keyword():
    AnchorExplainer(Model(), treshold=0.9)


@case(ValueError, r"Cannot set sampler__perturbation: sampler is None")
def case_anchor_nested_sampler_option_without_a_sampler():
    AnchorExplainer(Model()).set_params(sampler__perturbation="replace")


@case(ValueError, _param("delta", "AnchorExplainer"))
def case_anchor_score_delta_0():
    _after_fit(_fitted_anchor, lambda e: e.score(_table(40, 1)), delta=0)


@case()
def case_anchor_batch_size_huge():
    # 10**9 perturbations per candidate and step would not fit in memory: a step draws at most
    # what a rule's validation can use, so the search ends, in bounded memory.
    X = _table()
    model = Model()
    explainer = AnchorExplainer(
        model,
        random_state=0,
        batch_size=10**9,
        sampler=TabularSampler(perturbation="replace"),
        beam_size=1,
    ).fit(X)
    anchor = explainer.explain(X.iloc[[0]])[0]
    _anchor_holds(anchor, X, _positive(X).astype(int), X.iloc[[0]])
    assert anchor.n_rows_predicted <= 5_000_000


@case(ValueError, r"n_samples")
def case_anchor_sample_n_samples_0():
    explainer, _ = _fitted_anchor()
    anchor = explainer.explain(_table().iloc[[0]])[0]
    explainer.sample(anchor, 0)


@case(ValueError, r"n_samples=10{12}.*memory")
def case_anchor_sample_n_samples_huge():
    explainer, model = _fitted_anchor()
    anchor = explainer.explain(_table().iloc[[0]])[0]
    model.budget = model.calls
    explainer.sample(anchor, 10**12)


@case(ValueError, _param("threshold", "AnchorExplainer"))
def case_anchor_perturbation_precision_bad_threshold_after_fit():
    explainer, model = _fitted_anchor()
    anchor = explainer.explain(_table().iloc[[0]])[0]
    explainer.set_params(threshold=7)
    model.budget = model.calls
    explainer.perturbation_precision(anchor)


@case(ValueError, _param("tolerance", "AnchorExplainer"))
def case_anchor_regression_tolerance_0():
    X = _table()
    AnchorExplainer(lambda X: X["a"].to_numpy(), mode="regression", tolerance=0).fit(X)


@case(ValueError, _param("random_state", "AnchorExplainer"))
def case_anchor_random_state_negative():
    AnchorExplainer(Model(), random_state=-1).fit(_table())


@case(ValueError, _param("random_state", "AnchorExplainer"))
def case_anchor_random_state_huge():
    AnchorExplainer(Model(), random_state=2**40).fit(_table())


@case()
def case_anchor_random_state_largest():
    _explain_table(_table(), random_state=2**32 - 1)


# -- the estimator -------------------------------------------------------------------------
@case(TypeError, r"estimator.*class LogisticRegression.*instance")
def case_anchor_estimator_is_a_class():
    AnchorExplainer(LogisticRegression).fit(_table()[["a", "b"]])


@case(TypeError, r"estimator.*class LogisticRegression.*instance")
def case_lime_estimator_is_a_class():
    LimeExplainer(LogisticRegression).fit(_table()[["a", "b"]])


@case(TypeError, r"estimator.*class LogisticRegression.*instance")
def case_aggregator_estimator_is_a_class():
    GlobalAnchorAggregator(LogisticRegression).fit(_DOCS)


@case(TypeError, r"estimator.*class LogisticRegression.*instance")
def case_lime_aggregator_estimator_is_a_class():
    GlobalLimeAggregator(LogisticRegression).fit(_DOCS)


@case(TypeError, r"model.*class LogisticRegression.*instance")
def case_aopc_model_is_a_class():
    aopc_k(LogisticRegression, _DOCS, {0: ["bad"]}, k=1)


@case(TypeError, r"model.*class LogisticRegression.*instance")
def case_pick_model_is_a_class():
    explainer, _ = _fitted_anchor()
    X = _table()
    anchors = explainer.explain(X.iloc[:2])
    pick(anchors, X, k=1, model=LogisticRegression)


@case(NotFittedError, r"estimator.*LogisticRegression.*not fitted")
def case_anchor_estimator_not_fitted():
    AnchorExplainer(LogisticRegression()).fit(_table()[["a", "b"]])


@case(NotFittedError, r"estimator.*LogisticRegression.*not fitted")
def case_lime_estimator_not_fitted():
    LimeExplainer(LogisticRegression()).fit(_table()[["a", "b"]])


@case(ValueError, _param("estimator", "AnchorExplainer"))
def case_anchor_estimator_none():
    AnchorExplainer(None).fit(_table())


@case(ValueError, _param("estimator", "AnchorExplainer"))
def case_anchor_estimator_set_to_none_after_fit():
    explainer, _ = _fitted_anchor()
    explainer.set_params(estimator=None)
    explainer.explain(_table().iloc[[0]])


@case()
def case_anchor_fitted_logistic_regression():
    X = _table()[["a", "b"]]
    model = LogisticRegression().fit(X, _positive(X))
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    anchor = explainer.explain(X.iloc[[0]])[0]
    _anchor_holds(anchor, X, model.predict(X).astype(int), X.iloc[[0]])


# -- what the model returns ----------------------------------------------------------------
def _explain_with(output, **params):
    """Explain one row with a model whose output is ``output(X)``."""
    X = _table()
    AnchorExplainer(output, random_state=0, **params).fit(X).explain(X.iloc[[0]])


@case(ValueError, r"model.*returned strings.*numbers")
def case_model_returns_strings():
    _explain_with(lambda X: np.array([["no", "yes"]] * len(X)))


@case(TypeError, r"model.*returned a sparse matrix.*dense")
def case_model_returns_sparse_matrix():
    _explain_with(lambda X: sp.csr_matrix(_proba(_positive(X))))


@case(ValueError, r"model.*returned strings.*numbers")
def case_lime_model_returns_strings():
    X = _table()
    LimeExplainer(lambda X: np.array([["no", "yes"]] * len(X))).fit(X).explain(X.iloc[[0]])


@case(TypeError, r"model.*returned a sparse matrix.*dense")
def case_aggregator_model_returns_sparse_matrix():
    GlobalAnchorAggregator(lambda d: sp.csr_matrix(_proba(_positive(d)))).fit(_DOCS)


@case(ValueError, r"model.*returned None")
def case_model_returns_none():
    _explain_with(lambda X: None)


@case(ValueError, r"model.*shape \(n_inputs, n_classes\).*shape \(1,\).*one number per input")
def case_model_returns_one_number_per_row():
    _explain_with(lambda X: _positive(X).astype(float))


@case(ValueError, r"model.*shape \(n_inputs, n_classes\)")
def case_model_returns_too_few_rows():
    _explain_with(lambda X: _proba(_positive(X))[:1])


@case(ValueError, r"model returned NaN")
def case_model_returns_nan():
    _explain_with(lambda X: np.full((len(X), 2), np.nan))


@case(ValueError, r"model returned 2 probability columns for 3 classes")
def case_model_columns_differ_from_classes():
    class Three:
        classes_ = np.array([0, 1, 2])

        def predict_proba(self, X):
            return _proba(_positive(X))

    _explain_with(Three())


@case(RuntimeError, r"the model's own failure")
def case_model_raises():
    def broken(X):
        raise RuntimeError("the model's own failure")

    _explain_with(broken)


@case()
def case_model_returns_scores_not_probabilities():
    # Anchors compare the predicted class only: the argmax of any scores.
    X = _table()
    scores = lambda X: 5 * _proba(_positive(X)) - 3  # noqa: E731
    explainer = AnchorExplainer(scores, random_state=0).fit(X)
    _anchor_holds(explainer.explain(X.iloc[[0]])[0], X, _positive(X).astype(int), X.iloc[[0]])


@case()
def case_model_returns_a_dataframe_and_lists():
    X = _table()
    for output in (
        lambda X: pd.DataFrame(_proba(_positive(X))),
        lambda X: _proba(_positive(X)).tolist(),
    ):
        explainer = AnchorExplainer(output, random_state=0).fit(X)
        anchor = explainer.explain(X.iloc[[0]])[0]
        _anchor_holds(anchor, X, _positive(X).astype(int), X.iloc[[0]])


@case()
def case_model_with_a_single_class():
    class OneClass:
        classes_ = np.array(["only"])

        def predict_proba(self, X):
            return np.ones((len(X), 1))

    X = _table()
    anchor = AnchorExplainer(OneClass(), random_state=0).fit(X).explain(X.iloc[[0]])[0]
    assert anchor.is_anchor and anchor.predicates == () and anchor.prediction == "only"
    assert anchor.precision == 1.0


@case(ValueError, r"model.*probabilities.*\[0, 1\]")
def case_lime_model_returns_scores_outside_0_1():
    X = _table()
    scores = lambda X: 5 * _proba(_positive(X)) - 3  # noqa: E731
    LimeExplainer(scores, random_state=0, n_samples=200).fit(X).explain(X.iloc[[0]])


@case()
def case_lime_model_probabilities_do_not_sum_to_1():
    # a one-vs-rest model's columns need not sum to 1: explained, with a warning
    X = _table()
    halves = lambda X: 0.5 * _proba(_positive(X))  # noqa: E731
    explainer = LimeExplainer(halves, random_state=0, n_samples=300, n_features=1).fit(X)
    row = X[X["a"] > 0.9].iloc[[0]]
    with pytest.warns(UserWarning, match=r"model.*do not sum to 1"):
        e = explainer.explain(row)[0]
    assert e.as_list()[0][0].startswith("a") and e.as_list()[0][1] > 0


@case(ValueError, r"model.*probabilities.*\[0, 1\]")
def case_aopc_model_returns_scores_outside_0_1():
    aopc_k(lambda d: 4 * _proba(_positive(d)) - 2, _DOCS, {1: ["good"]}, k=1)


# -- LimeExplainer's parameters -------------------------------------------------------------
_LIME_BAD = {
    "n_samples_0": ("n_samples", 0),
    "n_features_0": ("n_features", 0),
    "kernel_width_negative": ("kernel_width", -1.0),
    "feature_selection_unknown": ("feature_selection", "best"),
    "sampling_unknown": ("sampling", "marginal"),
    "n_jobs_0": ("n_jobs", 0),
}


def _lime_param_case(key, name, value):
    def run():
        row = _table().iloc[[0]]
        _after_fit(_fitted_lime, lambda e: e.explain(row), **{name: value})

    run.__name__ = f"case_lime_explain_{key}"
    case(ValueError, _param(name, "LimeExplainer"))(run)


for _key, (_name, _value) in _LIME_BAD.items():
    _lime_param_case(_key, _name, _value)


@case(ValueError, _param("n_features", "LimeExplainer"))
def case_lime_transform_n_features_0():
    row = _table().iloc[[0]]
    _after_fit(_fitted_lime, lambda e: e.transform(row), n_features=0)


@case(ValueError, r"n_samples=10{10}.*memory")
def case_lime_n_samples_huge():
    row = _table().iloc[[0]]
    _after_fit(_fitted_lime, lambda e: e.explain(row), n_samples=10**10)


@case()
def case_lime_one_sample():
    X = _table()
    e = LimeExplainer(Model(), n_samples=1, random_state=0).fit(X).explain(X.iloc[[0]])[0]
    assert e.n_samples == 1 and np.isfinite(e.weights).all()


# -- the aggregators' parameters ------------------------------------------------------------
_AGGREGATOR_BAD = {
    "sample_size_0": ("sample_size", 0),
    "batch_size_0": ("batch_size", 0),
    "delta_0": ("delta", 0),
    "threshold_2": ("threshold", 2.0),
    "max_time_negative": ("max_time", -1.0),
    "alpha_2": ("alpha", 2.0),
    "order_unknown": ("order", "alphabetical"),
    "aggregation_unknown": ("aggregation", "max"),
    "k_0": ("k", 0),
}


def _aggregator_param_case(key, name, value):
    def run():
        fit = _fitted_aggregator
        _after_fit(fit, lambda g: g.partial_fit(_DOCS[8:16]), **{name: value})

    run.__name__ = f"case_aggregator_partial_fit_{key}"
    case(ValueError, _param(name, "GlobalAnchorAggregator"))(run)


for _key, (_name, _value) in _AGGREGATOR_BAD.items():
    _aggregator_param_case(_key, _name, _value)


@case(ValueError, _param("n_samples", "GlobalLimeAggregator"))
def case_lime_aggregator_partial_fit_n_samples_0():
    def fit():
        return _fitted_aggregator(GlobalLimeAggregator)

    _after_fit(fit, lambda g: g.partial_fit(_DOCS[8:16]), n_samples=0)


@case(ValueError, _param("k", "GlobalAnchorAggregator"))
def case_aggregator_score_k_0():
    _after_fit(_fitted_aggregator, lambda g: g.score(_DOCS), k=0)


@case(ValueError, r"removal must be 'delete' or a replacement str, got 1")
def case_aopc_scorer_removal_not_str():
    aopc_scorer(removal=1)


@case(ValueError, _param("lowercase", "WordFilter"))
def case_lime_aggregator_transform_lowercase_not_bool():
    def fit():
        return _fitted_aggregator(GlobalLimeAggregator)

    words = WordFilter(lowercase="yes")
    _after_fit(fit, lambda g: g.transform(_DOCS), vocabulary=words)


@case(ValueError, _param("min_count", "WordFilter"))
def case_aggregator_min_count_0_set_after_fit():
    _after_fit(
        _fitted_aggregator,
        lambda g: g.partial_fit(_DOCS[8:16]),
        vocabulary=WordFilter(min_count=0),
    )


@case(ValueError, _param("omega", "AdaptiveThreshold"))
def case_aggregator_omega_negative_set_after_fit():
    _after_fit(
        _fitted_aggregator,
        lambda g: g.partial_fit(_DOCS[8:16]),
        threshold=AdaptiveThreshold(omega=-0.5),
    )


@case(ValueError, r"Cannot set vocabulary__min_count: vocabulary is None")
def case_aggregator_nested_word_filter_option_without_a_filter():
    GlobalAnchorAggregator(Model()).set_params(vocabulary__min_count=2)


@case(ValueError, r"Cannot set threshold__omega: threshold is 0.95")
def case_aggregator_nested_threshold_option_on_a_number():
    GlobalAnchorAggregator(Model()).set_params(threshold__omega=0.2)


@case(ValueError, r"filtering='optimistic'.*GlobalLimeAggregator explains every document whole")
def case_lime_aggregator_refuses_candidate_filtering():
    words = WordFilter(min_count=1, filtering="optimistic")
    GlobalLimeAggregator(Model(), n_samples=50, vocabulary=words).fit(_DOCS)


@case(TypeError, r"GlobalLimeAggregator.__init__\(\) got an unexpected keyword argument 'omega'")
def case_lime_aggregator_has_no_adaptive_threshold():
    GlobalLimeAggregator(Model(), omega=0.2)


@case(ValueError, r"alpha")
def case_aggregator_compute_scores_alpha_2():
    aggregator, _ = _fitted_aggregator()
    aggregator.compute_scores("pr", alpha=2.0)


@case(ValueError, r"aggregation.*'max'")
def case_aggregator_compute_scores_unknown_aggregation():
    aggregator, _ = _fitted_aggregator()
    aggregator.compute_scores("max")


@case(ValueError, r"sample_size=10{9}.*memory")
def case_aggregator_sample_size_huge():
    _after_fit(
        _fitted_aggregator,
        lambda g: g.partial_fit(_DOCS[8:16]),
        calls=1,  # (the pass that orders the documents by confidence)
        sample_size=10**9,
    )


@case(ValueError, r"n_samples=10{10}.*memory")
def case_lime_aggregator_n_samples_huge():
    def fit():
        return _fitted_aggregator(GlobalLimeAggregator)

    _after_fit(fit, lambda g: g.partial_fit(_DOCS[8:16]), calls=1, n_samples=10**10)


@case()
def case_lime_aggregator_uses_n_samples_set_after_fit():
    aggregator, model = _fitted_aggregator(GlobalLimeAggregator)
    before = aggregator.n_rows_predicted_
    aggregator.set_params(n_samples=20)
    aggregator.partial_fit(_DOCS[8:16])
    assert aggregator.n_rows_predicted_ - before == 8 * (20 + 1)


@case(ValueError, r"AdaptiveThreshold\(start=0.8, minimum=0.9\): minimum must not exceed start")
def case_aggregator_min_threshold_above_threshold():
    _after_fit(
        _fitted_aggregator,
        lambda g: g.partial_fit(_DOCS[8:16]),
        threshold=AdaptiveThreshold(0.8, minimum=0.9),
    )


@case(TypeError, r"stop_words must be str")
def case_aggregator_stop_words_not_str():
    GlobalAnchorAggregator(Model(), vocabulary=WordFilter(stop_words=["a", 3])).fit(_DOCS)


@case()
def case_aggregator_works_after_valid_set_params():
    aggregator, _ = _fitted_aggregator()
    aggregator.set_params(sample_size=8, batch_size=3)
    aggregator.partial_fit(_DOCS[8:16])
    assert aggregator.n_documents_seen_ == 16
    assert aggregator.top_terms_[1][0][0] == "good"


# -- samplers --------------------------------------------------------------------------------
@case(ValueError, _param("keep_proba", "UnkSampler"))
def case_unk_sampler_keep_proba_0():
    UnkSampler(keep_proba=0).fit(_DOCS)


@case(ValueError, _param("keep_proba", "UnkSampler"))
def case_unk_sampler_keep_proba_above_1():
    UnkSampler(keep_proba=1.5).fit(_DOCS)


@case(ValueError, _param("token", "UnkSampler"))
def case_unk_sampler_token_not_str():
    UnkSampler(token=5).fit(_DOCS)


@case(ValueError, _param("min_df", "CorpusSampler"))
def case_corpus_sampler_min_df_0():
    CorpusSampler(min_df=0).fit(_DOCS)


@case(ValueError, _param("keep_proba", "UnkSampler"))
def case_unk_sampler_keep_proba_set_after_fit():
    sampler = UnkSampler().fit(_DOCS)
    sampler.set_params(keep_proba=2.0)
    sampler.instance("a good film")


@case(ValueError, _param("keep_proba", "UnkSampler"))
def case_aggregator_fitted_sampler_with_bad_keep_proba():
    sampler = UnkSampler().fit(_DOCS)
    sampler.set_params(keep_proba=0.0)
    GlobalAnchorAggregator(Model(), sampler=sampler, vocabulary=WordFilter(min_count=1)).fit(_DOCS)


@case(ValueError, _param("perturbation", "TabularSampler"))
def case_tabular_sampler_perturbation_unknown():
    TabularSampler(perturbation="swap").fit(_table())


@case(ValueError, _param("bounds", "TabularSampler"))
def case_tabular_sampler_bounds_unknown():
    TabularSampler(bounds="edges").fit(_table())


@case(ValueError, _param("discretizer", "TabularSampler"))
def case_tabular_sampler_discretizer_unknown():
    TabularSampler(discretizer="octile").fit(_table())


@case(ValueError, r"categorical_features names unknown feature 'nope'")
def case_tabular_sampler_categorical_unknown():
    TabularSampler(categorical_features=["nope"]).fit(_table())


@case(ValueError, _param("bounds", "TabularSampler"))
def case_tabular_sampler_bounds_set_after_fit():
    sampler = TabularSampler().fit(_table())
    sampler.set_params(bounds="edges")
    sampler.instance(_table().iloc[[0]])


@case(ValueError, r"X.*no words.*CorpusSampler")
def case_corpus_sampler_reference_of_empty_strings():
    CorpusSampler().fit(["", "  ", "?!"])


@case(ValueError, r"X.*no words")
def case_anchor_text_reference_of_empty_strings():
    AnchorExplainer(Model()).fit(["", " ", "..."])


@case(ValueError, r"X.*no words")
def case_lime_text_reference_of_empty_strings():
    LimeExplainer(Model()).fit(["", "\n"])


# -- discretizers ----------------------------------------------------------------------------
@case(ValueError, r"percentiles")
def case_quantile_percentiles_empty():
    QuantileDiscretizer(percentiles=[]).fit(_table()[["a"]])


@case(ValueError, r"percentiles")
def case_quantile_percentiles_above_100():
    QuantileDiscretizer(percentiles=[50, 150]).fit(_table()[["a"]])


@case(ValueError, r"percentiles")
def case_quantile_percentiles_text():
    QuantileDiscretizer(percentiles=["low", "high"]).fit(_table()[["a"]])


@case(ValueError, _param("min_share", "TreeDiscretizer"))
def case_tree_min_share_0():
    X = _table()[["a"]]
    TreeDiscretizer(min_share=0).fit(X, _positive(X))


@case(ValueError, _param("max_leaf_nodes", "TreeDiscretizer"))
def case_tree_max_leaf_nodes_1():
    X = _table()[["a"]]
    TreeDiscretizer(max_leaf_nodes=1).fit(X, _positive(X))


@case(ValueError, _param("edges", "EdgesDiscretizer"))
def case_edges_not_a_dict():
    EdgesDiscretizer(edges=5).fit(_table()[["a"]])


@case(ValueError, r"edges for feature 'a' must be strictly increasing")
def case_edges_decreasing():
    EdgesDiscretizer(edges={"a": [0.7, 0.2]}).fit(_table()[["a"]])


@case(ValueError, r"edges for feature 'a' must be strictly increasing numbers")
def case_edges_text():
    EdgesDiscretizer(edges={"a": ["low"]}).fit(_table()[["a"]])


@case(ValueError, r"X has 2 features, but QuantileDiscretizer is expecting 1")
def case_discretizer_transform_wrong_width():
    QuantileDiscretizer().fit(_table()[["a"]].to_numpy()).transform(np.zeros((2, 2)))


@case()
def case_discretizer_with_nan_column_values():
    X = np.array([[np.nan], [1.0], [2.0], [3.0], [4.0]])
    d = QuantileDiscretizer(percentiles=[50]).fit(X)
    assert d.transform([[np.nan], [1.0], [4.0]]).ravel().tolist()[1:] == [0.0, 1.0]


@case(ValueError, _param("discretizer", "TabularSampler"))
def case_anchor_discretizer_unknown():
    AnchorExplainer(Model(), sampler=TabularSampler(discretizer="octile")).fit(_table())


# -- submodular pick ---------------------------------------------------------------------------
def _anchors_of_table():
    explainer, _ = _fitted_anchor()
    X = _table()
    return explainer.explain(X.iloc[:4]), X


@case(ValueError, r"k must be an integer >= 1, got 0")
def case_pick_k_0():
    anchors, X = _anchors_of_table()
    pick(anchors, X, k=0)


@case(ValueError, r"k must be an integer >= 1, got 2.5")
def case_pick_k_float():
    anchors, X = _anchors_of_table()
    pick(anchors, X, k=2.5)


@case(ValueError, r"explanations is empty")
def case_pick_no_explanations():
    pick([], _table(), k=1)


@case(TypeError, r"explanations must all be Anchor or all be LimeExplanation")
def case_pick_mixed_explanations():
    anchors, X = _anchors_of_table()
    pick([anchors[0], "a rule"], X, k=1)


@case(TypeError, r"explanations must be a list of Anchor or LimeExplanation.*got an Anchor")
def case_pick_a_single_anchor():
    anchors, X = _anchors_of_table()
    pick(anchors[0], X, k=1)


@case(ValueError, r"X is required to pick anchors")
def case_pick_anchors_without_x():
    anchors, _ = _anchors_of_table()
    pick(anchors, None, k=1)


@case(KeyError, r"X has no column 'a'")
def case_pick_x_without_the_anchor_columns():
    anchors, X = _anchors_of_table()
    pick(anchors, X[["b", "c"]].rename(columns={"b": "q"}), k=1)


@case()
def case_pick_anchors_cover_rows():
    anchors, X = _anchors_of_table()
    result = pick(anchors, X, k=2, model=Model())
    covered = np.zeros(len(X), dtype=bool)
    for a in result.explanations:
        covered |= a.covers(X)
    assert result.coverage_curve[-1] == pytest.approx(covered.mean())
    assert (result.precision >= 0.9).all()


# -- metrics -------------------------------------------------------------------------------------
@case(ValueError, r"k must be a positive integer, got 0")
def case_aopc_k_0():
    aopc_k(Model(), _DOCS, {1: ["good"]}, k=0)


@case(TypeError, r"removal must be 'delete' or a replacement str")
def case_aopc_removal_not_str():
    aopc_k(Model(), _DOCS, {1: ["good"]}, k=1, removal=0)


@case(TypeError, r"top_terms must be a dict")
def case_aopc_top_terms_list():
    aopc_k(Model(), _DOCS, ["good"], k=1)


@case(ValueError, r"top_terms has class 'spam'")
def case_aopc_unknown_class():
    aopc_k(Model(), _DOCS, {"spam": ["good"]}, k=1)


@case(TypeError, r"documents\[0\] is a bytes.*decode")
def case_aopc_documents_bytes():
    aopc_k(Model(), [d.encode() for d in _DOCS], {1: ["good"]}, k=1)


@case(ValueError, r"model.*returned strings")
def case_aopc_model_returns_strings():
    aopc_k(lambda d: np.array([["0", "1"]] * len(d)), _DOCS, {1: ["good"]}, k=1)


@case()
def case_aopc_known_value():
    # removing "good" turns every class-1 document to class 0: a drop of 1 at every rank
    value = aopc_k(Model(), _DOCS, {1: ["good"]}, k=1)
    assert value == pytest.approx(0.5)


# -- tables ----------------------------------------------------------------------------------------
@case()
def case_table_nan_in_numeric_columns():
    X = _table()
    X.loc[X.index[5::7], "b"] = np.nan
    X.loc[X.index[3::11], "a"] = np.nan
    _explain_table(X, row=X.iloc[[1]])


@case()
def case_table_nan_in_the_explained_row():
    X = _table()
    X.loc[X.index[3::11], "b"] = np.nan
    row = X.iloc[[1]].copy()
    row["b"] = np.nan
    _explain_table(X, row=row)


@case(ValueError, r"Feature\(s\) \['b'\] of X hold infinite values")
def case_table_inf_in_reference():
    X = _table()
    X.loc[3, "b"] = np.inf
    AnchorExplainer(Model()).fit(X)


@case(ValueError, r"X column 'b'.*infinite")
def case_table_inf_in_explained_row():
    X = _table()
    row = X.iloc[[0]].copy()
    row["b"] = -np.inf
    AnchorExplainer(Model(), random_state=0).fit(X).explain(row)


@case(ValueError, r"X.*infinity")
def case_array_inf_in_explained_row():
    X = _table()[["a", "b"]].to_numpy()
    row = X[:1].copy()
    row[0, 1] = np.inf
    AnchorExplainer(Model()).fit(X).explain(row)


@case(ValueError, r"X.*(no rows|0 sample)")
def case_table_empty_reference():
    AnchorExplainer(Model()).fit(_table().iloc[:0])


@case(ValueError, r"X has no columns")
def case_table_reference_without_columns():
    AnchorExplainer(Model()).fit(pd.DataFrame(index=range(5)))


@case(ValueError, r"X with 1 sample.*at least 2 rows")
def case_table_one_row_reference():
    AnchorExplainer(Model()).fit(_table().iloc[:1])


@case()
def case_table_one_column():
    _explain_table(_table()[["a"]])


@case(ValueError, r"X has duplicate column names: \['a'\]")
def case_table_duplicate_column_names():
    X = _table()
    X.columns = ["a", "a", "c"]
    AnchorExplainer(Model()).fit(X)


@case()
def case_table_integer_column_names():
    X = _table()[["a", "b"]].rename(columns={"a": 0, "b": 1})
    model = lambda X: _proba(X[0].to_numpy() > 0.5)  # noqa: E731
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    anchor = explainer.explain(X.iloc[[0]])[0]
    assert {p.feature for p in anchor.predicates} <= {0, 1}
    _anchor_holds(anchor, X, (X[0] > 0.5).astype(int), X.iloc[[0]])


@case()
def case_table_unicode_column_names():
    X = _table().rename(columns={"b": "größe ✓", "c": "名前"})
    _explain_table(X)


@case()
def case_table_mixed_type_object_column():
    X = _table()
    X["c"] = pd.Series([1, "x", 2.5, None, "y"] * 60, dtype=object)
    explainer, anchor = _explain_table(X)
    assert explainer.sampler_.categorical_[2]


@case()
def case_table_categorical_dtype():
    X = _table()
    X["c"] = X["c"].astype("category")
    _explain_table(X)


@case()
def case_table_string_and_nullable_dtypes():
    X = _table()
    X["c"] = X["c"].astype("string")
    X["d"] = pd.array([1, None, 3] * 100, dtype="Int64")
    _explain_table(X)


@case()
def case_table_bool_column():
    X = _table()
    X["c"] = X["b"] > 0.5
    _explain_table(X)


@case(ValueError, r"d.*dates")
def case_table_datetime_column():
    X = _table()
    X["d"] = pd.date_range("2020-01-01", periods=len(X))
    AnchorExplainer(Model()).fit(X)


@case(ValueError, r"Feature\(s\) \['d'\] of X hold dates, times or durations")
def case_table_timedelta_column():
    X = _table()
    X["d"] = pd.to_timedelta(np.arange(len(X)), unit="h")
    AnchorExplainer(Model()).fit(X)


@case(ValueError, r"X column 'd'.*complex")
def case_table_complex_column():
    X = _table()
    X["d"] = np.arange(len(X)) * (1 + 1j)
    AnchorExplainer(Model()).fit(X)


@case(ValueError, r"X column 'l' holds list.*hashable")
def case_table_column_of_lists():
    X = _table()
    X["l"] = [[1, 2]] * len(X)
    AnchorExplainer(Model()).fit(X)


@case(ValueError, r"X column 'l' holds dict")
def case_table_column_of_dicts():
    X = _table()
    X["l"] = [{"k": 1}] * len(X)
    AnchorExplainer(Model()).fit(X)


@case(ValueError, r"X column 'l' holds list")
def case_table_explained_row_holds_a_list():
    X = _table()
    X["l"] = X["c"]
    row = X.iloc[[0]].copy()
    row["l"] = pd.Series([[1, 2]], index=row.index, dtype=object)
    AnchorExplainer(Model(), random_state=0).fit(X).explain(row)


@case(ValueError, r"X has the column\(s\) \['q'\].*no column\(s\) \['c'\]")
def case_table_row_with_other_columns():
    X = _table()
    AnchorExplainer(Model()).fit(X).explain(X.iloc[[0]].rename(columns={"c": "q"}))


@case(ValueError, r"X has the column\(s\) \['extra'\]")
def case_table_row_with_an_extra_column():
    X = _table()
    row = X.iloc[[0]].assign(extra=1)
    AnchorExplainer(Model()).fit(X).explain(row)


@case()
def case_table_row_with_columns_in_another_order():
    X = _table()
    explainer = AnchorExplainer(Model(), random_state=0).fit(X)
    anchor = explainer.explain(X.iloc[[0]][["c", "b", "a"]])[0]
    _anchor_holds(anchor, X, _positive(X).astype(int), X.iloc[[0]])


@case()
def case_table_row_with_an_unseen_category():
    X = _table()
    row = X.iloc[[0]].copy()
    row["c"] = "never seen"
    explainer = AnchorExplainer(Model(), random_state=0).fit(X)
    anchor = explainer.explain(row)[0]
    assert all(p.feature != "c" for p in anchor.predicates)
    _anchor_holds(anchor, X, _positive(X).astype(int), row)


@case(ValueError, r"X column 'a' is numeric in the reference data, but holds 'high'")
def case_table_text_in_a_numeric_column():
    X = _table()
    row = X.iloc[[0]].astype({"a": object})
    row["a"] = "high"
    AnchorExplainer(Model()).fit(X).explain(row)


@case(NotFittedError, r"AnchorExplainer.*not fitted")
def case_explain_before_fit():
    AnchorExplainer(Model()).explain(_table().iloc[[0]])


@case(NotFittedError, r"LimeExplainer.*not fitted")
def case_lime_transform_before_fit():
    LimeExplainer(Model()).transform(_table().iloc[[0]])


@case(NotFittedError, r"GlobalAnchorAggregator.*not fitted")
def case_aggregator_score_before_fit():
    GlobalAnchorAggregator(Model()).score(_DOCS)


@case(ValueError, r"X has 3 features, but TabularSampler is expecting 2")
def case_array_wrong_number_of_features():
    X = _table()[["a", "b"]].to_numpy()
    AnchorExplainer(Model()).fit(X).explain(np.zeros((1, 3)))


@case(ValueError, r"X must be 2-dimensional.*Series")
def case_table_row_as_series():
    X = _table()
    AnchorExplainer(Model()).fit(X).explain(X.iloc[0])


@case(ValueError, r"X has no rows to explain")
def case_table_explain_no_rows():
    X = _table()
    AnchorExplainer(Model()).fit(X).explain(X.iloc[:0])


@case(ValueError, r"X has 3 feature\(s\), but the model was fitted on 2")
def case_table_model_fitted_on_other_columns():
    X = _table()[["a", "b"]].to_numpy()
    model = LogisticRegression().fit(X, X[:, 0] > 0.5)
    AnchorExplainer(model).fit(np.column_stack([X, X[:, 0]]))


@case(TypeError, r"(?i)sparse")
def case_table_sparse_reference():
    AnchorExplainer(Model()).fit(sp.csr_matrix(np.eye(5)))


@case()
def case_table_array_of_lists():
    X = _table()[["a", "b"]].to_numpy().tolist()
    explainer = AnchorExplainer(Model(), random_state=0).fit(X)
    anchor = explainer.explain(X[:1])[0]
    _anchor_holds(anchor, np.asarray(X), _positive(np.asarray(X)).astype(int))


@case()
def case_table_huge_values():
    X = _table()
    X["b"] = X["b"] * 1e300
    _explain_table(X)


@case()
def case_table_constant_column():
    X = _table().assign(k=1.0)
    with pytest.warns(UserWarning, match=r"\['k'\] have a single value"):
        explainer = AnchorExplainer(Model(), random_state=0).fit(X)
    anchor = explainer.explain(X.iloc[[0]])[0]
    _anchor_holds(anchor, X, _positive(X).astype(int), X.iloc[[0]])


@case(ValueError, r"Cannot use feature\(s\) \['c'\]: every value is missing")
def case_table_all_missing_column():
    X = _table()
    X["c"] = None
    AnchorExplainer(Model()).fit(X)


@case(ValueError, r"y contains classes \['maybe'\]")
def case_table_y_unknown_class():
    X = _table()[["a", "b"]]
    model = LogisticRegression().fit(X, np.where(X["a"] > 0.5, "yes", "no"))
    AnchorExplainer(model).fit(X).explain(X.iloc[[0]], y=["maybe"])


@case(ValueError, r"y has 2 entries for 1 rows of X")
def case_table_y_wrong_length():
    X = _table()
    AnchorExplainer(Model()).fit(X).explain(X.iloc[[0]], y=[0, 1])


@case()
def case_table_balance_with_one_predicted_class():
    X = _table()
    explainer = AnchorExplainer(lambda X: _proba(np.ones(len(X))), balance=True).fit(X)
    anchor = explainer.explain(X.iloc[[0]])[0]
    assert anchor.is_anchor and anchor.predicates == () and anchor.prediction == 1


@case(ValueError, r"columns whose names read alike")
def case_table_column_names_reading_alike():
    X = _table()[["a", "b"]]
    X.columns = [1, "1"]
    AnchorExplainer(Model()).fit(X)


@case()
def case_table_multiindex_columns():
    X = _table()
    X.columns = pd.MultiIndex.from_tuples([("n", "a"), ("n", "b"), ("s", "c")])
    explainer = AnchorExplainer(lambda X: _proba(X.iloc[:, 0] > 0.5), random_state=0).fit(X)
    anchor = explainer.explain(X.iloc[[0]])[0]
    assert {p.feature for p in anchor.predicates} <= set(X.columns)
    _anchor_holds(anchor, X, (X.iloc[:, 0] > 0.5).astype(int), X.iloc[[0]])
    assert Anchor.from_json(anchor.to_json()).covers(X).tolist() == anchor.covers(X).tolist()


@case(TypeError, r"X must be the reference data.*got generator.*list\(X\)")
def case_table_reference_as_a_generator():
    AnchorExplainer(Model()).fit(row for row in _table().to_numpy())


@case(TypeError, r"X must be the reference data.*got generator.*list\(X\)")
def case_text_reference_as_a_generator():
    LimeExplainer(Model()).fit(d for d in _DOCS)


@case(TypeError, r"X must be the reference data.*got dict.*pd.DataFrame\(X\)")
def case_table_reference_as_a_dict():
    AnchorExplainer(Model()).fit({"a": [0.1, 0.7], "b": [0.2, 0.3]})


@case(TypeError, r"X must be the reference data.*got NoneType")
def case_reference_none():
    AnchorExplainer(Model()).fit(None)


@case(TypeError, r"X must be the reference data.*got int")
def case_reference_a_number():
    LimeExplainer(Model()).fit(5)


@case(ValueError, r"X holds documents.*TabularSampler samples the rows of a table")
def case_tabular_sampler_given_documents():
    AnchorExplainer(Model(), sampler=TabularSampler()).fit(_DOCS)


@case(TypeError, r"X must be a 1-d collection of str; got a DataFrame")
def case_text_sampler_given_a_table():
    AnchorExplainer(Model(), sampler=UnkSampler()).fit(_table())


@case(ValueError, r"score needs at least 2 rows")
def case_anchor_score_one_row():
    X = _table()
    AnchorExplainer(Model(), random_state=0).fit(X).score(X.iloc[[0]])


@case()
def case_anchor_score_held_out_rows():
    X = _table()
    explainer = AnchorExplainer(Model(), random_state=0).fit(X)
    assert anchor_scorer(rows=5)(explainer, _table(100, 1)) > 0.1


@case(ValueError, r"X has no rows or documents that can be explained")
def case_anchor_score_documents_without_words():
    AnchorExplainer(Model()).fit(_DOCS).score(["", "!"])


@case(ValueError, r"kernel_width=1e-300 gives every perturbation.*weight of 0")
def case_lime_kernel_width_tiny():
    X = _table()
    LimeExplainer(Model(), kernel_width=1e-300, n_samples=100).fit(X).explain(X.iloc[[0]])


@case(ValueError, _param("categorical_features", "TabularSampler"))
def case_anchor_categorical_features_all():
    AnchorExplainer(Model(), sampler=TabularSampler(categorical_features="all")).fit(_table())


@case(ValueError, r"categorical_features index 5 is out of range for 3")
def case_anchor_categorical_features_out_of_range():
    AnchorExplainer(Model(), sampler=TabularSampler(categorical_features=[5])).fit(_table())


@case()
def case_anchor_model_returns_integer_or_bool_one_hot():
    X = _table()
    for dtype in (int, bool):
        output = lambda X, dtype=dtype: _proba(_positive(X)).astype(dtype)  # noqa: E731
        anchor = AnchorExplainer(output, random_state=0).fit(X).explain(X.iloc[[0]])[0]
        _anchor_holds(anchor, X, _positive(X).astype(int), X.iloc[[0]])


@case(ValueError, r"model.*shape \(n_inputs, n_classes\).*shape \(1, 2, 1\)")
def case_model_returns_3d_array():
    _explain_with(lambda X: _proba(_positive(X))[:, :, None])


@case(ValueError, r"regression model returned NaN")
def case_regression_model_returns_nan():
    AnchorExplainer(lambda X: np.full(len(X), np.nan), mode="regression").fit(_table())


@case(ValueError, r"model.*returned strings")
def case_regression_model_returns_strings():
    X = _table()
    AnchorExplainer(lambda X: np.array(["high"] * len(X)), mode="regression").fit(X)


@case(ValueError, r"LIME.*y contains 7, which is not a class|y contains 7, which is not a class")
def case_lime_y_unknown_class():
    X = _table()
    LimeExplainer(Model()).fit(X).explain(X.iloc[[0]], y=[7])


@case(ValueError, r"target_class=7 is not a class of the model")
def case_lime_target_class_unknown():
    LimeExplainer(Model(), target_class=7).fit(_table())


@case(NotFittedError, r"AnchorExplainer.*not fitted")
def case_clone_of_fitted_explainer_is_not_fitted():
    from sklearn.base import clone

    clone(AnchorExplainer(Model()).fit(_table())).explain(_table().iloc[[0]])


@case()
def case_pickled_explainer_explains_alike():
    import pickle

    X = _table()
    explainer = AnchorExplainer(Model(), random_state=0).fit(X)
    copy = pickle.loads(pickle.dumps(explainer))
    assert copy.explain(X.iloc[[0]])[0] == explainer.explain(X.iloc[[0]])[0]


@case()
def case_array_explained_with_integers():
    X = _table()[["a", "b"]].to_numpy()
    explainer = AnchorExplainer(Model(), random_state=0).fit(X)
    anchor = explainer.explain(np.array([[1, 0]]))[0]
    _anchor_holds(anchor, X, _positive(X).astype(int), np.array([[1.0, 0.0]]))


@case()
def case_lime_table_weights_have_the_right_sign():
    X = _table()
    explainer = LimeExplainer(Model(), n_samples=500, random_state=0, n_features=1).fit(X)
    row = X[X["a"] > 0.9].iloc[[0]]
    name, weight = explainer.explain(row)[0].as_list()[0]
    assert name.startswith("a") and weight > 0.5


# -- documents ------------------------------------------------------------------------------------
@case(TypeError, r"X\[0\] is a bytes.*decode")
def case_text_reference_as_bytes():
    AnchorExplainer(Model()).fit([d.encode() for d in _DOCS])


@case(TypeError, r"X\[0\] is a bytes.*decode")
def case_lime_text_reference_as_bytes():
    LimeExplainer(Model()).fit([d.encode() for d in _DOCS])


@case(TypeError, r"X\[0\] is a bytes.*decode")
def case_text_explained_documents_as_bytes():
    AnchorExplainer(Model()).fit(_DOCS).explain([b"a good film"])


@case(TypeError, r"X\[0\] is a bytes.*decode")
def case_aggregator_documents_as_bytes():
    GlobalAnchorAggregator(Model()).fit([d.encode() for d in _DOCS])


@case(TypeError, r"X\[0\] is a bytes.*decode")
def case_text_reference_as_numpy_bytes():
    AnchorExplainer(Model()).fit(np.array([d.encode() for d in _DOCS]))


@case(TypeError, r"X\[1\] is a NoneType")
def case_text_document_none():
    AnchorExplainer(Model()).fit(_DOCS).explain(["a good film", None])


@case(TypeError, r"X must be a collection of documents.*not a single string")
def case_text_single_string():
    AnchorExplainer(Model()).fit(_DOCS).explain("a good film")


@case(ValueError, r"X\[0\] has no words")
def case_text_emoji_only_document():
    AnchorExplainer(Model()).fit(_DOCS).explain(["😀🎉 !!"])


@case(ValueError, r"X\[1\] has no words")
def case_text_whitespace_document():
    AnchorExplainer(Model()).fit(_DOCS).explain(["a good film", " \t\n "])


@case(ValueError, r"X\[0\] has no words")
def case_lime_text_empty_document():
    LimeExplainer(Model()).fit(_DOCS).explain([""])


def _explain_document(document, explainer_class=AnchorExplainer):
    explainer = explainer_class(Model(), random_state=0).fit(_DOCS)
    return explainer.explain([document])[0]


@case()
def case_text_unicode_document():
    anchor = _explain_document("naïve café 東京 😀 good ✓")
    assert [p.value for p in anchor.predicates] == ["good"] and anchor.prediction == 1


@case()
def case_text_zero_width_and_control_characters():
    anchor = _explain_document("good\u200b\u0000 film\u202e\x07")
    assert "good" in [p.value for p in anchor.predicates] and anchor.prediction == 1


@case()
def case_text_lone_surrogate():
    anchor = _explain_document("good \ud800 film")
    assert [p.value for p in anchor.predicates] == ["good"] and anchor.prediction == 1


@case()
def case_text_one_very_long_word():
    anchor = _explain_document("good " + "x" * 20_000)
    assert [p.value for p in anchor.predicates] == ["good"]


@case()
def case_text_numpy_and_series_documents():
    for docs in (np.array(_DOCS), pd.Series(_DOCS)):
        explainer = AnchorExplainer(Model(), random_state=0).fit(docs)
        anchor = explainer.explain(docs[:1])[0]
        assert [p.value for p in anchor.predicates] == ["good"]


@case()
def case_lime_unicode_document():
    e = _explain_document("naïve café good 東京", LimeExplainer)
    name, weight = e.as_list()[0]
    assert name == "good" and weight > 0.5


@case(TypeError, r"X must be a 1-d collection of str; got a DataFrame")
def case_text_explainer_given_a_table():
    AnchorExplainer(Model()).fit(_DOCS).explain(_table())


@case(ValueError, r"fitted on a DataFrame.*got list")
def case_table_explainer_given_documents():
    AnchorExplainer(Model()).fit(_table()).explain(["a good film"])


@case(ValueError, r"model.*returned strings")
def case_text_model_returns_strings():
    AnchorExplainer(lambda d: np.array([["0", "1"]] * len(d))).fit(_DOCS).explain(_DOCS[:1])


@case()
def case_aggregator_unicode_and_empty_documents():
    docs = [*_DOCS, "", "😀", "naïve good café", "東京 good"]
    aggregator = GlobalAnchorAggregator(
        Model(),
        vocabulary=WordFilter(min_count=1, stop_words=None),
        sample_size=16,
        random_state=0,
    ).fit(docs)
    assert aggregator.top_terms_[1][0][0] == "good"
    assert aggregator.n_documents_seen_ == len(docs)


@case(ValueError, r"X.*no words")
def case_aggregator_documents_without_words():
    GlobalAnchorAggregator(Model()).fit(["", " ", "!!"])


# ------------------------------------------------------------------------------- the test
@pytest.mark.parametrize("name", list(CASES))
def test_catalogue(name):
    fn, expect, match = CASES[name]
    with _deadline(_SECONDS), warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        if expect is None:
            fn()
        else:
            with pytest.raises(expect, match=match):
                fn()


# ---------------------------------------------------------------------------- properties
_COLUMN_KINDS = ("float", "int", "nullable", "text", "category", "bool", "mixed")


@st.composite
def _tables(draw):
    """A table of 2-40 rows with 1-4 columns of random kinds, some values missing."""
    n = draw(st.integers(2, 40))
    kinds = draw(st.lists(st.sampled_from(_COLUMN_KINDS), min_size=1, max_size=4))
    seed = draw(st.integers(0, 2**32 - 1))
    missing = draw(st.floats(0, 0.6))
    rng = np.random.default_rng(seed)
    columns = {}
    for j, kind in enumerate(kinds):
        if kind == "float":
            values = pd.Series(rng.normal(size=n) * 10.0 ** rng.integers(-3, 6))
        elif kind == "int":
            values = pd.Series(rng.integers(-5, 5, size=n)).astype(float)
        elif kind == "nullable":
            values = pd.Series(rng.integers(0, 4, size=n), dtype="Int64")
        elif kind == "text":
            values = pd.Series(rng.choice(["α", "b", "", " c"], size=n), dtype=object)
        elif kind == "category":
            values = pd.Series(rng.choice(["p", "q"], size=n)).astype("category")
        elif kind == "bool":
            values = pd.Series(rng.random(n) < 0.5)
        else:
            values = pd.Series(rng.choice(np.array([1, "one", 2.5], dtype=object), size=n))
        if kind != "bool":
            values = values.mask(rng.random(n) < missing)
        columns[f"col{j}" if j % 2 else j] = values
    return pd.DataFrame(columns)


def _first_column_model(X):
    """Class 1 when the first column's value, hashed, is odd: any dtype, missing values too."""
    first = X.iloc[:, 0]
    p = np.array([hash(str(v)) % 2 for v in first], dtype=float)
    return _proba(p)


_NAMED = re.compile(r"\bX\b|column|feature")


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_tables())
def test_random_tables_work_or_name_the_argument(X):
    explainer = AnchorExplainer(
        _first_column_model, random_state=0, batch_size=20, max_anchor_size=3
    )
    with _deadline(_SECONDS), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            explainer.fit(X)
            anchors = explainer.explain(X.iloc[:2])
        except ValueError as error:
            assert _NAMED.search(str(error)), error
            return
    predicted = explainer.classes_[_first_column_model(X).argmax(axis=1)]
    for i, anchor in enumerate(anchors):
        assert {p.feature for p in anchor.predicates} <= set(X.columns)
        assert anchor.covers(X.iloc[[i]]).all(), anchor
        assert anchor.prediction == predicted[i]
        assert 0.0 <= anchor.precision <= 1.0 and 0.0 <= anchor.coverage <= 1.0


_ALPHABET = st.characters(codec="utf-8", categories=("L", "M", "N", "P", "S", "Z", "Cc", "Cf"))


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.text(_ALPHABET, max_size=30), min_size=1, max_size=4))
def test_random_unicode_documents(documents):
    reference = [*documents, *_DOCS[:4]]
    explainer = AnchorExplainer(Model(), random_state=0).fit(reference)
    explainable = [d for d in documents if tokenize(d)]
    if not explainable:
        with pytest.raises(ValueError, match=r"X\[0\] has no words"):
            explainer.explain(documents[:1])
        return
    with _deadline(_SECONDS), warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(explainable)
    for document, anchor in zip(explainable, anchors):
        words = [w for w, _, _ in tokenize(document)]
        assert all(p.value in words for p in anchor.predicates)
        assert anchor.prediction == int("good" in [w.lower() for w in words])
        if anchor.is_anchor and anchor.predicates:
            assert anchor.precision >= 0.9
