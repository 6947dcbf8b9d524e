"""Cross-validated MED estimators: ``C`` and ``alpha`` chosen on a grid, within tasks.

Each estimator here is a MED estimator of :mod:`medmtl.med.estimators` whose ``C`` and
``alpha`` are chosen by cross-validation, in the manner of scikit-learn's
:class:`~sklearn.linear_model.LogisticRegressionCV`: it takes the estimator's parameters
(less ``C``, ``alpha``, ``rho`` and ``warm_start``) and a grid, ``Cs`` by ``alphas``.

Every fold checks its training data and builds its dual once and walks the whole grid on it
with :func:`~medmtl.med.med_path`, each point started from the previous one's multipliers.
The walk goes up ``Cs`` at the first ``alpha``, down at the next, and so on, so that
consecutive points are neighbours. The folds hold out part of every task's examples
(:class:`~medmtl.model_selection.TaskStratifiedKFold`), and a fold's model is scored as the
papers score it: the mean over tasks of each task's ROC AUC (classifiers) or R^2
(regressors). The scores come back in :class:`~sklearn.model_selection.GridSearchCV`'s
``cv_results_`` shape, and the best point is refit on all the data.

No metadata routing is needed: the task of each row goes to ``fit`` as ``tasks`` and the
estimator hands each fold its share.
"""

from __future__ import annotations

import time
from functools import wraps
from numbers import Integral

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.metrics import (accuracy_score, balanced_accuracy_score, get_scorer, mean_absolute_error,
                             mean_squared_error, r2_score)
from sklearn.model_selection import KFold, StratifiedKFold, check_cv
from sklearn.utils import _safe_indexing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted

from .._params import Checked, Interval, validate_params
from .._validation import is_task_list
from ..model_selection import TaskStratifiedKFold, make_task_scorer, mean_auc_scorer, stack_tasks
from ._estimator_base import BinaryClassifierMixin, MultiTaskMethods, SingleTaskMethods
from ._feature_support import FeatureSupport
from ._parameters import shared_docs
from ._task_inputs import refuse_unrouted_tasks
from .estimators import (AdaptivePoolingClassifier, MEDClassifier, MEDRegressor, MultiTaskMEDClassifier,
                         MultiTaskMEDRegressor)
from .path import med_path

__all__ = ["MEDClassifierCV", "MEDRegressorCV", "MultiTaskMEDClassifierCV", "MultiTaskMEDRegressorCV",
           "AdaptivePoolingClassifierCV"]

DEFAULT_CS = (0.01, 0.1, 1.0, 10.0)
DEFAULT_ALPHAS = (0.1, 1.0, 10.0, 100.0)

# the names a multi-task estimator's scoring may take: each averaged over the tasks
_TASK_SCORERS = {
    "roc_auc": mean_auc_scorer,
    "accuracy": make_task_scorer(accuracy_score),
    "balanced_accuracy": make_task_scorer(balanced_accuracy_score),
    "r2": make_task_scorer(r2_score),
    "neg_mean_squared_error": make_task_scorer(mean_squared_error, greater_is_better=False),
    "neg_mean_absolute_error": make_task_scorer(mean_absolute_error, greater_is_better=False),
}
_MEAN_R2 = _TASK_SCORERS["r2"]

# the refit model's fitted attributes the CV estimator shows as its own
_SHOWN = ("classes_", "coef_", "intercept_", "switch_posterior_", "dual_coef_", "dual_", "kernel_weights_", "learned_kernel_",
          "learned_metric_", "objective_", "n_iter_", "solver_status_", "method_used_", "solver_info_", "tasks_",
          "n_tasks_", "n_features_in_", "feature_names_in_")


def _grid(name, lower_closed):
    """The check of a grid of ``C`` (``> 0``) or ``alpha`` (``>= 0``) values."""
    def check(values):
        try:
            grid = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a 1-D sequence of numbers; got {values!r}") from None
        grid = np.atleast_1d(grid)
        bad = ~np.isfinite(grid) | ((grid < 0) if lower_closed else (grid <= 0))
        if grid.ndim != 1 or grid.size == 0 or bad.any():
            raise ValueError(f"{name} must be a non-empty 1-D sequence of finite numbers "
                             f"{'>= 0' if lower_closed else '> 0'}; got {values!r}")
        return np.unique(grid)
    return check


def _folds(cv):
    if hasattr(cv, "split") or (hasattr(cv, "__iter__") and not isinstance(cv, str)):
        return cv
    raise ValueError(f"cv must be None, an integer >= 2, a splitter or an iterable of (train, test); got {cv!r}")


def _scoring(scoring):
    if scoring is None or isinstance(scoring, str) or callable(scoring):
        return scoring
    raise ValueError(f"scoring must be None, a name or a callable; got {scoring!r}")


CV_PARAMETERS = {
    "Cs": [Checked(_grid("Cs", lower_closed=False))],
    "alphas": [Checked(_grid("alphas", lower_closed=True))],
    "cv": [None, Interval(Integral, 2, None, closed="left"), Checked(_folds)],
    "scoring": [Checked(_scoring)],
    "refit": [bool],
    "n_jobs": [None, Integral],
}


def _fold_scores(estimator, X, y, tasks, sample_weight, train, test, Cs, alphas, scorer):
    """One fold: the path over the walk's points on the training rows, each point's model
    scored on the test rows. Returns the scores and seconds in the walk's order."""
    def rows(values, index):
        return None if values is None else _safe_indexing(values, index)

    path = med_path(estimator, rows(X, train), rows(y, train), Cs=Cs, alphas=alphas, tasks=rows(tasks, train),
                    sample_weight=rows(sample_weight, train))
    X_test, y_test, tasks_test = rows(X, test), rows(y, test), rows(tasks, test)
    on_tasks = {} if tasks is None else {"tasks": tasks_test}
    scores = np.array([scorer(model, X_test, y_test, **on_tasks) for model in path.estimators], dtype=float)
    return scores, path.seconds


def _walk(Cs, alphas):
    """The grid's points in the order walked (up ``Cs`` at the first ``alpha``, down at the
    next, ...), and each one's index in ``ParameterGrid`` order (``C`` outer, ``alpha`` inner)."""
    points, index = [], []
    for a, alpha in enumerate(alphas):
        order = range(len(Cs)) if a % 2 == 0 else range(len(Cs) - 1, -1, -1)
        for c in order:
            points.append((Cs[c], alpha))
            index.append(c * len(alphas) + a)
    return points, np.array(index)


def _by_refit_model(host, name, check=None):
    """The CV estimators' method ``name``: the refit model's (``best_estimator_``) method.

    It takes the signature and the documentation of ``host``'s method ``name`` (the
    estimators' methods), and exists where ``check`` holds (by default, where ``host``'s
    method does).
    """
    own = vars(host)[name]
    check = check or getattr(own, "check", None)
    own = getattr(own, "fn", own)  # the function under available_if

    @wraps(own)
    def method(self, *args, **kwargs):
        return getattr(self._refitted(name), name)(*args, **kwargs)

    summary, _, sections = own.__doc__.partition("\n\n")
    indent = sections[:len(sections) - len(sections.lstrip(" "))]
    method.__doc__ = f"{summary}\n\n{indent}That of the refit model, ``best_estimator_.{name}``.\n\n{sections}"
    return method if check is None else available_if(check)(method)


def _cv_docs(cls):
    """:func:`~medmtl.med._parameters.shared_docs` for a CV estimator, whose docstring's line
    ``{cv_attributes}`` stands for its whole Attributes section."""
    cls.__doc__ = cls.__doc__.replace("    {cv_attributes}\n", "    Attributes\n    ----------\n    {cv_attributes}\n")
    return shared_docs(cls)


class _MEDCV(BaseEstimator):
    """The search shared by the CV estimators: a subclass names its estimator (``_estimator``)
    and takes its public methods from :class:`_SingleTaskCV` or :class:`_MultiTaskCV`; the
    methods that ask the refit model only are the estimators' own (:func:`_by_refit_model`)."""

    _estimator = None
    _CV_NAMES = tuple(CV_PARAMETERS)

    def _set_init_params(self, arguments):
        for name in self._get_param_names():
            setattr(self, name, arguments[name])

    def _base(self):
        """The estimator with this one's parameters (``C`` and ``alpha`` its defaults)."""
        names = set(self._estimator._get_param_names())
        return self._estimator(**{k: v for k, v in self.get_params(deep=False).items() if k in names})

    def _switched(self):
        """Whether the model has switches, so that ``alpha`` matters (adaptive pooling's are
        the tasks')."""
        return not hasattr(self, "selection") or self.selection is not None

    def _scorer(self, scoring, multitask):
        if scoring is None:
            return _MEAN_R2 if issubclass(self._estimator, RegressorMixin) else mean_auc_scorer
        if callable(scoring):
            return scoring
        if not multitask:
            return get_scorer(scoring)
        if scoring not in _TASK_SCORERS:
            raise ValueError(f"{type(self).__name__}: scoring={scoring!r} is not one of the names averaged over "
                             f"tasks ({', '.join(sorted(_TASK_SCORERS))}); pass a callable scorer(estimator, X, y, "
                             "tasks=None) instead (medmtl.model_selection.make_task_scorer makes one)")
        return _TASK_SCORERS[scoring]

    def _splitter(self, cv, multitask):
        if cv is None or isinstance(cv, Integral):
            k = 5 if cv is None else int(cv)
            if multitask:
                return TaskStratifiedKFold(k)
            return KFold(k) if issubclass(self._estimator, RegressorMixin) else StratifiedKFold(k)
        return check_cv(cv)

    def _search(self, X, y, tasks, sample_weight):
        owner = type(self).__name__
        params = validate_params({k: getattr(self, k) for k in self._CV_NAMES}, CV_PARAMETERS, owner)
        base = self._base()
        base._check_params()
        multitask = self._estimator._lists
        # the folds index rows: per-task lists become the stacked form
        Xf, yf, tf, wf = X, y, tasks, sample_weight
        if multitask and is_task_list(X):
            if tasks is not None:
                raise ValueError("tasks= goes with one stacked X; per-task lists give each task's rows in their own "
                                 "entry")
            Xf, yf, tf = stack_tasks(X, y)
            if sample_weight is not None:
                wf = np.concatenate([np.asarray(w, dtype=float) for w in sample_weight])
        Cs, alphas = params["Cs"], params["alphas"] if self._switched() else np.array([np.nan])
        points, index = _walk(Cs.tolist(), alphas.tolist())
        walk_Cs = [C for C, _ in points]
        walk_alphas = [a for _, a in points] if self._switched() else None
        scorer = self._scorer(params["scoring"], multitask)
        splitter = self._splitter(params["cv"], multitask)
        folds = list(splitter.split(Xf, yf, groups=tf))
        done = Parallel(n_jobs=params["n_jobs"])(
            delayed(_fold_scores)(base, Xf, yf, tf, wf, train, test, walk_Cs, walk_alphas, scorer)
            for train, test in folds)
        n_points = len(points)
        scores, seconds = np.empty((len(folds), n_points)), np.empty((len(folds), n_points))
        for k, (s, t) in enumerate(done):
            scores[k, index], seconds[k, index] = s, t
        self._results(Cs, alphas, scores, seconds)
        self.scorer_, self.n_splits_ = scorer, len(folds)
        if params["refit"]:
            best = clone(base).set_params(**self.best_params_)
            start = time.perf_counter()
            best.fit(X, y, **({} if tasks is None else {"tasks": tasks}),
                     **({} if sample_weight is None else {"sample_weight": sample_weight}))
            self.refit_time_ = time.perf_counter() - start
            self.best_estimator_ = best
            for name in _SHOWN:
                if hasattr(best, name):
                    setattr(self, name, getattr(best, name))
        return self

    def _results(self, Cs, alphas, scores, seconds):
        """``cv_results_`` and the best point, from the folds' scores in grid order."""
        switched = self._switched()
        grid = [(C, a) for C in Cs.tolist() for a in alphas.tolist()]
        mean, std = scores.mean(axis=0), scores.std(axis=0)
        if np.all(np.isnan(mean)):
            raise ValueError(f"{type(self).__name__}: every grid point scored NaN; the scorer failed on every fold")
        # NaN ranks last, as in GridSearchCV
        rank = rankdata(-np.where(np.isnan(mean), -np.inf, mean), method="min").astype(np.int32)
        results = {"params": [{"C": C, "alpha": a} if switched else {"C": C} for C, a in grid],
                   "param_C": np.ma.MaskedArray([C for C, _ in grid], mask=False)}
        if switched:
            results["param_alpha"] = np.ma.MaskedArray([a for _, a in grid], mask=False)
        for k in range(scores.shape[0]):
            results[f"split{k}_test_score"] = scores[k]
        results.update(mean_test_score=mean, std_test_score=std, rank_test_score=rank,
                       mean_fit_time=seconds.mean(axis=0), std_fit_time=seconds.std(axis=0))
        self.cv_results_ = results
        self.best_index_ = int(np.flatnonzero(rank == 1)[0])
        self.best_params_ = dict(results["params"][self.best_index_])
        self.best_score_ = float(mean[self.best_index_])
        self.C_ = self.best_params_["C"]
        self.alpha_ = self.best_params_.get("alpha")

    def _refitted(self, method):
        check_is_fitted(self)
        if not hasattr(self, "best_estimator_"):
            raise AttributeError(f"{type(self).__name__} was fitted with refit=False: it has scores "
                                 f"(cv_results_) but no refit model to call {method} on")
        return self.best_estimator_

    get_support = _by_refit_model(FeatureSupport, "get_support")
    transform = _by_refit_model(FeatureSupport, "transform")
    get_feature_names_out = _by_refit_model(FeatureSupport, "get_feature_names_out")


def _is_classifier(estimator):
    return not issubclass(estimator._estimator, RegressorMixin)


class _SingleTaskCV:
    """``fit``, ``predict``, ``decision_function`` and ``score`` of a single-task CV estimator."""

    def fit(self, X, y, sample_weight=None):
        """Score every ``(C, alpha)`` of the grid over the folds; refit the best.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            As the estimator's ``fit`` takes it (each fold gets its rows' weights).

        Returns
        -------
        self
        """
        return self._search(X, y, None, sample_weight)

    predict = _by_refit_model(SingleTaskMethods, "predict")
    decision_function = _by_refit_model(SingleTaskMethods, "decision_function", _is_classifier)

    def score(self, X, y):
        """The refit model's score by ``scoring`` (ROC AUC or R^2 by default).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        float
        """
        return float(self.scorer_(self._refitted("score"), X, y))


class _MultiTaskCV:
    """``fit``, ``predict``, ``decision_function`` and ``score`` of a multi-task CV estimator,
    taking either form of the inputs (stacked with ``tasks``, or per-task lists)."""

    # tasks is requested by every method, as by the estimators (MultiTaskMethods)
    __metadata_request__fit = __metadata_request__predict = __metadata_request__score = \
        __metadata_request__decision_function = {"tasks": True}

    def fit(self, X, y, tasks=None, sample_weight=None):
        """Score every ``(C, alpha)`` of the grid over folds within tasks; refit the best.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or list
            The stacked inputs of all tasks, or one matrix per task.
        y : array-like of shape (n_samples,), or list
        tasks : array-like of shape (n_samples,), optional
            The task of each row of a stacked ``X``.
        sample_weight : array-like of shape (n_samples,), or list, optional
            As the estimator's ``fit`` takes it (each fold gets its rows' weights).

        Returns
        -------
        self
        """
        if tasks is not None:
            refuse_unrouted_tasks(type(self).__name__)
        return self._search(X, y, tasks, sample_weight)

    predict = _by_refit_model(MultiTaskMethods, "predict")
    decision_function = _by_refit_model(MultiTaskMethods, "decision_function", _is_classifier)

    def score(self, X, y, tasks=None):
        """The refit model's score by ``scoring`` (mean AUC or mean R^2 over tasks by default).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or list
        y : array-like of shape (n_samples,), or list
        tasks : array-like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        model = self._refitted("score")
        if is_task_list(X):
            X, y, tasks = stack_tasks(X, y)
        return float(self.scorer_(model, X, y, tasks=tasks))


@_cv_docs
class MEDClassifierCV(_SingleTaskCV, BinaryClassifierMixin, _MEDCV):
    """:class:`~medmtl.med.MEDClassifier` with ``C`` and ``alpha`` chosen by cross-validation.

    Each fold walks the grid on one dual, warm-started (:func:`~medmtl.med.med_path`); the
    best mean score (ROC AUC by default) is refit on all the data.

    {parameters}

    {cv_attributes}

    Examples
    --------
    Feature selection on one task with string labels:

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, "yes", "no")
    >>> clf = MEDClassifierCV(selection="features", Cs=[0.1, 1.0], alphas=[1.0, 10.0], cv=3).fit(X, y)
    >>> sorted(clf.best_params_), clf.cv_results_["mean_test_score"].shape
    (['C', 'alpha'], (4,))
    >>> clf.predict(X[:3]).tolist() == clf.best_estimator_.predict(X[:3]).tolist()
    True
    """

    _estimator = MEDClassifier

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, selection=None, kernels=None,
                 Cs=DEFAULT_CS, alphas=DEFAULT_ALPHAS, cv=None, scoring=None, refit=True, n_jobs=None,
                 method="auto", solver=None, max_iter=None, tol=None, solver_options=None):
        self._set_init_params(locals())


@_cv_docs
class MEDRegressorCV(_SingleTaskCV, RegressorMixin, _MEDCV):
    """:class:`~medmtl.med.MEDRegressor` with ``C`` and ``alpha`` chosen by cross-validation.

    {parameters}

    {cv_attributes}

    Examples
    --------
    A target twice the second feature:

    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> reg = MEDRegressorCV(selection="features", Cs=[1.0, 10.0], alphas=[1.0], epsilon=0.05, cv=3)
    >>> bool(reg.fit(X, 2 * X[:, 1]).score(X, 2 * X[:, 1]) > 0.99)
    True
    """

    _estimator = MEDRegressor

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, selection=None, kernels=None,
                 epsilon=0.1, Cs=DEFAULT_CS, alphas=DEFAULT_ALPHAS, cv=None, scoring=None, refit=True,
                 n_jobs=None, method="auto", solver=None, max_iter=None, tol=None, solver_options=None):
        self._set_init_params(locals())


@_cv_docs
class MultiTaskMEDClassifierCV(_MultiTaskCV, BinaryClassifierMixin, _MEDCV):
    """:class:`~medmtl.med.MultiTaskMEDClassifier` with ``C`` and ``alpha`` chosen by
    cross-validation within tasks.

    The folds hold out part of every task's examples (stratified by class within the
    task), each fold walks the grid on one dual, and a point scores the mean over tasks of
    each task's ROC AUC, as in the JMLR paper. Takes the stacked form (``fit(X, y,
    tasks=...)``, no metadata routing needed) or per-task lists.

    {parameters}

    {cv_attributes}

    Examples
    --------
    Three tasks stacked, the task of each row in ``tasks``:

    >>> import numpy as np
    >>> tasks = np.repeat(["a", "b", "c"], 30)
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(90, 4))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=90) > 0, 1, 0)
    >>> clf = MultiTaskMEDClassifierCV(Cs=[0.1, 1.0], alphas=[1.0, 10.0], cv=3).fit(X, y, tasks=tasks)
    >>> clf.cv_results_["rank_test_score"].shape, int(np.argmax(clf.switch_posterior_))
    ((4,), 0)
    >>> clf.decision_function(X[:2], tasks=["a", "c"]).shape
    (2,)
    """

    _estimator = MultiTaskMEDClassifier

    def __init__(self, selection="features", kernels=None, kernel="linear", degree=3, gamma="scale", coef0=0.0,
                 Cs=DEFAULT_CS, alphas=DEFAULT_ALPHAS, cv=None, scoring=None, refit=True, n_jobs=None,
                 method="auto", solver=None, max_iter=None, tol=None, solver_options=None):
        self._set_init_params(locals())


@_cv_docs
class MultiTaskMEDRegressorCV(_MultiTaskCV, RegressorMixin, _MEDCV):
    """:class:`~medmtl.med.MultiTaskMEDRegressor` with ``C`` and ``alpha`` chosen by
    cross-validation within tasks (mean R^2 over tasks by default).

    {parameters}

    {cv_attributes}

    Examples
    --------
    Two tasks as per-task lists:

    >>> import numpy as np
    >>> Xs = list(np.random.default_rng(0).normal(size=(2, 20, 3)))
    >>> ys = [2 * X[:, 1] for X in Xs]
    >>> reg = MultiTaskMEDRegressorCV(Cs=[1.0, 10.0], alphas=[1.0], epsilon=0.01, cv=3).fit(Xs, ys)
    >>> reg.best_params_["C"]
    10.0
    """

    _estimator = MultiTaskMEDRegressor

    def __init__(self, selection="features", kernels=None, kernel="linear", degree=3, gamma="scale", coef0=0.0,
                 epsilon=0.1, Cs=DEFAULT_CS, alphas=DEFAULT_ALPHAS, cv=None, scoring=None, refit=True,
                 n_jobs=None, method="auto", solver=None, max_iter=None, tol=None, solver_options=None):
        self._set_init_params(locals())


@_cv_docs
class AdaptivePoolingClassifierCV(_MultiTaskCV, BinaryClassifierMixin, _MEDCV):
    """:class:`~medmtl.med.AdaptivePoolingClassifier` with ``C`` and ``alpha`` (how much the
    tasks pool) chosen by cross-validation within tasks (mean AUC over tasks by default).

    {parameters}

    {cv_attributes}

    Examples
    --------
    Three tasks whose boundaries tilt a little more from one task to the next:

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(24, 2)) for _ in range(3)]
    >>> ys = [np.where(X[:, 0] + 0.1 * m * X[:, 1] > 0, 1, -1) for m, X in enumerate(Xs)]
    >>> clf = AdaptivePoolingClassifierCV(Cs=[1.0], alphas=[0.1, 10.0], cv=3).fit(Xs, ys)
    >>> len(clf.cv_results_["params"]), clf.switch_posterior_.shape
    (2, (3,))
    """

    _estimator = AdaptivePoolingClassifier

    def __init__(self, kernel="linear", degree=3, gamma="scale", coef0=0.0, shared_scale=1.0, task_scale=None,
                 Cs=DEFAULT_CS, alphas=DEFAULT_ALPHAS, cv=None, scoring=None, refit=True, n_jobs=None,
                 method="auto", solver=None, max_iter=None, tol=None, solver_options=None):
        self._set_init_params(locals())
