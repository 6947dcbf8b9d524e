"""How the experiments solve their MED problems: the solution method and its stopping rule.

Every MED experiment fits with :data:`METHOD`; a fold function's ``method`` parameter runs
another (``method="bound"``: Algorithm 1). Results record the method and tolerance in their
settings (:func:`method_settings`).
"""

from __future__ import annotations

__all__ = ["METHOD", "TOL", "fit_options", "method_settings"]

# The projected Newton method maximises the same concave dual J as Algorithm 1, faster
# (docs/design_notes.md, "Experiments").
METHOD = "newton"

# Algorithm 1 stops when an iteration raises J by less than TOL * |J|.
TOL = 1e-6


def fit_options(method):
    """Estimator keyword arguments for ``method``.

    Algorithm 1 (``"bound"``) stops at :data:`TOL`; the other methods keep their own
    default tolerance.

    Parameters
    ----------
    method : str
        A registered MED solution method.

    Returns
    -------
    dict
        ``method`` and ``tol``.

    Examples
    --------
    >>> fit_options("bound")
    {'method': 'bound', 'tol': 1e-06}
    """
    return {"method": method, "tol": TOL if method == "bound" else None}


def method_settings(method):
    """:func:`fit_options` of ``method`` as an experiment's settings record them.

    Parameters
    ----------
    method : str
        As for :func:`fit_options`.

    Returns
    -------
    dict

    Examples
    --------
    >>> method_settings("newton")
    {'method': 'newton', 'tol': None}
    """
    return {"method": method, "tol": fit_options(method)["tol"]}
