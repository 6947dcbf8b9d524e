"""PEER and PEER+Share against a naive per-example re-implementation.

The reference follows the algorithm stated in ``medmtl/online/peer.py`` (Murugesan &
Carbonell's Algorithm 1 as read there), one example at a time on dense vectors: stream
order ``rng.permutation(n)``, then two uniforms per round (own confidence, peers'
confidence), ``sign(0) = +1``.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from medmtl.online import PEER, IndependentQuery, LabelOracle, PEERShare

from online_testdata import (SpyOracle, assert_unqueried_labels_do_not_matter, check_against, dense, example_order,
                             naive_committee_step, related_tasks, sgn)


def naive_peer(Xs, ys, seed, b=1.0, peer_b=1.0, C=1.0, share=False, share_on="disagreement", budget=None):
    rng = np.random.default_rng(seed)
    rounds = example_order(Xs, rng)
    Xd = [dense(X) for X in Xs]
    K, D = len(Xs), Xd[0].shape[1]
    w = np.zeros((K, D))
    tau = np.full((K, K), 1.0 / (K - 1))
    np.fill_diagonal(tau, 0.0)
    preds, asked, n_q, n_peer = [], [], 0, 0
    for k, i in rounds:
        x = Xd[k][i]
        u, v = rng.random(), rng.random()
        scores = [float(x @ w[m]) for m in range(K)]
        yhat = sgn(scores[k])
        q = False
        if (budget is None or n_q < budget) and u < b / (b + abs(scores[k])):
            peer = sum(tau[k, m] * scores[m] for m in range(K) if m != k)
            if v < peer_b / (peer_b + abs(peer)):
                q = True
                y = int(ys[k][i])
                n_q += 1
                if y != yhat:
                    w[k] = w[k] + y * x
                losses = [max(0.0, 1.0 - y * scores[m]) if m != k else 0.0 for m in range(K)]
                ref = (yhat if share_on == "disagreement" else y) if share else None
                tau[k] = naive_committee_step(w, tau[k], x, y, k, scores, losses, C, ref, lambda row: 1.0 / (K - 1))
            else:
                n_peer += 1
                label = sgn(peer)
                if label != yhat:
                    w[k] = w[k] + label * x
        preds.append(yhat)
        asked.append(q)
    return {"w": w, "tau": tau, "preds": np.array(preds), "asked": np.array(asked), "rounds": rounds,
            "n_peer": n_peer}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kwargs", [
    {},
    {"C": 4.0, "peer_b": 3.0},
    {"share": True},
    {"share": True, "share_on": "mistake", "b": 2.0},
    {"budget": 15, "share": True},
])
def test_peer_matches_naive(sparse, kwargs):
    Xs, ys = related_tasks(sparse=sparse, seed=21)
    oracle = SpyOracle(ys)
    model = PEER(random_state=6, **kwargs).fit(Xs, oracle)
    ref = naive_peer(Xs, ys, seed=6, **kwargs)
    check_against(model, ref, oracle)
    np.testing.assert_allclose(model.committee_weights_, ref["tau"], rtol=1e-10, atol=1e-14)
    assert model.n_peer_labels_ == ref["n_peer"]
    # A PEER task predicts with its own perceptron.
    np.testing.assert_allclose(model.decision_function(Xs[0], task=0), dense(Xs[0]) @ ref["w"][0], atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cls", [PEER, PEERShare])
def test_peer_reads_only_the_labels_it_buys(cls, sparse):
    Xs, ys = related_tasks(n=60, sparse=sparse, seed=17)
    assert_unqueried_labels_do_not_matter(lambda: cls(C=2.0, random_state=1), Xs, ys)


def test_peer_share_is_peer_with_share():
    Xs, ys = related_tasks(seed=22)
    a = PEERShare(C=2.0, random_state=1).fit(Xs, LabelOracle(ys))
    b = PEER(C=2.0, share=True, random_state=1).fit(Xs, LabelOracle(ys))
    np.testing.assert_array_equal(a.weights_, b.weights_)
    ref = naive_peer(Xs, ys, seed=1, C=2.0, share=True)
    np.testing.assert_allclose(a.weights_, ref["w"], atol=1e-12)


def test_peer_structure():
    Xs, ys = related_tasks(n_tasks=5, n=80, seed=23, noise=0.1)
    model = PEER(random_state=0).fit(Xs, LabelOracle(ys))
    tau = model.committee_weights_
    np.testing.assert_allclose(np.diag(tau), 0.0)
    np.testing.assert_allclose(tau.sum(axis=1), 1.0)
    indep = IndependentQuery(random_state=0).fit(Xs, LabelOracle(ys))
    # Confident peers answer instead of the oracle, so PEER buys fewer labels.
    assert model.n_peer_labels_ > 0
    assert model.n_queries_ < indep.n_queries_


def test_single_task_peer_asks_the_oracle():
    Xs, ys = related_tasks(n_tasks=1, seed=24)
    model = PEER(random_state=0).fit(Xs, LabelOracle(ys))
    assert model.n_peer_labels_ == 0 and model.n_queries_ > 0


def test_peer_budget_and_oracle_budget():
    Xs, ys = related_tasks(seed=25)
    oracle = SpyOracle(ys, budget=9)
    model = PEERShare(random_state=0).fit(Xs, oracle)
    assert model.n_queries_ == oracle.n_queries == 9
    capped = PEER(budget=5, random_state=0).fit(Xs, LabelOracle(ys))
    assert capped.n_queries_ == 5
    last = np.flatnonzero(capped.stream_queried_)[-1]
    assert not capped.stream_queried_[last + 1:].any()


def test_peer_pickle_seed_mutation_dense_sparse():
    Xs, ys = related_tasks(seed=26, sparse=True)
    copies = [X.copy() for X in Xs]
    a = PEERShare(random_state=3).fit(Xs, LabelOracle(ys))
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.predict(Xs[2], task=2), b.predict(Xs[2], task=2))
    c = PEERShare(random_state=3).fit([X.toarray() for X in Xs], LabelOracle(ys))
    assert np.array_equal(a.stream_queried_, c.stream_queried_)
    np.testing.assert_allclose(a.weights_, c.weights_, atol=1e-12)
    for X, Xc in zip(Xs, copies):
        assert (X != Xc).nnz == 0


@pytest.mark.parametrize("params,match", [
    ({"peer_b": 0.0}, "peer_b must be None or > 0"),
    ({"b": -1.0}, "b must be > 0"),
    ({"C": -0.5}, "C must be >= 0"),
    ({"share_on": "x"}, "share_on"),
    ({"share": 1}, "share"),
    ({"budget": -3}, "budget"),
])
def test_peer_bad_hyper_parameters(params, match):
    Xs, ys = related_tasks(seed=0)
    with pytest.raises((ValueError, TypeError), match=match):
        PEER(**params).fit(Xs, LabelOracle(ys))


def test_peer_bad_inputs():
    Xs, ys = related_tasks(seed=0)
    with pytest.raises(ValueError, match="oracle holds"):
        PEER().fit(Xs, LabelOracle(ys[:3]))
    bad = [X.copy() for X in Xs]
    bad[0][0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        PEER().fit(bad, LabelOracle(ys))
    with pytest.raises(NotFittedError):
        PEER().committee_weights_
    assert not hasattr(PEER(), "n_peer_labels_")
    with pytest.raises(TypeError, match="mixes"):
        PEER().fit([sp.csr_matrix(Xs[0])] + Xs[1:], LabelOracle(ys))


# ------------------------------------------------------------------ the authors' code flavour
def _one_feature(rows_per_task):
    return [np.ones((n, 1)) for n in rows_per_task]


@pytest.mark.parametrize("variant,w0", [("paper", -1.0), ("authors-code", -2.0)])
def test_code_flavour_always_adds_the_peers_label(variant, w0):
    # b huge: every round asks the peers; peer_b tiny: the peers answer whenever their margin
    # is not zero. Round 1 buys task 1's label -1 (w_1 = -1). Rounds 2 and 3: task 0 gets
    # the peers' -1; on round 3 its own prediction is already -1.
    Xs, ys = _one_feature([2, 1]), [np.array([1, 1]), np.array([-1])]
    model = PEER(b=1e9, peer_b=1e-9, variant=variant, random_state=0).fit(Xs, ys, order=[[1, 0], [0, 0], [0, 1]])
    assert model.n_queries_ == 1 and model.n_peer_labels_ == 2
    assert model.weights_[:, 0].tolist() == [w0, -1.0]


@pytest.mark.parametrize("variant", ["paper", "authors-code"])
def test_code_flavour_learns_peer_weights_only_from_its_own_mistakes(variant):
    # Every label is bought. Round 1: task 1 learns w_1 = -1. Round 2: task 0 predicts +1 at
    # margin 0 and buys +1 (right); its peers' hinge losses are 2 (task 1) and 1 (task 2).
    Xs, ys = _one_feature([1, 1, 1]), [np.array([1]), np.array([-1]), np.array([1])]
    model = PEER(b=1e9, peer_b=1e9, C=1.0, variant=variant, random_state=0).fit(Xs, ys, order=[[1, 0], [0, 0]])
    tau = model.committee_weights_[0, 1:]
    if variant == "paper":
        expected = np.exp(-np.array([2.0, 1.0]) / 3.0)
        np.testing.assert_allclose(tau, expected / expected.sum(), rtol=1e-14)
    else:
        assert tau.tolist() == [0.5, 0.5]


def test_code_flavour_peer_confidence_scale_is_five():
    Xs, ys = related_tasks(n_tasks=5, n=60, seed=2)
    default = PEER(variant="authors-code", random_state=1).fit(Xs, LabelOracle(ys))
    five = PEER(variant="authors-code", peer_b=5.0, share_on="mistake", random_state=1).fit(Xs, LabelOracle(ys))
    one = PEER(variant="authors-code", peer_b=1.0, random_state=1).fit(Xs, LabelOracle(ys))
    assert np.array_equal(default.weights_, five.weights_) and default.n_queries_ == five.n_queries_
    assert default.n_queries_ > one.n_queries_  # a wider scale leaves the peers unsure more often
    assert PEER(random_state=1).fit(Xs, LabelOracle(ys)).n_queries_ == \
        PEER(peer_b=1.0, share_on="disagreement", variant="paper", random_state=1).fit(Xs, LabelOracle(ys)).n_queries_


@pytest.mark.parametrize("variant,shared", [("paper", [0, 0, 0]), ("authors-code", [0, 1, 1])])
def test_code_flavour_shares_with_every_peer_of_another_sign_zero_included(variant, shared):
    # Task 0 buys +1 and predicts it (margin 0 is +1 in both). Its peers' margins are 0:
    # the code's np.sign gives 0, which differs from +1, so both receive the example.
    Xs, ys = _one_feature([1, 1, 1]), [np.array([1])] * 3
    model = PEERShare(b=1e9, peer_b=1e9, variant=variant, random_state=0).fit(Xs, ys, order=[[0, 0]])
    assert model.updates_per_task_.tolist() == shared


def test_peer_variant_is_validated():
    Xs, ys = related_tasks(seed=0)
    with pytest.raises(ValueError, match="variant"):
        PEER(variant="code").fit(Xs, LabelOracle(ys))
