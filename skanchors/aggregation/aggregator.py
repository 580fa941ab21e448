"""GlobalAnchorAggregator: anytime top-k words per class from one-word text anchors.

Implements Mor, Belinkov and Kimelfeld, "Accelerating the global aggregation of local
explanations" (AAAI 2024) on top of the text samplers of :mod:`skanchors.samplers`.

Decisions the paper leaves open
-------------------------------
Anchor test of a token.
    Token ``(w, i)`` of a document ``d`` predicted ``c`` is an anchor when its precision
    ``P[f(z) = c | word i kept]`` under the sampler reaches the threshold ``tau``. As in the
    validation step of :func:`skanchors._search.beam_search`, the test samples until the KL
    confidence bounds (:func:`~skanchors._bounds.kl_lower_bound`,
    :func:`~skanchors._bounds.kl_upper_bound`, level ``beta / n`` with
    ``beta = log(1 / delta)``: every occurrence is its own test, and the aggregation averages
    their errors out) are on one side of ``tau`` up to the authors' tolerance 0.05: anchor
    when the mean is ``>= tau`` and the lower bound ``> tau - 0.05``. A token still undecided
    after ``20 * sample_size`` samples is decided by its mean. (The local search accepts
    within 0.025, because it keeps the widest of many rules that pass and so favours those
    that pass by luck; a token's test chooses nothing, and its errors average out.)
Shared perturbation pool.
    The text samplers mask words independently, so the perturbations of ``D(z)`` in which word
    ``i`` was kept are exact draws of ``D(z | i kept)`` (``exact_reuse``). Each document first
    draws *one* pool of ``ceil(sample_size / keep_proba)`` perturbations with the empty anchor
    (about ``sample_size`` of them keep any given word), predicted in one model call with
    duplicates predicted once -- when the document has more than ``1 / keep_proba`` tokens to
    test, else the pool would cost more than it saves; every candidate token reads its
    precision from the samples that kept it. Only tokens whose bounds have not decided
    anchor / not anchor get more samples: a pool again when the document has more than
    ``1 / keep_proba`` of them (its rows that keep a token are draws of ``D(z | i kept)``),
    else ``sample_size`` rows per token drawn with the token forced kept, whichever predicts
    fewer rows. A round thus costs at most ``2 * sample_size / keep_proba`` rows of a
    document, whatever its length (forced draws for every undecided token of a 100,000-word
    document were a (tokens x 32) x words matrix). The benchmarks' naive test (the private
    ``_shared_pool = False``; the ``shared_pool=False`` keyword until 0.3):
    every token gets its own samples from ``D(z | i kept)``, none reused across tokens, so a
    document costs rows in proportion to its tokens, each as long as the document.
Model calls batched across documents.
    A batch of documents is tested together: round 0 draws the pools (naive: every token's
    first samples) of *all* its documents and predicts them in one model call; every later
    round draws for the undecided tokens of all documents and predicts them in one call. So a
    batch costs about one model call per round (at most ``1 + 20``) instead of one per document
    and round: with a fast model, per-call overhead was most of the time once the optimisations
    had removed most rows. Rows are deduplicated per document (a row repeated within a document
    is predicted once), and identical documents of a batch are tested once, the result counting
    for each copy. With ``n_jobs``, a batch is split into one chunk per worker, each batching
    its own calls.
Untested occurrences.
    Occurrences that are not tested (stop words, rare words, candidate filtering, documents past
    ``max_time``) count neither in ``A+`` nor in ``A-``: ``A-`` holds the occurrences *known* not
    to be anchors. They are kept apart in :attr:`untested_counts_`. Counting them as ``A-`` would
    make candidate filtering self-confirming (a filtered word would sink further) and stop words
    would inflate ``sum_w A-(w, c)``, which rescales every ``G_pr``.
Top terms.
    For ``sq``, ``av``, ``h`` and ``pr`` a word must be an anchor at least once in a class to be
    among its top terms (a word that never anchors the class does not explain it); stop words
    and words with fewer than ``min_count`` occurrences are never ranked. Ties are broken by the
    word, so results do not depend on the order words were met.
Candidate filtering.
    Before each batch, the occurrences of a word in a class are left untested when they cannot
    matter (:mod:`skanchors.aggregation._filtering`). The default (``WordFilter``'s
    ``filtering="auto"``, ``True``, ``"exact"``)
    compares the best final score the word can still reach (every remaining occurrence an
    anchor; the occurrences skipped before count as remaining) with the ``k``-th largest of the
    *lowest* final scores the other words can end with (every remaining occurrence a
    non-anchor), which can only rise: with the same outcome of every test it runs, the top-k is
    that of ``filtering=False`` (the tests are random, and the adaptive threshold
    reads the totals below, so a token near its threshold can come out otherwise). It skips for
    ``sq`` and ``av`` (scores of a word's own counts) and for ``h`` where the entropy range
    allows (a skipped word must not be able to set ``H_min`` or ``H_max``, which every score
    depends on); ``pr`` and ``inverse_pr`` divide by totals that every occurrence enters, so
    nothing is provably irrelevant there and nothing is skipped. The guarantee holds for the
    documents of one call: a later ``partial_fit`` call can bring occurrences of a word skipped
    before. ``"optimistic"`` is the seed's filter: it compares the bound with the *current*
    ``k``-th score, which for ``av``, ``h``, ``pr`` and ``inverse_pr`` can still fall, so a word
    skipped early can belong to the final top-k -- approximate, and cheaper (what each costs:
    :doc:`/performance`). For ``pr`` its bound also assumes that every
    remaining testable occurrence of the other words is *not* an anchor. ``base`` ignores
    anchors, so it tests nothing.
Audit of the filtered occurrences (``G_pr``'s totals).
    ``G_pr`` (and the adaptive threshold) divides by the totals ``sum_w A+(w, c)`` and ``sum_w
    A-(w, c)``, and the words that filtering stops testing are mostly non-anchors: counting only
    tested occurrences shrinks ``sum A-`` far more than ``sum A+`` and so weighs every word's
    ``A-`` more (with the optimistic filter on the movie reviews the ratio of the totals went
    from 0.5 to 0.95, and AOPC@20 lost about 10 % against the unfiltered run, because frequent
    words with many non-anchor occurrences fell out of the top-k). So a random 10 %
    (``_AUDIT_SHARE``) of the occurrences that filtering skips are tested all the same; each
    audited result counts once in the word's counts and ``1 / 0.1`` times in the totals
    (Horvitz-Thompson), which are then unbiased estimates of the totals without filtering
    (:attr:`totals_`). The untested occurrences stay out of ``A+`` and ``A-``.
Adaptive threshold (eq. 11).
    ``tau~(w, c) = max(minimum, tau - omega * r(w, c))`` (:class:`AdaptiveThreshold`, ``tau``
    its ``start``) where
    ``r = clip(n~(w, c) / N_wc, 0, 1)`` and ``n~ = alpha * sum_w' A+(w', c) * q~(w, c) =
    A+(w, c) - (1 - alpha) A-(w, c) sum A+ / sum A-`` is the ``G_pr`` pseudo-score expressed as
    a number of occurrences (those the generative model of eq. 8 attributes to true anchors), so
    that ``r`` is a share of the occurrences of ``w`` and ``tau~`` spans ``[tau - omega, tau]``
    as in the paper (0.55 to 0.95 with the defaults). ``N_wc`` counts the known occurrences of
    ``w`` in documents predicted ``c`` (the seed's ``N_w`` restricted to the class): with all
    classes in the denominator, a frequent word shared by the classes ("film", "movie") could
    never reach a large share and kept the strict threshold while class-specific words got the
    lax one, which pushed such words out of the top-k.
    The seed states the purpose of eq. 11 ("we generate fewer documents to decide whether the
    word is an anchor") and calls it the *confidence* optimisation; how ``tau~`` enters the test
    is left open, so both readings are offered:

    ``"confidence"`` (the default ``mode``)
        A token still needs a mean precision ``>= tau`` to be an anchor, but the evidence asked
        of it is relaxed: it is accepted once its lower bound clears ``tau~ - 0.05`` instead of
        ``tau - 0.05``. A word with a history of anchoring is accepted on fewer samples; what
        counts as an anchor does not move, so the counts (and ``sum A+``) are not inflated.
    ``"precision"``
        ``tau~`` replaces ``tau`` in the test: a token is an anchor when its precision reaches
        ``tau~``. This is the literal reading, and it costs quality as the seed reports: the
        current leaders of a class are counted as anchors more often (their ``A+`` and
        ``sum A+`` grow), and tokens whose precision lies between ``tau~`` and ``tau`` -- about
        decided at ``tau`` -- now sit near the threshold and need more samples. On the
        benchmark's movie reviews it predicted more rows than no adaptive threshold at all
        (:doc:`/performance`).
Batches and determinism.
    Documents are processed in batches of ``batch_size`` in descending model confidence. Every
    decision within a batch (which tokens to test, their thresholds) depends only on the state
    at the start of the batch, and each document's random generator is seeded from its text and
    ``random_state``, so results are identical for any ``n_jobs`` or joblib backend. The state
    is updated only when a batch is complete: an exception (in the model, say) leaves every
    earlier batch counted. ``n_model_calls_`` depends on ``batch_size`` and ``n_jobs`` (calls
    are batched per chunk of documents); the counts and ``n_rows_predicted_`` do not.
``fit`` and ``partial_fit``.
    ``partial_fit(X)`` orders ``X`` and processes it batch by batch, knowing only ``X`` (and the
    documents before it); ``fit(X)`` is ``partial_fit(X)`` from a fresh state. With the options
    that look at other documents switched off (``vocabulary=WordFilter(min_count=1,
    filtering=False)``, ``threshold=AdaptiveThreshold(tau, omega=0)``) every anchor test is a
    function of the document, the token and ``random_state`` alone, so ``partial_fit`` over any
    split of a collection gives exactly the counts of ``fit`` on the whole of it.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import n_workers, row_seed
from .._moved import hide_moved
from .._validation import check_param
from ..samplers.text import tokenize
from ._base import BaseGlobalAggregator, OutOfTime
from ._filtering import exact_worth_testing, optimistic_worth_testing
from ._moved import take_moved
from ._options import AdaptiveThreshold
from ._token_anchors import _MAX_ROUNDS, _test_chunk  # noqa: F401 (_MAX_ROUNDS: re-exported)
from .functions import AGGREGATIONS, aggregate

__all__ = ["GlobalAnchorAggregator"]

# Share of the occurrences skipped by candidate filtering that are tested all the same, chosen
# at random, so that the totals sum_w A+(w, c) and sum_w A-(w, c) in G_pr stay unbiased.
_AUDIT_SHARE = 0.1


class GlobalAnchorAggregator(BaseGlobalAggregator):
    """Anytime global explanation of a text classifier: the top-k words of each class.

    Every token ``(w, i)`` of every document ``d`` is tested as a one-word anchor of the class
    ``c`` the model predicts for ``d``: does the prediction stay ``c`` with probability at least
    ``threshold`` (confidence ``1 - delta``) when the other words are randomly perturbed and
    ``w`` is kept? The counts of anchor and non-anchor occurrences, ``A+(w, c)`` and
    ``A-(w, c)``, are aggregated into a score per word and class, and the ``k`` best words of
    each class are the global explanation (Mor, Belinkov and Kimelfeld, AAAI 2024). The answer is
    *anytime*: after every batch of documents, ``top_terms_`` and ``scores_`` are
    current, so a run can be stopped (``max_time``, ``callback``, an exception) and still answer.
    See the docstring of the module ``skanchors.aggregation.aggregator`` for the decisions
    behind the algorithm; what it shares with :class:`~skanchors.GlobalLimeAggregator` (the
    anytime loop, ``transform``, ``score``) is in
    ``skanchors.aggregation._base.BaseGlobalAggregator``.

    Parameters
    ----------
    estimator : fitted text classifier or callable
        Anything with ``predict_proba`` on a list of str (an sklearn Pipeline,
        :class:`~skanchors.HFTextClassifier`), or a callable returning probabilities. Only
        called, never refitted; classes are the model's *predicted* classes. Refitted in
        place after ``fit``, it is refused by ``partial_fit`` and ``score`` (the counts are
        the old model's): ``fit`` again.
    aggregation : {"pr", "sq", "av", "h", "base", "inverse_pr"}, default="pr"
        Score of a word for a class (:mod:`skanchors.aggregation.functions`): ``G_pr`` (eqs.
        8-10), ``G_sq`` (eq. 4), ``G_av`` (eq. 5; with ``min_count=5`` the seed's ``G_av^+5``),
        ``G_h`` (eq. 6), ``G_base`` (eq. 12, no anchors needed) or ``1 / G_pr`` (a sanity
        baseline that should score worst).
    k : int >= 1, default=20
        Number of top terms per class.
    alpha : float in (0, 1], default=0.5
        ``G_pr``'s probability that an anchor position holds a true anchor word.
    threshold : float in (0, 1] or AdaptiveThreshold, default=0.95
        The paper's tau, the precision a token needs to be an anchor, and how it adapts
        (eq. 11): words that are often anchors of a class get a lower threshold ``tau~``
        (see the module notes). A number ``t`` is ``AdaptiveThreshold(t)``: the
        seed's schedule from ``t`` (``omega=0.4``, ``minimum=0.55``, ``mode="confidence"``: a
        token of such a word needs less evidence to be accepted, but still a mean precision
        ``>= t``). ``AdaptiveThreshold(t, omega=..., minimum=..., mode="precision")`` sets the
        schedule, and ``AdaptiveThreshold(t, omega=0)`` keeps every token at ``t``.
    delta : float in (0, 1), default=0.1
        Risk of each anchor test (``beta = log(1 / delta)``); larger is faster.
    sampler : text sampler or None, default=None
        Perturbation distribution: :class:`~skanchors.samplers.UnkSampler` (default, as for
        :class:`~skanchors.AnchorExplainer`: words become ``"UNK"``; needs no reference data,
        so ``partial_fit`` and ``fit`` perturb alike),
        :class:`~skanchors.samplers.CorpusSampler` or
        :class:`~skanchors.samplers.MaskedLMSampler` (the seed's, ``top_k=50``). An unfitted
        sampler is fitted on the documents of the first ``fit`` / ``partial_fit``; a fitted
        one is used as is.
    sample_size : int >= 1, default=32
        Perturbations per token and sampling round (the pool has ``sample_size / keep_proba``).
        With ``delta=0.1`` a token whose samples all keep the class is decided after 22 of
        them, so about 32 per round decide most tokens in the first round; on the movie
        reviews 100 predicted 2.7 times the rows of 32 for the same AOPC@20 up to noise.
    vocabulary : WordFilter or None, default=None
        Which words are tested and ranked: :class:`WordFilter` (``None``: ``WordFilter()``):
        its ``stop_words`` ("english": scikit-learn's list) and words with fewer than
        ``min_count`` (5) occurrences are neither tested nor ranked, ``lowercase`` (True)
        aggregates ``"Free"`` and ``"free"`` as one word, and ``filtering`` (candidate
        filtering, ``"exact"`` by default) skips the tokens of a word that cannot reach the
        top-k of its class (see the module notes).
    max_documents : int >= 1 or None, default=None
        Process a random sample of at most this many documents (over all calls).
    order : {"confidence", "given", "random"}, default="confidence"
        Processing order of the documents of a call: descending model confidence (the seed's),
        as given, or shuffled with ``random_state``.
    batch_size : int >= 1, default=50
        Documents per anytime step: the state, ``top_terms_``, the checkpoint, ``verbose``
        and ``callback`` are updated after each batch.
    max_time : float > 0 or None, default=None
        Seconds, counted from the start of the call (its first pass over every document
        included). The clock is read after every batch and before every sampling round of a
        batch (one model call): once the time is up, ``fit`` / ``partial_fit`` stops with
        the answer of the batches finished so far (``stopped_early_`` is True), and a call
        returns within about one model call of the limit. The batch the limit falls in is
        not counted: its documents stay in ``unprocessed_indices_``. ``elapsed_time_``
        counts the finished batches only.
    checkpoint : str, path or None, default=None
        File where the state (counts, not the model) is saved after each batch. A new
        aggregator with the same file and parameters (the sampler and ``max_documents``
        included), in this process or a new one, resumes from it: repeat the call that was
        interrupted (the checkpoint holds the calls before it); it plans the same sample and
        order of documents, and batches already counted are skipped. The saved counts are
        kept whatever documents the new call is given; a call that lacks some of the
        interrupted call's saved batches warns (a checkpoint of another corpus). The file is
        data, never a pickle (a zip of ``state.json`` and numpy arrays, see the user guide):
        loading it runs no code, and a file that is not a checkpoint of this aggregator with
        these parameters (another file, an edited or damaged one, a pickled checkpoint of an
        older skanchors) raises ``ValueError`` naming the file and the field.
    callback : callable or None, default=None
        Called as ``callback(aggregator)`` after each batch; returning True stops the run.
    n_jobs : int or None, default=None
        Documents of a batch are tested in parallel with joblib (any backend, e.g. dask through
        ``joblib.parallel_config``). Results do not depend on it.
    random_state : int, RandomState or None, default=None
        Seeds the perturbations (per document, from its text) and the document sampling.
    verbose : int, default=0
        Progress bar (tqdm, when installed) or one line per batch, with the current top words.

    Each token is tested on one perturbation pool per document (see the module notes). The
    AOPC^k that model selection maximises is :func:`aopc_scorer`'s (which removes the top
    terms by deletion or a replacement token). The keyword arguments ``adaptive_threshold``,
    ``omega``, ``min_threshold`` (now ``threshold=AdaptiveThreshold(...)``), ``stop_words``,
    ``min_count``, ``lowercase``, ``candidate_filtering`` (now ``vocabulary=WordFilter(...)``),
    ``removal`` (now :func:`aopc_scorer`'s) and ``shared_pool`` (the naive per-token test, an
    internal for benchmarks) are still accepted, with a ``FutureWarning``, until skanchors 0.3.

    Attributes
    ----------
    classes_ : ndarray
        The model's class labels (columns of the counts and scores).
    top_terms_ : dict
        ``{class: [(word, score), ...]}``, best first, at most ``k`` per class.
    scores_ : pandas.DataFrame
        Score of every word (rows) for every class (columns); NaN where not ranked.
    positive_counts_, negative_counts_, untested_counts_ : pandas.DataFrame
        ``A+``, ``A-`` (eqs. 2-3) and the occurrences not tested, word x class.
    document_counts_ : pandas.DataFrame
        Documents of each class containing each word (for ``G_base``).
    totals_ : pandas.DataFrame
        Rows ``"A+"`` and ``"A-"``: the totals ``sum_w A+(w, c)`` and ``sum_w A-(w, c)`` that
        ``G_pr`` divides by, over every occurrence that would be tested without candidate
        filtering (estimated from the audited ones, see the module notes); the column sums of
        the counts when nothing was filtered.
    n_documents_seen_ : int
    n_tokens_tested_ : int
    n_model_calls_, n_rows_predicted_ : int
        Model calls (about one per sampling round and batch, see the module notes) and
        perturbations predicted (duplicates within a document count once).
    elapsed_time_ : float
        Seconds spent processing, over all calls (and runs resumed from a checkpoint).
    history_ : list of dict
        One entry per batch: documents seen, elapsed time, rows predicted, tokens tested.
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

    Examples
    --------
    >>> import numpy as np
    >>> from skanchors.aggregation import GlobalAnchorAggregator
    >>> def model(texts):  # spam iff "prize" or "cash" is in the message
    ...     p = np.array([float(bool({"prize", "cash"} & set(t.split()))) for t in texts])
    ...     return np.column_stack([1 - p, p])
    >>> docs = ["win a prize today", "cash for you now", "see you at lunch today",
    ...         "lunch now or later", "claim your cash prize"] * 4
    >>> from skanchors.aggregation import WordFilter
    >>> agg = GlobalAnchorAggregator(
    ...     model, k=2, vocabulary=WordFilter(min_count=1), random_state=0
    ... ).fit(docs)
    >>> [w for w, _ in agg.top_terms_[1]]
    ['cash', 'prize']
    >>> agg.n_documents_seen_
    20
    """

    _progress_desc = "global anchors"
    # The test of a token: one perturbation pool per document serves all its tokens; False
    # is the naive per-token test (see the module notes), which only the benchmarks set.
    _shared_pool = True
    # What a checkpoint holds and compares (BaseGlobalAggregator): the parameters that change
    # the counts, the word x class state and the running totals.
    _checkpoint_params = (
        "aggregation",
        "k",
        "alpha",
        "threshold",
        "delta",
        "shared_pool",
        "sample_size",
        "adaptive_threshold",
        "omega",
        "min_threshold",
        "candidate_filtering",
        "stop_words",
        "min_count",
        "lowercase",
        "max_documents",
        "order",
        "batch_size",
        "random_state",
        "sampler",
    )
    _checkpoint_arrays = (
        "_a_pos",
        "_a_neg",
        "_audit_pos",
        "_audit_neg",
        "_skipped",
        "_untested",
        "_occ",
        "_doc_freq",
    )
    _checkpoint_counters = (
        "n_documents_seen_",
        "n_tokens_tested_",
        "n_model_calls_",
        "n_rows_predicted_",
        "elapsed_time_",
    )

    _parameter_constraints: dict = {
        **BaseGlobalAggregator._parameter_constraints,
        "aggregation": [StrOptions(set(AGGREGATIONS))],
        "alpha": [Interval(Real, 0, 1, closed="right")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "threshold": [Interval(Real, 0, 1, closed="right"), AdaptiveThreshold],
        "sampler": [None, HasMethods(["fit", "instance"])],
        "sample_size": [Interval(Integral, 1, None, closed="left")],
    }

    @hide_moved
    def __init__(
        self,
        estimator,
        *,
        aggregation="pr",
        k=20,
        alpha=0.5,
        threshold=0.95,
        delta=0.1,
        sampler=None,
        sample_size=32,
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
        self.alpha = alpha
        self.threshold = threshold
        self.delta = delta
        self.sampler = sampler
        self.sample_size = sample_size
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
    def compute_scores(self, aggregation=None, *, alpha=None):
        """Scores of any aggregation from the current counts (a word x class DataFrame).

        The counts do not depend on the aggregation except through candidate filtering, so a
        run without filtering can be scored by every function.

        Parameters
        ----------
        aggregation : str or None
            Default: the ``aggregation`` parameter.
        alpha : float or None
            Default: the ``alpha`` parameter.

        Returns
        -------
        scores : pandas.DataFrame
        """
        check_is_fitted(self, "classes_")
        self._check_arguments(alpha)
        name = self.aggregation if aggregation is None else aggregation
        return self._frame(self._scores(name, alpha))

    def compute_top_terms(self, aggregation=None, *, k=None, alpha=None):
        """Top terms of any aggregation from the current counts (see :meth:`compute_scores`).

        Returns
        -------
        top_terms : dict
            ``{class: [(word, score), ...]}``, best first.
        """
        check_is_fitted(self, "classes_")
        self._check_arguments(alpha)
        name = self.aggregation if aggregation is None else aggregation
        return self._top(self._scores(name, alpha), name, self.k if k is None else k)

    def _check_arguments(self, alpha):
        """The parameters, and an ``alpha`` given to a method, as ``fit`` checks them."""
        self._validate_params()
        if alpha is not None:
            check_param("alpha", alpha, self._parameter_constraints["alpha"], type(self).__name__)

    # ---------------------------------------------------------------- set-up
    def _check_X(self, X):
        docs = super()._check_X(X)
        self._schedule().check()
        return docs

    def _init_state(self):
        z = np.zeros((0, len(self.classes_)), dtype=np.int64)
        self._a_pos, self._a_neg, self._untested = z.copy(), z.copy(), z.copy()
        self._audit_pos, self._audit_neg = z.copy(), z.copy()  # audited filtered occurrences
        self._skipped = z.copy()  # occurrences candidate filtering left untested (not audited)
        self._occ, self._doc_freq = z.copy(), z.copy()
        self._pending = np.zeros(0, dtype=np.int64)  # known, unprocessed occurrences (all classes)
        self._pending_c = z.copy()  # the same, per predicted class
        self.n_tokens_tested_ = 0

    def _loaded(self):
        self._pending = np.zeros(len(self._words), dtype=np.int64)
        self._pending_c = np.zeros_like(self._a_pos)

    def _grow(self, n):
        pad = np.zeros((n, len(self.classes_)), dtype=np.int64)
        for name in (*self._checkpoint_arrays, "_pending_c"):
            setattr(self, name, np.vstack([getattr(self, name), pad]))
        self._pending = np.concatenate([self._pending, np.zeros(n, dtype=np.int64)])

    # ---------------------------------------------------------------- the loop
    def _prepare(self, docs, targets):
        norm = self._normalizer()
        return [[norm(w) for w, _, _ in tokenize(d)] for d in docs]

    def _start_run(self, tokens, targets):
        """Every token of the call is known (and pending) before the first batch."""
        self._add_words([w for t in tokens for w in t])
        rows = [np.array([self._index[w] for w in t], dtype=np.int64) for t in tokens]
        for r, c in zip(rows, targets.tolist()):
            np.add.at(self._pending, r, 1)
            np.add.at(self._pending_c, (r, c), 1)
        return rows

    def _explain_batch(self, docs, targets, rows, batch):
        return self._process([docs[i] for i in batch], targets[batch], [rows[i] for i in batch])

    def _commit_batch(self, docs, targets, rows, batch, explained):
        results, n_calls = explained
        self._commit(results, n_calls, rows, targets, batch)
        self._retire(rows, targets, batch)

    def _drop(self, targets, rows, indices):
        self._retire(rows, targets, indices)

    def _retire(self, rows, targets, batch):
        for i in batch:
            np.add.at(self._pending, rows[i], -1)
            np.add.at(self._pending_c, (rows[i], int(targets[i])), -1)

    def _n_known(self):
        """N_w: occurrences of each word in the documents known so far (all classes)."""
        return self._occ.sum(axis=1) + self._pending

    def _process(self, docs, targets, rows):
        """Test the tokens of one batch of documents; returns per-document results."""
        n_known = self._n_known()
        eligible = self._eligible(n_known)
        test = np.repeat(eligible[:, None], len(self.classes_), axis=1)
        audit = None
        if self.aggregation == "base":
            test[:] = False
        elif self._filter_mode() is not None:
            worth = self._worth_testing(eligible)
            audit = test & ~worth
            test &= worth
        tau = np.full(test.shape, float(self._schedule().start))
        low = tau  # the level the lower bound must clear to accept a token
        mode = self._adaptive_mode()
        if mode is not None:
            low = self._adaptive_tau(n_known)
            if mode == "precision":
                tau = low
        # Identical documents (same text: same class, tokens, thresholds and seed) are tested
        # once; the result counts for each copy.
        items, audits, first, slot = [], [], {}, []
        for doc, c, r in zip(docs, targets.tolist(), rows):
            if doc in first:
                slot.append((first[doc], False))
                continue
            first[doc] = len(items)
            slot.append((len(items), True))
            seed = row_seed(self._seed_base, doc)
            positions = np.flatnonzero(test[r, c]) if len(r) else np.zeros(0, dtype=np.int64)
            audited = np.zeros(len(positions), dtype=bool)
            skipped = np.flatnonzero(audit[r, c]) if audit is not None and len(r) else ()
            if len(skipped):
                # One draw per position (its own generator): whether a filtered occurrence is
                # audited depends only on the document, the position and random_state.
                draw = np.random.default_rng([seed, 0xA0D17]).random(len(r))
                extra = skipped[draw[skipped] < _AUDIT_SHARE]
                positions = np.union1d(positions, extra)
                audited = np.isin(positions, extra)
                skipped = np.setdiff1d(skipped, extra)
            audits.append((audited, np.asarray(skipped, dtype=np.int64)))
            items.append(
                (
                    doc,
                    c,
                    seed,
                    positions,
                    tau[r[positions], c] if len(r) else positions,
                    low[r[positions], c] if len(r) else positions,
                )
            )
        params = dict(
            delta=self.delta,
            sample_size=self.sample_size,
            shared_pool=self._shared_pool,
        )
        n_jobs = self.n_jobs
        left = self._time_left()
        if n_jobs is None or n_jobs == 1 or len(items) == 1:
            results, n_calls = _test_chunk(self.sampler_, self.model_, items, params, left)
            if results is None:
                raise OutOfTime
        else:
            # One chunk per worker: each chunk batches the model calls of its documents.
            workers = n_workers(n_jobs, len(items))
            chunks = np.array_split(np.arange(len(items)), workers)
            out = Parallel(n_jobs=workers)(
                delayed(_test_chunk)(
                    self.sampler_, self.model_, [items[i] for i in ch], params, left
                )
                for ch in chunks
                if len(ch)
            )
            if any(chunk is None for chunk, _ in out):
                raise OutOfTime
            results = [r for chunk, _ in out for r in chunk]
            n_calls = sum(c for _, c in out)
        return [
            (*results[j][:2], results[j][2] if new else 0, *audits[j]) for j, new in slot
        ], n_calls

    def _commit(self, results, n_calls, rows, targets, batch):
        for (positions, anchor, n_rows, audited, skipped), i in zip(results, batch):
            r, c = rows[i], int(targets[i])
            np.add.at(self._occ, (r, c), 1)
            if len(r):
                self._doc_freq[np.unique(r), c] += 1
            tested = np.zeros(len(r), dtype=bool)
            tested[positions] = True
            np.add.at(self._a_pos, (r[positions[anchor]], c), 1)
            np.add.at(self._a_neg, (r[positions[~anchor]], c), 1)
            np.add.at(self._audit_pos, (r[positions[audited & anchor]], c), 1)
            np.add.at(self._audit_neg, (r[positions[audited & ~anchor]], c), 1)
            np.add.at(self._skipped, (r[skipped], c), 1)
            np.add.at(self._untested, (r[~tested], c), 1)
            self.n_tokens_tested_ += len(positions)
            self.n_rows_predicted_ += n_rows
        self.n_documents_seen_ += len(batch)
        self.n_model_calls_ += n_calls

    # ---------------------------------------------------------------- optimisations
    def _ranked(self, scores, name):
        ok = ~np.isnan(scores)
        if name in ("pr", "sq", "av", "h"):
            ok &= self._a_pos > 0
        elif name == "base":
            ok &= self._doc_freq > 0  # a word no document of the class holds says nothing of it
        return ok

    def _filter_mode(self):
        """``None`` (no candidate filtering), ``"exact"`` or ``"optimistic"``."""
        mode = self._word_filter().filtering
        if isinstance(mode, str):
            return "exact" if mode == "auto" else mode
        return "exact" if mode else None  # a bool, numpy's included

    def _worth_testing(self, eligible):
        """Candidate filtering: can the word still reach the top-k of its class? (see
        :mod:`skanchors.aggregation._filtering`)."""
        name = self.aggregation
        exact = self._filter_mode() == "exact"
        if exact and name in ("pr", "inverse_pr"):  # (nothing is provable: see there)
            return np.ones(self._a_pos.shape, dtype=bool)
        pending = self._pending_c * eligible[:, None]  # what a run without filtering tests
        scores = self._scores(name)
        ranked = self._ranked(scores, name)
        if exact:
            return exact_worth_testing(
                name, self._a_pos, self._a_neg, pending + self._skipped, ranked, self.k
            )
        # Remaining testable occurrences of the other words of each class.
        others = pending.sum(axis=0, keepdims=True) - pending
        return optimistic_worth_testing(
            name,
            self._a_pos,
            self._a_neg,
            pending,
            others,
            scores,
            ranked,
            self._totals(),
            self.k,
            self.alpha,
        )

    def _validate_params(self):
        super()._validate_params()
        self._schedule().check()

    def _schedule(self):
        """The :class:`AdaptiveThreshold` in force (a number ``t`` is ``AdaptiveThreshold(t)``)."""
        if isinstance(self.threshold, AdaptiveThreshold):
            return self.threshold
        return AdaptiveThreshold(self.threshold)

    def _described_params(self):
        """The parameters as a checkpoint describes them, in the terms of the flat keywords
        they replaced (a checkpoint written before the parameter objects still resumes)."""
        params = super()._described_params()
        schedule = self._schedule()
        adaptive = {None: False, "confidence": True}.get(self._adaptive_mode(), "precision")
        filtering = self._word_filter().filtering
        if isinstance(filtering, str) and filtering == "auto":
            filtering = True
        params.update(
            threshold=schedule.start,
            adaptive_threshold=adaptive,
            omega=schedule.omega,
            min_threshold=schedule.minimum,
            candidate_filtering=filtering,
            shared_pool=self._shared_pool,
        )
        return params

    def _adaptive_mode(self):
        """``None`` (no eq. 11), ``"confidence"`` or ``"precision"``."""
        schedule = self._schedule()
        return None if schedule.omega == 0 else schedule.mode

    def _adaptive_tau(self, n_known):
        """Eq. 11 with the G_pr pseudo-score as a count of true-anchor occurrences."""
        a_pos = self._a_pos.astype(float)
        a_neg = self._a_neg.astype(float)
        sp, sn = (t[None, :] for t in self._totals())
        noise = np.where(sn > 0, a_neg * sp / np.where(sn > 0, sn, 1), 0.0)
        n_true = a_pos - (1 - self.alpha) * noise
        # N_w of the class: the word's known occurrences in documents predicted c.
        n_class = self._occ + self._pending_c
        share = np.clip(n_true / np.maximum(n_class, 1), 0.0, 1.0)
        schedule = self._schedule()
        return np.maximum(schedule.minimum, schedule.start - schedule.omega * share)

    # ---------------------------------------------------------------- scores
    def _totals(self):
        """``sum_w A+(w, c)`` and ``sum_w A-(w, c)`` over every occurrence that would be tested
        without candidate filtering (Horvitz-Thompson: an audited occurrence stands for
        ``1 / _AUDIT_SHARE`` filtered ones)."""
        extra = 1.0 / _AUDIT_SHARE - 1.0
        return (
            self._a_pos.sum(axis=0) + extra * self._audit_pos.sum(axis=0),
            self._a_neg.sum(axis=0) + extra * self._audit_neg.sum(axis=0),
        )

    def _publish(self):
        import pandas as pd

        super()._publish()
        self.totals_ = pd.DataFrame(
            np.vstack(self._totals()),
            index=pd.Index(["A+", "A-"], name="count"),
            columns=self.classes_,
        )

    def _scores(self, name, alpha=None):
        scores = aggregate(
            name,
            self._a_pos,
            self._a_neg,
            self._doc_freq,
            alpha=self.alpha if alpha is None else alpha,
            n_occurrences=self._n_known(),
            min_count=self._word_filter().min_count,
            totals=self._totals(),
        )
        if self._stops and len(self._words):
            scores[self._stop_mask()] = np.nan
        return scores

    def _count_tables(self):
        return (
            ("positive_counts_", self._a_pos),
            ("negative_counts_", self._a_neg),
            ("untested_counts_", self._untested),
            ("document_counts_", self._doc_freq),
        )

    def _history_entry(self):
        return dict(super()._history_entry(), n_tokens_tested=self.n_tokens_tested_)
