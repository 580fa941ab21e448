"""Synthetic data sets with the structure of real ones, for regression examples and tests.

The generators draw every row afresh from ``random_state``: nothing is shipped or downloaded.
"""

import numpy as np
import pandas as pd
from sklearn.utils import Bunch, check_random_state

from ._base import _check_bool, _load_descr

__all__ = ["make_bike_sharing"]

_BIKE_FEATURES = ["season", "hour", "workingday", "weather", "temp", "humidity", "windspeed"]

# Rentals per hour on a warm, clear day, by hour of the day: working days have the commute
# peaks (8 h, 17-18 h) and a trough at night; days off a broad hump from late morning to late
# afternoon. (The shape of the hourly means of the UCI data, Fanaee-T and Gama 2013.)
_WORKING_DAY = np.array(
    [55, 25, 12, 7, 8, 38, 150, 440, 770, 400, 205, 240,
     310, 300, 280, 315, 465, 820, 770, 550, 390, 295, 220, 135],
    dtype=float,
)  # fmt: skip
_DAY_OFF = np.array(
    [145, 110, 80, 38, 12, 12, 30, 70, 165, 275, 400, 510,
     585, 590, 580, 570, 550, 510, 445, 370, 275, 225, 190, 150],
    dtype=float,
)  # fmt: skip
_SEASON_TEMP = np.array([7.0, 17.0, 27.0, 15.0])  # mean deg C of winter, spring, summer, fall
_SEASON_FACTOR = np.array([0.85, 1.0, 1.05, 1.1])
_WEATHER_P = np.array([0.6598, 0.2614, 0.0786, 0.0002])  # the UCI data's shares
_WEATHER_FACTOR = np.array([1.0, 0.88, 0.45, 0.2])


def make_bike_sharing(n_samples=17379, *, random_state=None, return_X_y=False, as_frame=True):
    """Generate hourly bike rental counts with the structure of the UCI bike sharing data.

    A synthetic regression data set: each row is an hour of a day, with its season,
    weather and whether it is a working day, and the target is the number of bikes rented in
    that hour. The real data (Capital Bikeshare, Washington D.C., 2011-2012; 17,379 hours)
    is not shipped; this generator reproduces its structure: commute peaks at 8 h and 17-18 h
    on working days against a midday hump on days off, demand rising with the temperature
    (and falling a little in the greatest heat), falling with humidity, wind and rain, and
    over-dispersed counts. Read more in the :ref:`bike_sharing_dataset` description.

    =================   ====================================
    Samples total       ``n_samples`` (default 17,379, as the real data)
    Features            7: season, hour, workingday, weather,
                        temp, humidity, windspeed
    Target              rentals in the hour (count, >= 0)
    =================   ====================================

    Parameters
    ----------
    n_samples : int >= 1, default=17379
        Number of hours (rows) to draw.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws: the same seed gives the same data.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=True
        If True, ``data`` is a :class:`pandas.DataFrame` (integer columns season, hour,
        workingday, weather, humidity, windspeed; float column temp) and ``target`` a
        :class:`pandas.Series` named ``"count"``. If False, both are float64 numpy arrays.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : DataFrame of shape (n_samples, 7) or ndarray of float64
            The features (described in :ref:`bike_sharing_dataset`).
        target : Series of shape (n_samples,) or ndarray of float64
            Bikes rented in the hour.
        frame : DataFrame of shape (n_samples, 8) or None
            ``data`` and ``target`` in one frame; None when ``as_frame=False``.
        feature_names : list of str
            The names of the columns of ``data``.
        DESCR : str
            Description of the data set and of how it is generated.

    (data, target) : tuple if ``return_X_y`` is True
        The first two attributes of the Bunch.

    Examples
    --------
    >>> from skanchors.datasets import make_bike_sharing
    >>> X, y = make_bike_sharing(1000, random_state=0, return_X_y=True)
    >>> X.shape, list(X.columns)
    ((1000, 7), ['season', 'hour', 'workingday', 'weather', 'temp', 'humidity', 'windspeed'])
    >>> commute = (X.workingday == 1) & X.hour.isin([8, 17, 18])
    >>> night = X.hour.between(1, 4)
    >>> bool(y[commute].mean() > 5 * y[night].mean())
    True
    """
    if not isinstance(n_samples, (int, np.integer)) or isinstance(n_samples, bool) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}.")
    _check_bool(return_X_y, "return_X_y", "make_bike_sharing")
    _check_bool(as_frame, "as_frame", "make_bike_sharing")
    rng = check_random_state(random_state)
    n = int(n_samples)
    season = rng.randint(0, 4, size=n)
    hour = rng.randint(0, 24, size=n)
    workingday = (rng.uniform(size=n) < 0.683).astype(np.int64)
    weather = rng.choice(4, size=n, p=_WEATHER_P / _WEATHER_P.sum())
    # warmest at 15 h, the day's temperature around its season's
    daily = np.cos(2 * np.pi * (hour - 15) / 24)
    temp = _SEASON_TEMP[season] + 3.0 * daily - 1.5 * weather + rng.normal(0.0, 5.0, size=n)
    temp = np.round(np.clip(temp, -8.0, 39.0), 1)
    humidity = 62.0 - 8.0 * daily + np.array([0.0, 8.0, 20.0, 28.0])[weather]
    humidity = np.clip(np.round(humidity + rng.normal(0.0, 14.0, size=n)), 10, 100)
    windspeed = rng.gamma(2.5, 5.0, size=n) + 3.0 * (weather >= 2)
    windspeed = np.clip(np.round(windspeed), 0, 57)

    profile = np.where(workingday == 1, _WORKING_DAY[hour], _DAY_OFF[hour])
    warmth = (0.35 + 0.65 / (1.0 + np.exp(-(temp - 12.0) / 6.0))) * (
        1.0 - 0.03 * np.maximum(temp - 31.0, 0.0)
    )
    damp = 1.0 - 0.45 * np.clip((humidity - 60.0) / 40.0, 0.0, 1.0)
    wind = 1.0 - 0.012 * np.maximum(windspeed - 15.0, 0.0)
    mean = profile * warmth * damp * wind * _WEATHER_FACTOR[weather] * _SEASON_FACTOR[season]
    # over-dispersed counts: a Poisson draw around the mean times a log-normal day effect
    count = rng.poisson(mean * np.exp(rng.normal(-0.045, 0.3, size=n))).astype(float)

    columns = {
        "season": season + 1,
        "hour": hour,
        "workingday": workingday,
        "weather": weather + 1,
        "temp": temp,
        "humidity": humidity.astype(np.int64),
        "windspeed": windspeed.astype(np.int64),
    }
    descr = _load_descr("bike_sharing.rst")
    if as_frame:
        data = pd.DataFrame({k: np.asarray(v) for k, v in columns.items()})
        data = data.astype({k: np.int64 for k in _BIKE_FEATURES if k != "temp"})
        target = pd.Series(count, name="count")
        frame = pd.concat([data, target], axis=1)
    else:
        data = np.column_stack([np.asarray(columns[k], dtype=float) for k in _BIKE_FEATURES])
        target, frame = count, None
    if return_X_y:
        return data, target
    return Bunch(
        data=data, target=target, frame=frame, feature_names=list(_BIKE_FEATURES), DESCR=descr
    )
