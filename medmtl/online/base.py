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

Every public method checks its arguments before any compiled loop sees them
(:mod:`medmtl.online._checks`): hyper-parameters against the learner's
``_parameter_constraints`` at the start of ``fit`` and of the first ``learn_one``; inputs
(real numbers, at least one feature, the fitted width of their task); the column names of
DataFrames against ``feature_names_in_``, as scikit-learn does; labels against the classes.

The two families of predictions live here: :class:`MultiTaskLearner` (binary tasks, any
two labels per task, the second one the positive class, as in scikit-learn) and
:class:`MulticlassLearner` (one multiclass problem).
"""

from __future__ import annotations

import copy
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from medmtl.online._checks import (check_feature_names, check_known_labels, check_params, decode_labels, input_matrix,
                                   input_row, label_array, read_feature_names, refuse_iterator)
from medmtl.online.oracle import CallableOracle, LabelOracle, Query, QueryPending

__all__ = ["OnlineLearner", "MultiTaskLearner", "MulticlassLearner", "NotFittedError", "as_one_row"]


def as_one_row(x, name="x", n_features=None, owner=None):
    """One input as a checked 1-row matrix: a dense (1, n_features) array or a canonical CSR row.

    Parameters
    ----------
    x : array-like of shape (n_features,) or (1, n_features), pandas Series, or sparse row
    name : str, default="x"
        Named in the error messages.
    n_features : int, optional
        The width it must have.
    owner : str, optional
        The learner, named when the width is wrong.

    Returns
    -------
    row : ndarray or CSR matrix of shape (1, n_features)

    Examples
    --------
    >>> as_one_row([3.0, 4.0])
    array([[3., 4.]])
    """
    return input_row(x, name=name, n_features=n_features, owner=owner)


class OnlineLearner(BaseEstimator):
    """Base class of the online learners: the protocol of the module notes.

    A subclass implements ``fit``, ``predict`` (and ``decision_function``) and two hooks:
    ``_oracle_for(x, y, task)``, the oracle over one round's labels ``y``, and
    ``_learn_round(x, task, oracle, index)``, which plays the round. Its ``__init__`` only
    stores its arguments (``self._init_params(locals())``); ``n_rounds_`` marks it fitted.
    It declares its hyper-parameters in ``_parameter_constraints`` and checks them with
    ``_check_hyper_parameters()`` when it starts.
    """

    _parameter_constraints: dict = {}

    def _init_params(self, params):
        """Store the arguments of ``__init__`` (its ``locals()``) as attributes, unchanged."""
        for name, value in params.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    def _check_hyper_parameters(self):
        """Check the hyper-parameters against ``_parameter_constraints``; keep the parsed values.

        Called once when a run starts (``fit``, or the first ``learn_one``): the run then reads
        ``self._settings``, so a parameter changed mid-stream takes effect at the next ``fit``.
        """
        self._settings = check_params(self)
        return self._settings

    def _round_input(self, x, task):
        """The round's input, checked before anything reads it (the learners of medmtl check it)."""
        return x

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
        x = self._round_input(x, task)
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
    were; lists and dicts are refilled item by item; other values are restored by assignment.
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
    if type(value) is dict:
        return {key: (item, _save(item)) for key, item in value.items()}
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
    if type(value) is dict:
        # the checked parameters keep their objects (a shared Generator stays shared)
        value.clear()
        value.update({key: _load(item, item_saved) for key, (item, item_saved) in saved.items()})
        return value
    if isinstance(value, _IMMUTABLE):
        return value
    return copy.deepcopy(saved)


class MultiTaskLearner(OnlineLearner):
    """Predictions of K binary tasks, each with two classes; a margin ``>= 0`` predicts the second.

    A subclass sets ``n_tasks_``, ``n_features_`` (the input dimension of each task) and
    ``classes_`` (each task's two labels, negative first; ``(-1, +1)`` when it sets none)
    when it starts, and implements ``_task_margins(X, task)``: the margins of a checked
    matrix of task ``task``'s inputs. ``_sees_every_task`` says what a round's ``x`` is: the
    K tasks' inputs (True), or one input of task ``task`` (False).
    """

    _sees_every_task = False

    def _task_classes(self, task):
        classes = getattr(self, "classes_", None)
        return np.array([-1, 1]) if classes is None else classes[task]

    def _owner(self, task):
        return f"{type(self).__name__} (task {task})"

    def _round_inputs(self, x):
        """The K inputs of a round, as given (a DataFrame gives its rows)."""
        refuse_iterator(x, "x")
        if sp.issparse(x) or isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
            raise TypeError(f"x must hold one input per task (a list of rows); got {type(x).__name__}")
        inputs = [x.iloc[[j]] for j in range(len(x))] if hasattr(x, "iloc") and np.ndim(x) == 2 else list(x)
        expected = self.n_tasks_ if self.__sklearn_is_fitted__() else None
        if not inputs or expected is not None and len(inputs) != expected:
            raise ValueError(f"a round needs one input per task ({expected if expected else 'one or more'}), "
                             f"got {len(inputs)}")
        return inputs

    def _round_input(self, x, task):
        fitted = self.__sklearn_is_fitted__()
        if self._sees_every_task:
            if task is not None:
                raise ValueError(f"{type(self).__name__} shows every task an input on every round: x holds "
                                 "the K inputs and task must be None")
            inputs = self._round_inputs(x)
            labels = [f"x[{j}]" for j in range(len(inputs))]
            if fitted:
                for label, xj in zip(labels, inputs):
                    check_feature_names(self, xj, label)
            else:
                read_feature_names(self, inputs, labels)
            return [input_row(xj, label, self.n_features_[j] if fitted else None, self._owner(j))
                    for j, (label, xj) in enumerate(zip(labels, inputs))]
        if not fitted:
            read_feature_names(self, [x], ["x"])
            return input_row(x, "x")
        task = self._check_task(task)
        check_feature_names(self, x, "x")
        return input_row(x, "x", self.n_features_[task], self._owner(task))

    def decision_function(self, X, *, task=None):
        """Margins of task ``task``'s inputs ``X``, or of every task's.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features), or a list of them
            With ``task``: inputs of that task. Without: one matrix per task (the tasks may
            have different numbers of rows).
        task : int, optional

        Returns
        -------
        margins : ndarray of shape (n_samples,), or a list of them (one per task)
        """
        self._check_fitted()
        if task is None:
            refuse_iterator(X, "X")
            if isinstance(X, np.ndarray) or sp.issparse(X) or not hasattr(X, "__len__") or hasattr(X, "iloc"):
                raise TypeError("without task, X must be a list of per-task input matrices")
            if len(X) != self.n_tasks_:
                raise ValueError(f"expected inputs for {self.n_tasks_} tasks, got {len(X)}")
            return [self._margins_of(Xj, j, f"Xs[{j}]") for j, Xj in enumerate(X)]
        task = self._check_task(task)
        return self._margins_of(X, task, "X")

    def _margins_of(self, X, task, name):
        check_feature_names(self, X, name)
        return self._checked_margins(input_matrix(X, name, self.n_features_[task], self._owner(task)), task, name)

    def _checked_margins(self, X, task, name="X"):
        """The margins of task ``task``'s checked inputs, refused if the arithmetic overflowed."""
        margins = np.asarray(self._task_margins(X, task), dtype=np.float64)
        if not np.all(np.isfinite(margins)):
            raise ValueError(f"{type(self).__name__}: the margins of {name} overflow the float range for "
                             f"{int(np.sum(~np.isfinite(margins)))} of {margins.size} inputs: they are too large for "
                             "the model; rescale them as the training inputs were")
        return margins

    def _check_task(self, task):
        if isinstance(task, (bool, np.bool_)) or not isinstance(task, numbers.Integral):
            raise TypeError(f"task must be an integer, got {type(task).__name__}")
        if not 0 <= task < self.n_tasks_:
            raise ValueError(f"task {task} out of range for {self.n_tasks_} tasks")
        return int(task)

    def predict(self, X, *, task=None):
        """Labels, each task's own two classes: an array for task ``task``'s inputs, or a list of them.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features), or a list of them
            As for :meth:`decision_function`.
        task : int, optional

        Returns
        -------
        labels : ndarray of shape (n_samples,), or a list of them (one per task)
        """
        margins = self.decision_function(X, task=task)
        if task is None:
            return [decode_labels(m, self._task_classes(j)) for j, m in enumerate(margins)]
        return decode_labels(margins, self._task_classes(int(task)))

    def predict_one(self, x, *, task=None):
        """The label of one input of task ``task``; without ``task``, one label per task.

        Parameters
        ----------
        x : array-like of shape (n_features,), pandas Series or sparse row; without ``task``,
            a list of one input per task
        task : int, optional

        Returns
        -------
        label : one of the task's classes, or ndarray of shape (n_tasks,)
        """
        self._check_fitted()
        if task is None:
            return np.array([self.predict_one(xj, task=j) for j, xj in enumerate(self._round_inputs(x))])
        task = self._check_task(task)
        check_feature_names(self, x, "x")
        row = input_row(x, "x", self.n_features_[task], self._owner(task))
        return decode_labels(self._checked_margins(row, task, "x"), self._task_classes(task)).tolist()[0]

    def _query_view(self, x, task, asked):
        row = x[asked] if task is None else x
        if not self.__sklearn_is_fitted__():
            return _query_input(row), None, None
        margin = float(self._checked_margins(row, asked, "x")[0])
        return _query_input(row), decode_labels(np.array([margin]), self._task_classes(asked)).tolist()[0], margin

    def _true_labels(self, y, n_samples, task, name):
        labels = label_array(y, name, n_samples=n_samples)
        check_known_labels(labels, self._task_classes(task), name)
        return labels

    def _labelled(self, X, y, task):
        """(predictions, checked labels) pairs, one per task scored."""
        if task is not None:
            pred = self.predict(X, task=task)
            return [(pred, self._true_labels(y, len(pred), int(task), "y"))]
        refuse_iterator(y, "y")
        if isinstance(y, (str, bytes)) or not hasattr(y, "__len__"):
            raise TypeError(f"without task, y must be a list of per-task labels; got {type(y).__name__}")
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} tasks but y has {len(y)}")
        return [(p, self._true_labels(yj, len(p), j, f"y[{j}]")) for j, (p, yj) in enumerate(zip(self.predict(X), y))]

    def score(self, X, y, *, task=None):
        """Accuracy: the fraction of correct labels, pooled over every example given.

        Parameters
        ----------
        X : as for :meth:`decision_function`
        y : array-like of labels among the task's classes, or a list of them (one per task)
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
        y : list of per-task labels
        """
        return np.array([np.mean(p != t) for p, t in self._labelled(X, y, None)])


class MulticlassLearner(OnlineLearner):
    """Predictions of one multiclass problem (the bandit learners).

    A subclass sets ``classes_`` and ``n_features_in_`` and implements ``_decision(X)`` (one
    score per class or per binary task, of a checked input matrix) and
    ``_classify(margins)`` (their class indices).
    """

    def _check_no_task(self, task):
        if task is not None:
            raise ValueError(f"{type(self).__name__} learns one multiclass problem; task must be None")

    def _round_input(self, x, task):
        self._check_no_task(task)
        if not self.__sklearn_is_fitted__():
            read_feature_names(self, [x], ["x"])
            return input_row(x, "x")
        check_feature_names(self, x, "x")
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
        check_feature_names(self, X, "X")
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
        check_feature_names(self, x, "x")
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
