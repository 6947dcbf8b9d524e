"""Feature selection on the shapes a user's own data comes in, beside liblinear, in one run.

    python benchmarks/bench_shapes.py [--cases NAME ...] [--threads N|default] [--out PATH]

The rows of the speed issue's table that are feature selection (``C = 1``): MED multi-task
feature selection on one task (``method="auto"``, default tolerances) against liblinear's l1
logistic regression (``l1_ratio=1``, the same ``C``), and on the dense alpha = 10 row also
liblinear's ``LinearSVC``:

* sparse text-like rows (100 nonzeros per row, normal values; ``bench_scaling.make_data``):
  ``n = 2,000, 5,000, 20,000`` at ``D = 20,000`` (0.5 % dense) and ``n = 20,000`` at
  ``D = 100,000`` (0.1 %), ``alpha = 10``;
* dense standard normal features with 20 relevant ones: ``20,000 x 2,000`` at ``alpha = 1``
  (seed 0) and ``alpha = 10`` (seed 1), ``50,000 x 1,000`` at ``alpha = 1``.

Each case runs in a fresh child process. There every side first fits a small problem (the
numba kernels compiled, scikit-learn's first-fit costs paid), then the child builds the data
and fits MED, then the peers, one after the other, so a busy machine slows both alike; a
sparse case does this three times, and the fastest fit of each side counts. The child
reports the wall and CPU times, MED's status, iterations and ``J``, and for the dense cases
the peak resident memory of the fit over the process with ``X`` loaded (``ru_maxrss``), in
multiples of ``X``'s size. Printed: one row per case with the ratio of
the times; written: ``benchmarks/results/shapes.json`` (the rows, the machine, the libraries,
the BLAS threads and the load average at both ends).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _record import Record  # noqa: E402

CASES = {
    # name: (kind, n, D, alpha, seed, peers)
    "sparse 2000x20000": ("sparse", 2000, 20000, 10.0, 0, ("l1",)),
    "sparse 5000x20000": ("sparse", 5000, 20000, 10.0, 0, ("l1",)),
    "sparse 20000x20000": ("sparse", 20000, 20000, 10.0, 0, ("l1",)),
    "sparse 20000x100000": ("sparse", 20000, 100000, 10.0, 0, ("l1",)),
    "dense 20000x2000 a=1": ("dense", 20000, 2000, 1.0, 0, ("l1",)),
    "dense 20000x2000 a=10": ("dense", 20000, 2000, 10.0, 1, ("l1", "svc")),
    "dense 50000x1000 a=1": ("dense", 50000, 1000, 1.0, 0, ("l1",)),
}
_PEER_NAMES = {"l1": "l1 logistic regression (liblinear)", "svc": "LinearSVC (liblinear)"}


def _rss_mb():
    """The resident memory of this process now, in MB (Linux ``/proc``)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(fit):
    w0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fit()
    return time.perf_counter() - w0, time.process_time() - c0, out


def child(name, threads):
    """Run one case in this process and print its measurements as one JSON line."""
    from contextlib import nullcontext

    import sklearn.svm  # noqa: F401 - load every BLAS and OpenMP runtime before limiting
    from threadpoolctl import threadpool_limits

    from bench_scaling import fit_peer, make_data
    from medmtl.med.builders import feature_selection_dual
    from medmtl.med.solvers import solve

    kind, n, D, alpha, seed, peers = CASES[name]
    limit = nullcontext() if threads == "default" else threadpool_limits(int(threads))
    with limit:
        # every side's first call in a process on small data first: the numba kernels
        # compiled, and scikit-learn's and liblinear's first-fit costs paid
        X0, y0 = make_data(kind, 300, min(D, 500), seed=seed)
        solve(feature_selection_dual([X0], [y0], C=1.0, alpha=alpha))
        for peer in peers:
            _fit(peer, X0, y0, fit_peer)
        X, y = make_data(kind, n, D, seed=seed)
        x_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if kind == "sparse" else X.nbytes) / 2**20
        base = _rss_mb()
        wall, cpu, sol = _timed(lambda: solve(feature_selection_dual([X], [y], C=1.0, alpha=alpha)))
        out = {"case": name, "x_mb": x_mb, "rounds": _ROUNDS[kind],
               "medmtl": {"seconds": wall, "cpu": cpu, "method": sol.method, "status": sol.status,
                          "iterations": int(sol.n_iter), "J": float(sol.objective),
                          "kkt_gap": sol.info.get("kkt_gap"),
                          "peak_over_x": (_peak_mb() - base) / x_mb if kind == "dense" else None},
               "peers": {}}
        del sol
        for r in range(_ROUNDS[kind]):
            if r:  # the next round: MED again, then the peers, the fastest of each counting
                wall, cpu, _ = _timed(lambda: solve(feature_selection_dual([X], [y], C=1.0, alpha=alpha)))
                _keep_fastest(out["medmtl"], wall, cpu)
            for peer in peers:
                wall, cpu, _ = _timed(lambda: _fit(peer, X, y, fit_peer))
                _keep_fastest(out["peers"].setdefault(peer, {}), wall, cpu)
    print(json.dumps(out), flush=True)


# Rounds of each case (MED, then the peers, in turn), the fastest of each counting: a
# sparse case takes well under a second a fit, where one fit's timing moves by a third
# between runs; a dense one takes tens of seconds.
_ROUNDS = {"sparse": 3, "dense": 1}


def _fit(peer, X, y, fit_peer):
    if peer == "l1":
        return fit_peer(X, y)
    from sklearn.svm import LinearSVC
    return LinearSVC(C=1.0, dual=True, max_iter=10000).fit(X, y)


def _keep_fastest(entry, wall, cpu):
    """Keep ``(wall, cpu)`` in ``entry`` if it is the fastest wall time so far."""
    if "seconds" not in entry or wall < entry["seconds"]:
        entry["seconds"], entry["cpu"] = wall, cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--threads", default="default", help="BLAS threads: a number or 'default'")
    parser.add_argument("--out", default=str(HERE / "results" / "shapes.json"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.threads)
    record = Record("shapes", "Feature selection on the speed issue's shapes against liblinear "
                    "(bench_shapes.py)", threads=args.threads)
    for name in args.cases:
        done = subprocess.run([sys.executable, __file__, "--child", name, "--threads", args.threads],
                              capture_output=True, text=True, check=False)
        if done.returncode:
            print(f"{name}: the child failed\n{done.stderr[-2000:]}", flush=True)
            record.add(name, "MED feature selection", "failed", note=done.stderr[-300:])
            continue
        got = json.loads(done.stdout.strip().splitlines()[-1])
        med = got["medmtl"]
        memory = "" if med["peak_over_x"] is None else f", fit peak {med['peak_over_x']:.2f}x X"
        note = (f"{med['method']} {med['status']}, {med['iterations']} it, J={med['J']:.10g}, "
                f"X {got['x_mb']:.0f} MB{memory}")
        for peer, t in got["peers"].items():
            ratio = med["seconds"] / t["seconds"]
            record.add(name, f"MED FS alpha={CASES[name][3]:g}", f"{med['seconds']:.2f} s",
                       f"{_PEER_NAMES[peer]} {t['seconds']:.2f} s",
                       f"x{ratio:.2f} (cpu x{med['cpu'] / t['cpu']:.2f})", note)
            print(f"{name:22s} medmtl {med['seconds']:8.2f} s ({med['method']}, {med['status']}, "
                  f"{med['iterations']} it{memory})  {_PEER_NAMES[peer]} {t['seconds']:8.2f} s  "
                  f"x{ratio:.2f} (cpu x{med['cpu'] / t['cpu']:.2f})", flush=True)
    record.write(args.out)
    return None


if __name__ == "__main__":
    main()
