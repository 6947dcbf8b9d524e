"""Leakage checks: nothing an experiment chooses may depend on its test labels.

The mechanism has two halves, one in the experiments and one in their tests.

In an experiment
    Every experiment passes the labels of its test split through :func:`guard_test_labels`
    (or a test :class:`~medmtl.datasets.MultiTaskDataset` through :func:`guard_test_split`)
    right where it makes the split, and scores its test predictions against what comes
    back. Normally that is the labels themselves, unchanged. The experiment also records
    what it chose in ``result.extra["selection"]``: every selected hyper-parameter and every
    validation (or cross-validation) score it was selected by, per cell.

In its tests
    Inside :func:`relabel_test_labels` every guarded test label is changed (by default
    permuted at random within its task), so the experiment scores against wrong labels.
    :func:`check_selection_ignores_test_labels` runs an experiment in quick mode twice, as
    it is and with permuted test labels, and fails unless ``extra["selection"]`` is the same
    in both runs and something else (the test scores) is not. A choice made on test data
    changes with the test labels and fails the first condition; test labels that bypass the
    guard fail the second.

The switch is a module-level flag: it holds in this process only, so the check runs every
cell here (``backend="sequential"``) and without the cell cache (cached cells were computed
with the true labels). For example::

    train, val, test = ds.split(train=n, validation=0.5, random_state=rng)
    test = guard_test_split(test)              # in the experiment's cell function

    def test_my_experiment_selects_without_test_labels():
        check_selection_ignores_test_labels("my-experiment")
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

__all__ = ["guard_test_labels", "guard_test_split", "relabel_test_labels",
           "check_selection_ignores_test_labels"]

# The transformation applied to every guarded test label array, or None (labels unchanged).
_transform = None


def guard_test_labels(y):
    """The labels of a test split as the experiment must score against them.

    Outside :func:`relabel_test_labels` this is ``y`` itself; inside, a transformed copy.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels or regression targets of the test examples of one task.

    Returns
    -------
    ndarray of shape (n_samples,)

    Examples
    --------
    >>> y = np.array([1, 1, -1, -1])
    >>> guard_test_labels(y) is y
    True
    >>> with relabel_test_labels(np.negative):
    ...     guard_test_labels(y).tolist()
    [-1, -1, 1, 1]
    """
    if _transform is None:
        return y
    y = np.asarray(y)
    out = np.asarray(_transform(y.copy()))
    if out.shape != y.shape:
        raise ValueError(f"the test-label transformation returned shape {out.shape} for labels of shape {y.shape}")
    return out


def guard_test_split(test):
    """A test :class:`~medmtl.datasets.MultiTaskDataset` with each task's labels passed
    through :func:`guard_test_labels` (the inputs are shared, not copied).

    Parameters
    ----------
    test : MultiTaskDataset
        The test split of an experiment.

    Returns
    -------
    MultiTaskDataset
        ``test`` itself outside :func:`relabel_test_labels`.

    Examples
    --------
    >>> from medmtl.datasets import MultiTaskDataset, Task
    >>> test = MultiTaskDataset([Task(np.zeros((2, 1)), np.array([1, -1]), "t")], "toy")
    >>> guard_test_split(test) is test
    True
    >>> with relabel_test_labels(np.negative):
    ...     guard_test_split(test)[0].y.tolist()
    [-1, 1]
    """
    if _transform is None:
        return test
    from medmtl.datasets import MultiTaskDataset, Task

    return MultiTaskDataset([Task(t.X, guard_test_labels(t.y), t.name) for t in test.tasks], test.name,
                            test.feature_names, test.description)


@contextlib.contextmanager
def relabel_test_labels(transform=None, seed=0):
    """Within the block, every guarded test label array is transformed.

    Parameters
    ----------
    transform : callable, optional
        ``transform(y)`` returns new labels of the same shape (``np.negative`` flips labels
        in {-1, +1}). Default: a random permutation of ``y``, which works for any labels or
        targets and keeps every task's class balance.
    seed : int, default=0
        Seeds the default permutations (one generator for the whole block).

    Examples
    --------
    >>> with relabel_test_labels():
    ...     sorted(guard_test_labels(np.arange(5)).tolist())
    [0, 1, 2, 3, 4]
    """
    global _transform
    if transform is None:
        rng = np.random.default_rng(seed)
        transform = rng.permutation
    previous, _transform = _transform, transform
    try:
        yield
    finally:
        _transform = previous


def _differences(a, b, path="", rtol=1e-9):
    """Where two JSON-like values differ (floats to relative ``rtol``), as path strings."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{path}/{k}", rtol)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]", rtol)]
    if isinstance(a, float) and isinstance(b, (int, float)) or isinstance(b, float) and isinstance(a, int):
        return [] if math.isclose(a, b, rel_tol=rtol, abs_tol=0.0) else [f"{path}: {a!r} != {b!r}"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def check_selection_ignores_test_labels(name, **kwargs):
    """Fail unless experiment ``name`` chooses the same with its test labels permuted.

    Runs the quick mode twice in this process without the cell cache: as it is, then inside
    :func:`relabel_test_labels`. Raises ``AssertionError`` if the result records no
    ``extra["selection"]``, if the selection records differ (a choice saw the test labels),
    or if nothing else differs either (the test labels were not passed through
    :func:`guard_test_labels`, so the check proved nothing).

    Parameters
    ----------
    name : str
        A registered experiment.
    **kwargs
        The experiment's own parameters (e.g. ``draw="uniform"``).

    Returns
    -------
    reference, relabelled : dict
        Both results, as :meth:`~medmtl.experiments.result.ExperimentResult.to_dict` gives them.
    """
    from medmtl.experiments import registry

    def run():
        return registry.run(name, quick=True, backend="sequential", use_cache=False, progress=False,
                            **kwargs).to_dict()

    reference = run()
    if "selection" not in reference["extra"]:
        raise AssertionError(f"{name!r} records no extra['selection']: there is nothing to compare")
    with relabel_test_labels():
        relabelled = run()
    changed = _differences(reference["extra"]["selection"], relabelled["extra"]["selection"], "selection")
    if changed:
        raise AssertionError(f"{name!r}: choices or validation scores changed with the test labels: "
                             + "; ".join(changed[:5]))
    rest = [{**r, "extra": {k: v for k, v in r["extra"].items() if k != "selection"}}
            for r in (reference, relabelled)]
    if not _differences(*rest):
        raise AssertionError(f"{name!r}: permuting the test labels changed no test score; its test labels "
                             "do not pass through guard_test_labels")
    return reference, relabelled
