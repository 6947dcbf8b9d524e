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


# ------------------------------------------------------------------ inputs refused or read right
NMTF = [MTS3FLC, S3FLC, SingleTaskLogisticRegression, PooledLogisticRegression]


@pytest.mark.parametrize("cls", NMTF)
def test_every_hyper_parameter_is_declared_once(cls):
    assert set(cls._parameter_constraints) == set(cls().get_params())


@pytest.mark.parametrize("cls", [MTS3FLC, S3FLC])
@pytest.mark.parametrize("params, message", [
    ({"max_iter": 10 ** 30}, r"max_iter must be >= 0 \(a finite integer\); got 10{30} \(too large for a 64-bit"),
    ({"fold_in_max_iter": 2 ** 64}, "fold_in_max_iter must be >= 0 .*too large for a 64-bit integer"),
    ({"plsa_max_iter": True}, "plsa_max_iter must be >= 0 .*got True"),
    ({"n_topics": np.nan}, "n_topics must be >= 1 .*got nan"),
    ({"tol": np.inf}, "tol must be >= 0 .*got inf"),
    ({"C": 10 ** 400}, r"C must be > 0 .*\(too large for a float\)"),
    ({"normalize_memberships": 1}, "normalize_memberships must be a bool; got 1"),
    ({"random_state": -1}, "random_state: must be None, an integer >= 0 or a numpy Generator; got -1"),
    ({"random_state": True}, "random_state: must be None, an integer >= 0 or a numpy Generator; got True"),
])
def test_hyper_parameters_numpy_cannot_take_are_named(data, cls, params, message):
    XL, yL, XU, _ = data
    with pytest.raises(ValueError, match=rf"^{cls.__name__}: {message}"):
        cls(**{"n_topics": 4, **params}).fit(XL, yL, XU)


@pytest.mark.parametrize("cls", [SingleTaskLogisticRegression, PooledLogisticRegression])
def test_the_baselines_name_a_c_numpy_cannot_take(data, cls):
    XL, yL, _, _ = data
    with pytest.raises(ValueError, match=rf"^{cls.__name__}: C must be > 0 .*too large for a float"):
        cls(C=10 ** 400).fit(XL, yL)


def test_a_fit_without_unlabelled_documents_works(data):
    XL, yL, XU, _ = data
    for model in (MTS3FLC(n_topics=4, n_shared_topics=2, random_state=0), S3FLC(n_topics=4, random_state=0)):
        quiet_fit(model, XL, yL)
        assert [t.shape for t in model.transduction_] == [(0,), (0,), (0,)]
        assert [p.shape for p in model.predict(XU)] == [(X.shape[0],) for X in XU]


def _named(Xs, columns):
    pd = pytest.importorskip("pandas")
    return [pd.DataFrame(X.toarray(), columns=columns) for X in Xs]


@pytest.mark.parametrize("cls", NMTF)
def test_dataframes_keep_scikit_learns_feature_name_contract(data, cls):
    XL, yL, XU, _ = data
    words = [f"w{j}" for j in range(XL[0].shape[1])]
    model = cls() if cls in (SingleTaskLogisticRegression, PooledLogisticRegression) else cls(n_topics=4,
                                                                                               random_state=0)
    if cls is MTS3FLC:
        model.set_params(n_shared_topics=2)
    args = (_named(XL, words), yL) + ((_named(XU, words),) if cls in (MTS3FLC, S3FLC) else ())
    quiet_fit(model, *args)
    assert model.feature_names_in_.tolist() == words
    plain = quiet_fit(clone(model), XL, yL, *((XU,) if cls in (MTS3FLC, S3FLC) else ()))
    for a, b in zip(model.predict(_named(XU, words)), plain.predict(XU)):
        np.testing.assert_array_equal(a, b)
    reordered = [X[words[::-1]] for X in _named(XU, words)]
    with pytest.raises(ValueError, match=r"Xs\[0\]: The feature names should match those that were passed during "
                                         "fit.\nFeature names must be in the same order"):
        model.predict(reordered)


def test_labelled_and_unlabelled_documents_share_one_set_of_column_names(data):
    XL, yL, XU, _ = data
    words = [f"w{j}" for j in range(XL[0].shape[1])]
    with pytest.raises(ValueError, match=r"Xs_unlabeled\[0\] has no column names but Xs_labeled\[0\] has columns"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(_named(XL, words), yL, XU)
    with pytest.raises(ValueError, match=r"Xs_labeled\[1\] has columns \['w39', .* but Xs_labeled\[0\] has"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(
            [_named(XL, words)[0], _named(XL, words[::-1])[1], _named(XL, words)[2]], yL, _named(XU, words))


def test_documents_that_are_not_real_numbers_or_have_no_words_are_refused(data):
    XL, yL, XU, _ = data
    dates = [(X.toarray() * 1e3).astype("int64").astype("datetime64[s]") for X in XL]
    with pytest.raises(ValueError, match=r"Xs_labeled\[0\] holds dates or durations"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(dates, yL, XU)
    with pytest.raises(ValueError, match=r"Xs_labeled\[0\] has no features"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit([X[:, :0] for X in XL], yL)
    with pytest.raises(ValueError, match="complex numbers"):
        S3FLC(n_topics=4).fit(XL, yL, [sp.csr_matrix(X, dtype=complex) for X in XU])


def test_generators_are_refused(data):
    XL, yL, XU, _ = data
    with pytest.raises(TypeError, match="ys is a generator, which can be read only once"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(XL, (y for y in yL), XU)
    with pytest.raises(TypeError, match="Xs_unlabeled is a generator"):
        MTS3FLC(n_topics=4, n_shared_topics=2).fit(XL, yL, (X for X in XU))
    with pytest.raises(TypeError, match="Xs is a generator"):
        PooledLogisticRegression().fit((X for X in XL), yL)
