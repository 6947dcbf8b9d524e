"""Scores the papers report that scikit-learn and SciPy do not give in one call: the mean AUC
over tasks (MAUC), the eps-insensitive loss, and the paired t-test with its mean difference and
standard error.

The AUC and ROC curve of one task are :func:`sklearn.metrics.roc_auc_score` and
:func:`sklearn.metrics.roc_curve`.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import sem, ttest_rel
from sklearn.metrics import roc_auc_score

__all__ = ["mean_auc", "epsilon_insensitive_loss", "paired_t_test"]


def mean_auc(ys, scores):
    """The mean over tasks of each task's area under the ROC curve (the JMLR paper's MAUC).

    Parameters
    ----------
    ys : sequence of array-like, the t-th of shape (n_samples_t,)
        Each task's labels, two classes per task; the larger label is the positive one.
    scores : sequence of array-like, the t-th of shape (n_samples_t,)
        Each task's decision values; larger means more positive.

    Returns
    -------
    float
        The unweighted mean of the tasks' AUCs (ties in a task's scores count one half).

    Raises
    ------
    ValueError
        If ``ys`` and ``scores`` hold different numbers of tasks, a task's labels are not
        exactly two classes, or its scores and labels differ in length or hold NaN.

    See Also
    --------
    sklearn.metrics.roc_auc_score : The AUC of one task.

    Examples
    --------
    >>> mean_auc([[-1, 1], [1, -1]], [[0.0, 1.0], [0.0, 1.0]])
    0.5
    """
    if len(ys) != len(scores):
        raise ValueError(f"{len(ys)} label vectors but {len(scores)} score vectors")
    aucs = []
    for t, (y, s) in enumerate(zip(ys, scores)):
        # scikit-learn only warns and returns NaN for one class; a task without both classes
        # is a broken split and should stop the run
        n_classes = np.unique(np.asarray(y)).size
        if n_classes != 2:
            raise ValueError(f"task {t}: the AUC needs exactly two classes in y; found {n_classes}")
        aucs.append(roc_auc_score(y, s))
    return float(np.mean(aucs))


def epsilon_insensitive_loss(y, predictions, epsilon):
    """Mean of ``max(0, |y - f| - epsilon)``, the loss of the lecture's regression tables.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Targets.
    predictions : array-like of shape (n_samples,)
        Predicted values ``f``.
    epsilon : float
        Half-width of the zone in which errors cost nothing.

    Returns
    -------
    float

    Examples
    --------
    >>> epsilon_insensitive_loss([1.0, 2.0], [1.5, 4.0], epsilon=1.0)
    0.5
    """
    y, predictions = np.asarray(y, float).ravel(), np.asarray(predictions, float).ravel()
    if y.shape != predictions.shape:
        raise ValueError(f"y has {y.shape[0]} entries but predictions has {predictions.shape[0]}")
    return float(np.mean(np.maximum(0.0, np.abs(y - predictions) - epsilon)))


def paired_t_test(a, b):
    """Two-sided paired t-test of ``a - b`` (e.g. two methods' scores on the same folds).

    The paper calls multi-task learning's advantage significant when the p-value is below
    0.05; the mean difference and its standard error say by how much.

    Parameters
    ----------
    a, b : array-like of shape (n_pairs,)
        Paired scores.

    Returns
    -------
    mean_difference : float
        The mean of ``a - b`` (NaN without pairs).
    standard_error : float
        Its standard error, ``std(a - b, ddof=1) / sqrt(n_pairs)`` (NaN with fewer than two
        pairs).
    p_value : float
        The p-value of :func:`scipy.stats.ttest_rel`; 1 when every difference is zero, 0 when
        every difference is the same non-zero number, NaN with fewer than two pairs.

    Examples
    --------
    >>> d, se, p = paired_t_test([0.71, 0.74, 0.70, 0.73], [0.70, 0.72, 0.70, 0.71])
    >>> round(d, 4), round(se, 4), round(p, 3)
    (0.0125, 0.0048, 0.08)
    """
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"a has {a.size} scores but b has {b.size}")
    d = a - b
    if d.size < 2:
        return float(np.mean(d)) if d.size else float("nan"), float("nan"), float("nan")
    mean, se = float(d.mean()), float(sem(d))
    if se == 0.0:
        # the t statistic is 0/0 or x/0 here; a difference without spread is certain
        return mean, 0.0, 1.0 if mean == 0.0 else 0.0
    return mean, se, float(ttest_rel(a, b).pvalue)
