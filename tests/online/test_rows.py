"""The row kernels, against numpy, on dense and CSR rows (never densified)."""

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.online.rows import CsrRows, DenseRows, add_row, as_rows, row_dot, row_dot_fast, row_dots


@pytest.fixture
def matrix():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 30))
    X[rng.random(X.shape) < 0.7] = 0.0
    return X


def test_row_dot_matches_numpy_on_dense_and_sparse(matrix):
    w = np.random.default_rng(2).normal(size=30)
    for rows in (as_rows(matrix), as_rows(sp.csr_matrix(matrix))):
        for t in range(12):
            assert row_dot(rows, t, w) == pytest.approx(matrix[t] @ w, abs=1e-12)
            assert row_dot_fast(rows, t, w) == pytest.approx(matrix[t] @ w, abs=1e-12)


def test_row_dot_sums_a_sparse_row_as_scipy_does(matrix):
    S = sp.csr_matrix(matrix)
    w = np.random.default_rng(3).normal(size=30)
    assert [row_dot(as_rows(S), t, w) for t in range(12)] == (S @ w).tolist()


def test_row_dots_equal_row_dot_column_by_column(matrix):
    W = np.random.default_rng(4).normal(size=(30, 5))
    out = np.empty(5)
    for rows in (as_rows(matrix), as_rows(sp.csr_matrix(matrix))):
        for t in range(12):
            row_dots(rows, t, W, out)
            assert out.tolist() == [row_dot(rows, t, W[:, m]) for m in range(5)]  # bit for bit


def test_add_row_touches_only_the_support(matrix):
    w = np.random.default_rng(5).normal(size=30)
    for rows in (as_rows(matrix), as_rows(sp.csr_matrix(matrix))):
        got = w.copy()
        add_row(rows, 7, got, -0.5)
        np.testing.assert_allclose(got, w + -0.5 * matrix[7])
        untouched = np.flatnonzero(matrix[7] == 0)
        assert np.array_equal(got[untouched], w[untouched])


def test_kernels_work_on_strided_weight_views(matrix):
    W = np.zeros((30, 4))
    rows = as_rows(sp.csr_matrix(matrix))
    add_row(rows, 2, W[:, 1], 2.0)
    np.testing.assert_array_equal(W[:, 1], 2.0 * matrix[2])
    assert not W[:, [0, 2, 3]].any()
    assert row_dot(rows, 2, W[:, 1]) == pytest.approx(2.0 * matrix[2] @ matrix[2])


def test_as_rows_makes_records_without_densifying_or_mutating():
    x = sp.csr_matrix((np.array([0.2, 0.3, 0.1]), np.array([3, 1, 3]), np.array([0, 3])), shape=(1, 6))
    data, indices = x.data.copy(), x.indices.copy()
    rows = as_rows(x)
    assert isinstance(rows, CsrRows)
    w = np.zeros(6)
    add_row(rows, 0, w, 1.0)   # duplicates summed on a copy
    np.testing.assert_allclose(w, [0.0, 0.3, 0.0, 0.3, 0.0, 0.0])
    assert np.array_equal(x.data, data) and np.array_equal(x.indices, indices)
    dense = as_rows(np.eye(2))
    assert isinstance(dense, DenseRows) and dense.X.flags.c_contiguous


def test_float32_rows():
    X = np.array([[0.5, 0.25], [1.0, -0.5]], dtype=np.float32)
    w = np.zeros(2, dtype=np.float32)
    add_row(as_rows(X), 1, w, 2.0)
    assert w.dtype == np.float32 and w.tolist() == [2.0, -1.0]
    assert row_dot_fast(as_rows(X), 0, w) == 0.75
