"""Online multi-task learners: SHAMPO and its bandit reductions, the Banditron, AMLC, PEER.

Every learner follows one protocol (:class:`~medmtl.online.base.OnlineLearner`:
``learn_one``, ``predict_one``, ``fit``, ``predict``, ``score``) and gets labels only
through a :class:`LabelOracle`, which counts each query. Streams are
:class:`MultiTaskStream` objects; :mod:`medmtl.online.rows` holds the row kernels of the
compiled loops. ``docs/extending/add_an_online_learner.md`` shows how to add a learner.
"""

from medmtl.online.oracle import (BudgetExhausted, LabelOracle, PairFeedbackOracle, one_vs_one_pairs,
                                  one_vs_rest_oracle)
from medmtl.online.streams import MultiTaskStream, row_norms, scale_to_unit_ball
from medmtl.online.base import MulticlassLearner, MultiTaskLearner, OnlineLearner
from medmtl.online.shampo import SHAMPO, perceptron_mistake_prior
from medmtl.online.kernel_shampo import KernelSHAMPO
from medmtl.online.bandits import Banditron, OneVsOneBandit, OneVsRestBandit, round_robin_predict
from medmtl.online.independent import IndependentQuery, RandomQuery
from medmtl.online.amlc import AMLC
from medmtl.online.peer import PEER, PEERShare

__all__ = [
    "LabelOracle", "BudgetExhausted", "PairFeedbackOracle", "one_vs_one_pairs", "one_vs_rest_oracle",
    "MultiTaskStream", "row_norms", "scale_to_unit_ball",
    "OnlineLearner", "MultiTaskLearner", "MulticlassLearner",
    "SHAMPO", "KernelSHAMPO", "perceptron_mistake_prior",
    "OneVsRestBandit", "OneVsOneBandit", "Banditron", "round_robin_predict",
    "AMLC", "RandomQuery", "IndependentQuery", "PEER", "PEERShare",
]
