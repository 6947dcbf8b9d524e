"""The multi-task stream: K tasks' inputs, shown to an online learner in rounds.

A :class:`MultiTaskStream` holds inputs only: labels come from a
:class:`~medmtl.online.oracle.LabelOracle`, and the oracle index of an input is its row in
its task's matrix. A stream has one of two schedules, the two the papers use:

- **every task on every round** (SHAMPO, the bandit reductions): round ``t`` shows row ``t``
  of every task's matrix, so all tasks have as many rows as there are rounds. Built by
  ``MultiTaskStream(Xs)``, :meth:`MultiTaskStream.shared_input` (one input seen by every
  task) and :meth:`MultiTaskStream.from_tasks` (tasks of unequal sizes, aligned).
- **one example per round** (AMLC, PEER and their baselines): round ``t`` shows example
  ``order[t, 1]`` of task ``order[t, 0]``. Built by :meth:`MultiTaskStream.interleave`.

The online linear learners compare margins of different tasks, so their inputs live on
one scale: :func:`scale_to_unit_ball` puts every row in the unit ball. Sparse inputs stay
sparse throughout; nothing here densifies a scipy.sparse matrix.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from medmtl._validation import refuse_iterator
from medmtl.online._checks import input_matrix
from medmtl.online.rows import CsrRows, DenseRows
from medmtl.online.scaling import apply_max_scaling, max_scaling, row_norms, scale_to_unit_ball

__all__ = ["MultiTaskStream", "TaskRows", "row_norms", "scale_to_unit_ball", "max_scaling", "apply_max_scaling"]


class TaskRows(NamedTuple):
    """Where a compiled loop finds task ``j``'s input of round ``t``, and its weights.

    Parameters
    ----------
    rows : DenseRows or CsrRows
        Task ``j``'s input on round ``t`` is row ``t * row_stride + j * row_step``.
    row_stride, row_step : int
    col_off : ndarray of int64 of shape (n_tasks + 1,)
        Task ``j``'s weights are ``weights[col_off[j]:col_off[j + 1]]`` of one flat weight
        vector (all tasks' weight vectors end to end, as :meth:`MultiTaskStream.new_weights`
        lays them out).
    """

    rows: DenseRows | CsrRows
    row_stride: int
    row_step: int
    col_off: np.ndarray


def _check_task_list(Xs):
    refuse_iterator(Xs, "Xs")
    if isinstance(Xs, np.ndarray) or sp.issparse(Xs) or not hasattr(Xs, "__len__") or len(Xs) == 0:
        raise TypeError("Xs must be a non-empty list of per-task input matrices")


class MultiTaskStream:
    """The inputs of a multi-task stream: K tasks, shown in ``n_rounds`` rounds.

    The constructor builds a stream with every task on every round; see
    :meth:`interleave` for one example per round (the module notes describe both).

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
        The checked, scaled inputs of each task (copies; the caller's arrays are never
        modified).
    n_tasks, n_rounds : int
    n_features : list of int
        The input dimension of each task.
    order : ndarray of shape (n_rounds, 2) or None
        ``(task, index)`` of each round of a one-example-per-round stream; ``None`` when
        every task shows an input on every round.
    rows : ndarray or CSR matrix of shape (n_rounds, n_features) or None
        One-example-per-round streams: the inputs in round order.
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
    >>> task, index, x = stream.round(0)[0]
    >>> task, index, x
    (0, 0, array([0.6, 0.8]))
    """

    def __init__(self, Xs, scale="row", dtype=np.float64):
        if isinstance(Xs, MultiTaskStream):
            Xs = Xs.Xs
            scale = None
        dtype = np.dtype(dtype)
        if dtype not in (np.float64, np.float32):
            raise ValueError(f"dtype must be float64 or float32, got {dtype}")
        _check_task_list(Xs)
        if scale not in ("row", "max", None):
            raise ValueError(f"scale must be 'row', 'max' or None, got {scale!r}")
        checked = []
        for j, X in enumerate(Xs):
            X = input_matrix(X, name=f"Xs[{j}]")
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
        self.order = self.rows = None
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

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_rounds, n_features)
            The input of each round.
        n_tasks : int
            How many tasks see it.
        scale : {"row", "max"} or None, default="row"
            As for :class:`MultiTaskStream`.
        dtype : numpy dtype, default=numpy.float64
            As for :class:`MultiTaskStream`.

        Returns
        -------
        MultiTaskStream

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
        self.stacked = self.order = self.rows = None
        return self

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
        _check_task_list(Xs)
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

    @classmethod
    def interleave(cls, Xs, order=None, random_state=None):
        """A stream of one example per round: the tasks' examples in one sequence.

        Parameters
        ----------
        Xs : list of array-like or sparse matrix, Xs[k] of shape (n_k, n_features)
            Task ``k``'s examples. Every task must have the same number of features; all
            dense or all sparse. Used as given (not scaled); never modified.
        order : array-like of shape (n_rounds, 2), optional
            The rounds as ``(task, index)`` pairs. Default: every example once, in a random
            order drawn from ``random_state``.
        random_state : int, numpy.random.Generator or None
            Used only when ``order`` is None (one ``permutation`` of all the examples).

        Returns
        -------
        stream : MultiTaskStream
            With ``order`` and ``rows`` (the inputs in round order: a new array, or a
            canonical CSR matrix).

        Examples
        --------
        >>> s = MultiTaskStream.interleave([[[1.0, 0.0]], [[0.0, 1.0], [2.0, 2.0]]], order=[[1, 1], [0, 0]])
        >>> s.rows
        array([[2., 2.],
               [1., 0.]])
        >>> s.round(0)
        [(1, 1, array([2., 2.]))]
        """
        _check_task_list(Xs)
        mats = [input_matrix(X, name=f"Xs[{k}]") for k, X in enumerate(Xs)]
        if len({sp.issparse(X) for X in mats}) != 1:
            raise TypeError("Xs mixes dense and sparse tasks; pass all dense or all scipy.sparse")
        dims = {X.shape[1] for X in mats}
        if len(dims) != 1:
            raise ValueError(f"every task needs the same number of features; got {sorted(dims)}")
        sizes = np.array([X.shape[0] for X in mats])
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        if order is None:
            perm = np.random.default_rng(random_state).permutation(int(offsets[-1]))
            tasks = np.searchsorted(offsets, perm, side="right") - 1
            order = np.column_stack([tasks, perm - offsets[tasks]])
        else:
            order = _check_order(order, sizes)
        glob = offsets[order[:, 0]] + order[:, 1]
        if sp.issparse(mats[0]):
            rows = sp.vstack(mats, format="csr")[glob]
            rows.sum_duplicates()  # unique column indices per row, so updates by column are exact
        else:
            rows = np.vstack(mats)[glob]
        self = cls.__new__(cls)
        self.Xs, self.order, self.rows = mats, order, rows
        self.n_tasks, self.n_rounds = len(mats), order.shape[0]
        self.n_features = [rows.shape[1]] * len(mats)
        self.stacked = self.shared = None
        return self

    def __len__(self):
        return self.n_rounds

    def round(self, t):
        """What round ``t`` shows: a list of ``(task, index, x)``, one per input.

        Parameters
        ----------
        t : int

        Returns
        -------
        inputs : list of (int, int, ndarray or CSR matrix)
            ``x`` is a 1-D array or a 1-row CSR matrix; ``index`` is the oracle index of its
            label.
        """
        if self.order is not None:
            task, index = (int(v) for v in self.order[t])
            return [(task, index, self.rows[t])]
        return [(j, t, X[t]) for j, X in enumerate(self.Xs)]

    # ------------------------------------------------------------- every task on every round
    def _require_every_task(self, what):
        if self.order is not None:
            raise ValueError(f"{what} needs a stream with every task on every round; this one shows one "
                             "example per round")

    def compacted(self):
        """This stream with every sparse task restricted to the columns it uses.

        A perceptron-style weight vector only ever changes on columns some input of its task
        touches, so the margins can be computed in that smaller space, where the gathers hit
        a smaller weight buffer. Cached on the stream.

        Returns
        -------
        stream : MultiTaskStream
            Same rounds; sparse task ``j`` has ``len(columns[j])`` features.
        columns : list of ndarray or None
            ``columns[j]`` maps compact column -> original column (``None`` for tasks kept
            as they are).
        """
        self._require_every_task("compacted")
        if getattr(self, "_compact", None) is None:
            if self.shared is not None or not any(sp.issparse(X) for X in self.Xs):
                self._compact = (self, [None] * self.n_tasks)
            else:
                Xs, cols = [], []
                for X in self.Xs:
                    if not sp.issparse(X) or X.nnz == 0:  # a task without entries has no column to keep
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
        """Zero weight vectors, one per task, laid out as :meth:`task_rows` reads them.

        Returns an array of shape (n_tasks, n_features) when all tasks share one dimension,
        else a list of 1-D views into one flat buffer (all tasks' weights end to end).
        """
        self._require_every_task("new_weights")
        if len(set(self.n_features)) == 1:
            dense = [X for X in self.Xs if not sp.issparse(X)]
            dtype = dense[0].dtype if dense and all(not sp.issparse(X) for X in self.Xs) else np.float64
            return np.zeros((self.n_tasks, self.n_features[0]), dtype=dtype)
        flat = np.zeros(sum(self.n_features))
        offsets = np.concatenate([[0], np.cumsum(self.n_features)])
        return [flat[offsets[j]:offsets[j + 1]] for j in range(self.n_tasks)]

    def flat_weights(self, weights):
        """All tasks' weights end to end: the buffer behind :meth:`new_weights`, else a copy.

        Parameters
        ----------
        weights : ndarray of shape (n_tasks, n_features) or list of ndarray

        Returns
        -------
        flat : ndarray of shape (sum of n_features,)
        """
        if isinstance(weights, np.ndarray):
            return weights.reshape(-1)
        base = weights[0].base
        if (base is not None and base.ndim == 1 and base.size == sum(self.n_features)
                and all(w.base is base for w in weights)):
            return base
        return np.concatenate(weights)

    def _interleaved_csr(self):
        """All tasks in one CSR matrix, round after round: row t*K + j holds x_{j,t}."""
        if getattr(self, "_z", None) is None:
            K, n = self.n_tasks, self.n_rounds
            width = max(self.n_features)
            V = sp.vstack([sp.csr_matrix((X.data, X.indices, X.indptr), shape=(n, width))
                           for X in map(sp.csr_matrix, self.Xs)], format="csr")
            self._z = V[(np.arange(K)[None, :] * n + np.arange(n)[:, None]).ravel()]
        return self._z

    def task_rows(self):
        """The stream laid out for a compiled per-round loop (see :class:`TaskRows`).

        Dense tasks of one dimension are read from :attr:`stacked`, a shared input from
        :attr:`shared`; any other mix is one CSR matrix, round after round. Cached.

        Returns
        -------
        layout : TaskRows
        """
        self._require_every_task("task_rows")
        if getattr(self, "_task_rows", None) is None:
            K, n = self.n_tasks, self.n_rounds
            col_off = np.concatenate([[0], np.cumsum(self.n_features)]).astype(np.int64)
            if self.stacked is not None:
                rows = DenseRows(self.stacked.reshape(K * n, -1))
                layout = TaskRows(rows, 1, n, col_off)
            elif self.shared is not None:
                shared = self.shared
                rows = CsrRows(shared.indptr, shared.indices, shared.data) if sp.issparse(shared) \
                    else DenseRows(shared)
                layout = TaskRows(rows, 1, 0, col_off)
            else:
                Z = self._interleaved_csr()
                layout = TaskRows(CsrRows(Z.indptr, Z.indices, Z.data), K, 1, col_off)
            self._task_rows = layout
        return self._task_rows

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
        self._require_every_task("block_margins")
        if self.stacked is not None:
            W = np.asarray(weights)
            return np.matmul(self.stacked[:, start:stop], W[:, :, None])[:, :, 0].T
        if self.shared is not None:
            W = np.asarray(weights)
            return np.asarray(self.shared[start:stop] @ W.T)
        out = np.empty((stop - start, self.n_tasks))
        for j, X in enumerate(self.Xs):
            out[:, j] = X[start:stop] @ weights[j]
        return out


def _check_order(order, sizes):
    order = np.asarray(order)
    if order.ndim != 2 or order.shape[1] != 2 or order.dtype.kind not in "iu":
        raise ValueError(f"order must be an integer array of shape (n_rounds, 2); got {order.shape}, {order.dtype}")
    if order.shape[0] == 0:
        raise ValueError("order is empty; the stream needs at least one round")
    task, index = order[:, 0], order[:, 1]
    if task.min() < 0 or task.max() >= len(sizes):
        raise ValueError(f"order names tasks outside 0..{len(sizes) - 1}")
    if index.min() < 0 or np.any(index >= sizes[task]):
        raise ValueError("order names an example index beyond its task's size")
    return order.astype(np.int64)
