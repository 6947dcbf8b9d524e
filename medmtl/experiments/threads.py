"""One BLAS thread for the cells of an experiment grid."""

from __future__ import annotations

import functools

__all__ = ["one_blas_thread"]


def one_blas_thread(func):
    """Run ``func`` with BLAS limited to one thread.

    The cells do many small dense operations (eigen-decompositions of 40 x 40 Gram
    matrices, small QPs), which multi-threaded BLAS slows down on busy cores (see the design
    notes, "Experiments"); parallelism comes from the grid runner instead. The limit holds
    inside the call only.

    Parameters
    ----------
    func : callable
        A cell function.

    Returns
    -------
    callable
        ``func`` under a one-thread BLAS limit.

    Examples
    --------
    >>> @one_blas_thread
    ... def cell(a):
    ...     return a + 1
    >>> cell(1)
    2
    """

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapped
