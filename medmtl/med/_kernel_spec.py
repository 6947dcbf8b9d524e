"""The MED estimators' kernels, spelt as :class:`sklearn.svm.SVC` spells them.

``kernel`` is one of SVC's names (``"linear"``, ``"poly"``, ``"rbf"``, ``"sigmoid"``,
``"precomputed"``), a :class:`~medmtl.kernels.Kernel` or a callable ``k(A, B)``; ``degree``,
``gamma`` and ``coef0`` mean what they mean for SVC and have its defaults. A name is turned
into a kernel at fit, when ``gamma="scale"`` can be computed on the training inputs exactly
as SVC computes it, so that ``MEDClassifier(kernel="rbf")`` has ``SVC(kernel="rbf")``'s
kernel. A Kernel object is used as given (a copy, so that changing it later leaves a fitted
model alone).

``kernel="precomputed"`` takes Gram matrices instead of inputs: at fit the rows of ``X`` are
the training examples and its columns all training examples (of all tasks, in the order
given); at prediction the columns are the training examples again. Each training row
carries its own column index (an extra last column), so that one kernel object,
:class:`PrecomputedGram`, looks the Gram entries up for training and new rows alike.

``kernels="precomputed"`` (with ``selection="kernels"``) takes a list of Gram matrices
instead of inputs, one per kernel of the bank, as MKLpy takes them: at fit each is
(n_samples, n_samples), at prediction (n_new, n_samples). :func:`stack_grams` checks the
list and puts the matrices side by side (each training row then gets its column index
last, as for ``kernel="precomputed"``); kernel ``d`` of the bank is then :class:`PrecomputedBlock` ``d``, which looks its entries up
in the ``d``-th block of columns.
"""

from __future__ import annotations

import copy
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from .._validation import Checked, Interval, Options
from ..kernels import Kernel, LinearKernel, PolynomialKernel, RBFKernel, SigmoidKernel, get_kernel

__all__ = ["SVC_KERNELS", "KERNEL_PARAMETERS", "KERNEL_DOCS", "PrecomputedGram", "PrecomputedBlock",
           "check_kernel_spec", "check_kernel_bank", "is_precomputed", "is_gram_list", "with_row_index",
           "stack_grams", "gram_bank", "build_kernel", "check_kernel_range"]

SVC_KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")


def check_kernel_spec(spec):
    """A kernel as the estimator takes it: one of :data:`SVC_KERNELS` (kept as a name until
    the training inputs are seen), else a Kernel (for a callable, a
    :class:`~medmtl.kernels.CallableKernel`).

    >>> check_kernel_spec("rbf"), check_kernel_spec(LinearKernel())
    ('rbf', LinearKernel('linear'))
    """
    if isinstance(spec, str):
        if spec not in SVC_KERNELS:
            raise ValueError(f"unknown kernel {spec!r}; use one of {list(SVC_KERNELS)}, a Kernel or a callable")
        return spec
    return get_kernel(spec)


def check_kernel_bank(specs):
    """A bank of kernels for kernel selection, each as :func:`check_kernel_spec` takes it, or
    ``"precomputed"``: the inputs are a list of Gram matrices, one per kernel.

    >>> check_kernel_bank(["rbf", "linear"]), check_kernel_bank("precomputed")
    (['rbf', 'linear'], 'precomputed')
    """
    if is_precomputed(specs):
        return specs
    if isinstance(specs, (str, Kernel)) or callable(specs):
        raise TypeError("kernels must be a list of kernels (a bank) or 'precomputed' (the inputs are then a list "
                        "of Gram matrices, one per kernel), not a single kernel")
    bank = [check_kernel_spec(s) for s in specs]
    if "precomputed" in [k for k in bank if isinstance(k, str)]:
        raise ValueError("a bank cannot hold 'precomputed': set kernels='precomputed' and give X as a list of "
                         "Gram matrices, one per kernel")
    if not bank:
        raise ValueError("the kernel bank is empty")
    return bank


KERNEL_PARAMETERS = {
    "kernel": [Checked(check_kernel_spec)],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "gamma": [Options("scale", "auto"), Interval(Real, 0, None, closed="neither")],
    "coef0": [Interval(Real, None, None)],
}
KERNEL_DOCS = {
    "kernel": """\
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}, Kernel or callable, \
default="linear"
        The kernel, spelt as :class:`sklearn.svm.SVC` spells it (with ``degree``, ``gamma``
        and ``coef0`` below), or a :class:`~medmtl.kernels.Kernel`, or a callable
        ``k(A, B)`` returning the Gram matrix. ``"sigmoid"`` is used where its Gram matrices
        are positive semi-definite (the MED dual must be concave). With ``"precomputed"``,
        ``X`` holds kernel values: (n_samples, n_samples) at fit, with columns in the order
        of the rows (tasks stacked in the order given), and (n_new, n_samples) at prediction.
""",
    "degree": """\
    degree : int >= 1, default=3
        Degree of ``"poly"``; ignored by the other kernels.
""",
    "gamma": """\
    gamma : {"scale", "auto"} or float > 0, default="scale"
        Coefficient of ``"rbf"``, ``"poly"`` and ``"sigmoid"``. ``"scale"`` is
        ``1 / (n_features * X.var())`` on the training inputs (all tasks stacked), as SVC
        computes it; ``"auto"`` is ``1 / n_features``.
""",
    "coef0": """\
    coef0 : float, default=0.0
        Independent term of ``"poly"`` and ``"sigmoid"``.
""",
}
"""The description of each kernel parameter, for the estimators' docstrings."""


def is_precomputed(spec):
    """Whether a kernel specification is ``"precomputed"``."""
    return isinstance(spec, str) and spec == "precomputed"


class PrecomputedGram(Kernel):
    """Kernel values looked up in the rows given: ``k(A, B) = A[:, columns of B]``.

    Each training row carries its column index in its last entry
    (:func:`with_row_index`); a new row is its kernel values against the training rows.

    Examples
    --------
    >>> K = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> train = with_row_index(K, np.arange(2))
    >>> PrecomputedGram()(train, train[1:]).ravel().tolist(), PrecomputedGram().diag(train).tolist()
    ([1.0, 3.0], [2.0, 3.0])
    """

    name = "precomputed"

    @staticmethod
    def _columns(B):
        last = B[:, -1]
        return np.asarray(last.toarray() if sp.issparse(last) else last).ravel().astype(np.intp)

    def __call__(self, A, B):
        K = A[:, self._columns(B)]
        return np.asarray(K.toarray() if sp.issparse(K) else K, dtype=float)

    def diag(self, X):
        return np.asarray(X[np.arange(X.shape[0]), self._columns(X)], dtype=float).ravel()


class PrecomputedBlock(PrecomputedGram):
    """Kernel ``index`` of a list of Gram matrices put side by side (:func:`stack_grams`):
    ``k(A, B) = A[:, index * n_train + columns of B]``.

    Parameters
    ----------
    index : int
        The kernel's place in the list.
    n_train : int
        The number of training examples: the width of each block.

    Examples
    --------
    >>> K1, K2 = np.array([[2.0, 1.0], [1.0, 3.0]]), np.eye(2)
    >>> train = with_row_index(stack_grams([K1, K2]), np.arange(2))
    >>> PrecomputedBlock(1, 2)(train, train).tolist(), PrecomputedBlock(0, 2).diag(train).tolist()
    ([[1.0, 0.0], [0.0, 1.0]], [2.0, 3.0])
    """

    def __init__(self, index, n_train):
        self.index, self.n_train = int(index), int(n_train)
        self.name = f"precomputed[{self.index}]"

    def _columns(self, B):
        return super()._columns(B) + self.index * self.n_train


def is_gram_list(kernels):
    """Whether a bank specification is ``"precomputed"``: the inputs are a list of Gram
    matrices, one per kernel."""
    return is_precomputed(kernels)


def gram_bank(n_kernels, n_train):
    """The bank of a list of ``n_kernels`` Gram matrices over ``n_train`` training examples.

    Returns
    -------
    list of PrecomputedBlock
    """
    return [PrecomputedBlock(d, n_train) for d in range(n_kernels)]


def _gram_shapes(grams, name):
    """Each matrix's shape, after checking that ``grams`` is a non-empty list of 2-D matrices."""
    if not isinstance(grams, (list, tuple)) or len(grams) == 0:
        raise TypeError(f"with kernels='precomputed', {name} must be a non-empty list of Gram matrices, one per "
                        f"kernel; got {type(grams).__name__}")
    shapes = []
    for d, K in enumerate(grams):
        if isinstance(K, (list, tuple)) and K and (sp.issparse(K[0]) or np.ndim(K[0]) >= 2):
            raise TypeError(f"with kernels='precomputed', {name} is one list of Gram matrices over all rows (tasks "
                            "stacked, with tasks= giving each row's task), not a list per task")
        shape = K.shape if sp.issparse(K) else np.shape(K)
        if len(shape) != 2:
            raise ValueError(f"with kernels='precomputed', {name}[{d}] must be a 2-D Gram matrix; got shape {shape}")
        shapes.append(shape)
    return shapes


def stack_grams(grams, n_train=None, n_kernels=None, name="X"):
    """A list of Gram matrices, checked, side by side in one matrix.

    Parameters
    ----------
    grams : list of {array-like, sparse matrix}
        One matrix per kernel: at fit (``n_train`` None) each of shape (n, n), the kernel
        values between the training examples; after fit each of shape (n_new, n_train), the
        values between new and training examples. The caller's matrices are not changed.
    n_train, n_kernels : int, optional
        After fit: the number of training examples and of kernels the model was fitted with.
    name : str, default="X"
        The argument's name, for messages.

    Returns
    -------
    {ndarray, CSR matrix} of shape (n, n_kernels * n) at fit, (n_new, n_kernels * n_train) after
        The training matrix gets each row's own column (:func:`with_row_index`) once checked.

    Raises
    ------
    TypeError
        When ``grams`` is not a non-empty list of matrices.
    ValueError
        For a matrix that is not 2-D, matrices of different shapes, a training matrix that
        is not square, or, after fit, another number of kernels or of columns than at fit.
    """
    shapes = _gram_shapes(grams, name)
    if len(set(shapes)) > 1:
        raise ValueError(f"with kernels='precomputed', every Gram matrix in {name} must have the same shape; got "
                         f"{shapes}")
    rows, cols = shapes[0]
    if n_train is None and rows != cols:
        raise ValueError(f"with kernels='precomputed', the training Gram matrices must be square (n_samples, "
                         f"n_samples); {name}[0] has shape {shapes[0]}")
    if n_train is not None and (len(grams) != n_kernels or cols != n_train):
        raise ValueError(f"with kernels='precomputed', {name} must hold {n_kernels} matrices of shape (n_new, "
                         f"{n_train}), the kernel values against the {n_train} training examples; got "
                         f"{len(grams)} of shape {shapes[0]}")
    if any(sp.issparse(K) for K in grams):
        stacked = sp.hstack([sp.csr_matrix(K) for K in grams], format="csr")
    else:
        stacked = np.hstack([np.asarray(K) for K in grams])
    return stacked


def with_row_index(X, columns):
    """``X`` with one more column: each row's own column in the training Gram matrix.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, n_train)
    columns : ndarray of int of shape (n,)

    Returns
    -------
    {ndarray, CSR matrix} of shape (n, n_train + 1)
    """
    index = np.asarray(columns, dtype=float)[:, None]
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(index)], format="csr")
    return np.hstack([X, index])


def _scale_gamma(Xs):
    """SVC's ``gamma="scale"``: ``1 / (n_features * X.var())`` over all training inputs."""
    if any(sp.issparse(X) for X in Xs):
        X = sp.vstack([sp.csr_matrix(X) for X in Xs], format="csr")
        var = X.multiply(X).mean() - X.mean() ** 2
    else:
        X = np.vstack(Xs)
        var = X.var()
    gamma = 1.0 / (X.shape[1] * var) if var != 0 else 1.0
    if not np.isfinite(gamma):
        raise ValueError(f"gamma='scale' is 1 / (n_features * X.var()) = {gamma}: the variance of X "
                         f"({var:.3g}) is too small for a float; rescale X or give gamma a number")
    return gamma


def build_kernel(spec, params, Xs):
    """The kernel a specification names, for training inputs ``Xs`` (a list of matrices).

    Parameters
    ----------
    spec : str or Kernel
        As :func:`check_kernel_spec` returns it.
    params : dict
        The estimator's checked parameters ``degree``, ``gamma``, ``coef0``.
    Xs : list of {ndarray, sparse matrix}
        The training inputs of every task (for ``gamma``).

    Returns
    -------
    Kernel

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [2.0, 3.0]])
    >>> bool(build_kernel("rbf", {"gamma": "scale", "degree": 3, "coef0": 0.0}, [X]).gamma == 1 / (2 * X.var()))
    True
    """
    if not isinstance(spec, str):
        return copy.deepcopy(spec)
    if spec == "linear":
        return LinearKernel()
    if spec == "precomputed":
        return PrecomputedGram()
    gamma = params["gamma"]
    if gamma == "scale":
        gamma = _scale_gamma(Xs)
    elif gamma == "auto":
        gamma = 1.0 / Xs[0].shape[1]
    if spec == "rbf":
        return RBFKernel(gamma)
    if spec == "poly":
        return PolynomialKernel(params["degree"], gamma, params["coef0"])
    return SigmoidKernel(gamma, params["coef0"])


def _too_large(X, label, what):
    values = X.data if sp.issparse(X) else X
    return ValueError(f"{label} is too large for {what}: with entries up to |x| = {np.abs(values).max():.3g}, "
                      "its kernel values overflow the float range. Rescale X (for example with "
                      "sklearn.preprocessing.StandardScaler)")


def check_kernel_range(Xs, kernels, name="X"):
    """Raise unless every kernel value on the training inputs is a finite float.

    Inner products and squared distances are bounded by the squared row norms (four
    times them for distances), and a Mercer kernel's values by its diagonal: both are
    checked, in O(n_samples * n_features), instead of the Gram matrices themselves.
    ``kernels=None`` checks the row norms only, before the kernels are built.
    """
    for m, X in enumerate(Xs):
        label = name if len(Xs) == 1 else f"{name} (task {m})"
        if kernels is None:
            if not np.all(np.isfinite(4.0 * LinearKernel().diag(X))):
                raise _too_large(X, label, "a kernel on its inputs")
            continue
        for k in kernels:
            if not np.all(np.isfinite(k.diag(X))):
                raise _too_large(X, label, f"the kernel {k.name!r}")
