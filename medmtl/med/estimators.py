"""scikit-learn style MED estimators on the one dual of :mod:`medmtl.med.dual`.

* :class:`MEDClassifier` - MED SVM (``selection=None``), feature selection, kernel selection.
* :class:`MEDRegressor` - the same for epsilon-insensitive regression.
* :class:`MultiTaskMEDClassifier`, :class:`MultiTaskMEDRegressor` - meta feature / kernel
  selection: one switch vector shared by all tasks, each task its own weights and bias.
* :class:`AdaptivePoolingClassifier` - each task mixes a switched own model with a shared one.

Predictions use posterior means: for feature selection
``f_m(x) = sum_d s_d x_d w_{m,d} + b_m`` with ``w_m = X_m^T (y_m * lam_m)``; for kernel
selection ``f_m(x) = sum_d s_d sum_t lam_t y_t k_d(x, x_t) + b_m``.
"""

from __future__ import annotations

import hashlib
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import (
    check_matrix,
    check_real_targets,
    check_scalar_nonnegative,
    check_scalar_positive,
    check_task_lists,
    check_two_classes,
)
from ..kernels import LinearKernel, get_kernel, get_kernels
from . import solvers as _solvers
from .dual import adaptive_pooling_dual, feature_selection_dual, kernel_selection_dual, svm_dual

__all__ = [
    "MEDClassifier",
    "MEDRegressor",
    "MultiTaskMEDClassifier",
    "MultiTaskMEDRegressor",
    "AdaptivePoolingClassifier",
]

_SELECTIONS = (None, "features", "kernels")


def _resolve_alpha(alpha, rho, default=1.0):
    """``alpha`` from ``alpha`` or ``rho`` (``alpha = (1 - rho) / rho``); not both."""
    if alpha is not None and rho is not None:
        raise ValueError("give alpha or rho, not both (alpha = (1 - rho) / rho)")
    if rho is not None:
        if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not (0 < rho <= 1):
            raise ValueError(f"rho must be in (0, 1]; got {rho!r}")
        return (1.0 - float(rho)) / float(rho)
    if alpha is None:
        return default
    return check_scalar_nonnegative(alpha, "alpha")


def _matvec(M, x):
    return np.asarray(M @ x).ravel()


def _fingerprint(arrays):
    """A digest of the data, so a refit on the same data can reuse the dual's factors."""
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


class _MEDBase(BaseEstimator):
    """Shared machinery: hyper-parameter checks, the solve, fitted attributes."""

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_dual_cache", None)  # factors can be large; rebuilt on the next fit
        return state

    def _cached_dual(self, key, kernels, build, C, alpha):
        """The dual for ``key`` with box ``[0, C]`` and ``alpha``, re-using cached factors.

        Only C and alpha change along a regularisation path; the factors and kernel terms
        (feature columns, kernel rows, and whatever the solvers derive from them: per-task
        Gram blocks, kernel diagonals) depend on the data, kernels and epsilon alone.
        """
        cache = getattr(self, "_dual_cache", None)
        if cache is not None and cache[0] == key and cache[1] == kernels:
            return cache[2].replace(C=C, alpha=alpha)
        dual = build()
        self._dual_cache = (key, kernels, dual)
        return dual

    def _check_common(self):
        self._C = check_scalar_positive(self.C, "C")
        if self.method not in _solvers.METHODS:
            raise ValueError(f"unknown method {self.method!r}; available: {sorted(_solvers.METHODS)}")
        if self.max_iter is not None:
            if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
                raise ValueError(f"max_iter must be a positive integer; got {self.max_iter!r}")
        if self.tol is not None:
            check_scalar_positive(self.tol, "tol")
        if self.solver_options is not None and not isinstance(self.solver_options, dict):
            raise TypeError("solver_options must be a dict or None")

    def _solve(self, dual):
        warm = None
        prev = getattr(self, "_lam", None)
        if self.warm_start and prev is not None and prev.size == dual.n:
            warm = prev
        sol = _solvers.solve(dual, method=self.method, solver=self.solver, warm_start=warm,
                             max_iter=self.max_iter, tol=self.tol,
                             solver_options=self.solver_options)
        if sol.status == "max_iter":
            warnings.warn(
                f"{type(self).__name__}: {self.method!r} stopped at max_iter={sol.n_iter} before J "
                f"converged (last relative gain above tol); increase max_iter",
                ConvergenceWarning,
            )
        self._lam = sol.lam
        self.intercept_ = np.asarray(sol.intercepts, dtype=float)
        self.switch_posterior_ = np.asarray(sol.switch_posterior, dtype=float)
        self.objective_ = float(sol.objective)
        self.objective_path_ = np.asarray(sol.objective_path, dtype=float)
        self.n_iter_ = int(sol.n_iter)
        self.solver_status_ = sol.status
        return sol

    def _check_selection(self):
        if self.selection not in _SELECTIONS:
            raise ValueError(f"selection must be None, 'features' or 'kernels'; got {self.selection!r}")
        if self.selection == "features":
            if not isinstance(get_kernel(self.kernel), LinearKernel):
                raise ValueError("selection='features' switches linear features; use kernel='linear' "
                                 "(or selection='kernels' with a bank of kernels)")
        if self.selection == "kernels":
            if self.kernels is None:
                raise ValueError("selection='kernels' needs a bank of kernels in `kernels`")
            return get_kernels(self.kernels)
        return None


# ---------------------------------------------------------------------------------------
# Single task
# ---------------------------------------------------------------------------------------
class _SingleTaskMixin:
    def _build(self, X, signed_targets, regression):
        bank = self._check_selection()
        kernel = get_kernel(self.kernel)
        alpha = _resolve_alpha(self.alpha, self.rho)
        kw = dict(regression=regression, epsilon=getattr(self, "_epsilon", 0.0))

        def build():
            if self.selection is None:
                return svm_dual([X], [signed_targets], kernel, self._C, **kw)
            if self.selection == "features":
                return feature_selection_dual([X], [signed_targets], self._C, alpha, **kw)
            return kernel_selection_dual([X], [signed_targets], bank, self._C, alpha, **kw)

        key = (self.selection, regression, kw["epsilon"], _fingerprint([X, signed_targets]))
        kernels = [kernel] if bank is None else list(bank)
        dual = self._cached_dual(key, kernels, build, self._C, alpha if self.selection else 0.0)
        return dual, kernel, bank

    def _store_model(self, X, weights, kernel, bank):
        """Keep what prediction needs: ``coef_`` for linear models, else the training X."""
        self._kernel_obj, self._bank = kernel, bank
        s = self.switch_posterior_
        if self.selection == "features" or (self.selection is None and isinstance(kernel, LinearKernel)):
            w = _matvec(X.T, weights)
            self.coef_ = (s * w if self.selection == "features" else w).reshape(1, -1)
            self._X_fit = None
        else:
            self.coef_ = None
            self._X_fit = X
        self._weights = weights

    def _decision(self, X):
        if self.coef_ is not None:
            return _matvec(X, self.coef_.ravel()) + self.intercept_[0]
        if self.selection == "kernels":
            f = np.zeros(X.shape[0])
            for sd, k in zip(self.switch_posterior_, self._bank):
                f += sd * (k(X, self._X_fit) @ self._weights)
        else:
            f = self._kernel_obj(X, self._X_fit) @ self._weights
        return f + self.intercept_[0]


class MEDClassifier(_SingleTaskMixin, ClassifierMixin, _MEDBase):
    """Binary MED classifier: SVM, feature selection or kernel selection (JMLR Sections 5-7).

    Parameters
    ----------
    kernel : str, Kernel or callable, default="linear"
        Kernel of the MED SVM (``selection=None``); must be linear for feature selection.
    selection : {None, "features", "kernels"}, default=None
        ``None``: the MED SVM (equals the SVM dual); ``"features"``: one switch per feature;
        ``"kernels"``: one switch per kernel of ``kernels``.
    kernels : list of kernels, optional
        The bank for ``selection="kernels"`` (see :mod:`medmtl.kernels`).
    alpha : float, optional
        Prior odds of a switch being off, ``alpha >= 0`` (default 1). Larger is sparser.
    rho : float in (0, 1], optional
        Prior probability of a switch being on; ``alpha = (1 - rho) / rho``. Not with alpha.
    C : float, default=1.0
        Upper bound on the multipliers (slack penalty).
    method : str, default="auto"
        ``"auto"`` (the fastest correct method: Newton, or the direct QP for a narrow
        quadratic dual), ``"newton"`` (projected Newton, SMO subproblems), ``"bound"``
        (Algorithm 1) or ``"direct"`` (CVXPY, exponential cone), or any registered method.
    solver : str, optional
        Inner QP solver for ``"bound"`` (default ``"OSQP"``) or the CVXPY solver for
        ``"direct"`` (default ``"CLARABEL"``).
    max_iter : int, default=1000
        Outer iterations (Algorithm 1's bound steps, Newton steps); reaching it gives a
        ConvergenceWarning.
    tol : float, default=1e-12
        Relative gain in J below which Algorithm 1 stops.
    solver_options : dict, optional
        Passed to the (inner) solver.
    warm_start : bool, default=False
        Start from the previous fit's multipliers (projected onto the new box), e.g. along a
        path over ``C`` and ``alpha``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[0]`` is mapped to -1 and ``classes_[1]`` to +1.
    dual_coef_ : ndarray of shape (n_samples,)
        The multipliers ``lam`` (not multiplied by the labels).
    intercept_ : ndarray of shape (1,)
    switch_posterior_ : ndarray of shape (n_switches,)
        Posterior mean of each switch (empty for the plain SVM).
    coef_ : ndarray of shape (1, n_features) or None
        Posterior-mean weights for linear models (``None`` for non-linear kernels).
    objective_ : float
        Final dual objective J (``J(0) = 0``).
    objective_path_ : ndarray
        J at the start and after each iteration.
    n_iter_ : int
    solver_status_ : str
    n_features_in_ : int

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
    """

    def __init__(self, kernel="linear", selection=None, kernels=None, alpha=None, rho=None, C=1.0,
                 method="auto", solver=None, max_iter=1000, tol=1e-12, solver_options=None,
                 warm_start=False):
        self.kernel = kernel
        self.selection = selection
        self.kernels = kernels
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y):
        """Fit on ``X`` of shape (n_samples, n_features) and two-class labels ``y``."""
        self._check_common()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        n_classes = np.unique(y).size
        if n_classes > 2:
            raise ValueError(f"Only binary classification is supported. y has {n_classes} classes; "
                             "fit one MEDClassifier per pair or per class")
        self.classes_ = check_two_classes(y)
        ypm = np.where(y == self.classes_[1], 1.0, -1.0)
        dual, kernel, bank = self._build(X, ypm, regression=False)
        self._solve(dual)
        self.dual_coef_ = self._lam.copy()
        self._store_model(X, ypm * self._lam, kernel, bank)
        return self

    def decision_function(self, X):
        """Signed distance-like score; > 0 predicts ``classes_[1]``. Shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self._decision(X)

    def predict(self, X):
        """Predicted class labels, shape (n_samples,)."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class MEDRegressor(_SingleTaskMixin, RegressorMixin, _MEDBase):
    """MED epsilon-insensitive regression: SVR, feature selection or kernel selection (JMLR Section 9).

    The dual has two multipliers per example, ``lam`` and ``lam*``, with prediction
    ``f(x) = sum_t (lam_t - lam*_t) sum_d s_d k_d(x, x_t) + b``.

    Parameters
    ----------
    kernel, selection, kernels, alpha, rho, C, method, solver, max_iter, tol, solver_options,
    warm_start
        As in :class:`MEDClassifier`.
    epsilon : float, default=0.1
        Half-width of the insensitive tube.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (2, n_samples)
        Row 0 holds ``lam``, row 1 ``lam*``.
    intercept_, switch_posterior_, coef_, objective_, objective_path_, n_iter_,
    solver_status_, n_features_in_
        As in :class:`MEDClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
    >>> reg = MEDRegressor(selection="features", alpha=1.0, C=10.0, epsilon=0.01).fit(X, 2 * X[:, 0])
    >>> bool(abs(reg.predict([[1.5, 0.5]])[0] - 3.0) < 0.2)
    True
    """

    def __init__(self, kernel="linear", selection=None, kernels=None, alpha=None, rho=None, C=1.0,
                 epsilon=0.1, method="auto", solver=None, max_iter=1000, tol=1e-12,
                 solver_options=None, warm_start=False):
        self.kernel = kernel
        self.selection = selection
        self.kernels = kernels
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.epsilon = epsilon
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y):
        """Fit on ``X`` of shape (n_samples, n_features) and real targets ``y``."""
        self._check_common()
        self._epsilon = check_scalar_nonnegative(self.epsilon, "epsilon")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        y = check_real_targets(y, X.shape[0])
        dual, kernel, bank = self._build(X, y, regression=True)
        self._solve(dual)
        n = X.shape[0]
        self.dual_coef_ = self._lam.reshape(2, n).copy()
        self._store_model(X, self.dual_coef_[0] - self.dual_coef_[1], kernel, bank)
        return self

    def predict(self, X):
        """Predicted targets, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self._decision(X)


# ---------------------------------------------------------------------------------------
# Multi-task
# ---------------------------------------------------------------------------------------
def _check_task_inputs(Xs, ys=None, n_features=None):
    M, _ = check_task_lists(Xs, ys)
    Xs = [check_matrix(X, name=f"Xs[{m}]") for m, X in enumerate(Xs)]
    D = Xs[0].shape[1]
    for m, X in enumerate(Xs):
        if X.shape[1] != D:
            raise ValueError(f"Xs[{m}] has {X.shape[1]} features; task 0 has {D}")
    if n_features is not None and D != n_features:
        raise ValueError(f"X has {D} features, but the model was fitted with {n_features} features")
    return Xs, D


class _MultiTaskBase(_MEDBase):
    _regression = False

    def _fit_tasks(self, Xs, targets):
        bank = self._check_selection()
        kernel = get_kernel(self.kernel)
        alpha = _resolve_alpha(self.alpha, self.rho)
        kw = dict(regression=self._regression, epsilon=getattr(self, "_epsilon", 0.0))

        def build():
            if self.selection is None:
                return svm_dual(Xs, targets, kernel, self._C, **kw)
            if self.selection == "features":
                return feature_selection_dual(Xs, targets, self._C, alpha, **kw)
            return kernel_selection_dual(Xs, targets, bank, self._C, alpha, **kw)

        key = (self.selection, self._regression, kw["epsilon"], _fingerprint(list(Xs) + list(targets)))
        kernels = [kernel] if bank is None else list(bank)
        dual = self._cached_dual(key, kernels, build, self._C, alpha if self.selection else 0.0)
        self._solve(dual)
        self._kernel_obj, self._bank = kernel, bank
        # Per-task weights on the training examples: y * lam, or lam - lam* for regression.
        weights = []
        for m, g in enumerate(dual.groups):
            lam_m = self._lam[g]
            if self._regression:
                T = targets[m].size
                weights.append(lam_m[:T] - lam_m[T:])
            else:
                weights.append(targets[m] * lam_m)
        self._weights = weights
        linear = self.selection == "features" or (self.selection is None and isinstance(kernel, LinearKernel))
        if linear:
            W = np.vstack([_matvec(X.T, w) for X, w in zip(Xs, weights)])
            self.coef_ = W * self.switch_posterior_ if self.selection == "features" else W
            self._Xs_fit = None
        else:
            self.coef_ = None
            self._Xs_fit = Xs
        return dual

    def decision_function(self, Xs):
        """Per-task scores: a list of arrays, one of shape (n_m,) per task."""
        check_is_fitted(self)
        Xs, _ = _check_task_inputs(Xs, n_features=self.n_features_in_)
        if len(Xs) != self.n_tasks_:
            raise ValueError(f"got {len(Xs)} tasks; the model was fitted on {self.n_tasks_}")
        out = []
        for m, X in enumerate(Xs):
            if self.coef_ is not None:
                f = _matvec(X, self.coef_[m])
            elif self.selection == "kernels":
                f = np.zeros(X.shape[0])
                for sd, k in zip(self.switch_posterior_, self._bank):
                    f += sd * (k(X, self._Xs_fit[m]) @ self._weights[m])
            else:
                f = self._kernel_obj(X, self._Xs_fit[m]) @ self._weights[m]
            out.append(f + self.intercept_[m])
        return out


class MultiTaskMEDClassifier(_MultiTaskBase):
    """Multi-task ("meta") MED feature or kernel selection for M binary tasks (JMLR Sections 6-7).

    One switch vector is shared by all tasks; each task keeps its own weights and bias.

    Parameters
    ----------
    selection : {"features", "kernels", None}, default="features"
        ``None`` fits M independent MED SVMs with ``kernel`` (a baseline).
    kernels : list of kernels, optional
        Bank for ``selection="kernels"``.
    kernel : str, Kernel or callable, default="linear"
        Kernel for ``selection=None``.
    alpha, rho, C, method, solver, max_iter, tol, solver_options, warm_start
        As in :class:`MEDClassifier`.

    Attributes
    ----------
    classes_ : list of ndarray of shape (2,)
        Per task; ``classes_[m][1]`` is the positive class.
    dual_coef_ : ndarray of shape (n_total,)
        Multipliers of all tasks, stacked in the order given.
    intercept_ : ndarray of shape (n_tasks,)
    switch_posterior_ : ndarray of shape (n_switches,)
    coef_ : ndarray of shape (n_tasks, n_features) or None
    objective_, objective_path_, n_iter_, solver_status_, n_features_in_, n_tasks_

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
    """

    def __init__(self, selection="features", kernels=None, kernel="linear", alpha=None, rho=None,
                 C=1.0, method="auto", solver=None, max_iter=1000, tol=1e-12,
                 solver_options=None, warm_start=False):
        self.selection = selection
        self.kernels = kernels
        self.kernel = kernel
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start

    def fit(self, Xs, ys):
        """Fit on lists ``Xs`` (each (n_m, n_features)) and ``ys`` (two labels per task)."""
        self._check_common()
        Xs, D = _check_task_inputs(Xs, ys)
        classes, targets = [], []
        for m, (X, y) in enumerate(zip(Xs, ys)):
            y = np.asarray(y)
            if y.ndim != 1 or y.shape[0] != X.shape[0]:
                raise ValueError(f"ys[{m}] must be 1-D with {X.shape[0]} labels; got shape {y.shape}")
            check_classification_targets(y)
            c = check_two_classes(y, name="ys", task=m)
            classes.append(c)
            targets.append(np.where(y == c[1], 1.0, -1.0))
        self.n_features_in_, self.n_tasks_ = D, len(Xs)
        self.classes_ = classes
        self._fit_tasks(Xs, targets)
        self.dual_coef_ = self._lam.copy()
        return self

    def predict(self, Xs):
        """Per-task labels: a list of arrays."""
        check_is_fitted(self)
        return [c[(f > 0).astype(int)] for c, f in zip(self.classes_, self.decision_function(Xs))]

    def score(self, Xs, ys):
        """Mean over tasks of the per-task accuracy."""
        return float(np.mean([np.mean(p == np.asarray(y)) for p, y in zip(self.predict(Xs), ys)]))


class MultiTaskMEDRegressor(_MultiTaskBase):
    """Multi-task MED feature or kernel selection for epsilon-insensitive regression (JMLR Section 9).

    Parameters
    ----------
    selection : {"features", "kernels", None}, default="features"
    kernels, kernel, alpha, rho, C, method, solver, max_iter, tol, solver_options, warm_start
        As in :class:`MultiTaskMEDClassifier`.
    epsilon : float, default=0.1

    Attributes
    ----------
    dual_coef_ : ndarray of shape (2, n_total)
        Row 0 ``lam``, row 1 ``lam*``, tasks stacked in the order given.
    intercept_, switch_posterior_, coef_, objective_, objective_path_, n_iter_,
    solver_status_, n_features_in_, n_tasks_

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(15, 3)) for _ in range(2)]
    >>> ys = [2 * X[:, 1] for X in Xs]
    >>> reg = MultiTaskMEDRegressor(alpha=1.0, C=10.0, epsilon=0.01).fit(Xs, ys)
    >>> bool(reg.score(Xs, ys) > 0.99)
    True
    """

    _regression = True

    def __init__(self, selection="features", kernels=None, kernel="linear", alpha=None, rho=None,
                 C=1.0, epsilon=0.1, method="auto", solver=None, max_iter=1000, tol=1e-12,
                 solver_options=None, warm_start=False):
        self.selection = selection
        self.kernels = kernels
        self.kernel = kernel
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.epsilon = epsilon
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start

    def fit(self, Xs, ys):
        """Fit on lists ``Xs`` (each (n_m, n_features)) and real targets ``ys``."""
        self._check_common()
        self._epsilon = check_scalar_nonnegative(self.epsilon, "epsilon")
        Xs, D = _check_task_inputs(Xs, ys)
        targets = [check_real_targets(y, X.shape[0], name=f"ys[{m}]") for m, (X, y) in enumerate(zip(Xs, ys))]
        self.n_features_in_, self.n_tasks_ = D, len(Xs)
        dual = self._fit_tasks(Xs, targets)
        lam_rows = [self._lam[g].reshape(2, -1) for g in dual.groups]
        self.dual_coef_ = np.hstack(lam_rows)
        return self

    def predict(self, Xs):
        """Per-task predictions: a list of arrays."""
        return self.decision_function(Xs)

    def score(self, Xs, ys):
        """Mean over tasks of the per-task R^2."""
        return float(np.mean([r2_score(y, p) for p, y in zip(self.predict(Xs), ys)]))


class AdaptivePoolingClassifier(_MultiTaskBase):
    """MED adaptive pooling (JMLR Section 8): ``f_m(x) = s_m (own model) + (shared model) + b_m``.

    Each task's own model uses ``task_scale * k`` and the model shared by all tasks
    ``shared_scale * k``; the switch ``s_m`` decides how much task ``m`` specialises.
    ``alpha = 0`` mixes own and shared models equally; large ``alpha`` pools all tasks.

    Parameters
    ----------
    kernel : str, Kernel or callable, default="linear"
    shared_scale : float, default=1.0
    task_scale : float, optional
        Defaults to ``10 M`` (the paper's heuristic ``k_m = 10 M k``).
    alpha, rho, C, method, solver, max_iter, tol, solver_options, warm_start
        As in :class:`MEDClassifier`.

    Attributes
    ----------
    classes_, dual_coef_, intercept_, objective_, objective_path_, n_iter_, solver_status_,
    n_features_in_, n_tasks_
        As in :class:`MultiTaskMEDClassifier`.
    switch_posterior_ : ndarray of shape (n_tasks,)
        ``s_m``: confidence that task ``m`` uses its own model.
    coef_ : ndarray of shape (n_tasks, n_features) or None
        Per-task posterior-mean weights for the linear kernel.

    Examples
    --------
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

    def __init__(self, kernel="linear", shared_scale=1.0, task_scale=None, alpha=None, rho=None,
                 C=1.0, method="auto", solver=None, max_iter=1000, tol=1e-12,
                 solver_options=None, warm_start=False):
        self.kernel = kernel
        self.shared_scale = shared_scale
        self.task_scale = task_scale
        self.alpha = alpha
        self.rho = rho
        self.C = C
        self.method = method
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.warm_start = warm_start

    def fit(self, Xs, ys):
        """Fit on lists ``Xs`` (each (n_m, n_features)) and ``ys`` (two labels per task)."""
        self._check_common()
        shared = check_scalar_positive(self.shared_scale, "shared_scale")
        Xs, D = _check_task_inputs(Xs, ys)
        task = 10.0 * len(Xs) if self.task_scale is None else check_scalar_positive(self.task_scale, "task_scale")
        alpha = _resolve_alpha(self.alpha, self.rho)
        classes, targets = [], []
        for m, (X, y) in enumerate(zip(Xs, ys)):
            y = np.asarray(y)
            if y.ndim != 1 or y.shape[0] != X.shape[0]:
                raise ValueError(f"ys[{m}] must be 1-D with {X.shape[0]} labels; got shape {y.shape}")
            check_classification_targets(y)
            c = check_two_classes(y, name="ys", task=m)
            classes.append(c)
            targets.append(np.where(y == c[1], 1.0, -1.0))
        self.n_features_in_, self.n_tasks_ = D, len(Xs)
        self.classes_ = classes
        kernel = get_kernel(self.kernel)
        key = ("pooling", shared, task, _fingerprint(list(Xs) + list(targets)))
        dual = self._cached_dual(
            key, [kernel], lambda: adaptive_pooling_dual(Xs, targets, kernel, self._C, alpha, shared, task),
            self._C, alpha)
        self._solve(dual)
        self.dual_coef_ = self._lam.copy()
        self._kernel_obj = kernel
        self._scales = (shared, task)
        self._weights = [t * self._lam[g] for t, g in zip(targets, dual.groups)]
        if isinstance(kernel, LinearKernel):
            own = np.vstack([_matvec(X.T, w) for X, w in zip(Xs, self._weights)])
            shared_w = own.sum(axis=0)
            self.coef_ = task * self.switch_posterior_[:, None] * own + shared * shared_w
            self._Xs_fit = None
        else:
            self.coef_ = None
            self._Xs_fit = Xs
        return self

    def decision_function(self, Xs):
        """Per-task scores: a list of arrays, one of shape (n_m,) per task."""
        check_is_fitted(self)
        Xs, _ = _check_task_inputs(Xs, n_features=self.n_features_in_)
        if len(Xs) != self.n_tasks_:
            raise ValueError(f"got {len(Xs)} tasks; the model was fitted on {self.n_tasks_}")
        if self.coef_ is not None:
            return [_matvec(X, self.coef_[m]) + self.intercept_[m] for m, X in enumerate(Xs)]
        shared, task = self._scales
        k = self._kernel_obj
        out = []
        for m, X in enumerate(Xs):
            f_shared = sum(k(X, Xn) @ wn for Xn, wn in zip(self._Xs_fit, self._weights))
            f_own = k(X, self._Xs_fit[m]) @ self._weights[m]
            out.append(task * self.switch_posterior_[m] * f_own + shared * f_shared + self.intercept_[m])
        return out

    def predict(self, Xs):
        """Per-task labels: a list of arrays."""
        check_is_fitted(self)
        return [c[(f > 0).astype(int)] for c, f in zip(self.classes_, self.decision_function(Xs))]

    def score(self, Xs, ys):
        """Mean over tasks of the per-task accuracy."""
        return float(np.mean([np.mean(p == np.asarray(y)) for p, y in zip(self.predict(Xs), ys)]))
