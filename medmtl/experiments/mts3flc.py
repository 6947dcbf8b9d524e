"""Du, Zhuang, He and Shi (ICDM 2012): MTS3FLC on the orderly 4-task 20 Newsgroups problems.

- ``mts3flc-table3``: Table III, accuracy against the number k_s of shared topics (K = 20),
  with the single-task and pooled logistic-regression baselines.
- ``mts3flc-fig1``: Fig. 1, accuracy against the labelled documents per task.
- ``mts3flc-topics``: Table IV, the most probable words of common and task-specific topics.

Every (problem, labelled size, run, method) is one cell of :func:`run_grid`, the settings of
:func:`accuracies`. Accuracy is on the unlabelled documents of each task (transduction),
averaged over the four tasks.

The labels of the unlabelled documents of the evaluated problems are the test labels: they pass
through :func:`~medmtl.experiments.leakage.guard_test_labels` where the labelled split is made
(the models see those documents, never their labels). On the development problem of
``mts3flc-select`` the same labels are validation labels, the scores the options are chosen
by, and are not guarded. Every result records in ``extra["selection"]`` what it chose, or the
options it read from ``mts3flc-select`` and what it fixed a priori.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from medmtl.experiments.leakage import guard_test_labels
from medmtl.experiments.registry import register
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.mts3flc_tables import (K_SHARED_GRID, N_TOPICS, PAPER_TABLE3, PROBLEM_TITLES, PROBLEMS,
                                              TABLE3_LABELED, fig1_figure, paired_against, select_figure,
                                              select_grid_edges, table3_figure)
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.spec import Spec
from medmtl.experiments.summaries import standard_error

__all__ = ["PAPER_TABLE3", "K_SHARED_GRID", "PROBLEMS", "problem_dataset", "labelled_split", "accuracies",
           "topic_words", "table3", "fig1", "topics", "select", "chosen_options"]

# The 2-task problem on the newsgroups outside the six problems; modelling choices are made there
# (``mts3flc-select``), and Table III and Fig. 1 take them from that run (:func:`chosen_options`).
DEVELOPMENT = "development"

# Quick runs: one problem, a subsample of the posts, fewer runs and grid points.
_QUICK_DOCS_PER_GROUP = 80
_QUICK_MIN_DF = 5

# The settings mts3flc-select compares on the development problem.
# C = 1e4, the top of the first grid, was the baselines' choice while their development accuracy
# still rose: their grid reaches 1e6. The factorisations chose C = 100 inside the first grid and
# keep it (they are the costly cells).
SELECT_C_GRID = [1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0, 1000000.0]
SELECT_FACTOR_C_GRID = [1.0, 10.0, 100.0, 1000.0, 10000.0]
SELECT_LABELED = [6, 14]
SELECT_K_SHARED = 5

SPECS = {
    "table3": Spec("mts3flc-table3", "Du et al. ICDM 2012 Table III: accuracy vs shared topics k_s, 20 Newsgroups",
                   grid={"problems": PROBLEMS, "k_grid": K_SHARED_GRID, "runs": 30},
                   quick={"problems": ["comp-rec"], "k_grid": [0, 5, 20], "runs": 2}, paper=PAPER_TABLE3),
    "fig1": Spec("mts3flc-fig1", "Du et al. ICDM 2012 Fig. 1: accuracy vs labelled documents per task",
                 grid={"problems": PROBLEMS, "sizes": [2, 4, 6, 8, 10, 12, 14, 16, 18, 20], "runs": 30},
                 quick={"problems": ["comp-rec"], "sizes": [2, 6], "runs": 1}),
    "topics": Spec("mts3flc-topics", "Du et al. ICDM 2012 Table IV: common and task-specific topics on comp vs rec",
                   grid={"n_words": 20}, quick={"n_words": 10}),
    "select": Spec("mts3flc-select", "Du et al. ICDM 2012: choose logistic-regression C and membership "
                   "normalisation on a development problem disjoint from Table III",
                   grid={"sizes": SELECT_LABELED, "C_grid": SELECT_C_GRID, "factor_C_grid": SELECT_FACTOR_C_GRID,
                         "runs": 10},
                   quick={"sizes": SELECT_LABELED[:1], "C_grid": [1.0, 100.0], "factor_C_grid": [1.0, 100.0],
                          "runs": 1}),
}


def problem_dataset(problem, quick):
    """The 4-task dataset of ``problem`` (one of :data:`PROBLEMS`, or :data:`DEVELOPMENT`);
    ``quick``: a subsample of the posts and a smaller vocabulary.

    Parameters
    ----------
    problem : str
        One of :data:`PROBLEMS` (e.g. ``"comp-rec"``) or :data:`DEVELOPMENT`.
    quick : bool
        The quick run's subsample of the posts and smaller vocabulary.

    Returns
    -------
    MultiTaskDataset
    """
    from medmtl.datasets.newsgroups_tasks import development_problem, orderly_problem

    if problem == DEVELOPMENT:
        if quick:
            return development_problem(min_df=_QUICK_MIN_DF, max_docs_per_group=_QUICK_DOCS_PER_GROUP)
        return development_problem()
    first, second = problem.split("-")
    if quick:
        return orderly_problem(first, second, min_df=_QUICK_MIN_DF, max_docs_per_group=_QUICK_DOCS_PER_GROUP)
    return orderly_problem(first, second)


def labelled_split(ds, n_labeled, seed):
    """Labelled and unlabelled documents of every task; every task gets both classes labelled.

    The stratified draw can give a tiny labelled set (2 documents) a single class; such a
    draw is replaced by the next one (seeds ``[seed, 1]``, ``[seed, 2]``, ...), so draws
    that already hold both classes are the same as without the check.

    Parameters
    ----------
    ds : MultiTaskDataset
        The problem's tasks (:func:`problem_dataset`).
    n_labeled : int
        Labelled documents per task.
    seed : int
        Seeds the stratified draw.

    Returns
    -------
    XL, yL, XU, yU : lists, one entry per task
        The labelled inputs and labels, and the unlabelled inputs and their true labels.
    """
    idx = ds.split_indices(train=n_labeled, random_state=seed)
    redraw = 0
    while any(np.unique(t.y[i[0]]).size < 2 for t, i in zip(ds.tasks, idx)):
        redraw += 1
        if redraw > 100:
            raise RuntimeError(f"no draw of {n_labeled} labelled documents per task holds both classes")
        idx = ds.split_indices(train=n_labeled, random_state=[seed, redraw])
    XL = [t.X[i[0]] for t, i in zip(ds.tasks, idx)]
    yL = [t.y[i[0]] for t, i in zip(ds.tasks, idx)]
    XU = [t.X[i[2]] for t, i in zip(ds.tasks, idx)]
    yU = [t.y[i[2]] for t, i in zip(ds.tasks, idx)]
    return XL, yL, XU, yU


def _accuracies(predictions, ys):
    return [float(np.mean(np.asarray(p) == np.asarray(y))) for p, y in zip(predictions, ys)]


def accuracies(problem, n_labeled, run, seed, method, k_s, quick, params=None):
    """The accuracy per task of one method on one labelled draw of one problem.

    Parameters
    ----------
    problem : str
        One of :data:`PROBLEMS`, or :data:`DEVELOPMENT`.
    n_labeled : int
        Labelled documents per task.
    run, seed : int
        The draw (labelled documents and model start) derives from both.
    method : {"baselines", "s3flc", "mts3flc"}
        ``"baselines"`` fits both logistic regressions.
    k_s : int or None
        Shared topics of MTS3FLC (0: S3FLC).
    quick : bool
        The quick run's subsampled data and 20 PLSA iterations.
    params : dict, optional
        Overrides of the estimators' defaults (``C``, and ``normalize_memberships`` for the
        factorisations).

    Returns
    -------
    dict
        ``{name: [accuracy per task]}``, one name per model fitted.
    """
    from medmtl.nmtf import MTS3FLC, S3FLC, PooledLogisticRegression, SingleTaskLogisticRegression

    ds = problem_dataset(problem, quick)
    split_seed = 1_000_003 * seed + 1009 * run + n_labeled
    XL, yL, XU, yU = labelled_split(ds, n_labeled, split_seed)
    if problem != DEVELOPMENT:  # there they are the validation labels of mts3flc-select
        yU = [guard_test_labels(y) for y in yU]
    model_seed = split_seed + 7
    params = dict(params or {})
    extra = {"plsa_max_iter": 20, **params} if quick else params
    with warnings.catch_warnings():
        # 20 iterations is the paper's budget, not a convergence test.
        warnings.simplefilter("ignore", category=Warning)
        if method == "baselines":
            return {"LG": _accuracies(SingleTaskLogisticRegression(**params).fit(XL, yL).predict(XU), yU),
                    "pooled LG": _accuracies(PooledLogisticRegression(**params).fit(XL, yL).predict(XU), yU)}
        if method == "s3flc" or k_s == 0:
            model = S3FLC(n_topics=N_TOPICS, random_state=model_seed, **extra)
        else:
            model = MTS3FLC(n_topics=N_TOPICS, n_shared_topics=k_s, random_state=model_seed, **extra)
        model.fit(XL, yL, XU)
    return {method: _accuracies(model.transduction_, yU)}


def _config(key, options, runs):
    """Experiment ``key``'s configuration (``runs`` replacing the spec's unless None), the
    options ``mts3flc-select`` chose and how often its choices sit on a grid edge."""
    config = SPECS[key].settings(options.quick)
    if runs is not None:
        config["runs"] = runs
    chosen, edges = _chosen(options)
    return config, chosen, edges


def _mean_se(values):
    values = np.asarray(values, float) * 100.0
    return float(values.mean()), standard_error(values)


@register(SPECS["table3"])
def table3(options=RunOptions(), *, runs=None):
    """Table III: six problems, K = 20, k_s over the grid, 6 or 14 labelled documents per task.

    Parameters
    ----------
    runs : int, optional
        Random labelled draws per setting (default: the spec's, 30; quick: 2).
    """
    quick, seed = options.quick, options.seed
    config, chosen, edges = _config("table3", options, runs)
    problems, k_grid, runs = config["problems"], config["k_grid"], config["runs"]
    cells = []
    for p in problems:
        for r in range(runs):
            base = {"problem": p, "n_labeled": TABLE3_LABELED[p], "run": r, "seed": seed, "quick": quick}
            cells.append({**base, "method": "baselines", "k_s": None, "params": chosen["baselines"]})
            cells += [{**base, "method": "s3flc" if k == 0 else "mts3flc", "k_s": k,
                       "params": chosen["factorisation"]} for k in k_grid]
    out = run_grid(CellCall(accuracies), cells, name="mts3flc-table3", options=options)
    methods = ["LG", "pooled LG"] + [f"k_s={k}" for k in k_grid]
    per = {m: {p: [] for p in problems} for m in methods}  # run means of the task accuracies
    for cell, res in zip(cells, out):
        for name, accs in res.items():
            key = name if cell["method"] == "baselines" else f"k_s={cell['k_s']}"
            per[key][cell["problem"]].append(np.mean(accs))
    measured, spread = {}, {}
    for m in methods:
        runs_avg = np.mean([per[m][p] for p in problems], axis=0)  # average over problems, per run
        stats = [_mean_se(per[m][p]) for p in problems] + [_mean_se(runs_avg)]
        measured[m], spread[m] = [s[0] for s in stats], [s[1] for s in stats]
    cols = [PROBLEMS.index(p) for p in problems] + [6]
    paper = {m: ([PAPER_TABLE3[m][c] for c in cols] if not quick else [None] * len(cols)) for m in methods}
    result = ExperimentResult(
        name="mts3flc-table3",
        settings={"problems": problems, "k_shared_grid": k_grid, "n_topics": N_TOPICS, "runs": runs,
                  "options": chosen, "options_chosen_by": OPTIONS_RULE,
                  "labeled_per_task": {p: TABLE3_LABELED[p] for p in problems}, "max_iter": 20,
                  "quick": quick, "seed": seed, "error bars": SPREAD_RULE,
                  "data": ("20 Newsgroups bydate, tf-idf, min_df=25" if not quick else
                           f"quick: {_QUICK_DOCS_PER_GROUP} posts per subcategory, min_df={_QUICK_MIN_DF}")},
        x=[PROBLEM_TITLES[p] for p in problems] + ["average"],
        measured=measured, measured_std=spread, paper=paper,
        xlabel="problem", ylabel="accuracy on unlabelled documents (%)",
        title="MTS3FLC, Table III (K = 20)" + (" [quick]" if quick else ""),
        extra={"selection": {"rule": OPTIONS_RULE, "options": chosen,
                             "k_shared": "fixed a priori: every k_s of the grid is reported; none is chosen",
                             "k_shared_grid": k_grid, "labeled_per_task": {p: TABLE3_LABELED[p] for p in problems}},
               "grid_edges": edges, "per_run": {m: per[m] for m in methods},
               "paired_tests": {m: paired_against(per, problems, "k_s=5", m, scale=100.0)
                                for m in ("LG", "pooled LG", "k_s=0") if m in per and "k_s=5" in per}})
    return result, table3_figure(result, problems, k_grid, quick)


@register(SPECS["fig1"])
def fig1(options=RunOptions(), *, runs=None):
    """Fig. 1: MTS3FLC (k_s = 5), S3FLC, LG and pooled LG against labelled documents per task.

    Parameters
    ----------
    runs : int, optional
        Labelled draws at random per setting (default: the spec's, 30; quick: 1).
    """
    config, chosen, edges = _config("fig1", options, runs)
    quick, seed = options.quick, options.seed
    problems, sizes, runs = config["problems"], config["sizes"], config["runs"]
    cells = []
    for p in problems:
        for n in sizes:
            for r in range(runs):
                base = {"problem": p, "n_labeled": n, "run": r, "seed": seed, "quick": quick}
                cells += [{**base, "method": "baselines", "k_s": None, "params": chosen["baselines"]},
                          {**base, "method": "s3flc", "k_s": 0, "params": chosen["factorisation"]},
                          {**base, "method": "mts3flc", "k_s": 5, "params": chosen["factorisation"]}]
    out = run_grid(CellCall(accuracies), cells, name="mts3flc-fig1", options=options)
    names = {"mts3flc": "MTS3FLC", "s3flc": "S3FLC", "LG": "LG", "pooled LG": "pooled LG"}
    curves = {names[m]: {p: {n: [] for n in sizes} for p in problems} for m in names}
    for cell, res in zip(cells, out):
        for name, accs in res.items():
            curves[names[name]][cell["problem"]][cell["n_labeled"]].append(np.mean(accs) * 100)
    measured, spread, paper = {}, {}, {}
    for m, by_problem in curves.items():
        # per run, the average over problems (the same draws' index in every problem)
        avg = [np.mean([by_problem[p][n] for p in problems], axis=0) for n in sizes]
        measured[m] = [float(np.mean(v)) for v in avg]
        spread[m] = [standard_error(v) for v in avg]
        paper[m] = [None] * len(sizes)  # the paper draws Fig. 1 per problem only
    result = ExperimentResult(
        name="mts3flc-fig1",
        settings={"problems": problems, "sizes": sizes, "runs": runs, "n_topics": N_TOPICS, "k_shared": 5,
                  "options": chosen, "options_chosen_by": OPTIONS_RULE,
                  "quick": quick, "seed": seed, "error bars": SPREAD_RULE},
        x=sizes, measured=measured, measured_std=spread, paper=paper,
        xlabel="labelled documents per task", ylabel="accuracy averaged over problems (%)",
        title="MTS3FLC, Fig. 1" + (" [quick]" if quick else ""),
        extra={"selection": {"rule": OPTIONS_RULE, "options": chosen,
                             "k_shared": "fixed a priori (5, as the paper's Fig. 1); every labelled size is "
                                         "reported", "k_shared_value": 5, "sizes": sizes},
               "grid_edges": edges,
               "per_problem": {m: {p: [float(np.mean(v[p][n])) for n in sizes] for p in problems}
                               for m, v in curves.items()},
               "per_run": {m: {p: [[float(a) for a in v[p][n]] for n in sizes] for p in problems}
                           for m, v in curves.items()},
               "paired_tests": _fig1_paired(curves, problems, sizes)})
    return result, fig1_figure(curves, problems, sizes, quick)


def _fig1_paired(curves, problems, sizes):
    """Per labelled size, MTS3FLC's paired t-test against each baseline over the runs, on the
    accuracy (%) averaged over problems."""
    return {m: [paired_against({k: {p: curves[k][p][n] for p in problems} for k in ("MTS3FLC", m)},
                               problems, "MTS3FLC", m) for n in sizes] for m in ("S3FLC", "LG", "pooled LG")}


def topic_words(problem, n_labeled, k_s, seed, quick, n_words):
    """Fit MTS3FLC once and return its topics' top words and its accuracy per task.

    The common topic shown is the shared topic that leans most to one class; each task's
    specific topic likewise among its own topics.

    Parameters
    ----------
    problem : str
        One of :data:`PROBLEMS` or :data:`DEVELOPMENT`.
    n_labeled : int
        Labelled documents per task.
    k_s : int
        Shared topics of MTS3FLC (0: S3FLC, no common topic).
    seed : int
        Seeds the labelled draw and the factorisation.
    quick : bool
        The quick run's subsampled data and 20 PLSA iterations.
    n_words : int
        Words shown per topic.

    Returns
    -------
    dict
        The transductive accuracy per task, the common topic, its class and its words per
        task, each task's specific topic, class and words, and the task names.
    """
    from medmtl.nmtf import MTS3FLC

    ds = problem_dataset(problem, quick)
    XL, yL, XU, yU = labelled_split(ds, n_labeled, 1_000_003 * seed + n_labeled)
    yU = [guard_test_labels(y) for y in yU]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=Warning)
        model = MTS3FLC(n_topics=N_TOPICS, n_shared_topics=k_s, random_state=seed,
                        **({"plsa_max_iter": 20} if quick else {})).fit(XL, yL, XU)
    words = np.asarray(ds.feature_names)

    def top(F, z):
        return words[np.argsort(-F[:, z], kind="stable")[:n_words]].tolist()

    def discrimination(St):
        # how strongly a topic leans to one class: |difference| over total association
        return np.abs(St[:, 0] - St[:, 1]) / np.maximum(St.sum(axis=1), 1e-300)

    S = model.shared_associations_
    z_common = int(np.argmax(discrimination(S))) if k_s else None
    common = {t.name: top(F, z_common) for t, F in zip(ds.tasks, model.topics_)} if k_s else {}
    specific = {}
    for t, F, R in zip(ds.tasks, model.topics_, model.specific_associations_):
        z = k_s + int(np.argmax(discrimination(R)))
        specific[t.name] = {"topic": z, "class": int(model.classes_[np.argmax(R[z - k_s])]), "words": top(F, z)}
    return {"accuracy": _accuracies(model.transduction_, yU), "common_topic": z_common,
            "common_class": int(model.classes_[np.argmax(S[z_common])]) if k_s else None,
            "common": common, "specific": specific, "tasks": [t.name for t in ds.tasks]}


@register(SPECS["topics"])
def topics(options=RunOptions()):
    """Table IV: 20 most probable words of a common topic and of one specific topic per task."""
    quick, seed = options.quick, options.seed
    cell = {"problem": "comp-rec", "n_labeled": 6, "k_s": 5, "seed": seed, "quick": quick,
            "n_words": SPECS["topics"].settings(quick)["n_words"]}
    (res,) = run_grid(CellCall(topic_words), [cell], name="mts3flc-topics",
                      options=dataclasses.replace(options, n_jobs=1))
    import matplotlib.pyplot as plt

    tasks = res["tasks"]
    rows = [[", ".join(res["common"][t][:10])] for t in tasks] + [[", ".join(res["specific"][t]["words"][:10])]
                                                                   for t in tasks]
    labels = [f"common: {t}" for t in tasks] + [f"specific: {t}" for t in tasks]
    fig, ax = plt.subplots(figsize=(12, 4))
    ax.axis("off")
    ax.table(cellText=rows, rowLabels=labels, loc="center", cellLoc="left").auto_set_font_size(False)
    ax.set_title("MTS3FLC topics on comp vs rec (first 10 words)" + (" [quick]" if quick else ""))
    result = ExperimentResult(
        name="mts3flc-topics",
        settings={"problem": "comp-rec", "n_labeled": 6, "k_shared": 5, "n_topics": N_TOPICS, "quick": quick,
                  "seed": seed},
        x=tasks, measured={"MTS3FLC accuracy (%)": [100 * a for a in res["accuracy"]]},
        paper={"MTS3FLC accuracy (%)": [None] * len(tasks)},
        xlabel="task", ylabel="accuracy (%)", title="MTS3FLC topics (Table IV)",
        extra={"selection": {"rule": "fixed a priori: the estimator's default options, k_s = 5, 6 labelled "
                                     "documents per task; the topics shown are picked from the fitted model "
                                     "(the class association it learnt), which never sees a test label",
                             "k_shared": 5, "n_labeled": 6, "n_topics": N_TOPICS,
                             "common_topic": res["common_topic"],
                             "specific_topics": {t: res["specific"][t]["topic"] for t in tasks}},
               "common_topic": res["common_topic"], "common_topic_class": res["common_class"],
               "common_topic_words": res["common"], "specific_topic_words": res["specific"]})
    return result, fig


def _select_label(name, params):
    if name in ("LG", "pooled LG"):
        return name
    shown = {"s3flc": "S3FLC", "mts3flc": f"MTS3FLC k_s={SELECT_K_SHARED}"}[name]
    return f"{shown} ({'normalised' if params['normalize_memberships'] else 'not normalised'})"


@register(SPECS["select"])
def select(options=RunOptions(), *, runs=None):
    """Accuracy of each candidate setting on the development problem, and the one it picks.

    Returns ``(ExperimentResult, figure)``; :func:`chosen_options` gives the choice alone.

    The six problems' unlabelled documents are the test set of Table III, so the options the
    paper leaves open (the strength ``C`` of the logistic regressions, for the baselines and
    for the start of ``G_iU``, and whether unlabelled memberships are renormalised) are chosen
    here, on the posts of the four newsgroups no problem uses
    (:func:`medmtl.datasets.development_problem`), with the Table III protocol: 6 and 14
    labelled documents per task, the rest scored. The baselines take the ``C`` with the best
    mean of LG and pooled LG; the factorisations the pair with the best mean of S3FLC and
    MTS3FLC (k_s = 5).

    Parameters
    ----------
    options : RunOptions
        How to run (:class:`~medmtl.experiments.runner.RunOptions`).
    runs : int, optional
        Random labelled draws per setting (the run's own if None: 10 for a full run, 1
        for a quick one).
    """
    result = _selection(options, runs)
    chosen = result.extra["chosen"]
    result.extra["selection"] = {"rule": "on the development problem: the baselines' C with the best mean "
                                         "accuracy of LG and pooled LG; the factorisations' C and renormalisation "
                                         "with the best mean accuracy of S3FLC and MTS3FLC (k_s = 5)",
                                 "chosen": chosen, "C_grid": result.x,
                                 "validation_accuracy_by_C": result.measured}
    result.extra["selection"]["grid_edges"] = result.extra["grid_edges"]
    result.extra["held_out"] = _held_out(options, chosen)
    return result, select_figure(result.measured, result.x, options.quick)


def _held_out(options, chosen):
    """The chosen options on the evaluated problems: reported, never used for the choice.

    The cells are those of run 0 of ``mts3flc-table3`` (same settings, so they share its
    cache): each Table III problem (quick: comp vs rec) with its labelled size.
    """
    quick, seed = options.quick, options.seed
    problems = SPECS["table3"].settings(quick)["problems"]
    cells = []
    for p in problems:
        base = {"problem": p, "n_labeled": TABLE3_LABELED[p], "run": 0, "seed": seed, "quick": quick}
        cells += [{**base, "method": "baselines", "k_s": None, "params": chosen["baselines"]},
                  {**base, "method": "s3flc", "k_s": 0, "params": chosen["factorisation"]},
                  {**base, "method": "mts3flc", "k_s": SELECT_K_SHARED, "params": chosen["factorisation"]}]
    out = run_grid(CellCall(accuracies), cells, name="mts3flc-table3", options=options)
    shown = {"LG": "LG", "pooled LG": "pooled LG", "s3flc": "S3FLC", "mts3flc": f"MTS3FLC k_s={SELECT_K_SHARED}"}
    accuracy = {}
    for cell, res in zip(cells, out):
        for name, accs in res.items():
            accuracy.setdefault(shown[name], []).append(100 * float(np.mean(accs)))
    return {"rule": "the chosen options on the first labelled draw (run 0) of each Table III problem, with its "
                    "labelled size: test accuracy (%), reported only, never used for the choice",
            "problems": problems, "accuracy": accuracy}


SPREAD_RULE = "standard error of the mean over the runs (of the average over problems, per run, for averages)"
OPTIONS_RULE = ("mts3flc-select: C of the logistic regressions, and C and membership renormalisation of the "
                "factorisations, chosen on a development problem of four newsgroups no evaluated problem uses")


def chosen_options(options=RunOptions()):
    """What ``mts3flc-select`` chooses on the development problem, for Table III and Fig. 1.

    The selection's cells run through the experiment cache like any other, so after the first
    run this reads them back.

    Parameters
    ----------
    options : RunOptions
        Quick or full, seed, workers and cache, as for the experiment that asks.

    Returns
    -------
    dict
        ``{"baselines": {"C": ...}, "factorisation": {"C": ..., "normalize_memberships": ...}}``.
    """
    return _chosen(options)[0]


def _chosen(options):
    """:func:`chosen_options` and the grid-edge counts of those choices."""
    result = _selection(options, None)
    return result.extra["chosen"], result.extra["grid_edges"]


def _selection(options, runs):
    from medmtl.datasets.newsgroups_tasks import DEVELOPMENT_TASKS
    from medmtl.nmtf import MTS3FLC, PooledLogisticRegression

    quick, seed = options.quick, options.seed
    config = SPECS["select"].settings(quick)
    sizes, c_grid = config["sizes"], config["C_grid"]
    factor_grid = [C for C in c_grid if C in config["factor_C_grid"]]
    runs = runs if runs is not None else config["runs"]
    normalize_grid = [True, False]
    cells = []
    for n in sizes:
        for r in range(runs):
            base = {"problem": DEVELOPMENT, "n_labeled": n, "run": r, "seed": seed, "quick": quick}
            for C in c_grid:
                cells.append({**base, "method": "baselines", "k_s": None, "params": {"C": C}})
                for norm in normalize_grid if C in factor_grid else []:
                    params = {"C": C, "normalize_memberships": norm}
                    cells.append({**base, "method": "s3flc", "k_s": 0, "params": params})
                    cells.append({**base, "method": "mts3flc", "k_s": SELECT_K_SHARED, "params": params})
    out = run_grid(CellCall(accuracies), cells, name="mts3flc-select", options=options)

    scores = {}  # label -> C -> run-mean accuracies (%)
    for cell, res in zip(cells, out):
        for name, accs in res.items():
            scores.setdefault(_select_label(name, cell["params"]), {}).setdefault(cell["params"]["C"], []).append(
                100 * float(np.mean(accs)))
    # NaN (None in the JSON) where a setting was not tried at that C
    measured = {k: [float(np.mean(v[C])) if C in v else float("nan") for C in c_grid] for k, v in scores.items()}
    spread = {k: [standard_error(v[C]) if C in v else float("nan") for C in c_grid] for k, v in scores.items()}

    baseline_score = np.mean([measured["LG"], measured["pooled LG"]], axis=0)
    chosen_baselines = {"C": c_grid[int(np.argmax(baseline_score))]}
    at = [c_grid.index(C) for C in factor_grid]
    factor_score = {norm: np.mean([np.asarray(measured[_select_label(m, {"normalize_memberships": norm})])[at]
                                   for m in ("s3flc", "mts3flc")], axis=0) for norm in normalize_grid}
    norm_best = max(normalize_grid, key=lambda nm: factor_score[nm].max())
    chosen_factorisation = {"C": factor_grid[int(np.argmax(factor_score[norm_best]))],
                            "normalize_memberships": norm_best}
    defaults = {"baselines": {"C": PooledLogisticRegression().C},
                "factorisation": {"C": MTS3FLC().C, "normalize_memberships": MTS3FLC().normalize_memberships}}
    result = ExperimentResult(
        name="mts3flc-select",
        settings={"problem": "20 Newsgroups: " + "; ".join(" vs ".join(p) for p in DEVELOPMENT_TASKS),
                  "labeled_per_task": sizes, "runs": runs, "C_grid": c_grid, "factor_C_grid": factor_grid,
                  "k_shared": SELECT_K_SHARED,
                  "n_topics": N_TOPICS, "quick": quick, "seed": seed, "error bars": SPREAD_RULE},
        x=c_grid, measured=measured, measured_std=spread, paper={k: [None] * len(c_grid) for k in measured},
        xlabel="logistic regression C", ylabel="accuracy (%)", xscale="log",
        title="MTS3FLC settings chosen on a development problem",
        extra={"chosen": {"baselines": chosen_baselines, "factorisation": chosen_factorisation},
               "grid_edges": select_grid_edges((c_grid, factor_grid), chosen_baselines, chosen_factorisation,
                                               baseline_score, factor_score),
               "per_run": {k: [v.get(C, []) for C in c_grid] for k, v in scores.items()},
               "defaults": defaults,
               "defaults_agree": defaults == {"baselines": chosen_baselines, "factorisation": chosen_factorisation}})
    return result
