"""The rounds of SHAMPO, compiled: which tasks to ask (Eq. 1), how to update, the loop.

SHAMPO (Cohen & Crammer, NIPS 2014) and its bandit reductions play the same round: every
task's margin ``p_j = w_j . x_{j,t}``, a draw of the task(s) ``J_t`` to ask, the label
query, and an (aggressive) perceptron update of the asked tasks only.

How the draw is made. ``J_t`` is the arg-min over tasks of ``E_{j,t} / q_{j,t}`` where
``q_{j,t} = a_j / (b + |p_{j,t}| - min_m |p_{m,t}|)`` (Eq. 1) and the ``E_{j,t}`` are i.i.d.
standard exponentials (an exponential race: ``Pr[arg-min = j] = q_j / sum_m q_m`` exactly).
With ``n_queries`` > 1 the tasks with the ``n_queries`` smallest keys are asked: successive
sampling without replacement proportional to ``q``. The exponentials are drawn K per
round, in round order, from one ``numpy.random.Generator``, so a naive per-round loop with
the same seed makes the same choices, and the choices do not depend on how many rounds
are handed to the compiled loop at once.

Why it is fast. A pass is one compiled loop over rounds (:func:`shampo_rounds`): margins
(:func:`~medmtl.online.rows.row_dot_fast`), draw, the label from the annotator's compiled
``query`` (:func:`~medmtl.online.oracle.oracle_query`, which counts and records it in the
annotator's own arrays) and the update (:func:`~medmtl.online.rows.add_row`), with no
Python in between.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from medmtl.online.oracle import oracle_query, raise_query_status
from medmtl.online.rows import DenseRows, add_row, row_dot_fast

__all__ = ["DrawRule", "UpdateRule", "RoundBlock", "RoundLog", "draw_rule", "draw_round", "draw_tasks",
           "round_margins", "shampo_rounds", "play_rounds", "ask_rounds", "ZERO_FEEDBACK"]

# What a zero answer (the one-vs-one "neither") does; see UpdateRule.
ZERO_FEEDBACK = {"error": 0, "ignore": 1, "weak": 2, "random": 3}
_ZERO_IS_ERROR, _ZERO_IGNORED, _ZERO_WEAK = 0, 1, 2
# Status of the compiled loop besides the oracle's (QUERY_BUDGET_SPENT, QUERY_OUT_OF_RANGE).
_ZERO_LABEL = 4


class DrawRule(NamedTuple):
    """Eq. (1) as the compiled draw reads it (made by :func:`draw_rule`).

    Parameters
    ----------
    inv_a : ndarray of shape (n_tasks,)
        ``1 / a_j`` (0 where ``a_j = 0``).
    positive : ndarray of bool of shape (n_tasks,)
        ``a_j > 0``: only these tasks can be drawn.
    uniform : bool
        All ``a_j`` equal: keys are not multiplied by ``1 / a``.
    b : float
        ``inf`` draws by the prior alone, 0 only among the smallest ``|p|``.
    n_queries : int
        Tasks asked per round.
    """

    inv_a: np.ndarray
    positive: np.ndarray
    uniform: bool
    b: float
    n_queries: int


def draw_rule(prior, b, n_queries=1):
    """The :class:`DrawRule` of a prior, ``b`` and ``n_queries``.

    Parameters
    ----------
    prior : array-like of shape (n_tasks,)
        The a_j >= 0 of Eq. (1).
    b : float >= 0 or inf
    n_queries : int, default=1

    Returns
    -------
    rule : DrawRule

    Examples
    --------
    >>> draw_rule(np.array([1.0, 0.0]), b=0.5).inv_a
    array([1., 0.])
    """
    prior = np.asarray(prior, dtype=np.float64)
    positive = np.ascontiguousarray(prior > 0)
    inv_a = np.divide(1.0, prior, out=np.zeros_like(prior), where=positive)
    # A uniform prior multiplies no key by 1/a: the same keys as a naive E * (b + gap).
    return DrawRule(inv_a, positive, bool(np.all(prior == prior[0])), float(b), int(n_queries))


@njit(cache=True, nogil=True)
def draw_round(p, e, rule, keys, taken, out):
    """The tasks asked on one round: the ``n_queries`` smallest keys ``E_j / q_j`` of Eq. (1).

    Parameters
    ----------
    p, e : ndarray of shape (n_tasks,)
        The round's margins and exponentials.
    rule : DrawRule
    keys, taken : ndarray of shape (n_tasks,)
        Scratch (float and bool).
    out : ndarray of int of shape (n_queries,)
        Receives the tasks, smallest key first.

    Notes
    -----
    Tasks with a zero prior get an infinite key (never drawn, and never the "minimum
    margin" of exploit); ties go to the lower task index (a stable sort).
    """
    K = p.size
    if rule.b == np.inf:
        for j in range(K):
            keys[j] = e[j] if rule.uniform else e[j] * rule.inv_a[j]
    else:
        low = np.inf
        for j in range(K):
            if rule.positive[j] and abs(p[j]) < low:
                low = abs(p[j])
        for j in range(K):
            gap = abs(p[j]) - low
            if rule.b == 0.0:
                # exploit: only the smallest |p| can be drawn; ties broken at random (by prior)
                keys[j] = (e[j] if rule.uniform else e[j] * rule.inv_a[j]) if gap == 0.0 else np.inf
            else:
                gap += rule.b
                keys[j] = gap * e[j] if rule.uniform else gap * e[j] * rule.inv_a[j]
    for j in range(K):
        if not rule.positive[j]:
            keys[j] = np.inf
        taken[j] = False
    for q in range(rule.n_queries):
        best = -1
        for j in range(K):
            if not taken[j] and (best < 0 or keys[j] < keys[best]):
                best = j
        taken[best] = True
        out[q] = best


@njit(cache=True, nogil=True)
def _draw_rows(P, E, rule):
    R, K = P.shape
    out = np.empty((R, rule.n_queries), dtype=np.int64)
    keys, taken = np.empty(K), np.empty(K, dtype=np.bool_)
    for r in range(R):
        draw_round(P[r], E[r], rule, keys, taken, out[r])
    return out


def draw_tasks(margins, exponentials, rule):
    """:func:`draw_round` on every row of ``margins`` and ``exponentials``.

    Parameters
    ----------
    margins, exponentials : array-like of shape (n_rounds, n_tasks)
    rule : DrawRule

    Returns
    -------
    tasks : ndarray of shape (n_rounds, n_queries)

    Examples
    --------
    >>> draw_tasks([[0.3, -0.1]], [[1.0, 1.0]], draw_rule(np.ones(2), b=0.0)).tolist()
    [[1]]
    """
    P = np.ascontiguousarray(margins, dtype=np.float64)
    E = np.ascontiguousarray(exponentials, dtype=np.float64)
    _check_rule_shape(rule, P.shape[1] if P.ndim == 2 else -1)
    if P.ndim != 2 or E.shape != P.shape:
        raise ValueError(f"margins and exponentials must be 2-D arrays of one shape (n_rounds, n_tasks); got "
                         f"{P.shape} and {E.shape}")
    return _draw_rows(P, E, rule)


def _check_rule_shape(rule, n_tasks):
    """The compiled draw reads ``rule`` for ``n_tasks`` tasks: its arrays must be that long."""
    if rule.inv_a.shape != (n_tasks,) or rule.positive.shape != (n_tasks,) or not 1 <= rule.n_queries <= n_tasks:
        raise ValueError(f"the draw rule is for {rule.inv_a.shape[0]} tasks and {rule.n_queries} queries; the "
                         f"margins have {n_tasks} tasks")


class UpdateRule(NamedTuple):
    """The (aggressive) perceptron update of an asked task.

    Parameters
    ----------
    lam : float
        Update when ``y p <= lam`` (0: on mistakes only; ``b / 2``: SHAMPO's aggressive rule).
    on_zero : int
        What a zero answer does, by :data:`ZERO_FEEDBACK`: an error ("error"), nothing
        ("ignore"), ``w += eta sign(p) x`` ("weak"), or the round's random +-1 label in place
        of the answer ("random").
    eta : float
        The step of a weak update.
    """

    lam: float
    on_zero: int
    eta: float


@njit(cache=True, nogil=True)
def _coefficient(rule, y, p, sign):
    """The ``c`` of ``w += c x`` for answer ``y`` on margin ``p``; 0 means no update."""
    if y == 0:
        if rule.on_zero == _ZERO_IGNORED:
            return 0.0
        if rule.on_zero == _ZERO_WEAK:
            return rule.eta if p >= 0 else -rule.eta
        y = sign
    return float(y) if y * p <= rule.lam else 0.0


class RoundBlock(NamedTuple):
    """The rounds ``t0 .. t0 + R - 1`` handed to :func:`shampo_rounds`, with their random draws.

    Parameters
    ----------
    t0 : int
        The first round (a row of the stream).
    index0 : int
        Round ``t`` asks the oracle for index ``index0 + t``.
    exponentials : ndarray of shape (R, n_tasks)
    signs : ndarray of int of shape (R,)
        The random +-1 label of each round, used by zero answers under "random" only.
    """

    t0: int
    index0: int
    exponentials: np.ndarray
    signs: np.ndarray


class RoundLog(NamedTuple):
    """What :func:`shampo_rounds` records.

    Parameters
    ----------
    margins : ndarray of shape (R, n_tasks)
    queried : ndarray of int of shape (R, n_queries)
    n_updates : ndarray of int of shape (n_tasks,)
        Incremented per update.
    """

    margins: np.ndarray
    queried: np.ndarray
    n_updates: np.ndarray


@njit(cache=True, nogil=True)
def _task_row(layout, t, j):
    return t * layout.row_stride + j * layout.row_step


@njit(cache=True, nogil=True)
def round_margins(layout, weights, t, p):
    """Every task's margin ``p_j = w_j . x_{j,t}`` on round ``t``, written into ``p``.

    Parameters
    ----------
    layout : TaskRows
    weights : ndarray of shape (sum of n_features,)
    t : int
    p : ndarray of shape (n_tasks,)
    """
    off = layout.col_off
    for j in range(p.size):
        p[j] = row_dot_fast(layout.rows, _task_row(layout, t, j), weights[off[j]:off[j + 1]])


@njit(cache=True, nogil=True)
def _ask_block(layout, weights, draw, exponentials, log):
    K = exponentials.shape[1]
    keys, taken = np.empty(K), np.empty(K, dtype=np.bool_)
    for t in range(exponentials.shape[0]):
        round_margins(layout, weights, t, log.margins[t])
        draw_round(log.margins[t], exponentials[t], draw, keys, taken, log.queried[t])


@njit(cache=True, nogil=True)
def shampo_rounds(layout, weights, draw, update, block, port, log):
    """Play a block of SHAMPO rounds; update ``weights`` in place.

    Parameters
    ----------
    layout : TaskRows
        Where each task's input of each round is.
    weights : ndarray of shape (sum of n_features,)
        All tasks' weights end to end, at ``layout.col_off``.
    draw : DrawRule
    update : UpdateRule
    block : RoundBlock
    port : tuple
        ``LabelOracle.port()``: labels come only from :func:`oracle_query`.
    log : RoundLog

    Returns
    -------
    status, round, task : int
        Status 0 when every round was played; else the code that stopped the block (an
        oracle refusal, or a zero answer under "error") at that round and task.
    """
    R, K = block.exponentials.shape
    p = np.empty(K)
    keys, taken = np.empty(K), np.empty(K, dtype=np.bool_)
    off = layout.col_off
    for r in range(R):
        t = block.t0 + r
        round_margins(layout, weights, t, p)
        for j in range(K):
            log.margins[r, j] = p[j]
        draw_round(p, block.exponentials[r], draw, keys, taken, log.queried[r])
        for q in range(draw.n_queries):
            j = log.queried[r, q]
            y = oracle_query(port, j, block.index0 + t)
            if y > 1:
                return y, r, j
            if y == 0 and update.on_zero == _ZERO_IS_ERROR:
                return _ZERO_LABEL, r, j
            c = _coefficient(update, y, p[j], block.signs[r])
            if c != 0.0:
                add_row(layout.rows, _task_row(layout, t, j), weights[off[j]:off[j + 1]], c)
                log.n_updates[j] += 1
    return 0, R, -1


def _weight_buffer(stream, layout, W):
    """The flat weights the loop updates, and a function writing them back into ``W``.

    ``W`` is updated in place when it already is that buffer (a C-contiguous array of the
    inputs' dtype, or the views :meth:`MultiTaskStream.new_weights` makes); else the loop
    works on a copy, written back at the end.
    """
    dtype = layout.rows.X.dtype if isinstance(layout.rows, DenseRows) else np.dtype(np.float64)
    flat = np.ascontiguousarray(stream.flat_weights(W), dtype=dtype)
    copied = not np.may_share_memory(flat, W[0])
    off = layout.col_off

    def write_back():
        if copied:
            for j in range(stream.n_tasks):
                W[j][...] = flat[off[j]:off[j + 1]]
    return flat, write_back


def _prepared(stream, W, draw):
    """The layout and the flat weights a compiled loop reads, after checking ``W`` and ``draw``."""
    K = stream.n_tasks
    layout = stream.task_rows()
    _check_rule_shape(draw, K)
    if len(W) != K or any(np.shape(W[j]) != (stream.n_features[j],) for j in range(K)):
        raise ValueError(f"W must hold one weight vector per task, of the task's width {stream.n_features}; got "
                         f"{[np.shape(w) for w in W][:6]}")
    weights, write_back = _weight_buffer(stream, layout, W)
    return layout, weights, write_back


def ask_rounds(stream, W, draw, exponentials):
    """The margins and the asked tasks of every round of ``stream`` under the weights ``W``, learning nothing.

    The first half of :func:`shampo_rounds`, the same computation: on a one-round stream it
    gives the questions the round will ask.

    Parameters
    ----------
    stream : MultiTaskStream
    W : ndarray of shape (n_tasks, n_features) or list of ndarray
    draw : DrawRule
    exponentials : ndarray of shape (n_rounds, n_tasks)

    Returns
    -------
    margins : ndarray of shape (n_rounds, n_tasks)
    queried : ndarray of int of shape (n_rounds, n_queries)
    """
    layout, weights, _ = _prepared(stream, W, draw)
    n = stream.n_rounds
    E = np.ascontiguousarray(exponentials, dtype=np.float64)
    if E.shape != (n, stream.n_tasks):
        raise ValueError(f"exponentials has shape {E.shape}; need {(n, stream.n_tasks)}")
    log = RoundLog(np.empty((n, stream.n_tasks)), np.empty((n, draw.n_queries), dtype=np.int64),
                   np.zeros(stream.n_tasks, dtype=np.int64))
    _ask_block(layout, weights, draw, E, log)
    return log.margins, log.queried


def play_rounds(stream, W, oracle, rng, draw, update, *, index0=0, block_size=4096, sign_rng=None,
                margins_out=None, queried_out=None, drawn=None):
    """One pass of SHAMPO's rounds over ``stream``; updates the weights ``W`` in place.

    Parameters
    ----------
    stream : MultiTaskStream
        Every task on every round.
    W : ndarray of shape (n_tasks, n_features) or list of ndarray
        The tasks' weights (as :meth:`MultiTaskStream.new_weights` makes them).
    oracle : LabelOracle
        Round ``t`` asks it for index ``index0 + t``.
    rng : numpy.random.Generator
        Draws the exponentials, K per round, in round order.
    draw : DrawRule
    update : UpdateRule
    index0 : int, default=0
    block_size : int, default=4096
        Rounds per call of the compiled loop (a memory knob; results do not depend on it).
    sign_rng : numpy.random.Generator, optional
        Draws one random label per round when zero answers are "random".
    drawn : (ndarray of shape (n_rounds, n_tasks), ndarray of int of shape (n_rounds,)), optional
        The rounds' exponentials and random labels, drawn already; ``rng`` and ``sign_rng``
        are then not used.
    margins_out : ndarray of shape (n_rounds, n_tasks), optional
    queried_out : ndarray of int of shape (n_rounds, n_queries), optional
        Receive each round's margins and asked tasks.

    Returns
    -------
    n_updates : ndarray of shape (n_tasks,)
    """
    K, n = stream.n_tasks, stream.n_rounds
    for out, shape in ((margins_out, (n, K)), (queried_out, (n, draw.n_queries))):
        if out is not None and np.shape(out) != shape:
            raise ValueError(f"an output array has shape {np.shape(out)}; need {shape}")
    layout, weights, write_back = _prepared(stream, W, draw)
    port = oracle.port()
    n_updates = np.zeros(K, dtype=np.int64)
    B = max(1, int(block_size))
    margins = np.empty((min(B, n), K)) if margins_out is None else None
    queried = np.empty((min(B, n), draw.n_queries), dtype=np.int64) if queried_out is None else None
    random_signs = update.on_zero == ZERO_FEEDBACK["random"]
    try:
        for start in range(0, n, B):
            stop = min(start + B, n)
            R = stop - start
            if drawn is None:
                E = rng.standard_exponential((R, K))
                signs = sign_rng.integers(0, 2, R) * 2 - 1 if random_signs else np.zeros(R, dtype=np.int64)
            else:
                E, signs = drawn[0][start:stop], drawn[1][start:stop]
            log = RoundLog(margins[:R] if margins_out is None else margins_out[start:stop],
                           queried[:R] if queried_out is None else queried_out[start:stop], n_updates)
            status, r, j = shampo_rounds(layout, weights, draw, update, RoundBlock(start, int(index0), E, signs),
                                         port, log)
            if status == _ZERO_LABEL:
                raise ValueError(f"the annotator returned label 0 for task {j}, round {start + r}; "
                                 "a binary task's answer is one of its two classes")
            if status:
                raise_query_status(status, j, index0 + start + r, oracle)
    finally:
        write_back()
    return n_updates
