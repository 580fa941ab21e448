"""Quality measures of explanations.

:func:`aopc_k` measures a set of global top terms per class by how much removing them from the
documents lowers the model's probability of the class (seed 001, Mor, Belinkov and Kimelfeld,
AAAI 2024, eq. 7); it is :meth:`GlobalAnchorAggregator.score
<skanchors.GlobalAnchorAggregator.score>`.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_model, check_probabilities
from .models import as_probability_model
from .samplers.text import UnkSampler, check_documents, tokenize

__all__ = ["aopc_k", "aopc_k_per_class"]


def _terms(value, k, label=None):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        # a bare word would be read as its letters
        raise TypeError(
            f"top_terms[{label!r}] must be a list of words (str) or (word, score) pairs, got "
            f"{value!r}; for one word, write [{value!r}]."
        )
    words = []
    for item in value:
        word = item[0] if isinstance(item, (tuple, list)) else item
        if not isinstance(word, str):
            raise TypeError(f"top terms must be words (str) or (word, score) pairs, got {item!r}.")
        words.append(word)
    return words[:k]


def aopc_k_per_class(model, documents, top_terms, k=20, *, removal="delete", lowercase=True):
    """AOPC^k of the top terms of every class (eq. 7 of Mor, Belinkov and Kimelfeld 2024).

    For a class ``c`` with top terms ``w_1, ..., w_k`` (best first) and the documents ``S[c]``
    that the model assigns to ``c``::

        AOPC^k(c) = 1 / (k + 1) * mean_{d in S[c]} sum_{i=1..k} (f(d, c) - f(d^i, c))

    where ``d^i`` is ``d`` with every occurrence of ``w_1, ..., w_i`` removed and ``f(., c)`` the
    model's probability of ``c``. Documents that contain none of the terms are unchanged and
    count with a drop of 0. When fewer than ``k`` terms are given, ``d^i`` for ``i`` beyond
    the list is ``d`` with all of them removed (there is nothing more to remove), and the
    divisor stays ``k + 1``: padding a list with words that do not move the model changes
    nothing, and a list cannot gain by stopping short either.

    Parameters
    ----------
    model : fitted classifier with ``predict_proba``, or callable
        Maps a list of str to class probabilities, in [0, 1] (scores or logits are
        refused: AOPC measures drops of probability). A class rather than a fitted instance
        is refused.
    documents : list of str
        The collection ``S``.
    top_terms : dict
        ``{class label: [word, ...] or [(word, score), ...]}``, best first; classes missing from
        the dict are not measured.
    k : int >= 1, default=20
    removal : "delete" or str, default="delete"
        ``"delete"`` removes the word (and the whitespace that would double); any other string
        replaces it, e.g. ``"UNK"`` or a tokenizer's mask token.
    lowercase : bool, default=True
        Match words case-insensitively (as :class:`~skanchors.GlobalAnchorAggregator`
        aggregates them).

    Returns
    -------
    values : dict
        ``{class label: AOPC^k}`` for each class of ``top_terms`` that the model predicts for at
        least one document.

    Examples
    --------
    >>> import numpy as np
    >>> def model(texts):  # p(spam) = 0.4 per spam word present, capped at 1
    ...     p = np.array([min(1.0, 0.4 * sum(w in t.split() for w in ("win", "free")))
    ...                   for t in texts])
    ...     return np.column_stack([1 - p, p])
    >>> aopc_k_per_class(model, ["win free cash", "win now"], {1: ["win", "free"]}, k=2)
    {1: 0.4}
    """
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}.")
    if not isinstance(removal, str):
        raise TypeError(f"removal must be 'delete' or a replacement str, got {removal!r}.")
    if not isinstance(top_terms, dict):
        raise TypeError(f"top_terms must be a dict {{class: [words]}}, got {type(top_terms)}.")
    docs = check_documents(documents, "documents", allow_wordless=True)
    check_model(model, "model", "aopc_k")
    proba_model = as_probability_model(model)
    proba = proba_model.predict_proba(docs)
    check_probabilities(proba, "AOPC measures how much they drop")
    classes = list(proba_model.classes_.tolist())
    predicted = proba.argmax(axis=1)
    sampler = UnkSampler(token=None if removal == "delete" else removal).fit(["x"])
    norm = str.lower if lowercase else (lambda w: w)
    out = {}
    for label, value in top_terms.items():
        key = label.item() if hasattr(label, "item") else label
        if key not in classes:
            raise ValueError(f"top_terms has class {label!r}; the model's classes are {classes}.")
        c = classes.index(key)
        words = _terms(value, k, label)
        rank = {}
        for i, w in enumerate(words):
            rank.setdefault(norm(w), i)
        members = np.flatnonzero(predicted == c)
        if members.size == 0 or not words:
            if members.size:
                out[label] = 0.0
            continue
        texts, owners, weights = [], [], []
        for d in members.tolist():
            tokens = tokenize(docs[d])
            ranks = np.array([rank.get(norm(w), len(words)) for w, _, _ in tokens], dtype=int)
            hits = sorted({int(r) for r in ranks if r < len(words)})
            if not hits:
                continue
            inst = sampler.instance(docs[d])
            # d^i only changes at the ranks of terms the document contains: prefix i uses the
            # document with every term of rank <= i removed, for i in [hits[j], hits[j+1]),
            # and the last removal holds through rank k (a list shorter than k included)
            bounds = hits + [k]
            for j, r in enumerate(hits):
                keys = np.where(ranks <= r, 0, -1).astype(np.int32)[None, :]
                texts.append(inst.decode(keys)[0])
                owners.append(d)
                weights.append(bounds[j + 1] - r)
        total = 0.0
        if texts:
            p_new = proba_model.predict_proba(texts)[:, c]
            drops = proba[np.asarray(owners), c] - p_new
            total = float(np.dot(drops, np.asarray(weights, dtype=float)))
        out[label] = total / members.size / (k + 1)
    return out


def aopc_k(model, documents, top_terms, k=20, *, removal="delete", lowercase=True):
    """Mean over classes of :func:`~skanchors.metrics.aopc_k_per_class`: one number, higher
    is better.

    Parameters are those of :func:`aopc_k_per_class`.

    Returns
    -------
    score : float
        ``NaN`` when no class of ``top_terms`` is predicted for any document.

    Examples
    --------
    >>> import numpy as np
    >>> def model(texts):
    ...     p = np.array([0.9 if "free" in t.split() else 0.2 for t in texts])
    ...     return np.column_stack([1 - p, p])
    >>> round(aopc_k(model, ["free cash", "hello"], {0: ["hello"], 1: ["free"]}, k=1), 3)
    0.175
    """
    values = aopc_k_per_class(model, documents, top_terms, k, removal=removal, lowercase=lowercase)
    return float(np.mean(list(values.values()))) if values else float("nan")
