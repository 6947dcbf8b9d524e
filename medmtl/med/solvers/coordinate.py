"""``method="cd"``: dual coordinate descent in feature space for every factor model.

For the MED duals whose terms are explicit factors (the linear SVM and SVR, feature
selection, per-feature kernels, their multi-task forms, adaptive pooling with a linear
kernel), the solver keeps ``u = F^T lam`` (the weights) and every ``q_t = ||u_t||^2 / 2`` up
to date and steps one multiplier at a time, by Newton steps along its coordinate, touching
only that example's nonzeros (:mod:`~medmtl.med.solvers.coordinate_steps`): a pass costs one
sweep over the nonzeros of the factors and no Gram column is ever formed, as in liblinear's
dual coordinate descent (Hsieh et al. 2008; Fan et al. 2008), shrinking included.

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
  the free set has nearly settled (it changes by at most 10 % between two passes): from the
  point with the residuals taken out of the free multipliers, conjugate gradients in feature
  space maximise the second-order model of ``J`` with the equalities held exactly, and the
  step follows the projected path of that direction (box and equalities), so that the
  multipliers it brings to a bound leave the face at once. Their equality multipliers are
  the new bias estimates ``b_g``. On ill-conditioned free sets
  (text, ``n`` much larger than ``D``) coordinate steps alone need many passes, face steps
  few;
* a proximal Newton finish (:mod:`~.ssnal`, the method ``"ssnal"`` from the passes' point),
  tried once the passes have gone on for ``Policy.finish_after`` passes without converging,
  and again whenever they have doubled, or already after ``Policy.crawl_passes`` passes on
  a stiff dual whose passes crawl (dense raw features, ``C s ||x||^2`` in the hundreds:
  each pass gains about the same ``J`` and the spread of the projected gradient does not
  fall, so more passes would not help): proximal point steps on the dual, each solved by a
  semismooth Newton method in the space of the weights and biases, where the answer is
  unique even when the optimal multipliers are not (degenerate duals, where the passes
  crawl along a face of optimal multipliers: the Ising structure duals) and where the scale
  of the features does not slow the steps down (raw features, whose badly conditioned
  Hessian makes coordinate steps crawl). It takes every dual whose factors fit one of its
  layouts; the check then measures its answer as any other.

:mod:`~.coordinate_run` holds a solve's state and the policy that chooses its next step.
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
from .coordinate_run import Policy, Run
from .kkt import CERTIFIED_RTOL, duality_gap
from .ssnal import hand_over as ssnal_hand_over
from .threads import one_blas_thread

__all__ = ["CoordinateMethod", "POLICY"]

POLICY = Policy()
"""When the method takes its face steps, checks and finish (:class:`~.coordinate_run.Policy`)."""


class CoordinateMethod(Method):
    """``method="cd"``: coordinate steps in feature space, liblinear's dual coordinate
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
        ``max_up grad_i / a_i - min_low grad_j / a_j <= kkt_tol * s`` with ``s`` from
        :func:`~medmtl.med.solvers.kkt.gap_scale` (as ``"newton"``).
    shrinking : bool, default=True
        Leave out multipliers stuck at a bound until the active ones converge (liblinear).
    random_state : int, default=0
        Seed of the order in which each pass visits the multipliers.

    The iterations (``n_iter``) are the passes; the objective path holds ``J`` after each
    (after the pass's face step or finish, when it took one). Between checks the multipliers
    meet the equalities only up to the augmented Lagrangian's residual, so the path need not
    rise monotonically; the answer is feasible. The status is ``"converged"``,
    ``"max_iter"`` or ``"rounding"`` (stopped at the rounding floor of the full gradient,
    above ``kkt_tol``). A run that stops short of the tolerance before ``max_iter`` passes
    with an answer its duality gap does not certify (columns rescaled by up to 1e4 at a
    large ``C``) hands over to the proximal Newton method of ``"ssnal"`` from 0;
    ``info["handover"]`` records it and the status is that method's. The solution's ``info`` holds ``passes``, ``face_steps``,
    ``cg_iterations`` (of the face steps and the finish), ``prox_steps`` and
    ``newton_steps`` (of the finish), ``checks`` (full-gradient checks), ``nonzeros``
    (entries of the factors the passes touched), ``kkt_gap`` and ``time``.

    Examples
    --------
    Sparse inputs stay sparse: a pass visits each example's nonzeros only.

    >>> import scipy.sparse as sp
    >>> from medmtl.med import feature_selection_dual, solve
    >>> X = sp.csr_matrix([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [-1.0, 0.0, 0.5], [0.0, -1.5, 0.0]])
    >>> found = solve(feature_selection_dual([X], [np.array([1, 1, -1, -1])], C=1.0, alpha=1.0), "cd")
    >>> found.status, bool(found.info["nonzeros"] <= found.info["passes"] * X.nnz)
    ('converged', True)
    >>> bool(found.info["duality_gap"] <= 1e-6 * found.objective)
    True
    """

    name = "cd"
    default_solver = None
    options = (
        max_iter_option(1000, "Maximum number of passes over the multipliers."),
        tol_option(1e-12, "Also stop when a checked pass raises J by less than tol * |J|."),
        Option("kkt_tol", 1e-6, [Interval(Real, 0, None, closed="neither")],
               "Stop when every task's largest violating pair is below kkt_tol times "
               "kkt.gap_scale (max|c|, less for a small box)."),
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
            run = Run(dual, init, options, POLICY)
            run.iterate()
        lam, J, status, gap, grad, s = run.lam.copy(), run.J_checked, run.status, run.gap, run.grad, run.s.copy()
        path = list(run.path)
        info = {"passes": run.passes, "checks": run.checks, "nonzeros": run.touched,
                "face_steps": run.faces, "cg_iterations": run.cg,
                "prox_steps": run.prox_steps, "newton_steps": run.newton_steps}
        certificate = duality_gap(dual, lam, grad)
        if (status == "max_iter" and run.passes < options["max_iter"]
                and certificate > CERTIFIED_RTOL * abs(J)):
            # the passes and their finish stopped short of the tolerance before the pass cap,
            # with an answer the duality gap does not certify (rescaled columns at a large C):
            # the proximal Newton method from 0, where its first step is set by the data's
            # own scale (an iteration cap the caller set is theirs to keep)
            with one_blas_thread():
                found = ssnal_hand_over(dual, np.zeros(dual.n), J, options["kkt_tol"])
            if found is not None:
                lam, J, gap, status, stats = found
                grad, s = None, dual.switch_posterior(lam)
                info["handover"] = {"to": "ssnal", "because": "max_iter", "from": "zero", **stats}
                # ssnal's certified bound (its primal at the last weights), tighter than the
                # multipliers' own on such duals
                certificate = stats.get("duality_gap", duality_gap(dual, lam))
                path.append(J)
        return MEDSolution(
            lam=lam,
            intercepts=dual.intercepts(lam, grad),
            objective=J,
            objective_path=np.asarray(path),
            n_iter=run.passes,
            status=status,
            switch_posterior=s,
            method=self.name,
            solver="",
            info={**info, "kkt_gap": gap, "duality_gap": certificate, "time": time.perf_counter() - t_start},
        )
