"""One solve of the coordinate method: its state, the steps it can take, and the policy that
chooses among them after every pass (:mod:`medmtl.med.solvers.coordinate` describes the
method).

The state is one record, :class:`~medmtl.med.solvers.coordinate_steps.Iterate` (the
multipliers, ``u = F^T lam``, ``q``, the posteriors, and per task the bias estimate, the
augmented Lagrangian's penalty and the equality's residual), which the compiled passes update
in place. After each pass :meth:`Policy.next_step` reads what the pass measured and names the
next step:

* ``"finish"``: the proximal Newton finish (:func:`medmtl.med.solvers.ssnal.finish`), at pass
  ``finish_after`` (``wide_finish_after`` for wide tasks) and every doubling after it, or at
  pass ``crawl_passes`` when the passes crawl (a stiff dual whose spread has not halved);
* ``"pass"``: more passes, with a face step (:func:`~.coordinate_face.face_step`) after a
  pass that leaves the free set settled (next to the last pass's, or the last face step's),
  and every multiplier visited again every ``unshrink_every`` passes;
* ``"check"``: meet the equalities exactly, recompute everything and test the KKT conditions
  with the full gradient, which covers the shrunk multipliers too (liblinear visits them all
  in a last pass instead); a failed check makes every multiplier active again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coordinate_face import face_step
from .coordinate_steps import (
    Coords,
    Iterate,
    Prior,
    coordinate_pass,
    full_gradient,
    refresh_terms,
    running_switched_sum,
    scratch_for,
    shuffle,
    switched_sum,
)
from .kkt import ROUNDING_UNITS, absorb_residuals, gap_scale, max_gap, meet_equalities, scaled_box
from .smo import diag_hessian
from .ssnal import finish as ssnal_finish
from .ssnal_layouts import columns_of

__all__ = ["Policy", "Run"]


@dataclass(frozen=True)
class Policy:
    """When the coordinate method does what (see the module notes and
    ``docs/design_notes.md`` for how each value was chosen).

    Attributes
    ----------
    equality_rtol : float
        A task's equality residual, relative to its ``sum |a_i lam_i|``, that counts as met
        (the check's projection then moves ``J`` by far less than the KKT tolerance).
    check_rtol : float
        The residual below which passes that meet the tolerance go to the check, which
        meets the equalities exactly; a looser ``kkt_tol`` allows a residual a hundredth of
        it. The augmented Lagrangian brings the last residuals down slowly.
    check_spacing : int
        Passes after a failed check before the next (each costs a full gradient).
    unshrink_every : int
        Passes between visits of every multiplier, shrunk ones included, while the passes
        have not met the tolerance: a multiplier shrunk under an old bias estimate may be
        the one its task's equality needs.
    refresh_every : int
        Passes between recomputations of ``q`` and the posteriors from ``u`` (the running
        updates drift by rounding only).
    face_change, stiff_face_change : float
        A face step is taken once the free set changes by at most this fraction of its size
        in a pass (from the last pass's, or from the last face step's: while it stays
        settled, a face step follows every pass); on a stiff dual (see
        ``crawl_stiffness``) by at most ``stiff_face_change``, whose faces the projected
        step gains little on (raw dense features: their passes crawl, and the finish is what
        helps them; measured on the stiff duals of ``tests/med/test_ssnal.py`` and the
        own-data rotation, where the looser threshold made them 1.3-3x slower, and on sparse
        text, where it makes ``n = D = 20,000`` 2.4x faster). A face step after every
        settled pass instead of every other one (with CG's quadratic forcing, see
        :mod:`~medmtl.med.solvers.coordinate_face`), in alternating processes: spam
        1.38-1.47 -> 1.10-1.19 s, sparse 20,000 x 100,000 0.84-0.87 -> 0.69 s, 5,000 x
        20,000 0.123-0.130 -> 0.119-0.122 s; 20 Newsgroups, sentiment and dense features
        within the noise.
    finish_after, wide_finish_after, wide_columns : int
        Passes before the proximal Newton finish is first tried: ``finish_after`` when every
        task's rows touch at most ``wide_columns`` columns (the finish's Newton systems are
        small), else ``wide_finish_after``; it is tried again whenever the passes have
        doubled. Sparse duals whose passes converge do so within 20 (text-like rows, 2,000
        to 20,000 examples: 18 passes); duals whose passes creep gain from an early finish:
        the Ising structure duals (99 columns per task), 100 nodes x 1,000 samples, 9.7 s in
        CPU time at 20 passes against 13.9 s at 50, dense feature selection at 50,000 x 100,
        3.4 s against 6.7 s. Wide dense duals, whose finish factorises a matrix of their
        width at every Newton step, converge by their passes first: 2,000 x 2,000 took 5.7 s
        with the finish at 20 passes and 1.8 s by 33 passes. At 10 passes the sparse ones
        paid for a finish they did not need (13x).
    finish_steps : int
        Proximal steps of one finish at most.
    crawl_passes, crawl_spread, crawl_stiffness : int, float, float
        The passes crawl when the dual is stiff (the mean over the multipliers of
        ``H_ii (hi_i - lo_i)``, how much a multiplier crossing its box changes its own
        gradient, is above ``crawl_stiffness`` times ``max|c|``: dense raw features with
        ``C s ||x||^2`` in the hundreds) and after ``crawl_passes`` passes the spread of
        the projected gradient is still above ``crawl_spread`` times the largest spread of
        those passes. Coordinate steps then gain about the same ``J`` pass after pass, so
        the finish is tried at once instead of at ``finish_after``.
    """

    equality_rtol: float = 1e-10
    check_rtol: float = 1e-6
    check_spacing: int = 10
    unshrink_every: int = 50
    refresh_every: int = 16
    face_change: float = 0.1
    stiff_face_change: float = 0.01
    finish_after: int = 20
    wide_finish_after: int = 50
    wide_columns: int = 500
    finish_steps: int = 40
    crawl_passes: int = 10
    crawl_spread: float = 0.5
    crawl_stiffness: float = 30.0

    def next_step(self, run, spread, feasible, checkable):
        """The step after a pass: ``"finish"``, ``"pass"`` or ``"check"``.

        Parameters
        ----------
        run : Run
        spread : float
            The pass's largest minus smallest projected gradient.
        feasible : bool
            Every task's residual below ``equality_rtol`` of its mass.
        checkable : bool
            Every task's residual below ``run.check_rtol`` of its mass.
        """
        if run.passes >= run.finish_at or self.crawling(run, spread):
            return "finish"
        if spread > run.eps or not (feasible or checkable and self.check_due(run)):
            return "pass"
        return "check"

    def first_finish(self, dual, rows):
        """The pass at which the finish is first tried (see ``finish_after``)."""
        if len(dual.groups) == 1:  # the columns of every row: those that hold an entry
            widest = rows.n_held
        else:
            widest = max((columns_of(rows.F, r).size for r in dual.groups), default=0)
        return self.finish_after if widest <= self.wide_columns else self.wide_finish_after

    def crawling(self, run, spread):
        """Whether the passes crawl (see ``crawl_passes``): checked once, at that pass."""
        return (run.passes == self.crawl_passes and run.stiffness > self.crawl_stiffness
                and spread > self.crawl_spread * run.spread_max)

    def check_due(self, run):
        """Whether a check may run now: at most one every ``check_spacing`` passes after a
        failed one."""
        return run.passes - run.last_check >= self.check_spacing

    def settled(self, run, free, last):
        """Whether the free set changed by at most ``face_change`` (``stiff_face_change``
        on a stiff dual) of its size, at most one multiplier for a small one, since the last
        pass."""
        if last is None:
            return False
        changed = np.setxor1d(free, last, assume_unique=True).size
        share = self.stiff_face_change if run.stiffness > self.crawl_stiffness else self.face_change
        return changed <= max(1, int(share * free.size))


class Run:
    """The state of one coordinate solve and the steps the policy chooses among.

    Parameters
    ----------
    dual : MEDDual
    init : ndarray of shape (n,) or None
    options : dict
        The method's checked options.
    policy : Policy
    """

    def __init__(self, dual, init, options, policy):
        self.dual, self.options, self.policy = dual, options, policy
        self.rows = rows = dual.factor_rows()
        n, D, G = dual.n, dual.n_terms, len(dual.groups)
        self.prior = Prior(np.log(dual.alpha) if dual.alpha > 0 else -np.inf, bool(D and dual.alpha > 0))
        self.coords = Coords(dual.c, dual.a, dual.lo, dual.hi, dual.group_of)
        lam = np.zeros(n) if init is None else np.array(init, dtype=float)
        self.it = Iterate(lam, np.zeros(rows.F.shape[1]), np.zeros(D), np.ones(D), np.zeros(G),
                          np.zeros(G), np.bincount(dual.group_of, dual.a * lam, minlength=G))
        self._exact_state()
        self.scale = max(float(np.max(np.abs(dual.c), initial=0.0)), 1e-12)
        self.it.rho[:], self.stiffness = self._penalties()
        self.kkt_eps = self.eps = options["kkt_tol"] * gap_scale(dual)
        self.check_rtol = max(policy.check_rtol, 1e-2 * options["kkt_tol"])
        self.best = (-np.inf, None, None, None, np.inf)
        self.blo, self.bhi = scaled_box(dual)
        self.seed = np.array([0x9E3779B97F4A7C15 ^ (options["random_state"] + 1)], dtype=np.uint64)
        self.order, self.n_active = np.arange(n, dtype=np.int64), n
        self.bounds, self.stats = np.array([np.inf, -np.inf]), np.zeros(3)
        self.scratch = scratch_for(rows)
        self.last_free = None
        self.path, self.passes, self.checks, self.touched = [], 0, 0, 0
        self.last_check = -policy.check_spacing
        self.faces = self.cg = 0
        self.first_finish = policy.first_finish(dual, rows)
        self.finish_at, self.prox_steps, self.newton_steps = self.first_finish, 0, 0
        self.spread_max = 0.0
        self.status, self.gap = "max_iter", np.inf

    # -- the state ---------------------------------------------------------------------------
    @property
    def lam(self):
        return self.it.lam

    @property
    def s(self):
        return self.it.s

    def _set_lam(self, lam):
        self.it.lam[:] = lam

    def _refresh(self):
        refresh_terms(self.it.u, self.rows.col_term, self.it.q, self.it.s, self.prior.log_alpha,
                      self.rows.switched_cols)

    def _exact_state(self):
        """``u``, ``q``, ``s`` and ``J`` recomputed from ``lam`` (no running rounding)."""
        if np.any(self.it.lam):  # (a cold start's u is 0)
            self.it.u[:] = np.asarray(self.rows.F.T @ self.it.lam, dtype=float)
        else:
            self.it.u[:] = 0.0
        self._refresh()
        self.J_checked = self._objective()

    def _objective(self, running=False):
        """``J`` from the running ``u`` and ``q`` (and, ``running``, the posteriors as well:
        :func:`running_switched_sum`, cheaper, for the path between checks)."""
        u0 = self.it.u[:self.rows.r0]
        J = float(self.dual.c @ self.it.lam) - 0.5 * float(u0 @ u0)
        if running and self.it.q.size:
            J -= running_switched_sum(self.it.q, self.it.s, self.dual.alpha)
        elif self.it.q.size:
            J -= switched_sum(self.it.q, self.dual.alpha)
        return J

    def _residuals(self):
        dual = self.dual
        return np.bincount(dual.group_of, dual.a * self.it.lam, minlength=len(dual.groups))

    def _penalties(self):
        """``rho_g``, the mean diagonal curvature ``H_ii / a_i^2`` of each task at the start,
        and the dual's stiffness, the mean of ``H_ii (hi_i - lo_i)`` over ``max|c|``."""
        dual = self.dual
        diag = np.empty(dual.n)
        diag_hessian(self.rows.record, self.it.s, np.zeros(dual.n_terms), self.it.u, diag)
        per = diag / dual.a**2
        counts = np.bincount(dual.group_of, minlength=len(dual.groups))
        rho = np.bincount(dual.group_of, per, minlength=len(dual.groups)) / np.maximum(counts, 1)
        width = np.where(np.isfinite(dual.hi - dual.lo), dual.hi - dual.lo, 0.0)
        stiffness = float(np.mean(diag * width)) / self.scale if dual.n else 0.0
        return np.maximum(rho, 1e-12 * max(float(rho.max(initial=0.0)), 1e-300)), stiffness

    def _gradient(self):
        """The full gradient, and the rounding floor of the KKT gap it allows."""
        grad, size = np.empty(self.dual.n), np.empty(self.dual.n)
        full_gradient(self.rows.record, self.it.u, self.it.s, self.dual.c, grad, size)
        size /= np.abs(self.dual.a)
        return grad, 2 * ROUNDING_UNITS * np.finfo(float).eps * float(np.max(size, initial=0.0))

    def _slack(self):
        """``|grad_i / a_i - b_g|`` at the running ``u`` and the current estimates ``b_g`` of
        the biases: how far the KKT conditions hold each multiplier at its bound."""
        grad, _ = self._gradient()
        return np.abs(grad / self.dual.a - self.it.shift[self.dual.group_of])

    # -- the steps ---------------------------------------------------------------------------
    def one_pass(self):
        """A shuffled pass of coordinate steps over the active multipliers; returns the
        spread of the projected gradient and whether the residuals are met / checkable."""
        it, policy, dual = self.it, self.policy, self.dual
        shuffle(self.order, self.n_active, self.seed)
        self.n_active = coordinate_pass(self.order, self.n_active, self.rows.record, self.coords,
                                        it, self.scratch, self.prior, bool(self.options["shrinking"]),
                                        self.bounds, self.stats)
        self.passes += 1
        self.touched += int(self.stats[2])
        it.shift[:] += it.rho * it.resid
        if self.passes % policy.refresh_every == 0:
            self._refresh()
        self.path.append(self._objective(running=True))
        mass = np.bincount(dual.group_of, np.abs(dual.a * it.lam), minlength=len(dual.groups))
        feasible = np.all(np.abs(it.resid) <= policy.equality_rtol * mass)
        # residuals this small are taken out exactly by the check's projection
        checkable = np.all(np.abs(it.resid) <= self.check_rtol * mass)
        spread = self.stats[0] - self.stats[1]
        self.spread_max = max(self.spread_max, spread)
        return spread, feasible, checkable

    def reactivate(self):
        """Every multiplier active again, and no shrinking bounds."""
        self.n_active = self.dual.n
        self.bounds[:] = (np.inf, -np.inf)

    def more_passes(self, spread):
        """Between passes that have not met the tolerance: the shrinking bounds of the next
        pass, every multiplier visited again now and then, and a face step once the free set
        has settled while the pass's ``spread`` of the projected gradient is above the
        tolerance (below it, the passes wait only for the equalities' residuals and the
        check: a face step there, clipped at the box, can take a multiplier to a bound the
        shrunk passes then do not revisit)."""
        dual, policy = self.dual, self.policy
        pg_max, pg_min = self.stats[0], self.stats[1]
        self.bounds[0] = pg_max if pg_max > 0 else np.inf
        self.bounds[1] = pg_min if pg_min < 0 else -np.inf
        free = self._free()
        if self.passes % policy.unshrink_every == 0 and self.n_active < dual.n:
            self.reactivate()
        if spread > self.eps and free.size > 1 and policy.settled(self, free, self.last_free):
            t = self.face(free)
            if t is None and self.n_active < dual.n:
                # the free multipliers cannot take the equalities' residuals: the shrunk
                # ones must move too (else the passes stall on them)
                self.reactivate()
            # after a step, the free set it leaves is the one the next pass is compared
            # with: while it stays settled, a face step follows every pass
            self.last_free = self._free() if t else None
        else:
            self.last_free = free

    def _free(self):
        """The multipliers strictly inside their box."""
        return np.flatnonzero((self.it.lam > self.dual.lo) & (self.it.lam < self.dual.hi))

    def check(self):
        """Project, recompute everything from scratch, and test the KKT conditions with the
        full gradient; sets the biases' estimates from it. True when they hold."""
        dual = self.dual
        self.checks += 1
        self.last_check = self.passes
        self._set_lam(meet_equalities(dual, self.it.lam, self._slack))
        self._exact_state()
        self.grad, floor = self._gradient()
        self.eps = max(self.kkt_eps, floor)
        self.gap = max_gap(self.grad / dual.a, dual.a * self.it.lam, self.blo, self.bhi, dual)
        self.it.resid[:] = self._residuals()
        self.it.shift[:] = dual.intercepts(self.it.lam, self.grad)
        if self.J_checked > self.best[0]:
            self.best = (self.J_checked, self.it.lam.copy(), self.grad.copy(), self.it.s.copy(), self.gap)
        return self.gap <= self.eps

    def face(self, free):
        """A Newton step on the face of the free multipliers (:func:`face_step`), once the
        free multipliers can take the equalities' residuals without leaving the box.
        Returns the fraction of the step's direction taken (0: none), or None (and no step)
        when they cannot."""
        dual, rows, it = self.dual, self.rows, self.it
        new = absorb_residuals(dual, it.lam, free)
        if new is None:
            return None
        moved = np.flatnonzero(new != it.lam)
        if 2 * moved.size > dual.n:  # most of the rows: a product on all of them, no copy
            it.u[:] += rows.F.T @ (new - it.lam)
        else:
            it.u[:] += rows.F[moved].T @ (new[moved] - it.lam[moved])
        self._set_lam(new)
        self._refresh()
        t, its, bias = face_step(dual, rows, it.lam, it.u, it.q, it.s, free)
        self.faces += 1
        self.cg += its
        known = np.isfinite(bias)
        it.shift[known] = bias[known]
        self._refresh()
        it.resid[:] = self._residuals()
        self.path[-1] = self._objective()
        return t

    def prox_finish(self, spread):
        """Proximal Newton steps (:func:`medmtl.med.solvers.ssnal.finish`) from the passes'
        multipliers with the equalities met, then the check; True when it converged. Tried
        again after twice as many passes if not, never again for a dual whose layout does
        not allow it."""
        start = meet_equalities(self.dual, self.it.lam, self._slack)
        found = ssnal_finish(self.dual, self.rows, start, self.options["kkt_tol"],
                             self.policy.finish_steps, spread=spread, raw=self.it.lam.copy())
        if found is None:
            self.finish_at = np.inf
            return False
        self.finish_at = max(2 * self.passes, self.first_finish)
        lam, _, _, _, stats = found
        self._set_lam(lam)
        self.prox_steps += stats["prox_steps"]
        self.newton_steps += stats["newton_steps"]
        self.cg += stats["cg_iterations"]
        done = self.check()
        self.path[-1] = self.J_checked
        return done

    # -- the run -----------------------------------------------------------------------------
    def iterate(self):
        """Passes and the steps the policy names until the KKT conditions hold, ``J`` stops
        rising at a check, or ``max_iter`` passes."""
        done = self.check()
        self.path.append(self.J_checked)
        if done:
            return self.conclude()
        J_last = self.J_checked
        for _ in range(self.options["max_iter"]):
            spread, feasible, checkable = self.one_pass()
            step = self.policy.next_step(self, spread, feasible, checkable)
            if step == "finish":
                if self.prox_finish(spread):
                    return self.conclude()
                self.reactivate()
                self.last_free = None
            elif step == "pass":
                self.more_passes(spread)
            else:
                done = self.check()
                self.path[-1] = self.J_checked
                if done:
                    return self.conclude()
                # J rose by less than tol since the last check: the passes have stalled (a
                # J below the last check's is no sign of it, the projection of the residuals
                # can lower J); the status is the KKT gap's, as at any other end
                if 0.0 <= self.J_checked - J_last <= self.options["tol"] * abs(self.J_checked):
                    return self.conclude()
                J_last = self.J_checked
                self.reactivate()  # the check's full gradient may have found shrunk ones
        self.check()
        self.path[-1] = self.J_checked
        return self.conclude()

    def conclude(self):
        """The status from the last check. Where that check did not meet the tolerance, the
        best feasible point checked is the answer (a run stopped early may have left the
        augmented Lagrangian's iterate below it); where it did, it is the answer, even below
        an earlier point's ``J`` by round-off (100 nodes x 2,000 samples, random graph,
        repetition 1, C = alpha = 1: the converged check 3e-11 below the finish's point,
        whose KKT gap was 8x the tolerance, took the status ``"max_iter"`` after 13 passes)."""
        J_best, lam, grad, s, gap = self.best
        if J_best > self.J_checked and self.gap > self.eps:
            self._set_lam(lam)
            self.it.s[:] = s
            self.grad, self.gap, self.J_checked = grad, gap, J_best
            self.path[-1] = J_best
        if self.gap <= self.kkt_eps:
            self.status = "converged"
        elif self.gap <= self.eps:
            self.status = "rounding"  # the gradient is not exact enough for kkt_tol
