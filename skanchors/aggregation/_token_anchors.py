"""Anchor tests of single tokens, batched across documents (the sampling rounds).

The worker side of :class:`~skanchors.aggregation.GlobalAnchorAggregator`: given the tokens of
several documents and their thresholds, sample until each token is decided anchor / not anchor.
The test, the shared perturbation pool and the batching of model calls are described in
:mod:`skanchors.aggregation.aggregator` ("Decisions the paper leaves open").
"""

from __future__ import annotations

import math
import time

import numpy as np

from .._bandit import kl_lower_bound, kl_upper_bound
from .._hashing import row_hash
from .._search import VALIDATION_TOLERANCE
from .._validation import check_memory
from ..samplers.text import TextInstance

_MAX_ROUNDS = 20  # a token is decided by its mean after 20 * sample_size samples


class _Document:
    """Sampling state of one document: its instance, generator and label cache."""

    __slots__ = ("instance", "target", "rng", "positions", "cache", "n_rows", "pending")

    def __init__(self, instance, target, rng, positions):
        self.instance = instance
        self.target = int(target)
        self.rng = rng
        self.positions = positions
        self.cache = {}  # row hash -> predicted class index (each distinct row predicted once)
        self.n_rows = 0
        self.pending = None

    def sample(self, forced, n):
        """``n`` perturbations per entry of ``forced`` (word indices kept; -1: none kept).

        Words are masked independently (``keep_proba``); row ``j * n + r`` is the ``r``-th draw
        with word ``forced[j]`` kept. Returns ``(keys, holds)`` as ``instance.sample``.
        """
        inst = self.instance
        if type(inst).sample is not TextInstance.sample:  # another sampler: its own protocol
            parts = [inst.sample(() if f < 0 else (int(f),), n, self.rng) for f in forced]
            return np.concatenate([k for k, _ in parts]), np.concatenate([h for _, h in parts])
        keep = inst._keep(len(forced) * n, self.rng)
        cols = np.repeat(np.asarray(forced, dtype=np.int64), n)
        ok = cols >= 0
        keep[np.flatnonzero(ok), cols[ok]] = True
        return inst._keys(keep, self.rng), keep


def _label_all(model, requests):
    """Predicted class of every row of every ``(document, keys)`` request, in ONE model call.

    Rows are deduplicated per document (against everything the document predicted before, by
    the hash of their keys); the distinct new rows of all documents are decoded and sent to
    the model together. Returns the list of label arrays and the number of model calls (0/1).
    """
    todo_texts, todo_slots, out = [], [], []
    for doc, keys in requests:
        hashes = row_hash(keys)
        uniq, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        cache = doc.cache
        hl = uniq.tolist()
        labels = np.fromiter((cache.get(h, -1) for h in hl), np.int64, len(hl))
        todo = np.flatnonzero(labels < 0)
        if todo.size:
            todo_texts.extend(doc.instance.decode(keys[first[todo]]))
            todo_slots.append((doc, labels, todo, [hl[t] for t in todo.tolist()]))
            doc.n_rows += int(todo.size)
        out.append((labels, inverse.ravel()))
    n_calls = 0
    if todo_texts:
        predicted = np.asarray(model.predict_index(todo_texts), dtype=np.int64)
        n_calls = 1
        start = 0
        for doc, labels, todo, hl in todo_slots:
            got = predicted[start : start + len(todo)]
            start += len(todo)
            labels[todo] = got
            doc.cache.update(zip(hl, got.tolist()))
    return [labels[inverse] for labels, inverse in out], n_calls


def _test_chunk(sampler, model, items, params, time_left=None):
    """Anchor tests of the given tokens of several documents, batched across documents.

    ``items`` holds ``(document, target, seed, positions, taus, lows)``: a token is an anchor
    when its mean precision is ``>= tau`` and its lower bound ``> low - 0.05`` (``low <= tau``;
    ``low < tau`` is the adaptive threshold's ``"confidence"`` mode). Every sampling round draws
    the samples of *all* documents of the chunk and predicts them in one model call: the shared
    pools (or, for the naive test, each token's own samples) first, then one round per step for
    the tokens still undecided, whatever their document. Each document's draws come from its own
    generator (seeded by ``seed``) in an order that depends only on its own tokens, so a
    document's results do not depend on the other documents of the chunk.

    A round draws, for each document, the pool again (``sample_size / keep_proba`` rows that
    serve all its undecided tokens) when it has more than ``1 / keep_proba`` undecided tokens,
    else ``sample_size`` rows per undecided token with the token kept: whichever predicts fewer
    rows. So a round costs at most ``2 * sample_size / keep_proba`` rows of a document whatever
    its length (with ``shared_pool``), and at most ``1 + 20`` rounds are drawn.

    ``time_left``: seconds; a round is not started after them (None: no limit).

    Returns ``(results, n_model_calls)`` with one ``(positions, is_anchor, n_rows_predicted)``
    per item; ``results`` is None when ``time_left`` ran out first.
    """
    deadline = None if time_left is None else time.perf_counter() + time_left
    delta, sample_size = params["delta"], int(params["sample_size"])
    shared_pool = params["shared_pool"]
    beta = math.log(1.0 / delta)
    eps = VALIDATION_TOLERANCE
    cap = _MAX_ROUNDS * sample_size
    docs, results = [], [None] * len(items)
    for j, (document, target, seed, positions, _taus, _lows) in enumerate(items):
        positions = np.asarray(positions, dtype=np.int64)
        if positions.size == 0:
            results[j] = (positions, np.zeros(0, dtype=bool), 0)
            continue
        inst = sampler.instance(document)
        docs.append((j, _Document(inst, target, np.random.default_rng(seed), positions)))
    if not docs:
        return results, 0
    sizes = np.array([len(d.positions) for _, d in docs])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n_tok = int(offsets[-1])
    n = np.zeros(n_tok)
    pos = np.zeros(n_tok)
    taus = np.concatenate([np.asarray(items[j][4], dtype=float) for j, _ in docs])
    lows = np.concatenate([np.asarray(items[j][5], dtype=float) for j, _ in docs])
    n_calls = 0

    # Round 0: the pool of each document (or the naive per-token samples).
    if deadline is not None and time.perf_counter() >= deadline:
        return None, n_calls
    requests, plans = [], []
    for k, (_, d) in enumerate(docs):
        keep = float(getattr(d.instance, "keep_proba", 0.5))
        pooled = shared_pool and d.instance.capabilities.exact_reuse
        # (a lower bound of a round's draw: a random number, a flag and a key per word)
        rows = sample_size * min(len(d.positions), 1 / keep)
        check_memory("sample_size", sample_size, 13 * rows * d.instance.n_predicates, "a draw")
        # The pool costs sample_size / keep rows and serves every token; it only pays off when
        # the document has more than 1 / keep tokens to test (else forced draws are cheaper).
        if pooled and len(d.positions) * keep > 1.0:
            keys, holds = d.sample([-1], int(math.ceil(sample_size / keep)))
            plans.append((k, None, holds))
        else:
            keys, _ = d.sample(d.positions, sample_size)
            plans.append((k, np.arange(len(d.positions)), None))
        requests.append((d, keys))
    labels, c = _label_all(model, requests)
    n_calls += c
    for (k, local, holds), lab in zip(plans, labels):
        d = docs[k][1]
        sl = slice(offsets[k], offsets[k + 1])
        correct = lab == d.target
        if holds is None:
            n[sl] += sample_size
            pos[sl] += correct.reshape(len(local), sample_size).sum(axis=1)
        else:
            h = holds[:, d.positions]
            n[sl] += h.sum(axis=0)
            pos[sl] += (h & correct[:, None]).sum(axis=0)

    # Follow-up rounds: every undecided token of every document, one model call per round.
    owner = np.repeat(np.arange(len(docs)), sizes)
    while True:
        mean = pos / np.maximum(n, 1)
        level = beta / np.maximum(n, 1)
        lb = kl_lower_bound(mean, level)
        ub = kl_upper_bound(mean, level)
        undecided = ((mean >= taus) & (lb < lows - eps)) | ((mean < taus) & (ub >= taus + eps))
        undecided = (undecided & (n < cap)) | (n == 0)
        if not undecided.any():
            break
        if deadline is not None and time.perf_counter() >= deadline:
            return None, n_calls
        idx = np.flatnonzero(undecided)
        requests, plans = [], []
        for k in np.unique(owner[idx]).tolist():
            d = docs[k][1]
            mine = idx[owner[idx] == k]
            words = d.positions[mine - offsets[k]]
            keep = float(getattr(d.instance, "keep_proba", 0.5))
            pooled = shared_pool and d.instance.capabilities.exact_reuse
            if pooled and len(mine) * keep > 1.0:
                # a pool again: its rows that keep a token are draws of D(z | token kept)
                keys, holds = d.sample([-1], int(math.ceil(sample_size / keep)))
                plans.append((mine, holds[:, words]))
            else:
                keys, _ = d.sample(words, sample_size)
                plans.append((mine, None))
            requests.append((d, keys))
        labels, c = _label_all(model, requests)
        n_calls += c
        for (mine, kept), (d, _), lab in zip(plans, requests, labels):
            correct = lab == d.target
            if kept is None:
                n[mine] += sample_size
                pos[mine] += correct.reshape(len(mine), sample_size).sum(axis=1)
            else:
                n[mine] += kept.sum(axis=0)
                pos[mine] += (kept & correct[:, None]).sum(axis=0)
    # decided by the bounds, or by the mean once the cap is reached (see the docstring of
    # skanchors.aggregation.aggregator, "Anchor test of a token")
    anchor = (mean >= taus) & ((lb > lows - eps) | (n >= cap))
    for k, (j, d) in enumerate(docs):
        results[j] = (d.positions, anchor[offsets[k] : offsets[k + 1]], d.n_rows)
    return results, n_calls
