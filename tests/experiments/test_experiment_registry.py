"""The registry: names, lookup, and ``run`` building the run options from keywords."""

import pytest

from medmtl.experiments import registry
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import RunOptions

CALLS = []


@registry.register("test-registry-toy", "a toy experiment that records how it was called")
def toy(options=RunOptions(), *, scale=1.0):
    CALLS.append((options, scale))
    return ExperimentResult("test-registry-toy", {"quick": options.quick, "seed": options.seed}, [1],
                            {"value": [scale]})


def test_run_splits_keywords_into_run_options_and_the_experiment_s_own(tmp_path):
    CALLS.clear()
    result = registry.run("test-registry-toy", out=tmp_path, quick=True, seed=3, n_jobs=2, scale=2.0)
    (options, scale), = CALLS
    assert options == RunOptions(quick=True, seed=3, n_jobs=2) and scale == 2.0
    assert result.measured == {"value": [2.0]}
    assert (tmp_path / "test-registry-toy.json").exists() and (tmp_path / "test-registry-toy.png").exists()


def test_unknown_keyword_is_an_error():
    with pytest.raises(TypeError, match="sizes"):
        registry.run("test-registry-toy", sizes=[1])


def test_unknown_experiment_names_the_known_ones():
    with pytest.raises(KeyError, match="dermatology"):
        registry.get("no-such-figure")


def test_every_experiment_takes_run_options_first():
    import inspect

    for name in registry.names():
        params = list(inspect.signature(registry.get(name)).parameters.values())
        assert params[0].name == "options" and params[0].default == RunOptions(), name
        assert all(p.kind is p.KEYWORD_ONLY for p in params[1:]), name
        assert registry.describe(name), name


def test_registering_another_function_under_a_taken_name_fails():
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("test-registry-toy", "again")(lambda options: None)
