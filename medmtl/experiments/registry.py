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

The registry holds one :class:`Experiment` record per name: the function that runs it, its
description, and the function that turns its committed full-run result into rows of the
results page (:func:`medmtl.experiments.report.readme_rows` fills that field).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib

from medmtl.experiments.cache import clear_cache as _clear_cache
from medmtl.experiments.result import mark_quick
from medmtl.experiments.runner import RunOptions

__all__ = ["Experiment", "register", "set_rows", "experiments", "get", "names", "describe", "run"]


@dataclasses.dataclass
class Experiment:
    """One registered experiment.

    Parameters
    ----------
    name : str
        What ``medmtl reproduce NAME`` calls it.
    description : str
        One line for ``medmtl reproduce --list``.
    run : callable, optional
        ``run(options=RunOptions(), **own_parameters)`` returning an ``ExperimentResult`` or
        ``(result, figure)``.
    rows : callable, optional
        ``rows(result) -> list[Row]``: the results page's rows from a full run's result.
    module : str, optional
        The module that registered it; orders the results page.
    spec : Spec, optional
        Its declarative part: full configuration, quick reduction, paper values.
    """

    name: str
    description: str = ""
    run: object = None
    rows: object = None
    module: str = ""
    spec: object = None


_EXPERIMENTS = {}


def _entry(name):
    return _EXPERIMENTS.setdefault(name, Experiment(name))

# Modules that register experiments; imported lazily so that the command line starts fast.
EXPERIMENT_MODULES = [
    "medmtl.experiments.med_figures",
    "medmtl.experiments.med_landmine",
    "medmtl.experiments.med_heart",
    "medmtl.experiments.med_lecture",
    "medmtl.experiments.med_regression",
    "medmtl.experiments.shampo",
    "medmtl.experiments.shampo_rows",
    "medmtl.experiments.amlc",
    "medmtl.experiments.amlc_rows",
    "medmtl.experiments.mts3flc",
    "medmtl.experiments.text_features",
    "medmtl.experiments.structure",
]

_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(RunOptions))

# Every experiment's first parameter, documented once: ``register`` adds it to the docstring
# of a function that does not document it itself.
_OPTIONS_DOC = ("options : RunOptions, default=RunOptions()",
                "    How to run: quick or full, seed, workers, cache "
                "(:class:`~medmtl.experiments.runner.RunOptions`).")


def _document_options(func):
    """``func`` with ``options`` in its docstring's Parameters section (added if missing)."""
    doc = func.__doc__ or ""
    lines = doc.splitlines()
    if any(line.strip().startswith("options :") for line in lines):
        return func
    indent = next((line[:len(line) - len(line.lstrip())] for line in lines[1:] if line.strip()), "    ")
    entry = [indent + _OPTIONS_DOC[0], indent + _OPTIONS_DOC[1]]
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "Parameters" and set(lines[i + 1].strip()) == {"-"}:
            func.__doc__ = "\n".join(lines[:i + 2] + entry + lines[i + 2:])
            return func
    head = doc.rstrip()
    func.__doc__ = "\n".join([head, "", indent + "Parameters", indent + "----------", *entry, indent])
    return func


def register(name, description=None):
    """Decorator adding an experiment function to the registry under ``name``.

    The function's docstring gains the ``options`` parameter when it does not document it.

    ``name`` may be a :class:`~medmtl.experiments.spec.Spec`, which gives the name and the
    description and is kept in the experiment's record.

    The registry keeps the function wrapped so that a figure it returns as
    ``(result, figure)`` is detached from pyplot (a notebook shows it where it is displayed,
    once, not a second time at the end of the cell) and, from a quick run, carries
    :func:`~medmtl.experiments.result.mark_quick`. The module's name still refers to the
    function itself.

    Parameters
    ----------
    name : str or Spec
        What ``medmtl reproduce NAME`` and :func:`run` call it, or the experiment's spec.
    description : str, optional
        One line for ``medmtl reproduce --list`` (with a spec: the spec's).

    Returns
    -------
    callable
        The decorator.
    """
    spec = None
    if not isinstance(name, str):
        spec, name, description = name, name.name, name.description

    def decorate(func):
        _document_options(func)
        entry = _entry(name)
        if entry.run is not None and entry.run.__wrapped__ is not func:
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

        entry.run, entry.description, entry.module, entry.spec = experiment, description, func.__module__, spec
        return func

    return decorate


def set_rows(name, func):
    """Record ``func(result) -> list[Row]`` as the results-page rows of experiment ``name``.

    Parameters
    ----------
    name : str
        The experiment's registered name.
    func : callable
        The row function.

    Raises
    ------
    ValueError
        Another function already gives ``name``'s rows.
    """
    entry = _entry(name)
    if entry.rows is not None and entry.rows is not func:
        raise ValueError(f"results rows registered twice for {name!r}")
    entry.rows = func
    entry.module = entry.module or func.__module__
    _EXPERIMENTS[name] = _EXPERIMENTS.pop(name)  # the results page lists rows in the order given


def experiments():
    """Every registered experiment, in the order of :data:`EXPERIMENT_MODULES`.

    Within a module, experiments with rows come in the order the module gives their rows.

    Returns
    -------
    list of Experiment
    """
    _load_all()
    modules = EXPERIMENT_MODULES

    def place(entry):
        return modules.index(entry.module) if entry.module in modules else len(modules)

    return sorted(_EXPERIMENTS.values(), key=place)


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
    return sorted(name for name, entry in _EXPERIMENTS.items() if entry.run is not None)


def describe(name):
    """The one-line description of an experiment.

    Parameters
    ----------
    name : str
        The experiment's registered name.

    Returns
    -------
    str
    """
    return _EXPERIMENTS[_checked(name)].description


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
    return _EXPERIMENTS[_checked(name)].run


def _checked(name):
    _load_all()
    if name not in _EXPERIMENTS or _EXPERIMENTS[name].run is None:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(names())}")
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
