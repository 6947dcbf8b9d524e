"""The MED dual written as a CVXPY problem (:meth:`MEDDual.to_cvxpy
<medmtl.med.dual.MEDDual.to_cvxpy>`), or Theorem 1's quadratic lower bound on it at a point.

With ``parameters=True`` the bound ``C`` and the prior odds ``alpha`` are
:class:`cvxpy.Parameter` objects and the problem follows CVXPY's disciplined parametrized
programming (DPP), so a re-solve at another ``C`` or ``alpha`` reuses the compiled problem.
``log(alpha + exp(q_d))`` is not DPP in ``alpha`` as written (``log alpha`` is a nonlinear
function of a parameter); its epigraph is: ``t_d >= log(alpha + exp(q_d))`` exactly when
``alpha exp(-t_d) + exp(q_d - t_d) <= 1``, a parameter times a parameter-free convex
expression. The constant ``log(alpha + 1)`` of each term is likewise the largest ``v`` with
``exp(v) <= 1 + alpha``, so the problem's value stays ``J``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .bound import bound_curvature, log_switch_term, switch_posterior

__all__ = ["to_cvxpy"]


def to_cvxpy(dual, bound_at=None, parameters=False):
    """``dual`` as a CVXPY problem, ``maximise J(lam)`` over the feasible set (see
    :meth:`MEDDual.to_cvxpy <medmtl.med.dual.MEDDual.to_cvxpy>`).

    Parameters
    ----------
    dual : MEDDual
    bound_at : array-like of shape (n,), optional
        Write Theorem 1's quadratic lower bound on ``J`` touching it at this point instead.
    parameters : bool, default=False
        Make ``C`` and ``alpha`` parameters (``problem.param_dict["C"]``, ``["alpha"]``) of
        a DPP problem. The upper bounds become ``C * hi / max(hi)``, so ``C`` starts at
        ``max(hi)`` (the ``C`` of a dual without sample weights).

    Returns
    -------
    problem : cvxpy.Problem
        Its constraints are, in order, the lower bounds, the upper bounds and the group
        equalities (whose dual values are the biases), then any of the epigraph.
    lam : cvxpy.Variable of shape (n,)
    """
    import cvxpy as cp

    if parameters and bound_at is not None:
        raise ValueError("to_cvxpy: bound_at and parameters=True do not go together; the bound's curvature "
                         "depends on alpha nonlinearly")
    lam = cp.Variable(dual.n, name="lam")
    expr = dual.c @ lam
    if dual.Phi0 is not None and dual.Phi0.shape[1]:
        expr = expr - 0.5 * cp.sum_squares(dual.Phi0.T @ lam)
    upper, epigraph = dual.hi, []
    if parameters:
        top = float(dual.hi.max())
        if top <= 0:
            raise ValueError("to_cvxpy: every upper bound is 0; there is no C to make a parameter of")
        C = cp.Parameter(nonneg=True, name="C", value=top)
        upper = C * (dual.hi / top)
    if dual.n_terms:
        if parameters:
            term, epigraph = _switched_epigraph(dual, lam)
            expr = expr - term
        elif bound_at is None:
            expr = expr - _switched_terms(dual, lam)
        else:
            expr = expr - _switched_bound(dual, lam, bound_at)
    rows = np.concatenate([np.full(g.size, k) for k, g in enumerate(dual.groups)])
    cols = np.concatenate(dual.groups)
    Aeq = sp.csr_matrix((dual.a[cols], (rows, cols)), shape=(len(dual.groups), dual.n))
    cons = [lam >= dual.lo, lam <= upper, Aeq @ lam == 0]
    return cp.Problem(cp.Maximize(expr), cons + epigraph), lam


def _term_halves(dual, lam):
    """``q_d = ||Phi_d^T lam||^2 / 2`` of every switched term, a convex CVXPY vector."""
    import cvxpy as cp

    w = dual.Phi.T @ lam
    widths = np.diff(dual.term_ptr)
    if np.all(widths == 1):
        return 0.5 * cp.square(w)
    if dual.n_terms <= 1000:
        # One cone per term (not one per column) keeps the conic problem small and
        # well conditioned for wide kernel factors.
        return 0.5 * cp.hstack([cp.sum_squares(w[a:b]) for a, b in zip(dual.term_ptr[:-1], dual.term_ptr[1:])])
    return 0.5 * (_term_sum_matrix(dual) @ cp.square(w))


def _switched_epigraph(dual, lam):
    """The switched terms with ``alpha`` a parameter: ``sum_d t_d - D v`` and the
    constraints that make it equal ``sum_d [log(alpha + exp(q_d)) - log(alpha + 1)]`` at the
    optimum (see the module notes)."""
    import cvxpy as cp

    alpha = cp.Parameter(nonneg=True, name="alpha", value=dual.alpha)
    t, v = cp.Variable(dual.n_terms, name="t"), cp.Variable(name="v")
    cons = [alpha * cp.exp(-t) + cp.exp(_term_halves(dual, lam) - t) <= 1, cp.exp(v) <= 1 + alpha]
    return cp.sum(t) - dual.n_terms * v, cons


def _switched_terms(dual, lam):
    """``sum_d [log(alpha + exp(q_d)) - log(alpha + 1)]`` as a convex CVXPY expression."""
    import cvxpy as cp

    qd = _term_halves(dual, lam)
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
