"""``method="newton"`` (medmtl.med.solvers.newton) against the direct exponential-cone solve.

Every MED model kind is solved both ways on small problems: the objectives must agree to
1e-6 relative, the Newton answer must satisfy the KKT conditions on its own, its objective
path must never decrease, and warm starts along (C, alpha) paths must save work. The plain
SVM and SVR, also on kernel columns (no n x n factor ever built), are checked against
libsvm (scikit-learn's SVC and SVR).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, SVR

from medmtl.kernels import LinearKernel, PolynomialKernel, RBFKernel, per_feature_kernels
from medmtl.med.builders import adaptive_pooling_dual, feature_selection_dual, kernel_selection_dual, svm_dual
from medmtl.med.dual import MEDDual
from medmtl.med.grams import KernelGram
from medmtl.med.solvers import solve
from med_testdata import (
    MODEL_KINDS,
    assert_kkt,
    make_regression_tasks,
    make_tasks,
    model_dual,
    naive_objective,
    reference_solution,
)


def newton(dual, init=None, **options):
    return solve(dual, "newton", options=options, init=init)


def _assert_monotone(path):
    path = np.asarray(path)
    assert path[0] == 0.0
    assert np.all(np.diff(path) >= -1e-12 * max(1.0, abs(path[-1]))), np.diff(path)


def _no_kernel_factorised(dual):
    """Neither the shared kernel nor a switched kernel term has been factorised."""
    ws = dual.workspace
    kernel_terms = any(isinstance(G, KernelGram) for G in dual.term_grams())
    return ws.shared_factor is None and (ws.switched_factors is None or not kernel_terms)


@pytest.mark.parametrize("alpha", [0.0, 3.0, 300.0])
@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_newton_matches_direct_and_is_optimal(kind, alpha):
    if kind.startswith("svm") and alpha:
        pytest.skip("the SVM has no switches: alpha plays no role")
    dual = model_dual(kind, alpha=alpha)
    ref = reference_solution(dual)
    sol = newton(dual)
    assert sol.status == "converged"
    assert ref.objective > 0
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    # Optimal on its own terms, not only close to the reference value.
    assert_kkt(dual, sol.lam)
    _assert_monotone(sol.objective_path)
    # J reported (at the end of the path and as the objective) is J at the answer, as the
    # formula gives it from dense Gram matrices
    assert sol.objective_path[-1] == pytest.approx(naive_objective(dual, sol.lam), rel=1e-10)
    assert sol.objective == pytest.approx(dual.objective(sol.lam), rel=1e-14)
    np.testing.assert_allclose(sol.switch_posterior, dual.switch_posterior(sol.lam))
    np.testing.assert_allclose(sol.intercepts, dual.intercepts(sol.lam))
    # The same optimum: u = Phi^T lam is unique where J is strictly concave in u.
    np.testing.assert_allclose(dual.switched_u(sol.lam), dual.switched_u(ref.lam), atol=2e-3)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_svm_matches_libsvm(kernel):
    Xs, ys = make_tasks(1, 80, 5, seed=3, noise=1.0)
    X, y = Xs[0], ys[0]
    k = LinearKernel() if kernel == "linear" else RBFKernel(0.3)
    dual = svm_dual([X], [y], k, C=0.7)
    sol = newton(dual)
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
    Xs, ys = make_tasks(1, 40, 5, seed=4, noise=0.4)
    a = newton(feature_selection_dual(Xs, ys, C=1.0, alpha=0.0))
    b = newton(svm_dual(Xs, ys, "linear", C=1.0))
    assert a.objective == pytest.approx(b.objective, rel=1e-8)
    assert a.n_iter == 1  # J is quadratic: one Newton step is the whole solve


def _cold_and_warm(path, rel):
    """Solve each dual of ``path`` cold, and warm-started from the previous warm answer; both
    must reach the same J. Returns the pairs (cold, warm)."""
    pairs, lam = [], None
    for dual in path:
        cold = newton(dual)
        warm = newton(dual, init=lam)
        assert warm.objective == pytest.approx(cold.objective, rel=rel)
        pairs.append((cold, warm))
        lam = warm.lam
    return pairs


def _steps(solutions):
    return sum(sum(sol.info["smo_steps"]) for sol in solutions)


def test_warm_starts_along_paths_save_work():
    Xs, ys = make_tasks(3, 30, 8, seed=5, noise=0.4)
    alphas = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
    cold, warm = zip(*_cold_and_warm([feature_selection_dual(Xs, ys, C=1.0, alpha=alpha)
                                      for alpha in alphas], rel=1e-8))
    for k, sol in enumerate(warm):
        _assert_monotone(sol.objective_path - sol.objective_path[0] if k else sol.objective_path)
    assert sum(s.n_iter for s in warm) < sum(s.n_iter for s in cold)
    assert _steps(warm) < _steps(cold)
    # along C the previous solution is clipped into the new box
    cold, warm = zip(*_cold_and_warm([feature_selection_dual(Xs, ys, C=C, alpha=2.0)
                                      for C in [0.25, 0.5, 1.0, 2.0]], rel=1e-8))
    assert _steps(warm) < _steps(cold)


def test_optimal_warm_start_returns_at_once():
    dual = model_dual("fs_multi")
    sol = newton(dual)
    again = newton(dual, init=sol.lam)
    assert again.n_iter <= 1
    assert again.objective == pytest.approx(sol.objective, rel=1e-10)


@pytest.mark.parametrize("options", [{"cache_size": 1e-4}, {"shrinking": False},
                                     {"cache_size": 0.02, "shrinking": True}])
def test_cache_eviction_and_shrinking_do_not_change_the_answer(options):
    dual = model_dual("pooling_rbf")  # the column-cache path (pooling couples the tasks)
    ref = newton(dual)
    sol = newton(dual, **options)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    assert_kkt(dual, sol.lam)


@pytest.mark.parametrize("kind", ["ks_multi", "fs_multi_regression"])
def test_task_block_path_agrees_with_the_column_cache_path(kind):
    dual = model_dual(kind, alpha=30.0)
    blocks = newton(dual)
    generic = newton(dual, group_grams=False)
    assert blocks.objective == pytest.approx(generic.objective, rel=1e-9)
    no_shrink = newton(dual, shrinking=False)
    assert no_shrink.objective == pytest.approx(generic.objective, rel=1e-9)


def test_iteration_cap_warns_once():
    # an iteration cap the caller set is kept: no finish by another method
    dual = model_dual("fs_multi", alpha=300.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = newton(dual, max_iter=1)
    assert [w.category for w in caught] == [ConvergenceWarning]
    assert "max_iter=1" in str(caught[0].message)
    assert sol.status == "max_iter"
    _assert_monotone(sol.objective_path)
    # still a feasible point
    assert dual.kkt_violation(sol.lam)["equality"] <= 1e-9


def test_bad_input_and_no_side_effects():
    dual = model_dual("fs_single")
    before = {k: np.copy(getattr(dual, k)) for k in ("c", "lo", "hi", "a")}
    Phi = dual.Phi.copy() if not sp.issparse(dual.Phi) else dual.Phi.toarray()
    warm = np.full(dual.n, 0.5)
    warm_copy = warm.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        newton(dual, init=warm)
    np.testing.assert_array_equal(warm, warm_copy)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(dual, k), v)
    np.testing.assert_array_equal(dual.Phi.toarray() if sp.issparse(dual.Phi) else dual.Phi, Phi)
    with pytest.raises(ValueError, match="init"):
        newton(dual, init=np.zeros(dual.n + 1))
    with pytest.raises(ValueError, match="NaN"):
        newton(dual, init=np.full(dual.n, np.nan))
    with pytest.raises(ValueError, match="unknown options"):
        newton(dual, bogus=1)
    with pytest.raises(ValueError, match="solver"):
        solve(dual, "newton", solver="OSQP")
    with pytest.raises(ValueError, match="max_iter"):
        newton(dual, max_iter=0)
    with pytest.raises(ValueError, match="kkt_tol"):
        newton(dual, kkt_tol=-1)


def test_the_smo_solver_is_named_by_every_spelling():
    dual = model_dual("fs_single")
    ref = newton(dual)
    for name in (None, "SMO", "smo"):
        sol = solve(dual, "newton", solver=name)
        assert sol.solver == "SMO" and sol.objective == ref.objective


# ---------------------------------------------------------------------------------------
# Kernel columns on demand: no n x n factor
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("cache_size", [256.0, 0.004])
def test_rbf_svm_on_kernel_columns_is_libsvm(cache_size):
    Xs, ys = make_tasks(M=1, T=150, D=4, seed=3, noise=1.0)
    X, y = Xs[0], ys[0]
    dual = svm_dual([X], [y], RBFKernel(0.4), C=0.8)
    sol = newton(dual, cache_size=cache_size)
    assert sol.info["model"] == "KernelModel"
    assert dual.workspace.shared_factor is None  # no n x n factor was built
    if cache_size < 1:
        assert sol.info["columns"] > dual.n  # columns were evicted and recomputed
    clf = SVC(kernel="rbf", gamma=0.4, C=0.8, tol=1e-10, shrinking=False).fit(X, y)
    lam_svc = np.zeros(y.size)
    lam_svc[clf.support_] = np.abs(clf.dual_coef_[0])
    assert sol.objective == pytest.approx(dual.objective(lam_svc), rel=1e-6)
    assert_kkt(dual, sol.lam)
    assert sol.intercepts[0] == pytest.approx(clf.intercept_[0], abs=1e-4)
    f = RBFKernel(0.4)(X, X) @ (y * sol.lam) + sol.intercepts[0]
    np.testing.assert_array_equal(np.sign(f), np.sign(clf.decision_function(X)))


def test_rbf_svr_on_kernel_columns_is_libsvm():
    Xs, ys = make_regression_tasks(M=1, T=60, D=3, seed=4)
    X, y = Xs[0], ys[0]
    dual = svm_dual([X], [y], RBFKernel(0.3), C=2.0, regression=True, epsilon=0.2)
    sol = newton(dual)
    assert sol.info["model"] == "KernelModel"
    reg = SVR(kernel="rbf", gamma=0.3, C=2.0, epsilon=0.2, tol=1e-10, shrinking=False).fit(X, y)
    coef = np.zeros(y.size)
    coef[reg.support_] = reg.dual_coef_[0]
    lam_svr = np.concatenate([np.maximum(coef, 0), np.maximum(-coef, 0)])
    assert sol.objective == pytest.approx(dual.objective(lam_svr), rel=1e-6)
    assert_kkt(dual, sol.lam)
    T = y.size
    pred = RBFKernel(0.3)(X, X) @ (sol.lam[:T] - sol.lam[T:]) + sol.intercepts[0]
    np.testing.assert_allclose(pred, reg.predict(X), atol=1e-3)


def _factored_copy(dual):
    """The same dual with every term given by an explicit factor (the old representation)."""
    return MEDDual(c=dual.c, lo=dual.lo, hi=dual.hi, a=dual.a, groups=dual.groups,
                   Phi0=dual.Phi0, Phi=dual.Phi, term_ptr=dual.term_ptr if dual.n_terms else None,
                   alpha=dual.alpha)


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
    sol = newton(dual)
    assert sol.status == "converged" and sol.info["model"] == model
    assert _no_kernel_factorised(dual)
    assert sol.objective == pytest.approx(dual.objective(sol.lam), rel=1e-12)
    assert_kkt(dual, sol.lam)
    np.testing.assert_allclose(sol.switch_posterior, dual.switch_posterior(sol.lam), rtol=1e-9)
    np.testing.assert_allclose(sol.intercepts, dual.intercepts(sol.lam), rtol=1e-7, atol=1e-9)
    factored = _factored_copy(dual)
    ref = newton(factored)
    assert ref.info["model"] == "FactorModel"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    assert factored.objective(sol.lam) == pytest.approx(sol.objective, rel=1e-10)
    direct = solve(dual, method="direct", options={"solver_settings": dict(
        tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9, tol_ktratio=1e-7)})
    assert sol.objective == pytest.approx(direct.objective, rel=1e-6)
    assert sol.objective >= direct.objective - 1e-9 * abs(direct.objective)


def test_kernel_paths_warm_start_and_agree_with_cold_solves():
    dual = _kernel_duals()["ks_multi"]
    cold, warm = zip(*_cold_and_warm([dual.replace(alpha=alpha) for alpha in [0.5, 2.0, 8.0]],
                                     rel=1e-9))
    assert _steps(warm) < _steps(cold)
    # the block products of the last answer are reused by a warm start from it
    lam = warm[-1].lam
    assert np.array_equal(dual.workspace.slot("newton")["block_products"][0], lam)
    again = newton(dual.replace(alpha=8.0), init=lam)
    assert again.n_iter <= 1 and again.objective == pytest.approx(warm[-1].objective, rel=1e-12)


def test_kernel_solve_leaves_inputs_alone():
    Xs, ys = make_tasks(M=2, T=15, D=3, seed=8)
    copies = [X.copy() for X in Xs], [y.copy() for y in ys]
    dual = kernel_selection_dual(Xs, ys, [RBFKernel(0.3), PolynomialKernel(2)], C=1.0, alpha=2.0)
    warm = np.full(dual.n, 0.3)
    warm_copy = warm.copy()
    c, a = dual.c.copy(), dual.a.copy()
    newton(dual, init=warm)
    newton(dual, group_grams=False)
    np.testing.assert_array_equal(warm, warm_copy)
    np.testing.assert_array_equal(dual.c, c)
    np.testing.assert_array_equal(dual.a, a)
    for X, X0 in zip(Xs, copies[0]):
        np.testing.assert_array_equal(X, X0)
    for y, y0 in zip(ys, copies[1]):
        np.testing.assert_array_equal(y, y0)
    with pytest.raises(ValueError, match="cache_size"):
        newton(dual, cache_size=0)


def test_an_unreachable_tolerance_returns_at_the_rounding_floor_without_a_warning():
    # the answer is as exact as the arithmetic allows: a warning would be beside a right one
    dual = model_dual("fs_single")
    ref = newton(dual)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = newton(dual, kkt_tol=1e-300)
    assert sol.status == "rounding"
    assert caught == []
    assert sol.objective == pytest.approx(ref.objective, rel=1e-10)


def _badly_scaled_poly(regression):
    # scikit-learn's common-check data: features around 100, a cubic kernel of about 1e13
    rng = np.random.RandomState(0)
    X = rng.normal(loc=100, size=(150, 2))
    y = rng.normal(size=150) if regression else np.where(rng.randint(0, 2, size=150) > 0, 1, -1)
    return svm_dual([X], [y], PolynomialKernel(), C=1.0, regression=regression)


@pytest.mark.parametrize("regression", [True, False])
def test_a_badly_scaled_kernel_ends_with_at_most_one_warning(regression):
    # Newton's SMO crawls on this ill-conditioned kernel; the run must end (by the rounding
    # floor, or by its pair-step budget and the finish it hands over to) with at most one
    # warning, J above J(0) and the equalities met
    dual = _badly_scaled_poly(regression)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = newton(dual, max_steps=200_000)
    assert sol.status in ("converged", "rounding", "stalled")
    assert len(caught) <= 1
    assert all(w.category is ConvergenceWarning for w in caught)
    assert sol.objective > 0
    assert dual.kkt_violation(sol.lam)["equality"] <= 1e-8 * np.abs(sol.lam).sum()


def _starved_of_pair_steps(monkeypatch, long_budget=None):
    """A multi-task kernel dual whose Newton run has 3 pair steps per subproblem before the
    handover and no "ssnal" to hand over to (``long_budget`` pair steps after it, if given):
    ``(the newton module, the dual, its reference solution)``."""
    import medmtl.med.solvers.newton as newton_module

    dual = model_dual("ks_multi", alpha=3.0)
    monkeypatch.setattr(newton_module, "_short_budget", lambda n: 3)
    if long_budget is not None:
        monkeypatch.setattr(newton_module, "_long_budget", lambda n: long_budget)
    monkeypatch.setattr(newton_module, "ssnal_hand_over", lambda *args: None)
    return newton_module, dual, reference_solution(dual)


def test_where_ssnal_cannot_finish_newton_goes_on_with_more_pair_steps(monkeypatch):
    # a subproblem that uses the short pair-step budget of a run that could hand over, and a
    # finish that cannot take the dual (as on raw digits' multi-task kernels): Newton must go
    # on from its last point to the direct solve's optimum, without a warning
    newton_module, dual, ref = _starved_of_pair_steps(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = newton(dual)
    assert caught == []
    assert sol.status == "converged"
    assert sol.info["extended"] == {"because": "max_steps", "max_steps": newton_module._long_budget(dual.n)}
    assert sol.info["smo_steps"][0] == 3 and len(sol.info["smo_steps"]) >= 2
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    _assert_monotone(sol.objective_path)
    # a caller's own budget is theirs to keep: no extension
    with pytest.warns(ConvergenceWarning, match="max_steps"):
        capped = newton(dual, max_steps=3)
    assert "extended" not in capped.info and capped.status == "max_steps"


def test_where_the_longer_budget_runs_out_too_newton_hands_over_to_the_bound(monkeypatch):
    # kernels of very different scales (digits, columns rescaled by 1e-4..1e4): a subproblem
    # used the longer budget too and Newton stopped 89 % below the optimum, with a warning;
    # Algorithm 1 from its last point must reach the direct solve's optimum, without one
    newton_module, dual, ref = _starved_of_pair_steps(monkeypatch, long_budget=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = newton(dual)
    assert caught == []
    assert sol.info["handover"]["to"] == "bound" and sol.info["handover"]["because"] == "max_steps"
    assert sol.status == "converged"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    # without the handover the run keeps its status, and warns
    with pytest.warns(ConvergenceWarning, match="max_steps"):
        kept = newton(dual, handover=False)
    assert kept.status == "max_steps" and "handover" not in kept.info


def test_a_step_that_does_not_raise_j_ends_the_iterations_instead_of_repeating(monkeypatch):
    # a step that is not taken leaves lam where it was, so every later iteration would repeat
    # it until max_iter: the run stops ("stalled" where the model promised a real gain, and
    # hands over to "ssnal", which finishes at the direct solve's optimum)
    import medmtl.med.solvers.newton as newton_module

    dual = model_dual("fs_single", alpha=3.0)
    ref = reference_solution(dual)
    monkeypatch.setattr(newton_module, "line_search", lambda *args: 0.0)
    sol = newton(dual)
    assert sol.n_iter == 1
    assert sol.info["handover"]["because"] == "stalled"
    assert sol.status == "converged"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)


def test_a_rounding_end_that_the_duality_gap_does_not_certify_hands_over():
    # breast cancer with one dominant column at C = 1000: the pair steps stop at the
    # estimated rounding floor with J 2e-6 below the optimum and a duality gap of 24 % of J;
    # that end is handed over to ssnal, whose answer the duality gap certifies
    from own_data_cases import case_at

    dual = case_at("breast_cancer/dominant/svm", C_factor=1000.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = solve(dual, "newton")
    ref = solve(dual, "ssnal", options={"kkt_tol": 1e-10})
    assert sol.status == "converged" and sol.info["handover"]["because"] == "rounding"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
