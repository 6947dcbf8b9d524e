"""Inputs the MED estimators must refuse, or read as scikit-learn reads them, in both forms.

Per-task lists of DataFrames keep scikit-learn's feature-name contract; dates, complex
numbers, text, generators, labels of the wrong length and matrices without features are
clear errors naming the argument; huge hyper-parameters are named, not passed to numpy.
"""

import warnings

import numpy as np
import pytest

from medmtl._validation import InvalidParameterError
from medmtl.med import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
)
from med_testdata import make_regression_tasks, make_tasks

pd = pytest.importorskip("pandas")

LIST_ESTIMATORS = [MultiTaskMEDClassifier, MultiTaskMEDRegressor, AdaptivePoolingClassifier]
COLUMNS = ["a", "b", "c"]


def _data(cls, M=2):
    if cls in (MultiTaskMEDRegressor, MEDRegressor):
        return make_regression_tasks(M=M, T=15, D=3, seed=0)
    return make_tasks(M=M, T=15, D=3, seed=0)


def _frames(Xs, columns=COLUMNS):
    return [pd.DataFrame(X, columns=columns) for X in Xs]


# ------------------------------------------------------------------------------ feature names
@pytest.mark.parametrize("cls", LIST_ESTIMATORS)
def test_lists_of_dataframes_set_feature_names_and_give_the_plain_answer(cls):
    Xs, ys = _data(cls)
    framed = cls(alpha=1.0).fit(_frames(Xs), ys)
    plain = cls(alpha=1.0).fit(Xs, ys)
    assert framed.feature_names_in_.tolist() == COLUMNS
    assert not hasattr(plain, "feature_names_in_")
    for a, b in zip(framed.predict(_frames(Xs)), plain.predict(Xs)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)  # a frame's array is column-major
    # refitted on arrays, the names are gone
    assert not hasattr(framed.fit(Xs, ys), "feature_names_in_")


@pytest.mark.parametrize("cls", LIST_ESTIMATORS)
@pytest.mark.parametrize("method", ["predict", "score", "decision_function"])
def test_reordered_or_renamed_columns_are_refused_at_prediction(cls, method):
    Xs, ys = _data(cls)
    model = cls(alpha=1.0).fit(_frames(Xs), ys)
    if not hasattr(model, method):
        pytest.skip(f"{cls.__name__} has no {method}")
    args = (ys,) if method == "score" else ()
    reordered = [X[["c", "b", "a"]] for X in _frames(Xs)]
    with pytest.raises(ValueError, match=r"Xs\[0\]: The feature names should match those that were passed "
                                         "during fit.\nFeature names must be in the same order"):
        getattr(model, method)(reordered, *args)
    renamed = _frames(Xs, ["a", "b", "z"])
    with pytest.raises(ValueError, match="Feature names unseen at fit time:\n- z"):
        getattr(model, method)(renamed, *args)


def test_a_single_task_of_the_list_with_other_columns_is_refused_at_prediction():
    Xs, ys = _data(MultiTaskMEDClassifier)
    model = MultiTaskMEDClassifier(alpha=1.0).fit(_frames(Xs), ys)
    with pytest.raises(ValueError, match=r"Xs\[1\]: The feature names should match"):
        model.predict([_frames(Xs)[0], _frames(Xs)[1][["b", "a", "c"]]])


def test_arrays_after_names_and_names_after_arrays_warn_as_scikit_learn_does():
    Xs, ys = _data(MultiTaskMEDClassifier)
    named = MultiTaskMEDClassifier(alpha=1.0).fit(_frames(Xs), ys)
    with pytest.warns(UserWarning, match="X does not have valid feature names, but MultiTaskMEDClassifier was "
                                         "fitted with feature names"):
        named.predict(Xs)
    plain = MultiTaskMEDClassifier(alpha=1.0).fit(Xs, ys)
    with pytest.warns(UserWarning, match="X has feature names, but MultiTaskMEDClassifier was fitted without"):
        plain.predict(_frames(Xs))


def test_tasks_must_share_one_set_of_column_names_at_fit():
    Xs, ys = _data(MultiTaskMEDClassifier, M=3)
    frames = _frames(Xs)
    with pytest.raises(ValueError, match=r"Xs\[2\] has columns \['c', 'b', 'a'\] but Xs\[0\] has columns "
                                         r"\['a', 'b', 'c'\]: every task must have the same columns"):
        MultiTaskMEDClassifier(alpha=1.0).fit([frames[0], frames[1], frames[2][["c", "b", "a"]]], ys)
    with pytest.raises(ValueError, match=r"Xs\[1\] has no column names but Xs\[0\] has columns"):
        MultiTaskMEDClassifier(alpha=1.0).fit([frames[0], Xs[1], frames[2]], ys)


def test_names_fitted_in_one_form_are_checked_in_the_other():
    Xs, ys = _data(MultiTaskMEDClassifier)
    model = MultiTaskMEDClassifier(alpha=1.0).fit(_frames(Xs), ys)
    stacked = pd.concat(_frames(Xs), ignore_index=True)
    tasks = np.repeat([0, 1], [len(X) for X in Xs])
    np.testing.assert_allclose(model.decision_function(stacked, tasks=tasks),
                               np.concatenate(model.decision_function(_frames(Xs))), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        model.predict(stacked[["b", "a", "c"]], tasks=tasks)


# ------------------------------------------------------------------------------- input values
UNREAL = {
    "datetime64": (lambda X: (np.abs(X) * 1e3).astype("int64").astype("datetime64[s]"), ValueError,
                   "dates or durations"),
    "timedelta64": (lambda X: (np.abs(X) * 1e3).astype("int64").astype("timedelta64[ns]"), ValueError,
                    "dates or durations"),
    "complex": (lambda X: X + 1j, ValueError, "complex numbers"),
    "text": (lambda X: X.astype(str), ValueError, "text"),
    "numeric strings in an object array": (lambda X: np.where(X > 0, "1.5", X).astype(object), TypeError,
                                           r"'1.5' \(str\) where a real number is needed"),
}


@pytest.mark.parametrize("kind", sorted(UNREAL))
@pytest.mark.parametrize("form", ["single", "stacked", "lists", "lists-predict"])
def test_values_that_are_not_real_numbers_are_refused_naming_the_argument(kind, form):
    convert, error, message = UNREAL[kind]
    Xs, ys = _data(MultiTaskMEDClassifier)
    bad = [convert(X) for X in Xs]
    with pytest.raises(error, match=message) as raised:
        if form == "single":
            MEDClassifier().fit(bad[0], ys[0])
        elif form == "stacked":
            MultiTaskMEDClassifier().fit(np.vstack(bad), np.concatenate(ys), tasks=np.repeat([0, 1], 15))
        elif form == "lists":
            MultiTaskMEDClassifier().fit(bad, ys)
        else:
            MultiTaskMEDClassifier().fit(Xs, ys).predict(bad)
    assert str(raised.value).startswith(("X ", "Xs[0] ", "Complex data not supported: X"))


@pytest.mark.parametrize("dtype", [bool, object, np.float32, np.int64])
def test_booleans_and_numbers_in_object_arrays_are_read_as_numbers(dtype):
    Xs, ys = _data(MultiTaskMEDClassifier)
    Xs = [np.round(X) for X in Xs]
    converted = [X.astype(dtype) for X in Xs]
    plain = MultiTaskMEDClassifier(alpha=1.0).fit([X.astype(dtype).astype(float) for X in Xs], ys)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = MultiTaskMEDClassifier(alpha=1.0).fit(converted, ys)
    for a, b in zip(model.decision_function(converted), plain.decision_function(Xs if dtype is not bool else
                                                                                 [X.astype(bool).astype(float)
                                                                                  for X in Xs])):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("form", ["lists", "stacked", "single"])
def test_complex_targets_are_refused_naming_the_argument_without_a_numpy_warning(form):
    Xs, ys = _data(MultiTaskMEDRegressor)
    complex_ys = [y + 0j for y in ys]  # even with a zero imaginary part: no silent conversion
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning would be an error here
        with pytest.raises(ValueError, match=r"^(Complex data not supported: )?ys?(\[0\])? holds complex numbers"):
            if form == "lists":
                MultiTaskMEDRegressor().fit(Xs, complex_ys)
            elif form == "stacked":
                MultiTaskMEDRegressor().fit(np.vstack(Xs), np.concatenate(complex_ys), tasks=np.repeat([0, 1], 15))
            else:
                MEDRegressor().fit(Xs[0], complex_ys[0])


@pytest.mark.parametrize("form", ["lists", "stacked", "single"])
def test_complex_class_labels_are_refused_naming_the_argument(form):
    Xs, ys = _data(MultiTaskMEDClassifier)
    complex_ys = [y + 0j for y in ys]
    with pytest.raises(ValueError, match=r"ys?(\[0\])? holds complex numbers; use integers or strings as labels"):
        if form == "lists":
            MultiTaskMEDClassifier().fit(Xs, complex_ys)
        elif form == "stacked":
            MultiTaskMEDClassifier().fit(np.vstack(Xs), np.concatenate(complex_ys), tasks=np.repeat([0, 1], 15))
        else:
            MEDClassifier().fit(Xs[0], complex_ys[0])


@pytest.mark.parametrize("cls", LIST_ESTIMATORS)
def test_labels_of_another_length_than_x_are_refused_at_fit_and_score(cls):
    Xs, ys = _data(cls)
    with pytest.raises(ValueError, match=r"ys\[1\] (must be 1-D with 15 labels|has 14 targets but X has 15 rows)"):
        cls().fit(Xs, [ys[0], ys[1][:-1]])
    model = cls(alpha=1.0).fit(Xs, ys)
    with pytest.raises(ValueError, match=r"y\[0\] .*15"):
        model.score(Xs, [np.r_[ys[0], ys[0][:1]], ys[1]])
    with pytest.raises(ValueError, match="X has 2 tasks but y has 1"):
        model.score(Xs, ys[:1])
    X, y, tasks = np.vstack(Xs), np.concatenate(ys), np.repeat([0, 1], 15)
    stacked = cls(alpha=1.0).fit(X, y, tasks=tasks)
    with pytest.raises(ValueError, match=r"^y .*30"):
        stacked.score(X, np.r_[y, y[:3]], tasks=tasks)


@pytest.mark.parametrize("cls", LIST_ESTIMATORS)
def test_matrices_without_features_are_refused(cls):
    Xs, ys = _data(cls)
    with pytest.raises(ValueError, match=r"Xs\[0\] has no features \(shape \(15, 0\)\)"):
        cls().fit([X[:, :0] for X in Xs], ys)
    with pytest.raises(ValueError, match="0 feature"):
        cls().fit(np.vstack(Xs)[:, :0], np.concatenate(ys), tasks=np.repeat([0, 1], 15))


@pytest.mark.parametrize("cls", LIST_ESTIMATORS)
def test_generators_are_refused_before_anything_is_read(cls):
    Xs, ys = _data(cls)
    taken = []

    def tasks():
        for X in Xs:
            taken.append(X)
            yield X

    with pytest.raises(TypeError, match="X is a generator, which can be read only once; pass a list"):
        cls().fit(tasks(), ys)
    with pytest.raises(TypeError, match="ys is a generator"):
        cls().fit(Xs, (y for y in ys))
    model = cls(alpha=1.0).fit(Xs, ys)
    with pytest.raises(TypeError, match="X is a generator"):
        model.predict(tasks())
    with pytest.raises(TypeError, match="y is a generator"):
        model.score(Xs, (y for y in ys))
    assert taken == []


# ---------------------------------------------------------------------------- hyper-parameters
@pytest.mark.parametrize("cls", [MEDClassifier, MEDRegressor, MultiTaskMEDClassifier, MultiTaskMEDRegressor,
                                 AdaptivePoolingClassifier])
@pytest.mark.parametrize("params, message", [
    (dict(max_iter=10 ** 30), r"max_iter must be None or >= 1 \(a finite integer\); got 10{30} \(too large for "
                              r"a 64-bit integer"),
    (dict(max_iter=2 ** 63), "max_iter .*got 9223372036854775808 \\(too large for a 64-bit integer"),
    (dict(C=10 ** 400), r"C must be > 0 \(a finite real number\); got 1000.*\.\.\. \(too large for a float\)"),
    (dict(C=float("nan")), "C must be > 0 .*got nan"),
    (dict(C=True), "C must be > 0 .*got True"),
    (dict(tol=float("inf")), "tol must be None or > 0 .*got inf"),
    (dict(kernel="poly", degree=10 ** 20), "degree must be >= 1 .*too large for a 64-bit integer"),
    (dict(kernel="rbf", gamma=10 ** 400), "gamma must be one of 'scale', 'auto' or > 0 .*too large for a float"),
])
def test_numbers_numpy_cannot_hold_are_named_errors(cls, params, message):
    Xs, ys = _data(cls)
    data = (Xs[0], ys[0]) if cls in (MEDClassifier, MEDRegressor) else (Xs, ys)
    with pytest.raises(InvalidParameterError, match=rf"^{cls.__name__}: {message}"):
        cls(**params).fit(*data)


def test_large_but_representable_numbers_are_still_valid():
    Xs, ys = _data(MEDClassifier)
    model = MEDClassifier(max_iter=2 ** 62, C=10 ** 30 // 10 ** 30).fit(Xs[0], ys[0])
    np.testing.assert_array_equal(model.decision_function(Xs[0]), MEDClassifier().fit(Xs[0], ys[0])
                                  .decision_function(Xs[0]))


# ----------------------------------------------------------------------------------- labels
@pytest.mark.parametrize("cls", [MultiTaskMEDClassifier, AdaptivePoolingClassifier])
def test_the_estimators_encode_any_two_labels_as_the_builders_need(cls):
    Xs, ys = _data(cls)
    pm1 = cls(alpha=1.0).fit(Xs, ys)
    for labels in ([0, 1], ["no", "yes"], [False, True]):
        relabelled = [np.where(y > 0, labels[1], labels[0]) for y in ys]
        model = cls(alpha=1.0).fit(Xs, relabelled)
        assert model.objective_ == pm1.objective_
        for f, g in zip(model.decision_function(Xs), pm1.decision_function(Xs)):
            np.testing.assert_array_equal(f, g)
        for p, y in zip(model.predict(Xs), relabelled):
            assert set(np.unique(p)) <= set(np.unique(y))
