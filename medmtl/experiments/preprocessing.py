"""Input scaling and feature expansion fitted on the *training* inputs only.

Each scaling function takes the training inputs of every task, then any other lists
(validation, test) to transform the same way, and returns new arrays.
"""

from __future__ import annotations

import numpy as np

__all__ = ["minmax_scale_tasks", "standardize_tasks", "quadratic_expansion"]


def _apply(train_Xs, other, shift, scale):
    transform = lambda Xs: [(X - shift) / scale for X in Xs]  # noqa: E731
    return (transform(train_Xs), *(transform(Xs) for Xs in other))


def minmax_scale_tasks(train_Xs, *other):
    """Scale every column into [0, 1] by the min/max over all tasks' *training* inputs.

    Parameters
    ----------
    train_Xs : list of ndarray, each of shape (n_samples_t, n_features)
    *other : lists of ndarray of the same width

    Returns
    -------
    tuple of lists
        The scaled training list followed by each other list scaled the same way. A
        constant training column is shifted only.

    Examples
    --------
    >>> import numpy as np
    >>> tr, te = minmax_scale_tasks([np.array([[0.0], [2.0]])], [np.array([[1.0], [4.0]])])
    >>> tr[0].ravel().tolist(), te[0].ravel().tolist()
    ([0.0, 1.0], [0.5, 2.0])
    """
    stacked = np.vstack(train_Xs)
    lo, hi = stacked.min(axis=0), stacked.max(axis=0)
    return _apply(train_Xs, other, lo, np.where(hi > lo, hi - lo, 1.0))


def standardize_tasks(train_Xs, *other):
    """Centre every column and scale it to unit variance by the mean and standard deviation
    over all tasks' *training* inputs.

    A constant training column is centred only.

    Parameters
    ----------
    train_Xs : list of ndarray of shape (n_samples_m, n_features)
        The training inputs of every task; they fix the shift and the scale.
    *other : list of ndarray
        Further lists of per-task inputs (validation, test) transformed the same way.

    Returns
    -------
    tuple of list of ndarray
        ``train_Xs`` and each of ``other``, transformed.

    Examples
    --------
    >>> import numpy as np
    >>> tr, te = standardize_tasks([np.array([[0.0], [2.0]])], [np.array([[1.0], [4.0]])])
    >>> tr[0].ravel().tolist(), te[0].ravel().tolist()
    ([-1.0, 1.0], [0.0, 3.0])
    """
    stacked = np.vstack(train_Xs)
    mean, std = stacked.mean(axis=0), stacked.std(axis=0)
    return _apply(train_Xs, other, mean, np.where(std > 0, std, 1.0))


def quadratic_expansion(X):
    """Explicit degree-2 features: the inputs, then every product ``x_i x_j`` with i <= j.

    ``d`` inputs give ``d + d (d + 1) / 2`` columns (13 -> 104 for Boston housing).

    Parameters
    ----------
    X : array-like of shape (n_samples, d)

    Returns
    -------
    ndarray of shape (n_samples, d + d (d + 1) / 2)

    Examples
    --------
    >>> import numpy as np
    >>> quadratic_expansion(np.array([[1.0, 2.0]])).tolist()
    [[1.0, 2.0, 1.0, 2.0, 4.0]]
    """
    X = np.asarray(X, dtype=float)
    i, j = np.triu_indices(X.shape[1])
    return np.hstack([X, X[:, i] * X[:, j]])
