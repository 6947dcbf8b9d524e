"""The AMLC experiments in quick mode: what they record, C chosen by CV only, and properties of
the numbers that a broken learner or a broken report would fail."""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.experiments import amlc as E
from medmtl.experiments.registry import names, run
from medmtl.experiments.result import load_result
from medmtl.experiments.runner import RunOptions, run_grid

STREAM = {"landmine": 29 * 160, "spam": 15 * 100, "sentiment": 4 * 100}


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


def test_table1_keeps_every_shuffle_and_its_summaries_come_from_them(table):
    out = table[1]
    saved = load_result(out / "amlc-table1.json")
    assert (out / "amlc-table1.png").stat().st_size > 0
    assert saved.x == ["landmine", "spam", "sentiment"] and set(saved.measured) == set(E.LEARNERS)
    assert json.loads((out / "amlc-table1.json").read_text())["settings"]["quick"] is True
    n = saved.settings["n_shuffles"]
    assert saved.settings["stream_rounds"] == STREAM
    for name in E.LEARNERS:
        for i, d in enumerate(saved.x):
            rows = saved.extra["per_shuffle"][name][d]
            assert [r["shuffle"] for r in rows] == list(range(n))
            acc = [r["accuracy"] for r in rows]
            assert saved.measured[name][i] == pytest.approx(np.mean(acc), abs=1e-12)
            assert saved.measured_std[name][i] == pytest.approx(E._ci95(acc), abs=1e-12)
            q = [r["queries"] for r in rows]
            assert saved.extra["queries"][name]["mean"][i] == pytest.approx(np.mean(q))
            assert saved.extra["query_share"][name]["mean"][i] == pytest.approx(np.mean(q) / STREAM[d])
            assert all((r["C"] is not None) == (name in E.TUNED) for r in rows)


def test_paper_numbers_stand_beside_the_code_flavour_only(table):
    saved = table[0]
    assert saved.paper["AMLC (code)"] == [0.9367, 0.8706, 0.7358]
    assert saved.paper["PEER (code)"] == [0.9362, 0.8334, 0.6425]
    assert saved.paper["AMLC"] is None and saved.paper["AMLC (b/K)"] is None and saved.paper["PEER"] is None
    assert saved.extra["paper_queries"]["AMLC (code)"] == [189.1, 321.3, 633.9]
    np.testing.assert_allclose(saved.extra["paper_query_share"]["AMLC (code)"],
                               [189.1 / 4640, 321.3 / 1500, 633.9 / 2200])


def test_every_learner_beats_the_constant_predictor_where_that_is_measurable(table):
    # Spam and sentiment are balanced (majority rate .5): a constant predictor has balanced
    # accuracy .5 and AUC .5 everywhere. Landmine is 94 % clutter, so accuracy cannot tell; the
    # AUC of the margins can.
    e = table[0].extra
    assert e["majority_rate"]["Random"]["mean"][1:] == [0.5, 0.5]
    for name in E.LEARNERS:
        landmine, spam, sentiment = e["auc_task_mean"][name]["mean"]
        assert landmine > 0.55 and spam > 0.75 and sentiment > 0.6, name
        assert min(e["balanced_accuracy"][name]["mean"][1:]) > 0.58, name


def test_queries(table):
    q = table[0].extra["queries"]
    for name in E.LEARNERS:
        for d, m in zip(table[0].x, q[name]["mean"]):
            assert 0 < m <= STREAM[d]
    # Random buys about half of the labels (binomial, 2 shuffles).
    for d, m in zip(table[0].x, q["Random"]["mean"]):
        assert abs(m - STREAM[d] / 2) < 4 * np.sqrt(STREAM[d])
    landmine = {name: q[name]["mean"][0] for name in E.LEARNERS}
    # The code's committee and the paper's AMLC with b / K buy a fifth of Independent's labels
    # or fewer; Algorithm 1 as printed (b = 1) does not: the saving is the query scale.
    assert landmine["AMLC (code)"] < landmine["Independent"] / 5
    assert landmine["AMLC (b/K)"] < landmine["Independent"] / 5
    assert landmine["AMLC"] > 3 * landmine["AMLC (b/K)"]


def test_amlc_b_over_K_is_amlc_with_b_divided_by_K():
    from medmtl.online import AMLC

    cell = {"data": "spam", "shuffle": 0, "seed": 0}
    train, test = E._split(cell)
    K = len(train)
    scaled = E._train_test(E.make_learner("AMLC (b/K)", C=2.0, random_state=3), train, test)
    divided = E._train_test(AMLC(b=1.0 / K, C=2.0, random_state=3), train, test)
    assert scaled["queries"] == divided["queries"] and scaled["accuracy"] == divided["accuracy"]


def test_C_is_chosen_by_cross_validation_only(table, cache):
    result, _ = table
    settings = E._settings(True, 0)
    # Re-read the same cells from the cache and redo the choice from cv_accuracy alone.
    for d in ("landmine",):
        for learner in ("AMLC", "PEER", "AMLC (code)"):
            for s in range(settings["n_shuffles"]):
                cells = [{"data": d, "shuffle": s, "learner": learner, "C": C, "folds": settings["folds"],
                          "seed": 0, "v": E.CELL_VERSION} for C in settings["C_grid"]]
                res = run_grid(E._table_cell, cells, name="amlc-table1",
                               options=RunOptions(cache_dir=cache, progress=False))
                cv = [r["cv_accuracy"] for r in res]
                assert result.extra["selected_C"][learner][d][s] == settings["C_grid"][int(np.argmax(cv))]


def test_budget_curves(cache, tmp_path):
    result = run("amlc-budget", out=tmp_path, quick=True, cache_dir=cache)
    assert (tmp_path / "amlc-budget.png").exists()
    budgets = result.extra["budgets"]
    assert budgets == {"landmine": [155, 309, 464], "spam": [150, 300, 450], "sentiment": [40, 80, 120]}
    for d in E.DATASETS:
        for name in E.LEARNERS:
            key = f"{d}: {name}"
            # every learner stays within its budget, on every shuffle
            for B, used in zip(budgets[d], result.extra["per_shuffle"][key]["queries"]):
                assert max(used) <= B
            assert result.measured[key] == pytest.approx(
                [np.mean(a) for a in result.extra["per_shuffle"][key]["accuracy"]], abs=1e-12)
        # Random buys a label every other round: it spends every budget of <= 30 %.
        assert result.extra["budget_left_fraction"][f"{d}: Random"] == [0.0, 0.0, 0.0]
        assert result.extra["queries"][f"{d}: Random"] == budgets[d]


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


def test_landmine_split_uses_all_29_fields_as_the_authors_code():
    train, test = E._split({"data": "landmine", "shuffle": 0, "seed": 0})
    assert len(train) == 29 and all(t.n_samples == 160 for t in train)
    assert sum(t.n_samples for t in train) + sum(t.n_samples for t in test) == 14820
    train, test = E._split({"data": "sentiment", "shuffle": 1, "seed": 0})
    assert [t.n_samples for t in test] == [300] * 4


def test_unknown_learner():
    with pytest.raises(ValueError, match="unknown learner"):
        E.make_learner("SVM")
