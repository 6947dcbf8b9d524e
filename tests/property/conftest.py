"""Hypothesis profiles of the property suite.

``ci`` (the default) is derandomised: every run tries the same cases, within a bounded
budget, and writes no example database into the checkout. ``dev`` draws new cases on every
run (same budget); ``explore`` tries many more. Choose one with ``HYPOTHESIS_PROFILE``.
"""

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=14, derandomize=True, **_COMMON)
settings.register_profile("dev", max_examples=14, **_COMMON)
settings.register_profile("explore", max_examples=300, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
