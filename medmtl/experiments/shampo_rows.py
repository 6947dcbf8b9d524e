"""The results page's rows of the SHAMPO experiments, read from their committed full runs.

Every number comes from ``NAME.json``; each row names the rule that chose what it reports and
sets the paper's number beside it where the paper gives one.
"""

from __future__ import annotations

import numpy as np

from medmtl.experiments.report import Row, readme_rows


def _num(x, digits=2):
    return f"{x:.{digits}f}"


def _with_se(means, ses, digits=2):
    return " / ".join(f"{_num(m, digits)} ± {_num(s, digits)}" for m, s in zip(means, ses))


def _paper(values, digits=2):
    return " / ".join("—" if v is None else _num(v, digits) for v in values)


@readme_rows("shampo-table1")
def _table1_rows(result):
    collections = " / ".join(result.x)
    n = len(result.extra["problems"]) if "problems" in result.extra else "all"
    experiment = (f"`shampo-table1` (SHAMPO Table 1): mean test error % ± standard error over problems "
                  f"({n} problems), {collections}; then the mean score rank")
    ranks = result.extra["score_ranks"]["mean score"]
    rank_se = result.extra["score_ranks_standard_error"]["mean score"]
    paper_ranks = result.extra["paper_score_ranks"]["mean score"]
    rows = []
    for i, method in enumerate(result.measured):
        tuned = "SHAMPO" in method
        rule = (result.extra["selection"]["rule"].split(";")[0] if tuned
                else "fixed a priori (exploit: b -> 0; uniform: b -> inf)")
        measured = (f"{_with_se(result.measured[method], result.measured_std[method])}; rank "
                    f"{_num(ranks[i])} ± {_num(rank_se[i])}")
        paper = f"{_paper(result.paper[method])}; rank {_num(paper_ranks[i], 1)}"
        rows.append(Row(experiment, method, rule, measured, paper))
    cells = result.extra["against_paper"]["cells"]
    rows.append(Row(experiment, "cells within 2 standard errors of the paper", "—",
                    f"{sum(c['within_2se'] for c in cells)} of {len(cells)}"))
    return rows


def _lowest(result, name, digits=2):
    means, ses = np.asarray(result.measured[name]), np.asarray(result.measured_std[name])
    i = int(np.argmin(means))
    return f"{_num(means[i], digits)} ± {_num(ses[i], digits)} at b = {result.x[i]:.3g}"


@readme_rows("shampo-b-sweep")
def _b_sweep_rows(result):
    experiment = ("`shampo-b-sweep` (SHAMPO Fig. 3c): USPS one-vs-one, mean test error % ± standard "
                  "error against b; the lowest point of each curve")
    rule = result.extra["selection"]["rule"]
    rows = [Row(experiment, variant, rule, _lowest(result, variant)) for variant in result.measured]
    rows[-1] = Row(experiment, rows[-1].method, rule, rows[-1].measured, result.extra["paper_text"])
    return rows


@readme_rows("shampo-queries")
def _queries_rows(result):
    extra = result.extra
    experiment = ("`shampo-queries` (SHAMPO Fig. 4): MNIST one-vs-one; training mistakes against b (a), "
                  "mean test error ± standard error of three query allocations (b)")
    rule = extra["selection"]["rule"]
    against = extra["against_paper"]
    rows = [Row(experiment, f"{name} fraction, lowest over b", rule, _lowest(result, name, 3))
            for name in result.measured]
    errors = " / ".join(f"{k} {_num(v)} ± {_num(extra['mean_test_error_standard_error'][k])}"
                        for k, v in extra["mean_test_error"].items())
    rows.append(Row(experiment, "mean test error %", rule,
                    f"{errors}; uniform queries per task {against['uniform_queries_per_task']:.1f}",
                    extra["paper_text"]))
    return rows


@readme_rows("shampo-bandits")
def _bandit_rows(result):
    experiment = (f"`shampo-bandits` (SHAMPO Sec. 6): test error % ± standard error; "
                  f"{' / '.join(result.x)}")
    rule = result.extra["selection"]["rule"]
    paper = result.extra["paper_vowel_data"]
    paper_text = (" / ".join(_paper([paper.get(x)], 1) for x in result.x)
                  + f" ({result.extra['paper_note']})")
    return [Row(experiment, passes, rule, _with_se(result.measured[passes], result.measured_std[passes]),
                paper_text if passes == "one pass" else "—")
            for passes in result.measured]
