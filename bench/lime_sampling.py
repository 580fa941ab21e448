"""LIME on tables: columns sampled independently (the default) against whole reference rows.

Run with ``PYTHONPATH=. /work/peers/bin/python bench/lime_sampling.py [--n-rows N] [--output
PREFIX]`` from the repository (the ``lime`` package is a peer: ``bench/setup_peers.sh``
installs it; about 3 minutes on 2 cores). Writes ``bench/results_lime_sampling.md`` and
``.json.gz``.

Part 1, fidelity to a model whose coefficients are known. A logistic regression (numeric
columns standardised, categorical ones one-hot encoded) is fitted on 70 % of each data set
(stratified, random_state 0) and N held-out rows are explained for class 1, with every
interpretable feature weighted (``feature_selection="none"``, 5000 samples, quartile bins, the
default kernel), by

- skanchors ``LimeExplainer(sampling="independent")`` (the default),
- skanchors ``LimeExplainer(sampling="joint")`` (whole reference rows: the former default),
- the ``lime`` package's ``LimeTabularExplainer`` (``discretize_continuous=True``, quartiles),

all with the training split as reference data. The model's log-odds is a sum of one term per
column, ``g_j(x_j)`` (``coef * (x - mean) / std`` for a numeric column, the category's
coefficient for a categorical one). What LIME's weight of "``x_j`` is in the row's bin (or
category)" should track is that column's *bin contrast*, ``E[g_j | x_j in the bin] -
E[g_j | x_j outside it]`` over the reference data: the change of the log-odds when the column
leaves the bin, which the regression on the binary features estimates exactly for an additive
model when the columns are drawn independently (up to the logistic link's curvature, which
scales the features of one row alike). Each method is scored against the contrasts of its own
bins (lime's quartile edges are its own). Reported per method: the mean over rows of the
Spearman correlation, across the features, between ``|weight|`` and ``|bin contrast|``, the
share of rows whose largest ``|weight|`` is the largest contrast, and, as the issue measured
it, the Spearman between ``|weight|`` and the column's spread ``std(g_j)`` (``|coef|`` of a
standardised column), per row and pooled over all rows.

Data: Adult and Titanic from ``skanchors.datasets`` (bank marketing, the issue's data, is not
shipped), and "bank-like", a synthetic table whose four macro-economic columns follow one
factor (correlations 0.80 to 0.97) with opposing coefficients, as bank marketing's
``emp.var.rate`` (-0.81), ``cons.price.idx`` (0.51) and ``nr.employed`` (-0.08) do. Missing
values are filled before anything (lime cannot take NaN): Titanic's ages with the training
median, missing categories as the category "missing".

Part 2, whether whole rows earn their place. A "scaffolded" model (Slack et al., "Fooling LIME
and SHAP", AIES 2020) on Adult decides by ``sex`` on inputs a detector takes for real data and
by ``fnlwgt`` (a sampling weight, meaningless here) on the others. The detector is a random
forest trained to tell rows of one half of the training split from the same rows with every
column permuted on its own (independent columns); LIME's reference data is the other half.
Reported: the detector's accuracy on held-out rows and on permuted held-out rows, how often the
scaffold predicts as its biased part on the held-out rows, and for each method the share of 50
explained rows whose largest weight is ``sex`` (the truth on real data) or ``fnlwgt`` (the
innocuous face).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings

import numpy as np
import pandas as pd
from _common import write_json

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 0
N_SAMPLES = 5000
METHODS = ("skanchors independent", "skanchors joint", "lime package")


# ----------------------------------------------------------------------------- data sets
def load_adult():
    from skanchors.datasets import load_adult

    X, y = load_adult(return_X_y=True, as_frame=True)
    return X, np.asarray(y)


def load_titanic():
    from skanchors.datasets import load_titanic

    X, y = load_titanic(return_X_y=True, as_frame=True)
    return X, np.asarray(y)


def load_bank_like(n=20000):
    """Four macro columns on one factor, opposing coefficients; two free columns; a
    categorical column that follows the factor."""
    rng = np.random.default_rng(SEED)
    f = rng.normal(size=n)
    noise = rng.normal(size=(n, 6))
    X = pd.DataFrame(
        {
            "emp.var.rate": f + 0.15 * noise[:, 0],
            "cons.price.idx": 0.8 * f + 0.6 * noise[:, 1],
            "euribor3m": 0.97 * f + 0.25 * noise[:, 2],
            "nr.employed": 0.9 * f + 0.45 * noise[:, 3],
            "age": 40 + 10 * noise[:, 4],
            "campaign": rng.exponential(2.5, size=n),
            "contact": pd.Categorical(
                np.where(f + noise[:, 5] > 0, "telephone", "cellular"),
                categories=["cellular", "telephone"],
            ),
        }
    )
    z = (X.iloc[:, :6] - X.iloc[:, :6].mean()) / X.iloc[:, :6].std()
    logit = -1.0 + z.to_numpy() @ np.array([-0.81, 0.51, 0.3, -0.08, 0.25, -0.3])
    logit = logit + 0.4 * (X["contact"] == "cellular").to_numpy()
    y = (logit + rng.logistic(size=n) > 0).astype(int)
    return X, y


DATASETS = {"adult": load_adult, "titanic": load_titanic, "bank-like": load_bank_like}


def prepare(X):
    """Missing values filled (lime cannot take NaN); categorical columns as categories."""
    X = X.copy()
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype) or X[c].dtype == object:
            values = X[c].astype(object).where(X[c].notna(), "missing").astype(str)
            X[c] = pd.Categorical(values, categories=sorted(set(values)))
    return X


def split(X, y):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.3, random_state=SEED, stratify=y)


def categorical_columns(X):
    return [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]


def logistic_pipeline(X):
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    cat = categorical_columns(X)
    num = [c for c in X.columns if c not in cat]
    ct = ColumnTransformer(
        [("num", StandardScaler(), num), ("cat", OneHotEncoder(handle_unknown="ignore"), cat)],
        sparse_threshold=0,
    )
    return make_pipeline(ct, LogisticRegression(max_iter=2000))


def logit_terms(pipe, X):
    """``g_j(x_j)`` of every row of ``X`` and column ``j``: the column's share of the
    log-odds (the intercept aside)."""
    ct, lr = pipe[0], pipe[-1]
    T = ct.transform(X)
    coef = lr.coef_[0]
    out = np.zeros((len(X), X.shape[1]))
    cols = list(X.columns)
    num_slice = ct.output_indices_["num"]
    num = ct.transformers_[0][2]
    for k, c in enumerate(num):
        j = num_slice.start + k
        out[:, cols.index(c)] = T[:, j] * coef[j]
    cat_slice = ct.output_indices_["cat"]
    start = cat_slice.start
    enc = ct.named_transformers_["cat"]
    for c, cats in zip(ct.transformers_[1][2], enc.categories_):
        block = slice(start, start + len(cats))
        out[:, cols.index(c)] = T[:, block] @ coef[block]
        start += len(cats)
    return out


# ------------------------------------------------------------------------------- lime
class Codec:
    """The table as lime's float matrix (categories as codes) and back."""

    def __init__(self, X):
        self.columns = list(X.columns)
        self.cat = [j for j, c in enumerate(self.columns) if c in set(categorical_columns(X))]
        self.categories = {j: list(X.iloc[:, j].cat.categories) for j in self.cat}
        self.dtypes = X.dtypes

    def encode(self, X):
        A = np.empty(X.shape, dtype=float)
        for j, c in enumerate(self.columns):
            if j in self.cat:
                A[:, j] = X[c].cat.codes.to_numpy()
            else:
                A[:, j] = X[c].to_numpy(dtype=float)
        return A

    def decode(self, A):
        data = {}
        for j, c in enumerate(self.columns):
            if j in self.cat:
                codes = np.clip(np.round(A[:, j]).astype(int), 0, len(self.categories[j]) - 1)
                data[c] = pd.Categorical.from_codes(codes, categories=self.categories[j])
            else:
                data[c] = A[:, j]
        return pd.DataFrame(data)


def lime_explainer(codec, X_ref):
    from lime.lime_tabular import LimeTabularExplainer

    return LimeTabularExplainer(
        codec.encode(X_ref),
        feature_names=codec.columns,
        categorical_features=codec.cat,
        categorical_names={j: codec.categories[j] for j in codec.cat},
        discretize_continuous=True,
        discretizer="quartile",
        feature_selection="none",
        random_state=SEED,
    )


# --------------------------------------------------------------------------- explaining
def skanchors_weights(explainer, rows):
    """Weights (rows x columns), the surrogates' weighted R^2 and seconds per row."""
    start = time.perf_counter()
    explanations = explainer.explain(rows)
    seconds = (time.perf_counter() - start) / len(rows)
    W = np.zeros(rows.shape)
    for i, e in enumerate(explanations):
        for j in e.selected:
            W[i, e.features[j][0].position] += e.weights[j]
    return W, np.array([e.score for e in explanations]), seconds


def skanchors_inside(explainer, row):
    """Per column, which reference rows are in the row's bin (None: no informative
    predicate, so no interpretable feature)."""
    from skanchors.lime import _components

    instance = explainer.sampler_.instance(row)
    n_ref = explainer.sampler_.n_reference_
    out = [None] * row.shape[1]
    for preds in _components(instance):
        j = instance.predicates[preds[0]].position
        out[j] = instance._holds[:n_ref, preds].all(axis=1)
    return out


def lime_weights(lime_exp, codec, predict, rows):
    W = np.zeros(rows.shape)
    A = codec.encode(rows)
    scores = np.zeros(len(A))
    start = time.perf_counter()
    for i, a in enumerate(A):
        exp = lime_exp.explain_instance(
            a, predict, labels=(1,), num_features=rows.shape[1], num_samples=N_SAMPLES
        )
        for j, w in exp.as_map()[1]:
            W[i, j] = w
        scores[i] = exp.score
    return W, scores, (time.perf_counter() - start) / len(rows)


def lime_inside(lime_exp, codec, ref_disc, row):
    a = lime_exp.discretizer.discretize(codec.encode(row)[0])
    return [ref_disc[:, j] == a[j] for j in range(len(a))]


def contrasts(g, inside):
    """Bin contrast of each column (NaN where it has no interpretable feature or the bin
    holds every reference row or none)."""
    out = np.full(g.shape[1], np.nan)
    for j, m in enumerate(inside):
        if m is None or m.all() or not m.any():
            continue
        out[j] = g[m, j].mean() - g[~m, j].mean()
    return out


def spearman(a, b):
    from scipy.stats import spearmanr

    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return np.nan
    return float(spearmanr(a[ok], b[ok])[0])


def score(W, C, spread):
    """Agreement of |weights| W with |contrasts| C (rows x columns) and with the spread."""
    absW, absC = np.abs(W), np.abs(C)
    rho_c = [spearman(w, c) for w, c in zip(absW, absC)]
    top = [
        int(np.nanargmax(np.where(np.isfinite(c), w, -1)) == np.nanargmax(c))
        for w, c in zip(absW, absC)
    ]
    rho_s = [spearman(w, spread) for w in absW]
    pooled = spearman(absW.ravel(), np.tile(spread, len(absW)))
    return dict(
        spearman_contrast=float(np.nanmean(rho_c)),
        spearman_contrast_min=float(np.nanmin(rho_c)),
        top_is_largest_contrast=float(np.mean(top)),
        spearman_spread=float(np.nanmean(rho_s)),
        spearman_spread_pooled=pooled,
        per_row_spearman_contrast=[None if np.isnan(r) else r for r in rho_c],
    )


def part1(name, n_rows):
    from skanchors import LimeExplainer

    X, y = DATASETS[name]()
    X = prepare(X)
    X_tr, X_te, y_tr, y_te = split(X, y)
    if X_tr.isna().any().any():  # Titanic's ages: the training median, for every package
        med = X_tr.median(numeric_only=True)
        X_tr, X_te = X_tr.fillna(med), X_te.fillna(med)
    X_tr, X_te = X_tr.reset_index(drop=True), X_te.reset_index(drop=True)
    pipe = logistic_pipeline(X_tr).fit(X_tr, y_tr)
    acc = float(pipe.score(X_te, y_te))
    rows = X_te.iloc[np.sort(np.random.default_rng(SEED).choice(len(X_te), n_rows, False))]
    g = logit_terms(pipe, X_tr)
    spread = g.std(axis=0)
    out = dict(
        dataset=name,
        n_reference=len(X_tr),
        n_rows=n_rows,
        test_accuracy=acc,
        columns=list(X.columns),
        spread=spread.tolist(),
        methods={},
    )
    print(f"{name}: {len(X_tr)} reference rows, accuracy {acc:.3f}", flush=True)
    for method in METHODS:
        if method.startswith("skanchors"):
            sampling = method.split()[1]
            explainer = LimeExplainer(
                pipe,
                n_samples=N_SAMPLES,
                feature_selection="none",
                target_class=1,
                sampling=sampling,
                random_state=SEED,
            ).fit(X_tr)
            W, r2, per_row = skanchors_weights(explainer, rows)
            C = np.array(
                [contrasts(g, skanchors_inside(explainer, rows.iloc[[i]])) for i in range(n_rows)]
            )
        else:
            codec = Codec(X_tr)
            lx = lime_explainer(codec, X_tr)

            def predict(A, codec=codec):
                return pipe.predict_proba(codec.decode(A))

            W, r2, per_row = lime_weights(lx, codec, predict, rows)
            ref_disc = lx.discretizer.discretize(codec.encode(X_tr))
            C = np.array(
                [
                    contrasts(g, lime_inside(lx, codec, ref_disc, rows.iloc[[i]]))
                    for i in range(n_rows)
                ]
            )
        result = score(W, C, spread)
        result["r2"] = float(r2.mean())
        result["seconds_per_row"] = per_row
        result["weights"] = W.tolist()
        result["contrasts"] = np.where(np.isnan(C), None, C).tolist()
        out["methods"][method] = result
        print(
            f"  {method:22s} Spearman |w| ~ |contrast| {result['spearman_contrast']:.3f} "
            f"(min {result['spearman_contrast_min']:.2f}), "
            f"top {result['top_is_largest_contrast']:.2f}, "
            f"|w| ~ spread {result['spearman_spread']:.3f} (pooled "
            f"{result['spearman_spread_pooled']:.3f}), R^2 {result['r2']:.2f}, "
            f"{per_row * 1000:.0f} ms/row",
            flush=True,
        )
    return out


# ------------------------------------------------------------------------------ part 2
def part2(n_rows=50):
    from sklearn.ensemble import RandomForestClassifier

    from skanchors import LimeExplainer

    X, y = load_adult()
    X = prepare(X)
    X_tr, X_te, _, _ = split(X, y)
    X_tr, X_te = X_tr.reset_index(drop=True), X_te.reset_index(drop=True)
    half = len(X_tr) // 2
    X_adv, X_ref = X_tr.iloc[:half].reset_index(drop=True), X_tr.iloc[half:].reset_index(drop=True)
    codec = Codec(X_tr)
    rng = np.random.default_rng(SEED)

    def permuted(A):
        return np.column_stack([rng.permutation(A[:, j]) for j in range(A.shape[1])])

    A_adv = codec.encode(X_adv)
    detector = RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=SEED)
    detector.fit(np.vstack([A_adv, permuted(A_adv)]), np.r_[np.ones(half), np.zeros(half)])
    A_te = codec.encode(X_te)
    acc_real = float(detector.predict(A_te).mean())
    acc_fake = float(1 - detector.predict(permuted(A_te)).mean())
    cut = float(X_adv["fnlwgt"].median())

    class Scaffold:
        classes_ = np.array([0, 1])

        def predict_proba(self, Z):
            real = detector.predict(codec.encode(Z)) == 1
            biased = np.where(Z["sex"].astype(str) == "Male", 0.85, 0.15)
            innocuous = np.where(Z["fnlwgt"].to_numpy(dtype=float) > cut, 0.85, 0.15)
            p = np.where(real, biased, innocuous)
            return np.column_stack([1 - p, p])

    model = Scaffold()
    biased_share = float(
        np.mean(model.predict_proba(X_te)[:, 1] == np.where(X_te["sex"] == "Male", 0.85, 0.15))
    )
    rows = X_te.iloc[np.sort(rng.choice(len(X_te), n_rows, False))]
    out = dict(
        n_adversary_rows=half,
        n_reference=len(X_ref),
        detector_accuracy_real=acc_real,
        detector_accuracy_permuted=acc_fake,
        scaffold_biased_on_heldout=biased_share,
        n_rows=n_rows,
        methods={},
    )
    print(
        f"scaffold: detector {acc_real:.3f} on held-out rows, {acc_fake:.3f} on permuted ones; "
        f"biased on {biased_share:.3f} of held-out rows",
        flush=True,
    )
    cols = list(X.columns)
    for method in METHODS:
        if method.startswith("skanchors"):
            explainer = LimeExplainer(
                model,
                n_samples=N_SAMPLES,
                feature_selection="none",
                target_class=1,
                sampling=method.split()[1],
                random_state=SEED,
            ).fit(X_ref)
            W, _, per_row = skanchors_weights(explainer, rows)
        else:
            lx = lime_explainer(codec, X_ref)
            W, _, per_row = lime_weights(
                lx, codec, lambda A: model.predict_proba(codec.decode(A)), rows
            )
        top = np.argmax(np.abs(W), axis=1)
        result = dict(
            top_sex=float(np.mean(top == cols.index("sex"))),
            top_fnlwgt=float(np.mean(top == cols.index("fnlwgt"))),
            mean_abs_weight_sex=float(np.abs(W[:, cols.index("sex")]).mean()),
            mean_abs_weight_fnlwgt=float(np.abs(W[:, cols.index("fnlwgt")]).mean()),
            seconds_per_row=per_row,
        )
        out["methods"][method] = result
        print(
            f"  {method:22s} top feature sex {result['top_sex']:.2f}, fnlwgt "
            f"{result['top_fnlwgt']:.2f}",
            flush=True,
        )
    return out


# ------------------------------------------------------------------------------ report
def markdown(results, command):
    lines = [
        "# LIME on tables: independent columns against whole reference rows",
        "",
        f"Command: `{command}` ({results['wall_time']:.0f} s). Script: `bench/lime_sampling.py` "
        "(its docstring says what is measured and how).",
        "",
        "## 1. Fidelity to a logistic regression with known coefficients",
        "",
        f"{results['n_rows']} held-out rows per data set, {N_SAMPLES} samples, every feature "
        "weighted. *Spearman ~ contrast*: mean over rows of the Spearman correlation, across "
        "columns, of |weight| with |bin contrast| (the log-odds change when the column leaves "
        "the row's bin; the quantity an additive model's LIME weight estimates), min over rows "
        "in brackets. *Top*: share of rows whose largest |weight| is the largest contrast. "
        "*Spearman ~ spread*: |weight| against std(g_j) (|coef| of a standardised column, the "
        "issue's measure), mean per row, and pooled over all rows. *R^2*: the surrogates' "
        "weighted R^2 on their own perturbations (local fidelity), mean over rows: not "
        "comparable across samplings, whose perturbations differ.",
        "",
        "| data | reference rows | accuracy | method | Spearman ~ contrast | top | "
        "Spearman ~ spread (pooled) | R^2 | ms / row |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for d in results["part1"]:
        for m, r in d["methods"].items():
            lines.append(
                f"| {d['dataset']} | {d['n_reference']} | {d['test_accuracy']:.3f} | {m} | "
                f"{r['spearman_contrast']:.3f} ({r['spearman_contrast_min']:.2f}) | "
                f"{r['top_is_largest_contrast']:.2f} | {r['spearman_spread']:.3f} "
                f"({r['spearman_spread_pooled']:.3f}) | {r['r2']:.2f} | "
                f"{1000 * r['seconds_per_row']:.0f} |"
            )
    p2 = results["part2"]
    lines += [
        "",
        "## 2. A model that hides its bias off the data (Slack et al. 2020)",
        "",
        f"Adult; the detector is trained on {p2['n_adversary_rows']} training rows against "
        "the same rows with every column permuted on its own; LIME's reference data are the "
        f"other {p2['n_reference']} training rows. The detector calls "
        f"{p2['detector_accuracy_real']:.3f} of held-out rows real and "
        f"{p2['detector_accuracy_permuted']:.3f} of permuted held-out rows fake; the scaffold "
        f"predicts by `sex` on {p2['scaffold_biased_on_heldout']:.3f} of the held-out rows. "
        f"Share of {p2['n_rows']} explained rows whose largest |weight| is:",
        "",
        "| method | `sex` (the truth on real data) | `fnlwgt` (the innocuous face) | "
        "mean abs weight sex | mean abs weight fnlwgt |",
        "|---|---:|---:|---:|---:|",
    ]
    for m, r in p2["methods"].items():
        lines.append(
            f"| {m} | {r['top_sex']:.2f} | {r['top_fnlwgt']:.2f} | "
            f"{r['mean_abs_weight_sex']:.3f} | {r['mean_abs_weight_fnlwgt']:.3f} |"
        )
    lines += ["", "## Machine", "", "```", json.dumps(results["machine"], indent=1), "```", ""]
    return "\n".join(lines)


def git_commit():
    import subprocess

    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "../skanchors"],
            cwd=HERE,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "?"
    return head + (" (library modified)" if dirty else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-rows", type=int, default=20)
    parser.add_argument("--output", default=os.path.join(HERE, "results_lime_sampling"))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import lime
    import sklearn

    import skanchors

    start = time.perf_counter()
    results = dict(
        n_rows=args.n_rows,
        part1=[part1(name, args.n_rows) for name in DATASETS],
        part2=part2(),
    )
    results["wall_time"] = time.perf_counter() - start
    results["machine"] = dict(
        python=sys.version.split()[0],
        platform=platform.platform(),
        cpus=os.cpu_count(),
        numpy=np.__version__,
        pandas=pd.__version__,
        sklearn=sklearn.__version__,
        lime=getattr(lime, "__version__", "0.2.0.1"),
        skanchors=getattr(skanchors, "__version__", "?"),
        commit=git_commit(),
    )
    command = "PYTHONPATH=. /work/peers/bin/python bench/lime_sampling.py " + " ".join(sys.argv[1:])
    write_json(args.output, results)
    with open(args.output + ".md", "w") as f:
        f.write(markdown(results, command.strip()))
    print(f"wrote {args.output}.md and .json.gz ({results['wall_time']:.0f} s)")


if __name__ == "__main__":
    main()
