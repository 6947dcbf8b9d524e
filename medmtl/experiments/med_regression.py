"""The lecture notes' regression tables: Boston housing (least squares vs MED feature-selection
regression per switch prior) and NCI60 (one cell line from the others, and meta feature
selection of a shared subset of cell lines against random subsets)."""

from __future__ import annotations

import numpy as np

from medmtl.datasets import load_housing, load_nci60
from medmtl.evaluation import epsilon_insensitive_loss
from medmtl.experiments.leakage import guard_test_labels
from medmtl.experiments.lecture_models import (RHOS, SE_RULE, alphas_of, edges_text, least_squares_fit,
                                               loss_grid_edges, paired_columns, regressor_factory, rho_label,
                                               standard_errors)
from medmtl.experiments.med_method import METHOD, fit_options, method_settings
from medmtl.experiments.preprocessing import minmax_scale_tasks, quadratic_expansion
from medmtl.experiments.registry import register
from medmtl.experiments.report import Row, fmt, fmt_difference, fmt_paired, readme_rows
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.selection import select_per_alpha, warm_path
from medmtl.experiments.spec import Spec
from medmtl.experiments.threads import one_blas_thread

__all__ = ["housing_split", "housing_regression", "nci60_single_line", "nci60_meta_selection", "nci60_regression",
           "HOUSING_PAPER", "HOUSING_ROWS"]


# ---------------------------------------------------------------------------------------------
# Boston housing: epsilon-insensitive test loss, least squares vs MED feature-selection regression.

HOUSING_PAPER = [1.7584, 1.7529, 1.6894, 1.5377, 1.4808]
HOUSING_ROWS = ["least squares"] + [f"MED p0 = {rho_label(r)}" for r in RHOS]
HOUSING_EPSILON = 1.0
HOUSING_SPEC = Spec("housing-regression",
                    "Lecture table: least squares vs MED feature-selection regression, Boston housing",
                    grid={"repetitions": 20, "Cs": [1.0, 10.0, 100.0, 1000.0], "n_train": None},
                    quick={"repetitions": 2, "Cs": [10.0, 100.0], "n_train": 150}, paper={"loss": HOUSING_PAPER})
HOUSING_CS, HOUSING_QUICK_CS = HOUSING_SPEC.grid["Cs"], HOUSING_SPEC.quick["Cs"]


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
        ``"loss"``: the test losses of least squares and of MED at each p0; MED's
        ``"chosen_C"`` and ``"validation_loss"`` per p0, the ``"validation_profile"`` (per
        p0, the validation loss at every C; None with one C), its ``"switches_on"``, and the
        numbers of features and training rows.
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
    alphas = alphas_of(rhos)
    make = regressor_factory(epsilon, method)
    if len(Cs) > 1:
        # validation rows come from the training side only; scaling is re-done on the rest
        inner = rng.permutation(len(tr))
        fit_rows, val_rows = tr[inner[n_val:]], tr[inner[:n_val]]
        Xfit, Xval = _scaled_quadratic(X, fit_rows, val_rows)
        scores, _ = warm_path(make, Cs, alphas, Xfit, y[fit_rows],
                              lambda m: -epsilon_insensitive_loss(y[val_rows], m.predict(Xval), epsilon))
        picks = select_per_alpha(scores, alphas)
        chosen, validation = [C for (C, _), _ in picks], [-v for _, v in picks]
        profile = [[-scores[(C, a)] for C in Cs] for a in alphas]
    else:
        chosen, validation, profile = [Cs[0]] * len(alphas), [None] * len(alphas), None
    n_on = []
    # each C's alphas warm-started in turn, a new C from scratch
    final = med_path(make(chosen[0], alphas[0]), Xtr, y[tr], Cs=chosen, alphas=alphas,
                     warm_start=[k > 0 and chosen[k] == chosen[k - 1] for k in range(len(alphas))])
    for model in final.estimators:
        losses.append(epsilon_insensitive_loss(yte, model.predict(Xte), epsilon))
        n_on.append(int(np.sum(np.asarray(model.switch_posterior_) > 0.5)))
    return {"loss": losses, "chosen_C": chosen, "validation_loss": validation, "validation_profile": profile,
            "switches_on": n_on,
            "n_features": Xtr.shape[1], "n_train": int(len(tr))}


def housing_paired_tests(losses):
    """Paired t-tests over the splits: MED at each p0 against least squares, and against MED
    at the first p0 (the lecture's trend).

    Parameters
    ----------
    losses : array-like of shape (n_splits, 1 + n_p0)
        Per split, the test loss of least squares and of MED at each p0 (:data:`HOUSING_ROWS`).

    Returns
    -------
    dict
        ``{"<row> minus <row>": paired test}`` (a negative difference: the first row's loss
        is lower).
    """
    tests = {f"{HOUSING_ROWS[j]} minus least squares": paired_columns(losses, j, 0)
             for j in range(1, len(HOUSING_ROWS))}
    tests.update({f"{HOUSING_ROWS[j]} minus {HOUSING_ROWS[1]}": paired_columns(losses, j, 1)
                  for j in range(2, len(HOUSING_ROWS))})
    return tests


@register(HOUSING_SPEC)
def housing_regression(options=RunOptions(), *, repetitions=None):
    """The lecture's housing table: mean epsilon-insensitive test loss of least squares and of
    MED feature-selection regression per p0, over ``repetitions`` random splits.

    Parameters
    ----------
    options : RunOptions
        How to run (:class:`~medmtl.experiments.runner.RunOptions`).
    repetitions : int, optional
        Random splits (default: the spec's, 20 or 1 for a quick run).
    """
    quick, seed = options.quick, options.seed
    config = HOUSING_SPEC.settings(quick)
    reps, Cs, n_train = repetitions or config["repetitions"], config["Cs"], config["n_train"]
    cells = [{"rep": r, "seed": seed, "Cs": Cs, "rhos": RHOS, "epsilon": HOUSING_EPSILON,
              "n_train": n_train, "method": METHOD, "v": 4} for r in range(reps)]
    out = run_grid(CellCall(housing_split), cells, name="housing-regression", options=options)
    R = np.array([o["loss"] for o in out])
    key = f"mean of {reps} random splits"
    return ExperimentResult(
        "housing-regression",
        settings={"data": "Boston housing, 13 inputs scaled to [0, 1] on the training rows, explicit "
                          "quadratic expansion (13 + 91 = 104 inputs), target MEDV in $1000s",
                  "protocol": "random 481 train / 25 test splits (quick: 150 of the 481 training rows). "
                              "MED's C is chosen per p0 on 96 held-out training rows, then refitted on all "
                              "training rows",
                  "epsilon": HOUSING_EPSILON, "loss": "mean epsilon-insensitive loss on the 25 test rows",
                  "n_train": n_train or 481, "p0": RHOS, "Cs": Cs, "repetitions": reps, "seed": seed,
                  "quick": quick, **method_settings(METHOD), "error bars": SE_RULE,
                  "model": f"MEDRegressor(selection='features', method={METHOD!r}); least squares with intercept"},
        x=HOUSING_ROWS, measured={key: R.mean(0).tolist()}, measured_std={key: standard_errors(R)},
        paper={key: HOUSING_PAPER},
        xlabel="linear model estimator", ylabel="epsilon-insensitive test loss",
        title="Boston housing: MED feature-selection regression (lecture table)",
        extra={"table": {row: {"lecture": p, "measured": m, "std": sd}
                         for row, p, m, sd in zip(HOUSING_ROWS, HOUSING_PAPER, R.mean(0).tolist(),
                                                  R.std(0).tolist())},
               "per_split_loss": R.tolist(),
               "paired_tests": housing_paired_tests(R),
               "grid_edges": {"MED C (per p0)": loss_grid_edges(out, Cs)},
               "chosen_C": [o["chosen_C"] for o in out], "switches_on": [o["switches_on"] for o in out],
               "selection": [{"rep": c["rep"], "chosen_C": o["chosen_C"], "validation_loss": o["validation_loss"],
                              "validation_profile": o["validation_profile"]} for o, c in zip(out, cells)]})


@readme_rows("housing-regression")
def _housing_readme_rows(result):
    (key,) = result.measured
    # the means and standard errors as the file holds them (those of extra["per_split_loss"]);
    # the paired tests from the per-split losses
    R = np.asarray(result.extra["per_split_loss"], dtype=float)
    loss, se, paper = result.measured[key], result.measured_std[key], result.paper[key]
    s = result.settings
    experiment = (f"`housing-regression` (lecture table): mean epsilon-insensitive test loss (epsilon = "
                  f"{s['epsilon']:g}, lower is better), {s['repetitions']} random 481 / 25 splits, seed {s['seed']} "
                  f"(± standard error over the splits)")
    p0 = " / ".join(f"{r:g}" for r in s["p0"])
    rule = "C per p0 on 96 held-out training rows (validation loss); every p0 shown"
    pm = lambda j: f"{fmt(loss[j], 3)} ± {fmt(se[j], 3)}"  # noqa: E731
    tests = housing_paired_tests(R)
    return [Row(experiment, "least squares", "nothing to choose", pm(0), fmt(paper[0], 3)),
            Row(experiment, f"MED feature selection, p0 = {p0}", rule,
                " / ".join(pm(j) for j in range(1, len(loss))), " / ".join(fmt(v, 3) for v in paper[1:])),
            Row(experiment, f"MED minus least squares (paired t-test over the splits), p0 = {p0}", rule,
                " / ".join(fmt_paired(tests[f"{HOUSING_ROWS[j]} minus least squares"], 3)
                           for j in range(1, len(loss))),
                " / ".join(fmt_difference(v - paper[0], 3) for v in paper[1:]) + " (no test reported)"),
            Row(experiment, "the trend over p0", rule, _p0_trend_text(loss[1:], se[1:], tests),
                f"the loss falls from {fmt(paper[1], 3)} to {fmt(paper[-1], 3)} as p0 falls"),
            Row(experiment, "C on a grid edge", rule, edges_text(result.extra["grid_edges"]))]


def _p0_trend_text(med, se, tests):
    """The differences between the p0 means against their standard errors, in words."""
    gaps = [abs(a - b) for i, a in enumerate(med) for b in med[i + 1:]]
    first = [tests[f"{HOUSING_ROWS[j]} minus {HOUSING_ROWS[1]}"] for j in range(2, len(HOUSING_ROWS))]
    text = (f"the means at different p0 differ by {fmt(min(gaps), 3)} to {fmt(max(gaps), 3)}, against standard "
            f"errors of {fmt(min(se), 3)} to {fmt(max(se), 3)}; paired against {HOUSING_ROWS[1].removeprefix('MED ')}: "
            + " / ".join(fmt_paired(t, 3) for t in first))
    if max(gaps) < min(se) and all(t["p_value"] >= 0.05 for t in first):
        text += ": no difference between p0 values is detected, the lecture's trend is not reproduced"
    return text


# ---------------------------------------------------------------------------------------------
# NCI60: MED regression of one cell line from the others, and meta feature selection of a
# shared subset of cell lines that predicts the rest, against random subsets.

NCI60_EPSILON = 0.1
# C = 0.01, the lower edge of the first grid (0.01-10), was chosen in 15 of 32 (target, p0) cells,
# and 1e-4, the edge of the second, in 10 of 32: the grid reaches 1e-6.
NCI60_CS = [0.000001, 0.00001, 0.0001, 0.001, 0.01, 0.1, 1.0, 10.0]
NCI60_SPEC = Spec(
    "nci60-regression", "Lecture: MED (meta) feature-selection regression on NCI60 vs least squares / random",
    grid={"targets": list(range(0, 64, 8)), "repetitions": 5, "Cs": NCI60_CS,
          "meta": {"n_candidates": 32, "n_tasks": 8, "n_train": 400, "ks": [1, 2, 4, 8, 16]}},
    quick={"targets": [0, 1], "repetitions": 2, "Cs": [0.1, 1.0],
           "meta": {"n_candidates": 16, "n_tasks": 4, "n_train": 100, "ks": [1, 2, 4, 8]}})
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
        ``"loss"``: the test losses of least squares and of MED at each p0, MED's
        ``"chosen_C"`` and ``"validation_loss"`` per p0, the ``"validation_profile"`` (per
        p0, the validation loss at every C) and the number of test genes.
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
    make, alphas = regressor_factory(epsilon, method), alphas_of(rhos)
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
    return {"loss": losses, "chosen_C": chosen, "validation_loss": validation, "n_test": int(len(te)),
            "validation_profile": [[-scores[(C, a)] for C in Cs] for a in alphas]}


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
        Half-width of the insensitive tube of the multi-task regression and of the losses.
    method : str, default=METHOD
        The registered MED solution method of the multi-task regression.

    Returns
    -------
    dict
        The test losses of least squares on MED's top-k lines (``"med"``) and on random
        k-subsets (``"random"``) per k, the switch posteriors, and MED's own test loss.
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
    (alpha,) = alphas_of([rho])
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


@register(NCI60_SPEC)
def nci60_regression(options=RunOptions()):
    """The lecture's NCI60 table (one line from the others) and meta feature selection."""
    quick, seed = options.quick, options.seed
    config = NCI60_SPEC.settings(quick)
    targets, reps, meta, Cs = config["targets"], config["repetitions"], config["meta"], config["Cs"]
    single_cells = [{"target": t, "seed": seed, "Cs": Cs, "rhos": RHOS, "method": METHOD, "v": 3}
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
                  **method_settings(METHOD), "error bars": "standard error of the mean over the repetitions "
                                                           "(meta) or the target lines (one line from the others)"},
        x=ks, measured={"MED meta feature selection": med.mean(0).tolist(), "random selection": rand.mean(0).tolist()},
        measured_std={"MED meta feature selection": standard_errors(med), "random selection": standard_errors(rand)},
        paper={"MED meta feature selection": [None] * len(ks), "random selection": [None] * len(ks)},
        xlabel="cell lines selected (shared by all target lines)",
        ylabel="mean epsilon-insensitive test loss",
        title="NCI60: meta feature-selection regression vs random selection",
        extra={"single_line_table": {r: {"mean": float(m), "std": float(s), "se": e} for r, m, s, e in
                                     zip(HOUSING_ROWS, single.mean(0), single.std(0), standard_errors(single))},
               "single_line_loss": single.tolist(), "meta_loss": {"med": med.tolist(), "random": rand.tolist()},
               "paired_tests": {"single_line": {f"{HOUSING_ROWS[j]} minus least squares": paired_columns(single, j, 0)
                                                for j in range(1, single.shape[1])},
                                "meta_med_minus_random": [paired_columns(np.c_[med[:, i], rand[:, i]], 0, 1)
                                                          for i in range(len(ks))]},
               "grid_edges": {"MED C (per target line and p0)": loss_grid_edges(singles, Cs)},
               "single_line_ratio_least_squares_over_med_p0_1e-5": float(single[:, 0].mean() / single[:, -1].mean()),
               "lecture_single_line_table": NCI60_LECTURE,
               "lecture_ratio": NCI60_LECTURE["least squares"] / NCI60_LECTURE["MED p0 = 1e-05"],
               "lecture_note": "the lecture's cancer data (D. Ross, 67 lines, 3951 test genes) differs from the "
                               "bundled NCI60; compare the ratio, not the losses",
               "selection": {"single_line": [{"target": c["target"], "chosen_C": o["chosen_C"],
                                              "validation_loss": o["validation_loss"],
                                              "validation_profile": o["validation_profile"]}
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


def _lowest_gap_text(records, Cs):
    """Where C sits on the grid's lowest value, how far its validation loss is below the next
    value's: a gap near zero says the loss has reached its limit as C goes to 0."""
    gaps = [row[1] - row[0] for r in records for C, row in zip(r["chosen_C"], r["validation_profile"]) if C == Cs[0]]
    if not gaps:
        return ""
    return (f"; at the lowest C the validation loss is {fmt(min(gaps), 5)} to {fmt(max(gaps), 5)} below that at "
            f"C = {Cs[1]:g}")


@readme_rows("nci60-regression")
def _nci60_rows(result):
    s = result.settings
    experiment = (f"`nci60-regression` (lecture table): mean epsilon-insensitive test loss (epsilon = "
                  f"{s['epsilon']:g}, lower is better), NCI60, seed {s['seed']}")
    ks = " / ".join(str(k) for k in result.x)
    single = np.asarray(result.extra["single_line_loss"], dtype=float)
    med, rand = (np.asarray(result.extra["meta_loss"][k], dtype=float) for k in ("med", "random"))
    pm = lambda m, e: f"{fmt(m, 3)} ± {fmt(e, 3)}"  # noqa: E731
    tests = result.extra["paired_tests"]
    rule = "MED: C per p0 on 200 validation genes; every p0 shown"
    return [
        Row(experiment, f"one cell line from the other 63, {len(s['targets'])} target lines: least squares; MED, "
                        f"p0 = {' / '.join(f'{r:g}' for r in s['p0'])} (± standard error over the target lines)",
            rule, " / ".join(pm(m, e) for m, e in zip(single.mean(0), standard_errors(single)))),
        Row(experiment, "MED minus least squares, paired over the target lines, per p0", rule,
            " / ".join(fmt_paired(t, 3) for t in tests["single_line"].values())),
        Row(experiment, "C on a grid edge", rule, edges_text(result.extra["grid_edges"]) + _lowest_gap_text(
            result.extra["selection"]["single_line"], s["Cs"])),
        Row(experiment, "ratio least squares / MED p0 = 1e-05", "as above",
            f"{result.extra['single_line_ratio_least_squares_over_med_p0_1e-5']:.2f}",
            f"{result.extra['lecture_ratio']:.2f} (the lecture's data: 67 lines, not the bundled NCI60)"),
        Row(experiment, f"least squares on k = {ks} lines chosen by multi-task MED (vs k random lines), "
                        f"{s['repetitions']} random task splits",
            "nothing to choose (C = 1, rho = 1e-3 fixed); lines ranked by switch posterior",
            " / ".join(pm(m, e) for m, e in zip(med.mean(0), standard_errors(med)))
            + " (" + " / ".join(pm(m, e) for m, e in zip(rand.mean(0), standard_errors(rand))) + ")"),
        Row(experiment, f"MED's top-k lines minus random k lines, paired over the {s['repetitions']} task splits, "
                        f"k = {ks}", "as above", " / ".join(fmt_paired(t, 3) for t in tests["meta_med_minus_random"])),
    ]
