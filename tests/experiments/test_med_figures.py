"""The JMLR figures: quick results, selection blind to the test split, the uniform draw."""

import json
from pathlib import Path

import numpy as np
import pytest

from medmtl.experiments import med_figures, registry
from medmtl.experiments.leakage import relabel_test_labels

RESULTS = Path(__file__).resolve().parents[2] / "reproductions"


def test_quick_auc_experiments_beat_chance():
    # Cheap sanity on the cached quick runs: every method learns something.
    for name in ("landmine-kernels", "heart-pooling", "dermatology"):
        r = registry.run(name, quick=True)
        for method, values in r.measured.items():
            assert min(values) > 0.55, (name, method, values)


def test_paper_numbers_sit_at_the_x_where_the_paper_reads_them():
    lm = registry.run("landmine-kernels", quick=True, sizes=[20, 200], grid={"Cs": [1.0], "alphas": [0.0]})
    for key in ("multitask", "independent"):
        label = med_figures.LANDMINE_METHODS[key]
        assert lm.paper[label] == [med_figures.LANDMINE_PAPER[False][key][i] for i in (0, -1)]
    assert set(lm.paper) == {med_figures.LANDMINE_METHODS[k] for k in ("multitask", "independent")}
    derm = registry.run("dermatology", quick=True)  # n = 40, 100, 200: the paper reads 100 and 200
    assert derm.paper["Multi-task sparsity (MED)"] == [None, *(med_figures.DERMATOLOGY_PAPER[n][0] for n in (100, 200))]
    assert derm.paper["Independent SVMs"] == [None, *(med_figures.DERMATOLOGY_PAPER[n][1] for n in (100, 200))]
    heart = registry.run("heart-pooling", quick=True)
    peak = heart.x.index(min(heart.x, key=lambda a: abs(a - np.log(med_figures.HEART_PAPER["adaptive_peak_alpha"]))))
    curve = heart.paper[med_figures.HEART_CURVE]
    assert curve[peak] == med_figures.HEART_PAPER["adaptive_peak"] and curve.count(None) == len(curve) - 1
    assert med_figures.HEART_ADAPTIVE not in heart.paper  # the paper gives no validation-chosen number


# --------------------------------------------------------------------------------------------
# The protocol: the test split is never used for selection. With the test labels negated
# (labels in {-1, +1}), every choice and validation score stays and every test AUC becomes
# 1 - AUC: the test labels enter the test scores and nothing else.

def test_heart_selection_never_sees_the_test_split():
    kw = dict(Cs=[1.0, 10.0], log_alphas=[0.0, 20.0])
    ref = med_figures.heart_split(0, **kw)
    with relabel_test_labels(np.negative):
        flipped = med_figures.heart_split(0, **kw)
    assert flipped["chosen"] == ref["chosen"]
    for key, value in ref["validation"].items():
        assert flipped["validation"][key] == pytest.approx(value)
    for key in ("independent", "pooled", "adaptive_selected"):
        assert flipped[key] == pytest.approx(1.0 - ref[key], abs=1e-9)
    assert flipped["adaptive"] == pytest.approx([1.0 - a for a in ref["adaptive"]], abs=1e-9)


def test_dermatology_shared_split_puts_no_patient_in_two_roles_across_tasks():
    from medmtl.datasets import load_dermatology

    ds = load_dermatology()
    for size in med_figures.SPEC.grid["sizes"]:
        for fold in range(med_figures.SPEC.grid["folds"]):
            parts = med_figures.dermatology_split(ds, size, fold, 0, "shared")
            # every task's rows of a part are the same patients, and the parts are disjoint
            rows = [{tuple(x) for x in part[0].X} for part in parts]
            for part, r in zip(parts, rows):
                assert all({tuple(x) for x in t.X} == r for t in part.tasks)
                assert all(set(t.y.tolist()) == {-1, 1} for t in part.tasks)
            assert not (rows[0] & rows[1] or rows[0] & rows[2] or rows[1] & rows[2])
            assert len(rows[0]) == size
    # the earlier protocol, still reachable, does put test patients into other tasks' training sets
    train, _, test = med_figures.dermatology_split(ds, 100, 0, 0, "per-task")
    assert {tuple(x) for x in test[0].X} & {tuple(x) for x in train[1].X}


def test_dermatology_selection_never_sees_the_test_split():
    kw = dict(Cs=[0.1, 10.0], alphas=[0.0, 10.0])
    ref = med_figures.dermatology_fold(20, 0, **kw)
    with relabel_test_labels(np.negative):
        flipped = med_figures.dermatology_fold(20, 0, **kw)
    assert flipped["chosen"] == ref["chosen"]
    assert flipped["validation"] == pytest.approx(ref["validation"])
    np.testing.assert_allclose(flipped["validation_surface"], ref["validation_surface"], rtol=1e-12)
    for key in ("multitask", "independent", "independent_task_C"):
        assert flipped[key] == pytest.approx(1.0 - ref[key], abs=1e-9)


def test_landmine_selection_never_sees_the_test_split():
    kw = dict(Cs=[0.1, 1.0], alphas=[0.0, 10.0])
    ref = med_figures.landmine_fold(20, 0, **kw)
    with relabel_test_labels(np.negative):
        flipped = med_figures.landmine_fold(20, 0, **kw)
    assert flipped["chosen"] == ref["chosen"]
    assert flipped["validation"] == pytest.approx(ref["validation"])
    assert [p[:3] for p in flipped["validation_surface"]] == [p[:3] for p in ref["validation_surface"]]
    np.testing.assert_allclose([p[3] for p in flipped["validation_surface"]],
                               [p[3] for p in ref["validation_surface"]], rtol=1e-12)
    assert flipped["rbf_gammas"] == ref["rbf_gammas"] and flipped["profiles"] == ref["profiles"]
    np.testing.assert_allclose(flipped["switch_posterior"], ref["switch_posterior"], rtol=1e-12)
    for key in ("multitask", "independent", "independent_task_C", "independent_rbf"):
        assert flipped[key] == pytest.approx(1.0 - ref[key], abs=1e-9)


def test_landmine_chooses_the_bandwidth_rule_inside_the_fold_from_its_own_data():
    from medmtl.datasets import load_landmine
    from medmtl.experiments import kernel_banks, med_landmine

    kw = dict(Cs=[0.1, 1.0], alphas=[0.0, 10.0], svm_Cs=[0.1, 1.0])
    out = med_figures.landmine_fold(20, 0, seed=3, **kw)
    # the bandwidths are those of this fold's own training inputs, under each rule
    train = med_landmine._landmine_split(load_landmine(), 20, 0, 3, "stratified")[0]
    for rule in kernel_banks.BANDWIDTH_RULES:
        _, gammas = kernel_banks.rule_inputs(rule, train.Xs)
        assert out["rbf_gammas"][rule] == pytest.approx(gammas)
    # MED's (rule, C, alpha) is the best point of its own validation surface over both rules
    surface = {tuple(p[:3]): p[3] for p in out["validation_surface"]}
    assert {r for r, _, _ in surface} == set(kernel_banks.BANDWIDTH_RULES)
    best = max(sorted(surface), key=surface.get)
    assert best == (out["chosen"]["rule"], out["chosen"]["C"], out["chosen"]["alpha"])
    # the seed the "median" rule was first picked on is refused when a run fixes that rule,
    # and accepted when every fold chooses the rule itself
    dev = kernel_banks.LANDMINE_DEVELOPMENT_SEED
    with pytest.raises(ValueError, match=f"seed {dev} is Landmine's development seed"):
        registry.run("landmine-kernels", quick=True, seed=dev, grid={"rules": ["median"]})
    both = registry.run("landmine-kernels", quick=True, seed=dev)
    assert "inside each fold" in both.settings["bandwidth_rule_choice"]
    assert sum(both.extra["bandwidth_rule_wins"]["independent_rbf"].values()) == 29


def test_landmine_rule_depends_on_nothing_outside_the_fold(monkeypatch):
    # another seed's data (here: every task's rows outside this fold, replaced by noise)
    # cannot move any choice of the fold: the choices are a function of the fold's split
    from medmtl.experiments import med_landmine

    kw = dict(Cs=[0.1, 1.0], alphas=[0.0, 10.0], svm_Cs=[0.1, 1.0], svm_scales=[0.25, 1.0])
    ref = med_figures.landmine_fold(40, 0, seed=5, **kw)
    split = med_landmine._landmine_split

    def split_then_scramble_test(ds, size, fold, seed, draw):
        train, val, test, fitted, swaps = split(ds, size, fold, seed, draw)
        rng = np.random.default_rng(0)
        for t in test.tasks:
            t.X[:] = rng.normal(size=t.X.shape)
        return train, val, test, fitted, swaps

    monkeypatch.setattr(med_landmine, "_landmine_split", split_then_scramble_test)
    other = med_figures.landmine_fold(40, 0, seed=5, **kw)
    assert other["chosen"] == ref["chosen"] and other["rbf_gammas"] == ref["rbf_gammas"]
    assert other["validation"] == pytest.approx(ref["validation"])
    assert other["multitask"] != ref["multitask"]


def test_landmine_grid_edges_and_rule_wins_come_from_the_selection_records():
    from medmtl.experiments.selection import grid_edge_counts

    r = registry.run("landmine-kernels", quick=True)
    sel = r.extra["selection"]
    for name, edges in r.extra["grid_edges"].items():
        chosen = [v for s in sel for v in s["choices"][name]]
        profiles = [p for s in sel for p in s["profiles"][name]]
        assert edges == grid_edge_counts(chosen, edges["grid"], profiles)
        assert len(edges["grid"]) >= 2  # the quick run can fail the leakage check on every choice
    assert set(r.extra["grid_edges"]) == {"MED C", "MED alpha", "independent C", "independent_task_C C",
                                          "independent_rbf C", "independent_rbf gamma scale"}
    wins = r.extra["bandwidth_rule_wins"]
    assert wins["multitask"][sel[0]["chosen"]["rule"]] == 1 and sum(wins["independent_rbf"].values()) == 29
    assert r.settings["grid"]["rules"] == ["median", "minmax"]
    assert "inside each fold" in r.settings["bandwidth_rule_choice"]
    # every committed full run chooses the rule inside each fold as well
    for name in ("landmine-kernels", "landmine-kernels-poly"):
        full = json.loads((RESULTS / f"{name}.json").read_text())
        assert full["settings"]["grid"]["rules"] == ["median", "minmax"] and not full["settings"]["quick"]
        assert sum(full["extra"]["bandwidth_rule_wins"]["multitask"].values()) == len(full["extra"]["selection"])


def test_landmine_reports_every_baseline_with_the_primary_comparison_first():
    r = registry.run("landmine-kernels", quick=True)
    assert r.extra["primary_comparison"] == "independent"
    assert "multitask_vs_strongest_baseline" not in r.extra
    for b in med_figures.LANDMINE_METHODS:
        if b != "multitask":
            (t,) = r.extra[f"multitask_vs_{b}"]
            cell = r.extra["cells"][0]
            assert t["mean_difference"] == pytest.approx(cell["multitask"] - cell[b])


def test_landmine_fold_uniform_draw_scores_unfitted_tasks_at_one_half():
    out = med_figures.landmine_fold(20, 0, seed=3, Cs=[1.0], alphas=[10.0], draw="uniform")
    k = out["fitted_tasks"]
    assert 10 < k < 29
    lo = 0.5 * (29 - k) / 29  # the unfitted tasks' share of the mean
    for key in ("multitask", "independent"):
        assert lo < out[key] <= lo + k / 29
    with pytest.raises(ValueError, match="draw"):
        med_figures.landmine_fold(20, 0, draw="random")


# --------------------------------------------------------------------------------------------
# Summaries over folds.

def test_paired_tests_per_size_match_scipy():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(0)
    cells = [{"size": n, "fold": f} for n in (20, 40) for f in range(5)]
    out = [{"multitask": rng.random(), "independent": rng.random()} for _ in cells]
    rows = med_figures.paired_tests_by(out, cells, [20, 40], "size")
    for row, n in zip(rows, (20, 40)):
        a = [o["multitask"] for o, c in zip(out, cells) if c["size"] == n]
        b = [o["independent"] for o, c in zip(out, cells) if c["size"] == n]
        assert row["size"] == n
        assert row["mean_difference"] == pytest.approx(np.mean(a) - np.mean(b))
        assert row["p_value"] == pytest.approx(ttest_rel(a, b).pvalue)


def test_mean_and_spread_are_over_the_folds_of_each_size():
    cells = [{"size": n, "fold": f} for n in (20, 40) for f in range(3)]
    out = [{"auc": 0.1 * (k + 1)} for k in range(len(cells))]
    mean, std = med_figures.mean_std_by(out, cells, "auc", [40, 20], "size")
    assert mean == pytest.approx([0.5, 0.2]) and std == pytest.approx([np.std([0.4, 0.5, 0.6]), np.std([0.1, 0.2, 0.3])])


# --------------------------------------------------------------------------------------------
# The committed full runs: their rows are recomputed from the per-fold values they keep.

@pytest.mark.parametrize("name", ["landmine-kernels", "landmine-kernels-poly", "dermatology"])
def test_committed_rows_come_from_the_per_fold_values(name):
    from pathlib import Path

    from medmtl.evaluation import paired_t_test
    from medmtl.experiments.report import fmt, fmt_paired
    from medmtl.experiments.result import load_result
    from medmtl.experiments.selection import grid_edge_counts

    path = Path(__file__).resolve().parents[2] / "reproductions" / f"{name}.json"
    result = load_result(path)
    rows = [e for e in registry.experiments() if e.name == name][0].rows(result)
    cells = result.extra["cells"]
    shown = [20, 40, 120, 200] if name.startswith("landmine") else [100, 150, 200]
    labels = med_figures.LANDMINE_METHODS if name.startswith("landmine") else med_figures.DERMATOLOGY_METHODS
    for row, key in zip(rows, labels):
        parts = []
        for n in shown:
            v = np.array([c[key] for c in cells if c["size"] == n])
            parts.append(f"{fmt(v.mean())} ± {fmt(v.std(ddof=1) / np.sqrt(v.size))}")
        assert row.measured == " / ".join(parts)
    primary = result.extra["primary_comparison"]
    tests = [r for r in rows if r.method.startswith("MED minus")]
    assert "primary comparison" in tests[0].method and len(tests) >= len(labels) - 1
    first = tests[0].measured.split("; ")
    for n, text in zip(shown, first):
        d, se, p = paired_t_test([c["multitask"] for c in cells if c["size"] == n],
                                 [c[primary] for c in cells if c["size"] == n])
        assert text == f"n = {n}: {fmt_paired({'mean_difference': d, 'standard_error': se, 'p_value': p})}"
    for key, edges in result.extra["grid_edges"].items():
        sel = [s for s in result.extra["selection"] if s.get("split", "shared") == result.settings.get("split", "shared")]
        assert edges == grid_edge_counts([v for s in sel for v in s["choices"][key]], edges["grid"],
                                         [q for s in sel for q in s["profiles"][key]])
