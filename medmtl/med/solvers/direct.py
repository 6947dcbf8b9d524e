"""``method="direct"``: the whole concave MED dual solved at once in CVXPY, the reference answer.

The problem is :meth:`MEDDual.to_cvxpy() <medmtl.med.dual.MEDDual.to_cvxpy>`, the one a
researcher can change and solve: each switched term ``log(alpha + exp(q_d)) - log(alpha + 1)``
with ``q_d = ||u_d||^2 / 2`` is ``logistic(q_d - log alpha)`` plus a constant, a convex
non-decreasing function of a convex quadratic, so the program is DCP and goes to an
exponential-cone solver (Clarabel by default; SCS, ECOS, MOSEK when installed). With
``alpha = 0`` or no switched terms it is a plain QP that any installed QP solver accepts.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

from .base import Interval, MEDSolution, Method, Option
from .bound import BoundMethod
from .kkt import duality_gap
from .qp import osqp_polish_setting

__all__ = ["DirectMethod"]

# Tight tolerances: the direct solve is the reference the other methods are tested against.
_DIRECT_DEFAULTS = {
    "CLARABEL": dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, tol_ktratio=1e-8),
    "SCS": dict(eps_abs=1e-9, eps_rel=1e-9, max_iters=200000),
    "ECOS": dict(abstol=1e-10, reltol=1e-10, feastol=1e-10),
    "OSQP": dict(eps_abs=1e-10, eps_rel=1e-10, max_iter=100000, **osqp_polish_setting()),
}
_ITER_KEY = {"CLARABEL": "max_iter", "SCS": "max_iters", "ECOS": "max_iters", "OSQP": "max_iter"}
# Further tries when an answer is not certified: Clarabel's equilibration run longer with
# iterative refinement, then without equilibration (each the best of them on some badly
# scaled dual: raw features, a dominant column), then its own default tolerances on the
# objective normalised to O(1).
_RETRY_SETTINGS = {"CLARABEL": [
    (dict(equilibrate_max_iter=100, iterative_refinement_reltol=1e-16,
          iterative_refinement_abstol=1e-16, iterative_refinement_max_iter=50), False),
    (dict(equilibrate_enable=False), False),
    (dict(tol_gap_abs=1e-8, tol_gap_rel=1e-8, tol_feas=1e-8, tol_ktratio=1e-6), True),
]}
# Iterations of Algorithm 1 when it stands in for a failed conic solve.
_FALLBACK_ITER = 5000


def _supports_exp_cone(name):
    try:
        from cvxpy.constraints import ExpCone
        from cvxpy.reductions.solvers.defines import SOLVER_MAP_CONIC
    except ImportError:  # pragma: no cover - very old CVXPY
        return True
    cls = SOLVER_MAP_CONIC.get(name)
    return cls is not None and ExpCone in cls.SUPPORTED_CONSTRAINTS


class DirectMethod(Method):
    """``method="direct"``: maximise a MED dual directly with a CVXPY solver.

    The inner solver is any installed CVXPY solver (``"CLARABEL"`` by default); with
    ``alpha > 0`` it must handle exponential cones. A starting point is passed to CVXPY as
    the initial value (used by solvers that warm start).

    Being the reference, it must succeed wherever the other methods do, so an answer is
    checked rather than taken on the solver's word alone:

    1. the solve at tight tolerances (about 1e-10); an answer counts as optimal when its
       duality gap (:func:`~medmtl.med.solvers.kkt.duality_gap`) is at most
       ``certify_tol * |J|`` or it meets the KKT conditions of the MED dual
       (:meth:`MEDDual.kkt_violation`) to ``certify_tol / 10 * max|c|``, whatever CVXPY called it
       (an interior point method's ``"optimal"`` can be 1e-4 off on badly scaled data);
    2. if not (or the solver failed), Clarabel again with longer equilibration and
       iterative refinement, then without equilibration, then at its own default tolerances
       with the objective divided by a bound on its linear part, each checked alike;
    3. if none is certified, the stated fallback: Algorithm 1 (``method="bound"``, exact
       inner QPs) from the solver's best point, which converges whatever the scaling.
       ``info["fallback"]`` says so; the status is Algorithm 1's (``"converged"``), or
       ``"fallback"`` (with one ConvergenceWarning, unless the duality gap certifies the
       answer) when it stopped short. ``fallback=False`` raises a RuntimeError instead.

    The status is ``"optimal"`` otherwise; ``info`` holds ``cvxpy_status`` (what the solver
    said of the accepted answer) and ``attempts``.

    Options
    -------
    max_iter : int or None, default=None
        The solver's iteration cap; None keeps its own.
    tol : float or None, default=None
        Not used: the solver stops at its own tolerances, tight by default (about 1e-10)
        and set in ``solver_settings``. Declared so that every method takes ``tol``.
    solver_settings : dict or None, default=None
        Keyword arguments of ``problem.solve`` for the solver, overriding the defaults (the
        second try is then skipped).
    certify_tol : float, default=1e-6
        An answer is certified when its duality gap is at most ``certify_tol * |J|`` (its
        ``J`` is then that close to the optimum) or its KKT violation at most
        ``certify_tol / 10 * max|c|``.
    fallback : bool, default=True
        Fall back to Algorithm 1 when every try fails.

    Examples
    --------
    With ``alpha = 0`` the dual is a QP, which any CVXPY QP solver takes:

    >>> from medmtl.med.builders import svm_dual
    >>> from medmtl.med.solvers import solve
    >>> X, y = np.array([[0.0, 1.0], [0.5, 0.8], [1.0, -0.2], [1.5, 0.1]]), np.array([-1, -1, 1, 1])
    >>> dual = svm_dual([X], [y], "linear", C=1.0)
    >>> a, b = solve(dual, "direct"), solve(dual, "direct", solver="OSQP")
    >>> a.status, a.solver, b.solver, bool(np.isclose(a.objective, b.objective))
    ('optimal', 'CLARABEL', 'OSQP', True)
    """

    name = "direct"
    default_solver = "CLARABEL"
    options = (
        Option("max_iter", None, [None, Interval(Integral, 1, None, closed="left")],
               "The conic solver's iteration cap; None keeps its own."),
        Option("tol", None, [None, Interval(Real, 0, None, closed="left")],
               "Not used: the solver's own tolerances (solver_settings) govern."),
        Option("solver_settings", None, [None, dict],
               "Keyword arguments of problem.solve for the solver, unchecked."),
        Option("certify_tol", 1e-6, [Interval(Real, 0, None, closed="neither")],
               "An answer is optimal if its duality gap is below certify_tol * |J| or its "
               "KKT violation below certify_tol / 10 * max|c|."),
        Option("fallback", True, [bool],
               "When every try fails, solve by Algorithm 1 (exact inner QPs) from the "
               "solver's best point, with a warning; False raises instead."),
    )

    def solve(self, dual, solver, options, init):
        switched = dual.n_terms > 0 and dual.alpha > 0
        if switched and not _supports_exp_cone(solver):
            raise ValueError(f"solver {solver} cannot handle the exponential cones of alpha > 0; "
                             f"use CLARABEL, SCS, ECOS or MOSEK")
        settings = dict(_DIRECT_DEFAULTS.get(solver, {}))
        if options["max_iter"] is not None and solver in _ITER_KEY:
            settings[_ITER_KEY[solver]] = options["max_iter"]
        settings.update(options["solver_settings"] or {})
        attempts = [(settings, False)]
        if not options["solver_settings"]:
            attempts += [(dict(settings, **extra), normalise)
                         for extra, normalise in _RETRY_SETTINGS.get(solver, [])]
        scale = max(float(np.max(np.abs(dual.c), initial=0.0)), 1e-12)
        best, outcomes = None, []
        for k, (attempt, normalise) in enumerate(attempts):
            x, status, stats = _attempt(dual, solver, attempt, normalise, init)
            outcomes.append(status)
            if x is None:
                continue
            J = dual.objective(x)
            tol = options["certify_tol"]
            certified = (duality_gap(dual, x) <= tol * max(abs(J), 1e-300)
                         or dual.kkt_violation(x)["stationarity"] <= 0.1 * tol * scale)
            if certified:
                J0 = 0.0 if init is None else dual.objective(init)
                return self._solution(dual, x, (J0, J), solver, stats,
                                      {"cvxpy_status": status, "attempts": k + 1})
            if best is None or J > best[1]:
                best = (x, J)
        if not options["fallback"]:
            raise RuntimeError(f"direct solve with {solver} ended with status "
                               f"{' then '.join(map(repr, outcomes))} and no certified answer")
        return self._fall_back(dual, solver, outcomes, init if best is None else best[0])

    def _solution(self, dual, x, path, solver, stats, info):
        n_iter = int(stats.num_iters) if stats is not None and stats.num_iters is not None else 1
        return MEDSolution(
            lam=x,
            intercepts=dual.intercepts(x),
            objective=path[1],
            objective_path=np.array(path),
            n_iter=n_iter,
            status="optimal",
            switch_posterior=dual.switch_posterior(x),
            method=self.name,
            solver=solver,
            info=dict(info, solve_time=getattr(stats, "solve_time", None)),
        )

    def _fall_back(self, dual, solver, outcomes, start):
        """Algorithm 1 with exact inner QPs from the conic solver's best point: slow, but
        monotone and convergent whatever the scaling (Theorem 2)."""
        bound = BoundMethod()
        sol = bound.solve(dual, bound.check_solver(None),
                          bound.check_options({"inexact": False, "max_iter": _FALLBACK_ITER}),
                          None if start is None else dual.project(start))
        sol.info.update(fallback=(f"no answer of the direct solve with {solver} was certified "
                                  f"(status {' then '.join(map(repr, outcomes))}); the answer "
                                  f"is Algorithm 1's (method='bound', exact inner QPs) from "
                                  f"the solver's best point"))
        sol.method = self.name
        if sol.status not in ("converged",):
            sol.status = "fallback"
        return sol


def _attempt(dual, solver, settings, normalise, init):
    """One conic solve: ``(x, status, stats)``, ``x`` None when the solver failed."""
    import cvxpy as cp

    problem, lam = dual.to_cvxpy()
    if normalise:
        # the objective divided by a bound on its linear part: O(1) for the interior point
        sigma = max(1.0, float(np.abs(dual.c) @ np.maximum(np.abs(dual.lo), np.abs(dual.hi))))
        problem = cp.Problem(cp.Maximize(problem.objective.args[0] / sigma), problem.constraints)
    if init is not None:
        lam.value = init
    try:
        with warnings.catch_warnings():
            # the answer is checked against the KKT conditions instead
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            problem.solve(solver=solver, warm_start=init is not None, **settings)
    except cp.error.SolverError:
        return None, "solver error", None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or lam.value is None:
        return None, str(problem.status), None
    return dual.project(np.asarray(lam.value, dtype=float)), str(problem.status), problem.solver_stats
