"""What the global aggregators share: the anytime loop over batches of documents.

:class:`BaseGlobalAggregator` holds the estimator plumbing of
:class:`~skanchors.GlobalAnchorAggregator` and
:class:`~skanchors.GlobalLimeAggregator` (template method): validation of the
shared parameters, the set-up of the model, sampler and classes, the ordering of the documents
by confidence, the loop over batches with ``max_time``, ``callback`` and progress, the
stop-word and rare-word filters, the publication of ``top_terms_`` and ``scores_``,
``transform``, ``score`` (AOPC^k) and cloning. Each subclass explains the documents of a batch
and aggregates the results.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sys
import threading
import time
import warnings
from collections import Counter
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import N_JOBS, ExplainsFittedModel, outside_stacklevel
from .._moved import carry
from .._validation import check_model, check_params
from ..models import as_probability_model
from ..samplers._protocol import check_sampler, is_fitted
from ..samplers.text import check_documents, tokenize
from . import _checkpoint
from ._moved import MOVED_PARAMS
from ._options import AopcScorer, WordFilter

__all__ = ["BaseGlobalAggregator", "OutOfTime"]


class OutOfTime(Exception):
    """Raised by ``_explain_batch`` when ``max_time`` ran out before the batch was done."""


class BaseGlobalAggregator(ExplainsFittedModel, TransformerMixin, BaseEstimator):
    """Shared behaviour of the global aggregators of local text explanations.

    Subclasses store the parameters of :attr:`_parameter_constraints` (they extend the dict)
    plus ``aggregation`` and ``sampler``, and implement:

    - ``_init_state()``: the empty per-word state (called by :meth:`_setup`);
    - ``_grow(n)``: room for ``n`` new words (called by :meth:`_add_words`);
    - ``_explain_batch(docs, targets, prepared, batch)``: explain the documents ``batch``
      (indices into ``docs``) without changing the state, raising :class:`OutOfTime` when
      ``_time_left()`` runs out before it is done (checked between its model calls), and
      ``_commit_batch(docs, targets, prepared, batch, explained)``: count them (run with
      Ctrl-C held off, so that an interrupt never leaves a batch half counted);
    - ``_scores(name)``, ``_ranked(scores, name)``: the scores of an aggregation and which of
      them may be top terms;
    - ``_count_tables()``: the ``(attribute, array)`` word x class tables to publish;
    - ``_checkpoint_params``, ``_checkpoint_arrays``, ``_checkpoint_counters``: the parameters
      that change the state (a checkpoint written with others is refused), the state's
      arrays (one row per word; counts unless named in ``_checkpoint_signed``) and its
      running totals (int or float), which a checkpoint saves after each batch.

    The hooks ``_prepare`` (work on all the documents of a call, state untouched),
    ``_start_run`` (its effect on the state, with Ctrl-C held off), ``_drop`` (also called for
    a batch a checkpoint already counted), ``_loaded`` (after a checkpoint is read) and
    ``_history_entry`` have defaults.
    """

    _progress_desc = "global explanations"
    _checkpoint_signed = ()  # arrays of the state that may hold negative values
    _moved_params = MOVED_PARAMS

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["predict_proba"]), callable],
        "k": [Interval(Integral, 1, None, closed="left")],
        "vocabulary": [None, WordFilter],
        "max_documents": [Interval(Integral, 1, None, closed="left"), None],
        "order": [StrOptions({"confidence", "given", "random"})],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
        "callback": [callable, None],
        "checkpoint": [str, os.PathLike, None],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __sklearn_clone__(self):
        # The model being explained (and a fitted sampler, e.g. a loaded masked LM) is shared,
        # never cloned: a clone must explain the *same fitted* model.
        params = self.get_params(deep=False)
        estimator = params.pop("estimator")
        sampler = params.pop("sampler")
        if sampler is not None and not is_fitted(sampler):
            sampler = clone(sampler)
        params = {k: clone(v, safe=False) for k, v in params.items()}
        # (what old keywords set outside the parameters goes to the clone too)
        return carry(self, type(self)(estimator, sampler=sampler, **params), _CARRIED)

    def set_params(self, **params):
        for name, hint in (
            ("vocabulary", "vocabulary=WordFilter()"),
            ("threshold", "threshold=AdaptiveThreshold(0.95)"),
            ("sampler", "sampler=UnkSampler()"),
        ):
            nested = sorted(k for k in params if k.startswith(f"{name}__"))
            value = params.get(name, getattr(self, name, None))
            if nested and not hasattr(value, "set_params"):
                raise ValueError(
                    f"Cannot set {', '.join(nested)}: {name} is {value!r}, not an object with "
                    f"parameters. Pass one to tune them, e.g. {hint}, or set it and its "
                    "options together."
                )
        return super().set_params(**params)

    def _described_params(self):
        """The parameters as a checkpoint describes them (see ``_state_params``), the word
        filter's in the terms of the flat keywords they replaced."""
        params = self.get_params(deep=False)
        words = self._word_filter()
        params.update(
            stop_words=words.stop_words, min_count=words.min_count, lowercase=words.lowercase
        )
        return params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        tags.requires_fit = True
        tags.transformer_tags.preserves_dtype = []
        return tags

    # ---------------------------------------------------------------- public API
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Explain every document of ``X`` and aggregate (from a fresh state).

        With a ``checkpoint`` whose file is present, the saved state is loaded instead and the
        batches it already counted are skipped.

        Parameters
        ----------
        X : list, tuple, 1-d array or Series of str
            The documents ``S`` (e.g. a test set).
        y : None
            Ignored: classes are the model's predictions.

        Returns
        -------
        self
        """
        docs = self._check_X(X)
        for name in list(vars(self)):
            if name.endswith("_") and not name.startswith("__"):
                delattr(self, name)
        self._state = None
        self._setup(docs)
        self._run(docs)
        return self

    @_fit_context(prefer_skip_nested_validation=False)
    def partial_fit(self, X, y=None):
        """Explain and aggregate one more collection of documents (anytime).

        ``X`` is ordered (``order``) and processed in batches of ``batch_size``; the filters
        that count words know only the documents seen so far and ``X``. The parameters are
        checked again (``set_params`` may have changed them since the first call) and
        apply to this call's documents.

        Parameters
        ----------
        X : list, tuple, 1-d array or Series of str
        y : None
            Ignored.

        Returns
        -------
        self
        """
        self._validate_params()  # (fitted: _fit_context does not, and set_params may have)
        docs = self._check_X(X)
        if getattr(self, "_state", None) is None:
            self._setup(docs)
        else:
            self._check_model("partial_fit")
        self._run(docs)
        return self

    def _check_model(self, method):
        """Refuse a model refitted in place since the first ``fit`` / ``partial_fit``: the
        counts (and the model's wrapper) are the old model's."""
        changed = self.model_.refitted()
        if changed:
            what = f"{', '.join(changed[:4])}{', ...' if len(changed) > 4 else ''} changed"
            raise ValueError(
                f"The model was refitted after this {type(self).__name__} was fitted ({what}): "
                f"its counts and top terms are the old model's, so {method} cannot add to them "
                "or score them. Call fit to aggregate the refitted model from scratch."
            )

    def get_feature_names_out(self, input_features=None):
        """The top terms of all classes (class by class, best first, each word once)."""
        check_is_fitted(self, "top_terms_")
        seen = []
        for terms in self.top_terms_.values():
            for w, _ in terms:
                if w not in seen:
                    seen.append(w)
        return np.array(seen, dtype=object)

    def transform(self, X):
        """Occurrences of each top term in each document.

        Parameters
        ----------
        X : list of str

        Returns
        -------
        Xt : ndarray of int of shape (n_documents, n_top_terms)
            Columns are :meth:`get_feature_names_out`.
        """
        names = self.get_feature_names_out()
        self._validate_params()
        docs = check_documents(X, "X", allow_wordless=True)
        col = {w: j for j, w in enumerate(names.tolist())}
        out = np.zeros((len(docs), len(names)), dtype=np.int64)
        norm = self._normalizer()
        for i, doc in enumerate(docs):
            for w, _, _ in tokenize(doc):
                j = col.get(norm(w))
                if j is not None:
                    out[i, j] += 1
        return out

    def score(self, X, y=None):
        """AOPC^k of the top terms on ``X``, averaged over classes (higher is better).

        ``aopc_scorer()(self, X)``: the top terms are deleted (see
        :func:`~skanchors.aggregation.aopc_scorer` for a replacement token, and
        :func:`skanchors.metrics.aopc_k`). This is what ``GridSearchCV`` maximises without a
        ``scoring``; anchor-based and LIME-based top terms are scored alike.

        Parameters
        ----------
        X : list of str
            Held-out documents.
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        return getattr(self, "_scorer", _DEFAULT_SCORER)(self, X, y)

    def _validate_params(self):
        super()._validate_params()
        check_params(self._word_filter())  # (the word filter's own parameters, set after fit)

    def _word_filter(self):
        """The :class:`WordFilter` in force: ``vocabulary``, or the default one."""
        return _DEFAULT_WORDS if self.vocabulary is None else self.vocabulary

    def _normalizer(self):
        """The function that makes a token the word it is counted as (``lowercase``)."""
        return str.lower if self._word_filter().lowercase else _same

    # ---------------------------------------------------------------- set-up
    def _check_X(self, X):
        return check_documents(X, "X", allow_wordless=True)

    def _setup(self, docs):
        """Model, sampler, classes and an empty state; the subclass adds its own."""
        from ..samplers.text import _default_sampler

        check_model(self.estimator, "estimator", type(self).__name__)
        self._stops = self._word_filter().stop_set()
        self.model_ = as_probability_model(self.estimator)
        sampler = _default_sampler() if self.sampler is None else check_sampler(self.sampler)
        if not is_fitted(sampler):
            sampler = clone(sampler).fit(docs)
        else:
            sampler._validate_params()  # fitted, and used as it is
        self.sampler_ = sampler
        if self.model_.classes_ is None:
            probe = next((d for d in docs if d), "x")
            self.model_.predict_proba([probe])
        self.classes_ = np.asarray(self.model_.classes_)
        self._seed_base = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        self._words, self._index = [], {}
        self._stop_cache = None
        self._word_index = None
        self.n_documents_seen_ = 0
        self.n_model_calls_ = 0
        self.n_rows_predicted_ = 0
        self.elapsed_time_ = 0.0
        self.history_ = []
        self.stopped_early_ = False
        self._state = None  # set below, once the state (and a checkpoint) is loaded
        self._resume_from = None  # set by a loaded checkpoint (_plan)
        self._call_start = 0
        self.unprocessed_indices_ = np.zeros(0, dtype=np.intp)
        self._init_state()
        self._done, self._replay, self._replay_current = Counter(), Counter(), Counter()
        self._call_done = Counter()
        if self.checkpoint is not None and os.path.exists(self.checkpoint):
            self._load_checkpoint()
        self._publish()
        # Only now: a checkpoint refused above leaves no state, and the next call sets up
        # (and refuses) again rather than overwrite the file with an empty state.
        self._state = True

    def _add_words(self, words):
        """Give the words not met before a row of the state (``_grow``)."""
        new = [w for w in dict.fromkeys(words) if w not in self._index]
        if not new:
            return
        for w in new:
            self._index[w] = len(self._words)
            self._words.append(w)
        self._grow(len(new))

    # ---------------------------------------------------------------- the loop
    def _plan(self, docs):
        """Order (and sample) the documents of one call; returns (docs, targets, positions),
        ``positions`` the index in the call's ``X`` of each planned document.

        The sample and the shuffle are seeded by the number of documents seen before the
        call; a call that resumes a checkpoint uses the number the interrupted call started
        from, so that it plans the same batches and skips exactly those already counted."""
        seen = self.n_documents_seen_ if self._resume_from is None else self._resume_from
        idx = np.arange(len(docs))
        if self.max_documents is not None:
            room = max(self.max_documents - seen, 0)
            if len(idx) > room:
                rng = np.random.default_rng([self._seed_base, seen, 1])
                idx = np.sort(rng.choice(idx, size=room, replace=False))
        planned = [docs[i] for i in idx.tolist()]
        self._call_start = seen
        if not planned:
            self._resume_from = None
            return [], np.zeros(0, dtype=int), idx
        proba = self.model_.predict_proba(planned)  # may fail: the resume point stays
        targets = proba.argmax(axis=1)
        if self.order == "confidence":
            order = np.argsort(-proba.max(axis=1), kind="stable")
        elif self.order == "random":
            rng = np.random.default_rng([self._seed_base, seen, 2])
            order = rng.permutation(len(planned))
        else:
            order = np.arange(len(planned))
        self._resume_from = None
        return [planned[i] for i in order.tolist()], targets[order], idx[order]

    def _run(self, docs):
        """The anytime loop: one batch at a time, the answer published after each."""
        start = time.perf_counter()
        self._deadline = None if self.max_time is None else start + self.max_time
        self.stopped_early_ = False
        try:
            planned, targets, positions = self._plan(docs)
        except BaseException:
            # nothing of this call was processed (the model failed on the confidence pass)
            self.stopped_early_ = True
            self.unprocessed_indices_ = np.arange(len(docs))
            raise
        docs = planned
        self.unprocessed_indices_ = positions.copy()  # until each batch is done
        self._call_done = Counter()  # batch keys of this call, for the checkpoint
        bs = self.batch_size
        batches = [list(range(s, min(s + bs, len(docs)))) for s in range(0, len(docs), bs)]
        bar = None
        started = False  # the call's documents are in the state (as pending) from here on
        done = 0  # batches finished (their counts in the state)
        try:
            prepared = self._prepare(docs, targets)
            with _interrupts_held():
                prepared = self._start_run(prepared, targets)
                started = True
            bar = self._progress(len(docs))
            for b, batch in enumerate(batches):
                t0 = time.perf_counter()
                key = None
                if self.checkpoint is not None:
                    key = _batch_key([docs[i] for i in batch])
                    if self._replay[key] > 0:  # counted in the checkpoint this run resumes
                        with _interrupts_held():
                            self._replay[key] -= 1
                            if self._replay_current[key] > 0:
                                self._replay_current[key] -= 1
                            self._call_done[key] += 1
                            self._drop(targets, prepared, batch)
                            done = b + 1
                            self.unprocessed_indices_ = np.sort(positions[batch[-1] + 1 :])
                        self._report(bar, len(batch), skipped=True)
                        continue
                try:
                    explained = self._explain_batch(docs, targets, prepared, batch)
                except OutOfTime:
                    # max_time ran out within the batch: it is not counted, as the ones after
                    with _interrupts_held():
                        self.stopped_early_ = True
                        self._drop(targets, prepared, [i for bb in batches[b:] for i in bb])
                        done = len(batches)  # nothing left for the handler below to drop
                    break
                # The batch's counts, its bookkeeping and ``done`` change together: Ctrl-C is
                # held off until all of them are written.
                with _interrupts_held():
                    self._commit_batch(docs, targets, prepared, batch, explained)
                    if key is not None:
                        self._done[key] += 1
                        self._call_done[key] += 1
                    done = b + 1
                    self.unprocessed_indices_ = np.sort(positions[batch[-1] + 1 :])
                    self.elapsed_time_ += time.perf_counter() - t0
                    self._record()
                self._publish()
                self._save_checkpoint()
                self._report(bar, len(batch))
                stop = bool(self.callback(self)) if self.callback is not None else False
                timed_out = (
                    self.max_time is not None and time.perf_counter() - start > self.max_time
                )
                if (stop or timed_out) and b < len(batches) - 1:
                    with _interrupts_held():
                        self.stopped_early_ = True
                        self._drop(targets, prepared, [i for bb in batches[b + 1 :] for i in bb])
                        done = len(batches)  # nothing left for the handler below to drop
                    break
        except BaseException:
            # Interrupted (KeyboardInterrupt, a model error): the finished batches stay, and
            # the documents not processed are forgotten as when stopping early, so that a
            # later partial_fit counts only what it was given.
            with _interrupts_held():
                self.stopped_early_ = True
                if started:
                    self._drop(targets, prepared, [i for bb in batches[done:] for i in bb])
            self._publish()
            raise
        finally:
            if bar is not None:
                bar.close()
        if not self.stopped_early_:
            self._finish_run()
        self._publish()

    def _time_left(self):
        """Seconds left before ``max_time`` (None: no limit), for ``_explain_batch``."""
        deadline = getattr(self, "_deadline", None)
        return None if deadline is None else deadline - time.perf_counter()

    def _prepare(self, docs, targets):
        """Work on all the (ordered) documents of a call before its first batch, without
        changing the state; the result goes to :meth:`_start_run`."""
        return None

    def _start_run(self, prepared, targets):
        """The state's part of the set-up of a call (Ctrl-C held off); returns what the
        batches of the call get as ``prepared``."""
        return prepared

    def _drop(self, targets, prepared, indices):
        """Forget the documents ``indices`` of a call that stopped early."""

    def _loaded(self):
        """After a checkpoint's state is read (nothing by default)."""

    # ---------------------------------------------------------------- checkpoint
    def _state_params(self):
        params = self._described_params()
        described = {k: _describe(params[k]) for k in self._checkpoint_params}
        if "stop_words" in described:
            # ("english" and its list alike)
            described["stop_words"] = repr(sorted(self._word_filter().stop_set()))
        return described

    def _save_checkpoint(self):
        """Save the state after a batch, as data (:mod:`._checkpoint`: JSON and numpy
        arrays, never a pickle), atomically: an interrupted save leaves the last file whole."""
        if self.checkpoint is None:
            return
        state = dict(
            kind=type(self).__name__,
            params=self._state_params(),
            classes=_checkpoint.json_classes(self.classes_),
            words=self._words,
            counters={name: getattr(self, name) for name in self._checkpoint_counters},
            done=self._done,
            current=self._call_done,
            seed_base=self._seed_base,
            call_start=self._call_start,
            history=self.history_,
        )
        arrays = {name: getattr(self, name) for name in self._checkpoint_arrays}
        _checkpoint.save(self.checkpoint, state, arrays)

    def _load_checkpoint(self):
        """Resume from the checkpoint file: read as data and checked field by field (a file
        that is not a checkpoint of this aggregator and these parameters raises
        ``ValueError``; nothing in it is run)."""
        state = _checkpoint.load(
            self.checkpoint,
            kind=type(self).__name__,
            params=self._state_params(),
            classes=self.classes_,
            arrays={name: getattr(self, name) for name in self._checkpoint_arrays},
            signed=self._checkpoint_signed,
            counters={name: getattr(self, name) for name in self._checkpoint_counters},
            history_keys=set(self._history_entry()),
        )
        self._words = state["words"]
        self._stop_cache = None
        self._word_index = None
        self._index = state["index"]
        for attr, value in state["arrays"].items():
            setattr(self, attr, value)
        for attr, value in state["counters"].items():
            setattr(self, attr, value)
        self.history_ = state["history"]
        self._done = Counter(state["done"])
        self._replay = Counter(state["done"])
        self._replay_current = Counter(state["current"])  # the interrupted (last) call's
        # the interrupted run's random streams, and the document count its call started
        # from: the resumed call plans the same sample and order (_plan)
        self._seed_base = state["seed_base"]
        self._resume_from = state["call_start"]
        self._loaded()

    def _finish_run(self):
        """After a call that processed all its documents: were batches of the call the
        checkpoint was written in (the interrupted one) not given to it?"""
        left = sum(self._replay_current.values())
        if left:
            warnings.warn(
                f"checkpoint {os.fspath(self.checkpoint)!r} holds {left} batch"
                f"{'es' if left > 1 else ''} of documents that this call was not given, "
                "counted in the results all the same: was it written for another corpus (or "
                "the same documents in another order)? Resume by repeating the call that was "
                "interrupted (the checkpoint holds the calls before it too); use a new "
                "checkpoint file for new documents.",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
        self._replay.clear()
        self._replay_current.clear()

    def _history_entry(self):
        return dict(
            n_documents=self.n_documents_seen_,
            elapsed_time=self.elapsed_time_,
            n_rows_predicted=self.n_rows_predicted_,
        )

    def _record(self):
        self.history_.append(self._history_entry())

    # ---------------------------------------------------------------- filters and scores
    def _stop_mask(self):
        """Which words are stop words (computed once per word, extended as words arrive)."""
        mask = getattr(self, "_stop_cache", None)
        if mask is None:
            mask = np.zeros(0, dtype=bool)
        if len(mask) < len(self._words):
            extra = self._words[len(mask) :]
            new = np.fromiter((w.lower() in self._stops for w in extra), bool, len(extra))
            mask = self._stop_cache = np.concatenate([mask, new])
        return mask[: len(self._words)]

    def _eligible(self, n_occurrences):
        """Words that may be tested or ranked: no stop word, ``min_count`` occurrences."""
        keep = n_occurrences >= self._word_filter().min_count
        if self._stops and len(self._words):
            keep &= ~self._stop_mask()
        return keep

    def _frame(self, table):
        """A word x class table as a DataFrame."""
        import pandas as pd

        # The word index is rebuilt only when words were added: building it is most of the cost
        # of publishing the tables after every batch.
        index = self.__dict__.get("_word_index")
        if index is None or len(index) != len(self._words):
            index = self._word_index = pd.Index(self._words, name="word")
        return pd.DataFrame(table, index=index, columns=self.classes_)

    def _top(self, scores, name, k):
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
            # (k=-1 sliced off the last word and returned the rest)
            raise ValueError(f"k must be a positive integer, got {k!r}.")
        ranked = self._ranked(scores, name)
        words = self._words
        out = {}
        for c, label in enumerate(self.classes_.tolist()):
            idx = np.flatnonzero(ranked[:, c]).tolist()
            order = sorted(idx, key=lambda j: (-scores[j, c], words[j]))[:k]
            out[label] = [(str(words[j]), float(scores[j, c])) for j in order]
        return out

    def _publish(self):
        scores = self._scores(self.aggregation)
        self.scores_ = self._frame(scores)
        self.top_terms_ = self._top(scores, self.aggregation, self.k)
        for attr, arr in self._count_tables():
            setattr(self, attr, self._frame(arr.copy()))

    # ---------------------------------------------------------------- progress
    def _progress(self, total):
        if not self.verbose:
            return None
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return None
        return tqdm(total=total, desc=self._progress_desc, unit="doc", file=sys.stderr)

    def _headline(self, n=3):
        return "; ".join(
            f"{label}: {', '.join(w for w, _ in terms[:n])}"
            for label, terms in self.top_terms_.items()
        )

    def _report(self, bar, n, skipped=False):
        if not self.verbose:
            return
        if bar is not None:
            bar.update(n)
            bar.set_postfix_str(self._headline())
        else:
            what = "skipped (in checkpoint)" if skipped else f"{self.elapsed_time_:.1f} s"
            print(
                f"[skanchors] {self.n_documents_seen_} documents, {what} | {self._headline()}",
                flush=True,
            )


@contextlib.contextmanager
def _interrupts_held():
    """Hold Ctrl-C (SIGINT) off while the state changes, then deliver it.

    A KeyboardInterrupt can arrive between any two bytecodes; inside this block it waits
    until the block is done, so that a state written by several statements is never left half
    written. The signal is then raised again for the handler that was in place (Python's
    raises KeyboardInterrupt). Outside the main thread (where Python delivers no signal) or
    under a SIGINT handler not set from Python, the block runs as it is.
    """
    handler = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or handler is None:
        yield
        return
    caught = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
    if caught:
        signal.raise_signal(signal.SIGINT)


def _same(word):
    return word


_DEFAULT_WORDS = WordFilter()
_CARRIED = ("_scorer", "_shared_pool")
_DEFAULT_SCORER = AopcScorer()


def _describe(value):
    """A parameter as a checkpoint compares it: the same in every process (sets sorted,
    estimators by class and parameters, other objects by type: no memory addresses)."""
    if isinstance(value, (set, frozenset)):
        return repr(sorted(value, key=repr))
    if isinstance(value, (list, tuple)):
        return repr([_describe(v) for v in value])
    if isinstance(value, BaseEstimator):
        params = sorted(value.get_params(deep=False).items())
        return f"{type(value).__qualname__}({', '.join(f'{k}={_describe(v)}' for k, v in params)})"
    if isinstance(value, np.random.RandomState):
        return "RandomState"  # its position is not comparable; the saved seeds are used
    if value is None or isinstance(value, (str, bytes, bool, int, float, np.generic)):
        return repr(value)
    return type(value).__qualname__


def _batch_key(docs):
    """Identity of a batch of documents (its texts, in order) for the checkpoint."""
    h = hashlib.blake2b(digest_size=16)
    for doc in docs:
        data = doc.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()
