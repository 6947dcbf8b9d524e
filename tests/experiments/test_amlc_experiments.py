"""The AMLC experiments in quick mode: output contract, C chosen by CV only, sanity of numbers."""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.experiments import amlc as E
from medmtl.experiments.registry import names, run
from medmtl.experiments.result import load_result
from medmtl.experiments.runner import RunOptions, run_grid


@pytest.fixture(scope="module")
def cache():
    # The test run's shared cache (tests/conftest.py): the notebook then reads these cells.
    return None


@pytest.fixture(scope="module")
def table(cache, tmp_path_factory):
    out = tmp_path_factory.mktemp("amlc-out")
    result = run("amlc-table1", out=out, quick=True, cache_dir=cache)
    return result, out


def test_registered():
    assert {"amlc-table1", "amlc-budget"} <= set(names())


def test_table1_contract_and_paper_values(table):
    result, out = table
    saved = load_result(out / "amlc-table1.json")
    assert (out / "amlc-table1.png").stat().st_size > 0
    assert saved.x == ["landmine", "spam", "sentiment"]
    assert set(saved.measured) == set(E.LEARNERS)
    for name in E.LEARNERS:
        acc, ci = np.array(saved.measured[name]), np.array(saved.measured_std[name])
        assert np.all((acc > 0.5) & (acc <= 1.0)) and np.all(ci >= 0)
        task_mean = np.array(saved.extra["accuracy_task_mean"][name]["mean"])
        assert np.all((task_mean > 0.5) & (task_mean <= 1.0))
    assert saved.paper["AMLC"] == [0.9367, 0.8706, 0.7358]
    assert saved.extra["paper_queries"]["Independent"] == [2770.3, 1188.6, 1987.5]
    assert json.loads((out / "amlc-table1.json").read_text())["settings"]["quick"] is True


def test_table1_queries_are_plausible(table):
    result, _ = table
    q = result.extra["queries"]
    n_train = {"landmine": 160 * 19, "spam": 100 * 15, "sentiment": 100 * 4}
    for name in E.LEARNERS:
        for d, m in zip(result.x, q[name]["mean"]):
            assert 0 < m <= n_train[d]
    # Random buys about half of the labels (binomial, 2 shuffles): a loose check.
    for d, m in zip(result.x, q["Random"]["mean"]):
        assert abs(m - n_train[d] / 2) < 4 * np.sqrt(n_train[d])
    # The committee reading of AMLC buys far fewer labels than Independent on Landmine.
    assert q["AMLC (sum)"]["mean"][0] < q["Independent"]["mean"][0] / 3


def test_C_is_chosen_by_cross_validation_only(table, cache):
    result, _ = table
    settings = E._settings(True, 0)
    # Re-read the same cells from the cache and redo the choice from cv_accuracy alone.
    for d in ("landmine",):
        for learner in ("AMLC", "PEER"):
            for s in range(settings["n_shuffles"]):
                cells = [{"data": d, "shuffle": s, "learner": learner, "C": C, "folds": settings["folds"],
                          "seed": 0} for C in settings["C_grid"]]
                res = run_grid(E._table_cell, cells, name="amlc-table1",
                               options=RunOptions(cache_dir=cache, progress=False))
                cv = [r["cv_accuracy"] for r in res]
                assert result.extra["selected_C"][learner][d][s] == settings["C_grid"][int(np.argmax(cv))]


def test_budget_curves(cache, tmp_path):
    result = run("amlc-budget", out=tmp_path, quick=True, cache_dir=cache)
    assert (tmp_path / "amlc-budget.png").exists()
    assert result.extra["budgets"] == {"landmine": [101, 203, 304], "spam": [150, 300, 450],
                                       "sentiment": [40, 80, 120]}
    for key, values in result.measured.items():
        assert len(values) == 3 and all(0.3 < v <= 1 for v in values)
    # Random buys a label every other round: it always spends a budget of <= 30%.
    assert result.extra["budget_left_fraction"]["spam: Random"] == [0.0, 0.0, 0.0]


def test_budget_cell_honours_budget():
    cell = {"data": "landmine", "shuffle": 0, "learner": "Independent", "C": None, "budget": 37, "seed": 0}
    out = E._budget_cell(cell)
    assert out["queries"] == 37 and not out["budget_left"]


def test_prepare_inputs_adds_bias_unit_rows_and_copies():
    X = sp.csr_matrix(np.array([[3.0, 0.0, 4.0], [0.0, 0.0, 0.0]]))
    before = X.copy()
    Z = E.prepare_inputs(X)
    assert sp.issparse(Z) and Z.shape == (2, 4)
    np.testing.assert_allclose(np.sqrt(Z.multiply(Z).sum(axis=1)).A1, 1.0)
    np.testing.assert_allclose(Z.toarray()[1], [0, 0, 0, 1])
    assert (X != before).nnz == 0


def test_landmine_split_matches_the_paper():
    train, test = E._split({"data": "landmine", "shuffle": 0, "seed": 0})
    assert len(train) == 19 and all(t.n_samples == 160 for t in train)
    assert sum(t.n_samples for t in train) + sum(t.n_samples for t in test) == 9674
    train, test = E._split({"data": "sentiment", "shuffle": 1, "seed": 0})
    assert [t.n_samples for t in test] == [300] * 4


def test_unknown_learner():
    with pytest.raises(ValueError, match="unknown learner"):
        E.make_learner("SVM")
