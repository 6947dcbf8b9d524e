"""Row kernels: the three things an online linear learner does with one input row.

Per round a perceptron-style learner needs the margin ``w . x_t`` of a row, the margins of
that row under several weight vectors at once, and the rank-one update ``w += c x_t``.
These are the kernels every compiled loop of :mod:`medmtl.online` uses, and they are
callable from Python too:

- :func:`row_dot` -- ``x_t . w``, summed in index order;
- :func:`row_dot_fast` -- the same, but a dense row's sum may be reordered by the compiler so
  that it vectorises (it differs from :func:`row_dot` by rounding only; SHAMPO's margins
  use it);
- :func:`row_dots` -- ``x_t . W[:, m]`` for every column of ``W``, each summed in index order
  (so ``row_dots(...)[m] == row_dot(rows, t, W[:, m])`` bit for bit);
- :func:`add_row` -- ``w += c x_t`` on the row's support only.

The rows come in a *row store*, a small record (a ``NamedTuple`` of arrays) that numba
compiles a separate version of each kernel for: :class:`DenseRows` (a 2-D array) or
:class:`CsrRows` (the three arrays of a canonical CSR matrix: a sparse row is read through
its own entries only, never densified). :func:`as_rows` makes one from a matrix.

Examples
--------
>>> import scipy.sparse as sp
>>> rows = as_rows(sp.csr_matrix([[0.0, 2.0, 0.0], [1.0, 0.0, 1.0]]))
>>> w = np.array([1.0, 5.0, 2.0])
>>> row_dot(rows, 1, w)
3.0
>>> add_row(rows, 0, w, 0.5)
>>> w
array([1., 6., 2.])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit, types
from numba.extending import overload

__all__ = ["DenseRows", "CsrRows", "as_rows", "row_dot", "row_dot_fast", "row_dots", "add_row"]


class DenseRows(NamedTuple):
    """The rows of a dense matrix: row ``t`` is ``X[t]``.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), C-contiguous, float64 or float32
    """

    X: np.ndarray


class CsrRows(NamedTuple):
    """The rows of a canonical CSR matrix (one entry per column in a row).

    Parameters
    ----------
    indptr : ndarray of shape (n_rows + 1,)
    indices : ndarray of shape (nnz,)
    data : ndarray of shape (nnz,), float64
        Row ``t`` holds ``data[indptr[t]:indptr[t + 1]]`` at columns
        ``indices[indptr[t]:indptr[t + 1]]``.
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray


def as_rows(X):
    """The row store of a dense array or a CSR matrix (no copy when none is needed).

    A sparse matrix whose rows repeat a column is summed into a copy first: the updates
    index by column, so each column must appear once per row.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features) or scipy.sparse matrix

    Returns
    -------
    rows : DenseRows or CsrRows

    Examples
    --------
    >>> type(as_rows(np.eye(2))).__name__
    'DenseRows'
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return CsrRows(X.indptr, X.indices, X.data)
    return DenseRows(np.ascontiguousarray(X))


def _kind(rows):
    """The record class of a row store's numba type (``None`` for anything else)."""
    return rows.instance_class if isinstance(rows, types.BaseNamedTuple) else None


@njit(cache=True, nogil=True)
def _ordered_dot(x, w):
    acc = 0.0
    for i in range(x.size):
        acc += x[i] * w[i]
    return acc


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _reassociated_dot(x, w):
    # reassociation lets the sum vectorise; the order differs from index order by rounding only
    acc = 0.0
    for i in range(w.size):
        acc += x[i] * w[i]
    return acc


@njit(cache=True, nogil=True)
def _csr_dot(rows, t, w):
    acc = 0.0
    for k in range(rows.indptr[t], rows.indptr[t + 1]):
        acc += rows.data[k] * w[rows.indices[k]]
    return acc


# The kernels below are declared once as Python stubs and given one compiled body per row
# store: numba picks the body from the record's type when it compiles the caller.
def _dot(rows, t, w):
    raise NotImplementedError  # pragma: no cover - only the compiled overloads run


def _dot_fast(rows, t, w):
    raise NotImplementedError  # pragma: no cover


def _dots(rows, t, W, out):
    raise NotImplementedError  # pragma: no cover


def _add(rows, t, w, c):
    raise NotImplementedError  # pragma: no cover


def _by_store(rows, dense, csr):
    """The body for the row store ``rows`` is (``None``: not a row store, numba says so)."""
    kind = _kind(rows)
    return dense if kind is DenseRows else csr if kind is CsrRows else None


def _dense_dots(rows, t, W, out):
    out[:] = 0.0
    x = rows.X[t]
    for i in range(x.size):
        v = x[i]
        for m in range(out.size):
            out[m] += v * W[i, m]


def _csr_dots(rows, t, W, out):
    out[:] = 0.0
    for k in range(rows.indptr[t], rows.indptr[t + 1]):
        v, col = rows.data[k], rows.indices[k]
        for m in range(out.size):
            out[m] += v * W[col, m]


def _dense_add(rows, t, w, c):
    x = rows.X[t]
    for i in range(x.size):
        w[i] += c * x[i]


def _csr_add(rows, t, w, c):
    for k in range(rows.indptr[t], rows.indptr[t + 1]):  # canonical CSR: unique columns
        w[rows.indices[k]] += c * rows.data[k]


@overload(_dot, jit_options={"cache": True, "nogil": True})
def _dot_impl(rows, t, w):
    return _by_store(rows, lambda rows, t, w: _ordered_dot(rows.X[t], w), lambda rows, t, w: _csr_dot(rows, t, w))


@overload(_dot_fast, jit_options={"cache": True, "nogil": True})
def _dot_fast_impl(rows, t, w):
    return _by_store(rows, lambda rows, t, w: _reassociated_dot(rows.X[t], w),
                     lambda rows, t, w: _csr_dot(rows, t, w))


@overload(_dots, jit_options={"cache": True, "nogil": True})
def _dots_impl(rows, t, W, out):
    return _by_store(rows, _dense_dots, _csr_dots)


@overload(_add, jit_options={"cache": True, "nogil": True})
def _add_impl(rows, t, w, c):
    return _by_store(rows, _dense_add, _csr_add)


@njit(cache=True, nogil=True)
def row_dot(rows, t, w):
    """``x_t . w``, summed in index order (as scipy's CSR product sums a sparse row).

    Parameters
    ----------
    rows : DenseRows or CsrRows
    t : int
        The row.
    w : ndarray of shape (n_features,)
        May be a strided view (a column of a 2-D array).

    Returns
    -------
    margin : float

    Examples
    --------
    >>> row_dot(as_rows(np.array([[1.0, 2.0], [3.0, 4.0]])), 1, np.array([1.0, -1.0]))
    -1.0
    """
    return _dot(rows, t, w)


@njit(cache=True, nogil=True)
def row_dot_fast(rows, t, w):
    """``x_t . w``; a dense row's sum may be reordered so that it vectorises.

    The result differs from :func:`row_dot` by rounding only; CSR rows are summed in index
    order (there is nothing to vectorise in a gather).

    Parameters
    ----------
    rows, t
        As for :func:`row_dot`.
    w : ndarray of shape (n_features,)
        Contiguous, so that the sum vectorises.

    Returns
    -------
    float
        The margin.

    Examples
    --------
    >>> row_dot_fast(as_rows(np.array([[1.0, 2.0]])), 0, np.array([0.5, 0.25]))
    1.0
    """
    return _dot_fast(rows, t, w)


@njit(cache=True, nogil=True)
def row_dots(rows, t, W, out):
    """``out[m] = x_t . W[:, m]`` for every column ``m``, each summed in index order.

    Parameters
    ----------
    rows, t
        The row store and the row, as for :func:`row_dot`.
    W : ndarray of shape (n_features, n_columns)
        Row-major, so a sparse row's margins are one pass over its entries, each reading
        a contiguous row of ``W``.
    out : ndarray of shape (n_columns,)
        Overwritten.

    Examples
    --------
    >>> out = np.empty(2)
    >>> row_dots(as_rows(np.array([[1.0, 2.0]])), 0, np.array([[1.0, 0.0], [1.0, 3.0]]), out)
    >>> out
    array([3., 6.])
    """
    _dots(rows, t, W, out)


@njit(cache=True, nogil=True)
def add_row(rows, t, w, c):
    """In place ``w += c * x_t``, touching only the row's support.

    Parameters
    ----------
    rows, t
        As for :func:`row_dot`.
    w : ndarray of shape (n_features,)
        Updated in place; may be a strided view.
    c : float
        The step size.

    Examples
    --------
    >>> w = np.zeros(2)
    >>> add_row(as_rows(np.array([[1.0, 2.0]])), 0, w, -2.0)
    >>> w
    array([-2., -4.])
    """
    _add(rows, t, w, c)
