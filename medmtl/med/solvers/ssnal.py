"""``method="ssnal"``: proximal point steps on the MED dual, each solved by a semismooth
Newton method in the space of the weights and biases (SSNAL: Li, Sun and Toh 2018).

**Why.** Methods that move the multipliers (coordinate passes, SMO pairs) are only as fast
as the dual's Hessian ``F W F^T`` is well conditioned, and a user's raw features make it
badly conditioned: columns from 1e-3 to 1e3, one dominant column, collinear columns. The
same problem is well posed in the weights ``w`` and biases ``b``, where Newton's method is
invariant to a change of the features' scale. Degenerate duals (far more multipliers on the
margin than features, as in the Ising structure duals) are the other case: the optimal
``lam`` is a whole face, ``u = F^T lam`` is unique but ``lam`` is not, and multiplier
methods wander along the face; in ``(w, b)`` the answer is unique.

**Proximal point.** From ``lam_k`` the next iterate maximises
``J(lam) - mu/2 ||lam - lam_k||^2`` over the feasible set (the proximal point method on the
dual, i.e. the augmented Lagrangian method on its primal; Rockafellar 1976). By Fenchel
duality (``f`` the negated nonlinear part of ``J``, ``J(lam) = c^T lam - f(F^T lam)``) that
step is ``lam_{k+1} = clip(lam_k - z / mu, lo, hi)`` with ``z = F w + a b_g - c`` at the
minimiser of

    Phi_k(w, b) = f*(w) + sum_i h_i(z_i),
    h_i(z) = max_{lo_i <= l <= hi_i} [ -l z - mu/2 (l - lam_k,i)^2 ],

a smooth convex function of the weights and biases whose gradient is
``(grad f*(w) - F^T lam_{k+1}, -a_g^T lam_{k+1,g})``: at its minimiser the equalities hold
and ``u = F^T lam_{k+1}`` is the ``u`` of ``w``. ``f*`` is known in closed form up to a
scalar equation per term: ``grad f(u)`` is ``u`` on the shared columns and ``s_t u_t`` on
switched term ``t``, ``s_t = 1 / (1 + alpha exp(-||u_t||^2 / 2))``, so inverting it is a
monotone equation in ``||u_t||``.

**Semismooth Newton.** ``Phi_k`` is twice differentiable except where an ``l`` meets a bound;
its generalised Hessian is ``grad^2 f*(w)`` (per term ``(s I + s (1 - s) u u^T)^{-1}``, in
closed form) plus ``[F a]^T [F a] / mu`` over the examples strictly inside their box. Newton
steps with a backtracking line search converge in a few steps (Zhao, Sun and Toh 2010).
``mu`` starts near the start's KKT gap and halves at every proximal step down to ten times
the KKT tolerance: ``mu |lam_{k+1} - lam_k|`` is the KKT gap the step leaves. Where steps
stop lowering the gap (a first step that lowered it by orders, leaving ``mu`` far above it),
``mu`` is set from the gap again.

**Layouts.** The Newton systems are solved in one of two layouts of the factors
``F = [Phi0 | Phi]``:

* per task (:class:`~.ssnal_layouts.Blocks`), when every column belongs to one task
  (single-task duals, multi-task feature and kernel selection, the Ising structure duals):
  conjugate gradients preconditioned by each task's exact block, the terms' coupling between
  tasks left out;
* flat (:class:`~.ssnal_layouts.Flat`), for any other dual of moderate width (adaptive
  pooling, whose shared columns span every task): the whole Hessian formed densely and
  factorised.

A dual too wide for both (:func:`layout_of` returns None) is left to the other methods; a
kernel evaluated on demand is factorised first, for at most :data:`MAX_KERNEL_ROWS`
multipliers.
"""

from __future__ import annotations

import time
from numbers import Real

import numpy as np

from ..dual import MEDDual
from .base import Interval, MEDSolution, Method, Option, max_iter_option
from .kkt import gap_scale, kkt_gap, meet_equalities, rounding_floor
from .ssnal_layouts import MAX_BLOCK, MAX_FLAT, Blocks, Conjugate, layout_of
from .threads import one_blas_thread

__all__ = ["SSNALMethod", "prox_newton", "layout_of", "MAX_KERNEL_ROWS"]

# Kernel duals are factorised (an n x n eigen-factor per task) up to this many multipliers.
MAX_KERNEL_ROWS = 3000
# Newton steps per proximal step at most.
_MAX_NEWTON = 30
# mu: the first is this fraction of the start's KKT gap per unit of lam, the last this
# multiple of the KKT tolerance per unit of lam.
_MU_START = 0.3
_MU_END = 10.0
_ARMIJO = 1e-4
# A proximal step whose Newton iteration fails is taken again with mu this many times larger,
# up to this multiple of the first mu.
_MU_BACKOFF = 10.0
_MU_MAX = 1e8
# Each proximal step's Newton iteration stops once the gradient is below a tolerance that
# starts at this fraction of the start's gap and at least halves at every proximal step, and
# is at most this fraction of the smallest KKT gap yet, down to the KKT tolerance: the
# tolerances of an inexact proximal point method must shrink (tied to the last gap alone, a
# step that raised the gap would loosen the next one, and the steps could diverge).
_INNER = 0.1
# Proximal steps in a row that do not lower the best gap before the method gives up.
_PATIENCE = 10
# Proximal steps in a row that do not lower the best gap before mu is set from the gap again.
_RESTART = 3
# Rounds of proximal steps, each from the feasible point of the last, at most.
_ROUNDS = 4
# Updates of F^T lam by the multipliers that moved between fresh products.
_ADJOINT_REFRESH = 16


# ---------------------------------------------------------------------------------------
# One proximal step's function Phi_k
# ---------------------------------------------------------------------------------------
class _Prox:
    """``Phi_k`` of the proximal steps on a layout: value, gradient, Newton step."""

    def __init__(self, dual, layout, conj):
        self.lay, self.conj = layout, conj
        self.c = layout.rows_of(dual.c)
        self.lo = layout.rows_of(dual.lo)
        self.hi = layout.rows_of(dual.hi)
        self._last, self._updates = None, 0

    def z(self, V):
        return self.lay.apply(V) - self.c

    def lam(self, z, center, mu):
        return np.clip(center - z / mu, self.lo, self.hi)

    def value(self, V, z, center, mu):
        w = self.lay.weights(V)
        u, s, q = self.conj.u_of(w)
        lam = self.lam(z, center, mu)
        h = -lam * z - 0.5 * mu * (lam - center) ** 2
        return self.conj.value(w, u, q) + float(h.sum()), u, s, q, lam

    def primal(self, V):
        """The primal objective ``P(w, b) = f*(w) + sum_i max_{lo_i <= l <= hi_i} (-l z_i)``
        at ``V``: an upper bound on every feasible ``J`` (weak duality)."""
        w = self.lay.weights(V)
        u, _, q = self.conj.u_of(w)
        z = self.z(V)
        return self.conj.value(w, u, q) + float(np.maximum(-self.lo * z, -self.hi * z).sum())

    def gradient(self, u, lam):
        """``(grad f*(w), 0) - (F^T lam, a_g^T lam_g)``."""
        return self.lay.stack(u, np.zeros(self.lay.G)) - self.adjoint(lam)

    def adjoint(self, lam):
        """``(F^T lam, a_g^T lam_g)``, from the last one by the multipliers that moved where
        at most half of them did (from one Newton step to the next the multipliers at their
        bounds stay there), afresh after ``_ADJOINT_REFRESH`` updates (rounding)."""
        if self._last is not None and self._updates < _ADJOINT_REFRESH:
            at, value = self._last
            moved = lam != at
            if 2 * np.count_nonzero(moved) <= moved.size:
                value = value + self.lay.adjoint_of(np.where(moved, lam - at, 0.0), moved)
                self._last, self._updates = (lam.copy(), value), self._updates + 1
                return value
        value = self.lay.adjoint(lam)
        self._last, self._updates = (lam.copy(), value), 0
        return value

    def flat_biases(self, V, z, center, mu, has):
        """Each task with no example inside its box gets the bias minimising its ``h``
        terms (a convex piecewise-quadratic function of the bias alone: bisection on its
        slope between the extreme breakpoints). ``V`` and ``z`` are updated in place; True
        if a bias moved."""
        moved = False
        for k in np.flatnonzero(~has):
            rows = self.lay.task(k)
            a, zr, cr = self.lay.a_rows[rows], z[rows], center[rows]
            lo, hi = self.lo[rows], self.hi[rows]
            # where example i's multiplier leaves a bound, as a shift of the bias
            points = np.concatenate([(mu * (cr - lo) - zr) / a, (mu * (cr - hi) - zr) / a])
            left, right = float(points.min()), float(points.max())

            def slope(t):
                return -float(a @ np.clip(cr - (zr + a * t) / mu, lo, hi))
            if slope(left) >= 0 or slope(right) <= 0:
                continue  # flat: any bias in the bracket is a minimiser
            for _ in range(100):
                mid = 0.5 * (left + right)
                if slope(mid) > 0:
                    right = mid
                else:
                    left = mid
            t = 0.5 * (left + right)
            V[self.lay.bias_slot(k)] += t
            z[rows] += a * t
            moved = True
        return moved


def prox_newton(dual, rows, lam, spread, eps, max_prox=40, layout=None):
    """Proximal Newton steps from ``lam`` until the KKT gap is below ``eps`` (module notes).

    Parameters
    ----------
    dual : MEDDual
    rows : FactorRows
    lam : ndarray of shape (n,)
        The start (in the box; the equalities need not hold).
    spread : float
        How far ``lam`` is from the answer: its projected-gradient spread or KKT gap.
    eps : float
        The KKT tolerance: the largest violating pair's gap (scaled by ``1 / |a_i|``).
    max_prox : int, default=40
        Proximal steps at most.
    layout : Blocks or Flat, optional
        ``layout_of(dual, rows)`` when the caller has it already (it copies the factors).

    Returns
    -------
    None when the dual's layout does not allow it, else ``(lam, gap, stats)``: the last
    proximal iterate (box held, equalities to the Newton tolerance), its KKT gap and
    ``{"prox_steps", "newton_steps", "cg_iterations", "primal"}``, the last the primal
    objective at the last weights and biases (an upper bound on the optimal ``J``).
    """
    lay = layout_of(dual, rows) if layout is None else layout
    if lay is None:
        return None
    width = float(np.max(np.maximum(np.abs(dual.lo), np.abs(dual.hi)) / np.abs(dual.a)))
    if not 0 < width < np.inf:
        return None
    conj = Conjugate(rows, dual.n_terms, dual.alpha)
    prox = _Prox(dual, lay, conj)
    mu_end = _MU_END * eps / width
    mu = mu_start = max(_MU_START * spread / width, mu_end)
    center = lay.rows_of(lam)
    # u = F^T lam by the layout's own product (no transposed copy of the factors)
    V = lay.stack(conj.w_of(lay.weights(lay.adjoint(center))), dual.intercepts(lam))
    stats = {"prox_steps": 0, "newton_steps": 0, "cg_iterations": 0}
    gap, out = spread, lam
    best, stalled = spread, 0
    inner_tol = _INNER * spread
    for _ in range(max_prox):
        z = prox.z(V)
        V_next, z_next, solved = _newton(prox, V, z, center, mu, max(eps, inner_tol), stats)
        stats["prox_steps"] += 1
        if not solved and mu < _MU_MAX * mu_start:
            # Newton could not solve this step (from far away, every example sits at a
            # bound and the model is linear): a larger mu, a shorter step, from the same
            # centre
            mu *= _MU_BACKOFF
            continue
        V, z = V_next, z_next
        lam_next = prox.lam(z, center, mu)
        if not np.all(np.isfinite(lam_next)):
            return None
        out = lay.flat(lam_next)
        gap = kkt_gap(dual, out)
        if gap <= eps:
            break
        stalled = stalled + 1 if gap >= best else 0
        best = min(best, gap)
        if stalled >= _PATIENCE:
            break
        inner_tol = min(0.5 * inner_tol, _INNER * best)
        center = lam_next
        mu = 0.5 * mu
        if stalled >= _RESTART:
            # steps in a row that left the gap above the best one: mu far above the gap
            # moves lam by gap / mu per step, too little to lower it; set mu from the gap
            # again, as at the start
            mu = min(mu, _MU_START * gap / width)
        mu = max(mu, mu_end)
    stats["primal"] = prox.primal(V)
    return out, gap, stats


def _newton(prox, V, z, center, mu, tol, stats):
    """Semismooth Newton steps on ``Phi_k`` until its gradient is below ``tol``; returns
    the last ``V`` and ``z`` and whether the gradient got there."""
    lay = prox.lay
    here = prox.value(V, z, center, mu)
    for _ in range(_MAX_NEWTON):
        val, u, s, q, lam = here
        grad = prox.gradient(u, lam)
        if np.abs(grad).max() <= tol:
            return V, z, True
        raw = center - z / mu
        inside = (raw > prox.lo) & (raw < prox.hi)
        P, its, has = lay.direction(prox.conj.hessian(u, s, q), inside, -grad, mu)
        stats["newton_steps"] += 1
        stats["cg_iterations"] += its
        for k in np.flatnonzero(~has):
            grad[lay.bias_slot(k)] = 0.0
        slope = float(np.vdot(grad, P))
        if not slope < 0:
            break
        dz = lay.apply(P)
        t = 1.0
        while t > 1e-12:
            here = prox.value(V + t * P, z + t * dz, center, mu)
            if here[0] <= val + _ARMIJO * t * slope:
                break
            t *= 0.5
        else:
            break
        V, z = V + t * P, z + t * dz
        if prox.flat_biases(V, z, center, mu, has):
            here = prox.value(V, z, center, mu)
    val, u, s, q, lam = here
    return V, z, bool(np.abs(prox.gradient(u, lam)).max() <= tol)


# ---------------------------------------------------------------------------------------
# The method
# ---------------------------------------------------------------------------------------
def accepts(dual):
    """Whether ``method="ssnal"`` can take ``dual`` without factorising a large kernel
    (its layout is decided when it runs)."""
    return not dual.has_kernels or dual.n <= MAX_KERNEL_ROWS


class SSNALMethod(Method):
    """``method="ssnal"``: proximal point steps on the dual, each solved by semismooth Newton
    in the weights and biases (see the module notes).

    It takes the duals of factor models, and kernel duals of at most
    :data:`MAX_KERNEL_ROWS` multipliers (their kernels are factorised first), whose factors
    fit one of its layouts; any other dual is a ValueError naming the methods that take it.
    It is the method least affected by the scale of the features. There is no inner solver.

    Options
    -------
    max_iter : int, default=100
        Maximum number of proximal steps.
    tol : float or None, default=None
        Not used: the KKT test (``kkt_tol``) decides. Declared so that every method takes it.
    kkt_tol : float, default=1e-6
        Stop when every task's largest violating pair is below ``kkt_tol`` times
        :func:`~medmtl.med.solvers.kkt.gap_scale` (as ``"newton"`` and ``"cd"``).

    The iterations (``n_iter``) are the proximal steps; the objective path holds ``J`` of
    the start and of the answer. The status is ``"converged"``, ``"rounding"`` (the KKT gap
    is at the rounding floor of the gradient, above ``kkt_tol``), ``"max_iter"`` or
    ``"stalled"`` (ten proximal steps in a row did not lower the gap). A run from a warm
    start that stalls (a start whose scale the steps cannot resolve: from the answer for a
    box a thousand times larger, on columns rescaled by up to 1e4, the steps stalled at
    ``J = -766`` against the optimum's 0.006) starts again from 0; ``info["restarted"]``
    records the first run's proximal steps (counted in ``n_iter``). ``info`` holds
    ``prox_steps``, ``newton_steps``, ``cg_iterations``, ``layout`` (``"per task"`` or
    ``"flat"``), ``kkt_gap`` and ``time``.

    Examples
    --------
    Raw features whose scales differ by six orders of magnitude:

    >>> from medmtl.med.builders import feature_selection_dual
    >>> from medmtl.med.solvers import solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4)) * [1e-3, 1.0, 1e2, 1e3]
    >>> y = np.where(X[:, 1] + 1e-3 * X[:, 2] > 0, 1, -1)
    >>> dual = feature_selection_dual([X], [y], C=1.0, alpha=1.0)
    >>> a, b = solve(dual, "ssnal"), solve(dual, "direct")
    >>> a.status, bool(abs(a.objective - b.objective) <= 1e-6 * b.objective)
    ('converged', True)
    """

    name = "ssnal"
    default_solver = None
    options = (
        max_iter_option(100, "Maximum number of proximal steps."),
        Option("tol", None, [None, Interval(Real, 0, None, closed="left")],
               "Not used: the KKT test (kkt_tol) decides."),
        Option("kkt_tol", 1e-6, [Interval(Real, 0, None, closed="neither")],
               "Stop when every task's largest violating pair is below kkt_tol times "
               "kkt.gap_scale (max|c|, less for a small box)."),
    )

    def accepts(self, dual):
        return accepts(dual)

    def refusal(self, dual):
        return (f"method 'ssnal' factorises kernels evaluated on demand only up to "
                f"{MAX_KERNEL_ROWS} multipliers; this dual has {dual.n}: use method='newton'")

    def solve(self, dual, solver, options, init):
        t_start = time.perf_counter()
        lam0 = np.zeros(dual.n) if init is None else init
        with one_blas_thread():
            rows = dual.factor_rows()
            found = finish(dual, rows, lam0, options["kkt_tol"], options["max_iter"])
            if found is not None and found[3] == "stalled" and init is not None:
                # a warm start whose scale the steps cannot resolve (a box a thousand times
                # smaller than the start's on columns of very different scales): the run
                # starts again from 0, where the first step is set by the data's own scale
                cold = finish(dual, rows, np.zeros(dual.n), options["kkt_tol"], options["max_iter"])
                if cold[1] >= found[1] or cold[3] != "stalled":
                    cold[4]["restarted"] = {"because": "stalled", "prox_steps": found[4]["prox_steps"]}
                    cold[4]["prox_steps"] += found[4]["prox_steps"]
                    found, lam0 = cold, np.zeros(dual.n)
        if found is None:
            raise ValueError("method 'ssnal' takes duals whose factors have at most "
                             f"{MAX_FLAT} columns (or {MAX_BLOCK} per task when no column "
                             "spans two tasks); use method='cd' or 'newton'")
        lam, J, gap, status, stats = found
        path = [dual.objective(lam0), J]
        return MEDSolution(
            lam=lam,
            intercepts=dual.intercepts(lam),
            objective=J,
            objective_path=np.array(path),
            n_iter=stats["prox_steps"],
            status=status,
            switch_posterior=dual.switch_posterior(lam),
            method=self.name,
            solver="",
            info=dict(stats, kkt_gap=gap, time=time.perf_counter() - t_start),
        )


def hand_over(dual, start, J, kkt_tol):
    """:func:`finish` for another method whose own run ended at ``J`` short of its tolerance:
    ``(lam, J, gap, status, stats)`` from ``start`` (its last point, or 0), or None when no
    layout takes the dual or the steps end below ``J`` short of the tolerance (converged,
    the answer stands even below ``J`` by round-off)."""
    found = finish(dual, dual.factor_rows(), start, kkt_tol, SSNALMethod.options[0].default)
    if found is None or found[1] < J and found[3] != "converged":
        return None
    return found


def finish(dual, rows, lam, kkt_tol, max_prox, spread=None, raw=None):
    """Proximal Newton steps from feasible ``lam`` to a feasible answer.

    A kernel dual is solved through its factors (eigenvalues below ``1e-10`` of the largest
    dropped, :func:`~medmtl.med.grams.factorize_gram`): its KKT gap is measured on that
    factored dual, the only one the steps can resolve; ``J`` is the kernel dual's. The
    proximal iterates meet the equalities only to the Newton tolerance; where taking the
    residuals out leaves a gap above tolerance, another round of steps from the feasible
    point aims ten times lower.

    Parameters
    ----------
    dual : MEDDual
    rows : FactorRows
    lam : ndarray of shape (n,)
        Feasible start.
    kkt_tol : float
        Relative KKT tolerance (times :func:`~medmtl.med.solvers.kkt.gap_scale`).
    max_prox : int
        Proximal steps at most.
    spread : float, optional
        How far ``lam`` is from the answer, in the units of the KKT gap, if known better
        than by its KKT gap (a coordinate pass's spread of projected gradients); it sets the
        first proximal step's ``mu``.
    raw : ndarray of shape (n,), optional
        Where the first proximal step starts, if not at ``lam``: a point in the box that
        meets the equalities only nearly (a coordinate pass's multipliers, of which ``lam``
        is the feasible version).

    Returns
    -------
    None when the dual fits no layout, else ``(lam, J, gap, status, stats)``: the answer
    (feasible; the start instead where the steps ended below it short of the tolerance),
    its ``J``, KKT gap and status, and the counts of :func:`prox_newton` with the layout's
    name and ``duality_gap``, the primal objective at the last weights and biases less
    ``J`` (of the factored dual): a certified bound on how far ``J`` is below the optimum,
    tighter on badly conditioned duals than the one from the multipliers' own weights. The
    status is ``"converged"`` when the KKT gap is below ``kkt_tol * gap_scale(dual)`` or that
    bound below ``kkt_tol * |J|`` times ``gap_scale(dual) / max|c|``.
    """
    scale = gap_scale(dual)
    eps = kkt_tol * scale
    # J's size is mostly its linear part c^T lam: the bound on J's distance from the optimum
    # is held to the same share of the gradient's informative part as the KKT gap
    j_tol = kkt_tol * scale / max(float(np.max(np.abs(dual.c), initial=0.0)), scale)
    view = _factored(dual)
    lay = layout_of(view, rows)
    if lay is None:
        return None
    stats = {"prox_steps": 0, "newton_steps": 0, "cg_iterations": 0,
             "layout": "per task" if isinstance(lay, Blocks) else "flat"}
    answer, J, gap = lam, view.objective(lam), kkt_gap(view, lam)
    target, primal = eps, np.inf
    for _ in range(_ROUNDS):
        if gap <= eps or primal - J <= j_tol * abs(J) or stats["prox_steps"] >= max_prox:
            break
        start = gap if spread is None else spread
        center = answer if raw is None else raw
        spread = raw = None  # later rounds start from their own point and gap
        found = prox_newton(view, rows, center, start, target, max_prox - stats["prox_steps"],
                            layout=lay)
        if found is None:
            return None
        iterate, raw_gap, counts = found
        primal = min(primal, counts.pop("primal"))
        for key, value in counts.items():
            stats[key] += value
        candidate = _feasible(view, iterate)
        c_gap, c_J = kkt_gap(view, candidate), view.objective(candidate)
        if c_gap < gap or c_J > J:
            answer, J, gap = candidate, c_J, c_gap
        if raw_gap > target:
            break  # the steps themselves stopped short: another round would too
        target /= 10.0
    J_dual = dual.objective(answer)
    J_start = dual.objective(lam)
    if J_dual < J_start and gap > eps:
        # the start is the answer where the steps ended below it, unless they met the
        # tolerance: a point that meets it is the answer, a start above it by round-off
        # or by less than the tolerance allows is not (the status must not hang on that)
        answer, J_dual, J, gap = lam, J_start, view.objective(lam), kkt_gap(view, lam)
    certificate = max(primal - J, 0.0)
    if np.isfinite(certificate):
        stats["duality_gap"] = certificate
    if gap <= eps or certificate <= j_tol * abs(J):
        status = "converged"
    elif gap <= _floor(view, rows, answer):
        status = "rounding"
    elif stats["prox_steps"] >= max_prox:
        status = "max_iter"
    else:
        status = "stalled"
    return answer, J_dual, gap, status, stats


def _factored(dual):
    """``dual`` itself, or for a kernel dual the same dual with its kernels as factors."""
    if not dual.has_kernels:
        return dual
    return MEDDual(c=dual.c, lo=dual.lo, hi=dual.hi, a=dual.a, groups=dual.groups,
                   Phi0=dual.Phi0, Phi=dual.Phi, term_ptr=dual.term_ptr, alpha=dual.alpha)


def _feasible(dual, lam):
    """``lam`` with the equalities met exactly, moving as few multipliers off their bounds
    as possible (:func:`~medmtl.med.solvers.kkt.meet_equalities`)."""
    def slack():
        grad = dual.gradient(lam)
        return np.abs(grad / dual.a - dual.intercepts(lam, grad)[dual.group_of])
    return meet_equalities(dual, np.clip(lam, dual.lo, dual.hi), slack)


def _floor(dual, rows, lam):
    """The rounding floor of the KKT gap at ``lam``: the gradient's largest entries of
    ``F W F^T`` times ``sum |lam|``, in units of ``1 / |a|``."""
    curvature = np.asarray(abs(rows.F).multiply(abs(rows.F)).sum(axis=1)).ravel()
    return rounding_floor(curvature / dual.a ** 2, float(np.abs(dual.a * lam).sum()))
