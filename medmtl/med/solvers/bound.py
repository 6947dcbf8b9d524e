"""Algorithm 1 of Jebara (JMLR 2011): sequential quadratic programming on Theorem 1's bound.

Each iteration replaces every switched term by its quadratic upper bound at the current
multipliers and maximises the resulting lower bound on J, either task block by task block
(``update="gauss-seidel"``, Algorithm 1 step 3, the bound refreshed before each block) or over
all multipliers at once (``update="joint"``, the form Theorem 2 analyses). Every step
maximises a lower bound that touches J at the current point, so J never decreases.

Two things make it faster without changing what it converges to:

* inexact early steps (``inexact=True``, OSQP only): far from the optimum an iteration only
  needs to raise J, not to maximise the bound exactly, so the inner QP is solved by ADMM to a
  tolerance tied to J's last relative increase, warm-started at the current point in its
  primal variables (OSQP keeps its dual iterate between solves). Once the tolerance is small
  the loose solve is polished, and it counts as exact when the polished point passes the full
  KKT test (:func:`~medmtl.med.solvers.qp.is_qp_optimal`), which late in the run it nearly
  always does. A loose step that fails to raise J is redone ten times tighter, and the
  tolerance stays that tight; the run only stops after an iteration whose inner solves were
  all exact, so the answer is the plain algorithm's.
* a stopping rule on the remaining gap (``gap_tol``): the proof of Theorem 2 gives
  ``J* - J_{i+1} <= (kappa - 1) (J_{i+1} - J_i)`` with ``kappa = max(alpha + 1, 2)`` (joint
  exact steps), and a linearly converging sequence whose increases shrink by ``r`` has
  ``J* - J_{i+1} = r / (1 - r) (J_{i+1} - J_i)``; :func:`remaining_gap` takes the smaller.

``inexact=False, gap_tol=None`` is the plain Algorithm 1: every inner QP solved to full
precision, stopped by ``tol`` (or ``varpi``) alone.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_scalar_nonnegative
from ..bound import bound_curvature, switch_posterior
from ._common import MEDSolution, check_cvxpy_solver
from .qp import BlockQP, CVXPYBackend, OSQPBackend

__all__ = ["solve_bound", "remaining_gap"]

# Inexact steps solve the inner QPs to _EPS_PER_GAIN times J's last relative increase, kept
# within [_EPS_FLOOR, _LOOSE_EPS]; ADMM iterations grow quickly below the floor, while
# polishing (from _POLISH_BELOW on) makes the step exact anyway once the active set is found.
# Chosen on feature selection n = 1000, D = 100 and Dermatology (fewest ADMM iterations).
_LOOSE_EPS = 1e-3
_EPS_PER_GAIN = 1.0
_EPS_FLOOR = 1e-4
_POLISH_BELOW = 1e-3


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


def remaining_gap(gains, alpha):
    """Estimate of ``J* - J`` from the increases of J so far.

    Parameters
    ----------
    gains : sequence of float
        The increases ``J_{i+1} - J_i`` of the iterations so far (the last one is used with
        the two before it).
    alpha : float
        Prior odds of the dual; ``kappa = max(alpha + 1, 2)`` of Theorem 2.

    Returns
    -------
    float
        ``g * min(kappa - 1, r / (1 - r))`` for the last increase ``g``, with ``r`` the
        larger of the last two ratios of successive increases (the slower recent rate);
        ``g * (kappa - 1)`` (Theorem 2's bound for an exact joint step) while there is no
        shrinking rate to go by.

    Examples
    --------
    >>> remaining_gap([4.0, 2.0, 1.0], alpha=10.0)    # halving: 1/2 + 1/4 + ... = 1
    1.0
    >>> remaining_gap([1.0], alpha=10.0)              # no rate yet: kappa - 1 = 10
    10.0
    """
    worst = max(float(alpha), 1.0)
    g = float(gains[-1])
    if len(gains) >= 3 and gains[-3] > 0 and gains[-2] > 0:
        r = max(gains[-1] / gains[-2], gains[-2] / gains[-3])
        if r < 1.0:
            return g * min(worst, r / (1.0 - r))
    return g * worst


def solve_bound(dual, solver="OSQP", warm_start=None, max_iter=1000, tol=1e-12,
                solver_options=None, update="gauss-seidel", qp_form="auto", varpi=None,
                inexact=True, gap_tol=None):
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
        Stop when an exact iteration raises J by less than ``tol * |J|``.
    solver_options : dict, optional
        Passed to the inner QP solver.
    update : {"gauss-seidel", "joint"}
    qp_form : {"auto", "u", "lam"}
        Formulation of the inner QP (see :mod:`medmtl.med.solvers.qp`); ``"auto"`` takes the
        sparse feature-space form whenever it stores fewer entries (linear and feature models).
    varpi : float, optional
        Also stop when ``||lam - lam~|| <= varpi ||lam||`` (Algorithm 1 step 4).
    inexact : bool, default=True
        Solve the inner QPs loosely while J is far from converged (OSQP only; see the module
        notes). ``False`` solves every inner QP to full precision: the plain Algorithm 1.
    gap_tol : float or None, default=None
        Also stop when the estimated remaining gap ``J* - J`` (:func:`remaining_gap`) is at
        most ``gap_tol * |J|``. ``1e-9`` gives J to about 1e-9 relative in roughly two
        thirds of the iterations ``tol=1e-12`` takes; the multipliers are then only about
        ``sqrt(gap_tol)`` accurate, which is why the default leaves it off.

    Returns
    -------
    MEDSolution
        ``info`` holds ``inner_iterations`` (ADMM or interior-point iterations of all inner
        QPs), ``loose_iterations`` (iterations solved to a loose tolerance),
        ``inexact_iterations`` (those of them whose polished points did not all pass as
        exact), ``rejected_iterations`` (loose iterations that did not raise J and were redone
        tighter) and ``gap_estimate`` (:func:`remaining_gap` at the end).
    """
    if solver is None:
        solver = "OSQP"
    solver = str(solver).upper()
    if solver != "OSQP":
        check_cvxpy_solver(solver, "inner QP solver")
    if update not in ("gauss-seidel", "joint"):
        raise ValueError(f"update must be 'gauss-seidel' or 'joint'; got {update!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    max_iter = int(max_iter)
    tol = check_scalar_nonnegative(tol, "tol")
    gap_tol = None if gap_tol is None else check_scalar_nonnegative(gap_tol, "gap_tol")
    varpi = None if varpi is None else check_scalar_nonnegative(varpi, "varpi")
    if not isinstance(inexact, (bool, np.bool_)):
        raise TypeError(f"inexact must be True or False; got {inexact!r}")
    n_groups = len(dual.groups)
    block_ids = [[g] for g in range(n_groups)] if update == "gauss-seidel" else [list(range(n_groups))]
    lam = np.zeros(dual.n) if warm_start is None else dual.project(np.asarray(warm_start, dtype=float))
    alpha = dual.alpha
    exact = alpha == 0.0 or dual.n_terms == 0
    # An exact bound is maximised in one exact sweep; loose steps would only delay that.
    loose_ok = bool(inexact) and solver == "OSQP" and not exact
    qps = [BlockQP(dual, groups, form=qp_form) for groups in block_ids]
    backends = [_backend(qp, solver, solver_options) for qp in qps]
    tight_eps = max(getattr(bk, "tight_eps", 0.0) for bk in backends)

    def sweep(lam, eps):
        """One pass over the blocks: (new lam, whether every inner solve was exact), or
        (None, False) if a loose inner solve gave no usable point."""
        w0, w = dual.shared_u(lam), dual.switched_u(lam)
        all_exact = True
        for qp, backend, groups in zip(qps, backends, block_ids):
            qd = dual.half_sq_norms(w)
            s = switch_posterior(qd, alpha)
            G = bound_curvature(qd, alpha)
            x = backend.solve(qp.numbers(lam, w0, w, s, G), eps=eps,
                              polish=eps is not None and eps <= _POLISH_BELOW)
            if x is None:
                return None, False
            all_exact &= backend.last_exact
            new = lam.copy()
            new[qp.idx] = x[: qp.nB]
            new = dual.project(new, groups=groups)
            delta = new[qp.idx] - lam[qp.idx]
            if qp.P0BT is not None:
                w0 = w0 + np.asarray(qp.P0BT @ delta).ravel()
            if qp.PBT is not None:
                w = w + np.asarray(qp.PBT @ delta).ravel()
            lam = new
        return lam, all_exact

    J = dual.objective(lam)
    path = [J]
    status = "max_iter"
    n_iter = n_loose = n_inexact = n_rejected = 0
    rel_gain = gap = None
    gains = []
    cap, floor = _LOOSE_EPS, _EPS_FLOOR
    for it in range(max_iter):
        lam_prev = lam
        eps = None
        if loose_ok:
            eps = cap if rel_gain is None else min(cap, max(floor, _EPS_PER_GAIN * rel_gain))
            eps = None if eps <= tight_eps else eps
        while True:
            new, exact_sweep = sweep(lam, eps)
            J_new = dual.objective(new) if new is not None else -np.inf
            if eps is None or exact_sweep or J_new > J:
                break
            # a loose step that does not raise J: redo it tighter, and stay tighter
            n_rejected += 1
            cap, floor = min(cap, eps / 10.0), min(floor, eps / 10.0)
            eps = None if eps / 10.0 <= tight_eps else eps / 10.0
        n_loose += eps is not None
        n_inexact += not exact_sweep
        lam = new
        n_iter = it + 1
        scale = max(abs(J_new), abs(J), 1e-300)
        if J_new < J:
            # The bound guarantees J_new >= J; a decrease is the inner solver's rounding.
            noise = 1e-9 * (1.0 + np.abs(dual.c) @ np.abs(lam))
            if J - J_new > 1e-7 * scale + noise:
                raise RuntimeError(
                    f"inner QP solver {solver} was too inaccurate: J fell from {J!r} to {J_new!r}"
                )
            lam = lam_prev
            path.append(J)
            status = "converged"
            break
        path.append(J_new)
        gain = J_new - J
        J = J_new
        rel_gain = gain / scale
        gains.append(gain)
        gap = remaining_gap(gains, alpha)
        if exact and (len(block_ids) == 1 or _decoupled(qps)):
            # An exact bound and blocks sharing no column: one sweep is the exact maximiser.
            status = "converged"
            gap = 0.0
            break
        done = gain <= tol * scale
        done |= gap_tol is not None and gap <= gap_tol * scale
        done |= varpi is not None and np.linalg.norm(lam - lam_prev) <= varpi * np.linalg.norm(lam)
        if done:
            if exact_sweep:
                status = "converged"
                break
            # only an exact iteration may end the run: tighten until one is
            cap, floor = min(cap, eps / 10.0), min(floor, eps / 10.0)
    inner = sum(bk.total_iter for bk in backends)
    fallbacks = sum(getattr(bk, "n_fallbacks", 0) for bk in backends)
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
              "loose_iterations": n_loose, "inexact_iterations": n_inexact,
              "rejected_iterations": n_rejected,
              "gap_estimate": gap, "qp_form": [qp.form for qp in qps]},
    )
