"""What the lecture-notes experiments share: the switch priors, and the linear models they
fit and read (posterior-mean weights, least squares, MED feature-selection regression)."""

from __future__ import annotations

import numpy as np

from medmtl.experiments.med_method import fit_options

__all__ = ["RHOS", "rho_label", "alphas_of", "linear_coefficients", "least_squares_fit", "regressor_factory",
           "SE_RULE", "standard_errors", "paired_columns", "loss_grid_edges", "edges_text"]

SE_RULE = "standard error of the mean over the splits (std with ddof = 1, over sqrt(n))"

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


def standard_errors(values):
    """Per column, the standard error of the mean over the rows (:data:`SE_RULE`).

    Parameters
    ----------
    values : array-like of shape (n_splits, n_columns)

    Returns
    -------
    list of float
        NaN for a column with fewer than two rows.

    Examples
    --------
    >>> [round(v, 4) for v in standard_errors([[1.0, 2.0], [3.0, 2.0]])]
    [1.0, 0.0]
    """
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return [float("nan")] * values.shape[1]
    return (values.std(axis=0, ddof=1) / np.sqrt(len(values))).tolist()


def paired_columns(values, a, b):
    """Paired t-test of column ``a`` against column ``b`` over the rows (splits).

    Parameters
    ----------
    values : array-like of shape (n_splits, n_columns)
    a, b : int
        Column indices.

    Returns
    -------
    dict
        ``mean_difference`` (``a`` minus ``b``), ``standard_error``, ``p_value``, ``n_pairs``.

    Examples
    --------
    >>> t = paired_columns([[1.0, 0.5], [2.0, 1.0], [3.0, 2.0]], 0, 1)
    >>> round(t["mean_difference"], 4), t["n_pairs"]
    (0.8333, 3)
    """
    from medmtl.evaluation import paired_t_test

    values = np.asarray(values, dtype=float)
    d, se, p = paired_t_test(values[:, a], values[:, b])
    return {"mean_difference": float(d), "standard_error": float(se), "p_value": float(p), "n_pairs": len(values)}


def loss_grid_edges(out, Cs):
    """Grid-edge counts of C chosen per (cell, p0) on validation loss.

    Parameters
    ----------
    out : list of dict
        Cell outputs, each with ``"chosen_C"`` (per p0) and ``"validation_profile"`` (per
        p0, the validation loss at every C of ``Cs``; None when there was nothing to choose).
    Cs : list of float
        The grid.

    Returns
    -------
    dict
        :func:`~medmtl.experiments.selection.grid_edge_counts` (with the profiles, a lower
        loss being a higher score).
    """
    from medmtl.experiments.selection import grid_edge_counts

    chosen = [C for o in out for C in o["chosen_C"]]
    if any(o["validation_profile"] is None for o in out):
        return grid_edge_counts(chosen, Cs)
    profiles = [{C: -loss for C, loss in zip(Cs, row)} for o in out for row in o["validation_profile"]]
    return grid_edge_counts(chosen, Cs, profiles)


def edges_text(grid_edges):
    """The grid-edge counts of an experiment in words, for its results-page rows.

    Parameters
    ----------
    grid_edges : dict
        ``{"<method> <hyper-parameter>": grid_edge_counts(...)}``.

    Returns
    -------
    str

    Examples
    --------
    >>> edges_text({"SVM C": {"grid": [0.1, 1.0], "n": 4, "low": 3, "high": 0, "share": 0.75,
    ...                       "strict_low": 1, "strict_high": 0, "strict_share": 0.25}})
    'SVM C: 3 of 4 on an edge of 0.1-1 (1 strictly better than every other value)'
    """
    parts = []
    for name, c in grid_edges.items():
        text = f"{name}: {c['low'] + c['high']} of {c['n']} on an edge of {c['grid'][0]:g}-{c['grid'][-1]:g}"
        if "strict_share" in c:
            text += f" ({c['strict_low'] + c['strict_high']} strictly better than every other value)"
        parts.append(text)
    return "; ".join(parts)
