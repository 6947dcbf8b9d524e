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

Why it is fast. The whole pass is one compiled loop over rounds (numba): per round the K
margins (a dense dot product, or a CSR row's gather over the task's weights), the draw, the
label query and the update, with no Python in between. The label comes from the
annotator's compiled twin of ``query`` (:func:`~medmtl.online.oracle.oracle_query`), which
counts it, records it and checks the budget in the annotator's own arrays: the protocol is
the same as in Python, only faster. The exponentials are drawn in blocks of rounds before
the loop, in round order, so the choices do not depend on the block length.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from numba import njit

from medmtl._validation import check_pm1_labels
from medmtl.online.linear import MultiTaskStream, add_row, rows_dot, scale_to_unit_ball
from medmtl.online.oracle import LabelOracle, oracle_query, raise_query_status

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


# Status codes of the compiled pass besides the oracle's (QUERY_BUDGET_SPENT, QUERY_OUT_OF_RANGE).
_ZERO_LABEL = 4
_ZERO_MODES = {"error": 0, "ignore": 1, "weak": 2, "random": 3}


class _DrawRule:
    """Eq. (1) as the arrays the compiled draw reads: 1/a_j, a_j > 0, b."""

    def __init__(self, prior, b):
        self.positive = np.ascontiguousarray(prior > 0)
        self.inv_a = np.divide(1.0, prior, out=np.zeros_like(prior), where=self.positive)
        # A uniform prior multiplies no key by 1/a: the same keys as a naive E * (b + gap).
        self.uniform = bool(np.all(prior == prior[0]))
        self.b = float(b)


@njit(cache=True, nogil=True)
def _draw_round(p, e, inv_a, positive, uniform, b, n_queries, keys, taken, out):
    """Tasks queried on one round: the ``n_queries`` smallest keys E_j / q_j of Eq. (1).

    Tasks with a zero prior get an infinite key (never drawn, and never the "minimum margin"
    of exploit); ties go to the lower task index (a stable sort).
    """
    K = p.size
    if b == np.inf:
        for j in range(K):
            keys[j] = e[j] if uniform else e[j] * inv_a[j]
    else:
        low = np.inf
        for j in range(K):
            if positive[j] and abs(p[j]) < low:
                low = abs(p[j])
        for j in range(K):
            gap = abs(p[j]) - low
            if b == 0.0:
                # exploit: only the smallest |p| can be drawn; ties broken at random (by prior)
                keys[j] = (e[j] if uniform else e[j] * inv_a[j]) if gap == 0.0 else np.inf
            else:
                gap += b
                keys[j] = gap * e[j] if uniform else gap * e[j] * inv_a[j]
    for j in range(K):
        if not positive[j]:
            keys[j] = np.inf
        taken[j] = False
    for q in range(n_queries):
        best = -1
        for j in range(K):
            if not taken[j] and (best < 0 or keys[j] < keys[best]):
                best = j
        taken[best] = True
        out[q] = best


@njit(cache=True, nogil=True)
def _draw_rounds(P, E, inv_a, positive, uniform, b, n_queries):
    """:func:`_draw_round` on every row of ``P`` (margins) and ``E`` (exponentials)."""
    R, K = P.shape
    out = np.empty((R, n_queries), dtype=np.int64)
    keys, taken = np.empty(K), np.empty(K, dtype=np.bool_)
    for r in range(R):
        _draw_round(P[r], E[r], inv_a, positive, uniform, b, n_queries, keys, taken, out[r])
    return out


def _choose_tasks(P, E, prior, b, n_queries):
    """The tasks queried on each row of margins ``P`` (vectorised over rounds; tests use it)."""
    rule = _DrawRule(np.asarray(prior, dtype=np.float64), b)
    return _draw_rounds(np.ascontiguousarray(P, dtype=np.float64), np.ascontiguousarray(E, dtype=np.float64),
                        rule.inv_a, rule.positive, rule.uniform, rule.b, int(n_queries))


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _dense_dot(x, w):
    # reassociation lets the sum vectorise; the order differs from BLAS's by rounding only
    acc = 0.0
    for i in range(w.size):
        acc += x[i] * w[i]
    return acc


@njit(cache=True, nogil=True)
def _shampo_rounds(dense, X3, slab, W, indptr, indices, data, row_stride, row_step, col_off, w_flat,
                   E, signs, inv_a, positive, uniform, b, lam, n_queries, zero_mode, eta,
                   port, index0, t0, margins, queried, n_updates):
    """Rounds ``t0 .. t0 + len(E) - 1`` of SHAMPO, compiled; updates the weights in place.

    Inputs and weights come in one of two layouts. Dense (``dense``): task j's input on
    round t is ``X3[slab[j], t]`` and its weights ``W[j]``. CSR: it is row
    ``t * row_stride + j * row_step`` of (indptr, indices, data), whose columns, shifted by
    ``col_off[j]``, index the flat weights ``w_flat``. Labels come only from
    :func:`oracle_query` on ``port``. Returns (status, round, task): status 0 when every
    round was played, else the code that stopped the pass at that round.
    """
    R, K = E.shape
    p = np.empty(K)
    keys, taken = np.empty(K), np.empty(K, dtype=np.bool_)
    for r in range(R):
        t = t0 + r
        for j in range(K):
            if dense:
                p[j] = _dense_dot(X3[slab[j], t], W[j])
            else:
                row, off = t * row_stride + j * row_step, col_off[j]
                acc = 0.0
                for k in range(indptr[row], indptr[row + 1]):
                    acc += data[k] * w_flat[off + indices[k]]
                p[j] = acc
            margins[r, j] = p[j]
        _draw_round(p, E[r], inv_a, positive, uniform, b, n_queries, keys, taken, queried[r])
        for q in range(n_queries):
            j = queried[r, q]
            y = oracle_query(port, j, index0 + t)
            if y > 1:
                return y, r, j
            if y != 0:
                if y * p[j] > lam:
                    continue
                c = float(y)
            elif zero_mode == 0:
                return _ZERO_LABEL, r, j
            elif zero_mode == 1:
                continue
            elif zero_mode == 2:
                c = eta if p[j] >= 0 else -eta
                if c == 0.0:
                    continue
            else:
                c = float(signs[r])
                if c * p[j] > lam:
                    continue
            if dense:
                x, w = X3[slab[j], t], W[j]
                for i in range(w.size):
                    w[i] += c * x[i]
            else:
                row, off = t * row_stride + j * row_step, col_off[j]
                for k in range(indptr[row], indptr[row + 1]):  # canonical CSR: unique columns
                    w_flat[off + indices[k]] += c * data[k]
            n_updates[j] += 1
    return 0, R, -1


_NO_INT = np.zeros(1, dtype=np.int64)
_NO_FLOAT = np.zeros(1)
_NO_X3 = np.zeros((0, 0, 0))
_NO_W = np.zeros((0, 0))


def _kernel_layout(stream, W):
    """The arguments of :func:`_shampo_rounds` that describe inputs and weights.

    Returns the arguments and a function that copies the weights back into ``W`` when the
    kernel had to work on a copy (weights not laid out as the kernel reads them).
    """
    K = stream.n_tasks
    if stream.stacked is not None:
        dense_X, slab = stream.stacked, np.arange(K)
    elif stream.shared is not None and not sp.issparse(stream.shared):
        dense_X, slab = stream.shared[None], np.zeros(K, dtype=np.int64)
    else:
        dense_X = None
    if dense_X is not None:
        kernel_W = _as_kernel_array(W, dense_X.dtype)
        args = (True, dense_X, slab, kernel_W, _NO_INT, _NO_INT, _NO_FLOAT, 0, 0, _NO_INT, _NO_FLOAT)
        copied, offsets = kernel_W is not W, np.arange(K + 1) * kernel_W.shape[1]
        flat = kernel_W.reshape(-1)
    else:
        indptr, indices, data, row_stride, row_step, col_off = stream.csr_rounds()
        if stream.shared is not None:
            kernel_W = _as_kernel_array(W, np.float64)
            flat, copied = kernel_W.reshape(-1), kernel_W is not W
        else:
            flat = stream._flat_weights(W)
            copied = not (flat.dtype == np.float64 and np.shares_memory(flat, W[0]))
            flat = np.ascontiguousarray(flat, dtype=np.float64)
        offsets = np.concatenate([[0], np.cumsum(stream.n_features)])
        args = (False, _NO_X3, _NO_INT, _NO_W, indptr, indices, data, row_stride, row_step, col_off, flat)

    def write_back():
        if copied:
            for j in range(K):
                W[j][...] = flat[offsets[j]:offsets[j + 1]]
    return args, write_back


def _as_kernel_array(W, dtype):
    """``W`` itself when it is a C-contiguous (K, d) array of ``dtype``, else such a copy."""
    if isinstance(W, np.ndarray) and W.dtype == dtype and W.ndim == 2 and W.flags.c_contiguous:
        return W
    return np.ascontiguousarray(np.asarray(W), dtype=dtype)


def _shampo_pass(stream, W, oracle, rng, *, prior, b, lam, n_queries=1, index0=0,
                 block_size=4096, zero_feedback="error", eta=0.0, sign_rng=None,
                 margins_out=None, queried_out=None):
    """One pass of SHAMPO over ``stream``; updates ``W`` in place.

    Returns per-task update counts. Round ``t`` of the stream asks the oracle for index
    ``index0 + t``. ``zero_feedback`` says what a label 0 (the one-vs-one bandit's "neither")
    does: "error" (not allowed), "ignore" (no update), "weak" (w += eta * sign(p) x) or
    "random" (a random +-1 label drawn from ``sign_rng``, one per round).

    The rounds are played by one compiled loop (:func:`_shampo_rounds`), ``block_size``
    rounds per call, whose exponentials (K per round, in round order) are drawn together.
    """
    K, n = stream.n_tasks, stream.n_rounds
    rule = _DrawRule(prior, b)
    zero_mode = _ZERO_MODES[zero_feedback]
    layout, write_back = _kernel_layout(stream, W)
    port = oracle.port()
    n_updates = np.zeros(K, dtype=np.int64)
    B = max(1, int(block_size))
    margins = np.empty((min(B, n), K)) if margins_out is None else None
    queried = np.empty((min(B, n), n_queries), dtype=np.int64) if queried_out is None else None
    try:
        for start in range(0, n, B):
            stop = min(start + B, n)
            R = stop - start
            E = rng.standard_exponential((R, K))
            signs = (sign_rng.integers(0, 2, R) * 2 - 1) if zero_mode == 3 else _NO_INT
            status, r, j = _shampo_rounds(
                *layout, E, signs, rule.inv_a, rule.positive, rule.uniform, rule.b, float(lam),
                int(n_queries), zero_mode, float(eta), port, int(index0), start,
                margins[:R] if margins_out is None else margins_out[start:stop],
                queried[:R] if queried_out is None else queried_out[start:stop], n_updates)
            if status == _ZERO_LABEL:
                raise ValueError(f"the annotator returned label 0 for task {j}, round {start + r}; "
                                 "binary tasks need labels in {-1, +1}")
            if status:
                raise_query_status(status, j, index0 + start + r, oracle)
    finally:
        write_back()
    return n_updates


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
                 n_queries=1, prior_rounds=1000, scale="row", block_size=4096, dtype="float64",
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
        if record:
            self.train_margins_ = np.empty((n, K))
            self.queried_tasks_ = np.empty((n, q), dtype=np.int64)
        for t in range(n):
            p = np.array([self._margin(j, stream.Xs[j][t]) for j in range(K)])
            E = self._rng.standard_exponential((1, K))
            J = _choose_tasks(p[None, :], E, self.prior_, self.b_, q)[0]
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
