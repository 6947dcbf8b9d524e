"""The lecture notes' MED experiments: splice ROC curves, housing and NCI60 regression tables,
and the Dermatology cross-validation surfaces.

Every experiment follows the same discipline as the JMLR figures: inputs are scaled on
training data only (:mod:`.preprocessing`), hyper-parameters are chosen on a validation
split carved out of the training side (:mod:`.selection`), and the test split is scored
once by the chosen model. The lecture gives the switch prior as ``p0`` (or ``rho``), the
prior probability that a switch is on; :func:`medmtl.med.bound.alpha_from_rho` turns it
into the estimators' ``alpha``.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve

from medmtl.baselines.svm import independent_svm_scores
from medmtl.datasets import load_splice
from medmtl.evaluation import mean_auc
from medmtl.experiments.leakage import guard_test_labels
from medmtl.experiments.lecture_models import RHOS, alphas_of, least_squares_fit, linear_coefficients, rho_label
from medmtl.experiments.med_method import METHOD, fit_options, method_settings
from medmtl.experiments.med_regression import (HOUSING_PAPER, HOUSING_ROWS, housing_regression, housing_split,
                                               nci60_meta_selection, nci60_regression, nci60_single_line)
from medmtl.experiments.registry import register
from medmtl.experiments.report import Row, fmt, readme_rows
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.selection import select_per_alpha, warm_path
from medmtl.experiments.spec import Spec
from medmtl.experiments.summaries import standard_error
from medmtl.experiments.threads import one_blas_thread

__all__ = ["RHOS", "linear_coefficients", "least_squares_fit", "splice_features", "splice_split", "housing_split",
           "nci60_single_line", "nci60_meta_selection", "dermatology_cv_fold", "splice_roc",
           "housing_regression", "nci60_regression", "dermatology_cv", "HOUSING_PAPER", "HOUSING_ROWS"]


# ---------------------------------------------------------------------------------------------
# Splice: ROC curves of MED feature selection at several rho; CDF of linear coefficients.

SPLICE_SETTINGS = {"100 features": (25, False), "100 features, quadratic": (25, True),
                   "240 features": (None, False)}
SPLICE_SPEC = Spec("splice-roc",
                   "Lecture: ROC of MED feature selection at several rho on DNA splice sites (+ CDF of weights)",
                   grid={"repetitions": 5, "Cs": [0.01, 0.1, 1.0, 10.0], "n_val": 500},
                   quick={"repetitions": 1, "Cs": [0.1, 1.0], "n_val": 300})
SPLICE_CS, SPLICE_QUICK_CS = SPLICE_SPEC.grid["Cs"], SPLICE_SPEC.quick["Cs"]


def splice_features(X, window, quadratic):
    """One-hot nucleotides, optionally with every product of indicators at two *different*
    positions (the explicit quadratic-kernel expansion without its structurally zero or
    duplicate columns: 100 + 4950 - 150 = 4900 features for the 25-position window).

    Parameters
    ----------
    X : ndarray of shape (n_samples, 4 * window)
        One-hot nucleotides, four columns (ACGT) per position.
    window : int
        Number of positions.
    quadratic : bool
        Add the products of indicators at two different positions; if False, ``X`` is
        returned as it is.

    Returns
    -------
    ndarray of shape (n_samples, n_output_features)

    Examples
    --------
    >>> X = np.eye(8)[:2]  # two positions x ACGT
    >>> splice_features(X, 2, True).shape
    (2, 24)
    """
    if not quadratic:
        return X
    d = X.shape[1]
    i, j = np.triu_indices(d, k=1)
    keep = (i // 4) != (j // 4)
    return np.hstack([X, X[:, i[keep]] * X[:, j[keep]]])


def _roc_points(y, scores):
    fpr, tpr, _ = roc_curve(y, scores, drop_intermediate=False)
    return [fpr.tolist(), tpr.tolist()]


@one_blas_thread
def splice_split(setting, rep, seed=0, n_train=200, n_val=500, Cs=SPLICE_CS, rhos=RHOS,
                 method=METHOD, keep_curves=True):
    """One random split of the splice experiment for one feature setting.

    ``n_train`` examples train, ``n_val`` validate (C is chosen per rho on validation AUC,
    warm-starting along the rho path), and all the remaining examples test. Returns the
    test AUC per rho, the libsvm linear SVM's test AUC (C chosen the same way), the chosen
    C and its validation AUC of both, and with ``keep_curves`` the ROC points and the
    linear coefficients per rho.

    Parameters
    ----------
    setting : str
        A key of :data:`SPLICE_SETTINGS`: the window and whether the features are quadratic.
    rep : int
        The split's repetition number: it seeds the split with ``seed``.
    seed : int, default=0
        The run's seed (``RunOptions.seed``).
    n_train : int, default=200
        Training examples.
    n_val : int, default=500
        Validation examples.
    Cs : list of float, default=SPLICE_CS
        The values of ``C`` of MED and of the linear SVM.
    rhos : list of float, default=RHOS
        The switch priors ``p0`` (``rho``), one MED model each.
    method : str, default=METHOD
        The registered MED solution method.
    keep_curves : bool, default=True
        Also return the ROC points and the linear coefficients per rho.

    Returns
    -------
    dict
    """
    from medmtl.med import MEDClassifier, med_path

    window, quadratic = SPLICE_SETTINGS[setting]
    ds = load_splice(window=window)
    train, val, test = ds.split(train=n_train, validation=n_val, random_state=[seed, rep])
    Xtr, Xva, Xte = (splice_features(d[0].X, window, quadratic) for d in (train, val, test))
    ytr, yva, yte = train[0].y, val[0].y, guard_test_labels(test[0].y)

    def make(C, alpha):
        return MEDClassifier(selection="features", C=C, alpha=alpha, warm_start=True,
                             **fit_options(method))

    alphas = alphas_of(rhos)
    scores, _ = warm_path(make, Cs, alphas, Xtr, ytr, lambda m: roc_auc_score(yva, m.decision_function(Xva)))
    out = {"rhos": list(rhos), "auc": [], "chosen_C": [], "validation_auc": [], "roc": [], "coef": [],
           "n_features": Xtr.shape[1]}
    picks = select_per_alpha(scores, alphas)
    chosen = med_path(make(*picks[0][0]), Xtr, ytr, Cs=[C for (C, _), _ in picks],
                      alphas=[alpha for (_, alpha), _ in picks], warm_start=False)
    for ((C, alpha), v), model in zip(picks, chosen.estimators):
        s = model.decision_function(Xte)
        out["auc"].append(roc_auc_score(yte, s))
        out["chosen_C"].append(C)
        out["validation_auc"].append(v)
        if keep_curves:
            out["roc"].append(_roc_points(yte, s))
            out["coef"].append(linear_coefficients(model, Xtr.shape[1]).tolist())
    out["svm_validation_auc"], out["svm_auc"], (svm,), (s,) = independent_svm_scores(
        Cs, [(Xtr, ytr)], [(Xva, yva)], [(Xte, yte)])
    out["svm_C"] = svm["C"]
    if keep_curves:
        out["svm_roc"] = _roc_points(yte, s)
    out["n_test"] = int(len(yte))
    return out


@register(SPLICE_SPEC)
def splice_roc(options=RunOptions()):
    """The lecture's splice ROC slides: test AUC per rho, ROC curves and coefficient CDFs."""
    quick, seed = options.quick, options.seed
    config = SPLICE_SPEC.settings(quick)
    reps, Cs, n_val = config["repetitions"], config["Cs"], config["n_val"]
    settings = list(SPLICE_SETTINGS)
    # the figure draws the first repetition: only its curves are kept (4900 coefficients
    # per rho in the quadratic setting)
    cells = [{"setting": s, "rep": r, "seed": seed, "n_train": 200, "n_val": n_val, "Cs": Cs,
              "rhos": RHOS, "method": METHOD, "keep_curves": r == 0, "v": 3}
             for s in settings for r in range(reps)]
    out = run_grid(CellCall(splice_split), cells, name="splice-roc", options=options)
    measured, std, paper = {}, {}, {}
    for s in settings:
        rows = [o for o, c in zip(out, cells) if c["setting"] == s]
        A = np.array([o["auc"] for o in rows])
        measured[f"MED, {s}"] = A.mean(0).tolist()
        std[f"MED, {s}"] = A.std(0).tolist()
        svm = np.array([o["svm_auc"] for o in rows])
        measured[f"SVM, {s}"] = [float(svm.mean())] * len(RHOS)
        std[f"SVM, {s}"] = [float(svm.std())] * len(RHOS)
        paper[f"MED, {s}"] = [None] * len(RHOS)  # the lecture shows curves, no numbers
    first = {c["setting"]: o for o, c in zip(out, cells) if c["rep"] == 0}
    coef = first["100 features"]["coef"]
    result = ExperimentResult(
        "splice-roc",
        settings={"data": "UCI splice junctions, EI (+1) vs IE and neither (-1), one-hot A/C/G/T",
                  "features": {"100 features": "25 positions centred on the junction",
                               "100 features, quadratic": "the 100 plus products of indicators at two "
                                                          "different positions (4900 inputs)",
                               "240 features": "all 60 positions"},
                  "protocol": "200 training examples, a validation set (C chosen per rho on validation AUC, "
                              "warm path over rho), the rest for test; mean test AUC over splits",
                  "n_val": n_val, "rhos": RHOS, "alphas": alphas_of(RHOS), "Cs": Cs,
                  "repetitions": reps, "seed": seed, "quick": quick, **method_settings(METHOD),
                  "model": f"MEDClassifier(selection='features', method={METHOD!r}); SVM: libsvm linear"},
        x=RHOS, measured=measured, measured_std=std, paper=paper, xscale="log",
        xlabel="rho (prior probability of a switch being on)", ylabel="test AUC",
        title="Splice: MED feature selection across rho (lecture ROC slides)",
        extra={"n_test": first["100 features"]["n_test"],
               "chosen_C": {c["setting"] + f" rep {c['rep']}": o["chosen_C"] for o, c in zip(out, cells)},
               "selection": [{"setting": c["setting"], "rep": c["rep"],
                              **{k: o[k] for k in ("chosen_C", "validation_auc", "svm_C", "svm_validation_auc")}}
                             for o, c in zip(out, cells)],
               "coefficients_100_features": {rho_label(r): coef[k] for k, r in enumerate(RHOS)},
               "fraction_of_coefficients_below_1e-3": {
                   rho_label(r): float(np.mean(np.abs(coef[k]) < 1e-3)) for k, r in enumerate(RHOS)}})
    return result, _splice_figure(first, RHOS)


def _splice_figure(first, rhos):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 9))
    panels = [("100 features", axes[0, 0]), ("100 features, quadratic", axes[1, 0]),
              ("240 features", axes[1, 1])]
    for setting, ax in panels:
        o = first.get(setting)
        if o is None:
            ax.set_visible(False)
            continue
        for k, rho in enumerate(rhos):
            fpr, tpr = o["roc"][k]
            ax.plot(fpr, tpr, "--" if rho > 0.5 else "-",
                    label=f"MED rho = {rho_label(rho)} (AUC {o['auc'][k]:.3f})")
        fpr, tpr = o["svm_roc"]
        ax.plot(fpr, tpr, ":", color="k", label=f"SVM (AUC {o['svm_auc']:.3f})")
        ax.set_title(f"ROC, splice EI vs rest, {setting} ({o['n_features']} inputs)", fontsize=9)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.legend(fontsize=7, loc="lower right")
    ax = axes[0, 1]
    o = first.get("100 features")
    if o is not None:
        for k, rho in enumerate(rhos):
            c = np.sort(np.abs(o["coef"][k]))
            ax.plot(c, np.arange(1, c.size + 1) / c.size, label=f"rho = {rho_label(rho)}")
        ax.set_xscale("symlog", linthresh=1e-4)
        ax.set_xlabel("|linear coefficient| E[s_i theta_i]")
        ax.set_ylabel("fraction of the 100 coefficients")
        ax.set_title("CDF of linear coefficients, 100 features", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------
# Dermatology cross-validation surfaces over C and alpha (rho).

DCV_SPEC = Spec("dermatology-cv", "Lecture: validation surfaces of multi-task MED feature selection over C, alpha",
                grid={"folds": 5, "grid": {"Cs": [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0],
                                           "alphas": [0.0, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]}},
                quick={"folds": 1, "grid": {"Cs": [0.1, 1.0, 10.0], "alphas": [0.0, 10.0, 1000.0]}})
DCV_GRID, DCV_QUICK_GRID = DCV_SPEC.grid["grid"], DCV_SPEC.quick["grid"]


@one_blas_thread
def dermatology_cv_fold(fold, seed=0, size=200, Cs=DCV_GRID["Cs"], alphas=DCV_GRID["alphas"],
                        method=METHOD, split="shared"):
    """The validation mean AUC of multi-task MED feature selection over a (C, alpha) grid.

    ``size`` training patients per task; the rest split in half for validation and test,
    by default one split of the patients shared by all tasks
    (:func:`~medmtl.experiments.med_figures.dermatology_split`). Returns the validation
    surface, the validation-chosen (C, alpha), its test MAUC and the validation profiles of
    C and alpha (for the grid-edge counts).

    Parameters
    ----------
    fold : int
        The fold: it seeds the split with ``seed`` and ``size``.
    seed : int, default=0
        The run's seed (``RunOptions.seed``).
    size : int, default=200
        Training patients per task.
    Cs : list of float, default=DCV_GRID["Cs"]
        The grid's values of ``C``.
    alphas : list of float, default=DCV_GRID["alphas"]
        The grid's values of ``alpha``.
    method : str, default=METHOD
        The registered MED solution method.
    split : {"shared", "per-task"}, default="shared"
        The split protocol (:data:`~medmtl.experiments.med_figures.DERMATOLOGY_SPLITS`).

    Returns
    -------
    dict
    """
    from medmtl.experiments.med_figures import dermatology_path

    p = dermatology_path(size, fold, seed, Cs, alphas, method, split)
    scores, iterations, (C, alpha) = p["scores"], p["iterations"], p["chosen"]
    surface = [[scores[(c, a)] for c in sorted(Cs)] for a in sorted(alphas)]
    profiles = {"MED C": {c: max(v for (c2, _), v in scores.items() if c2 == c) for c in sorted(Cs)},
                "MED alpha": {a: max(v for (_, a2), v in scores.items() if a2 == a) for a in sorted(alphas)}}
    return {"surface": surface, "chosen": {"C": C, "alpha": alpha}, "validation": p["validation"],
            "test": mean_auc(p["test"].ys, p["model"].decision_function(p["Xte"])),
            "n_val": int(len(p["val"].ys[0])), "n_test": int(len(p["test"].ys[0])),
            "choices": {"MED C": [C], "MED alpha": [alpha]},
            "profiles": {k: [v] for k, v in profiles.items()},
            "iterations": [[iterations[(c, a)] for c in sorted(Cs)] for a in sorted(alphas)]}


def _dcv_summary(out):
    """The mean validation surface and the test MAUC at the chosen points, with spreads."""
    test = np.array([o["test"] for o in out])
    se = standard_error(test)
    return {"surface_mean": np.mean([o["surface"] for o in out], axis=0).tolist(),
            "chosen": [o["chosen"] for o in out],
            "test_mauc_at_chosen": {"mean": float(test.mean()), "std": float(test.std()), "standard_error": se,
                                    "per_fold": test.tolist()}}


@register(DCV_SPEC)
def dermatology_cv(options=RunOptions(), *, split="shared", compare="per-task"):
    """The lecture's cross-validation surfaces: validation mean AUC over (C, alpha).

    Parameters
    ----------
    options : RunOptions
        How to run (:class:`~medmtl.experiments.runner.RunOptions`).
    split : {"shared", "per-task"}, default="shared"
        The split protocol of the result.
    compare : {"shared", "per-task"} or None, default="per-task"
        A second protocol run on the same folds, summarised in
        ``extra["<protocol>_split_protocol"]`` (None: none).
    """
    from medmtl.experiments.med_figures import DERMATOLOGY_SPLITS
    from medmtl.experiments.selection import grid_edge_counts

    quick, seed = options.quick, options.seed
    config = DCV_SPEC.settings(quick)
    folds, grid = config["folds"], config["grid"]
    protocols = [split] + ([compare] if compare and compare != split else [])
    cells = [{"fold": f, "seed": seed, "size": 200, "method": METHOD, "split": sp, "v": 2, **grid}
             for sp in protocols for f in range(folds)]
    flat = run_grid(CellCall(dermatology_cv_fold), cells, name="dermatology-cv", options=options)
    out = {sp: flat[k * folds:(k + 1) * folds] for k, sp in enumerate(protocols)}
    S = np.array([o["surface"] for o in out[split]])
    alphas, Cs = sorted(grid["alphas"]), sorted(grid["Cs"])
    measured = {f"alpha = {a:g}": S.mean(0)[i].tolist() for i, a in enumerate(alphas)}
    std = {f"alpha = {a:g}": S.std(0)[i].tolist() for i, a in enumerate(alphas)}
    edges = {name: grid_edge_counts([c for o in out[split] for c in o["choices"][name]], values,
                                    [q for o in out[split] for q in o["profiles"][name]])
             for name, values in (("MED C", Cs), ("MED alpha", alphas))}
    result = ExperimentResult(
        "dermatology-cv",
        settings={"data": "UCI Dermatology, 6 one-vs-rest tasks, 34 features scaled to [0, 1]",
                  "protocol": "200 training patients per task, the other 166 split 83 validation / 83 "
                              "test; the surface is the validation mean AUC (never test); the chosen "
                              "point is scored once on test",
                  "split": split, "splits": DERMATOLOGY_SPLITS,
                  "grid": {"Cs": Cs, "alphas": alphas}, "folds": folds, "seed": seed, "quick": quick,
                  **method_settings(METHOD),
                  "model": f"MultiTaskMEDClassifier(selection='features', method={METHOD!r}), "
                           "warm path over alpha per C"},
        x=Cs, measured=measured, measured_std=std, paper={}, xscale="log",
        xlabel="C", ylabel="validation mean AUC over 6 tasks",
        title="Dermatology: validation surface over C and alpha (lecture)",
        extra={**_dcv_summary(out[split]), "grid_edges": edges,
               **{f"{sp.replace('-', '_')}_split_protocol": {"split": DERMATOLOGY_SPLITS[sp], **_dcv_summary(out[sp])}
                  for sp in protocols[1:]},
               "selection": [{"fold": c["fold"], "split": c["split"],
                              **{k: o[k] for k in ("surface", "chosen", "validation", "choices", "profiles")}}
                             for o, c in zip(flat, cells)],
               "iterations": [o["iterations"] for o in out[split]]})
    return result, _dcv_figure(result, S.mean(0))


def _dcv_figure(result, S):
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4.5))
    result.plot(ax=a)
    # the legend beside the curves, never over their error bars
    a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, title="alpha")
    Cs, alphas = result.settings["grid"]["Cs"], result.settings["grid"]["alphas"]
    im = b.imshow(S, origin="lower", aspect="auto", cmap="viridis")
    b.set_xticks(range(len(Cs)), [f"{c:g}" for c in Cs])
    b.set_yticks(range(len(alphas)), [f"{x:g}" for x in alphas])
    b.set_xlabel("C")
    b.set_ylabel("alpha = (1 - rho) / rho")
    b.set_title("validation mean AUC", fontsize=9)
    fig.colorbar(im, ax=b)
    fig.tight_layout()
    return fig


@readme_rows("splice-roc")
def _splice_rows(result):
    s, rows = result.settings, []
    p0 = " / ".join(f"{r:g}" for r in s["rhos"])
    experiment = (f"`splice-roc` (lecture slides): test AUC on DNA splice sites, p0 = {p0}, {s['repetitions']} "
                  f"random splits of 200 training and {s['n_val']} validation examples, seed {s['seed']}")
    for setting in SPLICE_SETTINGS:
        med, svm = result.measured[f"MED, {setting}"], result.measured[f"SVM, {setting}"]
        rows.append(Row(experiment, f"MED feature selection, {setting} (linear SVM)",
                        "C per p0 on validation AUC (the SVM's C on validation AUC); every p0 shown",
                        f"{' / '.join(fmt(v) for v in med)} ({fmt(svm[0])})"))
    return rows


@readme_rows("dermatology-cv")
def _dermatology_cv_rows(result):
    s = result.settings
    experiment = (f"`dermatology-cv` (lecture slides): validation surfaces of multi-task MED feature selection "
                  f"over C and alpha, Dermatology, 200 training patients, {s['folds']} folds, seed {s['seed']}")
    rows = []
    for name, summary in ((s["split"], result.extra),
                          *((k.removesuffix("_split_protocol").replace("_", "-"), v) for k, v in result.extra.items()
                            if k.endswith("_split_protocol"))):
        t = summary["test_mauc_at_chosen"]
        chosen = ", ".join(f"({c['C']:g}, {c['alpha']:g})" for c in summary["chosen"])
        rows.append(Row(experiment, f"multi-task MED feature selection at the chosen (C, alpha), {name} split"
                        + (" (one split of the patients for all tasks)" if name == "shared" else
                           " (the earlier protocol: patients of a test task in other tasks' training sets)"),
                        "(C, alpha) with the best validation MAUC of the surface, per fold",
                        f"test MAUC {fmt(t['mean'])} ± {fmt(t['standard_error'])} (standard error); chosen {chosen}"))
    return rows
