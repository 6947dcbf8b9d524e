"""``MultiTaskDataset``: a list of tasks, each with its own inputs and targets.

A task's ``X`` is a dense ``ndarray`` or a ``scipy.sparse`` CSR matrix (text data stays
sparse); ``y`` holds labels in {-1, +1} for classification or real targets for regression.
Tasks may differ in size and, for some learners, in input dimension.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["Task", "MultiTaskDataset", "multiclass_tasks"]


@dataclass(frozen=True)
class Task:
    """One task: inputs, targets and a name.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The task's inputs.
    y : ndarray of shape (n_samples,)
        The task's targets.
    name : str, default=""
        The task's name, used in messages and tables.
    """

    X: object
    y: np.ndarray
    name: str = ""

    def __post_init__(self):
        if self.X.shape[0] != len(self.y):
            raise ValueError(f"task {self.name!r}: X has {self.X.shape[0]} rows but y has {len(self.y)}")

    @property
    def n_samples(self):
        return self.X.shape[0]


def _take(X, idx):
    return X[idx] if not sp.issparse(X) else X[idx].tocsr()


def _resolve_count(spec, n, what):
    """A count from an int, or from a fraction (float in (0, 1)) of ``n``."""
    if isinstance(spec, (float, np.floating)):
        if not 0 < spec < 1:
            raise ValueError(f"{what} fraction must be in (0, 1), got {spec}")
        return int(round(spec * n))
    spec = int(spec)
    if spec < 0:
        raise ValueError(f"{what} count must be >= 0, got {spec}")
    return spec


def _stratified_order(y, rng):
    """A random permutation whose every prefix holds each class in proportion (round-robin)."""
    y = np.asarray(y)
    if y.dtype.kind == "f" and np.unique(y).size > 10:  # regression: plain shuffle
        return rng.permutation(len(y))
    groups = [rng.permutation(np.flatnonzero(y == c)) for c in np.unique(y)]
    # Interleave the classes at their rates so that any prefix is (nearly) stratified.
    keys = np.concatenate([(np.arange(len(g)) + rng.random()) / len(g) for g in groups])
    order = np.concatenate(groups)
    return order[np.argsort(keys, kind="stable")]


@dataclass
class MultiTaskDataset:
    """A named list of tasks.

    Parameters
    ----------
    tasks : list of Task
    name : str
    feature_names : list of str, optional
    description : str, optional

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ds = MultiTaskDataset([Task(rng.normal(size=(10, 3)), np.repeat([-1, 1], 5), "a"),
    ...                        Task(rng.normal(size=(8, 3)), np.repeat([-1, 1], 4), "b")], "toy")
    >>> len(ds), [t.n_samples for t in ds]
    (2, [10, 8])
    >>> train, val, test = ds.split(train=4, validation=0.5, random_state=0)
    >>> [t.n_samples for t in train], [t.n_samples for t in val], [t.n_samples for t in test]
    ([4, 4], [3, 2], [3, 2])
    """

    tasks: list
    name: str = ""
    feature_names: list = field(default=None)
    description: str = ""

    def __len__(self):
        return len(self.tasks)

    def __iter__(self):
        return iter(self.tasks)

    def __getitem__(self, item):
        if isinstance(item, (slice, list, np.ndarray)):
            idx = range(len(self.tasks))[item] if isinstance(item, slice) else item
            return MultiTaskDataset([self.tasks[i] for i in idx], self.name, self.feature_names,
                                    self.description)
        return self.tasks[item]

    @property
    def Xs(self):
        """The tasks' inputs, as a list."""
        return [t.X for t in self.tasks]

    @property
    def ys(self):
        """The tasks' targets, as a list."""
        return [t.y for t in self.tasks]

    @property
    def task_names(self):
        return [t.name for t in self.tasks]

    @property
    def n_features(self):
        dims = {t.X.shape[1] for t in self.tasks}
        return dims.pop() if len(dims) == 1 else None

    def subset(self, indices_per_task):
        """A dataset with the given rows of each task.

        Parameters
        ----------
        indices_per_task : sequence of array-like of int
            The rows to keep, one index array per task.

        Returns
        -------
        MultiTaskDataset
        """
        return MultiTaskDataset([Task(_take(t.X, np.asarray(i, dtype=int)), t.y[np.asarray(i, dtype=int)], t.name)
                                 for t, i in zip(self.tasks, indices_per_task)],
                                self.name, self.feature_names, self.description)

    def split_indices(self, train, validation=None, test=None, random_state=None, stratify=True):
        """Per-task index arrays of a train / validation / test split.

        Parameters
        ----------
        train : int or float
            Training examples per task: a count, or a fraction in (0, 1) of the task.
        validation : int or float, optional
            Validation examples: a count, or a fraction *of what remains after training*.
            Default: none.
        test : int or float, optional
            Test examples: a count, or a fraction of what remains after validation.
            Default: all of it.
        random_state : int or numpy.random.Generator, optional
            Seed of the draw; a given seed gives the same split.
        stratify : bool, default=True
            Whether each part keeps the class proportions of the task.

        Returns
        -------
        list of (ndarray, ndarray, ndarray)
            Sorted train, validation and test row indices of each task.
        """
        rng = np.random.default_rng(random_state)
        out = []
        for t in self.tasks:
            n = t.n_samples
            order = _stratified_order(t.y, rng) if stratify else rng.permutation(n)
            n_train = _resolve_count(train, n, "train")
            if n_train > n:
                raise ValueError(f"task {t.name!r} has {n} examples; cannot train on {n_train}")
            rest = n - n_train
            n_val = _resolve_count(validation, rest, "validation") if validation is not None else 0
            n_val = min(n_val, rest)
            rest2 = rest - n_val
            n_test = _resolve_count(test, rest2, "test") if test is not None else rest2
            n_test = min(n_test, rest2)
            tr = order[:n_train]
            if stratify:
                # the remainder, re-interleaved so validation and test are stratified too
                remaining = order[n_train:]
                remaining = remaining[_stratified_order(t.y[remaining], rng)]
            else:
                remaining = order[n_train:]
            out.append((np.sort(tr), np.sort(remaining[:n_val]), np.sort(remaining[n_val:n_val + n_test])))
        return out

    def split(self, train, validation=None, test=None, random_state=None, stratify=True):
        """Split every task into train, validation and test datasets.

        Parameters
        ----------
        train, validation, test, random_state, stratify
            As in :meth:`split_indices`.

        Returns
        -------
        tuple of MultiTaskDataset
            The train, validation and test datasets.
        """
        idx = self.split_indices(train, validation, test, random_state, stratify)
        return tuple(self.subset([i[k] for i in idx]) for k in range(3))


def multiclass_tasks(X, labels, scheme="one-vs-rest", pairs=None, classes=None, name=""):
    """Turn a multi-class data set into binary tasks.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    labels : array-like of shape (n_samples,)
    scheme : {"one-vs-rest", "one-vs-one"}
        One-vs-rest tasks use every example (label +1 for the class); one-vs-one tasks use
        only the two classes' examples (+1 for the first of the pair).
    pairs : list of (a, b), optional
        The one-vs-one pairs; default all pairs of ``classes``.
    classes : list, optional
        The classes to make tasks for (default: all, sorted).
    name : str, default=""
        The name of the returned dataset.

    Returns
    -------
    MultiTaskDataset

    Examples
    --------
    >>> import numpy as np
    >>> ds = multiclass_tasks(np.eye(6), [0, 1, 2, 0, 1, 2], scheme="one-vs-one")
    >>> ds.task_names, [t.n_samples for t in ds]
    (['0 vs 1', '0 vs 2', '1 vs 2'], [4, 4, 4])
    """
    labels = np.asarray(labels)
    classes = sorted(np.unique(labels).tolist()) if classes is None else list(classes)
    tasks = []
    if scheme == "one-vs-rest":
        for c in classes:
            tasks.append(Task(X, np.where(labels == c, 1, -1), f"{c} vs rest"))
    elif scheme == "one-vs-one":
        if pairs is None:
            pairs = [(a, b) for i, a in enumerate(classes) for b in classes[i + 1:]]
        for a, b in pairs:
            idx = np.flatnonzero((labels == a) | (labels == b))
            tasks.append(Task(_take(X, idx), np.where(labels[idx] == a, 1, -1), f"{a} vs {b}"))
    else:
        raise ValueError(f"scheme must be 'one-vs-rest' or 'one-vs-one', got {scheme!r}")
    return MultiTaskDataset(tasks, name)
