"""The ``medmtl reproduce`` command line on the MED experiments."""

import json

from medmtl.experiments import cli

MED_EXPERIMENTS = ["dermatology", "landmine-kernels", "landmine-kernels-poly", "heart-pooling",
                   "splice-roc", "housing-regression", "nci60-regression", "dermatology-cv"]


def test_list_names_every_med_experiment(capsys):
    assert cli.main(["reproduce", "--list"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert set(MED_EXPERIMENTS) <= listed


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


def test_unknown_experiment_exits_2(tmp_path, capsys):
    assert cli.main(["reproduce", "no-such-figure", "--out", str(tmp_path)]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
