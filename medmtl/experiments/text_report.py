"""The text feature-selection experiment's figure and its rows on the results page."""

from __future__ import annotations

import numpy as np

from medmtl.experiments.report import Row, fmt, fmt_paired, readme_rows
from medmtl.experiments.text_data import DATA_TITLES

NAME = "text-feature-selection"


def figure(curves_by_data, chosen_by_data, quick, labels, med_methods):
    """One panel per data set: every method's mean curve, its point chosen on validation starred.

    Parameters
    ----------
    curves_by_data : dict
        ``{data: {method: {"n_features", "test", "test_std"}}}``.
    chosen_by_data : dict
        ``{data: {method: (n_features, test AUC) or None}}``.
    quick : bool
    labels : dict
        ``{method: label}``, in the order of the colours.
    med_methods : tuple of str
        The methods drawn solid.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure

    n = len(curves_by_data)
    cols = 2 if n + 1 <= 4 else 3                              # one more panel for the legend
    rows = int(np.ceil((n + 1) / cols))
    figure = Figure(figsize=(4.8 * cols, 3.8 * rows))
    axes = figure.subplots(rows, cols, squeeze=False).ravel()
    colors = {m: f"C{i}" for i, m in enumerate(labels)}
    for ax, (data, curves) in zip(axes, curves_by_data.items()):
        for method, curve in curves.items():
            # joined in the order of the number of features; zero features drawn at the axis' edge
            order = np.argsort(curve["n_features"], kind="stable")
            x = np.maximum(np.asarray(curve["n_features"])[order], 0.8)
            style = "-" if method in med_methods else "--"
            ax.errorbar(x, np.asarray(curve["test"])[order], yerr=np.asarray(curve["test_std"])[order],
                        color=colors[method], linestyle=style, marker="o" if method in med_methods else ".",
                        markersize=4, capsize=2, label=labels[method])
            star = chosen_by_data[data][method]
            if star is not None:
                ax.plot(max(star[0], 0.8), star[1], marker="*", markersize=11, color=colors[method],
                        markeredgecolor="black", linestyle="none")
        ax.set_xscale("log")
        ax.set_xlabel("selected features (union over tasks)")
        ax.set_ylabel("mean test AUC")
        ax.set_title(DATA_TITLES[data] + (" [quick]" if quick else ""), fontsize=10)
        ax.grid(alpha=0.3)
    handles, labels = [], []
    for ax in axes[:n]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    for ax in axes[n:]:
        ax.axis("off")
    axes[n].legend(handles, labels, loc="center", fontsize=8,
                   title="star: the point chosen on validation\n(MED: switch posterior > 1/2 kept)",
                   title_fontsize=8)
    figure.suptitle("Text feature selection: test AUC against selected features"
                    + (" (quick run)" if quick else ""))
    return figure


README_BUDGETS = ["10", "100", "any"]
_SHORT = {"med": "MED", "mtmed": "multi-task MED", "l1_logreg": "l1 LR (liblinear)", "skglm_l1": "l1 LR (skglm)",
          "skglm_mcp": "MCP LR (skglm)", "group_lasso": "group lasso (skglm)"}


def _verdict(row):
    """Whether the MED method won or lost against the baseline, at the 5 % level.

    >>> _verdict({"mean_difference": -0.02, "p_value": 0.01}), _verdict({"mean_difference": 0.01, "p_value": 0.3})
    ('MED loses', 'no significant difference')
    """
    p = row["p_value"]
    if p is not None and not np.isnan(p) and p < 0.05:
        return "MED wins" if row["mean_difference"] > 0 else "MED loses"
    return "no significant difference"


def _budget_text(budget):
    return "no budget" if budget == "any" else f"<= {budget} features"


@readme_rows(NAME)
def _readme_rows(result):
    reps = result.settings["repetitions"]
    experiment = (f"`{NAME}`: mean test AUC (MAUC over the tasks) against the number of selected features, "
                  f"{reps} random splits, seed {result.settings['seed']}; 20 Newsgroups pairs, 15 spam users, "
                  "4 sentiment domains, tf-idf")
    rows = []
    chosen = result.extra["chosen_on_validation"]
    for data, methods in chosen.items():
        rows.append(Row(experiment, f"{data}: every method at the point chosen on validation (features)",
                        "per method, the sweep point and second parameter (MED: C) with the best validation MAUC; "
                        "features counted as switch posterior > 1/2 (MED) or nonzero weights, union over tasks",
                        "; ".join(f"{_SHORT[m]} {fmt(v['test'])} ({v['n_features']:.0f})" for m, v in methods.items())))
    for data in chosen:
        for med, against in (("med", "strongest baseline"), ("mtmed", "strongest baseline"),
                             ("mtmed", "single-task MED")):
            if med not in chosen[data]:
                continue
            found = {c["budget"]: c for c in result.extra["comparisons"]
                     if c["data"] == data and c["method"] == med and c["against"] == against}
            if not found:
                continue
            parts = []
            for budget in README_BUDGETS:
                c = found.get(budget)
                if c is None:
                    continue
                if c["test"] is None:
                    parts.append(f"{_budget_text(budget)}: {_SHORT[med]} has no point this sparse "
                                 + ("(MED loses)" if against == "strongest baseline" else "(sharing loses)"))
                    continue
                verdict = _verdict(c)
                if against == "single-task MED":
                    verdict = verdict.replace("MED wins", "sharing wins").replace("MED loses", "sharing loses")
                parts.append(f"{_budget_text(budget)}: {fmt(c['test'])} vs {_SHORT[c['baseline']]} "
                             f"{fmt(c['baseline_test'])}, {fmt_paired(c)}: {verdict}")
            rows.append(Row(experiment, f"{data}: {_SHORT[med]} minus the {against} (paired t-test over "
                                        f"the {reps} splits)",
                            "at each budget, the fitted point (any sweep value and second parameter) with the best "
                            "validation MAUC among those within it"
                            + ("; the baseline with the highest mean validation MAUC there"
                               if against == "strongest baseline" else ""),
                            "; ".join(parts)))
    times = result.extra["fit_times"]
    rows.append(Row(experiment, "fit time of a whole sweep, process seconds (grid points), mean over splits",
                    "the full grids of the settings (MED: every (C, alpha); MCP: every (alpha, gamma)); "
                    "single-task methods fit every task",
                    "; ".join(f"{data}: " + ", ".join(f"{_SHORT[m]} {v['sweep_seconds_mean']:.3g} s "
                                                       f"({v.get('grid_points', '?')})" for m, v in ms.items())
                              for data, ms in times.items())))
    return rows
