"""AnnotatorSession driven without a browser: button clicks, skips, budget, the notebook."""

import os
from pathlib import Path

import numpy as np
import pytest

from medmtl.datasets import load_usps
from medmtl.online import SHAMPO, AMLC, AnnotatorSession, LabelOracle

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "shampo_annotator.ipynb"


@pytest.fixture(scope="module")
def digits():
    """USPS one-vs-rest for the digits 0, 1, 2: three tasks, 80 rounds."""
    ds = load_usps("test", scheme="one-vs-rest")
    return [ds[c].X[:80] for c in range(3)], [ds[c].y[:80] for c in range(3)]


def same_shampo(a, b):
    return all(np.array_equal(u, v) for u, v in zip(a.coef_, b.coef_)) and \
        np.array_equal(a.queries_per_task_, b.queries_per_task_) and a.n_rounds_ == b.n_rounds_


def test_button_clicks_teach_the_learner(digits):
    pytest.importorskip("ipywidgets")
    Xs, ys = digits
    session = AnnotatorSession(SHAMPO(b=0.5, random_state=0), Xs, budget=25, label_names={1: "yes", -1: "no"},
                               task_names=["zero", "one", "two"])
    session.widget
    assert [b.description for b in session.buttons.values()] == ["yes", "no", "skip"]
    assert "Round 0: what is the label of" in session.status.value and "Labels left: 25" in session.status.value
    clicks = 0
    while session.pending is not None:
        q = session.pending
        assert q.index == session.round and np.array_equal(q.x, Xs[q.task][session.round])
        session.buttons[int(ys[q.task][session.round])].click()
        clicks += 1
        if session.pending is not None:
            assert f"Labels left: {25 - clicks}" in session.status.value
    assert clicks == 25 and session.done == "budget"
    assert all(b.disabled for b in session.buttons.values()) and "the budget is spent" in session.status.value
    # the learner is the one the same 25 labels give in a simulation
    reference = SHAMPO(b=0.5, random_state=0).fit([X[:25] for X in Xs], LabelOracle([y[:25] for y in ys]))
    assert same_shampo(session.learner, reference)
    record = session.oracle.record
    assert len(record) == 25 and [r["index"] for r in record] == list(range(25))
    assert [r["task"] for r in record] == reference.queried_tasks_[:, 0].tolist()
    assert all(r["answer"] == ys[r["task"]][r["index"]] for r in record)
    # accuracy so far: the guesses before each answer (the first one has none)
    hits = np.cumsum([r["prediction"] == r["answer"] for r in record[1:]])
    assert np.isnan(session.accuracy_[0]) and np.allclose(session.accuracy_[1:], hits / np.arange(1, 25))
    with pytest.raises(RuntimeError, match="no question is waiting"):
        session.answer(1)


def test_skip_button_drops_the_round(digits):
    pytest.importorskip("ipywidgets")
    Xs, ys = digits
    session = AnnotatorSession(SHAMPO(random_state=1), Xs)
    session.widget
    skipped = []
    while session.pending is not None and session.round < 30:
        if session.round % 7 == 3:
            skipped.append(session.round)
            session.buttons[None].click()
        else:
            session.buttons[int(ys[session.pending.task][session.round])].click()
    kept = [t for t in range(30) if t not in skipped]
    reference = SHAMPO(random_state=1).fit([X[kept] for X in Xs], [y[kept] for y in ys])
    assert same_shampo(session.learner, reference)
    assert session.oracle.n_skipped == len(skipped) == 4 and len(session.accuracy_) == len(kept)
    assert [r["answer"] is None for r in session.oracle.record].count(True) == 4


def test_auto_answer_evaluate_and_plot(digits):
    Xs, ys = digits

    def pooled_accuracy(learner):
        return learner.score(Xs, ys)

    session = AnnotatorSession(SHAMPO(b=0.5, random_state=0), Xs, evaluate=pooled_accuracy)
    assert session.auto_answer(ys, n=10) == 10 and session.round == 10
    assert session.auto_answer(ys) == 70 and session.done == "stream" and session.pending is None
    assert same_shampo(session.learner, SHAMPO(b=0.5, random_state=0).fit(Xs, ys))
    assert len(session.scores_) == 80 and session.scores_[-1] == session.learner.score(Xs, ys)
    fig = session.plot()
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == ["predicted the answer (so far)", "pooled accuracy"]
    assert len(ax.lines[0].get_xdata()) == 80 and "the stream is over" in session.describe()


def test_two_questions_a_round_are_each_asked_and_recorded_once(digits):
    Xs, ys = digits
    session = AnnotatorSession(SHAMPO(n_queries=2, random_state=0), Xs, budget=40)
    asked = []
    while session.pending is not None:
        asked.append((session.pending.index, session.pending.task))
        session.answer(int(ys[session.pending.task][session.round]))
    assert session.done == "budget" and len(asked) == len(set(asked)) == 40
    record = session.oracle.record
    assert [(r["index"], r["task"]) for r in record] == asked
    reference = SHAMPO(n_queries=2, random_state=0).fit([X[:20] for X in Xs], [y[:20] for y in ys])
    assert same_shampo(session.learner, reference)
    assert sorted(asked) == sorted((t, int(j)) for t in range(20) for j in reference.queried_tasks_[t])


def test_the_callers_data_is_not_changed(digits):
    Xs, ys = digits
    copies = [X.copy() for X in Xs]
    AnnotatorSession(SHAMPO(random_state=0), Xs).auto_answer(ys, n=20)
    assert all(np.array_equal(a, b) for a, b in zip(Xs, copies))


def test_bad_input(digits):
    Xs, ys = digits
    with pytest.raises(TypeError, match="SHAMPO or KernelSHAMPO"):
        AnnotatorSession(AMLC(), Xs)
    with pytest.raises(TypeError, match="list of per-task input matrices"):
        AnnotatorSession(SHAMPO(), Xs[0])
    with pytest.raises(ValueError, match="one input per round"):
        AnnotatorSession(SHAMPO(), [Xs[0], Xs[1][:10]])
    with pytest.raises(ValueError, match="task_names has 2 names for 3 tasks"):
        AnnotatorSession(SHAMPO(), Xs, task_names=["a", "b"])
    with pytest.raises(ValueError, match="label_names must name the labels -1 and"):
        AnnotatorSession(SHAMPO(), Xs, label_names={0: "no", 1: "yes"})
    session = AnnotatorSession(SHAMPO(random_state=0), Xs)
    with pytest.raises(ValueError, match="answer must be -1, \\+1 or None"):
        session.answer(2)
    assert session.round == 0 and not session.learner.__sklearn_is_fitted__()   # it has asked, not learnt


@pytest.mark.slow
def test_the_notebook_runs_headless(notebook_client):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipywidgets")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the kernel inherits this process's environment
    try:
        notebook_client(nb, timeout=600, resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in out.get("data", {}) for out in outputs)
    assert any("image/png" in out.get("data", {}) for out in outputs)
    text = "".join(out.get("text", "") for out in outputs)
    assert "answered 150 questions automatically" in text and "the budget is spent" in text
