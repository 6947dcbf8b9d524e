"""Independent active perceptrons: the *Random* and *Independent* baselines of the AMLC paper.

Each task keeps its own perceptron and nothing moves between tasks. On a round ``(x, k)``
the task predicts ``sign(<x, w_k>)``, asks for the label with a probability that depends
on the baseline, and updates ``w_k`` when a bought label shows a mistake:

- :class:`RandomQuery`: a fixed probability (1/2 in the paper);
- :class:`IndependentQuery`: ``b / (b + |<x, w_k>|)``, selective sampling on the task's own
  margin (Cesa-Bianchi et al., 2006).

The conventions (coin flips, ``sign(0) = +1``, budget) are those of
:mod:`medmtl.online.active`.
"""

from __future__ import annotations

from numbers import Real
from typing import NamedTuple

from numba import njit
from numba.extending import overload

from medmtl._validation import Interval
from medmtl.online._checks import LARGE, Capped
from medmtl.online.active import ActiveLearner, buy_label, log_prediction, selective_probability
from medmtl.online.rows import row_dot

__all__ = ["RandomQuery", "IndependentQuery", "FixedProbability", "MarginProbability", "independent_asks",
           "independent_rounds"]


class FixedProbability(NamedTuple):
    """Ask with probability ``q`` whatever the margin.

    Parameters
    ----------
    q : float in [0, 1]
    """

    q: float


class MarginProbability(NamedTuple):
    """Ask with probability ``b / (b + |p|)`` on the margin ``p``.

    Parameters
    ----------
    b : float > 0
    """

    b: float


def _query_probability(rule, p):
    raise NotImplementedError  # pragma: no cover - only the compiled overloads run


@overload(_query_probability, jit_options={"cache": True, "nogil": True})
def _query_probability_impl(rule, p):
    kind = getattr(rule, "instance_class", None)
    if kind is FixedProbability:
        return lambda rule, p: rule.q
    if kind is MarginProbability:
        return lambda rule, p: selective_probability(rule.b, p)
    return None


@njit(cache=True, nogil=True)
def independent_asks(rule, rows, t, W, k, u, left):
    """Task ``k``'s margin on row ``t``, and whether the round asks for the label.

    Parameters
    ----------
    rule : FixedProbability or MarginProbability
    rows : DenseRows or CsrRows
        Row ``t`` is the round's input.
    t, k : int
        The row, and the task it is an example of.
    W : ndarray of shape (n_features, n_tasks)
        Every task's weights, a column each.
    u : ndarray of shape (1,)
        The round's coin flip.
    left : int
        Labels that may still be bought.

    Returns
    -------
    margin : float
    asks : bool
    """
    p = row_dot(rows, t, W[:, k])
    return p, u[0] < _query_probability(rule, p) and left > 0


@njit(cache=True, nogil=True)
def independent_rounds(rule, rows, rounds, W, port, left, log):
    """Play the rounds of independent active perceptrons; updates ``W`` in place.

    Parameters
    ----------
    rule : FixedProbability or MarginProbability
        When to ask.
    rows : DenseRows or CsrRows
        Row ``t`` is round ``t``'s input.
    rounds : ActiveRounds
    W : ndarray of shape (n_features, n_tasks)
    port : tuple
        ``LabelOracle.port()``.
    left : int
        Labels that may still be bought.
    log : ActiveLog

    Returns
    -------
    status, rounds_played : int
        Status 0 when every round was played, else the oracle's refusal at that round.
    """
    n = rounds.tasks.size
    for t in range(n):
        p, asks = independent_asks(rule, rows, t, W, rounds.tasks[t], rounds.uniforms[t], left)
        predicted = log_prediction(log, t, p)
        if asks:
            y = buy_label(port, rows, rounds, t, W, predicted, log)
            if y > 1:
                return y, t
            left -= 1
    return 0, n


class _IndependentPerceptrons(ActiveLearner):
    """The two baselines differ only in when they ask (``_rule``)."""

    def _play_rows(self, rows, rounds, port, left, log):
        return independent_rounds(self._rule(), rows, rounds, self._W, port, left, log)

    def _asks(self, rows, task, uniforms, left):
        return independent_asks(self._rule(), rows, 0, self._W, task, uniforms, left)[1]


class RandomQuery(_IndependentPerceptrons):
    """The *Random* baseline: independent perceptrons that query with probability 1/2.

    Each task keeps its own perceptron; on every round the label is requested with
    probability ``query_probability`` regardless of the margin, and the task's perceptron is
    updated when a paid-for label shows a mistake. No knowledge moves between tasks.

    Parameters
    ----------
    query_probability : float, default=0.5
        The probability of paying for a label on any round.
    budget : int or None, default=None
        The most labels to pay for; learning ends when it is spent.
    random_state : int, numpy.random.Generator or None, default=None

    Attributes
    ----------
    weights_ : ndarray of shape (n_tasks, n_features)
    classes_, feature_names_in_
        As for :class:`~medmtl.online.amlc.AMLC`.
    n_queries_, n_updates_, n_rounds_ : int
    queries_per_task_, updates_per_task_ : ndarray of shape (n_tasks,)
    stream_order_, stream_predictions_, stream_queried_ : ndarray of shape (n_rounds, ...)
        Per round of the last :meth:`fit`: ``(task, index)``, the label predicted (before
        any query), whether the label was paid for.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.online.oracle import LabelOracle
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(40, 2)) for _ in range(2)]
    >>> ys = [np.where(X[:, 0] >= 0, 1, -1) for X in Xs]
    >>> oracle = LabelOracle(ys)
    >>> model = RandomQuery(random_state=0).fit(Xs, oracle)
    >>> bool(model.n_queries_ == oracle.n_queries == model.stream_queried_.sum())
    True
    >>> model.score(Xs, ys) > 0.8
    True
    """

    _parameter_constraints = {**ActiveLearner._parameter_constraints,
                              "query_probability": [Interval(Real, 0, 1, closed="both")]}

    def __init__(self, query_probability=0.5, budget=None, random_state=None):
        self._init_params(locals())

    def _rule(self):
        return FixedProbability(self._settings["query_probability"])


class IndependentQuery(_IndependentPerceptrons):
    """The *Independent* baseline: one selective-sampling perceptron per task.

    The label of a round of task ``k`` is requested with probability ``b / (b + |p|)``, where
    ``p = <x, w_k>`` is the margin of task ``k``'s own perceptron (Cesa-Bianchi et al.,
    2006); a paid-for label that shows a mistake updates ``w_k``. No knowledge moves between
    tasks.

    Parameters
    ----------
    b : float, default=1.0
        Confidence scale: the larger ``b``, the larger the margin needed to skip a label.
    budget : int or None, default=None
        The most labels to pay for; learning ends when it is spent.
    random_state : int, numpy.random.Generator or None, default=None

    Attributes
    ----------
    weights_, classes_, feature_names_in_, n_queries_, n_updates_, n_rounds_, queries_per_task_,
    updates_per_task_, stream_order_, stream_predictions_, stream_queried_
        As for :class:`RandomQuery`.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.online.oracle import LabelOracle
    >>> Xs = [np.array([[1.0, 0.2], [-1.0, 0.1], [0.9, -0.3], [-0.8, 0.0]])] * 2
    >>> oracle = LabelOracle([[1, -1, 1, -1], [1, -1, 1, -1]])
    >>> model = IndependentQuery(random_state=0).fit(Xs, oracle)
    >>> model.predict(Xs[1], task=1).tolist()
    [1, -1, 1, -1]
    """

    _parameter_constraints = {**ActiveLearner._parameter_constraints, "b": [Capped(Real, 0, LARGE, closed="right")]}

    def __init__(self, b=1.0, budget=None, random_state=None):
        self._init_params(locals())

    def _rule(self):
        return MarginProbability(self._settings["b"])
