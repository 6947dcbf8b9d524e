"""The methods medmtl's experiments compare MED against, outside the MED family.

* :mod:`medmtl.baselines.svm` - independent and pooled libsvm SVMs, chosen on validation AUC.
* :mod:`medmtl.baselines.sparse_linear` - l1 / MCP logistic regression (liblinear, skglm) and
  the multi-task group lasso (skglm).
"""

from medmtl.baselines.sparse_linear import (group_design, group_lasso_fit, l1_logistic_regression, logistic_alpha_max,
                                            sparse_logistic_fit)
from medmtl.baselines.svm import SVC_TOL, independent_svm_scores, independent_svm_select, pooled_svm_scores

__all__ = ["SVC_TOL", "independent_svm_select", "independent_svm_scores", "pooled_svm_scores",
           "l1_logistic_regression", "logistic_alpha_max", "sparse_logistic_fit", "group_design",
           "group_lasso_fit"]
