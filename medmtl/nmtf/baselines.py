"""The supervised baselines of the MTS3FLC paper: single-task and pooled logistic regression.

Thin wrappers on scikit-learn's ``LogisticRegression`` (L2 penalty) that take per-task lists,
as the NMTF estimators do; documents are l2-normalised (on a copy) before fitting. The
default ``C=100`` is a weak penalty, close to the paper's (Minka's) logistic regression and
the same as the one that starts the memberships of MTS3FLC. The Table III experiments use
the ``C`` that ``medmtl reproduce mts3flc-select`` picks on newsgroups outside the evaluated
problems.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted

from medmtl._validation import check_labels, check_scalar_positive, check_two_classes
from medmtl.nmtf.init import row_normalized
from medmtl.nmtf.mts3flc import check_documents, check_task_list

__all__ = ["SingleTaskLogisticRegression", "PooledLogisticRegression"]


def _check_lists(Xs, ys, owner):
    check_task_list(Xs, "Xs", owner, "fit")
    if len(Xs) == 0:
        raise ValueError("Xs is empty; need at least one task")
    if ys is None or len(ys) != len(Xs):
        raise ValueError(f"Xs has {len(Xs)} tasks but ys has {None if ys is None else len(ys)}")
    out = []
    for i, (X, y) in enumerate(zip(Xs, ys)):
        X = check_documents(X, f"Xs[{i}]", out[0][0].shape[1] if out else None)
        out.append((row_normalized(X, "l2", copy=False), check_labels(y, X.shape[0], f"ys[{i}]")))
    return out


class SingleTaskLogisticRegression(BaseEstimator):
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

    def __init__(self, C=100.0):
        self.C = C

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
        check_scalar_positive(self.C, "C")
        data = _check_lists(Xs, ys, type(self).__name__)
        self.models_ = []
        for i, (X, y) in enumerate(data):
            check_two_classes(y, "ys", task=i)
            self.models_.append(LogisticRegression(C=self.C, max_iter=1000).fit(X, y))
        self.n_tasks_ = len(data)
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
        check_is_fitted(self, "models_")
        check_task_list(Xs, "Xs", type(self).__name__, "predict")
        if len(Xs) != self.n_tasks_:
            raise ValueError(f"expected {self.n_tasks_} tasks, got {len(Xs)}")
        return [m.predict(row_normalized(check_documents(X, f"Xs[{i}]", m.n_features_in_), "l2", copy=False))
                for i, (m, X) in enumerate(zip(self.models_, Xs))]


class PooledLogisticRegression(BaseEstimator):
    """One L2 logistic regression on all tasks' documents pooled (the paper's Pooling LG).

    Parameters
    ----------
    C : float, default=100.0
        Inverse strength of the L2 penalty, as in scikit-learn's ``LogisticRegression``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1., 0.], [0.9, 0.1], [0., 1.], [0.1, 0.9]]); y = np.array([1, 1, -1, -1])
    >>> PooledLogisticRegression().fit([X[:2], X[2:]], [y[:2], y[2:]]).predict([X])[0].tolist()
    [1, 1, -1, -1]
    """

    def __init__(self, C=100.0):
        self.C = C

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
        check_scalar_positive(self.C, "C")
        data = _check_lists(Xs, ys, type(self).__name__)
        y = np.concatenate([y for _, y in data])
        check_two_classes(y, "pooled ys")
        self.model_ = LogisticRegression(C=self.C, max_iter=1000).fit(
            sp.vstack([X for X, _ in data], format="csr"), y)
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
        check_is_fitted(self, "model_")
        check_task_list(Xs, "Xs", type(self).__name__, "predict")
        return [self.model_.predict(row_normalized(check_documents(X, f"Xs[{i}]", self.model_.n_features_in_), "l2",
                                                   copy=False))
                for i, X in enumerate(Xs)]
