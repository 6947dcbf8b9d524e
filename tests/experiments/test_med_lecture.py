"""The lecture experiments' pieces against independent references."""

import numpy as np

from medmtl.experiments import med_lecture, preprocessing, registry


def test_housing_paper_numbers_sit_beside_their_rows():
    r = registry.run("housing-regression", quick=True)
    (key,) = r.paper
    assert r.x == ["least squares"] + [f"MED p0 = {rho:g}" for rho in med_lecture.RHOS]
    assert r.paper[key] == med_lecture.HOUSING_PAPER
    assert [row["lecture"] for row in r.extra["table"].values()] == med_lecture.HOUSING_PAPER
    assert list(r.extra["table"]) == r.x


def test_splice_quadratic_features_drop_only_structural_zeros():
    from medmtl.datasets import load_splice

    X = load_splice(window=25)[0].X[:300]
    Q = med_lecture.splice_features(X, 25, True)
    assert Q.shape[1] == 100 + 100 * 99 // 2 - 25 * 6 == 4900
    # every kept product is a pair of different positions; the dropped ones are always zero
    full = preprocessing.quadratic_expansion(X)
    i, j = np.triu_indices(100)
    same_position = (i // 4) == (j // 4)
    dropped = full[:, 100:][:, same_position & (i != j)]
    assert not dropped.any()
    np.testing.assert_array_equal(Q[:, :100], X)


def test_linear_coefficients_read_the_fitted_med_weights():
    from medmtl.med import MEDClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    y = np.where(X[:, 0] - X[:, 2] > 0, 1, -1)
    model = MEDClassifier(selection="features", alpha=1.0, C=1.0).fit(X, y)
    np.testing.assert_allclose(med_lecture.linear_coefficients(model, 4), model.coef_.ravel(), atol=1e-9)


def test_least_squares_fit_matches_numpy_lstsq():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    A = np.hstack([X, np.ones((20, 1))])
    w = np.linalg.solve(A.T @ A, A.T @ y)
    np.testing.assert_allclose(med_lecture.least_squares_fit(X, y)(X), A @ w)


def test_dermatology_cv_uses_the_shared_split_and_keeps_its_legend_off_the_curves():
    import matplotlib

    matplotlib.use("Agg")
    from medmtl.experiments.selection import grid_edge_counts

    result, fig = med_lecture.dermatology_cv(registry.RunOptions(quick=True, use_cache=False))
    assert result.settings["split"] == "shared"
    assert [s["split"] for s in result.extra["selection"]] == ["shared", "per-task"]
    earlier = result.extra["per_task_split_protocol"]["test_mauc_at_chosen"]["per_fold"]
    assert result.extra["test_mauc_at_chosen"]["per_fold"] != earlier
    sel = [s for s in result.extra["selection"] if s["split"] == "shared"]
    for name, edges in result.extra["grid_edges"].items():
        assert edges == grid_edge_counts([c for s in sel for c in s["choices"][name]], edges["grid"],
                                         [p for s in sel for p in s["profiles"][name]])
    fig.canvas.draw()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1  # beside the axes, over none of the error bars


def test_committed_dermatology_cv_rows_come_from_the_per_fold_values():
    from pathlib import Path

    from medmtl.experiments.report import fmt
    from medmtl.experiments.result import load_result

    result = load_result(Path(__file__).resolve().parents[2] / "reproductions" / "dermatology-cv.json")
    rows = [e for e in registry.experiments() if e.name == "dermatology-cv"][0].rows(result)
    summaries = [result.extra, result.extra["per_task_split_protocol"]]
    assert [("shared" in r.method, "per-task" in r.method) for r in rows] == [(True, False), (False, True)]
    for row, summary in zip(rows, summaries):
        v = np.array(summary["test_mauc_at_chosen"]["per_fold"])
        assert f"test MAUC {fmt(v.mean())} ± {fmt(v.std(ddof=1) / np.sqrt(v.size))}" in row.measured
