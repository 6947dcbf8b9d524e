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

from numbers import Integral, Real

import numpy as np
from numba import njit

from medmtl._validation import Checked, Interval, InvalidParameterError, Options, check_feature_names
from medmtl.online._checks import INFINITY, LARGE, RANDOM_STATE, Capped
from medmtl.online.base import EveryTaskLearner
from medmtl.online.oracle import as_oracle, oracle_query, raise_query_status
from medmtl.online.rows import add_row, as_rows, row_dot
from medmtl.online.scaling import check_row_scale
from medmtl.online.shampo_rounds import ZERO_FEEDBACK, UpdateRule, ask_rounds, draw_rule, play_rounds
from medmtl.online.streams import MultiTaskStream, _check_task_list, scale_to_unit_ball

__all__ = ["SHAMPO", "perceptron_mistake_prior", "STRATEGIES"]

STRATEGIES = ("shampo", "uniform", "exploit")


def prior_weights(prior):
    """A prior a of Eq. (1) given as an array: a new 1-D float array of weights in {0} or [1e-100, 1e100].

    Eq. (1) divides by a_j, so a positive weight below ``1 / LARGE`` would make the draw's
    keys overflow.
    """
    if isinstance(prior, str):
        raise ValueError(f"prior must be array-like (one weight per task) or None, got {prior!r}")
    try:
        a = np.array(prior, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as err:
        raise ValueError(f"prior must be array-like of numbers or None ({err})") from None
    if a.ndim != 1:
        raise ValueError(f"prior must be 1-D, one weight per task; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("prior contains NaN or infinite values")
    if np.any(a < 0):
        raise ValueError(f"prior must be non-negative, got {a[a < 0][:5]}")
    absurd = (a > 0) & ((a < 1 / LARGE) | (a > LARGE))
    if np.any(absurd):
        raise ValueError(f"prior's positive weights must lie within [{1 / LARGE:g}, {LARGE:g}]; got {a[absurd][:5]}")
    return a


def _prior_or_mistakes(prior):
    if isinstance(prior, str) and prior != "mistakes":
        raise ValueError(f"prior must be array-like, None or 'mistakes', got {prior!r}")
    return prior if isinstance(prior, str) else prior_weights(prior)


# The parameters of SHAMPO's rule, shared by SHAMPO and its bandit reductions.
RULE_PARAMETERS = {
    "b": [Capped(Real, 0, LARGE, closed="both"), INFINITY],
    "aggressive": [bool],
    "lam": [Interval(Real, 0, None, closed="left"), INFINITY, None],
    "prior": [None, Checked(prior_weights)],
    "strategy": [Options(*STRATEGIES)],
    "scale": [Options("row", "max", None)],
    "random_state": RANDOM_STATE,
}


def _float_dtype(dtype):
    try:
        parsed = None if dtype is None else np.dtype(dtype)
    except TypeError:
        parsed = None
    if parsed not in (np.float64, np.float32):
        raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    return parsed


def rule_values(settings):
    """The (b, lambda) SHAMPO's rule uses, from the checked parameters.

    The baselines are SHAMPO's limits: ``"uniform"`` is b -> inf, ``"exploit"`` b -> 0;
    lambda is 0 unless ``aggressive``, and b / 2 when ``lam`` is None.
    """
    b = {"uniform": np.inf, "exploit": 0.0}.get(settings["strategy"], settings["b"])
    if not settings["aggressive"]:
        return b, 0.0
    if settings["lam"] is None:
        return b, b / 2.0
    return b, settings["lam"]


def check_prior(prior, n_tasks, n_queries):
    """The prior a of Eq. (1) for ``n_tasks`` tasks: a copy of the checked weights (uniform for None)."""
    if prior is None:
        return np.ones(n_tasks)
    a = np.array(prior, dtype=np.float64, copy=True)
    if a.shape != (n_tasks,):
        raise ValueError(f"prior must have one entry per task ({n_tasks}), got shape {a.shape}")
    if np.count_nonzero(a) < n_queries:
        raise ValueError(f"prior gives {np.count_nonzero(a)} task(s) a positive weight; "
                         f"need at least n_queries={n_queries}")
    return a


def round_stream(rows, scale):
    """A one-round stream of the K checked input rows of a :meth:`learn_one` round."""
    if scale == "max":
        raise ValueError("scale='max' needs the whole stream; use fit, or scale='row'")
    return MultiTaskStream(rows, scale=scale)


class SHAMPO(EveryTaskLearner):
    """SHAMPO (Fig. 2 of Cohen & Crammer 2014): K perceptrons, one shared annotator.

    Each round shows every task an input (see :class:`~medmtl.online.base.EveryTaskLearner`
    for the round: ``learn_one(xs, ys)``, ``learn_one(xs, oracle=...)``, or
    ``query_one(xs)`` then ``learn_one(xs, answers=...)``, with the K inputs ``xs``).

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
    classes_ : list of ndarray of shape (2,)
        Each task's two labels (the oracle's ``classes``); a margin >= 0 predicts the second.
    feature_names_in_ : ndarray of str
        The column names, when every task was given as a DataFrame with the same columns.
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

    Any two labels per task, as in scikit-learn (the second in sorted order is the positive
    class); predictions come back in them:

    >>> words = [np.where(y > 0, "yes", "no") for y in ys]
    >>> named = SHAMPO(b=0.1, random_state=0).fit(Xs, words)
    >>> named.classes_[1].tolist(), named.predict([X[:3] for X in Xs])[1].tolist()
    (['no', 'yes'], ['no', 'yes', 'yes'])
    """

    _parameter_constraints = {
        **RULE_PARAMETERS,
        "prior": [None, Checked(_prior_or_mistakes)],
        "n_queries": [Interval(Integral, 1, None)],
        "prior_rounds": [Interval(Integral, 1, None)],
        "block_size": [Interval(Integral, 1, None)],
        "dtype": [Checked(_float_dtype)],
    }

    def __init__(self, b=1.0, aggressive=True, lam=None, prior=None, strategy="shampo", n_queries=1,
                 prior_rounds=1000, scale="row", block_size=4096, dtype="float64", random_state=None):
        self._init_params(locals())

    # ------------------------------------------------------------------------------ setup
    def _make_stream(self, X):
        """The training stream of ``fit``; reads the inputs' feature names."""
        if isinstance(X, MultiTaskStream):
            if X.order is not None:
                raise ValueError(f"{type(self).__name__} needs every task on every round; this stream "
                                 "shows one example per round")
            self.__dict__.pop("feature_names_in_", None)
            return X
        _check_task_list(X)
        check_feature_names(self, X, reset=True, labels=[f"Xs[{j}]" for j in range(len(X))], names_only=True)
        stream = self._stream_of(X, self._settings["scale"])
        if self._settings["scale"] is None:
            for j, Xj in enumerate(stream.Xs):
                check_row_scale(Xj, f"Xs[{j}]", f"{type(self).__name__} with scale=None")
        return stream

    def _stream_of(self, X, scale):
        return MultiTaskStream(X, scale=scale, dtype=self._settings["dtype"])

    def _setup(self, stream, oracle):
        settings = self._settings
        if settings["n_queries"] > stream.n_tasks:
            raise InvalidParameterError(f"{type(self).__name__}: n_queries must be at most the number of tasks "
                                        f"({stream.n_tasks}); got {settings['n_queries']}")
        self.b_, self.lam_ = rule_values(settings)
        self._start_storage()
        if isinstance(settings["prior"], str):
            self.prior_ = perceptron_mistake_prior(stream, oracle, n_rounds=settings["prior_rounds"])
        else:
            self.prior_ = check_prior(settings["prior"], stream.n_tasks, settings["n_queries"])
        self.classes_ = [c.copy() for c in oracle.classes] if oracle is not None else \
            [np.array([-1, 1]) for _ in range(stream.n_tasks)]
        self._rng = np.random.default_rng(settings["random_state"])
        self._draws = None
        self._start_weights(stream)
        self.n_tasks_ = stream.n_tasks
        self.n_features_ = list(stream.n_features)
        self.n_rounds_ = 0
        self.queries_per_task_ = np.zeros(stream.n_tasks, dtype=np.int64)
        self.updates_per_task_ = np.zeros(stream.n_tasks, dtype=np.int64)

    def _start_storage(self):
        """Set up what the learner's storage needs from its parameters (nothing for SHAMPO)."""

    def _start_weights(self, stream):
        self._W = stream.new_weights()

    @property
    def coef_(self):
        """list of ndarray: the weight vectors w_j (one per task)."""
        return list(self._W)

    # --------------------------------------------------------------------------- training
    def _compact(self, stream):
        """The stream restricted to the columns its sparse tasks use, and the weights it reads.

        Returns
        -------
        compact : MultiTaskStream
        W : list of ndarray
            The learner's own weights when nothing was left out, else their compacted copy.
        columns : list of ndarray or None
            As :meth:`MultiTaskStream.compacted` gives them.
        """
        compact, columns = stream.compacted()
        if compact is stream:
            return stream, self._W, columns
        W = compact.new_weights()
        for j, cols in enumerate(columns):
            W[j][...] = self._W[j] if cols is None else self._W[j][cols]
        return compact, W, columns

    def _pass(self, stream, oracle, index0, record, drawn=None):
        margins = queried = None
        n_queries = self._settings["n_queries"]
        if record:
            margins = np.empty((stream.n_rounds, stream.n_tasks))
            queried = np.empty((stream.n_rounds, n_queries), dtype=np.int64)
        before = oracle.queries_per_task.copy()
        compact, W, columns = self._compact(stream)
        upd = play_rounds(compact, W, oracle, self._rng, draw_rule(self.prior_, self.b_, n_queries),
                          UpdateRule(self.lam_, ZERO_FEEDBACK["error"], 0.0), index0=index0,
                          block_size=self._settings["block_size"], margins_out=margins, queried_out=queried,
                          drawn=drawn)
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

    def _ask(self, stream, exponentials):
        """The tasks asked on the one round of ``stream`` (the first half of :meth:`_pass`)."""
        compact, W, _ = self._compact(stream)
        return ask_rounds(compact, W, draw_rule(self.prior_, self.b_, self._settings["n_queries"]),
                          exponentials)[1][0]

    def fit(self, X, y):
        """Run one pass over a multi-task stream, from zero weights.

        Parameters
        ----------
        X : list of array-like or sparse matrix, X[j] of shape (n_rounds, n_features_j), or MultiTaskStream
            Row t of every task is that task's input on round t.
        y : LabelOracle or list of array-like of shape (n_rounds,)
            The annotator, or each task's labels (put into a ``LabelOracle``): any two labels
            per task, the second in sorted order the positive class (``classes_``). Round t
            asks for index t.

        Returns
        -------
        self
        """
        self._check_hyper_parameters()
        stream = self._make_stream(X)
        oracle = as_oracle(y, stream.n_tasks, [stream.n_rounds] * stream.n_tasks)
        self._setup(stream, oracle)
        self._pass(stream, oracle, 0, record=True)
        return self

    # ------------------------------------------------------------------------- the round
    def _begin(self, rows, task, oracle):
        if self._started():
            if oracle is not None:
                as_oracle(oracle, self.n_tasks_, classes=self.classes_)
            return
        self._check_hyper_parameters()
        stream = self._round_stream(rows)
        if (oracle is None or oracle._live) and isinstance(self._settings["prior"], str):
            raise ValueError(f"{type(self).__name__}: prior='mistakes' counts a perceptron's mistakes on labels "
                             "known in advance; give the first round's labels (fit, or learn_one with y or a "
                             "LabelOracle), or the prior itself")
        self._setup(stream, None if oracle is None else as_oracle(oracle, stream.n_tasks))

    def _draw_round(self):
        return self._rng.standard_exponential((1, self.n_tasks_)), np.zeros(1, dtype=np.int64)

    def _asked(self, rows, task, index, oracle):
        asked = self._ask(self._round_stream(rows), self._round_draws()[0])
        return asked.tolist(), self.n_rounds_ if index is None else int(index)

    def _play(self, rows, task, oracle, index):
        stream = self._round_stream(rows)
        self._pass(stream, oracle, self.n_rounds_ if index is None else int(index), record=False,
                   drawn=self._round_draws())
        self._spend_round_draws()

    def _round_stream(self, rows):
        scale = self._settings["scale"]
        if scale is None:
            for j, row in enumerate(rows):
                check_row_scale(row, f"x[{j}]", f"{type(self).__name__} with scale=None")
        return round_stream(rows, scale)

    # ------------------------------------------------------------------------- prediction
    def _task_margins(self, X, task):
        # Scaling by a positive number changes no sign, hence no prediction.
        X = scale_to_unit_ball(X, method=self._settings["scale"] or "row")
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
    >>> from medmtl.online import LabelOracle
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
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, Integral) or n_rounds < 1:
        raise ValueError(f"n_rounds must be a positive integer, got {n_rounds!r}")
    n = min(int(n_rounds), stream.n_rounds)
    mistakes = np.zeros(stream.n_tasks)
    port = oracle.port()
    for j, Xj in enumerate(stream.Xs):
        status, mistakes[j], t = _perceptron_mistakes(as_rows(Xj), n, np.zeros(Xj.shape[1]), port, j, int(index0))
        if status:
            raise_query_status(status, j, index0 + t, oracle)
    return np.maximum(mistakes, 1.0)
