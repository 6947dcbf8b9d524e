"""The text feature-selection experiment (``text-feature-selection``): contract, pieces, leakage.

One quick run (module fixture) is checked for the output contract and a few properties; the
pieces are checked against independent references (scikit-learn's tf-idf, a dense group
lasso's optimality conditions, a naive selection loop); the leakage check permutes the test
labels of a reduced run.
"""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from medmtl.baselines.sparse_linear import group_design, group_lasso_fista, logistic_alpha_max
from medmtl.experiments import leakage, registry
from medmtl.experiments import text_features as tf
from medmtl.experiments.report import collect_rows
from medmtl.experiments.runner import RunOptions

NAME = "text-feature-selection"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("text")
    result = registry.run(NAME, quick=True, out=out, progress=False)
    return result, out


def test_quick_run_writes_the_contract(quick):
    result, out = quick
    data = json.loads((out / f"{NAME}.json").read_text())
    assert (out / f"{NAME}.png").stat().st_size > 0
    assert data["name"] == NAME and data["settings"]["quick"] is True
    assert data["x"] == tf.BUDGETS and data["xscale"] == "log"
    assert set(data["extra"]["curves"]) == set(tf.QUICK_DATA_SETS)
    for name in tf.QUICK_DATA_SETS:
        methods = set(data["extra"]["curves"][name])
        expected = set(tf.METHODS) if name in tf.MULTITASK_SETS else set(tf.METHODS) - set(tf.MULTITASK_METHODS)
        assert methods == expected
        for method, curve in data["extra"]["curves"][name].items():
            n = len(curve["sweep"])
            assert n >= 2 and all(len(curve[k]) == n for k in ("n_features", "test", "validation", "seconds"))
            assert all(0 <= f <= data["extra"]["n_features_total"][name] for f in curve["n_features"])
            assert data["extra"]["fit_times"][name][method]["sweep_seconds_mean"] > 0
        for key, values in data["measured"].items():
            assert len(values) == len(tf.BUDGETS) and len(data["measured_std"][key]) == len(tf.BUDGETS)
    # a wider budget never chooses on fewer candidates: its validation score is at least as high
    for name, methods in data["extra"]["budget_choices"].items():
        for method, table in methods.items():
            vals = [table[str(b)][0]["validation"] if table[str(b)][0] else -1 for b in tf.BUDGETS]
            assert vals == sorted(vals) and table["any"][0]["validation"] == max(vals)


def test_quick_figure_has_one_panel_per_data_set_and_says_quick(quick):
    result, _ = quick
    output = registry.get(NAME)(RunOptions(quick=True, progress=False))
    figure = output[1]
    titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
    assert len(titles) == len(tf.QUICK_DATA_SETS) and all("[quick]" in t for t in titles)
    assert all(ax.get_xscale() == "log" for ax in figure.axes if ax.get_title())
    assert any("quick" in text.get_text() for text in figure.texts)


def test_auc_is_well_above_chance_on_the_easy_pair(quick):
    result, _ = quick
    chosen = result.extra["chosen_on_validation"]["baseball vs hockey"]
    assert all(v["test"] > 0.75 for v in chosen.values()), chosen
    # and the sparsest points of the curves are sparse
    curves = result.extra["curves"]["baseball vs hockey"]
    assert min(min(c["n_features"]) for c in curves.values()) <= 10


def test_med_truncation_keeps_only_selected_features(quick):
    """MED's curve scores the predictor restricted to the switches above 1/2; the full
    posterior-mean predictor is recorded beside it, and with no feature kept the truncated
    predictor is a constant (AUC 1/2)."""
    result, _ = quick
    for sel in result.extra["selection"]:
        if sel["method"] in tf.MED_METHODS:
            assert all(p["n_features"] >= 0 for p in sel["points"])
    split = tf.text_split("baseball vs hockey", sizes=tf.QUICK_SIZES["newsgroups"], min_df=tf.QUICK_MIN_DF)
    points = tf.method_sweep("med", split, {"med_Cs": [1.0], "med_alphas": [1e6]})
    (p,) = points
    if p["n_features"] == 0:
        assert p["test"] == 0.5 and p["test_all_features"] != 0.5


def test_readme_rows_say_where_med_wins_and_loses(quick, tmp_path):
    result, _ = quick
    result.settings["quick"] = False  # stands in for a full run
    try:
        result.save(tmp_path)
    finally:
        result.settings["quick"] = True
    rows = [r for r in collect_rows(tmp_path) if r.experiment.startswith(f"`{NAME}`")]
    assert rows and all(r.selection and r.measured for r in rows)
    text = " ".join(r.measured for r in rows)
    assert any(word in text for word in ("MED wins", "MED loses", "no significant difference"))
    assert "switch posterior > 1/2" in " ".join(r.selection for r in rows)


def test_selection_ignores_test_labels():
    leakage.check_selection_ignores_test_labels(NAME, data_sets=["baseball vs hockey"],
                                                methods=["med", "l1_logreg", "skglm_l1"])


def test_multitask_selection_ignores_test_labels():
    leakage.check_selection_ignores_test_labels(NAME, data_sets=["sentiment"], methods=["mtmed", "group_lasso"])


# --------------------------------------------------------------------------------------------
# The pieces, against independent references.

def test_tfidf_matches_scikit_learn_on_the_kept_words():
    from sklearn.feature_extraction.text import TfidfTransformer

    rng = np.random.default_rng(0)
    counts = sp.csr_matrix(rng.poisson(0.3, size=(30, 12)).astype(float))
    other = sp.csr_matrix(rng.poisson(0.3, size=(5, 12)).astype(float))
    fit, out = tf.tfidf_features(counts, other, min_df=4)
    keep = np.flatnonzero((counts.toarray() > 0).sum(0) >= 4)
    reference = TfidfTransformer(sublinear_tf=True).fit(counts[:, keep].toarray())
    np.testing.assert_allclose(fit.toarray(), reference.transform(counts[:, keep].toarray()).toarray())
    np.testing.assert_allclose(out.toarray(), reference.transform(other[:, keep].toarray()).toarray())


def test_split_sizes_are_stratified_and_the_test_labels_are_guarded():
    sizes = {"fit": 20, "validation": 10, "test": 40}
    s = tf.text_split("spam", seed=3, sizes=sizes, min_df=3)
    assert [X.shape[0] for X in s["Xfit"]] == [20] * 15 and [len(y) for y in s["ytest"]] == [40] * 15
    assert all((y == 1).sum() == 10 for y in s["yfit"])
    with leakage.relabel_test_labels(np.negative):
        flipped = tf.text_split("spam", seed=3, sizes=sizes, min_df=3)
    assert all(np.array_equal(a, -b) for a, b in zip(s["ytest"], flipped["ytest"]))
    assert all(np.array_equal(a, b) for a, b in zip(s["yval"], flipped["yval"]))


def test_group_design_holds_each_feature_of_every_task_in_one_group():
    rng = np.random.default_rng(1)
    Xs = [sp.csr_matrix(rng.random((4, 3)) * (rng.random((4, 3)) < 0.6)) for _ in range(2)]
    features = np.array([0, 2])
    design, ptr, idx = group_design(Xs, features)
    dense = design.toarray()
    for k, d in enumerate(features):
        group = idx[ptr[k]:ptr[k + 1]]
        for t, X in enumerate(Xs):
            rows = slice(4 * t, 4 * t + 4)
            np.testing.assert_array_equal(dense[rows, group[t]], X.toarray()[:, d])
            other = [g for g in group if g != group[t]]
            assert not dense[rows][:, other].any()
    intercepts = idx[ptr[len(features)]:]
    np.testing.assert_array_equal(dense[:, intercepts], np.kron(np.eye(2), np.ones((4, 1))))


def test_group_lasso_solution_meets_its_optimality_conditions():
    """skglm's group lasso on the block-diagonal design: for every feature, the gradient of
    the squared loss over its tasks' weights has norm <= alpha where the group is zero and
    equals -alpha times the group's direction where it is not; intercepts are unpenalised."""
    rng = np.random.default_rng(2)
    Xs = [sp.csr_matrix(rng.random((30, 8)) * (rng.random((30, 8)) < 0.5)) for _ in range(3)]
    ys = [np.where(X.toarray()[:, 0] - X.toarray()[:, 1] + 0.1 * rng.normal(size=30) > 0, 1, -1) for X in Xs]
    split = {"Xfit": Xs, "yfit": ys, "Xval": Xs, "yval": ys, "Xtest": Xs, "ytest": ys}
    (point,) = tf._group_lasso_points(split, [0.3])
    # refit the same problem to get the weights, and check them densely
    from skglm.datafits import QuadraticGroup
    from skglm.penalties import WeightedGroupL2
    from skglm.solvers import GroupBCD

    features = np.arange(8)
    design, ptr, idx = group_design(Xs, features)
    y = np.concatenate(ys).astype(float)
    centred = np.concatenate([v - v.mean() for v in ys])
    grad0 = (design[:, :24].T @ centred).reshape(8, 3)
    alpha = 0.3 * np.linalg.norm(grad0, axis=1).max() / len(y)
    weights = np.concatenate([np.ones(8), np.full(3, tf.INTERCEPT_WEIGHT)])
    w = GroupBCD(tol=1e-10, max_iter=1000).solve(design, y, QuadraticGroup(ptr, idx),
                                                  WeightedGroupL2(alpha, weights, ptr, idx))[0]
    A = design.toarray()
    gradient = A.T @ (A @ w - y) / len(y)
    for k in range(8):
        g, wk = gradient[k * 3:(k + 1) * 3], w[k * 3:(k + 1) * 3]
        if np.linalg.norm(wk) == 0:
            assert np.linalg.norm(g) <= alpha * (1 + 1e-6)
        else:
            np.testing.assert_allclose(g, -alpha * wk / np.linalg.norm(wk), atol=1e-6)
    np.testing.assert_allclose(gradient[24:], 0, atol=1e-8)
    assert point["n_features"] == int(np.count_nonzero(np.linalg.norm(w[:24].reshape(8, 3), axis=1)))


def test_curve_and_budget_choice_match_a_naive_loop():
    rng = np.random.default_rng(4)
    points = [{"sweep": float(s), "second": float(c), "validation": float(rng.random()),
               "n_features": int(rng.integers(0, 50)), "test": float(rng.random())}
              for s in range(6) for c in (1.0, 10.0)]
    curve = tf._curve(points)
    for s, p in zip(range(6), curve):
        at = [q for q in points if q["sweep"] == s]
        assert p["validation"] == max(q["validation"] for q in at) and p["sweep"] == s
    for budget in (5, 20, None):
        within = [p for p in curve if budget is None or p["n_features"] <= budget]
        best = tf.budget_choice(curve, budget)
        if within:
            assert best["validation"] == max(p["validation"] for p in within)
        else:
            assert best is None


def test_skglm_l1_and_liblinear_agree_on_the_same_l1_logistic_problem():
    """skglm's alpha and liblinear's C name the same penalty at C = 1 / (n alpha) (liblinear
    also penalises its intercept, which a large intercept_scaling would undo); at a sparse
    setting their supports agree on a small spam task."""
    s = tf.text_split("spam", sizes={"fit": 60, "validation": 10, "test": 20}, min_df=3)
    one = {k: v[:1] for k, v in s.items() if isinstance(v, list)}
    one["n_features"] = s["n_features"]
    ratio = 0.3
    alpha = ratio * logistic_alpha_max(sp.csc_matrix(one["Xfit"][0]), one["yfit"][0])
    (skglm_point,) = tf._skglm_points(one, [ratio], "l1", None)
    (lib_point,) = tf._liblinear_points(one, [1.0 / (60 * alpha)])
    assert abs(skglm_point["n_features"] - lib_point["n_features"]) <= 2


def test_group_lasso_without_extrapolation_reaches_the_block_coordinate_optimum():
    """The fallback of an overflowing skglm fit solves the same group lasso."""
    from skglm.datafits import QuadraticGroup
    from skglm.penalties import WeightedGroupL2
    from skglm.solvers import GroupBCD

    rng = np.random.default_rng(5)
    Xs = [sp.csr_matrix(rng.random((25, 6)) * (rng.random((25, 6)) < 0.5)) for _ in range(2)]
    ys = [np.where(rng.random(25) < 0.5, 1.0, -1.0) for _ in Xs]
    design, ptr, idx = group_design(Xs, np.arange(6))
    y = np.concatenate(ys)
    weights = np.concatenate([np.ones(6), np.full(2, tf.INTERCEPT_WEIGHT)])
    alpha = 0.02
    reference = GroupBCD(tol=1e-12, max_iter=1000).solve(design, y, QuadraticGroup(ptr, idx),
                                                          WeightedGroupL2(alpha, weights, ptr, idx))[0]
    w = group_lasso_fista(design, y, ptr, alpha, weights, tol=1e-10)
    assert w.shape == reference.shape
    np.testing.assert_allclose(design @ w, design @ reference, atol=1e-6)
