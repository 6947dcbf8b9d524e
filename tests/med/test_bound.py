"""Theorem 1: the quadratic bound is above log(alpha + exp(u'u/2)) everywhere and tight at v."""

import numpy as np
import pytest

from medmtl.med.bound import (
    QuadraticLogBound,
    bound_curvature,
    log_g,
    log_switch_term,
    switch_posterior,
)

ALPHAS = [0.0, 1e-6, 0.1, 1.0, 7.0, 1e3, 1e6]


def naive_f(u, alpha):
    return np.log(alpha + np.exp(u @ u / 2.0))


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("dim", [1, 3])
def test_bound_above_function_and_tight(alpha, dim):
    rng = np.random.default_rng(int(alpha * 10) % 97 + dim)
    for _ in range(40):
        v = rng.normal(size=dim) * rng.choice([0.1, 1.0, 3.0])
        b = QuadraticLogBound(v, alpha)
        assert b.value(v) == pytest.approx(naive_f(v, alpha), rel=1e-12, abs=1e-12)
        for _ in range(25):
            u = v + rng.normal(size=dim) * rng.choice([1e-3, 0.3, 2.0])
            exact = naive_f(u, alpha)
            assert b.value(u) >= exact - 1e-10 * max(1.0, abs(exact))


@pytest.mark.parametrize("alpha", [0.5, 2.0, 40.0])
def test_bound_at_g_equal_one(alpha):
    # g = alpha exp(-v'v/2) = 1 exactly where the curvature takes its limit 1/4.
    v = np.array([np.sqrt(2 * np.log(alpha))]) if alpha > 1 else np.array([0.0])
    alpha = float(np.exp(v @ v / 2)) if alpha <= 1 else alpha
    b = QuadraticLogBound(v, alpha)
    assert b.curvature == pytest.approx(0.25, abs=1e-12)
    rng = np.random.default_rng(3)
    for u in rng.normal(size=(200, 1)) * 3:
        assert b.value(u) >= naive_f(u, alpha) - 1e-12


def test_bound_gradient_matches_function():
    # The bound is tangent at v: its gradient there is s v, the gradient of the function.
    rng = np.random.default_rng(4)
    for alpha in [0.3, 5.0]:
        v = rng.normal(size=3)
        b = QuadraticLogBound(v, alpha)
        h = 1e-6
        for k in range(3):
            e = np.zeros(3)
            e[k] = h
            fd = (naive_f(v + e, alpha) - naive_f(v - e, alpha)) / (2 * h)
            assert b.switch_posterior * v[k] == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_alpha_zero_bound_is_exact():
    v = np.array([0.7, -1.2])
    b = QuadraticLogBound(v, 0.0)
    assert b.curvature == 0.0 and b.switch_posterior == 1.0
    u = np.array([3.0, 2.0])
    assert b.value(u) == pytest.approx(u @ u / 2, rel=1e-14)


def test_curvature_limits_and_series():
    # Naive formula on both sides of the series cutoff agrees with the series.
    for x in [-2e-3, -1e-3 + 1e-9, -1e-4, 0.0, 1e-4, 1e-3 - 1e-9, 2e-3]:
        q = np.array([-x])  # alpha = 1 -> log g = -q
        G = bound_curvature(q, 1.0)[0]
        ref = 0.25 if x == 0 else np.tanh(x / 2) / (2 * x)
        assert G == pytest.approx(ref, rel=1e-12)
    assert bound_curvature([0.0], 1.0)[0] == 0.25
    assert bound_curvature([5.0], 0.0)[0] == 0.0
    big = bound_curvature([800.0], 1.0)[0]
    assert 0 < big < 1e-2 and big == pytest.approx(1 / (2 * 800.0), rel=1e-6)
    G = bound_curvature(np.linspace(0, 50, 101), 3.0)
    assert np.all((G >= 0) & (G <= 0.25))


def test_switch_posterior_and_log_term_against_naive():
    rng = np.random.default_rng(5)
    q = rng.uniform(0, 20, size=50)
    for alpha in [1e-3, 0.5, 3.0, 1e4]:
        s = switch_posterior(q, alpha)
        np.testing.assert_allclose(s, 1.0 / (1.0 + alpha * np.exp(-q)), rtol=1e-12)
        t = log_switch_term(q, alpha)
        np.testing.assert_allclose(t, np.log(alpha + np.exp(q)) - np.log(alpha + 1), rtol=1e-10, atol=1e-13)
        assert np.all(s >= 1 / (1 + alpha) - 1e-15) and np.all(s <= 1)
    # Precision for tiny q and huge alpha, where the naive difference cancels.
    assert log_switch_term([1e-12], 1e8)[0] == pytest.approx(1e-12 / (1 + 1e8), rel=1e-8)
    assert np.isfinite(log_switch_term([1e4], 2.0)[0])
    assert log_switch_term([1e4], 2.0)[0] == pytest.approx(1e4 - np.log(3.0), rel=1e-12)
    assert np.all(log_g([1.0], 0.0) == -np.inf)


def test_bad_alpha():
    with pytest.raises(ValueError, match="alpha"):
        switch_posterior([1.0], -1.0)
    with pytest.raises(ValueError, match="alpha"):
        QuadraticLogBound([1.0], np.nan)
