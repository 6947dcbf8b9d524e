"""Contextual bandits by reduction to SHAMPO (Sec. 5 of Cohen & Crammer 2014), and the Banditron.

A multiclass stream (x_t, Y_t), Y_t in {0, ..., C-1}, is learned from one yes/no-style
answer per round:

- **one-vs-rest** (Sec. 5.1): C binary tasks "is the label c?", all reading x_t. SHAMPO
  picks the task J_t to ask about; the answer is that task's label. The multiclass
  prediction is the class whose classifier says +1 (at random among several, or among all
  when none does).
- **one-vs-one** (Sec. 5.2): C(C-1)/2 tasks, one per pair (a, b): "is it a (+1), b (-1),
  or neither (0)?". The prediction is a round-robin tournament (each pair votes for its
  winner; the most votes wins, ties at random). A zero answer is handled by
  ``"random"`` (one-vs-one-random: a random +-1 label) or ``"weak"`` (one-vs-one-weak:
  w += eta * sign(p) x, which raises the task's confidence so it is not asked again).
- the **Banditron** (Kakade, Shalev-Shwartz & Tewari, ICML 2008): a multiclass perceptron
  that predicts argmax_r w_r . x, explores with probability gamma, asks "is it r~?" for
  the drawn r~ and makes the unbiased update.

All answers come from annotator objects that count every question: a
:class:`~medmtl.online.oracle.LabelOracle` over the one-vs-rest tasks, or a
:class:`PairFeedbackOracle` (a LabelOracle whose answers may be 0) over the pairs.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from medmtl._validation import check_matrix
from medmtl.online.linear import MultiTaskStream, add_row, scale_to_unit_ball
from medmtl.online.oracle import LabelOracle
from medmtl.online.shampo import _check_prior, _check_strategy, _effective_b_lam, _shampo_pass

__all__ = [
    "PairFeedbackOracle",
    "one_vs_rest_oracle",
    "one_vs_one_pairs",
    "round_robin_predict",
    "OneVsRestBandit",
    "OneVsOneBandit",
    "Banditron",
]


def _check_multiclass_labels(labels, n_samples=None):
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D; got shape {labels.shape}")
    if n_samples is not None and labels.shape[0] != n_samples:
        raise ValueError(f"labels has {labels.shape[0]} entries but X has {n_samples} rows")
    classes = np.unique(labels)
    if classes.size < 2:
        raise ValueError(f"a multiclass stream needs at least two classes; found {classes.size}")
    return classes, np.searchsorted(classes, labels)


def one_vs_one_pairs(n_classes):
    """The pairs (a, b), a < b, in the order of the one-vs-one tasks.

    >>> one_vs_one_pairs(3)
    [(0, 1), (0, 2), (1, 2)]
    """
    return [(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)]


def one_vs_rest_oracle(labels, n_classes=None, budget=None):
    """A :class:`LabelOracle` answering "is the label of example t class c?" as task c.

    Parameters
    ----------
    labels : array-like of int of shape (n_samples,)
        Class indices in ``0 .. n_classes - 1``.

    Examples
    --------
    >>> oracle = one_vs_rest_oracle([2, 0, 1])
    >>> oracle.query(2, 0), oracle.query(1, 0)
    (1, -1)
    """
    labels = np.asarray(labels)
    n_classes = int(labels.max()) + 1 if n_classes is None else int(n_classes)
    return LabelOracle([np.where(labels == c, 1, -1) for c in range(n_classes)], budget=budget)


class PairFeedbackOracle(LabelOracle):
    """The one-vs-one annotator: task k = pair (a, b) answers +1 (it is a), -1 (b) or 0.

    A :class:`LabelOracle` (same counting, budget and ``was_queried``) whose answers may be
    0, the paper's "neither" feedback of Sec. 5.2.

    Parameters
    ----------
    labels : array-like of int of shape (n_samples,)
        Class indices in ``0 .. n_classes - 1``.
    n_classes : int, optional
    budget : int or None

    Attributes
    ----------
    pairs : list of (int, int)

    Examples
    --------
    >>> oracle = PairFeedbackOracle([0, 2, 1])
    >>> oracle.pairs
    [(0, 1), (0, 2), (1, 2)]
    >>> oracle.query(0, 0), oracle.query(1, 1), oracle.query(0, 1), oracle.n_queries
    (1, -1, 0, 3)
    """

    def __init__(self, labels, n_classes=None, budget=None):
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.dtype.kind not in "iu":
            raise ValueError("labels must be a 1-D array of class indices")
        n_classes = int(labels.max()) + 1 if n_classes is None else int(n_classes)
        self.pairs = one_vs_one_pairs(n_classes)
        answers = [np.where(labels == a, 1, np.where(labels == b, -1, 0)) for a, b in self.pairs]
        super().__init__(answers, budget=budget, allow_zero=True)


def round_robin_predict(margins, n_classes, random_state=None):
    """Multiclass labels from one-vs-one margins by a round-robin tournament.

    Pair (a, b) votes for a when its margin is > 0, for b when it is < 0, and gives half a
    vote to each at 0; the class with the most votes wins, ties broken uniformly at random.

    Parameters
    ----------
    margins : ndarray of shape (n_samples, n_classes * (n_classes - 1) / 2)
        Columns in the order of :func:`one_vs_one_pairs`.
    n_classes : int
    random_state : int, Generator or None

    Returns
    -------
    labels : ndarray of shape (n_samples,)

    Examples
    --------
    >>> round_robin_predict(np.array([[1.0, 1.0, -1.0], [-1.0, 1.0, 1.0]]), 3)
    array([0, 1])
    """
    margins = np.asarray(margins, dtype=np.float64)
    pairs = np.array(one_vs_one_pairs(n_classes))
    if margins.ndim != 2 or margins.shape[1] != len(pairs):
        raise ValueError(f"margins must have {len(pairs)} columns for {n_classes} classes; got {margins.shape}")
    n = margins.shape[0]
    rows = np.arange(n)[:, None]
    # a pair with a zero margin (e.g. never trained) has no winner: half a vote each
    share = np.where(margins == 0, 0.5, 1.0)
    votes = np.zeros((n, n_classes))
    np.add.at(votes, (rows, np.broadcast_to(pairs[:, 0], margins.shape)), np.where(margins >= 0, share, 0.0))
    np.add.at(votes, (rows, np.broadcast_to(pairs[:, 1], margins.shape)), np.where(margins <= 0, share, 0.0))
    rng = np.random.default_rng(random_state)
    # votes are multiples of 1/2: noise in [0, 0.25) only reorders ties, uniformly
    return np.argmax(votes + 0.25 * rng.random(votes.shape), axis=1)


def _one_vs_rest_predict(margins, random_state=None):
    rng = np.random.default_rng(random_state)
    return np.argmax((margins >= 0) + 0.5 * rng.random(margins.shape), axis=1)


class _SHAMPOReduction:
    """Shared machinery of the two SHAMPO reductions (see the subclasses)."""

    _zero_feedback = "error"

    def __init__(self, b=1.0, aggressive=True, lam=None, prior=None, strategy="shampo",
                 scale="row", block_size=256, random_state=None):
        self.b = b
        self.aggressive = aggressive
        self.lam = lam
        self.prior = prior
        self.strategy = strategy
        self.scale = scale
        self.block_size = block_size
        self.random_state = random_state

    # -- subclass hooks
    def _n_tasks(self, n_classes):
        raise NotImplementedError

    def _make_oracle(self, codes, n_classes):
        raise NotImplementedError

    def _multiclass(self, margins, rng):
        raise NotImplementedError

    def _setup(self, n_features, n_classes):
        _check_strategy(self.strategy)
        if self.scale not in ("row", "max", None):
            raise ValueError(f"scale must be 'row', 'max' or None, got {self.scale!r}")
        if not isinstance(self.block_size, numbers.Integral) or self.block_size < 1:
            raise ValueError(f"block_size must be a positive integer, got {self.block_size!r}")
        self.b_, self.lam_ = _effective_b_lam(self.b, self.aggressive, self.lam, self.strategy)
        self.n_classes_ = n_classes
        self.n_tasks_ = self._n_tasks(n_classes)
        self.prior_ = _check_prior(self.prior, self.n_tasks_, 1)
        self.n_features_in_ = n_features
        self.coef_ = np.zeros((self.n_tasks_, n_features))
        self.n_rounds_ = 0
        self._rng = np.random.default_rng(self.random_state)
        self._sign_rng = np.random.default_rng(self._rng.integers(2 ** 63))
        self.updates_per_task_ = np.zeros(self.n_tasks_, dtype=np.int64)

    def _pass(self, stream, oracle, index0):
        self.updates_per_task_ += _shampo_pass(
            stream, self.coef_, oracle, self._rng, prior=self.prior_, b=self.b_, lam=self.lam_,
            index0=index0, block_size=self.block_size, zero_feedback=self._zero_feedback,
            eta=getattr(self, "eta", 0.0), sign_rng=self._sign_rng)
        self.n_rounds_ += stream.n_rounds

    def fit(self, X, y):
        """One pass over a multiclass stream.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_rounds, n_features)
        y : array-like of shape (n_rounds,) or annotator
            The class labels (any values; the annotator is built from them), or the
            annotator itself (a ``LabelOracle`` over the one-vs-rest tasks, or a
            ``PairFeedbackOracle``) with classes ``0 .. C-1``.

        Returns
        -------
        self
        """
        X = check_matrix(X)
        if isinstance(y, LabelOracle):
            oracle = y
            n_classes = self._classes_of_oracle(oracle)
            self.classes_ = np.arange(n_classes)
        else:
            self.classes_, codes = _check_multiclass_labels(y, X.shape[0])
            n_classes = self.classes_.size
            oracle = self._make_oracle(codes, n_classes)
        self._setup(X.shape[1], n_classes)
        stream = MultiTaskStream.shared_input(X, self.n_tasks_, scale=self.scale)
        self._pass(stream, oracle, 0)
        return self

    def learn_one(self, x, oracle, index=None):
        """One round: ask one question about input ``x`` and update.

        Parameters
        ----------
        x : array-like of shape (n_features,) or 1-row sparse matrix
        oracle : LabelOracle or PairFeedbackOracle
        index : int, optional
            The oracle index of this round; default the number of rounds seen.
        """
        X = x if sp.issparse(x) else np.asarray(x, dtype=np.float64).reshape(1, -1)
        if not hasattr(self, "coef_"):
            self.classes_ = np.arange(self._classes_of_oracle(oracle))
            self._setup(X.shape[1], self.classes_.size)
        if self.scale == "max":
            raise ValueError("scale='max' needs the whole stream; use fit, or scale='row'")
        stream = MultiTaskStream.shared_input(X, self.n_tasks_, scale=self.scale)
        self._pass(stream, oracle, self.n_rounds_ if index is None else int(index))

    def decision_function(self, X):
        """The binary tasks' margins, shape (n_samples, n_tasks)."""
        if not hasattr(self, "coef_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet")
        X = scale_to_unit_ball(X, method=self.scale or "row")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features; fitted on {self.n_features_in_}")
        return np.asarray(X @ self.coef_.T)

    def predict(self, X):
        """Multiclass labels (ties broken at random with ``random_state``)."""
        margins = self.decision_function(X)
        rng = np.random.default_rng(self.random_state)
        return self.classes_[self._multiclass(margins, rng)]

    def predict_one(self, x):
        X = x if sp.issparse(x) else np.asarray(x, dtype=np.float64).reshape(1, -1)
        return self.predict(X)[0]

    def score(self, X, y):
        """Multiclass accuracy."""
        return float(np.mean(self.predict(X) == np.asarray(y)))


class OneVsRestBandit(_SHAMPOReduction):
    """SHAMPO over C one-vs-rest tasks as a contextual-bandit learner (Sec. 5.1).

    Each round asks one question "is the label J_t?" about the input; J_t is drawn by
    SHAMPO's rule (Eq. 1) over the C binary classifiers.

    Parameters
    ----------
    b, aggressive, lam, prior, strategy, scale, block_size, random_state
        As in :class:`~medmtl.online.shampo.SHAMPO` (``prior`` has one entry per class).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> centers = np.array([[4.0, 0.0], [0.0, 4.0], [-4.0, -4.0]])
    >>> y = rng.integers(0, 3, 600)
    >>> X = np.hstack([centers[y] + rng.normal(size=(600, 2)), np.ones((600, 1))])
    >>> model = OneVsRestBandit(b=0.1, random_state=0).fit(X, y)
    >>> model.score(X, y) > 0.8
    True
    """

    def _n_tasks(self, n_classes):
        return n_classes

    def _classes_of_oracle(self, oracle):
        if isinstance(oracle, PairFeedbackOracle):
            raise TypeError("OneVsRestBandit needs a one-vs-rest LabelOracle, not a PairFeedbackOracle")
        return oracle.n_tasks

    def _make_oracle(self, codes, n_classes):
        return one_vs_rest_oracle(codes, n_classes)

    def _multiclass(self, margins, rng):
        return _one_vs_rest_predict(margins, rng)


class OneVsOneBandit(_SHAMPOReduction):
    """SHAMPO over the C(C-1)/2 one-vs-one tasks as a contextual-bandit learner (Sec. 5.2).

    Each round asks one question "a, b or neither?" for the pair J_t drawn by SHAMPO; the
    prediction is a round-robin tournament.

    Parameters
    ----------
    zero_feedback : {"random", "weak", "ignore"}, default="weak"
        What a "neither" answer does: ``"random"`` is one-vs-one-random (a random +-1
        label, then the usual rule), ``"weak"`` is one-vs-one-weak (w += eta sign(p) x),
        ``"ignore"`` is the plain reduction (no update).
    eta : float > 0, default=0.2
        The weak-update step (the paper uses 0.2).
    b, aggressive, lam, prior, strategy, scale, block_size, random_state
        As in :class:`~medmtl.online.shampo.SHAMPO`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    pairs_ : list of (int, int)
        The class-index pair of each task.
    coef_ : ndarray of shape (n_pairs, n_features)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> centers = np.array([[4.0, 0.0], [0.0, 4.0], [-4.0, -4.0]])
    >>> y = rng.integers(0, 3, 600)
    >>> X = np.hstack([centers[y] + rng.normal(size=(600, 2)), np.ones((600, 1))])
    >>> model = OneVsOneBandit(zero_feedback="weak", b=0.1, random_state=0).fit(X, y)
    >>> model.score(X, y) > 0.8
    True
    """

    def __init__(self, zero_feedback="weak", eta=0.2, b=1.0, aggressive=True, lam=None,
                 prior=None, strategy="shampo", scale="row", block_size=256, random_state=None):
        super().__init__(b=b, aggressive=aggressive, lam=lam, prior=prior, strategy=strategy,
                         scale=scale, block_size=block_size, random_state=random_state)
        self.zero_feedback = zero_feedback
        self.eta = eta

    @property
    def _zero_feedback(self):
        return self.zero_feedback

    def _setup(self, n_features, n_classes):
        if self.zero_feedback not in ("random", "weak", "ignore"):
            raise ValueError(f"zero_feedback must be 'random', 'weak' or 'ignore', got {self.zero_feedback!r}")
        if self.zero_feedback == "weak":
            if not isinstance(self.eta, numbers.Real) or not np.isfinite(self.eta) or self.eta <= 0:
                raise ValueError(f"eta must be a finite number > 0, got {self.eta!r}")
        super()._setup(n_features, n_classes)
        self.pairs_ = one_vs_one_pairs(n_classes)

    def _n_tasks(self, n_classes):
        return n_classes * (n_classes - 1) // 2

    def _classes_of_oracle(self, oracle):
        if not isinstance(oracle, PairFeedbackOracle):
            raise TypeError("OneVsOneBandit needs a PairFeedbackOracle")
        return len({c for pair in oracle.pairs for c in pair})

    def _make_oracle(self, codes, n_classes):
        return PairFeedbackOracle(codes, n_classes)

    def _multiclass(self, margins, rng):
        return round_robin_predict(margins, self.n_classes_, rng)


class Banditron:
    """The Banditron (Kakade, Shalev-Shwartz & Tewari 2008): multiclass bandit perceptron.

    Round t: predict y^ = argmax_r w_r . x; draw y~ = y^ with probability 1 - gamma +
    gamma / C, else another class uniformly (probability gamma / C each); ask "is it y~?";
    update w_{y^} -= x and, if the answer is yes, w_{y~} += x / P(y~).

    Parameters
    ----------
    gamma : float in (0, 1], default=0.05
        Exploration rate.
    scale : {"row", "max", None}, default="row"
    random_state : int, Generator or None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> centers = np.array([[4.0, 0.0], [0.0, 4.0], [-4.0, -4.0]])
    >>> y = rng.integers(0, 3, 2000)
    >>> X = np.hstack([centers[y] + rng.normal(size=(2000, 2)), np.ones((2000, 1))])
    >>> model = Banditron(gamma=0.1, random_state=0).fit(X, y)
    >>> model.score(X, y) > 0.8
    True
    """

    def __init__(self, gamma=0.05, scale="row", random_state=None):
        self.gamma = gamma
        self.scale = scale
        self.random_state = random_state

    def _setup(self, n_features, n_classes):
        g = self.gamma
        if not isinstance(g, numbers.Real) or isinstance(g, bool) or not 0 < g <= 1:
            raise ValueError(f"gamma must be in (0, 1], got {g!r}")
        if self.scale not in ("row", "max", None):
            raise ValueError(f"scale must be 'row', 'max' or None, got {self.scale!r}")
        self.n_classes_ = n_classes
        self.n_features_in_ = n_features
        self.coef_ = np.zeros((n_classes, n_features))
        self.n_rounds_ = 0
        self._rng = np.random.default_rng(self.random_state)

    def _pass(self, X, oracle, index0):
        C, g, W = self.n_classes_, float(self.gamma), self.coef_
        n = X.shape[0]
        u = self._rng.random(n)
        explore_class = self._rng.integers(0, C, n)
        dense = not sp.issparse(X)
        for t in range(n):
            if dense:
                scores = W @ X[t]
            else:
                s, e = X.indptr[t], X.indptr[t + 1]
                scores = W[:, X.indices[s:e]] @ X.data[s:e]
            y_hat = int(np.argmax(scores))
            # y~ = y^ w.p. 1 - gamma, else uniform over all classes: P(y^) = 1 - gamma + gamma / C
            y_tilde = y_hat if u[t] >= g else int(explore_class[t])
            p_tilde = g / C + (1.0 - g if y_tilde == y_hat else 0.0)
            yes = oracle.query(y_tilde, index0 + t) == 1
            add_row(W[y_hat], X, t, -1.0)
            if yes:
                add_row(W[y_tilde], X, t, 1.0 / p_tilde)
        self.n_rounds_ += n

    def fit(self, X, y):
        """One pass over a multiclass stream (labels, or a one-vs-rest ``LabelOracle``)."""
        X = check_matrix(X)
        if isinstance(y, LabelOracle):
            if isinstance(y, PairFeedbackOracle):
                raise TypeError("the Banditron needs a one-vs-rest LabelOracle")
            oracle = y
            self.classes_ = np.arange(oracle.n_tasks)
        else:
            self.classes_, codes = _check_multiclass_labels(y, X.shape[0])
            oracle = one_vs_rest_oracle(codes, self.classes_.size)
        self._setup(X.shape[1], self.classes_.size)
        X = scale_to_unit_ball(X, method=self.scale) if self.scale else X
        self._pass(X, oracle, 0)
        return self

    def learn_one(self, x, oracle, index=None):
        """One round on input ``x`` with a one-vs-rest ``oracle``."""
        X = x if sp.issparse(x) else np.asarray(x, dtype=np.float64).reshape(1, -1)
        if not hasattr(self, "coef_"):
            self.classes_ = np.arange(oracle.n_tasks)
            self._setup(X.shape[1], self.classes_.size)
        if self.scale == "max":
            raise ValueError("scale='max' needs the whole stream; use fit, or scale='row'")
        X = scale_to_unit_ball(X, method="row") if self.scale else check_matrix(X)
        self._pass(X, oracle, self.n_rounds_ if index is None else int(index))

    def decision_function(self, X):
        if not hasattr(self, "coef_"):
            raise RuntimeError("this Banditron is not fitted yet")
        X = scale_to_unit_ball(X, method=self.scale or "row")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features; fitted on {self.n_features_in_}")
        return np.asarray(X @ self.coef_.T)

    def predict(self, X):
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def predict_one(self, x):
        X = x if sp.issparse(x) else np.asarray(x, dtype=np.float64).reshape(1, -1)
        return self.predict(X)[0]

    def score(self, X, y):
        return float(np.mean(self.predict(X) == np.asarray(y)))
