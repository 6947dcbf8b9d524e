"""Speed of the MED solvers against their peers, in one run (ratios printed).

    python benchmarks/bench_med.py [--quick] [--budget SECONDS] [--threads N]

Cases (each with its peer timed in the same run):

* MED SVM (no switches), linear and RBF: ``method="newton"`` against scikit-learn's SVC
  (libsvm, tol 1e-6); both dual objectives printed.
* MED feature selection: ``"newton"`` against the direct CVXPY + Clarabel solve (equal J
  to 1e-6 required) and against SVC on the same data.
* Multi-task kernel selection on Landmine (29 tasks x 200 examples, 9 per-feature + 9 RBF
  kernels): a warm-started path over 10 alpha values against one set of 29 independent
  SVCs.
* Linear feature selection with n = 20,000 and D = 500: peak memory of a fresh process.

Every case also shows where plain Algorithm 1 (``method="bound"``, OSQP) and the direct
solve stand; a run that exceeds ``--budget`` seconds is stopped and shown as ``> budget``.
Each timed run happens in a forked child process, after the numba kernels are compiled, with
BLAS limited to ``--threads`` threads (libsvm and Clarabel are single-threaded). Ratios are
given for wall-clock time and, in parentheses, for the child's CPU time, which a busy shared
machine disturbs less.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _limit_threads(n):
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(int(n))
    except ImportError:  # pragma: no cover
        pass


# ---------------------------------------------------------------------------------------
# Running one timed thing in a child with a time budget
# ---------------------------------------------------------------------------------------
class Seconds(float):
    """Wall-clock seconds, with the child's CPU seconds as ``cpu`` (the machine is shared,
    so CPU time is the steadier measure)."""

    def __new__(cls, wall, cpu):
        obj = super().__new__(cls, wall)
        obj.cpu = cpu
        return obj


def speed_ratio(a, b, what):
    """``"x{wall} {what} (cpu x{cpu})"`` for two :class:`Seconds`."""
    return f"x{a / b:.2f} {what} (cpu x{a.cpu / max(b.cpu, 1e-9):.2f})"


def _child(q, func):
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        out = func()
        q.put(("ok", (time.perf_counter() - t0, time.process_time() - c0), out))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        q.put(("error", (0.0, 0.0), f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"))


def timed(func, budget):
    """Run ``func()`` in a forked child; returns (Seconds, result) or (None, reason)."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q, func))
    p.start()
    # read before joining: a child cannot exit while its queued result is unread
    try:
        status, secs, out = q.get(timeout=budget)
    except Exception:  # noqa: BLE001 - queue.Empty: over budget (or the child died)
        alive = p.is_alive()
        p.terminate()
        p.join()
        return None, f"> {budget:.0f} s" if alive else f"child died (exit code {p.exitcode})"
    p.join()
    if status != "ok":
        return None, out.splitlines()[0]
    return Seconds(*secs), out


# ---------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------
def linear_data(n, D, seed=0, relevant=0.1, noise=0.5, scale=3.0):
    """Gaussian features (rows of norm ~ ``scale``), a sparse true direction, label noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)) * (scale / np.sqrt(D))
    w = rng.normal(size=D) * (rng.random(D) < relevant)
    if not np.any(w):
        w[0] = 1.0
    score = X @ w
    y = np.where(score + noise * score.std() * rng.normal(size=n) > 0, 1, -1)
    return X, y


def landmine_tasks(T, seed=0):
    from medmtl.datasets import load_landmine

    rng = np.random.default_rng(seed)
    ds = load_landmine()
    allX = np.vstack([t.X for t in ds.tasks])
    mu, sd = allX.mean(0), allX.std(0) + 1e-12
    Xs, ys = [], []
    for t in ds.tasks:
        pos, neg = np.flatnonzero(t.y > 0), np.flatnonzero(t.y < 0)
        n_pos = max(2, int(round(T * pos.size / t.y.size)))
        idx = np.concatenate([rng.choice(pos, min(n_pos, pos.size), replace=False),
                              rng.choice(neg, T - min(n_pos, pos.size), replace=False)])
        Xs.append((t.X[idx] - mu) / sd)
        ys.append(t.y[idx])
    return Xs, ys


# ---------------------------------------------------------------------------------------
# Solvers
# ---------------------------------------------------------------------------------------
def newton(dual, init=None):
    from medmtl.med.solvers import solve

    sol = solve(dual, "newton", init=init)
    return {"J": sol.objective, "iters": sol.n_iter, "status": sol.status,
            "steps": int(sum(sol.info["smo_steps"])), "lam": sol.lam}


# Clarabel's own default tolerances: "CVXPY + Clarabel" as a user would run it (the engine's
# direct method defaults to 1e-10, which Clarabel does not always reach).
CLARABEL_DEFAULTS = dict(tol_gap_abs=1e-8, tol_gap_rel=1e-8, tol_feas=1e-8, tol_ktratio=1e-6)


# The slow reference methods each case prints: the direct solve, Algorithm 1 as the seeds
# state it (every inner QP exact, stopped when J gains less than 1e-12 |J|), and Algorithm 1
# with its speed-ups (loose early inner QPs, stopped at an estimated gap of 1e-9 |J|).
SLOW_METHODS = (("direct", "direct", {}),
                ("bound plain", "bound", {"inexact": False}),
                ("bound fast", "bound", {"gap_tol": 1e-9}))


def med(dual, method, **options):
    from medmtl.med.solvers import solve

    if method == "direct":
        options = dict(options, solver_settings=CLARABEL_DEFAULTS)
    try:
        sol = solve(dual, method, options=options)
    except RuntimeError as exc:  # e.g. Clarabel's "optimal_inaccurate": report, keep the time
        return {"J": float("nan"), "iters": "-", "status": str(exc)[:60]}
    inner = sol.info.get("inner_iterations")
    return {"J": sol.objective, "status": sol.status,
            "iters": sol.n_iter if inner is None else f"{sol.n_iter} (inner {inner})"}


def svc_fit(X, y, kernel, C, gamma="scale"):
    from sklearn.svm import SVC

    clf = SVC(kernel=kernel, C=C, tol=1e-6, gamma=gamma, cache_size=256).fit(X, y)
    lam = np.zeros(y.size)
    lam[clf.support_] = np.abs(clf.dual_coef_[0])
    return {"lam": lam, "iters": int(np.sum(clf.n_iter_))}


def warm_up():
    """Import everything and compile the numba kernels once so no timed child pays for it."""
    import cvxpy  # noqa: F401
    import sklearn.svm  # noqa: F401

    import medmtl.med.solvers  # noqa: F401
    from medmtl.kernels import RBFKernel
    from medmtl.med.dual import feature_selection_dual, kernel_selection_dual, svm_dual

    X, y = linear_data(40, 5, seed=1)
    # every compiled specialisation: single- and double-precision columns, kernel columns,
    # per-task blocks
    newton(feature_selection_dual([X], [y], C=1.0, alpha=2.0))
    newton(svm_dual([X], [y], "linear", C=1.0))
    newton(svm_dual([X], [y], RBFKernel(0.2), C=1.0))
    newton(kernel_selection_dual([X[:20], X[20:]], [y[:20], y[20:]], [RBFKernel(0.2), "linear"],
                                 C=1.0, alpha=2.0))


# ---------------------------------------------------------------------------------------
# Table
# ---------------------------------------------------------------------------------------
ROWS = []


def row(case, what, secs, note="", ratio=""):
    t = f"{secs:9.3f} s" if isinstance(secs, float) else f"{secs:>11}"
    ROWS.append((case, what, t, ratio, note))
    print(f"{case:<36} {what:<27} {t}  {ratio:<30} {note}", flush=True)


def rel(a, b):
    return (a - b) / max(abs(b), 1e-300)


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------
def case_svm(n, kernel, budget, run_slow):
    from medmtl.kernels import RBFKernel
    from medmtl.med.dual import svm_dual

    D = 20
    X, y = linear_data(n, D, seed=n + (kernel == "rbf"))
    gamma = 1.0 / (D * X.var())
    name = f"MED SVM {kernel} n={n}"
    k = "linear" if kernel == "linear" else RBFKernel(gamma)
    t_svc, svc = timed(lambda: svc_fit(X, y, kernel, 1.0, gamma), budget)
    t0, c0 = time.perf_counter(), time.process_time()
    dual = svm_dual([X], [y], k, C=1.0)
    t_build = Seconds(time.perf_counter() - t0, time.process_time() - c0)
    t_new, sol = timed(lambda: newton(dual), budget)
    J_svc = dual.objective(svc["lam"]) if t_svc is not None else np.nan
    row(name, "SVC (libsvm, tol 1e-6)", t_svc if t_svc is not None else svc,
        f"J={J_svc:.10g} iters={svc['iters'] if t_svc is not None else '-'}")
    if t_new is None:
        row(name, "newton", sol)
        return
    row(name, "newton (solve)", t_new,
        f"J={sol['J']:.10g} relJ vs SVC {rel(sol['J'], J_svc):+.1e} steps={sol['steps']}",
        speed_ratio(t_new, t_svc, "SVC") if t_svc else "")
    if kernel != "linear":
        total = Seconds(t_new + t_build, t_new.cpu + t_build.cpu)
        row(name, "  + building the MEDDual", t_build, "kernel rows kept; columns on demand",
            speed_ratio(total, t_svc, "SVC") if t_svc else "")
    for label, t, r in slow_solves(name, dual, n, budget, run_slow):
        row(name, label, t, f"J={r['J']:.10g} relJ {rel(r['J'], sol['J']):+.1e} iters={r['iters']}",
            speed_ratio(t, t_new, "newton"))


def slow_solves(name, dual, size, budget, run_slow, label_suffix=""):
    """Time every method of SLOW_METHODS on ``dual``; print the skipped and failed ones.

    Yields ``(label, seconds, result)`` for each solve that finished within ``budget``.
    """
    for label, method, kw in SLOW_METHODS:
        label = label + label_suffix
        if not run_slow(size, method):
            row(name, label, "skipped", "too large for this run")
            continue
        t, r = timed(lambda m=method, k=kw: med(dual, m, **k), budget)
        if t is None:
            row(name, label, r)
        else:
            yield label, t, r


def case_fs(n, D, alpha, budget, run_slow):
    from medmtl.med.dual import feature_selection_dual

    X, y = linear_data(n, D, seed=7 * n + D)
    name = f"feature selection n={n} D={D} a={alpha:g}"
    dual = feature_selection_dual([X], [y], C=1.0, alpha=alpha)
    t_svc, svc = timed(lambda: svc_fit(X, y, "linear", 1.0), budget)
    row(name, "SVC linear (same data)", t_svc if t_svc is not None else svc)
    t_new, sol = timed(lambda: newton(dual), budget)
    if t_new is None:
        row(name, "newton", sol)
        return
    row(name, "newton", t_new, f"J={sol['J']:.10g} iters={sol['iters']} steps={sol['steps']}",
        speed_ratio(t_new, t_svc, "SVC") if t_svc else "")
    for label, t, r in slow_solves(name, dual, n, budget, run_slow):
        row(name, label, t, f"J={r['J']:.10g} relJ newton-vs-it {rel(sol['J'], r['J']):+.1e} "
            f"iters={r['iters']} {r['status'] if r['status'] != 'converged' else ''}",
            f"newton x{t / t_new:.1f} faster (cpu x{t.cpu / max(t_new.cpu, 1e-9):.1f})")


def case_landmine(T, n_alpha, budget, run_slow):
    from medmtl.kernels import per_feature_kernels, rbf_bank
    from medmtl.med.dual import kernel_selection_dual

    Xs, ys = landmine_tasks(T)
    name = f"Landmine KS 29x{T} D=18 path({n_alpha})"
    bank = per_feature_kernels(9) + rbf_bank(np.logspace(-2, 1, 9) / 9.0)
    alphas = np.logspace(-1, 3, n_alpha)

    def svcs():
        for X, y in zip(Xs, ys):
            svc_fit(X, y, "rbf", 1.0)

    t_svc, _ = timed(svcs, budget)
    row(name, "29 independent SVCs (rbf)", t_svc if t_svc is not None else _)
    t0 = time.perf_counter()
    base = kernel_selection_dual(Xs, ys, bank, C=1.0, alpha=alphas[0])
    row(name, "build MEDDual (18 kernels)", time.perf_counter() - t0,
        "kernel rows kept; per-task Gram blocks on the first solve, once for the path")

    def path(warm):
        lam, out = None, []
        for a in alphas:
            r = newton(base.replace(alpha=a), init=lam if warm else None)
            lam = r["lam"]
            out.append((r["J"], r["iters"], r["steps"]))
        return out

    t_warm, warm = timed(lambda: path(True), budget)
    if t_warm is None:
        row(name, "newton warm path", warm)
        return
    its = [w[1] for w in warm]
    row(name, "newton warm path", t_warm, f"Newton iters per alpha {its}",
        speed_ratio(t_warm, t_svc, "SVC") if t_svc else "")
    t_cold, cold = timed(lambda: path(False), budget)
    if t_cold is not None:
        row(name, "newton cold path", t_cold,
            f"max relJ warm-vs-cold {max(abs(rel(w[0], c[0])) for w, c in zip(warm, cold)):.1e}",
            speed_ratio(t_cold, t_svc, "SVC") if t_svc else "")
    # one alpha in the middle of the path, times the number of alphas
    mid = len(alphas) // 2
    d = base.replace(alpha=alphas[mid])
    for label, t, r in slow_solves(name, d, 29 * T, budget, run_slow, " (1 alpha)"):
        row(name, label, t, f"relJ newton-vs-it {rel(warm[mid][0], r['J']):+.1e} "
            f"{r['status'] if r['status'] != 'converged' else ''}",
            f"x{t * n_alpha / t_svc:.0f} SVC time for the path" if t_svc else "")


def memory_child(n, D):
    """Run in a fresh process: fit the linear FS dual and print peak RSS."""
    import resource

    from medmtl.med.dual import feature_selection_dual

    X, y = linear_data(n, D, seed=3)
    t0 = time.perf_counter()
    dual = feature_selection_dual([X], [y], C=1.0, alpha=10.0)
    r = newton(dual)
    secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # MB on Linux
    print(f"PEAK_MB {peak:.0f} SECONDS {secs:.2f} ITERS {r['iters']} STATUS {r['status']}")


def case_memory(n, D, budget):
    name = f"linear FS memory n={n} D={D}"
    cmd = [sys.executable, __file__, "--memory-child", str(n), str(D)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=budget,
                             env=dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1"))
    except subprocess.TimeoutExpired:
        row(name, "newton (fresh process)", f"> {budget:.0f} s")
        return
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("PEAK_MB")]
    if not line:
        row(name, "newton (fresh process)", "failed", out.stderr.strip().splitlines()[-1:])
        return
    parts = line[0].split()
    peak, secs = float(parts[1]), float(parts[3])
    row(name, "newton (fresh process)", secs, f"peak RSS {peak:.0f} MB (incl. interpreter, data)",
        "under 2 GB" if peak < 2048 else "OVER 2 GB")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (about a minute)")
    ap.add_argument("--budget", type=float, default=None, help="seconds per timed run")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads")
    ap.add_argument("--cases", default="svm,fs,landmine,memory",
                    help="comma-separated subset of svm,fs,landmine,memory")
    ap.add_argument("--skip", default="", help="comma-separated methods not to run (direct,bound)")
    ap.add_argument("--memory-child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    _limit_threads(args.threads)
    if args.memory_child:
        memory_child(*args.memory_child)
        return
    budget = args.budget or (30.0 if args.quick else 300.0)
    warm_up()
    print(f"BLAS threads {args.threads}; budget {budget:.0f} s per run; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    cases = set(args.cases.split(","))
    skip = set(filter(None, args.skip.split(",")))
    if args.quick:
        def run_slow(n, method):
            return n <= 1000

        sizes_svm, sizes_fs, lm, mem = (500, 1000), ((500, 50), (1000, 100)), (40, 5), (4000, 200)
        lm_slow = lambda n, m: m == "direct"  # noqa: E731
    else:
        def run_slow(n, method):
            return n <= 2000 or method == "direct"

        sizes_svm, sizes_fs, lm, mem = (2000, 5000), ((2000, 200), (5000, 1000)), (200, 10), (20000, 500)
        lm_slow = lambda n, m: True  # noqa: E731
    if skip:
        def _filtered(rule):
            return lambda n, m: m not in skip and rule(n, m)

        run_slow = _filtered(run_slow)
        lm_slow = _filtered(lm_slow)
    if "svm" in cases:
        for n in sizes_svm:
            case_svm(n, "linear", budget, run_slow)
            case_svm(n, "rbf", budget, run_slow)
    if "fs" in cases:
        for n, D in sizes_fs:
            case_fs(n, D, 10.0, budget, run_slow)
    if "landmine" in cases:
        case_landmine(lm[0], lm[1], budget, lm_slow)
    if "memory" in cases:
        case_memory(mem[0], mem[1], max(budget, 600.0) if not args.quick else budget)

if __name__ == "__main__":
    main()
