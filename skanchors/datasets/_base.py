"""Loaders for the small real data sets shipped with skanchors.

The files in ``data/`` are the public originals, byte for byte, compressed with gzip, and one
reStructuredText description per data set (the loaders' ``DESCR``, also included in
``doc/datasets.rst``). Each data file is parsed once per process (``functools.lru_cache``) and
every loader call returns fresh copies, so a caller that edits what it got back cannot change
what the next caller sees.
"""

import gzip
import io
from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_adult", "load_movie_reviews", "load_sms_spam", "load_titanic"]

_TITANIC_FEATURES = ["Pclass", "Sex", "Age", "SibSp", "Parch", "Fare", "Embarked"]
_TITANIC_DTYPES = {
    "Survived": "int64",
    "Pclass": "int64",
    "Sex": "category",
    "Age": "float64",
    "SibSp": "int64",
    "Parch": "int64",
    "Fare": "float64",
    "Embarked": "category",
}

_ADULT_FEATURES = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
]
_ADULT_CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]


@lru_cache(maxsize=8)
def _load_descr(name):
    # The descriptions live next to the data, as reStructuredText that the documentation
    # includes too (doc/datasets.rst): one text for both.
    return (resources.files("skanchors.datasets") / "data" / name).read_text(encoding="utf-8")


def _check_bool(value, name, func):
    # np.bool_ is what comparisons and numpy reductions give back; accept it like bool.
    if not isinstance(value, bool | np.bool_):
        raise TypeError(
            f"{func}() argument {name!r} must be a bool (True or False), "
            f"got {value!r} of type {type(value).__name__}."
        )


def _open_data(name):
    """Return the uncompressed bytes of the shipped file ``data/<name>.gz``."""
    ref = resources.files("skanchors.datasets") / "data" / f"{name}.gz"
    with ref.open("rb") as fh:
        return gzip.decompress(fh.read())


def _read_lines(name):
    # Split on "\n" only: str.splitlines would also split on characters such as U+0085 that
    # can occur inside free text.
    text = _open_data(name).decode("utf-8")
    return text.removesuffix("\n").split("\n")


@lru_cache(maxsize=1)
def _titanic_frame():
    # Only empty fields are missing; "NA"-like strings in names must not become NaN.
    return pd.read_csv(
        io.BytesIO(_open_data("titanic.csv")),
        usecols=[*_TITANIC_FEATURES, "Survived"],
        dtype=_TITANIC_DTYPES,
        keep_default_na=False,
        na_values=[""],
    )[[*_TITANIC_FEATURES, "Survived"]]


@lru_cache(maxsize=1)
def _adult_frame():
    frame = pd.read_csv(
        io.BytesIO(_open_data("adult.data")),
        header=None,
        names=[*_ADULT_FEATURES, "income"],
        sep=",",
        skipinitialspace=True,  # fields are separated by ", "
        keep_default_na=False,
        na_values=["?"],
        dtype={name: "category" for name in _ADULT_CATEGORICAL},
    )
    for name in _ADULT_CATEGORICAL:
        frame[name] = frame[name].cat.rename_categories(lambda c: c.strip())
    frame["income"] = (frame["income"].str.strip() == ">50K").astype("int64")
    return frame


@lru_cache(maxsize=1)
def _sms_spam():
    labels, texts = zip(*(line.split("\t", 1) for line in _read_lines("sms.tsv")))
    labels = np.asarray(labels, dtype=str)
    labels.flags.writeable = False  # the cached original; loaders hand out copies
    return tuple(texts), labels


@lru_cache(maxsize=1)
def _movie_reviews():
    pos = [line.strip(" ") for line in _read_lines("rt-polarity.pos")]
    neg = [line.strip(" ") for line in _read_lines("rt-polarity.neg")]
    target = np.concatenate([np.ones(len(pos), dtype=np.int64), np.zeros(len(neg), dtype=np.int64)])
    target.flags.writeable = False  # the cached original; loaders hand out copies
    return tuple(pos + neg), target


def _tabular_bunch(frame, features, target_column, target_names, descr, return_X_y, as_frame):
    if as_frame:
        data = frame[features].copy()
        target = frame[target_column].copy()
        frame = frame.copy()
    else:
        # Mixed numeric and string columns: an object array keeps every value as it is.
        data = frame[features].to_numpy(dtype=object)
        target = frame[target_column].to_numpy(dtype=np.int64, copy=True)
        frame = None
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        frame=frame,
        feature_names=list(features),
        target_names=np.asarray(target_names),
        DESCR=descr,
    )


def load_titanic(*, return_X_y=False, as_frame=True):
    """Load the Titanic passengers data set (binary classification).

    891 passengers, 7 raw features (numeric and categorical, with missing values kept) and
    whether the passenger survived. Read more in the :ref:`titanic_dataset` description.

    =================   ====================================
    Classes             2 (0 = died, 1 = survived)
    Samples per class   549 died, 342 survived
    Samples total       891
    Features            7: Pclass, Sex, Age, SibSp, Parch,
                        Fare, Embarked
    Missing values      Age (177), Embarked (2)
    =================   ====================================

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=True
        If True, ``data`` is a :class:`pandas.DataFrame` with dtypes ``int64`` (Pclass, SibSp,
        Parch), ``float64`` (Age, Fare) and ``category`` (Sex, Embarked), and ``target`` a
        :class:`pandas.Series` named ``"Survived"``. If False, ``data`` is a numpy array of
        dtype object and ``target`` an ``int64`` array.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : DataFrame of shape (891, 7) or ndarray of object
            The features. Missing values are NaN.
        target : Series of shape (891,) or ndarray of int64
            1 if the passenger survived, else 0.
        frame : DataFrame of shape (891, 8) or None
            ``data`` and ``target`` in one frame; None when ``as_frame=False``.
        feature_names : list of str
            The names of the columns of ``data``.
        target_names : ndarray of str
            ``["died", "survived"]``: the meaning of target values 0 and 1.
        DESCR : str
            Description, source and licence of the data set.

    (data, target) : tuple if ``return_X_y`` is True
        The first two attributes of the Bunch.

    See Also
    --------
    load_adult : The census income data set, a larger tabular data set.

    Notes
    -----
    PassengerId, Name, Ticket and Cabin of the original file are dropped. The data are read
    once per process; every call returns new copies.

    Examples
    --------
    >>> from skanchors.datasets import load_titanic
    >>> X, y = load_titanic(return_X_y=True)
    >>> X.shape
    (891, 7)
    >>> X.head(3)
       Pclass     Sex   Age  SibSp  Parch     Fare Embarked
    0       3    male  22.0      1      0   7.2500        S
    1       1  female  38.0      1      0  71.2833        C
    2       3  female  26.0      0      0   7.9250        S
    >>> X.dtypes.astype(str).tolist()
    ['int64', 'category', 'float64', 'int64', 'int64', 'float64', 'category']
    >>> int(y.sum())
    342
    """
    _check_bool(return_X_y, "return_X_y", "load_titanic")
    _check_bool(as_frame, "as_frame", "load_titanic")
    return _tabular_bunch(
        _titanic_frame(),
        _TITANIC_FEATURES,
        "Survived",
        ["died", "survived"],
        _load_descr("titanic.rst"),
        return_X_y,
        as_frame,
    )


def load_adult(*, return_X_y=False, as_frame=True):
    """Load the Adult census income data set (binary classification).

    32,561 people from the 1994 US census, 14 features and whether their income exceeds
    50,000 USD a year. Read more in the :ref:`adult_dataset` description.

    =================   ====================================
    Classes             2 (0 = ``<=50K``, 1 = ``>50K``)
    Samples per class   24,720 ``<=50K``, 7,841 ``>50K``
    Samples total       32,561
    Features            14 (6 integer, 8 categorical)
    Missing values      workclass (1,836), occupation
                        (1,843), native-country (583)
    =================   ====================================

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=True
        If True, ``data`` is a :class:`pandas.DataFrame` whose string columns have dtype
        ``category`` and whose numeric columns have dtype ``int64``, and ``target`` a
        :class:`pandas.Series` named ``"income"``. If False, ``data`` is a numpy array of
        dtype object and ``target`` an ``int64`` array.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : DataFrame of shape (32561, 14) or ndarray of object
            The features, strings stripped of surrounding spaces; ``?`` in the original file
            is NaN.
        target : Series of shape (32561,) or ndarray of int64
            1 if the income is ``>50K``, else 0.
        frame : DataFrame of shape (32561, 15) or None
            ``data`` and ``target`` in one frame; None when ``as_frame=False``.
        feature_names : list of str
            The names of the columns of ``data``.
        target_names : ndarray of str
            ``["<=50K", ">50K"]``: the meaning of target values 0 and 1.
        DESCR : str
            Description, source and licence of the data set.

    (data, target) : tuple if ``return_X_y`` is True
        The first two attributes of the Bunch.

    See Also
    --------
    load_titanic : A smaller tabular data set.

    Notes
    -----
    This is the training file ``adult.data`` only (not ``adult.test``). The data are read once
    per process; every call returns new copies.

    Examples
    --------
    >>> from skanchors.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.data.shape
    (32561, 14)
    >>> print(adult.data["workclass"].dtype)
    category
    >>> int(adult.data["workclass"].isna().sum())
    1836
    >>> adult.target_names.tolist()
    ['<=50K', '>50K']
    >>> adult.target.value_counts().sort_index().tolist()
    [24720, 7841]
    """
    _check_bool(return_X_y, "return_X_y", "load_adult")
    _check_bool(as_frame, "as_frame", "load_adult")
    return _tabular_bunch(
        _adult_frame(),
        _ADULT_FEATURES,
        "income",
        ["<=50K", ">50K"],
        _load_descr("adult.rst"),
        return_X_y,
        as_frame,
    )


def load_sms_spam(*, return_X_y=False):
    """Load the SMS Spam Collection (binary text classification).

    5,574 SMS messages in English, 747 of them spam. Read more in the :ref:`sms_spam_dataset`
    description.

    =================   ====================================
    Classes             2 (``"ham"``, ``"spam"``)
    Samples per class   4,827 ham, 747 spam
    Samples total       5,574
    Data                one message (str) per sample
    =================   ====================================

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : list of str of length 5574
            The messages, in the order of the original file.
        target : ndarray of str of shape (5574,)
            ``"ham"`` or ``"spam"``.
        target_names : ndarray of str
            ``["ham", "spam"]``.
        DESCR : str
            Description, source and licence of the data set.

    (data, target) : tuple if ``return_X_y`` is True
        The first two attributes of the Bunch.

    See Also
    --------
    load_movie_reviews : Sentence polarity, the text data set of the Anchors paper.

    Examples
    --------
    >>> from skanchors.datasets import load_sms_spam
    >>> texts, labels = load_sms_spam(return_X_y=True)
    >>> len(texts), int((labels == "spam").sum())
    (5574, 747)
    >>> print(labels[2], "|", texts[2][:30])
    spam | Free entry in 2 a wkly comp to
    """
    _check_bool(return_X_y, "return_X_y", "load_sms_spam")
    texts, labels = _sms_spam()
    data, target = list(texts), labels.copy()
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        target_names=np.asarray(["ham", "spam"]),
        DESCR=_load_descr("sms_spam.rst"),
    )


def load_movie_reviews(*, return_X_y=False):
    """Load the movie review sentence polarity data set (binary text classification).

    10,662 lower-cased, tokenised sentences from movie reviews: 5,331 positive, then 5,331
    negative. Read more in the :ref:`movie_reviews_dataset` description.

    =================   ====================================
    Classes             2 (0 = negative, 1 = positive)
    Samples per class   5,331
    Samples total       10,662
    Data                one sentence (str) per sample
    =================   ====================================

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : list of str of length 10662
            The sentences, positives first.
        target : ndarray of int64 of shape (10662,)
            1 for a positive sentence, 0 for a negative one.
        target_names : ndarray of str
            ``["negative", "positive"]``: the meaning of target values 0 and 1.
        DESCR : str
            Description, source and licence of the data set.

    (data, target) : tuple if ``return_X_y`` is True
        The first two attributes of the Bunch.

    See Also
    --------
    load_sms_spam : Another short-text data set.

    Notes
    -----
    The sentences are ordered by class; shuffle or stratify before splitting them.

    Examples
    --------
    >>> from skanchors.datasets import load_movie_reviews
    >>> reviews = load_movie_reviews()
    >>> len(reviews.data), int(reviews.target.sum())
    (10662, 5331)
    >>> print(reviews.target_names[reviews.target[0]], "|", reviews.data[0])
    positive | the rock is destined to be the 21st century's new " conan " and that he's going
    to make a splash even greater than arnold schwarzenegger , jean-claud van damme or steven
    segal .
    """
    _check_bool(return_X_y, "return_X_y", "load_movie_reviews")
    sentences, labels = _movie_reviews()
    data, target = list(sentences), labels.copy()
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        target_names=np.asarray(["negative", "positive"]),
        DESCR=_load_descr("movie_reviews.rst"),
    )
