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

Randomness: each round consumes two uniforms (own confidence, then peers' confidence),
whether or not the second is used; see :mod:`medmtl.online.amlc` for the other conventions
(``sign(0) = +1``, budget, blocks).
"""

from __future__ import annotations

import numpy as np

from medmtl._validation import check_scalar_positive
from medmtl.online.amlc import _PEER, _ActiveMultitaskLearner, _check_committee_params

__all__ = ["PEER", "PEERShare"]


class PEER(_ActiveMultitaskLearner):
    """Active learning from peers (Murugesan & Carbonell, 2017, Algorithm 1).

    See the module notes for the algorithm and what was assumed.

    Parameters
    ----------
    b : float, default=1.0
        Confidence scale of the task's own margin: it asks for help with probability
        ``b / (b + |p_kk|)``.
    peer_b : float, default=1.0
        Confidence scale of the peers' weighted margin: the oracle is asked with probability
        ``peer_b / (peer_b + |p~|)``.
    C : float, default=1.0
        How fast peer weights decay with loss; ``C = 0`` keeps them uniform.
    share : bool, default=False
        Add AMLC's data sharing (this is PEER+Share; see :class:`PEERShare`).
    share_on : {"disagreement", "mistake"}, default="disagreement"
        As for :class:`~medmtl.online.amlc.AMLC`: share with peers whose sign differs from
        the task's prediction, or from the true label.
    budget : int or None, default=None
        The most labels to buy from the oracle; learning ends when it is spent.
    random_state : int, numpy.random.Generator or None, default=None

    Attributes
    ----------
    weights_ : ndarray of shape (n_tasks, n_features)
    committee_weights_ : ndarray of shape (n_tasks, n_tasks)
        The peer weights ``tau`` (zero diagonal, rows sum to one when K > 1).
    n_queries_ : int
        Labels bought from the oracle.
    n_peer_labels_ : int
        Rounds on which the peers' label was used instead.
    queries_per_task_ : ndarray of shape (n_tasks,)
    stream_order_, stream_predictions_, stream_queried_ : ndarray
        Per round of the last :meth:`fit`.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.online.oracle import LabelOracle
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 3)) for _ in range(3)]
    >>> ys = [np.where(X[:, 0] >= 0, 1, -1) for X in Xs]
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
    _rule = _PEER

    def __init__(self, b=1.0, peer_b=1.0, C=1.0, share=False, share_on="disagreement", budget=None,
                 random_state=None):
        self.b = b
        self.peer_b = peer_b
        self.C = C
        self.share = share
        self.share_on = share_on
        self.budget = budget
        self.random_state = random_state

    def _check_params(self):
        super()._check_params()
        self._peer_b = check_scalar_positive(self.peer_b, "peer_b")
        _check_committee_params(self)

    def _setup(self):
        K = self.n_tasks_
        self._tau = np.zeros((K, K)) if K == 1 else (np.ones((K, K)) - np.eye(K)) / (K - 1)
        self.n_peer_labels_ = 0

    def _rule_params(self):
        return (self._tau, 1.0, self._b, self._peer_b, 0.0, self._C, bool(self.share),
                self.share_on == "mistake")

    @property
    def committee_weights_(self):
        """ndarray of shape (n_tasks, n_tasks): the peer weights ``tau``."""
        self._check_fitted()
        return self._tau.copy()


class PEERShare(PEER):
    """PEER+Share: :class:`PEER` plus AMLC's data sharing after each bought label.

    A bought label of task ``k`` is also given to every peer ``m`` whose weight
    ``tau_km`` is at least the uniform ``1/(K-1)`` and whose own prediction differs from
    task ``k``'s (see :mod:`medmtl.online.peer` for why the threshold is the uniform weight).
    Same parameters and attributes as :class:`PEER`, with ``share=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.online.oracle import LabelOracle
    >>> rng = np.random.default_rng(1)
    >>> Xs = [rng.normal(size=(30, 3)) for _ in range(3)]
    >>> ys = [np.where(X[:, 0] >= 0, 1, -1) for X in Xs]
    >>> model = PEERShare(random_state=0).fit(Xs, LabelOracle(ys))
    >>> model.share, model.score(Xs, ys) > 0.8
    (True, True)
    """

    def __init__(self, b=1.0, peer_b=1.0, C=1.0, share=True, share_on="disagreement", budget=None,
                 random_state=None):
        super().__init__(b=b, peer_b=peer_b, C=C, share=share, share_on=share_on, budget=budget,
                         random_state=random_state)
