"""The page docs/extending/add_an_online_learner.md: its code runs as written."""

import re
from pathlib import Path

import numpy as np

PAGE = Path(__file__).resolve().parents[2] / "docs" / "extending" / "add_an_online_learner.md"


def code_blocks(text):
    """The page's python blocks, each padded with newlines so that tracebacks give page lines."""
    return ["\n" * text[:m.start(1)].count("\n") + m.group(1)
            for m in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M)]


def test_the_page_code_runs_in_order():
    blocks = code_blocks(PAGE.read_text())
    assert len(blocks) == 4
    namespace = {"__name__": "add_an_online_learner"}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)   # each block's asserts must hold
    # the example learners follow the protocol the generic checks test
    from medmtl.online import OnlineLearner

    assert issubclass(namespace["ThresholdPerceptron"], OnlineLearner)
    assert issubclass(namespace["FastThresholdPerceptron"], OnlineLearner)
    assert namespace["slow"].n_rounds_ == 900 and np.isfinite(namespace["slow"]._W).all()
