"""SHAMPO and the online primitives, against a naive per-round re-implementation."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.online.linear import (MultiTaskStream, add_row, row_dot, row_norms, rows_dot, rows_gram,
                                  scale_to_unit_ball)
from medmtl.online.oracle import LabelOracle
from medmtl.online.shampo import SHAMPO, KernelSHAMPO, _choose_tasks, perceptron_mistake_prior


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


def make_problem(K=4, n=300, d=6, seed=0, dims=None, sparse=False, noise=0.3):
    rng = np.random.default_rng(seed)
    dims = dims or [d] * K
    Xs, ys = [], []
    for dj in dims:
        X = rng.normal(size=(n, dj))
        if sparse:
            X[rng.random(X.shape) < 0.5] = 0.0
        u = rng.normal(size=dj)
        ys.append(np.where(X @ u + noise * rng.normal(size=n) > 0, 1, -1))
        Xs.append(sp.csr_matrix(X) if sparse else X)
    return Xs, ys


def lam_of(b, aggressive):
    return b / 2 if aggressive else 0.0


# --------------------------------------------------------------------------- primitives
def test_scale_to_unit_ball_dense_sparse_and_no_mutation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 5)) * 7
    X[3] = 0.0
    keep = X.copy()
    for method in ("row", "max"):
        D = scale_to_unit_ball(X, method=method)
        S = scale_to_unit_ball(sp.csr_matrix(X), method=method)
        assert sp.isspmatrix_csr(S)
        np.testing.assert_allclose(S.toarray(), D)
        assert np.all(row_norms(D) <= 1 + 1e-12)
    np.testing.assert_allclose(row_norms(scale_to_unit_ball(X))[[0, 1, 2, 4]], 1.0)
    assert row_norms(scale_to_unit_ball(X))[3] == 0.0
    assert np.array_equal(X, keep)
    with pytest.raises(ValueError, match="method"):
        scale_to_unit_ball(X, method="l1")


def test_row_primitives_match_numpy_and_never_densify():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 30))
    X[rng.random(X.shape) < 0.7] = 0.0
    S = sp.csr_matrix(X)
    w = rng.normal(size=30)
    np.testing.assert_allclose(rows_dot(S, 2, 9, w), X[2:9] @ w)
    np.testing.assert_allclose(rows_dot(X, 2, 9, w), X[2:9] @ w)
    np.testing.assert_allclose(rows_gram(S, 0, 12, 5), X @ X[5])
    assert row_dot(S, 4, w) == pytest.approx(X[4] @ w)
    w1, w2 = w.copy(), w.copy()
    add_row(w1, S, 7, -0.5)
    add_row(w2, X, 7, -0.5)
    np.testing.assert_allclose(w1, w + -0.5 * X[7])
    np.testing.assert_allclose(w2, w1)
    # a sparse update writes only the row's support
    untouched = np.flatnonzero(X[7] == 0)
    assert np.array_equal(w1[untouched], w[untouched])


def test_stream_layouts_give_the_same_margins():
    rng = np.random.default_rng(2)
    Xs, _ = make_problem(K=3, n=40, dims=[5, 8, 3], seed=2)
    Xs_sp = [sp.csr_matrix(np.where(rng.random(X.shape) < 0.5, 0, X)) for X in Xs]
    for data in (Xs, Xs_sp, [Xs[0], Xs_sp[1], Xs[2]]):
        stream = MultiTaskStream(data)
        W = stream.new_weights()
        for w in W:
            w[:] = rng.normal(size=w.size)
        ref = np.column_stack([scale_to_unit_ball(X) @ w for X, w in zip(data, W)])
        np.testing.assert_allclose(stream.block_margins(W, 5, 31), ref[5:31], atol=1e-12)
        compact, cols = stream.compacted()
        Wc = compact.new_weights()
        for j, c in enumerate(cols):
            Wc[j][...] = W[j] if c is None else W[j][c]
        np.testing.assert_allclose(compact.block_margins(Wc, 0, 40), ref, atol=1e-12)
    same = MultiTaskStream([X[:, :3] for X in Xs])
    assert same.stacked is not None
    shared = MultiTaskStream.shared_input(Xs[0], 4)
    W = rng.normal(size=(4, 5))
    np.testing.assert_allclose(shared.block_margins(W, 0, 40), scale_to_unit_ball(Xs[0]) @ W.T)


def test_stream_errors_and_from_tasks():
    with pytest.raises(ValueError, match="ragged"):
        MultiTaskStream([np.ones((3, 2)), np.ones((4, 2))])
    with pytest.raises(TypeError):
        MultiTaskStream(np.ones((3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        MultiTaskStream([np.array([[np.nan, 1.0]])])
    with pytest.raises(ValueError, match="unit ball"):
        MultiTaskStream([np.array([[3.0, 4.0]])], scale=None)
    Xs = [np.arange(10.0).reshape(5, 2) + 1, np.arange(6.0).reshape(2, 3) + 1]
    stream, orders = MultiTaskStream.from_tasks(Xs, random_state=0)
    assert stream.n_rounds == 5
    assert sorted(orders[0]) == list(range(5))
    assert set(orders[1][:2]) == {0, 1} and set(orders[1][2:4]) == {0, 1}   # a fresh permutation per pass
    np.testing.assert_allclose(stream.Xs[1], scale_to_unit_ball(Xs[1][orders[1]]))
    short, orders = MultiTaskStream.from_tasks(Xs, align="truncate", random_state=0)
    assert short.n_rounds == 2


# --------------------------------------------------------------------------- Eq. (1)
def test_query_distribution_is_equation_1():
    # The exponential race must draw task j with probability a_j / (b + |p_j| - min|p|) / D.
    p = np.array([0.3, -0.1, 0.8, 0.15])
    a = np.array([1.0, 2.0, 1.0, 0.5])
    b = 0.2
    q = a / (b + np.abs(p) - np.abs(p).min())
    rng = np.random.default_rng(0)
    n = 200_000
    E = rng.standard_exponential((n, 4))
    J = _choose_tasks(np.tile(p, (n, 1)), E, a, b, 1)[:, 0]
    freq = np.bincount(J, minlength=4) / n
    np.testing.assert_allclose(freq, q / q.sum(), atol=0.005)
    # limits: b = inf follows the prior, b = 0 the smallest margin
    J_inf = _choose_tasks(np.tile(p, (n, 1)), E, a, np.inf, 1)[:, 0]
    np.testing.assert_allclose(np.bincount(J_inf, minlength=4) / n, a / a.sum(), atol=0.005)
    assert np.all(_choose_tasks(np.tile(p, (100, 1)), E[:100], a, 0.0, 1)[:, 0] == 1)


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
        online.learn_one([X[t] for X in Xs], oracle)
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
        a.learn_one([X[t] for X in Xs], oracle)
    b = pickle.loads(pickle.dumps(a))
    ob = pickle.loads(pickle.dumps(oracle))
    for t in range(100, 200):
        a.learn_one([X[t] for X in Xs], oracle)
        b.learn_one([X[t] for X in Xs], ob)
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
        SHAMPO().fit(Xs, [ys[0], np.where(ys[1] > 0, 1, 0)])
    with pytest.raises(ValueError, match="tasks"):
        SHAMPO().fit(Xs, [ys[0]])
    with pytest.raises(ValueError, match="NaN"):
        SHAMPO().fit([Xs[0], np.full((20, 6), np.nan)], ys)
    with pytest.raises(TypeError):
        SHAMPO().fit(Xs[0], ys[0])
    with pytest.raises(RuntimeError, match="not fitted"):
        SHAMPO().predict(Xs)
    model = SHAMPO(random_state=0).fit(Xs, ys)
    with pytest.raises(ValueError, match="features"):
        model.predict([Xs[0], Xs[1][:, :3]])
    with pytest.raises(ValueError, match="tasks"):
        model.predict([Xs[0]])
    with pytest.raises(ValueError, match="one input per task"):
        model.learn_one([Xs[0][0]], LabelOracle(ys))


# --------------------------------------------------------------------------- kernels
def test_kernel_shampo_linear_equals_shampo_and_rbf_matches_reference():
    Xs, ys = make_problem(K=3, n=150, d=4, seed=17)
    lin = KernelSHAMPO(kernel="linear", b=0.1, random_state=2).fit(Xs, ys)
    ref = SHAMPO(b=0.1, random_state=2).fit(Xs, ys)
    assert np.array_equal(lin.queried_tasks_, ref.queried_tasks_)
    np.testing.assert_allclose(lin.train_margins_, ref.train_margins_, atol=1e-9)
    gamma = 2.0
    rbf = KernelSHAMPO(kernel="rbf", gamma=gamma, b=0.1, random_state=2).fit(Xs, ys)
    k = lambda u, v: np.exp(-gamma * np.sum((u - v) ** 2))  # noqa: E731
    _, queried, margins, _ = naive_shampo(Xs, ys, 0.1, 0.05, seed=2, kernel=k)
    assert np.array_equal(rbf.queried_tasks_, queried)
    np.testing.assert_allclose(rbf.train_margins_, margins, atol=1e-9)
    np.testing.assert_allclose(rbf.decision_function([X[:5] for X in Xs])[0],
                               [sum(c * k(s, x) for s, c in zip(rbf.support_[0], rbf.dual_coef_[0]))
                                for x in scale_to_unit_ball(Xs[0][:5])], atol=1e-9)
    with pytest.raises(ValueError, match="kernel"):
        KernelSHAMPO(kernel="sigmoid").fit(Xs, ys)
    with pytest.raises(TypeError, match="dense"):
        KernelSHAMPO().fit([sp.csr_matrix(X) for X in Xs], ys)


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
