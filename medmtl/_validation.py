"""Input checks shared by every learner.

Each check raises a ``ValueError`` (or ``TypeError``) whose message names the argument and
what is wrong with it, and none of them modifies its input: arrays are converted with
copies where a conversion is needed.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp


def check_scalar_positive(value, name):
    """Return ``value`` as a float, raising if it is not a finite number > 0.

    >>> check_scalar_positive(2, "C")
    2.0
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def check_scalar_nonnegative(value, name, allow_inf=False):
    """Return ``value`` as a float, raising if it is not a number >= 0.

    >>> check_scalar_nonnegative(0, "alpha")
    0.0
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if np.isnan(value) or value < 0 or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be >= 0 and finite, got {value}")
    return value


def check_matrix(X, name="X", accept_sparse=True, dtype=np.float64):
    """Return a 2-D float array (or CSR matrix) of finite values; never the caller's object.

    Dense input is copied only when a conversion is needed, so callers must not write into
    the result. Sparse input stays sparse (CSR).

    >>> check_matrix([[1, 2], [3, 4]]).dtype
    dtype('float64')
    """
    if sp.issparse(X):
        if not accept_sparse:
            raise TypeError(f"{name} must be a dense array; got a scipy.sparse matrix")
        X = sp.csr_matrix(X, dtype=dtype)
        if not np.all(np.isfinite(X.data)):
            raise ValueError(f"{name} contains NaN or infinite values")
    else:
        X = np.asarray(X, dtype=dtype)
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{name} contains NaN or infinite values")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    return X


def check_pm1_labels(y, n_samples=None, name="y"):
    """Return labels as an int array in {-1, +1}, raising on anything else.

    >>> check_pm1_labels([1, -1, 1])
    array([ 1, -1,  1])
    """
    y = np.asarray(y)
    if y.ndim != 1:
        y = y.ravel() if y.ndim == 2 and 1 in y.shape else y
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {y.shape}")
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} labels but X has {n_samples} rows")
    if y.dtype.kind not in "iuf" or not np.all(np.isin(y, (-1, 1))):
        bad = np.setdiff1d(np.unique(y), np.array([-1, 1], dtype=y.dtype) if y.dtype.kind in "iuf" else [])
        raise ValueError(f"{name} must hold labels in {{-1, +1}}; found {bad[:5]!r}")
    return y.astype(np.int64)


def check_real_targets(y, n_samples=None, name="y"):
    """Return regression targets as a finite float vector.

    >>> check_real_targets([0.5, 2])
    array([0.5, 2. ])
    """
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {y.shape}")
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} targets but X has {n_samples} rows")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return y


def check_two_classes(y, name="y", task=None):
    """Raise unless ``y`` holds exactly two distinct labels; return the sorted classes.

    >>> check_two_classes([0, 1, 1])
    array([0, 1])
    """
    classes = np.unique(np.asarray(y))
    where = f" (task {task})" if task is not None else ""
    if classes.size == 1:
        raise ValueError(f"{name}{where} has only one class ({classes[0]!r}); need two")
    if classes.size != 2:
        raise ValueError(f"{name}{where} must have exactly two classes; found {classes.size}: {classes[:6]!r}")
    return classes


def check_task_lists(Xs, ys, name_X="Xs", name_y="ys"):
    """Check per-task lists of inputs and targets have matching lengths and shapes.

    Returns the number of tasks and the common number of features (or ``None`` if the
    tasks differ in dimension).
    """
    if isinstance(Xs, np.ndarray) or sp.issparse(Xs) or not hasattr(Xs, "__len__"):
        raise TypeError(f"{name_X} must be a list of per-task arrays")
    if ys is not None and len(Xs) != len(ys):
        raise ValueError(f"{name_X} has {len(Xs)} tasks but {name_y} has {len(ys)}")
    if len(Xs) == 0:
        raise ValueError(f"{name_X} is empty; need at least one task")
    dims = {np.shape(X)[1] if np.ndim(X) == 2 or sp.issparse(X) else None for X in Xs}
    return len(Xs), (dims.pop() if len(dims) == 1 else None)
