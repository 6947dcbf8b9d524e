"""Metrics (AUC, mean AUC over tasks, accuracy, eps-insensitive loss) and ROC curves."""

from medmtl.evaluation.metrics import accuracy, auc, epsilon_insensitive_loss, mean_auc, roc_curve

__all__ = ["accuracy", "auc", "epsilon_insensitive_loss", "mean_auc", "roc_curve"]
