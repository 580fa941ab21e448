"""Which text sampler should be the default? UNK, deletion and corpus words, measured.

Issue 44, item 3: with the default ``CorpusSampler`` the anchors of a lexicon sentiment model on
tweets were whole sentences; the global aggregators default to ``UnkSampler``. This script
explains the same test documents of several corpora and model kinds with each candidate
sampler and judges the anchors by measures that do not depend on the sampler (see
``CRITERION``, fixed before the first full run), then names the winner.

Run it in the peer virtualenv (numpy < 2 is not needed, only vaderSentiment, a benchmark-only
package), once with ``--setup`` to fetch the data with pip, then offline::

    bench/.venv/bin/python bench/text_default.py --setup   # pip: vaderSentiment + its sdist
    bench/.venv/bin/python bench/text_default.py           # full run, writes results_text_default.*
    bench/.venv/bin/python bench/text_default.py --quick   # 20 documents a cell, writes nothing

Corpora: the movie-review sentences and SMS messages shipped in ``skanchors.datasets``, and the
tweets and Amazon review snippets with human sentiment ratings that the VADER authors publish
with their paper (Hutto and Gilbert, ICWSM 2014) inside the vaderSentiment source distribution
on PyPI (MIT licence), read from the downloaded archive: nothing is fetched at run time.
Models: TF-IDF + logistic regression trained on each corpus; VADER itself (a third-party
lexicon-and-rules model) on the three sentiment corpora; counts + multinomial naive Bayes on
the SMS messages.
"""

from __future__ import annotations

import os

for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import hashlib  # noqa: E402
import html  # noqa: E402
import importlib.metadata  # noqa: E402
import io  # noqa: E402
import math  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tarfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.naive_bayes import MultinomialNB  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import fmt, json_default, machine, prefix_of, read_json, write_json  # noqa: E402  # noqa: E402
from _common import versions as _tabular_versions  # noqa: E402

SEED = 0
THRESHOLD = 0.95  # the explainer's default
TOLERANCE = 0.025  # the search accepts a rule whose lower bound clears threshold - 0.025
N_FRESH = 2000
VADER_VERSION = "3.3.2"
VADER_SDIST = f"vaderSentiment-{VADER_VERSION}.tar.gz"
DATA_DIR = HERE / ".data"

SAMPLERS = ("unk", "delete", "corpus")
SAMPLER_LABELS = {
    "unk": "UnkSampler()",
    "delete": "UnkSampler(token=None)",
    "corpus": "CorpusSampler()",
}
CELLS = (
    ("movie reviews", "tfidf-lr"),
    ("movie reviews", "vader"),
    ("tweets", "tfidf-lr"),
    ("tweets", "vader"),
    ("amazon", "tfidf-lr"),
    ("amazon", "vader"),
    ("sms", "tfidf-lr"),
    ("sms", "counts-nb"),
)
GATE_SHARE = 0.90
TIE = 0.10

CRITERION = f"""\
Criterion (written into the script before the first full run, not changed after it):

1. Soundness gate. In every cell (corpus x model), at least {GATE_SHARE:.0%} of the sampler's
   valid anchors (`is_anchor`) keep a fresh precision `explainer.perturbation_precision(anchor,
   {N_FRESH})`, under the sampler's own distribution, of at least threshold - {TOLERANCE}
   = {THRESHOLD - TOLERANCE:.3f}. A sampler that fails in any cell is not eligible (if none
   passed, the gate would be dropped and reported).
2. Score: held-out leverage. For each explained document, the anchor's words are checked on the
   held-out documents (the test split without that document; `Anchor.check`): coverage `c` =
   share of them containing every anchor word, precision `p` = share of those the model puts in
   the anchor's class, base rate `b` = share of all of them the model puts in that class.
   Leverage = `c * (p - b)` = P(rule and class) - P(rule) P(class), the association-rule
   measure of Piatetsky-Shapiro: the share of held-out documents on which the rule is right
   beyond what the class's share alone gives. An anchor that covers no other document scores
   0, so does the empty anchor (it covers all, at the base rate), and a rule whose words
   predict the class worse than its share scores below 0. Every explained document counts,
   valid anchor or not (the user gets the rule either way). The score of a sampler is the
   mean over the cells of the mean over the documents of its cell.
3. Decision. The eligible sampler with the highest score is the default; if the runner-up is
   within {TIE:.0%} of it (relative), the one with the shorter mean anchor (words, mean of the
   cells) wins; at equal lengths the order UnkSampler(), UnkSampler(token=None), CorpusSampler()
   decides (the aggregators' current default first). MaskedLMSampler is not a candidate: it
   needs torch and transformers, which are not dependencies of skanchors, and a model's
   weights, so it cannot be what `sampler=None` gives.
"""

WORD_SIGNAL_NOTE = (
    "*lexicon words* = share of all anchor words (pooled) that are in VADER's lexicon; *class "
    "words* = share (pooled) whose VADER valence has the sign of the anchor's class (anchors of "
    "positive or negative predictions of the sentiment corpora)."
)


# --------------------------------------------------------------------------------------------
# data


def sdist_path(args):
    return Path(args.vader_sdist) if args.vader_sdist else DATA_DIR / VADER_SDIST


def setup(args):
    """Install vaderSentiment and download its source distribution (the corpora), with pip."""
    pip = [sys.executable, "-m", "pip"]
    subprocess.run([*pip, "install", f"vaderSentiment=={VADER_VERSION}"], check=True)
    DATA_DIR.mkdir(exist_ok=True)
    subprocess.run(
        [
            *pip,
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"vaderSentiment=={VADER_VERSION}",
            "-d",
            str(DATA_DIR),
        ],
        check=True,
    )
    print("ready:", DATA_DIR / VADER_SDIST)


def _vader_corpus(path, member):
    """(texts, labels) of one ground-truth file of the VADER paper: the mean human rating in
    [-4, 4] gives the label (positive > 0, negative < 0; a rating of exactly 0 is dropped)."""
    with tarfile.open(path) as outer:
        inner = outer.extractfile(
            f"vaderSentiment-{VADER_VERSION}/additional_resources/hutto_ICWSM_2014.tar.gz"
        ).read()
    with tarfile.open(fileobj=io.BytesIO(inner)) as tf:
        text = tf.extractfile(f"hutto_ICWSM_2014/{member}").read().decode("utf-8")
    texts, labels = [], []
    for line in text.splitlines():
        if not line.strip():
            continue
        _, rating, doc = line.split("\t")
        rating = float(rating)
        if rating == 0:
            continue
        texts.append(html.unescape(doc))
        labels.append("positive" if rating > 0 else "negative")
    return texts, np.asarray(labels)


def load_corpus(name, args):
    from skanchors.datasets import load_movie_reviews, load_sms_spam

    if name == "movie reviews":
        X, y = load_movie_reviews(return_X_y=True)
        return list(X), np.where(np.asarray(y) == 1, "positive", "negative")
    if name == "sms":
        X, y = load_sms_spam(return_X_y=True)
        return list(X), np.asarray(y).astype(str)
    path = sdist_path(args)
    if not path.exists():
        raise SystemExit(f"{path} not found: run this script once with --setup (uses pip).")
    member = {
        "tweets": "tweets_GroundTruth.txt",
        "amazon": "amazonReviewSnippets_GroundTruth.txt",
    }[name]
    return _vader_corpus(path, member)


SENTIMENT_SIGN = {"positive": 1, "negative": -1, "neutral": 0}


# --------------------------------------------------------------------------------------------
# models


class VaderClassifier:
    """VADER (vaderSentiment) as a 3-class classifier: the compound score's thresholds of the
    VADER README (>= 0.05 positive, <= -0.05 negative, neutral between). Probabilities are
    one-hot: VADER has no calibrated probabilities, and anchors need only the class."""

    classes_ = np.array(["negative", "neutral", "positive"])

    def __init__(self):
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self.analyzer = SentimentIntensityAnalyzer()

    def predict_index(self, X):
        score = self.analyzer.polarity_scores
        compound = np.array([score(x)["compound"] for x in X], dtype=float)
        return np.where(compound >= 0.05, 2, np.where(compound <= -0.05, 0, 1))

    def predict_proba(self, X):
        idx = self.predict_index(list(X))
        out = np.zeros((len(idx), 3))
        out[np.arange(len(idx)), idx] = 1.0
        return out

    def predict(self, X):
        return self.classes_[self.predict_index(list(X))]


def make_model(kind, X_train, y_train):
    if kind == "tfidf-lr":
        return make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000)).fit(
            X_train, y_train
        )
    if kind == "counts-nb":
        return make_pipeline(CountVectorizer(), MultinomialNB()).fit(X_train, y_train)
    if kind == "vader":
        return VaderClassifier()
    raise ValueError(kind)


def make_sampler(name):
    from skanchors.samplers import CorpusSampler, UnkSampler

    return {
        "unk": lambda: UnkSampler(),
        "delete": lambda: UnkSampler(token=None),
        "corpus": lambda: CorpusSampler(),
    }[name]()


def vader_lexicon():
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer().lexicon


# --------------------------------------------------------------------------------------------
# one cell


def run_cell(corpus, kind, args, lexicon):
    from skanchors import AnchorExplainer

    X, y = load_corpus(corpus, args)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=SEED)
    model = make_model(kind, X_train, y_train)
    test_pred = np.asarray(model.predict(X_test))
    rng = np.random.default_rng(SEED)
    doc_ids = np.sort(rng.choice(len(X_test), size=args.n_docs, replace=False))
    sentiment = corpus != "sms"
    info = {
        "corpus": corpus,
        "model": kind,
        "n_documents": len(X),
        "n_train": len(X_train),
        "n_test": len(X_test),
        "classes": {str(c): int((y == c).sum()) for c in np.unique(y)},
        "test_predictions": {str(c): int((test_pred == c).sum()) for c in np.unique(test_pred)},
        "accuracy": (
            float((test_pred == y_test).mean())
            if set(np.unique(test_pred)) <= set(np.unique(y))
            else float(np.mean(test_pred[test_pred != "neutral"] == y_test[test_pred != "neutral"]))
        ),
        "median_words": float(np.median([len(d.split()) for d in X_test])),
        "doc_ids": doc_ids.tolist(),
    }
    if kind != "vader":
        vocab = model[0].vocabulary_
        info["unk_in_model_vocabulary"] = "unk" in vocab
    explainers, fit_times = {}, {}
    for s in SAMPLERS:
        t0 = time.perf_counter()
        explainers[s] = AnchorExplainer(model, sampler=make_sampler(s), random_state=SEED).fit(
            X_train
        )
        fit_times[s] = time.perf_counter() - t0
    info["fit_seconds"] = fit_times
    records = {s: [] for s in SAMPLERS}
    started = time.perf_counter()
    for s in SAMPLERS:
        explainer = explainers[s]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            explainer.explain([X_train[0]])  # warm-up: first-call set-up not charged
        cell_start = time.perf_counter()
        for i in doc_ids:
            if time.perf_counter() - cell_start > args.budget:
                break
            doc = X_test[i]
            t0, c0 = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = explainer.explain([doc])[0]
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
            fresh = {
                t: explainers[t].perturbation_precision(a, N_FRESH, random_state=SEED + int(i))
                for t in SAMPLERS
            }
            chk = a.check(X_test, test_pred, exclude=int(i))
            others = np.delete(test_pred, int(i))
            base = float(np.mean(others == a.prediction))
            leverage = 0.0 if chk.n_covered == 0 else float(chk.coverage * (chk.precision - base))
            words = list(a.words)
            rec = {
                "doc": int(i),
                "words": words,
                "length": len(words),
                "n_words_document": len(explainer.sampler_.instance(doc).words),
                "prediction": str(a.prediction),
                "valid": bool(a.is_anchor),
                "own_precision": float(a.precision),
                "fresh": fresh,
                "heldout_precision": chk.precision,
                "heldout_coverage": chk.coverage,
                "heldout_covered": chk.n_covered,
                "base_rate": base,
                "leverage": leverage,
                "rows": int(a.n_rows_predicted),
                "calls": int(a.n_model_calls),
                "seconds": seconds,
                "cpu_seconds": cpu,
            }
            if sentiment:
                sign = SENTIMENT_SIGN.get(str(a.prediction), 0)
                rec["lexicon_words"] = sum(w.lower() in lexicon for w in words)
                if sign:
                    rec["class_words"] = sum(
                        np.sign(lexicon.get(w.lower(), 0.0)) == sign for w in words
                    )
            records[s].append(rec)
        print(
            f"  {corpus} / {kind} / {s}: {len(records[s])} docs in "
            f"{time.perf_counter() - cell_start:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    info["seconds"] = time.perf_counter() - started
    return info, records


# --------------------------------------------------------------------------------------------
# summaries and the decision


def _mean(values):
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return float(np.mean(values)) if values else math.nan


def summarize(records, own):
    n = len(records)
    valid = [r for r in records if r["valid"]]
    nonempty = [r for r in records if r["length"]]
    covering = [r for r in nonempty if r["heldout_covered"]]
    words = sum(r["length"] for r in records)
    signed = [r for r in records if "class_words" in r]
    fresh_ok = [r["fresh"][own] >= THRESHOLD - TOLERANCE for r in valid]
    out = {
        "n": n,
        "valid": len(valid) / n if n else math.nan,
        "empty": sum(not r["length"] for r in records),
        "length": _mean([r["length"] for r in records]),
        "length_median": float(np.median([r["length"] for r in records])) if n else math.nan,
        "length_share": _mean([r["length"] / r["n_words_document"] for r in records]),
        "whole_document": sum(r["length"] == r["n_words_document"] for r in records),
        "fresh_own": _mean([r["fresh"][own] for r in valid]),
        "fresh_ok_share": float(np.mean(fresh_ok)) if fresh_ok else math.nan,
        "fresh_below": int(len(fresh_ok) - sum(fresh_ok)),
        "fresh_cross": {t: _mean([r["fresh"][t] for r in records]) for t in SAMPLERS},
        "heldout_precision": _mean([r["heldout_precision"] for r in covering]),
        "heldout_coverage": _mean([r["heldout_coverage"] for r in nonempty]),
        "cover_none": sum(not r["heldout_covered"] for r in nonempty),
        "n_nonempty": len(nonempty),
        "prec_x_cov": _mean(
            [
                0.0 if not r["heldout_covered"] else r["heldout_precision"] * r["heldout_coverage"]
                for r in records
            ]
        ),
        "leverage": _mean([r["leverage"] for r in records]),
        "rows": _mean([r["rows"] for r in records]),
        "seconds": _mean([r["seconds"] for r in records]),
        "seconds_median": float(np.median([r["seconds"] for r in records])) if n else math.nan,
        "cpu_seconds": _mean([r["cpu_seconds"] for r in records]),
    }
    if any("lexicon_words" in r for r in records):
        out["lexicon_share"] = (
            sum(r["lexicon_words"] for r in records) / words if words else math.nan
        )
        sw = sum(r["length"] for r in signed)
        out["class_share"] = sum(r["class_words"] for r in signed) / sw if sw else math.nan
    return out


def common_docs(records):
    docs = None
    for s in SAMPLERS:
        d = {r["doc"] for r in records[s]}
        docs = d if docs is None else docs & d
    return docs


def bootstrap_diff(a, b, n_boot=10_000):
    """Paired bootstrap (over documents) of mean(a) - mean(b): estimate, 90% interval."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = a - b
    rng = np.random.default_rng(SEED)
    idx = rng.integers(0, len(d), size=(n_boot, len(d)))
    boots = d[idx].mean(axis=1)
    return float(d.mean()), float(np.quantile(boots, 0.05)), float(np.quantile(boots, 0.95))


def decide(cells):
    scores, lengths, eligible, failed = {}, {}, {}, {}
    for s in SAMPLERS:
        scores[s] = _mean([c["summary"][s]["leverage"] for c in cells])
        lengths[s] = _mean([c["summary"][s]["length"] for c in cells])
        bad = [
            f"{c['info']['corpus']} / {c['info']['model']}"
            for c in cells
            if not (c["summary"][s]["fresh_ok_share"] >= GATE_SHARE)
        ]
        failed[s] = bad
        eligible[s] = not bad
    pool = [s for s in SAMPLERS if eligible[s]]
    gate_dropped = not pool
    if gate_dropped:
        pool = list(SAMPLERS)
    ranked = sorted(pool, key=lambda s: -scores[s])
    best = ranked[0]
    tie_with = None
    if len(ranked) > 1:
        second = ranked[1]
        if scores[best] > 0 and scores[best] - scores[second] <= TIE * scores[best]:
            tie_with = second
            if lengths[second] < lengths[best]:
                best = second
    return {
        "scores": scores,
        "lengths": lengths,
        "eligible": eligible,
        "gate_failed_cells": failed,
        "gate_dropped": gate_dropped,
        "ranked": ranked,
        "tie_with": tie_with,
        "winner": best,
    }


# --------------------------------------------------------------------------------------------
# report


def cell_name(info):
    model = {
        "tfidf-lr": "TF-IDF + LR",
        "vader": "VADER",
        "counts-nb": "counts + NB",
    }[info["model"]]
    return f"{info['corpus']} / {model}"


def render(cells, decision, meta):
    lines = []
    add = lines.append
    add("# Text default: UNK, deletion or corpus words?")
    add("")
    add(
        "Written by `bench/text_default.py` (issue 44, item 3). Which perturbation should "
        "`AnchorExplainer` (and the global aggregators) use for documents when `sampler=None`?"
    )
    add("")
    add(f"Date: {meta['date']}; total run time {meta['minutes']:.1f} min. Command:")
    add("")
    add("```")
    add(meta["command"])
    add("```")
    add("")
    add(CRITERION)
    w = decision["winner"]
    add("## Decision")
    add("")
    score_txt = ", ".join(
        f"{SAMPLER_LABELS[s]} {decision['scores'][s]:.4f}"
        + ("" if decision["eligible"][s] else " (not eligible)")
        for s in decision["ranked"] + [s for s in SAMPLERS if s not in decision["ranked"]]
    )
    add(f"- Mean held-out leverage over the {len(cells)} cells: {score_txt}.")
    add(
        "- Mean anchor length (words, mean of the cells): "
        + ", ".join(f"{SAMPLER_LABELS[s]} {decision['lengths'][s]:.2f}" for s in SAMPLERS)
        + "."
    )
    for s in SAMPLERS:
        if decision["gate_failed_cells"][s]:
            add(
                f"- Gate: {SAMPLER_LABELS[s]} fails it in "
                + "; ".join(decision["gate_failed_cells"][s])
                + "."
            )
        else:
            add(f"- Gate: {SAMPLER_LABELS[s]} passes it in every cell.")
    if decision["gate_dropped"]:
        add("- No sampler passed the gate in every cell: it was dropped (see above).")
    if decision["tie_with"]:
        a, b = decision["ranked"][0], decision["tie_with"]
        la, lb = decision["lengths"][a], decision["lengths"][b]
        add(
            f"- {SAMPLER_LABELS[a]} and {SAMPLER_LABELS[b]} score within {TIE:.0%} of each "
            f"other: the shorter mean anchor decides ({la:.2f} vs {lb:.2f} words"
            + (", equal: the stated order decides)." if la == lb else ").")
        )
    wins = {s: 0 for s in SAMPLERS}
    for c in cells:
        best = max(SAMPLERS, key=lambda s: c["summary"][s]["leverage"])
        wins[best] += 1
    add(
        "- Cells in which each sampler has the highest leverage: "
        + ", ".join(f"{SAMPLER_LABELS[s]} {wins[s]}" for s in SAMPLERS)
        + "."
    )
    add(f"- **Default: `{SAMPLER_LABELS[w]}`.**")
    add("")
    add("## Summary over the cells")
    add("")
    render_overall(cells, add)
    add("## Per cell")
    add("")
    head = (
        "| cell | sampler | docs | valid | empty | length | length / doc | whole doc | "
        "fresh (own) | fresh >= 0.925 | fresh under UNK / delete / corpus | held-out prec | "
        "held-out cov | cover none | prec x cov | leverage | lexicon words | class words | "
        "rows/expl | mean s | median s |"
    )
    add(head)
    add("|" + "---|" * (head.count("|") - 1))
    for c in cells:
        for s in SAMPLERS:
            m = c["summary"][s]
            cross = " / ".join(fmt(m["fresh_cross"][t], ".3f") for t in SAMPLERS)
            add(
                f"| {cell_name(c['info'])} | {SAMPLER_LABELS[s]} | {m['n']} | "
                f"{fmt(m['valid'], '.2f')} | {m['empty']} | {fmt(m['length'], '.2f')} | "
                f"{fmt(m['length_share'], '.2f')} | {m['whole_document']} | "
                f"{fmt(m['fresh_own'], '.3f')} | {fmt(m['fresh_ok_share'], '.2f')} | {cross} | "
                f"{fmt(m['heldout_precision'], '.3f')} | {fmt(m['heldout_coverage'], '.4f')} | "
                f"{m['cover_none']}/{m['n_nonempty']} | {fmt(m['prec_x_cov'], '.4f')} | "
                f"{fmt(m['leverage'], '.4f')} | {fmt(m.get('lexicon_share'), '.2f')} | "
                f"{fmt(m.get('class_share'), '.2f')} | {fmt(m['rows'], '.0f')} | "
                f"{fmt(m['seconds'], '.3g')} | {fmt(m['seconds_median'], '.3g')} |"
            )
    add("")
    add(
        "Columns: *docs* = test documents explained (the same for every sampler, drawn with "
        f"`default_rng({SEED})`); *valid* = share with `is_anchor`; *empty* = anchors without any "
        "word; *length* = mean anchor words; *length / doc* = mean share of the document's words "
        "in the anchor; *whole doc* = anchors made of every word of their document; *fresh "
        f"(own)* = mean `perturbation_precision(anchor, {N_FRESH})` of the valid anchors under "
        "the sampler's own distribution; *fresh >= 0.925* = share of valid anchors at or above "
        "threshold - 0.025 (the gate); *fresh under UNK / delete / corpus* = mean fresh "
        "precision of all anchors under each sampler's distribution; *held-out prec* = mean "
        "precision on the held-out documents (test split without the explained one) containing "
        "every anchor word, over the non-empty anchors that cover at least one; *held-out cov* = "
        "mean coverage of the non-empty anchors; *cover none* = non-empty anchors that cover no "
        "held-out document; *prec x cov* = mean of precision x coverage over all anchors (0 when "
        "none covered; the empty anchor covers all at the base rate); *leverage* = mean of "
        "coverage x (precision - base rate) over all anchors (the criterion); "
        f"{WORD_SIGNAL_NOTE} *rows/expl* = rows the model predicted per explanation "
        "(`Anchor.n_rows_predicted`); *mean s / median s* = wall seconds per explanation (one "
        "document per call, after one warm-up call)."
    )
    add("")
    add("## Leverage differences, paired over the documents of each cell")
    add("")
    add("| cell | " + " | ".join(f"{a} - {b}" for a, b in _pairs()) + " |")
    add("|---|" + "---|" * len(_pairs()))
    for c in cells:
        parts = []
        for a, b in _pairs():
            est, lo, hi = c["diffs"][f"{a}-{b}"]
            parts.append(f"{est:+.4f} [{lo:+.4f}, {hi:+.4f}]")
        add(f"| {cell_name(c['info'])} | " + " | ".join(parts) + " |")
    add("")
    add(
        "Mean difference of the per-document leverage, with a 90% paired bootstrap interval "
        "(10,000 resamples of the documents)."
    )
    add("")
    add("## Corpora and models")
    add("")
    add(
        "| cell | documents | train / test | classes (all documents) | test predictions | "
        "accuracy | median words | fit s (UNK / delete / corpus) |"
    )
    add("|---|---|---|---|---|---|---|---|")
    for c in cells:
        i = c["info"]
        fits = " / ".join(f"{i['fit_seconds'][s]:.2f}" for s in SAMPLERS)
        cls = ", ".join(f"{k} {v}" for k, v in i["classes"].items())
        pred = ", ".join(f"{k} {v}" for k, v in i["test_predictions"].items())
        add(
            f"| {cell_name(i)} | {i['n_documents']} | {i['n_train']} / {i['n_test']} | {cls} | "
            f"{pred} | {i['accuracy']:.3f} | {i['median_words']:.0f} | {fits} |"
        )
    add("")
    for note in meta["notes"]:
        add(f"- {note}")
    add("")
    add(f"Machine: {', '.join(f'{k} {v}' for k, v in meta['machine'].items())}")
    add("")
    add(f"Versions: {', '.join(f'{k} {v}' for k, v in meta['versions'].items() if v)}")
    add("")
    return "\n".join(lines)


def render_overall(cells, add):
    """One line per sampler: the means over the cells of the per-cell figures."""
    sentiment = [c for c in cells if c["info"]["corpus"] != "sms"]
    vader = [c for c in cells if c["info"]["model"] == "vader"]
    add(
        "| sampler | length | empty | length, VADER | cover none | held-out prec | "
        "held-out cov | leverage | class words, VADER | class words, TF-IDF (sentiment) | "
        "fresh under UNK / delete / corpus | rows/expl | mean s |"
    )
    add("|---|" + "---|" * 12)

    def avg(group, key, s, sub=None):
        vals = [c["summary"][s][key] if sub is None else c["summary"][s][key][sub] for c in group]
        return _mean(vals)

    tfidf = [c for c in sentiment if c["info"]["model"] == "tfidf-lr"]
    for s in SAMPLERS:
        none = sum(c["summary"][s]["cover_none"] for c in cells)
        nonempty = sum(c["summary"][s]["n_nonempty"] for c in cells)
        empty = sum(c["summary"][s]["empty"] for c in cells)
        n = sum(c["summary"][s]["n"] for c in cells)
        cross = " / ".join(fmt(avg(cells, "fresh_cross", s, t), ".3f") for t in SAMPLERS)
        add(
            f"| {SAMPLER_LABELS[s]} | {avg(cells, 'length', s):.2f} | {empty}/{n} | "
            f"{avg(vader, 'length', s):.2f} | {none}/{nonempty} | "
            f"{avg(cells, 'heldout_precision', s):.3f} | {avg(cells, 'heldout_coverage', s):.4f} | "
            f"{avg(cells, 'leverage', s):.4f} | {fmt(avg(vader, 'class_share', s), '.2f')} | "
            f"{fmt(avg(tfidf, 'class_share', s), '.2f')} | {cross} | "
            f"{avg(cells, 'rows', s):.0f} | {avg(cells, 'seconds', s):.3f} |"
        )
    add("")
    add(
        "Means over the cells of the per-cell columns below (counts are summed): *length, "
        "VADER* = over the three VADER cells; *cover none* = non-empty anchors covering no "
        "held-out document, of all non-empty anchors; *class words* = share of anchor words "
        "with a VADER valence of the anchor's class's sign, over the VADER cells and over the "
        "sentiment corpora's TF-IDF cells."
    )
    add("")


def _pairs():
    return [("unk", "corpus"), ("delete", "corpus"), ("unk", "delete")]


def notes(args):
    sha = hashlib.sha256(sdist_path(args).read_bytes()).hexdigest()
    return [
        "Movie reviews: the 5331 + 5331 rt-polarity sentences (Pang and Lee 2005) shipped in "
        "`skanchors.datasets`. SMS: the 5574 messages of the SMS Spam Collection (Almeida et "
        "al. 2011), shipped too.",
        f"Tweets and Amazon: the ground-truth files `tweets_GroundTruth.txt` (4200 tweets) and "
        f"`amazonReviewSnippets_GroundTruth.txt` (3708 sentences of 309 customer reviews of 5 "
        f"products, Hu and Liu 2004) of the VADER paper (Hutto and Gilbert, ICWSM 2014), "
        f"each text with the mean of about 20 human ratings in [-4, 4]: label positive above 0, "
        f"negative below, the 4 and 98 texts rated exactly 0 dropped; HTML entities unescaped. "
        f"They are in `additional_resources/hutto_ICWSM_2014.tar.gz` of the source distribution "
        f"`{VADER_SDIST}` on PyPI (MIT licence, copyright C.J. Hutto; the data's README asks to "
        f"cite the paper), sha256 {sha}, fetched by `--setup` with `pip download --no-binary "
        f":all:` and read from the archive at run time (no network).",
        "Split: 70/30 with `train_test_split(random_state=0)`; the models are trained on the "
        "70 % and every explainer is fitted on it (the corpus sampler's words come from it); "
        "documents are explained from the 30 %, and the held-out checks use the rest of the "
        "30 %.",
        "Models: `make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000))` and "
        "`make_pipeline(CountVectorizer(), MultinomialNB())` trained on the corpus's labels; "
        "VADER = vaderSentiment's `SentimentIntensityAnalyzer().polarity_scores` (a lexicon of "
        "7,500 rated words and rules for negation, intensifiers, capitals, punctuation and "
        "'but'), positive at compound >= 0.05, negative at <= -0.05, neutral between (the "
        "README's thresholds), as a 3-class classifier with one-hot probabilities; its "
        "*accuracy* counts the non-neutral predictions only.",
        "Explainers: `AnchorExplainer(model, sampler=..., random_state=0).fit(train)`, every "
        "other parameter at its default (threshold 0.95, delta 0.1, beam 2, no "
        "`max_anchor_size`); fresh precision drawn with `random_state=document index`.",
        "MaskedLMSampler was left out: it needs torch and transformers (not dependencies of "
        "skanchors) and a masked language model's weights, which cannot be fetched here (no "
        "trained model is installed; a random-weight one, as in `bench/results_text.md`, "
        "measures cost, not anchors), so it cannot be the default whatever its anchors; its "
        "explanations cost about 100x UnkSampler's (`bench/results_text.md`).",
    ]


def versions():
    out = _tabular_versions()
    for dist in ("vaderSentiment",):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--setup", action="store_true", help="pip-install vaderSentiment, fetch data")
    p.add_argument("--quick", action="store_true", help="20 documents a cell, writes nothing")
    p.add_argument("--n-docs", type=int, default=None, help="documents a cell (default 100)")
    p.add_argument("--budget", type=float, default=900.0, help="seconds per cell and sampler")
    p.add_argument("--cells", default=None, help="comma-separated indices into CELLS")
    p.add_argument("--vader-sdist", default=None, help=f"path of {VADER_SDIST}")
    p.add_argument("--output", default=None, help="prefix (default bench/results_text_default)")
    p.add_argument("--render", default=None, help="rewrite the .md of this .json.gz, no run")
    args = p.parse_args(argv)
    if args.setup:
        setup(args)
        return
    if args.render:
        saved = read_json(args.render)
        report = render(saved["cells"], saved["decision"], saved["meta"])
        Path(prefix_of(args.render) + ".md").write_text(report)
        print(report)
        return
    if args.n_docs is None:
        args.n_docs = 20 if args.quick else 100
    output = args.output or (None if args.quick else str(HERE / "results_text_default"))
    chosen = CELLS if args.cells is None else [CELLS[int(k)] for k in args.cells.split(",")]
    lexicon = vader_lexicon()
    t_start = time.perf_counter()
    cells = []
    for corpus, kind in chosen:
        print(f"{corpus} / {kind}", file=sys.stderr, flush=True)
        info, records = run_cell(corpus, kind, args, lexicon)
        docs = common_docs(records)
        records = {s: [r for r in records[s] if r["doc"] in docs] for s in SAMPLERS}
        summary = {s: summarize(records[s], s) for s in SAMPLERS}
        lev = {s: [r["leverage"] for r in records[s]] for s in SAMPLERS}
        diffs = {f"{a}-{b}": bootstrap_diff(lev[a], lev[b]) for a, b in _pairs()}
        cells.append({"info": info, "summary": summary, "diffs": diffs, "records": records})
    decision = decide(cells)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "minutes": (time.perf_counter() - t_start) / 60,
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        "machine": machine(),
        "versions": versions(),
        "notes": notes(args),
        "criterion": CRITERION,
    }
    report = render(cells, decision, meta)
    print(report)
    if output:
        Path(output + ".md").write_text(report)
        write_json(
            output, {"meta": meta, "decision": decision, "cells": cells}, default=json_default
        )
        print(f"wrote {output}.md and .json.gz", file=sys.stderr)


if __name__ == "__main__":
    main()
