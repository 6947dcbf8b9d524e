"""SHAMPO's round machinery: the draw of Eq. (1) and the update rule."""

import numpy as np
import pytest

from medmtl.online.oracle import LabelOracle, PairFeedbackOracle
from medmtl.online.shampo_rounds import ZERO_FEEDBACK, UpdateRule, draw_rule, draw_tasks, play_rounds
from medmtl.online.streams import MultiTaskStream


def test_query_distribution_is_equation_1():
    # The exponential race must draw task j with probability a_j / (b + |p_j| - min|p|) / D.
    p = np.array([0.3, -0.1, 0.8, 0.15])
    a = np.array([1.0, 2.0, 1.0, 0.5])
    b = 0.2
    q = a / (b + np.abs(p) - np.abs(p).min())
    rng = np.random.default_rng(0)
    n = 200_000
    E = rng.standard_exponential((n, 4))
    J = draw_tasks(np.tile(p, (n, 1)), E, draw_rule(a, b))[:, 0]
    freq = np.bincount(J, minlength=4) / n
    np.testing.assert_allclose(freq, q / q.sum(), atol=0.005)
    # limits: b = inf follows the prior, b = 0 the smallest margin
    J_inf = draw_tasks(np.tile(p, (n, 1)), E, draw_rule(a, np.inf))[:, 0]
    np.testing.assert_allclose(np.bincount(J_inf, minlength=4) / n, a / a.sum(), atol=0.005)
    assert np.all(draw_tasks(np.tile(p, (100, 1)), E[:100], draw_rule(a, 0.0))[:, 0] == 1)


def test_several_queries_are_distinct_and_a_zero_prior_is_never_drawn():
    rng = np.random.default_rng(1)
    P, E = rng.normal(size=(500, 5)), rng.standard_exponential((500, 5))
    J = draw_tasks(P, E, draw_rule(np.array([1.0, 0.0, 2.0, 1.0, 1.0]), 0.3, n_queries=3))
    assert J.shape == (500, 3)
    assert all(len(set(row)) == 3 for row in J.tolist())
    assert not np.any(J == 1)


@pytest.mark.parametrize("on_zero", ["weak", "ignore", "random"])
def test_zero_answers(on_zero):
    # two classes, one pair task that never sees its own classes: every answer is 0
    X = np.random.default_rng(2).normal(size=(50, 3))
    stream = MultiTaskStream.shared_input(X, 1)
    W = np.zeros((1, 3))
    rng, sign_rng = np.random.default_rng(0), np.random.default_rng(1)
    oracle = PairFeedbackOracle(np.full(50, 2), n_classes=3)
    update = UpdateRule(0.5, ZERO_FEEDBACK[on_zero], 0.2)
    n_updates = play_rounds(stream, W, oracle, rng, draw_rule(np.ones(1), 1.0), update, sign_rng=sign_rng)
    assert oracle.n_queries == 50
    if on_zero == "ignore":
        assert n_updates[0] == 0 and not W.any()
    else:
        assert n_updates[0] > 0 and W.any()


def test_a_zero_answer_under_error_names_the_round():
    stream = MultiTaskStream.shared_input(np.eye(3), 1)
    oracle = LabelOracle([[1, 0, 1]], allow_zero=True)
    with pytest.raises(ValueError, match="label 0 for task 0, round 1"):
        play_rounds(stream, np.zeros((1, 3)), oracle, np.random.default_rng(0), draw_rule(np.ones(1), 1.0),
                    UpdateRule(0.0, ZERO_FEEDBACK["error"], 0.0))
