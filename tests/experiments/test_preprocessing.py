"""Scaling fitted on the training inputs only, and the explicit quadratic expansion."""

import numpy as np

from medmtl.experiments import preprocessing


def test_minmax_scaling_uses_training_inputs_only():
    rng = np.random.default_rng(0)
    train = [rng.normal(size=(5, 3)), rng.normal(size=(4, 3))]
    test_a, test_b = [rng.normal(size=(6, 3))], [100 * rng.normal(size=(6, 3))]
    tr_a, _ = preprocessing.minmax_scale_tasks(train, test_a)
    tr_b, te_b = preprocessing.minmax_scale_tasks(train, test_b)
    np.testing.assert_array_equal(np.vstack(tr_a), np.vstack(tr_b))
    stacked = np.vstack(tr_a)
    np.testing.assert_allclose(stacked.min(0), 0.0)
    np.testing.assert_allclose(stacked.max(0), 1.0)
    lo, hi = np.vstack(train).min(0), np.vstack(train).max(0)
    np.testing.assert_allclose(te_b[0], (test_b[0] - lo) / (hi - lo))


def test_standardisation_uses_training_inputs_only_and_copies():
    rng = np.random.default_rng(0)
    train = [rng.normal(size=(5, 3)), rng.normal(size=(4, 3))]
    train[0][:, 2] = 7.0
    train[1][:, 2] = 7.0  # a constant column is centred, not divided by zero
    before = [X.copy() for X in train]
    test = [100 * rng.normal(size=(6, 3))]
    tr, te = preprocessing.standardize_tasks(train, test)
    for X, X0 in zip(train, before):
        np.testing.assert_array_equal(X, X0)
    stacked = np.vstack(tr)
    np.testing.assert_allclose(stacked.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(stacked.std(0), [1.0, 1.0, 0.0], atol=1e-12)
    S = np.vstack(train)
    np.testing.assert_allclose(te[0][:, :2], (test[0][:, :2] - S.mean(0)[:2]) / S.std(0)[:2])
    np.testing.assert_allclose(te[0][:, 2], test[0][:, 2] - 7.0)


def test_quadratic_expansion_matches_sklearn_polynomial_features():
    from sklearn.preprocessing import PolynomialFeatures

    X = np.random.default_rng(0).random((4, 5))
    ours = preprocessing.quadratic_expansion(X)
    ref = PolynomialFeatures(2, include_bias=False).fit_transform(X)
    assert ours.shape == (4, 5 + 15)
    np.testing.assert_allclose(ours, ref)
