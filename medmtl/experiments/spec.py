"""An experiment as data: what it runs at full size, what its quick run reduces, what the
paper reports.

A module describes each experiment by one :class:`Spec` and hands it to
:func:`~medmtl.experiments.registry.register`; its run function reads its configuration with
``SPEC.settings(options.quick)`` instead of branching on ``quick`` itself::

    SPEC = Spec("heart-pooling", "JMLR Fig. 3: ...",
                grid={"splits": 100, "Cs": [...], "alphas": [...]},
                quick={"splits": 3, "alphas": [...]},
                paper={"adaptive": 0.865, "pooled": 0.861})

    @register(SPEC)
    def heart_pooling(options=RunOptions()):
        config = SPEC.settings(options.quick)
        ...
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

__all__ = ["Spec"]


@dataclass(frozen=True)
class Spec:
    """The declarative part of an experiment.

    Parameters
    ----------
    name, description : str
        The experiment's name and its line in ``medmtl reproduce --list``.
    grid : dict
        The full run's configuration: sizes, folds, hyper-parameter grids, data sets.
    quick : dict
        The entries the quick run replaces (every key must be one of ``grid``'s).
    paper : dict
        The paper's numbers, as the result's ``paper`` field and the results page show them.

    Examples
    --------
    >>> spec = Spec("toy", "a toy", grid={"folds": 5, "Cs": [1.0, 10.0]}, quick={"folds": 1})
    >>> spec.settings(quick=True)
    {'folds': 1, 'Cs': [1.0, 10.0]}
    >>> Spec("bad", "", grid={"folds": 5}, quick={"fold": 1})
    Traceback (most recent call last):
    ...
    ValueError: the quick run of 'bad' replaces keys the full run does not have: ['fold']
    """

    name: str
    description: str
    grid: dict = field(default_factory=dict)
    quick: dict = field(default_factory=dict)
    paper: dict = field(default_factory=dict)

    def __post_init__(self):
        unknown = sorted(set(self.quick) - set(self.grid))
        if unknown:
            raise ValueError(f"the quick run of {self.name!r} replaces keys the full run does not have: {unknown}")

    def settings(self, quick=False):
        """The configuration of a full run, or of a quick one.

        Parameters
        ----------
        quick : bool, default=False

        Returns
        -------
        dict
            A deep copy: the caller may change it.
        """
        return copy.deepcopy({**self.grid, **self.quick} if quick else self.grid)
