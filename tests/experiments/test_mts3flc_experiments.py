"""The MTS3FLC experiments in quick mode: output contract, the paper's table, sane numbers."""

import dataclasses

import numpy as np
import pytest

from medmtl.evaluation import paired_t_test
from medmtl.experiments import mts3flc as E
from medmtl.experiments import mts3flc_tables as T
from medmtl.experiments.report import fmt, fmt_difference
from medmtl.experiments.registry import names, run
from medmtl.experiments.result import load_result
from medmtl.experiments.runner import RunOptions


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("mts3flc-cache")


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("mts3flc-out")


def _pm(values):
    """Mean ± standard error (ddof = 1) as the rows print them, computed here independently."""
    v = np.asarray(values, float)
    if v.size < 2:
        return fmt(v.mean(), 2)  # one run: no spread to show
    return f"{fmt(v.mean(), 2)} ± {fmt(v.std(ddof=1) / np.sqrt(v.size), 2)}"


def test_registered():
    assert {"mts3flc-table3", "mts3flc-fig1", "mts3flc-topics", "mts3flc-select"} <= set(names())


def test_paper_table_is_consistent():
    """The transcribed Table III: every row's average is the mean of its six problems."""
    for method, row in E.PAPER_TABLE3.items():
        assert len(row) == 7
        assert np.mean(row[:6]) == pytest.approx(row[6], abs=0.011), method
    assert set(E.PAPER_TABLE3) == {"LG", "pooled LG"} | {f"k_s={k}" for k in E.K_SHARED_GRID}


def test_table3_quick(cache, out):
    result = run("mts3flc-table3", out=out, quick=True, cache_dir=cache)
    saved = load_result(out / "mts3flc-table3.json")
    assert (out / "mts3flc-table3.png").stat().st_size > 0
    assert saved.x == ["comp vs rec", "average"]
    assert set(saved.measured) == {"LG", "pooled LG", "k_s=0", "k_s=5", "k_s=20"}
    for method, values in saved.measured.items():
        assert all(50 <= v <= 100 for v in values), method
        assert len(saved.paper[method]) == 2
    # the average column of one problem is that problem
    assert result.measured["k_s=5"][0] == pytest.approx(result.measured["k_s=5"][1])
    assert len(saved.extra["per_run"]["k_s=5"]["comp-rec"]) == saved.settings["runs"]


def test_table3_rows_recompute_from_per_run(cache, out):
    """Every number of Table III's rows is the mean ± standard error of the per-run values, and
    the paired tests are over the runs of the problem average."""
    run("mts3flc-table3", out=out, quick=True, cache_dir=cache)
    saved = load_result(out / "mts3flc-table3.json")
    per, problems = saved.extra["per_run"], saved.settings["problems"]
    rows = {r.method: r for r in T._table3_readme_rows(saved)}

    def columns(key):
        cols = [100 * np.asarray(per[key][p]) for p in problems]
        return cols + [np.mean(cols, axis=0)]

    assert rows["LG"].measured == " / ".join(_pm(v) for v in columns("LG"))
    assert rows["MTS3FLC, k_s = 5"].measured == " / ".join(_pm(v) for v in columns("k_s=5"))
    d, se, _ = paired_t_test(columns("k_s=5")[-1], columns("pooled LG")[-1])
    (paired,) = [r for m, r in rows.items() if m.startswith("MTS3FLC (k_s = 5) minus pooled LG")]
    assert paired.measured.startswith(f"{fmt_difference(d, 2)} ± {fmt(se, 2)}")
    assert saved.extra["paired_tests"]["pooled LG"]["mean_difference"] == pytest.approx(d)
    # the options' edge counts travel from the selection into the result and its rows
    assert saved.extra["grid_edges"] == E._chosen(RunOptions(quick=True, cache_dir=cache))[1]
    assert any(m.startswith("C on a grid edge") for m in rows)


def test_committed_table3_rows_recompute_from_per_run():
    """The committed Table III: each row's numbers are mean ± standard error of its per-run values."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "reproductions" / "mts3flc-table3.json"
    if not path.exists():
        pytest.skip("mts3flc-table3.json is not committed")
    saved = load_result(path)
    per, problems = saved.extra["per_run"], saved.settings["problems"]
    rows = {r.method: r for r in T._table3_readme_rows(saved)}
    for key, name in (("LG", "LG"), ("k_s=5", "MTS3FLC, k_s = 5")):
        cols = [100 * np.asarray(per[key][p]) for p in problems]
        assert rows[name].measured == " / ".join(_pm(v) for v in cols + [np.mean(cols, axis=0)])
        assert [v.mean() for v in cols] == pytest.approx(saved.measured[key][:-1])


def test_full_table3_carries_paper_numbers(monkeypatch, cache):
    """The non-quick result puts Table III in ``paper`` (grid shrunk here to one cheap cell)."""
    spec = E.SPECS["table3"]
    monkeypatch.setitem(E.SPECS, "table3", dataclasses.replace(spec, grid={**spec.grid, "k_grid": []}))
    calls = []
    chosen = {"baselines": {"C": 7.0}, "factorisation": {"C": 3.0, "normalize_memberships": False}}
    edges = {"baselines C": {"n": 1, "share": 0.0}}
    monkeypatch.setattr(E, "_chosen", lambda options: (chosen, edges))

    def fake_grid(func, cells, **kwargs):
        calls.append(len(cells))
        # every cell runs with what the selection chose, nothing typed in the experiment
        assert all(c["params"] == chosen["baselines"] for c in cells if c["method"] == "baselines")
        return [{"LG": [0.8] * 4, "pooled LG": [0.7] * 4} for _ in cells]

    monkeypatch.setattr(E, "run_grid", fake_grid)
    result, figure = E.table3(RunOptions(cache_dir=cache), runs=2)
    assert figure is not None
    assert calls == [6 * 2]
    assert result.settings["options"] == chosen
    assert result.extra["grid_edges"] == edges  # the selection's edge counts travel with its choice
    assert result.paper["LG"] == E.PAPER_TABLE3["LG"]
    assert result.measured["LG"] == pytest.approx([80.0] * 7)
    assert result.x[-1] == "average" and len(result.x) == 7


def test_fig1_quick(cache, out):
    run("mts3flc-fig1", out=out, quick=True, cache_dir=cache)
    saved = load_result(out / "mts3flc-fig1.json")
    assert saved.x == [2, 6]
    assert set(saved.measured) == {"MTS3FLC", "S3FLC", "LG", "pooled LG"}
    assert all(50 <= v <= 100 for vs in saved.measured.values() for v in vs)
    assert (out / "mts3flc-fig1.png").stat().st_size > 0
    # the README's count of (problem, size) pairs where MTS3FLC is above each baseline
    rows = T._fig1_readme_rows(saved)
    per = saved.extra["per_problem"]
    above = sum(per["MTS3FLC"]["comp-rec"][i] > per["LG"]["comp-rec"][i] for i in range(2))
    (counts,) = [r for r in rows if r.method.startswith("MTS3FLC above each baseline")]
    assert f"LG {above} of 2" in counts.measured
    # the curve's row is the per-run values averaged over problems, mean ± standard error per size
    runs = saved.extra["per_run"]["MTS3FLC"]["comp-rec"]
    assert rows[0].measured == " / ".join(_pm(v) for v in runs)
    assert [np.mean(v) for v in runs] == pytest.approx(saved.measured["MTS3FLC"])
    assert saved.extra["grid_edges"] == E._chosen(RunOptions(quick=True, cache_dir=cache))[1]


def test_topics_quick(cache, out):
    run("mts3flc-topics", out=out, quick=True, cache_dir=cache)
    saved = load_result(out / "mts3flc-topics.json")
    words = saved.extra["specific_topic_words"]
    assert len(words) == 4 and all(len(w["words"]) == 10 for w in words.values())
    assert len(saved.extra["common_topic_words"]) == 4
    assert 0 <= saved.extra["common_topic"] < 5
    assert all(50 <= a <= 100 for a in saved.measured["MTS3FLC accuracy (%)"])


def test_select_quick(cache, out):
    """The settings are chosen on the development problem, and the choice follows the scores."""
    run("mts3flc-select", out=out, quick=True, cache_dir=cache)
    saved = load_result(out / "mts3flc-select.json")
    assert saved.x == [1.0, 100.0]
    assert "development" not in str(saved.settings["problem"]) and "alt.atheism" in saved.settings["problem"]
    m = saved.measured
    chosen = saved.extra["chosen"]
    lg = np.mean([m["LG"], m["pooled LG"]], axis=0)
    assert lg[saved.x.index(chosen["baselines"]["C"])] == pytest.approx(lg.max())
    tag = "normalised" if chosen["factorisation"]["normalize_memberships"] else "not normalised"
    both = np.mean([m[f"S3FLC ({tag})"], m[f"MTS3FLC k_s=5 ({tag})"]], axis=0)
    assert both[saved.x.index(chosen["factorisation"]["C"])] == pytest.approx(both.max())
    for other in ("normalised", "not normalised"):
        rival = np.mean([m[f"S3FLC ({other})"], m[f"MTS3FLC k_s=5 ({other})"]], axis=0)
        assert both.max() >= rival.max()
    assert all(50 <= v <= 100 for vs in m.values() for v in vs)


def test_select_grid_edges_follow_its_development_scores(cache, out):
    """The recorded edge counts are those of the chosen C against the development accuracy at
    every C, recomputed here from the measured means; the means are those of the per-run values."""
    from medmtl.experiments.selection import grid_edge_counts

    run("mts3flc-select", out=out, quick=True, cache_dir=cache)
    saved = load_result(out / "mts3flc-select.json")
    m, grid, chosen = saved.measured, saved.x, saved.extra["chosen"]
    factor_grid = saved.settings["factor_C_grid"]
    assert len(grid) >= 2 and len(factor_grid) >= 2  # the leakage check can see a choice
    base = {C: np.mean([m["LG"][i], m["pooled LG"][i]]) for i, C in enumerate(grid)}
    fact = {C: max(np.mean([m[f"S3FLC ({t})"][grid.index(C)], m[f"MTS3FLC k_s=5 ({t})"][grid.index(C)]])
                   for t in ("normalised", "not normalised")) for C in factor_grid}
    assert saved.extra["grid_edges"] == {
        "baselines C": grid_edge_counts([chosen["baselines"]["C"]], grid, [base]),
        "factorisations C": grid_edge_counts([chosen["factorisation"]["C"]], factor_grid, [fact])}
    for key, runs in saved.extra["per_run"].items():
        assert [np.mean(v) if v else None for v in runs] == pytest.approx(m[key], nan_ok=True)


def test_select_rows_recompute_from_per_run(cache, out):
    """The rows' development accuracies are mean ± standard error of the per-run values at the
    chosen C (checked on made-up per-run values, so that a row typed by hand would fail)."""
    run("mts3flc-select", out=out, quick=True, cache_dir=cache)
    saved = load_result(out / "mts3flc-select.json")
    rng = np.random.default_rng(0)
    saved.extra["per_run"] = {k: [rng.uniform(80, 100, 3).tolist() for _ in saved.x] for k in saved.extra["per_run"]}
    per, chosen = saved.extra["per_run"], saved.extra["chosen"]
    rows = T._select_readme_rows(saved)
    b = saved.x.index(chosen["baselines"]["C"])
    assert f"LG {_pm(per['LG'][b])}, pooled LG {_pm(per['pooled LG'][b])}" in rows[0].measured
    f = saved.x.index(chosen["factorisation"]["C"])
    tag = "normalised" if chosen["factorisation"]["normalize_memberships"] else "not normalised"
    assert f"S3FLC {_pm(per[f'S3FLC ({tag})'][f])}" in rows[1].measured
    edges = saved.extra["grid_edges"]["baselines C"]
    assert f"baselines C: {edges['low'] + edges['high']} of 1" in rows[2].measured


def test_development_problem_shares_no_post_with_the_six_problems():
    """Options are chosen on the development problem: none of its posts (texts) may be a post of
    the six evaluated problems, and it must hold every post of its own four groups."""
    from medmtl.datasets import load_20newsgroups
    from medmtl.datasets.newsgroups_tasks import DEVELOPMENT_TASKS, TOP_CATEGORIES, development_problem

    docs, names, labels = load_20newsgroups()
    group = np.asarray(names)[labels]
    dev_groups = sorted({g for pair in DEVELOPMENT_TASKS for g in pair})
    evaluated = sorted({g for subs in TOP_CATEGORIES.values() for g in subs})
    dev_posts = {docs[i] for i in np.flatnonzero(np.isin(group, dev_groups))}
    evaluated_posts = {docs[i] for i in np.flatnonzero(np.isin(group, evaluated))}
    assert len(dev_groups) == 4 and dev_posts and evaluated_posts
    assert not dev_posts & evaluated_posts
    ds = development_problem()
    assert sum(t.n_samples for t in ds.tasks) == int(np.isin(group, dev_groups).sum())


def test_tiny_labelled_sets_hold_both_classes():
    """With 2 labelled documents per task, a one-class draw is redrawn, others are kept."""
    import scipy.sparse as sp

    from medmtl.datasets import MultiTaskDataset, Task

    rng = np.random.default_rng(0)
    tasks = [Task(sp.csr_matrix(rng.random((n, 5))), np.r_[np.ones(n - m, int), -np.ones(m, int)], f"t{n}")
             for n, m in ((60, 20), (50, 30), (40, 13))]  # unequal classes, as in comp vs talk
    ds = MultiTaskDataset(tasks, "toy")
    redrawn = 0
    for seed in range(40):
        XL, yL, XU, yU = E.labelled_split(ds, 2, seed)
        assert all(np.unique(y).size == 2 for y in yL)
        first = ds.split_indices(train=2, random_state=seed)
        if any(np.unique(t.y[i[0]]).size < 2 for t, i in zip(ds.tasks, first)):
            redrawn += 1
        else:
            for y, t, i in zip(yL, ds.tasks, first):
                np.testing.assert_array_equal(y, t.y[i[0]])
        assert sum(x.shape[0] for x in XU) == sum(t.n_samples for t in ds.tasks) - 6
    assert 0 < redrawn < 40  # the case the redraw is for does occur
