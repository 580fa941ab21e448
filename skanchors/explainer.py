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

from . import _sharing
from ._anchor_model import _ModelTask
from ._anchor_sampling import _AnchorSampling
from ._bandit import KLLUCB, BatchSAR, make_bandit
from ._base import (
    N_JOBS,
    BaseExplainer,
    _check_reference_data,
    check_model_columns,
    n_workers,
    outside_stacklevel,
    row_seed,
)
from ._config import check_cache_size, get_config
from ._explain_rows import _explain_chunk, _plain, _reuse, _row_identity, _search_key
from ._moved import carry, hide_moved, move_to_sampler, refuse_unknown, warn_moved
from ._scoring import AnchorScorer
from ._search import _MAX_VALIDATION_SAMPLES, _arm_kernel
from ._validation import check_model
from ._warnings import NoAnchorWarning
from .discretizers import EdgesDiscretizer, TreeDiscretizer, bin_spread
from .models import RegressionModel, as_probability_model

__all__ = ["AnchorExplainer", "NoAnchorWarning"]


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
        deviations or bins cut where the model's predictions change (the sampler's
        ``discretizer="tree"``, a regressor's default), which come from the old model's
        predictions on the reference data, they raise a ``ValueError`` asking for :meth:`fit`
        again. A plain function cannot be fingerprinted: fit the explainer again if it
        changes.
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
        ones that become anchors a predicate later, and on reference rows (the sampler's
        ``perturbation``) it costs few predictions, since one reference row serves every rule
        it satisfies. A
        document's anchors are a word or two long with the default sampler, and a wide beam
        there only multiplies the predictions.
    max_anchor_size : int >= 1 or None, default=None
        Maximum number of predicates; ``None`` means no limit. Set it on wide tables, where
        a row near the decision boundary may otherwise grow a rule of a hundred conditions.
    batch_size : int >= 1 or "auto", default="auto"
        Perturbations drawn per candidate and bandit step (and for the empty rule before the
        first round). A step draws at most 100,000 per candidate, the most any rule is
        validated on: a larger value draws that many. ``"auto"``: 100 for tables and
        documents (as in the Anchors paper's code) and 50 for images, whose predictions cost
        the most: the first draw from the whole distribution already ranks the superpixels,
        and a chosen rule's validation then starts with the fewest fresh samples that can
        accept it (see the user guide's "Images").
    sampler : sampler object or None, default=None
        The perturbation distribution ``D(z | A)``, and with it the predicates. ``None``:
        ``TabularSampler()`` for tables, ``UnkSampler()`` for documents (words outside the
        rule become ``"UNK"``; the global aggregators' default too), ``ImageSampler()`` for
        images (an array (n, H, W) or (n, H, W, C): superpixels kept or filled with their
        mean colour). A table's options are
        the :class:`~skanchors.samplers.TabularSampler`'s: ``discretizer`` (the bins whose
        edges make the predicates: quartiles, deciles, or ``"tree"``, cut where the model's
        prediction changes, the default for a regressor), ``categorical_features``,
        ``perturbation`` (``"reference"`` rows, rows whose values are ``"replace"``-d, or
        ``"auto"``: both, the reference rows first) and ``bounds`` (the predicates of a
        numeric feature), e.g. ``sampler=TabularSampler(perturbation="replace",
        bounds="all")``; a grid search tunes them as ``sampler__perturbation``. An image's
        are the :class:`~skanchors.samplers.ImageSampler`'s: ``segmentation`` (SLIC,
        quickshift, Felzenszwalb or a callable), ``segmentation_params``, ``fill`` and
        ``keep_proba``, e.g. ``sampler=ImageSampler(segmentation="quickshift",
        fill="blur")``. Pass
        :class:`~skanchors.samplers.CorpusSampler`,
        :class:`~skanchors.samplers.MaskedLMSampler` or ``UnkSampler(token=None)`` to
        perturb text otherwise, or your own (see :class:`~skanchors.samplers.TabularSampler`
        for the protocol). The sampler is cloned in :meth:`fit`; a ``discretizer`` named by
        a string (``"auto"``, ``"tree"``) is set up there for the model: ``"tree"`` bins in
        which one class holds ``threshold`` of the rows (a classifier), or whose predictions
        spread by at most ``bin_spread(tolerance_, threshold)`` (a regressor: each hour of a
        commute peak gets a bin of its own and the night hours share one); a
        :class:`~skanchors.discretizers.TreeDiscretizer` object is fitted on the model's
        predictions with its own settings.
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

    With the speed layer (loaded by ``import skanchors``), the explainer keeps the model's
    predictions on perturbations, and the anchors its searches found, for later searches:
    :func:`skanchors.set_config` (``cache_size``) bounds that cache, which changes costs,
    never anchors. The held-out score that model selection maximises is :func:`anchor_scorer`'s.
    The keyword arguments ``discretizer``, ``categorical_features``, ``perturbation``,
    ``bounds`` (now the sampler's), ``score_rows``, ``score_threshold``, ``score_tolerance``
    (now :func:`anchor_scorer`'s) and ``cache_size`` (now :func:`skanchors.set_config`'s) are
    still accepted, with a ``FutureWarning``, until skanchors 0.3.

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
    >>> from skanchors.samplers import TabularSampler
    >>> wide = AnchorExplainer(model, sampler=TabularSampler(bounds="all"), random_state=0)
    >>> wide = wide.fit(X)
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
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "sampler": [None, HasMethods(["fit", "instance", "split"])],
        "balance": ["boolean"],
        "bandit": [StrOptions({"kl-lucb", "batch-sar"}), HasMethods(["select"])],
        "mode": [StrOptions({"auto", "classification", "regression"})],
        "tolerance": [Interval(Real, 0, None, closed="neither")],
        "tolerance_unit": [StrOptions({"std", "absolute"})],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    @hide_moved
    def __init__(
        self,
        estimator,
        *,
        threshold=0.95,
        delta=0.1,
        epsilon=0.15,
        beam_size="auto",
        max_anchor_size=None,
        batch_size="auto",
        sampler=None,
        balance=False,
        bandit="kl-lucb",
        mode="auto",
        tolerance=0.25,
        tolerance_unit="std",
        n_jobs=None,
        random_state=None,
        verbose=0,
        **moved,
    ):
        self.estimator = estimator
        self.threshold = threshold
        self.delta = delta
        self.epsilon = epsilon
        self.beam_size = beam_size
        self.max_anchor_size = max_anchor_size
        self.batch_size = batch_size
        self.sampler = sampler
        self.balance = balance
        self.bandit = bandit
        self.mode = mode
        self.tolerance = tolerance
        self.tolerance_unit = tolerance_unit
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        if moved:
            _take_moved(self, moved)

    def __sklearn_clone__(self):
        # (what old keywords set outside the parameters goes to the clone too)
        return carry(self, super().__sklearn_clone__(), _CARRIED)

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
        # (a discretizer named by a string, "auto" or "tree", is set up below for the model)
        discretizer = (sampler.get_params() if hasattr(sampler, "get_params") else {}).get(
            "discretizer"
        )
        named = isinstance(discretizer, str)
        if named and regression and discretizer == "auto":
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
        # Perturbations are made of the reference data's values: a model that can learn its
        # outputs on them in advance (a Pipeline's ColumnTransformer) does so now.
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
        # them are kept for every later search, where there is a prediction cache (see
        # skanchors._sharing).
        self._seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        self._cache = _sharing.new_cache(self._cache_size())
        if self.sampler_.capabilities.stratified:
            # tables: numba's one-time start of the stratified arms' kernels (compiling them,
            # or loading its cached code) belongs to fit, not to the first explanation
            _arm_kernel()
        if hasattr(self.sampler_, "n_features_in_"):
            self.n_features_in_ = self.sampler_.n_features_in_
        if getattr(self.sampler_, "feature_names_in_", None) is not None:
            self.feature_names_in_ = self.sampler_.feature_names_in_
        return self

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
            batch_size=min(self._batch_size(), _MAX_VALIDATION_SAMPLES),
            bandit=make_bandit(self.bandit),
        )
        if not _sharing.cache_matches(self._cache, self._cache_size()):
            # set_config after fit, or the speed layer switched on or off since
            self._cache = _sharing.new_cache(self._cache_size())
        cache = self._cache
        shared = (cache, base, self._search_params())
        n_jobs = self.n_jobs
        found, copies = {}, {}
        parallel = not (n_jobs is None or n_jobs == 1 or len(rows) == 1)
        if not parallel and not (share and len(rows) > 1 and cache is not None):
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
                if cache is not None and shared[2] is not None:
                    instance = self.sampler_.instance(r)
                    key = _search_key(instance, task.namespace(t), t, base, shared[2])
                hit = None if key is None else cache.get_search(key)
                if hit is not None:
                    found[i] = hit
                    continue
                if key is None and parallel and cache is not None:
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
                if key is not None and cache is not None and cache.get_search(key) is None:
                    cache.put_search(key, _reuse(anchor, None, None))
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
        if self.sampler_.modality == "image":
            return 1
        return 2 if self.sampler_.modality == "text" else 10

    def _batch_size(self):
        """``batch_size``, with "auto" resolved for the data the explainer was fitted on."""
        if self.batch_size != "auto":
            return int(self.batch_size)
        return 50 if self.sampler_.modality == "image" else 100

    def _search_params(self):
        """The parameters a search depends on, hashable, for the cache of searches (see
        the prediction cache's ``get_search``); None with a bandit of the user's own, which may keep
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
            self._batch_size(),
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
            (``anchor.mask.ravel()``). The images must have the reference images' size (the
            columns are their pixels); ``ValueError`` otherwise.
        """
        check_is_fitted(self, "sampler_")
        if self.sampler_.modality == "image":
            self.sampler_.check_pixel_columns(X)
        anchors = self.explain(X)
        if self.sampler_.modality == "image":
            return np.stack([a.mask.ravel() for a in anchors]).astype(np.int64)
        if self.sampler_.modality == "text":
            from scipy import sparse

            vocabulary = self.sampler_.vocabulary_
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

        ``anchor_scorer()(self, X)``: explains up to 50 rows of ``X`` and checks each anchor
        on the *other* rows of ``X`` (held-out data, e.g. a cross-validation fold); an anchor
        scores its held-out coverage if the model's predictions there agree with it at least
        95 % of the time (regression: within 0.25 standard deviations), else 0. Pass
        ``scoring=anchor_scorer(rows=..., threshold=..., tolerance=...)`` to ``GridSearchCV``
        for other requirements (see :func:`~skanchors.anchor_scorer`).

        Parameters
        ----------
        X : DataFrame or array-like
            Held-out rows, at least 2 (each anchor is checked on the others). Not images:
            an image anchor names superpixels of its own image (``ValueError``).
        y : None
            Ignored (the model's predictions are what the anchors explain).

        Returns
        -------
        score : float in [0, 1]
        """
        return getattr(self, "_scorer", _DEFAULT_SCORER)(self, X, y)

    def _cache_size(self):
        """The cache's size: the configuration's (``skanchors.set_config``), or this
        explainer's own (``_own_cache_size``: the old ``cache_size=`` keyword, the benchmarks)."""
        size = getattr(self, "_own_cache_size", None)
        return get_config()["cache_size"] if size is None else size


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


_DEFAULT_SCORER = AnchorScorer()
_SAMPLER_OPTIONS = ("discretizer", "categorical_features", "perturbation", "bounds")
_SCORE_OPTIONS = {
    "score_rows": "rows",
    "score_threshold": "threshold",
    "score_tolerance": "tolerance",
}
_CARRIED = ("_scorer", "_own_cache_size")


def _take_moved(explainer, moved):
    """The keywords that moved out of ``AnchorExplainer(...)``, put where they went."""
    owner = "AnchorExplainer"
    refuse_unknown(owner, moved, (*_SAMPLER_OPTIONS, *_SCORE_OPTIONS, "cache_size"))
    options = {k: moved[k] for k in _SAMPLER_OPTIONS if k in moved}
    if options:
        from .samplers.tabular import TabularSampler

        move_to_sampler(owner, explainer, options, TabularSampler)
    scoring = {new: moved[old] for old, new in _SCORE_OPTIONS.items() if old in moved}
    if scoring:
        scorer = AnchorScorer(**scoring)
        old = [k for k in _SCORE_OPTIONS if k in moved]
        warn_moved(owner, old, f"GridSearchCV(..., scoring={scorer!r}) (or call that scorer)")
        explainer._scorer = scorer
    if "cache_size" in moved:
        size = check_cache_size(moved["cache_size"], "cache_size")
        warn_moved(owner, ["cache_size"], f"skanchors.set_config(cache_size={size})")
        explainer._own_cache_size = size
