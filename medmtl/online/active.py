"""Active multi-task perceptrons: what AMLC, PEER and their baselines share.

K linear perceptrons, one per task, see a stream of examples ``(x, k)`` one at a time
(:meth:`~medmtl.online.streams.MultiTaskStream.interleave`). On each round the learner
predicts, decides at random whether to pay for the label, and learns only from labels it
paid for, bought from a :class:`~medmtl.online.oracle.LabelOracle` (whose counts prove
which labels were read).

Conventions (the papers leave them open):

- ``sign(0) = +1``: a zero margin predicts the positive class, and a peer whose margin is
  zero "predicts" +1 in the sharing test.
- Randomness: every round consumes a fixed number of uniforms from the learner's
  ``numpy.random.Generator`` (one; two for PEER), drawn whether or not they are used, and
  the query decision is ``u < probability``. The stream order drawn by ``fit`` comes first
  from the same generator. So a run is a function of ``random_state`` alone, and ``fit``
  equals the same rounds fed one by one to ``learn_one``.
- Budget: when the budget (the learner's ``budget`` or the oracle's) is spent, the learner
  stops learning altogether and only predicts (the AMLC paper's Fig. 1: "the training
  process is ended after the budget is exhausted").

Each learner plays its rounds in one compiled loop (numba) over the records below, built
from the compiled steps here: record the prediction (:func:`log_prediction`), buy a label
and take the perceptron step (:func:`buy_label`), the committee's margin
(:func:`committee_margin`) and multiplicative update (:func:`reweight`), and data sharing
(:func:`share_example`). Weights are kept as one (features, tasks) array, so a
sparse row's margins under all K tasks are one pass over its entries
(:func:`~medmtl.online.rows.row_dots`) and its updates touch only the row's support. Sums
that decide a comparison (the committee normalisation) follow numpy's summation order bit
for bit (:func:`pairwise_sum`).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from numba import njit

from medmtl._validation import Interval, Options, check_feature_names
from medmtl.online._checks import LARGE, RANDOM_STATE, Capped
from medmtl.online.base import OneTaskLearner
from medmtl.online.oracle import as_oracle, oracle_query, raise_query_status
from medmtl.online.rows import add_row, as_rows
from medmtl.online.scaling import check_row_scale
from medmtl.online.streams import MultiTaskStream, _check_task_list

__all__ = ["ActiveRounds", "ActiveLog", "ActiveLearner", "CommitteeLearner", "VARIANTS", "pairwise_sum",
           "selective_probability", "log_prediction", "committee_margin", "learn_example", "perceptron_step",
           "buy_label", "reweight", "share_example"]

_NO_BUDGET = np.iinfo(np.int64).max


class ActiveRounds(NamedTuple):
    """The rounds of an active pass.

    Parameters
    ----------
    tasks, indexes : ndarray of int64 of shape (n_rounds,)
        Round ``t`` shows row ``t`` of the row store to task ``tasks[t]``; its label is the
        oracle's ``(tasks[t], indexes[t])``.
    uniforms : ndarray of shape (n_rounds, n_uniforms)
        The round's coin flips.
    """

    tasks: np.ndarray
    indexes: np.ndarray
    uniforms: np.ndarray


class ActiveLog(NamedTuple):
    """What an active loop records.

    Parameters
    ----------
    predictions : ndarray of int64 of shape (n_rounds,)
        The label predicted on each round, before any query.
    queried : ndarray of bool of shape (n_rounds,)
    queries_per_task, updates_per_task : ndarray of int64 of shape (n_tasks,)
        Incremented per label bought and per rank-one update.
    """

    predictions: np.ndarray
    queried: np.ndarray
    queries_per_task: np.ndarray
    updates_per_task: np.ndarray


@njit(cache=True, nogil=True)
def _block_sum(a, lo, n):
    """numpy's pairwise sum of ``a[lo:lo + n]`` for n <= 128: eight interleaved partial sums."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i, m = 8, n - n % 8
    while i < m:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, nogil=True)
def pairwise_sum(a):
    """``np.sum`` of a 1-D float64 array, bit for bit (numpy's pairwise summation).

    numpy halves arrays longer than 128 recursively; the halves are walked here with an
    explicit stack (numba cannot cache recursive functions reliably).

    Parameters
    ----------
    a : ndarray of float64 of shape (n,)

    Returns
    -------
    total : float

    Examples
    --------
    >>> a = np.random.default_rng(0).random(300)
    >>> bool(pairwise_sum(a) == np.sum(a))
    True
    """
    n = a.size
    if n <= 128:
        return _block_sum(a, 0, n)
    nodes = np.empty((128, 3), dtype=np.int64)  # (start, length, children done)
    values = np.empty(128)
    top, depth = 0, 0
    nodes[0, 0], nodes[0, 1], nodes[0, 2] = 0, n, 0
    while top >= 0:
        lo, m, done = nodes[top, 0], nodes[top, 1], nodes[top, 2]
        if m <= 128:
            values[depth] = _block_sum(a, lo, m)
            depth += 1
            top -= 1
        elif done:
            depth -= 1
            values[depth - 1] += values[depth]
            top -= 1
        else:
            half = m // 2
            half -= half % 8
            nodes[top, 2] = 1
            nodes[top + 1, 0], nodes[top + 1, 1], nodes[top + 1, 2] = lo + half, m - half, 0
            nodes[top + 2, 0], nodes[top + 2, 1], nodes[top + 2, 2] = lo, half, 0
            top += 2
    return values[0]


@njit(cache=True, nogil=True)
def selective_probability(b, p):
    """The selective-sampling query probability ``b / (b + |p|)`` of a margin ``p``.

    Parameters
    ----------
    b : float > 0
    p : float
    """
    return b / (b + abs(p))


@njit(cache=True, nogil=True)
def log_prediction(log, t, p):
    """Record round ``t``'s prediction ``sign(p)`` (``sign(0) = +1``), not yet queried; return it.

    Parameters
    ----------
    log : ActiveLog
    t : int
    p : float
        The margin the prediction is made with.
    """
    predicted = 1 if p >= 0 else -1
    log.predictions[t] = predicted
    log.queried[t] = False
    return predicted


@njit(cache=True, nogil=True)
def committee_margin(scores, weights):
    """``sum_m weights[m] scores[m]``: a committee's (or the peers') weighted margin.

    Parameters
    ----------
    scores, weights : ndarray of shape (n_tasks,)
        Every task's margin of the round, and the committee's weights.
    """
    p = 0.0
    for m in range(scores.size):
        p += scores[m] * weights[m]
    return p


@njit(cache=True, nogil=True)
def learn_example(rows, t, W, m, label, log):
    """``w_m += label x_t``: task ``m``'s perceptron takes round ``t``'s example, counted in
    ``log.updates_per_task``.

    Parameters
    ----------
    rows : DenseRows or CsrRows
    t : int
    W : ndarray of shape (n_features, n_tasks)
    m, label : int
    log : ActiveLog
    """
    add_row(rows, t, W[:, m], float(label))
    log.updates_per_task[m] += 1


@njit(cache=True, nogil=True)
def perceptron_step(rows, t, W, k, label, predicted, log):
    """``w_k += label x_t`` when ``label`` differs from the prediction (:func:`learn_example`).

    Parameters
    ----------
    rows, t, W, k, label, log
        As :func:`learn_example` takes them (``k`` its ``m``).
    predicted : int
    """
    if label != predicted:
        learn_example(rows, t, W, k, label, log)


@njit(cache=True, nogil=True)
def buy_label(port, rows, rounds, t, W, predicted, log):
    """Buy round ``t``'s label, log it, and take the perceptron step on its task.

    Parameters
    ----------
    port : tuple
        ``LabelOracle.port()``.
    rows : DenseRows or CsrRows
    rounds : ActiveRounds
    t : int
    W : ndarray of shape (n_features, n_tasks)
    predicted : int
    log : ActiveLog

    Returns
    -------
    label : int
        The label, or the oracle's refusal (> 1), on which nothing is logged.
    """
    k = rounds.tasks[t]
    y = oracle_query(port, k, rounds.indexes[t])
    if y <= 1:
        log.queried[t] = True
        log.queries_per_task[k] += 1
        perceptron_step(rows, t, W, k, y, predicted, log)
    return y


@njit(cache=True, nogil=True)
def reweight(row, losses, C, step_first):
    """The multiplicative committee update ``row_m <- row_m exp(-C l_m / sum(l))``, renormalised.

    Parameters
    ----------
    row : ndarray of shape (n_tasks,)
        A committee's weights; updated in place (no change when every loss is zero).
    losses : ndarray of shape (n_tasks,)
    C : float
    step_first : bool
        Compute the exponent as ``l_m * (-C / sum(l))`` (AMLC) rather than
        ``-C l_m / sum(l)`` (PEER): the two differ in rounding, and each learner keeps its own.
    """
    lam = pairwise_sum(losses)
    if lam <= 0:
        return
    if step_first:
        step = -C / lam
        for m in range(row.size):
            row[m] = row[m] * np.exp(losses[m] * step)
    else:
        for m in range(row.size):
            row[m] = row[m] * np.exp(-C * losses[m] / lam)
    total = pairwise_sum(row)
    for m in range(row.size):
        row[m] /= total


@njit(cache=True, nogil=True)
def share_example(rows, t, W, scores, weights, k, y, reference, similar, log):
    """Give the labelled example ``(x_t, y)`` of task ``k`` to similar tasks that disagree.

    Task ``m != k`` gets ``w_m += y x_t`` when its committee weight ``weights[m]`` is at
    least ``similar`` and its own sign (``scores[m]``, with ``sign(0) = +1``) differs from
    ``reference``.

    Parameters
    ----------
    rows : DenseRows or CsrRows
    t : int
    W : ndarray of shape (n_features, n_tasks)
    scores, weights : ndarray of shape (n_tasks,)
        The round's margins, and task ``k``'s committee weights.
    k, y, reference : int
    similar : float
    log : ActiveLog
    """
    for m in range(scores.size):
        if m == k:
            continue
        differs = scores[m] < 0 if reference > 0 else scores[m] >= 0
        if differs and weights[m] >= similar:
            learn_example(rows, t, W, m, y, log)


# "paper": the algorithm as the paper prints it; "authors-code": as the first author's public
# code (``humble_peer.py`` in GitHub ``JingxiXu/humble-peer-amtl``) computes it.
VARIANTS = ("paper", "authors-code")

# The parameters AMLC and PEER share. ``C`` is capped where ``exp(-C)``, the smallest factor
# of a committee update, would underflow to zero and leave a committee of zero weights.
# ``share_on`` left at None takes its variant's value.
COMMITTEE_PARAMETERS = {
    "b": [Capped(Real, 0, LARGE, closed="right")],
    "C": [Capped(Real, 0, 700, closed="both")],
    "share": [bool],
    "share_on": [Options(None, "disagreement", "mistake")],
    "variant": [Options(*VARIANTS)],
}


class ActiveLearner(OneTaskLearner):
    """Round machinery of the active multi-task perceptrons.

    Each round is one example of one task (see :class:`~medmtl.online.base.OneTaskLearner`):
    ``learn_one(x, y, task=k)``, ``learn_one(x, task=k, oracle=..., index=i)``, or
    ``query_one(x, task=k)`` then ``learn_one(x, task=k, answers=...)``. A subclass declares
    its parameters in ``_parameter_constraints`` (with this class's ``budget`` and
    ``random_state``; a subclass that checks its own extends ``_check_params``, calling this
    one), and implements ``_start_state()`` (extra state such as the committee weights),
    ``_play_rows(rows, rounds, port, left, log)`` (its compiled loop, reading the checked
    parameters in ``self._settings``), ``_asks(rows, task, uniforms, left)`` (whether the
    round on row 0 of ``rows`` buys its label: the loop's own decision, from the same
    compiled step) and, if it predicts otherwise than with task ``k``'s own perceptron,
    ``_task_margins``; ``_n_uniforms`` is the number of uniforms a round consumes. Its
    decisions depend on the scale of the inputs (margins against a fixed ``b``), so rows
    must have norms within :data:`~medmtl.online.scaling.ROW_NORM_RANGE`.

    The fitted attributes every such learner has: ``weights_`` (n_tasks, n_features),
    ``n_queries_``, ``queries_per_task_``, ``n_updates_``, ``updates_per_task_``,
    ``n_rounds_``, and, after ``fit``, ``stream_order_``, ``stream_predictions_`` and
    ``stream_queried_`` (per round: ``(task, index)``, the label predicted, whether the
    label was bought).
    """

    _n_uniforms = 1
    _parameter_constraints = {"budget": [None, Interval(Integral, 0, None)], "random_state": RANDOM_STATE}

    def _check_params(self):
        self._budget = self._check_hyper_parameters()["budget"]

    def _check_scale(self, X, name):
        check_row_scale(X, name, type(self).__name__)

    def _start(self, n_tasks, n_features):
        self.n_tasks_ = int(n_tasks)
        self.n_features_in_ = int(n_features)
        self.n_features_ = [self.n_features_in_] * self.n_tasks_
        # (features, tasks): a sparse row's margins under all K tasks read contiguous rows.
        self._W = np.zeros((self.n_features_in_, self.n_tasks_))
        self.queries_per_task_ = np.zeros(self.n_tasks_, dtype=np.int64)
        self.updates_per_task_ = np.zeros(self.n_tasks_, dtype=np.int64)
        self._seen = np.zeros(self.n_tasks_, dtype=np.int64)
        self.n_rounds_ = 0
        self._draws = None
        self._start_state()

    def _start_state(self):
        pass

    @property
    def weights_(self):
        """ndarray of shape (n_tasks, n_features): row ``k`` is task ``k``'s perceptron."""
        self._check_fitted()
        return self._W.T.copy()

    @property
    def n_queries_(self):
        """int: labels bought so far."""
        self._check_fitted()
        return int(self.queries_per_task_.sum())

    @property
    def n_updates_(self):
        """int: rank-one updates made so far (own mistakes plus shared examples)."""
        self._check_fitted()
        return int(self.updates_per_task_.sum())

    # ------------------------------------------------------------------------- training
    def _labels_left(self, oracle):
        """Labels a run may still buy (the oracle's and the learner's budgets); only its own queries spend them."""
        left = float("inf") if oracle is None else oracle.remaining
        if self._budget is not None:
            left = min(left, self._budget - int(self.queries_per_task_.sum()))
        return _NO_BUDGET if left == float("inf") else int(left)

    def _run(self, rows, order, uniforms, oracle, record=None):
        """Play the rounds of ``rows`` in the compiled loop (labels only from ``oracle``)."""
        n = rows.shape[0]
        left = self._labels_left(oracle)
        preds, queried = record if record is not None else (np.empty(n, dtype=np.int64), np.empty(n, dtype=bool))
        rounds = ActiveRounds(np.ascontiguousarray(order[:, 0]), np.ascontiguousarray(order[:, 1]),
                              np.ascontiguousarray(uniforms, dtype=np.float64))
        log = ActiveLog(preds, queried, self.queries_per_task_, self.updates_per_task_)
        status, played = self._play_rows(as_rows(rows), rounds, oracle.port(), left, log)
        self._seen += np.bincount(rounds.tasks[:played], minlength=self.n_tasks_)
        self.n_rounds_ += played
        if status:
            raise_query_status(status, int(order[played, 0]), int(order[played, 1]), oracle)

    def fit(self, X, y, *, order=None):
        """Play one pass over a multi-task stream, one example per round.

        Parameters
        ----------
        X : list of array-like or sparse matrix, X[k] of shape (n_k, n_features), or MultiTaskStream
            The training examples of each task (dense, or scipy.sparse: rows are never
            densified; never modified), or a stream made by
            :meth:`MultiTaskStream.interleave`.
        y : LabelOracle or list of array-like of labels
            The labels of ``X`` (same tasks, same row order; any two labels per task, the
            second in sorted order the positive class), or the oracle holding them: the
            only source of labels. An oracle's own budget, if any, is honoured too.
        order : array-like of shape (n_rounds, 2), optional
            The rounds as ``(task, index)`` pairs; default every example once in a random
            order drawn from ``random_state``.

        Returns
        -------
        self
        """
        self._check_params()
        rng = np.random.default_rng(self._settings["random_state"])
        if isinstance(X, MultiTaskStream):
            if X.order is None or order is not None:
                raise ValueError("a stream given to fit must show one example per round and carry its own order")
            self.__dict__.pop("feature_names_in_", None)
            stream = X
        else:
            _check_task_list(X)
            check_feature_names(self, X, reset=True, labels=[f"Xs[{k}]" for k in range(len(X))], names_only=True)
            stream = MultiTaskStream.interleave(X, order=order, random_state=rng if order is None else None)
        for k, Xk in enumerate(stream.Xs):
            self._check_scale(Xk, f"Xs[{k}]")
        oracle = as_oracle(y, stream.n_tasks, [X.shape[0] for X in stream.Xs])
        self._start(stream.n_tasks, stream.n_features[0])
        self.classes_ = [c.copy() for c in oracle.classes]
        self._rng = rng
        n = stream.n_rounds
        uniforms = rng.random((n, self._n_uniforms))
        self.stream_order_ = stream.order.copy()
        codes = np.zeros(n, dtype=np.int64)
        self.stream_queried_ = np.zeros(n, dtype=bool)
        self.stream_predictions_ = None
        self._run(stream.rows, stream.order, uniforms, oracle, record=(codes, self.stream_queried_))
        self.stream_predictions_ = self._labels_of(codes, stream.order[:, 0])
        return self

    def _labels_of(self, codes, tasks):
        """Each round's predicted code as its task's label."""
        classes = self.classes_
        same = all(c.dtype == classes[0].dtype for c in classes)
        table = np.stack(classes) if same else np.array([c.astype(object) for c in classes], dtype=object)
        return table[tasks, (codes >= 0).astype(np.intp)]

    # ------------------------------------------------------------------------- the round
    def _begin(self, x, task, oracle):
        self._check_scale(x, "x")
        if self._started():
            if oracle is not None:
                as_oracle(oracle, self.n_tasks_, classes=self.classes_)
            return
        if oracle is None:
            self._check_started("its first round needs an oracle, which tells the number of tasks")
        self._check_params()
        self._start(oracle.n_tasks, x.shape[1])
        self.classes_ = [c.copy() for c in oracle.classes]
        self._rng = np.random.default_rng(self._settings["random_state"])

    def _draw_round(self):
        return self._rng.random((1, self._n_uniforms))

    def _index(self, task, index):
        return int(self._seen[task]) if index is None else int(index)

    def _asked(self, x, task, index, oracle):
        task = self._check_task(task)
        asks = self._asks(as_rows(x), task, self._round_draws()[0], self._labels_left(oracle))
        return [task] if asks else [], self._index(task, index)

    def _play(self, x, task, oracle, index):
        task = self._check_task(task)
        self._run(x, np.array([[task, self._index(task, index)]], dtype=np.int64), self._round_draws(), oracle)
        self._spend_round_draws()

    # ------------------------------------------------------------------------ prediction
    def _checked_margins(self, X, task, name="X"):
        self._check_scale(X, name)
        return super()._checked_margins(X, task, name)

    def _task_margins(self, X, task):
        """Test-time margins of task ``task``: its own perceptron."""
        return np.asarray(X @ self._W[:, task]).ravel()


class CommitteeLearner(ActiveLearner):
    """An active learner whose tasks weigh each other in committees (AMLC, PEER).

    Row ``k`` of ``_tau`` (set by ``_start_state``) holds task ``k``'s weights of every
    task. The learner plays one of :data:`VARIANTS`: a parameter left at ``None`` takes the
    value its variant gives it in ``_variant_defaults`` (per variant, a dict of parameter
    values) when the parameters are checked.
    """

    _parameter_constraints = {**ActiveLearner._parameter_constraints, **COMMITTEE_PARAMETERS}
    _variant_defaults = {variant: {} for variant in VARIANTS}

    def _check_params(self):
        super()._check_params()
        settings = self._settings
        for name, value in self._variant_defaults[settings["variant"]].items():
            if settings[name] is None:
                settings[name] = value

    @property
    def committee_weights_(self):
        """ndarray of shape (n_tasks, n_tasks): the committee weights ``tau`` (row ``k``, task
        ``k``'s weights of every task)."""
        self._check_fitted()
        return self._tau.copy()
