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

All answers come from annotators that count every question: a
:func:`~medmtl.online.oracle.one_vs_rest_oracle` over the one-vs-rest tasks, or a
:class:`~medmtl.online.oracle.PairFeedbackOracle` over the pairs.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from medmtl._validation import Interval, Options, check_feature_names, refuse_iterator
from medmtl.online._checks import LARGE, RANDOM_STATE, Capped, check_known_labels, input_matrix, label_array
from medmtl.online.multiclass import MulticlassLearner
from medmtl.online.oracle import LabelOracle, PairFeedbackOracle, as_oracle, one_vs_one_pairs, one_vs_rest_oracle
from medmtl.online.rows import add_row, as_rows
from medmtl.online.scaling import check_row_scale
from medmtl.online.shampo import RULE_PARAMETERS, check_prior, rule_values
from medmtl.online.shampo_rounds import ZERO_FEEDBACK, UpdateRule, ask_rounds, draw_rule, play_rounds
from medmtl.online.streams import MultiTaskStream, row_norms, scale_to_unit_ball

__all__ = ["round_robin_predict", "OneVsRestBandit", "OneVsOneBandit", "Banditron"]


def _check_multiclass_labels(labels, n_samples=None):
    refuse_iterator(labels, "labels")
    array = np.asarray(labels)
    if array.ndim != 1:
        raise ValueError(f"labels must be 1-D; got shape {array.shape}")
    if n_samples is not None and array.shape[0] != n_samples:
        raise ValueError(f"labels has {array.shape[0]} entries but X has {n_samples} rows")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)) or array.dtype.kind == "O" and any(
            v is None or isinstance(v, Real) and not np.isfinite(v) for v in array.tolist()):
        raise ValueError("labels contain NaN or None (or an infinity): every round needs its class")
    array = label_array(labels, "labels")
    classes = np.unique(array)
    if classes.size < 2:
        raise ValueError(f"a multiclass stream needs at least two classes; found {classes.size}")
    return classes, np.searchsorted(classes, array)


def round_robin_predict(margins, n_classes, random_state=None):
    """Multiclass labels from one-vs-one margins by a round-robin tournament.

    Pair (a, b) votes for a when its margin is > 0, for b when it is < 0, and gives half a
    vote to each at 0; the class with the most votes wins, ties broken uniformly at random.

    Parameters
    ----------
    margins : ndarray of shape (n_samples, n_classes * (n_classes - 1) / 2)
        Columns in the order of :func:`~medmtl.online.oracle.one_vs_one_pairs`.
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


class _BanditLearner(MulticlassLearner):
    """Input handling shared by the bandit learners: one multiclass stream, classes ``0 .. C-1``.

    A subclass implements ``_setup(n_features, n_classes)``, ``_pass(X, oracle, index0,
    drawn=None)`` (rounds over the rows of ``X``; ``drawn``: their random numbers, drawn
    already), ``_draw_round()`` and ``_ask_one(row, drawn)`` (the task the round on ``row``
    asks about). Its annotator answers "is it class c?"
    (:func:`~medmtl.online.oracle.one_vs_rest_oracle`) unless it overrides
    ``_classes_of_oracle(oracle)`` (the number of classes an annotator answers about, or a
    TypeError for the wrong kind) and ``_make_oracle(codes, n_classes)``.
    """

    # "neither" is an answer only about a pair of classes
    _allow_zero = False

    def _classes_of_oracle(self, oracle):
        if isinstance(oracle, PairFeedbackOracle):
            raise TypeError(f"{type(self).__name__} needs a one-vs-rest LabelOracle, not a PairFeedbackOracle")
        return oracle.n_tasks

    def _make_oracle(self, codes, n_classes):
        return one_vs_rest_oracle(codes, n_classes)

    def fit(self, X, y):
        """One pass over a multiclass stream.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_rounds, n_features)
        y : array-like of shape (n_rounds,) or annotator
            The class labels (any values; the annotator is built from them), or the
            annotator itself with classes ``0 .. C-1``.

        Returns
        -------
        self
        """
        self._check_hyper_parameters()
        check_feature_names(self, [X], reset=True, labels=["X"], names_only=True)
        X = input_matrix(X, "X")
        if isinstance(y, LabelOracle):
            classes = np.arange(self._classes_of_oracle(y))
            oracle = as_oracle(y, y.n_tasks, [X.shape[0]] * y.n_tasks)
        else:
            classes, codes = _check_multiclass_labels(y, X.shape[0])
            oracle = self._make_oracle(codes, classes.size)
        self._check_unscaled(X, "X")
        self._setup(X.shape[1], classes.size)
        self.classes_ = classes
        self._draws = None
        self._pass(X, oracle, 0)
        return self

    def _check_unscaled(self, X, name):
        """Without scaling, the inputs must already lie in the unit ball, at a scale the margins can hold."""
        if self._settings["scale"] is None:
            if np.any(row_norms(X) > 1 + 1e-6):
                raise ValueError(f"{name} has rows outside the unit ball; pass scale='row' or 'max'")
            check_row_scale(X, name, f"{type(self).__name__} with scale=None")

    def _oracle_for(self, x, y, task):
        self._check_started("its first round needs an oracle, which tells the classes")
        label = label_array([y], "y")
        check_known_labels(label, self.classes_, "y")
        return self._make_oracle(np.flatnonzero(self.classes_ == label[0]), self.classes_.size)

    def _answer_sheet(self, queries, answers):
        """An oracle holding, at index 0 of the task asked about, its answer."""
        held = dict(zip((q.task for q in queries), self._checked_answers(queries, answers)))
        return LabelOracle([[held[j]] if j in held else [] for j in range(self._n_answer_tasks())],
                           allow_zero=self._allow_zero)

    def _n_answer_tasks(self):
        return self.classes_.size

    # ------------------------------------------------------------------------- the round
    def _begin(self, x, task, oracle):
        if oracle is None:
            self._check_started("its first round needs an oracle, which tells the classes")
        n_classes = self._classes_of_oracle(oracle) if oracle is not None else self.classes_.size
        if not self._started():
            self._check_hyper_parameters()
            self._setup(x.shape[1], n_classes)
            self.classes_ = np.arange(n_classes)
            self._draws = None
        elif n_classes != self.classes_.size:
            raise ValueError(f"the oracle answers about {n_classes} classes; this learner has {self.classes_.size}")
        if self._settings["scale"] == "max":
            raise ValueError("scale='max' needs the whole stream; use fit, or scale='row'")
        self._check_unscaled(x, "x")

    def _asked(self, x, task, index, oracle):
        return [self._ask_one(x, self._round_draws())], self.n_rounds_ if index is None else int(index)

    def _play(self, x, task, oracle, index):
        self._pass(x, oracle, self.n_rounds_ if index is None else int(index), drawn=self._round_draws())
        self._spend_round_draws()

    def _decision(self, X):
        X = scale_to_unit_ball(X, method=self._settings["scale"] or "row")
        return np.asarray(X @ self.coef_.T)


class _SHAMPOReduction(_BanditLearner):
    """A multiclass bandit played as SHAMPO over binary tasks (see the subclasses)."""

    _parameter_constraints = {**RULE_PARAMETERS, "block_size": [Interval(Integral, 1, None)]}

    def __init__(self, b=1.0, aggressive=True, lam=None, prior=None, strategy="shampo", scale="row",
                 block_size=256, random_state=None):
        self._init_params(locals())

    def _update_rule(self):
        return UpdateRule(self.lam_, ZERO_FEEDBACK["error"], 0.0)

    def _setup(self, n_features, n_classes):
        s = self._settings
        self.b_, self.lam_ = rule_values(s)
        self.n_classes_ = n_classes
        self.n_tasks_ = self._n_tasks(n_classes)
        self.prior_ = check_prior(s["prior"], self.n_tasks_, 1)
        self.n_features_in_ = n_features
        self.coef_ = np.zeros((self.n_tasks_, n_features))
        self.n_rounds_ = 0
        self._rng = np.random.default_rng(s["random_state"])
        self._sign_rng = np.random.default_rng(self._rng.integers(2 ** 63))
        self.updates_per_task_ = np.zeros(self.n_tasks_, dtype=np.int64)

    def _n_answer_tasks(self):
        return self.n_tasks_

    def _pass(self, X, oracle, index0, drawn=None):
        stream = MultiTaskStream.shared_input(X, self.n_tasks_, scale=self._settings["scale"])
        self.updates_per_task_ += play_rounds(stream, self.coef_, oracle, self._rng, draw_rule(self.prior_, self.b_),
                                              self._update_rule(), index0=index0,
                                              block_size=self._settings["block_size"], sign_rng=self._sign_rng,
                                              drawn=drawn)
        self.n_rounds_ += stream.n_rounds

    def _draw_round(self):
        E = self._rng.standard_exponential((1, self.n_tasks_))
        if self._update_rule().on_zero == ZERO_FEEDBACK["random"]:
            return E, self._sign_rng.integers(0, 2, 1) * 2 - 1
        return E, np.zeros(1, dtype=np.int64)

    def _ask_one(self, row, drawn):
        stream = MultiTaskStream.shared_input(row, self.n_tasks_, scale=self._settings["scale"])
        return int(ask_rounds(stream, self.coef_, draw_rule(self.prior_, self.b_), drawn[0])[1][0, 0])


class OneVsRestBandit(_SHAMPOReduction):
    """SHAMPO over C one-vs-rest tasks as a contextual-bandit learner (Sec. 5.1).

    Each round asks one question "is the label J_t?" about the input; J_t is drawn by
    SHAMPO's rule (Eq. 1) over the C binary classifiers. Ties between classifiers that all
    say +1 (or none) are broken at random with ``random_state``.

    Parameters
    ----------
    b, aggressive, lam, prior, strategy, scale, block_size, random_state
        As in :class:`~medmtl.online.shampo.SHAMPO` (``prior`` has one entry per class).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when fitted on a DataFrame.
    n_rounds_ : int
    updates_per_task_ : ndarray of shape (n_classes,)

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

    def _classify(self, margins):
        rng = np.random.default_rng(self._settings["random_state"])
        return np.argmax((margins >= 0) + 0.5 * rng.random(margins.shape), axis=1)


class OneVsOneBandit(_SHAMPOReduction):
    """SHAMPO over the C(C-1)/2 one-vs-one tasks as a contextual-bandit learner (Sec. 5.2).

    Each round asks one question "a, b or neither?" for the pair J_t drawn by SHAMPO; the
    prediction is a round-robin tournament (:func:`round_robin_predict`).

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
    n_features_in_, feature_names_in_
        As for :class:`OneVsRestBandit`.
    n_rounds_ : int
    updates_per_task_ : ndarray of shape (n_pairs,)

    Examples
    --------
    Three classes, each around its own corner of a cube; the labels may be any values:

    >>> y = np.array(["a", "b", "c"])[np.arange(600) % 3]
    >>> X = np.eye(3)[np.arange(600) % 3] + 0.3 * np.random.default_rng(1).normal(size=(600, 3))
    >>> model = OneVsOneBandit(zero_feedback="weak", b=0.1, random_state=0).fit(X, y)
    >>> model.pairs_
    [(0, 1), (0, 2), (1, 2)]
    >>> model.score(X, y) > 0.8
    True
    """

    _allow_zero = True
    _parameter_constraints = {**_SHAMPOReduction._parameter_constraints,
                              "zero_feedback": [Options("random", "weak", "ignore")],
                              "eta": [Capped(Real, 0, LARGE, closed="right")]}

    def __init__(self, zero_feedback="weak", eta=0.2, b=1.0, aggressive=True, lam=None, prior=None,
                 strategy="shampo", scale="row", block_size=256, random_state=None):
        self._init_params(locals())

    def _update_rule(self):
        s = self._settings
        return UpdateRule(self.lam_, ZERO_FEEDBACK[s["zero_feedback"]], s["eta"])

    def _setup(self, n_features, n_classes):
        super()._setup(n_features, n_classes)
        self.pairs_ = one_vs_one_pairs(n_classes)

    def _n_tasks(self, n_classes):
        return n_classes * (n_classes - 1) // 2

    def _classes_of_oracle(self, oracle):
        if not isinstance(oracle, PairFeedbackOracle):
            raise TypeError("OneVsOneBandit needs a PairFeedbackOracle")
        return oracle.n_classes

    def _make_oracle(self, codes, n_classes):
        return PairFeedbackOracle(codes, n_classes)

    def _classify(self, margins):
        return round_robin_predict(margins, self.n_classes_, np.random.default_rng(self._settings["random_state"]))


class Banditron(_BanditLearner):
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
    n_features_in_, feature_names_in_
        As for :class:`OneVsRestBandit`.
    n_rounds_ : int

    Examples
    --------
    >>> from medmtl.online import one_vs_rest_oracle
    >>> y = np.random.default_rng(0).integers(0, 4, 2000)
    >>> X = np.eye(4)[y] + 0.2 * np.random.default_rng(1).normal(size=(2000, 4))
    >>> oracle = one_vs_rest_oracle(y)
    >>> model = Banditron(gamma=0.1, random_state=0).fit(X, oracle)
    >>> oracle.n_queries, model.score(X, y) > 0.8
    (2000, True)
    """

    # An update adds x / P(y~) with P(y~) >= gamma / C: gamma >= 1e-100 keeps the weights (and
    # so the margins) far inside the float range.
    _parameter_constraints = {"gamma": [Interval(Real, 1 / LARGE, 1, closed="both")],
                              "scale": [Options("row", "max", None)], "random_state": RANDOM_STATE}

    def __init__(self, gamma=0.05, scale="row", random_state=None):
        self._init_params(locals())

    def _setup(self, n_features, n_classes):
        self.n_classes_ = n_classes
        self.n_features_in_ = n_features
        self.coef_ = np.zeros((n_classes, n_features))
        self.n_rounds_ = 0
        self._rng = np.random.default_rng(self._settings["random_state"])

    def _classify(self, margins):
        return np.argmax(margins, axis=1)

    def _draw_round(self):
        return self._rng.random(1), self._rng.integers(0, self.n_classes_, 1)

    def _scaled(self, X):
        scale = self._settings["scale"]
        return scale_to_unit_ball(X, method=scale) if scale else X

    @staticmethod
    def _scores(W, X, t):
        """``W x_t``: the score of every class on row ``t``."""
        if sp.issparse(X):
            s, e = X.indptr[t], X.indptr[t + 1]
            return W[:, X.indices[s:e]] @ X.data[s:e]
        return W @ X[t]

    def _explore(self, scores, u, explore_class):
        """(the predicted class, the class asked about, its probability) of one round."""
        C, g = self.n_classes_, self._settings["gamma"]
        y_hat = int(np.argmax(scores))
        # y~ = y^ w.p. 1 - gamma, else uniform over all classes: P(y^) = 1 - gamma + gamma / C
        y_tilde = y_hat if u >= g else int(explore_class)
        return y_hat, y_tilde, g / C + (1.0 - g if y_tilde == y_hat else 0.0)

    def _ask_one(self, row, drawn):
        u, explore_class = drawn
        return self._explore(self._scores(self.coef_, self._scaled(row), 0), u[0], explore_class[0])[1]

    def _pass(self, X, oracle, index0, drawn=None):
        X, W = self._scaled(X), self.coef_
        n, rows = X.shape[0], as_rows(X)
        u, explore_class = (self._rng.random(n), self._rng.integers(0, self.n_classes_, n)) if drawn is None \
            else drawn
        for t in range(n):
            y_hat, y_tilde, p_tilde = self._explore(self._scores(W, X, t), u[t], explore_class[t])
            yes = oracle.query(y_tilde, index0 + t) == 1
            add_row(rows, t, W[y_hat], -1.0)
            if yes:
                add_row(rows, t, W[y_tilde], 1.0 / p_tilde)
        self.n_rounds_ += n
