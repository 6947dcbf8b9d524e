"""``method="cd"`` (medmtl.med.solvers.coordinate) against the direct exponential-cone solve.

Every factor model kind (linear SVM and SVR, feature selection dense and sparse, single and
multi-task, per-feature kernels, adaptive pooling with a linear kernel) is solved both ways:
the objectives must agree to 1e-6 relative, the answer must meet the KKT conditions on its
own and the equalities exactly, and what it reports must be ``J``, the posteriors and the
biases at its multipliers.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from medmtl.kernels import RBFKernel, per_feature_kernels
from medmtl.med import MEDClassifier
from medmtl.med.builders import adaptive_pooling_dual, feature_selection_dual, kernel_selection_dual, svm_dual
from medmtl.med.solvers import solve
from med_testdata import (
    assert_kkt,
    make_regression_tasks,
    make_tasks,
    model_dual,
    naive_objective,
    reference_solution,
)

FACTOR_KINDS = ["svm_linear", "svm_sparse", "svr_linear", "fs_single", "fs_single_sparse",
                "fs_multi", "fs_multi_sparse", "per_feature", "per_feature_multi", "pooling",
                "fs_regression", "fs_multi_regression"]


def factor_dual(kind, alpha=3.0, C=1.0):
    """A small dual of every factor model kind (beyond :func:`model_dual`'s)."""
    Xs, ys = make_tasks(3, 25, 6, seed=11, noise=0.4)
    sparse = [sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0)) for X in Xs]
    if kind == "svm_sparse":
        return svm_dual(sparse[:1], ys[:1], "linear", C=C)
    if kind == "svr_linear":
        Xr, yr = make_regression_tasks(1, 30, 5, seed=12)
        return svm_dual(Xr, yr, "linear", C=C, regression=True, epsilon=0.1)
    if kind == "fs_multi_sparse":
        return feature_selection_dual(sparse, ys, C=C, alpha=alpha)
    if kind == "per_feature":
        return kernel_selection_dual(Xs[:1], ys[:1], per_feature_kernels(6), C=C, alpha=alpha)
    if kind == "per_feature_multi":
        return kernel_selection_dual(Xs, ys, per_feature_kernels(6), C=C, alpha=alpha)
    return model_dual(kind, alpha=alpha, C=C)


def cd(dual, init=None, **options):
    return solve(dual, "cd", options=options, init=init)


@pytest.mark.parametrize("alpha", [0.0, 3.0, 300.0])
@pytest.mark.parametrize("kind", FACTOR_KINDS)
def test_cd_matches_direct_and_is_optimal(kind, alpha):
    if kind.startswith(("svm", "svr")) and alpha:
        pytest.skip("the SVM has no switches: alpha plays no role")
    dual = factor_dual(kind, alpha=alpha)
    ref = reference_solution(dual)
    sol = cd(dual)
    assert sol.status == "converged"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    assert_kkt(dual, sol.lam)
    # the equalities hold to rounding, not only to the registry's 1e-8
    for g in dual.groups:
        assert abs(dual.a[g] @ sol.lam[g]) <= 1e-12 * max(1.0, np.abs(sol.lam[g]).sum())
    assert sol.objective == pytest.approx(dual.objective(sol.lam), rel=1e-12)
    assert sol.objective_path[-1] == pytest.approx(naive_objective(dual, sol.lam), rel=1e-10)
    np.testing.assert_allclose(sol.switch_posterior, dual.switch_posterior(sol.lam), rtol=1e-10)
    np.testing.assert_allclose(sol.intercepts, dual.intercepts(sol.lam), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(dual.switched_u(sol.lam), dual.switched_u(ref.lam), atol=2e-3)


def test_cd_is_the_svm_of_libsvm():
    Xs, ys = make_tasks(1, 80, 5, seed=3, noise=1.0)
    dual = svm_dual(Xs, ys, "linear", C=0.7)
    sol = cd(dual)
    clf = SVC(kernel="linear", C=0.7, tol=1e-10, shrinking=False).fit(Xs[0], ys[0])
    lam_svc = np.zeros(ys[0].size)
    lam_svc[clf.support_] = np.abs(clf.dual_coef_[0])
    assert sol.objective == pytest.approx(dual.objective(lam_svc), rel=1e-8)
    assert sol.intercepts[0] == pytest.approx(clf.intercept_[0], abs=1e-4)


def test_sparse_and_dense_factors_give_the_same_answer():
    Xs, ys = make_tasks(2, 40, 8, seed=6, noise=0.4)
    Xs = [np.where(np.abs(X) > 0.5, X, 0.0) for X in Xs]
    dense = cd(feature_selection_dual(Xs, ys, C=1.0, alpha=5.0))
    sparse = cd(feature_selection_dual([sp.csr_matrix(X) for X in Xs], ys, C=1.0, alpha=5.0))
    assert sparse.objective == pytest.approx(dense.objective, rel=1e-10)
    np.testing.assert_allclose(sparse.switch_posterior, dense.switch_posterior, atol=1e-7)


def test_same_input_same_answer_and_the_order_does_not_matter():
    dual = factor_dual("fs_multi", alpha=30.0)
    a, b = cd(dual), cd(dual)
    np.testing.assert_array_equal(a.lam, b.lam)
    assert a.objective_path.tolist() == b.objective_path.tolist()
    other = cd(dual, random_state=7)
    assert other.objective == pytest.approx(a.objective, rel=1e-9)


def test_shrinking_does_not_change_the_answer():
    dual = factor_dual("fs_multi_regression", alpha=3.0)
    a, b = cd(dual), cd(dual, shrinking=False)
    assert b.objective == pytest.approx(a.objective, rel=1e-9)
    assert_kkt(dual, b.lam)


def test_warm_starts_along_paths_save_passes():
    Xs, ys = make_tasks(3, 30, 8, seed=5, noise=0.4)
    lam, cold_passes, warm_passes = None, 0, 0
    for alpha in [0.5, 1.0, 2.0, 4.0, 8.0]:
        dual = feature_selection_dual(Xs, ys, C=1.0, alpha=alpha)
        cold = cd(dual)
        warm = cd(dual, init=lam)
        assert warm.objective == pytest.approx(cold.objective, rel=1e-9)
        cold_passes += cold.n_iter
        warm_passes += warm.n_iter
        lam = warm.lam
    assert warm_passes < cold_passes
    again = cd(dual, init=lam)
    assert again.n_iter == 0 and again.status == "converged"


def test_kernel_duals_are_refused():
    Xs, ys = make_tasks(1, 20, 3, seed=7)
    with pytest.raises(ValueError, match="newton"):
        cd(svm_dual(Xs, ys, RBFKernel(0.5), C=1.0))


def test_iteration_cap_warns_once_and_leaves_a_feasible_point():
    dual = factor_dual("fs_multi", alpha=300.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = cd(dual, max_iter=1)
    assert sol.status == "max_iter"
    assert [w.category for w in caught] == [ConvergenceWarning]
    assert dual.kkt_violation(sol.lam)["equality"] <= 1e-9
    assert sol.objective == pytest.approx(dual.objective(sol.lam), rel=1e-12)


def test_an_unreachable_tolerance_returns_with_one_warning():
    dual = factor_dual("fs_single", alpha=3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = cd(dual, kkt_tol=1e-300)
    assert len(caught) <= 1 and all(w.category is ConvergenceWarning for w in caught)
    assert sol.objective == pytest.approx(cd(dual).objective, rel=1e-9)


def test_estimators_run_cd_on_sparse_text_like_data():
    rng = np.random.default_rng(0)
    X = sp.random(300, 2000, density=0.01, random_state=1, format="csr")
    w = np.zeros(2000)
    w[:20] = 3.0
    y = np.where(X @ w + 0.05 * rng.normal(size=300) > np.median(X @ w), 1, 0)
    a = MEDClassifier(selection="features", alpha=10.0, method="cd").fit(X, y)
    b = MEDClassifier(selection="features", alpha=10.0, method="newton").fit(X, y)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-6)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-3)


def test_inputs_are_left_alone():
    dual = factor_dual("pooling")
    before = {k: np.copy(getattr(dual, k)) for k in ("c", "lo", "hi", "a")}
    Phi = dual.Phi.toarray() if sp.issparse(dual.Phi) else dual.Phi.copy()
    warm = np.full(dual.n, 0.5)
    cd(dual, init=warm)
    assert np.all(warm == 0.5)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(dual, k), v)
    np.testing.assert_array_equal(dual.Phi.toarray() if sp.issparse(dual.Phi) else dual.Phi, Phi)


def test_adaptive_pooling_with_sparse_inputs():
    Xs, ys = make_tasks(3, 30, 8, seed=2, noise=0.4)
    Xs = [sp.csr_matrix(np.where(np.abs(X) > 0.6, X, 0.0)) for X in Xs]
    dual = adaptive_pooling_dual(Xs, ys, "linear", C=1.0, alpha=5.0, task_scale=3.0)
    sol = cd(dual)
    assert sol.objective == pytest.approx(reference_solution(dual).objective, rel=1e-6)
    assert_kkt(dual, sol.lam)


@pytest.mark.parametrize("C, alpha", [(0.01, 100.0), (0.003, 36.0)])
def test_shrinking_does_not_stall_when_only_shrunk_multipliers_can_meet_an_equality(C, alpha):
    # Ising structure duals (dense, low-dimensional tasks sharing switches) at small C: most
    # multipliers sit at C and get shrunk; a task's equality residual can then be taken up
    # only by shrunk ones. Before they were visited again, the passes stalled with a KKT gap
    # of 2 (and J 4e-4 below the optimum) until the pass limit.
    from medmtl.datasets.ising import random_graph, random_ising
    from medmtl.med.builders import ising_structure_dual

    A = random_graph(20, max_degree=3, random_state=0)
    X = random_ising(A, coupling=0.5, random_state=0).sample(500, random_state=1).astype(float)
    dual = ising_structure_dual(X, C=C, alpha=alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        shrunk = cd(dual)
        plain = cd(dual, shrinking=False)
    assert shrunk.objective == pytest.approx(plain.objective, rel=1e-8)
    assert_kkt(dual, shrunk.lam, 1e-5)


def _passes_alone(monkeypatch):
    """Coordinate passes without the proximal Newton finish (which the Ising duals below
    take after 50 passes at the default tolerance), to measure what the passes do."""
    import dataclasses

    from medmtl.med.solvers import coordinate

    monkeypatch.setattr(coordinate, "POLICY", dataclasses.replace(coordinate.POLICY, finish_after=np.inf))


@pytest.mark.parametrize("kkt_tol", [1e-2, 1e-3])
def test_a_loose_tolerance_stops_early_with_a_gap_within_it(kkt_tol, monkeypatch):
    # A loose kkt_tol lets the check run once the equalities' residuals are a hundredth of
    # it; the check takes them out moving only free multipliers. Before, the Euclidean
    # projection pulled multipliers off their bounds (KKT gap 2 at every check) and a J
    # below the last check's counted as converged: status "converged" with a gap of 2.
    _passes_alone(monkeypatch)
    from medmtl.datasets.ising import random_graph, random_ising
    from medmtl.med.builders import ising_structure_dual

    A = random_graph(30, max_degree=3, random_state=0)
    X = random_ising(A, coupling=0.5, random_state=0).sample(600, random_state=1).astype(float)
    dual = ising_structure_dual(X, C=0.01, alpha=36.0)
    loose = cd(dual, kkt_tol=kkt_tol)
    tight = cd(dual, max_iter=3000)
    assert loose.status == "converged"
    assert loose.info["kkt_gap"] <= kkt_tol
    assert loose.info["passes"] < tight.info["passes"] / 2
    assert loose.objective == pytest.approx(tight.objective, rel=10 * kkt_tol**2)
    assert np.max(np.abs(loose.switch_posterior - tight.switch_posterior)) < 0.1 * kkt_tol


def test_project_keeps_the_multipliers_it_is_told_to_keep():
    from medmtl.med.builders import svm_dual

    X = np.array([[1.0, 0.0], [0.5, 1.0], [-1.0, 0.2], [-0.3, -1.0]])
    dual = svm_dual([X], [np.array([1, 1, -1, -1])], C=1.0)
    lam = np.array([0.0, 0.7, 0.2, 0.1])
    keep = np.array([True, False, False, False])
    x = dual.project(lam, keep=keep)
    assert x[0] == 0.0 and abs(dual.a @ x) < 1e-12 and np.all((x >= 0) & (x <= 1))
    with pytest.raises(ValueError, match="cannot be met"):
        # the last multiplier alone would have to be 2 > C
        dual.project(np.array([1.0, 1.0, 0.0, 0.0]), keep=np.array([True, True, True, False]))


def test_a_looser_tolerance_takes_no_more_passes_than_the_default(monkeypatch):
    # 20 nodes, 300 samples: at kkt_tol = 1e-3 five checks fell back to the Euclidean
    # projection (tasks with one or two free multipliers) and the solve took 421 passes,
    # against 239 at the default 1e-6.
    _passes_alone(monkeypatch)
    from medmtl.datasets.ising import random_graph, random_ising
    from medmtl.med.builders import ising_structure_dual

    A = random_graph(20, max_degree=3, random_state=0)
    X = random_ising(A, coupling=0.5, random_state=0).sample(300, random_state=1).astype(float)
    dual = ising_structure_dual(X, C=0.01, alpha=36.0)
    loose, tight = cd(dual, kkt_tol=1e-3), cd(dual)
    assert loose.status == tight.status == "converged"
    assert loose.info["kkt_gap"] <= 1e-3
    assert loose.info["passes"] <= tight.info["passes"]
    assert np.max(np.abs(loose.switch_posterior - tight.switch_posterior)) < 1e-4


def test_a_converged_check_is_the_answer_over_a_point_higher_by_round_off():
    # 100 nodes x 2,000 samples (random graph, repetition 1, C = alpha = 1): the passes'
    # last check met the tolerance 3e-11 below the finish's point, whose KKT gap was 8x the
    # tolerance; the run took that point and the status "max_iter" after 13 passes of 1,000.
    from medmtl.med.solvers import coordinate
    from medmtl.med.solvers.coordinate_run import Run
    from medmtl.med.solvers.registry import get_method

    dual = factor_dual("fs_single", alpha=3.0)
    run = Run(dual, None, get_method("cd").check_options({}), coordinate.POLICY)
    run.iterate()
    assert run.status == "converged"
    lam, J = run.lam.copy(), run.J_checked
    other = np.clip(lam + 1e-3, dual.lo, dual.hi)
    run.best = (J * (1 + 1e-15) + 1e-300, other, run.grad, run.s.copy(), 100 * run.kkt_eps)
    run.conclude()
    assert run.status == "converged" and run.J_checked == J and np.array_equal(run.lam, lam)
    # a last check short of the tolerance gives way to the best point
    run.gap = 10 * run.eps
    run.best = (J + 1.0, other, run.grad, run.s.copy(), 2 * run.kkt_eps)
    run.conclude()
    assert run.J_checked == J + 1.0 and np.array_equal(run.lam, other)


def test_passes_that_stall_short_of_the_tolerance_are_not_called_converged(monkeypatch):
    # J unchanged from one check to the next (tol) stops the run; its status is the gap's:
    # the warm start at alpha = 1 of test_warm_starts_along_paths_save_passes stalled so with
    # a gap of 7.5e-4 and was called converged, 2.8e-8 of J short
    from medmtl.med.solvers import coordinate
    from medmtl.med.solvers.coordinate_run import Run
    from medmtl.med.solvers.registry import get_method

    dual = factor_dual("fs_single", alpha=3.0)
    run = Run(dual, None, get_method("cd").check_options({}), coordinate.POLICY)
    short = 1e3 * run.kkt_eps
    check = Run.check

    def stalled_check(self):
        check(self)
        # the same J at every check, a gap above the tolerance, and no better point checked
        self.gap, self.J_checked, self.best = short, 1.0, (-np.inf, None, None, None, np.inf)
        return False

    monkeypatch.setattr(Run, "check", stalled_check)
    run.iterate()
    assert run.checks >= 2 and run.passes < run.options["max_iter"]
    assert run.status == "max_iter" and run.gap == short


@pytest.mark.parametrize("layout", ["one column per term", "several columns per term", "some unswitched"])
def test_face_curvature_is_the_weighted_gram_of_the_terms(layout, monkeypatch):
    # W = diag(weight) + sum_t tau_t u_t u_t^T on the local columns, each term's rank one
    # restricted to its own columns; the compiled product gives numpy's to the bit
    import medmtl.med.solvers.coordinate_face as coordinate_face
    from medmtl.med.solvers.coordinate_face import _Curvature

    rng = np.random.default_rng(11)
    K = 12
    ct = {"one column per term": np.arange(K), "several columns per term": np.repeat(np.arange(4), 3),
          "some unswitched": np.where(np.arange(K) < 3, -1, np.arange(K) // 2)}[layout]
    sw = ct >= 0
    u, weight, x = rng.normal(size=K), rng.uniform(0.5, 2.0, K), rng.normal(size=K)
    tau = rng.uniform(0.0, 0.25, ct.max() + 1)
    W = np.diag(weight)
    for t in np.unique(ct[sw]):
        on = np.where(ct == t, u, 0.0)
        W += tau[t] * np.outer(on, on)
    curv = _Curvature(ct, sw, u, weight, tau)
    np.testing.assert_allclose(curv(x), W @ x, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(_Curvature(ct, sw, u, weight, np.zeros_like(tau))(x), weight * x)
    fast = curv(x)
    monkeypatch.setattr(coordinate_face, "HAVE_NUMBA", False)
    np.testing.assert_array_equal(curv(x), fast)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 40.0])
def test_terms_refreshed_from_the_columns_that_hold_data(alpha):
    # q_t = ||u_t||^2 / 2 and s_t from the switched columns holding data only: the same bits
    # as the sum over every column (u is zero on the empty ones) and the posterior of each q
    from medmtl.med.bound import switch_posterior
    from medmtl.med.factor_rows import FactorRows
    from medmtl.med.solvers.coordinate_steps import refresh_terms

    rng = np.random.default_rng(8)
    Xs, ys = make_tasks(M=3, T=10, D=6, seed=9)
    # half the entries zero, and feature 4 used by no task: its columns are empty
    Xs = [sp.csr_matrix(np.where((rng.random(X.shape) < 0.5) & (np.arange(X.shape[1]) != 4), X, 0.0))
          for X in Xs]
    dual = adaptive_pooling_dual(Xs, ys, "linear", C=1.0, alpha=max(alpha, 1e-3))
    rows = FactorRows(dual)
    held = np.flatnonzero(np.diff(rows.F.tocsc().indptr))
    np.testing.assert_array_equal(rows.switched_cols, held[rows.col_term[held] >= 0])
    assert rows.switched_cols.size < np.count_nonzero(rows.col_term >= 0)
    u = rows.u(dual.project(rng.uniform(0.0, 1.0, dual.n)))
    n_terms = int(rows.col_term.max()) + 1
    q, s = np.full(n_terms, np.nan), np.full(n_terms, np.nan)
    log_alpha = np.log(alpha) if alpha > 0 else -np.inf
    refresh_terms(u, rows.col_term, q, s, log_alpha, rows.switched_cols)
    want = np.zeros(n_terms)
    for col in np.flatnonzero(rows.col_term >= 0):
        want[rows.col_term[col]] += 0.5 * u[col] * u[col]
    np.testing.assert_array_equal(q, want)
    np.testing.assert_allclose(s, switch_posterior(want, alpha), rtol=1e-15)


@pytest.mark.parametrize("tasks", [1, 3])
def test_a_face_step_through_the_whole_factors_is_the_one_on_the_copied_rows(tasks, monkeypatch):
    # most rows free: the face's products go through F whole (no copy of its rows); the
    # step, its bias and the count of touched columns are those of the copied rows'
    import medmtl.med.solvers.coordinate_face as coordinate_face
    from medmtl.med.solvers.coordinate import POLICY
    from medmtl.med.solvers.coordinate_run import Run

    rng = np.random.default_rng(3)
    Xs, ys = make_tasks(tasks, 40, 30, seed=5)
    # sparse rows, and feature 7 held only by the first example of each task
    Xs = [np.where(rng.random(X.shape) < 0.3, X, 0.0) for X in Xs]
    for X in Xs:
        X[:, 7] = 0.0
        X[0, 7] = 1.5
    Xs = [sp.csr_matrix(X) for X in Xs]
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=3.0)
    run = Run(dual, None, {"kkt_tol": 1e-6, "tol": 1e-9, "max_iter": 100, "shrinking": True,
                           "random_state": 0}, POLICY)
    run.check()
    for _ in range(3):
        run.one_pass()
    lam = dual.project(run.lam)
    u = run.rows.u(lam)
    s = np.asarray(run.it.s).copy()
    q = np.asarray(run.it.q).copy()
    # the free multipliers but the first task's first (the only row that holds feature 7)
    free = np.setdiff1d(np.flatnonzero((lam > dual.lo) & (lam < dual.hi)), [0])
    assert free.size > 0.5 * dual.n
    out, x = {}, rng.normal(size=free.size)
    for share in (0.0, 2.0):  # always through F whole, never
        monkeypatch.setattr(coordinate_face, "_IN_PLACE_SHARE", share)
        FF, cols, touched = coordinate_face._free_rows(run.rows, free)
        v = np.zeros(run.rows.F.shape[1])
        v[cols] = FF.T @ x
        out[share] = (coordinate_face.face_step(dual, run.rows, lam.copy(), u.copy(), q, s, free), touched, v)
    (t0, its0, b0), touched0, v0 = out[0.0]
    (t1, its1, b1), touched1, v1 = out[2.0]
    assert isinstance(coordinate_face._free_rows(run.rows, free)[0], sp.csr_matrix)
    assert touched0 == touched1 == np.count_nonzero(run.rows.F[free].getnnz(axis=0))
    np.testing.assert_allclose(v0, v1, rtol=1e-13, atol=1e-13)
    assert t0 == t1 > 0 and its0 == its1
    np.testing.assert_allclose(b0, b1, rtol=1e-9)


def test_the_third_derivative_bound_holds_the_slope_to_its_quadratic_model():
    # along a coordinate, phi'(d) stays within d^2 / 2 times the bound of G - H d; the
    # line search takes a step on that alone. The bound is near tight (within 4x) somewhere.
    from medmtl.med.solvers.coordinate_steps import Scratch, _posterior, _slope, _third_bound

    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(400):
        m = int(rng.integers(1, 8))
        scale = 10.0 ** rng.uniform(-2, 1)
        seg_p, seg_r = scale * rng.normal(size=m), scale * rng.uniform(0, 2, m) ** 2
        q = rng.uniform(0, 12, m)
        log_alpha = np.log(10.0 ** rng.uniform(-2, 5))
        s = np.array([_posterior(v, log_alpha) for v in q])
        scratch = Scratch(np.arange(m, dtype=np.int64), seg_p, seg_r, np.empty(m))
        base, r0 = rng.normal(), rng.uniform(0, 2)
        G = base - np.sum(s * seg_p)
        H = r0 + np.sum(s * seg_r + s * (1 - s) * seg_p ** 2)
        d = rng.normal() * 10.0 ** rng.uniform(-3, 0) / scale
        slope, _ = _slope(d, base, r0, m, scratch, q, s, log_alpha)
        err = abs(slope - (G - H * d))
        room = 0.5 * d * d * _third_bound(d, m, scratch)
        assert err <= room * (1 + 1e-9) + 1e-12 * (abs(G) + H * abs(d))
        worst = max(worst, err / room)
    assert worst > 0.25


def test_an_uncertified_early_end_hands_over_to_ssnal_from_zero():
    # digits with columns rescaled by up to 1e4 at C = 1000: the passes and their finish
    # stopped ("max_iter" after 72 of 1,000 passes) with J right to 1e-15 but a duality gap of
    # 5e-5 of J, so the answer came with a warning; ssnal from 0 certifies it
    from own_data_cases import case_at

    dual = case_at("digits/rescaled/svm", C_factor=1000.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = solve(dual, "cd")
    ref = solve(dual, "ssnal", options={"kkt_tol": 1e-10})
    assert sol.status == "converged" and sol.info["handover"]["because"] == "max_iter"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    assert sol.info["duality_gap"] <= 1e-6 * sol.objective
