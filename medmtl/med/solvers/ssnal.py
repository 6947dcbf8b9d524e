"""``method="ssnal"``: proximal point steps on the MED dual, each solved by a semismooth
Newton method in the space of the weights and biases (SSNAL: Li, Sun and Toh 2018).

**Why.** Methods that move the multipliers (coordinate passes, SMO pairs) are only as fast
as the dual's Hessian ``F W F^T`` is well conditioned, and a user's raw features make it
badly conditioned: columns from 1e-3 to 1e3, one dominant column, collinear columns. The
same problem is well posed in the weights ``w`` and biases ``b``, where Newton's method is
invariant to a change of the features' scale. Degenerate duals (far more multipliers on the
margin than features, as in the Ising structure duals) are the other case: the optimal
``lam`` is a whole face, ``u = F^T lam`` is unique but ``lam`` is not, and multiplier
methods wander along the face; in ``(w, b)`` the answer is unique.

**Proximal point.** From ``lam_k`` the next iterate maximises
``J(lam) - mu/2 ||lam - lam_k||^2`` over the feasible set (the proximal point method on the
dual, i.e. the augmented Lagrangian method on its primal; Rockafellar 1976). By Fenchel
duality (``f`` the negated nonlinear part of ``J``, ``J(lam) = c^T lam - f(F^T lam)``) that
step is ``lam_{k+1} = clip(lam_k - z / mu, lo, hi)`` with ``z = F w + a b_g - c`` at the
minimiser of

    Phi_k(w, b) = f*(w) + sum_i h_i(z_i),
    h_i(z) = max_{lo_i <= l <= hi_i} [ -l z - mu/2 (l - lam_k,i)^2 ],

a smooth convex function of the weights and biases whose gradient is
``(grad f*(w) - F^T lam_{k+1}, -a_g^T lam_{k+1,g})``: at its minimiser the equalities hold
and ``u = F^T lam_{k+1}`` is the ``u`` of ``w``. ``f*`` is known in closed form up to a
scalar equation per term: ``grad f(u)`` is ``u`` on the shared columns and ``s_t u_t`` on
switched term ``t``, ``s_t = 1 / (1 + alpha exp(-||u_t||^2 / 2))``, so inverting it is a
monotone equation in ``||u_t||``.

**Semismooth Newton.** ``Phi_k`` is twice differentiable except where an ``l`` meets a bound;
its generalised Hessian is ``grad^2 f*(w)`` (per term ``(s I + s (1 - s) u u^T)^{-1}``, in
closed form) plus ``[F a]^T [F a] / mu`` over the examples strictly inside their box. Newton
steps with a backtracking line search converge in a few steps (Zhao, Sun and Toh 2010).
``mu`` starts near the start's KKT gap and halves at every proximal step down to ten times
the KKT tolerance: ``mu |lam_{k+1} - lam_k|`` is the KKT gap the step leaves.

**Layouts.** The Newton systems are solved in one of two layouts of the factors
``F = [Phi0 | Phi]``:

* per task (:class:`_Blocks`), when every column belongs to one task (single-task duals,
  multi-task feature and kernel selection, the Ising structure duals): conjugate gradients
  preconditioned by each task's exact block, the terms' coupling between tasks left out;
* flat (:class:`_Flat`), for any other dual of moderate width (adaptive pooling, whose shared
  columns span every task): the whole Hessian formed densely and factorised.

A dual too wide for both (:func:`layout_of` returns None) is left to the other methods; a
kernel evaluated on demand is factorised first, for at most :data:`MAX_KERNEL_ROWS`
multipliers.
"""

from __future__ import annotations

import time
from numbers import Real

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..bound import switch_posterior
from ..dual import MEDDual
from .base import Interval, MEDSolution, Method, Option, max_iter_option
from .coordinate_steps import switched_sum
from .gram_storage import FactorRows
from .kkt import kkt_gap, meet_equalities, rounding_floor, scaled_box
from .threads import one_blas_thread

__all__ = ["SSNALMethod", "prox_newton", "layout_of", "MAX_KERNEL_ROWS"]

# A task's block of the per-task layout is dense: at most this many columns per task, and
# this many entries of the dense rows in all.
_MAX_BLOCK = 512
_MAX_DENSE = 2e7
# The flat layout forms the (R + G)-square Hessian: at most this many weights and biases,
# and this many multiply-adds to form it (the sum over the rows of their nonzeros squared).
_MAX_FLAT = 2500
_MAX_FLAT_WORK = 2e9
# Kernel duals are factorised (an n x n eigen-factor per task) up to this many multipliers.
MAX_KERNEL_ROWS = 3000
# Newton steps per proximal step, and conjugate-gradient iterations per Newton step, at most.
_MAX_NEWTON = 30
_MAX_CG = 100
# CG stops at this fraction of the Newton system's residual.
_CG_RTOL = 1e-3
# mu: the first is this fraction of the start's KKT gap per unit of lam, the last this
# multiple of the KKT tolerance per unit of lam.
_MU_START = 0.3
_MU_END = 10.0
_ARMIJO = 1e-4
# A proximal step whose Newton iteration fails is taken again with mu this many times larger,
# up to this multiple of the first mu.
_MU_BACKOFF = 10.0
_MU_MAX = 1e8
# Each proximal step's Newton iteration stops once the gradient is below a tolerance that
# starts at this fraction of the start's gap and at least halves at every proximal step, and
# is at most this fraction of the smallest KKT gap yet, down to the KKT tolerance: the
# tolerances of an inexact proximal point method must shrink (tied to the last gap alone, a
# step that raised the gap would loosen the next one, and the steps could diverge).
_INNER = 0.1
# Proximal steps in a row that do not lower the best gap before the method gives up.
_PATIENCE = 10
# Rounds of proximal steps, each from the feasible point of the last, at most.
_ROUNDS = 4


# ---------------------------------------------------------------------------------------
# The conjugate of the nonlinear part of J
# ---------------------------------------------------------------------------------------
class _Conjugate:
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
        per term, ``r s(r) = ||w_t||`` for ``r = ||u_t||`` (increasing in ``r``, solved by
        geometric bisection on ``[rho, (1 + alpha) rho]`` and two Newton steps)."""
        rho = np.sqrt(np.bincount(self.t_sw, w[self.sw] ** 2, minlength=self.D))
        r = rho.copy()
        if self.alpha > 0:
            pos = rho > 0
            lo, hi = rho[pos], rho[pos] * (1.0 + self.alpha)
            for _ in range(44):
                mid = np.sqrt(lo * hi)
                above = mid * self._posterior(0.5 * mid * mid) >= rho[pos]
                hi = np.where(above, mid, hi)
                lo = np.where(above, lo, mid)
            x = np.sqrt(lo * hi)
            for _ in range(2):
                s = self._posterior(0.5 * x * x)
                x = x - (x * s - rho[pos]) / (s + s * (1.0 - s) * x * x)
            r[pos] = x
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


# ---------------------------------------------------------------------------------------
# Layouts of the weights, biases and examples
# ---------------------------------------------------------------------------------------
class _Blocks:
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
            cols = np.unique(F[r].indices)
            if np.any(owner[cols] >= 0):
                return None
            owner[cols] = g
        counts = np.bincount(owner[owner >= 0], minlength=n_groups)
        K = counts.max(initial=0) + 1
        N = max(r.size for r in dual.groups)
        if K - 1 > _MAX_BLOCK or n_groups * N * K > _MAX_DENSE:
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
        """``F w + a b_g`` per example."""
        return np.matmul(self.X, V[:, :, None])[:, :, 0]

    def adjoint(self, lam):
        """``(F^T lam, a_g^T lam_g)`` stacked."""
        return np.matmul(lam[:, None, :], self.X)[:, 0, :]

    def task(self, k):
        return k, slice(0, self.counts[k])

    def bias_slot(self, k):
        return k, self.K - 1

    def direction(self, hess, inside, rhs, mu):
        """The Newton step: PCG on the generalised Hessian, preconditioned by each task's
        exact block; a task with no example inside its box keeps its bias (flat in it)."""
        hess_f, diag_f, _ = hess
        X, G, K = self.X, self.G, self.K
        has = inside.any(axis=1)
        rows_in = [X[k][inside[k]] for k in range(G)]

        def H(P):
            out = np.empty_like(P)
            for k, Xi in enumerate(rows_in):
                out[k] = (Xi @ P[k]) @ Xi / mu
            w_part = hess_f(self.weights(P))
            out[:, :-1] += np.append(w_part, 0.0)[self.index]
            out[~has, -1] = P[~has, -1]
            return out

        blocks = np.empty((G, K, K))
        diag_stack = np.append(diag_f, 1.0)[self.index]
        for k, Xi in enumerate(rows_in):
            B = Xi.T @ Xi / mu
            B[np.arange(K - 1), np.arange(K - 1)] += diag_stack[k]
            if not has[k]:
                B[-1, :] = B[:, -1] = 0.0
                B[-1, -1] = 1.0
            blocks[k] = B
        try:
            inv = np.linalg.inv(blocks)
        except np.linalg.LinAlgError:  # a block singular in floating point (extreme scales)
            inv = np.linalg.pinv(blocks)

        def M(Rs):
            return np.matmul(inv, Rs[:, :, None])[:, :, 0]

        rhs = rhs.copy()
        rhs[~has, -1] = 0.0
        P, its = _pcg(H, M, rhs)
        return P, its, has


class _Flat:
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
        if R == 0 or R + G > _MAX_FLAT:
            return None
        per_row = np.diff(rows.F.indptr).astype(float) + 1.0
        if float(per_row @ per_row) > _MAX_FLAT_WORK:
            return None
        return cls(dual, rows)

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


def layout_of(dual, rows):
    """The layout the Newton systems of ``dual`` are solved in (per task, else flat), or
    None when the dual is too wide for both.

    Parameters
    ----------
    dual : MEDDual
    rows : FactorRows

    Returns
    -------
    _Blocks, _Flat or None
    """
    return _Blocks.of(dual, rows) or _Flat.of(dual, rows)


def _pcg(H, M, rhs):
    """Preconditioned conjugate gradients for ``H x = rhs`` (arrays of any shape)."""
    x = np.zeros_like(rhs)
    r = rhs.copy()
    norm0 = np.sqrt(np.vdot(r, r))
    if not norm0 > 0:
        return x, 0
    z = M(r)
    p = z.copy()
    rz = np.vdot(r, z)
    it = 0
    for it in range(1, _MAX_CG + 1):
        Hp = H(p)
        curv = np.vdot(p, Hp)
        if not curv > 0:
            break
        step = rz / curv
        x += step * p
        r -= step * Hp
        if np.sqrt(np.vdot(r, r)) <= _CG_RTOL * norm0:
            break
        z = M(r)
        rz_new = np.vdot(r, z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x, it


# ---------------------------------------------------------------------------------------
# One proximal step's function Phi_k
# ---------------------------------------------------------------------------------------
class _Prox:
    """``Phi_k`` of the proximal steps on a layout: value, gradient, Newton step."""

    def __init__(self, dual, layout, conj):
        self.lay, self.conj = layout, conj
        self.c = layout.rows_of(dual.c)
        self.lo = layout.rows_of(dual.lo)
        self.hi = layout.rows_of(dual.hi)

    def z(self, V):
        return self.lay.apply(V) - self.c

    def lam(self, z, center, mu):
        return np.clip(center - z / mu, self.lo, self.hi)

    def value(self, V, z, center, mu):
        w = self.lay.weights(V)
        u, s, q = self.conj.u_of(w)
        lam = self.lam(z, center, mu)
        h = -lam * z - 0.5 * mu * (lam - center) ** 2
        return self.conj.value(w, u, q) + float(h.sum()), u, s, q, lam

    def primal(self, V):
        """The primal objective ``P(w, b) = f*(w) + sum_i max_{lo_i <= l <= hi_i} (-l z_i)``
        at ``V``: an upper bound on every feasible ``J`` (weak duality)."""
        w = self.lay.weights(V)
        u, _, q = self.conj.u_of(w)
        z = self.z(V)
        return self.conj.value(w, u, q) + float(np.maximum(-self.lo * z, -self.hi * z).sum())

    def gradient(self, u, lam):
        """``(grad f*(w), 0) - (F^T lam, a_g^T lam_g)``."""
        return self.lay.stack(u, np.zeros(self.lay.G)) - self.lay.adjoint(lam)

    def flat_biases(self, V, z, center, mu, has):
        """Each task with no example inside its box gets the bias minimising its ``h``
        terms (a convex piecewise-quadratic function of the bias alone: bisection on its
        slope between the extreme breakpoints). ``V`` and ``z`` are updated in place; True
        if a bias moved."""
        moved = False
        for k in np.flatnonzero(~has):
            rows = self.lay.task(k)
            a, zr, cr = self.lay.a_rows[rows], z[rows], center[rows]
            lo, hi = self.lo[rows], self.hi[rows]
            # where example i's multiplier leaves a bound, as a shift of the bias
            points = np.concatenate([(mu * (cr - lo) - zr) / a, (mu * (cr - hi) - zr) / a])
            left, right = float(points.min()), float(points.max())

            def slope(t):
                return -float(a @ np.clip(cr - (zr + a * t) / mu, lo, hi))
            if slope(left) >= 0 or slope(right) <= 0:
                continue  # flat: any bias in the bracket is a minimiser
            for _ in range(100):
                mid = 0.5 * (left + right)
                if slope(mid) > 0:
                    right = mid
                else:
                    left = mid
            t = 0.5 * (left + right)
            V[self.lay.bias_slot(k)] += t
            z[rows] += a * t
            moved = True
        return moved


def prox_newton(dual, rows, lam, spread, eps, max_prox=40):
    """Proximal Newton steps from ``lam`` until the KKT gap is below ``eps`` (module notes).

    Parameters
    ----------
    dual : MEDDual
    rows : FactorRows
    lam : ndarray of shape (n,)
        The start (in the box; the equalities need not hold).
    spread : float
        How far ``lam`` is from the answer: its projected-gradient spread or KKT gap.
    eps : float
        The KKT tolerance: the largest violating pair's gap (scaled by ``1 / |a_i|``).
    max_prox : int, default=40
        Proximal steps at most.

    Returns
    -------
    None when the dual's layout does not allow it, else ``(lam, gap, stats)``: the last
    proximal iterate (box held, equalities to the Newton tolerance), its KKT gap and
    ``{"prox_steps", "newton_steps", "cg_iterations", "primal"}``, the last the primal
    objective at the last weights and biases (an upper bound on the optimal ``J``).
    """
    lay = layout_of(dual, rows)
    if lay is None:
        return None
    width = float(np.max(np.maximum(np.abs(dual.lo), np.abs(dual.hi)) / np.abs(dual.a)))
    if not 0 < width < np.inf:
        return None
    conj = _Conjugate(rows, dual.n_terms, dual.alpha)
    prox = _Prox(dual, lay, conj)
    mu_end = _MU_END * eps / width
    mu = mu_start = max(_MU_START * spread / width, mu_end)
    V = lay.stack(conj.w_of(rows.FT @ lam), dual.intercepts(lam))
    center = lay.rows_of(lam)
    stats = {"prox_steps": 0, "newton_steps": 0, "cg_iterations": 0}
    gap, out = spread, lam
    best, stalled = spread, 0
    inner_tol = _INNER * spread
    for _ in range(max_prox):
        z = prox.z(V)
        V_next, z_next, solved = _newton(prox, V, z, center, mu, max(eps, inner_tol), stats)
        stats["prox_steps"] += 1
        if not solved and mu < _MU_MAX * mu_start:
            # Newton could not solve this step (from far away, every example sits at a
            # bound and the model is linear): a larger mu, a shorter step, from the same
            # centre
            mu *= _MU_BACKOFF
            continue
        V, z = V_next, z_next
        lam_next = prox.lam(z, center, mu)
        if not np.all(np.isfinite(lam_next)):
            return None
        out = lay.flat(lam_next)
        gap = kkt_gap(dual, out)
        if gap <= eps:
            break
        stalled = stalled + 1 if gap >= best else 0
        best = min(best, gap)
        if stalled >= _PATIENCE:
            break
        inner_tol = min(0.5 * inner_tol, _INNER * best)
        center = lam_next
        mu = max(0.5 * mu, mu_end)
    stats["primal"] = prox.primal(V)
    return out, gap, stats


def _newton(prox, V, z, center, mu, tol, stats):
    """Semismooth Newton steps on ``Phi_k`` until its gradient is below ``tol``; returns
    the last ``V`` and ``z`` and whether the gradient got there."""
    lay = prox.lay
    here = prox.value(V, z, center, mu)
    for _ in range(_MAX_NEWTON):
        val, u, s, q, lam = here
        grad = prox.gradient(u, lam)
        if np.abs(grad).max() <= tol:
            return V, z, True
        raw = center - z / mu
        inside = (raw > prox.lo) & (raw < prox.hi)
        P, its, has = lay.direction(prox.conj.hessian(u, s, q), inside, -grad, mu)
        stats["newton_steps"] += 1
        stats["cg_iterations"] += its
        for k in np.flatnonzero(~has):
            grad[lay.bias_slot(k)] = 0.0
        slope = float(np.vdot(grad, P))
        if not slope < 0:
            break
        dz = lay.apply(P)
        t = 1.0
        while t > 1e-12:
            here = prox.value(V + t * P, z + t * dz, center, mu)
            if here[0] <= val + _ARMIJO * t * slope:
                break
            t *= 0.5
        else:
            break
        V, z = V + t * P, z + t * dz
        if prox.flat_biases(V, z, center, mu, has):
            here = prox.value(V, z, center, mu)
    val, u, s, q, lam = here
    return V, z, bool(np.abs(prox.gradient(u, lam)).max() <= tol)


# ---------------------------------------------------------------------------------------
# The method
# ---------------------------------------------------------------------------------------
def accepts(dual):
    """Whether ``method="ssnal"`` can take ``dual`` without factorising a large kernel
    (its layout is decided when it runs)."""
    return not dual.has_kernels or dual.n <= MAX_KERNEL_ROWS


class SSNALMethod(Method):
    """``method="ssnal"``: proximal point steps on the dual, each solved by semismooth Newton
    in the weights and biases (see the module notes).

    It takes the duals of factor models, and kernel duals of at most
    :data:`MAX_KERNEL_ROWS` multipliers (their kernels are factorised first), whose factors
    fit one of its layouts; any other dual is a ValueError naming the methods that take it.
    It is the method least affected by the scale of the features. There is no inner solver.

    Options
    -------
    max_iter : int, default=100
        Maximum number of proximal steps.
    tol : float or None, default=None
        Not used: the KKT test (``kkt_tol``) decides. Declared so that every method takes it.
    kkt_tol : float, default=1e-6
        Stop when every task's largest violating pair is below ``kkt_tol * max|c|`` (as
        ``"newton"`` and ``"cd"``).

    The iterations (``n_iter``) are the proximal steps; the objective path holds ``J`` of
    the start and of the answer. The status is ``"converged"``, ``"rounding"`` (the KKT gap
    is at the rounding floor of the gradient, above ``kkt_tol``), ``"max_iter"`` or
    ``"stalled"`` (five proximal steps in a row did not lower the gap). ``info`` holds
    ``prox_steps``, ``newton_steps``, ``cg_iterations``, ``layout`` (``"per task"`` or
    ``"flat"``), ``kkt_gap`` and ``time``.

    Examples
    --------
    Raw features whose scales differ by six orders of magnitude:

    >>> from medmtl.med.builders import feature_selection_dual
    >>> from medmtl.med.solvers import solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4)) * [1e-3, 1.0, 1e2, 1e3]
    >>> y = np.where(X[:, 1] + 1e-3 * X[:, 2] > 0, 1, -1)
    >>> dual = feature_selection_dual([X], [y], C=1.0, alpha=1.0)
    >>> a, b = solve(dual, "ssnal"), solve(dual, "direct")
    >>> a.status, bool(abs(a.objective - b.objective) <= 1e-6 * b.objective)
    ('converged', True)
    """

    name = "ssnal"
    default_solver = None
    options = (
        max_iter_option(100, "Maximum number of proximal steps."),
        Option("tol", None, [None, Interval(Real, 0, None, closed="left")],
               "Not used: the KKT test (kkt_tol) decides."),
        Option("kkt_tol", 1e-6, [Interval(Real, 0, None, closed="neither")],
               "Stop when every task's largest violating pair is below kkt_tol * max|c|."),
    )

    def accepts(self, dual):
        return accepts(dual)

    def refusal(self, dual):
        return (f"method 'ssnal' factorises kernels evaluated on demand only up to "
                f"{MAX_KERNEL_ROWS} multipliers; this dual has {dual.n}: use method='newton'")

    def solve(self, dual, solver, options, init):
        t_start = time.perf_counter()
        lam0 = np.zeros(dual.n) if init is None else init
        with one_blas_thread():
            rows = FactorRows.of(dual)
            found = finish(dual, rows, lam0, options["kkt_tol"], options["max_iter"])
        if found is None:
            raise ValueError("method 'ssnal' takes duals whose factors have at most "
                             f"{_MAX_FLAT} columns (or {_MAX_BLOCK} per task when no column "
                             "spans two tasks); use method='cd' or 'newton'")
        lam, J, gap, status, stats = found
        return MEDSolution(
            lam=lam,
            intercepts=dual.intercepts(lam),
            objective=J,
            objective_path=np.array([dual.objective(lam0), J]),
            n_iter=stats["prox_steps"],
            status=status,
            switch_posterior=dual.switch_posterior(lam),
            method=self.name,
            solver="",
            info=dict(stats, kkt_gap=gap, time=time.perf_counter() - t_start),
        )


def finish(dual, rows, lam, kkt_tol, max_prox):
    """Proximal Newton steps from feasible ``lam`` to a feasible answer.

    A kernel dual is solved through its factors (eigenvalues below ``1e-10`` of the largest
    dropped, :func:`~medmtl.med.grams.factorize_gram`): its KKT gap is measured on that
    factored dual, the only one the steps can resolve; ``J`` is the kernel dual's. The
    proximal iterates meet the equalities only to the Newton tolerance; where taking the
    residuals out leaves a gap above tolerance, another round of steps from the feasible
    point aims ten times lower.

    Parameters
    ----------
    dual : MEDDual
    rows : FactorRows
    lam : ndarray of shape (n,)
        Feasible start.
    kkt_tol : float
        Relative KKT tolerance (times ``max|c|``).
    max_prox : int
        Proximal steps at most.

    Returns
    -------
    None when the dual fits no layout, else ``(lam, J, gap, status, stats)``: the better of
    the start and the answer (feasible), its ``J``, KKT gap and status, and the counts of
    :func:`prox_newton` with the layout's name and ``duality_gap``, the primal objective at
    the last weights and biases less ``J`` (of the factored dual): a certified bound on how
    far ``J`` is below the optimum, tighter on badly conditioned duals than the one from the
    multipliers' own weights. The status is ``"converged"`` when the KKT gap is below
    ``kkt_tol * max|c|`` or that bound below ``kkt_tol * |J|``.
    """
    scale = max(float(np.max(np.abs(dual.c), initial=0.0)), 1e-12)
    eps = kkt_tol * scale
    view = _factored(dual)
    lay = layout_of(view, rows)
    if lay is None:
        return None
    stats = {"prox_steps": 0, "newton_steps": 0, "cg_iterations": 0,
             "layout": "per task" if isinstance(lay, _Blocks) else "flat"}
    answer, J, gap = lam, view.objective(lam), kkt_gap(view, lam)
    target, primal = eps, np.inf
    for _ in range(_ROUNDS):
        if gap <= eps or primal - J <= kkt_tol * abs(J) or stats["prox_steps"] >= max_prox:
            break
        found = prox_newton(view, rows, answer, gap, target, max_prox - stats["prox_steps"])
        if found is None:
            return None
        raw, raw_gap, counts = found
        primal = min(primal, counts.pop("primal"))
        for key, value in counts.items():
            stats[key] += value
        candidate = _feasible(view, raw)
        c_gap, c_J = kkt_gap(view, candidate), view.objective(candidate)
        if c_gap < gap or c_J > J:
            answer, J, gap = candidate, c_J, c_gap
        if raw_gap > target:
            break  # the steps themselves stopped short: another round would too
        target /= 10.0
    J_dual = dual.objective(answer)
    J_start = dual.objective(lam)
    if J_dual < J_start:
        answer, J_dual, J, gap = lam, J_start, view.objective(lam), kkt_gap(view, lam)
    certificate = max(primal - J, 0.0)
    if np.isfinite(certificate):
        stats["duality_gap"] = certificate
    if gap <= eps or certificate <= kkt_tol * abs(J):
        status = "converged"
    elif gap <= _floor(view, rows, answer):
        status = "rounding"
    elif stats["prox_steps"] >= max_prox:
        status = "max_iter"
    else:
        status = "stalled"
    return answer, J_dual, gap, status, stats


def _factored(dual):
    """``dual`` itself, or for a kernel dual the same dual with its kernels as factors."""
    if not dual.has_kernels:
        return dual
    return MEDDual(c=dual.c, lo=dual.lo, hi=dual.hi, a=dual.a, groups=dual.groups,
                   Phi0=dual.Phi0, Phi=dual.Phi, term_ptr=dual.term_ptr, alpha=dual.alpha)


def _feasible(dual, lam):
    """``lam`` with the equalities met exactly, moving as few multipliers off their bounds
    as possible (:func:`~medmtl.med.solvers.kkt.meet_equalities`)."""
    def slack():
        grad = dual.gradient(lam)
        return np.abs(grad / dual.a - dual.intercepts(lam, grad)[dual.group_of])
    return meet_equalities(dual, np.clip(lam, dual.lo, dual.hi), slack)


def _floor(dual, rows, lam):
    """The rounding floor of the KKT gap at ``lam``: the gradient's largest entries of
    ``F W F^T`` times ``sum |lam|``, in units of ``1 / |a|``."""
    curvature = np.asarray(abs(rows.F).multiply(abs(rows.F)).sum(axis=1)).ravel()
    return rounding_floor(curvature / dual.a ** 2, float(np.abs(dual.a * lam).sum()))
