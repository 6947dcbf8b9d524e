"""The evaluation protocol shared by the MED figures: split, scale, select on validation, test.

The JMLR paper trains on ``n`` examples per task, splits the rest in half for validation (to
choose C and alpha) and test, and reports the mean AUC over tasks. Hyper-parameters are
chosen on validation only; the test split is touched once, by the chosen model.
"""

from __future__ import annotations

import numpy as np

from medmtl.evaluation import mean_auc

__all__ = ["minmax_scale_tasks", "warm_path", "select_on_validation", "independent_svm_scores"]


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


def warm_path(make_model, Cs, alphas, train_Xs, train_ys, score):
    """Fit along a regularisation path, warm-starting each fit from the previous solution.

    For each C (ascending) the alphas are swept in ascending order starting from the
    solution at the previous alpha, as the paper explores its path. ``score(model)`` is
    called after every fit; returns ``{(C, alpha): score}`` and the fits' iteration counts.
    """
    scores, iterations = {}, {}
    for C in sorted(Cs):
        model = make_model(C=C, alpha=min(alphas))
        for alpha in sorted(alphas):
            model.set_params(C=C, alpha=alpha)
            model.fit(train_Xs, train_ys)
            scores[(C, alpha)] = score(model)
            iterations[(C, alpha)] = int(getattr(model, "n_iter_", 0))
    return scores, iterations


def select_on_validation(scores):
    """The grid point with the best validation score (ties: the first in sorted order)."""
    best = max(sorted(scores), key=lambda k: scores[k])
    return best, scores[best]


def independent_svm_scores(Cs, train, val, test, kernel="linear", **svc_params):
    """Independent libsvm SVMs per task, C chosen per task on validation AUC.

    Returns (validation MAUC, test MAUC, chosen Cs, test decision values per task).
    """
    from sklearn.svm import SVC

    from medmtl.evaluation import auc

    chosen, val_aucs, test_scores = [], [], []
    for (Xtr, ytr), (Xva, yva), (Xte, _) in zip(train, val, test):
        best = None
        for C in sorted(Cs):
            clf = SVC(C=C, kernel=kernel, **svc_params).fit(Xtr, ytr)
            a = auc(yva, clf.decision_function(Xva))
            if best is None or a > best[0]:
                best = (a, C, clf)
        val_aucs.append(best[0])
        chosen.append(best[1])
        test_scores.append(best[2].decision_function(Xte))
    return float(np.mean(val_aucs)), mean_auc([y for _, y in test], test_scores), chosen, test_scores
