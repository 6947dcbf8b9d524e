"""Mercer kernels and banks of them for MED kernel selection.

A kernel is anything callable as ``k(A, B) -> Gram matrix`` of shape
``(A.shape[0], B.shape[0])``. The classes here add two things the MED solvers use: a name,
and, where one exists, an explicit feature map (``feature_map(X)``) so that a linear or
per-feature kernel is handled in feature space and no n x n matrix is ever formed.

Linear and polynomial kernels accept dense arrays and ``scipy.sparse`` matrices alike.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import euclidean_distances

__all__ = [
    "Kernel",
    "LinearKernel",
    "PolynomialKernel",
    "RBFKernel",
    "SigmoidKernel",
    "PerFeatureKernel",
    "ScaledKernel",
    "CallableKernel",
    "WeightedSumKernel",
    "KernelDistance",
    "get_kernel",
    "get_kernels",
    "rbf_bank",
    "polynomial_bank",
    "per_feature_kernels",
    "gram",
]


def _dot(A, B):
    """``A @ B.T`` as a dense array for dense or sparse inputs."""
    out = A @ B.T
    if sp.issparse(out):
        out = out.toarray()
    return np.asarray(out, dtype=float)


def _squared_distances(A, B):
    """Squared Euclidean distances between rows; plain BLAS for dense inputs.

    scikit-learn's ``euclidean_distances`` handles sparse inputs; for dense ones its input
    validation costs more than the product itself on the small per-task blocks MED uses.
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
    if A is B or (A.shape == B.shape and np.shares_memory(A, B) and np.array_equal(A, B)):
        np.fill_diagonal(d2, 0.0)
    return d2


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
        """``k(x_i, x_i)`` for every row of ``X``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Rows are examples.

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
        K = _squared_distances(A, B)
        K *= -self.gamma
        return np.exp(K, out=K)

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
    >>> gram("linear", np.eye(2))
    array([[1., 0.],
           [0., 1.]])
    """
    kernel = get_kernel(kernel)
    return kernel(A, A if B is None else B)
