"""The stacked form of the multi-task estimators: one X with the task of each row.

It fits exactly the model of the per-task lists; predictions come back in row order; tasks
are labels of any kind; bad task labels are named. The lists stay for plain Python use.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.kernels import LinearKernel, RBFKernel
from medmtl.med import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
)
from medmtl.model_selection import stack_tasks
from med_testdata import make_regression_tasks, make_tasks

MAKERS = [
    lambda: MultiTaskMEDClassifier(alpha=2.0),
    lambda: MultiTaskMEDClassifier(selection="kernels", kernels=[RBFKernel(0.2), LinearKernel()], alpha=2.0),
    lambda: MultiTaskMEDClassifier(selection=None, kernel="rbf"),
    lambda: MultiTaskMEDRegressor(alpha=2.0),
    lambda: MultiTaskMEDRegressor(selection=None, kernel="poly", degree=2),
    lambda: AdaptivePoolingClassifier(alpha=2.0),
    lambda: AdaptivePoolingClassifier(kernel="rbf", alpha=2.0),
]
FITTED = ["dual_coef_", "intercept_", "switch_posterior_", "coef_", "objective_path_", "n_iter_"]


def tasks_for(est, M=3, T=20, seed=0):
    make = make_regression_tasks if isinstance(est, MultiTaskMEDRegressor) else make_tasks
    return make(M=M, T=T, D=4, seed=seed)


def interleaved(Xs, ys, labels, seed=0):
    """The stacked form with the tasks' rows shuffled together, each task's rows in order."""
    X, y, tasks = stack_tasks(Xs, ys, labels)
    slots = np.random.default_rng(seed).permutation(tasks)  # the task each position holds
    rows = np.empty(len(y), dtype=int)
    for t in labels:
        rows[slots == t] = np.flatnonzero(tasks == t)
    return X[rows], y[rows], tasks[rows]


@pytest.mark.parametrize("make", MAKERS)
def test_the_stacked_form_fits_the_model_of_the_lists(make):
    est = make()
    Xs, ys = tasks_for(est)
    Xt, _ = tasks_for(est, T=7, seed=1)
    labels = np.array(["north", "east", "south"])
    lists = make().fit(Xs, ys)
    X, y, tasks = interleaved(Xs, ys, labels)
    stacked = make().fit(X, y, tasks=tasks)
    np.testing.assert_array_equal(stacked.tasks_, np.sort(labels))
    # the models are the same, with tasks in the order of their sorted labels
    order = np.argsort(labels)
    by_list = make().fit([Xs[m] for m in order], [ys[m] for m in order])
    for name in FITTED:
        a, b = getattr(stacked, name), getattr(by_list, name)
        if a is None:
            assert b is None
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)
    # predictions come back in row order, for any mix of the tasks (equal to rounding: the
    # rows are multiplied in other blocks)
    Xt = [Xt[m] for m in order]
    Xq, _, tq = stack_tasks(Xt, None, labels[order])
    shuffle = np.random.default_rng(2).permutation(len(tq))
    same = dict(rtol=1e-13, atol=1e-14) if isinstance(est, MultiTaskMEDRegressor) else {}
    check = np.testing.assert_allclose if same else np.testing.assert_array_equal
    check(stacked.predict(Xq[shuffle], tasks=tq[shuffle]), np.concatenate(by_list.predict(Xt))[shuffle], **same)
    if hasattr(stacked, "decision_function"):
        np.testing.assert_allclose(stacked.decision_function(Xq[shuffle], tasks=tq[shuffle]),
                                   np.concatenate(by_list.decision_function(Xt))[shuffle], rtol=1e-13, atol=1e-14)
    # a model fitted on lists predicts stacked rows by task index, and the other way round
    check(by_list.predict(Xq, tasks=np.repeat([0, 1, 2], 7)), np.concatenate(by_list.predict(Xt)), **same)
    for a, b in zip(stacked.predict(Xt), by_list.predict(Xt)):
        check(a, b, **same)
    # the order of the tasks changes the model only within the solver's tolerance
    np.testing.assert_allclose(np.concatenate(lists.predict([Xt[m] for m in np.argsort(order)])),
                               np.concatenate([np.asarray(p, dtype=float) for p in
                                               [by_list.predict(Xt)[m] for m in np.argsort(order)]]), atol=1e-4)


def test_stacked_sparse_and_dense_agree():
    Xs, ys = make_tasks(M=2, T=20, D=5, seed=3)
    X, y, tasks = stack_tasks(Xs, ys)
    dense = MultiTaskMEDClassifier(alpha=1.0).fit(X, y, tasks=tasks)
    sparse = MultiTaskMEDClassifier(alpha=1.0).fit(sp.csr_matrix(X), y, tasks=tasks)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X), tasks=tasks),
                               dense.decision_function(X, tasks=tasks), atol=1e-10)


def test_one_task_is_the_single_task_estimator():
    Xs, ys = make_tasks(M=1, T=30, D=4, seed=4)
    multi = MultiTaskMEDClassifier(selection=None, kernel="rbf").fit(Xs[0], ys[0])
    single = MEDClassifier(kernel="rbf").fit(Xs[0], ys[0])
    np.testing.assert_array_equal(multi.dual_coef_, single.dual_coef_)
    np.testing.assert_array_equal(multi.decision_function(Xs[0]), single.decision_function(Xs[0]))
    np.testing.assert_array_equal(multi.classes_, single.classes_)
    assert multi.n_tasks_ == 1 and multi.score(Xs[0], ys[0]) == single.score(Xs[0], ys[0])


def test_stacked_classes_are_shared_and_every_task_needs_both():
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=5)
    X, y, tasks = stack_tasks(Xs, [np.where(t > 0, "spam", "ham") for t in ys])
    est = MultiTaskMEDClassifier(alpha=1.0).fit(X, y, tasks=tasks)
    assert est.classes_.tolist() == ["ham", "spam"]
    assert set(est.predict(X, tasks=tasks)) <= {"ham", "spam"}
    one_class = y.copy()
    one_class[tasks == 1] = "spam"
    with pytest.raises(ValueError, match=r"task 1 has only one class \('spam'\)"):
        MultiTaskMEDClassifier().fit(X, one_class, tasks=tasks)
    with pytest.raises(ValueError, match="Only binary"):
        MultiTaskMEDClassifier().fit(X, np.arange(len(y)) % 3, tasks=tasks)


def test_score_is_the_mean_over_tasks_present():
    Xs, ys = make_tasks(M=3, T=20, D=4, seed=6, noise=2.0)
    X, y, tasks = stack_tasks(Xs, ys)
    est = MultiTaskMEDClassifier(alpha=1.0).fit(X, y, tasks=tasks)
    per_task = [np.mean(p == t) for p, t in zip(est.predict(Xs), ys)]
    assert est.score(X, y, tasks=tasks) == pytest.approx(np.mean(per_task))
    assert est.score(Xs, ys) == pytest.approx(np.mean(per_task))
    two = tasks > 0
    assert est.score(X[two], y[two], tasks=tasks[two]) == pytest.approx(np.mean(per_task[1:]))


@pytest.mark.parametrize("tasks, message", [
    (None, "fitted on 3 tasks: give the task of each row"),
    (np.zeros(5), "labels, one per row of X"),
    (np.r_[0.0, 1.0, np.nan, 2.0, 0.0, 1.0], "NaN, infinite or missing labels"),
    (np.array([0, 1, None, 2, 0, 1], dtype=object), "NaN, infinite or missing labels"),
    (np.array([0, 1, 7, 2, 0, 1]), r"holds tasks \[7\] that MultiTaskMEDClassifier was not fitted on"),
    (np.array([0, "a", 1, 2, 0, 1], dtype=object), "labels of one kind"),
    (np.zeros((6, 2)), "labels, one per row of X"),
])
def test_bad_tasks_at_prediction_are_named(tasks, message):
    Xs, ys = make_tasks(M=3, T=10, D=4, seed=7)
    est = MultiTaskMEDClassifier().fit(*stack_tasks(Xs, ys)[:2], tasks=np.repeat([0, 1, 2], 10))
    with pytest.raises(ValueError, match=message):
        est.predict(Xs[0][:6], tasks=tasks)


@pytest.mark.parametrize("tasks, message", [
    (np.zeros(7), "labels, one per row of X"),
    (np.r_[np.zeros(10), np.full(10, np.inf)], "NaN, infinite or missing labels"),
    (np.array([1 + 1j] * 20), "complex"),
])
def test_bad_tasks_at_fit_are_named(tasks, message):
    Xs, ys = make_tasks(M=2, T=10, D=4, seed=8)
    X, y, _ = stack_tasks(Xs, ys)
    with pytest.raises(ValueError, match=message):
        MultiTaskMEDClassifier().fit(X, y, tasks=tasks)


def test_lists_and_tasks_do_not_mix():
    Xs, ys = make_tasks(M=2, T=10, D=4, seed=9)
    est = MultiTaskMEDClassifier().fit(Xs, ys)
    for call in (lambda: MultiTaskMEDClassifier().fit(Xs, ys, tasks=[0, 1]),
                 lambda: est.predict(Xs, tasks=[0, 1]),
                 lambda: est.decision_function(Xs, tasks=[0, 1])):
        with pytest.raises(ValueError, match="tasks= goes with one stacked X"):
            call()
