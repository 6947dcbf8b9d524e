"""Solution methods for the MED dual, one calling contract for all of them.

``solve(dual, method="auto", *, solver=None, options=None, init=None) -> MEDSolution`` runs
any registered method: the built-in ``"auto"`` (the default), ``"newton"`` (projected
Newton with SMO subproblems), ``"cd"`` (coordinate steps in feature space, for factor
models), ``"ssnal"`` (proximal point steps solved by semismooth Newton in the weights),
``"bound"`` (Algorithm 1) and ``"direct"`` (CVXPY, the reference answer), or one a
researcher adds by subclassing :class:`Method` and calling :func:`register_method`
(``docs/extending/add_a_solver.md`` shows how). Every estimator's ``method=`` takes the same
names, and its ``solver_options`` are the method's options. Every answer carries a
certified bound on how far its ``J`` is below the optimum, ``info["duality_gap"]``.

Modules: :mod:`~medmtl.med.solvers.base` (the contract), :mod:`~.registry` (the registry,
the ``"auto"`` policy, :func:`solve`), :mod:`~.kkt` (what every method measures alike: the
KKT gap, the duality gap, the rounding floor, the line search), one module per method
(:mod:`~.newton`, :mod:`~.coordinate`, :mod:`~.ssnal`, :mod:`~.bound`, :mod:`~.direct`) and
their parts: the Newton models (:mod:`~.newton_models`), their Gram storage
(:mod:`~.gram_storage`), SMO (:mod:`~.smo`), the coordinate passes and face steps
(:mod:`~.coordinate_steps`, :mod:`~.coordinate_face`) and Algorithm 1's block QPs
(:mod:`~.qp`).

Examples
--------
>>> import numpy as np
>>> from medmtl.med.builders import feature_selection_dual
>>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
>>> y = np.array([1, 1, -1, -1])
>>> dual = feature_selection_dual([X], [y], C=1.0, alpha=1.0)
>>> a = solve(dual, method="bound")
>>> b = solve(dual, method="direct")
>>> bool(abs(a.objective - b.objective) <= 1e-6 * abs(b.objective))
True
>>> sorted(METHODS)
['auto', 'bound', 'cd', 'direct', 'newton', 'ssnal']
"""

from .base import (
    Checked,
    Interval,
    MEDSolution,
    Method,
    Option,
    Options,
    installed_solvers,
    max_iter_option,
    tol_option,
)
from .bound import remaining_gap
from .registry import (
    METHODS,
    Plan,
    choose_method,
    get_method,
    plan,
    register_method,
    solve,
    unregister_method,
)

__all__ = ["solve", "plan", "Plan", "get_method", "register_method", "unregister_method", "choose_method",
           "METHODS", "Method", "Option", "Interval", "Options", "Checked", "max_iter_option",
           "tol_option", "MEDSolution", "installed_solvers", "remaining_gap"]
