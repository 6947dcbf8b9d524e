"""SHAMPO: K online perceptrons sharing one annotator (Cohen & Crammer, NIPS 2014).

On round t every task i sees an input x_{i,t} and predicts sign(p_{i,t}) with the margin
p_{i,t} = w_i . x_{i,t}. One task J_t is drawn with (Eq. 1 of the paper)

    Pr[J_t = j]  proportional to  a_j / (b + |p_{j,t}| - min_m |p_{m,t}|),

its label is asked from the annotator (a :class:`~medmtl.online.oracle.LabelOracle`), and
only that task is updated with the (aggressive) perceptron rule: on a mistake
(y p <= 0) and, in the aggressive variant, on a small margin (0 < y p <= lambda).
:mod:`medmtl.online.shampo_rounds` holds the draw and the compiled loop.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from numba import njit

from medmtl._validation import check_scalar_nonnegative
from medmtl.online.base import MultiTaskLearner
from medmtl.online.oracle import LabelOracle, as_oracle, oracle_query, raise_query_status
from medmtl.online.rows import add_row, as_rows, row_dot
from medmtl.online.shampo_rounds import ZERO_FEEDBACK, UpdateRule, draw_rule, play_rounds
from medmtl.online.streams import MultiTaskStream, scale_to_unit_ball

__all__ = ["SHAMPO", "perceptron_mistake_prior", "STRATEGIES"]

STRATEGIES = ("shampo", "uniform", "exploit")


def check_rule_params(learner):
    """Check the parameters SHAMPO and its reductions share; return the (b, lambda) used.

    The baselines are SHAMPO's limits: ``"uniform"`` is b -> inf, ``"exploit"`` b -> 0;
    lambda is 0 unless ``aggressive``, and b / 2 when ``lam`` is None.
    """
    if learner.strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {learner.strategy!r}")
    if learner.scale not in ("row", "max", None):
        raise ValueError(f"scale must be 'row', 'max' or None, got {learner.scale!r}")
    b = check_scalar_nonnegative(learner.b, "b", allow_inf=True)
    b = {"uniform": np.inf, "exploit": 0.0}.get(learner.strategy, b)
    if not learner.aggressive:
        return b, 0.0
    if learner.lam is None:
        return b, b / 2.0
    return b, check_scalar_nonnegative(learner.lam, "lam", allow_inf=True)


def check_prior(prior, n_tasks, n_queries):
    """The prior a of Eq. (1) as a new float array (uniform when ``prior`` is None)."""
    if prior is None:
        return np.ones(n_tasks)
    a = np.array(prior, dtype=np.float64, copy=True)
    if a.shape != (n_tasks,):
        raise ValueError(f"prior must have one entry per task ({n_tasks}), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("prior contains NaN or infinite values")
    if np.any(a < 0):
        raise ValueError(f"prior must be non-negative, got {a[a < 0][:5]}")
    if np.count_nonzero(a) < n_queries:
        raise ValueError(f"prior gives {np.count_nonzero(a)} task(s) a positive weight; "
                         f"need at least n_queries={n_queries}")
    return a


def _check_positive_int(value, name, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1 or \
            (high is not None and value > high):
        limit = f"an integer in [1, {high}]" if high is not None else "a positive integer"
        raise ValueError(f"{name} must be {limit}, got {value!r}")
    return int(value)


def round_stream(xs, n_tasks, scale):
    """A one-round stream of the K inputs ``xs`` of a :meth:`learn_one` round."""
    if scale == "max":
        raise ValueError("scale='max' needs the whole stream; use fit, or scale='row'")
    if sp.issparse(xs) or len(xs) != n_tasks:
        raise ValueError(f"a round needs one input per task ({n_tasks}), got {len(xs)}")
    rows = [x if sp.issparse(x) else np.asarray(x, dtype=np.float64).reshape(1, -1) for x in xs]
    return MultiTaskStream(rows, scale=scale)


class SHAMPO(MultiTaskLearner):
    """SHAMPO (Fig. 2 of Cohen & Crammer 2014): K perceptrons, one shared annotator.

    Each round shows every task an input (see :class:`~medmtl.online.base.OnlineLearner`
    for the protocol: ``learn_one(xs, ys)`` or ``learn_one(xs, oracle=...)`` with the K
    inputs ``xs``).

    Parameters
    ----------
    b : float >= 0 or inf, default=1.0
        Exploration-exploitation trade-off of Eq. (1): ``b = 0`` always queries the task
        with the smallest absolute margin, ``b = inf`` queries by the prior alone.
    aggressive : bool, default=True
        Also update on correct predictions with a small margin, 0 < y p <= ``lam``.
    lam : float >= 0 or None, default=None
        The aggressive threshold lambda; ``None`` means b / 2 (the paper's choice). Ignored
        when ``aggressive=False`` (lambda = 0).
    prior : array-like of shape (n_tasks,), "mistakes" or None, default=None
        The prior a_i >= 0 of Eq. (1). ``None`` is uniform; ``"mistakes"`` is the paper's
        heuristic (see :func:`perceptron_mistake_prior`), computed in ``fit`` from the first
        ``prior_rounds`` rounds, whose labels are then queried from the same annotator.
    strategy : {"shampo", "uniform", "exploit"}, default="shampo"
        ``"uniform"`` is the b -> inf limit (draw by the prior; with ``aggressive`` and
        ``lam=None``, lambda = inf: every queried input updates), ``"exploit"`` the b -> 0
        limit (smallest absolute margin, ties at random; lambda = 0 unless ``lam`` is given).
    n_queries : int, default=1
        Labels asked per round (distinct tasks; the extension of the paper's Sec. 4).
    prior_rounds : int, default=1000
        Rounds used by ``prior="mistakes"``.
    scale : {"row", "max", None}, default="row"
        How inputs are scaled into the unit ball (see
        :func:`~medmtl.online.streams.scale_to_unit_ball`).
    block_size : int, default=4096
        Rounds handed to the compiled loop at once, their random draws made together (a
        memory knob; results do not depend on it).
    dtype : {"float64", "float32"}, default="float64"
        Storage of dense inputs and their weights. float32 is faster on long dense streams;
        its rounding can change which task is drawn when two keys nearly tie.
    random_state : int, numpy Generator or None, default=None

    Attributes
    ----------
    coef_ : list of ndarray, coef_[j] of shape (n_features_j,)
        The weight vectors w_j.
    prior_ : ndarray of shape (n_tasks,)
    b_, lam_ : float
        The b and lambda used (after the strategy's limit).
    n_tasks_, n_rounds_ : int
        Tasks, and rounds seen so far.
    n_features_ : list of int
        The input dimension of each task.
    queries_per_task_, updates_per_task_ : ndarray of shape (n_tasks,)
    train_margins_ : ndarray of shape (n_rounds, n_tasks)
        The margins p_{i,t} of the last ``fit`` (predictions on the training stream; with
        the true labels they give the training mistakes, Fig. 4(a)).
    queried_tasks_ : ndarray of shape (n_rounds, n_queries)
        The tasks J_t queried on each round of the last ``fit``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(200, 3)) for _ in range(2)]
    >>> ys = [np.where(X[:, 0] > 0, 1, -1) for X in Xs]
    >>> model = SHAMPO(b=0.1, random_state=0).fit(Xs, ys)
    >>> int(model.queries_per_task_.sum())
    200
    >>> model.score(Xs, ys) > 0.9
    True
    >>> model.learn_one([Xs[0][0], Xs[1][0]], [ys[0][0], ys[1][0]])
    >>> model.predict_one([Xs[0][0], Xs[1][0]]).tolist() == [ys[0][0], ys[1][0]]
    True
    """

    def __init__(self, b=1.0, aggressive=True, lam=None, prior=None, strategy="shampo", n_queries=1,
                 prior_rounds=1000, scale="row", block_size=4096, dtype="float64", random_state=None):
        self._init_params(locals())

    # ------------------------------------------------------------------------------ setup
    def _check_params(self, n_tasks):
        self.b_, self.lam_ = check_rule_params(self)
        _check_positive_int(self.n_queries, "n_queries", high=n_tasks)
        self._check_storage_params()

    def _check_storage_params(self):
        _check_positive_int(self.block_size, "block_size")

    def _make_stream(self, X):
        if isinstance(X, MultiTaskStream):
            if X.order is not None:
                raise ValueError(f"{type(self).__name__} needs every task on every round; this stream "
                                 "shows one example per round")
            return X
        if self.dtype not in ("float64", "float32", np.float64, np.float32):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {self.dtype!r}")
        return MultiTaskStream(X, scale=self.scale, dtype=self.dtype)

    def _setup(self, stream, oracle):
        self._check_params(stream.n_tasks)
        if isinstance(self.prior, str):
            if self.prior != "mistakes":
                raise ValueError(f"prior must be array-like, None or 'mistakes', got {self.prior!r}")
            self.prior_ = perceptron_mistake_prior(stream, oracle, n_rounds=self.prior_rounds)
        else:
            self.prior_ = check_prior(self.prior, stream.n_tasks, self.n_queries)
        self._rng = np.random.default_rng(self.random_state)
        self._start_weights(stream)
        self.n_tasks_ = stream.n_tasks
        self.n_features_ = list(stream.n_features)
        self.n_rounds_ = 0
        self.queries_per_task_ = np.zeros(stream.n_tasks, dtype=np.int64)
        self.updates_per_task_ = np.zeros(stream.n_tasks, dtype=np.int64)

    def _start_weights(self, stream):
        self._W = stream.new_weights()

    @property
    def coef_(self):
        """list of ndarray: the weight vectors w_j (one per task)."""
        return list(self._W)

    # --------------------------------------------------------------------------- training
    def _pass(self, stream, oracle, index0, record):
        margins = queried = None
        if record:
            margins = np.empty((stream.n_rounds, stream.n_tasks))
            queried = np.empty((stream.n_rounds, self.n_queries), dtype=np.int64)
        before = oracle.queries_per_task.copy()
        compact, columns = stream.compacted()
        if compact is stream:
            W = self._W
        else:
            W = compact.new_weights()
            for j, cols in enumerate(columns):
                W[j][...] = self._W[j] if cols is None else self._W[j][cols]
        upd = play_rounds(compact, W, oracle, self._rng, draw_rule(self.prior_, self.b_, self.n_queries),
                          UpdateRule(self.lam_, ZERO_FEEDBACK["error"], 0.0), index0=index0,
                          block_size=self.block_size, margins_out=margins, queried_out=queried)
        if compact is not stream:
            for j, cols in enumerate(columns):
                if cols is None:
                    self._W[j][...] = W[j]
                else:
                    self._W[j][cols] = W[j]
        self.queries_per_task_ += oracle.queries_per_task - before
        self.updates_per_task_ += upd
        self.n_rounds_ += stream.n_rounds
        if record:
            self.train_margins_, self.queried_tasks_ = margins, queried

    def fit(self, X, y):
        """Run one pass over a multi-task stream, from zero weights.

        Parameters
        ----------
        X : list of array-like or sparse matrix, X[j] of shape (n_rounds, n_features_j), or MultiTaskStream
            Row t of every task is that task's input on round t.
        y : LabelOracle or list of array-like of shape (n_rounds,)
            The annotator, or each task's labels in {-1, +1} (put into a ``LabelOracle``).
            Round t asks for index t.

        Returns
        -------
        self
        """
        stream = self._make_stream(X)
        oracle = as_oracle(y, stream.n_tasks, [stream.n_rounds] * stream.n_tasks)
        self._setup(stream, oracle)
        self._pass(stream, oracle, 0, record=True)
        return self

    def _oracle_for(self, x, y, task):
        self._check_every_task(task)
        return LabelOracle([[label] for label in np.ravel(y)])

    def _check_every_task(self, task):
        if task is not None:
            raise ValueError(f"{type(self).__name__} shows every task an input on every round: x holds "
                             "the K inputs and task must be None")

    def _learn_round(self, x, task, oracle, index):
        self._check_every_task(task)
        if not self.__sklearn_is_fitted__():
            stream = round_stream(x, len(x), self.scale)
            self._setup(stream, as_oracle(oracle, stream.n_tasks))
        else:
            stream = round_stream(x, self.n_tasks_, self.scale)
            as_oracle(oracle, self.n_tasks_)
            if stream.n_features != self.n_features_:
                raise ValueError(f"input dimensions {stream.n_features} differ from {self.n_features_}")
        self._pass(stream, oracle, self.n_rounds_ if index is None else int(index), record=False)

    # ------------------------------------------------------------------------- prediction
    def _task_margins(self, X, task):
        # Scaling by a positive number changes no sign, hence no prediction.
        X = scale_to_unit_ball(X, method=self.scale or "row")
        return X @ self._W[task]


@njit(cache=True, nogil=True)
def _perceptron_mistakes(rows, n_rounds, w, port, task, index0):
    """A perceptron's mistakes on rows ``0 .. n_rounds - 1`` of one task; returns (status, mistakes, t)."""
    mistakes = 0
    for t in range(n_rounds):
        margin = row_dot(rows, t, w)
        y = oracle_query(port, task, index0 + t)
        if y > 1:
            return y, mistakes, t
        if y * margin <= 0:
            mistakes += 1
            add_row(rows, t, w, float(y))
    return 0, mistakes, n_rounds


def perceptron_mistake_prior(X, oracle, n_rounds=1000, index0=0):
    """The paper's prior: a_i proportional to a perceptron's mistakes on task i's first rounds.

    A plain perceptron is run on each task over rounds ``index0 .. index0 + n_rounds - 1``
    with every label queried from ``oracle`` (so those labels are counted). The prior is
    the number of mistakes, floored at 1 so that no task is never queried.

    Parameters
    ----------
    X : list of array-like or sparse matrix, or MultiTaskStream
    oracle : LabelOracle
    n_rounds : int, default=1000
    index0 : int, default=0

    Returns
    -------
    prior : ndarray of shape (n_tasks,)

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]] * 5)
    >>> oracle = LabelOracle([[1, -1] * 5, [1, 1] * 5])
    >>> perceptron_mistake_prior([X, X], oracle, n_rounds=10)
    array([2., 1.])
    >>> oracle.n_queries
    20
    """
    stream = X if isinstance(X, MultiTaskStream) else MultiTaskStream(X)
    if stream.order is not None:
        raise ValueError("the mistake prior needs a stream with every task on every round")
    if not isinstance(n_rounds, numbers.Integral) or n_rounds < 1:
        raise ValueError(f"n_rounds must be a positive integer, got {n_rounds!r}")
    n = min(int(n_rounds), stream.n_rounds)
    mistakes = np.zeros(stream.n_tasks)
    port = oracle.port()
    for j, Xj in enumerate(stream.Xs):
        status, mistakes[j], t = _perceptron_mistakes(as_rows(Xj), n, np.zeros(Xj.shape[1]), port, j, int(index0))
        if status:
            raise_query_status(status, j, index0 + t, oracle)
    return np.maximum(mistakes, 1.0)
