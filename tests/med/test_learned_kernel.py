"""What multi-task kernel selection learns, as a kernel and a metric (JMLR Section 7.2):
``learned_kernel_ = sum_d s_d k_d`` and ``learned_metric_ = sqrt(sum_d s_d Delta_d^2)``."""

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

from medmtl.datasets import load_landmine
from medmtl.kernels import KernelDistance, LinearKernel, RBFKernel, WeightedSumKernel
from medmtl.med import MEDClassifier, MultiTaskMEDClassifier


@pytest.fixture(scope="module")
def landmine():
    ds = load_landmine(tasks=[0, 1, 2])
    rng = np.random.default_rng(0)
    Xs, ys = [t.X for t in ds], [t.y for t in ds]
    picks = [rng.choice(X.shape[0], 80, replace=False) for X in Xs]
    mu, sd = np.vstack(Xs).mean(0), np.vstack(Xs).std(0)
    return [(X[p] - mu) / sd for X, p in zip(Xs, picks)], [y[p] for y, p in zip(ys, picks)]


BANK = [LinearKernel(), RBFKernel(0.05), RBFKernel(1.0), RBFKernel(20.0)]


def test_the_learned_kernel_is_the_bank_weighted_by_the_switches(landmine):
    Xs, ys = landmine
    clf = MultiTaskMEDClassifier(selection="kernels", kernels=BANK, C=1.0, alpha=10.0).fit(Xs, ys)
    s = clf.switch_posterior_
    A, B = Xs[0][:7], Xs[1][:5]
    expected = sum(w * k(A, B) for w, k in zip(s, BANK))
    np.testing.assert_allclose(clf.learned_kernel_(A, B), expected, rtol=1e-12)
    np.testing.assert_allclose(clf.learned_kernel_.diag(A), np.diag(clf.learned_kernel_(A, A)), rtol=1e-12)
    # the metric is that kernel's feature-space distance
    D = clf.learned_metric_(A, B)
    K = clf.learned_kernel_
    np.testing.assert_allclose(D**2, K.diag(A)[:, None] + K.diag(B)[None, :] - 2 * K(A, B), rtol=1e-9, atol=1e-12)
    assert np.all(np.diag(clf.learned_metric_(A, A)) < 1e-6)
    # the posteriors are not all equal: the kernel is learned, not the plain sum
    assert np.ptp(s) > 1e-3


def test_the_learned_kernel_and_metric_work_in_scikit_learn(landmine):
    Xs, ys = landmine
    clf = MultiTaskMEDClassifier(selection="kernels", kernels=BANK, C=1.0, alpha=10.0).fit(Xs, ys)
    X, y = Xs[0], ys[0]
    by_callable = SVC(kernel=clf.learned_kernel_, C=1.0).fit(X, y).decision_function(X)
    by_gram = SVC(kernel="precomputed", C=1.0).fit(clf.learned_kernel_(X, X), y).decision_function(
        clf.learned_kernel_(X, X))
    np.testing.assert_allclose(by_callable, by_gram, rtol=1e-6, atol=1e-8)
    D = clf.learned_metric_(X, X)
    knn = KNeighborsClassifier(n_neighbors=3, metric="precomputed").fit(D, y)
    assert knn.predict(D).shape == y.shape


def test_models_without_kernel_selection_have_no_learned_kernel(landmine):
    Xs, ys = landmine
    clf = MultiTaskMEDClassifier(selection="kernels", kernels=BANK, alpha=10.0).fit(Xs, ys)
    assert hasattr(clf, "learned_kernel_")
    clf.set_params(selection="features").fit(Xs, ys)
    assert not hasattr(clf, "learned_kernel_") and not hasattr(clf, "learned_metric_")
    single = MEDClassifier(selection="kernels", kernels=BANK, alpha=10.0).fit(Xs[0], ys[0])
    assert isinstance(single.learned_kernel_, WeightedSumKernel)
    assert isinstance(single.learned_metric_, KernelDistance)


def test_weights_are_checked():
    with pytest.raises(ValueError, match="weights"):
        WeightedSumKernel(BANK, [1.0, 2.0])
    with pytest.raises(ValueError, match=">= 0"):
        WeightedSumKernel(BANK[:1], [-1.0])
