"""One BLAS thread around a solver's many small products, inside a ``with`` block.

The Newton solver's column batches and Gram-block products and the coordinate method's face
steps are BLAS calls on blocks too small for threads to pay: on a busy machine (two other
busy processes on two cores) a feature-selection fit with the default BLAS threads took 4x
to 20x the time it took with one (``benchmarks/bench_med.py``). The limit holds only inside
the ``with`` block, as scikit-learn does it; the user's own setting is restored on exit.
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import lru_cache

__all__ = ["one_blas_thread"]


@lru_cache(maxsize=1)
def _controller():
    # scanning the loaded libraries takes milliseconds: once per process (as scikit-learn)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread():
    """A context manager that limits BLAS to one thread inside its ``with`` block.

    Examples
    --------
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     x = np.ones((3, 3)) @ np.ones(3)
    >>> x.tolist()
    [3.0, 3.0, 3.0]
    """
    blas = _controller().select(user_api="blas")
    if all(lib.num_threads == 1 for lib in blas.lib_controllers):
        # already one thread: setting it again is not free (tens of milliseconds in a forked
        # worker), and there is nothing to restore
        return nullcontext()
    return blas.limit(limits=1)
