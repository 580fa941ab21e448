"""A planted tabular task shared by the explainer tests: data, models and fixtures."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier

from skanchors import (
    AnchorExplainer,
    NoAnchorWarning,
)
from skanchors.discretizers import EdgesDiscretizer
from skanchors.samplers import TabularSampler

COLOURS = ["blue", "green", "red"]


def planted_data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x0": rng.uniform(size=n),
            "x1": rng.uniform(size=n),
            "colour": pd.Categorical(rng.choice(COLOURS, size=n), categories=COLOURS),
            "x3": rng.normal(size=n),
        }
    )


class PlantedModel:
    """Predicts 1 iff x0 > 0.7 and colour == 'red'; counts calls and rows."""

    classes_ = np.array([0, 1])

    def __init__(self):
        self.calls = 0
        self.rows = 0

    def predict_proba(self, X):
        self.calls += 1
        self.rows += len(X)
        p = ((X["x0"].to_numpy() > 0.7) & (X["colour"].to_numpy() == "red")).astype(float)
        return np.column_stack([1 - p, p])


def row(x0, colour, x1=0.5, x3=0.0):
    return pd.DataFrame(
        {
            "x0": [x0],
            "x1": [x1],
            "colour": pd.Categorical([colour], categories=COLOURS),
            "x3": [x3],
        }
    )


@pytest.fixture(scope="module")
def data():
    return planted_data()


@pytest.fixture
def planted_explainer(data):
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    return AnchorExplainer(
        PlantedModel(), sampler=TabularSampler(discretizer=disc), random_state=0
    ).fit(data)


# ----------------------------------------------------------------- every parameter matters
def _explain(data, x, **params):
    params.setdefault("random_state", 0)
    explainer = AnchorExplainer(PlantedModel(), **params).fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        return explainer.explain(x)[0]


class Graded:
    """P(class 1) rises with x0 and x1: lower thresholds allow broader rules."""

    classes_ = np.array([0, 1])

    def predict_proba(self, X):
        score = 0.6 * X["x0"].to_numpy() + 0.4 * X["x1"].to_numpy()
        p = (score > 0.55).astype(float)
        return np.column_stack([1 - p, p])


def _graded(data, x, **params):
    params.setdefault("random_state", 0)
    explainer = AnchorExplainer(Graded(), **params).fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoAnchorWarning)
        return explainer.explain(x)[0]


# What an explanation cost (not what it says): it depends on what the prediction cache held.
_COSTS = ("wall_time", "n_model_calls", "n_rows_predicted")


def _content(anchor):
    d = anchor.to_dict()
    for key in _COSTS:
        d.pop(key)
    return d


class SlowPlantedModel(PlantedModel):
    """The planted model with a fixed cost of 5 ms per call (like a random forest's)."""

    def predict_proba(self, X):
        import time

        time.sleep(0.005)
        return super().predict_proba(X)


@pytest.fixture(scope="module")
def adult_model():
    from skanchors.datasets import load_adult

    X, y = load_adult(return_X_y=True)
    X_train, X_test = X.iloc[:20000], X.iloc[20000:]
    y_train = y.iloc[:20000]
    cat = list(X.select_dtypes("category").columns)
    pre = make_column_transformer(
        (
            OrdinalEncoder(
                handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=-2
            ),
            cat,
        ),
        remainder="passthrough",
    )
    model = make_pipeline(pre, DecisionTreeClassifier(max_depth=8, random_state=0))
    return model.fit(X_train, y_train), X_train, X_test
