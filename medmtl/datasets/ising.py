"""Ising models for structure-estimation experiments: graphs, exact enumeration, Gibbs sampling.

An Ising model over ``D`` spins ``x in {-1, +1}^D`` has the distribution::

    p(x) = exp( sum_m eta_m x_m + sum_{m < n} theta_mn x_m x_n ) / Z

with a symmetric coupling matrix ``theta`` (zero diagonal) whose nonzero pattern is the
graph's edge set. Small models (up to about 20 nodes) are handled exactly by enumerating the
``2^D`` states; larger ones are sampled by Gibbs sampling, a systematic scan in which spin
``m`` is redrawn from ``p(x_m = +1 | rest) = sigmoid(2 (eta_m + sum_n theta_mn x_n))``.

The graph generators follow the experiments of Wainwright, Ravikumar and Lafferty (2007),
which JMLR 2011 Section 12 repeats: random graphs with a bounded degree and 4-nearest-neighbour
grids, with couplings of fixed size and random sign.

Examples
--------
>>> model = random_ising(cycle_graph(4), coupling=0.5, random_state=0)
>>> X = model.sample(2000, random_state=0)
>>> X.shape, sorted(np.unique(X).tolist())
((2000, 4), [-1, 1])
>>> means, pairs = model.moments()
>>> bool(np.max(np.abs(X.mean(axis=0) - means)) < 0.1)
True
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from numba import njit

__all__ = [
    "IsingModel",
    "random_ising",
    "random_graph",
    "grid_graph",
    "cycle_graph",
    "edge_list",
]

# Largest model enumerated exactly (2^20 states, 8 MB of probabilities).
MAX_EXACT_NODES = 20


def _check_random_state(random_state):
    return np.random.default_rng(random_state)


def _check_count(value, name, minimum=0):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _check_adjacency(adjacency):
    A = np.asarray(adjacency)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"adjacency must be a square matrix; got shape {A.shape}")
    A = A != 0
    if not np.array_equal(A, A.T):
        raise ValueError("adjacency must be symmetric")
    if np.any(np.diag(A)):
        raise ValueError("adjacency must have a zero diagonal (no self-loops)")
    return A


def edge_list(adjacency):
    """The undirected edges ``(m, n)`` with ``m < n`` of a symmetric adjacency matrix.

    Returns
    -------
    ndarray of shape (n_edges, 2)

    Examples
    --------
    >>> edge_list(cycle_graph(3)).tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    A = _check_adjacency(adjacency)
    m, n = np.nonzero(np.triu(A, 1))
    return np.column_stack([m, n]).astype(np.int64)


def cycle_graph(n_nodes):
    """The cycle ``0 - 1 - ... - (D - 1) - 0``, as a boolean adjacency matrix (D, D).

    Examples
    --------
    >>> cycle_graph(4).sum(axis=1).tolist()
    [2, 2, 2, 2]
    """
    D = _check_count(n_nodes, "n_nodes", 3)
    A = np.zeros((D, D), dtype=bool)
    i = np.arange(D)
    A[i, (i + 1) % D] = A[(i + 1) % D, i] = True
    return A


def grid_graph(n_rows, n_cols=None):
    """The 4-nearest-neighbour grid with ``n_rows x n_cols`` nodes (row-major numbering).

    Examples
    --------
    >>> A = grid_graph(2, 3)
    >>> A.shape, int(A.sum()) // 2
    ((6, 6), 7)
    """
    R = _check_count(n_rows, "n_rows", 1)
    Cc = R if n_cols is None else _check_count(n_cols, "n_cols", 1)
    D = R * Cc
    A = np.zeros((D, D), dtype=bool)
    idx = np.arange(D).reshape(R, Cc)
    for a, b in ((idx[:, :-1], idx[:, 1:]), (idx[:-1, :], idx[1:, :])):
        A[a.ravel(), b.ravel()] = A[b.ravel(), a.ravel()] = True
    return A


def random_graph(n_nodes, n_edges=None, max_degree=None, random_state=None):
    """A random graph with ``n_edges`` edges and no node above ``max_degree``.

    Edges are drawn uniformly one at a time among the node pairs whose two ends both still
    have room, until ``n_edges`` are placed (or no admissible pair is left).

    Parameters
    ----------
    n_nodes : int
    n_edges : int, optional
        Default: ``n_nodes`` (an average degree of 2).
    max_degree : int, optional
        Default: no bound.
    random_state : int, Generator or None

    Returns
    -------
    ndarray of bool, shape (n_nodes, n_nodes)

    Examples
    --------
    >>> A = random_graph(10, n_edges=12, max_degree=3, random_state=0)
    >>> int(A.sum()) // 2, int(A.sum(axis=1).max()) <= 3
    (12, True)
    """
    D = _check_count(n_nodes, "n_nodes", 2)
    E = D if n_edges is None else _check_count(n_edges, "n_edges")
    if E > D * (D - 1) // 2:
        raise ValueError(f"n_edges={E} exceeds the {D * (D - 1) // 2} pairs of {D} nodes")
    cap = D - 1 if max_degree is None else _check_count(max_degree, "max_degree", 1)
    rng = _check_random_state(random_state)
    A = np.zeros((D, D), dtype=bool)
    degree = np.zeros(D, dtype=np.int64)
    iu, ju = np.triu_indices(D, 1)
    for _ in range(E):
        room = (degree[iu] < cap) & (degree[ju] < cap) & ~A[iu, ju]
        candidates = np.flatnonzero(room)
        if candidates.size == 0:
            break
        k = candidates[rng.integers(candidates.size)]
        i, j = iu[k], ju[k]
        A[i, j] = A[j, i] = True
        degree[i] += 1
        degree[j] += 1
    return A


def random_ising(adjacency, coupling=0.5, mixed=True, field=0.0, random_state=None):
    """An Ising model on a graph with couplings ``+-coupling`` on its edges.

    Parameters
    ----------
    adjacency : array-like of shape (D, D)
        Symmetric, zero diagonal; nonzero entries are edges.
    coupling : float, default=0.5
        Size of every edge's coupling ``|theta_mn|``.
    mixed : bool, default=True
        Random signs (each edge attractive or repulsive with probability 1/2, the "mixed"
        models of Wainwright et al.); ``False`` makes every coupling positive.
    field : float, default=0
        The spins' external fields ``eta_m``, drawn uniformly from ``[-field, field]``.
    random_state : int, Generator or None

    Returns
    -------
    IsingModel

    Examples
    --------
    >>> model = random_ising(grid_graph(2), coupling=0.3, mixed=False)
    >>> float(model.theta[0, 1]), model.n_nodes
    (0.3, 4)
    """
    A = _check_adjacency(adjacency)
    if not (isinstance(coupling, numbers.Real) and np.isfinite(coupling) and coupling > 0):
        raise ValueError(f"coupling must be a positive finite number; got {coupling!r}")
    if not (isinstance(field, numbers.Real) and np.isfinite(field) and field >= 0):
        raise ValueError(f"field must be a finite number >= 0; got {field!r}")
    rng = _check_random_state(random_state)
    D = A.shape[0]
    upper = np.triu(A, 1)
    signs = np.where(rng.random((D, D)) < 0.5, -1.0, 1.0) if mixed else np.ones((D, D))
    theta = np.where(upper, float(coupling) * signs, 0.0)
    theta = theta + theta.T
    eta = rng.uniform(-field, field, size=D) if field > 0 else np.zeros(D)
    return IsingModel(theta, eta)


class IsingModel:
    """An Ising model ``p(x) ~ exp(eta^T x + sum_{m<n} theta_mn x_m x_n)`` on ``x in {-1, +1}^D``.

    Parameters
    ----------
    theta : array-like of shape (D, D)
        Symmetric couplings with a zero diagonal; the graph is its nonzero pattern.
    eta : array-like of shape (D,), optional
        External fields (default zero).

    Attributes
    ----------
    theta : ndarray of shape (D, D)
    eta : ndarray of shape (D,)
    adjacency : ndarray of bool, shape (D, D)
    n_nodes : int

    Examples
    --------
    Two spins coupled by ``theta``: ``E[x_0 x_1] = tanh(theta)``.

    >>> model = IsingModel([[0.0, 0.7], [0.7, 0.0]])
    >>> _, pairs = model.moments()
    >>> bool(np.isclose(pairs[0, 1], np.tanh(0.7)))
    True
    """

    def __init__(self, theta, eta=None):
        theta = np.array(theta, dtype=float)
        if theta.ndim != 2 or theta.shape[0] != theta.shape[1] or theta.shape[0] < 1:
            raise ValueError(f"theta must be a square matrix; got shape {theta.shape}")
        if not np.all(np.isfinite(theta)):
            raise ValueError("theta has NaN or infinite entries")
        if not np.array_equal(theta, theta.T):
            raise ValueError("theta must be symmetric")
        if np.any(np.diag(theta) != 0):
            raise ValueError("theta must have a zero diagonal")
        D = theta.shape[0]
        eta = np.zeros(D) if eta is None else np.array(eta, dtype=float).ravel()
        if eta.shape != (D,) or not np.all(np.isfinite(eta)):
            raise ValueError(f"eta must hold {D} finite values")
        self.theta = theta
        self.eta = eta

    @property
    def n_nodes(self):
        return self.theta.shape[0]

    @property
    def adjacency(self):
        return self.theta != 0

    def energy(self, X):
        """``eta^T x + sum_{m<n} theta_mn x_m x_n`` per row of ``X`` (n, D): the log of the
        unnormalised probability."""
        X = np.asarray(X, dtype=float)
        return X @ self.eta + 0.5 * np.einsum("ij,jk,ik->i", X, self.theta, X)

    def states(self):
        """Every state and its exact probability (enumeration; at most 20 nodes).

        Returns
        -------
        states : ndarray of int8, shape (2^D, D)
        probabilities : ndarray of shape (2^D,)
        """
        D = self.n_nodes
        if D > MAX_EXACT_NODES:
            raise ValueError(f"exact enumeration is limited to {MAX_EXACT_NODES} nodes; "
                             f"this model has {D} (use Gibbs sampling)")
        codes = np.arange(2**D, dtype=np.int64)
        bits = (codes[:, None] >> np.arange(D)[None, :]) & 1
        S = (2 * bits - 1).astype(np.int8)
        e = self.energy(S)
        p = np.exp(e - e.max())
        return S, p / p.sum()

    def moments(self, X=None):
        """Node means ``E[x_m]`` and pair moments ``E[x_m x_n]``.

        Exact (by enumeration) when ``X`` is None, else the sample moments of ``X``.

        Returns
        -------
        means : ndarray of shape (D,)
        pairs : ndarray of shape (D, D)
        """
        if X is None:
            S, p = self.states()
            S = S.astype(float)
            return p @ S, (S * p[:, None]).T @ S
        X = np.asarray(X, dtype=float)
        return X.mean(axis=0), X.T @ X / X.shape[0]

    def sample(self, n_samples, method="auto", burn_in=None, thin=None, random_state=None):
        """Draw independent (``"exact"``) or Gibbs (``"gibbs"``) samples.

        Parameters
        ----------
        n_samples : int
        method : {"auto", "exact", "gibbs"}, default="auto"
            ``"auto"``: exact up to 12 nodes, Gibbs above.
        burn_in : int, optional
            Gibbs sweeps discarded first (default ``max(1000, 10 D)``).
        thin : int, optional
            Gibbs sweeps between kept samples (default 10).
        random_state : int, Generator or None

        Returns
        -------
        ndarray of int8, shape (n_samples, D), entries in {-1, +1}
        """
        n = _check_count(n_samples, "n_samples", 1)
        if method not in ("auto", "exact", "gibbs"):
            raise ValueError(f"method must be 'auto', 'exact' or 'gibbs'; got {method!r}")
        rng = _check_random_state(random_state)
        D = self.n_nodes
        if method == "exact" or (method == "auto" and D <= 12):
            S, p = self.states()
            return S[rng.choice(S.shape[0], size=n, p=p)]
        burn_in = max(1000, 10 * D) if burn_in is None else _check_count(burn_in, "burn_in")
        thin = 10 if thin is None else _check_count(thin, "thin", 1)
        T = sp.csr_matrix(self.theta)
        x = np.where(rng.random(D) < 0.5, -1, 1).astype(np.int8)
        out = np.empty((n, D), dtype=np.int8)
        # uniforms drawn in blocks: memory stays bounded for long chains
        block = max(1, (1 << 20) // max(D, 1))
        todo = [(burn_in, None)] + [(thin, k) for k in range(n)]
        pending = 0
        for sweeps, keep in todo:
            pending += sweeps
            if keep is None:
                continue
            while pending > 0:
                step = min(pending, block)
                _gibbs_sweeps(T.indptr, T.indices, T.data, self.eta, x, rng.random((step, D)))
                pending -= step
            out[keep] = x
        return out


@njit(cache=True, nogil=True)
def _gibbs_sweeps(indptr, indices, data, eta, x, uniforms):
    """Systematic-scan Gibbs sweeps over the spins ``x`` (updated in place), one sweep per row
    of ``uniforms``: spin ``m`` becomes +1 with probability ``sigmoid(2 (eta_m + theta_m . x))``."""
    D = x.size
    for s in range(uniforms.shape[0]):
        for m in range(D):
            field = eta[m]
            for k in range(indptr[m], indptr[m + 1]):
                field += data[k] * x[indices[k]]
            p_up = 1.0 / (1.0 + np.exp(-2.0 * field))
            x[m] = 1 if uniforms[s, m] < p_up else -1
