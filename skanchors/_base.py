"""What every explainer shares: the model is shared by clones, samplers follow the data.

:class:`BaseExplainer` holds the estimator plumbing of :class:`~skanchors.AnchorExplainer` and
:class:`~skanchors.LimeExplainer`; the helpers below split, seed and rebuild the inputs the
same way for both.
"""

from __future__ import annotations

import hashlib
from numbers import Integral, Number

import joblib
import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from ._images import is_images
from ._moved import MOVED_PARAMS, refuse_moved_params
from ._stacklevel import outside_stacklevel
from ._validation import check_params
from .samplers._protocol import check_sampler
from .samplers.tabular import TabularSampler

__all__ = [
    "BaseExplainer",
    "ExplainsFittedModel",
    "N_JOBS",
    "concat_rows",
    "is_text",
    "outside_stacklevel",
    "row_seed",
    "take_rows",
]

# The n_jobs parameter's constraint: joblib's meaning (-1 all cores, -2 all but one, ...); 0
# means nothing to joblib, so it is refused when set rather than when explaining.
N_JOBS = [
    Interval(Integral, None, -1, closed="right"),
    Interval(Integral, 1, None, closed="left"),
    None,
]


class ExplainsFittedModel:
    """For estimators whose ``estimator`` parameter is the fitted model they explain.

    The model's own parameters are not theirs: it is fitted and only called, so changing
    them would change neither its predictions nor the explanation, and would modify the
    user's model, which clones share. ``get_params(deep=True)`` leaves them out, and setting
    one (``estimator__C``, say, in a grid search) is refused with the reason.

    Their parameters are validated in ``fit`` and again by every method that uses them
    (``explain``, ``score``, ``partial_fit``, ...), so that one set after ``fit`` is checked
    too (:func:`skanchors._validation.check_params`); a model given as a class is refused.
    """

    #: The old keywords of the constructor, by class, and their new spelling (see _moved).
    _moved_params = MOVED_PARAMS

    def _validate_params(self):
        check_params(self)

    def get_params(self, deep=True):
        params = super().get_params(deep=deep)
        return {k: v for k, v in params.items() if not k.startswith("estimator__")}

    def set_params(self, **params):
        refuse_moved_params(self, params, self._moved_params)
        nested = sorted(k for k in params if k.startswith("estimator__"))
        if nested:
            raise ValueError(
                f"Cannot set {', '.join(nested)}: the explained estimator is used as fitted "
                "and never refit or modified, so its parameters cannot be set or searched "
                "here. Set them on the model, refit it, and explain the refitted model."
            )
        return super().set_params(**params)


class BaseExplainer(ExplainsFittedModel, TransformerMixin, BaseEstimator):
    """Shared behaviour of the local explainers.

    Subclasses store ``estimator`` and ``sampler``.
    """

    def __sklearn_clone__(self):
        # The model is the thing being explained: a clone must explain the *same fitted* model,
        # so it is shared, never cloned (cloning would return an unfitted copy).
        params = self.get_params(deep=False)
        estimator = params.pop("estimator")
        return type(self)(estimator, **{k: clone(v, safe=False) for k, v in params.items()})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.requires_fit = True
        # transform() returns explanation numbers whatever the input dtype.
        tags.transformer_tags.preserves_dtype = []
        return tags

    def _make_sampler(self, X):
        """The sampler for ``X``: a clone of the user's, else the default for documents
        (``samplers.text._default_sampler()``), images (``ImageSampler()``) or a table's
        (``TabularSampler()``)."""
        from .hf_image import HFImageClassifier

        model = getattr(self.estimator, "__self__", self.estimator)  # a bound predict_proba
        if isinstance(model, HFImageClassifier) and not is_images(X):
            what = "text" if is_text(X) else "a table"
            raise ValueError(
                f"X must be images (an array of shape (n, H, W) or (n, H, W, C)) for the "
                f"estimator, an image classifier ({type(model).__name__}); got {what}."
            )
        if self.sampler is not None:
            sampler = clone(check_sampler(self.sampler))
            if is_images(X) and sampler.modality != "image":
                raise ValueError(
                    f"X holds images, and sampler={type(sampler).__name__}(...) perturbs "
                    f"{sampler.modality} data; pass sampler=ImageSampler(...) (or None) to "
                    "explain images."
                )
            return sampler
        if is_images(X):
            from .samplers.image import ImageSampler

            return ImageSampler()
        if is_text(X):
            from .samplers.text import _default_sampler

            return _default_sampler()
        return TabularSampler()

    def set_params(self, **params):
        sampler = params.get("sampler", self.sampler)
        if sampler is None and any(k.startswith("sampler__") for k in params):
            nested = sorted(k for k in params if k.startswith("sampler__"))
            raise ValueError(
                f"Cannot set {', '.join(nested)}: sampler is None (the default sampler is "
                "made in fit, for the data). Pass a sampler to tune its options, e.g. "
                "sampler=TabularSampler(), or set sampler and its options together: "
                "set_params(sampler=TabularSampler(perturbation='replace'))."
            )
        return super().set_params(**params)

    def _learn_classes(self, X):
        """``classes_`` of the model; a callable's come from its output on one reference row
        (only that row: splitting all of ``X`` took 28 s for 200,000 rows)."""
        if self.model_.classes_ is None:
            self.model_.predict_proba(take_rows(self.sampler_.to_model_input(X), [0]))
        self.classes_ = self.model_.classes_

    def get_feature_names_out(self, input_features=None):
        """Names of the columns of :meth:`transform`: the input features (``input_features``
        checked against ``feature_names_in_`` as scikit-learn's transformers check them), or
        the vocabulary for documents."""
        check_is_fitted(self, "sampler_")
        if self.sampler_.modality in ("text", "image"):
            return self.sampler_.get_feature_names_out()
        return _check_feature_names_in(self, input_features)


def check_model_columns(estimator, sampler, X=None):
    """Refuse reference data whose columns the model was not fitted on, by name or number,
    before any search does (the model's own error would come at ``explain``, in its words:
    a forest fitted on 4 columns took 3 and failed later, or never). Columns missing or in
    another order are accepted when the model predicts the first row of ``X`` all the same
    (a Pipeline whose ColumnTransformer dropped a column, or selects columns by name)."""
    model = getattr(estimator, "__self__", estimator)  # a bound predict_proba: its estimator
    n_features = getattr(sampler, "n_features_in_", None)
    if n_features is None:  # documents
        return
    ours = getattr(sampler, "feature_names_in_", None)
    try:
        theirs = getattr(model, "feature_names_in_", None)
        n_model = getattr(model, "n_features_in_", None)
    except Exception:  # noqa: BLE001 - a property of the user's object may raise anything
        return
    if theirs is not None and ours is not None:
        # a column the model never saw cannot explain it, and anchors would hold it
        # (a label left in the data: "... AND Survived > 0.0 THEN PREDICT 1")
        extra = [c for c in ours if c not in set(theirs)]
        missing = [c for c in theirs if c not in set(ours)]
        if extra and missing:
            raise ValueError(
                f"X lacks the column(s) {missing} that the model was fitted on (its "
                f"feature_names_in_) and has {extra} that it was not (renamed?); X must be the "
                "reference data in the form the model consumes."
            )
        if extra:
            raise ValueError(
                f"X has the column(s) {extra} that the model was not fitted on (its "
                f"feature_names_in_ are {list(theirs)}); drop them (a label column?) so that "
                "X is the reference data in the form the model consumes."
            )
        if list(theirs) == list(ours) or _predicts(model, sampler, X):
            return
        if missing:
            raise ValueError(
                f"X lacks the column(s) {missing} that the model was fitted on (its "
                f"feature_names_in_); X must be the reference data in the form the model "
                f"consumes. X has {list(ours)}."
            )
        raise ValueError(
            f"X has the model's columns in another order ({list(ours)}; the model was fitted "
            f"on {list(theirs)}); pass X[{list(theirs)}]."
        )
    elif isinstance(n_model, Integral) and n_model != n_features:
        raise ValueError(
            f"X has {n_features} feature(s), but the model was fitted on {n_model} (its "
            "n_features_in_); X must be the reference data in the form the model consumes."
        )


def _predicts(model, sampler, X):
    """Whether the model predicts the first row of ``X`` (raw data) without an error."""
    if X is None or not hasattr(X, "iloc") or len(X) == 0:
        return False
    predict = getattr(model, "predict_proba", None) or getattr(model, "predict", None)
    if predict is None:
        return False
    try:
        predict(sampler.to_model_input(X.iloc[:1]))
    except Exception:  # noqa: BLE001 - the model's own complaint, whatever it is
        return False
    return True


def n_workers(n_jobs, n_tasks):
    """The ``n_jobs`` to give :class:`joblib.Parallel` for ``n_tasks`` tasks: joblib's count
    for ``n_jobs`` (``-1``: every core; a backend's own under ``parallel_config``), at most
    one worker per task: ``n_jobs=64`` for 4 rows starts 4 processes, not 64."""
    return max(1, min(joblib.effective_n_jobs(n_jobs), n_tasks))


def _check_reference_data(X):
    """A single str is a common slip for ``[document]``: say so instead of failing later. An
    empty list is neither a table nor a corpus: say that too (the table path said "Expected
    2D array"), and so are None, a number, a dict or a generator."""
    if isinstance(X, str):
        raise ValueError(
            "X must be a collection of rows or documents; got a single string. Wrap it "
            "in a list: fit([document])."
        )
    if sparse.issparse(X):
        return  # (the table path says that sparse input is not supported)
    sized = any(hasattr(X, name) for name in ("__len__", "shape", "__array__"))
    if X is None or isinstance(X, (dict, bytes, Number)) or not sized:
        hint = ""
        if isinstance(X, dict):
            hint = " For a table of columns, pass pd.DataFrame(X)."
        elif isinstance(X, bytes):
            hint = " Decode it and wrap it in a list: fit([X.decode('utf-8')])."
        elif hasattr(X, "__iter__"):
            hint = " Pass list(X)."
        raise TypeError(
            "X must be the reference data: a table (a DataFrame or a 2-d array-like) or a "
            f"collection of documents (a list of str); got {type(X).__name__}.{hint}"
        )
    empty_1d = isinstance(X, np.ndarray) and X.ndim == 1 and X.size == 0
    if empty_1d or (isinstance(X, (list, tuple, pd.Series)) and len(X) == 0):
        raise ValueError(
            "X is empty: fit needs reference data, the rows of a table or a list of documents."
        )


def is_text(X):
    """Whether X is a collection of documents: 1-d, with a str (or bytes, which the text path
    asks to decode) among its elements (the text path then says which element is not one,
    rather than the table path that X is 1-d)."""
    if isinstance(X, pd.DataFrame):
        return False
    if isinstance(X, pd.Series):
        values = X.to_numpy()
    elif isinstance(X, (list, tuple, np.ndarray)):
        values = X
    else:
        return False
    if isinstance(values, np.ndarray) and values.ndim != 1:
        return False
    return any(isinstance(v, (str, bytes)) for v in values)


def row_seed(base, row, salt=""):
    """Seed of one row from ``base`` and the row's content only.

    A row then gets the same explanation whether it is explained alone or in a batch, with
    any ``n_jobs``.
    """
    if isinstance(row, str):  # a document: hash its text directly (joblib.hash pickles it first)
        key = f"{salt}\0{base}\0{row}".encode("utf-8", "surrogatepass")
        return int.from_bytes(hashlib.blake2b(key, digest_size=4).digest(), "big")
    if isinstance(row, np.ndarray) and row.dtype.kind in "biuf":
        # A numeric row: hash its bytes directly (joblib.hash pickles it, ten times slower).
        head = f"{salt}\0{base}\0{row.dtype.str}\0{row.shape}\0".encode()
        digest = hashlib.blake2b(head + np.ascontiguousarray(row).tobytes(), digest_size=4)
        return int.from_bytes(digest.digest(), "big")
    values = row.astype(object).to_numpy() if isinstance(row, pd.DataFrame) else row
    key = (salt, base, values) if salt else (base, values)
    return int(joblib.hash(key)[:8], 16)


def take_rows(X, indices):
    """Rows ``indices`` of a DataFrame, array or list of documents."""
    if isinstance(X, pd.DataFrame):
        return X.iloc[indices]
    if isinstance(X, np.ndarray):
        return X[indices]
    return [X[i] for i in indices]


def concat_rows(rows):
    """Concatenate single rows (1-row frames or arrays) or documents into one input."""
    if rows and isinstance(rows[0], pd.DataFrame):
        return pd.concat(rows, ignore_index=True)
    if rows and isinstance(rows[0], np.ndarray):
        return np.concatenate(rows)
    return [r for part in rows for r in ([part] if isinstance(part, str) else part)]
