"""What the lecture-notes experiments share: the switch priors, and the linear models they
fit and read (posterior-mean weights, least squares, MED feature-selection regression)."""

from __future__ import annotations

import numpy as np

from medmtl.experiments.med_method import fit_options

__all__ = ["RHOS", "rho_label", "alphas_of", "linear_coefficients", "least_squares_fit", "regressor_factory"]

RHOS = [0.99999, 0.1, 0.001, 0.00001]  # the lecture's p0 / rho values


def rho_label(rho):
    """A switch prior as the lecture writes it: ``1e-05``, ``0.1``.

    Parameters
    ----------
    rho : float
        The prior probability ``p0`` that a switch is on.

    Returns
    -------
    str
    """
    return f"{rho:g}"


def alphas_of(rhos):
    """The estimators' ``alpha`` for each switch prior.

    Parameters
    ----------
    rhos : list of float
        Switch priors ``p0`` (``rho``).

    Returns
    -------
    list of float
    """
    # imported here: medmtl.med is slow to import, and `medmtl reproduce --list` needs none of it
    from medmtl.med.bound import alpha_from_rho

    return [alpha_from_rho(r) for r in rhos]


def linear_coefficients(model, n_features):
    """The posterior-mean weights ``E[s_i theta_i]`` of a fitted linear model, read off
    its decision function: ``w_i = f(e_i) - f(0)``.

    Works for any fitted linear model with ``decision_function`` or ``predict``, so it does
    not depend on how an estimator stores its weights.

    Parameters
    ----------
    model : estimator
        A fitted linear model with ``decision_function`` or ``predict``.
    n_features : int
        Number of input features of the model.

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> m = LinearRegression().fit(np.array([[0.0, 0], [1, 0], [0, 1]]), [1.0, 3.0, 0.0])
    >>> np.round(linear_coefficients(m, 2), 6).tolist()
    [2.0, -1.0]
    """
    f = getattr(model, "decision_function", None) or model.predict
    Z = np.vstack([np.zeros((1, n_features)), np.eye(n_features)])
    v = np.asarray(f(Z), dtype=float).ravel()
    return v[1:] - v[0]


def least_squares_fit(X, y):
    """Least squares with an intercept (minimum-norm when under-determined).

    Returns a function ``predict(X)``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training inputs.
    y : ndarray of shape (n_samples,)
        Training targets.

    Returns
    -------
    callable

    Examples
    --------
    >>> predict = least_squares_fit(np.array([[0.0], [1.0], [2.0]]), np.array([1.0, 3.0, 5.0]))
    >>> predict(np.array([[3.0]])).round(6).tolist()
    [7.0]
    """
    A = np.hstack([X, np.ones((X.shape[0], 1))])
    w, *_ = np.linalg.lstsq(A, y, rcond=None)
    return lambda Z: np.hstack([Z, np.ones((Z.shape[0], 1))]) @ w


def regressor_factory(epsilon, method):
    """``make(C, alpha)``: a warm-started MED feature-selection regressor.

    Parameters
    ----------
    epsilon : float
        Half-width of the regressor's insensitive tube.
    method : str
        The registered MED solution method (with the experiments' tolerance for it).

    Returns
    -------
    callable
    """
    from medmtl.med import MEDRegressor

    def make(C, alpha):
        return MEDRegressor(selection="features", C=C, alpha=alpha, epsilon=epsilon, warm_start=True,
                            **fit_options(method))

    return make
