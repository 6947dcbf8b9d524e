"""Every registered batch learner on generated bad and odd inputs (Hypothesis).

Each case ends in a clear error or a finite, correct answer; the caller's arrays are never
changed; the same data give the same answer; a fitted learner pickles and predicts the
same; changing the training arrays after fit changes nothing (see
:mod:`property_strategies`, whose registry ``SETUPS`` lists the learners).
"""

import pytest
from hypothesis import given, settings

from property_strategies import BATCH_SETUPS, cases, run_case

# three times the profile's budget: a case takes a few milliseconds, and the perturbations
# are many
EXAMPLES = 3 * settings.default.max_examples


@pytest.mark.parametrize("setup", BATCH_SETUPS, ids=repr)
def test_a_clear_error_or_a_correct_answer(setup):
    @settings(max_examples=EXAMPLES)
    @given(case=cases(setup))
    def check(case):
        run_case(setup, case)

    check()
