"""GlobalLimeAggregator and the LIME aggregation functions (van der Linden et al. 2019)."""

import pickle

import numpy as np
import pytest
from planted_corpus import DOCS, PLANTED, STOP, PlantedModel
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from skanchors.aggregation import WordFilter
from skanchors.aggregation.lime_aggregator import GlobalLimeAggregator
from skanchors.aggregation.lime_functions import (
    aggregate_lime,
    lime_average,
    lime_homogeneity,
    lime_sqrt,
    lime_weight_sums,
)
from skanchors.metrics import aopc_k
from skanchors.samplers import tokenize

FAST = dict(
    k=3,
    vocabulary=WordFilter(min_count=2),
    n_samples=150,
    n_features=5,
    batch_size=10,
    random_state=0,
)


def top_words(agg, label="spam"):
    return [w for w, _ in agg.top_terms_[label]]


# ----------------------------------------------------------------- aggregation functions
# word x class sums over S[c]: word 0 spam-only, word 1 on both sides, word 2 ham-only but
# pushing *away* from ham in one document, word 3 absent from class 0.
WS = np.array([[0.8, 0.0], [0.3, 0.3], [-0.1, 0.5], [0.0, 0.2]])
ABS = np.array([[0.8, 0.0], [0.5, 0.3], [0.5, 0.5], [0.0, 0.2]])
DC = np.array([[4, 0], [3, 3], [2, 5], [0, 1]])


def test_sqrt_and_average_by_hand():
    np.testing.assert_allclose(lime_sqrt(ABS)[:, 0], np.sqrt([0.8, 0.5, 0.5, 0.0]))
    av = lime_average(WS, DC)
    np.testing.assert_allclose(av[:3, 0], [0.2, 0.1, -0.05])
    assert np.isnan(av[3, 0]) and np.isnan(av[0, 1])
    np.testing.assert_allclose(av[1:, 1], [0.1, 0.1, 0.2])


def test_homogeneity_by_hand():
    imp = np.sqrt(ABS)
    p = imp / imp.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.nansum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
    # words 0 and 3 live in one class (H = 0), word 2 is evenly split (H = log 2 = H_max)
    assert ent[0] == ent[3] == 0.0 and ent[2] == pytest.approx(np.log(2))
    factor = 1 - (ent - 0.0) / np.log(2)
    np.testing.assert_allclose(lime_homogeneity(ABS), factor[:, None] * imp)
    h = lime_homogeneity(ABS)
    assert h[0, 0] == pytest.approx(np.sqrt(0.8)) and h[2].tolist() == [0.0, 0.0]
    # the entropy range is over the words of the mask only; the others are NaN
    masked = lime_homogeneity(ABS, mask=[True, True, False, True])
    # words 0, 1, 3 remain: word 1 now has the largest entropy (factor 0), 0 and 3 the least
    assert masked[1].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(masked[[0, 3]], imp[[0, 3]])
    assert np.isnan(masked[2]).all()
    # all words of equal entropy: factor 1; no importance: 0
    np.testing.assert_allclose(lime_homogeneity([[4.0, 0.0], [0.0, 0.0]]), [[2, 0], [0, 0]])


def test_aggregate_lime_filters_and_errors():
    s = aggregate_lime("sqrt", WS, ABS, DC)
    assert np.isnan(s[3, 0]) and not np.isnan(s[2, 0])  # word 3 is in no document of class 0
    rare = aggregate_lime("average", WS, ABS, DC, min_count=5)  # occurrences 4, 6, 7, 1
    assert np.isnan(rare[[0, 3]]).all() and not np.isnan(rare[1, 0])
    masked = aggregate_lime("homogeneity", WS, ABS, DC, mask=[True, True, False, True])
    np.testing.assert_allclose(
        masked, lime_homogeneity(ABS, [1, 1, 0, 1]) * np.where(DC, 1, np.nan)
    )
    with pytest.raises(ValueError, match="aggregation must be one of"):
        aggregate_lime("mean", WS, ABS, DC)
    with pytest.raises(ValueError, match="abs_sums must be non-negative"):
        lime_sqrt(-ABS)
    with pytest.raises(ValueError, match="different shapes"):
        aggregate_lime("sqrt", WS, ABS, DC[:2])


def test_lime_weight_sums_from_a_weight_matrix():
    from scipy import sparse

    W = sparse.csr_matrix(np.array([[0.5, -0.1, 0.0], [0.3, 0.0, 0.0], [-0.2, 0.4, 0.0]]))
    presence = np.array([[1, 1, 1], [1, 0, 1], [1, 1, 0]])
    ws, ab, dc = lime_weight_sums(W, [1, 1, 0], 2, presence=presence)
    np.testing.assert_allclose(ws, [[-0.2, 0.8], [0.4, -0.1], [0, 0]])
    np.testing.assert_allclose(ab, [[0.2, 0.8], [0.4, 0.1], [0, 0]])
    assert dc.tolist() == [[1, 2], [1, 1], [0, 2]]
    with pytest.raises(ValueError, match="predicted has 2 entries"):
        lime_weight_sums(W, [1, 0], 2)


# ----------------------------------------------------------------- the aggregator
@pytest.fixture(scope="module")
def fitted():
    return GlobalLimeAggregator(PlantedModel(), **FAST).fit(DOCS)


@pytest.mark.parametrize("aggregation", ["sqrt", "average", "homogeneity"])
def test_planted_words_are_the_top_terms(aggregation):
    agg = GlobalLimeAggregator(PlantedModel(), aggregation=aggregation, **FAST).fit(DOCS)
    assert sorted(top_words(agg)) == sorted(PLANTED)
    for terms in agg.top_terms_.values():
        assert not {w for w, _ in terms} & set(STOP)
        assert all(s > 0 for _, s in terms) or aggregation == "homogeneity"
    assert agg.scores_.loc[list(STOP)].isna().all().all()
    assert agg.n_documents_seen_ == len(DOCS)
    # a planted word never pushes towards ham: it is not a top term of ham
    assert not set(top_words(agg, "ham")) & set(PLANTED)


@pytest.mark.parametrize("aggregation", ["sqrt", "average", "homogeneity"])
def test_a_class_whose_probability_never_moves_has_no_top_terms(aggregation):
    # UNK perturbations never bring "cash" into the other documents: P(class 0) is the same on
    # every perturbation, every LIME weight is 0, and class 0 has no top term (rounding error
    # of 1e-31 ranked "home", "at", "today" there)
    def model(texts):
        p = np.array([0.9 if "cash" in t.split() else 0.1 for t in texts])
        return np.column_stack([1 - p, p])

    docs = ["lunch at home today", "meeting later at home", "cash prize now", "win cash today"]
    agg = GlobalLimeAggregator(
        model,
        k=3,
        aggregation=aggregation,
        n_samples=200,
        vocabulary=WordFilter(min_count=1, stop_words=None),
        random_state=0,
    ).fit(docs * 3)
    assert agg.top_terms_[0] == []
    assert [w for w, _ in agg.top_terms_[1]][0] == "cash"


def test_weights_bookkeeping(fitted):
    spam = fitted.weight_sums_["spam"]
    assert (spam[list(PLANTED)] > 0.5).all()
    assert (fitted.abs_weight_sums_ >= fitted.weight_sums_.abs() - 1e-12).all().all()
    assert (fitted.selected_counts_ <= fitted.document_counts_).all().all()
    n_words = sum(len(tokenize(d)) for d in DOCS)
    assert fitted.occurrence_counts_.sum() == n_words
    assert fitted.document_counts_.to_numpy().sum() == sum(len(set(d.split())) for d in DOCS)
    # one model call of n_samples + 1 rows per document, as LIME does
    assert fitted.n_model_calls_ == len(DOCS)
    assert fitted.n_rows_predicted_ == len(DOCS) * (FAST["n_samples"] + 1)
    # (0.48 with the LIME package's text kernel; 0.52 with the paper's at the same width)
    assert 0.45 < fitted.mean_local_fidelity_ <= 1.0
    assert fitted.explainer_.explain([DOCS[0]])[0].n_samples == FAST["n_samples"]


def test_aopc_of_lime_top_terms_beats_random_and_inverse_rankings(fitted):
    model = PlantedModel()
    lime = aopc_k(model, DOCS, fitted.top_terms_, k=3)
    assert fitted.score(DOCS) == pytest.approx(lime)
    rng = np.random.default_rng(0)
    vocab = [w for w in fitted.scores_.index if w not in STOP]
    random = {c: list(rng.choice(vocab, size=3, replace=False)) for c in fitted.classes_}
    inverse = {}
    for c in fitted.classes_:
        col = fitted.compute_scores("sqrt")[c].dropna()
        inverse[c] = list(col.sort_values().index[:3])
    assert lime > aopc_k(model, DOCS, random, k=3) + 0.1
    assert lime > aopc_k(model, DOCS, inverse, k=3) + 0.1


def test_every_aggregation_from_one_run(fitted):
    for name in ("sqrt", "average", "homogeneity"):
        other = GlobalLimeAggregator(PlantedModel(), aggregation=name, **FAST).fit(DOCS)
        assert fitted.compute_top_terms(name) == other.top_terms_
        assert fitted.compute_scores(name).equals(other.scores_)
    with pytest.raises(ValueError, match="aggregation must be one of"):
        fitted.compute_scores("pr")


def test_every_parameter_changes_the_result(fitted):
    def result(agg):
        # (stop words are scored NaN by default and scored with stop_words=None; on the
        # planted corpus their weights change no sum, now that weights of 1e-31 are 0)
        return (
            agg.weight_sums_.to_numpy().sum(),
            agg.n_rows_predicted_,
            agg.top_terms_,
            int(agg.scores_.isna().to_numpy().sum()),
        )

    ref = result(fitted)
    for change in (
        dict(n_samples=100),
        dict(n_features=2),
        dict(feature_selection="highest_weights"),
        dict(kernel_width=5.0),
        dict(random_state=1),
        dict(max_documents=20),
        dict(vocabulary=WordFilter(min_count=2, stop_words=None)),
        dict(vocabulary=WordFilter(min_count=40)),
        dict(k=2),
    ):
        other = GlobalLimeAggregator(PlantedModel(), **{**FAST, **change}).fit(DOCS)
        assert result(other) != ref, change
    from skanchors.samplers import UnkSampler

    class Recording(PlantedModel):
        def __init__(self):
            super().__init__()
            self.seen = []

        def predict_proba(self, X):
            self.seen.extend(X)
            return super().predict_proba(X)

    for sampler, unk in ((None, True), (UnkSampler(token=None), False)):
        model = Recording()
        GlobalLimeAggregator(model, sampler=sampler, **FAST).fit(DOCS[:5])
        assert any("UNK" in t for t in model.seen) is unk


def test_partial_fit_over_batches_equals_fit(fitted):
    part = GlobalLimeAggregator(PlantedModel(), **FAST)
    for chunk in (DOCS[:7], DOCS[7:33], DOCS[33:]):
        part.partial_fit(chunk)
    for attr in ("weight_sums_", "abs_weight_sums_", "document_counts_", "selected_counts_"):
        a = getattr(fitted, attr).sort_index()
        b = getattr(part, attr).sort_index()
        np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), atol=1e-12, err_msg=attr)
    assert part.top_terms_.keys() == fitted.top_terms_.keys()
    for c in fitted.top_terms_:
        assert [w for w, _ in part.top_terms_[c]] == [w for w, _ in fitted.top_terms_[c]]
    assert part.n_documents_seen_ == fitted.n_documents_seen_ == len(DOCS)
    assert part.n_rows_predicted_ == fitted.n_rows_predicted_
    assert len(part.history_) == 1 + 3 + 3  # batches of 10 within each call


def test_same_result_for_any_n_jobs_and_order(fitted):
    par = GlobalLimeAggregator(PlantedModel(), n_jobs=2, **FAST).fit(DOCS)
    assert par.top_terms_ == fitted.top_terms_
    given = GlobalLimeAggregator(PlantedModel(), order="given", **FAST).fit(DOCS)
    np.testing.assert_allclose(
        given.weight_sums_.sort_index().to_numpy(),
        fitted.weight_sums_.sort_index().to_numpy(),
        atol=1e-12,
    )


def test_confidence_order_and_anytime_stops():
    seen = []
    agg = GlobalLimeAggregator(
        PlantedModel(high=0.99),
        callback=lambda a: seen.append(dict(a.top_terms_)) or len(seen) == 2,
        **FAST,
    ).fit(DOCS)
    assert agg.stopped_early_ and agg.n_documents_seen_ == 20
    # the 20 spam documents (confidence 0.99 > 0.9) come first
    assert agg.document_counts_["ham"].sum() == 0
    assert sorted(w for w, _ in seen[-1]["spam"]) == sorted(PLANTED)
    # the clock is read between the documents of a batch: none is explained in time
    timed = GlobalLimeAggregator(PlantedModel(), max_time=1e-9, **FAST).fit(DOCS)
    assert timed.stopped_early_ and timed.n_documents_seen_ == 0 and timed.history_ == []
    assert timed.unprocessed_indices_.tolist() == list(range(len(DOCS)))


@pytest.mark.parametrize("extra", [dict(), dict(order="random"), dict(max_documents=45)])
def test_checkpoint_resume_equals_an_uninterrupted_run(tmp_path, extra):
    # GlobalLimeAggregator had no checkpoint although the docs gave it the same interface
    params = dict(FAST, **extra)
    path = str(tmp_path / "lime.joblib")
    first = GlobalLimeAggregator(
        PlantedModel(), checkpoint=path, callback=lambda a: a.n_documents_seen_ >= 20, **params
    ).fit(DOCS)
    assert first.stopped_early_ and first.n_documents_seen_ == 20
    whole = GlobalLimeAggregator(PlantedModel(), **params).fit(DOCS)
    model = PlantedModel()
    resumed = GlobalLimeAggregator(model, checkpoint=path, **params).fit(DOCS)
    assert resumed.n_documents_seen_ == whole.n_documents_seen_
    assert resumed.n_rows_predicted_ == whole.n_rows_predicted_
    for table in ("weight_sums_", "abs_weight_sums_", "document_counts_", "selected_counts_"):
        np.testing.assert_allclose(
            getattr(resumed, table).sort_index().to_numpy(),
            getattr(whole, table).sort_index().to_numpy(),
            atol=1e-12,
        )
    assert resumed.top_terms_ == whole.top_terms_
    assert resumed.mean_local_fidelity_ == pytest.approx(whole.mean_local_fidelity_)
    with pytest.raises(ValueError, match="other parameters.*n_samples"):
        GlobalLimeAggregator(PlantedModel(), checkpoint=path, **{**params, "n_samples": 99}).fit(
            DOCS
        )
    # the aggregation is read from the sums: another one resumes the same state
    other = GlobalLimeAggregator(
        PlantedModel(), checkpoint=path, aggregation="average", **params
    ).fit(DOCS)
    assert other.n_documents_seen_ == whole.n_documents_seen_


def test_a_resumed_run_explains_with_the_checkpoint_s_seed(tmp_path):
    # the explainer was made with the new process's seed before the checkpoint's was read:
    # a RandomState that moved on gave other weights (up to 0.35 off)
    path = str(tmp_path / "lime.joblib")
    params = dict(FAST, random_state=None)
    state = np.random.RandomState(0)
    GlobalLimeAggregator(
        PlantedModel(), checkpoint=path, callback=lambda a: a.n_documents_seen_ >= 20,
        **{**params, "random_state": state},
    ).fit(DOCS)  # fmt: skip
    whole = GlobalLimeAggregator(
        PlantedModel(), **{**params, "random_state": np.random.RandomState(0)}
    ).fit(DOCS)
    resumed = GlobalLimeAggregator(
        PlantedModel(), checkpoint=path, **{**params, "random_state": state}
    ).fit(DOCS)
    np.testing.assert_allclose(
        resumed.weight_sums_.sort_index().to_numpy(),
        whole.weight_sums_.sort_index().to_numpy(),
        atol=1e-12,
    )


def test_a_checkpoint_of_the_other_aggregator_is_named(tmp_path):
    from skanchors import GlobalAnchorAggregator

    path = str(tmp_path / "state.joblib")
    GlobalAnchorAggregator(PlantedModel(), checkpoint=path, k=3, batch_size=10).fit(DOCS[:20])
    with pytest.raises(ValueError, match="holds a GlobalAnchorAggregator state, not a Global"):
        GlobalLimeAggregator(PlantedModel(), checkpoint=path, **FAST).fit(DOCS[:20])


def test_model_error_keeps_finished_batches():
    model = PlantedModel()
    seen = []

    def arm(agg):
        seen.append(agg.n_documents_seen_)
        if len(seen) == 2:
            model.fail = True

    agg = GlobalLimeAggregator(model, callback=arm, **FAST)
    with pytest.raises(RuntimeError, match="model crashed"):
        agg.fit(DOCS)
    assert seen == [10, 20] and agg.n_documents_seen_ == 20
    assert agg.document_counts_.to_numpy().sum() > 0 and len(agg.history_) == 2


def test_verbose_prints_progress(capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    GlobalLimeAggregator(PlantedModel(), verbose=1, **FAST).fit(DOCS[:20])
    out = capsys.readouterr().out
    assert "20 documents" in out and "spam:" in out


def test_transform_score_gridsearch_clone_and_pickle(fitted):
    Xt = fitted.transform(["a prize and cash", "nothing here"])
    names = fitted.get_feature_names_out().tolist()
    assert Xt.shape == (2, len(names))
    assert Xt[0, names.index("prize")] == 1 and Xt[1].sum() == 0
    model = PlantedModel()
    agg = GlobalLimeAggregator(model, **FAST)
    twin = clone(agg)
    assert twin.estimator is model and twin.get_params()["n_samples"] == FAST["n_samples"]
    search = GridSearchCV(agg, {"aggregation": ["sqrt", "average"]}, cv=2).fit(DOCS)
    assert search.best_score_ > 0.05
    assert search.best_estimator_.estimator is model
    assert pickle.loads(pickle.dumps(fitted)).top_terms_ == fitted.top_terms_


@pytest.mark.parametrize(
    "params, X, error, match",
    [
        ({}, [], ValueError, "X contains no documents"),
        ({}, ["ok", 3], TypeError, r"X\[1\]"),
        ({}, "one string", TypeError, "single string"),
        ({"k": 0}, DOCS, ValueError, "'k' parameter"),
        ({"aggregation": "pr"}, DOCS, ValueError, "'aggregation' parameter"),
        ({"n_samples": 0}, DOCS, ValueError, "'n_samples' parameter"),
        ({"n_features": 0}, DOCS, ValueError, "'n_features' parameter"),
        ({"kernel_width": 0.0}, DOCS, ValueError, "'kernel_width' parameter"),
        ({"feature_selection": "lasso"}, DOCS, ValueError, "'feature_selection' parameter"),
        ({"batch_size": 0}, DOCS, ValueError, "'batch_size' parameter"),
        ({"vocabulary": WordFilter(min_count=0)}, DOCS, ValueError, "'min_count' parameter"),
        (
            {"vocabulary": WordFilter(stop_words="french")},
            DOCS,
            ValueError,
            "The 'stop_words' parameter of WordFilter",
        ),
        ({"vocabulary": WordFilter(stop_words=["a", 1])}, DOCS, TypeError, "stop_words must be"),
        ({"sampler": "unk"}, DOCS, ValueError, "'sampler' parameter"),
    ],
)
def test_bad_input_names_the_argument(params, X, error, match):
    with pytest.raises(error, match=match):
        GlobalLimeAggregator(PlantedModel(), **params).fit(X)


def test_unfitted_and_wordless_documents():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        GlobalLimeAggregator(PlantedModel()).transform(["x"])
    agg = GlobalLimeAggregator(PlantedModel(), **FAST).fit(DOCS[:10] + ["?!", ""])
    assert agg.n_documents_seen_ == 12


def test_same_model_and_data_as_the_anchor_aggregator():
    from skanchors.aggregation import GlobalAnchorAggregator

    model = PlantedModel()
    words = WordFilter(min_count=2)
    anchors = GlobalAnchorAggregator(model, k=3, vocabulary=words, sample_size=40, random_state=0)
    lime = GlobalLimeAggregator(model, **FAST)
    a, b = anchors.fit(DOCS), lime.fit(DOCS)
    assert sorted(top_words(a)) == sorted(top_words(b)) == sorted(PLANTED)
    assert b.score(DOCS) == pytest.approx(a.score(DOCS))
