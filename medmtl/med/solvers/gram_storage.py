"""Per-task Gram blocks for the Newton solver.

:class:`GroupGrams`: for block-diagonal models (no column touches two tasks), every task's
Gram block per term, formed once, or a few factor columns where a term has low rank on the
task, so a Newton iteration does not multiply the factors again and again. Built once per
dual and kept in the Newton method's slot of the dual's
:class:`~medmtl.med.dual.Workspace` (``workspace.slot("newton")``), which every copy of the
dual along a (C, alpha) path shares. The factors themselves, as rows, are
:class:`~medmtl.med.factor_rows.FactorRows`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..factor_rows import Rows  # noqa: F401 - see below
from ..grams import KernelGram
from ._numba import HAVE_NUMBA, njit

# ``Rows`` lived here before: numba's on-disk cache of a compiled loop names the types of
# its arguments by module, and an index written then must still unpickle (to be found stale
# and recompiled) rather than fail.

__all__ = ["GroupGrams"]

# Largest dense copy of the factors, and largest set of per-task Gram blocks, kept in memory.
_MAX_BYTES = 1 << 29
# A group's products with a vector read only the blocks' rows of its nonzeros when at most
# this fraction of its entries are nonzero (a Newton step moves a few multipliers: on the
# Landmine path 15 % of them on average).
_SPARSE_SHARE = 0.5


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
        """The blocks of ``dual``'s factors (:meth:`MEDDual.factor_rows`), built on first use and
        kept in the Newton method's slot of its workspace."""
        slot = dual.workspace.slot("newton")
        if "factor_grams" not in slot:
            slot["factor_grams"] = cls(dual, dual.factor_rows())
        return slot["factor_grams"]

    @classmethod
    def from_operators(cls, dual, max_bytes=_MAX_BYTES):
        """The blocks straight from the dual's Gram operators (kernel evaluations on each
        task's rows), with no factor; ``ok`` is False unless every term is block diagonal
        over two or more groups and the blocks fit in ``max_bytes``. Built on first use and
        kept in the Newton method's slot of the dual's workspace.

        Examples
        --------
        >>> from medmtl.kernels import RBFKernel
        >>> from medmtl.med.builders import svm_dual
        >>> X, y = np.array([[0.0], [1.0]]), np.array([1, -1])
        >>> gg = GroupGrams.from_operators(svm_dual([X, X], [y, y], RBFKernel(1.0)))
        >>> gg.ok, gg.terms[0].tolist(), round(float(gg.grams[0][0, 0, 1]), 4)
        (True, [-1], -0.3679)
        """
        slot = dual.workspace.slot("newton")
        if "kernel_grams" in slot:
            return slot["kernel_grams"]
        self = cls.__new__(cls)
        self.ok = False
        self._grams32 = None
        slot["kernel_grams"] = self
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
            full, lr_terms, lr_cols = [], [], []
            for t, G in ops:
                F = _low_rank_rows(G, g)
                if F is None:
                    full.append((t, G))
                elif F.shape[1]:
                    # a few factor columns (a per-feature kernel): keep them, not the block
                    lr_terms.append(t)
                    lr_cols.append(F)
            # each block written in place into the group's stack (no copies of the stack)
            grams = np.empty((len(full), g.size, g.size))
            kept = [k for k, (t, G) in enumerate(full) if G.gram_on(g, out=grams[k]) is not None]
            terms = [full[k][0] for k in kept]
            self.grams.append(grams if len(kept) == len(full) else grams[kept])
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

    def times_and_blocks(self, lam, term_weight, out=None, scale=None):
        """``times(lam)`` and ``blocks(term_weight, out=out, scale=scale)``."""
        return self.times(lam), self.blocks(term_weight, out=out, scale=scale)

    def times(self, lam):
        """Per group, ``G_{g,t} lam_g`` for every term ``t`` present: list of (T_g, n_g).

        Where few of ``lam_g`` are nonzero, only the blocks' rows of those are read (the
        blocks are symmetric); else one matrix-vector product over the stacked blocks."""
        out = []
        for g, grams, lr in zip(self.group_rows, self.grams, self.lowrank):
            x = lam[g]
            nz = np.flatnonzero(x)
            if HAVE_NUMBA and nz.size <= _SPARSE_SHARE * g.size:
                P = _rows_times(grams, x, nz)
            else:
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
            w = self._weights(terms, term_weight)
            out[g] = w @ P
        return out

    def flat_size(self):
        """Entries of all groups' blocks together (the buffer :meth:`blocks` fills)."""
        return int(sum(g.size**2 for g in self.group_rows))

    def blocks(self, term_weight, single=False, out=None, scale=None):
        """``S_g (sum_t w_t F_{g,t} F_{g,t}^T) S_g`` per group (weight 1 on the shared
        columns), ``S_g = diag(scale[g])`` (the identity if ``scale`` is None).

        The blocks are views into one flat buffer ``out`` of :meth:`flat_size` entries
        (row-major, group after group; new if None), which :func:`smo_solve_blocks` takes as
        it is, so a solve reuses one buffer for all its iterations.
        ``single=True`` sums single-precision copies of the Gram blocks, scaled once (half
        the memory traffic of this pass, which is bandwidth-bound, and no pass to scale):
        enough for a Newton model, whose steps are checked against the exact ``J``; the
        products (:meth:`times`) stay exact.
        """
        sizes = [g.size**2 for g in self.group_rows]
        flat = np.empty(sum(sizes)) if out is None else out
        grams32, lowrank32, stack32 = self._single_copies(scale) if single else (None, None, None)
        if stack32 is not None:
            # every group has the same terms: all blocks' full parts in one product over
            # the stacked copies (one BLAS call, threaded as BLAS sees fit)
            w = self._weights(self.terms[0], term_weight)
            flat[:] = w[:stack32.shape[0]].astype(np.float32) @ stack32
        out, start = [], 0
        for gi, (terms, grams, lr, m, g) in enumerate(zip(self.terms, self.grams, self.lowrank,
                                                          sizes, self.group_rows)):
            w = self._weights(terms, term_weight)
            T = grams.shape[0]
            block = flat[start:start + m]
            B = block.reshape(g.size, g.size)
            if single:
                if stack32 is None:
                    block[:] = w[:T].astype(np.float32) @ grams32[gi].reshape(T, m)
                if lr is not None:
                    Fs, owner = lowrank32[gi], lr[2]
                    B += (Fs * w[T:][owner]) @ Fs.T
            else:
                np.dot(w[:T], grams.reshape(T, m), out=block)
                if lr is not None:
                    Fg, _, owner = lr
                    B += (Fg * w[T:][owner]) @ Fg.T
                if scale is not None:
                    sg = scale[g]
                    B *= sg[:, None]
                    B *= sg[None, :]
            out.append(B)
            start += m
        return out

    @staticmethod
    def _weights(terms, term_weight):
        """The weight of each of a group's terms (1 for the shared columns, ``-1``)."""
        return np.where(terms < 0, 1.0, term_weight[np.maximum(terms, 0)] if term_weight.size else 1.0)

    def _single_copies(self, scale):
        """Single-precision copies of the Gram blocks and the rows ``S_g F_g`` of the
        low-rank terms, scaled by ``scale`` (kept for the last scale asked for: the dual's
        ``1 / a``, one for a whole path): ``(grams32, lowrank32, stack32)``.

        Where every group has the same terms, the copies are views into one (T, N) array
        ``stack32``, each group's blocks in the columns where :meth:`blocks` puts them in
        its flat buffer; else ``stack32`` is None."""
        kept = self._grams32
        if kept is not None and (kept[0] is None) == (scale is None) and (scale is None or np.array_equal(kept[0], scale)):
            return kept[1:]
        same = all(G.shape[0] == self.grams[0].shape[0] and np.array_equal(t, self.terms[0])
                   for t, G in zip(self.terms, self.grams))
        T = self.grams[0].shape[0] if self.grams else 0
        stack32 = np.empty((T, self.flat_size()), dtype=np.float32) if same and T else None
        grams32, lowrank32, start = [], [], 0
        for g, G, lr in zip(self.group_rows, self.grams, self.lowrank):
            m = g.size**2
            G32 = (np.empty(G.shape, dtype=np.float32) if stack32 is None
                   else stack32[:, start:start + m].reshape(G.shape))
            start += m
            if scale is None:
                G32[...] = G
                lowrank32.append(None if lr is None else lr[0])
            else:
                # one pass: each entry scaled in double precision and rounded once, written
                # straight into the single-precision copy (no double-precision temporary)
                np.multiply(G, np.outer(scale[g], scale[g])[None], out=G32, casting="same_kind")
                lowrank32.append(None if lr is None else lr[0] * scale[g][:, None])
            grams32.append(G32)
        self._grams32 = (None if scale is None else np.array(scale, dtype=float), grams32,
                         lowrank32, stack32)
        return grams32, lowrank32, stack32


@njit(cache=True, nogil=True)
def _rows_times(grams, x, nz):
    """``grams[t] @ x`` for every ``t`` from the rows ``nz`` of the symmetric blocks, the
    nonzeros of ``x``."""
    T, m = grams.shape[0], grams.shape[1]
    out = np.zeros((T, m))
    for t in range(T):
        for i in nz:
            xi = x[i]
            for j in range(m):
                out[t, j] += xi * grams[t, i, j]
    return out


def _low_rank_rows(G, rows):
    """``G``'s factor on ``rows`` (dense, its nonzero columns) if it has few columns there,
    else None; a kernel or a wide factor is kept as a Gram block instead."""
    if isinstance(G, KernelGram):
        return None
    limit = max(1, rows.size // 8)
    if not sp.issparse(G.F):
        Fr = np.asarray(G.F[rows])
        cols = np.flatnonzero(np.any(Fr != 0, axis=0))
        return None if cols.size > limit else Fr[:, cols]
    # the rows' CSR entries read as they are (a task's rows are a slice), their columns
    # renumbered
    F = sp.csr_matrix(G.F)
    contiguous = rows.size and np.array_equal(rows, np.arange(rows[0], rows[0] + rows.size))
    Fr = F[int(rows[0]):int(rows[0]) + rows.size] if contiguous else F[rows]
    nz = Fr.data != 0
    cols = np.unique(Fr.indices[nz])
    if cols.size > limit:
        return None
    out = np.zeros((rows.size, cols.size))
    row_of = np.repeat(np.arange(rows.size), np.diff(Fr.indptr))
    np.add.at(out, (row_of[nz], np.searchsorted(cols, Fr.indices[nz])), Fr.data[nz])
    return out
