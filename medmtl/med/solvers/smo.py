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

Multi-task models whose factors never span two tasks (meta feature / kernel selection,
independent SVMs) have ``Q = blockdiag_g(B_g) + Vs diag(tau) Vs^T``: task blocks plus the
rank-T coupling that the shared switches add. :func:`smo_solve_blocks` runs the same pair
loop on that form directly: a step updates the gradient on its own task's rows and a
T-vector, so no column of the cross-task matrix is ever formed.

The pair loops are compiled with numba when it is installed; without it, they run as
(slow) Python.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

try:  # numba is optional: the same code runs (slowly) as Python without it
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised only without numba
    HAVE_NUMBA = False

    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f


__all__ = ["HAVE_NUMBA", "ColumnCache", "smo_solve", "smo_solve_blocks", "diag_hessian"]

_TAU = 1e-12  # curvature floor for a pair whose Q-restriction is flat
BATCH = 64
SHRINK_PERIOD = 1000
_DENSE_BLOCK = 50_000_000  # entries of a dense (K x batch) block worth forming for a product


@njit(cache=True)
def diag_hessian(indptr, indices, data, col_term, s, tau, u, out):
    """Diagonal of ``F W F^T``: ``out[i] = sum_t s_t ||f_it||^2 + tau_t (f_it^T u_t)^2``.

    Shared columns (``col_term == -1``) count with weight 1.
    """
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
def _smo_loop(cache, slot_of, stamp, clock, diagQ, grad, beta, blo, bhi, group_of, act, n_act,
              n_groups, eps, max_steps, counters, shrinking, shrink_period):
    """Pair steps on the active coordinates until converged, a column is missing, or max_steps.

    ``act[:n_act[0]]`` lists the active coordinates; with ``shrinking`` every so often those
    at a bound whose gradient pushes outwards harder than the current worst pair are dropped
    (LIBSVM's rule); their gradients then go stale until the driver rebuilds them.

    Returns ``(status, need, gap)``: status 0 converged on the active set, 1 column ``need``
    is not cached, 2 step budget used up. ``counters[0]`` counts the steps taken.
    """
    up_val = np.empty(n_groups)
    up_arg = np.empty(n_groups, dtype=np.int64)
    low_val = np.empty(n_groups)
    steps = 0
    na = n_act[0]
    shrink_every = min(na, shrink_period)
    if shrink_every < 1:
        shrink_every = 1
    countdown = shrink_every
    fresh = True
    while True:
        if fresh:
            # selection scan; after a step it is fused with the gradient update below
            for g in range(n_groups):
                up_val[g] = -np.inf
                up_arg[g] = -1
                low_val[g] = np.inf
            for kk in range(na):
                k = act[kk]
                g = group_of[k]
                gk = grad[k]
                if beta[k] < bhi[k] and gk > up_val[g]:
                    up_val[g] = gk
                    up_arg[g] = k
                if beta[k] > blo[k] and gk < low_val[g]:
                    low_val[g] = gk
        fresh = True
        gbest = -1
        gap = 0.0
        for g in range(n_groups):
            if up_arg[g] >= 0 and low_val[g] < np.inf:
                v = up_val[g] - low_val[g]
                if v > gap:
                    gap = v
                    gbest = g
        if gbest < 0 or gap <= eps:
            n_act[0] = na
            return 0, -1, gap
        if steps >= max_steps:
            n_act[0] = na
            return 2, -1, gap
        countdown -= 1
        if shrinking and countdown <= 0:
            countdown = shrink_every
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
            # keep the dropped ones after the active part so act stays a permutation
            na = m
        i = up_arg[gbest]
        si = slot_of[i]
        if si < 0:
            n_act[0] = na
            return 1, i, gap
        clock[0] += 1
        stamp[si] = clock[0]  # keep column i while column j is fetched
        gi = grad[i]
        qii = diagQ[i]
        best = -1.0
        j = -1
        for kk in range(na):
            k = act[kk]
            if group_of[k] == gbest and beta[k] > blo[k]:
                bdiff = gi - grad[k]
                if bdiff > 0.0:
                    curv = qii + diagQ[k] - 2.0 * cache[si, k]
                    if curv <= 0.0:
                        curv = _TAU
                    score = bdiff * bdiff / curv
                    if score > best:
                        best = score
                        j = k
        if j < 0:
            n_act[0] = na
            return 0, -1, gap
        sj = slot_of[j]
        if sj < 0:
            n_act[0] = na
            return 1, j, gap
        curv = qii + diagQ[j] - 2.0 * cache[si, j]
        if curv <= 0.0:
            curv = _TAU
        t = (gi - grad[j]) / curv
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
        ci = cache[si]
        cj = cache[sj]
        for g in range(n_groups):
            up_val[g] = -np.inf
            up_arg[g] = -1
            low_val[g] = np.inf
        for kk in range(na):
            k = act[kk]
            gk = grad[k] - t * (ci[k] - cj[k])
            grad[k] = gk
            g = group_of[k]
            if beta[k] < bhi[k] and gk > up_val[g]:
                up_val[g] = gk
                up_arg[g] = k
            if beta[k] > blo[k] and gk < low_val[g]:
                low_val[g] = gk
        fresh = False
        clock[0] += 1
        stamp[si] = clock[0]
        stamp[sj] = clock[0]
        steps += 1
        counters[0] += 1


class ColumnCache:
    """Columns of ``Q = D F W F^T D`` on demand, in a fixed-size slab (LRU eviction).

    Parameters
    ----------
    F : scipy.sparse.csr_matrix of shape (n, K)
        The factors side by side.
    F_dense : ndarray of shape (n, K) or None
        A dense copy used for BLAS products when ``F`` is dense enough.
    inv_a : ndarray of shape (n,)
    apply_W : object
        The curvature: ``weight`` (K,) on every column, ``tau`` (T,) and ``V`` (n, T) with
        ``V[:, t] = F_t u_t`` (or ``V = None``) for the rank-one part of each term.
    max_bytes : int
        Size of the slab.

    Examples
    --------
    A linear kernel on three points with ``a = 1`` (so ``Q = X X^T``):

    >>> import scipy.sparse as sp
    >>> class Identity:
    ...     weight = np.ones(2)
    ...     V = None
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> cache = ColumnCache(sp.csr_matrix(X), X, np.ones(3), Identity(), 1 << 20)
    >>> cache.fill([2])
    >>> cache.cache[cache.slot_of[2]]
    array([1., 2., 2.])
    """

    def __init__(self, F, F_dense, inv_a, apply_W, max_bytes):
        self.F = F
        self.F_dense = F_dense
        self.inv_a = inv_a
        self.apply_W = apply_W
        n = F.shape[0]
        n_slots = int(max(2, min(n, max_bytes // max(8 * n, 1))))
        # one cached column per row of the slab, so the pair loop reads it contiguously
        self.cache = np.zeros((n_slots, n), order="C")
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.owner = np.full(n_slots, -1, dtype=np.int64)
        self.stamp = np.zeros(n_slots, dtype=np.int64)
        self.clock = np.zeros(1, dtype=np.int64)
        self.n_computed = 0
        self.blocks = None

    @property
    def n_slots(self):
        return self.cache.shape[0]

    def reset(self, apply_W, blocks=None):
        """Forget every column (the curvature ``W`` changed).

        ``blocks``, if given, is ``(group_rows, local, Q_blocks)``: the weighted part of
        ``F W F^T`` is block diagonal over the groups and ``Q_blocks[g]`` holds group
        ``g``'s block (rows ``group_rows[g]``; ``local[i]`` is ``i``'s place in its group).
        """
        self.apply_W = apply_W
        self.blocks = blocks
        self.slot_of[:] = -1
        self.owner[:] = -1
        self.stamp[:] = 0

    def fill(self, idx):
        """Compute and store the columns ``idx`` (evicting the least recently used)."""
        idx = np.asarray([i for i in dict.fromkeys(int(i) for i in idx) if self.slot_of[i] < 0],
                         dtype=np.int64)
        if idx.size == 0:
            return
        idx = idx[: self.n_slots]
        m = idx.size
        W = self.apply_W
        # F diag(weight) F_J^T: dense BLAS or a sparse product that only touches the
        # blocks that meet (tasks do not meet through the weighted part) ...
        if self.blocks is not None:
            group_rows, local, Qb, group_of = self.blocks
            cols = np.zeros((self.F.shape[0], m))
            gi = group_of[idx]
            for g in np.unique(gi):
                sel = np.flatnonzero(gi == g)
                cols[group_rows[g][:, None], sel[None, :]] = Qb[g][:, local[idx[sel]]]
        elif self.F_dense is not None:
            cols = self.F_dense @ (W.weight[:, None] * self.F_dense[idx].T)
        else:
            FJ = self.F[idx].multiply(W.weight[None, :]).tocsr()
            cols = self.F @ FJ.T
            cols = cols.toarray() if sp.issparse(cols) else np.asarray(cols)
        # ... plus the rank-one curvature of every switched term, through V = [F_t u_t]_t.
        if W.V is not None:
            cols += W.V @ (W.tau[:, None] * W.V[idx].T)
        cols *= self.inv_a[:, None]
        cols *= self.inv_a[idx][None, :]
        free = np.flatnonzero(self.owner < 0)
        need = idx.size
        if free.size < need:
            # evict the least recently used among the occupied slots
            occupied = np.flatnonzero(self.owner >= 0)
            order = occupied[np.argsort(self.stamp[occupied], kind="stable")]
            victims = order[: need - free.size]
            self.slot_of[self.owner[victims]] = -1
            self.owner[victims] = -1
            free = np.concatenate([free, victims])
        slots = free[:need]
        self.cache[slots, :] = cols.T
        self.owner[slots] = idx
        self.slot_of[idx] = slots
        self.clock[0] += 1
        self.stamp[slots] = self.clock[0]
        self.n_computed += int(need)


def smo_solve(cache, diagQ, grad, beta, blo, bhi, group_of, n_groups, eps, max_steps,
              rebuild_gradient, batch=None, shrinking=True):
    if batch is None:
        batch = BATCH
    """Run the pair loop, filling the cache in batches whenever a column is missing.

    ``grad`` and ``beta`` are updated in place. ``rebuild_gradient(beta)`` must return the
    exact gradient at ``beta`` (used when shrunk coordinates come back).

    Returns
    -------
    status : int
        0 converged, 2 step budget used up.
    steps : int
    gap : float
        The final largest violation ``max_up grad - min_low grad``.
    """
    n = beta.size
    counters = np.zeros(1, dtype=np.int64)
    act = np.arange(n, dtype=np.int64)
    n_act = np.array([n], dtype=np.int64)
    while True:
        status, need, gap = _smo_loop(cache.cache, cache.slot_of, cache.stamp, cache.clock,
                                      diagQ, grad, beta, blo, bhi, group_of, act, n_act,
                                      n_groups, eps, max_steps - counters[0], counters,
                                      shrinking, SHRINK_PERIOD)
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


@njit(cache=True)
def _smo_blocks_loop(blk, blk_ptr, gsize, local, gptr, gidx, Vs, tau, gB, p, diagQ, beta, blo,
                     bhi, group_of, act, eps, max_steps, shrinking, shrink_period):
    """The pair loop for block-diagonal-plus-low-rank ``Q`` (multi-task models).

    ``Q = blockdiag_g(B_g) + Vs diag(tau) Vs^T`` with the blocks ``B_g`` stored row-major
    in ``blk`` at ``blk_ptr[g]``. The gradient is kept as ``gB - Vs (tau * p)``: a step on
    a pair of group ``g`` updates ``gB`` on ``g``'s rows only and ``p = Vs^T (beta - beta0)``
    in ``O(T)``, so no column of the cross-task matrix is ever formed.

    Returns ``(status, steps, gap)``: status 0 converged, 2 step budget used up.
    """
    n = beta.size
    n_groups = gptr.size - 1
    T = tau.size
    up_val = np.empty(n_groups)
    up_arg = np.empty(n_groups, dtype=np.int64)
    low_val = np.empty(n_groups)
    w = np.empty(T)
    gfull = np.empty(n)
    na = n
    for k in range(n):
        act[k] = k
    steps = 0
    period = max(1, min(n, shrink_period))
    countdown = period
    full_check = False
    while True:
        for t_ in range(T):
            w[t_] = tau[t_] * p[t_]
        for g in range(n_groups):
            up_val[g] = -np.inf
            up_arg[g] = -1
            low_val[g] = np.inf
        for kk in range(na):
            k = act[kk]
            gk = gB[k]
            for t_ in range(T):
                gk -= Vs[k, t_] * w[t_]
            gfull[k] = gk
            g = group_of[k]
            if beta[k] < bhi[k] and gk > up_val[g]:
                up_val[g] = gk
                up_arg[g] = k
            if beta[k] > blo[k] and gk < low_val[g]:
                low_val[g] = gk
        gbest = -1
        gap = 0.0
        for g in range(n_groups):
            if up_arg[g] >= 0 and low_val[g] < np.inf:
                v = up_val[g] - low_val[g]
                if v > gap:
                    gap = v
                    gbest = g
        if gbest < 0 or gap <= eps:
            if na < n:
                # converged on the active set: look at every coordinate once more
                na = n
                for k in range(n):
                    act[k] = k
                countdown = period
                full_check = True
                continue
            return 0, steps, gap
        full_check = False
        if steps >= max_steps:
            return 2, steps, gap
        countdown -= 1
        if shrinking and countdown <= 0 and not full_check:
            countdown = period
            m = 0
            for kk in range(na):
                k = act[kk]
                g = group_of[k]
                out = False
                if beta[k] >= bhi[k]:
                    out = gfull[k] > up_val[g]
                elif beta[k] <= blo[k]:
                    out = gfull[k] < low_val[g]
                if not out:
                    act[m] = k
                    m += 1
            na = m
        i = up_arg[gbest]
        gi = gfull[i]
        base = blk_ptr[gbest]
        ng = gsize[gbest]
        li = local[i]
        qii = diagQ[i]
        best = -1.0
        j = -1
        qij_best = 0.0
        for kk in range(gptr[gbest], gptr[gbest + 1]):
            k = gidx[kk]
            if beta[k] > blo[k]:
                # gfull is fresh only for active coordinates; others are recomputed here
                gk = gB[k]
                for t_ in range(T):
                    gk -= Vs[k, t_] * w[t_]
                bdiff = gi - gk
                if bdiff > 0.0:
                    qik = blk[base + li * ng + local[k]]
                    for t_ in range(T):
                        qik += Vs[i, t_] * tau[t_] * Vs[k, t_]
                    curv = qii + diagQ[k] - 2.0 * qik
                    if curv <= 0.0:
                        curv = _TAU
                    score = bdiff * bdiff / curv
                    if score > best:
                        best = score
                        j = k
                        qij_best = qik
                        gfull[k] = gk
        if j < 0:
            return 0, steps, gap
        curv = qii + diagQ[j] - 2.0 * qij_best
        if curv <= 0.0:
            curv = _TAU
        t = (gi - gfull[j]) / curv
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
        lj = local[j]
        for kk in range(gptr[gbest], gptr[gbest + 1]):
            k = gidx[kk]
            lk = local[k]
            # blocks are symmetric: row li of B_g is its column li
            gB[k] -= t * (blk[base + li * ng + lk] - blk[base + lj * ng + lk])
        for t_ in range(T):
            p[t_] += t * (Vs[i, t_] - Vs[j, t_])
        steps += 1


def smo_solve_blocks(blocks, group_rows, local, Vs, tau, grad, beta, blo, bhi, diagQ, group_of,
                     eps, max_steps, shrinking=True):
    """SMO for ``Q = blockdiag(blocks) + Vs diag(tau) Vs^T`` (``beta`` space).

    ``grad`` is the gradient at the start point ``beta`` (both updated in place).

    Returns
    -------
    status : int
        0 converged, 2 step budget used up.
    steps : int
    gap : float
    """
    n = beta.size
    sizes = np.array([g.size for g in group_rows], dtype=np.int64)
    blk_ptr = np.concatenate(([0], np.cumsum(sizes**2)[:-1])).astype(np.int64)
    blk = np.concatenate([np.ascontiguousarray(B).ravel() for B in blocks]) if blocks else np.zeros(0)
    gidx = np.concatenate(group_rows).astype(np.int64)
    gptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    T = tau.size
    Vs = np.ascontiguousarray(Vs if Vs is not None else np.zeros((n, 0)))
    if Vs.shape[1] != T:
        Vs = np.zeros((n, 0))
        tau = np.zeros(0)
    gB = grad.copy()
    p = np.zeros(tau.size)
    act = np.empty(n, dtype=np.int64)
    status, steps, gap = _smo_blocks_loop(blk, blk_ptr, sizes, local, gptr, gidx, Vs,
                                          np.ascontiguousarray(tau, dtype=float), gB, p, diagQ,
                                          beta, blo, bhi, group_of, act, eps, max_steps,
                                          shrinking, SHRINK_PERIOD)
    grad[:] = gB - Vs @ (tau * p) if tau.size else gB
    return status, int(steps), float(gap)
