"""Gram matrices of the MED dual, stored as factors or evaluated on demand, behind one
interface.

A term ``H = Phi Phi^T`` of the dual is kept as its factor ``Phi`` (dense or canonical CSR)
when the kernel has a cheap feature map or a small Gram matrix (:func:`factorize_gram`);
a kernel without one (RBF, polynomial) is held as a :class:`KernelGram`, the kernel and each
task's rows, whose columns the solvers evaluate as they need them. Both implement
:class:`GramOperator`, the one interface a solver reads a term through: its diagonal, rows
and columns, blocks, products and quadratic form, and a factor. The dual hands them out
(:meth:`MEDDual.shared_gram <medmtl.med.dual.MEDDual.shared_gram>`,
:meth:`~medmtl.med.dual.MEDDual.term_grams`), and all its factors as rows
(:meth:`~medmtl.med.dual.MEDDual.factor_rows`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

__all__ = ["GramOperator", "KernelGram", "FactorGram", "factorize_gram"]


@runtime_checkable
class GramOperator(Protocol):
    """What a solver may ask of a Gram term ``H`` (n x n) of the MED dual, however it is held.

    Attributes
    ----------
    n : int
        The number of multipliers.
    """

    n: int

    def diag(self):
        """``diag(H)``, shape (n,)."""

    def rows(self, idx, out=None, weight=1.0, scale=None):
        """``weight * H[idx, :]`` (of ``diag(scale) H diag(scale)`` when given), added into
        ``out`` (new if None), shape (len(idx), n)."""

    def columns(self, idx):
        """``H[:, idx]``, shape (n, len(idx))."""

    def gram_on(self, rows, out=None):
        """The dense block ``H[rows][:, rows]`` (written into ``out`` if given), or None
        where ``H`` is zero on ``rows``."""

    def matvec(self, x):
        """``H x``, shape (n,)."""

    def quad(self, x):
        """``x^T H x``."""

    def factor(self):
        """A factor ``F`` with ``F F^T = H`` (built on first call where ``H`` is evaluated
        on demand)."""


def canonical(M):
    """A CSR matrix with its duplicate entries summed and its indices sorted (a copy when
    ``M`` is not so already; the caller's matrix is never changed), so that a matrix with
    duplicates gives exactly what its canonical form gives. Dense input is returned as it is.

    >>> M = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 0]), np.array([0, 2])), shape=(1, 2))
    >>> canonical(M).toarray().tolist(), M.nnz
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


def canonical_inputs(Xs):
    """:func:`canonical` of each task's inputs."""
    return [canonical(X) for X in Xs]


def as_factor(M):
    if M is None:
        return None
    if sp.issparse(M):
        return canonical(M)
    M = np.asarray(M, dtype=float)
    if M.ndim != 2:
        raise ValueError(f"a factor must be 2-D; got shape {M.shape}")
    return M


def factor_tdot(M, x):
    """``M^T x`` as a dense 1-D array for a dense or sparse ``M``."""
    return np.asarray(M.T @ x).ravel()


def factor_dot(M, x):
    return np.asarray(M @ x).ravel()


class KernelGram:
    """A kernel's Gram matrix over the multipliers, evaluated on demand, block by block: a
    :class:`GramOperator`.

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
            X = canonical(X) if sp.issparse(X) else np.asarray(X, dtype=float)
            # contiguous rows (the usual task layout) are written by slicing
            contiguous = rows.size and np.array_equal(rows, np.arange(rows[0], rows[0] + rows.size))
            where = slice(int(rows[0]), int(rows[0]) + rows.size) if contiguous else rows
            self.blocks.append((rows, X, sign, where))
        self._diag = None

    @property
    def name(self):
        return getattr(self.kernel, "name", "kernel")

    def block_gram(self, b, out=None):
        """Dense Gram block ``b`` (signed and scaled), shape (n_b, n_b), written into ``out``
        if given."""
        rows, X, sign, _ = self.blocks[b]
        G = np.multiply(self.kernel(X, X), self.scale * sign[:, None], out=out)
        G *= sign[None, :]
        return G

    def gram_on(self, rows, out=None):
        """Dense ``H[rows][:, rows]`` (zero between blocks; written into ``out`` of shape
        (m, m) if given), or None if ``H`` is zero there."""
        rows = np.asarray(rows, dtype=np.int64)
        bi = self.block_of[rows]
        if np.all(bi < 0):
            return None
        b = max(int(bi[0]), 0)
        _, X, _, where = self.blocks[b]
        if (isinstance(where, slice) and rows.size == X.shape[0] and np.all(bi == b)
                and np.array_equal(self.local[rows], np.arange(X.shape[0]))):
            return self.block_gram(b, out=out)  # one whole block, straight into the result
        if out is None:
            out = np.zeros((rows.size, rows.size))
        else:
            out[:] = 0.0
        for b in np.unique(bi[bi >= 0]):
            sel = np.flatnonzero(bi == b)
            _, X, sign, where = self.blocks[b]
            loc = self.local[rows[sel]]
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
    """``H = F F^T`` for a factor ``F`` (n x r), as a :class:`GramOperator`.

    Examples
    --------
    >>> G = FactorGram(np.array([[1.0], [2.0]]))
    >>> G.columns([1]).ravel().tolist(), G.matvec(np.array([1.0, 0.0])).tolist()
    ([2.0, 4.0], [1.0, 2.0])
    >>> isinstance(G, GramOperator)
    True
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
        return factor_dot(self.F, self._t(x))

    def quad(self, x):
        u = self._t(x)
        return float(u @ u)

    def gram_on(self, rows, out=None):
        """Dense ``F[rows] F[rows]^T`` (written into ``out`` if given), or None if ``F`` is
        zero on ``rows``."""
        Fr = self.F[rows]
        if (Fr.nnz if sp.issparse(Fr) else np.count_nonzero(Fr)) == 0:
            return None
        G = Fr @ Fr.T
        G = G.toarray() if sp.issparse(G) else np.asarray(G)
        if out is None:
            return G
        out[:] = G
        return out

    def factor(self):
        """``F`` itself."""
        return self.F

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


def is_kernel_gram(x):
    return isinstance(x, KernelGram)


def stack_factors(factors, n):
    """Side-by-side factors and their column offsets (dense unless one is sparse)."""
    ptr = np.concatenate(([0], np.cumsum([F.shape[1] for F in factors]))).astype(np.int64)
    if not factors:
        return None, ptr
    if all(not sp.issparse(F) for F in factors):
        return np.hstack(factors) if len(factors) > 1 else factors[0], ptr
    return sp.hstack([sp.csr_matrix(F) for F in factors], format="csr"), ptr


# ---------------------------------------------------------------------------------------
def factorize_gram(K, name="kernel", rtol=1e-10, psd_tol=1e-8):
    """A factor ``L`` (n x r) with ``L L^T = K`` for a symmetric PSD Gram matrix ``K``.

    Eigenvalues below ``rtol * max`` are dropped (numerically zero directions); an
    eigenvalue below ``-psd_tol * max`` means the kernel is not PSD and raises.

    Parameters
    ----------
    K : array-like of shape (n, n)
        The Gram matrix.
    name : str, default="kernel"
        The kernel's name, to start the messages of the errors raised.
    rtol : float, default=1e-10
        Eigenvalues up to ``rtol`` times the largest are dropped.
    psd_tol : float, default=1e-8
        An eigenvalue below ``-psd_tol`` times the largest (and below ``-1e-12``) is an
        error: the kernel is not PSD. Those above are dropped or kept as ``rtol`` says.

    Returns
    -------
    ndarray of shape (n, r)
        The factor ``L``, one column per eigenvalue kept.

    Raises
    ------
    ValueError
        If ``K`` is not square, not finite, not symmetric or not PSD.

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


def kernel_factor(kernel, X):
    """Explicit feature map if the kernel has one, else a factor of its Gram matrix."""
    F = kernel.feature_map(X)
    if F is not None:
        return F
    return factorize_gram(kernel(X, X), name=getattr(kernel, "name", "kernel"))


def on_demand(kernel, X):
    """Whether ``kernel`` is held as a :class:`KernelGram`: no cheap feature map, and PSD by
    construction (a kernel of unknown kind is factorised at once, which checks it)."""
    return kernel.mercer and kernel.feature_map(X[:1]) is None
