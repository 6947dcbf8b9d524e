"""The text data sets of the feature-selection experiment, as tf-idf features per split.

* three **20 Newsgroups pairs** (one binary task each; the bydate train split gives the
  training and validation posts, the bydate test split the test posts; headers removed);
* the **15 spam users** of ECML/PKDD 2006 task B (15 tasks, one per inbox);
* the **4 sentiment domains** of Blitzer et al. (4 tasks, one per domain).

Features are tf-idf over the words of each split's fitting documents (:func:`tfidf_features`);
:func:`text_split` draws one repetition's fitting, validation and test parts.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from medmtl.experiments.leakage import guard_test_labels

__all__ = ["NEWSGROUP_PAIRS", "MULTITASK_SETS", "DATA_SETS", "DATA_TITLES", "SIZES", "MIN_DF", "tfidf_features",
           "text_split"]

# label -> (positive newsgroup, negative newsgroup); chosen before any run: a pair of sport
# groups, the classic pair of PC hardware groups, and the classic pair of religion groups.
NEWSGROUP_PAIRS = {
    "baseball vs hockey": ("rec.sport.baseball", "rec.sport.hockey"),
    "ibm vs mac": ("comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware"),
    "atheism vs christian": ("alt.atheism", "soc.religion.christian"),
}
MULTITASK_SETS = ("spam", "sentiment")
DATA_SETS = (*NEWSGROUP_PAIRS, *MULTITASK_SETS)
DATA_TITLES = {**{k: f"20 Newsgroups: {k}" for k in NEWSGROUP_PAIRS},
               "spam": "spam, 15 users (15 tasks)", "sentiment": "sentiment, 4 domains (4 tasks)"}

# Training documents per task for fitting, for validation, and test documents per task
# (None: the whole bydate test split of the pair).
SIZES = {"newsgroups": {"fit": 700, "validation": 400, "test": None},
         "spam": {"fit": 100, "validation": 100, "test": 200},
         "sentiment": {"fit": 300, "validation": 300, "test": 1000}}
MIN_DF = 3


def _strip_header(post):
    """A Usenet post without its header block (everything before the first blank line).

    >>> _strip_header("From: a@b\\nSubject: hi\\n\\nbody text\\n\\nmore")
    'body text\\n\\nmore'
    """
    head, sep, body = post.partition("\n\n")
    return body if sep else post


@functools.lru_cache(maxsize=2)
def _newsgroup_pair_docs(first, second):
    """The posts of two newsgroups, headers removed, with labels (+1: ``first``) and parts."""
    from medmtl.datasets import load_20newsgroups

    out = {}
    for part in ("train", "test"):
        docs, names, labels = load_20newsgroups(part)
        a, b = names.index(first), names.index(second)
        keep = np.flatnonzero((labels == a) | (labels == b))
        out[part] = ([_strip_header(docs[i]) for i in keep], np.where(labels[keep] == a, 1, -1))
    return out


def _stratified_parts(y, sizes, seed):
    """Sorted row indices of stratified parts of sizes ``sizes`` (a tuple; None: the rest)."""
    from medmtl.datasets import MultiTaskDataset, Task

    y = np.asarray(y)
    ds = MultiTaskDataset([Task(np.zeros((len(y), 1)), y, "t")])
    counts = list(sizes) + [None] * (3 - len(sizes))
    return [np.asarray(i) for i in ds.split_indices(*counts, random_state=seed)[0]][:len(sizes)]


def tfidf_features(fit_counts, *others, min_df=MIN_DF):
    """tf-idf of count matrices, built on the fitting documents only.

    Words (columns) in fewer than ``min_df`` fitting documents are dropped; the inverse
    document frequencies come from the fitting documents; term frequencies are sublinear
    (``1 + log tf``) and every row has unit Euclidean norm.

    Parameters
    ----------
    fit_counts : sparse matrix of shape (n_fit, n_words)
        The term counts of the documents the models are fitted on (all tasks stacked).
    *others : sparse matrices of shape (n, n_words)
        Further documents (validation, test) to transform the same way.
    min_df : int, default=MIN_DF

    Returns
    -------
    list of scipy.sparse.csr_matrix
        ``fit_counts`` and every one of ``others`` transformed, with the kept columns only.

    Examples
    --------
    >>> counts = sp.csr_matrix(np.array([[2, 1, 0], [1, 1, 0], [3, 0, 1]]))
    >>> fit, other = tfidf_features(counts, sp.csr_matrix(np.array([[1, 5, 0]])), min_df=2)
    >>> fit.shape, other.shape                       # the third word is in one document only
    ((3, 2), (1, 2))
    >>> np.round(np.linalg.norm(fit.toarray(), axis=1), 6).tolist()
    [1.0, 1.0, 1.0]
    """
    from sklearn.feature_extraction.text import TfidfTransformer

    fit_counts = sp.csr_matrix(fit_counts)
    keep = np.flatnonzero(np.asarray((fit_counts > 0).sum(axis=0)).ravel() >= min_df)
    transformer = TfidfTransformer(sublinear_tf=True).fit(fit_counts[:, keep])
    return [transformer.transform(sp.csr_matrix(m)[:, keep]).tocsr() for m in (fit_counts, *others)]


@functools.lru_cache(maxsize=8)
def _raw_split(data, seed, rep, n_fit, n_val, n_test, min_df):
    """The fitting, validation and test tf-idf matrices and labels of every task (unguarded)."""
    rng_seed = [seed, rep, DATA_SETS.index(data)]
    if data in NEWSGROUP_PAIRS:
        from sklearn.feature_extraction.text import CountVectorizer

        docs = _newsgroup_pair_docs(*NEWSGROUP_PAIRS[data])
        train_docs, train_y = docs["train"]
        test_docs, test_y = docs["test"]
        fit_idx, val_idx = _stratified_parts(train_y, (n_fit, n_val), rng_seed)
        test_idx = np.arange(len(test_y)) if n_test is None else _stratified_parts(test_y, (n_test,),
                                                                                   [*rng_seed, 1])[0]
        vectorizer = CountVectorizer(stop_words="english", min_df=min_df, dtype=np.float64)
        fit_counts = vectorizer.fit_transform([train_docs[i] for i in fit_idx])
        val_counts = vectorizer.transform([train_docs[i] for i in val_idx])
        test_counts = vectorizer.transform([test_docs[i] for i in test_idx])
        Xf, Xv, Xt = tfidf_features(fit_counts, val_counts, test_counts, min_df=min_df)
        return ([Xf], [train_y[fit_idx]], [Xv], [train_y[val_idx]], [Xt], [test_y[test_idx]], [data])
    from medmtl.datasets import load_sentiment, load_spam

    ds = load_spam() if data == "spam" else load_sentiment()
    fit, val, test = ds.split(train=n_fit, validation=n_val, test=n_test, random_state=rng_seed)
    sizes = [[t.n_samples for t in part] for part in (fit, val, test)]
    Xf, Xv, Xt = tfidf_features(sp.vstack(fit.Xs), sp.vstack(val.Xs), sp.vstack(test.Xs), min_df=min_df)

    def per_task(X, counts):
        edges = np.concatenate([[0], np.cumsum(counts)])
        return [X[a:b] for a, b in zip(edges[:-1], edges[1:])]

    return (per_task(Xf, sizes[0]), fit.ys, per_task(Xv, sizes[1]), val.ys, per_task(Xt, sizes[2]), test.ys,
            ds.task_names)


def text_split(data, seed=0, rep=0, sizes=None, min_df=MIN_DF):
    """One repetition's split of data set ``data`` into fitting, validation and test parts.

    Every task's documents are drawn at random, stratified by class: ``sizes["fit"]`` for
    fitting and ``sizes["validation"]`` for validation (for a 20 Newsgroups pair, from the
    bydate train split) and ``sizes["test"]`` for testing (for a pair, from the bydate test
    split; ``None``: all of it). Features are tf-idf over the words of at least ``min_df``
    fitting documents (see :func:`tfidf_features`). The test labels pass through
    :func:`~medmtl.experiments.leakage.guard_test_labels`.

    Parameters
    ----------
    data : str
        One of :data:`DATA_SETS`.
    seed, rep : int
        The run's seed and the repetition; the draw derives from both.
    sizes : dict, optional
        ``{"fit", "validation", "test"}`` documents per task (default: the full run's).
    min_df : int, default=MIN_DF

    Returns
    -------
    dict
        ``Xfit``, ``yfit``, ``Xval``, ``yval``, ``Xtest``, ``ytest`` (lists with one entry per
        task), ``task_names`` and ``n_features``.

    Examples
    --------
    >>> s = text_split("spam", sizes={"fit": 20, "validation": 20, "test": 40}, min_df=3)
    >>> len(s["Xfit"]), s["Xfit"][0].shape[0], s["Xtest"][0].shape[0], s["Xval"][0].shape[1] == s["n_features"]
    (15, 20, 40, True)
    """
    if data not in DATA_SETS:
        raise ValueError(f"unknown data set {data!r}; choose from {DATA_SETS}")
    sizes = sizes or SIZES["newsgroups" if data in NEWSGROUP_PAIRS else data]
    Xf, yf, Xv, yv, Xt, yt, names = _raw_split(data, seed, rep, sizes["fit"], sizes["validation"], sizes["test"],
                                               min_df)
    return {"Xfit": Xf, "yfit": yf, "Xval": Xv, "yval": yv, "Xtest": Xt,
            "ytest": [guard_test_labels(y) for y in yt], "task_names": list(names), "n_features": Xf[0].shape[1]}
