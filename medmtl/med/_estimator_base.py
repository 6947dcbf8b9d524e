"""The one fit path of the MED estimators, and their public methods.

Every MED estimator fits the same way (:meth:`MEDBase._fit`): its hyper-parameters are
checked once, the solution method among them resolved into a
:class:`~medmtl.med.solvers.Plan` (:meth:`MEDBase._check_params`); the data are checked
at the door and the dual is built on the estimator's own copies of them
(:meth:`MEDBase._problem`); the plan solves the dual; and the estimator keeps what
prediction needs from the solution (:meth:`MEDBase._store`). :func:`medmtl.med.med_path`
takes the same steps, building the dual once for a whole path of ``C`` and ``alpha``.

The estimators of :mod:`medmtl.med.estimators` are composed rather than stacked from
mixins: each is a :class:`MEDEstimator` with the public methods of one task or of several
(:class:`SingleTaskMethods`, :class:`MultiTaskMethods`: which inputs they take), a model
kind (:class:`~medmtl.med._model_kinds.ModelKind`: what its dual is, what it keeps, how it
scores) and a target kind (:class:`~medmtl.med._targets.TargetKind`: labels or real
values). A single-task estimator is the multi-task one with M = 1.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import TransformerTags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._params import InvalidParameterError, validate_params
from ._feature_support import FeatureSupport, _selects_features
from ._kernel_spec import check_kernel_range, gram_bank, is_gram_list, is_precomputed
from ._task_inputs import owned, prediction_inputs, refuse_unrouted_tasks, training_data
from .bound import alpha_from_rho
from .solvers import MEDSolution, plan
from .solvers.kkt import duality_gap

# Decisions above round-off: values within this multiple of the solve's KKT tolerance (relative
# to their scale) are ties (see evidence_resolution).
_TIE_FACTOR = 10.0
# The KKT tolerance of the methods that declare none (Algorithm 1, the direct solve).
_KKT_TOL = 1e-6
# How far given multipliers may be outside the feasible set (relative to the box) to be
# round-off of a solver's answer.
_FEASIBLE_RTOL = 1e-6

__all__ = ["Problem", "MEDBase", "MEDEstimator", "SingleTaskMethods", "MultiTaskMethods", "BinaryClassifierMixin"]


def evidence_resolution(dual, q, kkt_tol):
    """How finely a solve resolves the switched terms' evidence ``q_d``.

    ``_TIE_FACTOR * kkt_tol`` times the largest ``q_d``, and no finer than that fraction
    squared of the largest ``q_d`` the box allows (:meth:`MEDDual.term_quad_bound`). The
    solvers stop on the KKT gap relative to the multipliers' scale, so their error in ``q``
    follows ``q``'s own scale (``C^2`` for a small box), not an absolute one: evidences within
    the resolution of 0 tie with the prior, and within it of each other are one value.

    Parameters
    ----------
    dual : MEDDual
    q : ndarray of shape (D,)
        ``dual.term_quads(lam)`` at the solve's answer.
    kkt_tol : float
        The solve's KKT tolerance.

    Returns
    -------
    float
    """
    tie = _TIE_FACTOR * kkt_tol
    return tie * max(float(np.max(q, initial=0.0)), tie * dual.term_quad_bound())


class Problem(NamedTuple):
    """What a fit solves: the dual, built on the estimator's own copies of the data.

    ``dual`` (a :class:`~medmtl.med.dual.MEDDual`), ``Xs`` (each task's training inputs,
    the copies the dual was built on), ``targets`` (each task's encoded targets),
    ``model`` (the :class:`~medmtl.med._model_kinds.ModelKind` made for these inputs, or
    None for a model without kinds) and ``box`` (each multiplier's sample weight, its upper
    bound ``C * box``; None for unit weights).
    """

    dual: object
    Xs: list
    targets: list
    model: object = None
    box: object = None

    def at(self, C, alpha):
        """The dual at ``C`` and ``alpha``, each upper bound ``C`` times its weight.

        Parameters
        ----------
        C, alpha : float or None
            None keeps the dual's own.

        Returns
        -------
        MEDDual
        """
        dual = self.dual.replace(C=C, alpha=alpha)
        if C is not None and self.box is not None:
            dual.hi = float(C) * self.box
        return dual


def _prior_odds(alpha, rho, owner):
    """The prior odds ``alpha`` of a switch being off, from ``alpha`` or ``rho`` (not both).

    Neither given means ``alpha = 1``: a switch is on or off with equal prior probability.
    """
    if rho is None:
        return 1.0 if alpha is None else alpha
    if alpha is not None:
        raise InvalidParameterError(f"{owner}: give alpha or rho, not both (alpha = (1 - rho) / rho)")
    return alpha_from_rho(rho)


def _solution_plan(params, owner):
    """The method, its inner solver and its options, each checked once, as a Plan.

    ``max_iter`` and ``tol`` join the options only when given: ``None`` leaves the
    method's own default.
    """
    options = dict(params.pop("solver_options") or {})
    given_twice = sorted({"max_iter", "tol"} & set(options))
    if given_twice:
        raise InvalidParameterError(f"{owner}: set {', '.join(given_twice)} with the estimator's own "
                                    f"parameter, not in solver_options")
    for name in ("max_iter", "tol"):
        value = params.pop(name)
        if value is not None:
            options[name] = value
    try:
        return plan(params.pop("method"), solver=params.pop("solver"), options=options)
    except (ValueError, TypeError) as err:
        raise InvalidParameterError(f"{owner}: {err}") from err


class MEDBase(BaseEstimator, ABC):
    """Base of every MED estimator: the one fit path.

    A subclass declares its parameters once (``_parameter_constraints``, and an
    ``__init__`` that stores them), checks the data and builds the dual in
    :meth:`_problem`, and keeps what prediction needs in :meth:`_store`.
    """

    def _set_init_params(self, arguments):
        """Store ``__init__``'s arguments unchanged, and nothing else (scikit-learn's contract)."""
        for name in self._get_param_names():
            setattr(self, name, arguments[name])

    def _check_params(self, rules=None):
        """Every hyper-parameter checked against ``_parameter_constraints``: the one check
        of a fit, before the data are looked at.

        Parameters
        ----------
        rules : callable, optional
            ``rules(params, owner)`` raises for values allowed alone but not together.

        Returns
        -------
        dict
            The parsed parameters, with ``alpha`` the prior odds resolved from ``alpha`` or
            ``rho`` (``rho`` removed), and ``plan``, the :class:`~medmtl.med.solvers.Plan`
            of ``method``, ``solver``, ``max_iter``, ``tol`` and ``solver_options`` (which
            are removed: the fit runs the plan).

        Raises
        ------
        InvalidParameterError
            Naming the estimator and the parameter.
        """
        owner = type(self).__name__
        params = validate_params(self.get_params(deep=False), self._parameter_constraints, owner)
        params["alpha"] = _prior_odds(params["alpha"], params.pop("rho"), owner)
        if rules is not None:
            rules(params, owner)
        params["plan"] = _solution_plan(params, owner)
        return params

    @abstractmethod
    def _problem(self, params, X, y, tasks):
        """Check the training data and build the dual for ``params``; return a :class:`Problem`.

        Sets what the door learns about the data (``n_features_in_``, ``classes_``, ...).
        An estimator whose ``fit`` takes ``sample_weight`` takes it here as a keyword.
        """

    @abstractmethod
    def _store(self, params, problem, solution):
        """Keep what prediction needs from ``solution``, a :class:`MEDSolution` of ``problem``."""

    def _fit(self, X, y=None, tasks=None, sample_weight=None):
        params = self._check_params()
        weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
        problem = self._problem(params, X, y, tasks, **weighted)
        solution = params["plan"].solve(problem.dual, self._warm_start_point(params, problem.dual))
        self._store(params, problem, solution)
        return self

    def _warm_start_point(self, params, dual):
        """The previous fit's multipliers when ``warm_start`` is set and they fit ``dual``."""
        lam = getattr(self, "_lam", None)
        return lam if params["warm_start"] and lam is not None and lam.size == dual.n else None

    def _record_solution(self, solution):
        """The attributes every MED estimator has from its solution."""
        self._lam = solution.lam
        self.intercept_ = np.asarray(solution.intercepts, dtype=float)
        self.switch_posterior_ = np.asarray(solution.switch_posterior, dtype=float)
        self.objective_ = float(solution.objective)
        self.objective_path_ = np.asarray(solution.objective_path, dtype=float)
        self.n_iter_ = int(solution.n_iter)
        self.solver_status_ = solution.status
        self.method_used_ = solution.method
        self.solver_info_ = dict(solution.info)


class BinaryClassifierMixin(ClassifierMixin):
    """scikit-learn's classifier mixin for two classes per task."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


def _is_classifier(estimator):
    return not estimator._target_kind.regression


class MEDEstimator(FeatureSupport, MEDBase):
    """A MED estimator over tasks, composed of a model kind and a target kind.

    A subclass names them in ``_model_kind`` (a :class:`~medmtl.med._model_kinds.ModelKind`)
    and ``_target_kind`` (a :class:`~medmtl.med._targets.TargetKind`), and takes its public
    methods from :class:`SingleTaskMethods` or :class:`MultiTaskMethods` (whose ``_lists``
    says that it takes per-task lists too).
    """

    _model_kind = None
    _target_kind = None
    _lists = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = is_precomputed(self.kernel) or is_gram_list(getattr(self, "kernels", None))
        if _selects_features(self):
            # a feature selector too (transform), as scikit-learn's checks and Pipeline see it
            tags.transformer_tags = TransformerTags(preserves_dtype=["float64"])
        return tags

    def _check_params(self):
        return super()._check_params(rules=self._check_together)

    def _check_together(self, params, owner):
        self._model_kind.check_params(params, owner)
        if is_gram_list(params.get("kernels")) and params.get("selection") != "kernels":
            raise InvalidParameterError(f"{owner}: kernels='precomputed' (X a list of Gram matrices, one per "
                                        "kernel) needs selection='kernels'")

    def _problem(self, params, X, y, tasks, sample_weight=None):
        precomputed = is_precomputed(params["kernel"])
        grams = is_gram_list(params.get("kernels"))
        data = training_data(self, X, y, tasks, target_kind=self._target_kind, precomputed=precomputed,
                             lists=self._lists, sample_weight=sample_weight, gram_list=grams)
        self._grams = None
        if grams:
            # the bank: one lookup per Gram matrix, in the order of the list
            n_train = sum(X.shape[0] for X in data.Xs)
            self._grams = ((data.Xs[0].shape[1] - 1) // n_train, n_train)
            params = {**params, "kernels": gram_bank(*self._grams)}
            precomputed = True
        self._target = data.target
        for name, value in data.target.attributes().items():
            setattr(self, name, value)
        self._task_labels = data.labels
        if self._lists:
            self.tasks_, self.n_tasks_ = data.labels, data.labels.size
        if not precomputed:
            check_kernel_range(data.Xs, None)
        model = self._model_kind.for_training(params, data.Xs, self._target_kind.regression)
        check_kernel_range(data.Xs, model.kernels)
        # the dual and the model on copies, so that nothing the caller does to the inputs
        # later changes the fitted model
        Xs = [owned(X) for X in data.Xs]
        self._kkt_tol = params["plan"].options.get("kkt_tol", _KKT_TOL)
        dual = model.build_dual(Xs, data.targets, params["C"], params["alpha"])
        if data.weights is None:
            return Problem(dual, Xs, data.targets, model)
        # one weight per multiplier: a regression task has two per example, lam then lam*
        per_task = data.weights if not self._target_kind.regression else [np.tile(w, 2) for w in data.weights]
        box = np.concatenate(per_task)
        problem = Problem(dual, Xs, data.targets, model, box)
        return problem._replace(dual=problem.at(params["C"], None))

    def _store(self, params, problem, solution):
        self._record_solution(solution)
        groups = problem.dual.groups
        weights = [self._target.example_weights(solution.lam[g], t) for g, t in zip(groups, problem.targets)]
        self._model, attributes = problem.model.keep(problem.Xs, weights, self.switch_posterior_)
        for name in problem.model.attributes:
            self.__dict__.pop(name, None)
        for name, value in attributes.items():
            setattr(self, name, value)
        self.dual_coef_ = self._target.dual_coef(solution.lam, groups)
        # the program behind the model, without the solvers' caches
        self.dual_ = problem.dual.detached()
        self._solved = problem._replace(dual=self.dual_)
        self._support = None
        if getattr(self, "selection", None) in ("features", "kernels"):
            # a switch whose evidence is within the solve's resolution of 0 ties with its prior
            q = self.dual_.term_quads(solution.lam)
            self._support = q > evidence_resolution(self.dual_, q, self._kkt_tol)
        self.__dict__.pop("kernel_weights_", None)
        if getattr(self, "selection", None) == "kernels":
            # the learned kernel sum_d s_d k_d with weights summing to 1 (shared by the tasks)
            self.kernel_weights_ = self.switch_posterior_ / self.switch_posterior_.sum()

    def set_multipliers(self, lam, intercepts=None):
        """Make this fitted estimator the model of the multipliers ``lam`` of :attr:`dual_`.

        The multipliers may come from any solve of ``dual_`` (for example
        ``dual_.to_cvxpy()`` with constraints of one's own); the switch posteriors, the
        weights (``coef_``), ``dual_coef_`` and the intercepts are recomputed from them, as a
        fit computes them from its solver's answer, and the estimator predicts with them.

        Parameters
        ----------
        lam : array-like of shape (n,)
            The multipliers, in the row order and label coding of :attr:`dual_`: tasks in
            the order of ``tasks_`` (one task for a single-task estimator), within a task
            its rows in the order given to ``fit``; a regressor has ``lam`` of the task's
            examples followed by their ``lam*``; a classifier's multiplier of an example of
            ``classes_[1]`` has sign +1 in ``dual_.a``. They must be feasible up to round-off
            (inside the box and meeting each task's equality within ``1e-6`` of the box's
            scale); they are projected onto the feasible set.
        intercepts : array-like of shape (n_tasks,), optional
            Each task's bias. By default the biases of ``dual_``'s KKT conditions at
            ``lam`` (:meth:`MEDDual.intercepts <medmtl.med.dual.MEDDual.intercepts>`); a
            solve with constraints of its own may give its own, e.g. the dual values of
            the equality constraints of ``dual_.to_cvxpy()``.

        Returns
        -------
        self
            With ``solver_status_ == "given"``, ``method_used_ == "given"``,
            ``objective_`` the ``J`` of ``dual_`` at ``lam`` and
            ``solver_info_["duality_gap"]`` its distance from the optimum of ``dual_``
            at most.

        Raises
        ------
        ValueError
            For multipliers of the wrong shape, not finite, or not feasible.

        Examples
        --------
        >>> import numpy as np, cvxpy as cp
        >>> from medmtl.med import MEDClassifier
        >>> X = np.array([[1.0, 0.3], [2.0, -0.2], [0.2, 0.1], [-1.0, 0.1], [-2.0, 0.4], [-0.1, 0.3]])
        >>> y = np.array([1, 1, 1, 0, 0, 0])
        >>> clf = MEDClassifier(selection="features", C=1.0).fit(X, y)
        >>> before = clf.decision_function(X)
        >>> problem, lam = clf.dual_.to_cvxpy()
        >>> _ = problem.solve(solver=cp.CLARABEL)
        >>> bool(np.allclose(clf.set_multipliers(lam.value).decision_function(X), before, atol=1e-4))
        True

        The same program with a constraint of one's own, the first example held out:

        >>> held_out = cp.Problem(problem.objective, problem.constraints + [lam[0] == 0])
        >>> _ = held_out.solve(solver=cp.CLARABEL)
        >>> abs(float(clf.set_multipliers(lam.value).dual_coef_[0])) < 1e-8, clf.solver_status_
        (True, 'given')
        """
        check_is_fitted(self)
        dual = self.dual_
        lam = np.array(lam, dtype=float).ravel()
        if lam.shape != (dual.n,) or not np.all(np.isfinite(lam)):
            raise ValueError(f"{type(self).__name__}.set_multipliers: lam must hold {dual.n} finite values, one per "
                             f"multiplier of dual_; got shape {np.shape(lam)}")
        scale = max(1.0, float(np.max(np.abs(dual.hi))))
        outside = float(max(np.max(dual.lo - lam), np.max(lam - dual.hi), 0.0))
        unmet = max(abs(float(dual.a[g] @ lam[g])) for g in dual.groups)
        if max(outside, unmet) > _FEASIBLE_RTOL * scale:
            raise ValueError(f"{type(self).__name__}.set_multipliers: lam is not feasible for dual_ (largest box "
                             f"violation {outside:.3g}, largest task equality |a_g^T lam_g| = {unmet:.3g}); "
                             "dual_.project(lam) gives the nearest feasible multipliers")
        lam = dual.project(lam)
        if intercepts is None:
            b = dual.intercepts(lam)
        else:
            b = np.array(intercepts, dtype=float).ravel()
            if b.shape != (len(dual.groups),) or not np.all(np.isfinite(b)):
                raise ValueError(f"{type(self).__name__}.set_multipliers: intercepts must hold {len(dual.groups)} "
                                 f"finite values, one per task; got shape {np.shape(intercepts)}")
        J = dual.objective(lam)
        solution = MEDSolution(lam, b, J, np.array([J]), 0, "given", dual.switch_posterior(lam),
                               method="given", info={"duality_gap": duality_gap(dual, lam)})
        self._store(None, self._solved, solution)
        return self

    # -- after fit ------------------------------------------------------------------------
    def _inputs(self, method, X, tasks):
        return prediction_inputs(self, method, X, tasks, lists=self._lists, grams=getattr(self, "_grams", None))

    def _scores(self, X, m):
        """Decision values of task ``m``'s model for ``X``, shape (n_samples,).

        Values that overflow the float range are an error: the inputs are too large for
        the kernel, and NaN would pass for a prediction.
        """
        f = self._model.scores(X, m) + self.intercept_[m]
        if not np.all(np.isfinite(f)):
            values = X.data if sp.issparse(X) else X
            raise ValueError(f"{type(self).__name__}: decision values overflow the float range for "
                             f"{int(np.sum(~np.isfinite(f)))} of {f.size} rows: inputs with entries up to "
                             f"|x| = {np.abs(values).max():.3g} are too large for the model. Rescale X as the "
                             "training inputs were")
        return f

    def _decision_values(self, inputs):
        return inputs.assemble([self._scores(X, m) for m, X in inputs.present()])

    def _predictions(self, inputs):
        return [self._target.decode(self._scores(X, m), m) for m, X in inputs.present()]


class SingleTaskMethods:
    """``fit``, ``predict`` and (classifiers) ``decision_function`` of a single-task
    :class:`MEDEstimator`: the stacked form with one task."""

    def fit(self, X, y, sample_weight=None):
        """Fit on one task.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or, for ``kernel="precomputed"``, the Gram matrix of shape (n_samples, n_samples).
        y : array-like of shape (n_samples,)
            Two distinct labels (classifier) or real targets (regressor).
        sample_weight : array-like of shape (n_samples,), optional
            A weight >= 0 per example: example ``i``'s multipliers are bounded by
            ``C * sample_weight[i]`` (as SVC's are), which for integer weights is the same
            model as repeating each row that many times; a weight of 0 leaves the example
            out.

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight=sample_weight)

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
        inputs = self._inputs("predict", X, None)
        return inputs.assemble(self._predictions(inputs))

    @available_if(_is_classifier)
    def decision_function(self, X):
        """Signed scores; positive predicts ``classes_[1]``.

        Parameters
        ----------
        X
            As :meth:`predict` takes it.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._decision_values(self._inputs("decision_function", X, None))


class MultiTaskMethods:
    """``fit``, ``predict``, ``score`` and (classifiers) ``decision_function`` of a
    multi-task :class:`MEDEstimator`.

    Each takes either form of the inputs:

    * stacked: ``X`` of shape (n_samples, n_features) and ``tasks`` of shape (n_samples,),
      the task label (an integer or a string) of each row; results are arrays over the
      rows. ``tasks`` is requested as metadata by default, so that scikit-learn's
      ``cross_val_score``, ``GridSearchCV`` and ``Pipeline`` pass it on (with their
      metadata routing enabled) and split each task's examples;
    * per-task lists ``Xs``, ``ys`` (one entry per task, in the order of fitting); results
      are lists. scikit-learn cannot split this form, and refuses it with an error.
    """

    _lists = True
    __metadata_request__fit = {"tasks": True}
    __metadata_request__predict = {"tasks": True}
    __metadata_request__score = {"tasks": True}
    __metadata_request__decision_function = {"tasks": True}

    def fit(self, X, y, tasks=None, sample_weight=None):
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
        sample_weight : array-like of shape (n_samples,), or list, optional
            A weight >= 0 per row (per-task lists: one array per task): the row's
            multipliers are bounded by ``C * sample_weight``, which for integer weights is
            the same model as repeating the row; a weight of 0 leaves it out.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            When scikit-learn's model selection (``GridSearchCV``, ``cross_val_score``, ...)
            passes ``tasks`` with its metadata routing off: it would not pass them to the
            scoring, and every score would be NaN.
        """
        if tasks is not None:
            refuse_unrouted_tasks(type(self).__name__)
        return self._fit(X, y, tasks, sample_weight)

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
        inputs = self._inputs("predict", X, tasks)
        return inputs.assemble(self._predictions(inputs))

    @available_if(_is_classifier)
    def decision_function(self, X, tasks=None):
        """Signed scores, each row by its task's model; positive predicts the task's second class.

        Parameters
        ----------
        X, tasks
            As :meth:`predict` takes them.

        Returns
        -------
        ndarray of shape (n_samples,), or list of ndarray of shape (n_m,)
        """
        return self._decision_values(self._inputs("decision_function", X, tasks))

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
        inputs = self._inputs("score", X, tasks)
        ys = inputs.true_targets(y, self._target_kind.true_targets)
        scores = [self._target_kind.task_score(yt, p) for yt, p in zip(ys, self._predictions(inputs))]
        return float(np.mean(scores))
