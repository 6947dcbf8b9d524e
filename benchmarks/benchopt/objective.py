"""The objective of the benchopt benchmark of the MED dual: ``J`` of multi-task feature selection.

Every solver returns multipliers ``lam`` of one :class:`medmtl.med.MEDDual`; the benchmark
evaluates them all alike. ``value`` (what benchopt minimises and draws) is ``-J`` at the
multipliers projected onto the feasible set (:meth:`MEDDual.project`), so that an
interior-point iterate outside the box or off the equalities is not credited with a ``J``
above the optimum; ``infeasibility`` records how far the returned multipliers were from that
set, and ``duality_gap`` is the certified bound on ``J* - J`` of the projected multipliers.
"""

import numpy as np
from benchopt import BaseObjective

from medmtl.med.builders import feature_selection_dual
from medmtl.med.solvers.kkt import duality_gap


class Objective(BaseObjective):
    """Maximise the MED dual ``J`` (benchopt minimises ``-J``)."""

    name = "MED dual"
    min_benchopt_version = "1.5"
    # medmtl itself is installed from its repository (pip install .), not by benchopt
    requirements = []
    parameters = {"C": [1.0], "alpha": [10.0]}

    def set_data(self, Xs, ys):
        """Build the dual of multi-task feature selection on the tasks' data."""
        self.dual = feature_selection_dual(Xs, ys, C=self.C, alpha=self.alpha)

    def get_objective(self):
        """What each solver receives: the dual itself."""
        return dict(dual=self.dual)

    def evaluate_result(self, lam):
        """``-J``, ``J``, the infeasibility of ``lam`` and the duality gap."""
        lam = np.asarray(lam, dtype=float)
        feasible = self.dual.project(lam)
        J = float(self.dual.objective(feasible))
        return dict(value=-J, J=J, infeasibility=float(np.max(np.abs(lam - feasible), initial=0.0)),
                    duality_gap=float(duality_gap(self.dual, feasible)))

    def get_one_result(self):
        """The start of every method: ``lam = 0``."""
        return dict(lam=np.zeros(self.dual.n))
