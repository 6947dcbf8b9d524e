"""Run a grid of independent experiment cells: locally, on a dask cluster, resumably.

An experiment is a function of one *cell* (a dict of JSON-serialisable settings such as
``{"size": 40, "fold": 2, "C": 1.0}``) that returns a JSON-serialisable value. A function
whose parameters are the settings, ``fold_scores(size, fold, C=1.0)``, becomes one with
:class:`CellCall`. ``run_grid`` evaluates every cell once:

- through joblib, with local processes (``backend="loky"``) or a dask.distributed cluster
  (``backend="dask"`` with a scheduler address or a ``Client``);
- with finished cells cached on disk (:mod:`medmtl.experiments.cache`: plain JSON and
  ``.npz`` files keyed by the experiment name, the cell, and fingerprints of medmtl's code and
  of the data), so an interrupted run resumes where it stopped and changed code or data is
  recomputed;
- retrying a cell whose worker failed, up to ``retries`` times, before giving up on it;
- with a tqdm progress bar on a full run in a terminal or a notebook.

How to run (workers, cluster, cache, seed, quick or full) is one :class:`RunOptions`.
Results come back in the order of ``cells`` whatever order the workers finish in, so a
local run and a cluster run give the same list.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from joblib import Parallel, delayed, parallel_config

from medmtl.experiments.cache import CellCache, default_cache_dir, encode_value

__all__ = ["RunOptions", "CellCall", "run_grid", "default_cache_dir"]

BACKENDS = ("loky", "dask", "threading", "sequential")

# A cell's version label: part of its cache key (raise it to recompute the cells after a
# change of what they compute), never passed to the function.
VERSION_KEY = "v"


@dataclass(frozen=True)
class RunOptions:
    """How to run an experiment: its size, its seed, its workers and its cache.

    Parameters
    ----------
    quick : bool, default=False
        The reduced run (fewer folds, sizes and grid points) that takes seconds to minutes.
    seed : int, default=0
        The seed every random split and stream of the experiment derives from.
    n_jobs : int, default=1
        Parallel workers (joblib semantics: -1 for all cores).
    backend : {"loky", "dask", "threading", "sequential"}, default="loky"
        ``"dask"`` sends the cells to a dask.distributed cluster: the one at ``scheduler``,
        the ``client`` given, or a new ``LocalCluster`` of ``n_jobs`` workers.
    scheduler : str, optional
        Address of a dask scheduler, e.g. ``"tcp://10.0.0.5:8786"``.
    client : distributed.Client, optional
        An existing client (from Python); takes precedence over ``scheduler``.
    cache_dir : str or path, optional
        Where finished cells are stored (default: :func:`default_cache_dir`).
    use_cache : bool, default=True
        Read and write the cache. False recomputes everything and stores nothing.
    progress : bool, default=True
        A tqdm progress bar over the cells of a full run: a widget in a notebook (with
        ipywidgets installed), text in a terminal, none elsewhere (logs, pipes). Quick runs
        take seconds: they never show one.

    Examples
    --------
    >>> from dataclasses import replace
    >>> options = RunOptions(quick=True, n_jobs=2)
    >>> replace(options, seed=1).seed, options.backend
    (1, 'loky')
    >>> RunOptions(backend="spark")
    Traceback (most recent call last):
    ...
    ValueError: backend must be one of 'loky', 'dask', 'threading', 'sequential'; got 'spark'
    """

    quick: bool = False
    seed: int = 0
    n_jobs: int = 1
    backend: str = "loky"
    scheduler: str | None = None
    client: object = None
    cache_dir: str | os.PathLike | None = None
    use_cache: bool = True
    progress: bool = True

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}; got {self.backend!r}")

    @property
    def cache(self):
        """The cache directory: ``cache_dir``, else :func:`default_cache_dir`."""
        return Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()


@dataclass(frozen=True)
class CellCall:
    """``func`` called with one cell's settings as keyword arguments.

    The cell's version label ``"v"``, if any, only renews its cache key and is not passed.
    Picklable whenever ``func`` is (a module-level function), so it runs on any worker.

    Parameters
    ----------
    func : callable
        A function whose parameters are a cell's settings.

    Examples
    --------
    >>> def area(width, height=1.0):
    ...     return width * height
    >>> CellCall(area)({"width": 2.0, "height": 3.0, "v": 2})
    6.0
    """

    func: object

    def __call__(self, cell):
        return self.func(**{k: v for k, v in cell.items() if k != VERSION_KEY})


def _guarded(func, i, cell):
    # Return the exception as a value so that one failing cell does not end the batch.
    try:
        return i, True, func(cell)
    except Exception as exc:  # noqa: BLE001 - reported and retried by the caller
        return i, False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"


def _in_notebook_kernel():
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and "IPKernelApp" in shell.config


def _progress_bar(options, total, initial, desc):
    """A tqdm bar where somebody watches a full run, else None.

    In a notebook, tqdm's widget bar, which needs ipywidgets (without it ``tqdm.auto`` warns
    and falls back to a text bar that fills the cell's output with lines: no bar then); in a
    terminal, the text bar; where stderr is not a terminal (logs, pipes) nobody watches.
    """
    if not options.progress or options.quick:
        return None
    if _in_notebook_kernel():
        try:
            import ipywidgets  # noqa: F401 - the widget bar draws with it
        except ImportError:
            return None
        from tqdm.notebook import tqdm
    elif sys.stderr is not None and sys.stderr.isatty():
        from tqdm.std import tqdm
    else:
        return None
    return tqdm(total=total, initial=initial, desc=desc, leave=False)


def _store(cache, name, cell, value):
    # A value the cache cannot store is an error with or without the cache: one contract.
    try:
        if cache is not None:
            cache.store(cell, value)
        else:
            encode_value(value)
    except TypeError as exc:
        raise TypeError(f"a cell of {name!r} returned a value the experiment cache cannot store: "
                        f"{exc}; cell: {cell}") from None


@contextlib.contextmanager
def _dask_client(options):
    """The options' client, one connected to their scheduler, or a new local cluster."""
    if options.client is not None:
        yield options.client
        return
    from distributed import Client, LocalCluster

    if options.scheduler is not None:
        with Client(options.scheduler) as client:
            yield client
        return
    n_workers = max(1, options.n_jobs if options.n_jobs > 0 else os.cpu_count())
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield client


def _parallel_config(options):
    if options.backend == "dask":
        return {"backend": "dask", "wait_for_workers_timeout": 60}
    return {"backend": options.backend, "n_jobs": options.n_jobs}


def run_grid(func, cells, *, name, options=None, retries=2):
    """Evaluate ``func(cell)`` for every cell and return the results in cell order.

    Parameters
    ----------
    func : callable
        A module-level function of one cell (it is pickled to the workers), or a
        :class:`CellCall`.
    cells : list of dict
        The grid, one dict of JSON values per cell.
    name : str
        The experiment's name; part of every cache key.
    options : RunOptions, optional
        Workers, cluster and cache (default: ``RunOptions()``, one local process).
    retries : int, default=2
        How many more times a failed cell is tried before the run raises.

    Returns
    -------
    list
        ``func(cell)`` for every cell, in the order of ``cells``.

    Raises
    ------
    RuntimeError
        A cell still fails after ``retries`` more attempts.
    TypeError
        A cell's value holds something the cache cannot store exactly (see
        :func:`~medmtl.experiments.cache.encode_value`), whether or not the cache is used.

    Examples
    --------
    >>> import operator, tempfile
    >>> options = RunOptions(cache_dir=tempfile.mkdtemp(), progress=False)
    >>> run_grid(operator.itemgetter("a"), [{"a": 1}, {"a": 2}], name="doc", options=options)
    [1, 2]
    """
    options = RunOptions() if options is None else options
    cells = list(cells)
    cache = CellCache(options.cache, name) if options.use_cache else None
    results = [None] * len(cells)
    todo = []
    for i, cell in enumerate(cells):
        found, value = cache.load(cell) if cache is not None else (False, None)
        if found:
            results[i] = value
        else:
            todo.append(i)
    if not todo:
        return results

    with contextlib.ExitStack() as stack:
        bar = _progress_bar(options, len(cells), len(cells) - len(todo), name)
        if bar is not None:
            stack.enter_context(bar)
        if options.backend == "dask":
            stack.enter_context(_dask_client(options))
        failures = {}
        for _ in range(retries + 1):
            with parallel_config(**_parallel_config(options)):
                outputs = Parallel(return_as="generator_unordered")(
                    delayed(_guarded)(func, i, cells[i]) for i in todo)
                for i, ok, value in outputs:
                    if not ok:
                        failures[i] = value
                        continue
                    failures.pop(i, None)
                    results[i] = value
                    _store(cache, name, cells[i], value)
                    if bar is not None:
                        bar.update(1)
            todo = sorted(failures)
            if not todo:
                return results
    i = todo[0]
    raise RuntimeError(f"{len(todo)} cell(s) of {name!r} failed after {retries + 1} attempts; "
                       f"first: {cells[i]}\n{failures[i]}")
