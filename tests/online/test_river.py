"""RiverClassifier against river itself: evaluation, pipelines, clone, river's own checks."""

import importlib
import random
import sys

import numpy as np
import pytest

river = pytest.importorskip("river")
from river import checks, compose, evaluate, metrics, preprocessing, stream  # noqa: E402
from sklearn.base import clone as sklearn_clone  # noqa: E402

from medmtl.datasets import load_landmine, load_statlog_dna, load_usps  # noqa: E402
from medmtl.online import (AMLC, PEER, SHAMPO, Banditron, LabelOracle, OneVsOneBandit,  # noqa: E402
                           OneVsRestBandit, RiverClassifier)


@pytest.fixture(scope="module")
def usps():
    X, labels = load_usps("test")
    return X[:400], labels[:400]


@pytest.fixture(scope="module")
def dna():
    X, labels = load_statlog_dna("test")
    return X[:400].toarray(), labels[:400]


@pytest.fixture(scope="module")
def landmine():
    """Four minefields interleaved in a random order: (rows, labels, tasks, order, per-task data)."""
    ds = load_landmine(tasks=range(4))
    Xs, ys = [t.X[:150] for t in ds], [t.y[:150] for t in ds]
    order = np.array([(k, i) for k in range(4) for i in range(150)])
    order = order[np.random.default_rng(0).permutation(len(order))]
    return Xs, ys, order


def naive_multiclass(learner, X, labels, classes):
    """Predict then learn with the medmtl learner itself; the accuracy of the predictions made."""
    learner, codes = sklearn_clone(learner), np.searchsorted(classes, labels)
    hits = seen = 0
    for row, code in zip(X, codes):
        if hasattr(learner, "n_rounds_"):
            seen += 1
            hits += int(learner.predict_one(row) == code)
            learner.learn_one(row, code)
        else:  # the first round needs the annotator, which tells the number of classes
            learner.learn_one(row, oracle=learner._make_oracle(np.array([code]), len(classes)), index=0)
    return hits / seen, learner


@pytest.mark.parametrize("data, learner", [
    ("usps", OneVsRestBandit(b=0.1, random_state=0)),
    ("usps", Banditron(gamma=0.1, random_state=1)),
    ("dna", OneVsOneBandit(zero_feedback="weak", b=0.1, random_state=0)),
    ("dna", OneVsOneBandit(zero_feedback="random", b=0.1, random_state=2)),
])
def test_progressive_val_score_equals_a_naive_loop(data, learner, request):
    X, labels = request.getfixturevalue(data)
    classes = np.unique(labels).tolist()
    model = RiverClassifier(learner, classes=classes)
    score = evaluate.progressive_val_score(stream.iter_array(X, labels), model, metrics.Accuracy())
    expected, reference = naive_multiclass(learner, X, labels, classes)
    assert score.get() == expected
    assert np.array_equal(model.learner_.coef_, reference.coef_)
    assert not hasattr(learner, "n_rounds_")            # the template is never trained
    assert 1.5 / len(classes) < score.get() < 1.0        # it learnt something


def test_multitask_learners_read_the_task_from_the_dict(landmine):
    Xs, ys, order = landmine
    rows = [({f"f{i}": float(v) for i, v in enumerate(Xs[k][i])} | {"task": int(k)}, int(ys[k][i]))
            for k, i in order]
    for learner in (AMLC(C=1.0, random_state=0), PEER(random_state=3)):
        model = RiverClassifier(learner, task_key="task", n_tasks=4)
        predictions = []
        for x, y in rows:
            predictions.append(model.predict_one(x))
            model.learn_one(x, y)
        # the same rounds as fit plays them: same weights, same predictions after the first round
        reference = sklearn_clone(learner).fit(Xs, ys, order=order)
        assert np.array_equal(model.learner_.weights_, reference.weights_)
        assert predictions[0] is None and predictions[1:] == reference.stream_predictions_[1:].tolist()
        assert model.learner_.n_queries_ == reference.n_queries_ < len(rows)

        score = evaluate.progressive_val_score(iter(rows), model.clone(), metrics.Accuracy())
        assert score.get() == np.mean(np.array(predictions[1:]) == [y for _, y in rows[1:]])


def test_fixed_task_and_boolean_labels(landmine):
    Xs, ys, _ = landmine
    model = RiverClassifier(AMLC(random_state=0), classes=(False, True), task=2, n_tasks=4)
    for row, y in zip(Xs[2], ys[2]):
        model.learn_one(dict(enumerate(row)), bool(y == 1))
    reference = AMLC(random_state=0)
    reference.learn_one(Xs[2][0], task=2, oracle=LabelOracle([[], [], ys[2][:1], []]), index=0)
    for row, y in zip(Xs[2][1:], ys[2][1:]):
        reference.learn_one(row, y, task=2)
    assert np.array_equal(model.learner_.weights_, reference.weights_)
    assert model.predict_one(dict(enumerate(Xs[2][0]))) == (reference.predict_one(Xs[2][0], task=2) == 1)


def test_pipeline_with_a_scaler(dna):
    X, labels = dna
    model = preprocessing.StandardScaler() | RiverClassifier(Banditron(gamma=0.1, random_state=0), classes=[1, 2, 3])
    score = evaluate.progressive_val_score(stream.iter_array(X, labels), model, metrics.Accuracy())
    assert 1 / 3 < score.get() < 1.0
    adapter = model.steps["RiverClassifier"]
    assert adapter.learner_.n_rounds_ == len(labels) and model.predict_one(dict(enumerate(X[0]))) in (1, 2, 3)
    fresh = model.clone()
    assert isinstance(fresh, compose.Pipeline) and fresh.predict_one(dict(enumerate(X[0]))) is None


def test_clone_is_unfitted_with_equal_parameters(usps):
    X, labels = usps
    learner = Banditron(gamma=0.2, random_state=5)
    model = RiverClassifier(learner, features=list(range(256)), classes=list(range(10)))
    for x, y in stream.iter_array(X[:50], labels[:50]):
        model.learn_one(x, y)
    copy = model.clone()                                # river.base.Base.clone
    assert type(copy) is RiverClassifier and copy is not model
    assert copy.learner is not model.learner and copy.learner.get_params() == learner.get_params()
    assert {k: v for k, v in copy._get_params().items() if k != "learner"} == \
        {k: v for k, v in model._get_params().items() if k != "learner"}
    assert not hasattr(copy, "learner_") and copy.predict_one(dict(enumerate(X[0]))) is None
    # the copy learns the same stream into the same model
    for x, y in stream.iter_array(X[:50], labels[:50]):
        copy.learn_one(x, y)
    assert np.array_equal(copy.learner_.coef_, model.learner_.coef_)


def test_key_order_unseen_and_missing_features(dna):
    X, labels = dna
    rng = random.Random(0)

    def shuffled(x):
        items = list(x.items())
        rng.shuffle(items)
        return dict(items)

    a = RiverClassifier(OneVsRestBandit(b=0.1, random_state=0), classes=[1, 2, 3])
    b = RiverClassifier(OneVsRestBandit(b=0.1, random_state=0), classes=[1, 2, 3])
    pa, pb = [], []
    for x, y in stream.iter_array(X, labels):
        pa.append(a.predict_one(x))
        pb.append(b.predict_one(shuffled(x)))
        a.learn_one(x, y)
        b.learn_one(shuffled(x), y)
    assert pa == pb and a.features_ == b.features_ == tuple(range(180))
    assert np.array_equal(a.learner_.coef_, b.learner_.coef_)

    x = dict(enumerate(X[7]))
    assert a.predict_one(shuffled(x)) == a.predict_one(x) == a.predict_one(x | {"unseen": 3.0, 999: -1.0})
    zeros = [k for k, v in x.items() if v == 0]
    assert a.predict_one({k: v for k, v in x.items() if k not in zeros}) == a.predict_one(x)


def test_features_given_fix_the_columns():
    model = RiverClassifier(Banditron(random_state=0), features=["b", "a"], classes=["x", "y"])
    model.learn_one({"a": 1.0, "c": 5.0}, "y")
    assert model.features_ == ("b", "a") and model.learner_.n_features_in_ == 2
    assert model.predict_one({"a": 1.0}) in ("x", "y")


def test_bad_input_gets_a_clear_error():
    model = RiverClassifier(Banditron(random_state=0), classes=[0, 1, 2])
    model.learn_one({"a": 1.0, "b": 0.0}, 1)
    with pytest.raises(TypeError, match="feature 'a' has the non-numeric value 'high'"):
        model.learn_one({"a": "high", "b": 0.0}, 1)
    with pytest.raises(TypeError, match="feature 'b' has the non-numeric value None"):
        model.predict_one({"a": 1.0, "b": None})
    with pytest.raises(ValueError, match="feature 'a' is not finite"):
        model.learn_one({"a": float("nan"), "b": 0.0}, 1)
    with pytest.raises(ValueError, match="label 'cat' is not one of the classes"):
        model.learn_one({"a": 1.0, "b": 0.0}, "cat")
    with pytest.raises(ValueError, match="label 7 is not one of the classes"):
        model.learn_one({"a": 1.0, "b": 0.0}, 7)
    with pytest.raises(TypeError, match=r"label \[1\] \(list\) is not hashable"):
        model.learn_one({"a": 1.0, "b": 0.0}, [1])
    with pytest.raises(TypeError, match="x must be a dict"):
        model.learn_one([1.0, 0.0], 1)
    assert model.learner_.n_rounds_ == 1                # nothing learnt from the bad rounds
    with pytest.raises(ValueError, match="x has no features"):
        RiverClassifier(Banditron(), classes=[0, 1]).learn_one({}, 0)


def test_bad_parameters_get_a_clear_error():
    with pytest.raises(ValueError, match="needs its classes"):
        RiverClassifier(Banditron())
    with pytest.raises(ValueError, match="at least two distinct labels"):
        RiverClassifier(Banditron(), classes=[1, 1])
    with pytest.raises(TypeError, match="SHAMPO shows every task an input on every round"):
        RiverClassifier(SHAMPO())
    with pytest.raises(TypeError, match="must be a medmtl online learner"):
        RiverClassifier("perceptron")
    with pytest.raises(ValueError, match="needs n_tasks"):
        RiverClassifier(AMLC(), task_key="task")
    with pytest.raises(ValueError, match="give task_key .* or task"):
        RiverClassifier(AMLC(), n_tasks=3)
    with pytest.raises(ValueError, match="task 3 out of range"):
        RiverClassifier(AMLC(), task=3, n_tasks=3)
    with pytest.raises(ValueError, match="binary tasks need classes=\\(negative, positive\\)"):
        RiverClassifier(AMLC(), task=0, n_tasks=1, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="task_key, task and n_tasks must be None"):
        RiverClassifier(Banditron(), classes=[0, 1], task=0)

    model = RiverClassifier(AMLC(), task_key="task", n_tasks=2)
    with pytest.raises(ValueError, match="x has no task key 'task'"):
        model.learn_one({"a": 1.0}, 1)
    with pytest.raises(ValueError, match="task 2 out of range"):
        model.learn_one({"a": 1.0, "task": 2}, 1)
    with pytest.raises(TypeError, match="a task must be an integer"):
        model.learn_one({"a": 1.0, "task": 0.5}, 1)
    model.learn_one({"a": 1.0, "task": 1.0}, 1)          # an integral float (iter_array) is a task
    assert model.learner_.n_rounds_ == 1


def test_a_clear_import_error_without_river(monkeypatch):
    monkeypatch.setitem(sys.modules, "river", None)
    monkeypatch.delitem(sys.modules, "medmtl.online.river_compat")
    with pytest.raises(ImportError, match="pip install river"):
        importlib.import_module("medmtl.online.river_compat")


@pytest.mark.slow
def test_river_estimator_checks():
    """river's own conventions: clone, pickling, emerging and disappearing features, ..."""
    for params in RiverClassifier._unit_test_params():
        checks.check_estimator(RiverClassifier(**params))
    segments = ["brickface", "cement", "foliage", "grass", "path", "sky", "window"]  # ImageSegments
    checks.check_estimator(RiverClassifier(Banditron(random_state=0), classes=[False, True] + segments))
