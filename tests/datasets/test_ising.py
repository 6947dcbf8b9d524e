"""The Ising sampler against exact enumeration; the graph generators' guarantees."""

import numpy as np
import pytest
from scipy.stats import chisquare

from medmtl.datasets.ising import (IsingModel, cycle_graph, edge_list, grid_graph, random_graph,
                                   random_ising)


def _state_counts(X):
    D = X.shape[1]
    codes = ((X > 0).astype(np.int64) << np.arange(D)).sum(axis=1)
    return np.bincount(codes, minlength=2**D)


@pytest.mark.parametrize("method", ["exact", "gibbs"])
def test_sampler_matches_the_exact_distribution(method):
    # 4 nodes, 16 states: the empirical state frequencies against the enumerated
    # probabilities (chi-square); Gibbs thinned enough to make draws nearly independent
    model = random_ising(cycle_graph(4), coupling=0.6, field=0.3, random_state=5)
    _, p = model.states()
    X = model.sample(20000, method=method, thin=5, random_state=11)
    stat = chisquare(_state_counts(X), 20000 * p)
    assert stat.pvalue > 1e-3


@pytest.mark.parametrize("D", [6, 10])
def test_gibbs_moments_match_exact_marginals(D):
    A = random_graph(D, n_edges=D + 2, max_degree=4, random_state=D)
    model = random_ising(A, coupling=0.4, field=0.2, random_state=1)
    means, pairs = model.moments()
    X = model.sample(30000, method="gibbs", thin=4, random_state=2)
    m_hat, p_hat = model.moments(X)
    # a few Monte Carlo standard errors of a +-1 mean over 30000 weakly correlated draws
    assert np.max(np.abs(m_hat - means)) < 0.03
    assert np.max(np.abs(p_hat - pairs)) < 0.03


def test_exact_moments_of_a_single_edge():
    model = IsingModel([[0.0, -0.8], [-0.8, 0.0]], eta=[0.0, 0.0])
    means, pairs = model.moments()
    np.testing.assert_allclose(means, 0.0, atol=1e-15)
    np.testing.assert_allclose(pairs[0, 1], np.tanh(-0.8))


def test_same_seed_same_samples_and_valid_spins():
    model = random_ising(grid_graph(4), coupling=0.5, random_state=0)
    a = model.sample(50, method="gibbs", random_state=3)
    b = model.sample(50, method="gibbs", random_state=3)
    assert np.array_equal(a, b)
    assert set(np.unique(a)) <= {-1, 1}


def test_random_graph_respects_degree_and_edge_count():
    A = random_graph(30, n_edges=40, max_degree=3, random_state=0)
    assert np.array_equal(A, A.T) and not A.diagonal().any()
    assert A.sum() // 2 == 40 and A.sum(axis=1).max() <= 3
    assert edge_list(A).shape == (40, 2)


def test_grid_graph_degrees():
    A = grid_graph(3, 4)
    deg = A.sum(axis=1)
    assert A.sum() // 2 == 3 * 3 + 2 * 4 and deg.max() == 4 and deg.min() == 2


@pytest.mark.parametrize("theta, message", [
    ([[0.0, 1.0], [0.5, 0.0]], "symmetric"),
    ([[1.0, 0.0], [0.0, 0.0]], "zero diagonal"),
    ([[0.0, np.nan], [np.nan, 0.0]], "NaN"),
])
def test_bad_couplings_are_refused(theta, message):
    with pytest.raises(ValueError, match=message):
        IsingModel(theta)


def test_enumeration_is_bounded():
    with pytest.raises(ValueError, match="Gibbs"):
        IsingModel(np.zeros((21, 21))).states()
