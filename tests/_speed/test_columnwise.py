"""A Pipeline's ColumnTransformer computed from per-column tables (skanchors._speed.columnwise)."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    StandardScaler,
)

from skanchors import AnchorExplainer
from skanchors._speed.columnwise import ColumnwiseHead
from skanchors._speed.pipeline import _PipelineProba
from skanchors.datasets import load_titanic
from skanchors.models import ProbabilityModel, RegressionModel


def _titanic():
    X, y = load_titanic(return_X_y=True)
    return X, y


def _dense_one_hot():
    return OneHotEncoder(handle_unknown="ignore", sparse_output=False)


def _heads():
    """ColumnTransformers made of column-wise parts only: every kind of layout."""
    return {
        "one-hot + imputer + passthrough": make_column_transformer(
            (_dense_one_hot(), ["Sex", "Embarked"]),
            (SimpleImputer(), ["Age"]),
            remainder="passthrough",
        ),
        "nested pipeline, scalers, ordinal": make_column_transformer(
            (
                make_pipeline(SimpleImputer(strategy="most_frequent"), _dense_one_hot()),
                ["Embarked", "Pclass"],
            ),
            (make_pipeline(SimpleImputer(), StandardScaler()), ["Age", "Fare"]),
            (OrdinalEncoder(), ["Sex"]),
            (MinMaxScaler(), ["SibSp", "Parch"]),
        ),
        "sparse output": make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["Sex", "Embarked", "Pclass"]),
            (make_pipeline(SimpleImputer(), StandardScaler()), ["Age"]),
            remainder="passthrough",
            sparse_threshold=1.0,
        ),
        "columns dropped": make_column_transformer(
            (_dense_one_hot(), ["Sex"]), ("passthrough", ["Fare", "Pclass"]), remainder="drop"
        ),
    }


def _counting(transformer):
    """Count the calls of ``transformer.transform`` (an instance attribute shadows it)."""
    calls = []
    own = type(transformer).transform

    def transform(X):
        calls.append(len(X))
        return own(transformer, X)

    transformer.transform = transform
    return calls


@pytest.mark.parametrize("name", list(_heads()))
def test_the_tables_give_the_transformers_output_exactly(name):
    X, y = _titanic()
    pipe = make_pipeline(_heads()[name], LogisticRegression(max_iter=1000)).fit(X[:600], y[:600])
    model = ProbabilityModel(pipe)
    head = model._fn.head
    assert isinstance(model._fn, _PipelineProba) and isinstance(head, ColumnwiseHead)
    rng = np.random.default_rng(0)
    batches = [X[600:], X[600:601]] + [X.iloc[rng.choice(len(X), 40)] for _ in range(10)]
    # values the reference never had: an unseen category, a new age, missing fares
    odd = X[600:620].copy()
    odd["Embarked"] = pd.Categorical(["Q", "X"] * 10, categories=["C", "Q", "S", "X"])
    odd["Age"] = 123.5
    odd.loc[odd.index[::3], "Fare"] = np.nan
    batches.append(odd)
    for batch in batches:
        transformed, ours = pipe[:-1].transform(batch), head.transform(batch)
        assert type(ours) is type(transformed)
        if hasattr(ours, "toarray"):  # sparse: the same layout too (checked by the head)
            assert np.array_equal(ours.indices, transformed.indices)
            ours, transformed = ours.toarray(), transformed.toarray()
        assert np.array_equal(ours, transformed, equal_nan=True)
    for batch in batches[:3]:
        assert np.array_equal(model.predict_proba(batch), pipe.predict_proba(batch))
    assert head.engaged and not head.disabled


def test_after_learning_the_reference_data_no_call_reaches_the_transformer():
    X, y = _titanic()
    head = _heads()["one-hot + imputer + passthrough"]
    pipe = make_pipeline(head, GradientBoostingClassifier(random_state=0)).fit(X[:600], y[:600])
    model = ProbabilityModel(pipe)
    calls = _counting(head)
    model.prepare(X[:600])
    assert len(calls) == 1  # every value of every column in one call
    rng = np.random.default_rng(1)
    # rows recombined column by column from the reference rows, as perturbations are
    mixed = pd.DataFrame(
        {c: X[c].iloc[rng.integers(0, 600, 200)].to_numpy() for c in X.columns}
    ).astype(X.dtypes.to_dict())
    for k in range(5):
        batch = mixed.iloc[40 * k : 40 * (k + 1)]
        assert np.array_equal(model.predict_proba(batch), pipe.predict_proba(batch))
    # the first two calls are checked against the transformer, then only the tables serve
    # (the pipeline's own predict_proba above adds one call each)
    assert len(calls) == 1 + 2 + 5
    assert model._fn.head.engaged


@pytest.mark.parametrize(
    "head",
    [
        make_column_transformer((FunctionTransformer(np.log1p), ["Fare"]), remainder="drop"),
        make_column_transformer((PolynomialFeatures(2), ["Fare", "Pclass"]), remainder="drop"),
        make_column_transformer((KBinsDiscretizer(n_bins=3), ["Fare"]), remainder="drop"),
    ],
    ids=["function", "polynomial", "k-bins"],
)
def test_heads_that_are_not_column_wise_are_left_alone(head):
    X, y = _titanic()
    pipe = make_pipeline(head, LogisticRegression(max_iter=1000)).fit(X[:600], y[:600])
    assert ColumnwiseHead.make(pipe[:-1]) is None
    model = ProbabilityModel(pipe)
    assert not isinstance(getattr(model._fn, "head", None), ColumnwiseHead)
    assert np.array_equal(model.predict_proba(X[600:]), pipe.predict_proba(X[600:]))


def test_an_encoder_that_warns_of_unknown_values_is_left_to_warn():
    # the tables warned of an unknown category on the first call only, the encoder on each
    X = pd.DataFrame({"c": list("aabbc") * 20, "x": np.arange(100.0)})
    y = (X.c == "a") ^ (X.x > 50)
    encoder = OneHotEncoder(handle_unknown="warn")
    pipe = make_pipeline(
        make_column_transformer((encoder, ["c"]), remainder="passthrough"), LogisticRegression()
    ).fit(X, y)
    assert ColumnwiseHead.make(pipe[:-1]) is None
    model = ProbabilityModel(pipe)
    new = pd.DataFrame({"c": ["zz", "a"], "x": [1.0, 2.0]})
    expected = pipe.predict_proba(new)
    for _ in range(3):
        with pytest.warns(UserWarning, match="unknown categories"):
            proba = model.predict_proba(new)
        assert np.array_equal(proba, expected)


def test_a_subclass_of_a_known_transformer_is_left_alone():
    class Doubled(StandardScaler):
        def transform(self, X, copy=None):
            return 2 * super().transform(X, copy=copy)

    X, _ = _titanic()
    head = make_column_transformer((Doubled(), ["Fare", "Pclass"]), remainder="drop").fit(X)
    assert ColumnwiseHead.make(head) is None


def test_pandas_output_or_a_wrong_layout_fall_back_to_the_transformer_for_good():
    X, y = _titanic()
    head = _heads()["one-hot + imputer + passthrough"]
    pipe = make_pipeline(head, LogisticRegression(max_iter=1000)).fit(X[:600], y[:600])
    wrong = ColumnwiseHead.make(pipe[:-1])
    # the outputs of two input columns (Age, Fare: one each) swapped: the first call's
    # check must catch it
    single = [k for k, (_, cols) in enumerate(wrong.layout) if len(cols) == 1]
    a, b = (wrong.layout[k] for k in single[:2])
    wrong.layout[single[0]], wrong.layout[single[1]] = (a[0], b[1]), (b[0], a[1])
    out = wrong.transform(X[600:])
    assert np.array_equal(out, head.transform(X[600:]), equal_nan=True)
    assert wrong.disabled and not wrong.engaged
    assert np.array_equal(wrong.transform(X[:10]), head.transform(X[:10]), equal_nan=True)

    framed = (
        make_column_transformer((_dense_one_hot(), ["Sex"]), remainder="drop")
        .set_output(transform="pandas")
        .fit(X)
    )
    tables = ColumnwiseHead.make(framed)
    result = tables.transform(X[:30])
    assert isinstance(result, pd.DataFrame) and tables.disabled


def test_explanations_are_the_same_and_pickling_keeps_the_tables():
    X, y = _titanic()
    pipe = make_pipeline(
        _heads()["nested pipeline, scalers, ordinal"], GradientBoostingClassifier(random_state=0)
    ).fit(X[:600], y[:600])
    options = dict(random_state=0, beam_size=1)
    fast = AnchorExplainer(pipe, **options).fit(X[:600])
    plain = AnchorExplainer(pipe.predict_proba, **options).fit(X[:600])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in (600, 601, 605):
            a, b = fast.explain(X.iloc[[i]])[0], plain.explain(X.iloc[[i]])[0]
            assert str(a) == str(b)
            assert (a.n_model_calls, a.n_rows_predicted) == (b.n_model_calls, b.n_rows_predicted)
        head = fast.model_._fn.head
        assert isinstance(head, ColumnwiseHead) and head.engaged
        copy = pickle.loads(pickle.dumps(fast))
        again = copy.explain(X.iloc[[610]])[0]
        assert str(again) == str(plain.explain(X.iloc[[610]])[0])
        assert copy.model_._fn.head.engaged


def test_a_regression_pipeline_learns_its_tables_too():
    X, _ = _titanic()
    features, fare = X.drop(columns="Fare"), X["Fare"]
    head = make_column_transformer(
        (_dense_one_hot(), ["Sex", "Embarked"]),
        (SimpleImputer(), ["Age"]),
        remainder="passthrough",
    )
    pipe = make_pipeline(head, GradientBoostingRegressor(random_state=0))
    pipe.fit(features[:600], fare[:600])
    model = RegressionModel(pipe)
    calls = _counting(head)
    model.prepare(features[:600])
    for batch in (features[:50], features[50:300], features[300:600]):
        assert np.array_equal(model.predict(batch), pipe.predict(batch))
    # (two checked calls, then the tables; the pipeline's own predict adds one call each)
    assert len(calls) == 1 + 2 + 3 and model._fn.head.engaged


def test_tables_give_up_on_inputs_that_never_repeat_a_value(monkeypatch):
    import skanchors._speed.columnwise as columnwise

    monkeypatch.setattr(columnwise, "_MAX_VALUES", 1000)
    X, y = _titanic()
    pipe = make_pipeline(
        _heads()["one-hot + imputer + passthrough"], LogisticRegression(max_iter=1000)
    ).fit(X[:600], y[:600])
    model = ProbabilityModel(pipe)
    model.prepare(X[:600])
    head = model._fn.head
    assert not head.disabled
    rng = np.random.default_rng(2)
    for _ in range(4):  # 300 fares never seen before each time
        batch = X[:300].copy()
        batch["Fare"] = rng.uniform(0, 500, 300)
        assert np.array_equal(model.predict_proba(batch), pipe.predict_proba(batch))
    assert head.disabled and not head.engaged


def test_steps_after_the_transformer_run_on_its_assembled_output():
    X, y = _titanic()
    head = _heads()["sparse output"]
    pipe = make_pipeline(head, StandardScaler(with_mean=False), LogisticRegression(max_iter=1000))
    pipe.fit(X[:600], y[:600])
    model = ProbabilityModel(pipe)
    tables = model._fn.head
    assert isinstance(tables, ColumnwiseHead) and len(tables.then) == 1
    calls = _counting(head)
    model.prepare(X[:600])
    for batch in (X[:100], X[100:300], X[300:600]):
        assert np.array_equal(model.predict_proba(batch), pipe.predict_proba(batch))
    assert len(calls) == 1 + 2 + 3 and tables.engaged


def test_tables_give_up_on_a_one_hot_id_column_before_making_them():
    # 10,000 IDs one-hot encoded: learning the reference data made a dense 100,000 x 10,000
    # array (8.7 GB at fit, 21 s) for tables of 10,000 x 10,000
    rng = np.random.default_rng(0)
    n, ids = 20_000, 6_000
    X = pd.DataFrame(
        {
            "id": pd.Categorical([f"id{i}" for i in rng.integers(0, ids, n)]),
            "x": rng.normal(size=n),
        }
    )
    y = (X["x"] > 0).astype(int)
    pipe = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["id"]), remainder="passthrough"
        ),
        LogisticRegression(),
    ).fit(X, y)
    model = ProbabilityModel(pipe)
    model.prepare(X)  # (the explainer's fit) 6,000 x 6,001 cells: over the budget
    head = model._fn.head
    assert head.disabled and all(table is None for table in head._tables.values())
    assert np.array_equal(model.predict_proba(X[:50]), pipe.predict_proba(X[:50]))
