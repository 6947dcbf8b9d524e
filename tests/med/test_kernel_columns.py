"""Kernel terms held as kernel columns on demand (issue 7): KernelGram and the solvers on it.

The kernel operators are checked against Gram matrices written out naively; the Newton
solver on a kernel dual (no n x n factor ever built) is checked against libsvm, against the
same dual given by explicit factors, and against the direct exponential-cone solve, and for
optimality on its own terms (KKT).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC, SVR

from medmtl.kernels import CallableKernel, LinearKernel, PolynomialKernel, RBFKernel, per_feature_kernels
from medmtl.med.dual import (
    FactorGram,
    KernelGram,
    MEDDual,
    adaptive_pooling_dual,
    kernel_selection_dual,
    svm_dual,
)
from medmtl.med.solvers import solve
from medmtl.med.solvers.newton import GroupGrams, solve_auto, solve_newton
from med_testdata import make_regression_tasks, make_tasks


def _factored_copy(dual):
    """The same dual with every term given by an explicit factor (the old representation)."""
    return MEDDual(c=dual.c, lo=dual.lo, hi=dual.hi, a=dual.a, groups=dual.groups,
                   Phi0=dual.Phi0, Phi=dual.Phi, term_ptr=dual.term_ptr if dual.n_terms else None,
                   alpha=dual.alpha)


def _assert_kkt(dual, lam, tol=1e-5):
    v = dual.kkt_violation(lam)
    scale = max(1.0, float(np.abs(dual.c).max()))
    assert v["stationarity"] <= tol * scale, v
    assert v["equality"] <= 1e-9 * scale, v
    assert v["bounds"] == 0.0, v


# ---------------------------------------------------------------------------------------
# The operator
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_gram_matches_the_explicit_matrix(sparse):
    rng = np.random.default_rng(0)
    k = PolynomialKernel(2, gamma=0.3)
    X1, X2 = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    s1, s2 = rng.choice([-1.0, 1.0], 5), rng.choice([-1.0, 1.0], 4)
    # the second block's rows are not contiguous in the multipliers
    rows1, rows2 = np.arange(5), np.array([8, 5, 7, 6])
    conv = sp.csr_matrix if sparse else np.asarray
    H = KernelGram(k, [(rows1, conv(X1), s1), (rows2, conv(X2), s2)], 9, scale=2.5)
    full = np.zeros((9, 9))
    full[np.ix_(rows1, rows1)] = 2.5 * np.outer(s1, s1) * k(X1, X1)
    full[np.ix_(rows2, rows2)] = 2.5 * np.outer(s2, s2) * k(X2, X2)
    x = rng.normal(size=9)
    x[[1, 6]] = 0.0
    idx = [7, 0, 3, 5]
    np.testing.assert_allclose(H.columns(idx), full[:, idx], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H.rows(idx), full[idx], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H.diag(), np.diag(full), rtol=1e-12)
    np.testing.assert_allclose(H.matvec(x), full @ x, rtol=1e-12, atol=1e-12)
    assert H.quad(x) == pytest.approx(x @ full @ x, rel=1e-12)
    np.testing.assert_allclose(H.gram_on(rows2), full[np.ix_(rows2, rows2)], rtol=1e-12, atol=1e-12)
    L = H.factor()
    L = L.toarray() if sp.issparse(L) else L
    np.testing.assert_allclose(L @ L.T, full, atol=1e-9)
    # accumulation into a given output with a weight
    out = np.ones((len(idx), 9))
    H.rows(idx, out, 0.5)
    np.testing.assert_allclose(out, 1.0 + 0.5 * full[idx], rtol=1e-12)
    G = FactorGram(rng.normal(size=(9, 2)))
    np.testing.assert_allclose(G.columns(idx), (G.F @ G.F.T)[:, idx], rtol=1e-12)
    with pytest.raises(ValueError, match="disjoint"):
        KernelGram(k, [(rows1, X1, s1), (rows1, X1, s1)], 9)


def test_kernel_diagonals():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(7, 3))
    for k in [RBFKernel(0.4), PolynomialKernel(3, gamma=0.5, coef0=2.0), LinearKernel()]:
        np.testing.assert_allclose(k.diag(X), np.diag(k(X, X)), rtol=1e-12)
        np.testing.assert_allclose(k.diag(sp.csr_matrix(X)), np.diag(k(X, X)), rtol=1e-12)
    # the generic diagonal, in blocks, for a kernel of unknown kind
    k = CallableKernel(lambda A, B: (A @ B.T + 1.0) ** 2)
    X = rng.normal(size=(300, 2))
    np.testing.assert_allclose(k.diag(X), np.diag(k(X, X)), rtol=1e-12)
    assert RBFKernel().mercer and not PolynomialKernel(2, coef0=-1.0).mercer
    assert not CallableKernel(lambda A, B: A @ B.T).mercer


def test_kernels_without_a_feature_map_are_held_as_kernel_columns():
    Xs, ys = make_tasks(M=2, T=12, D=3, seed=2)
    svm = svm_dual(Xs[:1], ys[:1], RBFKernel(0.5), C=1.0)
    assert svm.has_kernels and isinstance(svm.shared_gram(), KernelGram)
    ks = kernel_selection_dual(Xs, ys, [RBFKernel(0.5), LinearKernel()] + per_feature_kernels(2),
                               C=1.0, alpha=1.0)
    assert [type(G).__name__ for G in ks.term_grams()] == ["KernelGram"] + ["FactorGram"] * 3
    # a linear kernel keeps its feature map; a kernel of unknown kind is factorised (checked) at once
    assert not svm_dual(Xs, ys, "linear").has_kernels
    assert not svm_dual(Xs, ys, CallableKernel(lambda A, B: (A @ B.T) ** 2)).has_kernels
    with pytest.raises(ValueError, match="not positive semi-definite"):
        svm_dual(Xs, ys, PolynomialKernel(1, coef0=-50.0))
    # factors stay available to the solvers that need them, built once for every copy
    copy = ks.replace(alpha=3.0)
    assert "Phi" not in ks._lazy
    assert copy.Phi.shape[0] == ks.n and ks.term_ptr.size == 5
    assert copy.Phi is ks.Phi


# ---------------------------------------------------------------------------------------
# The Newton solver on kernel columns
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("cache_size", [256.0, 0.004])
def test_rbf_svm_on_kernel_columns_is_libsvm(cache_size):
    Xs, ys = make_tasks(M=1, T=150, D=4, seed=3, noise=1.0)
    X, y = Xs[0], ys[0]
    dual = svm_dual([X], [y], RBFKernel(0.4), C=0.8)
    sol = solve_newton(dual, solver_options={"cache_size": cache_size})
    assert sol.info["model"] == "KernelModel"
    assert "Phi0" not in dual._lazy  # no n x n factor was built
    if cache_size < 1:
        assert sol.info["columns"] > dual.n  # columns were evicted and recomputed
    clf = SVC(kernel="rbf", gamma=0.4, C=0.8, tol=1e-10, shrinking=False).fit(X, y)
    lam_svc = np.zeros(y.size)
    lam_svc[clf.support_] = np.abs(clf.dual_coef_[0])
    assert sol.objective == pytest.approx(dual.objective(lam_svc), rel=1e-6)
    _assert_kkt(dual, sol.lam)
    assert sol.intercepts[0] == pytest.approx(clf.intercept_[0], abs=1e-4)
    f = RBFKernel(0.4)(X, X) @ (y * sol.lam) + sol.intercepts[0]
    np.testing.assert_array_equal(np.sign(f), np.sign(clf.decision_function(X)))


def test_rbf_svr_on_kernel_columns_is_libsvm():
    Xs, ys = make_regression_tasks(M=1, T=60, D=3, seed=4)
    X, y = Xs[0], ys[0]
    dual = svm_dual([X], [y], RBFKernel(0.3), C=2.0, regression=True, epsilon=0.2)
    sol = solve_newton(dual)
    assert sol.info["model"] == "KernelModel"
    reg = SVR(kernel="rbf", gamma=0.3, C=2.0, epsilon=0.2, tol=1e-10, shrinking=False).fit(X, y)
    coef = np.zeros(y.size)
    coef[reg.support_] = reg.dual_coef_[0]
    lam_svr = np.concatenate([np.maximum(coef, 0), np.maximum(-coef, 0)])
    assert sol.objective == pytest.approx(dual.objective(lam_svr), rel=1e-6)
    _assert_kkt(dual, sol.lam)
    T = y.size
    pred = RBFKernel(0.3)(X, X) @ (sol.lam[:T] - sol.lam[T:]) + sol.intercepts[0]
    np.testing.assert_allclose(pred, reg.predict(X), atol=1e-3)


def _kernel_duals():
    Xs, ys = make_tasks(M=3, T=25, D=4, seed=5)
    bank = [RBFKernel(0.2), PolynomialKernel(2, gamma=0.3), LinearKernel()] + per_feature_kernels(2)
    return {
        # single task: kernel columns with switched terms (line search on kernel products)
        "ks_single": kernel_selection_dual(Xs[:1], ys[:1], bank, C=1.0, alpha=5.0),
        # multi task: per-task Gram blocks from kernel evaluations
        "ks_multi": kernel_selection_dual(Xs, ys, bank, C=1.0, alpha=5.0),
        # a shared model over all tasks: kernel columns across tasks
        "pooling": adaptive_pooling_dual(Xs, ys, RBFKernel(0.3), C=1.0, alpha=5.0, task_scale=3.0),
        "svm_multi": svm_dual(Xs, ys, RBFKernel(0.3), C=1.0),
    }


@pytest.mark.parametrize("kind,model", [("ks_single", "KernelModel"), ("ks_multi", "BlockModel"),
                                        ("pooling", "KernelModel"), ("svm_multi", "BlockModel")])
def test_kernel_models_match_their_factored_form_and_the_direct_solve(kind, model):
    dual = _kernel_duals()[kind]
    sol = solve_newton(dual)
    assert sol.status == "converged" and sol.info["model"] == model
    assert "Phi0" not in dual._lazy and ("Phi" not in dual._lazy or dual._terms is None)
    assert sol.objective == pytest.approx(dual.objective(sol.lam), rel=1e-12)
    _assert_kkt(dual, sol.lam)
    np.testing.assert_allclose(sol.switch_posterior, dual.switch_posterior(sol.lam), rtol=1e-9)
    np.testing.assert_allclose(sol.intercepts, dual.intercepts(sol.lam), rtol=1e-7, atol=1e-9)
    factored = _factored_copy(dual)
    ref = solve_newton(factored)
    assert ref.info["model"] == "FactorModel"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    assert factored.objective(sol.lam) == pytest.approx(sol.objective, rel=1e-10)
    direct = solve(dual, method="direct", solver_options=dict(
        tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9, tol_ktratio=1e-7))
    assert sol.objective == pytest.approx(direct.objective, rel=1e-6)
    assert sol.objective >= direct.objective - 1e-9 * abs(direct.objective)


def test_kernel_paths_warm_start_and_agree_with_cold_solves():
    dual = _kernel_duals()["ks_multi"]
    lam, warm_steps, cold_steps = None, 0, 0
    for alpha in [0.5, 2.0, 8.0]:
        d = dual.replace(alpha=alpha)
        cold = solve_newton(d)
        warm = solve_newton(d, warm_start=lam)
        assert warm.objective == pytest.approx(cold.objective, rel=1e-9)
        warm_steps += sum(warm.info["smo_steps"])
        cold_steps += sum(cold.info["smo_steps"])
        lam = warm.lam
    assert warm_steps < cold_steps
    # the block products of the last answer are reused by a warm start from it
    again = solve_newton(dual.replace(alpha=8.0), warm_start=lam)
    assert again.n_iter <= 1 and again.objective == pytest.approx(warm.objective, rel=1e-12)


def test_block_gram_grouping_needs_tasks_apart():
    Xs, ys = make_tasks(M=2, T=6, D=2, seed=6)
    assert GroupGrams.from_operators(svm_dual(Xs, ys, RBFKernel(1.0))).ok
    # one task, or a model shared across tasks: no block grouping
    assert not GroupGrams.from_operators(svm_dual(Xs[:1], ys[:1], RBFKernel(1.0))).ok
    assert not GroupGrams.from_operators(adaptive_pooling_dual(Xs, ys, RBFKernel(1.0))).ok


def test_auto_and_the_factor_methods_on_a_kernel_dual():
    Xs, ys = make_tasks(M=1, T=30, D=3, seed=7)
    dual = svm_dual(Xs, ys, RBFKernel(0.5), C=1.0)
    auto = solve_auto(dual)
    assert auto.method == "newton" and auto.info["model"] == "KernelModel"
    assert "Phi0" not in dual._lazy
    # Algorithm 1 and the direct solve build the factor on first use, and agree
    for method in ("bound", "direct"):
        other = solve(dual, method=method)
        assert other.objective == pytest.approx(auto.objective, rel=1e-6)
    assert "Phi0" in dual._lazy


def test_kernel_solve_leaves_inputs_alone():
    Xs, ys = make_tasks(M=2, T=15, D=3, seed=8)
    copies = [X.copy() for X in Xs], [y.copy() for y in ys]
    dual = kernel_selection_dual(Xs, ys, [RBFKernel(0.3), PolynomialKernel(2)], C=1.0, alpha=2.0)
    warm = np.full(dual.n, 0.3)
    warm_copy = warm.copy()
    c, a = dual.c.copy(), dual.a.copy()
    solve_newton(dual, warm_start=warm)
    solve_newton(dual, solver_options={"group_grams": False})
    np.testing.assert_array_equal(warm, warm_copy)
    np.testing.assert_array_equal(dual.c, c)
    np.testing.assert_array_equal(dual.a, a)
    for X, X0 in zip(Xs, copies[0]):
        np.testing.assert_array_equal(X, X0)
    for y, y0 in zip(ys, copies[1]):
        np.testing.assert_array_equal(y, y0)
    with pytest.raises(ValueError, match="cache_size"):
        solve_newton(dual, solver_options={"cache_size": 0})
