"""sample_weight: per-example bounds C_i = C w_i, as libsvm's; integer weights are repeated
rows, zero weights dropped rows; every registered method solves the weighted dual."""

import numpy as np
import pytest
from sklearn.svm import SVC

from medmtl.med import (
    METHODS,
    MEDClassifier,
    MEDClassifierCV,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
    med_path,
)
from medmtl.model_selection import stack_tasks
from med_testdata import make_regression_tasks, make_tasks


def weights(n, seed, low=0):
    return np.random.default_rng(seed).integers(low, 4, size=n).astype(float)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_med_svm_with_sample_weight_is_svc_with_sample_weight(kernel):
    Xs, ys = make_tasks(M=1, T=60, D=4, seed=1, noise=1.0)
    X, y = Xs[0], ys[0]
    w = np.random.default_rng(0).uniform(0.1, 3.0, size=60)
    svc = SVC(kernel=kernel, C=0.7, tol=1e-10).fit(X, y, sample_weight=w)
    med = MEDClassifier(kernel=kernel, C=0.7).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(med.dual_.hi, 0.7 * w)
    np.testing.assert_allclose(med.decision_function(X), svc.decision_function(X), atol=1e-5)
    # libsvm's dual coefficients are y_i lam_i, bounded by C w_i
    lam = np.zeros(60)
    lam[svc.support_] = np.abs(svc.dual_coef_.ravel())
    np.testing.assert_allclose(med.dual_coef_, lam, atol=1e-5)


def repeated(X, y, w, tasks=None):
    r = np.repeat(np.arange(X.shape[0]), w.astype(int))
    return (X[r], y[r]) if tasks is None else (X[r], y[r], tasks[r])


def test_integer_weights_are_repeated_rows_and_zero_weights_dropped_rows():
    Xs, ys = make_tasks(M=3, T=20, D=4, seed=2)
    X, y, tasks = stack_tasks(Xs, ys)
    w = weights(X.shape[0], seed=3)
    weighted = MultiTaskMEDClassifier(alpha=2.0, C=0.5).fit(X, y, tasks=tasks, sample_weight=w)
    Xr, yr, tr = repeated(X, y, w, tasks)
    rows = MultiTaskMEDClassifier(alpha=2.0, C=0.5).fit(Xr, yr, tasks=tr)
    assert weighted.objective_ == pytest.approx(rows.objective_, rel=1e-8)
    np.testing.assert_allclose(weighted.switch_posterior_, rows.switch_posterior_, atol=1e-6)
    np.testing.assert_allclose(weighted.decision_function(X, tasks=tasks), rows.decision_function(X, tasks=tasks),
                               atol=1e-5)
    # the weights' lists form is the same fit
    listed = MultiTaskMEDClassifier(alpha=2.0, C=0.5).fit(Xs, ys, sample_weight=np.split(w, 3))
    np.testing.assert_allclose(np.hstack(listed.decision_function(Xs)), weighted.decision_function(X, tasks=tasks),
                               atol=1e-8)

    Rs, rs = make_regression_tasks(M=2, T=20, D=4, seed=4)
    R, r, rt = stack_tasks(Rs, rs)
    v = weights(R.shape[0], seed=5)
    reg = MultiTaskMEDRegressor(alpha=2.0, epsilon=0.05).fit(R, r, tasks=rt, sample_weight=v)
    Rr, rr, rtr = repeated(R, r, v, rt)
    reg_rows = MultiTaskMEDRegressor(alpha=2.0, epsilon=0.05).fit(Rr, rr, tasks=rtr)
    assert reg.objective_ == pytest.approx(reg_rows.objective_, rel=1e-8)
    np.testing.assert_allclose(reg.predict(R, tasks=rt), reg_rows.predict(R, tasks=rt), atol=1e-5)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_registered_method_solves_the_weighted_dual(method):
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=6)
    X, y, tasks = stack_tasks(Xs, ys)
    w = weights(X.shape[0], seed=7)
    model = MultiTaskMEDClassifier(alpha=2.0, C=0.5, method=method).fit(X, y, tasks=tasks, sample_weight=w)
    reference = MultiTaskMEDClassifier(alpha=2.0, C=0.5, method="direct").fit(X, y, tasks=tasks, sample_weight=w)
    assert model.objective_ == pytest.approx(reference.objective_, rel=1e-6)
    assert np.all(model.dual_coef_ <= 0.5 * w + 1e-12) and np.all(model.dual_coef_[w == 0] == 0)
    np.testing.assert_allclose(model.decision_function(X, tasks=tasks), reference.decision_function(X, tasks=tasks),
                               atol=1e-4)


def test_zero_weights_equal_dropping_the_rows_for_a_single_task_regressor():
    Rs, rs = make_regression_tasks(M=1, T=30, D=4, seed=8)
    w = weights(30, seed=9)
    keep = w > 0
    weighted = MEDRegressor(selection="features", epsilon=0.05).fit(Rs[0], rs[0], sample_weight=keep.astype(float))
    dropped = MEDRegressor(selection="features", epsilon=0.05).fit(Rs[0][keep], rs[0][keep])
    assert weighted.objective_ == pytest.approx(dropped.objective_, rel=1e-8)
    np.testing.assert_allclose(weighted.predict(Rs[0]), dropped.predict(Rs[0]), atol=1e-6)
    np.testing.assert_array_equal(weighted.dual_coef_[:, ~keep], 0.0)


def test_a_weighted_path_is_the_weighted_fit_at_every_point():
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=10)
    X, y, tasks = stack_tasks(Xs, ys)
    w = weights(X.shape[0], seed=11, low=1)
    path = med_path(MultiTaskMEDClassifier(), X, y, tasks=tasks, sample_weight=w, Cs=[0.3, 3.0], alphas=[1.0, 4.0])
    for C, alpha, fitted in zip(path.Cs, path.alphas, path.estimators):
        cold = MultiTaskMEDClassifier(C=C, alpha=alpha).fit(X, y, tasks=tasks, sample_weight=w)
        np.testing.assert_allclose(fitted.dual_.hi, C * w)
        assert fitted.objective_ == pytest.approx(cold.objective_, rel=1e-8)
    cv = MEDClassifierCV(Cs=[0.3, 3.0], cv=3).fit(Xs[0], ys[0], sample_weight=w[:20])
    np.testing.assert_allclose(cv.dual_.hi, cv.C_ * w[:20])


def test_bad_weights_are_refused():
    Xs, ys = make_tasks(M=2, T=10, D=3, seed=12)
    X, y, tasks = stack_tasks(Xs, ys)
    with pytest.raises(ValueError, match="Negative"):
        MultiTaskMEDClassifier().fit(X, y, tasks=tasks, sample_weight=-np.ones(20))
    w = np.ones(20)
    w[tasks == 1] = 0.0
    with pytest.raises(ValueError, match="task 1"):
        MultiTaskMEDClassifier().fit(X, y, tasks=tasks, sample_weight=w)
    w = np.ones(20)
    w[(tasks == 0) & (y > 0)] = 0.0
    with pytest.raises(ValueError, match="one class of task 0"):
        MultiTaskMEDClassifier().fit(X, y, tasks=tasks, sample_weight=w)
    with pytest.raises(ValueError, match="one per task"):
        MultiTaskMEDClassifier().fit(Xs, ys, sample_weight=np.ones(20))
    with pytest.raises(ValueError):
        MEDClassifier().fit(Xs[0], ys[0], sample_weight=np.ones(3))
