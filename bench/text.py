"""Text anchors: skanchors against alibi and anchor-exp on movie-review sentences, in one run.

Run the comparison in the benchmark's own virtualenv (``bash bench/setup_peers.sh``), and the
masked-language-model timing in a virtualenv with torch and transformers (``--mlm``)::

    bench/.venv/bin/python bench/text.py                  # full run, writes results_text.*
    bench/.venv/bin/python bench/text.py --quick          # smoke run, writes nothing
    bench/.venv/bin/python bench/text.py --only skanchors
    /work/venv/bin/python bench/text.py --mlm             # MaskedLMSampler vs UnkSampler

Every package explains the same test sentences with the same TF-IDF + logistic regression
pipeline, whose ``predict``/``predict_proba`` go through one counting wrapper. Each anchor is
then judged by two measures that do not depend on the package: its precision on fresh UNK
perturbations drawn by this script (the same draws for every package), and its precision and
coverage on real held-out sentences that contain all its words.
"""

from __future__ import annotations

import os

# One thread everywhere: the timings compare algorithms, not BLAS/OpenMP thread pools.
for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
):
    os.environ.setdefault(_var, "1")
# Never download anything (the masked LM is built here and loaded by path).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import datetime  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import fmt, json_default, machine, read_json, write_json  # noqa: E402
from _common import versions as _tabular_versions  # noqa: E402
from _peers import CountingModel, ExplainTimeout, _alarm, _FallbackDetector  # noqa: E402

THRESHOLD = 0.95
DELTA = 0.1
EPSILON = 0.15  # alibi and anchor-exp call it tau
BATCH_SIZE = 100
SEED = 0
KEEP_PROBA = 0.5  # every package's default; also the fresh-perturbation sampler's
N_FRESH = 1000  # fresh perturbations per anchor
UNK = "UNK"
CLASS_NAMES = ["negative", "positive"]
BUSY_PATTERN = "bench/(tabular|global).py"

PACKAGES = ("alibi", "anchor-exp", "skanchors")

# The benchmark's own word splitter (for the fresh perturbations and the held-out check): runs
# of word characters, with inner apostrophes ("don't" is one word). Punctuation between words
# is always kept, as the TF-IDF vectoriser ignores it anyway.
WORD_RE = re.compile(r"\w+(?:['\u2019]\w+)*")


# --------------------------------------------------------------------------------------------
# data and model


def load_data():
    from skanchors.datasets import load_movie_reviews

    X, y = load_movie_reviews(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        list(X), np.asarray(y), test_size=0.3, random_state=SEED
    )
    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000))
    pipe.fit(X_train, y_train)
    test_pred = pipe.predict(X_test)
    return {
        "X_train": X_train,
        "X_test": X_test,
        "y_test": y_test,
        "pipe": pipe,
        "test_pred": test_pred,
        "accuracy": float((test_pred == y_test).mean()),
        "n_pos": int((np.asarray(y) == 1).sum()),
        "n_neg": int((np.asarray(y) == 0).sum()),
    }


def choose_docs(data, n):
    rng = np.random.default_rng(SEED)
    return np.sort(rng.choice(len(data["X_test"]), size=n, replace=False))


class TextCountingModel(CountingModel):
    """The counting wrapper of ``tabular.py`` for a model that takes a list of str."""

    def _run(self, method, X):
        docs = X.tolist() if isinstance(X, np.ndarray) else list(X)
        self.calls += 1
        self.rows += len(docs)
        t0 = time.perf_counter()
        out = method(docs)
        self.seconds += time.perf_counter() - t0
        return out


# --------------------------------------------------------------------------------------------
# the benchmark's own measures


def words_of(text):
    return [(m.group(), m.start(), m.end()) for m in WORD_RE.finditer(text)]


def anchor_word_mask(text, spans):
    """Words of ``text`` (benchmark tokenisation) that overlap one of the anchor's spans."""
    toks = words_of(text)
    mask = np.zeros(len(toks), dtype=bool)
    for s, e in spans:
        for j, (_, ws, we) in enumerate(toks):
            if ws < e and s < we:
                mask[j] = True
    return mask


class FreshPrecision:
    """Precision on fresh UNK perturbations, the same draws for every package.

    For document ``i`` the keep/replace coin flips come from ``default_rng([SEED, i])``; the
    anchor's words are then forced to be kept, so two packages with the same anchor get the
    very same perturbed texts (and the result is cached).
    """

    def __init__(self, pipe, n=N_FRESH):
        self.pipe = pipe
        self.n = n
        self.cache = {}

    def __call__(self, doc_id, text, anchor_mask, label):
        key = (doc_id, tuple(anchor_mask.tolist()))
        if key in self.cache:
            return self.cache[key]
        toks = words_of(text)
        rng = np.random.default_rng([SEED, int(doc_id)])
        kept = rng.random((self.n, len(toks))) < KEEP_PROBA
        kept |= anchor_mask[None, :]
        gaps, prev = [], 0
        for _, s, e in toks:
            gaps.append(text[prev:s])
            prev = e
        tail = text[prev:]
        texts = []
        for row in kept:
            parts = []
            for (w, _, _), g, k in zip(toks, gaps, row):
                parts.append(g)
                parts.append(w if k else UNK)
            parts.append(tail)
            texts.append("".join(parts))
        pred = self.pipe.predict(texts)
        value = float((pred == label).mean())
        self.cache[key] = value
        return value


class HeldOut:
    """Anchor words on real held-out sentences: coverage and precision against the model."""

    def __init__(self, X_test, test_pred):
        self.word_sets = [frozenset(w for w, _, _ in words_of(t)) for t in X_test]
        self.test_pred = np.asarray(test_pred)

    def mask(self, words):
        words = frozenset(words)
        return np.array([words <= s for s in self.word_sets], dtype=bool)

    def __call__(self, words, doc_id, label):
        mask = self.mask(words)
        mask[doc_id] = False  # held out: not the explained sentence itself
        others = len(mask) - 1
        coverage = float(mask.sum() / others)
        precision = float((self.test_pred[mask] == label).mean()) if mask.any() else math.nan
        return precision, coverage, mask


# --------------------------------------------------------------------------------------------
# one explanation per package: each returns a dict with the anchor as character spans


def make_alibi(data, model, beam_size, variant):
    import spacy
    from alibi.explainers import AnchorText

    logging.getLogger("alibi").setLevel(logging.ERROR)
    t0 = time.perf_counter()
    explainer = AnchorText(
        model.predict, sampling_strategy="unknown", nlp=spacy.blank("en"), seed=SEED
    )
    fit_time = time.perf_counter() - t0
    kwargs = {"beam_size": beam_size} if beam_size is not None else {}
    if variant == "unk-cov1":
        # Not a default: alibi draws coverage_samples=10000 perturbations (text only, no model
        # call) per explanation to estimate coverage; anchor-exp's text explainer uses 1.
        kwargs["coverage_samples"] = 1

    def explain(text):
        exp = explainer.explain(
            text,
            threshold=THRESHOLD,
            delta=DELTA,
            tau=EPSILON,
            batch_size=BATCH_SIZE,
            **kwargs,
        )
        names = [str(w) for w in exp.anchor]
        positions = [int(p) for p in exp.raw["positions"]]
        return {
            "anchor": names,
            "spans": [(p, p + len(w)) for w, p in zip(names, positions)],
            "valid": bool(exp.raw["success"]),
            "own_precision": float(np.asarray(exp.precision).ravel()[0]),
            "own_coverage": float(exp.coverage),
        }

    return explain, fit_time


def make_anchor_exp(data, model, beam_size, variant):
    import spacy
    from anchor import anchor_base, anchor_text

    _FallbackDetector.install()
    t0 = time.perf_counter()
    explainer = anchor_text.AnchorText(spacy.blank("en"), CLASS_NAMES, use_unk_distribution=True)
    fit_time = time.perf_counter() - t0

    def run(text):
        if beam_size is None:
            # The documented call. Its beam_size=4 parameter is never passed on to the search
            # (anchor_base's default beam_size=1 is used), so it is not set here.
            exp = explainer.explain_instance(
                text,
                model.predict,
                threshold=THRESHOLD,
                delta=DELTA,
                tau=EPSILON,
                batch_size=BATCH_SIZE,
            )
            return exp.exp_map
        # A wider beam needs the search called directly, exactly as explain_instance does.
        words, positions, true_label, sample_fn = explainer.get_sample_fn(text, model.predict)
        exp = anchor_base.AnchorBaseBeam.anchor_beam(
            sample_fn,
            delta=DELTA,
            epsilon=EPSILON,
            batch_size=BATCH_SIZE,
            desired_confidence=THRESHOLD,
            stop_on_first=True,
            coverage_samples=1,
            beam_size=beam_size,
        )
        exp["names"] = [words[x] for x in exp["feature"]]
        exp["positions"] = [positions[x] for x in exp["feature"]]
        return exp

    def explain(text):
        _FallbackDetector.fallback = False
        exp = run(text)
        names = [str(w) for w in exp["names"]]
        positions = [int(p) for p in exp["positions"]]
        prec = exp["precision"][-1] if exp["precision"] else exp.get("all_precision", math.nan)
        cov = exp["coverage"][-1] if exp["coverage"] else 1.0
        return {
            "anchor": names,
            "spans": [(p, p + len(w)) for w, p in zip(names, positions)],
            "valid": not _FallbackDetector.fallback,
            "own_precision": float(prec),
            "own_coverage": float(cov),
        }

    return explain, fit_time


def make_skanchors(data, model, beam_size, variant):
    from skanchors import AnchorExplainer
    from skanchors.samplers import tokenize

    if variant == "unk":
        from skanchors.samplers import UnkSampler

        sampler = UnkSampler()
    elif variant == "corpus":
        from skanchors.samplers import CorpusSampler

        sampler = CorpusSampler()
    else:  # "mlm:<path>"
        from skanchors.samplers import MaskedLMSampler

        sampler = MaskedLMSampler(variant.split(":", 1)[1], top_k=50)
    kwargs = {"beam_size": beam_size} if beam_size is not None else {}
    t0 = time.perf_counter()
    explainer = AnchorExplainer(
        model.predict_proba,
        sampler=sampler,
        threshold=THRESHOLD,
        delta=DELTA,
        epsilon=EPSILON,
        batch_size=BATCH_SIZE,
        random_state=SEED,
        **kwargs,
    ).fit(data["X_train"])
    fit_time = time.perf_counter() - t0

    def convert(anchor, text):
        toks = tokenize(text)
        preds = sorted(anchor.predicates, key=lambda p: p.position)
        return {
            "anchor": list(anchor.words),
            "spans": [(toks[p.position][1], toks[p.position][2]) for p in preds],
            "valid": bool(anchor.is_anchor),
            "own_precision": float(anchor.precision),
            "own_coverage": float(anchor.coverage),
            "self_reported_calls": int(anchor.n_model_calls),
            "self_reported_rows": int(anchor.n_rows_predicted),
            "self_reported_seconds": float(anchor.wall_time),
            "prediction": np.asarray(anchor.prediction).item(),
            "_anchor": anchor,
        }

    def explain(text):
        return convert(explainer.explain([text])[0], text)

    explain.explainer = explainer
    explain.convert = convert
    return explain, fit_time


MAKERS = {"alibi": make_alibi, "anchor-exp": make_anchor_exp, "skanchors": make_skanchors}


# --------------------------------------------------------------------------------------------
# running one configuration


def run_config(config, data, model, doc_ids, budget, fresh, heldout, lm_counter=None):
    """Explain the sentences one at a time until done or over budget; returns a result dict."""
    package, beam, variant = config["package"], config["beam_size"], config["variant"]
    X_test, test_pred = data["X_test"], data["test_pred"]
    model.reset()
    explain, fit_time = MAKERS[package](data, model, beam, variant)
    fit_calls, fit_rows = model.calls, model.rows
    # Warm-up: one untimed explanation of a training sentence, so lazy imports and first-call
    # set-up (spaCy pipelines, caches) are not charged to the first timed sentence.
    np.random.seed(SEED)  # noqa: NPY002 -- the peers draw from numpy's global RNG
    t0 = time.perf_counter()
    explain(data["X_train"][0])
    warmup = time.perf_counter() - t0
    per_doc = []
    started = time.perf_counter()
    stopped = None
    for k, i in enumerate(doc_ids):
        elapsed = time.perf_counter() - started
        if elapsed > budget:
            stopped = f"budget {budget:g} s spent after {k} sentences"
            break
        text = X_test[i]
        label = test_pred[i]
        np.random.seed(SEED)  # noqa: NPY002
        model.reset()
        if lm_counter is not None:
            lm_counter.reset()
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, max(budget - elapsed, 1.0))
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            res = explain(text)
        except ExplainTimeout:
            stopped = f"budget {budget:g} s ran out inside sentence {k}"
            break
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        seconds = time.perf_counter() - t0
        cpu_seconds = time.process_time() - c0
        rec = {
            "test_index": int(i),
            "n_words": len(words_of(text)),
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "model_seconds": model.seconds,
            "calls": model.calls,
            "rows": model.rows,
        }
        if lm_counter is not None:
            rec.update(lm_counter.snapshot())
        sk_anchor = res.pop("_anchor", None)
        rec.update(res)
        mask = anchor_word_mask(text, res["spans"])
        toks = words_of(text)
        anchor_words = [toks[j][0] for j in np.flatnonzero(mask)]
        rec["mapped_words"] = anchor_words
        # Peer tokens that are not whole words of the benchmark's split (punctuation, "n't").
        rec["unaligned_tokens"] = [
            w for w, (s, e) in zip(res["anchor"], res["spans"]) if (w, s, e) not in set(toks)
        ]
        rec["fresh_precision"] = fresh(i, text, mask, label)
        precision, coverage, hmask = heldout(anchor_words, i, label)
        rec["heldout_precision"] = precision
        rec["heldout_coverage"] = coverage
        if sk_anchor is not None:
            own = np.asarray(sk_anchor.covers(X_test), dtype=bool)
            own[i] = False
            rec["covers_disagree"] = int((own != hmask).sum())
            if rec["prediction"] != label:
                rec["prediction_mismatch"] = True
        per_doc.append(rec)
    result = {
        **config,
        "fit_seconds": fit_time,
        "fit_model_calls": fit_calls,
        "fit_model_rows": fit_rows,
        "warmup_seconds": warmup,
        "docs_requested": len(doc_ids),
        "docs_done": len(per_doc),
        "stopped": stopped,
        "per_doc": per_doc,
    }
    if package == "skanchors" and len(per_doc) == len(doc_ids) and config.get("batch", True):
        # The same sentences in one call: what a user explaining many documents gets.
        model.reset()
        t0 = time.perf_counter()
        anchors = explain.explainer.explain([X_test[i] for i in doc_ids])
        result["batch_seconds"] = time.perf_counter() - t0
        result["batch_calls"] = model.calls
        result["batch_rows"] = model.rows
        same = sum(list(a.words) == r["anchor"] for a, r in zip(anchors, per_doc, strict=True))
        result["batch_same_anchors"] = int(same)
    result.update(summarise(per_doc))
    return result


def _nanmean(values):
    v = np.asarray(values, dtype=float)
    return float(np.nanmean(v)) if np.isfinite(v).any() else math.nan


def summarise(per_doc):
    if not per_doc:
        return {}
    sec = np.array([r["seconds"] for r in per_doc])
    hprec = np.array([r["heldout_precision"] for r in per_doc], dtype=float)
    out = {
        "median_seconds": float(np.median(sec)),
        "mean_seconds": float(np.mean(sec)),
        "median_cpu_seconds": float(np.median([r.get("cpu_seconds", np.nan) for r in per_doc])),
        "mean_cpu_seconds": float(np.mean([r.get("cpu_seconds", np.nan) for r in per_doc])),
        "model_seconds": float(np.mean([r["model_seconds"] for r in per_doc])),
        "calls_per_expl": float(np.mean([r["calls"] for r in per_doc])),
        "rows_per_expl": float(np.mean([r["rows"] for r in per_doc])),
        "mean_length": float(np.mean([len(r["anchor"]) for r in per_doc])),
        "empty_anchors": int(sum(not r["anchor"] for r in per_doc)),
        "valid_fraction": float(np.mean([r["valid"] for r in per_doc])),
        "own_precision": float(np.mean([r["own_precision"] for r in per_doc])),
        "fresh_precision": float(np.mean([r["fresh_precision"] for r in per_doc])),
        "fresh_precision_min": float(np.min([r["fresh_precision"] for r in per_doc])),
        "fresh_below_threshold": int(sum(r["fresh_precision"] < THRESHOLD for r in per_doc)),
        "fresh_below_090": int(sum(r["fresh_precision"] < 0.90 for r in per_doc)),
        "heldout_precision": float(np.nanmean(hprec)) if np.isfinite(hprec).any() else math.nan,
        "heldout_precision_nonempty": _nanmean(
            [r["heldout_precision"] for r in per_doc if r["anchor"]]
        ),
        "heldout_coverage": float(np.mean([r["heldout_coverage"] for r in per_doc])),
        "heldout_empty": int(np.isnan(hprec).sum()),
        "unaligned_tokens": int(sum(len(r["unaligned_tokens"]) for r in per_doc)),
    }
    if "lm_forward_passes" in per_doc[0]:
        out["lm_forward_passes"] = float(np.mean([r["lm_forward_passes"] for r in per_doc]))
        out["lm_sequences"] = float(np.mean([r["lm_sequences"] for r in per_doc]))
        out["lm_seconds"] = float(np.mean([r["lm_seconds"] for r in per_doc]))
    return out


# --------------------------------------------------------------------------------------------
# peer artefacts worth knowing


def peer_rejoin_check(data, doc_ids):
    """Both peers split with spaCy and join the (perturbed) tokens with single spaces, so even
    their unperturbed sample is not the original text. How often, and does the model care?"""
    try:
        import spacy
    except ImportError:
        return None
    nlp = spacy.blank("en")
    X_test, pipe = data["X_test"], data["pipe"]
    rejoined = [" ".join(t.text for t in nlp(s)) for s in X_test]
    differs = np.array([a != b for a, b in zip(rejoined, X_test)])
    changed = pipe.predict(rejoined) != data["test_pred"]
    return {
        "test_sentences": len(X_test),
        "rejoined_differs": int(differs.sum()),
        "prediction_changes": int(changed.sum()),
        "explained_differs": int(differs[doc_ids].sum()),
        "explained_prediction_changes": int(changed[doc_ids].sum()),
        "example": next(
            ([X_test[i], rejoined[i]] for i in np.flatnonzero(differs & changed)), None
        ),
    }


# --------------------------------------------------------------------------------------------
# report


def versions():
    out = _tabular_versions()
    for dist in ("spacy", "torch", "transformers", "tokenizers"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def label(res):
    p, b, v = res["package"], res["beam_size"], res["variant"]
    beam = "default" if b is None else b
    if p == "skanchors":
        name = {"unk": "UnkSampler", "corpus": "CorpusSampler"}.get(v, "MaskedLMSampler")
        return f"skanchors {name} (beam {beam})"
    if p == "anchor-exp" and b is not None:
        return f"anchor-exp UNK (beam {b}, search called directly)"
    if v == "unk-cov1":
        return f"{p} UNK (beam {beam}, coverage_samples=1: not a default)"
    return f"{p} UNK (beam {beam})"


def reference(results):
    return next(
        (
            r
            for r in results
            if r["package"] == "skanchors" and r["variant"] == "unk" and r.get("docs_done")
        ),
        None,
    )


def table(results):
    head = (
        "| package | sentences | median s | mean s | median CPU s | mean CPU s | model s "
        "| time ratio | calls/expl "
        "| rows/expl | rows ratio | length | empty | valid | own prec | fresh prec "
        "| fresh < 0.95 / 0.90 | held-out prec | held-out prec, non-empty | held-out cov |"
    )
    ncol = 20
    lines = [head, "|" + "---|" * ncol]
    sk = reference(results)
    for r in results:
        if "error" in r:
            lines.append(
                f"| {label(r)} | error: {r['error'].strip().splitlines()[-1][:70]} |"
                + " |" * (ncol - 2)
            )
            continue
        if not r.get("docs_done"):
            lines.append(f"| {label(r)} | 0/{r['docs_requested']} |" + " |" * (ncol - 2))
            continue
        t_ratio = r_ratio = None
        if sk is not None and r is not sk:
            t_ratio = r["median_seconds"] / sk["median_seconds"]
            r_ratio = r["rows_per_expl"] / sk["rows_per_expl"]
        lines.append(
            f"| {label(r)} | {r['docs_done']}/{r['docs_requested']} "
            f"| {fmt(r['median_seconds'])} | {fmt(r['mean_seconds'])} "
            f"| {fmt(r['median_cpu_seconds'])} | {fmt(r['mean_cpu_seconds'])} "
            f"| {fmt(r['model_seconds'])} | {fmt(t_ratio, '.1f')} "
            f"| {fmt(r['calls_per_expl'], '.1f')} | {fmt(r['rows_per_expl'], '.0f')} "
            f"| {fmt(r_ratio, '.2f')} | {fmt(r['mean_length'], '.2f')} "
            f"| {r['empty_anchors']} | {fmt(r['valid_fraction'], '.2f')} "
            f"| {fmt(r['own_precision'], '.3f')} | {fmt(r['fresh_precision'], '.3f')} "
            f"| {r['fresh_below_threshold']} / {r['fresh_below_090']} "
            f"| {fmt(r['heldout_precision'], '.3f')} "
            f"| {fmt(r['heldout_precision_nonempty'], '.3f')} "
            f"| {fmt(r['heldout_coverage'], '.4f')} |"
        )
    return "\n".join(lines)


def target_lines(results):
    """The issue's target: >= 10x faster than the fastest peer at equal or better precision.

    Judged three ways: on the median time per explanation (the issue's measure), on the mean,
    and on the median over the sentences that need anchor words (see ``split_lines``). The
    fastest peer is chosen separately for each. "Equal" precision allows 0.01 of sampling noise,
    on the mean fresh precision and on the mean held-out precision.
    """
    sk = reference(results)
    peers = [
        r
        for r in results
        if r["package"] != "skanchors" and r.get("docs_done") and r["variant"] == "unk"
    ]
    tuned = [
        r
        for r in results
        if r["package"] != "skanchors" and r.get("docs_done") and r["variant"] != "unk"
    ]
    if sk is None or not peers:
        return []
    split = split_lines(results)
    stats = split[1] if split else {}
    measures = [
        ("median time", lambda r: r["median_seconds"]),
        ("mean time", lambda r: r["mean_seconds"]),
    ]
    if all(np.isfinite(r.get("median_cpu_seconds", np.nan)) for r in [sk, *peers]):
        measures += [
            ("median CPU time", lambda r: r["median_cpu_seconds"]),
            ("mean CPU time", lambda r: r["mean_cpu_seconds"]),
        ]
    if stats.get(label(sk)) and stats[label(sk)][0]:
        measures.append(("median time on sentences that need words", lambda r: stats[label(r)][0]))
    out = []
    get_median = measures[0][1]
    for name, get in measures:
        fastest = min(peers, key=get)
        speed = get(fastest) / get(sk)
        d_fresh = sk["fresh_precision"] - fastest["fresh_precision"]
        d_held = sk["heldout_precision"] - fastest["heldout_precision"]
        fresh_ok = d_fresh >= -0.01
        held_ok = not d_held < -0.01
        ok = [f"speed-up {speed:.1f}x >= 10x"] if speed >= 10 else []
        ok += ["equal fresh precision" if abs(d_fresh) <= 0.01 else "better fresh precision"]
        ok = ok if fresh_ok else ok[:-1]
        ok += ["held-out precision not lower"] if held_ok else []
        why = [f"speed-up {speed:.1f}x < 10x"] if speed < 10 else []
        why += ["lower fresh precision"] if not fresh_ok else []
        why += [f"held-out precision lower by {-d_held:.3f}"] if not held_ok else []
        verdict = "**met**" if not why else "**NOT met**"
        out.append(
            f"- By {name}: fastest peer {label(fastest)} {get(fastest):.3g} s, skanchors "
            f"UnkSampler {get(sk):.3g} s: **{speed:.1f}x**; fresh precision "
            f"{sk['fresh_precision']:.3f} vs {fastest['fresh_precision']:.3f} ({d_fresh:+.3f}), "
            f"held-out precision {fmt(sk['heldout_precision'], '.3f')} vs "
            f"{fmt(fastest['heldout_precision'], '.3f')} ({d_held:+.3f}). Target {verdict}"
            + (f": {'; '.join(why)}" if why else "")
            + (f" ({'; '.join(ok)})" if ok and why else "")
            + "."
        )
    for r in tuned:
        # (tabular.py picks its fastest peer among every configuration it runs; here a setting
        # that is not the peer's default and changes what it computes is left out, and said so)
        out.append(
            f"- Left out of the choice of the fastest peer: {label(r)}, not the peer's "
            f"default (its coverage estimated from one perturbation instead of 10,000): "
            f"{get_median(r):.3g} s by median, skanchors UnkSampler "
            f"**{get_median(r) / get_median(sk):.1f}x** faster than it; fresh precision "
            f"{sk['fresh_precision'] - r['fresh_precision']:+.3f}, held-out precision "
            f"{sk['heldout_precision'] - r['heldout_precision']:+.3f}. Against it the speed "
            f"target of 10x is {'met' if get_median(r) / get_median(sk) >= 10 else 'NOT met'}."
        )
    out += _disagreement_lines(sk, peers)
    for r in peers + tuned:
        parts = [f"{r['median_seconds'] / sk['median_seconds']:.1f}x median"]
        parts.append(f"{r['mean_seconds'] / sk['mean_seconds']:.1f}x mean")
        st, ref = stats.get(label(r)), stats.get(label(sk))
        if st and ref and st[0] and ref[0]:
            parts.append(f"{st[0] / ref[0]:.1f}x median on sentences that need words")
        out.append(
            f"- skanchors UnkSampler vs {label(r)}: " + ", ".join(parts) + "; fresh precision "
            f"{sk['fresh_precision'] - r['fresh_precision']:+.3f}, held-out precision "
            f"{sk['heldout_precision'] - r['heldout_precision']:+.3f}."
        )
    return out


def _disagreement_lines(sk, peers):
    """Where skanchors and a peer pick different anchors: whose words are more common?"""
    out = []
    mine = {d["test_index"]: d for d in sk["per_doc"]}
    for r in peers:
        pairs = [
            (mine[d["test_index"]], d)
            for d in r["per_doc"]
            if d["test_index"] in mine
            and sorted(mine[d["test_index"]]["mapped_words"]) != sorted(d["mapped_words"])
        ]
        if not pairs:
            continue
        empty_sk = sum(not a["anchor"] for a, _ in pairs)
        empty_peer = sum(not b["anchor"] for _, b in pairs)
        both = [(a, b) for a, b in pairs if a["anchor"] and b["anchor"]]
        text = (
            f"- skanchors UnkSampler and {label(r)} return different anchors on {len(pairs)} of "
            f"{len(r['per_doc'])} sentences (skanchors empty on {empty_sk}, the peer on "
            f"{empty_peer})"
        )
        if both:
            cov = [np.mean([x[k]["heldout_coverage"] for x in both]) for k in (0, 1)]
            prec = [_nanmean([x[k]["heldout_precision"] for x in both]) for k in (0, 1)]
            fr = [np.mean([x[k]["fresh_precision"] for x in both]) for k in (0, 1)]
            text += (
                f"; where both are non-empty ({len(both)}), skanchors' words cover "
                f"{cov[0]:.4f} of the held-out sentences vs {cov[1]:.4f}, with held-out "
                f"precision {fmt(prec[0], '.3f')} vs {fmt(prec[1], '.3f')} and fresh "
                f"precision {fr[0]:.3f} vs {fr[1]:.3f}"
            )
        out.append(text + ".")
    return out


def split_lines(results):
    """Times on the sentences that need an anchor word vs those whose prediction already holds
    with no word kept (an empty anchor): the second kind is a quick check for every package."""
    unk = [r for r in results if r.get("docs_done") and r["variant"] == "unk"]
    if not unk:
        return []
    done = set.intersection(*({d["test_index"] for d in r["per_doc"]} for r in unk))
    hard = {
        i
        for i in done
        if all(next(d for d in r["per_doc"] if d["test_index"] == i)["anchor"] for r in unk)
    }
    easy = {
        i
        for i in done
        if not any(next(d for d in r["per_doc"] if d["test_index"] == i)["anchor"] for r in unk)
    }
    head = (
        f"| package | median s, needs words ({len(hard)}) | mean s, needs words "
        f"| median s, empty anchor ({len(easy)}) | mean s, empty anchor |"
    )
    lines = [head, "|---|---|---|---|---|"]
    stats = {}
    for r in results:
        if not r.get("docs_done"):
            continue
        row = []
        for subset in (hard, easy):
            sec = [d["seconds"] for d in r["per_doc"] if d["test_index"] in subset]
            row += [float(np.median(sec)), float(np.mean(sec))] if sec else [None, None]
        stats[label(r)] = row
        lines.append(f"| {label(r)} | " + " | ".join(fmt(v) for v in row) + " |")
    return lines, stats


def checks(results):
    out = []
    for r in results:
        where = label(r)
        if r.get("stopped"):
            out.append(f"- {where}: stopped early, {r['stopped']}")
        if not r.get("docs_done"):
            continue
        if r["unaligned_tokens"]:
            seen = sorted({w for x in r["per_doc"] for w in x["unaligned_tokens"]})
            out.append(
                f"- {where}: {r['unaligned_tokens']} anchor tokens are not whole words of the "
                "benchmark's split (spaCy splits `it's`, `wouldn't`, `fun-for-fun's-sake`; "
                "punctuation); they were mapped to the words they overlap: "
                + ", ".join(f"`{w}`" for w in seen[:8])
            )
        if r["package"] == "skanchors":
            bad = [
                x
                for x in r["per_doc"]
                if x["self_reported_calls"] != x["calls"] or x["self_reported_rows"] != x["rows"]
            ]
            if bad:
                diff_c = {x["calls"] - x["self_reported_calls"] for x in bad}
                diff_r = {x["rows"] - x["self_reported_rows"] for x in bad}
                out.append(
                    f"- {where}: `n_model_calls`/`n_rows_predicted` differ from the counting "
                    f"wrapper on {len(bad)} sentences (counted minus reported: calls "
                    f"{sorted(diff_c)}, rows {sorted(diff_r)}; the wrapper also sees the one "
                    "call that predicts the sentence's own class)"
                )
            dis = sum(x.get("covers_disagree", 0) > 0 for x in r["per_doc"])
            if dis:
                out.append(
                    f"- {where}: `Anchor.covers` disagrees with the benchmark's word-containment "
                    f"check on {dis} sentences"
                )
            mism = sum(bool(x.get("prediction_mismatch")) for x in r["per_doc"])
            if mism:
                out.append(f"- {where}: `prediction` differs from the model on {mism} sentences")
            if "batch_seconds" in r:
                n = r["docs_requested"]
                out.append(
                    f"- {where}: one `explain` call over all {n} sentences took "
                    f"{r['batch_seconds']:.3g} s ({r['batch_seconds'] / n:.3g} s per sentence), "
                    f"{r['batch_calls']} model calls, {r['batch_rows']} rows; same anchors as "
                    f"one at a time for {r['batch_same_anchors']}/{n} sentences."
                )
    return out


def _md_main(main):
    s = main["settings"]
    results = main["results"]
    lines = [
        "## UNK perturbations: skanchors vs alibi vs anchor-exp",
        "",
        f"Date: {s['date'][:16].replace('T', ' ')} UTC; total run time "
        f"{s['elapsed_seconds'] / 60:.1f} min. Command (peer virtualenv, `bench/.venv`):",
        "",
        "```",
        s["command"],
        "```",
        "",
        table(results),
        "",
        "Columns: seconds per explanation (one sentence per call, fit and one warm-up "
        "explanation excluded), wall clock and CPU time of the process (everything runs in "
        "one thread, so on a quiet machine the two agree; CPU time is much less disturbed by "
        "other processes); *model s* = mean seconds of it spent inside the model; *time "
        "ratio* = median time / median time of skanchors UnkSampler; model calls and rows "
        "predicted per explanation, counted by one wrapper around the model; *rows ratio* = "
        "rows / skanchors UnkSampler rows; *length* = anchor words (tokens for the peers); "
        "*empty* = anchors without any word; *valid* = fraction for which the package says it "
        "found an anchor (alibi `raw['success']`, anchor-exp: its search did not fall back to "
        "'best of each size', skanchors `is_anchor`); *own prec* = the package's own precision "
        f"estimate; *fresh prec* = the model's agreement with its prediction on {N_FRESH} fresh "
        "perturbations drawn by the benchmark (anchor words kept, every other word kept with "
        f"probability {KEEP_PROBA}, else replaced by `{UNK}`; the same coin flips for every "
        "package), mean over sentences; *fresh < 0.95 / 0.90* = anchors whose fresh precision is "
        "below the threshold / below 0.90 (the packages accept an anchor whose lower "
        "confidence bound clears the threshold minus a tolerance: 0.05 for the peers, 0.025 for "
        "skanchors); "
        "*held-out prec/cov* = the anchor words on the other "
        f"{s['heldout_sentences']} test sentences: coverage = fraction containing every anchor "
        "word, precision = fraction of those where the model predicts the explained sentence's "
        "class (mean over anchors that cover at least one sentence; an empty anchor covers "
        "all, so its precision is just the share of that class); *non-empty* = the same mean "
        "over non-empty anchors only.",
        "",
        f"Settings: threshold {THRESHOLD}, delta {DELTA}, epsilon/tau {EPSILON}, batch size "
        f"{BATCH_SIZE}, every other option at each package's default; "
        f"{s['n_docs']} sentences drawn from the test split with `default_rng(0)`, the same "
        f"for every package; budget {s['budget']:.0f} s per configuration. Model: "
        "`make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000))` trained on a "
        f"70/30 split (random_state=0) of the {s['n_pos']} + {s['n_neg']} movie-review "
        f"sentences (`skanchors.datasets.load_movie_reviews`), test accuracy "
        f"{s['test_accuracy']:.3f}. alibi `AnchorText(predict, sampling_strategy='unknown', "
        "nlp=spacy.blank('en'), seed=0)`; anchor-exp `AnchorText(spacy.blank('en'), "
        "class_names, use_unk_distribution=True)`; skanchors `AnchorExplainer(predict_proba, "
        "sampler=UnkSampler(), beam_size=2, random_state=0).fit(train sentences)` and the "
        "same with `sampler=CorpusSampler()` (replaced words drawn from the training "
        "sentences' word counts). The peers get the wrapper's `predict` (labels from a list "
        "of str), skanchors its `predict_proba`. `np.random.seed(0)` before each peer "
        "explanation.",
        "",
        "Target of issue 3: at least 10x faster than the fastest peer at equal or better "
        "precision.",
        "",
        *target_lines(results),
        "",
    ]
    split = split_lines(results)
    if split:
        lines += [
            "The same times split by sentence: *needs words* = every UNK configuration "
            "returned a non-empty anchor; *empty anchor* = every UNK configuration returned the "
            "empty anchor (the prediction already holds with 95% precision when each word is "
            "kept with probability 1/2; each package then only checks the empty rule).",
            "",
            *split[0],
            "",
        ]
    lines += _busy_note(s)
    load = float(s["machine"]["load average at start"].split()[0])
    if load > 0.5 * (s["machine"].get("cores") or 1):
        lines += [
            f"Note: the 1-minute load average was {load:.2f} on {s['machine']['cores']} cores "
            "when the run started: other processes shared the CPU, so the seconds are noisy.",
            "",
        ]
    chk = checks(results)
    lines += ["Checks and notes:", "", *(chk or ["- nothing to flag"])]
    rj = s.get("peer_rejoin")
    if rj:
        lines += [
            f"- Both peers split a sentence with spaCy and join the tokens back with single "
            f"spaces, so their perturbations are built from a text that differs from the "
            f"original in {rj['rejoined_differs']} of {rj['test_sentences']} test sentences "
            f"(`it's` -> `it 's`, `cliche-ridden` -> `cliche - ridden`); the TF-IDF model "
            f"predicts another class for {rj['prediction_changes']} of them even with nothing "
            f"replaced. Among the explained sentences: {rj['explained_differs']} differ, "
            f"{rj['explained_prediction_changes']} change class. skanchors rebuilds the "
            "original text exactly.",
        ]
    lines += [
        "- Where the peers' time goes (profiled on single sentences): alibi's `explain` first "
        "draws `coverage_samples=10000` UNK perturbations (strings, joined one by one with "
        "`np.apply_along_axis`) to estimate coverage, with no model call; that is most of its "
        "time per sentence, whatever the anchor (see the `coverage_samples=1` row). "
        "anchor-exp's text explainer passes `coverage_samples=1`, but its `anchor_beam` "
        "preallocates a sample cache of `batch_size * 10000` rows (a million rows at batch "
        "size 100: a float matrix with a column per token and an array of unicode strings of "
        "at least 80 characters); allocating it is most of its time on every sentence that "
        "needs a search (a sentence whose empty anchor is accepted returns before it; it "
        "accepts the empty anchor only when its lower confidence bound clears the threshold "
        "itself).",
        "- anchor-exp's `explain_instance` has `beam_size=4` in its signature but never passes "
        "it on (the search runs with beam 1), and its text `min_samples_start` is 0: it "
        "starts the empty-anchor check from a single perturbation. Its returned coverage comes "
        "from that one coverage sample and is meaningless.",
    ]
    for r in results:
        if r.get("package") != "skanchors" and r.get("fit_seconds", 0) > 1:
            lines.append(
                f"- {label(r)}: constructing the explainer took {r['fit_seconds']:.1f} s "
                "(not in the per-explanation times)."
            )
    lines.append("")
    for r in results:
        if "error" in r:
            lines += [f"Error in {label(r)}:", "", "```", r["error"], "```", ""]
    lines += [
        "Machine: " + ", ".join(f"{k} {v}" for k, v in s["machine"].items()),
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in s["versions"].items() if v),
        "",
    ]
    return lines


def _busy_note(s):
    seen = s.get("other_benchmarks_seen")
    if not seen:
        return []
    return [
        "Note: another benchmark was running during this run ("
        + "; ".join(f"`{x}`" for x in seen)
        + "): the seconds were shared with it and are noisy; calls, rows and anchors are not "
        "affected.",
        "",
    ]


def mlm_table(results):
    head = (
        "| sampler | sentences | fit s | median s | mean s | mean CPU s | mean / UNK mean "
        "| model s | LM s "
        "| LM forward passes | LM sequences | calls/expl | rows/expl | length | valid "
        "| fresh prec |"
    )
    ncol = 16
    lines = [head, "|" + "---|" * ncol]
    unk = reference(results)
    for r in results:
        if "error" in r:
            lines.append(
                f"| {label(r)} | error: {r['error'].strip().splitlines()[-1][:70]} |"
                + " |" * (ncol - 2)
            )
            continue
        if not r.get("docs_done"):
            lines.append(f"| {label(r)} | 0/{r['docs_requested']} |" + " |" * (ncol - 2))
            continue
        lines.append(
            f"| {label(r)} | {r['docs_done']}/{r['docs_requested']} "
            f"| {fmt(r['fit_seconds'])} | {fmt(r['median_seconds'])} "
            f"| {fmt(r['mean_seconds'])} | {fmt(r.get('mean_cpu_seconds'))} "
            f"| {fmt(r['mean_seconds'] / unk['mean_seconds'] if unk else None, '.1f')} "
            f"| {fmt(r['model_seconds'])} | {fmt(r.get('lm_seconds'))} "
            f"| {fmt(r.get('lm_forward_passes'), '.1f')} "
            f"| {fmt(r.get('lm_sequences'), '.0f')} | {fmt(r['calls_per_expl'], '.1f')} "
            f"| {fmt(r['rows_per_expl'], '.0f')} | {fmt(r['mean_length'], '.2f')} "
            f"| {fmt(r['valid_fraction'], '.2f')} | {fmt(r['fresh_precision'], '.3f')} |"
        )
    return "\n".join(lines)


def _md_mlm(mlm):
    s = mlm["settings"]
    lm = s["lm"]
    lines = [
        "## Masked-language-model sampler: cost",
        "",
        "**The masked LM has random weights** (built from a config, never trained): this "
        "section measures what `MaskedLMSampler` costs, not the quality of its perturbations "
        "or anchors. Its fresh precision (UNK perturbations) is only shown for completeness.",
        "",
        f"Date: {s['date'][:16].replace('T', ' ')} UTC; total run time "
        f"{s['elapsed_seconds'] / 60:.1f} min. Command (dev virtualenv with torch, "
        "`/work/venv`):",
        "",
        "```",
        s["command"],
        "```",
        "",
        mlm_table(mlm["results"]),
        "",
        f"The first {s['n_docs']} sentences of the main comparison, the same TF-IDF pipeline "
        "(retrained identically in this virtualenv), threshold 0.95, delta 0.1, epsilon 0.15, "
        "batch size 100, beam 2, random_state=0. *fit s* = `AnchorExplainer.fit` on the "
        "training sentences (for the masked LM: loading it by path and indexing its "
        "vocabulary); *LM s* = seconds per explanation inside the masked LM's forward passes; "
        "*LM forward passes* and *LM sequences* = forward passes and (perturbed) sequences "
        "per explanation, counted by a global torch forward hook on the `*ForMaskedLM` module; "
        "the rest of the sampler's time goes to projecting the hidden states at the masks "
        "onto the whole-word candidates, top-k sampling and building the texts (in a profile "
        "of one sentence, the projection onto the 18k candidates and `torch.topk` took about "
        "three quarters of the time: with a vocabulary this large and a body this small, the "
        "head costs more than the forward passes). *mean / UNK "
        "mean* = mean seconds / mean seconds of UnkSampler. Other columns as above.",
        "",
        f"Masked LM: `BertForMaskedLM` from `BertConfig(hidden_size={lm['hidden_size']}, "
        f"num_hidden_layers={lm['layers']}, num_attention_heads={lm['heads']}, "
        f"intermediate_size={lm['intermediate_size']}, max_position_embeddings="
        f"{lm['max_position_embeddings']})`, {lm['parameters'] / 1e6:.2f} M parameters, "
        f"WordPiece vocabulary of {lm['vocab_size']} entries (every word piece of the "
        "movie-review sentences after `BertPreTokenizer`, built with `tokenizers` and wrapped "
        "in `PreTrainedTokenizerFast`), `torch.manual_seed(0)`; saved with `save_pretrained` to "
        "a temporary folder and loaded by path with `HF_HUB_OFFLINE=1`. Sampler: "
        "`MaskedLMSampler(path, top_k=50)` (batch_size 64, CPU, one torch thread).",
        "",
    ]
    lines += _busy_note(s)
    chk = checks(mlm["results"])
    if chk:
        lines += ["Checks:", "", *chk, ""]
    for r in mlm["results"]:
        if "error" in r:
            lines += [f"Error in {label(r)}:", "", "```", r["error"], "```", ""]
    lines += [
        "Machine: " + ", ".join(f"{k} {v}" for k, v in s["machine"].items()),
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in s["versions"].items() if v),
        "",
    ]
    return lines


def write_report(prefix, key, part):
    """Merge ``part`` into the JSON under ``key`` and re-render the whole markdown."""
    try:
        payload = read_json(prefix)
    except (FileNotFoundError, json.JSONDecodeError):
        payload = {}
    if key is not None:
        payload[key] = part
        write_json(prefix, payload, default=json_default)
    else:  # re-render only: summaries are recomputed from the stored per-sentence records
        for value in payload.values():
            for r in value["results"]:
                if r.get("per_doc"):
                    r.update(summarise(r["per_doc"]))
    lines = [
        "# Text anchors: skanchors vs alibi vs anchor-exp",
        "",
        "Written by `bench/text.py`; see `bench/README.md` (section Text) for how to run it.",
        "",
    ]
    if "main" in payload:
        lines += _md_main(payload["main"])
    if "mlm" in payload:
        lines += _md_mlm(payload["mlm"])
    Path(prefix).with_suffix(".md").write_text("\n".join(lines))


def _clean(results):
    for r in results:
        for d in r.get("per_doc", []):
            d.pop("_anchor", None)
    return results


# --------------------------------------------------------------------------------------------
# waiting for other benchmarks


def busy_now():
    """Command lines of other benchmarks running right now."""
    out = subprocess.run(["pgrep", "-af", BUSY_PATTERN], capture_output=True, text=True)
    return [
        line.strip()
        for line in out.stdout.splitlines()
        if line.strip() and int(line.split()[0]) != os.getpid()
    ]


SEEN_BUSY = set()  # other benchmarks seen running between configurations (timings shared)


def note_busy():
    SEEN_BUSY.update(busy_now())


def wait_until_idle(max_minutes=30, poll=60):
    """Do not time anything while another benchmark runs (it would share the CPU)."""
    waited = 0.0
    while True:
        busy = busy_now()
        if not busy:
            return waited
        if waited >= max_minutes * 60:
            print(f"still busy after {max_minutes} min, starting anyway: {busy}", flush=True)
            return waited
        print(f"another benchmark is running ({busy[0]}); waiting {poll} s", flush=True)
        time.sleep(poll)
        waited += poll


# --------------------------------------------------------------------------------------------
# masked-LM mode (needs torch and transformers)


def build_masked_lm(path, sentences, hidden=128, layers=2, heads=2, intermediate=256):
    import torch
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import AutoModelForMaskedLM, BertConfig, PreTrainedTokenizerFast

    normalizer = normalizers.BertNormalizer(lowercase=True)
    pre = pre_tokenizers.BertPreTokenizer()
    pieces = set()
    for s in sentences:
        pieces.update(w for w, _ in pre.pre_tokenize_str(normalizer.normalize_str(s)))
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = specials + sorted(pieces - set(specials))
    tk = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tk.normalizer = normalizer
    tk.pre_tokenizer = pre
    tk.decoder = decoders.WordPiece()
    tk.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=512,
    )
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        max_position_embeddings=512,
    )
    torch.manual_seed(SEED)
    model = AutoModelForMaskedLM.from_config(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    # The tokenizer must round-trip (transformers 5's BertTokenizerFast(vocab_file=...) maps
    # every word to [UNK]; a tokenizer_object does not).
    probe = PreTrainedTokenizerFast.from_pretrained(path)
    ids = probe("a charming movie", add_special_tokens=False)["input_ids"]
    if probe.unk_token_id in ids:
        raise RuntimeError(f"the saved tokenizer maps known words to [UNK]: {ids}")
    return {
        "hidden_size": hidden,
        "layers": layers,
        "heads": heads,
        "intermediate_size": intermediate,
        "max_position_embeddings": 512,
        "vocab_size": len(tokenizer),
        "parameters": int(sum(p.numel() for p in model.parameters())),
    }


class LMCounter:
    """Forward passes, sequences and seconds of any ``*ForMaskedLM`` module (global hooks)."""

    def __init__(self):
        import torch

        self.reset()
        self._t0 = None
        mod = torch.nn.modules.module

        def is_lm(module):
            return type(module).__name__.endswith("ForMaskedLM")

        def pre(module, args):  # the global pre-hook gets no kwargs
            if is_lm(module):
                self._t0 = time.perf_counter()

        def post(module, args, kwargs, output):
            if is_lm(module):
                if self._t0 is not None:
                    self.seconds += time.perf_counter() - self._t0
                    self._t0 = None
                ids = kwargs.get("input_ids", args[0] if args else None)
                self.passes += 1
                self.sequences += int(ids.shape[0]) if ids is not None else 0

        self._handles = [
            mod.register_module_forward_pre_hook(pre),
            mod.register_module_forward_hook(post, with_kwargs=True),
        ]

    def reset(self):
        self.passes = 0
        self.sequences = 0
        self.seconds = 0.0

    def snapshot(self):
        return {
            "lm_forward_passes": self.passes,
            "lm_sequences": self.sequences,
            "lm_seconds": self.seconds,
        }


def run_mlm(args, data, doc_ids, started, t_start):
    import torch

    torch.set_num_threads(1)
    doc_ids = doc_ids[: args.mlm_docs]
    fresh = FreshPrecision(data["pipe"])
    heldout = HeldOut(data["X_test"], data["test_pred"])
    model = TextCountingModel(data["pipe"])
    X_all = data["X_train"] + data["X_test"]
    results = []
    with tempfile.TemporaryDirectory(prefix="skanchors-bench-mlm-") as tmp:
        t0 = time.perf_counter()
        lm = build_masked_lm(tmp, X_all)
        lm["build_seconds"] = time.perf_counter() - t0
        print(f"built masked LM: {lm}", flush=True)
        counter = LMCounter()
        for variant in ("unk", "corpus", f"mlm:{tmp}"):
            note_busy()
            config = {"package": "skanchors", "beam_size": 2, "variant": variant, "batch": False}
            try:
                res = run_config(config, data, model, doc_ids, args.budget, fresh, heldout, counter)
            except Exception:
                tb = traceback.format_exc()
                print(f"{label(config)} FAILED:\n{tb}", flush=True)
                res = {**config, "error": tb, "docs_requested": len(doc_ids)}
            if variant.startswith("mlm:"):
                res["variant"] = "mlm"
            print_result(res, len(doc_ids))
            results.append(res)
    settings = common_settings(args, data, doc_ids, started, t_start)
    settings["lm"] = lm
    part = {"settings": settings, "results": _clean(results)}
    print()
    print(mlm_table(results))
    return part


# --------------------------------------------------------------------------------------------


def configurations(only):
    """Package configurations; beam_size None means the package's own default."""
    out = []
    if "alibi" in only:  # alibi's default beam_size is 1
        out += [(p, b, "unk") for p, b in (("alibi", None), ("alibi", 2))]
        out += [("alibi", None, "unk-cov1")]
    if "anchor-exp" in only:
        # explain_instance's default beam_size=4 is ignored (the search runs with beam 1);
        # beam 2 needs the search called directly.
        out += [(p, b, "unk") for p, b in (("anchor-exp", None), ("anchor-exp", 2))]
    if "skanchors" in only:  # skanchors' default beam_size is 2
        out += [("skanchors", 2, "unk"), ("skanchors", 2, "corpus")]
    return [{"package": p, "beam_size": b, "variant": v} for p, b, v in out]


def print_result(res, n):
    if res.get("docs_done"):
        ex = next((x["anchor"] for x in res["per_doc"] if x["anchor"]), [])
        print(
            f"{label(res):48s} {res['docs_done']}/{n}, median {res['median_seconds']:.4f}s, "
            f"mean {res['mean_seconds']:.4f}s, {res['calls_per_expl']:.1f} calls, "
            f"{res['rows_per_expl']:.0f} rows/expl, valid {res['valid_fraction']:.2f}, "
            f"fresh prec {res['fresh_precision']:.3f}, held-out prec "
            f"{res['heldout_precision']:.3f} cov {res['heldout_coverage']:.4f}; e.g. "
            f"{' AND '.join(ex) or '(empty)'}"
            + (f"  [{res['stopped']}]" if res["stopped"] else ""),
            flush=True,
        )


def common_settings(args, data, doc_ids, started, t_start, load_at_start=None):
    argv = sys.argv[1:]
    return {
        "command": " ".join(
            [Path(sys.executable).as_posix(), "bench/text.py", *map(shlex.quote, argv)]
        ),
        "n_docs": len(doc_ids),
        "doc_ids": [int(i) for i in doc_ids],
        "budget": args.budget,
        "threshold": THRESHOLD,
        "delta": DELTA,
        "epsilon": EPSILON,
        "batch_size": BATCH_SIZE,
        "n_fresh": N_FRESH,
        "test_accuracy": data["accuracy"],
        "n_pos": data["n_pos"],
        "n_neg": data["n_neg"],
        "heldout_sentences": len(data["X_test"]) - 1,
        "machine": {**machine(), "load average at start": load_at_start or args.load_at_start},
        "versions": versions(),
        "date": started.isoformat(),
        "elapsed_seconds": time.perf_counter() - t_start,
        "waited_for_other_benchmarks_seconds": args.waited,
        "other_benchmarks_seen": sorted(SEEN_BUSY | set(busy_now())),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-docs", type=int, default=30, help="test sentences to explain")
    parser.add_argument(
        "--budget", type=float, default=150.0, help="seconds per package configuration"
    )
    parser.add_argument("--only", default=",".join(PACKAGES), help="comma-separated packages")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 sentences")
    parser.add_argument(
        "--mlm",
        action="store_true",
        help="time MaskedLMSampler (random-weight BERT) vs UnkSampler; needs torch",
    )
    parser.add_argument("--mlm-docs", type=int, default=10, help="sentences for --mlm")
    parser.add_argument(
        "--output",
        default=None,
        help="path prefix for .md/.json.gz (default bench/results_text; none with --quick)",
    )
    parser.add_argument(
        "--no-wait", action="store_true", help="do not wait for other benchmarks to finish"
    )
    parser.add_argument(
        "--render", action="store_true", help="only rebuild the .md from the .json.gz, run nothing"
    )
    args = parser.parse_args(argv)
    if args.render:
        prefix = args.output or str(HERE / "results_text")
        write_report(prefix, None, None)
        print(f"rebuilt {prefix}.md from {prefix}.json.gz")
        return 0

    only = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(only) - set(PACKAGES)
    if unknown:
        parser.error(f"unknown packages {sorted(unknown)}; choose from {PACKAGES}")
    n_docs = min(args.n_docs, 3) if args.quick else args.n_docs
    if args.quick:
        args.mlm_docs = min(args.mlm_docs, 2)
        args.budget = min(args.budget, 60.0)
    output = args.output
    if output is None and not args.quick:
        output = str(HERE / "results_text")

    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*no rule reached precision")  # skanchors
    warnings.filterwarnings("ignore", message=".*reached the precision threshold")
    args.waited = 0.0
    if not args.quick and not args.no_wait:
        args.waited = wait_until_idle()
    started = datetime.datetime.now(datetime.timezone.utc)
    args.load_at_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    t_start = time.perf_counter()

    data = load_data()
    doc_ids = choose_docs(data, n_docs)
    print(
        f"train {len(data['X_train'])}, test {len(data['X_test'])}, test accuracy "
        f"{data['accuracy']:.3f}; explaining {len(doc_ids)} test sentences",
        flush=True,
    )

    if args.mlm:
        part = run_mlm(args, data, doc_ids, started, t_start)
        part["settings"]["elapsed_seconds"] = time.perf_counter() - t_start
        if output:
            write_report(output, "mlm", part)
            print(f"\nwrote {output}.md and {output}.json.gz (section 'mlm')")
        return 0

    fresh = FreshPrecision(data["pipe"])
    heldout = HeldOut(data["X_test"], data["test_pred"])
    model = TextCountingModel(data["pipe"])
    results = []
    for config in configurations(only):
        note_busy()
        try:
            res = run_config(config, data, model, doc_ids, args.budget, fresh, heldout)
        except Exception:
            tb = traceback.format_exc()
            print(f"{label(config)} FAILED:\n{tb}", flush=True)
            res = {**config, "error": tb, "docs_requested": len(doc_ids)}
        print_result(res, len(doc_ids))
        results.append(res)
    settings = common_settings(args, data, doc_ids, started, t_start)
    settings["packages"] = only
    settings["peer_rejoin"] = peer_rejoin_check(data, doc_ids)
    settings["elapsed_seconds"] = time.perf_counter() - t_start
    part = {"settings": settings, "results": _clean(results)}
    print()
    print(table(results))
    print()
    split = split_lines(results)
    for line in target_lines(results) + [""] + (split[0] if split else []) + [""] + checks(results):
        print(line)
    if settings["peer_rejoin"]:
        print("peer re-join check:", settings["peer_rejoin"])
    if output:
        write_report(output, "main", part)
        print(f"\nwrote {output}.md and {output}.json.gz (section 'main')")
    print(f"\ntotal {settings['elapsed_seconds'] / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
