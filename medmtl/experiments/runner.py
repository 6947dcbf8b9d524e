"""Run a grid of independent experiment cells: locally, on a dask cluster, resumably.

An experiment is a function of one *cell* (a dict of JSON-serialisable settings such as
``{"size": 40, "fold": 2, "C": 1.0}``) that returns a JSON-serialisable value. ``run_grid``
evaluates every cell once:

- through joblib, with local processes (``backend="loky"``) or a dask.distributed cluster
  (``backend="dask"`` with a scheduler address or a ``Client``);
- with finished cells cached on disk (one small file per cell, keyed by the experiment name
  and the cell), so an interrupted run resumes where it stopped;
- retrying a cell whose worker failed, up to ``retries`` times, before giving up on it;
- with a tqdm progress bar.

Results come back in the order of ``cells`` whatever order the workers finish in, so a
local run and a cluster run give the same list.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
import traceback
from pathlib import Path

from joblib import Parallel, delayed, parallel_config

__all__ = ["run_grid", "cell_key", "default_cache_dir"]


def default_cache_dir():
    """``$MEDMTL_CACHE`` if set, else ``.medmtl_cache`` in the working directory."""
    return Path(os.environ.get("MEDMTL_CACHE", ".medmtl_cache"))


def cell_key(name, cell):
    """A stable file name for one cell of experiment ``name``.

    >>> cell_key("demo", {"b": 1, "a": 2}) == cell_key("demo", {"a": 2, "b": 1})
    True
    """
    blob = json.dumps({"experiment": name, "cell": cell}, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:20]


def _guarded(func, cell):
    # Return the exception as a value so that one failing cell does not end the batch.
    try:
        return True, func(cell)
    except Exception as exc:  # noqa: BLE001 - reported and retried by the caller
        return False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"


def _write_atomic(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        pickle.dump(value, fh)
    os.replace(tmp, path)


def run_grid(func, cells, *, name, n_jobs=1, backend="loky", scheduler=None, client=None,
             cache_dir=None, use_cache=True, retries=2, progress=True):
    """Evaluate ``func(cell)`` for every cell and return the results in cell order.

    Parameters
    ----------
    func : callable
        A module-level function of one cell (it is pickled to the workers).
    cells : list of dict
        The grid, one JSON-serialisable dict per cell.
    name : str
        The experiment's name; part of every cache key.
    n_jobs : int, default=1
        Parallel workers (joblib semantics: -1 for all cores).
    backend : {"loky", "dask"}, default="loky"
        ``"dask"`` sends the cells to a dask.distributed cluster: the one at ``scheduler``,
        the ``client`` given, or a new ``LocalCluster``.
    scheduler : str, optional
        Address of a dask scheduler, e.g. ``"tcp://10.0.0.5:8786"``.
    client : distributed.Client, optional
        An existing client (from Python); takes precedence over ``scheduler``.
    cache_dir : path, optional
        Where finished cells are stored (default: :func:`default_cache_dir`).
    use_cache : bool, default=True
        Read and write the cache. Set False to recompute everything.
    retries : int, default=2
        How many more times a failed cell is tried before the run raises.
    progress : bool, default=True
        Show a tqdm progress bar.

    Examples
    --------
    >>> import operator, tempfile
    >>> run_grid(operator.itemgetter("a"), [{"a": 1}, {"a": 2}], name="doc",
    ...          cache_dir=tempfile.mkdtemp(), progress=False)
    [1, 2]
    """
    if backend not in ("loky", "dask", "threading", "sequential"):
        raise ValueError(f"backend must be 'loky' or 'dask', got {backend!r}")
    cells = list(cells)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    paths = [cache / name / f"{cell_key(name, c)}.pkl" for c in cells]
    results = [None] * len(cells)
    todo = []
    for i, path in enumerate(paths):
        if use_cache and path.exists():
            with open(path, "rb") as fh:
                results[i] = pickle.load(fh)
        else:
            todo.append(i)

    bar = None
    if progress and todo:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(cells), initial=len(cells) - len(todo), desc=name, leave=False)

    own_client = None
    try:
        if backend == "dask" and todo:
            from distributed import Client, LocalCluster
            if client is None:
                if scheduler is not None:
                    client = own_client = Client(scheduler)
                else:
                    own_client = Client(LocalCluster(n_workers=max(1, n_jobs if n_jobs > 0 else os.cpu_count()),
                                                     threads_per_worker=1, processes=True,
                                                     dashboard_address=None))
                    client = own_client
        failures = {}
        attempt = 0
        while todo:
            config = {"backend": backend, "n_jobs": n_jobs}
            if backend == "dask":
                config = {"backend": "dask", "wait_for_workers_timeout": 60}
            with parallel_config(**config):
                parallel = Parallel(return_as="generator_unordered")
                outputs = parallel(delayed(_index_guarded)(func, i, cells[i]) for i in todo)
                failed = []
                for i, (ok, value) in outputs:
                    if ok:
                        results[i] = value
                        if use_cache:
                            _write_atomic(paths[i], value)
                        if bar is not None:
                            bar.update(1)
                    else:
                        failures[i] = value
                        failed.append(i)
            todo = sorted(failed)
            attempt += 1
            if todo and attempt > retries:
                i = todo[0]
                raise RuntimeError(f"{len(todo)} cell(s) of {name!r} failed after {retries + 1} "
                                   f"attempts; first: {cells[i]}\n{failures[i]}")
    finally:
        if bar is not None:
            bar.close()
        if own_client is not None:
            cluster = getattr(own_client, "cluster", None)
            own_client.close()
            if cluster is not None:
                cluster.close()
    return results


def _index_guarded(func, i, cell):
    return i, _guarded(func, cell)
