"""The one MED dual that every model of the seeds reduces to.

Every MED model (SVM, feature selection, kernel selection, their multi-task versions,
adaptive pooling and the regression variants) maximises over stacked Lagrange multipliers
``lam`` of shape (n,)::

    J(lam) = c^T lam - 1/2 ||Phi0^T lam||^2
             - sum_d [ log(alpha + exp(1/2 ||Phi_d^T lam||^2)) - log(alpha + 1) ]
    s.t.  lo <= lam <= hi,   a_g^T lam[g] = 0 for every group (task) g,

so that ``J(0) = 0``. Each ``H_d = Phi_d Phi_d^T`` is kept as its factor ``Phi_d``; the
switched factors are stored side by side in one matrix ``Phi`` (n x R) whose columns
``term_ptr[d]:term_ptr[d + 1]`` belong to term ``d``, so ``u = Phi^T lam`` gives every
``u_d`` at once and nothing n x n is formed for linear or feature models.

A kernel without a cheap feature map (RBF, polynomial) is instead held as a
:class:`~medmtl.med.grams.KernelGram`: the kernel and each task's input rows, so that solvers evaluate the
Gram columns they need (per task, never the cross-task matrix) and no n x n
eigen-factor is built. ``Phi0``, ``Phi`` and ``term_ptr`` stay available for the solvers that
work on factors (Algorithm 1, the direct solve): they are built on first access and kept in
the dual's :class:`Workspace`, which every copy of the dual (:meth:`MEDDual.replace`) shares.

:meth:`MEDDual.to_cvxpy` writes the dual (or Theorem 1's quadratic lower bound on it at a
given point) as a CVXPY problem, to change and solve with any CVXPY solver. The builders of
the models' duals are in :mod:`medmtl.med.builders`, the Gram storage in :mod:`medmtl.med.grams`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq

from .bound import bound_curvature, log_switch_term, switch_posterior
from .dual_cvxpy import to_cvxpy
from .factor_rows import FactorRows
from .workspace import Workspace
from .grams import FactorGram, as_factor, factor_dot, factor_tdot, is_kernel_gram, stack_factors

__all__ = ["MEDDual", "NumberedNames", "Workspace"]


class NumberedNames(Sequence):
    """The names ``prefix0, prefix1, ...`` of ``count`` terms, each made when it is read (a
    feature-selection dual of 20,000 features spent a third of its build making them).

    >>> names = NumberedNames("x", 3)
    >>> len(names), names[1], names[-1], names[:2]
    (3, 'x1', 'x2', ['x0', 'x1'])
    """

    def __init__(self, prefix, count):
        self.prefix, self.count = prefix, int(count)

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [f"{self.prefix}{k}" for k in range(*i.indices(self.count))]
        k = range(self.count)[i]  # an IndexError past either end
        return f"{self.prefix}{k}"

    def __eq__(self, other):
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self):
        return f"NumberedNames({self.prefix!r}, {self.count})"


class MEDDual:
    """The MED dual program in factored form, consumed by every solver in ``medmtl.med``.

    Parameters
    ----------
    c : array-like of shape (n,)
        Linear term.
    lo, hi : array-like of shape (n,)
        Box bounds with ``lo <= 0 <= hi`` (so ``lam = 0`` is feasible).
    a : array-like of shape (n,)
        Equality coefficients: ``sum_{i in g} a_i lam_i = 0`` for each group ``g``.
    groups : list of int arrays
        Disjoint index sets covering ``0..n-1`` (one per task); they are also the blocks of
        the Gauss-Seidel sweep of Algorithm 1.
    Phi0 : ndarray or sparse matrix of shape (n, r0), or KernelGram, optional
        Factor of the unswitched quadratic term, or its kernel Gram evaluated on demand
        (``None`` for none).
    Phi : ndarray or sparse matrix of shape (n, R), optional
        The switched factors side by side.
    term_ptr : array-like of shape (D + 1,), optional
        Column offsets of the switched terms in ``Phi``.
    alpha : float, default=0
        Prior odds of a switch being off (``alpha = (1 - rho) / rho``).
    term_names : list of str, optional
    terms : list, optional
        The switched terms one by one instead of ``Phi`` and ``term_ptr``: each a factor
        (n x r_d) or a :class:`KernelGram`. ``Phi`` and ``term_ptr`` are then built from them
        on first access (factorising the kernels), for the solvers that need factors.

    Attributes
    ----------
    workspace : Workspace
        What solvers derive from the data (factors, Gram blocks), shared by every copy of
        the dual that :meth:`replace` makes.

    Examples
    --------
    A two-example SVM dual with a linear kernel (``Phi0 = y * x``):

    >>> d = MEDDual(c=[1, 1], lo=[0, 0], hi=[1, 1], a=[1, -1], groups=[np.arange(2)],
    ...             Phi0=np.array([[1.0], [1.0]]))
    >>> float(d.objective(np.array([0.5, 0.5])))
    0.5
    >>> d.intercepts(np.array([0.5, 0.5]))
    array([0.])
    """

    def __init__(self, c, lo, hi, a, groups, Phi0=None, Phi=None, term_ptr=None, alpha=0.0,
                 term_names=None, terms=None):
        self.c = np.asarray(c, dtype=float).ravel()
        n = self.c.size
        self.lo = np.broadcast_to(np.asarray(lo, dtype=float), (n,)).copy()
        self.hi = np.broadcast_to(np.asarray(hi, dtype=float), (n,)).copy()
        self.a = np.asarray(a, dtype=float).ravel()
        if self.a.size != n:
            raise ValueError(f"a has {self.a.size} entries but c has {n}")
        if np.any(self.lo > 0) or np.any(self.hi < 0) or not np.all(np.isfinite(self.hi - self.lo)):
            raise ValueError("bounds must satisfy lo <= 0 <= hi and be finite")
        self.groups = [np.asarray(g, dtype=np.int64) for g in groups]
        cover = np.concatenate(self.groups) if self.groups else np.empty(0, int)
        if (cover.size != n or cover.min() < 0 or cover.max() >= n
                or np.bincount(cover, minlength=n).max() > 1):
            raise ValueError("groups must partition the indices 0..n-1")
        self.group_of = np.empty(n, dtype=np.int64)
        for gi, g in enumerate(self.groups):
            self.group_of[g] = gi
        self.workspace = Workspace()
        self._shared = Phi0 if is_kernel_gram(Phi0) else as_factor(Phi0)
        if terms is not None:
            if Phi is not None or term_ptr is not None:
                raise ValueError("give the switched terms as Phi (with term_ptr) or as terms, not both")
            self._terms = [t if is_kernel_gram(t) else as_factor(t) for t in terms]
        else:
            self._terms = None
            Phi = as_factor(Phi)
        for name, M in [("Phi0", self._shared), ("Phi", Phi)] + [
                (f"terms[{d}]", t) for d, t in enumerate(self._terms or [])]:
            rows = None if M is None else M.n if is_kernel_gram(M) else M.shape[0]
            if rows is not None and rows != n:
                raise ValueError(f"{name} has {rows} rows; expected {n}")
        if self._terms is not None:
            if not any(is_kernel_gram(t) for t in self._terms):
                self.workspace.switched_factors = stack_factors(self._terms, n)
        elif Phi is None:
            self.workspace.switched_factors = (None, np.zeros(1, dtype=np.int64))
        else:
            if term_ptr is None:
                term_ptr = np.arange(Phi.shape[1] + 1)
            term_ptr = np.asarray(term_ptr, dtype=np.int64)
            if term_ptr[0] != 0 or term_ptr[-1] != Phi.shape[1] or np.any(np.diff(term_ptr) < 0):
                raise ValueError("term_ptr must rise from 0 to the number of columns of Phi")
            self.workspace.switched_factors = (Phi, term_ptr)
        self.alpha = float(alpha)
        if not np.isfinite(self.alpha) or self.alpha < 0:
            raise ValueError(f"alpha must be finite and >= 0, got {alpha}")
        self.term_names = (term_names if term_names is None or isinstance(term_names, NumberedNames)
                           else list(term_names))

    # -- how the terms are held ------------------------------------------------------------
    @property
    def has_kernels(self):
        """Whether some term is a :class:`KernelGram` (Gram columns evaluated on demand)."""
        return is_kernel_gram(self._shared) or any(is_kernel_gram(t) for t in self._terms or ())

    @property
    def Phi0(self):
        """Factor of the unswitched term, shape (n, r0) or None (built on first use for a kernel)."""
        if is_kernel_gram(self._shared):
            ws = self.workspace
            if ws.shared_factor is None:
                ws.shared_factor = self._shared.factor()
            return ws.shared_factor
        return self._shared

    def _factored_terms(self):
        ws = self.workspace
        if ws.switched_factors is None:
            ws.switched_factors = stack_factors(
                [t.factor() if is_kernel_gram(t) else t for t in self._terms], self.n)
        return ws.switched_factors

    @property
    def Phi(self):
        """The switched factors side by side, shape (n, R) or None."""
        return self._factored_terms()[0]

    @property
    def term_ptr(self):
        """Column offsets of the switched terms in ``Phi``, shape (D + 1,)."""
        return self._factored_terms()[1]

    @property
    def col_term(self):
        """The switched term of each column of ``Phi``, shape (R,)."""
        ws = self.workspace
        if ws.col_term is None:
            ws.col_term = np.repeat(np.arange(self.n_terms), np.diff(self.term_ptr))
        return ws.col_term

    def shared_gram(self):
        """The unswitched term as a Gram operator (:class:`KernelGram` or :class:`FactorGram`), or None."""
        if self._shared is None:
            return None
        if is_kernel_gram(self._shared):
            return self._shared
        ws = self.workspace
        if ws.shared_gram is None:
            ws.shared_gram = FactorGram(self._shared)
        return ws.shared_gram

    def term_grams(self):
        """The switched terms as Gram operators, a list of length ``D``."""
        ws = self.workspace
        if ws.term_grams is None:
            if self._terms is not None:
                grams = [t if is_kernel_gram(t) else FactorGram(t) for t in self._terms]
            else:
                Phi, ptr = ws.switched_factors
                Phi = sp.csc_matrix(Phi) if sp.issparse(Phi) else Phi
                grams = [FactorGram(sp.csr_matrix(Phi[:, a:b]) if sp.issparse(Phi) else Phi[:, a:b])
                         for a, b in zip(ptr[:-1], ptr[1:])]
            ws.term_grams = grams
        return ws.term_grams

    def factor_rows(self):
        """``[Phi0 | Phi]`` as rows (:class:`~medmtl.med.factor_rows.FactorRows`), the form the
        coordinate, proximal Newton and Newton methods read; built on first use (factorising
        any kernel) and kept in the workspace."""
        ws = self.workspace
        if ws.factor_rows is None:
            ws.factor_rows = FactorRows(self)
        return ws.factor_rows

    def replace(self, C=None, alpha=None):
        """A copy with a new upper bound ``C`` (box ``[0, C]``) and/or ``alpha``.

        The data and the :attr:`workspace` are shared, not copied, so a path over
        ``(C, alpha)`` builds the factors and the solvers' layouts once.

        Parameters
        ----------
        C : float, optional
            New upper bound of every multiplier, ``> 0`` (the box becomes ``[0, C]``); the
            bounds are kept if None.
        alpha : float, optional
            New prior odds of a switch being off, ``>= 0``; kept if None.

        Returns
        -------
        MEDDual
        """
        new = copy.copy(self)
        if C is not None:
            C = float(C)
            if not np.isfinite(C) or C <= 0:
                raise ValueError(f"C must be > 0, got {C}")
            new.hi = np.full(self.n, C)
        if alpha is not None:
            alpha = float(alpha)
            if not np.isfinite(alpha) or alpha < 0:
                raise ValueError(f"alpha must be finite and >= 0, got {alpha}")
            new.alpha = alpha
        return new

    # -- sizes -------------------------------------------------------------------------
    @property
    def n(self):
        """Number of multipliers."""
        return self.c.size

    @property
    def n_terms(self):
        """Number ``D`` of switched terms."""
        if self._terms is not None:
            return len(self._terms)
        return self.workspace.switched_factors[1].size - 1

    # -- the pieces of J -----------------------------------------------------------------
    def shared_u(self, lam):
        """``Phi0^T lam`` (empty if there is no unswitched term).

        Parameters
        ----------
        lam : array-like of shape (n,)
            The stacked Lagrange multipliers.
        """
        return np.zeros(0) if self.Phi0 is None else factor_tdot(self.Phi0, lam)

    def switched_u(self, lam):
        """``Phi^T lam``: every ``u_d`` side by side, shape (R,).

        Parameters
        ----------
        lam : array-like of shape (n,)
            The stacked Lagrange multipliers.
        """
        return np.zeros(0) if self.Phi is None else factor_tdot(self.Phi, lam)

    def half_sq_norms(self, w):
        """``q_d = ||u_d||^2 / 2`` per term from the stacked ``w = Phi^T lam``.

        Parameters
        ----------
        w : ndarray of shape (R,)
            Every ``u_d`` side by side, as :meth:`switched_u` returns them.

        Returns
        -------
        ndarray of shape (D,)
        """
        cs = np.concatenate(([0.0], np.cumsum(np.square(w))))
        return 0.5 * (cs[self.term_ptr[1:]] - cs[self.term_ptr[:-1]])

    def term_quads(self, lam):
        """``q_d = 1/2 lam^T H_d lam`` per switched term, shape (D,).

        Parameters
        ----------
        lam : array-like of shape (n,)
            The stacked Lagrange multipliers.
        """
        lam = np.asarray(lam, dtype=float)
        if not self.has_kernels:
            return self.half_sq_norms(self.switched_u(lam))
        return np.array([0.5 * G.quad(lam) for G in self.term_grams()])

    def term_quad_bound(self):
        """An upper bound on every ``q_d`` over the box: the largest evidence the data allow.

        With ``m_i = max(|lo_i|, |hi_i|)``: ``1/2 sum_j (|Phi_j|^T m)^2`` over a factor term's
        columns, ``1/2 (sum_i sqrt(H_d,ii) m_i)^2`` for a kernel term (``|H_ij|`` is at most
        ``sqrt(H_ii H_jj)``); 0 without switched terms.

        Returns
        -------
        float
        """
        if self.n_terms == 0:
            return 0.0
        m = np.maximum(np.abs(self.lo), np.abs(self.hi))
        if not self.has_kernels:
            return float(self.half_sq_norms(np.asarray(abs(self.Phi).T @ m).ravel()).max())
        return max(0.5 * float(np.sqrt(np.maximum(G.diag(), 0.0)) @ m) ** 2 for G in self.term_grams())

    def objective(self, lam):
        """``J(lam)`` (``J(0) = 0``).

        Parameters
        ----------
        lam : array-like of shape (n,)
            The stacked Lagrange multipliers.
        """
        lam = np.asarray(lam, dtype=float)
        J = self.c @ lam
        if self.has_kernels:
            H0 = self.shared_gram()
            if H0 is not None:
                J -= 0.5 * H0.quad(lam)
        else:
            w0 = self.shared_u(lam)
            J -= 0.5 * (w0 @ w0)
        if self.n_terms:
            J -= log_switch_term(self.term_quads(lam), self.alpha).sum()
        return float(J)

    def switch_posterior(self, lam):
        """Posterior switch means ``s_d = 1 / (1 + alpha exp(-||u_d||^2 / 2))``, shape (D,).

        Parameters
        ----------
        lam : array-like of shape (n,)
            The stacked Lagrange multipliers.
        """
        return switch_posterior(self.term_quads(lam), self.alpha)

    def curvature(self, lam):
        """Theorem 1's ``G_d`` at ``lam``, shape (D,).

        Parameters
        ----------
        lam : array-like of shape (n,)
            The stacked Lagrange multipliers.
        """
        return bound_curvature(self.term_quads(lam), self.alpha)

    def gradient(self, lam):
        """``nabla J(lam) = c - Phi0 Phi0^T lam - sum_d s_d Phi_d Phi_d^T lam``, shape (n,).

        Parameters
        ----------
        lam : array-like of shape (n,)
            The stacked Lagrange multipliers.
        """
        lam = np.asarray(lam, dtype=float)
        g = self.c.copy()
        if self.has_kernels:
            H0 = self.shared_gram()
            if H0 is not None:
                g -= H0.matvec(lam)
            if self.n_terms:
                grams = self.term_grams()
                s = switch_posterior(np.array([0.5 * G.quad(lam) for G in grams]), self.alpha)
                for sd, G in zip(s, grams):
                    g -= sd * G.matvec(lam)
            return g
        if self.Phi0 is not None:
            g -= factor_dot(self.Phi0, self.shared_u(lam))
        if self.n_terms:
            w = self.switched_u(lam)
            s = switch_posterior(self.half_sq_norms(w), self.alpha)
            g -= factor_dot(self.Phi, s[self.col_term] * w)
        return g

    # -- feasibility, bias, optimality ------------------------------------------------------
    def _free(self, lam, rtol=1e-6):
        width = self.hi - self.lo
        return (lam > self.lo + rtol * width) & (lam < self.hi - rtol * width)

    def intercepts(self, lam, grad=None):
        """Per-group equality multipliers (the biases ``b_g``) from the KKT conditions.

        ``b_g`` is the mean of ``grad_i / a_i`` over the free multipliers of group ``g``; if
        none is free, the midpoint of the interval the bounded ones allow (as libsvm does).

        Parameters
        ----------
        lam : array-like of shape (n,)
            The stacked Lagrange multipliers.
        grad : ndarray of shape (n,), optional
            :meth:`gradient` at ``lam``, if already computed (it is computed otherwise).

        Returns
        -------
        ndarray of shape (n_groups,)
        """
        lam = np.asarray(lam, dtype=float)
        grad = self.gradient(lam) if grad is None else grad
        free = self._free(lam)
        at_lo = ~free & (lam - self.lo <= self.hi - lam)
        b = np.zeros(len(self.groups))
        for gi, g in enumerate(self.groups):
            ratio = grad[g] / self.a[g]
            f = free[g]
            if f.any():
                b[gi] = ratio[f].mean()
                continue
            pos = self.a[g] > 0
            lower_side = at_lo[g]
            # At a lower bound grad_i - b a_i <= 0; at an upper bound >= 0.
            ge = (lower_side & pos) | (~lower_side & ~pos)
            lb = ratio[ge].max() if ge.any() else -np.inf
            ub = ratio[~ge].min() if (~ge).any() else np.inf
            if np.isfinite(lb) and np.isfinite(ub):
                b[gi] = 0.5 * (lb + ub)
            elif np.isfinite(lb):
                b[gi] = lb
            elif np.isfinite(ub):
                b[gi] = ub
        return b

    def kkt_violation(self, lam):
        """Largest violation of the KKT conditions at ``lam``.

        Returns a dict with ``stationarity`` (projected gradient of the Lagrangian: free
        multipliers need ``grad_i = b_g a_i``, those at a bound the right sign), ``equality``
        (max ``|a_g^T lam_g|``) and ``bounds`` (max box violation).

        Parameters
        ----------
        lam : array-like of shape (n,)
            The stacked Lagrange multipliers.

        Returns
        -------
        dict of str to float
        """
        lam = np.asarray(lam, dtype=float)
        grad = self.gradient(lam)
        b = self.intercepts(lam, grad)
        r = grad - b[self.group_of] * self.a
        free = self._free(lam)
        at_lo = ~free & (lam - self.lo <= self.hi - lam)
        at_hi = ~free & ~at_lo
        viol = np.zeros_like(r)
        viol[free] = np.abs(r[free])
        viol[at_lo] = np.maximum(r[at_lo], 0.0)
        viol[at_hi] = np.maximum(-r[at_hi], 0.0)
        eq = max((abs(self.a[g] @ lam[g]) for g in self.groups), default=0.0)
        bnd = float(max(np.max(self.lo - lam, initial=0.0), np.max(lam - self.hi, initial=0.0)))
        return {"stationarity": float(viol.max(initial=0.0)), "equality": float(eq), "bounds": bnd}

    def project(self, lam, groups=None, keep=None):
        """Euclidean projection of ``lam`` onto the feasible set (box and group equalities).

        The projection onto ``{lo <= x <= hi, a^T x = 0}`` is ``clip(lam - t a)`` for the
        scalar ``t`` that zeroes ``a^T x``; ``t`` is found by a bracketed root search.

        Parameters
        ----------
        lam : ndarray of shape (n,)
        groups : list of int, optional
            Only project these groups (all by default).
        keep : bool ndarray of shape (n,), optional
            Multipliers held where they are (in the box): the projection onto the feasible
            points that share them. A ValueError if the others cannot meet an equality.
        """
        x = np.clip(np.asarray(lam, dtype=float), self.lo, self.hi)
        box_lo, box_hi = self.lo, self.hi
        if keep is not None:
            box_lo, box_hi = np.where(keep, x, self.lo), np.where(keep, x, self.hi)
        for gi in range(len(self.groups)) if groups is None else groups:
            g = self.groups[gi]
            ag, lg, lo, hi = self.a[g], x[g], box_lo[g], box_hi[g]
            scale = max(np.abs(ag) @ np.maximum(np.abs(lo), np.abs(hi)), 1e-300)

            def phi(t):
                return ag @ np.clip(lg - t * ag, lo, hi)

            if abs(phi(0.0)) <= 1e-15 * scale:
                continue
            step = 1.0 / max(np.max(np.abs(ag)), 1e-300)
            lo_t, hi_t = -step, step
            while phi(lo_t) < 0:
                lo_t *= 2
                if abs(lo_t) > 1e300:
                    raise ValueError("the group equality cannot be met inside the box")
            while phi(hi_t) > 0:
                hi_t *= 2
                if abs(hi_t) > 1e300:
                    raise ValueError("the group equality cannot be met inside the box")
            # bisection from a bracket of size ~1 to a root near 1e-300 takes ~1,000 halvings
            t = brentq(phi, lo_t, hi_t, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=4000)
            x[g] = np.clip(lg - t * ag, lo, hi)
        return x

    # -- the program in CVXPY ----------------------------------------------------------------
    def to_cvxpy(self, bound_at=None, parameters=False):
        """This dual as a CVXPY problem: ``maximise J(lam)`` over the feasible set.

        It is the problem ``method="direct"`` solves (Clarabel by default), so adding a
        constraint, changing the objective or solving it with another CVXPY solver starts
        from exactly what the library solves. Its value is ``J`` (normalised, ``J(0) = 0``).
        With ``alpha > 0`` each switched term is ``logistic(q_d - log alpha)`` of the convex
        ``q_d = ||Phi_d^T lam||^2 / 2`` plus a constant, which needs an exponential-cone solver
        (Clarabel, SCS, ECOS, MOSEK); with ``alpha = 0`` or no switched terms it is a QP.

        Parameters
        ----------
        bound_at : array-like of shape (n,), optional
            Replace ``J`` by Theorem 1's quadratic lower bound on it that touches ``J`` at
            this point: the QP whose maximiser is one joint step of Algorithm 1
            (``method="bound"`` with ``update="joint"``) from there. Any CVXPY QP solver
            accepts it.
        parameters : bool, default=False
            Make ``C`` and ``alpha`` :class:`cvxpy.Parameter` objects, named ``"C"`` and
            ``"alpha"`` (``problem.param_dict``), of a problem that follows CVXPY's DPP rules,
            so that a re-solve at another value reuses the compiled problem. The upper bounds
            are ``C * hi / max(hi)`` (``C`` starts at ``max(hi)``: the ``C`` of a dual without
            sample weights); the switched terms are written through their epigraph (see
            :mod:`medmtl.med.dual_cvxpy`), so the value is still ``J``.

        Returns
        -------
        problem : cvxpy.Problem
        lam : cvxpy.Variable of shape (n,)
            The multipliers; after ``problem.solve()`` their value is the maximiser.

        Examples
        --------
        >>> import cvxpy as cp
        >>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
        >>> from medmtl.med.builders import feature_selection_dual
        >>> dual = feature_selection_dual([X], [np.array([1, 1, -1, -1])], C=1.0, alpha=1.0)
        >>> problem, lam = dual.to_cvxpy()
        >>> bool(problem.solve(solver=cp.CLARABEL) > 0)
        True
        >>> bool(np.isclose(problem.value, dual.objective(lam.value)))
        True

        The bound at a point touches ``J`` there and stays below it elsewhere:

        >>> start = dual.project(np.full(4, 0.5))
        >>> qp, x = dual.to_cvxpy(bound_at=start)
        >>> x.value = start
        >>> bool(np.isclose(qp.objective.value, dual.objective(start)))
        True
        >>> _ = qp.solve(solver=cp.OSQP, eps_abs=1e-9, eps_rel=1e-9)
        >>> bool(dual.objective(start) <= qp.value <= dual.objective(x.value) + 1e-7)
        True

        With parameters, a re-solve at another ``C``:

        >>> problem, lam = dual.to_cvxpy(parameters=True)
        >>> problem.is_dpp()
        True
        >>> problem.param_dict["C"].value = 0.5
        >>> J = problem.solve(solver=cp.CLARABEL)
        >>> bool(np.isclose(J, dual.replace(C=0.5).to_cvxpy()[0].solve(solver=cp.CLARABEL), rtol=1e-6))
        True
        """
        return to_cvxpy(self, bound_at, parameters)

    def detached(self):
        """A copy with the same data and none of what solvers derived from it.

        The copy shares the data arrays but has its own :attr:`workspace`, holding only
        the switched factors when the dual was given them as ``Phi``: what a fitted model
        keeps of the dual it solved, without the solvers' Gram blocks and layouts.

        Returns
        -------
        MEDDual
        """
        new = copy.copy(self)
        new.lo, new.hi = self.lo.copy(), self.hi.copy()
        new.workspace = Workspace()
        if self._terms is None:
            new.workspace.switched_factors = self.workspace.switched_factors
        return new

    def __repr__(self):
        shared = ("none" if self._shared is None else "kernel" if is_kernel_gram(self._shared)
                  else self._shared.shape[1])
        return (f"MEDDual(n={self.n}, groups={len(self.groups)}, shared={shared}, "
                f"terms={self.n_terms}, alpha={self.alpha:g})")
