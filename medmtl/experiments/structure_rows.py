"""Summaries, comparisons, figures and results-page rows of the Ising structure experiments
(:mod:`medmtl.experiments.structure`).

Every function takes the cells' outputs of :func:`~medmtl.experiments.structure.structure_cell`
(one per random graph): ``{"grid": {method: [record, ...]}, "selected": {method: record or
None}, "n_edges": int}``, where a record is ``{setting, auc, exact, validation, seconds,
status}``. The spread of a mean over graphs is its standard error.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import sem

from medmtl.evaluation import paired_t_test
from medmtl.experiments.report import (
    Row,
    fmt,
    fmt_difference,
    paired_summary,
    readme_rows,
)
from medmtl.experiments.selection import grid_edge_counts

__all__ = [
    "METHODS",
    "curves",
    "fig4_figure",
    "grid_edges",
    "holm_rejects",
    "paired_tests",
    "scale_figure",
    "selection_record",
    "setting_comparisons",
    "solver_agreement",
    "summaries",
]

# An edge AUC is a multiple of 1 / (2 P N) (P true edges, N others: at least 1 / 2.5e7 for
# the 4,950 edges of 100 nodes); the ROC's trapezoids leave a perfect ranking up to a few
# ulps below 1 (0.9999999999999999 where tied scores make a slanted segment)
_AUC_ONE = 1.0 - 1e-12

METHODS = ("MED", "l1 AND", "l1 OR", "GraphicalLasso")
# each method's colour in the scale figure
_COLOURS = dict(zip(METHODS, ("C0", "C1", "C2", "C3")))
CONVERGED = ("converged", "optimal")
LEVEL = 0.05


def _mean(values):
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _se(values):
    values = [v for v in values if v is not None]
    return float(sem(values)) if len(values) > 1 else None


def summaries(cells):
    """Per method: the selected settings' mean AUC and its standard error over the graphs,
    the per-graph AUCs, exact-recovery and separable rates, and fit times.

    Parameters
    ----------
    cells : list of dict
        The cells' outputs (one per graph).

    Returns
    -------
    dict
        ``{method: {"auc", "auc_se", "aucs", "exact", "separable", "seconds", "grid_seconds",
        "unconverged"}}``; ``"separable"`` is the share of graphs with AUC 1 (some threshold
        of the edge scores gives the graph exactly).
    """
    out = {}
    for name in METHODS:
        chosen = [c["selected"][name] for c in cells]
        aucs = [r["auc"] if r else None for r in chosen]
        out[name] = {"auc": _mean(aucs), "auc_se": _se(aucs), "aucs": aucs,
                     "exact": _mean([float(r["exact"]) if r else None for r in chosen]),
                     "separable": _mean([float(a >= _AUC_ONE) if a is not None else None for a in aucs]),
                     "seconds": _mean([r["seconds"] if r else None for r in chosen]),
                     "grid_seconds": _mean([sum(g["seconds"] for g in c["grid"][name]) for c in cells]),
                     "unconverged": int(sum(g["status"] not in CONVERGED for c in cells for g in c["grid"][name]
                                            if not (name == "MED" and g["setting"]["alpha"] == 0)))}
    return out


def _paired(a, b):
    """The paired t-test over the graphs where both AUCs exist."""
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    d, se, p = paired_t_test(*zip(*pairs)) if pairs else (float("nan"),) * 3
    return {"mean_difference": d, "standard_error": se, "p_value": p, "n": len(pairs)}


def paired_tests(summary):
    """MED's selected AUC against every baseline's: ``{"MED vs <name>": paired t-test}``.

    Parameters
    ----------
    summary : dict
        As :func:`summaries` returns.

    Returns
    -------
    dict
        Per baseline ``{"mean_difference", "standard_error", "p_value", "n"}`` of MED minus
        the baseline over the graphs where both have an AUC.
    """
    return {f"MED vs {name}": _paired(summary["MED"]["aucs"], summary[name]["aucs"]) for name in METHODS[1:]}


def _auc_table(cells, name):
    """``{setting key: [AUC per graph]}`` of one method, keys in the grid's order."""
    table = {}
    for c in cells:
        for r in c["grid"][name]:
            table.setdefault(tuple(sorted(r["setting"].items())), []).append(r["auc"])
    return table


def curves(cells, grids):
    """The mean AUC and its standard error at each fixed setting (test AUC, not a result).

    Parameters
    ----------
    cells : list of dict
        The cells' outputs.
    grids : dict
        ``"Cs"``, ``"alphas"``, ``"nus"``, ``"glasso"``.

    Returns
    -------
    dict
        ``{curve: {"mean": [...], "se": [...]}}`` with one curve per MED alpha (over C), per
        l1 symmetrisation (over nu) and GraphicalLasso (over its alpha).
    """
    tables = {name: _auc_table(cells, name) for name in METHODS}

    def curve(name, keys):
        return {"mean": [_mean(tables[name][k]) for k in keys], "se": [_se(tables[name][k]) for k in keys]}

    out = {f"MED alpha={a:g}": curve("MED", [(("C", C), ("alpha", a)) for C in grids["Cs"]]) for a in grids["alphas"]}
    out.update({name: curve(name, [(("nu", nu),) for nu in grids["nus"]]) for name in ("l1 AND", "l1 OR")})
    out["GraphicalLasso"] = curve("GraphicalLasso", [(("alpha", a),) for a in grids["glasso"]])
    return out


def holm_rejects(p_values, level=LEVEL):
    """Holm's step-down test: which of a family of hypotheses are rejected at ``level``.

    Parameters
    ----------
    p_values : list of float
        NaN (an undefined test) is never rejected.
    level : float, default=0.05
        The family-wise error rate.

    Returns
    -------
    list of bool

    Examples
    --------
    >>> holm_rejects([0.01, 0.04, 0.03, 0.5])
    [True, False, False, False]
    >>> holm_rejects([0.001, 0.01, 0.02])
    [True, True, True]
    """
    p = np.array([1.0 if v is None or np.isnan(v) else v for v in p_values], float)
    order = np.argsort(p, kind="stable")
    rejected = np.zeros(p.size, bool)
    for k, i in enumerate(order):
        if p[i] > level / (p.size - k):
            break
        rejected[i] = True
    return rejected.tolist()


def setting_comparisons(cells, informative_only=False):
    """The paper's claim, MED above l1 at every setting, tested per pair of settings.

    Every MED setting with ``alpha > 0`` against every l1 setting (AND and OR at every
    ``nu``): the paired t-test over the graphs of MED's AUC minus l1's.

    Parameters
    ----------
    cells : list of dict
        The cells' outputs (one per graph).
    informative_only : bool, default=False
        Leave out the settings without an edge estimate on any graph (AUC exactly 1/2 on
        every graph: l1 with every weight zero, as MED at ``alpha = 0``), against which any
        estimate is "above".

    Returns
    -------
    dict
        ``"pairs"`` (a list of ``{"MED", "l1", "mean_difference", "standard_error",
        "p_value", "n"}``), and the counts over them: ``"n_pairs"``, ``"above"`` /
        ``"below"`` (MED significantly above / below at the 5 % level, each test on its
        own), ``"above_holm"`` / ``"below_holm"`` (after Holm's correction over the
        family), ``"min_difference"``, ``"max_difference"``, and ``"med_above_every_l1"``:
        the MED settings significantly above every l1 setting (each test on its own).
    """
    def keep(aucs):
        return not informative_only or any(a != 0.5 for a in aucs)

    med = {k: v for k, v in _auc_table(cells, "MED").items() if dict(k)["alpha"] > 0 and keep(v)}
    l1 = {(name, k): v for name in ("l1 AND", "l1 OR") for k, v in _auc_table(cells, name).items() if keep(v)}
    pairs = [{"MED": dict(m), "l1": {"method": name, **dict(k)}, **_paired(a, b)}
             for m, a in med.items() for (name, k), b in l1.items()]
    sig = [t["p_value"] is not None and not np.isnan(t["p_value"]) and t["p_value"] < LEVEL for t in pairs]
    holm = holm_rejects([t["p_value"] for t in pairs])
    d = [t["mean_difference"] for t in pairs]
    above_all = [m for m in med if all(s and t["mean_difference"] > 0 for s, t in zip(sig, pairs) if t["MED"] == dict(m))]
    return {"n_pairs": len(pairs), "n_med_settings": len(med), "n_l1_settings": len(l1),
            "above": sum(s and x > 0 for s, x in zip(sig, d)), "below": sum(s and x < 0 for s, x in zip(sig, d)),
            "above_holm": sum(h and x > 0 for h, x in zip(holm, d)), "below_holm": sum(h and x < 0 for h, x in zip(holm, d)),
            "min_difference": float(np.nanmin(d)), "max_difference": float(np.nanmax(d)),
            "med_above_every_l1": [dict(m) for m in above_all], "pairs": pairs}


def _profiles(cells, name, key, keep=lambda r: True):
    """Per cell ``{value of key: best validation score over the other hyper-parameters}``."""
    out = []
    for c in cells:
        profile = {}
        for r in c["grid"][name]:
            if r["validation"] is not None and r["status"] in CONVERGED and keep(r):
                v = r["setting"][key]
                profile[v] = max(profile.get(v, -np.inf), r["validation"])
        out.append(profile)
    return out


def grid_edges(cells, grids):
    """How often each grid choice sat on an edge of its grid, with the validation profiles.

    Parameters
    ----------
    cells : list of dict
        The cells' outputs.
    grids : dict
        ``"Cs"``, ``"alphas"`` (MED's; ``alpha = 0`` is not a candidate), ``"nus"``,
        ``"glasso"``.

    Returns
    -------
    dict
        ``{"MED C", "MED alpha", "l1 nu", "GraphicalLasso alpha"}``:
        :func:`~medmtl.experiments.selection.grid_edge_counts` over the cells that chose.
    """
    switched = lambda r: r["setting"]["alpha"] > 0
    specs = (("MED C", "MED", "C", grids["Cs"], switched),
             ("MED alpha", "MED", "alpha", [a for a in grids["alphas"] if a > 0], switched),
             ("l1 nu", "l1 AND", "nu", grids["nus"], lambda r: True),
             ("GraphicalLasso alpha", "GraphicalLasso", "alpha", grids["glasso"], lambda r: True))
    out = {}
    for label, name, key, grid, keep in specs:
        chose = [c for c in cells if c["selected"][name] is not None]
        if chose:
            out[label] = grid_edge_counts([c["selected"][name]["setting"][key] for c in chose], grid,
                                          profiles=_profiles(chose, name, key, keep))
    return out


def selection_record(cells):
    """Per cell, every method's chosen setting and the validation score it was chosen by.

    Parameters
    ----------
    cells : list of dict
        The cells' outputs (:func:`~medmtl.experiments.structure.structure_cell`).

    Returns
    -------
    list of dict
    """
    return [{name: (c["selected"][name]["setting"], c["selected"][name]["validation"])
             if c["selected"][name] else None for name in METHODS} for c in cells]


def solver_agreement(checked, where, first, second):
    """How far MED's AUCs by two solution methods lie apart on the checked graphs.

    Parameters
    ----------
    checked : list of dict
        :func:`~medmtl.experiments.structure.solver_check_cell` outputs.
    where : list of dict
        Their cells' settings (``n_samples``, ``rep``).
    first, second : str
        The two methods.

    Returns
    -------
    dict
        ``"methods"``, ``"graphs"`` (per graph: settings compared, where both converged;
        how many AUCs differ; the largest difference) and the overall ``"compared"``,
        ``"differing"`` and ``"max_abs_difference"``.
    """
    graphs = []
    for out, w in zip(checked, where):
        both = [(a["auc"], b["auc"]) for a, b in zip(out[first], out[second])
                if a["status"] in CONVERGED and b["status"] in CONVERGED]
        diff = [abs(a - b) for a, b in both]
        graphs.append({"n_samples": w["n_samples"], "rep": w["rep"], "compared": len(both),
                       "differing": sum(x > 1e-12 for x in diff), "max_abs_difference": max(diff, default=None),
                       "unconverged": {m: sum(r["status"] not in CONVERGED for r in out[m]) for m in (first, second)}})
    diffs = [g["max_abs_difference"] for g in graphs if g["max_abs_difference"] is not None]
    return {"methods": [first, second], "graphs": graphs, "compared": sum(g["compared"] for g in graphs),
            "differing": sum(g["differing"] for g in graphs), "max_abs_difference": max(diffs, default=None)}


def fig4_figure(result):
    """One panel per sample size: the mean AUC at each fixed setting, with its standard error.

    Parameters
    ----------
    result : ExperimentResult
        An ``ising-structure`` result.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.figure

    s = result.settings
    fig = matplotlib.figure.Figure(figsize=(5.0 * len(s["samples"]), 5.2))
    axes = fig.subplots(1, len(s["samples"]), squeeze=False)[0]
    for ax, T in zip(axes, s["samples"]):
        found = result.extra["curves"][str(T)]
        lines = [(f"MED alpha={a:g}", s["Cs"], "o-", f"MED α = {a:g} (log10 C)") for a in s["alphas"]]
        lines += [(name, s["nus"], style, f"{name} (log10 ν)") for name, style in (("l1 AND", "s--"), ("l1 OR", "^--"))]
        lines.append(("GraphicalLasso", s["glasso_alphas"], "d:", "GraphicalLasso (log10 α)"))
        for key, grid, style, label in lines:
            mean = np.array([np.nan if v is None else v for v in found[key]["mean"]])
            se = np.array([0.0 if v is None else v for v in found[key]["se"]])
            ax.errorbar(np.log10(grid), mean, yerr=se, fmt=style, ms=3, capsize=2, label=label)
        ax.set_title(f"{T} samples" + (" — quick" if s["quick"] else ""))
        ax.set_xlabel("log10 of the regularisation (C, ν or α)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean edge AUC over graphs ± s.e. (test, each fixed setting)")
    # under the panels: inside, it would cover MED's alpha = 0 line at AUC 1/2
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=8, loc="lower center", ncol=4)
    fig.suptitle(result.title)
    fig.set_layout_engine("tight", rect=(0, 0.14, 1, 1))
    return fig


def scale_figure(result):
    """Edge AUC (± s.e.), P(AUC = 1) and the selected fit's time against the samples.

    Parameters
    ----------
    result : ExperimentResult
        An ``ising-structure-scale`` result.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.figure
    from matplotlib.lines import Line2D

    s = result.settings
    rows = result.extra["table"]
    fig = matplotlib.figure.Figure(figsize=(4.2 * len(s["kinds"]), 7.4))
    axes = fig.subplots(3, len(s["kinds"]), squeeze=False)
    for j, kind in enumerate(s["kinds"]):
        for N, marker in zip(s["sizes"], "osd^"):
            part = [r for r in rows if r["kind"] == kind and r["n_nodes"] == N]
            T = [r["n_samples"] for r in part]
            for name, color in _COLOURS.items():
                sm = [r["summary"][name] for r in part]
                axes[0, j].errorbar(T, [m["auc"] for m in sm], yerr=[m["auc_se"] or 0.0 for m in sm], marker=marker,
                                    color=color, capsize=2)
                axes[1, j].plot(T, [m["separable"] for m in sm], marker=marker, color=color)
                axes[2, j].plot(T, [m["seconds"] for m in sm], marker=marker, color=color)
        axes[0, j].set_title(f"{kind} graphs" + (" — quick" if s["quick"] else ""))
        for i, label in enumerate(("edge AUC (selected) ± s.e.", "P(a threshold gives the graph)",
                                   "fit time of the selected (s)")):
            axes[i, j].set_ylabel(label)
            axes[i, j].set_xscale("log")
        axes[2, j].set_yscale("log")
        axes[2, j].set_xlabel("training samples")
    # one legend under the panels, where it covers nothing: colour is the method, marker the size
    handles = ([Line2D([], [], color=c, label=name) for name, c in _COLOURS.items()]
               + [Line2D([], [], color="0.4", marker=m, ls="none", label=f"{N} nodes")
                  for N, m in zip(s["sizes"], "osd^")])
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def _mean_se(sm):
    """``mean ± s.e.`` of the selected AUCs, from the per-graph values."""
    return f"{fmt(_mean(sm['aucs']))} ± {fmt(_se(sm['aucs']))}"


def _setting_text(c):
    return (f"MED significantly above in {c['above']} and below in {c['below']} of {c['n_pairs']} pairs "
            f"({c['n_med_settings']} MED x {c['n_l1_settings']} l1 settings; after Holm's correction: above in "
            f"{c['above_holm']}, below in {c['below_holm']}); mean differences {fmt_difference(c['min_difference'])} to "
            f"{fmt_difference(c['max_difference'])}; MED settings significantly above every l1 setting: "
            f"{len(c['med_above_every_l1'])} of {c['n_med_settings']}")


def _cells_at(result, T):
    return [c for c, w in zip(result.extra["cells"], result.extra["cell_settings"]) if w["n_samples"] == T]


@readme_rows("ising-structure")
def _ising_structure_rows(result):
    s = result.settings
    rows = []
    for T, n_val in zip(s["samples"], s["validation_samples"]):
        experiment = (f"`ising-structure` (JMLR Fig. 4): mean edge AUC ± s.e. over {s['graphs']} random 5-node "
                      f"Ising models, {T} samples, seed {s['seed']}")
        rule = f"setting chosen by node-prediction accuracy (GraphicalLasso: log-likelihood) on {n_val} extra samples"
        summary, tests = result.extra["summary"][str(T)], result.extra["paired_tests"][str(T)]
        paper = "MED above l1 AND and OR at every setting (Fig. 4; its couplings are not given)" if T == 60 else "—"
        for name in METHODS:
            vs = "" if name == "MED" else f" (MED − this: {paired_summary(tests['MED vs ' + name])})"
            exact = sum(c["selected"][name]["exact"] for c in _cells_at(result, T) if c["selected"][name])
            rows.append(Row(experiment, name, rule, f"{_mean_se(summary[name])}{vs}; its own edge set is the graph "
                            f"in {exact} of {s['graphs']}", paper if name != "GraphicalLasso" else "—"))
        cells = _cells_at(result, T)
        rows.append(Row(experiment, "every MED setting (alpha > 0) vs every l1 setting (AND, OR x nu)",
                        "no selection: the paired t-test over the graphs of each pair of fixed settings (5 %)",
                        "every setting: " + _setting_text(setting_comparisons(cells)) + ". Without the settings "
                        "that estimate no edge (AUC 1/2 on every graph): "
                        + _setting_text(setting_comparisons(cells, informative_only=True)), paper))
    check = result.extra["solver_check"]
    rows.append(Row("`ising-structure`: MED's AUCs by two solution methods",
                    f"{check['methods'][0]} vs {check['methods'][1]}",
                    f"every grid setting of the first {s['check_graphs']} graphs at each sample size up to "
                    f"{s['check_max_samples']}, where both converged",
                    f"{check['differing']} of {check['compared']} AUCs differ; largest difference "
                    f"{check['max_abs_difference']:.2g}" if check["max_abs_difference"] is not None else "none compared"))
    return rows


@readme_rows("ising-structure-scale")
def _ising_scale_rows(result):
    s = result.settings
    rule = ("setting chosen by node-prediction accuracy (GraphicalLasso: log-likelihood) on extra validation "
            "samples; MED's unconverged fits are not candidates")
    rows = []
    fits = s["repetitions"] * len(s["Cs"]) * len(s["alphas"])
    for r in result.extra["table"]:
        if r["n_samples"] not in (min(s["samples"]), max(s["samples"])):
            continue
        parts = []
        for name in METHODS:
            sm = r["summary"][name]
            parts.append(f"{name} {_mean_se(sm)} / {sm['separable']:.1f} / {sm['exact']:.1f} / {sm['seconds']:.2g} s"
                         + (f" ({sm['unconverged']} of {fits} fits unconverged)"
                            if name == "MED" and sm["unconverged"] else ""))
        rows.append(Row(f"`ising-structure-scale`: {r['kind']} graph, {r['n_nodes']} nodes, {r['n_samples']} samples, "
                        f"{s['repetitions']} models",
                        "edge AUC ± s.e. / P(AUC = 1: some threshold gives the graph) / P(own edge set exact) / "
                        "fit time", rule, "; ".join(parts)))
    pooled = {name: [a for r in result.extra["table"] for a in r["summary"][name]["aucs"]] for name in METHODS}
    tests = paired_tests({name: {"aucs": aucs} for name, aucs in pooled.items()})
    rows.append(Row(f"`ising-structure-scale`: all {len(pooled['MED'])} graphs (every kind, size and sample size)",
                    "MED − each baseline, edge AUC (paired t-test over the graphs)", rule,
                    "; ".join(f"{name[7:]}: {paired_summary(t)}" for name, t in tests.items())))
    return rows
