"""The MED reproductions: every experiment in quick mode, the JSON contract, and the protocol.

The quick runs use the default cell cache (``$MEDMTL_CACHE``, one per test run, set in
``tests/conftest.py``) so that the notebooks executed later in the same run reuse the cells.
"""

import json
import math

import numpy as np
import pytest

from medmtl.datasets import MultiTaskDataset, Task
from medmtl.evaluation import auc
from medmtl.experiments import med_figures, med_lecture, protocol, registry

MED_EXPERIMENTS = ["dermatology", "landmine-kernels", "landmine-kernels-poly", "heart-pooling",
                   "splice-roc", "housing-regression", "nci60-regression", "dermatology-cv"]
AUC_EXPERIMENTS = {"dermatology", "landmine-kernels", "landmine-kernels-poly", "heart-pooling",
                   "splice-roc", "dermatology-cv"}


def _finite(v):
    return isinstance(v, (int, float)) and math.isfinite(v)


# --------------------------------------------------------------------------------------------
# Every experiment, quick mode, through the registry: the output contract of issue 3.

@pytest.mark.parametrize("name", MED_EXPERIMENTS)
def test_quick_run_writes_the_json_contract(name, tmp_path):
    result = registry.run(name, out=tmp_path, quick=True)
    data = json.loads((tmp_path / f"{name}.json").read_text())
    assert (tmp_path / f"{name}.png").stat().st_size > 1000
    for key in ("name", "settings", "x", "measured", "measured_std", "paper"):
        assert key in data, key
    assert data["name"] == name == result.name
    s = data["settings"]
    assert s["quick"] is True and s["seed"] == 0
    n = len(data["x"])
    assert n >= 1 and data["measured"]
    for method, values in data["measured"].items():
        assert len(values) == n, method
        assert all(_finite(v) for v in values), (method, values)
        if name in AUC_EXPERIMENTS:
            assert all(0.0 <= v <= 1.0 for v in values), (method, values)
        else:
            assert all(v >= 0.0 for v in values), (method, values)
        assert len(data["measured_std"][method]) == n
        assert all(_finite(v) and v >= 0 for v in data["measured_std"][method])
    for method, values in data["paper"].items():
        assert method in data["measured"], method
        assert len(values) == n
        assert all(v is None or _finite(v) for v in values)


def test_quick_auc_experiments_beat_chance():
    # Cheap sanity on the cached quick runs: every method learns something.
    for name in ("landmine-kernels", "heart-pooling", "dermatology"):
        r = registry.run(name, quick=True)
        for method, values in r.measured.items():
            assert min(values) > 0.55, (name, method, values)


def test_paper_numbers_are_the_seed_readme_values():
    r = registry.run("heart-pooling", quick=True)
    assert r.paper["Pooled SVM"][0] == 0.861 and r.paper["Independent SVMs"][0] == 0.800
    assert 0.865 in r.paper["Adaptive pooling"]
    assert med_figures.LANDMINE_PAPER[False]["multitask"][0] == 0.6015
    assert med_figures.LANDMINE_PAPER[True]["independent"][-1] == 0.7375
    assert med_lecture.HOUSING_PAPER == [1.7584, 1.7529, 1.6894, 1.5377, 1.4808]


# --------------------------------------------------------------------------------------------
# The protocol: the test split is never used for selection.

def _flip_test_labels(split):
    """Wrap a split function so that the test part's labels are negated."""

    def flipped(*args, **kwargs):
        parts = split(*args, **kwargs)
        test = parts[2]
        test = MultiTaskDataset([Task(t.X, -t.y, t.name) for t in test.tasks], test.name,
                                test.feature_names, test.description)
        return (*parts[:2], test, *parts[3:])

    return flipped


def test_heart_selection_never_sees_the_test_split(monkeypatch):
    kw = dict(Cs=[1.0, 10.0], log_alphas=[0.0, 20.0])
    ref = med_figures.heart_split(0, **kw)
    monkeypatch.setattr(med_figures, "split_with_both_classes",
                        _flip_test_labels(protocol.split_with_both_classes))
    flipped = med_figures.heart_split(0, **kw)
    # identical choices and validation scores ...
    assert flipped["chosen"] == ref["chosen"]
    for key, value in ref["validation"].items():
        assert flipped["validation"][key] == pytest.approx(value)
    # ... and the test scores are those of the flipped labels (AUC -> 1 - AUC)
    for key in ("independent", "pooled", "adaptive_selected"):
        assert flipped[key] == pytest.approx(1.0 - ref[key], abs=1e-9)
    assert flipped["adaptive"] == pytest.approx([1.0 - a for a in ref["adaptive"]], abs=1e-9)


def test_dermatology_selection_never_sees_the_test_split(monkeypatch):
    kw = dict(Cs=[0.1, 10.0], alphas=[0.0, 10.0])
    ref = med_figures.dermatology_fold(20, 0, **kw)
    monkeypatch.setattr(MultiTaskDataset, "split", _flip_test_labels(MultiTaskDataset.split))
    flipped = med_figures.dermatology_fold(20, 0, **kw)
    assert flipped["chosen"] == ref["chosen"]
    assert flipped["validation"] == pytest.approx(ref["validation"])
    assert flipped["multitask"] == pytest.approx(1.0 - ref["multitask"], abs=1e-9)
    assert flipped["independent"] == pytest.approx(1.0 - ref["independent"], abs=1e-9)


def test_independent_svm_choice_is_the_validation_argmax():
    from sklearn.svm import SVC

    rng = np.random.default_rng(3)

    def task(n, shift):
        y = np.repeat([-1, 1], n // 2)
        return rng.normal(size=(n, 3)) + shift * y[:, None], y

    train, val, test = [task(16, 0.5)], [task(30, 0.5)], [task(30, 0.5)]
    Cs = [0.01, 0.1, 1.0, 10.0]
    _, test_mauc, chosen, scores = protocol.independent_svm_scores(Cs, train, val, test)
    # naive reference: the first C of the largest validation AUC
    vals = [auc(val[0][1], SVC(C=C, kernel="linear", tol=protocol.SVC_TOL).fit(*train[0]).decision_function(val[0][0]))
            for C in Cs]
    assert chosen == [Cs[int(np.argmax(vals))]]
    ref = SVC(C=chosen[0], kernel="linear", tol=protocol.SVC_TOL).fit(*train[0]).decision_function(test[0][0])
    np.testing.assert_allclose(scores[0], ref)
    assert test_mauc == pytest.approx(auc(test[0][1], ref))


def test_one_shared_svm_choice_maximises_the_mean_validation_auc():
    from sklearn.svm import SVC

    rng = np.random.default_rng(5)

    def task(n, shift):
        y = np.repeat([-1, 1], n // 2)
        return rng.normal(size=(n, 3)) + shift * y[:, None], y

    train = [task(12, s) for s in (0.3, 0.8, 1.5)]
    val = [task(40, s) for s in (0.3, 0.8, 1.5)]
    test = [task(40, s) for s in (0.3, 0.8, 1.5)]
    Cs = [0.001, 0.1, 10.0]
    val_mauc, test_mauc, chosen, scores = protocol.independent_svm_scores(Cs, train, val, test,
                                                                          per_task=False)
    # naive reference: every task fitted at every C, the first C of the best mean AUC
    table = [[auc(yv, SVC(C=C, kernel="linear", tol=protocol.SVC_TOL).fit(*tr).decision_function(Xv)) for C in Cs]
             for tr, (Xv, yv) in zip(train, val)]
    best = Cs[int(np.argmax(np.mean(table, axis=0)))]
    assert chosen == [best] * 3
    assert val_mauc == pytest.approx(np.mean(table, axis=0).max())
    for (Xtr, ytr), (Xte, yte), s in zip(train, test, scores):
        np.testing.assert_allclose(s, SVC(C=best, kernel="linear", tol=protocol.SVC_TOL).fit(Xtr, ytr).decision_function(Xte))


def test_sum_kernel_svms_are_med_at_alpha_zero_to_solver_precision():
    # The independent baseline of Fig. 1-2 is the multi-task model's alpha = 0 point solved
    # by libsvm; at the experiments' tolerance the two solvers give the same classifier.
    from medmtl.datasets import load_landmine
    from medmtl.med import MultiTaskMEDClassifier

    ds = load_landmine()
    train, val, test, _ = protocol.split_with_both_classes(ds[:4], 30, 0.5, random_state=0)
    Xtr, Xva, Xte = protocol.standardize_tasks(train.Xs, val.Xs, test.Xs)
    bank = protocol.unit_diagonal_kernels(
        protocol.landmine_kernel_bank(9, protocol.landmine_rbf_gammas(Xtr)), Xtr)
    parts = [list(zip(Xs, d.ys)) for Xs, d in ((Xtr, train), (Xva, val), (Xte, test))]
    _, test_mauc, _, scores = protocol.independent_svm_scores([0.1], *parts, kernel=protocol.SumKernel(bank),
                                                              per_task=False)
    med = MultiTaskMEDClassifier(selection="kernels", kernels=bank, C=0.1, alpha=0.0).fit(Xtr, train.ys)
    for s, m in zip(scores, med.decision_function(Xte)):
        np.testing.assert_allclose(s, m, atol=1e-5)
    assert test_mauc == pytest.approx(np.mean([auc(y, m) for y, m in zip(test.ys, med.decision_function(Xte))]))


def test_split_with_both_classes_repairs_rare_classes_and_keeps_sizes():
    rng = np.random.default_rng(0)
    tasks = [Task(rng.normal(size=(100, 2)), np.r_[np.ones(3, int), -np.ones(97, int)], f"t{m}")
             for m in range(6)]
    ds = MultiTaskDataset(tasks, "rare")
    tr, va, te, swaps = protocol.split_with_both_classes(ds, 10, 0.5, random_state=1)
    again = protocol.split_with_both_classes(ds, 10, 0.5, random_state=1)
    for m in range(6):
        assert set(tr[m].y.tolist()) == {-1, 1}
        assert (len(tr[m].y), len(va[m].y), len(te[m].y)) == (10, 45, 45)
        rows = np.concatenate([tr[m].X[:, 0], va[m].X[:, 0], te[m].X[:, 0]])
        assert np.unique(rows).size == 100  # disjoint and complete
        np.testing.assert_array_equal(tr[m].X, again[0][m].X)
    assert swaps == again[3]


def test_uniform_draw_leaves_tasks_without_a_mine_at_the_hypergeometric_rate():
    from scipy.stats import hypergeom

    from medmtl.datasets import load_landmine

    ds = load_landmine()
    expected = np.mean([hypergeom(len(t.y), int((t.y == 1).sum()), 20).pmf(0) for t in ds])  # 0.289
    unfitted = []
    for seed in range(20):
        tr, va, te, fitted = protocol.split_uniform_draw(ds, 20, random_state=seed)
        unfitted.append(1 - len(fitted) / len(ds))
        for m in (0, 28):
            assert (len(tr[m].y), abs(len(va[m].y) - len(te[m].y))) == (20, len(ds[m].y) % 2)
            rows = np.vstack([tr[m].X, va[m].X, te[m].X])
            assert np.unique(rows, axis=0).shape[0] == np.unique(ds[m].X, axis=0).shape[0]
        assert all(set(va[m].y.tolist()) == {-1, 1} == set(te[m].y.tolist()) for m in range(len(ds)))
        assert fitted == [m for m in range(len(ds)) if set(tr[m].y.tolist()) == {-1, 1}]
    # 580 task draws: standard error ~0.019
    assert abs(np.mean(unfitted) - expected) < 0.06


def test_landmine_fold_uniform_draw_scores_unfitted_tasks_at_one_half():
    out = med_figures.landmine_fold(20, 0, seed=3, Cs=[1.0], alphas=[10.0], draw="uniform")
    k = out["fitted_tasks"]
    assert 10 < k < 29
    lo = 0.5 * (29 - k) / 29  # the unfitted tasks' share of the mean
    for key in ("multitask", "independent"):
        assert lo < out[key] <= lo + k / 29
    with pytest.raises(ValueError, match="draw"):
        med_figures.landmine_fold(20, 0, draw="random")

def test_minmax_scaling_uses_training_inputs_only():
    rng = np.random.default_rng(0)
    train = [rng.normal(size=(5, 3)), rng.normal(size=(4, 3))]
    test_a, test_b = [rng.normal(size=(6, 3))], [100 * rng.normal(size=(6, 3))]
    tr_a, _ = protocol.minmax_scale_tasks(train, test_a)
    tr_b, te_b = protocol.minmax_scale_tasks(train, test_b)
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
    tr, te = protocol.standardize_tasks(train, test)
    for X, X0 in zip(train, before):
        np.testing.assert_array_equal(X, X0)
    stacked = np.vstack(tr)
    np.testing.assert_allclose(stacked.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(stacked.std(0), [1.0, 1.0, 0.0], atol=1e-12)
    S = np.vstack(train)
    np.testing.assert_allclose(te[0][:, :2], (test[0][:, :2] - S.mean(0)[:2]) / S.std(0)[:2])
    np.testing.assert_allclose(te[0][:, 2], test[0][:, 2] - 7.0)


def test_rbf_bandwidths_follow_the_median_squared_distance():
    rng = np.random.default_rng(1)
    Xs = [rng.normal(size=(6, 2)), rng.normal(size=(5, 2))]
    X = np.vstack(Xs)
    d = [np.sum((X[i] - X[j]) ** 2) for i in range(len(X)) for j in range(i + 1, len(X))]
    assert protocol.median_sq_distance(Xs) == pytest.approx(np.median(d))
    assert protocol.landmine_rbf_gammas(Xs, [0.5, 2.0]) == pytest.approx([0.5 / np.median(d), 2.0 / np.median(d)])
    with pytest.raises(ValueError, match="identical"):
        protocol.landmine_rbf_gammas([np.ones((4, 2))])


# --------------------------------------------------------------------------------------------
# Pieces of the pipelines, against independent references.

def test_kernel_bank_is_scaled_to_unit_training_diagonal():
    rng = np.random.default_rng(0)
    Xs = [rng.random((7, 9)), rng.random((5, 9))]
    bank = protocol.unit_diagonal_kernels(protocol.landmine_kernel_bank(9, protocol.landmine_rbf_gammas(Xs),
                                                                         poly=True), Xs)
    assert len(bank) == 22
    X = np.vstack(Xs)
    for k in bank:
        assert np.mean([k(x[None], x[None])[0, 0] for x in X]) == pytest.approx(1.0)
    K = protocol.SumKernel(bank)(X, X)
    np.testing.assert_allclose(K, sum(k(X, X) for k in bank))


def test_quadratic_expansion_matches_sklearn_polynomial_features():
    from sklearn.preprocessing import PolynomialFeatures

    X = np.random.default_rng(0).random((4, 5))
    ours = protocol.quadratic_expansion(X)
    ref = PolynomialFeatures(2, include_bias=False).fit_transform(X)
    assert ours.shape == (4, 5 + 15)
    np.testing.assert_allclose(ours, ref)


def test_splice_quadratic_features_drop_only_structural_zeros():
    from medmtl.datasets import load_splice

    X = load_splice(window=25)[0].X[:300]
    Q = med_lecture.splice_features(X, 25, True)
    assert Q.shape[1] == 100 + 100 * 99 // 2 - 25 * 6 == 4900
    # every kept product is a pair of different positions; the dropped ones are always zero
    full = protocol.quadratic_expansion(X)
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


def test_warm_path_factorises_once_and_matches_fresh_fits(monkeypatch):
    from medmtl.kernels import RBFKernel
    from medmtl.med import MultiTaskMEDClassifier, dual as dual_module

    rng = np.random.default_rng(0)
    Xs = [rng.random((12, 3)) for _ in range(3)]
    ys = [np.where(X[:, 0] + 0.2 * rng.normal(size=12) > 0.5, 1, -1) for X in Xs]
    bank = [RBFKernel(0.5), RBFKernel(4.0)] + protocol.landmine_kernel_bank(3, [])[:3]

    def make(C, alpha):
        return MultiTaskMEDClassifier(selection="kernels", kernels=bank, C=C, alpha=alpha,
                                      warm_start=True)

    def objective(model):
        return model.objective_

    calls = []
    real = dual_module.factorize_gram
    monkeypatch.setattr(dual_module, "factorize_gram", lambda *a, **k: calls.append(1) or real(*a, **k))
    path, _ = protocol.warm_path(make, [0.5, 2.0], [0.0, 5.0], Xs, ys, objective)
    n_factorised = len(calls)
    fresh = {(C, a): MultiTaskMEDClassifier(selection="kernels", kernels=bank, C=C, alpha=a)
             .fit(Xs, ys).objective_ for C in (0.5, 2.0) for a in (0.0, 5.0)}
    assert n_factorised <= len(calls) / 4  # the path built its factors once, not per C
    for key, value in fresh.items():
        assert path[key] == pytest.approx(value, rel=1e-6)


def test_paired_tests_per_size_match_scipy():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(0)
    cells = [{"size": n, "fold": f} for n in (20, 40) for f in range(5)]
    out = [{"multitask": rng.random(), "independent": rng.random()} for _ in cells]
    rows = med_figures._paired_tests(out, cells, [20, 40], "size")
    for row, n in zip(rows, (20, 40)):
        a = [o["multitask"] for o, c in zip(out, cells) if c["size"] == n]
        b = [o["independent"] for o, c in zip(out, cells) if c["size"] == n]
        assert row["size"] == n
        assert row["mean_difference"] == pytest.approx(np.mean(a) - np.mean(b))
        assert row["p_value"] == pytest.approx(ttest_rel(a, b).pvalue)
