"""The MTS3FLC experiments' fixed data: the problems, the paper's Table III, and the figures and
results-page rows drawn from their results."""

from __future__ import annotations

import numpy as np

from medmtl.evaluation import paired_t_test
from medmtl.experiments.report import Row, fmt, fmt_paired, readme_rows
from medmtl.experiments.selection import grid_edge_counts
from medmtl.experiments.summaries import standard_error

__all__ = ["PROBLEMS", "PROBLEM_TITLES", "TABLE3_LABELED", "K_SHARED_GRID", "N_TOPICS", "PAPER_TABLE3",
           "standard_error", "paired_against", "select_grid_edges"]

PROBLEMS = ["comp-rec", "comp-talk", "sci-rec", "rec-talk", "sci-talk", "sci-comp"]
PROBLEM_TITLES = {p: p.replace("-", " vs ") for p in PROBLEMS}
# Table III uses 6 labelled documents per task for the first three problems, 14 for the rest.
TABLE3_LABELED = {"comp-rec": 6, "comp-talk": 6, "sci-rec": 6, "rec-talk": 14, "sci-talk": 14, "sci-comp": 14}
K_SHARED_GRID = [0, 3, 5, 7, 10, 13, 16, 18, 20]
N_TOPICS = 20

# Table III of the paper, accuracy (%) per problem (order of PROBLEMS) and the average.
PAPER_TABLE3 = {
    "LG": [81.28, 82.58, 77.74, 86.89, 82.91, 82.76, 82.36],
    "pooled LG": [82.06, 87.80, 75.20, 85.90, 81.66, 79.13, 81.96],
    "k_s=0": [92.80, 91.43, 91.50, 91.39, 85.99, 85.49, 89.77],
    "k_s=3": [96.56, 94.86, 95.12, 95.82, 91.28, 92.87, 94.42],
    "k_s=5": [96.59, 95.60, 95.22, 96.10, 92.06, 92.86, 94.74],
    "k_s=7": [96.47, 94.47, 95.17, 95.36, 91.52, 92.62, 94.27],
    "k_s=10": [96.33, 94.36, 95.81, 94.50, 91.17, 92.82, 94.17],
    "k_s=13": [95.89, 94.30, 95.46, 94.49, 91.14, 91.82, 93.85],
    "k_s=16": [95.65, 94.10, 95.04, 94.57, 90.05, 91.43, 93.47],
    "k_s=18": [95.81, 93.87, 95.30, 94.56, 89.82, 91.67, 93.51],
    "k_s=20": [95.00, 92.81, 95.11, 94.42, 89.17, 90.76, 92.88],
}

FIG1_TABLE_KEY = {"MTS3FLC": "k_s=5", "S3FLC": "k_s=0", "LG": "LG", "pooled LG": "pooled LG"}


def paired_against(per, problems, a, b, scale=1.0):
    """Paired t-test of method ``a`` against method ``b`` over the runs, on the accuracy
    averaged over ``problems`` per run (run ``r`` is the same labelled draw for every method).

    Parameters
    ----------
    per : dict
        ``{method: {problem: [accuracy per run]}}``.
    problems : list of str
    a, b : str
        Methods of ``per``.
    scale : float, default=1.0
        Multiplies the accuracies (100: fractions to %).

    Returns
    -------
    dict
        ``mean_difference``, ``standard_error``, ``p_value`` and ``n_pairs``.

    Examples
    --------
    >>> per = {"A": {"p": [0.9, 0.8, 0.85]}, "B": {"p": [0.8, 0.8, 0.8]}}
    >>> round(paired_against(per, ["p"], "A", "B", scale=100.0)["mean_difference"], 6)
    5.0
    """
    avg = {m: scale * np.mean([np.asarray(per[m][p], float) for p in problems], axis=0) for m in (a, b)}
    d, se, p = paired_t_test(avg[a], avg[b])
    return {"mean_difference": float(d), "standard_error": float(se), "p_value": float(p), "n_pairs": len(avg[a])}


def select_grid_edges(grids, chosen_baselines, chosen_factorisation, baseline_score, factor_score):
    """:func:`~medmtl.experiments.selection.grid_edge_counts` of the two C choices of
    ``mts3flc-select`` (one cell each), with their development-accuracy profiles over C
    (the factorisations': the better renormalisation at each C).

    Parameters
    ----------
    grids : (list of float, list of float)
        The baselines' and the factorisations' values of C.
    chosen_baselines, chosen_factorisation : dict
        The choices, each with its ``"C"``.
    baseline_score : array-like
        Per C of the baselines' grid, the mean development accuracy of LG and pooled LG.
    factor_score : dict
        Per renormalisation, per C of the factorisations' grid, the mean development accuracy
        of S3FLC and MTS3FLC.

    Returns
    -------
    dict
        ``{"baselines C": counts, "factorisations C": counts}``.
    """
    base_grid, factor_grid = grids
    factor_best = np.max([np.asarray(v, float) for v in factor_score.values()], axis=0)
    profile = lambda grid, scores: [{C: float(v) for C, v in zip(grid, scores)}]  # noqa: E731
    return {"baselines C": grid_edge_counts([chosen_baselines["C"]], base_grid, profile(base_grid, baseline_score)),
            "factorisations C": grid_edge_counts([chosen_factorisation["C"]], factor_grid,
                                                 profile(factor_grid, factor_best))}


def table3_figure(result, problems, k_grid, quick):
    """Accuracy against k_s, one panel per problem and one for the average; paper as markers."""
    import matplotlib.pyplot as plt

    labels = problems + ["average"]
    n_rows = 1 if len(labels) <= 3 else 2
    n_cols = -(-len(labels) // n_rows)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.4 * n_cols, 3.2 * n_rows), squeeze=False, sharey=True)
    for ax in axes.ravel()[len(labels):]:
        ax.axis("off")
    for j, (ax, label) in enumerate(zip(axes.ravel(), labels)):
        col = PROBLEMS.index(label) if label in PROBLEMS else 6
        ax.errorbar(k_grid, [result.measured[f"k_s={k}"][j] for k in k_grid],
                    yerr=[result.measured_std[f"k_s={k}"][j] for k in k_grid], color="C0", capsize=2,
                    marker=".", label="MTS3FLC (k_s = 0: S3FLC)")
        for c, base in zip(("C1", "C2"), ("LG", "pooled LG")):
            ax.axhline(result.measured[base][j], color=c, linestyle="--", label=base)
        if not quick:
            ax.plot(K_SHARED_GRID, [PAPER_TABLE3[f"k_s={k}"][col] for k in K_SHARED_GRID], "o", mfc="none",
                    color="C0", label="MTS3FLC (paper)")
            for c, base in zip(("C1", "C2"), ("LG", "pooled LG")):
                ax.plot([0], [PAPER_TABLE3[base][col]], "s", mfc="none", color=c, label=f"{base} (paper)")
        ax.set_title(PROBLEM_TITLES.get(label, label))
        ax.set_xlabel("shared topics k_s")
        ax.grid(alpha=0.3)
    for row in axes:
        row[0].set_ylabel("accuracy (%)")
    axes[0, 0].legend(fontsize=6)
    return fig


def fig1_figure(curves, problems, sizes, quick):
    """Accuracy against labelled documents, one panel per problem; Table III as markers."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(12, 7), squeeze=False)
    for ax, p in zip(axes.ravel(), problems):
        for i, (m, by_problem) in enumerate(curves.items()):
            ys = [np.mean(by_problem[p][n]) for n in sizes]
            ax.plot(sizes, ys, marker=".", color=f"C{i}", label=m)
            if not quick:
                n_tab = TABLE3_LABELED[p]
                ax.plot([n_tab], [PAPER_TABLE3[FIG1_TABLE_KEY[m]][PROBLEMS.index(p)]], marker="o", mfc="none",
                        linestyle="none", color=f"C{i}", label=f"{m} (paper, Table III)")
        ax.set_title(PROBLEM_TITLES[p])
        ax.set_xlabel("labelled documents per task")
        ax.set_ylabel("accuracy (%)")
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(problems):]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=7)
    return fig


def select_figure(measured, c_grid, quick):
    """Accuracy on the development problem against C, one line per candidate setting."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for i, (k, v) in enumerate(measured.items()):
        ax.plot(c_grid, v, marker=".", color=f"C{i}", linestyle="-" if "not" not in k else "--", label=k)
    ax.set_xscale("log")
    ax.set_xlabel("logistic regression C")
    ax.set_ylabel("accuracy on the development problem (%)")
    ax.set_title("MTS3FLC settings on the development problem" + (" [quick]" if quick else ""))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return fig


def _problems_text(result):
    return " / ".join(result.x)


def _pm(values):
    """Mean ± standard error of per-run accuracies (%); the mean alone for a single value."""
    values = np.asarray(values, float)
    if values.size < 2:
        return fmt(values.mean(), 2)
    return f"{fmt(values.mean(), 2)} ± {fmt(standard_error(values), 2)}"


def _edge_rows(experiment, result, rule):
    edges = result.extra.get("grid_edges")
    if not edges:  # a run from before the counts were recorded
        return []
    from medmtl.experiments.lecture_models import edges_text

    return [Row(experiment, "C on a grid edge (the choices of `mts3flc-select`, with their development "
                            "accuracy over C)", rule, edges_text(edges))]


@readme_rows("mts3flc-select")
def _select_readme_rows(result):
    chosen, grid = result.extra["chosen"], result.x
    per = result.extra.get("per_run")
    if per is None:  # a run from before the per-run values were kept: means only
        per = {k: [[v] for v in values] for k, values in result.measured.items()}
        spread = "means only (this run kept no per-run values)"
    else:
        spread = f"± standard error over the {len(per['LG'][0])} draws"
    experiment = (f"`mts3flc-select`: options of Table III and Fig. 1, chosen on a development problem "
                  f"({result.settings['problem']}), {result.settings['runs']} runs of "
                  f"{' and '.join(str(k) for k in result.settings['labeled_per_task'])} labelled documents per task; "
                  f"development accuracy (%), {spread}")
    base, fact = chosen["baselines"], chosen["factorisation"]
    tag = "normalised" if fact["normalize_memberships"] else "not normalised"
    b, f = grid.index(base["C"]), grid.index(fact["C"])
    rule_b = "C with the best mean accuracy of LG and pooled LG on the development problem"
    rule_f = ("C and renormalisation with the best mean accuracy of S3FLC and MTS3FLC (k_s = 5) on the "
              "development problem")
    return [Row(experiment, "logistic-regression baselines", rule_b,
                f"C = {base['C']:g} (grid {grid[0]:g}-{grid[-1]:g}): LG {_pm(per['LG'][b])}, "
                f"pooled LG {_pm(per['pooled LG'][b])}"),
            Row(experiment, "S3FLC / MTS3FLC", rule_f,
                f"C = {fact['C']:g}, memberships {'re' if fact['normalize_memberships'] else 'not re'}normalised"
                f": S3FLC {_pm(per[f'S3FLC ({tag})'][f])}, MTS3FLC {_pm(per[f'MTS3FLC k_s=5 ({tag})'][f])}"),
            *_edge_rows(experiment, result, "as above")]


def _fig1_run_means(result, name):
    """Per labelled size, the per-run accuracies (%) of ``name`` averaged over the problems."""
    per, problems = result.extra["per_run"][name], result.settings["problems"]
    return [np.mean([per[p][i] for p in problems], axis=0) for i in range(len(result.x))]


@readme_rows("mts3flc-fig1")
def _fig1_readme_rows(result):
    sizes = result.x
    problems = result.settings["problems"]
    has_runs = "per_run" in result.extra
    experiment = (f"`mts3flc-fig1` (Fig. 1): accuracy (%) on the unlabelled documents, averaged over the "
                  f"{len(problems)} problems, {result.settings['runs']} runs each"
                  + (" (± standard error over the runs)" if has_runs else " (this run kept no per-run values)")
                  + "; labelled documents per task " + " / ".join(str(n) for n in sizes))
    rule = "the options of `mts3flc-select` (development problem); k_s = 5 fixed a priori; every size reported"
    claim = "MTS3FLC above every baseline on all six problems (drawn, no numbers given)"
    names = ("MTS3FLC", "S3FLC", "LG", "pooled LG")
    shown = {m: (" / ".join(_pm(v) for v in _fig1_run_means(result, m)) if has_runs
                 else " / ".join(fmt(v, 2) for v in result.measured[m])) for m in names}
    rows = [Row(experiment, name, rule, shown[name], claim) for name in names]
    per = result.extra["per_problem"]
    pairs = len(problems) * len(sizes)
    counts = []
    for name in names[1:]:
        below = {n: sum(per["MTS3FLC"][p][i] <= per[name][p][i] for p in problems) for i, n in enumerate(sizes)}
        where = ", ".join(f"{k} of {len(problems)} problems at {n} per task" for n, k in below.items() if k)
        counts.append(f"{name} {pairs - sum(below.values())} of {pairs}" + (f" (not above: {where})" if where else ""))
    rows.append(Row(experiment, f"MTS3FLC above each baseline: (problem, size) pairs, {result.settings['runs']}-run "
                                "means", rule, "; ".join(counts), claim))
    if has_runs:
        mts = _fig1_run_means(result, "MTS3FLC")
        for name in names[1:]:
            tests = [paired_t_test(a, b) for a, b in zip(mts, _fig1_run_means(result, name))]
            rows.append(Row(experiment, f"MTS3FLC minus {name}, paired over the runs, per size", rule, " / ".join(
                fmt_paired({"mean_difference": d, "standard_error": se, "p_value": p}, 2) for d, se, p in tests)))
    return rows + _edge_rows(experiment, result, rule)


@readme_rows("mts3flc-table3")
def _table3_readme_rows(result):
    per, problems = result.extra["per_run"], result.settings["problems"]
    experiment = (f"`mts3flc-table3` (Table III): accuracy (%) on the unlabelled documents, "
                  f"{result.settings['runs']} runs (± standard error over the runs; the average is taken per run); "
                  f"{_problems_text(result)}")
    rule = "the options of `mts3flc-select` (development problem); no choice per problem"
    rows = []
    for key in ("LG", "pooled LG", "k_s=0", "k_s=5", "k_s=20"):
        if key not in per:
            continue
        name = {"k_s=0": "S3FLC (k_s = 0)", "k_s=5": "MTS3FLC, k_s = 5", "k_s=20": "MTS3FLC, k_s = 20"}.get(key, key)
        columns = [100 * np.asarray(per[key][p], float) for p in problems]
        columns.append(np.mean(columns, axis=0))
        rows.append(Row(experiment, name, rule, " / ".join(_pm(v) for v in columns),
                        " / ".join(fmt(v, 2) for v in result.paper[key]) if result.paper[key][0] is not None
                        else "—"))
    for base in ("LG", "pooled LG", "k_s=0"):
        if base in per and "k_s=5" in per:
            test = paired_against(per, problems, "k_s=5", base, scale=100.0)
            paper = result.paper["k_s=5"][-1], result.paper[base][-1]
            shown = "S3FLC" if base == "k_s=0" else base
            rows.append(Row(experiment, f"MTS3FLC (k_s = 5) minus {shown}, average over the problems, paired over "
                                        "the runs", rule, fmt_paired(test, 2),
                            "—" if None in paper else f"{paper[0] - paper[1]:+.2f} (no test reported)"))
    return rows + _edge_rows(experiment, result, rule)


@readme_rows("mts3flc-topics")
def _topics_rows(result):
    experiment = (f"`mts3flc-topics` (Table IV): MTS3FLC on comp vs rec, k_s = {result.settings['k_shared']}, "
                  f"{result.settings['n_labeled']} labelled documents per task, seed {result.settings['seed']}")
    return [Row(experiment, "accuracy (%) on the unlabelled documents per task",
                "fixed a priori; the topics shown are picked from the fitted model",
                " / ".join(fmt(v, 2) for v in result.measured["MTS3FLC accuracy (%)"]))]
