"""``method="direct"`` (medmtl.med.solvers.direct): the whole dual in CVXPY, the reference
answer, and the problem it solves, open as ``MEDDual.to_cvxpy()``."""

import functools
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from medmtl.kernels import LinearKernel, PolynomialKernel, RBFKernel
from medmtl.med.builders import kernel_selection_dual
from medmtl.med.dual import MEDDual
from medmtl.med.solvers import solve
from med_testdata import assert_kkt, cached_duals, make_tasks


@pytest.mark.parametrize("name", ["svm", "single_fs", "multi_ks", "pooling", "multi_regression"])
def test_direct_solves_the_problem_of_to_cvxpy(name, monkeypatch):
    dual = cached_duals()[name]
    built = []
    to_cvxpy = MEDDual.to_cvxpy

    def recorded(self, *args, **kw):
        built.append(to_cvxpy(self, *args, **kw))
        return built[-1]

    monkeypatch.setattr(MEDDual, "to_cvxpy", recorded)
    sol = solve(dual, "direct")
    (problem, lam), = built
    assert sol.status == problem.status == "optimal"
    np.testing.assert_allclose(sol.lam, dual.project(lam.value), atol=1e-12)
    # the problem's value is J itself (its constants included)
    assert problem.value == pytest.approx(sol.objective, rel=1e-8)
    assert_kkt(dual, sol.lam, 1e-5)


def test_a_constraint_added_to_the_problem_holds_in_its_solution():
    dual = cached_duals()["single_fs"]
    free = solve(dual, "direct")
    problem, lam = dual.to_cvxpy()
    cap = 0.5 * float(free.lam.max())
    problem = cp.Problem(problem.objective, problem.constraints + [lam <= cap])
    problem.solve(solver=cp.CLARABEL)
    assert problem.status == "optimal" and lam.value.max() <= cap + 1e-7
    assert problem.value < free.objective
    assert problem.value == pytest.approx(dual.objective(lam.value), rel=1e-6)


def test_a_warm_start_reaches_the_same_answer():
    dual = cached_duals()["multi_fs"]
    cold = solve(dual, "direct")
    warm = solve(dual, "direct", init=cold.lam)
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_solver_failure_is_a_runtime_error_without_the_fallback():
    dual = cached_duals()["multi_fs"]
    with pytest.raises(RuntimeError, match="CLARABEL"):
        solve(dual, "direct", options={"solver_settings": {"max_iter": 1}, "fallback": False})
    with pytest.raises(RuntimeError, match="CLARABEL"):
        solve(dual, "direct", options={"max_iter": 1, "fallback": False})


def test_solver_failure_falls_back_to_algorithm_1_which_says_so_without_a_warning():
    # the fallback converges: its answer is right, and a warning beside it would be wrong
    dual = cached_duals()["multi_fs"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = solve(dual, "direct", options={"max_iter": 1})
    assert sol.status == "converged" and sol.method == "direct"
    assert caught == []
    assert "CLARABEL" in sol.info["fallback"] and "Algorithm 1" in sol.info["fallback"]
    assert sol.objective == pytest.approx(solve(dual, "newton").objective, rel=1e-6)
    assert_kkt(dual, sol.lam, 1e-5)


def test_a_fallback_that_stops_short_warns_once():
    dual = cached_duals()["multi_fs"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from medmtl.med.solvers import direct

        saved = direct._FALLBACK_ITER
        direct._FALLBACK_ITER = 1
        try:
            sol = solve(dual, "direct", options={"max_iter": 1})
        finally:
            direct._FALLBACK_ITER = saved
    assert sol.status == "fallback"
    assert [w.category for w in caught] == [ConvergenceWarning]
    assert "Algorithm 1" in str(caught[0].message) and "duality gap" in str(caught[0].message)


# Kernel selection with three kernels, 200 examples x 5 features, over C and alpha with the
# extremes: at tight tolerances Clarabel alone ends "optimal_inaccurate" at (1e-2, 1e6) and
# (1e2, 1e6) and fails outright at (1e4, 1) and (1e4, 1e6); the reference must succeed on all.
@pytest.mark.parametrize("alpha", [0.0, 1.0, 1e6])
@pytest.mark.parametrize("C", [1e-4, 1e-2, 1.0, 1e2, 1e4])
def test_the_reference_solve_succeeds_over_c_and_alpha(C, alpha):
    dual = _kernel_selection_grid_dual().replace(C=C, alpha=alpha)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = solve(dual, "direct")
    # the conic answer, certified, or Algorithm 1's from it, converged: no warning either way
    assert sol.status in ("optimal", "converged")
    assert caught == []
    assert (sol.status == "converged") == ("fallback" in sol.info)
    # (an interior point's multipliers near a bound are accurate to about 1e-4)
    assert_kkt(dual, sol.lam, 1e-3)
    newton = solve(dual, "newton", options={"max_iter": 500})
    assert sol.objective == pytest.approx(newton.objective, rel=1e-6)


@functools.lru_cache(maxsize=None)
def _kernel_selection_grid_dual():
    Xs, ys = make_tasks(1, 200, 5, seed=0, noise=0.5)
    return kernel_selection_dual(Xs, ys, [LinearKernel(), RBFKernel(0.5), PolynomialKernel(3)],
                                 C=1.0, alpha=1.0)


def test_solvers_without_exponential_cones_are_refused():
    dual = cached_duals()["single_fs"]
    installed = cp.installed_solvers()
    with pytest.raises(ValueError, match="installed CVXPY solvers") as info:
        solve(dual, "direct", solver="NOT_A_SOLVER")
    assert installed[0] in str(info.value)
    for name in ("HIGHS", "OSQP"):
        if name in installed:
            with pytest.raises(ValueError, match="exponential cones"):
                solve(dual, "direct", solver=name)


@pytest.mark.parametrize("name", ["SCS", "ECOS", "MOSEK"])
def test_optional_exp_cone_solvers(name):
    if name not in cp.installed_solvers():
        pytest.skip(f"{name} is not installed")
    dual = cached_duals()["single_fs"]
    ref = solve(dual, "direct").objective
    sol = solve(dual, "direct", solver=name)
    assert sol.objective == pytest.approx(ref, rel=1e-5)
