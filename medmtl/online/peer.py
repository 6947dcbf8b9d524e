"""Active learning from peers (PEER) and PEER+Share.

PEER is Murugesan & Carbonell, "Active learning from peers", NIPS 2017, the baseline of the
AMLC paper (Xu, Tang & Jebara). Its paper is not in the seeds; this is its Algorithm 1 as
the AMLC paper describes it (section 3.3: "ask peers first when unconfident, ask the oracle
only when the peers are unconfident too"; the task itself is left out of its own committee,
whose weights over the peers sum to one) completed from our reading of the NIPS paper.
What we assumed, where the description leaves a choice:

- ``tau`` starts with ``1/(K-1)`` off the diagonal and zero on it, and ``tau_kk`` stays
  zero: a task is never its own peer.
- On a round ``(x, k)``: own margin ``p_kk = <x, w_k>``, prediction ``y_hat = sign(p_kk)``;
  with probability ``b / (b + |p_kk|)`` the task is unconfident and asks its peers:
  ``p~ = sum_{m != k} tau_km <x, w_m>``. With probability ``peer_b / (peer_b + |p~|)`` the
  peers are unconfident too and the true label ``y`` is bought from the oracle; otherwise the
  peers' label ``sign(p~)`` is used instead, at no cost.
- The task's perceptron learns from whichever label it got (``w_k += label * x`` when the
  label differs from ``y_hat``).
- The peer weights learn only from true labels, with the same normalised multiplicative
  rule as AMLC: ``tau_km <- tau_km exp(-C l_km / lambda)``, ``l_km = (1 - y <x, w_m>)_+``,
  ``lambda = sum_{m != k} l_km``, renormalised over the peers. (The NIPS paper divides the
  losses by a fixed temperature instead; the normalised form keeps one scale of ``C``
  across PEER, PEER+Share and AMLC, which are all tuned over the same grid.)
- A task predicts with its own perceptron, during and after training.

PEER+Share adds AMLC's data sharing (section 3.2) after each bought label. Since PEER's
``tau_kk`` is zero, AMLC's test ``tau_km >= tau_kk`` would share with every peer; we read
"similar tasks" as the peers whose weight is at least the uniform weight ``1/(K-1)`` they
started with.

The published code of the AMLC paper's first author (``peer()`` in ``humble_peer.py``,
GitHub ``JingxiXu/humble-peer-amtl``) plays PEER differently; ``variant="authors-code"``
follows it (see :class:`PEER`).

Randomness: each round consumes two uniforms (own confidence, then peers' confidence),
whether or not the second is used; see :mod:`medmtl.online.active` for the other
conventions (``sign(0) = +1``, budget).
"""

from __future__ import annotations

from numbers import Real
from typing import NamedTuple

import numpy as np
from numba import njit

from medmtl.online._checks import LARGE, Capped
from medmtl.online.active import (CommitteeLearner, buy_label, committee_margin, learn_example, log_prediction,
                                  perceptron_step, reweight, selective_probability, share_example)
from medmtl.online.rows import row_dot, row_dots

__all__ = ["PEER", "PEERShare", "Peers", "peer_asks", "peer_rounds"]


class Peers(NamedTuple):
    """PEER's peer weights, parameters and counts, as its compiled loop reads them.

    Parameters
    ----------
    tau : ndarray of shape (n_tasks, n_tasks)
        Row ``k``: task ``k``'s weights over its peers (zero diagonal); updated in place.
    b, peer_b, C : float
    share, share_on_mistake : bool
    peer_labels : ndarray of int64 of shape (n_tasks,)
        Rounds on which each task learnt from its peers' label; incremented in place.
    authors_code : bool
        Play the rounds as the authors' code does (see :class:`PEER`, ``variant``).
    """

    tau: np.ndarray
    b: float
    peer_b: float
    C: float
    share: bool
    share_on_mistake: bool
    peer_labels: np.ndarray
    authors_code: bool


# What a PEER round does once its task's margin is known.
_CONFIDENT, _FROM_PEERS, _FROM_ORACLE = 0, 1, 2


@njit(cache=True, nogil=True)
def peer_asks(peers, rows, t, W, k, u, left, scores):
    """Task ``k``'s own margin on row ``t``, its peers' margin, and whom the round asks.

    Parameters
    ----------
    peers : Peers
    rows, t, W, k, left
        As for :func:`~medmtl.online.independent.independent_asks`.
    u : ndarray of shape (2,)
        The round's coin flips: its own confidence, then its peers'.
    scores : ndarray of shape (n_tasks,)
        Receives every task's margin when the peers are asked.

    Returns
    -------
    margin, peer_margin : float
    asks : int
        0: nobody (the task is confident, or no label is left); 1: the peers, whose label
        is used at no cost; 2: the oracle.
    """
    p = row_dot(rows, t, W[:, k])
    if u[0] >= selective_probability(peers.b, p) or left <= 0:
        return p, 0.0, _CONFIDENT
    row_dots(rows, t, W, scores)
    peer = committee_margin(scores, peers.tau[k])  # tau_kk = 0: the peers only
    if u[1] >= selective_probability(peers.peer_b, peer):
        return p, peer, _FROM_PEERS
    return p, peer, _FROM_ORACLE


@njit(cache=True, nogil=True)
def code_share_all(rows, t, W, scores, k, y, reference, log):
    """PEER+Share's sharing as the authors' code does it: every peer ``m != k`` whose sign
    differs from ``reference`` gets ``w_m += y x_t``, where a zero margin's sign is 0 (so it
    always differs).

    The code's similarity test compares with a self weight of ``(3 - K) / (K - 1)`` that is
    never updated, which no peer weight is below (K >= 2): every peer passes it.
    """
    for m in range(scores.size):
        if m == k:
            continue
        if scores[m] == 0.0 or (scores[m] > 0) != (reference > 0):
            learn_example(rows, t, W, m, y, log)


@njit(cache=True, nogil=True)
def peer_rounds(peers, rows, rounds, W, port, left, log):
    """Play PEER's rounds (see the module notes); updates ``W`` and the peers in place.

    A round consumes two uniforms: its own confidence, then its peers'.

    Parameters
    ----------
    peers : Peers
    rows, rounds, W, port, left, log
        As for :func:`~medmtl.online.independent.independent_rounds`.

    Returns
    -------
    status, rounds_played : int
    """
    K = W.shape[1]
    scores, losses = np.empty(K), np.empty(K)
    for t in range(rounds.tasks.size):
        k = rounds.tasks[t]
        p, peer, asks = peer_asks(peers, rows, t, W, k, rounds.uniforms[t], left, scores)
        predicted = log_prediction(log, t, p)
        if asks == _CONFIDENT:
            continue
        code = peers.authors_code
        if asks == _FROM_PEERS:
            # The peers are confident: learn from their label, pay nothing.
            peers.peer_labels[k] += 1
            label = 1 if peer >= 0 else -1
            if code:
                # the authors' code adds the peers' label whether or not it differs
                learn_example(rows, t, W, k, label, log)
            else:
                perceptron_step(rows, t, W, k, label, predicted, log)
            continue
        y = buy_label(port, rows, rounds, t, W, predicted, log)
        if y > 1:
            return y, t
        left -= 1
        if K > 1:
            # the authors' code reweights only when the task's own prediction was wrong
            if not code or y != predicted:
                for m in range(K):
                    losses[m] = max(1.0 - y * scores[m], 0.0) if m != k else 0.0
                reweight(peers.tau[k], losses, peers.C, False)
            if peers.share:
                reference = y if peers.share_on_mistake else predicted
                if code:
                    code_share_all(rows, t, W, scores, k, y, reference, log)
                else:
                    share_example(rows, t, W, scores, peers.tau[k], k, y, reference, 1.0 / (K - 1), log)
    return 0, rounds.tasks.size


class PEER(CommitteeLearner):
    """Active learning from peers (Murugesan & Carbonell, 2017, Algorithm 1).

    See the module notes for the algorithm and what was assumed.

    Parameters
    ----------
    b : float, default=1.0
        Confidence scale of the task's own margin: it asks for help with probability
        ``b / (b + |p_kk|)``.
    peer_b : float or None, default=None
        Confidence scale of the peers' weighted margin: the oracle is asked with probability
        ``peer_b / (peer_b + |p~|)``. ``None``: the variant's, 1 for ``"paper"``, 5 for
        ``"authors-code"`` (the code's ``bq``).
    C : float, default=1.0
        How fast peer weights decay with loss; ``C = 0`` keeps them uniform. The authors'
        code has no C: its update is this one with ``C = 1``.
    share : bool, default=False
        Add AMLC's data sharing (this is PEER+Share; see :class:`PEERShare`).
    share_on : {"disagreement", "mistake"} or None, default=None
        As for :class:`~medmtl.online.amlc.AMLC`: share with peers whose sign differs from
        the task's prediction, or from the true label. ``None``: the variant's,
        ``"disagreement"`` for ``"paper"``, ``"mistake"`` for ``"authors-code"``.
    variant : {"paper", "authors-code"}, default="paper"
        ``"paper"``: the algorithm of the module notes. ``"authors-code"``: as ``peer()``
        in the AMLC authors' ``humble_peer.py`` plays it, which differs in these places:

        - on a round the peers answer, the task always adds ``sign(p~) x`` to its
          perceptron (the paper variant only when that label differs from its own
          prediction);
        - the peer weights learn only on bought labels that the task's own prediction got
          wrong (the paper variant: every bought label);
        - the peers' confidence scale is ``peer_b = 5`` unless given;
        - PEER+Share gives a bought example to every peer whose sign differs from the true
          label (``share_on="mistake"`` unless given), a zero margin counting as a
          differing sign; the code's similarity test passes every peer.

        Both predict ``+1`` at margin 0.
    budget : int or None, default=None
        The most labels to buy from the oracle; learning ends when it is spent.
    random_state : int, numpy.random.Generator or None, default=None

    Attributes
    ----------
    weights_ : ndarray of shape (n_tasks, n_features)
    committee_weights_ : ndarray of shape (n_tasks, n_tasks)
        The peer weights ``tau`` (zero diagonal, rows sum to one when K > 1).
    classes_, feature_names_in_
        As for :class:`~medmtl.online.amlc.AMLC`.
    n_queries_ : int
        Labels bought from the oracle.
    n_peer_labels_ : int
        Rounds on which the peers' label was used instead.
    n_updates_, n_rounds_ : int
    queries_per_task_, updates_per_task_ : ndarray of shape (n_tasks,)
    stream_order_, stream_predictions_, stream_queried_ : ndarray
        Per round of the last :meth:`fit`.

    Examples
    --------
    Three tasks that share one rule learn from each other's labels:

    >>> from medmtl.online import LabelOracle
    >>> X = np.random.default_rng(0).normal(size=(90, 3))
    >>> Xs = np.split(X, 3)
    >>> ys = [np.sign(Z[:, 0] + 1e-9) for Z in Xs]
    >>> oracle = LabelOracle(ys)
    >>> model = PEER(random_state=0).fit(Xs, oracle)
    >>> np.diag(model.committee_weights_).tolist()
    [0.0, 0.0, 0.0]
    >>> model.n_queries_ == oracle.n_queries
    True
    >>> model.score(Xs, ys) > 0.8
    True
    """

    _n_uniforms = 2

    _parameter_constraints = {**CommitteeLearner._parameter_constraints,
                              "peer_b": [None, Capped(Real, 0, LARGE, closed="right")]}
    # What a parameter left at None means in each variant.
    _variant_defaults = {"paper": {"peer_b": 1.0, "share_on": "disagreement"},
                         "authors-code": {"peer_b": 5.0, "share_on": "mistake"}}

    def __init__(self, b=1.0, peer_b=None, C=1.0, share=False, share_on=None, variant="paper", budget=None,
                 random_state=None):
        self._init_params(locals())

    def _start_state(self):
        K = self.n_tasks_
        self._tau = np.zeros((K, K)) if K == 1 else (np.ones((K, K)) - np.eye(K)) / (K - 1)
        self._peer_labels = np.zeros(K, dtype=np.int64)

    def _peers(self):
        s = self._settings
        return Peers(self._tau, s["b"], s["peer_b"], s["C"], bool(s["share"]), s["share_on"] == "mistake",
                     self._peer_labels, s["variant"] == "authors-code")

    def _play_rows(self, rows, rounds, port, left, log):
        return peer_rounds(self._peers(), rows, rounds, self._W, port, left, log)

    def _asks(self, rows, task, uniforms, left):
        scores = np.empty(self.n_tasks_)
        return peer_asks(self._peers(), rows, 0, self._W, task, uniforms, left, scores)[2] == _FROM_ORACLE

    @property
    def n_peer_labels_(self):
        """int: rounds on which the peers' label was used instead of the oracle's."""
        self._check_fitted()
        return int(self._peer_labels.sum())

class PEERShare(PEER):
    """PEER+Share: :class:`PEER` plus AMLC's data sharing after each bought label.

    A bought label of task ``k`` is also given to every peer ``m`` whose weight
    ``tau_km`` is at least the uniform ``1/(K-1)`` and whose own prediction differs from
    task ``k``'s (see :mod:`medmtl.online.peer` for why the threshold is the uniform weight).
    Same attributes as :class:`PEER`.

    Parameters
    ----------
    b, peer_b, C
        As for :class:`PEER`.
    share : bool, default=True
        Share bought labels (``False`` is plain :class:`PEER`).
    share_on, variant, budget, random_state
        As for :class:`PEER`.

    Examples
    --------
    >>> Xs = np.split(np.random.default_rng(1).normal(size=(90, 3)), 3)
    >>> model = PEERShare(random_state=0).fit(Xs, [np.sign(Z[:, 0] + 1e-9) for Z in Xs])
    >>> model.share, model.n_peer_labels_ + model.n_queries_ <= 90
    (True, True)
    """

    def __init__(self, b=1.0, peer_b=None, C=1.0, share=True, share_on=None, variant="paper", budget=None,
                 random_state=None):
        self._init_params(locals())
