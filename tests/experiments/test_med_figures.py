"""The JMLR figures: quick results, selection blind to the test split, the uniform draw."""

import numpy as np
import pytest

from medmtl.experiments import med_figures, registry
from medmtl.experiments.leakage import relabel_test_labels


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
    for key in ("validation_surface", "rbf_gammas", "switch_posterior"):
        np.testing.assert_allclose(flipped[key], ref[key], rtol=1e-12)
    for key in ("multitask", "independent", "independent_task_C", "independent_rbf"):
        assert flipped[key] == pytest.approx(1.0 - ref[key], abs=1e-9)


def test_landmine_refuses_its_development_seed():
    from medmtl.experiments.kernel_banks import LANDMINE_DEVELOPMENT_SEED

    for name in ("landmine-kernels", "landmine-kernels-poly"):
        with pytest.raises(ValueError, match=f"seed {LANDMINE_DEVELOPMENT_SEED} is Landmine's development seed"):
            registry.run(name, quick=True, seed=LANDMINE_DEVELOPMENT_SEED)


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
