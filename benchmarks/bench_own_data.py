"""Every MED method on data nobody prepared for it: a method x case table.

The cases (``tests/med/own_data_cases.py``) are scikit-learn's bundled sets raw and
transformed as a user's own data comes (standardised, rescaled columns, collinear and
dominant columns, near-separable, imbalanced, uneven tasks), each turned into every MED
model kind. Every registered method solves each dual; the table gives, per method, the
relative gap of its ``J`` to the direct solve's (``(J_direct - J) / |J_direct|``: negative
when the method is above the direct solve; ``--reference bound`` takes the gaps to
Algorithm 1's ``J`` instead, for duals where the conic solve takes too long), its time and
status, and whether it warned.
A method that refuses a dual (a clear ValueError, e.g. ``"cd"`` on a kernel evaluated on
demand) shows ``refused``.

Run from the checkout::

    python benchmarks/bench_own_data.py              # every row of every set
    python benchmarks/bench_own_data.py --size test  # the draw the test suite uses
    python benchmarks/bench_own_data.py --data breast_cancer --transforms raw
    python benchmarks/bench_own_data.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "med"))

from own_data_cases import cases  # noqa: E402

from medmtl.med.solvers import solve  # noqa: E402

METHODS = ("direct", "bound", "newton", "cd", "auto")


def run_case(dual, method):
    """``{"J", "time", "status", "warned", "method", "fallback", "inner"}`` of one method on
    one dual (``{"refused"|"error", "time"}`` when it raises); ``inner`` names the QP solver
    ``bound`` ended on where it switched (with its settings), else None."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            sol = solve(dual, method)
        except ValueError as err:
            return {"refused": str(err)[:160], "time": time.perf_counter() - t0}
        except Exception as err:  # noqa: BLE001 - a failure is a row of the table
            return {"error": f"{type(err).__name__}: {str(err)[:160]}", "time": time.perf_counter() - t0}
    warned = [str(w.message)[:160] for w in caught if issubclass(w.category, Warning)]
    inner = sol.info.get("inner_solver_switched")
    if inner and sol.info.get("inner_solver_settings"):
        inner += f" {sol.info['inner_solver_settings']}"
    return {"J": sol.objective, "time": time.perf_counter() - t0, "status": sol.status,
            "method": sol.method, "warned": warned, "fallback": sol.info.get("fallback_to"), "inner": inner}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("test", "full"), default="full")
    parser.add_argument("--data", nargs="*")
    parser.add_argument("--transforms", nargs="*")
    parser.add_argument("--models", nargs="*")
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument("--reference", default="direct",
                        help="the method whose J the gaps are taken to (one of --methods)")
    parser.add_argument("--json", help="write the rows here (rewritten after every case)")
    parser.add_argument("--progress", action="store_true",
                        help="print each method's time and status to stderr as it ends")
    args = parser.parse_args(argv)
    rows = []
    print(f"{'case':44s} " + " ".join(f"{m:>26s}" for m in args.methods))
    for name, build in cases(args.size, args.data, args.transforms, args.models):
        dual = build()
        results = {}
        for m in args.methods:
            results[m] = run_case(dual, m)
            if args.progress:
                r = results[m]
                print(f"  {name} {m}: {r['time']:.2f}s {r.get('status', 'refused/error')}",
                      file=sys.stderr, flush=True)
        ref = results.get(args.reference, {}).get("J")
        cells = []
        for m in args.methods:
            r = results[m]
            if "refused" in r or "error" in r:
                cells.append(f"{'refused' if 'refused' in r else 'ERROR':>26s}")
                continue
            gap = (ref - r["J"]) / max(abs(ref), 1e-300) if ref is not None else np.nan
            r["gap"] = gap
            flag = "W" if r["warned"] else " "
            cells.append(f"{gap:+9.1e} {r['time']:6.2f}s {r['status'][:8]:>8s}{flag}")
        print(f"{name:44s} " + " ".join(cells), flush=True)
        rows.append({"case": name, "n": dual.n, "results": results})
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(rows, fh, indent=1, default=float)
    bad = [(row["case"], m) for row in rows for m, r in row["results"].items()
           if "error" in r or "gap" in r and not (abs(r["gap"]) <= 1e-6 and not r["warned"])]
    print(f"\n{len(rows)} cases; {len(bad)} (case, method) pairs off by more than 1e-6 or warned")
    for case, m in bad:
        r = next(row for row in rows if row["case"] == case)["results"][m]
        if "error" in r:
            print(f"  {case:44s} {m:7s} {r['error']}")
        else:
            print(f"  {case:44s} {m:7s} gap {r['gap']:+.2e} status {r['status']} {r['warned'][:1]}")


if __name__ == "__main__":
    main()
