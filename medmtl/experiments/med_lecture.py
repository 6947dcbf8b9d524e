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

from medmtl.datasets import load_housing, load_nci60, load_splice
from medmtl.evaluation import epsilon_insensitive_loss, mean_auc
from medmtl.experiments.leakage import guard_test_labels
from medmtl.experiments.med_method import METHOD, fit_options, solver_settings
from medmtl.experiments.preprocessing import minmax_scale_tasks, quadratic_expansion
from medmtl.experiments.registry import register
from medmtl.experiments.report import Row, fmt, readme_rows
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.selection import select_per_alpha, warm_path
from medmtl.experiments.svm_baselines import independent_svm_scores
from medmtl.experiments.threads import one_blas_thread

__all__ = ["linear_coefficients", "least_squares_fit", "splice_features", "splice_split", "housing_split",
           "nci60_single_line", "nci60_meta_selection", "dermatology_cv_fold", "splice_roc",
           "housing_regression", "nci60_regression", "dermatology_cv"]

RHOS = [0.99999, 0.1, 0.001, 0.00001]  # the lecture's p0 / rho values


def _label(rho):
    return f"{rho:g}"


def _alphas(rhos):
    # imported here: medmtl.med is slow to import, and `medmtl reproduce --list` needs none of it
    from medmtl.med.bound import alpha_from_rho

    return [alpha_from_rho(r) for r in rhos]


def linear_coefficients(model, n_features):
    """The posterior-mean weights ``E[s_i theta_i]`` of a fitted linear model, read off
    its decision function: ``w_i = f(e_i) - f(0)``.

    Works for any fitted linear model with ``decision_function`` or ``predict``, so it does
    not depend on how an estimator stores its weights.

    Parameters
    ----------
    model : estimator
        A fitted linear model with ``decision_function`` or ``predict``.
    n_features : int
        Number of input features of the model.

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> m = LinearRegression().fit(np.array([[0.0, 0], [1, 0], [0, 1]]), [1.0, 3.0, 0.0])
    >>> np.round(linear_coefficients(m, 2), 6).tolist()
    [2.0, -1.0]
    """
    f = getattr(model, "decision_function", None) or model.predict
    Z = np.vstack([np.zeros((1, n_features)), np.eye(n_features)])
    v = np.asarray(f(Z), dtype=float).ravel()
    return v[1:] - v[0]


def least_squares_fit(X, y):
    """Least squares with an intercept (minimum-norm when under-determined).

    Returns a function ``predict(X)``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training inputs.
    y : ndarray of shape (n_samples,)
        Training targets.

    Returns
    -------
    callable

    Examples
    --------
    >>> predict = least_squares_fit(np.array([[0.0], [1.0], [2.0]]), np.array([1.0, 3.0, 5.0]))
    >>> predict(np.array([[3.0]])).round(6).tolist()
    [7.0]
    """
    A = np.hstack([X, np.ones((X.shape[0], 1))])
    w, *_ = np.linalg.lstsq(A, y, rcond=None)
    return lambda Z: np.hstack([Z, np.ones((Z.shape[0], 1))]) @ w


def _regressor_factory(epsilon, method):
    """``make(C, alpha)``: a warm-started MED feature-selection regressor."""
    from medmtl.med import MEDRegressor

    def make(C, alpha):
        return MEDRegressor(selection="features", C=C, alpha=alpha, epsilon=epsilon, warm_start=True,
                            **fit_options(method))

    return make


# ---------------------------------------------------------------------------------------------
# Splice: ROC curves of MED feature selection at several rho; CDF of linear coefficients.

SPLICE_SETTINGS = {"100 features": (25, False), "100 features, quadratic": (25, True),
                   "240 features": (None, False)}
SPLICE_CS = [0.01, 0.1, 1.0, 10.0]
SPLICE_QUICK_CS = [1.0]


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

    alphas = _alphas(rhos)
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


@register("splice-roc", "Lecture: ROC of MED feature selection at several rho on DNA splice sites (+ CDF of weights)")
def splice_roc(options=RunOptions()):
    """The lecture's splice ROC slides: test AUC per rho, ROC curves and coefficient CDFs.

    Parameters
    ----------
    options : RunOptions, optional
        Quick or full run, seed, workers and cache (default: ``RunOptions()``, the full run in
        one local process).
    """
    quick, seed = options.quick, options.seed
    reps = 1 if quick else 5
    Cs = SPLICE_QUICK_CS if quick else SPLICE_CS
    settings = list(SPLICE_SETTINGS)
    n_val = 300 if quick else 500
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
                  "n_val": n_val, "rhos": RHOS, "alphas": _alphas(RHOS), "Cs": Cs,
                  "repetitions": reps, "seed": seed, "quick": quick, **solver_settings(METHOD),
                  "model": f"MEDClassifier(selection='features', method={METHOD!r}); SVM: libsvm linear"},
        x=RHOS, measured=measured, measured_std=std, paper=paper, xscale="log",
        xlabel="rho (prior probability of a switch being on)", ylabel="test AUC",
        title="Splice: MED feature selection across rho (lecture ROC slides)",
        extra={"n_test": first["100 features"]["n_test"],
               "chosen_C": {c["setting"] + f" rep {c['rep']}": o["chosen_C"] for o, c in zip(out, cells)},
               "selection": [{"setting": c["setting"], "rep": c["rep"],
                              **{k: o[k] for k in ("chosen_C", "validation_auc", "svm_C", "svm_validation_auc")}}
                             for o, c in zip(out, cells)],
               "coefficients_100_features": {_label(r): coef[k] for k, r in enumerate(RHOS)},
               "fraction_of_coefficients_below_1e-3": {
                   _label(r): float(np.mean(np.abs(coef[k]) < 1e-3)) for k, r in enumerate(RHOS)}})
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
                    label=f"MED rho = {_label(rho)} (AUC {o['auc'][k]:.3f})")
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
            ax.plot(c, np.arange(1, c.size + 1) / c.size, label=f"rho = {_label(rho)}")
        ax.set_xscale("symlog", linthresh=1e-4)
        ax.set_xlabel("|linear coefficient| E[s_i theta_i]")
        ax.set_ylabel("fraction of the 100 coefficients")
        ax.set_title("CDF of linear coefficients, 100 features", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------
# Boston housing: epsilon-insensitive test loss, least squares vs MED feature-selection regression.

HOUSING_PAPER = [1.7584, 1.7529, 1.6894, 1.5377, 1.4808]
HOUSING_ROWS = ["least squares"] + [f"MED p0 = {_label(r)}" for r in RHOS]
HOUSING_EPSILON = 1.0
HOUSING_CS = [1.0, 10.0, 100.0, 1000.0]
HOUSING_QUICK_CS = [100.0]


def _scaled_quadratic(X, rows, other_rows):
    """Inputs scaled into [0, 1] on ``rows`` and expanded to degree 2, for both row sets."""
    (A,), (B,) = minmax_scale_tasks([X[rows]], [X[other_rows]])
    return quadratic_expansion(A), quadratic_expansion(B)


@one_blas_thread
def housing_split(rep, seed=0, Cs=HOUSING_CS, rhos=RHOS, epsilon=HOUSING_EPSILON, n_test=25,
                  n_val=96, n_train=None, method=METHOD):
    """One random 481 / 25 split of Boston housing.

    Inputs are scaled into [0, 1] on the training rows and expanded to all degree-2
    monomials (104 inputs). Least squares and MED feature-selection regression at every p0
    are scored by the mean epsilon-insensitive loss on the test rows. With several ``Cs``,
    MED's C is chosen per p0 on ``n_val`` training rows held out (a warm path over p0 per
    C) and the model is refitted on all training rows; with one C there is no selection (and
    no validation loss).
    ``n_train`` (quick mode) keeps only that many of the training rows.

    Parameters
    ----------
    rep : int
        The split's repetition number: it seeds the split with ``seed``.
    seed : int, default=0
        The run's seed (``RunOptions.seed``).
    Cs : list of float, default=HOUSING_CS
        MED's values of ``C``; a single value is used without selection.
    rhos : list of float, default=RHOS
        The switch priors ``p0`` (``rho``), one MED model each.
    epsilon : float, default=HOUSING_EPSILON
        Half-width of the insensitive tube, of MED's regression and of the test loss.
    n_test : int, default=25
        Test rows.
    n_val : int, default=96
        Training rows held out to choose C (with several ``Cs``).
    n_train : int, optional
        Keep only this many training rows (all if None).
    method : str, default=METHOD
        The registered MED solution method.

    Returns
    -------
    dict
    """
    from medmtl.med import med_path

    ds = load_housing()
    X, y = ds[0].X, ds[0].y
    n = len(y)
    rng = np.random.default_rng([seed, rep])
    order = rng.permutation(n)
    tr, te = order[: n - n_test], order[n - n_test:]
    if n_train is not None:
        tr = tr[:n_train]
    Xtr, Xte = _scaled_quadratic(X, tr, te)
    yte = guard_test_labels(y[te])
    losses = [epsilon_insensitive_loss(yte, least_squares_fit(Xtr, y[tr])(Xte), epsilon)]
    alphas = _alphas(rhos)
    make = _regressor_factory(epsilon, method)
    if len(Cs) > 1:
        # validation rows come from the training side only; scaling is re-done on the rest
        inner = rng.permutation(len(tr))
        fit_rows, val_rows = tr[inner[n_val:]], tr[inner[:n_val]]
        Xfit, Xval = _scaled_quadratic(X, fit_rows, val_rows)
        scores, _ = warm_path(make, Cs, alphas, Xfit, y[fit_rows],
                              lambda m: -epsilon_insensitive_loss(y[val_rows], m.predict(Xval), epsilon))
        picks = select_per_alpha(scores, alphas)
        chosen, validation = [C for (C, _), _ in picks], [-v for _, v in picks]
    else:
        chosen, validation = [Cs[0]] * len(alphas), [None] * len(alphas)
    n_on = []
    # each C's alphas warm-started in turn, a new C from scratch
    final = med_path(make(chosen[0], alphas[0]), Xtr, y[tr], Cs=chosen, alphas=alphas,
                     warm_start=[k > 0 and chosen[k] == chosen[k - 1] for k in range(len(alphas))])
    for model in final.estimators:
        losses.append(epsilon_insensitive_loss(yte, model.predict(Xte), epsilon))
        n_on.append(int(np.sum(np.asarray(model.switch_posterior_) > 0.5)))
    return {"loss": losses, "chosen_C": chosen, "validation_loss": validation, "switches_on": n_on,
            "n_features": Xtr.shape[1], "n_train": int(len(tr))}


@register("housing-regression", "Lecture table: least squares vs MED feature-selection regression, Boston housing")
def housing_regression(options=RunOptions(), *, repetitions=None):
    """The lecture's housing table: mean epsilon-insensitive test loss of least squares and of
    MED feature-selection regression per p0, over ``repetitions`` random splits.

    Parameters
    ----------
    options : RunOptions, optional
        Quick or full run, seed, workers and cache (default: ``RunOptions()``, the full run in
        one local process).
    repetitions : int, optional
        Random splits (the run's own, 20 or 1 for a quick run, if None).
    """
    quick, seed = options.quick, options.seed
    reps = repetitions or (1 if quick else 20)
    Cs = HOUSING_QUICK_CS if quick else HOUSING_CS
    n_train = 150 if quick else None
    cells = [{"rep": r, "seed": seed, "Cs": Cs, "rhos": RHOS, "epsilon": HOUSING_EPSILON,
              "n_train": n_train, "method": METHOD, "v": 3} for r in range(reps)]
    out = run_grid(CellCall(housing_split), cells, name="housing-regression", options=options)
    R = np.array([o["loss"] for o in out])
    key = f"mean of {reps} random splits"
    return ExperimentResult(
        "housing-regression",
        settings={"data": "Boston housing, 13 inputs scaled to [0, 1] on the training rows, explicit "
                          "quadratic expansion (13 + 91 = 104 inputs), target MEDV in $1000s",
                  "protocol": "random 481 train / 25 test splits (quick: 150 of the 481 training rows, one C). "
                              "MED's C is chosen per p0 on 96 held-out training rows, then refitted on all "
                              "training rows",
                  "epsilon": HOUSING_EPSILON, "loss": "mean epsilon-insensitive loss on the 25 test rows",
                  "n_train": n_train or 481, "p0": RHOS, "Cs": Cs, "repetitions": reps, "seed": seed,
                  "quick": quick, **solver_settings(METHOD),
                  "model": f"MEDRegressor(selection='features', method={METHOD!r}); least squares with intercept"},
        x=HOUSING_ROWS, measured={key: R.mean(0).tolist()}, measured_std={key: R.std(0).tolist()},
        paper={key: HOUSING_PAPER},
        xlabel="linear model estimator", ylabel="epsilon-insensitive test loss",
        title="Boston housing: MED feature-selection regression (lecture table)",
        extra={"table": {row: {"lecture": p, "measured": m, "std": sd}
                         for row, p, m, sd in zip(HOUSING_ROWS, HOUSING_PAPER, R.mean(0).tolist(),
                                                  R.std(0).tolist())},
               "per_split_loss": R.tolist(),
               "chosen_C": [o["chosen_C"] for o in out], "switches_on": [o["switches_on"] for o in out],
               "selection": [{"rep": c["rep"], "chosen_C": o["chosen_C"], "validation_loss": o["validation_loss"]}
                             for o, c in zip(out, cells)]})


@readme_rows("housing-regression")
def _housing_readme_rows(result):
    (key,) = result.measured
    loss, paper = result.measured[key], result.paper[key]
    s = result.settings
    experiment = (f"`housing-regression` (lecture table): mean epsilon-insensitive test loss (epsilon = "
                  f"{s['epsilon']:g}, lower is better), {s['repetitions']} random 481 / 25 splits, seed {s['seed']}")
    p0 = " / ".join(f"{r:g}" for r in s["p0"])
    return [Row(experiment, "least squares", "nothing to choose", fmt(loss[0], 3), fmt(paper[0], 3)),
            Row(experiment, f"MED feature selection, p0 = {p0}",
                "C per p0 on 96 held-out training rows (validation loss); every p0 shown",
                " / ".join(fmt(v, 3) for v in loss[1:]), " / ".join(fmt(v, 3) for v in paper[1:]))]


# ---------------------------------------------------------------------------------------------
# NCI60: MED regression of one cell line from the others, and meta feature selection of a
# shared subset of cell lines that predicts the rest, against random subsets.

NCI60_EPSILON = 0.1
NCI60_CS = [0.01, 0.1, 1.0, 10.0]
NCI60_LECTURE = {"least squares": 3609.0, "MED p0 = 1e-05": 1673.4}  # D. Ross data: 67 lines, 3951 test genes


@one_blas_thread
def nci60_single_line(target, seed=0, n_train=50, n_val=200, Cs=NCI60_CS, rhos=RHOS,
                      epsilon=NCI60_EPSILON, method=METHOD):
    """Predict cell line ``target``'s expression of a gene from the other 63 lines.

    Genes are the examples: ``n_train`` random genes train, ``n_val`` choose C per p0, and
    all the others test. Returns the mean epsilon-insensitive test loss of least squares
    (minimum norm: 63 inputs, 50 examples) and of MED feature-selection regression per p0,
    and MED's chosen C and validation loss per p0.

    Parameters
    ----------
    target : int
        The cell line (column) predicted, 0 to 63.
    seed : int, default=0
        The run's seed (``RunOptions.seed``).
    n_train : int, default=50
        Training genes.
    n_val : int, default=200
        Validation genes, to choose C per p0.
    Cs : list of float, default=NCI60_CS
        MED's values of ``C``.
    rhos : list of float, default=RHOS
        The switch priors ``p0`` (``rho``), one MED model each.
    epsilon : float, default=NCI60_EPSILON
        Half-width of the insensitive tube, of MED's regression and of the test loss.
    method : str, default=METHOD
        The registered MED solution method.

    Returns
    -------
    dict
    """
    from medmtl.med import med_path

    X, _ = load_nci60()
    E = X.T  # genes x cell lines
    y = E[:, target]
    F = np.delete(E, target, axis=1)
    rng = np.random.default_rng([seed, target])
    order = rng.permutation(len(y))
    tr, va, te = order[:n_train], order[n_train:n_train + n_val], order[n_train + n_val:]
    yte = guard_test_labels(y[te])
    losses = [epsilon_insensitive_loss(yte, least_squares_fit(F[tr], y[tr])(F[te]), epsilon)]
    make, alphas = _regressor_factory(epsilon, method), _alphas(rhos)
    scores, _ = warm_path(make, Cs, alphas, F[tr], y[tr],
                          lambda m: -epsilon_insensitive_loss(y[va], m.predict(F[va]), epsilon))
    chosen, validation = [], []
    picks = select_per_alpha(scores, alphas)
    final = med_path(make(*picks[0][0]), F[tr], y[tr], Cs=[C for (C, _), _ in picks],
                     alphas=[alpha for (_, alpha), _ in picks], warm_start=False)
    for ((C, alpha), v), model in zip(picks, final.estimators):
        losses.append(epsilon_insensitive_loss(yte, model.predict(F[te]), epsilon))
        chosen.append(C)
        validation.append(-v)
    return {"loss": losses, "chosen_C": chosen, "validation_loss": validation, "n_test": int(len(te))}


@one_blas_thread
def nci60_meta_selection(rep, seed=0, n_candidates=32, n_tasks=8, n_train=200, C=1.0, rho=1e-3,
                         ks=(1, 2, 4, 8, 16), n_random=20, epsilon=NCI60_EPSILON, method=METHOD):
    """Choose a shared subset of cell lines that predicts other cell lines (meta selection).

    The 64 lines are split at random into ``n_candidates`` candidate inputs and
    ``n_tasks`` target lines (one regression task each); genes are the examples
    (``n_train`` train, the rest test). Multi-task MED feature-selection regression ranks
    the candidates by their shared switch posterior; each target is then fitted by least
    squares on the top ``k`` lines, and on ``n_random`` random ``k``-subsets for comparison.
    Returns the mean epsilon-insensitive test loss over targets for each ``k``.

    Parameters
    ----------
    rep : int
        The repetition number: it seeds the split of lines and genes with ``seed``.
    seed : int, default=0
        The run's seed (``RunOptions.seed``).
    n_candidates : int, default=32
        Cell lines drawn as candidate inputs.
    n_tasks : int, default=8
        Cell lines drawn as targets, one regression task each.
    n_train : int, default=200
        Training genes.
    C : float, default=1.0
        MED's upper bound on the multipliers.
    rho : float, default=1e-3
        MED's switch prior ``p0``.
    ks : sequence of int, default=(1, 2, 4, 8, 16)
        The subset sizes ``k`` compared.
    n_random : int, default=20
        Random ``k``-subsets per ``k``.
    epsilon : float, default=NCI60_EPSILON
        Half-width of the insensitive tube, of MED's regression and of the test loss.
    method : str, default=METHOD
        The registered MED solution method.

    Returns
    -------
    dict
    """
    from medmtl.med import MultiTaskMEDRegressor

    X, _ = load_nci60()
    E = X.T
    rng = np.random.default_rng([seed, rep])
    lines = rng.permutation(E.shape[1])
    cand, targets = lines[:n_candidates], lines[n_candidates:n_candidates + n_tasks]
    genes = rng.permutation(E.shape[0])
    tr, te = genes[:n_train], genes[n_train:]
    test_targets = {t: guard_test_labels(E[te, t]) for t in targets}
    Xs = [E[tr][:, cand]] * n_tasks
    ys = [E[tr, t] for t in targets]
    (alpha,) = _alphas([rho])
    model = MultiTaskMEDRegressor(selection="features", C=C, alpha=alpha,
                                  epsilon=epsilon, **fit_options(method)).fit(Xs, ys)
    s = np.asarray(model.switch_posterior_, dtype=float)
    ranking = np.argsort(-s, kind="stable")

    def loss_with(cols):
        return float(np.mean([epsilon_insensitive_loss(
            test_targets[t], least_squares_fit(E[tr][:, cand[cols]], E[tr, t])(E[te][:, cand[cols]]), epsilon)
            for t in targets]))

    med, rand = [], []
    for k in ks:
        med.append(loss_with(ranking[:k]))
        rand.append(float(np.mean([loss_with(rng.choice(n_candidates, k, replace=False))
                                   for _ in range(n_random)])))
    return {"med": med, "random": rand, "switch_posterior": s.tolist(),
            "med_own_loss": float(np.mean([epsilon_insensitive_loss(test_targets[t], p, epsilon) for t, p in
                                           zip(targets, model.predict([E[te][:, cand]] * n_tasks))]))}


@register("nci60-regression", "Lecture: MED (meta) feature-selection regression on NCI60 vs least squares / random")
def nci60_regression(options=RunOptions()):
    """The lecture's NCI60 table (one line from the others) and meta feature selection.

    Parameters
    ----------
    options : RunOptions, optional
        Quick or full run, seed, workers and cache (default: ``RunOptions()``, the full run in
        one local process).
    """
    quick, seed = options.quick, options.seed
    targets = [0, 1] if quick else list(range(0, 64, 8))
    reps = 1 if quick else 5
    meta = {"n_candidates": 16 if quick else 32, "n_tasks": 4 if quick else 8,
            "n_train": 100 if quick else 400, "ks": [1, 2, 4, 8] if quick else [1, 2, 4, 8, 16]}
    Cs = [0.1, 1.0] if quick else NCI60_CS
    single_cells = [{"target": t, "seed": seed, "Cs": Cs, "rhos": RHOS, "method": METHOD, "v": 2}
                    for t in targets]
    meta_cells = [{"rep": r, "seed": seed, "method": METHOD, "v": 1, **meta} for r in range(reps)]
    singles = run_grid(CellCall(nci60_single_line), single_cells, name="nci60-regression", options=options)
    single = np.array([o["loss"] for o in singles])
    metas = run_grid(CellCall(nci60_meta_selection), meta_cells, name="nci60-regression", options=options)
    med = np.array([o["med"] for o in metas])
    rand = np.array([o["random"] for o in metas])
    ks = meta["ks"]
    result = ExperimentResult(
        "nci60-regression",
        settings={"data": "NCI60, 64 cell-line samples x 6830 genes; genes are the examples",
                  "single_line": "each target line predicted from the other 63 lines; 50 random training "
                                 "genes, 200 validation genes (C per p0), all other genes test",
                  "meta": "lines split at random into candidate inputs and target lines (tasks); "
                          "MultiTaskMEDRegressor(selection='features', C=1, rho=1e-3) ranks candidates by "
                          "switch posterior; least squares on the top-k vs random k-subsets (20 draws)",
                  "epsilon": NCI60_EPSILON, "p0": RHOS, "Cs": Cs, "targets": targets, "repetitions": reps,
                  "seed": seed, "quick": quick, **{f"meta_{k}": v for k, v in meta.items()},
                  **solver_settings(METHOD)},
        x=ks, measured={"MED meta feature selection": med.mean(0).tolist(), "random selection": rand.mean(0).tolist()},
        measured_std={"MED meta feature selection": med.std(0).tolist(), "random selection": rand.std(0).tolist()},
        paper={"MED meta feature selection": [None] * len(ks), "random selection": [None] * len(ks)},
        xlabel="cell lines selected (shared by all target lines)",
        ylabel="mean epsilon-insensitive test loss",
        title="NCI60: meta feature-selection regression vs random selection",
        extra={"single_line_table": {r: {"mean": float(m), "std": float(s)}
                                     for r, m, s in zip(HOUSING_ROWS, single.mean(0), single.std(0))},
               "single_line_ratio_least_squares_over_med_p0_1e-5": float(single[:, 0].mean() / single[:, -1].mean()),
               "lecture_single_line_table": NCI60_LECTURE,
               "lecture_ratio": NCI60_LECTURE["least squares"] / NCI60_LECTURE["MED p0 = 1e-05"],
               "lecture_note": "the lecture's cancer data (D. Ross, 67 lines, 3951 test genes) differs from the "
                               "bundled NCI60; compare the ratio, not the losses",
               "selection": {"single_line": [{"target": c["target"], "chosen_C": o["chosen_C"],
                                              "validation_loss": o["validation_loss"]}
                                             for o, c in zip(singles, single_cells)],
                             "meta_switch_posterior": [o["switch_posterior"] for o in metas]},
               "meta_med_own_loss": [o["med_own_loss"] for o in metas],
               "meta_switch_posterior": [o["switch_posterior"] for o in metas]})
    return result, _nci60_figure(result)


def _nci60_figure(result):
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    result.plot(ax=a)
    t = result.extra["single_line_table"]
    rows = list(t)
    vals = [t[r]["mean"] for r in rows]
    errs = [t[r]["std"] for r in rows]
    b.bar(range(len(rows)), vals, yerr=errs, capsize=3, color=["C7"] + ["C0"] * (len(rows) - 1))
    b.set_xticks(range(len(rows)), rows, rotation=30, ha="right")
    b.set_yscale("log")
    b.set_ylabel("epsilon-insensitive test loss")
    b.set_title("one cell line from the other 63 (50 training genes)", fontsize=9)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------
# Dermatology cross-validation surfaces over C and alpha (rho).

DCV_GRID = {"Cs": [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0],
            "alphas": [0.0, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]}
DCV_QUICK_GRID = {"Cs": [0.1, 1.0, 10.0], "alphas": [0.0, 10.0, 1000.0]}


@one_blas_thread
def dermatology_cv_fold(fold, seed=0, size=200, Cs=DCV_GRID["Cs"], alphas=DCV_GRID["alphas"],
                        method=METHOD):
    """The validation mean AUC of multi-task MED feature selection over a (C, alpha) grid.

    ``size`` training patients per task; the rest split in half for validation and test.
    Returns the validation surface, the validation-chosen (C, alpha) and its test MAUC.

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

    Returns
    -------
    dict
    """
    from medmtl.experiments.med_figures import dermatology_path

    p = dermatology_path(size, fold, seed, Cs, alphas, method)
    scores, iterations, (C, alpha) = p["scores"], p["iterations"], p["chosen"]
    surface = [[scores[(c, a)] for c in sorted(Cs)] for a in sorted(alphas)]
    return {"surface": surface, "chosen": {"C": C, "alpha": alpha}, "validation": p["validation"],
            "test": mean_auc(p["test"].ys, p["model"].decision_function(p["Xte"])),
            "n_val": int(len(p["val"].ys[0])), "n_test": int(len(p["test"].ys[0])),
            "iterations": [[iterations[(c, a)] for c in sorted(Cs)] for a in sorted(alphas)]}


@register("dermatology-cv", "Lecture: validation surfaces of multi-task MED feature selection over C, alpha")
def dermatology_cv(options=RunOptions()):
    """The lecture's cross-validation surfaces: validation mean AUC over (C, alpha).

    Parameters
    ----------
    options : RunOptions, optional
        Quick or full run, seed, workers and cache (default: ``RunOptions()``, the full run in
        one local process).
    """
    quick, seed = options.quick, options.seed
    folds = 1 if quick else 5
    grid = DCV_QUICK_GRID if quick else DCV_GRID
    cells = [{"fold": f, "seed": seed, "size": 200, "method": METHOD, "v": 1, **grid} for f in range(folds)]
    out = run_grid(CellCall(dermatology_cv_fold), cells, name="dermatology-cv", options=options)
    S = np.array([o["surface"] for o in out])
    alphas, Cs = sorted(grid["alphas"]), sorted(grid["Cs"])
    measured = {f"alpha = {a:g}": S.mean(0)[i].tolist() for i, a in enumerate(alphas)}
    std = {f"alpha = {a:g}": S.std(0)[i].tolist() for i, a in enumerate(alphas)}
    test = np.array([o["test"] for o in out])
    result = ExperimentResult(
        "dermatology-cv",
        settings={"data": "UCI Dermatology, 6 one-vs-rest tasks, 34 features scaled to [0, 1]",
                  "protocol": "200 training patients per task, the other 166 split 83 validation / 83 "
                              "test; the surface is the validation mean AUC (never test); the chosen "
                              "point is scored once on test",
                  "grid": {"Cs": Cs, "alphas": alphas}, "folds": folds, "seed": seed, "quick": quick,
                  **solver_settings(METHOD),
                  "model": f"MultiTaskMEDClassifier(selection='features', method={METHOD!r}), "
                           "warm path over alpha per C"},
        x=Cs, measured=measured, measured_std=std, paper={}, xscale="log",
        xlabel="C", ylabel="validation mean AUC over 6 tasks",
        title="Dermatology: validation surface over C and alpha (lecture)",
        extra={"surface_mean": S.mean(0).tolist(), "chosen": [o["chosen"] for o in out],
               "selection": [{"fold": c["fold"], **{k: o[k] for k in ("surface", "chosen", "validation")}}
                             for o, c in zip(out, cells)],
               "test_mauc_at_chosen": {"mean": float(test.mean()), "std": float(test.std()),
                                       "per_fold": test.tolist()},
               "iterations": [o["iterations"] for o in out]})
    return result, _dcv_figure(result, S.mean(0))


def _dcv_figure(result, S):
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    result.plot(ax=a)
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
