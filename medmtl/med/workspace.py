"""What is derived once from a MED dual's data and shared by every copy of the dual."""

from __future__ import annotations

__all__ = ["Workspace"]


class Workspace:
    """What is derived once from a dual's data, shared by every copy of the dual.

    :meth:`MEDDual.replace` (a path over ``C`` and ``alpha``) keeps the data, so the copies
    share one workspace and the factors, Gram operators and solver layouts below are built
    once for the whole path. The dual's own derived forms have fixed names (``__slots__``,
    None until built); a solution method keeps what it derives in its own slot,
    :meth:`slot` (``workspace.slot(method.name)``), so a registered method has what a
    built-in one has.

    Attributes
    ----------
    shared_factor : ndarray or sparse matrix of shape (n, r0), or None
        Factor of a kernel's unswitched Gram, built when a factor-based method
        (``"bound"``, ``"direct"``) first reads :attr:`MEDDual.Phi0`. It stays None while the
        kernel is only evaluated column by column: no n x n factor has been built.
    switched_factors : tuple (Phi, term_ptr) or None
        The switched factors side by side and their column offsets; None while some term is
        a :class:`KernelGram` that no factor-based method has factorised yet.
    col_term : ndarray of shape (R,) or None
        The switched term of each column of ``Phi``.
    shared_gram : FactorGram or None
        The unswitched factor as a Gram operator.
    term_grams : list of FactorGram or KernelGram, or None
        The switched terms as Gram operators.
    factor_rows : FactorRows or None
        ``[Phi0 | Phi]`` as rows (:meth:`MEDDual.factor_rows`).
    cache : dict
        One dict per solution method that keeps something here, by the method's name.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.med.dual import MEDDual
    >>> d = MEDDual(c=[1, 1], lo=[0, 0], hi=[1, 1], a=[1, -1], groups=[np.arange(2)],
    ...             Phi0=np.array([[1.0], [1.0]]))
    >>> d.replace(C=2.0).workspace is d.workspace
    True
    >>> d.workspace.shared_gram is None, d.shared_gram() is d.workspace.shared_gram
    (True, True)
    >>> d.workspace.slot("my-method")["layout"] = "built once"
    >>> d.replace(alpha=3.0).workspace.slot("my-method")
    {'layout': 'built once'}
    """

    __slots__ = ("shared_factor", "switched_factors", "col_term", "shared_gram", "term_grams",
                 "factor_rows", "cache", "__weakref__")

    def __init__(self):
        for name in self.__slots__[:-2]:
            setattr(self, name, None)
        self.cache = {}

    def slot(self, name):
        """The dict in which the method ``name`` keeps what it derives from the dual.

        Parameters
        ----------
        name : str
            The method's name.

        Returns
        -------
        dict
        """
        return self.cache.setdefault(name, {})
