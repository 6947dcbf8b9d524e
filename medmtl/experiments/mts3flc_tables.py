"""The MTS3FLC experiments' fixed data: the problems, the paper's Table III, and the figures and
results-page rows drawn from their results."""

from __future__ import annotations

import numpy as np

from medmtl.experiments.report import Row, fmt, readme_rows

__all__ = ["PROBLEMS", "PROBLEM_TITLES", "TABLE3_LABELED", "K_SHARED_GRID", "N_TOPICS", "PAPER_TABLE3"]

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


@readme_rows("mts3flc-select")
def _select_readme_rows(result):
    chosen = result.extra["chosen"]
    experiment = (f"`mts3flc-select`: options of Table III and Fig. 1, chosen on a development problem "
                  f"({result.settings['problem']}), {result.settings['runs']} runs, "
                  f"{' and '.join(str(n) for n in result.settings['labeled_per_task'])} labelled documents per task")
    return [Row(experiment, "logistic-regression baselines", "C with the best mean accuracy of LG and pooled LG "
                "on the development problem", f"C = {chosen['baselines']['C']:g}"),
            Row(experiment, "S3FLC / MTS3FLC", "C and renormalisation with the best mean accuracy of S3FLC and "
                "MTS3FLC (k_s = 5) on the development problem",
                f"C = {chosen['factorisation']['C']:g}, memberships "
                f"{'renormalised' if chosen['factorisation']['normalize_memberships'] else 'not renormalised'}")]


@readme_rows("mts3flc-fig1")
def _fig1_readme_rows(result):
    sizes = result.x
    problems = result.settings["problems"]
    experiment = (f"`mts3flc-fig1` (Fig. 1): accuracy (%) on the unlabelled documents, averaged over the "
                  f"{len(problems)} problems, {result.settings['runs']} runs each; labelled documents per task "
                  + " / ".join(str(n) for n in sizes))
    rule = "the options of `mts3flc-select` (development problem); k_s = 5 fixed a priori; every size reported"
    claim = "MTS3FLC above every baseline on all six problems (drawn, no numbers given)"
    rows = [Row(experiment, name, rule, " / ".join(fmt(v, 2) for v in result.measured[name]), claim)
            for name in ("MTS3FLC", "S3FLC", "LG", "pooled LG")]
    per = result.extra["per_problem"]
    pairs = len(problems) * len(sizes)
    counts = []
    for name in ("S3FLC", "LG", "pooled LG"):
        below = {n: sum(per["MTS3FLC"][p][i] <= per[name][p][i] for p in problems) for i, n in enumerate(sizes)}
        where = ", ".join(f"{k} of {len(problems)} problems at {n} per task" for n, k in below.items() if k)
        counts.append(f"{name} {pairs - sum(below.values())} of {pairs}" + (f" (not above: {where})" if where else ""))
    rows.append(Row(experiment, "MTS3FLC above each baseline: (problem, size) pairs, 30-run means",
                    rule, "; ".join(counts), claim))
    return rows


@readme_rows("mts3flc-table3")
def _table3_readme_rows(result):
    experiment = (f"`mts3flc-table3` (Table III): accuracy (%) on the unlabelled documents, "
                  f"{result.settings['runs']} runs; {_problems_text(result)}")
    rule = "the options of `mts3flc-select` (development problem); no choice per problem"
    rows = []
    for key in ("LG", "pooled LG", "k_s=0", "k_s=5", "k_s=20"):
        if key not in result.measured:
            continue
        name = {"k_s=0": "S3FLC (k_s = 0)", "k_s=5": "MTS3FLC, k_s = 5", "k_s=20": "MTS3FLC, k_s = 20"}.get(key, key)
        rows.append(Row(experiment, name, rule, " / ".join(fmt(v, 2) for v in result.measured[key]),
                        " / ".join(fmt(v, 2) for v in result.paper[key]) if result.paper[key][0] is not None
                        else "—"))
    return rows


@readme_rows("mts3flc-topics")
def _topics_rows(result):
    experiment = (f"`mts3flc-topics` (Table IV): MTS3FLC on comp vs rec, k_s = {result.settings['k_shared']}, "
                  f"{result.settings['n_labeled']} labelled documents per task, seed {result.settings['seed']}")
    return [Row(experiment, "accuracy (%) on the unlabelled documents per task",
                "fixed a priori; the topics shown are picked from the fitted model",
                " / ".join(fmt(v, 2) for v in result.measured["MTS3FLC accuracy (%)"]))]
