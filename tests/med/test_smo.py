"""SMO for the Newton subproblem (medmtl.med.solvers.smo), and its free-set steps.

On low-rank subproblems (linear and feature models) the pair loop crawls on a settled set of
free coordinates; :func:`medmtl.med.solvers.smo._free_set_step` then solves the
equality-constrained QP on that face directly (pseudo-inverse Newton step, or an ascent
direction without curvature where the face's Hessian is singular), capped by the box. These
tests force that path and check the answers against independent references: CVXPY's QP
solve of the same subproblem, libsvm's dual, and the direct exponential-cone solve.
"""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

import medmtl.med.solvers.smo as smo
from medmtl.med.builders import feature_selection_dual, svm_dual
from medmtl.med.solvers import solve
from medmtl.med.solvers.smo import ColumnCache, _free_set_step, smo_solve


class _Identity:
    """``W = I`` in factor space: ``Q = D F F^T D``."""

    def __init__(self, K):
        self.weight = np.ones(K)
        self.V = None


def _problem(n=60, K=3, n_groups=2, seed=0, width=1.0):
    """A low-rank subproblem: ``Q = D X X^T D`` (rank ``K``), groups, a box, a start."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, K))
    a = rng.choice([-1.0, 1.0], size=n) * rng.uniform(0.5, 2.0, size=n)
    inv_a = 1.0 / a
    Q = (X * inv_a[:, None]) @ (X * inv_a[:, None]).T
    group_of = np.sort(rng.integers(0, n_groups, size=n)).astype(np.int64)
    blo = -width * rng.uniform(0.5, 1.5, size=n)
    bhi = width * rng.uniform(0.5, 1.5, size=n)
    lin = rng.normal(size=n)
    beta0 = np.zeros(n)
    return dict(X=X, inv_a=inv_a, Q=Q, group_of=group_of, n_groups=n_groups, blo=blo, bhi=bhi,
                lin=lin, beta0=beta0)


def _cache(p):
    X = p["X"]
    return ColumnCache(sp.csr_matrix(X), X, p["inv_a"], _Identity(X.shape[1]), 1 << 22)


def _objective(p, beta):
    d = beta - p["beta0"]
    return float(p["lin"] @ d - 0.5 * d @ p["Q"] @ d)


def _cvxpy_optimum(p, free=None, fixed=None):
    """max lin^T d - 1/2 ||X^T D d||^2 on the box, group sums of beta0 kept (optionally only
    ``free`` moving, the rest held at ``fixed``)."""
    n = p["lin"].size
    b = cp.Variable(n)
    d = b - p["beta0"]
    L = p["X"] * p["inv_a"][:, None]
    cons = [b >= p["blo"], b <= p["bhi"]]
    for g in range(p["n_groups"]):
        idx = np.flatnonzero(p["group_of"] == g)
        cons.append(cp.sum(b[idx]) == float(p["beta0"][idx].sum()))
    if free is not None:
        held = np.setdiff1d(np.arange(n), free)
        cons.append(b[held] == fixed[held])
    prob = cp.Problem(cp.Maximize(p["lin"] @ d - 0.5 * cp.sum_squares(L.T @ d)), cons)
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == "optimal"
    return prob.value, b.value


def _gap(grad, beta, blo, bhi, group_of, n_groups):
    worst = 0.0
    for g in range(n_groups):
        idx = np.flatnonzero(group_of == g)
        up = idx[beta[idx] < bhi[idx]]
        low = idx[beta[idx] > blo[idx]]
        if up.size and low.size:
            worst = max(worst, float(grad[up].max() - grad[low].min()))
    return worst


def _interior_start(p, seed=1):
    """A feasible start strictly inside the box whose group sums are those of beta0."""
    rng = np.random.default_rng(seed)
    beta = 0.3 * (p["blo"] + p["bhi"]) / 2 + 0.1 * rng.uniform(-1, 1, p["lin"].size) * \
        np.minimum(-p["blo"], p["bhi"])
    for g in range(p["n_groups"]):
        idx = np.flatnonzero(p["group_of"] == g)
        beta[idx] -= beta[idx].mean()  # beta0 = 0: every group sums to zero
    assert np.all(beta > p["blo"]) and np.all(beta < p["bhi"])
    return beta


def _check_feasible(p, beta):
    assert np.all(beta >= p["blo"]) and np.all(beta <= p["bhi"])
    for g in range(p["n_groups"]):
        idx = np.flatnonzero(p["group_of"] == g)
        assert abs(beta[idx].sum() - p["beta0"][idx].sum()) <= 1e-12


def _grad_at(p, beta):
    return p["lin"] - p["Q"] @ (beta - p["beta0"])


def test_singular_face_step_reaches_the_face_maximiser():
    # 12 free coordinates, rank 3: Q_FF is singular. The linear term is made to lie in the
    # range of Q (plus the group constraints' normals), so the face has a maximiser; with a
    # wide box the pseudo-inverse step reaches it without touching a bound.
    p = _problem(n=12, K=3, n_groups=2, seed=3, width=50.0)
    rng = np.random.default_rng(4)
    p["lin"] = p["Q"] @ rng.normal(size=12) * 0.01 + np.where(p["group_of"] == 0, 0.7, -0.2)
    beta = _interior_start(p)
    grad = _grad_at(p, beta)
    free = np.arange(12)
    assert np.linalg.matrix_rank(p["Q"]) == 3
    before = _objective(p, beta)
    start = beta.copy()
    taken = _free_set_step(_cache(p), grad, beta, p["blo"], p["bhi"], p["group_of"], free)
    assert taken == 1
    _check_feasible(p, beta)
    assert np.all(beta > p["blo"]) and np.all(beta < p["bhi"])  # no bound hit
    np.testing.assert_allclose(grad, _grad_at(p, beta), atol=1e-10)
    # the face's maximiser: the gradient is constant on each group (KKT of the equalities)
    for g in range(2):
        gg = grad[p["group_of"] == g]
        assert np.ptp(gg) <= 1e-9
    ref, _ = _cvxpy_optimum(p, free=free, fixed=start)
    after = _objective(p, beta)
    assert after > before
    assert after == pytest.approx(ref, rel=1e-7, abs=1e-8)


def test_null_space_ascent_goes_to_a_bound():
    # Rank 1 on 8 free coordinates and a linear term with a part in Q_FF's null space: the
    # face's QP is unbounded, so the step must go along that direction to the box.
    p = _problem(n=8, K=1, n_groups=1, seed=5, width=1.0)
    beta = _interior_start(p)
    grad = _grad_at(p, beta)
    free = np.arange(8)
    before = _objective(p, beta)
    taken = _free_set_step(_cache(p), grad, beta, p["blo"], p["bhi"], p["group_of"], free,
                           max_rounds=1)
    assert taken == 1
    _check_feasible(p, beta)
    at_bound = (beta == p["blo"]) | (beta == p["bhi"])
    assert at_bound.sum() >= 1
    assert _objective(p, beta) > before
    np.testing.assert_allclose(grad, _grad_at(p, beta), atol=1e-10)


@pytest.mark.parametrize("K", [2, 5])
def test_step_that_hits_a_bound_then_continues_on_the_smaller_face(K):
    # A narrow box: the face's maximiser lies outside it, so the ratio test stops at a bound;
    # the coordinate leaves the face and further rounds go on with the rest.
    p = _problem(n=20, K=K, n_groups=2, seed=6 + K, width=0.05)
    p["lin"] *= 20.0
    beta = _interior_start(p)
    grad = _grad_at(p, beta)
    free = np.arange(20)
    before = _objective(p, beta)
    start = beta.copy()
    taken = _free_set_step(_cache(p), grad, beta, p["blo"], p["bhi"], p["group_of"], free)
    assert taken >= 2
    _check_feasible(p, beta)
    assert ((beta == p["blo"]) | (beta == p["bhi"])).sum() >= 1
    after = _objective(p, beta)
    assert after > before
    np.testing.assert_allclose(grad, _grad_at(p, beta), atol=1e-10)
    # never above the box-constrained optimum from the same start
    ref, _ = _cvxpy_optimum(p, free=free, fixed=start)
    assert after <= ref + 1e-9 * max(1.0, abs(ref))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("K", [1, 3, 8])
def test_smo_with_free_set_steps_matches_cvxpy(monkeypatch, seed, K):
    # The whole subproblem by the pair loop with free-set checks every few steps, against
    # CVXPY's QP solve; the free-set path must actually be taken.
    monkeypatch.setattr(smo, "FREE_SET_PERIOD", 3)
    calls = _count_free_steps(monkeypatch)
    p = _problem(n=80, K=K, n_groups=2, seed=10 * seed + K)
    beta = p["beta0"].copy()
    grad = _grad_at(p, beta)
    cache = _cache(p)
    diagQ = np.diag(p["Q"]).copy()
    eps = 1e-10
    status, steps, gap = smo_solve(cache, diagQ, grad, beta, p["blo"], p["bhi"], p["group_of"],
                                   p["n_groups"], eps, 10**6, lambda b: _grad_at(p, b),
                                   batch=8)
    assert status == 0
    assert sum(calls) >= 1
    _check_feasible(p, beta)
    np.testing.assert_allclose(grad, _grad_at(p, beta), atol=1e-9)
    assert _gap(grad, beta, p["blo"], p["bhi"], p["group_of"], p["n_groups"]) <= eps
    ref, _ = _cvxpy_optimum(p)
    assert _objective(p, beta) == pytest.approx(ref, rel=1e-7, abs=1e-9)


def test_free_set_off_gives_the_same_answer(monkeypatch):
    monkeypatch.setattr(smo, "FREE_SET_PERIOD", 2)
    p = _problem(n=120, K=2, n_groups=3, seed=21)
    out = []
    for free_set in (True, False):
        beta = p["beta0"].copy()
        grad = _grad_at(p, beta)
        smo_solve(_cache(p), np.diag(p["Q"]).copy(), grad, beta, p["blo"], p["bhi"],
                  p["group_of"], p["n_groups"], 1e-11, 10**6, lambda b: _grad_at(p, b),
                  free_set=free_set)
        out.append(_objective(p, beta))
    assert out[0] == pytest.approx(out[1], rel=1e-9)


def _linear_data(n, D, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    w = rng.normal(size=D)
    y = np.where(X @ w + 0.8 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _count_free_steps(monkeypatch):
    calls = []
    real = smo._free_set_step

    def counted(*args, **kw):
        taken = real(*args, **kw)
        calls.append(taken)
        return taken

    monkeypatch.setattr(smo, "_free_set_step", counted)
    return calls


def test_linear_svm_with_free_set_steps_matches_libsvm(monkeypatch):
    monkeypatch.setattr(smo, "FREE_SET_PERIOD", 5)
    calls = _count_free_steps(monkeypatch)
    X, y = _linear_data(300, 3, seed=8)  # rank 3 (+ the intercept's equality)
    dual = svm_dual([X], [y], "linear", C=0.5)
    sol = solve(dual, "newton")
    assert sol.status == "converged"
    assert sum(calls) >= 1
    clf = SVC(kernel="linear", C=0.5, tol=1e-10, shrinking=False).fit(X, y)
    lam_svc = np.zeros(y.size)
    lam_svc[clf.support_] = np.abs(clf.dual_coef_[0])
    assert sol.objective == pytest.approx(dual.objective(lam_svc), rel=1e-6)
    v = dual.kkt_violation(sol.lam)
    assert v["stationarity"] <= 1e-5 * max(1.0, float(np.abs(dual.c).max()))
    assert v["equality"] <= 1e-9 and v["bounds"] == 0.0


@pytest.mark.parametrize("tasks", [1, 3])
def test_feature_selection_with_free_set_steps_matches_direct(monkeypatch, tasks):
    # the factor path (no per-task Gram blocks), so the column cache and its SMO are used
    monkeypatch.setattr(smo, "FREE_SET_PERIOD", 4)
    calls = _count_free_steps(monkeypatch)
    Xs, ys = [], []
    for t in range(tasks):
        X, y = _linear_data(70, 4, seed=30 + t)
        Xs.append(X)
        ys.append(y)
    dual = feature_selection_dual(Xs, ys, C=1.0, alpha=5.0)
    sol = solve(dual, "newton", options=dict(group_grams=False))
    assert sol.status == "converged"
    assert sum(calls) >= 1
    ref = solve(dual, method="direct")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    v = dual.kkt_violation(sol.lam)
    scale = max(1.0, float(np.abs(dual.c).max()))
    assert v["stationarity"] <= 1e-5 * scale
    assert v["equality"] <= 1e-9 * scale and v["bounds"] == 0.0


def test_the_free_set_schedule_does_not_depend_on_the_clock(monkeypatch):
    # The period of the face steps is decided by counting work, so a slow or a fast machine
    # (here: a clock that jumps at random) gives the same answer bit for bit.
    import time

    monkeypatch.setattr(smo, "FREE_SET_PERIOD", 3)
    calls = _count_free_steps(monkeypatch)
    Xs, ys = zip(*[_linear_data(70, 4, seed=30 + t) for t in range(3)])
    dual = feature_selection_dual(list(Xs), list(ys), C=1.0, alpha=5.0)
    first = solve(dual, "newton", options=dict(group_grams=False))
    assert sum(calls) >= 2
    rng = np.random.default_rng(0)
    state = [0.0]

    def jumpy():
        state[0] += float(rng.exponential(1.0))
        return state[0]

    monkeypatch.setattr(time, "perf_counter", jumpy)
    second = solve(dual, "newton", options=dict(group_grams=False))
    np.testing.assert_array_equal(first.lam, second.lam)
    assert first.info["smo_steps"] == second.info["smo_steps"]


def test_block_smo_leaves_the_callers_blocks_unless_told_to_overwrite():
    from medmtl.med.solvers.smo_blocks import smo_solve_blocks

    rng = np.random.default_rng(5)
    groups = [np.arange(0, 6), np.arange(6, 10)]
    blocks = []
    for g in groups:
        A = rng.normal(size=(g.size, 3))
        blocks.append(A @ A.T + 0.1 * np.eye(g.size))
    flat = np.concatenate([B.ravel() for B in blocks])
    Vs = rng.normal(size=(10, 2))
    tau = np.array([0.2, 0.1])
    answers = []
    for overwrite in (False, True):
        buf = flat.copy()
        grad, beta = np.random.default_rng(6).normal(size=10), np.zeros(10)
        args = (buf, groups, None, Vs, tau, grad, beta, -np.ones(10), np.ones(10), None, None, 1e-10, 10**5)
        status, steps, gap = smo_solve_blocks(*args, overwrite_blocks=overwrite)
        assert status == 0 and gap <= 1e-10
        if not overwrite:
            np.testing.assert_array_equal(buf, flat)
        else:
            assert not np.array_equal(buf, flat)  # the coupling was added in place
        answers.append(beta)
    np.testing.assert_array_equal(*answers)


def _block_problem(seed):
    """Three task blocks (RBF Gram matrices, scaled by signs) with a rank-two coupling, a box
    and a linear term large enough to push most coordinates to a bound."""
    rng = np.random.default_rng(seed)
    groups = [np.arange(0, 40), np.arange(40, 65), np.arange(65, 95)]
    n = 95
    blocks = []
    for g in groups:
        Z = rng.normal(size=(g.size, 4))
        sq = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
        s = rng.choice([-1.0, 1.0], size=g.size)
        blocks.append(np.exp(-0.3 * sq) * s[:, None] * s[None, :])
    Vs = rng.normal(size=(n, 2))
    tau = np.array([0.3, 0.05])
    Q = sp.block_diag(blocks).toarray() + (Vs * tau) @ Vs.T
    lin = 3.0 * rng.normal(size=n)
    blo, bhi = -rng.uniform(0.5, 1.0, n), rng.uniform(0.5, 1.0, n)
    return groups, blocks, Vs, tau, Q, lin, blo, bhi


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("period", [1, 5, 10**6])
def test_block_smo_with_shrinking_matches_cvxpy(monkeypatch, seed, period):
    # The per-group pair loop leaves coordinates stuck at a bound out of its scans; it must
    # still stop only where every coordinate meets eps. Its Python form is run with the
    # shrinking period patched (1: every step, 10**6: never), against CVXPY's QP solve.
    import medmtl.med.solvers.smo_blocks as smo_blocks

    monkeypatch.setattr(smo_blocks, "_SHRINK_PERIOD", period)
    monkeypatch.setattr(smo_blocks, "_smo_dense", smo_blocks._smo_dense.py_func)
    monkeypatch.setattr(smo_blocks, "_group_sweeps", smo_blocks._group_sweeps.py_func)
    groups, blocks, Vs, tau, Q, lin, blo, bhi = _block_problem(seed)
    n = lin.size
    beta, grad = np.zeros(n), lin.copy()
    eps = 1e-10
    status, steps, gap = smo_blocks.smo_solve_blocks(
        [B.copy() for B in blocks], groups, None, Vs, tau, grad, beta, blo, bhi, None, None,
        eps, 10**6)
    assert status == 0 and gap <= eps
    np.testing.assert_allclose(grad, lin - Q @ beta, atol=1e-9)
    group_of = np.repeat(np.arange(3), [g.size for g in groups])
    assert _gap(grad, beta, blo, bhi, group_of, 3) <= eps
    at_bound = np.mean((beta <= blo) | (beta >= bhi))
    assert at_bound > 0.5  # the case shrinking is for
    b = cp.Variable(n)
    L = np.linalg.cholesky(Q + 1e-12 * np.eye(n))
    cons = [b >= blo, b <= bhi] + [cp.sum(b[g]) == 0 for g in groups]
    prob = cp.Problem(cp.Maximize(lin @ b - 0.5 * cp.sum_squares(L.T @ b)), cons)
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == "optimal"
    assert float(lin @ beta - 0.5 * beta @ Q @ beta) == pytest.approx(prob.value, rel=1e-7)


@pytest.mark.parametrize("seed", [14, 19, 29])
@pytest.mark.parametrize("period", [1, 5])
def test_one_groups_pair_loop_stops_only_where_every_coordinate_meets_eps(monkeypatch, seed,
                                                                         period):
    # The per-group loop alone (no sweep to catch what it missed): after shrinking, its
    # answer must meet eps on all coordinates, shrunk ones included, and the gap it returns
    # is the gap over all of them. From a start with half the coordinates at +c and half at
    # -c, coordinates shrunk early must come back on these seeds (without the final scan
    # of all coordinates the loop stops with a true gap of 0.02 to 0.04 on one group each).
    import medmtl.med.solvers.smo_blocks as smo_blocks

    monkeypatch.setattr(smo_blocks, "_SHRINK_PERIOD", period)
    groups, blocks, _, _, _, lin, blo, bhi = _block_problem(seed)
    rng = np.random.default_rng(100 + seed)
    for g, B in zip(groups, blocks):
        m = g.size
        c = min(float(np.min(-blo[g])), float(np.min(bhi[g])))
        beta = np.where(rng.permutation(m) < m // 2, c, -c) if m % 2 == 0 else np.zeros(m)
        grad = lin[g] - B @ beta
        eps = 1e-10
        steps, gap = smo_blocks._smo_dense.py_func(B, grad, beta, blo[g], bhi[g], eps, 10**6)
        assert steps > 0
        np.testing.assert_allclose(grad, lin[g] - B @ beta, atol=1e-9)
        zero = np.zeros(m, dtype=np.int64)
        assert gap == pytest.approx(_gap(grad, beta, blo[g], bhi[g], zero, 1), abs=1e-15)
        assert gap <= eps
