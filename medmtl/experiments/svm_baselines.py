"""The baselines' former home; they live in :mod:`medmtl.baselines` (the benchmarks still
import them from here)."""

from medmtl.baselines.sparse_linear import l1_logistic_regression
from medmtl.baselines.svm import SVC_TOL, independent_svm_scores, independent_svm_select, pooled_svm_scores

__all__ = ["SVC_TOL", "independent_svm_select", "independent_svm_scores", "pooled_svm_scores",
           "l1_logistic_regression"]
