"""MTS3FLC and S3FLC: semi-supervised semantic features by (joint) NMTF (Du et al., ICDM 2012)."""

from medmtl.nmtf.baselines import PooledLogisticRegression, SingleTaskLogisticRegression
from medmtl.nmtf.init import plsa
from medmtl.nmtf.mts3flc import MTS3FLC, S3FLC
from medmtl.nmtf.updates import objective

__all__ = ["MTS3FLC", "S3FLC", "SingleTaskLogisticRegression", "PooledLogisticRegression",
           "plsa", "objective"]
