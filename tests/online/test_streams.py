"""The multi-task stream (both schedules) and unit-ball scaling."""

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.online.rows import CsrRows, DenseRows, row_dot
from medmtl.online.streams import MultiTaskStream, row_norms, scale_to_unit_ball

from online_testdata import example_order, multitask_problem, related_tasks


# --------------------------------------------------------------------------- scaling
def test_scale_to_unit_ball_dense_sparse_and_no_mutation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 5)) * 7
    X[3] = 0.0
    keep = X.copy()
    for method in ("row", "max"):
        D = scale_to_unit_ball(X, method=method)
        S = scale_to_unit_ball(sp.csr_matrix(X), method=method)
        assert sp.isspmatrix_csr(S)
        np.testing.assert_allclose(S.toarray(), D)
        assert np.all(row_norms(D) <= 1 + 1e-12)
    np.testing.assert_allclose(row_norms(scale_to_unit_ball(X))[[0, 1, 2, 4]], 1.0)
    assert row_norms(scale_to_unit_ball(X))[3] == 0.0
    assert np.array_equal(X, keep)
    with pytest.raises(ValueError, match="method"):
        scale_to_unit_ball(X, method="l1")


def test_duplicate_sparse_entries_are_summed_before_the_norm():
    # row 0 stores column 1 twice (0.3 + 0.4 = 0.7) and column 0 once
    X = sp.csr_matrix((np.array([0.3, 0.4, 2.4]), np.array([1, 1, 0]), np.array([0, 3])), shape=(1, 2))
    assert row_norms(X)[0] == pytest.approx(np.hypot(0.7, 2.4))
    np.testing.assert_allclose(scale_to_unit_ball(X).toarray(), [[2.4 / 2.5, 0.7 / 2.5]])


# --------------------------------------------------------------------------- every task, every round
def test_stream_layouts_give_the_same_margins():
    rng = np.random.default_rng(2)
    Xs, _ = multitask_problem(K=3, n=40, dims=[5, 8, 3], seed=2)
    Xs_sp = [sp.csr_matrix(np.where(rng.random(X.shape) < 0.5, 0, X)) for X in Xs]
    for data in (Xs, Xs_sp, [Xs[0], Xs_sp[1], Xs[2]]):
        stream = MultiTaskStream(data)
        W = stream.new_weights()
        for w in W:
            w[:] = rng.normal(size=w.size)
        ref = np.column_stack([scale_to_unit_ball(X) @ w for X, w in zip(data, W)])
        np.testing.assert_allclose(stream.block_margins(W, 5, 31), ref[5:31], atol=1e-12)
        compact, cols = stream.compacted()
        Wc = compact.new_weights()
        for j, c in enumerate(cols):
            Wc[j][...] = W[j] if c is None else W[j][c]
        np.testing.assert_allclose(compact.block_margins(Wc, 0, 40), ref, atol=1e-12)
    same = MultiTaskStream([X[:, :3] for X in Xs])
    assert same.stacked is not None
    shared = MultiTaskStream.shared_input(Xs[0], 4)
    W = rng.normal(size=(4, 5))
    np.testing.assert_allclose(shared.block_margins(W, 0, 40), scale_to_unit_ball(Xs[0]) @ W.T)


@pytest.mark.parametrize("layout", ["stacked", "shared dense", "shared sparse", "mixed"])
def test_task_rows_address_every_task_of_every_round(layout):
    rng = np.random.default_rng(3)
    Xs, _ = multitask_problem(K=3, n=20, dims=[4, 4, 4] if layout == "stacked" else [4, 6, 2], seed=3)
    if layout == "shared dense":
        stream = MultiTaskStream.shared_input(Xs[0], 3)
    elif layout == "shared sparse":
        stream = MultiTaskStream.shared_input(sp.csr_matrix(Xs[0]), 3)
    elif layout == "mixed":
        stream = MultiTaskStream([Xs[0], sp.csr_matrix(Xs[1]), Xs[2]])
    else:
        stream = MultiTaskStream(Xs)
    L = stream.task_rows()
    assert isinstance(L.rows, DenseRows if layout in ("stacked", "shared dense") else CsrRows)
    weights = rng.normal(size=L.col_off[-1])
    W = [weights[L.col_off[j]:L.col_off[j + 1]] for j in range(3)]
    for t in (0, 7, 19):
        got = [row_dot(L.rows, t * L.row_stride + j * L.row_step, W[j]) for j in range(3)]
        np.testing.assert_allclose(got, stream.block_margins(W, t, t + 1)[0], atol=1e-12)


def test_stream_errors_and_from_tasks():
    with pytest.raises(ValueError, match="ragged"):
        MultiTaskStream([np.ones((3, 2)), np.ones((4, 2))])
    with pytest.raises(TypeError):
        MultiTaskStream(np.ones((3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        MultiTaskStream([np.array([[np.nan, 1.0]])])
    with pytest.raises(ValueError, match="unit ball"):
        MultiTaskStream([np.array([[3.0, 4.0]])], scale=None)
    Xs = [np.arange(10.0).reshape(5, 2) + 1, np.arange(6.0).reshape(2, 3) + 1]
    stream, orders = MultiTaskStream.from_tasks(Xs, random_state=0)
    assert stream.n_rounds == 5
    assert sorted(orders[0]) == list(range(5))
    assert set(orders[1][:2]) == {0, 1} and set(orders[1][2:4]) == {0, 1}   # a fresh permutation per pass
    np.testing.assert_allclose(stream.Xs[1], scale_to_unit_ball(Xs[1][orders[1]]))
    short, orders = MultiTaskStream.from_tasks(Xs, align="truncate", random_state=0)
    assert short.n_rounds == 2


def test_round_lists_what_the_learner_sees():
    stream = MultiTaskStream([np.eye(3), 2 * np.eye(3)])
    assert [(task, index) for task, index, _ in stream.round(2)] == [(0, 2), (1, 2)]
    np.testing.assert_allclose(stream.round(2)[1][2], [0.0, 0.0, 1.0])
    assert len(stream) == 3


# --------------------------------------------------------------------------- one example per round
def test_interleave_draws_the_order_and_copies_the_rows():
    Xs, _ = related_tasks(seed=0, sparse=True)
    stream = MultiTaskStream.interleave(Xs, random_state=0)
    ref = example_order(Xs, np.random.default_rng(0))
    assert [tuple(o) for o in stream.order.tolist()] == ref
    for t, (k, i) in enumerate(ref[:20]):
        np.testing.assert_array_equal(stream.rows[t].toarray(), Xs[k][i].toarray())
        assert stream.round(t)[0][:2] == (k, i)
    assert stream.n_tasks == 4 and stream.n_rounds == 160 and stream.rows.has_canonical_format


def test_interleave_errors():
    Xs, _ = related_tasks(seed=0)
    with pytest.raises(ValueError, match="same number of features"):
        MultiTaskStream.interleave([Xs[0], Xs[1][:, :4]])
    with pytest.raises(TypeError, match="mixes dense and sparse"):
        MultiTaskStream.interleave([Xs[0], sp.csr_matrix(Xs[1])])
    with pytest.raises(TypeError, match="list of per-task"):
        MultiTaskStream.interleave(Xs[0])
    with pytest.raises(ValueError, match="order"):
        MultiTaskStream.interleave(Xs, order=np.array([[0, 1, 2]]))
    with pytest.raises(ValueError, match="beyond its task"):
        MultiTaskStream.interleave(Xs, order=np.array([[0, 400]]))
    with pytest.raises(ValueError, match="tasks outside"):
        MultiTaskStream.interleave(Xs, order=np.array([[9, 0]]))
    with pytest.raises(ValueError, match="every task on every round"):
        MultiTaskStream.interleave(Xs, random_state=0).task_rows()
