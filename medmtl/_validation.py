"""Input checks shared by every learner.

Each check raises a ``ValueError`` (or ``TypeError``) whose message names the argument and
what is wrong with it, and none of them modifies its input: arrays are converted with
copies where a conversion is needed.

Hyper-parameters are checked declaratively by :mod:`medmtl._params`, whose names
(:class:`Interval`, :class:`Options`, :class:`Checked`, :func:`validate_params`,
:class:`InvalidParameterError`) are importable from here too.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ._params import (  # noqa: F401 - the learners import the parameter checks from here
    Checked,
    Interval,
    InvalidParameterError,
    Options,
    _Unsatisfied,
    validate_params,
)


def _as_float(value, name):
    """``value`` as a float, raising if it is not a real number (booleans are not) or if it
    is an integer too large for a float."""
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a finite real number; got an integer of {len(str(abs(value)))} digits, "
                         "too large for a float") from None


def check_scalar_positive(value, name):
    """Return ``value`` as a float, raising if it is not a finite number > 0.

    >>> check_scalar_positive(2, "C")
    2.0
    """
    value = _as_float(value, name)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def check_scalar_nonnegative(value, name, allow_inf=False):
    """Return ``value`` as a float, raising if it is not a number >= 0.

    >>> check_scalar_nonnegative(0, "alpha")
    0.0
    """
    value = _as_float(value, name)
    if np.isnan(value) or value < 0 or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be >= 0 and finite, got {value}")
    return value


def canonical_sparse(X):
    """``X`` in canonical CSR form (sorted indices, no duplicate entries); a copy if it was not.

    A CSR matrix may hold several entries for one position, which all count (their sum is
    the value) and may list a row's entries in any order. Code that reads ``X.data`` row by
    row (norms, products of one row) needs the canonical form, so every learner takes it
    at its boundary. The caller's matrix is never changed.

    >>> X = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 0]), np.array([0, 2])), shape=(1, 2))
    >>> Y = canonical_sparse(X)
    >>> Y.data.tolist(), X.nnz
    ([3.0], 2)
    """
    X = X if sp.issparse(X) and X.format == "csr" else sp.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def check_real_values(A, name="X"):
    """Raise unless the array ``A`` holds real numbers (booleans count as 0 and 1).

    Complex numbers, dates and durations, text, and object arrays with anything but real
    numbers in them are errors: a float conversion would drop an imaginary part, turn a
    date into nanoseconds since 1970 or read the string ``"1.5"`` as a number, and the
    result would look like data. A value of the wrong kind inside an object array is a
    ``TypeError``, a whole array of the wrong kind a ``ValueError``.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix
    name : str
        Named in the message.

    Returns
    -------
    A
        Unchanged.

    Examples
    --------
    >>> check_real_values(np.array([[1, 2]], dtype="datetime64[s]"))
    Traceback (most recent call last):
    ...
    ValueError: X holds dates or durations (dtype datetime64[s]); need real numbers: ...
    """
    kind = A.dtype.kind
    if kind == "c":
        # scikit-learn's wording first, which its estimator checks look for
        raise ValueError(f"Complex data not supported: {name} holds complex numbers; need real ones")
    if kind in "mM":
        raise ValueError(f"{name} holds dates or durations (dtype {A.dtype}); need real numbers: convert them "
                         "explicitly (for example to seconds)")
    if kind in "USV":
        raise ValueError(f"{name} holds text or raw bytes (dtype {A.dtype}); need real numbers")
    if kind == "O":
        values = A.data if sp.issparse(A) else np.asarray(A).ravel()
        for v in values:
            if not isinstance(v, (numbers.Real, np.bool_)):
                raise TypeError(f"{name} holds {repr(v)[:40]} ({type(v).__name__}) where a real number is needed "
                                "(each argument must be a real number, not a string or any object other than a "
                                "number)")
    return A


def refuse_iterator(value, name):
    """Raise if ``value`` is an iterator (a generator, ``map``, ``iter(...)``), not a container.

    An iterator can be read once: a check that looks at it consumes what the fit then
    misses, and ``len`` and indexing fail deep inside with messages about generators. So
    it is refused at the door, with what to pass instead.

    >>> refuse_iterator((x for x in [1]), "X")
    Traceback (most recent call last):
    ...
    TypeError: X is a generator, which can be read only once; pass a list (list(...)) or an array
    """
    if isinstance(value, Iterator):
        raise TypeError(f"{name} is {'an' if type(value).__name__[0] in 'aeiou' else 'a'} {type(value).__name__}, "
                        "which can be read only once; pass a list (list(...)) or an array")


def check_matrix(X, name="X", accept_sparse=True, dtype=np.float64, min_rows=1, min_features=0):
    """Return a 2-D float array (or canonical CSR matrix) of finite values.

    Dense input is copied only when a conversion is needed: the result may be the caller's
    own array, so callers must not write into it (and must copy what they keep). Sparse
    input stays sparse, in canonical CSR form (:func:`canonical_sparse`). Complex numbers,
    dates, text and other values that are not real numbers are errors, never silently
    converted (:func:`check_real_values`). Fewer than ``min_rows`` rows or ``min_features``
    columns is an error.

    >>> check_matrix([[1, 2], [3, 4]]).dtype
    dtype('float64')
    """
    if sp.issparse(X):
        if not accept_sparse:
            raise TypeError(f"{name} must be a dense array; got a scipy.sparse matrix")
        check_real_values(X, name)
        X = canonical_sparse(sp.csr_matrix(X, dtype=dtype))
        if not np.all(np.isfinite(X.data)):
            raise ValueError(f"{name} contains NaN or infinite values")
    else:
        refuse_iterator(X, name)
        try:
            A = np.asarray(X)
        except ValueError as err:  # nested lists of unequal lengths
            raise ValueError(f"{name} must be a 2-D array of numbers with rows of equal length ({err})") from None
        check_real_values(A, name)
        try:
            X = A.astype(dtype, copy=False)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name} must hold real numbers; got dtype {A.dtype} ({err})") from None
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{name} contains NaN or infinite values")
    if X.shape[0] < min_rows:
        raise ValueError(f"{name} has no rows")
    if X.shape[1] < min_features:
        raise ValueError(f"{name} has no features (shape {X.shape}); need at least {min_features} column"
                         f"{'s' if min_features > 1 else ''}")
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
    refuse_iterator(y, name)
    y = np.asarray(check_real_values(np.asarray(y), name), dtype=np.float64)
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
        raise ValueError(f"{name}{where} has only one class ({classes.tolist()[0]!r}); need two")
    if classes.size != 2:
        raise ValueError(f"Only binary classification is supported: {name}{where} must have exactly two "
                         f"classes; found {classes.size}: {classes.tolist()[:6]!r}. Fit one model per pair or "
                         "per class")
    return classes


def check_binary_labels(y, n_samples, name="y", task=None):
    """Check one task's class labels; return its two classes and the labels as -1.0 / +1.0.

    ``classes[0]`` becomes -1 and ``classes[1]`` +1.

    >>> classes, signs = check_binary_labels(["b", "a", "b"], 3)
    >>> classes.tolist(), signs.tolist()
    (['a', 'b'], [1.0, -1.0, 1.0])
    """
    label = name if task is None else f"{name}[{task}]"
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"{label} must be 1-D with {n_samples} labels; got shape {y.shape}")
    check_labels(y, n_samples, label)
    check_classification_targets(y)
    classes = check_two_classes(y, name=name, task=task)
    return classes, np.where(y == classes[1], 1.0, -1.0)


def check_task_lists(Xs, ys=None, n_features=None, n_tasks=None, name_X="Xs", name_y="ys"):
    """Check per-task inputs: a list of matrices with one feature count (and as many targets).

    Parameters
    ----------
    Xs : list of array-like or sparse matrices, each of shape (n_m, n_features)
    ys : list, optional
        Per-task targets; only their number is checked here.
    n_features, n_tasks : int, optional
        What a fitted model expects.

    Returns
    -------
    list of ndarray or CSR matrix
        As :func:`check_matrix` returns them.

    Examples
    --------
    >>> [X.shape for X in check_task_lists([[[1.0, 2.0]], [[3.0, 4.0], [5.0, 6.0]]])]
    [(1, 2), (2, 2)]
    """
    refuse_iterator(Xs, name_X)
    if isinstance(Xs, np.ndarray) or sp.issparse(Xs) or not hasattr(Xs, "__len__"):
        raise TypeError(f"{name_X} must be a list of per-task arrays")
    if ys is not None:
        refuse_iterator(ys, name_y)
        if isinstance(ys, str) or not hasattr(ys, "__len__"):
            raise TypeError(f"{name_y} must be a list with one array of targets per task; got {type(ys).__name__}")
    if ys is not None and len(Xs) != len(ys):
        raise ValueError(f"{name_X} has {len(Xs)} tasks but {name_y} has {len(ys)}")
    if len(Xs) == 0:
        raise ValueError(f"{name_X} is empty; need at least one task")
    if n_tasks is not None and len(Xs) != n_tasks:
        raise ValueError(f"got {len(Xs)} tasks; the model was fitted on {n_tasks}")
    Xs = [check_matrix(X, name=f"{name_X}[{m}]", min_features=1) for m, X in enumerate(Xs)]
    D = Xs[0].shape[1]
    for m, X in enumerate(Xs):
        if X.shape[1] != D:
            raise ValueError(f"{name_X}[{m}] has {X.shape[1]} features; task 0 has {D}")
    if n_features is not None and D != n_features:
        raise ValueError(f"X has {D} features, but the model was fitted with {n_features} features")
    return Xs


def check_feature_names(estimator, Xs, *, reset, labels=None, names_only=False):
    """scikit-learn's feature-name contract for per-task inputs: one set of column names.

    scikit-learn checks the column names of one ``X`` (a pandas DataFrame, or any frame it
    reads names from) against ``feature_names_in_``; per-task lists hold several frames,
    which are checked here the same way, each by :func:`sklearn.utils.validation.validate_data`
    (with ``skip_check_array=True``: names and counts only, the values are checked
    elsewhere). The raw inputs are needed, before anything converts them to arrays.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Gets ``feature_names_in_`` (``reset=True``) or has its names checked.
    Xs : list
        The per-task inputs as given; ``None`` entries (a task with nothing to predict)
        are skipped.
    reset : bool
        At fit: every task's names must be the same (or no task has names), and they
        become ``feature_names_in_`` (removed when the inputs have no names, or when they
        differ). After fit: each task's names are checked against ``feature_names_in_``
        with scikit-learn's error for names that differ or come in another order, and its
        warning for names given to a model fitted without them or missing where the model
        has them.
    labels : list of str, optional
        How messages name each entry of ``Xs`` (default ``Xs[0]``, ``Xs[1]``, ...).
    names_only : bool, default=False
        Check the names alone, not ``n_features_in_`` (for learners whose tasks each have
        their own width, the online learners), and read a pandas Series as one row whose
        index holds the names.

    Raises
    ------
    ValueError
        Tasks with different column names at fit, or names that do not match the fitted
        ones after (the entry named in front of scikit-learn's message).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.base import BaseEstimator
    >>> est = BaseEstimator()
    >>> frames = [pd.DataFrame({"a": [1.0], "b": [2.0]}), pd.DataFrame({"a": [3.0], "b": [4.0]})]
    >>> check_feature_names(est, frames, reset=True)
    >>> est.feature_names_in_.tolist()
    ['a', 'b']
    >>> check_feature_names(est, [frames[0][["b", "a"]]], reset=False)
    Traceback (most recent call last):
    ...
    ValueError: Xs[0]: The feature names should match those that were passed during fit.
    Feature names must be in the same order as they were in fit.
    <BLANKLINE>

    One row of a frame, as an online learner reads it:

    >>> check_feature_names(est, [frames[1].iloc[0]], reset=False, names_only=True)
    """
    def one_row(X):
        # a Series is one input, its index the feature names
        return X.to_frame().T if getattr(X, "ndim", None) == 1 and hasattr(X, "to_frame") else X

    labels = [f"Xs[{m}]" for m in range(len(Xs))] if labels is None else labels
    given = [(label, one_row(X) if names_only else X) for label, X in zip(labels, Xs) if X is not None]
    if names_only and (reset or not hasattr(estimator, "feature_names_in_")) and \
            all(isinstance(X, (np.ndarray, list, tuple)) or sp.issparse(X) for _, X in given):
        # what validate_data would conclude, without asking it: a round's check stays cheap
        if reset:
            estimator.__dict__.pop("feature_names_in_", None)
        return
    if reset and not given:
        estimator.__dict__.pop("feature_names_in_", None)
        return
    if not reset:
        for label, X in given:
            try:
                validate_data(estimator, X, reset=False, skip_check_array=True, ensure_2d=not names_only)
            except ValueError as err:
                raise ValueError(f"{label}: {err}") from None
        return
    names = []
    for label, X in given:
        # reset=True sets (or removes) feature_names_in_ from X: the way to read X's names
        # exactly as scikit-learn reads them
        validate_data(estimator, X, reset=True, skip_check_array=True, ensure_2d=not names_only)
        names.append(getattr(estimator, "feature_names_in_", None))
    first_label, first = given[0][0], names[0]
    for (label, _), these in zip(given, names):
        if (these is None) != (first is None) or (these is not None and not np.array_equal(these, first)):
            estimator.__dict__.pop("feature_names_in_", None)
            raise ValueError(f"{label} has {_shown_names(these)} but {first_label} has {_shown_names(first)}: every "
                             "task must have the same columns, in the same order")
    if first is None:
        estimator.__dict__.pop("feature_names_in_", None)
    else:
        estimator.feature_names_in_ = first


def _shown_names(names):
    if names is None:
        return "no column names"
    return f"columns {names.tolist()[:6]}{' ...' if names.size > 6 else ''}"


def is_task_list(X):
    """Whether ``X`` is the per-task list form: a list or tuple of matrices, not of rows.

    >>> is_task_list([np.ones((2, 3)), np.ones((1, 3))]), is_task_list([[1.0, 2.0], [3.0, 4.0]])
    (True, False)
    """
    if not isinstance(X, (list, tuple)):
        return False
    if len(X) == 0 or sp.issparse(X[0]):
        return True
    try:
        return np.ndim(X[0]) >= 2
    except ValueError:  # a nested list of unequal rows: one task's matrix, badly formed
        return True


def refuse_task_lists_from_sklearn(owner, method, advice):
    """Raise if scikit-learn handed ``owner.method`` the per-task list form.

    scikit-learn's splitters and model selection index a list as samples: given per-task
    lists they fit on some tasks and score on others, and the numbers look plausible. Who
    passed the list is the first caller outside medmtl.

    Parameters
    ----------
    owner, method : str
        Named in the message.
    advice : str
        What to do instead.

    Raises
    ------
    TypeError
        When the first caller outside medmtl is a scikit-learn module (other than its
        parallel helper, which only runs a function it is given).
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "medmtl":
        frame = frame.f_back
    module = "" if frame is None else str(frame.f_globals.get("__name__", ""))
    if module.startswith("sklearn.") and module != "sklearn.utils.parallel":
        raise TypeError(f"{owner}.{method} got per-task lists from scikit-learn ({module}), which indexes a list "
                        f"as samples: its splitters would split the tasks, not each task's examples. {advice}")


def check_labels(labels, n_samples, name):
    """A 1-D array of ``n_samples`` labels with nothing missing (no NaN, infinity or None).

    >>> check_labels(["a", "b"], 2, "y").tolist()
    ['a', 'b']
    """
    refuse_iterator(labels, name)
    try:
        labels = np.asarray(labels)
    except ValueError as err:
        raise ValueError(f"{name} must be a 1-D array of labels ({err})") from None
    if labels.ndim != 1 or labels.shape[0] != n_samples:
        raise ValueError(f"{name} must be 1-D with {n_samples} labels, one per row of X; "
                         f"got shape {labels.shape}")
    if labels.dtype.kind == "c":
        raise ValueError(f"{name} holds complex numbers; use integers or strings as labels")
    missing = (~np.isfinite(labels) if labels.dtype.kind == "f" else
               [v is None or (isinstance(v, numbers.Real) and not np.isfinite(v)) for v in labels]
               if labels.dtype.kind == "O" else [])
    if np.any(missing):
        raise ValueError(f"{name} contains NaN, infinite or missing labels")
    return labels


def check_tasks(tasks, n_samples, name="tasks"):
    """The distinct task labels of the rows of a stacked ``X``, and each task's rows.

    Parameters
    ----------
    tasks : array-like of shape (n_samples,) or None
        The task of each row: integers or strings. ``None``: all rows are one task.
    n_samples : int

    Returns
    -------
    labels : ndarray of shape (n_tasks,)
        The sorted distinct labels (``[0]`` for ``tasks=None``).
    rows : list of ndarray of int
        ``rows[m]``: the rows of task ``labels[m]``, in the order given.

    Examples
    --------
    >>> labels, rows = check_tasks(["b", "a", "b"], 3)
    >>> labels.tolist(), [r.tolist() for r in rows]
    (['a', 'b'], [[1], [0, 2]])
    """
    if tasks is None:
        return np.array([0]), [np.arange(n_samples)]
    tasks = check_labels(tasks, n_samples, name)
    try:
        labels, index = np.unique(tasks, return_inverse=True)
    except TypeError as err:
        raise ValueError(f"{name} must be labels of one kind (all numbers or all strings); {err}") from None
    return labels, [np.flatnonzero(index == m) for m in range(labels.size)]


def rows_of_tasks(fitted, tasks, n_samples, owner, name="tasks"):
    """Each fitted task's rows of a stacked ``X`` at prediction (empty for absent tasks).

    Parameters
    ----------
    fitted : ndarray of shape (n_tasks,)
        The task labels of the fitted model, sorted.
    tasks : array-like of shape (n_samples,) or None
        The task of each row; ``None`` only for a model of one task.
    n_samples : int
    owner : str
        The estimator, named in messages.

    Returns
    -------
    list of ndarray of int, one per fitted task

    Examples
    --------
    >>> [r.tolist() for r in rows_of_tasks(np.array([3, 7]), [7, 7, 3], 3, "M")]
    [[2], [0, 1]]
    """
    if tasks is None:
        if fitted.size != 1:
            raise ValueError(f"{owner} was fitted on {fitted.size} tasks: give the task of each row of X "
                             f"({name}=...), with scikit-learn's metadata routing enabled inside its tools")
        return [np.arange(n_samples)]
    tasks = check_labels(tasks, n_samples, name)
    lookup = {label: m for m, label in enumerate(fitted.tolist())}
    try:
        distinct, index = np.unique(tasks, return_inverse=True)
    except TypeError as err:
        raise ValueError(f"{name} must be labels of one kind (all numbers or all strings); {err}") from None
    positions = [lookup.get(label, -1) for label in distinct.tolist()]
    unknown = [label for label, m in zip(distinct.tolist(), positions) if m < 0]
    if unknown:
        raise ValueError(f"{name} holds tasks {unknown[:5]} that {owner} was not fitted on; "
                         f"its tasks are {fitted.tolist()[:10]}")
    task_of_row = np.asarray(positions)[index]
    return [np.flatnonzero(task_of_row == m) for m in range(fitted.size)]
