"""Bad and odd inputs for every public learner, and the one check of how each case ends.

The registry
    :data:`SETUPS` lists every learner to fuzz, one :class:`Setup` a line: how to make it,
    the form of data it takes (batch or online), and what a correct answer means for it.
    Adding a learner, batch or online, is adding one line; the Hypothesis suite
    (``test_batch_estimators.py``, ``test_online_registry.py``) and the large draw of
    ``benchmarks/fuzz.py`` read the registry.

A case
    A small well-formed problem in the set-up's form, passed through one *perturbation*
    (:func:`make_case`): a change of representation that must not change the answer
    (sparse layouts with duplicate entries or unsorted indices, dtypes, pandas
    DataFrames, memmaps, read-only, strided or Fortran-ordered arrays, string or 0/1
    labels), a change of scale (1e-320 to 1e300), or an input that is wrong (NaN,
    infinity, dates, complex numbers, text, NaN or infinite labels, one class, ragged or
    3-D arrays, no features, labels of the wrong length, a generator, columns reordered
    or renamed at prediction, tasks that do not match, extreme hyper-parameters).

How a case ends (:func:`classify`)
    * ``"correct"``: finite results, equal to those of the case's *oracle* (the same
      problem in plain form) when the perturbation must not change them; the caller's
      arrays unchanged; the fitted learner pickles and predicts the same after the round
      trip; a second fit gives the same results; changing the training arrays afterwards
      changes nothing;
    * ``"error"``: a clear error: a ``ValueError`` or ``TypeError`` (a ``RuntimeError``
      from medmtl: a solver saying why) raised by medmtl or scikit-learn's input
      validation, whose message names the problem (:attr:`Case.about`);
    * a failure (:class:`Failure`, raised by :func:`run_case`): ``"silent wrong"`` (a
      wrong answer, a changed input, a refused valid input, an answer that a pickle or a
      second fit changes), ``"nan model"``, ``"unclear error"``; ``benchmarks/fuzz.py``
      adds ``"crash"`` and ``"hang"`` for a worker that dies or does not answer.

Both the Hypothesis strategies and the fuzz script draw cases through one function,
:func:`make_case`, from a :class:`Choices` source: Hypothesis (which shrinks a failing
case) or a seeded numpy generator (which the fuzz script replays in a worker process).
"""

from __future__ import annotations

import atexit
import copy
import dataclasses
import os
import pickle
import re
import shutil
import tempfile
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

try:
    import pandas as pd
except ImportError:  # the DataFrame cases are drawn only where pandas is installed
    pd = None

# ---------------------------------------------------------------------------------------------
# Set-ups

ONLINE_FORMS = ("stream", "multiclass_stream")


@dataclass(frozen=True)
class Setup:
    """A learner and the form of data it takes: one entry of the registry.

    name : str
        Unique; names the set-up in test ids and reports.
    make : callable
        ``make()`` returns a new, unfitted learner (seeded, where it draws random numbers).
    form : str
        Batch: "single" (``fit(X, y)``), "stacked" (``fit(X, y, tasks=...)``), "lists"
        (``fit(Xs, ys)``), "gram" (``fit(K, y)`` with a precomputed kernel), "nmtf"
        (``fit(Xs_labeled, ys, Xs_unlabeled)``, nonnegative documents) or "nmtf_lists"
        (``fit(Xs, ys)`` on documents). Online: "stream" (``fit(Xs, LabelOracle(ys))``, a
        multi-task stream, labels in {-1, +1}) or "multiclass_stream" (``fit(X, y)``, one
        multiclass stream).
    target : "binary", "multiclass" or "real"
    labels : "any" or "pm1"
        Whether any labels (strings, 0/1) are encoded by the learner, or only -1 / +1 are
        valid (other labels must be a clear error).
    row_scale_invariant : bool
        Rescaling rows leaves the answer unchanged (document models; learners that scale
        each row into the unit ball).
    accepts : frozenset of str
        Perturbations that are errors for most learners but valid for this one (a pooled
        model has no use for task counts; NMTF learners take any number of classes).
    refuses : frozenset of str
        Prefixes of perturbations that must not change the answer for most learners but
        are a clear error for this one (a dense-only learner refuses sparse input).
    """

    name: str
    make: object
    form: str
    target: str = "binary"
    labels: str = "any"
    row_scale_invariant: bool = False
    accepts: frozenset = frozenset()
    refuses: frozenset = frozenset()

    @property
    def online(self):
        return self.form in ONLINE_FORMS

    def __repr__(self):
        return self.name


def _nmtf(cls, **kw):
    return lambda: cls(n_topics=3, max_iter=4, plsa_max_iter=4, fold_in_max_iter=6, random_state=0, **kw)


def _online(name, **kw):
    """A maker of the seeded online learner ``medmtl.online.<name>``, imported when first
    made (so that the batch set-ups do not depend on the online package)."""
    def make():
        import medmtl.online

        return getattr(medmtl.online, name)(random_state=0, **kw)

    return make


_MULTI = [
    ("features", lambda: MultiTaskMEDClassifier(alpha=1.0), "binary"),
    ("svm-rbf", lambda: MultiTaskMEDClassifier(selection=None, kernel="rbf"), "binary"),
    ("kernels", lambda: MultiTaskMEDClassifier(selection="kernels", kernels=["rbf", "linear"], alpha=1.0), "binary"),
    ("regressor", lambda: MultiTaskMEDRegressor(alpha=1.0), "real"),
    ("pooling", lambda: AdaptivePoolingClassifier(alpha=1.0), "binary"),
    ("pooling-rbf", lambda: AdaptivePoolingClassifier(kernel="rbf", alpha=1.0), "binary"),
]
_ONE_CLASS_STREAM = frozenset({"one_class", "rows:one_row"})  # an online learner may see one label only

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
          accepts=frozenset({"three_classes", "one_class", "rows:one_row", "rows:no_rows", "empty_task",
                             "task_count:Qs"})),
    # online learners
    Setup("SHAMPO", _online("SHAMPO"), "stream", row_scale_invariant=True, accepts=_ONE_CLASS_STREAM),
    Setup("KernelSHAMPO", _online("KernelSHAMPO", kernel="linear"), "stream", row_scale_invariant=True,
          accepts=_ONE_CLASS_STREAM, refuses=frozenset({"sparse"})),
    Setup("AMLC", _online("AMLC"), "stream", accepts=_ONE_CLASS_STREAM),
    Setup("PEER", _online("PEER"), "stream", accepts=_ONE_CLASS_STREAM),
    Setup("PEERShare", _online("PEERShare"), "stream", accepts=_ONE_CLASS_STREAM),
    Setup("RandomQuery", _online("RandomQuery"), "stream", accepts=_ONE_CLASS_STREAM),
    Setup("IndependentQuery", _online("IndependentQuery"), "stream", accepts=_ONE_CLASS_STREAM),
    Setup("Banditron", _online("Banditron"), "multiclass_stream", "multiclass", row_scale_invariant=True,
          accepts=_ONE_CLASS_STREAM),
    Setup("OneVsRestBandit", _online("OneVsRestBandit"), "multiclass_stream", "multiclass", row_scale_invariant=True,
          accepts=_ONE_CLASS_STREAM),
    Setup("OneVsOneBandit", _online("OneVsOneBandit"), "multiclass_stream", "multiclass", row_scale_invariant=True,
          accepts=_ONE_CLASS_STREAM),
]

BATCH_SETUPS = [s for s in SETUPS if not s.online]
ONLINE_SETUPS = [s for s in SETUPS if s.online]
BY_NAME = {s.name: s for s in SETUPS}
assert len(BY_NAME) == len(SETUPS), "set-up names must be unique"

# ---------------------------------------------------------------------------------------------
# Where choices come from


class Choices:
    """The random choices of one case: from Hypothesis (``draw``) or a numpy generator.

    Hypothesis shrinks a failing case to a simpler one; the fuzz script replays a case from
    its seed alone (:func:`case_from_seed`).
    """

    def __init__(self, draw=None, rng=None):
        self._draw, self._rng = draw, rng

    def integer(self, low, high):
        """An integer in [low, high]."""
        if self._draw is not None:
            return self._draw(st.integers(low, high))
        return int(self._rng.integers(low, high + 1))

    def choice(self, options):
        """One of ``options`` (a sequence)."""
        options = list(options)
        return options[self.integer(0, len(options) - 1)]

    def boolean(self):
        return bool(self.integer(0, 1))


# ---------------------------------------------------------------------------------------------
# Problems and calls


@dataclass
class Call:
    """What a learner is given: training matrices and targets, then query matrices.

    For the forms with one ``X`` ("single", "stacked", "gram", "multiclass_stream") the
    lists hold one entry; for the others one per task. ``tasks`` / ``query_tasks`` are the
    stacked form's. ``params`` are hyper-parameters set on the learner before fitting.
    """

    form: str
    Xs: list
    ys: list
    Qs: list
    tasks: object = None
    query_tasks: object = None
    params: dict = field(default_factory=dict)


@dataclass
class Case:
    """A call, what must come of it, and the plain call whose answer it must equal.

    expect : "same" (the oracle's answer), "same_labels" (the oracle's answer with labels
        renamed by ``relabel``), "error" (a clear error), "finite" (a clear error or a
        finite answer), "scaled" (a clear error or a finite answer; the oracle's for
        row-scale-invariant learners), "error_or_same" (a clear error or the oracle's
        answer).
    about : regular expression the message of an expected error must match (it names the
        problem), case-insensitive.
    exact : whether the answer must equal the oracle's to the last bit (else to rounding).
    """

    name: str
    call: Call
    expect: str
    oracle: Call | None = None
    about: str | None = None
    exact: bool = False
    relabel: dict | None = None

    def __repr__(self):
        return f"Case({self.name!r}, expect={self.expect!r})"


def _is_one_matrix(form):
    return form in ("single", "stacked", "gram", "multiclass_stream")


def base_problem(setup, seed, n_tasks, n_rows, n_features):
    """A small well-formed problem for ``setup``: per-task lists ``Xs``, ``ys``, ``Qs``."""
    rng = np.random.default_rng(seed)
    documents = setup.form.startswith("nmtf")
    n_tasks = 1 if _is_one_matrix(setup.form) and setup.form != "stacked" else n_tasks
    Xs, ys, Qs = [], [], []
    for m in range(n_tasks):
        X = rng.normal(size=(n_rows, n_features))
        Q = rng.normal(size=(max(3, n_rows // 2), n_features))
        w = rng.normal(size=n_features) + 0.5
        if setup.target == "real":
            y = X @ w + 0.1 * rng.normal(size=n_rows)
        elif setup.target == "multiclass":
            W = rng.normal(size=(n_features, 3))
            y = np.argmax(X @ W, axis=1)
            y[:3] = [0, 1, 2]  # every class present
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
    if setup.form in ("lists", "nmtf", "nmtf_lists", "stream"):
        return Call(setup.form, list(Xs), list(ys), list(Qs))
    if setup.form == "gram":
        gamma = 1.0 / Xs[0].shape[1]
        sq = lambda A, B: ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)  # noqa: E731
        return Call("gram", [np.exp(-gamma * sq(Xs[0], Xs[0]))], list(ys), [np.exp(-gamma * sq(Qs[0], Xs[0]))])
    if setup.form in ("single", "multiclass_stream"):
        return Call(setup.form, [Xs[0]], [ys[0]], [Qs[0]])
    tasks = np.repeat(np.arange(len(Xs)), [len(X) for X in Xs])
    query_tasks = np.repeat(np.arange(len(Qs)), [len(Q) for Q in Qs])
    return Call("stacked", [np.vstack(Xs)], [np.concatenate(ys)], [np.vstack(Qs)], tasks, query_tasks)


def _concat(parts):
    parts = list(parts)
    return np.concatenate([np.asarray(p) for p in parts]) if parts else np.zeros(0)


def _answers(est, call):
    """The fitted ``est``'s answers on ``call``'s queries."""
    qkw = {} if call.query_tasks is None else {"tasks": call.query_tasks}
    if call.form == "nmtf":
        return {"predict": _concat(est.predict(call.Qs)), "memberships": np.hstack(est.memberships_)}
    if _is_one_matrix(call.form):
        out = {"predict": np.asarray(est.predict(call.Qs[0], **qkw))}
        if hasattr(est, "decision_function"):
            out["decision"] = np.asarray(est.decision_function(call.Qs[0], **qkw))
        return out
    out = {"predict": _concat(est.predict(call.Qs))}
    if hasattr(est, "decision_function"):
        out["decision"] = _concat(est.decision_function(call.Qs))
    return out


def run(est, call):
    """Fit ``est`` on ``call`` and return its results on the queries (concatenated arrays)."""
    if call.params:
        est.set_params(**call.params)
    kw = {} if call.tasks is None else {"tasks": call.tasks}
    if call.form == "nmtf":
        est.fit(call.Xs, call.ys, call.Qs)
        results = _answers(est, call)
        results["transduction"] = _concat(est.transduction_)
        return results
    if call.form == "stream":
        from medmtl.online import LabelOracle

        est.fit(call.Xs, LabelOracle(call.ys))
    elif _is_one_matrix(call.form):
        est.fit(call.Xs[0], call.ys[0], **kw)
    else:
        est.fit(call.Xs, call.ys)
    return _answers(est, call)


# ---------------------------------------------------------------------------------------------
# Changes of representation


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


def _coo_duplicates(A, rng):
    """COO with every entry split in two, in shuffled order."""
    C = sp.coo_matrix(A)
    part = rng.uniform(0.2, 0.8, size=C.nnz)
    order = rng.permutation(2 * C.nnz)
    row, col = np.r_[C.row, C.row][order], np.r_[C.col, C.col][order]
    return sp.coo_matrix((np.r_[C.data * part, C.data * (1 - part)][order], (row, col)), shape=C.shape)


def _canonical_csr(A):
    A = sp.csr_matrix(A, copy=True)
    A.sum_duplicates()
    return A


SPARSE_LAYOUTS = {
    "csr": lambda A, rng: sp.csr_matrix(A),
    "csc": lambda A, rng: sp.csc_matrix(A),
    "coo": lambda A, rng: sp.coo_matrix(A),
    "coo_duplicates": _coo_duplicates,
    "csr_array": lambda A, rng: sp.csr_array(A),
    "duplicates": _duplicated,
    "unsorted": _unsorted,
    "explicit_zeros": _explicit_zeros,
}

_MEMMAP_DIR = []


def _memmap(A, mode):
    """``A`` as a memmap of a file that is already unlinked (the mapping keeps it alive)."""
    if not _MEMMAP_DIR:
        _MEMMAP_DIR.append(tempfile.mkdtemp(prefix="medmtl-property-"))
        atexit.register(shutil.rmtree, _MEMMAP_DIR[0], True)
    fd, path = tempfile.mkstemp(dir=_MEMMAP_DIR[0], suffix=".npy")
    os.close(fd)
    np.save(path, np.asarray(A))
    mapped = np.load(path, mmap_mode=mode)
    os.unlink(path)
    return mapped


def _read_only(A):
    B = np.array(A)
    B.setflags(write=False)
    return B


def _strided(A):
    """A view of every other column of a wider array: not contiguous."""
    A = np.asarray(A)
    wide = np.zeros((A.shape[0], 2 * A.shape[1]), dtype=A.dtype)
    wide[:, ::2] = A
    return wide[:, ::2]


MEMORY_LAYOUTS = {
    "memmap_r": lambda A: _memmap(A, "r"),
    "memmap_r+": lambda A: _memmap(A, "r+"),
    "read_only": _read_only,
    "strided": _strided,
    "fortran": lambda A: np.asfortranarray(A),
    "negative_strides": lambda A: np.array(A)[::-1].copy()[::-1],
}


def _frame(A, names):
    return pd.DataFrame(np.asarray(A), columns=list(names))


def _columns(n):
    return [f"f{j}" for j in range(n)]


# ---------------------------------------------------------------------------------------------
# Perturbations

HYPER_INT = [0, -1, 2 ** 63, 10 ** 30, True, 2.5, float("nan"), "3"]
HYPER_REAL = [0.0, -1.0, float("nan"), float("inf"), -float("inf"), 1e-300, 1e300, 10 ** 400, True, "1.0"]


def _numeric_params(setup):
    """The hyper-parameters of ``setup`` whose value is a number: (name, is_integer)."""
    params = setup.make().get_params(deep=False)
    return [(k, isinstance(v, (int, np.integer))) for k, v in sorted(params.items())
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
            and k != "random_state"]


def perturb(setup, call, c):
    """One perturbation of ``call`` for ``setup``, drawn from ``c``: a :class:`Case`."""
    rng = np.random.default_rng(c.integer(0, 2 ** 16))
    documents = setup.form.startswith("nmtf")
    labels = setup.target != "real"
    lists = setup.form in ("lists", "nmtf", "nmtf_lists", "stream")
    menu = ["none", "sparse", "dtype", "scale", "nonfinite", "text", "complex", "datetime", "ndim", "features",
            "no_features", "rows", "constant", "duplicate_rows", "memory", "generator", "hyper"]
    if pd is not None:
        menu += ["dataframe"]
    if labels:
        menu += ["label_nan", "label_none", "label_inf", "relabel", "one_class", "three_classes"]
    else:
        menu += ["target_nan", "target_huge", "target_complex"]
    if lists:
        menu += ["ragged", "empty_task", "task_count"]
    if setup.form == "stacked":
        menu += ["tasks_nan", "tasks_unknown", "tasks_length", "tasks_strings"]
    if setup.form != "gram":
        menu += ["tuple_of_lists"]
    kind = c.choice(menu)
    if kind == "none":
        return Case("none", call, "same", call, exact=True)
    if kind == "sparse":
        layout = c.choice(sorted(SPARSE_LAYOUTS))
        perturbed = _map(call, lambda A: SPARSE_LAYOUTS[layout](A, rng))
        # the canonical CSR matrix equal to each perturbed one (split entries summed exactly
        # as scipy sums them, so the answer must be the same to the last bit)
        exact = layout in ("duplicates", "unsorted")
        return Case(f"sparse:{layout}", perturbed, "same", _map(perturbed, _canonical_csr), exact=exact)
    if kind == "dtype":
        dtype = c.choice(["float32", "float16", "int64", "int8", "bool", "object", "uint8"])
        converted = _map(call, lambda A: (np.abs(A) if documents else A).astype(dtype))
        if dtype == "bool" and setup.form == "gram":
            return Case(f"dtype:{dtype}", converted, "finite")
        oracle = _map(converted, lambda A: np.asarray(A, dtype=np.float64))
        expect = "same" if dtype != "bool" or setup.target != "real" else "finite"
        return Case(f"dtype:{dtype}", converted, expect, oracle, exact=True)
    if kind == "scale":
        s = c.choice([1e-320, 1e-310, 1e-300, 1e-200, 1e-160, 1e-20, 1e20, 1e160, 1e200, 1e300])
        where = c.choice(["both", "train", "query"])
        which = {"both": ("Xs", "Qs"), "train": ("Xs",), "query": ("Qs",)}[where]
        # below 2.2e-308 the scaled values are subnormal and lose digits: another problem,
        # whose answer only has to be finite
        expect = "scaled" if s >= 1e-300 else "finite"
        return Case(f"scale:{s:g}:{where}", _map(call, lambda A: A * s, which), expect, call)
    if kind == "nonfinite":
        value = c.choice([np.nan, np.inf, -np.inf])
        name, i = c.choice(_matrices(call))
        A = np.array(getattr(call, name)[i], dtype=float)
        A[rng.integers(A.shape[0]), rng.integers(A.shape[1])] = value
        A = sp.csr_matrix(A) if c.boolean() else A
        return Case(f"nonfinite:{value}:{name}", _set(call, name, i, A), "error", about=r"nan|inf|finite")
    if kind == "text":
        name, i = c.choice(_matrices(call))
        A = np.asarray(getattr(call, name)[i]).astype(object)
        A[0, 0] = c.choice(["a", "", "1,5", "1.5", None, b"x"])
        return Case(f"text:{name}", _set(call, name, i, A), "error",
                    about=r"real number|string|text|float|convert|number|nan|missing")
    if kind == "complex":
        name, i = c.choice(_matrices(call))
        A = np.asarray(getattr(call, name)[i]) + (1j if c.boolean() else 0j)
        return Case(f"complex:{name}", _set(call, name, i, A), "error", about="complex")
    if kind == "datetime":
        name, i = c.choice(_matrices(call))
        unit = c.choice(["datetime64[ns]", "datetime64[s]", "timedelta64[ns]"])
        A = (np.abs(np.asarray(getattr(call, name)[i])) * 1000).astype(np.int64).astype(unit)
        return Case(f"datetime:{unit}:{name}", _set(call, name, i, A), "error", about=r"date|duration|time")
    if kind == "ndim":
        name, i = c.choice(_matrices(call))
        A = np.asarray(getattr(call, name)[i])
        bad = c.choice(["1d", "3d", "0d"])
        A = {"1d": A[:, 0], "3d": A[:, :, None], "0d": np.float64(1.0)}[bad]
        return Case(f"ndim:{bad}:{name}", _set(call, name, i, A), "error",
                    about=r"1-d|2-d|2d|1d|dimension|shape|ndim|scalar|expected|list|array")
    if kind == "features":
        name, i = c.choice(_matrices(call))
        A = np.asarray(getattr(call, name)[i])
        A = c.choice([A[:, :-1], np.hstack([A, A[:, :1]]), A[:, :0]])
        return Case(f"features:{A.shape[1]}:{name}", _set(call, name, i, A), "error",
                    about=r"feature|column|word|kernel values|gram")
    if kind == "no_features":
        return Case("no_features", _map(call, lambda A: np.asarray(A)[:, :0]), "error",
                    about=r"feature|column|word")
    if kind == "rows":
        i = c.integer(0, len(call.Xs) - 1)
        what = c.choice(["labels_short", "labels_long", "no_rows", "one_row"])
        if what in ("labels_short", "labels_long"):
            y = np.asarray(call.ys[i])
            y = y[:-1] if what == "labels_short" else np.r_[y, y[:1]]
            return Case(f"rows:{what}", _set(call, "ys", i, y), "error",
                        about=r"label|target|row|sample|inconsistent|shape|length")
        A, y = np.asarray(call.Xs[i]), np.asarray(call.ys[i])
        k = 0 if what == "no_rows" else 1
        out = _set(_set(call, "Xs", i, A[:k]), "ys", i, y[:k])
        if call.tasks is not None:
            out.tasks = call.tasks[:k]
        if call.form == "stream":  # the tasks of a stream have one length
            out = replace(out, Xs=[np.asarray(X)[:k] for X in call.Xs], ys=[np.asarray(t)[:k] for t in call.ys])
        expect = "error" if labels or k == 0 else "finite"  # one label is one class
        return Case(f"rows:{what}", out, expect,
                    about=r"row|sample|empty|no labelled|document|class|label|stream|example|task")
    if kind == "constant":
        name, i = c.choice(_matrices(call))
        A = np.array(getattr(call, name)[i], dtype=float)
        A[:, rng.integers(A.shape[1])] = A[0, 0]
        return Case("constant_column", _set(call, name, i, A), "finite")
    if kind == "duplicate_rows":
        i = c.integer(0, len(call.Xs) - 1)
        A = np.array(call.Xs[i], dtype=float)
        A[1:] = A[0]
        return Case("duplicate_rows", _set(call, "Xs", i, A), "finite")
    if kind == "memory":
        layout = c.choice(sorted(MEMORY_LAYOUTS))
        exact = layout in ("memmap_r", "memmap_r+", "read_only")
        return Case(f"memory:{layout}", _map(call, MEMORY_LAYOUTS[layout]), "same", call, exact=exact)
    if kind == "generator":
        if lists:
            return Case("generator:Xs", replace(call, Xs=(A for A in call.Xs)), "error_or_same", call,
                        about=r"generator|iterator|list")
        return Case("generator:X", _set(call, "Xs", 0, (row for row in np.asarray(call.Xs[0]))), "error_or_same",
                    call, about=r"generator|iterator|list|array")
    if kind == "hyper":
        params = _numeric_params(setup)
        if not params:
            return Case("none", call, "same", call, exact=True)
        name, integer = c.choice(params)
        value = c.choice(HYPER_INT if integer else HYPER_REAL)
        shown = f"{value!r:.12}"
        return Case(f"hyper:{name}={shown}", replace(call, params={name: value}), "finite",
                    about=re.escape(name))
    if kind == "dataframe":
        return _dataframe_case(setup, call, c, rng)
    if kind in ("label_nan", "label_none", "label_inf"):
        i = c.integer(0, len(call.ys) - 1)
        y = np.asarray(call.ys[i]).astype(object if kind == "label_none" else float)
        y[rng.integers(y.size)] = {"label_nan": np.nan, "label_none": None, "label_inf": np.inf}[kind]
        return Case(kind, _set(call, "ys", i, y), "error", about=r"nan|missing|none|inf|label|unknown label|finite")
    if kind == "relabel":
        return _relabel_case(setup, call, c)
    if kind == "one_class":
        i = c.integer(0, len(call.ys) - 1)
        y = np.full_like(np.asarray(call.ys[i]), np.asarray(call.ys[i]).max())
        return Case("one_class", _set(call, "ys", i, y), "error", about="class")
    if kind == "three_classes":
        i = c.integer(0, len(call.ys) - 1)
        y = np.asarray(call.ys[i]).copy()
        y[: max(1, y.size // 3)] = 7
        if setup.target == "multiclass":  # a fourth class is still a multiclass problem
            return Case("three_classes", _set(call, "ys", i, y), "finite")
        return Case("three_classes", _set(call, "ys", i, y), "error", about=r"class|binary|label|\{-1, \+1\}")
    if kind == "target_nan":
        y = np.array(call.ys[0], dtype=float)
        y[rng.integers(y.size)] = c.choice([np.nan, np.inf])
        return Case("target_nonfinite", _set(call, "ys", 0, y), "error", about=r"nan|inf|finite")
    if kind == "target_huge":
        s = c.choice([1e-300, 1e150, 1e300])
        return Case(f"target_scale:{s:g}", replace(call, ys=[np.asarray(y) * s for y in call.ys]), "finite")
    if kind == "target_complex":
        i = c.integer(0, len(call.ys) - 1)
        y = np.asarray(call.ys[i]) + (1j if c.boolean() else 0j)
        return Case("target_complex", _set(call, "ys", i, y), "error", about="complex")
    if kind == "ragged":
        i = c.integer(0, len(call.Xs) - 1)
        rows = np.asarray(call.Xs[i]).tolist()
        rows[0] = rows[0][:-1]
        return Case("ragged", _set(call, "Xs", i, rows), "error",
                    about=r"equal length|inhomogeneous|sequence|ragged|shape")
    if kind == "empty_task":
        i = c.integer(0, len(call.Xs) - 1)
        out = _set(_set(call, "Xs", i, np.asarray(call.Xs[i])[:0]), "ys", i, np.asarray(call.ys[i])[:0])
        return Case("empty_task", out, "error", about=r"row|sample|empty|no labelled|document|class|length|example")
    if kind == "task_count":
        which = c.choice(["ys", "Qs"])
        return Case(f"task_count:{which}", replace(call, **{which: getattr(call, which)[:-1]}), "error",
                    about=r"task")
    if kind == "tasks_nan":
        tasks = call.tasks.astype(float)
        tasks[rng.integers(tasks.size)] = np.nan
        return Case("tasks_nan", replace(call, tasks=tasks), "error", about=r"tasks")
    if kind == "tasks_unknown":
        q = call.query_tasks.copy()
        q[rng.integers(q.size)] = 99
        return Case("tasks_unknown", replace(call, query_tasks=q), "error", about=r"tasks")
    if kind == "tasks_length":
        return Case("tasks_length", replace(call, tasks=call.tasks[:-1]), "error", about=r"tasks")
    if kind == "tasks_strings":
        names = np.array([f"task{m}" for m in range(call.tasks.max() + 1)])
        return Case("tasks_strings", replace(call, tasks=names[call.tasks], query_tasks=names[call.query_tasks]),
                    "same", call, exact=True)
    if kind == "tuple_of_lists":
        as_lists = _map(call, lambda A: [list(map(float, row)) for row in np.asarray(A)])
        return Case("nested_python_lists", as_lists, "same", call, exact=True)
    raise AssertionError(kind)


def _dataframe_case(setup, call, c, rng):
    """pandas DataFrames with named columns: the plain answer, or scikit-learn's name checks."""
    n = np.asarray(call.Xs[0]).shape[1]
    names = _columns(n)
    what = c.choice(["both", "fit_only", "predict_only", "reordered", "renamed"]
                    + (["tasks_differ"] if len(call.Xs) > 1 else []))
    if what in ("both", "fit_only", "predict_only"):
        which = {"both": ("Xs", "Qs"), "fit_only": ("Xs",), "predict_only": ("Qs",)}[what]
        framed = _map(call, lambda A: _frame(A, names), which)
        if call.form == "nmtf" and what != "both":  # the queries are the unlabelled documents of the fit
            return Case(f"dataframe:{what}", framed, "error", about=r"column|feature names")
        return Case(f"dataframe:{what}", framed, "same", call)
    framed = _map(call, lambda A: _frame(A, names))
    if what == "tasks_differ":
        i = c.integer(1, len(call.Xs) - 1)
        other = list(reversed(names)) if n > 1 else ["other"]
        return Case("dataframe:tasks_differ", _set(framed, "Xs", i, _frame(call.Xs[i], other)), "error",
                    about=r"column|feature names")
    perm = rng.permutation(n)
    while n > 1 and np.all(perm == np.arange(n)):
        perm = rng.permutation(n)
    if what == "reordered":
        if n == 1:
            return Case("dataframe:both", framed, "same", call)
        queries = [Q[[names[j] for j in perm]] for Q in framed.Qs]
        return Case("dataframe:reordered", replace(framed, Qs=queries), "error", about=r"feature names|column")
    renamed = [Q.set_axis([f"g{j}" for j in range(n)], axis=1) for Q in framed.Qs]
    return Case("dataframe:renamed", replace(framed, Qs=renamed), "error", about=r"feature names|column")


def _relabel_case(setup, call, c):
    """Labels renamed, order kept: the same answer under the new names (or a clear error)."""
    distinct = np.unique(np.concatenate([np.asarray(y) for y in call.ys]))
    scheme = c.choice(["strings", "01", "floats"] if setup.target != "multiclass" else ["strings", "shifted"])
    if scheme == "strings":
        pool = c.choice([("no", "yes", "z"), ("-1", "1", "2"), ("a", "b", "c")])
        names = dict(zip(distinct.tolist(), pool))
    elif scheme == "01":
        names = dict(zip(distinct.tolist(), (0, 1)))
    elif scheme == "floats":
        names = {v: float(v) for v in distinct.tolist()}
    else:
        names = {v: 10 * (v + 1) for v in distinct.tolist()}
    mapped = [np.array([names[v] for v in np.asarray(y).tolist()]) for y in call.ys]
    out = replace(call, ys=mapped)
    if setup.labels == "pm1" and scheme != "floats":
        return Case(f"labels:{scheme}", out, "error", about=r"label|\{-1, \+1\}|-1")
    return Case(f"labels:{scheme}", out, "same_labels", replace(call), exact=True, relabel=names)


def make_case(setup, c):
    """A problem for ``setup`` and one perturbation of it, drawn from ``c`` (:class:`Choices`)."""
    seed = c.integer(0, 2 ** 16)
    n_tasks = c.integer(2, 3)
    n_rows = c.integer(12, 24) if setup.online else c.integer(8, 14)
    n_features = c.integer(6, 9) if setup.form.startswith("nmtf") else c.integer(2, 5)
    call = make_call(setup, *base_problem(setup, seed, n_tasks, n_rows, n_features))
    case = perturb(setup, call, c)
    if case.expect == "error" and case.name in setup.accepts:
        case.expect = "finite"
    if case.expect in ("same", "same_labels") and case.name.startswith(tuple(setup.refuses)):
        case.expect = "error"
        case.about = None
    return case


@st.composite
def cases(draw, setup):
    """A case for ``setup`` (Hypothesis; shrinks toward simpler problems and perturbations)."""
    return make_case(setup, Choices(draw=draw))


def case_from_seed(setup, seed):
    """The case a seed gives (the fuzz script's draw): the same in every process."""
    return make_case(setup, Choices(rng=np.random.default_rng([seed, _stable_hash(setup.name)])))


def _stable_hash(text):
    return int.from_bytes(text.encode()[:8].ljust(8, b"\0"), "little") ^ len(text)


# ---------------------------------------------------------------------------------------------
# The one check


class Failure(AssertionError):
    """A case that ended neither in a correct answer nor in a clear error; ``kind`` says how."""

    kind = "failure"


class SilentWrong(Failure):
    """A wrong answer that looked like a right one (or changed the caller's arrays)."""

    kind = "silent wrong"


class NaNModel(SilentWrong):
    """A fit that ended in NaN or infinite results."""

    kind = "nan model"


class ObscureCrash(Failure):
    """An error that does not say what is wrong with the input."""

    kind = "unclear error"


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
    if isinstance(obj, Call) and _has_iterator(obj):
        return obj  # a generator cannot be copied; it is compared by identity
    return copy.deepcopy(obj)


def _has_iterator(call):
    """Whether ``call`` holds a generator (read once: nothing to refit or copy)."""
    return any(hasattr(v, "__next__") for k in ("Xs", "Qs") for v in
               ([getattr(call, k)] + (list(getattr(call, k)) if isinstance(getattr(call, k), list) else [])))


def _same_inputs(a, b):
    """Exactly the same arrays (values, dtypes, sparse storage), NaN equal to NaN."""
    if a is b:
        return True
    if pd is not None and isinstance(a, pd.DataFrame):
        return (isinstance(b, pd.DataFrame) and list(a.columns) == list(b.columns)
                and list(a.dtypes) == list(b.dtypes) and _same_inputs(a.to_numpy(), b.to_numpy()))
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
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return a == b or (a is None and b is None)


def _mutate(call):
    """Double every writable training matrix in place (the caller changing its arrays after fit)."""
    for A in call.Xs:
        if sp.issparse(A):
            A.data *= 2.0
        elif isinstance(A, np.ndarray) and A.dtype.kind == "f" and A.flags.writeable:
            A *= 2.0
        elif pd is not None and isinstance(A, pd.DataFrame):
            for column in A.columns:
                A[column] = A[column] * 2.0


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
        elif x.size and np.max(np.abs(x - y)) > 1e-5 * max(np.max(np.abs(y)), 1e-12):
            return False  # beyond a solver's tolerance, relative to the size of the answers
    return True


def _finite(results):
    return all(np.all(np.isfinite(v)) for v in results.values() if np.asarray(v).dtype.kind == "f")


def run_case(setup, case):
    """Run one case and return ``"error"`` or ``"correct"``; raise a :class:`Failure` otherwise."""
    if isinstance(case, tuple):  # (name, call, expect, oracle), as older callers give it
        case = Case(*case)
    name, call, expect, oracle = case.name, case.call, case.expect, case.oracle
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
            if case.about and not re.search(case.about, str(err), re.IGNORECASE):
                raise ObscureCrash(f"{setup.name} / {name}: the message does not name the problem "
                                   f"(/{case.about}/): {type(err).__name__}: {err}") from err
            return "error"
        if not _same_inputs(call, before):
            raise SilentWrong(f"{setup.name} / {name}: the caller's arrays were changed")
        if expect == "error":
            raise SilentWrong(f"{setup.name} / {name}: accepted, expected a clear error")
        if not _finite(results):
            raise NaNModel(f"{setup.name} / {name}: results are not finite")
        if expect in ("same", "error_or_same") or (expect == "scaled" and setup.row_scale_invariant):
            reference = run(setup.make(), oracle)
            if not _equal_results(results, reference, exact=case.exact):
                raise SilentWrong(f"{setup.name} / {name}: the answer differs from the same problem in plain form")
        if expect == "same_labels":
            reference = run(setup.make(), oracle)
            for key, value in reference.items():
                expected = (np.array([case.relabel[v] for v in value.tolist()])
                            if key in ("predict", "transduction") else value)
                if not np.array_equal(results[key], expected):
                    raise SilentWrong(f"{setup.name} / {name}: renamed labels changed the answer ({key})")
        if _has_iterator(call):
            return "correct"  # consumed: nothing to refit or predict with
        # pickling, a second fit, and changing the training arrays afterwards change nothing
        restored = pickle.loads(pickle.dumps(est))
        if not _equal_results(_answers(restored, call), _answers(est, call), exact=True):
            raise SilentWrong(f"{setup.name} / {name}: predictions changed after a pickle round trip")
        # a copy of a strided array is contiguous, which may change the last bits of a fit
        same_layout = case.exact or not case.name.startswith("memory:")
        if not _equal_results(run(setup.make(), _snapshot(before)), results, exact=same_layout):
            raise SilentWrong(f"{setup.name} / {name}: a second fit on the same data gave another answer")
        kept = _answers(est, call)
        _mutate(call)
        if not _equal_results(_answers(est, call), kept, exact=True):
            raise SilentWrong(f"{setup.name} / {name}: changing the training arrays after fit changed the model")
    return "correct"


def classify(setup, case):
    """How ``case`` ends: ``("correct" | "error" | a failure kind, message)``."""
    try:
        return run_case(setup, case), ""
    except Failure as failure:
        return failure.kind, str(failure)
