"""Speed of the MED solvers against their peers, in one run (ratios printed).

    python benchmarks/bench_med.py [--quick] [--budget SECONDS] [--threads N|default]
                                   [--cases svm,fs,landmine,memory,text,multitask,dense,
                                            bigsparse,threads,poly]

Cases (each with its peer timed in the same run):

* MED SVM (no switches), linear and RBF: ``method="auto"`` (the default: ``"cd"`` for the
  linear SVM from 2,000 rows, ``"newton"`` for kernels) and ``"newton"``, each building and
  solving its dual afresh, against scikit-learn's SVC (libsvm, tol 1e-6); both dual
  objectives printed. SVC and the two MED runs are timed in turn in one child, three
  rounds, the fastest run of each counting (:func:`timed_together`): in separate children,
  on the 2-core virtual machine of the committed runs, the first child after SVC's that
  asked for huge pages (the RBF column slab: 30 MB at n = 2,000, 170 MB at 5,000) paid
  about 0.4 ms of system time per 2 MB page (0.47 s of a 0.72 s solve at n = 5,000), the
  next child 0.03 s in all, so whichever row came first showed it.
* MED feature selection: ``"newton"`` against the direct CVXPY + Clarabel solve (equal J
  to 1e-6 required) and against SVC on the same data.
* Multi-task kernel selection on Landmine (29 tasks x 200 examples, 9 per-feature + 9 RBF
  kernels): a warm-started path over 10 alpha values (the dual built and its per-task Gram
  blocks formed within it) against one set of 29 independent SVCs, timed in turn in one
  child as the SVM case.
* Linear feature selection with n = 20,000 and D = 500: peak memory of a fresh process.
* ``text``: linear MED feature selection (``method="cd"``) on a sparse tf-idf 20 Newsgroups
  pair (all posts, all words) against liblinear's LinearSVC (hinge loss, the MED SVM's) and
  l1 LogisticRegression, same C, the three timed in turn in one child as the SVM case (the
  ratio column is against the l1 logistic regression, the speed issue's peer); J against
  Newton at a tight tolerance on the whole problem and against the direct solve on a
  subsample.
* ``multitask``: multi-task MED feature selection on the 15 spam users and the 4 sentiment
  domains (tf-idf) against the same peers fitted per task, their times added up, timed as
  ``text``.
* ``dense``: the linear MED SVM and feature selection, dense n = 5,000, D = 1,000, against
  LinearSVC.
* ``bigsparse``: feature selection on sparse n = 100,000, D = 100,000, 10 M nonzeros in a
  fresh process: time and peak memory.
* ``threads``: a feature-selection fit with the default BLAS threads beside two busy
  processes, against the same fit with one BLAS thread (fresh processes).
* ``poly``: ``MEDRegressor``/``MEDClassifier(kernel="poly")`` on scikit-learn's common-check
  data (features around 100) against SVR/SVC with the same kernel.

The first four cases also show where plain Algorithm 1 (``method="bound"``, OSQP) and the
direct solve stand; a run that exceeds ``--budget`` seconds is stopped and shown as
``> budget``. Each timed run happens in a forked child process, after the numba kernels are
compiled, with BLAS limited to ``--threads`` threads (``default``: BLAS's own number; libsvm,
liblinear and Clarabel are single-threaded). Ratios are given for wall-clock time and, in
parentheses, for the child's CPU time, which a busy shared machine disturbs less.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _record import Record  # noqa: E402


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


def _child_together(q, funcs, repeat):
    try:
        best, outs = [None] * len(funcs), [None] * len(funcs)
        for _ in range(repeat):
            for k, func in enumerate(funcs):
                t0, c0 = time.perf_counter(), time.process_time()
                outs[k] = func()
                secs = (time.perf_counter() - t0, time.process_time() - c0)
                best[k] = secs if best[k] is None or secs[0] < best[k][0] else best[k]
        q.put(("ok", best, outs))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        q.put(("error", None, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"))


def timed_together(funcs, budget, repeat=3):
    """Run every ``func`` of ``funcs`` in one forked child, in turn, for ``repeat`` rounds (the
    fastest run of each counts): a peer and medmtl then meet the same process state, where
    separate children do not (the first child after a large one paid fresh memory at up to
    twice the time of the next). Returns a list of (Seconds, result), or (None, reason) for
    every one when the child fails or runs over ``budget`` seconds per function."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_together, args=(q, funcs, repeat))
    p.start()
    # read before joining: a child cannot exit while its queued result is unread
    try:
        status, secs, out = q.get(timeout=budget * len(funcs))
    except Exception:  # noqa: BLE001 - queue.Empty: over budget (or the child died)
        alive = p.is_alive()
        p.terminate()
        p.join()
        reason = f"> {budget:.0f} s" if alive else f"child died (exit code {p.exitcode})"
        return [(None, reason)] * len(funcs)
    p.join()
    if status != "ok":
        return [(None, out.splitlines()[0])] * len(funcs)
    return [(Seconds(*t), o) for t, o in zip(secs, out)]


def timed(func, budget, repeat=1):
    """Run ``func()`` in a forked child, ``repeat`` times in a row (the fastest run counts:
    the first touches of fresh memory cost the same work very different system times on a
    shared machine); returns (Seconds, result) or (None, reason)."""
    return timed_together([func], budget, repeat)[0]


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
def newton(dual, init=None, **options):
    from medmtl.med.solvers import solve

    sol = solve(dual, "newton", init=init, options=options)
    return {"J": sol.objective, "iters": sol.n_iter, "status": sol.status,
            "steps": int(sum(sol.info["smo_steps"])), "lam": sol.lam}


def med_default(dual, method):
    """``solve(dual, method)`` with the method's own options: J, and the method that ran."""
    from medmtl.med.solvers import solve

    sol = solve(dual, method)
    return {"J": sol.objective, "method": sol.method}


def cd(dual, init=None):
    from medmtl.med.solvers import solve

    sol = solve(dual, "cd", init=init)
    return {"J": sol.objective, "iters": sol.n_iter, "status": sol.status,
            "faces": sol.info["face_steps"], "selected": int(np.sum(sol.switch_posterior > 0.5))}


def liblinear_fits(Xs, ys, C, which):
    """LinearSVC (hinge loss) or l1 LogisticRegression fitted on each task in turn."""
    import warnings

    from sklearn.svm import LinearSVC

    from medmtl.experiments.svm_baselines import l1_logistic_regression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for X, y in zip(Xs, ys):
            if which == "LinearSVC":
                LinearSVC(C=C, loss="hinge", max_iter=100000).fit(X, y)
            else:
                l1_logistic_regression(C).fit(X, y)


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
    from medmtl.med.builders import feature_selection_dual, kernel_selection_dual, svm_dual

    X, y = linear_data(40, 5, seed=1)
    # every compiled specialisation: single- and double-precision columns, kernel columns,
    # per-task blocks
    newton(feature_selection_dual([X], [y], C=1.0, alpha=2.0))
    newton(svm_dual([X], [y], "linear", C=1.0))
    newton(svm_dual([X], [y], RBFKernel(0.2), C=1.0))
    newton(kernel_selection_dual([X[:20], X[20:]], [y[:20], y[20:]], [RBFKernel(0.2), "linear"],
                                 C=1.0, alpha=2.0))
    cd(feature_selection_dual([X], [y], C=1.0, alpha=2.0))
    cd(svm_dual([X], [y], "linear", C=1.0))


# ---------------------------------------------------------------------------------------
# Table
# ---------------------------------------------------------------------------------------
ROWS = []
CASES = ("svm", "fs", "landmine", "memory", "text", "multitask", "dense", "bigsparse", "threads",
         "poly")


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
    from medmtl.med.builders import svm_dual

    D = 20
    X, y = linear_data(n, D, seed=n + (kernel == "rbf"))
    gamma = 1.0 / (D * X.var())
    name = f"MED SVM {kernel} n={n}"
    k = "linear" if kernel == "linear" else RBFKernel(gamma)
    # SVC and both MED runs timed in turn in one child, three rounds, the fastest of each
    # counting; every MED run builds its dual afresh, so each is a first solve
    timings = timed_together([lambda: svc_fit(X, y, kernel, 1.0, gamma)]
                             + [lambda m=m: med_default(svm_dual([X], [y], k, C=1.0), m)
                                for m in ("auto", "newton")], budget)
    t_svc, svc = timings[0]
    dual = svm_dual([X], [y], k, C=1.0)
    J_svc = dual.objective(svc["lam"]) if t_svc is not None else np.nan
    row(name, "SVC (libsvm, tol 1e-6)", t_svc if t_svc is not None else svc,
        f"J={J_svc:.10g} iters={svc['iters'] if t_svc is not None else '-'}")
    sol = None
    for (label, method), (t, r) in zip((("auto", "auto"), ("newton", "newton")), timings[1:]):
        if t is None:
            row(name, label, r)
            continue
        row(name, f"{label} (build+solve)", t,
            f"{r['method']} J={r['J']:.10g} relJ vs SVC {rel(r['J'], J_svc):+.1e}",
            speed_ratio(t, t_svc, "SVC") if t_svc else "")
        if method == "newton":
            t_new, sol = t, r
    if sol is None:
        return
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
    from medmtl.med.builders import feature_selection_dual

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
    from medmtl.med.builders import kernel_selection_dual

    Xs, ys = landmine_tasks(T)
    name = f"Landmine KS 29x{T} D=18 path({n_alpha})"
    bank = per_feature_kernels(9) + rbf_bank(np.logspace(-2, 1, 9) / 9.0)
    alphas = np.logspace(-1, 3, n_alpha)

    def svcs():
        for X, y in zip(Xs, ys):
            svc_fit(X, y, "rbf", 1.0)

    t0 = time.perf_counter()
    base = kernel_selection_dual(Xs, ys, bank, C=1.0, alpha=alphas[0])
    build = time.perf_counter() - t0

    def path(warm):
        # a fresh copy of the dual (its own workspace): each timed path builds the per-task
        # Gram blocks on its first solve, as a user's first path does
        dual = kernel_selection_dual(Xs, ys, bank, C=1.0, alpha=alphas[0])
        lam, out = None, []
        for a in alphas:
            r = newton(dual.replace(alpha=a), init=lam if warm else None)
            lam = r["lam"]
            out.append((r["J"], r["iters"], r["steps"]))
        return out

    # the SVCs and both paths timed in turn in one child, three rounds, the fastest counting
    (t_svc, _), (t_warm, warm), (t_cold, cold) = timed_together(
        [svcs, lambda: path(True), lambda: path(False)], budget)
    row(name, "29 independent SVCs (rbf)", t_svc if t_svc is not None else _)
    row(name, "build MEDDual (18 kernels)", build,
        "kernel rows kept; per-task Gram blocks on the first solve, once for the path")
    if t_warm is None:
        row(name, "newton warm path", warm)
        return
    its = [w[1] for w in warm]
    row(name, "newton warm path (build included)", t_warm, f"Newton iters per alpha {its}",
        speed_ratio(t_warm, t_svc, "SVC") if t_svc else "")
    if t_cold is not None:
        row(name, "newton cold path (build included)", t_cold,
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

    from medmtl.med.builders import feature_selection_dual

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


# ---------------------------------------------------------------------------------------
# Linear models at liblinear speed
# ---------------------------------------------------------------------------------------
TEXT_PAIR = ("alt.atheism", "soc.religion.christian")


def newsgroups_pair(pair=TEXT_PAIR):
    """tf-idf of every post of two newsgroups over every word they use (no stop list, no
    document-frequency cut), labels +1 for the first group."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

    from medmtl.datasets import load_20newsgroups

    docs, names, labels = load_20newsgroups("all")
    first, second = names.index(pair[0]), names.index(pair[1])
    keep = np.flatnonzero((labels == first) | (labels == second))
    counts = CountVectorizer().fit_transform([docs[i] for i in keep])
    X = TfidfTransformer().fit_transform(counts).tocsr()
    return X, np.where(labels[keep] == first, 1, -1)


def text_tasks(name):
    """The 15 spam users or the 4 sentiment domains, tf-idf fitted on all tasks' counts."""
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfTransformer

    from medmtl.datasets import load_sentiment, load_spam

    ds = load_spam() if name == "spam" else load_sentiment()
    tfidf = TfidfTransformer().fit(sp.vstack([t.X for t in ds.tasks]))
    return [tfidf.transform(t.X).tocsr() for t in ds.tasks], [t.y for t in ds.tasks]


def peers_and_cd(name, Xs, ys, C, dual, budget, what):
    """Both liblinear peers and MED ``cd`` on ``dual``, timed in turn in one child, three
    rounds, the fastest of each counting (:func:`timed_together`); prints a row each, the
    MED row with its ratio to the l1 logistic regression (the issue's peer) and to the
    slower peer. Returns cd's result or None."""
    which = ("LinearSVC", "l1 LogisticRegression")
    timings = timed_together([lambda w=w: liblinear_fits(Xs, ys, C, w) for w in which]
                             + [lambda: cd(dual)], budget)
    for w, (t, out) in zip(which, timings):
        row(name, f"{w} (liblinear)" + (" per task, summed" if len(Xs) > 1 else ""),
            t if t is not None else out)
    (t_svc, _), (t_l1, _), (t, r) = timings
    if t is None:
        row(name, what, r)
        return None
    slowest = max(t_svc, t_l1, key=float) if t_svc is not None and t_l1 is not None else None
    row(name, what, t, f"J={r['J']:.10g} passes={r['iters']} faces={r['faces']} "
        f"selected={r['selected']} {r['status']}; "
        + (speed_ratio(t, slowest, "slower peer") if slowest else ""),
        speed_ratio(t, t_l1, "l1 LR") if t_l1 else "")
    return r


def med_cd(name, dual, slowest, budget, what="MED cd"):
    t, r = timed(lambda: cd(dual), budget)
    if t is None:
        row(name, what, r)
        return None
    row(name, what, t, f"J={r['J']:.10g} passes={r['iters']} faces={r['faces']} "
        f"selected={r['selected']} {r['status']}",
        speed_ratio(t, slowest, "slower peer") if slowest else "")
    return r


def case_text(budget, quick):
    from medmtl.med.builders import feature_selection_dual

    X, y = newsgroups_pair()
    if quick:
        X, y = X[::4], y[::4]
    C, alpha = 1.0, 10.0
    name = f"text FS 20NG {X.shape[0]}x{X.shape[1]} nnz={X.nnz}"
    t0, c0 = time.perf_counter(), time.process_time()
    dual = feature_selection_dual([X], [y], C=C, alpha=alpha)
    row(name, "build MEDDual", Seconds(time.perf_counter() - t0, time.process_time() - c0))
    r = peers_and_cd(name, [X], [y], C, dual, budget, f"MED FS cd (alpha={alpha:g})")
    if r is None:
        return
    t, ref = timed(lambda: newton(dual, kkt_tol=1e-9), budget)
    row(name, "newton, kkt_tol=1e-9 (J ref)", t if t is not None else ref,
        f"relJ cd-vs-it {rel(r['J'], ref['J']):+.1e}" if t is not None else "")
    # the direct solve on a subsample: every 8th post (its words only)
    Xs, ys = X[::8], y[::8]
    Xs = Xs[:, np.flatnonzero(np.diff(Xs.tocsc().indptr))]
    sub = feature_selection_dual([Xs], [ys], C=C, alpha=alpha)
    t, d = timed(lambda: med(sub, "direct"), budget)
    t2, c = timed(lambda: cd(sub), budget)
    if t is not None and t2 is not None:
        row(name, f"  subsample {Xs.shape[0]}x{Xs.shape[1]}: direct", t,
            f"relJ cd-vs-direct {rel(c['J'], d['J']):+.1e}", f"cd {t2:.3f} s")


def case_multitask(budget, quick):
    from medmtl.med.builders import feature_selection_dual

    for data in ("spam", "sentiment"):
        Xs, ys = text_tasks(data)
        if quick:
            Xs, ys = [X[::4] for X in Xs], [y[::4] for y in ys]
        C, alpha = 1.0, 10.0
        name = f"multi-task FS {data} {len(Xs)}x{Xs[0].shape[0]} D={Xs[0].shape[1]}"
        dual = feature_selection_dual(Xs, ys, C=C, alpha=alpha)
        r = peers_and_cd(name, Xs, ys, C, dual, budget, f"MED multi-task FS cd (alpha={alpha:g})")
        if r is None:
            continue
        # J against the direct solve on a subsample: every 20th example of each task, the
        # words they use (Newton's rank-one curvature of these wide shared terms is an
        # n x D matrix: 28 GB for the sentiment domains)
        subs, sub_ys = [X[::20] for X in Xs], [y[::20] for y in ys]
        used = np.flatnonzero(np.diff(sum(abs(X) for X in subs).tocsc().indptr))
        sub = feature_selection_dual([X[:, used] for X in subs], sub_ys, C=C, alpha=alpha)
        t, d = timed(lambda: med(sub, "direct"), budget)
        t2, c = timed(lambda: cd(sub), budget)
        if t is not None and t2 is not None:
            row(name, f"  subsample {sum(X.shape[0] for X in subs)}x{used.size}: direct", t,
                f"relJ cd-vs-direct {rel(c['J'], d['J']):+.1e}", f"cd {t2:.3f} s")


def case_dense(budget, quick):
    from medmtl.med.builders import feature_selection_dual, svm_dual

    n, D = (1000, 200) if quick else (5000, 1000)
    X, y = linear_data(n, D, seed=7 * n + D)
    name = f"dense linear n={n} D={D}"
    t_svc, out = timed(lambda: liblinear_fits([X], [y], 1.0, "LinearSVC"), budget)
    row(name, "LinearSVC (liblinear, hinge)", t_svc if t_svc is not None else out)
    for what, dual in (("MED SVM cd", svm_dual([X], [y], "linear", C=1.0)),
                       ("MED FS cd (alpha=10)", feature_selection_dual([X], [y], C=1.0, alpha=10.0))):
        r = med_cd(name, dual, t_svc, budget, what)
        t, nw = timed(lambda d=dual: newton(d), budget)
        if r is not None and t is not None:
            row(name, f"  {what.split(' cd')[0]} newton", t, f"relJ cd-vs-it {rel(r['J'], nw['J']):+.1e}",
                speed_ratio(t, t_svc, "LinearSVC") if t_svc else "")


def bigsparse_child(n, D, nnz):
    """Run in a fresh process: build a sparse FS problem, fit it by cd, print peak RSS."""
    import resource

    import scipy.sparse as sp

    from medmtl.med.builders import feature_selection_dual
    from medmtl.med.solvers import solve

    rng = np.random.default_rng(0)
    X = sp.random(n, D, density=nnz / (n * D), format="csr", random_state=rng)
    X.data = rng.normal(size=X.nnz)
    w = np.zeros(D)
    w[rng.choice(D, 100, replace=False)] = rng.normal(size=100) * 10
    score = X @ w
    y = np.where(score + 0.5 * score.std() * rng.normal(size=n) > 0, 1, -1)
    t0 = time.perf_counter()
    dual = feature_selection_dual([X], [y], C=1.0, alpha=10.0)
    t_build = time.perf_counter() - t0
    sol = solve(dual, "cd")
    secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"PEAK_MB {peak:.0f} SECONDS {secs:.2f} BUILD {t_build:.2f} PASSES {sol.n_iter} "
          f"STATUS {sol.status} NNZ {X.nnz}")


def case_bigsparse(budget, quick):
    n, D, nnz = (20000, 20000, 2 * 10**6) if quick else (100000, 100000, 10**7)
    name = f"sparse FS n={n} D={D} nnz={nnz / 1e6:g}M"
    cmd = [sys.executable, __file__, "--bigsparse-child", str(n), str(D), str(nnz)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=max(budget, 900.0))
    except subprocess.TimeoutExpired:
        row(name, "cd (fresh process)", f"> {max(budget, 900.0):.0f} s")
        return
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("PEAK_MB")]
    if not line:
        row(name, "cd (fresh process)", "failed", out.stderr.strip().splitlines()[-1:])
        return
    p = line[0].split()
    row(name, "cd, build + solve (fresh process)", float(p[3]),
        f"peak RSS {float(p[1]):.0f} MB, build {p[5]} s, {p[7]} passes, {p[9]}",
        "under 4 GB" if float(p[1]) < 4096 else "OVER 4 GB")


THREADS_CHILD = """
import sys, time, warnings
sys.path.insert(0, {root!r})
import numpy as np
from benchmarks.bench_med import linear_data
from medmtl.med import MEDClassifier
X, y = linear_data(2000, 200, seed=7 * 2000 + 200)
warnings.simplefilter("ignore")
for method in ("auto", "newton"):
    MEDClassifier(selection="features", alpha=10.0, method=method, max_iter=1).fit(X[:50], y[:50])
    best = np.inf
    for _ in range(2):
        t = time.perf_counter()
        MEDClassifier(selection="features", alpha=10.0, method=method).fit(X, y)
        best = min(best, time.perf_counter() - t)
    print("TIME", method, best, flush=True)
"""


def case_threads(budget, quick):
    name = "FS n=2000 D=200 beside 2 busy processes"
    root = str(Path(__file__).resolve().parents[1])
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        times = {}
        for label, extra in (("default BLAS threads", {}),
                             ("one BLAS thread", {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                                                  "MKL_NUM_THREADS": "1"})):
            env = {k: v for k, v in os.environ.items()
                   if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
            env.update(extra)
            out = subprocess.run([sys.executable, "-c", THREADS_CHILD.format(root=root)],
                                 capture_output=True, text=True, env=env, timeout=max(budget, 600))
            for ln in out.stdout.splitlines():
                if ln.startswith("TIME"):
                    _, method, secs = ln.split()
                    times[(label, method)] = float(secs)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    for method in ("auto", "newton"):
        one = times.get(("one BLAS thread", method))
        row(name, f"fit method={method}, one BLAS thread", one if one is not None else "failed")
        default = times.get(("default BLAS threads", method))
        row(name, f"fit method={method}, default threads", default if default is not None else "failed",
            "", f"x{default / one:.2f} one thread" if default and one else "")


def poly_fit(kind, X, y):
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import SVC, SVR

    from medmtl.med import MEDClassifier, MEDRegressor

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if kind == "MEDRegressor":
            model = MEDRegressor(kernel="poly").fit(X, y)
        elif kind == "MEDClassifier":
            model = MEDClassifier(kernel="poly").fit(X, y)
        elif kind == "SVR":
            model = SVR(kernel="poly", degree=3, gamma=1.0, coef0=1.0).fit(X, y)
        else:
            model = SVC(kernel="poly", degree=3, gamma=1.0, coef0=1.0).fit(X, y)
    warned = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return {"status": getattr(model, "solver_status_", "-"), "warnings": warned}


def case_poly(budget, quick):
    rng = np.random.RandomState(0)
    n = 150
    X = rng.normal(loc=100, size=(n, 2))
    targets = {"MEDRegressor": rng.normal(size=n), "MEDClassifier": rng.randint(0, 2, size=n)}
    for med_kind, peer in (("MEDRegressor", "SVR"), ("MEDClassifier", "SVC")):
        name = f"{med_kind}(kernel='poly') n={n}"
        y = targets[med_kind]
        t_peer, p = timed(lambda: poly_fit(peer, X, y), budget)
        row(name, f"{peer} (libsvm), same kernel", t_peer if t_peer is not None else p)
        t, r = timed(lambda: poly_fit(med_kind, X, y), budget)
        row(name, med_kind, t if t is not None else r,
            f"status {r['status']}, {r['warnings']} ConvergenceWarning" if t is not None else "",
            speed_ratio(t, t_peer, peer) if t is not None and t_peer else "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (about a minute)")
    ap.add_argument("--budget", type=float, default=None, help="seconds per timed run")
    ap.add_argument("--threads", default="1", help="BLAS threads (a number, or 'default')")
    ap.add_argument("--cases", default=",".join(CASES),
                    help=f"comma-separated subset of {','.join(CASES)}")
    ap.add_argument("--out", default=None,
                    help="where the rows go (default benchmarks/results/med.json; '-': nowhere)")
    ap.add_argument("--skip", default="", help="comma-separated methods not to run (direct,bound)")
    ap.add_argument("--memory-child", nargs=2, type=int, help=argparse.SUPPRESS)
    ap.add_argument("--bigsparse-child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.threads != "default":
        _limit_threads(int(args.threads))
    if args.memory_child:
        memory_child(*args.memory_child)
        return
    if args.bigsparse_child:
        bigsparse_child(*args.bigsparse_child)
        return
    budget = args.budget or (30.0 if args.quick else 300.0)
    record = Record("med", "MED solvers against their peers (bench_med.py)", args.threads)
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
    for case in ("text", "multitask", "dense", "bigsparse", "threads", "poly"):
        if case in cases:
            globals()[f"case_{case}"](budget, args.quick)
    if args.out != "-":
        for case, what, secs, ratio, note in ROWS:
            record.add(case, what, secs.strip(), ratio=ratio or None, note=note)
        record.write(args.out or None, quick=args.quick)

if __name__ == "__main__":
    main()
