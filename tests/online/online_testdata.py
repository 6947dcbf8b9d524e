"""Problems and checks shared by the online learners' tests."""

import numpy as np
import scipy.sparse as sp

from medmtl.online.oracle import LabelOracle


def multitask_problem(K=4, n=300, d=6, seed=0, dims=None, sparse=False, noise=0.3):
    """K linear tasks with ``n`` rows each (one per round), of dimensions ``dims`` (default d)."""
    rng = np.random.default_rng(seed)
    dims = dims or [d] * K
    Xs, ys = [], []
    for dj in dims:
        X = rng.normal(size=(n, dj))
        if sparse:
            X[rng.random(X.shape) < 0.5] = 0.0
        u = rng.normal(size=dj)
        ys.append(np.where(X @ u + noise * rng.normal(size=n) > 0, 1, -1))
        Xs.append(sp.csr_matrix(X) if sparse else X)
    return Xs, ys


def related_tasks(n_tasks=4, n=40, d=6, seed=0, sparse=False, noise=0.3):
    """Linearly separable-ish tasks sharing most of one direction, rows of norm <= 1."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=d)
    Xs, ys = [], []
    for _ in range(n_tasks):
        w = common + noise * rng.normal(size=d)
        X = rng.normal(size=(n, d))
        if sparse:
            X[rng.random(X.shape) < 0.5] = 0.0
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
        y = np.where(X @ w >= 0, 1, -1)
        y[rng.random(n) < 0.05] *= -1
        Xs.append(sp.csr_matrix(X) if sparse else X)
        ys.append(y)
    return Xs, ys


def multiclass_problem(n=400, C=4, d=5, seed=0, sparse=False):
    """Gaussian clusters around C random centres; labels 0 .. C-1."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(C, d))
    labels = rng.integers(0, C, n)
    X = centers[labels] + rng.normal(size=(n, d))
    if sparse:
        X[rng.random(X.shape) < 0.3] = 0.0
        X = sp.csr_matrix(X)
    return X, labels


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)


def unit_rows(X):
    X = dense(X)
    norms = np.linalg.norm(X, axis=1)
    return X / np.where(norms > 0, norms, 1)[:, None]


def sgn(z):
    return 1 if z >= 0 else -1


def naive_committee_step(w, tau_row, x, y, k, margins, losses, C, reference, similar):
    """A bought label's committee update and data sharing, as AMLC's Algorithm 1 writes them.

    ``tau_row <- tau_row exp(-C l / sum(l))``, renormalised (unchanged when every loss is
    zero); then every task ``m != k`` whose weight is at least ``similar`` (a callable of
    the updated row) and whose sign differs from ``reference`` gets ``w_m += y x``.
    Returns the new row.
    """
    lam = sum(losses)
    if lam > 0:
        new = np.array([tau_row[m] * np.exp(-C * losses[m] / lam) for m in range(len(losses))])
        tau_row = new / new.sum()
    if reference is not None:
        for m in range(len(losses)):
            if m != k and sgn(margins[m]) != reference and tau_row[m] >= similar(tau_row):
                w[m] = w[m] + y * x
    return tau_row


def example_order(Xs, rng):
    """The rounds ``(task, index)`` of an interleaved stream: ``rng.permutation`` of all examples."""
    sizes = [X.shape[0] for X in Xs]
    owners = [(k, i) for k, n in enumerate(sizes) for i in range(n)]
    return [owners[g] for g in rng.permutation(len(owners))]


class SpyOracle(LabelOracle):
    """A LabelOracle whose label store can be read only by ``query`` and ``port``.

    ``port`` hands the store to the compiled twin of ``query`` (``oracle_query``), which
    counts every read; that it reads nothing else is proved by
    :func:`assert_unqueried_labels_do_not_matter`.
    """

    def __init__(self, ys, budget=None):
        self._open = True
        super().__init__(ys, budget)
        self._open = False

    def __getattribute__(self, name):
        if name == "_labels" and not object.__getattribute__(self, "_open"):
            raise AssertionError("a learner read the labels without paying for them")
        return object.__getattribute__(self, name)

    def query(self, task, index):
        self._open = True
        try:
            return super().query(task, index)
        finally:
            self._open = False

    def port(self):
        self._open = True
        try:
            return super().port()
        finally:
            self._open = False


def check_against(model, ref, oracle):
    """An active learner's run equals a naive reference's, round by round."""
    assert np.array_equal(model.stream_order_, np.array(ref["rounds"]))
    assert np.array_equal(model.stream_predictions_, ref["preds"])
    assert np.array_equal(model.stream_queried_, ref["asked"])
    np.testing.assert_allclose(model.weights_, ref["w"], atol=1e-12)
    assert model.n_queries_ == oracle.n_queries == ref["asked"].sum()
    # The oracle was asked exactly for the rounds the learner says it paid for.
    for (k, i), q in zip(ref["rounds"], ref["asked"]):
        assert oracle.was_queried(k, i) == q


def assert_unqueried_labels_do_not_matter(make, Xs, ys):
    """The compiled loop gets the oracle's store through its port; prove it reads only what
    it pays for: flip every label it did not buy and the run must not change at all."""
    oracle = SpyOracle(ys)
    first = make().fit(Xs, oracle)
    unasked = [np.array([not oracle.was_queried(k, i) for i in range(len(y))]) for k, y in enumerate(ys)]
    assert 0 < sum(int(u.sum()) for u in unasked) < sum(len(y) for y in ys)
    flipped = [np.where(u, -y, y) for u, y in zip(unasked, ys)]
    other_oracle = SpyOracle(flipped)
    second = make().fit(Xs, other_oracle)
    assert np.array_equal(second.stream_queried_, first.stream_queried_)
    assert np.array_equal(second.stream_predictions_, first.stream_predictions_)
    assert np.array_equal(second.weights_, first.weights_)
    if hasattr(first, "committee_weights_"):
        assert np.array_equal(second.committee_weights_, first.committee_weights_)
    assert np.array_equal(other_oracle.queries_per_task, oracle.queries_per_task)
    assert first.n_queries_ == oracle.n_queries == int(first.stream_queried_.sum())
