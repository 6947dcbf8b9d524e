"""Online multi-task learners: SHAMPO and its bandit reductions, the Banditron, AMLC, PEER.

Every learner follows one protocol (:class:`~medmtl.online.base.OnlineLearner`:
``learn_one``, ``predict_one``, ``fit``, ``predict``, ``score``) and gets labels only
through a :class:`LabelOracle`, which counts each query. Streams are
:class:`MultiTaskStream` objects; :mod:`medmtl.online.rows` holds the row kernels of the
compiled loops. ``docs/extending/add_an_online_learner.md`` shows how to add a learner.

A person can be the annotator: :class:`CallableOracle` asks a callable one :class:`Query`
at a time, and :class:`AnnotatorSession` puts SHAMPO's questions to buttons in a notebook.
:class:`RiverClassifier` (needs river, imported on first use) lets river's evaluation and
pipelines drive the per-example learners.
"""

from medmtl.online.oracle import (BudgetExhausted, CallableOracle, LabelOracle, PairFeedbackOracle, Query,
                                  QueryPending, one_vs_one_pairs, one_vs_rest_oracle)
from medmtl.online.streams import MultiTaskStream, row_norms, scale_to_unit_ball
from medmtl.online.base import MulticlassLearner, MultiTaskLearner, OnlineLearner
from medmtl.online.shampo import SHAMPO, perceptron_mistake_prior
from medmtl.online.kernel_shampo import KernelSHAMPO
from medmtl.online.bandits import Banditron, OneVsOneBandit, OneVsRestBandit, round_robin_predict
from medmtl.online.independent import IndependentQuery, RandomQuery
from medmtl.online.amlc import AMLC
from medmtl.online.peer import PEER, PEERShare
from medmtl.online.annotator_widget import AnnotatorSession

__all__ = [
    "LabelOracle", "BudgetExhausted", "CallableOracle", "Query", "QueryPending", "AnnotatorSession",
    "RiverClassifier", "PairFeedbackOracle", "one_vs_one_pairs", "one_vs_rest_oracle",
    "MultiTaskStream", "row_norms", "scale_to_unit_ball",
    "OnlineLearner", "MultiTaskLearner", "MulticlassLearner",
    "SHAMPO", "KernelSHAMPO", "perceptron_mistake_prior",
    "OneVsRestBandit", "OneVsOneBandit", "Banditron", "round_robin_predict",
    "AMLC", "RandomQuery", "IndependentQuery", "PEER", "PEERShare",
]


def __getattr__(name):
    # river is optional and slow-ish to import: RiverClassifier is imported on first use.
    if name == "RiverClassifier":
        from medmtl.online.river_compat import RiverClassifier

        return RiverClassifier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
