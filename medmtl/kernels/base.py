"""The kernel protocol, the elementary kernels, and turning a specification into a kernel.

A kernel is anything callable as ``k(A, B) -> Gram matrix`` of shape
``(A.shape[0], B.shape[0])``. :class:`Kernel` adds what the MED solvers use: a name, the
diagonal, and, where one exists, an explicit feature map (``feature_map(X)``) so that a
linear or per-feature kernel is handled in feature space and no n x n matrix is ever formed.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import euclidean_distances

from ._exp import exp_nonpositive, rbf_from_products

__all__ = ["Kernel", "LinearKernel", "PolynomialKernel", "RBFKernel", "SigmoidKernel", "PerFeatureKernel",
           "CallableKernel", "get_kernel", "get_kernels"]


def _dot(A, B):
    """``A @ B.T`` as a dense array for dense or sparse inputs."""
    out = A @ B.T
    if sp.issparse(out):
        out = out.toarray()
    return np.asarray(out, dtype=float)


def _squared_distances(A, B):
    """Squared Euclidean distances between rows; plain BLAS for dense inputs.

    scikit-learn's ``euclidean_distances`` handles sparse inputs; dense ones skip its input
    validation, which the solvers' many small per-task blocks would pay again and again.
    """
    if sp.issparse(A) or sp.issparse(B):
        return euclidean_distances(A, B, squared=True)
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    # in place on the one product array: kernel columns are computed in bulk by the solvers
    d2 = A @ B.T
    d2 *= -2.0
    d2 += np.einsum("ij,ij->i", A, A)[:, None]
    d2 += np.einsum("ij,ij->i", B, B)[None, :]
    np.maximum(d2, 0.0, out=d2)
    if _same_rows(A, B):
        np.fill_diagonal(d2, 0.0)
    return d2


def _same_rows(A, B):
    """Whether ``A`` and ``B`` are the same rows (then the distances' diagonal is 0 exactly)."""
    return A is B or (A.shape == B.shape and np.shares_memory(A, B) and np.array_equal(A, B))


def _row_sq_norms(X):
    """``||x_i||^2`` per row, dense or sparse."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    X = np.asarray(X, dtype=float)
    return np.einsum("ij,ij->i", X, X)


class Kernel:
    """Base class: a named kernel ``k(A, B)``; subclasses implement ``__call__``.

    ``feature_map(X)`` returns an explicit feature matrix ``F`` with ``k(A, B) = F(A) F(B)^T``
    when one is cheap, else ``None``. ``diag(X)`` gives ``k(x_i, x_i)`` per row. ``mercer``
    says whether the kernel is positive semi-definite by construction; the MED duals then
    evaluate its Gram columns on demand instead of checking (eigen-decomposing) its Gram
    matrices.
    """

    name = "kernel"
    mercer = False

    def __call__(self, A, B):  # pragma: no cover - abstract
        """The Gram matrix ``K[i, j] = k(A[i], B[j])``.

        Parameters
        ----------
        A : {ndarray, sparse matrix} of shape (n_a, n_features)
            Rows are examples.
        B : {ndarray, sparse matrix} of shape (n_b, n_features)
            Rows are examples.

        Returns
        -------
        ndarray of shape (n_a, n_b)
        """
        raise NotImplementedError

    def feature_map(self, X):
        """An explicit feature matrix ``F`` with ``k(A, B) = F(A) F(B)^T``, when one is cheap.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Rows are examples.

        Returns
        -------
        {ndarray, sparse matrix} of shape (n_samples, n_mapped_features) or None
            ``None`` when the kernel has no cheap finite feature map (RBF, polynomial).
        """
        return None

    def diag(self, X):
        """``k(x_i, x_i)`` for every row ``x_i`` of ``X`` (dense or sparse), without the Gram matrix.

        The default evaluates the kernel on small diagonal blocks; kernels with a closed form
        (linear, RBF, ...) override it.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        n = X.shape[0]
        out = np.empty(n)
        step = 256  # small square blocks: O(n * step) kernel entries, not O(n^2)
        for start in range(0, n, step):
            Xc = X[start:start + step]
            out[start:start + step] = np.diagonal(self(Xc, Xc))
        return out

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self):
        return hash((type(self).__name__, self.name))


class LinearKernel(Kernel):
    """``k(a, b) = <a, b>``.

    Examples
    --------
    >>> LinearKernel()(np.eye(2), np.ones((1, 2)))
    array([[1.],
           [1.]])
    """

    name = "linear"
    mercer = True

    def __call__(self, A, B):
        return _dot(A, B)

    def diag(self, X):
        return _row_sq_norms(X)

    def feature_map(self, X):
        return X


class PolynomialKernel(Kernel):
    """``k(a, b) = (gamma <a, b> + coef0) ** degree``.

    Parameters
    ----------
    degree : int, default=3
    gamma : float, default=1.0
    coef0 : float, default=1.0

    Examples
    --------
    >>> PolynomialKernel(degree=2)(np.array([[1.0, 2.0]]), np.array([[1.0, 0.0]]))
    array([[4.]])
    """

    def __init__(self, degree=3, gamma=1.0, coef0=1.0):
        if not isinstance(degree, numbers.Integral) or degree < 1:
            raise ValueError(f"degree must be an integer >= 1, got {degree!r}")
        if not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"gamma must be > 0, got {gamma!r}")
        self.degree, self.gamma, self.coef0 = int(degree), float(gamma), float(coef0)
        self.name = f"poly{self.degree}"
        # a product of PSD kernels is PSD; a negative offset can break that
        self.mercer = self.coef0 >= 0

    def __call__(self, A, B):
        return (self.gamma * _dot(A, B) + self.coef0) ** self.degree

    def diag(self, X):
        return (self.gamma * _row_sq_norms(X) + self.coef0) ** self.degree


class RBFKernel(Kernel):
    """``k(a, b) = exp(-gamma ||a - b||^2)``.

    Parameters
    ----------
    gamma : float, default=1.0

    Examples
    --------
    >>> RBFKernel(gamma=0.5)(np.zeros((1, 2)), np.array([[1.0, 1.0]]))
    array([[0.36787944]])
    """

    def __init__(self, gamma=1.0):
        if not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"gamma must be > 0, got {gamma!r}")
        self.gamma = float(gamma)
        self.name = f"rbf{self.gamma:g}"

    mercer = True

    def __call__(self, A, B):
        if sp.issparse(A) or sp.issparse(B):
            K = _squared_distances(A, B)
            K *= -self.gamma
            return exp_nonpositive(K)
        A = np.asarray(A, dtype=float)
        B = np.asarray(B, dtype=float)
        # the distances and their exponential in one pass over the product (kernel columns
        # are computed in bulk by the solvers), as _squared_distances would form them
        K = np.ascontiguousarray(A @ B.T)
        rbf_from_products(K, _row_sq_norms(A), _row_sq_norms(B), self.gamma)
        if _same_rows(A, B):
            np.fill_diagonal(K, 1.0)
        return K

    def diag(self, X):
        return np.ones(X.shape[0])


class SigmoidKernel(Kernel):
    """``k(a, b) = tanh(gamma <a, b> + coef0)``, libsvm's sigmoid kernel.

    Not positive semi-definite in general: the MED duals check its Gram matrices, and
    accept it only where they are.

    Parameters
    ----------
    gamma : float, default=1.0
    coef0 : float, default=0.0

    Examples
    --------
    >>> SigmoidKernel(gamma=0.5)(np.array([[1.0, 1.0]]), np.array([[1.0, 0.0]]))
    array([[0.46211716]])
    """

    def __init__(self, gamma=1.0, coef0=0.0):
        if not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"gamma must be > 0, got {gamma!r}")
        if not np.isfinite(coef0):
            raise ValueError(f"coef0 must be finite, got {coef0!r}")
        self.gamma, self.coef0 = float(gamma), float(coef0)
        self.name = f"sigmoid{self.gamma:g}"

    def __call__(self, A, B):
        return np.tanh(self.gamma * _dot(A, B) + self.coef0)

    def diag(self, X):
        return np.tanh(self.gamma * _row_sq_norms(X) + self.coef0)


class PerFeatureKernel(Kernel):
    """``k_d(a, b) = a[d] b[d]``: one feature's linear kernel (feature selection as kernels).

    Parameters
    ----------
    feature : int
        Column index ``d``.

    Examples
    --------
    >>> PerFeatureKernel(1)(np.array([[1.0, 2.0]]), np.array([[5.0, 3.0]]))
    array([[6.]])
    """

    def __init__(self, feature):
        if not isinstance(feature, numbers.Integral) or feature < 0:
            raise ValueError(f"feature must be a non-negative integer, got {feature!r}")
        self.feature = int(feature)
        self.name = f"x{self.feature}"

    mercer = True

    def feature_map(self, X):
        if self.feature >= X.shape[1]:
            raise ValueError(f"PerFeatureKernel({self.feature}) applied to {X.shape[1]} features")
        col = X[:, [self.feature]]
        return col

    def __call__(self, A, B):
        return _dot(self.feature_map(A), self.feature_map(B))


class CallableKernel(Kernel):
    """Wrap any ``k(A, B) -> Gram`` callable, checking the shape and finiteness of its output.

    Parameters
    ----------
    func : callable
        ``func(A, B)`` returns the Gram matrix of shape ``(A.shape[0], B.shape[0])``, dense or
        sparse.
    name : str, default=None
        The kernel's name; by default the callable's ``__name__``.

    Examples
    --------
    >>> k = CallableKernel(lambda A, B: (A @ B.T) ** 2)
    >>> k(np.ones((2, 1)), np.ones((3, 1))).shape
    (2, 3)
    """

    def __init__(self, func, name=None):
        if not callable(func):
            raise TypeError(f"a kernel must be callable; got {type(func).__name__}")
        self.func = func
        self.name = name or getattr(func, "__name__", "callable")

    def __call__(self, A, B):
        K = self.func(A, B)
        if sp.issparse(K):
            K = K.toarray()
        K = np.asarray(K, dtype=float)
        if K.shape != (A.shape[0], B.shape[0]):
            raise ValueError(
                f"kernel {self.name!r} returned shape {K.shape}; expected {(A.shape[0], B.shape[0])}"
            )
        if not np.all(np.isfinite(K)):
            raise ValueError(f"kernel {self.name!r} returned NaN or infinite values")
        return K


_NAMED = {
    "linear": LinearKernel,
    "rbf": RBFKernel,
    "poly": PolynomialKernel,
    "polynomial": PolynomialKernel,
    "sigmoid": SigmoidKernel,
}


def get_kernel(spec):
    """Turn a kernel specification into a :class:`Kernel`.

    Parameters
    ----------
    spec : str, Kernel or callable
        ``"linear"``, ``"rbf"``, ``"poly"``/``"polynomial"`` (default parameters), a Kernel,
        or any callable ``k(A, B) -> Gram matrix``.

    Examples
    --------
    >>> get_kernel("rbf")
    RBFKernel('rbf1')
    """
    if isinstance(spec, Kernel):
        return spec
    if isinstance(spec, str):
        try:
            return _NAMED[spec.lower()]()
        except KeyError:
            raise ValueError(f"unknown kernel {spec!r}; use one of {sorted(_NAMED)}, a Kernel or a callable") from None
    if callable(spec):
        return CallableKernel(spec)
    raise TypeError(f"kernel must be a string, a Kernel or a callable; got {type(spec).__name__}")


def get_kernels(specs):
    """A list of :class:`Kernel` from a list of specifications (a bank).

    Parameters
    ----------
    specs : list of (str, Kernel or callable)
        One specification per kernel, each as :func:`get_kernel` takes it.

    Returns
    -------
    list of Kernel

    Examples
    --------
    >>> [k.name for k in get_kernels(["linear", RBFKernel(2.0)])]
    ['linear', 'rbf2']
    """
    if isinstance(specs, (str, Kernel)) or callable(specs):
        raise TypeError("kernels must be a list of kernels (a bank), not a single kernel")
    kernels = [get_kernel(s) for s in specs]
    if not kernels:
        raise ValueError("the kernel bank is empty")
    return kernels
