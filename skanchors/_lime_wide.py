"""LIME's surrogate on more interpretable features than samples (a long document's words).

The surrogate's estimators in :mod:`skanchors._lime_surrogate` (``_weighted_ridge``,
``_forward_selection``, ``_highest_weights``) work with the (features x features) Gram
matrix of the weighted, centred samples: 80 GB for a document of 100,000 words, and a solve
cubic in the words. With more features ``m`` than samples ``N`` the same estimators are
computed here from the binary (samples x features) matrix ``Z`` itself, kept as booleans,
with (samples x samples) matrices at most:

* the ridge in its dual form, ``coef = Zc' (Zc Zc' + alpha I)^-1 yc`` (the same solution as
  ``(Zc' Zc + alpha I)^-1 Zc' yc``);
* forward selection by Gram-Schmidt on the samples: after choosing feature ``j`` with
  residual ``r_j`` (``zc_j`` minus its projection on the features chosen before), every
  feature's residual variance falls by ``(zc' u)^2`` and its covariance with the target by
  ``(zc' u)(u' yc)``, ``u = r_j / |r_j|``: the rank-one updates of the Gram matrix, one
  product with ``Z`` each.

``Zc = diag(sqrt(w)) (Z - 1 mu')`` is never formed: products with it are products with ``Z``,
in blocks of columns, corrected by the means. Work grows as ``N * m`` per product (``N^2 * m``
for the ridge's Gram matrix), memory as ``N * m`` bytes (the booleans) and ``N^2`` floats.
"""

from __future__ import annotations

import numpy as np

__all__ = ["forward_selection", "highest_weights", "ridge"]

# Products with Z are made in blocks of columns of at most this many cells.
_BLOCK_CELLS = 1 << 19


def _blocks(m, n_rows):
    step = max(1, _BLOCK_CELLS // max(n_rows, 1))
    return [slice(lo, min(m, lo + step)) for lo in range(0, m, step)]


class _Centred:
    """``Zc = diag(s) (Z - 1 mu')`` and ``yc`` of boolean ``Z``, weights ``w``."""

    def __init__(self, Z, y, w):
        self.Z = Z
        self.w = np.asarray(w, dtype=float)
        self.total = float(self.w.sum())
        self.s = np.sqrt(self.w)
        self.mu = self.transposed_raw(self.w) / self.total  # np.average(Z, weights=w)
        self.y_mean = float(np.average(y, weights=self.w))
        self.yc = (np.asarray(y, dtype=float) - self.y_mean) * self.s

    def transposed_raw(self, v):
        """``Z' v``."""
        out = np.empty(self.Z.shape[1])
        for cols in _blocks(self.Z.shape[1], self.Z.shape[0]):
            out[cols] = v @ self.Z[:, cols].astype(np.float64)
        return out

    def transposed(self, v):
        """``Zc' v``."""
        sv = self.s * v
        return self.transposed_raw(sv) - self.mu * sv.sum()

    def times(self, c):
        """``Zc c``."""
        out = np.zeros(self.Z.shape[0])
        for cols in _blocks(self.Z.shape[1], self.Z.shape[0]):
            out += self.Z[:, cols].astype(np.float64) @ c[cols]
        return self.s * (out - float(self.mu @ c))

    def column(self, j):
        """``Zc[:, j]``."""
        return self.s * (self.Z[:, j] - self.mu[j])

    def gram(self):
        """``Zc Zc'`` (samples x samples); the 0/1 products summed exactly in float32
        (counts below 2**24)."""
        Z = self.Z
        n = Z.shape[0]
        counts = np.zeros((n, n), dtype=np.float64)
        for cols in _blocks(Z.shape[1], n):
            block = Z[:, cols].astype(np.float32)
            counts += block @ block.T
        # (Z - 1 mu')(Z - 1 mu')' = Z Z' - Z mu 1' - 1 mu' Z' + |mu|^2
        z_mu = np.zeros(n)
        for cols in _blocks(Z.shape[1], n):
            z_mu += Z[:, cols].astype(np.float64) @ self.mu[cols]
        centred = counts - z_mu[:, None] - z_mu[None, :] + float(self.mu @ self.mu)
        return centred * np.outer(self.s, self.s)


def ridge(Z, y, w, alpha):
    """``Ridge(alpha).fit(Z, y, sample_weight=w)`` for boolean ``Z`` with more columns than
    rows, in its dual form: ``(coef, intercept)``."""
    y = np.asarray(y, dtype=float)
    if np.all(y == y[0]):  # (as skanchors._lime_surrogate._weighted_ridge)
        return np.zeros(Z.shape[1]), float(y[0])
    c = _Centred(Z, y, w)
    kernel = c.gram()
    kernel[np.diag_indices_from(kernel)] += alpha
    coef = c.transposed(np.linalg.solve(kernel, c.yc))
    return coef, c.y_mean - float(c.mu @ coef)


def highest_weights(Z, y, w, k):
    """The ``k`` largest ``|coef|`` of the ridge of alpha 0.01 (the LIME package's)."""
    coef, _ = ridge(Z, y, w, alpha=0.01)
    return np.argsort(-np.abs(coef), kind="stable")[:k].tolist()


def forward_selection(Z, y, w, k):
    """Greedy least-squares forward selection on the weighted data (the LIME package's), as
    :func:`skanchors._lime_surrogate._forward_selection` but without the Gram matrix of the
    features."""
    c = _Centred(Z, y, w)
    m = Z.shape[1]
    b = c.transposed(c.yc)
    diag = c.total * c.mu * (1.0 - c.mu)  # |zc_j|^2 of a 0/1 column
    scale = np.maximum(diag.copy(), 1e-300)
    basis = []
    chosen = []
    available = np.ones(m, dtype=bool)
    for _ in range(min(k, m)):
        ok = available & (diag > 1e-10 * scale)
        gain = np.where(ok, b**2 / np.where(ok, diag, 1.0), 0.0)
        gain[~available] = -1.0
        j = int(np.argmax(gain))
        chosen.append(j)
        available[j] = False
        if ok[j]:
            r = c.column(j)
            for u in basis:
                r = r - u * float(u @ r)
            norm = float(np.sqrt(r @ r))
            if norm == 0.0:
                continue
            u = r / norm
            basis.append(u)
            v = c.transposed(u)
            diag = diag - v**2
            b = b - v * float(u @ c.yc)
    return chosen
