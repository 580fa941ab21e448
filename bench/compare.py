"""What a two-model comparison (``skanchors.compare_models``) costs, and what it finds, on the
shipped data with the planted leaks of ``skanchors demo --compare``.

Run with ``python bench/compare.py`` (dev environment; a few minutes on 2 cores). Cells:

- ``sms``: SMS spam, the relay stamp ``smsrelay`` on 90 % of the spam of the training and
  validation splits (``skanchors._compare_demo.leaky_sms``); the two TF-IDF + logistic
  regression pipelines (every word; the stamp as a stop word) compared on the whole validation
  split (1,393 messages): anchors of 200 of them, the global aggregation over all of them;
- ``titanic-auto``, ``titanic-replace``: Titanic with ``record_id`` encoding the label for
  90 % of the training and validation passengers (``leaky_titanic``); the two random forests
  (with and without the column) compared on the validation split (223 passengers, all
  explained), with the explainer's defaults (``perturbation="auto"``: the reference rows
  first, which 223 rows rarely validate a rule on, then replaced rows) and with
  ``TabularSampler(perturbation="replace")``;
- ``adult``: Adult, no leak: ``HistGradientBoostingClassifier`` on the raw table against a
  one-hot + logistic regression pipeline, fitted on 8,000 rows; 200 of the next 2,000 rows
  explained, the 8,000 the reference data (the defaults).

Each cell runs ``--reps`` times (default 2) in this process and reports the least disturbed
run: total seconds, each model's seconds (fit, anchors, aggregation, pick), the aggregation's
own seconds, and what the comparison found: accuracy on the validation split and on the clean
test split, reliance on the planted feature (overall and by predicted class), the top features.
Writes ``bench/results_compare.md`` and ``.json.gz`` (``--output PREFIX``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _common import fmt, machine, versions, write_json  # noqa: E402


def sms():
    from skanchors._compare_demo import TOKEN, leaky_sms

    splits, models = leaky_sms(0)
    return splits, models, {}, TOKEN, 200


def titanic(replace):
    from skanchors import AnchorExplainer
    from skanchors._compare_demo import leaky_titanic
    from skanchors.samplers import TabularSampler

    splits, models = leaky_titanic(0)
    options = {}
    if replace:
        sampler = TabularSampler(perturbation="replace")
        options["explainer"] = AnchorExplainer(None, sampler=sampler)
    return splits, models, options, "record_id", None


def adult():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from skanchors.datasets import load_adult

    X, y = load_adult(return_X_y=True)
    fit, val, test = slice(0, 8000), slice(8000, 10000), slice(10000, 12000)
    categories = [c for c in X.columns if str(X[c].dtype) == "category"]
    numbers = [c for c in X.columns if c not in categories]
    columns = ColumnTransformer(
        [
            ("categories", OneHotEncoder(handle_unknown="ignore"), categories),
            ("numbers", StandardScaler(), numbers),
        ]
    )
    models = {
        "boosting": HistGradientBoostingClassifier(
            categorical_features="from_dtype", random_state=0
        ).fit(X[fit], y[fit]),
        "logistic": Pipeline(
            [("columns", columns), ("clf", LogisticRegression(max_iter=2000))]
        ).fit(X[fit], y[fit]),
    }
    splits = {"train": (X[fit], y[fit]), "val": (X[val], y[val]), "test": (X[test], y[test])}
    return splits, models, {"reference": X[fit]}, "capital-gain", 200


CELLS = {
    "sms": sms,
    "titanic-auto": lambda: titanic(False),
    "titanic-replace": lambda: titanic(True),
    "adult": adult,
}


def run_cell(name, reps):
    from threadpoolctl import threadpool_limits

    from skanchors import compare_models

    splits, models, options, feature, n_rows = CELLS[name]()
    X_val, y_val = splits["val"]
    X_test, y_test = splits["test"]
    best = None
    for _ in range(reps):
        with threadpool_limits(limits=1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            result = compare_models(
                models, X_val, y=y_val, n_rows=n_rows, random_state=0, **options
            )
            seconds = time.perf_counter() - start
        if best is None or seconds < best[0]:
            best = (seconds, result)
    seconds, result = best
    reliance = result.reliance([feature])
    by_class = result.reliance([feature], by_class=True)
    summary = result.summary()
    record = {
        "cell": name,
        "n_val": len(X_val),
        "n_explained": len(result.rows_),
        "seconds": seconds,
        "feature": feature,
        "models": {},
    }
    for model_name, model in models.items():
        entry = {
            "seconds": result.seconds_[model_name],
            "accuracy_val": float(model.score(X_val, y_val)),
            "accuracy_test": float(model.score(X_test, y_test)),
            "reliance": reliance[model_name],
            "reliance_by_class": {str(c): v for c, v in by_class[model_name].items()},
            "with_anchor": float(summary.loc[str(model_name), "with_anchor"]),
            "top": {
                str(c): [str(f) for f, _ in terms[:5]]
                for c, terms in result.top_features_[model_name].items()
            },
        }
        if result.aggregators_ is not None:
            entry["aggregation_seconds"] = result.aggregators_[model_name].elapsed_time_
        record["models"][str(model_name)] = entry
    return record


def report(records, path):
    lines = [
        "# Comparing two models (compare_models)",
        "",
        f"Versions: {versions()}",
        "",
        f"Machine: {machine()}",
        "",
        "Least disturbed of the repetitions; seconds of the whole `compare_models` call and of "
        "each model within it (fit, anchors, aggregation for text, pick). Reliance: share of "
        "the explained rows whose anchor needs the feature (by predicted class in brackets).",
        "",
        "| cell | rows (explained) | total s | model | s | aggregation s | anchored | accuracy "
        "val / test | reliance on the feature | top features |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        for i, (name, m) in enumerate(r["models"].items()):
            split = ", ".join(f"{c}: {fmt(v, '.2f')}" for c, v in m["reliance_by_class"].items())
            top = "; ".join(f"{c}: {', '.join(t)}" for c, t in m["top"].items())
            cell = f"{r['cell']} ({r['feature']})" if i == 0 else ""
            rows = f"{r['n_val']} ({r['n_explained']})" if i == 0 else ""
            total = fmt(r["seconds"], ".1f") if i == 0 else ""
            lines.append(
                f"| {cell} | {rows} | {total} | {name} | {fmt(m['seconds'], '.1f')} | "
                f"{fmt(m.get('aggregation_seconds'), '.1f')} | {fmt(m['with_anchor'], '.2f')} | "
                f"{fmt(m['accuracy_val'], '.3f')} / {fmt(m['accuracy_test'], '.3f')} | "
                f"{fmt(m['reliance'], '.2f')} ({split}) | {top} |"
            )
    lines.append("")
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", default=",".join(CELLS), help="comma-separated cells")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--output", default=os.path.join(HERE, "results_compare"))
    args = parser.parse_args(argv)
    records = []
    for name in args.cells.split(","):
        record = run_cell(name, args.reps)
        print(f"{name}: {record['seconds']:.1f} s", flush=True)
        records.append(record)
    write_json(args.output, {"versions": versions(), "machine": machine(), "records": records})
    report(records, args.output + ".md")
    print(f"wrote {args.output}.md")


if __name__ == "__main__":
    main()
