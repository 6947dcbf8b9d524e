"""The JMLR paper's figures: Dermatology (Fig. 1), Landmine (Fig. 2), Heart (Fig. 3)."""

from __future__ import annotations

import numpy as np

from medmtl.datasets import load_dermatology
from medmtl.evaluation import mean_auc
from medmtl.experiments.protocol import (independent_svm_scores, minmax_scale_tasks,
                                         select_on_validation, warm_path)
from medmtl.experiments.registry import register
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import run_grid

# Numbers read off the JMLR figures (see shared/seeds/README.md); None where not read.
DERMATOLOGY_PAPER = {100: (0.9942, 0.9908), 150: (0.9959, 0.9921), 200: (0.9968, 0.9934)}

DERMATOLOGY_GRID = {"Cs": [0.01, 0.1, 1.0, 10.0, 100.0], "alphas": [0.0, 0.1, 1.0, 10.0, 100.0, 1000.0]}
DERMATOLOGY_QUICK_GRID = {"Cs": [0.1, 1.0, 10.0], "alphas": [0.0, 1.0, 100.0]}


def dermatology_fold(size, fold, seed=0, Cs=DERMATOLOGY_GRID["Cs"], alphas=DERMATOLOGY_GRID["alphas"],
                     method="bound"):
    """One fold of JMLR Fig. 1 at ``size`` training examples per task.

    Each of the 6 one-vs-rest tasks draws its own ``size`` training patients; the rest are
    split in half for validation and test. Features are scaled into [0, 1] on the training
    inputs. Multi-task MED feature selection chooses (C, alpha) and the independent SVMs
    choose C per task, both on validation mean AUC.

    Returns a dict with both test mean AUCs, the chosen hyper-parameters and the test labels
    and decision values per task (for ROC curves).
    """
    from medmtl.med import MultiTaskMEDClassifier

    ds = load_dermatology()
    train, val, test = ds.split(train=size, validation=0.5, random_state=[seed, size, fold])
    Xtr, Xva, Xte = minmax_scale_tasks(train.Xs, val.Xs, test.Xs)

    def make(C, alpha):
        return MultiTaskMEDClassifier(selection="features", C=C, alpha=alpha, method=method,
                                      warm_start=True)

    def val_mauc(model):
        return mean_auc(val.ys, model.decision_function(Xva))

    scores, iterations = warm_path(make, Cs, alphas, Xtr, train.ys, val_mauc)
    (C, alpha), val_mt = select_on_validation(scores)
    model = make(C, alpha).fit(Xtr, train.ys)
    mt_scores = model.decision_function(Xte)
    val_ind, test_ind, ind_Cs, ind_scores = independent_svm_scores(
        Cs, list(zip(Xtr, train.ys)), list(zip(Xva, val.ys)), list(zip(Xte, test.ys)))
    return {
        "multitask": mean_auc(test.ys, mt_scores), "independent": test_ind,
        "validation": {"multitask": val_mt, "independent": val_ind},
        "chosen": {"C": C, "alpha": alpha, "independent_C": ind_Cs},
        "switch_posterior": np.asarray(model.switch_posterior_).tolist(),
        "max_iterations": max(iterations.values()),
        "test_y": [y.tolist() for y in test.ys],
        "test_scores": {"multitask": [s.tolist() for s in mt_scores],
                        "independent": [s.tolist() for s in ind_scores]},
        "task_names": ds.task_names,
    }


def _dermatology_cell(cell):
    out = dermatology_fold(cell["size"], cell["fold"], cell["seed"], cell["Cs"], cell["alphas"])
    out.pop("test_y")
    out.pop("test_scores")
    return out


@register("dermatology", "JMLR Fig. 1: multi-task MED feature selection vs independent SVMs, Dermatology")
def dermatology(quick=False, n_jobs=1, backend="loky", scheduler=None, client=None, cache_dir=None,
                use_cache=True, seed=0):
    sizes = [40, 100, 200] if quick else [20, 40, 60, 80, 100, 120, 140, 160, 180, 200]
    folds = 2 if quick else 5
    grid = DERMATOLOGY_QUICK_GRID if quick else DERMATOLOGY_GRID
    cells = [{"size": n, "fold": f, "seed": seed, **grid} for n in sizes for f in range(folds)]
    out = run_grid(_dermatology_cell, cells, name="dermatology", n_jobs=n_jobs, backend=backend,
                   scheduler=scheduler, client=client, cache_dir=cache_dir, use_cache=use_cache)
    methods = {"multitask": "Multi-task sparsity (MED)", "independent": "Independent SVMs"}
    measured, std = {}, {}
    for key, label in methods.items():
        per_size = [[o[key] for o, c in zip(out, cells) if c["size"] == n] for n in sizes]
        measured[label] = [float(np.mean(v)) for v in per_size]
        std[label] = [float(np.std(v)) for v in per_size]
    paper = {label: [DERMATOLOGY_PAPER.get(n, (None, None))[i] for n in sizes]
             for i, label in enumerate(methods.values())}
    return ExperimentResult(
        "dermatology",
        settings={"data": "UCI Dermatology, 6 one-vs-rest tasks, 34 features scaled to [0, 1]",
                  "protocol": "n per task for training; rest split half validation / half test",
                  "sizes": sizes, "folds": folds, "grid": grid, "seed": seed, "quick": quick,
                  "model": "MultiTaskMEDClassifier(selection='features', method='bound'), warm path"},
        x=sizes, measured=measured, measured_std=std, paper=paper,
        xlabel="training examples per task", ylabel="mean test AUC over 6 tasks",
        title="Dermatology: multi-task feature selection (JMLR Fig. 1)",
        extra={"cells": [{k: v for k, v in c.items() if k not in ("Cs", "alphas")} | {
            "multitask": o["multitask"], "independent": o["independent"], "chosen": o["chosen"]}
            for c, o in zip(cells, out)]})
