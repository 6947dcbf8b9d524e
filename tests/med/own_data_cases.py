"""MED duals built from data nobody prepared for the solvers.

scikit-learn's bundled sets (breast cancer, wine, digits, diabetes) raw and transformed as
a user's own data comes: standardised, each column rescaled by a factor from 1e-4 to 1e4,
duplicated and collinear columns, one dominant column, near-separable labels with a large
``C``, heavy class imbalance, tasks of very different sizes. Each data set is turned into
every MED model kind (SVM, feature and kernel selection single and multi-task, adaptive
pooling, regression, the Ising structure dual).

:func:`cases` yields ``(name, build)`` pairs, ``build()`` giving the dual; the test suite
takes a small draw of rows (``size="test"``), ``benchmarks/bench_own_data.py`` the whole
sets (``size="full"``).
"""

from __future__ import annotations

import numpy as np
from sklearn import datasets
from sklearn.preprocessing import StandardScaler

from medmtl.kernels import LinearKernel, PolynomialKernel, RBFKernel
from medmtl.med.builders import (
    adaptive_pooling_dual,
    feature_selection_dual,
    ising_structure_dual,
    kernel_selection_dual,
    svm_dual,
)

# rows kept per data set in the test draw
_TEST_ROWS = 150


def _load(name):
    """``(X, y)`` with ``y`` in {-1, +1} (binary sets) or real (``"diabetes"``)."""
    if name == "breast_cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True)
        return X, 2.0 * y - 1.0
    if name == "wine":  # class 0 against the rest
        X, y = datasets.load_wine(return_X_y=True)
        return X, np.where(y == 0, 1.0, -1.0)
    if name == "digits":  # even against odd digits
        X, y = datasets.load_digits(return_X_y=True)
        return X, np.where(y % 2 == 0, 1.0, -1.0)
    if name == "diabetes":
        return datasets.load_diabetes(return_X_y=True)
    raise ValueError(name)


def _transform(X, y, how, rng, regression):
    """The data as a user might bring it; returns ``(X, y, C)``."""
    C = 1.0
    if how == "raw":
        return X, y, C
    Z = StandardScaler().fit_transform(X)
    Z = Z[:, np.std(X, axis=0) > 0]
    if how == "standardised":
        return Z, y, C
    if how == "rescaled":  # each column by a factor from 1e-4 to 1e4
        return Z * 10.0 ** rng.uniform(-4, 4, Z.shape[1]), y, C
    if how == "collinear":  # duplicated columns and sums of pairs
        D = Z.shape[1]
        k = min(5, D // 2)
        return np.hstack([Z, Z[:, :k], Z[:, :k] + Z[:, k:2 * k]]), y, C
    if how == "dominant":  # one column ten thousand times the others
        Z = Z.copy()
        Z[:, 0] *= 1e4
        return Z, y, C
    if how == "separable":  # labels of a hyperplane, a few flipped, a large C
        w = rng.standard_normal(Z.shape[1])
        f = Z @ w
        if regression:
            return Z, f + 0.01 * rng.standard_normal(f.size), 100.0
        labels = np.where(f > np.median(f), 1.0, -1.0)
        flip = rng.choice(f.size, max(1, f.size // 100), replace=False)
        labels[flip] *= -1
        return Z, labels, 100.0
    if how == "imbalanced":  # the smaller class cut to one row in twenty (six at least)
        if regression:
            return Z, y, C
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        rare, common = (pos, neg) if pos.size <= neg.size else (neg, pos)
        keep = rng.choice(rare, min(rare.size, max(6, common.size // 19)), replace=False)
        rows = np.sort(np.concatenate([keep, common]))
        return Z[rows], y[rows], C
    raise ValueError(how)


def _split_tasks(y, rng, uneven, regression):
    """Row indices of three tasks: near-equal, or of very different sizes (5 %, 20 %, 75 %).
    Classification tasks are split class by class, so that each keeps both classes."""
    shares = np.array([0.05, 0.20, 0.75]) if uneven else np.full(3, 1 / 3)
    strata = [np.arange(y.size)] if regression else [np.flatnonzero(y > 0), np.flatnonzero(y < 0)]
    tasks = [[] for _ in shares]
    for rows in strata:
        rows = rng.permutation(rows)
        # at least one row of the stratum per task, the rest by the shares
        sizes = np.maximum(1, np.floor(shares * rows.size).astype(int))
        sizes[-1] = rows.size - sizes[:-1].sum()
        if sizes[-1] < 1:
            raise ValueError("too few rows to give every task both classes")
        for t, part in enumerate(np.split(rows, np.cumsum(sizes)[:-1])):
            tasks[t].append(part)
    return [np.sort(np.concatenate(parts)) for parts in tasks]


def _ising_data(X, n_nodes, rng):
    """Spins in {-1, +1}: the first ``n_nodes`` columns thresholded at their medians (ties
    broken at random so that no column is constant)."""
    cols = X[:, :n_nodes]
    med = np.median(cols, axis=0)
    spins = np.where(cols > med, 1.0, -1.0)
    ties = cols == med
    spins[ties] = rng.choice([-1.0, 1.0], ties.sum())
    return spins


CLASSIFICATION = ("breast_cancer", "wine", "digits")
TRANSFORMS = ("raw", "standardised", "rescaled", "collinear", "dominant", "separable",
              "imbalanced", "uneven")
MODELS = ("svm", "svm_rbf", "features", "mt_features", "kernels", "mt_kernels", "pooling",
          "svr", "features_reg", "mt_features_reg", "ising")


def _gamma(X):
    """SVC's ``gamma="scale"``."""
    var = float(np.var(X))
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


def _build(model, X, y, C, tasks, alpha):
    Xs, ys = [X[t] for t in tasks], [y[t] for t in tasks]
    bank = [LinearKernel(), RBFKernel(_gamma(X)), PolynomialKernel(2, _gamma(X), 1.0)]
    if model == "svm":
        return svm_dual([X], [y], C=C)
    if model == "svm_rbf":
        return svm_dual([X], [y], RBFKernel(_gamma(X)), C=C)
    if model == "features":
        return feature_selection_dual([X], [y], C=C, alpha=alpha)
    if model == "mt_features":
        return feature_selection_dual(Xs, ys, C=C, alpha=alpha)
    if model == "kernels":
        return kernel_selection_dual([X], [y], bank, C=C, alpha=alpha)
    if model == "mt_kernels":
        return kernel_selection_dual(Xs, ys, bank, C=C, alpha=alpha)
    if model == "pooling":
        return adaptive_pooling_dual(Xs, ys, C=C, alpha=alpha)
    if model == "svr":
        return svm_dual([X], [y], C=C, regression=True, epsilon=0.1 * float(np.std(y)))
    if model == "features_reg":
        return feature_selection_dual([X], [y], C=C, alpha=alpha, regression=True,
                                      epsilon=0.1 * float(np.std(y)))
    if model == "mt_features_reg":
        return feature_selection_dual(Xs, ys, C=C, alpha=alpha, regression=True,
                                      epsilon=0.1 * float(np.std(y)))
    raise ValueError(model)


def _models_for(data):
    if data == "diabetes":
        return ("svr", "features_reg", "mt_features_reg")
    return ("svm", "svm_rbf", "features", "mt_features", "kernels", "mt_kernels", "pooling", "ising")


def cases(size="test", data=None, transforms=None, models=None, alpha=10.0, rows=_TEST_ROWS):
    """Yield ``(name, build)``: a case's name ``data/transform/model`` and a function that
    builds its dual.

    Parameters
    ----------
    size : {"test", "full"}
        ``"test"``: a fixed draw of ``rows`` rows of each set; ``"full"``: every row.
    data, transforms, models : sequence of str, optional
        Restrict the matrix (all by default).
    alpha : float
        Prior odds of the switches.
    rows : int
        Rows of the test draw.
    """
    for name in data or CLASSIFICATION + ("diabetes",):
        regression = name == "diabetes"
        X0, y0 = _load(name)
        for how in transforms or TRANSFORMS:
            rng = np.random.default_rng([ord(ch) for ch in f"{name}/{how}"])
            X, y = X0, y0
            if size == "test" and X.shape[0] > rows:
                keep = _balanced_rows(y, rows, rng, regression)
                X, y = X[keep], y[keep]
            X, y, C = _transform(X, y, "standardised" if how == "uneven" else how, rng, regression)
            tasks = _split_tasks(y, rng, how == "uneven", regression)
            for model in models or _models_for(name):
                if model not in _models_for(name):
                    continue
                if model == "ising":
                    spins = _ising_data(X, 6, rng)

                    def build(spins=spins, C=C):
                        return ising_structure_dual(spins, C=0.1 * C, alpha=alpha)
                else:
                    def build(model=model, X=X, y=y, C=C, tasks=tasks):
                        return _build(model, X, y, C, tasks, alpha)
                yield f"{name}/{how}/{model}", build


def _balanced_rows(y, k, rng, regression):
    """``k`` rows drawn at random, keeping both classes."""
    if regression:
        return np.sort(rng.choice(y.size, k, replace=False))
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    k_pos = max(2, round(k * pos.size / y.size))
    return np.sort(np.concatenate([rng.choice(pos, k_pos, replace=False),
                                   rng.choice(neg, k - k_pos, replace=False)]))


def rotation(rows=80):
    """A draw that fits the test suite: every (transform, model kind) pair once, each on one
    data set taken in turn, ``rows`` rows of it. Yields ``(name, build)`` as :func:`cases`."""
    classification = [m for m in MODELS if m in _models_for("breast_cancer")]
    regression = list(_models_for("diabetes"))
    turn = 0
    for how in TRANSFORMS:
        for model in classification + regression:
            data = "diabetes" if model in regression else CLASSIFICATION[turn % len(CLASSIFICATION)]
            turn += model not in regression
            yield from cases("test", [data], [how], [model], rows=rows)


def case_at(name, C_factor=1.0):
    """The test draw's dual of case ``name`` (``"data/transform/model"``), its box ``C``
    times ``C_factor``."""
    data, transform, model = name.split("/")
    (_, build), = cases("test", data=[data], transforms=[transform], models=[model])
    dual = build()
    return dual if C_factor == 1.0 else dual.replace(C=C_factor * float(dual.hi[0]))
