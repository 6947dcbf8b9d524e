"""The Random and Independent baselines against naive per-example re-implementations.

The references follow the baselines' one-line descriptions, one example at a time on dense
vectors, with the conventions of :mod:`medmtl.online.active` (stream order
``rng.permutation(n)``, one uniform per round, ``sign(0) = +1``).
"""

import numpy as np
import pytest

from medmtl.online import IndependentQuery, LabelOracle, RandomQuery

from online_testdata import SpyOracle, check_against, dense, example_order, related_tasks, sgn


def naive_single(Xs, ys, seed, rule, b=1.0, budget=None):
    """Random (rule='random') or Independent (rule='independent') per-task perceptrons."""
    rng = np.random.default_rng(seed)
    rounds = example_order(Xs, rng)
    Xd = [dense(X) for X in Xs]
    w = np.zeros((len(Xs), Xd[0].shape[1]))
    preds, asked, n_q = [], [], 0
    for k, i in rounds:
        x = Xd[k][i]
        u = rng.random()
        p = float(x @ w[k])
        prob = 0.5 if rule == "random" else b / (b + abs(p))
        q = (budget is None or n_q < budget) and u < prob
        if q:
            y = int(ys[k][i])
            n_q += 1
            if y != sgn(p):
                w[k] = w[k] + y * x
        preds.append(sgn(p))
        asked.append(bool(q))
    return {"w": w, "preds": np.array(preds), "asked": np.array(asked), "rounds": rounds}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cls,rule", [(RandomQuery, "random"), (IndependentQuery, "independent")])
def test_baselines_match_naive(cls, rule, sparse):
    Xs, ys = related_tasks(sparse=sparse, seed=2)
    oracle = SpyOracle(ys)
    model = cls(random_state=5).fit(Xs, oracle)
    ref = naive_single(Xs, ys, seed=5, rule=rule)
    check_against(model, ref, oracle)
    # no knowledge moves between tasks: test margins are each task's own perceptron
    np.testing.assert_allclose(model.decision_function(Xs[1], task=1), dense(Xs[1]) @ ref["w"][1], atol=1e-12)


def test_independent_b_and_budget_match_naive():
    Xs, ys = related_tasks(seed=4)
    oracle = SpyOracle(ys)
    model = IndependentQuery(b=0.3, budget=12, random_state=1).fit(Xs, oracle)
    check_against(model, naive_single(Xs, ys, seed=1, rule="independent", b=0.3, budget=12), oracle)


def test_random_queries_ignore_the_margin():
    Xs, ys = related_tasks(n=200, seed=5)
    always = RandomQuery(query_probability=1.0, random_state=0).fit(Xs, LabelOracle(ys))
    never = RandomQuery(query_probability=0.0, random_state=0).fit(Xs, LabelOracle(ys))
    assert always.stream_queried_.all() and never.n_queries_ == 0


@pytest.mark.parametrize("make, match", [
    (lambda: RandomQuery(query_probability=1.5), "query_probability"),
    (lambda: RandomQuery(query_probability=-0.1), "query_probability"),
    (lambda: IndependentQuery(b=0.0), "b must be > 0"),
    (lambda: IndependentQuery(budget=-1), "budget"),
])
def test_bad_parameters(make, match):
    Xs, ys = related_tasks(seed=0)
    with pytest.raises(ValueError, match=match):
        make().fit(Xs, LabelOracle(ys))
