"""skanchors against itself at another git revision: CPU seconds, interleaved, in one process.

Wall-clock times on a shared 2-core machine move by +-30 % from one minute to the next, more
than most optimisations. This script loads two versions of the package side by side (``git
archive`` of each revision into a temporary folder, imported under its own name), explains the
same rows with both, alternating which goes first, and keeps the *minimum CPU time* over the
repetitions: the least disturbed run of each. Two passes per repetition:

* *cold*: a freshly fitted explainer explains the rows one at a time, as in ``tabular.py``;
* *warm*: the same explainer explains them again, so every prediction comes from its cache and
  the time is skanchors' own work alone.

It also checks that both versions return the same anchors (an optimisation should not change
them) and reports rows predicted per explanation. Run it in the development virtualenv::

    python bench/revisions.py ff919a2                 # that revision against the working tree
    python bench/revisions.py ff919a2 HEAD --reps 9   # two revisions
    python bench/revisions.py HEAD~1 --cells adult/gb,wide/gb --output bench/results_revisions
    python bench/revisions.py HEAD~5 --seeds 20   # a change of random streams: rows over seeds
    python bench/revisions.py HEAD~1 --inside _search:StratifiedArms.extreme_bound  # one step

Whole explanations move with the machine's load; the time inside one function (``--inside``,
wall seconds summed over its calls) shows a change to that function more sharply.

Cells are ``data/model`` with data ``adult``, ``titanic`` (as in ``tabular.py``), ``wide`` (a
synthetic table with 60 numeric features, to see how costs grow with the number of
predicates) or ``balance`` (a million rows of 8 normal features, 12 % positive, explained with
``balance=True``) and model ``rf`` or ``gb``; or ``movies/lr``: sentences of the shipped movie
reviews, a TF-IDF logistic regression, and the default (UNK) text sampler.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import hashlib  # noqa: E402
import importlib  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import _peers  # noqa: E402
from _common import write_json  # noqa: E402

SEED = 0


def export_version(rev, folder, name):
    """Write the package at ``rev`` (None: the working tree) to ``folder / name``."""
    target = folder / name
    if rev is None:
        shutil.copytree(REPO / "skanchors", target)
    else:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", rev, "skanchors"],
            check=True,
            capture_output=True,
        ).stdout
        unpack = folder / f"{name}-archive"
        unpack.mkdir()
        subprocess.run(["tar", "-x", "-C", str(unpack)], input=archive, check=True)
        (unpack / "skanchors").rename(target)


def load_version(rev, folder, name):
    """Import the package at ``rev`` (None: the working tree) as module ``name``."""
    export_version(rev, folder, name)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)


def describe(rev):
    if rev is None:
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "skanchors"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        head = describe("HEAD")
        return f"working tree ({head}{' + changes' if dirty else ''})"
    out = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", rev],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def prepare(name):
    if name not in ("wide", "balance"):
        # tabular.py's training split (with its default reference="train", the model's fit
        # and every explainer's reference data are the same rows)
        data = _peers.prepare(name)
        return {**data, "X_train": data["X_model"], "y_train": data["y_model"]}
    if name == "balance":
        # a million rows, 12 % of them positive, explained with balance=True
        rng = np.random.default_rng(SEED)
        X = rng.normal(size=(1_000_000, 8))
        y = (X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=len(X)) > 2.0).astype(int)
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.01, random_state=SEED)
        return {
            "X_train": X_train,
            "X_test": X_test,
            "y_train": y_train,
            "categorical": [],
            "params": {"balance": True},
        }
    X, y = make_classification(
        n_samples=4000, n_features=60, n_informative=12, n_redundant=8, random_state=SEED
    )
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=SEED)
    return {"X_train": X_train, "X_test": X_test, "y_train": y_train, "categorical": []}


def prepare_text():
    """Movie-review sentences: the model's training split and the sentences explained."""
    from skanchors.datasets import load_movie_reviews

    bunch = load_movie_reviews()
    docs, y = list(bunch.data), np.asarray(bunch.target)
    X_train, X_test, y_train, _ = train_test_split(docs, y, test_size=0.2, random_state=SEED)
    return {"X_train": X_train, "X_test": X_test, "y_train": y_train, "text": True}


def model_for(name):
    if name == "lr":
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        return make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000))
    if name == "rf":
        return RandomForestClassifier(n_estimators=100, random_state=SEED)
    if name == "gb":
        return GradientBoostingClassifier(random_state=SEED)
    raise SystemExit(f"unknown model {name!r}: use rf, gb or lr")


def explainer_params(data, beam_size, seed=SEED):
    """The benchmark's AnchorExplainer settings (as in ``tabular.py``)."""
    if data.get("text"):  # the text defaults (UNK sampler), with the benchmark's bounds
        return dict(
            threshold=_peers.THRESHOLD,
            delta=_peers.DELTA,
            epsilon=_peers.EPSILON,
            beam_size=beam_size,
            random_state=seed,
        )
    return dict(
        perturbation="replace",
        threshold=_peers.THRESHOLD,
        delta=_peers.DELTA,
        epsilon=_peers.EPSILON,
        batch_size=_peers.BATCH_SIZE,
        beam_size=beam_size,
        categorical_features=data["categorical"],
        random_state=seed,
        **data.get("params", {}),
    )


def seed_pass(module, model, data, rows_idx, beam_size, seed):
    """(rows and model calls per explanation, valid anchors) of one fit with ``seed``."""
    explainer = module.AnchorExplainer(model, **explainer_params(data, beam_size, seed)).fit(
        data["X_train"]
    )
    X = data["X_test"]
    rows = calls = valid = 0
    for i in rows_idx:
        anchor = explainer.explain(X[i : i + 1])[0]
        rows += anchor.n_rows_predicted
        calls += anchor.n_model_calls
        valid += bool(anchor.is_anchor)
    n = len(rows_idx)
    return rows / n, calls / n, valid


def time_inside(module, names, totals):
    """Wrap the functions ``names`` (``"submodule:Qualified.name"`` of ``module``) so that
    the wall seconds spent inside each add up in ``totals[name]``."""
    for name in names:
        where, _, qualname = name.partition(":")
        owner = importlib.import_module(f"{module.__name__}.{where}")
        *path, attr = qualname.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, attr)

        def timed(*args, _original=original, _name=name, **kwargs):
            t0 = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                totals[_name] += time.perf_counter() - t0

        setattr(owner, attr, timed)


def one_pass(module, model, data, rows_idx, beam_size):
    """(cold CPU s, warm CPU s, rows and model calls per explanation, anchors) of one fit."""
    explainer = module.AnchorExplainer(model, **explainer_params(data, beam_size)).fit(
        data["X_train"]
    )
    X = data["X_test"]
    anchors, rows, calls = [], 0, 0
    t0 = time.process_time()
    for i in rows_idx:
        anchor = explainer.explain(X[i : i + 1])[0]
        anchors.append(str(anchor))
        rows += anchor.n_rows_predicted
        calls += anchor.n_model_calls
    cold = time.process_time() - t0
    t0 = time.process_time()
    for i in rows_idx:
        explainer.explain(X[i : i + 1])
    warm = time.process_time() - t0
    n = len(rows_idx)
    return cold, warm, rows / n, calls / n, anchors


def run(args):
    revs = [args.base, args.new]
    folder = Path(tempfile.mkdtemp(prefix="skanchors-revisions-"))
    inside = [name for name in (args.inside or "").split(",") if name]
    totals = [dict.fromkeys(inside, 0.0), dict.fromkeys(inside, 0.0)]
    try:
        modules = [load_version(r, folder, f"skanchors_v{k}") for k, r in enumerate(revs)]
        for module, total in zip(modules, totals):
            time_inside(module, inside, total)
        labels = [describe(r) for r in revs]
        results = []
        for cell in args.cells.split(","):
            data_name, model_name = cell.split("/")
            data = prepare_text() if data_name == "movies" else prepare(data_name)
            est = model_for(model_name).fit(data["X_train"], data["y_train"])
            # the model as a function, or the estimator (whose forest or boosting stages
            # skanchors then evaluates itself)
            model = est if args.given == "estimator" else est.predict_proba
            rng = np.random.default_rng(SEED)
            rows_idx = np.sort(rng.choice(len(data["X_test"]), size=args.n_rows, replace=False))
            cold = [[], []]
            warm = [[], []]
            within = [{name: [] for name in inside}, {name: [] for name in inside}]
            rows = [None, None]
            calls = [None, None]
            anchors = [None, None]
            for rep in range(args.reps):
                order = (0, 1) if rep % 2 == 0 else (1, 0)
                for k in order:
                    for name in inside:
                        totals[k][name] = 0.0
                    c, w, r, n, a = one_pass(modules[k], model, data, rows_idx, args.beam_size)
                    for name in inside:  # cold and warm passes together
                        within[k][name].append(totals[k][name])
                    cold[k].append(c)
                    warm[k].append(w)
                    rows[k], calls[k], anchors[k] = r, n, a
            res = {
                "cell": cell,
                "cold": [min(c) for c in cold],
                "warm": [min(w) for w in warm],
                "cold_all": cold,
                "warm_all": warm,
                "rows_per_expl": rows,
                "calls_per_expl": calls,
                "same_anchors": anchors[0] == anchors[1],
                "inside": {name: [min(within[k][name]) for k in (0, 1)] for name in inside},
                "anchors_hash": [
                    hashlib.sha1("\n".join(a).encode()).hexdigest()[:10] for a in anchors
                ],
            }
            if args.seeds:
                # Revisions that change the random streams change every anchor: their rows
                # and calls differ by the seed's luck too, so compare them over many seeds.
                res["seeds"] = [
                    [
                        seed_pass(m, model, data, rows_idx, args.beam_size, s)
                        for s in range(args.seeds)
                    ]
                    for m in modules
                ]
            results.append(res)
            print(
                f"{cell:11s} cold {res['cold'][0]:.3f} -> {res['cold'][1]:.3f} s "
                f"({res['cold'][1] / res['cold'][0]:.2f}x), warm {res['warm'][0]:.3f} -> "
                f"{res['warm'][1]:.3f} s ({res['warm'][1] / res['warm'][0]:.2f}x), rows/expl "
                f"{rows[0]:.0f} -> {rows[1]:.0f}, calls/expl {calls[0]:.1f} -> {calls[1]:.1f}, "
                f"same anchors: {res['same_anchors']}",
                flush=True,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return labels, results


def report(labels, results, args, started):
    lines = [
        "# skanchors against itself: two revisions, CPU seconds, interleaved",
        "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC. Command: `python bench/revisions.py "
        f"{' '.join(sys.argv[1:])}`",
        "",
        f"Base: {labels[0]}; new: {labels[1]}. {args.n_rows} test rows per cell, explained "
        f"one per `explain` call, beam {args.beam_size}; minimum CPU seconds over "
        f"{args.reps} repetitions (the two versions alternate which runs first). *Cold*: a "
        "fresh `fit`, then the rows; *warm*: the same rows again, every prediction from the "
        "cache (skanchors' own work only). *Ratio* = new / base (below 1: faster). The "
        + (
            "explainers are given the fitted estimator (a forest's trees or boosting's stages "
            "evaluated by skanchors)."
            if args.given == "estimator"
            else "explainers are given the model's `predict_proba`."
        ),
        "",
        "| cell | cold base s | cold new s | ratio | warm base s | warm new s | ratio "
        "| rows/expl base | rows/expl new | calls/expl base | calls/expl new | same anchors |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['cell']} | {r['cold'][0]:.3f} | {r['cold'][1]:.3f} | "
            f"{r['cold'][1] / r['cold'][0]:.2f} | {r['warm'][0]:.3f} | {r['warm'][1]:.3f} | "
            f"{r['warm'][1] / r['warm'][0]:.2f} | {r['rows_per_expl'][0]:.0f} | "
            f"{r['rows_per_expl'][1]:.0f} | {r['calls_per_expl'][0]:.1f} | "
            f"{r['calls_per_expl'][1]:.1f} | {'yes' if r['same_anchors'] else 'no'} |"
        )
    timed = [r for r in results if r.get("inside")]
    if timed:
        lines += [
            "",
            "Wall seconds inside single functions (`--inside`), cold and warm passes together, "
            "minimum over the repetitions (a function's time counts the functions it calls):",
            "",
            "| cell | function | base s | new s | ratio |",
            "|---|---|---|---|---|",
        ]
        for r in timed:
            for name, (base, new) in r["inside"].items():
                ratio = f"{new / base:.2f}" if base > 0 else "–"
                lines.append(f"| {r['cell']} | `{name}` | {base:.4f} | {new:.4f} | {ratio} |")
    seeded = [r for r in results if r.get("seeds")]
    if seeded:
        n = len(seeded[0]["seeds"][0])
        lines += [
            "",
            f"Over seeds 0 to {n - 1} (`--seeds {n}`, one fit per seed and revision, no timing): "
            "mean (standard deviation) over the seeds.",
            "",
            "| cell | rows/expl base | rows/expl new | calls/expl base | calls/expl new "
            "| valid anchors base | valid anchors new |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in seeded:
            cols = []
            for j in range(3):
                for k in range(2):
                    v = np.array([run_[j] for run_ in r["seeds"][k]], dtype=float)
                    spec = ".0f" if j == 0 else ".1f" if j == 1 else ".2f"
                    cols.append(f"{v.mean():{spec}} ({v.std(ddof=1):{spec}})")
            lines.append(f"| {r['cell']} | " + " | ".join(cols) + " |")
    return "\n".join(lines) + "\n"


def comparison_parser(description, cells):
    """Arguments of a comparison of two revisions."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("base", help="git revision to compare against")
    parser.add_argument("new", nargs="?", default=None, help="git revision (default: working tree)")
    parser.add_argument("--cells", default=cells)
    parser.add_argument("--n-rows", type=int, default=20)
    parser.add_argument("--beam-size", type=int, default=1)
    parser.add_argument("--output", default=None, help="write PREFIX.md and PREFIX.json.gz")
    return parser


def main(argv=None):
    parser = comparison_parser(__doc__.splitlines()[0], "adult/gb,titanic/gb,wide/gb")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument(
        "--given",
        choices=("predict_proba", "estimator"),
        default="predict_proba",
        help="what the explainers are given: the model's predict_proba (default) or the fitted "
        "estimator, as tabular.py does (forests and boosting then take skanchors' own path)",
    )
    parser.add_argument(
        "--inside",
        default="",
        help="also time the calls of these functions, comma-separated "
        "'submodule:Qualified.name' (e.g. 'samplers.tabular:TabularInstance.stream_windows')",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=0,
        help="also compare rows, calls and valid anchors over seeds 0..N-1 (no timing)",
    )
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    started = datetime.datetime.now(datetime.timezone.utc)
    labels, results = run(args)
    text = report(labels, results, args, started)
    print(text)
    if args.output:
        Path(f"{args.output}.md").write_text(text)
        write_json(args.output, {"labels": labels, "results": results, "argv": sys.argv[1:]})


if __name__ == "__main__":
    main()
