"""Submodular pick: four anchors that explain most Titanic passengers.

Anchors are explained for 30 held-out passengers; the greedy submodular pick (Ribeiro et al.
2018) then chooses the four rules that together cover the most held-out passengers, and checks
each rule's precision on them (the share of the passengers it covers for which the model
predicts the rule's class).

Run with ``python examples/submodular_pick.py`` (about 10 seconds).
"""

import time
import warnings

from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from skanchors import AnchorExplainer, pick
from skanchors.datasets import load_titanic

# Raw passengers: Sex and Embarked are pandas categories, which the model handles natively.
X, y = load_titanic(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
# Few trees: each prediction call costs about 0.1 ms per tree, and anchors make many calls.
model = HistGradientBoostingClassifier(max_iter=20, learning_rate=0.2, random_state=0)

# The perturbation batches are small: OpenMP threads would cost more than they save.
with threadpool_limits(1):
    model.fit(X_train, y_train)
    print(f"test accuracy: {model.score(X_test, y_test):.3f}")

    start = time.perf_counter()
    # BatchSAR evaluates all candidates of a round in one call: fewer, larger model calls.
    explainer = AnchorExplainer(model, bandit="batch-sar", random_state=0).fit(X_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few passengers have no rule above the threshold
        anchors = explainer.explain(X_test.iloc[:30])
    print(f"30 anchors in {time.perf_counter() - start:.1f} s\n")

    # Pick among the validated anchors only; rows without one are reported.
    valid = [a for a in anchors if a.is_anchor]
    print(f"{len(valid)} of {len(anchors)} passengers have an anchor")
    result = pick(valid, X_test, 4, model=model)

print(result)
print("\ncoverage curve:", " -> ".join(f"{c:.2f}" for c in result.coverage_curve))
for anchor, precision in zip(result.explanations, result.precision):
    print(f"  held-out precision {precision:.2f} (claimed {anchor.precision:.2f}): {anchor}")
