"""MED structure estimation of an Ising graphical model (JMLR 2011, Section 12).

Each node ``m`` is a task: predict the spin ``x(m)`` from all the other spins, with weights
``theta(m, d)`` and a bias ``b(m)``. One switch ``s(m, d) = s(d, m)`` per undirected edge is
shared by the two tasks it joins, so the predictors agree on one edge set from the outset
(where l1 neighbourhood selection fits the nodes independently and symmetrises afterwards
by an AND or an OR). The dual is one more layout of :class:`~medmtl.med.dual.MEDDual`
(:func:`~medmtl.med.builders.ising_structure_dual`: one two-column factor per edge), so every
registered solution method solves it. The edge posterior is::

    s_hat(m, d) = 1 / (1 + alpha exp(-q_md)),   q_md = 1/2 (u_md^2 + u_dm^2),
    u_md = sum_t lam_{m,t} x_t(m) x_t(d),

so ``q_md`` is the evidence of the data for the edge: the amount by which it moves the
edge's log-odds above the prior's, ``log(1 / alpha)``.

**Decisions above round-off.** Many edges have no evidence at all (``q_md = 0``, posterior
exactly the prior), and a solver leaves them at the prior plus its round-off, which depends
on the method and its tolerance; edges whose evidence is equal in exact arithmetic come out
a round-off apart. The resolution of ``q`` is ten times the
solver's KKT tolerance relative to the largest evidence (``evidence_resolution``: the
solvers stop on a criterion relative to the multipliers' scale, so a fit's evidences carry
round-off in proportion to their own scale, ``C^2`` for a small box): evidence within it of
0 is a tie with the prior (the posterior is the prior exactly, never an edge), and evidence
values within it of each other are one value (:func:`snap_ties`), so every method gives the
same graph and the same ranking of the edges.

**The edge rule.** At ``alpha = 1`` every edge with any evidence has a posterior above 1/2,
and the data give every pair of nodes some evidence by chance: the posterior alone does not
say where chance ends. By default (``threshold="auto"``) the edges are split where the data
split them, with no margin set by hand: :func:`widest_gap_cut` sorts the edges by the size
of their pair of weights, ``sqrt(q_md)`` (``q`` is a sum of two squared weights, so its
square root is on the weights' own linear scale), with the prior's 0 among the values, and
cuts at the widest gap between neighbours. Edges whose evidence is chance cluster near 0;
an edge of the graph moves both of its nodes' weights by an amount that grows with the
coupling and the number of samples, so where the graph stands out of the noise the widest
empty interval is the one between the two groups, and the cut follows the scale of the
evidence (which changes with the number of nodes, the samples and ``C``) instead of a
fixed margin. It fails, as any one cut must, where the weakest true edge has less evidence
than the strongest chance one; it also fails where the true edges' evidence is spread more
widely than it stands above the noise (a gap among the true edges is then the widest),
for instance a true edge much weaker than the others when all chance evidence is 0.
``benchmarks/ising_edge_rule.py`` counts how often it gives a random graph exactly, against
the posterior threshold 1/2 and a hand-set margin. A number in ``(0, 1)`` is the posterior
threshold instead (``0.5`` with ``alpha = 1``: every edge with evidence above round-off).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted, validate_data

from .._params import Interval, Options
from ._estimator_base import _KKT_TOL, _TIE_FACTOR, MEDBase, Problem, evidence_resolution
from ._parameters import PRIOR_PARAMETERS, SOLVE_PARAMETERS, shared_docs
from .bound import switch_posterior
from .builders import edge_pairs, ising_structure_dual

__all__ = ["MEDGraphicalModel", "as_spins", "snap_ties", "widest_gap_cut"]


def as_spins(X, coding=None, name="X"):
    """Binary data as spins in {-1, +1}, and the coding it came in.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_nodes)
        Values in {0, 1} or in {-1, +1} (one coding throughout).
    coding : {None, "01", "pm1"}
        The coding ``X`` must have (a fitted model's); ``None`` infers it.
    name : str
        How errors name ``X``.

    Returns
    -------
    spins : ndarray of shape (n_samples, n_nodes)
        A new array (the caller's is never changed).
    coding : {"01", "pm1"}

    Examples
    --------
    >>> spins, coding = as_spins(np.array([[0, 1], [1, 1]]))
    >>> spins.tolist(), coding
    ([[-1.0, 1.0], [1.0, 1.0]], '01')
    >>> as_spins(np.array([[0, 2]]))
    Traceback (most recent call last):
    ...
    ValueError: X must be binary: values in {0, 1} or in {-1, +1}; found [0.0, 2.0]
    """
    A = X.toarray() if sp.issparse(X) else np.array(X, dtype=float)
    values = np.unique(A)
    if coding is None:
        coding = "01" if np.all(np.isin(values, (0.0, 1.0))) and not np.all(values == 1.0) else "pm1"
        allowed, wanted = (0.0, 1.0) if coding == "01" else (-1.0, 1.0), "in {0, 1} or in {-1, +1}"
    else:
        allowed = (0.0, 1.0) if coding == "01" else (-1.0, 1.0)
        wanted = "in {0, 1}, as the training data" if coding == "01" else "in {-1, +1}, as the training data"
    if not np.all(np.isin(values, allowed)):
        shown = values[:5].tolist() + (["..."] if values.size > 5 else [])
        raise ValueError(f"{name} must be binary: values {wanted}; found {shown}")
    return (2.0 * A - 1.0 if coding == "01" else A), coding




def snap_ties(evidence, tol):
    """Evidence with round-off taken out: values within ``tol`` of 0 become 0 (the prior),
    and values that a chain of gaps of at most ``tol`` joins become one (their mean), so that
    edges whose evidence differs only by a solver's round-off are ties.

    Parameters
    ----------
    evidence : ndarray of shape (n_edges,)
        ``q`` per edge, >= 0.
    tol : float
        The resolution of ``q``.

    Returns
    -------
    ndarray of shape (n_edges,)

    Examples
    --------
    >>> snap_ties(np.array([3e-9, 0.5, 0.2, 0.5 + 4e-8, 6.64087, 6.64088]), 6.6e-5).round(9).tolist()
    [0.0, 0.50000002, 0.2, 0.50000002, 6.640875, 6.640875]
    """
    q = np.where(evidence <= tol, 0.0, evidence)
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    joined = np.diff(ranked) <= tol
    group = np.concatenate(([0], np.cumsum(~joined)))
    means = np.bincount(group, ranked) / np.bincount(group)
    out = np.empty_like(q)
    out[order] = means[group]
    return out


def widest_gap_cut(evidence, tol=0.0):
    """The evidence above which an edge is in the graph by the widest-gap rule.

    The values ``sqrt(q)`` of the edges, with the prior's 0 among them, are sorted; the cut
    is the middle of the widest gap between neighbours, returned on the scale of ``q``. A
    value ``q`` known to within ``tol`` gives ``sqrt(q)`` to within ``tol / (2 sqrt(q))``
    (0 is exact), so a gap could be the widest when it is within its own and the widest
    gap's uncertainty of it: the cut is in the lowest of those, so that round-off cannot
    choose between them. See the module notes for why the gap and why ``sqrt(q)``.

    Parameters
    ----------
    evidence : ndarray of shape (n_edges,)
        ``q`` per edge, >= 0, with round-off already taken out (:func:`snap_ties`).
    tol : float, default=0.0
        The resolution of ``q`` (values nearer than ``tol`` to 0 are 0).

    Returns
    -------
    float
        The cut: the edges with evidence above it are the graph; ``inf`` when no edge has
        any evidence.

    Examples
    --------
    Chance evidence up to 0.016, the weakest true edge at 0.24:

    >>> q = np.array([0.0, 0.003, 0.016, 0.24, 0.57, 1.1, 1.5])
    >>> cut = widest_gap_cut(q)
    >>> round(cut, 3), (q > cut).tolist()
    (0.095, [False, False, False, True, True, True, True])
    >>> widest_gap_cut(np.zeros(3))
    inf
    """
    r = np.unique(np.sqrt(np.append(np.asarray(evidence, dtype=float), 0.0)))
    if r.size < 2:
        return np.inf
    gaps = np.diff(r)
    err = np.divide(tol, 2.0 * r, out=np.zeros_like(r), where=r > 0)
    gap_err = err[:-1] + err[1:]
    widest = int(np.argmax(gaps))
    k = int(np.flatnonzero(gaps + gap_err >= gaps[widest] - gap_err[widest])[0])
    return float(((r[k] + r[k + 1]) / 2.0) ** 2)


def _edge_rule(evidence, threshold, alpha, tol):
    """``(evidence_cut_, threshold_)``: the evidence an edge must exceed and the posterior
    there, by the widest gap (``threshold="auto"``) or from a posterior threshold."""
    if threshold == "auto":
        cut = widest_gap_cut(evidence, tol)
        return cut, float(switch_posterior(np.array([cut]), alpha)[0]) if alpha > 0 else 1.0
    cut = np.log(alpha * threshold / (1.0 - threshold)) if alpha > 0 else -np.inf
    return float(cut), float(threshold)


def _symmetric(edges, values, n_nodes):
    """The ``(n_nodes, n_nodes)`` symmetric matrix with ``values`` on ``edges``, zero diagonal."""
    P = np.zeros((n_nodes, n_nodes))
    P[edges[:, 0], edges[:, 1]] = values
    return P + P.T


def _from_spins(S, coding):
    return (S + 1.0) / 2.0 if coding == "01" else S


@shared_docs
class MEDGraphicalModel(MEDBase):
    """Structure of an Ising model by multi-task MED: one shared switch per edge.

    Node ``m``'s task predicts ``x(m)`` from the other nodes; the switch of edge ``(m, d)``
    gates both ``theta(m, d)`` and ``theta(d, m)``, so the estimated graph is symmetric by
    construction (JMLR Section 12). Every MED solution method solves the dual.

    {parameters}

    Attributes
    ----------
    edge_posterior_ : ndarray of shape (n_nodes, n_nodes)
        ``s_hat(m, d)``, the posterior probability of each edge: symmetric, zero diagonal;
        an edge whose evidence is round-off has exactly the prior ``1 / (1 + alpha)``.
    edge_evidence_ : ndarray of shape (n_nodes, n_nodes)
        ``q_md``, the log-odds by which the data move each edge above the prior (0 where
        that is round-off): symmetric, zero diagonal.
    adjacency_ : ndarray of bool, shape (n_nodes, n_nodes)
        The edges with evidence above round-off and above ``evidence_cut_`` (whose
        posterior is above ``threshold_``).
    evidence_cut_ : float
        The evidence ``q`` an edge must exceed: :func:`widest_gap_cut` for
        ``threshold="auto"``, else ``log(alpha * threshold / (1 - threshold))``, where the
        posterior crosses ``threshold``.
    threshold_ : float
        The posterior at ``evidence_cut_`` (``threshold`` itself when it is a number).
    tie_tol_ : float
        The resolution of the evidence: ten times the KKT tolerance of the solve (the
        method's ``kkt_tol``, ``1e-6`` by default) times the largest evidence (and no finer
        than that fraction squared of the largest evidence the box allows). Evidence at or
        below it is a tie with the prior; evidences within it of each other are one value
        (:func:`snap_ties`, :func:`widest_gap_cut`).
    coef_ : ndarray of shape (n_nodes, n_nodes)
        Row ``m``: node ``m``'s weights on the other nodes' spins (posterior means
        ``s_hat(m, d) u_md``), zero diagonal. Not symmetric: the switches are shared, the
        weights are not.
    intercept_ : ndarray of shape (n_nodes,)
        Each node's bias.
    switch_posterior_ : ndarray of shape (n_nodes * (n_nodes - 1) / 2,)
        The edge posteriors in the order of ``edges_``.
    edges_ : ndarray of shape (n_nodes * (n_nodes - 1) / 2, 2)
        The node pairs ``(m, d)``, ``m < d``, one per switch.
    coding_ : {"01", "pm1"}
        The coding of the training data, used by :meth:`predict`.
    n_features_in_ : int
        The number of nodes.
    {solution}

    Examples
    --------
    Samples of a four-node cycle 0-1-2-3-0; each node's two most probable edges join it to
    its neighbours on the cycle:

    >>> from medmtl.datasets.ising import cycle_graph, random_ising
    >>> model = random_ising(cycle_graph(4), coupling=1.0, mixed=False, random_state=0)
    >>> X = model.sample(400, random_state=0)
    >>> g = MEDGraphicalModel(C=0.1, alpha=10.0).fit(X)
    >>> np.sort(np.argsort(-g.edge_posterior_, axis=1)[:, :2], axis=1).tolist()
    [[1, 3], [0, 2], [1, 3], [0, 2]]
    >>> bool(np.allclose(g.edge_posterior_, g.edge_posterior_.T))
    True
    """

    _parameter_constraints = {**PRIOR_PARAMETERS, **SOLVE_PARAMETERS,
                              "threshold": [Options("auto"), Interval(Real, 0, 1, closed="neither")]}

    def __init__(self, alpha=None, rho=None, C=1.0, threshold="auto", method="auto", solver=None,
                 max_iter=None, tol=None, solver_options=None, warm_start=False):
        self._set_init_params(locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = False
        return tags

    def fit(self, X, y=None):
        """Estimate the graph from samples.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_nodes)
            Binary samples, coded {0, 1} or {-1, +1}; every node must take both values.
        y : None
            Ignored (the nodes are the targets).

        Returns
        -------
        self
        """
        return self._fit(X)

    def _problem(self, params, X, y, tasks):
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        S, self.coding_ = as_spins(X)
        N = S.shape[1]
        if N < 2:
            raise ValueError(f"{type(self).__name__} needs at least two nodes; X has {N} column")
        constant = np.flatnonzero(np.all(S == S[:1], axis=0))
        if constant.size:
            raise ValueError(f"node(s) {constant.tolist()[:10]} take one value in every sample: a constant node "
                             "has no task to learn (and no edges to estimate); drop it")
        return Problem(ising_structure_dual(S, params["C"], params["alpha"]), [S], [])

    def _store(self, params, problem, solution):
        self._record_solution(solution)
        (S,), lam = problem.Xs, self._lam
        T, N = S.shape
        W = S.T.reshape(N, T) * lam.reshape(N, T)           # row m: y_{m,t} lam_{m,t}
        U = W @ S                                            # U[m, d] = u_md
        np.fill_diagonal(U, 0.0)
        self.edges_ = edge_pairs(N)
        kkt_tol = params["plan"].options.get("kkt_tol", _KKT_TOL)
        q = problem.dual.term_quads(lam)
        self.tie_tol_ = evidence_resolution(problem.dual, q, kkt_tol)
        self._decision_tol = _TIE_FACTOR * kkt_tol
        evidence = snap_ties(q, self.tie_tol_)
        if params["alpha"] > 0:
            # the posteriors of the snapped evidence: round-off ranks no edge above another
            self.switch_posterior_ = switch_posterior(evidence, params["alpha"])
        self.edge_evidence_ = _symmetric(self.edges_, evidence, N)
        self.edge_posterior_ = _symmetric(self.edges_, self.switch_posterior_, N)
        self.evidence_cut_, self.threshold_ = _edge_rule(evidence, params["threshold"], params["alpha"],
                                                         self.tie_tol_)
        above = (self.edge_evidence_ > self.evidence_cut_ if params["threshold"] == "auto"
                 else self.edge_posterior_ > self.threshold_)
        self.adjacency_ = (self.edge_evidence_ > 0) & above
        self.coef_ = self.edge_posterior_ * U
        self.dual_coef_ = lam.reshape(N, T).copy()

    def decision_function(self, X):
        """Each node's score from the other nodes' spins: positive predicts spin +1.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_nodes)
            Binary samples, in the training data's coding.

        Returns
        -------
        ndarray of shape (n_samples, n_nodes)
            Column ``m``: node ``m``'s scores.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        S, _ = as_spins(X, self.coding_)
        return S @ self.coef_.T + self.intercept_

    def predict(self, X):
        """Each node's spin predicted from the other nodes, in the training data's coding.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_nodes)

        Returns
        -------
        ndarray of shape (n_samples, n_nodes)
        """
        return _from_spins(np.where(self._snapped_decisions(X) > 0, 1.0, -1.0), self.coding_)

    def _snapped_decisions(self, X):
        """The decision values with those within round-off of 0 set to 0: a score that is 0
        in exact arithmetic (symmetric weights on spins) comes out as the solver's round-off,
        whose sign depends on the method."""
        f = self.decision_function(X)
        tol = self._decision_tol * (np.abs(self.intercept_) + np.abs(self.coef_).sum(axis=1) + 1.0)
        return np.where(np.abs(f) <= tol, 0.0, f)

    def score(self, X, y=None):
        """Mean over nodes and samples of predicting each node from the others (held-out
        pseudo-likelihood's 0-1 counterpart): a rule to choose ``C`` and ``alpha`` on
        validation samples, with no knowledge of the true graph. A score within round-off
        of 0 is a tie and counts 1/2 (:meth:`predict` gives it spin -1), so the value does
        not depend on the method that solved the dual.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_nodes)
        y : None
            Ignored.

        Returns
        -------
        float
        """
        f = self._snapped_decisions(X)
        spins, _ = as_spins(X, self.coding_)
        # a score of 0 (within round-off) is a tie, right half the time whatever the method
        return float(np.mean(np.where(f == 0, 0.5, np.sign(f) == spins)))
