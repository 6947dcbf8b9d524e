"""river adapters: medmtl's per-example online learners as river classifiers.

river (``pip install river``, an optional dependency) drives classifiers that learn from a
dict of features and a label, ``learn_one(x: dict, y)`` and ``predict_one(x: dict)``:
``river.evaluate.progressive_val_score``, ``river.compose`` pipelines (``|``) and
``river.base.clone`` take only subclasses of ``river.base.Classifier``.
:class:`RiverClassifier` wraps a medmtl learner that plays one example per round:

- the multiclass bandit learners (:class:`~medmtl.online.OneVsRestBandit`,
  :class:`~medmtl.online.OneVsOneBandit`, :class:`~medmtl.online.Banditron`). They learn
  from bandit feedback; in river's full-information loop the adapter answers each
  learner's question from the true label, through the annotator the learner reads
  ("is it c?" for one-vs-rest and the Banditron, "a, b or neither?" for one-vs-one), so
  the learner still sees only the feedback it asks for;
- the active multi-task learners (:class:`~medmtl.online.AMLC`, :class:`~medmtl.online.PEER`,
  :class:`~medmtl.online.PEERShare`, :class:`~medmtl.online.RandomQuery`,
  :class:`~medmtl.online.IndependentQuery`), each example's task read from a key of ``x``
  (``task_key``) or fixed (``task``); they buy the label only when they choose to.

SHAMPO and KernelSHAMPO show every task an input on every round, which a stream of single
examples does not hold; they are not wrapped.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Mapping

import numpy as np
from sklearn.base import clone as sklearn_clone

try:
    from river import base as river_base
except ImportError as error:  # pragma: no cover - river is installed where the tests run
    raise ImportError("medmtl.online.river_compat needs river, an optional dependency: pip install river") from error

from medmtl.online.amlc import AMLC
from medmtl.online.bandits import OneVsRestBandit
from medmtl.online.base import OneTaskLearner, OnlineLearner
from medmtl.online.multiclass import MulticlassLearner
from medmtl.online.oracle import LabelOracle

__all__ = ["RiverClassifier"]


_NUMBER_TYPES = frozenset({float, int, bool, np.float64, np.float32, np.int64, np.int32, np.bool_})


def _sorted_names(keys):
    """Feature names in a fixed order whatever the order of the dict: sorted (by repr if mixed)."""
    try:
        return tuple(sorted(keys))
    except TypeError:
        return tuple(sorted(keys, key=repr))


class RiverClassifier(river_base.Classifier):
    """A medmtl per-example online learner as a ``river.base.Classifier``.

    Each ``x`` (a dict of numbers) becomes the dense row the learner reads: the feature names
    are ``features``, or the keys of the first ``x`` learnt from (sorted, so the order of
    the keys never matters); keys not among them are ignored and missing ones are 0. Labels
    are coded by their position in ``classes`` and predictions mapped back. The learner
    given is a template, never changed: the adapter trains a fresh clone of it,
    ``learner_``; so ``river.base.clone(adapter)`` is an unfitted copy with equal parameters.

    Parameters
    ----------
    learner : OnlineLearner
        A multiclass bandit learner (OneVsRestBandit, OneVsOneBandit, Banditron) or an active
        multi-task learner (AMLC, PEER, PEERShare, RandomQuery, IndependentQuery).
    features : sequence of hashable, optional
        The feature names, in the order of the learner's columns. Default: the keys of the
        first ``x`` learnt from (without ``task_key``).
    classes : sequence, optional
        For a multiclass learner, its classes (required: a bandit learner's number of
        classes is fixed on its first round). For a multi-task learner, the labels
        ``(negative, positive)`` of its binary tasks; default ``(-1, 1)`` (use
        ``(False, True)`` for boolean labels).
    task_key : hashable, optional
        Multi-task learners: the key of ``x`` holding the example's task, an integer in
        ``0 .. n_tasks - 1`` (not a feature). Give ``task_key`` or ``task``.
    task : int, optional
        Multi-task learners: the task of every example.
    n_tasks : int, optional
        Multi-task learners: the number of tasks (required).

    Attributes
    ----------
    learner_ : OnlineLearner
        The learner trained (after the first ``learn_one``).
    features_ : tuple
        The feature names used, in column order.

    Examples
    --------
    A Banditron learning three classes from a river stream, scored the river way:

    >>> from river import evaluate, metrics, stream
    >>> from medmtl.online import Banditron
    >>> rng = np.random.default_rng(0)
    >>> labels = rng.choice(["a", "b", "c"], 300)
    >>> X = {"a": [3.0, 0.0], "b": [0.0, 3.0], "c": [-3.0, -3.0]}
    >>> X = np.array([X[c] for c in labels]) + rng.normal(size=(300, 2))
    >>> model = RiverClassifier(Banditron(gamma=0.1, random_state=0), classes=["a", "b", "c"])
    >>> score = evaluate.progressive_val_score(stream.iter_array(X, labels), model, metrics.Accuracy())
    >>> score.get() > 0.8
    True
    >>> model.predict_one({0: 3.0, 1: 0.0})
    'a'

    An AMLC learner, the task of each example in its dict:

    >>> from medmtl.online import AMLC
    >>> amlc = RiverClassifier(AMLC(random_state=0), task_key="task", n_tasks=2)
    >>> amlc.learn_one({"u": 1.0, "v": 0.5, "task": 1}, 1)
    >>> amlc.features_, amlc.predict_one({"u": 1.0, "v": 0.5, "task": 1})
    (('u', 'v'), 1)
    """

    def __init__(self, learner, features=None, classes=None, task_key=None, task=None, n_tasks=None):
        self.learner = learner
        self.features = features
        self.classes = classes
        self.task_key = task_key
        self.task = task
        self.n_tasks = n_tasks
        self._check_params()

    @classmethod
    def _unit_test_params(cls):
        yield {"learner": OneVsRestBandit(b=0.1, random_state=0), "classes": [False, True]}
        yield {"learner": AMLC(random_state=0), "classes": [False, True], "task": 0, "n_tasks": 1}

    @property
    def _multiclass(self):
        return isinstance(self.learner, MulticlassLearner) and len(self._classes) > 2

    # ----------------------------------------------------------------------- checks
    def _check_params(self):
        learner = self.learner
        if not isinstance(learner, OnlineLearner):
            raise TypeError(f"learner must be a medmtl online learner, got {type(learner).__name__}")
        if self.features is not None:
            if isinstance(self.features, (str, bytes)) or not hasattr(self.features, "__iter__"):
                raise TypeError("features must be a sequence of feature names")
            names = tuple(self.features)
            if not names or len(set(names)) != len(names):
                raise ValueError("features must be non-empty names, each once")
        if isinstance(learner, MulticlassLearner):
            if self.task_key is not None or self.task is not None or self.n_tasks is not None:
                raise ValueError(f"{type(learner).__name__} learns one multiclass problem: "
                                 "task_key, task and n_tasks must be None")
            if self.classes is None:
                raise ValueError(f"{type(learner).__name__} needs its classes, e.g. classes=[0, 1, 2]: "
                                 "the number of classes is fixed on its first round")
            self._classes = self._check_classes(self.classes, None)
        elif isinstance(learner, OneTaskLearner):
            self._classes = self._check_classes((-1, 1) if self.classes is None else self.classes, 2)
            n = self.n_tasks
            if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < 1:
                raise ValueError(f"{type(learner).__name__} needs n_tasks, a positive integer; got {n!r}")
            if (self.task_key is None) == (self.task is None):
                raise ValueError("give task_key (the key of x holding each example's task) or task "
                                 "(the task of every example), one of the two")
            if self.task is not None:
                self._check_task(self.task)
        else:
            raise TypeError(f"{type(learner).__name__} shows every task an input on every round; a river stream "
                            "gives one example per round: wrap a per-example learner (a bandit learner, AMLC, "
                            "PEER, RandomQuery, IndependentQuery)")

    @staticmethod
    def _check_classes(classes, size):
        if isinstance(classes, (str, bytes, Mapping)) or not hasattr(classes, "__iter__"):
            raise TypeError(f"classes must be a sequence of labels, got {classes!r}")
        classes = list(classes)
        if not all(isinstance(c, Hashable) for c in classes):
            raise TypeError("classes must be hashable labels")
        if len(classes) < 2 or len(set(classes)) != len(classes):
            raise ValueError(f"classes must hold at least two distinct labels, got {classes!r}")
        if size is not None and len(classes) != size:
            raise ValueError(f"binary tasks need classes=(negative, positive), two labels; got {classes!r}")
        return classes

    def _check_task(self, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or \
                not float(value).is_integer():
            raise TypeError(f"a task must be an integer, got {value!r}")
        if not 0 <= value < self.n_tasks:
            raise ValueError(f"task {value!r} out of range for n_tasks={self.n_tasks}")
        return int(value)

    # --------------------------------------------------------------------- conversions
    def _row(self, x):
        """The learner's dense row of ``x``; the feature names are fixed on the first call."""
        if not isinstance(x, Mapping):
            raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
        if not hasattr(self, "features_"):
            names = tuple(self.features) if self.features is not None else \
                _sorted_names(k for k in x if k != self.task_key)
            if not names:
                raise ValueError("x has no features")
            self.features_ = names
        values = [x.get(name, 0.0) for name in self.features_]
        if not _NUMBER_TYPES.issuperset(map(type, values)):  # the common types pass at C speed
            for name, value in zip(self.features_, values):
                if isinstance(value, (str, bytes)) or not isinstance(value, numbers.Real):
                    raise TypeError(f"feature {name!r} has the non-numeric value {value!r}")
        row = np.array(values, dtype=np.float64)
        if not np.all(np.isfinite(row)):
            bad = self.features_[int(np.flatnonzero(~np.isfinite(row))[0])]
            raise ValueError(f"feature {bad!r} is not finite ({x[bad]!r})")
        return row

    def _code(self, y):
        """The position of label ``y`` in the classes."""
        if not hasattr(self, "_codes"):
            self._codes = {c: i for i, c in enumerate(self._classes)}
        try:
            return self._codes[y]
        except TypeError:
            raise TypeError(f"the label {y!r} ({type(y).__name__}) is not hashable; the classes are "
                            f"{self._classes!r}") from None
        except KeyError:
            raise ValueError(f"the label {y!r} is not one of the classes {self._classes!r}") from None

    def _task_of(self, x):
        if self.task_key is None:
            return int(self.task)
        if not isinstance(x, Mapping) or self.task_key not in x:
            raise ValueError(f"x has no task key {self.task_key!r}")
        return self._check_task(x[self.task_key])

    # ------------------------------------------------------------------ river protocol
    def learn_one(self, x, y):
        """Play one round: the learner predicts, asks what it asks, and learns.

        Parameters
        ----------
        x : dict
            The features (and, with ``task_key``, the task).
        y : label
            One of the classes. The learner reads it only through its annotator.

        Returns
        -------
        None
        """
        row, code = self._row(x), self._code(y)
        task = None if isinstance(self.learner, MulticlassLearner) else self._task_of(x)
        if not hasattr(self, "learner_"):
            self.learner_ = sklearn_clone(self.learner)
        if task is None:
            # each reduction's own annotator: "is it c?", or "a, b or neither?" for one-vs-one
            self.learner_.learn_one(row, oracle=self.learner_._make_oracle(np.array([code]), len(self._classes)),
                                    index=0)
        else:
            oracle = LabelOracle([[1 if code == 1 else -1] if j == task else [] for j in range(self.n_tasks)])
            self.learner_.learn_one(row, task=task, oracle=oracle, index=0)

    def predict_one(self, x):
        """The predicted label of ``x``; None before the first ``learn_one``.

        Parameters
        ----------
        x : dict

        Returns
        -------
        label or None
        """
        if not hasattr(self, "learner_"):
            return None
        row = self._row(x)
        if isinstance(self.learner, MulticlassLearner):
            return self._classes[int(self.learner_.predict_one(row))]
        label = self.learner_.predict_one(row, task=self._task_of(x))
        return self._classes[1 if label == 1 else 0]

    def predict_proba_one(self, x):
        """Hard probabilities: 1 for the predicted label, 0 for the other classes.

        The learners are margin classifiers without a probability model; this lets river's
        metrics that ask for probabilities run. Uniform before the first ``learn_one``.

        Parameters
        ----------
        x : dict

        Returns
        -------
        dict
        """
        predicted = self.predict_one(x)
        if predicted is None:
            return {c: 1.0 / len(self._classes) for c in self._classes}
        return {c: float(c == predicted) for c in self._classes}
