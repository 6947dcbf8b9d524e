"""The JMLR paper's figures: Dermatology (Fig. 1) here, Landmine (Fig. 2,
:mod:`~medmtl.experiments.med_landmine`) and Heart (Fig. 3, :mod:`~medmtl.experiments.med_heart`).

Each figure is a fold (or split) function of its settings, a grid of cells over sizes and
folds run by :func:`~medmtl.experiments.runner.run_grid`, and a registered experiment that
averages the cells into an :class:`~medmtl.experiments.result.ExperimentResult`.
"""

from __future__ import annotations

import numpy as np

from medmtl.datasets import load_dermatology
from medmtl.evaluation import mean_auc
from medmtl.experiments.leakage import guard_test_split
from medmtl.experiments.med_heart import HEART_ADAPTIVE, HEART_CURVE, HEART_PAPER, heart_pooling, heart_split
from medmtl.experiments.med_landmine import (LANDMINE_METHODS, LANDMINE_PAPER, landmine_fold, landmine_kernels,
                                             landmine_kernels_poly, profiles_at, svm_baseline, svm_surface)
from medmtl.experiments.med_method import METHOD, fit_options, method_settings
from medmtl.experiments.preprocessing import minmax_scale_tasks
from medmtl.experiments.registry import register
from medmtl.experiments.report import readme_rows
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.selection import select_on_validation, warm_path
from medmtl.experiments.spec import Spec
from medmtl.experiments.splits import split_shared_rows
from medmtl.experiments.summaries import (baseline_comparisons, cell_records, edge_records, edge_rows, mean_std_by,
                                          paired_tests_by, size_curves, size_rows, sizes_text, standard_errors)
from medmtl.experiments.threads import one_blas_thread

__all__ = ["dermatology_split", "dermatology_path", "dermatology_fold", "earlier_protocol", "DERMATOLOGY_SPLITS", "landmine_fold", "heart_split", "mean_std_by",
           "paired_tests_by", "baseline_comparisons", "dermatology", "landmine_kernels", "landmine_kernels_poly",
           "heart_pooling", "HEART_ADAPTIVE", "HEART_CURVE", "HEART_PAPER", "LANDMINE_METHODS", "LANDMINE_PAPER"]

# Sizes 20, 40, ..., 200, plus 150: one of the three sizes at which the paper's curve was read.
# C reaches 1000 and alpha 10000: with the earlier grids alpha sat strictly best on its top
# edge (1000) in 13 of 55 folds, and C on its top edge (100) at n = 200 of the shared split.
# Paper values read off the JMLR figure (see shared/seeds/README.md), (multi-task, independent)
# per size.
SPEC = Spec(
    "dermatology", "JMLR Fig. 1: multi-task MED feature selection vs independent SVMs, Dermatology",
    grid={"sizes": [20, 40, 60, 80, 100, 120, 140, 150, 160, 180, 200], "folds": 5,
          "grid": {"Cs": [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0],
                   "alphas": [0.0, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]}},
    quick={"sizes": [40, 100, 200], "folds": 1, "grid": {"Cs": [0.1, 1.0, 10.0], "alphas": [0.0, 1.0, 100.0]}},
    paper={100: (0.9942, 0.9908), 150: (0.9959, 0.9921), 200: (0.9968, 0.9934)})
DERMATOLOGY_PAPER = SPEC.paper
DERMATOLOGY_GRID, DERMATOLOGY_QUICK_GRID = SPEC.grid["grid"], SPEC.quick["grid"]


DERMATOLOGY_SPLITS = {
    "shared": "one split of the 366 patients shared by all 6 tasks: n training patients for every task, the "
              "rest half validation / half test, stratified on the patient's class (split_shared_rows); no "
              "patient is in one task's training set and another task's validation or test set",
    "per-task": "the earlier protocol: each task draws its own n training patients (stratified on its "
                "one-vs-rest label) and splits the rest in half, so a test patient of one task is mostly "
                "in another task's training set",
}


def dermatology_split(ds, size, fold, seed=0, split="shared"):
    """The train / validation / test split of one Dermatology fold (:data:`DERMATOLOGY_SPLITS`).

    Parameters
    ----------
    ds : MultiTaskDataset
        :func:`~medmtl.datasets.load_dermatology`'s tasks.
    size, fold, seed : int
        Training patients per task, the fold and the run's seed; the three seed the split.
    split : {"shared", "per-task"}, default="shared"

    Returns
    -------
    train, validation, test : MultiTaskDataset
    """
    if split == "shared":
        return split_shared_rows(ds, size, 0.5, random_state=[seed, size, fold])[:3]
    if split == "per-task":
        return ds.split(train=size, validation=0.5, random_state=[seed, size, fold])
    raise ValueError(f"split must be one of {list(DERMATOLOGY_SPLITS)}, got {split!r}")


def dermatology_path(size, fold, seed=0, Cs=DERMATOLOGY_GRID["Cs"], alphas=DERMATOLOGY_GRID["alphas"],
                     method=METHOD, split="shared"):
    """Split Dermatology, sweep a warm-started (C, alpha) path, choose on validation.

    The split is :func:`dermatology_split`'s. Features are scaled into [0, 1] on the
    training inputs. Returns a dict with the splits (``train``, ``val``, ``test`` and the
    scaled ``Xtr``, ``Xva``, ``Xte``), the validation mean AUC of every grid point
    (``scores``) and its iteration count, the ``chosen`` (C, alpha) and the ``model``
    refitted there. The test split is not looked at.

    Parameters
    ----------
    size : int
        Training patients per task.
    fold : int
        The fold (repetition) at this size: it seeds the split with ``seed`` and ``size``.
    seed : int, default=0
        The run's seed (``RunOptions.seed``).
    Cs : list of float, default=DERMATOLOGY_GRID["Cs"]
        MED's values of ``C``.
    alphas : list of float, default=DERMATOLOGY_GRID["alphas"]
        MED's values of ``alpha``.
    method : str, default=METHOD
        The registered MED solution method.
    split : {"shared", "per-task"}, default="shared"
        One split of the patients for all tasks, or the earlier split per task
        (:data:`DERMATOLOGY_SPLITS`).

    Returns
    -------
    dict
    """
    from medmtl.med import MultiTaskMEDClassifier

    ds = load_dermatology()
    train, val, test = dermatology_split(ds, size, fold, seed, split)
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


def _dermatology_choices(p, found):
    """Every choice of a fold and its validation profile, for the grid-edge counts."""
    points = list(p["scores"])
    med = np.array([p["scores"][q] for q in points])
    (C, alpha) = p["chosen"]
    choices = {"MED C": [C], "MED alpha": [alpha], "independent C": [found["independent"]["chosen"][0][1]],
               "independent_task_C C": [c[1] for c in found["independent_task_C"]["chosen"]]}
    profiles = {"MED C": profiles_at(med, [(None, *q) for q in points], 1),
                "MED alpha": profiles_at(med, [(None, *q) for q in points], 2),
                "independent C": profiles_at(found["independent"]["aucs"].mean(axis=0), found["independent"]["points"], 1),
                "independent_task_C C": profiles_at(found["independent_task_C"]["aucs"],
                                                    found["independent_task_C"]["points"], 1)}
    return choices, profiles


@one_blas_thread
def dermatology_fold(size, fold, seed=0, Cs=DERMATOLOGY_GRID["Cs"], alphas=DERMATOLOGY_GRID["alphas"],
                     method="bound", svm_Cs=None, split="shared"):
    """One fold of JMLR Fig. 1 at ``size`` training examples per task.

    Multi-task MED feature selection chooses (C, alpha) on validation mean AUC along the
    path of :func:`dermatology_path`; the independent linear SVMs (the primary comparison:
    MED at alpha = 0 is such an SVM per task) choose one C for all tasks the same way, as
    the paper describes ("a value of C"). The same SVMs with C chosen per task are reported
    beside them.

    Returns a dict with the three test mean AUCs, their validation mean AUCs, MED's validation
    surface ``[C, alpha, MAUC]``, the chosen hyper-parameters, their validation profiles
    (for the grid-edge counts) and the test labels and decision values per task (for ROC
    curves).

    Parameters
    ----------
    size, fold, seed, Cs, alphas
        As for :func:`dermatology_path`.
    method : str, default="bound"
        The registered MED solution method.
    svm_Cs : list of float, optional
        The SVMs' values of ``C`` (default: ``Cs``).
    split : {"shared", "per-task"}, default="shared"
        As for :func:`dermatology_path`.

    Returns
    -------
    dict
    """
    p = dermatology_path(size, fold, seed, Cs, alphas, method, split)
    train, val, test = p["train"], p["val"], p["test"]
    (C, alpha), model = p["chosen"], p["model"]
    mt_scores = model.decision_function(p["Xte"])
    views = {"minmax": {"train": list(zip(p["Xtr"], train.ys)), "val": list(zip(p["Xva"], val.ys)),
                        "test": list(zip(p["Xte"], test.ys)), "kernel": "linear", "params": {None: {}}}}
    surface = svm_surface(views, svm_Cs or Cs)
    found = {"independent": svm_baseline(views, surface, per_task=False),
             "independent_task_C": svm_baseline(views, surface, per_task=True)}
    choices, profiles = _dermatology_choices(p, found)
    return {
        "multitask": mean_auc(test.ys, mt_scores), "independent": found["independent"]["test"],
        "independent_task_C": found["independent_task_C"]["test"],
        "validation": {"multitask": p["validation"], "independent": found["independent"]["validation"],
                       "independent_task_C": found["independent_task_C"]["validation"]},
        "validation_surface": [[c, a, s] for (c, a), s in sorted(p["scores"].items())],
        "chosen": {"C": C, "alpha": alpha, "independent_C": found["independent"]["chosen"][0][1],
                   "independent_task_C": [c[1] for c in found["independent_task_C"]["chosen"]]},
        "choices": choices, "profiles": profiles,
        "switch_posterior": np.asarray(model.switch_posterior_).tolist(),
        "max_iterations": max(p["iterations"].values()),
        "test_y": [y.tolist() for y in test.ys],
        "test_scores": {"multitask": [s.tolist() for s in mt_scores],
                        "independent": [s.tolist() for s in found["independent"]["test_scores"]]},
        "task_names": p["task_names"],
    }


DERMATOLOGY_METHODS = {"multitask": "Multi-task sparsity (MED)", "independent": "Independent SVMs",
                       "independent_task_C": "Independent SVMs, C per task"}
DERMATOLOGY_BASELINES = ["independent", "independent_task_C"]


def _protocol_summary(out, cells, sizes):
    """Means, standard errors and MED's paired tests against both baselines, over the folds
    of one split protocol."""
    methods = DERMATOLOGY_METHODS
    measured, std, _ = size_curves(out, cells, methods, sizes, [])
    return {"measured": measured, "measured_std": std, "standard_error": standard_errors(out, cells, methods, sizes),
            **baseline_comparisons(out, cells, sizes, "size", DERMATOLOGY_BASELINES, primary="independent")}


def earlier_protocol(earlier, note):
    """The summary of an earlier run's folds (its ``extra["cells"]``), in the form of
    ``extra["<protocol>_split_protocol"]``.

    Parameters
    ----------
    earlier : dict
        An earlier result of this experiment, as its JSON file holds it.
    note : str
        Where the earlier run comes from.

    Returns
    -------
    dict
    """
    cells = earlier["extra"]["cells"]
    sizes = earlier["x"]
    return {"split": DERMATOLOGY_SPLITS[earlier["settings"].get("split", "per-task")], "source": note,
            "grid": earlier["settings"]["grid"], **_protocol_summary(cells, cells, sizes)}


def _dermatology_settings(config, options, split):
    return {"data": "UCI Dermatology, 6 one-vs-rest tasks over the same 366 patients, 34 features scaled to "
                    "[0, 1] on the training patients",
            "protocol": "n patients per task for training; rest split half validation / half test",
            "split": split, "splits": DERMATOLOGY_SPLITS,
            "sizes": config["sizes"], "folds": config["folds"], "grid": config["grid"], "seed": options.seed,
            "quick": options.quick,
            "model": f"MultiTaskMEDClassifier(selection='features', method={METHOD!r}), warm path",
            "independent": "libsvm linear SVC per task, one C for all tasks chosen on validation "
                           "MAUC; 'C per task': each task's C chosen on its validation AUC",
            "primary_comparison": "MED against the linear SVMs with one C (the model MED reduces to at "
                                  "alpha = 0), fixed before the run; MED's paired test against every "
                                  "baseline is reported",
            **method_settings(METHOD)}


@register(SPEC)
def dermatology(options=RunOptions(), *, split="shared", compare=None):
    """JMLR Fig. 1: mean test AUC against training examples per task, over 5 folds.

    Parameters
    ----------
    options : RunOptions
        How to run (:class:`~medmtl.experiments.runner.RunOptions`).
    split : {"shared", "per-task"}, default="shared"
        The split protocol of the result (:data:`DERMATOLOGY_SPLITS`).
    compare : {"shared", "per-task"} or None, default=None
        A second protocol run on the same folds and summarised in
        ``extra["<protocol>_split_protocol"]`` (None: none). The committed result carries
        the earlier per-task protocol's committed run instead (:func:`earlier_protocol`).
    """
    config = SPEC.settings(options.quick)
    sizes, folds, grid = config["sizes"], config["folds"], config["grid"]
    protocols = [split] + ([compare] if compare and compare != split else [])
    cells = {sp: [{"size": n, "fold": f, "seed": options.seed, "method": METHOD, "split": sp, "v": 5, **grid}
                  for n in sizes for f in range(folds)] for sp in protocols}
    every = [c for sp in protocols for c in cells[sp]]
    flat = run_grid(CellCall(dermatology_fold), every, name="dermatology", options=options)
    out = {sp: flat[k * len(cells[split]):(k + 1) * len(cells[split])] for k, sp in enumerate(protocols)}
    main = _protocol_summary(out[split], cells[split], sizes)
    paper = {DERMATOLOGY_METHODS[key]: [DERMATOLOGY_PAPER.get(n, (None, None))[i] for n in sizes]
             for i, key in enumerate(("multitask", "independent"))}
    others = {f"{sp.replace('-', '_')}_split_protocol": {"split": DERMATOLOGY_SPLITS[sp],
                                                         **_protocol_summary(out[sp], cells[sp], sizes)}
              for sp in protocols[1:]}
    return ExperimentResult(
        "dermatology", settings=_dermatology_settings(config, options, split),
        x=sizes, measured=main["measured"], measured_std=main["measured_std"], paper=paper,
        xlabel="training examples per task", ylabel="mean test AUC over 6 tasks",
        title="Dermatology: multi-task feature selection (JMLR Fig. 1)",
        extra={"cells": cell_records(out[split], cells[split], [*DERMATOLOGY_METHODS, "chosen"]),
               "standard_error": main["standard_error"],
               **{k: v for k, v in main.items() if k.startswith("multitask_vs_") or k == "primary_comparison"},
               "grid_edges": edge_records(out[split], _dermatology_edge_grids(grid)),
               **others,
               "selection": [r for sp in protocols for r in
                             cell_records(out[sp], cells[sp], ["chosen", "validation", "validation_surface",
                                                               "choices", "profiles"])]})


def _dermatology_edge_grids(grid):
    svm_Cs = grid.get("svm_Cs", grid["Cs"])
    return {"MED C": grid["Cs"], "MED alpha": grid["alphas"], "independent C": svm_Cs,
            "independent_task_C C": svm_Cs}


# method key -> (name on the results page, the rule that selected its hyper-parameters)
_ROW_METHODS = {
    "dermatology": {"multitask": ("MED feature selection", "one (C, alpha) for all tasks on validation MAUC"),
                    "independent": ("linear SVMs, one C", "one C for all tasks on validation MAUC"),
                    "independent_task_C": ("linear SVMs, C per task", "C per task on validation AUC")},
}


@readme_rows("dermatology")
def _dermatology_readme_rows(result):
    shown = [100, 150, 200]
    rows = []
    protocols = [(result.settings["split"], result.extra),
                 *((k.removesuffix("_split_protocol").replace("_", "-"), v) for k, v in result.extra.items()
                   if k.endswith("_split_protocol"))]
    for split, summary in protocols:
        experiment = (f"`dermatology` (JMLR Fig. 1), {split} split: mean test AUC over 6 tasks ± standard error "
                      f"over {result.settings['folds']} folds, seed {result.settings['seed']}, "
                      f"n = {sizes_text(result, shown)} per task"
                      + ("; one split of the patients for all tasks" if split == "shared" else
                         "; the earlier protocol: a test patient of one task is mostly in another task's "
                         "training set")
                      + (f"; {summary['source']}" if "source" in summary else ""))
        view = result if summary is result.extra else _protocol_view(result, summary)
        rows += size_rows(view, experiment, DERMATOLOGY_METHODS, _ROW_METHODS["dermatology"], shown)
    return rows + edge_rows(result, rows[0].experiment, "alpha = 0 is the lower end of its domain")


def _protocol_view(result, summary):
    """``result`` with the means, spreads and tests of another split protocol."""
    from dataclasses import replace

    return replace(result, measured=summary["measured"], extra={**result.extra, **summary})
