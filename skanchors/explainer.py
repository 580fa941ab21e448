"""AnchorExplainer: local IF-THEN explanations of any classifier (Ribeiro et al. 2018)."""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import _fit_context, clone, is_regressor
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._anchor_model import _ModelTask
from ._anchor_sampling import _AnchorSampling
from ._bandit import KLLUCB, BatchSAR, make_bandit
from ._base import (
    N_JOBS,
    BaseExplainer,
    _check_reference_data,
    check_model_columns,
    is_image_sampler,
    n_workers,
    outside_stacklevel,
    row_seed,
    take_rows,
)
from ._cache import SampleCache
from ._explain_rows import _explain_chunk, _plain, _Regression, _reuse, _row_identity, _search_key
from ._search import _MAX_VALIDATION_SAMPLES, _arm_kernel
from ._validation import check_model
from .discretizers import EdgesDiscretizer, TreeDiscretizer, bin_spread
from .models import RegressionModel, as_probability_model

__all__ = ["AnchorExplainer", "NoAnchorWarning"]


class NoAnchorWarning(UserWarning):
    """No candidate rule reached the precision threshold; the best one is returned."""


class AnchorExplainer(_ModelTask, _AnchorSampling, BaseExplainer):
    """Explain a classifier's predictions with anchors: rules that hold the prediction in place.

    An anchor of an instance ``x`` is a set of predicates ``A`` that ``x`` satisfies such that,
    for perturbations ``z`` of ``x`` drawn from ``D(z | A)`` (the reference data conditioned on
    ``A``), the model predicts the same class with probability at least ``threshold``, with
    confidence ``1 - delta``; among such rules the search maximises coverage, the share of the
    reference data the rule applies to (Ribeiro, Singh and Guestrin, AAAI 2018).

    Parameters
    ----------
    estimator : fitted classifier or callable
        The model to explain: anything with ``predict_proba`` (an sklearn estimator or a
        whole Pipeline that consumes the raw data), a classifier with only ``predict`` and
        ``classes_`` (``LinearSVC``: anchors compare predicted classes), or a callable
        returning probabilities of shape (n, n_classes), whose classes are numbered 0, 1,
        ... (``model.predict_proba`` itself keeps the model's labels). It is only called,
        never refitted. If you refit it in place after :meth:`fit` (``model.fit(X, y)`` on
        the same object), :meth:`explain` and :meth:`perturbation_precision` notice it (the
        model's fitted attributes are fingerprinted at ``fit``) and read the model again:
        its classes, its compiled trees and a new cache, as a new :meth:`fit` on the same
        reference data would; with ``balance=True``, a regression tolerance in standard
        deviations or bins cut where the model's predictions change (``discretizer="tree"``,
        a regressor's default), which come from the old model's predictions on the reference
        data, they raise a ``ValueError`` asking for :meth:`fit` again. A plain function cannot be
        fingerprinted: fit the explainer again if it changes.
    threshold : float in (0, 1], default=0.95
        The paper's tau: the precision a rule must reach to be an anchor.
    delta : float in (0, 1), default=0.1
        Statistical risk: the returned anchor reaches the threshold (up to a tolerance of
        0.025) with probability at least ``1 - delta`` (a union bound over every rule the
        search validates, each on samples drawn after the search chose it).
    epsilon : float in (0, 1], default=0.15
        Tolerance of the KL-LUCB bandit when it picks the ``beam_size`` most precise
        candidates of a round.
    beam_size : int >= 1 or "auto", default="auto"
        Number of candidates carried to the next round of the beam search. ``"auto"``: 10 for
        tables (as in the Anchors paper's experiments), 2 for documents and 1 for images
        (superpixels outside the few that hold the prediction are alike in precision, and
        telling the runner-up among them apart took most of the samples). The beam keeps
        the most precise candidates, which tend to be narrow: a wide beam keeps the broad
        ones that become anchors a predicate later, and on reference rows (``perturbation``)
        it costs few predictions, since one reference row serves every rule it satisfies. A
        document's anchors are a word or two long with the default sampler, and a wide beam
        there only multiplies the predictions.
    max_anchor_size : int >= 1 or None, default=None
        Maximum number of predicates; ``None`` means no limit. Set it on wide tables, where
        a row near the decision boundary may otherwise grow a rule of a hundred conditions.
    batch_size : int >= 1, default=100
        Perturbations drawn per candidate and bandit step. A step draws at most 100,000 per
        candidate, the most any rule is validated on: a larger value draws that many.
    discretizer : {"auto", "quartile", "decile", "tree"} or transformer, default="auto"
        Binning of numeric features into bins whose edges make the predicates (see
        ``bounds``); see :mod:`skanchors.discretizers`. ``"quartile"`` and ``"decile"``:
        percentiles of the reference data. ``"tree"``: where the model's prediction changes
        (:class:`~skanchors.discretizers.TreeDiscretizer`, fitted on the model's predictions
        on the reference rows; only predictions, never the model's internals). For a
        regressor its bins are narrow enough for the band: the predictions in a bin spread
        by at most ``bin_spread(tolerance_, threshold)`` (a third of ``tolerance_`` at the
        defaults), so each hour of a commute peak gets a bin of its own and the night hours
        share one; quartiles put 8 h and 11 h in one bin, and few rows of such a model get
        an anchor. For a classifier, bins in which one class holds ``threshold`` of the
        rows: more rows get an anchor than with quartiles, and narrower ones. ``"auto"``:
        ``"tree"`` for a regressor on a table, ``"quartile"`` otherwise. A
        ``TreeDiscretizer`` given as such is fitted on the model's predictions (the class
        indices for a classifier) with its own settings.
    categorical_features : "auto" or list of names/indices or boolean mask, default="auto"
        Features compared by equality. ``"auto"`` treats non-numeric columns as categorical
        (in an object array, the columns whose values are not all numbers). A list or mask
        replaces ``"auto"``: it names every categorical feature, the non-numeric ones too (a
        number that is a column's name is that column, as in ``pd.DataFrame(array)``; other
        numbers are positions).
    perturbation : {"auto", "reference", "replace"}, default="auto"
        Tables only: the distribution ``D(z | A)`` precision is measured on, which each
        anchor states in ``Anchor.perturbation``. ``"reference"``: the reference rows that
        satisfy the rule, unchanged (the data's own conditional distribution): an anchor's
        precision is that of the data the model is used on, as a held-out check measures it,
        and every reference row drawn serves every rule it satisfies, so wide beams and rows
        explained together cost few predictions. The search chooses rules on one random half
        of the reference rows and validates them on the other, so a rule needs enough rows
        to be validated (a few hundred at the defaults), and the reference data should be data
        the model was not fitted on when the model memorises its training rows (a random
        forest or a large network predicts their labels there). ``"replace"`` (Ribeiro et
        al.): a random reference row whose values that break the rule are replaced by values
        of rows that keep it, so rules are also tested on value combinations the data lacks:
        stricter, narrower rules, and as many samples as the search wants. ``"auto"``: the
        reference rows first and, for a row where no rule validates on them, the replaced
        rows, each search at half of ``delta``: broad rules where the data can show them,
        and an anchor for every row (the user guide compares the three on the Anchors paper's
        protocol). See :class:`~skanchors.samplers.TabularSampler`.
    bounds : {"interval", "bin", "all"}, default="interval"
        Tables only: the predicates of a numeric feature. ``"interval"``: the row's bin as
        one predicate (``23 < Age <= 28`` for a passenger of 25 with Age cut at 23, 28 and
        36; ``Age <= 23`` for one of 21): a rule keeps a numeric feature to the row's bin or
        leaves it free. ``"bin"``: the bin's two edges, each a predicate of its own
        (``Age > 23``, ``Age <= 28``), so a rule may keep one side of the bin only
        (``Age > 23``, which also covers passengers of 60). ``"all"``: the bound the row
        satisfies at every edge, as alibi and the authors' code have it (``Age <= 23``,
        ``Age <= 28``, ``Age <= 36``), so a rule can span several bins and be as broad as the
        model allows; a rule still holds at most one bound per side of a feature. Broader
        predicates give broader rules that hold less often on real rows (held-out precision
        and coverage of each choice: :doc:`/performance`).
    sampler : sampler object or None, default=None
        The perturbation distribution. ``None``: a
        :class:`~skanchors.samplers.TabularSampler` built from these parameters for tables,
        ``UnkSampler()`` for documents (words outside the rule become ``"UNK"``; the global
        aggregators' default too), ``ImageSampler()`` for images (an array (n, H, W) or
        (n, H, W, C): superpixels kept or filled with their mean colour; see
        :class:`~skanchors.samplers.ImageSampler` for other segmentations and fills). Pass
        :class:`~skanchors.samplers.CorpusSampler`,
        :class:`~skanchors.samplers.MaskedLMSampler` or ``UnkSampler(token=None)`` to
        perturb text otherwise, or your own (see :class:`~skanchors.samplers.TabularSampler`
        for the protocol). When given, ``discretizer``, ``categorical_features``,
        ``perturbation`` and ``bounds`` must stay at their defaults: the sampler carries its
        own.
    balance : bool, default=False
        Tables only. Class-balance the reference data over the model's predictions before
        sampling (recommended for imbalanced problems: otherwise majority-class rows get
        empty anchors and minority rows overly long ones). Coverage is then reported both
        under the balanced distribution (``coverage_perturbation``) and on the unbalanced data
        (``coverage``).
    bandit : {"kl-lucb", "batch-sar"} or bandit object, default="kl-lucb"
        Best-arm identification: KL-LUCB (the weakest chosen candidate and up to two
        challengers per model call, fewest rows; :class:`KLLUCB` for its options) or
        BatchSAR (every surviving candidate in one model call, for slow models).
    mode : {"auto", "classification", "regression"}, default="auto"
        What is held in place. Classification: the predicted class (``precision`` is the share
        of perturbations with the same class). Regression: the predicted value, within
        ``tolerance`` (``precision`` is the share of perturbations ``z`` with
        ``|f(z) - f(x)| <= tolerance``). ``"auto"`` picks regression for sklearn regressors
        (``is_regressor``) and classification otherwise; a callable is a classifier unless
        ``mode="regression"``, when it returns one number per input.
    tolerance : float > 0, default=0.25
        Regression only: half-width of the band the prediction must stay in.
    tolerance_unit : {"std", "absolute"}, default="std"
        Regression only: ``tolerance`` is in standard deviations of the model's predictions
        on the reference data (``"std"``, so 0.25 means a quarter of the spread of the
        predictions) or in the target's own units (``"absolute"``).
    score_rows : int or None, default=50
        :meth:`score` explains at most this many rows of its input (chosen with
        ``random_state``); ``None`` explains all of them.
    score_threshold : float in (0, 1] or None, default=0.95
        The precision an anchor must keep on held-out rows to count in :meth:`score`. It is
        fixed, not ``threshold``, so that model selection over ``threshold`` compares every
        setting against the same requirement (against its own threshold, the loosest setting
        would win: its broad rules need only be right that often). ``None`` uses
        ``threshold``.
    score_tolerance : float > 0 or None, default=0.25
        Regression only: the band :meth:`score` checks held-out predictions against, in
        standard deviations of the model's predictions on the reference data. Fixed for the
        reason ``score_threshold`` is: against its own ``tolerance`` a grid over
        ``tolerance`` would pick the widest band, whose empty rule holds every prediction
        within it. ``None`` uses ``tolerance_``.
    cache_size : int >= 0, default=250_000
        Perturbations are drawn from *streams*: the ``i``-th sample for a rule depends only
        on the rule's predicates (``Age <= 37``, the same for every row in that bin), ``i``
        and ``random_state``, so the searches of different rows read the same samples. The
        fitted explainer keeps the model's predictions on up to ``cache_size`` of them and
        later searches, in this or later calls, reuse them without a model call. A row
        whose predicates are another's in the reference data's terms (the same bins and
        categories), anchoring the same class, goes through that row's search sample for
        sample: the explainer also keeps what its searches found (up to 10,000 of them) and
        gives such a row the earlier anchor without searching again. Text has no streams: a
        document explained again (the same text, anchoring the same class) gets its first
        search's anchor. This only changes costs: the anchors are the same for any
        ``cache_size`` (0 keeps nothing).
        Each kept prediction takes about 250 bytes with its perturbation (measured on
        Adult's 14 columns: the default then holds up to about 60 MB). The cache assumes
        the model does not change; :meth:`fit` starts a new one, and so does a model refitted in
        place (see ``estimator``). The cache is not pickled: a saved or copied explainer starts
        with an empty one.
    n_jobs : int or None, default=None
        Rows are explained in parallel with joblib (any backend, e.g. dask through
        ``joblib.parallel_config``). ``None`` means 1 unless in a joblib context. The rows are split
        into one chunk per worker. When a one-row call of the model takes more than two milliseconds
        (a random forest, a transformer), the searches of the rows of a chunk share their model
        calls: a call is made when every search of the chunk waits for predictions, on all their
        samples at once (the anchors, and their ``n_model_calls`` and ``n_rows_predicted``, are
        those of rows explained one by one). One row's search stays in one process: its calls depend
        on each other, and splitting them over threads only adds hand-overs. Each worker's
        predictions are kept for the call only; what its searches found comes back to the
        explainer's cache.
    random_state : int, RandomState or None, default=None
        Seeds the perturbations (once, in :meth:`fit`); results are identical for any
        ``n_jobs`` and whether rows are explained alone or together.
    verbose : int, default=0
        Print one line per explained row when positive.

    Attributes
    ----------
    sampler_ : fitted sampler
    classes_ : ndarray
        Labels of the model's classes (classification only).
    tolerance_ : float
        The band half-width in the target's units (regression only).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when fitted on a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> from skanchors import AnchorExplainer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(500, 3))
    >>> def model(X):  # predicts 1 exactly when x0 > 0.5
    ...     p = (np.asarray(X)[:, 0] > 0.5).astype(float)
    ...     return np.column_stack([1 - p, p])
    >>> explainer = AnchorExplainer(model, random_state=0).fit(X)
    >>> anchor = explainer.explain(np.array([[0.9, 0.1, 0.5]]))[0]
    >>> [str(p) for p in anchor.predicates], anchor.precision
    (['x0 > 0.7...'], 1.0)
    >>> wide = AnchorExplainer(model, bounds="all", random_state=0).fit(X)
    >>> [str(p) for p in wide.explain(np.array([[0.9, 0.1, 0.5]]))[0].predicates]
    ['x0 > 0.541']
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["predict_proba"]), HasMethods(["predict"]), callable],
        "threshold": [Interval(Real, 0, 1, closed="right")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "epsilon": [Interval(Real, 0, 1, closed="right")],
        "beam_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_anchor_size": [Interval(Integral, 1, None, closed="left"), None],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "discretizer": [
            StrOptions({"auto", "quartile", "decile", "tree"}),
            HasMethods(["fit", "transform"]),
        ],
        "categorical_features": [StrOptions({"auto"}), "array-like"],
        "perturbation": [StrOptions({"auto", "replace", "reference"})],
        "bounds": [StrOptions({"bin", "interval", "all"})],
        "sampler": [None, HasMethods(["fit", "instance", "split"])],
        "balance": ["boolean"],
        "bandit": [StrOptions({"kl-lucb", "batch-sar"}), HasMethods(["select"])],
        "mode": [StrOptions({"auto", "classification", "regression"})],
        "tolerance": [Interval(Real, 0, None, closed="neither")],
        "tolerance_unit": [StrOptions({"std", "absolute"})],
        "score_rows": [Interval(Integral, 1, None, closed="left"), None],
        "score_threshold": [Interval(Real, 0, 1, closed="right"), None],
        "score_tolerance": [Interval(Real, 0, None, closed="neither"), None],
        "cache_size": [Interval(Integral, 0, None, closed="left")],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        *,
        threshold=0.95,
        delta=0.1,
        epsilon=0.15,
        beam_size="auto",
        max_anchor_size=None,
        batch_size=100,
        discretizer="auto",
        categorical_features="auto",
        perturbation="auto",
        bounds="interval",
        sampler=None,
        balance=False,
        bandit="kl-lucb",
        mode="auto",
        tolerance=0.25,
        tolerance_unit="std",
        score_rows=50,
        score_threshold=0.95,
        score_tolerance=0.25,
        cache_size=250_000,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.threshold = threshold
        self.delta = delta
        self.epsilon = epsilon
        self.beam_size = beam_size
        self.max_anchor_size = max_anchor_size
        self.batch_size = batch_size
        self.discretizer = discretizer
        self.categorical_features = categorical_features
        self.perturbation = perturbation
        self.bounds = bounds
        self.sampler = sampler
        self.balance = balance
        self.bandit = bandit
        self.mode = mode
        self.tolerance = tolerance
        self.tolerance_unit = tolerance_unit
        self.score_rows = score_rows
        self.score_threshold = score_threshold
        self.score_tolerance = score_tolerance
        self.cache_size = cache_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Learn the reference distribution of perturbations from ``X``.

        The model is not fitted: ``X`` is the data the explanations are relative to (for
        instance the training data), used for sampling and for coverage.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features), list of str, or images
            Raw reference data, in the form the model consumes: a table, documents, or images
            (an array (n, H, W) or (n, H, W, C); see the user guide's "Images").
        y : None
            Ignored.

        Returns
        -------
        self
        """
        _check_reference_data(X)
        check_model(self.estimator, "estimator", type(self).__name__)
        regression = self.mode == "regression" or (
            self.mode == "auto" and _is_regressor(self.estimator)
        )
        if regression and self.balance:
            raise ValueError("balance=True needs classes; it does not apply to regression.")
        estimator = self.estimator
        if not (
            regression
            or hasattr(estimator, "predict_proba")
            or _is_plain_callable(estimator)
            or (hasattr(estimator, "predict") and hasattr(estimator, "classes_"))
        ):
            raise ValueError(
                "The 'estimator' parameter must be a fitted classifier (predict_proba, or "
                f"predict and classes_) or a callable; {type(estimator).__name__} has "
                "neither. For a regressor use mode='regression'."
            )
        # anchors compare predicted classes only: a classifier's predict is enough
        self.model_ = (
            RegressionModel(estimator)
            if regression
            else as_probability_model(estimator, labels_only=True)
        )
        sampler = self._make_sampler(X)
        # (a discretizer named here, for the explainer's own sampler: "auto" or "tree" are
        # then set up below for the model at hand)
        named = isinstance(self.discretizer, str) and self.sampler is None
        tabular = "discretizer" in sampler.get_params()
        if named and tabular and regression and self.discretizer == "auto":
            sampler.set_params(discretizer="tree")  # bins where the prediction moves
        supervised = _needs_predictions(sampler)
        weights = predicted = None
        if self.balance or supervised:
            # The model's predictions on the reference rows, before the sampler is fitted: a
            # sampler without bins (cheap to fit) turns X into the model's input.
            probe = clone(sampler)
            if "discretizer" in probe.get_params():
                probe.set_params(discretizer=EdgesDiscretizer(edges={}, default="none"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (the real fit below warns, once)
                probe.fit(X)
            check_model_columns(estimator, probe, X)
            model_input = probe.to_model_input(X)
            predict = self.model_.predict if regression else self.model_.predict_index
            predicted = np.asarray(predict(model_input))
        if self.balance:
            counts = np.bincount(predicted)
            weights = 1.0 / counts[predicted]
        if regression and predicted is not None:
            self._set_band(predicted)
        if supervised and named:
            # the bins resolve what the search must tell apart: the band, or the classes
            if regression:
                tree = TreeDiscretizer(
                    target="continuous", max_std=bin_spread(self.tolerance_, self.threshold)
                )
            else:
                tree = TreeDiscretizer(target="classes", min_share=self.threshold)
            sampler.set_params(discretizer=tree)
        # (y only for a discretizer that takes it: a sampler of the user's may not)
        fit_params = {"y": predicted} if supervised else {}
        self.sampler_ = sampler.fit(X, sample_weight=weights, **fit_params)
        check_model_columns(estimator, self.sampler_, X)
        if hasattr(self.sampler_, "to_model_input"):
            # Perturbations are made of the reference data's values: a model that can learn
            # its outputs on them in advance (a Pipeline's ColumnTransformer) does so now.
            self.model_.prepare(self.sampler_.to_model_input(X))
        if regression:
            if predicted is None:
                self._set_band(self.model_.predict(self.sampler_.to_model_input(X)))
            if hasattr(self, "classes_"):
                del self.classes_
        else:
            self._learn_classes(X)
        self._hash_by_splits()
        # Streams of perturbations are seeded once per fit, and the model's predictions on
        # them are kept for every later search (see skanchors._cache).
        self._seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        self._cache = SampleCache(self.cache_size)
        if hasattr(self.sampler_, "hash_by_splits"):
            # tables: numba's one-time start of the stratified arms' kernels (compiling them,
            # or loading its cached code) belongs to fit, not to the first explanation
            _arm_kernel()
        if hasattr(self.sampler_, "n_features_in_"):
            self.n_features_in_ = self.sampler_.n_features_in_
        if getattr(self.sampler_, "feature_names_in_", None) is not None:
            self.feature_names_in_ = self.sampler_.feature_names_in_
        return self

    def _tabular_params(self):
        # (LIME draws unconditioned rows, which both perturbations draw alike, and its
        # interpretable features are the rows' bins: only anchors have these parameters.)
        params = {
            **super()._tabular_params(),
            "perturbation": self.perturbation,
            "bounds": self.bounds,
        }
        if isinstance(self.discretizer, str) and self.discretizer == "auto":
            params["discretizer"] = "quartile"  # the sampler's default (fit: "tree" to regress)
        return params

    # ----------------------------------------------------------------- explaining
    def explain(self, X, y=None):
        """Find the anchor of every row of ``X``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_rows, n_features), list of str, or images
            Rows to explain, with the reference data's columns; or documents; or images in
            the reference images' layout (an :class:`~skanchors.ImageAnchor` each).
        y : array-like of shape (n_rows,), default=None
            Class to anchor for each row; by default the model's prediction. Anchoring another
            class answers "what would make the model predict y?" and often has no anchor.

        Returns
        -------
        anchors : list of Anchor
        """
        check_is_fitted(self, "sampler_")
        self._validate_params()  # (set_params may have changed them since fit)
        self._current_model()
        rows = self.sampler_.split(X)
        targets, call_seconds = self._targets(X, rows, y)
        # Sharing model calls across the rows' searches pays when a call has a high fixed cost
        # (a forest's predict_proba), and costs thread hand-overs when it has not (a small
        # boosting model), or when the model predicts a large batch faster per row than a small
        # one (favours_large_batches); regression with a given y has no timing and shares.
        # The anchors and their counts are the same either way.
        share = (
            call_seconds is None
            or call_seconds > _SHARE_CALLS_ABOVE
            or getattr(self.model_, "favours_large_batches", False)
        )
        # Each row's seed depends on random_state and on the row's content only, so a row gets
        # the same anchor whether it is explained alone or in a batch, with any n_jobs.
        base = self._seed
        seeds = np.array([row_seed(base, r) for r in rows], dtype=np.int64)
        params = dict(
            threshold=self.threshold,
            delta=self.delta,
            epsilon=self.epsilon,
            beam_size=self._beam_size(),
            max_anchor_size=self.max_anchor_size,
            # (a step draws no more than a rule is ever validated on: 10**9 would not fit)
            batch_size=min(int(self.batch_size), _MAX_VALIDATION_SAMPLES),
            bandit=make_bandit(self.bandit),
        )
        if self._cache.max_size != self.cache_size:  # set_params after fit
            self._cache = SampleCache(self.cache_size)
        shared = (self._cache, base, self._search_params())
        n_jobs = self.n_jobs
        found, copies = {}, {}
        parallel = not (n_jobs is None or n_jobs == 1 or len(rows) == 1)
        if not parallel and not (share and len(rows) > 1 and self._cache.enabled):
            chunks = [list(range(len(rows)))]  # one search after the other: the cache reuses
        else:
            # Searches that run at the same time (in workers, or in threads that share model
            # calls) cannot find each other's results in the cache. The rows whose search the
            # cache holds are answered here, and a search that two rows would make (the same
            # key: see _search_key) is made once, for the first of them, as in one search
            # after the other; in workers (which get an empty copy of the cache), so is a row
            # given more than once.
            task, first = self._task(), {}
            for i, (r, t) in enumerate(zip(rows, targets)):
                key = None
                if self._cache.enabled and shared[2] is not None:
                    instance = self.sampler_.instance(r)
                    key = _search_key(instance, task.namespace(t), t, base, shared[2])
                hit = None if key is None else self._cache.get_search(key)
                if hit is not None:
                    found[i] = hit
                    continue
                if key is None and parallel and self._cache.enabled:
                    key = _row_identity(r)
                    key = None if key is None else (key, _plain(t))
                if key is None:
                    continue
                try:
                    earlier = first.setdefault(key, i)
                except TypeError:  # (pd.NA compared with a value: no verdict, no sharing)
                    continue
                if earlier != i:
                    copies[i] = earlier
            todo = np.array(
                [i for i in range(len(rows)) if i not in found and i not in copies], dtype=np.intp
            )
            # One chunk per worker: the rows of a chunk share their model calls.
            n_chunks = min(len(todo), effective_n_jobs(n_jobs)) if parallel else 1
            chunks = [c.tolist() for c in np.array_split(todo, n_chunks)] if len(todo) else []
        tasks = (
            delayed(_explain_chunk)(
                self.sampler_,
                self._task(),
                [rows[i] for i in chunk],
                targets[chunk],
                seeds[chunk],
                params,
                self.verbose,
                share,
                shared,
                chunk,
            )
            for chunk in chunks
        )
        if not chunks or (len(chunks) == 1 and effective_n_jobs(n_jobs) == 1):
            # what joblib would do, in this process, without its set-up per call
            results = [function(*args, **kwargs) for function, args, kwargs in tasks]
        else:
            results = Parallel(n_jobs=n_workers(n_jobs, len(chunks)))(tasks)
        anchors = [None] * len(rows)
        for chunk, found_in_chunk in zip(chunks, results):
            for i, anchor in zip(chunk, found_in_chunk):
                anchors[i] = anchor
                # What a joblib worker's search found comes back to this explainer's cache
                # (the worker's copy of it ends with the call).
                key = anchor.__dict__.pop("_search_key", None)
                if key is not None and self._cache.get_search(key) is None:
                    self._cache.put_search(key, _reuse(anchor, None, None))
        task = self._task()
        answered = [(i, hit) for i, hit in found.items()]
        answered += [(i, anchors[j]) for i, j in copies.items()]
        for i, hit in answered:
            anchors[i] = _reuse(hit, rows[i], time.perf_counter())
            task.finish(anchors[i], targets[i])
            if self.verbose:
                print(f"[skanchors] row {i}: {anchors[i]} (found before)", flush=True)
        regression = isinstance(self.model_, RegressionModel)
        # Each row was predicted once (its class to anchor) in one of _targets' calls: that
        # call and row are part of its explanation, as LIME counts its row too.
        own = y is None or not regression
        for i, anchor in enumerate(anchors):
            if own:
                anchor.n_model_calls += 1
                anchor.n_rows_predicted += 1
            if not anchor.is_anchor:
                where = f"Row {i}"
                if isinstance(rows[i], pd.DataFrame):
                    label = rows[i].index[0]
                    label = label.item() if isinstance(label, np.generic) else label
                    where += f" (index {label!r})"
                warnings.warn(
                    f"{where}: no rule reached precision {self.threshold}; returning the best "
                    f"candidate found (precision {anchor.precision:.3f} on {anchor.n_samples} "
                    "samples) with is_anchor=False.",
                    NoAnchorWarning,
                    stacklevel=outside_stacklevel(),
                )
        return anchors

    def _beam_size(self):
        """``beam_size``, with "auto" resolved for the data the explainer was fitted on."""
        if self.beam_size != "auto":
            return int(self.beam_size)
        if is_image_sampler(self.sampler_):
            return 1
        return 2 if getattr(self.sampler_, "vocabulary_", None) is not None else 10

    def _search_params(self):
        """The parameters a search depends on, hashable, for the cache of searches (see
        ``SampleCache.get_search``); None with a bandit of the user's own, which may keep
        state or draw random numbers between searches."""
        bandit = self.bandit
        if isinstance(bandit, str):
            bandit_key = bandit
        elif type(bandit) in (KLLUCB, BatchSAR):  # described in full by their repr
            bandit_key = repr(bandit)
        else:
            return None
        return (
            float(self.threshold),
            float(self.delta),
            float(self.epsilon),
            self._beam_size(),
            None if self.max_anchor_size is None else int(self.max_anchor_size),
            int(self.batch_size),
            bandit_key,
        )

    def transform(self, X):
        """Which features (tables) or words (documents) appear in each anchor.

        Returns
        -------
        Xt : ndarray of shape (n_rows, ``n_features_in_``), int, for tables
            1 where the feature is part of the row's anchor. A row without an anchor gets the
            features of the best rule :meth:`explain` returns for it (``is_anchor=False``,
            with a :class:`NoAnchorWarning`); use :meth:`explain` to tell them apart.
        Xt : scipy.sparse.csr_matrix of shape (n_documents, n_words), for documents
            1 where the word is part of the document's anchor; the columns are the reference
            vocabulary learned in :meth:`fit` (:meth:`get_feature_names_out`), and anchor words
            outside it are left out, as :class:`~sklearn.feature_extraction.text.CountVectorizer`
            does with unknown words.
        Xt : ndarray of shape (n_images, H * W), int, for images
            1 where the pixel (row by row) lies in the anchor's superpixels
            (``anchor.mask.ravel()``).
        """
        anchors = self.explain(X)
        if is_image_sampler(self.sampler_):
            return np.stack([a.mask.ravel() for a in anchors]).astype(np.int64)
        vocabulary = getattr(self.sampler_, "vocabulary_", None)
        if vocabulary is not None:
            from scipy import sparse

            rows, cols = [], []
            for i, anchor in enumerate(anchors):
                for word in {p.value for p in anchor.predicates}:
                    j = vocabulary.get(word)
                    if j is not None:
                        rows.append(i)
                        cols.append(j)
            return sparse.csr_matrix(
                (np.ones(len(rows), dtype=np.int64), (rows, cols)),
                shape=(len(anchors), len(vocabulary)),
            )
        out = np.zeros((len(anchors), self.n_features_in_), dtype=np.int64)
        for i, anchor in enumerate(anchors):
            for p in anchor.predicates:
                out[i, p.position] = 1
        return out

    def score(self, X, y=None):
        """Held-out coverage of honest anchors: a model-selection criterion.

        Explains up to ``score_rows`` rows of ``X`` and checks each anchor on the *other* rows
        of ``X`` (held-out data, e.g. a cross-validation fold): an anchor scores its held-out
        coverage if the model's prediction on the held-out rows it covers agrees with the
        anchor at least ``score_threshold`` of the time (``threshold`` if None), and 0
        otherwise. For regression, agreeing means a prediction within ``score_tolerance``
        standard deviations of the anchor's (``tolerance_`` if None). The score is the mean
        over explained rows. Higher is better: broad rules that are precise on unseen data;
        over-general rules score 0.

        Parameters
        ----------
        X : DataFrame or array-like
            Held-out rows, at least 2 (each anchor is checked on the others).
        y : None
            Ignored (the model's predictions are what the anchors explain).

        Returns
        -------
        score : float in [0, 1]
        """
        check_is_fitted(self, "sampler_")
        self._validate_params()
        if is_image_sampler(self.sampler_):
            raise ValueError(
                "score checks anchors on held-out rows they cover; an image anchor names "
                "superpixels of its own image, and coverage across images is undefined. Use "
                "perturbation_precision to check image anchors."
            )
        model_input = self.sampler_.to_model_input(X)
        candidates = np.arange(len(model_input))
        if getattr(self.sampler_, "vocabulary_", None) is not None:
            from .samplers.text import tokenize

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
        if self.score_rows is not None and len(candidates) > self.score_rows:
            rng = check_random_state(self.random_state)
            chosen = np.sort(rng.choice(candidates, size=self.score_rows, replace=False))
        bar = self.threshold if self.score_threshold is None else self.score_threshold
        task = self._task()
        predicted = task.outcomes(model_input, self)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoAnchorWarning)
            anchors = self.explain(take_rows(model_input, chosen))
        values = []
        for i, anchor in zip(chosen, anchors):
            mask = anchor.covers(model_input)
            mask[i] = False
            if not mask.any():
                values.append(0.0)
                continue
            agree = task.agrees(predicted[mask], anchor.prediction)
            if isinstance(task, _Regression) and self.score_tolerance is not None:
                band = self.score_tolerance * self._spread
                agree = np.abs(predicted[mask] - anchor.prediction) <= band
            precision = float(np.mean(agree))
            # coverage of the other rows, as Anchor.check(..., exclude=i) counts it
            values.append(mask.sum() / (len(mask) - 1) if precision >= bar else 0.0)
        return float(np.mean(values))


_SHARE_CALLS_ABOVE = 0.002  # seconds of a one-row model call


def _needs_predictions(sampler):
    """Whether the sampler's discretizer bins where the model's predictions change (and so
    must be fitted with them): ``"tree"``, or a transformer whose tags require a target."""
    params = sampler.get_params() if hasattr(sampler, "get_params") else {}
    discretizer = params.get("discretizer")
    if isinstance(discretizer, str):
        return discretizer == "tree"
    if discretizer is None or not hasattr(discretizer, "fit"):
        return False
    try:
        return bool(get_tags(discretizer).target_tags.required)
    except (AttributeError, TypeError):  # not a scikit-learn estimator: it gets no target
        return False


def _is_regressor(estimator):
    """sklearn's is_regressor, False for objects that are not sklearn estimators."""
    try:
        return is_regressor(estimator)
    except (AttributeError, TypeError):
        return getattr(estimator, "_estimator_type", None) == "regressor"


def _is_plain_callable(obj):
    return callable(obj) and not hasattr(obj, "predict")
