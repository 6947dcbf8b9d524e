"""``method="direct"``: the whole concave MED dual solved at once in CVXPY, the reference answer.

The problem is :meth:`MEDDual.to_cvxpy() <medmtl.med.dual.MEDDual.to_cvxpy>`, the one a
researcher can change and solve: each switched term ``log(alpha + exp(q_d)) - log(alpha + 1)``
with ``q_d = ||u_d||^2 / 2`` is ``logistic(q_d - log alpha)`` plus a constant, a convex
non-decreasing function of a convex quadratic, so the program is DCP and goes to an
exponential-cone solver (Clarabel by default; SCS, ECOS, MOSEK when installed). With
``alpha = 0`` or no switched terms it is a plain QP that any installed QP solver accepts.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from .base import Interval, MEDSolution, Method, Option
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
    the initial value (used by solvers that warm start). The status is CVXPY's
    ``"optimal"``; any other outcome is a RuntimeError.

    Options
    -------
    max_iter : int or None, default=None
        The solver's iteration cap; None keeps its own.
    tol : float or None, default=None
        Not used: the solver stops at its own tolerances, tight by default (about 1e-10)
        and set in ``solver_settings``. Declared so that every method takes ``tol``.
    solver_settings : dict or None, default=None
        Keyword arguments of ``problem.solve`` for the solver, overriding the defaults.

    Examples
    --------
    With ``alpha = 0`` the dual is a QP, which any CVXPY QP solver takes:

    >>> from medmtl.med.dual import svm_dual
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
    )

    def solve(self, dual, solver, options, init):
        import cvxpy as cp

        switched = dual.n_terms > 0 and dual.alpha > 0
        if switched and not _supports_exp_cone(solver):
            raise ValueError(f"solver {solver} cannot handle the exponential cones of alpha > 0; "
                             f"use CLARABEL, SCS, ECOS or MOSEK")
        settings = dict(_DIRECT_DEFAULTS.get(solver, {}))
        if options["max_iter"] is not None and solver in _ITER_KEY:
            settings[_ITER_KEY[solver]] = options["max_iter"]
        settings.update(options["solver_settings"] or {})
        problem, lam = dual.to_cvxpy()
        if init is not None:
            lam.value = init
        try:
            problem.solve(solver=solver, warm_start=init is not None, **settings)
        except cp.error.SolverError as exc:
            raise RuntimeError(f"direct solve with {solver} failed: {exc}") from exc
        if problem.status != cp.OPTIMAL or lam.value is None:
            raise RuntimeError(f"direct solve with {solver} ended with status {problem.status!r}")
        x = dual.project(np.asarray(lam.value, dtype=float))
        J = dual.objective(x)
        stats = problem.solver_stats
        n_iter = int(stats.num_iters) if stats is not None and stats.num_iters is not None else 1
        return MEDSolution(
            lam=x,
            intercepts=dual.intercepts(x),
            objective=J,
            objective_path=np.array([0.0, J]),
            n_iter=n_iter,
            status=str(problem.status),
            switch_posterior=dual.switch_posterior(x),
            method=self.name,
            solver=solver,
            info={"solve_time": getattr(stats, "solve_time", None)},
        )
