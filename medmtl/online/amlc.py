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

Speed: between two rounds that may change the model (a query; for PEER also a peer label)
the state is constant, so :meth:`fit` scores a whole block of upcoming rounds with one
sparse-dense product, finds the first round that learns, settles every round before it at
once and handles that round alone. The block grows while nothing is learnt; during a dense
run of queries (early in a stream) the rounds are played one at a time on scalars. The
result is the same as the round-by-round loop (tested). Weights are kept as one
(features, tasks) array, so a sparse row's margins under all K tasks are one gather, and
its updates touch only the row's support.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from medmtl._validation import check_matrix, check_scalar_nonnegative, check_scalar_positive
from medmtl.online.linear import add_row
from medmtl.online.oracle import LabelOracle

__all__ = ["AMLC", "RandomQuery", "IndependentQuery", "stream_from_tasks"]

_MIN_BLOCK = 2
_MAX_BLOCK = 2048

try:  # private but long-stable; the public product below is the fallback
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover
    _csr_matvecs = None


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

    A subclass sets ``_n_uniforms`` and implements ``_setup`` (extra state), ``_scan``
    (vectorised predictions and "this round may learn" flags for a block of rounds under a
    fixed state), ``_scan_one`` (the same for one round, on scalars) and ``_learn_round``
    (one learning round).
    """

    _n_uniforms = 1

    # ----------------------------------------------------------------- parameters / state
    def _check_params(self):
        self._b = check_scalar_positive(self.b, "b") if hasattr(self, "b") else None
        self._budget = _check_budget(self.budget)

    def _init_state(self, n_tasks, n_features):
        self.n_tasks_ = int(n_tasks)
        self.n_features_in_ = int(n_features)
        # (features, tasks): one sparse-dense product then scores all tasks of a block.
        self._W = np.zeros((self.n_features_in_, self.n_tasks_))
        self.n_queries_ = 0
        self.queries_per_task_ = np.zeros(self.n_tasks_, dtype=np.int64)
        self.n_updates_ = 0
        self._setup()

    def _setup(self):
        pass

    def _query(self, oracle, task, index):
        y = oracle.query(task, index)
        self.n_queries_ += 1
        self.queries_per_task_[task] += 1
        return y

    def _add(self, rows, t, task, y):
        add_row(self._W[:, task], rows, t, float(y))
        self.n_updates_ += 1

    def _add_to_tasks(self, rows, t, tasks, y):
        """``w_m += y x_t`` for several tasks ``m`` at once (one scatter, the row's support only)."""
        if len(tasks) == 1:
            return self._add(rows, t, int(tasks[0]), y)
        if sp.issparse(rows):
            s, e = rows.indptr[t], rows.indptr[t + 1]
            # Flat positions of (feature, task) in the C-ordered (features, tasks) matrix; CSR
            # column indices within a row are unique, so the fancy-index addition is exact.
            flat = (rows.indices[s:e, None] * self.n_tasks_ + tasks).ravel()
            values = np.repeat(y * rows.data[s:e], len(tasks))
            self._W.reshape(-1)[flat] += values
        else:
            self._W[:, tasks] += y * rows[t][:, None]
        self.n_updates_ += len(tasks)

    @property
    def weights_(self):
        """ndarray of shape (n_tasks, n_features): row ``k`` is task ``k``'s perceptron."""
        self._check_fitted()
        return self._W.T.copy()

    def _check_fitted(self):
        if not hasattr(self, "_W"):
            raise AttributeError(f"this {type(self).__name__} has not seen any data yet; call fit or learn_one first")

    # ------------------------------------------------------------------------- scoring
    def _block_scores(self, rows, start, stop):
        """Margins of rounds ``start:stop`` under every task's perceptron: (stop - start, K)."""
        if sp.issparse(rows):
            s, e = rows.indptr[start], rows.indptr[stop]
            indptr = rows.indptr[start:stop + 1] - s
            if _csr_matvecs is not None:
                # scipy's own CSR x dense kernel, called without building a sub-matrix
                # object: that object costs more than the product on a block of a few rows.
                out = np.zeros((stop - start, self.n_tasks_))
                _csr_matvecs(stop - start, rows.shape[1], self.n_tasks_, indptr, rows.indices[s:e],
                             rows.data[s:e], self._W.ravel(), out.ravel())
                return out
            block = sp.csr_matrix((rows.data[s:e], rows.indices[s:e], indptr),
                                  shape=(stop - start, rows.shape[1]))
            return np.asarray(block @ self._W)
        return rows[start:stop] @ self._W

    # ------------------------------------------------------------------------- training
    def _run(self, rows, order, uniforms, oracle, record=None):
        """Play the rounds of ``rows`` (see the module notes on blocks)."""
        n = rows.shape[0]
        tasks = order[:, 0]
        # Labels this run may still buy; only this run's own queries spend them.
        left = oracle.remaining
        if self._budget is not None:
            left = min(left, self._budget - self.n_queries_)
        t, size = 0, _MIN_BLOCK
        while t < n:
            if size == 1 and left > 0:
                # Dense run of queries: one round at a time on Python scalars is cheaper
                # than a block.
                scores = self._block_scores(rows, t, t + 1)[0]
                task = int(tasks[t])
                pred, event = self._scan_one(scores, task, uniforms[t])
                queried = False
                if event:
                    pred, queried = self._learn_round(rows, t, task, int(order[t, 1]), scores, pred,
                                                      uniforms[t], oracle)
                    left -= queried
                if record is not None:
                    record[0][t], record[1][t] = pred, queried
                t += 1
                if not event:
                    size = 2 * _MIN_BLOCK
                continue
            stop = min(n, t + size) if left > 0 else n
            scores = self._block_scores(rows, t, stop)
            yhat, may_learn = self._scan(scores, tasks[t:stop], uniforms[t:stop])
            first = int(may_learn.argmax()) if left > 0 else 0
            if left <= 0 or not may_learn[first]:
                if record is not None:
                    record[0][t:stop] = yhat
                t, size = stop, min(2 * size, _MAX_BLOCK)
                continue
            h = t + first
            if record is not None:
                record[0][t:h] = yhat[:first]
            pred, queried = self._learn_round(rows, h, int(tasks[h]), int(order[h, 1]),
                                              scores[first], int(yhat[first]), uniforms[h], oracle)
            left -= queried
            if record is not None:
                record[0][h], record[1][h] = pred, queried
            # Queries cluster early in a stream: after a query on the block's first round,
            # go one round at a time; otherwise try a block twice as long as the gap.
            t, size = h + 1, (1 if first == 0 else 2 * (first + 1))

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

    def _scan(self, scores, tasks, uniforms):
        own = scores[np.arange(len(tasks)), tasks]
        return _sgn(own), uniforms[:, 0] < self._q

    def _scan_one(self, scores, task, uniforms):
        return (1 if scores[task] >= 0 else -1), bool(uniforms[0] < self._q)

    def _learn_round(self, rows, t, task, index, scores, yhat, uniforms, oracle):
        y = self._query(oracle, task, index)
        if y != yhat:
            self._add(rows, t, task, y)
        return yhat, True


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

    def __init__(self, b=1.0, budget=None, random_state=None):
        self.b = b
        self.budget = budget
        self.random_state = random_state

    def _check_params(self):
        _ActiveMultitaskLearner._check_params(self)

    def _scan(self, scores, tasks, uniforms):
        own = scores[np.arange(len(tasks)), tasks]
        return _sgn(own), uniforms[:, 0] < self._b / (self._b + np.abs(own))

    def _scan_one(self, scores, task, uniforms):
        own = float(scores[task])
        return (1 if own >= 0 else -1), bool(uniforms[0] < self._b / (self._b + abs(own)))


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

    @property
    def committee_weights_(self):
        """ndarray of shape (n_tasks, n_tasks): the relationship matrix ``tau``."""
        self._check_fitted()
        return self._tau.copy()

    def _scan(self, scores, tasks, uniforms):
        p = self._scale * np.einsum("ij,ij->i", scores, self._tau[tasks])
        return _sgn(p), uniforms[:, 0] < self._b / (self._b + np.abs(p))

    def _scan_one(self, scores, task, uniforms):
        p = self._scale * float(scores @ self._tau[task])
        return (1 if p >= 0 else -1), bool(uniforms[0] < self._b / (self._b + abs(p)))

    def _learn_round(self, rows, t, task, index, scores, yhat, uniforms, oracle):
        tau_k = self._tau[task]
        y = self._query(oracle, task, index)
        losses = 1.0 - y * scores
        np.maximum(losses, 0.0, out=losses)
        lam = losses.sum()
        if lam > 0:
            losses *= -self._C / lam
            tau_k = tau_k * np.exp(losses)
            tau_k /= tau_k.sum()
            self._tau[task] = tau_k
        # Task k learns from its committee's mistake; similar peers get the example too.
        # All of them are updated from the margins of this round (w^(t-1)), as in Algorithm 1.
        if self.share:
            reference = yhat if self.share_on == "disagreement" else y
            # sign(p_km) != reference, with sign(0) = +1
            receive = (scores < 0) if reference > 0 else (scores >= 0)
            receive &= tau_k >= tau_k[task]
            receive[task] = y != yhat
            targets = receive.nonzero()[0]
            if targets.size:
                self._add_to_tasks(rows, t, targets, y)
        elif y != yhat:
            self._add(rows, t, task, y)
        return yhat, True

    def _margins(self, X, task):
        # (X W) tau_k: every task's margin, then the committee's weighted sum; cheaper than
        # forming sum_m tau_km w_m over all features when X is sparse.
        return np.asarray(X @ self._W) @ self._tau[task]
