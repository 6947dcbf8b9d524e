"""A projected Newton method for the MED dual (issue 7: a MED solver at SVM speed).

``J`` is smooth and concave. Algorithm 1 replaces each switched term by a quadratic bound
whose curvature ``I`` overstates the true ``s_t I + s_t (1 - s_t) u_t u_t^T`` by up to a
factor ``1 + alpha`` when a switch is off, so it needs many iterations when ``alpha`` is
large (Theorem 2). Here each iteration instead maximises the exact second-order model of
``J`` over the feasible set -- an SVM-type QP solved by SMO with second-order working-set
selection (:mod:`medmtl.med.solvers.smo`) -- and then takes the best point on the segment
towards it (an exact line search on the concave restriction of ``J``). Every iterate is
feasible and ``J`` never decreases; near the solution the steps are full Newton steps, so a
handful of iterations suffice. For the MED SVM (no switched terms, or ``alpha = 0``) ``J``
is quadratic and one iteration is the whole solve: it is then LIBSVM's algorithm.

The Newton quantities come from one of three models of the dual, chosen by its form:

* factors (linear and feature models): Hessian columns from ``[Phi0 | Phi]`` in batches
  (BLAS products) into a bounded cache, so memory is that of the factors plus the cache;
  multi-task factor models keep per-task, per-term Gram blocks (:class:`GroupGrams`);
* kernel columns (an RBF or polynomial kernel held as a
  :class:`~medmtl.med.dual.KernelGram`): columns evaluated from the kernel on demand into
  the LRU cache, as LIBSVM does -- no n x n factor or Gram matrix is ever built;
* per-task kernel blocks (multi-task kernel models): each task's Gram blocks evaluated once
  (:meth:`GroupGrams.from_operators`), and the subproblem solved on the task blocks plus the
  low-rank coupling of the shared switches by block Gauss-Seidel sweeps, never touching the
  cross-task matrix.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..bound import log_switch_term, switch_posterior
from ..dual import KernelGram
from ._common import MEDSolution
from .smo import HAVE_NUMBA, ColumnCache, diag_hessian, smo_solve, smo_solve_blocks

__all__ = ["solve_newton", "solve_auto", "FactorRows", "GroupGrams"]

COUPLING_RTOL = 1e-8
# Forcing term of the inexact Newton steps once the model is trusted: the subproblem is
# solved to 0.1 * min(gap, gap^2) (measured on the Landmine path: tighter buys nothing).
_TRUSTED_FORCING = 0.1


class FactorRows:
    """The factors ``[Phi0 | Phi]`` of a MED dual as one CSR matrix, with the term of each column.

    Built once per dual (``FactorRows.of(dual)`` caches it with the dual's derived data,
    which copies of a dual along an alpha path share), it holds the row-wise layout that the diagonal
    of the Hessian and the column products need and the transpose for ``u = F^T lam``.

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
        """The cached row layout of ``dual`` (built on first use)."""
        # kept with the dual's derived data, which its copies (an alpha path) share
        cached = dual._lazy.get("factor_rows")
        if cached is None:
            cached = dual._lazy["factor_rows"] = cls(dual)
        return cached

    def u(self, lam):
        """``F^T lam`` of shape (r0 + R,)."""
        return self.FT @ lam


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


def _line_search(alpha, c_d, forms):
    """Maximiser over ``[0, 1]`` of ``J(lam + t d)`` given the forms of :func:`_segment_forms`.

    ``J`` restricted to the segment is concave; its derivative is found in closed form per
    term, and its root by safeguarded Newton steps.
    """
    A0, B0, q, B, Cq = forms

    def derivs(t):
        qt = q + t * B + 0.5 * t * t * Cq
        st = switch_posterior(qt, alpha)
        slope = B + t * Cq
        d1 = c_d - A0 - t * B0 - float(st @ slope)
        d2 = -B0 - float(st @ Cq + (st * (1.0 - st)) @ (slope * slope))
        return d1, d2

    d1_0, _ = derivs(0.0)
    if not d1_0 > 0.0:
        return 0.0, d1_0
    d1_1, _ = derivs(1.0)
    if d1_1 >= 0.0:
        return 1.0, d1_0
    lo, hi, t = 0.0, 1.0, 1.0
    for _ in range(60):
        d1, d2 = derivs(t)
        if d1 > 0:
            lo = t
        else:
            hi = t
        if hi - lo <= 1e-15:
            break
        tn = t - d1 / d2 if d2 < 0 else 0.5 * (lo + hi)
        if not (lo < tn < hi):
            tn = 0.5 * (lo + hi)
        if abs(tn - t) <= 1e-14:
            t = tn
            break
        t = tn
    return (lo if derivs(t)[0] < 0 and lo > 0 else t), d1_0




def _group_layout(dual):
    """Group members concatenated (``gidx``) with offsets (``gptr``)."""
    gidx = np.concatenate(dual.groups).astype(np.int64) if dual.groups else np.zeros(0, np.int64)
    gptr = np.concatenate(([0], np.cumsum([g.size for g in dual.groups]))).astype(np.int64)
    return gptr, gidx


def _scaled_box(dual):
    """Box of ``beta = a * lam``."""
    lo_b = np.where(dual.a > 0, dual.a * dual.lo, dual.a * dual.hi)
    hi_b = np.where(dual.a > 0, dual.a * dual.hi, dual.a * dual.lo)
    return lo_b, hi_b


def _max_gap(grad_b, beta, blo, bhi, dual):
    """Largest per-group violation ``max_up grad - min_low grad`` in ``beta`` space.

    Zero exactly at a KKT point; ``gap / 2`` bounds every coordinate's violation of
    ``grad_i = b_g a_i`` (free) or its sign condition (at a bound), scaled by ``1 / |a_i|``.
    """
    up = beta < bhi
    low = beta > blo
    worst = 0.0
    for g in dual.groups:
        gu, gl = grad_b[g][up[g]], grad_b[g][low[g]]
        if gu.size and gl.size:
            worst = max(worst, float(gu.max() - gl.min()))
    return worst


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
        self.V = None
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
                F_dense = getattr(rows, "_dense", None)
                if F_dense is not None:
                    # dense F: one BLAS-backed product instead of a sparse-sparse one
                    V = np.asarray(self.Ut.T @ F_dense.T).T
                else:
                    V = rows.F @ self.Ut
                    V = V.toarray() if sp.issparse(V) else V
            self.V = np.ascontiguousarray(V)

    def __call__(self, Z):
        """``W Z`` for dense ``Z`` of shape (K, m)."""
        out = self.hess_weight[:, None] * Z
        if self.Ut is not None:
            out += self.Ut @ (self.tau[:, None] * (self.Ut.T @ Z))
        return out


def _model_gain(g0, d, s, tau, forms):
    """Gain ``g0^T d - 1/2 d^T H d`` the Newton model predicts for the step ``d``."""
    _, B0, _, B, Cq = forms
    dHd = B0 + float(s @ Cq) + float(tau @ (B * B))
    return float(g0 @ d) - 0.5 * dHd


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
    >>> from medmtl.med.dual import feature_selection_dual
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> dual = feature_selection_dual([X, X], [np.array([1, -1]), np.array([1, -1])], alpha=1.0)
    >>> gg = GroupGrams(dual, FactorRows(dual))
    >>> gg.ok, gg.grams[0].shape
    (True, (2, 2, 2))
    """

    def __init__(self, dual, rows, max_bytes=1 << 29):
        self.ok = False
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
    def of(cls, dual, rows):
        cached = getattr(rows, "_group_grams", None)
        if cached is None:
            cached = rows._group_grams = cls(dual, rows)
        return cached

    @classmethod
    def from_operators(cls, dual, max_bytes=1 << 29):
        """The blocks straight from the dual's Gram operators (kernel evaluations on each
        task's rows), with no factor; ``ok`` is False unless every term is block diagonal
        over two or more groups and the blocks fit in ``max_bytes``. Cached on the dual.

        Examples
        --------
        >>> from medmtl.kernels import RBFKernel
        >>> from medmtl.med.dual import svm_dual
        >>> X, y = np.array([[0.0], [1.0]]), np.array([1, -1])
        >>> gg = GroupGrams.from_operators(svm_dual([X, X], [y, y], RBFKernel(1.0)))
        >>> gg.ok, gg.terms[0].tolist(), round(float(gg.grams[0][0, 0, 1]), 4)
        (True, [-1], -0.3679)
        """
        cached = dual._lazy.get("group_grams_op")
        if cached is not None:
            return cached
        self = cls.__new__(cls)
        self.ok = False
        dual._lazy["group_grams_op"] = self
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
        if single and getattr(self, "_grams32", None) is None:
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


def _dense_copy(F, limit_bytes=1 << 29):
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


class _FactorModel:
    """Newton's quantities in factor space, ``u = F^T lam`` (linear and feature models, and
    kernels factored once into per-task Gram blocks, see :class:`GroupGrams`)."""

    def __init__(self, dual, lam, opts):
        self.dual = dual
        self.rows = rows = FactorRows.of(dual)
        self.inv_a = 1.0 / dual.a
        F_dense = getattr(rows, "_dense", False)
        if F_dense is False:
            F_dense = rows._dense = _dense_copy(rows.F)
        # A quadratic J is solved by one exact subproblem; otherwise the subproblem is a
        # Newton model checked against the exact J and gradient, and single-precision
        # columns (half the memory traffic and product time) are enough.
        single = not (dual.n_terms == 0 or dual.alpha == 0) and F_dense is not None
        if single:
            F32 = getattr(rows, "_dense32", None)
            if F32 is None:
                F32 = rows._dense32 = F_dense.astype(np.float32)
            F_dense = F32
        self.cache = ColumnCache(rows.F, F_dense, self.inv_a, None, int(float(opts["cache_size"]) * 2**20),
                                 dtype=np.float32 if single else np.float64)
        self.grams = GroupGrams.of(dual, rows) if opts["group_grams"] else None
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
            GL, self.Qb = self.grams.times_and_blocks(lam, s, out=self._flat)
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
            return _solve_on_blocks(dual, self.grams, self.Qb, self._flat, W.V, tau, inv_a, grad_b,
                                    beta, blo, bhi, inner_eps, max_steps, self.shrinking)
        diag_hessian(rows.indptr, rows.indices, rows.data, rows.col_term, self.s, tau, self.u, diagH)
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


class _KernelModel:
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
        lazy = dual._lazy
        if "gram_diags" not in lazy:
            lazy["gram_diags"] = (np.zeros(n) if self.H0 is None else self.H0.diag(),
                                  np.column_stack([G.diag() for G in self.Hs]) if D else np.zeros((n, 0)))
        self.diag0, self.diagT = lazy["gram_diags"]
        self.inv_a = 1.0 / dual.a
        self.cache = ColumnCache(None, None, self.inv_a, None, int(float(opts["cache_size"]) * 2**20))
        self.shrinking = bool(opts["shrinking"])
        self.lam = lam
        self._products(lam)
        self.J = self._objective(lam, self.V0, self.V)

    precision = "double"

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

    def _rows(self, idx):
        """Rows ``idx`` of the scaled model Hessian ``D (H0 + sum_t s_t H_t + V diag(tau)
        V^T) D`` (rows = columns), by kernel evaluations."""
        idx = np.asarray(idx, dtype=np.int64)
        inv_a = self.inv_a
        out = None
        if self.H0 is not None:
            out = self.H0.rows(idx, out, 1.0, inv_a)
        for sd, G in zip(self.s, self.Hs):
            if sd > 0:
                out = G.rows(idx, out, sd, inv_a)
        if out is None:
            out = np.zeros((idx.size, self.dual.n))
        if self.W.V is not None:
            Vs = self.W.V * inv_a[:, None]
            out += (Vs[idx] * self.W.tau[None, :]) @ Vs.T
        return out

    def subproblem(self, grad_b, beta, blo, bhi, inner_eps, max_steps):
        inv_a, tau = self.inv_a, self.tau
        diagH = self.diag0 + self.diagT @ self.s
        if self.W.V is not None:
            diagH = diagH + (self.V * self.V) @ tau
        self.cache.reset(self.W, source=self._rows)
        beta0, grad0 = beta.copy(), grad_b.copy()

        def rebuild(beta_now):
            return grad0 - self.cache.product(beta_now - beta0)

        _, steps, gap = smo_solve(self.cache, diagH * inv_a**2, grad_b, beta, blo, bhi,
                                  self.dual.group_of, len(self.dual.groups), inner_eps, max_steps,
                                  rebuild, shrinking=self.shrinking, free_set=False)
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
        # the exact J (as dual.objective computes it) and the gradient for the intercepts
        J = self.dual.objective(self.lam)
        if self._grad is not None:
            return J, self._grad, None
        if self.V is None:
            self._products(self.lam)
        s = switch_posterior(0.5 * (self.lam @ self.V), self.dual.alpha) if self.Hs else np.zeros(0)
        return J, self.dual.c - self.V0 - self.V @ s, s


class _BlockModel:
    """Newton's quantities from per-task Gram blocks built by kernel evaluation
    (:meth:`GroupGrams.from_operators`): multi-task kernel models with no factor at all.

    ``GL = [G_{g,t} lam_g]`` is kept up to date from the products with the step, so an
    iteration passes over the blocks twice: to weight them and to multiply the step.
    """

    def __init__(self, dual, lam, grams, opts):
        self.dual, self.grams = dual, grams
        self.inv_a = 1.0 / dual.a
        self.shrinking = bool(opts["shrinking"])
        self.columns_computed = 0  # the blocks are formed whole; no columns are cached
        self._flat = None  # this solve's buffer for the weighted blocks
        quadratic = dual.n_terms == 0 or dual.alpha == 0
        # a quadratic J is solved by one subproblem, which must then be exact
        self.precision = "double" if quadratic else "single"
        self.lam = lam
        self._refresh(lam)
        self.J = self._objective(lam, self.qs, self.q)

    def _refresh(self, lam):
        # a warm start from the previous solve's answer (an alpha path) reuses its products
        last = self.dual._lazy.get("block_products")
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
        if self._flat is None:
            self._flat = np.empty(grams.flat_size())
        self.Qb = grams.blocks(s, single=self.precision == "single", out=self._flat)
        self.V = grams.switched_columns(self.GL, dual.n_terms) if np.any(tau > 0) else None
        g0 = dual.c - grams.weighted(self.GL, s)
        self.s, self.tau = s, tau
        return s, tau, g0

    def subproblem(self, grad_b, beta, blo, bhi, inner_eps, max_steps):
        return _solve_on_blocks(self.dual, self.grams, self.Qb, self._flat, self.V, self.tau, self.inv_a,
                                grad_b, beta, blo, bhi, inner_eps, max_steps, self.shrinking)

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
        dual._lazy["block_products"] = (self.lam.copy(), [P.copy() for P in self.GL])
        return self._objective(self.lam, qs, q), dual.c - self.grams.weighted(self.GL, s), s


def _solve_on_blocks(dual, grams, Qb, flat, V, tau, inv_a, grad_b, beta, blo, bhi, inner_eps,
                     max_steps, shrinking):
    """The Newton subproblem of a block-diagonal model: task blocks ``Qb`` (views into the
    flat buffer ``flat``) plus the rank-T coupling ``V diag(tau) V^T`` of the shared switches
    (:func:`smo_solve_blocks`)."""
    diagH = np.empty(dual.n)
    for g, B in zip(grams.group_rows, Qb):
        diagH[g] = np.diagonal(B)
    if V is not None:
        diagH += (V * V) @ tau
    Vs, tau_k = None, np.zeros(0)
    if V is not None:
        # Only switches in transition couple the tasks noticeably; a term whose rank-one
        # curvature is negligible next to the task blocks is left out of the subproblem
        # (the line search and the KKT test still use the exact J).
        Vs = V * inv_a[:, None]
        weight_t = tau * np.max(Vs * Vs, axis=0, initial=0.0)
        keep = weight_t > COUPLING_RTOL * max(float(np.max(diagH * inv_a**2)), 1e-300)
        Vs, tau_k = np.ascontiguousarray(Vs[:, keep]), tau[keep]
    _, steps, gap = smo_solve_blocks(flat, grams.group_rows, grams.local, Vs, tau_k, grad_b, beta,
                                     blo, bhi, diagH * inv_a**2, dual.group_of, inner_eps,
                                     max_steps, shrinking=shrinking, scale=inv_a)
    return steps, gap


class _RankOneCurvature:
    """The rank-one parts ``sum_t tau_t V_t V_t^T`` of the Newton Hessian, for the column cache."""

    def __init__(self, V, tau):
        self.V = None if V is None else np.ascontiguousarray(V)
        self.tau = tau


def solve_newton(dual, solver=None, warm_start=None, max_iter=50, tol=1e-12, solver_options=None,
                 kkt_tol=1e-6, cache_size=256.0, max_steps=None, multipliers=None):
    """Maximise a MED dual by Newton steps whose subproblem is solved by SMO.

    Parameters
    ----------
    dual : MEDDual
    solver : None
        Unused (the subproblem solver is built in); accepted for the common signature.
    warm_start : ndarray of shape (n,), optional
        Starting multipliers (projected onto the feasible set first).
    max_iter : int, default=50
        Maximum number of Newton iterations.
    tol : float, default=1e-12
        Also stop when an iteration with the final subproblem tolerance raises ``J`` by
        less than ``tol * |J|``.
    solver_options : dict, optional
        Overrides of ``kkt_tol``, ``cache_size``, ``max_steps``, and ``shrinking`` (bool,
        default True) and ``group_grams`` (bool, default True: per-task Gram blocks for
        block-diagonal models, see :class:`GroupGrams`).
    kkt_tol : float, default=1e-6
        Stop when every task's largest violating pair has
        ``max_up grad_i / a_i - min_low grad_j / a_j <= kkt_tol * max|c|`` (LIBSVM's
        stopping rule; ``grad = nabla J``).
    cache_size : float, default=256
        Megabytes for cached columns of the subproblem's Hessian.
    max_steps : int, optional
        SMO pair steps allowed per subproblem (default ``max(10**7, 100 n)``).
    multipliers : ignored
        Accepted for symmetry with warm starts of other solvers.

    Returns
    -------
    MEDSolution
        ``info`` holds ``smo_steps`` (pair steps per iteration), ``columns`` (Hessian
        columns computed), ``kkt_gap`` (the final violation), ``time`` and ``model``
        (``"FactorModel"``, ``"KernelModel"``: kernel columns on demand, or
        ``"BlockModel"``: per-task kernel blocks) and ``precision`` (``"single"`` when the
        Newton model's Hessian is summed or cached in single precision: non-quadratic ``J``,
        whose steps are checked against the exact ``J`` and gradient).

    Examples
    --------
    >>> from medmtl.med.dual import feature_selection_dual
    >>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
    >>> dual = feature_selection_dual([X], [np.array([1, 1, -1, -1])], C=1.0, alpha=1.0)
    >>> sol = solve_newton(dual)
    >>> sol.status, bool(np.all(np.diff(sol.objective_path) >= 0))
    ('converged', True)
    >>> from medmtl.med.solvers import solve
    >>> ref = solve(dual, method="direct").objective
    >>> bool(abs(sol.objective - ref) <= 1e-6 * ref)
    True
    """
    del multipliers
    opts = dict(kkt_tol=kkt_tol, cache_size=cache_size, max_steps=max_steps, shrinking=True,
                group_grams=True)
    if solver_options:
        unknown = set(solver_options) - set(opts)
        if unknown:
            raise ValueError(f"unknown options for method 'newton': {sorted(unknown)}; "
                             f"known: {sorted(opts)}")
        opts.update(solver_options)
    if solver not in (None, "", "SMO", "smo"):
        raise ValueError(f"method 'newton' has one built-in subproblem solver ('SMO'); "
                         f"got solver={solver!r}")
    max_iter = int(max_iter)
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    if not float(opts["kkt_tol"]) > 0:
        raise ValueError(f"kkt_tol must be > 0, got {opts['kkt_tol']}")
    if not float(opts["cache_size"]) > 0:
        raise ValueError(f"cache_size must be > 0 (megabytes), got {opts['cache_size']}")
    t_start = time.perf_counter()
    n = dual.n
    scale = max(float(np.max(np.abs(dual.c), initial=0.0)), 1e-12)
    eps_final = float(opts["kkt_tol"]) * scale
    max_steps = int(opts["max_steps"]) if opts["max_steps"] is not None else max(10**7, 100 * n)

    if warm_start is None:
        lam = np.zeros(n)
    else:
        lam = np.asarray(warm_start, dtype=float).ravel()
        if lam.size != n:
            raise ValueError(f"warm_start has {lam.size} entries; the dual has {n}")
        if not np.all(np.isfinite(lam)):
            raise ValueError("warm_start has NaN or infinite values")
        lam = dual.project(lam)
    inv_a = 1.0 / dual.a
    blo, bhi = _scaled_box(dual)
    quadratic = dual.n_terms == 0 or dual.alpha == 0
    if not dual.has_kernels:
        model = _FactorModel(dual, lam, opts)
    else:
        grams = GroupGrams.from_operators(dual) if opts["group_grams"] else None
        if grams is not None and grams.ok:
            model = _BlockModel(dual, lam, grams, opts)
        else:
            model = _KernelModel(dual, lam, opts)

    J = model.J
    path = [J]
    steps_per_iter = []
    status = "max_iter"
    gap = np.inf
    n_iter = 0
    # a warm start is usually close enough for the model to be trusted from the start
    trusted = warm_start is not None
    for it in range(max_iter):
        s, tau, g0 = model.linearize()
        beta = dual.a * lam
        grad_b = g0 * inv_a
        gap = _max_gap(grad_b, beta, blo, bhi, dual)
        if gap <= eps_final:
            status = "converged"
            break
        n_iter = it + 1
        # Inexact Newton: loose subproblems while the model is poor, the final tolerance as
        # soon as a full step gains what the model predicted.
        if quadratic:
            inner_eps = eps_final
        elif trusted:
            inner_eps = max(eps_final, _TRUSTED_FORCING * min(gap, gap * gap))
        else:
            inner_eps = max(eps_final, min(0.1 * gap, gap ** 1.5))
        steps, inner_gap = model.subproblem(grad_b, beta, blo, bhi, inner_eps, max_steps)
        steps_per_iter.append(steps)
        x = np.clip(beta * inv_a, dual.lo, dual.hi)
        d = x - lam
        if not np.any(d):
            # the subproblem could not move although the KKT gap is above tolerance
            # (rounding at the scale of the multipliers): stop and say so
            path.append(J)
            status = "stalled"
            break
        if quadratic:
            t, forms = 1.0, None
        else:
            forms = model.forms(d)
            t, _ = _line_search(dual.alpha, float(dual.c @ d), forms)
        gain = 0.0
        if t > 0:
            lam_new = x if t == 1.0 else np.clip(lam + t * d, dual.lo, dual.hi)
            J_new = model.trial(lam_new, t, grad_b * dual.a if quadratic else None)
            if J_new >= J:
                gain = J_new - J
                if t == 1.0 and not quadratic:
                    predicted = _model_gain(g0, d, s, tau, forms)
                    trusted = abs(gain - predicted) <= 0.01 * abs(predicted)
                model.accept(lam_new, J_new, t)
                lam, J = lam_new, J_new
        path.append(J)
        if quadratic and inner_gap <= eps_final:
            gap = inner_gap
            status = "converged"
            break
        if gain <= tol * abs(J) and inner_eps <= eps_final:
            status = "converged"
            break
    J, grad, s_final = model.finish()
    path[-1] = J
    if status == "max_iter":
        warnings.warn(f"MED Newton solver stopped after max_iter={max_iter} iterations "
                      f"(KKT gap {gap:.3g} > {eps_final:.3g})", ConvergenceWarning)
    elif status == "stalled":
        warnings.warn(f"MED Newton solver stalled at KKT gap {gap:.3g} > {eps_final:.3g} "
                      f"(the subproblem made no progress)", ConvergenceWarning)
    return MEDSolution(
        lam=lam,
        intercepts=dual.intercepts(lam, grad),
        objective=float(J),
        objective_path=np.asarray(path),
        n_iter=n_iter,
        status=status,
        switch_posterior=dual.switch_posterior(lam) if s_final is None else s_final,
        method="newton",
        solver="SMO",
        info={"smo_steps": steps_per_iter, "columns": model.columns_computed, "kkt_gap": gap,
              "time": time.perf_counter() - t_start, "numba": HAVE_NUMBA,
              "model": type(model).__name__.strip("_"),
              "precision": model.precision},
    )


def _auto_prefers_direct(dual):
    """Narrow quadratic duals (a linear SVM on a few features, ``alpha = 0``) with many
    examples are solved fastest by the interior-point QP of the direct method: its cost
    grows like ``n K^2`` while SMO's step count grows with ``n``."""
    if not (dual.n_terms == 0 or dual.alpha == 0) or dual.has_kernels:
        # kernel columns on demand beat any factor-based solve (no n x n factor)
        return False
    width = (0 if dual.Phi0 is None else dual.Phi0.shape[1]) + (0 if dual.Phi is None else dual.Phi.shape[1])
    return width <= _AUTO_DIRECT_MAX_WIDTH and dual.n >= _AUTO_DIRECT_MIN_N


_AUTO_DIRECT_MAX_WIDTH = 64
_AUTO_DIRECT_MIN_N = 2000


def solve_auto(dual, solver=None, warm_start=None, max_iter=None, tol=None, solver_options=None,
               **kwargs):
    """``method="auto"``: the fastest correct solver for ``dual`` (issue 7's measurements).

    Narrow quadratic problems with many examples (linear SVM on at most 64 features, or
    ``alpha = 0``, with ``n >= 2000``) go to the direct CVXPY + Clarabel QP, falling back
    to Newton if Clarabel fails; everything else, kernel duals included (kernel columns on
    demand), goes to :func:`solve_newton`, the fastest
    of the three methods on every other case of ``benchmarks/bench_med.py``. ``solver``,
    ``max_iter``, ``tol`` and ``solver_options`` are passed on only to the Newton solver (they
    name another method's settings, so an estimator's ``solver=`` does not break ``"auto"``).

    Returns
    -------
    MEDSolution
        Its ``method`` says which solver ran.
    """
    del solver
    if _auto_prefers_direct(dual) and not kwargs and not solver_options:
        from .direct import solve_direct

        try:
            return solve_direct(dual, solver="CLARABEL", warm_start=warm_start)
        except (RuntimeError, ValueError):
            pass
    kw = dict(kwargs)
    if max_iter is not None:
        kw["max_iter"] = max_iter
    if tol is not None:
        kw["tol"] = tol
    return solve_newton(dual, solver=None, warm_start=warm_start, solver_options=solver_options, **kw)
