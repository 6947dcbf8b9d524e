"""The ConvergenceWarning's advice names a method that takes the dual."""

import numpy as np

from medmtl.med.builders import feature_selection_dual, svm_dual
from medmtl.med.solvers.registry import _advice


def test_kernel_duals_are_sent_to_bound_not_ssnal():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    dual = svm_dual([X], [np.where(X[:, 0] > 0, 1, -1)], kernel="rbf")
    assert dual.has_kernels
    advice = _advice(dual, "newton")
    assert "method='bound'" in advice and "method='ssnal'" not in advice


def test_factor_duals_are_sent_to_ssnal_with_bound_as_the_fallback():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4)) * [1e-3, 1.0, 1e2, 1e3]
    advice = _advice(feature_selection_dual([X], [np.where(X[:, 1] > 0, 1, -1)], C=1.0, alpha=1.0), "cd")
    assert "method='ssnal'" in advice and "method='bound' takes any dual" in advice
