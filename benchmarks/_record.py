"""What a benchmark run writes beside what it prints: its rows, the machine, the libraries.

Every ``bench_*.py`` script keeps a :class:`Record` of its measurements and writes it to
``benchmarks/results/NAME.json``; the results page's speed and memory tables are generated
from those files (``python -m medmtl.experiments.report``), never typed by hand.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def environment(threads=None):
    """The machine, the library versions and the BLAS threads of this process."""
    import numba
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    import medmtl

    return {
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": {"medmtl": getattr(medmtl, "__version__", "unknown"), "numpy": np.__version__,
                     "scipy": scipy.__version__, "scikit-learn": sklearn.__version__,
                     "numba": numba.__version__},
        "blas_threads_requested": threads,
        "blas": [{k: info.get(k) for k in ("internal_api", "num_threads", "version")}
                 for info in threadpool_info()],
    }


class Record:
    """The rows of one benchmark run, written as JSON when the run ends.

    Parameters
    ----------
    name : str
        The file's stem: ``benchmarks/results/NAME.json``.
    title : str
        What the table measures, as the results page heads it.
    threads : str or int, optional
        The BLAS threads the run asked for.
    """

    def __init__(self, name, title, threads=None):
        self.name, self.title, self.threads = name, title, threads
        self.rows = []
        self.started = time.time()
        self.load_start = os.getloadavg()[0]

    def add(self, case, what, medmtl, peer="", ratio=None, note=""):
        """One measurement: ``case`` (the data and model), ``what`` (the method timed),
        ``medmtl`` (its time, rate or memory, as text), ``peer`` (the peer's, as text),
        ``ratio`` (medmtl / peer, a float or text), ``note`` (anything else)."""
        self.rows.append({"case": str(case), "what": str(what), "medmtl": str(medmtl), "peer": str(peer),
                          "ratio": ratio if ratio is None or isinstance(ratio, str) else float(ratio),
                          "note": str(note)})

    def write(self, path=None, quick=False):
        """Write the record (default ``benchmarks/results/NAME.json``); returns the path."""
        path = Path(path) if path else RESULTS / f"{self.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        out = {"name": self.name, "title": self.title, "quick": bool(quick),
               "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
               "date": time.strftime("%Y-%m-%d", time.gmtime(self.started)),
               "seconds": round(time.time() - self.started, 1),
               "load_average": {"start": round(self.load_start, 2), "end": round(os.getloadavg()[0], 2)},
               "environment": environment(self.threads), "rows": self.rows}
        path.write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {path}")
        return path
