"""AMLC, Random and Independent against naive per-example re-implementations.

The references below are written from the paper's Algorithm 1 (and the baselines' one-line
descriptions), one example at a time on dense vectors, sharing nothing with the
implementation but the documented conventions: the stream order is
``rng.permutation(n)`` of the tasks' concatenated examples, then each round draws its
uniform(s) with ``rng.random()``, a label is bought when ``u < probability``, and
``sign(0) = +1``.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.online import AMLC, IndependentQuery, RandomQuery, stream_from_tasks
from medmtl.online.oracle import BudgetExhausted, LabelOracle


# --------------------------------------------------------------------------- helpers
def related_tasks(n_tasks=4, n=40, d=6, seed=0, sparse=False, noise=0.3):
    """Linearly separable-ish tasks sharing most of one direction, rows of norm <= 1."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=d)
    Xs, ys = [], []
    for _ in range(n_tasks):
        w = common + noise * rng.normal(size=d)
        X = rng.normal(size=(n, d))
        if sparse:
            X[rng.random(X.shape) < 0.5] = 0.0
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
        y = np.where(X @ w >= 0, 1, -1)
        y[rng.random(n) < 0.05] *= -1
        Xs.append(sp.csr_matrix(X) if sparse else X)
        ys.append(y)
    return Xs, ys


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)


def sgn(z):
    return 1 if z >= 0 else -1


def stream(Xs, rng):
    sizes = [X.shape[0] for X in Xs]
    owners = [(k, i) for k, n in enumerate(sizes) for i in range(n)]
    return [owners[g] for g in rng.permutation(len(owners))]


def naive_amlc(Xs, ys, seed, b=1.0, C=1.0, share=True, share_on="disagreement", confidence="mean",
               budget=None):
    rng = np.random.default_rng(seed)
    rounds = stream(Xs, rng)
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
            lam = sum(losses)
            if lam > 0:
                new = np.array([tau[k, m] * np.exp(-C * losses[m] / lam) for m in range(K)])
                tau[k] = new / new.sum()
            if share:
                ref = yhat if share_on == "disagreement" else y
                for m in range(K):
                    if m != k and sgn(pk[m]) != ref and tau[k, m] >= tau[k, k]:
                        w[m] = w[m] + y * x
        preds.append(yhat)
        asked.append(bool(q))
    return {"w": w, "tau": tau, "preds": np.array(preds), "asked": np.array(asked), "rounds": rounds}


def naive_single(Xs, ys, seed, rule, b=1.0, budget=None):
    """Random (rule='random') or Independent (rule='independent') per-task perceptrons."""
    rng = np.random.default_rng(seed)
    rounds = stream(Xs, rng)
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


class SpyOracle(LabelOracle):
    """A LabelOracle whose label store can be read only by ``query`` and ``port``.

    ``port`` hands the store to the compiled twin of ``query`` (``oracle_query``), which
    counts every read; that it reads nothing else is proved by
    ``test_unqueried_labels_do_not_matter`` below.
    """

    def __init__(self, ys, budget=None):
        self._open = True
        super().__init__(ys, budget)
        self._open = False

    def __getattribute__(self, name):
        if name == "_labels" and not object.__getattribute__(self, "_open"):
            raise AssertionError("a learner read the labels without paying for them")
        return object.__getattribute__(self, name)

    def query(self, task, index):
        self._open = True
        try:
            return super().query(task, index)
        finally:
            self._open = False

    def port(self):
        self._open = True
        try:
            return super().port()
        finally:
            self._open = False


def check_against(model, ref, oracle):
    assert np.array_equal(model.stream_order_, np.array(ref["rounds"]))
    assert np.array_equal(model.stream_predictions_, ref["preds"])
    assert np.array_equal(model.stream_queried_, ref["asked"])
    np.testing.assert_allclose(model.weights_, ref["w"], atol=1e-12)
    assert model.n_queries_ == oracle.n_queries == ref["asked"].sum()
    # The oracle was asked exactly for the rounds the learner says it paid for.
    for (k, i), q in zip(ref["rounds"], ref["asked"]):
        assert oracle.was_queried(k, i) == q


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
    np.testing.assert_allclose(model.decision_function(Xs[2], 2), X @ (ref["tau"][2] @ ref["w"]), atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cls,rule", [(RandomQuery, "random"), (IndependentQuery, "independent")])
def test_baselines_match_naive(cls, rule, sparse):
    Xs, ys = related_tasks(sparse=sparse, seed=2)
    oracle = SpyOracle(ys)
    model = cls(random_state=5).fit(Xs, oracle)
    ref = naive_single(Xs, ys, seed=5, rule=rule)
    check_against(model, ref, oracle)
    # no knowledge moves between tasks: test margins are each task's own perceptron
    np.testing.assert_allclose(model.decision_function(Xs[1], 1), dense(Xs[1]) @ ref["w"][1], atol=1e-12)


def test_independent_b_and_budget_match_naive():
    Xs, ys = related_tasks(seed=4)
    oracle = SpyOracle(ys)
    model = IndependentQuery(b=0.3, budget=12, random_state=1).fit(Xs, oracle)
    check_against(model, naive_single(Xs, ys, seed=1, rule="independent", b=0.3, budget=12), oracle)


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


# --------------------------------------------------------------------------- oracle, budget
def test_budget_is_honoured_and_learning_stops():
    Xs, ys = related_tasks(seed=5)
    free = AMLC(random_state=2).fit(Xs, LabelOracle(ys))
    assert free.n_queries_ > 20
    oracle = SpyOracle(ys)
    capped = AMLC(random_state=2, budget=20).fit(Xs, oracle)
    assert capped.n_queries_ == oracle.n_queries == 20
    last = np.flatnonzero(capped.stream_queried_)[-1]
    # Identical to the free run up to the last paid round; no query after it.
    assert np.array_equal(capped.stream_queried_[:last + 1], free.stream_queried_[:last + 1])
    assert not capped.stream_queried_[last + 1:].any()


@pytest.mark.parametrize("cls", [AMLC, RandomQuery, IndependentQuery])
def test_oracle_budget_is_honoured_without_raising(cls):
    Xs, ys = related_tasks(seed=6)
    oracle = LabelOracle(ys, budget=7)
    model = cls(random_state=0).fit(Xs, oracle)
    assert oracle.n_queries == model.n_queries_ == 7
    with pytest.raises(BudgetExhausted):
        oracle.query(0, 0)


def test_zero_budget_buys_nothing_and_learns_nothing():
    Xs, ys = related_tasks(seed=6)
    oracle = SpyOracle(ys)
    model = AMLC(budget=0, random_state=0).fit(Xs, oracle)
    assert oracle.n_queries == 0
    assert not model.weights_.any()


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("make", [
    lambda: AMLC(C=2.0, random_state=2),
    lambda: AMLC(confidence="sum", share_on="mistake", random_state=2),
    lambda: RandomQuery(random_state=2),
    lambda: IndependentQuery(b=0.5, random_state=2),
])
def test_unqueried_labels_do_not_matter(make, sparse):
    Xs, ys = related_tasks(n=60, sparse=sparse, seed=15)
    assert_unqueried_labels_do_not_matter(make, Xs, ys)


def assert_unqueried_labels_do_not_matter(make, Xs, ys):
    """The compiled loop gets the oracle's store through its port; prove it reads only what
    it pays for: flip every label it did not buy and the run must not change at all."""
    oracle = SpyOracle(ys)
    first = make().fit(Xs, oracle)
    unasked = [np.array([not oracle.was_queried(k, i) for i in range(len(y))]) for k, y in enumerate(ys)]
    assert 0 < sum(int(u.sum()) for u in unasked) < sum(len(y) for y in ys)
    flipped = [np.where(u, -y, y) for u, y in zip(unasked, ys)]
    other_oracle = SpyOracle(flipped)
    second = make().fit(Xs, other_oracle)
    assert np.array_equal(second.stream_queried_, first.stream_queried_)
    assert np.array_equal(second.stream_predictions_, first.stream_predictions_)
    assert np.array_equal(second.weights_, first.weights_)
    if hasattr(first, "committee_weights_"):
        assert np.array_equal(second.committee_weights_, first.committee_weights_)
    assert np.array_equal(other_oracle.queries_per_task, oracle.queries_per_task)
    assert first.n_queries_ == oracle.n_queries == int(first.stream_queried_.sum())


def test_tau_normalisation_sums_like_numpy():
    # Ties in the sharing test (tau_km >= tau_kk) must not depend on the summation order.
    from medmtl.online.amlc import _numpy_sum

    rng = np.random.default_rng(0)
    for n in [1, 2, 7, 8, 9, 15, 16, 17, 45, 127, 128, 129, 300, 1000, 4097]:
        a = rng.random(n) * rng.choice([1e-8, 1.0, 1e8], n)
        assert _numpy_sum(a) == np.sum(a)


def test_learn_one_index_outside_the_oracle_raises():
    Xs, ys = related_tasks(seed=16)
    model = IndependentQuery(random_state=0)
    with pytest.raises(IndexError):
        model.learn_one(Xs[0][0], 0, LabelOracle(ys), 10_000)


# --------------------------------------------------------------------------- river-style checks
def test_fit_equals_learn_one_loop():
    Xs, ys = related_tasks(seed=8, sparse=True)
    order = np.array(stream(Xs, np.random.default_rng(0)))
    a = AMLC(C=2.0, random_state=11).fit(Xs, LabelOracle(ys), order=order)
    b = AMLC(C=2.0, random_state=11)
    oracle = LabelOracle(ys)
    for k, i in order:
        b.learn_one(Xs[k][i], int(k), oracle, int(i))
    np.testing.assert_allclose(a.weights_, b.weights_, atol=1e-12)
    np.testing.assert_allclose(a.committee_weights_, b.committee_weights_, atol=1e-12)
    assert a.n_queries_ == b.n_queries_ == oracle.n_queries


def test_learn_one_dense_vector_and_predict_one():
    Xs, ys = related_tasks(seed=9)
    model = AMLC(random_state=0)
    oracle = LabelOracle(ys)
    for i in range(30):
        assert model.learn_one(Xs[i % 4][i], i % 4, oracle, i) is None
    assert model.predict_one(Xs[0][0], 0) in (-1, 1)
    assert model.predict_one(Xs[0][0], 0) == model.predict(Xs[0][:1], 0)[0]


@pytest.mark.parametrize("cls", [AMLC, RandomQuery, IndependentQuery])
def test_pickling_mid_stream(cls):
    Xs, ys = related_tasks(seed=10)
    order = np.array(stream(Xs, np.random.default_rng(1)))
    model, oracle = cls(random_state=4), LabelOracle(ys)
    for k, i in order[:60]:
        model.learn_one(Xs[k][i], int(k), oracle, int(i))
    clone, clone_oracle = pickle.loads(pickle.dumps((model, oracle)))
    for k, i in order[60:]:
        model.learn_one(Xs[k][i], int(k), oracle, int(i))
        clone.learn_one(Xs[k][i], int(k), clone_oracle, int(i))
    np.testing.assert_array_equal(model.weights_, clone.weights_)
    assert model.n_queries_ == clone.n_queries_
    np.testing.assert_array_equal(model.predict(Xs[3], 3), clone.predict(Xs[3], 3))


@pytest.mark.parametrize("cls", [AMLC, RandomQuery, IndependentQuery])
def test_same_seed_same_result_other_seed_differs(cls):
    Xs, ys = related_tasks(seed=11)
    runs = [cls(random_state=s).fit(Xs, LabelOracle(ys)) for s in (0, 0, 1)]
    assert np.array_equal(runs[0].stream_queried_, runs[1].stream_queried_)
    np.testing.assert_array_equal(runs[0].weights_, runs[1].weights_)
    assert not np.array_equal(runs[0].stream_order_, runs[2].stream_order_)


@pytest.mark.parametrize("sparse", [False, True])
def test_inputs_never_mutated(sparse):
    Xs, ys = related_tasks(seed=12, sparse=sparse)
    Xs_copy = [X.copy() for X in Xs]
    ys_copy = [y.copy() for y in ys]
    order = np.array(stream(Xs, np.random.default_rng(0)))
    order_copy = order.copy()
    model = AMLC(random_state=0).fit(Xs, LabelOracle(ys), order=order)
    model.predict(Xs[0], 0)
    model.learn_one(Xs[1][0], 1, LabelOracle(ys), 0)
    for X, Xc in zip(Xs, Xs_copy):
        assert (X != Xc).nnz == 0 if sparse else np.array_equal(X, Xc)
    for y, yc in zip(ys, ys_copy):
        assert np.array_equal(y, yc)
    assert np.array_equal(order, order_copy)


@pytest.mark.parametrize("cls", [AMLC, RandomQuery, IndependentQuery])
def test_dense_equals_sparse(cls):
    Xs, ys = related_tasks(seed=13, sparse=True)
    a = cls(random_state=0).fit(Xs, LabelOracle(ys))
    b = cls(random_state=0).fit([X.toarray() for X in Xs], LabelOracle(ys))
    assert np.array_equal(a.stream_queried_, b.stream_queried_)
    assert np.array_equal(a.stream_predictions_, b.stream_predictions_)
    np.testing.assert_allclose(a.weights_, b.weights_, atol=1e-12)
    np.testing.assert_allclose(a.decision_function(Xs[0], 0), b.decision_function(Xs[0].toarray(), 0),
                               atol=1e-12)


def test_sparse_rows_are_not_densified(monkeypatch):
    Xs, ys = related_tasks(seed=14, sparse=True)

    def refuse(*args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", refuse)
    monkeypatch.setattr(sp.csr_matrix, "todense", refuse)
    model = AMLC(random_state=0).fit(Xs, LabelOracle(ys))
    model.predict(Xs[0], 0)


# --------------------------------------------------------------------------- bad input
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


def test_bad_random_query_probability():
    Xs, ys = related_tasks(seed=0)
    with pytest.raises(ValueError, match="query_probability"):
        RandomQuery(query_probability=1.5).fit(Xs, LabelOracle(ys))


def test_bad_inputs():
    Xs, ys = related_tasks(seed=0)
    bad = [X.copy() for X in Xs]
    bad[1][3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        AMLC().fit(bad, LabelOracle(ys))
    with pytest.raises(ValueError, match="same number of features"):
        AMLC().fit([Xs[0], Xs[1][:, :4]], LabelOracle(ys[:2]))
    with pytest.raises(TypeError, match="mixes dense and sparse"):
        AMLC().fit([Xs[0], sp.csr_matrix(Xs[1])], LabelOracle(ys[:2]))
    with pytest.raises(TypeError, match="LabelOracle"):
        AMLC().fit(Xs, ys)
    with pytest.raises(ValueError, match="oracle holds 2 tasks"):
        AMLC().fit(Xs, LabelOracle(ys[:2]))
    with pytest.raises(TypeError, match="list of per-task"):
        AMLC().fit(Xs[0], LabelOracle(ys))
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        LabelOracle([np.zeros(40)] + ys[1:])
    with pytest.raises(ValueError, match="order"):
        AMLC().fit(Xs, LabelOracle(ys), order=np.array([[0, 1, 2]]))
    with pytest.raises(ValueError, match="beyond its task"):
        AMLC().fit(Xs, LabelOracle(ys), order=np.array([[0, 400]]))
    with pytest.raises(ValueError, match="tasks outside"):
        AMLC().fit(Xs, LabelOracle(ys), order=np.array([[9, 0]]))


def test_bad_prediction_calls():
    Xs, ys = related_tasks(seed=0)
    with pytest.raises(AttributeError, match="not seen any data"):
        AMLC().predict(Xs[0], 0)
    model = AMLC(random_state=0).fit(Xs, LabelOracle(ys))
    with pytest.raises(ValueError, match="features"):
        model.predict(Xs[0][:, :3], 0)
    with pytest.raises(ValueError, match="out of range"):
        model.predict(Xs[0], 7)
    with pytest.raises(TypeError, match="task must be an integer"):
        model.predict(Xs[0], 1.0)
    with pytest.raises(ValueError, match="one example"):
        model.predict_one(Xs[0][:2], 0)
    with pytest.raises(ValueError, match="oracle holds"):
        model.learn_one(Xs[0][0], 0, LabelOracle(ys[:2]), 0)


def test_stream_from_tasks_order_and_copy():
    Xs, _ = related_tasks(seed=0, sparse=True)
    rows, order = stream_from_tasks(Xs, random_state=0)
    ref = stream(Xs, np.random.default_rng(0))
    assert [tuple(o) for o in order.tolist()] == ref
    for t, (k, i) in enumerate(ref[:20]):
        np.testing.assert_array_equal(rows[t].toarray(), Xs[k][i].toarray())


def test_learn_one_non_canonical_sparse_row_is_not_mutated():
    x = sp.csr_matrix((np.array([0.2, 0.3, 0.1]), np.array([3, 1, 3]), np.array([0, 3])), shape=(1, 6))
    data, indices = x.data.copy(), x.indices.copy()
    ys = [np.array([1]), np.array([-1])]
    sparse_model, dense_model = AMLC(random_state=0), AMLC(random_state=0)
    sparse_model.learn_one(x, 0, LabelOracle(ys), 0)
    dense_model.learn_one(np.array([0.0, 0.3, 0.0, 0.3, 0.0, 0.0]), 0, LabelOracle(ys), 0)
    assert np.array_equal(x.data, data) and np.array_equal(x.indices, indices)
    np.testing.assert_allclose(sparse_model.weights_, dense_model.weights_, atol=1e-15)
    assert sparse_model.n_queries_ == 1
