"""Calibrated probabilities from MED classifiers: the recipe of docs/calibration.md."""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import brier_score_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from medmtl.datasets import load_dermatology
from medmtl.med import MEDClassifier, MultiTaskMEDClassifier
from medmtl.med.estimators import TaskClassifier


def _valid(proba, n):
    assert proba.shape == (n, 2)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def _single_task_briers(C, seed):
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=seed, stratify=y)
    med = make_pipeline(StandardScaler(), MEDClassifier(selection="features", C=C))
    raw = expit(clone(med).fit(Xtr, ytr).decision_function(Xte))
    calibrated = CalibratedClassifierCV(med, method="sigmoid", cv=5).fit(Xtr, ytr)
    proba = calibrated.predict_proba(Xte)
    _valid(proba, len(yte))
    np.testing.assert_array_equal(calibrated.classes_, [0, 1])
    return brier_score_loss(yte, raw), brier_score_loss(yte, proba[:, 1]), np.mean(yte) * (1 - np.mean(yte))


def test_single_task_recipe():
    """Breast cancer, three half splits. At C = 0.1 the margins are too small for a logistic
    scale and calibration lowers the Brier score on every split; at C = 1 the sigmoid of the
    margin is about as good already, and the calibrated probabilities stay close to it. Both
    are far better than the base rate."""
    for C in (0.1, 1.0):
        scores = np.array([_single_task_briers(C, seed) for seed in range(3)])
        raw, calibrated, base_rate = scores.T
        assert np.all(calibrated < base_rate / 5)
        if C == 0.1:
            assert np.all(calibrated < raw)
        else:
            assert np.all(calibrated < raw + 0.01)


@pytest.fixture(scope="module")
def dermatology_model():
    train, val, test = load_dermatology().split(train=100, validation=0.5, random_state=0)
    model = MultiTaskMEDClassifier(selection="features", C=1.0, alpha=10.0).fit(train.Xs, train.ys)
    return model, val, test


def test_per_task_recipe(dermatology_model):
    """Dermatology's six tasks, each calibrated on its validation rows: the Brier score on
    the test rows falls in every task."""
    model, val, test = dermatology_model
    for m in model.tasks_:
        view = TaskClassifier(model, m)
        calibrated = CalibratedClassifierCV(FrozenEstimator(view), method="sigmoid").fit(val.Xs[m], val.ys[m])
        proba = calibrated.predict_proba(test.Xs[m])
        _valid(proba, len(test.ys[m]))
        np.testing.assert_array_equal(calibrated.classes_, model.classes_[m])
        np.testing.assert_array_equal(view.predict(test.Xs[m]), model.predict(test.Xs)[m])
        positive = test.ys[m] == view.classes_[1]
        raw = expit(view.decision_function(test.Xs[m]))
        assert brier_score_loss(positive, proba[:, 1]) < brier_score_loss(positive, raw)


def test_task_view_refuses_what_it_cannot_do(dermatology_model):
    model, val, _ = dermatology_model
    with pytest.raises(ValueError, match="not one of the fitted tasks"):
        TaskClassifier(model, 9).decision_function(val.Xs[0])
    # CalibratedClassifierCV with folds clones the view, whose estimator is then unfitted:
    # it fails instead of calibrating on the model's own training rows
    with pytest.raises(Exception, match="not fitted"):
        CalibratedClassifierCV(TaskClassifier(model, 0), cv=3).fit(val.Xs[0], val.ys[0])
