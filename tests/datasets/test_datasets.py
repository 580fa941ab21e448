"""Tests for the shipped data sets and their loaders."""

import hashlib

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import Bunch

from skanchors.datasets import (
    load_adult,
    load_movie_reviews,
    load_sms_spam,
    load_titanic,
    make_bike_sharing,
)
from skanchors.datasets._base import _open_data

TABULAR_LOADERS = [load_titanic, load_adult]
TEXT_LOADERS = [load_sms_spam, load_movie_reviews]
ALL_LOADERS = TABULAR_LOADERS + TEXT_LOADERS

TITANIC_DTYPES = {
    "Pclass": "int64",
    "Sex": "category",
    "Age": "float64",
    "SibSp": "int64",
    "Parch": "int64",
    "Fare": "float64",
    "Embarked": "category",
}
ADULT_CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]
ADULT_NUMERIC = [
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
]


def assert_same_frame(left, right):
    # DataFrame.equals instead of pandas.testing.assert_frame_equal, which takes more than a
    # second on the adult categoricals.
    assert list(left.columns) == list(right.columns)
    assert left.dtypes.to_dict() == right.dtypes.to_dict()
    assert left.equals(right)


# SHA-256 of the original files in the project's data folder: the package ships them unchanged.
@pytest.mark.parametrize(
    "name, sha256",
    [
        ("titanic.csv", "4a437fde05fe5264e1701a7387ac6fb75393772ba38bb2c9c566405af5af4bd7"),
        ("adult.data", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"),
        ("sms.tsv", "7d039a24a6083ed9ef0f806ebad56bbb976e3aeb8de05669173bfdc4996c239d"),
        ("rt-polarity.pos", "4134882974a28d0c7b5151256f0e33a6169984ee7372c279e673f1114f475d58"),
        ("rt-polarity.neg", "2d11cfbc790f1cd96d78339f41ce53ced1efa83cd22d37d6788fa3fe3d17e2fd"),
    ],
)
def test_shipped_files_are_the_originals(name, sha256):
    assert hashlib.sha256(_open_data(name)).hexdigest() == sha256


def test_titanic_frame():
    bunch = load_titanic()
    assert isinstance(bunch, Bunch)
    X, y = bunch.data, bunch.target
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert X.shape == (891, 7)
    assert bunch.feature_names == list(TITANIC_DTYPES)
    assert X.dtypes.astype(str).to_dict() == TITANIC_DTYPES
    assert y.name == "Survived" and y.dtype == np.int64
    assert set(X["Sex"].cat.categories) == {"female", "male"}
    assert set(X["Embarked"].cat.categories) == {"C", "Q", "S"}
    # Missing values are kept as NaN, not imputed.
    assert X["Age"].isna().sum() == 177
    assert X["Embarked"].isna().sum() == 2
    assert X.drop(columns=["Age", "Embarked"]).notna().all().all()
    assert y.value_counts().to_dict() == {0: 549, 1: 342}
    assert bunch.target_names.tolist() == ["died", "survived"]
    assert bunch.frame.shape == (891, 8)
    assert_same_frame(bunch.frame, pd.concat([X, y], axis=1))
    # First passenger of the file, to catch a shifted or reordered parse.
    assert X.iloc[0].tolist() == [3, "male", 22.0, 1, 0, 7.25, "S"]


def test_adult_frame():
    bunch = load_adult()
    X, y = bunch.data, bunch.target
    assert X.shape == (32561, 14)
    assert bunch.feature_names == list(X.columns)
    assert set(bunch.feature_names) == set(ADULT_CATEGORICAL) | set(ADULT_NUMERIC)
    for name in ADULT_CATEGORICAL:
        assert isinstance(X[name].dtype, pd.CategoricalDtype), name
        categories = [str(c) for c in X[name].cat.categories]
        assert all(c == c.strip() and c for c in categories), name
        assert "?" not in categories, name
    for name in ADULT_NUMERIC:
        assert X[name].dtype == np.int64, name
    assert X.isna().sum()[lambda s: s > 0].to_dict() == {
        "workclass": 1836,
        "occupation": 1843,
        "native-country": 583,
    }
    assert y.name == "income" and y.dtype == np.int64
    assert y.value_counts().to_dict() == {0: 24720, 1: 7841}
    assert bunch.target_names.tolist() == ["<=50K", ">50K"]
    assert X["sex"].value_counts().to_dict() == {"Male": 21790, "Female": 10771}
    assert X.iloc[0, :4].tolist() == [39, "State-gov", 77516, "Bachelors"]
    assert_same_frame(bunch.frame, pd.concat([X, y], axis=1))


@pytest.mark.parametrize("loader", TABULAR_LOADERS)
def test_tabular_as_numpy(loader):
    frame_bunch = loader()
    bunch = loader(as_frame=False)
    assert bunch.frame is None
    assert isinstance(bunch.data, np.ndarray) and bunch.data.dtype == object
    assert bunch.data.shape == frame_bunch.data.shape
    assert isinstance(bunch.target, np.ndarray) and bunch.target.dtype == np.int64
    np.testing.assert_array_equal(bunch.target, frame_bunch.target.to_numpy())
    assert bunch.feature_names == frame_bunch.feature_names
    # Same values, NaN in the same places.
    missing = pd.isna(bunch.data)
    np.testing.assert_array_equal(missing, frame_bunch.data.isna().to_numpy())
    np.testing.assert_array_equal(
        bunch.data[~missing], frame_bunch.data.to_numpy(dtype=object)[~missing]
    )


@pytest.mark.parametrize("loader", TABULAR_LOADERS)
@pytest.mark.parametrize("as_frame", [True, False])
def test_tabular_return_X_y(loader, as_frame):
    bunch = loader(as_frame=as_frame)
    X, y = loader(return_X_y=True, as_frame=as_frame)
    assert type(X) is type(bunch.data) and type(y) is type(bunch.target)
    if as_frame:
        assert_same_frame(X, bunch.data)
        assert y.name == bunch.target.name and y.equals(bunch.target)
    else:
        assert X.shape == bunch.data.shape
        np.testing.assert_array_equal(y, bunch.target)


def test_sms_spam():
    bunch = load_sms_spam()
    texts, target = bunch.data, bunch.target
    assert isinstance(texts, list) and len(texts) == 5574
    assert all(isinstance(t, str) and t for t in texts)
    assert isinstance(target, np.ndarray) and target.dtype.kind == "U"
    assert target.shape == (5574,)
    assert set(target) == {"ham", "spam"}
    assert (target == "spam").sum() == 747
    assert bunch.target_names.tolist() == ["ham", "spam"]
    assert texts[0].startswith("Go until jurong point")
    # Quotes are part of the messages, not CSV quoting.
    assert texts[-1] == "Rofl. Its true to its name"
    assert sum(t.startswith('"') for t in texts) > 0
    X, y = load_sms_spam(return_X_y=True)
    assert X == texts
    np.testing.assert_array_equal(y, target)


def test_movie_reviews():
    bunch = load_movie_reviews()
    sentences, target = bunch.data, bunch.target
    assert isinstance(sentences, list) and len(sentences) == 10662
    assert all(isinstance(s, str) and s and s == s.strip() for s in sentences)
    assert isinstance(target, np.ndarray) and target.dtype == np.int64
    # Positives first, then negatives.
    np.testing.assert_array_equal(target[:5331], 1)
    np.testing.assert_array_equal(target[5331:], 0)
    assert bunch.target_names.tolist() == ["negative", "positive"]
    assert sentences[0].startswith("the rock is destined to be the 21st century's new")
    assert sentences[5331] == "simplistic , silly and tedious ."
    # The file is UTF-8; accented characters are decoded, not mojibake.
    assert any("é" in s for s in sentences)
    assert not any("Ã" in s for s in sentences)
    X, y = load_movie_reviews(return_X_y=True)
    assert X == sentences
    np.testing.assert_array_equal(y, target)


@pytest.mark.parametrize("loader", ALL_LOADERS)
def test_descr_names_source_and_licence(loader):
    descr = loader().DESCR
    assert isinstance(descr, str)
    assert "Source" in descr
    assert "licence" in descr.lower()


@pytest.mark.parametrize("loader", TABULAR_LOADERS)
def test_tabular_copies_are_independent(loader):
    first = loader()
    first.data.iloc[0, 0] = 99
    del first.data[first.data.columns[-1]]
    first.target.iloc[:] = 7
    first.frame.iloc[:, 0] = 0
    first.feature_names.append("extra")
    first.target_names[0] = "xx"
    X, y = loader(return_X_y=True)
    X.iloc[1, 0] = 0
    y.iloc[0] = 9
    X_np, y_np = loader(return_X_y=True, as_frame=False)
    X_np[:] = None
    y_np[:] = 9

    fresh = loader()
    assert fresh.data.shape[1] == len(fresh.feature_names) == fresh.frame.shape[1] - 1
    assert "extra" not in fresh.feature_names
    assert fresh.target_names[0] != "xx"
    assert set(fresh.target.unique()) == {0, 1}
    assert fresh.data.iloc[0, 0] == (3 if loader is load_titanic else 39)
    assert fresh.data.iloc[1, 0] == (1 if loader is load_titanic else 50)
    assert_same_frame(fresh.frame, pd.concat([fresh.data, fresh.target], axis=1))


def test_frame_data_and_target_of_one_bunch_are_independent():
    bunch = load_titanic()
    bunch.data.loc[0, "Pclass"] = 1
    bunch.target.iloc[0] = 1
    assert bunch.frame.loc[0, "Pclass"] == 3
    assert bunch.frame.loc[0, "Survived"] == 0


@pytest.mark.parametrize("loader", TEXT_LOADERS)
def test_text_copies_are_independent(loader):
    first = loader()
    first.data[0] = "changed"
    first.data.clear()
    first.target[:] = first.target[-1]
    X, y = loader(return_X_y=True)
    X.pop()
    y[0] = y[-1]
    fresh = loader()
    assert fresh.data[0] != "changed"
    assert len(fresh.data) == len(fresh.target) in (5574, 10662)
    assert len(set(fresh.target.tolist())) == 2


@pytest.mark.parametrize("loader", ALL_LOADERS)
@pytest.mark.parametrize("value", [1, 0, None, "True", "yes", 1.0, [True]])
def test_return_X_y_must_be_bool(loader, value):
    with pytest.raises(TypeError, match=r"'return_X_y' must be a bool.*got"):
        loader(return_X_y=value)


@pytest.mark.parametrize("loader", TABULAR_LOADERS)
@pytest.mark.parametrize("value", [1, None, "False", "frame"])
def test_as_frame_must_be_bool(loader, value):
    with pytest.raises(
        TypeError, match=rf"{loader.__name__}\(\) argument 'as_frame' must be a bool"
    ):
        loader(as_frame=value)


@pytest.mark.parametrize("loader", TEXT_LOADERS)
def test_text_loaders_have_no_as_frame(loader):
    with pytest.raises(TypeError, match="as_frame"):
        loader(as_frame=True)


@pytest.mark.parametrize("loader", ALL_LOADERS)
def test_arguments_are_keyword_only(loader):
    with pytest.raises(TypeError):
        loader(True)


@pytest.mark.parametrize("loader", TABULAR_LOADERS)
def test_numpy_bool_is_accepted(loader):
    X, y = loader(return_X_y=np.True_, as_frame=np.False_)
    assert isinstance(X, np.ndarray) and isinstance(y, np.ndarray)


def test_bike_sharing_has_the_real_data_structure():
    bunch = make_bike_sharing(random_state=0)
    X, y = bunch.data, bunch.target
    assert X.shape == (17379, 7) and y.name == "count"
    assert bunch.feature_names == list(X.columns)
    assert list(X.columns) == [
        "season", "hour", "workingday", "weather", "temp", "humidity", "windspeed"
    ]  # fmt: skip
    assert X.dtypes.astype(str).tolist() == ["int64"] * 4 + ["float64", "int64", "int64"]
    assert bunch.frame.shape == (17379, 8) and "bike_sharing_dataset" in bunch.DESCR
    assert set(X.season) == {1, 2, 3, 4} and set(X.hour) == set(range(24))
    assert set(X.workingday) == {0, 1} and set(X.weather) <= {1, 2, 3, 4}
    assert X.temp.between(-8, 39).all() and X.humidity.between(10, 100).all()
    assert X.windspeed.between(0, 57).all()
    assert (y >= 0).all() and (y == np.round(y)).all()
    # the real data's overall level and spread (mean 189, standard deviation 181)
    assert 170 < y.mean() < 210 and 160 < y.std() < 210
    assert X.workingday.mean() == pytest.approx(0.683, abs=0.01)
    by_hour = y.groupby([X.workingday, X.hour]).mean()
    working, off = by_hour[1], by_hour[0]
    # commute peaks at 8 h and 17-18 h on working days, well above their midday
    assert working.idxmax() in (17, 18) and working[8] > 2 * working[11:16].mean()
    assert working[8] > working[7] and working[8] > working[9]
    # days off: a broad midday hump and no morning peak
    assert off.idxmax() in range(11, 16) and off[8] < off[12] / 2
    assert max(working[2:5].max(), off[3:6].max()) < 25  # nights are quiet
    # more rentals when warm, fewer in rain; wind and humidity weigh a little
    assert np.corrcoef(X.temp, y)[0, 1] > 0.2 and np.corrcoef(X.humidity, y)[0, 1] < 0
    by_weather = y.groupby(X.weather).mean()
    assert by_weather[1] > by_weather[2] > 2 * by_weather[3]
    assert y.groupby(X.season).mean().idxmin() == 1  # winter


def test_bike_sharing_draws_are_seeded():
    X, y = make_bike_sharing(300, random_state=1, return_X_y=True)
    X2, y2 = make_bike_sharing(300, random_state=1, return_X_y=True)
    assert_same_frame(X, X2)
    assert y.equals(y2)
    assert not make_bike_sharing(300, random_state=2, return_X_y=True)[1].equals(y)
    A, b = make_bike_sharing(300, random_state=1, return_X_y=True, as_frame=False)
    assert A.dtype == np.float64 and A.shape == (300, 7)
    np.testing.assert_array_equal(A, X.to_numpy(dtype=float))
    np.testing.assert_array_equal(b, y.to_numpy())
    assert make_bike_sharing(5, random_state=0, as_frame=False).frame is None


@pytest.mark.parametrize("n_samples", [0, -3, 2.5, "10", True, None])
def test_bike_sharing_needs_a_positive_number_of_samples(n_samples):
    with pytest.raises(ValueError, match="n_samples must be a positive integer"):
        make_bike_sharing(n_samples)


def test_bike_sharing_flags_must_be_bool():
    with pytest.raises(TypeError, match="'return_X_y' must be a bool"):
        make_bike_sharing(10, return_X_y=1)
    with pytest.raises(TypeError, match="'as_frame' must be a bool"):
        make_bike_sharing(10, as_frame="no")
