"""Wide all-numeric tables: decoding perturbations as one block against column by column.

A DataFrame of one numpy dtype is built from one gathered 2-d array (``_BLOCK_DECODE``, the
default) instead of one column at a time; both ways run interleaved in this one process on
the same rows, and must give the same anchors. Writes ``bench/results_wide.md``.

    python bench/wide.py
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

import skanchors.samplers.tabular as tabular
from skanchors import AnchorExplainer

HERE = os.path.dirname(os.path.abspath(__file__))
N_ROWS, N_EXPLAINED, REPS = 5000, 6, 3


def run(n_features):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        rng.normal(size=(N_ROWS, n_features)), columns=[f"f{i}" for i in range(n_features)]
    )
    y = (X["f0"] + 0.5 * X["f1"] > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    rows = X.iloc[:N_EXPLAINED]
    best, anchors = {}, {}
    for _ in range(REPS):
        for block in (True, False):
            tabular._BLOCK_DECODE = block
            explainer = AnchorExplainer(
                model, max_anchor_size=3, perturbation="replace", beam_size=2, random_state=0
            ).fit(X)
            start = time.perf_counter()
            found = explainer.explain(rows)
            seconds = (time.perf_counter() - start) / len(rows)
            best[block] = min(best.get(block, np.inf), seconds)
            anchors.setdefault(block, [str(a) for a in found])
    tabular._BLOCK_DECODE = True
    assert anchors[True] == anchors[False], "the two decodings gave other anchors"
    return best[True], best[False]


def main():
    lines = [
        "# Wide numeric tables: one block against column by column",
        "",
        f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs.",
        "",
        "Command: `python bench/wide.py`",
        "",
        f"LogisticRegression on {N_ROWS:,} rows of normal features, {N_EXPLAINED} rows "
        f"explained (`max_anchor_size=3`, random_state 0), the best of {REPS} interleaved "
        "repetitions; the anchors are the same both ways.",
        "",
        "| features | one block, ms/row | column by column, ms/row | speed-up |",
        "|---|---|---|---|",
    ]
    for d in (50, 200, 500):
        block, columns = run(d)
        lines.append(f"| {d} | {block * 1e3:.0f} | {columns * 1e3:.0f} | {columns / block:.2f}x |")
        print(lines[-1], flush=True)
    with open(os.path.join(HERE, "results_wide.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
