"""The speed layer (:mod:`skanchors._speed`) as a layer: it plugs into the model adapters
through their registry and into the explainer through :mod:`skanchors._sharing` (the
prediction cache, the call sharing), the core does not import it, and switched off it changes
nothing but the time and the counts of model calls: the same anchors, to the last bit."""

import ast
import pathlib

import numpy as np
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import skanchors
from skanchors import AnchorExplainer, _sharing, _speed, models
from skanchors._speed.pipeline import _PipelineProba
from skanchors.datasets import load_movie_reviews, load_titanic, make_bike_sharing
from skanchors.samplers import TabularSampler

pytestmark = pytest.mark.filterwarnings("ignore:Row .*no rule reached")


@pytest.fixture(scope="module")
def titanic():
    X, y = load_titanic(return_X_y=True)
    numeric = X.select_dtypes("number").columns
    X = X[numeric].fillna(X[numeric].median())
    return X, y


@pytest.fixture(scope="module")
def bikes():
    return make_bike_sharing(700, random_state=0, return_X_y=True)


CLASSIFIERS = {
    "forest": lambda: RandomForestClassifier(30, max_depth=6, random_state=0),
    "boosting": lambda: GradientBoostingClassifier(n_estimators=30, random_state=0),
    "hist-boosting": lambda: HistGradientBoostingClassifier(max_iter=30, random_state=0),
}
REGRESSORS = {
    "forest": lambda: RandomForestRegressor(30, max_depth=6, random_state=0),
    "boosting": lambda: GradientBoostingRegressor(n_estimators=30, random_state=0),
    "hist-boosting": lambda: HistGradientBoostingRegressor(max_iter=30, random_state=0),
}


def _anchors(model, X, rows):
    """Every anchor's ``to_dict`` but its wall time and its counts of model calls and rows
    (which the prediction cache changes), and the explainer's model wrapper."""
    explainer = AnchorExplainer(model, random_state=0).fit(X)
    out = []
    for anchor in explainer.explain(rows):
        found = anchor.to_dict()
        for name in ("wall_time", "n_model_calls", "n_rows_predicted"):
            del found[name]
        out.append(found)
    return out, explainer.model_._fn


def _on_and_off(model, X, rows, method):
    on, fast = _anchors(model, X, rows)
    with _speed.disabled():
        off, own = _anchors(model, X, rows)
    assert _speed.enabled()  # back on after the block
    # on: the speed layer's predictor computed the predictions (verified and engaged)
    assert fast.__module__.startswith("skanchors._speed.")
    assert getattr(fast, "verified", True) is True and getattr(fast, "engaged", True)
    # off: the model's own method
    assert own == getattr(model, method)
    return on, off


@pytest.mark.parametrize("kind", sorted(CLASSIFIERS))
def test_classifiers_get_the_same_anchors_with_the_speed_layer_off(titanic, kind):
    X, y = titanic
    model = CLASSIFIERS[kind]().fit(X[:500], y[:500])
    on, off = _on_and_off(model, X[:500], X[600:603], "predict_proba")
    assert on == off
    assert all(anchor["predicates"] for anchor in on)  # rules were searched, not empty


@pytest.mark.parametrize("kind", sorted(REGRESSORS))
def test_regressors_get_the_same_anchors_with_the_speed_layer_off(bikes, kind):
    X, y = bikes
    model = REGRESSORS[kind]().fit(X[:500], y[:500])
    on, off = _on_and_off(model, X[:500], X[600:603], "predict")
    assert on == off
    assert all(anchor["predicates"] for anchor in on)


def test_a_pipeline_gets_the_same_anchors_with_the_speed_layer_off():
    X, y = load_titanic(return_X_y=True)
    X = X[["Pclass", "Sex", "Embarked", "SibSp"]].astype({"Embarked": str})
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["Sex", "Embarked"]),
            remainder="passthrough",
        ),
        RandomForestClassifier(20, max_depth=5, random_state=0),
    ).fit(X[:500], y[:500])
    on, fast = _anchors(model, X[:500], X[600:603])
    with _speed.disabled():
        off, own = _anchors(model, X[:500], X[600:603])
    assert isinstance(fast, _PipelineProba) and own == model.predict_proba
    assert on == off


def test_the_switch_is_read_when_a_model_is_wrapped(titanic):
    X, y = titanic
    forest = CLASSIFIERS["forest"]().fit(X[:300], y[:300])
    with _speed.disabled():
        assert not _speed.enabled()
        own = models.ProbabilityModel(forest)
        regression = models.RegressionModel(REGRESSORS["forest"]().fit(X[:300], X["Fare"][:300]))
    fast = models.ProbabilityModel(forest)
    assert own._fn == forest.predict_proba and not own._adapted
    assert regression._fn.__name__ == "predict" and not regression._adapted
    assert fast._adapted and type(fast._fn).__name__ == "_ForestProba"
    np.testing.assert_array_equal(own.predict_proba(X[300:]), fast.predict_proba(X[300:]))
    np.testing.assert_array_equal(own.predict_index(X[300:]), fast.predict_index(X[300:]))


def test_the_switch_is_restored_after_an_error():
    with pytest.raises(RuntimeError), _speed.disabled():
        raise RuntimeError
    assert _speed.enabled()


def test_a_registered_predictor_is_consulted_in_order(monkeypatch):
    class Model:
        classes_ = np.array([0, 1])

        def predict_proba(self, X):
            return np.tile([0.25, 0.75], (len(X), 1))

    class Faster:
        def __init__(self, estimator, method):
            self.estimator, self.method = estimator, method

        def __call__(self, X):
            return getattr(self.estimator, self.method)(X)

        def labels(self, X):
            return np.ones(len(X), dtype=np.intp)

    monkeypatch.setattr(models, "_FAST_PREDICTORS", list(models._FAST_PREDICTORS))
    declined = []
    models.register_fast_predictor(
        lambda estimator, method: isinstance(estimator, Model),
        lambda estimator, method: declined.append(method),  # builds nothing: the next one
    )
    models.register_fast_predictor(lambda estimator, method: isinstance(estimator, Model), Faster)
    wrapped = models.ProbabilityModel(Model())
    assert declined == ["predict_proba"]
    assert isinstance(wrapped._fn, Faster) and wrapped._fn.method == "predict_proba"
    assert wrapped.predict_index(np.zeros((3, 1))).tolist() == [1, 1, 1]  # its labels
    assert models.fast_predictor(object()) is None


def test_split_thresholds_come_from_the_registered_readers(titanic, monkeypatch):
    X, y = titanic
    forest = CLASSIFIERS["forest"]().fit(X[:300], y[:300])
    thresholds, dtype = models.split_thresholds(forest)
    assert dtype is np.float32 and len(thresholds) == X.shape[1]
    expected = np.unique(np.concatenate([t.tree_.threshold for t in forest.estimators_]))
    found = np.unique(np.concatenate(thresholds))
    np.testing.assert_array_equal(found, expected[expected != -2])  # (-2 marks a leaf)
    monkeypatch.setattr(models, "_SPLIT_READERS", [])
    assert models.split_thresholds(forest) is None


def test_the_model_adapters_do_not_import_the_speed_layer():
    package = pathlib.Path(skanchors.__file__).parent
    speed = {"_speed", "_trees", "kernels", "columnwise"}
    for core in ("models.py", "hf.py"):
        tree = ast.parse((package / core).read_text())
        imported = set()
        for node in ast.walk(tree):  # deferred imports included
            if isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0])
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                imported.update(
                    alias.name.split(".")[1] for alias in node.names if "." in alias.name
                )
        assert not imported & speed, (core, imported & speed)


# --------------------------------------------- the prediction cache and the call sharing
def _plain_anchors(explainer, rows):
    """Every anchor's ``to_dict`` but its wall time and its counts of model calls and rows
    (which the cache and the sharing change), and the total of model calls."""
    out, calls = [], 0
    for anchor in explainer.explain(rows):
        found = anchor.to_dict()
        calls += found.pop("n_model_calls")
        for name in ("wall_time", "n_rows_predicted"):
            del found[name]
        out.append(found)
    return out, calls


class _Slow:
    """A model whose one-row call is slow enough that explain shares calls across rows."""

    def __init__(self, model):
        self.model = model
        self.classes_ = model.classes_
        self.calls = 0

    def predict_proba(self, X):
        import time

        time.sleep(0.003)
        self.calls += 1
        return self.model.predict_proba(X)


@pytest.fixture(scope="module")
def titanic_mixed():
    X, y = load_titanic(return_X_y=True)
    return X.fillna({"Age": X["Age"].median()}), y


@pytest.mark.parametrize("kind", ["forest", "boosting"])
def test_the_benchmark_rows_get_the_same_anchors_without_cache_or_call_sharing(titanic_mixed, kind):
    # Titanic with its categorical columns, a forest or a boosting model behind one-hot
    # encoding, the default and the replace perturbation; rows repeated (kept searches) and
    # a model slow enough that the rows share calls: the layer's cache and runner are used
    # on, neither off, and the anchors are the same to the last bit.
    X, y = titanic_mixed
    categorical = X.select_dtypes(exclude="number").columns.tolist()
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), categorical), remainder="passthrough"
        ),
        CLASSIFIERS[kind](),
    ).fit(X[:500], y[:500])
    rows = X.iloc[[600, 601, 602, 603, 600]]
    runs = {}
    for layer in ("on", "off"):
        with _speed.disabled() if layer == "off" else _nothing():
            found = []
            for sampler in (None, TabularSampler(perturbation="replace")):
                slow = _Slow(model)
                explainer = AnchorExplainer(slow, sampler=sampler, random_state=0).fit(X[:500])
                if layer == "on":
                    assert explainer._cache is not None and _sharing.call_sharing()
                else:
                    assert explainer._cache is None and _sharing.call_sharing() is None
                anchors, calls = _plain_anchors(explainer, rows)
                if layer == "on":  # the cache kept the repeated row's search
                    assert explainer._cache.has_searches() and len(explainer._cache) > 0
                found.append((anchors, calls))
            runs[layer] = found
    assert [a for a, _ in runs["on"]] == [a for a, _ in runs["off"]]
    assert all(anchor["predicates"] for anchors, _ in runs["on"] for anchor in anchors)
    # the layer saves model calls (shared calls, kept predictions and searches)
    assert all(on < off for (_, on), (_, off) in zip(runs["on"], runs["off"]))


def test_a_text_model_gets_the_same_anchors_without_cache_or_call_sharing():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    texts, labels = load_movie_reviews(return_X_y=True)
    texts, labels = list(texts[::20]), np.asarray(labels[::20])
    model = make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000))
    model.fit(texts, labels)
    short = [t for t in texts if 6 <= len(t.split()) <= 10][:3]
    found = {}
    for layer in ("on", "off"):
        with _speed.disabled() if layer == "off" else _nothing():
            explainer = AnchorExplainer(_Slow(model), random_state=0).fit(texts)
            found[layer] = _plain_anchors(explainer, short + short[:1])[0]
    assert found["on"] == found["off"]
    assert found["on"][0] == found["on"][3]  # (the repeated sentence)
    assert any(anchor["predicates"] for anchor in found["on"])


def test_the_sharing_switch_is_read_at_explain():
    X, y = load_titanic(return_X_y=True)
    X = X.select_dtypes("number").fillna(0.0)
    explainer = AnchorExplainer(CLASSIFIERS["boosting"]().fit(X[:300], y[:300]), random_state=0)
    explainer.fit(X[:300])
    cache = explainer._cache
    assert cache is not None
    with _speed.disabled():
        off = _plain_anchors(explainer, X.iloc[[400, 401]])[0]
        assert explainer._cache is None
    on = _plain_anchors(explainer, X.iloc[[400, 401]])[0]
    assert explainer._cache is not None and explainer._cache is not cache  # a new one
    assert on == off


def test_sharing_registrations_are_checked():
    with pytest.raises(ValueError, match="factory must be callable"):
        _sharing.register_cache(None)
    with pytest.raises(ValueError, match="runner must be callable"):
        _sharing.register_call_sharing(3)
    assert _sharing.new_cache(0) is None  # (cache_size=0 keeps nothing: no cache)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False
