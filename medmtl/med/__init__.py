"""Maximum entropy discrimination (MED): the dual, the log bound, solvers and estimators.

Layout (mirrors the mathematics of Jebara, JMLR 2011):

* :mod:`medmtl.med.dual` - :class:`MEDDual`, the one concave dual every MED model reduces to.
* :mod:`medmtl.med.builders` - the models as duals (SVM, feature / kernel selection, adaptive
  pooling, regression, Ising structure).
* :mod:`medmtl.med.grams` - the dual's Gram matrices, as factors or kernels on demand.
* :mod:`medmtl.med.bound` - Theorem 1's quadratic bound (switch posterior, curvature G).
* :mod:`medmtl.med.solvers` - ``solve(dual, method, *, solver, options, init)``: ``"auto"``
  (the default), ``"newton"`` (projected Newton, SMO subproblems), ``"cd"`` (coordinate
  steps in feature space), ``"bound"`` (Algorithm 1) and ``"direct"`` (CVXPY, the
  reference); new methods plug in with ``register_method``
  (see ``docs/extending/add_a_solver.md``). ``MEDDual.to_cvxpy()`` opens the problem itself.
* :mod:`medmtl.med.estimators` - the scikit-learn style estimators.
* :mod:`medmtl.med.cv` - the estimators with ``C`` and ``alpha`` chosen by cross-validation
  within tasks (:class:`MultiTaskMEDClassifierCV` and the others), each fold a warm-started
  path on one dual.
* :mod:`medmtl.med.path` - :func:`med_path`, an estimator fitted along a path of ``C`` and
  ``alpha`` on one dual, each point warm-started from the previous one.
* :mod:`medmtl.med.graphical` - :class:`MEDGraphicalModel`, structure estimation of an Ising
  graph with one switch per edge (JMLR Section 12).
"""

from .builders import (
    adaptive_pooling_dual,
    feature_selection_dual,
    ising_structure_dual,
    kernel_selection_dual,
    svm_dual,
)
from .cv import (
    AdaptivePoolingClassifierCV,
    MEDClassifierCV,
    MEDRegressorCV,
    MultiTaskMEDClassifierCV,
    MultiTaskMEDRegressorCV,
)
from .dual import MEDDual
from .estimators import (
    AdaptivePoolingClassifier,
    MEDClassifier,
    MEDRegressor,
    MultiTaskMEDClassifier,
    MultiTaskMEDRegressor,
    TaskClassifier,
)
from .graphical import MEDGraphicalModel
from .grams import factorize_gram
from .path import MEDPath, med_path
from .solvers import METHODS, MEDSolution, Method, get_method, register_method, solve

__all__ = [
    "MEDDual",
    "svm_dual",
    "feature_selection_dual",
    "kernel_selection_dual",
    "adaptive_pooling_dual",
    "ising_structure_dual",
    "factorize_gram",
    "solve",
    "get_method",
    "register_method",
    "Method",
    "METHODS",
    "MEDSolution",
    "MEDClassifier",
    "MEDRegressor",
    "MultiTaskMEDClassifier",
    "TaskClassifier",
    "MultiTaskMEDRegressor",
    "AdaptivePoolingClassifier",
    "MEDClassifierCV",
    "MEDRegressorCV",
    "MultiTaskMEDClassifierCV",
    "MultiTaskMEDRegressorCV",
    "AdaptivePoolingClassifierCV",
    "MEDGraphicalModel",
    "med_path",
    "MEDPath",
]
