"""The tabular sampler's input: bad reference data and rows refused by name; column names."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from tabular_planted import (
    PlantedModel,
    row,
)

from skanchors import (
    AnchorExplainer,
    LimeExplainer,
    anchor_scorer,
)
from skanchors.discretizers import EdgesDiscretizer, QuantileDiscretizer
from skanchors.samplers import TabularSampler


# ----------------------------------------------------------------- bad input
def test_explain_before_fit():
    with pytest.raises(NotFittedError):
        AnchorExplainer(PlantedModel()).explain(row(0.5, "red"))


def test_model_without_predict_proba(data):
    class NoProba:
        def predict(self, X):
            return np.zeros(len(X))

    with pytest.raises(ValueError, match="'estimator' parameter"):
        AnchorExplainer(NoProba()).fit(data)


@pytest.mark.parametrize(
    "param, value",
    [
        ("threshold", 0.0),
        ("threshold", 1.5),
        ("delta", 1.0),
        ("epsilon", -0.1),
        ("beam_size", 0),
        ("batch_size", 0),
        ("max_anchor_size", 0),
        ("bandit", "ucb"),
    ],
)
def test_impossible_parameters(data, param, value):
    with pytest.raises(ValueError, match=f"'{param}' parameter"):
        AnchorExplainer(PlantedModel(), **{param: value}).fit(data)


def test_impossible_sampler_and_scorer_options(data):
    # the options that moved are checked where they live, naming the argument and its owner
    with pytest.raises(ValueError, match="The 'discretizer' parameter of TabularSampler"):
        AnchorExplainer(PlantedModel(), sampler=TabularSampler(discretizer="octile")).fit(data)
    for value in (0.0, 1.2):
        with pytest.raises(ValueError, match=r"threshold must be a number in \(0, 1\]"):
            anchor_scorer(threshold=value)
    with pytest.raises(ValueError, match=r"rows must be an integer in \[1, inf\) or None"):
        anchor_scorer(rows=0)
    with pytest.raises(ValueError, match=r"tolerance must be a number in \(0, inf\)"):
        anchor_scorer(tolerance=-1.0)


def test_wrong_columns_and_shapes(planted_explainer):
    with pytest.raises(ValueError, match=r"X has no column\(s\) \['x3'\], which the reference"):
        planted_explainer.explain(row(0.5, "red").drop(columns="x3"))
    # an extra column named as fit names it ("missing [], unknown ['extra']" before)
    with pytest.raises(ValueError, match=r"the column\(s\) \['extra'\] that the reference"):
        planted_explainer.explain(row(0.5, "red").assign(extra=1))
    with pytest.raises(ValueError, match="fitted on an array|fitted on a DataFrame|DataFrame"):
        planted_explainer.explain(np.zeros((1, 4)))
    with pytest.raises(ValueError, match="no rows"):
        planted_explainer.explain(row(0.5, "red").iloc[:0])
    with pytest.raises(ValueError, match="y has 2 entries"):
        planted_explainer.explain(row(0.5, "red"), y=[0, 1])
    with pytest.raises(ValueError, match="does not predict"):
        planted_explainer.explain(row(0.5, "red"), y=[7])


def test_text_in_a_numeric_column_is_refused_by_name(planted_explainer):
    bad = row(0.5, "red").astype({"x0": object})
    bad.loc[bad.index[0], "x0"] = "abc"
    with pytest.raises(ValueError, match="X column 'x0' is numeric .* holds 'abc'"):
        planted_explainer.explain(bad)
    as_text = row(0.9, "red").astype({"x0": str})  # numbers stored as text are numbers
    assert len(planted_explainer.sampler_.split(as_text)) == 1


def test_n_jobs_zero_is_refused_when_fitting(data):
    with pytest.raises(ValueError, match="'n_jobs' parameter .* Got 0"):
        AnchorExplainer(PlantedModel(), n_jobs=0).fit(data)


def test_array_shape_errors():
    X = np.random.default_rng(0).uniform(size=(50, 3))

    def model(X):
        return np.tile([0.5, 0.5], (len(X), 1))

    explainer = AnchorExplainer(model).fit(X)
    with pytest.raises(
        ValueError, match="X has 2 features, but TabularSampler is expecting 3 features"
    ):
        explainer.explain(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="Expected 2D array"):
        explainer.explain(np.zeros(3))
    with pytest.raises(ValueError, match="minimum of 2 is required"):
        AnchorExplainer(model).fit(X[:1])


def test_duplicate_and_alike_column_names_are_told_apart():
    # columns 1 and "1" were called "duplicate column names"
    model = lambda X: np.tile([0.5, 0.5], (len(X), 1))  # noqa: E731
    frame = pd.DataFrame([[0.0, 1.0, 2.0]] * 5, columns=["a", "b", "a"])
    with pytest.raises(ValueError, match=r"X has duplicate column names: \['a'\]\.$"):
        AnchorExplainer(model).fit(frame)
    frame.columns = [1, "1", "c"]
    with pytest.raises(ValueError, match=r"names read alike: \[1, '1'\]; rename them"):
        AnchorExplainer(model).fit(frame)


def test_an_object_column_with_true_and_1_is_refused():
    # True == 1 and they hash alike: the sampler kept one value for both, never drew the
    # other, and a model telling them apart got no anchor
    model = lambda X: np.tile([0.5, 0.5], (len(X), 1))  # noqa: E731
    import decimal

    for one in (1, decimal.Decimal(1)):
        mixed = pd.Series([True, one, "x", False, 2.5] * 4, dtype=object)
        with pytest.raises(ValueError, match=r"X column 'c' holds both True and the number 1"):
            AnchorExplainer(model).fit(pd.DataFrame({"c": mixed, "z": np.arange(20.0)}))
    fine = pd.Series([True, "1", "x", False, 2.5] * 4, dtype=object)  # "1" is not 1
    AnchorExplainer(model).fit(pd.DataFrame({"c": fine, "z": np.arange(20.0)}))


def test_infinite_reference_values_are_refused_by_column():
    X = pd.DataFrame({"a": [1.0, np.inf, 3.0], "b": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"\['a'\] of X hold infinite values"):
        AnchorExplainer(lambda X: np.tile([0.5, 0.5], (len(X), 1))).fit(X)


def test_all_nan_column_is_rejected():
    X = pd.DataFrame({"a": np.arange(10.0), "b": np.full(10, np.nan)})
    with pytest.raises(ValueError, match=r"\['b'\]: every value is NaN"):
        AnchorExplainer(lambda X: np.tile([0.5, 0.5], (len(X), 1))).fit(X)


@pytest.mark.parametrize("make", [AnchorExplainer, LimeExplainer])
@pytest.mark.parametrize("balance", [False, True])
def test_reference_data_the_model_was_not_fitted_on_is_refused_at_fit(make, balance):
    # the model's own error came at explain (or, with the compiled trees, none at all)
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    y = (X[:, 0] > 0).astype(int)
    frame = pd.DataFrame(X, columns=list("abcd"))
    on_array = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    on_frame = RandomForestClassifier(n_estimators=3, random_state=0).fit(frame, y)
    options = {"balance": True} if balance and make is AnchorExplainer else {}
    for model, data in [
        (on_array, X[:, :3]),
        (on_array.predict_proba, np.hstack([X, X])),
        (on_array, frame.iloc[:, :3]),
    ]:
        with pytest.raises(
            ValueError, match=r"X has \d feature\(s\), but the model was fitted on 4"
        ):
            make(model, **options).fit(data)
    with pytest.raises(ValueError, match=r"X lacks the column\(s\) \['a'\] that the model"):
        make(on_frame, **options).fit(frame.rename(columns={"a": "A"}))
    # a column the model never saw (a label left in the data) was accepted and anchored
    with pytest.raises(ValueError, match=r"X has the column\(s\) \['y'\] that the model was not"):
        make(on_frame, **options).fit(frame.assign(y=y))
    # an array for a model fitted on names was not counted
    for data in (X[:, :3], np.hstack([X, X])):
        with pytest.raises(ValueError, match=r"X has \d feature\(s\), but the model was fitted"):
            make(on_frame, **options).fit(data)
    make(on_frame, **options).fit(frame)
    make(on_array, **options).fit(X)
    make(on_array, **options).fit(frame)  # names the model never had: it counts columns


@pytest.mark.parametrize("make", [AnchorExplainer, LimeExplainer])
def test_columns_a_pipeline_drops_or_selects_by_name_are_not_required(make):
    # a ColumnTransformer fitted on [a, b, id] that drops id predicts on [a, b], but fit
    # refused [a, b] ("lacks ['id']"); a plain model given its columns in another order was
    # accepted and failed at explain in scikit-learn's words
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200), "id": range(200)})
    y = (X["a"] > 0).astype(int)
    pipe = make_pipeline(
        make_column_transformer((StandardScaler(), ["a", "b"]), remainder="drop"),
        LogisticRegression(),
    ).fit(X, y)
    make(pipe).fit(X[["a", "b"]])
    make(pipe).fit(X[["b", "a"]])  # selected by name: any order
    plain = RandomForestClassifier(n_estimators=3, random_state=0).fit(X[["a", "b"]], y)
    with pytest.raises(ValueError, match=r"another order .*pass X\[\['a', 'b'\]\]"):
        make(plain).fit(X[["b", "a"]])


@pytest.mark.parametrize("make", [AnchorExplainer, LimeExplainer])
@pytest.mark.parametrize("empty", [[], (), np.array([]), pd.Series([], dtype=object)])
def test_empty_reference_data_is_refused_in_words(make, empty):
    # a text model given [] got scikit-learn's "Expected 2D array, got 1D array instead"
    with pytest.raises(ValueError, match="X is empty: fit needs reference data"):
        make(lambda X: np.tile([0.5, 0.5], (len(X), 1))).fit(empty)


@pytest.mark.parametrize("make", [AnchorExplainer, LimeExplainer])
def test_date_and_duration_columns_are_refused_by_name(make):
    # they were taken as categories (every date its own, "when = 2020-11-06" covering 0.00)
    # and the anchor's to_json then failed on the Timestamp
    X = pd.DataFrame(
        {
            "a": np.arange(10.0),
            "when": pd.date_range("2020-01-01", periods=10, tz="UTC"),
            "wait": pd.to_timedelta(np.arange(10), unit="D"),
            "month": pd.period_range("2020-01", periods=10, freq="M"),
        }
    )
    model = lambda X: np.tile([0.5, 0.5], (len(X), 1))  # noqa: E731
    with pytest.raises(ValueError, match=r"\['when', 'wait', 'month'\] of X hold dates"):
        make(model).fit(X)
    with pytest.raises(ValueError, match=r"pd\.to_datetime\(X\['when'\]\)\.dt\.year"):
        make(model, sampler=TabularSampler(categorical_features=["when"])).fit(X[["a", "when"]])
    make(model).fit(X.assign(when=X["when"].dt.year)[["a", "when"]])  # numbers: fine
    # Python dates in an object column (.dt.date, read_sql) and categories that are dates
    # slipped through, and to_json failed on them later
    for held, kind in [
        (X["when"].dt.date.astype(object), "date"),
        (X["when"].astype("category"), "datetime64"),
        (pd.Series([pd.Timedelta(days=d) for d in range(10)], dtype=object), "timedelta"),
        (X["when"].dt.date.astype(object).astype("category"), "date"),  # categories of dates
        (pd.cut(X["when"], 3), "datetime64"),  # intervals of dates
    ]:
        with pytest.raises(ValueError, match=rf"\['day'\] of X hold dates.*{kind}"):
            make(model).fit(pd.DataFrame({"a": X["a"], "day": held}))


@pytest.mark.parametrize("dtype", ["object", "category"])
def test_all_missing_categorical_column_is_rejected(dtype):
    X = pd.DataFrame({"a": np.arange(10.0), "c": pd.Series([None] * 10, dtype=dtype)})
    with pytest.raises(ValueError, match=r"\['c'\]: every value is missing"):
        AnchorExplainer(lambda X: np.tile([0.5, 0.5], (len(X), 1))).fit(X)


def test_model_returning_wrong_shape(data):
    with pytest.raises(ValueError, match=r"shape \(n_inputs, n_classes\)"):
        AnchorExplainer(lambda X: np.zeros(len(X))).fit(data).explain(row(0.5, "red"))


def test_unknown_categorical_feature(data):
    with pytest.raises(ValueError, match="unknown feature 'nope'"):
        AnchorExplainer(PlantedModel(), sampler=TabularSampler(categorical_features=["nope"])).fit(
            data
        )


def test_edges_for_features_the_discretizer_does_not_see_are_refused():
    X = np.random.default_rng(0).uniform(size=(50, 2))
    for key in (5, -1):
        with pytest.raises(ValueError, match=f"feature index {key}, but there are 2 features"):
            EdgesDiscretizer(edges={key: [0.5]}).fit(X)
    # inside the explainer the discretizer sees the numeric columns only
    frame = pd.DataFrame({"s": ["u", "v"] * 25, "a": X[:, 0], "b": X[:, 1]})
    model = lambda Z: np.tile([0.5, 0.5], (len(Z), 1))  # noqa: E731
    with pytest.raises(ValueError, match="unknown feature 's'.*categorical ones are not binned"):
        AnchorExplainer(
            model, sampler=TabularSampler(discretizer=EdgesDiscretizer(edges={"s": [5]}))
        ).fit(frame)
    with pytest.raises(ValueError, match="feature index 2, but there are 2 features"):
        AnchorExplainer(
            model, sampler=TabularSampler(discretizer=EdgesDiscretizer(edges={2: [0.5]}))
        ).fit(frame)


def test_discretizers_name_the_columns_that_are_not_numbers():
    X = pd.DataFrame({"age": [5.0, 20.0, 40.0], "sex": ["m", "f", "m"], "c": list("abc")})
    X["c"] = X["c"].astype("category")
    for disc in (QuantileDiscretizer(), EdgesDiscretizer(edges={"age": [18]})):
        with pytest.raises(ValueError, match=r"column\(s\) \['sex', 'c'\] of X are not numeric"):
            disc.fit(X)
        with pytest.raises(ValueError, match=r"X holds values that are not .*'m'"):
            disc.fit(X.to_numpy())


def test_the_constant_feature_warning_names_constant_features_only():
    X = pd.DataFrame({"c": [3.0] * 6, "v": [1.0, 2, 3, 4, 5, np.nan]})
    with pytest.warns(UserWarning, match=r"\['c'\] have a single value"):
        QuantileDiscretizer().fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a feature left in one bin on purpose is not constant
        EdgesDiscretizer(edges={}, default="none").fit(X[["v"]])


def test_columns_named_by_numbers_and_strings_alike():
    # scikit-learn refuses a mix of int and str column names; the explainer takes them
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {0: rng.uniform(size=400), "b": rng.uniform(size=400), "c": rng.choice(["u", "v"], 400)}
    )

    def model(frame):
        p = ((frame[0] > 0.5) & (frame["c"] == "v")).to_numpy(float)
        return np.column_stack([1 - p, p])

    explainer = AnchorExplainer(
        model, sampler=TabularSampler(perturbation="replace"), random_state=0
    ).fit(X)
    x = pd.DataFrame({0: [0.9], "b": [0.1], "c": ["v"]})
    anchor = explainer.explain(x)[0]
    assert anchor.is_anchor and set(anchor.features) == {0, "c"}
    assert sorted(anchor.conditions()) == ["c = v", "column 0 > 0.797"]
    assert "THEN PREDICT 1" in str(anchor)
    covered = anchor.covers(X)
    assert (model(X[covered])[:, 1] == 1).all()


def test_edges_and_categorical_features_name_number_named_columns():
    # In pd.DataFrame(array) the names are numbers: edges={1: [50]} went to the second
    # numeric column (column 3), column 1 kept its quartiles; and categorical_features
    # [0, "c"] was read as the strings ["0", "c"] ("unknown feature '0'").
    from skanchors.discretizers import EdgesDiscretizer

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 100, size=(300, 3)), columns=[5, 3, 1])

    def model(frame):
        p = (frame[1] > 50).to_numpy(float)
        return np.column_stack([1 - p, p])

    disc = EdgesDiscretizer(edges={1: [50]})
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(discretizer=disc), random_state=0
    ).fit(X)
    assert [e.tolist() for e in explainer.sampler_.bin_edges_][2] == [50.0]
    assert disc.edges == {1: [50]}  # the user's discretizer is left as it was
    anchor = explainer.explain(X.iloc[[int(np.argmax(X[1]))]])[0]
    assert str(anchor).startswith("IF column 1 > 50.0 THEN PREDICT 1 WITH PRECISION 1.00")
    with pytest.raises(ValueError, match=r"no column of X is called 7"):
        AnchorExplainer(
            model, sampler=TabularSampler(discretizer=EdgesDiscretizer(edges={7: [1]}))
        ).fit(X)
    Y = X.assign(c=rng.choice(["u", "v"], 300))
    mixed = AnchorExplainer(
        model, sampler=TabularSampler(categorical_features=[0, "c"]), random_state=0
    ).fit(Y)
    assert mixed.sampler_.categorical_.tolist() == [True, False, False, True]
    # a number that names a column is that column (as for edges); others are positions
    named = AnchorExplainer(
        model, sampler=TabularSampler(categorical_features=[0, 1, "c"]), random_state=0
    ).fit(Y)
    assert named.sampler_.categorical_.tolist() == [True, False, True, True]
    with pytest.raises(ValueError, match="edges names feature 'c', which is categorical"):
        AnchorExplainer(
            model, sampler=TabularSampler(discretizer=EdgesDiscretizer(edges={"c": [1]}))
        ).fit(Y.rename(columns={5: "a"}))
