"""Active multitask learning with committees (AMLC) and its single-task baselines.

Xu, Tang & Jebara, "Active Multitask Learning with Committees" (``amlc_xu_tang_jebara.txt``
in the seeds). K linear perceptrons, one per task, see a stream of examples ``(x, k)`` one at
a time. On each round the learner predicts, decides at random whether to pay for the label,
and learns only from labels it paid for. Labels reach a learner only through a
:class:`~medmtl.online.oracle.LabelOracle`, so the oracle's counts prove which labels were
read.

This module holds the round machinery shared by every active learner here and three of
them:

- :class:`AMLC`: Algorithm 1 of the paper (committee weights ``tau``, committee confidence,
  perceptron update, multiplicative ``tau`` update, data sharing);
- :class:`RandomQuery`: the paper's *Random* baseline (query with probability 1/2);
- :class:`IndependentQuery`: the paper's *Independent* baseline (confidence of the task's own
  perceptron only).

PEER and PEER+Share live in :mod:`medmtl.online.peer`.

Conventions (the paper leaves them open):

- ``sign(0) = +1``: a zero margin predicts the positive class, and a peer whose margin is
  zero "predicts" +1 in the sharing test.
- Randomness: every round consumes a fixed number of uniforms from the learner's
  ``numpy.random.Generator`` (one here, two for PEER), drawn whether or not they are used, and
  the query decision is ``u < probability``. The stream order drawn by :meth:`fit` comes
  first from the same generator. So a run is a function of ``random_state`` alone, and
  ``fit`` equals the same rounds fed one by one to ``learn_one``.
- Budget: when the budget (the learner's ``budget`` or the oracle's) is spent, the learner
  stops learning altogether and only predicts (the paper's Fig. 1: "the training process is
  ended after the budget is exhausted").

Speed: the rounds of a pass are one compiled loop (numba, :func:`_active_rounds`), one
branch per learner (``_rule``). A label is bought only through the oracle's compiled twin
of ``query`` (:func:`~medmtl.online.oracle.oracle_query`), which counts and records it in
the oracle's own arrays, exactly as the Python ``query`` does. Weights are kept as one
(features, tasks) array, so a sparse row's margins under all K tasks are one gather of
contiguous rows, and its updates touch only the row's support. Sums that decide a
comparison (the ``tau`` normalisation) follow numpy's summation order bit for bit.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from numba import njit

from medmtl._validation import check_matrix, check_scalar_nonnegative, check_scalar_positive
from medmtl.online.oracle import LabelOracle, oracle_query, raise_query_status

__all__ = ["AMLC", "RandomQuery", "IndependentQuery", "stream_from_tasks"]

# The rules the compiled round loop knows (a learner's ``_rule``).
_RANDOM, _INDEPENDENT, _AMLC, _PEER = 0, 1, 2, 3
_NO_BUDGET = np.iinfo(np.int64).max
# Stand-ins for the arrays a call does not use (dense rows, or CSR arrays, or tau).
_NO_ROWS = np.zeros((0, 0))
_NO_INDEX = np.zeros(1, dtype=np.int32)
_NO_DATA = np.zeros(1)
_NO_TAU = np.zeros((1, 1))


@njit(cache=True, nogil=True)
def _numpy_sum(a):
    """``np.sum`` of a 1-D float64 array, bit for bit (numpy's pairwise summation).

    numpy halves arrays longer than 128 recursively; the halves are walked here with an
    explicit stack (numba cannot cache recursive functions reliably).
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
def _row_scores(sparse, X, indptr, indices, data, t, W, scores):
    """``scores[m] = <x_t, w_m>`` for every task (W is (features, tasks))."""
    scores[:] = 0.0
    K = scores.size
    if sparse:
        for i in range(indptr[t], indptr[t + 1]):
            v, col = data[i], indices[i]
            for m in range(K):
                scores[m] += v * W[col, m]
    else:
        for i in range(X.shape[1]):
            v = X[t, i]
            for m in range(K):
                scores[m] += v * W[i, m]


@njit(cache=True, nogil=True)
def _own_score(sparse, X, indptr, indices, data, t, W, k):
    """``<x_t, w_k>`` for one task."""
    acc = 0.0
    if sparse:
        for i in range(indptr[t], indptr[t + 1]):
            acc += data[i] * W[indices[i], k]
    else:
        for i in range(X.shape[1]):
            acc += X[t, i] * W[i, k]
    return acc


@njit(cache=True, nogil=True)
def _add_row(sparse, X, indptr, indices, data, t, W, m, y):
    """``w_m += y x_t`` on the row's support (canonical CSR: unique columns)."""
    if sparse:
        for i in range(indptr[t], indptr[t + 1]):
            W[indices[i], m] += y * data[i]
    else:
        for i in range(X.shape[1]):
            W[i, m] += y * X[t, i]


@njit(cache=True, nogil=True)
def _active_rounds(rule, sparse, X, indptr, indices, data, tasks, indexes, uniforms, W, tau,
                   scale, b, peer_b, q_prob, C, share, share_on_mistake, left, port,
                   preds, queried, queries_per_task, counts):
    """Play every round of an active multi-task stream, compiled; returns (status, round).

    ``rule`` is one of _RANDOM, _INDEPENDENT, _AMLC, _PEER (see the learners' docstrings for
    each). Round ``t`` shows row ``t`` of the inputs (dense ``X`` or CSR) to task
    ``tasks[t]``, whose label is example ``indexes[t]``; it is bought only through
    :func:`oracle_query` on ``port``, at most ``left`` times. ``W`` (features, tasks) and
    ``tau`` (tasks, tasks) are updated in place; ``counts`` gets [queries, updates, peer
    labels]. Status 0: every round played; else the oracle's code at that round.
    """
    n, K = tasks.size, W.shape[1]
    scores, losses = np.empty(K), np.empty(K)
    for t in range(n):
        k = tasks[t]
        u = uniforms[t, 0]
        if rule == _AMLC:
            _row_scores(sparse, X, indptr, indices, data, t, W, scores)
            p = 0.0
            for m in range(K):
                p += scores[m] * tau[k, m]
            p *= scale
            ask = u < b / (b + abs(p))
        else:
            p = _own_score(sparse, X, indptr, indices, data, t, W, k)
            ask = u < (q_prob if rule == _RANDOM else b / (b + abs(p)))
        yhat = 1 if p >= 0 else -1
        preds[t] = yhat
        queried[t] = False
        if not ask or left <= 0:
            continue
        if rule == _PEER:
            _row_scores(sparse, X, indptr, indices, data, t, W, scores)
            peer = 0.0  # tau_kk = 0: the peers only
            for m in range(K):
                peer += scores[m] * tau[k, m]
            if uniforms[t, 1] >= peer_b / (peer_b + abs(peer)):
                # The peers are confident: learn from their label, pay nothing.
                label = 1 if peer >= 0 else -1
                counts[2] += 1
                if label != yhat:
                    _add_row(sparse, X, indptr, indices, data, t, W, k, float(label))
                    counts[1] += 1
                continue
        y = oracle_query(port, k, indexes[t])
        if y > 1:
            return y, t
        queried[t] = True
        left -= 1
        counts[0] += 1
        queries_per_task[k] += 1
        fy = float(y)
        if rule == _RANDOM or rule == _INDEPENDENT:
            if y != yhat:
                _add_row(sparse, X, indptr, indices, data, t, W, k, fy)
                counts[1] += 1
            continue
        if rule == _PEER:
            if y != yhat:
                _add_row(sparse, X, indptr, indices, data, t, W, k, fy)
                counts[1] += 1
            if K == 1:
                continue
        # The committee (AMLC) or peer (PEER) weights of task k: tau_km exp(-C l_km / lambda),
        # l_km the hinge loss of peer m on this round's margins, then renormalised.
        for m in range(K):
            losses[m] = max(1.0 - fy * scores[m], 0.0)
        if rule == _PEER:
            losses[k] = 0.0
        lam = _numpy_sum(losses)
        if lam > 0:
            row = tau[k]
            if rule == _AMLC:
                step = -C / lam
                for m in range(K):
                    row[m] = row[m] * np.exp(losses[m] * step)
            else:
                for m in range(K):
                    row[m] = row[m] * np.exp(-C * losses[m] / lam)
            total = _numpy_sum(row)
            for m in range(K):
                row[m] /= total
        if not share:
            if rule == _AMLC and y != yhat:
                _add_row(sparse, X, indptr, indices, data, t, W, k, fy)
                counts[1] += 1
            continue
        # Share the example with similar tasks whose own sign differs from the reference
        # (sign(0) = +1), all from this round's margins (w^(t-1)), as in Algorithm 1.
        reference = y if share_on_mistake else yhat
        similar = tau[k, k] if rule == _AMLC else 1.0 / (K - 1)
        for m in range(K):
            if m == k:
                if rule == _AMLC and y != yhat:
                    _add_row(sparse, X, indptr, indices, data, t, W, m, fy)
                    counts[1] += 1
                continue
            differs = scores[m] < 0 if reference > 0 else scores[m] >= 0
            if differs and tau[k, m] >= similar:
                _add_row(sparse, X, indptr, indices, data, t, W, m, fy)
                counts[1] += 1
    return 0, n


def _sgn(z):
    """Sign with ``sgn(0) = +1`` (works on scalars and arrays)."""
    return np.where(np.asarray(z) >= 0, 1, -1)


def _check_budget(budget):
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, numbers.Real) or budget != int(budget) or budget < 0:
        raise ValueError(f"budget must be a non-negative integer or None, got {budget!r}")
    return int(budget)


def _check_oracle(oracle, n_tasks=None):
    if not isinstance(oracle, LabelOracle):
        raise TypeError(f"oracle must be a medmtl.online.oracle.LabelOracle, got {type(oracle).__name__}")
    if n_tasks is not None and oracle.n_tasks != n_tasks:
        raise ValueError(f"the oracle holds {oracle.n_tasks} tasks but the stream has {n_tasks}")


def stream_from_tasks(Xs, order=None, random_state=None):
    """Stack per-task inputs into one stream of rounds ``(x, task, index)``.

    Parameters
    ----------
    Xs : list of array-like or sparse matrix, Xs[k] of shape (n_k, n_features)
        Task ``k``'s examples. Every task must have the same number of features; all dense
        or all sparse. Never modified.
    order : array-like of shape (n_rounds, 2), optional
        The rounds as ``(task, index)`` pairs. Default: every example once, in a random
        order drawn from ``random_state``.
    random_state : int, numpy.random.Generator or None
        Used only when ``order`` is None.

    Returns
    -------
    rows : ndarray or CSR matrix of shape (n_rounds, n_features)
        Row ``t`` is the input of round ``t`` (a new object, canonical CSR when sparse).
    order : ndarray of shape (n_rounds, 2)
        ``order[t] = (task, index)``.

    Examples
    --------
    >>> rows, order = stream_from_tasks([[[1.0, 0.0]], [[0.0, 1.0], [2.0, 2.0]]], order=[[1, 1], [0, 0]])
    >>> rows
    array([[2., 2.],
           [1., 0.]])
    """
    if isinstance(Xs, np.ndarray) or sp.issparse(Xs) or not hasattr(Xs, "__len__") or len(Xs) == 0:
        raise TypeError("Xs must be a non-empty list of per-task input matrices")
    mats = [check_matrix(X, name=f"Xs[{k}]") for k, X in enumerate(Xs)]
    kinds = {sp.issparse(X) for X in mats}
    if len(kinds) != 1:
        raise TypeError("Xs mixes dense and sparse tasks; pass all dense or all scipy.sparse")
    dims = {X.shape[1] for X in mats}
    if len(dims) != 1:
        raise ValueError(f"every task needs the same number of features; got {sorted(dims)}")
    sizes = np.array([X.shape[0] for X in mats])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    if order is None:
        rng = np.random.default_rng(random_state)
        perm = rng.permutation(int(offsets[-1]))
        tasks = np.searchsorted(offsets, perm, side="right") - 1
        order = np.column_stack([tasks, perm - offsets[tasks]])
    else:
        order = np.asarray(order)
        if order.ndim != 2 or order.shape[1] != 2 or order.dtype.kind not in "iu":
            raise ValueError(f"order must be an integer array of shape (n_rounds, 2); got {order.shape}, {order.dtype}")
        if order.shape[0] == 0:
            raise ValueError("order is empty; the stream needs at least one round")
        task, index = order[:, 0], order[:, 1]
        if task.min() < 0 or task.max() >= len(mats):
            raise ValueError(f"order names tasks outside 0..{len(mats) - 1}")
        if index.min() < 0 or np.any(index >= sizes[task]):
            raise ValueError("order names an example index beyond its task's size")
        order = order.astype(np.int64)
    glob = offsets[order[:, 0]] + order[:, 1]
    if sp.issparse(mats[0]):
        rows = sp.vstack(mats, format="csr")[glob]
        rows.sum_duplicates()  # unique column indices per row, so fancy-index updates are exact
    else:
        rows = np.vstack(mats)[glob]
    return rows, order


def _check_committee_params(learner):
    """Check the parameters AMLC and PEER share (C, share, share_on); set ``learner._C``."""
    learner._C = check_scalar_nonnegative(learner.C, "C")
    if learner.share_on not in ("disagreement", "mistake"):
        raise ValueError(f"share_on must be 'disagreement' or 'mistake', got {learner.share_on!r}")
    if not isinstance(learner.share, (bool, np.bool_)):
        raise TypeError(f"share must be True or False, got {learner.share!r}")


class _ActiveMultitaskLearner:
    """Round machinery of the active multi-task perceptrons (not public).

    A subclass sets ``_rule`` (which branch of the compiled loop :func:`_active_rounds` it
    is), ``_n_uniforms`` (uniforms per round) and ``_setup`` (extra state, e.g. ``_tau``).
    """

    _n_uniforms = 1
    _rule = _RANDOM

    # ----------------------------------------------------------------- parameters / state
    def _check_params(self):
        self._b = check_scalar_positive(self.b, "b") if hasattr(self, "b") else None
        self._budget = _check_budget(self.budget)

    def _init_state(self, n_tasks, n_features):
        self.n_tasks_ = int(n_tasks)
        self.n_features_in_ = int(n_features)
        # (features, tasks): a sparse row's margins under all K tasks are one gather of rows.
        self._W = np.zeros((self.n_features_in_, self.n_tasks_))
        self.n_queries_ = 0
        self.queries_per_task_ = np.zeros(self.n_tasks_, dtype=np.int64)
        self.n_updates_ = 0
        self._setup()

    def _setup(self):
        pass

    def _rule_params(self):
        """(tau, confidence scale, b, peer_b, query probability, C, share, share on mistake)."""
        return _NO_TAU, 1.0, 0.0, 1.0, 0.0, 0.0, False, False

    @property
    def weights_(self):
        """ndarray of shape (n_tasks, n_features): row ``k`` is task ``k``'s perceptron."""
        self._check_fitted()
        return self._W.T.copy()

    def _check_fitted(self):
        if not hasattr(self, "_W"):
            raise AttributeError(f"this {type(self).__name__} has not seen any data yet; call fit or learn_one first")

    # ------------------------------------------------------------------------- training
    def _run(self, rows, order, uniforms, oracle, record=None):
        """Play the rounds of ``rows`` in the compiled loop (labels only from ``oracle``)."""
        n = rows.shape[0]
        # Labels this run may still buy; only this run's own queries spend them.
        left = oracle.remaining
        if self._budget is not None:
            left = min(left, self._budget - self.n_queries_)
        left = _NO_BUDGET if left == float("inf") else int(left)
        if sp.issparse(rows):
            X, indptr, indices, data = _NO_ROWS, rows.indptr, rows.indices, rows.data
        else:
            X, indptr, indices, data = np.ascontiguousarray(rows, dtype=np.float64), _NO_INDEX, _NO_INDEX, _NO_DATA
        preds, queried = record if record is not None else (np.empty(n, dtype=np.int64), np.empty(n, dtype=bool))
        counts = np.zeros(3, dtype=np.int64)
        status, t = _active_rounds(
            self._rule, sp.issparse(rows), X, indptr, indices, data, np.ascontiguousarray(order[:, 0]),
            np.ascontiguousarray(order[:, 1]), np.ascontiguousarray(uniforms, dtype=np.float64), self._W,
            *self._rule_params(), left, oracle.port(), preds, queried, self.queries_per_task_, counts)
        self.n_queries_ += int(counts[0])
        self.n_updates_ += int(counts[1])
        if hasattr(self, "n_peer_labels_"):
            self.n_peer_labels_ += int(counts[2])
        if status:
            raise_query_status(status, int(order[t, 0]), int(order[t, 1]), oracle)

    def fit(self, Xs, oracle, order=None):
        """Play one pass over a multi-task stream, querying labels from ``oracle``.

        Parameters
        ----------
        Xs : list of array-like or sparse matrix, Xs[k] of shape (n_k, n_features)
            The training examples of each task (dense, or scipy.sparse: rows are never
            densified). Never modified.
        oracle : LabelOracle
            Holds the labels of ``Xs`` (same tasks, same row order); the only source of
            labels. Its own budget, if any, is honoured too.
        order : array-like of shape (n_rounds, 2), optional
            The rounds as ``(task, index)`` pairs; default every example once in a random
            order drawn from ``random_state``.

        Returns
        -------
        self
        """
        self._check_params()
        rng = np.random.default_rng(self.random_state)
        rows, order = stream_from_tasks(Xs, order=order, random_state=rng if order is None else None)
        _check_oracle(oracle, len(Xs))
        self._init_state(len(Xs), rows.shape[1])
        self._rng = rng
        n = rows.shape[0]
        uniforms = rng.random((n, self._n_uniforms))
        self.stream_order_ = order
        self.stream_predictions_ = np.zeros(n, dtype=np.int64)
        self.stream_queried_ = np.zeros(n, dtype=bool)
        self._run(rows, order, uniforms, oracle, record=(self.stream_predictions_, self.stream_queried_))
        return self

    def learn_one(self, x, task, oracle, index):
        """Play one round: predict example ``index`` of task ``task``, maybe query, learn.

        Parameters
        ----------
        x : array-like of shape (n_features,) or sparse matrix of shape (1, n_features)
            The example's input.
        task : int
            Its task, in ``0 .. oracle.n_tasks - 1``.
        oracle : LabelOracle
            Asked for ``(task, index)`` if and only if the learner decides to query.
        index : int
            The example's row in the oracle's labels of ``task``.

        Returns
        -------
        None
        """
        _check_oracle(oracle)
        row = self._as_row(x)
        if not hasattr(self, "_W"):
            self._check_params()
            self._init_state(oracle.n_tasks, row.shape[1])
            self._rng = np.random.default_rng(self.random_state)
        elif oracle.n_tasks != self.n_tasks_:
            raise ValueError(f"the oracle holds {oracle.n_tasks} tasks but this learner has {self.n_tasks_}")
        task = self._check_task(task)
        uniforms = self._rng.random((1, self._n_uniforms))
        order = np.array([[task, int(index)]], dtype=np.int64)
        self._run(row, order, uniforms, oracle)

    # ------------------------------------------------------------------------ prediction
    def _as_row(self, x):
        if sp.issparse(x):
            row = check_matrix(x, name="x")
            if not row.has_canonical_format:
                # check_matrix may share the caller's arrays: canonicalise a copy.
                row = row.copy()
                row.sum_duplicates()
        else:
            x = np.asarray(x, dtype=np.float64)
            if x.ndim == 1:
                x = x[None, :]
            row = check_matrix(x, name="x")
        if row.shape[0] != 1:
            raise ValueError(f"x must be one example; got {row.shape[0]} rows")
        if hasattr(self, "n_features_in_") and row.shape[1] != self.n_features_in_:
            raise ValueError(f"x has {row.shape[1]} features but the learner was trained on {self.n_features_in_}")
        return row

    def _check_task(self, task):
        if isinstance(task, bool) or not isinstance(task, numbers.Integral):
            raise TypeError(f"task must be an integer, got {type(task).__name__}")
        if not 0 <= task < self.n_tasks_:
            raise ValueError(f"task {task} out of range for {self.n_tasks_} tasks")
        return int(task)

    def _margins(self, X, task):
        """Test-time margins of task ``task``: its own perceptron."""
        return np.asarray(X @ self._W[:, task]).ravel()

    def decision_function(self, X, task):
        """Margins of the examples ``X`` of task ``task``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        task : int

        Returns
        -------
        margins : ndarray of shape (n_samples,)
        """
        self._check_fitted()
        task = self._check_task(task)
        X = check_matrix(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features but the learner was trained on {self.n_features_in_}")
        return self._margins(X, task)

    def predict(self, X, task):
        """Labels in {-1, +1} of the examples ``X`` of task ``task`` (``sign(0) = +1``)."""
        return _sgn(self.decision_function(X, task))

    def predict_one(self, x, task):
        """The label in {-1, +1} the learner predicts at test time for one example."""
        self._check_fitted()
        return int(_sgn(self.decision_function(self._as_row(x), task))[0])

    def score(self, Xs, ys):
        """Test accuracy pooled over all examples of all tasks.

        Parameters
        ----------
        Xs : list of array-like or sparse matrix, one per task
        ys : list of array-like of labels in {-1, +1}, one per task

        Returns
        -------
        accuracy : float
        """
        if len(Xs) != len(ys):
            raise ValueError(f"Xs has {len(Xs)} tasks but ys has {len(ys)}")
        correct = total = 0
        for k, (X, y) in enumerate(zip(Xs, ys)):
            pred = self.predict(X, k)
            y = np.asarray(y)
            if y.shape != pred.shape:
                raise ValueError(f"ys[{k}] has {y.shape[0]} labels but Xs[{k}] has {pred.shape[0]} rows")
            correct += int(np.sum(pred == y))
            total += y.size
        return correct / total


class RandomQuery(_ActiveMultitaskLearner):
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
    n_queries_ : int
    queries_per_task_ : ndarray of shape (n_tasks,)
    stream_order_ : ndarray of shape (n_rounds, 2)
        The ``(task, index)`` of each round of the last :meth:`fit`.
    stream_predictions_ : ndarray of shape (n_rounds,)
        The label predicted on each round (before any query).
    stream_queried_ : ndarray of shape (n_rounds,) of bool

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

    _rule = _RANDOM

    def __init__(self, query_probability=0.5, budget=None, random_state=None):
        self.query_probability = query_probability
        self.budget = budget
        self.random_state = random_state

    def _check_params(self):
        super()._check_params()
        q = check_scalar_nonnegative(self.query_probability, "query_probability")
        if q > 1:
            raise ValueError(f"query_probability must be in [0, 1], got {q}")
        self._q = q

    def _rule_params(self):
        return _NO_TAU, 1.0, 0.0, 1.0, self._q, 0.0, False, False


class IndependentQuery(RandomQuery):
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
    weights_ : ndarray of shape (n_tasks, n_features)
    n_queries_ : int
    queries_per_task_ : ndarray of shape (n_tasks,)
    stream_order_, stream_predictions_, stream_queried_ : ndarray
        As for :class:`RandomQuery`.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.online.oracle import LabelOracle
    >>> Xs = [np.array([[1.0, 0.2], [-1.0, 0.1], [0.9, -0.3], [-0.8, 0.0]])] * 2
    >>> oracle = LabelOracle([[1, -1, 1, -1], [1, -1, 1, -1]])
    >>> model = IndependentQuery(random_state=0).fit(Xs, oracle)
    >>> model.predict(Xs[1], 1).tolist()
    [1, -1, 1, -1]
    """

    _rule = _INDEPENDENT

    def __init__(self, b=1.0, budget=None, random_state=None):
        self.b = b
        self.budget = budget
        self.random_state = random_state

    def _check_params(self):
        _ActiveMultitaskLearner._check_params(self)

    def _rule_params(self):
        return _NO_TAU, 1.0, self._b, 1.0, 0.0, 0.0, False, False


class AMLC(_ActiveMultitaskLearner):
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
    n_queries_ : int
        Labels paid for.
    queries_per_task_ : ndarray of shape (n_tasks,)
    n_updates_ : int
        Rank-one updates made (own mistakes plus shared examples).
    stream_order_, stream_predictions_, stream_queried_ : ndarray
        Per round of the last :meth:`fit`: ``(task, index)``, committee prediction, whether
        the label was paid for.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.online.oracle import LabelOracle
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 3)) for _ in range(3)]
    >>> ys = [np.where(X[:, 0] + 0.1 * X[:, 1] >= 0, 1, -1) for X in Xs]
    >>> oracle = LabelOracle(ys)
    >>> model = AMLC(C=1.0, random_state=0).fit(Xs, oracle)
    >>> model.committee_weights_.sum(axis=1).round(6).tolist()
    [1.0, 1.0, 1.0]
    >>> model.n_queries_ == oracle.n_queries < 90
    True
    >>> model.score(Xs, ys) > 0.8
    True
    """

    _rule = _AMLC

    def __init__(self, b=1.0, C=1.0, share=True, share_on="disagreement", confidence="mean", budget=None,
                 random_state=None):
        self.b = b
        self.C = C
        self.share = share
        self.share_on = share_on
        self.confidence = confidence
        self.budget = budget
        self.random_state = random_state

    def _check_params(self):
        super()._check_params()
        _check_committee_params(self)
        if self.confidence not in ("mean", "sum"):
            raise ValueError(f"confidence must be 'mean' or 'sum', got {self.confidence!r}")

    def _setup(self):
        self._tau = np.full((self.n_tasks_, self.n_tasks_), 1.0 / self.n_tasks_)
        self._scale = 1.0 if self.confidence == "mean" else float(self.n_tasks_)

    def _rule_params(self):
        return (self._tau, self._scale, self._b, 1.0, 0.0, self._C, bool(self.share),
                self.share_on == "mistake")

    @property
    def committee_weights_(self):
        """ndarray of shape (n_tasks, n_tasks): the relationship matrix ``tau``."""
        self._check_fitted()
        return self._tau.copy()

    def _margins(self, X, task):
        # (X W) tau_k: every task's margin, then the committee's weighted sum; cheaper than
        # forming sum_m tau_km w_m over all features when X is sparse.
        return np.asarray(X @ self._W) @ self._tau[task]
