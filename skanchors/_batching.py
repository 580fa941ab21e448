"""Searches of several rows that share their model calls.

An anchor search is a loop of small model calls (one per bandit round). A model with a high
cost per call (a random forest predicts tree by tree; a transformer runs a forward pass) then
spends most of an explanation in call overhead. :func:`run_batched` runs the searches of several
rows in threads and merges their calls: a call is made when every running search is waiting for
predictions, on the concatenation of all their rows, and each search gets its own part back.
Each search still draws from its own generator and sees exactly the predictions it would see
alone, so the anchors do not change; only the number of model calls does.
"""

from __future__ import annotations

import threading

import numpy as np

from ._base import concat_rows

__all__ = ["run_batched"]


class _Merger:
    """Collects the requests of the running searches; the last one to arrive makes the call."""

    def __init__(self, method, n_running):
        self.method = method
        self.running = n_running
        self.cond = threading.Condition()
        self.pending = []  # [X, result, error, done] per waiting request
        self.n_calls = 0

    def predict(self, X):
        request = [X, None, None, False]
        with self.cond:
            self.pending.append(request)
            self._flush_if_all_waiting()
            while not request[3]:
                self.cond.wait()
        if request[2] is not None:
            raise request[2]
        return request[1]

    def leave(self):
        """A search finished (or failed): stop waiting for it."""
        with self.cond:
            self.running -= 1
            self._flush_if_all_waiting()

    def _flush_if_all_waiting(self):
        if not self.pending or len(self.pending) < self.running:
            return
        batch, self.pending = self.pending, []
        try:
            out = np.asarray(self.method(concat_rows([r[0] for r in batch])))
            self.n_calls += 1
            start = 0
            for r in batch:
                stop = start + len(r[0])
                r[1] = out[start:stop]
                start = stop
        except BaseException as exc:  # every waiting search gets the model's error
            for r in batch:
                r[2] = exc
        for r in batch:
            r[3] = True
        self.cond.notify_all()


class _MergedModel:
    """Stands for the model in the searches: ``predict_index`` / ``predict`` go to a merger."""

    def __init__(self, model):
        self._model = model
        self._mergers = {}

    def start(self, n_running):
        self._mergers = {
            name: _Merger(getattr(self._model, name), n_running)
            for name in ("predict_index", "predict")
            if hasattr(self._model, name)
        }

    def leave(self):
        for merger in self._mergers.values():
            merger.leave()

    def predict_index(self, X):
        return self._mergers["predict_index"].predict(X)

    def predict(self, X):
        return self._mergers["predict"].predict(X)


def run_batched(task, explain_one, n_rows, max_threads=64):
    """``[explain_one(merged_task, i) for i in range(n_rows)]`` with merged model calls.

    ``task`` holds the model in its ``model`` attribute; ``explain_one`` gets a copy of it
    whose model merges the calls of the concurrent searches. At most ``max_threads`` searches
    run at once; each thread explains rows until none is left. An exception in a search (or
    the model) is raised here once every thread has stopped.
    """
    import copy

    merged = _MergedModel(task.model)
    merged_task = copy.copy(task)
    merged_task.model = merged
    n_threads = max(1, min(n_rows, max_threads))
    merged.start(n_threads)  # every thread counts from the start: no call is made too early
    results = [None] * n_rows
    errors = []
    next_row = iter(range(n_rows))
    lock = threading.Lock()

    def worker():
        try:
            while True:
                with lock:
                    i = next(next_row, None)
                if i is None or errors:
                    return
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
