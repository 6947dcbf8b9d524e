"""Summaries shared by the experiments over training sizes and folds: means and spreads per
size, paired tests against the strongest baseline, per-cell records, and the results-page
rows that show them.

The summaries take a grid's cells and outputs as :func:`~medmtl.experiments.runner.run_grid`
gives them: ``cells`` (a list of settings, each holding the setting ``xkey``, e.g. ``"size"``)
and ``out`` (the cells' outputs, in the order of ``cells``); they summarise the folds at each
value of ``xs``, the values of ``xkey`` in order.
"""

from __future__ import annotations

import numpy as np

from medmtl.evaluation import paired_t_test
from medmtl.experiments.report import Row, fmt, fmt_paired

__all__ = ["mean_std_by", "paired_tests_by", "baseline_comparisons", "cell_records", "size_curves", "size_rows",
           "sizes_text", "STRONGEST_BASELINE_RULE"]


def mean_std_by(out, cells, key, xs, xkey):
    """Per value ``x`` of the cells' setting ``xkey``, the mean and standard deviation of
    ``o[key]`` over the cells' outputs ``o`` (the folds at that x).

    Parameters
    ----------
    out : list of dict
        The cells' outputs, in the order of ``cells``.
    cells : list of dict
        The cells' settings, each holding ``xkey``.
    key : str
        The output to summarise.
    xs : list
        The values of ``xkey`` to summarise at, in order.
    xkey : str
        The setting the folds are grouped by (e.g. ``"size"``).

    Returns
    -------
    means, stds : list of float
        One entry per value of ``xs``.

    Examples
    --------
    >>> mean_std_by([{"auc": 0.6}, {"auc": 0.8}], [{"n": 1}, {"n": 1}], "auc", [1], "n")
    ([0.7], [0.1])
    """
    per_x = [[o[key] for o, c in zip(out, cells) if c[xkey] == x] for x in xs]
    return [float(np.mean(v)) for v in per_x], [float(np.std(v)) for v in per_x]


def paired_tests_by(out, cells, xs, xkey, a="multitask", b="independent"):
    """Per value ``x`` of the cells' setting ``xkey``, the paired t-test of ``o[a]`` against
    ``o[b]`` over the folds at that x (the paper's test).

    Returns one dict per x: ``{xkey: x, "mean_difference", "standard_error", "p_value"}``.

    Parameters
    ----------
    out, cells, xs, xkey
        The grid's outputs and cells, and the values of the setting ``xkey`` to summarise at
        (see the module's description).
    a, b : str
        The two outputs compared: the mean difference is ``o[a] - o[b]``.

    Returns
    -------
    list of dict
    """
    rows = []
    for x in xs:
        pairs = [(o[a], o[b]) for o, c in zip(out, cells) if c[xkey] == x]
        d, se, p = paired_t_test(*zip(*pairs))
        rows.append({xkey: x, "mean_difference": d, "standard_error": se, "p_value": p})
    return rows


STRONGEST_BASELINE_RULE = ("per training size, the baseline with the highest validation MAUC averaged over "
                           "that size's folds (validation only; per-task choices make a baseline's "
                           "validation MAUC optimistic, which favours the more flexible baselines)")


def baseline_comparisons(out, cells, xs, xkey, baselines):
    """Multi-task MED against every baseline, per value ``x`` of the cells' setting ``xkey``.

    Each cell output ``o`` holds the test score ``o[key]`` of ``"multitask"`` and of every
    key in ``baselines``, and their validation scores ``o["validation"][key]``. The baseline
    called strongest at ``x`` is chosen by validation alone (:data:`STRONGEST_BASELINE_RULE`).

    Parameters
    ----------
    out, cells, xs, xkey
        The grid's outputs and cells, and the values of the setting ``xkey`` to summarise at
        (see the module's description).
    baselines : list of str
        The baselines' output keys; on a tie in validation score the first is the strongest.

    Returns
    -------
    dict
        ``"multitask_vs_<key>"``: :func:`paired_tests_by` rows for every baseline key;
        ``"multitask_vs_strongest_baseline"``: one row per x with the chosen ``"baseline"``,
        its ``"mean_validation"``, and the paired test against it.

    Examples
    --------
    >>> cells = [{"n": 1}] * 3
    >>> out = [{"multitask": m, "svm": s, "rbf": r, "validation": {"svm": 0.6, "rbf": 0.7}}
    ...        for m, s, r in ((0.8, 0.7, 0.9), (0.7, 0.6, 0.8), (0.9, 0.7, 0.9))]
    >>> row, = baseline_comparisons(out, cells, [1], "n", ["svm", "rbf"])["multitask_vs_strongest_baseline"]
    >>> row["baseline"], round(row["mean_difference"], 4)
    ('rbf', -0.0667)
    """
    found = {f"multitask_vs_{b}": paired_tests_by(out, cells, xs, xkey, b=b) for b in baselines}
    strongest = []
    for x in xs:
        at_x = [o for o, c in zip(out, cells) if c[xkey] == x]
        validation = {b: float(np.mean([o["validation"][b] for o in at_x])) for b in baselines}
        best = max(baselines, key=validation.get)  # ties: the first in ``baselines``
        row = found[f"multitask_vs_{best}"][xs.index(x)]
        strongest.append({**row, "baseline": best, "mean_validation": validation[best]})
    return {**found, "multitask_vs_strongest_baseline": strongest}


def cell_records(out, cells, kept):
    """Per cell, its settings but the grid and its outputs named in ``kept``.

    Parameters
    ----------
    out, cells
        The grid's outputs and cells.
    kept : list of str
        The output keys to keep.

    Returns
    -------
    list of dict
    """
    return [{k: v for k, v in c.items() if k not in ("Cs", "alphas")} | {k: o[k] for k in kept}
            for c, o in zip(cells, out)]


def size_curves(out, cells, methods, sizes, kept):
    """The mean and spread over folds per method label, and the record of every cell: its
    settings but the grid, its methods' scores and its outputs named in ``kept``.

    Parameters
    ----------
    out, cells
        The grid's outputs and cells, each cell holding a ``"size"``.
    methods : dict
        ``{output key: label}`` of the methods summarised.
    sizes : list of int
        The training sizes, in order.
    kept : list of str
        Further output keys the records keep.

    Returns
    -------
    measured, std : dict
        ``{label: list over sizes}``.
    records : list of dict
    """
    measured, std = {}, {}
    for key, label in methods.items():
        measured[label], std[label] = mean_std_by(out, cells, key, sizes, "size")
    return measured, std, cell_records(out, cells, [*methods, *kept])


def size_rows(result, experiment, labels, names, shown):
    """One row per method at the training sizes ``shown``, and one for MED against the
    baseline with the best validation score at each of them.

    Parameters
    ----------
    result : ExperimentResult
        A full run over training sizes, with ``extra["multitask_vs_strongest_baseline"]``.
    experiment : str
        The rows' first column.
    labels : dict
        ``{method key: label in result.measured}``.
    names : dict
        ``{method key: (name on the page, the rule that selected its hyper-parameters)}``.
    shown : list of int
        The training sizes shown.

    Returns
    -------
    list of Row
    """
    idx = [result.x.index(n) for n in shown if n in result.x]

    def at(values):
        return " / ".join(fmt(values[i]) for i in idx)

    rows = []
    for key, label in labels.items():
        name, rule = names[key]
        paper = result.paper.get(label)
        rows.append(Row(experiment, name, rule, at(result.measured[label]),
                        at(paper) if paper and any(paper[i] is not None for i in idx) else "—"))
    tests = {t["size"]: t for t in result.extra["multitask_vs_strongest_baseline"]}
    parts, higher, lower = [], [], []
    for i in idx:
        t = tests[result.x[i]]
        parts.append(f"n = {t['size']}: {fmt_paired(t)} vs {names[t['baseline']][0]}")
        if t["p_value"] is not None and t["p_value"] < 0.05:
            (higher if t["mean_difference"] > 0 else lower).append(str(t["size"]))
    verdict = "; ".join(f"MED significantly {word} at n = {', '.join(ns)}" for word, ns in
                        (("higher", higher), ("lower", lower)) if ns) or "no significant difference (5 % level)"
    rows.append(Row(experiment, "MED minus the strongest baseline (paired t-test over the folds)",
                    "the baseline with the highest mean validation MAUC at each n",
                    "; ".join(parts) + f"; {verdict}"))
    return rows


def sizes_text(result, shown):
    """The training sizes ``shown`` that ``result`` measured, as ``"100 / 150 / 200"``.

    Parameters
    ----------
    result : ExperimentResult
    shown : list of int

    Returns
    -------
    str
    """
    return " / ".join(str(n) for n in shown if n in result.x)
