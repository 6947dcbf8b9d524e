"""The objective of MTS3FLC and its four multiplicative updates.

All tasks share the notation of Du et al. (ICDM 2012); documents are *rows* here (the
scikit-learn convention), so the paper's word-document matrix ``X_i`` is ``Xd_i.T``:

    O = sum_i || Xd_i.T - F_i St_i G_i ||_F^2,    St_i = [S ; R_i],   G_i = [G_iL  G_iU]

``Xd_i`` (N_i x M, CSR) is only ever multiplied by thin dense matrices (C or K columns),
so nothing of size words x documents is formed. Each update is the square root of the
Lee-Seung ratio, a point between the current value and the minimiser of the auxiliary
function, so every update keeps ``O`` from increasing (Theorem 1 of the paper).

Shapes: ``F_i`` (M, K), ``S`` (k_s, C), ``R_i`` (K - k_s, C), ``G_i`` (C, N_i) with the
first ``n_labeled_i`` columns fixed.
"""

from __future__ import annotations

import numpy as np

__all__ = ["EPS", "stacked_associations", "data_times_labels", "objective",
           "update_R", "update_S", "update_F", "update_G_unlabeled"]

# Guards every division; far below the scale of any entry that matters, so that the
# ratio stays the Lee-Seung ratio wherever the denominator is not (numerically) zero.
EPS = 1e-300


def _ratio(num, den, eps):
    # sqrt(num / den) with den guarded; num < 0 cannot happen for nonnegative factors.
    return np.sqrt(num / np.maximum(den, eps))


def stacked_associations(S, R_i):
    """``St_i = [S ; R_i]``, shape (K, C)."""
    return np.vstack([S, R_i]) if S.shape[0] else R_i


def data_times_labels(Xd_i, G_i):
    """``X_i G_i^T`` (M, C) from the document-major sparse ``Xd_i`` (N_i, M)."""
    return np.asarray(Xd_i.T @ G_i.T)


def objective(Xds, Fs, S, Rs, Gs, x_sq_norms=None, XGs=None):
    """``sum_i ||X_i - F_i St_i G_i||_F^2`` without forming any M x N_i matrix.

    Uses ``||X||^2 - 2 tr(St^T F^T X G^T) + tr(St^T F^T F St G G^T)``.

    Parameters
    ----------
    Xds : list of sparse matrices of shape (N_i, M)
    Fs : list of ndarray of shape (M, K)
    S : ndarray of shape (k_s, C)
    Rs : list of ndarray of shape (K - k_s, C)
    Gs : list of ndarray of shape (C, N_i)
    x_sq_norms : list of float, optional
        Precomputed ``||X_i||_F^2``.
    XGs : list of ndarray of shape (M, C), optional
        Precomputed ``X_i G_i^T`` (saves one sparse product per task).

    Returns
    -------
    float
    """
    total = 0.0
    for i, (Xd, F, R, G) in enumerate(zip(Xds, Fs, Rs, Gs)):
        St = stacked_associations(S, R)
        x_sq = x_sq_norms[i] if x_sq_norms is not None else float(Xd.multiply(Xd).sum())
        FSt = F @ St
        XG = XGs[i] if XGs is not None else data_times_labels(Xd, G)
        cross = float(np.sum(FSt * XG))
        fit = float(np.sum((FSt.T @ FSt) * (G @ G.T)))
        total += x_sq - 2.0 * cross + fit
    return max(total, 0.0)


def update_R(Fs, S, Rs, XGs, GGs, eps=EPS):
    """Task-specific associations, Eq. (13): ``R_i <- R_i * sqrt(F_ir^T X_i G_i^T / ...)``.

    ``XGs[i] = X_i G_i^T`` (M, C) and ``GGs[i] = G_i G_i^T`` (C, C). Returns new arrays.
    """
    k_s = S.shape[0]
    out = []
    for F, R, XG, GG in zip(Fs, Rs, XGs, GGs):
        Fr = F[:, k_s:]
        num = Fr.T @ XG
        # F_ir^T F_is S GG + F_ir^T F_ir R GG  ==  F_ir^T F_i St_i GG
        den = (Fr.T @ F) @ stacked_associations(S, R) @ GG
        out.append(R * _ratio(num, den, eps))
    return out


def update_S(Fs, S, Rs, XGs, GGs, eps=EPS):
    """Shared associations, Eq. (14): numerator and denominator summed over the tasks."""
    k_s = S.shape[0]
    if k_s == 0:
        return S.copy()
    num = np.zeros_like(S)
    den = np.zeros_like(S)
    for F, R, XG, GG in zip(Fs, Rs, XGs, GGs):
        Fs_ = F[:, :k_s]
        num += Fs_.T @ XG
        den += (Fs_.T @ F) @ stacked_associations(S, R) @ GG
    return S * _ratio(num, den, eps)


def update_F(F, St, XG, GG, eps=EPS):
    """Topics of one task, Eq. (11): ``F <- F * sqrt(X (St G)^T / F St G (St G)^T)``.

    ``X (St G)^T = (X G^T) St^T``, so the sparse product ``XG`` is reused.
    """
    num = XG @ St.T
    den = F @ (St @ GG @ St.T)
    return F * _ratio(num, den, eps)


def update_G_unlabeled(Xd, n_labeled, F, St, G_unlabeled, eps=EPS):
    """Class memberships of the unlabelled documents, Eq. (12).

    ``G_U <- G_U * sqrt((F St)^T X_U / (F St)^T F St G_U)``. ``Xd`` (N, M) holds all the
    task's documents, labelled first; the product is taken on all rows and cut, because
    slicing the rows of a CSR matrix would copy them.
    """
    A = F @ St
    num = np.asarray(Xd @ A)[n_labeled:].T
    den = (A.T @ A) @ G_unlabeled
    return G_unlabeled * _ratio(num, den, eps)
