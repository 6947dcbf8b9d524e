"""The registry of solution methods, the ``"auto"`` policy, and :func:`solve`.

:func:`solve` is the one way to run a method, built-in or registered: it looks the method
up, checks the inner solver's name, the options and the starting point, runs the method,
checks that the answer is feasible and finite, and turns its status into at most one
``ConvergenceWarning`` (methods report, they do not warn).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral
from types import MappingProxyType

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from .base import Interval, MEDSolution, Method, Option, check_cvxpy_solver
from .bound import BoundMethod
from .coordinate import CoordinateMethod
from .direct import DirectMethod
from .kkt import CERTIFIED_RTOL, duality_gap
from .newton import NewtonMethod
from .ssnal import SSNALMethod

__all__ = ["solve", "plan", "Plan", "get_method", "register_method", "unregister_method",
           "choose_method", "AutoMethod", "METHODS"]

_REGISTRY = {}
METHODS = MappingProxyType(_REGISTRY)
"""The registered methods by name (read-only: use :func:`register_method`)."""

# Statuses of a method that met its stopping rule (CVXPY's "optimal" for the direct solve;
# "rounding": the KKT gap is at the rounding floor of the gradient, as exact as the arithmetic
# allows).
_FINISHED = ("converged", "optimal", "rounding")
# Feasibility a returned answer must have: each group's equality to this fraction of the
# group's total |a_i lam_i| (the box is checked exactly).
_EQUALITY_RTOL = 1e-8


def get_method(name):
    """The registered method called ``name``.

    Parameters
    ----------
    name : str
        The name the method was registered under (``"auto"``, ``"newton"``, ``"cd"``,
        ``"bound"``, ``"direct"`` or one added with :func:`register_method`).

    Returns
    -------
    Method

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        For a name that no method is registered under.

    Examples
    --------
    >>> get_method("bound").default_solver
    'OSQP'
    >>> get_method("magic")
    Traceback (most recent call last):
    ...
    ValueError: unknown method 'magic'; available: ['auto', 'bound', 'cd', 'direct', 'newton', 'ssnal']
    """
    if not isinstance(name, str):
        raise TypeError(f"method must be a method name (str); got {type(name).__name__}")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; available: {sorted(_REGISTRY)}") from None


def register_method(method, *, replace=False):
    """Add a solution method, which :func:`solve` and every estimator can then run by name.

    The method is checked before it is added: a :class:`~medmtl.med.solvers.Method`
    instance with a name, options that include ``max_iter`` and ``tol`` and whose defaults
    pass their own checks, and an inner-solver check that accepts ``None``.

    Parameters
    ----------
    method : Method
        An instance of a subclass of :class:`~medmtl.med.solvers.Method`.
    replace : bool, default=False
        Allow replacing a method registered under the same name.

    Returns
    -------
    Method
        ``method``, so that ``register_method(MyMethod())`` can be kept.

    Examples
    --------
    See ``docs/extending/add_a_solver.md`` for a complete method.

    >>> register_method(get_method("newton"))
    Traceback (most recent call last):
    ...
    ValueError: a method named 'newton' is registered already; pass replace=True to replace it
    """
    if not isinstance(method, Method):
        raise TypeError(f"register_method takes an instance of a medmtl.med.solvers.Method "
                        f"subclass; got {type(method).__name__}")
    name = method.name
    if not isinstance(name, str) or not name:
        raise ValueError(f"{type(method).__name__}.name must be a non-empty string; got {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"a method named {name!r} is registered already; pass replace=True to replace it")
    if not all(isinstance(opt, Option) for opt in method.options):
        raise TypeError(f"{type(method).__name__}.options must be a tuple of Option")
    names = [opt.name for opt in method.options]
    if len(set(names)) != len(names):
        raise ValueError(f"{type(method).__name__}.options declares an option twice: {names}")
    missing = {"max_iter", "tol"} - set(names)
    if missing:
        raise ValueError(f"{type(method).__name__}.options lacks {sorted(missing)}: every method "
                         f"takes max_iter and tol (the estimators pass both)")
    method.check_options({})  # the defaults must pass their own checks
    method.check_solver(None)
    _REGISTRY[name] = method
    return method


def unregister_method(name):
    """Remove the registered method ``name`` (a built-in one stays).

    Returns
    -------
    Method
        The method removed.
    """
    get_method(name)
    if name in _BUILT_IN:
        raise ValueError(f"{name!r} is a built-in method and cannot be removed")
    return _REGISTRY.pop(name)


# ---------------------------------------------------------------------------------------
# The "auto" policy
# ---------------------------------------------------------------------------------------
# Where coordinate steps in feature space beat Newton's SMO on Gram columns (and the direct
# QP), measured on linear SVMs and feature selection: dense factors from n = 2,000 examples
# (n = 5,000, D = 1,000: 4x faster; at n = 1,000 Newton is 1.2-2x faster), sparse text from
# n = 300 (20 Newsgroups tf-idf, 1,796 posts: 5x faster; at n = 100 Newton is 2x faster).
# Sparse feature selection (switched terms) from n = 50: its face steps follow the projected
# path (issue 30), and on 20 Newsgroups pairs of 40 to 150 posts and random text-like rows
# (n = 100 and 200, D = 2,000 and 20,000) "cd" took 0.4-0.7x Newton's time.
# Below 2,000 multipliers, dense factors go to "cd" from n = 1,000 when they have at most
# n / 2 columns: random dense data at n = 1,000 and 1,797 with 10 to 300 columns, "cd" took
# 0.1-1.2x Newton's time (at 64 to 200 columns 0.1-0.7x), with 500 to 1,000 columns 0.9-4.8x;
# on scikit-learn's digits (1,797 x 64, raw or rescaled) Newton took 1.8-8 s, "cd" 0.06-0.3 s.
_AUTO_CD_MIN_N = 2000
_AUTO_CD_MIN_N_NARROW = 1000
_AUTO_CD_MAX_WIDTH = 0.5
_AUTO_CD_MIN_N_SPARSE = 300
_AUTO_CD_MIN_N_SWITCHED = 50
_AUTO_CD_MAX_DENSITY = 0.3


def _factor_columns(dual):
    """The number of columns of the dual's factors."""
    return sum(M.shape[1] for M in (dual.Phi0, dual.Phi) if M is not None)


def _sparse_factors(dual):
    """Whether the dual's factors are stored sparse and have few nonzeros."""
    parts = [M for M in (dual.Phi0, dual.Phi) if M is not None and M.shape[1]]
    if not parts or not all(sp.issparse(M) for M in parts):
        return False
    cells = sum(M.shape[0] * M.shape[1] for M in parts)
    return sum(M.nnz for M in parts) <= _AUTO_CD_MAX_DENSITY * cells


def choose_method(dual, options=None):
    """The method ``"auto"`` runs on ``dual``: ``"cd"`` or ``"newton"``.

    A dual of explicit factors (linear and feature models, per-feature kernels, adaptive
    pooling with a linear kernel) goes to the coordinate method ``"cd"`` when it has at
    least 2,000 multipliers, or at least 1,000 and at most half as many factor columns, or
    sparse factors (at most 30 % nonzeros) and at least 300 multipliers (50 for feature
    selection, whose ``J`` has switched terms);
    everything else, kernel duals included, goes to ``"newton"``, as does a dual for which an
    option only Newton has (``cache_size``, ``max_steps``, ``group_grams``) is set away
    from its default. The thresholds are where ``benchmarks/bench_med.py`` measured the
    coordinate method faster.

    Examples
    --------
    >>> from medmtl.med.builders import svm_dual
    >>> X, y = np.tile([[1.0], [-1.0]], (1500, 1)), np.tile([1, -1], 1500)
    >>> choose_method(svm_dual([X], [y])), choose_method(svm_dual([X[:20]], [y[:20]]))
    ('cd', 'newton')
    """
    newton, cd = _REGISTRY["newton"], _REGISTRY["cd"]
    own = {opt.name for opt in cd.options}
    given = dict(options or {})
    tuned = any(given.get(opt.name, opt.default) != opt.default for opt in newton.options
                if opt.name not in own)
    if tuned or not cd.accepts(dual):
        return "newton"
    if dual.n >= _AUTO_CD_MIN_N:
        return "cd"
    if dual.n >= _AUTO_CD_MIN_N_NARROW and _factor_columns(dual) <= _AUTO_CD_MAX_WIDTH * dual.n:
        return "cd"
    switched = dual.n_terms > 0 and dual.alpha > 0
    least = _AUTO_CD_MIN_N_SWITCHED if switched else _AUTO_CD_MIN_N_SPARSE
    return "cd" if dual.n >= least and _sparse_factors(dual) else "newton"


class AutoMethod(Method):
    """``method="auto"`` (the default): the fastest correct method for the dual,
    ``"cd"`` or ``"newton"`` (:func:`choose_method`).

    Its options are those of both methods; each gets the ones it declares. ``max_iter``
    None (the default) leaves the chosen method's own (Newton iterations or passes of the
    coordinate method). A named inner solver is checked but not used: it names another
    method's (an estimator's ``solver=`` for ``"bound"``), so that it does not break
    ``"auto"``. The solution's ``method`` says which method ran.

    Examples
    --------
    >>> from medmtl.med.builders import svm_dual
    >>> X, y = np.array([[1.0], [2.0], [-1.0], [-2.0]]), np.array([1, 1, -1, -1])
    >>> solve(svm_dual([X], [y]), "auto").method
    'newton'
    """

    name = "auto"

    @property
    def options(self):
        newton, cd = _REGISTRY["newton"], _REGISTRY["cd"]
        names = {opt.name for opt in newton.options}
        merged = [opt for opt in newton.options if opt.name != "max_iter"]
        merged += [opt for opt in cd.options if opt.name not in names]
        cap = Option("max_iter", None, [None, Interval(Integral, 1, None, closed="left")],
                     "Iterations of the chosen method; None keeps its own default.")
        return (cap, *merged)

    def check_solver(self, solver):
        if solver is None or (isinstance(solver, str) and solver.upper() == "SMO"):
            return None
        check_cvxpy_solver(solver)
        return None

    def solve(self, dual, solver, options, init):
        chosen = _REGISTRY[choose_method(dual, options)]
        # ``options`` were checked against the merged declarations (plan() did it), which
        # hold every option of both methods with the same constraints: pass them on as they
        # are, each method taking the ones it declares
        values = {opt.name: options.get(opt.name, opt.default) for opt in chosen.options}
        if values.get("max_iter", 0) is None:
            values["max_iter"] = next(opt.default for opt in chosen.options if opt.name == "max_iter")
        return chosen.solve(dual, chosen.check_solver(None), values, init)


# ---------------------------------------------------------------------------------------
# Running a method
# ---------------------------------------------------------------------------------------
def solve(dual, method="auto", *, solver=None, options=None, init=None):
    """Solve a :class:`~medmtl.med.dual.MEDDual` with the named method.

    Parameters
    ----------
    dual : MEDDual
    method : str, default="auto"
        A registered method (:data:`METHODS`): ``"auto"`` (``"cd"`` or ``"newton"``,
        whichever is faster for the dual: :func:`choose_method`), ``"newton"`` (projected
        Newton with SMO subproblems), ``"cd"`` (coordinate steps in feature space, for
        factor models), ``"bound"`` (Algorithm 1) or ``"direct"`` (CVXPY, exponential cone),
        or one added by :func:`register_method`.
    solver : str, optional
        The method's inner solver: ``"SMO"`` for ``"newton"``, ``"OSQP"`` or a CVXPY QP
        solver for ``"bound"``'s QP steps, a CVXPY solver for ``"direct"``. None takes the
        method's default.
    options : dict, optional
        The method's options (``get_method(method).describe_options()`` lists them);
        ``max_iter`` and ``tol`` are options of every method, and what they mean is the
        method's: Newton and Algorithm 1 stop when an iteration raises ``J`` by less than
        ``tol * |J|`` (Newton and ``"cd"`` also on their KKT test, ``kkt_tol``); the direct
        solve stops at its solver's own tolerances. An unknown option is an error naming the valid ones.
    init : array-like of shape (n,), optional
        Starting multipliers (a warm start), projected onto the feasible set first.

    Returns
    -------
    MEDSolution

    Raises
    ------
    ValueError
        For an unknown method or option, a bad value, an inner solver the method cannot
        use, or a starting point of the wrong shape or with NaN or infinite values.
    RuntimeError
        When the inner solver fails, or the method returns multipliers that are not
        finite or not feasible, or a non-finite objective.

    Warns
    -----
    ConvergenceWarning
        Once, when the method stopped before its stopping rule held (status
        ``"max_iter"``, ``"max_steps"``, ``"stalled"``, ``"fallback"``) and the duality gap
        of its answer is above ``1e-6 |J|``: the message says how far the answer may be
        from the optimum and what helps. The gap, a certified bound on ``J* - J``, is in
        ``info["duality_gap"]`` of every solution.

    Examples
    --------
    >>> from medmtl.med.builders import feature_selection_dual
    >>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
    >>> dual = feature_selection_dual([X], [np.array([1, 1, -1, -1])], C=1.0, alpha=1.0)
    >>> a = solve(dual, "bound", options={"inexact": False})
    >>> b = solve(dual, "newton", solver="SMO", init=a.lam)
    >>> c = solve(dual, "direct")
    >>> bool(abs(a.objective - c.objective) <= 1e-6 * c.objective), b.n_iter <= 1
    (True, True)
    """
    return plan(method, solver=solver, options=options).solve(dual, init)


@dataclass(frozen=True)
class Plan:
    """A method with its inner solver and options, looked up and checked once.

    :func:`plan` makes it; :meth:`solve` runs it on any number of duals (an estimator makes
    one per fit and solves a whole path of ``C`` and ``alpha`` with it). :func:`solve` is
    ``plan(...).solve(dual, init)``.

    Parameters
    ----------
    method : Method
        The registered method.
    solver : str or None
        Its inner solver, as :meth:`Method.check_solver` returned it.
    options : mapping
        Every option the method declares, checked (:meth:`Method.check_options`).

    Examples
    --------
    >>> from medmtl.med.builders import feature_selection_dual
    >>> X = np.array([[1.0, 0.2], [0.9, -0.1], [-1.0, 0.1], [-1.1, 0.0]])
    >>> dual = feature_selection_dual([X], [np.array([1, 1, -1, -1])], C=1.0, alpha=1.0)
    >>> newton = plan("newton", options={"kkt_tol": 1e-9})
    >>> newton.method.name, newton.solver, newton.options["kkt_tol"]
    ('newton', 'SMO', 1e-09)
    >>> [newton.solve(dual.replace(C=C)).status for C in (0.1, 1.0)]
    ['converged', 'converged']
    """

    method: Method
    solver: object
    options: MappingProxyType

    def solve(self, dual, init=None):
        """Run the method on ``dual`` from ``init`` (projected onto the feasible set), then
        check its answer, certify it and turn its status into at most one warning (see
        :func:`solve`).

        Parameters
        ----------
        dual : MEDDual
        init : array-like of shape (n,), optional

        Returns
        -------
        MEDSolution
        """
        m = self.method
        if not m.accepts(dual):
            raise ValueError(m.refusal(dual))
        start = _check_init(dual, init)
        sol = m.solve(dual, self.solver, dict(self.options), start)
        _check_solution(dual, sol, m.name)
        _no_worse_than_the_start(dual, sol, start)
        _certify(dual, sol)
        _warn_from_status(dual, sol, self.options)
        return sol


def plan(method="auto", *, solver=None, options=None):
    """The :class:`Plan` of a method: the method looked up by name, its inner solver and its
    options checked, once.

    Parameters
    ----------
    method : str, default="auto"
    solver : str, optional
    options : dict, optional
        As :func:`solve` takes them.

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        For an unknown method or option, a bad value, or an inner solver the method cannot
        use.
    """
    m = get_method(method)
    return Plan(m, m.check_solver(solver), MappingProxyType(m.check_options(options)))


def _check_init(dual, init):
    """A feasible copy of the starting point, or None."""
    if init is None:
        return None
    lam = np.asarray(init, dtype=float)
    if lam.shape != (dual.n,):
        raise ValueError(f"init must have shape ({dual.n},), one entry per multiplier; got shape {lam.shape}")
    if not np.all(np.isfinite(lam)):
        raise ValueError("init has NaN or infinite values")
    return dual.project(lam)


def _check_solution(dual, sol, name):
    """Raise unless ``sol`` holds finite, feasible multipliers and a finite objective."""
    if not isinstance(sol, MEDSolution):
        raise TypeError(f"method {name!r} returned {type(sol).__name__}, not a MEDSolution")
    lam = np.asarray(sol.lam, dtype=float)
    if lam.shape != (dual.n,) or not np.all(np.isfinite(lam)):
        raise RuntimeError(f"method {name!r} returned multipliers of shape {lam.shape} with "
                           f"{np.size(lam) - np.count_nonzero(np.isfinite(lam))} NaN or infinite "
                           f"values; expected ({dual.n},) finite values")
    if not np.isfinite(sol.objective) or not np.all(np.isfinite(sol.objective_path)):
        scale = float(np.max(np.abs(dual.hi))) if dual.n else 0.0
        if scale > 1e100:
            # squares of such bounds leave double precision: the problem, not the method
            raise ValueError(f"method {name!r}: J overflowed in double precision (objective "
                             f"{sol.objective!r}); the problem's scale is beyond it (largest "
                             f"bound C = {scale:.3g}): use a smaller C or rescale the inputs")
        raise RuntimeError(f"method {name!r} returned the objective {sol.objective!r}")
    if np.any(lam < dual.lo) or np.any(lam > dual.hi):
        raise RuntimeError(f"method {name!r} returned multipliers outside the box [lo, hi]; "
                           f"clip them or use dual.project")
    ag = dual.a * lam
    sums = np.bincount(dual.group_of, ag, minlength=len(dual.groups))
    mass = np.bincount(dual.group_of, np.abs(ag), minlength=len(dual.groups))
    # relative to the group's mass, with a floor of rounding at the box's scale (a group whose
    # only nonzero multipliers are rounding residues of size eps * C)
    box = np.abs(np.concatenate([dual.lo, dual.hi]))
    floor = 64 * np.finfo(float).eps * float(np.max(box[np.isfinite(box)], initial=1.0))
    if np.any(np.abs(sums) > _EQUALITY_RTOL * mass + floor):
        raise RuntimeError(f"method {name!r} returned multipliers that break the group equalities "
                           f"(largest |a_g^T lam_g| = {np.max(np.abs(sums)):.3g}); use dual.project")
    if not sol.method:
        sol.method = name


def _no_worse_than_the_start(dual, sol, start):
    """An answer below the start's ``J`` (by more than rounding) is replaced by the start,
    with status ``"stalled"``: every method is an ascent method, and the start (``lam = 0``,
    ``J = 0``, when none is given) is always feasible."""
    lam0 = np.zeros(dual.n) if start is None else start
    # every method's path starts at J of its start (0 at lam = 0)
    J0 = 0.0 if start is None else (float(sol.objective_path[0]) if len(sol.objective_path)
                                     else dual.objective(lam0))
    if sol.objective >= J0 - 1e-12 * max(abs(J0), abs(sol.objective), 1.0):
        return
    sol.info["below_start"] = sol.objective
    sol.lam, sol.objective, sol.status = lam0.copy(), J0, "stalled"
    sol.intercepts = dual.intercepts(sol.lam)
    sol.switch_posterior = dual.switch_posterior(sol.lam)


def _certify(dual, sol):
    """Record the duality gap of the answer (:func:`~medmtl.med.solvers.kkt.duality_gap`), a
    bound on how far its ``J`` is below the optimum, in ``sol.info["duality_gap"]``."""
    if "duality_gap" not in sol.info:
        sol.info["duality_gap"] = duality_gap(dual, np.asarray(sol.lam, dtype=float))


def _warn_from_status(dual, sol, options):
    """At most one ConvergenceWarning, for a method that stopped before its stopping rule
    held with an answer the duality gap does not certify: it says how far the answer may be
    from the optimum and what helps."""
    if sol.status in _FINISHED:
        return
    gap = sol.info["duality_gap"]
    J = abs(sol.objective)
    if gap <= CERTIFIED_RTOL * J:
        return  # stopped early, but certified within the tolerance: the answer is right
    if sol.status == "max_iter":
        limit = options.get("max_iter")
        if limit is None:  # "auto" left the chosen method's own limit
            limit = next((opt.default for opt in getattr(_REGISTRY.get(sol.method), "options", ())
                          if opt.name == "max_iter"), sol.n_iter)
        what = f"stopped at max_iter={limit} before converging"
    elif sol.status == "stalled":
        what = f"stalled after {sol.n_iter} iterations: its step made no progress"
    elif sol.status == "fallback":
        what = sol.info.get("fallback", "fell back to another solver")
    elif sol.status == "max_steps":
        what = "stopped when one subproblem used all its pair steps (max_steps)"
    else:
        what = f"stopped with status {sol.status!r}"
    bound = f"{gap / J:.2g} of |J|" if J > 0 else f"{gap:.3g}"
    message = (f"MED method {sol.method!r} {what}; its J may be up to {bound} below the "
               f"optimum (duality gap {gap:.3g}). {_advice(dual, sol.method)}")
    warnings.warn(message, ConvergenceWarning, stacklevel=3)


def _advice(dual, method):
    """What helps a method that stopped short on ``dual``: ``"ssnal"`` for a dual of explicit
    factors (whether its layouts fit a kernel dual is known only once the kernels are
    factorised, and on the digits kernels of the own-data matrix they do not), else
    ``"bound"``, which takes every dual."""
    scaling = ("standardising the features (sklearn.preprocessing.StandardScaler) also helps "
               "every method, but changes the model.")
    if (method != "ssnal" and "ssnal" in _REGISTRY and not dual.has_kernels
            and _REGISTRY["ssnal"].accepts(dual)):
        return ("method='ssnal' (Newton steps in the weights) is the method least slowed "
                "down by features of very different scales (it takes up to 2,500 weights, or "
                f"512 per task; method='bound' takes any dual); {scaling}")
    if method != "bound" and "bound" in _REGISTRY:
        return (f"method='bound' (Algorithm 1, each step a QP) takes every dual and reaches "
                f"the optimum where the pair steps stall; {scaling}")
    return f"Raise max_iter; {scaling}"


_BUILT_IN = ("newton", "cd", "ssnal", "bound", "direct", "auto")
for _method in (NewtonMethod(), CoordinateMethod(), SSNALMethod(), BoundMethod(), DirectMethod(),
                AutoMethod()):
    register_method(_method)
