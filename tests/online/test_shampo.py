"""SHAMPO against a naive per-round re-implementation of Fig. 2 of the paper."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from medmtl.online import SHAMPO, LabelOracle, MultiTaskStream, perceptron_mistake_prior, scale_to_unit_ball

from online_testdata import multitask_problem as make_problem


# --------------------------------------------------------------------------- the reference
def naive_shampo(Xs, ys, b, lam, prior=None, seed=0, strategy="shampo", n_queries=1, kernel=None,
                 oracle=None):
    """Fig. 2 of the paper, one round at a time, in plain numpy.

    The task draw uses the exponential race: J = argmin_j E_j / q_j with E_j ~ Exp(1) drawn
    K per round from ``default_rng(seed)`` -- the same random numbers the library uses.
    With ``kernel`` the margins are kernel sums over the updated inputs.
    """
    rng = np.random.default_rng(seed)
    K, n = len(Xs), np.shape(Xs[0])[0]
    Xs = [np.asarray(X.todense()) if sp.issparse(X) else np.asarray(X, float) for X in Xs]
    Xs = [X / np.where(np.linalg.norm(X, axis=1) > 0, np.linalg.norm(X, axis=1), 1)[:, None] for X in Xs]
    a = np.ones(K) if prior is None else np.asarray(prior, float)
    if strategy == "uniform":
        b = np.inf
    if strategy == "exploit":
        b = 0.0
    W = [np.zeros(X.shape[1]) for X in Xs]
    support = [[] for _ in range(K)]
    oracle = LabelOracle(ys) if oracle is None else oracle
    queried, margins = np.zeros((n, n_queries), int), np.zeros((n, K))
    for t in range(n):
        if kernel is None:
            p = np.array([W[i] @ Xs[i][t] for i in range(K)])
        else:
            p = np.array([sum(c * kernel(s, Xs[i][t]) for s, c in support[i]) for i in range(K)])
        margins[t] = p
        E = rng.standard_exponential(K)
        m = np.where(a > 0, np.abs(p), np.inf)
        with np.errstate(divide="ignore"):
            if np.isinf(b):
                q = a.copy()
            elif b == 0:
                q = np.where(m == m.min(), a, 0.0)
            else:
                q = a / (b + m - m.min())
        keys = np.where(q > 0, E / np.where(q > 0, q, 1), np.inf)
        J = np.argsort(keys, kind="stable")[:n_queries]
        queried[t] = J
        for j in J:
            y = oracle.query(int(j), t)
            if y * p[j] <= lam:                      # M (y p <= 0) or A (0 < y p <= lambda)
                W[j] = W[j] + y * Xs[j][t]
                support[j].append((Xs[j][t], y))
    return W, queried, margins, oracle


def lam_of(b, aggressive):
    return b / 2 if aggressive else 0.0


# --------------------------------------------------------------------------- SHAMPO vs reference
@pytest.mark.parametrize("b", [0.0, 0.05, 1.0, np.inf])
@pytest.mark.parametrize("aggressive", [True, False])
def test_matches_naive_reference(b, aggressive):
    Xs, ys = make_problem(K=4, n=250, seed=3)
    model = SHAMPO(b=b, aggressive=aggressive, block_size=32, random_state=7).fit(Xs, ys)
    W, queried, margins, oracle = naive_shampo(Xs, ys, b, lam_of(b, aggressive), seed=7)
    assert np.array_equal(model.queried_tasks_, queried)
    np.testing.assert_allclose(model.train_margins_, margins, atol=1e-9)
    for w, v in zip(model.coef_, W):
        np.testing.assert_allclose(w, v, atol=1e-9)
    assert np.array_equal(model.queries_per_task_, oracle.queries_per_task)


@pytest.mark.parametrize("strategy", ["uniform", "exploit"])
def test_baselines_match_reference(strategy):
    Xs, ys = make_problem(K=5, n=200, seed=4)
    lam = 1.0 if strategy == "uniform" else 0.0
    model = SHAMPO(strategy=strategy, lam=lam, random_state=1).fit(Xs, ys)
    _, queried, _, _ = naive_shampo(Xs, ys, None, lam, seed=1, strategy=strategy)
    assert np.array_equal(model.queried_tasks_, queried)


def test_exploit_queries_the_smallest_margin_and_uniform_follows_the_prior():
    Xs, ys = make_problem(K=4, n=400, seed=5)
    model = SHAMPO(strategy="exploit", random_state=0).fit(Xs, ys)
    m = np.abs(model.train_margins_)
    picked = np.take_along_axis(m, model.queried_tasks_, axis=1)[:, 0]
    assert np.array_equal(picked, m.min(axis=1))
    Xs, ys = make_problem(K=2, n=4000, seed=5)
    model = SHAMPO(strategy="uniform", prior=[1.0, 3.0], random_state=0).fit(Xs, ys)
    assert model.queries_per_task_[1] / 4000 == pytest.approx(0.75, abs=0.03)


def test_prior_several_queries_and_different_dimensions():
    Xs, ys = make_problem(K=4, n=200, dims=[3, 7, 5, 9], seed=6)
    prior = [2.0, 0.0, 1.0, 5.0]
    model = SHAMPO(b=0.1, prior=prior, n_queries=2, block_size=16, random_state=3).fit(Xs, ys)
    W, queried, _, oracle = naive_shampo(Xs, ys, 0.1, 0.05, prior=prior, seed=3, n_queries=2)
    assert np.array_equal(model.queried_tasks_, queried)
    assert model.queries_per_task_[1] == 0                       # a zero prior is never asked
    assert oracle.n_queries == 400
    for w, v in zip(model.coef_, W):
        np.testing.assert_allclose(w, v, atol=1e-9)


def test_dense_equals_sparse():
    Xs, ys = make_problem(K=3, n=300, d=20, seed=7, sparse=True)
    dense = [X.toarray() for X in Xs]
    m_sp = SHAMPO(b=0.02, random_state=2).fit(Xs, ys)
    m_de = SHAMPO(b=0.02, random_state=2).fit(dense, ys)
    assert np.array_equal(m_sp.queried_tasks_, m_de.queried_tasks_)
    for a, b in zip(m_sp.coef_, m_de.coef_):
        np.testing.assert_allclose(a, b, atol=1e-12)
    _, queried, _, _ = naive_shampo(Xs, ys, 0.02, 0.01, seed=2)
    assert np.array_equal(m_sp.queried_tasks_, queried)
    assert [p.tolist() for p in m_sp.predict(Xs)] == [p.tolist() for p in m_de.predict(dense)]


def test_block_size_does_not_change_the_result():
    Xs, ys = make_problem(K=5, n=300, seed=8)
    ref = SHAMPO(b=0.1, block_size=1, random_state=0).fit(Xs, ys)
    for bs in (7, 64, 1000):
        m = SHAMPO(b=0.1, block_size=bs, random_state=0).fit(Xs, ys)
        assert np.array_equal(m.queried_tasks_, ref.queried_tasks_)


def test_fit_equals_learn_one_rounds():
    Xs, ys = make_problem(K=3, n=120, seed=9)
    fitted = SHAMPO(b=0.1, random_state=4).fit(Xs, ys)
    online = SHAMPO(b=0.1, random_state=4)
    oracle = LabelOracle(ys)
    for t in range(120):
        assert online.learn_one([X[t] for X in Xs], oracle=oracle) is None
    for a, b in zip(online.coef_, fitted.coef_):
        np.testing.assert_allclose(a, b, atol=1e-12)
    assert np.array_equal(online.queries_per_task_, fitted.queries_per_task_)
    assert online.predict_one([X[0] for X in Xs]).tolist() == [p[0] for p in fitted.predict([X[:1] for X in Xs])]


# --------------------------------------------------------------------------- the protocol
def test_only_queried_labels_are_read():
    Xs, ys = make_problem(K=4, n=300, seed=10)
    oracle = LabelOracle(ys)
    model = SHAMPO(b=0.05, random_state=5).fit(Xs, oracle)
    assert oracle.n_queries == 300                                 # one label per round
    asked = {(int(j), t) for t, row in enumerate(model.queried_tasks_) for j in row}
    assert all(oracle.was_queried(j, t) for j, t in asked) and len(asked) == 300
    # Flip every label that was not asked for: the run must not change at all.
    flipped = [np.array([-v if (j, t) not in asked else v for t, v in enumerate(y)]) for j, y in enumerate(ys)]
    assert sum(int(np.sum(f != y)) for f, y in zip(flipped, ys)) == 4 * 300 - 300
    other = SHAMPO(b=0.05, random_state=5).fit(Xs, LabelOracle(flipped))
    assert np.array_equal(other.queried_tasks_, model.queried_tasks_)
    for a, b in zip(other.coef_, model.coef_):
        assert np.array_equal(a, b)


def test_budget_is_enforced():
    from medmtl.online.oracle import BudgetExhausted

    Xs, ys = make_problem(K=2, n=50, seed=11)
    with pytest.raises(BudgetExhausted):
        SHAMPO(random_state=0).fit(Xs, LabelOracle(ys, budget=20))


def test_mistake_prior_counts_perceptron_mistakes():
    Xs, ys = make_problem(K=3, n=150, seed=12, noise=1.0)
    oracle = LabelOracle(ys)
    prior = perceptron_mistake_prior(Xs, oracle, n_rounds=100)
    assert oracle.n_queries == 300
    expected = []
    for X, y in zip(Xs, ys):
        X = scale_to_unit_ball(X)
        w, mistakes = np.zeros(X.shape[1]), 0
        for t in range(100):
            if y[t] * (w @ X[t]) <= 0:
                mistakes += 1
                w = w + y[t] * X[t]
        expected.append(max(mistakes, 1))
    np.testing.assert_array_equal(prior, expected)
    model = SHAMPO(b=0.1, prior="mistakes", prior_rounds=100, random_state=0).fit(Xs, LabelOracle(ys))
    np.testing.assert_array_equal(model.prior_, expected)


def test_per_task_predictions_and_pooled_score():
    Xs, ys = make_problem(K=3, n=100, seed=19)
    model = SHAMPO(b=0.1, random_state=0).fit(Xs, ys)
    Xt, yt = [X[:30 + 20 * j] for j, X in enumerate(Xs)], [y[:30 + 20 * j] for j, y in enumerate(ys)]
    preds = model.predict(Xt)
    for j in range(3):
        assert np.array_equal(model.predict(Xt[j], task=j), preds[j])
        assert model.score(Xt[j], yt[j], task=j) == np.mean(preds[j] == yt[j])
    correct = sum(int(np.sum(p == y)) for p, y in zip(preds, yt))
    assert model.score(Xt, yt) == correct / 150
    np.testing.assert_array_equal(model.errors(Xt, yt), [np.mean(p != y) for p, y in zip(preds, yt)])
    assert model.predict_one(Xt[2][0], task=2) == preds[2][0]


# --------------------------------------------------------------------------- generic checks
def test_pickle_seed_and_no_mutation():
    Xs, ys = make_problem(K=3, n=200, seed=13)
    Xs_sp = [sp.csr_matrix(X) for X in Xs]
    copies = [X.copy() for X in Xs] + [X.copy() for X in Xs_sp]
    ycopies = [y.copy() for y in ys]
    m1 = SHAMPO(b=0.1, random_state=3).fit(Xs, ys)
    m2 = SHAMPO(b=0.1, random_state=3).fit(Xs, ys)
    SHAMPO(b=0.1, random_state=3).fit(Xs_sp, ys).predict(Xs_sp)
    assert np.array_equal(m1.queried_tasks_, m2.queried_tasks_)
    m3 = SHAMPO(b=0.1, random_state=4).fit(Xs, ys)
    assert not np.array_equal(m1.queried_tasks_, m3.queried_tasks_)
    for X, c in zip(Xs + Xs_sp, copies):
        assert (X != c).nnz == 0 if sp.issparse(X) else np.array_equal(X, c)
    assert all(np.array_equal(y, c) for y, c in zip(ys, ycopies))
    clone = pickle.loads(pickle.dumps(m1))
    assert [p.tolist() for p in clone.predict(Xs)] == [p.tolist() for p in m1.predict(Xs)]
    # pickling mid-stream and going on gives the uninterrupted result
    oracle = LabelOracle(ys)
    a = SHAMPO(b=0.1, random_state=8)
    for t in range(100):
        a.learn_one([X[t] for X in Xs], oracle=oracle)
    b = pickle.loads(pickle.dumps(a))
    ob = pickle.loads(pickle.dumps(oracle))
    for t in range(100, 200):
        a.learn_one([X[t] for X in Xs], oracle=oracle)
        b.learn_one([X[t] for X in Xs], oracle=ob)
    for u, v in zip(a.coef_, b.coef_):
        assert np.array_equal(u, v)


def test_learns_separable_tasks():
    Xs, ys = make_problem(K=3, n=3000, d=5, seed=14, noise=0.0)
    model = SHAMPO(b=0.05, random_state=0).fit(Xs, ys)
    assert model.score(Xs, ys) > 0.9
    assert model.errors(Xs, ys).shape == (3,)


@pytest.mark.parametrize("params, match", [
    ({"b": -1.0}, "b must be >= 0"),
    ({"b": float("nan")}, "b must be >= 0"),
    ({"prior": [1.0, -1.0, 1.0]}, "non-negative"),
    ({"prior": [1.0, 1.0]}, "one entry per task"),
    ({"prior": [0.0, 0.0, 0.0]}, "positive weight"),
    ({"prior": "best"}, "prior must be"),
    ({"lam": -0.5}, "lam must be >= 0"),
    ({"n_queries": 4}, "n_queries"),
    ({"n_queries": 0}, "n_queries"),
    ({"strategy": "greedy"}, "strategy"),
    ({"block_size": 0}, "block_size"),
    ({"scale": "l2"}, "scale"),
])
def test_bad_parameters(params, match):
    Xs, ys = make_problem(K=3, n=20, seed=15)
    with pytest.raises((ValueError, TypeError), match=match):
        SHAMPO(**params).fit(Xs, ys)


def test_bad_inputs():
    Xs, ys = make_problem(K=2, n=20, seed=16)
    with pytest.raises(ValueError, match="ragged"):
        SHAMPO().fit([Xs[0], Xs[1][:10]], ys)
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        SHAMPO().fit(Xs, [ys[0], np.where(ys[1] > 0, 1, np.arange(20) % 2 - 1)])  # three labels: -1, 0, 1
    with pytest.raises(ValueError, match="tasks"):
        SHAMPO().fit(Xs, [ys[0]])
    with pytest.raises(ValueError, match="NaN"):
        SHAMPO().fit([Xs[0], np.full((20, 6), np.nan)], ys)
    with pytest.raises(TypeError):
        SHAMPO().fit(Xs[0], ys[0])
    with pytest.raises(NotFittedError, match="not fitted"):
        SHAMPO().predict(Xs)
    model = SHAMPO(random_state=0).fit(Xs, ys)
    with pytest.raises(ValueError, match="features"):
        model.predict([Xs[0], Xs[1][:, :3]])
    with pytest.raises(ValueError, match="tasks"):
        model.predict([Xs[0]])
    with pytest.raises(ValueError, match="one input per task"):
        model.learn_one([Xs[0][0]], oracle=LabelOracle(ys))
    with pytest.raises(TypeError, match="unexpected keyword argument 'task'"):   # x holds every task's input
        model.learn_one([X[0] for X in Xs], oracle=LabelOracle(ys), task=0)
    with pytest.raises(ValueError, match="every task on every round"):
        SHAMPO().fit(MultiTaskStream.interleave(Xs, random_state=0), ys)


def test_float32_storage_is_exact_on_dyadic_inputs():
    # entries k/8 with norm <= 1: every margin and weight is exact in float32 and float64
    rng = np.random.default_rng(18)
    Xs = [rng.integers(-2, 3, size=(300, 4)) / 8.0 for _ in range(3)]
    ys = [np.where(X @ rng.normal(size=4) > 0, 1, -1) for X in Xs]
    m64 = SHAMPO(b=0.125, scale=None, random_state=0).fit(Xs, ys)
    m32 = SHAMPO(b=0.125, scale=None, dtype="float32", random_state=0).fit(Xs, ys)
    assert m32.coef_[0].dtype == np.float32
    assert np.array_equal(m32.queried_tasks_, m64.queried_tasks_)
    for a, b in zip(m32.coef_, m64.coef_):
        assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="dtype"):
        SHAMPO(dtype="float16").fit(Xs, ys)
