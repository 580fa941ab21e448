"""What the fixes of issue 44's "smaller faults" cost, measured against the code before them.

Run from the project's environment with a copy of the code before the fixes::

    git archive e8095f3 skanchors | tar -x -C /tmp/before
    PYTHONPATH=. python bench/faults.py --before /tmp/before
    python bench/faults.py --rewrite --notes notes.md     # the report again, with a reading

Each measurement runs in a fresh process, once with this checkout's ``skanchors`` and once
with the one under ``--before``, alternating, ``--repeats`` times (3); wall times are medians,
counts are from the first repeat (they are deterministic, except where stated). Writes
``bench/results_faults.md`` and ``.json.gz`` (``--output PREFIX``: elsewhere). Sections:

- shared calls: 20 test rows of Titanic and Adult explained in one call with a random forest
  given as ``forest.predict_proba`` (scikit-learn's own, about 10 ms a call: the rows' searches
  share their calls). Before, each anchor's ``n_model_calls`` / ``n_rows_predicted`` depended on
  which search's thread claimed a row first; now they are those of the rows explained one
  after the other. Reported: wall time, the rows and calls the model really made, the sum of
  the anchors' counts, and how many anchors' counts differed between the repeats.
- BatchSAR: the same rows with ``bandit="batch-sar"`` and the forest itself (its trees
  traversed by skanchors), and again with ``forest.predict_proba`` (a model slow per call,
  which BatchSAR is for). Before, every surviving candidate was pulled by the largest need
  of the phase; now only the candidates that lack samples, by the largest lack (the arms of
  the search have only ``pull(indices, n)``); "per arm" adds a ``pull_each`` to the search's
  arms for this benchmark only (what a one-call draw of a count per arm would give).
- refit check: the cost of fingerprinting the model at every ``explain`` (microseconds).

The candidate-filtering fix is measured by ``bench/global.py --filtering``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import warnings

from _common import read_json, write_json

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "results_faults")  # the report's prefix (--output PREFIX)
# The defaults of the code the committed report measured (before and after the fixes alike),
# pinned: perturbation="auto" and beam_size="auto" came later.
SETTINGS = dict(perturbation="replace", beam_size=2, random_state=0)
N_ROWS = 20


def _data(name):
    import numpy as np
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    from skanchors.datasets import load_adult, load_titanic

    X, y = (load_titanic if name == "titanic" else load_adult)(return_X_y=True)
    X = X.copy()
    for column in X.columns:  # numbers only: categories as their codes, missing as -1
        if str(X[column].dtype) == "category":
            X[column] = X[column].cat.codes.astype(float)
    X = X.astype(float).fillna(-1.0)
    X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.3, random_state=0)
    forest = RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1)
    forest.fit(X_train, np.asarray(y_train))
    return X_train, X_test.iloc[:N_ROWS], forest


class _Counting:
    """The forest's own predict_proba, counting calls and rows."""

    def __init__(self, forest):
        self.forest = forest
        self.classes_ = forest.classes_
        self.calls = self.rows = 0

    def predict_proba(self, X):
        self.calls += 1
        self.rows += len(X)
        return self.forest.predict_proba(X)


def _add_pull_each():
    """Give the search's arms a draw of a count per arm in one call, where the code measured
    lacks it (the package has its own since: then this is plain BatchSAR)."""
    import numpy as np

    from skanchors import _search

    if hasattr(_search.CandidateArms, "pull_each"):
        return np

    def pull_each(self, indices, counts):
        requests = [(self.candidates[i], int(n)) for i, n in zip(indices, counts)]
        out = self.store.draw(requests)
        if isinstance(self, _search.CandidateArms):
            n_samples, n_positives = self.store.counts(self.candidates, *out, self.reuse)
            self.n_samples += n_samples
            self.n_positives += n_positives
        elif isinstance(self, _search.StratifiedArms):
            self._update(*out)
        else:
            self._refresh()

    for name in ("CandidateArms", "StratifiedArms", "ReferenceArms"):
        getattr(_search, name).pull_each = pull_each
    return np


def measure(kind, name):
    """One measurement in this process (the ``skanchors`` on the path); prints JSON."""
    from skanchors import AnchorExplainer

    warnings.simplefilter("ignore")
    X_train, rows, forest = _data(name)
    out = {}
    if kind == "shared":
        model = _Counting(forest)
        explainer = AnchorExplainer(model.predict_proba, **SETTINGS).fit(X_train)
        model.calls = model.rows = 0
        start = time.perf_counter()
        anchors = explainer.explain(rows)
        out["wall"] = time.perf_counter() - start
        out["model_calls"], out["model_rows"] = model.calls, model.rows
        out["counts"] = [[a.n_model_calls, a.n_rows_predicted] for a in anchors]
        out["anchors"] = [str(a) for a in anchors]
    elif kind in ("batchsar", "batchsar-per-arm", "batchsar-slow"):
        if kind == "batchsar-per-arm":
            _add_pull_each()
        # (slow: scikit-learn's predict_proba, ~10 ms a call, where BatchSAR's few calls pay)
        model = forest.predict_proba if kind == "batchsar-slow" else forest
        explainer = AnchorExplainer(model, bandit="batch-sar", **SETTINGS).fit(X_train)
        start = time.perf_counter()
        anchors = explainer.explain(rows)
        out["wall"] = time.perf_counter() - start
        out["rows"] = sum(a.n_rows_predicted for a in anchors)
        out["calls"] = sum(a.n_model_calls for a in anchors)
        out["valid"] = sum(a.is_anchor for a in anchors)
        out["coverage"] = statistics.mean(a.coverage for a in anchors)
        out["precision"] = statistics.mean(a.precision for a in anchors)
    elif kind == "refit":
        explainer = AnchorExplainer(forest, **SETTINGS).fit(X_train)
        check = getattr(explainer.model_, "refitted", None)
        if check is not None:
            start, n = time.perf_counter(), 2000
            for _ in range(n):
                check()
            out["check_us"] = (time.perf_counter() - start) / n * 1e6
        start = time.perf_counter()
        explainer.explain(rows.iloc[:5])
        out["explain_5_rows"] = time.perf_counter() - start
    print(json.dumps(out))


def _run(code, kind, name):
    env = dict(os.environ, PYTHONPATH=code)
    done = subprocess.run(
        [sys.executable, __file__, "--measure", kind, name],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv):
    global OUT
    if argv[:1] == ["--measure"]:
        measure(argv[1], argv[2])
        return
    if "--output" in argv:
        i = argv.index("--output")
        OUT = os.path.abspath(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    if "--notes" in argv:  # a reading of the results, kept in the JSON and the report
        i = argv.index("--notes")
        with open(argv[i + 1]) as fh:
            notes = fh.read().strip()
        argv = argv[:i] + argv[i + 2 :]
        if "--rewrite" in argv:
            data = read_json(OUT)
            data["notes"] = notes
            write_json(OUT, data)
            write(data)
            return
    before = argv[argv.index("--before") + 1] if "--before" in argv else None
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 3
    plan = [("shared", n) for n in ("titanic", "adult")]
    plan += [("batchsar", n) for n in ("titanic", "adult")]
    plan += [("batchsar-per-arm", n) for n in ("titanic", "adult")]
    plan += [("batchsar-slow", n) for n in ("titanic", "adult")]
    plan += [("refit", "adult")]
    results = []
    for kind, name in plan:
        versions = [("after", ROOT)] + ([("before", before)] if before else [])
        if kind in ("batchsar-per-arm", "refit"):
            versions = versions[:1]  # (the per-arm draw and the check exist after only)
        runs = {label: [] for label, _ in versions}
        for _ in range(repeats):  # the versions alternate
            for label, code in versions:
                runs[label].append(_run(code, kind, name))
        for label, _ in versions:
            entry = dict(kind=kind, dataset=name, code=label, runs=runs[label])
            print(kind, name, label, json.dumps(runs[label][0])[:300], flush=True)
            results.append(entry)
    out = dict(
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        cpus=os.cpu_count(),
        repeats=repeats,
        results=results,
    )
    write_json(OUT, out)
    write(out)


def _find(results, kind, name, code):
    for r in results:
        if (r["kind"], r["dataset"], r["code"]) == (kind, name, code):
            return r
    return None


def write(data):
    res = data["results"]
    wall = lambda r: statistics.median(x["wall"] for x in r["runs"])  # noqa: E731
    lines = [
        "# Issue 44's smaller faults: what the fixes cost (`bench/faults.py`)",
        "",
        f"Run {data['date']}, {data['cpus']} CPUs, {data['repeats']} repeats (each in a fresh "
        "process, the two versions alternating); wall times are medians. *before*: the code "
        "before the fixes (e8095f3); *after*: this branch. 20 test rows of each data set "
        "(numbers only: categories as codes), a 100-tree random forest, "
        '`perturbation="replace"` and `beam_size=2` (the defaults of both versions).',
        "",
        *([data["notes"], ""] if data.get("notes") else []),
        "## Each anchor's counts when rows share model calls",
        "",
        "The forest given as `forest.predict_proba` (scikit-learn's, ~10 ms a call): the 20 "
        "rows' searches share their calls. *varying anchors*: anchors whose "
        "(`n_model_calls`, `n_rows_predicted`) differed between the repeats.",
        "",
        "| data | code | wall (s) | model calls made | rows predicted by the model | sum of "
        "the anchors' rows | sum of the anchors' calls | varying anchors | same anchors as "
        "before |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("titanic", "adult"):
        ref = _find(res, "shared", name, "before")
        for code in ("before", "after"):
            r = _find(res, "shared", name, code)
            if r is None:
                continue
            first = r["runs"][0]
            varying = sum(
                len({tuple(run["counts"][i]) for run in r["runs"]}) > 1
                for i in range(len(first["counts"]))
            )
            same = ""
            if ref is not None:
                same = "yes" if first["anchors"] == ref["runs"][0]["anchors"] else "no"
            lines.append(
                f"| {name} | {code} | {wall(r):.2f} | {first['model_calls']} | "
                f"{first['model_rows']} | {sum(c[1] for c in first['counts'])} | "
                f"{sum(c[0] for c in first['counts'])} | {varying} of {len(first['counts'])} | "
                f"{same} |"
            )
    lines += [
        "",
        "## BatchSAR",
        "",
        '`bandit="batch-sar"`, the forest itself. Rows and calls: sums over the 20 anchors.',
        "",
        "| data | code | wall (s) | rows predicted | model calls | valid anchors | mean precision "
        "| mean coverage |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("titanic", "adult"):
        for kind, code, label in (
            ("batchsar", "before", "before (every arm by the largest need)"),
            ("batchsar", "after", "after (lacking arms by the largest lack)"),
            ("batchsar-per-arm", "after", "after, per arm (pull_each, this benchmark only)"),
            ("batchsar-slow", "before", "before, forest.predict_proba (~10 ms a call)"),
            ("batchsar-slow", "after", "after, forest.predict_proba (~10 ms a call)"),
        ):
            r = _find(res, kind, name, code)
            if r is None:
                continue
            first = r["runs"][0]
            lines.append(
                f"| {name} | {label} | {wall(r):.2f} | {first['rows']} | {first['calls']} | "
                f"{first['valid']} | {first['precision']:.3f} | {first['coverage']:.3f} |"
            )
    r = _find(res, "refit", "adult", "after")
    if r is not None:
        checks = [x["check_us"] for x in r["runs"]]
        explain = statistics.median(x["explain_5_rows"] for x in r["runs"])
        lines += [
            "",
            "## Refit check",
            "",
            f"Fingerprinting the Adult forest's fitted attributes (`model_.refitted()`, once "
            f"per `explain` and `perturbation_precision`): median {statistics.median(checks):.0f} "
            f"microseconds, against {explain:.2f} s to explain 5 rows.",
        ]
    with open(OUT + ".md", "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
