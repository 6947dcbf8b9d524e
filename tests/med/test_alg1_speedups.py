"""Algorithm 1's speed-ups (issue 7): inexact early inner solves and the stopping rule on J.

The reference is the direct exponential-cone solve (CVXPY + Clarabel); every fast run must
reach its J, satisfy the KKT conditions on its own, keep J monotone, and do less inner work
than the plain Algorithm 1 (``inexact=False``) on the same problem.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import medmtl.med.solvers.bound as alg1
from medmtl.med.dual import feature_selection_dual
from medmtl.med.solvers import solve
from medmtl.med.solvers.bound import remaining_gap
from medmtl.med.solvers.qp import BlockQP, OSQPBackend, is_qp_optimal
from med_testdata import cached_duals, make_tasks

# alpha = 10: enough iterations for the early loose solves to matter.
ALPHA = 10.0
# One per QP form and structure: u form, lam form (kernels), a shared term, regression pairs.
NAMES = ["single_fs", "multi_ks", "pooling", "multi_regression"]


@pytest.fixture(scope="module")
def direct():
    return {name: solve(cached_duals(alpha=ALPHA)[name], "direct") for name in NAMES}


def assert_kkt(dual, lam, tol=1e-5):
    v = dual.kkt_violation(lam)
    scale = max(1.0, np.abs(dual.c).max())
    assert v["stationarity"] <= tol * scale, v
    assert v["equality"] <= 1e-9 * scale, v
    assert v["bounds"] == 0.0, v


def assert_monotone_path(sol):
    path = sol.objective_path
    assert path[0] == 0.0 and np.all(np.diff(path) >= 0)
    assert len(path) == sol.n_iter + 1
    assert path[-1] == pytest.approx(sol.objective, rel=1e-14)


@pytest.mark.parametrize("name", NAMES)
def test_inexact_reaches_direct_with_less_inner_work(name, direct):
    dual = cached_duals(alpha=ALPHA)[name]
    ref = direct[name].objective
    plain = solve(dual, "bound", inexact=False)
    fast = solve(dual, "bound")
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
    sol = solve(dual, "bound", update=update)
    assert sol.info["rejected_iterations"] > 0 and sol.info["inexact_iterations"] > 0
    assert sol.status == "converged"
    assert sol.objective == pytest.approx(direct["pooling"].objective, rel=1e-8)
    assert_kkt(dual, sol.lam)
    assert_monotone_path(sol)


def test_gap_rule_stops_earlier_within_its_tolerance(direct):
    dual = cached_duals(alpha=ALPHA)["single_fs"]
    ref = direct["single_fs"].objective
    full = solve(dual, "bound")
    early = solve(dual, "bound", gap_tol=1e-7)
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
    path = solve(dual, "bound", update="joint", inexact=False, tol=1e-9).objective_path
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


def test_polished_loose_solves_are_checked_before_counting_as_exact():
    dual = cached_duals(alpha=ALPHA)["multi_fs"]
    qp = BlockQP(dual, [0], form="u")
    lam = np.zeros(dual.n)
    w0, w = dual.shared_u(lam), dual.switched_u(lam)
    nums = qp.numbers(lam, w0, w, dual.switch_posterior(lam), dual.curvature(lam))
    tight = OSQPBackend(qp)
    x = tight.solve(nums)
    assert tight.last_exact and tight.is_optimal(x, tight.y, nums)
    # a loose solve whose polished point passes the test is the same optimum ...
    loose = OSQPBackend(qp)
    xl = loose.solve(nums, eps=1e-3, polish=True)
    assert loose.last_exact and loose.total_iter < tight.total_iter
    np.testing.assert_allclose(xl, x, atol=1e-6)
    # ... an unpolished one does not, and a perturbed point fails the KKT test
    rough = OSQPBackend(qp)
    rough.solve(nums, eps=1e-1, polish=False)
    assert not rough.last_exact
    bad = x.copy()
    bad[0] = qp.hiB[0] if x[0] < 0.5 * qp.hiB[0] else qp.loB[0]
    assert not tight.is_optimal(bad, tight.y, nums)


def test_kkt_test_catches_a_wrong_sign():
    # min (x1^2 + x2^2)/2 - x1 - x2 on the box [0, 1/2]^2: both at the upper bound, y = 1/2.
    A = sp.identity(2, format="csc")
    l, u, q = np.zeros(2), np.full(2, 0.5), -np.ones(2)
    x, y = np.full(2, 0.5), np.full(2, 0.5)
    assert is_qp_optimal(x, q, A, l, u, x, y, 1e-9, 1e-9)
    # x2 on its lower bound with y2 = 1: residuals vanish but y2 > 0 needs the upper bound
    x2, y2 = np.array([0.5, 0.0]), np.array([0.5, 1.0])
    assert np.allclose(x2 + q + A.T @ y2, 0)
    assert not is_qp_optimal(x2, q, A, l, u, x2, y2, 1e-9, 1e-9)
    # infeasible x
    x3 = np.array([0.5, 0.7])
    assert not is_qp_optimal(x3, q, A, l, u, x3, np.array([0.5, 0.3]), 1e-9, 1e-9)


def test_cvxpy_inner_solver_ignores_inexact(direct):
    dual = cached_duals(alpha=ALPHA)["multi_ks"]
    sol = solve(dual, "bound", solver="CLARABEL")
    assert sol.info["loose_iterations"] == 0
    assert sol.objective == pytest.approx(direct["multi_ks"].objective, rel=1e-8)


def test_inputs_are_not_modified():
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=9)
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=ALPHA)
    c, hi = dual.c.copy(), dual.hi.copy()
    start = np.full(dual.n, 0.3)
    kept = start.copy()
    solve(dual, "bound", warm_start=start, gap_tol=1e-9)
    np.testing.assert_array_equal(start, kept)
    np.testing.assert_array_equal(dual.c, c)
    np.testing.assert_array_equal(dual.hi, hi)


def test_bad_parameters_are_named():
    dual = cached_duals(alpha=ALPHA)["single_fs"]
    with pytest.raises(ValueError, match="gap_tol"):
        solve(dual, "bound", gap_tol=-1.0)
    with pytest.raises(TypeError, match="gap_tol"):
        solve(dual, "bound", gap_tol="tight")
    with pytest.raises(ValueError, match="tol"):
        solve(dual, "bound", tol=float("nan"))
    with pytest.raises(TypeError, match="inexact"):
        solve(dual, "bound", inexact="yes")
    with pytest.raises(ValueError, match="max_iter"):
        solve(dual, "bound", max_iter=0)
