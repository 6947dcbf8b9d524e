"""The kinds of MED model an estimator fits: what its dual is, what it keeps, how it scores.

:class:`ModelKind` declares the interface; an estimator names its kind (``_model_kind``)
and its target kind, and the one fit path of :mod:`medmtl.med._estimator_base` does the
rest. Two kinds serve the five estimators:

* :class:`SwitchedKernels` - the SVM, feature selection and kernel selection, single or
  multi-task: ``f_m(x) = sum_d s_d sum_t w_{m,t} k_d(x, x_{m,t}) + b_m``, which for linear
  models is ``x^T coef_[m] + b_m``;
* :class:`AdaptivePooling` - ``f_m(x) = s_m (own model of task m) + (model shared by all
  tasks) + b_m``.

The example weights ``w`` are ``y_t lam_t`` for classification and ``lam_t - lam*_t`` for
regression (:mod:`medmtl.med._targets`); predictions use posterior means.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod

import numpy as np

from .._params import InvalidParameterError
from ..kernels import KernelDistance, LinearKernel, WeightedSumKernel
from ._kernel_spec import build_kernel, is_precomputed
from .builders import adaptive_pooling_dual, feature_selection_dual, kernel_selection_dual, svm_dual

__all__ = ["ModelKind", "SwitchedKernels", "AdaptivePooling"]


def _matvec(M, x):
    return np.asarray(M @ x).ravel()


class ModelKind(ABC):
    """A kind of MED model: the dual it is fitted by, what a fit keeps, how it scores.

    At fit the estimator makes its kind from the checked parameters and the training
    inputs (:meth:`for_training`: the kernels built for those inputs), builds the dual
    (:meth:`build_dual`), solves it, and hands each task's example weights to
    :meth:`keep`, whose fitted copy then scores new inputs (:meth:`scores`).

    Attributes
    ----------
    attributes : tuple of str
        Every fitted attribute :meth:`keep` may set on the estimator; the ones a fit does
        not set are removed, so that nothing of an earlier fit is left.
    """

    attributes = ()

    @staticmethod
    def check_params(params, owner):
        """Raise for parameters allowed alone but not together (none by default)."""

    @classmethod
    @abstractmethod
    def for_training(cls, params, Xs, regression):
        """The kind for these parameters and training inputs.

        Parameters
        ----------
        params : dict
            The estimator's checked parameters.
        Xs : list of {ndarray, sparse matrix}
            Each task's training inputs (for ``gamma="scale"``).
        regression : bool
            Whether the targets are real values.

        Returns
        -------
        ModelKind
        """

    @property
    @abstractmethod
    def kernels(self):
        """The kernels whose values on the training inputs must be finite floats."""

    @abstractmethod
    def build_dual(self, Xs, targets, C, alpha):
        """The :class:`~medmtl.med.dual.MEDDual` of this model on the training data.

        Parameters
        ----------
        Xs : list
            Each task's training inputs (copies the fitted model may keep).
        targets : list of ndarray
            Each task's encoded targets.
        C, alpha : float
            The bound on the multipliers and the prior odds.
        """

    @abstractmethod
    def keep(self, Xs, weights, switch_posterior):
        """What prediction needs from a solution.

        Parameters
        ----------
        Xs : list
            The training inputs the dual was built on.
        weights : list of ndarray
            Each task's example weights.
        switch_posterior : ndarray
            The posterior mean of each switch.

        Returns
        -------
        fitted : ModelKind
            A copy of this kind holding the fitted model, for :meth:`scores`.
        attributes : dict
            The estimator's fitted attributes (``coef_`` and others of :attr:`attributes`).
        """

    @abstractmethod
    def scores(self, X, m):
        """Task ``m``'s decision values for ``X`` without its bias, shape (n_samples,)."""


class SwitchedKernels(ModelKind):
    """The SVM, feature selection and kernel selection (single or multi-task).

    One switch per feature or kernel, shared by all tasks; each task its own weights and
    bias. ``selection=None`` has no switches: one SVM per task with ``kernel``.
    """

    attributes = ("coef_", "learned_kernel_", "learned_metric_")

    def __init__(self, selection, kernel, bank, regression, epsilon):
        self.selection, self.kernel, self.bank = selection, kernel, bank
        self.regression, self.epsilon = regression, epsilon

    @staticmethod
    def check_params(params, owner):
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

    @classmethod
    def for_training(cls, params, Xs, regression):
        bank = None
        if params["selection"] == "kernels":
            bank = [build_kernel(k, params, Xs) for k in params["kernels"]]
        return cls(params["selection"], build_kernel(params["kernel"], params, Xs), bank, regression,
                   params.get("epsilon", 0.0))

    @property
    def kernels(self):
        """The kernels whose sum, each weighted by its switch, is the model."""
        return self.bank if self.selection == "kernels" else [self.kernel]

    @property
    def linear(self):
        """Whether the model predicts by ``coef_`` alone."""
        return self.selection == "features" or (self.selection is None and isinstance(self.kernel, LinearKernel))

    def build_dual(self, Xs, targets, C, alpha):
        kw = dict(regression=self.regression, epsilon=self.epsilon)
        if self.selection is None:
            return svm_dual(Xs, targets, self.kernel, C, **kw)
        if self.selection == "features":
            return feature_selection_dual(Xs, targets, C, alpha, **kw)
        return kernel_selection_dual(Xs, targets, self.bank, C, alpha, **kw)

    def keep(self, Xs, weights, switch_posterior):
        fitted, attributes = copy.copy(self), {}
        if self.selection == "kernels":
            # the kernel and the metric the tasks learned together: the bank weighted by
            # the switch posteriors
            attributes["learned_kernel_"] = WeightedSumKernel(self.bank, switch_posterior)
            attributes["learned_metric_"] = KernelDistance(self.bank, switch_posterior)
        if self.linear:
            W = np.vstack([_matvec(X.T, w) for X, w in zip(Xs, weights)])
            fitted.coef = W * switch_posterior if self.selection == "features" else W
        else:
            fitted.coef, fitted.Xs, fitted.weights = None, Xs, weights
            switches = switch_posterior if self.selection == "kernels" else [1.0]
            fitted.terms = list(zip(switches, self.kernels))
        attributes["coef_"] = fitted.coef
        return fitted, attributes

    def scores(self, X, m):
        if self.coef is not None:
            return _matvec(X, self.coef[m])
        f = np.zeros(X.shape[0])
        for s, k in self.terms:
            f += s * (k(X, self.Xs[m]) @ self.weights[m])
        return f


class AdaptivePooling(ModelKind):
    """Adaptive pooling: each task mixes a switched model of its own with a shared one.

    ``f_m(x) = task_scale s_m k(x, X_m) w_m + shared_scale sum_n k(x, X_n) w_n + b_m``.
    """

    attributes = ("coef_",)

    def __init__(self, kernel, shared_scale, task_scale):
        self.kernel, self.shared_scale, self.task_scale = kernel, shared_scale, task_scale

    @classmethod
    def for_training(cls, params, Xs, regression):
        task = 10.0 * len(Xs) if params["task_scale"] is None else params["task_scale"]
        return cls(build_kernel(params["kernel"], params, Xs), params["shared_scale"], task)

    @property
    def kernels(self):
        return [self.kernel]

    def build_dual(self, Xs, targets, C, alpha):
        return adaptive_pooling_dual(Xs, targets, self.kernel, C, alpha, self.shared_scale, self.task_scale)

    def keep(self, Xs, weights, switch_posterior):
        fitted = copy.copy(self)
        fitted.switch_posterior = switch_posterior
        if isinstance(self.kernel, LinearKernel):
            own = np.vstack([_matvec(X.T, w) for X, w in zip(Xs, weights)])
            fitted.coef = self.task_scale * switch_posterior[:, None] * own + self.shared_scale * own.sum(axis=0)
        else:
            fitted.coef, fitted.Xs, fitted.weights = None, Xs, weights
        return fitted, {"coef_": fitted.coef}

    def scores(self, X, m):
        if self.coef is not None:
            return _matvec(X, self.coef[m])
        k = self.kernel
        f_shared = sum(k(X, Xn) @ wn for Xn, wn in zip(self.Xs, self.weights))
        f_own = k(X, self.Xs[m]) @ self.weights[m]
        return self.task_scale * self.switch_posterior[m] * f_own + self.shared_scale * f_shared
