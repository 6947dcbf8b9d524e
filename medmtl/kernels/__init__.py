"""Mercer kernels and banks of them for MED kernel selection.

A kernel is anything callable as ``k(A, B) -> Gram matrix`` of shape
``(A.shape[0], B.shape[0])``. The classes here add two things the MED solvers use: a name,
and, where one exists, an explicit feature map (``feature_map(X)``) so that a linear or
per-feature kernel is handled in feature space and no n x n matrix is ever formed.

Linear and polynomial kernels accept dense arrays and ``scipy.sparse`` matrices alike.

The modules: :mod:`~medmtl.kernels.base` (the protocol, the elementary kernels and
:func:`get_kernel`), :mod:`~medmtl.kernels.combined` (scaled and weighted-sum kernels, the
kernel distance) and :mod:`~medmtl.kernels.banks` (banks and :func:`gram`).
"""

from medmtl.kernels.banks import gram, per_feature_kernels, polynomial_bank, rbf_bank
from medmtl.kernels.base import (CallableKernel, Kernel, LinearKernel, PerFeatureKernel, PolynomialKernel,
                                 RBFKernel, SigmoidKernel, get_kernel, get_kernels)
from medmtl.kernels.combined import KernelDistance, ScaledKernel, WeightedSumKernel

__all__ = [
    "Kernel",
    "LinearKernel",
    "PolynomialKernel",
    "RBFKernel",
    "SigmoidKernel",
    "PerFeatureKernel",
    "ScaledKernel",
    "CallableKernel",
    "WeightedSumKernel",
    "KernelDistance",
    "get_kernel",
    "get_kernels",
    "rbf_bank",
    "polynomial_bank",
    "per_feature_kernels",
    "gram",
]
