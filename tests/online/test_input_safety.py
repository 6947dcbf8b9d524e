"""Every online learner at its door: any input is an exact answer or a clear error, never a crash.

Wrong widths, types and empty inputs are driven through every public method in a separate
process, so that a crash in compiled code shows as a crash rather than taking the test run
down; the compiled loops run once more with numba's bounds checking on. The rest: DataFrame
column names (scikit-learn's contract), the float range from subnormal numbers to near
overflow, every hyper-parameter declared and checked, and scikit-learn's label convention
(any two labels per binary task) everywhere labels are given.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from medmtl._validation import InvalidParameterError
from medmtl.online import (AMLC, PEER, SHAMPO, Banditron, CallableOracle, IndependentQuery, KernelSHAMPO, LabelOracle,
                           MultiTaskLearner, OneVsOneBandit, OneVsRestBandit, PairFeedbackOracle, PEERShare,
                           RandomQuery, one_vs_rest_oracle)

from online_testdata import multiclass_problem, multitask_problem, related_tasks

EVERY_TASK = {"SHAMPO": lambda **k: SHAMPO(b=0.1, **k), "KernelSHAMPO": lambda **k: KernelSHAMPO(kernel="rbf", **k)}
ONE_TASK = {"AMLC": AMLC, "PEER": PEER, "PEERShare": PEERShare, "RandomQuery": RandomQuery,
            "IndependentQuery": IndependentQuery}
MULTICLASS = {"OneVsRestBandit": OneVsRestBandit, "OneVsOneBandit": OneVsOneBandit, "Banditron": Banditron}
LEARNERS = {**EVERY_TASK, **ONE_TASK, **MULTICLASS}
BINARY = {**EVERY_TASK, **ONE_TASK}


def _run(script, env=None, timeout=600):
    """Run ``script`` in a fresh interpreter; a crash (a signal) is a return code < 0."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


# ------------------------------------------------------------------- wrong inputs, in a subprocess
_DOOR_SCRIPT = r"""
import json, sys, traceback
import numpy as np
from medmtl.online import (AMLC, PEER, SHAMPO, Banditron, IndependentQuery, KernelSHAMPO, OneVsOneBandit,
                           OneVsRestBandit, PEERShare, RandomQuery, RiverClassifier)

rng = np.random.default_rng(0)
D = 4
Xs = [rng.normal(size=(30, D)) for _ in range(3)]
ys = [np.where(X[:, 0] > 0, 1, -1) for X in Xs]
X = rng.normal(size=(60, D))
labels = rng.integers(0, 3, 60)


def bad(kind, rows=5):
    # a bad matrix of `rows` rows, or a bad single input (rows=None)
    shape = (D,) if rows is None else (rows, D)
    good = rng.normal(size=shape)
    return {
        "narrower": good[..., :D - 1], "wider": np.concatenate([good, good], axis=-1),
        "text": good.astype(str), "object_text": good.astype(str).astype(object),
        "dates": (good * 100).astype("datetime64[s]"), "complex": good + 1j,
        "empty": np.empty((0,) if rows is None else (0, D)), "no_features": np.empty((rows or 1, 0)),
        "generator": (r for r in good), "nan": np.where(np.arange(D) == 1, np.nan, good),
    }[kind]


KINDS = ["narrower", "wider", "text", "object_text", "dates", "complex", "empty", "no_features", "generator", "nan"]
FIT_KINDS = [k for k in KINDS if k not in ("narrower", "wider")]
EVERY = {"SHAMPO": lambda: SHAMPO(b=0.1, random_state=0), "KernelSHAMPO": lambda: KernelSHAMPO(random_state=0)}
ONE = {"AMLC": AMLC, "PEER": PEER, "PEERShare": PEERShare, "RandomQuery": RandomQuery,
       "IndependentQuery": IndependentQuery}
MULTI = {"OneVsRestBandit": OneVsRestBandit, "OneVsOneBandit": OneVsOneBandit, "Banditron": Banditron}


def case(name, call, probe=None):
    # one refused call: how it ended, and whether the learner's margins moved
    print(json.dumps({"case": name, "started": True}), flush=True)
    before = probe() if probe else None
    try:
        call()
        outcome = {"outcome": "accepted"}
    except Exception as err:  # noqa: BLE001 - how it ended is the point
        outcome = {"outcome": "error", "type": type(err).__name__, "message": str(err),
                   "clear": isinstance(err, (ValueError, TypeError))}
    if probe:
        outcome["unchanged"] = bool(np.array_equal(np.concatenate([np.ravel(m) for m in before]),
                                                   np.concatenate([np.ravel(m) for m in probe()])))
    print(json.dumps({"case": name, **outcome}), flush=True)


for name, make in EVERY.items():
    model = make().fit(Xs, ys)
    probe = lambda: model.decision_function(Xs)
    for kind in KINDS:
        row = lambda: [bad(kind, None)] + [X[0] for X in Xs[1:]]
        case(f"{name}.learn_one[{kind}]", lambda: model.learn_one(row(), [1, 1, 1]), probe)
        case(f"{name}.predict_one[{kind}]", lambda: model.predict_one(row()))
        case(f"{name}.predict[{kind}]", lambda: model.predict([bad(kind)] + Xs[1:]))
        case(f"{name}.predict(task)[{kind}]", lambda: model.predict(bad(kind), task=0))
        case(f"{name}.decision_function[{kind}]", lambda: model.decision_function(bad(kind), task=0))
        case(f"{name}.score[{kind}]", lambda: model.score(bad(kind), np.ones(5), task=0))
    for kind in FIT_KINDS:
        case(f"{name}.fit[{kind}]", lambda: make().fit([bad(kind, 30)] + Xs[1:], ys))

for name, make in ONE.items():
    model = make(random_state=0).fit(Xs, ys)
    probe = lambda: model.decision_function(Xs)
    for kind in KINDS:
        case(f"{name}.learn_one[{kind}]", lambda: model.learn_one(bad(kind, None), 1, task=0), probe)
        case(f"{name}.predict_one[{kind}]", lambda: model.predict_one(bad(kind, None), task=0))
        case(f"{name}.predict[{kind}]", lambda: model.predict([bad(kind)] + Xs[1:]))
        case(f"{name}.predict(task)[{kind}]", lambda: model.predict(bad(kind), task=1))
        case(f"{name}.decision_function[{kind}]", lambda: model.decision_function(bad(kind), task=1))
        case(f"{name}.score[{kind}]", lambda: model.score(bad(kind), np.ones(5), task=1))
    for kind in KINDS:
        wrong = {"narrower": "narrower", "wider": "wider"}.get(kind, kind)
        case(f"{name}.fit[{kind}]", lambda: make().fit([bad(wrong, 30)] + Xs[1:], ys))

for name, make in MULTI.items():
    model = make(random_state=0).fit(X, labels)
    probe = lambda: model.decision_function(X)
    for kind in KINDS:
        case(f"{name}.learn_one[{kind}]", lambda: model.learn_one(bad(kind, None), 1), probe)
        case(f"{name}.predict_one[{kind}]", lambda: model.predict_one(bad(kind, None)))
        case(f"{name}.predict[{kind}]", lambda: model.predict(bad(kind)))
        case(f"{name}.decision_function[{kind}]", lambda: model.decision_function(bad(kind)))
        case(f"{name}.score[{kind}]", lambda: model.score(bad(kind), np.ones(5, int)))
    for kind in FIT_KINDS:
        case(f"{name}.fit[{kind}]", lambda: make().fit(bad(kind, 60), labels))

river = RiverClassifier(Banditron(random_state=0), classes=[0, 1, 2])
for x, c in zip(X[:20], labels[:20]):
    river.learn_one(dict(zip("abcd", x)), int(c))
case("River.learn_one[text]", lambda: river.learn_one({"a": "1.0", "b": 2.0, "c": 0.0, "d": 1.0}, 1))
case("River.predict_one[complex]", lambda: river.predict_one({"a": 1j, "b": 2.0, "c": 0.0, "d": 1.0}))
print(json.dumps({"case": "done"}), flush=True)
"""

# what each refusal must say
_EXPECTED = {"narrower": "features", "wider": "features", "text": "text|real number", "object_text": "real number",
             "dates": "dates", "complex": "complex", "empty": "no rows|no features", "no_features": "no features",
             "generator": "read only once", "nan": "NaN", "River": "non-numeric|not finite|real"}


def test_wrong_inputs_are_clear_errors_and_never_crash():
    done = _run(_DOOR_SCRIPT)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    last = lines[-1]["case"] if lines else "(none)"
    assert done.returncode == 0, f"the process died (code {done.returncode}) at {last}: {done.stderr[-2000:]}"
    assert last == "done", done.stderr[-2000:]
    results = [r for r in lines if "outcome" in r]
    assert len(results) > 400
    for r in results:
        kind = "River" if r["case"].startswith("River") else r["case"].rsplit("[", 1)[1].rstrip("]")
        assert r["outcome"] == "error", f"{r['case']} was accepted"
        assert r["clear"], f"{r['case']}: {r['type']}: {r['message']}"
        assert re.search(_EXPECTED[kind], r["message"]), f"{r['case']}: {r['message']}"
        assert r.get("unchanged", True), f"{r['case']}: a refused round changed the learner"


_BOUNDS_SCRIPT = r"""
import numpy as np
import scipy.sparse as sp

from medmtl.online import (AMLC, PEER, SHAMPO, Banditron, IndependentQuery, KernelSHAMPO, LabelOracle,
                           MultiTaskStream, OneVsOneBandit, OneVsRestBandit, PairFeedbackOracle, PEERShare,
                           RandomQuery, one_vs_rest_oracle)
from medmtl.online.active import pairwise_sum
from medmtl.online.rows import add_row, as_rows, row_dot, row_dot_fast, row_dots

try:  # bounds checking is on: a weight vector too short is an IndexError, not a silent read
    row_dot(as_rows(np.ones((1, 5))), 0, np.ones(3))
except IndexError:
    pass
else:
    raise SystemExit("NUMBA_BOUNDSCHECK is not in effect")

rng = np.random.default_rng(0)
for sparse in (False, True):
    def mat(n, d):
        X = rng.normal(size=(n, d))
        X[rng.random(X.shape) < 0.4] = 0.0
        return sp.csr_matrix(X) if sparse else X

    for dims in ([5, 3, 7], [4, 4, 4]):  # every task on every round: widths that differ, and one width
        Xs = [mat(60, d) for d in dims]
        ys = [np.where(rng.random(60) < 0.5, 1, -1) for _ in dims]
        for params in ({}, {"n_queries": 2}, {"prior": "mistakes", "prior_rounds": 20}, {"scale": "max"},
                       {"strategy": "exploit"}, {"strategy": "uniform"}):
            model = SHAMPO(b=0.3, random_state=0, **params).fit(Xs, ys)
            model.predict(Xs)
        model.learn_one([X[0] for X in Xs], [y[0] for y in ys])
        model.predict_one([X[1] for X in Xs])
    if not sparse:
        SHAMPO(dtype="float32", random_state=0).fit(Xs, ys).predict(Xs)
        KernelSHAMPO(kernel="rbf", random_state=0).fit(Xs, ys).predict(Xs)
    Xs = [mat(40, 6) for _ in range(3)]  # one example per round
    ys = [np.where(rng.random(40) < 0.5, 1, -1) for _ in range(3)]
    for make in (AMLC, lambda **k: AMLC(confidence="sum", share_on="mistake", **k), PEER, PEERShare, RandomQuery,
                 IndependentQuery):
        model = make(random_state=0).fit(Xs, ys)
        model.predict(Xs)
        for t in range(5):
            model.learn_one(Xs[t % 3][t], ys[t % 3][t], task=t % 3)
            model.predict_one(Xs[t % 3][t], task=t % 3)
        make(budget=7, random_state=0).fit(Xs, LabelOracle(ys))
    X, labels = mat(120, 5), rng.integers(0, 4, 120)  # one multiclass problem
    for model in (OneVsRestBandit(random_state=0), OneVsOneBandit(zero_feedback="weak", random_state=0),
                  OneVsOneBandit(zero_feedback="random", random_state=0),
                  OneVsOneBandit(zero_feedback="ignore", random_state=0), Banditron(random_state=0)):
        model.fit(X[:100], labels[:100])
        model.predict(X)
        oracle = (PairFeedbackOracle if isinstance(model, OneVsOneBandit) else one_vs_rest_oracle)(labels)
        for t in range(100, 110):
            model.learn_one(X[t], oracle=oracle, index=t)
            model.predict_one(X[t])
    rows, W, out = as_rows(mat(10, 6)), rng.normal(size=(6, 3)), np.empty(3)
    for t in range(10):
        row_dot(rows, t, W[:, 0])
        row_dot_fast(rows, t, np.ascontiguousarray(W[:, 1]))
        row_dots(rows, t, W, out)
        add_row(rows, t, W[:, 2], 0.5)
    stream = MultiTaskStream([mat(30, 8) for _ in range(2)])  # compacted to the columns its tasks use
    SHAMPO(random_state=0).fit(stream, [np.ones(30), -np.ones(30)]).predict([mat(3, 8), mat(3, 8)])
for n in (5, 128, 129, 1000, 5000):
    pairwise_sum(rng.random(n))
print("in bounds")
"""


@pytest.mark.slow
def test_compiled_loops_stay_in_bounds_under_numba_boundscheck():
    # a cache of its own: numba's cache does not tell code compiled with bounds checks apart
    with tempfile.TemporaryDirectory() as cache:
        done = _run(_BOUNDS_SCRIPT, env={"NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": cache}, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("in bounds")


# -------------------------------------------------------------------------------- feature names
def _frames(Xs, columns="abcd"):
    return [pd.DataFrame(X, columns=list(columns)) for X in Xs]


def _binary_problem(name):
    if name in EVERY_TASK:
        return multitask_problem(K=3, n=40, d=4, seed=1)
    return related_tasks(n_tasks=3, n=40, d=4, seed=3)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_per_task_frames_follow_the_feature_name_contract(name):
    Xs, ys = _binary_problem(name)
    frames = _frames(Xs)
    model = BINARY[name](random_state=0).fit(frames, ys)
    assert model.feature_names_in_.tolist() == ["a", "b", "c", "d"]
    plain = model.predict(frames)
    for shuffled in (frames[1][["b", "a", "c", "d"]], frames[1].rename(columns={"a": "z"})):
        with pytest.raises(ValueError, match="feature names should match"):
            model.predict(shuffled, task=1)
        with pytest.raises(ValueError, match="feature names should match"):
            model.predict([frames[0], shuffled, frames[2]])
    with pytest.warns(UserWarning, match=f"X does not have valid feature names, but {type(model).__name__} was "
                                         "fitted with feature names"):
        assert np.array_equal(model.predict(Xs[1], task=1), plain[1])
    row = frames[1].iloc[0]
    round_input = [f.iloc[0] for f in frames] if name in EVERY_TASK else row
    task = None if name in EVERY_TASK else 1
    label = [y[0] for y in ys] if name in EVERY_TASK else ys[1][0]
    of_task = {} if task is None else {"task": task}
    model.learn_one(round_input, label, **of_task)
    swapped = row[["d", "c", "b", "a"]]
    with pytest.raises(ValueError, match="feature names should match"):
        model.learn_one([swapped] * 3 if name in EVERY_TASK else swapped, label, **of_task)
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict_one(swapped, task=1)
    with pytest.raises(ValueError, match="every task must have the same columns"):
        BINARY[name]().fit([frames[0], frames[1][["b", "a", "c", "d"]], frames[2]], ys)
    unnamed = BINARY[name](random_state=0).fit(Xs, ys)
    assert not hasattr(unnamed, "feature_names_in_")
    with pytest.warns(UserWarning, match=f"X has feature names, but {type(model).__name__} was fitted without"):
        unnamed.predict(frames[0], task=0)


@pytest.mark.parametrize("name", sorted(MULTICLASS))
def test_a_frame_follows_the_feature_name_contract(name):
    X, labels = multiclass_problem(n=200, seed=5)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    model = MULTICLASS[name](random_state=0).fit(frame, labels)
    assert model.feature_names_in_.tolist() == list(frame.columns)
    assert np.array_equal(model.predict(frame), MULTICLASS[name](random_state=0).fit(X, labels).predict(X))
    reordered = frame[frame.columns[::-1]]
    for method in (model.predict, model.decision_function):
        with pytest.raises(ValueError, match="feature names should match"):
            method(reordered)
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict_one(reordered.iloc[0])
    with pytest.raises(ValueError, match="feature names should match"):
        model.learn_one(reordered.iloc[0], labels[0])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.predict(X)
    assert model.predict_one(frame.iloc[3]) == model.predict(frame)[3]


# ------------------------------------------------------------------------------------- scale
@pytest.mark.parametrize("scale", [1e-310, 2.0 ** -1060, 1e-300, 1e300, 1e307])
@pytest.mark.parametrize("name", sorted({**EVERY_TASK, **MULTICLASS}))
def test_scale_invariant_learners_are_exact_over_the_float_range(name, scale):
    if name in EVERY_TASK:
        Xs, ys = multitask_problem(K=3, n=60, d=4, seed=2)
        Xs = [np.round(X * 2 ** 12) / 2 ** 12 for X in Xs]  # exact when scaled by a power of two
        data, scaled = (Xs, ys), ([X * scale for X in Xs], ys)
    else:
        X, labels = multiclass_problem(n=200, seed=6)
        X = np.round(X * 2 ** 12) / 2 ** 12
        data, scaled = (X, labels), (X * scale, labels)
    make = LEARNERS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, underflow or invalid value on the way
        model = make(random_state=0).fit(*scaled)
        predicted = model.predict(scaled[0])
    plain = make(random_state=0).fit(*data).predict(data[0])
    assert np.array_equal(np.concatenate(predicted) if name in EVERY_TASK else predicted,
                          np.concatenate(plain) if name in EVERY_TASK else plain)
    state = model.dual_coef_ if name == "KernelSHAMPO" else model.coef_
    assert all(np.all(np.isfinite(w)) for w in state)


@pytest.mark.parametrize("scale, finite", [(1e-310, False), (1e-150, False), (1e-100, True), (1e100, True),
                                           (1e150, False), (1e300, False)])
@pytest.mark.parametrize("name", sorted(ONE_TASK))
def test_scale_dependent_learners_refuse_inputs_their_margins_cannot_hold(name, scale, finite):
    Xs, ys = related_tasks(n_tasks=3, n=40, d=4, seed=3)
    scaled = [X * scale for X in Xs]
    if not finite:
        with pytest.raises(ValueError, match="not scale-invariant.*row norms within"):
            ONE_TASK[name](random_state=0).fit(scaled, ys)
        model = ONE_TASK[name](random_state=0).fit(Xs, ys)
        with pytest.raises(ValueError, match="not scale-invariant"):
            model.learn_one(scaled[0][0], ys[0][0], task=0)
        with pytest.raises(ValueError, match="not scale-invariant"):
            model.predict(scaled[0], task=0)
        return
    model = ONE_TASK[name](random_state=0).fit(scaled, ys)
    assert np.all(np.isfinite(model.weights_)) and np.all(np.isfinite(model.decision_function(scaled, task=None)[0]))
    if hasattr(model, "committee_weights_"):
        np.testing.assert_allclose(model.committee_weights_.sum(axis=1), 1.0)


def test_subnormal_rows_are_normalised_without_overflow():
    from medmtl.online import row_norms, scale_to_unit_ball

    plain = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 0.5]])
    X = np.ldexp(plain, -1060)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for A in (X, sp.csr_matrix(X)):
            assert np.array_equal(row_norms(A), np.ldexp(row_norms(plain), -1060))
            for method in ("row", "max"):
                unit = scale_to_unit_ball(A, method=method)
                unit = unit.toarray() if sp.issparse(unit) else unit
                assert np.array_equal(unit, scale_to_unit_ball(plain, method=method))


@pytest.mark.parametrize("scale", ["max", None])
def test_kernel_shampo_scales_inputs_to_predict_as_it_scaled_the_stream(scale):
    Xs, ys = multitask_problem(K=2, n=80, d=3, seed=4)
    if scale is None:
        Xs = [X / (2 * np.linalg.norm(X, axis=1).max()) for X in Xs]
    model = KernelSHAMPO(kernel="rbf", gamma=3.0, scale=scale, random_state=0).fit(Xs, ys)
    # on the training inputs, the margins are the ones the rounds computed with the final support
    support, coefs = model.support_[0], model.dual_coef_[0]
    trained = Xs[0] / np.linalg.norm(Xs[0], axis=1).max() if scale == "max" else Xs[0]
    expected = coefs @ np.exp(-3.0 * ((support[:, None, :] - trained[None, :, :]) ** 2).sum(axis=2))
    np.testing.assert_allclose(model.decision_function(Xs[0], task=0), expected, atol=1e-12)


# ---------------------------------------------------------------------------- hyper-parameters
def test_every_learner_declares_every_hyper_parameter():
    for name, make in LEARNERS.items():
        model = make()
        assert set(model.get_params()) == set(model._parameter_constraints), name


_BAD_VALUES = {
    "b": [np.nan, -1.0, 1e300, "1"], "peer_b": [np.nan, 0.0, np.inf], "C": [np.nan, np.inf, 1e300, -1.0],
    "lam": [np.nan, -0.5], "gamma": [np.nan, 0.0, np.inf, 1e300], "degree": [0, 2.5, np.nan],
    "coef0": [np.nan, np.inf], "eta": [np.nan, 0.0, np.inf, 1e300], "budget": [np.inf, np.nan, -1, 2.5, 10 ** 30],
    "query_probability": [np.nan, 1.5, -0.1], "n_queries": [0, 1.5, 10 ** 30], "prior_rounds": [0, np.inf],
    "block_size": [0, 10 ** 30, 4.0], "random_state": [-1, "seed", 1.5], "scale": ["l2"], "strategy": ["greedy"],
    "prior": [[np.nan, 1.0, 1.0], [1e-300, 1.0, 1.0], "best"], "share": ["yes"], "share_on": ["always"], "variant": ["code", None],
    "confidence": ["max"], "zero_feedback": ["skip"], "aggressive": ["yes", None], "dtype": ["float16"],
    "kernel": ["laplacian", 3],
}


def _fit_data(name):
    if name in MULTICLASS:
        return multiclass_problem(n=60, C=3, seed=5)
    return _binary_problem(name)


@pytest.mark.parametrize("name, param, value", [(name, param, value) for name, make in LEARNERS.items()
                                                 for param in make().get_params() for value in _BAD_VALUES[param]])
def test_a_bad_hyper_parameter_is_an_error_naming_it(name, param, value):
    model = LEARNERS[name]().set_params(**{param: value})
    with pytest.raises(InvalidParameterError, match=rf"{name}: {param}\b"):
        model.fit(*_fit_data(name))


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_hyper_parameters_are_checked_on_the_first_round_too(name):
    bad = {"SHAMPO": {"b": np.nan}, "KernelSHAMPO": {"coef0": np.nan}, "Banditron": {"gamma": 0.0},
           "OneVsRestBandit": {"lam": np.nan}, "OneVsOneBandit": {"eta": np.inf}, "RandomQuery": {"budget": np.inf},
           "IndependentQuery": {"b": np.inf}}.get(name, {"C": 1e300})
    model = type(LEARNERS[name]())(**bad)
    X, y = _fit_data(name)
    if name in EVERY_TASK:
        args, kw = ([A[0] for A in X],), {"oracle": LabelOracle(y)}
    elif name in ONE_TASK:
        args, kw = (X[0][0],), {"task": 0, "oracle": LabelOracle(y)}
    else:
        args, kw = (X[0],), {"oracle": (PairFeedbackOracle if name == "OneVsOneBandit" else one_vs_rest_oracle)(y)}
    with pytest.raises(InvalidParameterError, match=rf"{name}: {next(iter(bad))}\b"):
        model.learn_one(*args, **kw)
    assert not model.__sklearn_is_fitted__()


def test_the_largest_committee_step_keeps_finite_weights():
    Xs, ys = related_tasks(n_tasks=3, n=40, d=4, seed=3)
    for make in (AMLC, PEER, PEERShare):
        model = make(C=700.0, random_state=0).fit(Xs, ys)
        assert np.all(np.isfinite(model.committee_weights_))
        np.testing.assert_allclose(model.committee_weights_.sum(axis=1), 1.0)


# ------------------------------------------------------------------------------------------ labels
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("relabel", [lambda y: (y > 0).astype(int), lambda y: np.where(y > 0, "spam", "ham"),
                                     lambda y: y.astype(float), lambda y: np.where(y > 0, 7, 3)],
                         ids=["0/1", "strings", "floats", "3/7"])
def test_binary_learners_take_any_two_labels(name, relabel):
    Xs, ys = _binary_problem(name)
    words = [relabel(y) for y in ys]
    reference = BINARY[name](random_state=0).fit(Xs, ys)
    model = BINARY[name](random_state=0).fit(Xs, words)
    assert [c.tolist() for c in model.classes_] == [sorted(set(w.tolist())) for w in words]
    for j in range(3):
        np.testing.assert_array_equal(model.decision_function(Xs[j], task=j), reference.decision_function(Xs[j], task=j))
        predicted = model.predict(Xs[j], task=j)
        assert np.array_equal(predicted, np.where(reference.predict(Xs[j], task=j) > 0, model.classes_[j][1],
                                                  model.classes_[j][0]))
    assert model.score(Xs, words) == reference.score(Xs, ys)
    assert model.predict_one(Xs[1][0], task=1) in model.classes_[1].tolist()
    # later rounds take the same labels, and only them
    x, task, label = ([X[0] for X in Xs], None, [w[0] for w in words]) if name in EVERY_TASK else \
        (Xs[1][0], 1, words[1][0])
    of_task = {} if task is None else {"task": task}
    model.learn_one(x, label, **of_task)
    with pytest.raises(ValueError, match="not one of the classes"):
        model.learn_one(x, [-5] * 3 if task is None else -5, **of_task)
    with pytest.raises(ValueError, match="not one of the classes"):
        model.score(Xs[0], np.full(len(Xs[0]), -5), task=0)
    with pytest.raises(ValueError, match="are not the learner's"):
        model.learn_one(x, oracle=LabelOracle([np.where(y > 0, 11, 10) for y in ys]), index=0, **of_task)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_label_mistakes_are_clear_errors(name):
    Xs, ys = _binary_problem(name)
    make = BINARY[name]
    cases = [([ys[0] + 0j] + ys[1:], "complex"), ([np.append(ys[0], 1)] + ys[1:], "one label per input"),
             ([ys[0][:-1]] + ys[1:], "one label per input|holds"),
             ([np.array(["a", 1] * (len(ys[0]) // 2), dtype=object)] + ys[1:], "all numbers or all strings"),
             ([np.where(ys[0] > 0, 2, ys[0]) * np.where(np.arange(len(ys[0])) % 3, 1, 0)] + ys[1:], "two classes"),
             ([np.where(ys[0] > 0, np.nan, -1.0)] + ys[1:], "NaN")]
    for labels, message in cases:
        with pytest.raises(ValueError, match=message):
            make().fit(Xs, labels)
    longer = LabelOracle([np.append(ys[0], 1)] + ys[1:])  # another stream's annotator
    with pytest.raises(ValueError, match="holds 41 labels for task 0, which has 40 examples"):
        make().fit(Xs, longer)
    with pytest.raises(TypeError, match="read only once"):
        make().fit((X for X in Xs), ys)
    with pytest.raises(ValueError, match="no features"):
        make().fit([X[:, :0] for X in Xs], ys)


@pytest.mark.parametrize("name", sorted(MULTICLASS))
def test_multiclass_label_mistakes_are_clear_errors(name):
    X, labels = multiclass_problem(n=60, C=3, seed=5)
    make = MULTICLASS[name]
    cases = [(labels + 1j, "complex"), (np.where(labels == 2, np.inf, labels), "infinity"),
             (np.append(labels, 1), "61 entries"), (np.array(["a", 1, 2] * 20, dtype=object), "all numbers"),
             (["a", 1, 2] * 20, "all numbers")]
    for y, message in cases:
        with pytest.raises(ValueError, match=message):
            make().fit(X, y)
    with pytest.raises(ValueError, match="no features"):
        make().fit(X[:, :0], labels)
    longer = (PairFeedbackOracle if name == "OneVsOneBandit" else one_vs_rest_oracle)(np.append(labels, 0))
    with pytest.raises(ValueError, match="holds 61 labels for task 0, which has 60 examples"):
        make().fit(X, longer)
    model = make(random_state=0).fit(X, np.array(["x", "y", "z"])[labels])
    assert set(model.predict(X).tolist()) <= {"x", "y", "z"}
    with pytest.raises(ValueError, match="not one of the classes"):
        model.score(X, labels)
    with pytest.raises(ValueError, match="not one of the classes"):
        model.learn_one(X[0], 1)


def test_the_oracles_take_any_two_labels():
    oracle = LabelOracle([[0, 1, 1], [1, 1], ["no", "yes"]])
    assert [c.tolist() for c in oracle.classes] == [[0, 1], [0, 1], ["no", "yes"]]
    assert [oracle.query(0, 0), oracle.query(0, 1), oracle.query(2, 1)] == [-1, 1, 1]
    given = LabelOracle([["b", "b"]], classes=("b", "a"))   # the order given: "a" is the positive class
    assert given.query(0, 0) == -1
    with pytest.raises(ValueError, match="only the label 'b'"):
        LabelOracle([["b", "b"]])
    with pytest.raises(ValueError, match="not one of the classes"):
        LabelOracle([[0, 1]], classes=(-1, 1))
    # a person answering with words
    Xs, ys = multitask_problem(K=2, n=30, d=3, seed=7)
    words = [np.where(y > 0, "yes", "no") for y in ys]
    live = CallableOracle(lambda q: words[q.task][q.index], n_tasks=2, classes=("no", "yes"))
    model = SHAMPO(random_state=0)
    for t in range(30):
        model.learn_one([X[t] for X in Xs], oracle=live)
    assert [c.tolist() for c in model.classes_] == [["no", "yes"]] * 2
    fitted = SHAMPO(random_state=0).fit(Xs, words)
    assert all(np.array_equal(a, b) for a, b in zip(model.decision_function(Xs), fitted.decision_function(Xs)))
    assert model.predict_one([X[0] for X in Xs]).tolist() == [p[0] for p in fitted.predict(Xs)]
    assert {r["prediction"] for r in live.record} <= {None, "no", "yes"}
    with pytest.raises(ValueError, match=r"answer must be one of \('no', 'yes'\)"):
        SHAMPO(random_state=0).learn_one([X[0] for X in Xs], oracle=CallableOracle(lambda q: 1, n_tasks=2,
                                                                                    classes=("no", "yes")))
    with pytest.raises(ValueError, match="class indices in 0 .. 2"):
        one_vs_rest_oracle([0, 3, 1], n_classes=3)


def test_plus_minus_one_streams_keep_integer_predictions():
    Xs, ys = multitask_problem(K=2, n=30, d=3, seed=8)
    model = SHAMPO(random_state=0).fit(Xs, [y.astype(float) for y in ys])
    assert all(c.tolist() == [-1, 1] and c.dtype.kind == "i" for c in model.classes_)
    assert model.predict(Xs)[0].dtype.kind == "i"
    assert isinstance(MultiTaskLearner.predict_one(model, Xs[0][0], task=0), int)
