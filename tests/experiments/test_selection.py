"""Model selection along a warm-started regularisation path."""

import numpy as np
import pytest

from medmtl.experiments import kernel_banks, selection


def test_warm_path_factorises_once_and_matches_fresh_fits(monkeypatch):
    from medmtl.kernels import RBFKernel
    from medmtl.med import MultiTaskMEDClassifier, grams

    rng = np.random.default_rng(0)
    Xs = [rng.random((12, 3)) for _ in range(3)]
    ys = [np.where(X[:, 0] + 0.2 * rng.normal(size=12) > 0.5, 1, -1) for X in Xs]
    bank = [RBFKernel(0.5), RBFKernel(4.0)] + kernel_banks.landmine_kernel_bank(3, [])[:3]

    def make(C, alpha):
        return MultiTaskMEDClassifier(selection="kernels", kernels=bank, C=C, alpha=alpha,
                                      warm_start=True)

    def objective(model):
        return model.objective_

    calls = []
    real = grams.factorize_gram
    monkeypatch.setattr(grams, "factorize_gram", lambda *a, **k: calls.append(1) or real(*a, **k))
    path, _ = selection.warm_path(make, [0.5, 2.0], [0.0, 5.0], Xs, ys, objective)
    n_factorised = len(calls)
    fresh = {(C, a): MultiTaskMEDClassifier(selection="kernels", kernels=bank, C=C, alpha=a)
             .fit(Xs, ys).objective_ for C in (0.5, 2.0) for a in (0.0, 5.0)}
    assert n_factorised <= len(calls) / 4  # the path built its factors once, not per C
    for key, value in fresh.items():
        assert path[key] == pytest.approx(value, rel=1e-6)


def test_the_choice_per_alpha_is_the_best_C_at_that_alpha():
    scores = {(C, a): -abs(np.log10(C) - a) for C in (0.1, 1.0, 10.0) for a in (-1.0, 0.0, 1.0)}
    chosen = selection.select_per_alpha(scores, [1.0, -1.0])
    assert chosen == [((10.0, 1.0), 0.0), ((0.1, -1.0), 0.0)]
    assert selection.select_on_validation(scores) == ((0.1, -1.0), 0.0)
