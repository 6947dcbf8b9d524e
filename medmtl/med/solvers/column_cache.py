"""Columns of the Newton subproblem's Hessian on demand, in a slab of fixed size.

:class:`ColumnCache` holds columns of ``Q = D F W F^T D`` (``beta`` space) computed in batches
by dense or sparse products of the factors, or taken from a source of kernel columns, least
recently used out, so that the pair loop of :mod:`~medmtl.med.solvers.smo` works in bounded
memory however large ``n`` is.

The slab of a finished solve is kept as the process's one spare, and the next cache that
fits in it takes it instead of new memory (:func:`release_spare_slab` frees it). A fresh
slab's first writes fault its pages in; on a virtual machine that hands freed memory back
to its host that cost as much as the rest of an RBF SVM solve at n = 5,000 (0.3-0.5 s of
system time for 170 MB), while a grid of fits, a path or cross-validation reuses one slab.
"""

from __future__ import annotations

import threading
import weakref
from collections import namedtuple

import numpy as np
import scipy.sparse as sp

__all__ = ["ColumnCache", "Slab", "release_spare_slab"]

Slab = namedtuple("Slab", "cache slot_of stamp clock")
"""A cache's arrays as the compiled pair loop takes them: the columns (one per slot), the slot
of each coordinate (-1: not cached), each slot's last use, and the clock."""


_spare = {"slab": None}
_spare_lock = threading.Lock()


def _take_slab(n_rows, n_cols, dtype):
    """An (n_rows, n_cols) C-ordered array of ``dtype``: a view of the spare slab if it is
    large enough, else new zeros. The contents of a reused slab are stale (finite entries of
    an earlier cache): a cache reads only the slots it has filled."""
    size = n_rows * n_cols
    with _spare_lock:
        spare = _spare["slab"]
        if spare is not None and spare.dtype == dtype and spare.size >= size:
            _spare["slab"] = None
            return spare[:size].reshape(n_rows, n_cols)
    return np.zeros((n_rows, n_cols), dtype=dtype)


def _give_back(slab):
    """Keep ``slab``'s memory as the spare (the larger of it and the current spare)."""
    base = (slab if slab.base is None else slab.base).reshape(-1)  # the whole memory
    with _spare_lock:
        spare = _spare["slab"]
        if spare is None or spare.nbytes < base.nbytes:
            _spare["slab"] = base


def release_spare_slab():
    """Free the spare column slab kept from the last finished solve, if any.

    Returns
    -------
    int
        The number of bytes released.

    Examples
    --------
    >>> release_spare_slab() >= 0
    True
    """
    with _spare_lock:
        spare, _spare["slab"] = _spare["slab"], None
    return 0 if spare is None else int(spare.nbytes)


class ColumnCache:
    """Columns of ``Q = D F W F^T D`` on demand, in a fixed-size slab (LRU eviction).

    Parameters
    ----------
    F : scipy.sparse.csr_matrix of shape (n, K)
        The factors side by side.
    F_dense : ndarray of shape (n, K) or None
        A dense copy used for BLAS products when ``F`` is dense enough.
    inv_a : ndarray of shape (n,)
    apply_W : object
        The curvature: ``weight`` (K,) on every column, ``tau`` (T,) and ``V`` (n, T) with
        ``V[:, t] = F_t u_t`` (or ``V = None``) for the rank-one part of each term.
    max_bytes : int
        Size of the slab.
    source : callable, optional
        ``idx -> (m, n)`` array: the columns ``idx`` of ``Q`` as rows, complete and scaled
        (e.g. kernel columns evaluated on demand); replaces the factor products.
    dtype : numpy dtype, default=float64
        Of the slab; ``float32`` (with a single-precision ``F_dense``) halves the memory
        traffic where an inexact subproblem is enough (a Newton model with a line search).

    Examples
    --------
    A linear kernel on three points with ``a = 1`` (so ``Q = X X^T``):

    >>> import scipy.sparse as sp
    >>> class Identity:
    ...     weight = np.ones(2)
    ...     V = None
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> cache = ColumnCache(sp.csr_matrix(X), X, np.ones(3), Identity(), 1 << 20)
    >>> cache.fill([2])
    >>> cache.cache[cache.slot_of[2]]
    array([1., 2., 2.])
    """

    def __init__(self, F, F_dense, inv_a, apply_W, max_bytes, source=None, dtype=np.float64):
        self.F = F
        self.F_dense = F_dense
        self.dtype = np.dtype(dtype)
        self.inv_a = inv_a
        self.apply_W = apply_W
        self.source = source
        n = inv_a.size
        n_slots = int(max(2, min(n, max_bytes // max(self.dtype.itemsize * n, 1))))
        # one cached column per row of the slab, so the pair loop reads it contiguously; the
        # memory goes back to the spare when the cache is gone
        self.cache = _take_slab(n_slots, n, self.dtype)
        weakref.finalize(self, _give_back, self.cache)
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.owner = np.full(n_slots, -1, dtype=np.int64)
        self.stamp = np.zeros(n_slots, dtype=np.int64)
        self.clock = np.zeros(1, dtype=np.int64)
        self.top = 0  # every slot this cache has filled is below it
        self.n_computed = 0
        self._casts = {}
        self._FT = None

    @property
    def n_slots(self):
        return self.cache.shape[0]

    def reset(self, apply_W, source=None):
        """Forget every column (the curvature ``W`` changed).

        ``source``, if given, is a callable ``idx -> (m, n)`` array returning the columns
        ``idx`` of ``Q`` as rows, complete and scaled (kernel columns evaluated on demand),
        instead of the factor products.
        """
        self.apply_W = apply_W
        self.source = source
        self._casts = {k: v for k, v in self._casts.items() if k == "inv_a"}
        self.slot_of[:] = -1
        self.owner[:] = -1
        self.stamp[:] = 0

    def compute(self, idx):
        """The columns ``idx`` of ``Q`` without storing them, as rows: shape (m, n).

        ``Q`` is symmetric, so column ``j`` is row ``j``; computing rows writes straight into
        the slab's layout (a transposed copy into fresh memory costs more than the product).
        """
        idx = np.asarray(idx, dtype=np.int64)
        W = self.apply_W
        # diag(weight)-weighted factor products: kernel evaluations, dense BLAS, or a sparse
        # product that only touches the blocks that meet (tasks do not meet through it) ...
        if self.source is not None:
            return self.source(idx)  # the finished rows of Q, scaled
        # (``hess_weight``, where given, has diagonal rank-one parts folded in)
        weight = getattr(W, "hess_weight", W.weight)
        if self.F_dense is not None:
            rows = (self.F_dense[idx] * self._cast("weight", weight)[None, :]) @ self.F_dense.T
        else:
            if self._FT is None:
                self._FT = sp.csr_matrix(self.F.T)  # converted once, not at every product
            FJ = self.F[idx].multiply(weight[None, :]).tocsr()
            rows = FJ @ self._FT
            rows = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
        # ... plus the rank-one curvature of every switched term, through V = [F_t u_t]_t.
        if W is not None and W.V is not None:
            if sp.issparse(W.V):
                rows += (W.V[idx].multiply(W.tau[None, :]) @ W.VT).toarray().astype(rows.dtype, copy=False)
            else:
                V = self._cast("V", W.V)
                rows += (V[idx] * self._cast("tau", W.tau)[None, :]) @ V.T
        inv_a = self._cast("inv_a", self.inv_a)
        rows *= inv_a[idx][:, None]
        rows *= inv_a[None, :]
        return rows

    def _cast(self, name, x):
        """``x`` in the dtype of the products (float32 when ``F_dense`` is), converted once
        per curvature."""
        dt = self.F_dense.dtype if self.F_dense is not None and self.source is None else np.float64
        if dt == x.dtype:
            return x
        got = self._casts.get(name)
        if got is None:
            got = self._casts[name] = x.astype(dt)
        return got

    def fill(self, idx):
        """Compute and store the columns ``idx`` (evicting the least recently used)."""
        idx = np.asarray([i for i in dict.fromkeys(int(i) for i in idx) if self.slot_of[i] < 0],
                         dtype=np.int64)
        if idx.size == 0:
            return
        idx = idx[: self.n_slots]
        rows = self.compute(idx)
        free = np.flatnonzero(self.owner < 0)
        need = idx.size
        if free.size < need:
            # evict the least recently used among the occupied slots
            occupied = np.flatnonzero(self.owner >= 0)
            order = occupied[np.argsort(self.stamp[occupied], kind="stable")]
            victims = order[: need - free.size]
            self.slot_of[self.owner[victims]] = -1
            self.owner[victims] = -1
            free = np.concatenate([free, victims])
        slots = free[:need]  # the lowest free slots: those filled stay below ``top``
        self.cache[slots, :] = rows
        self.top = max(self.top, int(slots.max()) + 1)
        self.owner[slots] = idx
        self.slot_of[idx] = slots
        self.clock[0] += 1
        self.stamp[slots] = self.clock[0]
        self.n_computed += int(need)

    def product(self, x):
        """``Q x`` for ``x`` of shape (n,): cached columns where present, the rest computed.

        Used to rebuild the gradient when shrunk coordinates come back (as LIBSVM does
        from the columns of the multipliers that moved).
        """
        nz = np.flatnonzero(x)
        n = x.size
        if nz.size == 0:
            return np.zeros(n)
        slots = self.slot_of[nz]
        hit = slots >= 0
        if hit.any():
            # the slots below the high-water mark only: those above it may hold a reused
            # slab's stale entries
            y = np.zeros(self.top)
            y[slots[hit]] = x[nz[hit]]
            out = self.cache[:self.top].T @ y
        else:
            out = np.zeros(n)
        miss = nz[~hit]
        step = max(1, (1 << 21) // max(n, 1))
        for s0 in range(0, miss.size, step):
            j = miss[s0:s0 + step]
            out += x[j] @ self.compute(j)
            self.n_computed += int(j.size)
        return out
