"""Newton steps on the face of the free multipliers, by conjugate gradients in feature space.

Coordinate steps crawl once the multipliers strictly inside their box (the free set) have
settled on an ill-conditioned face: each step solves a 1 x 1 restriction, so a free set of
m multipliers with condition number k needs of the order of k passes. Once the free set
stays the same from one pass to the next, the coordinate method
(:mod:`medmtl.med.solvers.coordinate`) takes a step of an active-set method instead: on the
face where the free multipliers move and the others stay, with each task's equality kept,
it maximises the second-order model of ``J``

    g_F^T d - 1/2 d^T F_F W F_F^T d     s.t.  a_g^T d_g = 0,  lo <= lam_F + d <= hi,

by conjugate gradients on the face with the box left out, then follows the projected path
``P(lam_F + t d)`` (box and equalities, the other multipliers held) back from ``t = 1`` until
``J`` rises enough (Armijo): the multipliers the path brings to a bound leave the face in the
same step, so one step moves many of them (text: thousands of free multipliers, most of which
a step would take past a bound). When no point of that path down to where ``d`` meets the box
is taken (stiff or degenerate faces: raw or dominant features, more free multipliers than
features), the step is an active-set one instead: CG truncated at the box (Steihaug's rule),
the multipliers it brings to a bound leaving the face and CG going on on the smaller face, for
a few rounds, the rounds' steps together cut by the exact line search on ``J``
(:func:`medmtl.med.solvers.kkt.line_search`). ``F_F`` are the free rows of the factors and
``W`` the curvature of ``J`` in feature space (1 on shared columns, ``s_t`` on term ``t``'s
plus ``tau_t u_t u_t^T``, ``tau_t = s_t (1 - s_t)``), so every CG iteration is two sparse
products with ``F_F``: no Gram matrix, column or block is formed, and each point of the path
costs one more.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._numba import HAVE_NUMBA, njit
from .kkt import line_search

__all__ = ["face_step"]

# CG on the face stops when the projected residual falls below this fraction of the
# projected gradient, or below the gradient's norm times it once that norm is smaller (an
# inexact Newton method whose steps converge quadratically near the answer).
# 0.3 against 0.1 (the coordinate method, 3 fits each): 20 Newsgroups 21 -> 15 passes and 325
# -> 58 CG iterations, 0.094-0.124 s -> 0.054-0.071 s; spam 2.45 -> 1.77 s; sentiment 0.93 ->
# 0.80 s; sparse 20,000 x 100,000 11 -> 13 passes, 1.11-1.21 s -> 1.24-1.54 s; sparse 2,000 and
# 5,000 x 20,000 within the noise. The norm itself against its square root, with a face step
# after every settled pass (fits alternating in one process): spam 1.30 -> 1.02 s, sparse
# 5,000 x 20,000 0.121 -> 0.111 s, 2,000 x 20,000 0.049 -> 0.046 s; 20 Newsgroups, sentiment
# and dense features within the noise.
_FORCING = 0.3
_MAX_CG = 250
# The projected path is halved at most this many times; a point on it is taken when it
# raises J by this fraction of the gradient's first-order gain.
_HALVINGS = 3
_ARMIJO = 1e-4
# Rounds of truncated CG on ever smaller faces in one active-set step.
_MAX_ROUNDS = 8
# The face's products go through the factors whole (:class:`_RowsOf`) when the free rows hold
# at least this share of their entries and touch this share of their columns: copying the
# rows out costs about eight products on them (sparse text, 5,000 x 20,000, 95 % of the rows
# free), a product on the whole factors only the other rows' entries more, and each local
# vector the untouched columns (spam's 15 tasks: 2.3 million columns, a task's rows touch
# one fifteenth of them).
_IN_PLACE_SHARE = 2 / 3


def face_step(dual, rows, lam, u, q, s, free):
    """One Newton step on the face of ``free`` (indices of free multipliers): along the
    projected path of the model's Newton direction, or else an active-set step (see the
    module notes).

    ``lam`` and ``u`` are updated in place; ``q`` and ``s`` are the terms' current
    ``||u_t||^2 / 2`` and switch posteriors. The multipliers must meet the equalities (the
    step keeps them).

    Returns
    -------
    t : float
        The fraction of the step's direction taken (0: no step).
    cg_iterations : int
    bias : ndarray of shape (n_groups,)
        The equality multipliers of the model at its maximiser on the (last) face,
        ``a_g^T (g - H d)_g / ||a_g||^2`` (the tasks' biases), when the step took that
        maximiser inside the box; NaN otherwise and for a task without free multipliers.
    """
    face = _Face(dual, rows, lam, u, s, free)
    if face.touched == 0:
        return 0.0, 0, face.bias
    t, its, delta = 0.0, 0, None
    if face.free.size <= face.touched:
        # else the face is degenerate (more free multipliers than columns): its Newton
        # direction is mostly along the flat directions, where the path gains nothing
        t, its, delta, v = _projected(face, lam, q, s)
    if t == 0.0:
        t, more, delta, v = _rounds(face, q)
        its += more
    if t > 0:
        lam[free] = np.clip(lam[free] + delta, dual.lo[free], dual.hi[free])
        u[face.cols] += v
    return t, its, face.bias


class _Face:
    """The second-order model of ``J`` on the face of ``free``: its gradient ``g``, the
    Hessian product, the projection onto the equalities (on the multipliers ``on``) and the
    local columns and terms (``touched`` of them hold an entry of a free row)."""

    def __init__(self, dual, rows, lam, u, s, free):
        self.dual, self.free = dual, free
        self.n_groups = len(dual.groups)
        self.bias = np.full(self.n_groups, np.nan)
        self.FF, self.cols, self.touched = _free_rows(rows, free)
        if self.touched == 0:
            return
        self.FT = self.FF.T
        self.ul = u[self.cols]
        self.ct = ct = rows.col_term[self.cols]
        self.sw = sw = ct >= 0
        tau = s * (1.0 - s) if dual.alpha > 0 else np.zeros_like(s)
        grad_w = np.ones(self.cols.size)
        grad_w[sw] = s[ct[sw]]
        self.curv = _Curvature(ct, sw, self.ul, grad_w, tau)
        self.g = dual.c[free] - self.FF @ (grad_w * self.ul)
        self.a, self.grp = dual.a[free], dual.group_of[free]
        self.lo, self.hi = dual.lo[free] - lam[free], dual.hi[free] - lam[free]

    def hess(self, x):
        return self.FF @ self.curv(self.FT @ x)

    def hess_from(self, v):
        """``H x`` from ``v = F_F^T x``."""
        return self.FF @ self.curv(v)

    def projector(self, on):
        """``x -> `` its projection onto the equalities' null space on the multipliers
        ``on`` (zero on the others), and the squared norms ``||a_g||^2`` on them."""
        a_on = np.where(on, self.a, 0.0)
        norm_a = np.bincount(self.grp, a_on * a_on, minlength=self.n_groups)
        inv_norm = np.divide(1.0, norm_a, out=np.zeros_like(norm_a), where=norm_a > 0)

        def project(x):
            x = np.where(on, x, 0.0)
            nu = np.bincount(self.grp, a_on * x, minlength=self.n_groups) * inv_norm
            return x - a_on * nu[self.grp]

        return project, norm_a

    def set_bias(self, r, on, norm_a):
        """The equality multipliers of the model whose residual ``g - H d`` is ``r``."""
        has = norm_a > 0
        self.bias[has] = np.bincount(self.grp, np.where(on, self.a, 0.0) * r,
                                     minlength=self.n_groups)[has] / norm_a[has]


def _projected(face, lam, q, s):
    """The step along the projected path of the model's Newton direction on the whole face
    (:class:`_Path`): ``(t, iterations, delta, F_F^T delta)``, ``t = 0`` when no point is
    taken."""
    project, _ = face.projector(np.ones(face.free.size, dtype=bool))
    width = face.hi - face.lo
    d, its, _, inside = _cg(face.hess, face.g, project, -width, width, truncate=False)
    if not np.any(d):
        return 0.0, its, None, None
    path = _Path(face.dual, lam, face.free, face.FT, (face.ul, face.ct, face.sw, q, s))
    t, delta, v = path.search(d, face.g)
    if inside and t == 1.0:
        # the model's maximiser, projected: its equality multipliers on the multipliers
        # the projection left inside the box
        inner = (delta > face.lo) & (delta < face.hi)
        face.set_bias(face.g - face.hess_from(v), inner, face.projector(inner)[1])
    return t, its, delta, v


def _rounds(face, q):
    """The active-set step: CG truncated at the box, for at most ``_MAX_ROUNDS`` rounds on
    ever smaller faces, then the exact line search on ``J`` along the rounds' step:
    ``(t, iterations, t * d, F_F^T (t * d))``."""
    d = np.zeros(face.free.size)
    on = np.ones(face.free.size, dtype=bool)
    g, its = face.g, 0
    for _ in range(_MAX_ROUNDS):
        project, norm_a = face.projector(on)
        step, k, g, inside = _cg(face.hess, g, project, face.lo - d, face.hi - d, truncate=True)
        its += k
        if not np.any(step):
            break
        d += step
        if inside:
            face.set_bias(g, on, norm_a)
            break
        on &= (d > face.lo) & (d < face.hi)  # the multipliers the step brought to a bound
        if np.count_nonzero(on) < 2:
            break
    if not np.any(d):
        return 0.0, its, None, None
    t, dual = 1.0, face.dual
    v = face.FT @ d
    if dual.n_terms and dual.alpha > 0:
        t = line_search(dual.alpha, float(dual.c[face.free] @ d),
                        _forms(dual.n_terms, q, face.ul, v, face.ct, face.sw))
    return (t, its, t * d, t * v) if t > 0 else (0.0, its, None, None)


def _free_rows(rows, free):
    """The rows ``free`` of the factors on the columns they touch: ``(F_F, cols, touched)``
    with ``touched`` the number of columns where a free row holds an entry. ``F_F`` is dense
    where the factors are kept dense (BLAS products); CSR with the columns renumbered when
    the free rows are a small part of the factors or touch a small part of their columns;
    else :class:`_RowsOf`, products through the factors whole, on all of their columns."""
    if rows.dense is not None:
        return rows.dense[free], np.arange(rows.dense.shape[1]), rows.dense.shape[1]
    F = rows.F
    share = _IN_PLACE_SHARE
    if rows.n_held >= share * F.shape[1] and np.diff(rows.indptr)[free].sum() >= share * F.nnz:
        others = np.ones(F.shape[0], dtype=bool)
        others[free] = False
        # a column is touched unless the other rows hold all of its entries
        held_by_others = np.bincount(F[others].indices, minlength=F.shape[1])
        touched = int(np.count_nonzero(rows.col_counts - held_by_others))
        if touched >= share * F.shape[1]:
            return _RowsOf(F, free), np.arange(F.shape[1]), touched
    FF = F[free]
    seen = np.zeros(FF.shape[1], dtype=bool)
    seen[FF.indices] = True
    cols = np.flatnonzero(seen)
    # each entry's place among ``cols``: written at those columns only (no running count
    # over all of the factors' columns, millions for many tasks)
    where = np.empty(FF.shape[1], dtype=np.int64)
    where[cols] = np.arange(cols.size)
    local = where[FF.indices]
    return sp.csr_matrix((FF.data, local, FF.indptr), shape=(free.size, cols.size)), cols, cols.size


class _RowsOf:
    """The rows ``free`` of ``F`` as a product, without copying them: ``F_F v = (F v)[free]``,
    and through :attr:`T` ``F_F^T x = F^T x'``, ``x'`` being ``x`` at ``free`` and 0 at the
    other rows."""

    def __init__(self, F, free, transposed=False):
        self.F, self.free, self.transposed = F, free, transposed

    @property
    def T(self):
        return _RowsOf(self.F, self.free, not self.transposed)

    def __matmul__(self, x):
        if self.transposed:
            padded = np.zeros(self.F.shape[0])
            padded[self.free] = x
            return self.F.T @ padded
        return (self.F @ x)[self.free]


class _Curvature:
    """``W x`` for the local columns: ``weight * x`` plus ``tau_t u_t (u_t^T x_t)`` per term."""

    def __init__(self, ct, sw, u, weight, tau):
        self.weight = weight
        self.any_tau = bool(np.any(tau > 0))
        if self.any_tau:
            # the terms present, numbered locally; the switched columns by index (every
            # column for feature selection: then by a slice)
            terms, self.local = np.unique(ct[sw], return_inverse=True)
            self.sw = np.flatnonzero(sw)
            if self.sw.size == sw.size:
                self.sw = slice(None)
            self.u_sw = u[self.sw]
            self.tau_u = tau[terms][self.local] * self.u_sw
            # one column per term (feature selection): u_t^T x_t is a product, no sum
            self.one_column = terms.size == self.local.size
            self.sw_idx = np.arange(sw.size)[self.sw]
            self._acc = np.empty(terms.size)

    def __call__(self, x):
        if self.any_tau and HAVE_NUMBA:
            # the same sums in the same order, in two passes over the columns instead of a
            # numpy temporary per operation (this product is most of a face step's CG)
            return _curvature_times(x, self.weight, self.sw_idx, self.local, self.u_sw,
                                    self.tau_u, self._acc)
        out = self.weight * x
        if self.any_tau:
            ux = self.u_sw * x[self.sw]
            if self.one_column:
                out[self.sw] += self.tau_u * ux
            else:
                out[self.sw] += self.tau_u * np.bincount(self.local, ux)[self.local]
        return out


@njit(cache=True)
def _curvature_times(x, weight, sw_idx, local, u_sw, tau_u, acc):
    """``weight * x`` plus, on the switched columns ``sw_idx``, ``tau_u * (u^T x)`` of each
    one's term (``local``); ``acc`` is workspace of one entry per term."""
    acc[:] = 0.0
    for k in range(sw_idx.size):
        acc[local[k]] += u_sw[k] * x[sw_idx[k]]
    out = weight * x
    for k in range(sw_idx.size):
        j = sw_idx[k]
        out[j] += tau_u[k] * acc[local[k]]
    return out


class _Path:
    """``J`` along the projected path ``P(lam_F + t d)`` of a face step: the free multipliers
    ``free`` moved, clipped to the box and projected back onto the equalities
    (:meth:`MEDDual.project` with the others held), the rise of ``J`` from the local ``u``
    and the terms' ``q`` and posteriors ``s`` (``terms = (u, col_term, switched, q, s)``)."""

    def __init__(self, dual, lam, free, FT, terms):
        self.dual, self.lam, self.free, self.FT, self.terms = dual, lam, free, FT, terms
        self.keep = np.ones(dual.n, dtype=bool)
        self.keep[free] = False

    def move(self, t, d):
        """The change of the free multipliers at ``t`` on the path."""
        x = self.lam.copy()
        x[self.free] += t * d
        return self.dual.project(x, keep=self.keep)[self.free] - self.lam[self.free]

    def rise(self, delta, v):
        """``J(lam + delta) - J(lam)`` with ``v = F_F^T delta`` (per switched term
        ``log(alpha + e^q)`` rises by ``log1p(s_t expm1(dq_t))``, exactly)."""
        u, ct, sw, q, s = self.terms
        sh = ~sw
        rise = float(self.dual.c[self.free] @ delta) - float(u[sh] @ v[sh] + 0.5 * v[sh] @ v[sh])
        if np.any(sw):
            dq = np.bincount(ct[sw], u[sw] * v[sw] + 0.5 * v[sw] * v[sw], minlength=q.size)
            on = np.flatnonzero(dq)
            with np.errstate(over="ignore"):
                rise -= float(np.sum(np.log1p(s[on] * np.expm1(dq[on]))))
        return rise

    def search(self, d, g):
        """``(t, delta, F_F^T delta)``: the first ``t`` of ``1, 1/2, 1/4, ...`` (at most
        ``_HALVINGS`` of them, and none below the first that leaves every multiplier inside
        its box) whose point raises ``J`` by at least ``_ARMIJO`` times the gain
        ``g^T delta`` of the gradient ``g``; ``(0, None, None)`` when none does."""
        free = self.free
        room = _room(self.lam[free], d, self.dual.lo[free], self.dual.hi[free])
        t = 1.0
        for _ in range(_HALVINGS):
            delta = self.move(t, d)
            v = self.FT @ delta
            rise = self.rise(delta, v)
            if rise > 0 and rise >= _ARMIJO * float(g @ delta):
                return t, delta, v
            if t <= room:
                break
            t *= 0.5
        return 0.0, None, None


def _forms(D, q, u, v, ct, sw):
    """``(A0, B0, q, B, Cq)`` of the line search from the local ``u`` and ``v = F_F^T d``
    (``v`` is zero outside the local columns, so the sums over them are complete)."""
    sh = ~sw
    B = np.bincount(ct[sw], u[sw] * v[sw], minlength=D)
    Cq = np.bincount(ct[sw], v[sw] * v[sw], minlength=D)
    return float(u[sh] @ v[sh]), float(v[sh] @ v[sh]), q, B, Cq


def _cg(H, g, project, lo, hi, truncate):
    """Maximise ``g^T d - d^T H d / 2`` over the equalities approximately: projected CG
    from 0 (``project`` maps a residual onto the equalities' null space on the face),
    stopped at the forcing tolerance, on a direction without curvature, or when an iterate
    would leave ``[lo, hi]``: with ``truncate`` it is then followed to that box (Steihaug),
    else the iterate is returned as it is (``[lo, hi]`` the box's width either side: the
    path will clip such a coordinate whatever CG does next, and on a nearly singular face
    the iterates grow without bound). Returns ``(d, iterations, g - H d, inside)``,
    ``inside`` False when one of the last two ended the iteration."""
    d = np.zeros_like(g)
    r = g.copy()
    z = project(r)
    rz = float(r @ z)
    if not rz > 0:
        return d, 0, r, True
    stop = min(_FORCING, np.sqrt(rz)) ** 2 * rz
    p = z.copy()
    for it in range(1, _MAX_CG + 1):
        Hp = H(p)
        curv = float(p @ Hp)
        room = _room(d, p, lo, hi) if truncate else np.inf
        if not curv > 0 or rz / curv >= room:
            if truncate:
                x = _to_box(d, p, lo, hi, room)
                return x, it, r - H(x - d), False
            return d, it, r, False
        step = rz / curv
        d += step * p
        r -= step * Hp
        if not truncate and np.any((d < lo) | (d > hi)):
            return d, it, r, False
        z = project(r)
        rz_new = float(r @ z)
        if rz_new <= stop:
            return d, it, r, True
        p = z + (rz_new / rz) * p
        rz = rz_new
    return d, _MAX_CG, r, True


def _to_box(d, p, lo, hi, room):
    """``d + room p`` with the coordinates that reach the box set to it exactly."""
    x = d + room * p
    with np.errstate(divide="ignore", invalid="ignore"):
        hit_hi = (p > 0) & ((hi - d) / p <= room)
        hit_lo = (p < 0) & ((lo - d) / p <= room)
    x[hit_hi] = hi[hit_hi]
    x[hit_lo] = lo[hit_lo]
    return np.clip(x, lo, hi)


def _room(d, p, lo, hi):
    """Largest ``t >= 0`` with ``lo <= d + t p <= hi`` (the coordinates where ``p`` is zero
    do not limit it)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(p > 0, (hi - d) / p, np.inf)
        dn = np.where(p < 0, (lo - d) / p, np.inf)
    return float(max(min(up.min(initial=np.inf), dn.min(initial=np.inf)), 0.0))
