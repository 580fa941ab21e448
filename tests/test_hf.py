"""Hugging Face integration: MaskedLMSampler and HFTextClassifier on tiny models built here.

Nothing is downloaded: the models are built from a config (random weights), saved to a
temporary folder and reloaded by path with HF_HUB_OFFLINE=1.
"""

import math
import os
import pickle
import re
import subprocess
import sys
import time

import numpy as np
import pytest
from hf_models import CORPUS, WORDS, _build  # noqa: F401
from sklearn.base import clone

from skanchors.models import as_probability_model
from skanchors.samplers import tokenize

DOC = "The movie was great, but the ending was bad!"


def test_import_skanchors_is_light():
    code = (
        "import sys, skanchors, skanchors.samplers, skanchors.models, skanchors.explainer\n"
        "import skanchors.samplers.masked_lm, skanchors.samplers.text\n"
        "heavy = ('torch', 'transformers', 'matplotlib', 'numba')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@pytest.fixture(scope="module")
def bert_sampler(hf):
    from skanchors.samplers import MaskedLMSampler

    return MaskedLMSampler(hf["bert_mlm"], top_k=5, batch_size=16).fit(CORPUS)


class ForwardCounter:
    """Counts whole-model forward passes and records input and logits shapes."""

    def __init__(self, model):
        self.calls = 0
        self.input_shapes = []
        self.logit_shapes = []
        self.handle = model.register_forward_hook(self)

    def __call__(self, module, args, kwargs_or_output, output=None):
        self.calls += 1
        out = kwargs_or_output if output is None else output
        self.logit_shapes.append(tuple(out.logits.shape))

    def remove(self):
        self.handle.remove()


def _count_forward(model, monkeypatch):
    counter = ForwardCounter(model)
    original = model.forward

    def forward(*args, **kwargs):
        counter.input_shapes.append(tuple(kwargs["input_ids"].shape))
        return original(*args, **kwargs)

    monkeypatch.setattr(model, "forward", forward)
    return counter


# -------------------------------------------------------------------- MaskedLMSampler
def test_mlm_fit_candidates(bert_sampler, hf):
    from skanchors.samplers import MaskedLMSampler

    s = bert_sampler
    assert s.mask_token_ == "[MASK]"
    assert set(s.candidate_words_) == set(WORDS)  # no specials, punctuation or ## pieces
    assert len(s.candidate_ids_) == len(s.candidate_words_)
    assert s.max_length_ == 128
    assert s.n_documents_ == len(CORPUS)
    bpe = MaskedLMSampler(hf["bpe_mlm"], top_k=5).fit(CORPUS)
    pieces = bpe._tokenizer.convert_ids_to_tokens(bpe.candidate_ids_.tolist())
    assert all(p.startswith("\u0120") for p in pieces)  # word-start pieces only
    assert all(re.fullmatch(r"\w+(?:'\w+)*", w) for w in bpe.candidate_words_)
    assert {"movie", "great", "the"} <= set(bpe.candidate_words_)
    with pytest.raises(ValueError, match="sample_weight"):
        MaskedLMSampler(hf["bert_mlm"]).fit(CORPUS, sample_weight=np.ones(len(CORPUS)))


@pytest.mark.parametrize("kind", ["bert_mlm", "bpe_mlm"])
def test_mlm_anchor_kept_and_only_masked_words_replaced(kind, hf, bert_sampler):
    from skanchors.samplers import MaskedLMSampler

    s = bert_sampler if kind == "bert_mlm" else MaskedLMSampler(hf[kind], top_k=5).fit(CORPUS)
    inst = s.instance(DOC)
    assert inst.capabilities.exact_reuse and inst.n_predicates == 9
    anchor = (1, 3)
    keys, holds = inst.sample(anchor, 200, np.random.default_rng(0))
    assert holds[:, list(anchor)].all()
    assert ((keys == -1) == holds).all()
    assert abs(holds[:, [0, 2, 4, 5, 6, 7, 8]].mean() - 0.5) < 0.05
    candidates = set(s.candidate_ids_.tolist())
    assert set(keys[~holds].tolist()) <= candidates
    decoded = inst.decode(keys)
    for doc, kept in zip(decoded, holds):
        got = [w for w, _, _ in tokenize(doc)]
        assert len(got) == inst.n_predicates
        for g, w, k in zip(got, inst.words, kept):
            assert (g == w) == k
            assert k or g in set(s.candidate_words_)
        # Punctuation and spacing stay as they are.
        assert re.sub(r"\w+", "", doc) == re.sub(r"\w+", "", DOC)
    all_kept = np.full((1, inst.n_predicates), -1, dtype=np.int32)
    assert inst.decode(all_kept) == [DOC]


def test_mlm_never_replaces_a_word_by_itself_in_another_case(bert_sampler):
    # the uncased model's top fill for "Great" was "great": 122 of 513 "replacements" left
    # the text the same for an uncased classifier while the word counted as not kept
    inst = bert_sampler.instance("Great movie")
    keys, holds = inst.sample((1,), 1000, np.random.default_rng(0))
    fills = [doc.split()[0] for doc, kept in zip(inst.decode(keys), holds[:, 0]) if not kept]
    assert len(fills) > 400 and all(w.lower() != "great" for w in fills)
    assert "great" in set(bert_sampler.candidate_words_)


def test_mlm_fills_come_from_top_k_of_the_model(bert_sampler):
    import torch

    s = bert_sampler
    tok, model = s._tokenizer, s._model
    inst = s.instance(DOC)
    j = 3  # "great": every other word is anchored, so each row has at most one mask
    anchor = tuple(i for i in range(inst.n_predicates) if i != j)
    keys, holds = inst.sample(anchor, 300, np.random.default_rng(0))
    drawn = keys[~holds[:, j], j]
    assert len(drawn) > 100
    masked = "The movie was " + tok.mask_token + ", but the ending was bad!"
    assert masked == "The movie was [MASK], but the ending was bad!"
    enc = tok(masked, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits[0]
    pos = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
    row = logits[pos].numpy().astype(float)
    allowed = np.full_like(row, -np.inf)
    allowed[s.candidate_ids_] = row[s.candidate_ids_]
    allowed[tok.convert_tokens_to_ids("great")] = -np.inf  # the original word is excluded
    top = np.argsort(-allowed)[:5]
    assert set(drawn.tolist()) <= set(top.tolist())
    assert len(set(drawn.tolist())) >= 3  # sampled, not the argmax
    # Frequencies follow the softmax over the top-k logits.
    p = np.exp(allowed[top] - allowed[top].max())
    p /= p.sum()
    freq = np.array([(drawn == t).mean() for t in top])
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / len(drawn)) + 1e-9)


def test_mlm_deterministic_and_batch_independent(hf, bert_sampler):
    from skanchors.samplers import MaskedLMSampler

    inst = bert_sampler.instance(DOC)
    a = inst.sample((1,), 40, np.random.default_rng(7))
    b = inst.sample((1,), 40, np.random.default_rng(7))
    c = inst.sample((1,), 40, np.random.default_rng(8))
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    one = MaskedLMSampler(hf["bert_mlm"], top_k=5, batch_size=1).fit(CORPUS).instance(DOC)
    np.testing.assert_array_equal(one.sample((1,), 40, np.random.default_rng(7))[0], a[0])


def test_mlm_one_forward_pass_per_batch(bert_sampler, monkeypatch):
    inst = bert_sampler.instance(DOC)
    counter = _count_forward(bert_sampler._model, monkeypatch)
    try:
        keys, holds = inst.sample((), 50, np.random.default_rng(0))
    finally:
        counter.remove()
    with_mask = int((~holds).any(axis=1).sum())
    assert counter.calls == math.ceil(with_mask / 16)  # batch_size=16
    # Logits only at the masks: the model itself returns none.
    assert all(shape[1] == 0 for shape in counter.logit_shapes)
    # Rows without any mask cost nothing.
    counter = _count_forward(bert_sampler._model, monkeypatch)
    try:
        inst.sample(tuple(range(inst.n_predicates)), 50, np.random.default_rng(0))
    finally:
        counter.remove()
    assert counter.calls == 0


def test_mlm_long_text_in_windows(hf, monkeypatch):
    from skanchors.samplers import MaskedLMSampler

    s = MaskedLMSampler(hf["bert_mlm"], top_k=5, batch_size=8, max_length=64).fit(CORPUS)
    rng = np.random.default_rng(0)
    words = [WORDS[i] for i in rng.integers(len(WORDS), size=1500)]
    text = " ".join(words)  # one vocabulary piece per word
    inst = s.instance(text)
    counter = _count_forward(s._model, monkeypatch)
    try:
        keys, holds = inst.sample((0, 700, 1499), 6, np.random.default_rng(1))
    finally:
        counter.remove()
    assert holds[:, [0, 700, 1499]].all()
    width = 64 - 2  # [CLS] ... [SEP]
    assert counter.calls == math.ceil(6 * math.ceil(1500 / width) / 8)
    assert max(shape[0] for shape in counter.input_shapes) <= 8
    assert max(shape[1] for shape in counter.input_shapes) <= 64
    for doc, kept in zip(inst.decode(keys), holds):
        got = doc.split(" ")
        assert len(got) == 1500
        assert all((g == w) == k for g, w, k in zip(got, words, kept))


def test_mlm_head_modes(hf, bert_sampler, monkeypatch):
    """Logits at the masks only ("hook") and gathered from the full logits agree."""
    import torch

    from skanchors.samplers import MaskedLMSampler

    assert bert_sampler._head_mode == "hook"
    inst = bert_sampler.instance(DOC)
    expected = inst.sample((), 60, np.random.default_rng(5))[0]
    full = MaskedLMSampler(hf["bert_mlm"], top_k=5).fit(CORPUS)
    full._head_mode = "full"
    counter = _count_forward(full._model, monkeypatch)
    try:
        got = full.instance(DOC).sample((), 60, np.random.default_rng(5))[0]
    finally:
        counter.remove()
    np.testing.assert_array_equal(got, expected)
    assert all(shape[1] > 0 for shape in counter.logit_shapes)
    # An output embedding that is not the last step of the model is detected.
    model, tok = full._model, full._tokenizer
    detached = torch.nn.Linear(32, model.config.vocab_size)
    monkeypatch.setattr(model, "get_output_embeddings", lambda: detached)
    assert full._probe_head(torch, tok, model) == (model.config.vocab_size, "full")
    hidden = model.cls.predictions.transform.dense
    monkeypatch.setattr(model, "get_output_embeddings", lambda: hidden)
    assert full._probe_head(torch, tok, model)[1] == "full"


def test_mlm_threads_share_the_model(bert_sampler):
    """Concurrent threads read their own masks only (joblib's threading backend)."""
    from joblib import Parallel, delayed

    inst = bert_sampler.instance(DOC)

    def draw(seed):
        return inst.sample((), 40, np.random.default_rng(seed))[0]

    expected = [draw(seed) for seed in range(6)]
    got = Parallel(n_jobs=3, backend="threading")(delayed(draw)(seed) for seed in range(6))
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


def test_mlm_fill_and_pickle(bert_sampler):
    s = bert_sampler
    texts = [
        f"the movie was {s.mask_token_} and {s.mask_token_} !",
        "no mask here",
        f"{s.mask_token_}",
    ]
    filled, words = s.fill(texts, np.random.default_rng(0), return_words=True)
    assert [len(w) for w in words] == [2, 0, 1]
    assert filled[0] == f"the movie was {words[0][0]} and {words[0][1]} !"
    assert filled[1] == "no mask here" and filled[2] == words[2][0]
    assert set(words[0] + words[2]) <= set(s.candidate_words_)
    assert s.fill(texts, np.random.default_rng(0)) == filled
    # Pickling drops the weights; the copy reloads them and draws the same.
    blob = pickle.dumps(s)
    assert len(blob) < 200_000
    copy = pickle.loads(blob)
    assert "_model" not in copy.__dict__ and "_model" in s.__dict__
    inst = s.instance(DOC)
    np.testing.assert_array_equal(
        copy.instance(DOC).sample((), 30, np.random.default_rng(3))[0],
        inst.sample((), 30, np.random.default_rng(3))[0],
    )


def test_copies_of_a_classifier_and_a_masked_lm_share_their_loaded_models(hf, monkeypatch):
    # Tokenizers took slots of the two-model store: a classifier and its tokenizer filled
    # it, so each copy (what every joblib task gets) reloaded both models and tokenizers.
    from collections import OrderedDict

    from skanchors import hf as hf_module
    from skanchors.samplers import MaskedLMSampler

    monkeypatch.setattr(hf_module, "_PRETRAINED", OrderedDict())
    loads = []
    real = hf_module._load_pretrained

    def counting(kind, name, device, load):
        return real(kind, name, device, lambda: loads.append(kind) or load())

    monkeypatch.setattr(hf_module, "_load_pretrained", counting)
    clf = hf_module.HFTextClassifier(hf["clf"])
    sampler = MaskedLMSampler(hf["bert_mlm"], top_k=5).fit(CORPUS)
    blob = pickle.dumps((clf, sampler))
    for seed in range(4):
        c, s = (clf, sampler) if seed == 0 else pickle.loads(blob)
        assert c.predict_proba([DOC]).shape == (1, 2)
        s.instance(DOC).sample((), 5, np.random.default_rng(seed))
        if seed == 0:
            first = sorted(loads)
    assert {"masked-lm", "sequence-classification"} <= set(first)
    assert sorted(loads) == first  # the copies loaded nothing again


# --------------------------------------------------------------------- HFTextClassifier
@pytest.fixture
def clf(hf):
    from skanchors.models import HFTextClassifier

    return HFTextClassifier(hf["clf"], batch_size=4)


def _manual_proba(path, texts):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    out = []
    for t in texts:
        with torch.no_grad():
            out.append(torch.softmax(model(**tok(t, return_tensors="pt")).logits[0], -1).numpy())
    return np.array(out)


def test_classifier_labels_and_probabilities(clf, hf):
    texts = CORPUS + ["", "!!!", DOC]
    proba = clf.predict_proba(texts)
    assert proba.shape == (len(texts), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    assert list(clf.classes_) == ["zeta", "alpha"]  # id order, not alphabetical
    np.testing.assert_allclose(proba, _manual_proba(hf["clf"], texts), atol=1e-5)
    np.testing.assert_array_equal(clf.predict(texts), clf.classes_[proba.argmax(axis=1)])
    assert as_probability_model(clf).classes_.tolist() == ["zeta", "alpha"]
    assert clf.fit(["ignored"], [0]) is clf
    assert clf.predict_proba([]).shape == (0, 2)

    from skanchors.models import HFTextClassifier

    three = HFTextClassifier(hf["clf3"])
    assert list(three.classes_) == ["pos", "neg", "neutral"]
    np.testing.assert_allclose(
        three.predict_proba(CORPUS[:3]), _manual_proba(hf["clf3"], CORPUS[:3]), atol=1e-5
    )


def test_classifier_batching_and_truncation(hf):
    from skanchors.models import HFTextClassifier

    texts = CORPUS * 2 + [" ".join(CORPUS * 5)]  # the last one is longer than 128 tokens
    small = HFTextClassifier(hf["clf"], batch_size=3, cache_size=0).predict_proba(texts)
    big = HFTextClassifier(hf["clf"], batch_size=100, cache_size=0).predict_proba(texts)
    np.testing.assert_allclose(small, big, atol=1e-5)
    short = HFTextClassifier(hf["clf"], max_length=6).predict_proba([CORPUS[0], "the movie was"])
    np.testing.assert_allclose(short[0], short[1], atol=1e-5)  # [CLS] the movie was great [SEP]
    full = HFTextClassifier(hf["clf"]).predict_proba([CORPUS[0], "the movie was"])
    assert not np.allclose(full[0], full[1])


def test_a_tokenizer_without_a_pad_token_batches_equal_lengths(hf):
    # GPT-2 style: "Asking to pad but the tokenizer does not have a padding token" even for
    # one text, and "Cannot handle batch sizes > 1 if no padding token is defined" after
    from transformers import AutoTokenizer, GPT2Config, GPT2ForSequenceClassification

    from skanchors.models import HFTextClassifier

    tokenizer = AutoTokenizer.from_pretrained(hf["clf3"])
    tokenizer.pad_token = None
    config = GPT2Config(
        vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2, n_positions=64,
        id2label={0: "x", 1: "y"}, label2id={"x": 0, "y": 1},
    )  # fmt: skip
    import torch

    torch.manual_seed(0)
    model = GPT2ForSequenceClassification(config).eval()
    texts = CORPUS[:6] + [CORPUS[0]]  # several lengths, and one repeated
    clf = HFTextClassifier(model, tokenizer=tokenizer, batch_size=4, cache_size=0)
    proba = clf.predict_proba(texts)  # no pad_token_id in the config: one text per pass
    one_by_one = np.vstack([clf.predict_proba([t]) for t in texts])
    np.testing.assert_allclose(proba, one_by_one, atol=1e-6)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    assert len({tuple(np.round(row, 6)) for row in proba}) > 1
    # the usual GPT-2 set-up: the tokenizer pads with EOS, the config has no pad_token_id
    # (was "Cannot handle batch sizes > 1 if no padding token is defined")
    tokenizer.pad_token = tokenizer.eos_token
    np.testing.assert_allclose(clf.predict_proba(texts), proba, atol=1e-6)
    tokenizer.pad_token = None
    # batches of equal token lengths (an id the texts never hold: their last token counts)
    model.config.pad_token_id = tokenizer.convert_tokens_to_ids("<pad>")
    sizes = []
    model.register_forward_hook(
        lambda m, args, kwargs, out: sizes.append(len(kwargs["input_ids"])), with_kwargs=True
    )
    np.testing.assert_allclose(clf.predict_proba(texts), proba, atol=1e-6)
    assert max(sizes) > 1


@pytest.mark.parametrize(
    "head", [dict(num_labels=1), dict(problem_type="multi_label_classification")]
)
def test_a_head_that_is_not_a_softmax_classifier_is_refused(hf, head):
    # num_labels=1: a softmax over one logit gave probability 1.0 to every text, and every
    # anchor was "IF (any input) ... PRECISION 1.00"
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from skanchors.models import HFTextClassifier

    tokenizer = AutoTokenizer.from_pretrained(hf["clf"])
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=128, **head,
    )  # fmt: skip
    model = BertForSequenceClassification(config).eval()
    with pytest.raises(ValueError, match="single-label classifiers.*e.g. \\[1 - p, p\\]"):
        HFTextClassifier(model, tokenizer=tokenizer).predict_proba(["a movie"])


@pytest.mark.parametrize("kind", ["clf", "clf3"])
def test_classifier_truncates_to_the_positions_a_model_has(hf, kind):
    # a RoBERTa-style model of 130 position embeddings places 128 tokens (two are reserved);
    # a tokenizer without model_max_length made the cap 130 and the forward pass failed
    from transformers import AutoTokenizer

    from skanchors.models import HFTextClassifier

    tokenizer = AutoTokenizer.from_pretrained(hf[kind])
    tokenizer.model_max_length = int(1e30)
    long_text = [" ".join(CORPUS * 5)]
    for max_length in (None, 1000):  # an explicit length is capped alike
        clf = HFTextClassifier(hf[kind], tokenizer=tokenizer, max_length=max_length)
        proba = clf.predict_proba(long_text)
        assert clf._max_length() == 128 and np.isfinite(proba).all()
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)


def test_classifier_cache(clf, monkeypatch):
    clf.fit()
    counter = _count_forward(clf._model, monkeypatch)
    try:
        first = clf.predict_proba(CORPUS + CORPUS[:3])  # duplicates are predicted once
        rows = sum(shape[0] for shape in counter.input_shapes)
        calls = counter.calls
        again = clf.predict_proba(CORPUS[::-1])
        assert counter.calls == calls  # all cached: no model call
        clf.predict_proba(CORPUS[:2] + ["a new text"])
        assert counter.calls == calls + 1 and counter.input_shapes[-1][0] == 1
    finally:
        counter.remove()
    assert rows == len(CORPUS) and calls == math.ceil(len(CORPUS) / 4)
    np.testing.assert_array_equal(again, first[: len(CORPUS)][::-1])
    # Least recently used texts are evicted beyond cache_size.
    clf.set_params(cache_size=2)
    clf.predict_proba(["x y", "y z", "z w"])
    assert list(clf._cache) == ["y z", "z w"]


def test_classifier_clone_and_pickle(clf, hf):
    from skanchors.models import HFTextClassifier

    proba = clf.predict_proba(CORPUS)
    twin = clone(clf)
    assert twin._model is clf._model and twin._tokenizer is clf._tokenizer
    assert twin.get_params() == clf.get_params()
    np.testing.assert_allclose(twin.predict_proba(CORPUS), proba)

    blob = pickle.dumps(clf)
    assert "_model" in clf.__dict__  # the original keeps its weights
    copy = pickle.loads(blob)
    assert "_model" not in copy.__dict__ and "_tokenizer" not in copy.__dict__
    assert len(blob) < 10_000
    np.testing.assert_allclose(copy.predict_proba(CORPUS), proba, atol=1e-6)
    assert "_model" in copy.__dict__  # reloaded lazily

    # A loaded model object is used as is, shared by clones and kept by pickle.
    from transformers import AutoModelForSequenceClassification

    obj = AutoModelForSequenceClassification.from_pretrained(hf["clf"])
    from_obj = HFTextClassifier(obj)  # tokenizer found through obj.name_or_path
    np.testing.assert_allclose(from_obj.predict_proba(CORPUS), proba, atol=1e-6)
    assert clone(from_obj).model is obj and clone(from_obj)._model is obj
    restored = pickle.loads(pickle.dumps(from_obj))
    np.testing.assert_allclose(restored.predict_proba(CORPUS[:2]), proba[:2], atol=1e-6)


def test_loaded_models_are_shared_within_the_process(hf, tmp_path):
    from skanchors.models import HFTextClassifier
    from skanchors.samplers import MaskedLMSampler

    a, b = HFTextClassifier(hf["clf"]).fit(), HFTextClassifier(hf["clf"]).fit()
    assert a._model is b._model and a._tokenizer is b._tokenizer
    s1 = MaskedLMSampler(hf["bert_mlm"]).fit(CORPUS)
    s2 = MaskedLMSampler(hf["bert_mlm"]).fit(CORPUS)
    assert s1._model is s2._model
    # A model saved again to the same folder is read again.
    path = _build(tmp_path / "clf", "bert", "clf", id2label={0: "x", 1: "y"})
    first = HFTextClassifier(path).fit()._model
    _build(tmp_path / "clf", "bert", "clf", id2label={0: "x", 1: "z"})
    later = time.time() + 10  # file systems with coarse timestamps
    for f in (tmp_path / "clf").iterdir():
        os.utime(f, (later, later))
    again = HFTextClassifier(path)
    assert again.fit()._model is not first and list(again.classes_) == ["x", "z"]


def test_classifier_bad_input(clf):
    with pytest.raises(TypeError, match="not a single string"):
        clf.predict_proba("a single text")
    with pytest.raises(TypeError, match=r"X\[1\] is a int"):
        clf.predict_proba(["fine", 3])
    with pytest.raises(TypeError, match="1-d"):
        clf.predict(np.array([["a", "b"]]))
    from skanchors.models import HFTextClassifier

    with pytest.raises(TypeError, match="model must be"):
        HFTextClassifier(object()).predict_proba(["x"])


@pytest.mark.parametrize("path", ["/tmp/no/such/model", "./no_such_dir", "a/b/c"])
def test_a_missing_model_folder_is_named(path, hf):
    from skanchors.models import HFTextClassifier
    from skanchors.samplers import MaskedLMSampler

    with pytest.raises(FileNotFoundError, match=f"model={path!r}: no such folder"):
        HFTextClassifier(path).predict_proba(["x"])
    with pytest.raises(FileNotFoundError, match=f"model={path!r}: no such folder"):
        MaskedLMSampler(path).fit(["some words here"])
    with pytest.raises(FileNotFoundError, match=f"tokenizer={path!r}: no such folder"):
        HFTextClassifier(hf["clf"], tokenizer=path).predict_proba(["x"])
