"""Small real data sets shipped with skanchors, for examples, tests and the demo.

The files are public data sets, stored unchanged and gzip-compressed in ``data/``; each loader's
``DESCR`` gives the source and licence. Nothing is downloaded. :func:`make_bike_sharing` draws a
synthetic regression data set with the structure of a real one instead.
"""

from ._base import load_adult, load_movie_reviews, load_sms_spam, load_titanic
from ._synthetic import make_bike_sharing

__all__ = [
    "load_adult",
    "load_movie_reviews",
    "load_sms_spam",
    "load_titanic",
    "make_bike_sharing",
]
