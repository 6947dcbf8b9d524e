"""The quadratic subproblem of Algorithm 1 for one block of tasks, and two ways to solve it.

With the other blocks fixed at ``lam~`` and every switched term replaced by Theorem 1's bound
at ``v = u(lam~)``, the block's multipliers ``lam_B`` minimise (the negated lower bound on J)::

    -c_B^T lam_B + 1/2 ||w0||^2
      + sum_d [ 1/2 ||w_d||^2 + (s_d - 1) v_d^T w_d + G_d/2 (v_d^T w_d - ||v_d||^2)^2 ]

with ``w0 = Phi0^T lam`` and ``w_d = Phi_d^T lam`` affine in ``lam_B``. Two equivalent forms:

* ``"u"`` (feature space): variables ``[lam_B, w0, w, p]`` with the sparse equality rows
  ``w = Phi_B^T lam_B + const`` and ``p_d = v_d^T w_d``; the Hessian is diagonal (1 on ``w``,
  ``G_d`` on ``p``), so nothing n x n is formed. Used for linear / feature models.
* ``"lam"`` (multiplier space): variables ``[lam_B, p]`` with ``p_d = h_d^T lam_B``,
  ``h_d = Phi_{d,B} v_d``; Hessian ``K_B = Phi_B Phi_B^T + Phi0_B Phi0_B^T`` (dense, fixed)
  plus ``G_d`` on ``p``. Used for kernel models, where ``K_B`` is smaller than the factor.

Only ``q``, the equality right-hand sides, the ``G_d`` and the ``v``-dependent coefficients
change between iterations, so a solver is set up once per block and then updated.
:class:`OSQPBackend` can also solve loosely (an inexact step of Algorithm 1); a loose solve
that is polished counts as exact when the polished point passes :func:`is_qp_optimal`.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

def osqp_polish_setting():
    """OSQP's polishing setting under its installed name (1.x renamed ``polish`` to
    ``polishing``), or nothing if OSQP is missing."""
    try:
        import osqp

        major = int(str(getattr(osqp, "__version__", "0")).split(".")[0])
    except (ImportError, ValueError):
        return {}
    return {"polishing": True} if major >= 1 else {"polish": True}


__all__ = ["BlockQP", "OSQPBackend", "CVXPYBackend", "is_qp_optimal", "osqp_polish_setting"]


def _nonzero_columns(M):
    if M is None:
        return np.zeros(0, dtype=np.int64)
    if sp.issparse(M):
        return np.unique(sp.csr_matrix(M).indices).astype(np.int64) if M.nnz else np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.any(M != 0, axis=0))


def _csc_with_positions(rows, cols, vals, shape):
    """CSC matrix keeping every listed entry (zeros included) and each entry's data position."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    order = np.lexsort((rows, cols))
    c_sorted = cols[order]
    indptr = np.searchsorted(c_sorted, np.arange(shape[1] + 1)).astype(np.int64)
    M = sp.csc_matrix((np.asarray(vals, dtype=float)[order], rows[order], indptr), shape=shape)
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    return M, pos


def _coo_parts(M, row_offset=0, col_offset=0, scale=1.0):
    """(rows, cols, vals) of a dense or sparse matrix's structural nonzeros."""
    if sp.issparse(M):
        C = sp.coo_matrix(M)
        return C.row + row_offset, C.col + col_offset, scale * C.data
    r, c = np.nonzero(M)
    return r + row_offset, c + col_offset, scale * M[r, c]


def _inf_norm(v):
    return float(np.abs(v).max()) if v.size else 0.0


def _mul(M, x):
    return np.asarray(M @ x).ravel()


class BlockQP:
    """The structure of one block's bound subproblem (see module docstring).

    Parameters
    ----------
    dual : MEDDual
    group_ids : list of int
        The groups (tasks) updated together in this block.
    form : {"auto", "u", "lam"}
        ``"auto"`` takes the form with fewer stored entries.

    Examples
    --------
    >>> import numpy as np
    >>> from medmtl.med import feature_selection_dual
    >>> dual = feature_selection_dual([np.eye(3)], [np.array([1, -1, 1])], C=1.0, alpha=1.0)
    >>> qp = BlockQP(dual, [0], form="u")
    >>> qp.form, qp.nB, qp.nT        # 3 multipliers, 3 switched features
    ('u', 3, 3)
    >>> lam = np.zeros(3)
    >>> w = dual.switched_u(lam)
    >>> nums = qp.numbers(lam, np.zeros(0), w, dual.switch_posterior(lam), dual.curvature(lam))
    >>> x = OSQPBackend(qp).solve(nums)
    >>> bool(dual.objective(dual.project(x[:3])) > 0)
    True
    """

    def __init__(self, dual, group_ids, form="auto"):
        self.dual = dual
        self.group_ids = list(group_ids)
        self.idx = np.concatenate([dual.groups[g] for g in self.group_ids])
        idx = self.idx
        nB = self.nB = idx.size
        self.cB = dual.c[idx]
        self.loB, self.hiB = dual.lo[idx], dual.hi[idx]
        self.P0B = None if dual.Phi0 is None else dual.Phi0[idx]
        self.PB = None if dual.Phi is None else dual.Phi[idx]
        self.J0 = _nonzero_columns(self.P0B)
        self.J1 = _nonzero_columns(self.PB)
        self.terms, self.tl = np.unique(dual.col_term[self.J1], return_inverse=True)
        nT = self.nT = self.terms.size
        P0J = None if self.P0B is None else self.P0B[:, self.J0]
        PJ = None if self.PB is None else self.PB[:, self.J1]
        self.P0J, self.PJ = P0J, PJ
        # made once: a sparse matrix's .T builds a new object on every call
        self.P0BT, self.PBT, self.P0JT, self.PJT = (None if M is None else M.T
                                                    for M in (self.P0B, self.PB, P0J, PJ))
        nnz = sum(0 if M is None else (M.nnz if sp.issparse(M) else np.count_nonzero(M)) for M in (P0J, PJ))
        if form == "auto":
            form = "lam" if nB * (nB + 1) / 2 + nB * nT <= nnz + self.J1.size else "u"
        if form not in ("u", "lam"):
            raise ValueError(f"qp_form must be 'auto', 'u' or 'lam'; got {form!r}")
        self.form = form
        # Group equality rows, local indices.
        pos_in_block = {int(i): k for k, i in enumerate(idx)}
        eq_rows = []
        for r, g in enumerate(self.group_ids):
            loc = np.array([pos_in_block[int(i)] for i in dual.groups[g]])
            eq_rows.append((np.full(loc.size, r), loc, dual.a[dual.groups[g]]))
        self.nG = len(eq_rows)
        if form == "u":
            self._build_u(eq_rows)
        else:
            self._build_lam(eq_rows)

    # -- structure ---------------------------------------------------------------------------
    def _build_u(self, eq_rows):
        nB, nT = self.nB, self.nT
        n0, n1 = self.J0.size, self.J1.size
        self.n0, self.n1 = n0, n1
        N = self.N = nB + n0 + n1 + nT
        self.w0_sl = slice(nB, nB + n0)
        self.w1_sl = slice(nB + n0, nB + n0 + n1)
        self.p_sl = slice(nB + n0 + n1, N)
        diag = np.concatenate([np.zeros(nB), np.ones(n0 + n1), np.zeros(nT)])
        self.P = sp.csc_matrix((diag, np.arange(N), np.arange(N + 1)), shape=(N, N))
        self.G_pos = np.arange(nB + n0 + n1, N)
        R, Cc, V = [], [], []
        row = 0
        # w0 - Phi0_B^T lam = k0
        if n0:
            R.append(np.arange(n0)); Cc.append(np.arange(nB, nB + n0)); V.append(np.ones(n0))
            r, c, v = _coo_parts(self.P0J.T, row, 0, -1.0)
            R.append(r); Cc.append(c); V.append(v)
        row += n0
        if n1:
            R.append(row + np.arange(n1)); Cc.append(np.arange(nB + n0, nB + n0 + n1)); V.append(np.ones(n1))
            r, c, v = _coo_parts(self.PJ.T, row, 0, -1.0)
            R.append(r); Cc.append(c); V.append(v)
        row += n1
        # p_t - sum_j v_j w1_j = 0 (the v_j change every iteration)
        R.append(row + np.arange(nT)); Cc.append(self.p_sl.start + np.arange(nT)); V.append(np.ones(nT))
        var_start = sum(x.size for x in R)
        R.append(row + self.tl); Cc.append(nB + n0 + np.arange(n1)); V.append(np.zeros(n1))
        self._finish_constraints(R, Cc, V, row + nT, eq_rows, N, var_start, n1)

    def _build_lam(self, eq_rows):
        nB, nT = self.nB, self.nT
        N = self.N = nB + nT
        self.p_sl = slice(nB, N)
        K = np.zeros((nB, nB))
        for M in (self.P0J, self.PJ):
            if M is not None and M.shape[1]:
                KM = M @ M.T
                K += KM.toarray() if sp.issparse(KM) else KM
        self.K = 0.5 * (K + K.T)
        iu, ju = np.triu_indices(nB)
        pr = np.concatenate([iu, nB + np.arange(nT)])
        pc = np.concatenate([ju, nB + np.arange(nT)])
        pv = np.concatenate([self.K[iu, ju], np.zeros(nT)])
        self.P, ppos = _csc_with_positions(pr, pc, pv, (N, N))
        self.G_pos = ppos[iu.size:]
        R, Cc, V = [], [], []
        R.append(np.arange(nT)); Cc.append(nB + np.arange(nT)); V.append(np.ones(nT))
        var_start = nT
        tt, ii = np.meshgrid(np.arange(nT), np.arange(nB), indexing="ij")
        R.append(tt.ravel()); Cc.append(ii.ravel()); V.append(np.zeros(nT * nB))
        self._finish_constraints(R, Cc, V, nT, eq_rows, N, var_start, nT * nB)
        S = sp.csr_matrix((np.ones(self.J1.size), (np.arange(self.J1.size), self.tl)),
                          shape=(self.J1.size, nT))
        self._S = S

    def _finish_constraints(self, R, Cc, V, row, eq_rows, N, var_start, n_var):
        """Append the task equalities and the box rows to the triplets (R, Cc, V) holding the
        first ``row`` constraint rows, and assemble ``A``; the ``n_var`` entries from
        ``var_start`` on are the ones updated every iteration."""
        nB = self.nB
        for r, c, v in eq_rows:
            R.append(row + r); Cc.append(c); V.append(v)
        row += self.nG
        self.n_eq = row
        R.append(row + np.arange(nB)); Cc.append(np.arange(nB)); V.append(np.ones(nB))
        row += nB
        rows, cols, vals = map(np.concatenate, (R, Cc, V))
        self.A, pos = _csc_with_positions(rows, cols, vals, (row, N))
        self.var_entries = np.arange(var_start, var_start + n_var)
        self.var_pos = pos[self.var_entries]
        self._rows, self._cols, self._vals = rows, cols, vals

    # -- numbers at the current point ----------------------------------------------------------
    def numbers(self, lam, w0, w, s, G):
        """The changing data of the subproblem at the current ``lam`` (full vector).

        Parameters
        ----------
        lam : ndarray of shape (n,)
        w0, w : ndarrays
            ``Phi0^T lam`` and ``Phi^T lam``.
        s, G : ndarrays of shape (D,)
            Switch posteriors and bound curvatures at ``lam``.

        Returns
        -------
        dict with ``q`` (N,), ``l``, ``u`` (rows,), ``G`` (nT,), ``A_var`` (varying
        coefficients), ``x0`` (the current point, for warm starts).
        """
        lamB = lam[self.idx]
        nT = self.nT
        GT = G[self.terms]
        lo_rows = np.zeros(self.n_eq)
        if self.form == "u":
            n0, n1 = self.n0, self.n1
            k0 = w0[self.J0] - (_mul(self.P0JT, lamB) if n0 else 0.0)
            k1 = w[self.J1] - (_mul(self.PJT, lamB) if n1 else 0.0)
            v = w[self.J1]
            sv2 = np.bincount(self.tl, v * v, minlength=nT)
            q = np.concatenate([-self.cB, np.zeros(n0), (s[self.dual.col_term[self.J1]] - 1.0) * v, -GT * sv2])
            lo_rows[:n0] = k0
            lo_rows[n0:n0 + n1] = k1
            A_var = -v
            x0 = np.concatenate([lamB, w0[self.J0], v, sv2])
        else:
            grad_part = np.zeros(self.nB)
            if self.P0B is not None:
                grad_part += _mul(self.P0B, w0)
            if self.PB is not None and self.J1.size:
                grad_part += _mul(self.PB, s[self.dual.col_term] * w)
            qlam = -self.cB + grad_part - self.K @ lamB
            if nT:
                PJ = self.PJ
                Z = (PJ @ sp.diags(w[self.J1])) if sp.issparse(PJ) else PJ * w[self.J1]
                H = Z @ self._S
                H = H.toarray() if sp.issparse(H) else np.asarray(H)
            else:
                H = np.zeros((self.nB, 0))
            hl = H.T @ lamB
            q = np.concatenate([qlam, -GT * hl])
            A_var = -H.T.ravel()
            x0 = np.concatenate([lamB, hl])
        l = np.concatenate([lo_rows, self.loB])
        u = np.concatenate([lo_rows, self.hiB])
        return {"q": q, "l": l, "u": u, "G": GT, "A_var": A_var, "x0": x0}


# ADMM only has to find the active set; polishing then solves the reduced KKT system exactly.
# If polishing fails, the block is re-solved by an interior-point method (OSQPBackend.solve).
_OSQP_DEFAULTS = dict(eps_abs=1e-7, eps_rel=1e-7, eps_prim_inf=1e-12, eps_dual_inf=1e-12,
                      polishing=True, polish_refine_iter=10, max_iter=4000, verbose=False,
                      warm_starting=True)


def is_qp_optimal(Px, q, A, l, u, x, y, eps_abs, eps_rel, AT=None):
    """Whether ``(x, y)`` meets the KKT conditions of ``min 1/2 x^T P x + q^T x`` subject to
    ``l <= A x <= u``, to OSQP's tolerances.

    Primal and dual residuals are measured as OSQP measures them (``eps_abs + eps_rel *`` the
    size of the terms); complementarity as the duality gap ``sum_i y_i^+ (u_i - z_i) +
    y_i^- (z_i - l_i)`` with ``z = clip(A x, l, u)``. The gap is what a polished point with a
    wrongly guessed active set fails: its residuals can be tiny while a multiplier has the
    sign of the bound it is not on.

    Parameters
    ----------
    Px : ndarray of shape (N,)
        ``P @ x``.
    q : ndarray of shape (N,)
    A : sparse matrix of shape (m, N)
    l, u : ndarrays of shape (m,)
    x : ndarray of shape (N,)
    y : ndarray of shape (m,)
        Multipliers in OSQP's convention (``P x + q + A^T y = 0``, ``y_i > 0`` on an upper
        bound, ``< 0`` on a lower one).
    eps_abs, eps_rel : float
    AT : sparse matrix of shape (N, m), optional
        ``A.T`` if already at hand.

    Returns
    -------
    bool

    Examples
    --------
    ``min x^2/2 - x`` on ``[0, 1/2]``: the optimum is the upper bound with ``y = 1/2``; the
    lower bound with ``y = 1`` also zeroes both residuals but has the wrong sign.

    >>> A, l, u, q = sp.csc_matrix([[1.0]]), np.zeros(1), np.full(1, 0.5), -np.ones(1)
    >>> is_qp_optimal(np.array([0.5]), q, A, l, u, np.array([0.5]), np.array([0.5]), 1e-9, 1e-9)
    True
    >>> is_qp_optimal(np.array([0.0]), q, A, l, u, np.array([0.0]), np.array([1.0]), 1e-9, 1e-9)
    False
    """
    Ax = A @ x
    z = np.clip(Ax, l, u)
    Aty = (A.T if AT is None else AT) @ y
    if _inf_norm(Ax - z) > eps_abs + eps_rel * max(_inf_norm(Ax), _inf_norm(z)):
        return False
    if _inf_norm(Px + q + Aty) > eps_abs + eps_rel * max(_inf_norm(Px), _inf_norm(Aty), _inf_norm(q)):
        return False
    with np.errstate(invalid="ignore"):
        gap = np.where(y > 0, y * (u - z), 0.0).sum() - np.where(y < 0, y * (z - l), 0.0).sum()
    return bool(gap <= eps_abs + eps_rel * (abs(x @ Px) + abs(q @ x)))


# OSQP statuses after which the ADMM iterate is still a point worth trying as an inexact step.
_OSQP_USABLE = ("solved", "solved inaccurate", "maximum iterations reached", "run time limit reached")


class OSQPBackend:
    """Solve a :class:`BlockQP` with OSQP's own API: ``setup`` once, then ``update``.

    Every solve is warm-started at the current point ``x0``; OSQP keeps its dual iterate
    from the previous solve (``warm_starting``), so primal and dual variables both start
    where the last outer iteration left them.

    Parameters
    ----------
    qp : BlockQP
    options : dict, optional
        OSQP settings overriding the defaults (``eps_abs = eps_rel = 1e-7`` with polishing;
        a solve whose polishing fails, or that OSQP cannot finish, is redone by Clarabel
        through CVXPY unless ``fallback=False`` is among the options).

    Attributes
    ----------
    total_iter : int
        ADMM iterations over all solves.
    n_fallbacks : int
        Solves redone by Clarabel.
    y : ndarray
        OSQP's multipliers of the last solve (``None`` before the first).
    last_exact : bool
        Whether the last solve returned the subproblem's maximiser to full precision (always
        for a full-precision solve; for a loose one, when its polished point passed
        :meth:`is_optimal`).
    """

    name = "OSQP"

    def __init__(self, qp, options=None):
        import osqp

        self._osqp = osqp
        self.qp = qp
        self.settings = dict(_OSQP_DEFAULTS)
        opts = dict(options or {})
        self.fallback = bool(opts.pop("fallback", True))
        if "polish" in opts:  # the pre-1.0 name of the setting
            opts["polishing"] = opts.pop("polish")
        self.settings.update(opts)
        self._v1 = "polishing" in osqp_polish_setting()
        self.solver = None
        self.total_iter = 0
        self.n_fallbacks = 0
        self.last_exact = True
        self.y = None
        self._fallback = None
        self._mode = None
        self._P = qp.P.copy()
        self._A = qp.A.copy()
        self._AT = self._A.T  # shares its data, so it follows the updates
        # The symmetric P without its G_d entries (diagonal, on p), for the KKT test.
        P0 = qp.P.copy()
        P0.data[qp.G_pos] = 0.0
        self._P_fixed = sp.csr_matrix(P0 + sp.triu(P0, 1).T)

    @property
    def tight_eps(self):
        """The tolerance of a full-precision solve (the larger of ``eps_abs`` and ``eps_rel``)."""
        return max(float(self.settings["eps_abs"]), float(self.settings["eps_rel"]))

    def _mode_settings(self, mode):
        """OSQP settings for ``mode = (eps, polish)``; ``eps = None`` is the full precision."""
        eps, polish = mode
        if eps is None:
            out = {k: self.settings[k] for k in ("eps_abs", "eps_rel", "polishing")}
        else:
            out = {"eps_abs": eps, "eps_rel": eps, "polishing": polish}
        if not self._v1:
            out["polish"] = out.pop("polishing")
        return out

    def is_optimal(self, x, y, nums):
        """Whether ``(x, y)`` solves the subproblem with data ``nums`` to full precision
        (:func:`is_qp_optimal` at the settings' ``eps_abs``, ``eps_rel``)."""
        Px = self._P_fixed @ x
        Px[self.qp.p_sl] += nums["G"] * x[self.qp.p_sl]
        return is_qp_optimal(Px, nums["q"], self._A, nums["l"], nums["u"], x, y,
                             float(self.settings["eps_abs"]), float(self.settings["eps_rel"]),
                             AT=self._AT)

    def solve(self, nums, eps=None, polish=True):
        """Solve the subproblem with the data ``nums`` of :meth:`BlockQP.numbers`.

        Parameters
        ----------
        nums : dict
        eps : float, optional
            Solve by ADMM only to ``eps_abs = eps_rel = eps`` and without the Clarabel
            fallback (an inexact step of Algorithm 1). ``None`` (or anything at or below the
            full tolerance) solves to full precision.
        polish : bool, default=True
            Whether a loose solve is polished; a polished point that passes
            :meth:`is_optimal` makes the solve exact after all (``last_exact``).

        Returns
        -------
        ndarray of shape (qp.N,), or None when a loose solve produced no usable point.
        """
        qp = self.qp
        eps = None if eps is None or eps <= self.tight_eps else float(eps)
        mode = (eps, bool(polish) and eps is not None)
        self._P.data[qp.G_pos] = nums["G"]
        self._A.data[qp.var_pos] = nums["A_var"]
        if self.solver is None:
            self.solver = self._osqp.OSQP()
            settings = dict(self.settings)
            if not self._v1:
                settings["polish"] = settings.pop("polishing")
            settings.update(self._mode_settings(mode))
            try:
                self.solver.setup(self._P.copy(), nums["q"], self._A.copy(), nums["l"], nums["u"], **settings)
            except Exception as exc:  # bad settings or setup failure
                raise RuntimeError(f"OSQP setup failed: {exc}") from exc
        else:
            kw = dict(q=nums["q"], l=nums["l"], u=nums["u"])
            # OSQP crashes on empty index updates, so only pass the parts that exist.
            if qp.G_pos.size:
                kw.update(Px=nums["G"], Px_idx=qp.G_pos)
            if qp.var_pos.size:
                kw.update(Ax=nums["A_var"], Ax_idx=qp.var_pos)
            self.solver.update(**kw)
            if mode != self._mode:
                self.solver.update_settings(**self._mode_settings(mode))
        self._mode = mode
        self.solver.warm_start(x=nums["x0"])
        res = self.solver.solve(raise_error=False) if self._v1 else self.solver.solve()
        self.total_iter += int(res.info.iter)
        status = str(res.info.status)
        x = np.array(res.x, dtype=float)
        self.y = np.array(res.y, dtype=float)
        self.last_exact = True
        if eps is not None:
            if mode[1] and int(res.info.status_polish) == 1 and self.is_optimal(x, self.y, nums):
                return x
            self.last_exact = False
            # the caller checks that the step raises J; anything finite is worth trying
            return x if status in _OSQP_USABLE and np.all(np.isfinite(x)) else None
        unpolished = status == "solved" and self.settings.get("polishing") and int(res.info.status_polish) != 1
        if self.fallback and (unpolished or status != "solved"):
            # ADMM alone is only ~eps accurate and can stall on badly scaled blocks; where
            # polishing cannot pin down the active set an interior-point solve is accurate.
            self.n_fallbacks += 1
            if self._fallback is None:
                self._fallback = CVXPYBackend(qp, "CLARABEL")
            try:
                return self._fallback.solve(nums)
            except RuntimeError:
                if status == "solved":
                    return x
        if status != "solved":
            raise RuntimeError(f"inner QP solver OSQP returned status {status!r} "
                               f"after {res.info.iter} iterations")
        return x


_CVXPY_QP_DEFAULTS = {
    "CLARABEL": dict(tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11, tol_ktratio=1e-9),
    "OSQP": dict(eps_abs=1e-10, eps_rel=1e-10, max_iter=100000, **osqp_polish_setting()),
    "SCS": dict(eps_abs=1e-10, eps_rel=1e-10, max_iters=200000),
    "ECOS": dict(abstol=1e-10, reltol=1e-10, feastol=1e-10),
    "PIQP": dict(eps_abs=1e-10, eps_rel=1e-10),
    "PROXQP": dict(eps_abs=1e-10, eps_rel=0.0),
}


class CVXPYBackend:
    """Solve a :class:`BlockQP` through CVXPY with Parameters, so the problem is built once.

    Every changing quantity enters as a Parameter and the ``G_d``-weighted squares are
    squares of parameter-times-variable expressions, so the problem is DPP and CVXPY
    re-uses its canonicalisation between iterations.

    Parameters
    ----------
    qp : BlockQP
    solver : str
        An installed CVXPY solver name.
    options : dict, optional
    """

    def __init__(self, qp, solver, options=None):
        import cvxpy as cp

        self.cp = cp
        self.qp = qp
        self.name = solver
        self.options = dict(_CVXPY_QP_DEFAULTS.get(solver, {}))
        self.options.update(options or {})
        N, nB, nT = qp.N, qp.nB, qp.nT
        x = self.x = cp.Variable(N)
        self.q = cp.Parameter(N)
        self.sqrtG = cp.Parameter(nT, nonneg=True)
        self.vals = cp.Parameter(qp.var_entries.size)
        self.rhs = cp.Parameter(qp.n_eq)
        obj = self.q @ x
        if nT:
            obj = obj + 0.5 * cp.sum_squares(cp.multiply(self.sqrtG, x[qp.p_sl]))
        if qp.form == "u":
            if qp.n0 + qp.n1:
                obj = obj + 0.5 * cp.sum_squares(x[nB:nB + qp.n0 + qp.n1])
        elif nB:
            obj = obj + 0.5 * cp.quad_form(x[:nB], cp.psd_wrap(qp.K))
        rows, cols, vals = qp._rows, qp._cols, qp._vals
        fixed = np.ones(rows.size, dtype=bool)
        fixed[qp.var_entries] = False
        fixed &= rows < qp.n_eq
        A_fix = sp.csr_matrix((vals[fixed], (rows[fixed], cols[fixed])), shape=(qp.n_eq, N))
        vr, vc = rows[qp.var_entries], cols[qp.var_entries]
        S = sp.csr_matrix((np.ones(vr.size), (vr, np.arange(vr.size))), shape=(qp.n_eq, vr.size))
        lhs = A_fix @ x
        if vr.size:
            lhs = lhs + S @ cp.multiply(self.vals, x[vc])
        cons = [lhs == self.rhs, x[:nB] >= qp.loB, x[:nB] <= qp.hiB]
        self.problem = cp.Problem(cp.Minimize(obj), cons)
        self.total_iter = 0

    last_exact = True  # through CVXPY every inner QP is solved to the options' precision

    def solve(self, nums, eps=None, polish=True):
        """Solve to the options' precision; ``eps`` and ``polish`` are accepted for a common
        interface with :class:`OSQPBackend` and ignored."""
        cp = self.cp
        self.q.value = nums["q"]
        self.sqrtG.value = np.sqrt(np.maximum(nums["G"], 0.0))
        self.vals.value = nums["A_var"]
        self.rhs.value = nums["l"][: self.qp.n_eq]
        self.x.value = nums["x0"]
        try:
            with warnings.catch_warnings():
                # an inaccurate answer is judged by the caller, which checks that J rises
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                self.problem.solve(solver=self.name, warm_start=True, **self.options)
        except cp.error.SolverError as exc:
            raise RuntimeError(f"inner QP solver {self.name} failed: {exc}") from exc
        status = self.problem.status
        if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or self.x.value is None:
            raise RuntimeError(f"inner QP solver {self.name} returned status {status!r}")
        stats = self.problem.solver_stats
        if stats is not None and stats.num_iters is not None:
            self.total_iter += int(stats.num_iters)
        return np.asarray(self.x.value, dtype=float)
