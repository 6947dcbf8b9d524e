"""What every method measures the same way (medmtl.med.solvers.kkt): the duality gap that
certifies an answer, and a feasible point from one that nearly meets the equalities."""

import numpy as np
import pytest

from medmtl.med.builders import adaptive_pooling_dual, feature_selection_dual, svm_dual
from medmtl.med.dual import MEDDual
from medmtl.med.solvers import solve
from medmtl.med.bound import log_switch_term, switch_posterior
from medmtl.med.solvers.kkt import (_best_bias_gap, duality_gap, gap_scale, hessian_diagonal, meet_equalities,
                                    segment_gain)


def _duals():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 5)) * [1e-2, 1.0, 1.0, 10.0, 1e2]
    y = np.where(X[:, 1] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    Xs, ys = [X[:15], X[15:]], [y[:15], y[15:]]
    return {
        "svm": svm_dual([X], [y], C=1.0),
        "features": feature_selection_dual(Xs, ys, C=2.0, alpha=5.0),
        "regression": feature_selection_dual([X], [X[:, 1] + 0.1 * y], C=1.0, alpha=1.0,
                                             regression=True, epsilon=0.05),
        "pooling": adaptive_pooling_dual(Xs, ys, C=1.0, alpha=2.0),
    }


@pytest.mark.parametrize("kind", ["svm", "features", "regression", "pooling"])
def test_the_duality_gap_bounds_the_distance_to_the_optimum_everywhere(kind):
    dual = _duals()[kind]
    best = solve(dual, "direct").objective
    rng = np.random.default_rng(0)
    for _ in range(20):
        lam = dual.project(rng.uniform(dual.lo, dual.hi) * rng.uniform())
        assert duality_gap(dual, lam) >= best - dual.objective(lam) - 1e-9 * abs(best)


@pytest.mark.parametrize("kind", ["svm", "features", "regression", "pooling"])
def test_the_duality_gap_vanishes_at_the_optimum(kind):
    dual = _duals()[kind]
    sol = solve(dual, "ssnal", options={"kkt_tol": 1e-10})
    assert duality_gap(dual, sol.lam) <= 1e-7 * abs(sol.objective)


def test_the_best_bias_is_the_minimum_over_every_bias():
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = rng.integers(1, 8)
        a = rng.choice([-1.0, 1.0, 2.5], n)
        grad, down, up = rng.normal(size=n), rng.uniform(0, 1, n), rng.uniform(0, 1, n)
        exact = _best_bias_gap(a, grad, down, up)
        grid = np.linspace(-5, 5, 20001)
        z = a[None, :] * grid[:, None] - grad[None, :]
        brute = (np.maximum(z, 0) @ down + np.maximum(-z, 0) @ up).min()
        assert exact <= brute + 1e-12
        # and it is attained: the minimum over the kinks, which the grid may miss
        kinks = grad / a
        zk = a[None, :] * kinks[:, None] - grad[None, :]
        assert exact == pytest.approx((np.maximum(zk, 0) @ down + np.maximum(-zk, 0) @ up).min(),
                                      abs=1e-12)


def test_a_task_whose_free_multipliers_cannot_take_its_residual_moves_the_fewest_bound_ones():
    # The one free multiplier (1e-6, a = -1) cannot take the residual -3e-6 out. Pulling every
    # multiplier at a bound off it (the Euclidean projection) would leave a KKT gap as large
    # as the gradient; instead the multiplier at a bound that the KKT conditions hold there
    # least (its slack) is released, and only the free one and it move.
    dual = MEDDual(c=np.ones(5), lo=0.0, hi=1.0, a=[1.0, 1.0, -(1.0 + 2e-6), -1.0, 1.0],
                   groups=[np.arange(5)], Phi0=np.eye(5))
    lam = np.array([1.0, 0.0, 1.0, 1e-6, 0.0])
    slack = np.array([0.5, 0.3, 0.1, 0.0, 0.2])
    x = meet_equalities(dual, lam, lambda: slack)
    assert abs(dual.a @ x) <= 1e-15
    assert np.all((x >= 0) & (x <= 1))
    assert np.all(x[1:] <= lam[1:])      # nothing pulled off its bound against the need
    # 0 cannot help (at 1 with a = 1); 2 has the smallest slack of 1, 2 and 4
    assert x[0] == 1.0 and x[1] == 0.0 and x[4] == 0.0
    assert x[2] < 1.0


@pytest.mark.parametrize("method", ["newton", "cd", "ssnal"])
@pytest.mark.parametrize("C", [1e-5, 1e-3, 1.0])
def test_a_small_box_is_solved_as_accurately_as_a_large_one(method, C):
    # The gradient is c plus a part of at most H_ii C; a KKT gap relative to max|c| alone
    # accepted multipliers 10 % off the optimum's at C = 1e-5. Relative to gap_scale the
    # multipliers are as close to the optimum, relative to C, at every C.
    rng = np.random.default_rng(7)
    Xs = [rng.normal(size=(60, 8)) for _ in range(3)]
    ys = [np.where(X[:, 0] + 0.8 * rng.normal(size=60) > 0, 1.0, -1.0) for X in Xs]
    dual = feature_selection_dual(Xs, ys, C=C, alpha=2.0)
    ref = solve(dual, "newton", options={"kkt_tol": 1e-12})
    sol = solve(dual, method)
    assert sol.status == "converged"
    assert np.max(np.abs(sol.lam - ref.lam)) <= 1e-3 * C
    assert gap_scale(dual) == pytest.approx(min(1.0, C * np.max(hessian_diagonal(dual))))


def test_a_steps_gain_is_exact_where_two_values_of_J_cannot_resolve_it():
    # q_t and its change along the step (t = 1): a change of 1e-9 on a term of size 5, a
    # change of -55 from 60 (e^q overflows nothing, log1p's argument would reach -1), and
    # a moderate one; beside them a linear and a shared part of the same size
    q, B = np.array([5.0, 60.0, 0.3]), np.array([1e-9, -55.0, 0.2])
    forms = (0.25, 0.5, q, B, np.zeros(3))
    alpha = 36.0
    s = switch_posterior(q, alpha)
    exact = 1.0 - (0.25 + 0.25) - (s[0] * 1e-9 - 1e-18 * s[0] * s[0] / 2
                                   + (np.logaddexp(np.log(alpha), 5.0) - np.logaddexp(np.log(alpha), 60.0))
                                   + float(np.log1p(s[2] * np.expm1(0.2))))
    assert segment_gain(alpha, 1.0, forms, 1.0) == pytest.approx(exact, rel=1e-15)
    # the tiny change alone: the first-order term, which J(lam + d) - J(lam) loses
    tiny = (0.0, 0.0, q[:1], B[:1], np.zeros(1))
    assert segment_gain(alpha, 0.0, tiny, 1.0) == pytest.approx(-s[0] * 1e-9, rel=1e-8)
    J = lambda x: -float(log_switch_term([x], alpha)[0])
    assert abs((J(5.0 + 1e-9) - J(5.0)) / (s[0] * 1e-9) + 1.0) > 1e-8
