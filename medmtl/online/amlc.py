"""Active multitask learning with committees (AMLC).

Xu, Tang & Jebara, "Active Multitask Learning with Committees" (``amlc_xu_tang_jebara.txt``
in the seeds), Algorithm 1. Its baselines live in :mod:`medmtl.online.independent` (Random,
Independent) and :mod:`medmtl.online.peer` (PEER, PEER+Share); the round conventions they
all share are in :mod:`medmtl.online.active`.

AMLC and PEER come in two flavours (``variant``): the algorithm as the paper prints it (the
default), and as the first author's published code runs it, whose differences each learner's
docstring lists. The paper's Table 1 was made with that code.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from medmtl._validation import Options
from medmtl.online.active import (CommitteeLearner, buy_label, committee_margin, learn_example, log_prediction,
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
        The committee margin is ``scale * <p_k, tau_k>``: 1 ("mean" confidence, and always in
        the authors' code flavour, whose rows carry their own mass) or K ("sum").
    b, C : float
    share, share_on_mistake : bool
    authors_code : bool
        Play the rounds as the authors' code does (see :class:`AMLC`, ``variant``).
    mass : float
        What the authors' code flavour renormalises each row to (1 or K); unused otherwise.
    """

    tau: np.ndarray
    scale: float
    b: float
    C: float
    share: bool
    share_on_mistake: bool
    authors_code: bool
    mass: float


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
def code_reweight(row, losses, C, mass):
    """The authors' code's committee update: ``l <- l / sum(l)`` (unless zero), then
    ``row_m <- row_m exp(-C l_m)``, then ``row <- row * mass / sum(row)``.

    Sums run left to right, as Python's ``sum`` does in that code; ``losses`` is normalised in
    place.

    Parameters
    ----------
    row : ndarray of shape (n_tasks,)
        Updated in place.
    losses : ndarray of shape (n_tasks,)
    C, mass : float
    """
    lam = 0.0
    for m in range(losses.size):
        lam += losses[m]
    if lam != 0.0:
        for m in range(losses.size):
            losses[m] = losses[m] / lam
    for m in range(row.size):
        row[m] = row[m] * np.exp(-C * losses[m])
    total = 0.0
    for m in range(row.size):
        total += row[m]
    for m in range(row.size):
        row[m] = row[m] * mass / total


@njit(cache=True, nogil=True)
def code_share(rows, t, W, scores, weights, k, y, reference, log):
    """Data sharing as the authors' code does it: ``sign(0) = -1`` for the peers' signs.

    Task ``m != k`` gets ``w_m += y x_t`` when ``weights[m] >= weights[k]`` and
    ``sign(scores[m])`` (``-1`` at zero) differs from ``reference``.
    """
    for m in range(scores.size):
        if m == k:
            continue
        sign = 1 if scores[m] > 0 else -1
        if sign != reference and weights[m] >= weights[k]:
            learn_example(rows, t, W, m, y, log)


@njit(cache=True, nogil=True)
def amlc_rounds(committees, rows, rounds, W, port, left, log):
    """Play AMLC's rounds (Algorithm 1); updates ``W`` and the committees in place.

    A round consumes one uniform: the draw that decides whether it queries.

    Parameters
    ----------
    committees : Committees
        Every task's committee (row ``k`` of ``tau``, updated in place) and the settings.
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
        code = committees.authors_code
        p, asks = amlc_asks(committees, rows, t, W, k, rounds.uniforms[t], left, scores)
        predicted = log_prediction(log, t, p)
        if code and p == 0.0:
            # the authors' code predicts -1 at margin 0
            predicted = -1
            log.predictions[t] = -1
        if not asks:
            continue
        y = buy_label(port, rows, rounds, t, W, predicted, log)
        if y > 1:
            return y, t
        left -= 1
        # l_km: the hinge loss of peer m on this round's margins (the weights before its updates)
        for m in range(scores.size):
            losses[m] = max(1.0 - y * scores[m], 0.0)
            if code:
                losses[m] = min(losses[m], 2.0)
        if code:
            code_reweight(committee, losses, committees.C, committees.mass)
        else:
            reweight(committee, losses, committees.C, True)
        if committees.share:
            reference = y if committees.share_on_mistake else predicted
            if code:
                code_share(rows, t, W, scores, committee, k, y, reference, log)
            else:
                share_example(rows, t, W, scores, committee, k, y, reference, committee[k], log)
    return 0, rounds.tasks.size


class AMLC(CommitteeLearner):
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
    share_on : {"disagreement", "mistake"} or None, default=None
        Which peers receive a shared example: those whose sign disagrees with the committee
        prediction ``y_hat`` (Algorithm 1, line 14, literally), or those whose sign
        disagrees with the true label (a mistake-driven reading of the same line, and what
        the authors' code does). ``None``: the variant's, ``"disagreement"`` for
        ``"paper"``, ``"mistake"`` for ``"authors-code"``.
    confidence : {"mean", "sum"} or None, default=None
        ``"mean"``: ``p = sum_m tau_km p_km`` with rows of ``tau`` summing to one, as
        Algorithm 1 is printed. ``"sum"``: committee weights that start at 1 and sum to
        ``K``, as in the authors' code, so ``p`` is ``K`` times the ``"mean"`` margin. Only
        the query probability changes: ``"sum"`` is ``"mean"`` with ``b / K`` (on 29 fields,
        a 29 times smaller query scale); predictions, the ``tau`` update and the sharing
        test are scale-free. ``None``: the variant's, ``"mean"`` for ``"paper"``, ``"sum"``
        for ``"authors-code"``.
    variant : {"paper", "authors-code"}, default="paper"
        ``"paper"``: Algorithm 1 as printed (above). ``"authors-code"``: the rounds as the
        first author's public code computes them (``committee()`` in ``humble_peer.py``,
        GitHub ``JingxiXu/humble-peer-amtl``), which differs in these places:

        - the committee predicts ``-1`` at margin 0, and a peer's sign in the sharing test
          is ``-1`` at margin 0 (``+1`` in the paper variant);
        - examples go to peers whose sign differs from the true label
          (``share_on="mistake"`` unless given);
        - the hinge losses are capped at 2, ``l_km = min((1 - y p_km)_+, 2)``;
        - committee weights start at 1 and are renormalised to sum to ``K``
          (``confidence="sum"`` unless given; ``"mean"`` renormalises to 1 instead), so
          ``committee_weights_`` rows sum to ``K``;
        - the losses are divided by their sum first, ``l <- l / sum(l)``, and the weights
          then multiplied by ``exp(-C l)``; sums run left to right. The paper variant
          computes ``exp(l * (-C / lambda))``: the same number up to rounding.
        - the row is renormalised on every queried round, also when every loss is zero.

        The code runs ``C = log 30`` (its script) where the paper chooses C by
        cross-validation. With sharing, this flavour keeps the K perceptrons equal and the
        committees uniform from its start (a label one task gets wrong goes to every peer,
        all equally weighted and all equally wrong), so in exact arithmetic it is one pooled
        perceptron and C has no effect; the published code leaves that state only through
        the rounding of its margins. Test-time predictions are the same in both (``sign(0) = +1``
        there too, as the code's ``test()`` has it).
    budget : int or None, default=None
        The most labels to pay for; learning ends when it is spent.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the stream order drawn by :meth:`fit` and the query coin flips.

    Attributes
    ----------
    weights_ : ndarray of shape (n_tasks, n_features)
        The perceptrons ``w`` (row per task).
    committee_weights_ : ndarray of shape (n_tasks, n_tasks)
        The relationship matrix ``tau``; row ``k`` is task ``k``'s committee (rows sum to
        one; to ``K`` in the authors' code variant with ``"sum"`` confidence).
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

    The authors' code flavour keeps committee rows of mass K:

    >>> code = AMLC(variant="authors-code", random_state=0).fit(Xs, LabelOracle(ys))
    >>> code.committee_weights_.sum(axis=1).round(6).tolist()
    [3.0, 3.0, 3.0]
    """

    _parameter_constraints = {**CommitteeLearner._parameter_constraints,
                              "confidence": [Options(None, "mean", "sum")]}
    # What a parameter left at None means in each variant.
    _variant_defaults = {"paper": {"share_on": "disagreement", "confidence": "mean"},
                         "authors-code": {"share_on": "mistake", "confidence": "sum"}}

    def __init__(self, b=1.0, C=1.0, share=True, share_on=None, confidence=None, variant="paper", budget=None,
                 random_state=None):
        self._init_params(locals())

    def _start_state(self):
        K, s = self.n_tasks_, self._settings
        code, mean = s["variant"] == "authors-code", s["confidence"] == "mean"
        self._mass = 1.0 if mean else float(K)
        # The paper variant keeps rows summing to one and scales the margin; the authors' code
        # keeps rows of mass K (scale 1), which rounds differently.
        self._tau = np.full((K, K), self._mass / K if code else 1.0 / K)
        self._scale = 1.0 if mean or code else float(K)

    def _committees(self):
        s = self._settings
        return Committees(self._tau, self._scale, s["b"], s["C"], bool(s["share"]), s["share_on"] == "mistake",
                          s["variant"] == "authors-code", self._mass)

    def _play_rows(self, rows, rounds, port, left, log):
        return amlc_rounds(self._committees(), rows, rounds, self._W, port, left, log)

    def _asks(self, rows, task, uniforms, left):
        return amlc_asks(self._committees(), rows, 0, self._W, task, uniforms, left, np.empty(self.n_tasks_))[1]

    def _task_margins(self, X, task):
        # (X W) tau_k: every task's margin, then the committee's weighted sum; cheaper than
        # forming sum_m tau_km w_m over all features when X is sparse.
        return np.asarray(X @ self._W) @ self._tau[task]
