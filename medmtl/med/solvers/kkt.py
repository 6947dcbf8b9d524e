"""What every method of the MED dual measures the same way: the box of the scaled
multipliers, the KKT gap, the rounding floor below which a gap is not exact, the exact line
search of ``J`` on a segment, and a feasible point from one that nearly meets the equalities.

In the scaled multipliers ``beta = a * lam`` every task's equality reads
``sum_{i in g} beta_i = 0`` and the KKT conditions of a task say that its largest violating
pair, ``max_up grad_i / a_i - min_low grad_j / a_j`` over the multipliers that can still go
up and down, is zero (LIBSVM's stopping rule). Every method stops on that gap relative to
the same scale (:func:`gap_scale`), so a tolerance means the same whichever method runs.
"""

from __future__ import annotations

import numpy as np

from ..bound import switch_posterior

__all__ = ["scaled_box", "gap_scale", "max_gap", "kkt_gap", "duality_gap", "rounding_floor", "ROUNDING_UNITS", "CERTIFIED_RTOL", "line_search",
           "meet_equalities", "absorb_residuals", "segment_gain"]

# A gradient summed from entries of size h times multipliers of total size l1 is exact to
# about this many units of rounding times h * l1.
ROUNDING_UNITS = 256
# A duality gap at most this fraction of |J| certifies an answer that stopped short of its
# stopping rule.
CERTIFIED_RTOL = 1e-6


def scaled_box(dual):
    """The box ``[blo, bhi]`` of ``beta = a * lam``.

    Parameters
    ----------
    dual : MEDDual

    Returns
    -------
    blo, bhi : ndarray of shape (n,)
    """
    lo_b = np.where(dual.a > 0, dual.a * dual.lo, dual.a * dual.hi)
    hi_b = np.where(dual.a > 0, dual.a * dual.hi, dual.a * dual.lo)
    return lo_b, hi_b


def gap_scale(dual):
    """What a KKT gap is measured against: ``min(max|c|, max_i H_ii (hi_i - lo_i))``.

    ``H`` is the Hessian with every switch on (``Phi0 Phi0^T + sum_d Phi_d Phi_d^T``), so
    ``H_ii (hi_i - lo_i)`` is the most one multiplier can move its own gradient across its
    box. The gradient ``c - H(lam) lam`` is ``c`` plus a part of at most that size, and only
    that part tells the optimum apart; where the box is so small that it is much less than
    ``max|c|`` (a small ``C``), a gap relative to ``max|c|`` would accept multipliers whose
    decisions are wrong in the second digit: on Landmine kernel selection at ``C = 1e-5``,
    a validation AUC of .74624 at ``kkt_tol = 1e-6`` against .74729 at the optimum. An
    unbounded box leaves ``max|c|``.

    Parameters
    ----------
    dual : MEDDual

    Returns
    -------
    float
        At least ``1e-300``.

    Examples
    --------
    >>> from medmtl.med.builders import svm_dual
    >>> X, y = np.array([[0.0], [1.0], [3.0]]), np.array([-1, 1, 1])
    >>> gap_scale(svm_dual([X], [y], "linear", C=1.0)), round(gap_scale(svm_dual([X], [y], "linear", C=1e-3)), 12)
    (1.0, 0.009)
    """
    c = float(np.max(np.abs(dual.c), initial=0.0))
    width = dual.hi - dual.lo
    finite = np.isfinite(width)
    if finite.any():
        reach = float(np.max(hessian_diagonal(dual)[finite] * width[finite], initial=0.0))
        c = min(c, reach) if reach > 0 else c
    return max(c, 1e-300)


def hessian_diagonal(dual):
    """``diag(Phi0 Phi0^T + sum_d Phi_d Phi_d^T)``, shape (n,): the Hessian's diagonal with every
    switch on, from the data alone (kept in the dual's workspace for a whole path).

    Parameters
    ----------
    dual : MEDDual

    Returns
    -------
    ndarray of shape (n,)
    """
    slot = dual.workspace.slot("kkt")
    if "hessian_diagonal" not in slot:
        d = np.zeros(dual.n)
        if dual.has_kernels:
            for G in [dual.shared_gram()] + list(dual.term_grams()):
                if G is not None:
                    d += G.diag()
        else:
            F = dual.factor_rows().F
            rows = np.repeat(np.arange(dual.n), np.diff(F.indptr))
            d += np.bincount(rows, weights=F.data * F.data, minlength=dual.n)
        slot["hessian_diagonal"] = d
    return slot["hessian_diagonal"]


def max_gap(grad_b, beta, blo, bhi, dual):
    """Largest per-task violating pair ``max_up grad - min_low grad`` in ``beta`` space.

    Zero exactly at a KKT point; ``gap / 2`` bounds every coordinate's violation of
    ``grad_i = b_g a_i`` (free) or its sign condition (at a bound), scaled by ``1 / |a_i|``.

    Parameters
    ----------
    grad_b : ndarray of shape (n,)
        ``grad J / a``.
    beta : ndarray of shape (n,)
        ``a * lam``.
    blo, bhi : ndarray of shape (n,)
        The box of ``beta`` (:func:`scaled_box`).
    dual : MEDDual

    Returns
    -------
    float
    """
    up = beta < bhi
    low = beta > blo
    worst = 0.0
    for g in dual.groups:
        gu, gl = grad_b[g][up[g]], grad_b[g][low[g]]
        if gu.size and gl.size:
            worst = max(worst, float(gu.max() - gl.min()))
    return worst


def kkt_gap(dual, lam, grad=None):
    """The KKT gap (:func:`max_gap`) of ``dual`` at feasible ``lam``.

    Parameters
    ----------
    dual : MEDDual
    lam : ndarray of shape (n,)
    grad : ndarray of shape (n,), optional
        ``dual.gradient(lam)`` if already known.

    Returns
    -------
    float
    """
    grad = dual.gradient(lam) if grad is None else grad
    return max_gap(grad / dual.a, dual.a * lam, *scaled_box(dual), dual)


def duality_gap(dual, lam, grad=None):
    """A certified bound on ``J* - J(lam)``: the gap between ``J(lam)`` and the primal
    objective at the weights of ``lam`` and the best biases.

    Write ``J(lam) = c^T lam - f(F^T lam)`` (``f`` the unswitched and switched terms).
    For any weights ``w`` and biases ``b``, Fenchel-Young (``f(u) >= u^T w - f*(w)``) and the
    equalities give ``J(lam') <= P(w, b) = f*(w) + sum_i max_{lo_i <= l <= hi_i} (-l z_i)``
    for every feasible ``lam'``, with ``z = F w + a b_g - c``. At ``w = grad f(F^T lam)``
    (where Fenchel-Young is tight) ``z_i = a_i b_g - grad_i`` and

        P(w, b) - J(lam) = sum_i [(lam_i - lo_i) z_i^+ + (hi_i - lam_i) z_i^-],

    a sum of non-negative terms (no cancellation of large numbers): the multipliers off
    their lower bound where ``z`` says they should be on it, and below their upper bound
    where ``z`` says they should be there, each weighted by how far it would move. The bias
    of each task is chosen to minimise its part, a convex piecewise-linear function of
    ``b_g`` minimised exactly at one of its kinks. Unlike the KKT gap, the bound does not
    grow with the scale of the features: it is the certificate every method's answer is
    judged by.

    Parameters
    ----------
    dual : MEDDual
    lam : ndarray of shape (n,)
        Feasible multipliers (box and equalities).
    grad : ndarray of shape (n,), optional
        ``dual.gradient(lam)`` if already known.

    Returns
    -------
    float
        ``>= J* - J(lam)`` (up to rounding in the gradient).

    Examples
    --------
    >>> from medmtl.med.builders import svm_dual
    >>> X, y = np.array([[1.0], [2.0], [-1.0], [-2.0]]), np.array([1, 1, -1, -1])
    >>> dual = svm_dual([X], [y], C=1.0)
    >>> float(duality_gap(dual, np.array([0.5, 0.0, 0.5, 0.0])))
    0.0
    >>> bool(duality_gap(dual, np.zeros(4)) >= dual.objective(np.array([0.5, 0.0, 0.5, 0.0])))
    True
    """
    lam = np.asarray(lam, dtype=float)
    grad = dual.gradient(lam) if grad is None else grad
    total = 0.0
    for g in dual.groups:
        total += _best_bias_gap(dual.a[g], grad[g], lam[g] - dual.lo[g], dual.hi[g] - lam[g])
    return total


def _best_bias_gap(a, grad, room_down, room_up):
    """``min_b sum_i [room_down_i z_i^+ + room_up_i z_i^-]`` with ``z_i = a_i b - grad_i``.

    Each term is convex and piecewise linear in ``b`` with its kink at ``grad_i / a_i``; the
    sum's slope rises from ``-sum(left)`` to ``sum(right)`` across the kinks, and the
    minimum sits at the kink where it turns non-negative."""
    room_down = np.maximum(room_down, 0.0)
    room_up = np.maximum(room_up, 0.0)
    kink = grad / a
    scale = np.abs(a)
    # slope right of the kink (b above it) and left of it (below it, as a magnitude)
    right = scale * np.where(a > 0, room_down, room_up)
    left = scale * np.where(a > 0, room_up, room_down)
    order = np.argsort(kink, kind="stable")
    slope = -left.sum() + np.cumsum(right[order] + left[order])
    at = np.searchsorted(slope, 0.0)
    b = kink[order[min(at, kink.size - 1)]] if kink.size else 0.0
    z = a * b - grad
    return float(room_down @ np.maximum(z, 0.0) + room_up @ np.maximum(-z, 0.0))


def rounding_floor(curvature, l1):
    """The gap below which a gradient is rounding: ``256 eps max(curvature) l1`` for
    multipliers of total size ``l1 = sum |beta|`` (the Hessian is PSD, so no entry exceeds
    its largest diagonal). A tolerance below it cannot be met; the methods stop there.

    Parameters
    ----------
    curvature : ndarray
        The Hessian's diagonal (or its largest entry).
    l1 : float

    Returns
    -------
    float

    Examples
    --------
    >>> bool(rounding_floor(np.array([1.0, 4.0]), 2.0) == 256 * np.finfo(float).eps * 8.0)
    True
    """
    return ROUNDING_UNITS * np.finfo(float).eps * float(np.max(curvature, initial=0.0)) * float(l1)


def line_search(alpha, c_d, forms):
    """Maximiser over ``[0, 1]`` of ``J(lam + t d)``.

    ``J`` restricted to a segment is concave; its derivative is found in closed form per
    term from the quadratic forms of the step, and its root by safeguarded Newton steps.

    Parameters
    ----------
    alpha : float
        The dual's prior odds.
    c_d : float
        ``c^T d``.
    forms : tuple (A0, B0, q, B, Cq)
        ``A0 = u0^T v0`` and ``B0 = ||v0||^2`` of the shared term (``u0 = Phi0^T lam``,
        ``v0 = Phi0^T d``), and per switched term ``q_t``, ``B_t = u_t^T v_t`` and
        ``Cq_t = ||v_t||^2``.

    Returns
    -------
    float in [0, 1]
    """
    A0, B0, q, B, Cq = forms

    def derivs(t):
        qt = q + t * B + 0.5 * t * t * Cq
        st = switch_posterior(qt, alpha)
        slope = B + t * Cq
        d1 = c_d - A0 - t * B0 - float(st @ slope)
        d2 = -B0 - float(st @ Cq + (st * (1.0 - st)) @ (slope * slope))
        return d1, d2

    if not derivs(0.0)[0] > 0.0:
        return 0.0
    if derivs(1.0)[0] >= 0.0:
        return 1.0
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
    return lo if derivs(t)[0] < 0 and lo > 0 else t


def segment_gain(alpha, c_d, forms, t):
    """``J(lam + t d) - J(lam)`` from the quadratic forms of the step (:func:`line_search`'s
    ``forms``), with no difference of two values of ``J``.

    ``J``'s size is mostly its linear part; near the optimum of a dual with a small box, a
    step's gain is below ``J``'s own rounding, and the difference of two values of ``J``
    can have either sign. Here each switched term's change is
    ``log1p(s_t expm1(delta_t))``, ``s_t`` its posterior at ``lam`` and ``delta_t`` the
    change of ``q_t``, exact to rounding relative to the step.

    Parameters
    ----------
    alpha, c_d, forms
        As for :func:`line_search`.
    t : float
        The step length.

    Returns
    -------
    float

    Examples
    --------
    >>> from medmtl.med.bound import log_switch_term
    >>> forms = (0.5, 2.0, np.array([0.3]), np.array([0.2]), np.array([1.0]))
    >>> J = lambda t: 1.5 * t - (0.5 * t + t * t) - float(log_switch_term([0.3 + 0.2 * t + 0.5 * t * t], 2.0)[0]
    ...                                                    - log_switch_term([0.3], 2.0)[0])
    >>> bool(np.isclose(segment_gain(2.0, 1.5, forms, 0.4), J(0.4), rtol=1e-14, atol=0))
    True
    """
    A0, B0, q, B, Cq = forms
    gain = t * c_d - (t * A0 + 0.5 * t * t * B0)
    if q.size:
        delta = t * B + 0.5 * t * t * Cq
        if alpha == 0:
            return gain - float(delta.sum())
        s = switch_posterior(q, alpha)
        # log((1 - s) + s e^delta): by log1p where that is a small change (exact to rounding
        # relative to it), else as log(alpha + e^(q + delta)) - log(alpha + e^q) by logaddexp
        # (no overflow, and no cancellation at that size)
        x = s * np.expm1(np.clip(delta, -30.0, 30.0))
        near = (np.abs(delta) <= 30.0) & (x > -0.5) & (x < 1.0)
        far = np.logaddexp(np.log(alpha), q + delta) - np.logaddexp(np.log(alpha), q)
        gain -= float(np.where(near, np.log1p(np.where(near, x, 0.0)), far).sum())
    return gain


def absorb_residuals(dual, lam, free):
    """``lam`` with each task's equality residual taken out of its free multipliers
    ``free`` along ``a``, or None if some would leave the box.

    Parameters
    ----------
    dual : MEDDual
    lam : ndarray of shape (n,)
    free : int ndarray
        Indices of the multipliers that may move.

    Returns
    -------
    ndarray of shape (n,) or None
    """
    lam = lam.copy()
    a = dual.a[free]
    grp = dual.group_of[free]
    resid = np.bincount(dual.group_of, dual.a * lam, minlength=len(dual.groups))
    norm = np.bincount(grp, a * a, minlength=resid.size)
    fixable = norm > 0
    if np.any(resid[~fixable] != 0):
        return None
    step = np.divide(resid, norm, out=np.zeros_like(resid), where=fixable)
    x = lam[free] - step[grp] * a
    if np.any(x < dual.lo[free]) or np.any(x > dual.hi[free]):
        return None
    lam[free] = x
    return lam


def meet_equalities(dual, lam, slack):
    """``lam`` (in the box) with the equalities met, moving as few multipliers off their
    bounds as it can.

    The residuals are taken out of the free multipliers along ``a`` where they can absorb
    them; else the projection that moves only the free multipliers
    (:meth:`MEDDual.project` with the others kept), releasing, in a task whose free
    multipliers cannot meet its equality alone, the fewest multipliers at a bound that can,
    those the KKT conditions hold least (smallest ``slack``) first; the Euclidean projection
    only if that fails too. Keeping multipliers at their bounds matters: the Euclidean
    projection moves every one of them by the same tiny step, and one pulled off its bound
    against its gradient makes the KKT gap of the point as large as the gradient.

    Parameters
    ----------
    dual : MEDDual
    lam : ndarray of shape (n,)
        In the box; the equalities need not hold.
    slack : callable
        ``slack()`` gives, for every multiplier, how far the KKT conditions hold it at its
        bound (``|grad_i / a_i - b_g|``); called only when needed.

    Returns
    -------
    ndarray of shape (n,)
    """
    at_bound = (lam <= dual.lo) | (lam >= dual.hi)
    fixed = absorb_residuals(dual, lam, np.flatnonzero(~at_bound))
    if fixed is not None:
        return fixed
    keep = _release(dual, lam, at_bound, slack)
    try:
        return dual.project(lam, keep=keep)
    except ValueError:  # the released multipliers cannot meet some task's equality either
        return dual.project(lam)


def _release(dual, lam, at_bound, slack):
    """The multipliers to keep at their bounds: all of them except, in each task whose free
    multipliers cannot take twice its residual ``r_g = a_g^T lam_g`` out within the box,
    those at a bound that can move against it, smallest ``slack()`` first, until together
    they can."""
    keep = at_bound.copy()
    slacks = None
    beta = dual.a * lam
    resid = np.bincount(dual.group_of, beta, minlength=len(dual.groups))
    blo, bhi = scaled_box(dual)
    for gi in np.flatnonzero(resid):
        g = dual.groups[gi]
        # how far each multiplier of the task can move a_g^T lam_g against the residual
        room = beta[g] - blo[g] if resid[gi] > 0 else bhi[g] - beta[g]
        # twice the residual: free multipliers that can just take it (one that must land
        # exactly on its bound) leave a root the projection's search may not bracket
        need = 2 * abs(resid[gi]) - room[~at_bound[g]].sum()
        if need <= 0:
            continue
        if slacks is None:
            slacks = slack()
        can = np.flatnonzero(at_bound[g] & (room > 0))
        order = can[np.argsort(slacks[g[can]], kind="stable")]
        taken = np.cumsum(room[order])
        keep[g[order[:np.searchsorted(taken, need) + 1]]] = False
    return keep
