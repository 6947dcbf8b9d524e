"""Active multitask learning with committees (AMLC).

Xu, Tang & Jebara, "Active Multitask Learning with Committees" (``amlc_xu_tang_jebara.txt``
in the seeds), Algorithm 1. Its baselines live in :mod:`medmtl.online.independent` (Random,
Independent) and :mod:`medmtl.online.peer` (PEER, PEER+Share); the round conventions they
all share are in :mod:`medmtl.online.active`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from medmtl._validation import Options
from medmtl.online.active import (COMMITTEE_PARAMETERS, ActiveLearner, buy_label, committee_margin, log_prediction,
                                  reweight, selective_probability, share_example)
from medmtl.online.rows import row_dots

__all__ = ["AMLC", "Committees", "amlc_asks", "amlc_rounds"]


class Committees(NamedTuple):
    """AMLC's committees and parameters, as its compiled loop reads them.

    Parameters
    ----------
    tau : ndarray of shape (n_tasks, n_tasks)
        Row ``k`` is task ``k``'s committee; updated in place.
    scale : float
        1 ("mean" confidence) or K ("sum").
    b, C : float
    share, share_on_mistake : bool
    """

    tau: np.ndarray
    scale: float
    b: float
    C: float
    share: bool
    share_on_mistake: bool


@njit(cache=True, nogil=True)
def amlc_asks(committees, rows, t, W, k, u, left, scores):
    """Task ``k``'s committee margin on row ``t``, and whether the round asks for the label.

    Parameters
    ----------
    committees : Committees
    rows, t, W, k, u, left
        As for :func:`~medmtl.online.independent.independent_asks`.
    scores : ndarray of shape (n_tasks,)
        Receives every task's margin.

    Returns
    -------
    margin : float
    asks : bool
    """
    row_dots(rows, t, W, scores)
    p = committee_margin(scores, committees.tau[k]) * committees.scale
    return p, not (u[0] >= selective_probability(committees.b, p) or left <= 0)


@njit(cache=True, nogil=True)
def amlc_rounds(committees, rows, rounds, W, port, left, log):
    """Play AMLC's rounds (Algorithm 1); updates ``W`` and the committees in place.

    Parameters
    ----------
    committees : Committees
    rows, rounds, W, port, left, log
        As for :func:`~medmtl.online.independent.independent_rounds`.

    Returns
    -------
    status, rounds_played : int
    """
    scores, losses = np.empty(W.shape[1]), np.empty(W.shape[1])
    for t in range(rounds.tasks.size):
        k = rounds.tasks[t]
        committee = committees.tau[k]
        p, asks = amlc_asks(committees, rows, t, W, k, rounds.uniforms[t], left, scores)
        predicted = log_prediction(log, t, p)
        if not asks:
            continue
        y = buy_label(port, rows, rounds, t, W, predicted, log)
        if y > 1:
            return y, t
        left -= 1
        # l_km: the hinge loss of peer m on this round's margins (the weights before its updates)
        for m in range(scores.size):
            losses[m] = max(1.0 - y * scores[m], 0.0)
        reweight(committee, losses, committees.C, True)
        if committees.share:
            reference = y if committees.share_on_mistake else predicted
            share_example(rows, t, W, scores, committee, k, y, reference, committee[k], log)
    return 0, rounds.tasks.size


class AMLC(ActiveLearner):
    """Active multitask learning with committees (Xu, Tang & Jebara, Algorithm 1).

    Every task ``k`` has a perceptron ``w_k`` and a committee: row ``k`` of the relationship
    matrix ``tau`` (K x K, rows start at ``1/K`` and sum to one). On a round ``(x, k)``:

    1. peer margins ``p_km = <x, w_m>`` for every task ``m``; committee confidence
       ``p = sum_m tau_km p_km``; prediction ``y_hat = sign(p)``;
    2. query the label with probability ``b / (b + |p|)``;
    3. if queried: ``w_k += y x`` when ``y != y_hat`` (perceptron step on a committee
       mistake); ``tau_km <- tau_km exp(-C l_km / lambda)`` with hinge losses
       ``l_km = (1 - y p_km)_+`` and ``lambda = sum_m l_km`` (no change when every loss is
       zero), then the row is renormalised; finally the example is shared: ``w_m += y x``
       for every ``m != k`` with ``tau_km >= tau_kk`` (the updated weights) whose own
       prediction ``sign(p_km)`` differs from ``y_hat`` (line 14 of Algorithm 1 as printed;
       ``share_on="mistake"`` compares with the true label ``y`` instead).

    The losses ``l_km`` use the round's margins ``p_km``, i.e. the weights before this
    round's updates (section 2 writes ``w^(t)``, which could be read as task ``k``'s updated
    weights; the first author's code uses the margins already computed).

    At test time task ``k`` predicts with its committee, ``sign(<x, sum_m tau_km w_m>)``
    (Algorithm 1 returns ``tau w``).

    Parameters
    ----------
    b : float, default=1.0
        Confidence scale of the query probability (the paper uses ``b = 1``).
    C : float, default=1.0
        How fast committee weights decay with loss (chosen by cross-validation in the
        paper). ``C = 0`` keeps the committees uniform.
    share : bool, default=True
        Share queried examples with similar tasks (section 3.2). ``False`` is an ablation.
    share_on : {"disagreement", "mistake"}, default="disagreement"
        Which peers receive a shared example: those whose sign disagrees with the committee
        prediction ``y_hat`` (Algorithm 1, line 14, literally), or those whose sign
        disagrees with the true label (a mistake-driven reading of the same line).
    confidence : {"mean", "sum"}, default="mean"
        ``"mean"``: ``p = sum_m tau_km p_km`` with rows of ``tau`` summing to one, as
        Algorithm 1 is printed. ``"sum"``: ``p`` is ``K`` times that, i.e. committee weights
        that start at 1 and sum to ``K``, as in the first author's public code
        (``humble_peer.py`` in ``JingxiXu/humble-peer-amtl``). Only the query probability
        changes (``"sum"`` is ``"mean"`` with ``b / K``); predictions, the ``tau`` update and
        the sharing test are scale-free.
    budget : int or None, default=None
        The most labels to pay for; learning ends when it is spent.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the stream order drawn by :meth:`fit` and the query coin flips.

    Attributes
    ----------
    weights_ : ndarray of shape (n_tasks, n_features)
        The perceptrons ``w`` (row per task).
    committee_weights_ : ndarray of shape (n_tasks, n_tasks)
        The relationship matrix ``tau``; row ``k`` is task ``k``'s committee.
    classes_ : list of ndarray of shape (2,)
        Each task's two labels (the oracle's ``classes``); a margin >= 0 predicts the second.
    feature_names_in_ : ndarray of str
        The column names, when every task was given as a DataFrame with the same columns.
    n_queries_, n_updates_, n_rounds_ : int
        Labels paid for, rank-one updates made (own mistakes plus shared examples), rounds.
    queries_per_task_, updates_per_task_ : ndarray of shape (n_tasks,)
    stream_order_, stream_predictions_, stream_queried_ : ndarray
        Per round of the last :meth:`fit`: ``(task, index)``, committee prediction, whether
        the label was paid for.

    Examples
    --------
    Three tasks with one rule, a committee each:

    >>> from medmtl.online import LabelOracle
    >>> Xs = np.split(np.random.default_rng(0).normal(size=(90, 3)), 3)
    >>> ys = [np.where(X @ [1.0, 0.1, 0.0] >= 0, 1, -1) for X in Xs]
    >>> oracle = LabelOracle(ys)
    >>> model = AMLC(C=1.0, random_state=0).fit(Xs, oracle)
    >>> model.committee_weights_.sum(axis=1).round(6).tolist()
    [1.0, 1.0, 1.0]
    >>> model.n_queries_ == oracle.n_queries < 90
    True
    >>> model.score(Xs, ys) > 0.8
    True
    >>> model.learn_one(Xs[2][0], ys[2][0], task=2)
    >>> model.predict_one(Xs[2][0], task=2) in (-1, 1)
    True
    """

    _parameter_constraints = {**ActiveLearner._parameter_constraints, **COMMITTEE_PARAMETERS,
                              "confidence": [Options("mean", "sum")]}

    def __init__(self, b=1.0, C=1.0, share=True, share_on="disagreement", confidence="mean", budget=None,
                 random_state=None):
        self._init_params(locals())

    def _start_state(self):
        self._tau = np.full((self.n_tasks_, self.n_tasks_), 1.0 / self.n_tasks_)
        self._scale = 1.0 if self._settings["confidence"] == "mean" else float(self.n_tasks_)

    def _committees(self):
        s = self._settings
        return Committees(self._tau, self._scale, s["b"], s["C"], bool(s["share"]), s["share_on"] == "mistake")

    def _play_rows(self, rows, rounds, port, left, log):
        return amlc_rounds(self._committees(), rows, rounds, self._W, port, left, log)

    def _asks(self, rows, task, uniforms, left):
        return amlc_asks(self._committees(), rows, 0, self._W, task, uniforms, left, np.empty(self.n_tasks_))[1]

    @property
    def committee_weights_(self):
        """ndarray of shape (n_tasks, n_tasks): the relationship matrix ``tau``."""
        self._check_fitted()
        return self._tau.copy()

    def _task_margins(self, X, task):
        # (X W) tau_k: every task's margin, then the committee's weighted sum; cheaper than
        # forming sum_m tau_km w_m over all features when X is sparse.
        return np.asarray(X @ self._W) @ self._tau[task]
