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

from .kkt import rounding_floor

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
def _clipped_pair_step(beta, blo, bhi, i, j, t):
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
def _smo_loop(cache, slot_of, stamp, clock, diagQ, grad, beta, blo, bhi, group_of, act, n_act,
              n_groups, eps, max_steps, counters, shrinking, shrink_period, floor_rate, l1):
    """Pair steps on the active coordinates until converged, a column is missing, or max_steps.

    ``act[:n_act[0]]`` lists the active coordinates; with ``shrinking`` every so often those
    at a bound whose gradient pushes outwards harder than the current worst pair are dropped
    (LIBSVM's rule); their gradients then go stale until the driver rebuilds them.

    The loop counts as converged at ``max(eps, floor_rate * l1[0])``, ``l1[0] = sum |beta|``
    (kept up to date): below that the gradient, summed from columns times multipliers of
    that size, is rounding (see :func:`~medmtl.med.solvers.kkt.rounding_floor`).

    Returns ``(status, need, gap)``: status 0 converged on the active set, 1 column ``need``
    is not cached, 2 step budget used up. ``counters[0]`` counts the steps taken and
    ``counters[1]`` keeps the shrinking countdown from one call to the next.
    """
    up_val = np.empty(n_groups)
    up_arg = np.empty(n_groups, dtype=np.int64)
    low_val = np.empty(n_groups)
    steps = 0
    na = n_act[0]
    shrink_every = min(na, shrink_period)
    if shrink_every < 1:
        shrink_every = 1
    # the shrinking clock runs on across calls (a cache miss returns to the driver)
    countdown = counters[1] if counters[1] > 0 else shrink_every
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
        if gbest < 0 or gap <= eps or gap <= floor_rate * l1[0]:
            n_act[0] = na
            counters[1] = countdown
            return 0, -1, gap
        if steps >= max_steps:
            n_act[0] = na
            counters[1] = countdown
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
            counters[1] = countdown
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
            counters[1] = countdown
            return 0, -1, gap
        sj = slot_of[j]
        if sj < 0:
            n_act[0] = na
            counters[1] = countdown
            return 1, j, gap
        curv = qii + diagQ[j] - 2.0 * cache[si, j]
        if curv <= 0.0:
            curv = _TAU
        t = (gi - grad[j]) / curv
        before = abs(beta[i]) + abs(beta[j])
        t = _clipped_pair_step(beta, blo, bhi, i, j, t)
        l1[0] += abs(beta[i]) + abs(beta[j]) - before
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
    source : callable, optional
        ``idx -> (m, n)`` array: the columns ``idx`` of ``Q`` as rows, complete and scaled
        (e.g. kernel columns evaluated on demand); replaces the factor products.
    dtype : numpy dtype, default=float64
        Of the slab; ``float32`` (with a single-precision ``F_dense``) halves the memory
        traffic where an inexact subproblem is enough (a Newton model with a line search).

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

    def __init__(self, F, F_dense, inv_a, apply_W, max_bytes, source=None, dtype=np.float64):
        self.F = F
        self.F_dense = F_dense
        self.dtype = np.dtype(dtype)
        self.inv_a = inv_a
        self.apply_W = apply_W
        self.source = source
        n = inv_a.size
        n_slots = int(max(2, min(n, max_bytes // max(self.dtype.itemsize * n, 1))))
        # one cached column per row of the slab, so the pair loop reads it contiguously
        self.cache = np.zeros((n_slots, n), dtype=self.dtype, order="C")
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.owner = np.full(n_slots, -1, dtype=np.int64)
        self.stamp = np.zeros(n_slots, dtype=np.int64)
        self.clock = np.zeros(1, dtype=np.int64)
        self.n_computed = 0
        self._casts = {}
        self._FT = None

    @property
    def n_slots(self):
        return self.cache.shape[0]

    def reset(self, apply_W, source=None):
        """Forget every column (the curvature ``W`` changed).

        ``source``, if given, is a callable ``idx -> (m, n)`` array returning the columns
        ``idx`` of ``Q`` as rows, complete and scaled (kernel columns evaluated on demand),
        instead of the factor products.
        """
        self.apply_W = apply_W
        self.source = source
        self._casts = {k: v for k, v in self._casts.items() if k == "inv_a"}
        self.slot_of[:] = -1
        self.owner[:] = -1
        self.stamp[:] = 0

    def compute(self, idx):
        """The columns ``idx`` of ``Q`` without storing them, as rows: shape (m, n).

        ``Q`` is symmetric, so column ``j`` is row ``j``; computing rows writes straight into
        the slab's layout (a transposed copy into fresh memory costs more than the product).
        """
        idx = np.asarray(idx, dtype=np.int64)
        W = self.apply_W
        # diag(weight)-weighted factor products: kernel evaluations, dense BLAS, or a sparse
        # product that only touches the blocks that meet (tasks do not meet through it) ...
        if self.source is not None:
            return self.source(idx)  # the finished rows of Q, scaled
        # (``hess_weight``, where given, has diagonal rank-one parts folded in)
        weight = getattr(W, "hess_weight", W.weight)
        if self.F_dense is not None:
            rows = (self.F_dense[idx] * self._cast("weight", weight)[None, :]) @ self.F_dense.T
        else:
            if self._FT is None:
                self._FT = sp.csr_matrix(self.F.T)  # converted once, not at every product
            FJ = self.F[idx].multiply(weight[None, :]).tocsr()
            rows = FJ @ self._FT
            rows = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
        # ... plus the rank-one curvature of every switched term, through V = [F_t u_t]_t.
        if W is not None and W.V is not None:
            if sp.issparse(W.V):
                rows += (W.V[idx].multiply(W.tau[None, :]) @ W.VT).toarray().astype(rows.dtype, copy=False)
            else:
                V = self._cast("V", W.V)
                rows += (V[idx] * self._cast("tau", W.tau)[None, :]) @ V.T
        inv_a = self._cast("inv_a", self.inv_a)
        rows *= inv_a[idx][:, None]
        rows *= inv_a[None, :]
        return rows

    def _cast(self, name, x):
        """``x`` in the dtype of the products (float32 when ``F_dense`` is), converted once
        per curvature."""
        dt = self.F_dense.dtype if self.F_dense is not None and self.source is None else np.float64
        if dt == x.dtype:
            return x
        got = self._casts.get(name)
        if got is None:
            got = self._casts[name] = x.astype(dt)
        return got

    def fill(self, idx):
        """Compute and store the columns ``idx`` (evicting the least recently used)."""
        idx = np.asarray([i for i in dict.fromkeys(int(i) for i in idx) if self.slot_of[i] < 0],
                         dtype=np.int64)
        if idx.size == 0:
            return
        idx = idx[: self.n_slots]
        rows = self.compute(idx)
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
        self.cache[slots, :] = rows
        self.owner[slots] = idx
        self.slot_of[idx] = slots
        self.clock[0] += 1
        self.stamp[slots] = self.clock[0]
        self.n_computed += int(need)

    def product(self, x):
        """``Q x`` for ``x`` of shape (n,): cached columns where present, the rest computed.

        Used to rebuild the gradient when shrunk coordinates come back (as LIBSVM does
        from the columns of the multipliers that moved).
        """
        nz = np.flatnonzero(x)
        n = x.size
        if nz.size == 0:
            return np.zeros(n)
        slots = self.slot_of[nz]
        hit = slots >= 0
        y = np.zeros(self.n_slots)
        y[slots[hit]] = x[nz[hit]]
        out = self.cache.T @ y if hit.any() else np.zeros(n)
        miss = nz[~hit]
        step = max(1, (1 << 21) // max(n, 1))
        for s0 in range(0, miss.size, step):
            j = miss[s0:s0 + step]
            out += x[j] @ self.compute(j)
            self.n_computed += int(j.size)
        return out


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
        status, need, gap = _smo_loop(cache.cache, cache.slot_of, cache.stamp, cache.clock,
                                      diagQ, grad, beta, blo, bhi, group_of, act, n_act,
                                      n_groups, eps, budget, counters,
                                      shrinking, SHRINK_PERIOD, floor_rate, l1)
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


@njit(cache=True)
def _smo_dense(Q, grad, beta, blo, bhi, eps, max_steps):
    """LIBSVM's pair loop on one group with a dense ``Q`` (n_g x n_g, row-major).

    Second-order working-set selection, exact clipped pair step; ``grad`` and ``beta``
    updated in place. Returns ``(steps, gap)``.
    """
    n = beta.size
    steps = 0
    while True:
        i = -1
        gmax = -np.inf
        gmin = np.inf
        for k in range(n):
            gk = grad[k]
            if beta[k] < bhi[k] and gk > gmax:
                gmax = gk
                i = k
            if beta[k] > blo[k] and gk < gmin:
                gmin = gk
        gap = gmax - gmin
        if i < 0 or not gap > eps or steps >= max_steps:
            return steps, (gap if i >= 0 and gmin < np.inf else 0.0)
        qii = Q[i, i]
        best = -1.0
        j = -1
        for k in range(n):
            if beta[k] > blo[k]:
                bdiff = gmax - grad[k]
                if bdiff > 0.0:
                    curv = qii + Q[k, k] - 2.0 * Q[i, k]
                    if curv <= 0.0:
                        curv = _TAU
                    score = bdiff * bdiff / curv
                    if score > best:
                        best = score
                        j = k
        if j < 0:
            return steps, gap
        curv = qii + Q[j, j] - 2.0 * Q[i, j]
        if curv <= 0.0:
            curv = _TAU
        t = (gmax - grad[j]) / curv
        t = _clipped_pair_step(beta, blo, bhi, i, j, t)
        for k in range(n):
            grad[k] -= t * (Q[i, k] - Q[j, k])
        steps += 1


@njit(cache=True)
def _scaled_blocks(blk, blk_ptr, gsize, gptr, gidx, scale):
    """``diag(scale_g) B_g diag(scale_g)`` for every flattened block, as a new flat array."""
    Q = np.empty(blk.size)
    for g in range(gsize.size):
        ng = gsize[g]
        base = blk_ptr[g]
        for a in range(ng):
            sa = scale[gidx[gptr[g] + a]]
            for b in range(ng):
                Q[base + a * ng + b] = blk[base + a * ng + b] * sa * scale[gidx[gptr[g] + b]]
    return Q


@njit(cache=True)
def _group_sweeps(Q, q_ptr, gsize, gptr, gidx, Vs, tau, gB, p, beta, blo, bhi, eps, max_steps):
    """Block Gauss-Seidel over the groups for ``Q = blockdiag_g(B_g) + Vs diag(tau) Vs^T``.

    ``Q`` holds, flattened row-major at ``q_ptr[g]``, each group's full block
    ``Q_g = B_g + Vs_g diag(tau) Vs_g^T``. Each visit solves group ``g``'s subproblem by
    :func:`_smo_dense` (the other groups enter through the coupling vector
    ``p = Vs^T (beta - beta0)``), then updates ``gB`` on ``g``'s rows and ``p``. A pair step
    thus costs ``O(n_g)`` instead of ``O(n T)``; sweeps repeat until every group meets
    ``eps`` at the current ``p``. Returns ``(status, steps, gap)``.
    """
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
                     eps, max_steps, shrinking=True, scale=None):
    """SMO for ``Q = S blockdiag(blocks) S + Vs diag(tau) Vs^T`` (``beta`` space,
    ``S = diag(scale)``, identity by default), by block Gauss-Seidel sweeps over the groups
    (:func:`_group_sweeps`).

    ``blocks`` is a list of square arrays (one per group) or all of them flattened
    row-major into one 1-D array, group after group. ``grad`` is the gradient at the
    start point ``beta`` (both updated in place).
    ``local``, ``diagQ``, ``group_of`` and ``shrinking`` are accepted for the common
    signature (the per-group loops need no shrinking).

    Returns
    -------
    status : int
        0 converged, 2 step budget used up.
    steps : int
    gap : float
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
    # each group's full block, scaled and with its share of the coupling, formed once
    Q = _scaled_blocks(blk, blk_ptr, sizes, gptr, gidx,
                       np.ones(n) if scale is None else np.ascontiguousarray(scale, dtype=float))
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
        status, taken, gap = _group_sweeps(Q, blk_ptr, sizes, gptr, gidx, Vs, tau, gB, p,
                                           beta, blo, bhi, eps, budget)
        steps += taken
        if status == 0 or steps >= max_steps:
            break
    grad[:] = gB - Vs @ (tau * p) if tau.size else gB
    return status, int(steps), float(gap)
