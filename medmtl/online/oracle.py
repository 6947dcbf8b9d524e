"""The label oracle (the paper's annotator): the only way an online learner sees a label.

Online learners in medmtl never receive a label array. They receive a ``LabelOracle`` and
ask it for the label of one example of one task at a time; the oracle counts every query
(per task and in total) and enforces an optional budget. Tests rely on this to prove that a
learner reads no label it did not pay for.
"""

from __future__ import annotations

import numpy as np

from medmtl._validation import check_pm1_labels

__all__ = ["LabelOracle", "BudgetExhausted"]


def _check_ternary(y, name):
    y = np.asarray(y)
    if y.ndim != 1 or y.dtype.kind not in "iuf" or not np.all(np.isin(y, (-1, 0, 1))):
        raise ValueError(f"{name} must be a 1-D array of answers in {{-1, 0, +1}}")
    return y.astype(np.int64)


class BudgetExhausted(RuntimeError):
    """Raised when a label is requested after the query budget is spent."""


class LabelOracle:
    """Hand out labels of a multi-task stream one query at a time, counting them.

    Parameters
    ----------
    ys : list of array-like of shape (n_examples_j,)
        The labels of each task's examples, in {-1, +1}.
    budget : int or None, default=None
        The largest number of queries allowed in total; ``None`` for no limit.
    allow_zero : bool, default=False
        Also accept the answer 0 ("neither"), as the one-vs-one bandit annotator gives.

    Attributes
    ----------
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
    """

    def __init__(self, ys, budget=None, allow_zero=False):
        check = _check_ternary if allow_zero else check_pm1_labels
        self._labels = [check(y, name=f"ys[{j}]") for j, y in enumerate(ys)]
        if budget is not None and (int(budget) != budget or budget < 0):
            raise ValueError(f"budget must be a non-negative integer or None, got {budget!r}")
        self.budget = None if budget is None else int(budget)
        self.queries_per_task = np.zeros(len(self._labels), dtype=np.int64)
        self._asked = set()

    @property
    def n_tasks(self):
        return len(self._labels)

    @property
    def n_queries(self):
        return int(self.queries_per_task.sum())

    @property
    def remaining(self):
        """Queries left in the budget (``inf`` without a budget)."""
        return float("inf") if self.budget is None else self.budget - self.n_queries

    def query(self, task, index):
        """Return the label of example ``index`` of task ``task`` and count the query."""
        if not 0 <= task < len(self._labels):
            raise IndexError(f"task {task} out of range for {len(self._labels)} tasks")
        if self.remaining <= 0:
            raise BudgetExhausted(f"the query budget of {self.budget} labels is spent")
        label = int(self._labels[task][index])
        self.queries_per_task[task] += 1
        self._asked.add((int(task), int(index)))
        return label

    def was_queried(self, task, index):
        """Whether the label of (task, index) has been requested."""
        return (int(task), int(index)) in self._asked
