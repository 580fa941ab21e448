"""GlobalLimeAggregator: anytime top-k words per class from LIME weights.

The LIME counterpart of :class:`~skanchors.GlobalAnchorAggregator`: every document
is explained by :class:`~skanchors.LimeExplainer` for the class the model predicts, and the
weights are aggregated into a global score per word and class with the aggregations of van der
Linden, Haned and Kanoulas (2019) (:mod:`~skanchors.aggregation.lime_functions`). The top terms
are scored by the same AOPC^k (:func:`skanchors.metrics.aopc_k`), so LIME-based and
anchor-based global terms of one model can be compared on the same documents.

Decisions the papers leave open
-------------------------------
Weight of a word in a document.
    LIME's interpretable features are word *positions*; a word's weight in a document is the
    sum over its positions (as :meth:`LimeExplainer.transform
    <skanchors.LimeExplainer.transform>`), 0 where K-Lasso did not select it. With the
    word filter's ``lowercase`` the positions of ``"Free"`` and ``"free"`` are summed into one word.
Which class is explained.
    Each document is explained for its predicted class ``c`` and counts only in ``c``
    (``S[c]``, as the anchor aggregator and AOPC^k). For two classes the weights for the other
    class are the same with the opposite sign, so nothing is lost.
Top terms support the class.
    A word is ranked for ``c`` only when its summed weight over ``S[c]`` is positive
    (``sum_d w_{d,j} > 0``): SP-LIME's ``sqrt`` sums *absolute* weights, so without this a word
    that consistently pushes *away* from ``c`` (e.g. a ham word inside a spam message) could be
    a top term of ``c``. The same rule holds for every aggregation (it is implied by a positive
    ``average``), the analogue of "an anchor at least once" in the anchor aggregator.
Filters.
    Every word position is a LIME feature (stop words included: removing them is part of the
    perturbation); stop words and words with fewer than ``min_count`` occurrences in the
    documents seen are never ranked, and ``"homogeneity"`` takes its entropy range over the
    ranked words only, so stop words do not set ``H_max``.
Batches, ``fit`` and ``partial_fit``.
    Documents are processed in batches of ``batch_size`` in descending model confidence;
    ``top_terms_`` is current after each batch. Each document's perturbations are seeded
    from its text and ``random_state``, and its weights depend on nothing else, so results are
    identical for any ``n_jobs``, and ``partial_fit`` over any split of a collection gives
    the sums of ``fit`` on the whole of it, the same weights added in another order (so equal
    up to the last bit of a float; the counts exactly), when the sampler needs no reference
    data, as the default :class:`~skanchors.samplers.UnkSampler`. The sums are updated only
    when a batch is complete: an exception, Ctrl-C included, leaves every earlier batch
    counted and no later one.
Cost.
    LIME costs ``n_samples + 1`` model rows per document, whatever the aggregation; all
    aggregations can be read from one run (:meth:`GlobalLimeAggregator.compute_top_terms`).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import n_workers
from .._moved import hide_moved
from ..lime import LimeExplainer
from ..samplers.text import tokenize
from ._base import BaseGlobalAggregator, OutOfTime
from ._moved import take_moved
from .lime_functions import LIME_AGGREGATIONS, aggregate_lime

__all__ = ["GlobalLimeAggregator"]


class GlobalLimeAggregator(BaseGlobalAggregator):
    r"""Anytime global explanation of a text classifier from LIME: the top-k words per class.

    Every document ``d`` is explained by LIME (:class:`~skanchors.LimeExplainer`, K-Lasso on
    ``n_samples`` perturbations) for the class ``c`` the model predicts; with ``w_{d,j}`` the
    weight of word ``j`` in ``d`` and ``S[c]`` the documents predicted ``c``, the weights are
    aggregated with one of the global aggregations of van der Linden, Haned and Kanoulas
    (2019):

    - ``"sqrt"`` (SP-LIME's global importance, Ribeiro et al. 2016):
      :math:`I_j^c = \sqrt{\sum_{d \in S[c]} |w_{d,j}|}`;
    - ``"average"`` (global average importance, signed):
      :math:`A_j^c = \frac{1}{|\{d \in S[c]: j \in d\}|} \sum_{d \in S[c]} w_{d,j}`;
    - ``"homogeneity"`` (homogeneity-weighted importance):
      :math:`p_j^c = I_j^c / \sum_{c'} I_j^{c'}`, :math:`H_j = -\sum_c p_j^c \log p_j^c`,
      :math:`H_j^c = \left(1 - \frac{H_j - H_{\min}}{H_{\max} - H_{\min}}\right) I_j^c`
      (the min and max over the words not filtered out as stop words or rare).

    The ``k`` best words of each class with :math:`\sum_{d \in S[c]} w_{d,j} > 0` (words that
    push towards ``c``) are ``top_terms_``. The answer is *anytime*: it is current after
    every batch, so a run can be stopped (``max_time``, ``callback``, an exception). See
    the docstring of the module ``skanchors.aggregation.lime_aggregator`` for the decisions
    behind it; what it shares with :class:`~skanchors.GlobalAnchorAggregator` (the anytime loop,
    ``transform``, ``score``) is in ``skanchors.aggregation._base.BaseGlobalAggregator``.

    Parameters
    ----------
    estimator : fitted text classifier or callable
        Anything with ``predict_proba`` on a list of str, or a callable returning
        probabilities. Only called, never refitted; classes are the model's *predicted* ones.
        Refitted in place after ``fit``, it is refused by ``partial_fit`` and ``score``:
        ``fit`` again.
    aggregation : {"sqrt", "average", "homogeneity"}, default="sqrt"
        Score of a word for a class (:mod:`skanchors.aggregation.lime_functions`).
    k : int >= 1, default=20
        Number of top terms per class.
    n_samples : int >= 1, default=1000
        LIME perturbations per document (the LIME package uses 5000; 1000 is much faster and
        ranks the few words of a short document as well).
    n_features : int >= 1, default=10
        LIME's K: at most this many words of a document get a nonzero weight.
    feature_selection : str, default="auto"
        K-Lasso's feature selection: ``"auto"``, ``"lasso_path"``, ``"forward_selection"``,
        ``"highest_weights"`` or ``"none"`` (see :class:`~skanchors.LimeExplainer`).
    kernel_width : float > 0 or None, default=None
        LIME's kernel width; ``None`` is 25 on the cosine distance times 100.
    sampler : text sampler or None, default=None
        Perturbation distribution, as for the anchor aggregator:
        :class:`~skanchors.samplers.UnkSampler` (default: words become ``"UNK"``),
        :class:`~skanchors.samplers.CorpusSampler` or
        :class:`~skanchors.samplers.MaskedLMSampler`. An unfitted sampler is fitted on the
        documents of the first ``fit`` / ``partial_fit``; a fitted one is used as is.
    vocabulary : WordFilter or None, default=None
        Which words are ranked: :class:`~skanchors.aggregation.WordFilter` (``None``:
        ``WordFilter()``): its ``stop_words`` ("english": scikit-learn's list, compared
        lowercased) and words with fewer than ``min_count`` (5) occurrences in the documents
        seen are not ranked, and ``lowercase`` (True) aggregates ``"Free"`` and ``"free"`` as
        one word. Its ``filtering`` (candidate filtering) is the anchor aggregator's: LIME
        explains every document whole, so it must stay ``"auto"`` here.
    max_documents : int >= 1 or None, default=None
        Explain a random sample of at most this many documents (over all calls).
    order : {"confidence", "given", "random"}, default="confidence"
        Processing order of the documents of a call.
    batch_size : int >= 1, default=50
        Documents per anytime step (state, ``verbose`` and ``callback`` after each).
    max_time : float > 0 or None, default=None
        Seconds, counted from the start of the call (its first pass over every document
        included). The clock is read after every batch and between the documents of a batch
        (with ``n_jobs``, between groups of one document per worker): once the time is up,
        ``fit`` / ``partial_fit`` stops with the answer of the batches finished so far
        (``stopped_early_`` is True), and a call returns within about one document's
        explanation of the limit. The batch the limit falls in is not counted: its documents
        stay in ``unprocessed_indices_``. ``elapsed_time_`` counts the finished batches only.
    checkpoint : str, path or None, default=None
        File where the state (the weight sums, not the model) is saved after each batch. A
        new aggregator with the same file and parameters (those that change the sums: the
        LIME settings, the sampler, ``lowercase``, ``max_documents``, ``order``,
        ``batch_size``, ``random_state``), in this process or a new one, resumes from it:
        repeat the call that was interrupted (the checkpoint holds the calls before it); it
        plans the same sample and order of documents, and batches already counted are
        skipped. A call that lacks some of the interrupted call's saved batches warns. The
        file is data, never a pickle (as :class:`~skanchors.GlobalAnchorAggregator`'s):
        loading it runs no code, and anything but a checkpoint of this aggregator with these
        parameters raises ``ValueError`` naming the file and the field.
    callback : callable or None, default=None
        Called as ``callback(aggregator)`` after each batch; returning True stops the run.
    n_jobs : int or None, default=None
        Documents of a batch are explained in parallel with joblib; results do not depend on it.
    random_state : int, RandomState or None, default=None
        Seeds the perturbations (per document, from its text) and the document sampling.
    verbose : int, default=0
        Progress bar (tqdm, when installed) or one line per batch, with the current top words.

    The AOPC^k that model selection maximises is :func:`aopc_scorer`'s (which removes the
    top terms by deletion or a replacement token). The keyword arguments ``stop_words``,
    ``min_count``, ``lowercase`` (now ``vocabulary=WordFilter(...)``) and ``removal`` (now
    :func:`aopc_scorer`'s) are still accepted, with a ``FutureWarning``, until skanchors 0.3.

    Attributes
    ----------
    classes_ : ndarray
    top_terms_ : dict
        ``{class: [(word, score), ...]}``, best first, at most ``k`` per class.
    scores_ : pandas.DataFrame
        Score of every word (rows) for every class (columns); NaN where the word is filtered
        out or in no document of the class (a word with a score may still not be ranked: its
        summed weight must be positive).
    weight_sums_, abs_weight_sums_ : pandas.DataFrame
        ``sum_{d in S[c]} w_{d,j}`` and ``sum_{d in S[c]} |w_{d,j}|``, word x class.
    document_counts_ : pandas.DataFrame
        Documents of each class containing each word.
    selected_counts_ : pandas.DataFrame
        Documents of each class in which LIME gave the word a nonzero weight.
    occurrence_counts_ : pandas.Series
        Occurrences of each word in the documents seen (for ``min_count``).
    mean_local_fidelity_ : float
        Mean weighted R^2 of the local surrogates (NaN before any document with words).
    n_documents_seen_ : int
        Documents processed (those without any word count, with no weights).
    n_model_calls_, n_rows_predicted_ : int
        Model calls and rows predicted by LIME (the ordering by confidence is not counted).
    elapsed_time_ : float
        Seconds spent explaining and aggregating, over all calls.
    history_ : list of dict
        One entry per batch: documents seen, elapsed time, rows predicted.
    stopped_early_ : bool
        The last call stopped before its last batch (``max_time`` or ``callback``) or was
        interrupted.
    unprocessed_indices_ : ndarray of int
        Positions in the last call's ``X`` of the documents it did not process (ascending):
        empty after a complete call; after ``max_time``, ``callback`` or an exception, pass
        ``[X[i] for i in unprocessed_indices_]`` to :meth:`partial_fit` to count each
        document once.
    model_ : ProbabilityModel
    sampler_ : fitted sampler
    explainer_ : LimeExplainer
        The fitted explainer, e.g. to look at one document: ``explainer_.explain([doc])``.

    See Also
    --------
    GlobalAnchorAggregator : the same question answered with one-word anchors.
    skanchors.LimeExplainer : the local explanations aggregated here.

    Examples
    --------
    >>> import numpy as np
    >>> from skanchors.aggregation.lime_aggregator import GlobalLimeAggregator
    >>> def model(texts):  # spam iff "prize" or "cash" is in the message
    ...     p = np.array([0.9 if {"prize", "cash"} & set(t.split()) else 0.1 for t in texts])
    ...     return np.column_stack([1 - p, p])
    >>> docs = ["win a prize today", "cash for you now", "see you at lunch today",
    ...         "lunch now or later", "claim your cash prize"] * 4
    >>> from skanchors.aggregation import WordFilter
    >>> agg = GlobalLimeAggregator(model, k=2, n_samples=200, vocabulary=WordFilter(min_count=1),
    ...                            random_state=0).fit(docs)
    >>> sorted(w for w, _ in agg.top_terms_[1])
    ['cash', 'prize']
    >>> agg.n_documents_seen_
    20
    """

    _progress_desc = "global LIME"
    # What a checkpoint holds and compares (BaseGlobalAggregator): the parameters that change
    # the sums (not the aggregation, the filters or k, read from them afterwards), the word x
    # class sums and the running totals.
    _checkpoint_params = (
        "n_samples",
        "n_features",
        "feature_selection",
        "kernel_width",
        "sampler",
        "lowercase",
        "max_documents",
        "order",
        "batch_size",
        "random_state",
    )
    _checkpoint_arrays = ("_ws", "_abs", "_dc", "_sel", "_occ")
    _checkpoint_signed = ("_ws",)  # the signed weight sums; the others are >= 0
    _checkpoint_counters = (
        "n_documents_seen_",
        "n_model_calls_",
        "n_rows_predicted_",
        "elapsed_time_",
        "_r2_sum",
        "_n_explained",
    )

    _parameter_constraints: dict = {
        **BaseGlobalAggregator._parameter_constraints,
        "aggregation": [StrOptions(set(LIME_AGGREGATIONS))],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "feature_selection": [
            StrOptions({"auto", "lasso_path", "forward_selection", "highest_weights", "none"})
        ],
        "kernel_width": [Interval(Real, 0, None, closed="neither"), None],
        "sampler": [None, HasMethods(["fit", "instance", "split"])],
    }

    @hide_moved
    def __init__(
        self,
        estimator,
        *,
        aggregation="sqrt",
        k=20,
        n_samples=1000,
        n_features=10,
        feature_selection="auto",
        kernel_width=None,
        sampler=None,
        vocabulary=None,
        max_documents=None,
        order="confidence",
        batch_size=50,
        max_time=None,
        checkpoint=None,
        callback=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
        **moved,
    ):
        self.estimator = estimator
        self.aggregation = aggregation
        self.k = k
        self.n_samples = n_samples
        self.n_features = n_features
        self.feature_selection = feature_selection
        self.kernel_width = kernel_width
        self.sampler = sampler
        self.vocabulary = vocabulary
        self.max_documents = max_documents
        self.order = order
        self.batch_size = batch_size
        self.max_time = max_time
        self.checkpoint = checkpoint
        self.callback = callback
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        if moved:
            take_moved(self, moved)

    # ---------------------------------------------------------------- public API
    def compute_scores(self, aggregation=None):
        """Scores of any LIME aggregation from the current sums (a word x class DataFrame).

        The LIME weights do not depend on the aggregation, so one run serves all of them.

        Parameters
        ----------
        aggregation : {"sqrt", "average", "homogeneity"} or None
            Default: the ``aggregation`` parameter.

        Returns
        -------
        scores : pandas.DataFrame
        """
        check_is_fitted(self, "classes_")
        name = self.aggregation if aggregation is None else aggregation
        return self._frame(self._scores(name))

    def compute_top_terms(self, aggregation=None, *, k=None):
        """Top terms of any LIME aggregation from the current sums.

        Returns
        -------
        top_terms : dict
            ``{class: [(word, score), ...]}``, best first.
        """
        check_is_fitted(self, "classes_")
        name = self.aggregation if aggregation is None else aggregation
        return self._top(self._scores(name), name, self.k if k is None else k)

    # ---------------------------------------------------------------- set-up
    def _init_state(self):
        explainer = LimeExplainer(
            self.estimator,
            n_samples=self.n_samples,
            n_features=self.n_features,
            feature_selection=self.feature_selection,
            kernel_width=self.kernel_width,
            sampler=self.sampler_,
            n_jobs=self.n_jobs,
            random_state=self._seed_base,
        )
        # Fitted by hand: LimeExplainer.fit would clone and refit the (possibly loaded) sampler.
        explainer.model_ = self.model_
        explainer.sampler_ = self.sampler_
        explainer.classes_ = self.classes_
        self.explainer_ = explainer
        z = np.zeros((0, len(self.classes_)))
        self._ws, self._abs = z.copy(), z.copy()
        self._dc, self._sel = z.astype(np.int64), z.astype(np.int64)
        self._occ = np.zeros(0, dtype=np.int64)
        self._r2_sum = 0.0
        self._n_explained = 0

    def _loaded(self):
        # the checkpoint's seed (set after _init_state made the explainer): the rest of the
        # documents are explained with the interrupted run's random streams
        self.explainer_.random_state = self._seed_base

    def _grow(self, n):
        pad = np.zeros((n, len(self.classes_)))
        self._ws = np.vstack([self._ws, pad])
        self._abs = np.vstack([self._abs, pad])
        self._dc = np.vstack([self._dc, pad.astype(np.int64)])
        self._sel = np.vstack([self._sel, pad.astype(np.int64)])
        self._occ = np.concatenate([self._occ, np.zeros(n, dtype=np.int64)])

    # ---------------------------------------------------------------- the loop
    def _check_X(self, X):
        docs = super()._check_X(X)
        filtering = self._word_filter().filtering
        if not (isinstance(filtering, str) and filtering == "auto"):
            raise ValueError(
                f"vocabulary=WordFilter(filtering={filtering!r}): candidate filtering skips the "
                "anchor tests of words that cannot reach the top-k, and GlobalLimeAggregator "
                "explains every document whole: leave filtering='auto'."
            )
        return docs

    def _prepare(self, docs, targets):
        # LIME's parameters as they are now: set_params after the first call counts
        names = ("n_samples", "n_features", "feature_selection", "kernel_width", "n_jobs")
        self.explainer_.set_params(**{name: getattr(self, name) for name in names})

    def _explain_batch(self, docs, targets, prepared, indices):
        batch, y = [docs[i] for i in indices], targets[indices]
        norm = self._normalizer()
        tokens = [[norm(w) for w, _, _ in tokenize(d)] for d in batch]
        # A document without words has nothing to explain: seen, but no weights.
        worded = [i for i, t in enumerate(tokens) if t]
        found = []
        # With max_time, a few documents at a time (one per worker), the clock read between
        # them; each document's explanation depends on its text only, not on its company.
        step = len(worded) if self.max_time is None else n_workers(self.n_jobs, len(worded))
        for lo in range(0, len(worded), max(step, 1)):
            left = self._time_left()
            if left is not None and left <= 0:
                raise OutOfTime
            part = worded[lo : lo + step]
            found += self.explainer_.explain([batch[i] for i in part], self.classes_[y[part]])
        explanations = [None] * len(batch)
        for i, e in zip(worded, found):
            explanations[i] = e
        return tokens, explanations

    def _commit_batch(self, docs, targets, prepared, indices, explained):
        tokens, explanations = explained
        self._commit(tokens, targets[indices], explanations)

    def _commit(self, tokens, targets, explanations):
        """Add one finished batch to the sums (all or nothing)."""
        norm = self._normalizer()
        self._add_words([w for t in tokens for w in t])
        for words, c, e in zip(tokens, targets.tolist(), explanations):
            self.n_documents_seen_ += 1
            if e is None:
                continue
            rows = np.array([self._index[w] for w in words], dtype=np.int64)
            np.add.at(self._occ, rows, 1)
            self._dc[np.unique(rows), c] += 1
            per_word = {}
            for j in e.selected:
                word = norm(e.features[j][0].value)
                per_word[word] = per_word.get(word, 0.0) + float(e.weights[j])
            for word, w in per_word.items():
                r = self._index[word]
                self._ws[r, c] += w
                self._abs[r, c] += abs(w)
                self._sel[r, c] += w != 0
            self._r2_sum += float(e.score)
            self.n_rows_predicted_ += int(e.n_rows_predicted)
            self.n_model_calls_ += int(e.n_model_calls)
        self._n_explained += sum(e is not None for e in explanations)

    # ---------------------------------------------------------------- scores
    def _scores(self, name):
        if name not in LIME_AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {list(LIME_AGGREGATIONS)}, got {name!r}.")
        return aggregate_lime(
            name,
            self._ws,
            self._abs,
            self._dc,
            n_occurrences=self._occ,
            mask=self._eligible(self._occ),
        )

    def _ranked(self, scores, name):
        return ~np.isnan(scores) & (self._ws > 0)

    def _count_tables(self):
        return (
            ("weight_sums_", self._ws),
            ("abs_weight_sums_", self._abs),
            ("document_counts_", self._dc),
            ("selected_counts_", self._sel),
        )

    def _publish(self):
        import pandas as pd

        super()._publish()
        index = pd.Index(self._words, name="word")
        self.occurrence_counts_ = pd.Series(self._occ.copy(), index=index, name="occurrences")
        n = self._n_explained
        self.mean_local_fidelity_ = self._r2_sum / n if n else float("nan")
