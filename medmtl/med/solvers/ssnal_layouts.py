"""The spaces the proximal Newton method (:mod:`~medmtl.med.solvers.ssnal`) works in: the
conjugate of the dual's nonlinear part, and the two layouts of the weights, biases and
examples its Newton systems are solved in.

* per task (:class:`Blocks`), when every column of the factors belongs to one task:
  conjugate gradients preconditioned by each task's exact block;
* flat (:class:`Flat`), for any other dual of moderate width: the whole generalised Hessian
  formed densely and factorised; on dense factors too long for sparse products
  (:class:`DenseFlat`) it is formed by BLAS from the dense rows.

Both keep the Gram matrices of the rows inside the box between Newton steps and update them
by the rows that entered or left it: from one Newton step to the next few do.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..bound import switch_posterior
from ._numba import HAVE_NUMBA, njit
from .coordinate_steps import switched_sum

__all__ = ["layout_of", "columns_of", "Conjugate", "Blocks", "Flat", "DenseFlat", "MAX_BLOCK", "MAX_FLAT"]

# A task's block of the per-task layout is dense: at most this many columns per task, and
# this many entries of the dense rows in all.
MAX_BLOCK = 512
MAX_DENSE = 2e7
# The flat layout forms the (R + G)-square Hessian: at most this many weights and biases,
# and this many multiply-adds to form it (the sum over the rows of their nonzeros squared).
MAX_FLAT = 2500
MAX_FLAT_WORK = 2e9
# Bytes of the dense factors' rows copied at a time to form a Gram matrix.
_SYRK_CHUNK_BYTES = 1 << 25
# Rows entering or leaving the inside of the box at most for one general product to update
# the Gram matrix (more take two symmetric ones).
_FEW_ROWS = 256
# Conjugate-gradient iterations per Newton step at most, and the fraction of the Newton
# system's residual at which CG stops.
_MAX_CG = 100
_CG_RTOL = 1e-3
# Updates of the Gram matrices of the rows inside their box between fresh ones.
_REFRESH = 16
# The dense flat layout reuses its last factorisation for a Newton step where at most this
# many rows entered or left the box since, with at most this many CG steps down to this
# fraction of the first residual.
_WOODBURY_ROWS = 256
_WOODBURY_CG = 10
_WOODBURY_RTOL = 1e-10


# ---------------------------------------------------------------------------------------
# The conjugate of the nonlinear part of J
# ---------------------------------------------------------------------------------------
class Conjugate:
    """``f`` and its conjugate on the columns: ``w = grad f(u)`` and back, ``f*(w)``, and
    the Hessian of ``f*``."""

    def __init__(self, rows, n_terms, alpha):
        self.ct = rows.col_term.astype(np.int64)
        self.sw = self.ct >= 0
        self.t_sw = self.ct[self.sw]
        self.D = n_terms
        self.alpha = alpha

    def _posterior(self, q):
        return switch_posterior(q, self.alpha)

    def w_of(self, u):
        """``grad f(u)``."""
        w = u.copy()
        q = 0.5 * np.bincount(self.t_sw, u[self.sw] ** 2, minlength=self.D)
        w[self.sw] *= self._posterior(q)[self.t_sw]
        return w

    def u_of(self, w):
        """``grad f*(w)`` (the ``u`` with ``grad f(u) = w``), with each term's posterior:
        per term, ``r s(r) = ||w_t||`` for ``r = ||u_t||`` (:func:`_term_radii`)."""
        rho = np.sqrt(np.bincount(self.t_sw, w[self.sw] ** 2, minlength=self.D))
        r = _term_radii(rho, self.alpha) if self.alpha > 0 else rho
        s = self._posterior(0.5 * r * r)
        u = w.copy()
        u[self.sw] = w[self.sw] / s[self.t_sw]
        return u, s, 0.5 * r * r

    def value(self, w, u, q):
        """``f*(w) = u^T w - f(u)``, ``f`` as ``J`` holds it (:func:`switched_sum`)."""
        f = 0.5 * float(u[~self.sw] @ u[~self.sw]) + switched_sum(q, self.alpha)
        return float(u @ w) - f

    def hessian(self, u, s, q):
        """``x -> grad^2 f*(w) x``, its diagonal, and the rank-one parts: at ``u`` with
        posteriors ``s`` it is ``(I - k_t u_t u_t^T) / s_t`` per term,
        ``k_t = (1 - s_t) / (1 + 2 (1 - s_t) q_t)``, and the identity on the shared columns.
        The rank-one parts are returned as a sparse ``(R, D)`` matrix ``L`` with
        ``grad^2 f* = diag(d) - L L^T``."""
        k = (1.0 - s) / (1.0 + 2.0 * (1.0 - s) * q)
        st, kt, us = s[self.t_sw], k[self.t_sw], u[self.sw]
        inv = np.ones(u.size)
        inv[self.sw] = 1.0 / st
        diag = inv.copy()
        diag[self.sw] -= kt * us * us / st

        def apply(x):
            out = x.copy()
            dots = np.bincount(self.t_sw, us * x[self.sw], minlength=self.D)
            out[self.sw] = (x[self.sw] - kt * us * dots[self.t_sw]) / st
            return out

        cols = np.flatnonzero(self.sw)
        L = sp.csr_matrix((us * np.sqrt(kt / st), (cols, self.t_sw)), shape=(u.size, self.D))
        return apply, diag, (inv, L)


def _term_radii(rho, alpha):
    """The ``r >= 0`` with ``r s(r) = rho`` per term, ``s(r) = 1 / (1 + alpha exp(-r^2 / 2))``.

    In ``q = r^2 / 2`` the equation ``h(q) = log(r s(r)) - log(rho) = 0`` has ``h`` increasing
    and concave (``h' = 1 / (2 q) + 1 - s``, ``h'' = -1 / (2 q^2) - s (1 - s)``), so Newton's
    iterates from a point left of the root rise to it monotonically: from
    ``r = rho / s(rho / s(rho))`` (``rho / s(rho)`` is above the root, ``s`` increasing), at
    most 18 iterations for ``alpha`` up to 1e12 (against 44 bisection steps before), then one
    Newton step on ``r s(r) = rho`` itself for the last digits. Where ``rho`` is so small that
    ``r^2 / 2`` would underflow, ``s`` is ``s(0)`` and ``r = (1 + alpha) rho``."""
    r = np.array(rho, dtype=float)
    pos = np.flatnonzero(rho > 1e-150)
    tiny = (rho > 0) & (rho <= 1e-150)
    r[tiny] = rho[tiny] * (1.0 + alpha)
    if pos.size == 0:
        return r
    p = rho[pos]
    x = p / switch_posterior(0.5 * p * p, alpha)       # at or above the root
    x = p / switch_posterior(0.5 * x * x, alpha)       # at or below it
    q, log_p = 0.5 * x * x, np.log(p)
    left = np.arange(p.size)
    for _ in range(100):
        qi = q[left]
        s = switch_posterior(qi, alpha)
        step = (log_p[left] - 0.5 * np.log(2.0 * qi) - np.log(s)) / (0.5 / qi + (1.0 - s))
        q[left] = qi + step
        left = left[step > 1e-15 * qi]
        if left.size == 0:
            break
    x = np.sqrt(2.0 * q)
    s = switch_posterior(q, alpha)
    r[pos] = x - (x * s - p) / (s + s * (1.0 - s) * x * x)
    return r


# ---------------------------------------------------------------------------------------
# Layouts of the weights, biases and examples
# ---------------------------------------------------------------------------------------
class Blocks:
    """Per-task layout: ``X[g]`` holds task ``g``'s rows on the columns it owns, then
    zeros, then ``a_g`` in the last slot (the bias); shorter tasks are padded with zero
    rows. A task's weights and bias are one row ``V[g]`` of a ``(G, K)`` array, so
    ``F w + a b`` is one batched product, and so is the adjoint."""

    def __init__(self, dual, rows, owner):
        n_groups = len(dual.groups)
        self.G = n_groups
        self.cols = [np.flatnonzero(owner == g) for g in range(n_groups)]
        self.K = max(c.size for c in self.cols) + 1
        self.N = max(r.size for r in dual.groups)
        R, n = rows.F.shape[1], dual.n
        self.R, self.n = R, n
        # index[g]: the task's columns, then R (a zero slot); the last slot is the bias
        self.index = np.full((n_groups, self.K - 1), R)
        self.row_index = np.full((n_groups, self.N), n)
        self.X = np.zeros((n_groups, self.N, self.K))
        for g, (c, r) in enumerate(zip(self.cols, dual.groups)):
            self.index[g, :c.size] = c
            self.row_index[g, :r.size] = r
            self.X[g, :r.size, :c.size] = rows.F[r][:, c].toarray()
            self.X[g, :r.size, -1] = dual.a[r]
        self.counts = [r.size for r in dual.groups]
        self.a_rows = self.X[:, :, -1]
        self._gram, self._inside, self._updates = None, None, 0

    @classmethod
    def of(cls, dual, rows):
        """The layout of ``dual``, or None when a column is shared by two tasks or the
        blocks would be too large."""
        F = rows.F
        n_groups = len(dual.groups)
        if F.shape[1] == 0 or n_groups == 0:
            return None
        owner = np.full(F.shape[1], -1)
        for g, r in enumerate(dual.groups):
            cols = columns_of(F, r)
            if np.any(owner[cols] >= 0):
                return None
            owner[cols] = g
        counts = np.bincount(owner[owner >= 0], minlength=n_groups)
        K = counts.max(initial=0) + 1
        N = max(r.size for r in dual.groups)
        if K - 1 > MAX_BLOCK or n_groups * N * K > MAX_DENSE:
            return None
        return cls(dual, rows, owner)

    def rows_of(self, x, fill=0.0):
        """A per-example vector as ``(G, N)``."""
        return np.append(x, fill)[self.row_index]

    def flat(self, X):
        """The per-example vector of a ``(G, N)`` array (padding dropped)."""
        real = self.row_index < self.n
        out = np.empty(self.n)
        out[self.row_index[real]] = X[real]
        return out

    def weights(self, V):
        """The column vector ``w`` of the stacked ``V``."""
        w = np.zeros(self.R + 1)
        w[self.index] = V[:, :-1]
        return w[:self.R]

    def stack(self, w, b):
        V = np.empty((self.G, self.K))
        V[:, :-1] = np.append(w, 0.0)[self.index]
        V[:, -1] = b
        return V

    def apply(self, V):
        """``F w + a b_g`` per example: by a compiled loop where numba compiles it (at 100
        blocks of 2,000 x 100, a pass over the blocks at memory speed: 5 ms against 12 ms
        for the batched ``matmul``, and no slower on small blocks)."""
        if not HAVE_NUMBA:
            return np.matmul(self.X, V[:, :, None])[:, :, 0]
        return _blocks_apply(self.X, V)

    def adjoint(self, lam):
        """``(F^T lam, a_g^T lam_g)`` stacked (a compiled loop, as :meth:`apply`)."""
        if not HAVE_NUMBA:
            return np.matmul(lam[:, None, :], self.X)[:, 0, :]
        return _rows_adjoint(self.X, lam, np.ones(lam.shape, dtype=np.bool_))

    def adjoint_of(self, d, moved):
        """:meth:`adjoint` of ``d``, zero outside ``moved``, from the rows in ``moved`` (read
        in place: no copy of them is gathered)."""
        if not HAVE_NUMBA:
            out = np.zeros((self.G, self.K))
            for k in np.flatnonzero(moved.any(axis=1)):
                rows = np.flatnonzero(moved[k])
                out[k] = d[k, rows] @ self.X[k, rows]
            return out
        return _rows_adjoint(self.X, d, moved)

    def task(self, k):
        return k, slice(0, self.counts[k])

    def bias_slot(self, k):
        return k, self.K - 1

    def grams(self, inside):
        """Each task's ``X_I^T X_I`` over its rows ``I`` inside their box, ``(G, K, K)``:
        kept between Newton steps and updated per task by the rows that entered or left
        ``I``, formed afresh for a task where more than half of them changed, and for
        all after ``_REFRESH`` updates (rounding)."""
        old = self._inside
        fresh = old is None or self._updates >= _REFRESH
        if fresh:
            self._gram = np.empty((self.G, self.K, self.K))
            old = np.zeros_like(inside)
        for k in range(self.G) if fresh else np.flatnonzero(np.any(inside != old, axis=1)):
            added = np.flatnonzero(inside[k] & ~old[k])
            removed = np.flatnonzero(old[k] & ~inside[k])
            if fresh or 2 * (added.size + removed.size) > np.count_nonzero(inside[k]):
                Xi = self.X[k][inside[k]]
                self._gram[k] = Xi.T @ Xi
            else:
                Xa, Xr = self.X[k][added], self.X[k][removed]
                self._gram[k] += Xa.T @ Xa - Xr.T @ Xr
        self._inside, self._updates = inside.copy(), 0 if fresh else self._updates + 1
        return self._gram

    def direction(self, hess, inside, rhs, mu):
        """The Newton step: PCG on the generalised Hessian, preconditioned by each task's
        exact block; a task with no example inside its box keeps its bias (flat in it)."""
        hess_f, diag_f, _ = hess
        K = self.K
        has = inside.any(axis=1)
        gram = self.grams(inside)

        def H(P):
            out = np.matmul(gram, P[:, :, None])[:, :, 0] / mu
            w_part = hess_f(self.weights(P))
            out[:, :-1] += np.append(w_part, 0.0)[self.index]
            out[~has, -1] = P[~has, -1]
            return out

        blocks = gram / mu
        diag_stack = np.append(diag_f, 1.0)[self.index]
        blocks[:, np.arange(K - 1), np.arange(K - 1)] += diag_stack
        for k in np.flatnonzero(~has):
            blocks[k, -1, :] = blocks[k, :, -1] = 0.0
            blocks[k, -1, -1] = 1.0
        M = _block_preconditioner(blocks)
        rhs = rhs.copy()
        rhs[~has, -1] = 0.0
        P, its, _ = _pcg(H, M, rhs)
        return P, its, has


def _block_preconditioner(blocks):
    """``R -> blocks^{-1} R`` per task (``blocks`` of shape ``(G, K, K)``, symmetric): by each
    block's Cholesky factor and two triangular solves where numba compiles them (a sixth of
    the work of the inverses: at 100 blocks of 101, 3.7 ms against 21 ms, each application
    1 ms against 0.2 ms), else by the inverses; by the pseudo-inverses where a block is not
    numerically positive definite (extreme scales)."""
    try:
        factors = np.linalg.cholesky(blocks)
    except np.linalg.LinAlgError:
        inv = np.linalg.pinv(blocks, hermitian=True)
    else:
        if HAVE_NUMBA:
            return lambda R: _cholesky_solve(factors, R)
        inv = np.linalg.inv(blocks)
    return lambda R: np.matmul(inv, R[:, :, None])[:, :, 0]


@njit(cache=True, nogil=True)
def _cholesky_solve(L, R):
    """``(L_g L_g^T)^{-1} R_g`` per block ``g`` from the lower Cholesky factors ``L``."""
    G, K = R.shape
    out = np.empty_like(R)
    for g in range(G):
        y = out[g]
        Lg = L[g]
        for i in range(K):
            acc = R[g, i]
            for j in range(i):
                acc -= Lg[i, j] * y[j]
            y[i] = acc / Lg[i, i]
        for i in range(K - 1, -1, -1):
            acc = y[i]
            for j in range(i + 1, K):
                acc -= Lg[j, i] * y[j]
            y[i] = acc / Lg[i, i]
    return out


@njit(cache=True, nogil=True, fastmath={"contract", "reassoc"})
def _blocks_apply(X, V):
    """``out[g, i] = X[g, i] . V[g]``, each row's sum in any order."""
    G, N, K = X.shape
    out = np.empty((G, N))
    for g in range(G):
        for i in range(N):
            acc = 0.0
            for j in range(K):
                acc += X[g, i, j] * V[g, j]
            out[g, i] = acc
    return out


@njit(cache=True, nogil=True)
def _rows_adjoint(X, d, moved):
    """``out[g] = sum_i d[g, i] X[g, i]`` over the rows ``i`` with ``moved[g, i]``."""
    G, N, K = X.shape
    out = np.zeros((G, K))
    for g in range(G):
        for i in range(N):
            if moved[g, i]:
                di = d[g, i]
                for j in range(K):
                    out[g, j] += di * X[g, i, j]
    return out


def columns_of(F, r):
    """The columns that the rows ``r`` of the CSR matrix ``F`` touch, sorted, without a copy
    of those rows where they are contiguous (a task's rows usually are)."""
    if r.size and np.all(np.diff(r) == 1):
        touched = F.indices[F.indptr[r[0]]:F.indptr[r[-1] + 1]]
    else:
        touched = F[r].indices
    seen = np.zeros(F.shape[1], dtype=bool)
    seen[touched] = True
    return np.flatnonzero(seen)


class Flat:
    """Flat layout: ``V = (w, b)`` as one vector, the examples as one; the generalised
    Hessian is formed densely (``(R + G)``-square) and factorised."""

    def __init__(self, dual, rows):
        self.F, self.FT = rows.F, rows.FT
        self.R, self.n, self.G = rows.F.shape[1], dual.n, len(dual.groups)
        self.a_rows = dual.a
        self.group_of = dual.group_of
        self.groups = dual.groups
        self.A = sp.csr_matrix((dual.a, (np.arange(dual.n), dual.group_of)), shape=(dual.n, self.G))
        self.FA = sp.hstack([self.F, self.A], format="csr")

    @classmethod
    def of(cls, dual, rows):
        R, G = rows.F.shape[1], len(dual.groups)
        if R == 0 or R + G > MAX_FLAT:
            return None
        if rows.dense is not None:
            # dense factors: the Hessian is one BLAS product, far cheaper per multiply-add
            # than a sparse one (digits-sized dense X, 1,797 x 1,000: a finish of 41 Newton
            # steps took 68 s through the sparse product, 1.4 s through BLAS)
            return DenseFlat(dual, rows)
        per_row = np.diff(rows.F.indptr).astype(float) + 1.0
        if float(per_row @ per_row) <= MAX_FLAT_WORK:
            return cls(dual, rows)
        return None

    def rows_of(self, x, fill=0.0):
        return np.array(x, dtype=float)

    def flat(self, X):
        return np.array(X, dtype=float)

    def weights(self, V):
        return V[:self.R]

    def stack(self, w, b):
        return np.concatenate([w, b])

    def apply(self, V):
        return self.FA @ V

    def adjoint(self, lam):
        return self.FA.T @ lam

    def adjoint_of(self, d, moved):
        """:meth:`adjoint` of ``d``, zero outside ``moved`` (sparse products take only the
        nonzeros already)."""
        return self.adjoint(d)

    def task(self, k):
        return self.groups[k]

    def bias_slot(self, k):
        return self.R + k

    def direction(self, hess, inside, rhs, mu):
        """The Newton step by a Cholesky factorisation of the dense generalised Hessian; a
        task with no example inside its box keeps its bias (flat in it)."""
        _, _, (inv, L) = hess
        M = self.FA[inside]
        H = (M.T @ M).toarray() / mu
        return self._solve(H, inv, L, inside, rhs)

    def _solve(self, H, inv, L, inside, rhs):
        """Complete the scaled Gram part ``H`` (in place) into the generalised Hessian and
        solve it; a task with no example inside its box keeps its bias (flat in it)."""
        H[np.arange(self.R), np.arange(self.R)] += inv
        if L.nnz:
            H[:self.R, :self.R] -= (L @ L.T).toarray()
        has = np.bincount(self.group_of[inside], minlength=self.G) > 0
        rhs = rhs.copy()
        for k in np.flatnonzero(~has):
            j = self.R + k
            H[j, :] = H[:, j] = 0.0
            H[j, j] = 1.0
            rhs[j] = 0.0
        try:
            P = sla.cho_solve(sla.cho_factor(H, check_finite=False), rhs, check_finite=False)
        except np.linalg.LinAlgError:  # not numerically positive definite: least squares
            P = sla.lstsq(H, rhs, check_finite=False)[0]
        return P, 1, has


class DenseFlat(Flat):
    """The flat layout on dense factors: the products with ``F`` and the generalised
    Hessian are BLAS calls on the dense copy of the factors, the equalities' columns kept
    apart (no second copy of ``F`` with them appended).

    The Gram matrix ``F_I^T F_I`` of the rows inside their box, and the biases' rows
    ``a_{I,g}^T F_{I,g}``, are kept between Newton steps and updated by the rows that
    entered or left ``I`` (from one step to the next few do), formed afresh when more than
    half of them changed or after ``_REFRESH`` updates (rounding). The Newton system is
    assembled and factorised in its upper triangle only, scaled by ``mu`` (no pass over
    the whole matrix to divide it). The last factorisation is kept and serves the next
    steps at the same ``mu`` while few rows cross the box (:meth:`_by_last_factor`)."""

    def __init__(self, dual, rows):
        self.Fd = rows.dense
        self.R, self.n, self.G = self.Fd.shape[1], dual.n, len(dual.groups)
        self.a_rows = dual.a
        self.group_of = dual.group_of
        self.groups = dual.groups
        self._gram, self._bias, self._inside, self._updates = None, None, None, 0
        self._last = None

    def apply(self, V):
        return self.Fd @ V[:self.R] + self.a_rows * V[self.R:][self.group_of]

    def adjoint(self, lam):
        return np.concatenate([self.Fd.T @ lam,
                               np.bincount(self.group_of, self.a_rows * lam, minlength=self.G)])

    def adjoint_of(self, d, moved):
        """:meth:`adjoint` of ``d``, zero outside ``moved``, from the rows in ``moved``."""
        rows = np.flatnonzero(moved)
        return np.concatenate([d[rows] @ self.Fd[rows], np.bincount(
            self.group_of[rows], self.a_rows[rows] * d[rows], minlength=self.G)])

    def _gram_and_bias(self, picked):
        """The upper triangle of ``F_m^T F_m`` and the biases' rows ``B[g] = a_{m,g}^T F_{m,g}``
        over the rows ``m = picked``, summed over chunks of rows so that the copy of the rows
        taken stays small beside ``F``."""
        out = np.zeros((self.R, self.R))
        bias = np.zeros((self.G, self.R))
        step = max(1, _SYRK_CHUNK_BYTES // max(8 * self.R, 1))
        for s0 in range(0, picked.size, step):
            chunk = picked[s0:s0 + step]
            M = self.Fd[chunk]
            out = sla.blas.dsyrk(1.0, M.T, beta=1.0, c=out, trans=0, lower=0, overwrite_c=True)
            self._add_bias(bias, chunk, M)
        return out, bias

    def _add_bias(self, bias, rows, M):
        """``bias[g] += a_{rows,g}^T M_g`` per task ``g`` of the ``rows`` (``M`` their rows
        of ``F``, signed or not)."""
        tasks = self.group_of[rows]
        for g in np.unique(tasks):
            of_g = tasks == g
            bias[g] += self.a_rows[rows[of_g]] @ M[of_g]

    def _gram_of(self, inside):
        """``F_I^T F_I`` (upper triangle) and the biases' rows for ``I = inside``."""
        old = self._inside
        if old is not None and self._updates < _REFRESH:
            added, removed = np.flatnonzero(inside & ~old), np.flatnonzero(old & ~inside)
            changed = added.size + removed.size
            if changed == 0:
                return self._gram, self._bias
            if 2 * changed <= int(inside.sum()):
                self._update(added, removed)
                self._inside, self._updates = inside.copy(), self._updates + 1
                return self._gram, self._bias
        self._gram, self._bias = self._gram_and_bias(np.flatnonzero(inside))
        self._inside, self._updates = inside.copy(), 0
        return self._gram, self._bias

    def _update(self, added, removed):
        """Add the rows ``added`` to the Gram matrix and the biases' rows and take the rows
        ``removed`` out, in place: a few rows by one product that reads and writes the
        Gram matrix once, many by a symmetric product (half the multiply-adds) each."""
        if added.size + removed.size > _FEW_ROWS:
            for picked, sign in ((added, 1.0), (removed, -1.0)):
                gram, bias = self._gram_and_bias(picked)
                self._gram += sign * gram
                self._bias += sign * bias
            return
        rows = np.concatenate([added, removed])
        M = self.Fd[rows]
        signed = M * np.where(np.arange(rows.size) < added.size, 1.0, -1.0)[:, None]
        self._gram = sla.blas.dgemm(1.0, M, signed, trans_a=1, beta=1.0, c=self._gram,
                                    overwrite_c=True)
        self._add_bias(self._bias, rows, signed)

    def direction(self, hess, inside, rhs, mu):
        """The Newton step as :meth:`Flat.direction`, the Hessian (times ``mu``) formed
        from the dense rows inside their box in its upper triangle and factorised; or, where
        few rows entered or left the box since the last factorisation at this ``mu``, by
        conjugate gradients on the exact system preconditioned by that factorisation
        updated for those rows (:meth:`_by_last_factor`)."""
        has = np.bincount(self.group_of[inside], minlength=self.G) > 0
        rhs = mu * rhs
        rhs[self.R:][~has] = 0.0
        found = self._by_last_factor(hess, inside, rhs, mu, has)
        if found is not None:
            return found[0], found[1], has
        self._last = None  # its matrix and factor freed before the next are formed
        H = self._system(hess, inside, mu, has)
        try:
            factor = sla.cho_factor(H, lower=False, check_finite=False)
        except np.linalg.LinAlgError:  # not numerically positive definite: least squares
            H = np.triu(H)
            H += np.triu(H, 1).T
            return sla.lstsq(H, rhs, check_finite=False)[0], 1, has
        self._last = (factor, H, hess, mu, has)
        return sla.cho_solve(factor, rhs, check_finite=False), 1, has

    def _by_last_factor(self, hess, inside, rhs, mu, has):
        """The Newton step from the last factorisation ``A`` (``mu`` times the Hessian at
        the last inside set ``I0``, ``w0``), or None where it does not serve.

        The system now is ``A + U S U^T + mu (grad^2 f*(w) - grad^2 f*(w0))``, ``U`` the
        rows ``[F a]`` of the examples that entered (``S = 1``) or left (``S = -1``) the box.
        Conjugate gradients solve it, each step one product with ``A`` (kept) and ``U``,
        preconditioned by ``(A + U S U^T)^{-1}`` through the Woodbury identity: with
        ``A = C^T C`` and ``Y = C^{-T} U`` (one triangular solve with ``k`` right-hand
        sides), ``C^{-1} (I - Y (S + Y^T Y)^{-1} Y^T) C^{-T}``, two triangular solves and a
        ``k``-square system per step: exact but for the change of ``w``,
        small from one Newton step to the next, so a few steps suffice. Not for more than
        ``_WOODBURY_ROWS`` rows (the triangular solves with ``U`` would cost a
        factorisation), a new ``mu`` (the first step of a proximal step), a task whose
        examples all left or one entered, or where CG does not converge in
        ``_WOODBURY_CG`` steps (the rows that left made the system nearly singular)."""
        if self._last is None:
            return None
        # the Gram matrix was last formed for the factorisation: its rows are I0
        factor, A, hess0, mu0, has0 = self._last
        inside0 = self._inside
        if mu != mu0 or np.any(has != has0):
            return None
        added, removed = np.flatnonzero(inside & ~inside0), np.flatnonzero(inside0 & ~inside)
        k = added.size + removed.size
        if k > _WOODBURY_ROWS:
            return None
        R = self.R
        rows = np.concatenate([added, removed])
        U = np.zeros((R + self.G, k))
        U[:R] = self.Fd[rows].T
        U[R + self.group_of[rows], np.arange(k)] = self.a_rows[rows]
        sign = np.where(np.arange(k) < added.size, 1.0, -1.0)
        C = factor[0]
        Y = sla.blas.dtrsm(1.0, C, U, trans_a=1)
        try:
            small = sla.lu_factor(np.diag(sign) + Y.T @ Y, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            return None
        if not np.all(np.isfinite(small[0])):
            return None

        def precondition(r):
            y = sla.blas.dtrsv(C, r, trans=1)
            y -= Y @ sla.lu_solve(small, Y.T @ y, check_finite=False)
            return sla.blas.dtrsv(C, y, trans=0, overwrite_x=1)

        def system(p):
            # A's upper triangle in C order is the lower one of its Fortran-ordered view
            out = sla.blas.dsymv(1.0, A.T, p, lower=1) + U @ (sign * (U.T @ p))
            out[:R] += mu * (hess[0](p[:R]) - hess0[0](p[:R]))
            return out

        P, its, done = _pcg(system, precondition, rhs, _WOODBURY_CG, _WOODBURY_RTOL)
        return (P, its) if done else None

    def _system(self, hess, inside, mu, has):
        """``mu`` times the generalised Hessian, in its upper triangle (the lower is not
        written); a task with no example inside its box keeps its bias (identity)."""
        _, _, (inv, L) = hess
        R = self.R
        gram, bias = self._gram_of(inside)
        H = np.empty((R + self.G, R + self.G))
        H[:R, :R] = gram
        H[np.arange(R), np.arange(R)] += mu * inv
        if L.nnz:
            LL = (L @ L.T).tocoo()
            upper = LL.row <= LL.col
            np.subtract.at(H, (LL.row[upper], LL.col[upper]), mu * LL.data[upper])
        H[:R, R:] = np.where(has, bias.T, 0.0)
        H[R:, R:] = np.diag(np.where(has, np.bincount(
            self.group_of[inside], self.a_rows[inside] ** 2, minlength=self.G), 1.0))
        return H


def layout_of(dual, rows):
    """The layout the Newton systems of ``dual`` are solved in (per task, else flat), or
    None when the dual is too wide for both.

    Parameters
    ----------
    dual : MEDDual
    rows : FactorRows

    Returns
    -------
    Blocks, Flat or None
    """
    return Blocks.of(dual, rows) or Flat.of(dual, rows)


def _pcg(H, M, rhs, max_iter=None, rtol=None):
    """Preconditioned conjugate gradients for ``H x = rhs`` (arrays of any shape), at most
    ``max_iter`` steps (``_MAX_CG``) down to a residual of ``rtol`` (``_CG_RTOL``) times the
    first; returns ``x``, the steps taken and whether the residual got there."""
    max_iter = _MAX_CG if max_iter is None else max_iter
    rtol = _CG_RTOL if rtol is None else rtol
    x = np.zeros_like(rhs)
    r = rhs.copy()
    norm0 = np.sqrt(np.vdot(r, r))
    if not norm0 > 0:
        return x, 0, True
    z = M(r)
    p = z.copy()
    rz = np.vdot(r, z)
    it = 0
    for it in range(1, max_iter + 1):
        Hp = H(p)
        curv = np.vdot(p, Hp)
        if not (curv > 0 and rz > 0):
            return x, it, False
        step = rz / curv
        x += step * p
        r -= step * Hp
        if np.sqrt(np.vdot(r, r)) <= rtol * norm0:
            return x, it, True
        z = M(r)
        rz_new = np.vdot(r, z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x, it, False
