"""Every online learner on generated bad and odd inputs (Hypothesis).

A drawn stream (dense or sparse, duplicate CSR entries, scaled by a power of two from
subnormal numbers to near overflow, relabelled with other values, or spoiled by NaN, inf,
a short or long label array, a third label, a NaN class, mixed label types, no features or
complex numbers) must end in a clear error, or in finite predictions equal to those of the
plain stream where the input is only written differently or scaled; the caller's arrays are
never changed; the same seed gives the same answer; a fitted learner pickles and predicts
the same.
"""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from medmtl.online import (AMLC, PEER, SHAMPO, Banditron, IndependentQuery, KernelSHAMPO, OneVsOneBandit,
                           OneVsRestBandit, PEERShare, RandomQuery)
from property_strategies import is_clear

MULTITASK = {"SHAMPO": SHAMPO, "KernelSHAMPO": lambda **k: KernelSHAMPO(kernel="linear", **k), "AMLC": AMLC,
             "PEER": PEER, "PEERShare": PEERShare, "RandomQuery": RandomQuery, "IndependentQuery": IndependentQuery}
MULTICLASS = {"Banditron": Banditron, "OneVsRestBandit": OneVsRestBandit, "OneVsOneBandit": OneVsOneBandit}
# accepted, with the plain stream's answer where noted
SAME = ("none", "sparse", "duplicates", "scale", "moderate_scale", "relabelled")
# Scale-invariant by design (each row is scaled into the unit ball): a scaled stream must give
# the plain stream's predictions. AMLC, PEER and the query baselines compare margins with a
# fixed b: at moderate scales their answers only have to be finite, and where their margins
# would leave the float range ("scale": 2**-1050 to 2**1000) they must refuse the stream.
SCALE_INVARIANT = {"SHAMPO", "KernelSHAMPO", *MULTICLASS}
DENSE_ONLY = {"KernelSHAMPO"}  # refuses sparse input with a TypeError that says so
BAD_INPUTS = ("nan", "inf", "no_features", "complex")
BAD_MULTITASK = BAD_INPUTS + ("short_labels", "long_labels", "three_labels", "mixed_labels")
BAD_MULTICLASS = BAD_INPUTS + ("nan_class", "inf_class", "mixed_labels")
BAD = BAD_MULTITASK + BAD_MULTICLASS


def _duplicated(X):
    A = sp.csr_matrix(X)
    return sp.csr_matrix((np.repeat(A.data, 2) / 2, np.repeat(A.indices, 2), A.indptr * 2), shape=A.shape)


def _dyadic(A):
    """Entries k / 2**20: scaled by any power of two down to 2**-1050 they stay exact."""
    return np.round(A * 2.0 ** 20) / 2.0 ** 20


@st.composite
def streams(draw, multiclass):
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    n, d = draw(st.integers(12, 30)), draw(st.integers(2, 5))
    if multiclass:
        X = _dyadic(rng.normal(size=(n, d)))
        y = rng.integers(0, draw(st.integers(2, 4)), n).astype(float)
        y[:2] = [0, 1]
        plain = (X, y)
    else:
        Xs = [_dyadic(rng.normal(size=(n, d))) for _ in range(draw(st.integers(2, 3)))]
        plain = (Xs, [np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1) for X in Xs])
    kind = draw(st.sampled_from(SAME + (BAD_MULTICLASS if multiclass else BAD_MULTITASK)))
    scale = draw(st.sampled_from([2.0 ** -1050, 2.0 ** -1000, 2.0 ** -530, 2.0 ** 530, 2.0 ** 1000]))
    X, y = copy.deepcopy(plain)
    Xl = [X] if multiclass else X
    if kind == "sparse":
        Xl = [sp.csr_matrix(A) for A in Xl]
    elif kind == "duplicates":
        Xl = [_duplicated(A) for A in Xl]
    elif kind == "scale":
        Xl = [A * scale for A in Xl]
    elif kind == "moderate_scale":
        Xl = [A * draw(st.sampled_from([1e-100, 1e-20, 1e20, 1e100])) for A in Xl]
    elif kind in ("nan", "inf"):
        Xl[0][rng.integers(n), rng.integers(d)] = np.nan if kind == "nan" else np.inf
    elif kind == "no_features":
        Xl = [A[:, :0] for A in Xl]
    elif kind == "complex":
        Xl[0] = Xl[0] + 1j
    elif kind == "relabelled":
        y = np.array(["a", "b", "c", "d"])[y.astype(int)] if multiclass else \
            [np.where(y[0] > 0, "yes", "no")] + [(t > 0).astype(int) for t in y[1:]]
    elif kind == "short_labels":
        y = [t[:-1] for t in y]
    elif kind == "long_labels":
        y = [np.append(t, 1) for t in y]
    elif kind == "three_labels":
        y[0] = np.where(y[0] > 0, 2, -1)
        y[0][:2] = [1, 2]
    elif kind == "mixed_labels":
        if multiclass:
            y = np.array(["zero", 1, 2, 3], dtype=object)[y.astype(int)]
        else:
            y[0] = np.array(["yes" if v > 0 else -1 for v in y[0]], dtype=object)
            y[0][:2] = ["yes", -1]
    elif kind in ("nan_class", "inf_class"):
        y = y.copy()
        y[rng.integers(n)] = np.nan if kind == "nan_class" else np.inf
    return kind, (Xl[0] if multiclass else Xl, y), plain


def _fit_predict(make, X, y, multiclass):
    """The fitted model and its predictions as codes: class indices, or -1 / +1 per task."""
    model = make(random_state=0)
    model.fit(X, y)
    predicted = model.predict(X)
    if multiclass:
        return model, np.searchsorted(model.classes_, predicted).astype(float)
    return model, np.concatenate([np.where(p == c[1], 1.0, -1.0) for p, c in zip(predicted, model.classes_)])


def _same(a, b):
    if sp.issparse(a) or sp.issparse(b):
        return sp.issparse(a) and sp.issparse(b) and all(
            np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True) for k in ("data", "indices", "indptr"))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, z) for x, z in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _check(name, make, case, multiclass):
    kind, (X, y), plain = case
    refused = BAD + (("sparse", "duplicates") if name in DENSE_ONLY else ()) + \
        (("scale",) if name not in SCALE_INVARIANT else ())
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
    if kind != "moderate_scale" or name in SCALE_INVARIANT:
        _, reference = _fit_predict(make, *plain, multiclass)
        np.testing.assert_array_equal(predicted, reference, err_msg=f"{kind}: differs from the plain stream")
    _, again = _fit_predict(make, X, y, multiclass)
    np.testing.assert_array_equal(again, predicted, err_msg=f"{kind}: same seed, another answer")
    restored = pickle.loads(pickle.dumps(model))
    out = restored.predict(X)
    assert _same(out, model.predict(X)), f"{kind}: the pickled model predicts otherwise"


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
