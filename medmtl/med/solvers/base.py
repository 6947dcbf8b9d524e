"""The contract every MED solution method follows: its options, its inner solver, its answer.

A solution method is a :class:`Method`: a name, the inner solver it uses by default, the
options it takes (each an :class:`Option`: name, default, allowed values) and
``solve(dual, solver, options, init) -> MEDSolution``, in the manner of cvxpy's ``Solver``
and skglm's ``BaseSolver``. :func:`medmtl.med.solvers.solve` checks the inner solver's name,
the options and the starting point before a method runs, and the answer after it, so a
method's ``solve`` receives checked arguments and only maximises.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from ..._validation import Checked, Interval, Options, validate_params

__all__ = ["MEDSolution", "Method", "Option", "Interval", "Options", "Checked",
           "max_iter_option", "tol_option", "check_cvxpy_solver", "installed_solvers"]


@dataclass
class MEDSolution:
    """The result of solving a :class:`~medmtl.med.dual.MEDDual`.

    The solution methods build it; its fields are read as attributes of the same names.

    Parameters
    ----------
    lam : ndarray of shape (n,)
        The multipliers (feasible: inside the box, group equalities met).
    intercepts : ndarray of shape (n_groups,)
        Per-task biases from the KKT conditions.
    objective : float
        ``J(lam)``, normalised so that ``J(0) = 0``.
    objective_path : ndarray of shape (n_iter + 1,)
        ``J`` at the start and after each iteration (non-decreasing for the built-in
        iterative methods).
    n_iter : int
        Number of iterations the method ran.
    status : str
        ``"converged"`` (or CVXPY's ``"optimal"``) when the method met its stopping rule;
        otherwise what stopped it, e.g. ``"max_iter"`` or ``"stalled"``.
        :func:`~medmtl.med.solvers.solve` turns any other status into one
        ``ConvergenceWarning``.
    switch_posterior : ndarray of shape (D,)
        Posterior mean of each switch at ``lam``.
    method, solver : str, default=""
        The method that ran and its inner solver.
    info : dict, optional
        Method-specific extras (e.g. inner QP iterations); empty by default.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.med import feature_selection_dual, solve
    >>> X, y = np.array([[1.0, 0.0], [-1.0, 0.5]]), np.array([1, -1])
    >>> sol = solve(feature_selection_dual([X], [y], C=1.0, alpha=1.0))
    >>> sol.status, float(sol.objective_path[0]), sol.lam.shape
    ('converged', 0.0, (2,))
    >>> sol  # doctest: +ELLIPSIS
    MEDSolution(method='newton', status='converged', objective=..., n=2, n_switches=2, ...)
    """

    lam: np.ndarray
    intercepts: np.ndarray
    objective: float
    objective_path: np.ndarray
    n_iter: int
    status: str
    switch_posterior: np.ndarray
    method: str = ""
    solver: str = ""
    info: dict = field(default_factory=dict)

    def __repr__(self):
        # the multipliers can number millions: show what a solve is judged by
        gap = self.info.get("duality_gap")
        return (f"MEDSolution(method={self.method!r}, status={self.status!r}, "
                f"objective={self.objective:.10g}, n_iter={self.n_iter}, n={np.size(self.lam)}, "
                f"n_switches={np.size(self.switch_posterior)}"
                + ("" if gap is None else f", duality_gap={gap:.3g}") + ")")


@dataclass(frozen=True)
class Option:
    """One option of a solution method.

    Parameters
    ----------
    name : str
    default : object
        The value when the caller gives none; it must itself be allowed.
    allowed : list
        The allowed forms, any of which the value may fit: :class:`Interval` (finite
        numbers in a range), :class:`Options` (a few given values), :class:`Checked` (a
        function that returns the parsed value or raises), a type (``bool``, ``dict``, ...)
        or ``None``.
    doc : str
        One line on what the option does (shown by :meth:`Method.describe_options`).

    Examples
    --------
    >>> step = Option("step", 0.1, [Interval(Real, 0, None, closed="neither")], "step size")
    >>> step.name, step.default
    ('step', 0.1)
    """

    name: str
    default: object
    allowed: list
    doc: str = ""


def max_iter_option(default, doc="Maximum number of iterations."):
    """The ``max_iter`` option (a positive integer) every method declares.

    >>> max_iter_option(50).default
    50
    """
    return Option("max_iter", default, [Interval(Integral, 1, None, closed="left")], doc)


def tol_option(default, doc):
    """The ``tol`` option (a number >= 0) every method declares, with what it means there.

    >>> tol_option(1e-12, "stop when J gains less than tol * |J|").allowed[0].left
    0
    """
    return Option("tol", default, [Interval(Real, 0, None, closed="left")], doc)


class Method(ABC):
    """A solution method for the MED dual, registered by name.

    A subclass sets the class attributes below and implements :meth:`solve`; one instance
    is registered (:func:`~medmtl.med.solvers.register_method`), after which
    ``solve(dual, name, ...)`` and every estimator's ``method=name`` run it.

    Attributes
    ----------
    name : str
        The method's name in the registry.
    default_solver : str or None
        The inner solver used when the caller names none; ``None`` for a method without a
        choice of inner solver.
    options : tuple of Option
        Every option the method takes, ``max_iter`` and ``tol`` among them (the estimators
        always pass both).

    Examples
    --------
    >>> from medmtl.med.solvers import get_method
    >>> newton = get_method("newton")
    >>> newton.check_options({"max_iter": 5})["max_iter"], newton.check_solver(None)
    (5, 'SMO')
    >>> newton.check_options({"cache": 1})
    Traceback (most recent call last):
    ...
    ValueError: unknown options ['cache'] for method 'newton'; valid options: cache_size, group_grams, handover, kkt_tol, max_iter, max_steps, shrinking, tol
    """

    name = ""
    default_solver = None
    options = ()

    def check_solver(self, solver):
        """The inner solver's name as :meth:`solve` receives it.

        ``None`` gives :attr:`default_solver`. A name must be an installed CVXPY solver (upper
        case is returned), unless the method has no inner solver (``default_solver`` None),
        which takes no name at all. Override for other inner solvers.

        Parameters
        ----------
        solver : str or None
            The inner solver the caller asked for (any case), or None for the default.

        Returns
        -------
        str or None

        Raises
        ------
        ValueError
            For a name the method cannot use, listing what it can.
        """
        if solver is None:
            return self.default_solver
        if self.default_solver is None:
            raise ValueError(f"method {self.name!r} has no inner solver to choose; got solver={solver!r}")
        return check_cvxpy_solver(solver)

    def check_options(self, options):
        """Every declared option, the caller's value or the default, each checked.

        Parameters
        ----------
        options : dict or None

        Returns
        -------
        dict
            One entry per declared option.

        Raises
        ------
        ValueError
            For an unknown option (naming the valid ones) or a value outside what the
            option allows (naming the option).
        """
        spec = {opt.name: opt for opt in self.options}
        given = dict(options or {})
        unknown = set(given) - set(spec)
        if unknown:
            raise ValueError(f"unknown options {sorted(unknown)} for method {self.name!r}; "
                             f"valid options: {', '.join(sorted(spec))}")
        values = {name: given.get(name, opt.default) for name, opt in spec.items()}
        return validate_params(values, {name: opt.allowed for name, opt in spec.items()},
                               f"method {self.name!r}")

    def accepts(self, dual):
        """Whether the method can solve ``dual`` at all (its capability, read by ``"auto"`` and
        checked before the method runs, in the manner of cvxpy's ``accepts``). Every dual by
        default; a method that takes only some overrides it and :meth:`refusal`.

        Parameters
        ----------
        dual : MEDDual

        Returns
        -------
        bool
        """
        return True

    def refusal(self, dual):
        """The message of the ValueError raised when :meth:`accepts` is False: what the
        method cannot take and which method can.

        Parameters
        ----------
        dual : MEDDual

        Returns
        -------
        str
        """
        return f"method {self.name!r} cannot solve this dual"

    def describe_options(self):
        """One line per option: its name, default and what it does.

        >>> from medmtl.med.solvers import get_method
        >>> print(get_method("direct").describe_options().splitlines()[0])
        max_iter (default None): The conic solver's iteration cap; None keeps its own.
        """
        return "\n".join(f"{opt.name} (default {opt.default!r}): {opt.doc}" for opt in self.options)

    @abstractmethod
    def solve(self, dual, solver, options, init):
        """Maximise ``J`` over the feasible set of ``dual``.

        Parameters
        ----------
        dual : MEDDual
        solver : str or None
            The inner solver, as :meth:`check_solver` returned it.
        options : dict
            Every declared option, checked (:meth:`check_options`).
        init : ndarray of shape (n,) or None
            A feasible starting point (already projected onto the feasible set), or None
            to start from ``lam = 0``.

        Returns
        -------
        MEDSolution
            Feasible multipliers and a finite objective; what stopped the method is its
            ``status``. A method does not warn: ``solve`` warns once from the status.
        """

    def __repr__(self):
        return f"<{type(self).__name__} method {self.name!r}>"


def installed_solvers():
    """Names of the CVXPY solvers installed here."""
    import cvxpy as cp

    return list(cp.installed_solvers())


def check_cvxpy_solver(name, what="solver"):
    """Return the upper-cased CVXPY solver name, or raise a ValueError listing installed ones.

    >>> check_cvxpy_solver("clarabel")
    'CLARABEL'
    """
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a solver name (str); got {type(name).__name__}")
    upper = name.upper()
    installed = installed_solvers()
    if upper not in installed:
        raise ValueError(
            f"{what} {name!r} is unknown or not installed; installed CVXPY solvers: {', '.join(installed)}"
        )
    return upper
