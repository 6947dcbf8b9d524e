"""The solvers' BLAS thread limit: one thread inside the block, the caller's setting after."""

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from medmtl.med.solvers.threads import one_blas_thread


def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_thread_inside_and_the_callers_setting_after():
    if not _blas_threads():
        pytest.skip("no BLAS library loaded that threadpoolctl can control")
    with threadpool_limits(2, user_api="blas"):
        before = _blas_threads()
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == before
    with threadpool_limits(1, user_api="blas"):
        with one_blas_thread():  # already one thread: nothing to set or restore
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {1}
