"""One MTS3FLC iteration on the full comp-vs-rec problem vs one iteration of scikit-learn's NMF.

    python benchmarks/bench_nmtf.py [--repeats 10]

MTS3FLC: K = 20, k_s = 5, 6 labelled documents per task, started as in the paper; the time
is that of :func:`medmtl.nmtf.mts3flc.iterate` plus the objective (what ``fit`` does per
iteration), averaged over ``--repeats`` iterations. scikit-learn: ``NMF(solver="mu",
beta_loss="frobenius", n_components=20)`` on the same documents stacked into one matrix
(the same size and nonzeros); one iteration is (fit with 1 + repeats iterations - fit with
1) / repeats, so its start is not counted either. Peak memory is measured with tracemalloc
during the iterations and compared with the input matrix plus the factors. Targets: both
ratios within 2.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _record import Record  # noqa: E402


def sparse_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", default=None,
                        help="where the rows go (default benchmarks/results/nmtf.json; '-': nowhere)")
    args = parser.parse_args(argv)
    from sklearn.decomposition import NMF
    from sklearn.exceptions import ConvergenceWarning

    from medmtl.datasets.newsgroups_tasks import orderly_problem
    from medmtl.nmtf import MTS3FLC
    from medmtl.nmtf.init import row_normalized
    from medmtl.nmtf.mts3flc import iterate
    from medmtl.nmtf.updates import data_times_labels, objective

    warnings.simplefilter("ignore", ConvergenceWarning)
    ds = orderly_problem("comp", "rec")
    idx = ds.split_indices(train=6, random_state=0)
    XL = [t.X[i[0]] for t, i in zip(ds.tasks, idx)]
    yL = [t.y[i[0]] for t, i in zip(ds.tasks, idx)]
    XU = [t.X[i[2]] for t, i in zip(ds.tasks, idx)]
    model = MTS3FLC(n_topics=20, n_shared_topics=5, max_iter=0, random_state=0).fit(XL, yL, XU)

    # the fit's own state after initialisation
    Xds = [row_normalized(sp.vstack([a, b], format="csr"), "l1") for a, b in zip(XL, XU)]
    n_labeled = [a.shape[0] for a in XL]
    classes = model.classes_
    Gs = [np.hstack([(classes[:, None] == y[None, :]).astype(float), G]) for y, G in zip(yL, model.memberships_)]
    Fs = [F.copy() for F in model.topics_]
    Rs = [R.copy() for R in model.specific_associations_]
    S = model.shared_associations_.copy()
    XGs = [data_times_labels(X, G) for X, G in zip(Xds, Gs)]
    GGs = [G @ G.T for G in Gs]
    x_sq = [float(X.data @ X.data) for X in Xds]
    n_docs = sum(X.shape[0] for X in Xds)
    n_words = Xds[0].shape[1]
    nnz = sum(X.nnz for X in Xds)
    input_bytes = sum(sparse_bytes(X) for X in Xds)
    factor_bytes = sum(a.nbytes for a in Fs + Rs + Gs + XGs + GGs) + S.nbytes

    def one_iteration(S):
        S = iterate(Xds, n_labeled, Fs, S, Rs, Gs, XGs, GGs, True)
        objective(Xds, Fs, S, Rs, Gs, x_sq, XGs)
        return S

    S = one_iteration(S)  # warm up
    t0 = time.perf_counter()
    for _ in range(args.repeats):
        S = one_iteration(S)
    ours = (time.perf_counter() - t0) / args.repeats
    tracemalloc.start()
    S = one_iteration(S)
    _, ours_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    # scikit-learn on the same documents stacked (same size and nonzeros)
    X = sp.vstack(Xds, format="csr")

    def nmf(max_iter):
        return NMF(n_components=20, solver="mu", beta_loss="frobenius", init="random", max_iter=max_iter,
                   tol=0.0, random_state=0).fit(X)

    nmf(1)
    t0 = time.perf_counter()
    nmf(1)
    t1 = time.perf_counter()
    nmf(1 + args.repeats)
    t2 = time.perf_counter()
    sk = max((t2 - t1) - (t1 - t0), 1e-9) / args.repeats
    tracemalloc.start()
    nmf(1 + args.repeats)
    _, sk_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    sk_factor_bytes = (n_docs + n_words) * 20 * 8

    print(f"comp vs rec: {len(Xds)} tasks, {n_docs} documents x {n_words} words, {nnz} nonzeros; K = 20, k_s = 5")
    print(f"MTS3FLC one iteration (all updates + objective): {ours * 1e3:8.1f} ms")
    print(f"sklearn NMF mu/Frobenius one iteration:           {sk * 1e3:8.1f} ms")
    print(f"time ratio MTS3FLC / sklearn:                     {ours / sk:8.2f}  (target <= 2)")
    base = input_bytes + factor_bytes
    print(f"MTS3FLC peak during an iteration {ours_peak / 1e6:7.1f} MB (tracemalloc, new allocations); "
          f"input {input_bytes / 1e6:.1f} MB + factors {factor_bytes / 1e6:.1f} MB = {base / 1e6:.1f} MB")
    print(f"memory ratio (input + factors + peak) / (input + factors): {(base + ours_peak) / base:6.2f}  (target <= 2)")
    sk_base = sparse_bytes(X) + sk_factor_bytes
    print(f"sklearn NMF fit peak {sk_peak / 1e6:7.1f} MB; its input + factors {sk_base / 1e6:.1f} MB; "
          f"ratio {(sk_base + sk_peak) / sk_base:6.2f}")
    if args.out != "-":
        record = Record("nmtf", "one MTS3FLC iteration against scikit-learn's NMF (bench_nmtf.py)")
        case = f"comp vs rec, {n_docs:,} documents x {n_words:,} words, K = 20, k_s = 5"
        record.add(case, "time of one iteration", f"{ours * 1e3:.1f} ms", f"NMF ('mu') {sk * 1e3:.1f} ms",
                   ratio=f"{ours / sk:.2f}x NMF's time")
        record.add(case, "memory: (input + factors + peak) / (input + factors)", f"{(base + ours_peak) / base:.2f}",
                   f"NMF fit {(sk_base + sk_peak) / sk_base:.2f}",
                   ratio=f"{((base + ours_peak) / base) / ((sk_base + sk_peak) / sk_base):.2f}x NMF's",
                   note=f"peak {ours_peak / 1e6:.1f} MB over input and factors {base / 1e6:.1f} MB (tracemalloc)")
        record.write(args.out, quick=False)


if __name__ == "__main__":
    main()
