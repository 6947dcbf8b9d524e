"""SHAMPO with a Mercer kernel: each task's model is a weighted sum over its support inputs."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from medmtl._validation import Checked, Interval
from medmtl.kernels import Kernel, LinearKernel, PolynomialKernel, RBFKernel, get_kernel
from medmtl.online._checks import LARGE, Capped, input_matrix
from medmtl.online.shampo import SHAMPO
from medmtl.online.shampo_rounds import draw_rule, draw_tasks
from medmtl.online.streams import MultiTaskStream, apply_max_scaling, max_scaling, scale_to_unit_ball

__all__ = ["KernelSHAMPO", "make_kernel"]


def make_kernel(kernel, gamma=1.0, degree=3, coef0=1.0):
    """A :class:`~medmtl.kernels.Kernel` from a name and the RBF / polynomial parameters.

    Parameters
    ----------
    kernel : {"rbf", "poly", "polynomial", "linear"}, Kernel or callable
        A callable is ``k(A, B) -> Gram matrix`` of shape (A.shape[0], B.shape[0]).
    gamma, degree, coef0 : float
        ``exp(-gamma ||a - b||^2)`` and ``(gamma <a, b> + coef0) ** degree``.

    Examples
    --------
    >>> make_kernel("poly", degree=2, coef0=0.0)
    PolynomialKernel('poly2')
    """
    if isinstance(kernel, str):
        name = kernel.lower()
        if name == "rbf":
            return RBFKernel(gamma)
        if name in ("poly", "polynomial"):
            return PolynomialKernel(degree, gamma, coef0)
        if name == "linear":
            return LinearKernel()
    return get_kernel(kernel)


def _kernel_spec(kernel):
    """``kernel`` unchanged if :func:`make_kernel` takes it (its own error otherwise)."""
    if isinstance(kernel, str):
        if kernel.lower() not in ("rbf", "poly", "polynomial", "linear"):
            get_kernel(kernel)  # for a name it does not know, the registry's message lists those it does
    elif not isinstance(kernel, Kernel) and not callable(kernel):
        raise TypeError(f"kernel must be a string, a Kernel or a callable; got {type(kernel).__name__}")
    return kernel


class _Support:
    """One task's support inputs and their coefficients, in arrays that double when full."""

    def __init__(self, n_features):
        self.inputs = np.empty((16, n_features))
        self.coefs = np.empty(16)
        self.size = 0

    def add(self, x, c):
        if self.size == self.coefs.size:
            # doubling keeps the cost of growth amortised O(1) per update
            self.inputs = np.concatenate([self.inputs, np.empty_like(self.inputs)])
            self.coefs = np.concatenate([self.coefs, np.empty_like(self.coefs)])
        self.inputs[self.size] = x
        self.coefs[self.size] = c
        self.size += 1

    def margins(self, kernel, X):
        """``sum_s c_s k(x_s, x)`` for every row ``x`` of ``X``."""
        if self.size == 0:
            return np.zeros(X.shape[0])
        return self.coefs[:self.size] @ kernel(self.inputs[:self.size], X)


class KernelSHAMPO(SHAMPO):
    """SHAMPO with a Mercer kernel: each task's model is a sum over its updated inputs.

    The margin of task j is p_j(x) = sum_s c_s k(x_s, x) over the inputs x_s on which task
    j was updated (c_s = y_s). Queries and updates follow :class:`SHAMPO` exactly, so with
    ``kernel="linear"`` both make the same choices. Rounds are played one at a time (each
    margin needs the whole support set); the support grows in amortised constant time.

    Parameters
    ----------
    kernel : {"rbf", "poly", "linear"}, Kernel or callable, default="rbf"
        A name (with ``gamma``, ``degree``, ``coef0``), a :class:`medmtl.kernels.Kernel`, or
        a callable ``k(A, B) -> Gram matrix`` (see :func:`make_kernel`).
    gamma, degree, coef0 : float
        Parameters of the RBF and polynomial kernels.
    b, aggressive, lam, prior, strategy, n_queries, prior_rounds, scale, random_state
        As in :class:`SHAMPO`. Dense inputs only. Inputs to predict are scaled as the
        training inputs were: each row to the unit sphere (``"row"``), by the largest
        training row norm of their task (``"max"``), or not at all (None).

    Attributes
    ----------
    kernel_ : Kernel
    support_ : list of ndarray, support_[j] of shape (n_support_j, n_features_j)
    dual_coef_ : list of ndarray, dual_coef_[j] of shape (n_support_j,)
    classes_, feature_names_in_, prior_, b_, lam_, n_tasks_, n_rounds_, n_features_,
    queries_per_task_, updates_per_task_, train_margins_, queried_tasks_
        As in :class:`SHAMPO`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.uniform(-1, 1, size=(300, 2)) for _ in range(2)]
    >>> ys = [np.where(X[:, 0] * X[:, 1] > 0, 1, -1) for X in Xs]  # XOR: not linear
    >>> model = KernelSHAMPO(kernel="poly", degree=2, coef0=0.0, b=0.1, scale="max",
    ...                      random_state=0).fit(Xs, ys)
    >>> model.score(Xs, ys) > 0.95
    True
    """

    _parameter_constraints = {
        **{name: rule for name, rule in SHAMPO._parameter_constraints.items() if name not in ("block_size", "dtype")},
        "kernel": [Checked(_kernel_spec)],
        "gamma": [Capped(Real, 0, LARGE, closed="right")],
        "degree": [Interval(Integral, 1, None)],
        "coef0": [Interval(Real, None, None)],
    }

    def __init__(self, kernel="rbf", gamma=1.0, degree=3, coef0=1.0, b=1.0, aggressive=True, lam=None,
                 prior=None, strategy="shampo", n_queries=1, prior_rounds=1000, scale="row",
                 random_state=None):
        self._init_params(locals())

    def _start_storage(self):
        s = self._settings
        self.kernel_ = make_kernel(s["kernel"], s["gamma"], s["degree"], s["coef0"])

    def _stream_of(self, X, scale):
        return MultiTaskStream(X, scale=scale)

    def _make_stream(self, X):
        stream = super()._make_stream(X)
        # "max" scales each task by its largest training row norm: predictions scale the same
        # (a stream given as it is was scaled already)
        self._max_scalings = [(0, 1.0)] * stream.n_tasks
        if self._settings["scale"] == "max" and not isinstance(X, MultiTaskStream):
            self._max_scalings = [max_scaling(input_matrix(Xj, f"Xs[{j}]")) for j, Xj in enumerate(X)]
        return stream

    def _start_weights(self, stream):
        self._support = [_Support(d) for d in stream.n_features]

    @property
    def coef_(self):
        """A KernelSHAMPO has none (an AttributeError): see ``support_`` and ``dual_coef_``."""
        raise AttributeError("a KernelSHAMPO has no primal weights; see support_ and dual_coef_")

    @property
    def support_(self):
        """list of ndarray, support_[j] of shape (n_support_j, n_features_j): the updated inputs."""
        self._check_fitted()
        return [s.inputs[:s.size].copy() for s in self._support]

    @property
    def dual_coef_(self):
        """list of ndarray, dual_coef_[j] of shape (n_support_j,): their coefficients."""
        self._check_fitted()
        return [s.coefs[:s.size].copy() for s in self._support]

    def _round_margins(self, xs):
        """Every task's margin on the round's inputs ``xs``, refused when the kernel overflows."""
        with np.errstate(over="ignore", invalid="ignore"):
            p = np.array([self._support[j].margins(self.kernel_, x[None, :])[0] for j, x in enumerate(xs)])
        if not np.all(np.isfinite(p)):
            raise ValueError(self._overflow_message())
        return p

    def _pass(self, stream, oracle, index0, record, drawn=None):
        if any(sp.issparse(X) for X in stream.Xs):
            raise TypeError("KernelSHAMPO takes dense inputs only")
        K, n, q = stream.n_tasks, stream.n_rounds, self._settings["n_queries"]
        rule = draw_rule(self.prior_, self.b_, q)
        if record:
            self.train_margins_ = np.empty((n, K))
            self.queried_tasks_ = np.empty((n, q), dtype=np.int64)
        for t in range(n):
            xs = [X[t] for X in stream.Xs]
            p = self._round_margins(xs)
            E = self._rng.standard_exponential((1, K)) if drawn is None else drawn[0][t:t + 1]
            J = draw_tasks(p[None, :], E, rule)[0]
            for j in J.tolist():
                y = oracle.query(j, index0 + t)
                self.queries_per_task_[j] += 1
                if y * p[j] <= self.lam_:
                    self._support[j].add(xs[j], float(y))
                    self.updates_per_task_[j] += 1
            if record:
                self.train_margins_[t] = p
                self.queried_tasks_[t] = J
        self.n_rounds_ += n

    def _ask(self, stream, exponentials):
        if any(sp.issparse(X) for X in stream.Xs):
            raise TypeError("KernelSHAMPO takes dense inputs only")
        p = self._round_margins([X[0] for X in stream.Xs])
        return draw_tasks(p[None, :], exponentials, draw_rule(self.prior_, self.b_, self._settings["n_queries"]))[0]

    def _overflow_message(self):
        s = self._settings
        return (f"KernelSHAMPO: the kernel {self.kernel_.name} (gamma={s['gamma']:g}, degree={s['degree']}, "
                f"coef0={s['coef0']:g}) gives margins beyond the float range on these inputs; choose smaller "
                "kernel parameters")

    def _task_margins(self, X, task):
        if sp.issparse(X):
            raise TypeError("KernelSHAMPO takes dense inputs only")
        scale = self._settings["scale"]
        if scale == "row":
            X = scale_to_unit_ball(X)
        elif scale == "max":
            with np.errstate(over="ignore"):
                X = apply_max_scaling(X, self._max_scalings[task])
        with np.errstate(over="ignore", invalid="ignore"):
            margins = self._support[task].margins(self.kernel_, X)
        if not np.all(np.isfinite(margins)):
            raise ValueError(self._overflow_message())
        return margins
