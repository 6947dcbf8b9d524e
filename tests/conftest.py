import os
import tempfile

import pytest

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


@pytest.fixture
def notebook_client():
    """``make(nb, **options)``: an ``nbclient.NotebookClient`` whose kernel talks to it over
    Unix sockets in a private folder, not TCP ports.

    With TCP, each client picks free ports and hands them to its kernel; two xdist workers
    starting kernels at the same moment (the slow tests, notebooks among them, run first)
    can pick the same port, and a client then waits without end for replies its kernel
    never sends. Sockets in a folder of one's own cannot collide.
    """
    import shutil

    nbclient = pytest.importorskip("nbclient")
    from jupyter_client.manager import AsyncKernelManager

    folder = tempfile.mkdtemp(prefix="nbk")  # short: a socket path has at most ~100 bytes

    def make(nb, **options):
        km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(folder, "k"),
                                connection_file=os.path.join(folder, "kernel.json"))
        return nbclient.NotebookClient(nb, km=km, kernel_name="python3", **options)

    yield make
    shutil.rmtree(folder, ignore_errors=True)
