import os
import tempfile

# One cache of finished experiment cells per test run, shared by the xdist workers and the
# notebooks they execute (a notebook re-running an experiment the tests ran reads its cells),
# and never reused by a later run, so every run recomputes from the current code.
_run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
os.environ.setdefault("MEDMTL_CACHE", os.path.join(tempfile.gettempdir(), f"medmtl-test-cache-{_run_id}"))
os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_collection_modifyitems(items):
    # the slow cases first: pytest-xdist then runs them beside the many quick ones instead of
    # after them, and the run ends sooner
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
