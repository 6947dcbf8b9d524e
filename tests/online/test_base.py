"""One protocol for every online learner: the same generic checks run over each of them.

Signatures (one round shape per base class), the not-fitted error, seeding, unmodified
inputs, pickling (fitted and mid-stream), ``learn_one(x, y)`` against ``learn_one(x,
oracle=...)`` and against ``query_one`` then ``learn_one(x, answers=...)``, and ``score`` as
the pooled accuracy of ``predict``.
"""

import inspect
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from medmtl.online import (AMLC, PEER, SHAMPO, Banditron, EveryTaskLearner, IndependentQuery, KernelSHAMPO,
                           LabelOracle, MulticlassLearner, MultiTaskLearner, OneTaskLearner, OneVsOneBandit,
                           OneVsRestBandit, OnlineLearner, PairFeedbackOracle, PEERShare, RandomQuery,
                           one_vs_rest_oracle)

from online_testdata import multiclass_problem, multitask_problem, related_tasks


class EveryTask:
    """Learners that show every task an input on every round (x = the K inputs)."""

    def __init__(self, sparse):
        self.Xs, self.ys = multitask_problem(K=3, n=80, d=4, seed=1, sparse=sparse)
        self.X_test, self.y_test = multitask_problem(K=3, n=30, d=4, seed=2, sparse=sparse)

    def fit_data(self):
        return self.Xs, self.ys

    def rounds(self):
        """(x, y, task, oracle, index) of rounds after ``fit``: labels, and the same as an oracle."""
        oracle = LabelOracle(self.ys)
        return [([X[t] for X in self.Xs], [y[t] for y in self.ys], None, oracle, t) for t in range(20)]

    def one_input(self):
        return [X[0] for X in self.X_test], None


class OneTask(EveryTask):
    """Learners that see one example of one task per round."""

    def __init__(self, sparse):
        self.Xs, self.ys = related_tasks(n_tasks=3, n=60, d=4, seed=3, sparse=sparse)
        self.X_test, self.y_test = related_tasks(n_tasks=3, n=30, d=4, seed=4, sparse=sparse)

    def rounds(self):
        oracle = LabelOracle(self.ys)
        return [(self.Xs[t % 3][t], self.ys[t % 3][t], t % 3, oracle, t) for t in range(30)]

    def one_input(self):
        return self.X_test[1][0], 1


class Multiclass(EveryTask):
    """Learners of one multiclass problem."""

    def __init__(self, sparse, pairs=False):
        X, labels = multiclass_problem(n=300, seed=5, sparse=sparse)
        self.Xs, self.ys = X[:200], labels[:200]
        self.X_test, self.y_test = X[200:], labels[200:]
        self.all_labels, self.X = labels, X
        self.pairs = pairs

    def rounds(self):
        oracle = (PairFeedbackOracle if self.pairs else one_vs_rest_oracle)(self.all_labels)
        return [(self.X[t], self.all_labels[t], None, oracle, t) for t in range(200, 230)]

    def one_input(self):
        return self.X_test[0], None


LEARNERS = {
    "SHAMPO": (lambda: SHAMPO(b=0.1, random_state=0), EveryTask, True),
    "KernelSHAMPO": (lambda: KernelSHAMPO(kernel="rbf", b=0.1, random_state=0), EveryTask, False),
    "OneVsRestBandit": (lambda: OneVsRestBandit(b=0.1, random_state=0), Multiclass, True),
    "OneVsOneBandit": (lambda: OneVsOneBandit(zero_feedback="random", b=0.1, random_state=0),
                       lambda sparse: Multiclass(sparse, pairs=True), True),
    "Banditron": (lambda: Banditron(gamma=0.1, random_state=0), Multiclass, True),
    "AMLC": (lambda: AMLC(C=2.0, random_state=0), OneTask, True),
    "PEER": (lambda: PEER(random_state=0), OneTask, True),
    "PEERShare": (lambda: PEERShare(random_state=0), OneTask, True),
    "RandomQuery": (lambda: RandomQuery(random_state=0), OneTask, True),
    "IndependentQuery": (lambda: IndependentQuery(random_state=0), OneTask, True),
}
CASES = [(name, sparse) for name, (_, _, takes_sparse) in LEARNERS.items()
         for sparse in ((False, True) if takes_sparse else (False,))]


def setup(name, sparse=False):
    make, problem, _ = LEARNERS[name]
    return make, problem(sparse)


def of_task(task):
    """The round's task as ``learn_one`` and ``query_one`` take it: only the one-task shape has one."""
    return {} if task is None else {"task": task}


def same_predictions(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(np.array_equal(u, v) for u, v in zip(a, b))
    return np.array_equal(a, b)


def snapshot(data):
    if isinstance(data, (list, tuple)):
        return [snapshot(d) for d in data]
    return data.copy() if sp.issparse(data) or isinstance(data, np.ndarray) else data


def unchanged(before, after):
    if isinstance(before, list):
        return all(unchanged(b, a) for b, a in zip(before, after))
    if sp.issparse(before):
        return (before != after).nnz == 0 and np.array_equal(before.indices, after.indices)
    return np.array_equal(np.asarray(before), np.asarray(after))


@pytest.mark.parametrize("name", LEARNERS)
def test_signatures_are_the_protocol(name):
    cls = type(LEARNERS[name][0]())
    assert issubclass(cls, OnlineLearner)
    shapes = [base for base in (EveryTaskLearner, OneTaskLearner, MulticlassLearner) if issubclass(cls, base)]
    assert len(shapes) == 1
    kw, pos, empty = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty

    def shape(method):
        return [(p.name, p.kind, p.default) for p in inspect.signature(getattr(cls, method)).parameters.values()]

    none = None
    task = [("task", kw, empty)] if shapes[0] is OneTaskLearner else []
    assert shape("learn_one") == [("self", pos, empty), ("x", pos, empty), ("y", pos, none), *task,
                                  ("oracle", kw, none), ("index", kw, none), ("answers", kw, none)]
    assert shape("query_one") == [("self", pos, empty), ("x", pos, empty), *task, ("index", kw, none)]
    assert shape("predict_one") == [("self", pos, empty), ("x", pos, empty), ("task", kw, none)]
    assert shape("predict") == [("self", pos, empty), ("X", pos, empty), ("task", kw, none)]
    assert shape("score") == [("self", pos, empty), ("X", pos, empty), ("y", pos, empty), ("task", kw, none)]
    fit = shape("fit")
    assert [p[0] for p in fit[:3]] == ["self", "X", "y"] and all(p[1] == kw for p in fit[3:])


@pytest.mark.parametrize("name", LEARNERS)
def test_not_fitted_is_one_error(name):
    make, problem = setup(name)
    model = make()
    x, task = problem.one_input()
    with pytest.raises(NotFittedError, match="not fitted"):
        model.predict(problem.X_test)
    with pytest.raises(NotFittedError):
        model.predict_one(x, task=task)
    with pytest.raises(NotFittedError):
        model.score(problem.X_test, problem.y_test)
    with pytest.raises(NotFittedError):
        model.decision_function(problem.X_test)


@pytest.mark.parametrize("name, sparse", CASES)
def test_same_seed_same_result_and_fit_returns_self(name, sparse):
    make, problem = setup(name, sparse)
    a = make()
    assert a.fit(*problem.fit_data()) is a
    b = clone(a).fit(*problem.fit_data())
    assert same_predictions(a.predict(problem.X_test), b.predict(problem.X_test))
    assert same_predictions(a.decision_function(problem.X_test), b.decision_function(problem.X_test))
    for x, y, task, _, _ in problem.rounds():
        assert a.learn_one(x, y, **of_task(task)) is None
        b.learn_one(x, y, **of_task(task))
    assert same_predictions(a.decision_function(problem.X_test), b.decision_function(problem.X_test))


@pytest.mark.parametrize("name, sparse", CASES)
def test_inputs_are_not_modified(name, sparse):
    make, problem = setup(name, sparse)
    X, y = problem.fit_data()
    kept = [snapshot(X), snapshot(y), snapshot(problem.X_test), snapshot(problem.y_test)]
    model = make().fit(X, y)
    model.predict(problem.X_test)
    model.score(problem.X_test, problem.y_test)
    rounds = problem.rounds()
    kept_rounds = [snapshot(r[0]) for r in rounds]
    for x, yt, task, _, _ in rounds:
        model.query_one(x, **of_task(task))
        model.learn_one(x, yt, **of_task(task))
        model.predict_one(x, task=task)
    assert unchanged(kept, [X, y, problem.X_test, problem.y_test])
    assert all(unchanged(k, r[0]) for k, r in zip(kept_rounds, rounds))


@pytest.mark.parametrize("name, sparse", CASES)
def test_pickle_round_trip_predicts_and_learns_identically(name, sparse):
    make, problem = setup(name, sparse)
    model = make().fit(*problem.fit_data())
    clone_ = pickle.loads(pickle.dumps(model))
    assert same_predictions(model.predict(problem.X_test), clone_.predict(problem.X_test))
    x, task = problem.one_input()
    assert np.array_equal(model.predict_one(x, task=task), clone_.predict_one(x, task=task))
    for x, y, task, _, _ in problem.rounds():
        model.learn_one(x, y, **of_task(task))
        clone_.learn_one(x, y, **of_task(task))
    assert same_predictions(model.decision_function(problem.X_test), clone_.decision_function(problem.X_test))


@pytest.mark.parametrize("name", LEARNERS)
def test_labels_given_to_learn_one_are_read_through_an_oracle(name):
    make, problem = setup(name)
    by_label, by_oracle, by_answers = (make().fit(*problem.fit_data()) for _ in range(3))
    rounds = problem.rounds()
    for x, y, task, oracle, index in rounds:
        by_label.learn_one(x, y, **of_task(task))
        questions = by_answers.query_one(x, **of_task(task))
        by_answers.learn_one(x, answers=[oracle.query(q.task, index) if isinstance(by_answers, MulticlassLearner)
                                         else (y if task is not None else y[q.task]) for q in questions],
                             **of_task(task))
        by_oracle.learn_one(x, oracle=oracle, index=index, **of_task(task))
    assert same_predictions(by_label.decision_function(problem.X_test),
                            by_oracle.decision_function(problem.X_test))
    assert same_predictions(by_answers.decision_function(problem.X_test),
                            by_oracle.decision_function(problem.X_test))
    with pytest.raises(TypeError, match="one of the three"):
        by_label.learn_one(rounds[0][0], **of_task(rounds[0][2]))


@pytest.mark.parametrize("name", LEARNERS)
def test_score_is_the_pooled_accuracy_of_predict(name):
    make, problem = setup(name)
    model = make().fit(*problem.fit_data())
    pred = model.predict(problem.X_test)
    if isinstance(pred, list):
        hits = sum(int(np.sum(p == y)) for p, y in zip(pred, problem.y_test))
        total = sum(len(y) for y in problem.y_test)
    else:
        hits, total = int(np.sum(pred == problem.y_test)), len(problem.y_test)
    assert model.score(problem.X_test, problem.y_test) == hits / total
    x, task = problem.one_input()
    one = model.predict_one(x, task=task)
    if isinstance(model, MultiTaskLearner) and task is None:
        assert one.tolist() == [p[0] for p in pred]
    elif isinstance(model, MultiTaskLearner):
        assert one == model.predict(problem.X_test[task][:1], task=task)[0]
    else:
        assert one == pred[0]
