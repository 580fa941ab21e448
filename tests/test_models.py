"""The model adapters: ``ProbabilityModel`` and its faster paths for scikit-learn forests and
gradient boosting. Forest tests run with both tree traversals: scikit-learn's, and the
compiled one of :mod:`skanchors._trees` (skipped without numba, the ``fast`` extra)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from skanchors import AnchorExplainer, _trees, models
from skanchors import explainer as explainer_module
from skanchors._speed import boosting as speed_boosting
from skanchors._speed import forest as speed_forest
from skanchors._speed.boosting import _BoostingProba, _BoostingRegression
from skanchors._speed.forest import _ForestProba, _ForestRegression
from skanchors._speed.hist_boosting import _HistBoostingProba, _HistBoostingRegression
from skanchors._speed.pipeline import _PipelineProba
from skanchors.datasets import load_titanic
from skanchors.models import ProbabilityModel, RegressionModel

# small forests on noisy data: some rows have no anchor, which is not what is tested here
pytestmark = pytest.mark.filterwarnings("ignore:Row .*no rule reached")


def _data(n=400, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    score = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n)
    edges = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    y = (
        np.array(["low", "mid", "high"])[np.searchsorted(edges, score)]
        if n_classes == 3
        else (score > 0).astype(int)
    )
    return X, y


@pytest.fixture(params=["sklearn", "compiled"])
def traversal(request, monkeypatch):
    """Which tree traversal a forest adapter uses: scikit-learn's trees one by one, or the
    compiled one (numba)."""
    if request.param == "compiled":
        if _trees.kernels() is None:
            pytest.skip("numba (the fast extra) is not installed")
    else:
        monkeypatch.setenv("SKANCHORS_NUMBA", "0")
    return request.param


@pytest.fixture
def sklearn_traversal(monkeypatch):
    monkeypatch.setenv("SKANCHORS_NUMBA", "0")


FORESTS = {
    "rf": lambda: RandomForestClassifier(n_estimators=30, random_state=0),
    "rf-weighted": lambda: RandomForestClassifier(
        n_estimators=30, class_weight="balanced", max_depth=6, random_state=0
    ),
    "extra-trees": lambda: ExtraTreesClassifier(n_estimators=30, random_state=0),
}


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", list(FORESTS))
def test_a_forest_is_predicted_by_its_trees_to_the_last_bit(name, n_classes, traversal):
    X, y = _data(n_classes=n_classes)
    forest = FORESTS[name]().fit(X[:300], y[:300])
    model = ProbabilityModel(forest)
    assert isinstance(model._fn, _ForestProba)
    assert (model._fn._compiled() is not None) == (traversal == "compiled")
    X_new = np.random.default_rng(1).normal(size=(257, 5))
    for batch in (X_new, X_new[:1], X_new[3:40]):
        assert np.array_equal(model.predict_proba(batch), forest.predict_proba(batch))
    # the first call compared the two and kept the fast path
    assert model._fn.verified is True
    assert list(model.classes_) == list(forest.classes_)


def test_large_batches_are_traversed_in_leaf_order_to_the_same_bits(monkeypatch, sklearn_traversal):
    # Rows are traversed grouped by the leaves they reach in the first trees (faster: nodes
    # stay in cache) and put back in place; each row still sums its trees in forest order.
    X, y = _data(n_classes=3)
    forest = RandomForestClassifier(n_estimators=30, random_state=0).fit(X[:300], y[:300])
    model = ProbabilityModel(forest)
    orders = []
    lexsort = np.lexsort

    def spy(keys):
        orders.append(lexsort(keys))
        return orders[-1]

    monkeypatch.setattr(np, "lexsort", spy)
    X_new = np.random.default_rng(2).normal(size=(2000, 5))
    assert np.array_equal(model.predict_proba(X_new), forest.predict_proba(X_new))
    assert model._fn.verified is True
    assert len(orders) == 1 and not np.array_equal(orders[0], np.arange(2000))
    again = model.predict_proba(X_new[::-1])
    assert len(orders) == 2 and np.array_equal(again, forest.predict_proba(X_new[::-1]))
    small = X_new[: speed_forest._SORT_ROWS_FROM - 1]
    assert np.array_equal(model.predict_proba(small), forest.predict_proba(small))
    assert len(orders) == 2  # small batches are traversed as they come


class _CountingTree:
    """A tree's ``tree_`` that counts the rows it predicts (the forest's own path too)."""

    def __init__(self, tree, seen):
        self.tree, self.seen = tree, seen

    def predict(self, X):
        self.seen.append(len(X))
        return self.tree.predict(X)

    def __getattr__(self, name):
        return getattr(self.tree, name)


def _count_rows_per_tree(forest):
    seen = [[] for _ in forest.estimators_]
    for est, rows in zip(forest.estimators_, seen):
        est.tree_ = _CountingTree(est.tree_, rows)
    return seen


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_forest_stops_traversing_rows_whose_class_is_decided(n_classes, sklearn_traversal):
    # Classes far apart: every tree votes for the same class. After half the trees (20) a
    # row leads by 20 votes, which the 20 trees left could still tie; at the next checkpoint
    # (24 trees) it leads by 24 against 16, and the last 16 trees are not traversed.
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(n_classes), 100)
    X = rng.normal(size=(len(y), 4)) + 10.0 * y[:, None]
    forest = RandomForestClassifier(n_estimators=40, random_state=0).fit(X, y)
    model = ProbabilityModel(forest)
    X_new = rng.normal(size=(90, 4)) + 10.0 * (np.arange(90) % n_classes)[:, None]
    model.predict_proba(X_new[:5])  # the first call checks the fast path against the forest
    seen = _count_rows_per_tree(forest)
    labels = model.predict_index(X_new)
    assert [sum(rows) for rows in seen] == [90] * 24 + [0] * 16
    assert np.array_equal(labels, forest.predict_proba(X_new).argmax(axis=1))
    assert np.array_equal(labels, np.arange(90) % n_classes)
    # the probabilities themselves still come from every tree
    assert np.array_equal(model.predict_proba(X_new), forest.predict_proba(X_new))


def test_a_class_is_decided_only_when_the_trees_left_cannot_change_it(traversal):
    # The second half of the trees are the first half's mirror images (same splits, the
    # classes swapped): every row ends in an exact tie, which argmax gives to class 0. After
    # the first half, rows that all those trees put in class 1 lead by exactly the number
    # of trees still to come; deciding them then (one tree too soon) would say class 1.
    X, y = _data(n=600)
    first = RandomForestClassifier(n_estimators=25, random_state=0).fit(X, y)
    mirror = RandomForestClassifier(n_estimators=25, random_state=0).fit(X, 1 - y)
    forest = RandomForestClassifier(n_estimators=50, random_state=0).fit(X, y)
    forest.estimators_ = first.estimators_ + mirror.estimators_
    model = ProbabilityModel(forest)
    X_new = np.random.default_rng(3).normal(size=(300, 5))
    model.predict_proba(X_new[:5])
    assert np.all(forest.predict_proba(X_new) == 0.5)
    assert (first.predict_proba(X_new)[:, 1] == 1.0).sum() > 10  # unanimous for class 1
    for batch in (X_new, X_new[:40]):  # leaf-ordered and as they come
        assert np.array_equal(model.predict_index(batch), np.zeros(len(batch), dtype=int))


@pytest.mark.parametrize("name", list(FORESTS))
def test_the_predicted_classes_of_a_forest_are_its_argmax(name, traversal):
    for n_classes in (2, 3):
        X, y = _data(n_classes=n_classes)
        forest = FORESTS[name]().fit(X[:300], y[:300])
        model = ProbabilityModel(forest)
        X_new = np.random.default_rng(1).normal(size=(600, 5))
        before = model.predict_index(X_new[:10])  # not verified yet: the probabilities' argmax
        assert np.array_equal(before, forest.predict_proba(X_new[:10]).argmax(axis=1))
        for batch in (X_new, X_new[:1], X_new[3:40]):
            expected = forest.predict_proba(batch).argmax(axis=1)
            assert np.array_equal(model.predict_index(batch), expected)
        assert model._fn.verified is True and model._fn.engaged


def test_a_forest_fitted_on_a_dataframe_takes_the_fast_path_only_with_its_own_columns():
    X, y = _data()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(5)])
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(frame, y)
    fast = ProbabilityModel(forest)._fn
    assert fast._dense(frame) is not None
    assert np.array_equal(fast(frame), forest.predict_proba(frame))
    assert fast.verified is True
    # other column order: the forest's own error
    with pytest.raises(ValueError, match="feature names"):
        fast(frame[frame.columns[::-1]])
    # pandas' nullable and categorical columns: the forest converts them itself
    for dtype in ("Float64", "category"):
        other = frame.astype({"f0": dtype})
        assert fast._dense(other) is None
        assert np.array_equal(fast(other), forest.predict_proba(other))
    # a bare array: the forest's own warning, and its probabilities
    assert fast._dense(X) is None
    with pytest.warns(UserWarning, match="feature names"):
        proba = fast(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(proba, forest.predict_proba(X))


def test_input_the_forest_treats_specially_goes_to_the_forest():
    X, y = _data()
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    fast = ProbabilityModel(forest)._fn
    fast(X[:10])
    assert fast.verified is True
    with pytest.raises(ValueError, match="features"):
        fast(X[:, :4])
    with pytest.raises(ValueError, match="0 sample"):
        fast(X[:0])
    with pytest.raises(ValueError, match="infinity|too large"):
        fast(np.where(np.arange(5) == 2, np.inf, X[:10]))
    # NaN: whatever the forest does with it (scikit-learn >= 1.4 routes missing values)
    X_nan = X[:10].copy()
    X_nan[0, 1] = np.nan
    assert fast._dense(X_nan) is None
    try:
        expected = forest.predict_proba(X_nan)
    except ValueError:
        with pytest.raises(ValueError):
            fast(X_nan)
    else:
        assert np.array_equal(fast(X_nan), expected)


def test_the_fast_path_is_dropped_for_good_when_it_disagrees_with_the_forest():
    X, y = _data()
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    original = forest.predict_proba
    shifted = original(X[:10])[:, ::-1]
    calls = []

    def reference(batch):
        calls.append(len(batch))
        return original(batch)[:, ::-1]

    fast = _ForestProba(forest)
    forest.predict_proba = reference  # an instance attribute: the forest now disagrees
    assert np.array_equal(fast(X[:10]), shifted)
    assert fast.verified is None
    assert np.array_equal(fast(X[:10]), shifted)
    assert calls == [10, 10]


class _Doubled(RandomForestClassifier):
    def predict_proba(self, X):
        return super().predict_proba(X) ** 2


class _Sharpened(GradientBoostingClassifier):
    def decision_function(self, X):
        return 2 * super().decision_function(X)


@pytest.mark.parametrize(
    "make",
    [
        lambda: _Doubled(n_estimators=10, random_state=0),
        lambda: RandomForestClassifier(n_estimators=10, n_jobs=2, random_state=0),
        lambda: _Sharpened(n_estimators=10, random_state=0),
        # an initial estimator whose raw prediction differs from row to row
        lambda: GradientBoostingClassifier(
            n_estimators=10, init=LogisticRegression(), random_state=0
        ),
    ],
    ids=["overridden-predict_proba", "parallel-forest", "overridden-boosting", "boosting-init"],
)
def test_other_models_are_called_as_they_are(make):
    X, y = _data()
    est = make().fit(X, y)
    model = ProbabilityModel(est)
    assert model._fn == est.predict_proba
    assert np.array_equal(model.predict_proba(X[:20]), est.predict_proba(X[:20]))


BOOSTING = {
    "prior": {},
    "zero-init": {"init": "zero"},
    "exponential-loss": {"loss": "exponential"},
    "subsampled": {"subsample": 0.7, "learning_rate": 0.3, "max_depth": 4},
}


@pytest.mark.parametrize(
    "name, n_classes",
    # (the exponential loss is for two classes only)
    [(name, k) for name in BOOSTING for k in (2, 3) if not (name == "exponential-loss" and k == 3)],
)
def test_gradient_boosting_is_predicted_without_validation_to_the_last_bit(name, n_classes):
    X, y = _data(n_classes=n_classes)
    boost = GradientBoostingClassifier(n_estimators=40, random_state=0, **BOOSTING[name])
    boost.fit(X[:300], y[:300])
    model = ProbabilityModel(boost)
    assert isinstance(model._fn, _BoostingProba)
    X_new = np.random.default_rng(1).normal(size=(300, 5))
    for batch in (X_new, X_new[:1], X_new[3:40]):
        assert np.array_equal(model.predict_proba(batch), boost.predict_proba(batch))
    assert model._fn.verified is True and model._fn.engaged
    assert not model.favours_large_batches
    assert list(model.classes_) == list(boost.classes_)
    # the class of each row, as the argmax of predict_proba gives it
    for batch in (X_new, X_new[:1]):
        assert np.array_equal(model.predict_index(batch), boost.predict_proba(batch).argmax(1))
    # two classes with the log loss compare the two probabilities without building them
    assert model._fn._binary is (n_classes == 2 and name != "exponential-loss")


def test_gradient_boosting_labels_break_ties_as_the_argmax_does(monkeypatch):
    # A raw score too small to move expit off 0.5 gives two equal probabilities: the argmax
    # takes the first class, where the sign of the raw score would say the second.
    X, y = _data()
    boost = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)
    fast = _BoostingProba(boost)
    fast(X[:10])  # verified
    raw = np.array([[1e-20], [-1e-20], [0.3], [-0.3], [0.0]])
    monkeypatch.setattr(fast, "_raw", lambda batch: raw.copy())
    expected = boost._loss.predict_proba(raw.ravel()).argmax(axis=1)
    assert expected.tolist() == [0, 0, 1, 0, 0]
    assert fast.labels(X[:5]).tolist() == expected.tolist()
    assert fast._binary is True


def test_gradient_boosting_input_it_treats_specially_goes_to_it():
    X, y = _data()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(5)])
    boost = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(frame, y)
    fast = ProbabilityModel(boost)._fn
    assert np.array_equal(fast(frame[:30]), boost.predict_proba(frame[:30]))
    assert fast.verified is True and fast.engaged
    with pytest.raises(ValueError, match="feature names"):
        fast(frame[frame.columns[::-1]])
    assert not fast.engaged
    with pytest.raises(ValueError, match="NaN"):  # gradient boosting has no missing values
        fast(frame.mask(frame > 1.5))
    with pytest.warns(UserWarning, match="feature names"):
        fast(X[:5])


def test_gradient_boosting_keeps_to_predict_proba_without_sklearns_stage_loop(monkeypatch):
    # The stage loop lives in a private scikit-learn module: where it is missing, the model is
    # called as it is.
    X, y = _data()
    boost = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)
    monkeypatch.setattr(speed_boosting, "_predict_stages", lambda: None)
    assert ProbabilityModel(boost)._fn == boost.predict_proba


def test_gradient_boosting_that_disagrees_is_called_as_it_is_for_good():
    X, y = _data()
    boost = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)
    fast = _BoostingProba(boost)
    original = boost.predict_proba
    boost.predict_proba = lambda batch: original(batch)[:, ::-1]
    assert np.array_equal(fast(X[:10]), original(X[:10])[:, ::-1])
    assert fast.verified is None
    assert np.array_equal(fast(X[10:20]), original(X[10:20])[:, ::-1]) and not fast.engaged


def test_a_pipeline_ending_in_gradient_boosting_takes_the_fast_path():
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), GradientBoostingClassifier(n_estimators=20))
    pipe.fit(X, y)
    model = ProbabilityModel(pipe)
    assert isinstance(model._fn.final, _BoostingProba)
    assert np.array_equal(model.predict_proba(X[:50]), pipe.predict_proba(X[:50]))
    assert model._fn.final.verified is True


def _titanic_hist_boosting(**options):
    X, y = load_titanic(return_X_y=True)
    model = HistGradientBoostingClassifier(max_iter=30, random_state=0, **options)
    return X, model.fit(X[:600], y[:600])


def test_hist_gradient_boosting_on_raw_pandas_is_predicted_to_the_last_bit():
    # categorical columns (pandas categories), NaN in numbers and categories, as the README
    X, model = _titanic_hist_boosting(categorical_features="from_dtype")
    fast = ProbabilityModel(model)._fn
    assert isinstance(fast, _HistBoostingProba)
    rest = X[600:].copy()
    rest.loc[rest.index[:5], "Embarked"] = np.nan
    for batch in (rest, rest.iloc[:1], X[:600]):
        assert np.array_equal(fast(batch), model.predict_proba(batch))
    assert fast.verified is True and fast.engaged
    # the same categories listed in another order, and a category the model never saw
    other = rest.astype({"Sex": pd.CategoricalDtype(["male", "female"])})
    other["Embarked"] = other["Embarked"].cat.add_categories(["X"])
    other.loc[other.index[:3], "Embarked"] = "X"
    assert np.array_equal(fast(other), model.predict_proba(other)) and fast.engaged
    # text columns encoded by the model itself (categorical_features by name)
    plain = rest.astype({"Sex": object, "Embarked": object})
    plain.loc[plain.index[5], "Sex"] = "unknown"
    text_model = HistGradientBoostingClassifier(
        max_iter=30, categorical_features=["Sex", "Embarked"], random_state=0
    ).fit(X[:600].astype({"Sex": object, "Embarked": object}), np.arange(600) % 3)
    text_fast = ProbabilityModel(text_model)._fn
    assert np.array_equal(text_fast(plain), text_model.predict_proba(plain))
    assert text_fast.verified is True and text_fast.engaged
    # integer categories (categorical_features by name on a number column)
    numbers = HistGradientBoostingClassifier(
        max_iter=30, categorical_features=["Pclass", "Sex", "Embarked"], random_state=0
    ).fit(X[:600], np.arange(600) % 2)
    numbers_fast = ProbabilityModel(numbers)._fn
    unseen = rest.copy()
    unseen.loc[unseen.index[:4], "Pclass"] = 7
    assert np.array_equal(numbers_fast(unseen), numbers.predict_proba(unseen))
    assert numbers_fast.verified is True and numbers_fast.engaged
    # a nullable column: the model's own preprocessing
    assert np.array_equal(fast(rest.astype({"Age": "Float64"})), model.predict_proba(rest))
    assert not fast.engaged


def test_hist_gradient_boosting_leaves_columns_of_another_kind_to_the_model():
    # A bool categorical given as 0/1 (or as a category of 0/1): pd.Index.get_indexer does not
    # match 1 to True as the model's OrdinalEncoder does, and every 1 became an unknown
    # category (144 of 300 rows predicted otherwise). Inputs the model refuses (infinity in a
    # categorical column, numbers for text categories) were predicted anyway.
    rng = np.random.default_rng(0)
    num, flag = rng.normal(size=300), rng.random(300) < 0.5
    X = pd.DataFrame({"num": num, "flag": flag})
    hgb = HistGradientBoostingClassifier(max_iter=10, categorical_features=["flag"])
    model = models.ProbabilityModel(hgb.fit(X, flag ^ (num > 0.8)))
    model.predict_proba(X)  # checked against the model's own on this first call
    for dtype in (int, float, "category", bool):
        rows = pd.DataFrame({"num": [0.0, 0.0, 1.0], "flag": pd.Series([0, 1, 1]).astype(dtype)})
        assert np.array_equal(model.predict_proba(rows), hgb.predict_proba(rows)), dtype
    X = pd.DataFrame({"num": num, "k": rng.integers(0, 5, 300).astype(float)})
    hgb = HistGradientBoostingClassifier(max_iter=10, categorical_features=["k"])
    model = models.ProbabilityModel(hgb.fit(X, X.k > 2))
    model.predict_proba(X)
    with pytest.raises(ValueError, match="infinity"):
        model.predict_proba(pd.DataFrame({"num": [0.0], "k": [np.inf]}))
    with pytest.raises(ValueError, match="infinity"):  # ... in a category column too
        model.predict_proba(pd.DataFrame({"num": [0.0], "k": pd.Categorical([np.inf])}))
    X = pd.DataFrame({"num": num, "c": pd.Categorical(rng.choice(list("abc"), 300))})
    hgb = HistGradientBoostingClassifier(max_iter=10).fit(X, X.c == "a")
    model = models.ProbabilityModel(hgb)
    model.predict_proba(X)
    with pytest.raises(TypeError):
        model.predict_proba(pd.DataFrame({"num": [0.0], "c": [1]}))


@pytest.mark.parametrize("kind", ["forest", "boosting"])
def test_refitting_the_explainer_reads_a_refitted_model(kind):
    # The wrappers read the fitted estimator once (compiled trees, the boosting's initial
    # prediction): a refitted model is read again when the explainer is refitted, as its
    # docstring says to do.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y1, y2 = (X[:, 0] > 0).astype(int), (X[:, 1] > 0.5).astype(int)
    make = RandomForestClassifier if kind == "forest" else GradientBoostingClassifier
    model = make(n_estimators=5, warm_start=True, random_state=0).fit(X, y1)
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    assert np.array_equal(explainer.model_.predict_proba(X), model.predict_proba(X))
    model.set_params(warm_start=False).fit(X, y2)
    explainer.fit(X)
    assert np.array_equal(explainer.model_.predict_proba(X), model.predict_proba(X))
    assert np.array_equal(explainer.model_.predict_proba(X), model.predict_proba(X))


def test_a_numpy_matrix_is_refused_as_the_model_refuses_it():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, X[:, 0] > 0)
    model = models.ProbabilityModel(forest)
    model.predict_proba(X)
    model.predict_proba(X)  # the fast path, verified
    with pytest.raises(TypeError, match="np.matrix"):
        model.predict_proba(np.asmatrix(X))


def test_hist_gradient_boosting_without_categories_takes_arrays_with_nan():
    X, y = _data()
    X[::7, 1] = np.nan
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    fast = ProbabilityModel(model)._fn
    assert np.array_equal(fast(X), model.predict_proba(X)) and fast.engaged
    with pytest.raises(ValueError, match="features"):
        fast(X[:, :3])


def test_boosting_with_unexpected_internals_predicts_for_itself(monkeypatch):
    # The fast paths read scikit-learn internals; another version may not have them as
    # expected. Then the model predicts for itself, for good, with the same answers.
    import sklearn.utils._openmp_helpers as helpers

    X, model = _titanic_hist_boosting(categorical_features="from_dtype")
    fast = ProbabilityModel(model)._fn
    monkeypatch.delattr(helpers, "_openmp_effective_n_threads")
    assert np.array_equal(fast(X[600:]), model.predict_proba(X[600:]))
    assert fast.verified is None and not fast.engaged

    X, y = _data()
    boost = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)

    # trees the compiled traversal cannot lay out: scikit-learn's loop, still exact
    def unexpected(*args, **kwargs):
        raise AttributeError("'Tree' object has no attribute 'max_depth'")

    with monkeypatch.context() as patched:
        patched.setattr(_trees, "complete", unexpected)
        fast = ProbabilityModel(boost)._fn
        fast.prepare()
        assert fast._complete is False
        assert np.array_equal(fast(X[:10]), boost.predict_proba(X[:10]))
        assert fast.verified is True and fast.engaged

    # scikit-learn's loop (numba off) with another signature: the model itself, for good
    monkeypatch.setenv("SKANCHORS_NUMBA", "0")
    fast = ProbabilityModel(boost)._fn

    def changed_signature(*args):
        raise TypeError("predict_stages() takes 3 positional arguments")

    monkeypatch.setattr(speed_boosting, "_predict_stages", lambda: changed_signature)
    for batch in (X[:10], X[10:20]):
        assert np.array_equal(fast(batch), boost.predict_proba(batch))
        assert fast.verified is None and not fast.engaged


def test_explaining_hist_gradient_boosting_gives_the_anchors_of_its_predict_proba():
    X, model = _titanic_hist_boosting(categorical_features="from_dtype")
    options = dict(random_state=0, beam_size=1)
    fast = AnchorExplainer(model, **options).fit(X[:600])
    plain = AnchorExplainer(model.predict_proba, **options).fit(X[:600])
    assert isinstance(fast.model_._fn, _HistBoostingProba)
    for i in (600, 601, 602):
        a, b = fast.explain(X.iloc[[i]])[0], plain.explain(X.iloc[[i]])[0]
        assert str(a) == str(b)
        # (given the model, rows its trees cannot tell apart are predicted once)
        assert a.n_model_calls <= b.n_model_calls and a.n_rows_predicted <= b.n_rows_predicted
    assert fast.model_._fn.engaged


@pytest.mark.parametrize("loss", ["squared_error", "absolute_error", "huber", "quantile"])
def test_gradient_boosting_regression_is_predicted_to_the_last_bit(loss):
    X, _ = _data(n=600)
    target = X[:, 0] * X[:, 1] + np.sin(X[:, 2])
    boost = GradientBoostingRegressor(n_estimators=30, loss=loss, random_state=0)
    boost.fit(X[:400], target[:400])
    fast = RegressionModel(boost)._fn
    assert isinstance(fast, _BoostingRegression)
    for batch in (X[400:], X[400:401]):
        assert np.array_equal(fast(batch), boost.predict(batch))
    assert fast.verified is True and fast.engaged
    # an initial estimator whose prediction differs from row to row: called as it is
    other = GradientBoostingRegressor(n_estimators=5, init=RandomForestRegressor(n_estimators=3))
    other.fit(X[:400], target[:400])
    assert RegressionModel(other)._fn == other.predict


@pytest.mark.parametrize("kind", [RandomForestRegressor, ExtraTreesRegressor])
def test_a_forest_regressor_is_predicted_by_its_trees_to_the_last_bit(kind, traversal):
    X, _ = _data(n=600)
    target = X[:, 0] * X[:, 1] + np.sin(X[:, 2])
    forest = kind(n_estimators=30, random_state=0).fit(X[:400], target[:400])
    fast = RegressionModel(forest)._fn
    assert isinstance(fast, _ForestRegression)
    X_new = np.random.default_rng(1).normal(size=(600, 5))  # >= 256 rows: leaf order too
    for batch in (X_new, X_new[:1], X_new[3:40]):
        assert np.array_equal(fast(batch), forest.predict(batch))
    assert fast.verified is True and fast.engaged
    # (a compact copy of 30 small trees stays in cache: no gain from large batches)
    assert fast.favours_large_batches == (traversal == "sklearn")
    # a parallel forest, or one whose predict is overridden, is called as it is
    parallel = kind(n_estimators=5, n_jobs=2, random_state=0).fit(X[:400], target[:400])
    assert RegressionModel(parallel)._fn == parallel.predict
    options = dict(random_state=0, beam_size=1)
    fast = AnchorExplainer(forest, **options).fit(X[:400])
    plain = AnchorExplainer(forest.predict, mode="regression", **options).fit(X[:400])
    for row in X[400:403]:
        a, b = fast.explain(row[None])[0], plain.explain(row[None])[0]
        assert str(a) == str(b)
        # (given the model, rows its trees cannot tell apart are predicted once)
        assert a.n_model_calls <= b.n_model_calls and a.n_rows_predicted <= b.n_rows_predicted


@pytest.mark.parametrize("loss", ["squared_error", "poisson"])
def test_hist_gradient_boosting_regression_is_predicted_to_the_last_bit(loss):
    # the Titanic fare from the other columns, categories and NaN included; the Poisson loss
    # has a log link, which predict inverts
    X, _ = load_titanic(return_X_y=True)
    features, fare = X.drop(columns="Fare"), X["Fare"]
    model = HistGradientBoostingRegressor(
        max_iter=30, loss=loss, categorical_features="from_dtype", random_state=0
    ).fit(features[:600], fare[:600])
    fast = RegressionModel(model)._fn
    assert isinstance(fast, _HistBoostingRegression)
    for batch in (features[600:], features[600:601], features[:600]):
        assert np.array_equal(fast(batch), model.predict(batch))
    assert fast.verified is True and fast.engaged
    # ending a Pipeline, and explained: the anchors of its predict
    pipe = make_pipeline(FunctionTransformer(lambda frame: frame), model)
    assert isinstance(RegressionModel(pipe)._fn.final, _HistBoostingRegression)
    options = dict(random_state=0, beam_size=1)
    fast = AnchorExplainer(model, **options).fit(features[:600])
    plain = AnchorExplainer(model.predict, mode="regression", **options).fit(features[:600])
    for i in (600, 601):
        a, b = fast.explain(features.iloc[[i]])[0], plain.explain(features.iloc[[i]])[0]
        assert str(a) == str(b)
        # (given the model, rows its trees cannot tell apart are predicted once)
        assert a.n_model_calls <= b.n_model_calls and a.n_rows_predicted <= b.n_rows_predicted
    assert fast.model_._fn.engaged


def test_a_callable_with_an_attribute_named_labels_is_only_called():
    class Model:
        labels = ["no", "yes"]  # what the user's model calls its classes

        def __call__(self, X):
            p = 1.0 / (1.0 + np.exp(-np.asarray(X)[:, 0]))
            return np.column_stack([1.0 - p, p])

    X = np.array([[-2.0], [3.0]])
    for model in (ProbabilityModel(Model()), ProbabilityModel(Model(), classes=["no", "yes"])):
        assert model.predict_proba(X).shape == (2, 2)
        assert model.predict_index(X).tolist() == [0, 1]


@pytest.mark.parametrize(
    "output, message",
    [
        # a Keras-style sigmoid: P(class 1) alone, shape (n, 1)
        (lambda X: 1.0 / (1.0 + np.exp(-X[:, :1])), "1 probability column"),
        (lambda X: np.full((len(X), 2), 0.5)[:1], r"for \d+ inputs .* shape \(1, 2\)"),
        (lambda X: np.tile([0.2, 0.8], (3, 1)), r"for \d+ inputs .* shape \(3, 2\)"),
        (lambda X: np.column_stack([np.full(len(X), 0.1), np.full(len(X), np.nan)]), "NaN"),
    ],
)
def test_a_callable_whose_probabilities_are_malformed_is_refused(output, message):
    X = np.random.default_rng(0).normal(size=(5, 2))
    with pytest.raises(ValueError, match=message):
        ProbabilityModel(output).predict_proba(X)
    with pytest.raises(ValueError, match=message):
        AnchorExplainer(output, random_state=0).fit(X).explain(X[:1])


@pytest.mark.parametrize(
    "output, message",
    [
        (lambda X: np.array([1.0]), r"for 5 inputs .* shape \(1,\)"),
        (lambda X: np.where(X[:, 0] > 0, np.nan, 1.0), "NaN"),
    ],
)
def test_a_regression_callable_whose_predictions_are_malformed_is_refused(output, message):
    X = np.random.default_rng(0).normal(size=(5, 2))
    X[0, 0] = 1.0
    with pytest.raises(ValueError, match=message):
        RegressionModel(output).predict(X)


def test_a_callable_is_never_replaced():
    X, y = _data()
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    assert ProbabilityModel(forest.predict_proba)._fn == forest.predict_proba


def test_a_pipeline_ending_in_a_forest_transforms_then_takes_the_fast_path(traversal):
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=20, random_state=0))
    pipe.fit(X, y)
    model = ProbabilityModel(pipe)
    assert isinstance(model._fn, _PipelineProba)
    model.prepare(X)  # builds (and compiles) the compact trees where numba is there
    assert (model._fn.final._compact is not False) == (traversal == "compiled")
    assert np.array_equal(model.predict_proba(X[:50]), pipe.predict_proba(X[:50]))
    assert model._fn.final.verified is True


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize(
    "make",
    [
        lambda: RandomForestClassifier(n_estimators=30, random_state=0),
        lambda: GradientBoostingClassifier(n_estimators=30, random_state=0),
    ],
    ids=["forest", "boosting"],
)
def test_explaining_a_model_gives_the_anchors_of_its_predict_proba(make, n_jobs, traversal):
    X, y = _data(n=600)
    model = make().fit(X[:400], y[:400])
    rows = X[400:406]
    options = dict(random_state=3, n_jobs=n_jobs, beam_size=1)
    fast = AnchorExplainer(model, **options).fit(X[:400])
    plain = AnchorExplainer(model.predict_proba, **options).fit(X[:400])
    assert [str(a) for a in fast.explain(rows)] == [str(a) for a in plain.explain(rows)]
    # one row per call: the same searches, no more model calls (several rows in one call
    # may share calls or not, by how long one model call takes)
    for row in rows[:3]:
        a, b = fast.explain(row[None])[0], plain.explain(row[None])[0]
        assert str(a) == str(b)
        # (given the model, rows its trees cannot tell apart are predicted once)
        assert a.n_model_calls <= b.n_model_calls and a.n_rows_predicted <= b.n_rows_predicted


class _Spy:
    """Counts the calls the adapter makes; passes on (or denies) its batch preference."""

    def __init__(self, fn, favours):
        self.fn, self.calls, self.favours = fn, 0, favours

    @property
    def favours_large_batches(self):
        return self.favours and self.fn.favours_large_batches

    def __call__(self, X):
        self.calls += 1
        return self.fn(X)


@pytest.mark.parametrize("favours", [True, False])
def test_rows_explained_together_share_the_calls_of_a_forest_evaluated_here(
    favours, traversal, monkeypatch
):
    # a forest's tree traversal costs less per row in large batches, so the searches of the
    # rows of one explain call share their model calls although one call is cheap (<< 2 ms);
    # compact trees do only when they do not fit a core's cache (here: any size)
    monkeypatch.setattr(speed_forest, "_LARGE_FOREST_BYTES", -1)
    # whatever a one-row call takes on this machine (a busy one can take over the 2 ms from
    # which expensive calls are shared anyway): only the batch preference decides here
    monkeypatch.setattr(explainer_module, "_SHARE_CALLS_ABOVE", float("inf"))
    X, y = _data(n=600)
    forest = RandomForestClassifier(n_estimators=30, random_state=0).fit(X[:400], y[:400])
    model = ProbabilityModel(forest)
    assert not model.favours_large_batches  # not before the trees are traversed here
    model.predict_proba(X[:5])
    assert model.favours_large_batches
    assert not ProbabilityModel(forest.predict_proba).favours_large_batches
    rows = X[400:408]

    def explainer():
        fitted = AnchorExplainer(forest, random_state=3, beam_size=1).fit(X[:400])
        fitted.model_._fn = _Spy(fitted.model_._fn, favours)
        return fitted

    together = explainer()
    anchors = together.explain(rows)
    alone = explainer()
    assert [str(a) for a in anchors] == [str(alone.explain(r[None])[0]) for r in rows]
    # the prediction of the rows themselves: 2 calls together, 1 per row alone
    searches_together = together.model_._fn.calls - 2
    searches_alone = alone.model_._fn.calls - len(rows)
    if favours:
        assert searches_together < searches_alone / 2
    else:
        assert searches_together == searches_alone


def test_compact_trees_in_a_cores_cache_do_not_favour_large_batches(traversal):
    X, y = _data(n=600)
    forest = RandomForestClassifier(n_estimators=30, random_state=0).fit(X[:400], y[:400])
    model = ProbabilityModel(forest)
    model.prepare(X[:400])
    model.predict_proba(X[:5])
    assert model.favours_large_batches == (traversal == "sklearn")
    if traversal == "compiled":
        size = sum(a.nbytes for a in model._fn._compact[1] if isinstance(a, np.ndarray))
        assert 0 < size < speed_forest._LARGE_FOREST_BYTES


def test_a_forest_on_sparse_features_is_called_as_it_is_and_shares_no_calls():
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = ["good fun film", "bad dull film", "good acting", "dull plot", "fun plot"] * 20
    labels = [1, 0, 1, 0, 1] * 20
    pipe = make_pipeline(TfidfVectorizer(), RandomForestClassifier(n_estimators=10, random_state=0))
    pipe.fit(texts, labels)
    model = ProbabilityModel(pipe)
    assert isinstance(model._fn, _PipelineProba)
    assert np.array_equal(model.predict_proba(texts[:7]), pipe.predict_proba(texts[:7]))
    assert not model.favours_large_batches  # sparse input: the forest's own predict_proba
    # its classes too, from one pass through the vectoriser per call
    vectoriser = pipe[0]
    transform, calls = vectoriser.transform, []
    vectoriser.transform = lambda X: calls.append(len(X)) or transform(X)
    expected = pipe.predict_proba(texts[:7]).argmax(axis=1)
    calls.clear()
    assert np.array_equal(model.predict_index(texts[:7]), expected)
    assert calls == [7]


def test_a_bound_predict_proba_keeps_the_model_s_class_labels():
    from skanchors import LimeExplainer

    X = np.random.default_rng(0).normal(size=(300, 3))
    model = LogisticRegression().fit(X, np.where(X[:, 0] > 0, "yes", "no"))
    anchor = AnchorExplainer(model.predict_proba, random_state=0).fit(X).explain(X[:1])[0]
    assert anchor.prediction == model.predict(X[:1])[0]
    lime = LimeExplainer(model.predict_proba, target_class="yes", random_state=0).fit(X)
    assert lime.classes_.tolist() == ["no", "yes"]
    assert lime.explain(X[:1])[0].prediction == "yes"
    # a plain function's columns are numbered
    plain = AnchorExplainer(lambda Z: model.predict_proba(Z), random_state=0).fit(X)
    assert plain.classes_.tolist() == [0, 1]


def test_a_classifier_with_predict_only_is_explained_by_its_predicted_class():
    from sklearn.linear_model import RidgeClassifier
    from sklearn.svm import LinearSVC

    from skanchors import LimeExplainer

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(size=(600, 3)), columns=["a", "b", "c"])
    y = np.where(X["a"] > 0.5, "hi", "lo")
    for clf in (LinearSVC(), RidgeClassifier()):
        clf.fit(X, y)
        explainer = AnchorExplainer(clf, random_state=0).fit(X)
        assert explainer.classes_.tolist() == ["hi", "lo"]
        x = pd.DataFrame({"a": [0.9], "b": [0.5], "c": [0.5]})
        anchor = explainer.explain(x)[0]
        assert anchor.prediction == "hi" and anchor.is_anchor
        assert anchor.features == ["a"]
        assert (clf.predict(X[anchor.covers(X)]) == "hi").mean() >= 0.95
    # LIME fits probabilities: it keeps asking for predict_proba
    with pytest.raises(TypeError, match="predict_proba"):
        LimeExplainer(LinearSVC().fit(X, y)).fit(X)


def test_a_predict_only_classifier_may_list_its_classes_in_any_order():
    # classes_ ["lo", "hi"] (a third-party classifier): searchsorted assumed them sorted and
    # fit said the model predicted "labels that are not in its classes_"
    from skanchors.models import LabelsAsProbabilities

    class Rule:
        classes_ = np.array(["lo", "hi"])

        def predict(self, X):
            return np.where(np.asarray(X)[:, 0] > 0.5, "hi", "lo")

    X = pd.DataFrame(np.random.default_rng(0).uniform(size=(400, 2)), columns=["a", "b"])
    proba = LabelsAsProbabilities(Rule())(X.iloc[:4].to_numpy())
    assert proba.tolist() == [[0.0, 1.0] if a > 0.5 else [1.0, 0.0] for a in X["a"][:4]]
    explainer = AnchorExplainer(Rule(), random_state=0).fit(X)
    anchor = explainer.explain(pd.DataFrame({"a": [0.9], "b": [0.5]}))[0]
    assert anchor.prediction == "hi" and anchor.features == ["a"] and anchor.is_anchor

    class Liar(Rule):
        def predict(self, X):
            return np.full(len(X), "maybe")

    with pytest.raises(ValueError, match=r"predicted labels \['maybe'\] that are not in"):
        LabelsAsProbabilities(Liar())(X.to_numpy())

    class Flag:  # a hand-written rule predicting bools for the classes 0 and 1
        classes_ = np.array([0, 1])

        def predict(self, X):
            return np.asarray(X)[:, 0] > 0.5

    assert LabelsAsProbabilities(Flag())(np.array([[0.9], [0.1]])).tolist() == [
        [0.0, 1.0],
        [1.0, 0.0],
    ]
