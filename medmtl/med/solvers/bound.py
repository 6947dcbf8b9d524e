"""Algorithm 1 of Jebara (JMLR 2011): sequential quadratic programming on Theorem 1's bound.

Each iteration replaces every switched term by its quadratic upper bound at the current
multipliers and maximises the resulting lower bound on J, either task block by task block
(``update="gauss-seidel"``, Algorithm 1 step 3, the bound refreshed before each block) or over
all multipliers at once (``update="joint"``, the form Theorem 2 analyses). Every step
maximises a lower bound that touches J at the current point, so J never decreases.
"""

from __future__ import annotations

import numpy as np

from ..bound import bound_curvature, switch_posterior
from ._common import MEDSolution, check_cvxpy_solver
from .qp import BlockQP, CVXPYBackend, OSQPBackend

__all__ = ["solve_bound"]


def _backend(qp, solver, options):
    if solver == "OSQP":
        return OSQPBackend(qp, options)
    return CVXPYBackend(qp, check_cvxpy_solver(solver, "inner QP solver"), options)


def _decoupled(qps):
    """True if no column of Phi0 or Phi is touched by two blocks."""
    for attr in ("J0", "J1"):
        cols = np.concatenate([getattr(qp, attr) for qp in qps])
        if np.unique(cols).size != cols.size:
            return False
    return True


def solve_bound(dual, solver="OSQP", warm_start=None, max_iter=1000, tol=1e-12,
                solver_options=None, update="gauss-seidel", qp_form="auto", varpi=None):
    """Maximise a MED dual by Algorithm 1.

    Parameters
    ----------
    dual : MEDDual
    solver : str, default="OSQP"
        ``"OSQP"`` uses OSQP's own API (set up once per block, then updated); any other
        installed CVXPY solver name solves the inner QPs through CVXPY.
    warm_start : ndarray of shape (n,), optional
        Starting multipliers; projected onto the feasible set first.
    max_iter : int
        Maximum number of iterations (sweeps over the blocks).
    tol : float
        Stop when an iteration raises J by less than ``tol * |J|``.
    solver_options : dict, optional
        Passed to the inner QP solver.
    update : {"gauss-seidel", "joint"}
    qp_form : {"auto", "u", "lam"}
        Formulation of the inner QP (see :mod:`medmtl.med.solvers.qp`).
    varpi : float, optional
        Also stop when ``||lam - lam~|| <= varpi ||lam||`` (Algorithm 1 step 4).

    Returns
    -------
    MEDSolution
    """
    if solver is None:
        solver = "OSQP"
    solver = str(solver).upper()
    if solver != "OSQP":
        check_cvxpy_solver(solver, "inner QP solver")
    if update not in ("gauss-seidel", "joint"):
        raise ValueError(f"update must be 'gauss-seidel' or 'joint'; got {update!r}")
    max_iter = int(max_iter)
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    n_groups = len(dual.groups)
    block_ids = [[g] for g in range(n_groups)] if update == "gauss-seidel" else [list(range(n_groups))]
    lam = np.zeros(dual.n) if warm_start is None else dual.project(np.asarray(warm_start, dtype=float))
    alpha = dual.alpha
    exact = alpha == 0.0 or dual.n_terms == 0
    qps = [None] * len(block_ids)
    backends = [None] * len(block_ids)
    w0, w = dual.shared_u(lam), dual.switched_u(lam)
    J = dual.objective(lam)
    path = [J]
    status = "max_iter"
    n_iter = 0
    for it in range(max_iter):
        lam_prev = lam.copy()
        for b, groups in enumerate(block_ids):
            if qps[b] is None:
                qps[b] = BlockQP(dual, groups, form=qp_form)
                backends[b] = _backend(qps[b], solver, solver_options)
            qp = qps[b]
            qd = dual.half_sq_norms(w)
            s = switch_posterior(qd, alpha)
            G = bound_curvature(qd, alpha)
            x = backends[b].solve(qp.numbers(lam, w0, w, s, G))
            new = lam.copy()
            new[qp.idx] = x[: qp.nB]
            new = dual.project(new, groups=groups)
            delta = new[qp.idx] - lam[qp.idx]
            if qp.P0B is not None:
                w0 = w0 + np.asarray(qp.P0B.T @ delta).ravel()
            if qp.PB is not None:
                w = w + np.asarray(qp.PB.T @ delta).ravel()
            lam = new
        n_iter = it + 1
        # Recompute from scratch so rounding in the incremental updates cannot accumulate.
        w0, w = dual.shared_u(lam), dual.switched_u(lam)
        J_new = dual.objective(lam)
        scale = max(abs(J_new), abs(J), 1e-300)
        if J_new < J:
            # The bound guarantees J_new >= J; a decrease is the inner solver's rounding.
            noise = 1e-9 * (1.0 + np.abs(dual.c) @ np.abs(lam))
            if J - J_new > 1e-7 * scale + noise:
                raise RuntimeError(
                    f"inner QP solver {solver} was too inaccurate: J fell from {J!r} to {J_new!r}"
                )
            lam = lam_prev
            w0, w = dual.shared_u(lam), dual.switched_u(lam)
            path.append(J)
            status = "converged"
            break
        path.append(J_new)
        gain = J_new - J
        J = J_new
        if exact and (len(block_ids) == 1 or _decoupled(qps)):
            # An exact bound and blocks sharing no column: one sweep is the exact maximiser.
            status = "converged"
            break
        if gain <= tol * scale:
            status = "converged"
            break
        if varpi is not None and np.linalg.norm(lam - lam_prev) <= varpi * np.linalg.norm(lam):
            status = "converged"
            break
    inner = sum(bk.total_iter for bk in backends if bk is not None)
    fallbacks = sum(getattr(bk, "n_fallbacks", 0) for bk in backends if bk is not None)
    return MEDSolution(
        lam=lam,
        intercepts=dual.intercepts(lam),
        objective=dual.objective(lam),
        objective_path=np.asarray(path),
        n_iter=n_iter,
        status=status,
        switch_posterior=dual.switch_posterior(lam),
        method="bound",
        solver=solver,
        info={"update": update, "inner_iterations": inner, "inner_fallbacks": fallbacks,
              "qp_form": [qp.form for qp in qps if qp is not None]},
    )
