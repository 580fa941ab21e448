"""AnchorExplainer on text: known answers for every sampler, sklearn text pipelines, errors."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from skanchors import AnchorExplainer, NoAnchorWarning, anchor_scorer, config_context
from skanchors.samplers import CorpusSampler, TabularSampler, UnkSampler, tokenize

DOCS = [
    "win a free prize now",
    "call me later tonight",
    "free entry to win cash",
    "see you at the game",
    "are you free tonight",
    "lunch tomorrow with the team",
    "the movie was great",
    "a bad movie with a boring plot",
] * 10

SPAM = "you can win a free prize if you call the number now"


class WordModel:
    """Predicts 'spam' iff every one of ``words`` is in the text; counts calls and rows."""

    classes_ = np.array(["ham", "spam"])

    def __init__(self, *words):
        self.words = set(words)
        self.calls = 0
        self.rows = 0

    def predict_proba(self, X):
        self.calls += 1
        self.rows += len(X)
        p = np.array([self.words <= {w for w, _, _ in tokenize(d)} for d in X], dtype=float)
        return np.column_stack([1 - p, p])


@pytest.fixture(scope="module")
def mlm_sampler(hf):
    from skanchors.samplers import MaskedLMSampler

    return MaskedLMSampler(hf["bert_mlm"], top_k=20, batch_size=32)


@pytest.mark.parametrize("sampler", ["unk", "delete", "corpus", "mlm"])
def test_free_is_the_anchor_for_every_sampler(sampler, request):
    samplers = {
        "unk": lambda: UnkSampler(),
        "delete": lambda: UnkSampler(token=None),
        "corpus": lambda: CorpusSampler(),
        "mlm": lambda: request.getfixturevalue("mlm_sampler"),
    }
    explainer = AnchorExplainer(WordModel("free"), sampler=samplers[sampler](), random_state=0).fit(
        DOCS
    )
    anchor = explainer.explain([SPAM])[0]
    assert anchor.words == ["free"]
    assert anchor.precision == 1.0 and anchor.is_anchor
    assert anchor.prediction == "spam"
    assert anchor.coverage == pytest.approx(np.mean(["free" in d.split() for d in DOCS]))


def test_a_callable_is_fitted_on_a_corpus_starting_with_an_empty_document():
    # the callable's classes are learned on the first reference document, which may be empty
    model = WordModel("free")
    explainer = AnchorExplainer(lambda d: model.predict_proba(d), random_state=0)
    explainer.fit(["", *DOCS])
    assert explainer.classes_.tolist() == [0, 1] and model.rows == 1
    assert explainer.explain([SPAM])[0].words == ["free"]


@pytest.mark.parametrize("sampler", [UnkSampler(), CorpusSampler()], ids=["unk", "corpus"])
def test_sample_keeps_the_anchor_words_and_perturbs_the_others(sampler):
    explainer = AnchorExplainer(WordModel("free"), sampler=sampler, random_state=0).fit(DOCS)
    anchor = explainer.explain([SPAM])[0]
    docs = explainer.sample(anchor, 300, random_state=0)
    assert len(docs) == 300 and all(isinstance(d, str) for d in docs)
    assert all("free" in d.split() for d in docs)
    assert len(set(docs)) > 100  # the other words are replaced at random
    assert explainer.perturbation_precision(anchor, 300, random_state=0) == 1.0
    # without "free" the model never says spam: the empty rule holds it nowhere
    empty = dataclasses.replace(anchor, predicates=())
    kept = np.mean(["free" in d.split() for d in explainer.sample(empty, 2000, random_state=0)])
    assert explainer.perturbation_precision(empty, 2000, random_state=0) == kept


@pytest.mark.parametrize("sampler", [UnkSampler(), CorpusSampler()], ids=["unk", "corpus"])
def test_two_needed_words_are_both_in_the_anchor(sampler):
    explainer = AnchorExplainer(WordModel("free", "win"), sampler=sampler, random_state=0)
    anchor = explainer.fit(DOCS).explain([SPAM])[0]
    assert anchor.words == ["win", "free"]  # in document order
    assert anchor.precision == 1.0 and anchor.is_anchor
    assert anchor.covers(["free win", "win", "to win it free!", "nothing"]).tolist() == [
        True,
        False,
        True,
        False,
    ]


def test_one_text_default_for_the_explainers_and_the_aggregators():
    # Issue 44: the explainer drew replacements from the corpus while the aggregators wrote
    # UNK. sampler=None must give the same sampler everywhere: UnkSampler().
    from skanchors import GlobalAnchorAggregator, GlobalLimeAggregator, LimeExplainer
    from skanchors.aggregation import WordFilter

    fast = dict(k=2, vocabulary=WordFilter(min_count=1), batch_size=10, random_state=0)
    fitted = [
        AnchorExplainer(WordModel("free"), random_state=0).fit(DOCS),
        LimeExplainer(WordModel("free"), n_samples=50, random_state=0).fit(DOCS),
        GlobalAnchorAggregator(WordModel("free"), sample_size=20, **fast).fit(DOCS[:8]),
        GlobalLimeAggregator(WordModel("free"), n_samples=50, **fast).fit(DOCS[:8]),
    ]
    for est in fitted:
        assert type(est.sampler_) is UnkSampler, type(est).__name__
        assert est.sampler_.get_params() == UnkSampler().get_params(), type(est).__name__
    explainer = fitted[0]
    assert not hasattr(explainer, "n_features_in_")
    anchor = explainer.explain([SPAM])[0]
    docs = explainer.sample(anchor, 200, random_state=0)
    # the other words are written UNK, never replaced by corpus words
    assert all(set(d.split()) <= set(SPAM.split()) | {"UNK"} for d in docs)
    assert sum("UNK" in d for d in docs) > 190


class LexiconModel:
    """Positive iff the text has more positive than negative words (a tiny VADER)."""

    classes_ = np.array(["negative", "positive"])
    POSITIVE = {"great", "good", "fine", "fun"}
    NEGATIVE = {"bad", "awful", "dull", "boring"}

    def predict_proba(self, X):
        score = np.array(
            [sum((w in self.POSITIVE) - (w in self.NEGATIVE) for w, _, _ in tokenize(d)) for d in X]
        )
        return np.column_stack([score <= 0, score > 0]).astype(float)


def test_the_default_gives_a_lexicon_model_its_sentiment_word():
    # The symptom of issue 44: corpus replacements drop sentiment words into the text, so an
    # anchor of a lexicon model must keep (nearly) the whole sentence; UNK only masks words,
    # so the one sentiment word holds the prediction.
    reviews = [
        "a bad and boring plot",
        "an awful film with dull actors",
        "good fun for the family",
        "the cast is fine but the script is bad",
        "a great story told well",
    ] * 20
    doc = "the story of the film is great to watch for the family"
    default = AnchorExplainer(LexiconModel(), random_state=0).fit(reviews)
    anchor = default.explain([doc])[0]
    assert anchor.words == ["great"] and anchor.is_anchor
    assert default.perturbation_precision(anchor, 1000, random_state=0) == 1.0
    # it applies to the other documents with "great", where the model agrees
    labels = LexiconModel.classes_[LexiconModel().predict_proba(reviews).argmax(1)]
    assert anchor.check(reviews, labels) == (1.0, 0.2, 20)
    corpus = AnchorExplainer(LexiconModel(), sampler=CorpusSampler(), random_state=0)
    long = corpus.fit(reviews).explain([doc])[0]
    assert "great" in long.words and len(long.words) >= len(doc.split()) // 2


def test_repeated_perturbations_are_predicted_once():
    # 3 words, UNK replacement: at most 2**3 distinct texts exist.
    model = WordModel("free")
    explainer = AnchorExplainer(model, sampler=UnkSampler(), random_state=0).fit(DOCS)
    anchor = explainer.explain(["free cash now"])[0]
    assert anchor.n_rows_predicted <= 8 + 1  # (+ the document itself, predicted first)
    assert anchor.n_samples > 8
    assert model.rows == anchor.n_rows_predicted  # every row, the document itself included


@pytest.mark.parametrize("sampler", [UnkSampler(), CorpusSampler()], ids=["unk", "corpus"])
def test_each_anchor_counts_its_own_calls_whether_or_not_rows_share_them(sampler, monkeypatch):
    # Whether documents explained together share model calls depends on how long a one-row
    # call takes; with sharing, every text anchor reported 1 call and 1 row (its document's
    # own prediction) instead of what its search cost.
    import skanchors.explainer as explainer_module

    docs = [SPAM, "win a free trip to paris now", "free tickets, call now"]
    runs = []
    for limit in (float("inf"), 0.0):  # never shared, always shared
        monkeypatch.setattr(explainer_module, "_SHARE_CALLS_ABOVE", limit)
        model = WordModel("free", "win")
        explainer = AnchorExplainer(model, sampler=sampler, random_state=0)
        anchors = explainer.fit(DOCS).explain(docs)
        counts = [(a.n_model_calls, a.n_rows_predicted) for a in anchors]
        assert sum(n for _, n in counts) == model.rows  # every row predicted, counted once
        runs.append(([str(a) for a in anchors], counts))
    assert runs[1] == runs[0]
    assert min(n for _, n in runs[0][1]) > 10  # (a search, not only the document itself)


@pytest.mark.parametrize("cache_size", [0, 250_000])
def test_a_document_explained_again_reuses_its_search(cache_size):
    # the cache (cache_size) promised reuse "in this or later calls" and gave text none: two
    # identical calls predicted 2,520 rows each
    model = WordModel("free", "win")
    docs = [SPAM, "win a free trip to paris now", "free tickets, call now"]
    with config_context(cache_size=cache_size):
        explainer = AnchorExplainer(model, random_state=0).fit(DOCS)
        first = explainer.explain(docs)
        rows = model.rows
        again = explainer.explain(docs[::-1] + [docs[0]])
    assert [str(a) for a in again] == [str(a) for a in first[::-1] + [first[0]]]
    assert rows == sum(a.n_rows_predicted for a in first)
    if cache_size:  # only each document's own prediction
        assert [(a.n_model_calls, a.n_rows_predicted) for a in again] == [(1, 1)] * 4
        assert model.rows - rows == 4
    else:  # every search again, the same
        assert [a.n_rows_predicted for a in again] == [
            a.n_rows_predicted for a in first[::-1] + [first[0]]
        ]
        assert model.rows - rows == rows + first[0].n_rows_predicted


def test_sklearn_text_pipeline_transform_and_score():
    from skanchors.datasets import load_sms_spam

    texts, labels = load_sms_spam(return_X_y=True)
    train, test = list(texts[:3000]), list(texts[3000:3400])
    model = make_pipeline(TfidfVectorizer(min_df=2), LogisticRegression(C=10, max_iter=1000))
    model.fit(train, labels[:3000])
    explainer = AnchorExplainer(model, random_state=0).fit(train)
    spam = [t for t, p in zip(test, model.predict(test)) if p == "spam"][:3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(spam)
        Xt = explainer.transform(spam)
        score = anchor_scorer(rows=8)(explainer, test)
    names = explainer.get_feature_names_out()
    assert sparse.issparse(Xt) and Xt.shape == (3, len(names))
    for i, anchor in enumerate(anchors):
        assert anchor.prediction == "spam"
        in_vocab = {w for w in anchor.words if w in explainer.sampler_.vocabulary_}
        assert {names[j] for j in Xt[i].indices} == in_vocab
        assert anchor.covers([spam[i]])[0]
    assert 0.0 <= score <= 1.0


def test_grid_search_on_text():
    model = WordModel("free")
    search = GridSearchCV(
        AnchorExplainer(model, random_state=0),
        {"threshold": [0.8, 0.95]},
        cv=2,
        scoring=anchor_scorer(rows=4),
    )
    search.fit(DOCS)
    assert search.best_estimator_.estimator is model
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def test_hf_classifier_as_the_model(hf):
    from skanchors import HFTextClassifier

    clf = HFTextClassifier(hf["clf"], batch_size=16)
    explainer = AnchorExplainer(
        clf, sampler=UnkSampler(), max_anchor_size=2, batch_size=20, random_state=0
    ).fit(DOCS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchor = explainer.explain(["the movie was great and the acting was good"])[0]
    assert anchor.prediction in ("zeta", "alpha")
    assert list(explainer.classes_) == ["zeta", "alpha"]
    assert len(anchor) <= 2 and anchor.n_model_calls >= 1


def test_text_input_errors():
    explainer = AnchorExplainer(WordModel("free")).fit(DOCS)
    with pytest.raises((TypeError, ValueError), match="X"):
        explainer.explain("free stuff")
    with pytest.raises(ValueError, match="X"):
        explainer.explain(["fine", "   "])
    with pytest.raises(ValueError, match="single string"):
        AnchorExplainer(WordModel("free")).fit("one document")
    with pytest.raises(ValueError, match="TabularSampler samples the rows of a table"):
        AnchorExplainer(WordModel("free"), sampler=TabularSampler(discretizer="decile")).fit(DOCS)
    with pytest.raises(ValueError, match="balance"):
        AnchorExplainer(WordModel("free"), balance=True).fit(DOCS)
    # a text column with a missing value is documents with a bad one, not a table
    column = pd.Series([DOCS[0], None, DOCS[1]])
    with pytest.raises(TypeError, match=r"X\[1\] is a"):
        AnchorExplainer(WordModel("free")).fit(column)
    with pytest.raises(TypeError, match=r"X\[1\] is a int"):
        AnchorExplainer(WordModel("free")).fit([DOCS[0], 5])


def test_a_text_model_given_a_frame_of_texts_gets_a_hint():
    texts = pd.DataFrame({"text": DOCS[:30]})
    model = make_pipeline(TfidfVectorizer(), LogisticRegression())
    model.fit(DOCS[:30], [int("free" in d) for d in DOCS[:30]])
    explainer = AnchorExplainer(model, random_state=0).fit(texts)  # a table of one column
    with pytest.raises(ValueError, match=r"one row per column: .* text column itself"):
        explainer.explain(texts.iloc[:2])


def test_a_text_anchor_covers_documents_only():
    explainer = AnchorExplainer(WordModel("free"), random_state=0).fit(DOCS)
    anchor = explainer.explain(["free stuff for you"])[0]
    assert [p.op for p in anchor.predicates] == ["contains"]
    assert anchor.covers(["free beer", "nothing"]).tolist() == [True, False]
    # iterating over a DataFrame gives its column names: refused, not silently wrong
    with pytest.raises(TypeError, match="select its text column"):
        anchor.covers(pd.DataFrame({"text": ["free beer", "nothing"]}))
    with pytest.raises(TypeError, match=r"X\[0\] is a int"):
        anchor.covers([1])
    # the public Predicate itself: a frame gave one value per column, a str one per letter
    (word,) = anchor.predicates
    assert word.evaluate(["free beer", "", "nothing"]).tolist() == [True, False, False]
    with pytest.raises(TypeError, match="select its text column"):
        word.evaluate(pd.DataFrame({"text": ["free beer", "nothing", "x"]}))
    with pytest.raises(TypeError, match="single string"):
        word.evaluate("free beer")
