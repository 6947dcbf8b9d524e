"""Speed of MED structure estimation against l1 neighbourhood selection, in one run.

    python benchmarks/bench_structure.py [--quick] [--budget SECONDS] [--threads N|default]
                                         [--shapes] [--corner [KIND:REP ...]]

One row per graph size: an Ising model on a random graph with degrees at most 3 (couplings
of size 0.5, random signs), ``T`` Gibbs samples, and

* MED (:class:`medmtl.med.MEDGraphicalModel`, ``C = 0.01``, ``alpha = 36``, fixed
  beforehand; ``method="auto"``, the default tolerances): one joint fit of the whole graph;
* the same fit stopped by libsvm's default rule (``solver_options={"kkt_tol": 1e-3}``: the
  largest violating pair's gap at most 1e-3, libsvm's ``eps``), with the largest change of
  an edge posterior against the default fit;
* l1 neighbourhood selection: ``N`` l1 logistic regressions with liblinear (``C = 0.1``),
  one per node, their times added up.

Printed: each one's time, MED's solver status and iterations (passes, face steps and the
finish's Newton steps), the edge AUC of both (MED's posteriors; the AND of the l1 weights),
and the time ratios MED / l1 (target of issue 18 at 100 nodes x 1,000 samples: at most 20). Each fit runs in a forked child after the numba
kernels are compiled, with BLAS limited to ``--threads`` threads (``default``: BLAS's own).

``--shapes`` adds where the coordinate method's passes go: 50 nodes, 1,000 samples, the same
couplings on four graphs (no edges; a perfect matching, every node of degree 1; a chain; the
random graph of degree at most 3), each solved by the passes alone and with the proximal
Newton finish (:mod:`medmtl.med.solvers.ssnal`, the default): time, passes, face
steps, the finish's Newton steps, status and KKT gap.

``--corner [KIND:REP ...]`` runs only the slow corner of the ``ising-structure-scale`` grid,
100 nodes x 2,000 samples, as the experiment runs it (its full grid of 15 MED settings and
five l1 penalties, ``method="auto"``), and prints each MED setting's fit time over the mean l1
fit of its cell (``benchmarks/results/ising_scale_corner.txt``).

Measured on 2026-11-26 (2 cores, default BLAS threads, default tolerances):

* the main rows: 100 nodes x 1,000 samples, MED 7.93 s (converged: 50 passes and 60 Newton
  steps), l1 x 100 0.60 s, ratio 13.2x (target <= 20x); at kkt_tol=1e-3 3.45 s, 5.8x. 50 x
  1,000: 2.06 s, 9.6x; 20 x 500: 0.23 s, 3.3x. Edge AUC 1.0 for both at 50 and 100 nodes.
  The passes alone stopped at max_iter = 1,000 (gap 2.9e-5, 55.7 s, 92x) before the finish.
  On 2026-11-27, with the finish at pass 20 (``benchmarks/results/structure.json``): 100 x
  1,000 9.38 s against 0.78 s, 12.1x; 50 x 1,000 1.72 s, 9.4x; 20 x 500 0.20 s, 2.8x.
* ``--shapes``: no edges 49 passes and a perfect matching 33, converged either way (the
  finish is not needed); the chain and the degree-3 graph stop at max_iter = 1,000 with KKT
  gaps 4.2e-5 and 3.5e-5 on the passes alone (11.5 s, 12.0 s), and converge with the finish
  (50 passes and 80 / 62 Newton steps, 2.3 s / 2.0 s).

The slow duals are degenerate ones where edges meet at a node: far more multipliers sit on
the margin than a task has features (binary data), the optimal multipliers form a face and
the passes wander along it; the perfect matching is as degenerate but its switches are not
chained and its passes converge. Rejected before the finish: Newton steps on the face of the
free multipliers scaled by each one's distance to its bound (891 passes, 92 s), Anderson
extrapolation of the passes, greedy and per-task passes, the ``"newton"`` method (over 13
minutes on 50 x 1,000).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _record import Record  # noqa: E402
from bench_med import _limit_threads, speed_ratio, timed  # noqa: E402

CASES = [(20, 500), (50, 1000), (100, 1000)]
QUICK_CASES = [(20, 300), (50, 300)]


def problem(n_nodes, n_samples, seed=0):
    from medmtl.datasets.ising import random_graph, random_ising

    A = random_graph(n_nodes, max_degree=3, random_state=seed)
    X = random_ising(A, coupling=0.5, random_state=seed).sample(n_samples, random_state=seed + 1)
    return A, X.astype(float)


def med_fit(X, solver_options=None):
    from medmtl.med import MEDGraphicalModel

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = MEDGraphicalModel(C=0.01, alpha=36.0, solver_options=solver_options).fit(X)
    passes = g.n_iter_
    return g.edge_posterior_, g.solver_status_, passes, [str(w.message)[:100] for w in caught]


def l1_fits(X):
    from medmtl.experiments.svm_baselines import l1_logistic_regression

    T, N = X.shape
    W = np.zeros((N, N))
    for m in range(N):
        others = np.arange(N) != m
        lr = l1_logistic_regression(0.1, random_state=0)
        W[m, others] = lr.fit(X[:, others], X[:, m]).coef_[0]
    return np.minimum(np.abs(W), np.abs(W.T))


def shapes(n_nodes=50, n_samples=1000, seed=0):
    """The graphs of ``--shapes``: (name, adjacency) for no edges, a perfect matching, a
    chain and the random graph of :func:`problem`."""
    from medmtl.datasets.ising import random_graph

    matching, chain = np.zeros((n_nodes, n_nodes)), np.zeros((n_nodes, n_nodes))
    k = np.arange(0, n_nodes - 1, 2)
    matching[k, k + 1] = matching[k + 1, k] = 1
    k = np.arange(n_nodes - 1)
    chain[k, k + 1] = chain[k + 1, k] = 1
    return [("no edges", np.zeros((n_nodes, n_nodes))), ("perfect matching", matching),
            ("chain", chain), ("random, degree <= 3", random_graph(n_nodes, max_degree=3, random_state=seed))]


def cd_record(X, C=0.01, alpha=36.0, finish=True):
    """The default coordinate solve of the structure dual of ``X``: its passes, face steps,
    the finish's Newton steps, status, KKT gap and the number of multipliers strictly inside
    the box; ``finish=False``: the passes alone (no proximal Newton finish)."""
    from medmtl.med.solvers import coordinate
    from medmtl.med.builders import ising_structure_dual
    from medmtl.med.solvers import solve

    policy = coordinate.POLICY
    try:
        if not finish:
            coordinate.POLICY = dataclasses.replace(policy, finish_after=np.inf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = solve(ising_structure_dual(X, C, alpha), "cd")
    finally:
        coordinate.POLICY = policy
    inside = int(np.count_nonzero((sol.lam > 0) & (sol.lam < C)))
    return (sol.info["passes"], sol.info["face_steps"], sol.info["newton_steps"], sol.status,
            sol.info["kkt_gap"], inside)


def print_shapes(budget, n_nodes=50, n_samples=1000, seed=0):
    from medmtl.datasets.ising import random_ising

    print(f"\nwhere the passes go: {n_nodes} nodes x {n_samples} samples, coupling 0.5, "
          f"C = 0.01, alpha = 36, method 'cd' with its defaults")
    print(f"{'graph':>22s}  {'finish':>6s}  {'time':>9s}  {'passes':>6s}  {'faces':>5s}  "
          f"{'Newton':>6s}  {'status':>9s}  {'KKT gap':>8s}  {'inside the box':>14s}")
    for name, A in shapes(n_nodes, n_samples, seed):
        X = random_ising(A, coupling=0.5, random_state=seed).sample(n_samples, random_state=seed + 1)
        for finish in (False, True):
            t, out = timed(lambda X=X, f=finish: cd_record(X.astype(float), finish=f), budget)
            label = "yes" if finish else "no"
            if t is None:
                print(f"{name:>22s}  {label:>6s}  {out}")
                continue
            passes, faces, newton, status, gap, inside = out
            print(f"{name:>22s}  {label:>6s}  {t:8.2f}s  {passes:6d}  {faces:5d}  {newton:6d}  "
                  f"{status:>9s}  {gap:8.1e}  {inside:14d}")


def print_corner(cells):
    """The slow corner of the ``ising-structure-scale`` grid (100 nodes x 2,000 samples), run
    as the experiment runs it (:func:`medmtl.experiments.structure.structure_cell`, its full
    grid, ``method="auto"``): each MED setting's fit time against the mean time of the
    cell's l1 neighbourhood selections (the issue's target: at most 20x)."""
    from medmtl.experiments.structure import SCALE_SPEC, structure_cell

    grid = SCALE_SPEC.settings(False)
    print("\nthe ising-structure-scale corner, 100 nodes x 2,000 samples: MED per setting / mean l1 fit")
    for kind, rep in cells:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = structure_cell(kind, 100, 2000, rep, grid["Cs"], grid["alphas"], grid["nus"],
                                 grid["glasso"], seed=0, method="auto")
        l1 = float(np.mean([r["seconds"] for r in out["grid"]["l1 AND"]]))
        med = out["grid"]["MED"]
        ratios = [r["seconds"] / l1 for r in med]
        print(f"{kind} graph, repetition {rep}: mean l1 fit {l1:.2f} s; MED {min(ratios):.1f}x to "
              f"{max(ratios):.1f}x, {sum(x > 20 for x in ratios)} of {len(ratios)} settings above 20x")
        for r, x in zip(med, ratios):
            setting = ", ".join(f"{k} = {v:g}" for k, v in r["setting"].items())
            print(f"    {setting:>24s}  {r['seconds']:7.2f} s  {x:5.1f}x  {r['status']}")


def auc(A, S):
    from sklearn.metrics import roc_auc_score

    iu = np.triu_indices(A.shape[0], 1)
    return roc_auc_score(A[iu], S[iu])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--budget", type=float, default=900.0)
    parser.add_argument("--threads", default="default")
    parser.add_argument("--out", default=None,
                        help="where the rows go (default benchmarks/results/structure.json; '-': nowhere)")
    parser.add_argument("--shapes", action="store_true",
                        help="also the coordinate method's passes on four graph shapes")
    parser.add_argument("--corner", nargs="*", metavar="KIND:REP",
                        help="only the ising-structure-scale grid's 100 x 2,000 corner, per "
                             "setting (default: grid:0 grid:1 random:0 random:1; minutes each)")
    args = parser.parse_args(argv)
    if args.corner is not None:
        cells = [(c.split(":")[0], int(c.split(":")[1])) for c in args.corner] or \
            [("grid", 0), ("grid", 1), ("random", 0), ("random", 1)]
        print_corner(cells)
        return
    if args.threads != "default":
        _limit_threads(args.threads)
    record = Record("structure", "MED structure estimation against l1 neighbourhood selection "
                    "(bench_structure.py)", args.threads)
    med_fit(problem(6, 100)[1])   # compile the numba kernels before the children fork
    print(f"{'graph':>22s}  {'MED':>10s}  {'status (iterations)':>22s}  {'l1 x N':>8s}  "
          f"{'AUC MED':>8s}  {'AUC l1 AND':>10s}  ratio")
    for N, T in (QUICK_CASES if args.quick else CASES):
        A, X = problem(N, T)
        t_med, med = timed(lambda: med_fit(X), args.budget)
        t_eps, eps = timed(lambda: med_fit(X, {"kkt_tol": 1e-3}), args.budget)
        t_l1, S = timed(lambda: l1_fits(X), args.budget)
        failed = [f"{name}: {reason}" for name, t, reason in
                  (("MED", t_med, med), ("MED kkt_tol=1e-3", t_eps, eps), ("l1 x N", t_l1, S)) if t is None]
        if failed:
            print(f"{N:4d} nodes x {T:5d} samples  " + "; ".join(failed))
            continue
        for label, t, (P, status, iterations, caught) in ((f"{N:4d} nodes x {T:5d} samples", t_med, med),
                                                          ("kkt_tol=1e-3", t_eps, eps)):
            print(f"{label:>22s}  {t:9.2f}s  {status + f' ({iterations})':>22s}  {t_l1:7.2f}s  "
                  f"{auc(A, P):8.4f}  {auc(A, S):10.4f}  {speed_ratio(t, t_l1, 'MED / l1')}")
            record.add(f"Ising, {N} nodes x {T} samples", "MED" + ("" if t is t_med else ", kkt_tol=1e-3"),
                       f"{t:.2f} s, {status} ({iterations}), edge AUC {auc(A, P):.4f}",
                       f"{N} l1 logistic regressions (liblinear) {t_l1:.2f} s, edge AUC {auc(A, S):.4f}",
                       ratio=speed_ratio(t, t_l1, "l1's time"))
            for message in caught:
                print(f"{'':24s}warning: {message}")
        print(f"{'':24s}largest change of an edge posterior at kkt_tol=1e-3: "
              f"{np.max(np.abs(eps[0] - med[0])):.1e}")
    if args.out != "-":
        record.write(args.out, quick=args.quick)
    if args.shapes:
        print_shapes(args.budget)


if __name__ == "__main__":
    main()
