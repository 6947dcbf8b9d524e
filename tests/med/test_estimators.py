"""The MED estimators: against libsvm, against each other, KKT on predictions, bad input."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, SVR
from sklearn.utils.estimator_checks import parametrize_with_checks

from medmtl.kernels import LinearKernel, PolynomialKernel, RBFKernel, per_feature_kernels
from medmtl.med import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
)
from med_testdata import make_regression_tasks, make_tasks


def split_data(seed=0, n=60, D=4):
    Xs, ys = make_tasks(M=1, T=n + 40, D=D, seed=seed, noise=1.0)
    X, y = Xs[0], ys[0]
    return X[:n], y[:n], X[n:], y[n:]


def libsvm_dual_objective(svc, K):
    dc = svc.dual_coef_.ravel()
    sv = svc.support_
    return np.abs(dc).sum() - 0.5 * dc @ K[np.ix_(sv, sv)] @ dc


@pytest.mark.parametrize("kernel, sk_kw", [
    (LinearKernel(), dict(kernel="linear")),
    (RBFKernel(0.3), dict(kernel="rbf", gamma=0.3)),
])
@pytest.mark.parametrize("C", [0.1, 1.0])
def test_med_svm_equals_libsvm(kernel, sk_kw, C):
    X, y, Xt, yt = split_data(seed=1)
    y = np.where(y > 0, "pos", "neg")
    svc = SVC(C=C, tol=1e-10, **sk_kw).fit(X, y)
    med = MEDClassifier(kernel=kernel, C=C).fit(X, y)
    J_svc = libsvm_dual_objective(svc, kernel(X, X))
    assert med.objective_ == pytest.approx(J_svc, rel=1e-6)
    np.testing.assert_array_equal(med.classes_, svc.classes_)
    f_med, f_svc = med.decision_function(Xt), svc.decision_function(Xt)
    np.testing.assert_allclose(f_med, f_svc, atol=1e-5)
    np.testing.assert_array_equal(med.predict(Xt), svc.predict(Xt))
    assert med.n_iter_ == 1 and med.switch_posterior_.size == 0


@pytest.mark.parametrize("method", ["bound", "direct"])
def test_med_svr_equals_libsvm(method):
    Xs, ys = make_regression_tasks(M=1, T=50, D=4, seed=5)
    X, y = Xs[0], ys[0]
    svr = SVR(kernel="linear", C=0.5, epsilon=0.2, tol=1e-10).fit(X, y)
    med = MEDRegressor(C=0.5, epsilon=0.2, method=method).fit(X, y)
    beta = np.zeros(50)
    beta[svr.support_] = svr.dual_coef_.ravel()
    J_svr = y @ beta - 0.2 * np.abs(beta).sum() - 0.5 * beta @ (X @ X.T) @ beta
    assert med.objective_ == pytest.approx(J_svr, rel=1e-6)
    np.testing.assert_allclose(med.predict(X), svr.predict(X), atol=1e-4)
    assert med.dual_coef_.shape == (2, 50)
    np.testing.assert_allclose(med.dual_coef_[0] - med.dual_coef_[1], beta, atol=1e-5)


def free_mask(lam, C):
    return (lam > 1e-4 * C) & (lam < C * (1 - 1e-4))


@pytest.mark.parametrize("est", [
    MEDClassifier(selection="features", alpha=3.0, C=1.0),
    MEDClassifier(selection="kernels", kernels=[RBFKernel(0.2), LinearKernel(), PolynomialKernel(2, 0.3)],
                  alpha=3.0, C=1.0),
    MEDClassifier(kernel=PolynomialKernel(2, 0.3), C=1.0),
])
def test_single_task_predictions_meet_kkt(est):
    # Free multipliers sit on the margin: y_t f(x_t) = 1 with the posterior-mean predictor.
    X, y, _, _ = split_data(seed=2)
    est.fit(X, y)
    free = free_mask(est.dual_coef_, 1.0)
    assert free.sum() >= 2
    np.testing.assert_allclose(y[free] * est.decision_function(X[free]), 1.0, atol=1e-4)


@pytest.mark.parametrize("make", [
    lambda: MultiTaskMEDClassifier(selection="features", alpha=2.0),
    lambda: MultiTaskMEDClassifier(selection="kernels", kernels=[RBFKernel(0.1), LinearKernel()], alpha=2.0),
    lambda: MultiTaskMEDClassifier(selection=None, kernel=RBFKernel(0.1)),
    lambda: AdaptivePoolingClassifier(alpha=5.0, task_scale=3.0),
    lambda: AdaptivePoolingClassifier(kernel=RBFKernel(0.2), alpha=5.0, task_scale=3.0),
])
def test_multitask_predictions_meet_kkt(make):
    Xs, ys = make_tasks(M=3, T=30, D=4, seed=4, noise=1.0)
    est = make().fit(Xs, ys)
    scores = est.decision_function(Xs)
    start = 0
    for X, y, f in zip(Xs, ys, scores):
        lam = est.dual_coef_[start:start + len(y)]
        start += len(y)
        free = free_mask(lam, 1.0)
        np.testing.assert_allclose(y[free] * f[free], 1.0, atol=1e-4)
    assert est.intercept_.shape == (3,)
    assert all(np.all(np.diff(est.objective_path_) >= 0) for _ in [0])


@pytest.mark.parametrize("make", [
    lambda: MultiTaskMEDRegressor(alpha=2.0, C=1.0, epsilon=0.1),
    lambda: MultiTaskMEDRegressor(selection="kernels", kernels=[RBFKernel(0.1), LinearKernel()],
                                  alpha=2.0, C=1.0, epsilon=0.1),
])
def test_multitask_regression_predictions_meet_kkt(make):
    # Free lam_t put f(x_t) = y_t - eps; free lam*_t put f(x_t) = y_t + eps.
    Xs, ys = make_regression_tasks(M=2, T=25, D=4, seed=6)
    est = make().fit(Xs, ys)
    preds = est.predict(Xs)
    start = 0
    for y, f in zip(ys, preds):
        lam, lams = est.dual_coef_[:, start:start + len(y)]
        start += len(y)
        fl, fs = free_mask(lam, 1.0), free_mask(lams, 1.0)
        assert fl.sum() + fs.sum() >= 2
        np.testing.assert_allclose(f[fl], y[fl] - 0.1, atol=1e-4)
        np.testing.assert_allclose(f[fs], y[fs] + 0.1, atol=1e-4)


def test_alpha_zero_feature_selection_is_the_svm():
    X, y, Xt, _ = split_data(seed=3)
    fs = MEDClassifier(selection="features", alpha=0.0, C=0.5).fit(X, y)
    svm = MEDClassifier(C=0.5).fit(X, y)
    assert fs.objective_ == pytest.approx(svm.objective_, rel=1e-9)
    np.testing.assert_allclose(fs.coef_, svm.coef_, atol=1e-6)
    np.testing.assert_allclose(fs.decision_function(Xt), svm.decision_function(Xt), atol=1e-5)
    # rho = 1 is alpha = 0.
    rho1 = MEDClassifier(selection="features", rho=1.0, C=0.5).fit(X, y)
    assert rho1.objective_ == pytest.approx(svm.objective_, rel=1e-9)


def test_per_feature_kernel_selection_is_feature_selection():
    X, y, Xt, _ = split_data(seed=4)
    fs = MEDClassifier(selection="features", alpha=2.0).fit(X, y)
    ks = MEDClassifier(selection="kernels", kernels=per_feature_kernels(X.shape[1]), alpha=2.0).fit(X, y)
    assert ks.objective_ == pytest.approx(fs.objective_, rel=1e-8)
    np.testing.assert_allclose(ks.switch_posterior_, fs.switch_posterior_, atol=1e-5)
    np.testing.assert_allclose(ks.decision_function(Xt), fs.decision_function(Xt), atol=1e-4)


def test_one_task_multitask_equals_single_task_and_independent_svms():
    Xs, ys = make_tasks(M=2, T=30, D=4, seed=5)
    single = MEDClassifier(selection="features", alpha=2.0).fit(Xs[0], ys[0])
    multi = MultiTaskMEDClassifier(alpha=2.0).fit(Xs[:1], ys[:1])
    assert multi.objective_ == pytest.approx(single.objective_, rel=1e-8)
    np.testing.assert_allclose(multi.coef_[0], single.coef_[0], atol=1e-5)
    indep = MultiTaskMEDClassifier(selection=None).fit(Xs, ys)
    for m in range(2):
        own = MEDClassifier().fit(Xs[m], ys[m])
        np.testing.assert_allclose(indep.coef_[m], own.coef_[0], atol=1e-6)


@pytest.mark.parametrize("method", ["bound", "direct"])
def test_sparse_input_matches_dense(method):
    Xs, ys = make_tasks(M=2, T=30, D=6, seed=6)
    Xs[0][:, 2] = 0.0
    dense = MultiTaskMEDClassifier(alpha=1.0, method=method).fit(Xs, ys)
    sparse = MultiTaskMEDClassifier(alpha=1.0, method=method).fit([sp.csr_matrix(X) for X in Xs], ys)
    assert sparse.objective_ == pytest.approx(dense.objective_, rel=1e-7)
    for a, b in zip(dense.decision_function(Xs), sparse.decision_function([sp.csr_matrix(X) for X in Xs])):
        np.testing.assert_allclose(a, b, atol=1e-5)
    single = MEDClassifier(selection="features", alpha=1.0, method=method).fit(sp.csr_matrix(Xs[1]), ys[1])
    assert isinstance(single.coef_, np.ndarray)


def test_bound_and_direct_estimators_agree():
    Xs, ys = make_tasks(M=3, T=30, D=5, seed=7)
    a = MultiTaskMEDClassifier(alpha=4.0, C=2.0).fit(Xs, ys)
    b = MultiTaskMEDClassifier(alpha=4.0, C=2.0, method="direct").fit(Xs, ys)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-6)
    np.testing.assert_allclose(a.switch_posterior_, b.switch_posterior_, atol=1e-4)
    assert b.solver_status_ == "optimal" and a.solver_status_ == "converged"


def test_warm_start_path_matches_cold_fits():
    Xs, ys = make_tasks(M=3, T=30, D=5, seed=8)
    est = MultiTaskMEDClassifier(alpha=1.0, C=1.0, warm_start=True)
    for C, alpha in [(1.0, 1.0), (2.0, 1.0), (2.0, 4.0), (0.5, 4.0)]:
        est.set_params(C=C, alpha=alpha).fit(Xs, ys)
        cold = MultiTaskMEDClassifier(alpha=alpha, C=C).fit(Xs, ys)
        assert est.objective_ == pytest.approx(cold.objective_, rel=1e-8)
        assert np.all(np.diff(est.objective_path_) >= 0)
    # Refitting the same problem from its own solution needs at most a confirming sweep.
    iters = est.fit(Xs, ys).n_iter_
    assert iters <= 2 < cold.n_iter_


def test_max_iter_gives_convergence_warning():
    X, y, _, _ = split_data(seed=9)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        est = MEDClassifier(selection="features", alpha=5.0, max_iter=1).fit(X, y)
    assert est.n_iter_ == 1 and est.solver_status_ == "max_iter"


def test_inputs_are_never_modified():
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=10)
    Xs_copy, ys_copy = [X.copy() for X in Xs], [y.copy() for y in ys]
    Xsp = [sp.csr_matrix(X) for X in Xs]
    Xsp_copy = [X.copy() for X in Xsp]
    for est in [MultiTaskMEDClassifier(alpha=1.0), AdaptivePoolingClassifier(alpha=1.0),
                MultiTaskMEDClassifier(selection="kernels", kernels=[RBFKernel(0.3)], alpha=1.0)]:
        est.fit(Xs, ys)
        est.predict(Xs)
    MultiTaskMEDClassifier(alpha=1.0).fit(Xsp, ys).predict(Xsp)
    reg_y = [X[:, 0].copy() for X in Xs]
    reg_copy = [y.copy() for y in reg_y]
    MultiTaskMEDRegressor(alpha=1.0).fit(Xs, reg_y).predict(Xs)
    MEDClassifier(selection="features").fit(Xs[0], ys[0]).decision_function(Xs[0])
    MEDRegressor(selection="features").fit(Xs[0], reg_y[0]).predict(Xs[0])
    for a, b in zip(Xs + ys + reg_y, Xs_copy + ys_copy + reg_copy):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(Xsp, Xsp_copy):
        assert (a != b).nnz == 0


def test_pickle_roundtrip():
    Xs, ys = make_tasks(M=2, T=20, D=3, seed=11)
    est = MultiTaskMEDClassifier(selection="kernels", kernels=[RBFKernel(0.3), LinearKernel()], alpha=1.0).fit(Xs, ys)
    clone = pickle.loads(pickle.dumps(est))
    for a, b in zip(est.decision_function(Xs), clone.decision_function(Xs)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


# -- bad input ---------------------------------------------------------------------------------
def test_bad_input_single_task():
    X, y, _, _ = split_data(seed=12, n=20)
    Xnan = X.copy()
    Xnan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MEDClassifier().fit(Xnan, y)
    Xinf = X.copy()
    Xinf[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinity|NaN"):
        MEDRegressor().fit(Xinf, X[:, 0])
    with pytest.raises(ValueError, match="inconsistent|samples"):
        MEDClassifier().fit(X, y[:-1])
    with pytest.raises(ValueError, match="one class"):
        MEDClassifier().fit(X, np.ones(len(y)))
    with pytest.raises(ValueError, match="Only binary"):
        MEDClassifier().fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="features"):
        MEDClassifier().fit(X, y).predict(X[:, :2])
    with pytest.raises(ValueError, match="C must be > 0"):
        MEDClassifier(C=0.0).fit(X, y)
    with pytest.raises(ValueError, match="C must be > 0"):
        MEDClassifier(C=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        MEDClassifier(selection="features", alpha=-0.1).fit(X, y)
    for rho in [0.0, 1.5, -0.2]:
        with pytest.raises(ValueError, match="rho"):
            MEDClassifier(selection="features", rho=rho).fit(X, y)
    with pytest.raises(ValueError, match="not both"):
        MEDClassifier(selection="features", alpha=1.0, rho=0.5).fit(X, y)
    with pytest.raises(ValueError, match="selection"):
        MEDClassifier(selection="everything").fit(X, y)
    with pytest.raises(ValueError, match="bank"):
        MEDClassifier(selection="kernels").fit(X, y)
    with pytest.raises(ValueError, match="kernel='linear'"):
        MEDClassifier(selection="features", kernel="rbf").fit(X, y)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        MEDClassifier(kernel=lambda A, B: -(A @ B.T) - 1.0).fit(X, y)
    with pytest.raises(ValueError, match="installed CVXPY solvers"):
        MEDClassifier(solver="NO_SUCH_SOLVER").fit(X, y)
    with pytest.raises(ValueError, match="unknown method"):
        MEDClassifier(method="magic").fit(X, y)
    with pytest.raises(ValueError, match="max_iter"):
        MEDClassifier(max_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        MEDRegressor(epsilon=-1.0).fit(X, X[:, 0])
    with pytest.raises(RuntimeError, match="OSQP"):
        MEDClassifier(selection="features", method="bound",
                      solver_options={"solver_settings": {"max_iter": 1, "fallback": False}}).fit(X, y)


def test_bad_input_multitask():
    Xs, ys = make_tasks(M=2, T=15, D=3, seed=13)
    with pytest.raises(ValueError, match=r"task 1.*one class"):
        MultiTaskMEDClassifier().fit(Xs, [ys[0], np.ones(15)])
    with pytest.raises(ValueError, match="exactly two classes"):
        MultiTaskMEDClassifier().fit(Xs, [ys[0], np.arange(15) % 3])
    with pytest.raises(ValueError, match="2 tasks but"):
        MultiTaskMEDClassifier().fit(Xs, ys[:1])
    with pytest.raises(ValueError, match="features"):
        MultiTaskMEDClassifier().fit([Xs[0], Xs[1][:, :2]], ys)
    with pytest.raises(ValueError, match="labels"):
        MultiTaskMEDClassifier().fit(Xs, [ys[0], ys[1][:-1]])
    bad = Xs[1].copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        AdaptivePoolingClassifier().fit([Xs[0], bad], ys)
    # one array is the stacked form; its tasks must then match its rows
    with pytest.raises(ValueError, match="labels, one per row of X"):
        MultiTaskMEDClassifier().fit(Xs[0], ys[0], tasks=np.zeros(14))
    with pytest.raises(ValueError, match="tasks= goes with one stacked X"):
        MultiTaskMEDClassifier().fit(Xs, ys, tasks=np.zeros(30))
    est = MultiTaskMEDClassifier().fit(Xs, ys)
    with pytest.raises(ValueError, match="tasks"):
        est.predict(Xs[:1])
    with pytest.raises(ValueError, match="NaN"):
        MultiTaskMEDRegressor().fit(Xs, [X[:, 0] * np.nan for X in Xs])
    with pytest.raises(ValueError, match="task_scale"):
        AdaptivePoolingClassifier(task_scale=0.0).fit(Xs, ys)


# scikit-learn's checks fit X, y without tasks: the stacked form with one task, which for the
# multi-task estimators is the single-task estimator (one fit path)
CHECKED = [MEDClassifier(), MEDRegressor(), MEDClassifier(selection="features", alpha=1.0),
           MEDClassifier(kernel="rbf"), MEDRegressor(kernel="rbf"), MEDClassifier(kernel="poly", degree=2, coef0=1.0),
           MultiTaskMEDClassifier(), MultiTaskMEDRegressor(), AdaptivePoolingClassifier(),
           MultiTaskMEDClassifier(selection="kernels", kernels=["rbf", "linear"]),
           MEDClassifier(kernel="precomputed")]
# Gram matrices that are not positive semi-definite: the MED dual is a concave program and
# refuses them (libsvm takes any matrix)
NOT_PSD = {
    "check_estimators_dtypes": "the float32 and integer Gram matrices it builds are indefinite by rounding",
    "check_positive_only_tag_during_fit": "it passes a negated Gram matrix",
}


# A weighted fit is the fit on repeated rows up to the solver's tolerance (about 1e-7 of the
# decision values, the check's rtol; test_sample_weight.py compares them at that scale), and
# gamma="scale" is computed from the rows given, as SVC's is (which scikit-learn marks alike)
WEIGHTS_AS_ROWS = {
    "check_sample_weight_equivalence_on_dense_data": "equal to repeated rows to the solver's tolerance, not 1e-7",
    "check_sample_weight_equivalence_on_sparse_data": "equal to repeated rows to the solver's tolerance, not 1e-7",
}


def not_applicable(estimator):
    return {**WEIGHTS_AS_ROWS, **(NOT_PSD if estimator.get_params().get("kernel") == "precomputed" else {})}


@parametrize_with_checks(CHECKED, expected_failed_checks=not_applicable)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_refit_on_new_data_does_not_reuse_stale_factors():
    # Every fit builds its dual from the data it is given (even in the same arrays).
    Xs, ys = make_tasks(M=2, T=20, D=3, seed=14)
    est = MultiTaskMEDClassifier(selection="kernels", kernels=[RBFKernel(0.3), LinearKernel()], alpha=1.0)
    est.fit(Xs, ys)
    Xs[0] *= 2.0
    est.set_params(C=2.0).fit(Xs, ys)
    fresh = MultiTaskMEDClassifier(selection="kernels", kernels=[RBFKernel(0.3), LinearKernel()],
                                   alpha=1.0, C=2.0).fit(Xs, ys)
    assert est.objective_ == pytest.approx(fresh.objective_, rel=1e-10)
    est.set_params(kernels=[RBFKernel(0.5), LinearKernel()]).fit(Xs, ys)
    other = MultiTaskMEDClassifier(selection="kernels", kernels=[RBFKernel(0.5), LinearKernel()],
                                   alpha=1.0, C=2.0).fit(Xs, ys)
    assert est.objective_ == pytest.approx(other.objective_, rel=1e-10)
