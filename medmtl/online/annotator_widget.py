"""A person as SHAMPO's annotator: the questions on screen, the answers from buttons.

:class:`AnnotatorSession` plays a SHAMPO stream round by round, each round in two steps: the
learner's ``query_one`` gives the round's questions, which wait on screen for the buttons;
once every question of the round is answered (:meth:`AnnotatorSession.answer`, what the
buttons call), the round is played with the answers through the session's
:class:`~medmtl.online.live.CallableOracle`, which records them, and the session moves on to
the next round's questions.

The logic needs no widgets; :attr:`AnnotatorSession.widget` builds the ipywidgets view
(the question, one button per label and a skip button, the labels left, the accuracy so
far) on first use.
"""

from __future__ import annotations

import numpy as np

from medmtl.online.kernel_shampo import KernelSHAMPO
from medmtl.online.live import CallableOracle
from medmtl.online.shampo import SHAMPO

__all__ = ["AnnotatorSession"]


class AnnotatorSession:
    """Answer a SHAMPO learner's questions by hand, one click at a time.

    Parameters
    ----------
    learner : SHAMPO or KernelSHAMPO
        Learns in place (every task sees an input on every round; one label is asked).
    Xs : list of array-like or sparse matrix, Xs[j] of shape (n_rounds, n_features_j)
        Row ``t`` of every task is that task's input on round ``t``. Never modified.
    budget : int or None, default=None
        The most labels the person gives.
    task_names : list of str, optional
        How the tasks are named in the question (default ``"task j"``).
    label_names : dict, optional
        The button caption of each label, default ``{1: "+1", -1: "-1"}``.
    render : callable, optional
        ``render(query)`` shows the asked input (it is called inside the widget's output
        area: print, display or draw). Default: a line of numbers.
    evaluate : callable, optional
        ``evaluate(learner) -> float``, e.g. a test accuracy, plotted as the session goes.

    Attributes
    ----------
    oracle : CallableOracle
        The person's oracle: its ``record`` holds every answered question.
    pending : Query or None
        The question waiting for an answer.
    round : int
        The stream row the current (or next) round shows.
    accuracy_ : list of float
        After each answered question: the fraction of the answered questions whose
        label the learner predicted right before the answer (the first question, asked of
        an untrained learner, is not counted).
    scores_ : list of float
        ``evaluate(learner)`` after each round learnt from an answer (empty without
        ``evaluate``).
    done : str or None
        ``"stream"`` or ``"budget"`` once the session is over.

    Examples
    --------
    >>> from medmtl.online import SHAMPO
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 3)) for _ in range(2)]
    >>> ys = [np.where(X[:, 0] > 0, 1, -1) for X in Xs]
    >>> session = AnnotatorSession(SHAMPO(random_state=0), Xs, budget=5)
    >>> q = session.pending
    >>> (q.index, q.task in (0, 1))
    (0, True)
    >>> session.answer(int(ys[q.task][session.round])).index
    1
    >>> session.auto_answer(ys)
    4
    >>> session.done, session.oracle.n_queries, session.learner.n_rounds_
    ('budget', 5, 5)
    """

    def __init__(self, learner, Xs, *, budget=None, task_names=None, label_names=None, render=None,
                 evaluate=None):
        if not isinstance(learner, (SHAMPO, KernelSHAMPO)):
            raise TypeError(f"learner must be a SHAMPO or KernelSHAMPO learner, got {type(learner).__name__}")
        if isinstance(Xs, np.ndarray) or not isinstance(Xs, (list, tuple)) or not Xs:
            raise TypeError("Xs must be a non-empty list of per-task input matrices")
        rounds = {X.shape[0] for X in Xs}
        if len(rounds) != 1:
            raise ValueError(f"every task needs one input per round; the tasks have {sorted(rounds)} rows")
        self.learner = learner
        self.Xs = list(Xs)
        self.n_rounds = rounds.pop()
        self.n_tasks = len(self.Xs)
        self.task_names = [f"task {j}" for j in range(self.n_tasks)] if task_names is None else list(task_names)
        if len(self.task_names) != self.n_tasks:
            raise ValueError(f"task_names has {len(self.task_names)} names for {self.n_tasks} tasks")
        self.label_names = {1: "+1", -1: "-1"} if label_names is None else dict(label_names)
        if set(self.label_names) != {-1, 1}:
            raise ValueError(f"label_names must name the labels -1 and +1, got {sorted(self.label_names)}")
        self.render = render
        self.evaluate = evaluate
        self.oracle = CallableOracle(self._answer, n_tasks=self.n_tasks, budget=budget)
        self.round = 0
        self.pending = None
        self.done = None
        self.accuracy_, self.scores_ = [], []
        self._given = {}     # (task, index) -> the label given to a question of the current round
        self._queue = []     # the current round's questions not answered yet
        self._hits = self._counted = 0
        self._widget, self._quiet = None, False
        self._advance()

    # ------------------------------------------------------------------------ the loop
    def _answer(self, query):
        """The oracle's callable: the label given to ``query`` on the buttons."""
        return self._given[(query.task, query.index)]

    def _inputs(self):
        return [X[self.round] for X in self.Xs]

    def _advance(self):
        """Put the next question up: the current round's next one, or the next round's first."""
        if not self._queue and self.done is None:
            if self.round >= self.n_rounds:
                self.done = "stream"
            else:
                self._queue = self.learner.query_one(self._inputs())
                if len(self._queue) > self.oracle.remaining:
                    self._queue, self.done = [], "budget"
        self.pending = self._queue[0] if self._queue else None
        self._refresh()
        return self.pending

    def _play_round(self):
        """Play the current round with the answers given (a skip drops it); move to the next."""
        self.learner.learn_one(self._inputs(), oracle=self.oracle)
        self._given.clear()
        self._queue = []
        self.round += 1

    def answer(self, label):
        """Answer the pending question and move on to the next one (what the buttons call).

        Parameters
        ----------
        label : {-1, 1} or None
            The label; None skips the question, which drops the round.

        Returns
        -------
        Query or None
            The next question (None when the session is over).
        """
        if self.pending is None:
            raise RuntimeError(f"no question is waiting for an answer (the session is over: {self.done})")
        if label is not None and (isinstance(label, bool) or label not in (-1, 1)):
            raise ValueError(f"the answer must be -1, +1 or None (skip), got {label!r}")
        query = self._queue.pop(0)
        self._given[(query.task, query.index)] = None if label is None else int(label)
        if label is not None:
            if query.prediction is not None:
                self._counted += 1
                self._hits += int(query.prediction == label)
            self.accuracy_.append(self._hits / self._counted if self._counted else np.nan)
        if label is None or not self._queue:
            self._play_round()
            if label is not None and self.evaluate is not None:
                self.scores_.append(float(self.evaluate(self.learner)))
        return self._advance()

    def skip(self):
        """Skip the pending question (the round is dropped) and play on; see :meth:`answer`."""
        return self.answer(None)

    def auto_answer(self, ys, n=None):
        """Answer the next ``n`` questions (default: all) from the true labels.

        For a run without a person (a notebook run headless, a test).

        Parameters
        ----------
        ys : list of array-like of labels in {-1, +1}
            Each task's labels, one per round.
        n : int, optional

        Returns
        -------
        answered : int
        """
        answered, self._quiet = 0, True   # redraw the widgets once, at the end
        try:
            while self.pending is not None and (n is None or answered < n):
                self.answer(int(ys[self.pending.task][self.round]))
                answered += 1
        finally:
            self._quiet = False
            self._refresh()
        return answered

    # ------------------------------------------------------------------------- the view
    def describe(self):
        """One line on the state of the session: the question, or why it is over.

        Returns
        -------
        str
        """
        left = self.oracle.remaining
        left = "no limit" if left == float("inf") else str(int(left))
        if self.pending is None:
            end = {"budget": "the budget is spent", "stream": "the stream is over"}.get(self.done, "")
            return f"Done: {end}. Labels given: {self.oracle.n_queries}, labels left: {left}."
        q = self.pending
        guess = "no guess yet" if q.prediction is None else \
            f"the learner says {self.label_names[q.prediction]} (margin {q.margin:+.3f})"
        return (f"Round {self.round}: what is the label of {self.task_names[q.task]}? {guess}. "
                f"Labels left: {left}.")

    def plot(self, ax=None):
        """Plot the accuracy so far (and ``evaluate``'s scores, under its name) against the labels given.

        Parameters
        ----------
        ax : matplotlib Axes, optional

        Returns
        -------
        matplotlib.figure.Figure
        """
        import matplotlib.pyplot as plt

        if ax is None:
            fig, ax = plt.subplots(figsize=(6, 3))
        else:
            fig = ax.figure
        x = np.arange(1, len(self.accuracy_) + 1)
        ax.plot(x, self.accuracy_, "b-", label="predicted the answer (so far)")
        if self.scores_:
            name = getattr(self.evaluate, "__name__", "<lambda>")
            name = "evaluate(learner)" if name.startswith("<") else name.replace("_", " ")
            ax.plot(np.arange(1, len(self.scores_) + 1), self.scores_, "r--", label=name)
        ax.set_xlabel("labels given")
        ax.set_ylabel("accuracy")
        ax.set_ylim(0, 1.02)
        ax.legend(loc="best")
        return fig

    @property
    def widget(self):
        """The ipywidgets view: the question, the input, the buttons, the accuracy plot."""
        if self._widget is None:
            import ipywidgets as widgets

            self.buttons = {}
            for label in (1, -1):
                button = widgets.Button(description=str(self.label_names[label]))
                button.on_click(lambda _, label=label: self.answer(label))
                self.buttons[label] = button
            self.buttons[None] = widgets.Button(description="skip")
            self.buttons[None].on_click(lambda _: self.skip())
            self.status = widgets.HTML()
            self.input_view = widgets.Output()
            self.plot_view = widgets.Output()
            self._widget = widgets.VBox([self.status, self.input_view, widgets.HBox(list(self.buttons.values())),
                                         self.plot_view])
            self._refresh()
        return self._widget

    def _refresh(self):
        """Redraw the widgets (if built) for the current question."""
        if self._widget is None or self._quiet:
            return
        from IPython.display import clear_output, display

        self.status.value = self.describe()
        for button in self.buttons.values():
            button.disabled = self.pending is None
        with self.input_view:
            clear_output(wait=True)
            if self.pending is not None:
                if self.render is not None:
                    self.render(self.pending)
                else:
                    print(np.array2string(np.asarray(self.pending.x.todense() if hasattr(self.pending.x, "todense")
                                                     else self.pending.x).ravel(), precision=2, threshold=20))
        with self.plot_view:
            clear_output(wait=True)
            if self.accuracy_:
                import matplotlib.pyplot as plt

                fig = self.plot()
                display(fig)
                plt.close(fig)
