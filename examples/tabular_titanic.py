"""Explain a gradient-boosting model on the raw Titanic table; check the rules on held-out data
and on fresh perturbations.

Run: ``python examples/tabular_titanic.py`` (writes ``titanic_anchor.png`` when matplotlib is
installed).
"""

import warnings

from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from skanchors import AnchorExplainer, NoAnchorWarning
from skanchors.datasets import load_titanic

X, y = load_titanic(return_X_y=True)  # categories and NaN included, no encoding needed
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
model = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0)
model.fit(X_train, y_train)

explainer = AnchorExplainer(model, threshold=0.95, random_state=0).fit(X_train)
# Many small model calls: one OpenMP thread is faster than spinning up a pool for each.
with threadpool_limits(limits=1), warnings.catch_warnings():
    warnings.simplefilter("ignore", NoAnchorWarning)
    anchors = explainer.explain(X_test.iloc[:8])

predicted = model.predict(X_test)
for i, anchor in enumerate(anchors):
    mask = anchor.covers(X_test)
    mask[i] = False  # the explained passenger itself does not count
    held_out = (predicted[mask] == anchor.prediction).mean() if mask.any() else float("nan")
    # and on 2,000 fresh perturbations of D(z | A), which the search never saw
    fresh = explainer.perturbation_precision(anchor, n_samples=2000, random_state=i)
    print(anchor)
    print(f"   held-out: precision {held_out:.3f} on {mask.sum()} passengers")
    print(f"   fresh perturbations: precision {fresh:.3f}\n")

try:
    import matplotlib

    matplotlib.use("Agg")
    ax = anchors[0].plot()
    ax.figure.savefig("titanic_anchor.png", bbox_inches="tight")
    print("wrote titanic_anchor.png")
except ImportError:
    print("matplotlib is not installed: pip install 'skanchors[plot]' for Anchor.plot()")
