"""The speed layer: scikit-learn models predicted faster than through their own methods.

The explainers call a model a few hundred rows at a time, thousands of times per
explanation; for tree ensembles the fixed cost of each call (input validation, a thread pool,
preprocessing) is most of it. This package computes those models' predictions from their
fitted state, to the last bit what their own ``predict_proba`` (or ``predict``) returns, and
checked against it on the first call (:class:`~skanchors._speed._base._CheckedProba`):

- :mod:`~skanchors._speed.forest`: random forests and extra trees;
- :mod:`~skanchors._speed.boosting`: gradient boosting;
- :mod:`~skanchors._speed.hist_boosting`: histogram gradient boosting;
- :mod:`~skanchors._speed.pipeline`: a ``Pipeline`` ending in one of those, or starting with
  a column-wise ``ColumnTransformer`` (:mod:`~skanchors._speed.columnwise`);
- :mod:`~skanchors._speed.splits`: the split thresholds of those ensembles, by which the
  tabular sampler predicts rows the model cannot tell apart once;
- :mod:`~skanchors._speed.kernels`: the compiled kernels (numba, the ``fast`` extra), twins of
  the core's loops, registered with :mod:`skanchors._compiled`;
- :mod:`~skanchors._speed.cache`: the prediction cache (the model's predictions on stream
  samples, stream blocks and whole searches, kept for later searches of the same explainer);
- :mod:`~skanchors._speed.batching`: the searches of several rows run together with their
  model calls merged.

It plugs into the model adapters of :mod:`skanchors.models` through their two hooks,
:func:`~skanchors.models.register_fast_predictor` and
:func:`~skanchors.models.register_split_reader`, when the package is imported (by
``skanchors/__init__.py``); the adapters import nothing of it. The compiled kernels plug into
the core through :mod:`skanchors._compiled`, which the core asks by name; the cache and the
call sharing through :mod:`skanchors._sharing`, which the core asks for them. :func:`disabled`
turns all of it off: models wrapped meanwhile are called through their own methods, the core
runs its numpy code, every search predicts its own samples and rows are explained one after
the other, with the same numbers and the same anchors.
"""

from __future__ import annotations

from contextlib import contextmanager

from .. import _compiled, _sharing
from ..models import register_fast_predictor, register_split_reader
from . import kernels  # noqa: F401 (registers the compiled kernels; imports no numba)
from .batching import run_shared
from .boosting import _BoostingProba, _BoostingRegression, _is_boosting
from .cache import SampleCache
from .forest import _ForestProba, _ForestRegression, _is_forest
from .hist_boosting import _HistBoostingProba, _HistBoostingRegression, _is_hist_boosting
from .pipeline import _is_pipeline, _pipeline_predictor
from .splits import split_thresholds

__all__ = ["enabled", "disabled"]

_ENABLED = True


def enabled():
    """Whether models wrapped now get the speed layer's predictors."""
    return _ENABLED


@contextmanager
def disabled():
    """Within this block, models wrapped (:class:`~skanchors.ProbabilityModel`,
    :class:`~skanchors.models.RegressionModel`, an explainer's ``fit``) are called through
    their own ``predict_proba`` or ``predict``, no compiled kernel is handed out (the core's numpy
    code runs; as with ``SKANCHORS_NUMBA=0``), explainers keep no predictions or searches (no
    prediction cache) and explain rows one after the other (no call sharing). The switch is read
    when a model is wrapped, a kernel asked for, or an explainer fits or explains, for the whole
    process (all threads); what got a predictor or kernel before keeps it, and an explainer that had
    a cache starts a new one afterwards. The split thresholds
    (:func:`~skanchors.models.split_thresholds`) are still read: they decide which rows are sent to
    the model, not what it predicts for them."""
    global _ENABLED
    before = _ENABLED
    _ENABLED = False
    try:
        with _compiled.switched_off(), _sharing.switched_off():
            yield
    finally:
        _ENABLED = before


def _when_enabled(matches):
    def check(estimator, method):
        return _ENABLED and matches(estimator, method)

    return check


# (classifier's adapter, regressor's adapter) by model kind, in the order they are consulted
_ADAPTERS = [
    (_is_forest, _ForestProba, _ForestRegression),
    (_is_boosting, _BoostingProba, _BoostingRegression),
    (_is_hist_boosting, _HistBoostingProba, _HistBoostingRegression),
]


def _builder(classifier, regressor):
    def build(estimator, method):
        return (classifier if method == "predict_proba" else regressor)(estimator)

    return build


for _matches, _classifier, _regressor in _ADAPTERS:
    register_fast_predictor(_when_enabled(_matches), _builder(_classifier, _regressor))
register_fast_predictor(_when_enabled(_is_pipeline), _pipeline_predictor)
register_split_reader(split_thresholds)
_sharing.register_cache(SampleCache)
_sharing.register_call_sharing(run_shared)
