"""Memory of hard searches on wide inputs: this tree against another git revision.

A search keeps every perturbation it draws until it ends; on a long document or a table of a
thousand features that is most of its memory. This script runs the same hard searches with two
versions of the package (``git archive`` of each into a temporary folder, as
``bench/revisions.py`` does), each in a fresh process, and reports the peak resident memory
the search added (``ru_maxrss`` after ``explain`` minus before it), its wall time, the rows
predicted and whether both versions return the same anchors. Writes ``bench/results_memory``.

    python bench/memory.py cb6619f            # that revision against the working tree

Cases:

* *text*: a 1,069-word document of joined SMS messages that a bag-of-words logistic
  regression (600 messages) predicts as spam with probability 0.75, ``UnkSampler``,
  ``max_anchor_size=3``: a search of about 144,000 rows predicted;
* *wide table*: 5,000 rows of 1,000 normal features, a logistic regression on three of them,
  the two rows nearest its decision boundary, ``max_anchor_size=2``: about 95,000 rows each;
* *a million rows*: 1,000,000 reference rows of 8 normal features, a logistic regression,
  20 rows explained in one call: the sampler's pools of rows (the rows each value is drawn
  from) are made during the searches.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import write_json  # noqa: E402
from revisions import describe, export_version  # noqa: E402

CASES = ("text", "wide table", "a million rows")


def _rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _text_case(pkg):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    X, y = pkg.datasets.load_sms_spam(return_X_y=True)
    X, y = list(X), np.asarray(y)
    model = make_pipeline(CountVectorizer(), LogisticRegression(max_iter=1000))
    model.fit(X[:600], y[:600])
    rng = np.random.default_rng(0)
    docs = []
    for _ in range(200):
        words, joined = 0, []
        for i in rng.permutation(len(X)):
            joined.append(X[i])
            words += len(X[i].split())
            if words >= 1000:
                break
        docs.append(" ".join(joined))
    p = model.predict_proba(docs)[:, 1]
    document = docs[int(np.argmin(np.abs(p - 0.3)))]
    explainer = pkg.AnchorExplainer(
        model, max_anchor_size=3, random_state=0, sampler=pkg.samplers.UnkSampler()
    ).fit(X[:600])
    return explainer, [document]


def _wide_case(pkg):
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(5000, 1000)), columns=[f"f{i}" for i in range(1000)])
    y = (X["f0"] + 0.5 * X["f1"] + 0.3 * X["f2"] > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    p = model.predict_proba(X)[:, 1]
    rows = X.iloc[np.argsort(np.abs(p - 0.5))[:2]]
    explainer = pkg.AnchorExplainer(
        model, max_anchor_size=2, perturbation="replace", beam_size=2, random_state=0
    )
    return explainer.fit(X), rows


def _million_case(pkg):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1_000_000, 8))
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=len(X)) > 2.0).astype(int)
    model = LogisticRegression().fit(X, y)
    explainer = pkg.AnchorExplainer(model, perturbation="replace", beam_size=2, random_state=0)
    return explainer.fit(X), X[:20]


def worker(case, folder, name):
    """One case with the package in ``folder / name``; prints a JSON line."""
    sys.path.insert(0, folder)
    pkg = importlib.import_module(name)
    for sub in ("datasets", "samplers"):
        importlib.import_module(f"{name}.{sub}")
    warnings.simplefilter("ignore")
    make = {"text": _text_case, "wide table": _wide_case, "a million rows": _million_case}
    explainer, rows = make[case](pkg)
    before = _rss_mb()
    start = time.perf_counter()
    anchors = explainer.explain(rows)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "added_mb": _rss_mb() - before,
                "before_mb": before,
                "seconds": seconds,
                "rows": [a.n_rows_predicted for a in anchors],
                "anchors": [str(a) for a in anchors],
            }
        )
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base", help="git revision to compare the working tree with")
    parser.add_argument("--output", default=str(HERE / "results_memory"))
    parser.add_argument("--cases", default=",".join(CASES), help=f"some of {', '.join(CASES)}")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    if set(cases) - set(CASES):
        parser.error(f"unknown cases {sorted(set(cases) - set(CASES))}; choose from {CASES}")
    names = {"base": "skanchors_base", "new": "skanchors_new"}
    labels = {"base": describe(args.base), "new": describe(None)}
    results = []
    with tempfile.TemporaryDirectory(prefix="skanchors-memory-") as folder:
        export_version(args.base, Path(folder), names["base"])
        export_version(None, Path(folder), names["new"])
        for case in cases:
            out = {"case": case}
            for which, name in names.items():
                done = subprocess.run(
                    [sys.executable, __file__, args.base, "--worker", case, folder, name],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                out[which] = json.loads(done.stdout.strip().splitlines()[-1])
                print(case, which, {k: v for k, v in out[which].items() if k != "anchors"})
            out["same_anchors"] = out["base"]["anchors"] == out["new"]["anchors"]
            results.append(out)
    lines = [
        "# Memory of hard searches on wide inputs",
        "",
        f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs.",
        "",
        f"Command: `python bench/memory.py {' '.join(sys.argv[1:])}`",
        "",
        f"Base: {labels['base']}; new: {labels['new']}. Each case and version in a fresh "
        "process; *added MB*: peak resident memory after `explain` minus the peak before it "
        "(data, model and fitted explainer). See the script's docstring for the cases.",
        "",
        "| case | added MB, base | added MB, new | ratio | s, base | s, new | rows predicted "
        "| same anchors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        b, n = r["base"], r["new"]

        def total(r):
            return f"{sum(r):,}" if len(r) > 2 else " / ".join(f"{x:,}" for x in r)

        rows = total(n["rows"])
        if b["rows"] != n["rows"]:
            rows = f"{total(b['rows'])} -> {rows}"
        lines.append(
            f"| {r['case']} | {b['added_mb']:,.0f} | {n['added_mb']:,.0f} | "
            f"{n['added_mb'] / b['added_mb']:.2f} | {b['seconds']:.1f} | {n['seconds']:.1f} | "
            f"{rows} | {'yes' if r['same_anchors'] else 'no'} |"
        )
    text = "\n".join(lines) + "\n"
    Path(args.output + ".md").write_text(text)
    write_json(args.output, results)
    print(text)


if __name__ == "__main__":
    main()
