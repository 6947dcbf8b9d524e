"""The SHAMPO experiments in quick mode: output contract, protocol and bookkeeping."""

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from medmtl.experiments import registry
from medmtl.experiments import shampo as ex

NAMES = ["shampo-table1", "shampo-b-sweep", "shampo-queries", "shampo-bandits"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    # the default cache: under pytest, conftest points it at a per-run directory that the
    # notebook test shares, so notebooks/shampo.ipynb reuses these cells
    out = tmp_path_factory.mktemp("out")
    return {name: registry.run(name, out=out, quick=True) for name in NAMES}, out


def test_registered():
    assert set(NAMES) <= set(registry.names())


def test_outputs_written(results):
    res, out = results
    for name in NAMES:
        data = json.loads((out / f"{name}.json").read_text())
        assert data["name"] == name and data["settings"]["quick"] is True
        assert (out / f"{name}.png").stat().st_size > 0
        for method, values in res[name].measured.items():
            assert len(values) == len(res[name].x)
            assert np.all(np.isfinite(values))


def test_table1_errors_and_ranks(results):
    res, _ = results
    r = res["shampo-table1"]
    assert r.x == ex.COLLECTIONS and list(r.measured) == ex.METHODS
    assert all(0 <= v <= 100 for vals in r.measured.values() for v in vals)
    assert r.paper["aggressive SHAMPO"][0] == 2.73
    # score ranks recomputed by hand from the per-problem test errors (ties share the mean rank)
    problems = r.extra["problems"]
    for collection in ex.COLLECTIONS:
        rows = [p for p in problems if p["collection"] == collection]
        manual = []
        for p in rows:
            errs = np.array([p[m] for m in ex.METHODS])
            manual.append([np.sum(errs < e) + (np.sum(errs == e) + 1) / 2 for e in errs])
        np.testing.assert_allclose(r.extra["score_ranks"][collection], np.mean(manual, axis=0))
    for p in problems:
        assert 2 <= len(p["tasks"]) <= 4
        assert p["aggressive SHAMPO b"] in p["b_grid"]
        for mode in ("aggressive", "plain"):
            # b is the first minimiser of the validation error, and the reported error is the
            # test error at that b
            k = int(np.argmin(p[f"{mode} SHAMPO validation by b"]))
            assert p[f"{mode} SHAMPO b"] == p["b_grid"][k]
            assert p[f"{mode} SHAMPO"] == pytest.approx(p[f"{mode} SHAMPO test by b"][k])


def test_table1_chooses_b_on_validation_where_test_disagrees(monkeypatch):
    # validation prefers the largest b, test the smallest: the choice must follow validation
    grid = [0.01, 0.1, 1.0]
    fake = {}
    for mode in ("aggressive", "plain"):
        fake[(mode, "exploit", 0.0)] = (0.3, 0.3)
        fake[(mode, "uniform", np.inf)] = (0.4, 0.4)
        for i, b in enumerate(grid):
            fake[(mode, "shampo", b)] = (0.2 - 0.05 * i, 0.1 + 0.05 * i)
    monkeypatch.setattr(ex, "_variant_runs", lambda *a, **k: fake)
    monkeypatch.setattr(ex, "_problem", lambda *a, **k: [("t", (None, np.zeros(5)))])
    out = ex.table1_cell({"collection": "USPS 1 vs 1", "problem": 0, "seed": 0, "quick": True,
                          "b_grid": grid, "repeats": 1})
    for mode in ("aggressive", "plain"):
        assert out[f"{mode} SHAMPO b"] == 1.0
        assert out[f"{mode} SHAMPO"] == pytest.approx(20.0)


def test_b_sweep_and_queries(results):
    res, _ = results
    sweep = res["shampo-b-sweep"]
    assert set(sweep.measured) == {"plain", "aggressive", "aggressive with prior"}
    assert all(v > 0 for v in sweep.extra["prior_labels_per_problem"])
    q = res["shampo-queries"]
    assert all(0 <= v <= 1 for vals in q.measured.values() for v in vals)
    rounds = q.settings["rounds"]
    for name, d in q.extra["per_task"].items():
        assert len(d["queries"]) == 45
        assert sum(d["queries"]) == pytest.approx(rounds)        # one label per round, no more


def test_bandits(results):
    res, _ = results
    r = res["shampo-bandits"]
    assert r.x == ex.BANDIT_METHODS and list(r.measured) == ["one pass"]
    assert all(0 <= v <= 100 for v in r.measured["one pass"])
    assert "vowel" in r.settings["data"]


def test_problem_sampling_is_reproducible():
    a = ex._problem("USPS 1 vs 1", 0, 0, True)
    b = ex._problem("USPS 1 vs 1", 0, 0, True)
    assert [t[0] for t in a] == [t[0] for t in b]
    tr, va, te = ex._stratified_three_way(np.repeat(np.arange(3), 100), 150, 60, np.random.default_rng(0))
    assert len(set(tr) | set(va) | set(te)) == 300 and len(tr) == 150 and len(va) == 60


def test_fig4a_scores_unqueried_training_labels_through_the_guard():
    """Fig. 4(a) counts mistakes on every task of every round: the labels of training examples
    the learner never queried are for scoring only (guarded), those it queried are kept, also
    where a cycled example was queried on another round."""
    from types import SimpleNamespace

    from medmtl.experiments import leakage

    y0, y1 = np.array([1, -1, 1, -1]), np.array([1, 1, -1])
    tasks = [("a", (None, y0)), ("b", (None, y1))]
    orders = [np.array([0, 1, 2, 3]), np.array([2, 0, 1, 2])]  # task b's example 2 comes twice
    model = SimpleNamespace(queried_tasks_=np.array([[0], [1], [0], [1]]))  # a asked on rounds 0, 2; b on 1, 3
    Y = ex._scoring_labels(tasks, orders, model)
    np.testing.assert_array_equal(Y, np.column_stack([y0[orders[0]], y1[orders[1]]]))
    with leakage.relabel_test_labels(lambda y: -y):
        flipped = ex._scoring_labels(tasks, orders, model)
    np.testing.assert_array_equal(flipped[:, 0], [1, 1, 1, 1])      # examples 1 and 3 never queried
    # task b: only example 1 was never queried; example 2 was (round 3), so round 0 keeps its label
    np.testing.assert_array_equal(flipped[:, 1], [-1, 1, -1, -1])
