"""perturbation="reference": D(z | A) is the reference rows that satisfy A, drawn in one order."""

import html
import warnings

import numpy as np
import pandas as pd
import pytest
from tabular_planted import COLOURS, PlantedModel, SlowPlantedModel, _content, planted_data, row

from skanchors import AnchorExplainer, NoAnchorWarning, config_context
from skanchors._explanation import Anchor
from skanchors._search import ReferenceArms, ReferenceStore
from skanchors._sharing import Shared
from skanchors._speed.cache import SampleCache
from skanchors.discretizers import EdgesDiscretizer
from skanchors.samplers import TabularSampler


def _sampler(**params):
    return TabularSampler(
        discretizer=EdgesDiscretizer(edges={"x0": [0.3, 0.7]}), perturbation="reference", **params
    )


@pytest.fixture(scope="module")
def data():
    return planted_data()


def _explainer(data, model=None, **params):
    params.setdefault("random_state", 0)
    model = PlantedModel() if model is None else model
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    return AnchorExplainer(
        model, sampler=TabularSampler(discretizer=disc, perturbation="reference"), **params
    ).fit(data)


def test_planted_rule_is_recovered_exactly(data):
    anchor = _explainer(data).explain(row(0.9, "red"))[0]
    assert anchor.is_anchor
    assert sorted(str(p) for p in anchor.predicates) == ["colour = red", "x0 > 0.7"]
    assert anchor.precision == 1.0
    expected = np.mean((data["x0"] > 0.7) & (data["colour"] == "red"))
    assert anchor.coverage == pytest.approx(expected)
    # Negative side: the broadest sufficient rule, as with the default perturbation.
    anchor = _explainer(data).explain(row(0.2, "green"))[0]
    assert anchor.is_anchor and [str(p) for p in anchor.predicates] == ["colour = green"]


def test_samples_are_unchanged_reference_rows_that_satisfy_the_rule(data):
    sampler = _sampler().fit(data)
    inst = sampler.instance(row(0.9, "red"))
    rule = tuple(i for i, p in enumerate(inst.predicates) if str(p) in ("x0 > 0.7", "colour = red"))
    keys, holds = inst.sample(rule, 500, np.random.default_rng(0))
    assert holds[:, list(rule)].all()
    reference = {tuple(r) for r in sampler._codes.tolist()}
    assert all(tuple(k) in reference for k in keys.tolist())
    drawn = inst.decode(keys)
    assert (drawn["x0"] > 0.7).all() and (drawn["colour"] == "red").all()
    # x1 and x3 come with the row: never a value combination the reference data lacks.
    pairs = set(zip(data["x0"], data["x1"], data["x3"]))
    assert set(zip(drawn["x0"], drawn["x1"], drawn["x3"])) <= pairs
    # The default perturbation makes combinations of its own.
    replace = TabularSampler(
        discretizer=EdgesDiscretizer(edges={"x0": [0.3, 0.7]}), perturbation="replace"
    ).fit(data)
    keys, _ = replace.instance(row(0.9, "red")).sample(rule, 500, np.random.default_rng(0))
    mixed = replace.instance(row(0.9, "red")).decode(keys)
    assert not set(zip(mixed["x0"], mixed["x1"], mixed["x3"])) <= pairs


def test_a_rule_no_reference_row_satisfies_has_no_samples():
    ref = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0] * 5, "b": ["u", "u", "v", "v"] * 5})
    sampler = TabularSampler(perturbation="reference").fit(ref)
    inst = sampler.instance(pd.DataFrame({"a": [0.0], "b": ["v"]}))
    names = [str(p) for p in inst.predicates]
    rule = tuple(range(len(names)))  # a <= 0.75 and b = v: no reference row
    with pytest.raises(ValueError, match="No reference row satisfies the rule"):
        inst.sample(rule, 10, np.random.default_rng(0))


def _store(data, model, target, seed=0):
    sampler = _sampler().fit(data)
    inst = sampler.instance(row(0.9, "red"))
    shared = Shared(SampleCache(0), seed, "class")

    def predict(X):
        return model.predict_proba(X).argmax(axis=1)

    return ReferenceStore(inst, predict, target, np.random.default_rng(0), shared), inst


def test_each_rule_counts_its_rows_up_to_the_first_not_drawn(data):
    """Against a brute-force recount after draws for several overlapping rules."""
    model = PlantedModel()
    store, inst = _store(data, model, target=1)
    d = inst.n_predicates
    rules = [(), (0,), (1,), (0, 1), (1, d - 1), (0, 1, d - 1)]
    rng = np.random.default_rng(1)
    for _ in range(12):
        picks = rng.choice(len(rules), size=2, replace=False)
        store.draw([(rules[i], int(rng.integers(1, 60))) for i in picks])
    _, keys, preds = inst.reference_order(0)
    labels = store._class
    for rule in rules:
        rows = np.flatnonzero(
            np.logical_and.reduce([np.ones(len(keys), bool)] + [preds[p][0] for p in rule])
        )
        undrawn = np.flatnonzero(~store._drawn[rows])
        p = int(undrawn[0]) if undrawn.size else len(rows)
        n, pos = store.prefix(rule)
        assert n == p
        assert pos == int(np.sum(labels[rows[:p]] == 1))
        assert n <= len(rows)
    # Every drawn row was predicted once (no cache: the model saw each drawn row).
    assert store.n_rows_predicted == store.size == int(store._drawn.sum())
    assert model.rows == store.size


def test_a_rule_covering_k_rows_has_at_most_k_samples(data):
    model = PlantedModel()
    store, inst = _store(data, model, target=1)
    rule = (0, 1)
    k = len(store.rows(rule))
    arms = ReferenceArms(store, [rule])
    for _ in range(5):
        arms.pull([0], k)
    assert arms.n_samples[0] == arms.n_available[0] == k
    before = model.calls
    arms.pull([0], 100)  # nothing left to draw: no model call
    assert model.calls == before


def test_a_rule_covering_few_rows_is_not_validated():
    """The planted rule holds on 8 reference rows only: too few to show precision >= 0.95."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "x0": rng.uniform(0, 0.7, size=n),
            "x1": rng.uniform(size=n),
            "colour": pd.Categorical(rng.choice(COLOURS, size=n), categories=COLOURS),
            "x3": rng.normal(size=n),
        }
    )
    frame.loc[:7, "x0"] = 0.9
    frame.loc[:7, "colour"] = "red"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        reference = _explainer(frame).explain(row(0.9, "red"))[0]
        replace = (
            AnchorExplainer(
                PlantedModel(),
                sampler=TabularSampler(discretizer=EdgesDiscretizer(edges={"x0": [0.3, 0.7]})),
                random_state=0,
            )
            .fit(frame)
            .explain(row(0.9, "red"))[0]
        )
    assert replace.is_anchor  # it can draw as many perturbations as it wants
    assert not reference.is_anchor
    assert reference.n_samples <= 8
    # Its printed form says why: the estimate reaches the threshold, the samples cannot show it.
    assert reference.precision == 1.0
    n = reference.n_samples
    why = f"{n} sample{'' if n == 1 else 's'} cannot show precision >= threshold"
    assert f"[NOT AN ANCHOR: {why}]" in str(reference)
    assert html.escape(why) in reference._repr_html_()
    low = Anchor(reference.predicates, 1, 0.9, 0.01, False, 0.95, n_samples=500)
    assert str(low).endswith("[NOT AN ANCHOR: precision below threshold]")


class BigUnlessFlipped:
    """Predicts 1 iff ``a == "big"``, with 1 row in 10 flipped by digits of x1 (no bin of x1
    isolates them)."""

    classes_ = np.array([0, 1])

    def predict_proba(self, X):
        flip = (X["x1"].to_numpy() * 1000).astype(int) % 10 == 0
        p = ((X["a"].to_numpy() == "big") ^ flip).astype(float)
        return np.column_stack([1 - p, p])


def test_the_fallback_is_the_rule_most_surely_precise_not_the_best_of_three_rows():
    """No rule validates. "b = rare" covers 3 rows, all predicted 1; "a = big" covers 200 at
    0.9. The best mean is the 3-row rule, which says nothing; the fallback is "a = big"."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "a": pd.Categorical(np.repeat(["big", "small"], n // 2)),
            "b": pd.Categorical(["common"] * n, categories=["common", "rare"]),
            "x1": rng.uniform(size=n),
        }
    )
    frame.loc[:2, "b"] = "rare"
    frame.loc[:2, "x1"] = [0.5555, 0.2222, 0.7777]  # not flipped
    model = BigUnlessFlipped()
    flipped = (frame["x1"] * 1000).astype(int) % 10 == 0
    assert 0.05 < flipped[frame["a"] == "big"].mean() < 0.15  # "a = big" cannot reach 0.95
    instance = pd.DataFrame({"a": ["big"], "b": ["rare"], "x1": [0.5555]})
    explainer = AnchorExplainer(
        model,
        sampler=TabularSampler(perturbation="reference", bounds="bin"),
        beam_size=2,
        random_state=0,
    )
    with pytest.warns(NoAnchorWarning):
        anchor = explainer.fit(frame).explain(instance)[0]
    assert not anchor.is_anchor
    assert [str(p) for p in anchor.predicates] == ["a = big"]
    assert 100 <= anchor.n_samples <= 200
    assert 0.8 < anchor.precision < 0.95


class Noisy:
    """The planted rule with about 19 % of the rows flipped: by x1 < 0.15 and by |x3| > 1.96.

    A rule that does not bound x1 away from the flips has a precision of about 0.81, below
    threshold - 0.05 = 0.85.
    """

    classes_ = np.array([0, 1])

    def predict_proba(self, X):
        p = (X["x0"].to_numpy() > 0.7) & (X["colour"].to_numpy() == "red")
        flip = (X["x1"].to_numpy() < 0.15) | (np.abs(X["x3"].to_numpy()) > 1.96)
        p = (p ^ flip).astype(float)
        return np.column_stack([1 - p, p])


def test_held_out_precision_of_reference_anchors():
    """>= 95 % of anchors reach threshold - 0.05 on fresh rows of the data's distribution."""
    data = planted_data(n=6000, seed=5)
    fresh = planted_data(n=50_000, seed=6)
    model = Noisy()
    explainer = _explainer(data, model, threshold=0.9, beam_size=1, random_state=2)
    rows = planted_data(n=40, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(rows)
    predicted = model.predict_proba(fresh).argmax(axis=1)
    checked = reached = 0
    for anchor in anchors:
        if not anchor.is_anchor:
            continue
        mask = anchor.covers(fresh)
        reached += np.mean(predicted[mask] == anchor.prediction) >= 0.9 - 0.05
        checked += 1
    assert checked >= 20
    assert reached / checked >= 0.95


def test_rows_share_predictions_without_changing_anchors(data):
    X = pd.concat([row(0.9, "red"), row(0.2, "green"), row(0.8, "red", x1=0.1), row(0.5, "blue")])
    runs, rows = [], []
    for n_jobs, cache_size in ((1, 250_000), (2, 250_000), (1, 0)):
        model = PlantedModel()
        with config_context(cache_size=cache_size):
            explainer = _explainer(data, model, n_jobs=n_jobs)
            anchors = explainer.explain(X)
        runs.append([(a.predicates, a.precision, a.n_samples, a.is_anchor) for a in anchors])
        rows.append(model.rows)
    assert runs[0] == runs[1] == runs[2]
    alone = _explainer(data).explain(X.iloc[[2]])[0]
    assert (alone.predicates, alone.precision, alone.n_samples) == runs[0][2][:3]
    # Explained together, the rows read the reference rows in the same order: the second row
    # on reuses predictions; without the cache every search predicts its own rows.
    assert rows[0] < rows[2]


def test_balanced_reference_never_draws_rows_of_weight_zero(data):
    weights = np.where(data["colour"] == "blue", 0.0, 1.0)
    sampler = _sampler().fit(data, sample_weight=weights)
    order, _, _ = sampler._reference_order(3)
    assert len(order) == int((weights > 0).sum())
    assert (data["colour"].to_numpy()[order] != "blue").all()
    # Rows are kept in proportion to their weight (all heavy ones, a fifth of the light ones),
    # so the order is a sample of the weighted distribution: 5/6 of it heavy.
    w = np.where(data["x0"] > 0.5, 5.0, 1.0)
    heavy = data["x0"].to_numpy() > 0.5
    order, _, _ = _sampler().fit(data, sample_weight=w)._reference_order(3)
    assert len(set(order.tolist())) == len(order)
    assert set(np.flatnonzero(heavy).tolist()) <= set(order.tolist())
    assert heavy[order].mean() == pytest.approx(5 / 6, abs=0.03)


def test_unknown_perturbation_is_rejected(data):
    with pytest.raises(ValueError, match="The 'perturbation' parameter of TabularSampler must"):
        TabularSampler(perturbation="real").fit(data)


def test_the_explainer_passes_perturbation_to_its_sampler(data):
    explainer = _explainer(data)
    assert explainer.sampler_.perturbation == "reference"
    same = AnchorExplainer(PlantedModel(), sampler=_sampler(), random_state=0).fit(data)
    x = row(0.8, "red", x1=0.1)
    a, b = explainer.explain(x)[0], same.explain(x)[0]
    assert (a.predicates, a.precision, a.n_samples) == (b.predicates, b.precision, b.n_samples)
    replace = AnchorExplainer(
        PlantedModel(),
        sampler=TabularSampler(
            discretizer=EdgesDiscretizer(edges={"x0": [0.3, 0.7]}), perturbation="replace"
        ),
        random_state=0,
    ).fit(data)
    assert replace.explain(x)[0].n_samples != a.n_samples


def test_perturbation_errors(data):
    with pytest.raises(ValueError, match="perturbation"):
        AnchorExplainer(PlantedModel(), sampler=TabularSampler(perturbation="real")).fit(data)
    # (the old spelling, an explainer's keyword, with a sampler of one's own)
    with pytest.raises(ValueError, match="perturbation configure the tabular sampler"):
        AnchorExplainer(PlantedModel(), sampler=_sampler(), perturbation="reference").fit(data)
    documents = "X holds documents .*TabularSampler samples the rows of a table"
    with pytest.raises(ValueError, match=documents):
        AnchorExplainer(PlantedModel(), sampler=TabularSampler(perturbation="reference")).fit(
            ["a text", "another"]
        )
    with pytest.raises(ValueError, match="bounds configure the tabular sampler"):
        AnchorExplainer(PlantedModel(), sampler=_sampler(), bounds="all").fit(data)
    with pytest.raises(ValueError, match=documents):
        AnchorExplainer(PlantedModel(), sampler=TabularSampler(bounds="all")).fit(
            ["a text", "another"]
        )
    with pytest.raises(ValueError, match="bounds"):
        AnchorExplainer(PlantedModel(), sampler=TabularSampler(bounds="every")).fit(data)
    with pytest.raises(ValueError, match="The 'bounds' parameter of TabularSampler must be"):
        TabularSampler(bounds="every").fit(data)


def test_rows_explained_together_with_a_slow_model_merge_calls_and_keep_anchors():
    """A slow model makes the rows' searches share calls (threads): no hang, same anchors."""
    import threading

    data = planted_data(n=600, seed=3)
    X = pd.concat([row(0.9, "red"), row(0.2, "green"), row(0.91, "red"), row(0.5, "blue")] * 2)
    model = SlowPlantedModel()
    explainer = _explainer(data, model)
    alone = [_content(explainer.explain(X.iloc[[i]])[0]) for i in range(len(X))]
    explainer.fit(data)  # an empty prediction cache
    model.calls = 0
    out = []
    worker = threading.Thread(target=lambda: out.append(explainer.explain(X)), daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "rows explained together hung"
    assert [_content(a) for a in out[0]] == alone
    searches = [a.n_model_calls - 1 for a in out[0]]  # (each counts its row's call)
    assert model.calls - 2 < sum(searches)  # merged calls (2: the rows' own predictions)


def test_pickled_sampler_rebuilds_its_drawing_order(data):
    import pickle

    sampler = _sampler().fit(data)
    order, _, _ = sampler._reference_order(7)
    sampler._ordered_predicate(7, sampler.instance(row(0.9, "red"))._gids[0])
    copy = pickle.loads(pickle.dumps(sampler))
    assert copy._orders == {} and copy._ordered == {}
    np.testing.assert_array_equal(copy._reference_order(7)[0], order)


@pytest.mark.parametrize("perturbation", ["reference", "replace"])
def test_precision_bounds_are_the_ones_is_anchor_was_decided_by(perturbation):
    # The bounds were reported at level 1 - delta, the validation's at the union bound over
    # the rules it may validate: "63 samples cannot show precision >= threshold" printed
    # next to precision_bounds (0.964, 1.0) for 3 of 20 Titanic passengers.
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import train_test_split

    from skanchors._bandit import kl_lower_bound
    from skanchors._search import ACCEPTANCE_TOLERANCE
    from skanchors.datasets import load_titanic

    X, y = load_titanic(return_X_y=True)
    X_train, X_test, y_train, _ = train_test_split(X, y, random_state=0)
    model = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0)
    model.fit(X_train, y_train)
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(perturbation=perturbation), max_anchor_size=3, random_state=0
    ).fit(X_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(X_test.iloc[:20])
    if perturbation == "reference":
        # plain KL bounds (the replacing sampler's are stratified) at the level of delta
        # shared among 1 + beam_size * max_anchor_size rules
        beta = np.log((1 + explainer._beam_size() * 3) / explainer.delta)
        for a in anchors:
            lower = kl_lower_bound(np.array([a.precision]), np.array([beta / a.n_samples]))
            assert a.precision_bounds[0] == pytest.approx(lower[0], abs=1e-9)
    reads = [
        a.precision >= a.threshold and a.precision_bounds[0] > a.threshold - ACCEPTANCE_TOLERANCE
        for a in anchors
    ]
    assert [a.is_anchor for a in anchors] == reads
    short = [a for a in anchors if not a.is_anchor and a.precision >= a.threshold]
    if perturbation == "reference":  # all of a rule's rows were drawn, and not enough
        assert len(short) >= 3
    else:
        assert 0 < sum(reads) < len(anchors)


# ------------------------------------------------------------------ perturbation="auto"
class Correlated:
    """1 iff x0 > 0.7 (x0's top bin) and x1 > 0.5. In the data x1 > 0.5 almost always comes with
    x0 > 0.7, so on the reference rows "x0 > 0.7" alone reaches the threshold; with x1 drawn
    from other rows (replaced), it needs "x1 > 0.5" too."""

    classes_ = np.array([0, 1])

    def predict_proba(self, X):
        p = ((X["x0"].to_numpy() > 0.7) & (X["x1"].to_numpy() > 0.5)).astype(float)
        return np.column_stack([1 - p, p])


def _correlated(n, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(size=n)
    # x1 > 0.5 for 98 % of the rows with x0 > 0.7, for a fifth of the others
    high = np.where(x0 > 0.7, rng.uniform(size=n) < 0.98, rng.uniform(size=n) < 0.2)
    x1 = np.where(high, rng.uniform(0.5, 1.0, size=n), rng.uniform(0.0, 0.5, size=n))
    return pd.DataFrame({"x0": x0, "x1": x1, "x2": rng.uniform(size=n)})


def test_auto_searches_the_reference_rows_first_and_replaced_rows_where_they_are_too_few():
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7], "x1": [0.5]})
    x = pd.DataFrame({"x0": [0.9], "x1": [0.8], "x2": [0.5]})
    params = dict(sampler=TabularSampler(discretizer=disc), random_state=0)
    replaced = dict(sampler=TabularSampler(discretizer=disc, perturbation="replace"))
    large = _correlated(20_000)
    auto = AnchorExplainer(Correlated(), **params).fit(large)
    anchor = auto.explain(x)[0]
    # the broad rule that holds on the data's own rows, stated as such
    assert anchor.is_anchor and anchor.perturbation == "reference"
    assert [str(p) for p in anchor.predicates] == ["x0 > 0.7"]
    covered = large[anchor.covers(large)]
    assert np.mean(Correlated().predict_proba(covered)[:, 1]) >= 0.95
    # its fresh draws are reference rows, where the rule holds
    assert auto.perturbation_precision(anchor, 2000, random_state=0) >= 0.95
    # replaced rows need x1 too, and "x0 > 0.7" alone fails there
    replace = AnchorExplainer(Correlated(), **replaced, random_state=0).fit(large)
    strict = replace.explain(x)[0]
    assert strict.is_anchor and strict.perturbation == "replace"
    assert sorted(str(p) for p in strict.predicates) == ["x0 > 0.7", "x1 > 0.5"]
    wider = Anchor.from_dict({**anchor.to_dict(), "perturbation": "replace"})
    wider.instance = x
    assert replace.perturbation_precision(wider, 2000, random_state=0) < 0.8
    # with 300 rows the reference rows cannot show it: the replaced rows' anchor, which says so
    small = AnchorExplainer(Correlated(), **params).fit(large.iloc[:300])
    fallback = small.explain(x)[0]
    assert fallback.is_anchor and fallback.perturbation == "replace"
    assert sorted(str(p) for p in fallback.predicates) == ["x0 > 0.7", "x1 > 0.5"]
    # its costs are both searches'
    alone = AnchorExplainer(Correlated(), **replaced, random_state=0).fit(large.iloc[:300])
    assert fallback.n_rows_predicted > alone.explain(x)[0].n_rows_predicted
    # the distribution travels with the anchor
    again = Anchor.from_json(anchor.to_json())
    assert again.perturbation == "reference" and again == anchor
    assert "reference rows" in anchor._repr_html_()
    with pytest.raises(ValueError, match="perturbation"):
        Anchor.from_dict({**anchor.to_dict(), "perturbation": "sometimes"})


def test_auto_runs_each_search_at_half_of_delta(monkeypatch):
    import skanchors._explain_rows as rows_module

    seen = []
    search = rows_module._search_one

    def recording(instance, task, row, target, seed, params, *args):
        seen.append((instance.perturbation, params["delta"]))
        return search(instance, task, row, target, seed, params, *args)

    monkeypatch.setattr(rows_module, "_search_one", recording)
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7], "x1": [0.5]})
    x = pd.DataFrame({"x0": [0.9], "x1": [0.8], "x2": [0.5]})
    small = _correlated(300)
    AnchorExplainer(
        Correlated(), sampler=TabularSampler(discretizer=disc), delta=0.2, random_state=0
    ).fit(small).explain(x)
    assert seen == [("reference", 0.1), ("replace", 0.1)]
    seen.clear()
    AnchorExplainer(
        Correlated(),
        sampler=TabularSampler(discretizer=disc, perturbation="replace"),
        delta=0.2,
        random_state=0,
    ).fit(small).explain(x)
    assert seen == [("replace", 0.2)]
