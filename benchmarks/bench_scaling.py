"""How the cost of MED feature selection grows with n and D, beside liblinear, in one run.

    python benchmarks/bench_scaling.py [--quick] [--alpha A] [--budget SECONDS]
                                       [--threads N|default] [--out PATH]

Four series, each over two decades of one size with the other fixed:

* sparse text-like data (``scipy.sparse``, normal values, 100 nonzeros per row): ``n`` from
  200 to 20,000 at ``D = 20,000`` (0.5 % dense), and ``D`` from 2,000 to 200,000 at
  ``n = 2,000``;
* dense standard normal data with 20 relevant features: ``n`` from 500 to 50,000 at
  ``D = 100``, and ``D`` from 20 to 2,000 at ``n = 2,000``.

At every point the MED feature-selection dual is built and solved (``method="auto"``,
``C = 1``) and then liblinear's l1 logistic regression (the same ``C``) is fitted on the
same data, in the same process one after the other, so a busy machine slows both alike. A fit
that takes longer than ``--budget`` seconds ends its series for that library. For each
series the slope of ``log time`` against ``log size`` is fitted by least squares and printed
for both; the points, the slopes, the machine, the library versions and the BLAS threads go to
``benchmarks/results/scaling.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _record import environment  # noqa: E402

ROW_NNZ = 100
RELEVANT = 20

SERIES = {
    # name: (kind, the size varied, its values, the other size)
    "sparse-n": ("sparse", "n", (200, 2000, 20000), 20000),
    "sparse-D": ("sparse", "D", (2000, 20000, 200000), 2000),
    "dense-n": ("dense", "n", (500, 5000, 50000), 100),
    "dense-D": ("dense", "D", (20, 200, 2000), 2000),
}
QUICK_SIZES = {"sparse-n": (200, 2000), "sparse-D": (2000, 20000),
               "dense-n": (500, 5000), "dense-D": (20, 200)}


def make_data(kind, n, D, seed=0):
    """Labels from a sparse true direction with label noise; text-like sparse rows or dense
    standard normal features."""
    rng = np.random.default_rng(seed)
    if kind == "sparse":
        X = sp.random(n, D, density=min(ROW_NNZ / D, 1.0), format="csr", random_state=rng)
        X.data = rng.normal(size=X.nnz)
    else:
        X = rng.standard_normal((n, D))
    w = np.zeros(D)
    k = min(RELEVANT, D)
    w[rng.choice(D, k, replace=False)] = rng.normal(size=k)
    score = np.asarray(X @ w).ravel()
    y = np.where(score + 0.5 * score.std() * rng.normal(size=n) > 0, 1, -1)
    return X, y


def fit_med(X, y, alpha):
    from medmtl.med.builders import feature_selection_dual
    from medmtl.med.solvers import solve

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve(feature_selection_dual([X], [y], C=1.0, alpha=alpha), "auto")
    return time.perf_counter() - t0, {"method": sol.method, "status": sol.status,
                                      "iterations": int(sol.n_iter), "J": float(sol.objective)}


def fit_peer(X, y):
    from medmtl.baselines.sparse_linear import l1_logistic_regression

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = l1_logistic_regression(1.0).fit(X, y)
    return time.perf_counter() - t0, {"iterations": int(np.max(model.n_iter_))}


def slope(sizes, times):
    """Least-squares slope of log(time) against log(size), None for fewer than two points."""
    if len(times) < 2:
        return None
    return float(np.polyfit(np.log(sizes[:len(times)]), np.log(times), 1)[0])


def run_series(name, spec, sizes, alpha, budget):
    kind, varied, _, fixed = spec
    points, med_times, peer_times = [], [], []
    med_on = peer_on = True
    for size in sizes:
        n, D = (size, fixed) if varied == "n" else (fixed, size)
        X, y = make_data(kind, n, D)
        point = {"n": n, "D": D, "nnz": int(X.nnz) if kind == "sparse" else n * D}
        if med_on:
            t_med, info = fit_med(X, y, alpha)
            point["medmtl"] = dict(info, seconds=t_med)
            med_times.append(t_med)
            med_on = t_med <= budget
        if peer_on:
            t_peer, info = fit_peer(X, y)
            point["liblinear_l1_logreg"] = dict(info, seconds=t_peer)
            peer_times.append(t_peer)
            peer_on = t_peer <= budget
        ratio = point["medmtl"]["seconds"] / point["liblinear_l1_logreg"]["seconds"] \
            if "medmtl" in point and "liblinear_l1_logreg" in point else float("nan")
        point["ratio"] = ratio
        med = point.get("medmtl", {})
        print(f"{name:9s} n={n:6d} D={D:6d}  medmtl {med.get('seconds', float('nan')):8.3f} s "
              f"({med.get('method', '-')}, {med.get('status', '-')}, {med.get('iterations', '-')} it)  "
              f"liblinear {point.get('liblinear_l1_logreg', {}).get('seconds', float('nan')):8.3f} s  "
              f"x{ratio:.2f}", flush=True)
        points.append(point)
    result = {"kind": kind, "varied": varied, "fixed": fixed, "points": points,
              "slope_medmtl": slope(sizes, med_times), "slope_liblinear": slope(sizes, peer_times)}
    fmt = (lambda v: "n/a" if v is None else f"{v:.2f}")
    print(f"{name:9s} log-log slope: medmtl {fmt(result['slope_medmtl'])}, "
          f"liblinear {fmt(result['slope_liblinear'])}", flush=True)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two sizes per series, the small ones")
    parser.add_argument("--alpha", type=float, default=10.0)
    parser.add_argument("--budget", type=float, default=300.0,
                        help="a fit longer than this ends its library's series")
    parser.add_argument("--threads", default="1", help="BLAS threads: a number or 'default'")
    parser.add_argument("--series", default=",".join(SERIES), help="comma-separated series names")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "scaling.json"))
    args = parser.parse_args(argv)

    from contextlib import nullcontext

    import sklearn.linear_model  # noqa: F401 - load every BLAS and OpenMP runtime before limiting
    from threadpoolctl import threadpool_limits

    import medmtl.med.solvers  # noqa: F401

    limit = nullcontext() if args.threads == "default" else threadpool_limits(int(args.threads))
    with limit:
        # compile the numba kernels and import the peer before anything is timed
        for kind, n, D in (("sparse", 300, 500), ("dense", 2000, 20)):
            X, y = make_data(kind, n, D)
            fit_med(X, y, args.alpha)
            fit_peer(X, y)
        report = {"alpha": args.alpha, "C": 1.0, "budget": args.budget,
                  "environment": environment(args.threads), "series": {}}
        wanted = [s.strip() for s in args.series.split(",")]
        for name in wanted:
            spec = SERIES[name]
            sizes = QUICK_SIZES[name] if args.quick else spec[2]
            report["series"][name] = run_series(name, spec, sizes, args.alpha, args.budget)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
