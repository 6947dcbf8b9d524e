"""One protocol for every online learner of medmtl, in the manner of river.

Every learner here -- SHAMPO and KernelSHAMPO, the bandit reductions and the Banditron,
AMLC, PEER and their baselines -- has the same five methods with the same signatures:

``learn_one(x, y=None, *, task=None, oracle=None, index=None) -> None``
    Play one round on input ``x`` and update in place. Labels come only through an oracle
    (:class:`~medmtl.online.oracle.LabelOracle`), which counts every question: pass the
    ``oracle`` and the ``index`` of this round's label(s) in it (default: how many inputs
    of that task the learner has seen), or pass ``y`` and the learner gets an oracle over
    this round's labels alone (so ``learn_one(x, y)``, as river's
    ``evaluate.progressive_val_score`` calls it, still lets an active or bandit learner see
    only the feedback it asks for). What a round's ``x`` is depends on the learner:

    - every task on every round (SHAMPO, KernelSHAMPO): ``x`` holds the K tasks' inputs,
      ``y`` their K labels, ``task`` is None;
    - one example of one task (AMLC, PEER, RandomQuery, IndependentQuery): ``x`` is the
      input of task ``task``, ``y`` its label;
    - one multiclass example (OneVsRestBandit, OneVsOneBandit, Banditron): ``x`` is the
      input, ``y`` its class, ``task`` is None.

``predict_one(x, *, task=None)``
    The prediction for one input of task ``task``; for multi-task learners without
    ``task``, ``x`` holds one input per task and the K predictions come back as an array.

``fit(X, y, **options) -> self``
    One pass over a stream, from a fresh state. ``y`` holds the labels or is the oracle.

``predict(X, *, task=None)`` and ``score(X, y, *, task=None) -> float``
    Predictions for a matrix of inputs of task ``task``; for multi-task learners without
    ``task``, ``X`` is a list of per-task matrices and the predictions a list of arrays.
    ``score`` is the accuracy: the fraction of correct predictions, pooled over every
    example given (of all tasks when ``task`` is None).

Before any data, ``predict``, ``predict_one``, ``score`` (and ``decision_function``) raise
scikit-learn's ``NotFittedError``. Learners are seeded by ``random_state`` alone, never
modify their inputs, and pickle mid-stream.

The two families of predictions live here: :class:`MultiTaskLearner` (binary tasks with
labels in {-1, +1}) and :class:`MulticlassLearner` (one multiclass problem).
"""

from __future__ import annotations

import copy
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from medmtl._validation import check_matrix, check_pm1_labels
from medmtl.online.oracle import CallableOracle, LabelOracle, Query, QueryPending

__all__ = ["OnlineLearner", "MultiTaskLearner", "MulticlassLearner", "NotFittedError", "as_one_row"]


def as_one_row(x, name="x"):
    """One input as a checked 1-row matrix: a dense (1, n_features) array or a canonical CSR row.

    Parameters
    ----------
    x : array-like of shape (n_features,) or (1, n_features), or sparse matrix of shape (1, n_features)
    name : str, default="x"
        Named in the error messages.

    Returns
    -------
    row : ndarray or CSR matrix of shape (1, n_features)

    Examples
    --------
    >>> as_one_row([3.0, 4.0])
    array([[3., 4.]])
    """
    if sp.issparse(x):
        row = check_matrix(x, name=name)
        if not row.has_canonical_format:
            # check_matrix may share the caller's arrays: canonicalise a copy.
            row = row.copy()
            row.sum_duplicates()
    else:
        x = np.asarray(x, dtype=np.float64)
        row = check_matrix(x[None, :] if x.ndim == 1 else x, name=name)
    if row.shape[0] != 1:
        raise ValueError(f"{name} must be one example; got {row.shape[0]} rows")
    return row


class OnlineLearner(BaseEstimator):
    """Base class of the online learners: the protocol of the module notes.

    A subclass implements ``fit``, ``predict`` (and ``decision_function``) and two hooks:
    ``_oracle_for(x, y, task)``, the oracle over one round's labels ``y``, and
    ``_learn_round(x, task, oracle, index)``, which plays the round. Its ``__init__`` only
    stores its arguments (``self._init_params(locals())``); ``n_rounds_`` marks it fitted.
    """

    def _init_params(self, params):
        """Store the arguments of ``__init__`` (its ``locals()``) as attributes, unchanged."""
        for name, value in params.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    # ----------------------------------------------------------------------- the protocol
    def learn_one(self, x, y=None, *, task=None, oracle=None, index=None):
        """Play one round on input ``x``: predict, maybe ask for labels, update.

        Parameters
        ----------
        x : array-like, sparse row, or list of them
            The round's input(s); see the module notes for each kind of learner.
        y : label(s), optional
            The round's labels; the learner reads them through an oracle over this round
            alone. Give ``y`` or ``oracle``, not both.
        task : int, optional
            The task of ``x`` (learners that see one example of one task per round).
        oracle : LabelOracle or CallableOracle, optional
            The stream's annotator; a :class:`~medmtl.online.oracle.CallableOracle` is asked
            each question live (see the module notes).
        index : int, optional
            The position of this round's label(s) in ``oracle`` (default: how many inputs
            of that task the learner has seen).

        Returns
        -------
        None
        """
        if (y is None) == (oracle is None):
            raise TypeError("learn_one needs the round's labels y or an oracle (one of the two)")
        if oracle is None:
            oracle, index = self._oracle_for(x, y, task), 0
        elif not isinstance(oracle, LabelOracle):
            raise TypeError(f"oracle must be a medmtl.online.LabelOracle or CallableOracle, "
                            f"got {type(oracle).__name__}")
        if isinstance(oracle, CallableOracle):
            self._learn_live(x, task, oracle, index)
        else:
            self._learn_round(x, task, oracle, index)

    def _learn_live(self, x, task, oracle, index):
        """Play a round whose labels a :class:`CallableOracle` gives one question at a time.

        Each attempt at the round runs until the learner asks a question not yet answered;
        the learner and the oracle's counts are then put back as they were, the question is
        asked, and the round is played again. A skipped question drops the round; any error
        leaves the learner as it was before the round.
        """
        state, mark = _Snapshot(self), oracle._checkpoint()
        try:
            while True:
                try:
                    self._learn_round(x, task, oracle, index)
                    return
                except QueryPending as pending:
                    state.restore()
                    oracle._rewind(mark, pending)
                    row, prediction, margin = self._query_view(x, task, pending.task)
                    if oracle._ask(Query(pending.index, pending.task, row, prediction, margin)) is None:
                        return
        except BaseException:
            state.restore()
            oracle._rewind(mark)
            raise
        finally:
            oracle._end_round()

    def _query_view(self, x, task, asked):  # pragma: no cover - abstract
        """(the asked task's input, the learner's prediction, the asked task's margin)."""
        raise NotImplementedError

    def _oracle_for(self, x, y, task):  # pragma: no cover - abstract
        raise NotImplementedError

    def _learn_round(self, x, task, oracle, index):  # pragma: no cover - abstract
        raise NotImplementedError

    def fit(self, X, y):  # pragma: no cover - abstract
        """One pass over a stream from a fresh state; ``y`` holds the labels or is the oracle.

        Parameters
        ----------
        X : the stream's inputs
        y : labels, or a LabelOracle

        Returns
        -------
        self
        """
        raise NotImplementedError

    def predict(self, X, *, task=None):  # pragma: no cover - abstract
        """Predictions for the inputs ``X`` (of task ``task``).

        Parameters
        ----------
        X : the inputs
        task : int, optional
        """
        raise NotImplementedError

    # ------------------------------------------------------------------------- fitted state
    def __sklearn_is_fitted__(self):
        return hasattr(self, "n_rounds_")

    def _check_fitted(self, hint="call fit or learn_one first"):
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; {hint}")


def _query_input(row):
    """A copy of one checked input row as a :class:`Query` shows it: 1-D dense, or a sparse row."""
    return row.copy() if sp.issparse(row) else np.array(row[0], copy=True)


class _Snapshot:
    """A learner's attributes, to be put back in place (the same array objects) after a failed round.

    Arrays are copied back into themselves and generators get their state back, so views
    (such as SHAMPO's per-task weights in one buffer) and shared generators stay what they
    were; other values are restored by assignment.
    """

    def __init__(self, obj):
        self.obj = obj
        self.saved = {name: (value, _save(value)) for name, value in vars(obj).items()}

    def restore(self):
        attributes = vars(self.obj)
        for name in [name for name in attributes if name not in self.saved]:
            del attributes[name]
        for name, (value, saved) in self.saved.items():
            attributes[name] = _load(value, saved)


_IMMUTABLE = (numbers.Number, str, bytes, type(None), range, frozenset, type)


def _save(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, np.random.Generator):
        return copy.deepcopy(value.bit_generator.state)
    if type(value) in (list, tuple):
        return [(item, _save(item)) for item in value]
    if isinstance(value, _IMMUTABLE):
        return value
    return copy.deepcopy(value)


def _load(value, saved):
    if isinstance(value, np.ndarray):
        np.copyto(value, saved)
        return value
    if isinstance(value, np.random.Generator):
        value.bit_generator.state = saved
        return value
    if type(value) in (list, tuple):
        items = [_load(item, item_saved) for item, item_saved in saved]
        if type(value) is list:
            value[:] = items
            return value
        return tuple(items)
    if isinstance(value, _IMMUTABLE):
        return value
    return copy.deepcopy(saved)


class MultiTaskLearner(OnlineLearner):
    """Predictions of K binary tasks (labels in {-1, +1}, ``sign(0) = +1``).

    A subclass sets ``n_tasks_`` and ``n_features_`` (the input dimension of each task) when
    it starts, and implements ``_task_margins(X, task)``: the margins of a checked matrix
    of task ``task``'s inputs.
    """

    def decision_function(self, X, *, task=None):
        """Margins of task ``task``'s inputs ``X``, or of every task's.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or a list of them
            With ``task``: inputs of that task. Without: one matrix per task (the tasks may
            have different numbers of rows).
        task : int, optional

        Returns
        -------
        margins : ndarray of shape (n_samples,), or a list of them (one per task)
        """
        self._check_fitted()
        if task is None:
            if isinstance(X, np.ndarray) or sp.issparse(X) or not hasattr(X, "__len__"):
                raise TypeError("without task, X must be a list of per-task input matrices")
            if len(X) != self.n_tasks_:
                raise ValueError(f"expected inputs for {self.n_tasks_} tasks, got {len(X)}")
            return [self._margins_of(Xj, j) for j, Xj in enumerate(X)]
        return self._margins_of(X, self._check_task(task))

    def _margins_of(self, X, task):
        X = check_matrix(X, name=f"Xs[{task}]")
        if X.shape[1] != self.n_features_[task]:
            raise ValueError(f"X has {X.shape[1]} features; task {task} was trained on {self.n_features_[task]}")
        return self._task_margins(X, task)

    def _check_task(self, task):
        if isinstance(task, (bool, np.bool_)) or not isinstance(task, numbers.Integral):
            raise TypeError(f"task must be an integer, got {type(task).__name__}")
        if not 0 <= task < self.n_tasks_:
            raise ValueError(f"task {task} out of range for {self.n_tasks_} tasks")
        return int(task)

    def predict(self, X, *, task=None):
        """Labels in {-1, +1}: an array for task ``task``'s inputs, or a list of them.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or a list of them
            As for :meth:`decision_function`.
        task : int, optional

        Returns
        -------
        labels : ndarray of shape (n_samples,), or a list of them (one per task)
        """
        margins = self.decision_function(X, task=task)
        if task is None:
            return [np.where(m >= 0, 1, -1) for m in margins]
        return np.where(margins >= 0, 1, -1)

    def predict_one(self, x, *, task=None):
        """The label of one input of task ``task``; without ``task``, one label per task.

        Parameters
        ----------
        x : array-like of shape (n_features,) or sparse row; without ``task``, a list of
            one input per task
        task : int, optional

        Returns
        -------
        label : int, or ndarray of shape (n_tasks,)
        """
        self._check_fitted()
        if task is None:
            if len(x) != self.n_tasks_:
                raise ValueError(f"a round needs one input per task ({self.n_tasks_}), got {len(x)}")
            return np.array([self.predict_one(xj, task=j) for j, xj in enumerate(x)])
        return int(self.predict(as_one_row(x), task=task)[0])

    def _query_view(self, x, task, asked):
        row = as_one_row(x[asked] if task is None else x)
        if not self.__sklearn_is_fitted__():
            return _query_input(row), None, None
        margin = float(self.decision_function(row, task=asked)[0])
        return _query_input(row), 1 if margin >= 0 else -1, margin

    def _labelled(self, X, y, task):
        """(predictions, checked labels) pairs, one per task scored."""
        if task is not None:
            pred = self.predict(X, task=task)
            return [(pred, check_pm1_labels(y, len(pred)))]
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} tasks but y has {len(y)}")
        return [(p, check_pm1_labels(yj, len(p), name=f"y[{j}]")) for j, (p, yj) in enumerate(zip(self.predict(X), y))]

    def score(self, X, y, *, task=None):
        """Accuracy: the fraction of correct labels, pooled over every example given.

        Parameters
        ----------
        X : as for :meth:`decision_function`
        y : array-like of labels in {-1, +1}, or a list of them (one per task)
        task : int, optional

        Returns
        -------
        accuracy : float
        """
        pairs = self._labelled(X, y, task)
        return sum(int(np.sum(p == t)) for p, t in pairs) / sum(t.size for _, t in pairs)

    def errors(self, X, y):
        """Test error of each task, shape (n_tasks,): one minus its own accuracy.

        Parameters
        ----------
        X : list of per-task input matrices
        y : list of per-task labels in {-1, +1}
        """
        return np.array([np.mean(p != t) for p, t in self._labelled(X, y, None)])


class MulticlassLearner(OnlineLearner):
    """Predictions of one multiclass problem (the bandit learners).

    A subclass sets ``classes_`` and implements ``decision_function(X)`` (one score per
    class or per binary task) and ``_classify(margins)`` (their class indices).
    """

    def _check_no_task(self, task):
        if task is not None:
            raise ValueError(f"{type(self).__name__} learns one multiclass problem; task must be None")

    def _query_view(self, x, task, asked):
        row = as_one_row(x)
        if not self.__sklearn_is_fitted__():
            return _query_input(row), None, None
        margins = np.asarray(self.decision_function(row))
        return _query_input(row), self.classes_[self._classify(margins)][0], float(margins[0, asked])

    def predict(self, X, *, task=None):
        """Class labels of the inputs ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
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
        x : array-like of shape (n_features,) or sparse row
        task : None
        """
        return self.predict(as_one_row(x), task=task)[0]

    def score(self, X, y, *, task=None):
        """Accuracy: the fraction of inputs whose class is predicted right.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        task : None

        Returns
        -------
        accuracy : float
        """
        return float(np.mean(self.predict(X, task=task) == np.asarray(y)))
