"""Factor layouts and Gram storage (medmtl.med.solvers.gram_storage), kept in the dual's
workspace and built once for every copy of the dual along a path."""

import numpy as np
import scipy.sparse as sp

from medmtl.kernels import RBFKernel
from medmtl.med.builders import adaptive_pooling_dual, feature_selection_dual, svm_dual
from medmtl.med.solvers import solve
from medmtl.med.factor_rows import FactorRows
from medmtl.med.solvers.gram_storage import GroupGrams
from med_testdata import make_tasks


def test_block_gram_grouping_needs_tasks_apart():
    Xs, ys = make_tasks(M=2, T=6, D=2, seed=6)
    assert GroupGrams.from_operators(svm_dual(Xs, ys, RBFKernel(1.0))).ok
    # one task, or a model shared across tasks: no block grouping
    assert not GroupGrams.from_operators(svm_dual(Xs[:1], ys[:1], RBFKernel(1.0))).ok
    assert not GroupGrams.from_operators(adaptive_pooling_dual(Xs, ys, RBFKernel(1.0))).ok


def test_group_grams_are_the_task_blocks_of_each_term():
    Xs, ys = make_tasks(M=2, T=7, D=3, seed=2)
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=1.0)
    grams = GroupGrams.of(dual)
    assert grams.ok
    for g, terms, blocks in zip(grams.group_rows, grams.terms, grams.grams):
        for t, B in zip(terms, blocks):
            F = dual.Phi[:, dual.term_ptr[t]:dual.term_ptr[t + 1]]
            F = F.toarray() if sp.issparse(F) else F
            np.testing.assert_allclose(B, F[g] @ F[g].T, atol=1e-14)
    lam = dual.project(np.full(dual.n, 0.5))
    qs, q = grams.dots(lam, grams.times(lam), dual.n_terms)
    np.testing.assert_allclose(0.5 * q, dual.term_quads(lam), rtol=1e-12)


def test_products_with_a_sparse_vector_read_the_rows_of_its_nonzeros():
    # a Newton step moves a few multipliers: their rows of the symmetric blocks give the
    # products that the whole blocks give (kernel blocks and few-column factors alike)
    from medmtl.kernels import per_feature_kernels
    from medmtl.med.builders import kernel_selection_dual

    Xs, ys = make_tasks(M=3, T=20, D=3, seed=4)
    dual = kernel_selection_dual(Xs, ys, per_feature_kernels(3) + [RBFKernel(0.5), RBFKernel(2.0)],
                                 C=1.0, alpha=2.0)
    grams = GroupGrams.from_operators(dual)
    assert grams.ok
    rng = np.random.default_rng(0)
    for share in (0.0, 0.1, 0.4, 1.0):
        x = np.where(rng.random(dual.n) < share, rng.normal(size=dual.n), 0.0)
        for g, blocks, P in zip(grams.group_rows, grams.grams, grams.times(x)):
            np.testing.assert_allclose(P[:blocks.shape[0]], blocks @ x[g], rtol=1e-12, atol=1e-12)


def test_layouts_are_built_once_for_a_path():
    Xs, ys = make_tasks(M=3, T=20, D=4, seed=3)
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=1.0)
    assert dual.workspace.factor_rows is None and dual.workspace.cache == {}
    solve(dual, "newton")
    rows, grams = dual.workspace.factor_rows, dual.workspace.slot("newton")["factor_grams"]
    assert isinstance(rows, FactorRows) and isinstance(grams, GroupGrams) and grams.ok
    other = dual.replace(C=2.0, alpha=4.0)
    solve(other, "newton")
    assert other.workspace.factor_rows is rows and other.workspace.slot("newton")["factor_grams"] is grams
    assert other.factor_rows() is rows and GroupGrams.of(other) is grams


def test_dense_copies_only_where_they_pay():
    Xs, ys = make_tasks(M=1, T=30, D=4, seed=4)
    dense = feature_selection_dual(Xs, ys, C=1.0, alpha=1.0).factor_rows()
    np.testing.assert_array_equal(dense.dense, dense.F.toarray())
    assert dense.dense32.dtype == np.float32 and dense.dense32.shape == dense.F.shape
    X = sp.random(30, 200, density=0.01, random_state=0, format="csr")
    sparse = feature_selection_dual([X], ys, C=1.0, alpha=1.0).factor_rows()
    assert sparse.dense is None and sparse.dense32 is None


def _kernel_selection(M=3, T=20, seed=4):
    from medmtl.kernels import per_feature_kernels
    from medmtl.med.builders import kernel_selection_dual

    Xs, ys = make_tasks(M=M, T=T, D=3, seed=seed)
    return kernel_selection_dual(Xs, ys, per_feature_kernels(3) + [RBFKernel(0.5), RBFKernel(2.0)],
                                 C=1.0, alpha=2.0)


def test_weighted_blocks_are_scaled_on_both_sides_in_either_precision():
    dual = _kernel_selection()
    grams = GroupGrams.from_operators(dual)
    rng = np.random.default_rng(1)
    w = rng.uniform(0.0, 1.0, dual.n_terms)
    plain = [B.copy() for B in grams.blocks(w)]
    for scale in (1.0 / dual.a, rng.uniform(0.3, 3.0, dual.n) * np.sign(rng.normal(size=dual.n))):
        for single, rtol in ((False, 1e-14), (True, 1e-6)):
            got = grams.blocks(w, single=single, scale=scale)
            for g, B, P in zip(grams.group_rows, got, plain):
                np.testing.assert_allclose(B, scale[g][:, None] * P * scale[g][None, :],
                                           rtol=rtol, atol=rtol * np.abs(P).max())
    # signs that cancel (1 / a for +-1 labels) give the double-precision blocks to the bit
    flip = 1.0 / dual.a
    exact = grams.blocks(w, scale=flip)
    for g, B, P in zip(grams.group_rows, exact, plain):
        np.testing.assert_array_equal(B, flip[g][:, None] * P * flip[g][None, :])


def test_single_precision_blocks_from_one_stack_or_per_group():
    # Groups with the same terms keep their single-precision copies in one stack, summed by
    # one product; groups with different terms (a feature absent from one task) keep them
    # apart. Either way the blocks are the double-precision ones to single precision.
    rng = np.random.default_rng(3)
    Xs, ys = make_tasks(M=3, T=8, D=4, seed=4)
    Xs[1] = Xs[1].copy()
    Xs[1][:, 2] = 0.0  # feature 2 absent from task 1: that group has one term fewer
    for dual, stacked in ((_kernel_selection(), True),
                          (feature_selection_dual(Xs, ys, C=1.0, alpha=2.0), False)):
        grams = GroupGrams.from_operators(dual) if stacked else GroupGrams.of(dual)
        assert grams.ok
        assert len({t.size for t in grams.terms}) == (1 if stacked else 2)
        w = rng.uniform(0.1, 1.0, dual.n_terms)
        scale = 1.0 / dual.a
        exact = [B.copy() for B in grams.blocks(w, scale=scale)]
        single = grams.blocks(w, single=True, scale=scale)
        assert (grams._single_copies(scale)[2] is not None) == stacked
        for B, E in zip(single, exact):
            np.testing.assert_allclose(B, E, rtol=1e-6, atol=1e-6 * np.abs(E).max())


def test_gram_blocks_written_in_place_equal_fresh_ones():
    from medmtl.med.grams import FactorGram, KernelGram
    from medmtl.med.solvers.gram_storage import _low_rank_rows

    dual = _kernel_selection(M=2, T=9)
    rows = dual.groups[1]
    K = dual.term_grams()[-1]
    assert isinstance(K, KernelGram)
    buf = np.full((rows.size, rows.size), np.nan)
    assert K.gram_on(rows, out=buf) is buf
    np.testing.assert_array_equal(buf, K.gram_on(rows))
    # rows from two blocks (zero between them), and rows of no block at all
    mixed = np.concatenate([dual.groups[0][:3], rows[:4]])
    buf = np.full((7, 7), np.nan)
    K.gram_on(mixed, out=buf)
    np.testing.assert_array_equal(buf, K.gram_on(mixed))
    assert buf[0, 5] == 0.0
    F = sp.random(12, 4, density=0.4, random_state=0, format="csr")
    G = FactorGram(F)
    buf = np.empty((5, 5))
    np.testing.assert_allclose(G.gram_on(np.arange(3, 8), out=buf), (F[3:8] @ F[3:8].T).toarray())
    # a task's rows of a CSR factor read in place, explicit zeros and duplicates as toarray
    F = sp.csr_matrix((np.array([1.0, 0.0, 2.0, 3.0, 4.0]), np.array([2, 5, 2, 2, 7]),
                       np.array([0, 0, 2, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5])), shape=(17, 8))
    got = _low_rank_rows(FactorGram(F), np.arange(1, 17))
    np.testing.assert_array_equal(got, F[1:17].toarray()[:, [2, 7]])
    assert _low_rank_rows(FactorGram(F), np.arange(1, 5)) is None  # 2 columns on 4 rows: too wide
