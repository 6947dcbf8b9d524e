"""medmtl: multi-task learning by maximum entropy discrimination.

Subpackages
-----------
datasets     loaders for the bundled real data, ``MultiTaskDataset`` and splits
kernels      linear, polynomial, RBF and per-feature kernels, and banks of them
med          the MED dual, the quadratic log bound (Algorithm 1), solvers and estimators
online       SHAMPO, its bandit reductions, AMLC and PEER
nmtf         MTS3FLC and S3FLC
evaluation   AUC, mean AUC over tasks, ROC curves
experiments  one module per paper figure or table, and the ``medmtl`` command line
"""

__version__ = "0.1.0"
