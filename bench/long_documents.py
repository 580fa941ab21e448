"""Time and memory to explain long documents, and to aggregate a corpus holding one.

Documents of 1,000, 10,000 and 100,000 words, explained with a TF-IDF + logistic regression
model trained on 2,000 movie reviews, by this tree and by another git revision (``git
archive`` of each into a temporary folder, as ``bench/revisions.py`` does), each case and
version in a fresh process with a time limit and an address-space limit (a version that asks
for more fails with MemoryError rather than taking the machine's memory). Writes
``bench/results_long_documents.md`` and ``.json``.

    python bench/long_documents.py 332870d      # that revision against the working tree

A document is a mix of negative and positive reviews (the first words from negative ones, the
rest from positive ones), cut where UNK perturbations (each word kept with probability 1/2)
keep its predicted class with a given probability, measured on 60 perturbations:

* *clear* (0.99): the empty rule, or a word or two, is an anchor;
* *hard* (0.90): near the decision boundary, where one word moves the prediction little:
  the anchor is long, and more so the longer the document; with ``max_anchor_size=3`` the
  search stops after three rounds (about ``d`` candidates each).

Cases: ``AnchorExplainer(model, random_state=0)`` (``UnkSampler``, the default) on the clear
and hard documents, the hard one also with ``max_anchor_size=3``; ``CorpusSampler`` on the
clear one; ``GlobalAnchorAggregator(model, random_state=0).fit`` on 200 reviews plus the hard
document. *Added MB* is the peak resident memory of the call minus the peak before it (the
data, the model and the fitted explainer), the model's own memory included (the vectoriser of
a call of 200 documents of 100,000 words holds a few hundred MB).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from revisions import describe, export_version  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
# (name, document, what is run)
CASES = (
    ("explain, clear document", "clear", "unk"),
    ("explain, hard document, max_anchor_size=3", "hard", "unk3"),
    ("explain, hard document", "hard", "unk"),
    ("explain, clear document, CorpusSampler", "clear", "corpus"),
    ("aggregate 200 reviews + the hard document", "hard", "aggregate"),
)
SHARES = {"clear": 0.99, "hard": 0.90}
MEMORY_LIMIT = 8 * 2**30  # address space of a worker


def _rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _setup(pkg):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    X, y = pkg.datasets.load_movie_reviews(return_X_y=True)
    X, y = list(X), np.asarray(y)
    order = np.random.default_rng(0).permutation(len(X))
    train, rest = order[:2000], order[2000:]
    model = make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000))
    model.fit([X[i] for i in train], y[train])
    return model, [X[i] for i in train], [X[i] for i in rest], y[rest]


def _document(model, rest, labels, n_words, share):
    """The mix of negative then positive reviews whose UNK perturbations keep its class with
    probability about ``share`` (perturbations made here, the same for every version)."""
    from scipy.stats import norm

    def words_of(label, seed):
        rng = np.random.default_rng(seed)
        pool = [d for d, t in zip(rest, labels) if t == label]
        out = []
        while len(out) < n_words:
            out += pool[rng.integers(len(pool))].split()
        return out[:n_words]

    negative, positive = words_of(0, 1), words_of(1, 2)

    def mix(k):
        return negative[:k] + positive[k:]

    # the spread of P(positive) under masking, at the even mix
    words = np.array(mix(n_words // 2), dtype=object)
    keep = np.random.default_rng(0).random((60, n_words)) < 0.5
    masked = [" ".join(np.where(row, words, "UNK")) for row in keep]
    p = model.predict_proba(masked)[:, 1]
    shift = p.mean() - model.predict_proba([" ".join(words)])[0, 1]
    target = 0.5 + norm.ppf(share) * p.std() - shift  # P(positive) of the document itself
    lo, hi = 0, n_words  # P(positive) falls as k grows
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if model.predict_proba([" ".join(mix(mid))])[0, 1] > target:
            lo = mid
        else:
            hi = mid
    return " ".join(mix(lo))


def worker(kind, what, n_words, folder, name):
    """One case with the package in ``folder / name``; prints a JSON line."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    sys.path.insert(0, folder)
    pkg = importlib.import_module(name)
    for sub in ("datasets", "samplers", "aggregation"):
        importlib.import_module(f"{name}.{sub}")
    warnings.simplefilter("ignore")
    model, train, rest, labels = _setup(pkg)
    document = _document(model, rest, labels, n_words, SHARES[kind])
    out = {"words": len(document.split())}
    if what == "aggregate":
        agg = pkg.aggregation.GlobalAnchorAggregator(model, random_state=0)
        corpus = rest[:200] + [document]
        before = _rss_mb()
        start = time.perf_counter()
        agg.fit(corpus)
        out["seconds"] = time.perf_counter() - start
        out["rows"] = int(agg.n_rows_predicted_)
        out["calls"] = int(agg.n_model_calls_)
        out["tokens_tested"] = int(agg.n_tokens_tested_)
        out["answer"] = {str(c): [w for w, _ in t] for c, t in agg.top_terms_.items()}
    else:
        sampler = pkg.samplers.CorpusSampler() if what == "corpus" else None
        size = 3 if what == "unk3" else None
        explainer = pkg.AnchorExplainer(
            model, sampler=sampler, max_anchor_size=size, random_state=0
        ).fit(train)
        explainer.explain(["a fine film"])  # compiled kernels and imports, before the clock
        before = _rss_mb()
        start = time.perf_counter()
        anchor = explainer.explain([document])[0]
        out["seconds"] = time.perf_counter() - start
        out["rows"] = int(anchor.n_rows_predicted)
        out["calls"] = int(anchor.n_model_calls)
        out["anchor_words"] = len(anchor.predicates)
        out["is_anchor"] = bool(anchor.is_anchor)
        out["answer"] = str(anchor)
    out["added_mb"] = _rss_mb() - before
    print(json.dumps(out))


def _run(case, n_words, folder, name, timeout):
    title, kind, what = case
    command = [sys.executable, __file__, "-", "--worker", kind, what, str(n_words)]
    command += [str(folder), name]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"did not finish in {timeout:.0f} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"status": f"failed: {last}"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]), status="ok")


def _status(r):
    """What the table shows of a case that did not end well."""
    status = r["status"]
    asked = re.search(r"Unable to allocate ([0-9.]+ [KMGTP]i?B)", status)
    if asked:
        return f"MemoryError (asked for {asked.group(1)})"
    if status.startswith("failed: "):
        return "failed: " + status[len("failed: ") :].split(":")[0].rsplit(".", 1)[-1]
    return status


def _cell(r, key, fmt):
    return fmt.format(r[key]) if r.get("status") == "ok" else "-"


def _per_word(r):
    if r.get("status") != "ok":
        return "-"
    return f"{1e3 * r['seconds'] / r['words']:.2f}"


def render(run):
    """The Markdown report of a run (the JSON the script writes)."""
    lines = [
        "# Long documents: time and memory",
        "",
        f"Date: {run['date']}; {run['machine']} (shared with other jobs: times are indicative).",
        "",
        f"Command: `{run['command']}`",
        "",
        f"Base: {run['base']} (at most {run['base_timeout']:.0f} s a case); new: {run['new']} "
        f"(at most {run['timeout']:.0f} s). Each case and version in a fresh process, its "
        f"address space limited to {run['memory_limit'] / 2**30:.0f} GB. *added MB*: peak "
        "resident memory of the call minus the peak before it (the model's included); "
        "*ms/word*: seconds per 1,000 words. See the script's docstring for the documents.",
        "",
        "| case | words | s, base | s, new | ms/word, new | added MB, base | added MB, new "
        "| rows predicted, base | rows predicted, new | anchor words, new | same answer |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in run["results"]:
        b, n = r["base"], r["new"]

        def seconds(x):
            return f"{x['seconds']:.1f}" if x.get("status") == "ok" else _status(x)

        same = {True: "yes", False: "no", None: "-"}[r["same_answer"]]
        lines.append(
            f"| {r['case']} | {r['n_words']:,} | {seconds(b)} | {seconds(n)} | {_per_word(n)} | "
            f"{_cell(b, 'added_mb', '{:,.0f}')} | {_cell(n, 'added_mb', '{:,.0f}')} | "
            f"{_cell(b, 'rows', '{:,}')} | {_cell(n, 'rows', '{:,}')} | "
            f"{n.get('anchor_words', '-') if n.get('status') == 'ok' else '-'} | {same} |"
        )
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base", help="git revision to compare the working tree with")
    parser.add_argument("--output", default=str(HERE / "results_long_documents"))
    parser.add_argument("--base-timeout", type=float, default=120.0)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--cases", type=int, nargs="+", help="indices into CASES (all)")
    parser.add_argument("--render", action="store_true", help="write the .md of the .json")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kind, what, n_words, folder, name = args.worker
        worker(kind, what, int(n_words), folder, name)
        return
    if args.render:
        run = json.loads(Path(args.output + ".json").read_text())
        Path(args.output + ".md").write_text(render(run))
        return
    folder = Path(tempfile.mkdtemp(prefix="skanchors-long-"))
    try:
        names = {"base": "skanchors_base", "new": "skanchors_new"}
        export_version(args.base, folder, names["base"])
        export_version(None, folder, names["new"])
        run = dict(
            command=f"python bench/long_documents.py {' '.join(sys.argv[1:])}",
            base=describe(args.base),
            new=describe(None),
            machine=f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
            base_timeout=args.base_timeout,
            timeout=args.timeout,
            memory_limit=MEMORY_LIMIT,
            results=[],
        )
        cases = CASES if args.cases is None else [CASES[i] for i in args.cases]
        for case in cases:
            for n_words in args.sizes:
                out = {"case": case[0], "n_words": n_words}
                for which, name in names.items():
                    timeout = args.base_timeout if which == "base" else args.timeout
                    out[which] = _run(case, n_words, folder, name, timeout)
                    shown = {k: v for k, v in out[which].items() if k != "answer"}
                    print(case[0], n_words, which, shown, flush=True)
                b, n = out["base"], out["new"]
                out["same_answer"] = (
                    b.get("answer") == n.get("answer") if b.get("status") == "ok" else None
                )
                run["results"].append(out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    run["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    Path(args.output + ".json").write_text(json.dumps(run, indent=1) + "\n")
    text = render(run)
    Path(args.output + ".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
