import numpy as np
import pytest
from scipy.stats import ttest_rel
from sklearn.metrics import roc_auc_score

from medmtl.evaluation import epsilon_insensitive_loss, mean_auc, paired_t_test


@pytest.mark.parametrize("seed", range(5))
def test_mean_auc_is_the_mean_of_the_tasks_aucs_with_ties(seed):
    rng = np.random.default_rng(seed)
    ys = [rng.permutation(np.repeat([-1, 1], n)) for n in (10, 25, 7)]
    scores = [rng.integers(0, 6, size=y.size).astype(float) for y in ys]  # many ties
    expected = np.mean([roc_auc_score(y, s) for y, s in zip(ys, scores)])
    assert mean_auc(ys, scores) == pytest.approx(expected, abs=1e-15)


def test_mean_auc_counts_every_task_once_whatever_its_size():
    assert mean_auc([[0, 1], [0, 1]], [[0, 1], [1, 0]]) == 0.5
    assert mean_auc([[0, 0, 0, 1], [0, 1]], [[0, 0, 0, 1], [1, 0]]) == 0.5


def test_mean_auc_and_loss_errors():
    with pytest.raises(ValueError, match="task 1: .*two classes"):
        mean_auc([[0, 1], [1, 1]], [[0.2, 0.3], [0.2, 0.3]])
    with pytest.raises(ValueError, match="NaN"):
        mean_auc([[0, 1]], [[np.nan, 1]])
    with pytest.raises(ValueError, match="2 label vectors but 1 score"):
        mean_auc([[0, 1], [0, 1]], [[0.2, 0.3]])
    with pytest.raises(ValueError, match="entries"):
        epsilon_insensitive_loss([1, 2], [1], 0.1)


def test_epsilon_insensitive_loss_ignores_errors_inside_the_zone():
    loss = epsilon_insensitive_loss([0.0, 0.0, 0.0], [0.5, -2.0, 3.0], epsilon=1.0)
    assert loss == pytest.approx((0.0 + 1.0 + 2.0) / 3)


@pytest.mark.parametrize("seed", range(3))
def test_paired_t_test_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=7)
    b = a + rng.normal(0.3, 1.0, size=7)
    d, se, p = paired_t_test(a, b)
    ref = ttest_rel(a, b)
    assert d == pytest.approx(np.mean(a - b))
    assert se == pytest.approx(np.std(a - b, ddof=1) / np.sqrt(7))
    assert d / se == pytest.approx(ref.statistic)
    assert p == pytest.approx(ref.pvalue)


def test_paired_t_test_degenerate_cases():
    assert paired_t_test([0.9, 0.8], [0.9, 0.8]) == (0.0, 0.0, 1.0)
    assert paired_t_test([1.0, 0.75], [0.5, 0.25])[2] == 0.0  # constant difference: certain
    assert np.isnan(paired_t_test([0.9], [0.8])[2])
    assert all(np.isnan(paired_t_test([], [])))
    with pytest.raises(ValueError, match="scores"):
        paired_t_test([0.9, 0.8], [0.8])


def test_metrics_leave_the_callers_arrays_alone():
    y, s = np.array([-1, 1, 1]), np.array([0.2, 0.9, 0.1])
    a, b = np.array([0.7, 0.8, 0.9]), np.array([0.6, 0.8, 0.7])
    copies = [x.copy() for x in (y, s, a, b)]
    mean_auc([y], [s]), paired_t_test(a, b), epsilon_insensitive_loss(a, b, 0.05)
    assert all(np.array_equal(x, c) for x, c in zip((y, s, a, b), copies))
