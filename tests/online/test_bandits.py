"""The contextual-bandit reductions and the Banditron, against naive per-round references."""

import pickle

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from medmtl.online import (Banditron, LabelOracle, OneVsOneBandit, OneVsRestBandit, PairFeedbackOracle,
                           one_vs_one_pairs, one_vs_rest_oracle, round_robin_predict)

from online_testdata import multiclass_problem as make_multiclass
from online_testdata import unit_rows


def naive_reduction(X, labels, C, scheme, b, lam, seed, zero_feedback="error", eta=0.2):
    """SHAMPO over the one-vs-rest or one-vs-one tasks of a shared input, one round at a time."""
    rng = np.random.default_rng(seed)
    sign_rng = np.random.default_rng(rng.integers(2 ** 63))
    X = unit_rows(X)
    pairs = one_vs_one_pairs(C)
    K = C if scheme == "ovr" else len(pairs)
    W = np.zeros((K, X.shape[1]))
    queried = []
    for t in range(X.shape[0]):
        p = W @ X[t]
        E = rng.standard_exponential(K)
        sign = sign_rng.integers(0, 2) * 2 - 1 if zero_feedback == "random" else None
        m = np.abs(p)
        keys = E if np.isinf(b) else E * (b + m - m.min())
        j = int(np.argmin(keys))
        queried.append(j)
        if scheme == "ovr":
            y = 1 if labels[t] == j else -1
        else:
            a, c = pairs[j]
            y = 1 if labels[t] == a else -1 if labels[t] == c else 0
        if y == 0 and zero_feedback == "weak":
            W[j] += eta * (1 if p[j] >= 0 else -1) * X[t]
            continue
        if y == 0 and zero_feedback == "random":
            y = sign
        if y != 0 and y * p[j] <= lam:
            W[j] += y * X[t]
    return W, queried


@pytest.mark.parametrize("b, aggressive", [(0.05, True), (1.0, False), (np.inf, False)])
def test_one_vs_rest_matches_reference(b, aggressive):
    X, labels = make_multiclass(seed=1)
    oracle = one_vs_rest_oracle(labels)
    model = OneVsRestBandit(b=b, aggressive=aggressive, block_size=32, random_state=3).fit(X, oracle)
    W, queried = naive_reduction(X, labels, 4, "ovr", b, b / 2 if aggressive else 0.0, 3)
    np.testing.assert_allclose(model.coef_, W, atol=1e-9)
    assert np.array_equal(oracle.queries_per_task, np.bincount(queried, minlength=4))
    assert oracle.n_queries == len(labels)


@pytest.mark.parametrize("zero_feedback", ["weak", "random", "ignore"])
def test_one_vs_one_matches_reference(zero_feedback):
    X, labels = make_multiclass(seed=2)
    oracle = PairFeedbackOracle(labels)
    model = OneVsOneBandit(zero_feedback=zero_feedback, eta=0.3, b=0.1, aggressive=True, block_size=16,
                           random_state=5).fit(X, oracle)
    W, queried = naive_reduction(X, labels, 4, "ovo", 0.1, 0.05, 5, zero_feedback=zero_feedback, eta=0.3)
    np.testing.assert_allclose(model.coef_, W, atol=1e-9)
    assert np.array_equal(oracle.queries_per_task, np.bincount(queried, minlength=6))


def test_banditron_matches_reference():
    X, labels = make_multiclass(n=500, seed=3)
    gamma, C = 0.2, 4
    model = Banditron(gamma=gamma, random_state=4).fit(X, labels)
    rng = np.random.default_rng(4)
    Xn = unit_rows(X)
    u, explore = rng.random(len(labels)), rng.integers(0, C, len(labels))
    W = np.zeros((C, X.shape[1]))
    for t, x in enumerate(Xn):
        y_hat = int(np.argmax(W @ x))
        y_tilde = y_hat if u[t] >= gamma else int(explore[t])
        prob = (1 - gamma) * (y_tilde == y_hat) + gamma / C
        W[y_hat] -= x
        if y_tilde == labels[t]:
            W[y_tilde] += x / prob
    np.testing.assert_allclose(model.coef_, W, atol=1e-9)


def test_round_robin_against_a_vote_count():
    rng = np.random.default_rng(6)
    C = 5
    pairs = one_vs_one_pairs(C)
    margins = rng.normal(size=(300, len(pairs)))
    margins[:, 3] = 0.0
    pred = round_robin_predict(margins, C, random_state=0)
    for row, label in zip(margins, pred):
        votes = np.zeros(C)
        for (a, b), m in zip(pairs, row):
            if m > 0:
                votes[a] += 1
            elif m < 0:
                votes[b] += 1
            else:
                votes[a] += 0.5
                votes[b] += 0.5
        assert votes[label] == votes.max()
    with pytest.raises(ValueError, match="columns"):
        round_robin_predict(margins[:, :4], C)


def test_only_queried_answers_are_read():
    X, labels = make_multiclass(n=300, seed=7)
    oracle = one_vs_rest_oracle(labels)
    model = OneVsRestBandit(b=0.1, random_state=2).fit(X, oracle)
    assert oracle.n_queries == 300
    asked = {(j, t) for j in range(4) for t in range(300) if oracle.was_queried(j, t)}
    assert len(asked) == 300
    # a different truth on every unasked question leaves the run unchanged
    ys = [np.where(labels == c, 1, -1) for c in range(4)]
    flipped = [np.array([v if (j, t) in asked else -v for t, v in enumerate(y)]) for j, y in enumerate(ys)]
    other = OneVsRestBandit(b=0.1, random_state=2).fit(X, LabelOracle(flipped))
    assert np.array_equal(other.coef_, model.coef_)


def test_dense_equals_sparse_seed_pickle_and_no_mutation():
    X, labels = make_multiclass(n=300, seed=8, sparse=True)
    keep_X, keep_y = X.copy(), labels.copy()
    for make in (lambda: OneVsRestBandit(b=0.1, random_state=1),
                 lambda: OneVsOneBandit(zero_feedback="weak", b=0.1, random_state=1),
                 lambda: Banditron(gamma=0.1, random_state=1)):
        m_sp = make().fit(X, labels)
        m_de = make().fit(X.toarray(), labels)
        np.testing.assert_allclose(m_sp.coef_, m_de.coef_, atol=1e-12)
        again = make().fit(X, labels)
        assert np.array_equal(again.predict(X), m_sp.predict(X))
        clone = pickle.loads(pickle.dumps(m_sp))
        assert np.array_equal(clone.predict(X), m_sp.predict(X))
    assert (X != keep_X).nnz == 0 and np.array_equal(labels, keep_y)


def test_learn_one_equals_fit_and_labels_are_mapped():
    X, labels = make_multiclass(n=120, seed=9)
    fitted = OneVsOneBandit(zero_feedback="random", b=0.1, random_state=6).fit(X, labels)
    online = OneVsOneBandit(zero_feedback="random", b=0.1, random_state=6)
    oracle = PairFeedbackOracle(labels)
    for t in range(120):
        online.learn_one(X[t], oracle=oracle)
    np.testing.assert_allclose(online.coef_, fitted.coef_, atol=1e-12)
    named = np.array(["a", "b", "c", "d"])[labels]
    model = OneVsRestBandit(b=0.1, random_state=0).fit(X, named)
    assert set(model.predict(X)) <= set(named)
    assert model.predict_one(X[0]) in set(named)


def test_reductions_learn_a_separable_problem():
    X, labels = make_multiclass(n=3000, C=3, d=4, seed=10)
    X = np.hstack([X, np.ones((len(X), 1))])
    for model in (OneVsRestBandit(b=0.1, random_state=0), OneVsOneBandit(b=0.1, random_state=0),
                  Banditron(gamma=0.1, random_state=0)):
        assert model.fit(X, labels).score(X, labels) > 0.85


def test_bad_inputs():
    X, labels = make_multiclass(n=50, seed=11)
    with pytest.raises(ValueError, match="two classes"):
        OneVsRestBandit().fit(X, np.zeros(50, int))
    with pytest.raises(ValueError, match="entries"):
        OneVsRestBandit().fit(X, labels[:10])
    with pytest.raises(ValueError, match="eta"):
        OneVsOneBandit(eta=0.0).fit(X, labels)
    with pytest.raises(ValueError, match="zero_feedback"):
        OneVsOneBandit(zero_feedback="skip").fit(X, labels)
    with pytest.raises(ValueError, match="gamma"):
        Banditron(gamma=1.5).fit(X, labels)
    with pytest.raises(ValueError, match="b must be"):
        OneVsRestBandit(b=-1.0).fit(X, labels)
    with pytest.raises(ValueError, match="non-negative"):
        OneVsRestBandit(prior=[1, 1, -1, 1]).fit(X, labels)
    with pytest.raises(TypeError, match="PairFeedbackOracle"):
        OneVsOneBandit().fit(X, one_vs_rest_oracle(labels))
    with pytest.raises(TypeError, match="one-vs-rest"):
        OneVsRestBandit().fit(X, PairFeedbackOracle(labels))
    with pytest.raises(ValueError, match=r"label 0"):
        # the plain SHAMPO rule cannot take a "neither" answer
        from medmtl.online.shampo import SHAMPO
        SHAMPO(random_state=0).fit([X, X, X, X, X, X], PairFeedbackOracle(labels))
    with pytest.raises(ValueError, match="NaN"):
        Banditron().fit(np.full((5, 2), np.nan), [0, 1, 0, 1, 0])
    with pytest.raises(NotFittedError, match="not fitted"):
        OneVsRestBandit().predict(X)
    with pytest.raises(ValueError, match="task must be None"):
        OneVsRestBandit(random_state=0).fit(X, labels).predict(X, task=0)
    with pytest.raises(NotFittedError, match="oracle"):
        Banditron().learn_one(X[0], labels[0])


def test_learn_one_with_a_label_asks_one_question_about_it():
    X, labels = make_multiclass(n=200, seed=12)
    named = np.array(["a", "b", "c", "d"])[labels]
    for make in (lambda: OneVsRestBandit(b=0.1, random_state=3),
                 lambda: OneVsOneBandit(zero_feedback="random", b=0.1, random_state=3),
                 lambda: Banditron(gamma=0.1, random_state=3)):
        by_label, by_oracle = make().fit(X[:100], named[:100]), make().fit(X[:100], named[:100])
        oracle = (PairFeedbackOracle if isinstance(by_oracle, OneVsOneBandit) else one_vs_rest_oracle)(labels)
        for t in range(100, 200):
            by_label.learn_one(X[t], named[t])
            by_oracle.learn_one(X[t], oracle=oracle, index=t)
        np.testing.assert_array_equal(by_label.coef_, by_oracle.coef_)
        assert oracle.n_queries == 100
    with pytest.raises(ValueError, match="not one of the classes"):
        by_label.learn_one(X[0], "e")
