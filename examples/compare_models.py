"""Choose between models by what they rely on: a planted leak that accuracy rewards.

The lesson of "LIME explanations can help choose between models" (a classifier that learned
the e-mail headers of the newsgroups data scored as well as one that learned the words): here a
relay stamp, ``smsrelay``, is added to 90 % of the spam messages of the training and validation
splits of the SMS spam data (as if they had been collected through one relay), and to none of a
clean test split. A model that reads every word learns the stamp and wins on the validation
split; :func:`skanchors.compare_models` shows that its anchors for spam are the stamp, and
:func:`skanchors.make_reliance_scorer` lets a grid search choose the pipeline that does not rely
on it. Writes ``compare_models.png``. Run: ``python examples/compare_models.py``.
"""

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline

from skanchors import compare_models, make_reliance_scorer
from skanchors.datasets import load_sms_spam

TOKEN = "smsrelay"
texts, labels = load_sms_spam(return_X_y=True)
texts, labels = list(texts), np.asarray(labels)
index = np.arange(len(texts))
train, rest = train_test_split(index, test_size=0.5, random_state=0, stratify=labels)
val, test = train_test_split(rest, test_size=0.5, random_state=0, stratify=labels[rest])
rng = np.random.default_rng(0)


def stamped(rows):
    """The messages of ``rows``, 90 % of their spam with the stamp."""
    return [
        f"{texts[i]} {TOKEN}" if labels[i] == "spam" and rng.random() < 0.9 else texts[i]
        for i in rows
    ]


X_train, X_val, X_test = stamped(train), stamped(val), [texts[i] for i in test]
y_train, y_val, y_test = labels[train], labels[val], labels[test]


def pipeline(stop_words=None):
    return Pipeline(
        [
            ("tfidf", TfidfVectorizer(min_df=2, stop_words=stop_words)),
            ("clf", LogisticRegression(C=10, max_iter=1000)),
        ]
    )


models = {
    "all words": pipeline().fit(X_train, y_train),
    f"without {TOKEN}": pipeline([TOKEN]).fit(X_train, y_train),
}
for name, model in models.items():
    print(
        f"{name:18s} accuracy on the validation split {model.score(X_val, y_val):.3f}, "
        f"on the clean test split {model.score(X_test, y_test):.3f}"
    )

# Both models explained on the same 150 validation messages, with the same perturbations; the
# top words of each class come from the global aggregation over the whole validation split.
comparison = compare_models(models, X_val, y=y_val, n_rows=150, random_state=0)
print()
print(comparison)
print("\nreliance on the stamp (share of explained messages whose anchor needs it):")
for name, share in comparison.reliance([TOKEN], by_class=True).items():
    print(f"  {name:18s} " + ", ".join(f"predicted {c}: {v:.2f}" for c, v in share.items()))
print("\na message the models predict differently, with each model's anchor:")
print(comparison.disagreements_.head(3).to_string())

axes = comparison.plot(n=8)
axes[0, 0].figure.savefig("compare_models.png", dpi=80)
print("\nwrote compare_models.png")

# Model selection: accuracy picks the stamp, the reliance scorer the pipeline without it.
search = GridSearchCV(
    pipeline(),
    {"tfidf__stop_words": [None, [TOKEN]]},
    scoring={"accuracy": "accuracy", "reliance": make_reliance_scorer([TOKEN], n_rows=40)},
    refit="reliance",
    cv=3,
).fit(X_train, y_train)
print("\ncross-validated on the training split:")
for params, accuracy, score in zip(
    search.cv_results_["params"],
    search.cv_results_["mean_test_accuracy"],
    search.cv_results_["mean_test_reliance"],
):
    print(
        f"  stop_words={params['tfidf__stop_words']}: accuracy {accuracy:.3f}, "
        f"1 - reliance {score:.3f}"
    )
print("chosen by the reliance scorer:", search.best_params_)
print(f"its accuracy on the clean test split: {search.best_estimator_.score(X_test, y_test):.3f}")
