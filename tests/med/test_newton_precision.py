"""The Newton model in single precision (issue 7): only where an inexact subproblem is safe.

A non-quadratic J is maximised by Newton steps whose model Hessian may be cached or summed
in single precision (each step is checked against the exact J and gradient); a quadratic J
(the SVM, alpha = 0) is one subproblem and must be solved in double precision. Both must
reach the direct exponential-cone solve's J and satisfy the KKT conditions in double.
"""

import numpy as np
import pytest

from medmtl.kernels import LinearKernel, RBFKernel
from medmtl.med.dual import feature_selection_dual, kernel_selection_dual, svm_dual
from medmtl.med.solvers import solve
from medmtl.med.solvers.newton import solve_newton
from med_testdata import make_tasks


def _direct(dual):
    return solve(dual, method="direct", solver_options=dict(
        tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9, tol_ktratio=1e-7))


@pytest.mark.parametrize("alpha,precision", [(0.0, "double"), (2.0, "single"), (200.0, "single")])
def test_feature_selection_precision_and_optimality(alpha, precision):
    Xs, ys = make_tasks(M=1, T=120, D=15, seed=21, noise=0.8)
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=alpha)
    sol = solve_newton(dual)
    assert sol.status == "converged"
    assert sol.info["model"] == "FactorModel" and sol.info["precision"] == precision
    assert sol.objective == pytest.approx(_direct(dual).objective, rel=1e-6)
    v = dual.kkt_violation(sol.lam)
    assert v["stationarity"] <= 1e-6 and v["equality"] <= 1e-10
    assert np.all(np.diff(sol.objective_path) >= -1e-12 * sol.objective)


@pytest.mark.parametrize("alpha,precision", [(0.0, "double"), (5.0, "single")])
def test_block_model_precision_and_optimality(alpha, precision):
    Xs, ys = make_tasks(M=3, T=30, D=4, seed=22)
    dual = kernel_selection_dual(Xs, ys, [RBFKernel(0.3), LinearKernel()], C=1.0, alpha=alpha)
    sol = solve_newton(dual)
    assert sol.info["model"] == "BlockModel" and sol.info["precision"] == precision
    assert sol.objective == pytest.approx(_direct(dual).objective, rel=1e-6)
    assert dual.kkt_violation(sol.lam)["stationarity"] <= 1e-6


def test_the_svm_is_solved_in_double_precision():
    Xs, ys = make_tasks(M=2, T=40, D=3, seed=23)
    for dual in (svm_dual(Xs, ys, "linear"), svm_dual(Xs[:1], ys[:1], RBFKernel(0.5)),
                 svm_dual(Xs, ys, RBFKernel(0.5))):
        sol = solve_newton(dual)
        assert sol.info["precision"] == "double" and sol.n_iter == 1
        assert dual.kkt_violation(sol.lam)["stationarity"] <= 1e-6
