"""The whole concave MED dual solved at once in CVXPY: the reference answer.

Each switched term ``log(alpha + exp(q_d)) - log(alpha + 1)`` with ``q_d = ||u_d||^2 / 2`` is
written ``logistic(q_d - log alpha)`` (plus constants), a convex non-decreasing function of a
convex quadratic, so the program is DCP and goes to an exponential-cone solver (Clarabel by
default; SCS, ECOS, MOSEK when installed). With ``alpha = 0`` or no switched terms it is a
plain QP that any installed QP solver accepts.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._common import MEDSolution, check_cvxpy_solver

def _osqp_polish():
    """OSQP 1.x renamed ``polish`` to ``polishing``."""
    try:
        import osqp

        major = int(str(getattr(osqp, "__version__", "0")).split(".")[0])
    except (ImportError, ValueError):
        return {}
    return {"polishing": True} if major >= 1 else {"polish": True}


__all__ = ["solve_direct"]

_DIRECT_DEFAULTS = {
    "CLARABEL": dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, tol_ktratio=1e-8),
    "SCS": dict(eps_abs=1e-9, eps_rel=1e-9, max_iters=200000),
    "ECOS": dict(abstol=1e-10, reltol=1e-10, feastol=1e-10),
    "OSQP": dict(eps_abs=1e-10, eps_rel=1e-10, max_iter=100000, **_osqp_polish()),
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


def solve_direct(dual, solver="CLARABEL", warm_start=None, max_iter=None, tol=None,
                 solver_options=None):
    """Maximise a MED dual directly with a CVXPY solver.

    Parameters
    ----------
    dual : MEDDual
    solver : str, default="CLARABEL"
    warm_start : ndarray of shape (n,), optional
        Passed to CVXPY as the initial value (used by solvers that warm start).
    max_iter : int, optional
        The solver's iteration cap, if given.
    tol : float, optional
        Unused (the estimators' ``tol`` is Algorithm 1's stopping rule); the solver's own
        tolerances are tight by default (~1e-10) and can be set in ``solver_options``.
    solver_options : dict, optional
        Passed to the solver, overriding the defaults.

    Returns
    -------
    MEDSolution
    """
    import cvxpy as cp

    name = check_cvxpy_solver(solver or "CLARABEL")
    switched = dual.n_terms > 0 and dual.alpha > 0
    if switched and not _supports_exp_cone(name):
        raise ValueError(f"solver {name} cannot handle the exponential cones of alpha > 0; "
                         f"use CLARABEL, SCS, ECOS or MOSEK")
    opts = dict(_DIRECT_DEFAULTS.get(name, {}))
    if max_iter is not None and name in _ITER_KEY:
        opts[_ITER_KEY[name]] = int(max_iter)
    opts.update(solver_options or {})

    lam = cp.Variable(dual.n)
    if warm_start is not None:
        lam.value = dual.project(np.asarray(warm_start, dtype=float))
    expr = dual.c @ lam
    if dual.Phi0 is not None and dual.Phi0.shape[1]:
        expr = expr - 0.5 * cp.sum_squares(dual.Phi0.T @ lam)
    if dual.n_terms:
        w = dual.Phi.T @ lam
        widths = np.diff(dual.term_ptr)
        if np.all(widths == 1):
            qd = 0.5 * cp.square(w)
        elif dual.n_terms <= 1000:
            # One cone per term (not one per column) keeps the conic problem small and
            # well conditioned for wide kernel factors.
            qd = 0.5 * cp.hstack([cp.sum_squares(w[a:b]) for a, b in zip(dual.term_ptr[:-1], dual.term_ptr[1:])])
        else:
            R = dual.Phi.shape[1]
            S = sp.csr_matrix((np.ones(R), (dual.col_term, np.arange(R))), shape=(dual.n_terms, R))
            qd = 0.5 * (S @ cp.square(w))
        if dual.alpha == 0:
            expr = expr - cp.sum(qd)
        else:
            expr = expr - cp.sum(cp.logistic(qd - np.log(dual.alpha)))
    rows = np.concatenate([np.full(g.size, k) for k, g in enumerate(dual.groups)])
    cols = np.concatenate(dual.groups)
    Aeq = sp.csr_matrix((dual.a[cols], (rows, cols)), shape=(len(dual.groups), dual.n))
    cons = [lam >= dual.lo, lam <= dual.hi, Aeq @ lam == 0]
    problem = cp.Problem(cp.Maximize(expr), cons)
    try:
        problem.solve(solver=name, warm_start=warm_start is not None, **opts)
    except cp.error.SolverError as exc:
        raise RuntimeError(f"direct solve with {name} failed: {exc}") from exc
    if problem.status != cp.OPTIMAL or lam.value is None:
        raise RuntimeError(f"direct solve with {name} ended with status {problem.status!r}")
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
        method="direct",
        solver=name,
        info={"solve_time": getattr(stats, "solve_time", None)},
    )
