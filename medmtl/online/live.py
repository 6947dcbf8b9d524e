"""A person (or any function) as the annotator: questions asked one round at a time.

:class:`CallableOracle` is a :class:`~medmtl.online.oracle.LabelOracle` that holds no
labels in advance. A round is played in two steps: the learner's ``query_one`` gives the
round's questions (:class:`Query`: the example, the task, the input, the learner's
prediction and margin), the oracle's callable answers them (:meth:`CallableOracle.ask`),
and the round is played with the answers, which the oracle holds for that round only
(:meth:`CallableOracle.holding`): the compiled loops read them through the oracle's port
like any other label, and the oracle counts them. ``learn_one(x, oracle=oracle)`` does the
three, so nothing a learner does depends on who answers.
"""

from __future__ import annotations

import numbers
import operator
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from medmtl.online._checks import encode_labels, label_array
from medmtl.online.oracle import QUERY_PENDING, BudgetExhausted, LabelOracle

__all__ = ["Query", "CallableOracle"]


@dataclass(frozen=True)
class Query:
    """One question of a round, as a learner's ``query_one`` returns it (and a :class:`CallableOracle` is asked it).

    Parameters
    ----------
    index : int
        The example's position in its task's stream (the learner's ``index``).
    task : int
        The task whose label is asked: for the bandit learners, the class or pair asked about.
    x : ndarray of shape (n_features,) or sparse matrix of shape (1, n_features)
        That task's input of the round (a copy).
    prediction : int, label or None
        The learner's prediction before this round's update: one of the task's two classes,
        or the class for the multiclass learners; None before the learner's first round.
    margin : float or None
        The margin of the asked task (its confidence); None before the first round.

    Examples
    --------
    >>> Query(index=3, task=0, x=np.zeros(2), prediction=1, margin=0.25).margin
    0.25
    """

    index: int
    task: int
    x: object
    prediction: object = None
    margin: float | None = None


class CallableOracle(LabelOracle):
    """A live annotator: a callable answers each question when the learner asks it.

    A :class:`LabelOracle` (same counting, ``budget`` and ``was_queried``) whose labels are
    not known in advance. A learner's ``learn_one(x, oracle=oracle)`` asks the round's
    questions first (its ``query_one``): ``answer(query)`` is called with a :class:`Query`
    (index, task, input, the learner's prediction and margin) for each; the round is then
    played with the answers, which the oracle holds for that round only. Compiled passes
    over many rounds (``fit``) need labels in advance: use a :class:`LabelOracle` there.

    Parameters
    ----------
    answer : callable
        ``answer(query) -> label``: one of the task's two ``classes`` (-1 or +1 by default;
        also 0 with ``allow_zero``), or None to skip the question. A skipped question drops
        the round before the learner learns anything from it, and costs no budget. If
        ``answer`` raises, the round is not played either, so it can be played again later.
    n_tasks : int, default=1
        The tasks (or, for a one-vs-rest bandit learner, classes) it answers about.
    budget : int or None, default=None
        The most labels it gives; once they are given, ``answer`` is not called again and a
        round that asks a question raises :class:`BudgetExhausted` (the active learners stop
        asking instead, as they do with any spent oracle).
    allow_zero : bool, default=False
        Answers in {-1, 0, +1}, 0 meaning "neither" (``classes`` is then (-1, +1)).
    classes : pair or list of pairs, optional
        ``(negative, positive)`` for every task, or one such pair per task: the answers
        the callable gives, as :class:`LabelOracle` takes them. Default (-1, +1).

    Attributes
    ----------
    classes : list of ndarray of shape (2,)
    record : list of dict
        One entry per question put to ``answer``, in order: ``index``, ``task``,
        ``prediction``, ``margin``, ``answer`` (None for a skip), ``time`` (``time.time()``
        when answered) and ``seconds`` (how long answering took).
    n_skipped : int
        Questions skipped.
    n_queries, queries_per_task, remaining
        As for :class:`LabelOracle`: labels given.

    Examples
    --------
    A SHAMPO learner over two tasks, taught by a function that knows the labels:

    >>> from medmtl.online import SHAMPO
    >>> Xs = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [1.0, 1.0]])]
    >>> ys = [np.array([1, -1]), np.array([-1, 1])]
    >>> oracle = CallableOracle(lambda q: int(ys[q.task][q.index]), n_tasks=2, budget=5)
    >>> model = SHAMPO(random_state=0)
    >>> for t in range(2):
    ...     model.learn_one([X[t] for X in Xs], oracle=oracle)
    >>> oracle.n_queries, oracle.remaining, [r["index"] for r in oracle.record]
    (2, 3, [0, 1])
    >>> sorted(oracle.record[0])
    ['answer', 'index', 'margin', 'prediction', 'seconds', 'task', 'time']
    """

    _live = True

    def __init__(self, answer, n_tasks=1, budget=None, allow_zero=False, classes=None):
        if not callable(answer):
            raise TypeError(f"answer must be a callable answer(query) -> label, got {type(answer).__name__}")
        if isinstance(n_tasks, (bool, np.bool_)) or not isinstance(n_tasks, numbers.Integral) or n_tasks < 1:
            raise ValueError(f"n_tasks must be a positive integer, got {n_tasks!r}")
        super().__init__([[] for _ in range(int(n_tasks))], budget=budget, allow_zero=allow_zero, classes=classes)
        self.answer = answer
        self.allow_zero = bool(allow_zero)
        self.record = []
        self.n_skipped = 0

    def query(self, task, index):
        """The label of (task, index), counted, while a round holds its answer.

        Parameters
        ----------
        task, index : int
            The question: its task and its example's index.

        Returns
        -------
        label : int
            The code of the answer held for it.

        Raises
        ------
        LookupError
            When no answer is held for it: the callable is asked by a learner's ``learn_one``.
        """
        task, index = operator.index(task), operator.index(index)
        if 0 <= task < self.n_tasks and index >= 0 and not self._holds(task, index):
            self._unanswered(task, index)
        return super().query(task, index)

    def _holds(self, task, index):
        start = self._offsets[task]
        return index < self._offsets[task + 1] - start and self._labels[start + index] != QUERY_PENDING

    def _unanswered(self, task, index):
        raise LookupError(f"no answer is held for the label ({task}, {index}): a CallableOracle answers the "
                          "questions of a round that learn_one(x, oracle=...) plays")

    def ask(self, queries):
        """Put each question to ``answer``, in order, recording it; the labels' codes, or None.

        Parameters
        ----------
        queries : list of Query
            A round's questions (a learner's ``query_one``).

        Returns
        -------
        codes : list of int or None
            -1 or +1 for each question (0 for "neither"); None as soon as one is skipped
            (the questions after it are not asked).

        Raises
        ------
        BudgetExhausted
            When the round asks more labels than the budget has left (nothing is asked).
        """
        if len(queries) > self.remaining:
            raise BudgetExhausted(f"the query budget of {self.budget} labels is spent")
        codes = []
        for query in queries:
            started = time.perf_counter()
            label = self.answer(query)
            seconds = time.perf_counter() - started
            if label is not None:
                label = self._code(label, query.task)
            self.record.append({"index": query.index, "task": query.task, "prediction": query.prediction,
                                "margin": query.margin, "answer": label, "time": time.time(), "seconds": seconds})
            if label is None:
                self.n_skipped += 1
                return None
            codes.append(label)
        return codes

    @contextmanager
    def holding(self, queries, codes):
        """Hold the answers ``codes`` to ``queries`` while the round is played, then forget them.

        A later round may ask again for the same (task, index), about another example.

        Parameters
        ----------
        queries : list of Query
        codes : list of int
            As :meth:`ask` returns them.
        """
        for query, code in zip(queries, codes):
            self._ensure(query.task, query.index)
            self._labels[self._offsets[query.task] + query.index] = code
        try:
            yield self
        finally:
            for query in queries:
                self._labels[self._offsets[query.task] + query.index] = QUERY_PENDING

    def _ensure(self, task, index):
        """Make room for the label (task, index), growing the task's store."""
        if not 0 <= task < self.n_tasks or index < 0:
            raise IndexError(f"no label ({task}, {index}) in an oracle of {self.n_tasks} tasks")
        sizes = np.diff(self._offsets)
        if index < sizes[task]:
            return
        labels = [self._labels[self._offsets[j]:self._offsets[j + 1]] for j in range(self.n_tasks)]
        asked = [self._asked[self._offsets[j]:self._offsets[j + 1]] for j in range(self.n_tasks)]
        grow = max(index + 1, 2 * int(sizes[task]), 16) - int(sizes[task])
        labels[task] = np.concatenate([labels[task], np.full(grow, QUERY_PENDING, dtype=np.int8)])
        asked[task] = np.concatenate([asked[task], np.zeros(grow, dtype=np.bool_)])
        sizes[task] += grow
        self._labels, self._asked = np.concatenate(labels), np.concatenate(asked)
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def _code(self, answer, task):
        """The code of an answer: -1 or +1 for the task's two classes (0 for "neither")."""
        allowed = (-1, 0, 1) if self.allow_zero else tuple(self.classes[task].tolist())
        if np.ndim(answer) == 0:
            if self.allow_zero:
                if isinstance(answer, numbers.Real) and not isinstance(answer, (bool, np.bool_)) and answer in allowed:
                    return int(answer)
            else:
                try:
                    return int(encode_labels(label_array([answer], "answer"), self.classes[task], "answer")[0])
                except (TypeError, ValueError):
                    pass
        raise ValueError(f"the annotator's answer must be one of {allowed} or None (skip); got {answer!r}")
