"""``skanchors demo --compare``: choosing between models by their explanations, on shipped data.

The lesson of "LIME explanations can help choose between models": two classifiers score alike,
or the worse one scores better, on a validation split that shares an artefact with the training
data; their explanations show which one learned the artefact. Here the artefact is planted:

- SMS spam: a relay stamp (``smsrelay``) added to 90 % of the spam messages of the training and
  validation splits (collected the same way), and to none of a clean test split;
- Titanic: a ``record_id`` column that encodes the label for 90 % of the passengers of the
  training and validation splits (survivors 0-499, the others 500-999), random in the test
  split.
"""

from __future__ import annotations

import numpy as np

TOKEN = "smsrelay"


def _splits(n, labels, random_state):
    from sklearn.model_selection import train_test_split

    index = np.arange(n)
    train, rest = train_test_split(index, test_size=0.5, random_state=random_state, stratify=labels)
    val, test = train_test_split(
        rest, test_size=0.5, random_state=random_state, stratify=np.asarray(labels)[rest]
    )
    return train, val, test


def leaky_sms(random_state=0):
    """SMS spam with the stamp planted: ``(splits, models)``, where ``splits`` maps "train",
    "val" (leaky) and "test" (clean) to ``(texts, labels)`` and ``models`` holds the pipeline
    that reads every word ("all words") and the one that ignores the stamp."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    from .datasets import load_sms_spam

    texts, labels = load_sms_spam(return_X_y=True)
    texts, labels = list(texts), np.asarray(labels)
    rng = np.random.default_rng(random_state)
    train, val, test = _splits(len(texts), labels, random_state)

    def part(rows, leak):
        out = []
        for i in rows:
            stamped = leak and labels[i] == "spam" and rng.random() < 0.9
            out.append(f"{texts[i]} {TOKEN}" if stamped else texts[i])
        return out, labels[rows]

    splits = {"train": part(train, True), "val": part(val, True), "test": part(test, False)}
    models = {}
    for name, stop_words in (("all words", None), (f"without {TOKEN}", [TOKEN])):
        model = Pipeline(
            [
                ("tfidf", TfidfVectorizer(min_df=2, stop_words=stop_words)),
                ("clf", LogisticRegression(C=10, max_iter=1000)),
            ]
        )
        models[name] = model.fit(*splits["train"])
    return splits, models


def leaky_titanic(random_state=0):
    """Titanic with ``record_id`` planted: ``(splits, models)`` as :func:`leaky_sms`, the
    models random forests with and without the column."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline

    from .datasets import load_titanic

    X, y = load_titanic(return_X_y=True)
    X = X.assign(Sex=X["Sex"].cat.codes, Embarked=X["Embarked"].cat.codes)
    X = X.fillna({"Age": X["Age"].median()})
    rng = np.random.default_rng(random_state)
    coded = (1 - y.to_numpy()) * 500 + rng.integers(0, 500, len(y))
    noise = rng.integers(0, 1000, len(y))
    X = X.assign(record_id=np.where(rng.random(len(y)) < 0.9, coded, noise))
    train, val, test = _splits(len(y), y, random_state)
    X_test = X.iloc[test].assign(record_id=rng.integers(0, 1000, len(test)))
    splits = {
        "train": (X.iloc[train], y.iloc[train]),
        "val": (X.iloc[val], y.iloc[val]),
        "test": (X_test, y.iloc[test]),
    }
    models = {}
    for name, leak in (("all columns", "passthrough"), ("without record_id", "drop")):
        columns = ColumnTransformer([("leak", leak, ["record_id"])], remainder="passthrough")
        forest = RandomForestClassifier(n_estimators=50, max_depth=6, random_state=random_state)
        model = Pipeline([("columns", columns), ("forest", forest)])
        models[name] = model.fit(*splits["train"])
    return splits, models


def _report(title, splits, models, result, feature, out):
    print(f"\n{title}", file=out)
    X_val, y_val = splits["val"]
    X_test, y_test = splits["test"]
    reliance = result.reliance([feature])
    by_class = result.reliance([feature], by_class=True)
    for name, model in models.items():
        split = ", ".join(f"{c}: {v:.2f}" for c, v in by_class[name].items())
        print(
            f"  {name:<20s} accuracy {model.score(X_val, y_val):.3f} on the leaky validation "
            f"split, {model.score(X_test, y_test):.3f} on the clean test split; reliance on "
            f"{feature!r} {reliance[name]:.2f} (by predicted class {split})",
            file=out,
        )
    for name in models:
        for label, terms in result.top_features_[name].items():
            listed = ", ".join(str(f) for f, _ in terms[:6]) or "(none)"
            print(f"  {name}, top of class {label}: {listed}", file=out)
    print(
        f"  ({result.n_disagreements_} validation rows predicted differently; two models "
        f"explained in {sum(result.seconds_.values()):.1f} s)",
        file=out,
    )


def demo_compare(args, out):
    """Both planted leaks: the comparison that exposes them."""
    from . import AnchorExplainer
    from .compare import compare_models
    from .samplers import TabularSampler

    seed = args.random_state
    splits, models = leaky_sms(seed)
    result = compare_models(
        models,
        splits["val"][0],
        y=splits["val"][1],
        n_rows=args.rows,
        explainer=AnchorExplainer(None, threshold=args.threshold),
        random_state=seed,
        n_jobs=args.n_jobs,
    )
    _report(
        f"SMS spam: '{TOKEN}' stamped on 90 % of the spam of the training and validation splits",
        splits,
        models,
        result,
        TOKEN,
        out,
    )
    splits, models = leaky_titanic(seed)
    # (223 validation rows are too few to validate rules on their own rows: replaced rows)
    explainer = AnchorExplainer(
        None, threshold=args.threshold, sampler=TabularSampler(perturbation="replace")
    )
    result = compare_models(
        models,
        splits["val"][0],
        y=splits["val"][1],
        n_rows=args.rows,
        explainer=explainer,
        random_state=seed,
        n_jobs=args.n_jobs,
    )
    _report(
        "Titanic: record_id encodes the label for 90 % of the training and validation passengers",
        splits,
        models,
        result,
        "record_id",
        out,
    )
    return result
