"""``method="direct"`` (medmtl.med.solvers.direct): the whole dual in CVXPY, the reference
answer, and the problem it solves, open as ``MEDDual.to_cvxpy()``."""

import cvxpy as cp
import numpy as np
import pytest

from medmtl.med.dual import MEDDual
from medmtl.med.solvers import solve
from med_testdata import assert_kkt, cached_duals


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
def test_solver_failure_is_a_runtime_error():
    dual = cached_duals()["multi_fs"]
    with pytest.raises(RuntimeError, match="CLARABEL"):
        solve(dual, "direct", options={"solver_settings": {"max_iter": 1}})
    with pytest.raises(RuntimeError, match="CLARABEL"):
        solve(dual, "direct", options={"max_iter": 1})


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
