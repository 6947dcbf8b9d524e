"""Every method registered in medmtl's solver registry, run by :func:`medmtl.med.solve`."""

import warnings

import numpy as np
from benchopt import BaseSolver
from benchopt.stopping_criterion import SufficientProgressCriterion
from sklearn.exceptions import ConvergenceWarning

from medmtl.med.solvers import METHODS, solve

# benchopt's budgets grow geometrically while a converged solver makes no progress; the conic
# solvers take a 32-bit cap, and no method here needs more than this many iterations
MAX_BUDGET = 10**6


class Solver(BaseSolver):
    """``solve(dual, method, options={"max_iter": n_iter})``: the method's iteration cap is
    benchopt's budget (Newton steps, coordinate passes, proximal steps, Algorithm 1's
    iterations, the conic solver's iterations for ``"direct"``).

    ``"direct"`` runs without its last resort (``fallback=False``): cut short by the cap,
    it would otherwise finish by Algorithm 1, whatever the cap. An answer it cannot certify
    within the cap counts as no answer (``lam = 0``), so its curve is the time to a certified
    answer of the conic solver. benchopt's default patience (three budgets without progress)
    would end that curve before the conic solver can certify anything; twelve budgets reach
    a cap of about 100 iterations.
    """

    name = "medmtl"
    # medmtl itself is installed from its repository (pip install .), not by benchopt
    requirements = []
    parameters = {"method": sorted(METHODS)}
    sampling_strategy = "iteration"
    stopping_criterion = SufficientProgressCriterion(patience=12, strategy="iteration")

    def set_objective(self, dual):
        """Keep the dual."""
        self.dual = dual

    def run(self, n_iter):
        """At most ``n_iter`` iterations of the method from ``lam = 0``."""
        if n_iter == 0:
            self.lam = np.zeros(self.dual.n)
            return
        options = {"max_iter": min(int(n_iter), MAX_BUDGET)}
        if "fallback" in {opt.name for opt in METHODS[self.method].options}:
            options["fallback"] = False
        self.lam = np.zeros(self.dual.n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            try:
                self.lam = solve(self.dual, self.method, options=options).lam
            except RuntimeError:  # no certified answer within the cap
                pass

    def warm_up(self):
        """One short run before the timed ones, so that numba's compilation and CVXPY's
        imports are not timed."""
        self.run_once(2)

    def get_result(self):
        """The multipliers."""
        return dict(lam=self.lam)
