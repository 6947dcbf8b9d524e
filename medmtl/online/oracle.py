"""The label oracle (the papers' annotator): the only way an online learner sees a label.

Online learners in medmtl never read a label array. They hold a :class:`LabelOracle` and
ask it for the label of one example of one task at a time; the oracle counts every query
(per task and in total), remembers which labels were asked, and enforces an optional
budget. Tests rely on this to prove that a learner reads no label it did not pay for.
A binary task may be labelled with any two values, scikit-learn's way: the oracle keeps
each task's two ``classes`` and answers a query with the label's code, -1 for the first
class and +1 for the second, which is all a learner computes with; the learners give
their predictions back in the classes. Labels handed to a learner directly (``fit(X, y)``,
``learn_one(x, y)``) are first put into an oracle (:func:`as_oracle`), so the learner still
sees only what it asks for.

The multiclass bandits ask yes/no-style questions about a class label; their annotators
are oracles too: :func:`one_vs_rest_oracle` ("is it class c?") and
:class:`PairFeedbackOracle` ("a, b, or neither?").

Compiled learners ask the same oracle from inside their loop: :meth:`LabelOracle.port`
hands out the oracle's own state (labels, counters, the record of asked labels, the
budget) as a tuple of arrays, and :func:`oracle_query` -- the compiled twin of
:meth:`LabelOracle.query` -- is the only function that reads it. A query from compiled code
is counted, recorded and budget-checked exactly like one from Python, in the same arrays,
so ``n_queries``, ``queries_per_task`` and ``was_queried`` see both.

A person (or any function) can be the annotator: :class:`~medmtl.online.live.CallableOracle`
is an oracle whose labels are given one round at a time (see :mod:`medmtl.online.live`).
"""

from __future__ import annotations

import numbers
import operator

import numpy as np
from numba import njit

from medmtl._validation import refuse_iterator
from medmtl.online._checks import binary_classes, encode_labels, label_array, same_classes

__all__ = ["LabelOracle", "BudgetExhausted", "PairFeedbackOracle", "as_oracle", "one_vs_one_pairs",
           "one_vs_rest_oracle", "oracle_query", "raise_query_status", "QUERY_BUDGET_SPENT",
           "QUERY_OUT_OF_RANGE", "QUERY_PENDING"]

# What oracle_query returns instead of a label (labels are -1, 0 or +1).
QUERY_BUDGET_SPENT = 2
QUERY_OUT_OF_RANGE = 3
# The label a live oracle (medmtl.online.live.CallableOracle) holds where it holds no answer.
# oracle_query hands it out like a label; every compiled caller stops on an answer > 1 and
# lets Python raise.
QUERY_PENDING = 5


def _check_ternary(y, name):
    y = label_array(y, name)
    if y.dtype.kind not in "iuf" or not np.all(np.isin(y, (-1, 0, 1))):
        raise ValueError(f"{name} must be a 1-D array of answers in {{-1, 0, +1}}")
    return y.astype(np.int8)


class BudgetExhausted(RuntimeError):
    """Raised when a label is requested after the query budget is spent."""


@njit(cache=True, nogil=True)
def oracle_query(port, task, index):
    """Compiled :meth:`LabelOracle.query`: the label of (task, index), counted.

    Parameters
    ----------
    port : tuple
        ``LabelOracle.port()``; opaque to the caller.
    task, index : int

    Returns
    -------
    label : int
        -1, 0 or +1; or ``QUERY_BUDGET_SPENT`` / ``QUERY_OUT_OF_RANGE`` (nothing counted),
        on which the caller must stop and let Python raise.
    """
    labels, offsets, asked, per_task, totals = port
    if task < 0 or task >= per_task.size or index < 0 or index >= offsets[task + 1] - offsets[task]:
        return QUERY_OUT_OF_RANGE
    if totals[1] >= 0 and totals[0] >= totals[1]:
        return QUERY_BUDGET_SPENT
    totals[0] += 1
    per_task[task] += 1
    pos = offsets[task] + index
    asked[pos] = True
    return labels[pos]


def raise_query_status(status, task, index, oracle):
    """Raise the error the Python :meth:`LabelOracle.query` would have raised.

    Parameters
    ----------
    status : int
        What :func:`oracle_query` returned instead of a label.
    task, index : int
        The label asked for.
    oracle : LabelOracle
    """
    if status == QUERY_BUDGET_SPENT:
        raise BudgetExhausted(f"the query budget of {oracle.budget} labels is spent")
    if status in (QUERY_OUT_OF_RANGE, QUERY_PENDING):
        oracle._unanswered(task, index)
    raise RuntimeError(f"unknown query status {status}")  # pragma: no cover


class LabelOracle:
    """Hand out labels of a multi-task stream one query at a time, counting them.

    Parameters
    ----------
    ys : list of array-like of shape (n_examples_j,)
        The labels of each task's examples: two values per task (numbers or strings).
    budget : int or None, default=None
        The largest number of queries allowed in total; ``None`` for no limit.
    allow_zero : bool, default=False
        Answers in {-1, 0, +1}, 0 meaning "neither", as the one-vs-one bandit annotator
        gives; ``classes`` is then (-1, +1) for every task.
    classes : pair or list of pairs, optional
        ``(negative, positive)`` for every task, or one such pair per task: the label coded
        -1 and the label coded +1. Default: each task's two labels in sorted order
        (scikit-learn's ``classes_``); a task showing one label takes the two labels of the
        tasks labelled alike (numbers, or strings), or (-1, +1) when its label is -1 or +1.

    Attributes
    ----------
    classes : list of ndarray of shape (2,)
        Each task's two classes, negative first.
    n_queries : int
        Queries answered so far.
    queries_per_task : ndarray of shape (n_tasks,)
        Queries answered so far, per task.

    Examples
    --------
    >>> oracle = LabelOracle([[1, -1], [-1, -1, 1]], budget=2)
    >>> oracle.query(1, 2)
    1
    >>> oracle.n_queries, oracle.remaining
    (1, 1)
    >>> oracle.queries_per_task.tolist()
    [0, 1]
    >>> oracle.was_queried(1, 2), oracle.was_queried(0, 0)
    (True, False)

    Any two labels per task; a query answers with the label's code:

    >>> spam = LabelOracle([["ham", "spam", "ham"]])
    >>> spam.classes[0].tolist(), spam.query(0, 1), spam.query(0, 2)
    (['ham', 'spam'], 1, -1)
    """

    # Labels given round by round (a live annotator) cannot feed a pass over a whole stream.
    _live = False

    def __init__(self, ys, budget=None, allow_zero=False, classes=None):
        refuse_iterator(ys, "ys")
        if isinstance(ys, (str, bytes)) or isinstance(ys, np.ndarray) and ys.ndim == 1 or not hasattr(ys, "__len__") \
                or len(ys) == 0:
            raise TypeError("ys must be a non-empty list of per-task label arrays")
        if allow_zero:
            if classes is not None:
                raise ValueError("answers in {-1, 0, +1} (allow_zero=True) have no classes to give")
            labels = [_check_ternary(y, name=f"ys[{j}]") for j, y in enumerate(ys)]
            self.classes = [np.array([-1, 1]) for _ in labels]
        else:
            given = [label_array(y, f"ys[{j}]") for j, y in enumerate(ys)]
            self.classes = binary_classes(given, classes, name="ys")
            labels = [encode_labels(y, c, f"ys[{j}]") for j, (y, c) in enumerate(zip(given, self.classes))]
        if budget is not None and (isinstance(budget, (bool, np.bool_)) or not isinstance(budget, numbers.Real)
                                   or not np.isfinite(budget) or int(budget) != budget or budget < 0):
            raise ValueError(f"budget must be a non-negative integer or None, got {budget!r}")
        self.budget = None if budget is None else int(budget)
        # One flat store for all tasks, so the compiled twin of ``query`` reads the same arrays.
        self._offsets = np.concatenate([[0], np.cumsum([y.size for y in labels])]).astype(np.int64)
        self._labels = np.concatenate(labels).astype(np.int8)
        self._asked = np.zeros(self._labels.size, dtype=np.bool_)
        self.queries_per_task = np.zeros(len(labels), dtype=np.int64)
        # [queries so far, budget (-1: none)]
        self._totals = np.array([0, -1 if budget is None else int(budget)], dtype=np.int64)

    @property
    def n_tasks(self):
        """int: the tasks the oracle holds labels of."""
        return self.queries_per_task.size

    @property
    def n_queries(self):
        """int: queries answered so far."""
        return int(self._totals[0])

    @property
    def remaining(self):
        """Queries left in the budget (``inf`` without a budget)."""
        return float("inf") if self.budget is None else self.budget - int(self._totals[0])

    def _position(self, task, index):
        task, index = operator.index(task), operator.index(index)
        if not 0 <= task < self.queries_per_task.size:
            raise IndexError(f"task {task} out of range for {self.queries_per_task.size} tasks")
        size = self._offsets[task + 1] - self._offsets[task]
        if not 0 <= index < size:
            raise IndexError(f"index {index} out of range for task {task} ({size} labels)")
        return task, self._offsets[task] + index

    def query(self, task, index):
        """Return the label of example ``index`` of task ``task`` and count the query.

        Parameters
        ----------
        task, index : int

        Returns
        -------
        label : int
            The label's code: -1 for ``classes[task][0]``, +1 for ``classes[task][1]`` (0
            for "neither" with ``allow_zero``).
        """
        task, pos = self._position(task, index)
        totals = self._totals
        if totals[1] >= 0 and totals[0] >= totals[1]:
            raise BudgetExhausted(f"the query budget of {self.budget} labels is spent")
        totals[0] += 1
        self.queries_per_task[task] += 1
        self._asked[pos] = True
        return int(self._labels[pos])

    def _unanswered(self, task, index):
        raise IndexError(f"no label ({task}, {index}) in an oracle of {self.n_tasks} tasks")

    def was_queried(self, task, index):
        """Whether the label of (task, index) has been requested.

        Parameters
        ----------
        task, index : int
        """
        return bool(self._asked[self._position(task, index)[1]])

    def port(self):
        """The oracle's state for a compiled learner, to be read only by :func:`oracle_query`.

        The arrays are the oracle's own (not copies): queries made through the port are
        counted here at once.
        """
        return (self._labels, self._offsets, self._asked, self.queries_per_task, self._totals)


def as_oracle(y, n_tasks=None, n_rows=None, classes=None):
    """The oracle itself, or a :class:`LabelOracle` over per-task label arrays.

    Parameters
    ----------
    y : LabelOracle or list of array-like of labels
    n_tasks : int, optional
        The number of tasks the oracle must know.
    n_rows : sequence of int, optional
        The number of examples of each task in a pass (``fit``): the labels, or the oracle,
        must hold exactly one label for each, so that a wrong length is an error before the
        first round rather than midway or unseen.
    classes : pair or list of pairs, optional
        For label arrays: the classes of :class:`LabelOracle`. For an oracle: the classes
        its tasks must have (a learner's ``classes_``).

    Returns
    -------
    LabelOracle

    Examples
    --------
    >>> as_oracle([[1, -1], [1]]).n_tasks
    2
    >>> as_oracle([[1, -1], [1]], n_rows=[2, 3])
    Traceback (most recent call last):
    ...
    ValueError: ys[1] has 1 label but its task has 3 inputs; need one label per input
    """
    if not isinstance(y, LabelOracle):
        if n_rows is not None and hasattr(y, "__len__") and not isinstance(y, (str, bytes, np.ndarray)):
            if n_tasks is not None and len(y) != n_tasks:
                raise ValueError(f"the labels cover {len(y)} tasks but the stream has {n_tasks}")
            for j, (labels, n) in enumerate(zip(y, n_rows)):
                refuse_iterator(labels, f"ys[{j}]")
                held = np.shape(labels)[0] if np.ndim(labels) else 0
                if held != n:
                    raise ValueError(f"ys[{j}] has {held} label{'s' if held != 1 else ''} but its task has {n} "
                                     "inputs; need one label per input")
        return LabelOracle(y, classes=classes)
    oracle = y
    if n_rows is not None and oracle._live:
        raise TypeError("a CallableOracle answers one question at a time: play the stream round by round "
                        "with learn_one(x, oracle=...), not fit")
    if n_tasks is not None and oracle.n_tasks != n_tasks:
        raise ValueError(f"the oracle holds {oracle.n_tasks} tasks but the stream has {n_tasks}")
    if n_rows is not None:
        held = np.diff(oracle._offsets)
        for j, (h, n) in enumerate(zip(held, n_rows)):
            if h != n:
                # a pass asks example t's label as index t: an oracle of another length is
                # another stream's (a longer one never shows its extra labels)
                raise ValueError(f"the oracle holds {h} label{'s' if h != 1 else ''} for task {j}, "
                                 f"which has {n} examples; give the oracle of this stream's labels")
    if classes is not None:
        for j, (theirs, ours) in enumerate(zip(oracle.classes, classes)):
            if not same_classes(theirs, ours):
                raise ValueError(f"the oracle's classes for task {j}, {theirs.tolist()!r}, are not the learner's, "
                                 f"{ours.tolist()!r}: label the stream as the learner was first taught")
    return oracle


def one_vs_one_pairs(n_classes):
    """The class pairs (a, b), a < b, in the order of the one-vs-one tasks.

    Parameters
    ----------
    n_classes : int

    Returns
    -------
    pairs : list of (int, int)

    Examples
    --------
    >>> one_vs_one_pairs(3)
    [(0, 1), (0, 2), (1, 2)]
    """
    return [(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)]


def _class_indices(labels, n_classes):
    """Labels as a 1-D integer array, and the number of classes (default: the largest + 1)."""
    refuse_iterator(labels, "labels")
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.dtype.kind not in "iu":
        raise ValueError("labels must be a 1-D array of class indices")
    if labels.size == 0:
        raise ValueError("labels is empty; need at least one class index")
    if n_classes is None:
        n_classes = int(labels.max()) + 1
    elif isinstance(n_classes, (bool, np.bool_)) or not isinstance(n_classes, numbers.Integral) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    if labels.min() < 0 or labels.max() >= n_classes:
        raise ValueError(f"labels must be class indices in 0 .. {int(n_classes) - 1}; found "
                         f"{int(labels.min()) if labels.min() < 0 else int(labels.max())}")
    return labels, int(n_classes)


def one_vs_rest_oracle(labels, n_classes=None, budget=None):
    """A :class:`LabelOracle` answering "is the label of example t class c?" as task c.

    Parameters
    ----------
    labels : array-like of int of shape (n_samples,)
        Class indices in ``0 .. n_classes - 1``.
    n_classes : int, optional
        Default: the largest label + 1.
    budget : int or None

    Examples
    --------
    >>> oracle = one_vs_rest_oracle([2, 0, 1])
    >>> oracle.query(2, 0), oracle.query(1, 0)
    (1, -1)
    """
    labels, n_classes = _class_indices(labels, n_classes)
    return LabelOracle([np.where(labels == c, 1, -1) for c in range(n_classes)], budget=budget)


class PairFeedbackOracle(LabelOracle):
    """The one-vs-one annotator: task k = pair (a, b) answers +1 (it is a), -1 (b) or 0.

    A :class:`LabelOracle` (same counting, budget and ``was_queried``) whose answers may be
    0, the "neither" feedback of Sec. 5.2 of Cohen & Crammer (2014).

    Parameters
    ----------
    labels, n_classes, budget
        As for :func:`one_vs_rest_oracle`.

    Attributes
    ----------
    n_classes : int
    pairs : list of (int, int)
        The classes of each task, as :func:`one_vs_one_pairs` orders them.

    Examples
    --------
    >>> oracle = PairFeedbackOracle([0, 2, 1])
    >>> oracle.pairs
    [(0, 1), (0, 2), (1, 2)]
    >>> oracle.query(0, 0), oracle.query(1, 1), oracle.query(0, 1), oracle.n_queries
    (1, -1, 0, 3)
    """

    def __init__(self, labels, n_classes=None, budget=None):
        labels, self.n_classes = _class_indices(labels, n_classes)
        self.pairs = one_vs_one_pairs(self.n_classes)
        answers = [np.where(labels == a, 1, np.where(labels == b, -1, 0)) for a, b in self.pairs]
        super().__init__(answers, budget=budget, allow_zero=True)
