"""The six "orderly" 4-task problems of 20 Newsgroups used by Du et al. (ICDM 2012).

Four top categories, each with four subcategories in a fixed order; a pair of top
categories gives one problem whose task ``j`` is the ``j``-th subcategory of the first
(label +1) against the ``j``-th of the second (label -1). Documents are tf-idf vectors over
the words with document frequency >= 25 in the posts of all four top categories.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from medmtl.datasets.base import MultiTaskDataset, Task
from medmtl.datasets.loaders import load_20newsgroups
from medmtl.datasets.sources import verified

__all__ = ["TOP_CATEGORIES", "ORDERLY_PROBLEMS", "DEVELOPMENT_TASKS", "newsgroups_corpus", "orderly_problem",
           "development_problem"]

TOP_CATEGORIES = {
    "comp": ["comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware"],
    "rec": ["rec.autos", "rec.motorcycles", "rec.sport.baseball", "rec.sport.hockey"],
    "sci": ["sci.crypt", "sci.electronics", "sci.med", "sci.space"],
    "talk": ["talk.politics.guns", "talk.politics.mideast", "talk.politics.misc", "talk.religion.misc"],
}

# In the order of the paper's Table III.
ORDERLY_PROBLEMS = [("comp", "rec"), ("comp", "talk"), ("sci", "rec"),
                    ("rec", "talk"), ("sci", "talk"), ("sci", "comp")]

# The four newsgroups that no orderly problem uses, paired into a 2-task problem with the
# same structure (a computing/commerce class against a religion class). Its posts never
# enter an evaluation, so modelling choices can be made on its labels.
DEVELOPMENT_TASKS = [("comp.windows.x", "alt.atheism"), ("misc.forsale", "soc.religion.christian")]
_ORDERLY_GROUPS = tuple(g for subs in TOP_CATEGORIES.values() for g in subs)


def newsgroups_corpus(min_df=25, max_docs_per_group=None, random_state=0, groups=_ORDERLY_GROUPS):
    """tf-idf of the posts of some newsgroups, by default the 16 subcategories above.

    Cached per process for each version of the data file (its path, size and modification time).

    Parameters
    ----------
    min_df : int, default=25
        Words in fewer documents are dropped (the paper's cut; 8198 words there).
    max_docs_per_group : int, optional
        Keep a random subset of this many posts per subcategory (for quick runs); the
        vocabulary is then built on the subset.
    random_state : int, default=0
        Seeds the subset.
    groups : tuple of str, optional
        The newsgroups whose posts make the corpus and its vocabulary.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_words)
        tf-idf, rows l2-normalised, English stop words removed.
    groups : ndarray of str, shape (n_documents,)
    vocabulary : ndarray of str, shape (n_words,)
    """
    return _corpus(verified("20newsgroups")[1], min_df, max_docs_per_group, random_state, tuple(groups))


@lru_cache(maxsize=4)
def _corpus(data_version, min_df, max_docs_per_group, random_state, groups):
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs, names, labels = load_20newsgroups("all")
    names = np.asarray(names)
    groups_all = names[labels]
    rng = np.random.default_rng(random_state)
    keep = []
    for g in groups:
        idx = np.flatnonzero(groups_all == g)
        if idx.size == 0:
            raise ValueError(f"20 Newsgroups has no posts in {g!r}")
        if max_docs_per_group is not None and idx.size > max_docs_per_group:
            idx = np.sort(rng.choice(idx, max_docs_per_group, replace=False))
        keep.append(idx)
    keep = np.concatenate(keep)
    vectorizer = TfidfVectorizer(min_df=min_df, stop_words="english", dtype=np.float64)
    X = vectorizer.fit_transform([docs[i] for i in keep]).tocsr()
    return X, groups_all[keep], np.asarray(vectorizer.get_feature_names_out())


def orderly_problem(first, second, min_df=25, max_docs_per_group=None, random_state=0):
    """The orderly 4-task problem ``first`` vs ``second`` as a ``MultiTaskDataset``.

    Task ``j`` holds the posts of ``TOP_CATEGORIES[first][j]`` (label +1) and
    ``TOP_CATEGORIES[second][j]`` (label -1); all tasks share one vocabulary.

    Parameters
    ----------
    first, second : str
        Two different keys of ``TOP_CATEGORIES`` (the positive and the negative side).
    min_df, max_docs_per_group, random_state
        As in :func:`newsgroups_corpus`.

    Returns
    -------
    MultiTaskDataset

    Examples
    --------
    >>> ds = orderly_problem("comp", "rec", min_df=5, max_docs_per_group=20)  # doctest: +SKIP
    >>> len(ds), ds.tasks[0].name  # doctest: +SKIP
    (4, 'comp.graphics vs rec.autos')
    """
    for top in (first, second):
        if top not in TOP_CATEGORIES:
            raise ValueError(f"unknown top category {top!r}; choose from {sorted(TOP_CATEGORIES)}")
    if first == second:
        raise ValueError("a problem needs two different top categories")
    pairs = list(zip(TOP_CATEGORIES[first], TOP_CATEGORIES[second]))
    return _pair_tasks(pairs, newsgroups_corpus(min_df, max_docs_per_group, random_state),
                       f"20newsgroups {first} vs {second}",
                       "20 Newsgroups bydate, orderly 4-task problem (Du et al., ICDM 2012)")


def development_problem(min_df=25, max_docs_per_group=None, random_state=0):
    """The 2-task problem of :data:`DEVELOPMENT_TASKS`, disjoint from every orderly problem.

    Its vocabulary is built on its own posts. Experiments choose modelling options on it so
    that no label of an evaluated post is ever looked at.

    Parameters
    ----------
    min_df : int, default=25
    max_docs_per_group : int, optional
    random_state : int, default=0
        The corpus options of :func:`newsgroups_corpus`.

    Returns
    -------
    MultiTaskDataset
        Two tasks over one shared vocabulary.

    Examples
    --------
    >>> ds = development_problem(min_df=5, max_docs_per_group=20)  # doctest: +SKIP
    >>> [t.name for t in ds.tasks]  # doctest: +SKIP
    ['comp.windows.x vs alt.atheism', 'misc.forsale vs soc.religion.christian']
    """
    groups = tuple(g for pair in DEVELOPMENT_TASKS for g in pair)
    return _pair_tasks(DEVELOPMENT_TASKS, newsgroups_corpus(min_df, max_docs_per_group, random_state, groups),
                       "20newsgroups development problem",
                       "20 Newsgroups bydate, the four groups outside the orderly problems")


def _pair_tasks(pairs, corpus, name, description):
    X, groups, vocabulary = corpus
    tasks = []
    for pos, neg in pairs:
        idx = np.flatnonzero((groups == pos) | (groups == neg))
        y = np.where(groups[idx] == pos, 1, -1)
        tasks.append(Task(X[idx], y, f"{pos} vs {neg}"))
    return MultiTaskDataset(tasks, name, list(vocabulary), description)
