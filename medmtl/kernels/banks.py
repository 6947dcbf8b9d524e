"""Banks of kernels for MED kernel selection, and the Gram matrix of any kernel."""

from __future__ import annotations

from medmtl.kernels.base import PerFeatureKernel, PolynomialKernel, RBFKernel, get_kernel

__all__ = ["rbf_bank", "polynomial_bank", "per_feature_kernels", "gram"]


def rbf_bank(gammas):
    """RBF kernels, one per ``gamma``.

    Parameters
    ----------
    gammas : iterable of float
        The positive widths ``gamma`` of ``exp(-gamma ||a - b||^2)``.

    Returns
    -------
    list of RBFKernel

    Examples
    --------
    >>> [k.name for k in rbf_bank([0.1, 1.0])]
    ['rbf0.1', 'rbf1']
    """
    return [RBFKernel(g) for g in gammas]


def polynomial_bank(degrees, gamma=1.0, coef0=1.0):
    """Polynomial kernels, one per degree.

    Parameters
    ----------
    degrees : iterable of int
        The degrees, each at least 1.
    gamma : float, default=1.0
        The scale of the inner product, shared by every kernel.
    coef0 : float, default=1.0
        The offset, shared by every kernel.

    Returns
    -------
    list of PolynomialKernel

    Examples
    --------
    >>> [k.name for k in polynomial_bank([1, 2])]
    ['poly1', 'poly2']
    """
    return [PolynomialKernel(d, gamma, coef0) for d in degrees]


def per_feature_kernels(n_features):
    """The ``n_features`` per-feature linear kernels ``k_d(a, b) = a[d] b[d]``.

    Parameters
    ----------
    n_features : int
        The number of input features ``d = 0 .. n_features - 1``.

    Returns
    -------
    list of PerFeatureKernel

    Examples
    --------
    >>> len(per_feature_kernels(3))
    3
    """
    return [PerFeatureKernel(d) for d in range(int(n_features))]


def gram(kernel, A, B=None):
    """Gram matrix of ``kernel`` between the rows of ``A`` and ``B`` (default ``A``).

    Parameters
    ----------
    kernel : str, Kernel or callable
        Anything :func:`get_kernel` accepts.
    A : {ndarray, sparse matrix} of shape (n_a, n_features)
        Rows are examples.
    B : {ndarray, sparse matrix} of shape (n_b, n_features), default=None
        Rows are examples; ``None`` means ``A``.

    Returns
    -------
    ndarray of shape (n_a, n_b)

    Examples
    --------
    >>> import numpy as np
    >>> gram("linear", np.eye(2))
    array([[1., 0.],
           [0., 1.]])
    """
    kernel = get_kernel(kernel)
    return kernel(A, A if B is None else B)
