"""Sequential minimal optimisation for the Newton subproblem of the MED dual.

The subproblem of :mod:`medmtl.med.solvers.newton` is an SVM-type QP in scaled variables
``beta = a * lam`` (so every task's equality reads ``sum_{i in g} beta_i = 0``)::

    maximise  grad0^T (beta - beta0) - 1/2 (beta - beta0)^T Q (beta - beta0)
    s.t.      blo <= beta <= bhi,   sum_{i in g} beta_i = 0 for every group g,

with ``Q = D F W F^T D`` (``D = diag(1 / a)``, ``F = [Phi0 | Phi]``, ``W`` the exact
curvature of the switched terms). It is solved as LIBSVM does: pairs ``(i, j)`` of one group
chosen by the second-order rule of Fan, Chen and Lin (JMLR 2005), the exact step on the
pair, the gradient kept up to date with two columns of ``Q``, and shrinking of coordinates
stuck at a bound. Columns come from a cache (a slab of at most ``cache_size`` megabytes,
least recently used out) that the Python driver fills in batches by dense or sparse
products of the factors (or from per-task Gram blocks), so memory stays bounded however
large n is.

On low-rank ``Q`` (linear and feature models) the pair loop crawls at the end on a settled
set of free coordinates whose block of ``Q`` is singular: many tiny pair steps. Once the
free set stays the same between two checks, :func:`smo_solve` solves the subproblem on that
face directly, as an active-set method does (a pseudo-inverse Newton step or an ascent
direction without curvature, capped by the box), and the pair loop goes on from there; it
still decides optimality, so the answer is the same.

Multi-task models whose factors never span two tasks have their own pair loop on per-task
blocks (:mod:`~medmtl.med.solvers.smo_blocks`); the column cache is
:mod:`~medmtl.med.solvers.column_cache`. The pair loops are compiled with numba when it is
installed; without it, they run as (slow) Python.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._numba import HAVE_NUMBA, njit
from .column_cache import ColumnCache, Slab
from .kkt import rounding_floor

__all__ = ["HAVE_NUMBA", "ColumnCache", "smo_solve", "diag_hessian", "njit", "clipped_pair_step",
           "pair_curvature", "second_order_gain", "TAU", "CHUNK"]

TAU = 1e-12  # curvature floor for a pair whose Q-restriction is flat
BATCH = 64
SHRINK_PERIOD = 1000

PairQP = namedtuple("PairQP", "grad beta blo bhi group_of")
"""The subproblem as the pair loop takes it: gradient, point, box, group of each coordinate."""
Active = namedtuple("Active", "act n_act counters")
"""The active coordinates ``act[:n_act[0]]``, and the steps taken and the shrinking countdown."""
Limits = namedtuple("Limits", "n_groups eps max_steps shrinking shrink_period floor_rate")
"""What stops and steers the pair loop."""


@njit(cache=True)
def diag_hessian(rows, s, tau, u, out):
    """Diagonal of ``F W F^T``: ``out[i] = sum_t s_t ||f_it||^2 + tau_t (f_it^T u_t)^2``, for
    the factors' rows ``rows`` (a :class:`~medmtl.med.solvers.gram_storage.Rows` record).

    Shared columns (``col_term == -1``) count with weight 1.
    """
    indptr, indices, data, col_term = rows
    n = indptr.size - 1
    for i in range(n):
        h = 0.0
        k = indptr[i]
        end = indptr[i + 1]
        while k < end:
            t = col_term[indices[k]]
            sq = 0.0
            pu = 0.0
            while k < end and col_term[indices[k]] == t:
                v = data[k]
                sq += v * v
                pu += v * u[indices[k]]
                k += 1
            if t < 0:
                h += sq
            else:
                h += s[t] * sq + tau[t] * pu * pu
        out[i] = h


@njit(cache=True)
def clipped_pair_step(beta, blo, bhi, i, j, t):
    """Move ``beta[i] += t``, ``beta[j] -= t`` with ``t`` cut to the box; returns the ``t`` taken.

    A coordinate that reaches its bound is set to it exactly, so shrinking sees it there.
    """
    room_i = bhi[i] - beta[i]
    room_j = beta[j] - blo[j]
    if t > room_i:
        t = room_i
    if t > room_j:
        t = room_j
    if t == room_i:
        beta[i] = bhi[i]
    else:
        beta[i] += t
    if t == room_j:
        beta[j] = blo[j]
    else:
        beta[j] -= t
    return t


@njit(cache=True)
def pair_curvature(qii, qjj, qij):
    """The curvature of the subproblem along a pair step ``e_i - e_j``:
    ``Q_ii + Q_jj - 2 Q_ij``, or :data:`TAU` where that is not positive (a flat pair)."""
    curv = qii + qjj - 2.0 * qij
    if curv <= 0.0:
        curv = TAU
    return curv


@njit(cache=True)
def second_order_gain(bdiff, qii, qkk, qik):
    """What the exact step on the pair ``(i, k)`` gains by the second-order rule of Fan, Chen
    and Lin: ``bdiff^2 / curvature`` with ``bdiff = grad_i - grad_k``, or -1 where ``bdiff``
    is not positive (the pair cannot ascend)."""
    if bdiff > 0.0:
        return bdiff * bdiff / pair_curvature(qii, qkk, qik)
    return -1.0


@njit(cache=True)
def _scan(qp, act, na, best, step):
    """The largest gradient among coordinates that can go up and the smallest among those
    that can go down, per group, over ``act[:na]``, into ``best = (up_val, up_arg, low_val)``.

    With ``step = (t, ci, cj)`` and ``t != 0`` the gradient is first moved by the pair step
    ``grad -= t (ci - cj)`` (the scan fused with the update)."""
    grad, beta, blo, bhi, group_of = qp
    up_val, up_arg, low_val = best
    t, ci, cj = step
    up_val[:] = -np.inf
    up_arg[:] = -1
    low_val[:] = np.inf
    for kk in range(na):
        k = act[kk]
        gk = grad[k]
        if t != 0.0:
            gk = gk - t * (ci[k] - cj[k])
            grad[k] = gk
        g = group_of[k]
        if beta[k] < bhi[k] and gk > up_val[g]:
            up_val[g] = gk
            up_arg[g] = k
        if beta[k] > blo[k] and gk < low_val[g]:
            low_val[g] = gk


@njit(cache=True)
def _worst_group(best):
    """``(group, gap)``: the group with the largest violating pair, -1 if none."""
    up_val, up_arg, low_val = best
    gbest = -1
    gap = 0.0
    for g in range(up_val.size):
        if up_arg[g] >= 0 and low_val[g] < np.inf:
            v = up_val[g] - low_val[g]
            if v > gap:
                gap = v
                gbest = g
    return gbest, gap


@njit(cache=True)
def _shrink(qp, act, na, best):
    """LIBSVM's shrinking: keep in ``act[:m]`` the coordinates not stuck at a bound whose
    gradient pushes outwards harder than the worst pair (the dropped ones stay after the
    active part, so ``act`` remains a permutation). Returns ``m``."""
    grad, beta, blo, bhi, group_of = qp
    up_val, _, low_val = best
    m = 0
    for kk in range(na):
        k = act[kk]
        g = group_of[k]
        out = False
        if beta[k] >= bhi[k]:
            out = grad[k] > up_val[g]
        elif beta[k] <= blo[k]:
            out = grad[k] < low_val[g]
        if not out:
            act[m] = k
            m += 1
    return m


@njit(cache=True)
def _second(column, diagQ, qp, act, na, group, i):
    """The partner ``j`` of ``i`` in ``group`` by the second-order rule (Fan, Chen and Lin):
    the largest ``(grad_i - grad_k)^2 / (Q_ii + Q_kk - 2 Q_ik)`` among those that can go
    down; -1 if none. ``column`` is column ``i`` of ``Q``."""
    grad, beta, blo, _, group_of = qp
    gi = grad[i]
    qii = diagQ[i]
    best = -1.0
    j = -1
    for kk in range(na):
        k = act[kk]
        if group_of[k] == group and beta[k] > blo[k]:
            score = second_order_gain(gi - grad[k], qii, diagQ[k], column[k])
            if score > best:
                best = score
                j = k
    return j


@njit(cache=True)
def _smo_loop(slab, diagQ, qp, active, limits, l1):
    """Pair steps on the active coordinates until converged, a column is missing, or the
    step budget ``limits.max_steps`` is used.

    ``active.act[:active.n_act[0]]`` lists the active coordinates; with ``limits.shrinking``
    every so often those at a bound whose gradient pushes outwards harder than the current
    worst pair are dropped (LIBSVM's rule); their gradients then go stale until the driver
    rebuilds them. The loop counts as converged at ``max(eps, floor_rate * l1[0])``,
    ``l1[0] = sum |beta|`` (kept up to date): below that the gradient, summed from columns
    times multipliers of that size, is rounding
    (:func:`~medmtl.med.solvers.kkt.rounding_floor`).

    Returns ``(status, need, gap)``: status 0 converged on the active set, 1 column ``need``
    is not cached, 2 step budget used up. ``active.counters[0]`` counts the steps taken and
    ``counters[1]`` keeps the shrinking countdown from one call to the next.
    """
    cache, slot_of, stamp, clock = slab
    grad, beta, blo, bhi, group_of = qp
    act, n_act, counters = active
    n_groups, eps, max_steps, shrinking, shrink_period, floor_rate = limits
    best = (np.empty(n_groups), np.empty(n_groups, dtype=np.int64), np.empty(n_groups))
    no_step = (0.0, cache[0], cache[0])
    steps = 0
    na = n_act[0]
    shrink_every = max(min(na, shrink_period), 1)
    # the shrinking clock runs on across calls (a cache miss returns to the driver)
    countdown = counters[1] if counters[1] > 0 else shrink_every
    status, need = 0, -1
    _scan(qp, act, na, best, no_step)
    while True:
        gbest, gap = _worst_group(best)
        if gbest < 0 or gap <= eps or gap <= floor_rate * l1[0]:
            break
        if steps >= max_steps:
            status = 2
            break
        countdown -= 1
        if shrinking and countdown <= 0:
            countdown = shrink_every
            na = _shrink(qp, act, na, best)
        i = best[1][gbest]
        si = slot_of[i]
        if si < 0:
            status, need = 1, i
            break
        clock[0] += 1
        stamp[si] = clock[0]  # keep column i while column j is fetched
        j = _second(cache[si], diagQ, qp, act, na, gbest, i)
        if j < 0:
            break
        sj = slot_of[j]
        if sj < 0:
            status, need = 1, j
            break
        t = (grad[i] - grad[j]) / pair_curvature(diagQ[i], diagQ[j], cache[si, j])
        before = abs(beta[i]) + abs(beta[j])
        t = clipped_pair_step(beta, blo, bhi, i, j, t)
        l1[0] += abs(beta[i]) + abs(beta[j]) - before
        if t != 0.0:
            _scan(qp, act, na, best, (t, cache[si], cache[sj]))
        else:
            _scan(qp, act, na, best, no_step)
        clock[0] += 1
        stamp[si] = clock[0]
        stamp[sj] = clock[0]
        steps += 1
        counters[0] += 1
    n_act[0] = na
    counters[1] = countdown
    return status, need, gap


def _face_directions(H, g, group_of, free, rtol):
    """Candidate ascent directions on the face of the free coordinates: the exact maximiser's
    step (pseudo-inverse of the face's Hessian) and, where the Hessian is singular there,
    the gradient's part in its null space (ascent without curvature)."""
    m = free.size
    # P: the orthogonal projector onto {d : sum_{i in g} d_i = 0 for every group g}
    _, grp, counts = np.unique(group_of[free], return_inverse=True, return_counts=True)
    A = np.zeros((counts.size, m))
    A[grp, np.arange(m)] = 1.0 / np.sqrt(counts[grp])
    P = np.eye(m) - A.T @ A
    Pg = P @ g
    if not np.any(Pg):
        return []
    e, U = np.linalg.eigh(P @ H @ P)
    r = U.T @ Pg
    big = max(float(e[-1]), 0.0)
    pos = e > rtol * big
    cand = []
    if np.any(pos):
        cand.append(U[:, pos] @ (r[pos] / e[pos]))
    null = ~pos
    # (a null-space part at the level of rounding is no direction)
    if np.any(null) and np.linalg.norm(r[null]) > 1e-10 * np.linalg.norm(Pg):
        cand.append(U[:, null] @ r[null])
    out = []
    for d in cand:
        # unit size, then each group's sum made zero again (rounding of the products)
        d = P @ d
        size = float(np.max(np.abs(d)))
        if not size > 0:
            continue
        d /= size
        d -= (np.bincount(grp, weights=d, minlength=counts.size) / counts)[grp]
        out.append(d)
    return out


def _free_set_step(cache, grad, beta, blo, bhi, group_of, free, max_rounds=8):
    """Steps of an active-set method on the free coordinates ``free`` (strictly inside their
    box); ``grad`` and ``beta`` are updated in place.

    On the face where ``free`` moves and the rest stays, the subproblem is an
    equality-constrained QP (``sum_{i in g} beta_i`` fixed per group) with the Hessian
    ``Q_FF``, singular when ``Q`` has low rank. Its candidate directions
    (:func:`_face_directions`: the pseudo-inverse Newton step, and the gradient's part in
    the null space of ``Q_FF``) are each followed by the exact line search capped by the
    box (a ratio test), and the one that gains most is taken. If a coordinate hits its
    bound, it leaves the face and the next round solves the smaller face (at most
    ``max_rounds`` rounds).

    The pair loop crawls on such faces when ``Q`` has low rank (linear and feature models):
    each pair step only solves a 2 x 2 restriction. Every step here raises the subproblem's
    objective and keeps its constraints, so the pair loop that follows checks optimality as
    before, and the answer is the same.

    Returns the number of steps taken.
    """
    # keep the columns already cached while the missing ones come in
    have = cache.slot_of[free]
    cache.clock[0] += 1
    cache.stamp[have[have >= 0]] = cache.clock[0]
    cache.fill(free)
    slots = cache.slot_of[free]
    if np.any(slots < 0):
        return 0
    C = np.asarray(cache.cache[slots], dtype=np.float64)  # rows ``free`` of Q, shape (m, n)
    rtol = np.sqrt(np.finfo(cache.dtype).eps)
    keep = np.arange(free.size)
    taken = 0
    for _ in range(max_rounds):
        if keep.size < 2:
            break
        F = free[keep]
        H = C[np.ix_(keep, F)]
        H = 0.5 * (H + H.T)
        g = grad[F]
        best = None
        for d in _face_directions(H, g, group_of, F, rtol):
            slope = float(g @ d)
            if not slope > 0:
                continue
            curv = float(d @ (H @ d))
            t = slope / curv if curv > 0 else np.inf
            room = np.full(d.size, np.inf)
            up = d > 0
            dn = d < 0
            room[up] = (bhi[F[up]] - beta[F[up]]) / d[up]
            room[dn] = (blo[F[dn]] - beta[F[dn]]) / d[dn]
            k = int(np.argmin(room))
            hit = room[k] <= t
            if hit:
                t = float(room[k])
            if not (t > 0 and np.isfinite(t)):
                continue
            gain = t * slope - 0.5 * t * t * curv
            if best is None or gain > best[0]:
                best = (gain, d, t, k if hit else -1)
        if best is None or not best[0] > 0:
            break
        _, d, t, k = best
        beta[F] = np.clip(beta[F] + t * d, blo[F], bhi[F])
        grad -= C[keep].T @ (t * d)
        taken += 1
        if k < 0:
            break  # the face's maximiser: done
        beta[F[k]] = bhi[F[k]] if d[k] > 0 else blo[F[k]]
        keep = keep[(beta[F] > blo[F]) & (beta[F] < bhi[F])]
    return taken


FREE_SET_PERIOD = 300  # pair steps between checks whether the free set has settled
FREE_SET_MAX = 400  # largest free set solved densely
# Pair steps per call of the compiled loop at most: between calls Python runs, so a pending
# Ctrl-C (KeyboardInterrupt) is raised within a fraction of a second.
CHUNK = 200_000


def smo_solve(cache, diagQ, grad, beta, blo, bhi, group_of, n_groups, eps, max_steps,
              rebuild_gradient, batch=None, shrinking=True, free_set=True, free_set_after=0):
    """Run the pair loop, filling the cache in batches whenever a column is missing.

    ``grad`` and ``beta`` are updated in place. ``rebuild_gradient(beta)`` must return the
    exact gradient at ``beta`` (used when shrunk coordinates come back). The loop stops at
    a largest violating pair below ``eps``, or below the rounding floor
    (:func:`~medmtl.med.solvers.kkt.rounding_floor`) if that is larger.

    With ``free_set``, every ``FREE_SET_PERIOD`` pair steps the free coordinates (strictly
    inside their box) are compared with those of the previous check; once they stay the
    same (the pair loop crawls on one face, as on low-rank ``Q``), the subproblem is solved
    on that face directly (:func:`_free_set_step`) and the pair loop goes on from there.
    Whenever the face steps have done more work in all than the pair loop (counted in
    entries of ``Q`` touched, so the same input always takes the same path), the period
    doubles, so they cost at most about as much as the loop they interrupt. The checks
    begin after ``free_set_after`` pair steps (0: at once).

    Returns
    -------
    status : int
        0 converged, 2 step budget used up.
    steps : int
    gap : float
        The final largest violation ``max_up grad - min_low grad``.
    """
    if batch is None:
        batch = BATCH
    n = beta.size
    counters = np.zeros(2, dtype=np.int64)  # steps taken, shrinking countdown
    act = np.arange(n, dtype=np.int64)
    n_act = np.array([n], dtype=np.int64)
    floor_rate = rounding_floor(diagQ, 1.0)
    l1 = np.array([float(np.abs(beta).sum())])
    period = FREE_SET_PERIOD
    max_free = min(FREE_SET_MAX, cache.n_slots // 2)
    next_check = free_set_after + period
    last_free = None
    work_pairs = work_faces = 0  # entries of Q touched by the pair loop and by face steps
    while True:
        budget = min(max_steps - counters[0], CHUNK)
        if free_set:
            budget = min(budget, max(next_check - counters[0], 1))
        before = counters[0]
        status, need, gap = _smo_loop(Slab(cache.cache, cache.slot_of, cache.stamp, cache.clock),
                                      diagQ, PairQP(grad, beta, blo, bhi, group_of),
                                      Active(act, n_act, counters),
                                      Limits(n_groups, eps, budget, shrinking, SHRINK_PERIOD, floor_rate),
                                      l1)
        work_pairs += int(counters[0] - before) * int(n_act[0])
        if status == 2 and counters[0] < max_steps:
            if not free_set or counters[0] < next_check:
                continue  # the end of a chunk
            # a pause to look at the free set
            next_check = counters[0] + period
            a_idx = act[: n_act[0]]
            free = np.sort(a_idx[(beta[a_idx] > blo[a_idx]) & (beta[a_idx] < bhi[a_idx])])
            if 2 <= free.size <= max_free and last_free is not None \
                    and np.array_equal(free, last_free):
                _free_set_step(cache, grad, beta, blo, bhi, group_of, free)
                l1[0] = float(np.abs(beta).sum())
                # its eigen-decomposition and the gradient's update, in entries of Q
                work_faces += free.size**3 + free.size * n
                if work_faces > work_pairs:
                    # the face steps cost more than the pair loop: look less often
                    period *= 2
                    next_check = counters[0] + period
                last_free = None
            else:
                last_free = free
            continue
        if status == 0 and n_act[0] < n:
            # converged on the active set: bring every coordinate back and check again
            grad[:] = rebuild_gradient(beta)
            act[:] = np.arange(n)
            n_act[0] = n
            continue
        if status != 1:
            return status, int(counters[0]), float(gap)
        # A miss: bring in the column asked for and the other strongest violators, which
        # the next steps are likely to pick.
        extra = []
        if batch > 1:
            a_idx = act[: n_act[0]]
            a_idx = a_idx[cache.slot_of[a_idx] < 0]
            cand_up = a_idx[beta[a_idx] < bhi[a_idx]]
            cand_low = a_idx[beta[a_idx] > blo[a_idx]]
            h = batch // 2
            if cand_up.size:
                v = -grad[cand_up]
                sel = cand_up[np.argpartition(v, h - 1)[:h]] if cand_up.size > h else cand_up
                extra.extend(sel.tolist())
            if cand_low.size:
                v = grad[cand_low]
                sel = cand_low[np.argpartition(v, h - 1)[:h]] if cand_low.size > h else cand_low
                extra.extend(sel.tolist())
        cache.fill([need] + extra[: max(0, cache.n_slots // 2 - 1)])
