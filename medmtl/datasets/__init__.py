"""Data: ``MultiTaskDataset``, per-task splits, and loaders for the bundled real data sets.

The loaders read :func:`data_home` and check each file against the data manifest
(:mod:`medmtl.datasets.manifest`); a damaged or different file raises :class:`DataFileError`.
"""

from medmtl.datasets.base import MultiTaskDataset, Task, multiclass_tasks
from medmtl.datasets.manifest import DataFileError, data_home
from medmtl.datasets.newsgroups_tasks import development_problem, newsgroups_corpus, orderly_problem
from medmtl.datasets.loaders import (
    load_20newsgroups,
    load_dermatology,
    load_heart,
    load_housing,
    load_landmine,
    load_mnist_test,
    load_nci60,
    load_sentiment,
    load_spam,
    load_splice,
    load_statlog_dna,
    load_usps,
)

__all__ = [
    "MultiTaskDataset", "Task", "multiclass_tasks", "data_home", "DataFileError", "load_20newsgroups",
    "load_dermatology", "load_heart", "load_housing", "load_landmine", "load_mnist_test",
    "load_nci60", "load_sentiment", "load_spam", "load_splice", "load_statlog_dna", "load_usps",
    "newsgroups_corpus", "orderly_problem", "development_problem",
]
