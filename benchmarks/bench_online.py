"""Speed of the online learners against their peers, in one run (ratios printed).

    python benchmarks/bench_online.py [--quick]

SHAMPO: rounds per second against a straightforward per-round reference and river's
Perceptron on the same streams. AMLC: examples per second on the spam stream against a
straightforward per-example reference.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import online_amlc  # noqa: E402
import online_shampo  # noqa: E402


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    print("== SHAMPO ==")
    online_shampo.main(argv)
    print("\n== AMLC ==")
    online_amlc.main(argv)


if __name__ == "__main__":
    main()
