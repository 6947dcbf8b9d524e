"""Kernels made from other kernels: a scaled kernel, a weighted sum, and its distance.

A weighted sum of a bank is what MED kernel selection learns (``learned_kernel_``) and its
feature-space distance the metric it learns (``learned_metric_``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from medmtl.kernels.base import Kernel, get_kernel, get_kernels

__all__ = ["ScaledKernel", "WeightedSumKernel", "KernelDistance"]


class ScaledKernel(Kernel):
    """``scale * k(a, b)`` for a kernel ``k`` and ``scale > 0``.

    Parameters
    ----------
    kernel : str, Kernel or callable
        The kernel ``k`` (anything :func:`get_kernel` accepts).
    scale : float
        A positive factor.

    Examples
    --------
    >>> from medmtl.kernels import LinearKernel
    >>> ScaledKernel(LinearKernel(), 3.0)(np.ones((1, 2)), np.ones((1, 2)))
    array([[6.]])
    """

    def __init__(self, kernel, scale):
        if not np.isfinite(scale) or scale <= 0:
            raise ValueError(f"kernel scale must be > 0, got {scale!r}")
        self.kernel = get_kernel(kernel)
        self.scale = float(scale)
        self.name = f"{self.scale:g}*{self.kernel.name}"
        self.mercer = self.kernel.mercer

    def __call__(self, A, B):
        return self.scale * self.kernel(A, B)

    def diag(self, X):
        return self.scale * self.kernel.diag(X)

    def feature_map(self, X):
        F = self.kernel.feature_map(X)
        if F is None:
            return None
        return F * np.sqrt(self.scale)


class WeightedSumKernel(Kernel):
    """``k(a, b) = sum_d w_d k_d(a, b)``: a bank combined with non-negative weights.

    What MED kernel selection learns (``learned_kernel_``, with the switch posteriors as
    weights). A callable ``k(A, B)``, so scikit-learn takes it as ``SVC(kernel=k)`` or
    through its Gram matrix (``kernel="precomputed"``).

    Parameters
    ----------
    kernels : list of (str, Kernel or callable)
        The bank.
    weights : array-like of shape (len(kernels),)
        Non-negative weights.

    Attributes
    ----------
    kernels : list of Kernel
    weights : ndarray of shape (len(kernels),)

    Examples
    --------
    >>> from medmtl.kernels import RBFKernel
    >>> k = WeightedSumKernel(["linear", RBFKernel(1.0)], [2.0, 0.5])
    >>> A = np.array([[1.0, 0.0]])
    >>> k(A, A)
    array([[2.5]])
    >>> k.name
    '2*linear+0.5*rbf1'
    """

    def __init__(self, kernels, weights):
        self.kernels = get_kernels(kernels)
        self.weights = np.array(weights, dtype=float).ravel()
        if self.weights.size != len(self.kernels):
            raise ValueError(f"{self.weights.size} weights for {len(self.kernels)} kernels")
        if not np.all(np.isfinite(self.weights)) or np.any(self.weights < 0):
            raise ValueError("kernel weights must be finite and >= 0")
        self.name = "+".join(f"{w:.3g}*{k.name}" for w, k in zip(self.weights, self.kernels))
        self.mercer = all(k.mercer for k in self.kernels)

    def __call__(self, A, B):
        K = np.zeros((A.shape[0], B.shape[0]))
        for w, k in zip(self.weights, self.kernels):
            if w > 0:
                K += w * k(A, B)
        return K

    def diag(self, X):
        out = np.zeros(X.shape[0])
        for w, k in zip(self.weights, self.kernels):
            if w > 0:
                out += w * k.diag(X)
        return out

    def feature_map(self, X):
        maps = [k.feature_map(X) for k in self.kernels]
        if any(F is None for F in maps):
            return None
        parts = [F * np.sqrt(w) for F, w in zip(maps, self.weights)]
        if any(sp.issparse(F) for F in parts):
            return sp.hstack([sp.csr_matrix(F) for F in parts], format="csr")
        return np.hstack(parts)

    def __eq__(self, other):
        return (type(self) is type(other) and self.kernels == other.kernels
                and np.array_equal(self.weights, other.weights))

    def __hash__(self):
        return hash((type(self).__name__, self.name))


class KernelDistance:
    """``d(a, b) = sqrt(sum_d w_d Delta_d(a, b)^2)``, ``Delta_d`` the distance in kernel
    ``k_d``'s feature space: ``Delta_d^2 = k_d(a, a) + k_d(b, b) - 2 k_d(a, b)``.

    The metric MED kernel selection learns (``learned_metric_``): the distance of
    :class:`WeightedSumKernel`'s feature space. ``metric(A, B)`` is the distance matrix,
    for scikit-learn's ``metric="precomputed"`` (k-nearest neighbours, clustering).

    Parameters
    ----------
    kernels : list of (str, Kernel or callable)
    weights : array-like of shape (len(kernels),)
        Non-negative weights.

    Examples
    --------
    >>> metric = KernelDistance(["linear"], [4.0])
    >>> metric(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]))
    array([[10.]])
    """

    def __init__(self, kernels, weights):
        self.kernel = WeightedSumKernel(kernels, weights)

    @property
    def name(self):
        """``"distance(<the weighted kernel's name>)"``."""
        return f"distance({self.kernel.name})"

    def __call__(self, A, B):
        """The distances between the rows of ``A`` and of ``B``.

        Parameters
        ----------
        A : {ndarray, sparse matrix} of shape (n_a, n_features)
        B : {ndarray, sparse matrix} of shape (n_b, n_features)

        Returns
        -------
        ndarray of shape (n_a, n_b)
        """
        k = self.kernel
        D2 = k.diag(A)[:, None] + k.diag(B)[None, :] - 2.0 * k(A, B)
        return np.sqrt(np.maximum(D2, 0.0))

    def __repr__(self):
        return f"KernelDistance({self.kernel.name!r})"
