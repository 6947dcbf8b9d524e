"""The door of every online learner: hyper-parameters, inputs, feature names, labels, scale.

Every public method of a learner in :mod:`medmtl.online` runs its arguments through these
checks before any compiled loop sees them, so a wrong width, a wrong type or an input the
arithmetic cannot hold is a ``ValueError`` or ``TypeError`` that names the problem, never a
crash or a silently wrong answer:

- hyper-parameters: :func:`check_params` validates a learner's ``_parameter_constraints``
  with :func:`medmtl._validation.validate_params`;
- inputs: :func:`input_matrix` and :func:`input_row` (real numbers only, at least one
  feature, the fitted width); iterators are refused by :func:`medmtl._validation.refuse_iterator`;
- feature names: :func:`medmtl._validation.check_feature_names` with ``names_only=True``,
  scikit-learn's contract (``feature_names_in_``) for DataFrames, per-task lists and single
  rows included;
- binary labels: :func:`binary_classes`, :func:`encode_labels` and :func:`decode_labels`,
  scikit-learn's convention (any two labels per task, the second one is the positive class).

The scale of the inputs, for the learners whose decisions depend on it, is checked with the
norms it is measured by (:func:`medmtl.online.scaling.check_row_scale`).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from medmtl._validation import (Checked, Interval, InvalidParameterError, _Unsatisfied, check_labels, check_matrix,
                                check_real_values, refuse_iterator, validate_params)

__all__ = ["LARGE", "INFINITY", "RANDOM_STATE", "Capped", "check_params", "input_matrix",
           "input_row", "label_array", "binary_classes", "check_known_labels", "same_classes", "encode_labels",
           "decode_labels"]

# The largest finite value of a scale-like hyper-parameter (b, eta, 1 / gamma, a prior weight's
# inverse). Keys, weights and margins are sums and products of such values with inputs of
# norm <= 1 over at most ~1e19 updates; bounded by 1e100 each, they stay far inside the float
# range (~1.8e308), so no intermediate overflows.
LARGE = 1e100


# --------------------------------------------------------------------------- parameters
class _PositiveInfinity:
    """The constraint ``float("inf")`` (``b = inf`` draws by the prior alone, ``lam = inf``)."""

    def parse(self, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or value != np.inf:
            raise _Unsatisfied
        return float("inf")

    def __str__(self):
        return "inf"


INFINITY = _PositiveInfinity()


class Capped(Interval):
    """An :class:`~medmtl._validation.Interval` from ``left`` up to a cap, named by its lower bound first.

    For the scale-like parameters: every finite value above the cap is absurd (it would
    overflow the arithmetic), and the message reads "b must be > 0 (..., at most 1e+100)".

    >>> from numbers import Real
    >>> str(Capped(Real, 0, 700, closed="both"))
    '>= 0 (a finite real number, at most 700)'
    """

    def __str__(self):
        operator = ">=" if self.closed in ("left", "both") else ">"
        kind = "a finite integer" if self.kind is numbers.Integral else "a finite real number"
        return f"{operator} {self.left:g} ({kind}, at most {self.right:g})"


def _seed(value):
    """``value`` unchanged if ``numpy.random.default_rng`` takes it (its own error otherwise)."""
    np.random.default_rng(value)
    return value


RANDOM_STATE = [None, Checked(_seed)]


def check_params(learner):
    """Check the hyper-parameters of ``learner`` against its ``_parameter_constraints``.

    Only the declared parameters are checked (a learner written outside medmtl may check
    its own); every learner of :mod:`medmtl.online` declares all of its parameters.

    Parameters
    ----------
    learner : OnlineLearner

    Returns
    -------
    dict
        The parsed values (numbers of an ``Interval`` as ``float`` or ``int``).

    Raises
    ------
    InvalidParameterError
        Naming the parameter, what it must be and what it got.
    """
    owner = type(learner).__name__
    constraints = getattr(learner, "_parameter_constraints", {})
    params = {name: value for name, value in learner.get_params(deep=False).items() if name in constraints}
    for name, value in params.items():
        # an Interval compares through float64: a Python integer beyond int64 is refused here,
        # with its name, rather than by numpy with a message about ufuncs
        if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) \
                and any(isinstance(c, Interval) for c in constraints[name]) and not -2 ** 63 <= value < 2 ** 63:
            raise InvalidParameterError(f"{owner}: {name} must be {' or '.join(map(str, constraints[name]))}; "
                                        f"got {value} (too large)")
    return validate_params(params, constraints, owner)


# ------------------------------------------------------------------------------- inputs
def input_matrix(X, name="X", n_features=None, owner=None):
    """The inputs ``X`` as a float64 array or a canonical CSR matrix, checked.

    Parameters
    ----------
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
    name : str
        Named in the messages.
    n_features : int, optional
        The width the learner was fitted on.
    owner : str, optional
        The learner (and task), named when the width is wrong.

    Returns
    -------
    ndarray or CSR matrix
        May be the caller's own array (callers never write into it).

    Raises
    ------
    ValueError, TypeError
        For an iterator, values that are not real numbers (complex numbers, dates, text,
        objects), NaN or infinity, no rows, no features, or another width than
        ``n_features``.

    Examples
    --------
    >>> input_matrix([[1, 2]]).dtype
    dtype('float64')
    >>> input_matrix([[1.0, 2.0, 3.0]], n_features=2, owner="SHAMPO (task 0)")
    Traceback (most recent call last):
    ...
    ValueError: X has 3 features, but SHAMPO (task 0) was fitted on 2
    """
    if sp.issparse(X):
        check_real_values(X, name)
        try:
            # indices beyond the shape would send a compiled loop outside its arrays
            sp.csr_matrix(X).check_format(full_check=True)
        except ValueError as err:
            raise ValueError(f"{name} is a malformed sparse matrix: {err}") from None
    X = check_matrix(X, name=name)
    if X.shape[1] == 0:
        raise ValueError(f"{name} has no features (shape {X.shape}); need at least one column")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {owner} was fitted on {n_features}")
    return X


def input_row(x, name="x", n_features=None, owner=None):
    """One input as a checked one-row matrix (see :func:`input_matrix`).

    Parameters
    ----------
    x : array-like of shape (n_features,) or (1, n_features), pandas Series, or sparse row
    name, n_features, owner
        As for :func:`input_matrix`.

    Returns
    -------
    ndarray or CSR matrix of shape (1, n_features)

    Examples
    --------
    >>> input_row([3.0, 4.0])
    array([[3., 4.]])
    """
    refuse_iterator(x, name)
    if not sp.issparse(x):
        try:
            x = np.asarray(x)
        except ValueError as err:
            raise ValueError(f"{name} must be one example, a 1-D array of numbers ({err})") from None
        if x.ndim == 0:
            raise ValueError(f"{name} must be one example, a 1-D array of features; got the scalar {x.item()!r}")
        if x.ndim == 1:
            x = x[None, :]
    row = input_matrix(x, name=name, n_features=n_features, owner=owner)
    if row.shape[0] != 1:
        raise ValueError(f"{name} must be one example; got {row.shape[0]} rows")
    return row


# ------------------------------------------------------------------------------- labels
def label_array(y, name, n_samples=None):
    """Labels as a 1-D array of one kind (numbers or strings), nothing missing.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    name : str
    n_samples : int, optional
        How many labels there must be.

    Returns
    -------
    ndarray of shape (n_samples,)

    Examples
    --------
    >>> label_array(["a", 1], "y")
    Traceback (most recent call last):
    ...
    ValueError: y mixes strings and other values (int, str); labels must be all numbers or all strings
    """
    refuse_iterator(y, name)
    try:
        labels = np.asarray(y)
    except ValueError as err:
        raise ValueError(f"{name} must be a 1-D array of labels ({err})") from None
    if labels.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of labels; got shape {labels.shape}")
    if n_samples is not None and labels.shape[0] != n_samples:
        raise ValueError(f"{name} has {labels.shape[0]} labels but there are {n_samples} inputs; need one label "
                         "per input")
    if labels.dtype.kind in "mMV":
        raise ValueError(f"{name} holds {labels.dtype} values; labels must be numbers or strings")
    check_labels(labels, labels.shape[0], name)
    if labels.dtype.kind == "O" or labels.dtype.kind in "US" and not isinstance(y, np.ndarray):
        # numpy turns the list ["a", 1] into strings: look at the values as given
        given = labels if labels.dtype.kind == "O" else np.asarray(y, dtype=object)
        kinds = {type(v).__name__ for v in given.tolist()}
        if len({k == "str" for k in kinds}) > 1:
            raise ValueError(f"{name} mixes strings and other values ({', '.join(sorted(kinds))}); labels must be "
                             "all numbers or all strings")
    return labels


def _is_pm1(values):
    """Whether ``values`` are numbers, each -1 or +1 (booleans are not)."""
    values = np.asarray(values)
    if values.dtype.kind == "O":
        if not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in values.tolist()):
            return False
        values = values.astype(np.float64)
    return values.dtype.kind in "iuf" and bool(np.all((values == -1) | (values == 1)))


def _unique(labels, name):
    try:
        return np.unique(labels)
    except TypeError as err:
        raise ValueError(f"{name} must be labels of one kind (all numbers or all strings); {err}") from None


def _given_pairs(classes, n_tasks):
    """The explicit ``classes``: one pair for every task, or one pair per task."""
    refuse_iterator(classes, "classes")
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__len__"):
        raise TypeError(f"classes must be (negative, positive) or one such pair per task; got {classes!r}")
    per_task = len(classes) > 0 and all(np.ndim(c) == 1 for c in classes)
    pairs = list(classes) if per_task else [classes] * n_tasks
    if len(pairs) != n_tasks:
        raise ValueError(f"classes has {len(pairs)} pairs for {n_tasks} tasks")
    out = []
    for j, pair in enumerate(pairs):
        pair = label_array(pair, f"classes[{j}]" if per_task else "classes")
        if pair.size != 2 or pair[0] == pair[1]:
            raise ValueError(f"classes must be two distinct labels (negative, positive); got {pair.tolist()!r}")
        out.append(pair)
    return out


def binary_classes(label_arrays, classes=None, name="ys"):
    """The two classes of each binary task: ``classes[j][0]`` is coded -1, ``classes[j][1]`` +1.

    Without ``classes``: a task's two labels, sorted (scikit-learn's order). A task showing
    fewer than two labels takes the two labels of the tasks labelled alike (numbers, or
    strings) if together they show two, or ``(-1, +1)`` if its labels are -1 or +1; any
    other task needs ``classes``.

    Parameters
    ----------
    label_arrays : list of ndarray
        Each task's labels (as :func:`label_array` returns them).
    classes : pair or list of pairs, optional
        ``(negative, positive)`` for every task, or one such pair per task, in that order.
    name : str
        Named in the messages (``name[j]`` for task ``j``).

    Returns
    -------
    list of ndarray of shape (2,)
        ``(-1, +1)`` as an integer array whenever a task's classes are the numbers -1 and +1.

    Examples
    --------
    >>> [c.tolist() for c in binary_classes([np.array([0, 1, 1]), np.array([1, 1])])]
    [[0, 1], [0, 1]]
    >>> [c.tolist() for c in binary_classes([np.array([1.0, -1.0]), np.array(["no", "yes"])])]
    [[-1, 1], ['no', 'yes']]
    """
    n_tasks = len(label_arrays)
    if classes is not None:
        pairs = _given_pairs(classes, n_tasks)
        for j, (labels, pair) in enumerate(zip(label_arrays, pairs)):
            check_known_labels(labels, pair, f"{name}[{j}]")
    else:
        seen = [_unique(labels, f"{name}[{j}]") for j, labels in enumerate(label_arrays)]
        for j, u in enumerate(seen):
            if u.size > 2:
                raise ValueError(f"{name}[{j}] holds {u.size} labels {u.tolist()[:6]!r}: a binary task has two "
                                 "classes, such as {-1, +1}")
        shown = [u for u in seen if u.size]
        pairs = []
        for j, u in enumerate(seen):
            if u.size == 2:
                pairs.append(u)
                continue
            if u.size:
                alike = [v for v in shown if _same_kind(v, u)]
            else:  # a task without labels: all the tasks', if they are labelled alike
                alike = shown if all(_same_kind(v, shown[0]) for v in shown) else []
            pooled = _unique(np.concatenate(alike), name) if alike else u
            if pooled.size == 2:
                pairs.append(pooled)
            elif u.size == 0 or _is_pm1(u):
                pairs.append(np.array([-1, 1]))
            else:
                raise ValueError(f"{name}[{j}] holds only the label {u.tolist()[0]!r}, so its other class is "
                                 "unknown: a task showing one label must be labelled in {-1, +1}, or be given "
                                 "its two classes, classes=(negative, positive)")
    # -1 and +1 as numbers are one pair of classes, whatever their dtype: predictions stay integers
    return [np.array([-1, 1]) if _is_pm1(pair) and pair[0] < pair[1] else pair.copy() for pair in pairs]


def check_known_labels(labels, classes, name):
    """Raise unless every label is one of ``classes``.

    >>> check_known_labels(np.array([0, 1]), np.array([-1, 1]), "y")
    Traceback (most recent call last):
    ...
    ValueError: y holds the label 0, which is not one of the classes [-1, 1]
    """
    known = _same_kind(labels, classes) and np.isin(labels, classes)
    if not np.all(known):
        bad = labels[~np.asarray(known, dtype=bool)] if np.ndim(known) else labels
        unknown = _unique(bad, name).tolist()
        what = f"the label {unknown[0]!r}" if len(unknown) == 1 else f"the labels {unknown[:5]!r}"
        raise ValueError(f"{name} holds {what}, which {'is' if len(unknown) == 1 else 'are'} not one of the "
                         f"classes {classes.tolist()!r}")


def _same_kind(labels, classes):
    """Whether labels and classes can be compared: numbers with numbers, strings with strings."""
    def kind(a):
        a = np.asarray(a)
        if a.dtype.kind == "O":
            values = a.tolist()
            if all(isinstance(v, str) for v in values):
                return "U"
            if all(isinstance(v, (bool, np.bool_)) for v in values):
                return "b"
            return "n" if all(isinstance(v, numbers.Number) for v in values) else "O"
        return {"i": "n", "u": "n", "f": "n", "S": "U"}.get(a.dtype.kind, a.dtype.kind)

    a, b = kind(labels), kind(classes)
    return a == b or "O" in (a, b) or (np.asarray(labels).size == 0)


def same_classes(a, b):
    """Whether two pairs of classes are the same labels (numbers equal numbers of any dtype).

    >>> same_classes(np.array([-1, 1]), np.array([-1.0, 1.0])), same_classes(np.array([0, 1]), np.array(["0", "1"]))
    (True, False)
    """
    return a.shape == b.shape and _same_kind(a, b) and bool(np.all(a == b))


def encode_labels(labels, classes, name):
    """Labels as codes: -1 for ``classes[0]``, +1 for ``classes[1]`` (int8).

    >>> encode_labels(np.array(["no", "yes", "no"]), np.array(["no", "yes"]), "y").tolist()
    [-1, 1, -1]
    """
    check_known_labels(labels, classes, name)
    return np.where(labels == classes[1], 1, -1).astype(np.int8)


def decode_labels(codes, classes):
    """Codes (or margins; ``>= 0`` is the positive class) as the labels ``classes``.

    >>> decode_labels(np.array([-1, 1]), np.array(["no", "yes"])).tolist()
    ['no', 'yes']
    """
    return classes[(np.asarray(codes) >= 0).astype(np.intp)]
