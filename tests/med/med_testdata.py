"""Small synthetic multi-task problems shared by the MED tests, and the checks every
solution must pass (KKT conditions, J evaluated naively)."""

import functools
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from medmtl.kernels import LinearKernel, PolynomialKernel, RBFKernel
from medmtl.med.builders import adaptive_pooling_dual, feature_selection_dual, kernel_selection_dual, svm_dual
from medmtl.med.solvers import solve


def make_tasks(M=3, T=30, D=6, seed=0, noise=0.3):
    """M related binary tasks: a few shared relevant features, task-specific perturbations."""
    rng = np.random.default_rng(seed)
    w = np.zeros(D)
    w[: max(2, D // 3)] = rng.normal(size=max(2, D // 3)) + 1.0
    Xs, ys = [], []
    for _ in range(M):
        X = rng.normal(size=(T, D))
        score = X @ (w + 0.3 * rng.normal(size=D)) + noise * rng.normal(size=T)
        y = np.where(score > np.median(score), 1, -1)
        Xs.append(X)
        ys.append(y)
    return Xs, ys


def make_regression_tasks(M=2, T=25, D=5, seed=0):
    rng = np.random.default_rng(seed)
    w = np.zeros(D)
    w[:2] = [1.5, -2.0]
    Xs = [rng.normal(size=(T, D)) for _ in range(M)]
    ys = [X @ (w + 0.2 * rng.normal(size=D)) + 0.1 * rng.normal(size=T) for X in Xs]
    return Xs, ys


BANK = [RBFKernel(0.05), RBFKernel(0.5), LinearKernel(), PolynomialKernel(2, gamma=0.2)]


def all_duals(alpha=2.0, C=1.0):
    """One small dual per MED model (name -> MEDDual)."""
    Xs, ys = make_tasks(M=3, T=30, D=6, seed=1)
    Xr, yr = make_regression_tasks(M=2, T=25, D=5, seed=2)
    return {
        "svm": svm_dual(Xs[:1], ys[:1], "linear", C=C),
        "single_fs": feature_selection_dual(Xs[:1], ys[:1], C=C, alpha=alpha),
        "single_ks": kernel_selection_dual(Xs[:1], ys[:1], BANK, C=C, alpha=alpha),
        "multi_fs": feature_selection_dual(Xs, ys, C=C, alpha=alpha),
        "multi_ks": kernel_selection_dual(Xs, ys, BANK, C=C, alpha=alpha),
        "pooling": adaptive_pooling_dual(Xs, ys, "linear", C=C, alpha=alpha, task_scale=3.0),
        "regression": feature_selection_dual(Xr[:1], yr[:1], C=C, alpha=alpha, regression=True, epsilon=0.1),
        "multi_regression": feature_selection_dual(Xr, yr, C=C, alpha=alpha, regression=True, epsilon=0.1),
    }


@functools.lru_cache(maxsize=None)
def cached_duals(alpha=2.0, C=1.0):
    return all_duals(alpha, C)


# The dual of every model kind the Newton solver is tested on (alpha and C given).
MODEL_KINDS = ["svm_linear", "svm_rbf", "fs_single", "fs_single_sparse", "fs_multi", "ks_single",
               "ks_multi", "pooling", "pooling_rbf", "fs_regression", "fs_multi_regression",
               "ks_multi_regression"]
MODEL_BANK = [RBFKernel(0.1), LinearKernel(), PolynomialKernel(2, gamma=0.2)]


def model_dual(kind, alpha=3.0, C=1.0):
    """A small dual of the model ``kind`` (one of :data:`MODEL_KINDS`)."""
    Xs, ys = make_tasks(3, 25, 6, seed=11, noise=0.4)
    Xr, yr = make_regression_tasks(2, 20, 5, seed=12)
    if kind == "svm_linear":
        return svm_dual(Xs[:1], ys[:1], "linear", C=C)
    if kind == "svm_rbf":
        return svm_dual(Xs[:1], ys[:1], RBFKernel(0.2), C=C)
    if kind == "fs_single":
        return feature_selection_dual(Xs[:1], ys[:1], C=C, alpha=alpha)
    if kind == "fs_single_sparse":
        return feature_selection_dual([sp.csr_matrix(np.where(np.abs(Xs[0]) > 0.7, Xs[0], 0.0))],
                                      ys[:1], C=C, alpha=alpha)
    if kind == "fs_multi":
        return feature_selection_dual(Xs, ys, C=C, alpha=alpha)
    if kind == "ks_single":
        return kernel_selection_dual(Xs[:1], ys[:1], MODEL_BANK, C=C, alpha=alpha)
    if kind == "ks_multi":
        return kernel_selection_dual(Xs, ys, MODEL_BANK, C=C, alpha=alpha)
    if kind == "pooling":
        return adaptive_pooling_dual(Xs, ys, "linear", C=C, alpha=alpha, task_scale=3.0)
    if kind == "pooling_rbf":
        return adaptive_pooling_dual(Xs, ys, RBFKernel(0.1), C=C, alpha=alpha, task_scale=3.0)
    if kind == "fs_regression":
        return feature_selection_dual(Xr[:1], yr[:1], C=C, alpha=alpha, regression=True, epsilon=0.1)
    if kind == "fs_multi_regression":
        return feature_selection_dual(Xr, yr, C=C, alpha=alpha, regression=True, epsilon=0.1)
    if kind == "ks_multi_regression":
        # (Clarabel fails on the direct solve of this regression with the polynomial kernel)
        return kernel_selection_dual(Xr, yr, MODEL_BANK[:2], C=C, alpha=alpha, regression=True,
                                     epsilon=0.1)
    raise KeyError(kind)


def assert_kkt(dual, lam, tol=1e-5):
    """``lam`` satisfies the KKT conditions of ``dual`` to ``tol`` (relative to max|c|)."""
    v = dual.kkt_violation(lam)
    scale = max(1.0, float(np.abs(dual.c).max()))
    assert v["stationarity"] <= tol * scale, v
    assert v["equality"] <= 1e-9 * scale, v
    assert v["bounds"] == 0.0, v


def naive_objective(dual, lam):
    """``J(lam)`` from dense Gram matrices and the formula as written in the papers (for
    checking what a solver reports, independently of ``MEDDual.objective``)."""
    n = dual.n
    every = np.arange(n)
    H0 = dual.shared_gram()
    J = float(dual.c @ lam)
    if H0 is not None:
        J -= 0.5 * lam @ H0.columns(every) @ lam
    for G in dual.term_grams():
        q = 0.5 * lam @ G.columns(every) @ lam
        J -= q if dual.alpha == 0 else np.logaddexp(np.log(dual.alpha), q) - np.log(dual.alpha + 1)
    return J


def reference_solution(dual):
    """The direct exponential-cone solve, the reference answer (it certifies an inaccurate
    answer by the KKT conditions and falls back to Algorithm 1, independent of the Newton
    and coordinate methods it checks, where the conic solver fails)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solve(dual, method="direct")
