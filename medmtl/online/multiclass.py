"""The round shape of one multiclass problem: :class:`MulticlassLearner` (see :mod:`medmtl.online.base`)."""

from __future__ import annotations

import numpy as np

from medmtl._validation import check_feature_names
from medmtl.online._checks import check_known_labels, input_matrix, input_row, label_array
from medmtl.online.base import OnlineLearner, _query_input

__all__ = ["MulticlassLearner"]


class MulticlassLearner(OnlineLearner):
    """One multiclass problem, one example per round (the bandit learners).

    A round's ``x`` is one input and ``y`` its class; the round asks a yes/no-style
    question about the class (its task: the class, or the pair of classes, asked about).
    A subclass sets ``classes_`` and ``n_features_in_`` and implements ``_decision(X)`` (one
    score per class or per binary task, of a checked input matrix) and
    ``_classify(margins)`` (their class indices).

    Examples
    --------
    >>> from medmtl.online import Banditron, one_vs_rest_oracle
    >>> model = Banditron(gamma=0.5, random_state=0)
    >>> model.learn_one(np.array([1.0, 0.0]), oracle=one_vs_rest_oracle([0, 1, 2]), index=0)
    >>> questions = model.query_one(np.array([0.0, 1.0]))
    >>> len(questions), questions[0].task in (0, 1, 2)
    (1, True)
    >>> model.learn_one(np.array([0.0, 1.0]), answers=[-1])    # "no, it is not that class"
    >>> model.n_rounds_
    2
    """

    def learn_one(self, x, y=None, *, oracle=None, index=None, answers=None):
        """Play one round on the input ``x``: predict, ask about its class, update.

        The answer comes from ``y``, ``oracle`` or ``answers`` (give one of the three).

        Parameters
        ----------
        x : array-like of shape (n_features,), pandas Series or sparse row
        y : label, optional
            The example's class; the learner reads only the answer to its question about it.
        oracle : LabelOracle or CallableOracle, optional
            The annotator of the yes/no questions (on the first round, it tells the number
            of classes).
        index : int, optional
            With ``oracle``: the position of this round's answers in it (default: the
            rounds seen so far).
        answers : list, optional
            The answers to the questions :meth:`query_one` returned for this round: +1
            (yes) or -1 (no), and 0 ("neither") for a question about a pair of classes.
        """
        self._learn(x, y, None, oracle, index, answers)

    def query_one(self, x, *, index=None):
        """The question the round on the input ``x`` asks, before it is played.

        Parameters
        ----------
        x : array-like of shape (n_features,), pandas Series or sparse row
        index : int, optional
            The index the question shows (default: the rounds seen so far).

        Returns
        -------
        queries : list of Query
            The question ("is it class ``task``?", or about a pair); answer with
            ``learn_one(x, answers=...)``.
        """
        return self._query(x, None, index)

    def _check_no_task(self, task):
        if task is not None:
            raise ValueError(f"{type(self).__name__} learns one multiclass problem; task must be None")

    def _round_input(self, x, task):
        if not self._started():
            check_feature_names(self, [x], reset=True, labels=["x"], names_only=True)
            return input_row(x, "x")
        check_feature_names(self, [x], reset=False, labels=["x"], names_only=True)
        return input_row(x, "x", self.n_features_in_, type(self).__name__)

    def _checked_decision(self, X, name):
        margins = np.asarray(self._decision(X), dtype=np.float64)
        if not np.all(np.isfinite(margins)):
            raise ValueError(f"{type(self).__name__}: the margins of {name} overflow the float range; rescale the "
                             "inputs as the training inputs were")
        return margins

    def decision_function(self, X):
        """One margin per class (Banditron) or per binary task.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        margins : ndarray of shape (n_samples, n_outputs)
        """
        self._check_fitted()
        check_feature_names(self, [X], reset=False, labels=["X"], names_only=True)
        return self._checked_decision(input_matrix(X, "X", self.n_features_in_, type(self).__name__), "X")

    def _query_view(self, x, task, asked):
        if not self.__sklearn_is_fitted__():
            return _query_input(x), None, None
        margins = self._checked_decision(x, "x")
        return _query_input(x), self.classes_[self._classify(margins)][0], float(margins[0, asked])

    def predict(self, X, *, task=None):
        """Class labels of the inputs ``X``.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        task : None
            The learners of one multiclass problem have no tasks.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        self._check_no_task(task)
        self._check_fitted()
        return self.classes_[self._classify(self.decision_function(X))]

    def predict_one(self, x, *, task=None):
        """The class of one input.

        Parameters
        ----------
        x : array-like of shape (n_features,), pandas Series or sparse row
        task : None
        """
        self._check_no_task(task)
        self._check_fitted()
        check_feature_names(self, [x], reset=False, labels=["x"], names_only=True)
        row = input_row(x, "x", self.n_features_in_, type(self).__name__)
        return self.classes_[self._classify(self._checked_decision(row, "x"))][0]

    def score(self, X, y, *, task=None):
        """Accuracy: the fraction of inputs whose class is predicted right.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels among ``classes_``.
        task : None

        Returns
        -------
        accuracy : float
        """
        predicted = self.predict(X, task=task)
        labels = label_array(y, "y", n_samples=predicted.shape[0])
        check_known_labels(labels, self.classes_, "y")
        return float(np.mean(predicted == labels))
