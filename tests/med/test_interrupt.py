"""Ctrl-C interrupts a long solve: the compiled loops run in chunks, and Python raises the
pending KeyboardInterrupt between them.

Each child installs Python's SIGINT handler itself: a child inherits a parent's ignored
SIGINT (some pool workers ignore it), and Python then keeps ignoring it, which would test
the parent, not the solver."""

import os
import signal
import subprocess
import sys
import time

import pytest

# A badly scaled polynomial-kernel SVM (features around 100): SMO crawls for seconds.
_SMO = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)  # not the parent's disposition
import numpy as np
from medmtl.kernels import PolynomialKernel
from medmtl.med.builders import svm_dual
from medmtl.med.solvers import solve
rng = np.random.RandomState(0)
X = rng.normal(loc=100, size=(100, 2))
y = np.where(rng.randint(0, 2, size=100) > 0, 1, -1)
dual = svm_dual([X], [y], PolynomialKernel(), C=1.0)
solve(dual, "newton", options={"max_iter": 1, "max_steps": 10**5})  # compiled
print("started", flush=True)
solve(dual, "newton", options={"max_steps": 10**9})
"""

# Coordinate passes with a tolerance they cannot meet and no pass limit to speak of.
_CD = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)  # not the parent's disposition
import numpy as np
from medmtl.med.builders import svm_dual
from medmtl.med.solvers import solve
rng = np.random.default_rng(0)
X = rng.normal(size=(3000, 300))
y = np.where(X[:, 0] + rng.normal(size=3000) > 0, 1, -1)
dual = svm_dual([X], [y], C=100.0)
solve(dual, "cd", options={"max_iter": 2})  # compiled
print("started", flush=True)
solve(dual, "cd", options={"max_iter": 10**9, "tol": 0.0, "kkt_tol": 1e-300})
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
@pytest.mark.parametrize("code", [_SMO, _CD], ids=["smo", "cd"])
def test_ctrl_c_interrupts_a_long_solve(code):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "started"
        time.sleep(1.0)
        assert child.poll() is None, "the solve ended before it could be interrupted"
        sent = time.perf_counter()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
        waited = time.perf_counter() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode != 0
    assert "KeyboardInterrupt" in err
    assert waited < 5.0
