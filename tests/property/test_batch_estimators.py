"""Every public batch learner on generated bad and odd inputs (Hypothesis).

Each case ends in a clear error or a finite, correct answer; the caller's arrays are never
changed; the same data give the same answer; a fitted learner pickles and predicts the
same; changing the training arrays after fit changes nothing (see
:mod:`property_strategies`).
"""

import pytest
from hypothesis import given

from property_strategies import SETUPS, cases, run_case


@pytest.mark.parametrize("setup", SETUPS, ids=repr)
def test_a_clear_error_or_a_correct_answer(setup):
    @given(case=cases(setup))
    def check(case):
        run_case(setup, case)

    check()
