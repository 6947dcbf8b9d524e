"""The compiled passes of the coordinate method (``method="cd"``): Newton steps on one multiplier.

The factors ``F = [Phi0 | Phi]`` are held row by row (CSR, the columns of each switched term
contiguous). With ``u = F^T lam`` and ``q_t = ||u_t||^2 / 2`` kept up to date, a step
``lam_i += d`` moves ``u`` along row ``i`` of ``F`` only, and every quantity of ``J`` along
that line comes from the row's nonzeros. Per switched term ``t`` the row touches, with
``p_t = f_it^T u_t`` and ``r_t = ||f_it||^2``::

    q_t(d) = q_t + d p_t + d^2 r_t / 2,      s_t(d) = 1 / (1 + alpha exp(-q_t(d)))

so the derivatives of ``J`` (plus the augmented Lagrangian of the task's equality, see
:mod:`medmtl.med.solvers.coordinate`) along the line are::

    phi'(d)  = c_i - (p_0 + d r_0) - sum_t s_t(d) (p_t + d r_t) - a_i (B_g + rho_g a_i d)
    phi''(d) = -r_0 - sum_t [s_t(d) r_t + s_t(d) (1 - s_t(d)) (p_t + d r_t)^2] - rho_g a_i^2

(``p_0``, ``r_0`` the same for the shared columns). ``phi`` is concave, so a safeguarded 1-D
Newton iteration finds its maximiser over the box, to ``_LINE_RTOL`` of ``phi'(0)``: one pass
over the row gathers ``p``, ``r`` and ``phi'(0), phi''(0)``, and each Newton iteration one
more, in which each touched posterior follows its ``dq_t`` from its current value, without an
exponential for a small one (``_TAYLOR_DQ``); most steps need one iteration. This is the dual
coordinate descent of liblinear (Hsieh et al. 2008; Fan et al. 2008), with its shrinking,
on the MED dual.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..factor_rows import Rows  # noqa: F401 - the record of the factors' rows, beside the others
from ._numba import njit

__all__ = ["Rows", "Coords", "Iterate", "Scratch", "Prior", "coordinate_pass", "full_gradient",
           "refresh_terms", "shuffle", "switched_sum", "running_switched_sum", "scratch_for"]

# The records the compiled passes take besides the factors' rows (numba reads a namedtuple's
# fields as plain values):
Coords = namedtuple("Coords", "c a lo hi group_of")
"""The dual's per-multiplier data: linear term, equality coefficients, box, task."""
Iterate = namedtuple("Iterate", "lam u q s shift rho resid")
"""The state a pass updates in place: the multipliers, ``u = F^T lam``, ``q``, the posteriors,
and per task the bias estimate, the augmented Lagrangian's penalty and the residual."""
Scratch = namedtuple("Scratch", "seg_t seg_p seg_r s_at")
"""Work arrays for the switched terms one row touches."""
Prior = namedtuple("Prior", "log_alpha switched")
"""``log(alpha)`` (``-inf`` for ``alpha = 0``) and whether ``J`` has switched terms."""


def scratch_for(rows):
    """The :class:`Scratch` arrays for the longest row of ``rows``."""
    width = max(int(np.max(np.diff(rows.indptr), initial=0)), 1)
    return Scratch(np.empty(width, dtype=np.int64), np.empty(width), np.empty(width), np.empty(width))

# The floating-point liberties the passes take: fused multiply-adds, division by a
# reciprocal and no signed zeros (their loops ~15 % faster), and sums in any order (a row's
# sums are then no chain of dependent additions: its gather and the step's bound 3.0 ms ->
# 2.3 ms a pass at 5,000 x 20,000); none that assumes finite values (``log(alpha) = -inf``
# for alpha = 0, bounds at +-inf). The checks, which decide, take none.
_FAST = {"contract", "arcp", "nsz", "reassoc"}
# A coordinate whose projected gradient is below this (absolute) is not stepped (liblinear).
_TINY_GRADIENT = 1e-14
# The 1-D Newton iteration stops when |phi'| falls below this fraction of |phi'(0)| (an
# inexact coordinate maximisation: at it the step has gained at least 1 - _LINE_RTOL^2 of the
# coordinate's best rise when phi is near quadratic; the exactness is the check's, not the
# passes'). Most steps then take the Newton step from 0 after one evaluation of phi'.
_LINE_RTOL = 0.1
_LINE_MAX_ITER = 30
# A posterior moved by |dq| at most this much follows it from its old value,
# ``s / (s + (1 - s) exp(-dq))``, the exponential by its Taylor series of degree 7 (relative
# error below |dq|^8 / 8! = 1.4e-14): no exponential or logarithm is evaluated.
_TAYLOR_DQ = 0.0625
# The largest value of s (1 - s) |1 - 2 s| for 0 <= s <= 1 (at s = 1/2 -+ 1 / (2 sqrt(3))).
_CUBIC = 1.0 / (6.0 * np.sqrt(3.0))


@njit(cache=True)
def _posterior(q, log_alpha):
    """``1 / (1 + exp(log_alpha - q))`` without overflow (``log_alpha = -inf``: 1)."""
    x = log_alpha - q
    if x > 0.0:
        e = np.exp(-x)
        return e / (1.0 + e)
    return 1.0 / (1.0 + np.exp(x))


@njit(cache=True, fastmath=_FAST)
def _shifted(s, dq, q_new, log_alpha):
    """The posterior at ``q + dq`` from ``s``, its value at ``q``: by the Taylor series of
    ``exp(-dq)`` for a small ``dq`` (see ``_TAYLOR_DQ``), else from ``q_new = q + dq``."""
    if abs(dq) > _TAYLOR_DQ:
        return _posterior(q_new, log_alpha)
    x = -dq
    e = 1.0 + x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (
        1.0 / 120.0 + x * (1.0 / 720.0 + x * (1.0 / 5040.0)))))))
    return s / (s + (1.0 - s) * e)


@njit(cache=True)
def shuffle(order, m, state):
    """Permute ``order[:m]`` in place with a xorshift generator whose state is ``state[0]``
    (the solver's own, so a solve is the same whatever else draws random numbers)."""
    x = state[0]
    for k in range(m - 1, 0, -1):
        x ^= (x << np.uint64(13))
        x ^= (x >> np.uint64(7))
        x ^= (x << np.uint64(17))
        j = np.int64(x % np.uint64(k + 1))
        tmp = order[k]
        order[k] = order[j]
        order[j] = tmp
    state[0] = x


@njit(cache=True, fastmath=_FAST)
def _gather(i, rows, u, s, scratch):
    """``(m, p0, r0, gs, hs)`` for row ``i``: the shared columns' ``p_0, r_0``, in
    ``scratch.seg_*[:m]`` the touched switched terms with their ``p_t, r_t``, and the terms'
    parts of ``-phi'(0)`` and ``-phi''(0)``, ``gs = sum_t s_t p_t`` and
    ``hs = sum_t [s_t r_t + s_t (1 - s_t) p_t^2]``."""
    indptr, indices, data, col_term = rows
    seg_t, seg_p, seg_r = scratch.seg_t, scratch.seg_p, scratch.seg_r
    k = indptr[i]
    end = indptr[i + 1]
    p0 = 0.0
    r0 = 0.0
    gs = 0.0
    hs = 0.0
    m = 0
    while k < end:
        col = indices[k]
        t = col_term[col]
        if t < 0:
            v = data[k]
            p0 += v * u[col]
            r0 += v * v
            k += 1
            continue
        pu = 0.0
        sq = 0.0
        while k < end and col_term[indices[k]] == t:
            v = data[k]
            pu += v * u[indices[k]]
            sq += v * v
            k += 1
        st = s[t]
        gs += st * pu
        hs += st * sq + st * (1.0 - st) * pu * pu
        seg_t[m] = t
        seg_p[m] = pu
        seg_r[m] = sq
        m += 1
    return m, p0, r0, gs, hs


@njit(cache=True, fastmath=_FAST)
def _slope(d, base, r0, m, scratch, q, s, log_alpha):
    """``(phi'(d), phi''(d))`` with ``base = c_i - p_0 - a_i B_g`` and ``r0`` holding the
    shared and augmented curvature; the posteriors at ``d`` go to ``scratch.s_at[:m]``."""
    seg_t, seg_p, seg_r, s_at = scratch
    d1 = base - d * r0
    d2 = -r0
    for j in range(m):
        r = seg_r[j]
        t = seg_t[j]
        pj = seg_p[j] + d * r
        dq = d * (seg_p[j] + 0.5 * d * r)
        sj = _shifted(s[t], dq, q[t] + dq, log_alpha)
        s_at[j] = sj
        d1 -= sj * pj
        d2 -= sj * r + sj * (1.0 - sj) * pj * pj
    return d1, d2


@njit(cache=True, fastmath=_FAST)
def _third_bound(d, m, scratch):
    """A bound on ``|phi'''(x)|`` for ``x`` between 0 and ``d``: the derivative of a touched
    term's ``-s_t (p_t + x r_t)`` twice over is ``-[s_t (1 - s_t)(1 - 2 s_t) w_t^3 +
    3 s_t (1 - s_t) r_t w_t]`` with ``w_t = p_t + x r_t``, at most ``W_t^3 / (6 sqrt(3)) +
    3/4 r_t W_t`` in size with ``W_t = |p_t| + |d| r_t`` (the shared columns and the
    augmented Lagrangian are quadratic in ``x``)."""
    seg_p, seg_r = scratch.seg_p, scratch.seg_r
    ad = abs(d)
    total = 0.0
    for j in range(m):
        r = seg_r[j]
        w = abs(seg_p[j]) + ad * r
        total += w * (_CUBIC * w * w + 0.75 * r)
    return total


@njit(cache=True, fastmath=_FAST)
def _newton_step(G, H, lo_d, hi_d, m, scratch, switched):
    """The Newton step on ``phi`` from ``phi'(0) = G``, ``phi''(0) = -H``, clipped to
    ``[lo_d, hi_d]``, and whether it is the line search's answer: ``phi`` is quadratic, or
    the bound on its third derivative keeps ``phi'`` at the step where the search's test
    takes it (then no ``phi'`` is evaluated, and ``_move`` updates the posteriors)."""
    if H > 0.0:
        d = G / H
    else:
        d = hi_d if G > 0.0 else lo_d
    if d > hi_d:
        d = hi_d
    elif d < lo_d:
        d = lo_d
    if not switched:
        return d, True
    # phi'(d) is within ``e`` of its quadratic model ``G - H d``
    e = 0.5 * d * d * _third_bound(d, m, scratch)
    lin = G - H * d
    return d, (abs(lin) + e <= _LINE_RTOL * abs(G) or (d == hi_d and lin >= e)
               or (d == lo_d and lin <= -e))


@njit(cache=True, fastmath=_FAST)
def _line_search(d, G, lo_d, hi_d, base, r0, m, scratch, q, s, log_alpha):
    """The maximiser over ``[lo_d, hi_d]`` of ``phi`` (concave), ``phi'(0) = G``, from the
    Newton step ``d``: Newton steps kept inside a bracket of the root, until ``|phi'|`` is
    below ``_LINE_RTOL |G|`` or the step is at a bound ``phi'`` pushes against. The
    posteriors at the step it returns are in ``scratch.s_at[:m]``."""
    if G > 0.0:
        left = 0.0
        right = hi_d
    else:
        left = lo_d
        right = 0.0
    target = _LINE_RTOL * abs(G)
    for _ in range(_LINE_MAX_ITER):
        d1, d2 = _slope(d, base, r0, m, scratch, q, s, log_alpha)
        if abs(d1) <= target or (d == hi_d and d1 >= 0.0) or (d == lo_d and d1 <= 0.0):
            return d
        if d1 > 0.0:
            left = d
        else:
            right = d
        nd = d - d1 / d2 if d2 < 0.0 else 0.5 * (left + right)
        if not (left < nd < right):
            nd = 0.5 * (left + right)
        if nd == d:
            return d
        d = nd
    _slope(d, base, r0, m, scratch, q, s, log_alpha)
    return d


@njit(cache=True, fastmath=_FAST)
def _move(i, d, step, rows, coords, it, scratch, prior):
    """Take the step ``lam_i += d`` (``step = (lo_d, hi_d, fresh, m)`` from the line search
    and the row's gather): ``u``, ``q``, the posteriors and the task's residual follow it."""
    lo_d, hi_d, fresh, m = step
    indptr, indices, data = rows.indptr, rows.indices, rows.data
    a, lo, hi, group_of = coords.a, coords.lo, coords.hi, coords.group_of
    lam, u, q, s, _, _, resid = it
    seg_t, seg_p, seg_r, s_at = scratch
    if d == hi_d:
        lam[i] = hi[i]
    elif d == lo_d:
        lam[i] = lo[i]
    else:
        lam[i] = lam[i] + d
    for kk in range(indptr[i], indptr[i + 1]):
        u[indices[kk]] += d * data[kk]
    for j in range(m):
        t = seg_t[j]
        dq = d * (seg_p[j] + 0.5 * d * seg_r[j])
        q[t] += dq
        s[t] = s_at[j] if fresh else _shifted(s[t], dq, q[t], prior.log_alpha)
    resid[group_of[i]] += a[i] * d


@njit(cache=True, fastmath=_FAST)
def coordinate_pass(order, n_active, rows, coords, it, scratch, prior, shrinking, pg_bounds, stats):
    """One pass of coordinate steps over ``order[:n_active]`` (in that order).

    ``it.u``, ``it.q``, ``it.s`` (the posteriors), ``it.lam`` and the groups' residuals
    ``it.resid_g = a_g^T lam_g`` are updated in place. Each multiplier maximises
    ``J(lam) - sum_g [B_g a_g^T lam_g + rho_g (a_g^T lam_g)^2 / 2]`` along its coordinate
    (``it.shift`` holds the ``B_g``). With ``shrinking``, a multiplier at a bound whose
    gradient pushes outwards harder than the largest violation of the last pass
    (``pg_bounds`` = (largest, smallest) projected gradient then) leaves the active part of
    ``order``.

    Returns the new number of active multipliers; ``stats`` receives the largest and
    smallest projected gradient of this pass and the number of nonzeros touched.
    """
    indptr = rows.indptr
    c, a, lo, hi, group_of = coords
    lam, u, q, s, shift, rho, resid = it
    pg_max = -np.inf
    pg_min = np.inf
    touched = 0
    k = 0
    m_act = n_active
    while k < m_act:
        i = order[k]
        m, p0, r0, gs, hs = _gather(i, rows, u, s, scratch)
        touched += indptr[i + 1] - indptr[i]
        g = group_of[i]
        ai = a[i]
        base = c[i] - p0 - ai * (shift[g] + rho[g] * resid[g])
        curv0 = r0 + rho[g] * ai * ai
        G = base - gs
        H = curv0 + hs
        li = lam[i]
        pg = G
        if li <= lo[i]:
            if shrinking and G < pg_bounds[1]:
                m_act -= 1
                order[k] = order[m_act]
                order[m_act] = i
                continue
            if G < 0.0:
                pg = 0.0
        elif li >= hi[i]:
            if shrinking and G > pg_bounds[0]:
                m_act -= 1
                order[k] = order[m_act]
                order[m_act] = i
                continue
            if G > 0.0:
                pg = 0.0
        if pg > pg_max:
            pg_max = pg
        if pg < pg_min:
            pg_min = pg
        k += 1
        if abs(pg) <= _TINY_GRADIENT:
            continue
        lo_d = lo[i] - li
        hi_d = hi[i] - li
        d, settled = _newton_step(G, H, lo_d, hi_d, m, scratch, prior.switched)
        if not settled:
            d = _line_search(d, G, lo_d, hi_d, base, curv0, m, scratch, q, s, prior.log_alpha)
        fresh = not settled
        if d == 0.0:
            continue
        _move(i, d, (lo_d, hi_d, fresh, m), rows, coords, it, scratch, prior)
    stats[0] = pg_max
    stats[1] = pg_min
    stats[2] = touched
    return m_act


@njit(cache=True)
def full_gradient(rows, u, s, c, out, size):
    """``out = c - F W u``, the exact gradient of ``J`` (``W`` = 1 on the shared columns,
    ``s_t`` on term ``t``'s), one pass over the rows; ``size[i]`` gets the sum of the
    absolute values summed into ``out[i]`` (the scale of its rounding error)."""
    indptr, indices, data, col_term = rows
    n = indptr.size - 1
    for i in range(n):
        acc = c[i]
        mag = abs(c[i])
        for k in range(indptr[i], indptr[i + 1]):
            col = indices[k]
            t = col_term[col]
            w = 1.0 if t < 0 else s[t]
            term = w * data[k] * u[col]
            acc -= term
            mag += abs(term)
        out[i] = acc
        size[i] = mag


@njit(cache=True)
def refresh_terms(u, col_term, q, s, log_alpha, cols):
    """``q_t = ||u_t||^2 / 2`` and ``s_t`` recomputed from ``u`` (rounding drifts in the
    running updates), summed over the switched columns ``cols`` in ascending order: those
    that hold data (:attr:`~medmtl.med.factor_rows.FactorRows.switched_cols`; ``u`` is 0 on
    the others, which would add +0)."""
    q[:] = 0.0
    for k in range(cols.size):
        col = cols[k]
        q[col_term[col]] += 0.5 * u[col] * u[col]
    # a q of 0 has the prior's posterior: one exponential for all of them
    s_zero = _posterior(0.0, log_alpha)
    for t in range(q.size):
        s[t] = s_zero if q[t] == 0.0 else _posterior(q[t], log_alpha)


@njit(cache=True)
def switched_sum(q, alpha):
    """``sum_t [log(alpha + exp(q_t)) - log(alpha + 1)]``, each term as
    :func:`medmtl.med.bound.log_switch_term` computes it."""
    total = 0.0
    if alpha == 0.0:
        for t in range(q.size):
            total += q[t]
        return total
    for t in range(q.size):
        qt = q[t]
        if qt < 700.0:
            total += np.log1p(np.expm1(qt) / (1.0 + alpha))
        else:
            total += qt + np.log1p(alpha * np.exp(-qt)) - np.log1p(alpha)
    return total


@njit(cache=True)
def running_switched_sum(q, s, alpha):
    """:func:`switched_sum` from the terms' running posteriors ``s`` as well: each term is
    ``q_t - log((1 + alpha) s_t)``, the logarithms taken of products of as many factors as
    stay finite (one logarithm per block of terms, not two transcendental functions per
    term), accurate to the rounding of the sums and of ``s``."""
    total = 0.0
    if alpha == 0.0:
        for t in range(q.size):
            total += q[t]
        return total
    block = max(1, int(700.0 / np.log1p(alpha)))
    prod = 1.0
    k = 0
    for t in range(q.size):
        total += q[t]
        prod *= (1.0 + alpha) * s[t]
        k += 1
        if k == block:
            total -= np.log(prod)
            prod = 1.0
            k = 0
    return total - np.log(prod)
