"""The libsvm baselines of the MED figures: independent SVMs per task and one pooled SVM.

Every SVM function chooses its hyper-parameters on validation AUC only; the test data are
scored once, by the chosen SVMs. Data come as one ``(X, y)`` pair per task.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score

from medmtl.evaluation import mean_auc

__all__ = ["SVC_TOL", "independent_svm_select", "independent_svm_scores", "pooled_svm_scores"]

# The SVMs are solved as tightly as the MED dual, so that per-task selection does not chase
# libsvm's stopping noise (docs/design_notes.md, "Experiments").
SVC_TOL = 1e-8


def _svc(C, kernel, **params):
    from sklearn.svm import SVC

    params.setdefault("tol", SVC_TOL)
    return SVC(C=C, kernel=kernel, **params)


def _fit_point(point, kernel, X, y, svc_params):
    """An SVC fitted at one grid point ``{"C": ..., **more SVC parameters}``."""
    point = dict(point)
    return _svc(point.pop("C"), kernel, **svc_params, **point).fit(X, y)


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
        ``X`` of shape (n_samples, n_features), ``y`` of shape (n_samples,) in {-1, 1}.
    kernel : str or callable
        Passed to :class:`sklearn.svm.SVC`; a callable kernel's Gram matrices are computed
        once per task.
    grid : list of dict, optional
        Further SVC parameters to try with every C (e.g. ``[{"gamma": 0.5}, {"gamma": 2}]``).
    per_task : bool, default=True
        True: each task takes the point with its own best validation AUC. False: one point
        for all tasks, the one with the best validation AUC averaged over tasks (as the
        multi-task model chooses its one (C, alpha)).
    **svc_params
        Further fixed SVC parameters (``tol`` defaults to :data:`SVC_TOL`).

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
    >>> task = lambda n: (rng.normal(size=(n, 2)) + np.repeat([[-1], [1]], n // 2, axis=0),
    ...                   np.repeat([-1, 1], n // 2))
    >>> chosen, aucs = independent_svm_select([0.1, 1.0], [task(20), task(20)], [task(20), task(20)],
    ...                                       per_task=False)
    >>> chosen[0] == chosen[1], len(aucs)
    (True, 2)
    """
    points = [{"C": C, **point} for point in (grid or [{}]) for C in sorted(Cs)]
    kernel, (train, val) = _gram_tasks(kernel, train, val)
    aucs = np.empty((len(train), len(points)))  # validation AUC of each task at each point
    for t, ((Xtr, ytr), (Xva, yva)) in enumerate(zip(train, val)):
        for j, point in enumerate(points):
            aucs[t, j] = roc_auc_score(yva, _fit_point(point, kernel, Xtr, ytr, svc_params).decision_function(Xva))
    if per_task:
        best = np.argmax(aucs, axis=1)  # first best, in grid order
    else:
        best = np.full(len(train), np.argmax(aucs.mean(axis=0)))
    return [dict(points[j]) for j in best], [float(aucs[t, j]) for t, j in enumerate(best)]


def independent_svm_scores(Cs, train, val, test, kernel="linear", grid=None, per_task=True, **svc_params):
    """Independent libsvm SVMs per task, hyper-parameters chosen on validation AUC, per task
    or (``per_task=False``) one choice for all tasks (:func:`independent_svm_select`, whose
    parameters these are).

    Selection sees ``train`` and ``val`` only; each task's chosen SVM is then refitted on its
    training data and scores ``test`` once.

    Parameters
    ----------
    Cs, train, val
        As for :func:`independent_svm_select`.
    test : list of (X, y) pairs, one per task
        The test data, scored once by the chosen SVMs.
    kernel, grid, per_task
        As for :func:`independent_svm_select` (``kernel`` defaults to ``"linear"``).
    **svc_params
        Further fixed SVC parameters (``tol`` defaults to :data:`SVC_TOL`).

    Returns
    -------
    val_mauc : float
    test_mauc : float
    chosen : list of dict
        Per task, the chosen ``{"C": ..., **grid point}``.
    test_scores : list of ndarray
        Decision values per task on ``test``, each of shape (n_test_samples,).

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(60, centers=2, random_state=0)
    >>> train, val, test = [[(X[k:k + 20], 2 * y[k:k + 20] - 1)] for k in (0, 20, 40)]
    >>> v, t, chosen, s = independent_svm_scores([0.1, 1.0], train, val, test)
    >>> t > 0.8, list(chosen[0]), len(s[0])
    (True, ['C'], 20)
    """
    chosen, val_aucs = independent_svm_select(Cs, train, val, kernel=kernel, grid=grid,
                                              per_task=per_task, **svc_params)
    kernel, (train, test) = _gram_tasks(kernel, train, test)
    test_scores = [_fit_point(point, kernel, Xtr, ytr, svc_params).decision_function(Xte)
                   for (Xtr, ytr), (Xte, _), point in zip(train, test, chosen)]
    return float(np.mean(val_aucs)), mean_auc([y for _, y in test], test_scores), chosen, test_scores


def pooled_svm_scores(Cs, train, val, test, kernel="linear", **svc_params):
    """One libsvm SVM on all tasks' training data pooled, C chosen on validation mean AUC.

    Parameters
    ----------
    Cs : list of float
        The values of ``C`` to try.
    train, val, test : list of (X, y) pairs, one per task
        ``X`` of shape (n_samples, n_features), ``y`` of shape (n_samples,) in {-1, 1}; the
        training pairs are stacked into one training set.
    kernel : str or callable, default="linear"
        Passed to :class:`sklearn.svm.SVC`.
    **svc_params
        Further fixed SVC parameters (``tol`` defaults to :data:`SVC_TOL`).

    Returns
    -------
    val_mauc : float
    test_mauc : float
    chosen_C : float
    test_scores : list of ndarray
        Decision values per task on ``test``.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(60, centers=2, random_state=1)
    >>> tasks = [(X[k:k + 10], 2 * y[k:k + 10] - 1) for k in range(0, 60, 10)]
    >>> v, t, C, s = pooled_svm_scores([0.1, 1.0], tasks[:2], tasks[2:4], tasks[4:])
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
