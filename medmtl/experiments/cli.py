"""The ``medmtl`` command line.

    medmtl reproduce NAME [--quick] [--out DIR] [--n-jobs N] [--backend loky|dask]
                          [--scheduler ADDRESS] [--cache-dir DIR] [--no-cache] [--seed S]
    medmtl reproduce --list
"""

from __future__ import annotations

import argparse
import sys

import medmtl
from medmtl.experiments import registry


def build_parser():
    parser = argparse.ArgumentParser(prog="medmtl", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {medmtl.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("reproduce", help="run one paper experiment and write NAME.json and NAME.png")
    rep.add_argument("name", nargs="?", help="experiment name (see --list)")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit")
    rep.add_argument("--quick", action="store_true", help="reduced run (fewer folds, sizes, grid points)")
    rep.add_argument("--out", default="results", help="output directory (default: results)")
    rep.add_argument("--n-jobs", type=int, default=1, help="parallel workers (-1: all cores)")
    rep.add_argument("--backend", choices=["loky", "dask"], default="loky")
    rep.add_argument("--scheduler", default=None, help="dask scheduler address for --backend dask")
    rep.add_argument("--cache-dir", default=None, help="where finished grid cells are kept")
    rep.add_argument("--no-cache", action="store_true", help="recompute every grid cell")
    rep.add_argument("--seed", type=int, default=0)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.list or args.name is None:
        for name in registry.names():
            print(f"{name:24s} {registry.describe(name)}")
        return 0
    if args.name not in registry.names():
        print(f"unknown experiment {args.name!r}; run 'medmtl reproduce --list'", file=sys.stderr)
        return 2
    result = registry.run(args.name, out=args.out, quick=args.quick, seed=args.seed, n_jobs=args.n_jobs,
                          backend=args.backend, scheduler=args.scheduler, cache_dir=args.cache_dir,
                          use_cache=not args.no_cache)
    print(f"wrote {args.out}/{result.name}.json and {args.out}/{result.name}.png")
    for method, values in result.measured.items():
        shown = ", ".join("-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v) for v in values)
        print(f"  {method:28s} {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
