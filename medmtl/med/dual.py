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

A kernel without a cheap feature map (RBF, polynomial) is instead held as a
:class:`KernelGram`: the kernel and each task's input rows, so that solvers evaluate the
Gram columns they need (per task, never the cross-task matrix) and no n x n
eigen-factor is built. ``Phi0``, ``Phi`` and ``term_ptr`` stay available for the solvers that
work on factors (Algorithm 1, the direct solve): they are built on first access and kept in
the dual's :class:`Workspace`, which every copy of the dual (:meth:`MEDDual.replace`) shares.

:meth:`MEDDual.to_cvxpy` writes the dual (or Theorem 1's quadratic lower bound on it at a
given point) as a CVXPY problem, to change and solve with any CVXPY solver.
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
    "Workspace",
    "KernelGram",
    "FactorGram",
    "factorize_gram",
    "svm_dual",
    "feature_selection_dual",
    "kernel_selection_dual",
    "adaptive_pooling_dual",
]


def _canonical(M):
    """A CSR matrix with its duplicate entries summed and its indices sorted (a copy when
    ``M`` is not so already; the caller's matrix is never changed), so that a matrix with
    duplicates gives exactly what its canonical form gives. Dense input is returned as it is.

    >>> M = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 0]), np.array([0, 2])), shape=(1, 2))
    >>> _canonical(M).toarray().tolist(), M.nnz
    ([[3.0, 0.0]], 2)
    """
    if not sp.issparse(M):
        return M
    C = sp.csr_matrix(M, dtype=float)
    if C.has_canonical_format:
        return C
    # the constructor may share the caller's arrays: sum the duplicates in a copy
    C = sp.csr_matrix(M, dtype=float, copy=True)
    C.sum_duplicates()
    return C


def _canonical_inputs(Xs):
    """:func:`_canonical` of each task's inputs."""
    return [_canonical(X) for X in Xs]


def _as_factor(M):
    if M is None:
        return None
    if sp.issparse(M):
        return _canonical(M)
    M = np.asarray(M, dtype=float)
    if M.ndim != 2:
        raise ValueError(f"a factor must be 2-D; got shape {M.shape}")
    return M


def _tdot(M, x):
    """``M^T x`` as a dense 1-D array for a dense or sparse ``M``."""
    return np.asarray(M.T @ x).ravel()


def _dot(M, x):
    return np.asarray(M @ x).ravel()


class KernelGram:
    """A kernel's Gram matrix over the multipliers, evaluated on demand, block by block.

    ``H = sum_b E_b diag(sign_b) (scale * k(X_b, X_b)) diag(sign_b) E_b^T`` where block ``b``
    (a task, or all tasks for a shared model) owns the multipliers ``rows_b`` with input rows
    ``X_b`` and signs ``sign_b``; the blocks' rows are disjoint. Nothing n x n is stored:
    columns and products are computed from kernel evaluations when asked for.

    Parameters
    ----------
    kernel : Kernel
        A kernel that is positive semi-definite by construction (``kernel.mercer``).
    blocks : list of (rows, X, sign)
        ``rows`` int array of shape (n_b,), ``X`` array-like or sparse of shape
        (n_b, n_features), ``sign`` of shape (n_b,).
    n : int
        Number of multipliers.
    scale : float, default=1

    Examples
    --------
    >>> from medmtl.kernels import RBFKernel
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> H = KernelGram(RBFKernel(0.5), [(np.arange(3), X, np.array([1.0, -1.0, 1.0]))], 3)
    >>> K = np.outer([1, -1, 1], [1, -1, 1]) * RBFKernel(0.5)(X, X)
    >>> bool(np.allclose(H.columns([2, 0]), K[:, [2, 0]]) and np.allclose(H.diag(), 1.0))
    True
    >>> bool(np.allclose(H.matvec(np.array([1.0, 0.0, 2.0])), K @ [1, 0, 2]))
    True
    >>> bool(np.isclose(H.quad(np.array([1.0, 2.0, 0.0])), [1, 2, 0] @ K @ [1, 2, 0]))
    True
    """

    _CHUNK = 1 << 21  # kernel entries per evaluation (16 MB), to bound temporary memory

    def __init__(self, kernel, blocks, n, scale=1.0):
        self.kernel = kernel
        self.scale = float(scale)
        self.n = int(n)
        self.blocks = []
        self.block_of = np.full(self.n, -1, dtype=np.int64)
        self.local = np.zeros(self.n, dtype=np.int64)
        for b, (rows, X, sign) in enumerate(blocks):
            rows = np.asarray(rows, dtype=np.int64)
            sign = np.asarray(sign, dtype=float)
            if X.shape[0] != rows.size or sign.size != rows.size:
                raise ValueError("each kernel block needs as many input rows and signs as multipliers")
            if np.any(self.block_of[rows] >= 0):
                raise ValueError("kernel blocks must own disjoint multipliers")
            self.block_of[rows] = b
            self.local[rows] = np.arange(rows.size)
            X = _canonical(X) if sp.issparse(X) else np.asarray(X, dtype=float)
            # contiguous rows (the usual task layout) are written by slicing
            contiguous = rows.size and np.array_equal(rows, np.arange(rows[0], rows[0] + rows.size))
            where = slice(int(rows[0]), int(rows[0]) + rows.size) if contiguous else rows
            self.blocks.append((rows, X, sign, where))
        self._diag = None

    @property
    def name(self):
        return getattr(self.kernel, "name", "kernel")

    def block_gram(self, b):
        """Dense Gram block ``b`` (signed and scaled), shape (n_b, n_b)."""
        rows, X, sign, _ = self.blocks[b]
        G = self.kernel(X, X)
        G *= self.scale * sign[:, None]
        G *= sign[None, :]
        return G

    def gram_on(self, rows):
        """Dense ``H[rows][:, rows]`` (zero between blocks), or None if ``H`` is zero there."""
        rows = np.asarray(rows, dtype=np.int64)
        bi = self.block_of[rows]
        if np.all(bi < 0):
            return None
        out = np.zeros((rows.size, rows.size))
        for b in np.unique(bi[bi >= 0]):
            sel = np.flatnonzero(bi == b)
            _, X, sign, where = self.blocks[b]
            loc = self.local[rows[sel]]
            if isinstance(where, slice) and sel.size == rows.size and np.array_equal(loc, np.arange(X.shape[0])):
                out[:] = self.block_gram(b)
                continue
            K = self.kernel(X[loc], X[loc])
            K *= self.scale * sign[loc][:, None]
            K *= sign[loc][None, :]
            out[np.ix_(sel, sel)] = K
        return out

    def diag(self):
        """``diag(H)``, shape (n,)."""
        if self._diag is None:
            d = np.zeros(self.n)
            for rows, X, sign, where in self.blocks:
                d[where] = self.scale * sign * sign * self.kernel.diag(X)
            self._diag = d
        return self._diag

    def rows(self, idx, out=None, weight=1.0, scale=None):
        """``weight * H[idx, :]`` (the columns ``idx``, ``H`` being symmetric) added into
        ``out`` (new if None), shape (m, n).

        ``scale`` (n,), if given, gives ``diag(scale) H diag(scale)`` instead (the solvers'
        scaled variables); scalings that cancel (a sign times itself) cost nothing.
        """
        idx = np.asarray(idx, dtype=np.int64)
        bi = self.block_of[idx]
        fresh = out is None
        for b in np.unique(bi):
            if b < 0:
                continue
            rows, X, sign, where = self.blocks[b]
            sel = np.flatnonzero(bi == b)
            loc = self.local[idx[sel]]
            right = sign if scale is None else sign * scale[rows]
            left = (weight * self.scale) * right[loc]
            K = self.kernel(X[loc], X)
            if np.any(left != 1.0):
                K *= left[:, None]
            if np.any(right != 1.0):
                K *= right[None, :]
            whole = isinstance(where, slice) and sel.size == idx.size
            if fresh and whole and where == slice(0, self.n):
                out, fresh = K, False  # one block covering everything: no copy
                continue
            if out is None:
                out = np.zeros((idx.size, self.n))
            fresh = False
            if whole:
                out[:, where] += K
            elif isinstance(where, slice):
                out[sel, where] += K
            else:
                out[np.ix_(sel, rows)] += K
        return np.zeros((idx.size, self.n)) if out is None else out

    def columns(self, idx):
        """``H[:, idx]``, shape (n, m)."""
        return self.rows(idx).T

    def matvec(self, x):
        """``H x`` for ``x`` of shape (n,); only the nonzero entries of ``x`` are visited."""
        out = np.zeros(self.n)
        for rows, X, sign, where in self.blocks:
            xb = x[where]
            nz = np.flatnonzero(xb)
            if nz.size == 0:
                continue
            w = (self.scale * sign[nz]) * xb[nz]
            acc = np.zeros(rows.size)
            step = max(1, self._CHUNK // max(rows.size, 1))
            for s0 in range(0, nz.size, step):
                acc += self.kernel(X, X[nz[s0:s0 + step]]) @ w[s0:s0 + step]
            out[where] += sign * acc
        return out

    def quad(self, x):
        """``x^T H x`` from the kernel on the support of ``x`` only."""
        total = 0.0
        for rows, X, sign, where in self.blocks:
            xb = x[where]
            nz = np.flatnonzero(xb)
            if nz.size == 0:
                continue
            w = sign[nz] * xb[nz]
            Xn = X[nz]
            step = max(1, self._CHUNK // nz.size)
            for s0 in range(0, nz.size, step):
                total += float(w[s0:s0 + step] @ (self.kernel(Xn[s0:s0 + step], Xn) @ w))
        return self.scale * total

    def factor(self):
        """A factor ``L`` (n x r) with ``L L^T = H``: block-diagonal eigen-factors of the blocks."""
        parts = []
        for b, (rows, X, sign, where) in enumerate(self.blocks):
            L = factorize_gram(self.block_gram(b), name=self.name)
            parts.append(sp.csr_matrix((L.ravel(), (np.repeat(rows, L.shape[1]),
                                                     np.tile(np.arange(L.shape[1]), rows.size))),
                                       shape=(self.n, L.shape[1])) if L.size else
                         sp.csr_matrix((self.n, 0)))
        if len(parts) == 1:
            return parts[0].toarray()
        return sp.hstack(parts, format="csr")


class FactorGram:
    """``H = F F^T`` for a factor ``F`` (n x r), with the interface of :class:`KernelGram`.

    Examples
    --------
    >>> G = FactorGram(np.array([[1.0], [2.0]]))
    >>> G.columns([1]).ravel().tolist(), G.matvec(np.array([1.0, 0.0])).tolist()
    ([2.0, 4.0], [1.0, 2.0])
    """

    def __init__(self, F):
        self.F = F
        self.n = F.shape[0]
        self._FT = F.T.tocsr() if sp.issparse(F) else None
        self._diag = None

    def diag(self):
        if self._diag is None:
            F = self.F
            self._diag = (np.asarray(F.multiply(F).sum(axis=1)).ravel() if sp.issparse(F)
                          else np.einsum("ij,ij->i", F, F))
        return self._diag

    def _t(self, x):
        return np.asarray((self._FT if self._FT is not None else self.F.T) @ x).ravel()

    def rows(self, idx, out=None, weight=1.0, scale=None):
        """``weight * H[idx, :]`` (or of ``diag(scale) H diag(scale)``) added into ``out``
        (new if None), shape (m, n)."""
        idx = np.asarray(idx, dtype=np.int64)
        R = self.F[idx] @ self.F.T
        R = R.toarray() if sp.issparse(R) else np.asarray(R)
        if scale is not None:
            R *= scale[idx][:, None]
            R *= scale[None, :]
        if out is None:
            return weight * R
        out += weight * R
        return out

    def columns(self, idx):
        """``H[:, idx]``, shape (n, m)."""
        return self.rows(idx).T

    def matvec(self, x):
        return _dot(self.F, self._t(x))

    def quad(self, x):
        u = self._t(x)
        return float(u @ u)

    def gram_on(self, rows):
        """Dense ``F[rows] F[rows]^T``, or None if ``F`` is zero on ``rows``."""
        Fr = self.F[rows]
        if (Fr.nnz if sp.issparse(Fr) else np.count_nonzero(Fr)) == 0:
            return None
        G = Fr @ Fr.T
        return G.toarray() if sp.issparse(G) else np.asarray(G)

    def spans_groups(self, group_of):
        """Whether some column of ``F`` has nonzeros in two groups."""
        Fc = sp.csc_matrix(self.F)
        Fc.eliminate_zeros()
        nz = np.diff(Fc.indptr) > 0
        if not nz.any():
            return False
        grp = group_of[Fc.indices]
        starts = Fc.indptr[:-1][nz]
        return bool(np.any(np.minimum.reduceat(grp, starts) != np.maximum.reduceat(grp, starts)))


def _is_kernel_gram(x):
    return isinstance(x, KernelGram)


def _stack_factors(factors, n):
    """Side-by-side factors and their column offsets (dense unless one is sparse)."""
    ptr = np.concatenate(([0], np.cumsum([F.shape[1] for F in factors]))).astype(np.int64)
    if not factors:
        return None, ptr
    if all(not sp.issparse(F) for F in factors):
        return np.hstack(factors) if len(factors) > 1 else factors[0], ptr
    return sp.hstack([sp.csr_matrix(F) for F in factors], format="csr"), ptr


class Workspace:
    """What is derived once from a dual's data, shared by every copy of the dual.

    :meth:`MEDDual.replace` (a path over ``C`` and ``alpha``) keeps the data, so the copies
    share one workspace and the factors, Gram operators and solver layouts below are built
    once for the whole path. Every attribute is None until it is first built; the names are
    fixed (``__slots__``), so a misspelt one is an error rather than a second cache.

    Attributes
    ----------
    shared_factor : ndarray or sparse matrix of shape (n, r0), or None
        Factor of a kernel's unswitched Gram, built when a factor-based method
        (``"bound"``, ``"direct"``) first reads :attr:`MEDDual.Phi0`. It stays None while the
        kernel is only evaluated column by column: no n x n factor has been built.
    switched_factors : tuple (Phi, term_ptr) or None
        The switched factors side by side and their column offsets; None while some term is
        a :class:`KernelGram` that no factor-based method has factorised yet.
    col_term : ndarray of shape (R,) or None
        The switched term of each column of ``Phi``.
    shared_gram : FactorGram or None
        The unswitched factor as a Gram operator.
    term_grams : list of FactorGram or KernelGram, or None
        The switched terms as Gram operators.
    factor_rows : medmtl.med.solvers.gram_storage.FactorRows or None
        The Newton solver's row layout of ``[Phi0 | Phi]``.
    factor_grams : medmtl.med.solvers.gram_storage.GroupGrams or None
        Per-task Gram blocks of the factors (the Newton solver, block-diagonal models).
    kernel_grams : medmtl.med.solvers.gram_storage.GroupGrams or None
        Per-task Gram blocks evaluated from the kernels (the Newton solver).
    kernel_diagonals : tuple (diag0, diagT) or None
        ``diag(H0)`` of shape (n,) and every ``diag(H_d)`` as columns, shape (n, D).
    block_products : tuple (lam, products) or None
        The Newton solver's per-task products at its last answer, so that a warm start
        from that answer (the next point of a path) does not recompute them.

    Examples
    --------
    >>> d = MEDDual(c=[1, 1], lo=[0, 0], hi=[1, 1], a=[1, -1], groups=[np.arange(2)],
    ...             Phi0=np.array([[1.0], [1.0]]))
    >>> d.replace(C=2.0).workspace is d.workspace
    True
    >>> d.workspace.shared_gram is None, d.shared_gram() is d.workspace.shared_gram
    (True, True)
    """

    __slots__ = ("shared_factor", "switched_factors", "col_term", "shared_gram", "term_grams",
                 "factor_rows", "factor_grams", "kernel_grams", "kernel_diagonals",
                 "block_products", "__weakref__")

    def __init__(self):
        for name in self.__slots__[:-1]:
            setattr(self, name, None)


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
        if cover.size != n or np.unique(cover).size != n or cover.min() < 0 or cover.max() >= n:
            raise ValueError("groups must partition the indices 0..n-1")
        self.group_of = np.empty(n, dtype=np.int64)
        for gi, g in enumerate(self.groups):
            self.group_of[g] = gi
        self.workspace = Workspace()
        self._shared = Phi0 if _is_kernel_gram(Phi0) else _as_factor(Phi0)
        if terms is not None:
            if Phi is not None or term_ptr is not None:
                raise ValueError("give the switched terms as Phi (with term_ptr) or as terms, not both")
            self._terms = [t if _is_kernel_gram(t) else _as_factor(t) for t in terms]
        else:
            self._terms = None
            Phi = _as_factor(Phi)
        for name, M in [("Phi0", self._shared), ("Phi", Phi)] + [
                (f"terms[{d}]", t) for d, t in enumerate(self._terms or [])]:
            rows = None if M is None else M.n if _is_kernel_gram(M) else M.shape[0]
            if rows is not None and rows != n:
                raise ValueError(f"{name} has {rows} rows; expected {n}")
        if self._terms is not None:
            if not any(_is_kernel_gram(t) for t in self._terms):
                self.workspace.switched_factors = _stack_factors(self._terms, n)
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
        self.term_names = list(term_names) if term_names is not None else None

    # -- how the terms are held ------------------------------------------------------------
    @property
    def has_kernels(self):
        """Whether some term is a :class:`KernelGram` (Gram columns evaluated on demand)."""
        return _is_kernel_gram(self._shared) or any(_is_kernel_gram(t) for t in self._terms or ())

    @property
    def Phi0(self):
        """Factor of the unswitched term, shape (n, r0) or None (built on first use for a kernel)."""
        if _is_kernel_gram(self._shared):
            ws = self.workspace
            if ws.shared_factor is None:
                ws.shared_factor = self._shared.factor()
            return ws.shared_factor
        return self._shared

    def _factored_terms(self):
        ws = self.workspace
        if ws.switched_factors is None:
            ws.switched_factors = _stack_factors(
                [t.factor() if _is_kernel_gram(t) else t for t in self._terms], self.n)
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
        if _is_kernel_gram(self._shared):
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
                grams = [t if _is_kernel_gram(t) else FactorGram(t) for t in self._terms]
            else:
                Phi, ptr = ws.switched_factors
                Phi = sp.csc_matrix(Phi) if sp.issparse(Phi) else Phi
                grams = [FactorGram(sp.csr_matrix(Phi[:, a:b]) if sp.issparse(Phi) else Phi[:, a:b])
                         for a, b in zip(ptr[:-1], ptr[1:])]
            ws.term_grams = grams
        return ws.term_grams

    def replace(self, C=None, alpha=None):
        """A copy with a new upper bound ``C`` (box ``[0, C]``) and/or ``alpha``.

        The data and the :attr:`workspace` are shared, not copied, so a path over
        ``(C, alpha)`` builds the factors and the solvers' layouts once.
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
        """``Phi0^T lam`` (empty if there is no unswitched term)."""
        return np.zeros(0) if self.Phi0 is None else _tdot(self.Phi0, lam)

    def switched_u(self, lam):
        """``Phi^T lam``: every ``u_d`` side by side, shape (R,)."""
        return np.zeros(0) if self.Phi is None else _tdot(self.Phi, lam)

    def half_sq_norms(self, w):
        """``q_d = ||u_d||^2 / 2`` per term from the stacked ``w = Phi^T lam``."""
        cs = np.concatenate(([0.0], np.cumsum(np.square(w))))
        return 0.5 * (cs[self.term_ptr[1:]] - cs[self.term_ptr[:-1]])

    def term_quads(self, lam):
        """``q_d = 1/2 lam^T H_d lam`` per switched term, shape (D,)."""
        lam = np.asarray(lam, dtype=float)
        if not self.has_kernels:
            return self.half_sq_norms(self.switched_u(lam))
        return np.array([0.5 * G.quad(lam) for G in self.term_grams()])

    def objective(self, lam):
        """``J(lam)`` (``J(0) = 0``)."""
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
        """Posterior switch means ``s_d = 1 / (1 + alpha exp(-||u_d||^2 / 2))``, shape (D,)."""
        return switch_posterior(self.term_quads(lam), self.alpha)

    def curvature(self, lam):
        """Theorem 1's ``G_d`` at ``lam``, shape (D,)."""
        return bound_curvature(self.term_quads(lam), self.alpha)

    def gradient(self, lam):
        """``nabla J(lam) = c - Phi0 Phi0^T lam - sum_d s_d Phi_d Phi_d^T lam``, shape (n,)."""
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

    # -- the program in CVXPY ----------------------------------------------------------------
    def to_cvxpy(self, bound_at=None):
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

        Returns
        -------
        problem : cvxpy.Problem
        lam : cvxpy.Variable of shape (n,)
            The multipliers; after ``problem.solve()`` their value is the maximiser.

        Examples
        --------
        >>> import cvxpy as cp
        >>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
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
        """
        import cvxpy as cp

        lam = cp.Variable(self.n)
        expr = self.c @ lam
        if self.Phi0 is not None and self.Phi0.shape[1]:
            expr = expr - 0.5 * cp.sum_squares(self.Phi0.T @ lam)
        if self.n_terms:
            if bound_at is None:
                expr = expr - self._cvxpy_switched_terms(lam)
            else:
                expr = expr - self._cvxpy_switched_bound(lam, bound_at)
        rows = np.concatenate([np.full(g.size, k) for k, g in enumerate(self.groups)])
        cols = np.concatenate(self.groups)
        Aeq = sp.csr_matrix((self.a[cols], (rows, cols)), shape=(len(self.groups), self.n))
        cons = [lam >= self.lo, lam <= self.hi, Aeq @ lam == 0]
        return cp.Problem(cp.Maximize(expr), cons), lam

    def _cvxpy_switched_terms(self, lam):
        """``sum_d [log(alpha + exp(q_d)) - log(alpha + 1)]`` as a convex CVXPY expression."""
        import cvxpy as cp

        w = self.Phi.T @ lam
        widths = np.diff(self.term_ptr)
        if np.all(widths == 1):
            qd = 0.5 * cp.square(w)
        elif self.n_terms <= 1000:
            # One cone per term (not one per column) keeps the conic problem small and
            # well conditioned for wide kernel factors.
            qd = 0.5 * cp.hstack([cp.sum_squares(w[a:b]) for a, b in zip(self.term_ptr[:-1], self.term_ptr[1:])])
        else:
            qd = 0.5 * (self._term_sum_matrix() @ cp.square(w))
        if self.alpha == 0:
            return cp.sum(qd)
        # log(alpha + e^q) - log(alpha + 1) = logistic(q - log alpha) - log(1 + 1 / alpha)
        return cp.sum(cp.logistic(qd - np.log(self.alpha))) - self.n_terms * np.log1p(1.0 / self.alpha)

    def _cvxpy_switched_bound(self, lam, at):
        """Theorem 1's upper bound on the switched terms, touching them at ``at``:
        ``sum_d f(v_d) + s_d v_d^T (w_d - v_d) + ||w_d - v_d||^2 / 2 + G_d (v_d^T (w_d - v_d))^2 / 2``
        with ``v = Phi^T at`` and ``w = Phi^T lam`` (a convex quadratic in ``lam``)."""
        import cvxpy as cp

        at = np.asarray(at, dtype=float)
        if at.shape != (self.n,) or not np.all(np.isfinite(at)):
            raise ValueError(f"bound_at must be a finite array of shape ({self.n},); got shape {at.shape}")
        v = self.switched_u(at)
        q = self.half_sq_norms(v)
        s, G = switch_posterior(q, self.alpha), bound_curvature(q, self.alpha)
        dw = self.Phi.T @ lam - v
        r = self._term_sum_matrix() @ cp.multiply(v, dw)  # v_d^T (w_d - v_d) per term
        return (float(log_switch_term(q, self.alpha).sum()) + s @ r + 0.5 * cp.sum_squares(dw)
                + 0.5 * cp.sum_squares(cp.multiply(np.sqrt(G), r)))

    def _term_sum_matrix(self):
        """``S`` of shape (D, R) summing the columns of each switched term."""
        R = self.term_ptr[-1]
        return sp.csr_matrix((np.ones(R), (self.col_term, np.arange(R))), shape=(self.n_terms, R))

    def __repr__(self):
        shared = ("none" if self._shared is None else "kernel" if _is_kernel_gram(self._shared)
                  else self._shared.shape[1])
        return (f"MEDDual(n={self.n}, groups={len(self.groups)}, shared={shared}, "
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


def _on_demand(kernel, X):
    """Whether ``kernel`` is held as a :class:`KernelGram`: no cheap feature map, and PSD by
    construction (a kernel of unknown kind is factorised at once, which checks it)."""
    return kernel.mercer and kernel.feature_map(X[:1]) is None


def _kernel_term(kernel, Xs, signs, srcs, groups, n, scale=1.0):
    """One kernel term, block-diagonal over the tasks: a KernelGram or a factor."""
    if _on_demand(kernel, Xs[0]):
        return KernelGram(kernel, [(g, X[r], s) for X, s, r, g in zip(Xs, signs, srcs, groups)], n, scale)
    blocks = [_signed_rows(_kernel_factor(kernel, X), s, r) for X, s, r in zip(Xs, signs, srcs)]
    B = _block_diag(blocks)
    return B * np.sqrt(scale) if scale != 1.0 else B


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
    Xs = _canonical_inputs(Xs)
    kw, signs, srcs = _layout(ys, C, regression, epsilon)
    Phi0 = _kernel_term(kernel, Xs, signs, srcs, kw["groups"], kw["c"].size)
    return MEDDual(Phi0=Phi0, alpha=0.0, **kw)


def feature_selection_dual(Xs, ys, C=1.0, alpha=1.0, regression=False, epsilon=0.1):
    """(Multi-task) MED feature selection: one switch per feature shared by all tasks.

    ``Phi_d`` is n x M, column ``m`` holding task ``m``'s signed feature ``d`` on its rows;
    in ``Phi`` the columns are ordered ``d * M + m``.

    Returns
    -------
    MEDDual
    """
    Xs = _canonical_inputs(Xs)
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

    Each ``H_d`` is block-diagonal over tasks: a kernel with a feature map contributes its
    signed features, an RBF or polynomial kernel a :class:`KernelGram` (per-task kernel
    columns on demand); no cross-task Gram matrix is ever formed.

    Returns
    -------
    MEDDual
    """
    kernels = [get_kernel(k) for k in kernels]
    Xs = _canonical_inputs(Xs)
    kw, signs, srcs = _layout(ys, C, regression, epsilon)
    n = kw["c"].size
    terms = [_kernel_term(k, Xs, signs, srcs, kw["groups"], n) for k in kernels]
    return MEDDual(terms=terms, alpha=alpha, term_names=[k.name for k in kernels], **kw)


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
    Xs = _canonical_inputs(Xs)
    M = len(Xs)
    task_scale = 10.0 * M if task_scale is None else float(task_scale)
    kw, signs, srcs = _layout(ys, C)
    n = kw["c"].size
    if _on_demand(kernel, Xs[0]):
        Xall = sp.vstack(Xs, format="csr") if any(sp.issparse(X) for X in Xs) else np.vstack(Xs)
        shared = KernelGram(kernel, [(np.arange(n), Xall, np.concatenate(signs))], n, shared_scale)
        terms = [KernelGram(kernel, [(g, X, s)], n, task_scale)
                 for X, s, g in zip(Xs, signs, kw["groups"])]
        return MEDDual(Phi0=shared, terms=terms, alpha=alpha,
                       term_names=[f"task{m}" for m in range(M)], **kw)
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
