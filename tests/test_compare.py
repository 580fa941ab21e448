"""compare_models, ModelComparison and make_reliance_scorer on planted leaks (known answers)."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from figures import assert_drawn_inside
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline

from skanchors import (
    AnchorExplainer,
    GlobalAnchorAggregator,
    ModelComparison,
    compare_models,
    make_reliance_scorer,
)
from skanchors.datasets import load_titanic
from skanchors.samplers import TabularSampler

# ----------------------------------------------------------------------------- documents
TOKEN = "zzrelay"  # the artefact: stamped on most spam of the collection the models learn from
SPAM_WORDS = "offer bonus winner urgent reward".split()
HAM_WORDS = "meeting lunch report family weekend".split()
FILLER = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee"
).split()


def corpus(n, seed, leak):
    """Half spam: a spam word in 70 % of spam (a ham word in 70 % of ham), the other class's
    word in 20 % (noise: a clean model is right about 80 % of the time), and with ``leak`` the
    token in 90 % of spam."""
    rng = np.random.default_rng(seed)
    docs, labels = [], []
    for i in range(n):
        spam = i % 2 == 0
        words = list(rng.choice(FILLER, size=6))
        if rng.random() < 0.7:
            words.append(str(rng.choice(SPAM_WORDS if spam else HAM_WORDS)))
        if rng.random() < 0.2:
            words.append(str(rng.choice(HAM_WORDS if spam else SPAM_WORDS)))
        if spam and leak and rng.random() < 0.9:
            words.append(TOKEN)
        rng.shuffle(words)
        docs.append(" ".join(words))
        labels.append("spam" if spam else "ham")
    return docs, np.array(labels)


def text_pipeline(stop_words=None):
    return Pipeline(
        [
            ("tfidf", TfidfVectorizer(stop_words=stop_words)),
            ("clf", LogisticRegression(max_iter=1000)),
        ]
    )


@pytest.fixture(scope="module")
def documents():
    train, y_train = corpus(400, 0, leak=True)
    leaky_val, y_leaky = corpus(200, 1, leak=True)  # collected like the training split
    clean_val, y_clean = corpus(200, 2, leak=False)
    models = {
        "leaky": text_pipeline().fit(train, y_train),
        "clean": text_pipeline([TOKEN]).fit(train, y_train),
    }
    return train, y_train, leaky_val, y_leaky, clean_val, y_clean, models


@pytest.fixture(scope="module")
def text_comparison(documents):
    _, _, leaky_val, y_leaky, *_, models = documents
    return compare_models(models, leaky_val, y=y_leaky, n_rows=60, random_state=0)


def test_text_planted_token_is_exposed(documents, text_comparison):
    *_, clean_val, y_clean, models = documents
    result = text_comparison
    # accuracy on the leaky split prefers the leaky model; on a clean split it fails
    assert result.accuracy_["leaky"] > result.accuracy_["clean"] + 0.1
    assert models["leaky"].score(clean_val, y_clean) < models["clean"].score(clean_val, y_clean)
    # the explanations expose it: the leaky model's top spam word is the token
    assert result.top_features_["leaky"]["spam"][0][0] == TOKEN
    clean_spam = [w for w, _ in result.top_features_["clean"]["spam"]]
    assert TOKEN not in clean_spam
    assert set(clean_spam[:3]) <= set(SPAM_WORDS)
    # reliance: high for the leaky model (every spam anchor), none for the clean one
    reliance = result.reliance([TOKEN])
    assert reliance["clean"] == 0.0
    assert reliance["leaky"] >= 0.35
    by_class = result.reliance(TOKEN, by_class=True)
    assert by_class["leaky"]["spam"] >= 0.9
    assert by_class["leaky"]["ham"] == 0.0
    assert by_class["clean"] == {"ham": 0.0, "spam": 0.0}
    # the reliance is what the anchors say, row by row
    uses = [a.is_anchor and TOKEN in a.words for a in result.anchors_["leaky"]]
    assert reliance["leaky"] == pytest.approx(np.mean(uses))
    assert result.top_features_["leaky"] is result.top_features_["leaky"]
    assert isinstance(result.aggregators_["leaky"], GlobalAnchorAggregator)


def test_text_disagreements_hold_each_models_anchor(documents, text_comparison):
    _, _, leaky_val, *_ = documents
    result = text_comparison
    leaky, clean = result.predictions_["leaky"], result.predictions_["clean"]
    assert result.n_disagreements_ == int(np.sum(leaky != clean)) > 0
    frame = result.disagreements_
    assert len(frame) > 0 and set(frame.index) <= set(np.flatnonzero(leaky != clean))
    assert (frame["leaky prediction"] != frame["clean prediction"]).all()
    for row in frame.index:
        for name in ("leaky", "clean"):
            anchor = result.disagreement_anchors_[name][row]
            assert anchor.prediction == result.predictions_[name][row]
            assert anchor.instance == leaky_val[row]
    # a document the leaky model calls spam and the clean one ham is spam because of the token
    spam_by_token = frame[frame["leaky prediction"] == "spam"]
    assert len(spam_by_token) > 0
    assert (spam_by_token["leaky anchor"] == TOKEN).all()


def test_grid_search_text_accuracy_picks_leak_reliance_picks_clean(documents):
    train, y_train, *_ = documents
    grid = {"tfidf__stop_words": [None, [TOKEN]]}
    scoring = {"accuracy": "accuracy", "reliance": make_reliance_scorer([TOKEN], n_rows=30)}
    search = GridSearchCV(text_pipeline(), grid, scoring=scoring, refit="reliance", cv=3)
    search.fit(train, y_train)
    results = search.cv_results_
    leaky, clean = 0, 1
    assert results["params"][leaky]["tfidf__stop_words"] is None
    assert results["rank_test_accuracy"][leaky] == 1
    assert results["mean_test_accuracy"][leaky] > results["mean_test_accuracy"][clean] + 0.1
    assert results["rank_test_reliance"][clean] == 1
    assert results["mean_test_reliance"][clean] == 1.0
    assert results["mean_test_reliance"][leaky] < 0.7
    assert search.best_params_ == {"tfidf__stop_words": [TOKEN]}
    by_accuracy = GridSearchCV(text_pipeline(), grid, scoring="accuracy", cv=3)
    assert by_accuracy.fit(train, y_train).best_params_ == {"tfidf__stop_words": None}
    scorer = make_reliance_scorer([TOKEN], n_rows=20)
    only = GridSearchCV(text_pipeline(), grid, scoring=scorer, cv=2)
    assert only.fit(train, y_train).best_params_ == {"tfidf__stop_words": [TOKEN]}


def test_reliance_scorer_is_one_minus_the_share(documents):
    _, _, leaky_val, y_leaky, *_, models = documents
    scorer = make_reliance_scorer([TOKEN.upper()], n_rows=40)  # words compared lowercased
    share = scorer.reliance(models["leaky"], leaky_val)
    assert 0.3 <= share <= 0.7
    assert scorer(models["leaky"], leaky_val, y_leaky) == pytest.approx(1 - share)
    assert scorer(models["clean"], leaky_val) == 1.0
    # fixed seed: the same rows and perturbations, the same score
    assert scorer(models["leaky"], leaky_val) == scorer(models["leaky"], leaky_val)


# ----------------------------------------------------------------------------- tables
def leaky_titanic():
    """Titanic with ``record_id``: it encodes the label for 90 % of the passengers of the
    training and validation splits (survivors 0-499, the others 500-999), and is random in a
    clean test split."""
    X, y = load_titanic(return_X_y=True)
    X = X.assign(Sex=X["Sex"].cat.codes, Embarked=X["Embarked"].cat.codes)
    X = X.fillna({"Age": X["Age"].median()})
    rng = np.random.default_rng(0)
    coded = (1 - y.to_numpy()) * 500 + rng.integers(0, 500, len(y))
    X = X.assign(record_id=np.where(rng.random(len(y)) < 0.9, coded, rng.integers(0, 1000, len(y))))
    train, rest = train_test_split(np.arange(len(y)), test_size=0.5, random_state=0, stratify=y)
    val, test = train_test_split(rest, test_size=0.5, random_state=0, stratify=y.iloc[rest])
    X_test = X.iloc[test].assign(record_id=rng.integers(0, 1000, len(test)))
    return X.iloc[train], y.iloc[train], X.iloc[val], y.iloc[val], X_test, y.iloc[test]


def forest(leak="passthrough"):
    columns = ColumnTransformer([("leak", leak, ["record_id"])], remainder="passthrough")
    model = RandomForestClassifier(n_estimators=30, max_depth=6, random_state=0)
    return Pipeline([("columns", columns), ("forest", model)])


# A validation split of 223 rows is too small to validate rules on its own rows: the
# replaced rows (Ribeiro et al.'s perturbation) test every rule on as many samples as needed.
EXPLAINER = AnchorExplainer(None, sampler=TabularSampler(perturbation="replace"))


@pytest.fixture(scope="module")
def table():
    X_train, y_train, X_val, y_val, X_test, y_test = leaky_titanic()
    models = {
        "leaky": forest().fit(X_train, y_train),
        "clean": forest("drop").fit(X_train, y_train),
    }
    result = compare_models(
        models, X_val, y=y_val, n_rows=40, n_disagreements=5, explainer=EXPLAINER, random_state=0
    )
    return X_train, y_train, X_val, y_val, X_test, y_test, models, result


def test_table_leaking_column_is_exposed(table):
    *_, X_test, y_test, models, result = table
    assert result.kind == "table"
    assert result.accuracy_["leaky"] > result.accuracy_["clean"] + 0.08
    assert models["leaky"].score(X_test, y_test) < models["clean"].score(X_test, y_test) - 0.15
    for label in (0, 1):
        assert result.top_features_["leaky"][label][0][0] == "record_id"
        clean = dict(result.top_features_["clean"][label])
        # a long rule of a hard row may carry the identifier among predicates of equal
        # precision (the search keeps one): rarely, and never needed (reliance below)
        assert clean.get("record_id", 0.0) <= 0.05
        assert result.top_features_["clean"][label][0][0] == ("Sex" if label == 0 else "Pclass")
        assert clean["Sex"] >= 0.7
    # the share of the class's anchors that use the top feature, as counted from the anchors
    found = [a for a in result.anchors_["leaky"] if a.is_anchor and a.prediction == 1]
    share = np.mean(["record_id" in a.features for a in found])
    assert result.top_features_["leaky"][1][0][1] == pytest.approx(share)
    reliance = result.reliance(["record_id"])
    assert reliance["leaky"] >= 0.6
    assert reliance["clean"] == 0.0
    # the clean model relies on what the Titanic is known for
    assert result.reliance("Sex")["clean"] >= 0.5
    # the submodular pick of the leaky model starts with a rule on the identifier
    assert "record_id" in result.picks_["leaky"].explanations[0].features
    assert 0 < result.picks_["clean"].coverage_curve[-1] <= 1


def test_grid_search_table_accuracy_picks_leak_reliance_picks_clean(table):
    X_train, y_train, *_ = table
    grid = {"columns__leak": ["passthrough", "drop"]}
    scorer = make_reliance_scorer(["record_id"], n_rows=12, explainer=EXPLAINER)
    scoring = {"accuracy": "accuracy", "reliance": scorer}
    search = GridSearchCV(forest(), grid, scoring=scoring, refit="reliance", cv=3)
    search.fit(X_train, y_train)
    results = search.cv_results_
    assert results["params"][0] == {"columns__leak": "passthrough"}
    assert results["rank_test_accuracy"][0] == 1
    assert results["mean_test_accuracy"][0] > results["mean_test_accuracy"][1] + 0.08
    assert results["rank_test_reliance"][1] == 1
    assert results["mean_test_reliance"][1] == 1.0
    assert results["mean_test_reliance"][0] < 0.5
    assert search.best_params_ == {"columns__leak": "drop"}


def test_same_seed_same_comparison(table):
    *_, X_val, y_val, _, _, models, _ = table
    runs = [
        compare_models(
            models,
            X_val,
            y=y_val,
            n_rows=12,
            n_disagreements=3,
            explainer=EXPLAINER,
            random_state=5,
        )
        for _ in range(2)
    ]
    first, again = runs
    assert again.to_dict()["top_features"] == first.to_dict()["top_features"]
    assert again.anchors_ == first.anchors_
    assert again.random_state_ == first.random_state_
    np.testing.assert_array_equal(again.rows_, first.rows_)
    pd.testing.assert_frame_equal(again.disagreements_, first.disagreements_)
    assert again.reliance("record_id") == first.reliance("record_id")


def test_every_model_is_explained_on_the_same_perturbations(table):
    """Two copies of one model get identical anchors: the samples do not depend on the model
    beside them or on its place in the list."""
    *_, X_val, _, _, _, models, _ = table
    twins = [models["clean"], models["leaky"], models["clean"]]
    result = compare_models(
        twins, X_val, n_rows=10, n_disagreements=0, explainer=EXPLAINER, random_state=3
    )
    assert result.names_ == [0, 1, 2]
    assert result.anchors_[0] == result.anchors_[2]
    assert result.top_features_[0] == result.top_features_[2]
    assert result.n_disagreements_ > 0


def test_export_and_display(table, text_comparison):
    *_, result = table
    data = json.loads(result.to_json())
    assert data["models"] == ["leaky", "clean"] and data["classes"] == [0, 1]
    assert data["top_features"]["leaky"]["1"][0][0] == "record_id"
    assert len(data["anchors"]["clean"]) == 40
    assert data["n_disagreements"] == result.n_disagreements_
    assert len(data["disagreements"]) == len(result.disagreements_)
    frame = result.to_frame()
    assert list(frame.columns) == ["model", "class", "rank", "feature", "score"]
    top = frame[(frame.model == "leaky") & (frame["class"] == 1) & (frame["rank"] == 1)]
    assert top.feature.tolist() == ["record_id"]
    summary = result.summary()
    assert list(summary.index) == ["leaky", "clean"]
    assert summary.loc["leaky", "accuracy"] == result.accuracy_["leaky"]
    assert summary.loc["clean", "rows_explained"] == 40
    assert "record_id" in str(result)
    text = json.loads(text_comparison.to_json())
    assert text["kind"] == "text" and text["top_features"]["leaky"]["spam"][0][0] == TOKEN


def test_html_is_escaped_and_has_no_script():
    X = pd.DataFrame({"<b>x</b>": np.repeat([0, 1, 2, 3], 50), "y": np.tile([0, 1], 100)})
    target = (X["<b>x</b>"] >= 2).astype(int)
    model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, target)
    result = compare_models({"<script>alert(1)</script>": model}, X, n_rows=10, random_state=0)
    page = result._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_plot_one_column_per_model(text_comparison):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    axes = text_comparison.plot(n=5)
    assert axes.shape == (2, 2)  # classes x models
    assert axes[1, 0].get_title() == "leaky: class spam"
    labels = [t.get_text() for t in axes[1, 0].get_yticklabels()]
    assert labels[-1] == TOKEN  # the best at the top
    assert_drawn_inside(axes[0, 0].figure)
    plt.close("all")


# ----------------------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def small():
    X = pd.DataFrame({"a": np.repeat([0, 1, 2, 3], 25), "b": np.tile([0, 1, 2, 3], 25)})
    y = (X["a"] >= 2).astype(int)
    return X, y, RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)


def test_bad_models(small):
    X, y, model = small
    with pytest.raises(ValueError, match="models is empty"):
        compare_models({}, X)
    with pytest.raises(ValueError, match="models is empty"):
        compare_models([], X)
    with pytest.raises(ValueError, match="models must be a dict"):
        compare_models(model, X)
    with pytest.raises(ValueError, match=r"models\['new'\].*not fitted"):
        compare_models({"ok": model, "new": LogisticRegression()}, X)
    with pytest.raises(ValueError, match=r"models\[1\] is a regressor"):
        compare_models([model, LinearRegression().fit(X, y)], X)
    three = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, X["b"] % 3)
    with pytest.raises(ValueError, match=r"same classes.*models\['a'\].*\[0, 1\].*\[0, 1, 2\]"):
        compare_models({"a": model, "b": three}, X)
    labelled = RandomForestClassifier(n_estimators=5).fit(X, np.where(y, "yes", "no"))
    with pytest.raises(ValueError, match="same classes"):
        compare_models({"a": model, "b": labelled}, X)
    # names are columns ("1 prediction") and JSON keys: 1 and "1" would overwrite each other
    with pytest.raises(ValueError, match=r"models: the names 1 and '1' are the same as text"):
        compare_models({1: model, "1": model}, X)


class _Reversed:
    """A fitted classifier whose classes_ (and probability columns) are in reverse order."""

    def __init__(self, model):
        self.model, self.classes_ = model, model.classes_[::-1]

    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        return self.model.predict_proba(X)[:, ::-1]


def test_same_classes_in_another_order_are_compared(small):
    X, y, model = small
    result = compare_models({"a": model, "b": _Reversed(model)}, X, n_rows=20, random_state=0)
    assert result.classes_.tolist() == [0, 1] and result.n_disagreements_ == 0
    np.testing.assert_array_equal(result.predictions_["a"], result.predictions_["b"])
    assert result.reliance(["a"]) == {"a": 1.0, "b": 1.0}
    assert result.top_features_["a"] == result.top_features_["b"]


def test_bad_data_and_options(small, documents):
    X, y, model = small
    with pytest.raises(ValueError, match="X has no rows"):
        compare_models([model], X.iloc[:0])
    with pytest.raises(ValueError, match="not one string"):
        compare_models([model], "a document")
    with pytest.raises(ValueError, match="y has 3 labels for 100 rows"):
        compare_models([model], X, y=[0, 1, 0])
    # labels of another type than the classes would score every model 0 (sklearn refuses)
    with pytest.raises(ValueError, match=r"y holds none of the models' classes \[0, 1\]"):
        compare_models([model], X, y=np.where(y, "1", "0"))
    with pytest.raises(ValueError, match="reference must have the columns of X"):
        compare_models([model], X, reference=X[["b", "a"]])
    with pytest.raises(ValueError, match="n_rows must be an integer >= 1"):
        compare_models([model], X, n_rows=0)
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        compare_models([model], X, k=0)
    with pytest.raises(ValueError, match="explainer must be an AnchorExplainer"):
        compare_models([model], X, explainer=TabularSampler())
    with pytest.raises(ValueError, match="aggregator applies to documents"):
        compare_models([model], X, aggregator=GlobalAnchorAggregator(None))
    *_, models = documents
    with pytest.raises(ValueError, match="reference applies to tables"):
        compare_models(models, ["spam offer", "lunch meeting"], reference=X)


def test_bad_features(small, text_comparison):
    X, y, model = small
    result = compare_models([model], X, n_rows=8, random_state=0)
    assert isinstance(result, ModelComparison)
    with pytest.raises(ValueError, match=r"features: \['c'\] are not features of the data"):
        result.reliance(["a", "c"])
    with pytest.raises(ValueError, match="features is empty"):
        result.reliance([])
    with pytest.raises(ValueError, match=r"features: \['zzzz'\] occur in none of the documents"):
        text_comparison.reliance(["zzzz"])
    with pytest.raises(ValueError, match="features must be words"):
        text_comparison.reliance([3])
    with pytest.raises(ValueError, match=r"\['e-mail'\] are not single words"):
        text_comparison.reliance(["e-mail"])
    with pytest.raises(ValueError, match="features is empty"):
        make_reliance_scorer([])
    with pytest.raises(ValueError, match="random_state must be an integer"):
        make_reliance_scorer(["a"], random_state=None)
    with pytest.raises(ValueError, match=r"features: \['c'\] are not features"):
        make_reliance_scorer(["c"], n_rows=5)(model, X)
    # an array's columns are x0, x1, ... or their positions
    on_rows = RandomForestClassifier(n_estimators=5, random_state=0).fit(X.to_numpy(), y)
    on_array = compare_models([on_rows], X.to_numpy(), n_rows=8, random_state=0)
    assert on_array.reliance([0]) == {0: 1.0}
    assert on_array.reliance([0]) == on_array.reliance(["x0"])


# ----------------------------------------------------------------------------- command line
def _run(args, capsys):
    from skanchors.cli import main

    try:
        code = main(args)
    except SystemExit as done:  # argparse's usage errors
        code = done.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def saved_tables(tmp_path):
    import joblib

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x0": rng.integers(0, 4, 300), "x1": rng.integers(0, 4, 300)})
    y = (X["x0"] >= 2).astype(int)
    joblib.dump(RandomForestClassifier(5, random_state=0).fit(X, y), tmp_path / "on_x0.joblib")
    joblib.dump(
        RandomForestClassifier(5, random_state=0).fit(X, (X["x1"] >= 2).astype(int)),
        tmp_path / "on_x1.joblib",
    )
    X.assign(label=y).to_csv(tmp_path / "rows.csv", index=False)
    return tmp_path


def test_cli_compare_tables(saved_tables, capsys):
    d = saved_tables
    args = ["compare", "--model", str(d / "on_x0.joblib"), "--model", str(d / "on_x1.joblib")]
    args += ["--data", str(d / "rows.csv"), "--label", "label", "--features", "x1"]
    args += ["--n-rows", "20", "--json", str(d / "c.json"), "--html", str(d / "c.html")]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    assert "on_x0  " in out and "on_x1  " in out
    assert "  on_x0: 0.000 (predicted 0: 0.000, predicted 1: 0.000)" in out
    assert "  on_x1: 1.000 (predicted 0: 1.000, predicted 1: 1.000)" in out
    assert re.search(r"row \d+:\n    on_x0 predicts \d: .*x0.*\n    on_x1 predicts \d: .*x1", out)
    data = json.loads((d / "c.json").read_text())
    assert data["models"] == ["on_x0", "on_x1"]
    assert data["accuracy"]["on_x0"] == 1.0 and data["accuracy"]["on_x1"] < 0.7
    assert data["reliance"] == {
        "features": ["x1"],
        "share": {"on_x0": 0.0, "on_x1": 1.0},
        "by_class": {"on_x0": {"0": 0.0, "1": 0.0}, "on_x1": {"0": 1.0, "1": 1.0}},
    }
    assert data["top_features"]["on_x1"]["1"] == [["x1", 1.0]]
    page = (d / "c.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert page.count("<svg") == 4  # 2 classes x 2 models
    assert "Reliance on x1" in page


def test_cli_compare_documents(documents, tmp_path, capsys):
    import joblib

    *_, leaky_val, y_leaky, _, _, models = documents
    for name, model in models.items():
        joblib.dump(model, tmp_path / f"{name}.joblib")
    pd.DataFrame({"label": y_leaky, "text": leaky_val}).to_csv(tmp_path / "d.csv", index=False)
    args = ["compare", "--model", str(tmp_path / "leaky.joblib")]
    args += ["--model", str(tmp_path / "clean.joblib"), "--data", str(tmp_path / "d.csv")]
    args += ["--text-column", "text", "--label", "label", "--features", TOKEN, "--n-rows", "20"]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    assert f"  leaky: {TOKEN} (" in out
    assert re.search(r"  clean: 0\.000 \(predicted ham: 0\.000, predicted spam: 0\.000\)", out)
    found = re.search(r"  leaky: (0\.\d+) \(predicted ham: 0\.000, predicted spam: ([\d.]+)\)", out)
    assert found and float(found[1]) >= 0.25 and float(found[2]) >= 0.9


def test_cli_compare_usage_errors(saved_tables, documents, tmp_path, capsys):
    import joblib

    d = saved_tables
    base = ["compare", "--model", str(d / "on_x0.joblib"), "--data", str(d / "rows.csv")]
    three = RandomForestClassifier(5, random_state=0).fit(
        pd.DataFrame({"x0": [0, 1, 2], "x1": [0, 1, 2]}), [0, 1, 2]
    )
    joblib.dump(three, d / "three.joblib")
    for extra, message in [
        (["--label", "nosuch"], "--label: no column 'nosuch'"),
        (["--text-column", "nosuch"], "--text-column: no column 'nosuch'"),
        (["--text-column", "x0", "--drop", "x1"], "--drop apply to tables"),
        (["--model", str(d / "on_x0.joblib")], "--model: the same file is given twice"),
        (["--label", "label", "--features", "x9"], "--features: features: ['x9'] are not"),
        (["--model", str(d / "three.joblib"), "--label", "label"], "same classes"),
        ([], "unseen at fit time:\n- label\n Leave such columns out with --drop"),
        (["--drop", "nosuch"], "--drop: ['nosuch'] not in the columns of --data"),
    ]:
        code, _, err = _run(base + extra, capsys)
        assert code == 2 and message in err and "Traceback" not in err, (extra, err)
        assert "compare: error:" in err


def test_demo_compare_exposes_both_planted_leaks(capsys):
    from skanchors.cli import main

    assert main(["demo", "--compare", "--rows", "30"]) == 0
    out = capsys.readouterr().out
    line = re.compile(
        r"^  (.+?)\s+accuracy ([\d.]+) on the leaky validation split, ([\d.]+) on the clean "
        r"test split; reliance on '(\w+)' ([\d.]+)",
        re.M,
    )
    rows = {m[1]: (float(m[2]), float(m[3]), m[4], float(m[5])) for m in line.finditer(out)}
    leaky, clean = rows["all words"], rows["without smsrelay"]
    assert leaky[0] > clean[0] and leaky[1] < clean[1]  # validation prefers the leak, test not
    assert leaky[3] > 0.0 and clean[3] == 0.0  # (about one validation message in 8 is spam)
    spam = re.findall(r"reliance on 'smsrelay' [\d.]+ \(by predicted class .*spam: ([\d.]+)", out)
    assert float(spam[0]) >= 0.7 and float(spam[1]) == 0.0
    assert "  all words, top of class spam: smsrelay," in out
    assert "smsrelay" not in out.split("without smsrelay, top of class spam:")[1].split("\n")[0]
    leaky, clean = rows["all columns"], rows["without record_id"]
    assert leaky[0] > clean[0] + 0.1 and leaky[1] < clean[1] - 0.2
    assert leaky[3] > 0.5 and clean[3] == 0.0
    assert re.search(r"^  all columns, top of class 1: record_id\b", out, re.M)
