"""MTS3FLC and S3FLC estimators (Du, Zhuang, He and Shi, ICDM 2012).

Each task ``i`` factorises its word-document matrix ``X_i = [X_iL X_iU]`` as
``F_i [S ; R_i] [G_iL G_iU]``: topics ``F_i`` of the task, associations of the ``k_s``
common topics with the classes ``S`` (shared by all tasks) and of the task's own topics
``R_i``, and class memberships ``G_i`` of the documents, fixed to the labels on the
labelled part. The unlabelled documents are classified by ``argmax_c G_iU[c, n]``
(transduction); new documents are folded in with ``F_i`` and ``[S ; R_i]`` held fixed.

Documents are rows throughout (``Xs[i]`` has shape (n_documents, n_words)), as in the rest
of medmtl; the paper's ``X_i`` is the transpose.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from medmtl._validation import (
    Checked,
    Interval,
    check_feature_names,
    check_labels,
    check_matrix,
    refuse_iterator,
    refuse_task_lists_from_sklearn,
    validate_params,
)
from medmtl.nmtf.init import initial_factors, logistic_start, plsa, row_normalized
from medmtl.nmtf.updates import (
    EPS, data_times_labels, objective, stacked_associations, update_F, update_G_unlabeled,
    update_R, update_S,
)

__all__ = ["MTS3FLC", "S3FLC", "check_documents", "check_task_list", "check_seed", "iterate"]


def check_documents(X, name, n_words=None):
    """Return a canonical CSR float64 matrix of nonnegative finite document weights (a copy).

    Dense input is accepted (and converted); negative, NaN or infinite entries, complex
    numbers and values that are not numbers raise. Duplicate entries of a CSR matrix are
    summed, as their matrix is their sum.
    """
    X = check_matrix(X, name=name, min_rows=0, min_features=1)
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    if not np.all(np.isfinite(X.data)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if X.nnz and X.data.min() < 0:
        raise ValueError(f"{name} has negative entries (min {X.data.min():.3g}); the word-document "
                         "matrix of a tri-factorisation must be nonnegative")
    if n_words is not None and X.shape[1] != n_words:
        raise ValueError(f"{name} has {X.shape[1]} words (columns); expected {n_words}")
    return X


def check_task_list(Xs, name, owner, method):
    """Raise unless ``Xs`` is a list of per-task matrices, and refuse it from scikit-learn."""
    refuse_iterator(Xs, name)
    if not isinstance(Xs, (list, tuple)):
        raise TypeError(f"{name} must be a list with one (n_documents, n_words) matrix per task")
    refuse_task_lists_from_sklearn(owner, method, _TRANSDUCTIVE)


def _check_label_list(ys, n_tasks, name="ys", what="Xs_labeled"):
    """``ys`` as a list with one label array per task (their contents are checked later)."""
    refuse_iterator(ys, name)
    if ys is None or isinstance(ys, str) or not hasattr(ys, "__len__"):
        raise TypeError(f"{name} must be a list with one array of labels per task; got {type(ys).__name__}")
    if len(ys) != n_tasks:
        raise ValueError(f"{what} has {n_tasks} tasks but {name} has {len(ys)}")
    return list(ys)


def check_seed(value):
    """``value`` if ``numpy.random.default_rng`` takes it as a seed, else a clear error.

    >>> check_seed(3), check_seed(None)
    (3, None)
    """
    if value is None or isinstance(value, (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)):
        return value
    if isinstance(value, Integral) and not isinstance(value, (bool, np.bool_)) and value >= 0:
        return int(value)
    raise ValueError(f"must be None, an integer >= 0 or a numpy Generator; got {value!r}")


_TRANSDUCTIVE = ("The NMTF learners are transductive and take only per-task lists: choose their settings "
                 "with the project's own protocol (medmtl reproduce mts3flc-select).")


_ITERATIONS = Interval(Integral, 0, None, closed="left")
# The hyper-parameters both tri-factorisations take; MTS3FLC adds n_shared_topics.
NMTF_PARAMETERS = {
    "n_topics": [Interval(Integral, 1, None, closed="left")],
    "max_iter": [_ITERATIONS],
    "tol": [Interval(Real, 0, None, closed="left")],
    "plsa_max_iter": [_ITERATIONS],
    "C": [Interval(Real, 0, None, closed="neither")],
    "fold_in_max_iter": [_ITERATIONS],
    "normalize_memberships": [bool],
    "random_state": [Checked(check_seed)],
}


def iterate(Xds, n_labeled, Fs, S, Rs, Gs, XGs, GGs, normalize_memberships=True):
    """One round of Algorithm 1: every ``R_i``, then ``S``, then each ``F_i`` and ``G_iU``.

    The lists ``Fs``, ``Rs``, ``Gs`` (unlabelled columns), ``XGs = X_i G_i^T`` and
    ``GGs = G_i G_i^T`` are updated in place; the new ``S`` is returned.
    """
    Rs[:] = update_R(Fs, S, Rs, XGs, GGs, EPS)
    S = update_S(Fs, S, Rs, XGs, GGs, EPS)
    for i, Xd in enumerate(Xds):
        St = stacked_associations(S, Rs[i])
        Fs[i] = update_F(Fs[i], St, XGs[i], GGs[i], EPS)
        nl = n_labeled[i]
        G_U = update_G_unlabeled(Xd, nl, Fs[i], St, Gs[i][:, nl:], EPS)
        if normalize_memberships:
            # Keep each unlabelled document's memberships a distribution over the classes,
            # like its labelled columns and its logistic start.
            G_U /= np.maximum(G_U.sum(axis=0), EPS)
        Gs[i][:, nl:] = G_U
        XGs[i] = data_times_labels(Xd, Gs[i])
        GGs[i] = Gs[i] @ Gs[i].T
    return S


class _TriFactorization(BaseEstimator):
    """Fit machinery common to MTS3FLC and S3FLC; subclasses provide the start."""

    _parameter_constraints = NMTF_PARAMETERS

    def __init__(self, n_topics=20, max_iter=20, tol=1e-4, plsa_max_iter=50, C=100.0,
                 fold_in_max_iter=100, normalize_memberships=True, random_state=None):
        self.n_topics = n_topics
        self.normalize_memberships = normalize_memberships
        self.max_iter = max_iter
        self.tol = tol
        self.plsa_max_iter = plsa_max_iter
        self.C = C
        self.fold_in_max_iter = fold_in_max_iter
        self.random_state = random_state

    def _validate(self, Xs_labeled, ys, Xs_unlabeled):
        """The hyper-parameters as checked, and the checked inputs (copies) and classes."""
        params = validate_params(self.get_params(deep=False), self._parameter_constraints, type(self).__name__)
        params.setdefault("n_shared_topics", 0)
        check_task_list(Xs_labeled, "Xs_labeled", type(self).__name__, "fit")
        n_tasks = len(Xs_labeled)
        if n_tasks == 0:
            raise ValueError("Xs_labeled is empty; need at least one task")
        ys = _check_label_list(ys, n_tasks)
        if Xs_unlabeled is None:
            Xs_unlabeled = [None] * n_tasks
        check_task_list(Xs_unlabeled, "Xs_unlabeled", type(self).__name__, "fit")
        if len(Xs_unlabeled) != n_tasks:
            raise ValueError(f"Xs_labeled has {n_tasks} tasks but Xs_unlabeled has {len(Xs_unlabeled)}")
        XL, XU, Y = [], [], []
        n_words = None
        for i in range(n_tasks):
            xl = None if Xs_labeled[i] is None else check_documents(Xs_labeled[i], f"Xs_labeled[{i}]", n_words)
            if xl is None or xl.shape[0] == 0:
                raise ValueError(f"task {i} has no labelled documents; every task needs at least one")
            n_words = xl.shape[1]
            y = check_labels(ys[i], xl.shape[0], f"ys[{i}]")
            if Xs_unlabeled[i] is None:
                xu = sp.csr_matrix((0, n_words))
            else:
                xu = check_documents(Xs_unlabeled[i], f"Xs_unlabeled[{i}]", n_words)
            XL.append(xl)
            XU.append(xu)
            Y.append(y)
        try:
            classes = np.unique(np.concatenate(Y))
        except TypeError as err:
            raise ValueError(f"ys must hold labels of one kind (all numbers or all strings); {err}") from None
        if classes.size < 2:
            raise ValueError(f"the labelled documents hold a single class ({classes[0]!r}); need at least two")
        if params["n_shared_topics"] > params["n_topics"]:
            raise ValueError(f"n_shared_topics ({params['n_shared_topics']}) cannot exceed n_topics "
                             f"({params['n_topics']})")
        check_feature_names(self, list(Xs_labeled) + list(Xs_unlabeled), reset=True,
                            labels=[f"Xs_labeled[{i}]" for i in range(n_tasks)]
                            + [f"Xs_unlabeled[{i}]" for i in range(n_tasks)])
        return params, XL, XU, Y, classes

    def fit(self, Xs_labeled, ys, Xs_unlabeled=None):
        """Factorise all tasks jointly and label their unlabelled documents.

        Parameters
        ----------
        Xs_labeled : list of {sparse matrix, ndarray} of shape (n_labeled_i, n_words)
            Nonnegative document-word weights (e.g. tf-idf) of the labelled documents.
        ys : list of array-like of shape (n_labeled_i,)
            Their labels; the classes are the union over tasks (at least two).
        Xs_unlabeled : list of {sparse matrix, ndarray} of shape (n_unlabeled_i, n_words), optional
            The task's unlabelled documents, classified transductively (``transduction_``).

        Returns
        -------
        self
        """
        params, XL, XU, Y, classes = self._validate(Xs_labeled, ys, Xs_unlabeled)
        rng = np.random.default_rng(params["random_state"])
        # The paper's step 1: each document (a column of X_i) sums to one. One CSR copy per task.
        Xds = [row_normalized(sp.vstack([xl, xu], format="csr"), "l1", copy=False) for xl, xu in zip(XL, XU)]
        n_labeled = [xl.shape[0] for xl in XL]
        G_labeled = [(classes[:, None] == y[None, :]).astype(float) for y in Y]
        Fs, S, Rs, G_unlabeled = self._initialize(params, XL, XU, Y, Xds, classes, rng)
        Gs = [np.hstack([gl, gu]) for gl, gu in zip(G_labeled, G_unlabeled)]

        x_sq = [float(Xd.data @ Xd.data) for Xd in Xds]
        XGs = [data_times_labels(Xd, G) for Xd, G in zip(Xds, Gs)]
        GGs = [G @ G.T for G in Gs]
        history = [objective(Xds, Fs, S, Rs, Gs, x_sq, XGs)]
        converged = False
        n_iter = 0
        max_iter, tol = params["max_iter"], params["tol"]
        for n_iter in range(1, max_iter + 1):
            S = iterate(Xds, n_labeled, Fs, S, Rs, Gs, XGs, GGs, params["normalize_memberships"])
            history.append(objective(Xds, Fs, S, Rs, Gs, x_sq, XGs))
            if tol > 0 and abs(history[-2] - history[-1]) <= tol * history[-2]:
                converged = True
                break
        if max_iter > 0 and not converged:
            warnings.warn(f"{type(self).__name__} stopped at max_iter={max_iter} before the relative "
                          f"decrease of the objective fell below tol={tol}", ConvergenceWarning)

        self.classes_ = classes
        self.n_tasks_ = len(Xds)
        self.n_features_in_ = Xds[0].shape[1]
        self.topics_ = Fs
        self.shared_associations_ = S
        self.specific_associations_ = Rs
        self.memberships_ = [G[:, nl:] for G, nl in zip(Gs, n_labeled)]
        self.transduction_ = [classes[np.argmax(G, axis=0)] for G in self.memberships_]
        self.objective_ = np.asarray(history)
        self.n_iter_ = n_iter
        self._fold_in_max_iter = params["fold_in_max_iter"]
        return self

    def associations(self, task):
        """``[S ; R_i]``: the class associations of every topic of one task.

        Parameters
        ----------
        task : int
            The task ``i``.

        Returns
        -------
        ndarray of shape (n_topics, n_classes)
        """
        check_is_fitted(self, "topics_")
        return stacked_associations(self.shared_associations_, self.specific_associations_[task])

    def fold_in(self, Xs):
        """Class memberships of new documents with every ``F_i`` and ``[S ; R_i]`` fixed.

        Parameters
        ----------
        Xs : list of {sparse matrix, ndarray} of shape (n_i, n_words), one per task
            (``None`` for a task with nothing to predict).

        Returns
        -------
        list of ndarray of shape (n_classes, n_i)
        """
        check_is_fitted(self, "topics_")
        check_task_list(Xs, "Xs", type(self).__name__, "fold_in")
        if len(Xs) != self.n_tasks_:
            raise ValueError(f"Xs must be a list of {self.n_tasks_} per-task matrices; got {len(Xs)}")
        checked = [None if X is None else check_documents(X, f"Xs[{i}]", self.n_features_in_)
                   for i, X in enumerate(Xs)]
        check_feature_names(self, Xs, reset=False)
        out = []
        for i, X in enumerate(checked):
            if X is None:
                out.append(np.zeros((self.classes_.size, 0)))
                continue
            Xd = row_normalized(X, "l1", copy=False)
            F, St = self.topics_[i], self.associations(i)
            G = np.full((self.classes_.size, Xd.shape[0]), 1.0 / self.classes_.size)
            for _ in range(self._fold_in_max_iter):
                G = update_G_unlabeled(Xd, 0, F, St, G, EPS)
            out.append(G)
        return out

    def predict(self, Xs):
        """Labels of new documents by folding them in: ``argmax_c`` of :meth:`fold_in`'s memberships.

        Parameters
        ----------
        Xs : list of {sparse matrix, ndarray, None}
            As for :meth:`fold_in`.

        Returns
        -------
        list of ndarray of shape (n_i,)
        """
        return [self.classes_[np.argmax(G, axis=0)] for G in self.fold_in(Xs)]

    def score(self, Xs, ys):
        """Accuracy over all tasks, averaged per task (the paper's measure).

        Parameters
        ----------
        Xs : list of {sparse matrix, ndarray} of shape (n_i, n_words), one per task
            The documents.
        ys : list of array-like of shape (n_i,)
            Their labels; a task without labels does not count.

        Returns
        -------
        float
        """
        predictions = self.predict(Xs)
        ys = _check_label_list(ys, len(predictions), what="Xs")
        ys = [check_labels(y, p.size, f"ys[{i}]") for i, (p, y) in enumerate(zip(predictions, ys))]
        return float(np.mean([np.mean(p == y) for p, y in zip(predictions, ys) if len(y)]))


class MTS3FLC(_TriFactorization):
    """Multi-task semi-supervised semantic feature learning for classification.

    Joint nonnegative matrix tri-factorisation of the tasks' word-document matrices with
    ``n_shared_topics`` topics per task whose class associations ``S`` are common to all
    tasks, solved by the four multiplicative updates of Du et al. (ICDM 2012).

    Parameters
    ----------
    n_topics : int, default=20
        K, the topics per task.
    n_shared_topics : int, default=5
        k_s <= K, the topics whose associations with the classes are shared.
    max_iter : int, default=20
        Rounds of (all R_i, S, then each F_i and G_iU); the paper uses 20.
    tol : float, default=1e-4
        Stop when an iteration lowers the objective by less than ``tol`` times its value.
    plsa_max_iter : int, default=50
        EM iterations of the PLSA that starts the common topics.
    C : float, default=100.0
        Inverse L2 strength of the logistic regression that starts ``G_iU`` (weak, like the
        nearly unregularised logistic regression of the paper). The experiments choose it,
        with ``normalize_memberships``, on a development problem (``mts3flc-select``).
    fold_in_max_iter : int, default=100
        Multiplicative updates of the memberships of new documents in :meth:`predict`.
    normalize_memberships : bool, default=True
        After every update of ``G_iU``, rescale each unlabelled document's memberships to
        sum to one (the constraint of the MTrick family this model comes from). Without it
        the four updates never increase the objective (Theorem 1), and the memberships may
        drift away from the classes; with it the objective is no longer guaranteed to
        decrease.
    random_state : int, Generator or None
        Seeds PLSA and the random ``R_i``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    topics_ : list of ndarray of shape (n_words, n_topics)
        ``F_i = [F_is F_ir]``; the first ``n_shared_topics`` columns are the common topics.
    shared_associations_ : ndarray of shape (n_shared_topics, n_classes)
        ``S``.
    specific_associations_ : list of ndarray of shape (n_topics - n_shared_topics, n_classes)
        ``R_i``.
    memberships_ : list of ndarray of shape (n_classes, n_unlabeled_i)
        ``G_iU``.
    transduction_ : list of ndarray of shape (n_unlabeled_i,)
        Predicted labels of the unlabelled documents.
    objective_ : ndarray of shape (``n_iter_`` + 1,)
        The objective at the start and after every iteration; never increases when
        ``normalize_memberships=False``.
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> rng = np.random.default_rng(0)
    >>> def task(shift):  # class +1 uses words 0-9, class -1 words 10-19, plus noise words
    ...     y = np.repeat([1, -1], 20)
    ...     X = rng.random((40, 30)) * 0.1
    ...     X[y == 1, shift:shift + 10] += rng.random((20, 10))
    ...     X[y == -1, 10 + shift:20 + shift] += rng.random((20, 10))
    ...     return sp.csr_matrix(X), y
    >>> tasks = [task(0), task(2)]
    >>> lab = np.array([0, 1, 20, 21]); unl = np.setdiff1d(np.arange(40), lab)
    >>> model = MTS3FLC(n_topics=4, n_shared_topics=2, random_state=0, tol=1e-4, max_iter=500,
    ...                 normalize_memberships=False)
    >>> model = model.fit([X[lab] for X, _ in tasks], [y[lab] for _, y in tasks],
    ...                   [X[unl] for X, _ in tasks])
    >>> [float(np.mean(p == y[unl])) for p, (_, y) in zip(model.transduction_, tasks)]
    [1.0, 1.0]
    >>> bool(np.all(np.diff(model.objective_) <= 1e-12))
    True
    """

    def __init__(self, n_topics=20, n_shared_topics=5, max_iter=20, tol=1e-4, plsa_max_iter=50,
                 C=100.0, fold_in_max_iter=100, normalize_memberships=True, random_state=None):
        super().__init__(n_topics, max_iter, tol, plsa_max_iter, C, fold_in_max_iter, normalize_memberships,
                         random_state)
        self.n_shared_topics = n_shared_topics

    _parameter_constraints = {**NMTF_PARAMETERS, "n_shared_topics": [Interval(Integral, 0, None, closed="left")]}

    def _initialize(self, params, XL, XU, Y, Xds, classes, rng):
        k_s = params["n_shared_topics"]
        shared = None
        if k_s:
            shared, _ = plsa(sp.vstack(Xds, format="csr"), k_s, params["plsa_max_iter"], rng)
        Fs, S, Rs = initial_factors(Xds[0].shape[1], params["n_topics"], k_s, classes.size, len(Xds), shared, rng)
        # Pooled logistic regression, as the paper starts MTS3FLC.
        pooled = sp.vstack(XL, format="csr")
        G_all = logistic_start(pooled, np.concatenate(Y), sp.vstack(XU, format="csr"), classes, params["C"])
        bounds = np.cumsum([0] + [xu.shape[0] for xu in XU])
        G_unlabeled = [G_all[:, a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        return Fs, S, Rs, G_unlabeled


class S3FLC(_TriFactorization):
    """Semi-supervised semantic feature learning for classification, one task at a time.

    The single-task case of :class:`MTS3FLC` (no shared topics, ``k_s = 0``), started as in
    the paper: each task's topics from PLSA on its own documents with ``K`` topics, its
    associations constant ``1/K`` and ``G_iU`` from a logistic regression on its own labels.
    Several tasks may be passed; they are factorised independently (the updates decouple).

    Parameters
    ----------
    n_topics, max_iter, tol, plsa_max_iter, C, fold_in_max_iter, normalize_memberships, random_state
        As in :class:`MTS3FLC`.

    Attributes
    ----------
    As in :class:`MTS3FLC`, with ``shared_associations_`` of shape (0, n_classes).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> rng = np.random.default_rng(1)
    >>> y = np.repeat([1, -1], 20)
    >>> X = rng.random((40, 20)) * 0.1
    >>> X[y == 1, :10] += rng.random((20, 10)); X[y == -1, 10:] += rng.random((20, 10))
    >>> X = sp.csr_matrix(X)
    >>> model = S3FLC(n_topics=4, max_iter=500, random_state=0).fit([X[[0, 1, 20, 21]]], [y[[0, 1, 20, 21]]],
    ...                                                [X[2:20]])
    >>> float(np.mean(model.transduction_[0] == 1))
    1.0
    """

    def _initialize(self, params, XL, XU, Y, Xds, classes, rng):
        K = params["n_topics"]
        Fs, Rs, G_unlabeled = [], [], []
        for i, Xd in enumerate(Xds):
            if np.unique(Y[i]).size < 2:
                raise ValueError(f"task {i} has labelled documents of one class only; S3FLC starts each "
                                 "task from its own logistic regression, which needs two")
            topics, _ = plsa(Xd, K, params["plsa_max_iter"], rng)
            Fs.append(topics / np.maximum(topics.sum(axis=1, keepdims=True), EPS))
            Rs.append(np.full((K, classes.size), 1.0 / K))
            G_unlabeled.append(logistic_start(XL[i], Y[i], XU[i], classes, params["C"]))
        return Fs, np.zeros((0, classes.size)), Rs, G_unlabeled
