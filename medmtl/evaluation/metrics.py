"""Scores used across the papers: AUC, mean AUC over tasks (MAUC), accuracy, eps-loss."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["auc", "mean_auc", "accuracy", "epsilon_insensitive_loss", "roc_curve"]


def _check_scores(y, scores):
    y = np.asarray(y).ravel()
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if y.shape != scores.shape:
        raise ValueError(f"y has {y.shape[0]} entries but scores has {scores.shape[0]}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contain NaN or infinite values")
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"AUC needs exactly two classes in y; found {classes.size}")
    return y == classes[1], scores


def auc(y, scores):
    """Area under the ROC curve (the Mann-Whitney statistic; ties count one half).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Two classes; the larger label is the positive one.
    scores : array-like of shape (n_samples,)
        Larger means more positive.

    Examples
    --------
    >>> auc([-1, -1, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    positive, scores = _check_scores(y, scores)
    ranks = rankdata(scores)
    n_pos = positive.sum()
    n_neg = positive.size - n_pos
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def mean_auc(ys, scores_list):
    """The mean over tasks of each task's AUC (the JMLR paper's MAUC).

    Examples
    --------
    >>> mean_auc([[-1, 1], [1, -1]], [[0.0, 1.0], [0.0, 1.0]])
    0.5
    """
    if len(ys) != len(scores_list):
        raise ValueError(f"{len(ys)} label vectors but {len(scores_list)} score vectors")
    return float(np.mean([auc(y, s) for y, s in zip(ys, scores_list)]))


def accuracy(y, predictions):
    """Fraction of predictions equal to the labels.

    >>> accuracy([1, -1, 1], [1, 1, 1])
    0.6666666666666666
    """
    y, predictions = np.asarray(y).ravel(), np.asarray(predictions).ravel()
    if y.shape != predictions.shape:
        raise ValueError(f"y has {y.shape[0]} entries but predictions has {predictions.shape[0]}")
    return float(np.mean(y == predictions))


def epsilon_insensitive_loss(y, predictions, epsilon):
    """Mean of max(0, |y - f| - epsilon), the loss of the lecture's regression tables.

    >>> epsilon_insensitive_loss([1.0, 2.0], [1.5, 4.0], epsilon=1.0)
    0.5
    """
    y, predictions = np.asarray(y, float).ravel(), np.asarray(predictions, float).ravel()
    if y.shape != predictions.shape:
        raise ValueError(f"y has {y.shape[0]} entries but predictions has {predictions.shape[0]}")
    return float(np.mean(np.maximum(0.0, np.abs(y - predictions) - epsilon)))


def roc_curve(y, scores):
    """False and true positive rates at every threshold, from (0, 0) to (1, 1).

    Examples
    --------
    >>> fpr, tpr = roc_curve([-1, 1, 1], [0.2, 0.9, 0.1])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 1.0, 1.0], [0.0, 0.5, 0.5, 1.0])
    """
    positive, scores = _check_scores(y, scores)
    order = np.argsort(-scores, kind="stable")
    s, p = scores[order], positive[order]
    last_of_tie = np.r_[np.flatnonzero(np.diff(s)), s.size - 1]
    tp = np.cumsum(p)[last_of_tie]
    fp = np.cumsum(~p)[last_of_tie]
    return np.r_[0.0, fp / (~positive).sum()], np.r_[0.0, tp / positive.sum()]


def paired_t_test(a, b):
    """Two-sided paired t-test of ``a - b`` (e.g. two methods' scores on the same folds).

    Returns ``(mean difference, standard error, p-value)``; the p-value is 1 when every
    difference is zero and NaN with fewer than two pairs. The paper calls multi-task
    learning's advantage significant when this p-value is below 0.05.

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
    se = float(np.std(d, ddof=1) / np.sqrt(d.size))
    if se == 0.0:
        return float(d.mean()), 0.0, 1.0 if d.mean() == 0 else 0.0
    from scipy.stats import t

    stat = d.mean() / se
    return float(d.mean()), se, float(2 * t.sf(abs(stat), d.size - 1))
