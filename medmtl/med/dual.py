"""The one MED dual that every model of the seeds reduces to, and its builders.

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
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq

from ..kernels import get_kernel
from .bound import bound_curvature, log_switch_term, switch_posterior

__all__ = [
    "MEDDual",
    "factorize_gram",
    "svm_dual",
    "feature_selection_dual",
    "kernel_selection_dual",
    "adaptive_pooling_dual",
]


def _as_factor(M):
    if M is None:
        return None
    if sp.issparse(M):
        return sp.csr_matrix(M, dtype=float)
    M = np.asarray(M, dtype=float)
    if M.ndim != 2:
        raise ValueError(f"a factor must be 2-D; got shape {M.shape}")
    return M


def _tdot(M, x):
    """``M^T x`` as a dense 1-D array for a dense or sparse ``M``."""
    return np.asarray(M.T @ x).ravel()


def _dot(M, x):
    return np.asarray(M @ x).ravel()


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
    Phi0 : ndarray or sparse matrix of shape (n, r0), optional
        Factor of the unswitched quadratic term (``None`` for none).
    Phi : ndarray or sparse matrix of shape (n, R), optional
        The switched factors side by side.
    term_ptr : array-like of shape (D + 1,), optional
        Column offsets of the switched terms in ``Phi``.
    alpha : float, default=0
        Prior odds of a switch being off (``alpha = (1 - rho) / rho``).
    term_names : list of str, optional

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
                 term_names=None):
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
        if cover.size != n or np.unique(cover).size != n or cover.min() < 0 or cover.max() >= n:
            raise ValueError("groups must partition the indices 0..n-1")
        self.group_of = np.empty(n, dtype=np.int64)
        for gi, g in enumerate(self.groups):
            self.group_of[g] = gi
        self.Phi0 = _as_factor(Phi0)
        self.Phi = _as_factor(Phi)
        for name, M in (("Phi0", self.Phi0), ("Phi", self.Phi)):
            if M is not None and M.shape[0] != n:
                raise ValueError(f"{name} has {M.shape[0]} rows; expected {n}")
        if self.Phi is None:
            self.term_ptr = np.zeros(1, dtype=np.int64)
        else:
            if term_ptr is None:
                term_ptr = np.arange(self.Phi.shape[1] + 1)
            self.term_ptr = np.asarray(term_ptr, dtype=np.int64)
            if self.term_ptr[0] != 0 or self.term_ptr[-1] != self.Phi.shape[1] or np.any(np.diff(self.term_ptr) < 0):
                raise ValueError("term_ptr must rise from 0 to the number of columns of Phi")
        self.alpha = float(alpha)
        if not np.isfinite(self.alpha) or self.alpha < 0:
            raise ValueError(f"alpha must be finite and >= 0, got {alpha}")
        self.term_names = list(term_names) if term_names is not None else None
        self.col_term = np.repeat(np.arange(self.n_terms), np.diff(self.term_ptr))

    def replace(self, C=None, alpha=None):
        """A copy with a new upper bound ``C`` (box ``[0, C]``) and/or ``alpha``.

        The factors are shared, not copied, so a path over ``(C, alpha)`` builds them once.
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
        return self.term_ptr.size - 1

    # -- the pieces of J -----------------------------------------------------------------
    def shared_u(self, lam):
        """``Phi0^T lam`` (empty if there is no unswitched term)."""
        return np.zeros(0) if self.Phi0 is None else _tdot(self.Phi0, lam)

    def switched_u(self, lam):
        """``Phi^T lam``: every ``u_d`` side by side, shape (R,)."""
        return np.zeros(0) if self.Phi is None else _tdot(self.Phi, lam)

    def half_sq_norms(self, w):
        """``q_d = ||u_d||^2 / 2`` per term from the stacked ``w = Phi^T lam``."""
        cs = np.concatenate(([0.0], np.cumsum(np.square(w))))
        return 0.5 * (cs[self.term_ptr[1:]] - cs[self.term_ptr[:-1]])

    def objective(self, lam):
        """``J(lam)`` (``J(0) = 0``)."""
        lam = np.asarray(lam, dtype=float)
        J = self.c @ lam
        w0 = self.shared_u(lam)
        J -= 0.5 * (w0 @ w0)
        if self.n_terms:
            J -= log_switch_term(self.half_sq_norms(self.switched_u(lam)), self.alpha).sum()
        return float(J)

    def switch_posterior(self, lam):
        """Posterior switch means ``s_d = 1 / (1 + alpha exp(-||u_d||^2 / 2))``, shape (D,)."""
        return switch_posterior(self.half_sq_norms(self.switched_u(lam)), self.alpha)

    def curvature(self, lam):
        """Theorem 1's ``G_d`` at ``lam``, shape (D,)."""
        return bound_curvature(self.half_sq_norms(self.switched_u(lam)), self.alpha)

    def gradient(self, lam):
        """``nabla J(lam) = c - Phi0 Phi0^T lam - sum_d s_d Phi_d Phi_d^T lam``, shape (n,)."""
        lam = np.asarray(lam, dtype=float)
        g = self.c.copy()
        if self.Phi0 is not None:
            g -= _dot(self.Phi0, self.shared_u(lam))
        if self.n_terms:
            w = self.switched_u(lam)
            s = switch_posterior(self.half_sq_norms(w), self.alpha)
            g -= _dot(self.Phi, s[self.col_term] * w)
        return g

    # -- feasibility, bias, optimality ------------------------------------------------------
    def _free(self, lam, rtol=1e-6):
        width = self.hi - self.lo
        return (lam > self.lo + rtol * width) & (lam < self.hi - rtol * width)

    def intercepts(self, lam, grad=None):
        """Per-group equality multipliers (the biases ``b_g``) from the KKT conditions.

        ``b_g`` is the mean of ``grad_i / a_i`` over the free multipliers of group ``g``; if
        none is free, the midpoint of the interval the bounded ones allow (as libsvm does).

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

    def project(self, lam, groups=None):
        """Euclidean projection of ``lam`` onto the feasible set (box and group equalities).

        The projection onto ``{lo <= x <= hi, a^T x = 0}`` is ``clip(lam - t a)`` for the
        scalar ``t`` that zeroes ``a^T x``; ``t`` is found by a bracketed root search.

        Parameters
        ----------
        lam : ndarray of shape (n,)
        groups : list of int, optional
            Only project these groups (all by default).
        """
        x = np.clip(np.asarray(lam, dtype=float), self.lo, self.hi)
        for gi in range(len(self.groups)) if groups is None else groups:
            g = self.groups[gi]
            ag, lg, lo, hi = self.a[g], x[g], self.lo[g], self.hi[g]
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
            t = brentq(phi, lo_t, hi_t, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
            x[g] = np.clip(lg - t * ag, lo, hi)
        return x

    def __repr__(self):
        return (f"MEDDual(n={self.n}, groups={len(self.groups)}, shared={'none' if self.Phi0 is None else self.Phi0.shape[1]}, "
                f"terms={self.n_terms}, alpha={self.alpha:g})")


# ---------------------------------------------------------------------------------------
# Factors of Gram matrices
# ---------------------------------------------------------------------------------------
def factorize_gram(K, name="kernel", rtol=1e-10, psd_tol=1e-8):
    """A factor ``L`` (n x r) with ``L L^T = K`` for a symmetric PSD Gram matrix ``K``.

    Eigenvalues below ``rtol * max`` are dropped (numerically zero directions); an
    eigenvalue below ``-psd_tol * max`` means the kernel is not PSD and raises.

    Examples
    --------
    >>> L = factorize_gram(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> bool(np.allclose(L @ L.T, [[2.0, 1.0], [1.0, 2.0]]))
    True
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name}: Gram matrix must be square; got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError(f"{name}: Gram matrix has NaN or infinite values")
    asym = np.max(np.abs(K - K.T), initial=0.0)
    top = np.max(np.abs(K), initial=0.0)
    if asym > 1e-8 * max(top, 1e-300):
        raise ValueError(f"{name}: Gram matrix is not symmetric (max asymmetry {asym:.3g})")
    vals, vecs = np.linalg.eigh(0.5 * (K + K.T))
    vmax = max(vals.max(initial=0.0), 0.0)
    if vals.size and vals.min() < -psd_tol * max(vmax, 1e-300) and vals.min() < -1e-12:
        raise ValueError(
            f"{name}: kernel is not positive semi-definite (smallest eigenvalue {vals.min():.3g}, "
            f"largest {vmax:.3g})"
        )
    keep = vals > rtol * vmax
    return vecs[:, keep] * np.sqrt(vals[keep])


def _kernel_factor(kernel, X):
    """Explicit feature map if the kernel has one, else a factor of its Gram matrix."""
    F = kernel.feature_map(X)
    if F is not None:
        return F
    return factorize_gram(kernel(X, X), name=getattr(kernel, "name", "kernel"))


# ---------------------------------------------------------------------------------------
# Layout of multipliers: classification (one per example) or regression (two per example)
# ---------------------------------------------------------------------------------------
def _layout(ys, C, regression=False, epsilon=0.0):
    """Per-task signs, source rows, and the c, lo, hi, a, groups of the dual.

    Classification: one multiplier per example with sign ``y``, ``c = 1``, ``a = y``.
    Regression: per task ``[lam; lam*]``, signs ``[+1; -1]``, ``c = [y - eps; -y - eps]``,
    ``a = [+1; -1]`` (prediction ``sum (lam - lam*) k + b``, as in JMLR Section 9).
    """
    signs, srcs, cs, groups = [], [], [], []
    start = 0
    for y in ys:
        y = np.asarray(y, dtype=float)
        T = y.size
        if regression:
            sign = np.concatenate([np.ones(T), -np.ones(T)])
            src = np.concatenate([np.arange(T), np.arange(T)])
            c = np.concatenate([y - epsilon, -y - epsilon])
        else:
            sign, src, c = y, np.arange(T), np.ones(T)
        signs.append(sign)
        srcs.append(src)
        cs.append(c)
        groups.append(np.arange(start, start + sign.size))
        start += sign.size
    c = np.concatenate(cs)
    signs_all = np.concatenate(signs)
    return dict(c=c, lo=np.zeros(c.size), hi=np.full(c.size, float(C)), a=signs_all.copy(),
                groups=groups), signs, srcs


def _signed_rows(F, sign, src):
    """``diag(sign) F[src]`` for dense or sparse ``F``."""
    if sp.issparse(F):
        return sp.diags(sign) @ sp.csr_matrix(F)[src]
    return sign[:, None] * np.asarray(F, dtype=float)[src]


def _block_diag(blocks):
    """Block-diagonal of per-task factors; dense if there is one dense block, else CSR."""
    if len(blocks) == 1 and not sp.issparse(blocks[0]):
        return np.asarray(blocks[0], dtype=float)
    return sp.block_diag([sp.csr_matrix(b) for b in blocks], format="csr")


def svm_dual(Xs, ys, kernel="linear", C=1.0, regression=False, epsilon=0.1):
    """Independent SVMs (or epsilon-SVRs) of all tasks as one MED dual with no switches.

    Parameters
    ----------
    Xs : list of array-like, each of shape (n_m, n_features)
    ys : list of array-like, each of shape (n_m,)
        Labels in {-1, +1} (classification) or real targets (``regression=True``).
    kernel : str, Kernel or callable
    C : float
    regression : bool
    epsilon : float
        Tube half-width for regression.

    Returns
    -------
    MEDDual
    """
    kernel = get_kernel(kernel)
    kw, signs, srcs = _layout(ys, C, regression, epsilon)
    blocks = [_signed_rows(_kernel_factor(kernel, X), s, r) for X, s, r in zip(Xs, signs, srcs)]
    return MEDDual(Phi0=_block_diag(blocks), alpha=0.0, **kw)


def feature_selection_dual(Xs, ys, C=1.0, alpha=1.0, regression=False, epsilon=0.1):
    """(Multi-task) MED feature selection: one switch per feature shared by all tasks.

    ``Phi_d`` is n x M, column ``m`` holding task ``m``'s signed feature ``d`` on its rows;
    in ``Phi`` the columns are ordered ``d * M + m``.

    Returns
    -------
    MEDDual
    """
    kw, signs, srcs = _layout(ys, C, regression, epsilon)
    M = len(Xs)
    D = Xs[0].shape[1]
    if any(X.shape[1] != D for X in Xs):
        raise ValueError("all tasks must have the same number of features for feature selection")
    blocks = [_signed_rows(X, s, r) for X, s, r in zip(Xs, signs, srcs)]
    if M == 1:
        Phi = blocks[0]
    else:
        Phi = _block_diag(blocks)
        perm = (np.arange(M)[None, :] * D + np.arange(D)[:, None]).ravel()
        Phi = sp.csr_matrix(Phi.tocsc()[:, perm])
    return MEDDual(Phi=Phi, term_ptr=np.arange(D + 1) * M, alpha=alpha,
                   term_names=[f"x{d}" for d in range(D)], **kw)


def kernel_selection_dual(Xs, ys, kernels, C=1.0, alpha=1.0, regression=False, epsilon=0.1):
    """(Multi-task) MED kernel selection: one switch per kernel shared by all tasks.

    ``Phi_d`` is the block-diagonal over tasks of ``diag(sign_m) L_{d,m}`` with
    ``K_d(X_m, X_m) = L_{d,m} L_{d,m}^T``; no cross-task Gram matrix is ever formed.

    Returns
    -------
    MEDDual
    """
    kernels = [get_kernel(k) for k in kernels]
    kw, signs, srcs = _layout(ys, C, regression, epsilon)
    cols, ptr = [], [0]
    for k in kernels:
        blocks = [_signed_rows(_kernel_factor(k, X), s, r) for X, s, r in zip(Xs, signs, srcs)]
        B = _block_diag(blocks)
        cols.append(B)
        ptr.append(ptr[-1] + B.shape[1])
    if all(not sp.issparse(B) for B in cols):
        Phi = np.hstack(cols)
    else:
        Phi = sp.hstack([sp.csr_matrix(B) for B in cols], format="csr")
    return MEDDual(Phi=Phi, term_ptr=np.asarray(ptr), alpha=alpha,
                   term_names=[k.name for k in kernels], **kw)


def adaptive_pooling_dual(Xs, ys, kernel="linear", C=1.0, alpha=1.0, shared_scale=1.0,
                          task_scale=None):
    """MED adaptive pooling: a shared model over all tasks plus a switched model per task.

    ``Phi0`` factors ``shared_scale * K`` on the pooled examples; term ``m`` factors
    ``task_scale * K(X_m, X_m)`` on task ``m``'s rows (``task_scale`` defaults to ``10 M``,
    the JMLR paper's heuristic).

    Returns
    -------
    MEDDual
    """
    kernel = get_kernel(kernel)
    M = len(Xs)
    task_scale = 10.0 * M if task_scale is None else float(task_scale)
    kw, signs, srcs = _layout(ys, C)
    F = kernel.feature_map(Xs[0])
    if F is not None:
        maps = [kernel.feature_map(X) for X in Xs]
        shared = [_signed_rows(Fm, s, r) for Fm, s, r in zip(maps, signs, srcs)]
        if any(sp.issparse(b) for b in shared):
            Phi0 = sp.vstack([sp.csr_matrix(b) for b in shared], format="csr")
        else:
            Phi0 = np.vstack(shared)
        Phi0 = Phi0 * np.sqrt(shared_scale)
    else:
        Xall = sp.vstack(Xs, format="csr") if any(sp.issparse(X) for X in Xs) else np.vstack(Xs)
        Phi0 = np.concatenate(signs)[:, None] * factorize_gram(shared_scale * kernel(Xall, Xall), name=kernel.name)
    blocks = [_signed_rows(_kernel_factor(kernel, X), s, r) * np.sqrt(task_scale)
              for X, s, r in zip(Xs, signs, srcs)]
    widths = [b.shape[1] for b in blocks]
    Phi = _block_diag(blocks) if M > 1 else sp.csr_matrix(blocks[0]) if sp.issparse(blocks[0]) else blocks[0]
    return MEDDual(Phi0=Phi0, Phi=Phi, term_ptr=np.concatenate(([0], np.cumsum(widths))),
                   alpha=alpha, term_names=[f"task{m}" for m in range(M)], **kw)
