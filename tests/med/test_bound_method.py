"""``method="bound"`` (medmtl.med.solvers.bound): Algorithm 1 against the direct
exponential-cone solve, optimality, Theorem 2, and its speed-ups.

The speed-ups (inexact early inner solves, the stopping rule on the estimated gap) must
reach the direct solve's J, satisfy the KKT conditions on their own, keep J monotone, and do
less inner work than the plain Algorithm 1 (``inexact=False``) on the same problem.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import medmtl.med.solvers.bound as alg1
from medmtl.med.builders import feature_selection_dual, svm_dual
from medmtl.med.solvers import remaining_gap, solve
from med_testdata import assert_kkt, cached_duals, make_tasks

NAMES = ["svm", "single_fs", "single_ks", "multi_fs", "multi_ks", "pooling", "regression",
         "multi_regression"]
# alpha = 10: enough iterations for the early loose solves to matter.
ALPHA = 10.0
# One per QP form and structure: u form, lam form (kernels), a shared term, regression pairs.
FAST_NAMES = ["single_fs", "multi_ks", "pooling", "multi_regression"]


def bound(dual, init=None, solver=None, **options):
    return solve(dual, "bound", solver=solver, options=options, init=init)


@pytest.fixture(scope="module")
def direct_solutions():
    return {name: solve(d, "direct") for name, d in cached_duals().items()}


@pytest.fixture(scope="module")
def direct():
    return {name: solve(cached_duals(alpha=ALPHA)[name], "direct") for name in FAST_NAMES}


def assert_monotone_path(sol):
    path = sol.objective_path
    assert path[0] == 0.0 and np.all(np.diff(path) >= 0)
    assert len(path) == sol.n_iter + 1
    assert path[-1] == pytest.approx(sol.objective, rel=1e-14)


@pytest.mark.parametrize("name", NAMES)
def test_bound_matches_direct_and_is_optimal(name, direct_solutions):
    dual = cached_duals()[name]
    ref = direct_solutions[name]
    sol = bound(dual)
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
    joint = bound(dual, update="joint")
    inner = bound(dual, solver="CLARABEL")
    for sol in (joint, inner):
        assert sol.objective == pytest.approx(ref, rel=1e-6)
        assert np.all(np.diff(sol.objective_path) >= 0)


@pytest.mark.parametrize("form", ["u", "lam"])
def test_both_qp_forms_agree(form, direct_solutions):
    dual = cached_duals()["multi_fs"]
    sol = bound(dual, qp_form=form)
    assert sol.info["qp_form"][0] == form
    assert sol.objective == pytest.approx(direct_solutions["multi_fs"].objective, rel=1e-6)


def test_alpha_zero_feature_selection_is_the_svm():
    Xs, ys = make_tasks(M=2, T=25, D=4, seed=3)
    fs = feature_selection_dual(Xs, ys, C=0.7, alpha=0.0)
    svm = svm_dual(Xs, ys, "linear", C=0.7)
    a = bound(fs)
    b = bound(svm)
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
        sol = bound(dual, update="joint", max_iter=K, tol=1e-300)
    assert sol.n_iter <= K
    assert sol.objective >= (1 - eps) * J_star
    assert sol.objective <= J_star * (1 + 1e-8)


def test_warm_start_from_solution_stops_at_once_and_projects(direct_solutions):
    dual = cached_duals()["multi_fs"]
    cold = bound(dual)
    warm = bound(dual, init=cold.lam)
    assert warm.n_iter <= 2 < cold.n_iter
    assert warm.objective == pytest.approx(cold.objective, rel=1e-10)
    # An infeasible start is projected first, so the path starts at a feasible J.
    bad = bound(dual, init=np.full(dual.n, 5.0))
    assert bad.objective == pytest.approx(cold.objective, rel=1e-8)
    assert np.all(np.diff(bad.objective_path) >= 0)


def test_max_iter_is_reported():
    dual = cached_duals()["multi_fs"]
    with pytest.warns(ConvergenceWarning, match="'bound' stopped at max_iter=2"):
        sol = bound(dual, max_iter=2)
    assert sol.status == "max_iter" and sol.n_iter == 2
    assert len(sol.objective_path) == 3


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_inner_solver_failures_are_runtime_errors():
    dual = cached_duals()["multi_fs"]
    with pytest.raises(RuntimeError, match="OSQP.*maximum iterations"):
        bound(dual, solver_settings={"max_iter": 1, "fallback": False})
    with pytest.raises(RuntimeError, match="CLARABEL"):
        bound(dual, solver="CLARABEL", solver_settings={"max_iter": 1})


@pytest.mark.parametrize("name", FAST_NAMES)
def test_inexact_reaches_direct_with_less_inner_work(name, direct):
    dual = cached_duals(alpha=ALPHA)[name]
    ref = direct[name].objective
    plain = bound(dual, inexact=False)
    fast = bound(dual)
    for sol in (plain, fast):
        assert sol.status == "converged"
        assert sol.objective == pytest.approx(ref, rel=1e-8)
        assert_kkt(dual, sol.lam)
        assert_monotone_path(sol)
    assert plain.info["loose_iterations"] == plain.info["inexact_iterations"] == 0
    assert fast.info["loose_iterations"] > 0
    assert fast.info["inner_iterations"] < plain.info["inner_iterations"]
    np.testing.assert_allclose(fast.switch_posterior, dual.switch_posterior(fast.lam))


@pytest.mark.parametrize("update", ["gauss-seidel", "joint"])
def test_loose_steps_that_fail_are_redone_tighter(update, monkeypatch, direct):
    # Unpolished ADMM at eps = 0.3 is far too rough to keep raising J near the optimum.
    monkeypatch.setattr(alg1, "_LOOSE_EPS", 0.3)
    monkeypatch.setattr(alg1, "_EPS_FLOOR", 0.3)
    monkeypatch.setattr(alg1, "_POLISH_BELOW", 0.0)
    dual = cached_duals(alpha=ALPHA)["pooling"]
    sol = bound(dual, update=update)
    assert sol.info["rejected_iterations"] > 0 and sol.info["inexact_iterations"] > 0
    assert sol.status == "converged"
    assert sol.objective == pytest.approx(direct["pooling"].objective, rel=1e-8)
    assert_kkt(dual, sol.lam)
    assert_monotone_path(sol)


def test_gap_rule_stops_earlier_within_its_tolerance(direct):
    dual = cached_duals(alpha=ALPHA)["single_fs"]
    ref = direct["single_fs"].objective
    full = bound(dual)
    early = bound(dual, gap_tol=1e-7)
    assert early.status == "converged"
    assert early.n_iter < full.n_iter
    assert early.info["gap_estimate"] <= 1e-7 * abs(early.objective)
    # the estimate is a heuristic; its error stays well inside a factor of 10 here
    assert 0 <= ref - early.objective <= 1e-6 * abs(ref)
    assert ref - full.objective <= 1e-9 * abs(ref)


def test_theorem2_gap_bound_holds_along_the_path(direct):
    # J* - J_{i+1} <= (kappa - 1)(J_{i+1} - J_i) for exact joint steps (the proof of Theorem 2),
    # the worst case the gap estimate falls back on.
    dual = cached_duals(alpha=ALPHA)["single_fs"]
    J_star = direct["single_fs"].objective
    path = bound(dual, update="joint", inexact=False, tol=1e-9).objective_path
    kappa = max(ALPHA + 1.0, 2.0)
    gains = np.diff(path)
    slack = 1e-9 * abs(J_star)
    assert np.all(J_star - path[1:] <= (kappa - 1.0) * gains + slack)
    # Theorem 2's count for eps = 1e-3 is enough for J >= (1 - eps) J*.
    K = math.ceil(math.log(1e3) / math.log(min(1 + 1 / ALPHA, 2)))
    assert path[min(K, len(path) - 1)] >= (1 - 1e-3) * J_star


def test_remaining_gap_is_exact_for_geometric_increases():
    J_star, r = 5.0, 0.8
    J = J_star * (1 - r ** np.arange(30))
    gains = np.diff(J)
    for i in range(3, 29):
        assert remaining_gap(gains[:i], alpha=1e6) == pytest.approx(J_star - J[i], rel=1e-10)
    # without a shrinking rate it falls back on Theorem 2's kappa - 1 = max(alpha, 1)
    assert remaining_gap([1.0, 2.0, 3.0], alpha=4.0) == 12.0
    assert remaining_gap([3.0], alpha=0.0) == 3.0


def test_cvxpy_inner_solver_ignores_inexact(direct):
    dual = cached_duals(alpha=ALPHA)["multi_ks"]
    sol = bound(dual, solver="CLARABEL")
    assert sol.info["loose_iterations"] == 0
    assert sol.objective == pytest.approx(direct["multi_ks"].objective, rel=1e-8)


def test_inputs_are_not_modified():
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=9)
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=ALPHA)
    c, hi = dual.c.copy(), dual.hi.copy()
    start = np.full(dual.n, 0.3)
    kept = start.copy()
    bound(dual, init=start, gap_tol=1e-9)
    np.testing.assert_array_equal(start, kept)
    np.testing.assert_array_equal(dual.c, c)
    np.testing.assert_array_equal(dual.hi, hi)


def test_bad_parameters_are_named():
    dual = cached_duals(alpha=ALPHA)["single_fs"]
    with pytest.raises(ValueError, match="gap_tol"):
        bound(dual, gap_tol=-1.0)
    with pytest.raises(TypeError, match="gap_tol"):
        bound(dual, gap_tol="tight")
    with pytest.raises(ValueError, match="tol"):
        bound(dual, tol=float("nan"))
    with pytest.raises(TypeError, match="inexact"):
        bound(dual, inexact="yes")
    with pytest.raises(ValueError, match="max_iter"):
        bound(dual, max_iter=0)


@pytest.mark.parametrize("name", ["single_fs", "multi_ks", "pooling", "multi_regression"])
def test_a_joint_step_maximises_the_bound_qp_of_to_cvxpy(name):
    # MEDDual.to_cvxpy(bound_at=lam) is the QP one exact joint step of Algorithm 1 maximises
    dual = cached_duals(alpha=ALPHA)[name]
    start = dual.project(np.full(dual.n, 0.4) * dual.hi)
    with pytest.warns(ConvergenceWarning):
        step = bound(dual, init=start, update="joint", inexact=False, max_iter=1)
    problem, lam = dual.to_cvxpy(bound_at=start)
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert problem.status == "optimal"
    assert dual.objective(dual.project(lam.value)) == pytest.approx(step.objective, rel=1e-7)
    best = problem.value
    lam.value = step.lam
    assert problem.objective.value == pytest.approx(best, rel=1e-7)
    # a lower bound on J that touches it at the start
    assert dual.objective(start) <= best <= step.objective + 1e-9 * abs(step.objective)
