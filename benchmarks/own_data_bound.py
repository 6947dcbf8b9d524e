"""``method="bound"`` against the direct solve on the own-data cases where its inner QPs are
worst conditioned: kernel selection on columns rescaled by 1e-4..1e4.

On ``breast_cancer/rescaled/kernels`` (all 569 rows) ``bound`` used to raise "inner QP
solver CLARABEL failed": late in the run OSQP cannot polish the block QP, whose Hessian
``K_B`` has a diagonal from 2e5 to 1e9, and Clarabel at its default static regularisation
stops with "InsufficientProgress". ``bound`` now retries such a block with a smaller
regularisation (``medmtl.med.solvers.bound._INTERIOR_POINT_LADDER``). The table gives, per
case, the relative gap of ``bound``'s ``J`` to the direct solve's
(``(J_direct - J) / |J_direct|``, negative when ``bound`` is above), both times, ``bound``'s
status, and the inner solver it ended on.

Run from the checkout::

    python benchmarks/own_data_bound.py                       # the two rescaled kernel cases
    python benchmarks/own_data_bound.py --transforms raw rescaled dominant --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "med"))

from bench_own_data import run_case  # noqa: E402
from own_data_cases import cases  # noqa: E402


def row(name, dual):
    """One case: direct, then bound, as a dict."""
    ref, got = run_case(dual, "direct"), run_case(dual, "bound")
    out = {"case": name, "n": dual.n, "direct_time": ref["time"], "bound_time": got["time"],
           "warned": got.get("warned", [])}
    for who, answer in (("direct", ref), ("bound", got)):
        if "J" not in answer:
            out["error"] = f"{who}: {answer.get('refused') or answer['error']}"
            return out
    out.update(direct_J=ref["J"], bound_J=got["J"], status=got["status"],
               gap=(ref["J"] - got["J"]) / max(abs(ref["J"]), 1e-300), inner=got["inner"] or "OSQP")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("test", "full"), default="full")
    parser.add_argument("--data", nargs="*", default=["breast_cancer"])
    parser.add_argument("--transforms", nargs="*", default=["rescaled"])
    parser.add_argument("--models", nargs="*", default=["kernels", "mt_kernels"])
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    rows = []
    print(f"{'case':38s} {'n':>5s} {'gap':>9s} {'direct':>8s} {'bound':>8s} {'status':>9s}  inner solver")
    for name, build in cases(args.size, args.data, args.transforms, args.models):
        r = row(name, build())
        rows.append(r)
        if "error" in r:
            print(f"{name:38s} {r['n']:5d} {'ERROR':>9s} {r['direct_time']:7.1f}s {r['bound_time']:7.1f}s  {r['error'][:100]}")
        else:
            flag = " W" if r["warned"] else ""
            print(f"{name:38s} {r['n']:5d} {r['gap']:+9.1e} {r['direct_time']:7.1f}s {r['bound_time']:7.1f}s "
                  f"{r['status'][:9]:>9s}  {r['inner']}{flag}", flush=True)
    bad = [r["case"] for r in rows if "error" in r or abs(r["gap"]) > 1e-6 or r["warned"]]
    print(f"\n{len(rows)} cases; {len(bad)} with an error, a gap above 1e-6 or a warning: {bad}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"what": " ".join(["benchmarks/own_data_bound.py"] + (argv or sys.argv[1:])),
                       "rows": rows}, fh, indent=1, default=float)


if __name__ == "__main__":
    main()
