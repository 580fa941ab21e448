"""The surrogate of one LIME explanation: step 4 of Algorithm 1 (K-Lasso).

Choose ``K`` interpretable features on the kernel-weighted perturbations (lasso path, forward
selection or highest weights, as the LIME package does), then fit a weighted ridge regression
(alpha 1) on them; its coefficients are the explanation, its weighted R^2 the local fidelity.
The estimators here take a dense float matrix ``Z``; with more interpretable features than
samples, :mod:`skanchors._lime_wide` computes the same estimators from a boolean ``Z``.
"""

from __future__ import annotations

import numpy as np

from . import _lime_wide


def _weighted_centred(Z, y, w):
    sw = np.sqrt(w)
    Zc = (Z - np.average(Z, axis=0, weights=w)) * sw[:, None]
    yc = (y - np.average(y, weights=w)) * sw
    return Zc, yc


def _forward_selection(Z, y, w, k):
    """Greedy least-squares forward selection on the weighted data (the LIME package's).

    Adding feature ``j`` to the chosen set raises the weighted R^2 by
    ``b_j^2 / G_jj`` where ``G`` and ``b`` are the Gram matrix and the correlations of the
    centred data *orthogonalised against the chosen features*; one rank-one update per step
    keeps them current, so no regression is refitted per candidate.
    """
    Zc, yc = _weighted_centred(Z, y, w)
    G = Zc.T @ Zc
    b = Zc.T @ yc
    scale = np.maximum(np.diag(G).copy(), 1e-300)
    chosen = []
    available = np.ones(Z.shape[1], dtype=bool)
    for _ in range(min(k, Z.shape[1])):
        diag = np.diag(G)
        ok = available & (diag > 1e-10 * scale)
        gain = np.where(ok, b**2 / np.where(ok, diag, 1.0), 0.0)
        gain[~available] = -1.0
        j = int(np.argmax(gain))
        chosen.append(j)
        available[j] = False
        if ok[j]:
            col = G[:, j].copy()
            b = b - col * (b[j] / col[j])
            G = G - np.outer(col, col) / col[j]
    return chosen


def _weighted_ridge(Z, y, w, alpha):
    """``Ridge(alpha).fit(Z, y, sample_weight=w)`` in closed form: (coef, intercept).

    The same estimator as scikit-learn's (weighted centring, then the ridge normal
    equations), without its per-call validation, which would dominate the cost of a row.
    """
    if np.all(y == y[0]):
        # a constant target (the model never changes its mind on these perturbations): the
        # fit is the constant itself; centring would leave rounding error of the weighted
        # mean (1e-17) that the solve turns into weights of 1e-31, which rank as "top terms"
        return np.zeros(Z.shape[1]), float(y[0])
    z_mean = np.average(Z, axis=0, weights=w)
    y_mean = float(np.average(y, weights=w))
    Zc, yc = _weighted_centred(Z, y, w)
    gram = Zc.T @ Zc
    gram[np.diag_indices_from(gram)] += alpha
    coef = np.linalg.solve(gram, Zc.T @ yc)
    return coef, y_mean - float(z_mean @ coef)


def _weighted_r2(y, pred, w):
    """Weighted R^2 as ``sklearn.metrics.r2_score`` (1 for a perfect fit of a constant)."""
    residual = float(np.sum(w * (y - pred) ** 2))
    total = float(np.sum(w * (y - np.average(y, weights=w)) ** 2))
    if total == 0:
        # a constant target: fitted exactly up to rounding of the weighted means
        scale = float(np.sum(w)) * max(1.0, float(np.max(y**2)))
        return 1.0 if residual <= 1e-24 * scale else 0.0
    return 1.0 - residual / total


def _highest_weights(Z, y, w, k):
    coef, _ = _weighted_ridge(Z, y, w, alpha=0.01)
    # The LIME package ranks |coef * x'|; x' is all ones.
    order = np.argsort(-np.abs(coef), kind="stable")
    return order[:k].tolist()


def _lasso_path(Z, y, w, k):
    from sklearn.linear_model import lars_path  # imported here: keeps `import skanchors` light

    Zc, yc = _weighted_centred(Z, y, w)
    if not np.any(yc) or not np.any(Zc):
        return []
    _, _, coefs = lars_path(Zc, yc, method="lasso")
    # The least regularised point of the path with at most k features (as the LIME package).
    for i in range(coefs.shape[1] - 1, 0, -1):
        nonzero = np.flatnonzero(coefs[:, i])
        if len(nonzero) <= k:
            return nonzero.tolist()
    return []


def _select(Z, y, w, k, method):
    if method == "auto":
        method = "forward_selection" if k <= 6 else "highest_weights"
    if method == "none":
        return list(range(Z.shape[1])), method
    if Z.shape[1] == 0:
        return [], method
    wide = Z.dtype == bool  # more features than samples (see _explain_one)
    if method == "forward_selection":
        select = _lime_wide.forward_selection if wide else _forward_selection
        return select(Z, y, w, k), method
    if method == "highest_weights":
        select = _lime_wide.highest_weights if wide else _highest_weights
        return select(Z, y, w, k), method
    return _lasso_path(Z.astype(float) if wide else Z, y, w, k), method


def _surrogate(Z, selected, y, w):
    """The weighted ridge of alpha 1 on the ``selected`` columns of ``Z``: (coef, intercept,
    fitted values); in its dual form when ``Z`` is boolean and they outnumber the rows."""
    if Z.dtype != bool:
        coef, intercept = _weighted_ridge(Z[:, selected], y, w, alpha=1.0)
        return coef, intercept, Z[:, selected] @ coef + intercept
    columns = np.asarray(selected, dtype=np.intp)
    if len(columns) > Z.shape[0]:
        coef, intercept = _lime_wide.ridge(Z[:, columns], y, w, alpha=1.0)
    else:
        coef, intercept = _weighted_ridge(Z[:, columns].astype(float), y, w, alpha=1.0)
    fitted = np.full(Z.shape[0], intercept)
    step = max(1, (1 << 22) // max(Z.shape[0], 1))
    for lo in range(0, len(columns), step):
        fitted += Z[:, columns[lo : lo + step]].astype(float) @ coef[lo : lo + step]
    return coef, intercept, fitted
