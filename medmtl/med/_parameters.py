"""The MED estimators' hyper-parameters: declared once and documented once.

Each group of parameters has its constraints here (``*_PARAMETERS``, for an estimator's
``_parameter_constraints``) and each parameter its description (:data:`PARAMETER_DOCS`),
which :func:`shared_docs` writes into every estimator's docstring in the order of its
``__init__``. The fit checks them all in one call
(:meth:`MEDBase._check_params <medmtl.med._estimator_base.MEDBase._check_params>`).
"""

from __future__ import annotations

import inspect
from numbers import Integral, Real

from .._params import Checked, Interval, Options
from ._kernel_spec import KERNEL_DOCS, KERNEL_PARAMETERS, check_kernel_bank

__all__ = ["PRIOR_PARAMETERS", "SOLVE_PARAMETERS", "SELECTION_PARAMETERS", "POOLING_PARAMETERS",
           "EPSILON_PARAMETER", "THRESHOLD_PARAMETER", "PARAMETER_DOCS", "shared_docs"]

_POSITIVE = Interval(Real, 0, None, closed="neither")

PRIOR_PARAMETERS = {
    "alpha": [None, Interval(Real, 0, None, closed="left")],
    "rho": [None, Interval(Real, 0, 1, closed="right")],
    "C": [_POSITIVE],
}
SOLVE_PARAMETERS = {
    # a name the registry owns: looked up once, with the inner solver and options, when the
    # fit checks its parameters (solvers.plan), whose message lists the registered methods
    "method": [str],
    "solver": [None, str],
    "max_iter": [None, Interval(Integral, 1, None, closed="left")],
    "tol": [None, _POSITIVE],
    "solver_options": [None, dict],
    "warm_start": [bool],
}
SELECTION_PARAMETERS = {
    **KERNEL_PARAMETERS,
    "selection": [Options(None, "features", "kernels")],
    "kernels": [None, Checked(check_kernel_bank)],
}
POOLING_PARAMETERS = {
    **KERNEL_PARAMETERS,
    "shared_scale": [_POSITIVE],
    "task_scale": [None, _POSITIVE],
}
EPSILON_PARAMETER = {"epsilon": [Interval(Real, 0, None, closed="left")]}
THRESHOLD_PARAMETER = {"threshold": [Interval(Real, 0, 1, closed="neither")]}

PARAMETER_DOCS = {
    **KERNEL_DOCS,
    "selection": """\
    selection : {None, "features", "kernels"}, default={default}
        ``None``: no switches, the MED SVM (SVR for a regressor) of each task with
        ``kernel``, equal to the SVM's dual; ``"features"``: one switch per feature, shared
        by all tasks (``kernel`` must be ``"linear"``); ``"kernels"``: one switch per kernel
        of ``kernels``, shared by all tasks (``kernel`` unused).
""",
    "kernels": """\
    kernels : list of kernels, optional
        The bank for ``selection="kernels"``: names spelt as for ``kernel`` (built with the
        same ``degree``, ``gamma``, ``coef0``), Kernel objects (see :mod:`medmtl.kernels`)
        or callables.
""",
    "shared_scale": """\
    shared_scale : float > 0, default=1.0
        Scale of the shared model's kernel.
""",
    "task_scale": """\
    task_scale : float > 0, optional
        Scale of each task's own kernel; defaults to ``10 M`` (the paper's heuristic
        ``k_m = 10 M k``).
""",
    "alpha": """\
    alpha : float >= 0, optional
        Prior odds of a switch being off; larger is sparser (for adaptive pooling: pools
        more). Neither ``alpha`` nor ``rho`` given means ``alpha = 1``.
""",
    "rho": """\
    rho : float in (0, 1], optional
        Prior probability of a switch being on, instead of ``alpha``:
        ``alpha = (1 - rho) / rho`` (:func:`~medmtl.med.bound.alpha_from_rho`).
""",
    "C": """\
    C : float > 0, default=1.0
        Upper bound on the multipliers (the slack penalty), the same for every task.
""",
    "epsilon": """\
    epsilon : float >= 0, default=0.1
        Half-width of the insensitive tube.
""",
    "threshold": """\
    threshold : float in (0, 1), default=0.5
        The posterior above which an edge is in ``adjacency_`` (1/2: the edges more likely
        present than absent), among the edges with evidence above round-off (see the
        module notes).
""",
    "method": """\
    method : str, default="auto"
        The solution method of :func:`medmtl.med.solvers.solve`: ``"auto"`` (``"cd"`` or
        Newton, whichever is faster for the dual), ``"newton"`` (projected Newton with SMO
        subproblems), ``"cd"`` (coordinate steps in feature space, for linear and feature
        models), ``"ssnal"`` (semismooth Newton in the weights), ``"bound"`` (Algorithm 1),
        ``"direct"`` (CVXPY, exponential cone), or any registered method.
""",
    "solver": """\
    solver : str, optional
        The method's inner solver: ``"SMO"`` for ``"newton"``, ``"OSQP"`` or any CVXPY QP
        solver for the QP steps of ``"bound"``, a CVXPY solver for ``"direct"``
        (``"CLARABEL"`` by default). ``None`` takes the method's default.
""",
    "max_iter": """\
    max_iter : int >= 1 or None, default=None
        The method's iteration limit (Newton steps, ``"cd"``'s passes, Algorithm 1's bound
        steps, the direct solver's iterations); reaching it gives a ConvergenceWarning.
        ``None`` keeps the method's own limit (``get_method(method).describe_options()``
        lists it: 50 Newton steps, 1,000 passes or bound steps, the conic solver's own).
""",
    "tol": """\
    tol : float > 0 or None, default=None
        The method's stopping tolerance: ``"newton"`` and ``"bound"`` stop when an
        iteration raises ``J`` by less than ``tol * |J|`` (Newton also on its KKT test);
        the direct solve stops at its solver's own tolerances. ``None`` keeps the method's
        own (``1e-12`` for ``"newton"``, ``"cd"`` and ``"bound"``).
""",
    "solver_options": """\
    solver_options : dict, optional
        The method's other options (``get_method(method).describe_options()`` lists them),
        for example ``{"inexact": False}`` for the plain Algorithm 1 of ``"bound"``, or
        ``{"solver_settings": {...}}`` for its inner QP solver. ``max_iter`` and ``tol``
        are added from the parameters above (and cannot be given here).
""",
    "warm_start": """\
    warm_start : bool, default=False
        Start from the previous fit's multipliers (projected onto the new box) when they
        have the new dual's size. The dual itself is built anew at every fit; to solve a
        whole path of ``C`` and ``alpha`` on one dual, use :func:`medmtl.med.med_path`.
""",
}

SOLUTION_DOC = """\
    objective_ : float
        The final dual objective ``J`` (``J(0) = 0``).
    objective_path_ : ndarray of shape (n_iterations + 1,)
        ``J`` at the start and after each iteration (``n_iterations`` is ``n_iter_``).
    n_iter_ : int
        Number of iterations the solution method ran.
    solver_status_ : str
        ``"converged"`` (``"optimal"`` for the direct solve, ``"rounding"`` when the KKT
        gap is at the rounding floor of the arithmetic) when the method met its stopping
        rule, else what stopped it, e.g. ``"max_iter"``.
    method_used_ : str
        The method that solved the dual (what ``method="auto"`` chose).
    solver_info_ : dict
        The method's own record (:attr:`MEDSolution.info <medmtl.med.solvers.MEDSolution>`):
        e.g. its KKT gap, ``duality_gap`` (a certified bound on how far ``objective_`` is
        below the optimum), and any hand-over to another method or fallback it took.
"""
LEARNED_DOC = """\
    learned_kernel_ : medmtl.kernels.WeightedSumKernel
        Only for ``selection="kernels"``: the learned kernel ``sum_d s_d k_d`` (the bank
        weighted by ``switch_posterior_``), a callable for ``SVC(kernel=...)`` or a Gram
        matrix.
    learned_metric_ : medmtl.kernels.KernelDistance
        Only for ``selection="kernels"``: the distance ``sqrt(sum_d s_d Delta_d^2)`` of
        that kernel's feature space (``metric(A, B)`` for ``metric="precomputed"``).
"""
SWITCHED_DOC = """\
    intercept_ : ndarray of shape (1,)
    switch_posterior_ : ndarray of shape (n_switches,)
        Posterior mean of each switch (empty for ``selection=None``).
""" + LEARNED_DOC + """\
    coef_ : ndarray of shape (1, n_features) or None
        Posterior-mean weights of a linear model (``None`` for other kernels).
    n_features_in_ : int
""" + SOLUTION_DOC
SWITCHED_TASKS_DOC = """\
    intercept_ : ndarray of shape (n_tasks,)
    switch_posterior_ : ndarray of shape (n_switches,)
        Posterior mean of each switch shared by the tasks (empty for ``selection=None``).
""" + LEARNED_DOC + """\
    coef_ : ndarray of shape (n_tasks, n_features) or None
        Per-task posterior-mean weights of a linear model (``None`` for other kernels).
"""
TASKS_DOC = SOLUTION_DOC + """\
    tasks_ : ndarray of shape (n_tasks,)
        The task labels in the order of the per-task attributes (``0 .. M-1`` for lists).
    n_tasks_ : int
    n_features_in_ : int
"""
TASK_CLASSES_DOC = """\
    classes_ : ndarray of shape (2,), or list of ndarray of shape (2,)
        The two labels of every task (stacked form), or each task's two labels (per-task
        lists); the second is the positive class.
    dual_coef_ : ndarray of shape (n_total,)
        The multipliers of all tasks, stacked in the order of ``tasks_``.
"""
_BLOCKS = {"solution": SOLUTION_DOC, "switched": SWITCHED_DOC, "switched_tasks": SWITCHED_TASKS_DOC,
           "tasks": TASKS_DOC, "task_classes": TASK_CLASSES_DOC}


def shared_docs(cls):
    """Class decorator: the shared descriptions, into the class's docstring.

    The line ``{parameters}`` becomes the Parameters section: every parameter of
    ``__init__``, in its order, described by :data:`PARAMETER_DOCS` (``{default}`` in a
    description is the parameter's default). The lines ``{solution}``, ``{switched}``,
    ``{switched_tasks}``, ``{tasks}`` and ``{task_classes}`` become the attribute blocks of
    those names: the attributes of every MED fit; of a single-task switched-kernel model
    (with those of the fit); of a multi-task one; of a multi-task fit and its tasks; the
    labels and multipliers of a multi-task classifier.

    Raises
    ------
    ValueError
        When the docstring has no ``{parameters}`` line, or a parameter has no description.
    """
    doc = cls.__doc__
    signature = inspect.signature(cls.__init__).parameters
    missing = [name for name in list(signature)[1:] if name not in PARAMETER_DOCS]
    if "    {parameters}\n" not in doc or missing:
        raise ValueError(f"{cls.__name__}: a docstring line {{parameters}} and a description of every "
                         f"parameter are needed; undescribed: {missing}")
    described = "".join(PARAMETER_DOCS[name].replace("{default}", _shown(signature[name].default))
                        for name in list(signature)[1:])
    doc = doc.replace("    {parameters}\n", "    Parameters\n    ----------\n" + described)
    for marker, block in _BLOCKS.items():
        doc = doc.replace("    {" + marker + "}\n", block)
    cls.__doc__ = doc
    return cls


def _shown(default):
    """A default as the docstrings spell it (strings in double quotes)."""
    return f'"{default}"' if isinstance(default, str) else repr(default)
