"""Feature selection on text: test AUC against the number of selected features, and fit time.

The data sets are the bundled text sets of :mod:`medmtl.experiments.text_data` (three 20
Newsgroups pairs, 15 spam users, 4 sentiment domains), as tf-idf features built on each
split's training documents; the baselines come from :mod:`medmtl.baselines`.

Each method sweeps the parameter that sets its sparsity; every sweep point is one point of
its curve, ``(number of selected features, test AUC)``. The method's other parameter (MED's
``C``, MCP's ``gamma``) is chosen at each sweep point on the validation split of the
training data, never on test. The methods:

========================  =====================================================================
``med``                   MED feature selection (:class:`~medmtl.med.MEDClassifier`,
                          ``selection="features"``), one model per task; swept over ``alpha``
                          (``rho = 1 / (1 + alpha)``), ``C`` chosen on validation; a feature
                          is selected when its switch posterior exceeds 1/2
``mtmed``                 multi-task MED feature selection
                          (:class:`~medmtl.med.MultiTaskMEDClassifier`): one switch vector
                          shared by the tasks (the multi-task sets only)
``l1_logreg``             l1 logistic regression, scikit-learn's liblinear, swept over ``C``
``skglm_l1``              l1 logistic regression, skglm (Anderson coordinate descent), swept
                          over its ``alpha``
``skglm_mcp``             MCP-penalised logistic regression, skglm, swept over ``alpha``,
                          ``gamma`` chosen on validation
``group_lasso``           multi-task group lasso, skglm (``GroupBCD``, ``QuadraticGroup``,
                          ``WeightedGroupL2``): the tasks' weights of a feature form one group
                          (the multi-task sets only). skglm's logistic group datafit has no
                          sparse-input support, and its ``MultiTaskLasso`` needs one design
                          matrix shared by the tasks, which these tasks (different documents)
                          do not have; so the group lasso is fitted with the squared loss on
                          the ±1 labels, on the block-diagonal design of the tasks, with one
                          unpenalised intercept column per task
========================  =====================================================================

On the multi-task sets the single-task methods fit every task on its own with one value of
every parameter for all tasks; their number of selected features is the size of the union of
the tasks' selections (what all tasks together need), the mean per task is kept beside it.
Selection on validation is on the mean over tasks of the per-task AUCs (MAUC).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp

from medmtl.baselines.sparse_linear import (INTERCEPT_WEIGHT, group_design, group_lasso_fit, l1_logistic_regression,
                                            logistic_alpha_max, sparse_logistic_fit)
from medmtl.evaluation import mean_auc
from medmtl.experiments.med_method import METHOD, fit_options, method_settings
from medmtl.experiments.registry import register
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.spec import Spec
from medmtl.experiments.text_data import (DATA_SETS, DATA_TITLES, MIN_DF, MULTITASK_SETS, NEWSGROUP_PAIRS, SIZES,
                                          text_split, tfidf_features)
from medmtl.experiments.text_report import _comparisons, _mean_or_none
from medmtl.experiments.text_report import figure as _figure
from medmtl.experiments.threads import one_blas_thread

__all__ = ["NEWSGROUP_PAIRS", "DATA_SETS", "QUICK_DATA_SETS", "METHODS", "text_split", "tfidf_features", "method_sweep",
           "budget_choice", "text_feature_cell", "text_feature_selection"]

NAME = "text-feature-selection"

# method key -> label; the multi-task methods run on the multi-task sets only
METHODS = {
    "med": "MED feature selection",
    "mtmed": "multi-task MED feature selection",
    "l1_logreg": "l1 logistic regression (liblinear)",
    "skglm_l1": "l1 logistic regression (skglm)",
    "skglm_mcp": "MCP logistic regression (skglm)",
    "group_lasso": "multi-task group lasso (skglm, squared loss)",
}
MULTITASK_METHODS = ("mtmed", "group_lasso")
MED_METHODS = ("med", "mtmed")

SPEC = Spec(
    NAME, "MED (single- and multi-task) feature selection vs l1 / MCP / group lasso on text: AUC vs #features",
    grid={"data_sets": list(DATA_SETS), "sizes": SIZES, "min_df": MIN_DF, "repetitions": 5,
          "grid": {"med_alphas": [1.01, 1.05, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0,
                                  300.0, 1000.0, 1e4],
                   "med_Cs": [0.1, 1.0, 10.0, 100.0],
                   "l1_Cs": [float(c) for c in np.logspace(-1, 4, 16)],
                   "alpha_ratios": [float(a) for a in np.logspace(0, -4, 17)],   # times the data's alpha_max
                   "mcp_gammas": [3.0, 10.0, 100.0]}},     # large gamma: close to the l1 penalty
    quick={"data_sets": ["baseball vs hockey", *MULTITASK_SETS],
           "sizes": {"newsgroups": {"fit": 120, "validation": 120, "test": 300},
                     "spam": {"fit": 50, "validation": 50, "test": 100},
                     "sentiment": {"fit": 80, "validation": 80, "test": 300}},
           "min_df": 5, "repetitions": 1,
           "grid": {"med_alphas": [1.5, 3.0, 10.0, 100.0, 1000.0], "med_Cs": [1.0, 10.0, 100.0],
                    "l1_Cs": [0.3, 1.0, 10.0, 100.0], "alpha_ratios": [0.5, 0.1, 0.02], "mcp_gammas": [3.0]}})
GRID, QUICK_GRID = SPEC.grid["grid"], SPEC.quick["grid"]
QUICK_DATA_SETS, QUICK_SIZES, QUICK_MIN_DF = tuple(SPEC.quick["data_sets"]), SPEC.quick["sizes"], SPEC.quick["min_df"]
BUDGETS = [1, 3, 10, 30, 100, 300, 1000, 3000, 10000]

BUDGET_RULE = ("among all fitted points (every sweep value and second parameter, e.g. MED's (C, alpha)) "
               "with at most that many selected features (counted on the fitted model), the one with the "
               "highest validation MAUC")


# ---------------------------------------------------------------------------------------------
# The methods: each fits a sweep and returns, per (sweep value, second parameter), the
# validation and test decision values and the selected features.

def _selected_counts(masks):
    """The size of the union of the tasks' selections and their mean size.

    >>> _selected_counts([np.array([True, False, True]), np.array([True, True, False])])
    (3, 2.0)
    """
    masks = np.asarray(masks, bool)
    return int(masks.any(axis=0).sum()), float(masks.sum(axis=1).mean())


def _linear_scores(W, b, Xs):
    """Decision values ``X_t W[t] + b[t]`` of every task."""
    return [np.asarray(X @ w).ravel() + c for X, w, c in zip(Xs, W, b)]


def _record(split, sweep, second, scores_val, scores_test, masks, seconds, soft=None):
    n_union, n_mean = _selected_counts(masks)
    out = {"sweep": float(sweep), "second": None if second is None else float(second),
           "validation": mean_auc(split["yval"], scores_val), "test": mean_auc(split["ytest"], scores_test),
           "n_features": n_union, "n_features_per_task": n_mean, "seconds": float(seconds)}
    if soft is not None:
        out["validation_all_features"] = mean_auc(split["yval"], soft[0])
        out["test_all_features"] = mean_auc(split["ytest"], soft[1])
    return out


def _med_points(split, Cs, alphas, multitask, method):
    """MED feature selection along a warm-started alpha path per C (single- or multi-task).

    A point's predictor keeps the posterior-mean weights of the selected features (switch
    posterior > 1/2) and sets the others to zero, so that its AUC is that of a model on its
    selected features; the AUCs of the full posterior-mean predictor, which weighs every
    feature by its switch posterior, are kept beside them (``*_all_features``).
    """
    from medmtl.med import MEDClassifier, MultiTaskMEDClassifier, med_path

    options = fit_options(method)
    M = len(split["Xfit"])
    points = []
    for C in sorted(Cs):
        # one warm-started path over alpha per C (per task for the single-task models)
        if multitask:
            paths = [med_path(MultiTaskMEDClassifier(selection="features", C=C, alpha=alphas[0], **options),
                              split["Xfit"], split["yfit"], alphas=sorted(alphas))]
        else:
            paths = [med_path(MEDClassifier(selection="features", C=C, alpha=alphas[0], **options), X, y,
                              alphas=sorted(alphas)) for X, y in zip(split["Xfit"], split["yfit"])]
        for k, alpha in enumerate(sorted(alphas)):
            models = [path.estimators[k] for path in paths]
            seconds = sum(path.process_seconds[k] for path in paths)
            if multitask:
                (model,) = models
                W, b = np.asarray(model.coef_), np.asarray(model.intercept_, float)
                masks = [np.asarray(model.switch_posterior_) > 0.5] * M
            else:
                W = [np.asarray(model.coef_).ravel() for model in models]
                b = [float(model.intercept_[0]) for model in models]
                masks = [np.asarray(model.switch_posterior_) > 0.5 for model in models]
            kept = [w * m for w, m in zip(W, masks)]
            points.append(_record(split, alpha, C, _linear_scores(kept, b, split["Xval"]),
                                  _linear_scores(kept, b, split["Xtest"]), masks, seconds,
                                  soft=(_linear_scores(W, b, split["Xval"]), _linear_scores(W, b, split["Xtest"]))))
    return points


def _liblinear_points(split, Cs):
    """l1 logistic regression (liblinear) per task, one C for all tasks."""
    points = []
    for C in Cs:
        start = time.process_time()
        W, b = [], []
        for X, y in zip(split["Xfit"], split["yfit"]):
            model = l1_logistic_regression(C, random_state=0, max_iter=1000).fit(X, y)
            W.append(model.coef_.ravel())
            b.append(float(model.intercept_[0]))
        seconds = time.process_time() - start
        points.append(_record(split, C, None, _linear_scores(W, b, split["Xval"]),
                              _linear_scores(W, b, split["Xtest"]), [w != 0 for w in W], seconds))
    return points


def _skglm_points(split, ratios, penalty, gammas):
    """Logistic regression with an l1 or MCP penalty (skglm), per task, one alpha for all tasks."""
    Xs = [sp.csc_matrix(X) for X in split["Xfit"]]          # skglm's sparse loops run over columns
    scale = float(np.max([logistic_alpha_max(X, y) for X, y in zip(Xs, split["yfit"])]))
    points = []
    for gamma in (gammas if penalty == "mcp" else [None]):
        w_prev = [None] * len(split["Xfit"])
        for ratio in ratios:
            start = time.process_time()
            for t, (X, y) in enumerate(zip(Xs, split["yfit"])):
                w_prev[t] = sparse_logistic_fit(X, y, ratio * scale, penalty, gamma, w_init=w_prev[t])
            W, b = [w[:-1] for w in w_prev], [float(w[-1]) for w in w_prev]
            seconds = time.process_time() - start
            points.append(_record(split, ratio, gamma, _linear_scores(W, b, split["Xval"]),
                                  _linear_scores(W, b, split["Xtest"]), [w != 0 for w in W], seconds))
    return points


def _group_lasso_points(split, ratios):
    """Multi-task group lasso with the squared loss on the ±1 labels (skglm GroupBCD).

    A sweep point whose fit diverges has no point on the curve; the sweep goes on from a cold
    start.
    """
    Xs, ys = split["Xfit"], split["yfit"]
    M, D = len(Xs), Xs[0].shape[1]
    # features no fitting document holds have no column (their weights stay zero)
    features = np.flatnonzero(np.asarray(sum(abs(X).sum(axis=0) for X in Xs)).ravel() > 0)
    K = len(features)
    design, grp_ptr, grp_indices = group_design(Xs, features)
    y = np.concatenate([np.asarray(v, float) for v in ys])
    centred = np.concatenate([np.asarray(v, float) - np.mean(v) for v in ys])
    gradient = np.asarray(design[:, :K * M].T @ centred).ravel().reshape(K, M)
    scale = float(np.linalg.norm(gradient, axis=1).max() / len(y))
    weights = np.concatenate([np.ones(K), np.full(M, INTERCEPT_WEIGHT)])
    points, w = [], None
    for ratio in ratios:
        start = time.process_time()
        w = group_lasso_fit(design, y, grp_ptr, grp_indices, ratio * scale, weights, w_init=w)
        if w is None:
            warnings.warn(f"the group lasso diverged at alpha ratio {ratio:.3g}; the point is left out",
                          RuntimeWarning, stacklevel=2)
            continue
        seconds = time.process_time() - start
        W = np.zeros((M, D))
        W[:, features] = w[:K * M].reshape(K, M).T
        b = w[K * M:]
        points.append(_record(split, ratio, None, _linear_scores(W, b, split["Xval"]),
                              _linear_scores(W, b, split["Xtest"]), [wt != 0 for wt in W], seconds))
    return points


def method_sweep(method, split, grid, med_method=METHOD):
    """Fit ``method`` along its sweep on one split; score every point on validation and test.

    Parameters
    ----------
    method : str
        A key of :data:`METHODS`.
    split : dict
        What :func:`text_split` returns.
    grid : dict
        The sweeps, as :data:`GRID` holds them.
    med_method : str, default=METHOD
        The MED solution method.

    Returns
    -------
    list of dict
        One per (sweep value, second parameter): ``sweep``, ``second`` (``None`` for methods
        without one), ``validation`` and ``test`` MAUC, ``n_features`` (the union over the
        tasks), ``n_features_per_task`` (their mean) and ``seconds`` (the process time of the
        fits of that point).

    Examples
    --------
    >>> split = text_split("spam", sizes={"fit": 20, "validation": 20, "test": 40}, min_df=3)
    >>> points = method_sweep("l1_logreg", split, {"l1_Cs": [0.1, 100.0]})
    >>> [p["n_features"] for p in points][0] < [p["n_features"] for p in points][1]
    True
    """
    if method in MED_METHODS:
        return _med_points(split, grid["med_Cs"], grid["med_alphas"], method == "mtmed", med_method)
    if method == "l1_logreg":
        return _liblinear_points(split, grid["l1_Cs"])
    if method == "skglm_l1":
        return _skglm_points(split, grid["alpha_ratios"], "l1", None)
    if method == "skglm_mcp":
        return _skglm_points(split, grid["alpha_ratios"], "mcp", grid["mcp_gammas"])
    if method == "group_lasso":
        return _group_lasso_points(split, grid["alpha_ratios"])
    raise ValueError(f"unknown method {method!r}; choose from {list(METHODS)}")


def _curve(points):
    """Per sweep value, the point whose second parameter has the best validation MAUC
    (ties: the first in sorted order), in the order of the sweep values.

    >>> pts = [{"sweep": 1.0, "second": 1.0, "validation": 0.8}, {"sweep": 1.0, "second": 10.0, "validation": 0.9},
    ...        {"sweep": 2.0, "second": 1.0, "validation": 0.7}, {"sweep": 2.0, "second": 10.0, "validation": 0.7}]
    >>> [(p["sweep"], p["second"]) for p in _curve(pts)]
    [(1.0, 10.0), (2.0, 1.0)]
    """
    sweeps = sorted({p["sweep"] for p in points})
    out = []
    for s in sweeps:
        at = sorted((p for p in points if p["sweep"] == s), key=lambda p: (p["second"] is not None, p["second"]))
        out.append(max(at, key=lambda p: p["validation"]))
    return out


def budget_choice(curve, budget=None):
    """The curve point with the best validation MAUC among those with at most ``budget``
    selected features (``None``: any number), or ``None`` when no point fits the budget.

    Ties go to the point with fewer features, then to the first in ``curve``.

    Parameters
    ----------
    curve : list of dict
        Fitted points (a curve, or every point of a sweep) with ``validation`` and ``n_features``.
    budget : int, optional

    Returns
    -------
    dict or None

    Examples
    --------
    >>> curve = [{"n_features": 5, "validation": 0.7}, {"n_features": 50, "validation": 0.9},
    ...          {"n_features": 20, "validation": 0.9}]
    >>> budget_choice(curve)["n_features"], budget_choice(curve, 10)["n_features"], budget_choice(curve, 2)
    (20, 5, None)
    """
    fits = [p for p in curve if budget is None or p["n_features"] <= budget]
    if not fits:
        return None
    return max(fits, key=lambda p: (p["validation"], -p["n_features"]))


def _warm_up(method, split, grid, med_method):
    """Compile and import what ``method`` needs on a tiny copy of ``split`` (untimed), so that
    the timed fits measure fitting, not just-in-time compilation (skglm compiles its solvers
    with numba in every new process)."""
    n_tasks = 2 if method in MULTITASK_METHODS else 1
    tiny = {key: [X[:10] for X in split[key][:n_tasks]] for key in ("Xfit", "Xval", "Xtest")}
    ys = {key: [np.resize(np.array([1, -1]), 10)] * n_tasks for key in ("yfit", "yval", "ytest")}
    # two sweep values: a cold start and a warm one
    small = {k: (v[:2] if k in ("med_alphas", "alpha_ratios", "l1_Cs") else v[:1]) for k, v in grid.items()}
    method_sweep(method, {**split, **tiny, **ys}, small, med_method)


@one_blas_thread
def text_feature_cell(data, method, rep, seed=0, sizes=None, min_df=MIN_DF, grid=None, med_method=METHOD,
                      libraries=None):
    """One repetition of one method on one data set: its curve and its fit times.

    Parameters
    ----------
    data : str
        One of :data:`DATA_SETS`.
    method : str
        A key of :data:`METHODS`.
    rep : int
        The repetition (with ``seed``, it fixes the split).
    seed : int, default=0
    sizes : dict, optional
        As :func:`text_split` takes it.
    min_df : int, default=MIN_DF
    grid : dict, optional
        The sweeps (default :data:`GRID`).
    med_method : str, default=METHOD
    libraries : dict, optional
        The versions of the libraries the baselines run (part of the cache key only).

    Returns
    -------
    dict
        ``points`` (every fitted point, :func:`method_sweep`), ``curve`` (per sweep value the
        point chosen on validation), ``n_features_total``, ``seconds`` (process time of all
        the fits) and ``task_names``.
    """
    grid = grid or GRID
    split = text_split(data, seed, rep, sizes, min_df)
    _warm_up(method, split, grid, med_method)
    points = method_sweep(method, split, grid, med_method)
    return {"points": points, "curve": _curve(points), "n_features_total": int(split["n_features"]),
            "seconds": float(sum(p["seconds"] for p in points)), "task_names": split["task_names"]}


# ---------------------------------------------------------------------------------------------
# The experiment.

def _methods_for(data):
    return [m for m in METHODS if data in MULTITASK_SETS or m not in MULTITASK_METHODS]


def _library_versions():
    from importlib import metadata

    return {lib: metadata.version(lib) for lib in ("skglm",)}


def _mean_curve(curves):
    """The curve averaged over repetitions point by point, at the sweep values every
    repetition has (a fit that diverged leaves its point out of its repetition)."""
    common = set.intersection(*({p["sweep"] for p in c} for c in curves))
    curves = [[p for p in c if p["sweep"] in common] for c in curves]

    def column(key, stat=np.mean):
        return stat([[p[key] for p in c] for c in curves], axis=0).tolist()

    return {"sweep": [p["sweep"] for p in curves[0]], "n_features": column("n_features"),
            "n_features_per_task": column("n_features_per_task"), "test": column("test"),
            "test_std": column("test", np.std), "validation": column("validation"), "seconds": column("seconds")}


def _budget_table(point_lists, budgets):
    """Per budget, per repetition the chosen point's test and validation MAUC and features
    (chosen among all of the repetition's fitted points, ``point_lists[rep]``)."""
    table = {}
    for budget in [*budgets, None]:
        chosen = [budget_choice(c, budget) for c in point_lists]
        table["any" if budget is None else str(budget)] = [
            None if p is None else {"test": p["test"], "validation": p["validation"], "n_features": p["n_features"],
                                    "sweep": p["sweep"], "second": p["second"]} for p in chosen]
    return table


def _std_or_none(values):
    return None if any(v is None for v in values) else float(np.std(values))


def _cells(config, chosen_methods, seed, libraries):
    """The grid: one cell per (data set, repetition, method); a worker's cells of one split
    follow each other."""
    cells = []
    for data in config["data_sets"]:
        sizes = config["sizes"]["newsgroups" if data in NEWSGROUP_PAIRS else data]
        for rep in range(config["repetitions"]):
            for method in (m for m in _methods_for(data) if m in chosen_methods):
                cells.append({"data": data, "method": method, "rep": rep, "seed": seed, "sizes": sizes,
                              "min_df": config["min_df"], "grid": config["grid"], "med_method": METHOD,
                              "libraries": libraries, "v": 1})
    return cells


def _fit_times(method, outs):
    """A method's sweep times on one data set, averaged over the repetitions."""
    return {"sweep_seconds_mean": float(np.mean([o["seconds"] for o in outs])),
            "grid_points": len(outs[0]["points"]),
            "fits": len(outs[0]["points"]) * len(outs[0]["task_names"])
            if method not in MULTITASK_METHODS else len(outs[0]["points"]),
            "seconds_per_point_mean": float(np.mean([o["seconds"] / len(o["points"]) for o in outs]))}


def _selection_records(data, method, cells, out, table):
    """What validation chose, per repetition: the curve, every point and the budget choices."""
    keys = ("sweep", "second", "validation", "n_features")
    return [{"data": data, "method": method, "rep": c["rep"],
             "curve": [{k: p[k] for k in keys} for p in o["curve"]],
             "points": [{k: p[k] for k in keys} for p in o["points"]],
             "budget_choices": {b: None if v[c["rep"]] is None else {k: v[c["rep"]][k] for k in keys}
                                for b, v in table.items()}}
            for c, o in zip(cells, out) if c["data"] == data and c["method"] == method]


def _summarise(cells, out, config, chosen_methods):
    """The measured curves, budget tables, times, comparisons and selection records."""
    s = {"measured": {}, "std": {}, "curves": {}, "chosen": {}, "comparisons": [], "budgets": {}, "times": {},
         "selection": [], "n_total": {}}
    for data in config["data_sets"]:
        methods_here = [m for m in _methods_for(data) if m in chosen_methods]
        for part in ("curves", "chosen", "budgets", "times"):
            s[part][data] = {}
        for method in methods_here:
            outs = [o for o, c in zip(out, cells) if c["data"] == data and c["method"] == method]
            s["curves"][data][method] = _mean_curve([o["curve"] for o in outs])
            table = s["budgets"][data][method] = _budget_table([o["points"] for o in outs], BUDGETS)
            key = f"{data}: {METHODS[method]}"
            tests = [[None if p is None else p["test"] for p in table[str(b)]] for b in BUDGETS]
            s["measured"][key] = [_mean_or_none(t) for t in tests]
            s["std"][key] = [_std_or_none(t) for t in tests]
            s["chosen"][data][method] = (float(np.mean([p["n_features"] for p in table["any"]])),
                                         float(np.mean([p["test"] for p in table["any"]])))
            s["times"][data][method] = _fit_times(method, outs)
            s["n_total"][data] = outs[0]["n_features_total"]
            s["selection"] += _selection_records(data, method, cells, out, table)
        s["comparisons"] += _comparisons(s["budgets"][data], data, methods_here)
    return s


def _settings(config, chosen_methods, libraries, seed, quick):
    data_sets, min_df = config["data_sets"], config["min_df"]
    return {"data": {d: DATA_TITLES[d] for d in data_sets},
            "newsgroup_pairs": {k: list(v) for k, v in NEWSGROUP_PAIRS.items() if k in data_sets},
            "features": f"tf-idf (sublinear tf, idf and vocabulary from the fitting documents, words in at "
                        f"least {min_df} of them; rows of unit norm); 20 Newsgroups: headers removed, "
                        "English stop words removed",
            "sizes": config["sizes"], "repetitions": config["repetitions"], "grid": config["grid"],
            "methods": {m: METHODS[m] for m in chosen_methods},
            "selection_rule": "per sweep point, the second parameter (MED: C; MCP: gamma) with the best "
                              "validation MAUC; one value of every parameter for all tasks",
            "budget_rule": BUDGET_RULE, "budgets": BUDGETS,
            "n_features_counted": "switch posterior > 1/2 (MED); nonzero weight (the others); the union "
                                  "over the tasks",
            "fit_time": "process time (one BLAS thread) of the fits of a sweep, after an untimed warm-up "
                        "that compiles numba code",
            "libraries": libraries, "seed": seed, "quick": quick,
            "quick_shrinks": "one newsgroup pair, fewer documents per task, vocabulary (min_df 5), fewer grid "
                             "points, one repetition",
            **method_settings(METHOD)}


@register(SPEC)
def text_feature_selection(options=RunOptions(), *, data_sets=None, methods=None):
    """Test AUC against the number of selected features, and fit times, on text data.

    Parameters
    ----------
    options : RunOptions
        How to run (:class:`~medmtl.experiments.runner.RunOptions`).
    data_sets : list of str, optional
        A subset of :data:`DATA_SETS` (default: the spec's: all; quick: :data:`QUICK_DATA_SETS`).
    methods : list of str, optional
        A subset of :data:`METHODS` (default: all; the multi-task ones run on the multi-task
        sets only).

    Returns
    -------
    result : ExperimentResult
        ``x`` are feature budgets; ``measured["DATA: METHOD"]`` the mean test MAUC at each
        budget of the curve point chosen by :data:`BUDGET_RULE`; ``extra`` holds every curve,
        the fit times, the budget choices per repetition, the comparisons of MED with the
        strongest baseline, and the ``selection`` record.
    figure : matplotlib.figure.Figure
        One panel per data set: every method's curve (mean over repetitions), log x.
    """
    config = SPEC.settings(options.quick)
    config["data_sets"] = list(data_sets or config["data_sets"])
    chosen_methods = list(methods or METHODS)
    libraries = _library_versions()
    cells = _cells(config, chosen_methods, options.seed, libraries)
    out = run_grid(CellCall(text_feature_cell), cells, name=NAME, options=options)
    s = _summarise(cells, out, config, chosen_methods)
    result = ExperimentResult(
        NAME, settings=_settings(config, chosen_methods, libraries, options.seed, options.quick),
        x=BUDGETS, measured=s["measured"], measured_std=s["std"],
        paper={k: [None] * len(BUDGETS) for k in s["measured"]},
        xlabel="at most this many selected features", ylabel="mean test AUC (point chosen on validation)",
        title="Text feature selection", xscale="log",
        extra={"curves": s["curves"],
               "cells": [{"data": c["data"], "method": c["method"], "rep": c["rep"], "seconds": o["seconds"],
                          "curve": o["curve"]} for c, o in zip(cells, out)],
               "budget_choices": s["budgets"], "fit_times": s["times"],
               "comparisons": s["comparisons"], "n_features_total": s["n_total"],
               "chosen_on_validation": {d: {m: {"n_features": v[0], "test": v[1]} for m, v in ms.items()}
                                        for d, ms in s["chosen"].items()},
               "selection": s["selection"]})
    return result, _figure(s["curves"], s["chosen"], options.quick, METHODS, MED_METHODS)
