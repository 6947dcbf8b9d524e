"""scikit-learn style MED estimators on the one dual of :mod:`medmtl.med.dual`.

* :class:`MEDClassifier` - MED SVM (``selection=None``), feature selection, kernel selection.
* :class:`MEDRegressor` - the same for epsilon-insensitive regression.
* :class:`MultiTaskMEDClassifier`, :class:`MultiTaskMEDRegressor` - meta feature / kernel
  selection: one switch vector shared by all tasks, each task its own weights and bias.
* :class:`AdaptivePoolingClassifier` - each task mixes a switched own model with a shared one.
* :class:`TaskClassifier` - one task of a fitted multi-task classifier, as a single-task
  classifier (e.g. to calibrate each task's probabilities).

All five share one fit path (:mod:`medmtl.med._estimator_base`): a single-task estimator
is the multi-task one with M = 1. Each is composed of a model kind
(:mod:`medmtl.med._model_kinds`) and a target kind (:mod:`medmtl.med._targets`), and
declares its parameters' constraints once, in ``_parameter_constraints``, checked all at
the start of ``fit`` (:mod:`medmtl.med._parameters`, which also documents them once).
Kernels are spelt as :class:`sklearn.svm.SVC` spells them (``kernel="rbf",
gamma="scale"``, ...), with its defaults. The multi-task estimators take one stacked ``X`` with the task of each row in
``tasks`` (the form scikit-learn's model selection splits within tasks; see
:mod:`medmtl.model_selection`), or per-task lists. Kernel selection also takes the kernels
as a list of precomputed Gram matrices (``kernels="precomputed"``, MKLpy's convention).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

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

_KERNEL_LISTS_DOC = """\
    kernel_weights_ : ndarray of shape (n_kernels,)
        Only for ``selection="kernels"``: the weights of the learned kernel
        ``sum_d s_d k_d`` normalised to sum to 1, ``switch_posterior_ /
        switch_posterior_.sum()`` (non-negative; one set for the model, shared by all its
        tasks as the switches are).

    Notes
    -----
    With ``selection="kernels"`` and ``kernels="precomputed"`` the inputs are the kernels
    themselves, as MKLpy takes them: ``X`` is a list of Gram matrices, one per kernel of the
    bank, each of shape (n_samples, n_samples) at fit (the kernel values between the
    training rows; for several tasks, of all rows stacked, with ``tasks=`` giving each row's
    task) and (n_new, n_samples) at prediction (between the new and the training rows). The model is
    the one fitted on the inputs with the bank of kernels that made the matrices. The list's
    shapes are checked before anything is solved, and the caller's matrices are not changed.
"""


def _kernel_lists_doc(cls):
    """Put the description of ``kernel_weights_`` and of kernel-list inputs in place of the
    line ``{kernel_lists}`` of the class's docstring."""
    cls.__doc__ = cls.__doc__.replace("    {kernel_lists}\n", _KERNEL_LISTS_DOC)
    return cls


__all__ = [
    "MEDClassifier",
    "MEDRegressor",
    "MultiTaskMEDClassifier",
    "MultiTaskMEDRegressor",
    "AdaptivePoolingClassifier",
    "TaskClassifier",
]


@_kernel_lists_doc
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
    {kernel_lists}

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

    Kernel selection from a list of Gram matrices, one per kernel:

    >>> grams = [X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))]
    >>> mkl = MEDClassifier(selection="kernels", kernels="precomputed", C=10.0).fit(grams, y)
    >>> mkl.predict(grams).tolist(), float(mkl.kernel_weights_.sum())
    (['b', 'b', 'a', 'a'], 1.0)
    """

    _parameter_constraints = {**SELECTION_PARAMETERS, **PRIOR_PARAMETERS, **SOLVE_PARAMETERS}
    _model_kind, _target_kind = SwitchedKernels, BinaryLabels

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, selection=None, kernels=None,
                 alpha=None, rho=None, C=1.0, method="auto", solver=None, max_iter=None, tol=None,
                 solver_options=None, warm_start=False):
        self._set_init_params(locals())


@_kernel_lists_doc
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
    {kernel_lists}

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


@_kernel_lists_doc
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
    {kernel_lists}

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


@_kernel_lists_doc
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
    {kernel_lists}

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


class TaskClassifier(ClassifierMixin, BaseEstimator):
    """One task of a fitted multi-task MED classifier, as a fitted single-task classifier.

    scikit-learn's tools for one binary classifier, such as
    :class:`~sklearn.calibration.CalibratedClassifierCV` around a
    :class:`~sklearn.frozen.FrozenEstimator`, take it: its ``decision_function(X)`` is the
    multi-task model's for the rows of ``X``, all of task ``task``, and its ``classes_`` are
    that task's labels. It is fitted when ``estimator`` is; its :meth:`fit` fits nothing.

    Parameters
    ----------
    estimator : MultiTaskMEDClassifier or AdaptivePoolingClassifier
        A fitted multi-task classifier.
    task : int or str
        One of ``estimator.tasks_``.

    Examples
    --------
    Platt scaling of one task on held-out rows of it:

    >>> import numpy as np
    >>> from sklearn.calibration import CalibratedClassifierCV
    >>> from sklearn.frozen import FrozenEstimator
    >>> rng = np.random.default_rng(0)
    >>> X, tasks = rng.normal(size=(120, 3)), np.repeat(["a", "b"], 60)
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=120) > 0, 1, 0)
    >>> model = MultiTaskMEDClassifier(alpha=1.0).fit(X[::2], y[::2], tasks=tasks[::2])
    >>> held_out = (tasks == "a") & (np.arange(120) % 2 == 1)
    >>> task_a = CalibratedClassifierCV(FrozenEstimator(TaskClassifier(model, "a")), method="sigmoid")
    >>> proba = task_a.fit(X[held_out], y[held_out]).predict_proba(X[held_out])
    >>> proba.shape, bool(np.allclose(proba.sum(axis=1), 1.0))
    ((30, 2), True)
    """

    def __init__(self, estimator, task):
        self.estimator = estimator
        self.task = task

    def __sklearn_is_fitted__(self):
        check_is_fitted(self.estimator)
        return True

    def _position(self):
        """The task's place in ``estimator.tasks_``."""
        check_is_fitted(self.estimator)
        where = np.flatnonzero(np.asarray(self.estimator.tasks_) == self.task)
        if where.size != 1:
            raise ValueError(f"task {self.task!r} is not one of the fitted tasks {self.estimator.tasks_.tolist()}")
        return int(where[0])

    @property
    def classes_(self):
        """The task's two labels; the second is the positive class."""
        classes = self.estimator.classes_
        return classes[self._position()] if isinstance(classes, list) else classes

    def fit(self, X=None, y=None):
        """Nothing to fit: the view is as fitted as its estimator.

        Parameters
        ----------
        X, y : ignored

        Returns
        -------
        self
        """
        self._position()
        return self

    def _tasks(self, X):
        self._position()
        return np.full(np.shape(X)[0], self.task, dtype=np.asarray(self.estimator.tasks_).dtype)

    def decision_function(self, X):
        """The task's decision values; positive predicts ``classes_[1]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Rows of the task.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self.estimator.decision_function(X, tasks=self._tasks(X))

    def predict(self, X):
        """The task's predicted labels.

        Parameters
        ----------
        X : array-like or sparse matrix
            As for :meth:`decision_function`.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self.estimator.predict(X, tasks=self._tasks(X))
