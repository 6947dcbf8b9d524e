"""The switches as a feature selector: scikit-learn's ``get_support``, ``transform`` and
``get_feature_names_out`` for MED estimators with switches."""

from __future__ import annotations

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted, validate_data

from ._task_inputs import refuse_unreal

__all__ = ["FeatureSupport"]


def _selects_features(estimator):
    return getattr(estimator, "selection", None) == "features"


class FeatureSupport:
    """``get_support`` for estimators with switches, and ``transform`` /
    ``get_feature_names_out`` for those whose switches are features (``selection="features"``).

    The host sets ``_support`` (a boolean mask over the switches) when it stores a solution.
    """

    @available_if(lambda est: getattr(est, "selection", None) in ("features", "kernels"))
    def get_support(self, indices=False):
        """The selected switches: those whose posterior is above their prior.

        A switch is selected when the data give it evidence (``q_d = ||Phi_d^T lam||^2 / 2``,
        by which its posterior rises above the prior ``1 / (1 + alpha)``) beyond round-off:
        evidence within the solve's resolution of 0 (ten times its KKT tolerance times the
        largest evidence) is a tie with the prior, the rule
        :class:`~medmtl.med.MEDGraphicalModel` applies to edges. The rule does not
        depend on ``alpha``'s threshold, only on whether the data moved the switch.

        Parameters
        ----------
        indices : bool, default=False
            Return the indices of the selected switches instead of a mask.

        Returns
        -------
        ndarray of bool of shape (n_switches,), or ndarray of int
            One entry per feature (``selection="features"``) or per kernel of the bank
            (``selection="kernels"``).
        """
        check_is_fitted(self)
        return np.flatnonzero(self._support) if indices else self._support.copy()

    @available_if(_selects_features)
    def fit_transform(self, X, y, **fit_params):
        """Fit, then keep the selected features of ``X`` (:meth:`transform`).

        Parameters
        ----------
        X, y
            As ``fit`` takes them (the stacked form).
        **fit_params
            ``tasks``, ``sample_weight``, as ``fit`` takes them.

        Returns
        -------
        ndarray or CSR matrix of shape (n_samples, n_selected)
        """
        return self.fit(X, y, **fit_params).transform(X)

    @available_if(_selects_features)
    def transform(self, X):
        """The selected features of ``X`` (:meth:`get_support`), so that the estimator is a
        feature selector in a :class:`~sklearn.pipeline.Pipeline`.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray or CSR matrix of shape (n_samples, n_selected)
        """
        check_is_fitted(self)
        refuse_unreal(X, "X")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return X[:, self._support]

    @available_if(_selects_features)
    def get_feature_names_out(self, input_features=None):
        """The names of the selected features.

        Parameters
        ----------
        input_features : array-like of str, optional
            The input feature names; ``feature_names_in_`` (or ``x0, x1, ...``) by default.

        Returns
        -------
        ndarray of str
        """
        check_is_fitted(self)
        return _check_feature_names_in(self, input_features)[self._support]
