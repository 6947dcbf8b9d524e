"""The one fit path: single task is M = 1, fitted models own their inputs, a path builds its
dual once, and the solver options reach the method."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from medmtl.kernels import LinearKernel, PolynomialKernel, RBFKernel
from medmtl.med import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
    adaptive_pooling_dual,
    feature_selection_dual,
    kernel_selection_dual,
    med_path,
    solve,
)
from med_testdata import make_regression_tasks, make_tasks

BANK = [RBFKernel(0.2), LinearKernel(), PolynomialKernel(2, 0.3)]
FITTED = ["dual_coef_", "intercept_", "switch_posterior_", "coef_", "objective_path_", "n_iter_"]


def assert_same_fit(a, b):
    for name in FITTED:
        x, y = getattr(a, name), getattr(b, name)
        if x is None or y is None:
            assert x is None and y is None, name
        else:
            np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("single, multi", [
    (MEDClassifier(selection="features", alpha=2.0), MultiTaskMEDClassifier(alpha=2.0)),
    (MEDClassifier(selection="kernels", kernels=BANK, alpha=2.0),
     MultiTaskMEDClassifier(selection="kernels", kernels=BANK, alpha=2.0)),
    (MEDClassifier(kernel=RBFKernel(0.3)), MultiTaskMEDClassifier(selection=None, kernel=RBFKernel(0.3))),
    (MEDClassifier(method="bound", selection="features", rho=0.2),
     MultiTaskMEDClassifier(method="bound", rho=0.2)),
])
def test_single_task_classifier_is_the_one_task_case(single, multi):
    Xs, ys = make_tasks(M=1, T=40, D=4, seed=1, noise=1.0)
    Xt, _ = make_tasks(M=1, T=10, D=4, seed=2)
    single.fit(Xs[0], ys[0])
    multi.fit(Xs, ys)
    assert_same_fit(single, multi)
    np.testing.assert_array_equal(single.classes_, multi.classes_[0])
    np.testing.assert_array_equal(single.decision_function(Xt[0]), multi.decision_function(Xt)[0])
    np.testing.assert_array_equal(single.predict(Xt[0]), multi.predict(Xt)[0])


@pytest.mark.parametrize("single, multi", [
    (MEDRegressor(selection="features", alpha=2.0), MultiTaskMEDRegressor(alpha=2.0)),
    (MEDRegressor(selection="kernels", kernels=BANK, alpha=2.0, epsilon=0.2),
     MultiTaskMEDRegressor(selection="kernels", kernels=BANK, alpha=2.0, epsilon=0.2)),
    (MEDRegressor(kernel="rbf"), MultiTaskMEDRegressor(selection=None, kernel="rbf")),
])
def test_single_task_regressor_is_the_one_task_case(single, multi):
    Xs, ys = make_regression_tasks(M=1, T=30, D=4, seed=3)
    single.fit(Xs[0], ys[0])
    multi.fit(Xs, ys)
    assert_same_fit(single, multi)
    assert single.dual_coef_.shape == (2, 30)
    np.testing.assert_array_equal(single.predict(Xs[0]), multi.predict(Xs)[0])


def mutate(X):
    if sp.issparse(X):
        X.data *= 2.0
    else:
        X *= 2.0


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("make", [
    lambda: MEDClassifier(kernel=RBFKernel(0.3)),
    lambda: MEDClassifier(selection="kernels", kernels=BANK, alpha=1.0),
    lambda: MEDRegressor(kernel=PolynomialKernel(2, 0.3)),
    lambda: MultiTaskMEDClassifier(selection="kernels", kernels=BANK, alpha=1.0),
    lambda: MultiTaskMEDClassifier(selection=None, kernel=RBFKernel(0.3)),
    lambda: AdaptivePoolingClassifier(kernel=RBFKernel(0.3), alpha=1.0),
    lambda: AdaptivePoolingClassifier(alpha=1.0),
    lambda: MultiTaskMEDRegressor(alpha=1.0),
])
def test_changing_the_training_inputs_after_fit_leaves_the_model_alone(make, sparse):
    est = make()
    multi = not isinstance(est, (MEDClassifier, MEDRegressor))
    if isinstance(est, (MEDRegressor, MultiTaskMEDRegressor)):
        Xs, ys = make_regression_tasks(M=2, T=20, D=4, seed=4)
    else:
        Xs, ys = make_tasks(M=2, T=20, D=4, seed=4)
    Xt, _ = make_tasks(M=2, T=8, D=4, seed=5)
    if sparse:
        Xs, Xt = [sp.csr_matrix(X) for X in Xs], [sp.csr_matrix(X) for X in Xt]
    X, y, test = (Xs, ys, Xt) if multi else (Xs[0], ys[0], Xt[0])
    est.fit(X, y)
    before = est.predict(test)
    for A in Xs:
        mutate(A)
    after = est.predict(test)
    np.testing.assert_array_equal(np.hstack(before) if multi else before, np.hstack(after) if multi else after)


def test_refit_on_equal_data_after_the_caller_changed_the_first_arrays():
    # A refit reads the data it is given now, not arrays of an earlier fit that the caller
    # has since overwritten.
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=6)
    kept = [X.copy() for X in Xs]
    for make in [lambda C: MultiTaskMEDClassifier(alpha=1.0, C=C),
                 lambda C: MultiTaskMEDClassifier(selection="kernels", kernels=BANK, alpha=1.0, C=C),
                 lambda C: AdaptivePoolingClassifier(kernel=RBFKernel(0.3), C=C)]:
        Xs = [X.copy() for X in kept]
        est = make(1.0).fit(Xs, ys)
        for X in Xs:
            X *= 3.0
        est.set_params(C=2.0).fit(kept, ys)
        assert_same_fit(est, make(2.0).fit(kept, ys))


def test_a_path_builds_the_dual_once_and_a_warm_refit_builds_it_again(monkeypatch):
    from medmtl.med import _model_kinds

    calls = []
    real = _model_kinds.kernel_selection_dual
    monkeypatch.setattr(_model_kinds, "kernel_selection_dual", lambda *a, **k: calls.append(1) or real(*a, **k))
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=7)
    est = MultiTaskMEDClassifier(selection="kernels", kernels=BANK)
    points = [(0.5, 0.0), (0.5, 2.0), (2.0, 2.0)]
    path = med_path(est, Xs, ys, Cs=[C for C, _ in points], alphas=[a for _, a in points])
    assert len(calls) == 1
    for (C, alpha), J in zip(points, path.objectives):
        cold = MultiTaskMEDClassifier(selection="kernels", kernels=BANK, C=C, alpha=alpha).fit(Xs, ys)
        assert J == pytest.approx(cold.objective_, rel=1e-8)
    assert len(calls) == 1 + 3  # the path once, each cold fit once
    # warm_start keeps the previous multipliers, not the dual: a refit builds it again
    warm = MultiTaskMEDClassifier(selection="kernels", kernels=BANK, warm_start=True).fit(Xs, ys)
    first = warm.n_iter_
    warm.fit(Xs, ys)
    assert len(calls) == 4 + 2 and warm.n_iter_ <= 2 < first


@pytest.mark.parametrize("method", ["bound", "newton"])
def test_a_hit_iteration_limit_warns_once(method):
    Xs, ys = make_tasks(M=1, T=40, D=4, seed=9, noise=1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = MEDClassifier(selection="features", alpha=5.0, method=method, max_iter=1).fit(Xs[0], ys[0])
    convergence = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(convergence) == 1 and "max_iter" in str(convergence[0].message)
    assert est.solver_status_ == "max_iter"


def bound_cases():
    """Estimators solved by Algorithm 1, with the dual each one builds."""
    Xs, ys = make_tasks(M=3, T=25, D=4, seed=10, noise=1.0)
    Rs, rs = make_regression_tasks(M=2, T=20, D=4, seed=11)
    return [
        (lambda **kw: MEDClassifier(selection="features", alpha=3.0, **kw), (Xs[0], ys[0]),
         feature_selection_dual([Xs[0]], [ys[0]], 1.0, 3.0)),
        (lambda **kw: MEDRegressor(selection="kernels", kernels=BANK[1:], alpha=3.0, **kw), (Rs[0], rs[0]),
         kernel_selection_dual([Rs[0]], [rs[0]], BANK[1:], 1.0, 3.0, regression=True, epsilon=0.1)),
        (lambda **kw: MultiTaskMEDClassifier(alpha=3.0, **kw), (Xs, ys),
         feature_selection_dual(Xs, ys, 1.0, 3.0)),
        (lambda **kw: MultiTaskMEDRegressor(alpha=3.0, **kw), (Rs, rs),
         feature_selection_dual(Rs, rs, 1.0, 3.0, regression=True, epsilon=0.1)),
        (lambda **kw: AdaptivePoolingClassifier(alpha=3.0, **kw), (Xs, ys),
         adaptive_pooling_dual(Xs, ys, "linear", 1.0, 3.0, 1.0, None)),
    ]


@pytest.mark.parametrize("case", range(5))
def test_solver_options_reach_algorithm_1_from_every_estimator(case):
    make, data, dual = bound_cases()[case]
    limits = {"max_iter": 1000, "tol": 1e-12}
    exact = solve(dual, "bound", options={"inexact": False, **limits})
    loose = solve(dual, "bound", options=limits)
    assert exact.info["loose_iterations"] == 0 < loose.info["loose_iterations"]
    est = make(method="bound", solver_options={"inexact": False}).fit(*data)
    np.testing.assert_array_equal(est.objective_path_, exact.objective_path)
    np.testing.assert_array_equal(make(method="bound").fit(*data).objective_path_, loose.objective_path)


def test_an_unknown_solver_option_is_an_error_naming_the_valid_ones():
    Xs, ys = make_tasks(M=1, T=20, D=3, seed=12)
    with pytest.raises(ValueError, match="inexact"):
        MEDClassifier(selection="features", method="bound", solver_options={"inexcat": False}).fit(Xs[0], ys[0])
