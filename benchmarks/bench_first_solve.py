"""The first solve in a new Python process: the MED SVM against SVC's first fit.

    python benchmarks/bench_first_solve.py [--processes N] [--out PATH]

The speed issue asks for the MED SVM within SVC's time at n = 2,000 and 5,000, linear and
RBF, "first solve included". ``bench_med.py`` times solves after a warm-up in the same
process; this script times the first one. Each side runs in new processes of its own: one
imports its library and builds ``bench_med.py``'s data (``linear_data(n, 20)``, the same
seed and gamma as there), then times its first fit and a second one. MED fits
``solve(svm_dual(...), "auto")`` on a freshly built dual, and SVC fits as ``bench_med.py``'s
``svc_fit`` does (``tol=1e-6``, ``cache_size=256``) with the same C and gamma. Imports and data are not timed. Each side runs
in ``--processes`` new processes (3 by default), and the fastest first fit counts.

In MED's first solve, numba loads its compiled kernels from the on-disk cache and builds
its typing context, once per process; at n = 5,000 RBF the column cache's memory is also
touched for the first time. SVC's first fit pays scikit-learn's first-call costs. Printed: a
row per case, with the ratio of the first fits; written: ``benchmarks/results/first_solve.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _record import Record  # noqa: E402

CASES = (("linear", 2000), ("rbf", 2000), ("linear", 5000), ("rbf", 5000))


def child(side, kernel, n):
    """In a new process: the first and the second fit of ``side``, as one JSON line."""
    from bench_med import linear_data, svc_fit

    if side == "med":
        from medmtl.kernels import RBFKernel
        from medmtl.med.builders import svm_dual
        from medmtl.med.solvers import solve
    else:
        import sklearn.svm  # noqa: F401 - imported before the clock starts
    X, y = linear_data(n, 20, seed=n + (kernel == "rbf"))
    gamma = 1.0 / (20 * X.var())

    def fit():
        if side == "med":
            return solve(svm_dual([X], [y], "linear" if kernel == "linear" else RBFKernel(gamma), C=1.0),
                         "auto").objective
        return svc_fit(X, y, kernel, 1.0, gamma)  # bench_med.py's SVC (tol 1e-6, 256 MB cache)

    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        fit()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"first": times[0], "second": times[1]}), flush=True)


def run_child(side, kernel, n):
    out = subprocess.run([sys.executable, __file__, "--child", side, kernel, str(n)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=3, help="new processes per side and case")
    parser.add_argument("--out", default=None, help="default: benchmarks/results/first_solve.json")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        side, kernel, n = args.child
        child(side, kernel, int(n))
        return
    record = Record("first_solve", "The first solve in a new process: MED SVM (auto) against SVC's "
                    "first fit (bench_first_solve.py)")
    for kernel, n in CASES:
        runs = {"med": [], "svc": []}
        for _ in range(args.processes):
            for side in runs:  # in turn, so a busy moment slows both alike
                runs[side].append(run_child(side, kernel, n))
        med = min(runs["med"], key=lambda r: r["first"])
        svc = min(runs["svc"], key=lambda r: r["first"])
        ratio = med["first"] / svc["first"]
        case = f"SVM {kernel} n={n}"
        print(f"{case:<20} MED first {med['first']:.3f} s (then {med['second']:.3f} s)  "
              f"SVC first {svc['first']:.3f} s (then {svc['second']:.3f} s)  x{ratio:.2f}", flush=True)
        record.add(case, f"first fit in a new process, fastest of {args.processes} processes",
                   f"{med['first']:.3f} s (second fit {med['second']:.3f} s)",
                   f"SVC (libsvm) {svc['first']:.3f} s (second fit {svc['second']:.3f} s)",
                   f"x{ratio:.2f} SVC's first fit")
    record.write(args.out)


if __name__ == "__main__":
    main()
