"""JMLR Fig. 2: multi-task MED kernel selection on Landmine over a bank of per-feature, RBF and
(Fig. 2b) polynomial kernels, against independent SVMs."""

from __future__ import annotations

import numpy as np

from medmtl.baselines.svm import independent_svm_scores
from medmtl.datasets import load_landmine
from medmtl.evaluation import mean_auc
from medmtl.experiments.kernel_banks import (LANDMINE_DEVELOPMENT_SEED, LANDMINE_RBF_SCALES, SumKernel,
                                             landmine_kernel_bank, landmine_rbf_gammas, unit_diagonal_kernels)
from medmtl.experiments.leakage import guard_test_split
from medmtl.experiments.med_method import METHOD, fit_options, method_settings
from medmtl.experiments.preprocessing import standardize_tasks
from medmtl.experiments.registry import register
from medmtl.experiments.report import readme_rows
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.selection import select_on_validation, warm_path
from medmtl.experiments.spec import Spec
from medmtl.experiments.splits import split_uniform_draw, split_with_both_classes, with_unfitted_tasks
from medmtl.experiments.summaries import (STRONGEST_BASELINE_RULE, baseline_comparisons, cell_records, size_curves,
                                          size_rows, sizes_text)
from medmtl.experiments.threads import one_blas_thread

__all__ = ["landmine_fold", "landmine_kernels", "landmine_kernels_poly"]


LANDMINE_SIZES = [20, 40, 60, 80, 100, 120, 140, 160, 180, 200]
_GRID = {"sizes": LANDMINE_SIZES, "folds": 5,
         "grid": {"Cs": [0.01, 0.1, 1.0, 10.0, 100.0], "alphas": [0.0, 1.0, 10.0, 100.0, 1000.0]}}
_QUICK = {"sizes": [40], "folds": 1, "grid": {"Cs": [0.1, 1.0], "alphas": [0.0, 10.0]}}
# the paper's curves at LANDMINE_SIZES, read off the JMLR figure
SPECS = {
    False: Spec("landmine-kernels",
                "JMLR Fig. 2a: multi-task MED kernel selection (9 per-feature + 9 RBF) vs SVMs, Landmine",
                grid=_GRID, quick=_QUICK,
                paper={"multitask": [.6015, .6666, .6816, .6942, .6932, .7209, .7329, .7396, .7342, .7376],
                       "independent": [.5903, .6438, .6547, .6789, .6839, .7118, .7146, .7222, .7204, .7312]}),
    True: Spec("landmine-kernels-poly",
               "JMLR Fig. 2b: as Fig. 2a plus linear..quartic kernels (D = 22), Landmine",
               grid=_GRID, quick=_QUICK,
               paper={"multitask": [.5979, .6576, .6699, .7017, .7022, .7235, .7295, .7425, .7428, .7460],
                      "independent": [.5946, .6475, .6623, .6935, .6978, .7156, .7178, .7272, .7291, .7375]}),
}
LANDMINE_PAPER = {poly: spec.paper for poly, spec in SPECS.items()}
LANDMINE_GRID, LANDMINE_QUICK_GRID = _GRID["grid"], _QUICK["grid"]


def _landmine_split(ds, size, fold, seed, draw):
    """Train / validation / test of the fitted tasks, their indices and the class swaps made."""
    if draw == "stratified":
        train, val, test, swaps = split_with_both_classes(ds, size, 0.5, random_state=[seed, size, fold])
        return train, val, test, list(range(len(ds))), swaps
    if draw == "uniform":
        train, val, test, fitted = split_uniform_draw(ds, size, random_state=[seed, size, fold, 1])
        return train[fitted], val[fitted], test[fitted], fitted, 0
    raise ValueError(f"draw must be 'stratified' or 'uniform', got {draw!r}")


@one_blas_thread
def landmine_fold(size, fold, seed=0, Cs=LANDMINE_GRID["Cs"], alphas=LANDMINE_GRID["alphas"],
                  poly=False, method=METHOD, rbf_scales=LANDMINE_RBF_SCALES, draw="stratified"):
    """One fold of JMLR Fig. 2 at ``size`` training examples per task (29 tasks).

    Each minefield draws ``size`` training examples (stratified, at least one mine); the
    rest are split in half for validation and test. Inputs are standardised on the training
    inputs, the RBF bandwidths are set from their median squared distance, and every kernel
    of the bank is scaled to mean diagonal 1 on them. Multi-task MED kernel selection
    chooses one (C, alpha) for all tasks on validation mean AUC. The independent SVMs
    (libsvm, the unweighted sum of the same bank, i.e. MED at alpha = 0) choose one C for
    all tasks the same way, as the paper describes; two stronger baselines are reported
    beside them: the same SVMs with C chosen per task, and RBF SVMs with (C, gamma) chosen
    per task. ``rbf_scales`` are the RBF bandwidths in units of the median squared distance.

    ``draw="uniform"`` follows the paper's words literally instead: the training examples
    are drawn uniformly (:func:`~medmtl.experiments.splits.split_uniform_draw`), tasks
    left without a mine are not fitted and score AUC 1/2 on validation and test, and every
    mean AUC is over all 29 tasks.

    Parameters
    ----------
    size, fold, seed : int
        Training examples per task, the fold (repetition) at that size, and the run's seed
        (``RunOptions.seed``); the three seed the split.
    Cs, alphas : list of float, default: ``LANDMINE_GRID``'s
        MED's values of ``C`` (also the SVMs' grid) and of ``alpha``.
    poly : bool, default=False
        Add the polynomial kernels to the bank (Fig. 2b) (:func:`landmine_kernel_bank`).
    method : str, default=METHOD
        The registered MED solution method.
    rbf_scales : list of float, default=LANDMINE_RBF_SCALES
        The RBF bandwidths in units of the median squared distance
        (:func:`landmine_rbf_gammas`).
    draw : {"stratified", "uniform"}, default="stratified"
        How the training examples are drawn, as described above.

    Returns
    -------
    dict
    """
    from medmtl.med import MultiTaskMEDClassifier

    ds = load_landmine()
    train, val, test, fitted, swaps = _landmine_split(ds, size, fold, seed, draw)
    test = guard_test_split(test)

    def over_all_tasks(mauc):
        return with_unfitted_tasks(mauc, len(fitted), len(ds))

    Xtr, Xva, Xte = standardize_tasks(train.Xs, val.Xs, test.Xs)
    gammas = landmine_rbf_gammas(Xtr, rbf_scales)
    bank = unit_diagonal_kernels(landmine_kernel_bank(Xtr[0].shape[1], gammas, poly=poly), Xtr)

    def make(C, alpha):
        return MultiTaskMEDClassifier(selection="kernels", kernels=bank, C=C, alpha=alpha,
                                      warm_start=True, **fit_options(method))

    def val_mauc(model):
        return mean_auc(val.ys, model.decision_function(Xva))

    scores, iterations = warm_path(make, Cs, alphas, Xtr, train.ys, val_mauc)
    (C, alpha), val_mt = select_on_validation(scores)
    model = make(C, alpha).fit(Xtr, train.ys)
    mt_test = mean_auc(test.ys, model.decision_function(Xte))
    parts = [list(zip(Xs, d.ys)) for Xs, d in ((Xtr, train), (Xva, val), (Xte, test))]
    val_ind, test_ind, ind_chosen, _ = independent_svm_scores(Cs, *parts, kernel=SumKernel(bank), per_task=False)
    val_task, test_task, task_chosen, _ = independent_svm_scores(Cs, *parts, kernel=SumKernel(bank))
    val_rbf, test_rbf, rbf_chosen, _ = independent_svm_scores(Cs, *parts, kernel="rbf",
                                                              grid=[{"gamma": g} for g in gammas])
    return {
        "multitask": over_all_tasks(mt_test), "independent": over_all_tasks(test_ind),
        "independent_task_C": over_all_tasks(test_task), "independent_rbf": over_all_tasks(test_rbf),
        "validation": {k: over_all_tasks(v) for k, v in (("multitask", val_mt), ("independent", val_ind),
                                                         ("independent_task_C", val_task),
                                                         ("independent_rbf", val_rbf))},
        "fitted_tasks": len(fitted),
        "validation_surface": [[c, a, over_all_tasks(s)] for (c, a), s in sorted(scores.items())],
        "chosen": {"C": C, "alpha": alpha, "independent_C": ind_chosen[0]["C"],
                   "independent_task_C": [c["C"] for c in task_chosen],
                   "independent_rbf": [[c["C"], c["gamma"]] for c in rbf_chosen]},
        "switch_posterior": np.asarray(model.switch_posterior_).tolist(),
        "kernel_names": [k.name for k in bank],
        "rbf_gammas": gammas,
        "max_iterations": max(iterations.values()),
        "class_swaps": swaps,
    }


LANDMINE_METHODS = {"multitask": "Multi-task sparsity (MED)", "independent": "Independent SVMs",
                    "independent_task_C": "Independent SVMs, C per task",
                    "independent_rbf": "Independent RBF SVMs, (C, gamma) per task"}
LANDMINE_BASELINES = ["independent", "independent_task_C", "independent_rbf"]


def _landmine(poly, options, sizes, folds, grid, draw):
    spec = SPECS[poly]
    name = spec.name
    if options.seed == LANDMINE_DEVELOPMENT_SEED:
        raise ValueError(f"seed {LANDMINE_DEVELOPMENT_SEED} is Landmine's development seed (the RBF bandwidth "
                         "rule was chosen on its validation AUC); its results are not reported: take another seed")
    config = spec.settings(options.quick)
    sizes, folds, grid = sizes or config["sizes"], folds or config["folds"], grid or config["grid"]
    cells = [{"size": n, "fold": f, "seed": options.seed, "poly": poly, "method": METHOD, "draw": draw, "v": 5,
              **grid}
             for n in sizes for f in range(folds)]
    out = run_grid(CellCall(landmine_fold), cells, name=name, options=options)
    methods = LANDMINE_METHODS
    measured, std, records = size_curves(out, cells, methods, sizes,
                                          ["chosen", "rbf_gammas", "switch_posterior", "max_iterations",
                                           "class_swaps", "fitted_tasks"])
    paper = {methods[k]: [spec.paper[k][LANDMINE_SIZES.index(n)] for n in sizes]
             for k in ("multitask", "independent")}
    D = 22 if poly else 18
    return ExperimentResult(
        name,
        settings={"data": "Landmine (Xue et al. 2007), 29 tasks, 9 features standardised on training inputs",
                  "protocol": ("n per task for training (stratified, >= 1 mine: a mine is swapped in from "
                               "validation/test when the stratified draw has none)" if draw == "stratified" else
                               "n per task for training drawn uniformly; tasks without a mine are not fitted "
                               "and score AUC 1/2")
                              + "; rest split half validation / half test; mean test AUC over the 29 tasks",
                  "draw": draw,
                  "kernels": f"D = {D}: 9 per-feature linear kernels, 9 RBF kernels gamma = 2^-4..2^4 "
                             "over the median squared distance between training inputs"
                             + (", polynomial (<a,b>/9 + 1)^p, p = 1..4" if poly else "")
                             + "; every kernel scaled to mean diagonal 1 on the training inputs",
                  "multitask": f"MultiTaskMEDClassifier(selection='kernels', method={METHOD!r}), one (C, alpha) "
                               "for all tasks chosen on validation MAUC, warm-started path over alpha per C",
                  "independent": "libsvm SVC per task on the unweighted sum of the same kernel bank "
                                 "(MED at alpha = 0), one C for all tasks chosen on validation MAUC",
                  "independent_task_C": "the same SVMs, C chosen per task on validation AUC",
                  "independent_rbf": "libsvm RBF SVC per task, (C, gamma) chosen per task on validation "
                                     "AUC, gamma from the same 9 bandwidths",
                  "rbf_bandwidth_rule": "standardised inputs, gamma = 2^-4..2^4 over the median squared "
                                        "distance: the rule was chosen on the validation AUC of seed "
                                        f"{LANDMINE_DEVELOPMENT_SEED} (the development seed, never reported)",
                  "development_seed": LANDMINE_DEVELOPMENT_SEED,
                  "strongest_baseline": STRONGEST_BASELINE_RULE,
                  "sizes": sizes, "folds": folds, "grid": grid, "seed": options.seed, "quick": options.quick,
                  **method_settings(METHOD)},
        x=sizes, measured=measured, measured_std=std, paper=paper,
        xlabel="training examples per task", ylabel="mean test AUC over 29 tasks",
        title=f"Landmine: multi-task kernel selection, D = {D} (JMLR Fig. 2{'b' if poly else 'a'})",
        extra={"cells": records, "kernel_names": out[0]["kernel_names"],
               **baseline_comparisons(out, cells, sizes, "size", LANDMINE_BASELINES),
               "selection": cell_records(out, cells, ["chosen", "validation", "validation_surface",
                                                       "rbf_gammas"])})


@register(SPECS[False])
def landmine_kernels(options=RunOptions(), *, sizes=None, folds=None, grid=None, draw="stratified"):
    """JMLR Fig. 2a; ``sizes``, ``folds``, ``grid`` and ``draw`` (see :func:`landmine_fold`)
    override the full run's.

    Parameters
    ----------
    options : RunOptions
        How to run (:class:`~medmtl.experiments.runner.RunOptions`).
    sizes : list of int, optional
        Training examples per task, one point of the curve each (the run's own if None).
    folds : int, optional
        Folds per size (the run's own if None).
    grid : dict, optional
        ``{"Cs": [...], "alphas": [...]}`` (the run's own if None).
    draw : {"stratified", "uniform"}, default="stratified"
        How the training examples are drawn (:func:`landmine_fold`).
    """
    return _landmine(False, options, sizes, folds, grid, draw)


@register(SPECS[True])
def landmine_kernels_poly(options=RunOptions(), *, sizes=None, folds=None, grid=None, draw="stratified"):
    """JMLR Fig. 2b: :func:`landmine_kernels` with the linear to quartic polynomial kernels
    added to the bank (D = 22).

    Parameters
    ----------
    sizes, folds, grid, draw
        As for :func:`landmine_kernels`.
    """
    return _landmine(True, options, sizes, folds, grid, draw)


# method key -> (name on the results page, the rule that selected its hyper-parameters)
_ROW_METHODS = {
    "landmine": {"multitask": ("MED kernel selection", "one (C, alpha) for all tasks on validation MAUC"),
                 "independent": ("sum-kernel SVMs, one C", "one C for all tasks on validation MAUC"),
                 "independent_task_C": ("sum-kernel SVMs, C per task", "C per task on validation AUC"),
                 "independent_rbf": ("RBF SVMs, (C, gamma) per task",
                                     "(C, gamma) per task on validation AUC, gamma from the 9 bandwidths")},
}




def _landmine_readme_rows(result, figure):
    shown = [20, 40, 120, 200]
    experiment = (f"`{result.name}` (JMLR Fig. {figure}, D = {len(result.extra['kernel_names'])}): "
                  "mean test AUC over 29 tasks, "
                  f"{result.settings['folds']} folds, seed {result.settings['seed']} (seed "
                  f"{result.settings['development_seed']} chose the RBF bandwidth rule and is not reported), "
                  f"n = {sizes_text(result, shown)} per task")
    return size_rows(result, experiment, LANDMINE_METHODS, _ROW_METHODS["landmine"], shown)


@readme_rows("landmine-kernels")
def _landmine_18_readme_rows(result):
    return _landmine_readme_rows(result, "2a")


@readme_rows("landmine-kernels-poly")
def _landmine_22_readme_rows(result):
    return _landmine_readme_rows(result, "2b")


