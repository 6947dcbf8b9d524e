"""The evaluation protocol shared by the MED figures: split, scale, select on validation, test.

The JMLR paper trains on ``n`` examples per task, splits the rest in half for validation (to
choose C and alpha) and test, and reports the mean AUC over tasks. Hyper-parameters are
chosen on validation only; the test split is touched once, by the chosen model.

The helpers here keep that discipline in their signatures: every ``*_select`` function sees
training and validation data only and returns its choice; the test data enter afterwards,
in a separate call.
"""

from __future__ import annotations

import numpy as np

from medmtl.evaluation import auc, mean_auc

# Algorithm 1 stops when an iteration raises J by less than TOL * |J|. The estimators'
# default (1e-10) is a solver-test setting; at 1e-6 J is within ~1e-5 relative of its limit,
# validation AUCs move by ~1e-4, and a regularisation path runs 2-3 times faster.
TOL = 1e-6

__all__ = ["TOL", "SVC_TOL", "solver_method", "fit_options", "in_med_context", "minmax_scale_tasks",
           "standardize_tasks", "median_sq_distance", "warm_path",
           "select_on_validation", "independent_svm_scores", "independent_svm_select",
           "pooled_svm_scores", "unit_diagonal_kernels", "landmine_rbf_gammas", "landmine_kernel_bank", "SumKernel",
           "quadratic_expansion", "alpha_from_rho", "split_with_both_classes", "split_uniform_draw",
           "with_unfitted_tasks"]


def solver_method():
    """The MED solution method the experiments use: the projected Newton method.

    It maximises the same concave dual J as Algorithm 1 (checked: equal J to ~1e-6 relative
    on the Housing, Landmine and Heart problems) and takes 5-30 times less time on the
    experiments' grids; pass ``method="bound"`` to a fold function to run Algorithm 1.
    """
    return "newton"


def fit_options(method):
    """Estimator keyword arguments for ``method``: Algorithm 1 stops at :data:`TOL`; the
    Newton method converges quadratically and keeps its own (tight) default."""
    return {"method": method, "tol": TOL if method == "bound" else None}


def in_med_context(func):
    """Run ``func`` with BLAS limited to one thread.

    The cells do many small dense operations (eigen-decompositions of 40 x 40 Gram
    matrices, small QPs). Multi-threaded OpenBLAS on a machine whose cores are busy with
    other work spins its threads and makes each of them ~100 times slower (measured: 68 ms
    instead of 0.7 ms for a 40 x 40 ``eigh`` on 2 busy cores); parallelism comes from the
    grid runner instead.

    Examples
    --------
    >>> @in_med_context
    ... def cell(c):
    ...     return c["a"] + 1
    >>> cell({"a": 1})
    2
    """
    import functools

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapped


def minmax_scale_tasks(train_Xs, *other):
    """Scale every column into [0, 1] by the min/max over all tasks' *training* inputs.

    Returns the scaled training list followed by each other list scaled the same way.

    Examples
    --------
    >>> import numpy as np
    >>> tr, te = minmax_scale_tasks([np.array([[0.0], [2.0]])], [np.array([[1.0], [4.0]])])
    >>> tr[0].ravel().tolist(), te[0].ravel().tolist()
    ([0.0, 1.0], [0.5, 2.0])
    """
    stacked = np.vstack(train_Xs)
    lo, hi = stacked.min(axis=0), stacked.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    scale = lambda Xs: [(X - lo) / span for X in Xs]  # noqa: E731
    return (scale(train_Xs), *(scale(Xs) for Xs in other))


def standardize_tasks(train_Xs, *other):
    """Centre every column and scale it to unit variance by the mean and standard deviation
    over all tasks' *training* inputs.

    Returns the scaled training list followed by each other list scaled the same way. A
    constant training column is centred only.

    Examples
    --------
    >>> import numpy as np
    >>> tr, te = standardize_tasks([np.array([[0.0], [2.0]])], [np.array([[1.0], [4.0]])])
    >>> tr[0].ravel().tolist(), te[0].ravel().tolist()
    ([-1.0, 1.0], [0.0, 3.0])
    """
    stacked = np.vstack(train_Xs)
    mean, std = stacked.mean(axis=0), stacked.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    scale = lambda Xs: [(X - mean) / std for X in Xs]  # noqa: E731
    return (scale(train_Xs), *(scale(Xs) for Xs in other))


def median_sq_distance(Xs):
    """The median squared Euclidean distance between distinct rows of the stacked ``Xs``,
    the usual reference scale for RBF bandwidths (the "median heuristic").

    Examples
    --------
    >>> import numpy as np
    >>> float(median_sq_distance([np.array([[0.0], [1.0]]), np.array([[3.0]])]))
    4.0
    """
    from scipy.spatial.distance import pdist

    return float(np.median(pdist(np.vstack(Xs), "sqeuclidean")))


def alpha_from_rho(rho):
    """The switch prior's ``alpha = (1 - rho) / rho`` (rho: prior probability a switch is on).

    >>> alpha_from_rho(0.1)
    9.0
    """
    rho = float(rho)
    if not 0 < rho <= 1:
        raise ValueError(f"rho must be in (0, 1], got {rho}")
    return (1.0 - rho) / rho


def warm_path(make_model, Cs, alphas, train_Xs, train_ys, score):
    """Fit along a regularisation path, warm-starting each fit from the previous solution.

    For each C (ascending) the alphas are swept in ascending order starting from the
    solution at the previous alpha, as the paper explores its path; the first alpha of each
    C starts cold. One model serves the whole path, so the estimator's cached dual factors
    (feature columns, per-task kernel Gram blocks) are built once, not once per C.
    ``score(model)`` is called after every fit; returns ``{(C, alpha): score}`` and the fits'
    iteration counts.
    """
    scores, iterations = {}, {}
    model = make_model(C=min(Cs), alpha=min(alphas))
    warm = model.get_params().get("warm_start", False)
    for C in sorted(Cs):
        for k, alpha in enumerate(sorted(alphas)):
            model.set_params(C=C, alpha=alpha, warm_start=warm and k > 0)
            model.fit(train_Xs, train_ys)
            scores[(C, alpha)] = score(model)
            iterations[(C, alpha)] = int(getattr(model, "n_iter_", 0))
    return scores, iterations


def select_on_validation(scores):
    """The grid point with the best validation score (ties: the first in sorted order).

    >>> select_on_validation({(1.0, 0.0): 0.8, (0.1, 0.0): 0.9, (10.0, 0.0): 0.9})
    ((0.1, 0.0), 0.9)
    """
    best = max(sorted(scores), key=lambda k: scores[k])
    return best, scores[best]


# libsvm's default stopping tolerance (1e-3 on the KKT gap) leaves decision values ~1e-3
# away from the SVM's optimum: enough to reorder test examples and move a task's AUC by a
# few 1e-4, and to let per-task selection over many grid points chase that noise. The
# baselines are solved as tightly as the MED dual (measured on a Landmine fold: at 1e-8 the
# sum-kernel SVMs' decision values agree with MED at alpha = 0 to 2e-6, at 1e-3 to 2e-3).
SVC_TOL = 1e-8


def _svc(C, kernel, **params):
    from sklearn.svm import SVC

    params.setdefault("tol", SVC_TOL)
    return SVC(C=C, kernel=kernel, **params)


def _gram_tasks(kernel, train, *others):
    """For a callable kernel, per-task Gram matrices against the task's training inputs
    (computed once and reused for every C), as (X, y) pairs for a precomputed-kernel SVC."""
    if not callable(kernel):
        return kernel, (train, *others)
    out = [[(kernel(Xtr, Xtr), ytr) for Xtr, ytr in train]]
    for part in others:
        out.append([(kernel(X, Xtr), y) for (X, y), (Xtr, _) in zip(part, train)])
    return "precomputed", tuple(out)


def independent_svm_select(Cs, train, val, kernel="linear", grid=None, per_task=True, **svc_params):
    """Choose the independent SVMs' hyper-parameters on validation AUC.

    Parameters
    ----------
    Cs : list of float
    train, val : list of (X, y) pairs, one per task
    kernel : str or callable
        Passed to :class:`sklearn.svm.SVC`; a callable kernel's Gram matrices are computed
        once per task.
    grid : list of dict, optional
        Further SVC parameters to try with every C (e.g. ``[{"gamma": 0.5}, {"gamma": 2}]``).
    per_task : bool, default=True
        True: each task takes the point with its own best validation AUC. False: one point
        for all tasks, the one with the best validation AUC averaged over tasks (as the
        multi-task model chooses its one (C, alpha)).

    Returns
    -------
    chosen : list of dict
        Per task, the chosen ``{"C": ..., **grid point}``.
    val_auc : list of float
        Per task, the validation AUC of the choice.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> def task(n):
    ...     y = np.repeat([-1, 1], n // 2)
    ...     return rng.normal(size=(n, 2)) + y[:, None], y
    >>> tr, va = [task(20), task(20)], [task(20), task(20)]
    >>> chosen, aucs = independent_svm_select([0.1, 1.0], tr, va, per_task=False)
    >>> chosen[0] == chosen[1], len(aucs)
    (True, 2)
    """
    points = [{"C": C, **point} for point in (grid or [{}]) for C in sorted(Cs)]
    kernel, (train, val) = _gram_tasks(kernel, train, val)
    aucs = np.empty((len(train), len(points)))  # validation AUC of each task at each point
    for t, ((Xtr, ytr), (Xva, yva)) in enumerate(zip(train, val)):
        for j, point in enumerate(points):
            point = dict(point)
            clf = _svc(point.pop("C"), kernel, **svc_params, **point).fit(Xtr, ytr)
            aucs[t, j] = auc(yva, clf.decision_function(Xva))
    if per_task:
        best = np.argmax(aucs, axis=1)  # first best, in grid order
    else:
        best = np.full(len(train), np.argmax(aucs.mean(axis=0)))
    return [dict(points[j]) for j in best], [float(aucs[t, j]) for t, j in enumerate(best)]


def independent_svm_scores(Cs, train, val, test, kernel="linear", grid=None, per_task=True, **svc_params):
    """Independent libsvm SVMs per task, hyper-parameters chosen on validation AUC, per task
    or (``per_task=False``) one choice for all tasks (:func:`independent_svm_select`).

    Selection sees ``train`` and ``val`` only; each task's chosen SVM is then refitted on its
    training data and scores ``test`` once.

    Returns
    -------
    val_mauc : float
    test_mauc : float
    chosen_Cs : list of float
    test_scores : list of ndarray
        Decision values per task on ``test``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> def task(n):
    ...     y = np.repeat([-1, 1], n // 2)
    ...     return rng.normal(size=(n, 2)) + y[:, None], y
    >>> tr, va, te = [task(20)], [task(20)], [task(20)]
    >>> v, t, Cs, s = independent_svm_scores([0.1, 1.0], tr, va, te)
    >>> t > 0.8, len(s[0])
    (True, 20)
    """
    chosen, val_aucs = independent_svm_select(Cs, train, val, kernel=kernel, grid=grid,
                                              per_task=per_task, **svc_params)
    kernel, (train, test) = _gram_tasks(kernel, train, test)
    test_scores = []
    for (Xtr, ytr), (Xte, _), point in zip(train, test, chosen):
        point = dict(point)
        clf = _svc(point.pop("C"), kernel, **svc_params, **point).fit(Xtr, ytr)
        test_scores.append(clf.decision_function(Xte))
    return (float(np.mean(val_aucs)), mean_auc([y for _, y in test], test_scores),
            [c["C"] for c in chosen], test_scores)


def pooled_svm_scores(Cs, train, val, test, kernel="linear", **svc_params):
    """One libsvm SVM on all tasks' training data pooled, C chosen on validation mean AUC.

    Returns (validation MAUC, test MAUC, chosen C, test decision values per task).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> def task(n):
    ...     y = np.repeat([-1, 1], n // 2)
    ...     return rng.normal(size=(n, 2)) + y[:, None], y
    >>> tr, va, te = [task(10), task(10)], [task(10), task(10)], [task(10), task(10)]
    >>> v, t, C, s = pooled_svm_scores([0.1, 1.0], tr, va, te)
    >>> t > 0.8, len(s)
    (True, 2)
    """
    X = np.vstack([X for X, _ in train])
    y = np.concatenate([y for _, y in train])
    best = None
    for C in sorted(Cs):
        clf = _svc(C, kernel, **svc_params).fit(X, y)
        v = mean_auc([y for _, y in val], [clf.decision_function(Xv) for Xv, _ in val])
        if best is None or v > best[0]:
            best = (v, C, clf)
    v, C, clf = best
    scores = [clf.decision_function(Xt) for Xt, _ in test]
    return v, mean_auc([y for _, y in test], scores), C, scores


class SumKernel:
    """The unweighted sum of a bank of kernels, as a callable for :class:`sklearn.svm.SVC`.

    This is what MED kernel selection reduces to at alpha = 0 (every switch on), so an SVM on
    it is the natural independent baseline for a kernel bank.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.kernels import LinearKernel
    >>> SumKernel([LinearKernel(), LinearKernel()])(np.ones((1, 2)), np.ones((1, 2)))
    array([[4.]])
    """

    def __init__(self, kernels):
        self.kernels = list(kernels)

    def __call__(self, A, B):
        return sum(k(A, B) for k in self.kernels)


def unit_diagonal_kernels(kernels, train_Xs):
    """Scale every kernel to mean diagonal 1 over the pooled *training* inputs.

    MED kernel selection compares kernels through ``lam^T K_d lam``; without a common scale
    a quartic kernel (values up to ~1e4) would win by size alone. A kernel whose training
    diagonal is all zero is left unscaled.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.kernels import LinearKernel
    >>> k, = unit_diagonal_kernels([LinearKernel()], [np.array([[2.0, 0.0], [0.0, 2.0]])])
    >>> float(np.mean(np.diag(k(np.eye(2) * 2, np.eye(2) * 2))))
    1.0
    """
    from medmtl.kernels import ScaledKernel, get_kernel

    X = np.vstack(train_Xs)
    out = []
    for k in kernels:
        k = get_kernel(k)
        # the diagonal in blocks: never an (n x n) matrix over all tasks' inputs
        d = np.mean(np.concatenate([np.diag(k(X[i:i + 256], X[i:i + 256]))
                                    for i in range(0, X.shape[0], 256)]))
        out.append(ScaledKernel(k, 1.0 / d) if d > 0 else k)
    return out


LANDMINE_RBF_SCALES = [2.0 ** p for p in range(-4, 5)]  # gamma x median squared distance
LANDMINE_POLY_DEGREES = [1, 2, 3, 4]


def landmine_rbf_gammas(train_Xs, scales=LANDMINE_RBF_SCALES):
    """RBF bandwidths for the Landmine bank: ``gamma = s / m`` for each scale ``s``, with
    ``m`` the median squared distance between the training inputs (over all tasks).

    Examples
    --------
    >>> import numpy as np
    >>> landmine_rbf_gammas([np.array([[0.0], [2.0]])], scales=[0.5, 1.0])
    [0.125, 0.25]
    """
    m = median_sq_distance(train_Xs)
    if not m > 0:
        raise ValueError("the training inputs are all identical: no RBF bandwidth can be set")
    return [s / m for s in scales]


def landmine_kernel_bank(n_features, gammas, poly=False):
    """The JMLR Fig. 2 bank: a linear kernel per feature and an RBF kernel per ``gamma``
    (9 of them: D = 18); with ``poly`` also the linear, quadratic, cubic and quartic kernels
    (D = 22).

    The paper says only that its 9 RBF kernels have "different settings of the bandwidth";
    the experiments spread them over two decades around the median squared distance
    (:func:`landmine_rbf_gammas`). Polynomial kernels are ``(<a, b> / d + 1)^p``.

    Examples
    --------
    >>> g = [2.0 ** p for p in range(-4, 5)]
    >>> len(landmine_kernel_bank(9, g)), len(landmine_kernel_bank(9, g, poly=True))
    (18, 22)
    """
    from medmtl.kernels import PolynomialKernel, per_feature_kernels, rbf_bank

    bank = per_feature_kernels(n_features) + rbf_bank(gammas)
    if poly:
        bank += [PolynomialKernel(p, gamma=1.0 / n_features, coef0=1.0) for p in LANDMINE_POLY_DEGREES]
    return bank


def quadratic_expansion(X):
    """Explicit degree-2 features: the inputs, then every product ``x_i x_j`` with i <= j.

    ``d`` inputs give ``d + d (d + 1) / 2`` columns (13 -> 104 for Boston housing).

    Examples
    --------
    >>> quadratic_expansion(np.array([[1.0, 2.0]])).tolist()
    [[1.0, 2.0, 1.0, 2.0, 4.0]]
    """
    X = np.asarray(X, dtype=float)
    i, j = np.triu_indices(X.shape[1])
    return np.hstack([X, X[:, i] * X[:, j]])


def split_with_both_classes(ds, train, validation=None, test=None, random_state=None):
    """``ds.split(...)``, repaired so that every task's training set holds both classes.

    A stratified prefix of 20 examples from a task with 3 % positives (Landmine) holds no
    positive about 40 % of the time, and no classifier can be fitted on one class. For such
    a task one example of the missing class is swapped in from validation (or test) for a
    random training example of the other class, which takes its place; the split's sizes do
    not change. Deterministic for a given ``random_state``.

    Returns (train, validation, test) datasets and the number of swaps made.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.datasets import MultiTaskDataset, Task
    >>> y = np.r_[np.ones(1, int), -np.ones(39, int)]
    >>> ds = MultiTaskDataset([Task(np.arange(40.0)[:, None], y, "rare")])
    >>> tr, va, te, swaps = split_with_both_classes(ds, 2, 0.5, random_state=0)
    >>> sorted(set(tr[0].y.tolist())), [len(t.y) for t in (tr[0], va[0], te[0])]
    ([-1, 1], [2, 19, 19])
    """
    rng = np.random.default_rng(random_state)
    idx = ds.split_indices(train, validation, test, random_state=rng)
    swaps = 0
    fixed = []
    for t, (tr, va, te) in zip(ds.tasks, idx):
        tr, va, te = tr.copy(), va.copy(), te.copy()
        y = np.asarray(t.y)
        for cls in np.unique(y):
            if len(tr) < 2 or np.any(y[tr] == cls):
                continue
            for pool in (va, te):
                donors = np.flatnonzero(y[pool] == cls)
                if donors.size:
                    d = rng.choice(donors)
                    r = rng.integers(len(tr))
                    tr[r], pool[d] = pool[d], tr[r]
                    swaps += 1
                    break
        fixed.append((np.sort(tr), np.sort(va), np.sort(te)))
    parts = tuple(ds.subset([f[k] for f in fixed]) for k in range(3))
    return (*parts, swaps)


def split_uniform_draw(ds, train, random_state=None):
    """The paper's split as written: ``train`` examples per task drawn uniformly at random,
    the rest split in half (stratified) for validation and test.

    Unlike :func:`split_with_both_classes`, nothing is repaired: a uniform draw of 20 from a
    Landmine field (3-9 % mines) holds no mine for 29 % of the tasks on average. Returns the
    (train, validation, test) datasets and the indices of the tasks whose training set holds
    both classes (the others cannot be fitted; see :func:`with_unfitted_tasks`).

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.datasets import MultiTaskDataset, Task
    >>> y = np.r_[np.ones(2, int), -np.ones(38, int)]
    >>> ds = MultiTaskDataset([Task(np.arange(40.0)[:, None], y, f"t{m}") for m in range(6)])
    >>> tr, va, te, fitted = split_uniform_draw(ds, 4, random_state=0)
    >>> [len(t.y) for t in (tr[0], va[0], te[0])], len(fitted) < 6
    ([4, 18, 18], True)
    """
    rng = np.random.default_rng(random_state)
    parts, fitted = [], []
    for m, t in enumerate(ds.tasks):
        if train >= t.n_samples:
            raise ValueError(f"task {t.name!r} has {t.n_samples} examples; cannot train on {train}")
        order = rng.permutation(t.n_samples)
        tr, rest = np.sort(order[:train]), order[train:]
        va, _, te = ds[[m]].subset([rest]).split_indices(0.5, random_state=rng)[0]  # stratified halves
        parts.append((tr, np.sort(rest[va]), np.sort(rest[te])))
        if np.unique(t.y[tr]).size == 2:
            fitted.append(m)
    return (*(ds.subset([p[k] for p in parts]) for k in range(3)), fitted)


def with_unfitted_tasks(mauc_fitted, n_fitted, n_tasks):
    """The mean AUC over all ``n_tasks`` when only ``n_fitted`` could be fitted.

    A task whose training set holds one class gets a constant score, AUC 1/2: the MED dual's
    constraint sum_t lambda_t y_t = 0 forces its multipliers to zero, and libsvm trained on
    one class predicts that class everywhere.

    >>> with_unfitted_tasks(0.7, 3, 4)
    0.65
    """
    return float((n_fitted * mauc_fitted + 0.5 * (n_tasks - n_fitted)) / n_tasks)
