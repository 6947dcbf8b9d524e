"""The output contract every experiment follows: ``NAME.json`` and ``NAME.png``.

The JSON holds ``name``, ``settings`` (data, sizes, folds, grids, seed, quick or full),
``x`` (the values along the horizontal axis), ``measured`` (method -> list aligned with
``x``), ``measured_std`` (the same keys, spread over folds or repetitions), ``paper`` (the
same keys where the paper gives numbers, ``None`` entries where it does not), and ``extra``
for anything else an experiment reports (tables, selected hyper-parameters, timings).
The figure draws the measured values (curves with error bars, or bars for categories) and
the paper's values as markers; a quick run's figure says it is one.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["ExperimentResult", "load_result", "legend_below", "mark_quick", "QUICK_MARK"]


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return None if math.isnan(value) else value
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


QUICK_MARK = "quick run: reduced grid, not the paper's protocol"
_QUICK_GID = "medmtl-quick-mark"


def mark_quick(figure):
    """Write :data:`QUICK_MARK` in the lower left corner of ``figure`` (once).

    A quick run's figure looks like the paper's figure; the mark keeps it from being read
    as one.

    Parameters
    ----------
    figure : matplotlib.figure.Figure

    Returns
    -------
    matplotlib.figure.Figure
        ``figure`` itself.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> figure = mark_quick(mark_quick(Figure()))
    >>> [text.get_text() for text in figure.texts]
    ["quick run: reduced grid, not the paper's protocol"]
    """
    if not any(text.get_gid() == _QUICK_GID for text in figure.texts):
        figure.text(0.005, 0.005, QUICK_MARK, ha="left", va="bottom", fontsize=8, fontweight="bold",
                    color="tab:red", gid=_QUICK_GID,
                    bbox={"facecolor": "white", "edgecolor": "tab:red", "alpha": 0.85, "pad": 2})
    return figure


def _floats(values, n):
    """``values`` as floats with NaN for ``None`` (all NaN if ``values`` is None)."""
    if values is None:
        return np.full(n, np.nan)
    return np.array([np.nan if v is None else v for v in values], float)


def _shown(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def legend_below(ax, ncol=3):
    """Put ``ax``'s legend under the axes and their x label, where it cannot cover a curve or a
    label.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes whose labelled artists the legend lists.
    ncol : int, default=3
        Columns of the legend.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``.
    """
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=ncol)
    return ax


@dataclass
class ExperimentResult:
    """What one experiment measured, beside what the paper reports.

    Parameters
    ----------
    name : str
        The registered name.
    settings : dict
        Everything that defines the run (data, sizes, folds, grids, ``seed``, ``quick``).
    x : list
        The values along the horizontal axis: numbers, or strings for categories.
    measured : dict
        Method -> list aligned with ``x``.
    measured_std : dict, optional
        The same keys: the spread over folds or repetitions.
    paper : dict, optional
        The same keys where the paper gives numbers, ``None`` entries where it does not.
    xlabel, ylabel, title : str, optional
        How to label the figure and the summary.
    xscale : str, default="linear"
        The horizontal axis's scale for numbers along ``x``.
    extra : dict, optional
        Anything else: tables, chosen hyper-parameters, per-cell records.

    Examples
    --------
    >>> import tempfile
    >>> r = ExperimentResult("demo", settings={"seed": 0, "quick": True}, x=[1, 2],
    ...                      measured={"ours": [0.5, 0.7]}, measured_std={"ours": [0.1, 0.1]},
    ...                      paper={"ours": [0.6, None]}, xlabel="n", ylabel="AUC")
    >>> paths = r.save(tempfile.mkdtemp())
    >>> load_result(paths[0]).measured["ours"]
    [0.5, 0.7]
    >>> print(r.summary())
    demo: AUC (quick run: reduced grid, not the paper's protocol)
      x = n  method  measured  std  paper
      1      ours    0.5       0.1  0.6
      2      ours    0.7       0.1  -
    """

    name: str
    settings: dict
    x: list
    measured: dict
    measured_std: dict = field(default_factory=dict)
    paper: dict = field(default_factory=dict)
    xlabel: str = ""
    ylabel: str = ""
    title: str = ""
    xscale: str = "linear"
    extra: dict = field(default_factory=dict)

    @property
    def quick(self):
        """Whether this is a quick run (``settings["quick"]``)."""
        return bool(self.settings.get("quick", False))

    def to_dict(self):
        """The result as plain JSON data: NumPy values as Python ones, NaN as None."""
        return _jsonable(asdict(self))

    def plot(self, ax=None, legend="inside"):
        """Draw the measured values and the paper's numbers.

        Numbers along x give lines with error bars (the spread in ``measured_std``);
        categories (strings) along x give grouped bars, since no line joins categories. The
        paper's numbers are black markers at the same places; a quick run's figure carries
        :func:`mark_quick`.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new pyplot figure (so that a notebook shows it once).
        legend : {"inside", "below"}, default="inside"
            Where the legend goes: matplotlib's choice inside the axes, or under them
            (:func:`legend_below`), where it cannot cover the data.

        Returns
        -------
        matplotlib.axes.Axes
        """
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(6, 4))
        n = len(self.x)
        categorical = any(isinstance(v, str) for v in self.x)
        if categorical:
            x = np.arange(n, dtype=float)
            width = 0.8 / max(1, len(self.measured))
        else:
            x = np.asarray(self.x, float)
            ax.set_xscale(self.xscale)
        paper_label = "paper"
        for i, (method, values) in enumerate(self.measured.items()):
            color = f"C{i % 10}"
            y, std = _floats(values, n), self.measured_std.get(method)
            std = None if std is None else _floats(std, n)
            if categorical:
                at = x - 0.4 + (i + 0.5) * width
                ax.bar(at, y, width, yerr=std, capsize=2, color=color, label=method)
            else:
                at = x
                ax.errorbar(at, y, yerr=std, color=color, capsize=3, marker=".", label=f"{method} (measured)")
            paper = _floats(self.paper.get(method), n)
            if np.isfinite(paper).any():
                ax.plot(at, paper, linestyle="none", marker="D" if categorical else "o", mfc="none",
                        mec="black" if categorical else color, markersize=5,
                        label=paper_label if categorical else f"{method} (paper)")
                paper_label = None if categorical else paper_label
        if categorical:
            ax.set_xticks(x, self.x, rotation=30 if n > 3 else 0, ha="right" if n > 3 else "center")
        ax.set_xlabel(self.xlabel)
        ax.set_ylabel(self.ylabel)
        ax.set_title(self.title or self.name)
        ax.grid(alpha=0.3, axis="y" if categorical else "both")
        if legend == "below":
            legend_below(ax, ncol=1)
        else:
            ax.legend(fontsize=7)
        if self.quick:
            mark_quick(ax.figure)
        return ax

    def summary(self):
        """The result as labelled text: per x value and method, measured, std and paper.

        Returns
        -------
        str
            What ``medmtl reproduce NAME`` prints at the end (see the class's example).
        """
        n = len(self.x)
        rows = [(f"x = {self.xlabel or 'x'}", "method", "measured", "std", "paper")]
        for j in range(n):
            for method, values in self.measured.items():
                std, paper = self.measured_std.get(method), self.paper.get(method)
                rows.append((_shown(self.x[j]), method, _shown(values[j]),
                             _shown(std[j] if std is not None else None),
                             _shown(paper[j] if paper is not None else None)))
        widths = [max(len(row[k]) for row in rows) for k in range(5)]
        head = f"{self.name}: {self.ylabel or 'measured'}" + (f" ({QUICK_MARK})" if self.quick else "")
        lines = ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        return "\n".join([head, *lines])

    def save(self, out_dir, figure=None):
        """Write ``NAME.json`` and ``NAME.png`` into ``out_dir``.

        Parameters
        ----------
        out_dir : str or path
            The output directory (created if needed).
        figure : matplotlib.figure.Figure, optional
            A figure drawn by the experiment itself (ROC curves and the like); by default
            :meth:`plot` draws one on a figure of its own, outside pyplot (nothing is left
            open, the matplotlib backend is not touched).

        Returns
        -------
        json_path, png_path : pathlib.Path
        """
        from matplotlib.figure import Figure

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        json_path, png_path = out / f"{self.name}.json", out / f"{self.name}.png"
        json_path.write_text(json.dumps(self.to_dict(), indent=2))
        if figure is None:
            figure = Figure(figsize=(6, 4))
            self.plot(ax=figure.subplots())
        if figure.get_layout_engine() is None:  # a figure that set its own layout keeps it
            figure.tight_layout()
        figure.savefig(png_path, dpi=110)
        return json_path, png_path


def load_result(path):
    """Read an ``ExperimentResult`` back from its JSON file.

    Parameters
    ----------
    path : str or path
        A ``NAME.json`` written by :meth:`ExperimentResult.save`.

    Returns
    -------
    ExperimentResult
    """
    return ExperimentResult(**json.loads(Path(path).read_text()))
