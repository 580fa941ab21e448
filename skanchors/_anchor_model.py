"""The model an :class:`~skanchors.AnchorExplainer` explains: its task, targets and refits.

The tolerance band of a regression, the hashing of rows by a model's split thresholds, the
model read again after a refit in place, and what to anchor for each row explained.
"""

from __future__ import annotations

import time

import numpy as np

from . import _sharing
from ._base import take_rows
from ._explain_rows import _Classification, _Regression
from ._refit import reads_other_columns, refit_error
from .discretizers import TreeDiscretizer
from .models import RegressionModel, as_probability_model, split_thresholds


class _ModelTask:
    """:class:`~skanchors.AnchorExplainer`'s methods about the model it explains."""

    def _set_band(self, predicted):
        """``tolerance_`` (and the spread it is counted in) from the model's predictions on
        the reference rows."""
        predicted = np.asarray(predicted, dtype=float)
        spread = float(np.std(predicted))
        # (rounding leaves a spread of about 1e-17 around a constant mean's value)
        if spread <= 1e-12 * max(float(np.abs(predicted).max()), 1.0):
            spread = 0.0
        if self.tolerance_unit == "absolute":
            self.tolerance_ = float(self.tolerance)
        else:
            if spread == 0.0:
                raise ValueError(
                    "The model predicts the same value on every reference row, so a "
                    "tolerance in standard deviations is 0; use tolerance_unit='absolute'."
                )
            self.tolerance_ = float(self.tolerance) * spread
        self._spread = spread

    def _hash_by_splits(self):
        """A tree ensemble given its input as the sampler makes it: rows it cannot tell apart
        (every feature between the same two split thresholds) are predicted once
        (:meth:`~skanchors.samplers.TabularSampler.hash_by_splits`). Returns whether it
        does."""
        sampler = self.sampler_
        if not sampler.capabilities.split_hashing:
            return False
        splits = split_thresholds(self.estimator)
        if splits is None:
            return False
        names = getattr(self.estimator, "feature_names_in_", None)
        ours = getattr(sampler, "feature_names_in_", None)
        if names is not None and (ours is None or list(names) != list(ours)):
            return False  # the model reads other columns than the sampler's
        if self.estimator.n_features_in_ == sampler.n_features_in_:
            return bool(sampler.hash_by_splits(*splits))
        return False

    def _current_model(self):
        """Read the model again if it was refitted in place since :meth:`fit`.

        The model wrapper computes what the estimator was when it was wrapped (compiled trees,
        boosting's prior, encoders' tables), the classes, the hashing of rows by the trees'
        split thresholds and the cache of predictions and searches are the old model's. What
        :meth:`fit` read from the model alone is read again, so the explanations are those
        of an explainer fitted anew on the same reference data; what it computed from the
        model's predictions on the reference data (``balance``, a ``tolerance`` in standard
        deviations, bins cut by a :class:`~skanchors.discretizers.TreeDiscretizer`) needs that
        data, which the explainer does not keep: then this asks for
        :meth:`fit` again.
        """
        changed = self.model_.refitted()
        if not changed:
            return
        regression = isinstance(self.model_, RegressionModel)
        blocked = None
        if self.balance:
            blocked = "its reference rows are weighted by the old model's predictions (balance)"
        elif regression and self.tolerance_unit == "std":
            blocked = "its tolerance is in standard deviations of the old model's predictions"
        elif isinstance(getattr(self.sampler_, "discretizer_", None), TreeDiscretizer):
            blocked = "its bins were cut where the old model's predictions change"
        elif reads_other_columns(self.estimator, self.sampler_):
            blocked = "it now reads other columns than the reference data's"
        model = RegressionModel(self.estimator) if regression else None
        if model is None:
            model = as_probability_model(self.estimator, labels_only=True)
            if model.classes_ is None and blocked is None:
                blocked = "its classes cannot be read without the reference data"
        if blocked is None and model.refitted():
            blocked = "it was given in a ProbabilityModel built before the refit: wrap it again"
        if blocked is None:
            was_hashed = getattr(self.sampler_, "_split_thresholds", None) is not None
            if not self._hash_by_splits() and was_hashed:
                blocked = "the reference rows are hashed by the old model's split thresholds"
        if blocked is not None:
            raise refit_error(self, changed, blocked)
        self.model_ = model
        if not regression:
            self.classes_ = self.model_.classes_
        # (the old model's predictions and searches are forgotten)
        self._cache = _sharing.new_cache(self._cache_size())

    def _task(self):
        if isinstance(self.model_, RegressionModel):
            return _Regression(self.model_, self.tolerance_)
        return _Classification(self.model_, self.classes_)

    def _targets(self, X, rows, y):
        """What to anchor for each row, and the seconds of a one-row model call.

        With several rows, the first row is predicted alone (timed) and the others together:
        the timing tells whether the rows' searches should share their model calls.
        """
        model_input = self.sampler_.to_model_input(X)
        regression = isinstance(self.model_, RegressionModel)
        predict = self.model_.predict if regression else self.model_.predict_index
        call_seconds = predicted = None
        if y is None or not regression:
            if len(rows) > 1:
                # the others first: a model's first call may carry one-off work (the forest
                # path of ProbabilityModel checks itself against predict_proba once)
                rest = np.asarray(predict(take_rows(model_input, np.arange(1, len(rows)))))
                t0 = time.perf_counter()
                first = np.asarray(predict(take_rows(model_input, [0])))
                call_seconds = time.perf_counter() - t0
                predicted = np.concatenate([first, rest])
            else:
                predicted = np.asarray(predict(model_input))
        if y is None:
            return predicted, call_seconds
        if regression:
            try:
                y = np.asarray(y, dtype=float).ravel()
            except (TypeError, ValueError) as error:
                raise ValueError(
                    f"y must hold numbers, the regression targets to anchor: {error}."
                ) from None
            if len(y) != len(rows):
                raise ValueError(f"y has {len(y)} entries for {len(rows)} rows of X.")
            if not np.isfinite(y).all():
                raise ValueError(
                    f"y must hold finite regression targets to anchor, got {y[~np.isfinite(y)][0]}"
                    f" at position {int(np.flatnonzero(~np.isfinite(y))[0])}."
                )
            return y, call_seconds
        y = np.asarray(y).ravel()
        if len(y) != len(rows):
            raise ValueError(f"y has {len(y)} entries for {len(rows)} rows of X.")
        index = {c: i for i, c in enumerate(self.classes_.tolist())}
        unknown = [v for v in y.tolist() if v not in index]
        if unknown:
            raise ValueError(
                f"y contains classes {unknown[:5]} that the model does not predict; its classes "
                f"are {self.classes_.tolist()}."
            )
        return np.array([index[v] for v in y.tolist()]), call_seconds
