"""MTS3FLC / S3FLC estimators: fit, fold-in, sparsity, errors, inputs untouched."""

import copy
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import nnls
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from medmtl.nmtf import MTS3FLC, S3FLC, PooledLogisticRegression, SingleTaskLogisticRegression, plsa
from medmtl.nmtf.init import row_normalized


def make_tasks(seed=0, n_tasks=3, n_docs=60, n_words=40, n_labeled=4, sparse=True):
    """Two classes whose documents use two word blocks; each task shifts the blocks."""
    rng = np.random.default_rng(seed)
    XL, yL, XU, yU = [], [], [], []
    for t in range(n_tasks):
        y = np.where(np.arange(n_docs) % 2 == 0, 1, -1)
        X = rng.random((n_docs, n_words)) * (rng.random((n_docs, n_words)) < 0.2) * 0.3
        shift = 2 * t
        X[y == 1, shift:shift + 12] += rng.random(((y == 1).sum(), 12)) * (rng.random(((y == 1).sum(), 12)) < 0.6)
        X[y == -1, 15 + shift:27 + shift] += rng.random(((y == -1).sum(), 12)) * (rng.random(((y == -1).sum(), 12)) < 0.6)
        X = sp.csr_matrix(X) if sparse else X
        XL.append(X[:n_labeled])
        yL.append(y[:n_labeled])
        XU.append(X[n_labeled:])
        yU.append(y[n_labeled:])
    return XL, yL, XU, yU


def quiet_fit(model, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args)


@pytest.mark.parametrize("k_s", [0, 2, 6])
@pytest.mark.parametrize("seed", [0, 1])
def test_fit_objective_never_increases_without_normalisation(k_s, seed):
    XL, yL, XU, _ = make_tasks(seed)
    model = quiet_fit(MTS3FLC(n_topics=6, n_shared_topics=k_s, max_iter=40, tol=0, random_state=seed,
                              normalize_memberships=False), XL, yL, XU)
    obj = model.objective_
    assert obj.shape == (41,) and model.n_iter_ == 40
    assert np.all(np.diff(obj) <= 1e-12 * obj[:-1])
    assert obj[-1] < obj[0]


def test_s3flc_objective_never_increases_without_normalisation():
    XL, yL, XU, _ = make_tasks(3)
    model = quiet_fit(S3FLC(n_topics=5, max_iter=30, tol=0, random_state=0, normalize_memberships=False),
                      XL, yL, XU)
    assert np.all(np.diff(model.objective_) <= 1e-12 * model.objective_[:-1])


@pytest.mark.parametrize("cls", [MTS3FLC, S3FLC])
def test_transduction_is_accurate_on_separable_tasks(cls):
    XL, yL, XU, yU = make_tasks(0)
    kwargs = {"n_shared_topics": 2} if cls is MTS3FLC else {}
    model = quiet_fit(cls(n_topics=6, random_state=0, **kwargs), XL, yL, XU)
    acc = np.mean([np.mean(p == y) for p, y in zip(model.transduction_, yU)])
    assert acc > 0.95
    assert all(np.allclose(G.sum(axis=0), 1) for G in model.memberships_)  # normalised memberships
    assert model.topics_[0].shape == (40, 6)
    assert model.associations(1).shape == (6, 2)


def test_fold_in_solves_the_nonnegative_least_squares_problem():
    XL, yL, XU, _ = make_tasks(1)
    model = quiet_fit(MTS3FLC(n_topics=5, n_shared_topics=2, random_state=0, fold_in_max_iter=3000),
                      XL, yL, XU)
    rng = np.random.default_rng(5)
    X_new = sp.random(6, 40, density=0.3, random_state=rng, format="csr")
    G = model.fold_in([None, X_new, None])[1]
    A = model.topics_[1] @ model.associations(1)
    Xn = row_normalized(X_new, "l1").toarray()  # tiny test matrix; densified only here
    for n in range(6):
        g_ref, _ = nnls(A, Xn[n])
        r_got = np.linalg.norm(Xn[n] - A @ G[:, n])
        r_ref = np.linalg.norm(Xn[n] - A @ g_ref)
        assert r_got <= r_ref * (1 + 1e-4) + 1e-12
    # predictions on the training documents agree with the transduction almost everywhere
    agree = np.mean([np.mean(p == t) for p, t in zip(model.predict(XU), model.transduction_)])
    assert agree > 0.9


def test_score_and_predict_shapes():
    XL, yL, XU, yU = make_tasks(2)
    model = quiet_fit(MTS3FLC(n_topics=6, n_shared_topics=3, random_state=0), XL, yL, XU)
    preds = model.predict(XU)
    assert [p.shape for p in preds] == [y.shape for y in yU]
    assert 0.9 < model.score(XU, yU) <= 1.0


@pytest.mark.parametrize("cls", [MTS3FLC, S3FLC])
def test_same_seed_same_result_and_dense_equals_sparse(cls):
    XL, yL, XU, _ = make_tasks(4)
    a = quiet_fit(cls(n_topics=5, random_state=3), XL, yL, XU)
    b = quiet_fit(clone(cls(n_topics=5, random_state=3)), XL, yL, XU)
    dense = quiet_fit(cls(n_topics=5, random_state=3), [x.toarray() for x in XL], yL, [x.toarray() for x in XU])
    np.testing.assert_array_equal(a.objective_, b.objective_)
    np.testing.assert_allclose(a.objective_, dense.objective_, rtol=1e-9)


def _forbid_densify(monkeypatch):
    def boom(self, *args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    classes = [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.lil_matrix, sp.dok_matrix]
    classes += [getattr(sp, name) for name in ("csr_array", "csc_array", "coo_array") if hasattr(sp, name)]
    for cls in classes:
        for attr in ("toarray", "todense"):
            monkeypatch.setattr(cls, attr, boom, raising=False)


@pytest.mark.parametrize("cls", [MTS3FLC, S3FLC])
def test_sparse_data_never_densified(monkeypatch, cls):
    XL, yL, XU, _ = make_tasks(0)
    _forbid_densify(monkeypatch)
    with pytest.raises(AssertionError, match="densified"):
        XL[0].toarray()  # the guard is active
    model = quiet_fit(cls(n_topics=5, random_state=0), XL, yL, XU)
    model.predict(XU)
    model.fold_in(XU)
    quiet_fit(SingleTaskLogisticRegression(), XL, yL).predict(XU)
    quiet_fit(PooledLogisticRegression(), XL, yL).predict(XU)
    plsa(XU[0], 3, 5, 0)


def test_peak_memory_far_below_a_dense_word_document_matrix():
    # 30000 words x 4000 documents: dense would be 960 MB; the factors are ~5 MB per task.
    rng = np.random.default_rng(0)
    n_words, n_docs = 30_000, 2_000
    XL, yL, XU = [], [], []
    for _ in range(2):
        X = sp.random(n_docs, n_words, density=2e-4, random_state=rng, format="csr")
        X = X + sp.csr_matrix((np.ones(n_docs), (np.arange(n_docs), np.arange(n_docs) % 50)), shape=X.shape)
        y = np.where(np.arange(n_docs) % 2 == 0, 1, -1)
        XL.append(X[:10])
        yL.append(y[:10])
        XU.append(X[10:])
    tracemalloc.start()
    quiet_fit(MTS3FLC(n_topics=10, n_shared_topics=3, max_iter=3, plsa_max_iter=3, random_state=0), XL, yL, XU)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 120e6, f"peak {peak / 1e6:.0f} MB"


def test_inputs_not_mutated():
    XL, yL, XU, _ = make_tasks(0)
    XL[1] = XL[1].toarray()  # a dense task too
    saved = copy.deepcopy((XL, yL, XU))
    model = quiet_fit(MTS3FLC(n_topics=5, n_shared_topics=2, random_state=0), XL, yL, XU)
    model.predict(XU)
    quiet_fit(S3FLC(n_topics=4, random_state=0), XL, yL, XU)
    SingleTaskLogisticRegression().fit(XL, yL).predict(XU)
    PooledLogisticRegression().fit(XL, yL).predict(XU)
    plsa(XU[0], 3, 5, 0)
    for before, after in zip(saved, (XL, yL, XU)):
        for b, a in zip(before, after):
            if sp.issparse(b):
                assert (b != a).nnz == 0
                np.testing.assert_array_equal(b.data, a.data)
            else:
                np.testing.assert_array_equal(b, a)


def test_convergence_warning_and_tolerance():
    XL, yL, XU, _ = make_tasks(0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        MTS3FLC(n_topics=4, n_shared_topics=2, max_iter=2, tol=1e-12, random_state=0).fit(XL, yL, XU)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = MTS3FLC(n_topics=4, n_shared_topics=2, max_iter=500, tol=1e-3, random_state=0).fit(XL, yL, XU)
    assert model.n_iter_ < 500


def test_plsa_likelihood_increases():
    rng = np.random.default_rng(0)
    X = sp.random(30, 25, density=0.3, random_state=rng, format="csr")
    P = row_normalized(X, "l1").toarray()
    lls = []
    for it in range(1, 12):
        W, H = plsa(X, 3, it, random_state=1)
        model = (W @ H).T
        lls.append(np.sum(P[P > 0] * np.log(model[P > 0])))
    assert np.all(np.diff(lls) >= -1e-10)
    np.testing.assert_allclose(W.sum(axis=0), 1)
    np.testing.assert_allclose(H.sum(axis=0), 1)


def test_baselines_match_scikit_learn():
    from sklearn.linear_model import LogisticRegression

    XL, yL, XU, _ = make_tasks(0, n_labeled=10)
    single = SingleTaskLogisticRegression(C=2.0).fit(XL, yL).predict(XU)
    ref = LogisticRegression(C=2.0, max_iter=1000).fit(row_normalized(XL[1], "l2"), yL[1])
    np.testing.assert_array_equal(single[1], ref.predict(row_normalized(XU[1], "l2")))
    pooled = PooledLogisticRegression(C=100.0).fit(XL, yL).predict(XU)
    ref = LogisticRegression(C=100.0, max_iter=1000).fit(row_normalized(sp.vstack(XL), "l2"), np.concatenate(yL))
    np.testing.assert_array_equal(pooled[2], ref.predict(row_normalized(XU[2], "l2")))


# ---- errors ----

@pytest.fixture
def data():
    return make_tasks(0)


def test_negative_entries_raise(data):
    XL, yL, XU, _ = data
    bad = XL[1].copy()
    bad.data[0] = -1.0
    with pytest.raises(ValueError, match=r"Xs_labeled\[1\] has negative entries"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit([XL[0], bad, XL[2]], yL, XU)
    badU = XU[2].copy()
    badU.data[3] = -0.5
    with pytest.raises(ValueError, match=r"Xs_unlabeled\[2\] has negative"):
        S3FLC(n_topics=4).fit(XL, yL, [XU[0], XU[1], badU])
    with pytest.raises(ValueError, match="negative"):
        SingleTaskLogisticRegression().fit([bad], [yL[1]])


def test_nan_raises(data):
    XL, yL, XU, _ = data
    bad = XL[0].toarray()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit([bad, XL[1], XL[2]], yL, XU)


def test_task_without_labelled_documents_raises(data):
    XL, yL, XU, _ = data
    with pytest.raises(ValueError, match="task 2 has no labelled documents"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit([XL[0], XL[1], XL[2][:0]], [yL[0], yL[1], yL[2][:0]], XU)


def test_shared_topics_above_total_raise(data):
    XL, yL, XU, _ = data
    with pytest.raises(ValueError, match=r"n_shared_topics \(7\) cannot exceed n_topics \(5\)"):
        MTS3FLC(n_topics=5, n_shared_topics=7).fit(XL, yL, XU)


@pytest.mark.parametrize("params, exc, match", [
    ({"n_topics": 0}, ValueError, "n_topics"),
    ({"n_topics": 2.5}, TypeError, "n_topics"),
    ({"n_shared_topics": -1}, ValueError, "n_shared_topics"),
    ({"max_iter": -1}, ValueError, "max_iter"),
    ({"tol": -1.0}, ValueError, "tol"),
    ({"C": 0.0}, ValueError, "C"),
    ({"normalize_memberships": "yes"}, TypeError, "normalize_memberships"),
])
def test_bad_hyperparameters_raise(data, params, exc, match):
    XL, yL, XU, _ = data
    with pytest.raises(exc, match=match):
        MTS3FLC(**{"n_topics": 4, "n_shared_topics": 2, **params}).fit(XL, yL, XU)


def test_shape_and_label_errors(data):
    XL, yL, XU, _ = data
    with pytest.raises(ValueError, match="3 tasks but ys has 2"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(XL, yL[:2], XU)
    with pytest.raises(ValueError, match="Xs_unlabeled has 2"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(XL, yL, XU[:2])
    with pytest.raises(ValueError, match="words"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(XL, yL, [XU[0], XU[1][:, :10], XU[2]])
    with pytest.raises(ValueError, match=r"ys\[0\] must be 1-D with 4 labels"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(XL, [yL[0][:3], yL[1], yL[2]], XU)
    with pytest.raises(ValueError, match="single class"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(XL, [np.ones(4), np.ones(4), np.ones(4)], XU)
    with pytest.raises(ValueError, match="task 1 has labelled documents of one class"):
        S3FLC(n_topics=4).fit(XL, [yL[0], np.ones(4), yL[2]], XU)
    with pytest.raises(TypeError, match="list"):
        MTS3FLC().fit(XL[0], yL[0], XU[0])
    with pytest.raises(ValueError, match="one class"):
        SingleTaskLogisticRegression().fit(XL, [yL[0], np.ones(4), yL[2]])


def test_predict_errors(data):
    XL, yL, XU, _ = data
    with pytest.raises(NotFittedError):
        MTS3FLC().predict(XU)
    model = quiet_fit(MTS3FLC(n_topics=4, n_shared_topics=2, random_state=0), XL, yL, XU)
    with pytest.raises(ValueError, match="list of 3"):
        model.predict(XU[:2])
    with pytest.raises(ValueError, match="words"):
        model.predict([XU[0][:, :5], None, None])
