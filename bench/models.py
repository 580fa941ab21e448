"""skanchors given a scikit-learn model itself against given its ``predict_proba`` / ``predict``.

Run with ``python bench/models.py`` (about 1 minute on 2 cores). ``ProbabilityModel`` and
``RegressionModel`` compute some models' predictions themselves, to the same numbers to the last
bit, without the models' fixed cost per call (input validation, joblib dispatch, a
``ColumnTransformer``; see their docstrings). This measures what that is worth to a user: for
each model below, one ``AnchorExplainer`` given the fitted model and one given its bound method
(which the explainer can only call) explain the same rows one per ``explain`` call, alternating
row by row, in 3 repetitions, each with freshly fitted explainers (a fitted explainer keeps its
predictions, so a row explained again would cost almost no model call); each row's time is the
least disturbed of its repetitions. The
report gives the median seconds per explanation each way and their ratio, and checks that the
two ways return the same anchors with the same model calls and rows predicted (they must: the
predictions are the same). Also, per model, the seconds of one model call on 1 and on 300
perturbations of the first row, each way.

Models (``random_state=0``, scikit-learn defaults unless said): on raw Titanic (categories,
NaN; ``skanchors.datasets.load_titanic``, first 600 rows to fit and as reference data, the
next 15 explained) ``HistGradientBoostingClassifier(categorical_features="from_dtype")`` as in
the README, the same regressor predicting ``Fare`` from the other columns, and, on the numeric
columns without NaN (``Pclass, SibSp, Parch, Fare`` predicting survival, ``Pclass, SibSp,
Parch, Sex == male`` predicting ``Fare``) ``GradientBoostingClassifier``, ``RandomForestRegressor``
(100 trees) and ``GradientBoostingRegressor``; on raw Adult (first 8,000 rows to fit, the next
10 explained, beam 1) the HistGradientBoosting classifier. Pipelines whose ``ColumnTransformer``
skanchors computes from per-column tables (``skanchors._speed.columnwise``): on raw Titanic the user
guide's (one-hot encoded ``Sex``, ``Embarked``, imputed ``Age``, the rest passed through, then
``GradientBoostingClassifier``), on raw Adult (the same rows as above, beam 1) the categories
one-hot encoded and the numbers passed through to ``HistGradientBoostingClassifier``, or
scaled for a ``LogisticRegression`` (with ``OneHotEncoder``'s default sparse output, so that
the ``ColumnTransformer`` returns a sparse matrix). Writes ``bench/results_models.md`` and
``.json.gz`` (``--output PREFIX``: ``PREFIX.md`` and ``PREFIX.json.gz``).
"""

from __future__ import annotations

import os
import platform
import sys
import time
import warnings

import numpy as np
from _common import with_sampler, write_json

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 0
REPS = 3


def cases():
    """(name, model, reference data, rows to explain, explainer options)."""
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestRegressor,
    )

    from skanchors.datasets import load_adult, load_titanic

    X, y = load_titanic(return_X_y=True)
    fit, rows = slice(0, 600), slice(600, 615)
    hgb = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=SEED)
    hgb.fit(X[fit], y[fit])
    yield "HistGradientBoostingClassifier, raw Titanic", hgb, X[fit], X[rows], {}

    features, fare = X.drop(columns="Fare"), X["Fare"]
    hgb_r = HistGradientBoostingRegressor(categorical_features="from_dtype", random_state=SEED)
    hgb_r.fit(features[fit], fare[fit])
    name = "HistGradientBoostingRegressor, raw Titanic (Fare)"
    yield name, hgb_r, features[fit], features[rows], {}

    numeric = X[["Pclass", "SibSp", "Parch", "Fare"]].to_numpy(dtype=float)
    gb = GradientBoostingClassifier(random_state=SEED).fit(numeric[fit], y[fit])
    yield "GradientBoostingClassifier, Titanic numbers", gb, numeric[fit], numeric[rows], {}

    male = (X["Sex"] == "male").to_numpy(dtype=float)[:, None]
    others = np.hstack([X[["Pclass", "SibSp", "Parch"]].to_numpy(dtype=float), male])
    target = fare.to_numpy()
    rf_r = RandomForestRegressor(n_estimators=100, random_state=SEED).fit(others[fit], target[fit])
    yield "RandomForestRegressor, Titanic numbers (Fare)", rf_r, others[fit], others[rows], {}
    gb_r = GradientBoostingRegressor(random_state=SEED).fit(others[fit], target[fit])
    yield "GradientBoostingRegressor, Titanic numbers (Fare)", gb_r, others[fit], others[rows], {}

    Xa, ya = load_adult(return_X_y=True)
    fit_a, rows_a = slice(0, 8000), slice(8000, 8010)
    hgb_a = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=SEED)
    hgb_a.fit(Xa[fit_a], ya[fit_a])
    beam_1 = {"beam_size": 1}
    yield "HistGradientBoostingClassifier, raw Adult", hgb_a, Xa[fit_a], Xa[rows_a], beam_1

    # Pipelines on raw data whose ColumnTransformer is computed from per-column tables
    # (skanchors._speed.columnwise): the user guide's Titanic pipeline, and Adult's categories
    # one-hot encoded in front of histogram boosting and of a logistic regression.
    from sklearn.compose import make_column_transformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    def one_hot():
        return OneHotEncoder(handle_unknown="ignore", sparse_output=False)

    titanic_head = make_column_transformer(
        (one_hot(), ["Sex", "Embarked"]), (SimpleImputer(), ["Age"]), remainder="passthrough"
    )
    pipe = make_pipeline(titanic_head, GradientBoostingClassifier(random_state=SEED))
    pipe.fit(X[fit], y[fit])
    name = "Pipeline(one-hot + imputer + passthrough, GradientBoostingClassifier), raw Titanic"
    yield name, pipe, X[fit], X[rows], {}

    categories = Xa.select_dtypes(exclude="number").columns.tolist()
    numbers = Xa.select_dtypes(include="number").columns.tolist()
    hist = HistGradientBoostingClassifier(random_state=SEED)
    pipe = make_pipeline(
        make_column_transformer((one_hot(), categories), remainder="passthrough"), hist
    ).fit(Xa[fit_a], ya[fit_a])
    name = "Pipeline(one-hot + passthrough, HistGradientBoostingClassifier), raw Adult"
    yield name, pipe, Xa[fit_a], Xa[rows_a], beam_1
    logistic = LogisticRegression(max_iter=1000)
    sparse_one_hot = OneHotEncoder(handle_unknown="ignore")  # the transformer's output: CSR
    pipe = make_pipeline(
        make_column_transformer((sparse_one_hot, categories), (StandardScaler(), numbers)),
        logistic,
    ).fit(Xa[fit_a], ya[fit_a])
    name = "Pipeline(sparse one-hot + scaler, LogisticRegression), raw Adult"
    yield name, pipe, Xa[fit_a], Xa[rows_a], beam_1


def take(rows, i):
    return rows.iloc[[i]] if hasattr(rows, "iloc") else rows[i : i + 1]


def call_seconds(fn, X, n=30):
    fn(X)
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn(X)
        best = min(best, time.perf_counter() - t0)
    return best


def run_case(name, model, reference, rows, options):
    from skanchors import AnchorExplainer

    regression = hasattr(model, "predict") and not hasattr(model, "predict_proba")
    method = model.predict if regression else model.predict_proba
    mode = {"mode": "regression"} if regression else {}
    # the settings the committed reports were measured with (before the defaults of issue 44)
    options = with_sampler({"perturbation": "replace", "beam_size": 2, **options})
    ways = {
        "model": lambda: AnchorExplainer(model, random_state=SEED, **options),
        "method": lambda: AnchorExplainer(method, random_state=SEED, **mode, **options),
    }
    n = len(rows)
    seconds = {way: np.full((REPS, n), np.inf) for way in ways}
    found = {way: [None] * n for way in ways}
    for rep in range(REPS):
        # fresh explainers each repetition: a fitted explainer keeps the model's predictions
        # of the perturbations it drew, and a repeated row would cost almost no model call
        explainers = {way: make().fit(reference) for way, make in ways.items()}
        for i in range(n):
            order = list(ways) if (rep + i) % 2 == 0 else list(ways)[::-1]
            for way in order:
                t0 = time.perf_counter()
                anchor = explainers[way].explain(take(rows, i))[0]
                seconds[way][rep, i] = time.perf_counter() - t0
                found[way][i] = (str(anchor), anchor.n_model_calls, anchor.n_rows_predicted)
    best = {way: s.min(axis=0) for way, s in seconds.items()}
    adapter = explainers["model"].model_._fn
    sampler = explainers["model"].sampler_
    instance = sampler.instance(sampler.split(take(rows, 0))[0])
    batch = instance.decode(instance.sample((), 300, np.random.default_rng(SEED))[0])
    path, engaged = type(adapter).__name__, getattr(adapter, "engaged", False)
    if hasattr(adapter, "head"):  # a Pipeline: its head and its last step's adapter
        head, final = adapter.head, adapter.final
        path += f"({type(head).__name__}, {type(final).__name__})"
        engaged = getattr(head, "engaged", True) and getattr(final, "engaged", True)
    return {
        "model": name,
        "path": path,
        "engaged": bool(engaged),
        "rows": n,
        "median_model": float(np.median(best["model"])),
        "median_method": float(np.median(best["method"])),
        "ratio": float(np.median(best["method"]) / np.median(best["model"])),
        # the same anchors; given a tree model, rows its trees cannot tell apart are
        # predicted once (hash_by_splits), so calls and rows may only be fewer
        "identical": [f[0] for f in found["model"]] == [f[0] for f in found["method"]]
        and all(a[1] <= b[1] and a[2] <= b[2] for a, b in zip(found["model"], found["method"])),
        "calls_per_expl": float(np.mean([f[1] for f in found["model"]])),
        "rows_per_expl": float(np.mean([f[2] for f in found["model"]])),
        "calls_per_expl_method": float(np.mean([f[1] for f in found["method"]])),
        "rows_per_expl_method": float(np.mean([f[2] for f in found["method"]])),
        "call_1_model": call_seconds(adapter, take(batch, 0)),
        "call_1_method": call_seconds(method, take(batch, 0)),
        "call_300_model": call_seconds(adapter, batch),
        "call_300_method": call_seconds(method, batch),
    }


def report(results, settings):
    lines = [
        "# skanchors given the model itself against given its method",
        "",
        f"Date: {settings['date']}; total run time {settings['minutes']:.1f} min; "
        f"scikit-learn {settings['sklearn']}, {settings['cores']} cores.",
        "",
        "Command:",
        "",
        "```",
        "python bench/models.py",
        "```",
        "",
        "| model | adapter | median s, given the model | median s, given its method | "
        "speed-up | same anchors, no more calls or rows | calls / rows per explanation, "
        "given the model | given its method | "
        "1-row call, ms (model / method) | 300-row call, ms (model / method) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['model']} | `{r['path']}` | {r['median_model']:.4f} | "
            f"{r['median_method']:.4f} | **{r['ratio']:.2f}x** | "
            f"{'yes' if r['identical'] else 'NO'} | {r['calls_per_expl']:.1f} / "
            f"{r['rows_per_expl']:.0f} | {r['calls_per_expl_method']:.1f} / "
            f"{r['rows_per_expl_method']:.0f} | {r['call_1_model'] * 1e3:.2f} / "
            f"{r['call_1_method'] * 1e3:.2f} | {r['call_300_model'] * 1e3:.2f} / "
            f"{r['call_300_method'] * 1e3:.2f} |"
        )
    lines += [
        "",
        "Each explanation: one row per `explain` call, the two explainers alternating row by row; "
        f"each row's time is the least of {REPS} repetitions, and the table gives the median "
        "over the rows. *Speed-up* = median given the method / median given the model. The "
        "call times are the least of 30 calls of the adapter (given the model) or the model's "
        "own method on perturbations of the first explained row. See the docstring of "
        "`bench/models.py` for the models and data.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    import argparse

    import sklearn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(HERE, "results_models"))
    args = parser.parse_args(argv)

    warnings.filterwarnings("ignore")
    t0 = time.perf_counter()
    results = []
    for name, model, reference, rows, options in cases():
        result = run_case(name, model, reference, rows, options)
        print(
            f"{name}: {result['ratio']:.2f}x ({result['median_method']:.4f} s -> "
            f"{result['median_model']:.4f} s), identical {result['identical']}",
            flush=True,
        )
        results.append(result)
    settings = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "minutes": (time.perf_counter() - t0) / 60,
        "sklearn": sklearn.__version__,
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "load average at end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    out = args.output
    write_json(out, {"settings": settings, "results": results})
    with open(out + ".md", "w") as f:
        f.write(report(results, settings))
    return 0 if all(r["identical"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
