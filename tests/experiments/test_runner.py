"""The grid runner: cell order, the cache, retries, dask, the options and the cell adapter."""

import dataclasses
import os

import numpy as np
import pytest

from medmtl.experiments.runner import CellCall, RunOptions, run_grid


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


def power(base, exponent=2):
    return base ** exponent


def test_grid_results_in_cell_order_and_cached(tmp_path):
    log = str(tmp_path / "log")
    cells = [{"a": a, "log": log} for a in range(6)]
    first = run_grid(square_and_log, cells, name="sq", options=RunOptions(n_jobs=2, cache_dir=tmp_path, progress=False))
    assert [r["value"] for r in first] == [a * a for a in range(6)]
    again = run_grid(square_and_log, cells + [{"a": 6, "log": log}], name="sq",
                     options=RunOptions(cache_dir=tmp_path, progress=False))
    assert again[:6] == first and again[6]["value"] == 36
    assert sorted(open(log).read().split()) == [str(a) for a in range(7)]  # nothing recomputed


def test_interrupted_run_resumes(tmp_path):
    log = str(tmp_path / "log")
    options = RunOptions(cache_dir=tmp_path, progress=False)
    run_grid(square_and_log, [{"a": a, "log": log} for a in range(3)], name="resume", options=options)
    run_grid(square_and_log, [{"a": a, "log": log} for a in range(5)], name="resume", options=options)
    assert sorted(open(log).read().split()) == ["0", "1", "2", "3", "4"]


def test_no_cache_recomputes_and_writes_nothing(tmp_path):
    log = str(tmp_path / "log")
    options = RunOptions(cache_dir=tmp_path / "cache", use_cache=False, progress=False)
    for _ in range(2):
        run_grid(square_and_log, [{"a": 1, "log": log}], name="fresh", options=options)
    assert open(log).read().split() == ["1", "1"]
    assert not (tmp_path / "cache").exists()


def test_failed_cells_are_retried_then_reported(tmp_path):
    options = RunOptions(cache_dir=tmp_path, progress=False)
    cells = [{"a": a, "dir": str(tmp_path)} for a in range(3)]
    assert run_grid(flaky, cells, name="flaky", options=options, retries=1) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="bad cell"):
        run_grid(always_fails, [{"a": 1}], name="fails", options=options, retries=1)


def test_dask_local_cluster_gives_the_same_numbers(tmp_path):
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    log = str(tmp_path / "log")
    cells = [{"a": a, "log": log} for a in range(4)]
    options = RunOptions(cache_dir=tmp_path, use_cache=False, progress=False)
    local = run_grid(square_and_log, cells, name="local", options=options)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        remote = run_grid(square_and_log, cells, name="remote",
                          options=dataclasses.replace(options, backend="dask", client=client))
    assert remote == local


def test_cell_call_passes_the_settings_as_keywords_on_workers(tmp_path):
    cells = [{"base": b, "exponent": 3, "v": 1} for b in range(4)] + [{"base": 5}]
    out = run_grid(CellCall(power), cells, name="power",
                   options=RunOptions(n_jobs=2, cache_dir=tmp_path, progress=False))
    assert out == [0, 1, 8, 27, 25]


def test_cell_call_reports_an_unknown_setting(tmp_path):
    with pytest.raises(RuntimeError, match="unexpected keyword argument 'exponnent'"):
        run_grid(CellCall(power), [{"base": 2, "exponnent": 3}], name="typo",
                 options=RunOptions(cache_dir=tmp_path, progress=False), retries=0)


def test_run_options_are_frozen_and_checked():
    options = RunOptions()
    assert (options.quick, options.seed, options.n_jobs, options.backend, options.use_cache) == (
        False, 0, 1, "loky", True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 1
    with pytest.raises(ValueError, match="backend"):
        RunOptions(backend="spark")


def test_cache_directory_defaults_to_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDMTL_CACHE", str(tmp_path / "env"))
    assert RunOptions().cache == tmp_path / "env"
    assert RunOptions(cache_dir=str(tmp_path / "given")).cache == tmp_path / "given"
