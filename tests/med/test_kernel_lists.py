"""Kernel selection from a list of precomputed Gram matrices (``kernels="precomputed"``)."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

from medmtl._params import InvalidParameterError
from medmtl.kernels import LinearKernel, PolynomialKernel, RBFKernel
from medmtl.med import MEDClassifier, MEDRegressor, MultiTaskMEDClassifier

BANK = [LinearKernel(), RBFKernel(0.05), PolynomialKernel(2, 0.1, 1.0)]


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rng = np.random.default_rng(0)
    rows = rng.permutation(X.shape[0])
    train, test = rows[:90], rows[90:130]
    return X[train], y[train], X[test]


def grams(bank, A, B):
    return [k(A, B) for k in bank]


def test_list_input_is_the_model_of_the_bank(data):
    X, y, Xt = data
    by_bank = MEDClassifier(selection="kernels", kernels=BANK, C=1.0, alpha=2.0, tol=1e-14).fit(X, y)
    by_list = MEDClassifier(selection="kernels", kernels="precomputed", C=1.0, alpha=2.0, tol=1e-14)
    by_list.fit(grams(BANK, X, X), y)
    assert by_list.objective_ == pytest.approx(by_bank.objective_, rel=1e-9)
    np.testing.assert_allclose(by_list.switch_posterior_, by_bank.switch_posterior_, atol=1e-6)
    np.testing.assert_allclose(by_list.dual_coef_, by_bank.dual_coef_, atol=1e-5)
    np.testing.assert_allclose(by_list.decision_function(grams(BANK, Xt, X)), by_bank.decision_function(Xt),
                               atol=1e-4)
    np.testing.assert_array_equal(by_list.predict(grams(BANK, Xt, X)), by_bank.predict(Xt))
    np.testing.assert_array_equal(by_list.get_support(), by_bank.get_support())


def test_kernel_weights_are_the_normalised_switches(data):
    X, y, _ = data
    model = MEDClassifier(selection="kernels", kernels="precomputed", C=1.0).fit(grams(BANK, X, X), y)
    w = model.kernel_weights_
    assert w.shape == (len(BANK),) and np.all(w >= 0) and w.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(w, model.switch_posterior_ / model.switch_posterior_.sum())
    # a refit without kernel selection leaves no kernel weights behind
    assert not hasattr(model.set_params(selection=None, kernels=None).fit(X, y), "kernel_weights_")


def test_multi_task_stacked_list(data):
    X, y, Xt = data
    tasks, new_tasks = np.repeat(["a", "b", "c"], 30), np.repeat(["a", "b"], 20)
    by_bank = MultiTaskMEDClassifier(selection="kernels", kernels=BANK[:2], C=1.0, tol=1e-14)
    by_bank.fit(X, y, tasks=tasks)
    by_list = MultiTaskMEDClassifier(selection="kernels", kernels="precomputed", C=1.0, tol=1e-14)
    by_list.fit(grams(BANK[:2], X, X), y, tasks=tasks)
    assert by_list.objective_ == pytest.approx(by_bank.objective_, rel=1e-9)
    np.testing.assert_allclose(by_list.decision_function(grams(BANK[:2], Xt, X), tasks=new_tasks),
                               by_bank.decision_function(Xt, tasks=new_tasks), atol=1e-4)
    assert by_list.kernel_weights_.sum() == pytest.approx(1.0)


def test_regressor_takes_a_list(data):
    X, _, Xt = data
    target = X[:, 0] + 0.5 * X[:, 1] ** 2
    by_bank = MEDRegressor(selection="kernels", kernels=BANK[1:], C=1.0, tol=1e-14).fit(X, target)
    by_list = MEDRegressor(selection="kernels", kernels="precomputed", C=1.0, tol=1e-14)
    by_list.fit(grams(BANK[1:], X, X), target)
    np.testing.assert_allclose(by_list.predict(grams(BANK[1:], Xt, X)), by_bank.predict(Xt), atol=1e-4)


def test_the_callers_matrices_are_not_changed(data):
    X, y, Xt = data
    train, test = grams(BANK, X, X), grams(BANK, Xt, X)
    copies = [K.copy() for K in train + test]
    model = MEDClassifier(selection="kernels", kernels="precomputed").fit(train, y)
    model.decision_function(test)
    for K, before in zip(train + test, copies):
        np.testing.assert_array_equal(K, before)
    # nor does changing them afterwards change the fitted model
    f = model.decision_function(test)
    for K in train:
        K *= 2.0
    np.testing.assert_array_equal(model.decision_function(test), f)


@pytest.mark.parametrize("bad, message", [
    (lambda K: K[0], "non-empty list of Gram matrices"),
    (lambda K: [], "non-empty list of Gram matrices"),
    (lambda K: [K[0], K[1][:, :50]], "same shape"),
    (lambda K: [K[0][:, :50], K[1][:, :50]], "must be square"),
    (lambda K: [K[0], K[1][0]], "2-D Gram matrix"),
    (lambda K: [[K[0][:30], K[1][:30]], [K[0][30:], K[1][30:]]], "not a list per task"),
])
def test_shapes_are_checked_before_solving(data, bad, message, monkeypatch):
    X, y, _ = data

    def no_solve(*args, **kwargs):
        raise AssertionError("the solver ran")

    monkeypatch.setattr("medmtl.med.solvers.registry.Plan.solve", no_solve)
    with pytest.raises((ValueError, TypeError), match=message):
        MEDClassifier(selection="kernels", kernels="precomputed").fit(bad(grams(BANK[:2], X, X)), y)


def test_prediction_shapes_are_checked(data):
    X, y, Xt = data
    model = MEDClassifier(selection="kernels", kernels="precomputed").fit(grams(BANK[:2], X, X), y)
    with pytest.raises(ValueError, match="must hold 2 matrices of shape"):
        model.predict(grams(BANK[:1], Xt, X))
    with pytest.raises(ValueError, match="must hold 2 matrices of shape"):
        model.predict([K[:, :-1] for K in grams(BANK[:2], Xt, X)])
    with pytest.raises(TypeError, match="list of Gram matrices"):
        model.predict(Xt)


def test_precomputed_needs_kernel_selection(data):
    X, y, _ = data
    with pytest.raises(InvalidParameterError, match="needs selection='kernels'"):
        MEDClassifier(kernels="precomputed").fit(grams(BANK[:2], X, X), y)
    with pytest.raises(ValueError, match="set kernels='precomputed'"):
        MEDClassifier(selection="kernels", kernels=["linear", "precomputed"]).fit(X, y)


def test_pairwise_tag():
    assert MEDClassifier(selection="kernels", kernels="precomputed").__sklearn_tags__().input_tags.pairwise
    assert not MEDClassifier(selection="kernels", kernels=BANK).__sklearn_tags__().input_tags.pairwise
