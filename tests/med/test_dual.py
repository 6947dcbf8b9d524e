"""The factored dual (medmtl.med.dual) against naive formulas written from the JMLR paper's
equations; its kernel operators against explicit Gram matrices; its workspace; and its CVXPY
form, with and without Theorem 1's bound."""

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.kernels import (
    CallableKernel,
    LinearKernel,
    PolynomialKernel,
    RBFKernel,
    gram,
    per_feature_kernels,
)
from medmtl.med.builders import adaptive_pooling_dual, feature_selection_dual, kernel_selection_dual, svm_dual
from medmtl.med.dual import MEDDual
from medmtl.med.grams import FactorGram, KernelGram, factorize_gram
from med_testdata import BANK, cached_duals, make_regression_tasks, make_tasks, naive_objective


def random_feasible(dual, rng):
    return dual.project(rng.uniform(0, 1, size=dual.n) * dual.hi)


def naive_J(lam, c, H0, Hs, alpha):
    J = c @ lam
    if H0 is not None:
        J -= 0.5 * lam @ H0 @ lam
    for H in Hs:
        J -= np.log(alpha + np.exp(0.5 * lam @ H @ lam)) - np.log(alpha + 1)
    return J


def blockdiag(blocks):
    return sp.block_diag(blocks).toarray()


def test_multitask_feature_selection_matches_paper_formula():
    Xs, ys = make_tasks(M=3, T=8, D=4, seed=0)
    alpha = 1.7
    dual = feature_selection_dual(Xs, ys, C=2.0, alpha=alpha)
    # JMLR Section 6: H_d[(m,t),(n,tau)] = delta_mn y x(d) y' x'(d).
    Hs = [blockdiag([np.outer(y * X[:, d], y * X[:, d]) for X, y in zip(Xs, ys)]) for d in range(4)]
    rng = np.random.default_rng(0)
    for _ in range(5):
        lam = random_feasible(dual, rng)
        assert dual.objective(lam) == pytest.approx(naive_J(lam, np.ones(dual.n), None, Hs, alpha), rel=1e-12)
        q = np.array([0.5 * lam @ H @ lam for H in Hs])
        np.testing.assert_allclose(dual.switch_posterior(lam), 1 / (1 + alpha * np.exp(-q)), rtol=1e-12)
    assert dual.objective(np.zeros(dual.n)) == 0.0


def test_kernel_selection_and_pooling_match_paper_formula():
    Xs, ys = make_tasks(M=2, T=7, D=3, seed=1)
    alpha = 0.8
    dual = kernel_selection_dual(Xs, ys, BANK, C=1.0, alpha=alpha)
    Hs = [blockdiag([np.outer(y, y) * gram(k, X) for X, y in zip(Xs, ys)]) for k in BANK]
    pool = adaptive_pooling_dual(Xs, ys, RBFKernel(0.3), C=1.0, alpha=alpha, shared_scale=0.5, task_scale=4.0)
    Xall, yall = np.vstack(Xs), np.concatenate(ys)
    H0 = 0.5 * np.outer(yall, yall) * gram(RBFKernel(0.3), Xall)
    Hp = []
    for m, (X, y) in enumerate(zip(Xs, ys)):
        blocks = [np.zeros((len(yy), len(yy))) for yy in ys]
        blocks[m] = 4.0 * np.outer(y, y) * gram(RBFKernel(0.3), X)
        Hp.append(blockdiag(blocks))
    rng = np.random.default_rng(1)
    for _ in range(5):
        lam = random_feasible(dual, rng)
        assert dual.objective(lam) == pytest.approx(naive_J(lam, np.ones(dual.n), None, Hs, alpha), rel=1e-9)
        assert pool.objective(lam) == pytest.approx(naive_J(lam, np.ones(dual.n), H0, Hp, alpha), rel=1e-9)


def test_regression_matches_paper_formula():
    Xs, ys = make_regression_tasks(M=2, T=6, D=3, seed=3)
    eps, alpha = 0.2, 1.3
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=alpha, regression=True, epsilon=eps)
    rng = np.random.default_rng(2)
    lam = random_feasible(dual, rng)
    # JMLR Section 9, per task [lam; lam*]: y(lam - lam*) - eps(lam + lam*) - sum_d log-terms.
    J = 0.0
    betas = []
    for m, (X, y) in enumerate(zip(Xs, ys)):
        g = dual.groups[m]
        l, ls = lam[g][:6], lam[g][6:]
        J += y @ (l - ls) - eps * np.sum(l + ls)
        betas.append((l, ls))
    for d in range(3):
        q = 0.5 * sum((X[:, d] @ (l - ls)) ** 2 for X, (l, ls) in zip(Xs, betas))
        J -= np.log(alpha + np.exp(q)) - np.log(alpha + 1)
    assert dual.objective(lam) == pytest.approx(J, rel=1e-12)
    for m, g in enumerate(dual.groups):
        assert dual.a[g] @ lam[g] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("name", ["svm", "single_fs", "multi_ks", "pooling", "multi_regression"])
def test_gradient_matches_finite_differences(name):
    dual = cached_duals()[name]
    rng = np.random.default_rng(7)
    lam = random_feasible(dual, rng) * 0.3
    g = dual.gradient(lam)
    h = 1e-6
    for i in rng.choice(dual.n, size=6, replace=False):
        e = np.zeros(dual.n)
        e[i] = h
        fd = (dual.objective(lam + e) - dual.objective(lam - e)) / (2 * h)
        assert g[i] == pytest.approx(fd, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("regression", [False, True])
def test_sparse_and_dense_give_the_same_dual(regression):
    # the signed rows of sparse inputs (each example's rows twice for regression) are the
    # dense ones, in arrays of the dual's own: the caller's matrices are left as they were
    Xs, ys = (make_regression_tasks(2, 10, 5, seed=4) if regression else make_tasks(M=2, T=10, D=5, seed=4))
    Xs[0][:, 1] = 0.0
    dense = feature_selection_dual(Xs, ys, C=1.0, alpha=1.0, regression=regression)
    mats = [sp.csr_matrix(X) for X in Xs]
    before = [M.copy() for M in mats]
    sparse = feature_selection_dual(mats, ys, C=1.0, alpha=1.0, regression=regression)
    lam = random_feasible(dense, np.random.default_rng(0))
    assert dense.objective(lam) == pytest.approx(sparse.objective(lam), rel=1e-13)
    np.testing.assert_allclose(dense.gradient(lam), sparse.gradient(lam), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(sparse.Phi.toarray(), np.asarray(sp.csr_matrix(dense.Phi).toarray()))
    for M, old in zip(mats, before):
        assert (M != old).nnz == 0 and not np.shares_memory(M.data, sparse.Phi.data)


def test_project_gives_feasible_points():
    dual = cached_duals()["multi_regression"]
    rng = np.random.default_rng(5)
    for _ in range(10):
        x = dual.project(rng.normal(size=dual.n) * 3)
        assert np.all(x >= dual.lo) and np.all(x <= dual.hi)
        for g in dual.groups:
            assert abs(dual.a[g] @ x[g]) <= 1e-12 * max(1, np.abs(x[g]).sum())
    # A feasible point is its own projection.
    z = dual.project(rng.uniform(0, 1, dual.n))
    np.testing.assert_allclose(dual.project(z), z, atol=1e-14)


def test_intercept_is_kkt_bias_for_svm():
    # Free multipliers satisfy y_t (f0(x_t) + b) = 1, so b = y_t - f0(x_t).
    Xs, ys = make_tasks(M=1, T=12, D=2, seed=6)
    X, y = Xs[0], ys[0]
    dual = svm_dual([X], [y], LinearKernel(), C=10.0)
    lam = dual.project(np.full(12, 0.5))
    f0 = X @ X.T @ (y * lam)
    b = dual.intercepts(lam)[0]
    assert b == pytest.approx(np.mean(y - f0), rel=1e-12)


def test_intercept_midpoint_when_no_free_multiplier():
    d = MEDDual(c=[1.0, 1.0], lo=0, hi=1.0, a=[1.0, -1.0], groups=[np.arange(2)],
                Phi0=np.array([[0.1], [0.1]]))
    # Both at the upper bound: the allowed interval for b is [grad_2/a_2, grad_1/a_1].
    lam = np.array([1.0, 1.0])
    g = d.gradient(lam)
    assert d.intercepts(lam)[0] == pytest.approx(0.5 * (g[0] / 1.0 + g[1] / -1.0))


def test_factorize_gram_and_non_psd():
    K = gram(RBFKernel(0.5), np.random.default_rng(0).normal(size=(9, 2)))
    L = factorize_gram(K)
    np.testing.assert_allclose(L @ L.T, K, atol=1e-9)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        factorize_gram(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        factorize_gram(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        kernel_selection_dual(*make_tasks(M=1, T=5, D=2), [lambda A, B: -(A @ B.T)], C=1.0)


def test_bad_dual_specs():
    with pytest.raises(ValueError, match="partition"):
        MEDDual(c=[1, 1], lo=0, hi=1, a=[1, -1], groups=[np.array([0])])
    with pytest.raises(ValueError, match="partition"):
        MEDDual(c=[1, 1], lo=0, hi=1, a=[1, -1], groups=[np.array([0]), np.array([0])])
    with pytest.raises(ValueError, match="lo <= 0 <= hi"):
        MEDDual(c=[1, 1], lo=0.5, hi=1, a=[1, -1], groups=[np.arange(2)])
    with pytest.raises(ValueError, match="alpha"):
        MEDDual(c=[1, 1], lo=0, hi=1, a=[1, -1], groups=[np.arange(2)], alpha=-1.0)
    with pytest.raises(ValueError, match="rows"):
        MEDDual(c=[1, 1], lo=0, hi=1, a=[1, -1], groups=[np.arange(2)], Phi0=np.ones((3, 1)))


# ---------------------------------------------------------------------------------------
# Kernel terms held as kernel columns on demand
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
    assert ks.workspace.switched_factors is None
    assert copy.Phi.shape[0] == ks.n and ks.term_ptr.size == 5
    assert copy.Phi is ks.Phi


# ---------------------------------------------------------------------------------------
# The workspace and the CVXPY form
# ---------------------------------------------------------------------------------------
def test_copies_share_one_workspace_and_its_factors():
    Xs, ys = make_tasks(M=2, T=10, D=3, seed=9)
    dual = svm_dual(Xs, ys, RBFKernel(0.5), C=1.0)
    path = [dual.replace(C=C) for C in (0.5, 2.0)] + [dual.replace(alpha=3.0)]
    assert all(d.workspace is dual.workspace for d in path)
    assert dual.workspace.shared_factor is None
    factor = path[0].Phi0  # built on first use, once for every copy
    assert dual.workspace.shared_factor is factor and path[2].Phi0 is factor
    with pytest.raises(AttributeError):
        dual.workspace.factor_row = None  # the names are fixed


@pytest.mark.parametrize("name", ["svm", "single_fs", "multi_ks", "pooling", "multi_regression"])
def test_to_cvxpy_is_j_on_the_feasible_set(name):
    dual = cached_duals()[name]
    problem, lam = dual.to_cvxpy()
    assert problem.is_dcp() and lam.shape == (dual.n,)
    rng = np.random.default_rng(3)
    for _ in range(3):
        lam.value = random_feasible(dual, rng)
        assert problem.objective.value == pytest.approx(naive_objective(dual, lam.value), rel=1e-9)
        assert all(np.all(c.violation() <= 1e-12) for c in problem.constraints)
    lam.value = np.full(dual.n, 2.0 * dual.hi.max())
    assert max(float(np.max(c.violation())) for c in problem.constraints) > 0


@pytest.mark.parametrize("name", ["single_fs", "multi_ks", "pooling", "multi_regression"])
def test_the_bound_qp_touches_j_and_stays_below_it(name):
    dual = cached_duals(alpha=5.0)[name]
    rng = np.random.default_rng(4)
    at = random_feasible(dual, rng) * 0.5
    problem, lam = dual.to_cvxpy(bound_at=at)
    assert problem.is_dcp() and problem.objective.args[0].is_quadratic()
    lam.value = at
    assert problem.objective.value == pytest.approx(dual.objective(at), rel=1e-10)
    for _ in range(5):
        lam.value = random_feasible(dual, rng)
        assert problem.objective.value <= dual.objective(lam.value) + 1e-10
    # alpha = 0: the bound is J itself
    exact = dual.replace(alpha=0.0)
    qp, x = exact.to_cvxpy(bound_at=at)
    x.value = random_feasible(dual, rng)
    assert qp.objective.value == pytest.approx(exact.objective(x.value), rel=1e-10)
    with pytest.raises(ValueError, match="bound_at"):
        dual.to_cvxpy(bound_at=np.zeros(dual.n + 1))


def test_the_bound_qp_goes_to_any_qp_solver():
    dual = cached_duals(alpha=5.0)["multi_fs"]
    at = dual.project(np.full(dual.n, 0.5))
    values = []
    for solver in ("OSQP", "CLARABEL"):
        problem, _ = dual.to_cvxpy(bound_at=at)
        settings = dict(eps_abs=1e-9, eps_rel=1e-9) if solver == "OSQP" else {}
        problem.solve(solver=solver, **settings)
        values.append(problem.value)
    assert values[0] == pytest.approx(values[1], rel=1e-6)
    assert values[1] >= dual.objective(at)


# ------------------------------------------------------------------------------ label convention
BUILDERS = {
    "svm_dual": lambda Xs, ys: svm_dual(Xs, ys, "linear", C=1.0),
    "feature_selection_dual": lambda Xs, ys: feature_selection_dual(Xs, ys, C=1.0, alpha=1.0),
    "kernel_selection_dual": lambda Xs, ys: kernel_selection_dual(Xs, ys, ["linear", RBFKernel(0.5)], C=1.0,
                                                                  alpha=1.0),
    "adaptive_pooling_dual": lambda Xs, ys: adaptive_pooling_dual(Xs, ys, "linear", C=1.0, alpha=1.0),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("relabel, shown", [
    (lambda y: (y + 1) // 2, "[1, 0]"),
    (lambda y: np.where(y > 0, "yes", "no"), "['yes', 'no']"),
    (lambda y: y > 0, "[True, False]"),
    (lambda y: np.where(np.arange(y.size) == 3, np.nan, y), "nan"),
])
def test_the_builders_take_labels_in_plus_minus_one_only(name, relabel, shown):
    Xs, ys = make_tasks(M=2, T=10, D=3)
    ys = [np.r_[1, -1, y[2:]] for y in ys]
    with pytest.raises(ValueError) as err:
        BUILDERS[name](Xs, [ys[0], relabel(ys[1])])
    message = str(err.value)
    assert message.startswith(f"{name}: ys[1] must hold classification labels in {{-1, +1}}")
    assert shown in message and "estimators" in message and "any two labels" in message


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_plus_minus_one_labels_as_ints_or_floats_build_the_same_dual(name):
    Xs, ys = make_tasks(M=2, T=10, D=3)
    rng = np.random.default_rng(0)
    as_int, as_float = BUILDERS[name](Xs, ys), BUILDERS[name](Xs, [y.astype(float) for y in ys])
    lam = random_feasible(as_int, rng)
    assert as_int.objective(lam) == as_float.objective(lam)


def test_the_builders_regression_targets_stay_real_numbers():
    Xs, ys = make_regression_tasks(M=2, T=10, D=3)
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=1.0, regression=True, epsilon=0.1)
    assert dual.n == 40


def test_ising_structure_takes_spins_in_plus_minus_one_only():
    from medmtl.med.builders import ising_structure_dual

    X = np.array([[1, 1, -1], [-1, -1, 1], [1, -1, 1], [-1, 1, -1]], dtype=float)
    assert ising_structure_dual(X).n == 12
    with pytest.raises(ValueError, match=r"ising_structure_dual: X must hold spins in \{-1, \+1\}; found \[1.0, 0.0\]"
                                         ".*MEDGraphicalModel takes samples coded \\{0, 1\\}"):
        ising_structure_dual((X + 1) / 2)
