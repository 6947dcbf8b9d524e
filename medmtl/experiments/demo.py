"""The main job (``make demo``): multi-task MED feature selection on the bundled Dermatology data.

Trains on 100 patients per task (6 one-vs-rest tasks), chooses C and alpha on a validation
half of the rest and reports the mean test AUC over tasks on the other half, beside
independent libsvm SVMs with C chosen the same way, over 5 random splits. Writes
``OUT/demo_dermatology_roc.png``: the ROC curves of the first split beside the switch
posterior MED learned for each of the 34 named features.

    python -m medmtl.experiments.demo [--out results] [--folds 5] [--n-jobs 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from medmtl.datasets import load_dermatology
from medmtl.experiments.med_figures import DERMATOLOGY_PAPER, dermatology_fold
from medmtl.experiments.runner import CellCall, RunOptions, run_grid

SIZE = 100


# The ROC panels show the top-left corner, where the two methods differ: both reach AUCs
# near 1 on Dermatology, so the full square shows little more than two lines along its edges.
FPR_SHOWN = 0.2


def _roc_panel(ax, y, scores):
    """Both methods' ROC curves of one task, zoomed to false positive rates up to FPR_SHOWN."""
    from sklearn.metrics import roc_auc_score, roc_curve

    first_step = 1.0  # the lowest true positive rate any method reaches before its first false positive
    for (method, s), style in zip(scores.items(), ("-", "--")):
        fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
        ax.plot(fpr, tpr, style, drawstyle="steps-post", label=f"{method} (AUC {roc_auc_score(y, s):.3f})")
        first_step = min(first_step, tpr[fpr == 0].max())
    ax.set_xlim(-0.005, FPR_SHOWN)
    ax.set_ylim(min(np.floor(first_step * 10) / 10, 0.9) - 0.02, 1.01)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")


def _switch_panel(ax, folds, names):
    """The shared switch posterior of every feature learned on the first fold (the model
    whose ROC curves are drawn), largest first, with the other folds' values as dots."""
    P = np.array([f["switch_posterior"] for f in folds], dtype=float)
    names = list(names) if names is not None else [f"x{d}" for d in range(P.shape[1])]
    order = np.argsort(-P[0], kind="stable")
    rows = np.arange(order.size)
    chosen = folds[0].get("chosen", {})
    ax.barh(rows, P[0, order], color="tab:blue", height=0.7, label="fold 0")
    if P.shape[0] > 1:
        ax.plot(P[1:, order].ravel(), np.tile(rows, P.shape[0] - 1), "o", color="0.4", markersize=2.5,
                label="fold 1" if P.shape[0] == 2 else f"folds 1 to {P.shape[0] - 1}")
    if "alpha" in chosen:
        ax.axvline(1.0 / (1.0 + chosen["alpha"]), color="tab:red", linestyle=":", label="prior of fold 0")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_yticks(rows, [names[d] for d in order], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, min(1.0, np.ceil(P.max() * 10 + 0.5) / 10))
    ax.set_xlabel("posterior probability that the feature's switch is on")
    setting = f"\n(fold 0: C = {chosen['C']:g}, alpha = {chosen['alpha']:g})" if {"C", "alpha"} <= set(chosen) else ""
    ax.set_title(f"What MED learned: one switch per feature, shared{setting}", fontsize=9)
    ax.grid(axis="x", alpha=0.3)


def plot_demo(folds, path, feature_names=None):
    """The demo's figure: ROC curves per task beside the shared switch posteriors.

    Left, the ROC curves of every task on the test split of the first fold, multi-task MED
    (solid) against independent SVMs (dashed), zoomed to the top-left corner. Right, when the
    folds carry them, the switch posteriors MED learned on that fold, one per feature,
    largest first, with the other folds' as dots.

    Parameters
    ----------
    folds : list of dict
        Results of ``dermatology_fold``: the test labels and both methods' test scores per
        task, and optionally ``switch_posterior`` and ``chosen`` (C, alpha).
    path : str or pathlib.Path
        Where the PNG is written.
    feature_names : list of str, optional
        The features' names, in the order of ``switch_posterior``.
    """
    # a standalone figure, outside pyplot: the caller's backend is never touched
    from matplotlib.figure import Figure

    fold = folds[0]
    posteriors = [f["switch_posterior"] for f in folds if "switch_posterior" in f]
    fig = Figure(figsize=(16, 8.5) if posteriors else (11, 7.5), layout="constrained")
    grid = fig.add_gridspec(2, 4 if posteriors else 3, width_ratios=[1, 1, 1, 1.35] if posteriors else None)
    axes = [fig.add_subplot(grid[k // 3, k % 3]) for k in range(6)]
    for k, ax in enumerate(axes):
        y = np.asarray(fold["test_y"][k])
        _roc_panel(ax, y, {m: np.asarray(fold["test_scores"][m][k]) for m in ("multitask", "independent")})
        ax.set_title(fold["task_names"][k], fontsize=9)
        if k >= 3:
            ax.set_xlabel("false positive rate")
        if k % 3 == 0:
            ax.set_ylabel("true positive rate")
    if posteriors:
        _switch_panel(fig.add_subplot(grid[:, 3]), [f for f in folds if "switch_posterior" in f], feature_names)
    fig.suptitle(f"Dermatology, {SIZE} training examples per task: MED multi-task feature selection vs "
                 f"independent SVMs\n(ROC curves on the test split of fold 0, false positive rates up to "
                 f"{FPR_SHOWN:g})")
    fig.savefig(path, dpi=110)


def plot_roc(fold, path):
    """:func:`plot_demo` for one fold.

    Parameters
    ----------
    fold : dict
        One fold's result of ``dermatology_fold``.
    path : str or pathlib.Path
        Where the PNG is written.
    """
    plot_demo([fold], path)


def main(argv=None):
    """``make demo``: multi-task MED feature selection on Dermatology against independent SVMs.

    Parameters
    ----------
    argv : list of str, optional
        The command line (``--out``, ``--folds``, ``--n-jobs``, ``--seed``); ``None`` reads
        ``sys.argv``.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cells = [{"size": SIZE, "fold": f, "seed": args.seed} for f in range(args.folds)]
    folds = run_grid(CellCall(dermatology_fold), cells, name="demo-dermatology",
                     options=RunOptions(seed=args.seed, n_jobs=args.n_jobs, use_cache=False))
    mt = np.array([f["multitask"] for f in folds])
    ind = np.array([f["independent"] for f in folds])
    paper_mt, paper_ind = DERMATOLOGY_PAPER[SIZE]
    print(f"Dermatology, 6 one-vs-rest tasks, {SIZE} training examples per task, "
          f"{args.folds} random splits (C, alpha chosen on validation)")
    print(f"  mean test AUC  multi-task MED feature selection: {mt.mean():.4f} +- {mt.std():.4f}"
          f"   (paper {paper_mt:.4f})")
    print(f"  mean test AUC  independent SVMs (libsvm):        {ind.mean():.4f} +- {ind.std():.4f}"
          f"   (paper {paper_ind:.4f})")
    chosen = [(f["chosen"]["C"], f["chosen"]["alpha"]) for f in folds]
    print(f"  chosen (C, alpha) per split: {chosen}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "demo_dermatology_roc.png"
    plot_demo(folds, path, load_dermatology().feature_names)
    print(f"  wrote {path}  ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
