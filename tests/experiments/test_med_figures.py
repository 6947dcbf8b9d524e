"""The JMLR figures: quick results, selection blind to the test split, the uniform draw."""

import numpy as np
import pytest

from medmtl.datasets import MultiTaskDataset, Task
from medmtl.experiments import med_figures, registry, splits


def test_quick_auc_experiments_beat_chance():
    # Cheap sanity on the cached quick runs: every method learns something.
    for name in ("landmine-kernels", "heart-pooling", "dermatology"):
        r = registry.run(name, quick=True)
        for method, values in r.measured.items():
            assert min(values) > 0.55, (name, method, values)


def test_paper_numbers_are_the_seed_readme_values():
    r = registry.run("heart-pooling", quick=True)
    assert r.paper["Pooled SVM"][0] == 0.861 and r.paper["Independent SVMs"][0] == 0.800
    assert 0.865 in r.paper["Adaptive pooling"]
    assert med_figures.LANDMINE_PAPER[False]["multitask"][0] == 0.6015
    assert med_figures.LANDMINE_PAPER[True]["independent"][-1] == 0.7375


# --------------------------------------------------------------------------------------------
# The protocol: the test split is never used for selection.

def _flip_test_labels(split):
    """Wrap a split function so that the test part's labels are negated."""

    def flipped(*args, **kwargs):
        parts = split(*args, **kwargs)
        test = parts[2]
        test = MultiTaskDataset([Task(t.X, -t.y, t.name) for t in test.tasks], test.name,
                                test.feature_names, test.description)
        return (*parts[:2], test, *parts[3:])

    return flipped


def test_heart_selection_never_sees_the_test_split(monkeypatch):
    kw = dict(Cs=[1.0, 10.0], log_alphas=[0.0, 20.0])
    ref = med_figures.heart_split(0, **kw)
    monkeypatch.setattr(med_figures, "split_with_both_classes",
                        _flip_test_labels(splits.split_with_both_classes))
    flipped = med_figures.heart_split(0, **kw)
    # identical choices and validation scores ...
    assert flipped["chosen"] == ref["chosen"]
    for key, value in ref["validation"].items():
        assert flipped["validation"][key] == pytest.approx(value)
    # ... and the test scores are those of the flipped labels (AUC -> 1 - AUC)
    for key in ("independent", "pooled", "adaptive_selected"):
        assert flipped[key] == pytest.approx(1.0 - ref[key], abs=1e-9)
    assert flipped["adaptive"] == pytest.approx([1.0 - a for a in ref["adaptive"]], abs=1e-9)


def test_dermatology_selection_never_sees_the_test_split(monkeypatch):
    kw = dict(Cs=[0.1, 10.0], alphas=[0.0, 10.0])
    ref = med_figures.dermatology_fold(20, 0, **kw)
    monkeypatch.setattr(MultiTaskDataset, "split", _flip_test_labels(MultiTaskDataset.split))
    flipped = med_figures.dermatology_fold(20, 0, **kw)
    assert flipped["chosen"] == ref["chosen"]
    assert flipped["validation"] == pytest.approx(ref["validation"])
    assert flipped["multitask"] == pytest.approx(1.0 - ref["multitask"], abs=1e-9)
    assert flipped["independent"] == pytest.approx(1.0 - ref["independent"], abs=1e-9)


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
