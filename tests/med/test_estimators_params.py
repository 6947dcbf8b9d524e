"""Hyper-parameters of the MED estimators: declared once, checked by one call at fit."""

from numbers import Integral, Real

import numpy as np
import pytest

from medmtl._validation import Checked, Interval, InvalidParameterError, Options, validate_params
from medmtl.med import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
)
from medmtl.med.solvers import METHODS
from med_testdata import make_regression_tasks, make_tasks

ESTIMATORS = [MEDClassifier, MEDRegressor, MultiTaskMEDClassifier, MultiTaskMEDRegressor,
              AdaptivePoolingClassifier]


def data_for(cls):
    """Small training data in the form ``cls.fit`` takes."""
    if cls in (MEDRegressor, MultiTaskMEDRegressor):
        Xs, ys = make_regression_tasks(M=2, T=15, D=3, seed=0)
    else:
        Xs, ys = make_tasks(M=2, T=15, D=3, seed=0)
    return (Xs[0], ys[0]) if cls in (MEDClassifier, MEDRegressor) else (Xs, ys)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_every_parameter_has_one_declared_constraint(cls):
    assert set(cls._parameter_constraints) == set(cls().get_params())


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_value_of_a_wrong_type_is_named_before_the_data_are_read(cls):
    bad = type("BadType", (), {})()
    for name in cls().get_params():
        est = cls().set_params(**{name: bad})
        with pytest.raises(InvalidParameterError, match=rf"^{cls.__name__}: {name}\b"):
            est.fit(None, None)


@pytest.mark.parametrize("params, message", [
    (dict(C=0), "C must be > 0 (a finite real number); got 0"),
    (dict(C=np.inf), "C must be > 0 (a finite real number); got inf"),
    (dict(alpha=-0.5), "alpha must be None or >= 0 (a finite real number); got -0.5"),
    (dict(alpha=np.nan), "alpha must be None or >= 0 (a finite real number); got nan"),
    (dict(rho=0.0), "rho must be None or in (0, 1] (a real number); got 0.0"),
    (dict(rho=1.5), "rho must be None or in (0, 1] (a real number); got 1.5"),
    (dict(max_iter=0), "max_iter must be None or >= 1 (a finite integer); got 0"),
    (dict(max_iter=2.0), "max_iter must be None or >= 1 (a finite integer); got 2.0"),
    (dict(max_iter=True), "max_iter must be None or >= 1 (a finite integer); got True"),
    (dict(tol=0.0), "tol must be None or > 0 (a finite real number); got 0.0"),
    (dict(selection="all"), "selection must be one of None, 'features', 'kernels'; got 'all'"),
    (dict(solver_options=[("inexact", False)]), "solver_options must be None or a dict"),
    (dict(warm_start="yes"), "warm_start must be a bool; got 'yes'"),
    (dict(alpha=1.0, rho=0.5), "give alpha or rho, not both"),
    (dict(selection="kernels"), "selection='kernels' needs a bank of kernels"),
    (dict(selection="features", kernel="rbf"), "selection='features' switches linear features"),
    (dict(kernel="gaussian"), "kernel: unknown kernel 'gaussian'"),
    (dict(method="magic"), f"unknown method 'magic'; available: {sorted(METHODS)}"),
    (dict(solver_options={"max_iter": 5}), "set max_iter with the estimator's own parameter"),
    (dict(selection="kernels", kernels=[]), "kernels: the kernel bank is empty"),
])
def test_messages_name_the_estimator_the_parameter_and_the_rule(params, message):
    X, y = data_for(MEDClassifier)
    with pytest.raises(InvalidParameterError) as err:
        MEDClassifier(**params).fit(X, y)
    assert str(err.value).startswith("MEDClassifier: ")
    assert message in str(err.value)


@pytest.mark.parametrize("params, message", [
    (dict(epsilon=-1.0), "MEDRegressor: epsilon must be >= 0"),
])
def test_regressor_messages(params, message):
    X, y = data_for(MEDRegressor)
    with pytest.raises(InvalidParameterError, match=message):
        MEDRegressor(**params).fit(X, y)


@pytest.mark.parametrize("params, message", [
    (dict(task_scale=0.0), "AdaptivePoolingClassifier: task_scale must be None or > 0"),
    (dict(shared_scale=-1.0), "AdaptivePoolingClassifier: shared_scale must be > 0"),
])
def test_pooling_messages(params, message):
    Xs, ys = data_for(AdaptivePoolingClassifier)
    with pytest.raises(InvalidParameterError, match=message):
        AdaptivePoolingClassifier(**params).fit(Xs, ys)


def test_numpy_scalars_are_accepted():
    X, y = data_for(MEDClassifier)
    a = MEDClassifier(selection="features", alpha=2.0, C=0.5, max_iter=1000).fit(X, y)
    b = MEDClassifier(selection="features", alpha=np.float64(2.0), C=np.float32(0.5), max_iter=np.int64(1000),
                      warm_start=np.bool_(False)).fit(X, y)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)


@pytest.mark.parametrize("cls", [MEDClassifier, MEDRegressor, MultiTaskMEDClassifier, MultiTaskMEDRegressor,
                                 AdaptivePoolingClassifier])
def test_rho_and_the_default_prior_are_alpha(cls):
    # alpha = (1 - rho) / rho, and neither given is alpha = 1, for every estimator alike
    kw = {} if cls is AdaptivePoolingClassifier else dict(selection="features")
    X, y = data_for(cls)
    by_alpha = cls(alpha=3.0, **kw).fit(X, y)
    by_rho = cls(rho=0.25, **kw).fit(X, y)
    np.testing.assert_array_equal(by_rho.dual_coef_, by_alpha.dual_coef_)
    np.testing.assert_array_equal(by_rho.switch_posterior_, by_alpha.switch_posterior_)
    default, one = cls(**kw).fit(X, y), cls(alpha=1.0, **kw).fit(X, y)
    np.testing.assert_array_equal(default.dual_coef_, one.dual_coef_)
    with pytest.raises(InvalidParameterError, match="not both"):
        cls(alpha=3.0, rho=0.25, **kw).fit(X, y)


def test_parameters_are_checked_at_fit_not_at_construction():
    est = MEDClassifier(C=-1.0, method="magic")
    assert est.get_params()["C"] == -1.0
    with pytest.raises(InvalidParameterError, match="C must be > 0"):
        est.fit(*data_for(MEDClassifier))


# -- the checker itself ------------------------------------------------------------------------
def test_interval_bounds_and_kinds():
    half_open = Interval(Real, 0, 1, closed="right")
    assert half_open.parse(1) == 1.0 and isinstance(half_open.parse(1), float)
    counts = Interval(Integral, 1, None, closed="left")
    assert counts.parse(np.int64(3)) == 3 and type(counts.parse(np.int64(3))) is int
    rules = {"p": [half_open], "n": [counts]}
    for bad in [0, 1.0000001, np.nan, True, "0.5"]:
        with pytest.raises(InvalidParameterError, match=r"^M: p must be in \(0, 1\] \(a real number\)"):
            validate_params({"p": bad, "n": 1}, rules, "M")
    for bad in [0, 1.5, np.inf, False]:
        with pytest.raises(InvalidParameterError, match="n must be >= 1 \\(a finite integer\\)"):
            validate_params({"p": 0.5, "n": bad}, rules, "M")
    with pytest.raises(ValueError, match="closed"):
        Interval(Real, 0, 1, closed="open")


def test_options_types_and_none():
    rules = {"mode": [Options("a", "b")], "opts": [None, dict], "flag": [bool]}
    assert validate_params({"mode": "b", "opts": None, "flag": np.bool_(True)}, rules, "M") == \
        {"mode": "b", "opts": None, "flag": np.bool_(True)}
    with pytest.raises(InvalidParameterError, match="mode must be one of 'a', 'b'; got 'c'"):
        validate_params({"mode": "c", "opts": {}, "flag": True}, rules, "M")
    with pytest.raises(InvalidParameterError, match="opts must be None or a dict; got 3"):
        validate_params({"mode": "a", "opts": 3, "flag": True}, rules, "M")
    with pytest.raises(InvalidParameterError, match="flag must be a bool; got 1"):
        validate_params({"mode": "a", "opts": {}, "flag": 1}, rules, "M")


def test_a_checked_form_parses_and_keeps_its_own_message():
    def known(name):
        if name not in ("x", "y"):
            raise ValueError(f"unknown name {name!r}; known: x, y")
        return name.upper()

    rules = {"name": [None, Checked(known)]}
    assert validate_params({"name": "x"}, rules, "M") == {"name": "X"}
    assert validate_params({"name": None}, rules, "M") == {"name": None}
    with pytest.raises(InvalidParameterError, match=r"^M: name: unknown name 'z'; known: x, y$") as err:
        validate_params({"name": "z"}, rules, "M")
    assert isinstance(err.value.__cause__, ValueError)


def test_a_parameter_without_a_constraint_is_a_programming_error():
    with pytest.raises(RuntimeError, match=r"M declares no constraint for \['b'\]"):
        validate_params({"a": 1, "b": 2}, {"a": [int]}, "M")
