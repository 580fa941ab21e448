"""Explaining rows: one chunk of rows, then one row, for :class:`~skanchors.AnchorExplainer`.

The explainer's model task (a class to keep, or a prediction to stay near), the rows of a
chunk explained one after the other or together (with the call-sharing runner of
:mod:`skanchors._sharing`, where there is one), the keys under which a row's search is found
again in the prediction cache, and the :class:`~skanchors.Anchor` built from a search's
result.
"""

from __future__ import annotations

import copy
import time

import numpy as np
import pandas as pd

from . import _sharing
from ._explanation import Anchor, Step
from ._search import beam_search, estimate

_N_EXAMPLES = 10


def _explain_chunk(
    sampler, task, rows, targets, seeds, params, verbose, share=True, shared=None, positions=None
):
    """Explain the rows of one chunk; with ``share``, their searches share model calls where a
    call-sharing runner is registered (:func:`skanchors._sharing.call_sharing`), else they run
    one after the other (the same anchors).

    ``shared`` is ``(cache, seed, search parameters)``: the perturbation streams' seed and the
    prediction cache (None: none); ``positions``: the rows' positions in the call's ``X`` (for
    ``verbose``).
    """

    def one(task, i, cache=None if shared is None else shared[0], merged=None):
        context = None
        if shared is not None:
            context = _sharing.Shared(cache, shared[1], task.namespace(targets[i]), merged)
        search_params = shared[2] if shared is not None else None
        anchor = _explain_one(
            sampler, task, rows[i], targets[i], int(seeds[i]), params, context, search_params
        )
        task.finish(anchor, targets[i])  # what it predicts, in the model's terms
        if verbose:
            # (rows explained together finish in any order: each line says which it is)
            where = i if positions is None else positions[i]
            print(f"[skanchors] row {where}: {anchor} ({anchor.wall_time:.2f} s)", flush=True)
        return anchor

    runner = _sharing.call_sharing() if share and len(rows) > 1 else None
    if runner is None:
        return [one(task, i) for i in range(len(rows))]
    return runner(task, None if shared is None else shared[0], one, len(rows))


class _Classification:
    """Precision = the perturbation gets the target class."""

    def __init__(self, model, classes):
        self.model = model
        self.classes = classes

    def finish(self, anchor, target):
        anchor.prediction = self.classes[target]

    def labeler(self, target):
        return self.model.predict_index, int(target)

    @staticmethod
    def namespace(target):
        return "class"

    def outcomes(self, X, explainer):
        return explainer.classes_[self.model.predict_index(X)]

    @staticmethod
    def agrees(outcomes, prediction):
        return outcomes == prediction


class _Regression:
    """Precision = the perturbation's prediction stays within tolerance of the target."""

    def __init__(self, model, tolerance):
        self.model = model
        self.tolerance = tolerance

    def finish(self, anchor, target):
        anchor.prediction = float(target)
        anchor.tolerance = self.tolerance

    def labeler(self, target):
        target, tol, predict = float(target), self.tolerance, self.model.predict

        def within(X):
            return (np.abs(predict(X) - target) <= tol).astype(np.int64)

        return within, 1

    def outcomes(self, X, explainer):
        return self.model.predict(X)

    def namespace(self, target):
        return ("within", float(target), float(self.tolerance))

    def agrees(self, outcomes, prediction):
        return np.abs(outcomes - prediction) <= self.tolerance


def _explain_one(sampler, task, row, target, seed, params, shared=None, search_params=None):
    start = time.perf_counter()
    instance = sampler.instance(row)
    # Rows whose predicates are the same in the reference data's terms go through the same
    # search (see the prediction cache's get_search): a later one gets the earlier one's
    # anchor without searching again.
    key = None
    if shared is not None and shared.caching:
        key = _search_key(instance, shared.namespace, target, shared.seed, search_params)
        found = None if key is None else shared.cache.get_search(key)
        if found is not None:
            return _reuse(found, row, start)
    fallback = sampler.capabilities.fallback
    if fallback:
        # Two searches, each at half the risk (a union bound): the instance first (tables:
        # the reference rows), the fallback (replaced rows) where no rule validates on it.
        params = dict(params, delta=params["delta"] / 2)
    anchor = _search_one(instance, task, row, target, seed, params, shared, start)
    searched = instance
    if not anchor.is_anchor and fallback:
        searched = replaced = sampler.fallback_instance(row)
        other = _search_one(replaced, task, row, target, seed, params, shared, start)
        other.n_model_calls += anchor.n_model_calls
        other.n_rows_predicted += anchor.n_rows_predicted
        anchor = other
    # (the modality's own anchor: images get their segmentation; others stay as they are)
    anchor = sampler.wrap_explanation(anchor, searched)
    if key is not None:
        shared.cache.put_search(key, _reuse(anchor, None, None))
        anchor._search_key = key  # for the parent process, when this is a joblib worker
    return anchor


def _plain(target):
    """A class index or a regression target as a plain hashable number."""
    return float(target) if isinstance(target, (float, np.floating)) else int(target)


def _row_identity(row):
    """A hashable stand-in for a row's content (equal rows, equal keys), or None: a
    document, a numeric array's bytes, a one-row frame's columns and values."""
    try:
        if isinstance(row, str):
            return row
        if isinstance(row, np.ndarray) and row.dtype.kind in "biuf":
            return (row.dtype.str, row.shape, row.tobytes())
        if isinstance(row, pd.DataFrame):
            key = (tuple(row.columns), tuple(row.dtypes.astype(str)), tuple(row.iloc[0]))
            hash(key)
            return key
    except TypeError:  # unhashable values: no key, the row is searched on its own
        return None
    return None


def _search_key(instance, namespace, target, seed, search_params):
    """The key of the kept searches (the prediction cache's ``get_search``) for one row's search,
    or None when it has none (a bandit of the user's own, an instance that says none)."""
    row_key = instance.search_key()
    if row_key is None or search_params is None:
        return None
    return (row_key, seed, namespace, _plain(target), search_params)


def _reuse(anchor, row, start):
    """A copy of ``anchor`` for another row (or, with ``row`` None, to keep): no model call
    made for it, its own time, its own copies of the examples."""
    out = copy.copy(anchor)
    out.steps = list(anchor.steps)
    out.examples_hold = _copy_rows(anchor.examples_hold)
    out.examples_fail = _copy_rows(anchor.examples_fail)
    out.instance = row
    if start is not None:
        out.n_model_calls = 0
        out.n_rows_predicted = 0
        out.wall_time = time.perf_counter() - start
    return out


def _copy_rows(rows):
    return rows.copy() if hasattr(rows, "copy") else rows


def _search_one(instance, task, row, target, seed, params, shared, start):
    # Samples come from the instance's streams when it has them and the search is shared
    # (every tabular search of an explainer); a generator is then not made.
    streams = shared is not None and instance.capabilities.streams
    rng = None if streams else np.random.default_rng(seed)
    predict, label = task.labeler(target)
    result = beam_search(instance, predict, label, rng=rng, shared=shared, **params)
    store = result.store
    # the bounds at the level the search validated at, so that is_anchor reads off them
    beta = result.beta
    counts, precisions, lb, ub = estimate(store, result.order, beta)
    n = int(counts[-1])
    precision = float(precisions[-1]) if n else float("nan")
    if result.validated is not None:
        # an anchor's precision is its validation's, on samples the choice did not see
        n, precision, lb, ub = result.validated
    preds = [instance.predicates[p] for p in result.shown()]
    steps = []
    for k in range(1, len(result.order) + 1):
        steps.append(
            Step(
                tuple(instance.predicates[p] for p in result.shown(k)),
                float(precisions[k - 1]) if counts[k - 1] else float("nan"),
                float(instance.reference_coverage(tuple(sorted(result.order[:k])))),
            )
        )
    valid = store.valid_indices(tuple(sorted(result.anchor)))
    correct = store.correct[valid]
    hold = valid[correct][:_N_EXAMPLES]
    fail = valid[~correct][:_N_EXAMPLES]
    anchor = Anchor(
        predicates=tuple(preds),
        prediction=target,
        precision=precision,
        coverage=float(instance.reference_coverage(tuple(sorted(result.anchor)))),
        is_anchor=result.is_anchor,
        threshold=params["threshold"],
        precision_bounds=(lb, ub),
        coverage_perturbation=float(result.coverage),
        n_samples=n,
        steps=steps,
        examples_hold=instance.decode(store.keys_of(hold)),
        examples_fail=instance.decode(store.keys_of(fail)),
        n_model_calls=store.n_model_calls,
        n_rows_predicted=store.n_rows_predicted,
        wall_time=time.perf_counter() - start,
        instance=row,
        perturbation=instance.perturbation,
    )
    return anchor
