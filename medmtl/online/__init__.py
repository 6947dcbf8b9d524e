"""Online multi-task learners: SHAMPO and its bandit reductions, the Banditron, AMLC, PEER.

Every learner gets labels only through a :class:`LabelOracle`, which counts each query.
"""

from medmtl.online.oracle import BudgetExhausted, LabelOracle
from medmtl.online.linear import MultiTaskStream, add_row, row_dot, row_norms, rows_dot, rows_gram, scale_to_unit_ball
from medmtl.online.amlc import AMLC, IndependentQuery, RandomQuery, stream_from_tasks
from medmtl.online.peer import PEER, PEERShare
from medmtl.online.shampo import SHAMPO, KernelSHAMPO, perceptron_mistake_prior
from medmtl.online.bandits import (Banditron, OneVsOneBandit, OneVsRestBandit, PairFeedbackOracle,
                                   one_vs_one_pairs, one_vs_rest_oracle, round_robin_predict)

__all__ = [
    "LabelOracle", "BudgetExhausted", "MultiTaskStream", "add_row", "row_dot", "row_norms",
    "rows_dot", "rows_gram", "scale_to_unit_ball", "AMLC", "IndependentQuery", "RandomQuery",
    "stream_from_tasks", "PEER", "PEERShare", "SHAMPO", "KernelSHAMPO",
    "perceptron_mistake_prior", "Banditron", "OneVsOneBandit", "OneVsRestBandit",
    "PairFeedbackOracle", "one_vs_one_pairs", "one_vs_rest_oracle", "round_robin_predict",
]
