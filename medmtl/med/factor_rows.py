"""The factors of a MED dual as rows: what the solvers that work on factors read.

:class:`FactorRows` holds ``F = [Phi0 | Phi]`` as one CSR matrix with the switched term of
each column (and a dense copy where that pays); :meth:`MEDDual.factor_rows
<medmtl.med.dual.MEDDual.factor_rows>` builds it once per dual and keeps it in the dual's
workspace, which every copy of the dual along a (C, alpha) path shares. :class:`Rows` is the
record the compiled loops take.
"""

from __future__ import annotations

from collections import namedtuple
from functools import cached_property

import numpy as np
import scipy.sparse as sp

__all__ = ["FactorRows", "Rows"]

Rows = namedtuple("Rows", "indptr indices data col_term")
"""The factors' rows as the compiled loops take them: CSR arrays and the switched term of each
column (-1: shared)."""

# Largest dense copy of the factors kept in memory.
_MAX_BYTES = 1 << 29


class FactorRows:
    """The factors ``[Phi0 | Phi]`` of a MED dual as one CSR matrix, with the term of each column.

    Built once per dual (``dual.factor_rows()`` keeps it in the dual's workspace, which the
    copies of a dual along an alpha path share), it holds the row-wise layout that the
    diagonal of the Hessian and the column products need and the transpose for
    ``u = F^T lam``.

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
    dense, dense32 : ndarray of shape (n, r0 + R) or None
        Dense copies of ``F`` in double and single precision for BLAS column products,
        made on first use where ``F`` is dense enough for them to pay (None otherwise).

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
        self._dense = None
        if len(parts) == 1 and _full_dense(parts[0]):
            # a dense factor without zeros is its own CSR data: no copy of X
            F = _csr_view(parts[0])
            self._dense = parts[0]
        elif parts:
            if any(sp.issparse(p) for p in parts) or len(parts) > 1:
                F = sp.hstack([sp.csr_matrix(p) for p in parts], format="csr")
            else:
                F = sp.csr_matrix(parts[0])
        else:
            F = sp.csr_matrix((dual.n, 0))
        if self._dense is None:
            F.sum_duplicates()
            F.sort_indices()
            F.eliminate_zeros()
        self.F = F
        self.indptr = F.indptr.astype(np.int64, copy=False)
        self.indices = F.indices.astype(np.int32, copy=False)
        self.data = F.data.astype(np.float64, copy=False)
        self.col_term = (np.concatenate(terms) if terms else np.zeros(0)).astype(np.int32)
        self.r0 = 0 if dual.Phi0 is None else dual.Phi0.shape[1]

    @cached_property
    def FT(self):
        """``F^T`` for products: a view of the dense factor where ``F`` is one (no copy: a
        transposed CSR copy of a dense ``X`` would take one and a half times its memory),
        else CSR (built on first use)."""
        return self._dense.T if self._dense is not None else self.F.T.tocsr()

    @cached_property
    def dense(self):
        return self._dense if self._dense is not None else _dense_copy(self.F)

    @cached_property
    def dense32(self):
        return None if self.dense is None else self.dense.astype(np.float32)

    @cached_property
    def col_counts(self):
        """The number of stored entries in each column of ``F``."""
        if self._dense is not None:
            return np.full(self.F.shape[1], self.F.shape[0])
        return np.bincount(self.indices, minlength=self.F.shape[1])

    @cached_property
    def n_held(self):
        """The number of columns of ``F`` that hold a stored entry."""
        return int(np.count_nonzero(self.col_counts))

    @cached_property
    def switched_cols(self):
        """The switched columns (``col_term >= 0``) that hold a stored entry, ascending:
        ``F^T lam`` is zero on every other switched column, whatever ``lam``."""
        return np.flatnonzero((self.col_counts > 0) & (self.col_term >= 0))

    @cached_property
    def record(self):
        """The rows as a :class:`Rows` record for the compiled loops."""
        return Rows(self.indptr, self.indices, self.data, self.col_term)

    def u(self, lam):
        """``F^T lam`` of shape (r0 + R,)."""
        if self._dense is not None:
            return self.F.T @ lam
        return self.FT @ lam


def _full_dense(P):
    """Whether ``P`` is a C-ordered float64 array without zeros (its CSR is a view of it)."""
    return (isinstance(P, np.ndarray) and P.dtype == np.float64 and P.ndim == 2
            and P.flags.c_contiguous and P.size > 0 and bool(np.all(P != 0.0)))


def _csr_view(P):
    """The CSR matrix of a dense ``P`` without zeros, sharing ``P``'s memory as its data."""
    n, K = P.shape
    indptr = np.arange(0, (n + 1) * K, K, dtype=np.int64 if n * K > np.iinfo(np.int32).max else np.int32)
    indices = np.tile(np.arange(K, dtype=np.int32), n)
    F = sp.csr_matrix((P.reshape(-1), indices, indptr), shape=(n, K), copy=False)
    F.has_sorted_indices = True
    F.has_canonical_format = True
    return F


def _dense_copy(F, limit_bytes=_MAX_BYTES):
    """A dense copy of ``F`` for BLAS column products when it is dense enough to pay."""
    n, K = F.shape
    if n * K and F.nnz > 0.3 * n * K and 8 * n * K <= limit_bytes:
        return F.toarray()
    return None
