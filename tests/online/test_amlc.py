"""AMLC against a naive per-example re-implementation of Algorithm 1.

The reference is written from the paper's Algorithm 1, one example at a time on dense
vectors, sharing nothing with the implementation but the documented conventions: the
stream order is ``rng.permutation(n)`` of the tasks' concatenated examples, then each round
draws its uniform with ``rng.random()``, a label is bought when ``u < probability``, and
``sign(0) = +1``.
"""

import numpy as np
import pytest

from medmtl.online import AMLC, IndependentQuery, LabelOracle

from online_testdata import SpyOracle, check_against, dense, example_order, naive_committee_step, related_tasks, sgn


def naive_amlc(Xs, ys, seed, b=1.0, C=1.0, share=True, share_on="disagreement", confidence="mean",
               budget=None):
    rng = np.random.default_rng(seed)
    rounds = example_order(Xs, rng)
    Xd = [dense(X) for X in Xs]
    K, D = len(Xs), Xd[0].shape[1]
    w = np.zeros((K, D))
    tau = np.full((K, K), 1.0 / K)
    preds, asked, n_q = [], [], 0
    for k, i in rounds:
        x = Xd[k][i]
        u = rng.random()
        pk = [float(x @ w[m]) for m in range(K)]
        p = sum(pk[m] * tau[k, m] for m in range(K)) * (K if confidence == "sum" else 1)
        yhat = sgn(p)
        q = (budget is None or n_q < budget) and u < b / (b + abs(p))
        if q:
            y = int(ys[k][i])
            n_q += 1
            if y != yhat:
                w[k] = w[k] + y * x
            losses = [max(0.0, 1.0 - y * pk[m]) for m in range(K)]
            ref = (yhat if share_on == "disagreement" else y) if share else None
            tau[k] = naive_committee_step(w, tau[k], x, y, k, pk, losses, C, ref, lambda row: row[k])
        preds.append(yhat)
        asked.append(bool(q))
    return {"w": w, "tau": tau, "preds": np.array(preds), "asked": np.array(asked), "rounds": rounds}


# --------------------------------------------------------------------------- reference
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kwargs", [
    {},
    {"C": 5.0, "b": 0.5},
    {"confidence": "sum", "C": 0.3},
    {"share": False},
    {"share_on": "mistake", "C": 2.0},
    {"budget": 25},
])
def test_amlc_matches_naive_algorithm_1(sparse, kwargs):
    Xs, ys = related_tasks(sparse=sparse, seed=1)
    oracle = SpyOracle(ys)
    model = AMLC(random_state=3, **kwargs).fit(Xs, oracle)
    ref = naive_amlc(Xs, ys, seed=3, **kwargs)
    check_against(model, ref, oracle)
    np.testing.assert_allclose(model.committee_weights_, ref["tau"], rtol=1e-10, atol=1e-14)
    # The model returned is tau w: task k predicts with sum_m tau_km w_m.
    X = dense(Xs[2])
    np.testing.assert_allclose(model.decision_function(Xs[2], task=2), X @ (ref["tau"][2] @ ref["w"]), atol=1e-12)


def test_amlc_properties_on_larger_stream():
    Xs, ys = related_tasks(n_tasks=6, n=120, d=10, seed=7, noise=0.1)
    model = AMLC(C=1.0, confidence="sum", random_state=0).fit(Xs, LabelOracle(ys))
    tau = model.committee_weights_
    np.testing.assert_allclose(tau.sum(axis=1), 1.0)
    assert np.all(tau >= 0)
    indep = IndependentQuery(random_state=0).fit(Xs, LabelOracle(ys))
    # Committees of related tasks are more confident sooner: far fewer labels bought.
    assert model.n_queries_ < 0.5 * indep.n_queries_
    assert model.score(Xs, ys) >= indep.score(Xs, ys) - 0.02


def test_C_zero_keeps_committees_uniform():
    Xs, ys = related_tasks(seed=3)
    model = AMLC(C=0.0, random_state=0).fit(Xs, LabelOracle(ys))
    np.testing.assert_allclose(model.committee_weights_, 0.25)


@pytest.mark.parametrize("params,match", [
    ({"b": 0.0}, "b must be > 0"),
    ({"b": float("nan")}, "b must be > 0"),
    ({"C": -1.0}, "C must be >= 0"),
    ({"budget": -1}, "budget"),
    ({"budget": 2.5}, "budget"),
    ({"share_on": "always"}, "share_on"),
    ({"confidence": "max"}, "confidence"),
    ({"share": "yes"}, "share"),
])
def test_bad_hyper_parameters(params, match):
    Xs, ys = related_tasks(seed=0)
    with pytest.raises((ValueError, TypeError), match=match):
        AMLC(**params).fit(Xs, LabelOracle(ys))
