"""Algorithm 1 against the direct exponential-cone solve, optimality, Theorem 2, errors."""

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest

from medmtl.med import solvers
from medmtl.med.dual import feature_selection_dual, svm_dual
from medmtl.med.solvers import solve
from med_testdata import cached_duals, make_tasks

NAMES = ["svm", "single_fs", "single_ks", "multi_fs", "multi_ks", "pooling", "regression",
         "multi_regression"]


@pytest.fixture(scope="module")
def direct_solutions():
    return {name: solve(d, "direct") for name, d in cached_duals().items()}


def assert_kkt(dual, lam, tol):
    v = dual.kkt_violation(lam)
    scale = max(1.0, np.abs(dual.c).max())
    assert v["stationarity"] <= tol * scale, v
    assert v["equality"] <= 1e-9 * scale, v
    assert v["bounds"] == 0.0, v


@pytest.mark.parametrize("name", NAMES)
def test_bound_matches_direct_and_is_optimal(name, direct_solutions):
    dual = cached_duals()[name]
    ref = direct_solutions[name]
    sol = solve(dual, "bound")
    assert sol.status == "converged"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    assert ref.objective > 0
    # The direct answer is the reference: optimal to solver precision.
    assert_kkt(dual, ref.lam, 1e-5)
    assert_kkt(dual, sol.lam, 1e-5)
    # Monotone by construction, starting at J(0) = 0.
    path = sol.objective_path
    assert path[0] == 0.0 and np.all(np.diff(path) >= 0)
    assert path[-1] == pytest.approx(sol.objective, rel=1e-14)
    np.testing.assert_allclose(sol.switch_posterior, dual.switch_posterior(sol.lam))
    # Same optimum: the multipliers agree where the problem is strictly concave in u.
    np.testing.assert_allclose(dual.switched_u(sol.lam), dual.switched_u(ref.lam), atol=1e-3)


@pytest.mark.parametrize("name", ["single_fs", "multi_ks", "pooling"])
def test_joint_update_and_cvxpy_inner_solver_agree(name, direct_solutions):
    dual = cached_duals()[name]
    ref = direct_solutions[name].objective
    joint = solve(dual, "bound", update="joint")
    inner = solve(dual, "bound", solver="CLARABEL")
    for sol in (joint, inner):
        assert sol.objective == pytest.approx(ref, rel=1e-6)
        assert np.all(np.diff(sol.objective_path) >= 0)


@pytest.mark.parametrize("form", ["u", "lam"])
def test_both_qp_forms_agree(form, direct_solutions):
    dual = cached_duals()["multi_fs"]
    sol = solve(dual, "bound", qp_form=form)
    assert sol.info["qp_form"][0] == form
    assert sol.objective == pytest.approx(direct_solutions["multi_fs"].objective, rel=1e-6)


def test_alpha_zero_feature_selection_is_the_svm():
    Xs, ys = make_tasks(M=2, T=25, D=4, seed=3)
    fs = feature_selection_dual(Xs, ys, C=0.7, alpha=0.0)
    svm = svm_dual(Xs, ys, "linear", C=0.7)
    a = solve(fs, "bound")
    b = solve(svm, "bound")
    assert a.n_iter == 1  # the bound is exact when alpha = 0
    assert a.objective == pytest.approx(b.objective, rel=1e-9)
    np.testing.assert_allclose(fs.switched_u(a.lam), fs.switched_u(b.lam), atol=1e-6)
    np.testing.assert_allclose(a.intercepts, b.intercepts, atol=1e-5)
    np.testing.assert_allclose(a.switch_posterior, 1.0)
    # And the direct program with alpha = 0 is a plain QP any QP solver accepts.
    c = solve(fs, "direct", solver="OSQP")
    assert c.objective == pytest.approx(b.objective, rel=1e-6)


@pytest.mark.parametrize("alpha", [0.5, 2.0, 10.0])
@pytest.mark.parametrize("eps", [1e-1, 1e-3])
def test_theorem2_iteration_bound(alpha, eps):
    Xs, ys = make_tasks(M=2, T=20, D=5, seed=int(alpha))
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=alpha)
    J_star = solve(dual, "direct").objective
    K = math.ceil(math.log(1 / eps) / math.log(min(1 + 1 / alpha, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve(dual, "bound", update="joint", max_iter=K, tol=1e-300)
    assert sol.n_iter <= K
    assert sol.objective >= (1 - eps) * J_star
    assert sol.objective <= J_star * (1 + 1e-8)


def test_warm_start_from_solution_stops_at_once_and_projects(direct_solutions):
    dual = cached_duals()["multi_fs"]
    cold = solve(dual, "bound")
    warm = solve(dual, "bound", warm_start=cold.lam)
    assert warm.n_iter <= 2 < cold.n_iter
    assert warm.objective == pytest.approx(cold.objective, rel=1e-10)
    # An infeasible start is projected first, so the path starts at a feasible J.
    bad = solve(dual, "bound", warm_start=np.full(dual.n, 5.0))
    assert bad.objective == pytest.approx(cold.objective, rel=1e-8)
    assert np.all(np.diff(bad.objective_path) >= 0)


def test_max_iter_is_reported():
    dual = cached_duals()["multi_fs"]
    sol = solve(dual, "bound", max_iter=2)
    assert sol.status == "max_iter" and sol.n_iter == 2
    assert len(sol.objective_path) == 3


def test_unknown_and_missing_solvers_list_installed():
    dual = cached_duals()["single_fs"]
    installed = cp.installed_solvers()
    with pytest.raises(ValueError, match="installed CVXPY solvers") as info:
        solve(dual, "direct", solver="NOT_A_SOLVER")
    assert installed[0] in str(info.value)
    with pytest.raises(ValueError, match="not installed"):
        solve(dual, "bound", solver="GUROBI_DOES_NOT_EXIST")
    with pytest.raises(ValueError, match="unknown method"):
        solve(dual, "newton-nonexistent")
    if "HIGHS" in installed:
        with pytest.raises(ValueError, match="exponential cones"):
            solve(dual, "direct", solver="HIGHS")


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_solver_failures_are_runtime_errors():
    dual = cached_duals()["multi_fs"]
    with pytest.raises(RuntimeError, match="OSQP.*maximum iterations"):
        solve(dual, "bound", solver_options={"max_iter": 1, "fallback": False})
    with pytest.raises(RuntimeError, match="CLARABEL"):
        solve(dual, "direct", solver_options={"max_iter": 1})
    with pytest.raises(RuntimeError, match="CLARABEL"):
        solve(dual, "bound", solver="CLARABEL", solver_options={"max_iter": 1})


@pytest.mark.parametrize("name", ["SCS", "ECOS", "MOSEK"])
def test_optional_exp_cone_solvers(name):
    if name not in cp.installed_solvers():
        pytest.skip(f"{name} is not installed")
    dual = cached_duals()["single_fs"]
    ref = solve(dual, "direct").objective
    sol = solve(dual, "direct", solver=name)
    assert sol.objective == pytest.approx(ref, rel=1e-5)


def test_new_methods_plug_into_the_registry():
    calls = []

    def lazy(dual, solver=None, warm_start=None, solver_options=None, **kw):
        calls.append(solver)
        return solvers.solve_direct(dual, solver="CLARABEL")

    solvers.register_method("test-lazy", lazy, default_solver="X")
    try:
        sol = solve(cached_duals()["svm"], "test-lazy")
        assert calls == ["X"] and sol.method == "direct"
    finally:
        solvers.METHODS.pop("test-lazy")
        solvers.DEFAULT_SOLVERS.pop("test-lazy")


@pytest.mark.parametrize("form", ["u", "lam"])
def test_cvxpy_inner_problem_is_built_once_dpp(form):
    # DPP lets CVXPY reuse its canonicalisation when only parameter values change.
    from medmtl.med.solvers.qp import BlockQP, CVXPYBackend

    backend = CVXPYBackend(BlockQP(cached_duals()["pooling"], [0], form=form), "CLARABEL")
    assert backend.problem.is_dcp(dpp=True)
