"""The text feature-selection experiment's figure and its rows on the results page."""

from __future__ import annotations

import numpy as np

from medmtl.evaluation import paired_t_test
from medmtl.experiments.report import Row, fmt, fmt_paired, readme_rows
from medmtl.experiments.summaries import standard_error
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
_MED = ("med", "mtmed")


def _mean_se(points):
    """Mean test MAUC ± its standard error over the repetitions' chosen points."""
    tests = np.array([p["test"] for p in points])
    return f"{fmt(tests.mean())} ± {fmt(standard_error(tests))}"


def _mean_or_none(values):
    return None if any(v is None for v in values) else float(np.mean(values))


def _comparisons(budget_tables, data, methods):
    """Per MED method, baseline and budget: the paired t-test (over repetitions) of the MED
    method's test MAUC minus the baseline's (``"against"``: the baseline's key); and multi-task
    MED against single-task MED (``"against": "single-task MED"``). Every baseline is compared:
    none is singled out by its validation score, which grows with the settings it tried."""
    rows = []
    for med in (m for m in methods if m in _MED):
        against = [(b, [b]) for b in methods if b not in _MED]
        if med == "mtmed" and "med" in methods:
            against.append(("single-task MED", ["med"]))
        for label, baselines in against:
            rows += _compare(budget_tables, data, med, baselines, label)
    return rows


def _compare(budget_tables, data, med, baselines, label):
    rows = []
    for budget in budget_tables[med]:
        mine = budget_tables[med][budget]
        valid = {b: _mean_or_none([None if p is None else p["validation"] for p in budget_tables[b][budget]])
                 for b in baselines}
        valid = {b: v for b, v in valid.items() if v is not None}
        if not valid:
            continue
        if any(p is None for p in mine):      # MED has no sweep point within the budget
            rows.append({"data": data, "method": med, "against": label, "budget": budget, "baseline": None,
                         "test": None})
            continue
        best = max(valid, key=valid.get)
        theirs = budget_tables[best][budget]
        d, se, p = paired_t_test([q["test"] for q in mine], [q["test"] for q in theirs])
        rows.append({"data": data, "method": med, "against": label, "budget": budget, "baseline": best,
                     "test": float(np.mean([q["test"] for q in mine])),
                     "baseline_test": float(np.mean([q["test"] for q in theirs])),
                     "n_features": float(np.mean([q["n_features"] for q in mine])),
                     "baseline_n_features": float(np.mean([q["n_features"] for q in theirs])),
                     "mean_difference": d, "standard_error": se, "p_value": p, "n_pairs": len(mine)})
    return rows

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


def _comparison_rows(comparisons, experiment, reps, data, med, other):
    """The row of one MED method against one baseline (or single-task MED) at the README's budgets."""
    found = {c["budget"]: c for c in comparisons if c["data"] == data and c["method"] == med and c["against"] == other}
    parts = []
    for budget in README_BUDGETS:
        c = found.get(budget)
        if c is None:
            continue
        sharing = other == "single-task MED"
        if c["test"] is None:
            parts.append(f"{_budget_text(budget)}: {_SHORT[med]} has no point this sparse "
                         + ("(sharing loses)" if sharing else "(MED loses)"))
            continue
        verdict = _verdict(c)
        if sharing:
            verdict = verdict.replace("MED wins", "sharing wins").replace("MED loses", "sharing loses")
        parts.append(f"{_budget_text(budget)}: {fmt(c['test'])} vs {fmt(c['baseline_test'])}, {fmt_paired(c)}: "
                     f"{verdict}")
    if not parts:
        return []
    name = "single-task MED" if other == "single-task MED" else _SHORT[other]
    return [Row(experiment, f"{data}: {_SHORT[med]} minus {name} (paired t-test over the {reps} splits)",
                "at each budget, each method's fitted point (any sweep value and second parameter) with the best "
                "validation MAUC among those within it", "; ".join(parts))]


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
                        "per method, the sweep point and second parameter (MED: C) with the best validation MAUC "
                        "(test MAUC ± standard error over the splits); "
                        "features counted as switch posterior > 1/2 (MED) or nonzero weights, union over tasks",
                        "; ".join(f"{_SHORT[m]} {_mean_se(result.extra['budget_choices'][data][m]['any'])} "
                                  f"({v['n_features']:.0f})" for m, v in methods.items())))
    # every MED method against every baseline, recomputed from the per-repetition budget choices
    comparisons = [c for data, tables in result.extra["budget_choices"].items()
                   for c in _comparisons(tables, data, list(tables))]
    for data in chosen:
        for med in (m for m in ("med", "mtmed") if m in chosen[data]):
            against = [m for m in chosen[data] if m not in ("med", "mtmed")]
            against += ["single-task MED"] if med == "mtmed" and "med" in chosen[data] else []
            for other in against:
                rows += _comparison_rows(comparisons, experiment, reps, data, med, other)
    times = result.extra["fit_times"]
    rows.append(Row(experiment, "fit time of a whole sweep, process seconds (grid points), mean over splits",
                    "the full grids of the settings (MED: every (C, alpha); MCP: every (alpha, gamma)); "
                    "single-task methods fit every task",
                    "; ".join(f"{data}: " + ", ".join(f"{_SHORT[m]} {v['sweep_seconds_mean']:.3g} s "
                                                       f"({v.get('grid_points', '?')})" for m, v in ms.items())
                              for data, ms in times.items())))
    return rows
