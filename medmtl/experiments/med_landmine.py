"""JMLR Fig. 2: multi-task MED kernel selection on Landmine over a bank of per-feature, RBF and
(Fig. 2b) polynomial kernels, against independent SVMs."""

from __future__ import annotations

import numpy as np

from medmtl.baselines.svm import SVC_TOL
from medmtl.datasets import load_landmine
from medmtl.evaluation import mean_auc
from medmtl.experiments.kernel_banks import (BANDWIDTH_RULES, LANDMINE_DEVELOPMENT_SEED, LANDMINE_RBF_SCALES,
                                             SumKernel, landmine_kernel_bank, rule_inputs, unit_diagonal_kernels)
from medmtl.experiments.leakage import guard_test_split
from medmtl.experiments.med_method import METHOD, fit_options, method_settings
from medmtl.experiments.registry import register
from medmtl.experiments.report import readme_rows
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.selection import select_on_validation, warm_path
from medmtl.experiments.spec import Spec
from medmtl.experiments.splits import split_uniform_draw, split_with_both_classes, with_unfitted_tasks
from medmtl.experiments.summaries import (baseline_comparisons, cell_records, edge_records, edge_rows, size_curves,
                                          size_rows, sizes_text, standard_errors)
from medmtl.experiments.threads import one_blas_thread

__all__ = ["landmine_fold", "validation_auc", "svm_surface", "svm_baseline", "profiles_at", "landmine_kernels",
           "landmine_kernels_poly"]


LANDMINE_SIZES = [20, 40, 60, 80, 100, 120, 140, 160, 180, 200]
# The RBF SVMs' bandwidth scales: the bank's 9, four more below and three above (at 2^-6..2^5
# the smallest scale was strictly best in 22 % of the per-task choices, the largest in 9 %).
LANDMINE_SVM_SCALES = [2.0 ** p for p in range(-8, 8)]
# Grids widened beyond the edges the earlier grid (C = 0.01..100) was chosen on: MED's C sat
# strictly best on 0.01 in 60 % of the folds, the RBF SVMs' C on 100 in 24 % of the choices.
# The RBF SVMs start at C = 0.01: below it every multiplier is at its bound and the ranking
# of the test points no longer depends on C.
# MED's and the sum-kernel SVMs' C reach down to 1e-5: at 1e-3 they sat strictly best on the
# low edge in 30 % and 54 % of the folds, by validation AUCs within 1e-4 of the next value's
# (as C goes to 0 every multiplier sits at its bound and the ranking stops changing).
# Every method chooses the bandwidth rule inside each fold, jointly with its other
# hyper-parameters, from training inputs and validation scores only.
_GRID = {"sizes": LANDMINE_SIZES, "folds": 5,
         "grid": {"Cs": [1e-5, 1e-4, 0.001, 0.01, 0.1, 1.0, 10.0, 100.0], "alphas": [0.0, 1.0, 10.0, 100.0, 1000.0],
                  "svm_Cs": [1e-5, 1e-4, 0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0],
                  "rbf_Cs": [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0], "rules": ["median", "minmax"]}}
_QUICK = {"sizes": [40], "folds": 1,
          "grid": {"Cs": [0.1, 1.0], "alphas": [0.0, 10.0], "svm_Cs": [0.1, 1.0], "rbf_Cs": [0.1, 1.0],
                   "rules": ["median", "minmax"]}}
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


def _points(views, Cs):
    """Every grid point ``(view, C, setting)`` of an SVM baseline, in the order in which ties
    are broken (the first best wins)."""
    return [(v, C, setting) for v, view in views.items() for setting in view["params"] for C in sorted(Cs)]


def profiles_at(aucs, points, position):
    """Per row of ``aucs`` (a task, or the mean over tasks), ``{value: best score}`` over
    the grid points with that value at ``position`` of the point tuple: the validation
    profile of one hyper-parameter that :func:`~medmtl.experiments.selection.grid_edge_counts`
    takes.

    Parameters
    ----------
    aucs : ndarray of shape (n_rows, n_points)
        Validation scores, one column per grid point.
    points : list of tuple
        The grid points, in the columns' order.
    position : int
        Where the hyper-parameter sits in a point tuple.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> profiles_at(np.array([[0.5, 0.7, 0.6]]), [("a", 1.0, 2), ("a", 10.0, 2), ("b", 1.0, 3)], 1)
    [{1.0: 0.6, 10.0: 0.7}]
    """
    values = sorted({p[position] for p in points})
    return [{x: float(max(a[j] for j, p in enumerate(points) if p[position] == x)) for x in values}
            for a in np.atleast_2d(aucs)]


def validation_auc(y, s):
    """The AUC of decision values ``s`` for labels ``y`` in {-1, +1} by the rank-sum
    (Mann-Whitney) formula, ties counted one half: :func:`sklearn.metrics.roc_auc_score`
    without its input checks, for the thousands of validation scores of a grid.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    s : ndarray of shape (n_samples,)
        Decision values.

    Returns
    -------
    float

    Examples
    --------
    >>> validation_auc(np.array([-1, 1, 1, -1]), np.array([0.1, 0.9, 0.5, 0.5]))
    0.875
    """
    from scipy.stats import rankdata

    pos = np.asarray(y) > 0
    n_pos = int(pos.sum())
    n_neg = pos.size - n_pos
    return float((rankdata(s)[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _fit_svc(view, t, C, setting):
    """The SVC of task ``t`` at ``(C, setting)``, fitted on the view's training pair."""
    from sklearn.svm import SVC

    X, y = view["train"][t]
    return SVC(C=C, kernel=view["kernel"], tol=SVC_TOL, **view["params"][setting]).fit(X, y)


def svm_surface(views, Cs):
    """The validation AUC of every task's libsvm SVM at every grid point.

    Parameters
    ----------
    views : dict
        ``{view name: {"train", "val", "test": list of (X, y) per task, "kernel": the SVC
        kernel, "params": {setting: further SVC parameters}}}``; a view is one way of
        preparing the inputs (e.g. a bandwidth rule), a setting one point of a further grid
        (e.g. an RBF bandwidth scale, or ``None``). Only ``train`` and ``val`` are read.
    Cs : list of float
        The values of ``C`` tried at every setting of every view.

    Returns
    -------
    aucs : ndarray of shape (n_tasks, n_points)
    points : list of (view, C, setting)
        In the order in which ties are broken (the first best wins).
    """
    points = _points(views, Cs)
    n_tasks = len(next(iter(views.values()))["train"])
    aucs = np.empty((n_tasks, len(points)))
    for t in range(n_tasks):
        for j, (v, C, setting) in enumerate(points):
            Xva, yva = views[v]["val"][t]
            aucs[t, j] = validation_auc(yva, _fit_svc(views[v], t, C, setting).decision_function(Xva))
    return aucs, points


def svm_baseline(views, surface, per_task):
    """Independent SVMs whose hyper-parameters, the input view among them, are chosen on
    validation AUC: per task, or one point for all tasks on validation mean AUC.

    Parameters
    ----------
    views : dict
        As for :func:`svm_surface`; the chosen SVMs score the ``test`` pairs once.
    surface : tuple
        ``(aucs, points)`` from :func:`svm_surface`.
    per_task : bool
        Choose per task, or one point for all tasks.

    Returns
    -------
    dict
        ``validation`` and ``test`` mean AUC, ``chosen`` (per task, ``[view, C, setting]``),
        ``aucs`` and ``points`` (the surface), and the chosen SVMs' ``test_scores`` per task.
    """
    aucs, points = surface
    best = np.argmax(aucs, axis=1) if per_task else np.full(aucs.shape[0], np.argmax(aucs.mean(axis=0)))
    test_ys, test_scores = [], []
    for t, j in enumerate(best):
        v, C, setting = points[j]
        Xte, yte = views[v]["test"][t]
        test_ys.append(yte)
        test_scores.append(_fit_svc(views[v], t, C, setting).decision_function(Xte))
    return {"validation": float(np.mean(aucs[np.arange(len(best)), best])), "test": mean_auc(test_ys, test_scores),
            "chosen": [list(points[j]) for j in best], "aucs": aucs, "points": points, "test_scores": test_scores}


def _rule_view(rule, train, val, test, poly, rbf_scales):
    """One bandwidth rule's inputs, MED kernel bank and the sum-kernel SVMs' view (Gram
    matrices against each task's training inputs)."""
    (Xtr, Xva, Xte), gammas = rule_inputs(rule, train.Xs, val.Xs, test.Xs, scales=rbf_scales)
    bank = unit_diagonal_kernels(landmine_kernel_bank(Xtr[0].shape[1], gammas, poly=poly), Xtr)
    K = SumKernel(bank)
    grams = [[(K(X, Xt), d.ys[t]) for t, (X, Xt) in enumerate(zip(Xs, Xtr))]
             for Xs, d in ((Xtr, train), (Xva, val), (Xte, test))]
    return {"X": (Xtr, Xva, Xte), "bank": bank, "gammas": gammas,
            "sum": {"train": grams[0], "val": grams[1], "test": grams[2], "kernel": "precomputed",
                    "params": {None: {}}}}


def _rbf_view(rule, train, val, test, svm_scales):
    """One bandwidth rule's inputs for the RBF SVMs, a gamma per scale."""
    scaled, gammas = rule_inputs(rule, train.Xs, val.Xs, test.Xs, scales=svm_scales)
    pairs = [list(zip(Xs, d.ys)) for Xs, d in zip(scaled, (train, val, test))]
    return {"train": pairs[0], "val": pairs[1], "test": pairs[2], "kernel": "rbf",
            "params": {s: {"gamma": g} for s, g in zip(svm_scales, gammas)}}


def _med_over_rules(views, Cs, alphas, train, val, method):
    """MED's warm path under every bandwidth rule; (rule, C, alpha) chosen jointly on
    validation MAUC; the chosen model refitted."""
    from medmtl.med import MultiTaskMEDClassifier

    def make_for(bank):
        return lambda C, alpha: MultiTaskMEDClassifier(selection="kernels", kernels=bank, C=C, alpha=alpha,
                                                       warm_start=True, **fit_options(method))

    scores, iterations = {}, {}
    for rule, v in views.items():
        found, its = warm_path(make_for(v["bank"]), Cs, alphas, v["X"][0], train.ys,
                               lambda m, Xva=v["X"][1]: float(np.mean([validation_auc(y, f) for y, f in
                                                                       zip(val.ys, m.decision_function(Xva))])))
        scores.update({(rule, *k): x for k, x in found.items()})
        iterations.update({(rule, *k): x for k, x in its.items()})
    (rule, C, alpha), val_mt = select_on_validation(scores)
    model = make_for(views[rule]["bank"])(C, alpha).fit(views[rule]["X"][0], train.ys)
    return scores, iterations, (rule, C, alpha), val_mt, model


def _choices(found, names):
    """Choices and validation profiles of SVM baselines, by ``"<key> <parameter>"``: per
    task, or one per cell for a baseline with one choice for all tasks."""
    choices, profiles = {}, {}
    for key, param, position, one in names:
        f = found[key]
        choices[f"{key} {param}"] = [f["chosen"][0][position]] if one else [c[position] for c in f["chosen"]]
        profiles[f"{key} {param}"] = profiles_at(f["aucs"].mean(axis=0) if one else f["aucs"], f["points"], position)
    return choices, profiles


def _fold_data(size, fold, seed, draw):
    """The fold's split (test labels guarded) and the mean AUC over all 29 tasks."""
    ds = load_landmine()
    train, val, test, fitted, swaps = _landmine_split(ds, size, fold, seed, draw)

    def over_all_tasks(mauc):
        return with_unfitted_tasks(mauc, len(fitted), len(ds))

    return train, val, guard_test_split(test), over_all_tasks, {"fitted_tasks": len(fitted), "class_swaps": swaps}


@one_blas_thread
def landmine_rbf_fold(size, fold, seed=0, rbf_Cs=LANDMINE_GRID["rbf_Cs"], svm_scales=LANDMINE_SVM_SCALES,
                      rules=tuple(BANDWIDTH_RULES), draw="stratified"):
    """The RBF SVM baseline of one Landmine fold: libsvm RBF SVMs per task, (rule, C, gamma)
    chosen per task on validation AUC. It does not use the kernel bank, so both figures share
    it (the same split as :func:`landmine_fold`'s).

    Parameters
    ----------
    size, fold, seed, rules, draw
        As for :func:`landmine_fold`.
    rbf_Cs : list of float
        The values of ``C``.
    svm_scales : list of float, default=LANDMINE_SVM_SCALES
        The bandwidth scales, read by each rule (:func:`~medmtl.experiments.kernel_banks.rule_inputs`).

    Returns
    -------
    dict
    """
    train, val, test, over_all_tasks, _ = _fold_data(size, fold, seed, draw)
    views = {rule: _rbf_view(rule, train, val, test, svm_scales) for rule in rules}
    found = {"independent_rbf": svm_baseline(views, svm_surface(views, rbf_Cs), per_task=True)}
    choices, profiles = _choices(found, [("independent_rbf", "C", 1, False),
                                         ("independent_rbf", "gamma scale", 2, False)])
    f = found["independent_rbf"]
    return {"independent_rbf": over_all_tasks(f["test"]),
            "validation": {"independent_rbf": over_all_tasks(f["validation"])},
            "chosen": {"independent_rbf": f["chosen"]}, "choices": choices, "profiles": profiles,
            "rbf_svm_gammas": {r: list(v["params"].values()) for r, v in views.items()}}


def _merge(a, b):
    """Two cell outputs as one: nested dicts merged one level deep."""
    return {**a, **b, **{k: {**a[k], **b[k]} for k in a.keys() & b.keys() if isinstance(a[k], dict)}}


@one_blas_thread
def landmine_fold(size, fold, seed=0, Cs=LANDMINE_GRID["Cs"], alphas=LANDMINE_GRID["alphas"],
                  svm_Cs=LANDMINE_GRID["svm_Cs"], rbf_Cs=LANDMINE_GRID["rbf_Cs"], poly=False, method=METHOD,
                  rbf_scales=LANDMINE_RBF_SCALES, svm_scales=LANDMINE_SVM_SCALES, rules=tuple(BANDWIDTH_RULES),
                  draw="stratified", rbf=True):
    """One fold of JMLR Fig. 2 at ``size`` training examples per task (29 tasks).

    Each minefield draws ``size`` training examples (stratified, at least one mine); the
    rest are split in half for validation and test. Every bandwidth rule of ``rules``
    (:data:`~medmtl.experiments.kernel_banks.BANDWIDTH_RULES`) scales the inputs and sets
    the RBF bandwidths from this fold's training inputs; every kernel of the bank is scaled
    to mean diagonal 1 on them. Each method chooses the rule jointly with its other
    hyper-parameters on its own validation score, so nothing is chosen outside the fold.
    Multi-task MED kernel selection chooses one (rule, C, alpha) for all tasks on validation
    mean AUC. The independent SVMs (libsvm, the unweighted sum of the same bank, i.e. MED at
    alpha = 0: the primary comparison) choose one (rule, C) for all tasks the same way, as
    the paper describes; two further baselines are reported beside them: the same SVMs with
    (rule, C) chosen per task, and RBF SVMs with (rule, C, gamma) chosen per task
    (:func:`landmine_rbf_fold`).

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
        MED's values of ``C`` and of ``alpha``.
    svm_Cs, rbf_Cs : list of float, default: ``LANDMINE_GRID``'s
        The values of ``C`` of the sum-kernel SVMs and of the RBF SVMs.
    poly : bool, default=False
        Add the polynomial kernels to the bank (Fig. 2b) (:func:`landmine_kernel_bank`).
    method : str, default=METHOD
        The registered MED solution method.
    rbf_scales : list of float, default=LANDMINE_RBF_SCALES
        The bank's RBF bandwidth scales (:func:`~medmtl.experiments.kernel_banks.rule_inputs`).
    svm_scales : list of float, default=LANDMINE_SVM_SCALES
        The RBF SVMs' bandwidth scales, read by the same rules.
    rules : sequence of str, default: both rules
        The bandwidth rules tried (the registered full runs fix ``["median"]``).
    draw : {"stratified", "uniform"}, default="stratified"
        How the training examples are drawn, as described above.
    rbf : bool, default=True
        Also run the RBF SVM baseline (:func:`landmine_rbf_fold`); the registered
        experiments run it as cells of its own, shared by both figures.

    Returns
    -------
    dict
    """
    train, val, test, over_all_tasks, counts = _fold_data(size, fold, seed, draw)
    views = {rule: _rule_view(rule, train, val, test, poly, rbf_scales) for rule in rules}
    scores, iterations, (rule, C, alpha), val_mt, model = _med_over_rules(views, Cs, alphas, train, val, method)
    mt_test = mean_auc(test.ys, model.decision_function(views[rule]["X"][2]))
    sum_views = {r: v["sum"] for r, v in views.items()}
    surface = svm_surface(sum_views, svm_Cs)
    found = {key: svm_baseline(sum_views, surface, per_task=key != "independent")
             for key in ("independent", "independent_task_C")}
    points = list(scores)
    med = np.array([scores[p] for p in points])
    choices, profiles = _choices(found, [("independent", "C", 1, True), ("independent_task_C", "C", 1, False)])
    out = {
        "multitask": over_all_tasks(mt_test), **{key: over_all_tasks(f["test"]) for key, f in found.items()},
        "validation": {"multitask": over_all_tasks(val_mt),
                       **{key: over_all_tasks(f["validation"]) for key, f in found.items()}},
        "validation_surface": [[r, c, a, over_all_tasks(x)] for (r, c, a), x in sorted(scores.items())],
        "chosen": {"rule": rule, "C": C, "alpha": alpha, "independent": found["independent"]["chosen"][0][:2],
                   "independent_task_C": [c[:2] for c in found["independent_task_C"]["chosen"]]},
        "choices": {"MED C": [C], "MED alpha": [alpha], **choices},
        "profiles": {"MED C": profiles_at(med, points, 1), "MED alpha": profiles_at(med, points, 2), **profiles},
        "switch_posterior": np.asarray(model.switch_posterior_).tolist(),
        "kernel_names": [k.name for k in views[rule]["bank"]],
        "rbf_gammas": {r: v["gammas"] for r, v in views.items()},
        "max_iterations": max(iterations.values()), **counts,
    }
    if rbf:
        out = _merge(out, landmine_rbf_fold(size, fold, seed, rbf_Cs, svm_scales, rules, draw))
    return out


LANDMINE_METHODS = {"multitask": "Multi-task sparsity (MED)", "independent": "Independent SVMs",
                    "independent_task_C": "Independent SVMs, C per task",
                    "independent_rbf": "Independent RBF SVMs, (C, gamma) per task"}
LANDMINE_BASELINES = ["independent", "independent_task_C", "independent_rbf"]


def _edge_grids(grid):
    """The grid each chosen hyper-parameter was chosen from, by its ``choices`` name."""
    return {"MED C": grid["Cs"], "MED alpha": grid["alphas"], "independent C": grid["svm_Cs"],
            "independent_task_C C": grid["svm_Cs"], "independent_rbf C": grid["rbf_Cs"],
            "independent_rbf gamma scale": LANDMINE_SVM_SCALES}


def _rule_wins(out):
    """How often each bandwidth rule was chosen, per method (per fold; per task and fold for
    the per-task baselines)."""
    def count(values):
        return {r: sum(v == r for v in values) for r in BANDWIDTH_RULES}

    return {"multitask": count([o["chosen"]["rule"] for o in out]),
            "independent": count([o["chosen"]["independent"][0] for o in out]),
            **{key: count([c[0] for o in out for c in o["chosen"][key]])
               for key in ("independent_task_C", "independent_rbf")}}


def _rule_choice_text(rules):
    if len(rules) > 1:
        return (f"chosen among {list(rules)} inside each fold, from its training inputs (scaling, bandwidths) and "
                "validation scores only: every method chooses the rule jointly with its other hyper-parameters")
    (rule,) = rules
    text = f"fixed a priori to {rule!r} for every method and fold"
    if rule == "median":
        text += (f" (the standard median heuristic; it was first picked on the validation AUC of seed "
                 f"{LANDMINE_DEVELOPMENT_SEED}, whose results are never reported; choosing the rule inside each fold "
                 "doubles the run and did not fit the machine time of this run)")
    return text


def _settings(poly, draw, sizes, folds, grid, options):
    D = 22 if poly else 18
    return {"data": "Landmine (Xue et al. 2007), 29 tasks, 9 features",
            "protocol": ("n per task for training (stratified, >= 1 mine: a mine is swapped in from "
                         "validation/test when the stratified draw has none)" if draw == "stratified" else
                         "n per task for training drawn uniformly; tasks without a mine are not fitted "
                         "and score AUC 1/2")
                        + "; rest split half validation / half test; mean test AUC over the 29 tasks",
            "draw": draw,
            "bandwidth_rules": BANDWIDTH_RULES,
            "bandwidth_rule_choice": _rule_choice_text(grid["rules"]),
            "kernels": f"D = {D}: 9 per-feature linear kernels, 9 RBF kernels at scales 2^-4..2^4 read by the "
                       "bandwidth rule" + (", polynomial (<a,b>/9 + 1)^p, p = 1..4" if poly else "")
                       + "; every kernel scaled to mean diagonal 1 on the training inputs",
            "multitask": f"MultiTaskMEDClassifier(selection='kernels', method={METHOD!r}), one (rule, C, alpha) "
                         "for all tasks chosen on validation MAUC, warm-started path over alpha per C",
            "independent": "libsvm SVC per task on the unweighted sum of the same kernel bank "
                           "(MED at alpha = 0), one (rule, C) for all tasks chosen on validation MAUC",
            "independent_task_C": "the same SVMs, (rule, C) chosen per task on validation AUC",
            "independent_rbf": "libsvm RBF SVC per task, (rule, C, gamma) chosen per task on validation "
                               "AUC, gamma at the scales 2^-8..2^7 read by the rule, C from grid['rbf_Cs'] "
                               "(the same cells in both figures: the bank is not used)",
            "primary_comparison": "MED against the sum-kernel SVMs with one C (the model MED reduces to at "
                                  "alpha = 0), fixed before the run; MED's paired test against every "
                                  "baseline is reported",
            "svm_scales": LANDMINE_SVM_SCALES,
            "sizes": sizes, "folds": folds, "grid": grid, "seed": options.seed, "quick": options.quick,
            **method_settings(METHOD)}


def landmine_cells(poly, seed, sizes, folds, grid, draw):
    """The grid cells of a Landmine figure: MED and the sum-kernel SVMs (one per size and
    fold), and the RBF SVMs (the same for both figures: they do not use the bank).

    Parameters
    ----------
    poly : bool
        Fig. 2b's bank (D = 22) or Fig. 2a's (D = 18).
    seed : int
        The run's seed.
    sizes, folds, grid, draw
        The run's training sizes, folds per size, grids and draw.

    Returns
    -------
    cells, rbf_cells : list of dict
    """
    med_grid = {k: v for k, v in grid.items() if k != "rbf_Cs"}
    cells = [{"size": n, "fold": f, "seed": seed, "poly": poly, "method": METHOD, "draw": draw,
              "rbf": False, "v": 6, **med_grid} for n in sizes for f in range(folds)]
    rbf_cells = [{"size": n, "fold": f, "seed": seed, "draw": draw, "rbf_Cs": grid["rbf_Cs"],
                  "rules": grid["rules"], "v": 2} for n in sizes for f in range(folds)]
    return cells, rbf_cells


def _landmine(poly, options, sizes, folds, grid, draw):
    spec = SPECS[poly]
    name = spec.name
    config = spec.settings(options.quick)
    sizes, folds, grid = sizes or config["sizes"], folds or config["folds"], {**config["grid"], **(grid or {})}
    if options.seed == LANDMINE_DEVELOPMENT_SEED and list(grid["rules"]) == ["median"]:
        raise ValueError(f"seed {LANDMINE_DEVELOPMENT_SEED} is Landmine's development seed (the 'median' bandwidth "
                         "rule was first picked on its validation AUC); take another seed, or let every fold "
                         "choose the rule: grid={'rules': ['median', 'minmax']}")
    cells, rbf_cells = landmine_cells(poly, options.seed, sizes, folds, grid, draw)
    # Fig. 2a computes the RBF SVMs' cells first and Fig. 2b last, so that concurrent runs of
    # both figures share them through the cell cache
    parts = [(CellCall(landmine_rbf_fold), rbf_cells, "landmine-rbf-svms"), (CellCall(landmine_fold), cells, name)]
    found = {n: run_grid(call, c, name=n, options=options) for call, c, n in (parts[::-1] if poly else parts)}
    out = [_merge(m, r) for m, r in zip(found[name], found["landmine-rbf-svms"])]
    methods = LANDMINE_METHODS
    measured, std, records = size_curves(out, cells, methods, sizes,
                                          ["chosen", "rbf_gammas", "switch_posterior", "max_iterations",
                                           "class_swaps", "fitted_tasks", "rbf_svm_gammas"])
    paper = {methods[k]: [spec.paper[k][LANDMINE_SIZES.index(n)] for n in sizes]
             for k in ("multitask", "independent")}
    D = 22 if poly else 18
    return ExperimentResult(
        name, settings=_settings(poly, draw, sizes, folds, grid, options),
        x=sizes, measured=measured, measured_std=std, paper=paper,
        xlabel="training examples per task", ylabel="mean test AUC over 29 tasks",
        title=f"Landmine: multi-task kernel selection, D = {D} (JMLR Fig. 2{'b' if poly else 'a'})",
        extra={"cells": records, "kernel_names": out[0]["kernel_names"],
               "standard_error": standard_errors(out, cells, methods, sizes),
               **baseline_comparisons(out, cells, sizes, "size", LANDMINE_BASELINES, primary="independent"),
               "grid_edges": edge_records(out, _edge_grids(grid)),
               "bandwidth_rule_wins": _rule_wins(out),
               "selection": cell_records(out, cells, ["chosen", "validation", "validation_surface", "rbf_gammas",
                                                       "choices", "profiles"])})


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
    "landmine": {"multitask": ("MED kernel selection", "one (rule, C, alpha) for all tasks on validation MAUC"),
                 "independent": ("sum-kernel SVMs, one C", "one (rule, C) for all tasks on validation MAUC"),
                 "independent_task_C": ("sum-kernel SVMs, C per task", "(rule, C) per task on validation AUC"),
                 "independent_rbf": ("RBF SVMs, (C, gamma) per task",
                                     "(rule, C, gamma) per task on validation AUC, gamma at scales 2^-8..2^7")},
}



def _landmine_readme_rows(result, figure):
    shown = [20, 40, 120, 200]
    rules = result.settings["grid"]["rules"]
    rule_text = ("every method chooses the bandwidth rule (standardised + median heuristic, or [0, 1] + absolute "
                 "gamma) inside each fold" if len(rules) > 1 else
                 f"bandwidth rule fixed a priori: {rules[0]!r} (seed {LANDMINE_DEVELOPMENT_SEED}, on which it was "
                 "first picked, is not reported)")
    experiment = (f"`{result.name}` (JMLR Fig. {figure}, D = {len(result.extra['kernel_names'])}): "
                  "mean test AUC over 29 tasks ± standard error over "
                  f"{result.settings['folds']} folds, seed {result.settings['seed']}, "
                  f"n = {sizes_text(result, shown)} per task; {rule_text}")
    names = {k: (name, rule if len(rules) > 1 else rule.replace("(rule, C)", "C").replace("(rule, ", "("))
             for k, (name, rule) in _ROW_METHODS["landmine"].items()}
    return (size_rows(result, experiment, LANDMINE_METHODS, names, shown)
            + edge_rows(result, experiment, "alpha = 0 is the lower end of its domain"))


@readme_rows("landmine-kernels")
def _landmine_18_readme_rows(result):
    return _landmine_readme_rows(result, "2a")


@readme_rows("landmine-kernels-poly")
def _landmine_22_readme_rows(result):
    return _landmine_readme_rows(result, "2b")


