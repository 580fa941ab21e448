"""Searches of several rows that share their model calls (part of the speed layer; the core
asks for it through :mod:`skanchors._sharing`).

An anchor search is a loop of small model calls (one per bandit round). A model with a high
cost per call (a random forest predicts tree by tree; a transformer runs a forward pass) then
spends most of an explanation in call overhead. :func:`run_batched` runs the searches of several
rows in threads and merges their calls: a call is made when every running search is waiting for
predictions, on the concatenation of all their rows, and each search gets its own part back.
Each search still draws from its own generator and sees exactly the predictions it would see
alone, so the anchors do not change; only the number of model calls does. Each anchor's
counts are those of the rows explained one after the other (:class:`CallAccounts`).
:func:`run_shared` is what the layer registers (:func:`skanchors._sharing.call_sharing`).
"""

from __future__ import annotations

import contextlib
import copy
import threading

import numpy as np

from .._base import concat_rows

__all__ = ["CallAccounts", "run_batched", "run_shared"]


class _MergedModel:
    """Stands for the model in the searches: ``predict_index`` and ``predict`` calls of the
    running searches are collected, and the last search to ask makes one call per method."""

    def __init__(self, model, n_running):
        self._model = model
        self._running = n_running
        self._cond = threading.Condition()
        self._pending = []  # one [method name, X, result, error, done] per waiting search
        # Only the holder of the token runs search code; the others sleep on the lock rather
        # than compete for the GIL, which they would take at every numpy call that releases it.
        self._token = threading.Lock()

    def predict_index(self, X):
        return self._ask("predict_index", X)

    def predict(self, X):
        return self._ask("predict", X)

    def enter(self):
        """A thread starts running searches: wait for its turn."""
        self._token.acquire()

    @contextlib.contextmanager
    def paused(self):
        """Give up the turn while blocking on something another search will provide."""
        self._token.release()
        try:
            yield
        finally:
            self._token.acquire()

    def leave(self):
        """A thread has no search left (or failed): stop waiting for it, pass the turn."""
        with self._cond:
            self._running -= 1
            self._flush_if_all_waiting()
        self._token.release()

    def _ask(self, method, X):
        request = [method, X, None, None, False]
        with self._cond:
            self._pending.append(request)
            self._flush_if_all_waiting()
        with self.paused(), self._cond:
            while not request[4]:
                self._cond.wait()
        if request[3] is not None:
            raise request[3]
        return request[2]

    def _flush_if_all_waiting(self):
        if not self._pending or len(self._pending) < self._running:
            return
        batch, self._pending = self._pending, []
        for method in dict.fromkeys(r[0] for r in batch):
            group = [r for r in batch if r[0] == method]
            # A search whose samples are all being predicted for another search asks with
            # no rows, only to take part in the call.
            asking = [r for r in group if len(r[1])]
            try:
                out = np.zeros(0, dtype=np.int64)
                if asking:
                    rows = concat_rows([r[1] for r in asking])
                    out = np.asarray(getattr(self._model, method)(rows))
                start = 0
                for r in group:
                    r[2] = out[start : start + len(r[1])]
                    start += len(r[1])
            except BaseException as exc:  # every search of the call gets the model's error
                for r in group:
                    r[3] = exc
        for r in batch:
            r[4] = True
        self._cond.notify_all()


def run_batched(task, explain_one, n_rows, max_threads=64, starting=None):
    """``[explain_one(merged_task, i) for i in range(n_rows)]`` with merged model calls.

    ``task`` holds the model in its ``model`` attribute; ``explain_one`` gets a copy of it
    whose model merges the calls of the concurrent searches. At most ``max_threads`` searches
    run at once; each thread explains rows until none is left (``starting(i)``, if given, is
    called in the thread before row ``i``). An exception in a search (or the model) is raised
    here once every thread has stopped.
    """
    n_threads = max(1, min(n_rows, max_threads))
    # Every thread counts as running from the start, so no call is made before all have asked.
    merged_task = copy.copy(task)
    merged_task.model = merged = _MergedModel(task.model, n_threads)
    results = [None] * n_rows
    errors = []
    rows = iter(range(n_rows))
    lock = threading.Lock()

    def worker():
        merged.enter()
        try:
            while not errors:
                with lock:
                    i = next(rows, None)
                if i is None:
                    return
                if starting is not None:
                    starting(i)
                results[i] = explain_one(merged_task, i)
        except BaseException as exc:
            errors.append(exc)
        finally:
            merged.leave()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def run_shared(task, cache, explain_one, n_rows, max_threads=64):
    """``[explain_one(merged_task, i, view, merged) for i in range(n_rows)]``: the rows'
    searches run together (:func:`run_batched`) and merge their model calls; the runner the
    layer registers with :func:`skanchors._sharing.register_call_sharing`.

    ``cache`` is the explainer's prediction cache (or None); the searches see it through
    :class:`CallAccounts` (``view``), and each anchor's ``n_model_calls`` and
    ``n_rows_predicted`` are then those of the rows explained one after the other. ``merged``
    is the model that merges the calls (``merged_task.model``).
    """
    view = cache
    if cache is not None and cache.enabled:
        view = CallAccounts(cache)

    def one(merged_task, i):
        return explain_one(merged_task, i, view, merged_task.model)

    starting = view.starting if isinstance(view, CallAccounts) else None
    anchors = run_batched(task, one, n_rows, max_threads, starting)
    if isinstance(view, CallAccounts):
        requests = [view.requests_of(i) for i in range(n_rows)]
        for anchor, asked, (calls, rows) in zip(anchors, requests, view.attribute(requests)):
            if asked is not None:  # (else its searches counted their own calls and rows)
                anchor.n_model_calls, anchor.n_rows_predicted = calls, rows
    return anchors


class CallAccounts:
    """The prediction cache as the searches of one ``explain`` call that share model calls
    see it, counting what each search would have cost alone.

    Searches that run together (:func:`run_batched`) claim the rows they need from the cache in
    whatever order their threads take turns: which search predicts a row that two of them need, and
    so each anchor's ``n_model_calls`` and ``n_rows_predicted``, varied from run to run. This
    records, for every explained row (the one its thread is explaining: :meth:`starting`), the rows
    each request of its searches needed that the cache did not know before the call, and
    :meth:`attribute` counts them as if the rows had been explained one after the other in row
    order, as they are when they do not share calls: a row goes to the first search that needs it, a
    call to each request with a row of its own. The counts then depend neither on the threads' turns
    nor on whether the calls were shared; the model still predicts every row once.

    Everything else goes to the cache. Its ``compiled`` reads True, so that the searches ask
    it for every row (the stream blocks' label memos, which the dictionary cache reads to skip
    hash lookups, would hide rows another search had just predicted).
    """

    compiled = True

    def __init__(self, cache):
        self._wrapped = cache
        self._lock = threading.Lock()
        self._filled = []  # (namespace, hashes) predicted during this call
        self._requests = {}  # explained row -> [(namespace, hashes, known to the cache then)]
        self._row = threading.local()  # the row each thread is explaining

    def __getattr__(self, name):
        return getattr(self._wrapped, name)

    def claim_rows(self, namespace, hashes, owner):
        out = self._wrapped.claim_rows(namespace, hashes, owner)
        known = out[0] >= 0  # (read now: the caller fills the labels in)
        with self._lock:
            self._requests.setdefault(self._row.i, []).append((namespace, hashes, known))
        return out

    def fill(self, namespace, hashes, labels, owner):
        if labels is not None:
            with self._lock:
                self._filled.append((namespace, hashes))
        return self._wrapped.fill(namespace, hashes, labels, owner)

    def starting(self, i):
        """The calling thread now explains row ``i``: its requests count for that row."""
        self._row.i = i

    def requests_of(self, i):
        """The requests of the searches of row ``i`` (in their order), or None when they
        made none (a kept search, or searches that predict their own rows)."""
        with self._lock:
            return self._requests.get(i)

    def attribute(self, requests):
        """``(n_model_calls, n_rows_predicted)`` of each row, from its searches' requests (one
        list per row, in row order; None for a row that made none).

        A row is new to the call unless the cache knew it at the request and nobody
        predicted it during the call; each new row counts for the first request (in row
        order, then in each search's order) that needed it, and each request with a row of
        its own counts one call.
        """
        filled = {}
        for namespace, hashes in self._filled:
            filled.setdefault(namespace, []).append(hashes)
        filled = {ns: np.unique(np.concatenate(parts)) for ns, parts in filled.items()}
        flat = [(s, r) for s, search in enumerate(requests) for r in (search or ())]
        per_namespace = {}
        for j, (_, (namespace, hashes, known)) in enumerate(flat):
            per_namespace.setdefault(namespace, []).append((j, hashes, known))
        rows = np.zeros(len(flat), dtype=np.int64)
        for namespace, parts in per_namespace.items():
            hashes = np.concatenate([h for _, h, _ in parts])
            new = ~np.concatenate([k for _, _, k in parts])
            if namespace in filled:
                new |= np.isin(hashes, filled[namespace])
            owner = np.repeat([j for j, _, _ in parts], [len(h) for _, h, _ in parts])
            hashes, owner = hashes[new], owner[new]
            _, first = np.unique(hashes, return_index=True)  # (first occurrences, in order)
            rows += np.bincount(owner[first], minlength=len(flat))
        search = np.array([s for s, _ in flat], dtype=np.intp)
        n = len(requests)
        calls = np.bincount(search, weights=rows > 0, minlength=n).astype(np.int64)
        total = np.bincount(search, weights=rows, minlength=n).astype(np.int64)
        return list(zip(calls.tolist(), total.tolist()))
