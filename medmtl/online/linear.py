"""Primitives shared by the online linear learners (SHAMPO, the bandit reductions, AMLC).

The online learners keep one weight vector per task and, per round, need three things:
margins ``w . x`` of a few rows, a rank-one update ``w += c * x`` of one weight vector, and
the inputs scaled into the unit ball (the margins of different tasks are compared with one
another, so they must live on one scale). Each primitive works on a dense ndarray or a
scipy.sparse CSR matrix and never densifies a sparse row: sparse rows are read through
their ``data``/``indices`` slices only.

:class:`MultiTaskStream` holds the inputs of a multi-task stream: K tasks, possibly with
different input dimensions, and ``n_rounds`` rounds of K inputs (row ``t`` of every task's
matrix is that task's input on round ``t``). It holds no labels: labels come only from a
:class:`~medmtl.online.oracle.LabelOracle`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from medmtl._validation import check_matrix

try:  # scipy's own CSR mat-vec kernel; ten times faster than numpy gathers on short blocks
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:  # pragma: no cover - private module moved; fall back to numpy
    _csr_matvec = None

__all__ = [
    "scale_to_unit_ball",
    "row_norms",
    "row_dot",
    "rows_dot",
    "add_row",
    "rows_gram",
    "MultiTaskStream",
]


def row_norms(X):
    """Euclidean norm of every row of a dense or CSR matrix.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_rows, n_features)

    Returns
    -------
    norms : ndarray of shape (n_rows,)

    Examples
    --------
    >>> row_norms(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([5., 0.])
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        sq = np.bincount(_row_ids(X.indptr, 0, X.shape[0]), weights=X.data ** 2, minlength=X.shape[0])
        return np.sqrt(sq)
    return np.sqrt(np.einsum("ij,ij->i", X, X))


def scale_to_unit_ball(X, method="row"):
    """Return a scaled copy of ``X`` whose rows lie in the unit ball.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_rows, n_features)
        Finite values; sparse input is returned as CSR and stays sparse.
    method : {"row", "max"}, default="row"
        ``"row"`` divides every non-zero row by its own norm (all inputs on the unit sphere,
        so ``X = max ||x|| = 1`` in the SHAMPO bound); ``"max"`` divides the whole matrix by
        its largest row norm (keeps the relative norms).

    Returns
    -------
    X_scaled : ndarray or CSR matrix of shape (n_rows, n_features)
        A new object; the input is never modified.

    Examples
    --------
    >>> scale_to_unit_ball([[3.0, 4.0], [0.0, 1.0]])
    array([[0.6, 0.8],
           [0. , 1. ]])
    >>> scale_to_unit_ball([[3.0, 4.0], [0.0, 1.0]], method="max")
    array([[0.6, 0.8],
           [0. , 0.2]])
    """
    if method not in ("row", "max"):
        raise ValueError(f"method must be 'row' or 'max', got {method!r}")
    X = check_matrix(X)
    norms = row_norms(X)
    if method == "max":
        top = norms.max()
        factors = np.full_like(norms, 1.0 / top if top > 0 else 1.0)
    else:
        # Zero rows stay zero rather than becoming NaN.
        factors = np.divide(1.0, norms, out=np.ones_like(norms), where=norms > 0)
    if sp.issparse(X):
        X = X.copy()
        X.sum_duplicates()  # rank-one updates index by column: one entry per column
        X.data = X.data * np.repeat(factors, np.diff(X.indptr))
        return X
    return X * factors[:, None]


def _csr_rows_matvec(indptr, indices, data, start, stop, n_cols, w):
    """``M[start:stop] @ w`` for a CSR matrix given by its three arrays."""
    ps, pe = indptr[start], indptr[stop]
    if _csr_matvec is not None:
        out = np.zeros(stop - start)
        local = (indptr[start:stop + 1] - ps).astype(indices.dtype, copy=False)
        _csr_matvec(stop - start, n_cols, local, indices[ps:pe], data[ps:pe],
                    np.ascontiguousarray(w, dtype=np.float64), out)
        return out
    prod = data[ps:pe] * w[indices[ps:pe]]
    return np.bincount(_row_ids(indptr, start, stop), weights=prod, minlength=stop - start)


def _row_ids(indptr, start, stop):
    """Block-local row number of every stored entry of rows ``start:stop`` of a CSR matrix."""
    return np.repeat(np.arange(stop - start), np.diff(indptr[start:stop + 1]))


def row_dot(X, i, w):
    """``X[i] . w`` for one row of a dense or CSR matrix.

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 1.0]]))
    >>> row_dot(X, 1, np.array([1.0, 5.0, 2.0]))
    3.0
    """
    if sp.issparse(X):
        s, e = X.indptr[i], X.indptr[i + 1]
        return float(X.data[s:e] @ w[X.indices[s:e]])
    return float(X[i] @ w)


def rows_dot(X, start, stop, w):
    """Margins ``X[start:stop] @ w`` of a contiguous block of rows, without densifying.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_rows, n_features)
    start, stop : int
        The block of rows ``start:stop``.
    w : ndarray of shape (n_features,)

    Returns
    -------
    margins : ndarray of shape (stop - start,)

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[0.0, 2.0], [0.0, 0.0], [1.0, 1.0]]))
    >>> rows_dot(X, 0, 3, np.array([1.0, 3.0]))
    array([6., 0., 4.])
    """
    if sp.issparse(X):
        return _csr_rows_matvec(X.indptr, X.indices, X.data, start, stop, X.shape[1], w)
    return X[start:stop] @ w


def rows_gram(X, start, stop, i):
    """Inner products ``X[start:stop] @ X[i]`` of a block of rows with row ``i``.

    Used to refresh the margins of a block after the rank-one update ``w += c X[i]``.

    Examples
    --------
    >>> rows_gram(np.array([[1.0, 0.0], [1.0, 2.0]]), 0, 2, 1)
    array([1., 5.])
    """
    if sp.issparse(X):
        s, e = X.indptr[i], X.indptr[i + 1]
        # Scatter row i into a dense scratch only over its own support.
        scratch = np.zeros(X.shape[1])
        scratch[X.indices[s:e]] = X.data[s:e]
        return rows_dot(X, start, stop, scratch)
    return X[start:stop] @ X[i]


def add_row(w, X, i, scale):
    """In place ``w += scale * X[i]`` (a rank-one update touching only the row's support).

    Examples
    --------
    >>> w = np.zeros(3)
    >>> add_row(w, sp.csr_matrix(np.array([[0.0, 2.0, 0.0]])), 0, 0.5)
    >>> w
    array([0., 1., 0.])
    """
    if sp.issparse(X):
        s, e = X.indptr[i], X.indptr[i + 1]
        # CSR column indices within a row are unique, so fancy-index addition is exact.
        w[X.indices[s:e]] += scale * X.data[s:e]
    else:
        w += scale * X[i]


class MultiTaskStream:
    """The inputs of a multi-task stream: K tasks, ``n_rounds`` rounds of K inputs.

    Parameters
    ----------
    Xs : list of array-like or sparse matrix, each of shape (n_rounds, n_features_j)
        Task ``j``'s inputs, one row per round. The tasks may differ in dimension but must
        have the same number of rows; a ragged list raises ``ValueError``.
    scale : {"row", "max", None}, default="row"
        How inputs are scaled into the unit ball (see :func:`scale_to_unit_ball`); ``None``
        only checks that every input already has norm <= 1 (up to rounding).
    dtype : {float64, float32}, default=float64
        Storage of dense inputs (and of the weights that go with them). float32 halves the
        memory traffic of the margins, the bottleneck of a dense pass; sparse inputs stay
        float64.

    Attributes
    ----------
    Xs : list of ndarray or CSR matrix
        The checked, scaled inputs (copies; the caller's arrays are never modified).
    n_tasks, n_rounds : int
    n_features : list of int
        The input dimension of each task.
    stacked : ndarray of shape (n_tasks, n_rounds, n_features) or None
        The inputs as one 3-D array when every task is dense with one dimension (margins of
        a block of rounds are then one batched product); else ``None``.
    shared : ndarray or CSR matrix or None
        Set by :meth:`shared_input`: one input matrix seen by every task (the multiclass
        reductions), stored once.

    Examples
    --------
    >>> stream = MultiTaskStream([[[3.0, 4.0], [1.0, 0.0]], sp.csr_matrix([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0]])])
    >>> stream.n_tasks, stream.n_rounds, stream.n_features
    (2, 2, [2, 3])
    >>> stream.round(0)[0]
    array([0.6, 0.8])
    """

    def __init__(self, Xs, scale="row", dtype=np.float64):
        if isinstance(Xs, MultiTaskStream):
            Xs = Xs.Xs
            scale = None
        dtype = np.dtype(dtype)
        if dtype not in (np.float64, np.float32):
            raise ValueError(f"dtype must be float64 or float32, got {dtype}")
        if isinstance(Xs, np.ndarray) or sp.issparse(Xs) or not hasattr(Xs, "__len__") or len(Xs) == 0:
            raise TypeError("Xs must be a non-empty list of per-task input matrices")
        if scale not in ("row", "max", None):
            raise ValueError(f"scale must be 'row', 'max' or None, got {scale!r}")
        checked = []
        for j, X in enumerate(Xs):
            X = check_matrix(X, name=f"Xs[{j}]")
            if scale is not None:
                X = scale_to_unit_ball(X, method=scale)
            else:
                if sp.issparse(X) and not X.has_canonical_format:
                    X = X.copy()
                    X.sum_duplicates()
                if np.any(row_norms(X) > 1 + 1e-6):
                    raise ValueError(f"Xs[{j}] has rows outside the unit ball; pass scale='row' or 'max'")
            if not sp.issparse(X):
                X = X.astype(dtype, copy=False)
            checked.append(X)
        lengths = [X.shape[0] for X in checked]
        if len(set(lengths)) != 1:
            raise ValueError(f"ragged rounds: every task needs one input per round, got row counts {lengths}")
        self.Xs = checked
        self.n_tasks = len(checked)
        self.n_rounds = lengths[0]
        self.n_features = [X.shape[1] for X in checked]
        dense_same = all(not sp.issparse(X) for X in checked) and len(set(self.n_features)) == 1
        self.stacked = np.stack(checked) if dense_same else None
        self.shared = None
        if self.stacked is not None:
            self.Xs = list(self.stacked)  # views into one block, no second copy

    @classmethod
    def shared_input(cls, X, n_tasks, scale="row", dtype=np.float64):
        """A stream whose ``n_tasks`` tasks all see the same input on each round.

        The multiclass reductions use it: every binary problem reads ``x_t``. The matrix is
        stored once and a block's margins are one product ``X[block] @ W.T``.

        Examples
        --------
        >>> s = MultiTaskStream.shared_input(np.eye(3), n_tasks=4)
        >>> s.n_tasks, s.n_rounds, s.block_margins(np.ones((4, 3)), 0, 2).shape
        (4, 3, (2, 4))
        """
        n_tasks = int(n_tasks)
        if n_tasks < 1:
            raise ValueError(f"n_tasks must be >= 1, got {n_tasks}")
        single = cls([X], scale=scale, dtype=dtype)
        self = cls.__new__(cls)
        self.shared = single.Xs[0]
        self.Xs = [self.shared] * n_tasks
        self.n_tasks, self.n_rounds = n_tasks, single.n_rounds
        self.n_features = [self.shared.shape[1]] * n_tasks
        self.stacked = None
        return self

    def __len__(self):
        return self.n_rounds

    def round(self, t):
        """The K inputs of round ``t`` (1-D arrays, or 1-row CSR matrices)."""
        return [X[t] for X in self.Xs]

    def compacted(self):
        """This stream with every sparse task restricted to the columns it uses.

        A perceptron-style weight vector only ever changes on columns some input of its task
        touches, so the margins can be computed in that smaller space: the gathers then hit
        a weight buffer that fits in cache (15 spam users x 152,543 columns is 18 MB; the
        columns they use are a tenth of that). Cached on the stream.

        Returns
        -------
        stream : MultiTaskStream
            Same rounds; sparse task ``j`` has ``len(columns[j])`` features.
        columns : list of ndarray or None
            ``columns[j]`` maps compact column -> original column (``None`` for tasks kept
            as they are).
        """
        if getattr(self, "_compact", None) is None:
            if self.shared is not None or not any(sp.issparse(X) for X in self.Xs):
                self._compact = (self, [None] * self.n_tasks)
            else:
                Xs, cols = [], []
                for X in self.Xs:
                    if not sp.issparse(X):
                        Xs.append(X)
                        cols.append(None)
                        continue
                    used = np.unique(X.indices)
                    remap = np.searchsorted(used, X.indices)
                    Xs.append(sp.csr_matrix((X.data, remap, X.indptr), shape=(X.shape[0], used.size)))
                    cols.append(used)
                self._compact = (MultiTaskStream(Xs, scale=None), cols)
        return self._compact

    def new_weights(self):
        """Zero weight vectors, one per task, laid out for :meth:`block_margins`.

        Returns an array of shape (n_tasks, n_features) when all tasks share one dimension,
        else a list of 1-D views into one flat buffer (so the margins of a block of rounds
        of all tasks are one gather).
        """
        if len(set(self.n_features)) == 1:
            dense = [X for X in self.Xs if not sp.issparse(X)]
            dtype = dense[0].dtype if dense and all(not sp.issparse(X) for X in self.Xs) else np.float64
            return np.zeros((self.n_tasks, self.n_features[0]), dtype=dtype)
        flat = np.zeros(sum(self.n_features))
        offsets = np.concatenate([[0], np.cumsum(self.n_features)])
        return [flat[offsets[j]:offsets[j + 1]] for j in range(self.n_tasks)]

    def _flat_weights(self, weights):
        if isinstance(weights, np.ndarray):
            return weights.reshape(-1)
        base = weights[0].base
        if (base is not None and base.ndim == 1 and base.size == sum(self.n_features)
                and all(w.base is base for w in weights)):
            return base
        return np.concatenate(weights)

    def _interleave(self):
        """All tasks in one CSR matrix: row t*K + j holds x_{j,t} at task j's column offset."""
        K, n = self.n_tasks, self.n_rounds
        offsets = np.concatenate([[0], np.cumsum(self.n_features)])
        parts = []
        for j, X in enumerate(self.Xs):
            X = sp.csr_matrix(X)
            parts.append(sp.csr_matrix((X.data, X.indices + offsets[j], X.indptr), shape=(n, offsets[-1])))
        V = sp.vstack(parts, format="csr")
        perm = (np.arange(K)[None, :] * n + np.arange(n)[:, None]).ravel()
        Z = V[perm]
        self._z = Z

    def csr_rounds(self):
        """The stream as one CSR matrix, laid out for a compiled per-round loop (cached).

        Returns
        -------
        indptr, indices : ndarray of int64
        data : ndarray of float64
        row_stride, row_step : int
            Task ``j``'s input on round ``t`` is row ``t * row_stride + j * row_step``.
        col_off : ndarray of int64 of shape (n_tasks,)
            Task ``j``'s columns, shifted by ``col_off[j]``, index the flat weights of
            :meth:`new_weights` (all tasks' weight vectors end to end).
        """
        if getattr(self, "_csr", None) is None:
            K = self.n_tasks
            if self.shared is not None:
                X = sp.csr_matrix(self.shared)
                row_stride, row_step, col_off = 1, 0, np.arange(K) * X.shape[1]
            else:
                if getattr(self, "_z", None) is None:
                    self._interleave()
                X = self._z
                row_stride, row_step, col_off = K, 1, np.zeros(K)
            self._csr = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64),
                         row_stride, row_step, col_off.astype(np.int64))
        return self._csr

    def block_margins(self, weights, start, stop):
        """Margins of rounds ``start:stop`` of every task under ``weights``.

        Parameters
        ----------
        weights : ndarray of shape (n_tasks, n_features) or list of ndarray
            As made by :meth:`new_weights` (any list of per-task vectors works, slower).
        start, stop : int

        Returns
        -------
        margins : ndarray of shape (stop - start, n_tasks)
        """
        if self.stacked is not None:
            W = np.asarray(weights)
            return np.matmul(self.stacked[:, start:stop], W[:, :, None])[:, :, 0].T
        if self.shared is not None:
            W = np.asarray(weights)
            return np.asarray(self.shared[start:stop] @ W.T)
        if not any(sp.issparse(X) for X in self.Xs):
            out = np.empty((stop - start, self.n_tasks))
            for j, X in enumerate(self.Xs):
                out[:, j] = X[start:stop] @ weights[j]
            return out
        if getattr(self, "_z", None) is None:
            self._interleave()
        K, Z = self.n_tasks, self._z
        sums = _csr_rows_matvec(Z.indptr, Z.indices, Z.data, start * K, stop * K, Z.shape[1],
                                self._flat_weights(weights))
        return sums.reshape(stop - start, K)

    @classmethod
    def from_tasks(cls, Xs, n_rounds=None, align="cycle", scale="row", random_state=None):
        """Build a stream from tasks of unequal sizes, and return it with the row orders.

        Parameters
        ----------
        Xs : list of array-like or sparse matrix
            Per-task inputs; the tasks may have different numbers of rows.
        n_rounds : int, optional
            Rounds of the stream. Default: the largest task (``align="cycle"``) or the
            smallest (``align="truncate"``).
        align : {"cycle", "truncate"}, default="cycle"
            ``"cycle"`` walks through a random permutation of each task's rows and starts a
            fresh permutation when a task runs out; ``"truncate"`` uses the first
            ``n_rounds`` rows of one random permutation.
        scale : {"row", "max", None}, default="row"
        random_state : int, Generator or None

        Returns
        -------
        stream : MultiTaskStream
        orders : list of ndarray of shape (n_rounds,)
            ``orders[j][t]`` is the row of ``Xs[j]`` shown on round ``t``: index task ``j``'s
            labels with it to build the matching :class:`LabelOracle`.

        Examples
        --------
        >>> stream, orders = MultiTaskStream.from_tasks([np.eye(2), np.eye(3)], random_state=0)
        >>> stream.n_rounds, [len(o) for o in orders]
        (3, [3, 3])
        """
        if align not in ("cycle", "truncate"):
            raise ValueError(f"align must be 'cycle' or 'truncate', got {align!r}")
        rng = np.random.default_rng(random_state)
        sizes = [np.shape(X)[0] for X in Xs]
        if n_rounds is None:
            n_rounds = max(sizes) if align == "cycle" else min(sizes)
        if align == "truncate" and n_rounds > min(sizes):
            raise ValueError(f"n_rounds={n_rounds} exceeds the smallest task ({min(sizes)} rows)")
        orders = []
        for n in sizes:
            parts = [rng.permutation(n) for _ in range(-(-n_rounds // n))]
            orders.append(np.concatenate(parts)[:n_rounds])
        picked = [X[o] if sp.issparse(X) else np.asarray(X)[o] for X, o in zip(Xs, orders)]
        return cls(picked, scale=scale), orders
