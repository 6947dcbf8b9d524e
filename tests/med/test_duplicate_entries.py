"""A CSR matrix with duplicate entries (valid in scipy, equal to its canonical form) gives
exactly the canonical matrix's dual and answer in the solver layer: the builders sum the
duplicates, in a copy, before any row norm or product."""

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.kernels import PolynomialKernel, RBFKernel, per_feature_kernels
from medmtl.med.builders import adaptive_pooling_dual, feature_selection_dual, kernel_selection_dual, svm_dual
from medmtl.med.solvers import solve
from med_testdata import make_tasks


def _with_duplicates(X, seed):
    """A CSR copy of ``X`` whose every stored entry is split in two (in shuffled order)."""
    rng = np.random.default_rng(seed)
    C = sp.coo_matrix(X)
    part = rng.uniform(0.2, 0.8, size=C.nnz)
    rows = np.concatenate([C.row, C.row])
    cols = np.concatenate([C.col, C.col])
    vals = np.concatenate([part * C.data, C.data - part * C.data])
    order = rng.permutation(rows.size)
    # the CSR constructor from (data, indices, indptr) keeps duplicates as given
    rows, cols, vals = rows[order], cols[order], vals[order]
    by_row = np.argsort(rows, kind="stable")
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=X.shape[0]))))
    D = sp.csr_matrix((vals[by_row], cols[by_row], indptr), shape=X.shape)
    assert not D.has_canonical_format
    return D


BUILDERS = {
    "svm_linear": lambda Xs, ys: svm_dual(Xs[:1], ys[:1], "linear", C=1.0),
    "svm_rbf": lambda Xs, ys: svm_dual(Xs[:1], ys[:1], RBFKernel(0.3), C=1.0),
    "svm_poly": lambda Xs, ys: svm_dual(Xs[:1], ys[:1], PolynomialKernel(2, gamma=0.2), C=1.0),
    "fs_multi": lambda Xs, ys: feature_selection_dual(Xs, ys, C=1.0, alpha=3.0),
    "ks_multi": lambda Xs, ys: kernel_selection_dual(Xs, ys, [RBFKernel(0.3)] + per_feature_kernels(6),
                                                     C=1.0, alpha=3.0),
    "pooling": lambda Xs, ys: adaptive_pooling_dual(Xs, ys, "linear", C=1.0, alpha=3.0,
                                                    task_scale=3.0),
    "pooling_rbf": lambda Xs, ys: adaptive_pooling_dual(Xs, ys, RBFKernel(0.3), C=1.0, alpha=3.0,
                                                        task_scale=3.0),
}


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_duplicate_entries_give_the_canonical_answer(kind):
    Xs, ys = make_tasks(3, 20, 6, seed=4, noise=0.4)
    sparse = [sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0)) for X in Xs]
    duplicated = [_with_duplicates(X, seed) for seed, X in enumerate(sparse)]
    canonical = []
    for D in duplicated:
        C = D.copy()
        C.sum_duplicates()
        canonical.append(C)
    copies = [(D.data.copy(), D.indices.copy(), D.indptr.copy()) for D in duplicated]
    a = BUILDERS[kind](canonical, ys)
    b = BUILDERS[kind](duplicated, ys)
    methods = ["newton"] + ([] if a.has_kernels else ["cd"])
    for method in methods:
        sa, sb = solve(a, method), solve(b, method)
        np.testing.assert_array_equal(sa.lam, sb.lam)
        assert sa.objective == sb.objective
        np.testing.assert_array_equal(sa.intercepts, sb.intercepts)
    # the caller's matrices are left as they were, duplicates and all
    for D, (data, indices, indptr) in zip(duplicated, copies):
        np.testing.assert_array_equal(D.data, data)
        np.testing.assert_array_equal(D.indices, indices)
        np.testing.assert_array_equal(D.indptr, indptr)
