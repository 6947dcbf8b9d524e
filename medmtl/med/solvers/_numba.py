"""numba's ``njit`` when numba is installed; otherwise a decorator that leaves the function
as (slow) Python, so every compiled loop of the solvers still runs without it."""

from __future__ import annotations

try:
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised only without numba
    HAVE_NUMBA = False

    def njit(*args, **kwargs):
        """The function itself (numba is not installed)."""
        if args and callable(args[0]):
            return args[0]
        return lambda f: f

__all__ = ["HAVE_NUMBA", "njit"]
