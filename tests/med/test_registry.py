"""The one calling contract (medmtl.med.solvers.registry): ``solve``, the registry of
methods, the ``"auto"`` policy, and the checks ``solve`` makes for every method, registered
ones included (inner solver, options, starting point, the answer, one warning per event)."""

import warnings

import numpy as np
import scipy.sparse as sp
import pytest
from sklearn.exceptions import ConvergenceWarning

from medmtl.kernels import RBFKernel
from medmtl.med import MEDClassifier
from medmtl.med.builders import svm_dual
from medmtl.med.solvers import (
    METHODS,
    MEDSolution,
    Method,
    Option,
    choose_method,
    get_method,
    max_iter_option,
    register_method,
    solve,
    tol_option,
    unregister_method,
)
from med_testdata import cached_duals, make_tasks, model_dual, reference_solution


class Recorder(Method):
    """Returns a fixed answer (the direct solve's unless ``answer`` is set) and records what
    it was handed."""

    name = "test-recorder"
    options = (max_iter_option(7), tol_option(0.0, "unused"),
               Option("scale", 1.0, [float], "multiplies the answer"))

    def __init__(self, answer=None):
        self.answer = answer
        self.calls = []

    def solve(self, dual, solver, options, init):
        self.calls.append((solver, options, init))
        if self.answer is not None:
            return self.answer(dual)
        ref = get_method("direct")
        sol = ref.solve(dual, ref.default_solver, ref.check_options({}), None)
        sol.lam = sol.lam * options["scale"]
        sol.method = ""
        return sol


@pytest.fixture
def registered():
    """Register a method for one test, and remove it afterwards."""
    added = []

    def add(method):
        added.append(register_method(method).name)
        return method

    yield add
    for name in added:
        unregister_method(name)


def _answer(lam, objective=1.0, status="converged"):
    def make(dual):
        return MEDSolution(lam=lam(dual), intercepts=np.zeros(len(dual.groups)), objective=objective,
                           objective_path=np.array([0.0, objective]), n_iter=1, status=status,
                           switch_posterior=np.ones(dual.n_terms), method="test-recorder")
    return make


def test_new_methods_plug_into_the_registry(registered):
    method = registered(Recorder())
    dual = cached_duals()["svm"]
    sol = solve(dual, "test-recorder")
    assert METHODS["test-recorder"] is method and sol.method == "test-recorder"
    assert method.calls == [(None, {"max_iter": 7, "tol": 0.0, "scale": 1.0}, None)]
    assert sol.objective == pytest.approx(solve(dual, "direct").objective, rel=1e-12)
    # and every estimator runs it by name, with its max_iter, tol and solver_options
    Xs, ys = make_tasks(M=1, T=20, D=3, seed=1)
    MEDClassifier(method="test-recorder", solver_options={"scale": 1.0}, max_iter=3).fit(Xs[0], ys[0])
    assert method.calls[-1][1]["max_iter"] == 3 and method.calls[-1][1]["scale"] == 1.0


def test_registration_checks_the_method():
    with pytest.raises(TypeError, match="Method"):
        register_method(lambda dual: None)
    with pytest.raises(TypeError, match="abstract"):
        type("NoSolve", (Method,), {"name": "x", "options": Recorder.options})()

    def make(**attrs):
        return type("Bad", (Recorder,), attrs)()

    with pytest.raises(ValueError, match="non-empty"):
        register_method(make(name=""))
    with pytest.raises(ValueError, match=r"lacks \['tol'\]"):
        register_method(make(options=(max_iter_option(5),)))
    with pytest.raises(ValueError, match="twice"):
        register_method(make(options=Recorder.options + (max_iter_option(5),)))
    with pytest.raises(ValueError, match="step"):
        register_method(make(options=Recorder.options + (Option("step", -1.0, [None]),)))
    with pytest.raises(ValueError, match="registered already"):
        register_method(make(name="newton"))
    with pytest.raises(ValueError, match="built-in"):
        unregister_method("newton")
    assert "test-recorder" not in METHODS
    with pytest.raises(TypeError):
        METHODS["x"] = Recorder()  # read-only: registration goes through register_method


def test_unknown_methods_solvers_and_options_are_named():
    dual = cached_duals()["single_fs"]
    with pytest.raises(ValueError, match="unknown method 'newton-nonexistent'; available"):
        solve(dual, "newton-nonexistent")
    with pytest.raises(ValueError, match="unknown method"):
        get_method("magic")
    with pytest.raises(ValueError, match="not installed"):
        solve(dual, "bound", solver="GUROBI_DOES_NOT_EXIST")
    with pytest.raises(ValueError, match="valid options: .*inexact"):
        solve(dual, "bound", options={"inexcat": False})
    with pytest.raises(ValueError, match="no inner solver"):
        Recorder().check_solver("CLARABEL")


def test_the_inner_solver_is_named_the_same_way_for_every_method():
    dual = cached_duals()["single_fs"]
    assert solve(dual, "newton", solver="SMO").solver == "SMO"
    assert solve(dual, "bound", solver="clarabel").solver == "CLARABEL"
    assert solve(dual, "direct", solver="clarabel").solver == "CLARABEL"
    with pytest.raises(ValueError, match="SMO"):
        solve(dual, "newton", solver="CLARABEL")


def test_the_starting_point_is_checked_and_projected_for_every_method(registered):
    method = registered(Recorder())
    dual = cached_duals()["single_fs"]
    start = np.full(dual.n, 5.0)
    solve(dual, "test-recorder", init=start)
    handed = method.calls[-1][2]
    np.testing.assert_array_equal(handed, dual.project(start))
    assert handed is not start and np.all(start == 5.0)
    for name in ("test-recorder", "bound", "direct", "newton", "auto"):
        with pytest.raises(ValueError, match=r"init must have shape"):
            solve(dual, name, init=np.zeros((dual.n, 1)))
        with pytest.raises(ValueError, match="NaN"):
            solve(dual, name, init=np.full(dual.n, np.inf))


@pytest.mark.parametrize("answer, message", [
    (_answer(lambda d: np.full(d.n, np.nan)), "NaN or infinite"),
    (_answer(lambda d: np.zeros(d.n + 1)), "shape"),
    (_answer(lambda d: np.zeros(d.n), objective=np.inf), "objective"),
    (_answer(lambda d: np.full(d.n, 2 * d.hi.max())), "outside the box"),
    (_answer(lambda d: np.where(d.a > 0, d.hi, 0.0)), "group equalities"),
])
def test_an_infeasible_or_non_finite_answer_is_an_error(registered, answer, message):
    registered(Recorder(answer))
    with pytest.raises(RuntimeError, match=message):
        solve(cached_duals()["single_fs"], "test-recorder")


@pytest.mark.parametrize("factor, accepted", [(1.0, True), (1e3, False)])
def test_a_rounding_residue_of_the_equalities_is_accepted(registered, factor, accepted):
    # one multiplier of a group left at eps * C by rounding: its equality is off by that much,
    # which is no infeasibility (heart-pooling's full run stopped on such a 2.2e-16); a
    # thousand times that is an infeasible answer again
    def residue(dual):
        lam = np.zeros(dual.n)
        lam[np.flatnonzero(dual.a > 0)[0]] = factor * np.finfo(float).eps * dual.hi.max()
        return lam

    registered(Recorder(_answer(residue)))
    dual = cached_duals()["single_fs"]
    if accepted:
        assert solve(dual, "test-recorder").method == "test-recorder"
    else:
        with pytest.raises(RuntimeError, match="group equalities"):
            solve(dual, "test-recorder")


@pytest.mark.parametrize("status, expected", [("converged", None), ("optimal", None),
                                              ("max_iter", "stopped at max_iter=7"),
                                              ("stalled", "stalled"),
                                              ("diverged", "status 'diverged'")])
def test_a_status_gives_at_most_one_warning(registered, status, expected):
    registered(Recorder(_answer(lambda d: np.zeros(d.n), status=status)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = solve(cached_duals()["single_fs"], "test-recorder")
    assert sol.status == status
    if expected is None:
        assert caught == []
    else:
        assert [w.category for w in caught] == [ConvergenceWarning]
        assert expected in str(caught[0].message)


def test_every_method_reports_an_iteration_limit_by_one_warning():
    dual = model_dual("fs_multi", alpha=300.0)
    for name in ("newton", "bound", "auto"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sol = solve(dual, name, options={"max_iter": 1})
        assert sol.status == "max_iter"
        assert [w.category for w in caught] == [ConvergenceWarning]


# ---------------------------------------------------------------------------------------
# The "auto" policy
# ---------------------------------------------------------------------------------------
def test_auto_picks_a_correct_solver():
    for kind in ("fs_multi", "svm_linear"):
        dual = model_dual(kind)
        sol = solve(dual, "auto", solver="OSQP")  # another method's solver name is not used
        assert sol.method == "newton"
        assert sol.objective == pytest.approx(reference_solution(dual).objective, rel=1e-6)
    # a long linear SVM goes to the coordinate method in feature space
    Xs, ys = make_tasks(1, 2000, 3, seed=9, noise=1.0)
    dual = svm_dual(Xs, ys, "linear", C=1.0)
    assert choose_method(dual) == "cd"
    sol = solve(dual, "auto", options={"max_iter": 1000, "tol": 1e-12})
    assert sol.method == "cd"
    assert sol.objective == pytest.approx(solve(dual, "newton").objective, rel=1e-6)
    # so does a shorter one with sparse factors; a small dense one stays with Newton
    X = sp.random(400, 50, density=0.05, random_state=3, format="csr")
    y = np.where(np.arange(400) % 2, 1, -1)
    assert choose_method(svm_dual([X], [y], "linear")) == "cd"
    assert choose_method(svm_dual([X.toarray()], [y], "linear")) == "newton"
    # from 1,000 dense rows, the coordinate method when the columns are at most half as many
    rng = np.random.default_rng(4)
    y = np.where(np.arange(1200) % 2, 1, -1)
    assert choose_method(svm_dual([rng.normal(size=(1200, 600))], [y], "linear")) == "cd"
    assert choose_method(svm_dual([rng.normal(size=(1200, 601))], [y], "linear")) == "newton"
    assert choose_method(svm_dual([rng.normal(size=(999, 20))], [y[:999]], "linear")) == "newton"
    # an option only Newton has, set away from its default, keeps Newton
    assert choose_method(dual, {"cache_size": 64.0}) == "newton"
    assert solve(dual, "auto", options={"cache_size": 64.0}).method == "newton"
    # options both methods have go to the one chosen
    assert solve(dual, "auto", options={"shrinking": False}).method == "cd"
    with pytest.raises(ValueError, match="installed CVXPY solvers"):
        solve(dual, "auto", solver="NO_SUCH_SOLVER")


def test_auto_checks_the_options_once(monkeypatch):
    """plan() checks auto's options; the method it chooses gets them without a second check,
    max_iter None standing for the chosen method's own limit."""
    dual = model_dual("fs_multi")
    seen = []
    newton = get_method("newton")
    monkeypatch.setattr(newton, "check_options", lambda options: pytest.fail("checked twice"))
    monkeypatch.setattr(newton, "solve", lambda d, s, options, i: seen.append(options))
    with pytest.raises(Exception):  # the stub returns no solution
        solve(dual, "auto", options={"kkt_tol": 1e-8})
    defaults = {opt.name: opt.default for opt in newton.options}
    assert seen[0] == {**defaults, "kkt_tol": 1e-8}


def test_auto_and_the_factor_methods_on_a_kernel_dual():
    Xs, ys = make_tasks(M=1, T=30, D=3, seed=7)
    dual = svm_dual(Xs, ys, RBFKernel(0.5), C=1.0)
    auto = solve(dual)
    assert auto.method == "newton" and auto.info["model"] == "KernelModel"
    assert dual.workspace.shared_factor is None
    # Algorithm 1 and the direct solve build the factor on first use, and agree
    for method in ("bound", "direct"):
        other = solve(dual, method=method)
        assert other.objective == pytest.approx(auto.objective, rel=1e-6)
    assert dual.workspace.shared_factor is not None
