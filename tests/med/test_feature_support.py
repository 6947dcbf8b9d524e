"""The feature-selection estimators as selectors (get_support, transform, SelectFromModel),
DataFrame column names, and the calibrated-probabilities recipe."""

from operator import methodcaller

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.feature_selection import SelectFromModel
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

from medmtl.kernels import LinearKernel, RBFKernel
from medmtl.med import MEDClassifier, MultiTaskMEDClassifier, MultiTaskMEDClassifierCV
from medmtl.model_selection import stack_tasks
from med_testdata import make_tasks

pd = pytest.importorskip("pandas")


def with_dead_features(seed=0):
    """Four informative features, then a zero column and one too small for any evidence."""
    Xs, ys = make_tasks(M=2, T=25, D=4, seed=seed)
    X, y, tasks = stack_tasks(Xs, ys)
    rng = np.random.default_rng(seed)
    return np.hstack([X, np.zeros((X.shape[0], 1)), 1e-4 * rng.normal(size=(X.shape[0], 1))]), y, tasks


def test_support_is_the_switches_whose_evidence_is_above_round_off():
    X, y, tasks = with_dead_features()
    model = MultiTaskMEDClassifier(alpha=3.0).fit(X, y, tasks=tasks)
    evidence = model.dual_.term_quads(model.dual_coef_)
    np.testing.assert_array_equal(model.get_support(), [True] * 4 + [False, False])
    np.testing.assert_array_equal(model.get_support(indices=True), [0, 1, 2, 3])
    assert 0 < evidence[5] < 1e-5  # evidence, but round-off: a tie with the prior
    prior = 1 / (1 + 3.0)
    assert np.all(model.switch_posterior_[:4] > prior) and model.switch_posterior_[4] == pytest.approx(prior)
    np.testing.assert_array_equal(model.transform(X), X[:, :4])
    # a kernel bank has one switch per kernel and no transform
    bank = MultiTaskMEDClassifier(selection="kernels", kernels=[RBFKernel(0.3), LinearKernel()]).fit(X, y, tasks=tasks)
    assert bank.get_support().shape == (2,) and not hasattr(bank, "transform")
    assert not hasattr(MultiTaskMEDClassifier(selection=None), "get_support")


def test_select_from_model_and_pipelines_use_the_switches():
    Xs, ys = make_tasks(M=1, T=40, D=4, seed=1)
    X1 = np.hstack([Xs[0], np.zeros((40, 1))])
    model = MEDClassifier(selection="features", alpha=3.0)
    # the selector of get_support (the recipe), and the stricter one of posteriors above 1/2
    chosen = SelectFromModel(model, importance_getter=methodcaller("get_support"), threshold=0.5).fit(X1, ys[0])
    np.testing.assert_array_equal(chosen.get_support(), model.fit(X1, ys[0]).get_support())
    likely = SelectFromModel(model, importance_getter="switch_posterior_", threshold=0.5).fit(X1, ys[0])
    np.testing.assert_array_equal(likely.get_support(), model.switch_posterior_ >= 0.5)
    pipe = make_pipeline(MEDClassifier(selection="features", alpha=3.0), SVC(kernel="linear")).fit(X1, ys[0])
    assert pipe[-1].n_features_in_ == int(model.get_support().sum())


def test_feature_names_come_from_data_frames():
    X, y, tasks = with_dead_features(seed=2)
    names = [f"gene_{d}" for d in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    model = MultiTaskMEDClassifier(alpha=3.0).fit(frame, y, tasks=tasks)
    assert model.feature_names_in_.tolist() == names
    assert model.get_feature_names_out().tolist() == names[:4]
    cv = MultiTaskMEDClassifierCV(Cs=[1.0], alphas=[3.0], cv=3).fit(frame, y, tasks=tasks)
    assert cv.feature_names_in_.tolist() == names and cv.transform(frame).shape == (X.shape[0], 4)
    with pytest.warns(UserWarning, match="feature names"):
        model.predict(X, tasks=tasks)


def test_calibrated_probabilities_recipe():
    Xs, ys = make_tasks(M=1, T=160, D=4, seed=3, noise=1.0)
    X, y = Xs[0], np.where(ys[0] > 0, "yes", "no")
    train, calibrate, test = np.split(np.arange(160), [80, 120])
    # cross-validated calibration (Platt's sigmoid on held-out decision values)
    calibrated = CalibratedClassifierCV(MEDClassifier(selection="features", alpha=2.0), method="sigmoid", cv=3)
    p = calibrated.fit(X[train], y[train]).predict_proba(X[test])
    assert calibrated.classes_.tolist() == ["no", "yes"] and np.allclose(p.sum(axis=1), 1.0)
    assert log_loss(y[test], p) < log_loss(y[test], np.full_like(p, 0.5))
    # a fitted model calibrated on a set of its own: probabilities rise with its decision values
    model = MEDClassifier(selection="features", alpha=2.0).fit(X[train], y[train])
    frozen = CalibratedClassifierCV(FrozenEstimator(model), method="sigmoid").fit(X[calibrate], y[calibrate])
    f, q = model.decision_function(X[test]), frozen.predict_proba(X[test])[:, 1]
    assert np.all(np.diff(q[np.argsort(f)]) >= -1e-12)
    assert log_loss(y[test], frozen.predict_proba(X[test])) < log_loss(y[test], np.full_like(p, 0.5))
