"""The projected Newton / SMO solver (issue 7) against the direct exponential-cone solve.

Every MED model kind is solved both ways on small problems: the objectives must agree to
1e-6 relative, the Newton answer must satisfy the KKT conditions on its own, its objective
path must never decrease, and warm starts along (C, alpha) paths must save work. The plain
SVM is also checked against libsvm (scikit-learn's SVC).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from medmtl.kernels import LinearKernel, PolynomialKernel, RBFKernel
from medmtl.med.dual import (
    adaptive_pooling_dual,
    feature_selection_dual,
    kernel_selection_dual,
    svm_dual,
)
from medmtl.med.solvers import solve
from medmtl.med.solvers.newton import FactorRows, solve_newton
from medmtl.med.solvers.smo import ColumnCache


def _tasks(M, T, D, seed, noise=0.4):
    rng = np.random.default_rng(seed)
    w = np.zeros(D)
    w[: max(2, D // 3)] = rng.normal(size=max(2, D // 3)) + 1.0
    Xs, ys = [], []
    for _ in range(M):
        X = rng.normal(size=(T, D))
        score = X @ (w + 0.3 * rng.normal(size=D)) + noise * rng.normal(size=T)
        ys.append(np.where(score > np.median(score), 1, -1))
        Xs.append(X)
    return Xs, ys


def _regression_tasks(M, T, D, seed):
    rng = np.random.default_rng(seed)
    w = np.zeros(D)
    w[:2] = [1.5, -2.0]
    Xs = [rng.normal(size=(T, D)) for _ in range(M)]
    ys = [X @ (w + 0.2 * rng.normal(size=D)) + 0.1 * rng.normal(size=T) for X in Xs]
    return Xs, ys


BANK = [RBFKernel(0.1), LinearKernel(), PolynomialKernel(2, gamma=0.2)]


def _model(kind, alpha=3.0, C=1.0):
    Xs, ys = _tasks(3, 25, 6, seed=11)
    Xr, yr = _regression_tasks(2, 20, 5, seed=12)
    if kind == "svm_linear":
        return svm_dual(Xs[:1], ys[:1], "linear", C=C)
    if kind == "svm_rbf":
        return svm_dual(Xs[:1], ys[:1], RBFKernel(0.2), C=C)
    if kind == "fs_single":
        return feature_selection_dual(Xs[:1], ys[:1], C=C, alpha=alpha)
    if kind == "fs_single_sparse":
        return feature_selection_dual([sp.csr_matrix(np.where(np.abs(Xs[0]) > 0.7, Xs[0], 0.0))],
                                      ys[:1], C=C, alpha=alpha)
    if kind == "fs_multi":
        return feature_selection_dual(Xs, ys, C=C, alpha=alpha)
    if kind == "ks_single":
        return kernel_selection_dual(Xs[:1], ys[:1], BANK, C=C, alpha=alpha)
    if kind == "ks_multi":
        return kernel_selection_dual(Xs, ys, BANK, C=C, alpha=alpha)
    if kind == "pooling":
        return adaptive_pooling_dual(Xs, ys, "linear", C=C, alpha=alpha, task_scale=3.0)
    if kind == "pooling_rbf":
        return adaptive_pooling_dual(Xs, ys, RBFKernel(0.1), C=C, alpha=alpha, task_scale=3.0)
    if kind == "fs_regression":
        return feature_selection_dual(Xr[:1], yr[:1], C=C, alpha=alpha, regression=True, epsilon=0.1)
    if kind == "fs_multi_regression":
        return feature_selection_dual(Xr, yr, C=C, alpha=alpha, regression=True, epsilon=0.1)
    if kind == "ks_multi_regression":
        # (Clarabel fails on the direct solve of this regression with the polynomial kernel)
        return kernel_selection_dual(Xr, yr, BANK[:2], C=C, alpha=alpha, regression=True,
                                     epsilon=0.1)
    raise KeyError(kind)


KINDS = ["svm_linear", "svm_rbf", "fs_single", "fs_single_sparse", "fs_multi", "ks_single",
         "ks_multi", "pooling", "pooling_rbf", "fs_regression", "fs_multi_regression",
         "ks_multi_regression"]


def _reference(dual):
    """The direct exponential-cone solve; Clarabel sometimes stops at 'optimal_inaccurate'
    under the engine's 1e-10 tolerances, so retry at Clarabel's own defaults, and fall back
    to Algorithm 1 (both are independent of the solver under test)."""
    try:
        return solve(dual, method="direct")
    except RuntimeError:
        pass
    try:
        return solve(dual, method="direct", solver_options=dict(
            tol_gap_abs=1e-8, tol_gap_rel=1e-8, tol_feas=1e-8, tol_ktratio=1e-6))
    except RuntimeError:
        return solve(dual, method="bound")


def _assert_kkt(dual, lam, tol=1e-5):
    v = dual.kkt_violation(lam)
    scale = max(1.0, float(np.abs(dual.c).max()))
    assert v["stationarity"] <= tol * scale, v
    assert v["equality"] <= 1e-9 * scale, v
    assert v["bounds"] == 0.0, v


def _assert_monotone(path):
    path = np.asarray(path)
    assert path[0] == 0.0
    assert np.all(np.diff(path) >= -1e-12 * max(1.0, abs(path[-1]))), np.diff(path)


@pytest.mark.parametrize("alpha", [0.0, 3.0, 300.0])
@pytest.mark.parametrize("kind", KINDS)
def test_newton_matches_direct_and_is_optimal(kind, alpha):
    if kind.startswith("svm") and alpha:
        pytest.skip("the SVM has no switches: alpha plays no role")
    dual = _model(kind, alpha=alpha)
    ref = _reference(dual)
    sol = solve_newton(dual)
    assert sol.status == "converged"
    assert ref.objective > 0
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    # Optimal on its own terms, not only close to the reference value.
    _assert_kkt(dual, sol.lam)
    _assert_monotone(sol.objective_path)
    assert sol.objective_path[-1] == pytest.approx(sol.objective, rel=1e-14)
    assert sol.objective == pytest.approx(dual.objective(sol.lam), rel=1e-14)
    np.testing.assert_allclose(sol.switch_posterior, dual.switch_posterior(sol.lam))
    np.testing.assert_allclose(sol.intercepts, dual.intercepts(sol.lam))
    # The same optimum: u = Phi^T lam is unique where J is strictly concave in u.
    np.testing.assert_allclose(dual.switched_u(sol.lam), dual.switched_u(ref.lam), atol=2e-3)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_svm_matches_libsvm(kernel):
    Xs, ys = _tasks(1, 80, 5, seed=3, noise=1.0)
    X, y = Xs[0], ys[0]
    k = LinearKernel() if kernel == "linear" else RBFKernel(0.3)
    dual = svm_dual([X], [y], k, C=0.7)
    sol = solve_newton(dual)
    clf = SVC(kernel="linear" if kernel == "linear" else "rbf", gamma=0.3, C=0.7, tol=1e-10,
              shrinking=False).fit(X, y)
    lam_svc = np.zeros(y.size)
    lam_svc[clf.support_] = np.abs(clf.dual_coef_[0])
    assert sol.objective == pytest.approx(dual.objective(lam_svc), rel=1e-6)
    # libsvm's decision uses -rho as the intercept; the KKT intercept must agree with it
    assert sol.intercepts[0] == pytest.approx(clf.intercept_[0], abs=1e-4)
    K = k(X, X)
    f = K @ (y * sol.lam) + sol.intercepts[0]
    np.testing.assert_array_equal(np.sign(f), np.sign(clf.decision_function(X)))


def test_alpha_zero_feature_selection_is_the_svm():
    Xs, ys = _tasks(1, 40, 5, seed=4)
    a = solve_newton(feature_selection_dual(Xs, ys, C=1.0, alpha=0.0))
    b = solve_newton(svm_dual(Xs, ys, "linear", C=1.0))
    assert a.objective == pytest.approx(b.objective, rel=1e-8)
    assert a.n_iter == 1  # J is quadratic: one Newton step is the whole solve


def test_warm_starts_along_paths_save_work():
    Xs, ys = _tasks(3, 30, 8, seed=5)
    alphas = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
    cold_iter = warm_iter = cold_steps = warm_steps = 0
    lam = None
    for alpha in alphas:
        dual = feature_selection_dual(Xs, ys, C=1.0, alpha=alpha)
        cold = solve_newton(dual)
        warm = solve_newton(dual, warm_start=lam)
        assert warm.objective == pytest.approx(cold.objective, rel=1e-8)
        _assert_monotone(warm.objective_path - warm.objective_path[0] if lam is not None
                         else warm.objective_path)
        cold_iter += cold.n_iter
        warm_iter += warm.n_iter
        cold_steps += sum(cold.info["smo_steps"])
        warm_steps += sum(warm.info["smo_steps"])
        lam = warm.lam
    assert warm_iter < cold_iter
    assert warm_steps < cold_steps
    # along C the previous solution is clipped into the new box
    lam = None
    cold_steps = warm_steps = 0
    for C in [0.25, 0.5, 1.0, 2.0]:
        dual = feature_selection_dual(Xs, ys, C=C, alpha=2.0)
        cold = solve_newton(dual)
        warm = solve_newton(dual, warm_start=lam)
        assert warm.objective == pytest.approx(cold.objective, rel=1e-8)
        cold_steps += sum(cold.info["smo_steps"])
        warm_steps += sum(warm.info["smo_steps"])
        lam = warm.lam
    assert warm_steps < cold_steps


def test_optimal_warm_start_returns_at_once():
    dual = _model("fs_multi")
    sol = solve_newton(dual)
    again = solve_newton(dual, warm_start=sol.lam)
    assert again.n_iter <= 1
    assert again.objective == pytest.approx(sol.objective, rel=1e-10)


@pytest.mark.parametrize("options", [{"cache_size": 1e-4}, {"shrinking": False},
                                     {"cache_size": 0.02, "shrinking": True}])
def test_cache_eviction_and_shrinking_do_not_change_the_answer(options):
    dual = _model("pooling_rbf")  # the column-cache path (pooling couples the tasks)
    ref = solve_newton(dual)
    sol = solve_newton(dual, solver_options=options)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    _assert_kkt(dual, sol.lam)


@pytest.mark.parametrize("kind", ["ks_multi", "fs_multi_regression"])
def test_task_block_path_agrees_with_the_column_cache_path(kind):
    dual = _model(kind, alpha=30.0)
    blocks = solve_newton(dual)
    generic = solve_newton(dual, solver_options={"group_grams": False})
    assert blocks.objective == pytest.approx(generic.objective, rel=1e-9)
    no_shrink = solve_newton(dual, solver_options={"shrinking": False})
    assert no_shrink.objective == pytest.approx(generic.objective, rel=1e-9)


def test_column_cache_matches_explicit_hessian():
    dual = _model("pooling_rbf")
    rows = FactorRows.of(dual)
    F = rows.F.toarray()
    rng = np.random.default_rng(0)
    lam = dual.project(rng.uniform(0, 1, dual.n))
    u = F.T @ lam
    q = dual.half_sq_norms(u[rows.r0:])
    s = 1.0 / (1.0 + dual.alpha * np.exp(-q))
    tau = s * (1 - s)
    # the exact Hessian of -J at lam, written out naively
    H = F[:, : rows.r0] @ F[:, : rows.r0].T
    for t in range(dual.n_terms):
        cols = rows.r0 + np.arange(dual.term_ptr[t], dual.term_ptr[t + 1])
        Ft = F[:, cols]
        v = Ft @ u[cols]
        H += s[t] * Ft @ Ft.T + tau[t] * np.outer(v, v)
    from medmtl.med.solvers.newton import _Curvature

    cache = ColumnCache(rows.F, None, 1.0 / dual.a, _Curvature(dual, rows, u, s, tau), 1 << 20)
    idx = [0, 5, 40, 74]
    cache.fill(idx)
    Q = H / np.outer(dual.a, dual.a)
    for i in idx:
        np.testing.assert_allclose(cache.cache[cache.slot_of[i]], Q[:, i], rtol=1e-10, atol=1e-10)


def test_iteration_cap_warns():
    dual = _model("fs_multi", alpha=300.0)
    with pytest.warns(ConvergenceWarning):
        sol = solve_newton(dual, max_iter=1)
    assert sol.status == "max_iter"
    _assert_monotone(sol.objective_path)
    # still a feasible point
    assert dual.kkt_violation(sol.lam)["equality"] <= 1e-9


def test_bad_input_and_no_side_effects():
    dual = _model("fs_single")
    before = {k: np.copy(getattr(dual, k)) for k in ("c", "lo", "hi", "a")}
    Phi = dual.Phi.copy() if not sp.issparse(dual.Phi) else dual.Phi.toarray()
    warm = np.full(dual.n, 0.5)
    warm_copy = warm.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solve_newton(dual, warm_start=warm)
    np.testing.assert_array_equal(warm, warm_copy)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(dual, k), v)
    np.testing.assert_array_equal(dual.Phi.toarray() if sp.issparse(dual.Phi) else dual.Phi, Phi)
    with pytest.raises(ValueError, match="warm_start"):
        solve_newton(dual, warm_start=np.zeros(dual.n + 1))
    with pytest.raises(ValueError, match="NaN"):
        solve_newton(dual, warm_start=np.full(dual.n, np.nan))
    with pytest.raises(ValueError, match="unknown options"):
        solve_newton(dual, solver_options={"bogus": 1})
    with pytest.raises(ValueError, match="solver"):
        solve_newton(dual, solver="OSQP")
    with pytest.raises(ValueError, match="max_iter"):
        solve_newton(dual, max_iter=0)
    with pytest.raises(ValueError, match="kkt_tol"):
        solve_newton(dual, solver_options={"kkt_tol": -1})


def test_auto_picks_a_correct_solver():
    from medmtl.med.solvers.newton import solve_auto

    for kind in ("fs_multi", "svm_linear"):
        dual = _model(kind)
        sol = solve_auto(dual, solver="OSQP")  # another method's solver name is ignored
        assert sol.method == "newton"
        assert sol.objective == pytest.approx(_reference(dual).objective, rel=1e-6)
    # a long, narrow linear SVM goes to the interior-point QP
    Xs, ys = _tasks(1, 2000, 3, seed=9, noise=1.0)
    dual = svm_dual(Xs, ys, "linear", C=1.0)
    sol = solve_auto(dual)
    assert sol.method == "direct"
    assert sol.objective == pytest.approx(solve_newton(dual).objective, rel=1e-6)
