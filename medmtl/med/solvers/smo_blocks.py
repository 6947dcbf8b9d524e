"""SMO on per-task blocks for the multi-task models whose factors never span two tasks.

Their Newton subproblem's Hessian is ``Q = blockdiag_g(B_g) + Vs diag(tau) Vs^T``: task
blocks plus the rank-T coupling that the shared switches add. :func:`smo_solve_blocks` runs
block Gauss-Seidel sweeps over the tasks, each task's subproblem by LIBSVM's pair loop on
its dense block (:func:`_smo_dense`): a pair step updates the gradient on its own task's rows
and a T-vector, so no column of the cross-task matrix is ever formed.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._numba import njit
from .smo import CHUNK, PairQP, _scan, _shrink, clipped_pair_step, pair_curvature, second_order_gain

__all__ = ["smo_solve_blocks"]

# pair steps between shrinkings in a group's pair loop: a visit of a group in the sweeps
# takes tens of steps, not the thousands of a whole SVM
_SHRINK_PERIOD = 5

Blocks = namedtuple("Blocks", "Q q_ptr gsize gptr gidx")
"""Each group's full block, flattened row-major at ``q_ptr[g]``, its size, and its rows
(``gidx[gptr[g]:gptr[g + 1]]``)."""
Coupling = namedtuple("Coupling", "Vs tau p")
"""The rank-T coupling ``Vs diag(tau) Vs^T`` and ``p = Vs^T (beta - beta0)``."""
BoxQP = namedtuple("BoxQP", "grad beta blo bhi")
"""The gradient without the coupling, the point and its box."""


@njit(cache=True)
def _smo_dense(Q, grad, beta, blo, bhi, eps, max_steps):
    """LIBSVM's pair loop on one group with a dense ``Q`` (n_g x n_g, row-major).

    Second-order working-set selection, exact clipped pair step; ``grad`` and ``beta``
    updated in place. Returns ``(steps, gap)``, the gap over all coordinates.

    The pair selection scans only the active coordinates: every ``min(n_g, _SHRINK_PERIOD)``
    steps those stuck at a bound whose gradient pushes outwards harder than the current
    worst pair are left out (LIBSVM's shrinking). The gradient stays exact on every
    coordinate (its update is one contiguous pass over two rows of the block), so when the
    active ones meet ``eps`` one scan of all of them decides, with nothing to rebuild, and
    the loop goes on if any violates.
    """
    n = beta.size
    diag = np.empty(n)  # read contiguously by the partner's scan
    for k in range(n):
        diag[k] = Q[k, k]
    # the scan and the shrinking of the multi-group pair loop, on one group
    qp = PairQP(grad, beta, blo, bhi, np.zeros(n, dtype=np.int64))
    extremes = (np.empty(1), np.empty(1, dtype=np.int64), np.empty(1))  # up, its index, low
    no_step = (0.0, grad, grad)
    act = np.arange(n)
    na = n
    period = max(min(n, _SHRINK_PERIOD), 1)
    countdown = period
    steps = 0
    while True:
        _scan(qp, act, na, extremes, no_step)
        if (extremes[1][0] < 0 or not extremes[0][0] - extremes[2][0] > eps or steps >= max_steps) \
                and na < n:
            # the active coordinates are done (or the budget is): look at all of them
            for k in range(n):
                act[k] = k
            na = n
            countdown = period
            _scan(qp, act, na, extremes, no_step)
        i, gmax, gmin = extremes[1][0], extremes[0][0], extremes[2][0]
        gap = gmax - gmin
        if i < 0 or not gap > eps or steps >= max_steps:
            return steps, (gap if i >= 0 and gmin < np.inf else 0.0)
        countdown -= 1
        if countdown <= 0:
            countdown = period
            na = _shrink(qp, act, na, extremes)
        qii = diag[i]
        best = -1.0
        j = -1
        for kk in range(na):
            k = act[kk]
            if beta[k] > blo[k]:
                score = second_order_gain(gmax - grad[k], qii, diag[k], Q[i, k])
                if score > best:
                    best = score
                    j = k
        if j < 0:
            if na < n:
                na = 0  # no partner among the active ones: scan all of them again
                continue
            return steps, gap
        t = (gmax - grad[j]) / pair_curvature(qii, diag[j], Q[i, j])
        t = clipped_pair_step(beta, blo, bhi, i, j, t)
        for k in range(n):
            grad[k] -= t * (Q[i, k] - Q[j, k])
        steps += 1


@njit(cache=True)
def _group_sweeps(blocks, coupling, qp, eps, max_steps):
    """Block Gauss-Seidel over the groups for ``Q = blockdiag_g(B_g) + Vs diag(tau) Vs^T``.

    ``blocks.Q`` holds, flattened row-major at ``q_ptr[g]``, each group's full block
    ``Q_g = B_g + Vs_g diag(tau) Vs_g^T``. Each visit solves group ``g``'s subproblem by
    :func:`_smo_dense` (the other groups enter through the coupling vector
    ``p = Vs^T (beta - beta0)``), then updates ``qp.grad`` (``gB``) on ``g``'s rows and ``p``.
    A pair step thus costs ``O(n_g)`` instead of ``O(n T)``; sweeps repeat until every group
    meets ``eps`` at the current ``p``. Returns ``(status, steps, gap)``.
    """
    Q, q_ptr, gsize, gptr, gidx = blocks
    Vs, tau, p = coupling
    gB, beta, blo, bhi = qp
    n_groups = gptr.size - 1
    T = tau.size
    w = np.empty(T)
    dp = np.empty(T)
    steps = 0
    while True:
        worst = 0.0
        moved = False
        for g in range(n_groups):
            ng = gsize[g]
            if ng == 0:
                continue
            for t_ in range(T):
                w[t_] = tau[t_] * p[t_]
            grad = np.empty(ng)
            bg = np.empty(ng)
            lo = np.empty(ng)
            hi = np.empty(ng)
            for a in range(ng):
                k = gidx[gptr[g] + a]
                gk = gB[k]
                for t_ in range(T):
                    gk -= Vs[k, t_] * w[t_]
                grad[a] = gk
                bg[a] = beta[k]
                lo[a] = blo[k]
                hi[a] = bhi[k]
            budget = max_steps - steps
            if budget <= 0:
                return 2, steps, worst
            Qg = Q[q_ptr[g]:q_ptr[g] + ng * ng].reshape((ng, ng))
            st, gap = _smo_dense(Qg, grad, bg, lo, hi, eps, budget)
            if gap > worst:
                worst = gap
            if st == 0:
                continue
            steps += st
            moved = True
            # gB_g -= B_g dbeta_g with B_g = Q_g - Vs_g diag(tau) Vs_g^T; p += Vs_g^T dbeta_g
            for t_ in range(T):
                dp[t_] = 0.0
            for a in range(ng):
                ka = gidx[gptr[g] + a]
                da = bg[a] - beta[ka]
                if da != 0.0:
                    for b in range(ng):
                        gB[gidx[gptr[g] + b]] -= da * Qg[a, b]
                    for t_ in range(T):
                        dp[t_] += da * Vs[ka, t_]
                    beta[ka] = bg[a]
            for t_ in range(T):
                p[t_] += dp[t_]
                dp[t_] *= tau[t_]
            for a in range(ng):
                k = gidx[gptr[g] + a]
                c = 0.0
                for t_ in range(T):
                    c += Vs[k, t_] * dp[t_]
                gB[k] += c
        if not moved:
            return 0, steps, worst


def smo_solve_blocks(blocks, group_rows, local, Vs, tau, grad, beta, blo, bhi, diagQ, group_of,
                     eps, max_steps, shrinking=True, overwrite_blocks=False):
    """SMO for ``Q = blockdiag(blocks) + Vs diag(tau) Vs^T`` (``beta`` space: the blocks
    come scaled, :meth:`GroupGrams.blocks` with ``scale=1/a``), by block Gauss-Seidel sweeps
    over the groups (:func:`_group_sweeps`).

    ``blocks`` is a list of square arrays (one per group) or all of them flattened
    row-major into one 1-D array, group after group. ``grad`` is the gradient at the
    start point ``beta`` (both updated in place).
    ``local``, ``diagQ``, ``group_of`` and ``shrinking`` are accepted for the common
    signature (the per-group loops need no shrinking). ``overwrite_blocks=True`` lets a flat
    ``blocks`` take the coupling in place instead of in a copy.

    Returns
    -------
    status, steps, gap
        As :func:`~medmtl.med.solvers.smo.smo_solve` returns them.
    """
    del local, diagQ, group_of, shrinking
    n = beta.size
    sizes = np.array([g.size for g in group_rows], dtype=np.int64)
    blk_ptr = np.concatenate(([0], np.cumsum(sizes**2)[:-1])).astype(np.int64)
    gidx = np.concatenate(group_rows).astype(np.int64)
    gptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    T = tau.size
    Vs = np.ascontiguousarray(Vs if Vs is not None else np.zeros((n, 0)))
    if Vs.shape[1] != T:
        Vs = np.zeros((n, 0))
        tau = np.zeros(0)
    tau = np.ascontiguousarray(tau, dtype=float)
    if isinstance(blocks, np.ndarray) and blocks.ndim == 1:
        blk = blocks
    else:
        blk = np.concatenate([np.ascontiguousarray(B).ravel() for B in blocks]) if len(blocks) else np.zeros(0)
    # each group's full block with its share of the coupling, formed once (in place where
    # allowed, or where the blocks were just concatenated into a new array)
    Q = blk if overwrite_blocks or blk is not blocks else blk.copy()
    if T:
        for g, ptr in zip(group_rows, blk_ptr):
            m = g.size
            Vg = Vs[g]
            Q[ptr:ptr + m * m].reshape(m, m)[:] += (Vg * tau) @ Vg.T
    gB = grad.copy()
    p = np.zeros(T)
    steps = 0
    while True:  # in chunks, so that Python can raise a pending KeyboardInterrupt between them
        budget = min(max_steps - steps, CHUNK)
        status, taken, gap = _group_sweeps(Blocks(Q, blk_ptr, sizes, gptr, gidx), Coupling(Vs, tau, p),
                                           BoxQP(gB, beta, blo, bhi), eps, budget)
        steps += taken
        if status == 0 or steps >= max_steps:
            break
    grad[:] = gB - Vs @ (tau * p) if tau.size else gB
    return status, int(steps), float(gap)
