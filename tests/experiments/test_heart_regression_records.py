"""Heart adaptive pooling and the lecture's regressions (housing, NCI60): the grid-edge counts
are those of the recorded choices and validation profiles, the rows' numbers are those of the
per-split values, and every quick run chooses from two or more grid values, so that a choice
made on test labels would fail the leakage check."""

from pathlib import Path

import numpy as np
import pytest

from medmtl.experiments import leakage, med_heart, med_regression, registry
from medmtl.experiments.report import fmt
from medmtl.experiments.result import load_result
from medmtl.experiments.selection import grid_edge_counts

RESULTS = Path(__file__).resolve().parents[2] / "reproductions"


def _committed(name):
    path = RESULTS / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{name}.json is not committed")
    result = load_result(path)
    if "grid_edges" not in result.extra:
        pytest.skip(f"{name}.json predates the grid-edge counts")
    return result


def _pm(values, digits):
    """Mean ± standard error (ddof = 1), computed here independently of the experiments."""
    v = np.asarray(values, float)
    return f"{fmt(v.mean(), digits)} ± {fmt(v.std(ddof=1) / np.sqrt(v.size), digits)}"


# Each check runs on a quick run and on the committed full run.
@pytest.fixture(scope="module", params=["quick", "committed"])
def heart(request):
    return registry.run("heart-pooling", quick=True) if request.param == "quick" else _committed("heart-pooling")


@pytest.fixture(scope="module", params=["quick", "committed"])
def housing(request):
    if request.param == "quick":
        return registry.run("housing-regression", quick=True)
    return _committed("housing-regression")


@pytest.fixture(scope="module", params=["quick", "committed"])
def nci60(request):
    return registry.run("nci60-regression", quick=True) if request.param == "quick" else _committed("nci60-regression")


def test_quick_runs_choose_from_two_grid_values_or_more():
    for spec, keys in ((med_heart.SPEC, ("Cs", "svm_Cs", "log_alphas")), (med_regression.HOUSING_SPEC, ("Cs",)),
                       (med_regression.NCI60_SPEC, ("Cs",))):
        for key in keys:
            assert len(spec.quick[key]) >= 2, (spec.name, key)


def test_heart_grid_edges_recompute_from_the_selection_records(heart):
    """Each choice against its validation profile, straight from extra["selection"]."""
    Cs, las = heart.settings["Cs"], heart.settings["log_alphas"]
    svm_Cs = heart.settings.get("svm_Cs", Cs)
    records = heart.extra["selection"]
    tol = heart.extra["grid_edges_tol"]
    pooled = [dict(zip(svm_Cs, r["profiles"]["pooled"])) for r in records]
    ind = [dict(zip(svm_Cs, t)) for r in records for t in r["profiles"]["independent"]]
    surface = [np.asarray(r["profiles"]["adaptive"]) for r in records]  # alpha x C
    expected = {
        "pooled SVM C": grid_edge_counts([r["chosen"]["pooled_C"] for r in records], svm_Cs, pooled, tol),
        "independent SVMs C (per task)": grid_edge_counts(
            [c for r in records for c in r["chosen"]["independent_C"]], svm_Cs, ind, tol),
        "adaptive pooling C (joint)": grid_edge_counts(
            [r["chosen"]["adaptive_joint"]["C"] for r in records], Cs, [dict(zip(Cs, g.max(0))) for g in surface], tol),
        "adaptive pooling log alpha (joint)": grid_edge_counts(
            [las[int(np.argmin(np.abs(np.subtract(las, r["chosen"]["adaptive_joint"]["log_alpha"]))))]
             for r in records], las, [dict(zip(las, g.max(1))) for g in surface], tol),
        "adaptive pooling C (per fixed alpha, the curve)": grid_edge_counts(
            [c for r in records for c in r["chosen"]["adaptive_C"]], Cs,
            [dict(zip(Cs, row)) for g in surface for row in g], tol),
    }
    assert heart.extra["grid_edges"] == expected
    # the profiles are the ones the choices were made on: each choice is a best value of its profile
    for r, p in zip(records, pooled):
        assert p[r["chosen"]["pooled_C"]] == max(p.values())
    for r, g in zip(records, surface):
        joint = r["chosen"]["adaptive_joint"]
        assert g.max() == pytest.approx(g[:, Cs.index(joint["C"])].max())
        assert r["validation"]["adaptive"] == pytest.approx(g.max(1).tolist())


def test_heart_rows_recompute_from_the_per_split_values(heart):
    rows = med_heart._heart_readme_rows(heart)
    per = heart.extra["per_split"]
    assert rows[0].measured == _pm([s["adaptive_selected"] for s in per], 4)
    assert rows[1].measured == _pm([s["pooled"] for s in per], 4)
    assert rows[2].measured == _pm([s["independent"] for s in per], 4)
    d = np.subtract([s["adaptive_selected"] for s in per], [s["independent"] for s in per])
    assert rows[4].measured.startswith(f"{'+' if d.mean() >= 0 else '-'}{fmt(abs(d.mean()))} ± "
                                       f"{fmt(d.std(ddof=1) / np.sqrt(d.size))}")
    assert "pooled SVM C:" in rows[-1].measured


def _loss_edges(records, Cs):
    chosen = [C for r in records for C in r["chosen_C"]]
    profiles = [{C: -v for C, v in zip(Cs, row)} for r in records for row in r["validation_profile"]]
    return grid_edge_counts(chosen, Cs, profiles)


def test_housing_grid_edges_recompute_from_the_selection_records(housing):
    records, Cs = housing.extra["selection"], housing.settings["Cs"]
    assert housing.extra["grid_edges"] == {"MED C (per p0)": _loss_edges(records, Cs)}
    for r in records:  # C per p0 is the lowest validation loss of its profile
        for C, row, v in zip(r["chosen_C"], r["validation_profile"], r["validation_loss"]):
            assert v == min(row) == row[Cs.index(C)]


def test_housing_rows_recompute_from_the_per_split_losses(housing):
    rows = med_regression._housing_readme_rows(housing)
    R = np.asarray(housing.extra["per_split_loss"])
    assert rows[0].measured == _pm(R[:, 0], 3)
    assert rows[1].measured == " / ".join(_pm(R[:, j], 3) for j in range(1, R.shape[1]))
    med = R[:, 1:].mean(0)
    gaps = [abs(a - b) for i, a in enumerate(med) for b in med[i + 1:]]
    se = R[:, 1:].std(0, ddof=1) / np.sqrt(len(R))
    assert f"differ by {fmt(min(gaps), 3)} to {fmt(max(gaps), 3)}" in rows[3].measured
    assert f"standard errors of {fmt(se.min(), 3)} to {fmt(se.max(), 3)}" in rows[3].measured
    d = R[:, 1] - R[:, 0]
    assert rows[2].measured.startswith(f"{'+' if d.mean() >= 0 else '-'}{fmt(abs(d.mean()), 3)} ± "
                                       f"{fmt(d.std(ddof=1) / np.sqrt(d.size), 3)}")


def test_nci60_grid_edges_and_rows_recompute_from_the_records(nci60):
    records, Cs = nci60.extra["selection"]["single_line"], nci60.settings["Cs"]
    assert nci60.extra["grid_edges"] == {"MED C (per target line and p0)": _loss_edges(records, Cs)}
    rows = med_regression._nci60_rows(nci60)
    single = np.asarray(nci60.extra["single_line_loss"])
    assert rows[0].measured == " / ".join(_pm(single[:, j], 3) for j in range(single.shape[1]))
    assert [v["mean"] for v in nci60.extra["single_line_table"].values()] == pytest.approx(single.mean(0))


def test_housing_leakage_check_fails_a_choice_made_on_test_labels(monkeypatch):
    """With two values of C in the quick run, a selection that reads the (guarded) test labels
    changes its choice when they are permuted, and the leakage check fails."""
    honest = med_regression.select_per_alpha

    def cheating(scores, alphas):
        y = leakage.guard_test_labels(np.arange(25))  # stands for reading the test targets
        Cs = sorted({C for C, _ in scores})
        C = Cs[0] if y[0] == 0 else Cs[-1]
        return [((C, a), scores[(C, a)]) for a in alphas] if len(Cs) > 1 else honest(scores, alphas)

    monkeypatch.setattr(med_regression, "select_per_alpha", cheating)
    with pytest.raises(AssertionError, match="changed with the test labels"):
        leakage.check_selection_ignores_test_labels("housing-regression")
