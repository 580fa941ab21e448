"""Tune the explainer's threshold, beam width and predicates with GridSearchCV.

``fit`` only learns the reference data, and ``anchor_scorer`` measures how much of the held-out
fold the anchors cover while keeping precision 0.95 there (its ``threshold``), the same bar for
every setting, so cross-validation picks the broadest rules that are precise on unseen rows.
The sampler's options are tuned as ``sampler__<option>``. Run:
``python examples/grid_search.py``.
"""

import warnings

from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import GridSearchCV, train_test_split

from skanchors import AnchorExplainer, NoAnchorWarning, anchor_scorer
from skanchors.datasets import load_titanic
from skanchors.samplers import TabularSampler

X, y = load_titanic(return_X_y=True)
X = X.fillna({"Age": X["Age"].median()})
X = X.assign(Sex=X["Sex"].cat.codes, Embarked=X["Embarked"].cat.codes)
X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.3, random_state=0)
model = RandomForestClassifier(n_estimators=30, max_depth=5, random_state=0).fit(X_train, y_train)

search = GridSearchCV(
    AnchorExplainer(
        model, sampler=TabularSampler(categorical_features=["Sex", "Embarked"]), random_state=0
    ),
    {"threshold": [0.9, 0.95], "beam_size": [1, 2], "sampler__bounds": ["interval", "all"]},
    scoring=anchor_scorer(rows=6),
    cv=2,
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", NoAnchorWarning)
    search.fit(X_train)
print("best parameters:", search.best_params_, f"score {search.best_score_:.3f}")
for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
    print(f"  {params}: {score:.3f}")
print(search.best_estimator_.explain(X_test.iloc[[0]])[0])
