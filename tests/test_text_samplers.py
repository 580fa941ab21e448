"""Text samplers without model weights: tokenizer, UnkSampler, CorpusSampler."""

import pickle
import unicodedata
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from skanchors import AnchorExplainer, Predicate
from skanchors._bandit import make_bandit
from skanchors._search import SampleStore, beam_search
from skanchors.datasets import load_movie_reviews
from skanchors.samplers import CorpusSampler, TextInstance, UnkSampler, tokenize

DOCS = [
    "a good movie with a good plot",
    "a bad movie",
    "the plot is bad, the actors are good",
    "I liked it",
    "...",
]


@pytest.fixture(scope="module")
def reviews():
    X, _ = load_movie_reviews(return_X_y=True)
    return list(X[:2000])


def words_of(doc):
    return [w for w, _, _ in tokenize(doc)]


# ------------------------------------------------------------------------ tokenizer
def test_tokenize_spans_and_apostrophes():
    text = "Hello, world!  It's   fine."
    tokens = tokenize(text)
    assert [w for w, _, _ in tokens] == ["Hello", "world", "It's", "fine"]
    for w, s, e in tokens:
        assert text[s:e] == w
    assert words_of("don't can’t rock 'n' roll o'clock'") == [
        "don't",
        "can’t",
        "rock",
        "n",
        "roll",
        "o'clock",
    ]


def test_tokenize_unicode():
    text = "Café naïve 東京 résumé"
    assert words_of(text) == ["Café", "naïve", "東京", "résumé"]
    nfd = unicodedata.normalize("NFD", text)  # combining accents stay inside the word
    assert words_of(nfd) == [unicodedata.normalize("NFD", w) for w in words_of(text)]
    assert words_of("x_1 42 — e-mail ½") == ["x_1", "42", "e", "mail", "½"]
    with pytest.raises(TypeError):
        tokenize(["not", "a", "string"])


@pytest.mark.parametrize(
    "text, words",
    [
        ("मुझे हिन्दी पसंद है", ["मुझे", "हिन्दी", "पसंद", "है"]),  # vowel signs, virama (Mc, Mn)
        ("مُحَمَّد رسول", ["مُحَمَّد", "رسول"]),  # Arabic vowel marks
        ("שָׁלוֹם עולם", ["שָׁלוֹם", "עולם"]),  # Hebrew points
        ("தமிழ் মাংলা", ["தமிழ்", "মাংলা"]),  # Tamil, Bengali
        ("e\u20dd x", ["e\u20dd", "x"]),  # an enclosing mark (Me)
    ],
)
def test_tokenize_keeps_every_script_s_marks_in_the_word(text, words):
    assert words_of(text) == words


def test_a_hindi_word_is_the_anchor():
    def model(texts):  # class 1 iff the word "हिन्दी" is in the text
        p = np.array([float("हिन्दी" in t.split()) for t in texts])
        return np.column_stack([1 - p, p])

    reference = ["हिन्दी भाषा", "यह किताब है", "मुझे हिन्दी पसंद है", "नमस्ते दुनिया"] * 5
    explainer = AnchorExplainer(model, sampler=UnkSampler(), random_state=0).fit(reference)
    anchor = explainer.explain(["मुझे हिन्दी पसंद है"])[0]
    assert anchor.words == ["हिन्दी"] and anchor.precision == 1.0
    for text in explainer.sample(anchor, 20, random_state=0):
        assert set(text.split()) <= {"मुझे", "हिन्दी", "पसंद", "है", "UNK"}


@pytest.mark.parametrize("sampler", [UnkSampler(), UnkSampler(token=None), CorpusSampler()])
@pytest.mark.parametrize(
    "text",
    [
        "Hello, world!  It's   fine.",
        "Café naïve 東京 résumé",
        "  leading and trailing\t\n",
        "«Quoted» (words) — and: punctuation?!",
    ],
)
def test_all_kept_decodes_to_the_same_string(sampler, text):
    inst = sampler.fit(DOCS).instance(text)
    keys, holds = inst.sample(tuple(range(inst.n_predicates)), 3, np.random.default_rng(0))
    assert holds.all() and (keys == -1).all()
    assert inst.decode(keys) == [text] * 3
    assert [str(p) for p in inst.predicates] == words_of(text)


def test_a_long_text_is_sampled_and_decoded_exactly():
    # (its time and memory are measured in bench/long_documents.py and bounded, machine-free,
    # in tests/test_long_documents.py)
    rng = np.random.default_rng(0)
    vocab = np.array(["alpha", "beta", "gamma", "delta", "it's", "x9"])
    seps = np.array([" ", ", ", "  ", ". ", "\n", " - "])
    words = vocab[rng.integers(len(vocab), size=10_000)]
    text = "".join(w + s for w, s in zip(words, seps[rng.integers(len(seps), size=10_000)]))
    sampler = CorpusSampler().fit(DOCS)
    inst = sampler.instance(text)
    keys, holds = inst.sample((0, 5, 9999), 200, np.random.default_rng(1))
    kept_all = np.full((2, inst.n_predicates), -1, dtype=np.int32)
    assert inst.decode(kept_all) == [text, text]
    decoded = inst.decode(keys[:20])
    assert inst.n_predicates == 10_000
    for row, doc in zip(range(20), decoded):
        got = words_of(doc)
        assert len(got) == 10_000
        kept = holds[row]
        assert [g for g, k in zip(got, kept) if k] == list(words[kept])
        assert all(g != w for g, w, k in zip(got, words, kept) if not k)


@pytest.mark.parametrize("bad", ["", "   \n\t", "... !!! ,,", "—"])
def test_wordless_documents_are_refused(bad):
    sampler = UnkSampler().fit(DOCS)
    with pytest.raises(ValueError, match=r"X\[1\] has no words"):
        sampler.split(["fine text", bad])
    with pytest.raises(ValueError, match="no words"):
        sampler.instance(bad)


def test_input_validation():
    sampler = CorpusSampler().fit(DOCS)
    with pytest.raises(TypeError, match="not a single string"):
        sampler.split("a single document")
    with pytest.raises(TypeError, match=r"X\[2\] is a float"):
        sampler.split(["a", "b", float("nan")])
    with pytest.raises(TypeError, match="1-d"):
        sampler.split(np.array([["a", "b"]]))
    with pytest.raises(TypeError, match="DataFrame"):
        sampler.split(pd.DataFrame({"text": ["a"]}))
    with pytest.raises(ValueError, match="no documents"):
        sampler.split([])
    with pytest.raises(TypeError, match=r"X\[0\]"):
        CorpusSampler().fit([1, 2])
    with pytest.raises(ValueError, match="sample_weight"):
        CorpusSampler().fit(DOCS, sample_weight=np.ones(len(DOCS)))
    with pytest.raises(InvalidParameterError):
        UnkSampler(keep_proba=1.0).fit(DOCS)
    with pytest.raises(InvalidParameterError):
        CorpusSampler(min_df=0).fit(DOCS)
    with pytest.raises(ValueError, match="at least 2 distinct words"):
        CorpusSampler(min_df=3).fit(DOCS)
    # Accepted containers; to_model_input keeps word-less texts (the model may see them).
    series = pd.Series(["one doc", "two docs"], index=[10, 20])
    assert sampler.split(series) == ["one doc", "two docs"]
    assert sampler.split(np.array(["one doc"])) == ["one doc"]
    assert sampler.split(("x",)) == ["x"]
    assert sampler.to_model_input(["x", ""]) == ["x", ""]
    assert sampler.instance(["one doc"]).words == ["one", "doc"]


# ------------------------------------------------------------------------- sampling
@pytest.mark.parametrize("sampler", [UnkSampler(), UnkSampler(token=None), CorpusSampler()])
@pytest.mark.parametrize("keep_proba", [0.5, 0.2])
def test_anchor_kept_and_keep_frequency(sampler, keep_proba, reviews):
    sampler = clone(sampler).set_params(keep_proba=keep_proba).fit(reviews)
    inst = sampler.instance(reviews[5])
    assert isinstance(inst, TextInstance) and inst.capabilities.exact_reuse
    anchor = (0, 3, 4)
    n = 4000
    keys, holds = inst.sample(anchor, n, np.random.default_rng(0))
    d = inst.n_predicates
    # (UNK's keys are -1 or 0: int8, for a long document's sake)
    dtype = np.int8 if isinstance(sampler, UnkSampler) else np.int32
    assert keys.shape == holds.shape == (n, d) and keys.dtype == dtype
    assert holds[:, list(anchor)].all()
    assert ((keys == -1) == holds).all()
    free = np.setdiff1d(np.arange(d), anchor)
    observed = holds[:, free]
    bound = 5 * np.sqrt(keep_proba * (1 - keep_proba) / observed.size)
    assert abs(observed.mean() - keep_proba) < bound
    per_word = 5 * np.sqrt(keep_proba * (1 - keep_proba) / n)
    assert np.all(np.abs(observed.mean(axis=0) - keep_proba) < per_word)
    # Words are masked independently: kept in both columns about keep_proba**2 of the time.
    both = (observed[:, 0] & observed[:, 1]).mean()
    assert abs(both - keep_proba**2) < 5 * np.sqrt(keep_proba**2 / n)


def test_unk_replacement_strings():
    text = "the movie, sadly, was not good"
    inst = UnkSampler().fit(DOCS).instance(text)
    keys, holds = inst.sample((5,), 300, np.random.default_rng(3))
    for doc, kept in zip(inst.decode(keys), holds):
        w = [x if k else "UNK" for x, k in zip(words_of(text), kept)]
        assert doc == f"{w[0]} {w[1]}, {w[2]}, {w[3]} {w[4]} {w[5]}"
    inst = UnkSampler(token="<?>").fit(DOCS).instance("a b")
    assert inst.decode(np.array([[0, -1], [0, 0]])) == ["<?> b", "<?> <?>"]


@pytest.mark.parametrize(
    "text, deleted, expected",
    [
        ("a b c", [1], "a c"),
        ("a b c", [2], "a b"),
        ("a b c", [0], "b c"),
        ("a b c", [1, 2], "a"),
        ("a b c", [0, 1], "c"),
        ("a b c", [0, 1, 2], ""),
        ("a b c", [0, 2], "b"),
        ("Hello, world!", [1], "Hello,!"),
        ("Hello, world!", [0], ", world!"),
        ("a, b c", [1], "a, c"),
        ("a b, c d", [1, 2], "a, d"),
        ("a  b\n\nc", [1], "a  c"),
        ("  a  b  ", [0], "  b  "),
        ("  a  b  ", [1], "  a  "),
        ("x (y) z", [1], "x () z"),
    ],
)
def test_deletion_strings(text, deleted, expected):
    inst = UnkSampler(token=None).fit(DOCS).instance(text)
    keys = np.full((2, inst.n_predicates), -1, dtype=np.int32)
    keys[0, deleted] = 0
    assert inst.decode(keys) == [expected, text]


def test_deletion_never_doubles_spaces(reviews):
    inst = UnkSampler(token=None).fit(reviews).instance("one two three four five six seven")
    keys, holds = inst.sample((), 500, np.random.default_rng(0))
    for doc, kept in zip(inst.decode(keys), holds):
        assert doc == " ".join(w for w, k in zip(inst.words, kept) if k)


def test_corpus_unigram_distribution(reviews):
    sampler = CorpusSampler().fit(reviews)
    vocab = set(sampler.replacement_words_)
    assert vocab == set(sampler.vocabulary_)
    counts = {w: sampler.word_counts_[j] for w, j in sampler.vocabulary_.items()}
    assert sum(counts.values()) == sum(len(words_of(d)) for d in reviews)
    np.testing.assert_allclose(sampler.replacement_proba_.sum(), 1.0)

    # An unseen word: replacements follow the unigram distribution.
    inst = sampler.instance("zzzunseen")
    keys, holds = inst.sample((), 60_000, np.random.default_rng(0))
    drawn = Counter(inst.decode(keys[~holds[:, 0]]))
    assert set(drawn) <= vocab
    top = sampler.replacement_words_[np.argsort(-sampler.word_counts_)[:30]]
    observed = np.array([drawn[w] for w in top] + [sum(drawn.values())])
    observed[-1] -= observed[:-1].sum()
    where = {w: k for k, w in enumerate(sampler.replacement_words_)}
    p = sampler.replacement_proba_[[where[w] for w in top]]
    expected = np.append(p, 1 - p.sum()) * observed.sum()
    assert stats.chisquare(observed, expected).pvalue > 1e-3

    # A known word is never its own replacement; the others keep their relative frequencies.
    inst = sampler.instance("the")
    keys, holds = inst.sample((), 60_000, np.random.default_rng(1))
    drawn = Counter(inst.decode(keys[~holds[:, 0]]))
    assert "the" not in drawn
    top = [w for w in top if w != "the"][:20]
    p = np.array([counts[w] for w in top], dtype=float) / (
        sampler.word_counts_.sum() - counts["the"]
    )
    observed = np.array([drawn[w] for w in top] + [sum(drawn.values())])
    observed[-1] -= observed[:-1].sum()
    expected = np.append(p, 1 - p.sum()) * observed.sum()
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_corpus_min_df():
    sampler = CorpusSampler(min_df=2).fit(DOCS)
    assert set(sampler.replacement_words_) == {"a", "good", "movie", "plot", "bad"}
    # Coverage still counts every word.
    assert sampler.instance("I liked it").reference_coverage((1,)) == pytest.approx(1 / 5)
    keys, _ = sampler.instance("I liked it").sample((), 200, np.random.default_rng(0))
    for doc in sampler.instance("I liked it").decode(keys):
        assert set(words_of(doc)) <= {"I", "liked", "it", "a", "good", "movie", "plot", "bad"}


@pytest.mark.parametrize("sampler", [UnkSampler(), UnkSampler(token=None), CorpusSampler()])
def test_determinism(sampler):
    inst = sampler.fit(DOCS).instance("the plot is good, the actors are bad")
    a = inst.sample((1,), 50, np.random.default_rng(42))
    b = inst.sample((1,), 50, np.random.default_rng(42))
    c = inst.sample((1,), 50, np.random.default_rng(43))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[1], c[1])
    assert inst.decode(a[0]) == inst.decode(b[0])
    # Pickled (as joblib does for worker processes), the sampler draws the same.
    inst2 = pickle.loads(pickle.dumps(sampler)).instance("the plot is good, the actors are bad")
    np.testing.assert_array_equal(inst2.sample((1,), 50, np.random.default_rng(42))[0], a[0])


def test_coverage_is_exact():
    inst = CorpusSampler(keep_proba=0.3).fit(DOCS).instance("the plot is good")
    anchors = [(), (0,), (1, 2), (0, 1, 3), (0, 1, 2, 3)]
    np.testing.assert_allclose(inst.coverage(anchors), [0.3 ** len(a) for a in anchors])
    # ... and matches the frequency of the anchor's words all being kept under D(z).
    _, holds = inst.sample((), 20_000, np.random.default_rng(0))
    assert abs(holds[:, [1, 2]].all(axis=1).mean() - 0.09) < 0.01


def test_reference_coverage_matches_brute_force(reviews):
    sampler = UnkSampler().fit(reviews)
    doc = "the film is a charming , funny and smart comedy , but the end is too long ."
    inst = sampler.instance(doc)
    word_sets = [set(words_of(d)) for d in reviews]
    word_counts = [Counter(words_of(d)) for d in reviews]
    rng = np.random.default_rng(0)
    anchors = [(), (0,), (1,), (0, 9), (0, 12)] + [
        tuple(sorted(rng.choice(inst.n_predicates, size=k, replace=False)))
        for k in (1, 2, 2, 3, 4)
        for _ in range(4)
    ]
    anchors.append((0, 1, 10))  # "the" twice: documents with two of them
    for anchor in anchors:
        need = Counter(inst.words[p] for p in anchor)
        expected = np.mean([all(c[w] >= m for w, m in need.items()) for c in word_counts])
        assert inst.reference_coverage(anchor) == pytest.approx(expected)
        assert inst.reference_coverage(anchor) == inst.reference_coverage(anchor)
    # The same word at two positions is two predicates that cover the same documents.
    assert inst.words[0] == inst.words[10] == "the"
    assert inst.reference_coverage((0,)) == inst.reference_coverage((10,)) > 0.3
    assert inst.reference_coverage((0, 1)) == pytest.approx(
        np.mean([{"the", "film"} <= s for s in word_sets])
    )
    assert 0 < inst.reference_coverage((0, 10)) < inst.reference_coverage((0,))
    assert sampler.instance("zzzunseen word").reference_coverage((0,)) == 0.0


def test_predicates_agree_with_perturbations(reviews):
    sampler = CorpusSampler().fit(reviews)
    doc = "a bold and funny film about the the sea"
    inst = sampler.instance(doc)
    assert inst.predicates[6] == Predicate("the", "contains", "the", position=6)
    assert inst.predicates[7] == Predicate("the", "contains", "the", position=7)
    keys, holds = inst.sample((2,), 300, np.random.default_rng(0))
    decoded = inst.decode(keys)
    for i, p in enumerate(inst.predicates):
        present = p.evaluate(decoded)
        assert present[holds[:, i]].all()  # a kept word is in the text
    # Exactly: the i-th word of a perturbation is the original iff the predicate holds.
    for doc_, kept in zip(decoded, holds):
        got = words_of(doc_)
        assert [g == w for g, w in zip(got, inst.words)] == kept.tolist()


def test_search_protocol_end_to_end():
    """The instance drives the shared SampleStore and beam search (no explainer needed)."""
    calls = []

    def predict(texts):
        calls.append(len(texts))
        return np.array([int("good" in words_of(t)) for t in texts])

    sampler = CorpusSampler().fit(DOCS * 3 + ["good " * 2 + "fine"])
    inst = sampler.instance("the plot is good and the actors are fine")
    store = SampleStore(inst, predict, 1, np.random.default_rng(0))
    store.draw([((), 100), ((3,), 100)])
    assert len(calls) == 1 and calls[0] <= 200
    n, pos = store.stats([(3,), (0,)])
    assert n[0] >= 100 and pos[0] == n[0]  # exact reuse: samples of D(z) count for (3,) too
    result = beam_search(
        inst,
        predict,
        1,
        threshold=0.95,
        delta=0.1,
        epsilon=0.15,
        beam_size=2,
        max_anchor_size=None,
        batch_size=100,
        bandit=make_bandit("kl-lucb"),
        rng=np.random.default_rng(0),
    )
    assert result.is_anchor and result.anchor == (3,)
    assert inst.predicates[3].value == "good"


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cells", [None, 7, 64])
def test_subset_reuse_counts_a_sample_for_every_candidate_holding_its_set(
    cells, sparse, monkeypatch
):
    # exact reuse: a sample drawn for a set of kept words counts for every candidate that
    # contains that set and whose words the sample kept; counted in blocks of rows of any size
    # (7 cells: one row per block, 64: seven rows) the counts are the same, and so they are
    # with the candidates as a sparse matrix (long texts) or a dense one.
    import skanchors._samples as samples

    if cells is not None:
        monkeypatch.setattr(samples, "_COUNT_CELLS", cells)
    monkeypatch.setattr(samples, "_SPARSE_FROM", 1 if sparse else 10**9)
    sampler = CorpusSampler().fit(DOCS * 3)
    inst = sampler.instance("the plot is good and the actors are fine")

    def predict(texts):
        return np.array([int("good" in words_of(t)) for t in texts])

    store = SampleStore(inst, predict, 1, np.random.default_rng(0))
    # The store reads which words a sample kept off its keys: it keeps no second matrix.
    assert store.holds is None
    candidates = [(1, 3), (3,), (1, 3, 5), (2,), ()]

    def brute(start, stop):
        sets = [set(store._anchors[i]) for i in store.anchor_id[start:stop]]
        # which words each sample kept, read off its text (a replacement is another word)
        texts = inst.decode(store.keys[start:stop])
        holds = np.array([[w == v for w, v in zip(words_of(t), inst.words)] for t in texts])
        return np.array(
            [
                [s <= set(c) and holds[r, list(c)].all() for c in candidates]
                for r, s in enumerate(sets)
            ]
        )

    store.draw([((), 50), ((1,), 50), ((1, 3), 50)])
    assert np.array_equal(store.valid(candidates), brute(0, 150))
    store.draw([((3, 5), 50), ((2, 4), 50), ((1, 3, 5), 50)])  # sets added since
    assert np.array_equal(store.valid(candidates), brute(0, 300))
    assert np.array_equal(store.valid(candidates, 120, 260), brute(120, 260))
    valid = brute(0, 300)
    positives = valid[store.correct].sum(axis=0)
    n, pos = store.stats(candidates)
    assert n.tolist() == valid.sum(axis=0).tolist() and pos.tolist() == positives.tolist()
    n, pos = store.counts(candidates, 120, 260)
    assert n.tolist() == brute(120, 260).sum(axis=0).tolist()
    for j, c in enumerate(candidates):
        assert store.valid_indices(c).tolist() == np.flatnonzero(valid[:, j]).tolist()


def test_estimator_api():
    sampler = CorpusSampler(keep_proba=0.4, min_df=1)
    assert clone(sampler).get_params() == {"keep_proba": 0.4, "min_df": 1}
    assert UnkSampler(token=None).get_params() == {"keep_proba": 0.5, "token": None}
    sampler.fit(DOCS)
    names = sampler.get_feature_names_out()
    assert list(names) == sorted(sampler.vocabulary_)
    assert sampler.n_documents_ == 5
    assert sampler.document_frequency_[sampler.vocabulary_["good"]] == 2
    assert sampler.word_counts_[sampler.vocabulary_["good"]] == 3
