"""Export a benchopt run of this benchmark: a CSV of every point and a convergence figure.

    python benchmarks/benchopt/export_results.py RUN.parquet \\
        --csv benchmarks/results/benchopt_med.csv --png docs/_static/benchopt_med.png

The figure has one panel per dataset: for each solver, the median over repetitions of the
time to reach each iteration budget (x) against the suboptimality ``J* - J`` (y, log scale),
``J*`` being the largest ``J`` any solver reached on that dataset. Points at or below
``1e-10 |J*|`` are drawn at that floor. The script also prints, as a Markdown table, each
solver's time to the first budget whose ``J`` is within ``1e-6 |J*|`` of ``J*`` in every
repetition (median and range over the repetitions).
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

COLUMNS = {"dataset_name": "dataset", "solver_name": "solver", "idx_rep": "repetition", "stop_val": "stop_val",
           "time": "time", "objective_J": "J", "objective_value": "value",
           "objective_duality_gap": "duality_gap", "objective_infeasibility": "infeasibility"}
FLOOR = 1e-10


def points(run):
    """The run's points with the columns of :data:`COLUMNS`, sorted."""
    frame = pd.read_parquet(run)[list(COLUMNS)].rename(columns=COLUMNS)
    return frame.sort_values(["dataset", "solver", "repetition", "stop_val"]).reset_index(drop=True)


def curves(frame):
    """Per dataset and solver: median time and median J over repetitions at each budget, and
    the suboptimality against the best J on the dataset."""
    best = frame.groupby("dataset")["J"].transform("max")
    frame = frame.assign(suboptimality=(best - frame["J"]).clip(lower=FLOOR * best.abs()))
    keys = ["dataset", "solver", "stop_val"]
    return frame.groupby(keys, as_index=False)[["time", "J", "suboptimality"]].median()


def label(solver):
    """A solver's short name: the method for medmtl's, ``CVXPY + Clarabel`` for the other."""
    return solver.split("=", 1)[1].rstrip("]") if "method=" in solver else "CVXPY + Clarabel"


def time_to(frame, rtol=1e-6):
    """Per dataset and solver: the time to the first budget whose ``J`` is within
    ``rtol |J*|`` in every repetition, as (median, min, max) seconds, or None."""
    best = frame.groupby("dataset")["J"].transform("max")
    frame = frame.assign(done=best - frame["J"] <= rtol * best.abs())
    out = {}
    for (dataset, solver), part in frame.groupby(["dataset", "solver"]):
        budgets = part.groupby("stop_val")["done"].all()
        reached = budgets[budgets].index
        times = part[part["stop_val"] == reached.min()]["time"] if len(reached) else None
        out[dataset, solver] = None if times is None else (times.median(), times.min(), times.max())
    return out


def table(frame, rtol=1e-6):
    """:func:`time_to` as a Markdown table, one row per solver, one column per dataset."""
    times = time_to(frame, rtol)
    datasets = sorted({d for d, _ in times})
    lines = ["| solver | " + " | ".join(d.split("[")[0] for d in datasets) + " |",
             "| --- |" + " --- |" * len(datasets)]
    for solver in sorted({s for _, s in times}, key=label):
        cells = [times[d, solver] for d in datasets]
        lines.append(f"| {label(solver)} | " + " | ".join(
            "not reached" if c is None else f"{c[0]:.3g} s ({c[1]:.3g}-{c[2]:.3g})" for c in cells) + " |")
    return "\n".join(lines)


def figure(frame, path):
    """The convergence figure, one panel per dataset."""
    summary = curves(frame)
    datasets = sorted(summary["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(6.2 * len(datasets), 4.6), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        part = summary[summary["dataset"] == dataset]
        for solver, curve in part.groupby("solver"):
            curve = curve[curve["stop_val"] > 0].sort_values("stop_val")
            ax.loglog(curve["time"], curve["suboptimality"], marker="o", markersize=3, label=label(solver))
        floor = FLOOR * abs(part["J"].max())
        ax.axhline(floor, color="0.6", linewidth=0.8, linestyle=":")
        ax.set_title(dataset.replace(",", ", "), fontsize=9)
        ax.set_xlabel("time (s, median of the repetitions)")
        ax.set_ylabel("J* - J (J* the best J reached)")
        ax.grid(True, which="major", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the parquet file benchopt run wrote")
    parser.add_argument("--csv", type=Path, required=True)
    parser.add_argument("--png", type=Path, required=True)
    args = parser.parse_args(argv)
    frame = points(args.run)
    frame.to_csv(args.csv, index=False, float_format="%.12g")
    figure(frame, args.png)
    print(table(frame))


if __name__ == "__main__":
    main()
