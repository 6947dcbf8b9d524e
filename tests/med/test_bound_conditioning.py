"""``method="bound"`` on inner QPs too badly conditioned for Clarabel's default settings.

Kernel selection on breast cancer with every standardised column rescaled by a factor from
1e-4 to 1e4 gives a block Hessian ``K_B`` whose diagonal spans four orders of magnitude and
whose eigenvalues span ten or more. Late in the run OSQP's polishing fails on it, and
Clarabel at its default static regularisation (1e-8) stops with "InsufficientProgress":
``bound`` raised "inner QP solver CLARABEL failed". It now moves on to Clarabel with a
smaller regularisation and reaches the optimum; where no rung is left, the error says what
failed and what to do.
"""

import warnings

import numpy as np
import own_data_cases as cases
import pytest

import medmtl.med.solvers.qp as qpmod
from medmtl.med.builders import svm_dual
from medmtl.med.solvers import solve
from sklearn.exceptions import ConvergenceWarning


def _rescaled_breast_cancer_kernels(rows=150, seed=0):
    """The full-size case's rescaled columns, ``rows`` rows of them: a draw on which the
    default Clarabel settings fail (as on all 569 rows)."""
    X, y = cases._load("breast_cancer")
    rng = np.random.default_rng([ord(ch) for ch in "breast_cancer/rescaled"])
    X, y, C = cases._transform(X, y, "rescaled", rng, False)
    keep = cases._balanced_rows(y, rows, np.random.default_rng(seed), False)
    return cases._build("kernels", X[keep], y[keep], C, [np.arange(rows)], 10.0)


@pytest.mark.slow
def test_a_block_clarabel_cannot_solve_at_its_defaults_is_solved_a_rung_up():
    dual = _rescaled_breast_cancer_kernels()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reference = solve(dual, "ssnal")
        sol = solve(dual, "bound")
    # ssnal's duality gap certifies its J; bound must reach it
    assert reference.info["duality_gap"] <= 1e-9 * reference.objective
    assert sol.status == "converged"
    assert sol.objective == pytest.approx(reference.objective, rel=1e-6)
    assert sol.info["inner_solver_switched"] == "CLARABEL"
    assert sol.info["inner_solver_settings"] == {"static_regularization_constant": 1e-12}
    assert np.all(np.diff(sol.objective_path) >= 0)


def _failing_clarabel(monkeypatch):
    """Make every Clarabel solve fail as it does on that block; return the settings tried."""
    tried = []

    def fail(self, nums, eps=None, polish=True):
        tried.append(dict(self.options))
        raise RuntimeError(f"inner QP solver {self.name} failed: Solver 'CLARABEL' failed.")

    monkeypatch.setattr(qpmod.CVXPYBackend, "solve", fail)
    return tried


def _small_dual():
    X = np.array([[1.0, 1e3], [0.9, -2e3], [-1.0, 1e3], [-1.1, -1e3]])
    return svm_dual([X], [np.array([1, 1, -1, -1])], C=1.0)


def test_when_no_inner_solver_can_take_a_step_the_error_says_what_to_do(monkeypatch):
    tried = _failing_clarabel(monkeypatch)
    with pytest.raises(RuntimeError) as err:
        solve(_small_dual(), "bound", solver="CLARABEL")
    message = str(err.value)
    for part in ("could not take a step", "CLARABEL failed", "Hessian spans", "StandardScaler",
                 "method='ssnal'", "method='newton'"):
        assert part in message, part
    # the caller's plain CLARABEL, then the smaller regularisation: two rungs, then the error
    assert [t.get("static_regularization_constant") for t in tried] == [None, 1e-12]


def test_settings_the_caller_gave_are_not_replaced(monkeypatch):
    tried = _failing_clarabel(monkeypatch)
    with pytest.raises(RuntimeError, match="could not take a step"):
        solve(_small_dual(), "bound", solver="CLARABEL", options={"solver_settings": {"max_iter": 50}})
    assert len(tried) == 1 and tried[0]["max_iter"] == 50


def _stalling_after_one_sweep(monkeypatch):
    """Make every sweep after the first return half its start (feasible, lower ``J``): the
    inner solves of a block no solver resolves. Returns the list of the sweeps' starts."""
    import medmtl.med.solvers.bound as alg1

    sweep, starts = alg1._sweep, []

    def stalling(dual, qps, backends, block_ids, lam, eps):
        starts.append(lam.copy())
        if len(starts) == 1:
            return sweep(dual, qps, backends, block_ids, lam, eps)
        return 0.5 * lam, True

    monkeypatch.setattr(alg1, "_sweep", stalling)
    return starts


def _raw_breast_cancer_features(rows=80):
    X, y = cases._load("breast_cancer")
    keep = cases._balanced_rows(y, rows, np.random.default_rng(1), False)
    return cases._build("mt_features", X[keep], y[keep], 1.0,
                        [np.arange(0, rows, 2), np.arange(1, rows, 2)], 10.0)


def test_a_stalled_run_finishes_with_newton_from_its_last_point(monkeypatch):
    dual = _raw_breast_cancer_features()
    reference = solve(dual, "direct")
    starts = _stalling_after_one_sweep(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = solve(dual, "bound")
    handover = sol.info["handover"]
    assert handover["to"] == "newton" and handover["because"] == "stalled"
    assert sol.status == handover["status"] and sol.status in ("converged", "rounding")
    assert sol.objective == pytest.approx(reference.objective, rel=1e-6)
    # Newton started where the stalled run stopped: after its one real sweep
    assert sol.objective_path[-2] == pytest.approx(dual.objective(starts[1]), rel=1e-15)
    assert sol.objective_path[-1] == sol.objective


def test_without_the_handover_a_stalled_run_says_how_far_it_may_be(monkeypatch):
    dual = _raw_breast_cancer_features()
    _stalling_after_one_sweep(monkeypatch)
    with pytest.warns(ConvergenceWarning, match="stalled after") as caught:
        sol = solve(dual, "bound", options={"handover": False})
    assert len(caught) == 1
    assert sol.status == "stalled" and "handover" not in sol.info
