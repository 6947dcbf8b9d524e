"""Every online learner on generated bad and odd inputs (Hypothesis).

A drawn stream (dense or sparse, duplicate CSR entries, scaled by 1e-300 to 1e300, or spoiled
by NaN, inf, a short or non-binary label array, a NaN class) must end
in a clear error, or in finite predictions equal to those of the plain stream where the
input is only written differently or scaled; the caller's arrays are never changed; the same
seed gives the same answer; a fitted learner pickles and predicts the same.
"""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from medmtl.online import (AMLC, PEER, SHAMPO, Banditron, IndependentQuery, KernelSHAMPO, LabelOracle,
                           OneVsOneBandit, OneVsRestBandit, PEERShare, RandomQuery)
from property_strategies import is_clear

MULTITASK = {"SHAMPO": SHAMPO, "KernelSHAMPO": lambda **k: KernelSHAMPO(kernel="linear", **k), "AMLC": AMLC,
             "PEER": PEER, "PEERShare": PEERShare, "RandomQuery": RandomQuery, "IndependentQuery": IndependentQuery}
MULTICLASS = {"Banditron": Banditron, "OneVsRestBandit": OneVsRestBandit, "OneVsOneBandit": OneVsOneBandit}
SAME = ("none", "sparse", "duplicates", "scale")  # accepted; the plain stream's answer where noted
# Scale-invariant by design (each row is scaled into the unit ball): a scaled stream must give
# the plain stream's predictions. AMLC, PEER and the query baselines compare margins with a
# fixed b, so their answers depend on the scale and only have to be finite.
SCALE_INVARIANT = {"SHAMPO", "KernelSHAMPO", *MULTICLASS}
DENSE_ONLY = {"KernelSHAMPO"}  # refuses sparse input with a TypeError that says so
BAD_MULTITASK = ("nan", "inf", "short_labels", "label_values")
BAD_MULTICLASS = ("nan", "inf", "nan_class")
BAD = BAD_MULTITASK + BAD_MULTICLASS


def _duplicated(X):
    A = sp.csr_matrix(X)
    return sp.csr_matrix((np.repeat(A.data, 2) / 2, np.repeat(A.indices, 2), A.indptr * 2), shape=A.shape)


@st.composite
def streams(draw, multiclass):
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    n, d = draw(st.integers(12, 30)), draw(st.integers(2, 5))
    if multiclass:
        X = rng.normal(size=(n, d))
        y = rng.integers(0, draw(st.integers(2, 4)), n).astype(float)
        y[:2] = [0, 1]
        plain = (X, y)
    else:
        Xs = [rng.normal(size=(n, d)) for _ in range(draw(st.integers(2, 3)))]
        plain = (Xs, [np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1) for X in Xs])
    kind = draw(st.sampled_from(SAME + (BAD_MULTICLASS if multiclass else BAD_MULTITASK)))
    scale = draw(st.sampled_from([1e-300, 1e-160, 1e160, 1e300]))
    X, y = copy.deepcopy(plain)
    Xl = [X] if multiclass else X
    if kind == "sparse":
        Xl = [sp.csr_matrix(A) for A in Xl]
    elif kind == "duplicates":
        Xl = [_duplicated(A) for A in Xl]
    elif kind == "scale":
        Xl = [A * scale for A in Xl]
    elif kind in ("nan", "inf"):
        Xl[0][rng.integers(n), rng.integers(d)] = np.nan if kind == "nan" else np.inf
    elif kind == "short_labels":
        y = [t[:-1] for t in y]
    elif kind == "label_values":
        y[0] = np.where(y[0] > 0, 2, -1)
    elif kind == "nan_class":
        y = y.copy()
        y[rng.integers(n)] = np.nan
    return kind, (Xl[0] if multiclass else Xl, y), plain


def _fit_predict(make, X, y, multiclass):
    model = make(random_state=0)
    model.fit(X, y if multiclass else LabelOracle(y))
    predicted = model.predict(X)
    return model, np.asarray(predicted if multiclass else np.concatenate(predicted), dtype=float)


def _same(a, b):
    if sp.issparse(a) or sp.issparse(b):
        return sp.issparse(a) and sp.issparse(b) and all(
            np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True) for k in ("data", "indices", "indptr"))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, z) for x, z in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


def _check(name, make, case, multiclass):
    kind, (X, y), plain = case
    refused = BAD + (("sparse", "duplicates") if name in DENSE_ONLY else ())
    before = copy.deepcopy((X, y))
    try:
        model, predicted = _fit_predict(make, X, y, multiclass)
    except Exception as err:  # noqa: BLE001 - how the case ended is the point
        assert is_clear(err), f"{kind}: obscure {type(err).__name__}: {err}"
        assert kind in refused, f"{kind}: a valid stream was refused: {err}"
        assert _same((X, y), before), f"{kind}: the caller's arrays were changed"
        return
    assert kind not in refused, f"{kind}: accepted, expected a clear error"
    assert _same((X, y), before), f"{kind}: the caller's arrays were changed"
    assert np.all(np.isfinite(predicted))
    if kind != "scale" or name in SCALE_INVARIANT:
        _, reference = _fit_predict(make, *plain, multiclass)
        np.testing.assert_array_equal(predicted, reference, err_msg=f"{kind}: differs from the plain stream")
    _, again = _fit_predict(make, X, y, multiclass)
    np.testing.assert_array_equal(again, predicted, err_msg=f"{kind}: same seed, another answer")
    restored = pickle.loads(pickle.dumps(model))
    out = restored.predict(X)
    np.testing.assert_array_equal(np.asarray(out if multiclass else np.concatenate(out), dtype=float), predicted)


@pytest.mark.parametrize("name", sorted(MULTITASK))
def test_multitask_learners_on_generated_streams(name):
    @given(case=streams(multiclass=False))
    def check(case):
        _check(name, MULTITASK[name], case, multiclass=False)

    check()


@pytest.mark.parametrize("name", sorted(MULTICLASS))
def test_multiclass_learners_on_generated_streams(name):
    @given(case=streams(multiclass=True))
    def check(case):
        _check(name, MULTICLASS[name], case, multiclass=True)

    check()
