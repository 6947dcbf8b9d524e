"""The one fit path of the MED estimators, and the two kinds of MED model they fit.

Every estimator fits per-task lists ``Xs``, ``ys``; a single-task estimator is the M = 1
case and passes ``[X]``, ``[y]``. A fit checks the hyper-parameters (one call), builds the
dual of :mod:`medmtl.med.dual` (or re-uses the factors of the previous fit on the same
data), solves it with :func:`medmtl.med.solvers.solve`, and keeps what prediction needs.

Predictions use posterior means. For the switched-kernel models (SVM, feature and kernel
selection) ``f_m(x) = sum_d s_d sum_t w_{m,t} k_d(x, x_{m,t}) + b_m``, which for linear
models is ``x^T coef_[m] + b_m``; for adaptive pooling
``f_m(x) = s_m (own model of task m) + (model shared by all tasks) + b_m``. The example
weights ``w`` are ``y_t lam_t`` for classification and ``lam_t - lam*_t`` for regression.
"""

from __future__ import annotations

import hashlib
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import (
    Checked,
    Interval,
    InvalidParameterError,
    Options,
    check_binary_labels,
    check_real_targets,
    check_task_lists,
    validate_params,
)
from ..kernels import LinearKernel, get_kernel, get_kernels
from . import solvers as _solvers
from .bound import alpha_from_rho
from .dual import adaptive_pooling_dual, feature_selection_dual, kernel_selection_dual, svm_dual

_POSITIVE = Interval(Real, 0, None, closed="neither")

# Each group of parameters: its constraints, and its description for the docstrings of
# the estimators that take it (filled in by ``shared_docs``).
PRIOR_PARAMETERS = {
    "alpha": [None, Interval(Real, 0, None, closed="left")],
    "rho": [None, Interval(Real, 0, 1, closed="right")],
    "C": [_POSITIVE],
}
PRIOR_DOC = """\
    alpha : float >= 0, optional
        Prior odds of a switch being off; larger is sparser (for adaptive pooling: pools
        more). Neither ``alpha`` nor ``rho`` given means ``alpha = 1``.
    rho : float in (0, 1], optional
        Prior probability of a switch being on, instead of ``alpha``:
        ``alpha = (1 - rho) / rho`` (:func:`~medmtl.med.bound.alpha_from_rho`).
    C : float > 0, default=1.0
        Upper bound on the multipliers (the slack penalty), the same for every task.
"""

SOLVE_PARAMETERS = {
    "method": [Checked(_solvers.get_method)],
    "solver": [None, str],
    "max_iter": [None, Interval(Integral, 1, None, closed="left")],
    "tol": [None, _POSITIVE],
    "solver_options": [None, dict],
    "warm_start": [bool],
}
SOLVE_DOC = """\
    method : str, default="auto"
        The solution method of :func:`medmtl.med.solvers.solve`: ``"auto"`` (Newton, or
        the direct QP for a narrow quadratic dual), ``"newton"`` (projected Newton with SMO
        subproblems), ``"bound"`` (Algorithm 1), ``"direct"`` (CVXPY, exponential cone),
        or any registered method.
    solver : str, optional
        The method's inner solver: ``"SMO"`` for ``"newton"``, ``"OSQP"`` or any CVXPY QP
        solver for the QP steps of ``"bound"``, a CVXPY solver for ``"direct"``
        (``"CLARABEL"`` by default). ``None`` takes the method's default.
    max_iter : int >= 1 or None, default=1000
        The method's iteration limit (Newton steps, Algorithm 1's bound steps, the direct
        solver's iterations); reaching it gives a ConvergenceWarning. ``None`` leaves the
        method's default.
    tol : float > 0 or None, default=1e-12
        The method's stopping tolerance: ``"newton"`` and ``"bound"`` stop when an
        iteration raises ``J`` by less than ``tol * |J|`` (Newton also on its KKT test);
        the direct solve stops at its solver's own tolerances. ``None`` leaves the method's
        default.
    solver_options : dict, optional
        The method's other options (``get_method(method).describe_options()`` lists them),
        for example ``{"inexact": False}`` for the plain Algorithm 1 of ``"bound"``, or
        ``{"solver_settings": {...}}`` for its inner QP solver. ``max_iter`` and ``tol``
        are added from the parameters above (and cannot be given here).
    warm_start : bool, default=False
        Start from the previous fit's multipliers (projected onto the new box), e.g. along
        a path over ``C`` and ``alpha``.
"""

SOLUTION_DOC = """\
    objective_ : float
        The final dual objective ``J`` (``J(0) = 0``).
    objective_path_ : ndarray of shape (n_iter_ + 1,)
        ``J`` at the start and after each iteration.
    n_iter_ : int
    solver_status_ : str
        ``"converged"`` (``"optimal"`` for the direct solve) when the method met its
        stopping rule, else what stopped it, e.g. ``"max_iter"``.
"""

SELECTION_PARAMETERS = {
    "kernel": [Checked(get_kernel)],
    "selection": [Options(None, "features", "kernels")],
    "kernels": [None, Checked(get_kernels)],
}
POOLING_PARAMETERS = {
    "kernel": [Checked(get_kernel)],
    "shared_scale": [_POSITIVE],
    "task_scale": [None, _POSITIVE],
}
EPSILON_PARAMETER = {"epsilon": [Interval(Real, 0, None, closed="left")]}


def shared_docs(cls):
    """Class decorator: the descriptions every MED estimator shares, into its docstring.

    The docstring's lines ``{prior}``, ``{solve}`` and ``{solution}`` become
    ``PRIOR_DOC``, ``SOLVE_DOC`` and ``SOLUTION_DOC``.
    """
    doc = cls.__doc__
    for marker, text in (("prior", PRIOR_DOC), ("solve", SOLVE_DOC), ("solution", SOLUTION_DOC)):
        line = "    {" + marker + "}\n"
        if line not in doc:
            raise ValueError(f"{cls.__name__}'s docstring has no line {line.strip()}")
        doc = doc.replace(line, text)
    cls.__doc__ = doc
    return cls


def _prior_odds(alpha, rho, owner):
    """The prior odds ``alpha`` of a switch being off, from ``alpha`` or ``rho`` (not both).

    Neither given means ``alpha = 1``: a switch is on or off with equal prior probability.
    """
    if rho is None:
        return 1.0 if alpha is None else alpha
    if alpha is not None:
        raise InvalidParameterError(f"{owner}: give alpha or rho, not both (alpha = (1 - rho) / rho)")
    return alpha_from_rho(rho)


def _matvec(M, x):
    return np.asarray(M @ x).ravel()


def _own_copy(X):
    """A copy of dense or sparse ``X`` in its own memory (dense layout kept)."""
    return X.copy() if sp.issparse(X) else np.array(X, order="K")


def _fingerprint(arrays):
    """A digest of the data, so that a refit on the same data can re-use the dual's factors."""
    h = hashlib.sha1()
    for A in arrays:
        if sp.issparse(A):
            A = sp.csr_matrix(A)
            parts = (A.data, A.indices, A.indptr)
            h.update(repr(("sparse", A.shape)).encode())
        else:
            A = np.ascontiguousarray(A)
            parts = (A,)
            h.update(repr((A.dtype.str, A.shape)).encode())
        for part in parts:
            h.update(np.ascontiguousarray(part).view(np.uint8))
    return h.hexdigest()


def _example_weights(lam, target, regression):
    """One task's example weights in its predictor: ``y_t lam_t``, or ``lam_t - lam*_t``."""
    if regression:
        T = target.size
        return lam[:T] - lam[T:]
    return target * lam


def _labels(classes, scores):
    """``classes[1]`` where the score is positive, else ``classes[0]``."""
    return classes[(scores > 0).astype(int)]


class MEDEstimator(BaseEstimator):
    """Base of the MED estimators: the one fit path over per-task lists.

    A subclass sets ``_regression`` and ``_parameter_constraints``; its public ``fit``
    checks the parameters with :meth:`_validate_params`, checks and encodes the data, then
    calls :meth:`_fit_tasks`. It mixes in a model (:class:`SwitchedKernelModel` or
    :class:`PoolingModel`), which says what the dual's factors depend on besides the data
    (``_dual_key``), whether it predicts by ``coef_`` alone (``_is_linear``), and how to
    build the dual (``_build_dual``), keep the fit (``_store_model``) and score a task
    from kept training inputs (``_kernel_scores``).
    """

    _regression = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_dual_cache", None)  # factors can be large; rebuilt on the next fit
        return state

    def _validate_params(self):
        """Check every hyper-parameter against ``_parameter_constraints``; return them parsed.

        The one check of a fit, run before the data are looked at. ``alpha`` in the result
        is the prior odds resolved from ``alpha`` or ``rho``.
        """
        owner = type(self).__name__
        params = validate_params(self.get_params(deep=False), self._parameter_constraints, owner)
        params["alpha"] = _prior_odds(params["alpha"], params.pop("rho"), owner)
        given_twice = sorted({"max_iter", "tol"} & set(params["solver_options"] or {}))
        if given_twice:
            raise InvalidParameterError(f"{owner}: set {', '.join(given_twice)} with the estimator's own "
                                        f"parameter, not in solver_options")
        self._check_model_params(params, owner)
        return params

    @staticmethod
    def _check_model_params(params, owner):
        """Rules that tie parameters together (a model adds its own)."""

    def _fit_tasks(self, params, Xs, targets):
        """Fit on checked per-task inputs ``Xs`` and encoded targets (+-1 labels or reals)."""
        dual, Xs = self._dual(params, Xs, targets)
        self._solve(dual)
        weights = [_example_weights(self._lam[g], t, self._regression) for g, t in zip(dual.groups, targets)]
        self._store_model(params, Xs, weights)
        if self._regression:
            self.dual_coef_ = np.hstack([self._lam[g].reshape(2, -1) for g in dual.groups])
        else:
            self.dual_coef_ = self._lam.copy()

    def _dual(self, params, Xs, targets):
        """The dual for this data, re-using the factors of the previous fit on the same data.

        Only C and alpha change along a regularisation path; the factors and kernel terms
        (feature columns, kernel rows, and whatever the solvers derive from them: per-task
        Gram blocks, kernel diagonals) depend on the data, the kernels and epsilon alone.
        A model that predicts from its training inputs gets copies of them, made once with
        the factors: nothing the caller does to ``Xs`` later changes the fitted model.

        Returns
        -------
        dual : MEDDual
        Xs : list
            The inputs the model may keep: the caller's for a linear model (which keeps
            only ``coef_``), else the copies.
        """
        key = self._dual_key(params) + (_fingerprint(list(Xs) + list(targets)),)
        cache = getattr(self, "_dual_cache", None)
        if cache is not None and cache[0] == key:
            _, dual, copies = cache
            # a dual without switched terms keeps its alpha of 0
            dual = dual.replace(C=params["C"], alpha=params["alpha"] if dual.n_terms else None)
        else:
            copies = None if self._is_linear(params) else [_own_copy(X) for X in Xs]
            dual = self._build_dual(params, Xs if copies is None else copies, targets)
            self._dual_cache = (key, dual, copies)
        return dual, Xs if copies is None else copies

    def _solve(self, dual):
        """Solve ``dual`` (warm-started if asked) and record the solution's attributes."""
        prev = getattr(self, "_lam", None)
        warm = prev if self.warm_start and prev is not None and prev.size == dual.n else None
        opts = dict(self.solver_options or {})
        opts.update({name: value for name, value in (("max_iter", self.max_iter), ("tol", self.tol))
                     if value is not None})
        sol = _solvers.solve(dual, self.method, solver=self.solver, options=opts, init=warm)
        self._lam = sol.lam
        self.intercept_ = np.asarray(sol.intercepts, dtype=float)
        self.switch_posterior_ = np.asarray(sol.switch_posterior, dtype=float)
        self.objective_ = float(sol.objective)
        self.objective_path_ = np.asarray(sol.objective_path, dtype=float)
        self.n_iter_ = int(sol.n_iter)
        self.solver_status_ = sol.status

    def _single_task_scores(self, X):
        """Decision values of a single-task model for ``X``, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self._scores([X])[0]

    def _scores(self, Xs):
        """Per-task decision values, a list of arrays of shape (n_m,)."""
        if self.coef_ is not None:
            return [_matvec(X, w) + b for X, w, b in zip(Xs, self.coef_, self.intercept_)]
        return [self._kernel_scores(X, m) + self.intercept_[m] for m, X in enumerate(Xs)]


class MultiTaskMEDEstimator(MEDEstimator):
    """Base of the multi-task estimators: inputs and outputs are per-task lists.

    A subclass says what the targets are: how ``_encode_targets`` checks and encodes them,
    how ``_decode`` turns decision values into predictions, and ``_task_score``.
    """

    def _check_tasks(self, Xs, ys=None):
        """Checked per-task inputs; when fitting (``ys`` given) record their sizes."""
        if ys is None:
            check_is_fitted(self)
            return check_task_lists(Xs, n_features=self.n_features_in_, n_tasks=self.n_tasks_)
        Xs = check_task_lists(Xs, ys)
        self.n_features_in_, self.n_tasks_ = Xs[0].shape[1], len(Xs)
        return Xs

    def fit(self, Xs, ys):
        """Fit on per-task inputs and targets.

        Parameters
        ----------
        Xs : list of array-like or sparse matrices, each of shape (n_m, n_features)
        ys : list of array-like, each of shape (n_m,)
            Each task's targets: two distinct labels per task for a classifier, real
            values for a regressor.

        Returns
        -------
        self
        """
        params = self._validate_params()
        Xs = self._check_tasks(Xs, ys)
        self._fit_tasks(params, Xs, self._encode_targets(Xs, ys))
        return self

    def decision_function(self, Xs):
        """Per-task decision values.

        Parameters
        ----------
        Xs : list of array-like or sparse matrices, each of shape (n_m, n_features)
            One entry per task, in the order of fitting.

        Returns
        -------
        list of ndarray, each of shape (n_m,)
        """
        return self._scores(self._check_tasks(Xs))

    def predict(self, Xs):
        """Per-task predictions: labels for a classifier, values for a regressor.

        Parameters
        ----------
        Xs : list of array-like or sparse matrices, each of shape (n_m, n_features)

        Returns
        -------
        list of ndarray, each of shape (n_m,)
        """
        return self._decode(self.decision_function(Xs))

    def score(self, Xs, ys):
        """Mean over tasks of the per-task accuracy (classifier) or R^2 (regressor).

        Parameters
        ----------
        Xs : list of array-like or sparse matrices, each of shape (n_m, n_features)
        ys : list of array-like, each of shape (n_m,)

        Returns
        -------
        float
        """
        return float(np.mean([self._task_score(np.asarray(y), p) for p, y in zip(self.predict(Xs), ys)]))


class MultiTaskClassifier(MultiTaskMEDEstimator):
    """Targets of the multi-task binary classifiers: two labels per task."""

    def _encode_targets(self, Xs, ys):
        encoded = [check_binary_labels(y, X.shape[0], name="ys", task=m) for m, (X, y) in enumerate(zip(Xs, ys))]
        self.classes_ = [classes for classes, _ in encoded]
        return [signs for _, signs in encoded]

    def _decode(self, scores):
        return [_labels(c, f) for c, f in zip(self.classes_, scores)]

    @staticmethod
    def _task_score(y, labels):
        return np.mean(labels == y)


class MultiTaskRegressor(MultiTaskMEDEstimator):
    """Targets of the multi-task regressors: real values."""

    _regression = True

    def _encode_targets(self, Xs, ys):
        return [check_real_targets(y, X.shape[0], name=f"ys[{m}]") for m, (X, y) in enumerate(zip(Xs, ys))]

    @staticmethod
    def _decode(scores):
        return scores

    @staticmethod
    def _task_score(y, predictions):
        return r2_score(y, predictions)


class SwitchedKernelModel:
    """The model of the SVM, feature selection and kernel selection (single or multi-task).

    One switch per feature or kernel, shared by all tasks; each task its own weights and
    bias. ``selection=None`` has no switches: one SVM per task with ``kernel``.
    """

    @staticmethod
    def _check_model_params(params, owner):
        if params["selection"] == "features" and not isinstance(params["kernel"], LinearKernel):
            raise InvalidParameterError(
                f"{owner}: selection='features' switches linear features; use kernel='linear' "
                "(or selection='kernels' with a bank of kernels)")
        if params["selection"] == "kernels" and params["kernels"] is None:
            raise InvalidParameterError(f"{owner}: selection='kernels' needs a bank of kernels in `kernels`")

    @staticmethod
    def _terms(params):
        """The kernels whose sum, each weighted by its switch, is the model."""
        return params["kernels"] if params["selection"] == "kernels" else [params["kernel"]]

    def _dual_key(self, params):
        return (params["selection"], self._regression, params.get("epsilon", 0.0), tuple(self._terms(params)))

    @staticmethod
    def _is_linear(params):
        return params["selection"] == "features" or (params["selection"] is None
                                                     and isinstance(params["kernel"], LinearKernel))

    def _build_dual(self, params, Xs, targets):
        kw = dict(regression=self._regression, epsilon=params.get("epsilon", 0.0))
        if params["selection"] is None:
            return svm_dual(Xs, targets, params["kernel"], params["C"], **kw)
        if params["selection"] == "features":
            return feature_selection_dual(Xs, targets, params["C"], params["alpha"], **kw)
        return kernel_selection_dual(Xs, targets, params["kernels"], params["C"], params["alpha"], **kw)

    def _store_model(self, params, Xs, weights):
        if self._is_linear(params):
            W = np.vstack([_matvec(X.T, w) for X, w in zip(Xs, weights)])
            self.coef_ = W * self.switch_posterior_ if params["selection"] == "features" else W
            self._Xs_fit = self._weights = self._kernel_terms = None
            return
        self.coef_ = None
        self._Xs_fit, self._weights = Xs, weights
        switches = self.switch_posterior_ if params["selection"] == "kernels" else [1.0]
        self._kernel_terms = list(zip(switches, self._terms(params)))

    def _kernel_scores(self, X, m):
        f = np.zeros(X.shape[0])
        for s, k in self._kernel_terms:
            f += s * (k(X, self._Xs_fit[m]) @ self._weights[m])
        return f


class PoolingModel:
    """Adaptive pooling: each task mixes a switched model of its own with a shared one.

    ``f_m(x) = task_scale s_m k(x, X_m) w_m + shared_scale sum_n k(x, X_n) w_n + b_m``.
    """

    @staticmethod
    def _scales(params, n_tasks):
        task = 10.0 * n_tasks if params["task_scale"] is None else params["task_scale"]
        return params["shared_scale"], task

    def _dual_key(self, params):
        return ("pooling", params["shared_scale"], params["task_scale"], params["kernel"])

    @staticmethod
    def _is_linear(params):
        return isinstance(params["kernel"], LinearKernel)

    def _build_dual(self, params, Xs, targets):
        shared, task = self._scales(params, len(Xs))
        return adaptive_pooling_dual(Xs, targets, params["kernel"], params["C"], params["alpha"], shared, task)

    def _store_model(self, params, Xs, weights):
        self._pooling_scales = self._scales(params, len(Xs))
        if self._is_linear(params):
            shared, task = self._pooling_scales
            own = np.vstack([_matvec(X.T, w) for X, w in zip(Xs, weights)])
            self.coef_ = task * self.switch_posterior_[:, None] * own + shared * own.sum(axis=0)
            self._Xs_fit = self._weights = self._kernel = None
            return
        self.coef_ = None
        self._Xs_fit, self._weights, self._kernel = Xs, weights, params["kernel"]

    def _kernel_scores(self, X, m):
        shared, task = self._pooling_scales
        k = self._kernel
        f_shared = sum(k(X, Xn) @ wn for Xn, wn in zip(self._Xs_fit, self._weights))
        f_own = k(X, self._Xs_fit[m]) @ self._weights[m]
        return task * self.switch_posterior_[m] * f_own + shared * f_shared
