"""The page a newcomer reads to add a solver (docs/extending/add_a_solver.md) runs as written."""

import re
from pathlib import Path

from medmtl.med.solvers import METHODS, unregister_method

PAGE = Path(__file__).resolve().parents[2] / "docs" / "extending" / "add_a_solver.md"


def test_the_page_runs_and_its_method_matches_the_direct_solve(capsys):
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) >= 4
    namespace = {}
    try:
        # the blocks build on one another, as a reader runs them
        for code in blocks:
            exec(compile(code, str(PAGE), "exec"), namespace)
        assert "bound-steps" in METHODS
        assert "converged" in capsys.readouterr().out
    finally:
        if "bound-steps" in METHODS:
            unregister_method("bound-steps")
