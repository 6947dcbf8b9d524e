import json
import os

import numpy as np
import pytest

from medmtl.experiments.result import ExperimentResult, load_result
from medmtl.experiments.runner import run_grid

CALLS_FILE = "calls.txt"


def square_and_log(cell):
    # records each real evaluation so the test can see what the cache skipped
    with open(cell["log"], "a") as fh:
        fh.write(f"{cell['a']}\n")
    return {"value": cell["a"] ** 2, "noise": float(np.random.default_rng(cell["a"]).normal())}


def flaky(cell):
    # fails on its first attempt for each cell, then succeeds
    marker = f"{cell['dir']}/seen-{cell['a']}"
    if not os.path.exists(marker):
        open(marker, "w").close()
        raise RuntimeError("worker lost")
    return cell["a"]


def always_fails(cell):
    raise ValueError("bad cell")


def test_grid_results_in_cell_order_and_cached(tmp_path):
    log = str(tmp_path / "log")
    cells = [{"a": a, "log": log} for a in range(6)]
    first = run_grid(square_and_log, cells, name="sq", n_jobs=2, cache_dir=tmp_path, progress=False)
    assert [r["value"] for r in first] == [a * a for a in range(6)]
    again = run_grid(square_and_log, cells + [{"a": 6, "log": log}], name="sq", n_jobs=1,
                     cache_dir=tmp_path, progress=False)
    assert again[:6] == first and again[6]["value"] == 36
    assert sorted(open(log).read().split()) == [str(a) for a in range(7)]  # nothing recomputed


def test_interrupted_run_resumes(tmp_path):
    log = str(tmp_path / "log")
    run_grid(square_and_log, [{"a": a, "log": log} for a in range(3)], name="resume",
             cache_dir=tmp_path, progress=False)
    run_grid(square_and_log, [{"a": a, "log": log} for a in range(5)], name="resume",
             cache_dir=tmp_path, progress=False)
    assert sorted(open(log).read().split()) == ["0", "1", "2", "3", "4"]


def test_failed_cells_are_retried_then_reported(tmp_path):
    cells = [{"a": a, "dir": str(tmp_path)} for a in range(3)]
    assert run_grid(flaky, cells, name="flaky", cache_dir=tmp_path, progress=False, retries=1) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="bad cell"):
        run_grid(always_fails, [{"a": 1}], name="fails", cache_dir=tmp_path, progress=False, retries=1)


def test_dask_local_cluster_gives_the_same_numbers(tmp_path):
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    log = str(tmp_path / "log")
    cells = [{"a": a, "log": log} for a in range(4)]
    local = run_grid(square_and_log, cells, name="local", cache_dir=tmp_path, use_cache=False,
                     progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        remote = run_grid(square_and_log, cells, name="remote", backend="dask", client=client,
                          cache_dir=tmp_path, use_cache=False, progress=False)
    assert remote == local


def test_result_contract_roundtrip(tmp_path):
    r = ExperimentResult("toy", {"seed": 1}, [10, 20], {"a": [0.5, np.float64(0.6)]},
                         {"a": [0.01, 0.02]}, {"a": [0.55, None]}, "n", "AUC")
    json_path, png_path = r.save(tmp_path)
    data = json.loads(json_path.read_text())
    assert set(data) >= {"name", "settings", "x", "measured", "measured_std", "paper"}
    assert data["paper"]["a"] == [0.55, None]
    assert png_path.stat().st_size > 1000
    assert load_result(json_path).x == [10, 20]
