"""Model selection on validation: fit along a warm-started path, choose the best point.

Every function here sees training and validation data only and returns its choice; the
test data enter afterwards, in a separate call, and are scored once by the chosen model.
"""

from __future__ import annotations

__all__ = ["warm_path", "select_on_validation", "select_per_alpha", "grid_edge_counts"]


def warm_path(make_model, Cs, alphas, train_Xs, train_ys, score):
    """Fit along a regularisation path, warm-starting each fit from the previous solution.

    For each C (ascending) the alphas are swept in ascending order starting from the
    solution at the previous alpha, as the paper explores its path; the first alpha of each
    C starts cold. The whole grid is one :func:`medmtl.med.med_path`, so the dual's factors
    (feature columns, per-task kernel Gram blocks) are built once, not once per C.

    Parameters
    ----------
    make_model : callable
        ``make_model(C=..., alpha=...)`` returns an unfitted MED estimator; its
        ``warm_start`` says whether the alphas of a C are warm-started.
    Cs, alphas : list of float
    train_Xs, train_ys
        What the estimator's ``fit`` takes.
    score : callable
        ``score(model)``, called on the model fitted at every point (on validation data:
        higher is better).

    Returns
    -------
    scores : dict
        ``{(C, alpha): score}``.
    iterations : dict
        ``{(C, alpha): n_iter_}`` of every fit.
    """
    from medmtl.med import med_path

    model = make_model(C=min(Cs), alpha=min(alphas))
    warm = model.get_params().get("warm_start", False)
    grid = [(C, alpha, warm and k > 0) for C in sorted(Cs) for k, alpha in enumerate(sorted(alphas))]
    path = med_path(model, train_Xs, train_ys, Cs=[C for C, _, _ in grid], alphas=[a for _, a, _ in grid],
                    warm_start=[w for _, _, w in grid])
    scores, iterations = {}, {}
    for (C, alpha, _), fitted in zip(grid, path.estimators):
        scores[(C, alpha)] = score(fitted)
        iterations[(C, alpha)] = int(fitted.n_iter_)
    return scores, iterations


def select_on_validation(scores):
    """The grid point with the best validation score (ties: the first in sorted order).

    Parameters
    ----------
    scores : dict
        ``{grid point: validation score}``, higher is better.

    Returns
    -------
    point, score

    Examples
    --------
    >>> select_on_validation({(1.0, 0.0): 0.8, (0.1, 0.0): 0.9, (10.0, 0.0): 0.9})
    ((0.1, 0.0), 0.9)
    """
    best = max(sorted(scores), key=lambda k: scores[k])
    return best, scores[best]


def select_per_alpha(scores, alphas):
    """Per alpha, the C with the best validation score (as :func:`select_on_validation`).

    Parameters
    ----------
    scores : dict
        ``{(C, alpha): validation score}``, as :func:`warm_path` returns.
    alphas : list of float

    Returns
    -------
    list of ((C, alpha), score), one per alpha

    Examples
    --------
    >>> select_per_alpha({(1.0, 0.0): 0.8, (2.0, 0.0): 0.7, (1.0, 9.0): 0.6, (2.0, 9.0): 0.9}, [0.0, 9.0])
    [((1.0, 0.0), 0.8), ((2.0, 9.0), 0.9)]
    """
    return [select_on_validation({k: v for k, v in scores.items() if k[1] == alpha}) for alpha in alphas]


def grid_edge_counts(chosen, grid, profiles=None, tol=0.0):
    """How often the choices of one hyper-parameter sit on an edge of its grid.

    A choice on the lowest or highest grid value may mean the grid is too narrow, or only
    that the validation scores tie over a range that reaches the edge (ties go to the first
    point in sorted order, see :func:`select_on_validation`). With ``profiles`` the two are
    told apart: an edge choice is *strict* when its validation score beats every other grid
    value's by more than ``tol``; only strict edge choices say the grid should be wider.

    Parameters
    ----------
    chosen : sequence of float
        The value chosen in each cell (split, fold, task, ...).
    grid : sequence of float
        The values the choice was made from.
    profiles : sequence of dict, optional
        Per cell, ``{value: best validation score over the other hyper-parameters at that
        value}``, in the order of ``chosen``.
    tol : float, default=0.0
        Scores within ``tol`` of each other count as tied.

    Returns
    -------
    dict
        ``grid`` (sorted), ``n`` (cells), ``low``/``high`` (choices on the lowest/highest
        value), ``share`` ((low + high) / n) and, with ``profiles``, ``strict_low``,
        ``strict_high`` and ``strict_share``.

    Examples
    --------
    >>> grid_edge_counts([0.01, 0.01, 1.0, 100.0], [0.01, 1.0, 100.0])
    {'grid': [0.01, 1.0, 100.0], 'n': 4, 'low': 2, 'high': 1, 'share': 0.75}
    >>> grid_edge_counts([0.01, 0.01], [0.01, 1.0],
    ...                  profiles=[{0.01: 0.9, 1.0: 0.9}, {0.01: 0.9, 1.0: 0.8}])["strict_low"]
    1
    """
    values = sorted(float(v) for v in grid)
    chosen = [float(c) for c in chosen]
    if not chosen:
        raise ValueError("no choices to count")
    missing = sorted({c for c in chosen if c not in values})
    if missing:
        raise ValueError(f"choices {missing} are not grid values {values}")
    low, high = values[0], values[-1]
    out = {"grid": values, "n": len(chosen), "low": sum(c == low for c in chosen),
           "high": sum(c == high for c in chosen) if high != low else 0}
    out["share"] = (out["low"] + out["high"]) / len(chosen)
    if profiles is None:
        return out
    if len(profiles) != len(chosen):
        raise ValueError(f"{len(profiles)} profiles for {len(chosen)} choices")

    def strict(c, profile):
        profile = {float(k): v for k, v in profile.items()}
        others = [v for k, v in profile.items() if k != c]
        return bool(others) and profile[c] > max(others) + tol

    out["strict_low"] = sum(c == low and strict(c, p) for c, p in zip(chosen, profiles))
    out["strict_high"] = sum(c == high and high != low and strict(c, p) for c, p in zip(chosen, profiles))
    out["strict_share"] = (out["strict_low"] + out["strict_high"]) / len(chosen)
    return out
