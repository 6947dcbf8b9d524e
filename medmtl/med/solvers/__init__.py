"""Solvers for the MED dual, chosen by method name.

``METHODS`` maps a method name to a function
``f(dual, solver, warm_start, max_iter, tol, solver_options, **kwargs) -> MEDSolution``;
a new method (for example a fast working-set solver) plugs in with :func:`register_method`
and is then available to :func:`solve` and every estimator without other edits.

Examples
--------
>>> import numpy as np
>>> from medmtl.med.dual import feature_selection_dual
>>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
>>> y = np.array([1, 1, -1, -1])
>>> dual = feature_selection_dual([X], [y], C=1.0, alpha=1.0)
>>> a = solve(dual, method="bound")
>>> b = solve(dual, method="direct")
>>> bool(abs(a.objective - b.objective) <= 1e-6 * abs(b.objective))
True
"""

from __future__ import annotations

from ._common import MEDSolution, check_cvxpy_solver, installed_solvers
from .bound import solve_bound
from .direct import solve_direct
from .newton import solve_auto, solve_newton

__all__ = ["solve", "register_method", "METHODS", "DEFAULT_SOLVERS", "MEDSolution",
           "installed_solvers", "solve_bound", "solve_direct", "solve_newton", "solve_auto"]

METHODS = {"bound": solve_bound, "direct": solve_direct, "newton": solve_newton, "auto": solve_auto}
DEFAULT_SOLVERS = {"bound": "OSQP", "direct": "CLARABEL", "newton": None, "auto": None}
DEFAULT_METHOD = "auto"


def register_method(name, func, default_solver=None):
    """Add (or replace) a solution method under ``name``."""
    if not callable(func):
        raise TypeError("func must be callable")
    METHODS[name] = func
    DEFAULT_SOLVERS[name] = default_solver


def solve(dual, method=None, solver=None, warm_start=None, max_iter=None, tol=None,
          solver_options=None, **kwargs):
    """Solve a :class:`~medmtl.med.dual.MEDDual` with the named method.

    Parameters
    ----------
    dual : MEDDual
    method : str, default="auto"
        A key of ``METHODS``: ``"bound"`` (Algorithm 1), ``"direct"`` (CVXPY, exponential
        cone), ``"newton"`` (projected Newton with SMO subproblems) or ``"auto"`` (Newton,
        or the direct QP for a narrow quadratic dual).
    solver : str, optional
        The (inner) solver name; ``None`` takes the method's default.
    warm_start : ndarray of shape (n,), optional
    max_iter, tol : optional
        ``None`` takes the method's defaults.
    solver_options : dict, optional
    **kwargs
        Method-specific options (e.g. ``update="joint"`` for ``"bound"``).

    Returns
    -------
    MEDSolution
    """
    method = DEFAULT_METHOD if method is None else method
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; available: {sorted(METHODS)}")
    if solver is not None:
        # every method validates a named solver, even one (newton, auto) that does not use it,
        # so a typo is an error rather than silently ignored
        check_cvxpy_solver(solver)
    kw = dict(kwargs)
    if max_iter is not None:
        kw["max_iter"] = max_iter
    if tol is not None:
        kw["tol"] = tol
    return METHODS[method](dual, solver=solver if solver is not None else DEFAULT_SOLVERS.get(method),
                           warm_start=warm_start, solver_options=solver_options, **kw)
