"""GlobalAnchorAggregator and the aggregation functions (seed 001: Mor, Belinkov, Kimelfeld)."""

import json
import os
import pickle
import signal
import warnings
import zipfile

import joblib
import numpy as np
import pytest
from planted_corpus import DOCS, FILLER, PLANTED, STOP, PlantedModel, make_docs
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from skanchors.aggregation import (
    AdaptiveThreshold,
    GlobalAnchorAggregator,
    WordFilter,
    aggregate,
    aggregate_lime,
    g_av,
    g_base,
    g_h,
    g_pr,
    g_sq,
    inverse_pr,
    pr_estimates,
)
from skanchors.metrics import aopc_k
from skanchors.samplers import tokenize

FAST = dict(k=3, vocabulary=WordFilter(min_count=2), sample_size=40, batch_size=10, random_state=0)


def top_words(agg, label="spam"):
    return [w for w, _ in agg.top_terms_[label]]


# ----------------------------------------------------------------- aggregation functions
A_POS = np.array([[4.0, 0.0], [1.0, 1.0], [0.0, 3.0], [1.0, 0.0]])
A_NEG = np.array([[0.0, 2.0], [3.0, 1.0], [1.0, 0.0], [0.0, 1.0]])


def test_sq_av_h_by_hand():
    assert g_sq(A_POS)[:, 0].tolist() == [2.0, 1.0, 0.0, 1.0]
    av = g_av(A_POS, A_NEG)
    assert av[:, 0].tolist() == [1.0, 0.25, 0.0, 1.0]
    assert av[:, 1].tolist() == [0.0, 0.5, 1.0, 0.0]
    # h: entropies of (1, 0), (.5, .5), (0, 1), (1, 0) -> 0, log 2, 0, 0 -> factor 1, 0, 1, 1
    np.testing.assert_allclose(g_h(A_POS), [[2, 0], [0, 0], [0, np.sqrt(3)], [1, 0]])


def test_pr_by_hand():
    # class 0: sum A+ = 6, sum A- = 4; q~ = 2 A+/6 - A-/4
    q = np.array([8 / 6, 2 / 6 - 3 / 4, -1 / 4, 2 / 6])
    b = abs(q.min())
    words = np.array([True, True, True, True])
    expected = (q + b) / (q.sum() + b * words.sum())
    np.testing.assert_allclose(g_pr(A_POS, A_NEG)[:, 0], expected)
    assert g_pr(A_POS, A_NEG)[:, 0].sum() == pytest.approx(1.0)
    # alpha = 1: q~ = A+ / sum A+, already a distribution (q_min = 0)
    np.testing.assert_allclose(g_pr(A_POS, A_NEG, alpha=1.0)[:, 0], A_POS[:, 0] / 6)
    np.testing.assert_allclose(inverse_pr(A_POS, A_NEG)[[0, 2, 3], 0], 1 / expected[[0, 2, 3]])
    assert inverse_pr(A_POS, A_NEG)[1, 0] == np.inf  # q_min gets probability 0
    # W(S[c]) given: a word absent from the class is not ranked
    present = np.array([[1, 1], [1, 1], [1, 1], [0, 1]], dtype=bool)
    assert np.isnan(g_pr(A_POS, A_NEG, present=present)[3, 0])


def test_pr_with_given_totals_by_hand():
    # totals replace the column sums: class 0 with sum A+ = 12, sum A- = 20
    q, p = pr_estimates(A_POS, A_NEG, totals=([12.0, 4.0], [20.0, 4.0]))
    np.testing.assert_allclose(q[:, 0], 2 * A_POS[:, 0] / 12 - A_NEG[:, 0] / 20)
    np.testing.assert_allclose(p[:, 0], A_NEG[:, 0] / 20)
    sums = (A_POS.sum(axis=0), A_NEG.sum(axis=0))
    np.testing.assert_allclose(g_pr(A_POS, A_NEG, totals=sums), g_pr(A_POS, A_NEG))
    with pytest.raises(ValueError, match="one value per class"):
        pr_estimates(A_POS, A_NEG, totals=([1.0], [1.0]))


def test_base_and_min_count_by_hand():
    df = np.array([[3, 1], [0, 2], [0, 0]])
    out = g_base(df)
    assert out[:2].tolist() == [[0.75, 0.25], [0.0, 1.0]]
    assert np.isnan(out[2]).all()
    # G_av^+5: words with fewer than 5 occurrences are not ranked
    av5 = aggregate("av", A_POS, A_NEG, min_count=5)
    assert np.isnan(av5[[2, 3]]).all()  # 4 and 2 occurrences
    assert av5[:2].tolist() == [[1.0, 0.0], [0.25, 0.5]]
    with pytest.raises(ValueError, match="aggregation must be one of"):
        aggregate("mean", A_POS, A_NEG)
    with pytest.raises(ValueError, match="alpha"):
        g_pr(A_POS, A_NEG, alpha=0)


def test_base_ranks_only_words_the_class_s_documents_hold():
    # with k above a class's vocabulary, "base" filled the list with other classes' words
    # at score 0.0 ("cash", "now", "win" as top terms of the documents without them)
    def model(texts):
        p = np.array([float("win" in t.split()) for t in texts])
        return np.column_stack([1 - p, p])

    docs = ["win cash", "hello friend", "win now", "hello win"]
    agg = GlobalAnchorAggregator(
        model,
        aggregation="base",
        k=5,
        vocabulary=WordFilter(stop_words=None, min_count=1),
        random_state=0,
    ).fit(docs)
    assert dict(agg.top_terms_[0]) == {"friend": 1.0, "hello": 0.5}
    assert dict(agg.top_terms_[1]) == {"win": 1.0, "cash": 1.0, "now": 1.0, "hello": 0.5}


# ----------------------------------------------------------------- the aggregator
@pytest.fixture(scope="module")
def fitted():
    return GlobalAnchorAggregator(PlantedModel(), **FAST).fit(DOCS)


def test_planted_words_are_the_top_of_pr(fitted):
    assert sorted(top_words(fitted)) == sorted(PLANTED)
    for terms in fitted.top_terms_.values():
        assert not {w for w, _ in terms} & set(STOP)
    assert fitted.scores_.loc[list(STOP)].isna().all().all()
    assert fitted.positive_counts_.loc[list(STOP)].to_numpy().sum() == 0
    assert fitted.untested_counts_.loc["the"].sum() > 0
    assert fitted.n_documents_seen_ == len(DOCS)


def test_inverse_pr_scores_lower_aopc_than_pr(fitted):
    model = PlantedModel()
    pr = aopc_k(model, DOCS, fitted.compute_top_terms("pr"), k=3)
    inv = aopc_k(model, DOCS, fitted.compute_top_terms("inverse_pr"), k=3)
    assert pr > inv + 0.1
    assert fitted.score(DOCS) == pytest.approx(pr)


def test_naive_per_token_test_finds_the_same_words_with_more_rows(fitted):
    naive = GlobalAnchorAggregator(
        PlantedModel(),
        **dict(
            FAST,
            vocabulary=WordFilter(min_count=2, filtering=False),
            threshold=AdaptiveThreshold(omega=0),
        ),
    )
    naive._shared_pool = False  # (the naive test is an internal, for the benchmarks)
    naive.fit(DOCS)
    assert sorted(top_words(naive)) == sorted(PLANTED)
    assert naive.n_rows_predicted_ > 1.5 * fitted.n_rows_predicted_


def test_every_switch_changes_the_work():
    words = dict(min_count=2, filtering=False)
    base = dict(FAST, vocabulary=WordFilter(**words), threshold=AdaptiveThreshold(omega=0))
    ref = GlobalAnchorAggregator(PlantedModel(), **base).fit(DOCS)
    for change in (
        dict(_shared_pool=False),
        dict(vocabulary=WordFilter(**dict(words, filtering="optimistic"))),
        dict(vocabulary=WordFilter(**dict(words, filtering=True)), aggregation="sq"),
        dict(vocabulary=WordFilter(**dict(words, stop_words=None))),
        dict(vocabulary=WordFilter(**dict(words, min_count=30))),
        dict(delta=0.01),
        dict(threshold=AdaptiveThreshold(0.5, minimum=0.5)),
        dict(sample_size=20),
        dict(max_documents=20),
    ):
        private = {k: v for k, v in change.items() if k.startswith("_")}
        public = {k: v for k, v in change.items() if k not in private}
        other = GlobalAnchorAggregator(PlantedModel(), **{**base, **public})
        vars(other).update(private)
        other.fit(DOCS)
        work = (other.n_rows_predicted_, other.n_tokens_tested_, other.n_model_calls_)
        assert work != (ref.n_rows_predicted_, ref.n_tokens_tested_, ref.n_model_calls_), change
    # the order matters once decisions depend on the state (candidate filtering)
    for filtering in (True, "optimistic"):
        runs = [
            GlobalAnchorAggregator(
                PlantedModel(),
                aggregation="sq",
                order=o,
                **dict(FAST, vocabulary=WordFilter(min_count=2, filtering=filtering)),
            )
            .fit(DOCS)
            .n_tokens_tested_
            for o in ("confidence", "given", "random")
        ]
        assert len(set(runs)) > 1, filtering
    base_agg = GlobalAnchorAggregator(PlantedModel(), aggregation="base", **FAST).fit(DOCS)
    assert base_agg.n_rows_predicted_ == 0 and sorted(top_words(base_agg)) == sorted(PLANTED)


def test_audit_keeps_the_pr_totals_unbiased_under_candidate_filtering():
    # (The optimistic filter: the exact one skips nothing for pr.) Filtering stops testing the
    # filler words of spam documents (never anchors), so the tested counts alone hold far fewer
    # non-anchors than a run without filtering; G_pr's totals would then weigh every A- several
    # times too much. The audited share of the skipped occurrences restores them
    # (Horvitz-Thompson), on average over random states.
    docs = make_docs(n=300, seed=1)
    params = dict(FAST, threshold=AdaptiveThreshold(omega=0), batch_size=30)
    spam = 1
    unfiltered = WordFilter(min_count=1, filtering=False)
    truth = GlobalAnchorAggregator(PlantedModel(), **dict(params, vocabulary=unfiltered))
    truth.fit(docs)
    true_neg = truth.negative_counts_.to_numpy()[:, spam].sum()
    np.testing.assert_allclose(truth.totals_.loc["A-"], truth.negative_counts_.sum())
    tested, estimated = [], []
    for seed in range(8):
        optimistic = WordFilter(min_count=1, filtering="optimistic")
        agg = GlobalAnchorAggregator(
            PlantedModel(), **dict(params, vocabulary=optimistic, random_state=seed)
        ).fit(docs)
        tested.append(agg.negative_counts_.to_numpy()[:, spam].sum())
        estimated.append(agg.totals_.loc["A-"].iloc[spam])
    assert np.mean(tested) < 0.7 * true_neg  # what filtering alone leaves (about 0.64)
    assert np.mean(estimated) == pytest.approx(true_neg, rel=0.1)
    # scores_ is G_pr of the published counts with the published totals
    totals = (agg.totals_.loc["A+"].to_numpy(), agg.totals_.loc["A-"].to_numpy())
    again = aggregate(
        "pr",
        agg.positive_counts_,
        agg.negative_counts_,
        agg.document_counts_,
        totals=totals,
        min_count=1,
    )
    np.testing.assert_allclose(agg.scores_.to_numpy(), again, equal_nan=True)


def test_adaptive_threshold_lowers_tau_for_anchor_words():
    agg = GlobalAnchorAggregator(PlantedModel(), **FAST).fit(DOCS)
    tau = agg._adaptive_tau(agg._n_known())
    spam = list(agg.classes_).index("spam")
    assert agg.threshold == 0.95  # a number is AdaptiveThreshold(0.95): minimum 0.55, omega 0.4
    assert tau.min() >= 0.55
    assert tau[agg._index["prize"], spam] < agg.threshold - 0.1
    assert tau[agg._index["alpha"], spam] == pytest.approx(agg.threshold)


class FillerModel(PlantedModel):
    """Spam iff a planted word and at least two filler words are present: with 5 fillers a
    planted token's precision under the UNK sampler is P(Bin(5, 1/2) >= 2) = 26/32 = 0.8125."""

    def predict_proba(self, X):
        self.calls += 1
        fill = set(FILLER)
        p = []
        for d in X:
            words = [w.lower() for w, _, _ in tokenize(d)]
            hit = self.words & set(words) and sum(w in fill for w in words) >= 2
            p.append(self.high if hit else self.low)
        p = np.array(p)
        return np.column_stack([1 - p, p])


def _chunk(agg, document, tau, low, seed=0):
    """One token (position 0) of ``document`` tested against ``tau`` / ``low``."""
    from skanchors.aggregation.aggregator import _test_chunk

    target = int(agg.model_.predict_index([document])[0])
    items = [(document, target, seed, np.array([0]), np.array([tau]), np.array([low]))]
    params = dict(delta=agg.delta, sample_size=agg.sample_size, shared_pool=False)
    [(_, anchor, n_rows)], _ = _test_chunk(agg.sampler_, agg.model_, items, params)
    return bool(anchor[0]), n_rows


def test_adaptive_modes_decide_by_their_own_threshold():
    doc = "prize alpha bravo delta echo golf"
    agg = GlobalAnchorAggregator(FillerModel(), **dict(FAST, sample_size=50)).fit([doc])
    # precision 0.81: not an anchor at tau = 0.95, whatever the evidence level ("confidence")
    assert _chunk(agg, doc, 0.95, 0.95) == _chunk(agg, doc, 0.95, 0.95)
    for seed in range(5):
        assert not _chunk(agg, doc, 0.95, 0.95, seed)[0]
        assert not _chunk(agg, doc, 0.95, 0.6, seed)[0]
        # ... but an anchor once the threshold itself is lowered to 0.6 ("precision")
        assert _chunk(agg, doc, 0.6, 0.6, seed)[0]
    # a token of precision 1 ("prize" alone decides) is accepted on fewer samples when its
    # lower bound only has to clear 0.6 - 0.05: 10 all-kept samples give a bound of 0.79 at
    # delta 0.1, below 0.95 - 0.05 (a second round) but above 0.55 (decided at once)
    agg = GlobalAnchorAggregator(PlantedModel(), **dict(FAST, sample_size=10)).fit([doc])
    strict = _chunk(agg, doc, 0.95, 0.95)
    relaxed = _chunk(agg, doc, 0.95, 0.6)
    assert strict[0] and relaxed[0]
    assert relaxed[1] <= 10 < strict[1]  # one round of 10 (duplicates predicted once) vs two


class HashModel:
    """Class 0 for 97 % of the distinct texts (chosen by a hash of the text), else class 1."""

    classes_ = np.array([0, 1])

    def predict_proba(self, X):
        import hashlib

        u = np.array([hashlib.blake2b(t.encode(), digest_size=4).digest()[0] for t in X])
        p0 = np.where(u < 0.97 * 256, 0.9, 0.1)
        return np.column_stack([p0, 1 - p0])


def test_a_token_undecided_at_the_cap_is_decided_by_its_mean(monkeypatch):
    # The module's promise: a token still undecided after 20 * sample_size samples is decided
    # by its mean. Tokens that reached the cap with a mean >= tau were counted as non-anchors.
    import math

    from skanchors.aggregation import _token_anchors as module

    seen = []
    real = module.kl_lower_bound

    def spy(mean, level):
        seen.append((np.array(mean, copy=True), np.array(level, copy=True)))
        return real(mean, level)

    monkeypatch.setattr(module, "kl_lower_bound", spy)
    doc = " ".join(f"w{j}" for j in range(12))
    agg = GlobalAnchorAggregator(
        HashModel(),
        **dict(FAST, sample_size=2, vocabulary=WordFilter(min_count=1, stop_words=None)),
    ).fit([doc])
    cap = module._MAX_ROUNDS * agg.sample_size
    at_cap = []
    for seed in range(60):
        seen.clear()
        anchor, _ = _chunk(agg, doc, 0.95, 0.95, seed)
        mean, level = seen[-1]  # the bounds of the final decision
        if math.log(1 / agg.delta) / level[0] >= cap - 1e-9:
            at_cap.append((float(mean[0]), anchor))
    assert sum(m >= 0.95 for m, _ in at_cap) >= 3  # (a mean below tau is decided sooner)
    assert all(anchor == (m >= 0.95) for m, anchor in at_cap)


def test_confidence_mode_counts_what_no_adaptive_threshold_counts_with_fewer_rows():
    params = dict(FAST, vocabulary=WordFilter(min_count=1, filtering=False), sample_size=10)
    off = GlobalAnchorAggregator(PlantedModel(), threshold=AdaptiveThreshold(omega=0), **params)
    off.fit(DOCS)
    # numpy numbers (as a parameter grid may hand them over) mean the same as Python's
    np_off = AdaptiveThreshold(np.float64(0.95), omega=np.int64(0))
    np_off = GlobalAnchorAggregator(PlantedModel(), threshold=np_off, **params)
    assert np_off.fit(DOCS).n_rows_predicted_ == off.n_rows_predicted_
    conf = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS)  # (0.95: the schedule)
    same = AdaptiveThreshold(0.95, mode="confidence")
    same = GlobalAnchorAggregator(PlantedModel(), threshold=same, **params)
    same.fit(DOCS)
    pd = pytest.importorskip("pandas")
    for attr in ("positive_counts_", "negative_counts_"):
        pd.testing.assert_frame_equal(getattr(conf, attr), getattr(off, attr))
        pd.testing.assert_frame_equal(getattr(conf, attr), getattr(same, attr))
    assert conf.n_rows_predicted_ == same.n_rows_predicted_
    assert conf.n_rows_predicted_ < 0.9 * off.n_rows_predicted_
    assert top_words(conf) == top_words(off)


def test_adaptive_threshold_rejects_unknown_modes():
    with pytest.raises(ValueError, match="The 'mode' parameter of AdaptiveThreshold must be"):
        GlobalAnchorAggregator(PlantedModel(), threshold=AdaptiveThreshold(mode="lax")).fit(DOCS)


def test_partial_fit_over_batches_equals_fit():
    params = dict(
        FAST,
        vocabulary=WordFilter(min_count=1, filtering=False),
        threshold=AdaptiveThreshold(omega=0),
    )
    full = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS)
    part = GlobalAnchorAggregator(PlantedModel(), **params)
    for chunk in (DOCS[:7], DOCS[7:33], DOCS[33:]):
        part.partial_fit(chunk)
    for attr in ("positive_counts_", "negative_counts_", "untested_counts_"):
        a = getattr(full, attr).sort_index()
        b = getattr(part, attr).sort_index()
        assert a.equals(b), attr
    assert part.top_terms_ == full.top_terms_
    assert part.n_documents_seen_ == full.n_documents_seen_ == len(DOCS)
    # with every optimisation on, fit(X) is partial_fit(X) from a fresh state
    a = GlobalAnchorAggregator(PlantedModel(), **FAST).fit(DOCS)
    b = GlobalAnchorAggregator(PlantedModel(), **FAST).partial_fit(DOCS)
    assert a.top_terms_ == b.top_terms_ and a.n_rows_predicted_ == b.n_rows_predicted_


def test_one_model_call_per_round_for_a_whole_batch():
    # Without the options that look at other documents, a document's tests do not depend on
    # the batch it is in: the counts are the same, the model calls are not.
    params = dict(
        FAST,
        vocabulary=WordFilter(min_count=1, filtering=False),
        threshold=AdaptiveThreshold(omega=0),
    )
    params.pop("batch_size")
    for shared_pool in (True, False):
        one = GlobalAnchorAggregator(PlantedModel(), batch_size=1, **params)
        one._shared_pool = shared_pool
        one.fit(DOCS)
        model = PlantedModel()
        whole = GlobalAnchorAggregator(model, batch_size=len(DOCS), **params)
        whole._shared_pool = shared_pool
        whole.fit(DOCS)
        for attr in ("positive_counts_", "negative_counts_", "untested_counts_"):
            assert getattr(one, attr).equals(getattr(whole, attr)), attr
        assert one.n_rows_predicted_ == whole.n_rows_predicted_
        assert one.n_model_calls_ >= len(DOCS)
        # one call for the pools (or first samples) of all documents, one per further round
        assert whole.n_model_calls_ <= 1 + 20
        assert model.calls == whole.n_model_calls_ + 1  # + the call that orders the documents


def test_identical_documents_are_tested_once_per_batch():
    params = dict(
        FAST,
        vocabulary=WordFilter(min_count=1, filtering=False),
        threshold=AdaptiveThreshold(omega=0),
    )
    params["batch_size"] = 2 * len(DOCS)
    single = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS)
    double = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS + DOCS)
    assert double.positive_counts_.equals(2 * single.positive_counts_)
    assert double.negative_counts_.equals(2 * single.negative_counts_)
    assert double.n_rows_predicted_ == single.n_rows_predicted_
    assert double.n_tokens_tested_ == 2 * single.n_tokens_tested_


def test_same_result_for_any_n_jobs(fitted):
    par = GlobalAnchorAggregator(PlantedModel(), n_jobs=2, **FAST).fit(DOCS)
    assert par.top_terms_ == fitted.top_terms_
    assert par.positive_counts_.equals(fitted.positive_counts_)


def test_n_jobs_above_the_number_of_documents_starts_one_worker_per_chunk(fitted, monkeypatch):

    import skanchors.aggregation.aggregator as module

    asked = []

    class Recorded(joblib.Parallel):
        def __init__(self, n_jobs=None, **kwargs):
            asked.append(n_jobs)
            super().__init__(n_jobs=1, **kwargs)

    monkeypatch.setattr(module, "Parallel", Recorded)
    agg = GlobalAnchorAggregator(PlantedModel(), n_jobs=1000, **FAST).fit(DOCS)
    assert asked and max(asked) <= len(DOCS)
    assert agg.top_terms_ == fitted.top_terms_


def test_dask_local_cluster_gives_the_same_top_terms(fitted):
    distributed = pytest.importorskip("dask.distributed")
    from joblib import parallel_config

    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        with parallel_config(backend="dask"):
            agg = GlobalAnchorAggregator(PlantedModel(), n_jobs=2, **FAST).fit(DOCS)
    assert agg.top_terms_ == fitted.top_terms_
    assert agg.n_rows_predicted_ == fitted.n_rows_predicted_


def test_model_error_keeps_finished_batches():
    model = PlantedModel()
    seen = []

    def arm(agg):
        seen.append(agg.n_documents_seen_)
        if len(seen) == 2:
            model.fail = True

    agg = GlobalAnchorAggregator(model, callback=arm, **FAST)
    with pytest.raises(RuntimeError, match="model crashed"):
        agg.fit(DOCS)
    assert seen == [10, 20]
    assert agg.n_documents_seen_ == 20 and agg.stopped_early_
    assert agg.document_counts_.to_numpy().sum() > 0
    assert len(agg.history_) == 2 and set(agg.top_terms_) == {"ham", "spam"}


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_run_continued_equals_an_uninterrupted_one(interrupt):
    # The documents the interrupted call did not reach must not stay counted (they feed
    # min_count, candidate filtering and the adaptive threshold of every later batch).
    model = PlantedModel()
    params = dict(FAST, order="given")

    def stop_after_two_batches(agg):
        if agg.n_documents_seen_ == 20:
            model.fail = True

    original = model.predict_proba

    def predict_proba(X):
        if model.fail:
            raise interrupt("stop")
        return original(X)

    model.predict_proba = predict_proba
    agg = GlobalAnchorAggregator(model, callback=stop_after_two_batches, **params)
    with pytest.raises(interrupt):
        agg.fit(DOCS)
    assert agg.n_documents_seen_ == 20
    model.fail = False
    agg.set_params(callback=None).partial_fit(DOCS[20:])
    whole = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS)
    assert agg.n_documents_seen_ == whole.n_documents_seen_ == len(DOCS)
    assert agg._n_known().tolist() == whole._n_known().tolist()
    assert agg.top_terms_ == whole.top_terms_
    assert agg.positive_counts_.sort_index().equals(whole.positive_counts_.sort_index())


@pytest.mark.parametrize("during", ["_start_run", "_commit"])
def test_ctrl_c_while_the_state_changes_waits_until_it_is_whole(monkeypatch, during):
    # A real SIGINT in the middle of the state's update: it used to stop _start_run half way
    # (phantom pending words counted by min_count and the filters for ever) or _commit half
    # way (part of a batch counted while unprocessed_indices_ listed all of it: counted twice
    # by the documented recovery). Now it arrives once the update is whole.
    params = dict(FAST, order="given")
    original = getattr(GlobalAnchorAggregator, during)
    fired = []

    def interrupted(self, *args):
        if not fired:
            fired.append(True)
            signal.raise_signal(signal.SIGINT)  # delivered at once outside a held block
        return original(self, *args)

    monkeypatch.setattr(GlobalAnchorAggregator, during, interrupted)
    # Python's own Ctrl-C handler, whatever this process inherited (a job started in the
    # background of a shell ignores SIGINT, and Python then installs no handler)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    agg = GlobalAnchorAggregator(PlantedModel(), **params)
    try:
        with pytest.raises(KeyboardInterrupt):
            agg.fit(DOCS)
    finally:
        signal.signal(signal.SIGINT, previous)
    monkeypatch.setattr(GlobalAnchorAggregator, during, original)
    done = 10 if during == "_commit" else 0  # the batch being counted is counted, whole
    assert fired and agg.stopped_early_ and agg.n_documents_seen_ == done
    assert agg._pending.sum() == 0 and agg._pending_c.sum() == 0
    assert agg.unprocessed_indices_.tolist() == list(range(done, len(DOCS)))
    agg.partial_fit([DOCS[i] for i in agg.unprocessed_indices_])
    whole = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS)
    assert agg.n_documents_seen_ == len(DOCS)
    assert agg._n_known().tolist() == whole._n_known().tolist()
    assert agg.document_counts_.sort_index().equals(whole.document_counts_.sort_index())
    assert agg.positive_counts_.sort_index().equals(whole.positive_counts_.sort_index())


def test_max_time_and_callback_stop_cleanly():
    # the clock is read within a batch too: the first one does not finish in time, and
    # nothing of it is counted (tests/test_long_documents.py: a slow model)
    agg = GlobalAnchorAggregator(PlantedModel(), max_time=1e-9, **FAST).fit(DOCS)
    assert agg.stopped_early_ and agg.n_documents_seen_ == 0 and agg.n_tokens_tested_ == 0
    assert agg.unprocessed_indices_.tolist() == list(range(len(DOCS)))
    assert agg.top_terms_ == {"ham": [], "spam": []} and agg._pending.sum() == 0
    calls = []
    agg = GlobalAnchorAggregator(
        PlantedModel(),
        callback=lambda a: calls.append(a.n_documents_seen_) or len(calls) == 3,
        **FAST,
    ).fit(DOCS)
    assert calls == [10, 20, 30] and agg.n_documents_seen_ == 30 and agg.stopped_early_


def test_checkpoint_resume_equals_an_uninterrupted_run(tmp_path, fitted):
    path = tmp_path / "state.joblib"
    first = GlobalAnchorAggregator(
        PlantedModel(), checkpoint=str(path), callback=lambda a: a.n_documents_seen_ >= 30, **FAST
    ).fit(DOCS)
    assert first.stopped_early_ and path.exists()
    model = PlantedModel()
    resumed = GlobalAnchorAggregator(model, checkpoint=str(path), **FAST).fit(DOCS)
    assert resumed.n_documents_seen_ == len(DOCS)
    assert resumed.top_terms_ == fitted.top_terms_
    assert resumed.positive_counts_.sort_index().equals(fitted.positive_counts_.sort_index())
    assert resumed.n_rows_predicted_ == fitted.n_rows_predicted_
    with pytest.raises(ValueError, match="other parameters"):
        GlobalAnchorAggregator(PlantedModel(), checkpoint=str(path), **{**FAST, "k": 5}).fit(DOCS)
    state = pickle.dumps(resumed)  # the fitted aggregator pickles (model included)
    assert pickle.loads(state).top_terms_ == resumed.top_terms_


@pytest.mark.parametrize("extra", [dict(order="random"), dict(max_documents=45)])
def test_a_resumed_sampled_or_shuffled_run_equals_an_uninterrupted_one(tmp_path, extra):
    # the resumed call drew its sample and shuffle from the restored document count, so its
    # batches matched none of the saved ones: each interrupted document was counted twice
    params = dict(FAST, **extra)
    path = str(tmp_path / "state.joblib")
    first = GlobalAnchorAggregator(
        PlantedModel(), checkpoint=path, callback=lambda a: a.n_documents_seen_ >= 20, **params
    ).fit(DOCS)
    assert first.stopped_early_ and first.n_documents_seen_ == 20
    whole = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "holds batches that this call was not given": false
        resumed = GlobalAnchorAggregator(PlantedModel(), checkpoint=path, **params).fit(DOCS)
        again = GlobalAnchorAggregator(PlantedModel(), checkpoint=path, **params).fit(DOCS)
    assert resumed.n_documents_seen_ == whole.n_documents_seen_ == extra.get("max_documents", 60)
    assert resumed.document_counts_.sort_index().equals(whole.document_counts_.sort_index())
    assert resumed.positive_counts_.sort_index().equals(whole.positive_counts_.sort_index())
    assert again.n_documents_seen_ == whole.n_documents_seen_  # a finished run: all replayed


def test_resuming_the_interrupted_call_of_a_partial_fit_sequence(tmp_path):
    # the checkpoint holds the finished call A and part of B: repeating B alone gave the
    # right counts but warned of "another corpus" for A's batches
    params = dict(FAST, order="random")
    path = str(tmp_path / "state.joblib")
    first = GlobalAnchorAggregator(PlantedModel(), checkpoint=path, **params)
    first.partial_fit(DOCS[:30])
    first.set_params(callback=lambda a: a.n_documents_seen_ >= 40).partial_fit(DOCS[30:])
    assert first.stopped_early_ and first.n_documents_seen_ == 40
    whole = GlobalAnchorAggregator(PlantedModel(), **params)
    whole.partial_fit(DOCS[:30]).partial_fit(DOCS[30:])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resumed = GlobalAnchorAggregator(PlantedModel(), checkpoint=path, **params)
        resumed.partial_fit(DOCS[30:])
    assert resumed.n_documents_seen_ == whole.n_documents_seen_ == 60
    assert resumed.document_counts_.sort_index().equals(whole.document_counts_.sort_index())
    assert resumed.positive_counts_.sort_index().equals(whole.positive_counts_.sort_index())


def test_a_call_whose_confidence_pass_fails_keeps_its_documents_and_resume_point(tmp_path):
    # unprocessed_indices_ kept the previous call's [] and stopped_early_ False, and the
    # checkpoint's resume point was spent: the retry reshuffled and counted documents twice
    params = dict(FAST, order="random")
    path = str(tmp_path / "state.joblib")
    GlobalAnchorAggregator(
        PlantedModel(), checkpoint=path, callback=lambda a: a.n_documents_seen_ >= 20, **params
    ).fit(DOCS)
    whole = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS)
    model = PlantedModel()
    agg = GlobalAnchorAggregator(model, checkpoint=path, **params)
    model.fail = True  # the ordering by confidence fails, before any batch
    with pytest.raises(RuntimeError, match="model crashed"):
        agg.partial_fit(DOCS)
    assert agg.stopped_early_ and agg.unprocessed_indices_.tolist() == list(range(len(DOCS)))
    assert agg.n_documents_seen_ == 20
    model.fail = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agg.partial_fit(DOCS)  # the same call again
    assert agg.n_documents_seen_ == whole.n_documents_seen_ == len(DOCS)
    assert agg.document_counts_.sort_index().equals(whole.document_counts_.sort_index())


_RESUME_SCRIPT = """
import sys
import numpy as np
from skanchors import GlobalAnchorAggregator

def model(texts):
    p = np.array([float("win" in t.split()) for t in texts])
    return np.column_stack([1 - p, p])

stops = {"hello", "there", "now", "big", "the", "a", "an", "of", "to", "in"}
from skanchors.aggregation import WordFilter
agg = GlobalAnchorAggregator(model, vocabulary=WordFilter(stop_words=stops, min_count=1),
                             batch_size=10,
                             random_state=np.random.RandomState(0), checkpoint=sys.argv[1])
agg.fit(["win cash now", "hello friend", "win big prize", "hello there friend"] * 5)
print(repr(stops), agg.n_documents_seen_)
"""


def test_a_checkpoint_resumes_in_another_process(tmp_path):
    # parameters were compared by repr(): a set's order changes with the hash seed and a
    # RandomState's repr holds its address, so no new process could resume
    import subprocess
    import sys

    path = str(tmp_path / "state.joblib")
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", _RESUME_SCRIPT, path], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout.rsplit(" ", 1))
    assert outputs[0][0] != outputs[1][0]  # the two processes order the set differently
    assert outputs[0][1].strip() == outputs[1][1].strip() == "20"


def test_a_checkpoint_refuses_another_sampler_or_version(tmp_path):
    from skanchors.samplers import CorpusSampler

    path = str(tmp_path / "state.joblib")
    GlobalAnchorAggregator(PlantedModel(), checkpoint=path, **FAST).fit(DOCS[:20])
    with pytest.raises(ValueError, match="other parameters.*sampler"):
        GlobalAnchorAggregator(
            PlantedModel(), checkpoint=path, sampler=CorpusSampler(), **FAST
        ).fit(DOCS[:20])
    with pytest.raises(ValueError, match="other parameters.*max_documents"):
        GlobalAnchorAggregator(PlantedModel(), checkpoint=path, max_documents=10, **FAST).fit(
            DOCS[:20]
        )
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    state = json.loads(members["state.json"])
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, json.dumps(dict(state, version=7)) if name == "state.json" else data)
    with pytest.raises(ValueError, match="another version of skanchors .format 7"):
        GlobalAnchorAggregator(PlantedModel(), checkpoint=path, **FAST).fit(DOCS[:20])


@pytest.mark.parametrize("order", ["confidence", "random"])
def test_unprocessed_indices_name_the_documents_an_interrupt_left(order):
    model = PlantedModel()
    params = dict(FAST, order=order)

    def fail_after_two_batches(agg):
        model.fail = agg.n_documents_seen_ >= 20

    agg = GlobalAnchorAggregator(model, callback=fail_after_two_batches, **params)
    assert agg.fit(DOCS[:10]).unprocessed_indices_.size == 0
    with pytest.raises(RuntimeError, match="model crashed"):
        agg.fit(DOCS)
    left = agg.unprocessed_indices_
    assert left.size == 40 and np.all(np.diff(left) > 0)
    model.fail = False
    agg.set_params(callback=None).partial_fit([DOCS[i] for i in left])
    assert agg.n_documents_seen_ == len(DOCS) and agg.unprocessed_indices_.size == 0
    whole = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS)
    assert agg.document_counts_.sort_index().equals(whole.document_counts_.sort_index())


def test_a_refused_checkpoint_stays_refused_and_unchanged(tmp_path):
    # The second call after a refusal skipped the set-up, started from an empty state and
    # overwrote the checkpoint it had just refused.
    path = tmp_path / "state.joblib"
    GlobalAnchorAggregator(PlantedModel(), checkpoint=str(path), **FAST).fit(DOCS[:30])
    saved = path.read_bytes()
    agg = GlobalAnchorAggregator(PlantedModel(), checkpoint=str(path), **{**FAST, "k": 5})
    for _ in range(2):
        with pytest.raises(ValueError, match="other parameters"):
            agg.partial_fit(DOCS[:30])
    assert path.read_bytes() == saved
    agg.set_params(k=FAST["k"]).partial_fit(DOCS[:30])  # the saved parameters: it resumes
    assert agg.n_documents_seen_ == 30 and agg.n_rows_predicted_ > 0


def test_a_corrupt_checkpoint_is_named(tmp_path):
    path = tmp_path / "state.joblib"
    path.write_bytes(b"not a checkpoint")  # was: struct.error: unpack requires a buffer
    with pytest.raises(ValueError, match="could not be read as a GlobalAnchorAggregator state"):
        GlobalAnchorAggregator(PlantedModel(), checkpoint=str(path), **FAST).fit(DOCS[:20])


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_compute_top_terms_checks_k(fitted, k):
    # k=-1 returned every ranked word but the last
    with pytest.raises(ValueError, match="k must be a positive integer"):
        fitted.compute_top_terms(k=k)
    assert all(len(terms) == 1 for terms in fitted.compute_top_terms(k=1).values())


def test_a_checkpoint_of_other_documents_is_flagged(tmp_path):
    path = str(tmp_path / "state.joblib")
    GlobalAnchorAggregator(PlantedModel(), checkpoint=path, **FAST).fit(DOCS[:20])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same documents again: all of them replayed
        GlobalAnchorAggregator(PlantedModel(), checkpoint=path, **FAST).fit(DOCS[:20])
    with pytest.warns(UserWarning, match="holds 2 batches of documents that this call") as w:
        other = GlobalAnchorAggregator(PlantedModel(), checkpoint=path, **FAST).fit(DOCS[20:40])
    assert [x.filename for x in w] == [__file__]
    assert other.n_documents_seen_ == 40  # the saved counts are kept, as documented


def test_verbose_shows_progress_with_top_words(capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    GlobalAnchorAggregator(PlantedModel(), verbose=1, **FAST).fit(DOCS[:20])
    out = capsys.readouterr().out
    assert "20 documents" in out and "spam:" in out
    monkeypatch.setattr(builtins, "__import__", real_import)
    pytest.importorskip("tqdm")
    GlobalAnchorAggregator(PlantedModel(), verbose=1, **FAST).fit(DOCS[:20])
    assert "global anchors" in capsys.readouterr().err


def test_transform_score_gridsearch_and_clone(fitted):
    Xt = fitted.transform(["a prize and cash", "nothing here"])
    names = fitted.get_feature_names_out().tolist()
    assert Xt.shape == (2, len(names))
    assert Xt[0, names.index("prize")] == 1 and Xt[1].sum() == 0
    model = PlantedModel()
    agg = GlobalAnchorAggregator(model, **FAST)
    twin = clone(agg)
    assert twin.estimator is model and twin.get_params()["k"] == 3
    search = GridSearchCV(agg, {"delta": [0.1, 0.4]}, cv=2).fit(DOCS)
    assert search.best_score_ > 0.05
    assert search.best_estimator_.estimator is model
    # the fitted model's own parameters are not the aggregator's to search
    assert not [k for k in agg.get_params(deep=True) if k.startswith("estimator__")]
    with pytest.raises(ValueError, match="Cannot set estimator__high"):
        agg.set_params(estimator__high=0.5)


@pytest.mark.parametrize(
    "params, X, error, match",
    [
        ({}, [], ValueError, "X contains no documents"),
        ({}, ["ok", 3], TypeError, r"X\[1\]"),
        ({}, "one string", TypeError, "single string"),
        ({"k": 0}, DOCS, ValueError, "'k' parameter"),
        ({"aggregation": "mean"}, DOCS, ValueError, "'aggregation' parameter"),
        ({"alpha": 0.0}, DOCS, ValueError, "'alpha' parameter"),
        ({"alpha": 1.5}, DOCS, ValueError, "'alpha' parameter"),
        ({"delta": 1.0}, DOCS, ValueError, "'delta' parameter"),
        (
            {"threshold": AdaptiveThreshold(minimum=0.99)},
            DOCS,
            ValueError,
            r"AdaptiveThreshold\(start=0.95, minimum=0.99\): minimum must not exceed start",
        ),
        ({"threshold": 1.5}, DOCS, ValueError, "'threshold' parameter"),
        ({"batch_size": 0}, DOCS, ValueError, "'batch_size' parameter"),
        (
            {"vocabulary": WordFilter(stop_words="french")},
            DOCS,
            ValueError,
            "The 'stop_words' parameter of WordFilter",
        ),
        ({"vocabulary": {"min_count": 2}}, DOCS, ValueError, "'vocabulary' parameter"),
    ],
)
def test_bad_input_names_the_argument(params, X, error, match):
    with pytest.raises(error, match=match):
        GlobalAnchorAggregator(PlantedModel(), **params).fit(X)


@pytest.mark.parametrize(
    "call, match",
    [
        # a (3, 1) doc_freq broadcast silently to every class of "sq"; "pr" raised IndexError
        (lambda P, N: aggregate("sq", P, N, doc_freq=np.ones((3, 1))), r"doc_freq must have"),
        (lambda P, N: aggregate("pr", P, N, doc_freq=np.ones((3, 1))), r"doc_freq must have"),
        (lambda P, N: aggregate("sq", P, N, n_occurrences=[5, 5]), r"n_occurrences must have"),
        (lambda P, N: g_pr(P, N, present=np.ones((3, 1), bool)), r"present must have"),
        (lambda P, N: g_pr(np.where(P > 2, np.nan, P), N), "finite"),
        (lambda P, N: aggregate_lime("sqrt", P, P, P, mask=[True, False]), r"mask must have"),
        (lambda P, N: aggregate_lime("sqrt", P, P, P, n_occurrences=[5]), "n_occurrences must"),
    ],
)
def test_aggregation_functions_check_their_arguments(call, match):
    P, N = np.array([[3, 0], [1, 2], [0, 1]]), np.array([[1, 1], [3, 0], [2, 2]])
    with pytest.raises(ValueError, match=match):
        call(P, N)


def test_min_threshold_binds_only_with_an_adaptive_threshold():
    # threshold 0.5 that does not move needed a minimum never read
    params = dict(FAST, threshold=AdaptiveThreshold(0.5, omega=0))
    agg = GlobalAnchorAggregator(PlantedModel(), **params).fit(DOCS[:20])
    assert agg.n_documents_seen_ == 20
    with pytest.raises(ValueError, match=r"minimum=0.55\): minimum must not exceed start"):
        GlobalAnchorAggregator(PlantedModel(), **dict(params, threshold=0.5)).fit(DOCS)


def test_unfitted_and_wordless_documents():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        GlobalAnchorAggregator(PlantedModel()).transform(["x"])
    agg = GlobalAnchorAggregator(PlantedModel(), **FAST).fit(DOCS[:10] + ["?!", ""])
    assert agg.n_documents_seen_ == 12


def test_hugging_face_classifier_and_masked_lm_sampler(hf):
    from hf_models import CORPUS

    from skanchors import HFTextClassifier
    from skanchors.samplers import MaskedLMSampler

    clf = HFTextClassifier(hf["clf"])
    sampler = MaskedLMSampler(hf["bert_mlm"], top_k=10, batch_size=32)
    agg = GlobalAnchorAggregator(
        clf,
        sampler=sampler,
        k=3,
        vocabulary=WordFilter(min_count=1),
        sample_size=16,
        batch_size=5,
        random_state=0,
    ).fit(CORPUS[:6])
    assert set(agg.top_terms_) == {"zeta", "alpha"}
    assert agg.n_documents_seen_ == 6 and agg.n_rows_predicted_ > 0


@pytest.mark.parametrize("dtype", [object, "string"])
def test_cli_global_finds_the_text_column_and_writes_strict_json(tmp_path, capfd, dtype):
    # pandas 3 reads text as its string dtype: "has no text column" came back; and
    # inverse_pr's infinite scores were written as Infinity, which strict JSON refuses
    import json

    import pandas as pd
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    import skanchors.cli
    from skanchors.cli import main

    labels = [int(bool(set(d.split()) & set(PLANTED))) for d in DOCS]
    model = make_pipeline(CountVectorizer(), LogisticRegression(C=10)).fit(DOCS, labels)
    joblib.dump(model, tmp_path / "model.joblib")
    # a label column of strings first: the texts are the longer column
    table = pd.DataFrame(
        {
            "label": pd.Series(["spam", "ham"] * (len(DOCS) // 2), dtype=dtype),
            "text": pd.Series(DOCS, dtype=dtype),
        }
    )
    read = skanchors.cli._read_table
    skanchors.cli._read_table = lambda path, option: (
        table if str(path).endswith("d.csv") else read(path, option)
    )
    try:
        args = ["global", "--model", str(tmp_path / "model.joblib"), "--data"]
        args += [str(tmp_path / "d.csv"), "-k", "3", "--aggregation", "inverse_pr"]
        code = main(args + ["--json", str(tmp_path / "t.json"), "--batch-size", "20"])
    finally:
        skanchors.cli._read_table = read
    assert code == 0 and "class 1" in capfd.readouterr().out
    text = (tmp_path / "t.json").read_text()
    top = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert all(len(terms) == 3 for terms in top.values())


@pytest.mark.parametrize(
    "options, message",
    [
        (["-k", "0"], "0 is outside [1, inf]"),
        (["--delta", "2"], "(0, 1)"),
        (["--verbose", "-3"], "-3 is outside [0, inf]"),
        (["--html", "/nonexistent/r.html"], "--html: no folder '/nonexistent'"),
        (["--checkpoint", "/nonexistent/s.pkl"], "--checkpoint: no folder '/nonexistent'"),
        (["--checkpoint", "/"], "--checkpoint: '/' is a folder, not a file"),
    ],
)
def test_cli_global_refuses_bad_options_as_usage_errors(tmp_path, capsys, options, message):
    from skanchors.cli import main

    args = ["global", "--model", "m.joblib", "--data", "d.csv"] + options
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_cli_global_writes_table_json_and_html(tmp_path, capfd):
    import json

    import pandas as pd
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from skanchors.cli import main

    labels = [int(bool(set(d.split()) & set(PLANTED))) for d in DOCS]
    model = make_pipeline(CountVectorizer(), LogisticRegression(C=10)).fit(DOCS, labels)
    joblib.dump(model, tmp_path / "model.joblib")
    pd.DataFrame({"id": range(len(DOCS)), "text": DOCS}).to_csv(tmp_path / "d.tsv", sep="\t")
    code = main(
        [
            "global",
            "--model",
            str(tmp_path / "model.joblib"),
            "--data",
            str(tmp_path / "d.tsv"),
            "--text-column",
            "text",
            "-k",
            "3",
            "--json",
            str(tmp_path / "t.json"),
            "--html",
            str(tmp_path / "t.html"),
            "--batch-size",
            "20",
        ]
    )
    assert code == 0 and "class 1" in capfd.readouterr().out
    top = json.loads((tmp_path / "t.json").read_text())
    assert {d["word"] for d in top["1"]} <= set(PLANTED) | set(FILLER)
    html = (tmp_path / "t.html").read_text()
    assert html.count("<svg") == 2 and "<script" not in html
