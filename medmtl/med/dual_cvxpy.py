"""The MED dual written as a CVXPY problem (:meth:`MEDDual.to_cvxpy
<medmtl.med.dual.MEDDual.to_cvxpy>`), or Theorem 1's quadratic lower bound on it at a point."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .bound import bound_curvature, log_switch_term, switch_posterior

__all__ = ["to_cvxpy"]


def to_cvxpy(dual, bound_at=None):
    """``dual`` as a CVXPY problem, ``maximise J(lam)`` over the feasible set (see
    :meth:`MEDDual.to_cvxpy <medmtl.med.dual.MEDDual.to_cvxpy>`).

    Parameters
    ----------
    dual : MEDDual
    bound_at : array-like of shape (n,), optional
        Write Theorem 1's quadratic lower bound on ``J`` touching it at this point instead.

    Returns
    -------
    problem : cvxpy.Problem
    lam : cvxpy.Variable of shape (n,)
    """
    import cvxpy as cp

    lam = cp.Variable(dual.n)
    expr = dual.c @ lam
    if dual.Phi0 is not None and dual.Phi0.shape[1]:
        expr = expr - 0.5 * cp.sum_squares(dual.Phi0.T @ lam)
    if dual.n_terms:
        if bound_at is None:
            expr = expr - _switched_terms(dual, lam)
        else:
            expr = expr - _switched_bound(dual, lam, bound_at)
    rows = np.concatenate([np.full(g.size, k) for k, g in enumerate(dual.groups)])
    cols = np.concatenate(dual.groups)
    Aeq = sp.csr_matrix((dual.a[cols], (rows, cols)), shape=(len(dual.groups), dual.n))
    cons = [lam >= dual.lo, lam <= dual.hi, Aeq @ lam == 0]
    return cp.Problem(cp.Maximize(expr), cons), lam


def _switched_terms(dual, lam):
    """``sum_d [log(alpha + exp(q_d)) - log(alpha + 1)]`` as a convex CVXPY expression."""
    import cvxpy as cp

    w = dual.Phi.T @ lam
    widths = np.diff(dual.term_ptr)
    if np.all(widths == 1):
        qd = 0.5 * cp.square(w)
    elif dual.n_terms <= 1000:
        # One cone per term (not one per column) keeps the conic problem small and
        # well conditioned for wide kernel factors.
        qd = 0.5 * cp.hstack([cp.sum_squares(w[a:b]) for a, b in zip(dual.term_ptr[:-1], dual.term_ptr[1:])])
    else:
        qd = 0.5 * (_term_sum_matrix(dual) @ cp.square(w))
    if dual.alpha == 0:
        return cp.sum(qd)
    # log(alpha + e^q) - log(alpha + 1) = logistic(q - log alpha) - log(1 + 1 / alpha)
    return cp.sum(cp.logistic(qd - np.log(dual.alpha))) - dual.n_terms * np.log1p(1.0 / dual.alpha)


def _switched_bound(dual, lam, at):
    """Theorem 1's upper bound on the switched terms, touching them at ``at``:
    ``sum_d f(v_d) + s_d v_d^T (w_d - v_d) + ||w_d - v_d||^2 / 2 + G_d (v_d^T (w_d - v_d))^2 / 2``
    with ``v = Phi^T at`` and ``w = Phi^T lam`` (a convex quadratic in ``lam``)."""
    import cvxpy as cp

    at = np.asarray(at, dtype=float)
    if at.shape != (dual.n,) or not np.all(np.isfinite(at)):
        raise ValueError(f"bound_at must be a finite array of shape ({dual.n},); got shape {at.shape}")
    v = dual.switched_u(at)
    q = dual.half_sq_norms(v)
    s, G = switch_posterior(q, dual.alpha), bound_curvature(q, dual.alpha)
    dw = dual.Phi.T @ lam - v
    r = _term_sum_matrix(dual) @ cp.multiply(v, dw)  # v_d^T (w_d - v_d) per term
    return (float(log_switch_term(q, dual.alpha).sum()) + s @ r + 0.5 * cp.sum_squares(dw)
            + 0.5 * cp.sum_squares(cp.multiply(np.sqrt(G), r)))


def _term_sum_matrix(dual):
    """``S`` of shape (D, R) summing the columns of each switched term."""
    R = dual.term_ptr[-1]
    return sp.csr_matrix((np.ones(R), (dual.col_term, np.arange(R))), shape=(dual.n_terms, R))
