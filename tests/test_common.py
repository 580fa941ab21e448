"""scikit-learn's common estimator checks for the tabular explainer and the discretizers.

Every check applies: none is skipped or expected to fail. LimeExplainer has its own in
tests/test_lime.py. The global aggregators are left out: they fit lists of documents, and the
checks feed numeric arrays.
"""

import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

from skanchors import AnchorExplainer
from skanchors.discretizers import EdgesDiscretizer, QuantileDiscretizer, TreeDiscretizer


class FirstFeatureModel:
    """A fixed model defined for any numeric input: P(class 1) is a step in the first feature.

    A class with a stable repr, so that test ids are the same in every pytest-xdist worker.
    """

    def __call__(self, X):
        X = np.asarray(X, dtype=float)
        p = np.where(X[:, 0] > 0.5, 0.9, 0.1)
        return np.column_stack([1 - p, p])

    def __repr__(self):
        return "FirstFeatureModel()"


@parametrize_with_checks(
    [
        QuantileDiscretizer(),
        QuantileDiscretizer(percentiles=[10, 90]),
        EdgesDiscretizer(edges={}, default="quartile"),
        TreeDiscretizer(),
        AnchorExplainer(
            FirstFeatureModel(), beam_size=1, max_anchor_size=2, batch_size=10, random_state=0
        ),
    ],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
