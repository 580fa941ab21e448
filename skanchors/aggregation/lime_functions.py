"""Global aggregations of LIME weights (van der Linden, Haned and Kanoulas 2019).

Pure functions of per-class sums of LIME weights, the counterparts for LIME of the anchor
aggregations of :mod:`~skanchors.aggregation.functions`. Every array has shape
``(n_words, n_classes)``; ``NaN`` means "not ranked" (the word is in no document of the class,
or a filter removed it). For a class ``c``, ``S[c]`` is the set of documents the model predicts
``c`` and ``w_{d,j}`` the LIME weight of word ``j`` in document ``d`` for class ``c`` (summed
over the word's positions in ``d``; 0 when K-Lasso did not select it):

``weight_sums``
    ``sum_{d in S[c]} w_{d,j}`` (signed: positive pushes towards ``c``).
``abs_sums``
    ``sum_{d in S[c]} |w_{d,j}|``.
``doc_counts``
    ``|{d in S[c] : j occurs in d}|``, whether or not LIME selected ``j`` there.

The aggregations:

``"sqrt"`` -- global importance of SP-LIME (Ribeiro et al. 2016), van der Linden's baseline
    ``I_j^c = sqrt(sum_{d in S[c]} |w_{d,j}|)``.
``"average"`` -- Global Average Importance
    ``A_j^c = (1 / doc_counts) sum_{d in S[c]} w_{d,j}``: signed, over the documents where ``j``
    occurs, so a word LIME seldom selects is averaged down by its zeros.
``"homogeneity"`` -- Global Homogeneity-weighted Importance (GAM-style)
    ``p_j^c = I_j^c / sum_c' I_j^c'``, ``H_j = -sum_c p_j^c log p_j^c`` and
    ``H^c_j = (1 - (H_j - H_min) / (H_max - H_min)) I_j^c`` with ``H_min``, ``H_max`` over the
    words considered; a word whose importance is spread over the classes is penalised (the
    seed's ``G_h``, eq. 6, with LIME weights for anchor counts).

Examples
--------
>>> import numpy as np
>>> abs_sums = np.array([[4.0, 0.0], [1.0, 1.0]])
>>> lime_sqrt(abs_sums).tolist()
[[2.0, 0.0], [1.0, 1.0]]
>>> lime_homogeneity(abs_sums).tolist()
[[2.0, 0.0], [0.0, 0.0]]
"""

from __future__ import annotations

import numpy as np

from .functions import _shaped

__all__ = [
    "LIME_AGGREGATIONS",
    "aggregate_lime",
    "lime_average",
    "lime_homogeneity",
    "lime_sqrt",
    "lime_weight_sums",
]

#: Names accepted by :func:`aggregate_lime` (and ``GlobalLimeAggregator(aggregation=...)``).
LIME_AGGREGATIONS = ("sqrt", "average", "homogeneity")


def _as_array(a, name, *, non_negative=False):
    a = np.asarray(a, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-d (n_words, n_classes), got shape {a.shape}.")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite.")
    if non_negative and (a < 0).any():
        raise ValueError(f"{name} must be non-negative.")
    return a


def lime_sqrt(abs_sums):
    """``I_j^c = sqrt(sum_{d in S[c]} |w_{d,j}|)``: SP-LIME's global importance.

    Parameters
    ----------
    abs_sums : array-like of shape (n_words, n_classes)
        Summed absolute LIME weights.

    Returns
    -------
    scores : ndarray of shape (n_words, n_classes)

    Examples
    --------
    >>> lime_sqrt([[0.25, 0.0], [1.0, 0.04]]).tolist()
    [[0.5, 0.0], [1.0, 0.2]]
    """
    return np.sqrt(_as_array(abs_sums, "abs_sums", non_negative=True))


def lime_average(weight_sums, doc_counts):
    """Signed mean LIME weight over the documents of the class that contain the word.

    ``A_j^c = sum_{d in S[c]} w_{d,j} / |{d in S[c] : j in d}|``; ``NaN`` where the word is in
    no document of the class.

    Parameters
    ----------
    weight_sums : array-like of shape (n_words, n_classes)
        Summed (signed) LIME weights.
    doc_counts : array-like of shape (n_words, n_classes)
        Documents of each class that contain each word.

    Returns
    -------
    scores : ndarray of shape (n_words, n_classes)

    Examples
    --------
    >>> lime_average([[0.6, -0.2]], [[3, 0]]).round(3).tolist()
    [[0.2, nan]]
    """
    ws = _as_array(weight_sums, "weight_sums")
    dc = _as_array(doc_counts, "doc_counts", non_negative=True)
    if ws.shape != dc.shape:
        raise ValueError(f"weight_sums {ws.shape} and doc_counts {dc.shape} differ in shape.")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(dc > 0, ws / np.where(dc > 0, dc, 1.0), np.nan)


def lime_homogeneity(abs_sums, mask=None):
    """Homogeneity-weighted importance: ``I_j^c`` penalised by its entropy across classes.

    With ``I_j^c`` of :func:`lime_sqrt`, ``p_j^c = I_j^c / sum_c' I_j^c'``,
    ``H_j = -sum_c p_j^c log p_j^c`` (natural log, ``0 log 0 = 0``) and::

        H_j^c = (1 - (H_j - H_min) / (H_max - H_min)) * I_j^c

    where ``H_min`` and ``H_max`` are taken over the words of ``mask`` with a nonzero
    importance in some class. When all of them have the same entropy the factor is 1. Words
    without importance score 0; words outside ``mask`` score ``NaN``.

    Parameters
    ----------
    abs_sums : array-like of shape (n_words, n_classes)
        Summed absolute LIME weights.
    mask : bool array of shape (n_words,) or None
        Words taking part (e.g. not stop words, frequent enough); default all.

    Returns
    -------
    scores : ndarray of shape (n_words, n_classes)

    Examples
    --------
    >>> s = lime_homogeneity([[9.0, 0.0], [4.0, 4.0], [1.0, 0.0]])
    >>> s.round(3).tolist()  # entropies 0, log 2, 0 -> factors 1, 0, 1
    [[3.0, 0.0], [0.0, 0.0], [1.0, 0.0]]
    """
    imp = lime_sqrt(abs_sums)
    n = imp.shape[0]
    mask = np.ones(n, dtype=bool) if mask is None else _shaped(mask, "mask", (n,), bool)
    total = imp.sum(axis=1, keepdims=True)
    p = np.divide(imp, total, out=np.zeros_like(imp), where=total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0).sum(axis=1)
    some = mask & (total[:, 0] > 0)
    factor = np.zeros(n)
    if some.any():
        lo, hi = ent[some].min(), ent[some].max()
        factor[some] = 1.0 if hi - lo <= 0 else 1.0 - (ent[some] - lo) / (hi - lo)
    out = factor[:, None] * imp
    out[~mask] = np.nan
    return out


def aggregate_lime(
    name, weight_sums, abs_sums, doc_counts, *, n_occurrences=None, min_count=1, mask=None
):
    """Scores of LIME aggregation ``name``, with the word filters applied.

    Parameters
    ----------
    name : {"sqrt", "average", "homogeneity"}
    weight_sums, abs_sums, doc_counts : array-like of shape (n_words, n_classes)
        Signed sums, absolute sums of the LIME weights, and documents of each class containing
        each word (see the module docstring).
    n_occurrences : array-like of shape (n_words,) or None
        Occurrences of each word in the collection; default ``doc_counts`` summed over classes.
    min_count : int, default=1
        Words with fewer occurrences score ``NaN``.
    mask : bool array of shape (n_words,) or None
        Words that may be ranked (e.g. not stop words); the others score ``NaN`` and do not
        enter the entropy range of ``"homogeneity"``.

    Returns
    -------
    scores : ndarray of shape (n_words, n_classes)
        ``NaN`` where the word is filtered out or in no document of the class.

    Examples
    --------
    >>> aggregate_lime("average", [[0.6, 0.0], [0.1, 0.0]], [[0.6, 0.0], [0.1, 0.0]],
    ...                [[3, 0], [1, 0]], min_count=2).tolist()
    [[0.2, nan], [nan, nan]]
    """
    if name not in LIME_AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {list(LIME_AGGREGATIONS)}, got {name!r}.")
    ws = _as_array(weight_sums, "weight_sums")
    ab = _as_array(abs_sums, "abs_sums", non_negative=True)
    dc = _as_array(doc_counts, "doc_counts", non_negative=True)
    if not ws.shape == ab.shape == dc.shape:
        raise ValueError(f"arrays have different shapes: {[ws.shape, ab.shape, dc.shape]}.")
    n = dc.shape[:1]
    occ = dc.sum(axis=1) if n_occurrences is None else _shaped(n_occurrences, "n_occurrences", n)
    keep = occ >= min_count
    if mask is not None:
        keep &= _shaped(mask, "mask", n, bool)
    if name == "sqrt":
        scores = lime_sqrt(ab)
    elif name == "average":
        scores = lime_average(ws, dc)
    else:
        scores = lime_homogeneity(ab, keep)
    scores = np.where(dc > 0, scores, np.nan)
    scores[~keep] = np.nan
    return scores


def lime_weight_sums(weights, predicted, n_classes, presence=None):
    """Per-class sums of a documents x words LIME weight matrix.

    Turns :meth:`LimeExplainer.transform <skanchors.LimeExplainer.transform>` output (each
    document explained for its predicted class) into the inputs of :func:`aggregate_lime`.

    Parameters
    ----------
    weights : array-like or sparse matrix of shape (n_documents, n_words)
        ``w_{d,j}``: LIME weight of word ``j`` in document ``d`` for the class ``predicted[d]``.
    predicted : array-like of int of shape (n_documents,)
        Column index (0 .. n_classes - 1) of the class each document is explained for.
    n_classes : int
    presence : array-like or sparse matrix of shape (n_documents, n_words) or None
        Nonzero where the word occurs in the document (e.g. a ``CountVectorizer`` matrix);
        default: where the weight is nonzero (the words K-Lasso selected).

    Returns
    -------
    weight_sums, abs_sums, doc_counts : ndarray of shape (n_words, n_classes)

    Examples
    --------
    >>> W = np.array([[0.5, -0.1], [0.3, 0.0], [-0.2, 0.4]])
    >>> ws, ab, dc = lime_weight_sums(W, [1, 1, 0], 2)
    >>> ws.round(2).tolist(), dc.tolist()
    ([[-0.2, 0.8], [0.4, -0.1]], [[1.0, 2.0], [1.0, 1.0]])
    """
    from scipy import sparse

    W = sparse.csr_matrix(weights, dtype=float)
    y = np.asarray(predicted, dtype=np.int64).ravel()
    if y.shape[0] != W.shape[0]:
        raise ValueError(f"predicted has {y.shape[0]} entries for {W.shape[0]} documents.")
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"predicted must hold class indices in [0, {n_classes}).")
    P = (W != 0) if presence is None else (sparse.csr_matrix(presence) != 0)
    if P.shape != W.shape:
        raise ValueError(f"presence has shape {P.shape}, weights {W.shape}.")
    onehot = sparse.csr_matrix((np.ones(y.size), (y, np.arange(y.size))), shape=(n_classes, y.size))
    weight_sums = np.asarray((onehot @ W).T.todense())
    abs_sums = np.asarray((onehot @ abs(W)).T.todense())
    doc_counts = np.asarray((onehot @ P.astype(float)).T.todense())
    return weight_sums, abs_sums, doc_counts
