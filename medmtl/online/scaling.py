"""Scaling inputs into the unit ball: the online linear learners compare margins of different tasks.

:func:`scale_to_unit_ball` puts every row in the unit ball (``"row"``: each row to norm one;
``"max"``: every row divided by the largest row norm); :func:`max_scaling` and
:func:`apply_max_scaling` scale new inputs as a training matrix was. Sparse inputs stay
sparse; the factors are exact where a power of two does the job, so rows whose norms lie far
outside the float range's middle keep every digit. :func:`check_row_scale` refuses inputs
whose row norms lie outside :data:`ROW_NORM_RANGE`, for the learners whose decisions depend
on the scale.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from medmtl.online._checks import input_matrix

__all__ = ["row_norms", "scale_to_unit_ball", "max_scaling", "apply_max_scaling", "check_row_scale",
           "ROW_NORM_RANGE"]

# Row norms a learner that is not scale-invariant accepts (zero rows aside). Its margins are
# products of two inputs summed over its updates: within [1e-140, 1e140], a product lies in
# [1e-280, 1e280], which leaves a factor 1e28 before an overflow (or a loss of precision to
# subnormal numbers, where a margin's sign is no longer computed exactly).
ROW_NORM_RANGE = (1e-140, 1e140)


def _canonical(X):
    """CSR ``X`` with duplicate entries summed (a copy only when a row repeats a column).

    Unsorted rows without duplicates are kept as they are, so their sums keep their order.
    """
    if X.has_canonical_format:
        return X
    Y = X.copy()
    Y.sum_duplicates()
    return Y if Y.nnz != X.nnz else X


def row_norms(X):
    """Euclidean norm of every row of a dense or sparse matrix, over the whole float range.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_rows, n_features)

    Returns
    -------
    norms : ndarray of shape (n_rows,)
        ``inf`` only where the norm itself exceeds the largest float.

    Examples
    --------
    >>> row_norms(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([5., 0.])
    >>> row_norms(np.array([[3e-310, 4e-310]]))
    array([5.e-310])
    """
    if sp.issparse(X):
        X = _canonical(sp.csr_matrix(X))
    else:
        X = np.asarray(X)
    extreme = _extreme_rows(X)
    with np.errstate(over="ignore", under="ignore"):
        if sp.issparse(X):
            owner = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
            norms = np.sqrt(np.bincount(owner, weights=X.data ** 2, minlength=X.shape[0]))
        else:
            norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    if np.any(extreme):
        # squares of entries above ~1e154 overflow and below ~1e-154 underflow: such a row is
        # scaled by the power of two that brings its largest |entry| into [0.5, 1), exactly,
        # and its norm scaled back
        rows = X[np.flatnonzero(extreme)]
        exponents = np.frexp(_row_peaks(rows))[1]
        norms[extreme] = np.ldexp(row_norms(_times_power_of_two(rows, -exponents)), exponents.astype(np.int32))
    return norms


_TINY, _HUGE = 1e-150, 1e150


def _row_peaks(X):
    """The largest |entry| of every row (0 for an empty row)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        peaks = np.zeros(X.shape[0])
        filled = np.diff(X.indptr) > 0
        if np.any(filled):
            # each filled row's entries run up to the next filled row's first entry
            peaks[filled] = np.maximum.reduceat(np.abs(X.data), X.indptr[:-1][filled])
        return peaks
    return np.abs(np.asarray(X)).max(axis=1, initial=0.0).astype(float)


def _extreme_rows(X):
    """Rows whose squared entries would overflow or underflow."""
    peaks = _row_peaks(X)
    return (peaks > _HUGE) | ((peaks > 0) & (peaks < _TINY))


def _times_power_of_two(X, exponents):
    """``X`` with row ``i`` multiplied by ``2 ** exponents[i]``: a new matrix, exact where it fits.

    ``ldexp`` scales each entry itself, so a factor such as ``2 ** 1029`` (beyond the float
    range, as the reciprocal of a subnormal peak is) never has to exist as a number.
    """
    exponents = np.asarray(exponents).astype(np.int32)
    if sp.issparse(X):
        Y = sp.csr_matrix(X, copy=True)
        Y.data = np.ldexp(Y.data, np.repeat(exponents, np.diff(Y.indptr)))
        return Y
    return np.ldexp(X, exponents[:, None])


def scale_to_unit_ball(X, method="row"):
    """Return a scaled copy of ``X`` whose rows lie in the unit ball.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_rows, n_features)
        Finite values; sparse input is returned as canonical CSR and stays sparse.
    method : {"row", "max"}, default="row"
        ``"row"`` divides every non-zero row by its own norm (all inputs on the unit sphere,
        so ``X = max ||x|| = 1`` in the SHAMPO bound); ``"max"`` divides the whole matrix by
        its largest row norm (keeps the relative norms).

    Returns
    -------
    X_scaled : ndarray or CSR matrix of shape (n_rows, n_features)
        A new object; the input is never modified.

    Examples
    --------
    >>> scale_to_unit_ball([[3.0, 4.0], [0.0, 1.0]])
    array([[0.6, 0.8],
           [0. , 1. ]])
    >>> scale_to_unit_ball([[3.0, 4.0], [0.0, 1.0]], method="max")
    array([[0.6, 0.8],
           [0. , 0.2]])
    """
    if method not in ("row", "max"):
        raise ValueError(f"method must be 'row' or 'max', got {method!r}")
    X = input_matrix(X)
    if sp.issparse(X):
        X = _canonical(X)
    if method == "max":
        return apply_max_scaling(X, max_scaling(X))
    extreme = _extreme_rows(X)
    if np.any(extreme):
        # bring the largest |entry| of each extreme row into [0.5, 1) by a power of two (so its
        # direction is unchanged, exactly), then scale as usual
        exponents = np.frexp(_row_peaks(X))[1]
        exponents[~extreme] = 0
        X = _times_power_of_two(X, -exponents)
    # Zero rows stay zero rather than becoming NaN.
    norms = row_norms(X)
    return _times_rows(X, np.divide(1.0, norms, out=np.ones_like(norms), where=norms > 0))


def max_scaling(X):
    """How ``scale_to_unit_ball(X, "max")`` scales: ``(e, f)``, each row times ``2 ** -e`` then ``f``.

    ``f`` is the reciprocal of the largest row norm; when squares of the entries would
    overflow or underflow, the power of two ``2 ** -e`` first brings the largest |entry| into
    [0.5, 1) (exactly), so that the norms and ``f`` are representable.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_rows, n_features), checked

    Returns
    -------
    (int, float)
    """
    exponent = 0
    if np.any(_extreme_rows(X)):
        peaks = _row_peaks(X)
        exponent = int(np.frexp(peaks[peaks > 0])[1].max())
        X = _times_power_of_two(X, np.full(X.shape[0], -exponent))
    top = row_norms(X).max(initial=0.0)
    return exponent, 1.0 / top if top > 0 else 1.0


def apply_max_scaling(X, scaling):
    """``X`` scaled as :func:`max_scaling` says (a new matrix); the rows of ``X`` keep their relative norms.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_rows, n_features), checked
    scaling : (int, float)
        From :func:`max_scaling` (of these inputs, or of the training inputs they must match).
    """
    exponent, factor = scaling
    if exponent:
        X = _times_power_of_two(X, np.full(X.shape[0], -exponent))
    return _times_rows(X, np.full(X.shape[0], factor))


def _times_rows(X, factors):
    """``X`` with row ``i`` multiplied by ``factors[i]``: a new array, or canonical CSR matrix."""
    if sp.issparse(X):
        X = X.copy()
        X.sum_duplicates()  # rank-one updates index by column: one entry per column
        X.data = X.data * np.repeat(factors, np.diff(X.indptr))
        return X
    return X * factors[:, None]


def check_row_scale(X, name, owner):
    """Raise if a row's norm lies outside :data:`ROW_NORM_RANGE` (zero rows are fine).

    For learners whose decisions depend on the scale of the inputs (a fixed margin scale
    ``b``, a hinge loss): beyond the range their margins overflow the float range or lose
    their sign to underflow, so no answer they gave would be the exact one.

    Parameters
    ----------
    X : ndarray or CSR matrix
    name, owner : str
        Named in the message.
    """
    low, high = ROW_NORM_RANGE
    values = np.abs(X.data if sp.issparse(X) else np.asarray(X, dtype=np.float64))
    values = values[values > 0]
    # a non-zero row's norm lies between its largest |entry| and sqrt(n_features) times it
    if values.size == 0 or values.min() >= low and values.max() * np.sqrt(X.shape[1]) <= high:
        return
    norms = row_norms(X if sp.issparse(X) else np.asarray(X, dtype=np.float64))
    bad = np.flatnonzero((norms > high) | ((norms > 0) & (norms < low)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name} has a row (row {i}) of norm {norms[i]:.3g}: {owner} is not scale-invariant, and "
                         f"its margins, products of inputs, would {'overflow' if norms[i] > high else 'underflow'} "
                         f"the float range; it needs row norms within [{low:g}, {high:g}] (or zero rows). Rescale "
                         "the inputs, for example with medmtl.online.scale_to_unit_ball")
