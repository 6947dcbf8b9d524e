"""Rounds per second of medmtl's SHAMPO against a per-round reference and river's Perceptron.

Two streams:

- USPS one-vs-one: K = 45 dense 256-dimensional tasks; one pass (rounds = the largest pair,
  smaller pairs cycle through fresh permutations).
- spam: K = 15 users, sparse 152,543-dimensional; each inbox has 400 emails, so the stream
  cycles through them for ``SPAM_ROUNDS`` rounds to give a measurable run.

Contenders, all on the same (unit-norm) inputs and the same label oracle protocol:

- ``medmtl``: ``SHAMPO(...).fit(stream, oracle)`` (best of a few runs, after one untimed
  warm-up fit that loads the compiled loop from numba's cache). Every variant is float64
  (the default) except the one marked f32.
- ``reference``: Fig. 2 written straightforwardly, one round at a time in numpy (margins by
  a loop over tasks, Eq. 1 normalised, ``rng.choice``), on the first rounds.
- ``river``: K ``river.linear_model.Perceptron`` models stepping through the same rounds:
  each round ``predict_one`` for every task and ``learn_one`` for the task SHAMPO queried
  (so river does not even pay for the draw); inputs pre-converted to dicts, untimed.

Run: ``python benchmarks/online_shampo.py`` (or through ``benchmarks/bench_online.py``).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from medmtl.online import SHAMPO, LabelOracle, MultiTaskStream

SPAM_ROUNDS = 4000
TARGET = 50_000


class _Clock:
    """Wall time and this process's CPU time of a block (the CPU time is what a shared,
    overloaded machine distorts least; both are printed)."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


def usps_stream():
    from medmtl.datasets import load_usps, multiclass_tasks

    X, labels = load_usps("train")
    ds = multiclass_tasks(X, labels, scheme="one-vs-one")
    stream, orders = MultiTaskStream.from_tasks(ds.Xs, random_state=0)
    return stream, [y[o] for y, o in zip(ds.ys, orders)]


def spam_stream(n_rounds=SPAM_ROUNDS):
    from medmtl.datasets import load_spam

    ds = load_spam()
    stream, orders = MultiTaskStream.from_tasks(ds.Xs, n_rounds=n_rounds, random_state=0)
    return stream, [y[o] for y, o in zip(ds.ys, orders)]


def time_medmtl(stream, labels, repeats=3, **params):
    """Best rounds/s of ``fit`` over ``repeats`` runs; also returns the last model."""
    if params.get("dtype") == "float32":
        stream = MultiTaskStream(stream.Xs, scale=None, dtype="float32")  # converted once, untimed
    SHAMPO(random_state=0, **params).fit(stream, LabelOracle(labels))  # warm caches (compaction)
    best, model = (0.0, 0.0), None
    for r in range(repeats):
        oracle = LabelOracle(labels)
        model = SHAMPO(random_state=r, **params)
        with _Clock() as clock:
            model.fit(stream, oracle)
        best = max(best, (stream.n_rounds / clock.cpu, stream.n_rounds / clock.wall))
    return best, model


def time_reference(stream, labels, n_rounds, b=0.01, lam=0.005, seed=0):
    """Fig. 2 one round at a time, the straightforward way."""
    rng = np.random.default_rng(seed)
    oracle = LabelOracle(labels)
    K = stream.n_tasks
    W = [np.zeros(d) for d in stream.n_features]
    rows = [X[:n_rounds] for X in stream.Xs]
    with _Clock() as clock:
        _reference_rounds(rows, W, oracle, rng, K, n_rounds, b, lam)
    return n_rounds / clock.cpu, n_rounds / clock.wall


def _reference_rounds(rows, W, oracle, rng, K, n_rounds, b, lam):
    for t in range(n_rounds):
        xs = [X[t] for X in rows]
        p = np.array([float(x @ w) if not sp.issparse(x) else float((x @ w)[0]) for x, w in zip(xs, W)])
        m = np.abs(p)
        q = 1.0 / (b + m - m.min())
        j = int(rng.choice(K, p=q / q.sum()))
        y = oracle.query(j, t)
        if y * p[j] <= lam:
            x = xs[j]
            if sp.issparse(x):
                W[j][x.indices] += y * x.data
            else:
                W[j] += y * x


def time_river(stream, labels, queried, n_rounds):
    """K river Perceptrons: predict every task, learn the queried one, round by round."""
    from river.linear_model import Perceptron

    K = stream.n_tasks
    dicts = []
    for X in stream.Xs:
        if sp.issparse(X):
            dicts.append([dict(zip(X.indices[X.indptr[t]:X.indptr[t + 1]].tolist(),
                                   X.data[X.indptr[t]:X.indptr[t + 1]].tolist())) for t in range(n_rounds)])
        else:
            dicts.append([dict(enumerate(row.tolist())) for row in X[:n_rounds]])
    models = [Perceptron() for _ in range(K)]
    oracle = LabelOracle(labels)
    with _Clock() as clock:
        for t in range(n_rounds):
            for k in range(K):
                models[k].predict_one(dicts[k][t])
            j = int(queried[t, 0])
            models[j].learn_one(dicts[j][t], oracle.query(j, t) == 1)
    return n_rounds / clock.cpu, n_rounds / clock.wall


def bench(name, stream, labels, ref_rounds, river_rounds, repeats=3):
    print(f"\n{name}: K = {stream.n_tasks}, d = {stream.n_features[0]}, "
          f"{'sparse' if sp.issparse(stream.Xs[0]) else 'dense'}, {stream.n_rounds} rounds")
    rows = {}
    for label, params in (("aggressive b=0.01", {"b": 0.01}),
                          ("aggressive b=0.01 f32", {"b": 0.01, "dtype": "float32"}),
                          ("plain b=0.01", {"b": 0.01, "aggressive": False}),
                          ("aggressive b=1", {"b": 1.0}),
                          ("plain uniform", {"strategy": "uniform", "aggressive": False})):
        (cpu, wall), model = time_medmtl(stream, labels, repeats=repeats, **params)
        rows[label] = cpu
        upd = model.updates_per_task_.sum() / stream.n_rounds
        print(f"  medmtl SHAMPO {label:21s}{cpu:10.0f} rounds/s CPU ({wall:8.0f} wall)"
              f"  updates on {upd:.0%} of rounds")
    _, model = time_medmtl(stream, labels, repeats=1, b=0.01)
    ref, ref_wall = time_reference(stream, labels, ref_rounds)
    riv, riv_wall = time_river(stream, labels, model.queried_tasks_, river_rounds)
    head = rows["aggressive b=0.01"]
    slowest = min(rows.values())
    print(f"  per-round reference              {ref:10.0f} rounds/s CPU ({ref_wall:8.0f} wall)  first {ref_rounds} rounds")
    print(f"  river Perceptron x {stream.n_tasks:<13d} {riv:10.0f} rounds/s CPU ({riv_wall:8.0f} wall)  "
          f"first {river_rounds} rounds")
    print(f"  ratios (CPU, aggressive b=0.01, float64): {head / ref:.1f}x reference, {head / riv:.1f}x river; "
          f"slowest variant {slowest:.0f} rounds/s; target {TARGET} rounds/s and 3x river: "
          f"{'met' if slowest >= TARGET and slowest >= 3 * riv else 'NOT met'}")
    return {"medmtl": rows, "reference": ref, "river": riv}


def main(argv=None):
    """Print rounds/s for both streams; return the numbers as a dict.

    ``argv`` may hold ``--quick`` (one timed run each, shorter reference and river runs).
    """
    quick = "--quick" in (argv or [])
    repeats, ref_rounds, river_rounds = (1, 300, 100) if quick else (3, 1000, 300)
    print("SHAMPO rounds per second (higher is better); this machine may be shared, "
          "so compare the ratios measured in one run")
    out = {}
    stream, labels = usps_stream()
    out["usps_ovo_K45_dense"] = bench("USPS one-vs-one", stream, labels, ref_rounds, river_rounds, repeats)
    del stream
    stream, labels = spam_stream()
    out["spam_K15_sparse"] = bench("spam users", stream, labels, ref_rounds, river_rounds, repeats)
    return out


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
