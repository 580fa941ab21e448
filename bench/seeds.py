"""Anchors over many random seeds: skanchors (beam 1) against its peers, held-out precision.

``tabular.py`` runs every package once, with seed 0, and judges held-out precision with a
bootstrap over the 20 explained rows. That interval treats the rows as independent, and with
skanchors they are not: the searches of all rows read the same perturbation streams (see the
user guide, "Sharing samples across rows"), so one seed's luck moves every row's anchor at
once. This script explains the same rows with seeds ``0 .. n-1`` (a fresh explainer per seed
and package; ``random_state`` for skanchors, alibi's ``seed``, and numpy's global seed for
alibi and anchor-exp) and reports, per data set and model:

* the valid anchors (of the rows explained) and the rows predicted per explanation;
* the pooled held-out precision of the valid anchors: the rule applied to the other test rows,
  covered rows where the model predicts the explained row's class over all covered rows;
* how many valid anchors reach ``threshold - 0.05``, and ``threshold`` itself, on 2,000 fresh
  draws of the distribution their package searched on (``tabular.py``'s own sampler, the
  same draws for the same rule);
* ours minus each peer's pooled held-out precision: mean over seeds and a 90 % t-interval
  with the seeds as replicates (paired by seed), and a 90 % bootstrap interval that resamples
  the held-out rows as well as the seeds (the held-out rows are a sample too: one row that
  every seed's anchors cover and the model predicts the other way weighs on every seed
  alike), with the share of our misses on the held-out row we miss most.

No timing: run it anywhere. Needs the benchmark's virtualenv (``bench/setup_peers.sh``)::

    bench/.venv/bin/python bench/seeds.py                   # 4 cells x 10 seeds, ~10 min
    bench/.venv/bin/python bench/seeds.py --seeds 3 --cells titanic/gb
    bench/.venv/bin/python bench/seeds.py --packages skanchors,alibi,anchor-exp
    bench/.venv/bin/python bench/seeds.py --bounds all --output bench/results_seeds_bounds
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _peers as T  # noqa: E402
from _common import versions, write_json  # noqa: E402

PACKAGES = ("skanchors", "alibi", "anchor-exp")
# The distribution each package searches on (anchor-exp: the authors' replacement, as ours).
OWN = {"skanchors": "replace", "alibi": "joint", "anchor-exp": "replace"}
# per-seed keys too large to keep in the results file (see main)
SPARSE = ("covered_rows", "cover_counts", "right_counts")


def conditions_of(package, anchor, data):
    if package == "skanchors":
        return T.skanchors_conditions(anchor)
    conditions = []
    for name in anchor.names:
        conditions += T.parse_predicate(
            name, data["feature_names"], data["categorical_names"], data["edges"]
        )
    return conditions


def run(package, seed, data, model, test_pred, rows_idx, options=None):
    counter = T.CountingModel(model)
    if package == "skanchors":
        explain, _ = T.make_skanchors(data, counter, 1, seed=seed, **(options or {}))
    elif package == "alibi":
        explain, _ = T.make_alibi(data, counter, None, seed=seed)
    else:  # anchor-exp draws from numpy's global generator, seeded below
        explain, _ = T.make_anchor_exp(data, counter, None)
    X_test = data["X_test"]
    valid = rows = covered = correct = holds = reaches = 0
    # per held-out row: how many valid anchors cover it, and of those how many are right
    cover_count = np.zeros(len(X_test), dtype=np.int64)
    right_count = np.zeros(len(X_test), dtype=np.int64)
    for i in rows_idx:
        np.random.seed(seed)  # noqa: NPY002 -- the peers draw from numpy's global RNG
        counter.reset()
        anchor = explain(X_test[i].copy())
        rows += counter.rows
        is_valid = bool(anchor.is_anchor if package == "skanchors" else anchor.valid)
        if not is_valid:
            continue
        valid += 1
        label = test_pred[i]
        conditions = conditions_of(package, anchor, data)
        mask = T.rule_mask(conditions, X_test)
        mask[i] = False
        covered += int(mask.sum())
        correct += int((test_pred[mask] == label).sum())
        cover_count += mask
        right_count += mask & (test_pred == label)
        fresh = T.fresh_precision(conditions, data, model.predict, label, int(i))[OWN[package]]
        holds += int(fresh >= T.THRESHOLD - 0.05)
        reaches += int(fresh >= T.THRESHOLD)
    return {
        "seed": seed,
        "valid": valid,
        "rows_per_explanation": rows / len(rows_idx),
        "heldout_pooled": correct / covered if covered else math.nan,
        "heldout_covered": covered,
        "hold_on_own": holds,
        "reach_threshold_on_own": reaches,
        # sparse: the held-out rows some valid anchor covers, with both counts
        "covered_rows": np.flatnonzero(cover_count).tolist(),
        "cover_counts": cover_count[cover_count > 0].tolist(),
        "right_counts": right_count[cover_count > 0].tolist(),
    }


def summary(values, spec=".3f"):
    v = np.asarray(values, dtype=float)
    return f"{v.mean():{spec}} [{v.min():{spec}}, {v.max():{spec}}]"


def difference(ours, peer, level=0.90):
    d = np.asarray(ours, dtype=float) - np.asarray(peer, dtype=float)
    d = d[np.isfinite(d)]
    half = stats.t.ppf(0.5 + level / 2, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def _dense_counts(runs, n_test):
    """(seeds, held-out rows) arrays of the covers and right predictions of ``runs``."""
    cover = np.zeros((len(runs), n_test))
    right = np.zeros((len(runs), n_test))
    for k, r in enumerate(runs):
        cover[k, r["covered_rows"]] = r["cover_counts"]
        right[k, r["covered_rows"]] = r["right_counts"]
    return cover, right


def heldout_difference(ours, peer, n_test, reps=4000, level=0.90, seed=0):
    """A ``level`` bootstrap interval of the mean over seeds of ours minus the peer's pooled
    held-out precision (the mean is :func:`difference`'s), resampling the seeds (paired) and
    the held-out rows (each drawn with its multinomial count, the same counts for both
    packages and every seed); and our most-missed held-out row with its share of our misses
    (covered rows predicted otherwise)."""
    (c1, r1), (c2, r2) = _dense_counts(ours, n_test), _dense_counts(peer, n_test)
    rng = np.random.default_rng(seed)
    n_seeds = c1.shape[0]
    boot = np.empty(reps)
    for b in range(reps):
        take = rng.integers(0, n_seeds, size=n_seeds)
        w = rng.multinomial(n_test, np.full(n_test, 1.0 / n_test)).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            d = (r1[take] @ w) / (c1[take] @ w) - (r2[take] @ w) / (c2[take] @ w)
        boot[b] = np.nanmean(d) if np.isfinite(d).any() else np.nan
    boot = boot[np.isfinite(boot)]
    tail = (1.0 - level) / 2.0
    misses = (c1 - r1).sum(0)
    top = int(np.argmax(misses))
    share = float(misses[top] / misses.sum()) if misses.sum() else math.nan
    return (
        float(np.quantile(boot, tail)),
        float(np.quantile(boot, 1.0 - tail)),
        top,
        share,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--cells", default="adult/rf,adult/gb,titanic/rf,titanic/gb")
    parser.add_argument("--n-rows", type=int, default=20)
    parser.add_argument(
        "--packages",
        default="skanchors,alibi",
        help=f"comma-separated, skanchors first; from {', '.join(PACKAGES)}",
    )
    parser.add_argument(
        "--bounds",
        choices=("bin", "interval", "all"),
        default="interval",
        help="skanchors' bounds parameter",
    )
    parser.add_argument("--output", default=str(HERE / "results_seeds"))
    args = parser.parse_args(argv)
    options = {"bounds": args.bounds}
    packages = args.packages.split(",")
    if packages[0] != "skanchors" or not set(packages) <= set(PACKAGES):
        parser.error(f"--packages must start with skanchors and name some of {PACKAGES}")
    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    results, n_test = {}, {}
    for cell in args.cells.split(","):
        name, kind = cell.split("/")
        data = T.prepare(name)
        rows_idx = np.sort(
            np.random.default_rng(T.SEED).choice(len(data["X_test"]), args.n_rows, replace=False)
        )
        model = (
            RandomForestClassifier(n_estimators=100, random_state=T.SEED)
            if kind == "rf"
            else GradientBoostingClassifier(random_state=T.SEED)
        ).fit(data["X_model"], data["y_model"])
        test_pred = model.predict(data["X_test"])
        n_test[cell] = len(data["X_test"])
        results[cell] = {
            package: [
                run(package, seed, data, model, test_pred, rows_idx, options)
                for seed in range(args.seeds)
            ]
            for package in packages
        }
        print(cell, {p: [r["valid"] for r in v] for p, v in results[cell].items()}, flush=True)
    elapsed = time.perf_counter() - started

    lines = [
        f"# Anchors over many seeds: skanchors (beam 1, bounds={args.bounds}) against "
        f"{', '.join(packages[1:])} (default beams)",
        "",
        f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"{elapsed / 60:.1f} min. Command: `python bench/seeds.py "
        f"{' '.join(argv if argv is not None else sys.argv[1:])}`",
        "",
        f"The same {args.n_rows} test rows per cell as `tabular.py` (its row set 0), explained "
        f"one per call with seeds 0 to {args.seeds - 1}; threshold {T.THRESHOLD}, delta "
        f"{T.DELTA}, epsilon {T.EPSILON}, batch size {T.BATCH_SIZE}. Each cell: mean over the "
        "seeds [smallest, largest].",
        "",
        "| data / model | package | valid anchors | rows per explanation | pooled held-out "
        "precision of valid anchors | valid anchors holding on their own distribution "
        "(>= threshold - 0.05) | ... reaching the threshold there |",
        "|---|---|---|---|---|---|---|",
    ]
    diffs = []
    for cell, per in results.items():
        for package, runs in per.items():
            lines.append(
                f"| {cell} | {package} | {summary([r['valid'] for r in runs], '.1f')} | "
                f"{summary([r['rows_per_explanation'] for r in runs], '.0f')} | "
                f"{summary([r['heldout_pooled'] for r in runs])} | "
                f"{summary([r['hold_on_own'] for r in runs], '.1f')} | "
                f"{summary([r['reach_threshold_on_own'] for r in runs], '.1f')} |"
            )
        for peer in packages[1:]:
            mean, lo, hi = difference(
                [r["heldout_pooled"] for r in per["skanchors"]],
                [r["heldout_pooled"] for r in per[peer]],
            )
            rows = np.mean([r["rows_per_explanation"] for r in per["skanchors"]]) / np.mean(
                [r["rows_per_explanation"] for r in per[peer]]
            )
            seed0 = per["skanchors"][0]["heldout_pooled"] - per[peer][0]["heldout_pooled"]
            b_lo, b_hi, top, share = heldout_difference(per["skanchors"], per[peer], n_test[cell])
            diffs.append(
                f"| {cell} | {peer} | {mean:+.4f} [{lo:+.4f}, {hi:+.4f}] | "
                f"[{b_lo:+.4f}, {b_hi:+.4f}] | {share:.2f} (row {top}) | {seed0:+.4f} "
                f"| {rows:.2f} |"
            )
    lines += [
        "",
        "Held-out precision, ours minus the peer's (pooled over each package's valid anchors; "
        "90 % t-interval over the seeds; 90 % bootstrap interval resampling the seeds and the "
        "held-out rows, 4,000 repetitions), the share of our misses (held-out rows our valid "
        "anchors cover where the model predicts another class, counted per anchor) on the "
        "held-out row we miss most (its index in the test split), and the rows skanchors "
        "predicts per explanation over the peer's (means over the seeds):",
        "",
        "| data / model | peer | difference, all seeds | seeds and held-out rows resampled | "
        "our misses on one row | seed 0 alone | rows / peer's |",
        "|---|---|---|---|---|---|---|",
        *diffs,
        "",
        f"Versions: {json.dumps(versions())}",
        "",
    ]
    Path(args.output + ".md").write_text("\n".join(lines))
    # the per-seed figures; the sparse per-held-out-row counts (tens of MB on Adult) only
    # feed the bootstrap above and are not kept
    write_json(
        args.output,
        {
            cell: {
                p: [{k: v for k, v in r.items() if k not in SPARSE} for r in runs]
                for p, runs in per.items()
            }
            for cell, per in results.items()
        },
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
