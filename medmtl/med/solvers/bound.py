"""``method="bound"``: Algorithm 1 of Jebara (JMLR 2011), sequential QP on Theorem 1's bound.

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

The joint step's QP at a point is also open as a CVXPY problem:
:meth:`MEDDual.to_cvxpy(bound_at=lam) <medmtl.med.dual.MEDDual.to_cvxpy>`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp

from ..bound import bound_curvature, switch_posterior
from .base import (
    Interval,
    MEDSolution,
    Method,
    Option,
    Options,
    check_cvxpy_solver,
    max_iter_option,
    tol_option,
)
from .qp import BlockQP, CVXPYBackend, OSQPBackend

__all__ = ["BoundMethod", "remaining_gap"]

# Inexact steps solve the inner QPs to _EPS_PER_GAIN times J's last relative increase, kept
# within [_EPS_FLOOR, _LOOSE_EPS]; ADMM iterations grow quickly below the floor, while
# polishing (from _POLISH_BELOW on) makes the step exact anyway once the active set is found.
# Chosen on feature selection n = 1000, D = 100 and Dermatology (fewest ADMM iterations).
_LOOSE_EPS = 1e-3
_EPS_PER_GAIN = 1.0
_EPS_FLOOR = 1e-4
_POLISH_BELOW = 1e-3


def _backend(qp, solver, settings):
    if solver == "OSQP":
        return OSQPBackend(qp, settings)
    return CVXPYBackend(qp, solver, settings)


# The interior-point settings tried in turn once OSQP has failed on a block: Clarabel as
# qp.py sets it up, then with its static regularisation lowered from 1e-8 to 1e-12. On a
# badly conditioned block (kernel selection on breast cancer with columns rescaled by
# 1e-4..1e4: K_B's diagonal runs from 2e5 to 1e9, its eigenvalues from 0 to 3e10) the
# default regularisation perturbs the KKT system by more than iterative refinement
# recovers, and Clarabel stops with "InsufficientProgress" a few iterations in; with the
# smaller one it finishes, and bound ends 4e-11 from the direct solve's J (all 569 rows,
# benchmarks/own_data_bound.py). Every step is still accepted only if it raises J.
_INTERIOR_POINT_LADDER = ({}, {"static_regularization_constant": 1e-12})


def _to_interior_point(qps, backends, run, options):
    """Move the inner solves one rung up :data:`_INTERIOR_POINT_LADDER` for the rest of the
    run: from OSQP (ADMM, accurate only to its tolerance, and slow on badly scaled blocks) to
    Clarabel, and from Clarabel at one rung's settings to the next. False when no rung is
    left, or the inner solver is one the caller set otherwise (another solver, settings of
    their own, or OSQP with its Clarabel fallback turned off)."""
    if all(isinstance(bk, OSQPBackend) and bk.fallback for bk in backends):
        run.from_osqp, rung = True, 0
    elif (all(isinstance(bk, CVXPYBackend) and bk.name == "CLARABEL" for bk in backends)
          and (run.from_osqp or not options["solver_settings"])):
        rung = (run.rung or 0) + 1   # a caller's plain "CLARABEL" stands on the first rung
        if rung >= len(_INTERIOR_POINT_LADDER):
            return False
    else:
        return False
    run.replaced_iter += sum(bk.total_iter for bk in backends)
    run.rung = rung
    backends[:] = [CVXPYBackend(qp, "CLARABEL", _INTERIOR_POINT_LADDER[rung]) for qp in qps]
    return True


def _inner_failure(qps, backends, exc):
    """The error for a step that no inner solver could take: what failed, how badly scaled
    the blocks are (the spread of the diagonal of ``K_B``, the squared norms of the blocks'
    rows of the factors), and what to do."""
    diag = np.concatenate([_row_sq_norms(qp) for qp in qps])
    diag = diag[diag > 0]
    spread = (f"; the diagonal of the inner QP's Hessian spans {diag.min():.2g} to {diag.max():.2g}"
              if diag.size else "")
    return RuntimeError(
        f"method 'bound' could not take a step ({exc}; inner solver {backends[0].name}"
        f"{spread}): Algorithm 1's inner QPs are too badly conditioned for the inner solver at "
        "the precision a step needs, as happens with features or kernels of very different "
        "scales. Standardise the features (e.g. sklearn.preprocessing.StandardScaler), or use "
        "method='ssnal' or method='newton', which the scales do not hold up")


def _row_sq_norms(qp):
    """Squared norms of the block's rows of the factors: the diagonal of ``K_B``."""
    out = np.zeros(qp.nB)
    for M in (qp.P0B, qp.PB):
        if M is not None:
            out += (np.asarray(M.multiply(M).sum(axis=1)).ravel() if sp.issparse(M)
                    else np.einsum("ij,ij->i", M, M))
    return out


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


class BoundMethod(Method):
    """``method="bound"``: maximise a MED dual by Algorithm 1.

    The inner solver is ``"OSQP"`` (the default: OSQP's own API, set up once per block,
    then updated) or any other installed CVXPY solver name, which solves the inner QPs
    through CVXPY.

    Options
    -------
    max_iter : int, default=1000
        Maximum number of iterations (sweeps over the blocks).
    tol : float, default=1e-12
        Stop when an exact iteration raises J by less than ``tol * |J|``.
    update : {"gauss-seidel", "joint"}, default="gauss-seidel"
    qp_form : {"auto", "u", "lam"}, default="auto"
        Formulation of the inner QP (see :mod:`medmtl.med.solvers.qp`); ``"auto"`` takes the
        sparse feature-space form whenever it stores fewer entries (linear and feature models).
    varpi : float or None, default=None
        Also stop when ``||lam - lam~|| <= varpi ||lam||`` (Algorithm 1 step 4).
    inexact : bool, default=True
        Solve the inner QPs loosely while J is far from converged (OSQP only; see the module
        notes). ``False`` solves every inner QP to full precision: the plain Algorithm 1.
    gap_tol : float or None, default=None
        Also stop when the estimated remaining gap ``J* - J`` (:func:`remaining_gap`) is at
        most ``gap_tol * |J|``. ``1e-9`` gives J to about 1e-9 relative in roughly two
        thirds of the iterations ``tol=1e-12`` takes; the multipliers are then only about
        ``sqrt(gap_tol)`` accurate, which is why the default leaves it off.
    solver_settings : dict or None, default=None
        Settings of the inner QP solver, passed on unchecked: OSQP's (plus
        ``fallback=False`` to never redo a failed block with Clarabel) or the named CVXPY
        solver's.
    handover : bool, default=True
        When no inner solver can raise ``J`` (status ``"stalled"``), finish from the last
        point with ``method="newton"`` (see below).

    The solution's ``info`` holds ``inner_iterations`` (ADMM or interior-point iterations
    of all inner QPs), ``inner_fallbacks``, ``loose_iterations`` (iterations solved to a
    loose tolerance), ``inexact_iterations`` (those of them whose polished points did not
    all pass as exact), ``rejected_iterations`` (loose iterations that did not raise J and
    were redone tighter), ``gap_estimate`` (:func:`remaining_gap` at the end), ``update``
    and ``qp_form``. ADMM is accurate only to its tolerance and slow on badly scaled blocks:
    when an OSQP step fails or lowers ``J`` by more than rounding, the iteration is redone
    and the run goes on with Clarabel (``info["inner_solver_switched"]``); when Clarabel
    fails too, with Clarabel at a smaller static regularisation
    (``info["inner_solver_settings"]``). Where even that cannot raise ``J`` the run stops
    there (status ``"converged"`` when the fall is rounding, else ``"stalled"``); a step that
    no inner solver can take at all raises a RuntimeError that names the failure, the spread
    of the inner QP's Hessian diagonal, and what helps (standardised features, or
    ``method="ssnal"`` / ``"newton"``).

    A stalled run's ``J`` is often right while its multipliers are not: on a Hessian whose
    entries span ten orders of magnitude (kernels of columns rescaled by 1e-4 to 1e4) the
    interior-point solves leave the stiff directions unresolved, so the gradient, and the
    duality gap that certifies ``J``, stay far from the optimum's. With ``handover=True``
    (the default) such a run finishes with ``"newton"`` from its last point, whose pair
    steps resolve the gradient down to its rounding floor; ``info["handover"]`` records
    ``{"to": "newton", "because": "stalled", ...}`` and the status is Newton's.

    Examples
    --------
    >>> from medmtl.med.builders import feature_selection_dual
    >>> from medmtl.med.solvers import solve
    >>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
    >>> dual = feature_selection_dual([X], [np.array([1, 1, -1, -1])], C=1.0, alpha=1.0)
    >>> plain = solve(dual, "bound", options={"inexact": False})
    >>> plain.status, plain.info["loose_iterations"], bool(np.all(np.diff(plain.objective_path) >= 0))
    ('converged', 0, True)
    """

    name = "bound"
    default_solver = "OSQP"
    options = (
        max_iter_option(1000, "Maximum number of iterations (sweeps over the blocks)."),
        tol_option(1e-12, "Stop when an exact iteration raises J by less than tol * |J|."),
        Option("update", "gauss-seidel", [Options("gauss-seidel", "joint")],
               "Task block by task block (Algorithm 1 step 3) or all multipliers at once."),
        Option("qp_form", "auto", [Options("auto", "u", "lam")],
               "Formulation of the inner QP: feature space, multiplier space, or the smaller."),
        Option("varpi", None, [None, Interval(Real, 0, None, closed="left")],
               "Also stop when ||lam - lam~|| <= varpi ||lam|| (Algorithm 1 step 4)."),
        Option("inexact", True, [bool],
               "Solve early inner QPs loosely (OSQP only); False: the plain Algorithm 1."),
        Option("gap_tol", None, [None, Interval(Real, 0, None, closed="left")],
               "Also stop when the estimated remaining gap is at most gap_tol * |J|."),
        Option("solver_settings", None, [None, dict],
               "Settings of the inner QP solver (OSQP's, or the CVXPY solver's), unchecked."),
        Option("handover", True, [bool],
               "When no inner solver can raise J (status stalled), finish from the last point "
               "with method 'newton'."),
    )

    def check_solver(self, solver):
        if solver is None:
            return self.default_solver
        if isinstance(solver, str) and solver.upper() == "OSQP":
            return "OSQP"
        return check_cvxpy_solver(solver)

    def solve(self, dual, solver, options, init):
        n_groups = len(dual.groups)
        block_ids = ([[g] for g in range(n_groups)] if options["update"] == "gauss-seidel"
                     else [list(range(n_groups))])
        lam = np.zeros(dual.n) if init is None else init
        exact = dual.alpha == 0.0 or dual.n_terms == 0
        qps = [BlockQP(dual, groups, form=options["qp_form"]) for groups in block_ids]
        backends = [_backend(qp, solver, options["solver_settings"]) for qp in qps]
        # An exact bound is maximised in one exact sweep; loose steps would only delay that.
        loose_ok = options["inexact"] and solver == "OSQP" and not exact
        run = _iterate(dual, lam, qps, backends, block_ids, options, loose_ok)
        lam = run.lam
        switched = {"inner_solver_switched": "CLARABEL"} if run.from_osqp else {}
        if run.rung:
            switched["inner_solver_settings"] = dict(_INTERIOR_POINT_LADDER[run.rung])
        objective = None
        if options["handover"] and run.status == "stalled":
            # the stalled run's last J is that of lam (the point it returned to)
            finished = _hand_over_to_newton(dual, lam, run.path[-1])
            if finished is not None:
                lam, objective, run.status, switched["handover"] = finished
                run.path.append(objective)
        return MEDSolution(
            lam=lam,
            intercepts=dual.intercepts(lam),
            objective=dual.objective(lam) if objective is None else objective,
            objective_path=np.asarray(run.path),
            n_iter=run.n_iter,
            status=run.status,
            switch_posterior=dual.switch_posterior(lam),
            method=self.name,
            solver=solver,
            info={"update": options["update"],
                  "inner_iterations": sum(bk.total_iter for bk in backends) + run.replaced_iter,
                  "inner_fallbacks": sum(getattr(bk, "n_fallbacks", 0) for bk in backends),
                  "loose_iterations": run.n_loose, "inexact_iterations": run.n_inexact,
                  "rejected_iterations": run.n_rejected,
                  "gap_estimate": run.gap, "qp_form": [qp.form for qp in qps], **switched},
        )


def _hand_over_to_newton(dual, lam, J):
    """``"newton"`` (its default options, no handover of its own) from a stalled run's last
    point ``lam`` (of objective ``J``): ``(lam, J, status, record)``, or None when it ends
    below ``J`` short of the tolerance."""
    from .newton import NewtonMethod  # newton hands over to bound: imported when needed

    newton = NewtonMethod()
    sol = newton.solve(dual, newton.check_solver(None), newton.check_options({"handover": False}), lam)
    if sol.objective < J and sol.status != "converged":
        return None
    record = {"to": "newton", "because": "stalled", "status": sol.status,
              "iterations": sol.n_iter, "smo_steps": int(np.sum(sol.info["smo_steps"]))}
    # J as every answer of this method reports it (Newton's models sum it in their own order)
    return sol.lam, dual.objective(sol.lam), sol.status, record


class _Run:
    """The state of Algorithm 1's iterations: the multipliers, ``J`` per iteration, the
    status, the counts of loose, inexact and rejected iterations, and the gap estimate."""

    def __init__(self, lam, J):
        self.lam, self.path = lam, [J]
        self.status, self.n_iter, self.gap = "max_iter", 0, None
        self.n_loose = self.n_inexact = self.n_rejected = 0
        self.from_osqp, self.rung, self.replaced_iter = False, None, 0


def _sweep(dual, qps, backends, block_ids, lam, eps):
    """One pass over the blocks: (new lam, whether every inner solve was exact), or
    (None, False) if a loose inner solve gave no usable point."""
    w0, w = dual.shared_u(lam), dual.switched_u(lam)
    all_exact = True
    for qp, backend, groups in zip(qps, backends, block_ids):
        qd = dual.half_sq_norms(w)
        s = switch_posterior(qd, dual.alpha)
        G = bound_curvature(qd, dual.alpha)
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


def _iterate(dual, lam, qps, backends, block_ids, options, loose_ok):
    """Algorithm 1's iterations from ``lam`` until a stopping rule holds at an exact one."""
    tol, gap_tol, varpi = options["tol"], options["gap_tol"], options["varpi"]
    exact = dual.alpha == 0.0 or dual.n_terms == 0
    tight_eps = max(getattr(bk, "tight_eps", 0.0) for bk in backends)
    J = dual.objective(lam)
    run = _Run(lam, J)
    rel_gain = None
    gains = []
    cap, floor = _LOOSE_EPS, _EPS_FLOOR
    for it in range(options["max_iter"]):
        lam_prev = lam
        eps = None
        if loose_ok:
            eps = cap if rel_gain is None else min(cap, max(floor, _EPS_PER_GAIN * rel_gain))
            eps = None if eps <= tight_eps else eps
        while True:
            try:
                new, exact_sweep = _sweep(dual, qps, backends, block_ids, lam, eps)
            except RuntimeError as exc:
                if _to_interior_point(qps, backends, run, options):
                    continue
                raise _inner_failure(qps, backends, exc) from exc
            J_new = dual.objective(new) if new is not None else -np.inf
            if eps is None or exact_sweep or J_new > J:
                break
            # a loose step that does not raise J: redo it tighter, and stay tighter
            run.n_rejected += 1
            cap, floor = min(cap, eps / 10.0), min(floor, eps / 10.0)
            eps = None if eps / 10.0 <= tight_eps else eps / 10.0
        run.n_loose += eps is not None
        run.n_inexact += not exact_sweep
        lam = new
        run.n_iter = it + 1
        scale = max(abs(J_new), abs(J), 1e-300)
        if J_new < J:
            # The bound guarantees J_new >= J; a decrease is the inner solver's rounding, or
            # its inaccuracy on a badly scaled block: redo the iteration with an interior
            # point solver, and stop where even that cannot raise J.
            lam = lam_prev
            noise = 1e-9 * (1.0 + np.abs(dual.c) @ np.abs(lam))
            if J - J_new > 1e-7 * scale + noise and _to_interior_point(qps, backends, run, options):
                continue
            run.path.append(J)
            run.status = "converged" if J - J_new <= 1e-7 * scale + noise else "stalled"
            break
        run.path.append(J_new)
        gain = J_new - J
        J = J_new
        rel_gain = gain / scale
        gains.append(gain)
        run.gap = remaining_gap(gains, dual.alpha)
        if exact and (len(block_ids) == 1 or _decoupled(qps)):
            # An exact bound and blocks sharing no column: one sweep is the exact maximiser.
            run.status = "converged"
            run.gap = 0.0
            break
        done = gain <= tol * scale
        done |= gap_tol is not None and run.gap <= gap_tol * scale
        done |= varpi is not None and np.linalg.norm(lam - lam_prev) <= varpi * np.linalg.norm(lam)
        if done:
            if exact_sweep:
                run.status = "converged"
                break
            # only an exact iteration may end the run: tighten until one is
            cap, floor = min(cap, eps / 10.0), min(floor, eps / 10.0)
    run.lam = lam
    return run
