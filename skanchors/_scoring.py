"""Model selection of anchor explainers: :func:`anchor_scorer`, what ``GridSearchCV`` maximises.

The requirements an anchor must meet on held-out rows to count belong to the comparison, not to
any one explainer: a grid over ``threshold`` or ``tolerance`` compares every setting against the
same scorer.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._base import take_rows
from ._documents import tokenize
from ._explain_rows import _Regression
from ._warnings import NoAnchorWarning

__all__ = ["AnchorScorer", "anchor_scorer"]


class AnchorScorer:
    """Held-out coverage of honest anchors; build it with :func:`anchor_scorer`.

    Called as ``scorer(explainer, X, y=None)`` (scikit-learn's scorer protocol), it returns a
    float in [0, 1]; see :func:`anchor_scorer`.
    """

    def __init__(self, rows=50, threshold=0.95, tolerance=0.25):
        self.rows = _check(rows, "rows", Integral, 1, None, none=True)
        self.threshold = _check(threshold, "threshold", Real, 0, 1, none=True, open_low=True)
        self.tolerance = _check(tolerance, "tolerance", Real, 0, None, none=True, open_low=True)

    def __repr__(self):
        return (
            f"anchor_scorer(rows={self.rows!r}, threshold={self.threshold!r}, "
            f"tolerance={self.tolerance!r})"
        )

    def __eq__(self, other):
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self):
        return hash((type(self), self.rows, self.threshold, self.tolerance))

    def __call__(self, explainer, X, y=None):
        check_is_fitted(explainer, "sampler_")
        explainer._validate_params()
        sampler = explainer.sampler_
        if sampler.modality == "image":
            raise ValueError(
                "score checks anchors on held-out rows they cover; an image anchor names "
                "superpixels of its own image, and coverage across images is undefined. Use "
                "perturbation_precision to check image anchors."
            )
        model_input = sampler.to_model_input(X)
        candidates = np.arange(len(model_input))
        if sampler.modality == "text":
            # Held-out documents without a word (":)") cannot be explained, but are checked.
            candidates = np.array([i for i in candidates if tokenize(model_input[i])], dtype=int)
        if len(candidates) == 0:
            raise ValueError("X has no rows or documents that can be explained.")
        if len(model_input) < 2:
            raise ValueError(
                "score needs at least 2 rows or documents in X: each anchor is checked on the "
                f"other rows; got {len(model_input)}."
            )
        chosen = candidates
        if self.rows is not None and len(candidates) > self.rows:
            rng = check_random_state(explainer.random_state)
            chosen = np.sort(rng.choice(candidates, size=self.rows, replace=False))
        bar = explainer.threshold if self.threshold is None else self.threshold
        task = explainer._task()
        predicted = task.outcomes(model_input, explainer)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoAnchorWarning)
            anchors = explainer.explain(take_rows(model_input, chosen))
        values = []
        for i, anchor in zip(chosen, anchors):
            mask = anchor.covers(model_input)
            mask[i] = False
            if not mask.any():
                values.append(0.0)
                continue
            agree = task.agrees(predicted[mask], anchor.prediction)
            if isinstance(task, _Regression) and self.tolerance is not None:
                band = self.tolerance * explainer._spread
                agree = np.abs(predicted[mask] - anchor.prediction) <= band
            precision = float(np.mean(agree))
            # coverage of the other rows, as Anchor.check(..., exclude=i) counts it
            values.append(mask.sum() / (len(mask) - 1) if precision >= bar else 0.0)
        return float(np.mean(values))


def anchor_scorer(*, rows=50, threshold=0.95, tolerance=0.25):
    """A scorer of :class:`~skanchors.AnchorExplainer` for model selection (``GridSearchCV``).

    The scorer explains up to ``rows`` rows of the held-out data ``X`` (a cross-validation
    fold) and checks each anchor on the *other* rows of ``X``: an anchor scores its held-out
    coverage if the model's prediction on the held-out rows it covers agrees with the anchor
    at least ``threshold`` of the time, and 0 otherwise. The score is the mean over the
    explained rows: broad rules that are precise on unseen data score high, over-general ones
    0. :meth:`AnchorExplainer.score <skanchors.AnchorExplainer.score>` is this scorer with its
    defaults.

    Parameters
    ----------
    rows : int >= 1 or None, default=50
        Explain at most this many rows of ``X`` (chosen with the explainer's
        ``random_state``); ``None`` explains all of them.
    threshold : float in (0, 1] or None, default=0.95
        The precision an anchor must keep on the held-out rows to count. It is fixed, not the
        explainer's ``threshold``, so that a grid over ``threshold`` compares every setting
        against the same requirement (against its own threshold, the loosest setting would
        win: its broad rules need only be right that often). ``None`` uses each explainer's
        ``threshold``.
    tolerance : float > 0 or None, default=0.25
        Regression only: agreeing means a held-out prediction within ``tolerance`` standard
        deviations (of the model's predictions on the reference data) of the anchor's. Fixed
        for the reason ``threshold`` is: against its own ``tolerance`` a grid over
        ``tolerance`` would pick the widest band, whose empty rule holds every prediction
        within it. ``None`` uses each explainer's ``tolerance_``.

    Returns
    -------
    scorer : AnchorScorer
        Callable as ``scorer(explainer, X, y=None)``, returning a float in [0, 1]; pass it as
        ``scoring`` to ``GridSearchCV`` or ``cross_val_score``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skanchors import AnchorExplainer, anchor_scorer
    >>> def model(X):  # predicts 1 exactly when x0 > 0.5
    ...     p = (np.asarray(X)[:, 0] > 0.5).astype(float)
    ...     return np.column_stack([1 - p, p])
    >>> X = np.random.default_rng(0).uniform(size=(300, 3))
    >>> search = GridSearchCV(
    ...     AnchorExplainer(model, random_state=0), {"threshold": [0.8, 0.95]},
    ...     scoring=anchor_scorer(rows=10, threshold=0.9), cv=2,
    ... ).fit(X)
    >>> search.best_params_
    {'threshold': 0.95}
    """
    return AnchorScorer(rows=rows, threshold=threshold, tolerance=tolerance)


def _check(value, name, kind, low, high, *, none=False, open_low=False):
    """``value`` if it is a ``kind`` within the bounds (or None when allowed), else a
    ValueError naming ``name``."""
    if value is None and none:
        return None
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if ok:
        ok = (value > low if open_low else value >= low) and (high is None or value <= high)
    if not ok:
        left = "(" if open_low else "["
        right = "inf)" if high is None else f"{high}]"
        what = "an integer" if kind is Integral else "a number"
        also = " or None" if none else ""
        raise ValueError(f"{name} must be {what} in {left}{low}, {right}{also}, got {value!r}.")
    return value
