"""The column cache's slab (medmtl.med.solvers.column_cache): one spare slab kept from a
finished solve for the next, never read beyond the columns a cache has filled."""

import gc

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.kernels import RBFKernel
from medmtl.med.builders import svm_dual
from medmtl.med.solvers import column_cache, solve
from medmtl.med.solvers.column_cache import ColumnCache, release_spare_slab


class _Identity:
    def __init__(self, K):
        self.weight = np.ones(K)
        self.V = None


def _cache(X, max_bytes=1 << 22):
    return ColumnCache(sp.csr_matrix(X), X, np.ones(X.shape[0]), _Identity(X.shape[1]), max_bytes)


@pytest.fixture(autouse=True)
def _no_spare():
    release_spare_slab()
    yield
    release_spare_slab()


def test_a_finished_cache_hands_its_slab_to_the_next():
    X = np.random.default_rng(0).normal(size=(30, 4))
    first = _cache(X)
    slab = first.cache
    assert release_spare_slab() == 0
    del first
    second = _cache(X[:20])  # smaller: a view of the same memory
    assert np.shares_memory(second.cache, slab)
    assert second.cache.shape == (20, 20) and second.cache.flags.c_contiguous
    assert column_cache._spare["slab"] is None  # taken, not shared with a third cache
    third = _cache(X)
    assert not np.shares_memory(third.cache, slab)
    del second, third
    # the larger of the two slabs is the one kept
    assert release_spare_slab() == 30 * 30 * 8
    assert release_spare_slab() == 0


def test_stale_entries_of_a_reused_slab_are_never_read():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 5))
    Q = X @ X.T
    garbage = _cache(X)
    garbage.cache[:] = np.nan  # what an earlier solve might leave behind, at its worst
    del garbage
    cache = _cache(X)
    assert np.isnan(cache.cache).all()  # the same memory, not cleared
    cache.fill([3, 17, 8])
    x = np.zeros(40)
    x[[3, 8, 25]] = [1.0, -2.0, 0.5]  # two cached columns and one computed on the spot
    np.testing.assert_allclose(cache.product(x), Q @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cache.cache[cache.slot_of[17]], Q[17], rtol=1e-12)
    # after a reset the slots below the high-water mark hold this cache's own columns only
    cache.reset(_Identity(5))
    cache.fill([0])
    np.testing.assert_allclose(cache.product(np.eye(40)[0]), Q[0], rtol=1e-12, atol=1e-12)


def test_a_kernel_solve_returns_its_slab_without_the_garbage_collector():
    # the cache must not refer back to its Newton model: a cycle would hold the slab until a
    # collection, and the next solve would fault in new memory
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=80) > 0, 1, -1)
    dual = svm_dual([X], [y], RBFKernel(0.5), C=1.0)
    gc.disable()
    try:
        a = solve(dual, "newton")
        assert release_spare_slab() > 0
        b = solve(svm_dual([X], [y], RBFKernel(0.5), C=1.0), "newton")
        c = solve(svm_dual([X], [y], RBFKernel(0.5), C=1.0), "newton")  # on b's slab
    finally:
        gc.enable()
    assert a.info["model"] == "KernelModel"
    assert a.objective == b.objective == c.objective
    np.testing.assert_array_equal(a.lam, c.lam)
