"""The output contract every experiment follows: ``NAME.json`` and ``NAME.png``.

The JSON holds ``name``, ``settings`` (data, sizes, folds, grids, seed, quick or full),
``x`` (the values along the horizontal axis), ``measured`` (method -> list aligned with
``x``), ``measured_std`` (the same keys, spread over folds or repetitions), ``paper`` (the
same keys where the paper gives numbers, ``None`` entries where it does not), and ``extra``
for anything else an experiment reports (tables, selected hyper-parameters, timings).
The figure draws the measured curves with error bars and the paper's values as markers.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["ExperimentResult", "load_result"]


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


@dataclass
class ExperimentResult:
    """What one experiment measured, beside what the paper reports.

    Examples
    --------
    >>> import tempfile
    >>> r = ExperimentResult("demo", settings={"seed": 0}, x=[1, 2],
    ...                      measured={"ours": [0.5, 0.7]}, measured_std={"ours": [0.1, 0.1]},
    ...                      paper={"ours": [0.6, None]}, xlabel="n", ylabel="AUC")
    >>> paths = r.save(tempfile.mkdtemp())
    >>> load_result(paths[0]).measured["ours"]
    [0.5, 0.7]
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

    def to_dict(self):
        return _jsonable(asdict(self))

    def plot(self, ax=None):
        """Draw measured curves (lines, error bars) and the paper's numbers (markers)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        x = np.arange(len(self.x)) if any(isinstance(v, str) for v in self.x) else np.asarray(self.x, float)
        for i, (method, values) in enumerate(self.measured.items()):
            color = f"C{i % 10}"
            y = np.array([np.nan if v is None else v for v in values], float)
            std = self.measured_std.get(method)
            if std is not None:
                std = np.array([np.nan if v is None else v for v in std], float)
                ax.errorbar(x, y, yerr=std, color=color, capsize=3, label=f"{method} (measured)")
            else:
                ax.plot(x, y, color=color, label=f"{method} (measured)")
            paper = self.paper.get(method)
            if paper is not None:
                p = np.array([np.nan if v is None else v for v in paper], float)
                if np.isfinite(p).any():
                    ax.plot(x, p, linestyle="none", marker="o", mfc="none", color=color,
                            label=f"{method} (paper)")
        if any(isinstance(v, str) for v in self.x):
            ax.set_xticks(x, self.x, rotation=30, ha="right")
        ax.set_xscale(self.xscale)
        ax.set_xlabel(self.xlabel)
        ax.set_ylabel(self.ylabel)
        ax.set_title(self.title or self.name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        return ax

    def save(self, out_dir, figure=None):
        """Write ``NAME.json`` and ``NAME.png`` into ``out_dir``; return both paths.

        ``figure`` is an optional matplotlib figure drawn by the experiment itself (for
        ROC curves and the like); by default :meth:`plot` draws one.
        """
        import matplotlib.pyplot as plt

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        json_path, png_path = out / f"{self.name}.json", out / f"{self.name}.png"
        json_path.write_text(json.dumps(self.to_dict(), indent=2))
        if figure is None:
            figure = self.plot().figure
        figure.tight_layout()
        figure.savefig(png_path, dpi=110)
        plt.close(figure)
        return json_path, png_path


def load_result(path):
    """Read an ``ExperimentResult`` back from its JSON file."""
    return ExperimentResult(**json.loads(Path(path).read_text()))
