"""The registry of reproducible experiments behind ``medmtl reproduce NAME``.

An experiment module defines one function per figure or table and registers it::

    @register("dermatology", "JMLR Fig. 1: multi-task feature selection vs SVMs")
    def dermatology(quick=False, n_jobs=1, backend="loky", scheduler=None, client=None,
                    cache_dir=None, seed=0):
        ...
        return ExperimentResult(...)          # or (result, matplotlib_figure)

Every experiment takes those keyword arguments, sends its grid through
:func:`medmtl.experiments.runner.run_grid`, and returns an ``ExperimentResult``.
"""

from __future__ import annotations

import importlib

__all__ = ["register", "get", "names", "describe", "run"]

_EXPERIMENTS = {}

# Modules that register experiments; imported lazily so that the command line starts fast.
EXPERIMENT_MODULES = [
    "medmtl.experiments.med_figures",
    "medmtl.experiments.med_lecture",
    "medmtl.experiments.shampo",
    "medmtl.experiments.amlc",
    "medmtl.experiments.mts3flc",
]


def register(name, description):
    """Decorator adding an experiment function to the registry under ``name``."""

    def decorate(func):
        if name in _EXPERIMENTS and _EXPERIMENTS[name][0] is not func:
            raise ValueError(f"experiment {name!r} registered twice")
        _EXPERIMENTS[name] = (func, description)
        return func

    return decorate


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
    _load_all()
    return _EXPERIMENTS[name][1]


def get(name):
    """The experiment function registered under ``name``."""
    _load_all()
    if name not in _EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(sorted(_EXPERIMENTS))}")
    return _EXPERIMENTS[name][0]


def run(name, out=None, **kwargs):
    """Run experiment ``name``; write ``out/NAME.json`` and ``out/NAME.png`` if ``out`` is given.

    Returns the ``ExperimentResult``.
    """
    output = get(name)(**kwargs)
    result, figure = output if isinstance(output, tuple) else (output, None)
    if out is not None:
        result.save(out, figure=figure)
    elif figure is not None:
        import matplotlib.pyplot as plt
        plt.close(figure)
    return result
