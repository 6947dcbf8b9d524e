"""The label oracles, from Python and from compiled code: one set of counts, one budget."""

import pickle

import numpy as np
import pytest
from numba import njit

from medmtl.online.oracle import (QUERY_BUDGET_SPENT, QUERY_OUT_OF_RANGE, BudgetExhausted, LabelOracle,
                                  PairFeedbackOracle, as_oracle, one_vs_rest_oracle, oracle_query)


@njit
def ask_compiled(port, tasks, indexes):
    """Ask (tasks[i], indexes[i]) in turn from compiled code; stop at the first refusal."""
    out = np.zeros(tasks.size, dtype=np.int64)
    for i in range(tasks.size):
        out[i] = oracle_query(port, tasks[i], indexes[i])
        if out[i] > 1:
            return out[:i + 1]
    return out


def test_compiled_queries_are_counted_like_python_queries():
    ys = [np.array([1, -1, 1]), np.array([-1, -1, 1, 1])]
    oracle = LabelOracle(ys)
    assert oracle.query(1, 3) == 1
    got = ask_compiled(oracle.port(), np.array([0, 1, 1]), np.array([2, 0, 3]))
    assert got.tolist() == [1, -1, 1]
    assert oracle.n_queries == 4 and oracle.queries_per_task.tolist() == [1, 3]
    asked = {(j, i) for j, y in enumerate(ys) for i in range(len(y)) if oracle.was_queried(j, i)}
    assert asked == {(0, 2), (1, 0), (1, 3)}


def test_budget_and_range_are_enforced_in_compiled_code():
    oracle = LabelOracle([[1, -1], [1, 1]], budget=2)
    out = ask_compiled(oracle.port(), np.array([0, 5, 1, 1, 0]), np.array([0, 0, 9, 1, 1]))
    assert out.tolist() == [1, QUERY_OUT_OF_RANGE]             # refused: nothing counted
    assert oracle.n_queries == 1
    out = ask_compiled(oracle.port(), np.array([1, 0]), np.array([1, 1]))
    assert out.tolist() == [1, QUERY_BUDGET_SPENT]
    assert oracle.n_queries == 2 and oracle.remaining == 0 and not oracle.was_queried(0, 1)
    with pytest.raises(BudgetExhausted):
        oracle.query(0, 1)


def test_python_query_checks_and_pickles():
    oracle = LabelOracle([[1, -1], [1, 1, -1]])
    for task, index in [(2, 0), (0, 2), (0, -1), (-1, 0)]:
        with pytest.raises(IndexError):
            oracle.query(task, index)
    with pytest.raises(TypeError):
        oracle.query(0, 1.0)
    assert oracle.n_queries == 0
    oracle.query(1, 2)
    copy = pickle.loads(pickle.dumps(oracle))
    assert copy.was_queried(1, 2) and copy.n_queries == 1 and copy.query(0, 1) == -1
    assert oracle.n_queries == 1
    with pytest.raises(ValueError, match="budget"):
        LabelOracle([[1]], budget=-1)
    with pytest.raises(TypeError):
        LabelOracle(np.array([1, -1]))


def test_as_oracle_wraps_labels_and_checks_the_tasks():
    oracle = LabelOracle([[1], [-1]])
    assert as_oracle(oracle) is oracle
    wrapped = as_oracle([[1, -1], [1]], n_tasks=2)
    assert wrapped.query(0, 1) == -1 and wrapped.n_queries == 1
    with pytest.raises(ValueError, match="oracle holds 2 tasks"):
        as_oracle(oracle, n_tasks=3)
    with pytest.raises(TypeError):
        as_oracle(np.array([1, -1]))


def test_one_vs_rest_oracle_answers_is_it_class_c():
    oracle = one_vs_rest_oracle([2, 0, 1], budget=2)
    assert oracle.n_tasks == 3
    assert (oracle.query(2, 0), oracle.query(1, 0)) == (1, -1)
    with pytest.raises(BudgetExhausted):
        oracle.query(0, 1)


def test_pair_oracle_answers_and_counts():
    labels = np.array([0, 1, 2, 2])
    oracle = PairFeedbackOracle(labels)
    answers = [[oracle.query(k, t) for t in range(4)] for k in range(3)]
    assert answers == [[1, -1, 0, 0], [1, 0, -1, -1], [0, 1, -1, -1]]
    assert oracle.n_queries == 12 and oracle.was_queried(2, 3)
    assert oracle.n_classes == 3 and oracle.pairs == [(0, 1), (0, 2), (1, 2)]
    with pytest.raises(ValueError, match="class indices"):
        PairFeedbackOracle(np.array([0.5, 1.0]))


def test_plain_oracle_rejects_zero_answers_unless_allowed():
    with pytest.raises(ValueError, match="-1, \\+1"):
        LabelOracle([[1, 0, -1]])
    assert LabelOracle([[1, 0, -1]], allow_zero=True).query(0, 1) == 0


def test_a_task_may_have_no_labels():
    # learn_one(x, y, task=k) asks an oracle holding one label for task k and none for the rest
    oracle = LabelOracle([[], [1], []])
    assert oracle.query(1, 0) == 1
    with pytest.raises(IndexError):
        oracle.query(0, 0)
