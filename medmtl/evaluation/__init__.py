"""Metrics (AUC, mean AUC over tasks, accuracy, eps-insensitive loss), ROC curves and the
paired t-test."""

from medmtl.evaluation.metrics import (accuracy, auc, epsilon_insensitive_loss, mean_auc, paired_t_test,
                                      roc_curve)

__all__ = ["accuracy", "auc", "epsilon_insensitive_loss", "mean_auc", "paired_t_test", "roc_curve"]
