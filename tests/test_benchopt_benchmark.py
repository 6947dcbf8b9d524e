"""The benchopt benchmark of the MED dual (benchmarks/benchopt/) and its committed result.

benchopt itself is not a dependency of medmtl: the benchmark's classes are loaded here
against a stand-in for benchopt's three base classes, so that what they compute (the dual,
``-J`` of projected multipliers, each solver's run) is tested wherever medmtl is installed.
"""

import csv
import importlib.util
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

from medmtl.med.solvers import METHODS, solve

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "benchmarks" / "benchopt"
RESULT = ROOT / "benchmarks" / "results" / "benchopt_med.csv"


class _Base:
    """What the benchmark uses of benchopt's base classes: parameters as attributes (the
    first value of each grid unless given), a seed, ``run_once``."""

    parameters = {}

    def __init__(self, **given):
        for name, values in self.parameters.items():
            setattr(self, name, given.get(name, values[0]))

    def get_seed(self, use_repetition=False):
        return 0

    def run_once(self, stop_val=1):
        self.run(stop_val)


@pytest.fixture(scope="module")
def bench():
    """The benchmark's modules, loaded against the stand-in."""
    stand_in = types.ModuleType("benchopt")
    stand_in.BaseObjective = stand_in.BaseSolver = stand_in.BaseDataset = _Base
    criteria = types.ModuleType("benchopt.stopping_criterion")
    criteria.SufficientProgressCriterion = lambda **settings: settings
    saved = {name: sys.modules.get(name) for name in ("benchopt", "benchopt.stopping_criterion")}
    sys.modules.update({"benchopt": stand_in, "benchopt.stopping_criterion": criteria})
    try:
        modules = {}
        for path in [BENCHMARK / "objective.py", *sorted(BENCHMARK.glob("*/*.py"))]:
            spec = importlib.util.spec_from_file_location(f"_bench_{path.parent.name}_{path.stem}", path)
            modules[path.stem] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(modules[path.stem])
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name)
            else:
                sys.modules[name] = module
    return modules


@pytest.fixture(scope="module")
def objective(bench):
    data = bench["synthetic"].Dataset(n_tasks=2, n_samples=40, n_features=12).get_data()
    objective = bench["objective"].Objective()
    objective.set_data(**data)
    return objective


def test_datasets(bench):
    derm = bench["dermatology"].Dataset().get_data()
    assert len(derm["Xs"]) == 6 and all(X.shape == (366, 34) for X in derm["Xs"])
    assert all(set(np.unique(y)) == {-1, 1} for y in derm["ys"])
    synthetic = bench["synthetic"].Dataset().get_data()
    assert len(synthetic["Xs"]) == 4 and synthetic["Xs"][0].shape == (200, 50)


def test_objective_is_minus_J_of_the_projected_multipliers(objective):
    dual = objective.dual
    start = objective.evaluate_result(**objective.get_one_result())
    assert start["value"] == 0.0 and start["infeasibility"] == 0.0
    outside = np.full(dual.n, 2.0 * dual.hi.max())
    result = objective.evaluate_result(outside)
    assert result["infeasibility"] > 0
    assert result["value"] == pytest.approx(-dual.objective(dual.project(outside)))


@pytest.mark.parametrize("method", sorted(METHODS) + ["cvxpy-clarabel"])
def test_every_solver_reaches_the_optimum(bench, objective, method):
    optimum = solve(objective.dual, "direct").objective
    if method == "cvxpy-clarabel":
        solver = bench["cvxpy_clarabel"].Solver()
    else:
        solver = bench["medmtl_methods"].Solver(method=method)
    solver.set_objective(**objective.get_objective())
    solver.run(0)
    assert objective.evaluate_result(**solver.get_result())["value"] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver.run(200)
    result = objective.evaluate_result(**solver.get_result())
    assert result["J"] == pytest.approx(optimum, rel=1e-6)
    assert result["duality_gap"] <= 1e-5 * optimum


def test_the_solver_grid_is_the_registry(bench):
    assert bench["medmtl_methods"].Solver.parameters["method"] == sorted(METHODS)


def test_committed_result_covers_every_solver_and_dataset():
    """The committed run has every registered method and CVXPY on both datasets, every curve
    starts at ``lam = 0``, and no answer is better than its own certificate allows: the best
    ``J`` on a dataset is at most a curve's final ``J`` plus that answer's duality gap."""
    with RESULT.open() as handle:
        rows = list(csv.DictReader(handle))
    solvers = {row["solver"] for row in rows}
    assert solvers == {f"medmtl[method={name}]" for name in METHODS} | {"cvxpy-clarabel"}
    assert {row["dataset"].split("[")[0] for row in rows} == {"dermatology", "synthetic"}
    curves = {}
    for row in rows:
        curves.setdefault((row["dataset"], row["solver"], row["repetition"]), []).append(row)
    for (dataset, _, _), curve in curves.items():
        best = max(float(row["J"]) for row in rows if row["dataset"] == dataset)
        curve.sort(key=lambda row: int(row["stop_val"]))
        assert int(curve[0]["stop_val"]) == 0 and float(curve[0]["J"]) == 0.0
        last = curve[-1]
        assert best - float(last["J"]) <= float(last["duality_gap"]) * (1 + 1e-6) + 1e-9 * best
