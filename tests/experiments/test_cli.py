"""The ``medmtl reproduce`` command line on the MED experiments."""

import json

from medmtl.experiments import cli, registry
from medmtl.experiments.cache import default_cache_dir
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import CellCall, RunOptions, run_grid

MED_EXPERIMENTS = ["dermatology", "landmine-kernels", "landmine-kernels-poly", "heart-pooling",
                   "splice-roc", "housing-regression", "nci60-regression", "dermatology-cv"]


def test_list_names_every_med_experiment(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    listed = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert set(MED_EXPERIMENTS) <= listed
    assert cli.main(["reproduce", "--list"]) == 0  # the older spelling
    assert capsys.readouterr().out == out


def test_quick_run_writes_json_and_png(tmp_path, capsys):
    # dermatology-cv is also run by test_result: the cell cache of this test run
    # makes the second run cheap, and the written files must still be complete.
    assert cli.main(["reproduce", "dermatology-cv", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "dermatology-cv.json" in out
    data = json.loads((tmp_path / "dermatology-cv.json").read_text())
    assert data["name"] == "dermatology-cv" and data["settings"]["quick"] is True
    assert (tmp_path / "dermatology-cv.png").stat().st_size > 1000
    for method in data["measured"]:
        assert method in out
    # the summary labels its numbers: a header row, then x, method, measured, std, paper
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:3] == ["x", "=", "C"])
    assert lines[header].split()[3:] == ["method", "measured", "std", "paper"]
    assert lines[header - 1].startswith("dermatology-cv: validation mean AUC") and "quick run" in lines[header - 1]
    assert len(lines) - header - 1 == len(data["x"]) * len(data["measured"])


def test_unknown_experiment_exits_2(tmp_path, capsys):
    assert cli.main(["reproduce", "no-such-figure", "--out", str(tmp_path)]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def logged_square(a, log):
    with open(log, "a") as fh:
        fh.write(f"{a}\n")
    return a * a


@registry.register("test-cli-toy", "a toy whose cells log their evaluations")
def toy(options=RunOptions()):
    cells = [{"a": a, "log": str(options.cache.parent / "log")} for a in range(2)]
    out = run_grid(CellCall(logged_square), cells, name="test-cli-toy", options=options)
    return ExperimentResult("test-cli-toy", {"quick": options.quick}, [0, 1], {"square": out})


def test_clear_cache_recomputes_and_no_cache_stores_nothing(tmp_path, capsys):
    cache = tmp_path / "cache"
    common = ["--out", str(tmp_path / "out"), "--cache-dir", str(cache)]
    log = tmp_path / "log"

    def run(*flags):
        assert cli.main(["reproduce", "test-cli-toy", *common, *flags]) == 0
        return log.read_text().split()

    assert run() == ["0", "1"]
    assert run() == ["0", "1"]                      # cached
    assert run("--clear-cache") == ["0", "1"] * 2   # deleted, recomputed, stored
    assert run() == ["0", "1"] * 2
    assert cli.main(["reproduce", "--clear-cache", "--cache-dir", str(cache)]) == 0
    assert "deleted 2 stored cell file(s)" in capsys.readouterr().out
    assert run("--no-cache") == ["0", "1"] * 3
    assert not (cache / "test-cli-toy").exists()
    assert run() == ["0", "1"] * 4
    assert cli.main(["cache", "clear", "test-cli-toy", "--cache-dir", str(cache)]) == 0
    assert "deleted 2 stored cell file(s)" in capsys.readouterr().out
    assert run() == ["0", "1"] * 5


def test_the_default_cache_lives_in_the_user_cache_directory_not_the_working_one(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MEDMTL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    (tmp_path / "user-cache" / "medmtl").mkdir(parents=True)  # where the toy writes its log
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert cli.main(["reproduce", "test-cli-toy", "--out", str(tmp_path / "out")]) == 0
    assert list(work.iterdir()) == []
    stored = default_cache_dir() / "test-cli-toy"
    assert stored.is_relative_to(tmp_path) and len(list(stored.glob("*.json"))) == 2
    assert cli.main(["cache", "clear"]) == 0
    assert f"deleted 2 stored cell file(s) from {default_cache_dir()}" in capsys.readouterr().out
    assert not stored.exists()
    monkeypatch.setenv("MEDMTL_CACHE", str(tmp_path / "env"))
    assert default_cache_dir() == tmp_path / "env"
