"""Every method on data nobody prepared for it reaches the direct solve's optimum, or refuses
clearly, and warns only beside an answer it cannot certify.

The cases (``own_data_cases.py``) are scikit-learn's bundled sets raw and transformed as a
user's own data comes: standardised, columns rescaled by 1e-4..1e4, duplicated and collinear
columns, one dominant column, near-separable with a large C, heavily imbalanced, tasks of very
different sizes; every (transform, model kind) pair once, on 80 rows.
``benchmarks/bench_own_data.py`` runs the whole matrix on every row and prints the table.
"""

import warnings

import numpy as np
import pytest

from medmtl.med.solvers import solve
from own_data_cases import rotation

CASES = dict(rotation())
METHODS = ("bound", "newton", "cd", "ssnal", "auto")


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_method_reaches_the_direct_optimum_without_a_warning(name):
    dual = CASES[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a warning here would sit beside a right answer
        reference = solve(dual, "direct")
        for method in METHODS:
            try:
                sol = solve(dual, method)
            except ValueError as err:
                # the one refusal: coordinate steps need explicit factors
                assert method == "cd" and dual.has_kernels, f"{method}: {err}"
                assert "method='newton'" in str(err)
                continue
            assert sol.objective == pytest.approx(reference.objective, rel=1e-6, abs=1e-12), method
            assert sol.info["duality_gap"] >= 0
            assert np.all((sol.lam >= dual.lo) & (sol.lam <= dual.hi))
