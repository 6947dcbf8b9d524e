"""Starting points of MTS3FLC and S3FLC, as in Section III-D of Du et al. (ICDM 2012).

- :func:`plsa`: PLSA topics p(word | topic) by EM, which is KL-divergence NMF of the
  column-normalised word-document matrix; computed on the nonzeros only.
- :func:`logistic_start`: class probabilities of the unlabelled documents from a logistic
  regression on the labelled ones (pooled over tasks for MTS3FLC, per task for S3FLC).
- :func:`initial_factors`: the paper's recipe for ``F_i``, ``S``, ``R_i``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize

__all__ = ["plsa", "logistic_start", "initial_factors", "row_normalized"]

_CHUNK = 1 << 14  # nonzeros per block when evaluating the model at the nonzeros (cache-sized)
# Below this a row norm has lost precision: its square is subnormal.
_NORMAL_NORM = np.sqrt(np.finfo(np.float64).tiny)


def row_normalized(Xd, norm="l1", copy=True):
    """``Xd`` as CSR with rows (documents) of unit ``norm``; a copy unless ``copy=False``.

    ``copy=False`` is for matrices the caller created itself (it may then rescale them).
    A row whose norm leaves the float range (entries near 1e154 square to infinity, near
    1e-160 to subnormals) is first divided by its largest entry, so that every document
    is normalised exactly, at any scale; other rows are normalised as they are.

    >>> row_normalized(sp.csr_matrix([[3e300, 4e300], [3.0, 4.0]]), "l2").toarray().tolist()
    [[0.6, 0.8], [0.6, 0.8]]
    """
    Xd = sp.csr_matrix(Xd, dtype=np.float64, copy=copy)
    if Xd.shape[0] == 0:  # nothing to normalise (scikit-learn's normalize refuses it)
        return Xd
    if Xd.nnz:
        magnitude = np.sqrt(np.asarray(Xd.multiply(Xd).sum(axis=1)).ravel())
        extreme = ~np.isfinite(magnitude) | ((magnitude < _NORMAL_NORM) & (np.diff(Xd.indptr) > 0))
        if np.any(extreme):
            largest = np.asarray(abs(Xd).max(axis=1).toarray()).ravel()
            rows = np.repeat(np.arange(Xd.shape[0]), np.diff(Xd.indptr))
            scale = np.where(extreme & (largest > 0), largest, 1.0)
            Xd.data /= scale[rows]
    return normalize(Xd, norm=norm, copy=False)


def plsa(Xd, n_topics, max_iter=50, random_state=None, eps=1e-300):
    """PLSA word-topic distributions of a document-major count or weight matrix.

    EM for ``p(w | d) = sum_z p(w | z) p(z | d)``; equivalently multiplicative KL-NMF of the
    word-document matrix with its columns normalised. Only the nonzeros are visited, so
    the cost per iteration is O(nnz * n_topics) and no words x documents array is formed.

    Parameters
    ----------
    Xd : sparse matrix of shape (n_documents, n_words)
        Nonnegative; rows are normalised to sum to one internally (on a copy).
    n_topics : int
    max_iter : int, default=50
    random_state : int, Generator or None
    eps : float, default=1e-300
        The floor of every denominator, so that empty documents and topics divide safely.

    Returns
    -------
    word_topic : ndarray of shape (n_words, n_topics)
        Columns are p(w | z) and sum to one.
    topic_doc : ndarray of shape (n_topics, n_documents)
        Columns are p(z | d).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix([[3, 1, 0, 0], [2, 2, 0, 0], [0, 0, 1, 4], [0, 1, 2, 3]])
    >>> W, H = plsa(X, 2, max_iter=100, random_state=0)
    >>> W.shape, bool(np.allclose(W.sum(axis=0), 1)), bool(H.argmax(axis=0)[0] != H.argmax(axis=0)[2])
    ((4, 2), True, True)
    """
    rng = np.random.default_rng(random_state)
    P = row_normalized(Xd, "l1")
    P.sum_duplicates()
    n_docs, n_words = P.shape
    doc_of = np.repeat(np.arange(n_docs), np.diff(P.indptr))
    word_of = P.indices
    values = P.data.copy()
    W = rng.random((n_words, n_topics)) + 0.5
    W /= W.sum(axis=0)
    H = rng.random((n_topics, n_docs)) + 0.5
    H /= H.sum(axis=0)
    Q = P  # same sparsity pattern, its data overwritten by X / (W H) each iteration
    model = np.empty_like(values)
    for _ in range(max_iter):
        HT = np.ascontiguousarray(H.T)  # row gathers are far cheaper than column gathers
        for start in range(0, values.size, _CHUNK):
            stop = min(start + _CHUNK, values.size)
            # np.take gathers the same rows as fancy indexing, with less overhead per call
            model[start:stop] = np.einsum("ij,ij->i", np.take(W, word_of[start:stop], axis=0),
                                          np.take(HT, doc_of[start:stop], axis=0))
        Q.data = values / np.maximum(model, eps)
        # E and M steps in one: both factors use the posterior of the same iterate.
        W_new = W * np.asarray(Q.T @ H.T)
        H = H * np.asarray(Q @ W).T
        W = W_new / np.maximum(W_new.sum(axis=0), eps)
        H /= np.maximum(H.sum(axis=0), eps)
    return W, H


def logistic_start(Xd_labeled, y_labeled, Xd_unlabeled, classes, C=1.0):
    """Class probabilities of unlabelled documents, shape (n_classes, n_unlabeled).

    A logistic regression (scikit-learn, L2 penalty, on l2-normalised rows) fitted on the
    labelled documents; classes absent from its training labels get probability 0.
    """
    if Xd_unlabeled.shape[0] == 0:
        return np.zeros((len(classes), 0))
    model = LogisticRegression(C=C, max_iter=1000)
    model.fit(row_normalized(Xd_labeled, "l2"), y_labeled)
    proba = model.predict_proba(row_normalized(Xd_unlabeled, "l2"))
    G = np.zeros((len(classes), proba.shape[0]))
    for j, c in enumerate(model.classes_):
        G[np.searchsorted(classes, c)] = proba[:, j]
    return G


def initial_factors(n_words, n_topics, n_shared, n_classes, n_tasks, shared_topics, rng):
    """``F_i``, ``S`` and ``R_i`` of MTS3FLC before the first iteration.

    ``F_is`` is ``shared_topics`` (n_words, n_shared), the PLSA topics of the pooled data;
    ``F_ir`` and ``S`` start constant, ``R_i`` uniform in (0, 1). Rows of every ``F_i`` are
    normalised; ``S = 1/K`` and each ``R_i`` is rescaled so that every column of
    ``St_i = [S ; R_i]`` sums to one while ``S`` stays common to all tasks.

    Returns
    -------
    Fs : list of ndarray (n_words, n_topics)
    S : ndarray (n_shared, n_classes)
    Rs : list of ndarray (n_topics - n_shared, n_classes)
    """
    n_specific = n_topics - n_shared
    Fs = []
    for _ in range(n_tasks):
        F = np.ones((n_words, n_topics))
        if n_shared:
            F[:, :n_shared] = shared_topics
        F /= np.maximum(F.sum(axis=1, keepdims=True), np.finfo(float).tiny)
        Fs.append(F)
    S = np.full((n_shared, n_classes), 1.0 / n_topics)
    Rs = []
    for _ in range(n_tasks):
        R = rng.uniform(np.finfo(float).eps, 1.0, size=(n_specific, n_classes))
        if n_specific:
            R *= (n_specific / n_topics) / R.sum(axis=0)
        Rs.append(R)
    return Fs, S, Rs
