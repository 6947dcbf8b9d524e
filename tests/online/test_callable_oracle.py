"""Rounds a person labels: query_one then learn_one(answers=...), and a CallableOracle through learn_one."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from medmtl.datasets import load_landmine, load_statlog_dna, load_usps
from medmtl.online import (AMLC, PEER, SHAMPO, Banditron, BudgetExhausted, CallableOracle, KernelSHAMPO,
                           LabelOracle, OneVsOneBandit, OneVsRestBandit, PairFeedbackOracle, PEERShare, Query,
                           RandomQuery, one_vs_rest_oracle)


@pytest.fixture(scope="module")
def usps_tasks():
    """USPS one-vs-rest: ten binary tasks reading the same digit each round (dense)."""
    ds = load_usps("test", scheme="one-vs-rest")
    return [t.X[:300] for t in ds], [t.y[:300] for t in ds]


@pytest.fixture(scope="module")
def dna_tasks():
    """StatLog DNA one-vs-rest: three binary tasks, sparse rows."""
    ds = load_statlog_dna("test", scheme="one-vs-rest")
    return [t.X[:300] for t in ds], [t.y[:300] for t in ds]


def rounds(Xs):
    return [[X[t] for X in Xs] for t in range(Xs[0].shape[0])]


def same_shampo(a, b):
    return all(np.array_equal(u, v) for u, v in zip(a.coef_, b.coef_)) and \
        np.array_equal(a.queries_per_task_, b.queries_per_task_) and \
        np.array_equal(a.updates_per_task_, b.updates_per_task_) and a.n_rounds_ == b.n_rounds_


@pytest.mark.parametrize("data, params", [("usps_tasks", {"b": 0.5}), ("dna_tasks", {"b": 0.2, "n_queries": 2}),
                                          ("usps_tasks", {"strategy": "exploit", "aggressive": False})])
def test_shampo_with_a_callable_reaches_the_array_oracles_model(data, params, request):
    Xs, ys = request.getfixturevalue(data)
    before = [X.copy() for X in Xs]
    reference = SHAMPO(random_state=0, **params).fit(Xs, LabelOracle(ys))
    oracle = CallableOracle(lambda q: ys[q.task][q.index], n_tasks=len(Xs))
    model = SHAMPO(random_state=0, **params)
    for xs in rounds(Xs):
        model.learn_one(xs, oracle=oracle)
    assert same_shampo(model, reference)
    assert all((a != b).nnz == 0 if hasattr(a, "nnz") else np.array_equal(a, b) for a, b in zip(Xs, before))

    # the record: every question, in order, with what the learner predicted before the answer
    n, q = reference.queried_tasks_.shape
    record = oracle.record
    assert len(record) == oracle.n_queries == n * q and oracle.n_skipped == 0
    assert [r["index"] for r in record] == np.repeat(np.arange(n), q).tolist()
    assert sorted(zip([r["index"] for r in record], [r["task"] for r in record])) == \
        sorted((t, int(j)) for t in range(n) for j in reference.queried_tasks_[t])
    assert all(r["answer"] == ys[r["task"]][r["index"]] for r in record)
    for r in record:
        if r["index"] == 0:                               # the learner's first round: no model yet
            assert r["prediction"] is None and r["margin"] is None
        else:                                             # the round's margin, before its updates
            margin = reference.train_margins_[r["index"], r["task"]]
            assert r["prediction"] == (1 if margin >= 0 else -1) and np.isclose(r["margin"], margin)
    times = [r["time"] for r in record]
    assert times == sorted(times) and all(r["seconds"] >= 0 for r in record)


def test_the_query_shows_a_copy_of_the_asked_input(usps_tasks):
    Xs, ys = usps_tasks
    seen = []
    oracle = CallableOracle(lambda q: seen.append(q) or ys[q.task][q.index], n_tasks=len(Xs))
    model = SHAMPO(random_state=0)
    for xs in rounds(Xs)[:5]:
        model.learn_one(xs, oracle=oracle)
    assert all(isinstance(q, Query) for q in seen) and [q.index for q in seen] == list(range(5))
    for q in seen:
        assert np.array_equal(q.x, Xs[q.task][q.index])
        q.x[:] = -1.0                                     # the learner's input is a copy
    assert Xs[seen[0].task][0].min() >= 0


def test_budget_is_enforced_and_the_round_left_unplayed(usps_tasks):
    Xs, ys = usps_tasks
    calls = []
    oracle = CallableOracle(lambda q: calls.append(q) or ys[q.task][q.index], n_tasks=len(Xs), budget=30)
    model = SHAMPO(random_state=0)
    data = rounds(Xs)
    for xs in data[:30]:
        model.learn_one(xs, oracle=oracle)
    assert oracle.remaining == 0
    with pytest.raises(BudgetExhausted, match="budget of 30 labels"):
        model.learn_one(data[30], oracle=oracle)
    assert len(calls) == len(oracle.record) == oracle.n_queries == 30
    # the refused round changed nothing: the model is the one 30 labelled rounds give
    assert same_shampo(model, SHAMPO(random_state=0).fit([X[:30] for X in Xs], [y[:30] for y in ys]))


def test_active_learners_stop_learning_when_the_budget_is_spent():
    ds = load_landmine(tasks=range(3))
    Xs, ys = [t.X[:100] for t in ds], [t.y[:100] for t in ds]
    order = np.array([(k, i) for i in range(100) for k in range(3)])
    for make in (lambda: AMLC(b=20.0, random_state=0), lambda: PEER(b=20.0, peer_b=20.0, random_state=0)):
        live, reference = make(), make()
        oracle = CallableOracle(lambda q: ys[q.task][q.index], n_tasks=3, budget=15)
        array = LabelOracle(ys, budget=15)
        for k, i in order:
            live.learn_one(Xs[k][i], task=k, oracle=oracle)
            reference.learn_one(Xs[k][i], task=k, oracle=array)
        assert np.array_equal(live.weights_, reference.weights_)
        assert live.n_queries_ == oracle.n_queries == len(oracle.record) == 15
        # the same rounds as fit plays them
        assert np.array_equal(live.weights_, make().fit(Xs, LabelOracle(ys, budget=15), order=order).weights_)


def test_skipped_questions_drop_their_round(usps_tasks):
    Xs, ys = usps_tasks
    skip = {3, 4, 17, 50}
    current = {}
    oracle = CallableOracle(lambda q: None if current["t"] in skip else ys[q.task][current["t"]], n_tasks=len(Xs))
    model = SHAMPO(random_state=0)
    for t, xs in enumerate(rounds(Xs)[:80]):
        current["t"] = t
        model.learn_one(xs, oracle=oracle)
    kept = [t for t in range(80) if t not in skip]
    reference = SHAMPO(random_state=0).fit([X[kept] for X in Xs], [y[kept] for y in ys])
    assert same_shampo(model, reference)
    assert oracle.n_skipped == len(skip) and len(oracle.record) == 80 and oracle.n_queries == 76
    assert [r["answer"] is None for r in oracle.record].count(True) == 4


def test_a_failing_answer_leaves_the_learner_as_it_was(usps_tasks):
    Xs, ys = usps_tasks
    data, later = rounds(Xs), {"ready": False}

    def answer(q):
        if q.index == 5 and not later["ready"]:
            raise KeyboardInterrupt("the annotator went for coffee")
        return ys[q.task][q.index]

    oracle = CallableOracle(answer, n_tasks=len(Xs))
    model = SHAMPO(random_state=0)
    for xs in data[:5]:
        model.learn_one(xs, oracle=oracle)
    with pytest.raises(KeyboardInterrupt):
        model.learn_one(data[5], oracle=oracle)
    later["ready"] = True                                     # the same round, played again later
    for xs in data[5:40]:
        model.learn_one(xs, oracle=oracle)
    assert same_shampo(model, SHAMPO(random_state=0).fit([X[:40] for X in Xs], [y[:40] for y in ys]))
    assert oracle.n_queries == len(oracle.record) == 40


@pytest.mark.parametrize("bad", [2, 0, True, "yes", 0.5])
def test_bad_answers_are_refused(usps_tasks, bad):
    Xs, ys = usps_tasks
    model = SHAMPO(random_state=0)
    model.learn_one(rounds(Xs)[0], oracle=CallableOracle(lambda q: 1, n_tasks=len(Xs)))
    coef = [c.copy() for c in model.coef_]
    with pytest.raises(ValueError, match=r"answer must be one of \(-1, 1\) or None"):
        model.learn_one(rounds(Xs)[1], oracle=CallableOracle(lambda q: bad, n_tasks=len(Xs)))
    assert model.n_rounds_ == 1 and all(np.array_equal(a, b) for a, b in zip(coef, model.coef_))


def test_answers_are_not_reused_across_rounds_with_the_same_index():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    answers = iter([1, -1, 1])
    oracle = CallableOracle(lambda q: next(answers))
    model = AMLC(random_state=0, b=1e9)                       # always asks
    for x in X:
        model.learn_one(x, task=0, oracle=oracle, index=0)
    assert [r["answer"] for r in oracle.record] == [1, -1, 1] and oracle.n_queries == 3
    assert oracle.was_queried(0, 0)


def test_bandit_learners_ask_the_callable(usps_tasks):
    X, labels = load_usps("test")
    X, labels = X[:300], labels[:300]
    for make in (lambda: Banditron(gamma=0.1, random_state=0), lambda: OneVsRestBandit(b=0.1, random_state=0)):
        oracle = CallableOracle(lambda q: 1 if labels[q.index] == q.task else -1, n_tasks=10)
        live, reference, array = make(), make(), one_vs_rest_oracle(labels, 10)
        for row in X:
            live.learn_one(row, oracle=oracle)
            reference.learn_one(row, oracle=array)
        assert np.array_equal(live.coef_, reference.coef_) and oracle.n_queries == array.n_queries == 300
        assert len(oracle.record) == 300 and oracle.record[1]["prediction"] in range(10)


def test_kernel_shampo_with_a_callable():
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(40, 3)) for _ in range(2)]
    ys = [np.where(X[:, 0] > 0, 1, -1) for X in Xs]
    oracle = CallableOracle(lambda q: ys[q.task][q.index], n_tasks=2)
    model = KernelSHAMPO(kernel="rbf", random_state=0)
    for xs in rounds(Xs):
        model.learn_one(xs, oracle=oracle)
    reference = KernelSHAMPO(kernel="rbf", random_state=0).fit(Xs, ys)
    assert all(np.array_equal(a, b) for a, b in zip(model.dual_coef_, reference.dual_coef_))
    assert oracle.n_queries == 40


def test_fit_needs_labels_in_advance(usps_tasks):
    Xs, ys = usps_tasks
    oracle = CallableOracle(lambda q: 1, n_tasks=len(Xs))
    with pytest.raises(TypeError, match="one question at a time.*learn_one"):
        SHAMPO().fit(Xs, oracle)
    with pytest.raises(TypeError, match="one question at a time.*learn_one"):
        Banditron().fit(Xs[0], CallableOracle(lambda q: 1, n_tasks=10))


def test_bad_parameters():
    with pytest.raises(TypeError, match="answer must be a callable"):
        CallableOracle([1, -1])
    with pytest.raises(ValueError, match="n_tasks must be a positive integer"):
        CallableOracle(lambda q: 1, n_tasks=0)
    with pytest.raises(ValueError, match="budget must be a non-negative integer"):
        CallableOracle(lambda q: 1, budget=-1)
    with pytest.raises(IndexError, match="task 3 out of range"):
        CallableOracle(lambda q: 1, n_tasks=2).query(3, 0)
    with pytest.raises(LookupError, match="no answer is held"):
        CallableOracle(lambda q: 1).query(0, 4)


# ------------------------------------------------------------------ the two-step round by hand
def test_every_task_rounds_in_two_steps_equal_fit(usps_tasks):
    Xs, ys = usps_tasks
    reference = SHAMPO(b=0.5, n_queries=2, random_state=0).fit(Xs, ys)
    model = SHAMPO(b=0.5, n_queries=2, random_state=0)
    for t, xs in enumerate(rounds(Xs)):
        questions = model.query_one(xs)
        assert [q.task for q in model.query_one(xs)] == [q.task for q in questions]   # asking twice changes nothing
        assert sorted(q.task for q in questions) == sorted(reference.queried_tasks_[t].tolist())
        assert all(q.index == t for q in questions)
        model.learn_one(xs, answers=[ys[q.task][t] for q in questions])
    assert same_shampo(model, reference)


def test_one_task_rounds_in_two_steps_equal_fit():
    ds = load_landmine(tasks=range(3))
    Xs, ys = [t.X[:60] for t in ds], [t.y[:60] for t in ds]
    order = np.array([(k, i) for i in range(60) for k in range(3)])
    for make in (lambda: AMLC(b=2.0, random_state=0), lambda: PEERShare(b=2.0, random_state=0),
                 lambda: RandomQuery(budget=40, random_state=0)):
        reference, model = make().fit(Xs, ys, order=order), make()
        model.learn_one(Xs[0][0], task=0, oracle=LabelOracle(ys), index=0)      # the first round tells K
        for k, i in order[1:]:
            questions = model.query_one(Xs[k][i], task=k)
            assert len(questions) == int(reference.stream_queried_[i * 3 + k])
            assert all(q.task == k and q.index == i for q in questions)
            model.learn_one(Xs[k][i], task=k, answers=[ys[k][i] for _ in questions])
        assert np.array_equal(model.weights_, reference.weights_) and model.n_queries_ == reference.n_queries_


def test_multiclass_rounds_in_two_steps():
    X, labels = load_usps("test")
    X, labels = X[:150], labels[:150]
    for make, annotator in ((lambda: Banditron(gamma=0.1, random_state=0), one_vs_rest_oracle),
                            (lambda: OneVsRestBandit(b=0.1, random_state=0), one_vs_rest_oracle),
                            (lambda: OneVsOneBandit(zero_feedback="random", random_state=0), PairFeedbackOracle)):
        reference, model, oracle = make(), make(), annotator(labels, 10)
        for t, row in enumerate(X):
            reference.learn_one(row, oracle=oracle, index=t)
        answers = annotator(labels, 10)
        model.learn_one(X[0], oracle=answers, index=0)
        for t in range(1, 150):
            questions = model.query_one(X[t])
            assert len(questions) == 1 and questions[0].index == t
            model.learn_one(X[t], answers=[answers.query(q.task, t) for q in questions])
        assert np.array_equal(model.coef_, reference.coef_)


def test_asking_is_not_learning(usps_tasks):
    Xs, ys = usps_tasks
    model = SHAMPO(random_state=0).fit([X[:20] for X in Xs], [y[:20] for y in ys])
    coef, queries = [c.copy() for c in model.coef_], model.queries_per_task_.copy()
    first = model.query_one(rounds(Xs)[20])
    assert model.n_rounds_ == 20 and np.array_equal(model.queries_per_task_, queries)
    assert all(np.array_equal(a, b) for a, b in zip(coef, model.coef_))
    assert first[0].prediction in (-1, 1) and isinstance(first[0].margin, float)
    # the round's random numbers are drawn once: the next round asked about gets them whatever its input
    again = model.query_one(rounds(Xs)[20])
    assert [(q.task, q.index, q.prediction, q.margin) for q in again] == \
        [(q.task, q.index, q.prediction, q.margin) for q in first]


def test_wrong_answers_are_refused(usps_tasks):
    Xs, ys = usps_tasks
    model = SHAMPO(random_state=0)
    xs = rounds(Xs)[0]
    with pytest.raises(ValueError, match="asks 1 question .* got 2 answers"):
        model.learn_one(xs, answers=[1, 1])
    with pytest.raises(ValueError, match="not one of the classes"):
        model.learn_one(xs, answers=[5])
    with pytest.raises(TypeError, match="one of the three"):
        model.learn_one(xs, [1] * len(Xs), answers=[1])
    with pytest.raises(ValueError, match="prior='mistakes'"):
        SHAMPO(prior="mistakes").query_one(xs)
    with pytest.raises(NotFittedError, match="first round needs an oracle"):
        AMLC().query_one(Xs[0][0], task=0)
