"""Summaries shared by the experiments over training sizes and folds: means and spreads per
size, MED's paired tests against every baseline (one of them the primary comparison, fixed
before the run), grid-edge counts, per-cell records, and the results-page rows that show them.

The summaries take a grid's cells and outputs as :func:`~medmtl.experiments.runner.run_grid`
gives them: ``cells`` (a list of settings, each holding the setting ``xkey``, e.g. ``"size"``)
and ``out`` (the cells' outputs, in the order of ``cells``); they summarise the folds at each
value of ``xs``, the values of ``xkey`` in order.
"""

from __future__ import annotations

import numpy as np

from medmtl.evaluation import paired_t_test
from medmtl.experiments.report import Row, fmt, fmt_paired

__all__ = ["mean_std_by", "paired_tests_by", "baseline_comparisons", "standard_errors", "edge_records",
           "edge_rows", "cell_records", "size_curves", "size_rows", "sizes_text"]


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


def baseline_comparisons(out, cells, xs, xkey, baselines, primary):
    """Multi-task MED against every baseline, per value ``x`` of the cells' setting ``xkey``.

    Each cell output ``o`` holds the test score ``o[key]`` of ``"multitask"`` and of every
    key in ``baselines``. The primary comparison is fixed before the run: MED against the
    model it reduces to (e.g. the sum-kernel SVMs with one C, MED at alpha = 0). Every
    other baseline is compared as well, so that no comparison is picked after the fact.

    Parameters
    ----------
    out, cells, xs, xkey
        The grid's outputs and cells, and the values of the setting ``xkey`` to summarise at
        (see the module's description).
    baselines : list of str
        The baselines' output keys.
    primary : str
        The key in ``baselines`` of the primary comparison.

    Returns
    -------
    dict
        ``"multitask_vs_<key>"``: :func:`paired_tests_by` rows for every baseline key;
        ``"primary_comparison"``: ``primary``.

    Examples
    --------
    >>> cells = [{"n": 1}] * 3
    >>> out = [{"multitask": m, "svm": s, "rbf": r}
    ...        for m, s, r in ((0.8, 0.7, 0.9), (0.7, 0.6, 0.8), (0.9, 0.7, 0.9))]
    >>> found = baseline_comparisons(out, cells, [1], "n", ["svm", "rbf"], primary="svm")
    >>> found["primary_comparison"], round(found["multitask_vs_svm"][0]["mean_difference"], 4)
    ('svm', 0.1333)
    """
    if primary not in baselines:
        raise ValueError(f"the primary comparison {primary!r} is not one of the baselines {baselines}")
    found = {f"multitask_vs_{b}": paired_tests_by(out, cells, xs, xkey, b=b) for b in baselines}
    return {**found, "primary_comparison": primary}


def standard_error(values):
    """The standard error of the mean of ``values``: ``std(ddof=1) / sqrt(n)`` (NaN for one value).

    Parameters
    ----------
    values : array-like of float

    Returns
    -------
    float

    Examples
    --------
    >>> round(standard_error([80.0, 82.0, 84.0]), 4)
    1.1547
    """
    values = np.asarray(values, float).ravel()
    return float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else float("nan")


def standard_errors(out, cells, methods, xs, xkey="size"):
    """Per method label, the standard error of the mean over the folds at each ``x``
    (``std(ddof=1) / sqrt(folds)``; NaN with one fold).

    Parameters
    ----------
    out, cells
        As for :func:`mean_std_by`.
    methods : dict
        ``{output key: label}``.
    xs, xkey
        As for :func:`mean_std_by`.

    Returns
    -------
    dict
        ``{label: list over xs}``.

    Examples
    --------
    >>> standard_errors([{"a": 0.6}, {"a": 0.8}], [{"n": 1}, {"n": 1}], {"a": "A"}, [1], "n")
    {'A': [0.1]}
    """
    out_se = {}
    for key, label in methods.items():
        per_x = [np.asarray([o[key] for o, c in zip(out, cells) if c[xkey] == x], float) for x in xs]
        out_se[label] = [standard_error(v) for v in per_x]
    return out_se


def edge_records(out, grids, profiled=True):
    """Grid-edge counts of every hyper-parameter chosen on a grid, over all cells.

    Each cell output holds ``o["choices"][name]`` (the values chosen in that cell: one, or
    one per task) and ``o["profiles"][name]`` (per choice, ``{value: best validation score
    at that value}``); ``name`` is ``"<method> <hyper-parameter>"``.

    Parameters
    ----------
    out : list of dict
        The cells' outputs.
    grids : dict
        ``{name: the grid the choice was made from}``.
    profiled : bool, default=True
        Pass the profiles, so that edge choices caused by a tie are told apart.

    Returns
    -------
    dict
        ``{name: grid_edge_counts(...)}``.
    """
    from medmtl.experiments.selection import grid_edge_counts

    found = {}
    for name, grid in grids.items():
        chosen = [v for o in out for v in o["choices"][name]]
        profiles = [p for o in out for p in o["profiles"][name]] if profiled else None
        found[name] = grid_edge_counts(chosen, grid, profiles)
    return found


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
    return [{k: v for k, v in c.items() if k not in ("Cs", "alphas", "svm_Cs", "rbf_Cs")} | {k: o[k] for k in kept}
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


def _verdict(tests):
    """Where a list of paired tests is significant at the 5 % level, in words."""
    higher = [str(t["size"]) for t in tests if t["p_value"] is not None and t["p_value"] < 0.05
              and t["mean_difference"] > 0]
    lower = [str(t["size"]) for t in tests if t["p_value"] is not None and t["p_value"] < 0.05
             and t["mean_difference"] < 0]
    return "; ".join(f"MED significantly {word} at n = {', '.join(ns)}" for word, ns in
                     (("higher", higher), ("lower", lower)) if ns) or "no significant difference (5 % level)"


def size_rows(result, experiment, labels, names, shown):
    """One row per method at the training sizes ``shown`` (mean ± standard error over the
    folds), then one row per baseline with MED's paired test against it, the primary
    comparison first.

    Parameters
    ----------
    result : ExperimentResult
        A full run over training sizes, with ``extra["standard_error"]``,
        ``extra["primary_comparison"]`` and ``extra["multitask_vs_<baseline>"]`` for every
        baseline in ``labels``.
    experiment : str
        The rows' first column.
    labels : dict
        ``{method key: label in result.measured}``; ``"multitask"`` is MED, every other key
        a baseline.
    names : dict
        ``{method key: (name on the page, the rule that selected its hyper-parameters)}``.
    shown : list of int
        The training sizes shown.

    Returns
    -------
    list of Row
    """
    idx = [result.x.index(n) for n in shown if n in result.x]
    se = result.extra["standard_error"]
    rows = []
    for key, label in labels.items():
        name, rule = names[key]
        paper = result.paper.get(label)
        measured = " / ".join(f"{fmt(result.measured[label][i])} ± {fmt(se[label][i])}" for i in idx)
        rows.append(Row(experiment, name, rule, measured,
                        " / ".join(fmt(paper[i]) for i in idx) if paper and any(paper[i] is not None for i in idx)
                        else "—"))
    primary = result.extra["primary_comparison"]
    for key in sorted((k for k in labels if k != "multitask"), key=lambda k: k != primary):
        tests = {t["size"]: t for t in result.extra[f"multitask_vs_{key}"]}
        shown_tests = [tests[result.x[i]] for i in idx]
        what = ("primary comparison, fixed before the run: the model MED reduces to at alpha = 0"
                if key == primary else "secondary comparison")
        rows.append(Row(experiment, f"MED minus {names[key][0]} (paired t-test over the folds; {what})",
                        "as above, for both",
                        "; ".join(f"n = {t['size']}: {fmt_paired(t)}" for t in shown_tests)
                        + f"; {_verdict(shown_tests)}"))
    return rows


def edge_rows(result, experiment, note=""):
    """A row naming every hyper-parameter whose choices sat strictly on a grid edge (or,
    without validation profiles, on an edge at all) in more than 20 % of the cells, from
    ``result.extra["grid_edges"]``; no row when there is none.

    Parameters
    ----------
    result : ExperimentResult
    experiment : str
        The row's first column.
    note : str, optional
        What the reader should know about these edges (e.g. a boundary of the domain).

    Returns
    -------
    list of Row
    """
    flagged = []
    for name, e in result.extra.get("grid_edges", {}).items():
        share = e.get("strict_share", e["share"])
        if share > 0.2:
            low, high = (e["strict_low"], e["strict_high"]) if "strict_share" in e else (e["low"], e["high"])
            flagged.append(f"{name}: {low} of {e['n']} on {e['grid'][0]:g}, {high} on {e['grid'][-1]:g}")
    if not flagged:
        return []
    return [Row(experiment, "choices strictly best on a grid edge in more than 20 % of the cells",
                "the validation profile of each choice (ties with an inner value do not count)",
                "; ".join(flagged) + (f" ({note})" if note else ""))]


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
