"""How much of the held-out precision difference is the held-out set's own sampling noise?

``tabular.py``'s precision target compares the pooled held-out precision of skanchors' valid
anchors with the fastest peer's, with a 90 % bootstrap interval over the *explained* rows. The
held-out rows the anchors are checked on (the test split, about 270 Titanic passengers) are a
sample too, and that interval holds them fixed: when every anchor of a package covers the same
one mispredicted-looking passenger, the interval cannot show that one passenger more or fewer
in the held-out set would move the difference.

This script reads a committed ``results_tabular*.json.gz``, rebuilds each anchor's held-out mask
from its printed rule (and checks that the rebuilt masks give exactly the precision and
coverage the run recorded), and reports three intervals for skanchors (beam 1) against the
fastest peer by median, as the target table picks it:

- rows: the explained rows resampled, the held-out rows fixed (``tabular.py``'s interval; the
  same resamples, so the same numbers);
- held-out: the held-out rows resampled (each drawn with its multinomial count, the same
  counts for both packages), the explained rows fixed;
- both: the two resampled together in every repetition.

It changes no target: ``tabular.py`` still decides with the first. Run it in the benchmark's
virtualenv (the models are refitted to get the held-out predictions)::

    bench/.venv/bin/python bench/heldout_bootstrap.py            # all four results files
    bench/.venv/bin/python bench/heldout_bootstrap.py bench/results_tabular.json.gz
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _peers  # noqa: E402
import tabular  # noqa: E402
from _common import prefix_of, read_json, write_json  # noqa: E402

FILES = (
    "results_tabular.json.gz",
    "results_tabular_rows1.json.gz",
    "results_tabular_validation.json.gz",
    "results_tabular_titanic_all.json.gz",
)
OURS = "skanchors (beam 1)"
REPS = 4000
LEVEL = 0.90


def masks(per_row, data, ours):
    """The held-out mask of each row's anchor, rebuilt from its printed conditions."""
    out = []
    for r in per_row:
        conditions = []
        for text in r["anchor"]:
            # skanchors prints its own bin edges to 6 significant digits: no snapping needed
            edges = None if ours else data["edges"]
            conditions += _peers.parse_predicate(
                text, data["feature_names"], data["categorical_names"], edges
            )
        out.append(_peers.rule_mask(conditions, data["X_test"]))
    return out


def hits_and_covers(per_row, rule_masks, test_pred):
    """Per explained row: which held-out rows its valid anchor covers (0/1) and, of those,
    which the model predicts as the explained row's class; zeros for rows without a valid
    anchor. The explained row itself is not held out. Checks the run's recorded numbers."""
    n = len(test_pred)
    cover = np.zeros((len(per_row), n))
    hit = np.zeros((len(per_row), n))
    for k, (r, mask) in enumerate(zip(per_row, rule_masks)):
        i = r["test_index"]
        others = np.ones(n, dtype=bool)
        others[i] = False
        label = test_pred[i]
        m = mask & others
        coverage = m.sum() / others.sum()
        precision = (test_pred[m] == label).mean() if m.any() else math.nan
        recorded_p = r["heldout_precision"]
        recorded_p = math.nan if recorded_p is None else recorded_p
        recorded_c = r["heldout_coverage"]
        same = np.isclose(precision, recorded_p, rtol=0, atol=1e-12, equal_nan=True)
        if not (same and abs(coverage - recorded_c) < 1e-12):
            raise AssertionError(
                f"row {i}: rebuilt held-out precision/coverage {precision}/{coverage} "
                f"!= recorded {recorded_p}/{recorded_c} for {r['anchor']}"
            )
        if r["valid"] and m.any():  # a valid anchor that covers some held-out row
            cover[k] = m
            hit[k] = m & (test_pred == label)
    return cover, hit


def intervals(ours, peer, reps=REPS, level=LEVEL, seed=0):
    """Point difference of pooled precision and its intervals (rows, held-out, both)."""
    (c1, h1), (c2, h2) = ours, peer
    n_rows, n_held = c1.shape
    point = h1.sum() / c1.sum() - h2.sum() / c2.sum()
    tail = (1.0 - level) / 2.0

    def quantiles(boot):
        boot = boot[np.isfinite(boot)]
        return float(np.quantile(boot, tail)), float(np.quantile(boot, 1.0 - tail))

    # rows: as tabular.pooled_difference, with its generator, so the same resamples
    per_row = [(c.sum(1), h.sum(1)) for c, h in ((c1, h1), (c2, h2))]
    idx = np.random.default_rng(seed).integers(0, n_rows, size=(reps, n_rows))
    with np.errstate(invalid="ignore", divide="ignore"):
        (a1, b1), (a2, b2) = per_row
        rows = b1[idx].sum(1) / a1[idx].sum(1) - b2[idx].sum(1) / a2[idx].sum(1)
    rng = np.random.default_rng([seed, 1])
    weights = rng.multinomial(n_held, np.full(n_held, 1.0 / n_held), size=reps).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        held = (h1.sum(0) @ weights.T) / (c1.sum(0) @ weights.T) - (h2.sum(0) @ weights.T) / (
            c2.sum(0) @ weights.T
        )
    rng = np.random.default_rng([seed, 2])
    both = np.empty(reps)
    for b in range(reps):
        take = rng.integers(0, n_rows, size=n_rows)
        w = rng.multinomial(n_held, np.full(n_held, 1.0 / n_held)).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            both[b] = (h1[take] @ w).sum() / (c1[take] @ w).sum() - (h2[take] @ w).sum() / (
                c2[take] @ w
            ).sum()
    return float(point), quantiles(rows), quantiles(held), quantiles(both)


def analyse(path):
    report = read_json(path)
    reference = report["settings"].get("reference", "train")
    lines = []
    for cell in report["results"]:
        done = {tabular.label(r): r for r in cell["packages"] if r.get("rows_done")}
        ours = done.get(OURS)
        peers = [r for r in cell["packages"] if not tabular._ours(r["package"])]
        peers = [r for r in peers if r.get("rows_done")]
        if ours is None or not peers:
            continue
        peer = min(peers, key=lambda r: r["median_seconds"])
        data = _peers.prepare(cell["data"], reference=reference)
        # the models of tabular.py's run, refitted the same way
        model = (
            RandomForestClassifier(n_estimators=100, random_state=_peers.SEED)
            if cell["model"] == "rf"
            else GradientBoostingClassifier(random_state=_peers.SEED)
        ).fit(data["X_model"], data["y_model"])
        test_pred = model.predict(data["X_test"])
        keys = sorted(
            {r["test_index"] for r in ours["per_row"]} & {r["test_index"] for r in peer["per_row"]}
        )
        pick = [[r for r in p["per_row"] if r["test_index"] in keys] for p in (ours, peer)]
        for p in pick:
            p.sort(key=lambda r: r["test_index"])
        arrays = [
            hits_and_covers(rows, masks(rows, data, k == 0), test_pred)
            for k, rows in enumerate(pick)
        ]
        point, rows_ci, held_ci, both_ci = intervals(*arrays)
        check = tabular.pooled_difference(pick[0], pick[1])
        if (
            abs(check[0] - point) > 1e-12
            or max(abs(check[1] - rows_ci[0]), abs(check[2] - rows_ci[1])) > 1e-12
        ):
            raise AssertionError(f"{cell['data']}/{cell['model']}: {check} != {point} {rows_ci}")
        # the held-out rows that made the difference: covered by our valid anchors and
        # predicted otherwise than the explained row, and how many of our anchors each
        (c1, h1), (c2, h2) = arrays
        misses = (c1 - h1).sum(0)
        peer_misses = (c2 - h2).sum(0)
        lines.append(
            {
                "cell": f"{cell['data']} / {cell['model']}",
                "peer": tabular.label(peer),
                "difference": point,
                "rows": rows_ci,
                "held_out": held_ci,
                "both": both_ci,
                "held_out_rows": int(c1.shape[1]),
                "our_misses": {int(j): int(v) for j, v in enumerate(misses) if v},
                "peer_misses": {int(j): int(v) for j, v in enumerate(peer_misses) if v},
            }
        )
    settings = report["settings"]
    source = f"{settings['date'][:16].replace('T', ' ')} UTC, skanchors " + settings[
        "versions"
    ].get("skanchors commit", "?")
    return reference, settings.get("rows_seed", 0), source, lines


def _ci(ci):
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"


def _misses(misses):
    total, rows = sum(misses.values()), len(misses)
    if not rows:
        return "none"
    text = f"{total} on {rows} row{'s' if rows > 1 else ''}"
    if rows <= 4:
        text += " (" + ", ".join(f"{j}: {v}" for j, v in misses.items()) + ")"
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="results JSON files (default: the four runs)")
    ap.add_argument("--output", default=str(HERE / "results_heldout_bootstrap"))
    args = ap.parse_args(argv)
    files = args.files or [str(HERE / f) for f in FILES]
    out = []
    for f in files:
        reference, rows_seed, source, lines = analyse(f)
        out.append(
            {
                "file": Path(f).name,
                "run": source,
                "reference": reference,
                "rows_seed": rows_seed,
                "cells": lines,
            }
        )
    md = [
        "# Held-out precision difference: how much is the held-out set's sampling noise",
        "",
        f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Command: "
        f"`python bench/heldout_bootstrap.py`",
        "",
        "Runs read: " + "; ".join(f"`{run['file']}` ({run['run']})" for run in out) + ".",
        "",
        "skanchors (beam 1) against the fastest peer by median, as `tabular.py`'s target table "
        "picks it: pooled held-out precision of each package's valid anchors, ours minus the "
        f"peer's, with {LEVEL:.0%} bootstrap intervals ({REPS} repetitions) that resample the "
        "explained rows (the target's interval, held-out rows fixed), the held-out rows "
        "(explained rows fixed), or both. *misses*: held-out rows covered by a valid anchor "
        "on which the model predicts another class than for the explained row, counted once "
        "per anchor that covers them: misses on so many distinct held-out rows (where few, "
        "each row's index in the test split: its count).",
        "",
        "| run | cell | peer | difference | explained rows resampled | held-out rows "
        "resampled | both | our misses | peer's misses |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in out:
        name = prefix_of(run["file"]).replace("results_", "")
        for c in run["cells"]:
            md.append(
                f"| {name} | {c['cell']} | {c['peer']} | {c['difference']:+.3f} | "
                f"{_ci(c['rows'])} | {_ci(c['held_out'])} | {_ci(c['both'])} | "
                f"{_misses(c['our_misses'])} | {_misses(c['peer_misses'])} |"
            )
    md.append("")
    Path(args.output + ".md").write_text("\n".join(md))
    write_json(args.output, out)
    print("\n".join(md))


if __name__ == "__main__":
    main()
