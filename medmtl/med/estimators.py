"""scikit-learn style MED estimators on the one dual of :mod:`medmtl.med.dual`.

* :class:`MEDClassifier` - MED SVM (``selection=None``), feature selection, kernel selection.
* :class:`MEDRegressor` - the same for epsilon-insensitive regression.
* :class:`MultiTaskMEDClassifier`, :class:`MultiTaskMEDRegressor` - meta feature / kernel
  selection: one switch vector shared by all tasks, each task its own weights and bias.
* :class:`AdaptivePoolingClassifier` - each task mixes a switched own model with a shared one.

All five share one fit path (:mod:`medmtl.med._estimator_base`): a single-task estimator
is the multi-task one with M = 1. Each declares its parameters' constraints once, in
``_parameter_constraints``, and checks them all at the start of ``fit``. Kernels are spelt
as :class:`sklearn.svm.SVC` spells them (``kernel="rbf", gamma="scale"``, ...), with its
defaults. The multi-task estimators take one stacked ``X`` with the task of each row in
``tasks`` (the form scikit-learn's model selection splits within tasks; see
:mod:`medmtl.model_selection`), or per-task lists.
"""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._estimator_base import (
    EPSILON_PARAMETER,
    POOLING_PARAMETERS,
    PRIOR_PARAMETERS,
    SELECTION_PARAMETERS,
    SOLVE_PARAMETERS,
    BinaryTargets,
    MEDEstimator,
    MultiTaskAPI,
    MultiTaskDecisionFunction,
    PoolingModel,
    RealTargets,
    SingleTaskAPI,
    SwitchedKernelModel,
    shared_docs,
)

__all__ = [
    "MEDClassifier",
    "MEDRegressor",
    "MultiTaskMEDClassifier",
    "MultiTaskMEDRegressor",
    "AdaptivePoolingClassifier",
]


def _binary_tags(tags):
    tags.classifier_tags.multi_class = False
    return tags


@shared_docs(markers=("kernel", "prior", "solve", "solution", "learned"))
class MEDClassifier(SwitchedKernelModel, SingleTaskAPI, ClassifierMixin, BinaryTargets, MEDEstimator):
    """Binary MED classifier: SVM, feature selection or kernel selection (JMLR Sections 5-7).

    Parameters
    ----------
    {kernel}
    selection : {None, "features", "kernels"}, default=None
        ``None``: the MED SVM with ``kernel`` (equal to the SVM dual); ``"features"``: one
        switch per feature (``kernel`` must be ``"linear"``); ``"kernels"``: one switch per
        kernel of ``kernels`` (``kernel`` unused).
    kernels : list of kernels, optional
        The bank for ``selection="kernels"``: names spelt as for ``kernel`` (built with the
        same ``degree``, ``gamma``, ``coef0``), Kernel objects (see :mod:`medmtl.kernels`)
        or callables.
    {prior}
    {solve}

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[0]`` is mapped to -1 and ``classes_[1]`` to +1.
    dual_coef_ : ndarray of shape (n_samples,)
        The multipliers ``lam`` (not multiplied by the labels).
    intercept_ : ndarray of shape (1,)
    switch_posterior_ : ndarray of shape (n_switches,)
        Posterior mean of each switch (empty for the plain SVM).
    {learned}
    coef_ : ndarray of shape (1, n_features) or None
        Posterior-mean weights of a linear model (``None`` for other kernels).
    {solution}
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.3], [2.0, -0.2], [-1.0, 0.1], [-2.0, 0.4]])
    >>> y = np.array(["b", "b", "a", "a"])
    >>> clf = MEDClassifier(selection="features", alpha=1.0).fit(X, y)
    >>> clf.predict([[1.5, 0.0], [-1.5, 0.0]]).tolist()
    ['b', 'a']
    >>> bool(clf.switch_posterior_[0] > clf.switch_posterior_[1])
    True

    With SVC's spelling and defaults the MED SVM is SVC:

    >>> from sklearn.svm import SVC
    >>> med = MEDClassifier(kernel="rbf", C=10.0).fit(X, y)
    >>> svc = SVC(kernel="rbf", C=10.0, tol=1e-10).fit(X, y)
    >>> bool(np.allclose(med.decision_function(X), svc.decision_function(X), atol=1e-6))
    True
    """

    _parameter_constraints = {**SELECTION_PARAMETERS, **PRIOR_PARAMETERS, **SOLVE_PARAMETERS}

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, selection=None, kernels=None,
                 alpha=None, rho=None, C=1.0, method="auto", solver=None, max_iter=1000, tol=1e-12,
                 solver_options=None, warm_start=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.selection = selection
        self.kernels = kernels
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start

    def __sklearn_tags__(self):
        return _binary_tags(super().__sklearn_tags__())

    def decision_function(self, X):
        """Signed scores; positive predicts ``classes_[1]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or, for ``kernel="precomputed"``, kernel values of shape (n_samples, n_train).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X, rows = self._stacked_rows(X, None)
        return self._stacked_scores(X, rows)


@shared_docs(markers=("kernel", "prior", "solve", "solution", "learned"))
class MEDRegressor(SwitchedKernelModel, SingleTaskAPI, RegressorMixin, RealTargets, MEDEstimator):
    """MED epsilon-insensitive regression: SVR, feature or kernel selection (JMLR Section 9).

    The dual has two multipliers per example, ``lam`` and ``lam*``, and the prediction is
    ``f(x) = sum_t (lam_t - lam*_t) sum_d s_d k_d(x, x_t) + b``.

    Parameters
    ----------
    {kernel}
    selection : {None, "features", "kernels"}, default=None
        ``None``: the MED SVR with ``kernel`` (equal to the SVR dual); ``"features"``: one
        switch per feature (``kernel`` must be ``"linear"``); ``"kernels"``: one switch per
        kernel of ``kernels``.
    kernels : list of kernels, optional
        The bank for ``selection="kernels"``, as :class:`MEDClassifier` takes it.
    {prior}
    epsilon : float >= 0, default=0.1
        Half-width of the insensitive tube.
    {solve}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (2, n_samples)
        Row 0 holds ``lam``, row 1 ``lam*``.
    intercept_ : ndarray of shape (1,)
    switch_posterior_ : ndarray of shape (n_switches,)
        Posterior mean of each switch (empty for the plain SVR).
    {learned}
    coef_ : ndarray of shape (1, n_features) or None
        Posterior-mean weights of a linear model (``None`` for other kernels).
    {solution}
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
    >>> reg = MEDRegressor(selection="features", alpha=1.0, C=10.0, epsilon=0.01).fit(X, 2 * X[:, 0])
    >>> bool(abs(reg.predict([[1.5, 0.5]])[0] - 3.0) < 0.2)
    True
    """

    _parameter_constraints = {**SELECTION_PARAMETERS, **PRIOR_PARAMETERS, **EPSILON_PARAMETER, **SOLVE_PARAMETERS}

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, selection=None, kernels=None,
                 alpha=None, rho=None, C=1.0, epsilon=0.1, method="auto", solver=None, max_iter=1000,
                 tol=1e-12, solver_options=None, warm_start=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.selection = selection
        self.kernels = kernels
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.epsilon = epsilon
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start


@shared_docs(markers=("kernel", "prior", "solve", "solution", "learned"))
class MultiTaskMEDClassifier(SwitchedKernelModel, MultiTaskAPI, MultiTaskDecisionFunction, ClassifierMixin,
                             BinaryTargets, MEDEstimator):
    """Multi-task ("meta") MED feature or kernel selection for M binary tasks (JMLR Sections 6-7).

    One switch vector is shared by all tasks; each task keeps its own weights and bias.
    The data come stacked, ``fit(X, y, tasks=...)`` (the form scikit-learn's
    ``cross_val_score``, ``GridSearchCV`` and ``Pipeline`` split within tasks), or as
    per-task lists, ``fit(Xs, ys)``; see :class:`~medmtl.med._estimator_base.MultiTaskAPI`.

    Parameters
    ----------
    selection : {"features", "kernels", None}, default="features"
        ``"features"``: one switch per feature (``kernel`` must be ``"linear"``);
        ``"kernels"``: one switch per kernel of ``kernels``; ``None``: M independent MED
        SVMs with ``kernel`` (a baseline).
    kernels : list of kernels, optional
        The bank for ``selection="kernels"``, as :class:`MEDClassifier` takes it.
    {kernel}
    {prior}
    {solve}

    Attributes
    ----------
    classes_ : ndarray of shape (2,), or list of ndarray of shape (2,)
        The two labels of every task (stacked form), or each task's two labels (per-task
        lists); the second is the positive class.
    tasks_ : ndarray of shape (n_tasks,)
        The task labels in the order of the per-task attributes (``0 .. M-1`` for lists).
    dual_coef_ : ndarray of shape (n_total,)
        The multipliers of all tasks, stacked in the order of ``tasks_``.
    intercept_ : ndarray of shape (n_tasks,)
    switch_posterior_ : ndarray of shape (n_switches,)
        Posterior mean of each shared switch (empty for ``selection=None``).
    {learned}
    coef_ : ndarray of shape (n_tasks, n_features) or None
        Per-task posterior-mean weights of a linear model (``None`` for other kernels).
    {solution}
    n_features_in_ : int
    n_tasks_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 3)) for _ in range(2)]
    >>> ys = [np.where(X[:, 0] > 0, 1, -1) for X in Xs]
    >>> clf = MultiTaskMEDClassifier(alpha=1.0, C=10.0).fit(Xs, ys)
    >>> [float(np.mean(p == y)) for p, y in zip(clf.predict(Xs), ys)]
    [1.0, 1.0]
    >>> int(np.argmax(clf.switch_posterior_))
    0

    The same data stacked, with the task of each row:

    >>> X, y, tasks = np.vstack(Xs), np.concatenate(ys), np.repeat(["a", "b"], 20)
    >>> stacked = MultiTaskMEDClassifier(alpha=1.0, C=10.0).fit(X, y, tasks=tasks)
    >>> bool(np.array_equal(stacked.decision_function(X, tasks=tasks), np.concatenate(clf.decision_function(Xs))))
    True
    """

    _parameter_constraints = {**SELECTION_PARAMETERS, **PRIOR_PARAMETERS, **SOLVE_PARAMETERS}

    def __init__(self, selection="features", kernels=None, kernel="linear", degree=3, gamma="scale", coef0=0.0,
                 alpha=None, rho=None, C=1.0, method="auto", solver=None, max_iter=1000, tol=1e-12,
                 solver_options=None, warm_start=False):
        self.selection = selection
        self.kernels = kernels
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start

    def __sklearn_tags__(self):
        return _binary_tags(super().__sklearn_tags__())


@shared_docs(markers=("kernel", "prior", "solve", "solution", "learned"))
class MultiTaskMEDRegressor(SwitchedKernelModel, MultiTaskAPI, RegressorMixin, RealTargets, MEDEstimator):
    """Multi-task MED feature or kernel selection for epsilon-insensitive regression (JMLR Section 9).

    One switch vector is shared by all tasks; each task keeps its own weights and bias.
    The data come stacked, ``fit(X, y, tasks=...)``, or as per-task lists, ``fit(Xs, ys)``.

    Parameters
    ----------
    selection : {"features", "kernels", None}, default="features"
        ``"features"``: one switch per feature (``kernel`` must be ``"linear"``);
        ``"kernels"``: one switch per kernel of ``kernels``; ``None``: M independent MED
        SVRs with ``kernel`` (a baseline).
    kernels : list of kernels, optional
        The bank for ``selection="kernels"``, as :class:`MEDClassifier` takes it.
    {kernel}
    {prior}
    epsilon : float >= 0, default=0.1
        Half-width of the insensitive tube.
    {solve}

    Attributes
    ----------
    tasks_ : ndarray of shape (n_tasks,)
        The task labels in the order of the per-task attributes (``0 .. M-1`` for lists).
    dual_coef_ : ndarray of shape (2, n_total)
        Row 0 ``lam``, row 1 ``lam*``, tasks stacked in the order of ``tasks_``.
    intercept_ : ndarray of shape (n_tasks,)
    switch_posterior_ : ndarray of shape (n_switches,)
    {learned}
    coef_ : ndarray of shape (n_tasks, n_features) or None
    {solution}
    n_features_in_ : int
    n_tasks_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(15, 3)) for _ in range(2)]
    >>> ys = [2 * X[:, 1] for X in Xs]
    >>> reg = MultiTaskMEDRegressor(alpha=1.0, C=10.0, epsilon=0.01).fit(Xs, ys)
    >>> bool(reg.score(Xs, ys) > 0.99)
    True
    """

    _parameter_constraints = {**SELECTION_PARAMETERS, **PRIOR_PARAMETERS, **EPSILON_PARAMETER, **SOLVE_PARAMETERS}

    def __init__(self, selection="features", kernels=None, kernel="linear", degree=3, gamma="scale", coef0=0.0,
                 alpha=None, rho=None, C=1.0, epsilon=0.1, method="auto", solver=None, max_iter=1000,
                 tol=1e-12, solver_options=None, warm_start=False):
        self.selection = selection
        self.kernels = kernels
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.epsilon = epsilon
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start


@shared_docs
class AdaptivePoolingClassifier(PoolingModel, MultiTaskAPI, MultiTaskDecisionFunction, ClassifierMixin, BinaryTargets,
                                MEDEstimator):
    """MED adaptive pooling (JMLR Section 8): ``f_m(x) = s_m (own model) + (shared model) + b_m``.

    Each task's own model uses ``task_scale * k`` and the model shared by all tasks
    ``shared_scale * k``; the switch ``s_m`` decides how much task ``m`` specialises.
    ``alpha = 0`` mixes own and shared models equally; a large ``alpha`` pools all tasks.
    The data come stacked, ``fit(X, y, tasks=...)``, or as per-task lists, ``fit(Xs, ys)``.

    Parameters
    ----------
    {kernel}
    shared_scale : float > 0, default=1.0
        Scale of the shared model's kernel.
    task_scale : float > 0, optional
        Scale of each task's own kernel; defaults to ``10 M`` (the paper's heuristic
        ``k_m = 10 M k``).
    {prior}
    {solve}

    Attributes
    ----------
    classes_ : ndarray of shape (2,), or list of ndarray of shape (2,)
        The two labels of every task (stacked form), or each task's two labels (per-task
        lists); the second is the positive class.
    tasks_ : ndarray of shape (n_tasks,)
        The task labels in the order of the per-task attributes (``0 .. M-1`` for lists).
    dual_coef_ : ndarray of shape (n_total,)
        The multipliers of all tasks, stacked in the order of ``tasks_``.
    intercept_ : ndarray of shape (n_tasks,)
    switch_posterior_ : ndarray of shape (n_tasks,)
        ``s_m``: the confidence that task ``m`` uses its own model.
    coef_ : ndarray of shape (n_tasks, n_features) or None
        Per-task posterior-mean weights for the linear kernel (``None`` for others).
    {solution}
    n_features_in_ : int
    n_tasks_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 2)) for _ in range(3)]
    >>> ys = [np.where(X[:, 0] + 0.1 * m * X[:, 1] > 0, 1, -1) for m, X in enumerate(Xs)]
    >>> clf = AdaptivePoolingClassifier(alpha=10.0, C=10.0).fit(Xs, ys)
    >>> clf.switch_posterior_.shape
    (3,)
    >>> bool(clf.score(Xs, ys) > 0.9)
    True
    """

    _parameter_constraints = {**POOLING_PARAMETERS, **PRIOR_PARAMETERS, **SOLVE_PARAMETERS}

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, shared_scale=1.0, task_scale=None,
                 alpha=None, rho=None, C=1.0, method="auto", solver=None, max_iter=1000, tol=1e-12,
                 solver_options=None, warm_start=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shared_scale = shared_scale
        self.task_scale = task_scale
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start

    def __sklearn_tags__(self):
        return _binary_tags(super().__sklearn_tags__())
