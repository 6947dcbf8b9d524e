"""scikit-learn model selection for the multi-task estimators.

A multi-task estimator's examples belong to tasks, and a fair split holds out part of every
task's examples, never whole tasks. In scikit-learn's tools this takes the *stacked form*:
one ``X`` of shape (n_samples, n_features), ``y`` of shape (n_samples,), and the task of
each row in ``tasks``, passed as metadata. scikit-learn's metadata routing
(``sklearn.set_config(enable_metadata_routing=True)``) then hands ``tasks`` to each part:

* the estimators request ``tasks`` in ``fit``, ``predict``, ``decision_function`` and
  ``score`` (by default), so ``cross_val_score``, ``GridSearchCV`` and ``Pipeline`` pass
  each fold's share of it on;
* :class:`TaskStratifiedKFold` splits every task's examples into folds, stratified by
  class within the task (it reads ``tasks`` as its ``groups``);
* :func:`make_task_scorer` scores each task's rows apart and averages over the tasks, as
  the papers do (:data:`mean_auc_scorer` is the JMLR paper's mean AUC).

:func:`stack_tasks` builds the stacked form from per-task lists. The lists themselves stay
the form for plain Python use; scikit-learn would index them as samples (splitting tasks),
so the estimators and :class:`TaskStratifiedKFold` refuse them inside scikit-learn.

Without routing, scikit-learn splits ``tasks`` with the rows and passes it to ``fit`` but
not to the scoring, so every score of a multi-task model would be NaN; the multi-task
estimators therefore refuse ``tasks`` from scikit-learn's model selection when routing is
off, and ``GridSearchCV`` and ``cross_val_score`` raise with that message. The
cross-validated estimators of :mod:`medmtl.med.cv` (:class:`~medmtl.med.MultiTaskMEDClassifierCV`
and the others) need no routing: they take ``tasks`` in ``fit`` and do all of the above
themselves, walking a warm-started path over ``C`` and ``alpha`` on each fold.

Examples
--------
>>> import numpy as np, sklearn
>>> from sklearn.model_selection import cross_val_score
>>> from medmtl.med import MultiTaskMEDClassifier
>>> rng = np.random.default_rng(0)
>>> Xs = [rng.normal(size=(30, 4)) for _ in range(3)]
>>> ys = [np.where(X[:, m] > 0, 1, -1) for m, X in enumerate(Xs)]
>>> X, y, tasks = stack_tasks(Xs, ys)
>>> with sklearn.config_context(enable_metadata_routing=True):
...     scores = cross_val_score(MultiTaskMEDClassifier(alpha=1.0, C=10.0), X, y, params={"tasks": tasks},
...                              cv=TaskStratifiedKFold(3), scoring=mean_auc_scorer)
>>> scores.shape, bool(scores.min() > 0.9)
((3,), True)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import BaseCrossValidator, KFold, StratifiedKFold
from sklearn.utils import check_random_state
from sklearn.utils.metadata_routing import MetadataRequest
from sklearn.utils.multiclass import type_of_target

from medmtl._validation import check_tasks, is_task_list

__all__ = ["stack_tasks", "TaskStratifiedKFold", "TaskScorer", "make_task_scorer", "mean_auc_scorer"]


def stack_tasks(Xs, ys=None, task_labels=None):
    """The stacked form of per-task lists: one ``X``, one ``y``, and the task of each row.

    Parameters
    ----------
    Xs : list of {array-like, sparse matrix}, each of shape (n_m, n_features)
    ys : list of array-like, each of shape (n_m,), optional
    task_labels : sequence of length n_tasks, optional
        The label of each task; ``0 .. M-1`` by default.

    Returns
    -------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        The tasks' rows in the order given (sparse if any task is).
    y : ndarray of shape (n_samples,) or None
    tasks : ndarray of shape (n_samples,)

    Examples
    --------
    >>> X, y, tasks = stack_tasks([np.ones((2, 3)), np.zeros((1, 3))], [[1, -1], [1]], ["a", "b"])
    >>> X.shape, y.tolist(), tasks.tolist()
    ((3, 3), [1, -1, 1], ['a', 'a', 'b'])
    """
    if not is_task_list(Xs) or len(Xs) == 0:
        raise TypeError("Xs must be a non-empty list with one (n_m, n_features) matrix per task")
    labels = np.arange(len(Xs)) if task_labels is None else np.asarray(task_labels)
    if labels.shape != (len(Xs),):
        raise ValueError(f"task_labels must hold one label per task ({len(Xs)}); got shape {labels.shape}")
    if ys is not None and len(ys) != len(Xs):
        raise ValueError(f"Xs has {len(Xs)} tasks but ys has {len(ys)}")
    sizes = [X.shape[0] if sp.issparse(X) else len(X) for X in Xs]
    if any(sp.issparse(X) for X in Xs):
        X = sp.vstack([sp.csr_matrix(X) for X in Xs], format="csr")
    else:
        X = np.vstack([np.asarray(X) for X in Xs])
    y = None if ys is None else np.concatenate([np.asarray(y) for y in ys])
    return X, y, np.repeat(labels, sizes)


class TaskStratifiedKFold(BaseCrossValidator):
    """K folds of every task's examples, stratified by class within each task.

    Fold ``k``'s test set is the ``k``-th of :class:`~sklearn.model_selection.StratifiedKFold`
    within every task (:class:`~sklearn.model_selection.KFold` for continuous targets), so
    each task is in every training set and every test set, with its classes in proportion.
    The task of each sample comes as ``groups``; with metadata routing enabled, the
    ``tasks`` passed to ``cross_val_score`` or ``GridSearchCV.fit`` are taken as ``groups``.

    Parameters
    ----------
    n_splits : int >= 2, default=5
    shuffle : bool, default=False
        Shuffle each task's examples before splitting it.
    random_state : int, RandomState or None
        Seeds the shuffles (used only with ``shuffle=True``).

    Examples
    --------
    >>> X, y = np.zeros((8, 1)), np.array([0, 1, 0, 1, 0, 1, 0, 1])
    >>> tasks = np.array(["a"] * 4 + ["b"] * 4)
    >>> [test.tolist() for _, test in TaskStratifiedKFold(2).split(X, y, groups=tasks)]
    [[0, 1, 4, 5], [2, 3, 6, 7]]
    """

    __metadata_request__split = {"groups": "tasks"}

    def __init__(self, n_splits=5, *, shuffle=False, random_state=None):
        if not isinstance(n_splits, (int, np.integer)) or isinstance(n_splits, bool) or n_splits < 2:
            raise ValueError(f"n_splits must be an integer >= 2; got {n_splits!r}")
        if not isinstance(shuffle, (bool, np.bool_)):
            raise TypeError(f"shuffle must be True or False; got {shuffle!r}")
        self.n_splits = int(n_splits)
        self.shuffle = shuffle
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None):
        """The number of folds, ``n_splits``.

        Parameters
        ----------
        X, y, groups : object
            Ignored; present for scikit-learn's splitter interface.

        Returns
        -------
        int
        """
        return self.n_splits

    def split(self, X, y=None, groups=None):
        """Train and test indices of each fold.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The stacked inputs (only their number is used).
        y : array-like of shape (n_samples,), optional
            Class labels to stratify by (continuous targets are not stratified).
        groups : array-like of shape (n_samples,)
            The task of each sample.

        Yields
        ------
        train, test : ndarray of int
        """
        if is_task_list(X):
            raise TypeError("TaskStratifiedKFold splits the stacked form: one X of shape (n_samples, n_features) "
                            "with the task of each row as groups (medmtl.model_selection.stack_tasks builds it "
                            "from per-task lists)")
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        if groups is None:
            raise ValueError("TaskStratifiedKFold needs the task of each sample: split(X, y, groups=tasks); in "
                             "scikit-learn's tools pass params={'tasks': tasks} with metadata routing enabled")
        labels, rows = check_tasks(groups, n, name="groups (the tasks)")
        y = None if y is None else np.asarray(y)
        stratify = y is not None and type_of_target(y) in ("binary", "multiclass")
        rng = check_random_state(self.random_state) if self.shuffle else None
        tests = [[] for _ in range(self.n_splits)]
        for label, r in zip(labels.tolist(), rows):
            if r.size < self.n_splits:
                raise ValueError(f"task {label!r} has {r.size} samples; cannot split it into {self.n_splits} folds")
            within = (StratifiedKFold if stratify else KFold)(self.n_splits, shuffle=self.shuffle, random_state=rng)
            for k, (_, test) in enumerate(within.split(np.zeros((r.size, 1)), y[r] if stratify else None)):
                tests[k].append(r[test])
        for parts in tests:
            test = np.sort(np.concatenate(parts))
            yield np.setdiff1d(np.arange(n), test, assume_unique=True), test

    def _iter_test_indices(self, X=None, y=None, groups=None):  # pragma: no cover - split is overridden
        for _, test in self.split(X, y, groups):
            yield test


class TaskScorer:
    """A scorer that scores each task's rows apart and averages over the tasks.

    Called as ``scorer(estimator, X, y, tasks=None)``, as scikit-learn calls scorers; it
    requests ``tasks`` as metadata, so that ``cross_val_score`` and ``GridSearchCV`` pass
    each test fold's tasks (with metadata routing enabled). Made by
    :func:`make_task_scorer`.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, values)`` for one task.
    response_method : {"predict", "decision_function"}
        The estimator's method that gives the values.
    sign : {1, -1}
        -1 for a metric where lower is better (scikit-learn maximises scores).
    """

    def __init__(self, metric, response_method, sign):
        self.metric, self.response_method, self.sign = metric, response_method, sign

    def __call__(self, estimator, X, y, tasks=None):
        respond = getattr(estimator, self.response_method)
        values = np.asarray(respond(X) if tasks is None else respond(X, tasks=tasks))
        y = np.asarray(y)
        _, rows = check_tasks(tasks, y.shape[0])
        return self.sign * float(np.mean([self.metric(y[r], values[r]) for r in rows]))

    def get_metadata_routing(self):
        """The request of ``tasks`` for scoring (scikit-learn's metadata routing)."""
        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="tasks", alias=True)
        return request

    def __repr__(self):
        name = getattr(self.metric, "__name__", repr(self.metric))
        return f"make_task_scorer({name}, response_method={self.response_method!r}, sign={self.sign})"


def make_task_scorer(metric, *, response_method="predict", greater_is_better=True):
    """A scorer that applies ``metric`` to each task's rows and averages over the tasks.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, values)``, e.g. :func:`sklearn.metrics.accuracy_score`.
    response_method : {"predict", "decision_function"}, default="predict"
    greater_is_better : bool, default=True

    Returns
    -------
    TaskScorer

    Examples
    --------
    >>> from sklearn.metrics import accuracy_score
    >>> class Echo:
    ...     def predict(self, X, tasks=None):
    ...         return X[:, 0]
    >>> scorer = make_task_scorer(accuracy_score)
    >>> scorer(Echo(), np.array([[1], [0], [1], [1]]), [1, 1, 1, 1], tasks=[0, 0, 1, 1])
    0.75
    """
    if response_method not in ("predict", "decision_function"):
        raise ValueError(f"response_method must be 'predict' or 'decision_function'; got {response_method!r}")
    return TaskScorer(metric, response_method, 1 if greater_is_better else -1)


mean_auc_scorer = make_task_scorer(roc_auc_score, response_method="decision_function")
"""The mean over tasks of each task's ROC AUC of the decision values (the JMLR paper's MAUC)."""
