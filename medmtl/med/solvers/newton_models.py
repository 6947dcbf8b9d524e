"""The three models of the MED dual that the Newton solver works on.

A Newton iteration needs, at the current multipliers, the switch posteriors, the gradient,
the Newton subproblem (solved by SMO), the quadratic forms of ``J`` along a step (for the
exact line search) and ``J`` at a trial point. :class:`NewtonModel` states that protocol;
each model computes it from one representation of the dual:

* :class:`FactorModel` (linear and feature models): Hessian columns from ``[Phi0 | Phi]`` in
  batches (BLAS products) into a bounded cache, so memory is that of the factors plus the
  cache; multi-task factor models keep per-task, per-term Gram blocks (:class:`GroupGrams`);
* :class:`KernelModel` (an RBF or polynomial kernel held as a
  :class:`~medmtl.med.dual.KernelGram`): columns evaluated from the kernel on demand into
  the LRU cache, as LIBSVM does; no n x n factor or Gram matrix is ever built;
* :class:`BlockModel` (multi-task kernel models): each task's Gram blocks evaluated once
  (:meth:`GroupGrams.from_operators`), and the subproblem solved on the task blocks plus the
  low-rank coupling of the shared switches by block Gauss-Seidel sweeps, never touching the
  cross-task matrix.

:func:`make_model` picks the model for a dual.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import partial

import numpy as np
import scipy.sparse as sp

from ..bound import log_switch_term, switch_posterior
from .gram_storage import GroupGrams
from .smo import ColumnCache, diag_hessian, smo_solve
from .smo_blocks import smo_solve_blocks

__all__ = ["NewtonModel", "FactorModel", "KernelModel", "BlockModel", "make_model"]

# A shared switch whose rank-one curvature is below this fraction of the task blocks'
# largest diagonal entry is left out of the block subproblem's coupling.
COUPLING_RTOL = 1e-8
# Pair steps per multiplier after which a kernel model's subproblem also takes free-set
# steps: a well-conditioned kernel converges long before (RBF SVMs of bench_med.py: about
# 1.2 n steps), a badly scaled one (a polynomial kernel on features around 100) crawls for
# millions.
_KERNEL_FACE_AFTER = 5


class NewtonModel(ABC):
    """What the Newton driver needs from a representation of the dual, at ``lam``.

    The driver calls, in each iteration, :meth:`linearize`, then :meth:`subproblem`, then
    (unless ``J`` is quadratic) :meth:`forms` for the line search, :meth:`trial` at the
    point it found and :meth:`accept` if ``J`` rose; after the last iteration,
    :meth:`finish`. Steps are taken in the scaled variables ``beta = a * lam`` (every
    task's equality reads ``sum beta = 0``), ``grad_b`` being the gradient in them.

    Parameters
    ----------
    dual : MEDDual
    lam : ndarray of shape (n,)
        The feasible starting point.
    opts : dict
        The Newton method's checked options (``cache_size``, ``shrinking``, ...).

    Attributes
    ----------
    lam : ndarray of shape (n,)
        The current multipliers.
    J : float
        ``J(lam)``.
    columns_computed : int
        Hessian columns computed so far (0 for a model that forms whole blocks).
    max_curvature : float
        The largest diagonal entry of the last subproblem's Hessian (in ``beta``), for the
        rounding floor of the gradient (:func:`~medmtl.med.solvers.kkt.rounding_floor`).
    precision : {"double", "single"}
        Of the subproblem's Hessian: ``"single"`` where the model sums or caches it in
        single precision (a non-quadratic ``J``, whose steps are checked against the exact
        ``J`` and gradient).
    """

    columns_computed = 0
    precision = "double"
    max_curvature = 0.0

    @abstractmethod
    def linearize(self):
        """Switch posteriors ``s`` (D,), their curvatures ``tau = s (1 - s)`` (D,) and the
        gradient ``g0`` (n,) of ``J`` at ``lam``; sets up the model Hessian there."""

    @abstractmethod
    def subproblem(self, grad_b, beta, blo, bhi, inner_eps, max_steps):
        """Maximise the Newton model over the box ``[blo, bhi]`` and the equalities, from
        ``beta`` with gradient ``grad_b`` (both updated in place), by SMO to a largest
        violating pair below ``inner_eps``, in at most ``max_steps`` pair steps.

        Returns ``(steps, gap)``: the pair steps taken and the final violation."""

    @abstractmethod
    def forms(self, d):
        """The quadratic forms of ``J`` along ``lam + t d``: ``(A0, B0, q, B, Cq)`` with
        ``A0 = lam^T H0 d``, ``B0 = d^T H0 d`` and per switched term
        ``q = lam^T H lam / 2``, ``B = lam^T H d``, ``Cq = d^T H d``."""

    @abstractmethod
    def trial(self, lam_new, t, grad_new=None):
        """``J`` at ``lam_new = lam + t d`` (the ``d`` of the last :meth:`forms`); for a
        quadratic ``J`` the caller passes the subproblem's exact gradient ``grad_new``."""

    @abstractmethod
    def accept(self, lam_new, J_new, t):
        """Move to the trial point of the last :meth:`trial`."""

    @abstractmethod
    def finish(self):
        """``(J, grad, s)`` at the final ``lam``; ``grad`` or ``s`` may be None, for the
        caller to compute from the dual."""


def make_model(dual, lam, opts):
    """The model for ``dual``: factors, per-task kernel blocks, or kernel columns."""
    if not dual.has_kernels:
        return FactorModel(dual, lam, opts)
    grams = GroupGrams.from_operators(dual) if opts["group_grams"] else None
    if grams is not None and grams.ok:
        return BlockModel(dual, lam, grams, opts)
    return KernelModel(dual, lam, opts)


def _term_sums(dual, x):
    """Per switched term sums of the entries of ``x`` (the switched part, shape (R,))."""
    cs = np.concatenate(([0.0], np.cumsum(x)))
    return cs[dual.term_ptr[1:]] - cs[dual.term_ptr[:-1]]


def _segment_forms(dual, r0, u, v):
    """The quadratic forms of ``J`` along ``lam + t d`` from ``u = F^T lam``, ``v = F^T d``.

    Returns ``(A0, B0, q, B, Cq)``: ``A0 = lam^T H0 d``, ``B0 = d^T H0 d`` and per switched
    term ``q = lam^T H lam / 2``, ``B = lam^T H d``, ``Cq = d^T H d``.
    """
    u0, v0 = u[:r0], v[:r0]
    if dual.n_terms:
        us, vs = u[r0:], v[r0:]
        q = 0.5 * _term_sums(dual, us * us)
        B = _term_sums(dual, us * vs)
        Cq = _term_sums(dual, vs * vs)
    else:
        q = B = Cq = np.zeros(0)
    return float(u0 @ v0), float(v0 @ v0), q, B, Cq


# ``V`` stays sparse while at most this fraction of its entries are nonzero.
_SPARSE_V_DENSITY = 0.3


class _Curvature:
    """The model Hessian ``W`` in factor space at the current ``u``.

    ``W`` is ``weight`` on the diagonal (1 on shared columns, ``s_t`` on term ``t``'s) plus
    ``tau_t u_t u_t^T`` per switched term; ``V[:, t] = F_t u_t`` carries the latter to
    lam-space, so ``F W F^T = F diag(weight) F^T + V diag(tau) V^T``. Where every switched
    term has one column (feature selection), ``tau_t u_t u_t^T`` is diagonal and is folded
    into ``hess_weight`` instead (``V`` is then None); ``weight`` stays the gradient's.
    """

    def __init__(self, dual, rows, u, s, tau, V=None):
        self.r0 = rows.r0
        K = u.size
        self.weight = np.ones(K)
        self.weight[rows.r0:] = s[dual.col_term] if dual.n_terms else 1.0
        self.tau = tau
        self.Ut = None
        self.V = self.VT = None
        # the weights of the Hessian's diagonal part (``weight`` alone is the gradient's)
        self.hess_weight = self.weight
        single = V is None and dual.n_terms and np.array_equal(
            np.bincount(dual.col_term, minlength=dual.n_terms), np.ones(dual.n_terms, dtype=np.int64))
        if single and np.any(tau > 0):
            # one column per term (feature selection): tau_t u_t u_t^T is diagonal, so the
            # rank-one parts fold into the diagonal and the columns of Q cost one product
            self.hess_weight = self.weight.copy()
            ut = u[rows.r0:]
            self.hess_weight[rows.r0:] += tau[dual.col_term] * ut * ut
        elif dual.n_terms and np.any(tau > 0):
            self.Ut = sp.csr_matrix((u[rows.r0:], (np.arange(rows.r0, K), dual.col_term)),
                                    shape=(K, dual.n_terms))
            if V is None:
                if rows.dense is not None:
                    # dense F: one BLAS-backed product instead of a sparse-sparse one
                    V = np.asarray(self.Ut.T @ rows.dense.T).T
                else:
                    V = rows.F @ self.Ut
                    if sp.issparse(V) and V.nnz > _SPARSE_V_DENSITY * V.shape[0] * V.shape[1]:
                        V = V.toarray()
            if sp.issparse(V):
                # few terms meet each multiplier (the Ising structure duals: a term touches
                # two tasks' rows): sparse products cost a fraction of the dense ones
                self.V, self.VT = sp.csr_matrix(V), sp.csr_matrix(V.T)
            else:
                self.V = np.ascontiguousarray(V)

    def __call__(self, Z):
        """``W Z`` for dense ``Z`` of shape (K, m)."""
        out = self.hess_weight[:, None] * Z
        if self.Ut is not None:
            out += self.Ut @ (self.tau[:, None] * (self.Ut.T @ Z))
        return out


class _RankOneCurvature:
    """The rank-one parts ``sum_t tau_t V_t V_t^T`` of the Newton Hessian, for the column cache."""

    def __init__(self, V, tau):
        self.V = None if V is None else np.ascontiguousarray(V)
        self.tau = tau


class FactorModel(NewtonModel):
    """Newton's quantities in factor space, ``u = F^T lam`` (linear and feature models, and
    kernels factored once into per-task Gram blocks, see :class:`GroupGrams`)."""

    def __init__(self, dual, lam, opts):
        self.dual = dual
        self.rows = rows = dual.factor_rows()
        self.inv_a = 1.0 / dual.a
        # A quadratic J is solved by one exact subproblem; otherwise the subproblem is a
        # Newton model checked against the exact J and gradient, and single-precision
        # columns (half the memory traffic and product time) are enough.
        single = not (dual.n_terms == 0 or dual.alpha == 0) and rows.dense is not None
        self.cache = ColumnCache(rows.F, rows.dense32 if single else rows.dense, self.inv_a, None,
                                 int(float(opts["cache_size"]) * 2**20),
                                 dtype=np.float32 if single else np.float64)
        self.grams = GroupGrams.of(dual) if opts["group_grams"] else None
        if self.grams is not None and not self.grams.ok:
            self.grams = None
        self.shrinking = bool(opts["shrinking"])
        self._flat = None  # this solve's buffer for the weighted blocks
        self.lam = lam
        self.u = rows.u(lam)
        self.J = dual.objective(lam)

    @property
    def columns_computed(self):
        return self.cache.n_computed

    @property
    def precision(self):
        """Of the subproblem's Hessian: ``"single"`` or ``"double"``."""
        return "single" if self.cache.dtype == np.float32 else "double"

    def linearize(self):
        """Switch posteriors ``s``, their curvatures ``tau`` and the gradient at ``lam``."""
        dual, rows, u, lam = self.dual, self.rows, self.u, self.lam
        s = switch_posterior(dual.half_sq_norms(u[rows.r0:]), dual.alpha) if dual.n_terms else np.zeros(0)
        tau = s * (1.0 - s) if dual.alpha > 0 else np.zeros_like(s)
        if self.grams is not None:
            # per-task products with the Gram blocks replace passes over the factors
            if self._flat is None:
                self._flat = np.empty(self.grams.flat_size())
            GL, self.Qb = self.grams.times_and_blocks(lam, s, out=self._flat, scale=self.inv_a)
            self.W = _Curvature(dual, rows, u, s, tau, V=self.grams.switched_columns(GL, dual.n_terms))
            g0 = dual.c - self.grams.weighted(GL, s)
        else:
            self.W = _Curvature(dual, rows, u, s, tau)
            g0 = dual.c - rows.F @ (self.W.weight * u)
        self.s, self.tau, self.g0 = s, tau, g0
        return s, tau, g0

    def subproblem(self, grad_b, beta, blo, bhi, inner_eps, max_steps):
        """SMO on the Newton model from ``beta`` (``grad_b``, ``beta`` updated in place)."""
        dual, rows, inv_a, W, tau = self.dual, self.rows, self.inv_a, self.W, self.tau
        n = dual.n
        diagH = np.empty(n)
        if self.grams is not None:
            steps, gap, self.max_curvature = _solve_on_blocks(
                dual, self.grams, self.Qb, self._flat, W.V.toarray() if sp.issparse(W.V) else W.V, tau, inv_a, grad_b, beta, blo, bhi,
                inner_eps, max_steps, self.shrinking)
            return steps, gap
        diag_hessian(rows.record, self.s, tau, self.u, diagH)
        self.max_curvature = float(np.max(diagH * inv_a**2, initial=0.0))
        self.cache.reset(W)
        beta0 = beta.copy()
        g0 = self.g0

        def rebuild(beta_now):
            dz = rows.FT @ ((beta_now - beta0) * inv_a)
            return (g0 - rows.F @ W(dz[:, None]).ravel()) * inv_a

        _, steps, gap = smo_solve(self.cache, diagH * inv_a**2, grad_b, beta, blo, bhi,
                                  dual.group_of, len(dual.groups), inner_eps, max_steps, rebuild,
                                  shrinking=self.shrinking)
        return steps, gap

    def forms(self, d):
        """Quadratic forms along ``d`` (see :func:`_segment_forms`)."""
        self._v = self.rows.u(d)
        return _segment_forms(self.dual, self.rows.r0, self.u, self._v)

    def trial(self, lam_new, t, grad_new=None):
        """``J`` at a trial point (exact)."""
        return self.dual.objective(lam_new)

    def accept(self, lam_new, J_new, t):
        self.lam, self.J = lam_new, J_new
        self.u = self.rows.u(lam_new)

    def finish(self):
        """Final ``J``, gradient and switch posteriors (None: the caller computes them)."""
        return self.J, None, None


class KernelModel(NewtonModel):
    """Newton's quantities from Gram operators (:class:`~medmtl.med.dual.KernelGram`).

    ``V0 = H0 lam`` and ``V[:, t] = H_t lam`` are kept up to date; the subproblem's columns
    are kernel columns evaluated on demand into the LRU cache, so nothing n x n is formed
    and the memory is the cache's.
    """

    def __init__(self, dual, lam, opts):
        self.dual = dual
        self.H0 = dual.shared_gram()
        self.Hs = dual.term_grams()
        n, D = dual.n, dual.n_terms
        slot = dual.workspace.slot("newton")
        if "kernel_diagonals" not in slot:
            slot["kernel_diagonals"] = (np.zeros(n) if self.H0 is None else self.H0.diag(),
                                        np.column_stack([G.diag() for G in self.Hs]) if D else np.zeros((n, 0)))
        self.diag0, self.diagT = slot["kernel_diagonals"]
        self.inv_a = 1.0 / dual.a
        self.cache = ColumnCache(None, None, self.inv_a, None, int(float(opts["cache_size"]) * 2**20))
        self.shrinking = bool(opts["shrinking"])
        self.lam = lam
        self._products(lam)
        self.J = self._objective(lam, self.V0, self.V)

    @property
    def columns_computed(self):
        return self.cache.n_computed

    def _products(self, lam):
        n = self.dual.n
        self.V0 = self.H0.matvec(lam) if self.H0 is not None and lam.any() else np.zeros(n)
        self.V = (np.column_stack([G.matvec(lam) for G in self.Hs]) if self.Hs and lam.any()
                  else np.zeros((n, len(self.Hs))))
        self._grad = None

    def _objective(self, lam, V0, V):
        J = float(self.dual.c @ lam) - 0.5 * float(lam @ V0)
        if self.Hs:
            J -= float(log_switch_term(0.5 * (lam @ V), self.dual.alpha).sum())
        return J

    def linearize(self):
        dual = self.dual
        if self.V is None:
            self._products(self.lam)
        q = 0.5 * (self.lam @ self.V)
        s = switch_posterior(q, dual.alpha) if self.Hs else np.zeros(0)
        tau = s * (1.0 - s) if dual.alpha > 0 else np.zeros_like(s)
        g0 = dual.c - self.V0 - self.V @ s
        self.s, self.tau, self.g0 = s, tau, g0
        self.W = _RankOneCurvature(self.V if np.any(tau > 0) else None, tau)
        return s, tau, g0

    @staticmethod
    def _rows(H0, Hs, s, W, inv_a, idx):
        """Rows ``idx`` of the scaled model Hessian ``D (H0 + sum_t s_t H_t + V diag(tau)
        V^T) D`` (rows = columns), by kernel evaluations.

        A function of the model's parts, not a method: the column cache keeps it, and a
        cache that refers back to its model would outlive the solve (and keep its slab from
        the next one) until the garbage collector breaks the cycle.
        """
        idx = np.asarray(idx, dtype=np.int64)
        out = None
        if H0 is not None:
            out = H0.rows(idx, out, 1.0, inv_a)
        for sd, G in zip(s, Hs):
            if sd > 0:
                out = G.rows(idx, out, sd, inv_a)
        if out is None:
            out = np.zeros((idx.size, inv_a.size))
        if W.V is not None:
            Vs = W.V * inv_a[:, None]
            out += (Vs[idx] * W.tau[None, :]) @ Vs.T
        return out

    def subproblem(self, grad_b, beta, blo, bhi, inner_eps, max_steps):
        inv_a, tau = self.inv_a, self.tau
        diagH = self.diag0 + self.diagT @ self.s
        if self.W.V is not None:
            diagH = diagH + (self.V * self.V) @ tau
        self.max_curvature = float(np.max(diagH * inv_a**2, initial=0.0))
        self.cache.reset(self.W, source=partial(self._rows, self.H0, self.Hs, self.s, self.W, inv_a))
        beta0, grad0 = beta.copy(), grad_b.copy()

        def rebuild(beta_now):
            return grad0 - self.cache.product(beta_now - beta0)

        _, steps, gap = smo_solve(self.cache, diagH * inv_a**2, grad_b, beta, blo, bhi,
                                  self.dual.group_of, len(self.dual.groups), inner_eps, max_steps,
                                  rebuild, shrinking=self.shrinking,
                                  free_set_after=_KERNEL_FACE_AFTER * self.dual.n)
        return steps, gap

    def forms(self, d):
        lam = self.lam
        self._P0 = self.H0.matvec(d) if self.H0 is not None else np.zeros(d.size)
        self._P = (np.column_stack([G.matvec(d) for G in self.Hs]) if self.Hs
                   else np.zeros((d.size, 0)))
        q = 0.5 * (lam @ self.V)
        return float(d @ self.V0), float(d @ self._P0), q, d @ self.V, d @ self._P

    def trial(self, lam_new, t, grad_new=None):
        self._grad_new = grad_new
        if grad_new is not None:
            # a quadratic J: the subproblem's own gradient at lam_new gives J without products
            return 0.5 * float(self.dual.c @ lam_new + lam_new @ grad_new)
        self._V0_new = self.V0 + t * self._P0
        self._V_new = self.V + t * self._P
        return self._objective(lam_new, self._V0_new, self._V_new)

    def accept(self, lam_new, J_new, t):
        self.lam, self.J = lam_new, J_new
        self._grad = self._grad_new
        if self._grad is not None:
            self.V = None  # products recomputed only if another iteration needs them
        else:
            self.V0, self.V = self._V0_new, self._V_new

    def finish(self):
        if self._grad is not None:
            # a quadratic J, at the subproblem's answer: J = (c^T lam + lam^T grad) / 2 from
            # its exact gradient, as the step was accepted (within 1e-14 of J evaluated
            # afresh, which would evaluate the kernel on the support again: a tenth of an
            # RBF SVM's solve at n = 2,000)
            return self.J, self._grad, None
        J = self.dual.objective(self.lam)
        if self.V is None:
            self._products(self.lam)
        s = switch_posterior(0.5 * (self.lam @ self.V), self.dual.alpha) if self.Hs else np.zeros(0)
        return J, self.dual.c - self.V0 - self.V @ s, s


class BlockModel(NewtonModel):
    """Newton's quantities from per-task Gram blocks built by kernel evaluation
    (:meth:`GroupGrams.from_operators`): multi-task kernel models with no factor at all.

    ``GL = [G_{g,t} lam_g]`` is kept up to date from the products with the step, so an
    iteration passes over the blocks twice: to weight them and to multiply the step.
    """

    def __init__(self, dual, lam, grams, opts):
        self.dual, self.grams = dual, grams
        self.inv_a = 1.0 / dual.a
        self.shrinking = bool(opts["shrinking"])
        self._flat = None  # this solve's buffer for the weighted blocks
        quadratic = dual.n_terms == 0 or dual.alpha == 0
        # a quadratic J is solved by one subproblem, which must then be exact
        self.precision = "double" if quadratic else "single"
        self.lam = lam
        self._refresh(lam)
        self.J = self._objective(lam, self.qs, self.q)

    def _refresh(self, lam):
        # a warm start from the previous solve's answer (an alpha path) reuses its products
        last = self.dual.workspace.slot("newton").get("block_products")
        if last is not None and last[0].shape == lam.shape and np.array_equal(last[0], lam):
            self.GL = [P.copy() for P in last[1]]
        else:
            self.GL = self.grams.times(lam)
        qs, q = self.grams.dots(lam, self.GL, self.dual.n_terms)
        self.qs, self.q = qs, 0.5 * q
        self._GD = None

    def _objective(self, lam, qs, q):
        J = float(self.dual.c @ lam) - 0.5 * qs
        if q.size:
            J -= float(log_switch_term(q, self.dual.alpha).sum())
        return J

    def linearize(self):
        dual, grams = self.dual, self.grams
        s = switch_posterior(self.q, dual.alpha) if dual.n_terms else np.zeros(0)
        tau = s * (1.0 - s) if dual.alpha > 0 else np.zeros_like(s)
        g0 = dual.c - grams.weighted(self.GL, s)
        self.s, self.tau = s, tau
        return s, tau, g0

    def subproblem(self, grad_b, beta, blo, bhi, inner_eps, max_steps):
        # the weighted blocks are formed here, not in linearize: the last linearization
        # of a solve only finds the KKT gap below tolerance
        dual, grams = self.dual, self.grams
        if self._flat is None:
            self._flat = np.empty(grams.flat_size())
        Qb = grams.blocks(self.s, single=self.precision == "single", out=self._flat, scale=self.inv_a)
        V = grams.switched_columns(self.GL, dual.n_terms) if np.any(self.tau > 0) else None
        steps, gap, self.max_curvature = _solve_on_blocks(
            dual, grams, Qb, self._flat, V, self.tau, self.inv_a, grad_b, beta,
            blo, bhi, inner_eps, max_steps, self.shrinking)
        return steps, gap

    def forms(self, d):
        D = self.dual.n_terms
        self._GD = GD = self.grams.times(d)
        A0, B = self.grams.dots(d, self.GL, D)
        B0, Cq = self.grams.dots(d, GD, D)
        self._forms_last = (A0, B0, self.q, B, Cq)
        return self._forms_last

    def trial(self, lam_new, t, grad_new=None):
        self._grad_new = grad_new
        if grad_new is not None:
            return 0.5 * float(self.dual.c @ lam_new + lam_new @ grad_new)
        A0, B0, q, B, Cq = self._forms_last
        self._qs_new = self.qs + 2 * t * A0 + t * t * B0
        self._q_new = q + t * B + 0.5 * t * t * Cq
        return self._objective(lam_new, self._qs_new, self._q_new)

    def accept(self, lam_new, J_new, t):
        self.lam, self.J = lam_new, J_new
        if self._grad_new is not None or self._GD is None:
            self._refresh(lam_new)
            return
        for P, Pd in zip(self.GL, self._GD):
            P += t * Pd
        self.qs, self.q = self._qs_new, self._q_new
        self._GD = None

    def finish(self):
        # the products are updated exactly along each step (no drift to speak of over a few
        # iterations); J, the gradient and the switch posteriors come from them
        dual = self.dual
        qs, q = self.grams.dots(self.lam, self.GL, dual.n_terms)
        q = 0.5 * q
        s = switch_posterior(q, dual.alpha) if dual.n_terms else np.zeros(0)
        dual.workspace.slot("newton")["block_products"] = (self.lam.copy(), [P.copy() for P in self.GL])
        return self._objective(self.lam, qs, q), dual.c - self.grams.weighted(self.GL, s), s


def _solve_on_blocks(dual, grams, Qb, flat, V, tau, inv_a, grad_b, beta, blo, bhi, inner_eps,
                     max_steps, shrinking):
    """The Newton subproblem of a block-diagonal model in ``beta`` space: task blocks ``Qb``
    (already scaled by ``1 / a``; views into the flat buffer ``flat``, which the subproblem
    overwrites) plus the rank-T coupling ``V diag(tau) V^T`` of the shared switches
    (:func:`smo_solve_blocks`). Returns ``(steps, gap, max_curvature)``."""
    diag_b = np.empty(dual.n)
    for g, B in zip(grams.group_rows, Qb):
        diag_b[g] = np.diagonal(B)
    Vs, tau_k = None, np.zeros(0)
    if V is not None:
        Vs = V * inv_a[:, None]
        diag_b += (Vs * Vs) @ tau
        # Only switches in transition couple the tasks noticeably; a term whose rank-one
        # curvature is negligible next to the task blocks is left out of the subproblem
        # (the line search and the KKT test still use the exact J).
        weight_t = tau * np.max(Vs * Vs, axis=0, initial=0.0)
        keep = weight_t > COUPLING_RTOL * max(float(np.max(diag_b)), 1e-300)
        Vs, tau_k = np.ascontiguousarray(Vs[:, keep]), tau[keep]
    _, steps, gap = smo_solve_blocks(flat, grams.group_rows, grams.local, Vs, tau_k, grad_b, beta,
                                     blo, bhi, diag_b, dual.group_of, inner_eps,
                                     max_steps, shrinking=shrinking, overwrite_blocks=True)
    return steps, gap, float(np.max(diag_b, initial=0.0))
