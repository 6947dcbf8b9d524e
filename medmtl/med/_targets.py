"""What the MED estimators predict: binary labels or real values (the target kinds).

A target kind checks and encodes the training targets (``+-1`` signs or reals), turns the
dual's multipliers into each task's example weights and ``dual_coef_``, decodes decision
values into predictions, and scores them. The kind made at fit holds what decoding needs
(each task's two classes).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
from sklearn.metrics import r2_score

from .._validation import check_binary_labels, check_labels, check_real_targets, refuse_iterator
from ._task_inputs import refuse_unreal

__all__ = ["TargetKind", "BinaryLabels", "RealTargets"]


class TargetKind(ABC):
    """A kind of target: how an estimator checks, encodes, decodes and scores its targets.

    An estimator names its kind (``_target_kind``); at fit, :meth:`encode_stacked` or
    :meth:`encode_lists` returns the kind holding what decoding needs, with the encoded
    targets the dual is built from.

    Attributes
    ----------
    regression : bool
        Real targets (two multipliers per example) rather than labels.
    """

    regression = False

    @staticmethod
    @abstractmethod
    def refuse_raw(y):
        """Raise for stacked targets that a float conversion would misread."""

    @classmethod
    @abstractmethod
    def encode_stacked(cls, y, rows, labels):
        """The kind and each task's encoded targets, from the targets of a stacked ``X``.

        Parameters
        ----------
        y : ndarray of shape (n_samples,)
        rows : list of ndarray of int
            Each task's rows.
        labels : ndarray of shape (n_tasks,)
            The task labels (for messages).

        Returns
        -------
        kind : TargetKind
        targets : list of ndarray
        """

    @classmethod
    @abstractmethod
    def encode_lists(cls, Xs, ys):
        """The kind and each task's encoded targets, from per-task lists."""

    @abstractmethod
    def attributes(self):
        """The estimator's fitted attributes this kind sets (``classes_``), as a dict."""

    @abstractmethod
    def decode(self, f, m):
        """Task ``m``'s predictions from its decision values ``f``."""

    @staticmethod
    @abstractmethod
    def true_targets(y, n_samples, name):
        """Checked true targets for scoring."""

    @staticmethod
    @abstractmethod
    def task_score(y, predictions):
        """One task's score: accuracy or R^2."""

    @staticmethod
    @abstractmethod
    def example_weights(lam, target):
        """One task's example weights in its predictor, from its multipliers ``lam``."""

    @staticmethod
    @abstractmethod
    def dual_coef(lam, groups):
        """``dual_coef_`` from all multipliers and each task's indices in them."""


class BinaryLabels(TargetKind):
    """Two labels per task, encoded as -1 / +1 (the classifiers).

    ``classes_`` is one array of two labels when fitted on one ``X`` (every task has both),
    and a list of each task's two labels when fitted on per-task lists.

    Parameters
    ----------
    classes : ndarray of shape (2,) or list of them
        ``classes_``.
    task_classes : list of ndarray of shape (2,)
        Each task's two labels.
    """

    def __init__(self, classes, task_classes):
        self.classes, self.task_classes = classes, task_classes

    @staticmethod
    def refuse_raw(y):
        refuse_iterator(y, "y")
        if y is not None and np.asarray(y).dtype.kind == "c":
            raise ValueError("Complex data not supported: y holds complex numbers; use integers or strings as labels")

    @classmethod
    def encode_stacked(cls, y, rows, labels):
        classes, signs = check_binary_labels(y, y.shape[0])
        for m, r in enumerate(rows):
            if np.unique(signs[r]).size < 2:
                raise ValueError(f"task {labels.tolist()[m]!r} has only one class "
                                 f"({classes.tolist()[int(signs[r[0]] > 0)]!r}); every task needs examples of both "
                                 "classes")
        return cls(classes, [classes] * len(rows)), [signs[r] for r in rows]

    @classmethod
    def encode_lists(cls, Xs, ys):
        encoded = [check_binary_labels(y, X.shape[0], name="ys", task=m) for m, (X, y) in enumerate(zip(Xs, ys))]
        task_classes = [classes for classes, _ in encoded]
        return cls(task_classes, task_classes), [signs for _, signs in encoded]

    def attributes(self):
        return {"classes_": self.classes}

    def decode(self, f, m):
        """``classes[1]`` where the score is positive, else ``classes[0]``."""
        return self.task_classes[m][(f > 0).astype(int)]

    @staticmethod
    def true_targets(y, n_samples, name):
        return check_labels(y, n_samples, name)

    @staticmethod
    def task_score(y, predictions):
        return float(np.mean(predictions == y))

    @staticmethod
    def example_weights(lam, target):
        """``y_t lam_t``."""
        return target * lam

    @staticmethod
    def dual_coef(lam, groups):
        return lam.copy()


class RealTargets(TargetKind):
    """Real values (the regressors): two multipliers per example, ``lam`` and ``lam*``."""

    regression = True

    @staticmethod
    def refuse_raw(y):
        refuse_iterator(y, "y")
        if y is not None:
            refuse_unreal(y, "y")

    @classmethod
    def encode_stacked(cls, y, rows, labels):
        y = check_real_targets(y)
        return cls(), [y[r] for r in rows]

    @classmethod
    def encode_lists(cls, Xs, ys):
        return cls(), [check_real_targets(y, X.shape[0], name=f"ys[{m}]") for m, (X, y) in enumerate(zip(Xs, ys))]

    def attributes(self):
        return {}

    def decode(self, f, m):
        return f

    @staticmethod
    def true_targets(y, n_samples, name):
        return check_real_targets(y, n_samples, name)

    @staticmethod
    def task_score(y, predictions):
        return float(r2_score(y, predictions))

    @staticmethod
    def example_weights(lam, target):
        """``lam_t - lam*_t``."""
        T = target.size
        return lam[:T] - lam[T:]

    @staticmethod
    def dual_coef(lam, groups):
        """Row 0 ``lam``, row 1 ``lam*``, tasks side by side."""
        return np.hstack([lam[g].reshape(2, -1) for g in groups])
