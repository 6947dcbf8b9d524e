"""The Landmine kernel bank: bandwidths from the training inputs, one scale for every kernel."""

import numpy as np
import pytest

from medmtl.experiments import kernel_banks


def test_rbf_bandwidths_follow_the_median_squared_distance():
    rng = np.random.default_rng(1)
    Xs = [rng.normal(size=(6, 2)), rng.normal(size=(5, 2))]
    X = np.vstack(Xs)
    d = [np.sum((X[i] - X[j]) ** 2) for i in range(len(X)) for j in range(i + 1, len(X))]
    assert kernel_banks.median_sq_distance(Xs) == pytest.approx(np.median(d))
    assert kernel_banks.landmine_rbf_gammas(Xs, [0.5, 2.0]) == pytest.approx([0.5 / np.median(d),
                                                                              2.0 / np.median(d)])
    with pytest.raises(ValueError, match="identical"):
        kernel_banks.landmine_rbf_gammas([np.ones((4, 2))])


def test_kernel_bank_is_scaled_to_unit_training_diagonal():
    rng = np.random.default_rng(0)
    Xs = [rng.random((7, 9)), rng.random((5, 9))]
    bank = kernel_banks.unit_diagonal_kernels(
        kernel_banks.landmine_kernel_bank(9, kernel_banks.landmine_rbf_gammas(Xs), poly=True), Xs)
    assert len(bank) == 22
    X = np.vstack(Xs)
    for k in bank:
        assert np.mean([k(x[None], x[None])[0, 0] for x in X]) == pytest.approx(1.0)
    K = kernel_banks.SumKernel(bank)(X, X)
    np.testing.assert_allclose(K, sum(k(X, X) for k in bank))


def test_bandwidth_rules_read_only_the_training_inputs():
    rng = np.random.default_rng(2)
    train, other = [rng.normal(3.0, 2.0, size=(8, 3))], [rng.normal(size=(5, 3))]
    (tr, _), gammas = kernel_banks.rule_inputs("median", train, other, scales=[1.0, 2.0])
    np.testing.assert_allclose(tr[0].mean(axis=0), 0.0, atol=1e-12)
    m = kernel_banks.median_sq_distance(tr)
    assert gammas == pytest.approx([1.0 / m, 2.0 / m])
    (tr, _), gammas = kernel_banks.rule_inputs("minmax", train, other, scales=[1.0, 2.0])
    assert tr[0].min() == 0.0 and tr[0].max() == 1.0 and gammas == [1.0, 2.0]
    # the other inputs move nothing: scaling and bandwidths are the training inputs' own
    _, g2 = kernel_banks.rule_inputs("median", train, [100 * other[0]], scales=[1.0])
    assert g2 == pytest.approx([1.0 / kernel_banks.median_sq_distance(kernel_banks.rule_inputs("median", train)[0][0])])
    with pytest.raises(ValueError, match="rule"):
        kernel_banks.rule_inputs("seed-1", train)
