"""Bad and odd inputs for every public learner, and the one check of how each case ends.

A *set-up* (:class:`Setup`) is a configured learner and the form of data it takes. A *case*
is a small well-formed problem in that form, passed through one *perturbation*: a change
of representation that must not change the answer (dtypes, sparse layouts with duplicate
entries or unsorted indices, string labels), a change of scale, or an input that is wrong
(NaN, infinity, a NaN label, one class, ragged or 3-D arrays, text, complex numbers, the
wrong number of features at prediction, tasks that do not match). :func:`run_case` fits and
predicts and says how the case ended:

* ``"error"``: a clear error, raised by medmtl (or scikit-learn's input validation) with a
  message;
* ``"correct"``: finite results, equal to those of the case's *oracle* (the same problem in
  plain form) when the perturbation must not change them; the caller's arrays unchanged;
  the fitted learner pickles and predicts the same after the round trip; a second fit gives
  the same results; changing the training arrays afterwards changes nothing;
* :class:`SilentWrong` or :class:`ObscureCrash` (raised) otherwise.

Learners of other families add set-ups (and forms) here; the perturbations and
:func:`run_case` are shared.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import traceback
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

from medmtl.med import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
)
from medmtl.nmtf import MTS3FLC, S3FLC, PooledLogisticRegression, SingleTaskLogisticRegression

# ---------------------------------------------------------------------------------------------
# Set-ups


@dataclass(frozen=True)
class Setup:
    """A learner and the form of data it takes.

    form : "single" (``fit(X, y)``), "stacked" (``fit(X, y, tasks=...)``), "lists"
        (``fit(Xs, ys)``), "gram" (``fit(K, y)`` with a precomputed kernel), "nmtf"
        (``fit(Xs_labeled, ys, Xs_unlabeled)``, nonnegative documents) or "nmtf_lists"
        (``fit(Xs, ys)`` on documents).
    target : "binary" or "real".
    row_scale_invariant : the answer does not change when rows are rescaled (document models).
    accepts : perturbations that are errors for most learners but valid for this one (a
        pooled model has no use for task counts; NMTF learners take any number of classes).
    """

    name: str
    make: object
    form: str
    target: str = "binary"
    row_scale_invariant: bool = False
    accepts: frozenset = frozenset()

    def __repr__(self):
        return self.name


def _nmtf(cls, **kw):
    return lambda: cls(n_topics=3, max_iter=4, plsa_max_iter=4, fold_in_max_iter=6, random_state=0, **kw)


_MULTI = [
    ("features", lambda: MultiTaskMEDClassifier(alpha=1.0), "binary"),
    ("svm-rbf", lambda: MultiTaskMEDClassifier(selection=None, kernel="rbf"), "binary"),
    ("kernels", lambda: MultiTaskMEDClassifier(selection="kernels", kernels=["rbf", "linear"], alpha=1.0), "binary"),
    ("regressor", lambda: MultiTaskMEDRegressor(alpha=1.0), "real"),
    ("pooling", lambda: AdaptivePoolingClassifier(alpha=1.0), "binary"),
    ("pooling-rbf", lambda: AdaptivePoolingClassifier(kernel="rbf", alpha=1.0), "binary"),
]

SETUPS = [
    Setup("MEDClassifier-linear", MEDClassifier, "single"),
    Setup("MEDClassifier-rbf", lambda: MEDClassifier(kernel="rbf"), "single"),
    Setup("MEDClassifier-poly", lambda: MEDClassifier(kernel="poly", degree=2, coef0=1.0), "single"),
    Setup("MEDClassifier-features", lambda: MEDClassifier(selection="features", alpha=1.0), "single"),
    Setup("MEDClassifier-kernels", lambda: MEDClassifier(selection="kernels", kernels=["rbf", "linear"], alpha=1.0),
          "single"),
    Setup("MEDClassifier-precomputed", lambda: MEDClassifier(kernel="precomputed"), "gram"),
    Setup("MEDRegressor-linear", MEDRegressor, "single", "real"),
    Setup("MEDRegressor-rbf", lambda: MEDRegressor(kernel="rbf"), "single", "real"),
    Setup("MEDRegressor-features", lambda: MEDRegressor(selection="features", alpha=1.0), "single", "real"),
    *[Setup(f"{make().__class__.__name__}-{name}-{form}", make, form, target)
      for name, make, target in _MULTI for form in ("stacked", "lists")],
    Setup("MTS3FLC", _nmtf(MTS3FLC, n_shared_topics=1), "nmtf", row_scale_invariant=True,
          accepts=frozenset({"three_classes", "one_class", "rows:one_row"})),
    Setup("S3FLC", _nmtf(S3FLC), "nmtf", row_scale_invariant=True, accepts=frozenset({"three_classes"})),
    Setup("SingleTaskLogisticRegression", SingleTaskLogisticRegression, "nmtf_lists", row_scale_invariant=True,
          accepts=frozenset({"three_classes"})),
    Setup("PooledLogisticRegression", PooledLogisticRegression, "nmtf_lists", row_scale_invariant=True,
          accepts=frozenset({"three_classes", "one_class", "rows:one_row", "empty_task", "task_count:Qs"})),
]

# ---------------------------------------------------------------------------------------------
# Problems and calls


@dataclass
class Call:
    """What a learner is given: training matrices and targets, then query matrices.

    For the forms with one ``X`` ("single", "stacked", "gram") the lists hold one entry;
    for the others one per task. ``tasks`` / ``query_tasks`` are the stacked form's.
    """

    form: str
    Xs: list
    ys: list
    Qs: list
    tasks: object = None
    query_tasks: object = None
    extra: dict = field(default_factory=dict)


def base_problem(setup, seed, n_tasks, n_rows, n_features):
    """A small well-formed problem for ``setup``: per-task lists ``Xs``, ``ys``, ``Qs``."""
    rng = np.random.default_rng(seed)
    documents = setup.form.startswith("nmtf")
    n_tasks = 1 if setup.form in ("single", "gram") else n_tasks
    Xs, ys, Qs = [], [], []
    for m in range(n_tasks):
        X = rng.normal(size=(n_rows, n_features))
        Q = rng.normal(size=(max(3, n_rows // 2), n_features))
        w = rng.normal(size=n_features) + 0.5
        if setup.target == "real":
            y = X @ w + 0.1 * rng.normal(size=n_rows)
        else:
            score = X @ w
            y = np.where(score > np.median(score), 1, -1)
        if documents:
            X, Q = np.abs(X) * (rng.random(X.shape) < 0.7), np.abs(Q)
            X[:, 0] += (y > 0)  # one word per class, so that every task has both in use
            X[:, 1] += (y < 0)
        Xs.append(X)
        ys.append(y)
        Qs.append(Q)
    return Xs, ys, Qs


def make_call(setup, Xs, ys, Qs):
    """The call of ``setup``'s form on per-task lists."""
    if setup.form in ("lists", "nmtf", "nmtf_lists"):
        return Call(setup.form, list(Xs), list(ys), list(Qs))
    if setup.form == "gram":
        gamma = 1.0 / Xs[0].shape[1]
        sq = lambda A, B: ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)  # noqa: E731
        return Call("gram", [np.exp(-gamma * sq(Xs[0], Xs[0]))], list(ys), [np.exp(-gamma * sq(Qs[0], Xs[0]))])
    tasks = np.repeat(np.arange(len(Xs)), [len(X) for X in Xs])
    query_tasks = np.repeat(np.arange(len(Qs)), [len(Q) for Q in Qs])
    if setup.form == "single":
        return Call("single", [Xs[0]], [ys[0]], [Qs[0]])
    return Call("stacked", [np.vstack(Xs)], [np.concatenate(ys)], [np.vstack(Qs)], tasks, query_tasks)


def run(est, call):
    """Fit ``est`` on ``call`` and return its results on the queries (concatenated arrays)."""
    one = call.form in ("single", "stacked", "gram")
    kw = {} if call.tasks is None else {"tasks": call.tasks}
    qkw = {} if call.query_tasks is None else {"tasks": call.query_tasks}
    if call.form == "nmtf":
        est.fit(call.Xs, call.ys, call.Qs)
        results = {"transduction": np.concatenate(est.transduction_), "predict": np.concatenate(est.predict(call.Qs)),
                   "memberships": np.hstack(est.memberships_)}
    elif one:
        est.fit(call.Xs[0], call.ys[0], **kw)
        results = {"predict": np.asarray(est.predict(call.Qs[0], **qkw))}
        if hasattr(est, "decision_function"):
            results["decision"] = np.asarray(est.decision_function(call.Qs[0], **qkw))
    else:
        est.fit(call.Xs, call.ys)
        results = {"predict": np.concatenate(est.predict(call.Qs))}
        if hasattr(est, "decision_function"):
            results["decision"] = np.concatenate(est.decision_function(call.Qs))
    return results


# ---------------------------------------------------------------------------------------------
# Perturbations: each maps a call to (call, expectation, oracle)
#   expectation: "same" - must succeed with the oracle's answer (the oracle: the call before)
#                "error" - must end in a clear error
#                "finite" - a clear error or a finite answer
#                "scaled" - a clear error or a finite answer; the oracle's for row-scale-invariant learners


def _matrices(call):
    return [("Xs", i) for i in range(len(call.Xs))] + [("Qs", i) for i in range(len(call.Qs))]


def _map(call, f, which=("Xs", "Qs")):
    out = replace(call)
    for name in which:
        setattr(out, name, [f(A) for A in getattr(call, name)])
    return out


def _set(call, name, i, value):
    out = replace(call)
    items = list(getattr(call, name))
    items[i] = value
    setattr(out, name, items)
    return out


def _duplicated(A, rng):
    """CSR with every stored entry split in two (same matrix), rows' entries in random order."""
    A = sp.csr_matrix(A)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    part = rng.uniform(0.2, 0.8, size=A.nnz)
    r = np.concatenate([rows, rows])
    c = np.concatenate([A.indices, A.indices])
    d = np.concatenate([A.data * part, A.data * (1 - part)])
    order = np.lexsort((rng.random(r.size), r))  # by row, entries of a row shuffled
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=A.shape[0]))])
    return sp.csr_matrix((d[order], c[order], indptr), shape=A.shape)


def _unsorted(A, rng):
    A = sp.csr_matrix(A, copy=True)
    for i in range(A.shape[0]):
        a, b = A.indptr[i], A.indptr[i + 1]
        perm = a + rng.permutation(b - a)
        A.indices[a:b], A.data[a:b] = A.indices[perm], A.data[perm]
    A.has_sorted_indices = False
    return A


def _explicit_zeros(A, rng):
    """CSR of the same matrix with a zero stored explicitly where the matrix is zero."""
    B = sp.csr_matrix(A, copy=True)
    zeros = np.argwhere(B.toarray() == 0)
    if len(zeros):
        i, j = zeros[rng.integers(len(zeros))]
        rows = np.repeat(np.arange(B.shape[0]), np.diff(B.indptr))
        B = sp.csr_matrix((np.r_[B.data, 0.0], (np.r_[rows, i], np.r_[B.indices, j])), shape=B.shape)
        B = sp.csr_matrix((B.data, B.indices, B.indptr), shape=B.shape)  # keeps the stored zero
    return B


def _canonical_csr(A):
    A = sp.csr_matrix(A, copy=True)
    A.sum_duplicates()
    return A


SPARSE_LAYOUTS = {
    "csr": lambda A, rng: sp.csr_matrix(A),
    "csc": lambda A, rng: sp.csc_matrix(A),
    "coo": lambda A, rng: sp.coo_matrix(A),
    "csr_array": lambda A, rng: sp.csr_array(A),
    "duplicates": _duplicated,
    "unsorted": _unsorted,
    "explicit_zeros": _explicit_zeros,
}


@st.composite
def perturbations(draw, setup, call):
    """One perturbation of ``call`` for ``setup``: ``(name, call, expectation, oracle)``."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    documents = setup.form.startswith("nmtf")
    labels = setup.target == "binary" or documents
    menu = ["none", "sparse", "dtype", "scale", "nonfinite", "text", "complex", "ndim", "features", "rows",
            "constant", "duplicate_rows"]
    if labels:
        menu += ["label_nan", "label_none", "label_strings", "one_class", "three_classes"]
    else:
        menu += ["target_nan", "target_huge"]
    if setup.form in ("lists", "nmtf", "nmtf_lists"):
        menu += ["ragged", "empty_task", "task_count"]
    if setup.form == "stacked":
        menu += ["tasks_nan", "tasks_unknown", "tasks_length", "tasks_strings"]
    if setup.form != "gram":
        menu += ["tuple_of_lists"]
    kind = draw(st.sampled_from(menu))
    name = kind
    if kind == "none":
        return name, call, "same", call
    if kind == "sparse":
        layout = draw(st.sampled_from(sorted(SPARSE_LAYOUTS)))
        perturbed = _map(call, lambda A: SPARSE_LAYOUTS[layout](A, rng))
        # the canonical CSR matrix equal to each perturbed one (split entries summed exactly
        # as scipy sums them, so the answer must be the same to the last bit)
        return f"sparse:{layout}", perturbed, "same", _map(perturbed, _canonical_csr)
    if kind == "dtype":
        dtype = draw(st.sampled_from(["float32", "int64", "int8", "bool", "object", "uint8"]))
        if documents:
            converted = _map(call, lambda A: np.abs(A).astype(dtype))
        else:
            converted = _map(call, lambda A: A.astype(dtype))
        if dtype == "bool" and setup.form == "gram":
            return f"dtype:{dtype}", converted, "finite", None
        oracle = _map(converted, lambda A: np.asarray(A, dtype=np.float64))
        expect = "same" if dtype != "bool" or setup.target == "binary" else "finite"
        return f"dtype:{dtype}", converted, expect, oracle
    if kind == "scale":
        s = draw(st.sampled_from([1e-300, 1e-200, 1e-160, 1e-20, 1e20, 1e160, 1e200, 1e300]))
        where = draw(st.sampled_from(["both", "train", "query"]))
        which = {"both": ("Xs", "Qs"), "train": ("Xs",), "query": ("Qs",)}[where]
        scaled = _map(call, lambda A: A * s, which)
        return f"scale:{s:g}:{where}", scaled, "scaled", call
    if kind == "nonfinite":
        value = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        name_, i = draw(st.sampled_from(_matrices(call)))
        A = np.array(getattr(call, name_)[i], dtype=float)
        A[rng.integers(A.shape[0]), rng.integers(A.shape[1])] = value
        as_sparse = draw(st.booleans())
        return f"nonfinite:{value}:{name_}", _set(call, name_, i, sp.csr_matrix(A) if as_sparse else A), "error", None
    if kind == "text":
        name_, i = draw(st.sampled_from(_matrices(call)))
        A = np.asarray(getattr(call, name_)[i]).astype(object)
        A[0, 0] = draw(st.sampled_from(["a", "", "1,5", None, b"x"]))
        return f"text:{name_}", _set(call, name_, i, A), "error", None
    if kind == "complex":
        name_, i = draw(st.sampled_from(_matrices(call)))
        A = np.asarray(getattr(call, name_)[i]) + 0j
        return f"complex:{name_}", _set(call, name_, i, A), "error", None
    if kind == "ndim":
        name_, i = draw(st.sampled_from(_matrices(call)))
        A = np.asarray(getattr(call, name_)[i])
        bad = draw(st.sampled_from(["1d", "3d", "0d"]))
        A = {"1d": A[:, 0], "3d": A[:, :, None], "0d": np.float64(1.0)}[bad]
        return f"ndim:{bad}:{name_}", _set(call, name_, i, A), "error", None
    if kind == "features":
        name_, i = draw(st.sampled_from(_matrices(call)))
        A = np.asarray(getattr(call, name_)[i])
        A = draw(st.sampled_from([A[:, :-1], np.hstack([A, A[:, :1]]), A[:, :0]]))
        return f"features:{A.shape[1]}:{name_}", _set(call, name_, i, A), "error", None
    if kind == "rows":
        i = draw(st.integers(0, len(call.Xs) - 1))
        what = draw(st.sampled_from(["labels_short", "no_rows", "one_row"]))
        if what == "labels_short":
            return "rows:labels_short", _set(call, "ys", i, np.asarray(call.ys[i])[:-1]), "error", None
        A, y = np.asarray(call.Xs[i]), np.asarray(call.ys[i])
        k = 0 if what == "no_rows" else 1
        out = _set(_set(call, "Xs", i, A[:k]), "ys", i, y[:k])
        if call.tasks is not None:
            out.tasks = call.tasks[:k]
        return f"rows:{what}", out, "error" if labels or k == 0 else "finite", None  # one label is one class
    if kind == "constant":
        name_, i = draw(st.sampled_from(_matrices(call)))
        A = np.array(getattr(call, name_)[i], dtype=float)
        A[:, rng.integers(A.shape[1])] = A[0, 0]
        return "constant_column", _set(call, name_, i, A), "finite", None
    if kind == "duplicate_rows":
        i = draw(st.integers(0, len(call.Xs) - 1))
        A = np.array(call.Xs[i], dtype=float)
        A[1:] = A[0]
        return "duplicate_rows", _set(call, "Xs", i, A), "finite", None
    if kind in ("label_nan", "label_none"):
        i = draw(st.integers(0, len(call.ys) - 1))
        y = np.asarray(call.ys[i]).astype(float if kind == "label_nan" else object)
        y[rng.integers(y.size)] = np.nan if kind == "label_nan" else None
        return kind, _set(call, "ys", i, y), "error", None
    if kind == "label_strings":
        names = draw(st.sampled_from([("no", "yes"), ("-1", "1"), ("a", "b")]))
        mapped = [np.where(np.asarray(y) > 0, names[1], names[0]) for y in call.ys]
        return f"label_strings:{names[0]}/{names[1]}", replace(call, ys=mapped), "same_labels", replace(call)
    if kind == "one_class":
        i = draw(st.integers(0, len(call.ys) - 1))
        return "one_class", _set(call, "ys", i, np.ones_like(np.asarray(call.ys[i]))), "error", None
    if kind == "three_classes":
        i = draw(st.integers(0, len(call.ys) - 1))
        y = np.asarray(call.ys[i]).copy()
        y[: max(1, y.size // 3)] = 7
        return "three_classes", _set(call, "ys", i, y), "error", None
    if kind == "target_nan":
        y = np.array(call.ys[0], dtype=float)
        y[rng.integers(y.size)] = draw(st.sampled_from([np.nan, np.inf]))
        return "target_nonfinite", _set(call, "ys", 0, y), "error", None
    if kind == "target_huge":
        s = draw(st.sampled_from([1e-300, 1e150, 1e300]))
        return f"target_scale:{s:g}", replace(call, ys=[np.asarray(y) * s for y in call.ys]), "finite", None
    if kind == "ragged":
        name_, i = draw(st.sampled_from([m for m in _matrices(call) if m[0] == "Xs"]))
        rows = np.asarray(getattr(call, name_)[i]).tolist()
        rows[0] = rows[0][:-1]
        return "ragged", _set(call, name_, i, rows), "error", None
    if kind == "empty_task":
        i = draw(st.integers(0, len(call.Xs) - 1))
        A = np.asarray(call.Xs[i])
        out = _set(_set(call, "Xs", i, A[:0]), "ys", i, np.asarray(call.ys[i])[:0])
        return "empty_task", out, "error", None
    if kind == "task_count":
        which = draw(st.sampled_from(["ys", "Qs"]))
        return f"task_count:{which}", replace(call, **{which: getattr(call, which)[:-1]}), "error", None
    if kind == "tasks_nan":
        tasks = call.tasks.astype(float)
        tasks[rng.integers(tasks.size)] = np.nan
        return "tasks_nan", replace(call, tasks=tasks), "error", None
    if kind == "tasks_unknown":
        q = call.query_tasks.copy()
        q[rng.integers(q.size)] = 99
        return "tasks_unknown", replace(call, query_tasks=q), "error", None
    if kind == "tasks_length":
        return "tasks_length", replace(call, tasks=call.tasks[:-1]), "error", None
    if kind == "tasks_strings":
        names = np.array([f"task{m}" for m in range(call.tasks.max() + 1)])
        return "tasks_strings", replace(call, tasks=names[call.tasks], query_tasks=names[call.query_tasks]), "same", \
            call
    if kind == "tuple_of_lists":
        as_lists = _map(call, lambda A: [list(map(float, row)) for row in np.asarray(A)])
        return "nested_python_lists", as_lists, "same", call
    raise AssertionError(kind)


@st.composite
def cases(draw, setup):
    """A problem for ``setup`` and one perturbation of it."""
    seed = draw(st.integers(0, 2**16))
    n_tasks = draw(st.integers(2, 3))
    n_rows = draw(st.integers(8, 14))
    n_features = draw(st.integers(6, 9) if setup.form.startswith("nmtf") else st.integers(2, 5))
    call = make_call(setup, *base_problem(setup, seed, n_tasks, n_rows, n_features))
    name, call, expect, oracle = draw(perturbations(setup, call))
    if expect == "error" and name in setup.accepts:
        expect = "finite"
    return name, call, expect, oracle


# ---------------------------------------------------------------------------------------------
# The one check


class SilentWrong(AssertionError):
    """A wrong answer that looked like a right one."""


class ObscureCrash(AssertionError):
    """An error that does not say what is wrong with the input."""


_VALIDATION = ("sklearn/utils/validation.py", "sklearn/utils/_array_api.py", "sklearn/utils/multiclass.py",
               "sklearn/utils/_param_validation.py")


def is_clear(err):
    """A ValueError / TypeError with a message, raised by medmtl or scikit-learn's input
    validation (a RuntimeError too, from medmtl: a solver that says why it failed)."""
    if not str(err).strip():
        return False
    origin = traceback.extract_tb(err.__traceback__)[-1].filename.replace("\\", "/")
    if "/medmtl/" in origin and isinstance(err, (ValueError, TypeError, RuntimeError)):
        return True
    return isinstance(err, (ValueError, TypeError)) and any(origin.endswith(v) for v in _VALIDATION)


def _snapshot(obj):
    return copy.deepcopy(obj)


def _same_inputs(a, b):
    """Exactly the same arrays (values, dtypes, sparse storage), NaN equal to NaN."""
    if sp.issparse(a) or sp.issparse(b):
        return (sp.issparse(a) and sp.issparse(b) and a.format == b.format and a.shape == b.shape
                and all(np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True)
                        for k in ("data", "indices", "indptr", "row", "col") if hasattr(a, k)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_inputs(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_inputs(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(_same_inputs(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and (np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
                                            if a.dtype.kind != "O" else all(x is y or x == y for x, y in
                                                                            zip(a.ravel(), b.ravel()))))
    return a == b or (a is None and b is None)


def _mutate(call):
    """Double every training matrix in place (the caller changing its arrays after fit)."""
    for A in call.Xs:
        if sp.issparse(A):
            A.data *= 2.0
        elif isinstance(A, np.ndarray) and A.dtype.kind == "f":
            A *= 2.0


def _equal_results(a, b, exact):
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.shape != y.shape:
            return False
        if exact or x.dtype.kind not in "f":
            if not np.array_equal(x, y):
                return False
        elif not np.allclose(x, y, rtol=1e-7, atol=1e-9):
            return False
    return True


def _finite(results):
    return all(np.all(np.isfinite(v)) for v in results.values() if np.asarray(v).dtype.kind == "f")


def run_case(setup, case):
    """Run one case and return ``"error"`` or ``"correct"``; raise :class:`SilentWrong` or
    :class:`ObscureCrash` otherwise."""
    name, call, expect, oracle = case
    before = _snapshot(call)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est = setup.make()
            results = run(est, call)
        except Exception as err:  # noqa: BLE001 - classifying how the case ended is the point
            if not is_clear(err):
                raise ObscureCrash(f"{setup.name} / {name}: {type(err).__name__}: {err}") from err
            if not _same_inputs(call, before):
                raise SilentWrong(f"{setup.name} / {name}: the caller's arrays were changed") from err
            if expect in ("same", "same_labels"):
                raise SilentWrong(f"{setup.name} / {name}: a valid input was refused: {err}") from err
            return "error"
        if not _same_inputs(call, before):
            raise SilentWrong(f"{setup.name} / {name}: the caller's arrays were changed")
        if expect == "error":
            raise SilentWrong(f"{setup.name} / {name}: accepted, expected a clear error")
        if not _finite(results):
            raise SilentWrong(f"{setup.name} / {name}: results are not finite")
        if expect == "same" or (expect == "scaled" and setup.row_scale_invariant):
            reference = run(setup.make(), oracle)
            exact = name.startswith(("sparse:duplicates", "sparse:unsorted", "dtype", "tasks_strings", "none"))
            if not _equal_results(results, reference, exact=exact and not name.startswith("scale")):
                raise SilentWrong(f"{setup.name} / {name}: the answer differs from the same problem in plain form")
        if expect == "same_labels":
            reference = run(setup.make(), oracle)
            negative, positive = name.split(":")[1].split("/")
            for key, value in reference.items():
                expected = np.where(value > 0, positive, negative) if key in ("predict", "transduction") else value
                if not np.array_equal(results[key], expected):
                    raise SilentWrong(f"{setup.name} / {name}: string labels changed the answer ({key})")
        # pickling, a second fit, and changing the training arrays afterwards change nothing
        restored = pickle.loads(pickle.dumps(est))
        again = _predict_only(restored, call)
        if not _equal_results(again, _predict_only(est, call), exact=True):
            raise SilentWrong(f"{setup.name} / {name}: predictions changed after a pickle round trip")
        if not _equal_results(run(setup.make(), _snapshot(before)), results, exact=True):
            raise SilentWrong(f"{setup.name} / {name}: a second fit on the same data gave another answer")
        kept = _predict_only(est, call)
        _mutate(call)
        if not _equal_results(_predict_only(est, replace(call, Qs=before.Qs)), kept, exact=True):
            raise SilentWrong(f"{setup.name} / {name}: changing the training arrays after fit changed the model")
    return "correct"


def _predict_only(est, call):
    """The fitted ``est``'s answers on ``call``'s queries (results of :func:`run` without fitting)."""
    qkw = {} if call.query_tasks is None else {"tasks": call.query_tasks}
    if call.form == "nmtf":
        return {"predict": np.concatenate(est.predict(call.Qs)), "memberships": np.hstack(est.memberships_)}
    if call.form in ("single", "stacked", "gram"):
        out = {"predict": np.asarray(est.predict(call.Qs[0], **qkw))}
        if hasattr(est, "decision_function"):
            out["decision"] = np.asarray(est.decision_function(call.Qs[0], **qkw))
        return out
    out = {"predict": np.concatenate(est.predict(call.Qs))}
    if hasattr(est, "decision_function"):
        out["decision"] = np.concatenate(est.decision_function(call.Qs))
    return out
