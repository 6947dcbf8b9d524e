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


def _storage(X):
    return f"sparse {X.format}" if sp.issparse(X) else "dense"


def _describe_inputs(X):
    return f"{X.shape[0]} x {X.shape[1]} {_storage(X)}"


@dataclass(frozen=True, repr=False)
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

    def __repr__(self):
        return f"Task({self.name!r}, X {_describe_inputs(self.X)})"


def _column_names(X):
    """A DataFrame's column names as strings, else None."""
    columns = getattr(X, "columns", None)
    return None if columns is None else [str(c) for c in columns]


def _as_inputs(X):
    """``X`` as a sparse CSR matrix or a 2-D float array (a DataFrame gives its values)."""
    if sp.issparse(X):
        return sp.csr_matrix(X)
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"inputs must be 2-D (rows are examples), got an array of shape {X.shape}")
    return X


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


@dataclass(repr=False)
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
    >>> ds
    MultiTaskDataset('toy': 2 tasks, 18 examples (8 to 10 per task), 3 features, dense)
    """

    tasks: list
    name: str = ""
    feature_names: list = field(default=None)
    description: str = ""

    @classmethod
    def from_arrays(cls, X, y, task=None, *, name="", feature_names=None, task_names=None, description=""):
        """A dataset from arrays: one per task, or stacked with a task label per row.

        Parameters
        ----------
        X : list of array-like, or array-like or sparse matrix of shape (n_samples, n_features)
            The inputs of each task (a list, with ``task=None``), or of all tasks stacked. A
            pandas DataFrame gives its column names as ``feature_names``.
        y : list of array-like, or array-like of shape (n_samples,)
            The targets, in the same form as ``X``.
        task : array-like of shape (n_samples,), optional
            The task of each row of a stacked ``X``; tasks follow the sorted distinct values.
        name : str, default=""
        feature_names : list of str, optional
            The input columns' names (default: a DataFrame's columns, else none).
        task_names : list of str, optional
            One name per task (default: the task values, or ``"task k"`` for lists).
        description : str, default=""

        Returns
        -------
        MultiTaskDataset

        Examples
        --------
        >>> X = np.arange(12.0).reshape(6, 2)
        >>> ds = MultiTaskDataset.from_arrays(X, [1, -1, 1, -1, 1, -1], task=["a", "b", "a", "b", "b", "a"])
        >>> ds.task_names, [t.n_samples for t in ds]
        (['a', 'b'], [3, 3])
        >>> MultiTaskDataset.from_arrays([X[:2], X[2:]], [[1, -1], [1, -1, 1, -1]]).task_names
        ['task 0', 'task 1']
        """
        if task is None:
            if not isinstance(X, (list, tuple)) or not isinstance(y, (list, tuple)) or len(X) != len(y):
                raise ValueError("without task=, X and y must be lists with one entry per task")
            if feature_names is None:
                feature_names = _column_names(X[0])
            blocks = [(_as_inputs(Xm), np.asarray(ym)) for Xm, ym in zip(X, y)]
            default_names = [f"task {m}" for m in range(len(blocks))]
        else:
            if feature_names is None:
                feature_names = _column_names(X)
            X, y, task = _as_inputs(X), np.asarray(y), np.asarray(task)
            if not X.shape[0] == len(y) == len(task):
                raise ValueError(f"X has {X.shape[0]} rows, y {len(y)} and task {len(task)}; they must agree")
            values = np.unique(task)
            blocks = [(_take(X, np.flatnonzero(task == v)), y[task == v]) for v in values]
            default_names = [str(v) for v in values]
        names = default_names if task_names is None else [str(t) for t in task_names]
        if len(names) != len(blocks):
            raise ValueError(f"{len(names)} task names for {len(blocks)} tasks")
        tasks = [Task(Xm, ym, n) for (Xm, ym), n in zip(blocks, names)]
        return cls(tasks, name, None if feature_names is None else list(feature_names), description)

    def __repr__(self):
        sizes = [t.n_samples for t in self.tasks]
        if not sizes:
            return f"MultiTaskDataset({self.name!r}: no tasks)"
        per_task = f"{sizes[0]} per task" if min(sizes) == max(sizes) else f"{min(sizes)} to {max(sizes)} per task"
        width = self.n_features
        features = f"{width} features" if width is not None else "features differ by task"
        kinds = {_storage(t.X) for t in self.tasks}
        return (f"MultiTaskDataset({self.name!r}: {len(sizes)} task{'s' * (len(sizes) != 1)}, {sum(sizes)} examples "
                f"({per_task}), {features}, {'/'.join(sorted(kinds))})")

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
