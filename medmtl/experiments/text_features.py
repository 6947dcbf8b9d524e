"""Feature selection on text: test AUC against the number of selected features, and fit time.

The bundled text data sets, as tf-idf features built on each split's training documents:

* three **20 Newsgroups pairs** (one binary task each; the bydate train split gives the
  training and validation posts, the bydate test split the test posts; headers removed);
* the **15 spam users** of ECML/PKDD 2006 task B (15 tasks, one per inbox);
* the **4 sentiment domains** of Blitzer et al. (4 tasks, one per domain).

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

import contextlib
import functools
import time
import warnings

import numpy as np
import scipy.sparse as sp

from medmtl.evaluation import mean_auc, paired_t_test
from medmtl.experiments.leakage import guard_test_labels
from medmtl.experiments.med_method import METHOD, fit_options, solver_settings
from medmtl.experiments.registry import register
from medmtl.experiments.report import Row, fmt, fmt_paired, readme_rows
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid
from medmtl.experiments.svm_baselines import l1_logistic_regression
from medmtl.experiments.threads import one_blas_thread

__all__ = ["NEWSGROUP_PAIRS", "DATA_SETS", "QUICK_DATA_SETS", "METHODS", "text_split", "tfidf_features", "method_sweep",
           "budget_choice", "text_feature_cell", "text_feature_selection"]

NAME = "text-feature-selection"

# label -> (positive newsgroup, negative newsgroup); chosen before any run: a pair of sport
# groups, the classic pair of PC hardware groups, and the classic pair of religion groups.
NEWSGROUP_PAIRS = {
    "baseball vs hockey": ("rec.sport.baseball", "rec.sport.hockey"),
    "ibm vs mac": ("comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware"),
    "atheism vs christian": ("alt.atheism", "soc.religion.christian"),
}
MULTITASK_SETS = ("spam", "sentiment")
DATA_SETS = (*NEWSGROUP_PAIRS, *MULTITASK_SETS)
QUICK_DATA_SETS = ("baseball vs hockey", *MULTITASK_SETS)
DATA_TITLES = {**{k: f"20 Newsgroups: {k}" for k in NEWSGROUP_PAIRS},
               "spam": "spam, 15 users (15 tasks)", "sentiment": "sentiment, 4 domains (4 tasks)"}

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

# Training documents per task for fitting, for validation, and test documents per task
# (None: the whole bydate test split of the pair).
SIZES = {"newsgroups": {"fit": 700, "validation": 400, "test": None},
         "spam": {"fit": 100, "validation": 100, "test": 200},
         "sentiment": {"fit": 300, "validation": 300, "test": 1000}}
QUICK_SIZES = {"newsgroups": {"fit": 120, "validation": 120, "test": 300},
               "spam": {"fit": 50, "validation": 50, "test": 100},
               "sentiment": {"fit": 80, "validation": 80, "test": 300}}
MIN_DF = 3
INTERCEPT_WEIGHT = 1e-10   # the group lasso's penalty weight on the tasks' intercepts
QUICK_MIN_DF = 5

GRID = {
    "med_alphas": [1.01, 1.05, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0, 300.0, 1000.0, 1e4],
    "med_Cs": [0.1, 1.0, 10.0, 100.0],
    "l1_Cs": [float(c) for c in np.logspace(-1, 4, 16)],
    "alpha_ratios": [float(a) for a in np.logspace(0, -4, 17)],   # times the data's alpha_max
    "mcp_gammas": [3.0, 10.0, 100.0],     # large gamma: close to the l1 penalty
}
QUICK_GRID = {
    "med_alphas": [1.5, 3.0, 10.0, 100.0, 1000.0],
    "med_Cs": [1.0, 10.0, 100.0],
    "l1_Cs": [0.3, 1.0, 10.0, 100.0],
    "alpha_ratios": [0.5, 0.1, 0.02],
    "mcp_gammas": [3.0],
}
REPETITIONS = 5
QUICK_REPETITIONS = 1
BUDGETS = [1, 3, 10, 30, 100, 300, 1000, 3000, 10000]

BUDGET_RULE = ("among all fitted points (every sweep value and second parameter, e.g. MED's (C, alpha)) "
               "with at most that many selected features (counted on the fitted model), the one with the "
               "highest validation MAUC")


# ---------------------------------------------------------------------------------------------
# Data: per-seed splits and tf-idf features built on the training documents.

def _strip_header(post):
    """A Usenet post without its header block (everything before the first blank line).

    >>> _strip_header("From: a@b\\nSubject: hi\\n\\nbody text\\n\\nmore")
    'body text\\n\\nmore'
    """
    head, sep, body = post.partition("\n\n")
    return body if sep else post


@functools.lru_cache(maxsize=2)
def _newsgroup_pair_docs(first, second):
    """The posts of two newsgroups, headers removed, with labels (+1: ``first``) and parts."""
    from medmtl.datasets import load_20newsgroups

    out = {}
    for part in ("train", "test"):
        docs, names, labels = load_20newsgroups(part)
        a, b = names.index(first), names.index(second)
        keep = np.flatnonzero((labels == a) | (labels == b))
        out[part] = ([_strip_header(docs[i]) for i in keep], np.where(labels[keep] == a, 1, -1))
    return out


def _stratified_parts(y, sizes, seed):
    """Sorted row indices of stratified parts of sizes ``sizes`` (a tuple; None: the rest)."""
    from medmtl.datasets import MultiTaskDataset, Task

    y = np.asarray(y)
    ds = MultiTaskDataset([Task(np.zeros((len(y), 1)), y, "t")])
    counts = list(sizes) + [None] * (3 - len(sizes))
    return [np.asarray(i) for i in ds.split_indices(*counts, random_state=seed)[0]][:len(sizes)]


def tfidf_features(fit_counts, *others, min_df=MIN_DF):
    """tf-idf of count matrices, built on the fitting documents only.

    Words (columns) in fewer than ``min_df`` fitting documents are dropped; the inverse
    document frequencies come from the fitting documents; term frequencies are sublinear
    (``1 + log tf``) and every row has unit Euclidean norm.

    Parameters
    ----------
    fit_counts : sparse matrix of shape (n_fit, n_words)
        The term counts of the documents the models are fitted on (all tasks stacked).
    *others : sparse matrices of shape (n, n_words)
        Further documents (validation, test) to transform the same way.
    min_df : int, default=MIN_DF

    Returns
    -------
    list of scipy.sparse.csr_matrix
        ``fit_counts`` and every one of ``others`` transformed, with the kept columns only.

    Examples
    --------
    >>> counts = sp.csr_matrix(np.array([[2, 1, 0], [1, 1, 0], [3, 0, 1]]))
    >>> fit, other = tfidf_features(counts, sp.csr_matrix(np.array([[1, 5, 0]])), min_df=2)
    >>> fit.shape, other.shape                       # the third word is in one document only
    ((3, 2), (1, 2))
    >>> np.round(np.linalg.norm(fit.toarray(), axis=1), 6).tolist()
    [1.0, 1.0, 1.0]
    """
    from sklearn.feature_extraction.text import TfidfTransformer

    fit_counts = sp.csr_matrix(fit_counts)
    keep = np.flatnonzero(np.asarray((fit_counts > 0).sum(axis=0)).ravel() >= min_df)
    transformer = TfidfTransformer(sublinear_tf=True).fit(fit_counts[:, keep])
    return [transformer.transform(sp.csr_matrix(m)[:, keep]).tocsr() for m in (fit_counts, *others)]


@functools.lru_cache(maxsize=8)
def _raw_split(data, seed, rep, n_fit, n_val, n_test, min_df):
    """The fitting, validation and test tf-idf matrices and labels of every task (unguarded)."""
    rng_seed = [seed, rep, DATA_SETS.index(data)]
    if data in NEWSGROUP_PAIRS:
        from sklearn.feature_extraction.text import CountVectorizer

        docs = _newsgroup_pair_docs(*NEWSGROUP_PAIRS[data])
        train_docs, train_y = docs["train"]
        test_docs, test_y = docs["test"]
        fit_idx, val_idx = _stratified_parts(train_y, (n_fit, n_val), rng_seed)
        test_idx = np.arange(len(test_y)) if n_test is None else _stratified_parts(test_y, (n_test,),
                                                                                   [*rng_seed, 1])[0]
        vectorizer = CountVectorizer(stop_words="english", min_df=min_df, dtype=np.float64)
        fit_counts = vectorizer.fit_transform([train_docs[i] for i in fit_idx])
        val_counts = vectorizer.transform([train_docs[i] for i in val_idx])
        test_counts = vectorizer.transform([test_docs[i] for i in test_idx])
        Xf, Xv, Xt = tfidf_features(fit_counts, val_counts, test_counts, min_df=min_df)
        return ([Xf], [train_y[fit_idx]], [Xv], [train_y[val_idx]], [Xt], [test_y[test_idx]], [data])
    from medmtl.datasets import load_sentiment, load_spam

    ds = load_spam() if data == "spam" else load_sentiment()
    fit, val, test = ds.split(train=n_fit, validation=n_val, test=n_test, random_state=rng_seed)
    sizes = [[t.n_samples for t in part] for part in (fit, val, test)]
    Xf, Xv, Xt = tfidf_features(sp.vstack(fit.Xs), sp.vstack(val.Xs), sp.vstack(test.Xs), min_df=min_df)

    def per_task(X, counts):
        edges = np.concatenate([[0], np.cumsum(counts)])
        return [X[a:b] for a, b in zip(edges[:-1], edges[1:])]

    return (per_task(Xf, sizes[0]), fit.ys, per_task(Xv, sizes[1]), val.ys, per_task(Xt, sizes[2]), test.ys,
            ds.task_names)


def text_split(data, seed=0, rep=0, sizes=None, min_df=MIN_DF):
    """One repetition's split of data set ``data`` into fitting, validation and test parts.

    Every task's documents are drawn at random, stratified by class: ``sizes["fit"]`` for
    fitting and ``sizes["validation"]`` for validation (for a 20 Newsgroups pair, from the
    bydate train split) and ``sizes["test"]`` for testing (for a pair, from the bydate test
    split; ``None``: all of it). Features are tf-idf over the words of at least ``min_df``
    fitting documents (see :func:`tfidf_features`). The test labels pass through
    :func:`~medmtl.experiments.leakage.guard_test_labels`.

    Parameters
    ----------
    data : str
        One of :data:`DATA_SETS`.
    seed, rep : int
        The run's seed and the repetition; the draw derives from both.
    sizes : dict, optional
        ``{"fit", "validation", "test"}`` documents per task (default: the full run's).
    min_df : int, default=MIN_DF

    Returns
    -------
    dict
        ``Xfit``, ``yfit``, ``Xval``, ``yval``, ``Xtest``, ``ytest`` (lists with one entry per
        task), ``task_names`` and ``n_features``.

    Examples
    --------
    >>> s = text_split("spam", sizes={"fit": 20, "validation": 20, "test": 40}, min_df=3)
    >>> len(s["Xfit"]), s["Xfit"][0].shape[0], s["Xtest"][0].shape[0], s["Xval"][0].shape[1] == s["n_features"]
    (15, 20, 40, True)
    """
    if data not in DATA_SETS:
        raise ValueError(f"unknown data set {data!r}; choose from {DATA_SETS}")
    sizes = sizes or SIZES["newsgroups" if data in NEWSGROUP_PAIRS else data]
    Xf, yf, Xv, yv, Xt, yt, names = _raw_split(data, seed, rep, sizes["fit"], sizes["validation"], sizes["test"],
                                               min_df)
    return {"Xfit": Xf, "yfit": yf, "Xval": Xv, "yval": yv, "Xtest": Xt,
            "ytest": [guard_test_labels(y) for y in yt], "task_names": list(names), "n_features": Xf[0].shape[1]}


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


@contextlib.contextmanager
def _without_anderson(module):
    """Within the block, skglm's solver module ``module`` (``"group_bcd"``, ``"anderson_cd"``)
    runs plain coordinate descent: its Anderson extrapolation never extrapolates. Used only
    to refit a point whose accelerated fit overflowed to non-finite weights."""
    import importlib

    solver_module = importlib.import_module(f"skglm.solvers.{module}")
    original = solver_module.AndersonAcceleration

    class NoExtrapolation(original):
        def extrapolate(self, w, Xw):
            return w, Xw, False

    solver_module.AndersonAcceleration = NoExtrapolation
    try:
        yield
    finally:
        solver_module.AndersonAcceleration = original


def _skglm_tol(alpha):
    """skglm's stopping tolerance (on the optimality violation, in the units of the penalty
    level ``alpha``): 1e-6, or 1 % of ``alpha`` where that is smaller, so that the fits at the
    smallest penalties are converged too.

    >>> _skglm_tol(1.0), _skglm_tol(1e-6)
    (1e-06, 1e-08)
    """
    return min(1e-6, 1e-2 * alpha)


def _logistic_alpha_max(X, y):
    """The smallest l1 weight of skglm's logistic loss at which all weights are zero
    (intercept included: the gradient at the intercept-only fit)."""
    y = np.asarray(y, float)
    p = (y > 0).mean()
    residual = (y > 0) - p              # minus the gradient of the mean log-loss in Xw, per row
    return float(np.abs(X.T @ residual).max() / len(y))


def _skglm_points(split, ratios, penalty, gammas):
    """Logistic regression with an l1 or MCP penalty (skglm), per task, one alpha for all tasks."""
    from skglm.datafits import Logistic
    from skglm.penalties import L1, MCPenalty
    from skglm.solvers import AndersonCD

    Xs = [sp.csc_matrix(X) for X in split["Xfit"]]          # skglm's sparse loops run over columns
    alpha_max = [_logistic_alpha_max(X, y) for X, y in zip(Xs, split["yfit"])]
    scale = float(np.max(alpha_max))
    points = []
    for gamma in (gammas if penalty == "mcp" else [None]):
        w_prev = [None] * len(split["Xfit"])
        for ratio in ratios:
            alpha = ratio * scale
            start = time.process_time()
            W, b = [], []
            for t, (X, y) in enumerate(zip(Xs, split["yfit"])):
                pen = L1(alpha) if penalty == "l1" else MCPenalty(alpha, gamma)
                solver = AndersonCD(fit_intercept=True, tol=_skglm_tol(alpha), max_iter=200,
                                    warm_start=w_prev[t] is not None)
                w0 = w_prev[t]
                # a warm start needs the predictions of its weights too (skglm takes Xw = 0 otherwise)
                Xw0 = None if w0 is None else np.asarray(X @ w0[:-1]).ravel() + w0[-1]
                w = solver.solve(X, np.asarray(y, float), Logistic(), pen, w_init=None if w0 is None else w0.copy(),
                                 Xw_init=Xw0)[0].copy()
                if not np.all(np.isfinite(w)):      # Anderson extrapolation overflowed: again, cold, without it
                    with _without_anderson("anderson_cd"):
                        w = AndersonCD(fit_intercept=True, tol=_skglm_tol(alpha), max_iter=200).solve(
                            X, np.asarray(y, float), Logistic(), pen)[0].copy()
                    if not np.all(np.isfinite(w)):
                        raise FloatingPointError(f"skglm diverged at alpha ratio {ratio}")
                w_prev[t] = w
                W.append(w[:-1])
                b.append(float(w[-1]))
            seconds = time.process_time() - start
            points.append(_record(split, ratio, gamma, _linear_scores(W, b, split["Xval"]),
                                  _linear_scores(W, b, split["Xtest"]), [w != 0 for w in W], seconds))
    return points


def _group_design(Xs, features):
    """The tasks' block-diagonal design over ``features``, one intercept column per task, and
    its groups.

    Column ``k * M + t`` holds feature ``features[k]`` of task ``t``; group ``k < K`` is a
    feature's M columns, and groups ``K .. K + M - 1`` are the intercept columns.

    >>> X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0]]))
    >>> design, ptr, idx = _group_design([X, 3 * X], np.array([0, 2]))
    >>> design.toarray().tolist()
    [[1.0, 0.0, 2.0, 0.0, 1.0, 0.0], [0.0, 3.0, 0.0, 6.0, 0.0, 1.0]]
    >>> ptr.tolist()
    [0, 2, 4, 5, 6]
    """
    M, K = len(Xs), len(features)
    blocks = []
    for t, X in enumerate(Xs):
        coo = sp.csr_matrix(X)[:, features].tocoo()
        n = coo.shape[0]
        blocks.append(sp.csr_matrix((np.concatenate([coo.data, np.ones(n)]),
                                     (np.concatenate([coo.row, np.arange(n)]),
                                      np.concatenate([coo.col * M + t, np.full(n, K * M + t)]))),
                                    shape=(n, K * M + M)))
    design = sp.vstack(blocks).tocsc()
    grp_ptr = np.concatenate([np.arange(0, K * M + 1, M), K * M + np.arange(1, M + 1)]).astype(np.int32)
    return design, grp_ptr, np.arange(K * M + M, dtype=np.int32)


@functools.lru_cache(maxsize=1)
def _numba_seeder():
    """A numba function that seeds numba's random generator (not NumPy's), which skglm's
    power iteration for the groups' Lipschitz constants draws its start vector from."""
    from numba import njit

    @njit(cache=False)
    def seed(value):
        np.random.seed(value)

    return seed


def _group_lasso_points(split, ratios):
    """Multi-task group lasso with the squared loss on the ±1 labels (skglm GroupBCD)."""
    from skglm.datafits import QuadraticGroup
    from skglm.penalties import WeightedGroupL2
    from skglm.solvers import GroupBCD

    Xs, ys = split["Xfit"], split["yfit"]
    M, D = len(Xs), Xs[0].shape[1]
    # features no fitting document holds have no column (their weights stay zero)
    features = np.flatnonzero(np.asarray(sum(abs(X).sum(axis=0) for X in Xs)).ravel() > 0)
    K = len(features)
    design, grp_ptr, grp_indices = _group_design(Xs, features)
    y = np.concatenate([np.asarray(v, float) for v in ys])
    n = len(y)
    centred = np.concatenate([np.asarray(v, float) - np.mean(v) for v in ys])
    gradient = np.asarray(design[:, :K * M].T @ centred).ravel().reshape(K, M)
    scale = float(np.linalg.norm(gradient, axis=1).max() / n)
    # the intercepts' groups are unpenalised in effect; not exactly (weight 0), since skglm's
    # block soft-thresholding divides 0 by 0 at a zero threshold and a zero group
    weights = np.concatenate([np.ones(K), np.full(M, INTERCEPT_WEIGHT)])
    datafit = QuadraticGroup(grp_ptr, grp_indices)
    points, w = [], None
    for ratio in ratios:
        penalty = WeightedGroupL2(ratio * scale, weights, grp_ptr, grp_indices)
        solver = GroupBCD(fit_intercept=False, tol=_skglm_tol(ratio * scale), max_iter=200, warm_start=w is not None)
        start = time.process_time()
        Xw0 = None if w is None else np.asarray(design @ w).ravel()   # the warm start's predictions
        _numba_seeder()(0)              # the same Lipschitz constants, so the same fit, in every run
        w = solver.solve(design, y, datafit, penalty, w_init=None if w is None else w.copy(), Xw_init=Xw0)[0].copy()
        if not np.all(np.isfinite(w)):
            # skglm's Anderson extrapolation overflowed (ill-conditioned iterates): again, cold, without it
            _numba_seeder()(0)
            solver = GroupBCD(fit_intercept=False, tol=_skglm_tol(ratio * scale), max_iter=200)
            with _without_anderson("group_bcd"):
                w = solver.solve(design, y, datafit, penalty)[0].copy()
            if not np.all(np.isfinite(w)):
                # diverged from a cold start too (seen once: sentiment, one split, ratio 1.8e-3):
                # this sweep point has no fit; the curve goes on without it
                warnings.warn(f"skglm's group lasso diverged at alpha ratio {ratio:.3g}; the point is left out",
                              RuntimeWarning, stacklevel=2)
                w = None
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
    with numba in every new process: about 10 s per loss and penalty)."""
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


def _mean_or_none(values):
    return None if any(v is None for v in values) else float(np.mean(values))


def _std_or_none(values):
    return None if any(v is None for v in values) else float(np.std(values))


def _comparisons(budget_tables, data, methods):
    """Per MED method and budget: the strongest baseline by mean validation MAUC, and the
    paired t-test (over repetitions) of the MED method's test MAUC minus the baseline's
    (``"against": "strongest baseline"``); and multi-task MED against single-task MED
    (``"against": "single-task MED"``)."""
    rows = []
    for med in (m for m in methods if m in MED_METHODS):
        against = [("strongest baseline", [m for m in methods if m not in MED_METHODS])]
        if med == "mtmed" and "med" in methods:
            against.append(("single-task MED", ["med"]))
        for label, baselines in against:
            rows += _compare(budget_tables, data, med, baselines, label)
    return rows


def _compare(budget_tables, data, med, baselines, label):
    rows = []
    for budget in budget_tables[med]:
        mine = budget_tables[med][budget]
        valid = {b: _mean_or_none([None if p is None else p["validation"] for p in budget_tables[b][budget]])
                 for b in baselines}
        valid = {b: v for b, v in valid.items() if v is not None}
        if not valid:
            continue
        if any(p is None for p in mine):      # MED has no sweep point within the budget
            rows.append({"data": data, "method": med, "against": label, "budget": budget, "baseline": None,
                         "test": None})
            continue
        best = max(valid, key=valid.get)
        theirs = budget_tables[best][budget]
        d, se, p = paired_t_test([q["test"] for q in mine], [q["test"] for q in theirs])
        rows.append({"data": data, "method": med, "against": label, "budget": budget, "baseline": best,
                     "test": float(np.mean([q["test"] for q in mine])),
                     "baseline_test": float(np.mean([q["test"] for q in theirs])),
                     "n_features": float(np.mean([q["n_features"] for q in mine])),
                     "baseline_n_features": float(np.mean([q["n_features"] for q in theirs])),
                     "mean_difference": d, "standard_error": se, "p_value": p, "n_pairs": len(mine)})
    return rows


def _figure(curves_by_data, chosen_by_data, quick):
    from matplotlib.figure import Figure

    n = len(curves_by_data)
    cols = 2 if n + 1 <= 4 else 3                              # one more panel for the legend
    rows = int(np.ceil((n + 1) / cols))
    figure = Figure(figsize=(4.8 * cols, 3.8 * rows))
    axes = figure.subplots(rows, cols, squeeze=False).ravel()
    colors = {m: f"C{i}" for i, m in enumerate(METHODS)}
    for ax, (data, curves) in zip(axes, curves_by_data.items()):
        for method, curve in curves.items():
            # joined in the order of the number of features; zero features drawn at the axis' edge
            order = np.argsort(curve["n_features"], kind="stable")
            x = np.maximum(np.asarray(curve["n_features"])[order], 0.8)
            style = "-" if method in MED_METHODS else "--"
            ax.errorbar(x, np.asarray(curve["test"])[order], yerr=np.asarray(curve["test_std"])[order],
                        color=colors[method], linestyle=style, marker="o" if method in MED_METHODS else ".",
                        markersize=4, capsize=2, label=METHODS[method])
            star = chosen_by_data[data][method]
            if star is not None:
                ax.plot(max(star[0], 0.8), star[1], marker="*", markersize=11, color=colors[method],
                        markeredgecolor="black", linestyle="none")
        ax.set_xscale("log")
        ax.set_xlabel("selected features (union over tasks)")
        ax.set_ylabel("mean test AUC")
        ax.set_title(DATA_TITLES[data] + (" [quick]" if quick else ""), fontsize=10)
        ax.grid(alpha=0.3)
    handles, labels = [], []
    for ax in axes[:n]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    for ax in axes[n:]:
        ax.axis("off")
    axes[n].legend(handles, labels, loc="center", fontsize=8,
                   title="star: the point chosen on validation\n(MED: switch posterior > 1/2 kept)",
                   title_fontsize=8)
    figure.suptitle("Text feature selection: test AUC against selected features"
                    + (" (quick run)" if quick else ""))
    return figure


@register(NAME, "MED (single- and multi-task) feature selection vs l1 / MCP / group lasso on text: AUC vs #features")
def text_feature_selection(options=RunOptions(), *, data_sets=None, methods=None):
    """Test AUC against the number of selected features, and fit times, on text data.

    Parameters
    ----------
    options : RunOptions
    data_sets : list of str, optional
        A subset of :data:`DATA_SETS` (default: all; quick: :data:`QUICK_DATA_SETS`).
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
    quick = options.quick
    data_sets = list(data_sets or (QUICK_DATA_SETS if quick else DATA_SETS))
    chosen_methods = list(methods or METHODS)
    grid = QUICK_GRID if quick else GRID
    reps = QUICK_REPETITIONS if quick else REPETITIONS
    min_df = QUICK_MIN_DF if quick else MIN_DF
    all_sizes = QUICK_SIZES if quick else SIZES
    libraries = _library_versions()
    cells = []
    for data in data_sets:
        sizes = all_sizes["newsgroups" if data in NEWSGROUP_PAIRS else data]
        for rep in range(reps):               # a worker's cells of one split follow each other
            for method in (m for m in _methods_for(data) if m in chosen_methods):
                cells.append({"data": data, "method": method, "rep": rep, "seed": options.seed, "sizes": sizes,
                              "min_df": min_df, "grid": grid, "med_method": METHOD, "libraries": libraries, "v": 1})
    out = run_grid(CellCall(text_feature_cell), cells, name=NAME, options=options)

    def outputs(data, method):
        return [o for o, c in zip(out, cells) if c["data"] == data and c["method"] == method]

    measured, std, curves_by_data, chosen_by_data, comparisons = {}, {}, {}, {}, []
    budgets_out, times, selection, n_total = {}, {}, [], {}
    for data in data_sets:
        methods_here = [m for m in _methods_for(data) if m in chosen_methods]
        curves_by_data[data], chosen_by_data[data], budgets_out[data], times[data] = {}, {}, {}, {}
        for method in methods_here:
            outs = outputs(data, method)
            curves = [o["curve"] for o in outs]
            curves_by_data[data][method] = _mean_curve(curves)
            table = _budget_table([o["points"] for o in outs], BUDGETS)
            budgets_out[data][method] = table
            key = f"{data}: {METHODS[method]}"
            measured[key] = [_mean_or_none([None if p is None else p["test"] for p in table[str(b)]])
                             for b in BUDGETS]
            std[key] = [_std_or_none([None if p is None else p["test"] for p in table[str(b)]]) for b in BUDGETS]
            anyp = table["any"]
            chosen_by_data[data][method] = (float(np.mean([p["n_features"] for p in anyp])),
                                            float(np.mean([p["test"] for p in anyp])))
            times[data][method] = {"sweep_seconds_mean": float(np.mean([o["seconds"] for o in outs])),
                                   "grid_points": len(outs[0]["points"]),
                                   "fits": len(outs[0]["points"]) * len(outs[0]["task_names"])
                                   if method not in MULTITASK_METHODS else len(outs[0]["points"]),
                                   "seconds_per_point_mean": float(np.mean([o["seconds"] / len(o["points"])
                                                                            for o in outs]))}
            n_total[data] = outs[0]["n_features_total"]
            for c, o in zip(cells, out):
                if c["data"] == data and c["method"] == method:
                    selection.append({"data": data, "method": method, "rep": c["rep"],
                                      "curve": [{k: p[k] for k in ("sweep", "second", "validation", "n_features")}
                                                for p in o["curve"]],
                                      "points": [{k: p[k] for k in ("sweep", "second", "validation", "n_features")}
                                                 for p in o["points"]],
                                      "budget_choices": {b: None if v[c["rep"]] is None else
                                                         {k: v[c["rep"]][k] for k in ("sweep", "second",
                                                                                      "validation", "n_features")}
                                                         for b, v in table.items()}})
        comparisons += _comparisons(budgets_out[data], data, methods_here)
    result = ExperimentResult(
        NAME,
        settings={"data": {d: DATA_TITLES[d] for d in data_sets},
                  "newsgroup_pairs": {k: list(v) for k, v in NEWSGROUP_PAIRS.items() if k in data_sets},
                  "features": f"tf-idf (sublinear tf, idf and vocabulary from the fitting documents, words in at "
                              f"least {min_df} of them; rows of unit norm); 20 Newsgroups: headers removed, "
                              "English stop words removed",
                  "sizes": all_sizes, "repetitions": reps, "grid": grid, "methods": {m: METHODS[m]
                                                                                    for m in chosen_methods},
                  "selection_rule": "per sweep point, the second parameter (MED: C; MCP: gamma) with the best "
                                    "validation MAUC; one value of every parameter for all tasks",
                  "budget_rule": BUDGET_RULE, "budgets": BUDGETS,
                  "n_features_counted": "switch posterior > 1/2 (MED); nonzero weight (the others); the union "
                                        "over the tasks",
                  "fit_time": "process time (one BLAS thread) of the fits of a sweep, after an untimed warm-up "
                              "that compiles numba code",
                  "libraries": libraries, "seed": options.seed, "quick": quick,
                  "quick_shrinks": "one newsgroup pair, fewer documents per task, vocabulary (min_df 5), fewer grid "
                                   "points, one repetition",
                  **solver_settings(METHOD)},
        x=BUDGETS, measured=measured, measured_std=std,
        paper={k: [None] * len(BUDGETS) for k in measured},
        xlabel="at most this many selected features", ylabel="mean test AUC (point chosen on validation)",
        title="Text feature selection", xscale="log",
        extra={"curves": curves_by_data,
               "cells": [{"data": c["data"], "method": c["method"], "rep": c["rep"], "seconds": o["seconds"],
                          "curve": o["curve"]} for c, o in zip(cells, out)],
               "budget_choices": budgets_out, "fit_times": times,
               "comparisons": comparisons, "n_features_total": n_total,
               "chosen_on_validation": {d: {m: {"n_features": v[0], "test": v[1]} for m, v in ms.items()}
                                        for d, ms in chosen_by_data.items()},
               "selection": selection})
    return result, _figure(curves_by_data, chosen_by_data, quick)


# ---------------------------------------------------------------------------------------------
# The README's rows.

README_BUDGETS = ["10", "100", "any"]
_SHORT = {"med": "MED", "mtmed": "multi-task MED", "l1_logreg": "l1 LR (liblinear)", "skglm_l1": "l1 LR (skglm)",
          "skglm_mcp": "MCP LR (skglm)", "group_lasso": "group lasso (skglm)"}


def _verdict(row):
    """Whether the MED method won or lost against the baseline, at the 5 % level.

    >>> _verdict({"mean_difference": -0.02, "p_value": 0.01}), _verdict({"mean_difference": 0.01, "p_value": 0.3})
    ('MED loses', 'no significant difference')
    """
    p = row["p_value"]
    if p is not None and not np.isnan(p) and p < 0.05:
        return "MED wins" if row["mean_difference"] > 0 else "MED loses"
    return "no significant difference"


def _budget_text(budget):
    return "no budget" if budget == "any" else f"<= {budget} features"


@readme_rows(NAME)
def _readme_rows(result):
    reps = result.settings["repetitions"]
    experiment = (f"`{NAME}`: mean test AUC (MAUC over the tasks) against the number of selected features, "
                  f"{reps} random splits, seed {result.settings['seed']}; 20 Newsgroups pairs, 15 spam users, "
                  "4 sentiment domains, tf-idf")
    rows = []
    chosen = result.extra["chosen_on_validation"]
    for data, methods in chosen.items():
        rows.append(Row(experiment, f"{data}: every method at the point chosen on validation (features)",
                        "per method, the sweep point and second parameter (MED: C) with the best validation MAUC; "
                        "features counted as switch posterior > 1/2 (MED) or nonzero weights, union over tasks",
                        "; ".join(f"{_SHORT[m]} {fmt(v['test'])} ({v['n_features']:.0f})" for m, v in methods.items())))
    for data in chosen:
        for med, against in (("med", "strongest baseline"), ("mtmed", "strongest baseline"),
                             ("mtmed", "single-task MED")):
            if med not in chosen[data]:
                continue
            found = {c["budget"]: c for c in result.extra["comparisons"]
                     if c["data"] == data and c["method"] == med and c["against"] == against}
            if not found:
                continue
            parts = []
            for budget in README_BUDGETS:
                c = found.get(budget)
                if c is None:
                    continue
                if c["test"] is None:
                    parts.append(f"{_budget_text(budget)}: {_SHORT[med]} has no point this sparse "
                                 + ("(MED loses)" if against == "strongest baseline" else "(sharing loses)"))
                    continue
                verdict = _verdict(c)
                if against == "single-task MED":
                    verdict = verdict.replace("MED wins", "sharing wins").replace("MED loses", "sharing loses")
                parts.append(f"{_budget_text(budget)}: {fmt(c['test'])} vs {_SHORT[c['baseline']]} "
                             f"{fmt(c['baseline_test'])}, {fmt_paired(c)}: {verdict}")
            rows.append(Row(experiment, f"{data}: {_SHORT[med]} minus the {against} (paired t-test over "
                                        f"the {reps} splits)",
                            "at each budget, the fitted point (any sweep value and second parameter) with the best "
                            "validation MAUC among those within it"
                            + ("; the baseline with the highest mean validation MAUC there"
                               if against == "strongest baseline" else ""),
                            "; ".join(parts)))
    times = result.extra["fit_times"]
    rows.append(Row(experiment, "fit time of a whole sweep, process seconds (grid points), mean over splits",
                    "the full grids of the settings (MED: every (C, alpha); MCP: every (alpha, gamma)); "
                    "single-task methods fit every task",
                    "; ".join(f"{data}: " + ", ".join(f"{_SHORT[m]} {v['sweep_seconds_mean']:.3g} s "
                                                       f"({v.get('grid_points', '?')})" for m, v in ms.items())
                              for data, ms in times.items())))
    return rows
