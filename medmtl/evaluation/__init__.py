"""Scores across tasks: the mean AUC over tasks (MAUC), the eps-insensitive loss and the paired
t-test with its mean difference and standard error.

One task's AUC and ROC curve are scikit-learn's :func:`~sklearn.metrics.roc_auc_score` and
:func:`~sklearn.metrics.roc_curve`.
"""

from medmtl.evaluation.metrics import epsilon_insensitive_loss, mean_auc, paired_t_test

__all__ = ["mean_auc", "epsilon_insensitive_loss", "paired_t_test"]
