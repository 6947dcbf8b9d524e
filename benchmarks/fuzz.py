"""A large draw of bad and odd inputs over every registered learner, batch and online.

The set-ups and the cases are those of the property suite (``tests/property/
property_strategies.py``: its registry ``SETUPS``, :func:`case_from_seed` and
:func:`classify`), drawn from seeds instead of by Hypothesis so that any case can be
replayed alone. Each case runs in a worker process: a worker that dies (a segfault in
compiled code, an abort) is a ``crash``, one that does not answer within ``--timeout``
seconds a ``hang``; either is restarted and the draw goes on.

Usage::

    python benchmarks/fuzz.py                        # 1,000 cases per set-up, 2 workers
    python benchmarks/fuzz.py --per-setup 200 --setups 'MED|SHAMPO'
    python benchmarks/fuzz.py --replay SHAMPO:17     # one case, in this process, with its traceback

Prints the counts by outcome (correct, clear error, and each kind of failure: silent
wrong, nan model, unclear error, crash, hang), the counts by set-up, the failures grouped
by set-up and perturbation, and (``--show``) failing cases with their seeds.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import re
import sys
import time
import traceback
from multiprocessing.connection import wait
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOOD = ("correct", "error")
FAILURES = ("silent wrong", "nan model", "unclear error", "crash", "hang")


def _strategies():
    sys.path.insert(0, str(ROOT / "tests" / "property"))
    import property_strategies

    return property_strategies


# ------------------------------------------------------------------------------------ worker
def _worker(conn):
    """Run the cases the parent sends, ``(setup name, seed)``, and send back how each ended."""
    import warnings

    warnings.simplefilter("ignore")
    ps = _strategies()
    conn.send(("ready", None))
    while True:
        job = conn.recv()
        if job is None:
            return
        name, seed = job
        setup = ps.BY_NAME[name]
        try:
            case = ps.case_from_seed(setup, seed)
            label = case.name
            outcome, message = ps.classify(setup, case)
        except Exception as err:  # noqa: BLE001 - a fault of the harness itself, reported as such
            label, outcome = "(drawing the case)", "unclear error"
            message = f"harness: {type(err).__name__}: {err}"
        conn.send(("done", (name, seed, label, outcome, message[:2000])))


class _Slot:
    """One worker process and the case it is running."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.start()

    def start(self):
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.job, self.since, self.ready = None, None, False

    def send(self, job):
        self.job, self.since = job, time.monotonic()
        self.conn.send(job)

    def restart(self):
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()
        self.start()

    def stop(self):
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()


def draw(jobs, workers, timeout, progress=True):
    """Run ``jobs`` (``(setup name, seed)`` pairs) on ``workers`` processes; return the results."""
    # one BLAS thread per worker: the machine's cores are the workers
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    ctx = mp.get_context("spawn")
    slots = [_Slot(ctx) for _ in range(max(1, workers))]
    pending = collections.deque(jobs)
    results, total, t0, shown = [], len(pending), time.monotonic(), 0

    def feed(slot):
        if pending:
            slot.send(pending.popleft())

    while len(results) < total:
        busy = [s for s in slots if s.job is not None or not s.ready]
        ready = wait([s.conn for s in busy] + [s.proc.sentinel for s in busy], timeout=1.0)
        for slot in slots:
            if slot.conn in ready or slot.proc.sentinel in ready:
                try:
                    if slot.conn.poll():
                        kind, payload = slot.conn.recv()
                        if kind == "ready":
                            slot.ready = True
                        else:
                            results.append(payload)
                            slot.job = None
                        if slot.job is None and slot.ready:
                            feed(slot)
                        continue
                except (EOFError, OSError):
                    pass
                if not slot.proc.is_alive():
                    if slot.job is not None:
                        name, seed = slot.job
                        results.append((name, seed, _case_name(name, seed), "crash",
                                        f"the worker died (exit code {slot.proc.exitcode})"))
                    slot.restart()
            elif slot.job is not None and time.monotonic() - slot.since > timeout:
                name, seed = slot.job
                results.append((name, seed, _case_name(name, seed), "hang", f"no answer after {timeout:g} s"))
                slot.restart()
        if progress and (len(results) - shown >= 500 or len(results) == total):
            shown = len(results)
            rate = shown / max(time.monotonic() - t0, 1e-9)
            print(f"  {shown:,}/{total:,} cases, {rate:.0f}/s", file=sys.stderr, flush=True)
    for slot in slots:
        slot.stop()
    return results


def _case_name(name, seed):
    """The perturbation of a case, drawn again here (the worker that drew it is gone)."""
    try:
        ps = _strategies()
        return ps.case_from_seed(ps.BY_NAME[name], seed).name
    except Exception:  # noqa: BLE001
        return "?"


# ----------------------------------------------------------------------------------- report
def _kind_of(case_name):
    """The perturbation without its drawn details (scale values, dtypes, indices)."""
    head = case_name.split(":")[0]
    if head in ("scale", "hyper"):
        return f"{head}:{case_name.split(':')[1].split('=')[0]}" if head == "hyper" else head
    return ":".join(case_name.split(":")[:2])


def report(results, setups, seconds, show):
    by_outcome = collections.Counter(r[3] for r in results)
    print(f"\n{len(results):,} cases over {len(setups)} set-ups in {seconds:.0f} s")
    print("by outcome: " + ", ".join(f"{k} {by_outcome.get(k, 0):,}" for k in GOOD + FAILURES))
    columns = GOOD + FAILURES
    width = max(len(s) for s in setups)
    print(f"\n{'set-up':{width}s} " + " ".join(f"{c[:13]:>13s}" for c in columns))
    per = collections.defaultdict(collections.Counter)
    for name, _, _, outcome, _ in results:
        per[name][outcome] += 1
    for name in setups:
        print(f"{name:{width}s} " + " ".join(f"{per[name].get(c, 0):13,d}" for c in columns))
    failures = [r for r in results if r[3] not in GOOD]
    if not failures:
        print("\nno failures")
        return
    print("\nfailures by set-up and perturbation (count, first seed, first message):")
    groups = collections.OrderedDict()
    for name, seed, label, outcome, message in sorted(failures, key=lambda r: (r[0], r[3], _kind_of(r[2]), r[1])):
        key = (name, outcome, _kind_of(label))
        if key not in groups:
            groups[key] = [0, seed, message]
        groups[key][0] += 1
    for (name, outcome, kind), (count, seed, message) in groups.items():
        first = message.split("\n")[0]
        print(f"  {name} / {kind} / {outcome}: {count} (seed {seed}) {first[:220]}")
    if show:
        print(f"\nfirst {min(show, len(failures))} failing cases (replay with --replay SETUP:SEED):")
        for name, seed, label, outcome, message in failures[:show]:
            print(f"  {name}:{seed}  {label}  [{outcome}]  {message.splitlines()[0][:300]}")


def replay(spec):
    """Run one case in this process and print its traceback if it fails."""
    import warnings

    name, seed = spec.rsplit(":", 1)
    ps = _strategies()
    setup = ps.BY_NAME[name]
    case = ps.case_from_seed(setup, int(seed))
    print(f"{name} seed {seed}: {case.name} (expect {case.expect})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            print(ps.run_case(setup, case))
        except ps.Failure:
            traceback.print_exc()
            return 1
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-setup", type=int, default=1000, help="cases per set-up (default 1000)")
    parser.add_argument("--setups", default=None, help="a regular expression: only the set-ups it finds")
    parser.add_argument("--online", choices=["yes", "no", "only"], default="yes", help="include the online set-ups")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=40, help="failing cases to list (default 40)")
    parser.add_argument("--json", default=None, help="also write every result to this JSON file")
    parser.add_argument("--replay", default=None, metavar="SETUP:SEED", help="run one case here, with its traceback")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args.replay)
    ps = _strategies()
    setups = [s.name for s in ps.SETUPS
              if (args.setups is None or re.search(args.setups, s.name))
              and {"yes": True, "no": not s.online, "only": s.online}[args.online]]
    if not setups:
        parser.error(f"no set-up matches {args.setups!r}")
    # interleaved, so that every set-up is covered early and evenly
    jobs = [(name, seed) for seed in range(args.first_seed, args.first_seed + args.per_setup) for name in setups]
    print(f"fuzzing {len(setups)} set-ups x {args.per_setup:,} cases on {args.workers} workers", file=sys.stderr)
    t0 = time.monotonic()
    results = draw(jobs, args.workers, args.timeout)
    seconds = time.monotonic() - t0
    report(results, setups, seconds, args.show)
    if args.json:
        Path(args.json).write_text(json.dumps([dict(zip(("setup", "seed", "case", "outcome", "message"), r))
                                               for r in results], indent=1))
    return 1 if any(r[3] not in GOOD for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
