"""``method="cd"``: dual coordinate descent in feature space for every factor model.

For the MED duals whose terms are explicit factors (the linear SVM and SVR, feature
selection, per-feature kernels, their multi-task forms, adaptive pooling with a linear
kernel), the solver keeps ``u = F^T lam`` (the weights) and every ``q_t = ||u_t||^2 / 2`` up
to date and steps one multiplier at a time, exactly along its coordinate, touching only that
example's nonzeros (:mod:`~medmtl.med.solvers.coordinate_steps`): a pass costs one sweep over
the nonzeros of the factors and no Gram column is ever formed, as in liblinear's dual
coordinate descent (Hsieh et al. 2008; Fan et al. 2008), shrinking included.

**The equality of each task.** ``a_g^T lam_g = 0`` (the bias under a flat prior) couples the
multipliers of a task, so a single coordinate cannot move on its own. Two parts handle it:

* an augmented Lagrangian on the bias: the passes maximise

      J(lam) - sum_g [ b_g a_g^T lam_g + rho_g (a_g^T lam_g)^2 / 2 ]

  (``b_g`` the current estimate of the task's bias, ``rho_g`` the mean diagonal curvature of
  the task), and after every pass ``b_g += rho_g a_g^T lam_g`` (the method of multipliers,
  one pass per update). For one task with ``b_g = 0`` this is liblinear's bias feature; the
  multiplier update takes the regularisation of the bias away, so the answer is the exact
  MED dual's;
* Newton steps on the face of the free multipliers (:mod:`~.coordinate_face`), taken once
  the free set has nearly settled (it changes by at most 1 % between two passes): from the
  point with the residuals taken out of the free multipliers, conjugate gradients in feature
  space maximise the second-order model of ``J`` with the equalities held exactly. Their
  equality multipliers are the new bias estimates ``b_g``. On ill-conditioned free sets
  (text, ``n`` much larger than ``D``) coordinate steps alone need thousands of passes;
  with the face steps tens (the measurements are in ``benchmarks/bench_med.py``'s notes).

* a proximal Newton finish (:mod:`~.ssnal`, the method ``"ssnal"`` from the passes' point),
  tried once the passes have gone on for ``_FINISH_AFTER`` passes without converging, and
  again whenever they have doubled: proximal point steps on the dual, each solved by a
  semismooth Newton method in the space of the weights and biases, where the answer is
  unique even when the optimal multipliers are not (degenerate duals, where the passes
  crawl along a face of optimal multipliers: the Ising structure duals) and where the scale
  of the features does not slow the steps down (raw features, whose badly conditioned
  Hessian makes coordinate steps crawl). It takes every dual whose factors fit one of its
  layouts; the check then measures its answer as any other.

When a pass finds every projected gradient below tolerance and the residuals below
``1e-10`` of the task's ``sum |a_i lam_i|``, the residuals are taken out of the free
multipliers (box and equalities hold exactly from then on), ``u`` is recomputed from
scratch, and the KKT conditions are checked with the full gradient; the run stops only when
they hold, or at the rounding floor of that gradient (status ``"rounding"``). The answer is
the best feasible point checked, so ``J`` never ends below the start.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np

from .base import Interval, MEDSolution, Method, Option, max_iter_option, tol_option
from .coordinate_face import face_step
from .coordinate_steps import (
    coordinate_pass,
    full_gradient,
    refresh_terms,
    shuffle,
    switched_sum,
)
from .gram_storage import FactorRows
from .kkt import ROUNDING_UNITS, absorb_residuals, max_gap, meet_equalities, scaled_box
from .smo import diag_hessian
from . import ssnal
from .threads import one_blas_thread

__all__ = ["CoordinateMethod"]

# The residual of a task's equality that counts as met, relative to sum |a_i lam_i| of the
# task, before the final projection (which then moves J by far less than the KKT tolerance).
_EQUALITY_RTOL = 1e-10
# ... and the residual below which a pass that meets the tolerance otherwise goes to the
# check (which meets the equalities exactly and tests the KKT conditions with the full
# gradient) instead of more passes: on the Ising structure duals the augmented Lagrangian
# brings the residuals down slowly while every face step resets them, and the passes ran to
# the limit (50 nodes, 500 samples, C = 0.1: 3,000 passes) after meeting the tolerance.
# A looser kkt_tol allows a residual as large (relative): the check measures the gap after
# taking the residual out, so it only decides sooner (50 nodes, 1,000 samples, C = 0.01,
# kkt_tol = 1e-2: 63 passes instead of 398 spent bringing the residuals below 1e-6).
_CHECK_RTOL = 1e-6
_CHECK_SPACING = 10
# Passes between two visits of every multiplier, shrunk ones included, while the passes
# have not met the tolerance. Without them a task whose residual only shrunk multipliers
# could take up stalled (50 nodes, 1,000 samples, C = 0.01: the residual of one task stuck
# for 300 passes while the augmented Lagrangian's estimate of its bias grew without bound).
_UNSHRINK_PASSES = 50
# Passes between recomputations of q and the posteriors from u (the running updates drift
# by rounding only; faces and checks recompute them anyway).
_REFRESH_PASSES = 16
# A face step is taken once the free set changes by at most this fraction between passes
# (measured on 20 Newsgroups, the spam users and dense n = 5,000, D = 1,000: 0.01 takes
# 20-50 % fewer passes than an unchanged free set, and 0.05 no fewer than 0.01).
_FACE_CHANGE = 0.01
# The proximal Newton finish (:mod:`~.ssnal`) is tried once the passes have gone on this
# long without converging, and again after twice as many passes if it did not converge.
_FINISH_AFTER = 50
# Proximal steps of one finish at most.
_FINISH_STEPS = 40


class CoordinateMethod(Method):
    """``method="cd"``: exact coordinate steps in feature space, liblinear's dual coordinate
    descent on the MED dual (see the module notes).

    It takes duals whose terms are all explicit factors (dense or ``scipy.sparse``); a dual
    holding a kernel evaluated on demand (RBF, polynomial) is a ValueError pointing to
    ``"newton"``. There is no inner solver.

    Options
    -------
    max_iter : int, default=1000
        Maximum number of passes over the multipliers (face steps not counted).
    tol : float, default=1e-12
        Also stop when a checked pass (all multipliers active, equalities met) raises ``J``
        by less than ``tol * |J|`` since the last check.
    kkt_tol : float, default=1e-6
        Stop when every task's largest violating pair, from the full gradient, has
        ``max_up grad_i / a_i - min_low grad_j / a_j <= kkt_tol * max|c|`` (as ``"newton"``).
    shrinking : bool, default=True
        Leave out multipliers stuck at a bound until the active ones converge (liblinear).
    random_state : int, default=0
        Seed of the order in which each pass visits the multipliers.

    The iterations (``n_iter``) are the passes; the objective path holds ``J`` after each
    (after the pass's face step or finish, when it took one). Between checks the multipliers meet the equalities only up to the
    augmented Lagrangian's residual, so the path need not rise monotonically; the answer is
    feasible. The status is ``"converged"``, ``"max_iter"`` or ``"rounding"`` (stopped at the
    rounding floor of the full gradient, above ``kkt_tol``). The solution's ``info`` holds
    ``passes``, ``face_steps``, ``cg_iterations`` (of the face steps and the finish),
    ``prox_steps`` and ``newton_steps`` (of the finish), ``checks``
    (full-gradient checks), ``nonzeros`` (entries of the factors the passes touched),
    ``kkt_gap`` and ``time``.

    Examples
    --------
    >>> from medmtl.med.builders import feature_selection_dual
    >>> from medmtl.med.solvers import solve
    >>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
    >>> dual = feature_selection_dual([X], [np.array([1, 1, -1, -1])], C=1.0, alpha=1.0)
    >>> a, b = solve(dual, "cd"), solve(dual, "direct")
    >>> a.status, bool(abs(a.objective - b.objective) <= 1e-6 * b.objective)
    ('converged', True)
    """

    name = "cd"
    default_solver = None
    options = (
        max_iter_option(1000, "Maximum number of passes over the multipliers."),
        tol_option(1e-12, "Also stop when a checked pass raises J by less than tol * |J|."),
        Option("kkt_tol", 1e-6, [Interval(Real, 0, None, closed="neither")],
               "Stop when every task's largest violating pair is below kkt_tol * max|c|."),
        Option("shrinking", True, [bool], "Shrink multipliers stuck at a bound (liblinear)."),
        Option("random_state", 0, [Interval(Integral, 0, None, closed="left")],
               "Seed of the order in which each pass visits the multipliers."),
    )

    def accepts(self, dual):
        return not dual.has_kernels

    def refusal(self, dual):
        return ("method 'cd' needs explicit factors; this dual holds a kernel evaluated on "
                "demand (RBF, polynomial): use method='newton'")

    def solve(self, dual, solver, options, init):
        t_start = time.perf_counter()
        with one_blas_thread():
            run = _Run(dual, init, options)
            run.iterate()
        lam = run.lam
        return MEDSolution(
            lam=lam,
            intercepts=dual.intercepts(lam, run.grad),
            objective=run.J_checked,
            objective_path=np.asarray(run.path),
            n_iter=run.passes,
            status=run.status,
            switch_posterior=run.s.copy(),
            method=self.name,
            solver="",
            info={"passes": run.passes, "checks": run.checks, "nonzeros": run.touched,
                  "face_steps": run.faces, "cg_iterations": run.cg,
                  "prox_steps": run.prox_steps, "newton_steps": run.newton_steps,
                  "kkt_gap": run.gap, "time": time.perf_counter() - t_start},
        )


def _settled(free, last):
    """Whether the free set changed by at most ``_FACE_CHANGE`` of its size (at most one
    multiplier for a small one) since the last pass."""
    if last is None:
        return False
    changed = np.setxor1d(free, last, assume_unique=True).size
    return changed <= max(1, int(_FACE_CHANGE * free.size))


class _Run:
    """The state of one coordinate solve: the multipliers, ``u``, ``q``, the posteriors,
    the augmented Lagrangian's multipliers and the pass counters."""

    def __init__(self, dual, init, options):
        self.dual = dual
        self.rows = rows = FactorRows.of(dual)
        self.options = options
        n, D = dual.n, dual.n_terms
        self.log_alpha = np.log(dual.alpha) if dual.alpha > 0 else -np.inf
        self.switched = bool(D and dual.alpha > 0)
        self.col_term = rows.col_term
        self.lam = np.zeros(n) if init is None else np.array(init, dtype=float)
        self.q = np.zeros(D)
        self.s = np.ones(D)
        self._exact_state()
        scale = max(float(np.max(np.abs(dual.c), initial=0.0)), 1e-12)
        self.scale = scale
        self.kkt_eps = self.eps = options["kkt_tol"] * scale
        self.check_rtol = max(_CHECK_RTOL, 1e-2 * options["kkt_tol"])
        self.best = (-np.inf, None, None, None, np.inf)
        self.blo, self.bhi = scaled_box(dual)
        n_groups = len(dual.groups)
        self.rho = self._penalties()
        self.shift = np.zeros(n_groups)
        self.resid = np.bincount(dual.group_of, dual.a * self.lam, minlength=n_groups)
        self.state = np.array([0x9E3779B97F4A7C15 ^ (options["random_state"] + 1)], dtype=np.uint64)
        self.path, self.passes, self.checks, self.touched = [], 0, 0, 0
        self.last_check = -_CHECK_SPACING
        self.faces = self.cg = 0
        self.finish_at, self.prox_steps, self.newton_steps = _FINISH_AFTER, 0, 0
        self.status, self.gap = "max_iter", np.inf

    def _exact_state(self):
        """``u``, ``q``, ``s`` and ``J`` recomputed from ``lam`` (no running rounding)."""
        self.u = np.asarray(self.rows.F.T @ self.lam, dtype=float)
        refresh_terms(self.u, self.col_term, self.q, self.s, self.log_alpha)
        self.J_checked = self._objective()

    def _objective(self):
        """``J`` from the running ``u`` and ``q``."""
        u0 = self.u[:self.rows.r0]
        J = float(self.dual.c @ self.lam) - 0.5 * float(u0 @ u0)
        if self.q.size:
            J -= switched_sum(self.q, self.dual.alpha)
        return J

    def _penalties(self):
        """``rho_g``: the mean diagonal curvature ``H_ii / a_i^2`` of each task at the start."""
        dual, rows = self.dual, self.rows
        diag = np.empty(dual.n)
        diag_hessian(rows.indptr, rows.indices, rows.data, rows.col_term, self.s,
                     np.zeros(dual.n_terms), self.u, diag)
        per = diag / dual.a**2
        counts = np.bincount(dual.group_of, minlength=len(dual.groups))
        rho = np.bincount(dual.group_of, per, minlength=len(dual.groups)) / np.maximum(counts, 1)
        return np.maximum(rho, 1e-12 * max(float(rho.max(initial=0.0)), 1e-300))

    def _gradient(self):
        """The full gradient, and the rounding floor of the KKT gap it allows."""
        rows = self.rows
        grad, size = np.empty(self.dual.n), np.empty(self.dual.n)
        full_gradient(rows.indptr, rows.indices, rows.data, rows.col_term, self.u, self.s,
                      self.dual.c, grad, size)
        size /= np.abs(self.dual.a)
        return grad, 2 * ROUNDING_UNITS * np.finfo(float).eps * float(np.max(size, initial=0.0))

    def _slack(self):
        """``|grad_i / a_i - b_g|`` at the running ``u`` and the current estimates ``b_g`` of
        the biases: how far the KKT conditions hold each multiplier at its bound."""
        grad, _ = self._gradient()
        return np.abs(grad / self.dual.a - self.shift[self.dual.group_of])

    def _check_due(self):
        """Whether a check may run now: at most one every ``_CHECK_SPACING`` passes after a
        failed one, so that failing checks (a full gradient each) cost little."""
        return self.passes - self.last_check >= _CHECK_SPACING

    def _check(self):
        """Project, recompute everything from scratch, and test the KKT conditions with the
        full gradient; sets the biases' estimates from it."""
        dual = self.dual
        self.checks += 1
        self.last_check = self.passes
        self.lam = meet_equalities(dual, self.lam, self._slack)
        self._exact_state()
        self.grad, floor = self._gradient()
        self.eps = max(self.kkt_eps, floor)
        beta = dual.a * self.lam
        self.gap = max_gap(self.grad / dual.a, beta, self.blo, self.bhi, dual)
        self.resid[:] = np.bincount(dual.group_of, dual.a * self.lam, minlength=len(dual.groups))
        self.shift[:] = dual.intercepts(self.lam, self.grad)
        if self.J_checked > self.best[0]:
            self.best = (self.J_checked, self.lam.copy(), self.grad.copy(), self.s.copy(), self.gap)
        return self.gap <= self.eps

    def _face(self, free):
        """A Newton step on the face of the free multipliers (:func:`face_step`), once the
        free multipliers can take the equalities' residuals without leaving the box;
        False (and no step) when they cannot."""
        dual, rows = self.dual, self.rows
        new = absorb_residuals(dual, self.lam, free)
        if new is None:
            return False
        moved = np.flatnonzero(new != self.lam)
        self.u += rows.F[moved].T @ (new[moved] - self.lam[moved])
        self.lam = new
        refresh_terms(self.u, self.col_term, self.q, self.s, self.log_alpha)
        t, its, bias = face_step(dual, rows, self.lam, self.u, self.q, self.s, free)
        self.faces += 1
        self.cg += its
        known = np.isfinite(bias)
        self.shift[known] = bias[known]
        refresh_terms(self.u, self.col_term, self.q, self.s, self.log_alpha)
        self.resid[:] = np.bincount(dual.group_of, dual.a * self.lam, minlength=len(dual.groups))
        self.path[-1] = self._objective()
        return True

    def _prox_finish(self):
        """Proximal Newton steps (:func:`medmtl.med.solvers.ssnal.finish`) from the passes'
        multipliers with the equalities met, then the check; True when it converged. Tried
        again after twice as many passes if not, never again for a dual whose layout does
        not allow it."""
        start = meet_equalities(self.dual, self.lam, self._slack)
        found = ssnal.finish(self.dual, self.rows, start, self.options["kkt_tol"], _FINISH_STEPS)
        if found is None:
            self.finish_at = np.inf
            return False
        self.finish_at = 2 * self.passes
        self.lam, _, _, _, stats = found
        self.prox_steps += stats["prox_steps"]
        self.newton_steps += stats["newton_steps"]
        self.cg += stats["cg_iterations"]
        done = self._check()
        self.path[-1] = self.J_checked
        return done

    def iterate(self):
        dual, rows, opts = self.dual, self.rows, self.options
        n = dual.n
        if self._check():
            self.path.append(self.J_checked)
            self._finish()
            return
        self.path.append(self.J_checked)
        J_last = self.J_checked
        order = np.arange(n, dtype=np.int64)
        n_active = n
        bounds = np.array([np.inf, -np.inf])
        stats = np.zeros(4)
        width = max(int(np.max(np.diff(rows.indptr), initial=0)), 1)
        seg_t = np.empty(width, dtype=np.int64)
        seg_p, seg_r, s_at = np.empty(width), np.empty(width), np.empty(width)
        mass = np.empty(len(dual.groups))
        shrinking = bool(opts["shrinking"])
        last_free = None
        for _ in range(opts["max_iter"]):
            shuffle(order, n_active, self.state)
            n_active = coordinate_pass(order, n_active, rows.indptr, rows.indices, rows.data,
                                       self.col_term, self.u, self.q, self.s, self.lam, dual.c,
                                       dual.a, dual.lo, dual.hi, dual.group_of, self.shift,
                                       self.rho, self.resid, self.log_alpha, self.switched,
                                       bounds, shrinking, seg_t, seg_p, seg_r, s_at, stats)
            self.passes += 1
            self.touched += int(stats[2])
            self.shift += self.rho * self.resid
            if self.passes % _REFRESH_PASSES == 0:
                refresh_terms(self.u, self.col_term, self.q, self.s, self.log_alpha)
                self.path.append(self._objective())
            else:
                self.path.append(self.path[-1] + stats[3])
            pg_max, pg_min = stats[0], stats[1]
            mass[:] = np.bincount(dual.group_of, np.abs(dual.a * self.lam), minlength=mass.size)
            feasible = np.all(np.abs(self.resid) <= _EQUALITY_RTOL * mass)
            # residuals this small are taken out exactly by the check's projection
            checkable = np.all(np.abs(self.resid) <= self.check_rtol * mass)
            spread = pg_max - pg_min
            if self.passes >= self.finish_at:
                if self._prox_finish():
                    self._finish()
                    return
                n_active, last_free = n, None
                bounds[:] = (np.inf, -np.inf)
                continue
            if spread > self.eps or not (feasible or checkable and self._check_due()):
                bounds[0] = pg_max if pg_max > 0 else np.inf
                bounds[1] = pg_min if pg_min < 0 else -np.inf
                free = np.flatnonzero((self.lam > dual.lo) & (self.lam < dual.hi))
                if self.passes % _UNSHRINK_PASSES == 0 and n_active < n:
                    # visit the shrunk multipliers again: the biases' estimates move while
                    # the passes go on, and a multiplier shrunk at a bound under an old
                    # estimate may be the one a task's equality needs
                    n_active = n
                    bounds[:] = (np.inf, -np.inf)
                if free.size > 1 and _settled(free, last_free):
                    if not self._face(free) and n_active < n:
                        # the free multipliers cannot take the equalities' residuals: the
                        # shrunk ones must move too (else the passes stall on them)
                        n_active = n
                        bounds[:] = (np.inf, -np.inf)
                    last_free = None
                else:
                    last_free = free
                continue
            if n_active < n:
                n_active = n
                bounds[:] = (np.inf, -np.inf)
                continue
            if self._check():
                self.path[-1] = self.J_checked
                self._finish()
                return
            self.path[-1] = self.J_checked
            # J rose by less than tol since the last check: converged (a J below the last
            # check's is no sign of it, the projection of the residuals can lower J)
            if 0.0 <= self.J_checked - J_last <= opts["tol"] * abs(self.J_checked):
                self.status = "converged"
                return
            J_last = self.J_checked
            bounds[:] = (np.inf, -np.inf)
        self._check()
        self.path[-1] = self.J_checked
        self._finish()

    def _finish(self):
        """The status from the last check; the best feasible point checked is the answer
        (a run stopped early may have left the augmented Lagrangian's iterate below it)."""
        J_best, lam, grad, s, gap = self.best
        if J_best > self.J_checked:
            self.lam, self.grad, self.s, self.gap, self.J_checked = lam, grad, s, gap, J_best
            self.path[-1] = J_best
        if self.gap <= self.kkt_eps:
            self.status = "converged"
        elif self.gap <= self.eps:
            self.status = "rounding"  # the gradient is not exact enough for kkt_tol
