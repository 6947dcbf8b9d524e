"""The dual as a CVXPY problem (:meth:`MEDDual.to_cvxpy`) solved by Clarabel alone, without
``method="direct"``'s certification and fallbacks."""

import numpy as np
from benchopt import BaseSolver

import cvxpy as cp

# benchopt's budgets grow geometrically while a converged solver makes no progress; the conic
# solvers take a 32-bit cap, and no method here needs more than this many iterations
MAX_BUDGET = 10**6


class Solver(BaseSolver):
    """CVXPY with Clarabel, its iteration cap benchopt's budget; the problem is compiled at
    every run, as a user's own ``problem.solve()`` compiles it."""

    name = "cvxpy-clarabel"
    requirements = ["pip::cvxpy", "pip::clarabel"]
    sampling_strategy = "iteration"

    def set_objective(self, dual):
        """Keep the dual."""
        self.dual = dual

    def run(self, n_iter):
        """Clarabel for at most ``n_iter`` interior-point iterations."""
        self.lam = np.zeros(self.dual.n)
        if n_iter == 0:
            return
        problem, lam = self.dual.to_cvxpy()
        try:
            problem.solve(solver=cp.CLARABEL, max_iter=min(int(n_iter), MAX_BUDGET))
        except cp.error.SolverError:
            return
        if lam.value is not None and np.all(np.isfinite(lam.value)):
            self.lam = np.asarray(lam.value, dtype=float)

    def warm_up(self):
        """One short run before the timed ones, so that numba's compilation and CVXPY's
        imports are not timed."""
        self.run_once(2)

    def get_result(self):
        """The multipliers (``lam = 0`` when Clarabel returned none)."""
        return dict(lam=self.lam)
