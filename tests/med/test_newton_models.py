"""The Newton models (medmtl.med.solvers.newton_models): which one a dual gets, the Hessian
columns they compute, and the precision of the model Hessian.

A non-quadratic J is maximised by Newton steps whose model Hessian may be cached or summed
in single precision (each step is checked against the exact J and gradient); a quadratic J
(the SVM, alpha = 0) is one subproblem and must be solved in double precision. Both must
reach the direct exponential-cone solve's J and satisfy the KKT conditions in double.
"""

import numpy as np
import pytest

from medmtl.kernels import LinearKernel, RBFKernel
from medmtl.med.builders import feature_selection_dual, kernel_selection_dual, svm_dual
from medmtl.med.solvers import get_method, solve
from medmtl.med.solvers.newton_models import (
    BlockModel,
    FactorModel,
    KernelModel,
    NewtonModel,
    _Curvature,
    make_model,
)
from medmtl.med.solvers.smo import ColumnCache
from med_testdata import make_tasks, model_dual

OPTIONS = get_method("newton").check_options({})


def _direct(dual):
    return solve(dual, method="direct", options={"solver_settings": dict(
        tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9, tol_ktratio=1e-7)})


@pytest.mark.parametrize("alpha,precision", [(0.0, "double"), (2.0, "single"), (200.0, "single")])
def test_feature_selection_precision_and_optimality(alpha, precision):
    Xs, ys = make_tasks(M=1, T=120, D=15, seed=21, noise=0.8)
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=alpha)
    sol = solve(dual, "newton")
    assert sol.status == "converged"
    assert sol.info["model"] == "FactorModel" and sol.info["precision"] == precision
    assert sol.objective == pytest.approx(_direct(dual).objective, rel=1e-6)
    v = dual.kkt_violation(sol.lam)
    assert v["stationarity"] <= 1e-6 and v["equality"] <= 1e-10
    assert np.all(np.diff(sol.objective_path) >= -1e-12 * sol.objective)


@pytest.mark.parametrize("alpha,precision", [(0.0, "double"), (5.0, "single")])
def test_block_model_precision_and_optimality(alpha, precision):
    Xs, ys = make_tasks(M=3, T=30, D=4, seed=22)
    dual = kernel_selection_dual(Xs, ys, [RBFKernel(0.3), LinearKernel()], C=1.0, alpha=alpha)
    sol = solve(dual, "newton")
    assert sol.info["model"] == "BlockModel" and sol.info["precision"] == precision
    assert sol.objective == pytest.approx(_direct(dual).objective, rel=1e-6)
    assert dual.kkt_violation(sol.lam)["stationarity"] <= 1e-6


def test_the_svm_is_solved_in_double_precision():
    Xs, ys = make_tasks(M=2, T=40, D=3, seed=23)
    for dual in (svm_dual(Xs, ys, "linear"), svm_dual(Xs[:1], ys[:1], RBFKernel(0.5)),
                 svm_dual(Xs, ys, RBFKernel(0.5))):
        sol = solve(dual, "newton")
        assert sol.info["precision"] == "double" and sol.n_iter == 1
        assert dual.kkt_violation(sol.lam)["stationarity"] <= 1e-6


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_a_kernel_svm_reports_j_from_its_gradient_as_exact_as_afresh(C):
    # the quadratic J comes from the subproblem's gradient, (c^T lam + lam^T grad) / 2,
    # with no kernel evaluation over the support: it must agree with J evaluated afresh
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 5)) * [1.0, 1.0, 10.0, 0.1, 1.0]
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=300) > 0, 1, -1)
    dual = svm_dual([X], [y], RBFKernel(0.05), C=C)
    sol = solve(dual, "newton")
    assert sol.status == "converged"
    assert abs(sol.objective - dual.objective(sol.lam)) <= 1e-13 * abs(sol.objective)
    assert sol.objective_path[-1] == sol.objective


@pytest.mark.parametrize("kind,model", [("fs_multi", FactorModel), ("pooling", FactorModel),
                                        ("svm_rbf", KernelModel), ("pooling_rbf", KernelModel),
                                        ("ks_multi", BlockModel)])
def test_each_dual_gets_its_model_and_every_model_keeps_the_protocol(kind, model):
    dual = model_dual(kind)
    m = make_model(dual, np.zeros(dual.n), OPTIONS)
    assert type(m) is model and isinstance(m, NewtonModel)
    assert m.J == 0.0 and m.precision in ("single", "double") and m.columns_computed == 0
    s, tau, g0 = m.linearize()
    np.testing.assert_allclose(g0, dual.gradient(np.zeros(dual.n)), atol=1e-12)
    assert s.shape == tau.shape == (dual.n_terms,)
    J, grad, _ = m.finish()
    assert J == 0.0 and (grad is None or np.allclose(grad, g0))


def test_a_model_must_implement_the_whole_protocol():
    class Partial(NewtonModel):
        def linearize(self):
            return None

    with pytest.raises(TypeError, match="abstract"):
        Partial()


def test_column_cache_matches_explicit_hessian():
    dual = model_dual("pooling_rbf")
    rows = dual.factor_rows()
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
    cache = ColumnCache(rows.F, None, 1.0 / dual.a, _Curvature(dual, rows, u, s, tau), 1 << 20)
    idx = [0, 5, 40, 74]
    cache.fill(idx)
    Q = H / np.outer(dual.a, dual.a)
    for i in idx:
        np.testing.assert_allclose(cache.cache[cache.slot_of[i]], Q[:, i], rtol=1e-10, atol=1e-10)

