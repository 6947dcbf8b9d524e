"""Ising structure experiments (JMLR Fig. 4 and its scaling): the cell against fits made
here, the baselines' symmetrisation, selection on validation samples only, the contract."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from medmtl.experiments.runner import RunOptions
from medmtl.experiments.structure import (ising_problem, ising_structure, ising_structure_scale,
                                          neighbourhood_selection, structure_cell)
from medmtl.experiments.svm_baselines import l1_logistic_regression
from medmtl.med import MEDGraphicalModel


def test_problems_are_reproducible_and_every_node_varies():
    A, X, V = ising_problem("random", 5, 60, rep=3, seed=1)
    A2, X2, V2 = ising_problem("random", 5, 60, rep=3, seed=1)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(V, V2)
    assert np.all(np.ptp(X, axis=0) > 0) and V.shape == (15, 5)
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
    W, _ = neighbourhood_selection(X, 1.0)
    absW = np.abs(W)
    (and_,), (or_,) = cell["grid"]["l1 AND"], cell["grid"]["l1 OR"]
    assert and_["auc"] == pytest.approx(roc_auc_score(A[iu], np.minimum(absW, absW.T)[iu]))
    assert or_["auc"] == pytest.approx(roc_auc_score(A[iu], np.maximum(absW, absW.T)[iu]))
    assert cell["n_edges"] == int(A[iu].sum())


def test_a_planted_easy_graph_is_recovered_exactly_by_every_method():
    # 5 nodes, 400 samples of a strongly coupled model: every edge outscores every non-edge
    cell = structure_cell("random", 5, 400, rep=0, Cs=[1.0], alphas=[36.0], nus=[0.1], glasso=[0.03],
                          method="newton")
    assert cell["n_edges"] > 0
    for name, (record,) in cell["grid"].items():
        assert record["auc"] == 1.0, name


def test_selection_uses_validation_scores_and_never_alpha_zero():
    cell = structure_cell("random", 5, 60, rep=0, Cs=[0.01, 0.1, 1.0], alphas=[0.0, 36.0], nus=[0.1, 1.0, 10.0],
                          glasso=[0.03, 0.3], method="newton")
    for name, records in cell["grid"].items():
        chosen = cell["selected"][name]
        candidates = [r for r in records if r["validation"] is not None]
        assert chosen["validation"] == max(r["validation"] for r in candidates)
    assert cell["selected"]["MED"]["setting"]["alpha"] > 0
    zero = [r for r in cell["grid"]["MED"] if r["setting"]["alpha"] == 0.0]
    assert all(r["auc"] == 0.5 and r["validation"] is None for r in zero)  # no switches: no edge estimate


@pytest.mark.slow
def test_fig4_quick_run_keeps_the_contract():
    result, figure = ising_structure(RunOptions(quick=True))
    curves = result.extra["curves"]
    s = result.settings
    assert set(curves) == {f"MED alpha={a:g}" for a in s["alphas"]} | {"l1 AND", "l1 OR", "GraphicalLasso"}
    assert all(len(curves[f"MED alpha={a:g}"]) == len(s["Cs"]) for a in s["alphas"])
    for summary in result.extra["summary"].values():
        assert summary["unconverged"] == 0
        # the summary is the mean over the graphs of the selected settings' AUCs
        assert len(summary["aucs"]) == s["graphs"]
        assert summary["auc"] == pytest.approx(np.mean(summary["aucs"]))
        assert summary["separable"] == pytest.approx(np.mean([a == 1.0 for a in summary["aucs"]]))
    assert len(result.extra["selection"]) == s["graphs"]
    assert figure.axes[0].get_title().endswith("quick")


@pytest.mark.slow
def test_scale_quick_run_keeps_the_contract():
    result, figure = ising_structure_scale(RunOptions(quick=True))
    rows = result.extra["table"]
    s = result.settings
    assert len(rows) == len(s["kinds"]) * len(s["sizes"]) * len(s["samples"])
    for row in rows:
        for summary in row["summary"].values():
            aucs = [a for a in summary["aucs"] if a is not None]
            assert summary["auc"] == (pytest.approx(np.mean(aucs)) if aucs else None)
            if aucs:
                # the chosen fit is one of the grid's: its time is part of the grid's total
                assert 0 < summary["grid_seconds"] and summary["seconds"] <= summary["grid_seconds"]
    assert len(figure.axes) == 3 * len(s["kinds"])
