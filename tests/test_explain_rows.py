"""Explaining rows: workers, the prediction cache, searches and model calls shared by rows."""

import warnings

import numpy as np
import pandas as pd
import pytest
from tabular_planted import (
    Graded,
    PlantedModel,
    SlowPlantedModel,
    _content,
    planted_data,
    row,
)

from skanchors import (
    AnchorExplainer,
    LimeExplainer,
    NoAnchorWarning,
    config_context,
)
from skanchors.samplers import TabularSampler


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
