"""The logistic-quadratic function of the MED dual and its quadratic upper bound (Theorem 1).

Every switched term of a MED dual is ``f(u) = log(alpha + exp(u^T u / 2)) - log(alpha + 1)``.
Theorem 1 of Jebara (JMLR 2011, Appendix A) bounds it from above by a quadratic that touches
it at ``u = v``::

    f(u) <= f(v) + s v^T (u - v) + 1/2 (u - v)^T (I + G v v^T) (u - v)

with the switch posterior ``s = 1 / (1 + g)`` and the curvature
``G = tanh(log(g) / 2) / (2 log g)``, where ``g = alpha exp(-v^T v / 2)``.

All functions here take ``q = u^T u / 2`` (one value per switched term) so that callers never
form ``g`` itself, which under- or overflows for large ``q`` or ``alpha``.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import expit

__all__ = [
    "alpha_from_rho",
    "log_g",
    "switch_posterior",
    "bound_curvature",
    "log_switch_term",
    "QuadraticLogBound",
]

# Below this |log g| the series of tanh(x/2)/(2x) is exact to double precision (error ~ x^6).
_SERIES_CUTOFF = 1e-3


def _check_alpha(alpha):
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha < 0:
        raise ValueError(f"alpha must be finite and >= 0, got {alpha}")
    return alpha


def alpha_from_rho(rho):
    """The prior odds ``alpha = (1 - rho) / rho`` of a switch being off.

    ``rho`` is the prior probability that a switch is on (the papers' ``p0`` / ``rho``);
    this is the one place where ``rho`` becomes ``alpha``.

    Parameters
    ----------
    rho : float in (0, 1]

    Returns
    -------
    float
        ``alpha >= 0``; ``rho = 1`` gives ``alpha = 0`` (every switch on).

    Examples
    --------
    >>> alpha_from_rho(0.1)
    9.0
    >>> alpha_from_rho(1.0)
    0.0
    """
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not 0 < rho <= 1:
        raise ValueError(f"rho must be a number in (0, 1]; got {rho!r}")
    rho = float(rho)
    return (1.0 - rho) / rho


def log_g(q, alpha):
    """Return ``log g = log(alpha) - q`` (``-inf`` when ``alpha = 0``).

    Parameters
    ----------
    q : array-like of shape (n_terms,)
        Half squared norms ``u_d^T u_d / 2``.
    alpha : float
        Prior odds of a switch being off, ``alpha >= 0``.

    Returns
    -------
    ndarray of shape (n_terms,)

    Examples
    --------
    >>> log_g([0.0, 1.0], 1.0)
    array([ 0., -1.])
    """
    alpha = _check_alpha(alpha)
    q = np.asarray(q, dtype=float)
    if alpha == 0.0:
        return np.full(q.shape, -np.inf)
    return np.log(alpha) - q


def switch_posterior(q, alpha):
    """Posterior mean of each switch, ``1 / (1 + alpha exp(-q))``, computed stably.

    Parameters
    ----------
    q : array-like of shape (n_terms,)
        Half squared norms ``u_d^T u_d / 2``.
    alpha : float
        Prior odds ``alpha >= 0``; ``alpha = 0`` gives switches that are always on.

    Returns
    -------
    ndarray of shape (n_terms,) with values in ``[1 / (1 + alpha), 1]``.

    Examples
    --------
    >>> switch_posterior([0.0, 50.0], 1.0)
    array([0.5, 1. ])
    >>> switch_posterior([0.0], 0.0)
    array([1.])
    """
    alpha = _check_alpha(alpha)
    q = np.asarray(q, dtype=float)
    if alpha == 0.0:
        return np.ones(q.shape)
    return expit(q - np.log(alpha))


def bound_curvature(q, alpha):
    """Curvature ``G = tanh(log(g) / 2) / (2 log g)`` of Theorem 1, with its limits.

    ``G`` is 1/4 at ``g = 1`` (a series is used near it) and tends to 0 as ``g -> 0`` (so
    ``alpha = 0`` gives ``G = 0`` exactly) or ``g -> inf``.

    Parameters
    ----------
    q : array-like of shape (n_terms,)
        Half squared norms ``v_d^T v_d / 2`` at the point where the bound touches.
    alpha : float
        Prior odds ``alpha >= 0``.

    Returns
    -------
    ndarray of shape (n_terms,) with values in ``[0, 1/4]``.

    Examples
    --------
    >>> bound_curvature([0.0, 0.0], 1.0)
    array([0.25, 0.25])
    >>> bound_curvature([3.0], 0.0)
    array([0.])
    """
    x = log_g(q, alpha)
    G = np.zeros(x.shape)
    finite = np.isfinite(x)
    small = finite & (np.abs(x) < _SERIES_CUTOFF)
    big = finite & ~small
    xs = x[small]
    G[small] = 0.25 - xs**2 / 48.0 + xs**4 / 480.0
    xb = x[big]
    G[big] = np.tanh(xb / 2.0) / (2.0 * xb)
    return G


def log_switch_term(q, alpha):
    """The switched term ``log(alpha + exp(q)) - log(alpha + 1)``, zero at ``q = 0``.

    Computed as ``log1p(expm1(q) / (1 + alpha))`` so that small ``q`` with large ``alpha``
    keep their relative precision; ``alpha = 0`` gives exactly ``q``.

    Parameters
    ----------
    q : array-like of shape (n_terms,)
        Half squared norms ``u_d^T u_d / 2`` (>= 0).
    alpha : float
        Prior odds ``alpha >= 0``.

    Returns
    -------
    ndarray of shape (n_terms,)

    Examples
    --------
    >>> log_switch_term([0.0, 2.0], 0.0)
    array([0., 2.])
    >>> float(log_switch_term([1.0], 1.0)[0]) == float(np.log((1 + np.e) / 2))
    True
    """
    alpha = _check_alpha(alpha)
    q = np.asarray(q, dtype=float)
    if alpha == 0.0:
        return q.copy()
    out = np.empty(q.shape)
    moderate = q < 700.0
    out[moderate] = np.log1p(np.expm1(q[moderate]) / (1.0 + alpha))
    qb = q[~moderate]
    out[~moderate] = qb + np.log1p(alpha * np.exp(-qb)) - np.log1p(alpha)
    return out


class QuadraticLogBound:
    """Theorem 1's quadratic upper bound on ``log(alpha + exp(u^T u / 2))``, touching at ``v``.

    Parameters
    ----------
    v : array-like of shape (r,)
        The point where the bound is tight.
    alpha : float
        Prior odds ``alpha >= 0``.

    Attributes
    ----------
    switch_posterior : float
        ``s = 1 / (1 + alpha exp(-v^T v / 2))``, the gradient scale at ``v``.
    curvature : float
        ``G`` of Theorem 1; the Hessian of the bound is ``I + G v v^T``.

    Examples
    --------
    >>> b = QuadraticLogBound([1.0, 0.5], alpha=2.0)
    >>> u = np.array([0.3, -1.0])
    >>> bool(b.value(u) >= b.exact(u))
    True
    >>> bool(np.isclose(b.value(b.v), b.exact(b.v)))
    True
    """

    def __init__(self, v, alpha):
        self.v = np.asarray(v, dtype=float).ravel()
        self.alpha = _check_alpha(alpha)
        q = np.array([self.v @ self.v / 2.0])
        self.switch_posterior = float(switch_posterior(q, self.alpha)[0])
        self.curvature = float(bound_curvature(q, self.alpha)[0])

    def exact(self, u):
        """``log(alpha + exp(u^T u / 2))`` at ``u`` of shape (r,)."""
        u = np.asarray(u, dtype=float).ravel()
        q = u @ u / 2.0
        if self.alpha == 0.0:
            return q
        return float(np.logaddexp(np.log(self.alpha), q))

    def value(self, u):
        """The bound at ``u`` of shape (r,); ``>= exact(u)`` with equality at ``u = v``."""
        u = np.asarray(u, dtype=float).ravel()
        d = u - self.v
        vd = self.v @ d
        return (
            self.exact(self.v)
            + self.switch_posterior * vd
            + 0.5 * (d @ d + self.curvature * vd**2)
        )
