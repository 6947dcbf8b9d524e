"""One protocol for every online learner of medmtl, one base class per round shape, as in river.

Every learner here -- SHAMPO and KernelSHAMPO, the bandit reductions and the Banditron,
AMLC, PEER and their baselines -- plays rounds the same way. What a round's ``x`` is
depends on the base class, and only on it:

- :class:`EveryTaskLearner` (SHAMPO, KernelSHAMPO): every task sees an input on every
  round; ``x`` holds the K tasks' inputs, ``y`` their K labels.
- :class:`OneTaskLearner` (AMLC, PEER, PEERShare, RandomQuery, IndependentQuery): a round
  is one example of one task; ``x`` is the input of task ``task``, ``y`` its label.
- :class:`MulticlassLearner` (OneVsRestBandit, OneVsOneBandit, Banditron): a round is one
  multiclass example; ``x`` is the input, ``y`` its class.

The round, in each of them:

``learn_one(x, y=None, *, [task,] oracle=None, index=None, answers=None) -> None``
    Play one round on ``x`` and update in place. Labels come only through an oracle
    (:class:`~medmtl.online.oracle.LabelOracle`), which counts every question: pass the
    ``oracle`` and the ``index`` of this round's label(s) in it (default: how many inputs
    of that task the learner has seen); or ``y``, and the learner gets an oracle over this
    round's labels alone (so ``learn_one(x, y)``, as river's
    ``evaluate.progressive_val_score`` calls it, still lets an active or bandit learner see
    only the feedback it asks for); or the ``answers`` to the questions of
    :meth:`query_one`. A :class:`~medmtl.online.oracle.CallableOracle` is asked the round's
    questions first, then the round is played with its answers.

``query_one(x, *, [task,] index=None) -> list of Query``
    The round's questions, asked before it is played: the first of the two steps of a
    round whose labels a person gives. The learner is not changed, except that the round's
    random numbers are drawn (and kept for the round, whenever it is learnt) and that a
    learner that has seen nothing starts. ``learn_one(x, answers=[...])`` is the second step.

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
``_parameter_constraints`` at the start of ``fit`` and of the first round; inputs (real
numbers, at least one feature, the fitted width of their task); the column names of
DataFrames against ``feature_names_in_``, as scikit-learn does; labels against the classes.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from medmtl._validation import check_feature_names, refuse_iterator
from medmtl.online._checks import check_known_labels, check_params, decode_labels, input_matrix, input_row, label_array
from medmtl.online.live import CallableOracle, Query
from medmtl.online.oracle import LabelOracle

__all__ = ["OnlineLearner", "MultiTaskLearner", "EveryTaskLearner", "OneTaskLearner", "NotFittedError", "as_one_row"]


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

    A learner subclasses one of the three round shapes (:class:`EveryTaskLearner`,
    :class:`OneTaskLearner`, :class:`MulticlassLearner`), whose ``learn_one`` and
    ``query_one`` say what ``x`` is. It implements ``fit``, ``predict`` (and
    ``decision_function``) and the hooks of a round:

    - ``_begin(x, task, oracle)``: start on the first round (from the oracle's tasks and
      classes; ``oracle`` is None when the round's questions are asked first), or check that
      the oracle fits the learner;
    - ``_draw_round()``: the random numbers one round consumes;
    - ``_asked(x, task, index, oracle)``: the tasks the round asks about, and the round's
      label index, computed from the learner's state and the round's random numbers
      (:meth:`_round_draws`) without changing either;
    - ``_play(x, task, oracle, index)``: play the round, begun already, with labels from
      ``oracle`` (index None: the default), spending the round's random numbers;
    - ``_oracle_for(x, y, task)``: the oracle over one round's labels ``y``, and
      ``_answer_sheet(queries, answers)``: the oracle holding the answers to the questions.

    Its ``__init__`` only stores its arguments (``self._init_params(locals())``); its
    state starts with ``n_rounds_ = 0`` and it is fitted once ``n_rounds_ > 0``. It declares its hyper-parameters in
    ``_parameter_constraints`` and checks them with ``_check_hyper_parameters()`` when it
    starts.
    """

    _parameter_constraints: dict = {}

    def _init_params(self, params):
        """Store the arguments of ``__init__`` (its ``locals()``) as attributes, unchanged."""
        for name, value in params.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    def _check_hyper_parameters(self):
        """Check the hyper-parameters against ``_parameter_constraints``; keep the parsed values.

        Called once when a run starts (``fit``, or the first round): the run then reads
        ``self._settings``, so a parameter changed mid-stream takes effect at the next ``fit``.
        """
        self._settings = check_params(self)
        return self._settings

    def _round_input(self, x, task):
        """The round's input, checked before anything reads it (each round shape checks its own)."""
        return x

    # ------------------------------------------------------------------------- the round
    def _learn(self, x, y, task, oracle, index, answers):
        """``learn_one`` of every round shape, ``task`` None where the shape has none."""
        if sum(value is not None for value in (y, oracle, answers)) != 1:
            raise TypeError("learn_one needs the round's labels y, an oracle, or the answers to its questions "
                            "(one of the three)")
        x = self._round_input(x, task)
        if answers is not None:
            queries = self._questions(x, task, None, None)
            self._play(x, task, self._answer_sheet(queries, answers), 0)
            return
        if oracle is None:
            oracle, index = self._oracle_for(x, y, task), 0
        elif not isinstance(oracle, LabelOracle):
            raise TypeError(f"oracle must be a medmtl.online.LabelOracle or CallableOracle, "
                            f"got {type(oracle).__name__}")
        if isinstance(oracle, CallableOracle):
            self._learn_live(x, task, oracle, index)
        else:
            self._begin(x, task, oracle)
            self._play(x, task, oracle, index)

    def _learn_live(self, x, task, oracle, index):
        """A round whose labels a :class:`CallableOracle` gives: its questions first, then the round.

        A skipped question drops the round before anything is learnt; its random numbers
        stay drawn for the next round played.
        """
        queries = self._questions(x, task, index, oracle)
        labels = oracle.ask(queries)
        if labels is not None:
            with oracle.holding(queries, labels):
                self._play(x, task, oracle, index)

    def _query(self, x, task, index):
        """``query_one`` of every round shape."""
        return self._questions(self._round_input(x, task), task, index, None)

    def _questions(self, x, task, index, oracle):
        """The :class:`Query` of each task the round on the checked input ``x`` asks about."""
        self._begin(x, task, oracle)
        asked, index = self._asked(x, task, index, oracle)
        return [Query(index, j, *self._query_view(x, task, j)) for j in asked]

    def _round_draws(self):
        """The random numbers of the round to be played next, drawn when it is first asked about."""
        if getattr(self, "_draws", None) is None:
            self._draws = self._draw_round()
        return self._draws

    def _spend_round_draws(self):
        """The round was played: the next one draws its own random numbers."""
        self._draws = None

    def _begin(self, x, task, oracle):  # pragma: no cover - abstract
        raise NotImplementedError

    def _draw_round(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _asked(self, x, task, index, oracle):  # pragma: no cover - abstract
        raise NotImplementedError

    def _play(self, x, task, oracle, index):  # pragma: no cover - abstract
        raise NotImplementedError

    def _query_view(self, x, task, asked):  # pragma: no cover - abstract
        """(the asked task's input, the learner's prediction, the asked task's margin)."""
        raise NotImplementedError

    def _oracle_for(self, x, y, task):  # pragma: no cover - abstract
        raise NotImplementedError

    def _answer_sheet(self, queries, answers):  # pragma: no cover - abstract
        raise NotImplementedError

    def _checked_answers(self, queries, answers):
        """The answers as a list, one for each question."""
        refuse_iterator(answers, "answers")
        if isinstance(answers, (str, bytes)) or not hasattr(answers, "__len__"):
            raise TypeError(f"answers must be a list with one answer per question; got {type(answers).__name__}")
        if len(answers) != len(queries):
            raise ValueError(f"the round asks {len(queries)} question{'s' if len(queries) != 1 else ''} "
                             f"(query_one); got {len(answers)} answer{'s' if len(answers) != 1 else ''}")
        return list(answers)

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
    def _started(self):
        """Whether the learner has its state (tasks, widths, classes): set by ``fit`` or the first round."""
        return hasattr(self, "n_rounds_")

    def __sklearn_is_fitted__(self):
        # a learner that has only asked its first round's questions has no model yet
        return self._started() and self.n_rounds_ > 0

    def _check_fitted(self, hint="call fit or learn_one first"):
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; {hint}")

    def _check_started(self, hint):
        if not self._started():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; {hint}")


def _query_input(row):
    """A copy of one checked input row as a :class:`Query` shows it: 1-D dense, or a sparse row."""
    return row.copy() if sp.issparse(row) else np.array(row[0], copy=True)


class MultiTaskLearner(OnlineLearner):
    """Predictions of K binary tasks, each with two classes; a margin ``>= 0`` predicts the second.

    The prediction half of :class:`EveryTaskLearner` and :class:`OneTaskLearner`. A subclass
    sets ``n_tasks_``, ``n_features_`` (the input dimension of each task) and ``classes_``
    (each task's two labels, negative first; ``(-1, +1)`` when it sets none) when it starts,
    and implements ``_task_margins(X, task)``: the margins of a checked matrix of task
    ``task``'s inputs.
    """

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
        expected = self.n_tasks_ if self._started() else None
        if not inputs or expected is not None and len(inputs) != expected:
            raise ValueError(f"a round needs one input per task ({expected if expected else 'one or more'}), "
                             f"got {len(inputs)}")
        return inputs

    def _answer_sheet(self, queries, answers):
        """An oracle holding, at index 0 of each asked task, its answer (one of the task's classes)."""
        held = dict(zip((q.task for q in queries), self._checked_answers(queries, answers)))
        return LabelOracle([[held[j]] if j in held else [] for j in range(self.n_tasks_)], classes=self.classes_)

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
        check_feature_names(self, [X], reset=False, labels=[name], names_only=True)
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
        check_feature_names(self, [x], reset=False, labels=["x"], names_only=True)
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


class EveryTaskLearner(MultiTaskLearner):
    """K binary tasks, every one of which sees an input on every round (SHAMPO, KernelSHAMPO).

    A round's ``x`` holds the K tasks' inputs (a list of rows, or a DataFrame's rows) and
    ``y`` their K labels; the round asks about some of the tasks.

    Examples
    --------
    >>> from medmtl.online import SHAMPO
    >>> model = SHAMPO(n_queries=2, random_state=0)
    >>> xs = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])]
    >>> sorted(q.task for q in model.query_one(xs))
    [0, 2]
    >>> model.learn_one(xs, answers=[1, -1])
    >>> model.queries_per_task_.tolist()
    [1, 0, 1]
    """

    def learn_one(self, x, y=None, *, oracle=None, index=None, answers=None):
        """Play one round on the K inputs ``x``: predict, ask for some of the labels, update.

        The labels come from ``y``, ``oracle`` or ``answers`` (give one of the three).

        Parameters
        ----------
        x : list of array-like of shape (n_features_j,), pandas Series or sparse rows
            Task ``j``'s input of the round is ``x[j]``.
        y : list of labels, optional
            The round's K labels; the learner reads the ones it asks for, through an oracle
            over this round alone.
        oracle : LabelOracle or CallableOracle, optional
            The stream's annotator; a :class:`~medmtl.online.oracle.CallableOracle` is
            asked the round's questions before the round is played.
        index : int, optional
            With ``oracle``: the position of this round's labels in it (default: the
            rounds seen so far).
        answers : list, optional
            The answers to the questions :meth:`query_one` returned for this round, in
            their order (each one of its task's classes).
        """
        self._learn(x, y, None, oracle, index, answers)

    def query_one(self, x, *, index=None):
        """The questions the round on the K inputs ``x`` asks, before it is played.

        Parameters
        ----------
        x : list of array-like, pandas Series or sparse rows
            As for :meth:`learn_one`.
        index : int, optional
            The index the questions show (default: the rounds seen so far).

        Returns
        -------
        queries : list of Query
            One per task asked about; answer them with ``learn_one(x, answers=...)``.
        """
        return self._query(x, None, index)

    def _round_input(self, x, task):
        fitted = self._started()
        inputs = self._round_inputs(x)
        labels = [f"x[{j}]" for j in range(len(inputs))]
        if fitted:
            for label, xj in zip(labels, inputs):
                check_feature_names(self, [xj], reset=False, labels=[label], names_only=True)
        else:
            check_feature_names(self, inputs, reset=True, labels=labels, names_only=True)
        return [input_row(xj, label, self.n_features_[j] if fitted else None, self._owner(j))
                for j, (label, xj) in enumerate(zip(labels, inputs))]

    def _oracle_for(self, x, y, task):
        labels = label_array(y, "y", n_samples=len(x))
        classes = self.classes_ if self._started() else None
        return LabelOracle([[label] for label in labels.tolist()], classes=classes)


class OneTaskLearner(MultiTaskLearner):
    """K binary tasks, one example of one of them per round (AMLC, PEER, the query baselines).

    A round's ``x`` is one input of task ``task`` and ``y`` its label; the round asks for
    that label or not.

    Examples
    --------
    >>> from medmtl.online import AMLC, LabelOracle
    >>> model = AMLC(b=1e6, random_state=0)          # unsure of everything: it asks every label
    >>> model.learn_one(np.array([1.0, 0.5]), task=0, oracle=LabelOracle([[1], [-1]]))
    >>> [(q.task, q.index) for q in model.query_one(np.array([0.5, 1.0]), task=1)]
    [(1, 0)]
    >>> model.learn_one(np.array([0.5, 1.0]), task=1, answers=[-1])
    >>> model.n_queries_, model.n_rounds_
    (2, 2)
    """

    def learn_one(self, x, y=None, *, task, oracle=None, index=None, answers=None):
        """Play one round on the input ``x`` of task ``task``: predict, maybe ask for its label, update.

        The label comes from ``y``, ``oracle`` or ``answers`` (give one of the three).

        Parameters
        ----------
        x : array-like of shape (n_features,), pandas Series or sparse row
        y : label, optional
            The example's label, one of the task's classes; the learner reads it only if it
            asks for it.
        task : int
            The example's task.
        oracle : LabelOracle or CallableOracle, optional
            The stream's annotator (on the first round, it tells the number of tasks).
        index : int, optional
            With ``oracle``: the position of the example's label in its task (default: how
            many inputs of that task the learner has seen).
        answers : list, optional
            The answers to the questions :meth:`query_one` returned for this round: empty,
            or the label.
        """
        self._learn(x, y, task, oracle, index, answers)

    def query_one(self, x, *, task, index=None):
        """The question the round on the input ``x`` of task ``task`` asks, before it is played.

        Parameters
        ----------
        x : array-like of shape (n_features,), pandas Series or sparse row
        task : int
        index : int, optional
            The index the question shows (default: the inputs of that task seen so far).

        Returns
        -------
        queries : list of Query
            Empty when the learner does not ask; else the question about the example's
            label. Answer with ``learn_one(x, task=task, answers=...)``.
        """
        return self._query(x, task, index)

    def _round_input(self, x, task):
        if not self._started():
            check_feature_names(self, [x], reset=True, labels=["x"], names_only=True)
            return input_row(x, "x")
        task = self._check_task(task)
        check_feature_names(self, [x], reset=False, labels=["x"], names_only=True)
        return input_row(x, "x", self.n_features_[task], self._owner(task))

    def _oracle_for(self, x, y, task):
        self._check_started("its first round needs an oracle, which tells the number of tasks")
        task = self._check_task(task)
        label = label_array([y], "y")
        check_known_labels(label, self.classes_[task], "y")
        return LabelOracle([label.tolist() if j == task else [] for j in range(self.n_tasks_)], classes=self.classes_)
