"""The CV estimators: the same scores as a hand-written loop over the same folds, scikit-learn's
cv_results_ shape, the refit model, and scikit-learn's model selection without routing."""

import joblib
import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_val_score

from medmtl.kernels import RBFKernel
from medmtl.med import (
    AdaptivePoolingClassifier,
    AdaptivePoolingClassifierCV,
    MEDClassifier,
    MEDClassifierCV,
    MEDRegressor,
    MEDRegressorCV,
    MultiTaskMEDClassifier,
    MultiTaskMEDClassifierCV,
    MultiTaskMEDRegressor,
    MultiTaskMEDRegressorCV,
)
from medmtl.model_selection import TaskStratifiedKFold, make_task_scorer, mean_auc_scorer, stack_tasks
from med_testdata import make_regression_tasks, make_tasks

CS, ALPHAS = [0.1, 1.0, 10.0], [0.5, 5.0]


def stacked_tasks(M=3, T=24, D=4, seed=0):
    Xs, ys = make_tasks(M=M, T=T, D=D, seed=seed, noise=1.0)
    return stack_tasks(Xs, ys, ["a", "b", "c"][:M])


def snake(grid):
    """The grid's indices in the order the CV estimators walk it: up C at the first alpha,
    down at the next, ..."""
    Cs = sorted({p["C"] for p in grid})
    alphas = sorted({p.get("alpha") for p in grid}, key=lambda a: -1 if a is None else a)
    order = []
    for i, a in enumerate(alphas):
        for C in (Cs if i % 2 == 0 else Cs[::-1]):
            order.append(next(j for j, p in enumerate(grid) if p["C"] == C and p.get("alpha") == a))
    return order


def hand_loop(estimator, X, y, tasks, folds, grid, scorer, warm=False):
    """Every grid point fitted on every fold's training rows, scored on its test rows: cold,
    or (``warm``) by one estimator with ``warm_start=True`` walking the grid as the CV
    estimators do, for scores that vary continuously with the solution (R^2)."""
    scores = np.empty((len(folds), len(grid)))
    for k, (train, test) in enumerate(folds):
        model = clone(estimator).set_params(warm_start=warm)
        for j in snake(grid) if warm else range(len(grid)):
            model.set_params(**grid[j])
            if tasks is None:
                model.fit(X[train], y[train])
                scores[k, j] = scorer(model, X[test], y[test])
            else:
                model.fit(X[train], y[train], tasks=tasks[train])
                scores[k, j] = scorer(model, X[test], y[test], tasks=tasks[test])
    return scores


def assert_same_search(cv, scores, grid):
    results = cv.cv_results_
    assert results["params"] == grid
    for k in range(scores.shape[0]):
        np.testing.assert_allclose(results[f"split{k}_test_score"], scores[k], rtol=0, atol=1e-10)
    np.testing.assert_allclose(results["mean_test_score"], scores.mean(axis=0), rtol=0, atol=1e-10)
    np.testing.assert_allclose(results["std_test_score"], scores.std(axis=0), rtol=0, atol=1e-10)
    best = int(np.argmax(scores.mean(axis=0)))
    assert cv.best_index_ == best and cv.best_params_ == grid[best]
    assert results["rank_test_score"][best] == 1


def test_multitask_classifier_scores_as_a_hand_written_loop():
    X, y, tasks = stacked_tasks()
    cv = MultiTaskMEDClassifierCV(Cs=CS, alphas=ALPHAS, cv=3).fit(X, y, tasks=tasks)
    folds = list(TaskStratifiedKFold(3).split(X, y, groups=tasks))
    grid = [{"C": C, "alpha": a} for C in CS for a in ALPHAS]
    scores = hand_loop(MultiTaskMEDClassifier(), X, y, tasks, folds, grid, mean_auc_scorer)
    assert_same_search(cv, scores, grid)
    # the papers' score: each task's AUC, averaged
    train, test = folds[0]
    model = MultiTaskMEDClassifier(**grid[0]).fit(X[train], y[train], tasks=tasks[train])
    f = model.decision_function(X[test], tasks=tasks[test])
    aucs = [roc_auc_score(y[test][tasks[test] == t], f[tasks[test] == t]) for t in "abc"]
    assert cv.cv_results_["split0_test_score"][0] == pytest.approx(np.mean(aucs), abs=1e-12)


def test_single_task_classifier_and_regressor_score_as_a_hand_written_loop():
    Xs, ys = make_tasks(M=1, T=40, D=4, seed=2, noise=1.0)
    X, y = Xs[0], ys[0]
    cv = MEDClassifierCV(kernel="rbf", Cs=CS, cv=4).fit(X, y)
    folds = list(StratifiedKFold(4).split(X, y))
    grid = [{"C": C} for C in CS]
    assert_same_search(cv, hand_loop(MEDClassifier(kernel="rbf"), X, y, None, folds, grid, mean_auc_scorer), grid)
    assert cv.alpha_ is None and "param_alpha" not in cv.cv_results_

    Rs, rs = make_regression_tasks(M=1, T=30, D=4, seed=3)
    reg = MEDRegressorCV(selection="features", Cs=CS, alphas=ALPHAS, epsilon=0.05, cv=3).fit(Rs[0], rs[0])
    folds = list(KFold(3).split(Rs[0]))
    grid = [{"C": C, "alpha": a} for C in CS for a in ALPHAS]

    def r2(model, X, y):
        return r2_score(y, model.predict(X))

    scores = hand_loop(MEDRegressor(selection="features", epsilon=0.05), Rs[0], rs[0], None, folds, grid, r2,
                       warm=True)
    assert_same_search(reg, scores, grid)


def test_pooling_and_multitask_regression_score_as_a_hand_written_loop():
    X, y, tasks = stacked_tasks(seed=4)
    cv = AdaptivePoolingClassifierCV(kernel=RBFKernel(0.3), Cs=[0.5, 5.0], alphas=ALPHAS, cv=3)
    cv.fit(X, y, tasks=tasks)
    folds = list(TaskStratifiedKFold(3).split(X, y, groups=tasks))
    grid = [{"C": C, "alpha": a} for C in [0.5, 5.0] for a in ALPHAS]
    scores = hand_loop(AdaptivePoolingClassifier(kernel=RBFKernel(0.3)), X, y, tasks, folds, grid, mean_auc_scorer)
    assert_same_search(cv, scores, grid)

    Rs, rs = make_regression_tasks(M=2, T=24, D=4, seed=5)
    R, r, rt = stack_tasks(Rs, rs)
    reg = MultiTaskMEDRegressorCV(Cs=[1.0, 10.0], alphas=ALPHAS, epsilon=0.05, cv=3).fit(R, r, tasks=rt)
    folds = list(TaskStratifiedKFold(3).split(R, r, groups=rt))
    grid = [{"C": C, "alpha": a} for C in [1.0, 10.0] for a in ALPHAS]
    mean_r2 = make_task_scorer(r2_score)
    scores = hand_loop(MultiTaskMEDRegressor(epsilon=0.05), R, r, rt, folds, grid, mean_r2, warm=True)
    assert_same_search(reg, scores, grid)


def test_refit_is_the_cold_fit_at_the_best_point_and_lists_give_the_same_search():
    Xs, ys = make_tasks(M=3, T=24, D=4, seed=6, noise=1.0)
    X, y, tasks = stack_tasks(Xs, ys)
    stacked = MultiTaskMEDClassifierCV(Cs=CS, alphas=ALPHAS, cv=3).fit(X, y, tasks=tasks)
    lists = MultiTaskMEDClassifierCV(Cs=CS, alphas=ALPHAS, cv=3).fit(Xs, ys)
    np.testing.assert_array_equal(lists.cv_results_["mean_test_score"], stacked.cv_results_["mean_test_score"])
    cold = MultiTaskMEDClassifier(**stacked.best_params_).fit(X, y, tasks=tasks)
    np.testing.assert_array_equal(stacked.decision_function(X, tasks=tasks), cold.decision_function(X, tasks=tasks))
    np.testing.assert_array_equal(stacked.coef_, cold.coef_)
    assert stacked.dual_.n == cold.dual_.n and stacked.C_ == cold.C
    assert stacked.score(X, y, tasks=tasks) == pytest.approx(mean_auc_scorer(cold, X, y, tasks=tasks))
    assert isinstance(lists.predict(Xs), list) and lists.score(Xs, ys) == pytest.approx(stacked.score(X, y, tasks))


def test_cv_results_have_grid_search_cvs_shape():
    X, y, tasks = stacked_tasks(seed=7)
    cv = MultiTaskMEDClassifierCV(Cs=CS, alphas=ALPHAS, cv=3, refit=False).fit(X, y, tasks=tasks)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(MultiTaskMEDClassifier(), {"C": CS, "alpha": ALPHAS}, scoring=mean_auc_scorer,
                              cv=TaskStratifiedKFold(3)).fit(X, y, tasks=tasks)
    ours, theirs = cv.cv_results_, search.cv_results_
    for key in ("params", "mean_test_score", "std_test_score", "rank_test_score", "split2_test_score"):
        assert key in ours
    assert ours["params"] == theirs["params"]
    np.testing.assert_array_equal(ours["param_C"], theirs["param_C"])
    np.testing.assert_allclose(ours["mean_test_score"], theirs["mean_test_score"], atol=1e-10)
    np.testing.assert_array_equal(ours["rank_test_score"], theirs["rank_test_score"])
    assert cv.best_params_ == search.best_params_
    with pytest.raises(AttributeError, match="refit=False"):
        cv.predict(X, tasks=tasks)


def test_folds_in_parallel_give_the_same_scores():
    X, y, tasks = stacked_tasks(seed=8)
    one = MultiTaskMEDClassifierCV(Cs=CS[:2], alphas=ALPHAS, cv=3, refit=False).fit(X, y, tasks=tasks)
    # threads: the same code path as processes, without starting a pool in a test
    with joblib.parallel_backend("threading"):
        two = MultiTaskMEDClassifierCV(Cs=CS[:2], alphas=ALPHAS, cv=3, refit=False, n_jobs=2).fit(X, y, tasks=tasks)
    np.testing.assert_array_equal(one.cv_results_["mean_test_score"], two.cv_results_["mean_test_score"])


def test_bad_grids_and_scorings_are_refused():
    X, y, tasks = stacked_tasks(seed=9)
    with pytest.raises(ValueError, match="Cs must be"):
        MultiTaskMEDClassifierCV(Cs=[0.0, 1.0]).fit(X, y, tasks=tasks)
    with pytest.raises(ValueError, match="averaged over tasks"):
        MultiTaskMEDClassifierCV(Cs=[1.0], alphas=[1.0], scoring="f1", cv=3).fit(X, y, tasks=tasks)
    with pytest.raises(ValueError, match="unknown method"):
        MultiTaskMEDClassifierCV(Cs=[1.0], alphas=[1.0], method="no-such-method").fit(X, y, tasks=tasks)


def test_grid_search_and_cross_val_score_without_routing_fail_loudly():
    X, y, tasks = stacked_tasks(seed=10)
    with pytest.raises(ValueError, match="metadata routing") as err:
        GridSearchCV(MultiTaskMEDClassifier(), {"C": [0.1, 1.0]}, cv=3).fit(X, y, tasks=tasks)
    assert "MultiTaskMEDClassifierCV" in str(err.value)
    with pytest.raises(ValueError, match="metadata routing"):
        cross_val_score(MultiTaskMEDClassifier(), X, y, params={"tasks": tasks}, cv=3)
    with pytest.raises(ValueError, match="metadata routing"):
        GridSearchCV(MultiTaskMEDClassifierCV(Cs=[1.0], alphas=[1.0], cv=3), {"Cs": [[1.0]]}, cv=3).fit(
            X, y, tasks=tasks)
    # with routing on, both work, and so does a plain fit with tasks
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_val_score(MultiTaskMEDClassifier(), X, y, params={"tasks": tasks},
                                 cv=TaskStratifiedKFold(3), scoring=mean_auc_scorer)
    assert np.all(np.isfinite(scores))
    MultiTaskMEDClassifier().fit(X, y, tasks=tasks)


@pytest.mark.parametrize("Estimator", [MEDClassifierCV, MEDRegressorCV, MultiTaskMEDClassifierCV,
                                       MultiTaskMEDRegressorCV, AdaptivePoolingClassifierCV])
def test_scikit_learns_conventions_for_parameters(Estimator):
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_set_params,
    )

    name, estimator = Estimator.__name__, Estimator()
    for check in (check_parameters_default_constructible, check_no_attributes_set_in_init,
                  check_get_params_invariance, check_set_params):
        check(name, estimator)
    names = set(Estimator._get_param_names())
    assert {"Cs", "alphas", "cv", "scoring", "refit", "n_jobs"} <= names
    assert not names & {"C", "alpha", "rho", "warm_start"}
    assert names - {"Cs", "alphas", "cv", "scoring", "refit", "n_jobs"} <= set(Estimator._estimator._get_param_names())


def test_a_fitted_cv_estimator_pickles_and_clones():
    import pickle

    X, y, tasks = stacked_tasks(seed=11)
    cv = MultiTaskMEDClassifierCV(Cs=[1.0], alphas=[1.0, 4.0], cv=3).fit(X, y, tasks=tasks)
    again = pickle.loads(pickle.dumps(cv))
    np.testing.assert_array_equal(again.decision_function(X, tasks=tasks), cv.decision_function(X, tasks=tasks))
    assert clone(cv).get_params() == cv.get_params() and not hasattr(clone(cv), "cv_results_")
