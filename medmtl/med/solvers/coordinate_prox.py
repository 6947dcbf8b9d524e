"""The coordinate method's finish: proximal point steps on the dual, each solved by a
semismooth Newton method in feature space.

Coordinate steps crawl on degenerate duals: when far more multipliers sit on the margin than
the task has features (binary data, where many examples share a margin exactly), the optimal
``lam`` is a whole face, ``u = F^T lam`` is unique but ``lam`` is not, and the passes wander
along the face, clipped at its bounds, with a KKT gap falling like ``1 / passes`` (the Ising
structure duals: 100 nodes x 1,000 samples stop at 1,000 passes with a gap of 3e-5).
Newton steps on the free multipliers (:mod:`~.coordinate_face`) do not help there, as every
direction on the face meets the box at once. This finish works in the space of the weights
``w`` and biases ``b``, where the answer is unique.

**Proximal point.** From ``lam_k`` the next iterate maximises
``J(lam) - mu/2 ||lam - lam_k||^2`` over the feasible set (the proximal point method on the
dual, i.e. the augmented Lagrangian method on its primal; Rockafellar 1976). By Fenchel
duality (``f`` the negated nonlinear part of ``J``, ``J(lam) = c^T lam - f(F^T lam)``) that
step is ``lam_{k+1} = clip(lam_k - z / mu, lo, hi)`` with ``z = F w + a b_g - c`` at the
minimiser of

    Phi_k(w, b) = f*(w) + sum_i h_i(z_i),
    h_i(z) = max_{lo_i <= l <= hi_i} [ -l z - mu/2 (l - lam_k,i)^2 ],

a smooth convex function of the ``R + n_groups`` weights and biases whose gradient is
``(grad f*(w) - F^T lam_{k+1}, -a_g^T lam_{k+1,g})``: at its minimiser the equalities hold
and ``u = F^T lam_{k+1}`` is the ``u`` of ``w``. ``f*`` is known in closed form up to a
scalar equation per term: ``grad f(u)`` is ``u`` on the shared columns and ``s_t u_t`` on
switched term ``t``, ``s_t = 1 / (1 + alpha exp(-||u_t||^2 / 2))``, so inverting it is a
monotone equation in ``||u_t||``.

**Semismooth Newton.** ``Phi_k`` is twice differentiable except where an ``l`` meets a bound;
its generalised Hessian is ``grad^2 f*(w)`` (per term ``(s I + s (1 - s) u u^T)^{-1}``, in
closed form) plus ``[F a]^T [F a] / mu`` over the examples strictly inside their box. Newton
steps with a backtracking line search, the systems solved by conjugate gradients
preconditioned by the exact block of each task (its own columns and bias; the terms' coupling
between tasks left out), converge in a few steps (Zhao, Sun and Toh 2010; Li, Sun and Toh
2018, the SSNAL method for the lasso). ``mu`` starts near the coordinate passes' accuracy and
halves at every proximal step down to ten times the KKT tolerance: ``mu |lam_{k+1} - lam_k|``
is the KKT gap the step leaves.

The finish needs every column of the factors to be touched by one task only (true of the
single-task duals, the multi-task duals whose terms hold a column per task, and the Ising
structure duals) and dense blocks of moderate size (:data:`_MAX_BLOCK` columns per task,
:data:`_MAX_DENSE` entries in all); :func:`prox_newton` returns None for other duals.
"""

from __future__ import annotations

import numpy as np

from ..bound import switch_posterior
from .coordinate_steps import switched_sum
from .newton import _max_gap, _scaled_box

__all__ = ["prox_newton"]

# A task's block of the preconditioner is dense: at most this many columns per task, and
# this many entries of the dense rows in all (100 nodes x 1,000 samples: 9.9e6).
_MAX_BLOCK = 512
_MAX_DENSE = 2e7
# Proximal steps, Newton steps per proximal step, and conjugate-gradient iterations per
# Newton step at most.
_MAX_PROX = 40
_MAX_NEWTON = 30
_MAX_CG = 100
# CG stops at this fraction of the Newton system's residual.
_CG_RTOL = 1e-3
# mu: the first is this fraction of the passes' gradient spread per unit of lam, the last
# this multiple of the KKT tolerance per unit of lam.
_MU_START = 0.3
_MU_END = 10.0
_ARMIJO = 1e-4
# Each proximal step's Newton iteration stops once the gradient is below a tolerance that
# starts at this fraction of the passes' spread and at least halves at every proximal step,
# and is at most this fraction of the smallest KKT gap yet (an inexact proximal point
# method, whose tolerances must shrink: tied to the last gap alone, a step that raised the
# gap loosened the next one, and the steps diverged), down to the KKT tolerance.
_INNER = 0.1
# The finish gives up when this many proximal steps in a row did not lower the best gap.
_PATIENCE = 5


class _Blocks:
    """The tasks' rows stacked densely: ``X[g]`` holds task ``g``'s rows on the columns it
    owns, then zeros, then ``a_g`` in the last slot (the bias); shorter tasks are padded with
    zero rows. A task's weights and bias are then one row ``V[g]`` of a ``(G, K)`` array,
    ``z = X V - c`` is one batched product, and so is ``X^T lam``."""

    def __init__(self, dual, rows, owner):
        n_groups = len(dual.groups)
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

    @classmethod
    def of(cls, dual, rows):
        """The blocks of ``dual``, or None when a column is shared by two tasks or the
        blocks would be too large."""
        F = rows.F
        n_groups = len(dual.groups)
        if F.shape[1] == 0 or n_groups == 0 or sum(r.size for r in dual.groups) != dual.n:
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
        V = np.empty((len(self.cols), self.K))
        V[:, :-1] = np.append(w, 0.0)[self.index]
        V[:, -1] = b
        return V


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
        """``x -> grad^2 f*(w) x`` and its diagonal, at ``u`` with posteriors ``s``:
        ``(I - k_t u_t u_t^T) / s_t`` per term, ``k_t = (1 - s_t) / (1 + 2 (1 - s_t) q_t)``."""
        k = (1.0 - s) / (1.0 + 2.0 * (1.0 - s) * q)
        st, kt, us = s[self.t_sw], k[self.t_sw], u[self.sw]
        diag = np.ones(u.size)
        diag[self.sw] = (1.0 - kt * us * us) / st

        def apply(x):
            out = x.copy()
            dots = np.bincount(self.t_sw, us * x[self.sw], minlength=self.D)
            out[self.sw] = (x[self.sw] - kt * us * dots[self.t_sw]) / st
            return out
        return apply, diag


class _Prox:
    """``Phi_k`` of one proximal step on the stacked layout: value, gradient, Newton step."""

    def __init__(self, dual, blocks, conj):
        self.bl, self.conj = blocks, conj
        self.c = blocks.rows_of(dual.c)
        self.lo = blocks.rows_of(dual.lo)
        self.hi = blocks.rows_of(dual.hi)
        self.G = len(dual.groups)

    def z(self, V):
        return np.matmul(self.bl.X, V[:, :, None])[:, :, 0] - self.c

    def lam(self, z, center, mu):
        return np.clip(center - z / mu, self.lo, self.hi)

    def value(self, V, z, center, mu):
        w = self.bl.weights(V)
        u, s, q = self.conj.u_of(w)
        lam = self.lam(z, center, mu)
        h = -lam * z - 0.5 * mu * (lam - center) ** 2
        return self.conj.value(w, u, q) + float(h.sum()), u, s, q, lam

    def gradient(self, u, lam):
        """``(grad f*(w), 0) - X^T lam`` on the stacked layout."""
        U = self.bl.stack(u, np.zeros(self.G))
        return U - np.matmul(lam[:, None, :], self.bl.X)[:, 0, :]

    def newton_direction(self, u, s, q, inside, grad, mu):
        """The Newton step: PCG on the generalised Hessian, preconditioned by each task's
        exact block; a task with no example inside its box keeps its bias (flat in it)."""
        bl, X = self.bl, self.bl.X
        hess_f, diag_f = self.conj.hessian(u, s, q)
        has = inside.any(axis=1)
        G, K = self.G, bl.K

        rows_in = [X[k][inside[k]] for k in range(G)]

        def H(P):
            out = np.empty_like(P)
            for k, Xi in enumerate(rows_in):
                out[k] = (Xi @ P[k]) @ Xi / mu
            w_part = hess_f(bl.weights(P))
            out[:, :-1] += np.append(w_part, 0.0)[bl.index]
            out[~has, -1] = P[~has, -1]
            return out

        blocks = np.empty((G, K, K))
        diag_stack = np.append(diag_f, 1.0)[bl.index]
        for k, Xi in enumerate(rows_in):
            B = Xi.T @ Xi / mu
            B[np.arange(K - 1), np.arange(K - 1)] += diag_stack[k]
            if not has[k]:
                B[-1, :] = B[:, -1] = 0.0
                B[-1, -1] = 1.0
            blocks[k] = B
        inv = np.linalg.inv(blocks)

        def M(Rs):
            return np.matmul(inv, Rs[:, :, None])[:, :, 0]

        rhs = -grad
        rhs[~has, -1] = 0.0
        P, its = _pcg(H, M, rhs)
        return P, its, has


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


def _flat_biases(prox, V, z, center, mu, has):
    """Each task with no example inside its box gets the bias minimising its ``h`` terms
    (a convex piecewise-quadratic function of the bias alone: bisection on its slope between
    the extreme breakpoints). ``V`` and ``z`` are updated in place; True if a bias moved."""
    X = prox.bl.X
    moved = False
    for k in np.flatnonzero(~has):
        n_k = prox.bl.counts[k]
        a, zr, cr = X[k, :n_k, -1], z[k, :n_k], center[k, :n_k]
        lo, hi = prox.lo[k, :n_k], prox.hi[k, :n_k]
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
        V[k, -1] += t
        z[k, :n_k] += a * t
        moved = True
    return moved


def _kkt_gap(dual, lam, box):
    """The KKT gap of the exact dual at ``lam`` (as the coordinate method's check measures
    it, :func:`medmtl.med.solvers.newton._max_gap`)."""
    return _max_gap(dual.gradient(lam) / dual.a, dual.a * lam, *box, dual)


def prox_newton(dual, rows, lam, spread, eps):
    """Finish a coordinate solve from ``lam`` by proximal Newton steps (module notes).

    Parameters
    ----------
    dual : MEDDual
    rows : FactorRows
    lam : ndarray of shape (n,)
        The passes' multipliers (in the box; the equalities need not hold).
    spread : float
        The passes' largest projected-gradient spread (how far ``lam`` is from the answer).
    eps : float
        The KKT tolerance: the largest violating pair's gap (scaled by ``1 / |a_i|``).

    Returns
    -------
    None when the dual's layout does not allow it, else ``(lam, gap, stats)``: the last
    proximal iterate (box held, equalities to the Newton tolerance), its KKT gap and
    ``{"prox_steps", "newton_steps", "cg_iterations"}``.
    """
    bl = _Blocks.of(dual, rows)
    if bl is None:
        return None
    conj = _Conjugate(rows, dual.n_terms, dual.alpha)
    prox = _Prox(dual, bl, conj)
    box = _scaled_box(dual)
    width = float(np.max(np.maximum(np.abs(dual.lo), np.abs(dual.hi)) / np.abs(dual.a)))
    if not 0 < width < np.inf:
        return None
    mu_end = _MU_END * eps / width
    mu = max(_MU_START * spread / width, mu_end)
    V = bl.stack(conj.w_of(rows.FT @ lam), dual.intercepts(lam))
    center = bl.rows_of(lam)
    stats = {"prox_steps": 0, "newton_steps": 0, "cg_iterations": 0}
    gap, out = spread, lam
    best, stalled = spread, 0
    inner_tol = _INNER * spread
    for _ in range(_MAX_PROX):
        z = prox.z(V)
        here = prox.value(V, z, center, mu)
        for _ in range(_MAX_NEWTON):
            val, u, s, q, lam3 = here
            grad = prox.gradient(u, lam3)
            if np.abs(grad).max() <= max(eps, inner_tol):
                break
            raw = center - z / mu
            inside = (raw > prox.lo) & (raw < prox.hi)
            P, its, has = prox.newton_direction(u, s, q, inside, grad, mu)
            stats["newton_steps"] += 1
            stats["cg_iterations"] += its
            grad[~has, -1] = 0.0
            slope = float(np.vdot(grad, P))
            if not slope < 0:
                break
            dz = np.matmul(bl.X, P[:, :, None])[:, :, 0]
            t = 1.0
            while t > 1e-12:
                here = prox.value(V + t * P, z + t * dz, center, mu)
                if here[0] <= val + _ARMIJO * t * slope:
                    break
                t *= 0.5
            else:
                break
            V, z = V + t * P, z + t * dz
            if _flat_biases(prox, V, z, center, mu, has):
                here = prox.value(V, z, center, mu)
        lam3 = prox.lam(z, center, mu)
        stats["prox_steps"] += 1
        if not np.all(np.isfinite(lam3)):
            return None
        out = bl.flat(lam3)
        gap = _kkt_gap(dual, out, box)
        if gap <= eps:
            break
        stalled = stalled + 1 if gap >= best else 0
        best = min(best, gap)
        if stalled >= _PATIENCE:
            break
        inner_tol = min(0.5 * inner_tol, _INNER * best)
        center = lam3
        mu = max(0.5 * mu, mu_end)
    return out, gap, stats
