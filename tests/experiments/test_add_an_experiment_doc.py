"""The page a newcomer reads to add an experiment (docs/extending/add_an_experiment.md) runs
as written."""

import re
from pathlib import Path

from medmtl.experiments import registry

PAGE = Path(__file__).resolve().parents[2] / "docs" / "extending" / "add_an_experiment.md"


def test_the_page_runs_and_its_experiment_is_registered_with_its_spec():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) >= 2
    namespace = {}
    try:
        for code in blocks:
            exec(compile(code, str(PAGE), "exec"), namespace)
        (entry,) = [e for e in registry.experiments() if e.name == "toy-means"]
        assert entry.spec is namespace["SPEC"] and entry.rows is None
    finally:
        registry._EXPERIMENTS.pop("toy-means", None)
