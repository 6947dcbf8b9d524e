"""The lecture experiments' pieces against independent references."""

import numpy as np

from medmtl.experiments import med_lecture, preprocessing, registry


def test_housing_paper_numbers_sit_beside_their_rows():
    r = registry.run("housing-regression", quick=True)
    (key,) = r.paper
    assert r.x == ["least squares"] + [f"MED p0 = {rho:g}" for rho in med_lecture.RHOS]
    assert r.paper[key] == med_lecture.HOUSING_PAPER
    assert [row["lecture"] for row in r.extra["table"].values()] == med_lecture.HOUSING_PAPER
    assert list(r.extra["table"]) == r.x


def test_splice_quadratic_features_drop_only_structural_zeros():
    from medmtl.datasets import load_splice

    X = load_splice(window=25)[0].X[:300]
    Q = med_lecture.splice_features(X, 25, True)
    assert Q.shape[1] == 100 + 100 * 99 // 2 - 25 * 6 == 4900
    # every kept product is a pair of different positions; the dropped ones are always zero
    full = preprocessing.quadratic_expansion(X)
    i, j = np.triu_indices(100)
    same_position = (i // 4) == (j // 4)
    dropped = full[:, 100:][:, same_position & (i != j)]
    assert not dropped.any()
    np.testing.assert_array_equal(Q[:, :100], X)


def test_linear_coefficients_read_the_fitted_med_weights():
    from medmtl.med import MEDClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    y = np.where(X[:, 0] - X[:, 2] > 0, 1, -1)
    model = MEDClassifier(selection="features", alpha=1.0, C=1.0).fit(X, y)
    np.testing.assert_allclose(med_lecture.linear_coefficients(model, 4), model.coef_.ravel(), atol=1e-9)


def test_least_squares_fit_matches_numpy_lstsq():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    A = np.hstack([X, np.ones((20, 1))])
    w = np.linalg.solve(A.T @ A, A.T @ y)
    np.testing.assert_allclose(med_lecture.least_squares_fit(X, y)(X), A @ w)
