"""Run a benchmark suite of skanchors: ``python bench/run.py SUITE [--quick] [-- ARGS...]``.

Each suite is one or more of the scripts in this folder, run with the arguments of its committed
report; the scripts stay runnable on their own (``python bench/tabular.py --help``). The runner
puts this checkout first on ``PYTHONPATH``, so the ``skanchors`` measured is the one next to it
whichever virtualenv runs it, runs it on one thread (``OMP_NUM_THREADS=1`` and friends, unless
set), and checks first that the suite's packages are importable.

    python bench/run.py list                    # the suites, their environment and reports
    bench/.venv/bin/python bench/run.py tabular          # the committed reports, again
    bench/.venv/bin/python bench/run.py tabular --quick  # a smoke run, written to a temp folder
    bench/.venv/bin/python bench/run.py tabular -- --only skanchors --n-rows 5   # own arguments
    python bench/run.py models regression --quick   # several suites' smoke runs
    python bench/run.py all --quick             # every suite of this virtualenv, smoke runs

Suites marked *peers* need the peers' virtualenv (``bash bench/setup_peers.sh``: alibi,
anchor-exp, lime, xgboost, vaderSentiment, numpy < 2); *dev* ones the project's own
environment (``pip install -e ".[test,text,fast]"``). A full run rewrites the suite's reports in
this folder; ``--quick`` never writes here.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PEERS = ("alibi", "anchor")  # anchor-exp's module is ``anchor``
THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


@dataclass
class Suite:
    about: str
    env: str  # "peers" or "dev": where the suite runs
    steps: list  # [[script, arg, ...], ...]: the committed reports, in order
    quick: list  # the same for --quick; "{tmp}" is a fresh temporary folder
    reports: list  # report prefixes in this folder
    needs: tuple = ()  # modules the steps import
    minutes: str = ""  # a full run on the 2-core benchmark machine
    notes: list = field(default_factory=list)


REDESIGN_BASE = "1c843ff"  # main before the redesign of issue 45
REDESIGN_CELLS = "adult/rf,adult/gb,titanic/rf,titanic/gb,wide/gb,movies/lr"
HONESTY_BASE = "e8095f3"  # the code before issue 44's precision fixes
FAULTS_BASE = "e8095f3"
LONG_BASE = "332870d"  # the code before issue 48's long-document changes
MEMORY_BASE = "cb6619f"  # the search store before 32-bit pools and stream places
PAPER_CONFIGS = [
    "--config",
    "defaults, train reference:reference=train",
    "--config",
    "defaults:",
    "--config",
    "former defaults, train reference:perturbation=replace,beam_size=2,reference=train",
    "--config",
    "former defaults:perturbation=replace,beam_size=2",
    "--config",
    "reference, beam 10, train reference:perturbation=reference,reference=train",
    "--config",
    "reference, beam 10:perturbation=reference",
    "--config",
    "auto, beam 2, train reference:beam_size=2,reference=train",
    "--config",
    "auto, beam 4, train reference:beam_size=4,reference=train",
]

SUITES = {
    "tabular": Suite(
        about="anchors on Adult and Titanic (forest, boosting) against alibi and anchor-exp: "
        "time, model calls, rows, held-out and fresh precision; three row sets, every Titanic "
        "passenger, and the held-out set's own noise",
        env="peers",
        steps=[
            ["tabular.py"],
            ["tabular.py", "--rows-seed", "1", "--output", "bench/results_tabular_rows1"],
            ["tabular.py", "--reference", "validation"]
            + ["--output", "bench/results_tabular_validation"],
            ["tabular.py", "--datasets", "titanic", "--n-rows", "268", "--reps", "0"]
            + ["--budget", "1200", "--output", "bench/results_tabular_titanic_all"],
            ["heldout_bootstrap.py"],
        ],
        quick=[
            ["tabular.py", "--selftest"],
            ["tabular.py", "--quick", "--reps", "1"],
            ["heldout_bootstrap.py", "bench/results_tabular.json.gz", "--output", "{tmp}/hb"],
        ],
        reports=[
            "results_tabular",
            "results_tabular_rows1",
            "results_tabular_validation",
            "results_tabular_titanic_all",
            "results_heldout_bootstrap",
        ],
        needs=PEERS,
        minutes="40",
    ),
    "seeds": Suite(
        about="the tabular cells over ten seeds, skanchors against alibi and anchor-exp: "
        "held-out precision with intervals over seeds and held-out rows (no timing)",
        env="peers",
        steps=[["seeds.py", "--packages", "skanchors,alibi,anchor-exp"]],
        quick=[
            ["seeds.py", "--seeds", "2", "--cells", "titanic/gb", "--n-rows", "5"]
            + ["--packages", "skanchors,alibi", "--output", "{tmp}/seeds"]
        ],
        reports=["results_seeds"],
        needs=PEERS,
        minutes="11",
    ),
    "text": Suite(
        about="anchors on movie-review sentences against alibi and anchor-exp (UNK "
        "perturbations): time, rows, fresh and held-out precision",
        env="peers",
        steps=[["text.py"]],
        quick=[["text.py", "--quick", "--no-wait"]],
        reports=["results_text"],
        needs=(*PEERS, "spacy"),
        minutes="5",
        notes=["the report's masked-LM section is the mlm suite"],
    ),
    "mlm": Suite(
        about="what MaskedLMSampler costs against UnkSampler and CorpusSampler (a small "
        "random-weight BERT, nothing downloaded); a section of results_text.md",
        env="dev",
        steps=[["text.py", "--mlm", "--no-wait"]],
        quick=[["text.py", "--mlm", "--mlm-docs", "2", "--no-wait", "--output", "{tmp}/mlm"]],
        reports=["results_text"],
        needs=("torch", "transformers", "tokenizers"),
        minutes="3",
    ),
    "text-default": Suite(
        about="which text sampler is the default: UNK, deletion or corpus words on four "
        "corpora and three model kinds, judged by held-out leverage",
        env="peers",
        steps=[["text_default.py"]],
        quick=[["text_default.py", "--quick", "--cells", "0", "--n-docs", "5"]],
        reports=["results_text_default"],
        needs=("vaderSentiment",),
        minutes="17",
        notes=["the tweets and Amazon corpora come from vaderSentiment's sdist in bench/.data"],
    ),
    "paper": Suite(
        about="Table 2 of the Anchors paper on Adult (logistic regression, XGBoost, MLP), "
        "skanchors' configurations against the authors' code on the same rows",
        env="peers",
        steps=[
            ["paper_protocol.py", "--rows", "0", "--authors", "cached", "--skanchors-cache"]
            + PAPER_CONFIGS
        ],
        quick=[
            ["paper_protocol.py", "--rows", "20", "--models", "logistic", "--authors", "cached"]
            + ["--config", "defaults:", "--output", "{tmp}/paper"]
        ],
        reports=["results_paper_protocol"],
        needs=("anchor", "xgboost"),
        minutes="60",
        notes=[
            "the authors' code runs apart, for hours, resumably: paper_protocol.py "
            "--authors-only --rows 0 --models logistic (its rows are committed)"
        ],
    ),
    "global": Suite(
        about="GlobalAnchorAggregator: naive aggregation against each optimisation, on TF-IDF "
        "and a small BERT (SMS, movie reviews): time, rows, AOPC@20, anytime curves",
        env="dev",
        steps=[["global.py"], ["global.py", "--filtering"]],
        quick=[["global.py", "--output", "{tmp}/global", "--models", "tfidf", "40", "40"]],
        reports=["results_global"],
        needs=("torch", "transformers", "tokenizers", "matplotlib"),
        minutes="50",
    ),
    "lime-global": Suite(
        about="global top words from LIME weights against those from anchors (SMS, TF-IDF): "
        "time, rows, AOPC@20",
        env="dev",
        steps=[["lime_vs_anchor.py"]],
        quick=[["lime_vs_anchor.py", "100", "{tmp}/lime_vs_anchor"]],
        reports=["results_lime_vs_anchor"],
        minutes="4",
    ),
    "lime-sampling": Suite(
        about="LimeExplainer's sampling (independent columns or whole rows) against the lime "
        "package: fidelity to known coefficients, and a scaffolded model",
        env="peers",
        steps=[["lime_sampling.py"]],
        quick=[["lime_sampling.py", "--n-rows", "3", "--output", "{tmp}/lime_sampling"]],
        reports=["results_lime_sampling"],
        needs=("lime",),
        minutes="1",
    ),
    "images": Suite(
        about="anchors and LIME on images (superpixels) against alibi AnchorImage and lime "
        "LimeImageExplainer on the same model, images and segmentation: time, model calls, "
        "images predicted, fresh precision",
        env="peers",
        steps=[["images.py"]],
        quick=[["images.py", "--quick", "--output", "{tmp}/images"]],
        reports=["results_images"],
        needs=("alibi", "lime", "skimage"),
        minutes="3",
    ),
    "models": Suite(
        about="skanchors given a scikit-learn model itself against given its predict_proba: "
        "the model adapters' speed-up, same anchors",
        env="dev",
        steps=[["models.py"]],
        quick=[["models.py", "--output", "{tmp}/models"]],
        reports=["results_models"],
        minutes="1",
    ),
    "compare": Suite(
        about="compare_models on the shipped data with planted leaks (SMS spam, Titanic) and "
        "on Adult: what a two-model comparison costs and what it finds",
        env="dev",
        steps=[["compare.py"]],
        quick=[
            ["compare.py", "--cells", "titanic-replace", "--reps", "1", "--output"]
            + ["{tmp}/compare"]
        ],
        reports=["results_compare"],
        minutes="3",
    ),
    "regression": Suite(
        about="regression anchors: quartile, decile and tree bins on bike-sharing and diabetes "
        "data, and the defaults at the final search",
        env="dev",
        steps=[
            ["regression.py", "--seeds", "0,1,2"],
            ["regression.py", "--settings", "old,new", "--seeds", "0,1,2", "--cells"]
            + ["bike/hgb,bike/gb,bike/rf,bike/mlp,diabetes/hgb,diabetes/rf"]
            + ["--output", "bench/results_regression_defaults"],
        ],
        quick=[
            ["regression.py", "--rows", "5", "--cells", "bike/hgb", "--settings", "old,new"]
            + ["--bikes", "3000", "--no-classifiers", "--output", "{tmp}/regression"]
        ],
        reports=["results_regression", "results_regression_defaults"],
        minutes="30",
    ),
    "memory": Suite(
        about=f"peak memory of hard searches (a 1,069-word document, 1,000 features, a "
        f"million reference rows) against {MEMORY_BASE}",
        env="dev",
        steps=[["memory.py", MEMORY_BASE]],
        quick=[["memory.py", "HEAD", "--cases", "a million rows", "--output", "{tmp}/memory"]],
        reports=["results_memory"],
        minutes="6",
    ),
    "checkpoint": Suite(
        about="a global aggregator's checkpoint: save and load time of the data format "
        "against the pickle",
        env="dev",
        steps=[["checkpoint.py"]],
        quick=[
            ["checkpoint.py", "--repeats", "3", "--words", "1000"]
            + ["--output", "{tmp}/checkpoint"]
        ],
        reports=["results_checkpoint"],
        minutes="2",
    ),
    "faults": Suite(
        about=f"what issue 44's smaller fixes cost (shared calls' counts, BatchSAR, the refit "
        f"check), against the code at {FAULTS_BASE}",
        env="dev",
        steps=[["faults.py", "--before", "{before:" + FAULTS_BASE + "}"]],
        quick=[["faults.py", "--repeats", "1", "--output", "{tmp}/faults"]],
        reports=["results_faults"],
        minutes="15",
    ),
    "long-documents": Suite(
        about=f"time and memory to explain and aggregate documents of 1k, 10k and 100k "
        f"words, against {LONG_BASE}",
        env="dev",
        steps=[["long_documents.py", LONG_BASE, "--timeout", "900"]],
        quick=[
            ["long_documents.py", "HEAD", "--sizes", "1000", "--cases", "0"]
            + ["--output", "{tmp}/long"]
        ],
        reports=["results_long_documents"],
        minutes="50",
    ),
    "redesign": Suite(
        about=f"the redesign of issue 45 against the code before it ({REDESIGN_BASE}): CPU "
        "seconds interleaved, rows and calls, same anchors; tables (the model given as itself "
        "and as predict_proba) and text",
        env="dev",
        steps=[
            ["revisions.py", REDESIGN_BASE, "--cells", REDESIGN_CELLS, "--given", "estimator"]
            + ["--reps", "5", "--output", "bench/results_redesign_estimator"],
            ["revisions.py", REDESIGN_BASE, "--cells", REDESIGN_CELLS, "--reps", "5"]
            + ["--output", "bench/results_redesign_proba"],
        ],
        quick=[
            ["revisions.py", "HEAD", "--cells", "titanic/gb,movies/lr", "--n-rows", "3"]
            + ["--reps", "1", "--output", "{tmp}/redesign"],
        ],
        reports=["results_redesign_estimator", "results_redesign_proba"],
        minutes="3",
    ),
    "honesty": Suite(
        about=f"what validating on samples drawn after the choice costs, text and tables, "
        f"against {HONESTY_BASE}",
        env="dev",
        steps=[
            ["honesty.py", HONESTY_BASE, "--output", "bench/results_honesty_text"],
            ["revisions.py", HONESTY_BASE, "--cells", "adult/rf,adult/gb,titanic/rf,titanic/gb"]
            + ["--given", "estimator", "--reps", "3", "--seeds", "5"]
            + ["--output", "bench/results_honesty_tabular"],
        ],
        quick=[
            ["honesty.py", "HEAD", "--seeds", "2", "--sentences", "3", "--output", "{tmp}/ht"],
            ["revisions.py", "HEAD", "--cells", "titanic/gb", "--n-rows", "3", "--reps", "1"]
            + ["--output", "{tmp}/htab"],
        ],
        reports=["results_honesty_text", "results_honesty_tabular"],
        minutes="20",
    ),
}


def environment():
    """ "peers" where the peers import (their virtualenv), else "dev"."""
    return "peers" if all(importlib.util.find_spec(m) for m in PEERS) else "dev"


def missing(suite):
    """The suite's modules this interpreter cannot import."""
    return [m for m in suite.needs if importlib.util.find_spec(m) is None]


def expand(args, tmp):
    """``args`` with ``{tmp}`` and ``{before:REV}`` (the package at REV, exported) filled."""
    out = []
    for a in args:
        if a.startswith("{before:"):
            rev = a[len("{before:") : -1]
            folder = Path(tempfile.mkdtemp(prefix=f"skanchors-{rev}-", dir=tmp))
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", rev, "skanchors"],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
            a = str(folder)
        out.append(a.replace("{tmp}", str(tmp)))
    return out


def run_steps(name, steps, tmp):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded at run time
    for var in THREADS:  # one thread: the timings compare algorithms, not thread pools
        env.setdefault(var, "1")
    for script, *args in steps:
        cmd = [sys.executable, str(HERE / script), *expand(args, tmp)]
        print(f"[{name}] {' '.join(cmd[1:])}", flush=True)
        started = time.perf_counter()
        done = subprocess.run(cmd, cwd=REPO, env=env)
        print(f"[{name}] exit {done.returncode} after {time.perf_counter() - started:.0f} s")
        if done.returncode:
            return done.returncode
    return 0


def report_date(prefix):
    """When the report was last committed, for ``list``."""
    path = HERE / f"{prefix}.md"
    if not path.exists():
        return "missing"
    done = subprocess.run(
        ["git", "-C", str(REPO), "log", "-1", "--format=%cs", "--", str(path)],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "not committed"


def show():
    for name, suite in SUITES.items():
        lacking = missing(suite)
        here = "runs here" if not lacking else "needs " + ", ".join(lacking)
        print(f"{name} ({suite.env}, ~{suite.minutes} min; {here})")
        print(f"    {suite.about}")
        reports = ", ".join(f"{p}.md (committed {report_date(p)})" for p in suite.reports)
        print(f"    reports: {reports}")
        for note in suite.notes:
            print(f"    note: {note}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="suites: " + ", ".join(SUITES) + "; 'list' describes them; several suites, or "
        "'all' (the suites of this virtualenv: peers where alibi imports, else dev), run their "
        "--quick mode one after the other",
    )
    parser.add_argument("suite", nargs="+", choices=[*SUITES, "list", "all"])
    parser.add_argument("--quick", action="store_true", help="a smoke run into a temp folder")
    args = parser.parse_args(argv)
    if args.suite == ["list"]:
        show()
        return 0
    if args.suite == ["all"]:
        here = environment()
        names = [name for name, suite in SUITES.items() if suite.env == here]
        print(f"all: the {here} suites ({', '.join(names)}); the others run in the other venv")
    else:
        names = args.suite
    if "list" in names or "all" in names:
        parser.error("'list' and 'all' come alone")
    if len(names) > 1 and (not args.quick or extra):
        parser.error("several suites run their quick mode only: give --quick and no arguments")
    tmp = Path(tempfile.mkdtemp(prefix="skanchors-bench-"))
    status = {}
    for name in names:
        suite = SUITES[name]
        lacking = missing(suite)
        if lacking:
            message = (
                f"[{name}] needs {', '.join(lacking)}, which {sys.executable} cannot import: "
                + (
                    "run it with the peers' virtualenv (bash bench/setup_peers.sh, then "
                    f"bench/.venv/bin/python bench/run.py {name})"
                    if suite.env == "peers"
                    else "run it in the project's environment (pip install -e '.[text,fast]')"
                )
            )
            if len(names) == 1:
                print(message, file=sys.stderr)
                return 2
            print(message, flush=True)
            status[name] = "skipped"
            continue
        if extra:
            steps = [[suite.steps[0][0], *extra]]
        else:
            steps = suite.quick if args.quick else suite.steps
        code = run_steps(name, steps, tmp)
        status[name] = "ok" if code == 0 else f"failed (exit {code})"
        if code and len(names) == 1:
            return code
    if args.quick:
        print(f"quick runs' files: {tmp}")
    if len(names) > 1:
        for name, state in status.items():
            print(f"{name:14s} {state}")
    return 0 if all(s in ("ok", "skipped") for s in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
