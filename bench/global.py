"""Benchmark of GlobalAnchorAggregator: naive global aggregation vs the seed's optimisations.

Run with ``python bench/global.py`` (about 5 minutes on 2 cores). For SMS spam and movie-review
polarity (the shipped data), a TF-IDF + logistic regression model is trained on 70 % of the
texts and the aggregation runs on a subset of the held-out 30 %. Configurations (all ``pr``,
k = 20, UNK perturbations, random_state 0):

- naive: every token of every document tested by the full per-token anchor test (own samples
  for every token, no pool, no filtering, no stop-word / rare-word filter, delta 0.1);
- each optimisation alone, then all of them together.

Every configuration processes batches of 100 documents; within a batch the model sees one call
per sampling round for all documents together. Wall time is that of ``fit`` (ordering the
documents included) minus the time the benchmark's own callback spends recording the anytime
curve.

All top-20 lists are ranked with the same presentation filter (no stop words, >= 5
occurrences), so AOPC@20 compares like with like. Writes ``bench/results_global.md``,
``bench/results_global.json`` and ``bench/results_global.png`` (anytime curves).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
K = 20
NAIVE = dict(
    shared_pool=False,
    candidate_filtering=False,
    adaptive_threshold=False,
    stop_words=None,
    min_count=1,
    delta=0.1,
    sample_size=100,
    batch_size=100,
)
CONFIGS = {
    "naive": {},
    "shared pool": dict(shared_pool=True),
    "candidate filtering": dict(candidate_filtering=True),
    "adaptive threshold": dict(adaptive_threshold=True),
    "stop + rare words": dict(stop_words="english", min_count=5),
    "delta 0.3, 32 samples": dict(delta=0.3, sample_size=32),
    "all": dict(
        shared_pool=True,
        candidate_filtering=True,
        adaptive_threshold=True,
        stop_words="english",
        min_count=5,
        delta=0.3,
        sample_size=32,
    ),
}


def load(name, n_docs):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    from skanchors.datasets import load_movie_reviews, load_sms_spam

    loader = load_sms_spam if name == "sms" else load_movie_reviews
    X, y = loader(return_X_y=True)
    tr, te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    model = make_pipeline(TfidfVectorizer(min_df=2), LogisticRegression(C=10, max_iter=1000))
    model.fit(list(tr), y_tr)
    acc = model.score(list(te), y_te)
    rng = np.random.default_rng(0)
    docs = [te[i] for i in np.sort(rng.choice(len(te), size=n_docs, replace=False))]
    return model, docs, acc


def presented(agg, top=None, aggregation="pr", min_count=5):
    """Top-k of an aggregation with the common presentation filter (no stop words, >= 5)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    scores = agg.compute_scores(aggregation)
    n = (agg.positive_counts_ + agg.negative_counts_ + agg.untested_counts_).sum(axis=1)
    keep = [w not in ENGLISH_STOP_WORDS for w in scores.index]
    keep = np.array(keep) & (n.to_numpy() >= min_count)
    out = {}
    for c in scores.columns:
        col = scores[c][keep].dropna()
        if aggregation in ("pr", "sq", "av", "h"):
            col = col[agg.positive_counts_[c][keep].reindex(col.index) > 0]
        ranked = sorted(col.items(), key=lambda kv: (-kv[1], kv[0]))[:K]
        out[c] = [(w, float(s)) for w, s in ranked]
    return out


def run(name, n_docs):
    from skanchors.aggregation import GlobalAnchorAggregator
    from skanchors.metrics import aopc_k_per_class

    model, docs, acc = load(name, n_docs)
    print(f"\n== {name}: {n_docs} documents, model accuracy {acc:.3f}", flush=True)
    rows, curves, orders = [], {}, {}
    naive_top = None
    for label, change in CONFIGS.items():
        snapshots = []
        spent = [0.0]  # seconds in the recording callback (benchmark instrumentation)

        def record(agg, snapshots=snapshots, spent=spent):
            t0 = time.perf_counter()
            t = agg.elapsed_time_
            snapshots.append((t, {c: list(v) for c, v in presented(agg).items()}))
            spent[0] += time.perf_counter() - t0

        params = {**NAIVE, **change}
        agg = GlobalAnchorAggregator(model, k=K, random_state=0, callback=record, **params)
        start = time.perf_counter()
        agg.fit(docs)
        wall = time.perf_counter() - start - spent[0]
        top = presented(agg)
        aopc = aopc_k_per_class(model, docs, top, K)
        if label == "naive":
            naive_top, naive = top, dict(wall=wall, aopc=aopc)
            for g in ("pr", "sq", "h", "av", "av+5", "base", "inverse_pr"):
                tt = presented(agg, aggregation=g.replace("+5", ""), min_count=5)
                if g == "av":  # plain G_av: rare words allowed
                    tt = presented(agg, aggregation="av", min_count=1)
                orders[g] = {str(c): v for c, v in aopc_k_per_class(model, docs, tt, K).items()}
        overlap = {
            str(c): len({w for w, _ in top[c]} & {w for w, _ in naive_top[c]}) / K for c in top
        }
        row = dict(
            config=label,
            wall_time=wall,
            speedup=naive["wall"] / wall,
            rows_predicted=int(agg.n_rows_predicted_),
            model_calls=int(agg.n_model_calls_),
            tokens_tested=int(agg.n_tokens_tested_),
            aopc={str(c): v for c, v in aopc.items()},
            aopc_ratio={
                str(c): v / naive["aopc"][c] if naive["aopc"][c] else float("nan")
                for c, v in aopc.items()
            },
            overlap=overlap,
            top10={str(c): [w for w, _ in v[:10]] for c, v in top.items()},
        )
        rows.append(row)
        curves[label] = [
            (t, float(np.mean(list(aopc_k_per_class(model, docs, tt, K).values()))))
            for t, tt in snapshots
        ]
        print(
            f"{label:24s} {wall:7.1f} s  x{row['speedup']:5.1f}  rows {row['rows_predicted']:8d}"
            f"  AOPC {', '.join(f'{c}={v:.4f}' for c, v in row['aopc'].items())}"
            f"  overlap {', '.join(f'{c}={v:.2f}' for c, v in overlap.items())}",
            flush=True,
        )
    return dict(
        dataset=name,
        n_documents=n_docs,
        accuracy=acc,
        rows=rows,
        curves=curves,
        aggregations=orders,
    )


NOTES = ""  # set from the command line (--notes FILE) to add a discussion to the report


def write(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(os.path.join(HERE, "results_global.json"), "w") as fh:
        json.dump(results, fh, indent=1)
    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4))
    for ax, res in zip(np.atleast_1d(axes), results):
        for label, pts in res["curves"].items():
            if pts:
                t, a = zip(*pts)
                ax.plot(t, a, marker=".", label=label)
        ax.set_xscale("log")
        ax.set_xlabel("elapsed time (s, log)")
        ax.set_ylabel("AOPC@20 (mean over classes)")
        ax.set_title(f"{res['dataset']} ({res['n_documents']} documents)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "results_global.png"), dpi=110)
    lines = [
        "# GlobalAnchorAggregator benchmark (`bench/global.py`)",
        "",
        "TF-IDF + logistic regression, `pr`, k = 20, UNK perturbations, random_state 0, "
        f"{os.cpu_count()} CPUs, batches of 100 documents. AOPC@20 per class (eq. 7, deletion); "
        "ratio, difference and top-20 overlap are relative to naive. Wall time excludes the "
        "benchmark's own recording callback. Targets: all optimisations >= 30x faster than "
        "naive with AOPC@20 >= 95 % of naive's.",
    ]
    if NOTES:
        lines += ["", NOTES]
    for res in results:
        classes = list(res["rows"][0]["aopc"])
        lines += [
            "",
            f"## {res['dataset']}: {res['n_documents']} held-out documents "
            f"(model accuracy {res['accuracy']:.3f})",
            "",
            "| config | wall (s) | speed-up | rows predicted | model calls | tokens tested | "
            + " | ".join(f"AOPC {c} (ratio, diff)" for c in classes)
            + " | "
            + " | ".join(f"overlap {c}" for c in classes)
            + " |",
            "|---" * (6 + 2 * len(classes)) + "|",
        ]
        for r in res["rows"]:
            lines.append(
                f"| {r['config']} | {r['wall_time']:.1f} | {r['speedup']:.1f}x | "
                f"{r['rows_predicted']} | {r['model_calls']} | {r['tokens_tested']} | "
                + " | ".join(
                    f"{r['aopc'][c]:.4f} ({r['aopc_ratio'][c]:.2f}, "
                    f"{r['aopc'][c] - res['rows'][0]['aopc'][c]:+.4f})"
                    for c in classes
                )
                + " | "
                + " | ".join(f"{r['overlap'][c]:.2f}" for c in classes)
                + " |"
            )
        lines += ["", "Top-10 (all optimisations): "]
        for c, words in res["rows"][-1]["top10"].items():
            lines.append(f"- {c}: {', '.join(words)}")
        lines += ["", "AOPC@20 of each aggregation on the naive run's counts:", ""]
        lines.append("| aggregation | " + " | ".join(classes) + " |")
        lines.append("|---" * (1 + len(classes)) + "|")
        for g, v in res["aggregations"].items():
            lines.append(
                f"| {g} | " + " | ".join(f"{v.get(c, float('nan')):.4f}" for c in classes) + " |"
            )
    lines += ["", "![anytime curves](results_global.png)", ""]
    with open(os.path.join(HERE, "results_global.md"), "w") as fh:
        fh.write("\n".join(lines))


def main(argv=None):
    global NOTES
    argv = sys.argv[1:] if argv is None else argv
    if "--notes" in argv:
        i = argv.index("--notes")
        with open(argv[i + 1]) as fh:
            NOTES = fh.read().strip()
        argv = argv[:i] + argv[i + 2 :]
    if "--rewrite" in argv:  # regenerate the report from results_global.json
        with open(os.path.join(HERE, "results_global.json")) as fh:
            write(json.load(fh))
        return
    n_sms = int(argv[0]) if argv else 1500
    n_movies = int(argv[1]) if len(argv) > 1 else 800
    results = [run("sms", n_sms), run("movie_reviews", n_movies)]
    write(results)
    print(f"\nwrote {os.path.join(HERE, 'results_global.md')}")


if __name__ == "__main__":
    main()
