"""A projected Newton method for the MED dual (``method="newton"``): a MED solver at SVM speed.

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

This module is the driver; the Newton quantities come from one of the three models of
:mod:`medmtl.med.solvers.newton_models`, chosen by the form of the dual.
"""

from __future__ import annotations

import math
import time
from numbers import Integral, Real

import numpy as np

from .base import Interval, MEDSolution, Method, Option, max_iter_option, tol_option
from .bound import BoundMethod
from .kkt import CERTIFIED_RTOL, duality_gap, gap_scale, kkt_gap, line_search, max_gap, rounding_floor, scaled_box, segment_gain
from .newton_models import make_model
from .ssnal import accepts as ssnal_accepts, hand_over as ssnal_hand_over
from ._numba import HAVE_NUMBA
from .threads import one_blas_thread

__all__ = ["NewtonMethod"]

# Forcing term of the inexact Newton steps once the model is trusted: the subproblem is
# solved to 0.1 * min(gap, gap^2) (measured on the Landmine path: tighter buys nothing).
_TRUSTED_FORCING = 0.1


class NewtonMethod(Method):
    """``method="newton"``: Newton steps whose subproblem is solved by SMO.

    The inner solver is the built-in SMO (``solver="SMO"``, the only choice).

    Options
    -------
    max_iter : int, default=50
        Maximum number of Newton iterations.
    tol : float, default=1e-12
        Also stop when an iteration with the final subproblem tolerance raises ``J`` by
        less than ``tol * |J|``.
    kkt_tol : float, default=1e-6
        Stop when every task's largest violating pair has
        ``max_up grad_i / a_i - min_low grad_j / a_j <= kkt_tol * s`` (LIBSVM's stopping
        rule; ``grad = nabla J``), ``s`` being :func:`~medmtl.med.solvers.kkt.gap_scale`:
        ``max|c|``, or less where the box is so small that the gradient's informative part
        is (a small ``C``).
    cache_size : float, default=256
        Megabytes for cached columns of the subproblem's Hessian. The cache of the last
        finished solve stays allocated for the next one in the process (fresh memory costs
        page faults); :func:`~medmtl.med.solvers.column_cache.release_spare_slab` frees it.
    max_steps : int or None, default=None
        SMO pair steps allowed per subproblem (None: ``max(10**5, 200 n)`` when the run can
        hand over to ``"ssnal"``, else ``max(10**7, 100 n)``).
    shrinking : bool, default=True
        LIBSVM's shrinking of coordinates stuck at a bound.
    group_grams : bool, default=True
        Per-task Gram blocks for block-diagonal models
        (:class:`~medmtl.med.solvers.gram_storage.GroupGrams`).
    handover : bool, default=True
        When SMO cannot make progress (status ``max_steps`` or ``stalled``), finish from the
        last point with the proximal Newton method (``"ssnal"``,
        :mod:`~medmtl.med.solvers.ssnal`) where it takes the dual, and with Algorithm 1
        (``"bound"``) where a subproblem uses the longer budget too.

    SMO moves pairs of multipliers, so it crawls where the Hessian is badly conditioned (raw
    features of very different scales, a dominant column): a subproblem then uses its
    ``max_steps``. The run hands over to ``"ssnal"``, which works in the weights, where the
    scale of the features does not slow it down; ``info["handover"]`` records that it did,
    why, and the finish's counts, and the status is the finish's. Where ``"ssnal"`` cannot
    finish (no layout of its takes the dual, or it ends below Newton's ``J``) and
    ``max_steps`` is the default, Newton goes on from its last point with the budget of a run
    that cannot hand over; ``info["extended"]`` records that it did. Where a subproblem uses
    that budget too (kernels of very different scales: on scikit-learn's digits with columns
    rescaled by 1e-4 to 1e4, multi-task kernel selection stopped 89 % below the optimum), the
    run hands over to Algorithm 1 (``"bound"``), whose steps are QPs, with the bound's own
    handover (back to Newton, when it stalls) turned off.

    Below the rounding floor of the gradient (:func:`~medmtl.med.solvers.kkt.rounding_floor`:
    about ``256 eps`` times the largest Hessian diagonal times ``sum |lam|``), a KKT gap
    cannot be trusted: a gap there ends the run with status ``"rounding"`` (the answer is as
    exact as the arithmetic allows; no warning) instead of pair steps that no longer make
    progress, so an unreachable ``kkt_tol`` or a badly scaled kernel still returns. The
    floor is a bound, and on a dominant column at a large ``C`` it sits far above what the
    weights resolve (breast cancer, one column scaled up, ``C = 1000``: ``J`` 2e-6 below the
    optimum, the duality gap 24 % of ``J``): a ``"rounding"`` end whose duality gap does not
    certify ``J`` to 1e-6 hands over to ``"ssnal"`` as above.

    The solution's ``info`` holds ``smo_steps`` (pair steps per iteration), ``columns``
    (Hessian columns computed), ``kkt_gap`` (the final violation), ``time``, ``numba``,
    ``model`` (``"FactorModel"``, ``"KernelModel"``: kernel columns on demand, or
    ``"BlockModel"``: per-task kernel blocks) and ``precision`` (``"single"`` when the
    Newton model's Hessian is summed or cached in single precision: non-quadratic ``J``,
    whose steps are checked against the exact ``J`` and gradient). The status is
    ``"converged"``, ``"max_iter"``, ``"max_steps"`` (a subproblem used its ``max_steps``),
    ``"rounding"`` (stopped at the rounding floor above ``kkt_tol``, or where the step left
    would gain less than ``J``'s own rounding) or ``"stalled"`` (the subproblem could not
    move although the KKT gap was above tolerance, or its step did not raise ``J``: the
    iterations would repeat it).

    Examples
    --------
    An RBF SVM: its ``J`` is quadratic, so one Newton step (LIBSVM's SMO on kernel columns
    evaluated on demand) is the whole solve.

    >>> from medmtl.kernels import RBFKernel
    >>> from medmtl.med.builders import svm_dual
    >>> from medmtl.med.solvers import solve
    >>> X, y = np.array([[0.0], [0.4], [1.0], [1.5]]), np.array([-1, -1, 1, 1])
    >>> sol = solve(svm_dual([X], [y], RBFKernel(1.0), C=10.0), "newton")
    >>> sol.status, sol.solver, sol.n_iter, sol.info["model"]
    ('converged', 'SMO', 1, 'KernelModel')
    """

    name = "newton"
    default_solver = "SMO"
    options = (
        max_iter_option(50, "Maximum number of Newton iterations."),
        tol_option(1e-12, "Also stop when an iteration at the final subproblem tolerance "
                          "raises J by less than tol * |J|."),
        Option("kkt_tol", 1e-6, [Interval(Real, 0, None, closed="neither")],
               "Stop when every task's largest violating pair is below kkt_tol times "
               "kkt.gap_scale (max|c|, less for a small box)."),
        Option("cache_size", 256.0, [Interval(Real, 0, None, closed="neither")],
               "Megabytes for cached columns of the subproblem's Hessian."),
        Option("max_steps", None, [None, Interval(Integral, 1, None, closed="left")],
               "SMO pair steps per subproblem; None: max(10**5, 200 n) when the run can hand "
               "over to 'ssnal', else max(10**7, 100 n). A subproblem that uses them all "
               "ends the Newton iterations (status 'max_steps')."),
        Option("shrinking", True, [bool], "Shrink coordinates stuck at a bound (LIBSVM)."),
        Option("group_grams", True, [bool], "Per-task Gram blocks for block-diagonal models."),
        Option("handover", True, [bool],
               "When SMO cannot make progress (max_steps, stalled), finish from the last "
               "point with method 'ssnal' where it takes the dual, and with method 'bound' "
               "where the longer budget runs out too."),
    )

    def check_solver(self, solver):
        if solver is None or (isinstance(solver, str) and solver.upper() == "SMO"):
            return "SMO"
        raise ValueError(f"method 'newton' has one built-in subproblem solver ('SMO'); "
                         f"got solver={solver!r}")

    def solve(self, dual, solver, options, init):
        t_start = time.perf_counter()
        n = dual.n
        eps_final = options["kkt_tol"] * gap_scale(dual)
        handover = options["handover"] and ssnal_accepts(dual)
        max_steps = options["max_steps"]
        if max_steps is None:
            max_steps = _short_budget(n) if handover else _long_budget(n)
        lam = np.zeros(n) if init is None else init
        extended = None
        with one_blas_thread():
            model = make_model(dual, lam, options)
            # a warm start is usually close enough for the model to be trusted from the start
            run = _iterate(dual, model, eps_final, options["tol"], options["max_iter"],
                           max_steps, trusted=init is not None)
            J, grad, s_final = model.finish()
            lam = model.lam
            handed = None
            # a gap at the estimated rounding floor whose duality gap does not certify J: the
            # floor (a bound) can sit far above what the weights resolve (a dominant column
            # at a large C: J 2e-6 below the optimum, duality gap 24 % of J)
            uncertified = run.status == "rounding" and duality_gap(dual, lam, grad) > CERTIFIED_RTOL * abs(J)
            if handover and (run.status in _HAND_OVER or uncertified):
                handed = _hand_over(dual, lam, J, options["kkt_tol"])
                if (handed is None and run.status == "max_steps" and options["max_steps"] is None
                        and run.n_iter < options["max_iter"]):
                    # "ssnal" cannot finish this dual (no layout takes it, or it ends lower):
                    # Newton goes on from its last point with the budget of a run that
                    # cannot hand over
                    extended = {"because": "max_steps", "max_steps": _long_budget(n)}
                    model = make_model(dual, lam, options)
                    more = _iterate(dual, model, eps_final, options["tol"], options["max_iter"] - run.n_iter,
                                    extended["max_steps"], trusted=True)
                    J, grad, s_final = model.finish()
                    lam = model.lam
                    run.extend(more)
            if (options["handover"] and run.status == "max_steps" and options["max_steps"] is None
                    and handed is None):
                # the long budget ran out too: pair steps cannot finish this dual (kernels of
                # very different scales); Algorithm 1, whose steps are QPs, finishes it
                handed = _hand_over_to_bound(dual, lam, J)
        run.path[-1] = J
        info = {} if grad is None else {"duality_gap": duality_gap(dual, lam, grad)}
        if extended is not None:
            info["extended"] = extended
        if handed is not None:
            lam, J, run.gap, status, stats = handed
            info = {"handover": {"because": run.status, **stats}}
            run.status, grad, s_final = status, None, None
            run.path.append(J)
        return MEDSolution(
            lam=lam,
            intercepts=dual.intercepts(lam, grad),
            objective=float(J),
            objective_path=np.asarray(run.path),
            n_iter=run.n_iter,
            status=run.status,
            switch_posterior=dual.switch_posterior(lam) if s_final is None else s_final,
            method=self.name,
            solver=solver,
            info={"smo_steps": run.steps, "columns": model.columns_computed, "kkt_gap": run.gap,
                  "time": time.perf_counter() - t_start, "numba": HAVE_NUMBA,
                  "model": type(model).__name__, "precision": model.precision, **info},
        )


# Statuses after which the run hands over to the proximal Newton method: SMO could not make
# progress (an iteration cap the caller set is theirs to keep).
_HAND_OVER = ("max_steps", "stalled")


# Relative rounding of J: a step that lowers J by at most this much of the size of its terms
# is round-off.
_J_ROUNDING = 64 * np.finfo(float).eps


def _short_budget(n):
    """SMO pair steps per subproblem when the run can hand over to ``"ssnal"``."""
    return max(10**5, 200 * n)


def _long_budget(n):
    """SMO pair steps per subproblem when it cannot."""
    return max(10**7, 100 * n)


def _hand_over(dual, lam, J, kkt_tol):
    """``"ssnal"`` from Newton's last point: ``(lam, J, gap, status, stats)``, or None when
    its layouts do not take the dual or it ends below Newton's ``J`` short of the tolerance
    (converged, it is the answer even below ``J`` by round-off)."""
    found = ssnal_hand_over(dual, lam, J, kkt_tol)
    if found is None:
        return None
    lam, J, gap, status, stats = found
    return lam, J, gap, status, {"to": "ssnal", **stats}


def _hand_over_to_bound(dual, lam, J):
    """Algorithm 1 (``"bound"``, its default options) from Newton's last point:
    ``(lam, J, gap, status, stats)``, or None when it ends below Newton's ``J`` short of
    the tolerance."""
    bound = BoundMethod()
    sol = bound.solve(dual, bound.check_solver(None), bound.check_options({"handover": False}),
                      dual.project(lam))
    if sol.objective < J and sol.status != "converged":
        return None
    stats = {"to": "bound", "iterations": sol.n_iter, "status": sol.status,
             "gap_estimate": sol.info.get("gap_estimate")}
    return sol.lam, sol.objective, kkt_gap(dual, sol.lam), sol.status, stats


class _Run:
    """What the Newton iterations leave: ``J`` per iteration, SMO steps per iteration, the
    status, the last KKT gap and the number of iterations."""

    def __init__(self, J):
        self.path, self.steps = [J], []
        self.status, self.gap, self.n_iter = "max_iter", np.inf, 0

    def extend(self, more):
        """Append the iterations of ``more``, a run that went on from this one's end."""
        self.path += more.path[1:]
        self.steps += more.steps
        self.n_iter += more.n_iter
        self.status, self.gap = more.status, more.gap


def _iterate(dual, model, eps_final, tol, max_iter, max_steps, trusted):
    """Newton iterations on ``model`` until the KKT gap is below ``eps_final``, ``J`` gains
    less than ``tol * |J|`` at the final tolerance, or ``max_iter`` iterations."""
    inv_a = 1.0 / dual.a
    blo, bhi = scaled_box(dual)
    quadratic = dual.n_terms == 0 or dual.alpha == 0
    lam, J = model.lam, model.J
    run = _Run(J)
    for it in range(max_iter):
        s, tau, g0 = model.linearize()
        beta = dual.a * lam
        grad_b = g0 * inv_a
        run.gap = max_gap(grad_b, beta, blo, bhi, dual)
        floor = rounding_floor(np.array([model.max_curvature]), np.abs(beta).sum())
        if run.gap <= eps_final:
            run.status = "converged"
            break
        if run.gap <= floor:
            run.status = "rounding"  # the gradient is not exact enough for kkt_tol
            break
        run.n_iter = it + 1
        # Inexact Newton: loose subproblems while the model is poor, the final tolerance as
        # soon as a full step gains what the model predicted.
        if quadratic:
            inner_eps = eps_final
        elif trusted:
            inner_eps = max(eps_final, _TRUSTED_FORCING * min(run.gap, run.gap * run.gap))
        else:
            inner_eps = max(eps_final, min(0.1 * run.gap, float(run.gap) * math.sqrt(run.gap)))
        inner_eps = max(inner_eps, floor)
        steps, inner_gap = model.subproblem(grad_b, beta, blo, bhi, inner_eps, max_steps)
        run.steps.append(steps)
        x = np.clip(beta * inv_a, dual.lo, dual.hi)
        d = x - lam
        if not np.any(d):
            # the subproblem could not move although the KKT gap is above tolerance
            # (rounding at the scale of the multipliers): stop and say so
            run.path.append(J)
            run.status = "stalled"
            break
        if quadratic:
            t, forms = 1.0, None
        else:
            forms, c_d = model.forms(d), float(dual.c @ d)
            t = line_search(dual.alpha, c_d, forms)
        gain, J_new, taken = 0.0, -np.inf, False
        if t > 0:
            lam_new = x if t == 1.0 else np.clip(lam + t * d, dual.lo, dual.hi)
            J_new = model.trial(lam_new, t, grad_b * dual.a if quadratic else None)
            # the step's gain from its forms, not as the difference of two values of J: near
            # a small box's optimum the gain is far below J's own rounding
            step_gain = J_new - J if quadratic else segment_gain(dual.alpha, c_d, forms, t)
            if step_gain >= 0:
                gain, taken = step_gain, True
                if t == 1.0 and not quadratic:
                    predicted = _model_gain(g0, d, s, tau, forms)
                    trusted = abs(gain - predicted) <= 0.01 * abs(predicted)
                model.accept(lam_new, J_new, t)
                lam, J = lam_new, J_new
        run.path.append(J)
        if steps >= max_steps:
            # one subproblem used the whole budget: stop rather than start another
            run.gap, run.status = inner_gap, "max_steps"
            break
        if not taken:
            # no step taken: lam did not move, so every later iteration would repeat this
            # one. Where the step was to gain no more than J's own rounding (by the model, or
            # for a quadratic J by the fall), J cannot resolve it: the answer is as exact as
            # the arithmetic allows; else the step itself failed.
            size = abs(J) + 2.0 * abs(float(dual.c @ lam))  # of J's terms: c^T lam and the rest
            if forms is None:
                at_rounding = J - J_new <= _J_ROUNDING * size
            else:
                at_rounding = _model_gain(g0, d, s, tau, forms) <= _J_ROUNDING * size
            run.status = "rounding" if at_rounding else "stalled"
            break
        if quadratic and inner_gap <= eps_final:
            run.gap = inner_gap
            run.status = "converged"
            break
        if quadratic and inner_gap <= rounding_floor(np.array([model.max_curvature]),
                                                     np.abs(beta).sum()):
            run.gap, run.status = inner_gap, "rounding"
            break
        if gain <= tol * abs(J) and inner_eps <= eps_final:
            run.status = "converged"
            break
    return run


def _model_gain(g0, d, s, tau, forms):
    """Gain ``g0^T d - 1/2 d^T H d`` the Newton model predicts for the step ``d``."""
    _, B0, _, B, Cq = forms
    dHd = B0 + float(s @ Cq) + float(tau @ (B * B))
    return float(g0 @ d) - 0.5 * dHd
