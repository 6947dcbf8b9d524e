"""The four multiplicative updates and the objective, against a naive dense reference."""

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.nmtf.updates import (
    data_times_labels, objective, stacked_associations, update_F, update_G_unlabeled, update_R, update_S,
)


# ---- naive reference, written from the restated equations with words x documents X ----

def naive_objective(Xs, Fs, S, Rs, Gs):
    return sum(np.sum((X - F @ np.vstack([S, R]) @ G) ** 2) for X, F, R, G in zip(Xs, Fs, Rs, Gs))


def naive_R(X, F, S, R, G, k_s):
    Fs_, Fr = F[:, :k_s], F[:, k_s:]
    num = Fr.T @ X @ G.T
    den = Fr.T @ Fs_ @ S @ G @ G.T + Fr.T @ Fr @ R @ G @ G.T
    return R * np.sqrt(num / den)


def naive_S(Xs, Fs, S, Rs, Gs, k_s):
    num = sum(F[:, :k_s].T @ X @ G.T for X, F, G in zip(Xs, Fs, Gs))
    den = sum(F[:, :k_s].T @ F[:, :k_s] @ S @ G @ G.T + F[:, :k_s].T @ F[:, k_s:] @ R @ G @ G.T
              for F, R, G in zip(Fs, Rs, Gs))
    return S * np.sqrt(num / den)


def naive_F(X, F, St, G):
    P = St @ G
    return F * np.sqrt((X @ P.T) / (F @ P @ P.T))


def naive_GU(XU, F, St, GU):
    A = F @ St
    return GU * np.sqrt((A.T @ XU) / (A.T @ A @ GU))


def random_problem(seed, n_tasks=3, M=15, K=5, k_s=2, C=2, density=0.4):
    rng = np.random.default_rng(seed)
    Xds, Gs, nLs = [], [], []
    for _ in range(n_tasks):
        N = int(rng.integers(8, 14))
        Xd = sp.random(N, M, density=density, random_state=rng, format="csr")
        Xd.data += 0.1
        nL = int(rng.integers(1, 4))
        G = rng.random((C, N)) + 0.05
        G[:, :nL] = np.eye(C)[:, rng.integers(0, C, nL)]
        Xds.append(Xd)
        Gs.append(G)
        nLs.append(nL)
    Fs = [rng.random((M, K)) + 0.05 for _ in range(n_tasks)]
    S = rng.random((k_s, C)) + 0.05
    Rs = [rng.random((K - k_s, C)) + 0.05 for _ in range(n_tasks)]
    return Xds, Fs, S, Rs, Gs, nLs


@pytest.mark.parametrize("seed", range(4))
def test_objective_matches_dense(seed):
    Xds, Fs, S, Rs, Gs, _ = random_problem(seed)
    dense = [X.toarray().T for X in Xds]
    assert objective(Xds, Fs, S, Rs, Gs) == pytest.approx(naive_objective(dense, Fs, S, Rs, Gs), rel=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_updates_match_naive_dense(seed):
    Xds, Fs, S, Rs, Gs, nLs = random_problem(seed)
    k_s = S.shape[0]
    dense = [X.toarray().T for X in Xds]
    XGs = [data_times_labels(X, G) for X, G in zip(Xds, Gs)]
    GGs = [G @ G.T for G in Gs]
    for got, X, F, R, G in zip(update_R(Fs, S, Rs, XGs, GGs), dense, Fs, Rs, Gs):
        np.testing.assert_allclose(got, naive_R(X, F, S, R, G, k_s), rtol=1e-10)
    np.testing.assert_allclose(update_S(Fs, S, Rs, XGs, GGs), naive_S(dense, Fs, S, Rs, Gs, k_s), rtol=1e-10)
    for i in range(len(Xds)):
        St = stacked_associations(S, Rs[i])
        np.testing.assert_allclose(update_F(Fs[i], St, XGs[i], GGs[i]), naive_F(dense[i], Fs[i], St, Gs[i]),
                                   rtol=1e-10)
        nL = nLs[i]
        np.testing.assert_allclose(update_G_unlabeled(Xds[i], nL, Fs[i], St, Gs[i][:, nL:]),
                                   naive_GU(dense[i][:, nL:], Fs[i], St, Gs[i][:, nL:]), rtol=1e-10)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k_s", [0, 2, 5])
def test_every_update_never_increases_objective(seed, k_s):
    """Each update on its own, from random (far from optimal) factors, over many rounds."""
    Xds, Fs, S, Rs, Gs, nLs = random_problem(seed, k_s=k_s)
    value = objective(Xds, Fs, S, Rs, Gs)
    for _ in range(15):
        XGs = [data_times_labels(X, G) for X, G in zip(Xds, Gs)]
        GGs = [G @ G.T for G in Gs]
        Rs = update_R(Fs, S, Rs, XGs, GGs)
        new = objective(Xds, Fs, S, Rs, Gs)
        assert new <= value * (1 + 1e-12), "R update increased the objective"
        value = new
        S = update_S(Fs, S, Rs, XGs, GGs)
        new = objective(Xds, Fs, S, Rs, Gs)
        assert new <= value * (1 + 1e-12), "S update increased the objective"
        value = new
        for i, X in enumerate(Xds):
            St = stacked_associations(S, Rs[i])
            Fs[i] = update_F(Fs[i], St, XGs[i], GGs[i])
            new = objective(Xds, Fs, S, Rs, Gs)
            assert new <= value * (1 + 1e-12), "F update increased the objective"
            value = new
            nL = nLs[i]
            Gs[i][:, nL:] = update_G_unlabeled(X, nL, Fs[i], St, Gs[i][:, nL:])
            new = objective(Xds, Fs, S, Rs, Gs)
            assert new <= value * (1 + 1e-12), "G_U update increased the objective"
            value = new


def test_updates_keep_factors_nonnegative_with_zero_denominators():
    Xds, Fs, S, Rs, Gs, nLs = random_problem(1)
    Fs[0][:, :] = 0.0  # every denominator of F_0 and G_0 is zero
    XGs = [data_times_labels(X, G) for X, G in zip(Xds, Gs)]
    GGs = [G @ G.T for G in Gs]
    St = stacked_associations(S, Rs[0])
    F0 = update_F(Fs[0], St, XGs[0], GGs[0])
    G0 = update_G_unlabeled(Xds[0], nLs[0], Fs[0], St, Gs[0][:, nLs[0]:])
    for arr in (F0, G0, *update_R(Fs, S, Rs, XGs, GGs), update_S(Fs, S, Rs, XGs, GGs)):
        assert np.all(np.isfinite(arr)) and np.all(arr >= 0)
