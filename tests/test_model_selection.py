"""scikit-learn's model selection on the multi-task estimators: splits within tasks, the
project's protocol reproduced on the same split, and the per-task lists refused."""

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, KFold, cross_val_predict, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from medmtl.evaluation import mean_auc
from medmtl.med import AdaptivePoolingClassifier, MultiTaskMEDClassifier, MultiTaskMEDRegressor
from medmtl.model_selection import TaskStratifiedKFold, make_task_scorer, mean_auc_scorer, stack_tasks
from medmtl.nmtf import MTS3FLC


def make_tasks(M=3, T=30, D=5, seed=0):
    rng = np.random.default_rng(seed)
    Xs = [rng.normal(size=(T + 3 * m, D)) for m in range(M)]
    ys = [np.where(X[:, 0] + 0.5 * X[:, m % D] + rng.normal(scale=0.7, size=len(X)) > 0, 1, -1)
          for m, X in enumerate(Xs)]
    return Xs, ys


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_stratified_folds_hold_part_of_every_task():
    Xs, ys = make_tasks()
    X, y, tasks = stack_tasks(Xs, ys, ["a", "b", "c"])
    folds = list(TaskStratifiedKFold(3, shuffle=True, random_state=0).split(X, y, groups=tasks))
    tested = np.concatenate([test for _, test in folds])
    np.testing.assert_array_equal(np.sort(tested), np.arange(len(y)))  # every row tested once
    for train, test in folds:
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == len(y)
        for t in "abc":
            in_task = tasks == t
            share = np.sum(in_task[test]) / np.sum(in_task)
            assert abs(share - 1 / 3) < 0.05
            for label in (-1, 1):  # stratified within the task
                n_class = np.sum(in_task & (y == label))
                assert abs(np.sum(in_task[test] & (y[test] == label)) - n_class / 3) <= 1
    again = list(TaskStratifiedKFold(3, shuffle=True, random_state=0).split(X, y, groups=tasks))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))


def test_the_splitter_refuses_lists_and_missing_tasks():
    Xs, ys = make_tasks()
    with pytest.raises(TypeError, match="splits the stacked form"):
        next(TaskStratifiedKFold(2).split(Xs, ys))
    X, y, tasks = stack_tasks(Xs, ys)
    with pytest.raises(ValueError, match="needs the task of each sample"):
        next(TaskStratifiedKFold(2).split(X, y))
    with pytest.raises(ValueError, match="task 0 has 30 samples; cannot split it into 31 folds"):
        next(TaskStratifiedKFold(31).split(X, y, groups=tasks))
    with pytest.raises(ValueError, match="n_splits"):
        TaskStratifiedKFold(1)


def test_cross_val_score_splits_within_tasks_and_reproduces_a_hand_loop(routing):
    # the same folds by hand, on per-task lists: the numbers of the project's own way
    Xs, ys = make_tasks()
    X, y, tasks = stack_tasks(Xs, ys)
    cv = TaskStratifiedKFold(3, shuffle=True, random_state=1)
    est = MultiTaskMEDClassifier(alpha=1.0, C=2.0)
    scores = cross_val_score(est, X, y, params={"tasks": tasks}, cv=cv, scoring=mean_auc_scorer)
    by_hand = []
    for train, test in cv.split(X, y, groups=tasks):
        model = MultiTaskMEDClassifier(alpha=1.0, C=2.0).fit([X[train][tasks[train] == m] for m in range(3)],
                                                             [y[train][tasks[train] == m] for m in range(3)])
        Xte = [X[test][tasks[test] == m] for m in range(3)]
        by_hand.append(mean_auc([y[test][tasks[test] == m] for m in range(3)], model.decision_function(Xte)))
    np.testing.assert_array_equal(scores, by_hand)
    # the default score: the mean over tasks of each task's accuracy
    accuracy = cross_val_score(est, X, y, params={"tasks": tasks}, cv=cv)
    assert accuracy.shape == (3,) and np.all(accuracy > 0.6)


def test_grid_search_and_pipeline_route_tasks(routing):
    Xs, ys = make_tasks()
    X, y, tasks = stack_tasks(Xs, ys, ["x", "y", "z"])
    X = 10.0 * X + 3.0
    pipe = make_pipeline(StandardScaler(), MultiTaskMEDClassifier(alpha=1.0))
    search = GridSearchCV(pipe, {"multitaskmedclassifier__C": [0.1, 1.0, 10.0]}, scoring=mean_auc_scorer,
                          cv=TaskStratifiedKFold(3))
    search.fit(X, y, tasks=tasks)
    # each candidate's score is the mean of cross_val_score over the same folds
    for params, mean in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
        again = cross_val_score(pipe.set_params(**params), X, y, params={"tasks": tasks},
                                cv=TaskStratifiedKFold(3), scoring=mean_auc_scorer)
        assert mean == pytest.approx(again.mean(), abs=1e-12)
    best = search.best_estimator_
    scaled = StandardScaler().fit(X)
    direct = MultiTaskMEDClassifier(alpha=1.0, C=search.best_params_["multitaskmedclassifier__C"]).fit(
        scaled.transform(X), y, tasks=tasks)
    np.testing.assert_allclose(best.decision_function(X, tasks=tasks),
                               direct.decision_function(scaled.transform(X), tasks=tasks), atol=1e-10)
    assert search.score(X, y, tasks=tasks) == pytest.approx(mean_auc_scorer(best, X, y, tasks=tasks))
    # cross_val_predict passes no metadata to predict (scikit-learn): a clear error, not a guess
    with pytest.raises(ValueError, match="give the task of each row"):
        cross_val_predict(pipe, X, y, params={"tasks": tasks}, cv=TaskStratifiedKFold(3))


def test_a_regressor_and_pooling_in_model_selection(routing):
    Xs, ys = make_tasks()
    X, y, tasks = stack_tasks(Xs, ys)
    target = X[:, 0] * 2.0 + tasks
    r2 = cross_val_score(MultiTaskMEDRegressor(alpha=1.0, C=10.0, epsilon=0.01), X, target,
                         params={"tasks": tasks}, cv=TaskStratifiedKFold(3))
    assert np.all(r2 > 0.95)
    auc = cross_val_score(AdaptivePoolingClassifier(alpha=1.0), X, y, params={"tasks": tasks},
                          cv=TaskStratifiedKFold(3), scoring=mean_auc_scorer)
    assert np.all(auc > 0.7)


def test_task_scorer_is_the_mean_over_tasks():
    Xs, ys = make_tasks()
    X, y, tasks = stack_tasks(Xs, ys)
    model = MultiTaskMEDClassifier(alpha=1.0).fit(Xs, ys)
    assert mean_auc_scorer(model, X, y, tasks=tasks) == mean_auc(ys, model.decision_function(Xs))
    from sklearn.metrics import mean_squared_error

    mse = make_task_scorer(mean_squared_error, greater_is_better=False)
    expected = -np.mean([mean_squared_error(t, p) for t, p in zip(ys, model.predict(Xs))])
    assert mse(model, X, y, tasks=tasks) == pytest.approx(expected)
    with pytest.raises(ValueError, match="response_method"):
        make_task_scorer(mean_squared_error, response_method="predict_proba")


def test_without_routing_the_missing_tasks_are_named():
    Xs, ys = make_tasks()
    X, y, tasks = stack_tasks(Xs, ys)
    with pytest.raises(ValueError, match="with metadata routing off"):
        cross_val_score(MultiTaskMEDClassifier(), X, y, params={"tasks": tasks}, groups=tasks,
                        cv=TaskStratifiedKFold(3), error_score="raise")


@pytest.mark.parametrize("run", [
    lambda est, Xs, ys: cross_val_score(est, Xs, ys, cv=2, error_score="raise"),
    lambda est, Xs, ys: cross_val_score(est, Xs, ys, cv=KFold(3), error_score="raise"),
    lambda est, Xs, ys: GridSearchCV(est, {"C": [1.0, 2.0]}, cv=2, error_score="raise").fit(Xs, ys),
    lambda est, Xs, ys: cross_val_predict(est, Xs, ys, cv=2),
    lambda est, Xs, ys: make_pipeline(None, est).fit(Xs, ys),
])
@pytest.mark.parametrize("make", [MultiTaskMEDClassifier, AdaptivePoolingClassifier, MTS3FLC])
def test_scikit_learn_given_per_task_lists_raises(run, make):
    # it would index the list as samples: fit on some tasks and score on others
    Xs, ys = make_tasks(M=4)
    if make is MTS3FLC:
        Xs = [np.abs(X) for X in Xs]
    with pytest.raises(TypeError, match=r"got per-task lists from scikit-learn \(sklearn\.\w+"):
        run(make(), Xs, ys)


def test_lists_stay_for_python_use():
    Xs, ys = make_tasks()
    model = MultiTaskMEDClassifier(alpha=1.0).fit(Xs, ys)
    assert [len(p) for p in model.predict(Xs)] == [len(y) for y in ys]
    assert 0.7 < model.score(Xs, ys) <= 1.0


@pytest.mark.slow
def test_dermatology_through_cross_val_score_equals_the_protocol(routing):
    """The protocol's split (JMLR Fig. 1, one quick cell) through scikit-learn's tools.

    dermatology_fold scales inputs into [0, 1] on the training rows, chooses (C, alpha) on
    validation mean AUC along a warm-started path, refits on the training rows and reports
    the test mean AUC. The same split as stacked indices gives, through a Pipeline of
    MinMaxScaler and MultiTaskMEDClassifier: the same validation surface from GridSearchCV (to
    the solver's tolerance),
    the same choice, and the same test AUC from cross_val_score.
    """
    from medmtl.datasets import load_dermatology
    from medmtl.experiments.med_figures import DERMATOLOGY_QUICK_GRID, dermatology_fold
    from medmtl.experiments.splits import split_shared_rows
    from medmtl.experiments.med_method import METHOD, fit_options

    size, fold, seed, grid = 40, 0, 0, DERMATOLOGY_QUICK_GRID
    protocol = dermatology_fold(size, fold, seed, method=METHOD, **grid)
    ds = load_dermatology()
    X, y, tasks = stack_tasks(ds.Xs, ds.ys)
    starts = np.cumsum([0] + [len(t) for t in ds.ys])
    # one split of the patients shared by the six tasks (the protocol's), as stacked indices
    rows = split_shared_rows(ds, size, 0.5, random_state=[seed, size, fold])[3]
    train, val, test = (np.concatenate([a + part for a in starts[:-1]]) for part in rows)
    pipe = make_pipeline(MinMaxScaler(), MultiTaskMEDClassifier(selection="features", **fit_options(METHOD)))
    candidates = {"multitaskmedclassifier__C": grid["Cs"], "multitaskmedclassifier__alpha": grid["alphas"]}
    search = GridSearchCV(pipe, candidates, cv=[(train, val)], scoring=mean_auc_scorer, refit=False)
    search.fit(X, y, tasks=tasks)
    surface = {(c, a): s for c, a, s in protocol["validation_surface"]}
    for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
        # the protocol warm-starts its path, GridSearchCV fits each point cold: the same optimum
        # to the solver's tolerance, which can reorder a near-tied pair of validation scores
        assert score == pytest.approx(surface[params["multitaskmedclassifier__C"],
                                              params["multitaskmedclassifier__alpha"]], abs=1e-3)
    chosen = {"C": search.best_params_["multitaskmedclassifier__C"],
              "alpha": search.best_params_["multitaskmedclassifier__alpha"]}
    assert chosen == {k: protocol["chosen"][k] for k in ("C", "alpha")}
    pipe.set_params(multitaskmedclassifier__C=chosen["C"], multitaskmedclassifier__alpha=chosen["alpha"])
    auc, = cross_val_score(pipe, X, y, params={"tasks": tasks}, cv=[(train, test)], scoring=mean_auc_scorer)
    assert auc == protocol["multitask"]
