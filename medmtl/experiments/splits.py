"""Train / validation / test splits of the MED figures: per task for rare classes, or one
split of the rows for tasks that label the same rows.

A stratified draw of a few training examples from a task with 3 % positives (Landmine)
often holds no positive. :func:`split_with_both_classes` repairs such a draw;
:func:`split_uniform_draw` follows the paper's words and leaves the task unfitted, scored
by :func:`with_unfitted_tasks`. Where every task labels the same rows (Dermatology's
one-vs-rest tasks), independent splits per task would put a test row of one task in
another task's training set; :func:`split_shared_rows` makes one split of the rows for all.
"""

from __future__ import annotations

import numpy as np

__all__ = ["split_with_both_classes", "split_uniform_draw", "split_shared_rows", "with_unfitted_tasks"]


def split_with_both_classes(ds, train, validation=None, test=None, random_state=None):
    """``ds.split(...)``, repaired so that every task's training set holds both classes.

    A stratified prefix of 20 examples from a task with 3 % positives (Landmine) holds no
    positive about 40 % of the time, and no classifier can be fitted on one class. For such
    a task one example of the missing class is swapped in from validation (or test) for a
    random training example of the other class, which takes its place; the split's sizes do
    not change. Deterministic for a given ``random_state``.

    Parameters
    ----------
    ds : MultiTaskDataset
    train, validation, test
        As in :meth:`MultiTaskDataset.split`.
    random_state : int, sequence of int or Generator, optional

    Returns
    -------
    train, validation, test : MultiTaskDataset
    swaps : int
        The number of swaps made.

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
    Landmine field (3-9 % mines) holds no mine for 29 % of the tasks on average.

    Parameters
    ----------
    ds : MultiTaskDataset
        The tasks to split.
    train : int
        Training examples drawn per task.
    random_state : int or numpy.random.Generator, optional
        Seed of the draws.

    Returns
    -------
    train, validation, test : MultiTaskDataset
    fitted : list of int
        The indices of the tasks whose training set holds both classes (the others cannot
        be fitted; see :func:`with_unfitted_tasks`).

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


def split_shared_rows(ds, train, validation=0.5, random_state=None):
    """One train / validation / test split of the rows, the same for every task.

    For tasks that label the same rows (every task's ``X`` identical, e.g. one-vs-rest
    tasks of one multi-class data set), so that no row is in one task's training set and in
    another's validation or test set. The draw is stratified on the row's vector of labels
    over the tasks (for one-vs-rest tasks: its class): ``train`` rows first, then the rest
    re-stratified and split ``validation`` / the remainder, so that every part holds every
    class in proportion. A split in which some task's part lacks a class cannot be scored
    by AUC and is refused.

    Parameters
    ----------
    ds : MultiTaskDataset
        Tasks over the same rows.
    train : int
        Training rows (the same for every task).
    validation : float or int, default=0.5
        Validation rows: a fraction of the rows left after training, or a count; the rest
        are test rows.
    random_state : int, sequence of int or Generator, optional
        Seed of the draw.

    Returns
    -------
    train, validation, test : MultiTaskDataset
    rows : tuple of ndarray
        The sorted row indices of the three parts.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.datasets import multiclass_tasks
    >>> X, labels = np.arange(60.0)[:, None], np.repeat([0, 1, 2], 20)
    >>> tr, va, te, rows = split_shared_rows(multiclass_tasks(X, labels), 12, random_state=0)
    >>> [len(r) for r in rows], all(np.array_equal(t.X, tr[0].X) for t in tr)
    ([12, 24, 24], True)
    """
    from medmtl.datasets.base import MultiTaskDataset, Task, _stratified_order

    X0 = ds[0].X
    if any(t.n_samples != ds[0].n_samples or not np.array_equal(t.X, X0) for t in ds.tasks):
        raise ValueError("split_shared_rows needs tasks over the same rows (every task's X identical)")
    n = ds[0].n_samples
    if not 0 < train < n:
        raise ValueError(f"cannot train on {train} of {n} rows")
    rng = np.random.default_rng(random_state)
    _, key = np.unique(np.column_stack(ds.ys), axis=0, return_inverse=True)
    key = key.ravel()
    order = _stratified_order(key, rng)
    tr, rest = order[:train], order[train:]
    rest = rest[_stratified_order(key[rest], rng)]
    n_val = int(round(validation * len(rest))) if isinstance(validation, float) else int(validation)
    rows = tuple(np.sort(r) for r in (tr, rest[:n_val], rest[n_val:]))
    for name, r in zip(("training", "validation", "test"), rows):
        for t in ds.tasks:
            if np.unique(t.y[r]).size != 2:
                raise ValueError(f"the {name} rows of task {t.name!r} hold one class; take more rows")
    parts = tuple(MultiTaskDataset([Task(t.X[r], t.y[r], t.name) for t in ds.tasks], ds.name, ds.feature_names,
                                   ds.description) for r in rows)
    return (*parts, rows)


def with_unfitted_tasks(mauc_fitted, n_fitted, n_tasks):
    """The mean AUC over all ``n_tasks`` when only ``n_fitted`` could be fitted.

    A task whose training set holds one class gets a constant score, AUC 1/2: the MED dual's
    constraint sum_t lambda_t y_t = 0 forces its multipliers to zero, and libsvm trained on
    one class predicts that class everywhere.

    Parameters
    ----------
    mauc_fitted : float
        The mean AUC over the fitted tasks.
    n_fitted : int
        How many tasks were fitted.
    n_tasks : int
        How many tasks there are.

    Returns
    -------
    float

    Examples
    --------
    >>> with_unfitted_tasks(0.7, 3, 4)
    0.65
    """
    return float((n_fitted * mauc_fitted + 0.5 * (n_tasks - n_fitted)) / n_tasks)
