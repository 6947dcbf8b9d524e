import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve as sk_roc_curve

from medmtl.evaluation import auc, epsilon_insensitive_loss, mean_auc, paired_t_test, roc_curve


@pytest.mark.parametrize("seed", range(5))
def test_auc_matches_sklearn_with_ties(seed):
    rng = np.random.default_rng(seed)
    y = rng.choice([-1, 1], size=50)
    scores = rng.integers(0, 6, size=50).astype(float)  # many ties
    assert auc(y, scores) == pytest.approx(roc_auc_score(y, scores), abs=1e-12)


def test_roc_curve_matches_sklearn():
    rng = np.random.default_rng(1)
    y = rng.choice([0, 1], size=40)
    s = rng.normal(size=40)
    fpr, tpr = roc_curve(y, s)
    sk_fpr, sk_tpr, _ = sk_roc_curve(y, s, drop_intermediate=False)
    assert np.allclose(fpr, sk_fpr) and np.allclose(tpr, sk_tpr)


def test_mean_auc_and_errors():
    assert mean_auc([[0, 1], [0, 1]], [[0, 1], [1, 0]]) == 0.5
    with pytest.raises(ValueError, match="two classes"):
        auc([1, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match="NaN"):
        auc([0, 1], [np.nan, 1])
    with pytest.raises(ValueError, match="entries"):
        epsilon_insensitive_loss([1, 2], [1], 0.1)


@pytest.mark.parametrize("seed", range(3))
def test_paired_t_test_matches_scipy(seed):
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(seed)
    a = rng.normal(size=7)
    b = a + rng.normal(0.3, 1.0, size=7)
    d, se, p = paired_t_test(a, b)
    ref = ttest_rel(a, b)
    assert d == pytest.approx(np.mean(a - b))
    assert d / se == pytest.approx(ref.statistic)
    assert p == pytest.approx(ref.pvalue)


def test_paired_t_test_degenerate_cases():
    assert paired_t_test([0.9, 0.8], [0.9, 0.8]) == (0.0, 0.0, 1.0)
    assert paired_t_test([1.0, 0.75], [0.5, 0.25])[2] == 0.0  # constant difference: certain
    assert np.isnan(paired_t_test([0.9], [0.8])[2])
    with pytest.raises(ValueError, match="scores"):
        paired_t_test([0.9, 0.8], [0.8])
