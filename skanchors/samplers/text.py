"""Perturbation distributions for text: words are kept or replaced, one by one.

A document is split into *words* by :func:`tokenize` (runs of word characters, with the
character span of each). The predicates of a document are its words at their positions: the
``i``-th word ``w`` gives ``Predicate(w, "contains", w, position=i)``, rendered as ``w``; a word
that occurs twice gives two predicates.

``D(z | A)`` keeps every word of ``A`` and keeps each other word independently with probability
``keep_proba`` (default 1/2, Ribeiro et al. 2018); a word that is not kept is *replaced*, and the
samplers differ only in what replaces it:

- :class:`UnkSampler`: a fixed token (``"UNK"``), or nothing (deletion); ``UnkSampler()`` is
  what ``sampler=None`` gives for documents, in every explainer and aggregator
  (``_default_sampler()``);
- :class:`CorpusSampler`: a word drawn from the unigram distribution of the reference documents;
- :class:`~skanchors.samplers.MaskedLMSampler`: a word proposed by a masked language model.

Because the words are masked independently, the perturbations in which word ``i`` was kept are
exact draws of ``D(z | i kept)``: every sampler here sets ``exact_reuse = True``, so one pool of
perturbations serves every candidate anchor of the document. A perturbation is rebuilt from the
original character spans, so the punctuation and whitespace between words are kept verbatim.
"""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from numbers import Integral, Real

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._documents import check_documents, tokenize
from .._explanation import Predicate
from .._validation import check_params
from ._protocol import Capabilities, InstanceSampler, Sampler

__all__ = [
    "CorpusSampler",
    "TextInstance",
    "UnkSampler",
    "check_documents",
    "tokenize",
]

# Samples are drawn and decoded in blocks of rows of at most this many cells (rows x words), so
# that a long document's perturbations never make one (rows x words) float or object matrix.
_BLOCK_CELLS = 1 << 20
# ... and decoded in blocks of at most this many pieces (words and the text between them).
_DECODE_CELLS = 1 << 18


class _TextSampler(BaseEstimator, Sampler):
    """Shared part of the text samplers: validation, reference vocabulary and coverage.

    ``fit`` learns, from the reference documents, the document x word count matrix used for
    :meth:`TextInstance.reference_coverage` (the share of reference documents that contain every
    word of an anchor, as often as the anchor keeps it), then whatever the subclass needs to
    replace words (``_fit_replacements``). Subclasses set ``_instance_class``.
    """

    _parameter_constraints: dict = {
        "keep_proba": [Interval(Real, 0, 1, closed="neither")],
    }
    modality = "text"

    def __init__(self, *, keep_proba=0.5):
        self.keep_proba = keep_proba

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Learn the reference vocabulary (and the replacement distribution) from documents.

        Parameters
        ----------
        X : list, tuple, 1-d array or Series of str
            Reference documents (for example the training texts), at least one with a word.
            Documents without any word are allowed among them; they count in the denominator
            of the reference coverage.
        y : None
            Ignored.
        sample_weight : None
            Text samplers do not support weights (``AnchorExplainer(balance=True)``); anything
            but ``None`` raises ``ValueError``.

        Returns
        -------
        self
        """
        if sample_weight is not None:
            raise ValueError(
                f"{type(self).__name__} does not support sample_weight: text samplers cannot "
                "class-balance the reference documents (use balance=False)."
            )
        docs = check_documents(X, "X", allow_wordless=True)
        tokens = [[w for w, _, _ in tokenize(doc)] for doc in docs]
        if not any(tokens):
            raise ValueError(
                f"X, the reference documents, has no words: all {len(docs)} are empty, "
                "whitespace or punctuation only. A word is a run of letters or digits; fit "
                f"{type(self).__name__} on the documents the model is used on."
            )
        counts = {}
        for words in tokens:
            for w in words:
                counts[w] = counts.get(w, 0) + 1
        vocab = sorted(counts)
        self.vocabulary_ = {w: j for j, w in enumerate(vocab)}
        self.word_counts_ = np.array([counts[w] for w in vocab], dtype=np.int64)
        rows, cols, data = [], [], []
        index = self.vocabulary_
        for i, words in enumerate(tokens):
            present = Counter(index[w] for w in words)
            rows.extend([i] * len(present))
            cols.extend(present)
            data.extend(present.values())
        n = len(docs)
        data = np.asarray(data, dtype=np.int32)  # occurrences of the word in the document
        self._presence = sparse.csc_matrix(
            (data, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
            shape=(n, len(vocab)),
        )
        self._presence.sort_indices()
        self.document_frequency_ = np.diff(self._presence.indptr).astype(np.int64)
        self.n_documents_ = n
        self._fit_replacements(docs, tokens)
        return self

    def _fit_replacements(self, docs, tokens):
        """Hook for subclasses: learn what replaces a word."""

    def get_feature_names_out(self, input_features=None):
        """The reference vocabulary, in the column order of ``vocabulary_``."""
        check_is_fitted(self, "vocabulary_")
        return np.array(sorted(self.vocabulary_, key=self.vocabulary_.get), dtype=object)

    # ------------------------------------------------------------------- explaining
    def split(self, X):
        """Validate documents to explain and return them one by one.

        Parameters
        ----------
        X : list, tuple, 1-d array or Series of str
            A collection of documents (a single string is refused). Every document must have at
            least one word.

        Returns
        -------
        documents : list of str
        """
        check_is_fitted(self, "vocabulary_")
        return check_documents(X, "X")

    def to_model_input(self, X):
        """The documents as the model expects them: a list of str."""
        return check_documents(X, "X", allow_wordless=True, allow_empty=True)

    def instance(self, document):
        """The instance sampler of one document (a str, or a collection of exactly one)."""
        check_is_fitted(self, "vocabulary_")
        check_params(self)  # (set_params may have changed them since fit)
        if not isinstance(document, str):
            docs = check_documents(document, "document")
            if len(docs) != 1:
                raise ValueError(f"instance() takes exactly one document, got {len(docs)}.")
            document = docs[0]
        return self._instance_class(self, document)

    def _reference_coverage(self, words):
        """Share of the reference documents that contain every word of ``words``, a word
        given twice at least twice (an anchor may keep two occurrences of one word)."""
        if not words:
            return 1.0
        need = Counter(words)
        cols = []
        for w, m in need.items():
            j = self.vocabulary_.get(w)
            if j is None:
                return 0.0
            cols.append((j, m))
        if self.n_documents_ == 0:
            return 0.0
        cols.sort(key=lambda jm: self.document_frequency_[jm[0]])
        indptr, indices, counts = self._presence.indptr, self._presence.indices, self._presence.data
        docs = None
        for j, m in cols:
            span = slice(indptr[j], indptr[j + 1])
            holding = indices[span] if m == 1 else indices[span][counts[span] >= m]
            docs = holding if docs is None else np.intersect1d(docs, holding, assume_unique=True)
            if docs.size == 0:
                break
        return docs.size / self.n_documents_


class TextInstance(InstanceSampler):
    """Sampler for one document; see :mod:`skanchors.samplers._protocol` for the protocol.

    Attributes
    ----------
    document : str
    words : list of str
        The words of the document (:func:`tokenize`), one predicate each.
    predicates : list of Predicate
        ``Predicate(word, "contains", word, position=i)`` for the ``i``-th word.
    n_predicates : int
    capabilities : Capabilities
        ``exact_reuse``: words are masked independently, so the samples in which a set of
        words was kept are exact draws of ``D(z | those words kept)``; ``keys_tell_holds``:
        :meth:`holds_of` reads which words a sample kept off its keys; ``replayable`` when
        :meth:`sample` reads nothing but its generator and is cheap (UNK and corpus
        replacements; a masked language model's are not): the search of a long document then
        keeps one bit per word and sample, and draws a sample again when it needs its text.
    keep_proba : float

    Notes
    -----
    ``sample`` returns ``keys``, an integer matrix (``int32``; ``int8`` for :class:`UnkSampler`,
    whose ids are all 0) with one column per word: ``-1`` where the word is kept, else the id of
    its replacement (what the id means depends on the sampler), and
    ``holds``, the boolean matrix "word kept". A replacement never equals the original word
    (the samplers exclude it), so ``holds`` is exactly the truth of each predicate.
    """

    capabilities = Capabilities(exact_reuse=True, keys_tell_holds=True)

    def __init__(self, parent, document):
        tokens = tokenize(document)
        if not tokens:
            raise ValueError(
                f"The document has no words to explain (empty, whitespace or punctuation "
                f"only): {document!r:.60}."
            )
        self.parent = parent
        self.document = document
        self.words = [w for w, _, _ in tokens]
        self.keep_proba = float(parent.keep_proba)
        self._starts = np.array([s for _, s, _ in tokens], dtype=np.int64)
        self._ends = np.array([e for _, _, e in tokens], dtype=np.int64)
        bounds = [0] + [x for _, s, e in tokens for x in (s, e)] + [len(document)]
        self.gaps = [document[bounds[2 * k] : bounds[2 * k + 1]] for k in range(len(tokens) + 1)]
        self._n_predicates = len(self.words)
        self._words_obj = np.array(self.words + [None], dtype=object)[:-1]
        self._gaps_obj = np.array(self.gaps + [None], dtype=object)[:-1]
        self._coverage_cache = {}

    def search_key(self):
        """What a search of this document depends on, besides the explainer's sampler and
        parameters: its text (which also seeds its random numbers). A document explained
        again gets the anchor of its first search from the explainer's cache."""
        return ("document", self.document)

    @property
    def n_predicates(self):
        """Number of words of the document (one predicate each)."""
        return self._n_predicates

    @cached_property
    def predicates(self):
        # Built on first use: the global aggregator samples documents without reading them.
        return [Predicate(w, "contains", w, position=i) for i, w in enumerate(self.words)]

    # -- the search protocol
    def sample(self, anchor, n, rng):
        """``n`` draws from ``D(z | anchor)``: (keys, holds) matrices of shape (n, n_words).

        Parameters
        ----------
        anchor : tuple of int
            Indices of the words that are kept in every sample.
        n : int
        rng : numpy.random.Generator
            The only source of randomness.

        Returns
        -------
        keys : ndarray of int32 (int8 for UNK), shape (n, n_words)
            ``-1`` for a kept word, else the id of its replacement.
        holds : ndarray of bool, shape (n, n_words)
            Which words are kept (which predicates hold).
        """
        keep = self._keep(int(n), rng)
        if len(anchor):
            keep[:, list(anchor)] = True
        return self._keys(keep, rng), keep

    def _keep(self, n, rng):
        """``rng.random((n, n_words)) < keep_proba``, drawn in blocks of rows (the same
        numbers: the generator fills them in order), so that no (n, n_words) float matrix is
        made for a long document."""
        d = self.n_predicates
        keep = np.empty((n, d), dtype=bool)
        step = max(1, _BLOCK_CELLS // max(d, 1))
        for lo in range(0, n, step):
            keep[lo : lo + step] = rng.random((min(step, n - lo), d)) < self.keep_proba
        return keep

    def _keys(self, keep, rng):
        """The keys of samples that keep the words ``keep``: -1 where kept, else a
        replacement drawn by ``_draw`` (all the replaced words of all rows at once)."""
        keys = np.full(keep.shape, -1, dtype=np.int32)
        replaced = ~keep
        if replaced.any():
            rows, cols = np.nonzero(replaced)
            keys[rows, cols] = self._draw(replaced, rows, cols, rng)
        return keys

    def holds_of(self, keys):
        """Which words rows of ``keys`` keep: the ``holds`` that :meth:`sample` returned
        with them (a replacement is never the original word)."""
        return np.asarray(keys) < 0

    def _draw(self, replaced, rows, cols, rng):  # pragma: no cover - abstract
        raise NotImplementedError

    def _replacement(self, keys):
        """Replacement strings of ``keys >= 0`` (an object array shaped like ``keys``)."""
        raise NotImplementedError  # pragma: no cover

    def _gap_matrix(self, kept):
        m, d = kept.shape
        return np.broadcast_to(self._gaps_obj, (m, d + 1))

    def decode(self, keys):
        """The perturbed documents (list of str) for rows of ``keys``."""
        keys = np.asarray(keys)
        if keys.ndim != 2 or keys.shape[1] != self.n_predicates:
            raise ValueError(f"keys must have shape (n, {self.n_predicates}), got {keys.shape}.")
        # in blocks of rows: the pieces of a long document are (rows x words) object arrays
        step = max(1, _DECODE_CELLS // (2 * keys.shape[1] + 1))
        texts = []
        for lo in range(0, len(keys), step):
            texts.extend(self._decode(keys[lo : lo + step]))
        return texts

    def _decode(self, keys):
        m, d = keys.shape
        if m == 0:
            return []
        kept = keys < 0
        words = np.where(kept, self._words_obj[None, :], self._replacement(np.where(kept, 0, keys)))
        out = np.empty((m, 2 * d + 1), dtype=object)
        out[:, 0::2] = self._gap_matrix(kept)
        out[:, 1::2] = words
        return ["".join(row) for row in out.tolist()]

    def coverage(self, anchors):
        """Coverage under the perturbation distribution: ``keep_proba ** len(anchor)``."""
        return np.array([self.keep_proba ** len(a) for a in anchors], dtype=float)

    def reference_coverage(self, anchor):
        """Share of the reference documents that contain every word of the anchor (a word it
        keeps at two positions, at least twice)."""
        words = tuple(self.words[p] for p in anchor)
        key = frozenset(Counter(words).items())
        hit = self._coverage_cache.get(key)
        if hit is None:
            hit = self._coverage_cache[key] = float(self.parent._reference_coverage(words))
        return hit


def _default_sampler():
    """The text sampler of ``sampler=None``: ``UnkSampler()``, for
    :class:`~skanchors.AnchorExplainer`, :class:`~skanchors.LimeExplainer` and both global
    aggregators alike.

    An anchor found with it reads "the prediction holds while these words stay and the others
    are masked at random": on sentiment and spam corpora its anchors are about one word, mostly
    words that carry the class, and they apply to other documents, where
    :class:`CorpusSampler`, which drops random corpus words into the text, needs several words
    or much of the sentence to hold the prediction (see "Choosing the text sampler" in the user
    guide).
    """
    return UnkSampler()


# --------------------------------------------------------------------------- UNK / deletion
class UnkSampler(_TextSampler):
    """Replace words by a fixed token, or delete them.

    ``UnkSampler()`` is the default for documents (``sampler=None``).

    Parameters
    ----------
    keep_proba : float in (0, 1), default=0.5
        Probability that a word outside the anchor is kept.
    token : str or None, default="UNK"
        What a replaced word becomes. ``None`` deletes it; see Notes for the whitespace.

    Attributes
    ----------
    vocabulary_ : dict of str -> int
        Words of the reference documents (column of the presence matrix).
    word_counts_ : ndarray of int
        Occurrences of each word in the reference documents.
    document_frequency_ : ndarray of int
        Number of reference documents that contain each word.
    n_documents_ : int

    Notes
    -----
    With ``token=None`` a deleted word is removed together with the whitespace run right after
    it, so that no double space appears. A run of consecutive deleted words separated only by
    whitespace is removed as one block (with the whitespace between them). When the block is
    followed by no whitespace (end of text, or punctuation right after it), the whitespace run
    right before it is removed instead. Punctuation is never removed. For example, deleting
    ``b`` in ``"a b c"`` gives ``"a c"``, deleting ``c`` gives ``"a b"``, deleting ``b`` and
    ``c`` gives ``"a"``, and deleting ``world`` in ``"Hello, world!"`` gives ``"Hello,!"``.

    A document whose word equals ``token`` keeps the same text when that word is replaced; the
    predicate is then counted as not holding (the word was masked).

    Examples
    --------
    >>> import numpy as np
    >>> s = UnkSampler().fit(["a good movie", "a bad movie"])
    >>> inst = s.instance("a good movie!")
    >>> [str(p) for p in inst.predicates]
    ['a', 'good', 'movie']
    >>> keys, holds = inst.sample((1,), 4, np.random.default_rng(0))
    >>> inst.decode(keys)
    ['UNK good movie!', 'a good UNK!', 'UNK good UNK!', 'UNK good movie!']
    >>> inst.reference_coverage((2,)), inst.coverage([(2,)])
    (1.0, array([0.5]))
    >>> UnkSampler(token=None).fit(["x"]).instance("a good movie!").decode(keys)
    ['good movie!', 'a good!', 'good!', 'good movie!']
    """

    _parameter_constraints: dict = {
        **_TextSampler._parameter_constraints,
        "token": [str, None],
    }

    def __init__(self, *, keep_proba=0.5, token="UNK"):
        super().__init__(keep_proba=keep_proba)
        self.token = token

    @property
    def _instance_class(self):
        return UnkInstance


class UnkInstance(TextInstance):
    """Instance of :class:`UnkSampler`: keys are ``-1`` (kept) or ``0`` (replaced/deleted)."""

    capabilities = Capabilities(exact_reuse=True, keys_tell_holds=True, replayable=True)

    def __init__(self, parent, document):
        super().__init__(parent, document)
        token = parent.token
        self._delete = token is None
        self._table = np.array(["" if token is None else token, None], dtype=object)[:1]
        if self._delete:
            gaps = self.gaps
            lead = np.array([len(g) - len(g.lstrip()) for g in gaps], dtype=np.int64)
            trail = np.array([len(g) - len(g.rstrip()) for g in gaps], dtype=np.int64)
            lengths = np.array([len(g) for g in gaps], dtype=np.int64)
            self._all_ws = lead == lengths
            self._has_lead = lead > 0
            variants = np.empty((len(gaps), 4), dtype=object)
            for j, g in enumerate(gaps):
                both = "" if self._all_ws[j] else g[lead[j] : len(g) - trail[j]]
                variants[j] = [g, g[lead[j] :], g[: len(g) - trail[j]], both]
            self._gap_variants = variants

    def _draw(self, replaced, rows, cols, rng):
        return np.zeros(len(rows), dtype=np.int32)

    def _keys(self, keep, rng):
        # -1 where kept, 0 (the token) elsewhere: nothing is drawn (int8: a long document's
        # samples are large)
        return -(keep.view(np.int8))

    def _replacement(self, keys):
        return self._table[keys]

    def _gap_matrix(self, kept):
        if not self._delete:
            return super()._gap_matrix(kept)
        m, d = kept.shape
        deleted = ~kept
        # cont[t]: deleted word t and deleted word t+1 form one block (only whitespace between).
        cont = np.zeros((m, d), dtype=bool)
        cont[:, :-1] = deleted[:, :-1] & deleted[:, 1:] & self._all_ws[1:d]
        # end[t]: last word of the block that word t belongs to.
        idx = np.where(cont, d, np.arange(d))
        end = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]
        ws_after = self._has_lead[end + 1]
        block_end = deleted & ~cont
        block_start = deleted.copy()
        block_start[:, 1:] &= ~cont[:, :-1]
        code = np.zeros((m, d + 1), dtype=np.int8)
        code[:, 1:] += (block_end & self._has_lead[1:]).astype(np.int8)
        code[:, :d] += 2 * (block_start & ~ws_after).astype(np.int8)
        inner = code[:, 1:d]
        inner[cont[:, :-1]] = 3
        return self._gap_variants[np.arange(d + 1)[None, :], code]


# ---------------------------------------------------------------------------- corpus
class CorpusSampler(_TextSampler):
    """Replace words by words drawn from the unigram distribution of the reference documents.

    Perturbations stay made of real words, so an anchor must hold the prediction whatever
    other words of the corpus stand around it: its anchors are longer than
    :class:`UnkSampler`'s (on short sentiment texts often half the words) and cover fewer
    other documents.

    ``fit`` counts the occurrences of each word in the reference documents; a replaced word is
    drawn with probability proportional to its count, among the words that occur in at least
    ``min_df`` documents, *excluding the original word* (so a replaced word always changes the
    text, and ``holds`` is exactly "the word at this position is the original one"). Words are
    compared case-sensitively, as the predicates are.

    Parameters
    ----------
    keep_proba : float in (0, 1), default=0.5
        Probability that a word outside the anchor is kept.
    min_df : int >= 1, default=1
        Only words found in at least ``min_df`` reference documents are used as replacements
        (coverage still counts every word).

    Attributes
    ----------
    vocabulary_ : dict of str -> int
    word_counts_ : ndarray of int
    document_frequency_ : ndarray of int
    n_documents_ : int
    replacement_words_ : ndarray of str (object)
        The words replacements are drawn from.
    replacement_proba_ : ndarray of float
        Their probabilities (unigram frequencies).

    Examples
    --------
    >>> import numpy as np
    >>> docs = ["a good movie", "a bad movie", "the plot is good"]
    >>> s = CorpusSampler().fit(docs)
    >>> list(s.replacement_words_)
    ['a', 'bad', 'good', 'is', 'movie', 'plot', 'the']
    >>> inst = s.instance("a good movie")
    >>> keys, holds = inst.sample((1,), 3, np.random.default_rng(0))
    >>> inst.decode(keys)
    ['movie good movie', 'a good the', 'good good plot']
    >>> holds.tolist()
    [[False, True, True], [True, True, False], [False, True, False]]
    """

    _parameter_constraints: dict = {
        **_TextSampler._parameter_constraints,
        "min_df": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, keep_proba=0.5, min_df=1):
        super().__init__(keep_proba=keep_proba)
        self.min_df = min_df

    @property
    def _instance_class(self):
        return CorpusInstance

    def _fit_replacements(self, docs, tokens):
        words = self.get_feature_names_out()
        ok = self.document_frequency_ >= self.min_df
        if ok.sum() < 2:
            raise ValueError(
                f"CorpusSampler needs at least 2 distinct words found in >= min_df={self.min_df} "
                f"reference documents to draw replacements from; got {int(ok.sum())}."
            )
        counts = self.word_counts_[ok]
        self.replacement_words_ = words[ok]
        self.replacement_proba_ = counts / counts.sum()
        self._counts = counts
        self._cum = np.cumsum(counts)
        self._replacement_index = {w: k for k, w in enumerate(self.replacement_words_)}


class CorpusInstance(TextInstance):
    """Instance of :class:`CorpusSampler`: keys index ``replacement_words_``."""

    capabilities = Capabilities(exact_reuse=True, keys_tell_holds=True, replayable=True)

    def __init__(self, parent, document):
        super().__init__(parent, document)
        self._original = np.array(
            [parent._replacement_index.get(w, -1) for w in self.words], dtype=np.int64
        )

    def _keys(self, keep, rng):
        # The replacements of blocks of rows one after the other: the generator draws them in
        # the same order as all at once (one number per replaced word, in row order).
        keys = np.full(keep.shape, -1, dtype=np.int32)
        step = max(1, _BLOCK_CELLS // max(keep.shape[1], 1))
        for lo in range(0, len(keep), step):
            replaced = ~keep[lo : lo + step]
            if replaced.any():
                rows, cols = np.nonzero(replaced)
                keys[lo + rows, cols] = self._draw(replaced, rows, cols, rng)
        return keys

    def _draw(self, replaced, rows, cols, rng):
        parent = self.parent
        counts, cum = parent._counts, parent._cum
        orig = self._original[cols]
        known = orig >= 0
        safe = np.where(known, orig, 0)
        own = np.where(known, counts[safe], 0)
        before = np.where(known, cum[safe] - counts[safe], 0)
        # Integer inverse-CDF draw over the counts with the original word's block cut out.
        u = rng.integers(0, cum[-1] - own)
        u = u + (u >= before) * own
        return np.searchsorted(cum, u, side="right").astype(np.int32)

    def _replacement(self, keys):
        return self.parent.replacement_words_[keys]
