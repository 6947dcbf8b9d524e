"""SHAMPO: K online perceptrons sharing one annotator (Cohen & Crammer, NIPS 2014).

On round t every task i sees an input x_{i,t} and predicts sign(p_{i,t}) with the margin
p_{i,t} = w_i . x_{i,t}. One task J_t is drawn with (Eq. 1 of the paper)

    Pr[J_t = j]  proportional to  a_j / (b + |p_{j,t}| - min_m |p_{m,t}|),

its label is asked from the annotator (a :class:`~medmtl.online.oracle.LabelOracle`), and
only that task is updated with the (aggressive) perceptron rule: on a mistake
(y p <= 0) and, in the aggressive variant, on a small margin (0 < y p <= lambda).

How the draw is made. J_t is the arg-min over tasks of E_{j,t} / q_{j,t} where
q_{j,t} = a_j / (b + |p_{j,t}| - min_m |p_{m,t}|) and E_{j,t} are i.i.d. standard
exponentials (an exponential race: Pr[arg-min = j] = q_j / sum_m q_m exactly). With
``n_queries`` > 1 the tasks with the ``n_queries`` smallest keys are queried, which is
successive sampling without replacement proportional to q. The E's are drawn round after
round from one ``numpy.random.Generator``, K per round, so a naive per-round loop with the
same seed makes the same choices.

Why it is fast. A block of rounds is processed at once: the margins of all K tasks for the
whole block are one (batched) matrix product, the keys and choices of the whole block are
vectorised, and the only per-round Python work is the label query. When a task is
updated, only that task's margins for the rest of the block are recomputed (the other
weights did not move), and the choices of the rest of the block are redrawn from the same
exponentials. The result is the same sequence of queries and updates as the per-round
algorithm.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from medmtl._validation import check_pm1_labels
from medmtl.online.linear import MultiTaskStream, _csr_rows_matvec, add_row, rows_dot, scale_to_unit_ball
from medmtl.online.oracle import LabelOracle

__all__ = ["SHAMPO", "KernelSHAMPO", "perceptron_mistake_prior", "STRATEGIES"]

STRATEGIES = ("shampo", "uniform", "exploit")


# --------------------------------------------------------------------------- helpers
def _check_strategy(strategy):
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    return strategy


def _check_nonneg(value, name, allow_inf=False):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if np.isnan(value) or value < 0 or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be >= 0{'' if allow_inf else ' and finite'}, got {value}")
    return value


def _effective_b_lam(b, aggressive, lam, strategy):
    """The (b, lambda) actually used: the baselines are SHAMPO's limits b -> inf and b -> 0."""
    b = _check_nonneg(b, "b", allow_inf=True)
    if strategy == "uniform":
        b = np.inf
    elif strategy == "exploit":
        b = 0.0
    if not aggressive:
        return b, 0.0
    if lam is None:
        return b, b / 2.0
    return b, _check_nonneg(lam, "lam", allow_inf=True)


def _check_prior(prior, n_tasks, n_queries):
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


def _as_oracle(ys, n_tasks, n_rounds):
    """Wrap per-task label arrays into a LabelOracle (or check the oracle given)."""
    if isinstance(ys, LabelOracle):
        oracle = ys
    else:
        if isinstance(ys, np.ndarray) and ys.ndim == 1:
            raise TypeError("ys must be a list of per-task label arrays or a LabelOracle")
        oracle = LabelOracle(ys)
    if oracle.n_tasks != n_tasks:
        raise ValueError(f"the annotator knows {oracle.n_tasks} tasks but the stream has {n_tasks}")
    return oracle


class _KeyMaker:
    """Keys E / q of Eq. (1) for a block of rounds; the arg-min of a row is the drawn task.

    Tasks with a zero prior get an infinite key (never drawn, and never the "minimum
    margin" of exploit).
    """

    def __init__(self, prior, b):
        self.positive = prior > 0
        self.all_positive = bool(self.positive.all())
        self.uniform = bool(np.all(prior == prior[0]))
        self.inv_a = np.divide(1.0, prior, out=np.zeros_like(prior), where=self.positive)
        self.b = b

    def __call__(self, P, E):
        b = self.b
        if np.isinf(b):
            keys = E if self.uniform else E * self.inv_a
        else:
            m = np.abs(P)
            if not self.all_positive:
                m[:, ~self.positive] = np.inf
            gap = m - m.min(axis=1, keepdims=True)
            if not self.all_positive:
                gap[:, ~self.positive] = 1.0  # masked to inf below; avoids inf * 0
            if b == 0.0:
                # exploit: only the smallest |p| can be drawn; ties broken at random (by prior)
                keys = np.where(gap == 0.0, E if self.uniform else E * self.inv_a, np.inf)
            else:
                gap += b
                keys = gap * E if self.uniform else gap * E * self.inv_a
        if not self.all_positive:
            keys = np.where(self.positive, keys, np.inf)
        return keys


def _query_keys(P, E, prior, b):
    return _KeyMaker(prior, b)(P, E)


def _choose(keys, n_queries):
    if n_queries == 1:
        return keys.argmin(axis=1)
    return np.argsort(keys, axis=1, kind="stable")[:, :n_queries]


def _zero_coef(zero_feedback, p, eta, lam, signs, r, j, start):
    """Update coefficient after a "neither" (0) answer of the one-vs-one bandit."""
    if zero_feedback == "weak":
        return eta if p >= 0 else -eta
    if zero_feedback == "random":
        c = signs[r]
        return c if c * p <= lam else 0
    if zero_feedback == "ignore":
        return 0
    raise ValueError(f"the annotator returned label 0 for task {j}, round {start + r}; "
                     "binary tasks need labels in {-1, +1}")


def _shampo_pass(stream, W, oracle, rng, *, prior, b, lam, n_queries=1, index0=0,
                 block_size=256, zero_feedback="error", eta=0.0, sign_rng=None,
                 margins_out=None, queried_out=None):
    """One pass of SHAMPO over ``stream``; updates ``W`` in place.

    Returns per-task update counts. Round ``t`` of the stream asks the oracle for index
    ``index0 + t``. ``zero_feedback`` says what a label 0 (the one-vs-one bandit's "neither")
    does: "error" (not allowed), "ignore" (no update), "weak" (w += eta * sign(p) x) or
    "random" (a random +-1 label drawn from ``sign_rng``, one per round).
    """
    K, n = stream.n_tasks, stream.n_rounds
    Xs = stream.Xs
    sparse = [sp.issparse(X) for X in Xs]
    query = oracle.query
    keys_of = _KeyMaker(prior, b)
    n_updates = [0] * K
    single = n_queries == 1
    B = max(1, int(block_size))
    L = 16  # rows whose keys are drawn at once (adapted to the update rate)
    start = 0
    while start < n:
        stop = min(start + B, n)
        R = stop - start
        P = stream.block_margins(W, start, stop)
        E = rng.standard_exponential((R, K))
        signs = (sign_rng.integers(0, 2, R) * 2 - 1).tolist() if zero_feedback == "random" else None
        # After an update only the moved task's margins for the rest of the block change;
        # they are recomputed at once, and the draws of the next window of rows redone.
        stale = {}
        block_updates = 0
        r = 0
        while r < R:
            we = min(R, r + L)
            for j, f in stale.items():
                if sparse[j]:
                    X = Xs[j]
                    P[f:, j] = _csr_rows_matvec(X.indptr, X.indices, X.data, start + f, stop, X.shape[1], W[j])
                else:
                    P[f:, j] = Xs[j][start + f:stop] @ W[j]
            stale = {}
            J = _choose(keys_of(P[r:we], E[r:we]), n_queries)
            if queried_out is not None:
                queried_out[start + r:start + we] = J.reshape(we - r, -1)
            changed = False
            if single:
                # the hot loop: one label per round; leave the window at the first update
                for j, p in zip(J.tolist(), P[np.arange(r, we), J].tolist()):
                    y = query(j, index0 + start + r)
                    r += 1
                    if y:
                        if y * p > lam:
                            continue
                        c = y
                    else:
                        c = _zero_coef(zero_feedback, p, eta, lam, signs, r - 1, j, start)
                        if not c:
                            continue
                    if sparse[j]:
                        X = Xs[j]
                        lo, hi = X.indptr[start + r - 1], X.indptr[start + r]
                        W[j][X.indices[lo:hi]] += c * X.data[lo:hi]  # canonical CSR: unique columns
                    else:
                        W[j] += c * Xs[j][start + r - 1]
                    n_updates[j] += 1
                    stale[j] = r
                    changed = True
                    break
            else:
                for js, ps in zip(J.tolist(), np.take_along_axis(P[r:we], J, axis=1).tolist()):
                    t = start + r
                    for j, p in zip(js, ps):
                        y = query(j, index0 + t)
                        if y:
                            if y * p > lam:
                                continue
                            c = y
                        else:
                            c = _zero_coef(zero_feedback, p, eta, lam, signs, r, j, start)
                            if not c:
                                continue
                        if sparse[j]:
                            add_row(W[j], Xs[j], t, c)
                        else:
                            W[j] += c * Xs[j][t]
                        n_updates[j] += 1
                        stale[j] = r + 1
                        changed = True
                    r += 1
                    if changed:
                        break
            if changed:
                block_updates += 1
        if margins_out is not None:
            margins_out[start:stop] = P
        # Blocks long enough to amortise the batched product, short enough that refreshing
        # an updated task's margins for the rest of the block stays cheap; windows about
        # as long as the expected run of rounds without an update.
        rate = (block_updates + 1) / (R + 1)
        B = int(min(block_size, max(32, 8 / rate)))
        L = int(min(64, max(4, 1 / rate)))
        start = stop
    return np.array(n_updates, dtype=np.int64)


def _new_weights(stream):
    return stream.new_weights()


def _round_stream(xs, n_tasks, scale):
    """A one-round stream from the K inputs of :meth:`learn_one`."""
    if scale == "max":
        raise ValueError("scale='max' needs the whole stream; use fit, or scale='row'")
    if len(xs) != n_tasks:
        raise ValueError(f"a round needs one input per task ({n_tasks}), got {len(xs)}")
    rows = [x if sp.issparse(x) else np.asarray(x, dtype=np.float64).reshape(1, -1) for x in xs]
    return MultiTaskStream(rows, scale=scale)


def _check_is_fitted(est):
    if not hasattr(est, "coef_"):
        raise RuntimeError(f"this {type(est).__name__} is not fitted yet; call fit or learn_one first")


# --------------------------------------------------------------------------- SHAMPO
class SHAMPO:
    """SHAMPO (Fig. 2 of Cohen & Crammer 2014): K perceptrons, one shared annotator.

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
        How inputs are scaled into the unit ball (see :func:`scale_to_unit_ball`).
    block_size : int, default=256
        The longest block of rounds processed together (a speed knob; results do not
        depend on it).
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
    """

    def __init__(self, b=1.0, aggressive=True, lam=None, prior=None, strategy="shampo",
                 n_queries=1, prior_rounds=1000, scale="row", block_size=256, dtype="float64",
                 random_state=None):
        self.b = b
        self.aggressive = aggressive
        self.lam = lam
        self.prior = prior
        self.strategy = strategy
        self.n_queries = n_queries
        self.prior_rounds = prior_rounds
        self.scale = scale
        self.block_size = block_size
        self.dtype = dtype
        self.random_state = random_state

    # -- setup
    def _validate_params(self, n_tasks):
        _check_strategy(self.strategy)
        self.b_, self.lam_ = _effective_b_lam(self.b, self.aggressive, self.lam, self.strategy)
        nq = self.n_queries
        if not isinstance(nq, numbers.Integral) or isinstance(nq, bool) or not 1 <= nq <= n_tasks:
            raise ValueError(f"n_queries must be an integer in [1, {n_tasks}], got {nq!r}")
        bs = self.block_size
        if not isinstance(bs, numbers.Integral) or bs < 1:
            raise ValueError(f"block_size must be a positive integer, got {bs!r}")
        if self.scale not in ("row", "max", None):
            raise ValueError(f"scale must be 'row', 'max' or None, got {self.scale!r}")

    def _setup(self, stream, oracle):
        self._validate_params(stream.n_tasks)
        if isinstance(self.prior, str):
            if self.prior != "mistakes":
                raise ValueError(f"prior must be array-like, None or 'mistakes', got {self.prior!r}")
            self.prior_ = perceptron_mistake_prior(stream, oracle, n_rounds=self.prior_rounds)
        else:
            self.prior_ = _check_prior(self.prior, stream.n_tasks, self.n_queries)
        self._rng = np.random.default_rng(self.random_state)
        self._W = _new_weights(stream)
        self.n_tasks_ = stream.n_tasks
        self.n_features_ = list(stream.n_features)
        self.n_rounds_ = 0
        self.queries_per_task_ = np.zeros(stream.n_tasks, dtype=np.int64)
        self.updates_per_task_ = np.zeros(stream.n_tasks, dtype=np.int64)

    def _make_stream(self, Xs):
        if isinstance(Xs, MultiTaskStream):
            return Xs
        if self.dtype not in ("float64", "float32", np.float64, np.float32):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {self.dtype!r}")
        return MultiTaskStream(Xs, scale=self.scale, dtype=self.dtype)

    @property
    def coef_(self):
        return list(self._W)

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
        upd = _shampo_pass(compact, W, oracle, self._rng, prior=self.prior_, b=self.b_,
                           lam=self.lam_, n_queries=self.n_queries, index0=index0,
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

    # -- public API
    def fit(self, Xs, ys):
        """Run one pass over a multi-task stream, from zero weights.

        Parameters
        ----------
        Xs : list of array-like or sparse matrix, Xs[j] of shape (n_rounds, n_features_j), or MultiTaskStream
            Row t of every task is that task's input on round t.
        ys : LabelOracle or list of array-like of shape (n_rounds,)
            The annotator; a list of labels in {-1, +1} is wrapped into a ``LabelOracle``.
            Round t asks for index t.

        Returns
        -------
        self
        """
        stream = self._make_stream(Xs)
        oracle = _as_oracle(ys, stream.n_tasks, stream.n_rounds)
        self._setup(stream, oracle)
        self._pass(stream, oracle, 0, record=True)
        return self

    def learn_one(self, xs, oracle, index=None):
        """Play one round: predict the K inputs, query ``n_queries`` labels, update.

        Parameters
        ----------
        xs : list of K array-like of shape (n_features_j,) (or 1-row sparse matrices)
        oracle : LabelOracle
        index : int, optional
            The oracle index of this round's labels; default: the number of rounds seen.
        """
        if not hasattr(self, "_W"):
            stream = _round_stream(xs, len(xs), self.scale)
            self._setup(stream, oracle)
        else:
            stream = _round_stream(xs, self.n_tasks_, self.scale)
            if stream.n_features != self.n_features_:
                raise ValueError(f"input dimensions {stream.n_features} differ from {self.n_features_}")
        index = self.n_rounds_ if index is None else int(index)
        self._pass(stream, oracle, index, record=False)

    def predict_one(self, xs):
        """Predict the K labels of one round (+1 for a zero margin)."""
        _check_is_fitted(self)
        stream = _round_stream(xs, self.n_tasks_, "row" if self.scale == "max" else self.scale)
        p = stream.block_margins(self._W, 0, 1)[0]
        return np.where(p >= 0, 1, -1)

    def decision_function(self, Xs):
        """Margins of each task's inputs.

        Inputs are scaled by the training rule: to unit norm for ``scale="row"`` (and
        ``None``); for ``"max"`` by the largest norm of the matrix given. Scaling by a
        positive number does not change the signs, hence not the predictions.

        Parameters
        ----------
        Xs : list of array-like or sparse matrix, Xs[j] of shape (n_j, n_features_j)
            The tasks may have different numbers of rows.

        Returns
        -------
        margins : list of ndarray, margins[j] of shape (n_j,)
        """
        _check_is_fitted(self)
        if len(Xs) != self.n_tasks_:
            raise ValueError(f"expected inputs for {self.n_tasks_} tasks, got {len(Xs)}")
        out = []
        for j, X in enumerate(Xs):
            X = scale_to_unit_ball(X, method=self.scale or "row")
            if X.shape[1] != self.n_features_[j]:
                raise ValueError(f"Xs[{j}] has {X.shape[1]} features; task {j} was trained on {self.n_features_[j]}")
            out.append(rows_dot(X, 0, X.shape[0], self._W[j]))
        return out

    def predict(self, Xs):
        """Labels in {-1, +1} for each task's inputs (list of arrays, one per task)."""
        return [np.where(p >= 0, 1, -1) for p in self.decision_function(Xs)]

    def errors(self, Xs, ys):
        """Test error of each task, shape (n_tasks,)."""
        preds = self.predict(Xs)
        return np.array([np.mean(p != check_pm1_labels(y, len(p), name=f"ys[{j}]"))
                         for j, (p, y) in enumerate(zip(preds, ys))])

    def score(self, Xs, ys):
        """Mean accuracy over tasks."""
        return float(1.0 - self.errors(Xs, ys).mean())


# --------------------------------------------------------------------------- the prior
def perceptron_mistake_prior(Xs, oracle, n_rounds=1000, index0=0):
    """The paper's prior: a_i proportional to a perceptron's mistakes on task i's first rounds.

    A plain perceptron is run on each task over rounds ``index0 .. index0 + n_rounds - 1``
    with every label queried from ``oracle`` (so those labels are counted). The prior is
    the number of mistakes, floored at 1 so that no task is never queried.

    Parameters
    ----------
    Xs : list of array-like or sparse matrix, or MultiTaskStream
    oracle : LabelOracle
    n_rounds : int, default=1000

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
    stream = Xs if isinstance(Xs, MultiTaskStream) else MultiTaskStream(Xs)
    if not isinstance(n_rounds, numbers.Integral) or n_rounds < 1:
        raise ValueError(f"n_rounds must be a positive integer, got {n_rounds!r}")
    n = min(int(n_rounds), stream.n_rounds)
    mistakes = np.zeros(stream.n_tasks)
    for j, X in enumerate(stream.Xs):
        w = np.zeros(X.shape[1])
        for t in range(n):
            x_dot = rows_dot(X, t, t + 1, w)[0]
            y = oracle.query(j, index0 + t)
            if y * x_dot <= 0:
                mistakes[j] += 1
                add_row(w, X, t, y)
    return np.maximum(mistakes, 1.0)


# --------------------------------------------------------------------------- kernels
def _kernel_function(kernel, gamma, degree, coef0):
    if callable(kernel):
        return kernel
    if kernel == "linear":
        return lambda A, x: A @ x
    if kernel == "poly":
        return lambda A, x: (gamma * (A @ x) + coef0) ** degree
    if kernel == "rbf":
        return lambda A, x: np.exp(-gamma * np.sum((A - x) ** 2, axis=1))
    raise ValueError(f"kernel must be 'linear', 'poly', 'rbf' or a callable, got {kernel!r}")


class KernelSHAMPO(SHAMPO):
    """SHAMPO with a Mercer kernel: each task's model is a sum over its updated inputs.

    The margin of task j is p_j(x) = sum_s c_s k(x_s, x) over the inputs x_s on which task
    j was updated (c_s = y_s, or the aggressive coefficient). Queries and updates follow
    :class:`SHAMPO` exactly, so with ``kernel="linear"`` both make the same choices.
    Rounds are processed one at a time (each margin needs the whole support set).

    Parameters
    ----------
    kernel : {"rbf", "poly", "linear"} or callable, default="rbf"
        A callable gets ``(A, x)`` -- A of shape (n_support, n_features), x of shape
        (n_features,) -- and returns the kernel values of shape (n_support,).
    gamma, degree, coef0 : float
        Parameters of the RBF and polynomial kernels.
    b, aggressive, lam, prior, strategy, n_queries, prior_rounds, scale, random_state
        As in :class:`SHAMPO`. Dense inputs only.

    Attributes
    ----------
    support_ : list of ndarray, support_[j] of shape (n_support_j, n_features_j)
    dual_coef_ : list of ndarray, dual_coef_[j] of shape (n_support_j,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.uniform(-1, 1, size=(300, 2)) for _ in range(2)]
    >>> ys = [np.where(X[:, 0] * X[:, 1] > 0, 1, -1) for X in Xs]  # XOR: not linear
    >>> model = KernelSHAMPO(kernel="poly", degree=2, coef0=0.0, b=0.1, scale="max",
    ...                      random_state=0).fit(Xs, ys)
    >>> model.score(Xs, ys) > 0.95
    True
    """

    def __init__(self, kernel="rbf", gamma=1.0, degree=3, coef0=1.0, b=1.0, aggressive=True,
                 lam=None, prior=None, strategy="shampo", n_queries=1, prior_rounds=1000,
                 scale="row", random_state=None):
        super().__init__(b=b, aggressive=aggressive, lam=lam, prior=prior, strategy=strategy,
                         n_queries=n_queries, prior_rounds=prior_rounds, scale=scale,
                         random_state=random_state)
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0

    @property
    def coef_(self):
        raise AttributeError("a KernelSHAMPO has no primal weights; see support_ and dual_coef_")

    def _setup(self, stream, oracle):
        if any(sp.issparse(X) for X in stream.Xs):
            raise TypeError("KernelSHAMPO takes dense inputs only")
        super()._setup(stream, oracle)
        self._kfun = _kernel_function(self.kernel, self.gamma, self.degree, self.coef0)
        self._support = [[] for _ in range(stream.n_tasks)]
        self._coefs = [[] for _ in range(stream.n_tasks)]
        self.dual_coef_ = [np.zeros(0) for _ in range(stream.n_tasks)]
        self.support_ = [np.zeros((0, d)) for d in stream.n_features]

    def _margin(self, j, x):
        if not self._coefs[j]:
            return 0.0
        return float(self.dual_coef_[j] @ self._kfun(self.support_[j], x))

    def _pass(self, stream, oracle, index0, record):
        K, n, q = stream.n_tasks, stream.n_rounds, self.n_queries
        keys_of = _KeyMaker(self.prior_, self.b_)
        if record:
            self.train_margins_ = np.empty((n, K))
            self.queried_tasks_ = np.empty((n, q), dtype=np.int64)
        for t in range(n):
            p = np.array([self._margin(j, stream.Xs[j][t]) for j in range(K)])
            E = self._rng.standard_exponential((1, K))
            J = _choose(keys_of(p[None, :], E), q).reshape(-1)
            for j in J.tolist():
                y = oracle.query(j, index0 + t)
                self.queries_per_task_[j] += 1
                if y * p[j] <= self.lam_:
                    self._support[j].append(stream.Xs[j][t])
                    self._coefs[j].append(float(y))
                    self.support_[j] = np.array(self._support[j])
                    self.dual_coef_[j] = np.array(self._coefs[j])
                    self.updates_per_task_[j] += 1
            if record:
                self.train_margins_[t] = p
                self.queried_tasks_[t] = J
        self.n_rounds_ += n

    def decision_function(self, Xs):
        if not hasattr(self, "support_"):
            raise RuntimeError("this KernelSHAMPO is not fitted yet; call fit or learn_one first")
        if len(Xs) != self.n_tasks_:
            raise ValueError(f"expected inputs for {self.n_tasks_} tasks, got {len(Xs)}")
        out = []
        for j, X in enumerate(Xs):
            X = scale_to_unit_ball(X, method=self.scale or "row")
            if sp.issparse(X):
                raise TypeError("KernelSHAMPO takes dense inputs only")
            out.append(np.array([self._margin(j, x) for x in X]))
        return out

    def predict_one(self, xs):
        if not hasattr(self, "support_"):
            raise RuntimeError("this KernelSHAMPO is not fitted yet; call fit or learn_one first")
        stream = _round_stream(xs, self.n_tasks_, self.scale)
        p = np.array([self._margin(j, stream.Xs[j][0]) for j in range(self.n_tasks_)])
        return np.where(p >= 0, 1, -1)
