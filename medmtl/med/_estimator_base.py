"""The one fit path of the MED estimators, and the two kinds of MED model they fit.

Every fit ends in per-task lists ``Xs``, ``ys``. The multi-task estimators take them in two
forms: the lists themselves, or one stacked ``X`` of shape (n_samples, n_features) with the
task of each row in ``tasks`` (the form scikit-learn's model selection splits correctly,
with ``tasks`` routed as metadata); a single-task estimator is the stacked form with one
task. A fit checks the hyper-parameters (one call), checks the data and takes its own
canonical copy, builds the dual of :mod:`medmtl.med.dual` (or re-uses the factors of the
previous fit on the same data), solves it with :func:`medmtl.med.solvers.solve`, and keeps
what prediction needs.

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
    canonical_sparse,
    check_binary_labels,
    check_feature_names,
    check_labels,
    check_real_targets,
    check_real_values,
    check_task_lists,
    check_tasks,
    is_task_list,
    refuse_iterator,
    refuse_task_lists_from_sklearn,
    rows_of_tasks,
    validate_params,
)
from ..kernels import KernelDistance, LinearKernel, WeightedSumKernel
from . import solvers as _solvers
from ._kernel_spec import (
    KERNEL_DOC,
    KERNEL_PARAMETERS,
    build_kernel,
    check_kernel_bank,
    check_kernel_range,
    is_precomputed,
    with_row_index,
)
from .bound import alpha_from_rho
from .builders import adaptive_pooling_dual, feature_selection_dual, kernel_selection_dual, svm_dual

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
        The solution method of :func:`medmtl.med.solvers.solve`: ``"auto"`` (``"cd"`` or
        Newton, whichever is faster for the dual), ``"newton"`` (projected Newton with SMO
        subproblems), ``"cd"`` (coordinate steps in feature space, for linear and feature
        models), ``"bound"`` (Algorithm 1), ``"direct"`` (CVXPY, exponential cone), or any
        registered method.
    solver : str, optional
        The method's inner solver: ``"SMO"`` for ``"newton"``, ``"OSQP"`` or any CVXPY QP
        solver for the QP steps of ``"bound"``, a CVXPY solver for ``"direct"``
        (``"CLARABEL"`` by default). ``None`` takes the method's default.
    max_iter : int >= 1 or None, default=1000
        The method's iteration limit (Newton steps, ``"cd"``'s passes, Algorithm 1's bound
        steps, the direct solver's iterations); reaching it gives a ConvergenceWarning. ``None`` leaves the
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
    objective_path_ : ndarray of shape (n_iterations + 1,)
        ``J`` at the start and after each iteration (``n_iterations`` is ``n_iter_``).
    n_iter_ : int
        Number of iterations the solution method ran.
    solver_status_ : str
        ``"converged"`` (``"optimal"`` for the direct solve, ``"rounding"`` when the KKT
        gap is at the rounding floor of the arithmetic) when the method met its stopping
        rule, else what stopped it, e.g. ``"max_iter"``.
    method_used_ : str
        The method that solved the dual (what ``method="auto"`` chose).
    solver_info_ : dict
        The method's own record (:attr:`MEDSolution.info <medmtl.med.solvers.MEDSolution>`):
        e.g. its KKT gap, ``duality_gap`` (a certified bound on how far ``objective_`` is
        below the optimum), and any hand-over to another method or fallback it took.
"""

SELECTION_PARAMETERS = {
    **KERNEL_PARAMETERS,
    "selection": [Options(None, "features", "kernels")],
    "kernels": [None, Checked(check_kernel_bank)],
}
POOLING_PARAMETERS = {
    **KERNEL_PARAMETERS,
    "shared_scale": [_POSITIVE],
    "task_scale": [None, _POSITIVE],
}
EPSILON_PARAMETER = {"epsilon": [Interval(Real, 0, None, closed="left")]}


LEARNED_DOC = """\
    learned_kernel_ : medmtl.kernels.WeightedSumKernel
        Only for ``selection="kernels"``: the learned kernel ``sum_d s_d k_d`` (the bank
        weighted by ``switch_posterior_``), a callable for ``SVC(kernel=...)`` or a Gram
        matrix.
    learned_metric_ : medmtl.kernels.KernelDistance
        Only for ``selection="kernels"``: the distance ``sqrt(sum_d s_d Delta_d^2)`` of
        that kernel's feature space (``metric(A, B)`` for ``metric="precomputed"``).
"""

_SHARED_DOCS = {"kernel": KERNEL_DOC, "prior": PRIOR_DOC, "solve": SOLVE_DOC, "solution": SOLUTION_DOC,
                "learned": LEARNED_DOC}


def shared_docs(cls=None, *, markers=("kernel", "prior", "solve", "solution")):
    """Class decorator: the descriptions every MED estimator shares, into its docstring.

    The docstring's lines ``{kernel}``, ``{prior}``, ``{solve}``, ``{solution}`` and
    ``{learned}`` become ``KERNEL_DOC``, ``PRIOR_DOC``, ``SOLVE_DOC``, ``SOLUTION_DOC`` and
    ``LEARNED_DOC``. Every marker of
    ``markers`` must be there (``@shared_docs(markers=("prior", "solve", "solution"))``
    for an estimator without a kernel).
    """
    if cls is None:
        return lambda c: shared_docs(c, markers=markers)
    doc = cls.__doc__
    for marker in markers:
        line = "    {" + marker + "}\n"
        if line not in doc:
            raise ValueError(f"{cls.__name__}'s docstring has no line {line.strip()}")
        doc = doc.replace(line, _SHARED_DOCS[marker])
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


def _fingerprint(arrays):
    """A digest of the data, so that a refit on the same data can re-use the dual's factors."""
    h = hashlib.sha1()
    for A in arrays:
        if sp.issparse(A):
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


def _rows(X, rows):
    """The rows ``rows`` of ``X`` (``X`` itself when they are all of its rows, in order)."""
    if rows.size == X.shape[0] and np.array_equal(rows, np.arange(X.shape[0])):
        return X
    return X[rows]


def _refuse_unreal(X, name):
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


def _owned(X):
    """A copy of dense or sparse ``X`` in its own memory (dense layout kept)."""
    return X.copy() if sp.issparse(X) else np.array(X, order="K")


_STACKED_ADVICE = ("Pass the stacked form instead: X of shape (n_samples, n_features) with the task of each "
                   "row in tasks= (medmtl.model_selection.stack_tasks builds it from lists), and enable "
                   "scikit-learn's metadata routing (sklearn.set_config(enable_metadata_routing=True)) so "
                   "that its tools pass tasks on.")


class MEDEstimator(BaseEstimator):
    """Base of the MED estimators: the one fit path over per-task lists.

    A subclass sets ``_parameter_constraints`` and mixes in a kind of targets
    (:class:`BinaryTargets` or :class:`RealTargets`: how targets are checked, encoded and
    decoded) and a model (:class:`SwitchedKernelModel` or :class:`PoolingModel`), which
    says which kernels it uses (``_kernels``), what the dual's factors depend on besides the
    data (``_dual_key``), whether it predicts by ``coef_`` alone (``_is_linear``), and how
    to build the dual (``_build_dual``), keep the fit (``_store_model``) and score a task
    from kept training inputs (``_kernel_scores``).

    Both input forms end in :meth:`_fit_tasks`: :meth:`_fit_stacked` (one ``X``, the task
    of each row in ``tasks``; a single-task estimator has one task) and, for the multi-task
    estimators, :meth:`MultiTaskAPI.fit` on per-task lists.
    """

    _regression = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = is_precomputed(self.kernel)
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

    # -- the stacked form ----------------------------------------------------------------
    def _fit_stacked(self, X, y, tasks=None):
        """Fit on one ``X`` with the task of each row in ``tasks`` (``None``: one task).

        Returns the sorted task labels.
        """
        params = self._validate_params()
        _refuse_unreal(X, "X")
        refuse_iterator(y, "y")
        if self._regression and y is not None:
            _refuse_unreal(y, "y")
        elif y is not None and np.asarray(y).dtype.kind == "c":
            raise ValueError("Complex data not supported: y holds complex numbers; use integers or strings as labels")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=self._regression)
        if sp.issparse(X):
            X = canonical_sparse(X)
        labels, rows = check_tasks(tasks, X.shape[0])
        targets = self._encode_stacked(y, rows, labels)
        if is_precomputed(params["kernel"]):
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"kernel='precomputed' needs the square Gram matrix of the training examples; "
                                 f"X has shape {X.shape}")
            X = with_row_index(X, np.arange(X.shape[0]))
        self._fit_tasks(params, [_rows(X, r) for r in rows], targets)
        return labels

    def _stacked_rows(self, X, tasks):
        """Checked prediction inputs ``X`` and each fitted task's rows of it."""
        check_is_fitted(self)
        _refuse_unreal(X, "X")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        if sp.issparse(X):
            X = canonical_sparse(X)
        return X, rows_of_tasks(self._task_labels, tasks, X.shape[0], type(self).__name__)

    def _stacked_scores(self, X, rows):
        """Decision values of the rows of ``X``, each by its task's model, shape (n_samples,)."""
        f = np.empty(X.shape[0])
        for m, r in enumerate(rows):
            if r.size:
                f[r] = self._task_scores(_rows(X, r), m)
        return f

    # -- one fit for both forms ----------------------------------------------------------
    def _fit_tasks(self, params, Xs, targets):
        """Fit on checked per-task inputs ``Xs`` and encoded targets (+-1 labels or reals)."""
        if not is_precomputed(params["kernel"]):
            check_kernel_range(Xs, None)
        params = self._with_kernels(params, Xs)
        check_kernel_range(Xs, self._kernels(params))
        dual, Xs = self._dual(params, Xs, targets)
        self._solve(dual)
        weights = [_example_weights(self._lam[g], t, self._regression) for g, t in zip(dual.groups, targets)]
        self._store_model(params, Xs, weights)
        if self._regression:
            self.dual_coef_ = np.hstack([self._lam[g].reshape(2, -1) for g in dual.groups])
        else:
            self.dual_coef_ = self._lam.copy()

    @staticmethod
    def _with_kernels(params, Xs):
        """``params`` with ``kernel`` (and ``kernels``) built for the training inputs ``Xs``."""
        params = dict(params)
        params["kernel"] = build_kernel(params["kernel"], params, Xs)
        if params.get("kernels") is not None:
            params["kernels"] = [build_kernel(k, params, Xs) for k in params["kernels"]]
        return params

    def _dual(self, params, Xs, targets):
        """The dual for this data, re-using the factors of the previous fit on the same data.

        Only C and alpha change along a regularisation path; the factors and kernel terms
        (feature columns, kernel rows, and whatever the solvers derive from them: per-task
        Gram blocks, kernel diagonals) depend on the data, the kernels and epsilon alone.
        The dual and the model are built on copies of the inputs, made once with the
        factors: nothing the caller does to ``Xs`` later changes the fitted model (nor a
        later fit that finds the factors in the cache).

        Returns
        -------
        dual : MEDDual
        Xs : list
            The copies.
        """
        key = self._dual_key(params) + (_fingerprint(list(Xs) + list(targets)),)
        cache = getattr(self, "_dual_cache", None)
        if cache is not None and cache[0] == key:
            _, dual, copies = cache
            # a dual without switched terms keeps its alpha of 0
            dual = dual.replace(C=params["C"], alpha=params["alpha"] if dual.n_terms else None)
        else:
            copies = [_owned(X) for X in Xs]
            dual = self._build_dual(params, copies, targets)
            self._dual_cache = (key, dual, copies)
        return dual, copies

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
        self.method_used_ = sol.method
        self.solver_info_ = dict(sol.info)

    def _task_scores(self, X, m):
        """Decision values of task ``m``'s model for ``X``, shape (n_samples,).

        Values that overflow the float range are an error: the inputs are too large for
        the kernel, and NaN would pass for a prediction.
        """
        if self.coef_ is not None:
            f = _matvec(X, self.coef_[m]) + self.intercept_[m]
        else:
            f = self._kernel_scores(X, m) + self.intercept_[m]
        if not np.all(np.isfinite(f)):
            values = X.data if sp.issparse(X) else X
            raise ValueError(f"{type(self).__name__}: decision values overflow the float range for "
                             f"{int(np.sum(~np.isfinite(f)))} of {f.size} rows: inputs with entries up to "
                             f"|x| = {np.abs(values).max():.3g} are too large for the model. Rescale X as the "
                             "training inputs were")
        return f


class BinaryTargets:
    """Targets of the binary classifiers: two labels per task, encoded as -1 / +1.

    ``classes_`` is one array of two labels when fitted on one ``X`` (every task has both),
    and a list of each task's two labels when fitted on per-task lists.
    """

    def _encode_stacked(self, y, rows, labels):
        classes, signs = check_binary_labels(y, y.shape[0])
        for m, r in enumerate(rows):
            if np.unique(signs[r]).size < 2:
                raise ValueError(f"task {labels.tolist()[m]!r} has only one class "
                                 f"({classes.tolist()[int(signs[r[0]] > 0)]!r}); every task needs examples of both "
                                 "classes")
        self.classes_ = classes
        self._task_classes = [classes] * len(rows)
        return [signs[r] for r in rows]

    def _encode_lists(self, Xs, ys):
        encoded = [check_binary_labels(y, X.shape[0], name="ys", task=m) for m, (X, y) in enumerate(zip(Xs, ys))]
        self.classes_ = self._task_classes = [classes for classes, _ in encoded]
        return [signs for _, signs in encoded]

    def _decode(self, f, m):
        return _labels(self._task_classes[m], f)

    @staticmethod
    def _true_targets(y, n_samples, name):
        return check_labels(y, n_samples, name)

    @staticmethod
    def _task_score(y, labels):
        return float(np.mean(labels == y))


class RealTargets:
    """Targets of the regressors: real values."""

    _regression = True

    @staticmethod
    def _encode_stacked(y, rows, labels):
        y = check_real_targets(y)
        return [y[r] for r in rows]

    @staticmethod
    def _encode_lists(Xs, ys):
        return [check_real_targets(y, X.shape[0], name=f"ys[{m}]") for m, (X, y) in enumerate(zip(Xs, ys))]

    @staticmethod
    def _decode(f, m):
        return f

    @staticmethod
    def _true_targets(y, n_samples, name):
        return check_real_targets(y, n_samples, name)

    @staticmethod
    def _task_score(y, predictions):
        return float(r2_score(y, predictions))


class SingleTaskAPI:
    """``fit`` and ``predict`` of a single-task estimator (the stacked form with one task)."""

    def fit(self, X, y):
        """Fit on one task.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or, for ``kernel="precomputed"``, the Gram matrix of shape (n_samples, n_samples).
        y : array-like of shape (n_samples,)
            Two distinct labels (classifier) or real targets (regressor).

        Returns
        -------
        self
        """
        self._task_labels = self._fit_stacked(X, y)
        return self

    def predict(self, X):
        """Predicted class labels (classifier) or targets (regressor).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or, for ``kernel="precomputed"``, kernel values of shape (n_samples, n_train).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X, rows = self._stacked_rows(X, None)
        return self._decode(self._stacked_scores(X, rows), 0)


class MultiTaskAPI:
    """``fit``, ``predict`` and ``score`` of a multi-task estimator (classifiers add
    :class:`MultiTaskDecisionFunction`).

    Each takes either form of the inputs:

    * stacked: ``X`` of shape (n_samples, n_features) and ``tasks`` of shape (n_samples,),
      the task label (an integer or a string) of each row; results are arrays over the
      rows. ``tasks`` is requested as metadata by default, so that scikit-learn's
      ``cross_val_score``, ``GridSearchCV`` and ``Pipeline`` pass it on (with their
      metadata routing enabled) and split each task's examples;
    * per-task lists ``Xs``, ``ys`` (one entry per task, in the order of fitting); results
      are lists. scikit-learn cannot split this form, and refuses it with an error.
    """

    __metadata_request__fit = {"tasks": True}
    __metadata_request__predict = {"tasks": True}
    __metadata_request__score = {"tasks": True}

    def _check_lists(self, method, Xs, tasks, ys=None):
        """Checked per-task inputs; at fit (``ys`` given) their column names become
        ``feature_names_in_``, after fit they are checked against it."""
        refuse_task_lists_from_sklearn(type(self).__name__, method, _STACKED_ADVICE)
        if tasks is not None:
            raise ValueError("tasks= goes with one stacked X; per-task lists give each task's rows "
                             "in their own entry")
        if ys is None:
            check_is_fitted(self)
            checked = check_task_lists(Xs, n_features=self.n_features_in_, n_tasks=self.n_tasks_)
        else:
            checked = check_task_lists(Xs, ys)
        check_feature_names(self, Xs, reset=ys is not None)
        return checked

    def fit(self, X, y, tasks=None):
        """Fit on all tasks jointly.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or list
            The inputs of all tasks stacked (for ``kernel="precomputed"``, their Gram
            matrix, (n_samples, n_samples)); or a list with one (n_m, n_features) matrix
            per task.
        y : array-like of shape (n_samples,), or list
            The targets of the rows; or a list with one (n_m,) array per task. A
            classifier needs two labels per task.
        tasks : array-like of shape (n_samples,), optional
            The task of each row of a stacked ``X`` (integers or strings); ``None`` makes
            all rows one task.

        Returns
        -------
        self
        """
        if not is_task_list(X):
            self.tasks_ = self._task_labels = self._fit_stacked(X, y, tasks)
            self.n_tasks_ = self.tasks_.size
            return self
        params = self._validate_params()
        Xs = self._check_lists("fit", X, tasks, y)
        self.n_features_in_, self.n_tasks_ = Xs[0].shape[1], len(Xs)
        targets = self._encode_lists(Xs, y)
        if is_precomputed(params["kernel"]):
            Xs = self._indexed_grams(Xs)
        self.tasks_ = self._task_labels = np.arange(len(Xs))
        self._fit_tasks(params, Xs, targets)
        return self

    @staticmethod
    def _indexed_grams(Xs):
        """Per-task rows of the training Gram matrix, each with its column (tasks stacked)."""
        n = sum(X.shape[0] for X in Xs)
        starts = np.cumsum([0] + [X.shape[0] for X in Xs])
        for m, X in enumerate(Xs):
            if X.shape[1] != n:
                raise ValueError(f"kernel='precomputed': Xs[{m}] must hold the kernel values against all "
                                 f"{n} training examples (tasks stacked); it has {X.shape[1]} columns")
        return [with_row_index(X, np.arange(a, a + X.shape[0])) for X, a in zip(Xs, starts)]

    def _values(self, method, X, tasks):
        """Decision values: an array over the rows of a stacked ``X``, or a list over tasks."""
        if is_task_list(X):
            return [self._task_scores(Xm, m) for m, Xm in enumerate(self._check_lists(method, X, tasks))]
        X, rows = self._stacked_rows(X, tasks)
        return self._stacked_scores(X, rows)

    def predict(self, X, tasks=None):
        """Predictions (labels for a classifier, values for a regressor), each row by its task.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or list
            Stacked rows of any fitted tasks; or a list with one matrix per task, in the
            order of fitting.
        tasks : array-like of shape (n_samples,), optional
            The task of each row; may be left out for a model of one task.

        Returns
        -------
        ndarray of shape (n_samples,), or list of ndarray of shape (n_m,)
        """
        if is_task_list(X):
            Xs = self._check_lists("predict", X, tasks)
            return [self._decode(self._task_scores(Xm, m), m) for m, Xm in enumerate(Xs)]
        X, rows = self._stacked_rows(X, tasks)
        return self._stacked_predictions(X, rows)

    def _stacked_predictions(self, X, rows):
        f = self._stacked_scores(X, rows)
        present = [(m, r) for m, r in enumerate(rows) if r.size]
        parts = [self._decode(f[r], m) for m, r in present]
        out = np.empty(X.shape[0], dtype=np.result_type(*parts) if parts else float)
        for part, (_, r) in zip(parts, present):
            out[r] = part
        return out

    def score(self, X, y, tasks=None):
        """Mean over tasks of each task's accuracy (classifier) or R^2 (regressor).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or list
            As :meth:`predict` takes it.
        y : array-like of shape (n_samples,), or list
            The true targets.
        tasks : array-like of shape (n_samples,), optional

        Returns
        -------
        float
            The unweighted mean over the tasks present in ``X``.
        """
        if is_task_list(X):
            Xs = self._check_lists("score", X, tasks)
            refuse_iterator(y, "y")
            if isinstance(y, str) or not hasattr(y, "__len__"):
                raise TypeError(f"y must be a list with one array of targets per task, as X is; got {type(y).__name__}")
            if len(y) != len(Xs):
                raise ValueError(f"X has {len(Xs)} tasks but y has {len(y)}")
            ys = [self._true_targets(yt, Xm.shape[0], f"y[{m}]") for m, (Xm, yt) in enumerate(zip(Xs, y))]
            return float(np.mean([self._task_score(yt, self._decode(self._task_scores(Xm, m), m))
                                  for m, (Xm, yt) in enumerate(zip(Xs, ys))]))
        X, rows = self._stacked_rows(X, tasks)
        predictions = self._stacked_predictions(X, rows)
        y = self._true_targets(y, X.shape[0], "y")
        return float(np.mean([self._task_score(y[r], predictions[r]) for r in rows if r.size]))


class MultiTaskDecisionFunction:
    """``decision_function`` of the multi-task classifiers, in either form of the inputs."""

    __metadata_request__decision_function = {"tasks": True}

    def decision_function(self, X, tasks=None):
        """Signed scores, each row by its task's model; positive predicts the task's second class.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or list
            Stacked rows of any fitted tasks; or a list with one matrix per task, in the
            order of fitting.
        tasks : array-like of shape (n_samples,), optional
            The task of each row; may be left out for a model of one task.

        Returns
        -------
        ndarray of shape (n_samples,), or list of ndarray of shape (n_m,)
        """
        return self._values("decision_function", X, tasks)


class SwitchedKernelModel:
    """The model of the SVM, feature selection and kernel selection (single or multi-task).

    One switch per feature or kernel, shared by all tasks; each task its own weights and
    bias. ``selection=None`` has no switches: one SVM per task with ``kernel``.
    """

    @staticmethod
    def _check_model_params(params, owner):
        kernel = params["kernel"]
        if params["selection"] == "features" and not (kernel == "linear" or isinstance(kernel, LinearKernel)):
            raise InvalidParameterError(
                f"{owner}: selection='features' switches linear features; use kernel='linear' "
                "(or selection='kernels' with a bank of kernels)")
        if params["selection"] == "kernels" and params["kernels"] is None:
            raise InvalidParameterError(f"{owner}: selection='kernels' needs a bank of kernels in `kernels`")
        if params["selection"] == "kernels" and is_precomputed(kernel):
            raise InvalidParameterError(f"{owner}: kernel='precomputed' gives the inputs as one Gram matrix, which "
                                        "selection='kernels' cannot take; use selection=None")

    @staticmethod
    def _kernels(params):
        """The kernels whose sum, each weighted by its switch, is the model."""
        return params["kernels"] if params["selection"] == "kernels" else [params["kernel"]]

    def _dual_key(self, params):
        return (params["selection"], self._regression, params.get("epsilon", 0.0), tuple(self._kernels(params)))

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
        if params["selection"] == "kernels":
            # the kernel and the metric the tasks learned together: the bank weighted by
            # the switch posteriors
            self.learned_kernel_ = WeightedSumKernel(params["kernels"], self.switch_posterior_)
            self.learned_metric_ = KernelDistance(params["kernels"], self.switch_posterior_)
        else:
            self.__dict__.pop("learned_kernel_", None)
            self.__dict__.pop("learned_metric_", None)
        if self._is_linear(params):
            W = np.vstack([_matvec(X.T, w) for X, w in zip(Xs, weights)])
            self.coef_ = W * self.switch_posterior_ if params["selection"] == "features" else W
            self._Xs_fit = self._weights = self._kernel_terms = None
            return
        self.coef_ = None
        self._Xs_fit, self._weights = Xs, weights
        switches = self.switch_posterior_ if params["selection"] == "kernels" else [1.0]
        self._kernel_terms = list(zip(switches, self._kernels(params)))

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

    @staticmethod
    def _kernels(params):
        return [params["kernel"]]

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
