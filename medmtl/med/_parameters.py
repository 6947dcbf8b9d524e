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
           "EPSILON_PARAMETER", "PARAMETER_DOCS", "CV_DOCS", "shared_docs"]

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
    kernels : list of kernels or "precomputed", optional
        The bank for ``selection="kernels"``: names spelt as for ``kernel`` (built with the
        same ``degree``, ``gamma``, ``coef0``), Kernel objects (see :mod:`medmtl.kernels`)
        or callables; ``"precomputed"``: ``X`` is a list of Gram matrices, one per kernel
        (MKLpy's convention).
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
    threshold : "auto" or float in (0, 1), default="auto"
        Which edges with evidence above round-off are in ``adjacency_``: ``"auto"`` cuts the
        evidence at its widest gap (:func:`~medmtl.med.graphical.widest_gap_cut`, see the
        module notes), with no margin set by hand; a number is the posterior above which an
        edge is kept (``0.5``: the edges more likely present than absent, at ``alpha = 1``
        every edge with any evidence).
""",
    "method": """\
    method : str, default="auto"
        The name of a registered solution method (``medmtl.med.solvers.METHODS``; the docs'
        methods page, generated from that registry, describes each); ``"auto"`` chooses one
        for the dual (:func:`medmtl.med.solvers.choose_method`).
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
DUAL_DOC = """\
    dual_ : MEDDual
        The dual the fit solved, in its row order and label coding (tasks in the order of
        the per-task attributes, each task's rows in the order given; a classifier's
        multiplier of an example of the positive class has sign +1 in ``dual_.a``; a
        regressor's task holds ``lam`` then ``lam*``): ``dual_.to_cvxpy()`` is the problem
        behind the model, and :meth:`set_multipliers` loads multipliers from another solve
        of it.
"""
SWITCHED_DOC = """\
    intercept_ : ndarray of shape (1,)
    switch_posterior_ : ndarray of shape (n_switches,)
        Posterior mean of each switch (empty for ``selection=None``).
""" + LEARNED_DOC + """\
    coef_ : ndarray of shape (1, n_features) or None
        Posterior-mean weights of a linear model (``None`` for other kernels).
    n_features_in_ : int
    feature_names_in_ : ndarray of str of shape (n_features,)
        The column names of a DataFrame ``X`` (only when fitted on one with string names).
""" + SOLUTION_DOC + DUAL_DOC
SWITCHED_TASKS_DOC = """\
    intercept_ : ndarray of shape (n_tasks,)
    switch_posterior_ : ndarray of shape (n_switches,)
        Posterior mean of each switch shared by the tasks (empty for ``selection=None``).
""" + LEARNED_DOC + """\
    coef_ : ndarray of shape (n_tasks, n_features) or None
        Per-task posterior-mean weights of a linear model (``None`` for other kernels).
"""
TASKS_DOC = SOLUTION_DOC + DUAL_DOC + """\
    tasks_ : ndarray of shape (n_tasks,)
        The task labels in the order of the per-task attributes (``0 .. M-1`` for lists).
    n_tasks_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str of shape (n_features,)
        The column names of a DataFrame ``X`` (only when fitted on one with string names).
"""
TASK_CLASSES_DOC = """\
    classes_ : ndarray of shape (2,), or list of ndarray of shape (2,)
        The two labels of every task (stacked form), or each task's two labels (per-task
        lists); the second is the positive class.
    dual_coef_ : ndarray of shape (n_total,)
        The multipliers of all tasks, stacked in the order of ``tasks_``.
"""
CV_DOCS = {
    "Cs": """\
    Cs : array-like of float > 0, default={default}
        The values of ``C`` to try (sorted, repeats dropped). The default spans four decades around the SVM's usual
        range for standardised features (zero mean, unit variance).
""",
    "alphas": """\
    alphas : array-like of float >= 0, default={default}
        The prior odds ``alpha`` of a switch being off to try (sorted, repeats dropped;
        larger is sparser; for adaptive pooling, pools more): from mostly on (0.1) to
        sparse (100). Unused by a model without switches (``selection=None``), whose grid
        is ``Cs`` alone.
""",
    "cv": """\
    cv : int >= 2, cross-validation splitter or iterable, default=None
        The folds. ``None`` means 5; an integer ``k`` means ``k`` folds of every task's
        examples, stratified by class within the task
        (:class:`~medmtl.model_selection.TaskStratifiedKFold`; for one task
        :class:`~sklearn.model_selection.StratifiedKFold` for a classifier,
        :class:`~sklearn.model_selection.KFold` for a regressor). A splitter's
        ``split(X, y, groups=tasks)`` is called with the task of each row as ``groups``.
""",
    "scoring": """\
    scoring : str or callable, default=None
        How a fold's model is scored, higher being better. ``None`` is the papers' choice:
        the mean over tasks of each task's ROC AUC of the decision values for a
        classifier (:data:`~medmtl.model_selection.mean_auc_scorer`), of each task's R^2
        for a regressor. A callable is called as ``scoring(estimator, X, y, tasks=tasks)``
        (:func:`~medmtl.model_selection.make_task_scorer` makes one; a single-task
        estimator's is called without ``tasks``, so any scikit-learn scorer fits). A name
        is averaged over tasks: ``"roc_auc"``, ``"accuracy"``, ``"balanced_accuracy"``,
        ``"r2"``, ``"neg_mean_squared_error"``, ``"neg_mean_absolute_error"`` (a
        single-task estimator takes any of scikit-learn's scorer names).
""",
    "refit": """\
    refit : bool, default=True
        Refit the best ``(C, alpha)`` on all the data; the estimator then predicts with
        that model (``best_estimator_``). ``False`` only scores the grid.
""",
    "n_jobs": """\
    n_jobs : int, default=None
        The number of folds run in parallel (joblib); ``None`` means 1.
""",
}
PARAMETER_DOCS.update(CV_DOCS)
CV_ATTRIBUTES_DOC = """\
    cv_results_ : dict of ndarray
        The scores in :class:`~sklearn.model_selection.GridSearchCV`'s shape, one entry per
        grid point in the order of ``ParameterGrid({"C": Cs, "alpha": alphas})``:
        ``params``, ``param_C``, ``param_alpha``, ``split{k}_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` and ``mean_fit_time``,
        ``std_fit_time`` (the seconds of each point's solve along the fold's path).
    best_index_ : int
        The grid point of the best mean score (the first of ties).
    best_params_ : dict
        Its ``C`` and ``alpha``.
    best_score_ : float
        Its mean score over the folds.
    C_, alpha_ : float
        The chosen ``C`` and ``alpha``.
    best_estimator_ : MED estimator
        Refit on all the data at the chosen point (``refit=True`` only); its fitted
        attributes (``coef_``, ``intercept_``, ``switch_posterior_``, ``dual_``,
        ``classes_``, ...) are the CV estimator's too.
    scorer_ : callable
        The scorer used.
    n_splits_ : int
        The number of folds.
    refit_time_ : float
        Seconds to refit the best model.
"""
_BLOCKS = {"solution": SOLUTION_DOC, "switched": SWITCHED_DOC, "switched_tasks": SWITCHED_TASKS_DOC,
           "tasks": TASKS_DOC, "task_classes": TASK_CLASSES_DOC, "cv_attributes": CV_ATTRIBUTES_DOC}


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
