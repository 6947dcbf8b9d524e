"""Ising structure experiments (JMLR Fig. 4 and its scaling): the cell against fits made
here, a planted graph recovered exactly, selection on validation samples only, the paired
tests and grid-edge counts recomputed from the per-graph values, solver-independent AUCs, and
the committed results recomputed from their own cells."""

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import sem, ttest_rel
from sklearn.metrics import roc_auc_score

from medmtl.experiments import structure_rows as sr
from medmtl.experiments.result import load_result
from medmtl.experiments.runner import RunOptions
from medmtl.experiments.selection import grid_edge_counts
from medmtl.experiments.structure import (
    ising_problem,
    ising_structure,
    ising_structure_scale,
    neighbourhood_selection,
    solver_check_cell,
    structure_cell,
)
from medmtl.experiments.svm_baselines import l1_logistic_regression
from medmtl.med import MEDGraphicalModel

RESULTS = Path(__file__).resolve().parents[2] / "reproductions"


def test_problems_are_reproducible_and_every_node_varies():
    A, X, V = ising_problem("random", 5, 60, rep=3, seed=1)
    A2, X2, V2 = ising_problem("random", 5, 60, rep=3, seed=1)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(V, V2)
    assert np.all(np.ptp(X, axis=0) > 0) and V.shape == (15, 5)
    assert ising_problem("random", 5, 300, rep=0)[2].shape == (75, 5)   # a quarter as many for validation
    B, _, _ = ising_problem("grid", 9, 100, rep=0)
    assert int(B.sum()) // 2 == 12
    with pytest.raises(ValueError, match="square"):
        ising_problem("grid", 10, 100, rep=0)


def test_neighbourhood_selection_is_one_l1_regression_per_node():
    _, X, _ = ising_problem("random", 6, 200, rep=0)
    W, models = neighbourhood_selection(X, nu=0.3)
    for m in range(6):
        others = np.arange(6) != m
        lr = l1_logistic_regression(1 / 0.3, random_state=0).fit(X[:, others], X[:, m])
        np.testing.assert_allclose(W[m, others], lr.coef_[0])
    assert np.all(np.diag(W) == 0)


def test_the_cell_scores_what_the_estimator_gives():
    cell = structure_cell("random", 5, 60, rep=2, Cs=[0.1], alphas=[36.0], nus=[1.0], glasso=[0.1], method="newton")
    A, X, V = ising_problem("random", 5, 60, rep=2)
    iu = np.triu_indices(5, 1)
    g = MEDGraphicalModel(C=0.1, alpha=36.0, method="newton").fit(X)
    (med,) = cell["grid"]["MED"]
    assert med["auc"] == pytest.approx(roc_auc_score(A[iu], g.edge_posterior_[iu]))
    assert med["validation"] == pytest.approx(g.score(V))
    assert med["exact"] == bool(np.array_equal(g.adjacency_, A))
    W, _ = neighbourhood_selection(X, 1.0)
    absW = np.abs(W)
    (and_,), (or_,) = cell["grid"]["l1 AND"], cell["grid"]["l1 OR"]
    assert and_["auc"] == pytest.approx(roc_auc_score(A[iu], np.minimum(absW, absW.T)[iu]))
    assert or_["auc"] == pytest.approx(roc_auc_score(A[iu], np.maximum(absW, absW.T)[iu]))
    assert cell["n_edges"] == int(A[iu].sum())


def test_a_planted_graph_is_recovered_exactly():
    # 400 samples of a 5-node model: every method ranks every edge above every non-edge, and
    # MED at C = 0.1, alpha = 1 (as l1 AND at nu = 10) returns the true edge set itself
    cell = structure_cell("random", 5, 400, rep=0, Cs=[0.1], alphas=[1.0], nus=[0.3, 10.0], glasso=[0.1],
                          method="newton")
    A, X, _ = ising_problem("random", 5, 400, rep=0)
    assert 0 < cell["n_edges"] < 10
    for name, records in cell["grid"].items():
        assert all(r["auc"] == 1.0 for r in records), name
    np.testing.assert_array_equal(MEDGraphicalModel(C=0.1, alpha=1.0, method="newton").fit(X).adjacency_, A)
    assert cell["grid"]["MED"][0]["exact"]
    assert [r["exact"] for r in cell["grid"]["l1 AND"]] == [False, True]   # nu = 0.3 keeps false edges


def test_selection_uses_validation_scores_and_never_alpha_zero():
    cell = structure_cell("random", 5, 60, rep=0, Cs=[0.01, 0.1, 1.0], alphas=[0.0, 36.0], nus=[0.1, 1.0, 10.0],
                          glasso=[0.03, 0.3], method="newton")
    for name, records in cell["grid"].items():
        chosen = cell["selected"][name]
        candidates = [r for r in records if r["validation"] is not None]
        best = max(r["validation"] for r in candidates)
        assert chosen["validation"] == best
        assert chosen is next(r for r in candidates if r["validation"] == best)   # ties: the first
    assert cell["selected"]["MED"]["setting"]["alpha"] > 0
    zero = [r for r in cell["grid"]["MED"] if r["setting"]["alpha"] == 0.0]
    assert all(r["auc"] == 0.5 and r["validation"] is None for r in zero)  # no switches: no edge estimate


def test_auc_does_not_depend_on_the_solution_method():
    out = solver_check_cell("random", 5, 60, 1, Cs=[0.003, 0.1, 1.0], alphas=[1.0, 36.0, 2025.0],
                            methods=["newton", "cd", "direct"])
    for method in ("cd", "direct"):
        assert [r["setting"] for r in out[method]] == [r["setting"] for r in out["newton"]]
        assert all(r["status"] in ("converged", "optimal") for r in out[method])
        assert [r["auc"] for r in out[method]] == [r["auc"] for r in out["newton"]], method
    check = sr.solver_agreement([out], [{"n_samples": 60, "rep": 1}], "newton", "direct")
    assert (check["compared"], check["differing"], check["max_abs_difference"]) == (9, 0, 0.0)


# ----------------------------------------------------------------------------------------------
# Summaries on made-up cells whose answers are known

def _record(setting, auc, validation):
    return {"setting": setting, "auc": auc, "exact": False, "validation": validation, "seconds": 0.0,
            "status": "converged"}


def _fake_cells(n_graphs=8, seed=0):
    """MED at two settings (C = 1 clearly above every l1 setting, C = 2 clearly below) and l1 at
    two nus; GraphicalLasso with one failed fit; validation scores drawn at random."""
    rng = np.random.default_rng(seed)
    cells = []
    for g in range(n_graphs):
        base = 0.7 + 0.02 * rng.normal()
        med = [_record({"C": C, "alpha": a}, base + shift + 0.01 * rng.normal(), None if a == 0 else rng.random())
               for a in (0.0, 1.0) for C, shift in ((1.0, 0.2), (2.0, -0.2))]
        l1 = {name: [_record({"nu": nu}, base + 0.01 * rng.normal(), v) for nu, v in ((0.1, rng.random()),
                                                                                     (1.0, rng.random()))]
              for name in ("l1 AND", "l1 OR")}
        gl = [_record({"alpha": a}, base + 0.01 * rng.normal(), rng.random()) for a in (0.01, 0.1)]
        if g == 0:
            gl[1].update(auc=None, validation=None, status="failed")
        grid = {"MED": med, **l1, "GraphicalLasso": gl}
        cells.append({"grid": grid, "n_edges": 5,
                      "selected": {name: max([r for r in rs if r["validation"] is not None],
                                             key=lambda r: r["validation"]) for name, rs in grid.items()}})
    return cells


def test_summaries_and_paired_tests_recompute_from_the_per_graph_values():
    cells = _fake_cells()
    summary = sr.summaries(cells)
    for name in sr.METHODS:
        aucs = [c["selected"][name]["auc"] for c in cells]
        assert summary[name]["aucs"] == aucs
        assert summary[name]["auc"] == pytest.approx(np.mean(aucs))
        assert summary[name]["auc_se"] == pytest.approx(sem(aucs))
    assert summary["GraphicalLasso"]["unconverged"] == 1 and summary["MED"]["unconverged"] == 0
    tests = sr.paired_tests(summary)
    for name in sr.METHODS[1:]:
        a, b = summary["MED"]["aucs"], summary[name]["aucs"]
        d = np.subtract(a, b)
        t = tests[f"MED vs {name}"]
        assert t["mean_difference"] == pytest.approx(d.mean())
        assert t["standard_error"] == pytest.approx(d.std(ddof=1) / np.sqrt(d.size))
        assert t["p_value"] == pytest.approx(ttest_rel(a, b).pvalue)
        assert t["n"] == len(cells)


def test_every_setting_comparison_counts_the_significant_pairs():
    cells = _fake_cells()
    found = sr.setting_comparisons(cells)
    # 2 MED settings with alpha > 0 against 2 nus x (AND, OR)
    assert (found["n_pairs"], found["n_med_settings"], found["n_l1_settings"]) == (8, 2, 4)
    assert (found["above"], found["below"], found["above_holm"], found["below_holm"]) == (4, 4, 4, 4)
    assert found["med_above_every_l1"] == [{"C": 1.0, "alpha": 1.0}]
    for pair in found["pairs"]:
        med = [next(r["auc"] for r in c["grid"]["MED"] if r["setting"] == pair["MED"]) for c in cells]
        l1 = [next(r["auc"] for r in c["grid"][pair["l1"]["method"]] if r["setting"]["nu"] == pair["l1"]["nu"])
              for c in cells]
        assert pair["p_value"] == pytest.approx(ttest_rel(med, l1).pvalue)
        assert pair["mean_difference"] == pytest.approx(np.mean(np.subtract(med, l1)))
    assert found["min_difference"] == min(p["mean_difference"] for p in found["pairs"])


def test_settings_without_an_edge_estimate_can_be_left_out():
    cells = _fake_cells()
    for c in cells:          # nu = 100: every weight zero, AUC 1/2 on every graph
        for name in ("l1 AND", "l1 OR"):
            c["grid"][name].append(_record({"nu": 100.0}, 0.5, 0.0))
    every, informative = sr.setting_comparisons(cells), sr.setting_comparisons(cells, informative_only=True)
    assert (every["n_l1_settings"], informative["n_l1_settings"]) == (6, 4)
    left_out = [p for p in every["pairs"] if p["l1"]["nu"] == 100.0]
    assert len(left_out) == 4 and every["n_pairs"] == informative["n_pairs"] + 4
    assert every["above"] - informative["above"] == sum(p["p_value"] < 0.05 and p["mean_difference"] > 0
                                                        for p in left_out) >= 2   # MED at C = 1 is above 1/2
    assert informative["pairs"] == [p for p in every["pairs"] if p["l1"]["nu"] != 100.0]


def test_holm_rejects_like_its_definition():
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = rng.random(rng.integers(1, 12)) ** 3
        order = np.argsort(p)
        m = p.size
        # reject the k smallest where k is the first failure of p_(i) <= level / (m - i)
        k = next((i for i, j in enumerate(order) if p[j] > 0.05 / (m - i)), m)
        expected = np.zeros(m, bool)
        expected[order[:k]] = True
        assert sr.holm_rejects(p.tolist()) == expected.tolist()
    assert sr.holm_rejects([float("nan"), 0.001]) == [False, True]


def _edges_by_hand(cells, name, key, grid, keep=lambda r: True):
    chosen = [c["selected"][name]["setting"][key] for c in cells]
    strict = 0
    for c, v in zip(cells, chosen):
        best = {}
        for r in c["grid"][name]:
            if r["validation"] is not None and keep(r):
                best[r["setting"][key]] = max(best.get(r["setting"][key], -1.0), r["validation"])
        others = [s for k, s in best.items() if k != v]      # a choice without a rival is not strict
        strict += v in (min(grid), max(grid)) and bool(others) and best[v] > max(others)
    return sum(v == min(grid) for v in chosen), sum(v == max(grid) for v in chosen), strict


def test_grid_edges_recompute_from_the_selection_records():
    cells = _fake_cells(12, seed=4)
    edges = sr.grid_edges(cells, {"Cs": [1.0, 2.0], "alphas": [0.0, 1.0], "nus": [0.1, 1.0], "glasso": [0.01, 0.1]})
    expect = {"MED C": _edges_by_hand(cells, "MED", "C", [1.0, 2.0], lambda r: r["setting"]["alpha"] > 0),
              "l1 nu": _edges_by_hand(cells, "l1 AND", "nu", [0.1, 1.0]),
              "GraphicalLasso alpha": _edges_by_hand(cells, "GraphicalLasso", "alpha", [0.01, 0.1])}
    for label, (low, high, strict) in expect.items():
        assert (edges[label]["low"], edges[label]["high"]) == (low, high), label
        assert edges[label]["strict_low"] + edges[label]["strict_high"] == strict, label
        assert edges[label]["n"] == 12
    # one alpha > 0 only: it is both edges' value, so every choice sits on the low edge
    assert edges["MED alpha"]["low"] == 12 and edges["MED alpha"]["high"] == 0


# ----------------------------------------------------------------------------------------------
# Runs: the quick run's contract, the committed full runs recomputed from their own cells

def _check_fig4(result):
    s, extra = result.settings, result.extra
    grids = {"Cs": s["Cs"], "alphas": s["alphas"], "nus": s["nus"], "glasso": s["glasso_alphas"]}
    assert result.x == s["samples"]
    for T in s["samples"]:
        cells = [c for c, w in zip(extra["cells"], extra["cell_settings"]) if w["n_samples"] == T]
        assert len(cells) == s["graphs"]
        summary = extra["summary"][str(T)]
        for k, name in enumerate(sr.METHODS):
            aucs = [c["selected"][name]["auc"] for c in cells]
            assert summary[name]["aucs"] == aucs
            assert result.measured[name][s["samples"].index(T)] == pytest.approx(np.mean(aucs))
            assert result.measured_std[name][s["samples"].index(T)] == pytest.approx(sem(aucs), nan_ok=True)
        for name in sr.METHODS[1:]:
            t = extra["paired_tests"][str(T)][f"MED vs {name}"]
            d = np.subtract(summary["MED"]["aucs"], summary[name]["aucs"])
            assert t["mean_difference"] == pytest.approx(d.mean())
        every = {k: v for k, v in sr.setting_comparisons(cells).items() if k != "pairs"}
        assert every == {k: v for k, v in extra["every_setting"][str(T)].items() if k != "pairs"}
    assert extra["grid_edges"] == json.loads(json.dumps(sr.grid_edges(extra["cells"], grids)))
    chosen_C = [sel["MED"][0]["C"] for sel in extra["selection"]]
    assert extra["grid_edges"]["MED C"] == grid_edge_counts(
        chosen_C, s["Cs"], profiles=[{C: max(r["validation"] for r in c["grid"]["MED"]
                                             if r["setting"]["C"] == C and r["setting"]["alpha"] > 0) for C in s["Cs"]}
                                     for c in extra["cells"]])


@pytest.mark.slow
def test_fig4_quick_run_keeps_the_contract():
    result, figure = ising_structure(RunOptions(quick=True, use_cache=False))
    s = result.settings
    assert len(s["Cs"]) >= 2 and len([a for a in s["alphas"] if a > 0]) >= 2
    assert len(s["nus"]) >= 2 and len(s["glasso_alphas"]) >= 2
    _check_fig4(load_result(result.save(tempfile.mkdtemp())[0]))      # as the JSON holds it
    assert result.extra["solver_check"]["differing"] == 0
    assert len(result.extra["selection"]) == s["graphs"] * len(s["samples"])
    assert figure.axes[0].get_title().endswith("quick")


def test_committed_fig4_recomputes_from_its_cells():
    result = load_result(RESULTS / "ising-structure.json")
    assert not result.settings["quick"] and result.settings["samples"] == [60, 300, 1000]
    _check_fig4(result)
    rows = sr._ising_structure_rows(result)
    assert len(rows) == 5 * len(result.settings["samples"]) + 1


def test_committed_scale_run_recomputes_from_its_cells():
    result = load_result(RESULTS / "ising-structure-scale.json")
    s, extra = result.settings, result.extra
    assert not s["quick"]
    where = [(k, N, T, r) for k in s["kinds"] for N in s["sizes"] for T in s["samples"] for r in range(s["repetitions"])]
    assert len(extra["cells"]) == len(where)
    for row in extra["table"]:
        cells = [c for c, w in zip(extra["cells"], where) if w[:3] == (row["kind"], row["n_nodes"], row["n_samples"])]
        for name, summary in sr.summaries(cells).items():
            assert row["summary"][name]["aucs"] == summary["aucs"]
            assert row["summary"][name]["auc"] == pytest.approx(summary["auc"])
    grids = {"Cs": s["Cs"], "alphas": s["alphas"], "nus": s["nus"], "glasso": s["glasso_alphas"]}
    assert extra["grid_edges"] == json.loads(json.dumps(sr.grid_edges(extra["cells"], grids)))
    rows = sr._ising_scale_rows(result)
    pooled = [a for r in extra["table"] for a in r["summary"]["MED"]["aucs"]]
    assert rows[-1].experiment.startswith(f"`ising-structure-scale`: all {len(pooled)} graphs")


@pytest.mark.slow
def test_scale_quick_run_keeps_the_contract():
    result, figure = ising_structure_scale(RunOptions(quick=True, use_cache=False))
    rows = result.extra["table"]
    s = result.settings
    assert len(rows) == len(s["kinds"]) * len(s["sizes"]) * len(s["samples"])
    for row in rows:
        cells = [c for c, w in zip(result.extra["cells"], result.extra["cell_settings"])
                 if (w["kind"], w["n_nodes"], w["n_samples"]) == (row["kind"], row["n_nodes"], row["n_samples"])]
        for name, summary in row["summary"].items():
            assert summary["aucs"] == [c["selected"][name]["auc"] for c in cells]
    assert set(result.extra["grid_edges"]) == {"MED C", "MED alpha", "l1 nu", "GraphicalLasso alpha"}
    assert len(figure.axes) == 3 * len(s["kinds"])
