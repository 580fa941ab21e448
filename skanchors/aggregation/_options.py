"""The options of the global aggregators that are one concept each, as parameter objects.

:class:`WordFilter` says which words are tested and ranked (stop words, rare words, case,
candidate filtering), :class:`AdaptiveThreshold` how the anchor threshold adapts to a word's
history (Mor et al. 2024, eq. 11), and :func:`aopc_scorer` how the top terms are scored in model
selection. They are scikit-learn style objects: ``get_params`` / ``set_params``, so a grid
search tunes ``vocabulary__min_count`` or ``threshold__omega``, and clones copy them.
"""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._documents import check_documents
from .._validation import check_params

__all__ = ["AdaptiveThreshold", "AopcScorer", "WordFilter", "aopc_scorer"]


class WordFilter(BaseEstimator):
    """Which words a global aggregator tests and ranks.

    Pass it as ``vocabulary=WordFilter(...)`` to
    :class:`~skanchors.GlobalAnchorAggregator` or :class:`~skanchors.GlobalLimeAggregator`
    (``None`` there means ``WordFilter()``).

    Parameters
    ----------
    stop_words : "english", collection of str or None, default="english"
        Words never tested nor ranked (compared lowercased); "english" is scikit-learn's list,
        which also holds some content words ("call", "bill", "find", "fire", "system"): on SMS
        spam, "call" is the top spam word without it. Pass your own list, or None.
    min_count : int >= 1, default=5
        Words with fewer occurrences in the documents known so far are neither tested nor
        ranked (rare-word filter); with 5, ``G_av`` is the seed's ``G_av^+5``.
    lowercase : bool, default=True
        Aggregate ``"Free"`` and ``"free"`` as one word (each occurrence is tested as it is).
    filtering : "auto", bool or {"exact", "optimistic"}, default="auto"
        Candidate filtering, :class:`~skanchors.GlobalAnchorAggregator` only: skip the tokens
        of a word that cannot reach the top-k of its class. ``True`` or ``"exact"``: only
        words that cannot reach the final top-k whatever the remaining tests say, so the top-k
        is that of ``False`` (for ``pr`` and ``inverse_pr`` nothing can be proven and nothing
        is skipped). ``"optimistic"``: the seed's approximate filter, against the current
        top-k, which can still change; it skips more, but a word it skips may belong to the
        final top-k. ``"auto"``: ``"exact"`` for the anchor aggregator; the LIME aggregator
        explains every document whole and filters nothing, and refuses another value.

    Examples
    --------
    >>> from skanchors.aggregation import WordFilter
    >>> WordFilter(stop_words=None, min_count=2)
    WordFilter(min_count=2, stop_words=None)
    """

    _parameter_constraints: dict = {
        "stop_words": [StrOptions({"english"}), "array-like", set, frozenset, None],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "lowercase": ["boolean"],
        "filtering": ["boolean", StrOptions({"auto", "exact", "optimistic"})],
    }

    def __init__(self, *, stop_words="english", min_count=5, lowercase=True, filtering="auto"):
        self.stop_words = stop_words
        self.min_count = min_count
        self.lowercase = lowercase
        self.filtering = filtering

    def stop_set(self):
        """The stop words, lowercased, as a frozenset."""
        check_params(self)
        if self.stop_words is None:
            return frozenset()
        if isinstance(self.stop_words, str):
            from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

            return frozenset(ENGLISH_STOP_WORDS)
        words = list(self.stop_words)
        bad = [w for w in words if not isinstance(w, str)]
        if bad:
            raise TypeError(f"stop_words must be str, got {bad[:3]!r}.")
        return frozenset(w.lower() for w in words)


class AdaptiveThreshold(BaseEstimator):
    """The anchor threshold of :class:`~skanchors.GlobalAnchorAggregator`, lowered for words
    that are often anchors of a class (Mor, Belinkov and Kimelfeld 2024, eq. 11).

    ``tau~(w, c) = max(minimum, start - omega * r(w, c))``, where ``r(w, c)`` in [0, 1] is the
    share of the occurrences of ``w`` in documents predicted ``c`` that the ``G_pr`` model
    attributes to true anchors (see the module ``skanchors.aggregation.aggregator``). Pass it
    as ``threshold=AdaptiveThreshold(...)``; a number ``t`` as ``threshold`` is
    ``AdaptiveThreshold(t)``.

    Parameters
    ----------
    start : float in (0, 1], default=0.95
        The paper's tau: the precision a token needs to be an anchor, for a word with no
        history of anchoring.
    omega : float >= 0, default=0.4
        How far the threshold moves for a word that always anchors; 0 keeps every token at
        ``start`` (the test without eq. 11).
    minimum : float in (0, 1], default=0.55
        The threshold never goes below this; at most ``start``.
    mode : {"confidence", "precision"}, default="confidence"
        How ``tau~`` enters the test. ``"confidence"``: a token of such a word needs less
        evidence to be accepted (its lower bound must clear ``tau~ - 0.05``), but still a mean
        precision ``>= start``. ``"precision"``: the token is an anchor when its precision
        reaches ``tau~`` (the seed's literal reading; faster to accept, lossier).

    Examples
    --------
    >>> from skanchors.aggregation import AdaptiveThreshold
    >>> AdaptiveThreshold(0.9, omega=0.3)
    AdaptiveThreshold(omega=0.3, start=0.9)
    """

    _parameter_constraints: dict = {
        "start": [Interval(Real, 0, 1, closed="right")],
        "omega": [Interval(Real, 0, None, closed="left")],
        "minimum": [Interval(Real, 0, 1, closed="right")],
        "mode": [StrOptions({"confidence", "precision"})],
    }

    def __init__(self, start=0.95, *, omega=0.4, minimum=0.55, mode="confidence"):
        self.start = start
        self.omega = omega
        self.minimum = minimum
        self.mode = mode

    def check(self):
        """Validate the parameters, and ``minimum <= start`` when the threshold moves."""
        check_params(self)
        if self.omega > 0 and self.minimum > self.start:
            raise ValueError(
                f"AdaptiveThreshold(start={self.start}, minimum={self.minimum}): minimum must "
                "not exceed start (it bounds the adaptive threshold from below); lower it, or "
                "set omega=0 for a threshold that does not move."
            )
        return self


class AopcScorer:
    """AOPC^k of an aggregator's top terms; build it with :func:`aopc_scorer`."""

    def __init__(self, removal="delete"):
        if not isinstance(removal, str):
            raise ValueError(f"removal must be 'delete' or a replacement str, got {removal!r}.")
        self.removal = removal

    def __repr__(self):
        return f"aopc_scorer(removal={self.removal!r})"

    def __eq__(self, other):
        return type(other) is type(self) and other.removal == self.removal

    def __hash__(self):
        return hash((type(self), self.removal))

    def __call__(self, aggregator, X, y=None):
        from ..metrics import aopc_k

        check_is_fitted(aggregator, "top_terms_")
        aggregator._validate_params()
        aggregator._check_model("score")
        docs = check_documents(X, "X", allow_wordless=True)
        return aopc_k(
            aggregator.model_,
            docs,
            aggregator.top_terms_,
            aggregator.k,
            removal=self.removal,
            lowercase=aggregator._word_filter().lowercase,
        )


def aopc_scorer(*, removal="delete"):
    """A scorer of the global aggregators for model selection: AOPC^k of the top terms.

    The scorer removes each class's top ``k`` terms from the held-out documents ``X`` that the
    model predicts in that class and measures how much the class's probability drops
    (:func:`skanchors.metrics.aopc_k`, averaged over classes; higher is better).
    :meth:`GlobalAnchorAggregator.score <skanchors.GlobalAnchorAggregator.score>` and
    :meth:`GlobalLimeAggregator.score <skanchors.GlobalLimeAggregator.score>` are this scorer
    with its defaults; anchor-based and LIME-based top terms are scored alike.

    Parameters
    ----------
    removal : "delete" or str, default="delete"
        How the top terms are removed: deleted, or replaced by this token (e.g. ``"UNK"``).

    Returns
    -------
    scorer : AopcScorer
        Callable as ``scorer(aggregator, X, y=None)``; pass it as ``scoring`` to
        ``GridSearchCV``.

    Examples
    --------
    >>> from skanchors.aggregation import aopc_scorer
    >>> aopc_scorer(removal="UNK")
    aopc_scorer(removal='UNK')
    """
    return AopcScorer(removal=removal)
