"""Anchors measured on real rows only: ``perturbation="reference"`` against ``"replace"``.

``perturbation="replace"`` replaces the values that break a rule, so rules are also tested on
value combinations the data lacks. ``perturbation="reference"`` draws the reference rows that
satisfy the rule, unchanged: broader rules, fewer predictions, but a rule needs enough rows to
be validated. The default, ``"auto"``, is the second where a rule validates and the first
elsewhere. Its reference data here is a validation split the model was not
fitted on: on its own training rows a model that memorises them would be judged on their
labels. The script explains the same Adult rows both ways and checks every rule on held-out
rows.

Run: ``python examples/tabular_reference_rows.py``.
"""

import time
import warnings

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from skanchors import AnchorExplainer, NoAnchorWarning
from skanchors.datasets import load_adult
from skanchors.samplers import TabularSampler

X, y = load_adult(return_X_y=True)
X_fit, X_rest, y_fit, _ = train_test_split(X, y, test_size=0.5, random_state=0)
X_valid, X_test = train_test_split(X_rest, test_size=0.5, random_state=0)
model = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0)
model.fit(X_fit, y_fit)
predicted = model.predict(X_test)
rows = X_test.iloc[:20]

for perturbation in ("replace", "reference"):
    sampler = TabularSampler(perturbation=perturbation)
    explainer = AnchorExplainer(model, sampler=sampler, beam_size=1, random_state=0).fit(X_valid)
    start = time.perf_counter()
    # Many small model calls: one OpenMP thread is faster than spinning up a pool for each.
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(rows)
    seconds = time.perf_counter() - start
    # Each valid rule on the test rows (the explained row itself left out): pooled precision.
    checks = [a.check(X_test, predicted, exclude=i) for i, a in enumerate(anchors) if a.is_anchor]
    covered = sum(c.n_covered for c in checks)
    right = sum(c.precision * c.n_covered for c in checks if c.n_covered)
    valid = [a for a in anchors if a.is_anchor]
    print(f'perturbation="{perturbation}"')
    print(
        f"  {seconds:.2f} s for {len(rows)} rows, "
        f"{sum(a.n_rows_predicted for a in anchors)} rows predicted, "
        f"{len(valid)} valid anchors of mean length "
        f"{np.mean([len(a.predicates) for a in valid]):.2f}"
    )
    print(
        f"  held-out precision of the valid anchors, pooled: {right / max(covered, 1):.3f} "
        f"on {covered} covered test rows"
    )
    print(f"  e.g. {anchors[0]}\n")
