"""The output contract: ``NAME.json`` and ``NAME.png`` written, read back, and kept by the MED experiments."""

import json
import math

import numpy as np
import pytest

from medmtl.experiments import registry
from medmtl.experiments.result import ExperimentResult, load_result


def test_result_contract_roundtrip(tmp_path):
    r = ExperimentResult("toy", {"seed": 1}, [10, 20], {"a": [0.5, np.float64(0.6)]},
                         {"a": [0.01, 0.02]}, {"a": [0.55, None]}, "n", "AUC")
    json_path, png_path = r.save(tmp_path)
    data = json.loads(json_path.read_text())
    assert set(data) >= {"name", "settings", "x", "measured", "measured_std", "paper"}
    assert data["paper"]["a"] == [0.55, None]
    assert png_path.stat().st_size > 1000
    assert load_result(json_path).x == [10, 20]


def test_nan_and_numpy_values_become_plain_json(tmp_path):
    r = ExperimentResult("nan", {"n": np.int64(3), "on": np.bool_(True)}, np.array([1.0, 2.0]),
                         {"a": np.array([np.nan, 0.5])})
    data = json.loads(r.save(tmp_path)[0].read_text())
    assert data["settings"] == {"n": 3, "on": True}
    assert data["x"] == [1.0, 2.0] and data["measured"]["a"] == [None, 0.5]


# --------------------------------------------------------------------------------------------
# Every MED experiment, quick mode, through the registry, writes the contract. The quick runs
# use the default cell cache (``$MEDMTL_CACHE``, one per test run, set in tests/conftest.py),
# so that the notebooks executed later in the same run reuse the cells.

MED_EXPERIMENTS = ["dermatology", "landmine-kernels", "landmine-kernels-poly", "heart-pooling",
                   "splice-roc", "housing-regression", "nci60-regression", "dermatology-cv"]
AUC_EXPERIMENTS = {"dermatology", "landmine-kernels", "landmine-kernels-poly", "heart-pooling",
                   "splice-roc", "dermatology-cv"}


def _finite(v):
    return isinstance(v, (int, float)) and math.isfinite(v)


@pytest.mark.parametrize("name", MED_EXPERIMENTS)
def test_quick_med_run_writes_the_json_contract(name, tmp_path):
    result = registry.run(name, out=tmp_path, quick=True)
    data = json.loads((tmp_path / f"{name}.json").read_text())
    assert (tmp_path / f"{name}.png").stat().st_size > 1000
    for key in ("name", "settings", "x", "measured", "measured_std", "paper"):
        assert key in data, key
    assert data["name"] == name == result.name
    s = data["settings"]
    assert s["quick"] is True and s["seed"] == 0
    n = len(data["x"])
    assert n >= 1 and data["measured"]
    for method, values in data["measured"].items():
        assert len(values) == n, method
        assert all(_finite(v) for v in values), (method, values)
        if name in AUC_EXPERIMENTS:
            assert all(0.0 <= v <= 1.0 for v in values), (method, values)
        else:
            assert all(v >= 0.0 for v in values), (method, values)
        assert len(data["measured_std"][method]) == n
        assert all(_finite(v) and v >= 0 for v in data["measured_std"][method])
    for method, values in data["paper"].items():
        assert method in data["measured"], method
        assert len(values) == n
        assert all(v is None or _finite(v) for v in values)
