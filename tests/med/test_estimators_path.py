"""med_path: one dual for a path of (C, alpha), each point as a cold fit would give it."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.svm import SVC

from medmtl.kernels import LinearKernel, RBFKernel
from medmtl.med import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MEDGraphicalModel,
    MEDPath,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
    med_path,
)
from medmtl.model_selection import stack_tasks
from med_testdata import make_regression_tasks, make_tasks

POINTS = [(0.5, 0.5), (0.5, 4.0), (2.0, 4.0), (2.0, 0.5)]


def cases():
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=1)
    Rs, rs = make_regression_tasks(M=2, T=20, D=4, seed=2)
    return [
        (MEDClassifier(selection="features"), (Xs[0], ys[0])),
        (MEDClassifier(kernel="rbf"), (Xs[0], ys[0])),
        (MEDRegressor(selection="kernels", kernels=[RBFKernel(0.3), LinearKernel()], epsilon=0.05), (Rs[0], rs[0])),
        (MultiTaskMEDClassifier(), (Xs, ys)),
        (MultiTaskMEDRegressor(epsilon=0.05), (Rs, rs)),
        (AdaptivePoolingClassifier(kernel=RBFKernel(0.3)), (Xs, ys)),
    ]


@pytest.mark.parametrize("case", range(6))
def test_every_point_is_the_cold_fit_at_that_point(case):
    est, data = cases()[case]
    path = med_path(est, *data, Cs=[C for C, _ in POINTS], alphas=[a for _, a in POINTS])
    assert isinstance(path, MEDPath) and len(path) == len(POINTS)
    np.testing.assert_array_equal(path.Cs, [C for C, _ in POINTS])
    for (C, alpha), fitted in zip(POINTS, path.estimators):
        cold = est.set_params(C=C, alpha=alpha).fit(*data)
        assert fitted.get_params() == cold.get_params()
        assert fitted.objective_ == pytest.approx(cold.objective_, rel=1e-8)
        values = "decision_function" if hasattr(cold, "decision_function") else "predict"
        np.testing.assert_allclose(np.hstack(getattr(fitted, values)(data[0])),
                                   np.hstack(getattr(cold, values)(data[0])), atol=1e-4)
        np.testing.assert_allclose(fitted.switch_posterior_, cold.switch_posterior_, atol=1e-5)


def test_the_arrays_gather_each_points_attributes():
    Xs, ys = make_tasks(M=3, T=20, D=4, seed=3)
    path = med_path(MultiTaskMEDClassifier(C=1.0), Xs, ys, alphas=[0.1, 1.0, 10.0])
    assert path.objectives.shape == (3,) and np.all(path.Cs == 1.0)
    assert path.coefs.shape == (3, 3, 4) and path.intercepts.shape == (3, 3)
    assert path.switch_posteriors.shape == (3, 4) and path.dual_coefs.shape == (3, 60)
    assert path.statuses == [e.solver_status_ for e in path.estimators]
    np.testing.assert_array_equal(path.n_iters, [e.n_iter_ for e in path.estimators])
    assert path.seconds.shape == path.process_seconds.shape == (3,) and np.all(path.seconds >= 0)
    # a larger alpha switches features off
    assert path.switch_posteriors[-1].sum() < path.switch_posteriors[0].sum()
    kernel = med_path(MultiTaskMEDClassifier(selection=None, kernel="rbf"), Xs, ys, Cs=[0.5, 1.0])
    assert kernel.coefs is None and kernel.switch_posteriors.shape == (2, 0)


def test_warm_starts_save_work_and_a_cold_point_starts_from_zero():
    Xs, ys = make_tasks(M=3, T=30, D=5, seed=4)
    alphas = [1.0, 1.5, 2.0, 2.5]
    warm = med_path(MultiTaskMEDClassifier(method="newton"), Xs, ys, alphas=alphas)
    cold = med_path(MultiTaskMEDClassifier(method="newton"), Xs, ys, alphas=alphas, warm_start=False)
    mixed = med_path(MultiTaskMEDClassifier(method="newton"), Xs, ys, alphas=alphas,
                     warm_start=[False, True, False, True])
    np.testing.assert_allclose(warm.objectives, cold.objectives, rtol=1e-8)
    assert warm.n_iters[1:].sum() < cold.n_iters[1:].sum()
    np.testing.assert_array_equal(mixed.dual_coefs[2], cold.dual_coefs[2])
    fresh = MultiTaskMEDClassifier(method="newton", alpha=2.0).fit(Xs, ys)
    np.testing.assert_array_equal(cold.dual_coefs[2], fresh.dual_coef_)


def test_stacked_inputs_with_tasks_give_the_lists_answer():
    Xs, ys = make_tasks(M=2, T=20, D=3, seed=5)
    X, y, tasks = stack_tasks(Xs, ys, ["a", "b"])
    by_lists = med_path(MultiTaskMEDClassifier(), Xs, ys, Cs=[0.5, 2.0])
    stacked = med_path(MultiTaskMEDClassifier(), X, y, tasks=tasks, Cs=[0.5, 2.0])
    np.testing.assert_allclose(stacked.objectives, by_lists.objectives, rtol=1e-12)
    assert stacked.estimators[0].tasks_.tolist() == ["a", "b"]
    np.testing.assert_allclose(stacked.estimators[1].decision_function(X, tasks=tasks),
                               np.concatenate(by_lists.estimators[1].decision_function(Xs)), atol=1e-10)


def test_the_graphical_model_walks_a_path_too():
    from medmtl.datasets.ising import cycle_graph, random_ising

    X = random_ising(cycle_graph(5), coupling=1.0, mixed=False, random_state=1).sample(200, random_state=1)
    alphas = [1.0, 10.0, 100.0]
    path = med_path(MEDGraphicalModel(C=0.1), X, alphas=alphas)
    for alpha, fitted in zip(alphas, path.estimators):
        cold = MEDGraphicalModel(C=0.1, alpha=alpha).fit(X)
        assert fitted.objective_ == pytest.approx(cold.objective_, rel=1e-7)
        np.testing.assert_array_equal(fitted.adjacency_, cold.adjacency_)
        assert fitted.score(X) == cold.score(X)


def test_the_estimator_given_is_left_alone_and_the_points_own_their_fits():
    Xs, ys = make_tasks(M=2, T=20, D=3, seed=6)
    est = MultiTaskMEDClassifier(selection="kernels", kernels=[RBFKernel(0.5)], rho=0.5)
    path = med_path(est, Xs, ys, alphas=[0.0, 3.0])
    assert not hasattr(est, "dual_coef_") and est.get_params()["rho"] == 0.5
    assert path.estimators[1].get_params()["rho"] is None and path.estimators[1].alpha == 3.0
    first = path.estimators[0].decision_function(Xs)
    again = pickle.loads(pickle.dumps(path.estimators[0])).decision_function(Xs)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    for X in Xs:
        X *= 10.0
    for a, b in zip(first, path.estimators[0].decision_function([X / 10.0 for X in Xs])):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_the_points_of_a_plain_svm_are_svcs():
    Xs, ys = make_tasks(M=1, T=30, D=3, seed=7)
    path = med_path(MEDClassifier(kernel="rbf"), Xs[0], ys[0], Cs=[0.5, 5.0])
    for C, fitted in zip([0.5, 5.0], path.estimators):
        svc = SVC(kernel="rbf", C=C, tol=1e-10).fit(Xs[0], ys[0])
        np.testing.assert_allclose(fitted.decision_function(Xs[0]), svc.decision_function(Xs[0]), atol=1e-4)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(Cs=[1.0, 2.0], alphas=[1.0, 2.0, 3.0]), ValueError, "Cs has 2 values and alphas 3"),
    (dict(Cs=[1.0, 0.0]), ValueError, "med_path: C must be > 0"),
    (dict(alphas=[-1.0]), ValueError, "med_path: alpha must be None or >= 0"),
    (dict(Cs=[]), ValueError, "non-empty 1-D sequence"),
    (dict(Cs=[1.0, 2.0], warm_start=[True]), ValueError, "warm_start has 1 entries for a path of 2 points"),
    (dict(warm_start="yes"), TypeError, "warm_start must be a bool"),
])
def test_bad_paths_are_refused_before_any_fit(kwargs, error, message):
    Xs, ys = make_tasks(M=2, T=10, D=3, seed=8)
    with pytest.raises(error, match=message):
        med_path(MultiTaskMEDClassifier(), Xs, ys, **kwargs)


def test_only_med_estimators_walk_a_path_and_their_parameters_are_checked_first():
    Xs, ys = make_tasks(M=2, T=10, D=3, seed=9)
    with pytest.raises(TypeError, match="med_path takes a MED estimator"):
        med_path(SVC(), Xs[0], ys[0])
    with pytest.raises(ValueError, match="unknown method 'magic'"):
        med_path(MultiTaskMEDClassifier(method="magic"), None, None)


def test_a_path_warns_once_per_point_that_stops_short():
    Xs, ys = make_tasks(M=1, T=40, D=4, seed=10, noise=1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = med_path(MEDClassifier(selection="features", method="bound", max_iter=1), Xs[0], ys[0],
                        alphas=[2.0, 5.0])
    assert path.statuses == ["max_iter", "max_iter"]
    assert sum("max_iter" in str(w.message) for w in caught) == 2
