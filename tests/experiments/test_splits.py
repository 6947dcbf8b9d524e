"""Per-task splits for rare classes: the repaired stratified draw and the uniform draw."""

import numpy as np
import pytest

from medmtl.datasets import MultiTaskDataset, Task
from medmtl.experiments import splits


def test_split_with_both_classes_repairs_rare_classes_and_keeps_sizes():
    rng = np.random.default_rng(0)
    tasks = [Task(rng.normal(size=(100, 2)), np.r_[np.ones(3, int), -np.ones(97, int)], f"t{m}")
             for m in range(6)]
    ds = MultiTaskDataset(tasks, "rare")
    tr, va, te, swaps = splits.split_with_both_classes(ds, 10, 0.5, random_state=1)
    again = splits.split_with_both_classes(ds, 10, 0.5, random_state=1)
    for m in range(6):
        assert set(tr[m].y.tolist()) == {-1, 1}
        assert (len(tr[m].y), len(va[m].y), len(te[m].y)) == (10, 45, 45)
        rows = np.concatenate([tr[m].X[:, 0], va[m].X[:, 0], te[m].X[:, 0]])
        assert np.unique(rows).size == 100  # disjoint and complete
        np.testing.assert_array_equal(tr[m].X, again[0][m].X)
    assert swaps == again[3]


def test_uniform_draw_leaves_tasks_without_a_mine_at_the_hypergeometric_rate():
    from scipy.stats import hypergeom

    from medmtl.datasets import load_landmine

    ds = load_landmine()
    expected = np.mean([hypergeom(len(t.y), int((t.y == 1).sum()), 20).pmf(0) for t in ds])  # 0.289
    unfitted = []
    for seed in range(20):
        tr, va, te, fitted = splits.split_uniform_draw(ds, 20, random_state=seed)
        unfitted.append(1 - len(fitted) / len(ds))
        for m in (0, 28):
            assert (len(tr[m].y), abs(len(va[m].y) - len(te[m].y))) == (20, len(ds[m].y) % 2)
            rows = np.vstack([tr[m].X, va[m].X, te[m].X])
            assert np.unique(rows, axis=0).shape[0] == np.unique(ds[m].X, axis=0).shape[0]
        assert all(set(va[m].y.tolist()) == {-1, 1} == set(te[m].y.tolist()) for m in range(len(ds)))
        assert fitted == [m for m in range(len(ds)) if set(tr[m].y.tolist()) == {-1, 1}]
    # 580 task draws: standard error ~0.019
    assert abs(np.mean(unfitted) - expected) < 0.06


def test_shared_rows_split_is_one_split_of_the_rows_for_every_task():
    from medmtl.datasets import multiclass_tasks

    rng = np.random.default_rng(0)
    X, labels = rng.normal(size=(90, 2)), np.repeat([0, 1, 2], 30)
    ds = multiclass_tasks(X, labels)
    tr, va, te, rows = splits.split_shared_rows(ds, 15, 0.5, random_state=4)
    assert [len(r) for r in rows] == [15, 38, 37]
    assert np.unique(np.concatenate(rows)).size == 90  # disjoint and complete
    for part, r in zip((tr, va, te), rows):
        for t, full in zip(part.tasks, ds.tasks):
            np.testing.assert_array_equal(t.X, X[r])
            np.testing.assert_array_equal(t.y, full.y[r])
    # stratified on the class: every class in proportion in the training rows
    assert np.bincount(labels[rows[0]]).tolist() == [5, 5, 5]
    with pytest.raises(ValueError, match="same rows"):
        splits.split_shared_rows(MultiTaskDataset([Task(X, ds[0].y, "a"), Task(X[::-1], ds[0].y, "b")]), 15)
    with pytest.raises(ValueError, match="one class"):
        splits.split_shared_rows(ds, 2, random_state=0)
