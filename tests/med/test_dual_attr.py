"""A fitted estimator's program: dual_ is the dual it solved, multipliers from one's own CVXPY
solve load back into it, and to_cvxpy(parameters=True) re-solves at another C or alpha."""

import pickle

import numpy as np
import pytest

from medmtl.kernels import LinearKernel, RBFKernel
from medmtl.med import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
    feature_selection_dual,
    med_path,
)
from medmtl.model_selection import stack_tasks
from med_testdata import make_regression_tasks, make_tasks

cp = pytest.importorskip("cvxpy")
if "CLARABEL" not in cp.installed_solvers():
    pytest.skip("Clarabel is not installed", allow_module_level=True)

# Clarabel pushed past its defaults: on the exponential cone it may then report reduced
# accuracy ("Solution may be inaccurate") with an answer still within 1e-6 of the optimum
TIGHT = dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, tol_ktratio=1e-10)
pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
# the fitted models solved as tightly, so that both answers are within 1e-10 of the optimum
EXACT = {"solver_options": {"kkt_tol": 1e-10}}


def cases():
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=1)
    Rs, rs = make_regression_tasks(M=2, T=16, D=4, seed=2)
    return [
        (MEDClassifier(C=0.5, **EXACT), (Xs[0], ys[0])),
        (MEDClassifier(selection="kernels", kernels=[RBFKernel(0.3), LinearKernel()], alpha=2.0, **EXACT),
         (Xs[0], ys[0])),
        (MultiTaskMEDClassifier(alpha=2.0, **EXACT), (Xs, ys)),
        (MultiTaskMEDRegressor(alpha=2.0, epsilon=0.05, **EXACT), (Rs, rs)),
        (AdaptivePoolingClassifier(alpha=2.0, **EXACT), (Xs, ys)),
        (MEDRegressor(epsilon=0.05, C=2.0, **EXACT), (Rs[0], rs[0])),
    ]


def values(model, X):
    respond = model.decision_function if hasattr(model, "decision_function") else model.predict
    return np.hstack(respond(X))


@pytest.mark.parametrize("case", range(6))
def test_the_cvxpy_solve_of_dual_loads_back_into_the_model(case):
    model, data = cases()[case]
    model.fit(*data)
    before = values(model, data[0])
    assert model.dual_.objective(model.dual_coef_.ravel() if model.dual_coef_.ndim == 1 else model._lam) == \
        pytest.approx(model.objective_, rel=1e-12)
    problem, lam = model.dual_.to_cvxpy()
    J = problem.solve(solver=cp.CLARABEL, **TIGHT)
    assert J == pytest.approx(model.objective_, rel=1e-8)
    model.set_multipliers(lam.value)
    np.testing.assert_allclose(values(model, data[0]), before, atol=1e-6)
    assert model.solver_status_ == "given" and model.solver_info_["duality_gap"] < 1e-6


def test_dual_is_the_builders_dual_in_the_fits_row_order_and_label_coding():
    Xs, ys = make_tasks(M=2, T=12, D=3, seed=3)
    X, y, tasks = stack_tasks(Xs, [np.where(t > 0, "yes", "no") for t in ys], ["b", "a"])
    order = np.random.default_rng(0).permutation(X.shape[0])
    model = MultiTaskMEDClassifier(alpha=2.0, C=0.7).fit(X[order], y[order], tasks=tasks[order])
    # tasks in the order of tasks_, each task's rows in the order given; "yes" (classes_[1]) is +1
    rows = [order[tasks[order] == t] for t in model.tasks_]
    signs = [np.where(y[r] == model.classes_[1], 1, -1) for r in rows]
    built = feature_selection_dual([X[r] for r in rows], signs, C=0.7, alpha=2.0)
    lam = np.random.default_rng(1).uniform(0, 0.7, built.n)
    for name in ("c", "a", "lo", "hi"):
        np.testing.assert_array_equal(getattr(model.dual_, name), getattr(built, name))
    assert model.dual_.objective(lam) == pytest.approx(built.objective(lam), rel=1e-12)
    assert model.dual_.objective(model.dual_coef_) == pytest.approx(model.objective_, rel=1e-12)


def test_a_solve_with_an_added_constraint_predicts_with_its_own_multipliers_and_biases():
    Xs, ys = make_tasks(M=2, T=20, D=4, seed=4)
    X, y, tasks = stack_tasks(Xs, ys)
    model = MultiTaskMEDClassifier(alpha=2.0, C=1.0).fit(X, y, tasks=tasks)
    problem, lam = model.dual_.to_cvxpy()
    # one constraint of our own: no example of the first task may carry more than 0.2
    cap = lam[model.dual_.groups[0]] <= 0.2
    constrained = cp.Problem(problem.objective, problem.constraints + [cap])
    J = constrained.solve(solver=cp.CLARABEL, **TIGHT)
    assert J < model.objective_
    biases = problem.constraints[2].dual_value
    model.set_multipliers(lam.value, intercepts=biases)
    assert model.objective_ == pytest.approx(J, rel=1e-8)
    assert np.max(model.dual_coef_[model.dual_.groups[0]]) <= 0.2 + 1e-9
    # the model is the one of these multipliers: w_m = s * sum_t y_t lam_t x_t, f = x w_m + b_m
    s = model.dual_.switch_posterior(model.dual_coef_)
    signs = np.where(y == model.classes_[1], 1.0, -1.0)
    for m, g in enumerate(model.dual_.groups):
        w = s * ((signs[g] * model.dual_coef_[g]) @ X[g])
        np.testing.assert_allclose(model.decision_function(X[g], tasks=tasks[g]), X[g] @ w + biases[m], atol=1e-8)
    np.testing.assert_allclose(model.intercept_, biases)


def test_multipliers_that_are_not_feasible_are_refused():
    Xs, ys = make_tasks(M=1, T=10, D=3, seed=5)
    model = MEDClassifier(selection="features").fit(Xs[0], ys[0])
    with pytest.raises(ValueError, match="not feasible"):
        model.set_multipliers(np.full(10, 2.0))
    with pytest.raises(ValueError, match="10 finite values"):
        model.set_multipliers(np.zeros(9))
    with pytest.raises(ValueError, match="one per task"):
        model.set_multipliers(np.zeros(10), intercepts=[0.0, 1.0])


def test_parameters_make_a_dpp_problem_that_re_solves_at_another_C_and_alpha():
    Xs, ys = make_tasks(M=2, T=15, D=4, seed=6)
    model = MultiTaskMEDClassifier(alpha=2.0, C=1.0).fit(Xs, ys)
    problem, _ = model.dual_.to_cvxpy(parameters=True)
    assert problem.is_dpp() and set(problem.param_dict) == {"C", "alpha"}
    assert problem.solve(solver=cp.CLARABEL, **TIGHT) == pytest.approx(model.objective_, rel=1e-8)
    for C, alpha in [(3.0, 2.0), (3.0, 0.25), (0.5, 0.0)]:
        problem.param_dict["C"].value, problem.param_dict["alpha"].value = C, alpha
        J = problem.solve(solver=cp.CLARABEL, **TIGHT)
        fresh, _ = model.dual_.replace(C=C, alpha=alpha).to_cvxpy()
        assert J == pytest.approx(fresh.solve(solver=cp.CLARABEL, **TIGHT), rel=1e-8)
    with pytest.raises(ValueError, match="bound_at"):
        model.dual_.to_cvxpy(bound_at=model.dual_coef_, parameters=True)


def test_dual_is_detached_from_the_solvers_caches_and_pickles():
    Xs, ys = make_tasks(M=2, T=15, D=4, seed=7)
    path = med_path(MultiTaskMEDClassifier(), Xs, ys, Cs=[0.5, 2.0], alphas=[1.0, 3.0])
    for C, alpha, fitted in zip(path.Cs, path.alphas, path.estimators):
        assert fitted.dual_.workspace.cache == {} and np.all(fitted.dual_.hi == C) and fitted.dual_.alpha == alpha
    copy = pickle.loads(pickle.dumps(path.estimators[1]))
    assert copy.dual_.objective(copy.dual_coef_) == pytest.approx(path.objectives[1], rel=1e-12)
