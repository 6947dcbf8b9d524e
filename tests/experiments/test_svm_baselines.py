"""The libsvm baselines: choices are the validation argmax; the sum-kernel SVMs are MED at alpha = 0."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score as auc
from sklearn.svm import SVC

from medmtl.experiments import kernel_banks, preprocessing, splits, svm_baselines


def _task(rng, n, shift):
    y = np.repeat([-1, 1], n // 2)
    return rng.normal(size=(n, 3)) + shift * y[:, None], y


def _svc(C):
    return SVC(C=C, kernel="linear", tol=svm_baselines.SVC_TOL)


def test_independent_svm_choice_is_the_validation_argmax():
    rng = np.random.default_rng(3)
    train, val, test = [_task(rng, 16, 0.5)], [_task(rng, 30, 0.5)], [_task(rng, 30, 0.5)]
    Cs = [0.01, 0.1, 1.0, 10.0]
    _, test_mauc, chosen, scores = svm_baselines.independent_svm_scores(Cs, train, val, test)
    # naive reference: the first C of the largest validation AUC
    vals = [auc(val[0][1], _svc(C).fit(*train[0]).decision_function(val[0][0])) for C in Cs]
    assert chosen == [{"C": Cs[int(np.argmax(vals))]}]
    ref = _svc(chosen[0]["C"]).fit(*train[0]).decision_function(test[0][0])
    np.testing.assert_allclose(scores[0], ref)
    assert test_mauc == pytest.approx(auc(test[0][1], ref))


def test_one_shared_svm_choice_maximises_the_mean_validation_auc():
    rng = np.random.default_rng(5)
    train = [_task(rng, 12, s) for s in (0.3, 0.8, 1.5)]
    val = [_task(rng, 40, s) for s in (0.3, 0.8, 1.5)]
    test = [_task(rng, 40, s) for s in (0.3, 0.8, 1.5)]
    Cs = [0.001, 0.1, 10.0]
    val_mauc, test_mauc, chosen, scores = svm_baselines.independent_svm_scores(Cs, train, val, test,
                                                                               per_task=False)
    # naive reference: every task fitted at every C, the first C of the best mean AUC
    table = [[auc(yv, _svc(C).fit(*tr).decision_function(Xv)) for C in Cs] for tr, (Xv, yv) in zip(train, val)]
    best = Cs[int(np.argmax(np.mean(table, axis=0)))]
    assert chosen == [{"C": best}] * 3
    assert val_mauc == pytest.approx(np.mean(table, axis=0).max())
    for (Xtr, ytr), (Xte, yte), s in zip(train, test, scores):
        np.testing.assert_allclose(s, _svc(best).fit(Xtr, ytr).decision_function(Xte))


def test_pooled_svm_is_one_svc_on_all_tasks_at_the_validation_best_C():
    rng = np.random.default_rng(7)
    train, val, test = ([_task(rng, 20, s) for s in (0.4, 1.0)] for _ in range(3))
    Cs = [0.01, 1.0]
    X, y = np.vstack([X for X, _ in train]), np.concatenate([y for _, y in train])
    vals = [np.mean([auc(yv, _svc(C).fit(X, y).decision_function(Xv)) for Xv, yv in val]) for C in Cs]
    val_mauc, test_mauc, C, scores = svm_baselines.pooled_svm_scores(Cs, train, val, test)
    assert C == Cs[int(np.argmax(vals))] and val_mauc == pytest.approx(max(vals))
    for (Xte, yte), s in zip(test, scores):
        np.testing.assert_allclose(s, _svc(C).fit(X, y).decision_function(Xte))


def test_sum_kernel_svms_are_med_at_alpha_zero_to_solver_precision():
    # The independent baseline of Fig. 1-2 is the multi-task model's alpha = 0 point solved
    # by libsvm; at the experiments' tolerance the two solvers give the same classifier.
    from medmtl.datasets import load_landmine
    from medmtl.med import MultiTaskMEDClassifier

    ds = load_landmine()
    train, val, test, _ = splits.split_with_both_classes(ds[:4], 30, 0.5, random_state=0)
    Xtr, Xva, Xte = preprocessing.standardize_tasks(train.Xs, val.Xs, test.Xs)
    bank = kernel_banks.unit_diagonal_kernels(
        kernel_banks.landmine_kernel_bank(9, kernel_banks.landmine_rbf_gammas(Xtr)), Xtr)
    parts = [list(zip(Xs, d.ys)) for Xs, d in ((Xtr, train), (Xva, val), (Xte, test))]
    _, test_mauc, _, scores = svm_baselines.independent_svm_scores([0.1], *parts, per_task=False,
                                                                   kernel=kernel_banks.SumKernel(bank))
    med = MultiTaskMEDClassifier(selection="kernels", kernels=bank, C=0.1, alpha=0.0).fit(Xtr, train.ys)
    for s, m in zip(scores, med.decision_function(Xte)):
        np.testing.assert_allclose(s, m, atol=1e-5)
    assert test_mauc == pytest.approx(np.mean([auc(y, m) for y, m in zip(test.ys, med.decision_function(Xte))]))


def test_l1_logistic_regression_is_l1_on_the_installed_scikit_learn():
    # spelt penalty="l1" before scikit-learn 1.8 and l1_ratio=1 from it; the other spelling
    # fits an l2 model there (no weight exactly zero), or fails
    from medmtl.experiments.svm_baselines import l1_logistic_regression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 20))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1, -1)
    coef = l1_logistic_regression(0.05, random_state=0).fit(X, y).coef_.ravel()
    assert coef[0] != 0 and np.count_nonzero(coef == 0) >= 10
