"""What AMLC, PEER and the Random / Independent baselines share: budgets, the oracle,
the round protocol, and numpy's summation order."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from medmtl.online import AMLC, PEER, IndependentQuery, MultiTaskStream, RandomQuery
from medmtl.online.active import pairwise_sum
from medmtl.online.oracle import BudgetExhausted, LabelOracle

from online_testdata import (SpyOracle, assert_unqueried_labels_do_not_matter, example_order, related_tasks)

LEARNERS = [AMLC, RandomQuery, IndependentQuery, PEER]


# --------------------------------------------------------------------------- budget and oracle
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


@pytest.mark.parametrize("cls", LEARNERS)
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


def test_labels_given_directly_are_read_through_an_oracle():
    Xs, ys = related_tasks(seed=17)
    a = AMLC(C=2.0, random_state=1).fit(Xs, ys)
    b = AMLC(C=2.0, random_state=1).fit(Xs, LabelOracle(ys))
    assert np.array_equal(a.weights_, b.weights_) and a.n_queries_ == b.n_queries_
    with pytest.raises(TypeError):
        AMLC().fit(Xs, "labels")


def test_learn_one_index_outside_the_oracle_raises():
    Xs, ys = related_tasks(seed=16)
    model = IndependentQuery(random_state=0)
    with pytest.raises(IndexError):
        model.learn_one(Xs[0][0], task=0, oracle=LabelOracle(ys), index=10_000)


def test_pairwise_sum_sums_like_numpy():
    # Ties in the sharing test (tau_km >= tau_kk) must not depend on the summation order.
    rng = np.random.default_rng(0)
    for n in [1, 2, 7, 8, 9, 15, 16, 17, 45, 127, 128, 129, 300, 1000, 4097]:
        a = rng.random(n) * rng.choice([1e-8, 1.0, 1e8], n)
        assert pairwise_sum(a) == np.sum(a)


# --------------------------------------------------------------------------- the round protocol
def test_fit_equals_learn_one_loop():
    Xs, ys = related_tasks(seed=8, sparse=True)
    order = np.array(example_order(Xs, np.random.default_rng(0)))
    a = AMLC(C=2.0, random_state=11).fit(Xs, LabelOracle(ys), order=order)
    b = AMLC(C=2.0, random_state=11)
    oracle = LabelOracle(ys)
    for k, i in order:
        b.learn_one(Xs[k][i], task=int(k), oracle=oracle, index=int(i))
    np.testing.assert_allclose(a.weights_, b.weights_, atol=1e-12)
    np.testing.assert_allclose(a.committee_weights_, b.committee_weights_, atol=1e-12)
    assert a.n_queries_ == b.n_queries_ == oracle.n_queries
    assert a.n_rounds_ == b.n_rounds_ == len(order)


def test_fit_takes_an_interleaved_stream():
    Xs, ys = related_tasks(seed=8)
    stream = MultiTaskStream.interleave(Xs, random_state=np.random.default_rng(3))
    a = PEER(random_state=3).fit(Xs, ys)
    b = PEER(random_state=3).fit(stream, ys)
    assert np.array_equal(a.stream_order_, b.stream_order_)
    with pytest.raises(ValueError, match="one example per round"):
        PEER().fit(MultiTaskStream(Xs), ys)


def test_learn_one_dense_vector_and_predict_one():
    Xs, ys = related_tasks(seed=9)
    model = AMLC(random_state=0)
    oracle = LabelOracle(ys)
    for i in range(30):
        assert model.learn_one(Xs[i % 4][i], task=i % 4, oracle=oracle, index=i) is None
    assert model.predict_one(Xs[0][0], task=0) in (-1, 1)
    assert model.predict_one(Xs[0][0], task=0) == model.predict(Xs[0][:1], task=0)[0]
    assert model.predict_one([X[0] for X in Xs]).tolist() == [model.predict(X[:1], task=k)[0]
                                                             for k, X in enumerate(Xs)]


def test_learn_one_default_index_is_the_next_example_of_the_task():
    Xs, ys = related_tasks(seed=9)
    a, b = IndependentQuery(random_state=0), IndependentQuery(random_state=0)
    oa, ob = LabelOracle(ys), LabelOracle(ys)
    for i in range(10):
        for k in range(4):
            a.learn_one(Xs[k][i], task=k, oracle=oa)
            b.learn_one(Xs[k][i], task=k, oracle=ob, index=i)
    assert np.array_equal(a.weights_, b.weights_)
    assert np.array_equal(oa.queries_per_task, ob.queries_per_task)


def test_learn_one_with_a_label_equals_an_oracle_round():
    Xs, ys = related_tasks(seed=10)
    a, b = AMLC(C=2.0, random_state=4), AMLC(C=2.0, random_state=4)
    oracle = LabelOracle(ys)
    a.learn_one(Xs[0][0], task=0, oracle=LabelOracle(ys), index=0)   # the first round sets K
    b.learn_one(Xs[0][0], task=0, oracle=oracle, index=0)
    for k, i in example_order(Xs, np.random.default_rng(2))[:80]:
        a.learn_one(Xs[k][i], ys[k][i], task=k)
        b.learn_one(Xs[k][i], task=k, oracle=oracle, index=i)
    assert np.array_equal(a.weights_, b.weights_)
    assert np.array_equal(a.committee_weights_, b.committee_weights_)
    assert a.n_queries_ == b.n_queries_
    with pytest.raises(NotFittedError, match="number of tasks"):
        AMLC().learn_one(Xs[0][0], ys[0][0], task=0)


@pytest.mark.parametrize("cls", LEARNERS)
def test_pickling_mid_stream(cls):
    Xs, ys = related_tasks(seed=10)
    order = np.array(example_order(Xs, np.random.default_rng(1)))
    model, oracle = cls(random_state=4), LabelOracle(ys)
    for k, i in order[:60]:
        model.learn_one(Xs[k][i], task=int(k), oracle=oracle, index=int(i))
    clone, clone_oracle = pickle.loads(pickle.dumps((model, oracle)))
    for k, i in order[60:]:
        model.learn_one(Xs[k][i], task=int(k), oracle=oracle, index=int(i))
        clone.learn_one(Xs[k][i], task=int(k), oracle=clone_oracle, index=int(i))
    np.testing.assert_array_equal(model.weights_, clone.weights_)
    assert model.n_queries_ == clone.n_queries_
    np.testing.assert_array_equal(model.predict(Xs[3], task=3), clone.predict(Xs[3], task=3))


@pytest.mark.parametrize("cls", LEARNERS)
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
    order = np.array(example_order(Xs, np.random.default_rng(0)))
    order_copy = order.copy()
    model = AMLC(random_state=0).fit(Xs, LabelOracle(ys), order=order)
    model.predict(Xs[0], task=0)
    model.learn_one(Xs[1][0], task=1, oracle=LabelOracle(ys), index=0)
    for X, Xc in zip(Xs, Xs_copy):
        assert (X != Xc).nnz == 0 if sparse else np.array_equal(X, Xc)
    for y, yc in zip(ys, ys_copy):
        assert np.array_equal(y, yc)
    assert np.array_equal(order, order_copy)


@pytest.mark.parametrize("cls", LEARNERS)
def test_dense_equals_sparse(cls):
    Xs, ys = related_tasks(seed=13, sparse=True)
    a = cls(random_state=0).fit(Xs, LabelOracle(ys))
    b = cls(random_state=0).fit([X.toarray() for X in Xs], LabelOracle(ys))
    assert np.array_equal(a.stream_queried_, b.stream_queried_)
    assert np.array_equal(a.stream_predictions_, b.stream_predictions_)
    np.testing.assert_allclose(a.weights_, b.weights_, atol=1e-12)
    np.testing.assert_allclose(a.decision_function(Xs[0], task=0), b.decision_function(Xs[0].toarray(), task=0),
                               atol=1e-12)


def test_sparse_rows_are_not_densified(monkeypatch):
    Xs, ys = related_tasks(seed=14, sparse=True)

    def refuse(*args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", refuse)
    monkeypatch.setattr(sp.csr_matrix, "todense", refuse)
    model = AMLC(random_state=0).fit(Xs, LabelOracle(ys))
    model.predict(Xs[0], task=0)


def test_learn_one_non_canonical_sparse_row_is_not_mutated():
    x = sp.csr_matrix((np.array([0.2, 0.3, 0.1]), np.array([3, 1, 3]), np.array([0, 3])), shape=(1, 6))
    data, indices = x.data.copy(), x.indices.copy()
    ys = [np.array([1]), np.array([-1])]
    sparse_model, dense_model = AMLC(random_state=0), AMLC(random_state=0)
    sparse_model.learn_one(x, task=0, oracle=LabelOracle(ys), index=0)
    dense_model.learn_one(np.array([0.0, 0.3, 0.0, 0.3, 0.0, 0.0]), task=0, oracle=LabelOracle(ys), index=0)
    assert np.array_equal(x.data, data) and np.array_equal(x.indices, indices)
    np.testing.assert_allclose(sparse_model.weights_, dense_model.weights_, atol=1e-15)
    assert sparse_model.n_queries_ == 1


# --------------------------------------------------------------------------- bad input
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
    with pytest.raises(NotFittedError, match="not fitted"):
        AMLC().predict(Xs[0], task=0)
    assert issubclass(NotFittedError, AttributeError)
    model = AMLC(random_state=0).fit(Xs, LabelOracle(ys))
    with pytest.raises(ValueError, match="features"):
        model.predict(Xs[0][:, :3], task=0)
    with pytest.raises(ValueError, match="out of range"):
        model.predict(Xs[0], task=7)
    with pytest.raises(TypeError, match="task must be an integer"):
        model.predict(Xs[0], task=1.0)
    with pytest.raises(ValueError, match="one example"):
        model.predict_one(Xs[0][:2], task=0)
    with pytest.raises(ValueError, match="oracle holds"):
        model.learn_one(Xs[0][0], task=0, oracle=LabelOracle(ys[:2]), index=0)
    with pytest.raises(TypeError, match="required keyword-only argument: 'task'"):
        model.learn_one(Xs[0][0], oracle=LabelOracle(ys), index=0)
    with pytest.raises(TypeError, match="task must be an integer"):
        model.learn_one(Xs[0][0], oracle=LabelOracle(ys), index=0, task=None)
    with pytest.raises(TypeError, match="one of the three"):
        model.learn_one(Xs[0][0], 1, task=0, oracle=LabelOracle(ys))
