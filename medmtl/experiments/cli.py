"""The ``medmtl`` command line.

Usage::

    medmtl list
    medmtl reproduce NAME [--quick] [--out DIR] [--n-jobs N] [--backend loky|dask]
                          [--scheduler ADDRESS] [--cache-dir DIR] [--no-cache] [--clear-cache]
                          [--seed S]
    medmtl cache clear [NAME] [--cache-dir DIR]

Finished grid cells are kept in ``--cache-dir``, else ``$MEDMTL_CACHE``, else medmtl's folder
in the user's cache directory (:func:`~medmtl.experiments.cache.default_cache_dir`).
``medmtl reproduce --list`` and ``medmtl reproduce --clear-cache`` are the older spellings of
``medmtl list`` and ``medmtl cache clear``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import medmtl
from medmtl.experiments import registry
from medmtl.experiments.cache import CacheNotWritable, clear_cache, default_cache_dir


def _add_cache_dir(parser):
    parser.add_argument("--cache-dir", default=None,
                        help="where finished grid cells are kept (default: $MEDMTL_CACHE, else the user's "
                             "cache directory)")


def build_parser():
    """The argument parser of the ``medmtl`` command.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(prog="medmtl", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {medmtl.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the paper experiments")
    rep = sub.add_parser("reproduce", help="run one paper experiment and write NAME.json and NAME.png")
    rep.add_argument("name", nargs="?", help="experiment name (see 'medmtl list')")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit (as 'medmtl list')")
    rep.add_argument("--quick", action="store_true", help="reduced run (fewer folds, sizes, grid points)")
    rep.add_argument("--out", default="results", help="output directory (default: results)")
    rep.add_argument("--n-jobs", type=int, default=1, help="parallel workers (-1: all cores)")
    rep.add_argument("--backend", choices=["loky", "dask"], default="loky")
    rep.add_argument("--scheduler", default=None, help="dask scheduler address for --backend dask")
    _add_cache_dir(rep)
    rep.add_argument("--no-cache", action="store_true", help="recompute every grid cell and store none")
    rep.add_argument("--clear-cache", action="store_true",
                     help="delete NAME's stored cells first (without NAME: every experiment's)")
    rep.add_argument("--seed", type=int, default=0)
    cache = sub.add_parser("cache", help="the store of finished grid cells")
    cache_sub = cache.add_subparsers(dest="action", required=True)
    clear = cache_sub.add_parser("clear", help="delete the stored cells of NAME (without NAME: of every experiment)")
    clear.add_argument("name", nargs="?", help="one experiment's grid")
    _add_cache_dir(clear)
    return parser


def _list():
    for name in registry.names():
        print(f"{name:24s} {registry.describe(name)}")
    return 0


def _clear(folder, name=None):
    try:
        removed = clear_cache(folder, name)
    except CacheNotWritable as err:
        print(f"medmtl: {err}", file=sys.stderr)
        return 2
    print(f"deleted {removed} stored cell file(s) from {folder if name is None else folder / name}")
    return 0


def main(argv=None):
    """Run the ``medmtl`` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 for an unknown experiment or a cache folder that
        cannot be written.
    """
    args = build_parser().parse_args(argv)
    if args.command == "list":
        return _list()
    folder = default_cache_dir() if args.cache_dir is None else Path(args.cache_dir)
    if args.command == "cache":
        return _clear(folder, args.name)
    if args.clear_cache and args.name is None and not args.list:
        return _clear(folder)
    if args.list or args.name is None:
        return _list()
    if args.name not in registry.names():
        print(f"unknown experiment {args.name!r}; run 'medmtl list'", file=sys.stderr)
        return 2
    try:
        result = registry.run(args.name, out=args.out, quick=args.quick, seed=args.seed, n_jobs=args.n_jobs,
                              backend=args.backend, scheduler=args.scheduler, cache_dir=folder,
                              use_cache=not args.no_cache, clear_cache=args.clear_cache)
    except CacheNotWritable as err:
        print(f"medmtl: {err}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}/{result.name}.json and {args.out}/{result.name}.png")
    print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
