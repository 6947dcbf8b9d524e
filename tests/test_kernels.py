"""Kernels against naive double loops; dense and sparse inputs; specifications and errors."""

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.kernels import (
    CallableKernel,
    Kernel,
    LinearKernel,
    PerFeatureKernel,
    PolynomialKernel,
    RBFKernel,
    ScaledKernel,
    get_kernel,
    get_kernels,
    gram,
    per_feature_kernels,
    polynomial_bank,
    rbf_bank,
)

rng = np.random.default_rng(0)
A = rng.normal(size=(5, 4))
B = rng.normal(size=(3, 4))
A[A < -0.5] = 0.0  # some zeros so the sparse path has structure


def naive(fn):
    return np.array([[fn(a, b) for b in B] for a in A])


@pytest.mark.parametrize("kernel, fn", [
    (LinearKernel(), lambda a, b: sum(x * y for x, y in zip(a, b))),
    (PolynomialKernel(3, gamma=0.5, coef0=2.0), lambda a, b: (0.5 * sum(x * y for x, y in zip(a, b)) + 2.0) ** 3),
    (RBFKernel(0.7), lambda a, b: np.exp(-0.7 * sum((x - y) ** 2 for x, y in zip(a, b)))),
    (PerFeatureKernel(2), lambda a, b: a[2] * b[2]),
    (ScaledKernel(RBFKernel(0.1), 4.0), lambda a, b: 4.0 * np.exp(-0.1 * sum((x - y) ** 2 for x, y in zip(a, b)))),
])
def test_kernels_match_naive_loops_dense_and_sparse(kernel, fn):
    ref = naive(fn)
    np.testing.assert_allclose(kernel(A, B), ref, rtol=1e-12, atol=1e-12)
    out = kernel(sp.csr_matrix(A), sp.csr_matrix(B))
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", [LinearKernel(), PerFeatureKernel(1), ScaledKernel("linear", 2.5)])
def test_feature_maps_reproduce_the_kernel(kernel):
    FA, FB = kernel.feature_map(A), kernel.feature_map(B)
    np.testing.assert_allclose(FA @ FB.T, kernel(A, B), rtol=1e-12)
    assert RBFKernel().feature_map(A) is None


def test_specifications():
    assert isinstance(get_kernel("linear"), LinearKernel)
    assert isinstance(get_kernel("RBF"), RBFKernel)
    assert isinstance(get_kernel("poly"), PolynomialKernel)
    k = RBFKernel(2.0)
    assert get_kernel(k) is k
    c = get_kernel(lambda X, Y: X @ Y.T)
    assert isinstance(c, CallableKernel) and isinstance(c, Kernel)
    np.testing.assert_allclose(c(A, B), A @ B.T)
    assert [k.name for k in rbf_bank([0.5, 2])] == ["rbf0.5", "rbf2"]
    assert [k.degree for k in polynomial_bank([1, 2, 3, 4])] == [1, 2, 3, 4]
    assert [k.feature for k in per_feature_kernels(3)] == [0, 1, 2]
    assert len(get_kernels(["linear", k, lambda X, Y: X @ Y.T])) == 3
    np.testing.assert_allclose(gram("linear", A), A @ A.T)
    assert RBFKernel(1.0) == RBFKernel(1.0) and RBFKernel(1.0) != RBFKernel(2.0)


def test_bad_kernels():
    with pytest.raises(ValueError, match="unknown kernel"):
        get_kernel("sigmoidal")
    with pytest.raises(TypeError):
        get_kernel(3)
    with pytest.raises(ValueError, match="gamma"):
        RBFKernel(-1.0)
    with pytest.raises(ValueError, match="degree"):
        PolynomialKernel(0)
    with pytest.raises(ValueError, match="scale"):
        ScaledKernel("linear", 0.0)
    with pytest.raises(ValueError, match="feature"):
        PerFeatureKernel(-1)
    with pytest.raises(ValueError, match="applied to"):
        PerFeatureKernel(9)(A, B)
    with pytest.raises(ValueError, match="shape"):
        CallableKernel(lambda X, Y: np.ones((2, 2)))(A, B)
    with pytest.raises(ValueError, match="NaN"):
        CallableKernel(lambda X, Y: np.full((X.shape[0], Y.shape[0]), np.nan))(A, B)
    with pytest.raises(TypeError, match="bank"):
        get_kernels("linear")
    with pytest.raises(ValueError, match="empty"):
        get_kernels([])


def test_the_rbf_kernels_exp_is_numpys_to_one_unit_in_the_last_place():
    from medmtl.kernels._exp import exp_nonpositive

    rng = np.random.default_rng(0)
    x = -np.concatenate([rng.uniform(0, 1e-12, 1000), rng.uniform(0, 1, 10_000),
                         rng.uniform(0, 708, 10_000), [0.0, 0.5 * np.log(2), np.log(2), 708.0]])
    got = exp_nonpositive(x.reshape(2, -1).copy()).ravel()
    ref = np.exp(x)
    assert np.all(np.abs(got - ref) <= np.spacing(ref))
    # below -708 (exp under 3.3e-308) the result is 0; -0.0 gives 1
    assert exp_nonpositive(np.array([-708.5, -1e4, -np.inf, -0.0])).tolist() == [0.0, 0.0, 0.0, 1.0]
    # a NaN (from a NaN in the inputs of a kernel called directly) is not turned into a number
    assert np.isnan(exp_nonpositive(np.array([-1.0, np.nan, -800.0]))).tolist() == [False, True, False]
    assert np.isnan(RBFKernel(0.5)(np.array([[np.nan, 0.0]]), np.zeros((2, 2)))).all()
    # a strided view is left to numpy, in place
    a = -rng.uniform(0, 5, (4, 6))
    view = a[:, ::2]
    expected = np.exp(view)
    assert exp_nonpositive(view) is view
    np.testing.assert_array_equal(a[:, ::2], expected)


@pytest.mark.parametrize("gamma", [1e-4, 0.05, 1.0, 300.0])
def test_the_fused_rbf_pass_equals_the_separate_array_operations_bit_for_bit(gamma):
    from medmtl.kernels._exp import exp_nonpositive, rbf_from_products
    from medmtl.kernels.base import _row_sq_norms, _squared_distances

    rng = np.random.default_rng(3)
    # rows of very different scales (distances round to 0 or far beyond exp's range), one
    # entry more than a block of the pass, a single row and a single column
    for m, n, d in [(5, 513, 3), (1, 700, 20), (40, 1, 2), (17, 1100, 1)]:
        A = rng.normal(size=(m, d)) * rng.choice([1e-9, 1.0, 40.0], size=(m, 1))
        B = rng.normal(size=(n, d))
        ref = _squared_distances(A, B)
        ref *= -gamma
        ref = exp_nonpositive(ref)
        np.testing.assert_array_equal(RBFKernel(gamma)(A, B), ref)
        K = rbf_from_products(A @ B.T, _row_sq_norms(A), _row_sq_norms(B), gamma)
        np.testing.assert_array_equal(K, ref)
    X = rng.normal(size=(30, 4))
    K = RBFKernel(gamma)(X, X)
    ref = _squared_distances(X, X)
    ref *= -gamma
    np.testing.assert_array_equal(K, exp_nonpositive(ref))
    assert np.all(np.diag(K) == 1.0)
    # a NaN input stays NaN off the diagonal; a non-contiguous product is refused, not misread
    Xn = np.array([[np.nan, 0.0], [1.0, 0.0]])
    assert np.isnan(RBFKernel(gamma)(Xn, Xn)[0, 1])
    with pytest.raises(ValueError, match="C-contiguous"):
        rbf_from_products(np.zeros((4, 6))[:, ::2], np.zeros(4), np.zeros(3), gamma)
