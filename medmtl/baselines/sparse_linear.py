"""Sparse linear baselines: l1 / MCP logistic regression and the multi-task group lasso.

- :func:`l1_logistic_regression`: scikit-learn's liblinear, spelt for the installed version;
- :func:`sparse_logistic_fit`: skglm's logistic regression with an l1 or MCP penalty;
- :func:`group_design` and :func:`group_lasso_fit`: the multi-task group lasso with the
  squared loss on the block-diagonal design of the tasks (skglm's ``GroupBCD``).

skglm's coordinate solvers extrapolate their iterates (Anderson acceleration), which on an
ill-conditioned problem can overflow to non-finite weights. A fit that does so is solved
again from a cold start by a method without extrapolation: skglm's ``ProxNewton`` for the
logistic models, and proximal gradient with Nesterov momentum (:func:`group_lasso_fista`)
for the group lasso. No other library's state is touched.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np
import scipy.sparse as sp

__all__ = ["l1_logistic_regression", "skglm_tol", "logistic_alpha_max", "sparse_logistic_fit", "group_design",
           "group_lasso_fit", "group_lasso_fista", "INTERCEPT_WEIGHT"]

# The group lasso's penalty weight on the tasks' intercept groups: unpenalised in effect, not
# exactly (weight 0), since skglm's block soft-thresholding divides 0 by 0 at a zero threshold
# and a zero group.
INTERCEPT_WEIGHT = 1e-10


@functools.lru_cache(maxsize=1)
def _l1_spelling():
    """How the installed scikit-learn asks for a pure l1 penalty: 1.8 deprecated
    ``penalty="l1"`` for ``l1_ratio=1``, and before 1.8 ``l1_ratio`` alone is ignored (the
    default ``penalty="l2"`` applies), so neither spelling works on every supported version."""
    from sklearn.linear_model import LogisticRegression

    if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated":
        return {"l1_ratio": 1.0}
    return {"penalty": "l1"}


def l1_logistic_regression(C, **params):
    """scikit-learn's l1-penalised logistic regression solved by liblinear, spelt for the
    installed version.

    Parameters
    ----------
    C : float
        Inverse of the l1 penalty.
    **params
        Further :class:`~sklearn.linear_model.LogisticRegression` parameters
        (``random_state``, ``max_iter``, ...).

    Returns
    -------
    sklearn.linear_model.LogisticRegression
        Unfitted.

    Examples
    --------
    >>> model = l1_logistic_regression(1.0, random_state=0)
    >>> model.solver, model.C
    ('liblinear', 1.0)
    """
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(solver="liblinear", C=C, **_l1_spelling(), **params)


def skglm_tol(alpha):
    """skglm's stopping tolerance for penalty level ``alpha``.

    1e-6 on the optimality violation (in the units of ``alpha``), or 1 % of ``alpha`` where
    that is smaller, so that the fits at the smallest penalties are converged too.

    Parameters
    ----------
    alpha : float
        The penalty level.

    Returns
    -------
    float

    Examples
    --------
    >>> skglm_tol(1.0), skglm_tol(1e-6)
    (1e-06, 1e-08)
    """
    return min(1e-6, 1e-2 * alpha)


def logistic_alpha_max(X, y):
    """The smallest l1 weight of skglm's logistic loss at which all weights are zero.

    The intercept is fitted: this is the largest gradient entry at the intercept-only fit.

    Parameters
    ----------
    X : array or sparse matrix of shape (n_samples, n_features)
    y : array of shape (n_samples,)
        Labels ±1.

    Returns
    -------
    float
    """
    y = np.asarray(y, float)
    p = (y > 0).mean()
    residual = (y > 0) - p              # minus the gradient of the mean log-loss in Xw, per row
    return float(np.abs(X.T @ residual).max() / len(y))


def sparse_logistic_fit(X, y, alpha, penalty="l1", gamma=None, w_init=None, max_iter=200):
    """Logistic regression with an l1 or MCP penalty, by skglm's ``AndersonCD``.

    Parameters
    ----------
    X : scipy.sparse.csc_matrix of shape (n_samples, n_features)
    y : array of shape (n_samples,)
        Labels ±1.
    alpha : float
        The penalty level.
    penalty : {"l1", "mcp"}, default="l1"
    gamma : float, optional
        MCP's concavity parameter (``penalty="mcp"`` only).
    w_init : array of shape (n_features + 1,), optional
        A warm start: weights, then the intercept.
    max_iter : int, default=200
        skglm's outer iterations.

    Returns
    -------
    ndarray of shape (n_features + 1,)
        The weights, then the intercept.

    Raises
    ------
    FloatingPointError
        The fit without extrapolation is not finite either.
    """
    from skglm.datafits import Logistic
    from skglm.penalties import L1, MCPenalty
    from skglm.solvers import AndersonCD, ProxNewton

    y = np.asarray(y, float)
    pen = L1(alpha) if penalty == "l1" else MCPenalty(alpha, gamma)
    solver = AndersonCD(fit_intercept=True, tol=skglm_tol(alpha), max_iter=max_iter, warm_start=w_init is not None)
    # a warm start needs the predictions of its weights too (skglm takes Xw = 0 otherwise)
    Xw0 = None if w_init is None else np.asarray(X @ w_init[:-1]).ravel() + w_init[-1]
    w = solver.solve(X, y, Logistic(), pen, w_init=None if w_init is None else w_init.copy(), Xw_init=Xw0)[0].copy()
    if not np.all(np.isfinite(w)):
        w = ProxNewton(fit_intercept=True, tol=skglm_tol(alpha)).solve(X, y, Logistic(), pen)[0].copy()
        if not np.all(np.isfinite(w)):
            raise FloatingPointError(f"skglm's {penalty} logistic regression diverged at alpha {alpha:.3g}")
    return w


def group_design(Xs, features):
    """The tasks' block-diagonal design over ``features``, one intercept column per task, and
    its groups.

    Column ``k * M + t`` holds feature ``features[k]`` of task ``t``; group ``k < K`` is a
    feature's M columns, and groups ``K .. K + M - 1`` are the intercept columns.

    Parameters
    ----------
    Xs : list of sparse matrices of shape (n_t, n_features)
        One design per task.
    features : array of int of shape (K,)
        The columns kept.

    Returns
    -------
    design : scipy.sparse.csc_matrix of shape (sum n_t, K * M + M)
    grp_ptr : ndarray of int32 of shape (K + M + 1,)
    grp_indices : ndarray of int32 of shape (K * M + M,)

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0]]))
    >>> design, ptr, idx = group_design([X, 3 * X], np.array([0, 2]))
    >>> design.toarray().tolist()
    [[1.0, 0.0, 2.0, 0.0, 1.0, 0.0], [0.0, 3.0, 0.0, 6.0, 0.0, 1.0]]
    >>> ptr.tolist()
    [0, 2, 4, 5, 6]
    """
    M, K = len(Xs), len(features)
    blocks = []
    for t, X in enumerate(Xs):
        coo = sp.csr_matrix(X)[:, features].tocoo()
        n = coo.shape[0]
        blocks.append(sp.csr_matrix((np.concatenate([coo.data, np.ones(n)]),
                                     (np.concatenate([coo.row, np.arange(n)]),
                                      np.concatenate([coo.col * M + t, np.full(n, K * M + t)]))),
                                    shape=(n, K * M + M)))
    design = sp.vstack(blocks).tocsc()
    grp_ptr = np.concatenate([np.arange(0, K * M + 1, M), K * M + np.arange(1, M + 1)]).astype(np.int32)
    return design, grp_ptr, np.arange(K * M + M, dtype=np.int32)


@functools.lru_cache(maxsize=1)
def _numba_seeder():
    """A numba function that seeds numba's random generator (not NumPy's), which skglm's
    power iteration for the groups' Lipschitz constants draws its start vector from."""
    from numba import njit

    @njit(cache=False)
    def seed(value):
        np.random.seed(value)

    return seed


def group_lasso_fit(design, y, grp_ptr, grp_indices, alpha, weights, w_init=None, max_iter=200):
    """The group lasso ``||y - design w||^2 / (2 n) + alpha sum_g weights_g ||w_g||``.

    Solved by skglm's ``GroupBCD`` (``QuadraticGroup``, ``WeightedGroupL2``), with numba's
    generator seeded so that every run finds the same Lipschitz constants and the same fit; a
    fit that overflows is solved again, cold, by :func:`group_lasso_fista`.

    Parameters
    ----------
    design : scipy.sparse.csc_matrix of shape (n_samples, n_columns)
    y : array of shape (n_samples,)
    grp_ptr, grp_indices : arrays of int32
        The groups, as :func:`group_design` gives them (contiguous groups).
    alpha : float
    weights : array of shape (n_groups,)
    w_init : array of shape (n_columns,), optional
        A warm start.
    max_iter : int, default=200

    Returns
    -------
    ndarray of shape (n_columns,) or None
        The weights; None when no method gives finite weights.
    """
    from skglm.datafits import QuadraticGroup
    from skglm.penalties import WeightedGroupL2
    from skglm.solvers import GroupBCD

    datafit = QuadraticGroup(grp_ptr, grp_indices)
    penalty = WeightedGroupL2(alpha, weights, grp_ptr, grp_indices)
    solver = GroupBCD(fit_intercept=False, tol=skglm_tol(alpha), max_iter=max_iter, warm_start=w_init is not None)
    Xw0 = None if w_init is None else np.asarray(design @ w_init).ravel()   # the warm start's predictions
    _numba_seeder()(0)
    w = solver.solve(design, y, datafit, penalty, w_init=None if w_init is None else w_init.copy(),
                     Xw_init=Xw0)[0].copy()
    if not np.all(np.isfinite(w)):
        w = group_lasso_fista(design, y, grp_ptr, alpha, weights, tol=skglm_tol(alpha))
    return w if np.all(np.isfinite(w)) else None


def group_lasso_fista(design, y, grp_ptr, alpha, weights, tol=1e-6, max_iter=20_000):
    """The group lasso of :func:`group_lasso_fit` by proximal gradient with Nesterov momentum.

    Slower than block coordinate descent but free of extrapolation: every step is a gradient
    step of length ``1 / L`` (``L`` the largest eigenvalue of ``design^T design / n``) and a
    block soft-thresholding.

    Parameters
    ----------
    design : sparse matrix of shape (n_samples, n_columns)
    y : array of shape (n_samples,)
    grp_ptr : array of int
        Group ``g`` is the columns ``grp_ptr[g]:grp_ptr[g + 1]``.
    alpha : float
    weights : array of shape (n_groups,)
    tol : float, default=1e-6
        Stop when the gradient mapping's largest entry is below ``tol``.
    max_iter : int, default=20000

    Returns
    -------
    ndarray of shape (n_columns,)

    Examples
    --------
    >>> A = sp.csc_matrix(np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]))
    >>> w = group_lasso_fista(A, np.array([1.0, -1.0]), np.array([0, 2, 3]), 0.01, np.array([1.0, 1e-10]))
    >>> np.round(A @ w, 2).tolist()
    [0.99, -0.99]
    """
    from scipy.sparse.linalg import svds

    design = sp.csc_matrix(design)
    n = design.shape[0]
    sizes = np.diff(grp_ptr)
    thresholds = np.repeat(alpha * np.asarray(weights, float), sizes)
    if min(design.shape) > 1:
        top = svds(design, k=1, return_singular_vectors=False, v0=np.ones(min(design.shape)))[0]
    else:
        top = sp.linalg.norm(design)
    step = n / max(float(top) ** 2, np.finfo(float).tiny)

    def prox(v):
        norms = np.repeat(np.sqrt(np.add.reduceat(v * v, grp_ptr[:-1])), sizes)
        return v * np.maximum(0.0, 1.0 - step * thresholds / np.maximum(norms, np.finfo(float).tiny))

    w = np.zeros(design.shape[1])
    z, momentum = w.copy(), 1.0
    for _ in range(max_iter):
        w_next = prox(z - step * (design.T @ (design @ z - y)) / n)
        if np.abs(w_next - z).max() / step <= tol:
            return w_next
        next_momentum = (1 + np.sqrt(1 + 4 * momentum ** 2)) / 2
        z = w_next + (momentum - 1) / next_momentum * (w_next - w)
        w, momentum = w_next, next_momentum
    return w
