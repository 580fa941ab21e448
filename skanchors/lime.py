"""LimeExplainer: local linear surrogates of any classifier (Ribeiro, Singh and Guestrin, KDD 2016).

LIME explains the prediction ``f(x)`` of a black box with a sparse linear model ``g`` over an
*interpretable representation* ``x'`` of ``x``: binary features that say whether a part of
``x`` is present. Here the parts are the same predicates the anchors use, so LIME and anchors
explain the same things and share the samplers:

- tables: one interpretable feature per column, "the value is in ``x``'s bin" (the conjunction
  of the column's predicates, e.g. ``28.0 < Age <= 37.0`` or ``Sex = female``);
- documents: one interpretable feature per word position, "the word is kept".

Algorithm 1 of the paper, as the LIME package implements it:

1. draw perturbations ``z`` of ``x`` whose interpretable components are independent, as the
   paper and the LIME package sample them: for tables, every column's value from a reference
   row of its own (``skanchors.samplers.independent``; ``sampling="joint"``: whole reference
   rows), for documents, every word kept or replaced on its own (the text sampler's
   ``instance.sample((), n, rng)``); the ``holds`` matrix gives the binary vectors ``z'``,
   ``decode`` the model inputs; then add ``x`` itself (``z' = 1``);
2. predict them with the model in one call, keeping ``f(z)`` = the probability of the class;
3. weight each sample by the exponential kernel ``pi_x(z) = exp(-D(x, z)^2 / width^2)``, with
   ``D`` the euclidean distance between ``z'`` and ``x'`` for tables and the cosine distance
   times 100 for documents (by default the LIME package's kernel, ``sqrt(exp(-D^2 / w^2))``
   with its widths ``w``, which is this one with ``width = w * sqrt(2)``);
4. K-Lasso: choose ``K`` interpretable features on the weighted samples (lasso path, forward
   selection or highest weights) and fit a weighted ridge regression on them; its coefficients
   are the explanation, its weighted R^2 the local fidelity.
"""

from __future__ import annotations

import html
import json
import math
import time
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _lime_wide, _serial
from ._base import (
    N_JOBS,
    BaseExplainer,
    _check_reference_data,
    check_model_columns,
    concat_rows,
    n_workers,
    outside_stacklevel,
    row_seed,
)
from ._explanation import (
    _number,
    _plain,
    _predicate,
    _scalar,
    _unserialisable,
    plain_text,
)
from ._refit import reads_other_columns, refit_error
from ._validation import (
    check_memory,
    check_model,
    check_probabilities,
    warn_probabilities_do_not_sum_to_1,
)
from .discretizers import format_value
from .models import as_probability_model
from .samplers.independent import sample_independent
from .samplers.tabular import TabularSampler

__all__ = ["LimeExplainer", "LimeExplanation"]

# Perturbations predicted per model call: one call unless n_samples is huge...
_MAX_ROWS_PER_CALL = 20_000
# ... or the perturbed documents hold more words than this in all (a call's texts are decoded
# only when it is made).
_MAX_WORDS_PER_CALL = 1 << 24
# The LIME package's default kernel, sqrt(exp(-D^2 / w^2)) with w = 0.75 * sqrt(n_features)
# for tables and 25 for text (whose distance is the cosine distance times 100), is the paper's
# exp(-D^2 / sigma^2) with sigma = w * sqrt(2).
_TABULAR_WIDTH_FACTOR = 0.75 * math.sqrt(2.0)
_TEXT_WIDTH = 25.0 * math.sqrt(2.0)


def _component_name(preds):
    """Readable name of one interpretable feature (a tuple of predicates of one feature)."""
    if len(preds) == 1:
        return str(preds[0])
    lo = [p for p in preds if p.op == ">"]
    hi = [p for p in preds if p.op == "<="]
    if len(lo) == 1 and len(hi) == 1 and len(preds) == 2:
        return f"{format_value(lo[0].value)} < {lo[0].name} <= {format_value(hi[0].value)}"
    return " AND ".join(str(p) for p in preds)


@dataclass(eq=False)
class LimeExplanation:
    """A local linear explanation of one prediction.

    The surrogate is ``g(z') = intercept + sum_j weights[j] * z'_j`` over the binary
    interpretable features (``z'_j = 1``: feature ``j`` of the explained instance is present),
    fitted to the model's probability of class ``prediction`` around the instance.

    Attributes
    ----------
    features : tuple of tuple of Predicate
        The interpretable features: for tables, the predicates of one column (its value lies
        in the instance's bin); for text, one word at its position.
    weights : ndarray of float, shape (n_interpretable_features,)
        Coefficients of the surrogate; 0 for the features the selection left out.
    selected : tuple of int
        Indices into ``features`` chosen by the feature selection, in the order chosen.
    intercept : float
    score : float
        Weighted R^2 of the surrogate on the perturbations (local fidelity).
    prediction : object
        The class whose probability is explained (a label of the model).
    class_probability : float
        The model's probability of ``prediction`` for the instance.
    local_prediction : float
        The surrogate's prediction at the instance (all features present).
    kernel_width : float
    feature_selection : str
        The method that chose the features (``"auto"`` resolved).
    n_samples : int
        Perturbations the surrogate was fitted on (the instance excluded).
    n_model_calls, n_rows_predicted : int
        True number of model calls and of rows predicted for this explanation.
    wall_time : float
        Seconds spent.
    instance : object
        The explained row or document (not serialised).

    Examples
    --------
    >>> from skanchors._explanation import Predicate
    >>> exp = LimeExplanation(
    ...     features=((Predicate("nice", "contains", "nice", 4),),
    ...               (Predicate("very", "contains", "very", 3),)),
    ...     weights=np.array([0.5, 0.2]), selected=(0, 1), intercept=0.1, score=0.9,
    ...     prediction="good", class_probability=0.8, local_prediction=0.8)
    >>> exp.as_list()
    [('nice', 0.5), ('very', 0.2)]
    >>> LimeExplanation.from_json(exp.to_json()).as_map()
    {4: 0.5, 3: 0.2}
    """

    features: tuple
    weights: np.ndarray
    selected: tuple
    intercept: float
    score: float
    prediction: Any
    class_probability: float
    local_prediction: float
    kernel_width: float = float("nan")
    feature_selection: str = ""
    n_samples: int = 0
    n_model_calls: int = 0
    n_rows_predicted: int = 0
    wall_time: float = 0.0
    instance: Any = None

    # ----------------------------------------------------------------- comparing
    def _identity(self):
        numbers = (
            self.intercept, self.score, self.class_probability, self.local_prediction,
            self.kernel_width,
        )  # fmt: skip
        return (
            tuple(self.features),
            tuple(_number(w) for w in np.asarray(self.weights, dtype=float).tolist()),
            tuple(int(j) for j in self.selected),
            _scalar(self.prediction),
            tuple(_number(x) for x in numbers),  # NaN as None, so NaN equals NaN
            self.feature_selection,
            int(self.n_samples),
        )

    def __eq__(self, other):
        """Equal explanations: the same features, weights, selection and numbers (the cost,
        wall time and instance aside), so that ``==``, ``in`` and ``list.index`` work."""
        if not isinstance(other, LimeExplanation):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self):
        return hash(self._identity()[:3])

    # ----------------------------------------------------------------- reading it
    @property
    def feature_names(self):
        """Readable name of each interpretable feature.

        Text: the word; a word that occurs more than once in the document is suffixed with its
        position (``"the[3]"``) so that names are unique.
        """
        names = [_component_name(preds) for preds in self.features]
        counts = {}
        for n in names:
            counts[n] = counts.get(n, 0) + 1
        out = []
        for name, preds in zip(names, self.features):
            if counts[name] > 1 and preds[0].op == "contains" and preds[0].position is not None:
                name = f"{name}[{preds[0].position}]"
            out.append(name)
        return out

    def _ranked(self):
        sel = np.asarray(self.selected, dtype=np.intp)
        w = np.asarray(self.weights, dtype=float)[sel]
        return sel[np.argsort(-np.abs(w), kind="stable")]

    def as_list(self):
        """``[(name, weight), ...]`` of the selected features, by decreasing ``|weight|``."""
        names = self.feature_names
        return [(names[j], float(self.weights[j])) for j in self._ranked()]

    def as_map(self):
        """``{position: weight}`` of the selected features, by decreasing ``|weight|``.

        The position is the column index (tables) or the word index in the document (text).
        """
        out = {}
        for j in self._ranked():
            pos = self.features[j][0].position
            key = j if pos is None else int(pos)
            out[key] = out.get(key, 0.0) + float(self.weights[j])
        return out

    def __str__(self):
        head = (
            f"LIME: P({self.prediction}) = {self.class_probability:.3f}, local model "
            f"{self.local_prediction:.3f} (R^2 {self.score:.2f}, intercept {self.intercept:+.3f})"
        )
        lines = [f"  {w:+.4f}  {name}" for name, w in self.as_list()]
        return "\n".join([head, *lines])

    def __repr__(self):
        terms = ", ".join(f"{name}: {w:+.3f}" for name, w in self.as_list()[:5])
        more = "" if len(self.selected) <= 5 else ", ..."
        return f"<LimeExplanation P({self.prediction})={self.class_probability:.3f} {terms}{more}>"

    # ----------------------------------------------------------------- serialisation
    def to_dict(self):
        """Plain-Python dict (JSON-safe) with everything but the instance."""
        width = float(self.kernel_width)
        return {
            "version": 1,
            "features": [
                [{k: _plain(v) for k, v in vars(p).items()} for p in preds]
                for preds in self.features
            ],
            "weights": [float(w) for w in self.weights],
            "selected": [int(j) for j in self.selected],
            "intercept": float(self.intercept),
            "score": float(self.score),
            "prediction": _plain(self.prediction),
            "class_probability": float(self.class_probability),
            "local_prediction": float(self.local_prediction),
            "kernel_width": width if math.isfinite(width) else None,  # strict JSON: no NaN
            "feature_selection": str(self.feature_selection),
            "n_samples": int(self.n_samples),
            "n_model_calls": int(self.n_model_calls),
            "n_rows_predicted": int(self.n_rows_predicted),
            "wall_time": float(self.wall_time),
        }

    def to_json(self, **kwargs):
        """JSON string of :meth:`to_dict`; keyword arguments go to :func:`json.dumps`."""
        kwargs.setdefault("default", _unserialisable)
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data):
        """Rebuild an explanation from :meth:`to_dict` output (the instance is not kept).

        Every field is checked, as :meth:`Anchor.from_dict <skanchors.Anchor.from_dict>`
        checks an anchor's, and anything else raises a ``ValueError`` that names the field:
        the features are non-empty lists of well-formed predicates (words or columns, not
        both); one finite weight per feature, 0 for those not ``selected``; ``selected``
        holds distinct positions among the features; intercept, local prediction and class
        probability are finite numbers, ``score`` (an R^2) a finite number at most 1;
        ``kernel_width`` is a positive number, or NaN or null when unknown;
        ``feature_selection`` is the method that ran (or ``""``); counts are non-negative
        integers and ``wall_time`` a non-negative number; ``"version"``, when present, is 1;
        no key is unknown.
        """
        return cls(**_serial.lime_fields(data, _predicate))

    @classmethod
    def from_json(cls, text):
        """Rebuild an explanation from :meth:`to_json` output, checked as :meth:`from_dict`
        checks it; text that is not JSON raises ``ValueError`` too."""
        return cls.from_dict(_serial.parse_json(text, "LimeExplanation.to_json"))

    # ------------------------------------------------------------------- display
    def _repr_html_(self):
        esc = html.escape
        items = self.as_list()
        scale = max((abs(w) for _, w in items), default=1.0) or 1.0
        rows = []
        for name, w in items:
            width = int(round(100 * abs(w) / scale))
            color = "#2a7ab0" if w > 0 else "#c0392b"
            rows.append(
                f"<tr><td><code>{esc(name)}</code></td><td>{w:+.4f}</td><td style='width:12em'>"
                f"<div style='background:{color};height:0.8em;width:{width}%'></div></td></tr>"
            )
        return (
            "<div class='skanchors-lime'>"
            f"<p>P(<code>{esc(str(self.prediction))}</code>) = "
            f"<strong>{self.class_probability:.3f}</strong>; local model "
            f"{self.local_prediction:.3f}, weighted R<sup>2</sup> {self.score:.3f}, intercept "
            f"{self.intercept:+.3f} ({self.n_samples} samples, {self.n_model_calls} model "
            f"calls, {self.wall_time:.3f} s)</p>"
            "<table><thead><tr><th>feature</th><th>weight</th><th></th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )

    def plot(self, ax=None):
        """Horizontal bars of the selected features' weights (positive: towards the class).

        Requires matplotlib (``pip install skanchors[plot]``). Returns the Axes.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "LimeExplanation.plot needs matplotlib: pip install 'skanchors[plot]'."
            ) from exc
        items = self.as_list()
        if ax is None:
            # constrained layout keeps the feature names, axis label and title inside the
            # saved figure
            height = 1.6 + 0.4 * max(len(items), 1)
            _, ax = plt.subplots(figsize=(7, height), layout="constrained")
        labels = [name for name, _ in items]
        values = [w for _, w in items]
        y = np.arange(len(items))
        ax.barh(y, values, color=["#2a7ab0" if v > 0 else "#c0392b" for v in values])
        ax.axvline(0, color="k", linewidth=0.8)
        ax.set_yticks(y, [plain_text(label) for label in labels])
        ax.invert_yaxis()
        ax.set_xlabel(plain_text(f"weight on P({self.prediction})"))
        ax.set_title(
            plain_text(
                f"P({self.prediction}) = {self.class_probability:.2f}, R^2 = {self.score:.2f}"
            )
        )
        return ax


class LimeExplainer(BaseExplainer):
    """Explain a classifier's predictions with LIME: sparse local linear surrogates.

    For each explained instance, perturbations are drawn from the same samplers as the anchors,
    each interpretable feature independently (for tables, every column's value from a reference
    row of its own; for text, every word kept or replaced), predicted by the model in one
    call, weighted by their proximity to the instance, and a K-Lasso surrogate (``n_features``
    interpretable features chosen, then a weighted ridge on them) is fitted to the model's
    probability of the explained class (Ribeiro, Singh and Guestrin, KDD 2016).

    Parameters
    ----------
    estimator : fitted classifier or callable
        The model to explain: anything with ``predict_proba`` (an sklearn estimator or a
        whole Pipeline that consumes the raw data), or a callable returning probabilities of
        shape (n, n_classes), whose classes are numbered 0, 1, ... (``model.predict_proba``
        itself keeps the model's labels). Its values must lie in [0, 1] (scores or logits are
        refused: LIME regresses them); rows that do not sum to 1 give a warning. It is only
        called, never refitted; refitted in place after :meth:`fit`, it is read again at the
        next :meth:`explain` (see :class:`~skanchors.AnchorExplainer`).
    n_samples : int >= 1, default=5000
        Perturbations per explained instance (the instance itself is added).
    n_features : int >= 1, default=10
        The paper's K: at most this many interpretable features get a nonzero weight. Not
        used with ``feature_selection="none"``.
    feature_selection : {"auto", "lasso_path", "forward_selection", "highest_weights", \
"none"}, default="auto"
        How the K features are chosen on the weighted samples, as in the LIME package:
        ``"lasso_path"``: the least regularised point of the lasso (LARS) path with at most K
        features; ``"forward_selection"``: greedily add the feature that most increases the
        weighted R^2 of a least-squares fit; ``"highest_weights"``: the K largest ``|coef|``
        of a weighted ridge (alpha 0.01) on all features; ``"none"``: every feature;
        ``"auto"``: forward selection when K <= 6, else highest weights. With more
        interpretable features than samples (a long document's words) the same estimators
        are computed from the samples' (samples x samples) products, in time and memory
        linear in the number of words; ``"lasso_path"`` alone then holds the (samples x
        words) matrix as floats.
    kernel_width : float > 0 or None, default=None
        Width ``sigma`` of the kernel ``exp(-D^2 / sigma^2)`` (the paper's). ``None``: the
        LIME package's default kernel, ``sqrt(exp(-D^2 / w^2))`` with ``w = 0.75 * sqrt(d')``
        for tables (``d'`` = number of interpretable features, ``D`` = euclidean distance
        between binary vectors) and ``w = 25`` for text (``D`` = cosine distance times 100):
        the same weights as ``sigma = w * sqrt(2)``, which the explanation reports. A width
        that leaves every perturbation differing from the instance a weight of 0 is refused
        at :meth:`explain` (the surrogate would be fitted to the instance alone).
    sampling : {"independent", "joint"}, default="independent"
        How a table's perturbations are drawn. ``"independent"`` (LIME's): each column takes
        the value of a reference row drawn for it alone, so a numeric column falls in a bin
        with the reference frequency, at a value the data hold in that bin, a category comes
        with its frequency, a missing value with the share of missing ones; columns are
        independent of each other. A feature's weight is then the model's response to that
        column alone: for an additive model ``f = c + sum_j f_j(x_j)`` it estimates
        ``E[f_j | x_j in the instance's bin] - E[f_j | x_j outside it]`` whatever the data's
        correlations. ``"joint"``: whole reference rows, as the data hold them (the
        anchors' perturbations with no rule fixed); the weights then describe the model on
        the data as they are, where correlated columns share or swap credit for each other's
        effects (weight moves to a column correlated with the one the model uses). Use it
        when the model must not be judged on combinations of values the data never show, for
        example to audit a model that might behave differently on them (see Notes).
        Documents: words are always kept or replaced independently; ``"joint"`` is refused.
    discretizer : {"quartile", "decile"} or transformer, default="quartile"
        Binning of numeric features (see :mod:`skanchors.discretizers`); the interpretable
        feature of a numeric column is "in the instance's bin".
    categorical_features : "auto" or list of names/indices or boolean mask, default="auto"
        Features compared by equality. ``"auto"`` treats non-numeric columns as categorical
        (in an object array, the columns whose values are not all numbers). A list or mask
        replaces ``"auto"``: it names every categorical feature, the non-numeric ones too.
    sampler : sampler object or None, default=None
        The perturbation distribution: ``None`` picks
        :class:`~skanchors.samplers.TabularSampler` for tables and ``UnkSampler()`` for
        documents (a removed word becomes ``"UNK"``, as in the global aggregators and
        :class:`~skanchors.AnchorExplainer`); pass ``UnkSampler(token=None)`` to delete
        words, :class:`~skanchors.samplers.CorpusSampler` or
        :class:`~skanchors.samplers.MaskedLMSampler` to replace them by other words. With a
        sampler, ``discretizer`` and ``categorical_features`` stay at their defaults. A
        table's custom sampler must be a :class:`~skanchors.samplers.TabularSampler` for
        ``sampling="independent"``; with ``"joint"``, any sampler's own draws
        (``instance.sample((), n_samples, rng)``) are used.
    target_class : label or None, default=None
        Class whose probability is explained for every row (for example the positive class,
        so that :meth:`transform` weights have one meaning across rows). ``None``: each row's
        predicted class. ``explain(X, y)`` overrides it.
    n_jobs : int or None, default=None
        Rows are explained in parallel with joblib. ``None`` means 1 unless in a joblib
        context.
    random_state : int, RandomState or None, default=None
        Seeds the perturbations; each row's seed depends on ``random_state`` and the row's
        content only, so results are identical for any ``n_jobs`` and batch.
    verbose : int, default=0
        Print one line per explained row when positive.

    Attributes
    ----------
    sampler_ : fitted sampler
    model_ : ProbabilityModel
    classes_ : ndarray
        Labels of the model's classes.
    n_features_in_ : int
        Defined for tables.
    feature_names_in_ : ndarray of str
        Defined when fitted on a DataFrame.

    Notes
    -----
    Perturbations sample the interpretable components independently (the paper's
    ``sample_around``): for tables, each column from its reference marginal (the LIME
    package samples each feature's bin from the training frequencies, then a value in it;
    here the value is a reference value in that bin), and the kernel on the binary
    representation makes the fit local; for text, each word kept with probability
    ``keep_proba`` of the sampler (1/2), else replaced. A numeric column's interpretable
    feature is "in the instance's quantile bin", so a column whose value is in a middle bin
    gets a weight that mixes both directions (as in LIME); the outer bins are one-sided.

    Independent columns put the model on combinations of values the data may never hold
    (a husband who is a woman). A model can behave differently there, and one built to hide
    a bias can detect them and show LIME an innocuous face (Slack et al., "Fooling LIME and
    SHAP", AIES 2020); ``sampling="joint"`` predicts only reference rows, which such a model
    cannot tell from its real inputs, at the price of weights that follow the data's
    correlations rather than the model's use of each column.

    For text, the interpretable features are word *positions* (the anchors' predicates): a
    word that occurs twice has two weights, summed in :meth:`transform`.

    See Also
    --------
    skanchors.AnchorExplainer : rules instead of weights, on the same samplers.
    skanchors.pick : choose a few explanations that cover the data (SP-LIME).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(500, 3))
    >>> def model(X):  # P(class 1) rises with x0, falls a little with x1
    ...     z = 8 * (X[:, 0] - 0.5) - 2 * (X[:, 1] - 0.5)
    ...     p = 1 / (1 + np.exp(-z))
    ...     return np.column_stack([1 - p, p])
    >>> explainer = LimeExplainer(model, n_samples=1000, n_features=2, random_state=0).fit(X)
    >>> exp = explainer.explain(np.array([[0.9, 0.9, 0.5]]))[0]
    >>> [name for name, weight in exp.as_list()]
    ['x0 > 0.7...', 'x1 > 0.7...']
    >>> explainer.transform(np.array([[0.9, 0.9, 0.5]])).round(1)
    array([[ 0.6, -0.1,  0. ]])
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["predict_proba"]), callable],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "feature_selection": [
            StrOptions({"auto", "lasso_path", "forward_selection", "highest_weights", "none"})
        ],
        "kernel_width": [Interval(Real, 0, None, closed="neither"), None],
        "sampling": [StrOptions({"independent", "joint"})],
        "discretizer": [StrOptions({"quartile", "decile"}), HasMethods(["fit", "transform"])],
        "categorical_features": [StrOptions({"auto"}), "array-like"],
        "sampler": [None, HasMethods(["fit", "instance", "split"])],
        "target_class": "no_validation",
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        *,
        n_samples=5000,
        n_features=10,
        feature_selection="auto",
        kernel_width=None,
        sampling="independent",
        discretizer="quartile",
        categorical_features="auto",
        sampler=None,
        target_class=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.n_samples = n_samples
        self.n_features = n_features
        self.feature_selection = feature_selection
        self.kernel_width = kernel_width
        self.sampling = sampling
        self.discretizer = discretizer
        self.categorical_features = categorical_features
        self.sampler = sampler
        self.target_class = target_class
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Learn the reference distribution of perturbations from ``X``.

        The model is not fitted: ``X`` (for example the training data) is what perturbations
        are drawn from (tables) or what replacement words are learned from (documents).

        Parameters
        ----------
        X : DataFrame, array-like of shape (n_samples, n_features), or list of str
            Raw reference data, in the form the model consumes.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        _check_reference_data(X)
        check_model(self.estimator, "estimator", type(self).__name__)
        self.model_ = as_probability_model(self.estimator)
        self.sampler_ = self._make_sampler(X).fit(X)
        self._check_sampling()
        check_model_columns(self.estimator, self.sampler_, X)
        if hasattr(self.sampler_, "to_model_input"):  # (see AnchorExplainer.fit)
            self.model_.prepare(self.sampler_.to_model_input(X))
        self._learn_classes(X)
        if self.target_class is not None:  # refused now, not at the first explain
            self._class_index(self.target_class, "target_class")
        for name in ("n_features_in_", "feature_names_in_"):
            value = getattr(self.sampler_, name, None)
            if value is not None:
                setattr(self, name, value)
        return self

    def _check_sampling(self):
        if _is_text_sampler(self.sampler_):
            if self.sampling == "joint":
                raise ValueError(
                    "sampling='joint' draws whole reference rows of a table; X holds documents, "
                    "whose words are always kept or replaced independently. Leave sampling at "
                    "'independent'."
                )
        elif self.sampling == "independent" and not isinstance(self.sampler_, TabularSampler):
            raise ValueError(
                "sampling='independent' draws each column from the reference data of a "
                f"TabularSampler; sampler={type(self.sampler_).__name__} is neither one nor a "
                "text sampler. Pass sampling='joint' to use its own draws."
            )

    def _current_model(self):
        """Read the model again if it was refitted in place since :meth:`fit` (its wrapper
        and classes are the old model's; see :meth:`AnchorExplainer._current_model`)."""
        changed = self.model_.refitted()
        if not changed:
            return
        model = as_probability_model(self.estimator)
        if reads_other_columns(self.estimator, self.sampler_):
            raise refit_error(self, changed, "it now reads other columns than the reference data's")
        if model.classes_ is None:
            reason = "its classes cannot be read without the reference data"
            raise refit_error(self, changed, reason)
        if model.refitted():
            reason = "it was given in a ProbabilityModel built before the refit: wrap it again"
            raise refit_error(self, changed, reason)
        self.model_, self.classes_ = model, model.classes_
        if self.target_class is not None:
            self._class_index(self.target_class, "target_class")

    # -------------------------------------------------------------------- explaining
    def _class_index(self, label, name):
        """Position of class ``label`` given as argument ``name`` ("y" or "target_class")."""
        index = {c: i for i, c in enumerate(self.classes_.tolist())}
        try:
            found = index.get(label)
        except TypeError:  # unhashable: a list, say
            found = None
        if found is None:
            what = f"y contains {label!r}, which" if name == "y" else f"{name}={label!r}"
            raise ValueError(
                f"{what} is not a class of the model; its classes are {self.classes_.tolist()}."
            )
        return found

    def _targets(self, n_rows, y):
        if y is not None:
            y = np.asarray(y, dtype=object).ravel()
            if len(y) != n_rows:
                raise ValueError(f"y has {len(y)} entries for {n_rows} rows of X.")
            return np.array([self._class_index(v, "y") for v in y.tolist()])
        if self.target_class is not None:
            return np.full(n_rows, self._class_index(self.target_class, "target_class"))
        return np.full(n_rows, -1)  # the predicted class, read from the instance's own row

    def explain(self, X, y=None):
        """Fit a local linear surrogate around every row (or document) of ``X``.

        Parameters
        ----------
        X : DataFrame, array-like of shape (n_rows, n_features), or list of str
            Rows to explain, with the reference data's columns; or documents.
        y : array-like of shape (n_rows,), default=None
            Class whose probability is explained for each row; by default ``target_class``,
            else the model's prediction.

        Returns
        -------
        explanations : list of LimeExplanation
        """
        check_is_fitted(self, "sampler_")
        self._validate_params()  # (set_params may have changed them since fit)
        self._check_sampling()
        self._current_model()
        rows = self.sampler_.split(X)
        targets = self._targets(len(rows), y)
        base = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        seeds = np.array([row_seed(base, r, salt="lime") for r in rows], dtype=np.int64)
        params = dict(
            n_samples=int(self.n_samples),
            n_features=int(self.n_features),
            feature_selection=self.feature_selection,
            kernel_width=self.kernel_width,
            text=_is_text_sampler(self.sampler_),
            independent=self.sampling == "independent" and not _is_text_sampler(self.sampler_),
        )
        n_jobs = self.n_jobs
        if n_jobs is None or n_jobs == 1 or len(rows) == 1:
            chunks = [np.arange(len(rows))]
        else:
            n_chunks = min(len(rows), 4 * abs(n_jobs))
            chunks = np.array_split(np.arange(len(rows)), n_chunks)
        results = Parallel(n_jobs=n_workers(n_jobs, len(chunks)))(
            delayed(_explain_chunk)(
                self.sampler_,
                self.model_,
                [rows[i] for i in chunk],
                targets[chunk],
                seeds[chunk],
                params,
                self.verbose,
            )
            for chunk in chunks
        )
        explanations = [e for chunk in results for e in chunk]
        summing = [e.__dict__.pop("_sums_to_1") for e in explanations]
        if not all(summing):
            warn_probabilities_do_not_sum_to_1(outside_stacklevel())
        for e in explanations:
            e.prediction = _scalar(self.classes_[e.prediction])
        return explanations

    def transform(self, X):
        """The LIME weights of every row as a matrix (see :meth:`explain`).

        Parameters
        ----------
        X : DataFrame, array-like of shape (n_rows, n_features), or list of str
            Rows or documents to explain.

        Returns
        -------
        Xt : ndarray of shape (n_rows, ``n_features_in_``), float, for tables
            Weight of each column's interpretable feature (0 if not selected).
        Xt : scipy.sparse.csr_matrix of shape (n_documents, n_words), for documents
            Weight of each word, summed over its positions in the document; the columns are
            the reference vocabulary (:meth:`get_feature_names_out`); words outside it are
            left out, as :class:`~sklearn.feature_extraction.text.CountVectorizer` does.
        """
        explanations = self.explain(X)
        vocabulary = getattr(self.sampler_, "vocabulary_", None)
        if vocabulary is not None:
            from scipy import sparse

            rows, cols, vals = [], [], []
            for i, e in enumerate(explanations):
                for j in e.selected:
                    col = vocabulary.get(e.features[j][0].value)
                    if col is not None:
                        rows.append(i)
                        cols.append(col)
                        vals.append(float(e.weights[j]))
            out = sparse.csr_matrix(
                (np.asarray(vals, dtype=float), (rows, cols)),
                shape=(len(explanations), len(vocabulary)),
            )
            out.sum_duplicates()
            return out
        out = np.zeros((len(explanations), self.n_features_in_), dtype=float)
        for i, e in enumerate(explanations):
            for j in e.selected:
                for p in e.features[j][:1]:
                    out[i, p.position] += float(e.weights[j])
        return out


# ------------------------------------------------------------------------------ helpers


def _is_text_sampler(sampler):
    return getattr(sampler, "vocabulary_", None) is not None


def _components(instance):
    """Group the instance's predicates into interpretable features (one per position)."""
    groups = {}
    for i, p in enumerate(instance.predicates):
        key = ("pos", p.position) if p.position is not None else ("pred", i)
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _own_input(sampler, instance, row):
    """The explained instance in the form ``decode`` produces, so it joins the model call."""
    from .samplers.text import TextInstance

    if isinstance(instance, TextInstance):
        return np.full((1, instance.n_predicates), -1, dtype=np.int32), None
    codes = getattr(instance, "x_codes", None)
    if codes is not None:
        return np.asarray(codes)[None, :], None
    return None, sampler.to_model_input(row)


def _predict_documents(model, instance, keys):
    """Predict the documents of rows ``keys`` of a text instance in as few calls as memory
    allows (decoded call by call): (proba, n_calls)."""
    step = max(1, min(_MAX_ROWS_PER_CALL, _MAX_WORDS_PER_CALL // max(instance.n_predicates, 1)))
    parts = [
        model.predict_proba(instance.decode(keys[lo : lo + step]))
        for lo in range(0, len(keys), step)
    ]
    return (parts[0] if len(parts) == 1 else np.vstack(parts)), len(parts)


def _predict(model, inputs):
    """Predict ``inputs`` in as few calls as memory allows: (proba, n_calls)."""
    n = len(inputs)
    if n <= _MAX_ROWS_PER_CALL:
        return model.predict_proba(inputs), 1
    import pandas as pd

    parts = []
    for start in range(0, n, _MAX_ROWS_PER_CALL):
        stop = min(start + _MAX_ROWS_PER_CALL, n)
        if isinstance(inputs, pd.DataFrame):
            parts.append(model.predict_proba(inputs.iloc[start:stop]))
        else:
            parts.append(model.predict_proba(inputs[start:stop]))
    return np.vstack(parts), len(parts)


def _weighted_centred(Z, y, w):
    sw = np.sqrt(w)
    Zc = (Z - np.average(Z, axis=0, weights=w)) * sw[:, None]
    yc = (y - np.average(y, weights=w)) * sw
    return Zc, yc


def _forward_selection(Z, y, w, k):
    """Greedy least-squares forward selection on the weighted data (the LIME package's).

    Adding feature ``j`` to the chosen set raises the weighted R^2 by
    ``b_j^2 / G_jj`` where ``G`` and ``b`` are the Gram matrix and the correlations of the
    centred data *orthogonalised against the chosen features*; one rank-one update per step
    keeps them current, so no regression is refitted per candidate.
    """
    Zc, yc = _weighted_centred(Z, y, w)
    G = Zc.T @ Zc
    b = Zc.T @ yc
    scale = np.maximum(np.diag(G).copy(), 1e-300)
    chosen = []
    available = np.ones(Z.shape[1], dtype=bool)
    for _ in range(min(k, Z.shape[1])):
        diag = np.diag(G)
        ok = available & (diag > 1e-10 * scale)
        gain = np.where(ok, b**2 / np.where(ok, diag, 1.0), 0.0)
        gain[~available] = -1.0
        j = int(np.argmax(gain))
        chosen.append(j)
        available[j] = False
        if ok[j]:
            col = G[:, j].copy()
            b = b - col * (b[j] / col[j])
            G = G - np.outer(col, col) / col[j]
    return chosen


def _weighted_ridge(Z, y, w, alpha):
    """``Ridge(alpha).fit(Z, y, sample_weight=w)`` in closed form: (coef, intercept).

    The same estimator as scikit-learn's (weighted centring, then the ridge normal
    equations), without its per-call validation, which would dominate the cost of a row.
    """
    if np.all(y == y[0]):
        # a constant target (the model never changes its mind on these perturbations): the
        # fit is the constant itself; centring would leave rounding error of the weighted
        # mean (1e-17) that the solve turns into weights of 1e-31, which rank as "top terms"
        return np.zeros(Z.shape[1]), float(y[0])
    z_mean = np.average(Z, axis=0, weights=w)
    y_mean = float(np.average(y, weights=w))
    Zc, yc = _weighted_centred(Z, y, w)
    gram = Zc.T @ Zc
    gram[np.diag_indices_from(gram)] += alpha
    coef = np.linalg.solve(gram, Zc.T @ yc)
    return coef, y_mean - float(z_mean @ coef)


def _weighted_r2(y, pred, w):
    """Weighted R^2 as ``sklearn.metrics.r2_score`` (1 for a perfect fit of a constant)."""
    residual = float(np.sum(w * (y - pred) ** 2))
    total = float(np.sum(w * (y - np.average(y, weights=w)) ** 2))
    if total == 0:
        # a constant target: fitted exactly up to rounding of the weighted means
        scale = float(np.sum(w)) * max(1.0, float(np.max(y**2)))
        return 1.0 if residual <= 1e-24 * scale else 0.0
    return 1.0 - residual / total


def _highest_weights(Z, y, w, k):
    coef, _ = _weighted_ridge(Z, y, w, alpha=0.01)
    # The LIME package ranks |coef * x'|; x' is all ones.
    order = np.argsort(-np.abs(coef), kind="stable")
    return order[:k].tolist()


def _lasso_path(Z, y, w, k):
    from sklearn.linear_model import lars_path  # imported here: keeps `import skanchors` light

    Zc, yc = _weighted_centred(Z, y, w)
    if not np.any(yc) or not np.any(Zc):
        return []
    _, _, coefs = lars_path(Zc, yc, method="lasso")
    # The least regularised point of the path with at most k features (as the LIME package).
    for i in range(coefs.shape[1] - 1, 0, -1):
        nonzero = np.flatnonzero(coefs[:, i])
        if len(nonzero) <= k:
            return nonzero.tolist()
    return []


def _select(Z, y, w, k, method):
    if method == "auto":
        method = "forward_selection" if k <= 6 else "highest_weights"
    if method == "none":
        return list(range(Z.shape[1])), method
    if Z.shape[1] == 0:
        return [], method
    wide = Z.dtype == bool  # more features than samples (see _explain_one)
    if method == "forward_selection":
        select = _lime_wide.forward_selection if wide else _forward_selection
        return select(Z, y, w, k), method
    if method == "highest_weights":
        select = _lime_wide.highest_weights if wide else _highest_weights
        return select(Z, y, w, k), method
    return _lasso_path(Z.astype(float) if wide else Z, y, w, k), method


def _surrogate(Z, selected, y, w):
    """The weighted ridge of alpha 1 on the ``selected`` columns of ``Z``: (coef, intercept,
    fitted values); in its dual form when ``Z`` is boolean and they outnumber the rows."""
    if Z.dtype != bool:
        coef, intercept = _weighted_ridge(Z[:, selected], y, w, alpha=1.0)
        return coef, intercept, Z[:, selected] @ coef + intercept
    columns = np.asarray(selected, dtype=np.intp)
    if len(columns) > Z.shape[0]:
        coef, intercept = _lime_wide.ridge(Z[:, columns], y, w, alpha=1.0)
    else:
        coef, intercept = _weighted_ridge(Z[:, columns].astype(float), y, w, alpha=1.0)
    fitted = np.full(Z.shape[0], intercept)
    step = max(1, (1 << 22) // max(Z.shape[0], 1))
    for lo in range(0, len(columns), step):
        fitted += Z[:, columns[lo : lo + step]].astype(float) @ coef[lo : lo + step]
    return coef, intercept, fitted


def _explain_chunk(sampler, model, rows, targets, seeds, params, verbose):
    out = []
    for row, target, seed in zip(rows, targets, seeds):
        e = _explain_one(sampler, model, row, int(target), int(seed), params)
        if verbose:
            top = ", ".join(f"{n} {w:+.3f}" for n, w in e.as_list()[:3])
            print(f"[skanchors] LIME R^2={e.score:.2f}: {top} ({e.wall_time:.2f} s)", flush=True)
        out.append(e)
    return out


def _explain_one(sampler, model, row, target, seed, params):
    start = time.perf_counter()
    instance = sampler.instance(row)
    rng = np.random.default_rng(seed)
    n = params["n_samples"]
    # (a lower bound: the Z matrix, the holds and the keys of every perturbation)
    width = max(instance.n_predicates, len(getattr(instance, "_values", ())), 1)
    check_memory("n_samples", n, 13 * n * width, "one explanation's perturbations")
    if params["independent"]:
        keys, holds = sample_independent(instance, n, rng)
    else:  # documents (words masked independently) or sampling="joint"
        keys, holds = instance.sample((), n, rng)
    groups = _components(instance)
    m = len(groups)
    # z' of each perturbation: an interpretable feature is present when all its predicates
    # hold. With more features than samples (a long document's words) Z is kept as booleans
    # and the surrogate is fitted without (features x features) matrices (_lime_wide).
    wide = m > n + 1
    Z = np.ones((n + 1, m), dtype=bool if wide else float)
    holds = np.asarray(holds)
    if all(len(preds) == 1 for preds in groups):
        Z[1:] = holds[:, [preds[0] for preds in groups]]
    else:
        for c, preds in enumerate(groups):
            Z[1:, c] = holds[:, preds].all(axis=1)
    del holds
    own_keys, own_input = _own_input(sampler, instance, row)
    if params["text"]:  # (the documents decoded call by call: a long one's are large)
        keys = np.vstack([own_keys.astype(keys.dtype), keys])
        proba, n_calls = _predict_documents(model, instance, keys)
        n_inputs = len(keys)
    else:
        if own_keys is not None:
            inputs = instance.decode(np.vstack([own_keys, keys]))
        else:
            inputs = concat_rows([own_input, instance.decode(keys)])
        proba, n_calls = _predict(model, inputs)
        n_inputs = len(inputs)
    sums_to_1 = check_probabilities(proba, "LIME fits a linear model to the probability")
    if target < 0:
        target = int(np.argmax(proba[0]))
    y = proba[:, target]
    # The kernel pi_x(z) = exp(-D^2 / sigma^2) (paper, section 3.3).
    present = Z.sum(axis=1)
    if params["text"]:
        with np.errstate(invalid="ignore", divide="ignore"):
            cosine = np.where(present > 0, np.sqrt(present / max(m, 1)), 0.0)
        distance = 100.0 * (1.0 - cosine)
        width = _TEXT_WIDTH if params["kernel_width"] is None else params["kernel_width"]
    else:
        distance = np.sqrt(np.maximum(m - present, 0.0))
        default = _TABULAR_WIDTH_FACTOR * math.sqrt(max(m, 1))
        width = default if params["kernel_width"] is None else params["kernel_width"]
    width = float(width)
    with np.errstate(over="ignore"):  # a tiny width: distance / width = inf, weight 0
        w = np.exp(-np.square(distance / width))  # (width**2 overflowed at 1e300)
    differ = distance > 0
    if differ.any() and not w[differ].any():
        raise ValueError(
            f"kernel_width={params['kernel_width']!r} gives every perturbation that differs "
            "from the instance a weight of 0 (exp(-distance^2 / width^2) underflows): the "
            "surrogate would be fitted to the instance alone. Use a wider kernel (None: LIME's "
            "default)."
        )
    selected, method = _select(Z, y, w, params["n_features"], params["feature_selection"])
    weights = np.zeros(m)
    if selected:
        # The LIME package's surrogate: Ridge(alpha=1) weighted by the kernel.
        coef, intercept, fitted = _surrogate(Z, selected, y, w)
        weights[selected] = coef
        score = _weighted_r2(y, fitted, w)
        local = intercept + float(coef.sum())
    else:
        # no feature selected: the surrogate is the weighted mean, scored by the same rule
        # (a constant target is fitted exactly, R^2 1, whichever selection ran)
        intercept = local = float(np.average(y, weights=w))
        score = _weighted_r2(y, np.full(len(y), intercept), w)
    explanation = LimeExplanation(
        features=tuple(tuple(instance.predicates[i] for i in preds) for preds in groups),
        weights=weights,
        selected=tuple(int(j) for j in selected),
        intercept=intercept,
        score=score,
        prediction=target,
        class_probability=float(proba[0, target]),
        local_prediction=local,
        kernel_width=width,
        feature_selection=method,
        n_samples=n,
        n_model_calls=n_calls,
        n_rows_predicted=n_inputs,
        wall_time=time.perf_counter() - start,
        instance=row,
    )
    explanation._sums_to_1 = sums_to_1  # (warned about by the caller, in this process)
    return explanation
