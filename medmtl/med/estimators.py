"""scikit-learn style MED estimators on the one dual of :mod:`medmtl.med.dual`.

* :class:`MEDClassifier` - MED SVM (``selection=None``), feature selection, kernel selection.
* :class:`MEDRegressor` - the same for epsilon-insensitive regression.
* :class:`MultiTaskMEDClassifier`, :class:`MultiTaskMEDRegressor` - meta feature / kernel
  selection: one switch vector shared by all tasks, each task its own weights and bias.
* :class:`AdaptivePoolingClassifier` - each task mixes a switched own model with a shared one.

All five share one fit path (:mod:`medmtl.med._estimator_base`): a single-task estimator
is the multi-task one with M = 1. Each is composed of a model kind
(:mod:`medmtl.med._model_kinds`) and a target kind (:mod:`medmtl.med._targets`), and
declares its parameters' constraints once, in ``_parameter_constraints``, checked all at
the start of ``fit`` (:mod:`medmtl.med._parameters`, which also documents them once).
Kernels are spelt as :class:`sklearn.svm.SVC` spells them (``kernel="rbf",
gamma="scale"``, ...), with its defaults. The multi-task estimators take one stacked ``X`` with the task of each row in
``tasks`` (the form scikit-learn's model selection splits within tasks; see
:mod:`medmtl.model_selection`), or per-task lists.
"""

from __future__ import annotations

from sklearn.base import RegressorMixin

from ._estimator_base import BinaryClassifierMixin, MEDEstimator, MultiTaskMethods, SingleTaskMethods
from ._model_kinds import AdaptivePooling, SwitchedKernels
from ._parameters import (
    EPSILON_PARAMETER,
    POOLING_PARAMETERS,
    PRIOR_PARAMETERS,
    SELECTION_PARAMETERS,
    SOLVE_PARAMETERS,
    shared_docs,
)
from ._targets import BinaryLabels, RealTargets

__all__ = [
    "MEDClassifier",
    "MEDRegressor",
    "MultiTaskMEDClassifier",
    "MultiTaskMEDRegressor",
    "AdaptivePoolingClassifier",
]


@shared_docs
class MEDClassifier(SingleTaskMethods, BinaryClassifierMixin, MEDEstimator):
    """Binary MED classifier: SVM, feature selection or kernel selection (JMLR Sections 5-7).

    {parameters}

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[0]`` is mapped to -1 and ``classes_[1]`` to +1.
    dual_coef_ : ndarray of shape (n_samples,)
        The multipliers ``lam`` (not multiplied by the labels).
    {switched}

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
    _model_kind, _target_kind = SwitchedKernels, BinaryLabels

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, selection=None, kernels=None,
                 alpha=None, rho=None, C=1.0, method="auto", solver=None, max_iter=None, tol=None,
                 solver_options=None, warm_start=False):
        self._set_init_params(locals())


@shared_docs
class MEDRegressor(SingleTaskMethods, RegressorMixin, MEDEstimator):
    """MED epsilon-insensitive regression: SVR, feature or kernel selection (JMLR Section 9).

    The dual has two multipliers per example, ``lam`` and ``lam*``, and the prediction is
    ``f(x) = sum_t (lam_t - lam*_t) sum_d s_d k_d(x, x_t) + b``.

    {parameters}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (2, n_samples)
        Row 0 holds ``lam``, row 1 ``lam*``.
    {switched}

    Examples
    --------
    Feature selection finds the one input the targets depend on:

    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
    >>> reg = MEDRegressor(selection="features", alpha=1.0, C=10.0, epsilon=0.01).fit(X, 2 * X[:, 0])
    >>> bool(abs(reg.predict([[1.5, 0.5]])[0] - 3.0) < 0.2)
    True
    """

    _parameter_constraints = {**SELECTION_PARAMETERS, **PRIOR_PARAMETERS, **EPSILON_PARAMETER, **SOLVE_PARAMETERS}
    _model_kind, _target_kind = SwitchedKernels, RealTargets

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, selection=None, kernels=None,
                 alpha=None, rho=None, C=1.0, epsilon=0.1, method="auto", solver=None, max_iter=None,
                 tol=None, solver_options=None, warm_start=False):
        self._set_init_params(locals())


@shared_docs
class MultiTaskMEDClassifier(MultiTaskMethods, BinaryClassifierMixin, MEDEstimator):
    """Multi-task ("meta") MED feature or kernel selection for M binary tasks (JMLR Sections 6-7).

    One switch vector is shared by all tasks; each task keeps its own weights and bias.
    The data come stacked, ``fit(X, y, tasks=...)`` (the form scikit-learn's
    ``cross_val_score``, ``GridSearchCV`` and ``Pipeline`` split within tasks), or as
    per-task lists, ``fit(Xs, ys)``; see :class:`~medmtl.med._estimator_base.MultiTaskMethods`.
    ``selection=None`` fits M independent MED SVMs (a baseline).

    {parameters}

    Attributes
    ----------
    {task_classes}
    {switched_tasks}
    {tasks}

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
    _model_kind, _target_kind = SwitchedKernels, BinaryLabels

    def __init__(self, selection="features", kernels=None, kernel="linear", degree=3, gamma="scale", coef0=0.0,
                 alpha=None, rho=None, C=1.0, method="auto", solver=None, max_iter=None, tol=None,
                 solver_options=None, warm_start=False):
        self._set_init_params(locals())


@shared_docs
class MultiTaskMEDRegressor(MultiTaskMethods, RegressorMixin, MEDEstimator):
    """Multi-task MED feature or kernel selection for epsilon-insensitive regression (JMLR Section 9).

    One switch vector is shared by all tasks; each task keeps its own weights and bias.
    The data come stacked, ``fit(X, y, tasks=...)``, or as per-task lists, ``fit(Xs, ys)``.
    ``selection=None`` fits M independent MED SVRs (a baseline).

    {parameters}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (2, n_total)
        Row 0 ``lam``, row 1 ``lam*``, tasks stacked in the order of ``tasks_``.
    {switched_tasks}
    {tasks}

    Examples
    --------
    Two tasks whose targets depend on the second input alone:

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(15, 3)) for _ in range(2)]
    >>> ys = [2 * X[:, 1] for X in Xs]
    >>> reg = MultiTaskMEDRegressor(alpha=1.0, C=10.0, epsilon=0.01).fit(Xs, ys)
    >>> bool(reg.score(Xs, ys) > 0.99)
    True
    """

    _parameter_constraints = {**SELECTION_PARAMETERS, **PRIOR_PARAMETERS, **EPSILON_PARAMETER, **SOLVE_PARAMETERS}
    _model_kind, _target_kind = SwitchedKernels, RealTargets

    def __init__(self, selection="features", kernels=None, kernel="linear", degree=3, gamma="scale", coef0=0.0,
                 alpha=None, rho=None, C=1.0, epsilon=0.1, method="auto", solver=None, max_iter=None,
                 tol=None, solver_options=None, warm_start=False):
        self._set_init_params(locals())


@shared_docs
class AdaptivePoolingClassifier(MultiTaskMethods, BinaryClassifierMixin, MEDEstimator):
    """MED adaptive pooling (JMLR Section 8): ``f_m(x) = s_m (own model) + (shared model) + b_m``.

    Each task's own model uses ``task_scale * k`` and the model shared by all tasks
    ``shared_scale * k``; the switch ``s_m`` decides how much task ``m`` specialises.
    ``alpha = 0`` mixes own and shared models equally; a large ``alpha`` pools all tasks.
    The data come stacked, ``fit(X, y, tasks=...)``, or as per-task lists, ``fit(Xs, ys)``.

    {parameters}

    Attributes
    ----------
    {task_classes}
    intercept_ : ndarray of shape (n_tasks,)
    switch_posterior_ : ndarray of shape (n_tasks,)
        ``s_m``: the confidence that task ``m`` uses its own model.
    coef_ : ndarray of shape (n_tasks, n_features) or None
        Per-task posterior-mean weights for the linear kernel (``None`` for others).
    {tasks}

    Examples
    --------
    Three tasks whose boundaries differ a little, pooled by a large ``alpha``:

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
    _model_kind, _target_kind = AdaptivePooling, BinaryLabels

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, shared_scale=1.0, task_scale=None,
                 alpha=None, rho=None, C=1.0, method="auto", solver=None, max_iter=None, tol=None,
                 solver_options=None, warm_start=False):
        self._set_init_params(locals())
