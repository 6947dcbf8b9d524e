"""Speed of the online learners against their peers, in one run (ratios printed).

    python benchmarks/bench_online.py [--quick] [--out PATH]

SHAMPO: rounds per second against a straightforward per-round reference and river's
Perceptron on the same streams. AMLC: examples per second on the spam stream against a
straightforward per-example reference. The rows go to ``benchmarks/results/online.json``
(``--out -``: nowhere).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import online_amlc  # noqa: E402
import online_shampo  # noqa: E402
from _record import Record  # noqa: E402


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    out = None
    if "--out" in argv:
        at = argv.index("--out")
        out = argv[at + 1]
        del argv[at:at + 2]
    quick = "--quick" in argv
    record = Record("online", "online learners against their peers (bench_online.py)")
    print("== SHAMPO ==")
    for stream, r in online_shampo.main(argv).items():
        head = r["medmtl"]["aggressive b=0.01"]
        record.add(f"SHAMPO, {stream}", "aggressive b=0.01", f"{head:,.0f} rounds/s (CPU)",
                   f"river Perceptron per task {r['river']:,.0f} rounds/s", ratio=f"{head / r['river']:.1f}x river's rate",
                   note=f"{head / r['reference']:.1f}x a per-round reference; slowest variant "
                        f"{min(r['medmtl'].values()):,.0f} rounds/s")
    print("\n== AMLC ==")
    for r in online_amlc.main(["--quick"] if quick else []):
        record.add(f"AMLC, spam, {r['stream']}", f"confidence={r['confidence']}",
                   f"{r['rate']:,.0f} examples/s (CPU)", f"per-example sparse loop {r['reference_sparse']:,.0f}/s",
                   ratio=f"{r['rate'] / r['reference_sparse']:.1f}x the loop's rate", note=f"{r['queries']} queries")
    if out != "-":
        record.write(out, quick=quick)


if __name__ == "__main__":
    main()
