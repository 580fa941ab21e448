"""What the precision guarantee costs on text: two revisions side by side, in one process.

Issue 44 (item 2): the search validated a chosen rule on the samples that chose it; it now
validates it on samples drawn after the choice. This script loads both versions of the package
(as ``revisions.py`` does) and measures, for each:

* the adversarial document of ``tests/test_acceptance.py`` ("good w0 ... w59", a model that keeps
  class 1 when "good" is kept unless a hash of the text flips it: every rule that keeps the
  prediction has precision 0.92, below threshold - 0.025): out of ``--seeds`` random states,
  how many searches return an anchor, how many of those fall below 0.925 on 20,000 fresh
  perturbations, and rows predicted per search;
* movie-review sentences explained by a TF-IDF + logistic regression pipeline: valid anchors,
  mean length, mean precision on 2,000 fresh perturbations, share of valid anchors at or above
  0.925 there, rows predicted and CPU seconds per explanation.

Both with ``UnkSampler`` (the default) and ``CorpusSampler``. Run in the development
virtualenv::

    python bench/honesty.py e8095f3 0eb93e4 --output bench/results_honesty_text

(the tables use, for tables, ``python bench/revisions.py e8095f3 0eb93e4 --cells
adult/rf,adult/gb,titanic/rf,titanic/gb --given estimator --reps 3 --seeds 5 --output
bench/results_honesty_tabular``)
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import write_json  # noqa: E402
from revisions import describe, load_version  # noqa: E402

from skanchors.datasets import load_movie_reviews  # noqa: E402

DOCUMENT = "good " + " ".join(f"w{i}" for i in range(60))
THRESHOLD = 0.95


def adversarial(texts):
    keep = [("good" in t.split()) and zlib.crc32(t.encode()) % 100 >= 8 for t in texts]
    p = np.array(keep, dtype=float)
    return np.column_stack([1 - p, p])


def adversarial_cell(module, sampler, seeds):
    accepted = bad = rows = 0
    for seed in range(seeds):
        explainer = module.AnchorExplainer(
            adversarial, sampler=sampler(module), random_state=seed
        ).fit([DOCUMENT])
        anchor = explainer.explain([DOCUMENT])[0]
        rows += anchor.n_rows_predicted
        if anchor.is_anchor:
            accepted += 1
            fresh = explainer.perturbation_precision(anchor, 20_000, random_state=10_000 + seed)
            bad += fresh < THRESHOLD - 0.025
    return {"searches": seeds, "accepted": accepted, "below": bad, "rows": rows / seeds}


def reviews_cell(module, sampler, model, sentences, reference):
    explainer = module.AnchorExplainer(model, sampler=sampler(module), random_state=0)
    explainer.fit(reference)
    valid, lengths, fresh, rows, seconds = 0, [], [], 0, 0.0
    for i, sentence in enumerate(sentences):
        t0 = time.process_time()
        anchor = explainer.explain([sentence])[0]
        seconds += time.process_time() - t0
        rows += anchor.n_rows_predicted
        if anchor.is_anchor:
            valid += 1
            lengths.append(len(anchor.predicates))
            fresh.append(explainer.perturbation_precision(anchor, 2000, random_state=i))
    n = len(sentences)
    fresh = np.array(fresh)
    return {
        "sentences": n,
        "valid": valid,
        "length": float(np.mean(lengths)) if lengths else float("nan"),
        "fresh": float(fresh.mean()) if valid else float("nan"),
        "fresh_ok": float(np.mean(fresh >= THRESHOLD - 0.025)) if valid else float("nan"),
        "rows": rows / n,
        "seconds": seconds / n,
    }


SAMPLERS = {
    "UnkSampler()": lambda m: m.samplers.UnkSampler(),
    "CorpusSampler()": lambda m: m.samplers.CorpusSampler(),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new", nargs="?", default=None)
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--sentences", type=int, default=50)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    started = datetime.datetime.now(datetime.timezone.utc)
    labels = {"base": describe(args.base), "new": describe(args.new)}
    with tempfile.TemporaryDirectory() as folder:
        versions = {
            "base": load_version(args.base, Path(folder), "skanchors_base"),
            "new": load_version(args.new, Path(folder), "skanchors_new"),
        }
        X, y = load_movie_reviews(return_X_y=True)
        train, test, y_train, _ = train_test_split(list(X), y, test_size=0.2, random_state=0)
        model = make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000))
        model.fit(train, y_train)
        sentences = test[: args.sentences]
        results = {}
        for sampler in SAMPLERS.values():
            for which, module in versions.items():
                name = [k for k, v in SAMPLERS.items() if v is sampler][0]
                print(f"{name} {which}", flush=True)
                results[f"{name}|{which}"] = {
                    "adversarial": adversarial_cell(module, sampler, args.seeds),
                    "reviews": reviews_cell(module, sampler, model, sentences, train),
                }
    text = report(labels, results, args, started)
    print(text)
    if args.output:
        Path(f"{args.output}.md").write_text(text)
        write_json(args.output, {"labels": labels, "results": results, "argv": sys.argv[1:]})


def report(labels, results, args, started):
    lines = [
        "# The text precision guarantee: validation on samples drawn after the choice",
        "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC. Command: `python bench/honesty.py "
        f"{' '.join(sys.argv[1:])}`",
        "",
        f"Base: {labels['base']}; new: {labels['new']}. Written by `bench/honesty.py`.",
        "",
        f"Adversarial document (every rule keeping the prediction has precision 0.92), "
        f"{args.seeds} random states: searches returning an anchor, and how many of those are "
        "below 0.925 on 20,000 fresh perturbations (delta = 0.1 allows "
        f"{int(0.1 * args.seeds)}).",
        "",
        "| sampler | accepted base | below base | rows base | accepted new | below new "
        "| rows new |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in SAMPLERS:
        b, n = results[f"{name}|base"]["adversarial"], results[f"{name}|new"]["adversarial"]
        lines.append(
            f"| {name} | {b['accepted']} | {b['below']} | {b['rows']:.0f} | "
            f"{n['accepted']} | {n['below']} | {n['rows']:.0f} |"
        )
    lines += [
        "",
        f"Movie-review sentences ({args.sentences}, TF-IDF + logistic regression): valid "
        "anchors, mean length of the valid ones, their mean precision on 2,000 fresh "
        "perturbations and the share at or above 0.925 there, rows predicted and CPU seconds "
        "per explanation.",
        "",
        "| sampler | version | valid | length | fresh | fresh >= 0.925 | rows/expl | s/expl |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in SAMPLERS:
        for which in ("base", "new"):
            r = results[f"{name}|{which}"]["reviews"]
            lines.append(
                f"| {name} | {which} | {r['valid']}/{r['sentences']} | {r['length']:.2f} | "
                f"{r['fresh']:.3f} | {r['fresh_ok']:.2f} | {r['rows']:.0f} | "
                f"{r['seconds']:.3f} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
