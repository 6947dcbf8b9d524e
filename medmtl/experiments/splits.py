"""Per-task train / validation / test splits of the MED figures, for rare classes.

A stratified draw of a few training examples from a task with 3 % positives (Landmine)
often holds no positive. :func:`split_with_both_classes` repairs such a draw;
:func:`split_uniform_draw` follows the paper's words and leaves the task unfitted, scored
by :func:`with_unfitted_tasks`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["split_with_both_classes", "split_uniform_draw", "with_unfitted_tasks"]


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
