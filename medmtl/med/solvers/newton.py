"""A projected Newton method for the MED dual (issue 7: a MED solver at SVM speed).

``J`` is smooth and concave. Algorithm 1 replaces each switched term by a quadratic bound
whose curvature ``I`` overstates the true ``s_t I + s_t (1 - s_t) u_t u_t^T`` by up to a
factor ``1 + alpha`` when a switch is off, so it needs many iterations when ``alpha`` is
large (Theorem 2). Here each iteration instead maximises the exact second-order model of
``J`` over the feasible set -- an SVM-type QP solved by SMO with second-order working-set
selection (:mod:`medmtl.med.solvers.smo`) -- and then takes the best point on the segment
towards it (an exact line search on the concave restriction of ``J``). Every iterate is
feasible and ``J`` never decreases; near the solution the steps are full Newton steps, so a
handful of iterations suffice. For the MED SVM (no switched terms, or ``alpha = 0``) ``J``
is quadratic and one iteration is the whole solve: it is then LIBSVM's algorithm.

Hessian columns come from the factors ``[Phi0 | Phi]`` in batches (BLAS products) into a
bounded cache, so memory is that of the factors plus the cache; no n x n matrix is formed.
Multi-task models (every factor column inside one task) instead keep per-task, per-term Gram
blocks (:class:`GroupGrams`) and solve the subproblem on task blocks plus the low-rank
coupling of the shared switches, never touching the cross-task matrix.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..bound import switch_posterior
from ._common import MEDSolution
from .smo import HAVE_NUMBA, ColumnCache, diag_hessian, smo_solve, smo_solve_blocks

__all__ = ["solve_newton", "solve_auto", "FactorRows", "GroupGrams"]

COUPLING_RTOL = 1e-8



class FactorRows:
    """The factors ``[Phi0 | Phi]`` of a MED dual as one CSR matrix, with the term of each column.

    Built once per dual (``FactorRows.of(dual)`` caches it on the dual object, so copies of
    a dual along an alpha path share it), it holds the row-wise layout that the diagonal
    of the Hessian and the column products need and the transpose for ``u = F^T lam``.

    Parameters
    ----------
    dual : MEDDual

    Attributes
    ----------
    F : scipy.sparse.csr_matrix of shape (n, r0 + R)
    col_term : ndarray of shape (r0 + R,)
        ``-1`` for the shared columns, else the switched term of the column.
    r0 : int
        Number of shared columns.

    Examples
    --------
    >>> from medmtl.med.dual import MEDDual
    >>> d = MEDDual(c=[1, 1], lo=[0, 0], hi=[1, 1], a=[1, -1], groups=[np.arange(2)],
    ...             Phi=np.array([[1.0, 0.0], [1.0, 2.0]]))
    >>> FactorRows(d).col_term
    array([0, 1], dtype=int32)
    """

    def __init__(self, dual):
        parts = []
        terms = []
        if dual.Phi0 is not None and dual.Phi0.shape[1]:
            parts.append(dual.Phi0)
            terms.append(np.full(dual.Phi0.shape[1], -1))
        if dual.Phi is not None and dual.Phi.shape[1]:
            parts.append(dual.Phi)
            terms.append(dual.col_term)
        if parts:
            if any(sp.issparse(p) for p in parts) or len(parts) > 1:
                F = sp.hstack([sp.csr_matrix(p) for p in parts], format="csr")
            else:
                F = sp.csr_matrix(parts[0])
        else:
            F = sp.csr_matrix((dual.n, 0))
        F.sum_duplicates()
        F.sort_indices()
        F.eliminate_zeros()
        self.F = F
        self.FT = F.T.tocsr()
        self.indptr = F.indptr.astype(np.int64, copy=False)
        self.indices = F.indices.astype(np.int32, copy=False)
        self.data = F.data.astype(np.float64, copy=False)
        self.col_term = (np.concatenate(terms) if terms else np.zeros(0)).astype(np.int32)
        self.r0 = 0 if dual.Phi0 is None else dual.Phi0.shape[1]

    @classmethod
    def of(cls, dual):
        """The cached row layout of ``dual`` (built on first use)."""
        cached = getattr(dual, "_factor_rows", None)
        if cached is None:
            cached = cls(dual)
            try:
                dual._factor_rows = cached
            except AttributeError:  # pragma: no cover - a dual with __slots__
                pass
        return cached

    def u(self, lam):
        """``F^T lam`` of shape (r0 + R,)."""
        return self.FT @ lam


def _term_sums(dual, x):
    """Per switched term sums of the entries of ``x`` (the switched part, shape (R,))."""
    cs = np.concatenate(([0.0], np.cumsum(x)))
    return cs[dual.term_ptr[1:]] - cs[dual.term_ptr[:-1]]


def _line_search(dual, rows, c_d, u, v):
    """Maximiser over ``[0, 1]`` of ``J(lam + t d)`` given ``u = F^T lam``, ``v = F^T d``.

    ``J`` restricted to the segment is concave; its derivative is found in closed form per
    term, and its root by safeguarded Newton steps.
    """
    r0 = rows.r0
    u0, v0 = u[:r0], v[:r0]
    A0, B0 = float(u0 @ v0), float(v0 @ v0)
    if dual.n_terms:
        us, vs = u[r0:], v[r0:]
        q = 0.5 * _term_sums(dual, us * us)
        B = _term_sums(dual, us * vs)
        Cq = _term_sums(dual, vs * vs)
    else:
        q = B = Cq = np.zeros(0)
    alpha = dual.alpha

    def derivs(t):
        qt = q + t * B + 0.5 * t * t * Cq
        st = switch_posterior(qt, alpha)
        slope = B + t * Cq
        d1 = c_d - A0 - t * B0 - float(st @ slope)
        d2 = -B0 - float(st @ Cq + (st * (1.0 - st)) @ (slope * slope))
        return d1, d2

    d1_0, _ = derivs(0.0)
    if not d1_0 > 0.0:
        return 0.0, d1_0
    d1_1, _ = derivs(1.0)
    if d1_1 >= 0.0:
        return 1.0, d1_0
    lo, hi, t = 0.0, 1.0, 1.0
    for _ in range(60):
        d1, d2 = derivs(t)
        if d1 > 0:
            lo = t
        else:
            hi = t
        if hi - lo <= 1e-15:
            break
        tn = t - d1 / d2 if d2 < 0 else 0.5 * (lo + hi)
        if not (lo < tn < hi):
            tn = 0.5 * (lo + hi)
        if abs(tn - t) <= 1e-14:
            t = tn
            break
        t = tn
    return (lo if derivs(t)[0] < 0 and lo > 0 else t), d1_0




def _group_layout(dual):
    """Group members concatenated (``gidx``) with offsets (``gptr``)."""
    gidx = np.concatenate(dual.groups).astype(np.int64) if dual.groups else np.zeros(0, np.int64)
    gptr = np.concatenate(([0], np.cumsum([g.size for g in dual.groups]))).astype(np.int64)
    return gptr, gidx


def _scaled_box(dual):
    """Box of ``beta = a * lam``."""
    lo_b = np.where(dual.a > 0, dual.a * dual.lo, dual.a * dual.hi)
    hi_b = np.where(dual.a > 0, dual.a * dual.hi, dual.a * dual.lo)
    return lo_b, hi_b


def _max_gap(grad_b, beta, blo, bhi, dual):
    """Largest per-group violation ``max_up grad - min_low grad`` in ``beta`` space.

    Zero exactly at a KKT point; ``gap / 2`` bounds every coordinate's violation of
    ``grad_i = b_g a_i`` (free) or its sign condition (at a bound), scaled by ``1 / |a_i|``.
    """
    up = beta < bhi
    low = beta > blo
    worst = 0.0
    for g in dual.groups:
        gu, gl = grad_b[g][up[g]], grad_b[g][low[g]]
        if gu.size and gl.size:
            worst = max(worst, float(gu.max() - gl.min()))
    return worst


class _Curvature:
    """The model Hessian ``W`` in factor space at the current ``u``.

    ``W`` is ``weight`` on the diagonal (1 on shared columns, ``s_t`` on term ``t``'s) plus
    ``tau_t u_t u_t^T`` per switched term; ``V[:, t] = F_t u_t`` carries the latter to
    lam-space, so ``F W F^T = F diag(weight) F^T + V diag(tau) V^T``.
    """

    def __init__(self, dual, rows, u, s, tau, V=None):
        self.r0 = rows.r0
        K = u.size
        self.weight = np.ones(K)
        self.weight[rows.r0:] = s[dual.col_term] if dual.n_terms else 1.0
        self.tau = tau
        self.Ut = None
        self.V = None
        if dual.n_terms and np.any(tau > 0):
            self.Ut = sp.csr_matrix((u[rows.r0:], (np.arange(rows.r0, K), dual.col_term)),
                                    shape=(K, dual.n_terms))
            if V is None:
                V = rows.F @ self.Ut
                V = V.toarray() if sp.issparse(V) else V
            self.V = np.ascontiguousarray(V)

    def __call__(self, Z):
        """``W Z`` for dense ``Z`` of shape (K, m)."""
        out = self.weight[:, None] * Z
        if self.Ut is not None:
            out += self.Ut @ (self.tau[:, None] * (self.Ut.T @ Z))
        return out


def _model_gain(dual, rows, W, g0, d, u, v):
    """Gain ``g0^T d - 1/2 d^T H d`` the Newton model predicts for the step ``d``."""
    dHd = float(W.weight @ (v * v))
    if W.V is not None:
        r0 = rows.r0
        p = _term_sums(dual, u[r0:] * v[r0:])
        dHd += float(W.tau @ (p * p))
    return float(g0 @ d) - 0.5 * dHd


class GroupGrams:
    """Per-group, per-term Gram blocks ``F_{g,t} F_{g,t}^T`` for block-diagonal models.

    When no column of ``[Phi0 | Phi]`` touches two groups (multi-task kernel and feature
    selection: each task has its own factors), the weighted part of the Newton Hessian is
    ``blockdiag_g sum_t w_t F_{g,t} F_{g,t}^T``: with these blocks stored once per dual, a
    Newton iteration forms each task's block by a weighted sum and never multiplies factors
    again. Used only when the blocks fit in ``max_bytes``.

    Parameters
    ----------
    dual : MEDDual
    rows : FactorRows
    max_bytes : int, default=512 MiB

    Attributes
    ----------
    ok : bool
        Whether the model is block diagonal and the blocks fit.
    grams : list of ndarray of shape (T_g, n_g, n_g)
        Per group, one Gram block per term present (``terms[g]``; ``-1`` is the shared one).

    Examples
    --------
    >>> from medmtl.med.dual import feature_selection_dual
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> dual = feature_selection_dual([X, X], [np.array([1, -1]), np.array([1, -1])], alpha=1.0)
    >>> gg = GroupGrams(dual, FactorRows(dual))
    >>> gg.ok, gg.grams[0].shape
    (True, (2, 2, 2))
    """

    def __init__(self, dual, rows, max_bytes=1 << 29):
        self.ok = False
        n_groups = len(dual.groups)
        F = rows.F
        if n_groups < 2 or F.shape[1] == 0:
            return
        Fc = F.tocsc()
        lens = np.diff(Fc.indptr)
        gmin = np.full(F.shape[1], -1)
        gmax = np.full(F.shape[1], -1)
        nz = lens > 0
        if nz.any():
            grp = dual.group_of[Fc.indices]
            starts = Fc.indptr[:-1][nz]
            gmin[nz] = np.minimum.reduceat(grp, starts)
            gmax[nz] = np.maximum.reduceat(grp, starts)
        if np.any(gmin != gmax):
            return
        col_group = gmin
        self.group_rows = [np.asarray(g, dtype=np.int64) for g in dual.groups]
        self.local = np.empty(dual.n, dtype=np.int64)
        for g in self.group_rows:
            self.local[g] = np.arange(g.size)
        plans = []
        total = 0
        for gi, g in enumerate(self.group_rows):
            cols = np.flatnonzero(col_group == gi)
            terms = rows.col_term[cols]
            uniq = np.unique(terms)
            plans.append((cols, terms, uniq))
            total += 8 * g.size**2 * uniq.size
        if total > max_bytes:
            return
        self.terms = []
        self.grams = []
        for (cols, terms, uniq), g in zip(plans, self.group_rows):
            Fg = F[g][:, cols]
            Fg = Fg.toarray() if sp.issparse(Fg) else np.asarray(Fg)
            blocks = np.empty((uniq.size, g.size, g.size))
            for k, t in enumerate(uniq):
                A = Fg[:, terms == t]
                blocks[k] = A @ A.T
            self.terms.append(uniq)
            self.grams.append(blocks)
        self.ok = True

    @classmethod
    def of(cls, dual, rows):
        cached = getattr(rows, "_group_grams", None)
        if cached is None:
            cached = rows._group_grams = cls(dual, rows)
        return cached

    def times_and_blocks(self, lam, term_weight):
        """``times(lam)`` and ``blocks(term_weight)`` in one pass over the Gram blocks."""
        GL, out = [], []
        for g, terms, grams in zip(self.group_rows, self.terms, self.grams):
            GL.append(grams @ lam[g])
            w = np.where(terms < 0, 1.0, term_weight[np.maximum(terms, 0)] if term_weight.size else 1.0)
            out.append(np.tensordot(w, grams, axes=1))
        return GL, out

    def times(self, lam):
        """Per group, ``G_{g,t} lam_g`` for every term ``t`` present: list of (T_g, n_g)."""
        return [grams @ lam[g] for g, grams in zip(self.group_rows, self.grams)]

    def switched_columns(self, GL, n_terms):
        """``V`` of shape (n, n_terms) with ``V[:, t] = F_t F_t^T lam`` (zero where absent)."""
        n = self.local.size
        V = np.zeros((n, n_terms))
        for g, terms, P in zip(self.group_rows, self.terms, GL):
            sw = terms >= 0
            if sw.any():
                V[np.ix_(g, terms[sw])] = P[sw].T
        return V

    def weighted(self, GL, term_weight):
        """``sum_t w_t G_{g,t} lam_g`` stacked over groups, shape (n,)."""
        out = np.zeros(self.local.size)
        for g, terms, P in zip(self.group_rows, self.terms, GL):
            w = np.where(terms < 0, 1.0, term_weight[np.maximum(terms, 0)] if term_weight.size else 1.0)
            out[g] = w @ P
        return out

    def blocks(self, term_weight):
        """``sum_t w_t F_{g,t} F_{g,t}^T`` per group (weight 1 on the shared columns)."""
        out = []
        for terms, grams in zip(self.terms, self.grams):
            w = np.where(terms < 0, 1.0, term_weight[np.maximum(terms, 0)] if term_weight.size else 1.0)
            out.append(np.tensordot(w, grams, axes=1))
        return out


def _dense_copy(F, limit_bytes=1 << 29):
    """A dense copy of ``F`` for BLAS column products when it is dense enough to pay."""
    n, K = F.shape
    if n * K and F.nnz > 0.3 * n * K and 8 * n * K <= limit_bytes:
        return F.toarray()
    return None


def solve_newton(dual, solver=None, warm_start=None, max_iter=50, tol=1e-12, solver_options=None,
                 kkt_tol=1e-6, cache_size=256.0, max_steps=None, multipliers=None):
    """Maximise a MED dual by Newton steps whose subproblem is solved by SMO.

    Parameters
    ----------
    dual : MEDDual
    solver : None
        Unused (the subproblem solver is built in); accepted for the common signature.
    warm_start : ndarray of shape (n,), optional
        Starting multipliers (projected onto the feasible set first).
    max_iter : int, default=50
        Maximum number of Newton iterations.
    tol : float, default=1e-12
        Also stop when an iteration with the final subproblem tolerance raises ``J`` by
        less than ``tol * |J|``.
    solver_options : dict, optional
        Overrides of ``kkt_tol``, ``cache_size``, ``max_steps``, and ``shrinking`` (bool,
        default True) and ``group_grams`` (bool, default True: per-task Gram blocks for
        block-diagonal models, see :class:`GroupGrams`).
    kkt_tol : float, default=1e-6
        Stop when every task's largest violating pair has
        ``max_up grad_i / a_i - min_low grad_j / a_j <= kkt_tol * max|c|`` (LIBSVM's
        stopping rule; ``grad = nabla J``).
    cache_size : float, default=256
        Megabytes for cached columns of the subproblem's Hessian.
    max_steps : int, optional
        SMO pair steps allowed per subproblem (default ``max(10**7, 100 n)``).
    multipliers : ignored
        Accepted for symmetry with warm starts of other solvers.

    Returns
    -------
    MEDSolution
        ``info`` holds ``smo_steps`` (pair steps per iteration), ``columns`` (Hessian
        columns computed), ``kkt_gap`` (the final violation) and ``time``.

    Examples
    --------
    >>> from medmtl.med.dual import feature_selection_dual
    >>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
    >>> dual = feature_selection_dual([X], [np.array([1, 1, -1, -1])], C=1.0, alpha=1.0)
    >>> sol = solve_newton(dual)
    >>> sol.status, bool(np.all(np.diff(sol.objective_path) >= 0))
    ('converged', True)
    >>> from medmtl.med.solvers import solve
    >>> ref = solve(dual, method="direct").objective
    >>> bool(abs(sol.objective - ref) <= 1e-6 * ref)
    True
    """
    del multipliers
    opts = dict(kkt_tol=kkt_tol, cache_size=cache_size, max_steps=max_steps, shrinking=True,
                group_grams=True)
    if solver_options:
        unknown = set(solver_options) - set(opts)
        if unknown:
            raise ValueError(f"unknown options for method 'newton': {sorted(unknown)}; "
                             f"known: {sorted(opts)}")
        opts.update(solver_options)
    if solver not in (None, "", "SMO", "smo"):
        raise ValueError(f"method 'newton' has one built-in subproblem solver ('SMO'); "
                         f"got solver={solver!r}")
    max_iter = int(max_iter)
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    if not float(opts["kkt_tol"]) > 0:
        raise ValueError(f"kkt_tol must be > 0, got {opts['kkt_tol']}")
    t_start = time.perf_counter()
    rows = FactorRows.of(dual)
    n = dual.n
    scale = max(float(np.max(np.abs(dual.c), initial=0.0)), 1e-12)
    eps_final = float(opts["kkt_tol"]) * scale
    max_steps = int(opts["max_steps"]) if opts["max_steps"] is not None else max(10**7, 100 * n)

    if warm_start is None:
        lam = np.zeros(n)
    else:
        lam = np.asarray(warm_start, dtype=float).ravel()
        if lam.size != n:
            raise ValueError(f"warm_start has {lam.size} entries; the dual has {n}")
        if not np.all(np.isfinite(lam)):
            raise ValueError("warm_start has NaN or infinite values")
        lam = dual.project(lam)
    inv_a = 1.0 / dual.a
    blo, bhi = _scaled_box(dual)
    F_dense = getattr(rows, "_dense", False)
    if F_dense is False:
        F_dense = rows._dense = _dense_copy(rows.F)
    cache = ColumnCache(rows.F, F_dense, inv_a, None, int(float(opts["cache_size"]) * 2**20))
    quadratic = dual.n_terms == 0 or dual.alpha == 0
    grams = GroupGrams.of(dual, rows) if opts["group_grams"] else GroupGrams.__new__(GroupGrams)
    if not opts["group_grams"]:
        grams.ok = False
    col_term = rows.col_term

    u = rows.u(lam)
    J = dual.objective(lam)
    path = [J]
    steps_per_iter = []
    status = "max_iter"
    gap = np.inf
    n_iter = 0
    diagH = np.empty(n)
    # a warm start is usually close enough for the model to be trusted from the start
    trusted = warm_start is not None
    for it in range(max_iter):
        if dual.n_terms:
            s = switch_posterior(dual.half_sq_norms(u[rows.r0:]), dual.alpha)
        else:
            s = np.zeros(0)
        tau = s * (1.0 - s) if dual.alpha > 0 else np.zeros_like(s)
        if grams.ok:
            # per-task products with the Gram blocks replace passes over the factors
            GL, Qb = grams.times_and_blocks(lam, s)
            W = _Curvature(dual, rows, u, s, tau, V=grams.switched_columns(GL, dual.n_terms))
            g0 = dual.c - grams.weighted(GL, s)
        else:
            W = _Curvature(dual, rows, u, s, tau)
            g0 = dual.c - rows.F @ (W.weight * u)
        beta = dual.a * lam
        grad_b = g0 * inv_a
        gap = _max_gap(grad_b, beta, blo, bhi, dual)
        if gap <= eps_final:
            status = "converged"
            break
        n_iter = it + 1
        # Inexact Newton: loose subproblems while the model is poor, the final tolerance as
        # soon as a full step gains what the model predicted.
        if quadratic:
            inner_eps = eps_final
        elif trusted:
            inner_eps = max(eps_final, 0.1 * min(gap, gap * gap))
        else:
            inner_eps = max(eps_final, min(0.1 * gap, gap ** 1.5))
        if grams.ok:
            for g, B in zip(grams.group_rows, Qb):
                diagH[g] = np.diagonal(B)
            if W.V is not None:
                diagH += (W.V * W.V) @ tau
        else:
            diag_hessian(rows.indptr, rows.indices, rows.data, col_term, s, tau, u, diagH)
        if grams.ok:
            # multi-task models: SMO on the task blocks plus the low-rank switch coupling
            blocks = [B * inv_a[g][:, None] * inv_a[g][None, :] for g, B in zip(grams.group_rows, Qb)]
            Vs, tau_k = None, np.zeros(0)
            if W.V is not None:
                # Only switches in transition couple the tasks noticeably; a term whose
                # rank-one curvature is negligible next to the task blocks is left out of the
                # subproblem (the line search and the KKT test still use the exact J).
                Vs = W.V * inv_a[:, None]
                weight_t = tau * np.max(Vs * Vs, axis=0, initial=0.0)
                keep = weight_t > COUPLING_RTOL * max(float(np.max(diagH * inv_a**2)), 1e-300)
                Vs, tau_k = np.ascontiguousarray(Vs[:, keep]), tau[keep]
            st, steps, inner_gap = smo_solve_blocks(
                blocks, grams.group_rows, grams.local, Vs, tau_k,
                grad_b, beta, blo, bhi, diagH * inv_a**2, dual.group_of, inner_eps, max_steps,
                shrinking=bool(opts["shrinking"]))
        else:
            cache.reset(W)
            beta0 = beta.copy()

            def rebuild(beta_now, g0=g0, W=W, beta0=beta0):
                dz = rows.FT @ ((beta_now - beta0) * inv_a)
                return (g0 - rows.F @ W(dz[:, None]).ravel()) * inv_a

            st, steps, inner_gap = smo_solve(cache, diagH * inv_a**2, grad_b, beta, blo, bhi,
                                             dual.group_of, len(dual.groups), inner_eps,
                                             max_steps, rebuild, shrinking=bool(opts["shrinking"]))
        steps_per_iter.append(steps)
        x = np.clip(beta * inv_a, dual.lo, dual.hi)
        d = x - lam
        if not np.any(d):
            # the subproblem could not move although the KKT gap is above tolerance
            # (rounding at the scale of the multipliers): stop and say so
            path.append(J)
            status = "stalled"
            break
        if quadratic:
            t = 1.0
        else:
            v = rows.u(d)
            t, _ = _line_search(dual, rows, float(dual.c @ d), u, v)
        gain = 0.0
        if t > 0:
            lam_new = x if t == 1.0 else np.clip(lam + t * d, dual.lo, dual.hi)
            J_new = dual.objective(lam_new)
            if J_new >= J:
                gain = J_new - J
                if t == 1.0 and not quadratic:
                    predicted = _model_gain(dual, rows, W, g0, d, u, v)
                    trusted = abs(gain - predicted) <= 0.01 * abs(predicted)
                lam, J = lam_new, J_new
                u = rows.u(lam)
        path.append(J)
        if quadratic and inner_gap <= eps_final:
            gap = inner_gap
            status = "converged"
            break
        if gain <= tol * abs(J) and inner_eps <= eps_final:
            status = "converged"
            break
    if status == "max_iter":
        warnings.warn(f"MED Newton solver stopped after max_iter={max_iter} iterations "
                      f"(KKT gap {gap:.3g} > {eps_final:.3g})", ConvergenceWarning)
    elif status == "stalled":
        warnings.warn(f"MED Newton solver stalled at KKT gap {gap:.3g} > {eps_final:.3g} "
                      f"(the subproblem made no progress)", ConvergenceWarning)
    return MEDSolution(
        lam=lam,
        intercepts=dual.intercepts(lam),
        objective=float(J),
        objective_path=np.asarray(path),
        n_iter=n_iter,
        status=status,
        switch_posterior=dual.switch_posterior(lam),
        method="newton",
        solver="SMO",
        info={"smo_steps": steps_per_iter, "columns": cache.n_computed, "kkt_gap": gap,
              "time": time.perf_counter() - t_start, "numba": HAVE_NUMBA},
    )


def _auto_prefers_direct(dual):
    """Narrow quadratic duals (a linear SVM on a few features, ``alpha = 0``) with many
    examples are solved fastest by the interior-point QP of the direct method: its cost
    grows like ``n K^2`` while SMO's step count grows with ``n``."""
    if not (dual.n_terms == 0 or dual.alpha == 0):
        return False
    width = (0 if dual.Phi0 is None else dual.Phi0.shape[1]) + (0 if dual.Phi is None else dual.Phi.shape[1])
    return width <= _AUTO_DIRECT_MAX_WIDTH and dual.n >= _AUTO_DIRECT_MIN_N


_AUTO_DIRECT_MAX_WIDTH = 64
_AUTO_DIRECT_MIN_N = 2000


def solve_auto(dual, solver=None, warm_start=None, max_iter=None, tol=None, solver_options=None,
               **kwargs):
    """``method="auto"``: the fastest correct solver for ``dual`` (issue 7's measurements).

    Narrow quadratic problems with many examples (linear SVM on at most 64 features, or
    ``alpha = 0``, with ``n >= 2000``) go to the direct CVXPY + Clarabel QP, falling back
    to Newton if Clarabel fails; everything else goes to :func:`solve_newton`, the fastest
    of the three methods on every other case of ``benchmarks/bench_med.py``. ``solver``,
    ``max_iter``, ``tol`` and ``solver_options`` are passed on only to the Newton solver (they
    name another method's settings, so an estimator's ``solver=`` does not break ``"auto"``).

    Returns
    -------
    MEDSolution
        Its ``method`` says which solver ran.
    """
    del solver
    if _auto_prefers_direct(dual) and not kwargs and not solver_options:
        from .direct import solve_direct

        try:
            return solve_direct(dual, solver="CLARABEL", warm_start=warm_start)
        except (RuntimeError, ValueError):
            pass
    kw = dict(kwargs)
    if max_iter is not None:
        kw["max_iter"] = max_iter
    if tol is not None:
        kw["tol"] = tol
    return solve_newton(dual, solver=None, warm_start=warm_start, solver_options=solver_options, **kw)
