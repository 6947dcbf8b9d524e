"""Newton steps on the face of the free multipliers, by conjugate gradients in feature space.

Coordinate steps crawl once the multipliers strictly inside their box (the free set) have
settled on an ill-conditioned face: each step solves a 1 x 1 restriction, so a free set of
m multipliers with condition number k needs of the order of k passes. Once the free set
stays the same from one pass to the next, the coordinate method
(:mod:`medmtl.med.solvers.coordinate`) takes a step of an active-set method instead: on the
face where the free multipliers move and the others stay, with each task's equality kept,
it maximises the second-order model of ``J``

    g_F^T d - 1/2 d^T F_F W F_F^T d     s.t.  a_g^T d_g = 0,  lo <= lam_F + d <= hi,

by projected conjugate gradients truncated at the box (Steihaug's rule: a CG iterate that
would leave the box, or a direction without curvature, is followed to the box and ends the
step). ``F_F`` are the free rows of the factors and ``W`` the curvature of ``J`` in feature
space (1 on shared columns, ``s_t`` on term ``t``'s plus ``tau_t u_t u_t^T``,
``tau_t = s_t (1 - s_t)``), so every CG iteration is two sparse products with ``F_F``: no
Gram matrix, column or block is formed. For a non-quadratic ``J`` the step is then cut by
the exact line search on ``J`` (:func:`medmtl.med.solvers.kkt.line_search`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .kkt import line_search

__all__ = ["face_step"]

# CG on the face stops when the projected residual falls below this fraction of the
# projected gradient (or its square root, whichever is smaller: an inexact Newton method).
_FORCING = 0.1
_MAX_CG = 250
# Rounds of CG on ever smaller faces in one step (each ends at the box or inside it).
_MAX_ROUNDS = 8


def face_step(dual, rows, lam, u, q, s, free):
    """One truncated Newton step on the face of ``free`` (indices of free multipliers).

    When CG reaches the box, the multipliers it brought to a bound leave the face and CG
    goes on from there on the smaller face, with the model's gradient there, for at most
    ``_MAX_ROUNDS`` rounds (an active-set method on the model); the rounds' steps together
    are one step of the model, which the line search then cuts on ``J``.

    ``lam`` and ``u`` are updated in place; ``q`` and ``s`` are the terms' current
    ``||u_t||^2 / 2`` and switch posteriors. The multipliers must meet the equalities (the
    step keeps them).

    Returns
    -------
    t : float
        The fraction of the model's step taken (0: no step).
    cg_iterations : int
    bias : ndarray of shape (n_groups,)
        The equality multipliers of the model at its maximiser on the last face,
        ``a_g^T (g - H d)_g / ||a_g||^2`` (the tasks' biases), NaN for a task without free
        multipliers or when the last round ended at the box.
    """
    n_groups = len(dual.groups)
    bias = np.full(n_groups, np.nan)
    FF, cols = _free_rows(rows, free)
    if cols.size == 0:
        return 0.0, 0, bias
    FT = FF.T
    ul = u[cols]
    ct = rows.col_term[cols]
    sw = ct >= 0
    tau = s * (1.0 - s) if dual.alpha > 0 else np.zeros_like(s)
    grad_w = np.ones(cols.size)
    grad_w[sw] = s[ct[sw]]
    curv = _Curvature(ct, sw, ul, grad_w, tau)

    def hess(x):
        return FF @ curv(FT @ x)

    g = dual.c[free] - FF @ (grad_w * ul)
    a = dual.a[free]
    grp = dual.group_of[free]
    lo_d, hi_d = dual.lo[free] - lam[free], dual.hi[free] - lam[free]
    d = np.zeros(free.size)
    on = np.ones(free.size, dtype=bool)
    its = 0
    inside = False
    for _ in range(_MAX_ROUNDS):
        a_on = np.where(on, a, 0.0)
        norm_a = np.bincount(grp, a_on * a_on, minlength=n_groups)
        inv_norm = np.divide(1.0, norm_a, out=np.zeros_like(norm_a), where=norm_a > 0)

        def project(x, a_on=a_on, inv_norm=inv_norm):
            x = np.where(on, x, 0.0)
            return x - a_on * (np.bincount(grp, a_on * x, minlength=n_groups) * inv_norm)[grp]

        step, k, inside = _truncated_cg(lambda x: project(hess(x)), project(g), lo_d - d, hi_d - d)
        its += k
        if not np.any(step):
            break
        d += step
        g = g - hess(step)
        if inside:
            has = norm_a > 0
            bias[has] = np.bincount(grp, a_on * g, minlength=n_groups)[has] / norm_a[has]
            break
        # the multipliers the step brought to a bound leave the face
        on &= (d > lo_d) & (d < hi_d)
        if np.count_nonzero(on) < 2:
            break
    if not np.any(d):
        return 0.0, its, bias
    v = FT @ d
    t = 1.0
    if dual.n_terms and dual.alpha > 0:
        t = line_search(dual.alpha, float(dual.c[free] @ d), _forms(dual.n_terms, q, ul, v, ct, sw))
        if not t > 0:
            return 0.0, its, bias
    lam[free] = np.clip(lam[free] + t * d, dual.lo[free], dual.hi[free])
    u[cols] += t * v
    return t, its, bias


def _free_rows(rows, free):
    """The rows ``free`` of the factors on the columns they touch: ``(F_F, cols)``, dense
    where the factors are kept dense (BLAS products), else CSR with the columns renumbered."""
    if rows.dense is not None:
        return rows.dense[free], np.arange(rows.dense.shape[1])
    FF = rows.F[free]
    cols, local = np.unique(FF.indices, return_inverse=True)
    return sp.csr_matrix((FF.data, local, FF.indptr), shape=(free.size, cols.size)), cols


class _Curvature:
    """``W x`` for the local columns: ``weight * x`` plus ``tau_t u_t (u_t^T x_t)`` per term."""

    def __init__(self, ct, sw, u, weight, tau):
        self.weight = weight
        self.any_tau = bool(np.any(tau > 0))
        if self.any_tau:
            # the terms present, numbered locally
            terms, self.local = np.unique(ct[sw], return_inverse=True)
            self.sw, self.u_sw = sw, u[sw]
            self.tau_u = tau[terms][self.local] * self.u_sw

    def __call__(self, x):
        out = self.weight * x
        if self.any_tau:
            dots = np.bincount(self.local, self.u_sw * x[self.sw])
            out[self.sw] += self.tau_u * dots[self.local]
        return out


def _forms(D, q, u, v, ct, sw):
    """``(A0, B0, q, B, Cq)`` of the line search from the local ``u`` and ``v = F_F^T d``
    (``v`` is zero outside the local columns, so the sums over them are complete)."""
    sh = ~sw
    B = np.bincount(ct[sw], u[sw] * v[sw], minlength=D)
    Cq = np.bincount(ct[sw], v[sw] * v[sw], minlength=D)
    return float(u[sh] @ v[sh]), float(v[sh] @ v[sh]), q, B, Cq


def _truncated_cg(H, g, lo, hi):
    """Maximise ``g^T d - d^T H d / 2`` over ``lo <= d <= hi`` approximately: CG from 0,
    stopped at the forcing tolerance, or followed to the box when an iterate would leave it
    or a direction has no curvature. ``H`` maps x to the projected Hessian times x; ``g`` is
    projected. Returns ``(d, iterations, inside)``, ``inside`` False when the box or a
    direction without curvature ended the iteration."""
    d = np.zeros_like(g)
    r = g.copy()
    rr = float(r @ r)
    if not rr > 0:
        return d, 0, True
    stop = min(_FORCING, np.sqrt(np.sqrt(rr))) ** 2 * rr
    p = r.copy()
    for it in range(1, _MAX_CG + 1):
        Hp = H(p)
        curv = float(p @ Hp)
        room = _room(d, p, lo, hi)
        if not curv > 0 or rr / curv >= room:
            return _to_box(d, p, lo, hi, room), it, False
        step = rr / curv
        d += step * p
        r -= step * Hp
        rr_new = float(r @ r)
        if rr_new <= stop:
            return d, it, True
        p = r + (rr_new / rr) * p
        rr = rr_new
    return d, _MAX_CG, True


def _to_box(d, p, lo, hi, room):
    """``d + room p`` with the coordinates that reach the box set to it exactly."""
    x = d + room * p
    with np.errstate(divide="ignore", invalid="ignore"):
        hit_hi = (p > 0) & ((hi - d) / p <= room)
        hit_lo = (p < 0) & ((lo - d) / p <= room)
    x[hit_hi] = hi[hit_hi]
    x[hit_lo] = lo[hit_lo]
    return np.clip(x, lo, hi)


def _room(d, p, lo, hi):
    """Largest ``t >= 0`` with ``lo <= d + t p <= hi`` (the coordinates where ``p`` is zero
    do not limit it)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(p > 0, (hi - d) / p, np.inf)
        dn = np.where(p < 0, (lo - d) / p, np.inf)
    return float(max(min(up.min(initial=np.inf), dn.min(initial=np.inf)), 0.0))
