"""The MED models as duals: the SVM and SVR, feature selection, kernel selection,
adaptive pooling, single or multi-task (a single task is one group), and the structure of
an Ising graphical model (one task per node, one switch per edge).

Each builder lays out the multipliers (one per example for classification, two for
regression, JMLR Section 9), their box and per-task equality, and the dual's terms: the
shared term ``Phi0`` and the switched terms ``Phi_d`` as factors or kernels on demand
(:mod:`medmtl.med.grams`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels import get_kernel
from .dual import MEDDual, NumberedNames
from .grams import KernelGram, canonical_inputs, factorize_gram, kernel_factor, on_demand

__all__ = ["svm_dual", "feature_selection_dual", "kernel_selection_dual", "adaptive_pooling_dual",
           "ising_structure_dual", "edge_pairs"]


def _kernel_term(kernel, Xs, signs, srcs, groups, n, scale=1.0):
    """One kernel term, block-diagonal over the tasks: a KernelGram or a factor."""
    if on_demand(kernel, Xs[0]):
        return KernelGram(kernel, [(g, X[r], s) for X, s, r, g in zip(Xs, signs, srcs, groups)], n, scale)
    blocks = [_signed_rows(kernel_factor(kernel, X), s, r) for X, s, r in zip(Xs, signs, srcs)]
    B = _block_diag(blocks)
    return B * np.sqrt(scale) if scale != 1.0 else B


# ---------------------------------------------------------------------------------------
# Layout of multipliers: classification (one per example) or regression (two per example)
# ---------------------------------------------------------------------------------------
def _check_signs(y, owner, m):
    """Raise unless task ``m``'s classification labels are all -1 or +1 (as numbers).

    The builders take labels already encoded: 0/1 labels would build another problem
    (a 0 gives its example no sign in the dual), so they are refused, never read.
    """
    y = np.asarray(y)
    if y.dtype.kind in "iuf" and np.all((y == 1) | (y == -1)):
        return
    found = list(dict.fromkeys(y.ravel().tolist()))[:6]
    raise ValueError(f"{owner}: ys[{m}] must hold classification labels in {{-1, +1}} (as numbers); found "
                     f"{found}. This builder takes labels already encoded; the estimators (MEDClassifier, "
                     "MultiTaskMEDClassifier, AdaptivePoolingClassifier) take any two labels and encode them "
                     "in the order of classes_")


def _layout(ys, C, regression=False, epsilon=0.0, owner="the dual builder"):
    """Per-task signs, source rows, and the c, lo, hi, a, groups of the dual.

    Classification: one multiplier per example with sign ``y``, ``c = 1``, ``a = y``
    (labels in {-1, +1}, else a ValueError naming ``owner``). Regression: per task
    ``[lam; lam*]``, signs ``[+1; -1]``, ``c = [y - eps; -y - eps]``, ``a = [+1; -1]``
    (prediction ``sum (lam - lam*) k + b``, as in JMLR Section 9).
    """
    signs, srcs, cs, groups = [], [], [], []
    start = 0
    for m, y in enumerate(ys):
        if not regression:
            _check_signs(y, owner, m)
        y = np.asarray(y, dtype=float)
        T = y.size
        if regression:
            sign = np.concatenate([np.ones(T), -np.ones(T)])
            src = np.concatenate([np.arange(T), np.arange(T)])
            c = np.concatenate([y - epsilon, -y - epsilon])
        else:
            sign, src, c = y, np.arange(T), np.ones(T)
        signs.append(sign)
        srcs.append(src)
        cs.append(c)
        groups.append(np.arange(start, start + sign.size))
        start += sign.size
    c = np.concatenate(cs)
    signs_all = np.concatenate(signs)
    return dict(c=c, lo=np.zeros(c.size), hi=np.full(c.size, float(C)), a=signs_all.copy(),
                groups=groups), signs, srcs


def _signed_rows(F, sign, src):
    """``diag(sign) F[src]`` for dense or sparse ``F``, as one new array: the rows are
    gathered only where ``src`` is not every row in order (a classification task's rows
    are; at 50,000 x 1,000 the gathered copy and a second product array took 1.9 s of
    fresh memory in a new process, one product 0.08 s)."""
    identity = src.size == F.shape[0] and np.array_equal(src, np.arange(src.size))
    if sp.issparse(F):
        # the rows' entries scaled in a copy: the order of ``F``'s entries kept (a product
        # with ``diag(sign)`` leaves them unsorted, to be sorted again)
        rows = sp.csr_matrix(F, copy=True) if identity else sp.csr_matrix(F)[src]
        rows.data *= np.repeat(np.asarray(sign, dtype=float), np.diff(rows.indptr))
        return rows
    F = np.asarray(F, dtype=float)
    if identity:
        return np.multiply(F, sign[:, None])
    rows = F[src]
    rows *= sign[:, None]
    return rows


def _block_diag(blocks):
    """Block-diagonal of per-task factors; dense if there is one dense block, else CSR."""
    if len(blocks) == 1 and not sp.issparse(blocks[0]):
        return np.asarray(blocks[0], dtype=float)
    return sp.block_diag([sp.csr_matrix(b) for b in blocks], format="csr")


# The parameters the switched builders share, written once and put into their docstrings.
_PARAMETER_DOCS = {"data": """    Xs : list of array-like or sparse matrices, each of shape (n_m, n_features)
        Inputs of each task ``m``.
    ys : list of array-like, each of shape (n_m,)
        Labels in {-1, +1} (classification) or real targets (``regression=True``).""", "switched_penalty": """    C : float > 0, default=1.0
        Upper bound on every multiplier (the slack penalty).
    alpha : float >= 0, default=1.0
        Prior odds of a switch being off; larger is sparser.
    regression : bool, default=False
        Build the epsilon-insensitive regression dual (two multipliers per example) instead
        of the classification dual.
    epsilon : float >= 0, default=0.1
        Tube half-width for regression (unused for classification)."""}


def _shared_parameters(builder):
    """Put :data:`_PARAMETER_DOCS` into ``builder``'s docstring at its ``{data}`` and
    ``{switched_penalty}`` places."""
    if builder.__doc__:  # None under python -OO
        builder.__doc__ = builder.__doc__.format(**{k: v.strip() for k, v in _PARAMETER_DOCS.items()})
    return builder


def svm_dual(Xs, ys, kernel="linear", C=1.0, regression=False, epsilon=0.1):
    """Independent SVMs (or epsilon-SVRs) of all tasks as one MED dual with no switches.

    Parameters
    ----------
    Xs : list of array-like, each of shape (n_m, n_features)
    ys : list of array-like, each of shape (n_m,)
        Labels in {-1, +1} (classification) or real targets (``regression=True``).
    kernel : str, Kernel or callable
    C : float
    regression : bool
    epsilon : float
        Tube half-width for regression.

    Returns
    -------
    MEDDual
    """
    kernel = get_kernel(kernel)
    Xs = canonical_inputs(Xs)
    kw, signs, srcs = _layout(ys, C, regression, epsilon, owner="svm_dual")
    Phi0 = _kernel_term(kernel, Xs, signs, srcs, kw["groups"], kw["c"].size)
    return MEDDual(Phi0=Phi0, alpha=0.0, **kw)


@_shared_parameters
def feature_selection_dual(Xs, ys, C=1.0, alpha=1.0, regression=False, epsilon=0.1):
    """(Multi-task) MED feature selection: one switch per feature shared by all tasks.

    ``Phi_d`` is n x M, column ``m`` holding task ``m``'s signed feature ``d`` on its rows;
    in ``Phi`` the columns are ordered ``d * M + m``.

    Parameters
    ----------
    {data}
    {switched_penalty}

    Returns
    -------
    MEDDual
    """
    Xs = canonical_inputs(Xs)
    kw, signs, srcs = _layout(ys, C, regression, epsilon, owner="feature_selection_dual")
    M = len(Xs)
    D = Xs[0].shape[1]
    if any(X.shape[1] != D for X in Xs):
        raise ValueError("all tasks must have the same number of features for feature selection")
    blocks = [_signed_rows(X, s, r) for X, s, r in zip(Xs, signs, srcs)]
    if M == 1:
        Phi = blocks[0]
    else:
        Phi = _block_diag(blocks)
        perm = (np.arange(M)[None, :] * D + np.arange(D)[:, None]).ravel()
        Phi = sp.csr_matrix(Phi.tocsc()[:, perm])
    return MEDDual(Phi=Phi, term_ptr=np.arange(D + 1) * M, alpha=alpha,
                   term_names=NumberedNames("x", D), **kw)


@_shared_parameters
def kernel_selection_dual(Xs, ys, kernels, C=1.0, alpha=1.0, regression=False, epsilon=0.1):
    """(Multi-task) MED kernel selection: one switch per kernel shared by all tasks.

    Each ``H_d`` is block-diagonal over tasks: a kernel with a feature map contributes its
    signed features, an RBF or polynomial kernel a :class:`KernelGram` (per-task kernel
    columns on demand); no cross-task Gram matrix is ever formed.

    Parameters
    ----------
    {data}
    kernels : list of str, Kernel or callable
        The bank, one switched term per kernel: names or Kernel objects as
        :func:`medmtl.kernels.get_kernel` takes them, or callables.
    {switched_penalty}

    Returns
    -------
    MEDDual
    """
    kernels = [get_kernel(k) for k in kernels]
    Xs = canonical_inputs(Xs)
    kw, signs, srcs = _layout(ys, C, regression, epsilon, owner="kernel_selection_dual")
    n = kw["c"].size
    terms = [_kernel_term(k, Xs, signs, srcs, kw["groups"], n) for k in kernels]
    return MEDDual(terms=terms, alpha=alpha, term_names=[k.name for k in kernels], **kw)


def adaptive_pooling_dual(Xs, ys, kernel="linear", C=1.0, alpha=1.0, shared_scale=1.0,
                          task_scale=None):
    """MED adaptive pooling: a shared model over all tasks plus a switched model per task.

    ``Phi0`` factors ``shared_scale * K`` on the pooled examples; term ``m`` factors
    ``task_scale * K(X_m, X_m)`` on task ``m``'s rows (``task_scale`` defaults to ``10 M``,
    the JMLR paper's heuristic).

    Parameters
    ----------
    Xs : list of array-like or sparse matrices, each of shape (n_m, n_features)
        Inputs of each task ``m``.
    ys : list of array-like, each of shape (n_m,)
        Labels in {-1, +1}.
    kernel : str, Kernel or callable, default="linear"
        The kernel ``K`` of both the shared and the per-task models, as
        :func:`medmtl.kernels.get_kernel` takes it.
    C : float > 0, default=1.0
        Upper bound on every multiplier (the slack penalty).
    alpha : float >= 0, default=1.0
        Prior odds of a task's switch being off; larger pools more.
    shared_scale : float > 0, default=1.0
        Weight of the shared model's kernel.
    task_scale : float > 0, optional
        Weight of each task's own kernel; ``10 M`` for ``M`` tasks if None.

    Returns
    -------
    MEDDual
    """
    kernel = get_kernel(kernel)
    Xs = canonical_inputs(Xs)
    M = len(Xs)
    task_scale = 10.0 * M if task_scale is None else float(task_scale)
    kw, signs, srcs = _layout(ys, C, owner="adaptive_pooling_dual")
    n = kw["c"].size
    if on_demand(kernel, Xs[0]):
        Xall = sp.vstack(Xs, format="csr") if any(sp.issparse(X) for X in Xs) else np.vstack(Xs)
        shared = KernelGram(kernel, [(np.arange(n), Xall, np.concatenate(signs))], n, shared_scale)
        terms = [KernelGram(kernel, [(g, X, s)], n, task_scale)
                 for X, s, g in zip(Xs, signs, kw["groups"])]
        return MEDDual(Phi0=shared, terms=terms, alpha=alpha,
                       term_names=[f"task{m}" for m in range(M)], **kw)
    F = kernel.feature_map(Xs[0])
    if F is not None:
        maps = [kernel.feature_map(X) for X in Xs]
        shared = [_signed_rows(Fm, s, r) for Fm, s, r in zip(maps, signs, srcs)]
        if any(sp.issparse(b) for b in shared):
            Phi0 = sp.vstack([sp.csr_matrix(b) for b in shared], format="csr")
        else:
            Phi0 = np.vstack(shared)
        Phi0 = Phi0 * np.sqrt(shared_scale)
    else:
        Xall = sp.vstack(Xs, format="csr") if any(sp.issparse(X) for X in Xs) else np.vstack(Xs)
        Phi0 = np.concatenate(signs)[:, None] * factorize_gram(shared_scale * kernel(Xall, Xall), name=kernel.name)
    blocks = [_signed_rows(kernel_factor(kernel, X), s, r) * np.sqrt(task_scale)
              for X, s, r in zip(Xs, signs, srcs)]
    widths = [b.shape[1] for b in blocks]
    Phi = _block_diag(blocks) if M > 1 else sp.csr_matrix(blocks[0]) if sp.issparse(blocks[0]) else blocks[0]
    return MEDDual(Phi0=Phi0, Phi=Phi, term_ptr=np.concatenate(([0], np.cumsum(widths))),
                   alpha=alpha, term_names=[f"task{m}" for m in range(M)], **kw)


def edge_pairs(n_nodes):
    """The undirected edges ``(m, d)``, ``m < d``, of a complete graph, in the order of the
    switched terms of :func:`ising_structure_dual` (row by row of the upper triangle).

    Returns
    -------
    ndarray of shape (n_nodes * (n_nodes - 1) / 2, 2)

    Examples
    --------
    >>> edge_pairs(3).tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    m, d = np.triu_indices(int(n_nodes), k=1)
    return np.column_stack([m, d]).astype(np.int64)


def ising_structure_dual(X, C=1.0, alpha=1.0):
    """MED structure estimation of an Ising model (JMLR Section 12) as one MED dual.

    Task ``m`` predicts spin ``x(m)`` from the other spins; its multipliers are the rows
    ``m T .. (m + 1) T - 1`` (example ``t`` of task ``m`` at row ``m T + t``), with labels
    ``y_{m,t} = x_t(m)``, the box ``0 <= lam <= C`` and the task's equality
    ``sum_t y_{m,t} lam_{m,t} = 0`` (its bias). Edge ``(m, d)``, ``m < d``, is one switched
    term with a two-column factor: column one holds ``y_{m,t} x_t(d)`` on task ``m``'s rows,
    column two ``y_{d,t} x_t(m)`` on task ``d``'s rows, so that
    ``1/2 lam^T H_{m,d} lam = 1/2 (u_md^2 + u_dm^2)`` with ``u_md = sum_t lam_{m,t} y_{m,t}
    x_t(d)``: the switch ``s(m, d) = s(d, m)`` is shared by the two tasks it joins. Both
    columns hold the same products ``x_t(m) x_t(d)``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_nodes)
        Spins in {-1, +1}.
    C : float
    alpha : float
        Prior odds of an edge being absent.

    Returns
    -------
    MEDDual
        ``n_nodes * n_samples`` multipliers, ``n_nodes`` groups, one term per edge of
        :func:`edge_pairs` (named ``"x{m}-x{d}"``).

    Examples
    --------
    >>> X = np.array([[1, 1, -1], [-1, -1, 1], [1, -1, 1], [-1, 1, -1]], dtype=float)
    >>> dual = ising_structure_dual(X, C=1.0, alpha=1.0)
    >>> dual.n, len(dual.groups), dual.n_terms, dual.term_names[0]
    (12, 3, 3, 'x0-x1')
    """
    X = np.asarray(X, dtype=float)
    if not np.all((X == 1) | (X == -1)):
        found = list(dict.fromkeys(X.ravel().tolist()))[:6]
        raise ValueError(f"ising_structure_dual: X must hold spins in {{-1, +1}}; found {found}. "
                         "MEDGraphicalModel takes samples coded {0, 1} or {-1, +1} and converts them")
    T, N = X.shape
    pairs = edge_pairs(N)
    E = pairs.shape[0]
    prod = X[:, pairs[:, 0]] * X[:, pairs[:, 1]]              # (T, E): x_t(m) x_t(d)
    t = np.arange(T)
    # column 2e on task m's rows, column 2e + 1 on task d's rows, each with the products of edge e
    rows = np.concatenate([(pairs[:, 0][None, :] * T + t[:, None]).ravel(),
                           (pairs[:, 1][None, :] * T + t[:, None]).ravel()])
    cols = np.concatenate([np.tile(2 * np.arange(E), T), np.tile(2 * np.arange(E) + 1, T)])
    vals = np.concatenate([prod.ravel(), prod.ravel()])
    Phi = sp.csr_matrix((vals, (rows, cols)), shape=(N * T, 2 * E))
    Phi.sum_duplicates()
    y = X.T.ravel()                                            # y_{m,t} = x_t(m), task-major
    groups = [np.arange(m * T, (m + 1) * T) for m in range(N)]
    return MEDDual(c=np.ones(N * T), lo=np.zeros(N * T), hi=np.full(N * T, float(C)), a=y, groups=groups,
                   Phi=Phi, term_ptr=np.arange(E + 1) * 2, alpha=alpha,
                   term_names=[f"x{m}-x{d}" for m, d in pairs])
