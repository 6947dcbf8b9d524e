"""Inputs that used to give wrong answers or crash midway: each is now right or a clear error."""

import numpy as np
import pytest

from medmtl.online import (
    AMLC, PEER, SHAMPO, Banditron, IndependentQuery, KernelSHAMPO, LabelOracle, OneVsOneBandit,
    OneVsRestBandit, RandomQuery, row_norms, scale_to_unit_ball,
)


def _tasks(seed=0, K=3, n=40, d=5):
    rng = np.random.default_rng(seed)
    Xs = [rng.normal(size=(n, d)) for _ in range(K)]
    return Xs, [np.where(X[:, 0] > 0, 1, -1) for X in Xs]


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1e160, 1e300])
def test_row_scaling_is_exact_over_the_float_range(scale):
    X = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 1e-3]])
    np.testing.assert_allclose(row_norms(X * scale), row_norms(X) * scale, rtol=1e-15)
    np.testing.assert_allclose(scale_to_unit_ball(X * scale), scale_to_unit_ball(X), rtol=1e-15, atol=0)


@pytest.mark.parametrize("scale", [1e-300, 1e160, 1e300])
@pytest.mark.parametrize("make", [lambda: SHAMPO(random_state=0),
                                  lambda: KernelSHAMPO(kernel="linear", random_state=0)], ids=["SHAMPO", "KernelSHAMPO"])
def test_multitask_learners_are_scale_invariant(make, scale):
    Xs, ys = _tasks()
    plain = make().fit(Xs, LabelOracle(ys)).predict(Xs)
    scaled = make().fit([X * scale for X in Xs], LabelOracle(ys)).predict([X * scale for X in Xs])
    np.testing.assert_array_equal(np.concatenate(scaled), np.concatenate(plain))


@pytest.mark.parametrize("scale", [1e-300, 1e160, 1e300])
@pytest.mark.parametrize("learner", [Banditron, OneVsRestBandit, OneVsOneBandit])
def test_multiclass_learners_are_scale_invariant(learner, scale):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(200, 5)), rng.integers(0, 3, 200)
    plain = learner(random_state=0).fit(X, y).predict(X)
    np.testing.assert_array_equal(learner(random_state=0).fit(X * scale, y).predict(X * scale), plain)


@pytest.mark.parametrize("learner", [Banditron, OneVsRestBandit, OneVsOneBandit])
@pytest.mark.parametrize("missing", [np.nan, None])
def test_a_missing_label_is_an_error(learner, missing):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 4))
    y = rng.integers(0, 3, 30).astype(object if missing is None else float)
    y[4] = missing
    with pytest.raises(ValueError, match="NaN or None"):
        learner().fit(X, y)


@pytest.mark.parametrize("learner", [PEER, AMLC, RandomQuery, IndependentQuery, SHAMPO, KernelSHAMPO])
def test_an_oracle_with_too_few_labels_is_refused_before_the_first_round(learner):
    Xs, ys = _tasks()
    with pytest.raises(ValueError, match="holds 35 labels for task 0, which has 40 examples"):
        learner().fit(Xs, LabelOracle([y[:-5] for y in ys]))
