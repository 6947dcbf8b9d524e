"""Every registered online learner on the property suite's generated inputs (Hypothesis).

The same cases and the same check as the batch learners (:mod:`property_strategies`), in
the forms of the online learners: a multi-task stream with a label oracle, or one
multiclass stream. ``test_online_learners.py`` keeps its own streams beside these.

``KNOWN_GAPS`` lists what the online learners did not refuse yet when this suite was
written, each with the reason: a case that fails only that way makes its test an expected
failure (xfail) naming the cases; any other failure fails the test. Remove an entry once
the learners handle it.
"""

import pytest
from hypothesis import given, settings

from property_strategies import ONLINE_SETUPS, Failure, cases, run_case

EXAMPLES = 3 * settings.default.max_examples

KNOWN_GAPS = {}


@pytest.mark.parametrize("setup", ONLINE_SETUPS, ids=repr)
def test_a_clear_error_or_a_correct_answer(setup):
    gaps = []

    @settings(max_examples=EXAMPLES)
    @given(case=cases(setup))
    def check(case):
        try:
            run_case(setup, case)
        except Failure as failure:
            if case.name not in KNOWN_GAPS:
                raise
            gaps.append(f"{case.name} ({failure.kind})")

    check()
    if gaps:
        pytest.xfail("known gaps: " + "; ".join(f"{g}: {KNOWN_GAPS[g.split(' ')[0]]}" for g in sorted(set(gaps))))
