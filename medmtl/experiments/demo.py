"""The main job (``make demo``): multi-task MED feature selection on the bundled Dermatology data.

Trains on 100 patients per task (6 one-vs-rest tasks), chooses C and alpha on a validation
half of the rest and reports the mean test AUC over tasks on the other half, beside
independent libsvm SVMs with C chosen the same way, over 5 random splits. Writes the ROC
curves of the first split to ``OUT/demo_dermatology_roc.png``.

    python -m medmtl.experiments.demo [--out results] [--folds 5] [--n-jobs 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from medmtl.experiments.med_figures import DERMATOLOGY_PAPER, dermatology_fold
from medmtl.experiments.runner import CellCall, RunOptions, run_grid

SIZE = 100


def plot_roc(fold, path):
    """ROC curves of every task, multi-task MED (solid) vs independent SVMs (dashed).

    Parameters
    ----------
    fold : dict
        One fold's result of ``dermatology_fold``: its test labels and both methods' test
        scores per task.
    path : str or pathlib.Path
        Where the PNG is written.
    """
    # a standalone figure, outside pyplot: the caller's backend is never touched
    from matplotlib.figure import Figure
    from sklearn.metrics import roc_auc_score, roc_curve

    fig = Figure(figsize=(11, 7))
    axes = fig.subplots(2, 3, sharex=True, sharey=True)
    for k, ax in enumerate(axes.ravel()):
        y = np.asarray(fold["test_y"][k])
        for method, style in (("multitask", "-"), ("independent", "--")):
            s = np.asarray(fold["test_scores"][method][k])
            fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
            ax.plot(fpr, tpr, style, label=f"{method} (AUC {roc_auc_score(y, s):.3f})")
        ax.set_title(fold["task_names"][k], fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    for ax in axes[-1]:
        ax.set_xlabel("false positive rate")
    for ax in axes[:, 0]:
        ax.set_ylabel("true positive rate")
    fig.suptitle(f"Dermatology, {SIZE} training examples per task: MED multi-task feature "
                 "selection vs independent SVMs (test split of fold 0)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


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
    plot_roc(folds[0], path)
    print(f"  wrote {path}  ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
