"""Algorithm 1's block QPs (medmtl.med.solvers.qp): their two backends and the KKT test that
decides whether a loose, polished solve counts as exact."""

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.med.solvers.qp import BlockQP, CVXPYBackend, OSQPBackend, is_qp_optimal
from med_testdata import cached_duals

ALPHA = 10.0


def test_polished_loose_solves_are_checked_before_counting_as_exact():
    dual = cached_duals(alpha=ALPHA)["multi_fs"]
    qp = BlockQP(dual, [0], form="u")
    lam = np.zeros(dual.n)
    w0, w = dual.shared_u(lam), dual.switched_u(lam)
    nums = qp.numbers(lam, w0, w, dual.switch_posterior(lam), dual.curvature(lam))
    tight = OSQPBackend(qp)
    x = tight.solve(nums)
    assert tight.last_exact and tight.is_optimal(x, tight.y, nums)
    # a loose solve whose polished point passes the test is the same optimum ...
    loose = OSQPBackend(qp)
    xl = loose.solve(nums, eps=1e-3, polish=True)
    assert loose.last_exact and loose.total_iter < tight.total_iter
    np.testing.assert_allclose(xl, x, atol=1e-6)
    # ... an unpolished one does not, and a perturbed point fails the KKT test
    rough = OSQPBackend(qp)
    rough.solve(nums, eps=1e-1, polish=False)
    assert not rough.last_exact
    bad = x.copy()
    bad[0] = qp.hiB[0] if x[0] < 0.5 * qp.hiB[0] else qp.loB[0]
    assert not tight.is_optimal(bad, tight.y, nums)


def test_kkt_test_catches_a_wrong_sign():
    # min (x1^2 + x2^2)/2 - x1 - x2 on the box [0, 1/2]^2: both at the upper bound, y = 1/2.
    A = sp.identity(2, format="csc")
    l, u, q = np.zeros(2), np.full(2, 0.5), -np.ones(2)
    x, y = np.full(2, 0.5), np.full(2, 0.5)
    assert is_qp_optimal(x, q, A, l, u, x, y, 1e-9, 1e-9)
    # x2 on its lower bound with y2 = 1: residuals vanish but y2 > 0 needs the upper bound
    x2, y2 = np.array([0.5, 0.0]), np.array([0.5, 1.0])
    assert np.allclose(x2 + q + A.T @ y2, 0)
    assert not is_qp_optimal(x2, q, A, l, u, x2, y2, 1e-9, 1e-9)
    # infeasible x
    x3 = np.array([0.5, 0.7])
    assert not is_qp_optimal(x3, q, A, l, u, x3, np.array([0.5, 0.3]), 1e-9, 1e-9)


@pytest.mark.parametrize("form", ["u", "lam"])
def test_cvxpy_inner_problem_is_built_once_dpp(form):
    # DPP lets CVXPY reuse its canonicalisation when only parameter values change.
    backend = CVXPYBackend(BlockQP(cached_duals()["pooling"], [0], form=form), "CLARABEL")
    assert backend.problem.is_dcp(dpp=True)


@pytest.mark.parametrize("form", ["u", "lam"])
def test_both_backends_solve_the_same_block(form):
    dual = cached_duals(alpha=ALPHA)["pooling"]
    qp = BlockQP(dual, [1], form=form)
    lam = dual.project(np.full(dual.n, 0.3))
    nums = qp.numbers(lam, dual.shared_u(lam), dual.switched_u(lam), dual.switch_posterior(lam),
                      dual.curvature(lam))
    a = OSQPBackend(qp).solve(nums)
    b = CVXPYBackend(qp, "CLARABEL").solve(nums)
    np.testing.assert_allclose(a[: qp.nB], b[: qp.nB], atol=1e-6)
