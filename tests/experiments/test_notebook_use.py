"""The experiments in a researcher's notebook: the matplotlib backend left alone, figures shown
once, quick figures marked, tables drawn as tables, tqdm's bar only where somebody watches."""

import io
import os
import re
import sys
import warnings
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

import medmtl
from medmtl.experiments import registry, runner
from medmtl.experiments.result import QUICK_MARK, ExperimentResult
from medmtl.experiments.runner import RunOptions

INLINE = "module://matplotlib_inline.backend_inline"


@registry.register("test-notebook-toy", "a toy drawing its own figure through pyplot")
def toy(options=RunOptions()):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    return ExperimentResult("test-notebook-toy", {"quick": options.quick}, [1, 2], {"a": [0.5, 0.6]},
                            paper={"a": [0.55, None]}), fig


def quick_marks(figure):
    return [t for t in figure.texts if t.get_text() == QUICK_MARK]


def fake_fold(rng):
    ys = [rng.integers(0, 2, 30) * 2 - 1 for _ in range(6)]
    scores = {m: [rng.normal(size=30) for _ in range(6)] for m in ("multitask", "independent")}
    return {"test_y": ys, "test_scores": scores, "task_names": list("abcdef")}


@pytest.fixture
def inline_backend():
    pytest.importorskip("matplotlib_inline")
    before = matplotlib.get_backend()
    matplotlib.use(INLINE, force=True)
    try:
        yield
    finally:
        matplotlib.use(before, force=True)


def test_running_and_saving_never_changes_the_backend(inline_backend, tmp_path):
    from medmtl.experiments.demo import plot_roc

    registry.run("test-notebook-toy", out=tmp_path, quick=True)
    result = registry.run("shampo-table1", out=tmp_path, quick=True)
    result.save(tmp_path / "again")
    plot_roc(fake_fold(np.random.default_rng(0)), tmp_path / "roc.png")
    assert matplotlib.get_backend() == INLINE
    assert (tmp_path / "roc.png").stat().st_size > 1000


def test_no_module_switches_the_backend():
    # the backend belongs to the user
    package = Path(medmtl.__file__).parent
    offenders = [str(path.relative_to(package)) for path in package.rglob("*.py")
                 if re.search(r"matplotlib\.use\(|switch_backend\(|rcParams\[.backend.\]\s*=", path.read_text())]
    assert offenders == []


def test_returned_figures_are_detached_from_pyplot(tmp_path):
    plt.close("all")
    result, figure = registry.get("test-notebook-toy")(RunOptions())
    assert plt.get_fignums() == [] and isinstance(figure, Figure)
    registry.run("test-notebook-toy", out=tmp_path)
    registry.run("test-notebook-toy")
    result.save(tmp_path)
    assert plt.get_fignums() == []


def test_quick_figures_say_so_and_full_ones_do_not():
    _, quick = registry.get("test-notebook-toy")(RunOptions(quick=True))
    _, full = registry.get("test-notebook-toy")(RunOptions())
    assert len(quick_marks(quick)) == 1 and quick_marks(full) == []
    r = ExperimentResult("r", {"quick": True}, [1, 2], {"a": [1.0, 2.0]})
    ax = r.plot(ax=Figure().subplots())
    r.plot(ax=ax)
    assert len(quick_marks(ax.figure)) == 1


def test_categories_are_bars_with_their_names_and_paper_markers():
    r = ExperimentResult("cat", {}, ["USPS 1 vs 1", "MNIST", "MIXED"],
                         {"a": [1.0, 2.0, 3.0], "b": [2.0, None, 1.0]}, {"a": [0.1, 0.1, 0.1]},
                         {"a": [1.5, None, 2.5], "b": None}, xscale="log")
    ax = r.plot(ax=Figure().subplots())
    assert [t.get_text() for t in ax.get_xticklabels()] == r.x
    assert len(ax.patches) == 6 and ax.get_xscale() == "linear"
    markers = [line for line in ax.lines if line.get_marker() == "D"]
    assert len(markers) == 1 and np.allclose(markers[0].get_ydata(), [1.5, np.nan, 2.5], equal_nan=True)


def test_numbers_along_x_are_curves_on_their_scale_with_paper_markers():
    r = ExperimentResult("num", {}, [0.01, 0.1, 1.0], {"a": [1.0, 2.0, 3.0]}, paper={"a": [1.1, None, 2.9]},
                         xscale="log")
    ax = r.plot(ax=Figure().subplots())
    assert ax.get_xscale() == "log"
    paper = [line for line in ax.lines if line.get_marker() == "o" and line.get_linestyle() == "None"]
    assert len(paper) == 1 and paper[0].get_label() == "a (paper)"


def test_the_console_summary_labels_every_number():
    r = ExperimentResult("s", {"quick": False}, ["a", "b"], {"m": [0.123456, None]}, {"m": [0.01, 0.02]},
                         {"m": [0.2, None]}, xlabel="collection", ylabel="error (%)")
    assert r.summary().splitlines() == [
        "s: error (%)",
        "  x = collection  method  measured  std   paper",
        "  a               m       0.1235    0.01  0.2",
        "  b               m       -         0.02  -"]


def test_shampo_table1_is_a_table_with_its_names():
    from medmtl.experiments.shampo import COLLECTIONS, METHODS, PAPER_TABLE1

    plt.close("all")
    result, figure = registry.get("shampo-table1")(RunOptions(quick=True))
    assert isinstance(figure, Figure) and plt.get_fignums() == []
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == COLLECTIONS + ["mean score rank"]
    assert [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()] == METHODS
    cells = [t.get_text() for t in ax.texts]
    assert len(cells) == len(METHODS) * (len(COLLECTIONS) + 1)
    assert cells[0] == f"{result.measured[METHODS[0]][0]:.2f}\n({PAPER_TABLE1[COLLECTIONS[0]][0]:.2f})"
    assert len(quick_marks(figure)) == 1


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_where_somebody_watches_a_full_run(monkeypatch):
    from tqdm.std import tqdm as text_bar

    full = RunOptions()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.setattr(sys, "stderr", io.StringIO())
        assert runner._progress_bar(full, 3, 0, "x") is None                      # a log file
        monkeypatch.setattr(sys, "stderr", Terminal())
        assert runner._progress_bar(RunOptions(quick=True), 3, 0, "x") is None    # quick
        assert runner._progress_bar(RunOptions(progress=False), 3, 0, "x") is None
        bar = runner._progress_bar(full, 3, 1, "x")
        assert type(bar) is text_bar and bar.n == 1
        bar.close()

        monkeypatch.setattr(runner, "_in_notebook_kernel", lambda: True)
        monkeypatch.setitem(sys.modules, "ipywidgets", None)                        # not installed
        assert runner._progress_bar(full, 3, 0, "x") is None


@pytest.mark.slow
def test_notebook_kernel_shows_each_figure_once_with_the_inline_backend(tmp_path, notebook_client):
    """A notebook run by a kernel, inline backend, no MPLBACKEND."""
    nbformat = pytest.importorskip("nbformat")
    widgets = pytest.importorskip("importlib").util.find_spec("ipywidgets") is not None
    cells = [
        "%matplotlib inline\nimport matplotlib, operator\nimport matplotlib.pyplot as plt\n"
        "from medmtl.experiments import registry\nfrom medmtl.experiments.runner import RunOptions, run_grid",
        f"r = registry.run('shampo-queries', quick=True, out={str(tmp_path)!r})\nprint(matplotlib.get_backend())",
        "r.plot()",
        "result, figure = registry.get('shampo-queries')(RunOptions(quick=True))\nfigure",
        "result, table = registry.get('shampo-table1')(RunOptions(quick=True))\ntable",
        "plt.plot([1, 2, 3]);",
        f"run_grid(operator.itemgetter('a'), [{{'a': 1}}, {{'a': 2}}], name='bar', "
        f"options=RunOptions(cache_dir={str(tmp_path)!r}))",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    client = notebook_client(nb, timeout=300)
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the kernel inherits this process's environment
    try:
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)

    def count(cell, mime):
        return sum(mime in out.get("data", {}) for out in cell.outputs)

    assert [count(c, "image/png") for c in nb.cells] == [0, 0, 1, 1, 1, 1, 0]
    assert nb.cells[1].outputs[0]["text"].strip() == "inline"
    assert count(nb.cells[-1], "application/vnd.jupyter.widget-view+json") == int(widgets)
    stderr = [out["text"] for c in nb.cells for out in c.outputs if out.get("name") == "stderr"]
    assert not any("Warning" in text for text in stderr), stderr
