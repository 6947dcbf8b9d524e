"""Factor layouts and Gram storage for the Newton solver.

Two ways to hold the Newton Hessian's data so an iteration does not multiply the factors
again and again:

* :class:`FactorRows`: the factors ``[Phi0 | Phi]`` as one CSR matrix with the term of each
  column (and a dense copy where that pays), from which Hessian columns are computed in
  batches;
* :class:`GroupGrams`: for block-diagonal models (no column touches two tasks), every task's
  Gram block per term, formed once, or a few factor columns where a term has low rank on
  the task.

Both are built once per dual and kept in its :class:`~medmtl.med.dual.Workspace`, which every
copy of the dual along a (C, alpha) path shares.
"""

from __future__ import annotations

from collections import namedtuple
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..grams import KernelGram

__all__ = ["FactorRows", "GroupGrams", "Rows"]

Rows = namedtuple("Rows", "indptr indices data col_term")
"""The factors' rows as the compiled loops take them: CSR arrays and the switched term of each
column (-1: shared)."""

# Largest dense copy of the factors, and largest set of per-task Gram blocks, kept in memory.
_MAX_BYTES = 1 << 29


class FactorRows:
    """The factors ``[Phi0 | Phi]`` of a MED dual as one CSR matrix, with the term of each column.

    Built once per dual (``FactorRows.of(dual)`` keeps it in the dual's workspace, which the
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
        """The row layout of ``dual``, built on first use and kept in its workspace."""
        ws = dual.workspace
        if ws.factor_rows is None:
            ws.factor_rows = cls(dual)
        return ws.factor_rows

    @cached_property
    def dense(self):
        return _dense_copy(self.F)

    @cached_property
    def dense32(self):
        return None if self.dense is None else self.dense.astype(np.float32)

    @cached_property
    def record(self):
        """The rows as a :class:`Rows` record for the compiled loops."""
        return Rows(self.indptr, self.indices, self.data, self.col_term)

    def u(self, lam):
        """``F^T lam`` of shape (r0 + R,)."""
        return self.FT @ lam



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
    >>> from medmtl.med.builders import feature_selection_dual
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> dual = feature_selection_dual([X, X], [np.array([1, -1]), np.array([1, -1])], alpha=1.0)
    >>> gg = GroupGrams.of(dual)
    >>> gg.ok, gg.grams[0].shape
    (True, (2, 2, 2))
    """

    def __init__(self, dual, rows, max_bytes=_MAX_BYTES):
        self.ok = False
        self._grams32 = None
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
        self.lowrank = [None] * len(self.group_rows)
        self.ok = True

    @classmethod
    def of(cls, dual):
        """The blocks of ``dual``'s factors (:meth:`FactorRows.of`), built on first use and
        kept in its workspace."""
        ws = dual.workspace
        if ws.factor_grams is None:
            ws.factor_grams = cls(dual, FactorRows.of(dual))
        return ws.factor_grams

    @classmethod
    def from_operators(cls, dual, max_bytes=_MAX_BYTES):
        """The blocks straight from the dual's Gram operators (kernel evaluations on each
        task's rows), with no factor; ``ok`` is False unless every term is block diagonal
        over two or more groups and the blocks fit in ``max_bytes``. Built on first use and
        kept in the dual's workspace.

        Examples
        --------
        >>> from medmtl.kernels import RBFKernel
        >>> from medmtl.med.builders import svm_dual
        >>> X, y = np.array([[0.0], [1.0]]), np.array([1, -1])
        >>> gg = GroupGrams.from_operators(svm_dual([X, X], [y, y], RBFKernel(1.0)))
        >>> gg.ok, gg.terms[0].tolist(), round(float(gg.grams[0][0, 0, 1]), 4)
        (True, [-1], -0.3679)
        """
        ws = dual.workspace
        if ws.kernel_grams is not None:
            return ws.kernel_grams
        self = cls.__new__(cls)
        self.ok = False
        self._grams32 = None
        ws.kernel_grams = self
        if len(dual.groups) < 2:
            return self
        ops = [(-1, dual.shared_gram())] + list(enumerate(dual.term_grams()))
        ops = [(t, G) for t, G in ops if G is not None]
        for _, G in ops:
            if isinstance(G, KernelGram):
                if any(np.unique(dual.group_of[rows]).size > 1 for rows, *_ in G.blocks):
                    return self
            elif G.spans_groups(dual.group_of):
                return self
        self.group_rows = [np.asarray(g, dtype=np.int64) for g in dual.groups]
        if sum(8 * g.size**2 * len(ops) for g in self.group_rows) > max_bytes:
            return self
        self.local = np.empty(dual.n, dtype=np.int64)
        self.terms, self.grams, self.lowrank = [], [], []
        for g in self.group_rows:
            self.local[g] = np.arange(g.size)
            terms, blocks, lr_terms, lr_cols = [], [], [], []
            for t, G in ops:
                F = _low_rank_rows(G, g)
                if F is not None:
                    # a few factor columns (a per-feature kernel): keep them, not the block
                    if F.shape[1]:
                        lr_terms.append(t)
                        lr_cols.append(F)
                    continue
                B = G.gram_on(g)
                if B is not None:
                    terms.append(t)
                    blocks.append(B)
            self.grams.append(np.stack(blocks) if blocks else np.zeros((0, g.size, g.size)))
            if lr_cols:
                Fg = np.hstack(lr_cols)
                owner = np.repeat(np.arange(len(lr_cols)), [F.shape[1] for F in lr_cols])
                S = np.zeros((Fg.shape[1], len(lr_cols)))
                S[np.arange(Fg.shape[1]), owner] = 1.0
                self.lowrank.append((np.ascontiguousarray(Fg), S, owner))
            else:
                self.lowrank.append(None)
            self.terms.append(np.asarray(terms + lr_terms, dtype=np.int64))
        self.ok = True
        return self

    def dots(self, x, GX, n_terms):
        """``sum_g x_g^T GX_g`` per term: ``(shared, per_term)`` with ``per_term`` of shape (D,).

        With ``GX = times(y)`` this is ``x^T H0 y`` and every ``x^T H_t y``.
        """
        shared, per = 0.0, np.zeros(n_terms)
        for g, terms, P in zip(self.group_rows, self.terms, GX):
            v = P @ x[g]
            sw = terms >= 0
            shared += float(v[~sw].sum())
            np.add.at(per, terms[sw], v[sw])
        return shared, per

    def times_and_blocks(self, lam, term_weight, out=None):
        """``times(lam)`` and ``blocks(term_weight, out=out)``."""
        return self.times(lam), self.blocks(term_weight, out=out)

    def times(self, lam):
        """Per group, ``G_{g,t} lam_g`` for every term ``t`` present: list of (T_g, n_g)."""
        out = []
        for g, grams, lr in zip(self.group_rows, self.grams, self.lowrank):
            x = lam[g]
            # one matrix-vector product per group over its stacked blocks (BLAS gemv)
            P = (grams.reshape(-1, g.size) @ x).reshape(grams.shape[0], g.size)
            if lr is not None:
                Fg, S, _ = lr
                P = np.vstack([P, ((Fg * (Fg.T @ x)) @ S).T])
            out.append(P)
        return out

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

    def flat_size(self):
        """Entries of all groups' blocks together (the buffer :meth:`blocks` fills)."""
        return int(sum(g.size**2 for g in self.group_rows))

    def blocks(self, term_weight, single=False, out=None):
        """``sum_t w_t F_{g,t} F_{g,t}^T`` per group (weight 1 on the shared columns).

        The blocks are views into one flat buffer ``out`` of :meth:`flat_size` entries
        (row-major, group after group; new if None), which :func:`smo_solve_blocks` takes as
        it is, so a solve reuses one buffer for all its iterations.
        ``single=True`` sums single-precision copies of the Gram blocks (half the memory
        traffic of this pass, which is bandwidth-bound): enough for a Newton model, whose
        steps are checked against the exact ``J``; the products (:meth:`times`) stay exact.
        """
        sizes = [g.size**2 for g in self.group_rows]
        flat = np.empty(sum(sizes)) if out is None else out
        if single and self._grams32 is None:
            self._grams32 = [G.astype(np.float32) for G in self.grams]
        out, start = [], 0
        for gi, (terms, grams, lr, m, g) in enumerate(zip(self.terms, self.grams, self.lowrank,
                                                          sizes, self.group_rows)):
            w = np.where(terms < 0, 1.0, term_weight[np.maximum(terms, 0)] if term_weight.size else 1.0)
            T = grams.shape[0]
            block = flat[start:start + m]
            if single:
                block[:] = w[:T].astype(np.float32) @ self._grams32[gi].reshape(T, m)
            else:
                np.dot(w[:T], grams.reshape(T, m), out=block)
            B = block.reshape(g.size, g.size)
            if lr is not None:
                Fg, _, owner = lr
                B += (Fg * w[T:][owner]) @ Fg.T
            out.append(B)
            start += m
        return out


def _dense_copy(F, limit_bytes=_MAX_BYTES):
    """A dense copy of ``F`` for BLAS column products when it is dense enough to pay."""
    n, K = F.shape
    if n * K and F.nnz > 0.3 * n * K and 8 * n * K <= limit_bytes:
        return F.toarray()
    return None


def _low_rank_rows(G, rows):
    """``G``'s factor on ``rows`` (dense, its nonzero columns) if it has few columns there,
    else None; a kernel or a wide factor is kept as a Gram block instead."""
    if isinstance(G, KernelGram):
        return None
    Fr = G.F[rows]
    if sp.issparse(Fr):
        Fr = sp.csc_matrix(Fr)
        Fr.eliminate_zeros()
        cols = np.flatnonzero(np.diff(Fr.indptr))
    else:
        cols = np.flatnonzero(np.any(Fr != 0, axis=0))
    if cols.size > max(1, rows.size // 8):
        return None
    Fc = Fr[:, cols]
    return Fc.toarray() if sp.issparse(Fc) else np.asarray(Fc)

