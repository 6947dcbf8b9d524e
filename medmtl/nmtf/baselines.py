"""The supervised baselines of the MTS3FLC paper: single-task and pooled logistic regression.

Thin wrappers on scikit-learn's ``LogisticRegression`` (L2 penalty) that take per-task lists,
as the NMTF estimators do; documents are l2-normalised (on a copy) before fitting. The
default ``C=100`` is a weak penalty, close to the paper's (Minka's) logistic regression and
the same as the one that starts the memberships of MTS3FLC. The Table III experiments use
the ``C`` that ``medmtl reproduce mts3flc-select`` picks on newsgroups outside the evaluated
problems.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted

from medmtl._validation import Interval, check_feature_names, check_labels, check_two_classes, validate_params
from medmtl.nmtf.init import row_normalized
from medmtl.nmtf.mts3flc import _check_label_list, check_documents, check_task_list

__all__ = ["SingleTaskLogisticRegression", "PooledLogisticRegression"]


def _fit_lists(estimator, Xs, ys):
    """The checked hyper-parameters and (documents, labels) of each task, at fit."""
    owner = type(estimator).__name__
    params = validate_params(estimator.get_params(deep=False), estimator._parameter_constraints, owner)
    check_task_list(Xs, "Xs", owner, "fit")
    if len(Xs) == 0:
        raise ValueError("Xs is empty; need at least one task")
    ys = _check_label_list(ys, len(Xs), what="Xs")
    out = []
    for i, (X, y) in enumerate(zip(Xs, ys)):
        X = check_documents(X, f"Xs[{i}]", out[0][0].shape[1] if out else None)
        out.append((row_normalized(X, "l2", copy=False), check_labels(y, X.shape[0], f"ys[{i}]")))
    check_feature_names(estimator, Xs, reset=True)
    return params, out


def _predict_lists(estimator, Xs, n_words, n_tasks=None):
    """Each task's checked documents, l2-normalised, at prediction (``n_tasks`` of them if given)."""
    check_task_list(Xs, "Xs", type(estimator).__name__, "predict")
    if n_tasks is not None and len(Xs) != n_tasks:
        raise ValueError(f"expected {n_tasks} tasks, got {len(Xs)}")
    out = [row_normalized(check_documents(X, f"Xs[{i}]", n_words), "l2", copy=False) for i, X in enumerate(Xs)]
    check_feature_names(estimator, Xs, reset=False)
    return out


class _TaskListLogisticRegression(BaseEstimator):
    """What both baselines share: the parameter ``C``, per-task lists at the door, and the
    checks; a subclass fits its logistic regression(s) in ``_fit`` and predicts in ``_predict``."""

    _parameter_constraints = {"C": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, C=100.0):
        self.C = C

    def _logistic(self, C):
        return LogisticRegression(C=C, max_iter=1000)

    def fit(self, Xs, ys):
        """Fit on labelled documents, one matrix per task.

        Parameters
        ----------
        Xs : list of {sparse matrix, ndarray} of shape (n_i, n_words)
            Each task's documents (rows), nonnegative word weights.
        ys : list of array-like of shape (n_i,)
            Each task's labels.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        params, data = _fit_lists(self, Xs, ys)
        self._fit(params["C"], data)
        return self

    def predict(self, Xs):
        """Labels of new documents.

        Parameters
        ----------
        Xs : list of {sparse matrix, ndarray} of shape (n_i, n_words)
            Each task's documents (rows).

        Returns
        -------
        list of ndarray of shape (n_i,)
        """
        return self._predict(Xs)


class SingleTaskLogisticRegression(_TaskListLogisticRegression):
    """One L2 logistic regression per task (the paper's STL LG).

    Parameters
    ----------
    C : float, default=100.0
        Inverse strength of the L2 penalty, as in scikit-learn's ``LogisticRegression``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1., 0.], [0.9, 0.1], [0., 1.], [0.1, 0.9]]); y = np.array([1, 1, -1, -1])
    >>> SingleTaskLogisticRegression().fit([X, X], [y, -y]).predict([X, X])[1].tolist()
    [-1, -1, 1, 1]
    """

    def _fit(self, C, data):
        self.models_ = []
        for i, (X, y) in enumerate(data):
            check_two_classes(y, "ys", task=i)
            self.models_.append(self._logistic(C).fit(X, y))
        self.n_tasks_ = len(data)

    def _predict(self, Xs):
        check_is_fitted(self, "models_")
        Xs = _predict_lists(self, Xs, self.models_[0].n_features_in_, self.n_tasks_)
        return [m.predict(X) for m, X in zip(self.models_, Xs)]


class PooledLogisticRegression(_TaskListLogisticRegression):
    """One L2 logistic regression on all tasks' documents pooled (the paper's Pooling LG).

    Parameters
    ----------
    C : float, default=100.0
        As for :class:`SingleTaskLogisticRegression`.

    Examples
    --------
    >>> import numpy as np
    >>> X, y = np.array([[1., 0.], [0.9, 0.1], [0., 1.], [0.1, 0.9]]), np.array([1, 1, -1, -1])
    >>> PooledLogisticRegression().fit([X[:2], X[2:]], [y[:2], y[2:]]).predict([X])[0].tolist()
    [1, 1, -1, -1]
    """

    def _fit(self, C, data):
        y = np.concatenate([y for _, y in data])
        check_two_classes(y, "pooled ys")
        self.model_ = self._logistic(C).fit(sp.vstack([X for X, _ in data], format="csr"), y)

    def _predict(self, Xs):
        check_is_fitted(self, "model_")
        return [self.model_.predict(X) for X in _predict_lists(self, Xs, self.model_.n_features_in_)]
