"""The door of the MED estimators: either form of the inputs, one per-task structure.

The multi-task estimators take their inputs in two forms: per-task lists ``Xs``, ``ys``,
or one stacked ``X`` of shape (n_samples, n_features) with the task of each row in
``tasks`` (the form scikit-learn's model selection splits correctly, with ``tasks`` routed
as metadata); a single-task estimator takes the stacked form with one task. Each public
method decides the form once, here, and works on what comes out: :class:`TrainingData`
at fit, :class:`TaskInputs` after it, whose :meth:`~TaskInputs.assemble` gives the
results back in the form the inputs came in.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils.metadata_routing import _routing_enabled
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .._validation import (
    canonical_sparse,
    check_feature_names,
    check_real_values,
    check_task_lists,
    check_tasks,
    is_task_list,
    refuse_iterator,
    refuse_task_lists_from_sklearn,
    rows_of_tasks,
)
from ._kernel_spec import stack_grams, with_row_index

__all__ = ["TrainingData", "TaskInputs", "training_data", "prediction_inputs", "refuse_unreal", "owned",
           "task_rows", "refuse_unrouted_tasks"]

_STACKED_ADVICE = ("Pass the stacked form instead: X of shape (n_samples, n_features) with the task of each "
                   "row in tasks= (medmtl.model_selection.stack_tasks builds it from lists), and enable "
                   "scikit-learn's metadata routing (sklearn.set_config(enable_metadata_routing=True)) so "
                   "that its tools pass tasks on.")


def refuse_unrouted_tasks(owner):
    """Raise when scikit-learn's model selection hands ``tasks`` to ``fit`` with its
    metadata routing off.

    Without routing, ``GridSearchCV.fit(X, y, tasks=...)`` and ``cross_val_score(...,
    params={"tasks": ...})`` split ``tasks`` with the rows and pass it to ``fit``, but call
    the scorer without it: every score of a model of several tasks fails, is set to NaN
    with a warning, and a "best" model is still chosen. Failing every fit instead makes
    scikit-learn raise, with this message.
    """
    if _routing_enabled():
        return
    frame = sys._getframe(1)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module.startswith("sklearn.model_selection"):
            raise ValueError(
                f"{owner}.fit got tasks from scikit-learn's model selection ({module}) with metadata routing "
                "off: scikit-learn would pass tasks to fit but not to the scoring, and every score would be "
                "NaN. Either use the cross-validated estimators of medmtl.med (MultiTaskMEDClassifierCV, "
                "MultiTaskMEDRegressorCV, AdaptivePoolingClassifierCV), which choose C and alpha within "
                "tasks, or enable scikit-learn's metadata routing (sklearn.set_config("
                "enable_metadata_routing=True), or within `with sklearn.config_context("
                "enable_metadata_routing=True):`) and pass params={'tasks': tasks} (see "
                "medmtl.model_selection)")
        frame = frame.f_back


def refuse_unreal(X, name):
    """Raise before scikit-learn's conversion to float reads ``X`` as something it is not.

    ``validate_data`` converts dates to nanoseconds and text to numbers without a word, and
    says "Complex data not supported" without naming the argument; and it cannot tell a
    generator from data. Ragged rows are left to its own message.
    """
    refuse_iterator(X, name)
    if sp.issparse(X):
        check_real_values(X, name)
        return
    try:
        A = np.asarray(X)
    except (ValueError, TypeError):
        return
    check_real_values(A, name)


def owned(X):
    """A copy of dense or sparse ``X`` in its own memory (dense layout kept)."""
    return X.copy() if sp.issparse(X) else np.array(X, order="K")


def task_rows(X, rows):
    """The rows ``rows`` of ``X`` (``X`` itself when they are all of its rows, in order)."""
    if rows.size == X.shape[0] and np.array_equal(rows, np.arange(X.shape[0])):
        return X
    return X[rows]


@dataclass(frozen=True)
class TrainingData:
    """Checked training data, one entry per task, whichever form they came in.

    Attributes
    ----------
    Xs : list of {ndarray, CSR matrix}
        Each task's inputs (for ``kernel="precomputed"``, Gram rows with their column).
    targets : list of ndarray
        Each task's encoded targets (``+-1`` signs or reals).
    labels : ndarray of shape (n_tasks,)
        The task labels (``0 .. M-1`` for lists).
    target : TargetKind
        The target kind holding what decoding needs.
    weights : list of ndarray or None
        Each task's sample weights (``None``: every example weighs 1).
    """

    Xs: list
    targets: list
    labels: np.ndarray
    target: object
    weights: list = None


def training_data(estimator, X, y, tasks, *, target_kind, precomputed, lists, sample_weight=None,
                  gram_list=False):
    """The door at fit: ``X``, ``y`` (and ``tasks``, ``sample_weight``) checked into
    :class:`TrainingData`.

    Parameters
    ----------
    estimator : MED estimator
        Gets ``n_features_in_`` and ``feature_names_in_``, as scikit-learn's
        ``validate_data`` sets them.
    X, y, tasks
        As the estimator's ``fit`` takes them.
    target_kind : type of TargetKind
    precomputed : bool
        ``X`` holds kernel values (``kernel="precomputed"``).
    lists : bool
        Whether the estimator takes per-task lists (the multi-task estimators).
    sample_weight : array-like of shape (n_samples,), or list of them, optional
        A weight >= 0 per example (per-task lists: one array per task).
    gram_list : bool, default=False
        ``X`` is a list of Gram matrices, one per kernel (``kernels="precomputed"``), of all
        rows stacked; they are checked and put side by side (:func:`stack_grams`) first.
    """
    if gram_list:
        X = stack_grams(X)
    elif lists and is_task_list(X):
        Xs = check_lists(estimator, "fit", X, tasks, y)
        estimator.n_features_in_ = Xs[0].shape[1]
        target, targets = target_kind.encode_lists(Xs, y)
        weights = None if sample_weight is None else _list_weights(sample_weight, Xs)
        if precomputed:
            Xs = _indexed_grams(Xs)
        weights = _checked_weights(weights, targets, np.arange(len(Xs)), target_kind.regression)
        return TrainingData(Xs, targets, np.arange(len(Xs)), target, weights)
    refuse_unreal(X, "X")
    target_kind.refuse_raw(y)
    X, y = validate_data(estimator, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=target_kind.regression)
    if sp.issparse(X):
        X = canonical_sparse(X)
    labels, rows = check_tasks(tasks, X.shape[0])
    target, targets = target_kind.encode_stacked(y, rows, labels)
    if precomputed and X.shape[0] != X.shape[1]:
        raise ValueError(f"kernel='precomputed' needs the square Gram matrix of the training examples; "
                         f"X has shape {X.shape}")
    if precomputed or gram_list:
        X = with_row_index(X, np.arange(X.shape[0]))
    weights = None
    if sample_weight is not None:
        refuse_iterator(sample_weight, "sample_weight")
        w = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        weights = [w[r] for r in rows]
    weights = _checked_weights(weights, targets, labels, target_kind.regression)
    return TrainingData([task_rows(X, r) for r in rows], targets, labels, target, weights)


def _list_weights(sample_weight, Xs):
    """Per-task lists of sample weights, each checked against its task's inputs."""
    if not isinstance(sample_weight, (list, tuple)) or len(sample_weight) != len(Xs):
        raise ValueError(f"with per-task lists, sample_weight must be a list of {len(Xs)} arrays, one per task")
    return [_check_sample_weight(w, X, ensure_non_negative=True) for w, X in zip(sample_weight, Xs)]


def _checked_weights(weights, targets, labels, regression):
    """``weights`` unless a task has no example of positive weight (it would have no model),
    or, for a classifier, positive weight on one class only."""
    if weights is None:
        return None
    for label, w, t in zip(labels.tolist(), weights, targets):
        if not np.any(w > 0):
            raise ValueError(f"sample_weight is zero for every example of task {label!r}; a task needs "
                             "examples of positive weight")
        if not regression and np.unique(t[w > 0]).size < 2:
            raise ValueError(f"sample_weight is zero for every example of one class of task {label!r}; every "
                             "task needs examples of both classes with positive weight")
    return weights


def _indexed_grams(Xs):
    """Per-task rows of the training Gram matrix, each with its column (tasks stacked)."""
    n = sum(X.shape[0] for X in Xs)
    starts = np.cumsum([0] + [X.shape[0] for X in Xs])
    for m, X in enumerate(Xs):
        if X.shape[1] != n:
            raise ValueError(f"kernel='precomputed': Xs[{m}] must hold the kernel values against all "
                             f"{n} training examples (tasks stacked); it has {X.shape[1]} columns")
    return [with_row_index(X, np.arange(a, a + X.shape[0])) for X, a in zip(Xs, starts)]


def check_lists(estimator, method, Xs, tasks, ys=None):
    """Checked per-task inputs; at fit (``ys`` given) their column names become
    ``feature_names_in_``, after fit they are checked against it."""
    refuse_task_lists_from_sklearn(type(estimator).__name__, method, _STACKED_ADVICE)
    if tasks is not None:
        raise ValueError("tasks= goes with one stacked X; per-task lists give each task's rows "
                         "in their own entry")
    if ys is None:
        check_is_fitted(estimator)
        checked = check_task_lists(Xs, n_features=estimator.n_features_in_, n_tasks=estimator.n_tasks_)
    else:
        checked = check_task_lists(Xs, ys)
    check_feature_names(estimator, Xs, reset=ys is not None)
    return checked


class TaskInputs:
    """Inputs of a fitted estimator's method, one entry per fitted task.

    Parameters
    ----------
    Xs : list
        Each fitted task's inputs; ``None`` for a task none of whose rows a stacked ``X``
        holds.
    rows : list of ndarray of int, optional
        Stacked form: each task's rows of ``X``. ``None``: the inputs came as lists.
    n_samples : int, optional
        Stacked form: the number of rows of ``X``.
    """

    def __init__(self, Xs, rows=None, n_samples=None):
        self.Xs, self.rows, self.n_samples = Xs, rows, n_samples

    def present(self):
        """``(m, X_m)`` for every task with inputs."""
        return [(m, X) for m, X in enumerate(self.Xs) if X is not None]

    def assemble(self, values):
        """Per-task results in the form the inputs came in.

        Parameters
        ----------
        values : list
            One array per task of :meth:`present`, in its order.

        Returns
        -------
        list of ndarray, one per task (lists), or ndarray of shape (n_samples,) (stacked)
        """
        if self.rows is None:
            return list(values)
        rows = [self.rows[m] for m, _ in self.present()]
        out = np.empty(self.n_samples, dtype=np.result_type(*values) if values else float)
        for value, r in zip(values, rows):
            out[r] = value
        return out

    def true_targets(self, y, check):
        """Each present task's true targets, checked by ``check(y, n_samples, name)``."""
        if self.rows is None:
            refuse_iterator(y, "y")
            if isinstance(y, str) or not hasattr(y, "__len__"):
                raise TypeError(f"y must be a list with one array of targets per task, as X is; got {type(y).__name__}")
            if len(y) != len(self.Xs):
                raise ValueError(f"X has {len(self.Xs)} tasks but y has {len(y)}")
            return [check(y[m], X.shape[0], f"y[{m}]") for m, X in self.present()]
        y = check(y, self.n_samples, "y")
        return [y[self.rows[m]] for m, _ in self.present()]


def prediction_inputs(estimator, method, X, tasks, *, lists, grams=None):
    """The door after fit: ``X`` (and ``tasks``) checked into :class:`TaskInputs`.

    Parameters
    ----------
    estimator : fitted MED estimator
    method : str
        The public method called (for messages).
    X, tasks
        As the method takes them.
    lists : bool
        Whether the estimator takes per-task lists.
    grams : tuple of int, optional
        ``(n_kernels, n_train)`` of a model fitted on a list of Gram matrices
        (``kernels="precomputed"``): ``X`` is then such a list, against the training rows.
    """
    if grams is not None:
        check_is_fitted(estimator)
        X = stack_grams(X, n_train=grams[1], n_kernels=grams[0])
    elif lists and is_task_list(X):
        return TaskInputs(check_lists(estimator, method, X, tasks))
    check_is_fitted(estimator)
    refuse_unreal(X, "X")
    X = validate_data(estimator, X, accept_sparse="csr", dtype=np.float64, reset=False)
    if sp.issparse(X):
        X = canonical_sparse(X)
    rows = rows_of_tasks(estimator._task_labels, tasks, X.shape[0], type(estimator).__name__)
    return TaskInputs([task_rows(X, r) if r.size else None for r in rows], rows, X.shape[0])
