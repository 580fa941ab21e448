"""The named interface between the core and the optional sharing of work across searches.

The tabular sampler draws from *streams* (part of the core: :mod:`skanchors.samplers`): sample
``i`` of the stream of a predicate set is generated from the explainer's seed, the set and
``i`` alone, so what a search sees depends neither on which other rows are explained, nor in
which order, process or chunk. Two things make streams pay, and both live in the optional
speed layer (:mod:`skanchors._speed`), which registers them here when it is imported:

- a **prediction cache** (:func:`register_cache`; the layer's is
  :class:`skanchors._speed.cache.SampleCache`): the model's prediction of every stream sample,
  the stream blocks drawn so far, and whole searches kept for later rows;
- a **call-sharing runner** (:func:`register_call_sharing`; the layer's is
  :func:`skanchors._speed.batching.run_shared`): the searches of several rows run together
  and their model calls are merged into one.

The core asks for them (:func:`new_cache`, :func:`call_sharing`) and, where the answer is
None, does without: every search predicts its own samples, and rows are explained one after
the other (or in joblib workers, as ``n_jobs`` says). Neither changes an anchor, only the
number of model calls and the time (the tests run the same rows both ways). The answer is
None when nothing is registered (the layer is not loaded) or sharing is switched off
(:func:`switched_off`, which ``skanchors._speed.disabled()`` uses); a cache also needs
``cache_size`` > 0 (:func:`skanchors.set_config`). The core never imports the layer.

What the core asks of a cache (``cache.<name>``): ``max_size``; ``enabled`` and ``compiled``
(whether it keeps predictions, and whether in the compiled table); ``get_search``,
``put_search``, ``has_searches`` (kept searches); ``get_block``, ``put_block`` (stream
blocks); ``label_memo``, ``count_hits``, ``claim_rows``, ``fill``, ``wait`` and ``epoch``
(predictions claimed, filled in and waited for; see
:meth:`skanchors._speed.cache.SampleCache.claim_rows`). What it asks of a runner:
``runner(task, cache, explain_one, n_rows)`` returns ``[explain_one(task', i, cache',
merged) for i in range(n_rows)]``, where ``task'`` is ``task`` whose model merges the calls of
the searches running together, ``cache'`` the cache (or a view of it) the searches use, and
``merged`` that model, whose ``paused()`` a search enters while it waits for rows another
search predicts.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

__all__ = [
    "Shared",
    "cache_matches",
    "call_sharing",
    "new_cache",
    "register_cache",
    "register_call_sharing",
    "switched_off",
]

_REGISTERED = {"cache": None, "runner": None}
_LOCK = threading.Lock()
_OFF = 0  # depth of switched_off() blocks


def register_cache(factory):
    """Register ``factory(max_size)``, which makes the prediction cache of a fitted explainer
    (see the module's notes for what the core asks of it)."""
    if not callable(factory):
        raise ValueError(f"factory must be callable, got {factory!r}.")
    with _LOCK:
        _REGISTERED["cache"] = factory


def register_call_sharing(runner):
    """Register ``runner(task, cache, explain_one, n_rows)``, which explains several rows with
    their model calls merged (see the module's notes)."""
    if not callable(runner):
        raise ValueError(f"runner must be callable, got {runner!r}.")
    with _LOCK:
        _REGISTERED["runner"] = runner


def new_cache(max_size):
    """A new prediction cache keeping at most ``max_size`` predictions, or None: sharing is
    switched off, no cache is registered, or ``max_size`` is 0."""
    factory = _REGISTERED["cache"]
    if _OFF or factory is None or int(max_size) <= 0:
        return None
    return factory(int(max_size))


def cache_matches(cache, max_size):
    """Whether ``cache`` (a cache or None) is what :func:`new_cache` would make now: the
    explainer keeps it, else it starts a new one (``set_config`` or the switch changed)."""
    wanted = not _OFF and _REGISTERED["cache"] is not None and int(max_size) > 0
    if cache is None:
        return not wanted
    return wanted and cache.max_size == int(max_size)


def call_sharing():
    """The registered call-sharing runner, or None (none registered, or switched off)."""
    return None if _OFF else _REGISTERED["runner"]


@contextmanager
def switched_off():
    """Within this block :func:`new_cache` and :func:`call_sharing` answer None: searches
    predict their own samples and rows are explained one after the other (the same anchors).
    Read when an explainer fits or explains, for the whole process."""
    global _OFF
    with _LOCK:
        _OFF += 1
    try:
        yield
    finally:
        with _LOCK:
            _OFF -= 1


class Shared:
    """What one search needs to read streams, and to share predictions where there is a cache.

    Parameters
    ----------
    cache : prediction cache or None
        The explainer's (:func:`new_cache`), or the view of it the runner hands the searches;
        None: the search predicts its own samples.
    seed : int
        The explainer's stream seed (from ``random_state``).
    namespace : hashable
        Which predictions are interchangeable: the model's class (classification) or "within
        tolerance of this target" (regression).
    merged : object with a ``paused()`` context manager, or None
        The call-merging model of the runner the search runs in (:func:`call_sharing`), if
        any: a search whose samples are all being predicted by others must still take part
        in the merged call, and gives up its turn while it waits for them.
    """

    def __init__(self, cache, seed, namespace, merged=None):
        self.cache = cache
        self.seed = int(seed)
        self.namespace = namespace
        self.merged = merged

    @property
    def caching(self):
        """Whether predictions go through a cache that keeps them."""
        return self.cache is not None and self.cache.enabled
