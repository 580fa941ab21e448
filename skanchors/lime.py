"""LimeExplainer: local linear surrogates of any classifier (Ribeiro, Singh and Guestrin, KDD 2016).

LIME explains the prediction ``f(x)`` of a black box with a sparse linear model ``g`` over an
*interpretable representation* ``x'`` of ``x``: binary features that say whether a part of
``x`` is present. Here the parts are the same predicates the anchors use, so LIME and anchors
explain the same things and share the samplers:

- tables: one interpretable feature per column, "the value is in ``x``'s bin" (the conjunction
  of the column's predicates, e.g. ``28.0 < Age <= 37.0`` or ``Sex = female``);
- documents: one interpretable feature per word position, "the word is kept";
- images: one interpretable feature per superpixel, "the superpixel is kept" (the cosine
  distance and LIME's image kernel width, 0.25).

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

from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import (
    N_JOBS,
    BaseExplainer,
    _check_reference_data,
    check_model_columns,
    n_workers,
    outside_stacklevel,
    row_seed,
)
from ._explanation import _scalar
from ._lime_explanation import LimeExplanation
from ._lime_fit import _components, _explain_chunk  # noqa: F401 (_components: see below)
from ._lime_surrogate import (  # noqa: F401 (imported for the tests and benchmarks)
    _forward_selection,
    _highest_weights,
    _lasso_path,
    _weighted_r2,
    _weighted_ridge,
)
from ._moved import hide_moved, move_to_sampler, refuse_unknown
from ._refit import reads_other_columns, refit_error
from ._validation import check_model, warn_probabilities_do_not_sum_to_1
from .models import as_probability_model
from .samplers.tabular import TabularSampler

# LimeExplanation (_lime_explanation), the per-row fit (_lime_fit) and the surrogate's
# estimators (_lime_surrogate) have their own modules; the helpers that the tests and
# benchmarks read (_components, _forward_selection, ...) stay importable from this one.

__all__ = ["LimeExplainer", "LimeExplanation"]


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
        between binary vectors), ``w = 25`` for text (``D`` = cosine distance times 100) and
        ``w = 0.25`` for images (``D`` = cosine distance, as the LIME package's image
        explainer has it): the same weights as ``sigma = w * sqrt(2)``, which the explanation
        reports. A width that leaves every perturbation differing from the instance a weight
        of 0 is refused at :meth:`explain` (the surrogate would be fitted to the instance
        alone).
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
        Documents and images: words and superpixels are always kept or replaced
        independently; ``"joint"`` is refused.
    sampler : sampler object or None, default=None
        The perturbation distribution: ``None`` picks ``TabularSampler()`` for tables and
        ``UnkSampler()`` for documents (a removed word becomes ``"UNK"``, as in the global
        aggregators and :class:`~skanchors.AnchorExplainer`); pass ``UnkSampler(token=None)``
        to delete words, :class:`~skanchors.samplers.CorpusSampler` or
        :class:`~skanchors.samplers.MaskedLMSampler` to replace them by other words. A
        table's binning and categorical features are the
        :class:`~skanchors.samplers.TabularSampler`'s ``discretizer`` (quartiles by default;
        the interpretable feature of a numeric column is "in the instance's bin") and
        ``categorical_features``: ``sampler=TabularSampler(discretizer="decile")``; its
        ``perturbation`` (the anchor search's) changes nothing here, since LIME fixes no rule
        (every perturbation is a reference row, whole or column by column), so one sampler
        can serve both explainers. A table's custom sampler must be a ``TabularSampler``
        for ``sampling="independent"``; with ``"joint"``, any sampler's own draws
        (``instance.sample((), n_samples, rng)``) are used. (The keyword arguments
        ``discretizer`` and ``categorical_features`` are still accepted, with a
        ``FutureWarning``, until skanchors 0.3.)
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
        "sampler": [None, HasMethods(["fit", "instance", "split"])],
        "target_class": "no_validation",
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    @hide_moved
    def __init__(
        self,
        estimator,
        *,
        n_samples=5000,
        n_features=10,
        feature_selection="auto",
        kernel_width=None,
        sampling="independent",
        sampler=None,
        target_class=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
        **moved,
    ):
        self.estimator = estimator
        self.n_samples = n_samples
        self.n_features = n_features
        self.feature_selection = feature_selection
        self.kernel_width = kernel_width
        self.sampling = sampling
        self.sampler = sampler
        self.target_class = target_class
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        if moved:
            _take_moved(self, moved)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Learn the reference distribution of perturbations from ``X``.

        The model is not fitted: ``X`` (for example the training data) is what perturbations
        are drawn from (tables) or what replacement words are learned from (documents).

        Parameters
        ----------
        X : DataFrame, array-like of shape (n_samples, n_features), list of str, or images
            Raw reference data, in the form the model consumes (images: an array (n, H, W) or
            (n, H, W, C)).
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
        self.model_.prepare(self.sampler_.to_model_input(X))  # (see AnchorExplainer.fit)
        self._learn_classes(X)
        if self.target_class is not None:  # refused now, not at the first explain
            self._class_index(self.target_class, "target_class")
        for name in ("n_features_in_", "feature_names_in_"):
            value = getattr(self.sampler_, name, None)
            if value is not None:
                setattr(self, name, value)
        return self

    def _check_sampling(self):
        modality = self.sampler_.modality
        if modality in ("text", "image"):
            if self.sampling == "joint":
                what = {
                    "image": "images, whose superpixels are",
                    "text": "documents, whose words are",
                }[modality]
                raise ValueError(
                    f"sampling='joint' draws whole reference rows of a table; X holds {what} "
                    "always kept or replaced independently. Leave sampling at 'independent'."
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
        X : DataFrame, array-like of shape (n_rows, n_features), list of str, or images
            Rows to explain, with the reference data's columns; or documents; or images (an
            :class:`~skanchors.ImageLimeExplanation` each).
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
            text=self.sampler_.modality == "text",
            image=self.sampler_.modality == "image",
            independent=self.sampling == "independent"
            and self.sampler_.modality not in ("text", "image"),
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
        Xt : ndarray of shape (n_images, H * W), float, for images
            Weight of the superpixel each pixel (row by row) lies in. The images must have
            the reference images' size (the columns are their pixels); ``ValueError``
            otherwise.
        """
        check_is_fitted(self, "sampler_")
        if self.sampler_.modality == "image":
            self.sampler_.check_pixel_columns(X)
        explanations = self.explain(X)
        if self.sampler_.modality == "image":
            out = []
            for e in explanations:
                weight = np.zeros(len(e.features))
                weight[list(e.selected)] = np.asarray(e.weights)[list(e.selected)]
                out.append(weight[e.segments].ravel())
            return np.stack(out)
        if self.sampler_.modality == "text":
            from scipy import sparse

            vocabulary = self.sampler_.vocabulary_
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


def _take_moved(explainer, moved):
    """``discretizer`` and ``categorical_features``, which moved to the sampler."""
    refuse_unknown("LimeExplainer", moved, ("discretizer", "categorical_features"))
    move_to_sampler("LimeExplainer", explainer, moved, TabularSampler)
