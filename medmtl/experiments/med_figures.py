"""The JMLR paper's figures: Dermatology (Fig. 1) here, Landmine (Fig. 2,
:mod:`~medmtl.experiments.med_landmine`) and Heart (Fig. 3, :mod:`~medmtl.experiments.med_heart`).

Each figure is a fold (or split) function of its settings, a grid of cells over sizes and
folds run by :func:`~medmtl.experiments.runner.run_grid`, and a registered experiment that
averages the cells into an :class:`~medmtl.experiments.result.ExperimentResult`.
"""

from __future__ import annotations

import numpy as np

from medmtl.baselines.svm import independent_svm_scores
from medmtl.datasets import load_dermatology
from medmtl.evaluation import mean_auc
from medmtl.experiments.leakage import guard_test_split
from medmtl.experiments.med_heart import HEART_ADAPTIVE, HEART_CURVE, HEART_PAPER, heart_pooling, heart_split
from medmtl.experiments.med_landmine import (LANDMINE_METHODS, LANDMINE_PAPER, landmine_fold, landmine_kernels,
                                             landmine_kernels_poly)
from medmtl.experiments.med_method import METHOD, fit_options, method_settings
from medmtl.experiments.preprocessing import minmax_scale_tasks
from medmtl.experiments.registry import register
from medmtl.experiments.report import readme_rows
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.selection import select_on_validation, warm_path
from medmtl.experiments.spec import Spec
from medmtl.experiments.summaries import (STRONGEST_BASELINE_RULE, baseline_comparisons, cell_records, mean_std_by,
                                          paired_tests_by, size_curves, size_rows, sizes_text)
from medmtl.experiments.threads import one_blas_thread

__all__ = ["dermatology_path", "dermatology_fold", "landmine_fold", "heart_split", "mean_std_by",
           "paired_tests_by", "baseline_comparisons", "dermatology", "landmine_kernels", "landmine_kernels_poly",
           "heart_pooling", "HEART_ADAPTIVE", "HEART_CURVE", "HEART_PAPER", "LANDMINE_METHODS", "LANDMINE_PAPER"]

# Sizes 20, 40, ..., 200, plus 150: one of the three sizes at which the paper's curve was read.
# Paper values read off the JMLR figure (see shared/seeds/README.md), (multi-task, independent)
# per size.
SPEC = Spec(
    "dermatology", "JMLR Fig. 1: multi-task MED feature selection vs independent SVMs, Dermatology",
    grid={"sizes": [20, 40, 60, 80, 100, 120, 140, 150, 160, 180, 200], "folds": 5,
          "grid": {"Cs": [0.01, 0.1, 1.0, 10.0, 100.0], "alphas": [0.0, 0.1, 1.0, 10.0, 100.0, 1000.0]}},
    quick={"sizes": [40, 100, 200], "folds": 1, "grid": {"Cs": [0.1, 1.0, 10.0], "alphas": [0.0, 1.0, 100.0]}},
    paper={100: (0.9942, 0.9908), 150: (0.9959, 0.9921), 200: (0.9968, 0.9934)})
DERMATOLOGY_PAPER = SPEC.paper
DERMATOLOGY_GRID, DERMATOLOGY_QUICK_GRID = SPEC.grid["grid"], SPEC.quick["grid"]


def dermatology_path(size, fold, seed=0, Cs=DERMATOLOGY_GRID["Cs"], alphas=DERMATOLOGY_GRID["alphas"],
                     method=METHOD):
    """Split Dermatology, sweep a warm-started (C, alpha) path, choose on validation.

    Each of the 6 one-vs-rest tasks draws its own ``size`` training patients; the rest are
    split in half for validation and test. Features are scaled into [0, 1] on the training
    inputs. Returns a dict with the splits (``train``, ``val``, ``test`` and the scaled
    ``Xtr``, ``Xva``, ``Xte``), the validation mean AUC of every grid point (``scores``) and
    its iteration count, the ``chosen`` (C, alpha) and the ``model`` refitted there. The test
    split is not looked at.

    Parameters
    ----------
    size : int
        Training patients per task.
    fold : int
        The fold (repetition) at this size: it seeds the split with ``seed`` and ``size``.
    seed : int, default=0
        The run's seed (``RunOptions.seed``).
    Cs : list of float, default=DERMATOLOGY_GRID["Cs"]
        MED's values of ``C``, also the independent SVMs' grid.
    alphas : list of float, default=DERMATOLOGY_GRID["alphas"]
        MED's values of ``alpha``.
    method : str, default=METHOD
        The registered MED solution method.

    Returns
    -------
    dict
    """
    from medmtl.med import MultiTaskMEDClassifier

    ds = load_dermatology()
    train, val, test = ds.split(train=size, validation=0.5, random_state=[seed, size, fold])
    test = guard_test_split(test)
    Xtr, Xva, Xte = minmax_scale_tasks(train.Xs, val.Xs, test.Xs)

    def make(C, alpha):
        return MultiTaskMEDClassifier(selection="features", C=C, alpha=alpha, warm_start=True,
                                      **fit_options(method))

    scores, iterations = warm_path(make, Cs, alphas, Xtr, train.ys,
                                   lambda m: mean_auc(val.ys, m.decision_function(Xva)))
    chosen, validation = select_on_validation(scores)
    return {"task_names": ds.task_names, "train": train, "val": val, "test": test,
            "Xtr": Xtr, "Xva": Xva, "Xte": Xte, "scores": scores, "iterations": iterations,
            "chosen": chosen, "validation": validation, "model": make(*chosen).fit(Xtr, train.ys)}


@one_blas_thread
def dermatology_fold(size, fold, seed=0, Cs=DERMATOLOGY_GRID["Cs"], alphas=DERMATOLOGY_GRID["alphas"],
                     method="bound"):
    """One fold of JMLR Fig. 1 at ``size`` training examples per task.

    Multi-task MED feature selection chooses (C, alpha) on validation mean AUC along the
    path of :func:`dermatology_path`; the independent SVMs choose one C for all tasks the
    same way, as the paper describes ("a value of C"). The same SVMs with C chosen per task
    are reported beside them.

    Returns a dict with the three test mean AUCs, their validation mean AUCs, MED's validation
    surface ``[C, alpha, MAUC]``, the chosen hyper-parameters and the test labels and decision
    values per task (for ROC curves).

    Parameters
    ----------
    size, fold, seed, Cs, alphas
        As for :func:`dermatology_path`.
    method : str, default="bound"
        The registered MED solution method.

    Returns
    -------
    dict
    """
    p = dermatology_path(size, fold, seed, Cs, alphas, method)
    train, val, test = p["train"], p["val"], p["test"]
    (C, alpha), model = p["chosen"], p["model"]
    mt_scores = model.decision_function(p["Xte"])
    parts = [list(zip(p[X], d.ys)) for X, d in (("Xtr", train), ("Xva", val), ("Xte", test))]
    val_ind, test_ind, ind_chosen, ind_scores = independent_svm_scores(Cs, *parts, per_task=False)
    val_task, test_task, task_chosen, _ = independent_svm_scores(Cs, *parts)
    return {
        "multitask": mean_auc(test.ys, mt_scores), "independent": test_ind,
        "independent_task_C": test_task,
        "validation": {"multitask": p["validation"], "independent": val_ind,
                       "independent_task_C": val_task},
        "validation_surface": [[c, a, s] for (c, a), s in sorted(p["scores"].items())],
        "chosen": {"C": C, "alpha": alpha, "independent_C": ind_chosen[0]["C"],
                   "independent_task_C": [c["C"] for c in task_chosen]},
        "switch_posterior": np.asarray(model.switch_posterior_).tolist(),
        "max_iterations": max(p["iterations"].values()),
        "test_y": [y.tolist() for y in test.ys],
        "test_scores": {"multitask": [s.tolist() for s in mt_scores],
                        "independent": [s.tolist() for s in ind_scores]},
        "task_names": p["task_names"],
    }


DERMATOLOGY_METHODS = {"multitask": "Multi-task sparsity (MED)", "independent": "Independent SVMs",
                       "independent_task_C": "Independent SVMs, C per task"}


@register(SPEC)
def dermatology(options=RunOptions()):
    """JMLR Fig. 1: mean test AUC against training examples per task, over 5 folds."""
    config = SPEC.settings(options.quick)
    sizes, folds, grid = config["sizes"], config["folds"], config["grid"]
    cells = [{"size": n, "fold": f, "seed": options.seed, "method": METHOD, "v": 4, **grid}
             for n in sizes for f in range(folds)]
    out = run_grid(CellCall(dermatology_fold), cells, name="dermatology", options=options)
    methods = DERMATOLOGY_METHODS
    measured, std, records = size_curves(out, cells, methods, sizes, ["chosen"])
    paper = {methods[key]: [DERMATOLOGY_PAPER.get(n, (None, None))[i] for n in sizes]
             for i, key in enumerate(("multitask", "independent"))}
    return ExperimentResult(
        "dermatology",
        settings={"data": "UCI Dermatology, 6 one-vs-rest tasks, 34 features scaled to [0, 1]",
                  "protocol": "n per task for training; rest split half validation / half test",
                  "sizes": sizes, "folds": folds, "grid": grid, "seed": options.seed, "quick": options.quick,
                  "model": f"MultiTaskMEDClassifier(selection='features', method={METHOD!r}), warm path",
                  "independent": "libsvm linear SVC per task, one C for all tasks chosen on validation "
                                 "MAUC; 'C per task': each task's C chosen on its validation AUC",
                  "strongest_baseline": STRONGEST_BASELINE_RULE,
                  **method_settings(METHOD)},
        x=sizes, measured=measured, measured_std=std, paper=paper,
        xlabel="training examples per task", ylabel="mean test AUC over 6 tasks",
        title="Dermatology: multi-task feature selection (JMLR Fig. 1)",
        extra={"cells": records,
               **baseline_comparisons(out, cells, sizes, "size", ["independent", "independent_task_C"]),
               "selection": cell_records(out, cells, ["chosen", "validation", "validation_surface"])})



# method key -> (name on the results page, the rule that selected its hyper-parameters)
_ROW_METHODS = {
    "dermatology": {"multitask": ("MED feature selection", "one (C, alpha) for all tasks on validation MAUC"),
                    "independent": ("linear SVMs, one C", "one C for all tasks on validation MAUC"),
                    "independent_task_C": ("linear SVMs, C per task", "C per task on validation AUC")},
}


@readme_rows("dermatology")
def _dermatology_readme_rows(result):
    shown = [100, 150, 200]
    experiment = (f"`dermatology` (JMLR Fig. 1): mean test AUC over 6 tasks, {result.settings['folds']} folds, "
                  f"seed {result.settings['seed']}, n = {sizes_text(result, shown)} per task")
    return size_rows(result, experiment, DERMATOLOGY_METHODS, _ROW_METHODS["dermatology"], shown)


