"""What every MED solver returns, and how solvers are named."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["MEDSolution", "check_cvxpy_solver", "installed_solvers"]


@dataclass
class MEDSolution:
    """The result of solving a :class:`~medmtl.med.dual.MEDDual`.

    Attributes
    ----------
    lam : ndarray of shape (n,)
        The multipliers (feasible: inside the box, group equalities met).
    intercepts : ndarray of shape (n_groups,)
        Per-task biases from the KKT conditions.
    objective : float
        ``J(lam)``, normalised so that ``J(0) = 0``.
    objective_path : ndarray of shape (n_iter + 1,)
        ``J`` at the start and after each iteration (non-decreasing for ``"bound"``).
    n_iter : int
    status : str
        ``"converged"``, ``"max_iter"``, or the direct solver's status.
    switch_posterior : ndarray of shape (D,)
    method, solver : str
    info : dict
        Solver-specific extras (e.g. inner QP iterations).

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.med import feature_selection_dual, solve
    >>> X, y = np.array([[1.0, 0.0], [-1.0, 0.5]]), np.array([1, -1])
    >>> sol = solve(feature_selection_dual([X], [y], C=1.0, alpha=1.0))
    >>> sol.status, float(sol.objective_path[0]), sol.lam.shape
    ('converged', 0.0, (2,))
    """

    lam: np.ndarray
    intercepts: np.ndarray
    objective: float
    objective_path: np.ndarray
    n_iter: int
    status: str
    switch_posterior: np.ndarray
    method: str = ""
    solver: str = ""
    info: dict = field(default_factory=dict)


def installed_solvers():
    """Names of the CVXPY solvers installed here."""
    import cvxpy as cp

    return list(cp.installed_solvers())


def check_cvxpy_solver(name, what="solver"):
    """Return the upper-cased CVXPY solver name, or raise a ValueError listing installed ones."""
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a solver name (str); got {type(name).__name__}")
    upper = name.upper()
    installed = installed_solvers()
    if upper not in installed:
        raise ValueError(
            f"{what} {name!r} is unknown or not installed; installed CVXPY solvers: {', '.join(installed)}"
        )
    return upper
