"""Long documents: memory that grows linearly with their length, counts that do not change, and
max_time honoured within a batch of the aggregators."""

import time
import tracemalloc

import numpy as np
import pytest
from sklearn.base import clone

from skanchors import AnchorExplainer
from skanchors._search import CandidateArms, SampleStore
from skanchors._wide import ExtensionCounts
from skanchors.aggregation import (
    AdaptiveThreshold,
    GlobalAnchorAggregator,
    GlobalLimeAggregator,
    WordFilter,
)
from skanchors.samplers import CorpusSampler, UnkSampler


class Lexicon:
    """Positive as "good" and "great" outnumber "bad" and "poor" (``str.count``: a long
    text costs little to predict, so the tests measure the library)."""

    classes_ = np.array([0, 1])

    def __init__(self, pause=0.0):
        self.pause = pause
        self.calls = 0

    def predict_proba(self, X):
        self.calls += 1
        time.sleep(self.pause)
        score = np.array(
            [t.count(" good") + t.count(" great") - t.count(" bad") - t.count(" poor") for t in X],
            dtype=float,
        )
        p = 1.0 / (1.0 + np.exp(-score))
        return np.column_stack([1.0 - p, p])


class Constant(Lexicon):
    """Class 1 whatever the text, after a pause."""

    def predict_proba(self, X):
        self.calls += 1
        time.sleep(self.pause)
        return np.tile([0.2, 0.8], (len(X), 1))


def lexicon_document(n_words, z, seed=0):
    """``n_words`` words, 4 % of them sentiment words, with ``z`` standard deviations more
    positive than negative ones under UNK masking (1.28: perturbations keep the class about
    90 % of the time, a search of several rounds; 1.8: about 96 %, tokens close to the
    aggregator's threshold)."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in rng.integers(0, 2000, size=n_words)]
    k = n_words // 50
    surplus = int(round(z * np.sqrt(2 * k)))
    for j, at in enumerate(rng.choice(n_words, size=2 * k, replace=False).tolist()):
        positive = j < k + surplus // 2
        words[at] = ("good", "great")[j % 2] if positive else ("bad", "poor")[j % 2]
    return " ".join(words)


def traced_peak(call):
    """``(result, peak bytes traced while call() ran)``."""
    tracemalloc.start()
    try:
        out = call()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------- counting by parent
@pytest.mark.parametrize("make", [UnkSampler, CorpusSampler])
@pytest.mark.parametrize("n_words", [12, 80])  # keys kept, then bits
def test_counting_by_parent_gives_the_counts_of_every_sample_against_every_candidate(make, n_words):
    words = [f"w{i % 30}" for i in range(n_words)]
    inst = make().fit([" ".join(words), "w1 w2 w3"]).instance(" ".join(words))
    d = inst.n_predicates

    def predict(texts):  # class 1 while w3 and w7 stay
        return np.array([int("w3" in t.split() and "w7" in t.split()) for t in texts])

    store = SampleStore(inst, predict, 1, np.random.default_rng(0))
    assert (store.masks is not None) == (n_words >= 64)
    store.draw([((), 60), ((3,), 40), ((3, 7), 30), ((7,), 20)])
    store.draw([((2, 3), 20), ((2, 3, 7), 10), ((5, 9), 10), ((2,), 15)])
    parents = [(), (3,), (7, 2)]
    candidates, of = [], []
    for parent in parents:
        for q in range(d):
            cand = tuple(sorted(parent + (q,)))
            if q not in parent and cand not in candidates:
                candidates.append(cand)
                of.append(parent)
    arms = CandidateArms(store, candidates, parents=of)
    assert arms._extensions is not None
    every = store.counts(candidates)  # every sample against every candidate
    assert arms.n_samples.tolist() == every[0].tolist() and arms.n_samples.sum() > 0
    assert arms.n_positives.tolist() == every[1].tolist() and arms.n_positives.sum() > 0
    # new samples (for two arms) update every arm they count for, as the general count does
    arms.pull([candidates.index((3, 7)), candidates.index((2, 7, 9))], 25)
    every = store.counts(candidates)
    assert arms.n_samples.tolist() == every[0].tolist()
    assert arms.n_positives.tolist() == every[1].tolist()
    # a rule given twice, or one that is not its parent plus one predicate: the general count
    assert ExtensionCounts.build([(1, 3), (1, 3)], [(1,), (3,)]) is None
    assert ExtensionCounts.build([(1, 3, 4)], [(1,)]) is None


# ------------------------------------------------------------------- memory
@pytest.mark.filterwarnings("ignore::skanchors.NoAnchorWarning")  # (max_anchor_size=4)
def test_a_long_document_is_explained_in_memory_linear_in_its_length():
    # 10,000 words near the decision boundary: four rounds of 10,000 candidates and about
    # 1,000 samples. Kept as one byte per word and sample, with the conditioning sets as a
    # dense (sets x words) matrix and every round's candidates kept, the search took 142 MB;
    # it keeps a bit per word and sample now, and its peak is that of a model call.
    n = 10_000
    document = lexicon_document(n, z=1.28)
    explainer = AnchorExplainer(Lexicon(), max_anchor_size=4, random_state=0).fit([document])
    explainer.explain(["a good film"])  # (the compiled kernels are made on first use)
    anchor, peak = traced_peak(lambda: explainer.explain([document])[0])
    assert anchor.n_rows_predicted > 600 and len(anchor.predicates) >= 3
    assert peak < 24 * 2**20 + 5_000 * n


def test_the_aggregator_tests_a_long_document_in_memory_linear_in_its_length():
    # Tokens close to the threshold stay undecided after the pool; each was given its own
    # sample_size rows of the whole document, (tokens x 32) x words: 2.2 GB for 3,000 words
    # and 1.1 TiB for 100,000. A round now draws the pool again for them.
    n = 20_000
    document = lexicon_document(n, z=1.8)
    others = ["a good film", "a bad film", "good and great", "poor and bad"] * 5
    params = dict(random_state=0, vocabulary=WordFilter(min_count=1, stop_words=None))
    GlobalAnchorAggregator(Lexicon(), **params).fit(others)  # (compiled kernels, imports)
    agg = GlobalAnchorAggregator(Lexicon(), **params)
    agg, peak = traced_peak(lambda: agg.fit([document] + others))
    assert agg.n_tokens_tested_ >= n and agg.positive_counts_.to_numpy().sum() > 0
    assert peak < 24 * 2**20 + 5_000 * n
    # at most 2 * sample_size / keep_proba rows of the document per round, 1 + 20 rounds (and
    # the 2**3 texts of each short document)
    assert agg.n_rows_predicted_ <= 21 * 128 + 4 * 8


# ------------------------------------------------------------------- max_time
def test_max_time_is_honoured_within_a_batch_of_the_anchor_aggregator():
    # Every token keeps the class in every sample, and delta is so small that 20 rounds of 4
    # samples never prove it: one batch is 21 model calls of 0.5 s, 11 s. max_time=1 returned
    # after that batch; now the clock is read before each call.
    filler = " ".join(f"w{i}" for i in range(30))
    docs = [f"film number {i} {filler}" for i in range(8)]
    model = Constant(pause=0.5)
    agg = GlobalAnchorAggregator(
        model,
        delta=1e-6,
        sample_size=4,
        threshold=AdaptiveThreshold(omega=0),
        vocabulary=WordFilter(min_count=1, stop_words=None),
        batch_size=len(docs),
        max_time=1.0,
        random_state=0,
    )
    start = time.perf_counter()
    agg.fit(docs)
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0 and model.calls <= 6
    assert agg.stopped_early_ and agg.n_documents_seen_ == 0
    assert agg.unprocessed_indices_.tolist() == list(range(len(docs)))
    # without the limit, the same batch takes its 21 rounds (shorter pauses)
    model = Constant(pause=0.01)
    full = clone(agg).set_params(estimator=model, max_time=None).fit(docs)
    assert not full.stopped_early_ and model.calls >= 20


def test_max_time_is_honoured_within_a_batch_of_the_lime_aggregator():
    # one model call of 0.5 s per document, 16 documents in one batch: 8 s
    docs = [f"good film number {i} with some words" for i in range(16)]
    model = Constant(pause=0.5)
    agg = GlobalLimeAggregator(
        model, n_samples=50, batch_size=len(docs), max_time=1.0, random_state=0
    )
    start = time.perf_counter()
    agg.fit(docs)
    assert time.perf_counter() - start < 5.0 and model.calls <= 6
    assert agg.stopped_early_ and agg.n_documents_seen_ == 0
    assert agg.unprocessed_indices_.tolist() == list(range(len(docs)))


# ------------------------------------------------------------------- LIME
def test_lime_surrogate_on_more_words_than_samples_is_the_same_estimator():
    # without the (features x features) Gram matrix: the ridge in its dual form, forward
    # selection by Gram-Schmidt on the samples
    from skanchors import _lime_wide
    from skanchors.lime import _forward_selection, _highest_weights, _weighted_ridge

    rng = np.random.default_rng(0)
    Z = rng.random((60, 300)) < 0.5
    Z[0] = True  # (the explained instance)
    y = Z @ (rng.normal(size=300) * (rng.random(300) < 0.05)) + 0.1 * rng.normal(size=60)
    w = rng.random(60)
    dense = Z.astype(float)
    coef, intercept = _lime_wide.ridge(Z, y, w, alpha=1.0)
    expected, expected_intercept = _weighted_ridge(dense, y, w, alpha=1.0)
    np.testing.assert_allclose(coef, expected, atol=1e-12)
    assert intercept == pytest.approx(expected_intercept, abs=1e-12)
    assert _lime_wide.forward_selection(Z, y, w, 6) == _forward_selection(dense, y, w, 6)
    assert _lime_wide.highest_weights(Z, y, w, 6) == _highest_weights(dense, y, w, 6)
    assert _lime_wide.ridge(Z, np.full(60, 0.3), w, 1.0)[1] == 0.3  # a constant target


@pytest.mark.parametrize("selection", ["forward_selection", "highest_weights", "none"])
def test_lime_explains_a_long_document_in_memory_linear_in_its_length(selection):
    # 5,000 words, 300 samples: the surrogate's (words x words) Gram matrix alone was 200 MB
    # (and a solve of 5,000 unknowns); the six words the model reads are still found
    from skanchors import LimeExplainer

    n = 5_000
    words = [f"w{i}" for i in np.random.default_rng(0).integers(0, 2000, size=n)]
    for at, word in zip((10, 900, 2000, 3100, 4000, 4990), ["good"] * 4 + ["bad"] * 2):
        words[at] = word
    document = " ".join(words)
    explainer = LimeExplainer(
        Lexicon(), n_samples=300, n_features=6, feature_selection=selection, random_state=0
    ).fit([document])
    explainer.explain(["a good film"])
    explanation, peak = traced_peak(lambda: explainer.explain([document])[0])
    assert peak < 8 * 2**20 + 3_000 * n
    top = sorted(word for word, _ in explanation.as_list()[:6])
    assert top == sorted(
        f"{w}[{at}]" for at, w in zip((10, 900, 2000, 3100, 4000, 4990), ["good"] * 4 + ["bad"] * 2)
    ), top
