"""MED structure estimation of Ising graphs (medmtl.med.graphical, JMLR Section 12): the dual
against the paper's formula and CVXPY's direct solve, every method on it, the estimator's
symmetric posterior, recovery of planted graphs, and bad input."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from med_testdata import assert_kkt
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

from medmtl.datasets.ising import cycle_graph, random_graph, random_ising
from medmtl.med import MEDGraphicalModel
from medmtl.med.builders import edge_pairs, ising_structure_dual
from medmtl.med.graphical import widest_gap_cut
from medmtl.med.solvers import solve


def _samples(n_nodes=6, n_samples=80, seed=0, coupling=0.6):
    A = random_graph(n_nodes, max_degree=3, random_state=seed)
    model = random_ising(A, coupling=coupling, random_state=seed)
    return A, model.sample(n_samples, random_state=seed + 1).astype(float)


def paper_objective(X, lam, alpha):
    """JMLR Section 12's dual, written from the paper with a loop over the node pairs:
    sum lam - sum_{m<d} [log(alpha + exp(1/2 (u_md^2 + u_dm^2))) - log(alpha + 1)]."""
    T, N = X.shape
    L = lam.reshape(N, T)
    J = L.sum()
    for m in range(N):
        for d in range(m + 1, N):
            u_md = np.sum(L[m] * X[:, m] * X[:, d])
            u_dm = np.sum(L[d] * X[:, d] * X[:, m])
            J -= np.logaddexp(np.log(alpha), 0.5 * (u_md**2 + u_dm**2)) - np.log(alpha + 1.0)
    return J


def test_the_dual_is_the_papers_objective():
    _, X = _samples()
    dual = ising_structure_dual(X, C=0.5, alpha=36.0)
    rng = np.random.default_rng(0)
    for _ in range(3):
        lam = rng.uniform(0, 0.05, dual.n)
        assert dual.objective(lam) == pytest.approx(paper_objective(X, lam, 36.0), rel=1e-12)
    # one equality per node, over that node's labels x(m)
    T, N = X.shape
    for m, g in enumerate(dual.groups):
        np.testing.assert_array_equal(dual.a[g], X[:, m])
    assert dual.n_terms == N * (N - 1) // 2
    assert dual.term_names[:2] == ["x0-x1", "x0-x2"]


@pytest.mark.parametrize("C, alpha", [(0.01, 1.0), (0.1, 36.0), (1.0, 2025.0), (0.05, 0.0)])
@pytest.mark.parametrize("method", ["newton", "cd", "bound", "auto"])
def test_every_method_reaches_the_direct_solve(method, C, alpha):
    _, X = _samples(n_nodes=5, n_samples=60, seed=2)
    dual = ising_structure_dual(X, C=C, alpha=alpha)
    reference = solve(dual, "direct")
    assert reference.status == "optimal"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = solve(dual, method)
    assert sol.objective == pytest.approx(reference.objective, rel=1e-6)
    assert_kkt(dual, sol.lam, 1e-4)
    np.testing.assert_allclose(sol.switch_posterior, reference.switch_posterior, atol=1e-3)


def test_posterior_is_symmetric_and_follows_the_formula():
    A, X = _samples(n_nodes=6, n_samples=120, seed=4)
    g = MEDGraphicalModel(C=0.1, alpha=10.0).fit(X)
    P = g.edge_posterior_
    np.testing.assert_array_equal(P, P.T)
    np.testing.assert_array_equal(np.diag(P), 0.0)
    # s_hat(m, d) = 1 / (1 + alpha exp(-1/2 (u_md^2 + u_dm^2))), u from the multipliers
    T, N = X.shape
    L = g.dual_coef_
    U = (L * X.T) @ X
    for m, d in edge_pairs(N):
        q = 0.5 * (U[m, d] ** 2 + U[d, m] ** 2)
        # evidence within the fit's resolution of 0 is the prior's
        expected = 1.0 / (1.0 + 10.0 * np.exp(-q if q > g.tie_tol_ else 0.0))
        assert P[m, d] == pytest.approx(expected, rel=1e-9)
        assert g.coef_[m, d] == pytest.approx(expected * U[m, d], rel=1e-9, abs=1e-12)
    # the default edge rule cuts the evidence at its widest gap; a number is a posterior threshold
    np.testing.assert_array_equal(g.adjacency_, g.edge_evidence_ > g.evidence_cut_)
    half = MEDGraphicalModel(C=0.1, alpha=10.0, threshold=0.5).fit(X)
    np.testing.assert_array_equal(half.adjacency_, P > 0.5)
    assert half.threshold_ == 0.5 and half.evidence_cut_ == pytest.approx(np.log(10.0))
    assert g.intercept_.shape == (N,) and g.solver_status_ == "converged"
    assert g.objective_ == pytest.approx(g.objective_path_[-1])


def test_a_planted_graph_is_recovered_from_many_samples():
    A = random_graph(8, max_degree=3, random_state=3)
    X = random_ising(A, coupling=0.6, random_state=3).sample(2000, random_state=4)
    iu = np.triu_indices(8, 1)
    for C, alpha in [(0.1, 1.0), (0.01, 100.0)]:
        P = MEDGraphicalModel(C=C, alpha=alpha).fit(X).edge_posterior_[iu]
        assert roc_auc_score(A[iu], P) == 1.0
        # the |E| most probable edges are the true ones
        top = np.argsort(-P)[: int(A[iu].sum())]
        assert set(top) == set(np.flatnonzero(A[iu]))
    # with alpha = 1, the posterior above 1/2 is the graph itself
    g = MEDGraphicalModel(C=0.1, alpha=1.0).fit(X)
    np.testing.assert_array_equal(g.adjacency_, A.astype(bool))


def test_few_samples_do_not_recover_the_graph_perfectly():
    # the test above could not pass by accident: with 15 samples the ranking has errors
    A = random_graph(8, max_degree=3, random_state=3)
    X = random_ising(A, coupling=0.6, random_state=3).sample(15, random_state=4)
    keep = np.ptp(X, axis=0) > 0
    assert keep.all()
    iu = np.triu_indices(8, 1)
    P = MEDGraphicalModel(C=0.1, alpha=10.0).fit(X).edge_posterior_[iu]
    assert roc_auc_score(A[iu], P) < 1.0


def test_codings_and_sparse_input_give_one_model():
    _, X = _samples(seed=5)
    pm = MEDGraphicalModel(C=0.1, alpha=10.0).fit(X)
    zero_one = (X + 1) / 2
    before = zero_one.copy()
    z = MEDGraphicalModel(C=0.1, alpha=10.0).fit(zero_one)
    s = MEDGraphicalModel(C=0.1, alpha=10.0).fit(sp.csr_matrix(zero_one))
    np.testing.assert_array_equal(zero_one, before)  # the caller's array is untouched
    np.testing.assert_allclose(z.edge_posterior_, pm.edge_posterior_, rtol=1e-12)
    np.testing.assert_allclose(s.edge_posterior_, pm.edge_posterior_, rtol=1e-12)
    assert z.coding_ == "01" and pm.coding_ == "pm1"
    assert set(np.unique(z.predict(zero_one))) <= {0.0, 1.0}
    assert set(np.unique(pm.predict(X))) <= {-1.0, 1.0}
    assert z.score(zero_one) == pytest.approx(pm.score(X))
    assert 0.5 < pm.score(X) <= 1.0


def test_rho_and_alpha_are_one_prior():
    _, X = _samples(seed=6)
    a = MEDGraphicalModel(C=0.1, alpha=3.0).fit(X)
    r = MEDGraphicalModel(C=0.1, rho=0.25).fit(X)
    np.testing.assert_allclose(a.edge_posterior_, r.edge_posterior_, rtol=1e-12)


def test_warm_start_along_a_path_gives_the_cold_answer():
    _, X = _samples(seed=7)
    g = MEDGraphicalModel(C=0.1, alpha=1.0, warm_start=True)
    for alpha in (1.0, 10.0, 100.0):
        g.set_params(alpha=alpha).fit(X)
        cold = MEDGraphicalModel(C=0.1, alpha=alpha).fit(X)
        assert g.objective_ == pytest.approx(cold.objective_, rel=1e-7)


@pytest.mark.parametrize("X, message", [
    (np.array([[0.0, 1.0], [2.0, 0.0], [1.0, 1.0]]), "binary"),
    (np.array([[-1.0, 0.0, 1.0], [1.0, 1.0, -1.0]]), "binary"),
    (np.array([[1.0, -1.0], [1.0, 1.0], [1.0, -1.0]]), "node\\(s\\) \\[0\\]"),
    (np.array([[1.0], [-1.0]]), "at least two nodes"),
    (np.array([[1.0, np.nan], [-1.0, 1.0]]), "NaN"),
])
def test_bad_input_is_refused_with_a_clear_error(X, message):
    with pytest.raises(ValueError, match=message):
        MEDGraphicalModel().fit(X)


def test_prediction_input_must_have_the_training_coding():
    _, X = _samples(seed=8)
    g = MEDGraphicalModel(C=0.1).fit(X)
    with pytest.raises(ValueError, match="as the training data"):
        g.predict((X + 1) / 2)
    with pytest.raises(ValueError, match="features"):
        g.predict(X[:, :3])


def test_parameters_are_checked():
    _, X = _samples(seed=9)
    with pytest.raises(ValueError, match="C"):
        MEDGraphicalModel(C=-1.0).fit(X)
    with pytest.raises(ValueError, match="alpha or rho"):
        MEDGraphicalModel(alpha=1.0, rho=0.5).fit(X)


def test_a_cycle_needs_its_two_neighbours_per_node():
    X = random_ising(cycle_graph(6), coupling=0.8, mixed=False, random_state=1).sample(1500, random_state=2)
    P = MEDGraphicalModel(C=0.1, alpha=10.0).fit(X).edge_posterior_
    neighbours = np.sort(np.argsort(-P, axis=1)[:, :2], axis=1)
    expected = np.sort(np.column_stack([(np.arange(6) - 1) % 6, (np.arange(6) + 1) % 6]), axis=1)
    np.testing.assert_array_equal(neighbours, expected)


def test_estimator_contract_on_binary_data():
    # scikit-learn's common checks feed real-valued X, which a model of binary data refuses;
    # the properties they test, on binary data:
    import pickle

    from sklearn.base import clone

    _, X = _samples(seed=10)
    g = MEDGraphicalModel(C=0.1, alpha=10.0)
    assert g.fit(X) is g and g.n_features_in_ == X.shape[1]
    again = clone(g).fit(X)
    np.testing.assert_array_equal(again.edge_posterior_, g.edge_posterior_)       # idempotent
    restored = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(restored.decision_function(X), g.decision_function(X))
    order = np.random.default_rng(0).permutation(X.shape[0])
    np.testing.assert_allclose(g.decision_function(X[order]), g.decision_function(X)[order])
    readonly = X.copy()
    readonly.flags.writeable = False
    np.testing.assert_allclose(MEDGraphicalModel(C=0.1, alpha=10.0).fit(readonly).edge_posterior_,
                               g.edge_posterior_)
    assert g.get_params()["C"] == 0.1 and g.C == 0.1                                 # params untouched
    with pytest.raises(ValueError, match="one value in every sample"):
        MEDGraphicalModel().fit(X[:1])


@pytest.mark.parametrize("alpha", [1.0, 36.0])
def test_the_graph_and_the_edge_ranking_do_not_depend_on_the_method(alpha):
    # at alpha = 1 the prior is exactly 1/2 and many edges have no evidence: their
    # posteriors are the prior plus each method's round-off, which must not decide anything
    graph = random_graph(8, max_degree=3, random_state=0)
    X = random_ising(graph, coupling=0.6, random_state=0).sample(1000, random_state=1)
    fits = {m: MEDGraphicalModel(C=0.1, alpha=alpha, method=m).fit(X)
            for m in ("newton", "cd", "ssnal", "bound", "direct")}
    first = fits["newton"]
    prior = 1.0 / (1.0 + alpha)
    iu = np.triu_indices(8, 1)
    for m, g in fits.items():
        np.testing.assert_array_equal(g.adjacency_, first.adjacency_, err_msg=m)
        # edges without evidence sit exactly at the prior: ties, never edges
        none = g.edge_evidence_[iu] == 0
        assert np.all(g.edge_posterior_[iu][none] == prior) and not g.adjacency_[iu][none].any()
        np.testing.assert_array_equal(none, first.edge_evidence_[iu] == 0, err_msg=m)
        # one ranking of the edges, hence one AUC
        truth = graph[iu] > 0
        assert roc_auc_score(truth, g.edge_posterior_[iu]) == roc_auc_score(truth, first.edge_posterior_[iu])


def test_the_threshold_and_the_tie_tolerance_follow_the_parameters():
    graph = random_graph(8, max_degree=3, random_state=0)
    X = random_ising(graph, coupling=0.6, random_state=0).sample(1000, random_state=1)
    g = MEDGraphicalModel(C=0.1, alpha=1.0).fit(X)
    # ten times the KKT tolerance, relative to the largest evidence
    assert g.tie_tol_ == pytest.approx(1e-5 * g.edge_evidence_.max())
    strict = MEDGraphicalModel(C=0.1, alpha=1.0, threshold=0.9).fit(X)
    iu = np.triu_indices(8, 1)
    np.testing.assert_array_equal(strict.adjacency_[iu], g.adjacency_[iu] & (g.edge_posterior_[iu] > 0.9))
    tight = MEDGraphicalModel(C=0.1, alpha=1.0, solver_options={"kkt_tol": 1e-9}).fit(X)
    assert tight.tie_tol_ == pytest.approx(1e-8 * tight.edge_evidence_.max())
    with pytest.raises(ValueError, match="threshold"):
        MEDGraphicalModel(threshold=1.0).fit(X)


@pytest.mark.parametrize("method", ["cd", "ssnal", pytest.param("direct", marks=pytest.mark.slow)])
def test_the_readme_rule_recovers_the_readme_graph(method):
    # README.md's example: C shrinks as 1 / sqrt(n log p), and the default edge rule (the
    # widest gap in sqrt(q)) needs no margin. newton and bound give the same graph too, but
    # take minutes on these 24,000 multipliers
    graph = random_graph(8, max_degree=3, random_state=0)
    X = random_ising(graph, coupling=0.6, random_state=0).sample(3000, random_state=1)
    C = 1.0 / np.sqrt(len(X) * np.log(X.shape[1]))
    g = MEDGraphicalModel(C=C, alpha=1.0, method=method).fit(X)
    np.testing.assert_array_equal(g.adjacency_, graph)
    # the README's numbers: chance evidence at most 0.016, the weakest true edge 0.24, and
    # the cut between them, not by a hair
    iu = np.triu_indices(8, 1)
    q, truth = g.edge_evidence_[iu], graph[iu]
    assert round(q[~truth].max(), 3) == 0.016 and round(q[truth].min(), 2) == 0.24
    assert 3 * q[~truth].max() < g.evidence_cut_ < q[truth].min() / 2
    assert round(g.evidence_cut_, 3) == 0.094
    # the posterior threshold 1/2 (the default before) keeps the two chance edges too
    half = MEDGraphicalModel(C=C, alpha=1.0, threshold=0.5, method=method).fit(X)
    assert half.adjacency_[iu].sum() == int((q > 0).sum()) == truth.sum() + 2


def test_the_readmes_counts_are_the_committed_benchmarks():
    # README.md quotes benchmarks/results/ising_edge_rule.json's held-out sets
    root = Path(__file__).resolve().parents[2]
    sets = json.loads((root / "benchmarks" / "results" / "ising_edge_rule.json").read_text())["sets"]
    held_out = [r for label, records in sets.items() if label.startswith("held out") for r in records]
    counts = {rule: sum(r[rule] for r in held_out) for rule in ("auto", "0.5", "q>0.04", "separable")}
    N = len(held_out)
    readme = " ".join((root / "README.md").read_text().split())

    def share(k):
        p = k / N
        return f"{p:.2f} ± {np.sqrt(p * (1 - p) / N):.2f}"

    assert (f"on {N} random graphs" in readme
            and f"gives the graph exactly for {counts['auto']} ({share(counts['auto'])})" in readme
            and f"the posterior threshold 1/2 for {counts['0.5']} ({share(counts['0.5'])})" in readme
            and f"the margin q > 0.04 for {counts['q>0.04']} ({share(counts['q>0.04'])})" in readme
            and f"for {N - counts['separable']} no cut of the evidence can" in readme)


def test_the_widest_gap_cut():
    # chance evidence near 0, the graph's edges well above it: the cut parts them
    q = np.array([0.0, 0.0, 1e-4, 0.003, 0.016, 0.24, 0.57, 1.1, 1.5])
    cut = widest_gap_cut(q)
    assert 0.016 < cut < 0.24
    # the prior's 0 is one of the values: evidence for some edges and none for the rest
    assert widest_gap_cut(np.array([0.0, 0.0, 0.5])) == pytest.approx(0.125)
    assert widest_gap_cut(np.array([0.5, 0.5])) == pytest.approx(0.125)
    # no evidence at all: no edge
    assert widest_gap_cut(np.zeros(4)) == np.inf
    # two gaps of one width (to within tol): the lower one, so round-off does not choose
    q = np.array([0.0, 1.0, 4.0 + 1e-9])
    assert widest_gap_cut(q, tol=1e-6) == pytest.approx(0.25)
    # the cut only depends on the evidence values, not their order
    rng = np.random.default_rng(0)
    q = rng.exponential(0.05, 30)
    assert widest_gap_cut(q) == widest_gap_cut(rng.permutation(q))


def test_the_threshold_parameter_takes_auto_or_a_posterior():
    graph = random_graph(6, max_degree=2, random_state=1)
    X = random_ising(graph, coupling=0.8, random_state=1).sample(500, random_state=2)
    auto = MEDGraphicalModel(C=0.05, alpha=1.0).fit(X)
    assert auto.get_params()["threshold"] == "auto"
    iu = np.triu_indices(6, 1)
    q = auto.edge_evidence_[iu]
    np.testing.assert_array_equal(auto.adjacency_[iu], (q > 0) & (q > auto.evidence_cut_))
    assert auto.threshold_ == pytest.approx(1.0 / (1.0 + np.exp(-auto.evidence_cut_)))
    with pytest.raises(ValueError, match="threshold"):
        MEDGraphicalModel(threshold="gap").fit(X)


def test_node_predictions_that_are_ties_score_one_half_whatever_the_method():
    # on this model some validation samples have a decision value that is 0 in exact
    # arithmetic; its sign was the method's round-off, and so was the validation accuracy
    from medmtl.experiments.structure import ising_problem

    _, X, V = ising_problem("random", 5, 60, 3)
    fits = [MEDGraphicalModel(C=0.3, alpha=1.0, method=m).fit(X) for m in ("newton", "cd", "direct")]
    assert np.any(np.abs(fits[0].decision_function(V)) < 1e-6)
    scores = {g.score(V) for g in fits}
    assert len(scores) == 1
    for g in fits[1:]:
        np.testing.assert_array_equal(g.predict(V), fits[0].predict(V))
