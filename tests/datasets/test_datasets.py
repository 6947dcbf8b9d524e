import numpy as np
import pytest
import scipy.sparse as sp

from medmtl import datasets
from medmtl.datasets import MultiTaskDataset, Task, multiclass_tasks


def test_every_loader_reads_its_data_with_the_documented_shapes():
    assert [t.n_samples for t in datasets.load_landmine()][:4] == [690, 690, 689, 508]
    assert sum(t.n_samples for t in datasets.load_landmine()) == 14820
    derm = datasets.load_dermatology()
    assert [int((t.y == 1).sum()) for t in derm] == [112, 61, 72, 49, 52, 20]
    assert np.isfinite(derm[0].X).all()
    assert datasets.load_splice()[0].X.shape == (3190, 240)
    assert datasets.load_splice(positive="IE", negative="N")[0].n_samples == 768 + 1655
    X, labels = datasets.load_statlog_dna("train")
    assert X.shape == (2000, 180) and np.bincount(labels).tolist() == [0, 464, 485, 1051]
    heart = datasets.load_heart()
    assert len(heart) == 10 and sum(t.n_samples for t in heart) == 270
    assert all(t.X.min() >= 0 and t.X.max() <= 1 for t in heart)
    spam = datasets.load_spam()
    assert len(spam) == 15 and all((t.y == 1).sum() == 200 for t in spam)
    assert sum(t.X.nnz for t in spam) == 922884
    senti = datasets.load_sentiment()
    assert [t.n_samples for t in senti] == [2000] * 4 and sp.isspmatrix_csr(senti[0].X)
    X, labels = datasets.load_usps("train")
    assert X.shape == (7291, 256) and np.bincount(labels)[0] == 1194
    X, labels = datasets.load_nci60()
    assert X.shape == (64, 6830) and np.isfinite(X).all()


def test_newsgroups_counts():
    docs, names, labels = datasets.load_20newsgroups("test")
    assert len(docs) == 7532 and len(names) == 20
    assert np.bincount(labels).sum() == 7532


def test_heart_age_tasks_are_ordered_and_balanced():
    heart = datasets.load_heart(scale=False)
    sizes = [t.n_samples for t in heart]
    assert max(sizes) - min(sizes) <= 1
    ages = [t.X[:, 0] for t in heart]
    assert all(a.max() <= b.min() for a, b in zip(ages, ages[1:]))


def _toy(rng):
    return MultiTaskDataset([Task(rng.normal(size=(30, 4)), np.repeat([-1, 1], [20, 10]), "a"),
                             Task(sp.random(25, 4, density=0.5, format="csr", random_state=1),
                                  np.repeat([-1, 1], [5, 20]), "b")], "toy")


def test_split_counts_fractions_stratification_and_reproducibility():
    rng = np.random.default_rng(0)
    ds = _toy(rng)
    train, val, test = ds.split(train=9, validation=0.5, random_state=3)
    assert [t.n_samples for t in train] == [9, 9]
    assert [t.n_samples for t in val] == [10, 8] and [t.n_samples for t in test] == [11, 8]
    # stratified: task a is 2:1 negative, so 9 training examples hold 3 positives
    assert int((train[0].y == 1).sum()) == 3
    assert sp.isspmatrix_csr(train[1].X)
    again = ds.split(train=9, validation=0.5, random_state=3)
    for a, b in zip(train, again[0]):
        assert np.array_equal(a.y, b.y)
    idx = ds.split_indices(train=0.5, random_state=1)
    for (tr, va, te), t in zip(idx, ds):
        assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == t.n_samples
    with pytest.raises(ValueError, match="cannot train"):
        ds.split(train=100)
    with pytest.raises(ValueError, match="fraction"):
        ds.split(train=1.5)


def test_multiclass_tasks_and_bad_scheme():
    X = np.arange(12.0).reshape(6, 2)
    ds = multiclass_tasks(X, [0, 1, 2, 0, 1, 2])
    assert ds.task_names == ["0 vs rest", "1 vs rest", "2 vs rest"]
    assert ds[1].y.tolist() == [-1, 1, -1, -1, 1, -1]
    with pytest.raises(ValueError, match="scheme"):
        multiclass_tasks(X, [0, 1, 2, 0, 1, 2], scheme="all-pairs")


def test_task_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="rows"):
        Task(np.zeros((3, 2)), np.ones(4), "bad")


def test_multiclass_loaders_return_tasks_on_request():
    ds = datasets.load_usps("test", scheme="one-vs-one")
    assert len(ds) == 45 and ds[0].name == "0 vs 1" and ds[0].n_samples == 359 + 264
    dna = datasets.load_statlog_dna("test", scheme="one-vs-rest")
    assert len(dna) == 3 and sp.isspmatrix_csr(dna[0].X) and int((dna[0].y == 1).sum()) == 303
    X, _ = datasets.load_nci60()
    nci = datasets.load_nci60(targets=[0, 5])
    assert nci[1].X.shape == (6830, 63) and np.array_equal(nci[1].y, X[5])
    assert np.array_equal(nci[1].X[:, 5], X[6])  # row 5 removed, the rest shift left


def test_from_arrays_takes_lists_or_stacked_rows_and_dataframe_columns():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(9, 3))
    y = np.array([1, -1, 1, -1, 1, -1, 1, -1, 1])
    task = np.array([2, 0, 2, 0, 2, 0, 1, 1, 1])
    ds = MultiTaskDataset.from_arrays(pd.DataFrame(X, columns=["a", "b", "c"]), y, task, name="toy")
    assert ds.task_names == ["0", "1", "2"] and ds.feature_names == ["a", "b", "c"]
    np.testing.assert_array_equal(ds[2].X, X[task == 2])
    np.testing.assert_array_equal(ds[1].y, y[task == 1])
    lists = MultiTaskDataset.from_arrays(ds.Xs, ds.ys, task_names=["x", "y", "z"])
    assert lists.task_names == ["x", "y", "z"] and lists.feature_names is None
    sparse = MultiTaskDataset.from_arrays(sp.csr_matrix(X), y, task)
    assert sparse[0].X.format == "csr"
    with pytest.raises(ValueError, match="rows"):
        MultiTaskDataset.from_arrays(X, y[:-1], task)
    with pytest.raises(ValueError, match="lists"):
        MultiTaskDataset.from_arrays(X, y)


def test_reprs_are_one_line_summaries_without_the_arrays():
    ds = MultiTaskDataset.from_arrays(np.arange(2000.0).reshape(1000, 2), np.ones(1000), np.arange(1000) % 2)
    assert repr(ds) == "MultiTaskDataset('': 2 tasks, 1000 examples (500 per task), 2 features, dense)"
    assert repr(ds[0]) == "Task('0', X 500 x 2 dense)"


def test_bundled_sets_name_the_features_their_sources_document():
    derm = datasets.load_dermatology()
    assert len(derm.feature_names) == 34 and derm.feature_names[10] == "family history"
    assert derm.feature_names[-1] == "age"
    assert len(datasets.load_usps("test", scheme="one-vs-rest").feature_names) == 256
    assert datasets.load_statlog_dna("test", scheme="one-vs-rest").feature_names[:2] == ["pos-30:b1", "pos-30:b2"]
