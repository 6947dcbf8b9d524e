"""The results page's rows of the AMLC experiments, read from their committed full runs."""

from __future__ import annotations

from medmtl.experiments.amlc import DATASETS, LEARNERS, TUNED
from medmtl.experiments.report import Row, fmt, readme_rows


def _by_data(values, digits=4):
    return " / ".join(fmt(v, digits) for v in values)


@readme_rows("amlc-table1")
def _table1_readme_rows(result):
    n = result.settings["n_shuffles"]
    extra = result.extra
    experiment = (f"`amlc-table1` (AMLC Table 1): {' / '.join(result.x)}, {n} shuffles; pooled test accuracy, "
                  "balanced accuracy, mean test AUC over tasks, queries (mean over shuffles)")
    rows = [Row(experiment, "majority-class rate of the test sets (predicting the commoner label everywhere)",
                "nothing to choose", _by_data(next(iter(extra["majority_rate"].values()))["mean"]))]
    for learner in result.measured:
        if learner in TUNED:
            rule = "C by 10-fold cross-validation accuracy on the training data"
        elif learner.endswith("(code)"):
            rule = "nothing to choose (the code's b = 1, bq = 5, C = 1)"
        else:
            rule = "nothing to choose (b = 1)"
        share = extra["query_share"][learner]
        measured = (f"accuracy {_by_data(result.measured[learner])} "
                    f"(95% CI ± {_by_data(result.measured_std[learner])}); "
                    f"balanced {_by_data(extra['balanced_accuracy'][learner]['mean'])}; AUC "
                    f"{_by_data(extra['auc_task_mean'][learner]['mean'])}; queries "
                    f"{_by_data(extra['queries'][learner]['mean'], 0)} "
                    f"(share of stream {_by_data(share['mean'], 3)})")
        if learner in extra["paper_rows"]:
            paper = (f"accuracy {_by_data(result.paper[learner])}; queries "
                     f"{_by_data(extra['paper_queries'][learner], 0)} (share "
                     f"{_by_data(extra['paper_query_share'][learner], 3)})")
        else:
            paper = "— (the paper's numbers come from the code flavour)"
        rows.append(Row(experiment, learner, rule, measured, paper))
    if extra["one_class_predictors"]:
        rows.append(Row(experiment, "predicts one label on (nearly) every test example", "—",
                        ", ".join(extra["one_class_predictors"])))
    return rows


@readme_rows("amlc-budget")
def _budget_readme_rows(result):
    n = result.settings["n_shuffles"]
    budgets = result.extra["budgets"]
    experiment = (f"`amlc-budget` (AMLC Fig. 1): {' / '.join(DATASETS)}, {n} shuffles; pooled test accuracy "
                  f"at the largest budget ({' / '.join(str(budgets[d][-1]) for d in DATASETS)} labels)")
    rows = []
    for learner in LEARNERS:
        last = [result.measured[f"{d}: {learner}"][-1] for d in DATASETS]
        spread = [result.measured_std[f"{d}: {learner}"][-1] for d in DATASETS]
        spent = [result.extra["queries"][f"{d}: {learner}"][-1] for d in DATASETS]
        rows.append(Row(experiment, learner, "C as chosen for amlc-table1" if learner in TUNED else "nothing to choose",
                        f"accuracy {_by_data(last)} (95% CI ± {_by_data(spread)}); labels used "
                        f"{_by_data(spent, 0)}",
                        "curves only"))
    return rows
