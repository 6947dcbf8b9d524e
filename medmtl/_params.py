"""Hyper-parameters checked declaratively, in the manner of scikit-learn's ``_parameter_constraints``.

An estimator declares, once, a list of allowed forms per parameter (:class:`Interval`,
:class:`Options`, :class:`Checked`, a type, ``None``) and calls :func:`validate_params` at
the start of ``fit``. scikit-learn's own machinery is private API; this small checker is
ours, rejects infinite numbers, and lets a constraint delegate to the function that owns a
name (a kernel, a solver method) for its message. :mod:`medmtl._validation` re-exports every
name here.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["InvalidParameterError", "Interval", "Options", "Checked", "validate_params"]


class InvalidParameterError(ValueError, TypeError):
    """A hyper-parameter outside its declared constraints.

    Both a ``ValueError`` and a ``TypeError``, as scikit-learn's is: a wrong type and a
    wrong value are the same mistake from the caller's side.
    """


class _Unsatisfied(Exception):
    """Raised inside a constraint's ``parse`` when the value does not fit it (the argument,
    if any, says why when the constraint's description alone would not)."""


# Integer parameters reach numpy (and compiled loops) as 64-bit integers.
_INT64_MAX = np.iinfo(np.int64).max


class Interval:
    """Finite real (or integer) numbers between ``left`` and ``right``.

    Parameters
    ----------
    kind : {numbers.Real, numbers.Integral}
        Integers are accepted as reals; booleans as neither.
    left, right : float or None
        Bounds; ``None`` leaves that side open (but the number must still be finite).
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.

    Examples
    --------
    >>> from numbers import Real
    >>> str(Interval(Real, 0, None, closed="neither")), str(Interval(Real, 0, 1, closed="right"))
    ('> 0 (a finite real number)', 'in (0, 1] (a real number)')
    >>> Interval(Real, 0, None, closed="neither").parse(3)
    3.0
    """

    def __init__(self, kind, left=None, right=None, closed="both"):
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither'; got {closed!r}")
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def parse(self, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.kind):
            raise _Unsatisfied
        if self.kind is numbers.Integral:
            value = int(value)
            if abs(value) > _INT64_MAX:
                raise _Unsatisfied("too large for a 64-bit integer: at most 2**63 - 1 in size")
        else:
            try:
                number = float(value)
            except OverflowError:
                raise _Unsatisfied("too large for a float") from None
            if not np.isfinite(number):
                raise _Unsatisfied
        low_ok = self.left is None or (value >= self.left if self.closed in ("left", "both") else value > self.left)
        high_ok = self.right is None or (value <= self.right if self.closed in ("right", "both")
                                         else value < self.right)
        if not (low_ok and high_ok):
            raise _Unsatisfied
        return int(value) if self.kind is numbers.Integral else float(value)

    def __str__(self):
        integer = self.kind is numbers.Integral
        left_in, right_in = self.closed in ("left", "both"), self.closed in ("right", "both")
        if self.left is not None and self.right is not None:
            return (f"in {'[' if left_in else '('}{self.left}, {self.right}{']' if right_in else ')'} "
                    f"({'an integer' if integer else 'a real number'})")
        kind = "a finite integer" if integer else "a finite real number"
        if self.left is not None:
            return f"{'>=' if left_in else '>'} {self.left} ({kind})"
        if self.right is not None:
            return f"{'<=' if right_in else '<'} {self.right} ({kind})"
        return kind


class Options:
    """One of a few given values (strings, or ``None``).

    Examples
    --------
    >>> str(Options(None, "features", "kernels"))
    "one of None, 'features', 'kernels'"
    """

    def __init__(self, *values):
        self.values = values

    def parse(self, value):
        if not any(value is v or (isinstance(value, str) and value == v) for v in self.values):
            raise _Unsatisfied
        return value

    def __str__(self):
        return "one of " + ", ".join(repr(v) for v in self.values)


class Checked:
    """Whatever ``check(value)`` accepts; it returns the parsed value or raises its own error.

    For names a registry owns (kernels, solver methods): the registry's message lists what
    is available, so the constraint does not repeat the list.

    Examples
    --------
    >>> Checked(float.fromhex).parse("0x1p-1")
    0.5
    """

    def __init__(self, check):
        self.check = check

    def parse(self, value):
        return self.check(value)


class _IsInstance:
    def __init__(self, kind):
        self.name = kind.__name__
        self.kind = (bool, np.bool_) if kind is bool else kind

    def parse(self, value):
        if not isinstance(value, self.kind):
            raise _Unsatisfied
        return value

    def __str__(self):
        return f"a {self.name}"


class _IsNone:
    def parse(self, value):
        if value is not None:
            raise _Unsatisfied
        return None

    def __str__(self):
        return "None"


def _as_constraint(c):
    if c is None:
        return _IsNone()
    if isinstance(c, type):
        return _IsInstance(c)
    return c


def validate_params(params, constraints, owner):
    """Check every parameter against its declared constraints; return the parsed values.

    Parameters
    ----------
    params : dict
        Parameter values by name (``estimator.get_params(deep=False)``).
    constraints : dict
        For each name in ``params``, a list of allowed forms: :class:`Interval`,
        :class:`Options`, :class:`Checked`, a type (``bool`` also admits ``numpy.bool_``)
        or ``None``. A value must fit one of them; a :class:`Checked` form is tried last,
        and its check's own message explains a value that nothing accepts.
    owner : str
        Named in the messages (the estimator's class).

    Returns
    -------
    dict
        Each value as its constraint parses it: numbers of an :class:`Interval` as
        ``float`` (or ``int``), a :class:`Checked` value as its check returns it.

    Raises
    ------
    InvalidParameterError
        Naming the parameter, what it must be, and what it got.

    Examples
    --------
    >>> from numbers import Real
    >>> rules = {"C": [Interval(Real, 0, None, closed="neither")], "alpha": [None, Interval(Real, 0, None)]}
    >>> validate_params({"C": 2, "alpha": None}, rules, "Model")
    {'C': 2.0, 'alpha': None}
    >>> validate_params({"C": 0, "alpha": None}, rules, "Model")
    Traceback (most recent call last):
    ...
    medmtl._params.InvalidParameterError: Model: C must be > 0 (a finite real number); got 0
    """
    missing = set(params) - set(constraints)
    if missing:
        raise RuntimeError(f"{owner} declares no constraint for {sorted(missing)}")
    return {name: _parse(value, [_as_constraint(c) for c in constraints[name]], name, owner)
            for name, value in params.items()}


def _parse(value, forms, name, owner):
    reasons = []
    for form in forms:
        if not isinstance(form, Checked):
            try:
                return form.parse(value)
            except _Unsatisfied as why:
                reasons.extend(why.args)
    for form in forms:
        if isinstance(form, Checked):
            try:
                return form.parse(value)
            except (ValueError, TypeError) as err:
                raise InvalidParameterError(f"{owner}: {name}: {err}") from err
    allowed = " or ".join(str(form) for form in forms)
    shown = repr(value) if len(repr(value)) <= 60 else f"{repr(value)[:40]}..."
    because = f" ({'; '.join(reasons)})" if reasons else ""
    raise InvalidParameterError(f"{owner}: {name} must be {allowed}; got {shown}{because}")
