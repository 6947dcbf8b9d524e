"""Regularisation paths of the MED estimators: one dual, many ``(C, alpha)``.

Only the bound ``C`` on the multipliers and the prior odds ``alpha`` change along a path;
the factors, kernels and Gram blocks of the dual (and what the solvers derive from them)
depend on the data alone. :func:`med_path` therefore checks the data and builds the dual
once, and walks the points with :meth:`MEDDual.replace <medmtl.med.dual.MEDDual.replace>`,
each point's solve started from the previous point's multipliers, in the manner of
scikit-learn's :func:`~sklearn.linear_model.lasso_path`.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from .._params import validate_params
from ._estimator_base import MEDBase
from ._parameters import PRIOR_PARAMETERS

__all__ = ["med_path", "MEDPath"]


@dataclass(frozen=True)
class MEDPath:
    """The fitted points of a path over ``(C, alpha)``, in the order walked.

    :func:`med_path` makes it (:meth:`of` gathers the points' attributes).

    Parameters
    ----------
    Cs : ndarray of shape (n_points,)
        ``C`` at each point.
    alphas : ndarray of shape (n_points,)
        The prior odds ``alpha`` at each point.
    estimators : list of MED estimators
        At each point, a fitted copy of the estimator with that point's ``C`` and
        ``alpha``: every fitted attribute, ``predict``, ``score`` and the rest.
    objectives : ndarray of shape (n_points,)
        The dual objective ``J`` at each point (``objective_``).
    dual_coefs : ndarray of shape (n_points, ...)
        Each point's multipliers, as ``dual_coef_`` holds them.
    coefs : ndarray of shape (n_points, n_tasks, n_features) or None
        Each point's posterior-mean weights ``coef_``; None for a kernel model.
    intercepts : ndarray of shape (n_points, n_tasks)
        Each point's biases ``intercept_``.
    switch_posteriors : ndarray of shape (n_points, n_switches)
        Each point's ``switch_posterior_``.
    n_iters : ndarray of int of shape (n_points,)
        Each point's ``n_iter_``.
    statuses : list of str
        Each point's ``solver_status_``.
    seconds : ndarray of shape (n_points,)
        Wall-clock time of each point's solve (and of keeping its model).
    process_seconds : ndarray of shape (n_points,)
        Process (CPU) time of the same.
    """

    Cs: np.ndarray
    alphas: np.ndarray
    estimators: list
    objectives: np.ndarray
    dual_coefs: np.ndarray
    coefs: object
    intercepts: np.ndarray
    switch_posteriors: np.ndarray
    n_iters: np.ndarray
    statuses: list
    seconds: np.ndarray
    process_seconds: np.ndarray

    @classmethod
    def of(cls, Cs, alphas, estimators, seconds, process_seconds):
        """The path of the fitted ``estimators``, their attributes gathered point by point.

        Parameters
        ----------
        Cs, alphas : ndarray of shape (n_points,)
        estimators : list of fitted MED estimators
        seconds, process_seconds : ndarray of shape (n_points,)

        Returns
        -------
        MEDPath
        """
        def stacked(name):
            return np.stack([getattr(est, name) for est in estimators])

        linear = all(getattr(est, "coef_", None) is not None for est in estimators)
        return cls(Cs, alphas, estimators, stacked("objective_"), stacked("dual_coef_"),
                   stacked("coef_") if linear else None, stacked("intercept_"), stacked("switch_posterior_"),
                   stacked("n_iter_"), [est.solver_status_ for est in estimators], seconds, process_seconds)

    def __len__(self):
        return len(self.estimators)


def _values(values, name, default):
    """``values`` checked as the estimators check ``name`` (``[default]`` for None)."""
    if values is None:
        return np.array([default], dtype=float)
    values = np.atleast_1d(np.asarray(values, dtype=object))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"med_path: {name} must be a number or a non-empty 1-D sequence of numbers")
    constraint = {name: PRIOR_PARAMETERS[name]}
    return np.array([validate_params({name: v}, constraint, "med_path")[name] for v in values.tolist()])


def _walk(n, warm_start):
    """Whether each point starts from the previous point's multipliers."""
    warm = np.asarray(warm_start, dtype=object)
    if not all(isinstance(w, (bool, np.bool_)) for w in warm.ravel().tolist()):
        raise TypeError("med_path: warm_start must be a bool or a sequence of bools, one per point")
    if warm.ndim > 1 or (warm.ndim == 1 and warm.size != n):
        raise ValueError(f"med_path: warm_start has {warm.size} entries for a path of {n} points")
    return np.broadcast_to(warm.astype(bool), (n,))


def med_path(estimator, X, y=None, *, Cs=None, alphas=None, tasks=None, warm_start=True, sample_weight=None):
    """Fit a MED estimator at every point of a path over ``C`` and ``alpha``, on one dual.

    The data are checked and the dual built once, with the estimator's parameters; each
    point solves ``dual.replace(C=C, alpha=alpha)`` with the estimator's method, started
    from the previous point's multipliers.

    Parameters
    ----------
    estimator : MED estimator
        Any estimator of :mod:`medmtl.med` (left unfitted: the path fits copies). Its own
        ``warm_start`` is not used.
    X, y
        The training data, as the estimator's ``fit`` takes them.
    Cs : float or array-like of shape (n_points,), optional
        ``C`` at each point; one number (default: the estimator's ``C``) for every point.
    alphas : float or array-like of shape (n_points,), optional
        The prior odds ``alpha`` at each point; one number (default: the estimator's,
        from ``alpha`` or ``rho``) for every point. Ignored by a model without switches.
    tasks : array-like of shape (n_samples,), optional
        The task of each row of a stacked ``X`` (the multi-task estimators).
    warm_start : bool or array-like of bool of shape (n_points,), default=True
        Whether each point starts from the previous point's multipliers (the first point
        starts from zero). An array says it per point: for example a path over ``alpha``
        for each of several ``C``, starting afresh at each new ``C``.
    sample_weight : array-like of shape (n_samples,), or list, optional
        A weight >= 0 per example, as the estimator's ``fit`` takes it: at each point the
        upper bounds are ``C * sample_weight``.

    Returns
    -------
    MEDPath
        The points in the order given, each with its fitted estimator.

    Raises
    ------
    ValueError
        For ``Cs`` and ``alphas`` of different lengths, or values outside what the
        estimators allow.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.med import MultiTaskMEDClassifier
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 3)) for _ in range(2)]
    >>> ys = [np.where(X[:, 0] + 0.3 * rng.normal(size=20) > 0, 1, -1) for X in Xs]
    >>> path = med_path(MultiTaskMEDClassifier(C=1.0), Xs, ys, alphas=[0.1, 1.0, 10.0])
    >>> path.switch_posteriors.shape, path.statuses
    ((3, 3), ['converged', 'converged', 'converged'])
    >>> cold = MultiTaskMEDClassifier(C=1.0, alpha=10.0).fit(Xs, ys)
    >>> bool(np.isclose(path.objectives[-1], cold.objective_, rtol=1e-8))
    True
    >>> path.estimators[-1].get_params()["alpha"]
    10.0
    """
    if not isinstance(estimator, MEDBase):
        raise TypeError(f"med_path takes a MED estimator of medmtl.med; got {type(estimator).__name__}")
    model = clone(estimator)
    params = model._check_params()
    Cs_, alphas_ = _values(Cs, "C", params["C"]), _values(alphas, "alpha", params["alpha"])
    if len({Cs_.size, alphas_.size} - {1}) > 1:
        raise ValueError(f"med_path: Cs has {Cs_.size} values and alphas {alphas_.size}; give one per point "
                         "(or one number for every point)")
    n = max(Cs_.size, alphas_.size)
    Cs_, alphas_ = np.broadcast_to(Cs_, (n,)).copy(), np.broadcast_to(alphas_, (n,)).copy()
    warm = _walk(n, warm_start)
    weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
    problem = model._problem(params, X, y, tasks, **weighted)
    switched = problem.dual.n_terms > 0
    estimators, seconds, process_seconds, lam = [], np.empty(n), np.empty(n), None
    for k, (C, alpha) in enumerate(zip(Cs_.tolist(), alphas_.tolist())):
        wall, cpu = time.perf_counter(), time.process_time()
        # a dual without switched terms keeps its alpha of 0
        dual = problem.at(C, alpha if switched else None)
        solution = params["plan"].solve(dual, lam if warm[k] else None)
        fitted = copy.deepcopy(model)
        fitted.set_params(**({"C": C} if Cs is not None else {}),
                          **({"alpha": alpha, "rho": None} if alphas is not None else {}))
        fitted._store(dict(params, C=C, alpha=alpha), problem._replace(dual=dual), solution)
        estimators.append(fitted)
        lam = solution.lam
        seconds[k], process_seconds[k] = time.perf_counter() - wall, time.process_time() - cpu
    return MEDPath.of(Cs_, alphas_, estimators, seconds, process_seconds)
