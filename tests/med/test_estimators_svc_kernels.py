"""SVC's kernel spelling on every MED estimator, with SVC's defaults: the MED SVM is libsvm."""

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC, SVR

from medmtl.kernels import PolynomialKernel, RBFKernel
from medmtl.med import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
)
from med_testdata import make_regression_tasks, make_tasks

SPELLINGS = [
    dict(kernel="linear"),
    dict(kernel="rbf"),
    dict(kernel="rbf", gamma=0.2),
    dict(kernel="rbf", gamma="auto"),
    dict(kernel="poly"),
    dict(kernel="poly", degree=2, gamma=0.3, coef0=1.0),
    dict(kernel="sigmoid", gamma=0.005, coef0=0.0),
]
# libsvm's own solutions meet its KKT conditions to ~3e-7 on these problems (its intercept is
# an average over the free multipliers), so decision values agree to about 1e-6
LIBSVM_ATOL = 1e-5


def classification_data(n=40, D=6, seed=0, scale=1.0, offset=0.5):
    """Inputs not centred by default: "scale" must use the variance, not the mean square."""
    Xs, ys = make_tasks(M=1, T=n + 30, D=D, seed=seed, noise=1.0)
    X = scale * Xs[0] + offset
    return X[:n], ys[0][:n], X[n:]


def libsvm_gram(svm, X):
    """The Gram matrix of a fitted libsvm model's kernel on ``X`` (its gamma resolved)."""
    from sklearn.metrics.pairwise import pairwise_kernels

    if svm.kernel == "precomputed":
        return X
    kw = {"linear": {}, "rbf": dict(gamma=svm._gamma), "poly": dict(gamma=svm._gamma, degree=svm.degree,
                                                                       coef0=svm.coef0),
          "sigmoid": dict(gamma=svm._gamma, coef0=svm.coef0)}[svm.kernel]
    return pairwise_kernels(X, metric=svm.kernel, **kw)


def svc_objective(svc, K):
    dc = svc.dual_coef_.toarray() if sp.issparse(svc.dual_coef_) else svc.dual_coef_
    dc, sv = dc.ravel(), svc.support_
    return np.abs(dc).sum() - 0.5 * dc @ K[np.ix_(sv, sv)] @ dc


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
@pytest.mark.parametrize("sparse", [False, True])
def test_the_med_svm_is_svc_for_every_spelling(spelling, sparse):
    # a sigmoid Gram matrix is positive semi-definite for small gamma on wide centred inputs
    sigmoid = spelling["kernel"] == "sigmoid"
    X, y, Xt = classification_data(D=60, offset=0.0) if sigmoid else classification_data()
    if sparse:
        X, Xt = sp.csr_matrix(X), sp.csr_matrix(Xt)
    svc = SVC(C=1.0, tol=1e-10, **spelling).fit(X, y)
    med = MEDClassifier(C=1.0, **spelling).fit(X, y)
    J = svc_objective(svc, libsvm_gram(svc, X.toarray() if sparse else X))
    assert med.objective_ == pytest.approx(J, rel=1e-7)
    np.testing.assert_allclose(med.decision_function(Xt), svc.decision_function(Xt), atol=LIBSVM_ATOL)
    np.testing.assert_array_equal(med.predict(Xt), svc.predict(Xt))


def test_rbf_default_gamma_is_svcs_scale():
    X, y, _ = classification_data(scale=3.0)
    med = MEDClassifier(kernel="rbf").fit(X, y)
    (kernel,) = med._model.kernels
    assert isinstance(kernel, RBFKernel)
    assert kernel.gamma == SVC(kernel="rbf").fit(X, y)._gamma == 1.0 / (X.shape[1] * X.var())


@pytest.mark.parametrize("spelling", [dict(kernel="linear"), dict(kernel="rbf"), dict(kernel="poly", degree=2),
                                      dict(kernel="rbf", gamma=0.5)])
def test_the_med_svr_is_svr(spelling):
    Xs, ys = make_regression_tasks(M=1, T=50, D=4, seed=5)
    X, y = Xs[0][:40], ys[0][:40]
    svr = SVR(C=0.5, epsilon=0.2, tol=1e-10, **spelling).fit(X, y)
    med = MEDRegressor(C=0.5, epsilon=0.2, **spelling).fit(X, y)
    beta = np.zeros(40)
    beta[svr.support_] = svr.dual_coef_.ravel()
    J = y @ beta - 0.2 * np.abs(beta).sum() - 0.5 * beta @ libsvm_gram(svr, X) @ beta
    assert med.objective_ == pytest.approx(J, rel=1e-7)
    np.testing.assert_allclose(med.predict(Xs[0][40:]), svr.predict(Xs[0][40:]), atol=LIBSVM_ATOL)


def test_precomputed_is_svcs_precomputed():
    X, y, Xt = classification_data()
    K, Kt = RBFKernel(0.1)(X, X), RBFKernel(0.1)(Xt, X)
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(K, y)
    med = MEDClassifier(kernel="precomputed", C=2.0).fit(K, y)
    assert med.objective_ == pytest.approx(svc_objective(svc, K), rel=1e-7)
    np.testing.assert_allclose(med.decision_function(Kt), svc.decision_function(Kt), atol=LIBSVM_ATOL)
    # the same answer, not the same path: both solved to a KKT gap of 1e-10 (at the default
    # 1e-6 they agree to about that tolerance only: 5.7e-7 with the packages a fresh install
    # resolved on 2026-11-26, numpy 2.4.6, scipy 1.17.1, scikit-learn 1.9.1, numba 0.68.1)
    tight = {"kkt_tol": 1e-10}
    exact = MEDClassifier(kernel="precomputed", C=2.0, solver_options=tight).fit(K, y)
    on_inputs = MEDClassifier(kernel=RBFKernel(0.1), C=2.0, solver_options=tight).fit(X, y)
    np.testing.assert_allclose(exact.decision_function(Kt), on_inputs.decision_function(Xt), atol=1e-9)
    with pytest.raises(ValueError, match="square Gram matrix"):
        MEDClassifier(kernel="precomputed").fit(K[:, :10], y)
    with pytest.raises(ValueError, match="features"):
        med.decision_function(Kt[:, :10])


def test_precomputed_multitask_in_both_forms_equals_the_kernel_on_inputs():
    Xs, ys = make_tasks(M=3, T=20, D=4, seed=3)
    X, y, tasks = np.vstack(Xs), np.concatenate(ys), np.repeat([0, 1, 2], 20)
    kernel = RBFKernel(0.2)
    K = kernel(X, X)
    for make in [lambda **kw: MultiTaskMEDClassifier(selection=None, **kw),
                 lambda **kw: AdaptivePoolingClassifier(alpha=2.0, **kw)]:
        on_inputs = make(kernel=kernel).fit(Xs, ys)
        stacked = make(kernel="precomputed").fit(K, y, tasks=tasks)
        lists = make(kernel="precomputed").fit([K[tasks == m] for m in range(3)], ys)
        expected = np.concatenate(on_inputs.decision_function(Xs))
        # a Gram matrix is factorised, a Mercer kernel evaluated column by column: the two
        # duals agree to the solver's tolerance
        np.testing.assert_allclose(stacked.decision_function(K, tasks=tasks), expected, atol=1e-5)
        np.testing.assert_array_equal(
            np.concatenate(lists.decision_function([K[tasks == m] for m in range(3)])),
            stacked.decision_function(K, tasks=tasks))


@pytest.mark.parametrize("make", [
    lambda kernel: MultiTaskMEDClassifier(selection=None, kernel=kernel),
    lambda kernel: MultiTaskMEDRegressor(selection=None, kernel=kernel),
    lambda kernel: AdaptivePoolingClassifier(kernel=kernel),
    lambda kernel: MultiTaskMEDClassifier(selection="kernels", kernels=[kernel, "linear"]),
    lambda kernel: MEDRegressor(selection="kernels", kernels=[kernel, "linear"]),
])
def test_every_estimator_spells_kernels_as_svc(make):
    # a name means the Kernel object with SVC's parameters, "scale" computed on all tasks'
    # training inputs stacked; in a bank too
    regression = "Regressor" in type(make("linear")).__name__
    Xs, ys = (make_regression_tasks if regression else make_tasks)(M=2, T=20, D=4, seed=7)
    single = isinstance(make("linear"), MEDRegressor)
    data = (Xs[0], ys[0]) if single else (Xs, ys)
    gamma = 1.0 / (4 * (Xs[0] if single else np.vstack(Xs)).var())
    for name, kernel in [(dict(kernel="rbf"), RBFKernel(gamma)),
                         (dict(kernel="poly", degree=2, gamma=0.5, coef0=1.0), PolynomialKernel(2, 0.5, 1.0))]:
        by_name = make(name["kernel"]).set_params(**{k: v for k, v in name.items() if k != "kernel"}).fit(*data)
        by_object = make(kernel).fit(*data)
        np.testing.assert_array_equal(np.hstack(by_name.predict(data[0])), np.hstack(by_object.predict(data[0])))


def test_a_kernel_object_is_copied_at_fit():
    X, y, Xt = classification_data()
    kernel = RBFKernel(0.3)
    model = MEDClassifier(kernel=kernel).fit(X, y)
    before = model.decision_function(Xt)
    kernel.gamma = 3.0
    np.testing.assert_array_equal(model.decision_function(Xt), before)
    assert copy.deepcopy(model).get_params()["kernel"] is not kernel


@pytest.mark.parametrize("params, message", [
    (dict(kernel="gaussian"), "unknown kernel 'gaussian'; use one of ['linear', 'poly', 'rbf', 'sigmoid', "
                              "'precomputed']"),
    (dict(kernel="rbf", gamma=0.0), "gamma must be one of 'scale', 'auto' or > 0"),
    (dict(kernel="rbf", gamma="Scale"), "gamma must be one of 'scale', 'auto' or > 0"),
    (dict(kernel="poly", degree=0), "degree must be >= 1"),
    (dict(kernel="poly", coef0=np.nan), "coef0 must be a finite real number"),
    (dict(selection="kernels", kernels=["precomputed"]), "a bank cannot hold 'precomputed'"),
    (dict(selection="features", kernel="poly"), "selection='features' switches linear features"),
    (dict(selection="kernels", kernels=["rbf"], kernel="precomputed"), "selection='kernels' cannot take"),
])
def test_bad_kernel_spellings_are_named(params, message):
    X, y, _ = classification_data()
    with pytest.raises(ValueError) as err:
        MEDClassifier(**params).fit(X, y)
    assert message in str(err.value)


def test_an_indefinite_sigmoid_gram_is_refused():
    # tanh(gamma <a, b> + coef0) with a large gamma is far from positive semi-definite: the
    # MED dual would not be concave
    X, y, _ = classification_data()
    with pytest.raises(ValueError, match="not positive semi-definite"):
        MEDClassifier(kernel="sigmoid", gamma=1.0, coef0=-1.0).fit(X, y)
