"""The results page's tables are what the committed full-run results give."""

import json
from pathlib import Path

import pytest

from medmtl.experiments import bench_report, registry, report

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "reproductions"


def test_results_page_is_what_the_committed_results_give(monkeypatch):
    monkeypatch.chdir(ROOT)  # the page names the directories relative to the checkout
    page = (ROOT / report.PAGE).read_text()
    generated = report.generate(page, "reproductions", "benchmarks/results")
    assert report.EDGES_BEGIN in page and bench_report.BEGIN in page
    assert page == generated, f"{report.PAGE} is stale: run python -m medmtl.experiments.report"
    readme = (ROOT / report.README).read_text()
    flags = report.render_edge_flags(report.collect_grid_edges(RESULTS))
    assert readme == report.replace_section(readme, flags, report.FLAGS_BEGIN, report.FLAGS_END)


def test_every_committed_result_is_a_full_run_with_rows():
    names = sorted(p.stem for p in RESULTS.glob("*.json"))
    rows = report.collect_rows(RESULTS)
    with_rows = {entry.name for entry in registry.experiments() if entry.rows is not None}
    for name in names:
        result = json.loads((RESULTS / f"{name}.json").read_text())
        assert result["name"] == name and result["settings"]["quick"] is False
        assert name in with_rows, f"{name}.json is committed but no module gives its rows"
    assert all(row.selection and row.measured for row in rows)


def test_readme_stays_short_and_links_the_results_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) < 15_000 and report.BEGIN not in readme and report.FLAGS_BEGIN in readme
    assert "docs/results.md" in readme


@pytest.mark.parametrize("name", ["dermatology", "landmine-kernels", "heart-pooling", "housing-regression"])
def test_rows_name_a_selection_rule_and_take_their_numbers_from_the_file(name, tmp_path):
    result = registry.run(name, quick=True)
    result.settings["quick"] = False  # stands in for a full run
    result.save(tmp_path)
    rows = report.collect_rows(tmp_path)
    assert rows and all(r.selection and r.measured and r.experiment.startswith(f"`{name}`") for r in rows)
    data = json.loads((tmp_path / f"{name}.json").read_text())
    for label in data["measured"]:
        data["measured"][label] = [0.123456] * len(data["measured"][label])
    (tmp_path / f"{name}.json").write_text(json.dumps(data))
    changed = report.collect_rows(tmp_path)
    assert [r.measured for r in changed] != [r.measured for r in rows]
    assert ".123" in " ".join(r.measured for r in changed)


def test_quick_results_are_refused(tmp_path):
    registry.run("heart-pooling", quick=True, out=tmp_path)
    with pytest.raises(ValueError, match="quick run"):
        report.collect_rows(tmp_path)


def test_the_generated_section_replaces_only_the_text_between_its_markers(tmp_path):
    readme = tmp_path / "results.md"
    readme.write_text(f"# title\n\nbefore\n{report.BEGIN}\nold table\n{report.END}\nafter\n")
    assert report.main(["--results", str(tmp_path / "none"), "--page", str(readme), "--check"]) == 1
    assert report.main(["--results", str(tmp_path / "none"), "--page", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("# title\n\nbefore\n") and text.endswith(f"{report.END}\nafter\n")
    assert "old table" not in text and "| experiment | method | selected by |" in text
    assert report.main(["--results", str(tmp_path / "none"), "--page", str(readme), "--check"]) == 0
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="markers"):
        report.main(["--results", str(tmp_path / "none"), "--page", str(readme)])


def test_a_benchmark_record_becomes_a_table_row(tmp_path):
    # what a bench script writes (benchmarks/_record.py) is what the speed tables show
    import importlib.util

    spec = importlib.util.spec_from_file_location("_record", ROOT / "benchmarks" / "_record.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    record = module.Record("toy", "a toy benchmark")
    record.add("n = 10", "newton", "0.5 s", "SVC 0.25 s", ratio=2.0, note="J equal")
    record.write(tmp_path / "toy.json")
    text = bench_report.render_benchmarks(tmp_path)
    assert "### A toy benchmark" in text and "| n = 10 | newton | 0.5 s | SVC 0.25 s | 2.00x | J equal |" in text
    data = json.loads((tmp_path / "toy.json").read_text())
    assert data["environment"]["machine"]["cpus"] and data["load_average"]["start"] is not None
