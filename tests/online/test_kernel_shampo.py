"""KernelSHAMPO against SHAMPO (linear kernel) and a naive kernel re-implementation."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.kernels import RBFKernel
from medmtl.online import SHAMPO, KernelSHAMPO, LabelOracle, scale_to_unit_ball

from online_testdata import multitask_problem
from test_shampo import naive_shampo


def test_linear_kernel_equals_shampo():
    Xs, ys = multitask_problem(K=3, n=150, d=4, seed=17)
    lin = KernelSHAMPO(kernel="linear", b=0.1, random_state=2).fit(Xs, ys)
    ref = SHAMPO(b=0.1, random_state=2).fit(Xs, ys)
    assert np.array_equal(lin.queried_tasks_, ref.queried_tasks_)
    np.testing.assert_allclose(lin.train_margins_, ref.train_margins_, atol=1e-9)
    for coef, support, dual in zip(ref.coef_, lin.support_, lin.dual_coef_):
        np.testing.assert_allclose(dual @ support, coef, atol=1e-9)


def test_rbf_matches_the_naive_reference():
    Xs, ys = multitask_problem(K=3, n=150, d=4, seed=17)
    gamma = 2.0
    rbf = KernelSHAMPO(kernel="rbf", gamma=gamma, b=0.1, random_state=2).fit(Xs, ys)
    k = lambda u, v: np.exp(-gamma * np.sum((u - v) ** 2))  # noqa: E731
    _, queried, margins, _ = naive_shampo(Xs, ys, 0.1, 0.05, seed=2, kernel=k)
    assert np.array_equal(rbf.queried_tasks_, queried)
    np.testing.assert_allclose(rbf.train_margins_, margins, atol=1e-9)
    np.testing.assert_allclose(rbf.decision_function([X[:5] for X in Xs])[0],
                               [sum(c * k(s, x) for s, c in zip(rbf.support_[0], rbf.dual_coef_[0]))
                                for x in scale_to_unit_ball(Xs[0][:5])], atol=1e-9)
    # a Kernel object is the same kernel
    same = KernelSHAMPO(kernel=RBFKernel(gamma), b=0.1, random_state=2).fit(Xs, ys)
    assert np.array_equal(same.queried_tasks_, rbf.queried_tasks_)


def test_fitted_rbf_model_pickles_and_predicts_identically():
    Xs, ys = multitask_problem(K=2, n=120, d=3, seed=5)
    model = KernelSHAMPO(kernel="rbf", gamma=0.5, b=0.1, random_state=0).fit(Xs, ys)
    clone = pickle.loads(pickle.dumps(model))
    assert [p.tolist() for p in clone.predict(Xs)] == [p.tolist() for p in model.predict(Xs)]
    # and goes on learning as the original does
    oracle, clone_oracle = LabelOracle(ys), LabelOracle(ys)
    for t in range(20):
        model.learn_one([X[t] for X in Xs], oracle=oracle, index=t)
        clone.learn_one([X[t] for X in Xs], oracle=clone_oracle, index=t)
    for a, b in zip(model.dual_coef_, clone.dual_coef_):
        assert np.array_equal(a, b)


def test_support_grows_in_amortised_constant_time():
    # every round updates (lambda = inf, uniform), so the support holds every queried input
    Xs, ys = multitask_problem(K=1, n=600, d=3, seed=6)
    model = KernelSHAMPO(kernel="linear", strategy="uniform", random_state=0).fit(Xs, ys)
    assert model.updates_per_task_[0] == 600
    support = model._support[0]
    assert support.size == 600 and support.coefs.size == 1024   # doubled from 16: log2 copies only
    np.testing.assert_allclose(model.support_[0], scale_to_unit_ball(Xs[0]))


def test_bad_kernels_and_inputs():
    Xs, ys = multitask_problem(K=3, n=20, d=4, seed=7)
    with pytest.raises(ValueError, match="kernel"):
        KernelSHAMPO(kernel="laplacian").fit(Xs, ys)
    with pytest.raises(ValueError, match="gamma"):
        KernelSHAMPO(kernel="rbf", gamma=-1.0).fit(Xs, ys)
    with pytest.raises(TypeError, match="dense"):
        KernelSHAMPO().fit([sp.csr_matrix(X) for X in Xs], ys)
    with pytest.raises(AttributeError, match="primal"):
        KernelSHAMPO().fit(Xs, ys).coef_
