"""Small synthetic multi-task problems shared by the MED tests."""

import functools

import numpy as np

from medmtl.kernels import LinearKernel, PolynomialKernel, RBFKernel
from medmtl.med.dual import (
    adaptive_pooling_dual,
    feature_selection_dual,
    kernel_selection_dual,
    svm_dual,
)


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
