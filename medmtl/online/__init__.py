"""Online multi-task learners: SHAMPO and its bandit reductions, the Banditron, AMLC, PEER.

Every learner follows one protocol (:class:`~medmtl.online.base.OnlineLearner`:
``learn_one``, ``query_one``, ``predict_one``, ``fit``, ``predict``, ``score``), with one
base class per round shape (:class:`EveryTaskLearner`, :class:`OneTaskLearner`,
:class:`MulticlassLearner`), and gets labels only through a :class:`LabelOracle`, which
counts each query. Streams are
:class:`MultiTaskStream` objects; :mod:`medmtl.online.rows` holds the row kernels of the
compiled loops. ``docs/extending/add_an_online_learner.md`` shows how to add a learner.

A person can be the annotator: a round's questions come from ``query_one`` and its answers
go to ``learn_one(x, answers=...)``; :class:`CallableOracle` asks a callable each
:class:`Query`, and :class:`AnnotatorSession` puts SHAMPO's questions to buttons in a notebook.
:class:`RiverClassifier` (needs river, imported on first use) lets river's evaluation and
pipelines drive the per-example learners.
"""

from medmtl.online.oracle import BudgetExhausted, LabelOracle, PairFeedbackOracle, one_vs_one_pairs, one_vs_rest_oracle
from medmtl.online.live import CallableOracle, Query
from medmtl.online.streams import MultiTaskStream, row_norms, scale_to_unit_ball
from medmtl.online.base import EveryTaskLearner, MultiTaskLearner, OneTaskLearner, OnlineLearner
from medmtl.online.multiclass import MulticlassLearner
from medmtl.online.shampo import SHAMPO, perceptron_mistake_prior
from medmtl.online.kernel_shampo import KernelSHAMPO
from medmtl.online.bandits import Banditron, OneVsOneBandit, OneVsRestBandit, round_robin_predict
from medmtl.online.independent import IndependentQuery, RandomQuery
from medmtl.online.amlc import AMLC
from medmtl.online.peer import PEER, PEERShare
from medmtl.online.annotator_widget import AnnotatorSession

__all__ = [
    "LabelOracle", "BudgetExhausted", "CallableOracle", "Query", "AnnotatorSession",
    "RiverClassifier", "PairFeedbackOracle", "one_vs_one_pairs", "one_vs_rest_oracle",
    "MultiTaskStream", "row_norms", "scale_to_unit_ball",
    "OnlineLearner", "MultiTaskLearner", "EveryTaskLearner", "OneTaskLearner", "MulticlassLearner",
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
