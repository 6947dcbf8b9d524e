"""The registry of reproducible experiments behind ``medmtl reproduce NAME``.

An experiment module defines one function per figure or table and registers it::

    @register("dermatology", "JMLR Fig. 1: multi-task feature selection vs SVMs")
    def dermatology(options=RunOptions()):
        cells = [...]
        out = run_grid(CellCall(dermatology_fold), cells, name="dermatology", options=options)
        ...
        return ExperimentResult(...)          # or (result, matplotlib_figure)

Every experiment takes a :class:`~medmtl.experiments.runner.RunOptions` first (how to
run: quick or full, seed, workers, cache), then keyword arguments of its own, sends its
grid through :func:`~medmtl.experiments.runner.run_grid`, and returns an
``ExperimentResult``. :func:`run` is the convenient call: ``run("dermatology", quick=True)``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib

from medmtl.experiments.cache import clear_cache as _clear_cache
from medmtl.experiments.result import mark_quick
from medmtl.experiments.runner import RunOptions

__all__ = ["register", "get", "names", "describe", "run"]

_EXPERIMENTS = {}

# Modules that register experiments; imported lazily so that the command line starts fast.
EXPERIMENT_MODULES = [
    "medmtl.experiments.med_figures",
    "medmtl.experiments.med_lecture",
    "medmtl.experiments.shampo",
    "medmtl.experiments.amlc",
    "medmtl.experiments.mts3flc",
    "medmtl.experiments.text_features",
    "medmtl.experiments.structure",
]

_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(RunOptions))


def register(name, description):
    """Decorator adding an experiment function to the registry under ``name``.

    The registry keeps the function wrapped so that a figure it returns as
    ``(result, figure)`` is detached from pyplot (a notebook shows it where it is displayed,
    once, not a second time at the end of the cell) and, from a quick run, carries
    :func:`~medmtl.experiments.result.mark_quick`. The module's name still refers to the
    function itself.

    Parameters
    ----------
    name : str
        What ``medmtl reproduce NAME`` and :func:`run` call it.
    description : str
        One line for ``medmtl reproduce --list``.

    Returns
    -------
    callable
        The decorator.
    """

    def decorate(func):
        if name in _EXPERIMENTS and _EXPERIMENTS[name][0].__wrapped__ is not func:
            raise ValueError(f"experiment {name!r} registered twice")

        @functools.wraps(func)
        def experiment(*args, **kwargs):
            output = func(*args, **kwargs)
            if isinstance(output, tuple):
                result, figure = output
                _detach(figure)
                if result.quick:
                    mark_quick(figure)
            return output

        _EXPERIMENTS[name] = (experiment, description)
        return func

    return decorate


def _detach(figure):
    """Take a figure drawn through pyplot out of pyplot's list of open figures."""
    if figure.canvas.manager is not None:
        import matplotlib.pyplot as plt

        plt.close(figure)


def _load_all():
    for module in EXPERIMENT_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # a real missing dependency inside the module
                raise


def names():
    """The registered experiment names, sorted."""
    _load_all()
    return sorted(_EXPERIMENTS)


def describe(name):
    """The one-line description experiment ``name`` was registered with.

    Parameters
    ----------
    name : str
        A registered experiment.

    Returns
    -------
    str
    """
    return _EXPERIMENTS[_checked(name)][1]


def get(name):
    """The experiment function registered under ``name``.

    Parameters
    ----------
    name : str
        A registered experiment.

    Returns
    -------
    callable
        ``func(options=RunOptions(), **own_parameters)`` returning an ``ExperimentResult``
        or ``(result, figure)``.

    Raises
    ------
    KeyError
        ``name`` is not registered; the message lists the known names.
    """
    return _EXPERIMENTS[_checked(name)][0]


def _checked(name):
    _load_all()
    if name not in _EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(sorted(_EXPERIMENTS))}")
    return name


def run(name, out=None, *, clear_cache=False, **kwargs):
    """Run experiment ``name``; write ``out/NAME.json`` and ``out/NAME.png`` if ``out`` is given.

    Parameters
    ----------
    name : str
        A registered experiment (see :func:`names`).
    out : str or path, optional
        The output directory.
    clear_cache : bool, default=False
        First delete every stored cell of ``name`` (all seeds and sizes) from the cache
        folder; the run then computes and stores them afresh.
    **kwargs
        The fields of :class:`~medmtl.experiments.runner.RunOptions` (``quick``, ``seed``,
        ``n_jobs``, ``backend``, ``scheduler``, ``client``, ``cache_dir``, ``use_cache``,
        ``progress``), and any parameter of the experiment's own (e.g. ``draw`` of
        ``landmine-kernels``).

    Returns
    -------
    ExperimentResult
    """
    options = RunOptions(**{k: kwargs.pop(k) for k in list(kwargs) if k in _OPTION_NAMES})
    experiment = get(name)
    if clear_cache:
        _clear_cache(options.cache, name)
    output = experiment(options, **kwargs)
    result, figure = output if isinstance(output, tuple) else (output, None)
    if out is not None:
        result.save(out, figure=figure)
    return result
