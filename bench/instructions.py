"""skanchors against itself at another git revision: instructions executed, counted by valgrind.

Wall-clock and even CPU seconds on a shared 2-core virtual machine move by 10-30 % between
runs, which hides the 2-8 % that most optimisations of the search's own Python code gain.
The number of instructions a run executes does not move: this script runs each revision under
``valgrind --tool=callgrind`` (deterministic to about 0.2 % here) and reports the instructions of
the explanations alone, as the difference between two runs of the same process:

* *setup*: load the data and the already fitted model, import skanchors, ``fit`` the explainer;
* *cold*: the same, then explain the rows one per ``explain`` call, as in ``tabular.py``.

Instruction counts weigh every instruction alike (a cache miss costs nothing here), so they
measure work removed, not seconds; they include the model's own instructions, which an
optimisation of skanchors leaves unchanged. The anchors of both revisions are compared too.
Needs ``valgrind`` (``apt-get install valgrind``); a cell takes a few minutes (callgrind runs
programs about 50 times slower). Run it in the development virtualenv::

    python bench/instructions.py 5a346b2                # that revision against the working tree
    python bench/instructions.py 5a346b2 HEAD --output bench/results_instructions
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import concurrent.futures  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import revisions  # noqa: E402
import tabular  # noqa: E402

# What runs under valgrind: argv = pickle path, mode ("setup" or "cold").
CHILD = """
import pickle, sys, warnings
warnings.filterwarnings("ignore")
with open(sys.argv[1], "rb") as f:
    job = pickle.load(f)
import skanchors
from skanchors import AnchorExplainer
print(skanchors.__file__)
explainer = AnchorExplainer(job["model"].predict_proba, **job["params"]).fit(job["X_train"])
if sys.argv[2] == "cold":
    for row in job["rows"]:
        print(explainer.explain(row[None])[0])
"""


def export(rev, folder):
    """The package at ``rev`` (None: the working tree) as ``folder/skanchors``."""
    folder.mkdir(parents=True)
    revisions.export_version(rev, folder, "skanchors")
    return folder


def count(python, root, job, mode):
    """(instructions, stdout) of one run of CHILD under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(root), PYTHONHASHSEED="0")
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/callgrind.out",
                python,
                "-c",
                CHILD,
                str(job),
                mode,
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,  # not the repository: "python -c" would import skanchors from there
            check=True,
        )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{out.stderr[-2000:]}")
    imported, _, anchors = out.stdout.partition("\n")
    if not Path(imported).resolve().is_relative_to(Path(root).resolve()):
        raise RuntimeError(f"the run imported {imported}, not the package under {root}")
    return int(found.group(1)), anchors


def make_job(cell, n_rows, beam_size, folder):
    """Pickle the data, the fitted model and the rows of one cell (fitted outside valgrind)."""
    dname, mname = cell.split("/")
    data = revisions.prepare(dname)
    rng = np.random.default_rng(tabular.SEED)
    rows_idx = np.sort(rng.choice(len(data["X_test"]), size=n_rows, replace=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = revisions.model_for(mname).fit(data["X_train"], data["y_train"])
    job = folder / f"{dname}_{mname}.pkl"
    params = revisions.explainer_params(data, beam_size)
    with open(job, "wb") as f:
        pickle.dump(
            dict(
                model=model,
                X_train=data["X_train"],
                rows=data["X_test"][rows_idx],
                params=params,
            ),
            f,
        )
    return job


def main(argv=None):
    parser = revisions.comparison_parser(__doc__.splitlines()[0], "adult/gb,titanic/gb")
    parser.add_argument("--jobs", type=int, default=2, help="valgrind runs at a time")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind).")
    cells = [c for c in args.cells.split(",") if c]
    started = datetime.datetime.now(datetime.timezone.utc)
    # Named now, when they are exported: the runs take minutes and HEAD may move meanwhile.
    base_name, new_name = revisions.describe(args.base), revisions.describe(args.new)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        roots = {"base": export(args.base, tmp / "base"), "new": export(args.new, tmp / "new")}
        jobs = {cell: make_job(cell, args.n_rows, args.beam_size, tmp) for cell in cells}
        runs = [(c, v, m) for c in cells for v in ("base", "new") for m in ("setup", "cold")]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {
                key: pool.submit(count, sys.executable, roots[key[1]], jobs[key[0]], key[2])
                for key in runs
            }
            counted = {key: future.result() for key, future in futures.items()}
    results = []
    for cell in cells:
        work = {
            v: counted[(cell, v, "cold")][0] - counted[(cell, v, "setup")][0]
            for v in ("base", "new")
        }
        same = counted[(cell, "base", "cold")][1] == counted[(cell, "new", "cold")][1]
        results.append(
            dict(
                cell=cell,
                base=work["base"],
                new=work["new"],
                ratio=work["new"] / work["base"],
                same_anchors=same,
            )
        )
        print(
            f"{cell:11s} base {work['base'] / 1e9:.3f} G -> new {work['new'] / 1e9:.3f} G "
            f"instructions ({work['new'] / work['base']:.3f}x), same anchors: {same}",
            flush=True,
        )
    lines = [
        "# skanchors against itself: two revisions, instructions counted by valgrind",
        "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC. Command: "
        f"`python bench/instructions.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
        "",
        f"Base: {base_name}; new: {new_name}. {args.n_rows} test rows per cell, explained one "
        f"per `explain` call, beam {args.beam_size}, a freshly fitted explainer. *Instructions* "
        "= those of the explanations alone (a run that explains the rows minus one that stops "
        "after `fit`), model included. *Ratio* = new / base (below 1: less work).",
        "",
        "| cell | base instructions (G) | new instructions (G) | ratio | same anchors |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['cell']} | {r['base'] / 1e9:.3f} | {r['new'] / 1e9:.3f} | {r['ratio']:.3f} | "
            f"{'yes' if r['same_anchors'] else 'no'} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        Path(args.output + ".md").write_text(text)
        Path(args.output + ".json").write_text(
            json.dumps(dict(base=base_name, new=new_name, results=results), indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
