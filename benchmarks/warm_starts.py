"""Warm starts across large jumps of ``(C, alpha)``: every method must reach the optimum
from the previous setting's answer, or say so.

A path (``med_path``, ``*CV`` estimators) starts each solve from the last answer. This probe
takes every own-data case (``tests/med/own_data_cases.py``, the test draw) whose box is
``[0, C]``, solves it by ``"newton"`` at its own ``(C, alpha)``, and starts each method from
that answer at ``C`` times 1e-3, 1e-2 and 1e3 with ``alpha`` times 0.01, 1 and 100. Each answer
is compared with the better of two tight cold solves (``"newton"`` at ``kkt_tol = 1e-11``,
``"ssnal"`` at 1e-10). A solve is flagged when its status is not ``"converged"`` or its ``J``
is more than ``--rtol`` below the reference; the flags print with the number of warnings
the solve raised, so a warning beside a wrong answer and one beside a right answer both
show. Takes about 10 minutes for the three default methods on 2 cores.

Run from the checkout::

    python benchmarks/warm_starts.py                      # newton, cd and ssnal
    python benchmarks/warm_starts.py --methods ssnal
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "med"))

from own_data_cases import cases  # noqa: E402

from medmtl.med.solvers import solve  # noqa: E402

JUMPS = [(1e-3, 100.0), (1e-3, 0.01), (1e3, 100.0), (1e3, 0.01), (1e-2, 1.0)]


def reference(dual):
    """``J`` of the better of two tight cold solves."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best = solve(dual, "newton", options={"kkt_tol": 1e-11}).objective
        try:
            best = max(best, solve(dual, "ssnal", options={"kkt_tol": 1e-10}).objective)
        except ValueError:  # no layout of ssnal takes the dual
            pass
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="newton,cd,ssnal", help="comma-separated methods")
    parser.add_argument("--rtol", type=float, default=1e-6, help="J this far below the reference is wrong")
    args = parser.parse_args(argv)
    methods = args.methods.split(",")
    solves = flagged = wrong = 0
    for name, build in cases("test"):
        start_dual = build()
        if start_dual.lo.min() < 0 or not np.allclose(start_dual.hi, start_dual.hi[0]):
            continue  # a box that replace(C=...) would change in shape
        C = float(start_dual.hi[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = solve(start_dual, "newton").lam
        for c_factor, alpha_factor in JUMPS:
            alpha = max(start_dual.alpha, 1e-3) * alpha_factor if start_dual.n_terms else None
            dual = start_dual.replace(C=C * c_factor, alpha=alpha)
            J_ref = reference(dual)
            for method in methods:
                try:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        sol = solve(dual, method, init=start)
                except ValueError:  # the method does not take this dual
                    continue
                solves += 1
                below = (J_ref - dual.objective(sol.lam)) / max(abs(J_ref), 1e-300)
                if below > args.rtol or sol.status != "converged":
                    flagged += 1
                    wrong += below > args.rtol
                    print(f"{name} C x {c_factor:g}, alpha x {alpha_factor:g}: {method} {sol.status}, "
                          f"J {below:.2e} below the reference, {len(caught)} warning(s)", flush=True)
    print(f"{solves} solves, {flagged} flagged, {wrong} with J more than {args.rtol:g} below the reference")


if __name__ == "__main__":
    main()
