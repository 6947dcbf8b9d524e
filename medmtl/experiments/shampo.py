"""SHAMPO (Cohen & Crammer, NIPS 2014): Table 1, Fig. 3(c), Fig. 4 and the bandit section.

Protocol shared by the experiments
----------------------------------
- Binary tasks come from USPS (its train split for training and validation, its test split
  for testing), MNIST (only its 10,000-image test split is bundled: it is split, stratified
  by digit, into 6,000 training, 1,000 validation and 3,000 test images), and document
  tasks (15 spam users, 4 sentiment domains, 8 20-Newsgroups category pairs; each task
  split 60 / 15 / 25 % into train / validation / test).
- A multi-task problem's training stream has as many rounds as its largest task; smaller
  tasks walk through fresh random permutations of their examples when they run out
  (``MultiTaskStream.from_tasks(align="cycle")``). One pass; inputs scaled to unit norm.
- SHAMPO's b is chosen from the grid on the validation split (mean validation error over
  the problem's tasks); never on the test split. Test error is the mean over tasks.
- Test labels pass through :func:`~medmtl.experiments.leakage.guard_test_labels` where each
  task's split is made, and every result records what it chose (or fixed a priori) in
  ``extra["selection"]``. Training labels the learner never queried (Fig. 4(a) scores its
  mistakes on them) are used for scoring only and pass through the guard too.
- The paper's vowel (VJ) data is not available: its rows of Table 1 are not reproduced,
  MIXED draws its tasks from USPS, MNIST and the documents only, and the bandit section
  uses USPS (10 classes) instead of the 8 vowels.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from medmtl.experiments.leakage import guard_test_labels
from medmtl.experiments.registry import register
from medmtl.experiments.result import ExperimentResult
from medmtl.experiments.runner import RunOptions, run_grid

B_GRID = [float(b) for b in np.logspace(-4, 2, 13)]
B_GRID_QUICK = [1e-3, 1e-2, 1e-1, 1.0]

# Table 1 of the paper (test error %, score rank); the VJ rows have no counterpart here.
PAPER_TABLE1 = {
    "USPS 1 vs 1": [3.31, 2.73, 19.29, 3.37, 4.83, 5.33],
    "USPS 1 vs Rest": [5.45, 4.93, 10.12, 5.31, 6.51, 7.06],
    "MNIST 1 vs 1": [1.08, 0.75, 5.9, 1.2, 1.69, 1.94],
    "MNIST 1 vs Rest": [4.74, 3.88, 10.01, 4.44, 5.4, 6.1],
    "NLP documents": [19.43, 16.5, 23.21, 19.46, 21.54, 21.74],
    "MIXED": [2.75, 2.06, 13.59, 2.78, 4.2, 4.45],
}
PAPER_RANKS = {"mean score": [2.7, 1.1, 5.2, 2.6, 4.3, 5.2]}
METHODS = ["aggressive exploit", "aggressive SHAMPO", "aggressive uniform",
           "plain exploit", "plain SHAMPO", "plain uniform"]
COLLECTIONS = list(PAPER_TABLE1)
PAPER_BANDITS_VOWEL = {"one-vs-rest": 43.5, "one-vs-one-random": 42.5, "one-vs-one-weak": 39.4,
                       "Banditron": 43.5}


# --------------------------------------------------------------------------- data
def _stratified_three_way(labels, n_train, n_val, rng):
    """Indices of a stratified train / validation / test split (fractions of each class)."""
    tr, va, te = [], [], []
    n = labels.size
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        a = int(round(idx.size * n_train / n))
        b = a + int(round(idx.size * n_val / n))
        tr.append(idx[:a])
        va.append(idx[a:b])
        te.append(idx[b:])
    return [np.sort(np.concatenate(part)) for part in (tr, va, te)]


@lru_cache(maxsize=4)
def _digits(name, seed):
    """(X, labels) for the train, validation and test parts of USPS or MNIST."""
    from medmtl.datasets import load_mnist_test, load_usps

    rng = np.random.default_rng([seed, 11])
    if name == "USPS":
        X, lab = load_usps("train")
        Xt, lab_t = load_usps("test")
        tr, va, _ = _stratified_three_way(lab, int(0.85 * lab.size), lab.size - int(0.85 * lab.size), rng)
        return (X[tr], lab[tr]), (X[va], lab[va]), (Xt, lab_t)
    X, lab = load_mnist_test()
    tr, va, te = _stratified_three_way(lab, 6000, 1000, rng)
    return (X[tr], lab[tr]), (X[va], lab[va]), (X[te], lab[te])


def _cap(X, y, cap, rng):
    if cap is None or y.size <= cap:
        return X, y
    idx = np.sort(rng.choice(y.size, cap, replace=False))
    return X[idx], y[idx]


def _digit_tasks(name, scheme, seed, cap_train=None, cap_test=None):
    """Binary tasks (name, train, val, test) of one digit collection; test labels guarded."""
    parts = _digits(name, seed)
    rng = np.random.default_rng([seed, 12])
    if scheme == "1 vs 1":
        specs = [((a,), (b,), f"{name} {a} vs {b}") for a in range(10) for b in range(a + 1, 10)]
    else:
        specs = [((c,), tuple(d for d in range(10) if d != c), f"{name} {c} vs rest") for c in range(10)]
    tasks = []
    for pos, neg, label in specs:
        split = []
        for k, (X, lab) in enumerate(parts):
            keep = np.isin(lab, pos + neg)
            y = np.where(np.isin(lab[keep], pos), 1, -1)
            split.append(_cap(X[keep], y, cap_train if k < 2 else cap_test, rng))
        split[2] = (split[2][0], guard_test_labels(split[2][1]))
        tasks.append((label, *split))
    return tasks


@lru_cache(maxsize=2)
def _document_tasks(seed, quick):
    """Spam users, sentiment domains and 20 Newsgroups pairs, each split 60 / 15 / 25 %."""
    from medmtl.datasets import load_spam

    datasets = [load_spam()]
    if not quick:
        from medmtl.datasets import load_sentiment
        from medmtl.datasets.newsgroups_tasks import orderly_problem

        datasets.append(load_sentiment())
        for first, second in [("comp", "rec"), ("sci", "talk")]:
            datasets.append(orderly_problem(first, second))
    tasks = []
    for k, ds in enumerate(datasets):
        train, val, test = ds.split(train=0.6, validation=0.375, random_state=[seed, 13, k])
        for tr, va, te in zip(train, val, test):
            tasks.append((f"{ds.name}: {tr.name}", (tr.X, tr.y), (va.X, va.y), (te.X, te.y)))
    return tasks


def _documents(seed, quick):
    """The document tasks of :func:`_document_tasks` with their test labels guarded (outside
    its cache, so that a relabelled run never sees, nor leaves, guarded labels there)."""
    return [(name, tr, va, (te[0], guard_test_labels(te[1]))) for name, tr, va, te in _document_tasks(seed, quick)]


def _collection(name, seed, quick):
    cap_train, cap_test = (600, 400) if quick else (None, None)
    if name.startswith("USPS") or name.startswith("MNIST"):
        data, scheme = name.split(" ", 1)
        return _digit_tasks(data, "1 vs 1" if scheme == "1 vs 1" else "1 vs rest", seed, cap_train, cap_test)
    if name == "NLP documents":
        return _documents(seed, quick)
    if name == "MIXED":
        rng = np.random.default_rng([seed, 14])
        out = []
        for pool in (_digit_tasks("USPS", "1 vs 1", seed, cap_train, cap_test),
                     _digit_tasks("MNIST", "1 vs 1", seed, cap_train, cap_test),
                     _documents(seed, quick)):
            out += [pool[i] for i in rng.choice(len(pool), min(10, len(pool)), replace=False)]
        return out
    raise ValueError(f"unknown collection {name!r}")


def _problem(collection, index, seed, quick):
    """The tasks of problem ``index`` of a collection: 2 to 8 tasks drawn at random."""
    pool = _collection(collection, seed, quick)
    rng = np.random.default_rng([seed, 15, COLLECTIONS.index(collection), index])
    k = int(rng.integers(2, (4 if quick else 8) + 1))
    return [pool[i] for i in np.sort(rng.choice(len(pool), min(k, len(pool)), replace=False))]


# --------------------------------------------------------------------------- running
def _stream(tasks, seed):
    from medmtl.online.streams import MultiTaskStream

    stream, orders = MultiTaskStream.from_tasks([t[1][0] for t in tasks], align="cycle", random_state=seed)
    labels = [t[1][1][o] for t, o in zip(tasks, orders)]
    return stream, labels, orders


def _fit(stream, labels, seed, **params):
    from medmtl.online.oracle import LabelOracle
    from medmtl.online.shampo import SHAMPO

    oracle = LabelOracle(labels)
    model = SHAMPO(random_state=seed, **params).fit(stream, oracle)
    if oracle.n_queries != stream.n_rounds * model.n_queries:
        raise RuntimeError("the learner did not ask exactly one label per round")
    return model


def _errors(model, tasks, part):
    return model.errors([t[part][0] for t in tasks], [t[part][1] for t in tasks])


def _variant_runs(tasks, b_grid, repeats, seed, prior=None):
    """Validation and test error (mean over tasks and repeats) of every method and b."""
    out = {}
    for mode in ("aggressive", "plain"):
        agg = mode == "aggressive"
        for strategy, bs in (("exploit", [0.0]), ("uniform", [np.inf]), ("shampo", b_grid)):
            for b in bs:
                val = test = 0.0
                for r in range(repeats):
                    stream, labels, _ = _stream(tasks, [seed, r])
                    model = _fit(stream, labels, [seed, r, 1], b=b, aggressive=agg, strategy=strategy, prior=prior)
                    val += _errors(model, tasks, 2).mean() / repeats
                    test += _errors(model, tasks, 3).mean() / repeats
                out[(mode, strategy, b)] = (val, test)
    return out


def table1_cell(cell):
    """One multi-task problem of Table 1: the six methods' test errors (%).

    Parameters
    ----------
    cell : dict
        The cell's settings (collection, problem, seed, quick, b_grid (the b values chosen among on validation), repeats).
    """
    tasks = _problem(cell["collection"], cell["problem"], cell["seed"], cell["quick"])
    runs = _variant_runs(tasks, cell["b_grid"], cell["repeats"], cell["seed"])
    result = {"tasks": [t[0] for t in tasks], "rounds": int(max(t[1][1].size for t in tasks))}
    for mode in ("aggressive", "plain"):
        result[f"{mode} exploit"] = 100 * runs[(mode, "exploit", 0.0)][1]
        result[f"{mode} uniform"] = 100 * runs[(mode, "uniform", np.inf)][1]
        vals = [runs[(mode, "shampo", b)][0] for b in cell["b_grid"]]
        best = cell["b_grid"][int(np.argmin(vals))]
        result[f"{mode} SHAMPO"] = 100 * runs[(mode, "shampo", best)][1]
        result[f"{mode} SHAMPO b"] = best
        result[f"{mode} SHAMPO test by b"] = [100 * runs[(mode, "shampo", b)][1] for b in cell["b_grid"]]
        result[f"{mode} SHAMPO validation by b"] = [100 * v for v in vals]
    return result


def _ranks(rows):
    from scipy.stats import rankdata

    return np.array([rankdata([row[m] for m in METHODS]) for row in rows])


def _settings(quick, seed, **more):
    base = {"quick": quick, "seed": seed, "scaling": "every input to unit norm",
            "data": "USPS train (85 % train / 15 % validation) and test; MNIST test split only, "
                    "split 6000 / 1000 / 3000 stratified by digit; documents split 60 / 15 / 25 %",
            "stream": "one pass; rounds = largest task, smaller tasks cycle through fresh permutations",
            "selection": "b chosen on the validation split (mean error over tasks), never on test"}
    base.update(more)
    return base


@register("shampo-table1", "SHAMPO Table 1: test error and score ranks of exploit / SHAMPO / uniform")
def shampo_table1(options=RunOptions()):
    """Table 1: mean test error per collection of the six methods, and their score ranks.

    Parameters
    ----------
    options : RunOptions
        How to run: quick or full, seed, workers, cache.
    """
    quick, seed = options.quick, options.seed
    n_problems, repeats = (1, 1) if quick else (8, 3)
    b_grid = B_GRID_QUICK if quick else B_GRID
    cells = [{"collection": c, "problem": p, "seed": seed, "quick": quick, "b_grid": b_grid,
              "repeats": repeats} for c in COLLECTIONS for p in range(n_problems)]
    rows = run_grid(table1_cell, cells, name="shampo-table1", options=options)
    ranks = _ranks(rows)
    measured = {m: [] for m in METHODS}
    std = {m: [] for m in METHODS}
    rank_table = {}
    for c in COLLECTIONS:
        idx = [i for i, cell in enumerate(cells) if cell["collection"] == c]
        for m in METHODS:
            errs = [rows[i][m] for i in idx]
            measured[m].append(float(np.mean(errs)))
            std[m].append(float(np.std(errs)))
        rank_table[c] = ranks[idx].mean(axis=0).tolist()
    rank_table["mean score"] = ranks.mean(axis=0).tolist()
    paper = {m: [PAPER_TABLE1[c][k] for c in COLLECTIONS] for k, m in enumerate(METHODS)}
    result = ExperimentResult(
        name="shampo-table1",
        settings=_settings(quick, seed, problems_per_collection=n_problems, tasks_per_problem="2-8" if not quick else "2-4",
                           repeats=repeats, b_grid=b_grid, lam="b/2 (aggressive), 0 (plain)",
                           baselines="exploit = smallest |margin| (b -> 0, lambda = 0); uniform = b -> inf "
                                     "(aggressive: lambda = inf, every queried input updates)",
                           quick_caps="600 training / 400 test examples per task, spam only for documents"
                           if quick else None,
                           missing="VJ (vowel) rows: data not available; MIXED without VJ tasks"),
        x=COLLECTIONS, measured=measured, measured_std=std, paper=paper,
        xlabel="collection", ylabel="mean test error (%)",
        title="SHAMPO Table 1: test error per collection", extra={
            "selection": {
                "rule": "SHAMPO's b (aggressive and plain, per problem) from the grid by the mean validation "
                        "error over the problem's tasks; exploit (b -> 0) and uniform (b -> inf) fixed a priori",
                "b_grid": b_grid,
                "problems": [{"collection": cell["collection"], "problem": cell["problem"],
                              **{f"{mode} SHAMPO": {"b": row[f"{mode} SHAMPO b"],
                                                    "validation_error_by_b": row[f"{mode} SHAMPO validation by b"]}
                                 for mode in ("aggressive", "plain")}}
                             for cell, row in zip(cells, rows)]},
            "score_ranks": rank_table, "paper_score_ranks": PAPER_RANKS, "methods": METHODS,
            "problems": [{**cells[i], **rows[i]} for i in range(len(cells))]})
    return result, table1_figure(result)


def table1_figure(result):
    """Table 1 drawn as a table: collections down, methods across, measured (paper) in each cell.

    Each cell is coloured by the method's rank in its row (1 = lowest error); the last row
    holds the score ranks averaged over all problems. Built on a standalone figure (not
    pyplot), so a notebook shows it once, where it is displayed.

    Parameters
    ----------
    result : ExperimentResult
        What ``shampo-table1`` returns.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure
    from scipy.stats import rankdata

    methods = result.extra["methods"]
    rows = list(result.x) + ["mean score rank"]
    measured = np.array([[result.measured[m][i] for m in methods] for i in range(len(result.x))]
                        + [result.extra["score_ranks"]["mean score"]])
    paper = np.array([[result.paper[m][i] for m in methods] for i in range(len(result.x))]
                     + [result.extra["paper_score_ranks"]["mean score"]])
    ranks = np.array([rankdata(row) for row in measured])
    fig = Figure(figsize=(2.0 + 1.45 * len(methods), 1.2 + 0.55 * len(rows)))
    ax = fig.subplots()
    image = ax.imshow(ranks, cmap="RdYlGn_r", vmin=1, vmax=len(methods), aspect="auto", alpha=0.75)
    for i, row in enumerate(rows):
        for j in range(len(methods)):
            ax.text(j, i, f"{measured[i, j]:.2f}\n({paper[i, j]:.2f})", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(methods)), [m.replace(" ", "\n", 1) for m in methods], fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.tick_params(top=True, labeltop=True, bottom=False, labelbottom=False, length=0)
    ax.axhline(len(result.x) - 0.5, color="black", linewidth=1.5)
    ax.set_title("SHAMPO Table 1: test error (%), measured (paper); last row: mean score rank", fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label="rank in the row (1 = lowest)")
    return fig


# --------------------------------------------------------------------------- Fig. 3(c)
def b_sweep_cell(cell):
    """One USPS one-vs-one problem of Table 1: test error vs b of three SHAMPO variants.

    Parameters
    ----------
    cell : dict
        The cell's settings (seed, problem, repeats, quick, b_grid, prior_rounds).
    """
    from medmtl.online.oracle import LabelOracle
    from medmtl.online.shampo import perceptron_mistake_prior

    tasks = _problem("USPS 1 vs 1", cell["problem"], cell["seed"], cell["quick"])
    out = {"plain": 0, "aggressive": 0, "aggressive with prior": 0, "prior_labels": 0}
    for r in range(cell["repeats"]):
        stream, labels, _ = _stream(tasks, [cell["seed"], r])
        # The prior's labels are counted by their own annotator, on top of SHAMPO's one per round.
        prior_oracle = LabelOracle(labels)
        prior = perceptron_mistake_prior(stream, prior_oracle, n_rounds=cell["prior_rounds"])
        out["prior_labels"] += prior_oracle.n_queries
        for name, agg, pri in (("plain", False, None), ("aggressive", True, None),
                               ("aggressive with prior", True, prior)):
            errs = []
            for b in cell["b_grid"]:
                model = _fit(stream, labels, [cell["seed"], r, 1], b=b, aggressive=agg, prior=pri)
                errs.append(100 * _errors(model, tasks, 3).mean() / cell["repeats"])
            out[name] = np.add(out[name], errs).tolist()
    out["tasks"] = [t[0] for t in tasks]
    return out


@register("shampo-b-sweep", "SHAMPO Fig. 3(c): USPS one-vs-one mean test error vs b")
def shampo_b_sweep(options=RunOptions()):
    """Fig. 3(c): mean test error against b on the USPS one-vs-one problems.

    Parameters
    ----------
    options : RunOptions
        How to run: quick or full, seed, workers, cache.
    """
    quick, seed = options.quick, options.seed
    n_problems, repeats = (2, 1) if quick else (8, 3)
    b_grid = B_GRID_QUICK if quick else B_GRID
    cells = [{"seed": seed, "problem": p, "repeats": repeats, "quick": quick, "b_grid": b_grid,
              "prior_rounds": 300 if quick else 1000} for p in range(n_problems)]
    rows = run_grid(b_sweep_cell, cells, name="shampo-b-sweep", options=options)
    names = ["plain", "aggressive", "aggressive with prior"]
    measured = {n: np.mean([r[n] for r in rows], axis=0).tolist() for n in names}
    std = {n: np.std([r[n] for r in rows], axis=0).tolist() for n in names}
    return ExperimentResult(
        name="shampo-b-sweep",
        settings=_settings(quick, seed, problems="the USPS one-vs-one problems of shampo-table1 (2-8 tasks each)",
                           n_problems=n_problems, repeats=repeats, b_grid=b_grid,
                           prior_rounds=cells[0]["prior_rounds"],
                           prior="a_i = perceptron mistakes on the first rounds of task i (floored at 1); "
                                 "those labels are counted by a separate annotator (extra.prior_labels)"),
        x=b_grid, measured=measured, measured_std=std, paper={n: [None] * len(b_grid) for n in names},
        xlabel="b", ylabel="mean test error (%)", xscale="log",
        title="SHAMPO Fig. 3(c): USPS one-vs-one",
        extra={"selection": {"rule": "fixed a priori: every b of the grid is reported, as a curve; nothing is "
                                     "chosen", "b": b_grid, "variants": names,
                             "prior_rounds": cells[0]["prior_rounds"]},
               "prior_labels_per_problem": [r["prior_labels"] / repeats for r in rows],
               "tasks": [r["tasks"] for r in rows],
               "paper_text": "aggressive with prior 1.47 % vs 2.73 % without (USPS 1 vs 1); "
                             "the prior beats a_i = 1 for every b"})


# --------------------------------------------------------------------------- Fig. 4
def _scoring_labels(tasks, orders, model):
    """The training labels of every round and task (n_rounds, n_tasks), as Fig. 4(a) scores
    the mistakes: those of the training examples ``model`` never queried, which it used for
    scoring only, pass through :func:`guard_test_labels` (per task); the queried ones, which
    it learnt from, are kept."""
    n_rounds = len(orders[0])
    asked = np.zeros((n_rounds, len(tasks)), dtype=bool)
    asked[np.arange(n_rounds)[:, None], model.queried_tasks_] = True
    columns = []
    for k, (task, order) in enumerate(zip(tasks, orders)):
        y = task[1][1]
        unseen = np.ones(y.size, dtype=bool)
        unseen[order[asked[:, k]]] = False  # an example cycled in twice is seen if either round asked
        scored = y.copy()
        scored[unseen] = guard_test_labels(y[unseen])
        columns.append(scored[order])
    return np.column_stack(columns)


def queries_cell(cell):
    """MNIST one-vs-one, 45 tasks: training mistakes vs b, and queries vs test error.

    Parameters
    ----------
    cell : dict
        The cell's settings (seed, repeat, quick, b_grid).
    """
    tasks = _digit_tasks("MNIST", "1 vs 1", cell["seed"], *((600, 400) if cell["quick"] else (None, None)))
    stream, labels, orders = _stream(tasks, [cell["seed"], cell["repeat"]])
    total, queried = [], []
    for b in cell["b_grid"]:
        model = _fit(stream, labels, [cell["seed"], cell["repeat"], 3], b=b, aggressive=True)
        Y = _scoring_labels(tasks, orders, model)
        mistakes = Y * model.train_margins_ <= 0          # M_{i,t} of the paper, every task
        asked = np.take_along_axis(mistakes, model.queried_tasks_, axis=1)
        total.append(float(mistakes.mean()))
        queried.append(float(asked.mean()))
    per_task = {}
    # one update rule for the three (aggressive, lambda = 0.005 = b/2 of b = 0.01), so that only
    # the allocation of the labels differs
    for name, params in (("uniform", {"strategy": "uniform"}), ("exploit", {"strategy": "exploit"}),
                         ("SHAMPO b=0.01", {"b": 0.01})):
        model = _fit(stream, labels, [cell["seed"], cell["repeat"], 4], aggressive=True, lam=0.005, **params)
        per_task[name] = {"queries": model.queries_per_task_.tolist(),
                          "test_error": (100 * _errors(model, tasks, 3)).tolist()}
    return {"total": total, "queried": queried, "per_task": per_task, "rounds": stream.n_rounds,
            "tasks": [t[0] for t in tasks]}


def _queries_figure(b_grid, total, queried, per_task):
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(b_grid, total, "b-o", label="total (all examples)")
    ax1.plot(b_grid, queried, "r--s", label="queried examples")
    ax1.set_xscale("log")
    ax1.set_xlabel("b")
    ax1.set_ylabel("fraction of training mistakes")
    ax1.set_title("Fig. 4(a): MNIST one-vs-one, aggressive SHAMPO")
    ax1.legend()
    ax1.grid(alpha=0.3)
    for (name, d), marker in zip(per_task.items(), "o^s"):
        ax2.scatter(d["queries"], d["test_error"], marker=marker, label=name, alpha=0.7)
    ax2.set_xlabel("queries per task")
    ax2.set_ylabel("test error (%)")
    ax2.set_title("Fig. 4(b): test error vs queries, 45 tasks")
    ax2.legend()
    ax2.grid(alpha=0.3)
    return fig


@register("shampo-queries", "SHAMPO Fig. 4: training mistakes vs b; queries vs test error (MNIST)")
def shampo_queries(options=RunOptions()):
    """Fig. 4: training mistakes against b, and test error against queries per task.

    Parameters
    ----------
    options : RunOptions
        How to run: quick or full, seed, workers, cache.
    """
    quick, seed = options.quick, options.seed
    repeats = 1 if quick else 3
    b_grid = B_GRID_QUICK if quick else B_GRID
    cells = [{"seed": seed, "repeat": r, "quick": quick, "b_grid": b_grid} for r in range(repeats)]
    rows = run_grid(queries_cell, cells, name="shampo-queries", options=options)
    total = np.mean([r["total"] for r in rows], axis=0).tolist()
    queried = np.mean([r["queried"] for r in rows], axis=0).tolist()
    per_task = {name: {k: np.mean([r["per_task"][name][k] for r in rows], axis=0).tolist()
                       for k in ("queries", "test_error")} for name in rows[0]["per_task"]}
    result = ExperimentResult(
        name="shampo-queries",
        settings=_settings(quick, seed, tasks="all 45 MNIST one-vs-one tasks in one problem",
                           repeats=repeats, b_grid=b_grid, variant="aggressive (lambda = b/2)",
                           fig4b="uniform, exploit and b = 0.01 all with the update rule of b = 0.01 "
                                 "(aggressive, lambda = 0.005)",
                           rounds=rows[0]["rounds"]),
        x=b_grid, measured={"total mistakes": total, "queried mistakes": queried},
        measured_std={"total mistakes": np.std([r["total"] for r in rows], axis=0).tolist(),
                      "queried mistakes": np.std([r["queried"] for r in rows], axis=0).tolist()},
        paper={"total mistakes": [None] * len(b_grid), "queried mistakes": [None] * len(b_grid)},
        xlabel="b", ylabel="fraction of training mistakes", xscale="log",
        title="SHAMPO Fig. 4(a): MNIST one-vs-one",
        extra={"selection": {"rule": "fixed a priori: every b of the grid is reported, as a curve; Fig. 4(b) "
                                     "compares three allocations at one setting; nothing is chosen",
                             "b": b_grid, "fig4b": {"aggressive": True, "lam": 0.005, "SHAMPO b": 0.01}},
               "per_task": per_task, "tasks": rows[0]["tasks"],
               "mean_test_error": {k: float(np.mean(v["test_error"])) for k, v in per_task.items()},
               "paper_text": "uniform: ~266 queries per task; b ~ 0.01 gives harder tasks more queries "
                             "and lowers the test error of every task"})
    return result, _queries_figure(b_grid, total, queried, per_task)


# --------------------------------------------------------------------------- Sec. 6 bandits
BANDIT_METHODS = ["one-vs-rest", "one-vs-one-random", "one-vs-one-weak", "one-vs-one (no update on 0)",
                  "Banditron"]


def bandit_cell(cell):
    """One learner on USPS as a 10-class bandit problem; hyper-parameters chosen on validation.

    Parameters
    ----------
    cell : dict
        The cell's settings: method (the learner), b_grid and gammas (its grids, chosen among on
        validation), passes, seed, repeat, quick.
    """
    from medmtl.online.bandits import Banditron, OneVsOneBandit, OneVsRestBandit

    (Xtr, ltr), (Xva, lva), (Xte, lte) = _digits("USPS", cell["seed"])
    lte = guard_test_labels(lte)  # outside the cache of _digits
    rng = np.random.default_rng([cell["seed"], cell["repeat"], 21])
    if cell["quick"]:
        keep = rng.permutation(ltr.size)[:3000]
        Xtr, ltr = Xtr[keep], ltr[keep]
    # ``passes`` shuffled passes over the training images, as one stream
    order = np.concatenate([rng.permutation(ltr.size) for _ in range(cell["passes"])])
    Xtr, ltr = Xtr[order], ltr[order]
    method, seed = cell["method"], [cell["seed"], cell["repeat"], 22]
    if method == "Banditron":
        grid = [{"gamma": g} for g in cell["gammas"]]
        make = lambda p: Banditron(random_state=seed, **p)  # noqa: E731
    else:
        grid = [{"b": b, "aggressive": a} for b in cell["b_grid"] for a in (True, False)]
        if method == "one-vs-rest":
            make = lambda p: OneVsRestBandit(random_state=seed, **p)  # noqa: E731
        else:
            zf = {"one-vs-one-random": "random", "one-vs-one-weak": "weak"}.get(method, "ignore")
            make = lambda p: OneVsOneBandit(zero_feedback=zf, eta=0.2, random_state=seed, **p)  # noqa: E731
    scored = []
    for params in grid:
        model = make(params).fit(Xtr, ltr)
        scored.append((1 - model.score(Xva, lva), params, 1 - model.score(Xte, lte)))
    val, params, test = min(scored, key=lambda s: s[0])
    return {"validation_error": 100 * val, "test_error": 100 * test, "chosen": params,
            "validation_error_by_params": [{**p, "validation_error": 100 * v} for v, p, _ in scored]}


@register("shampo-bandits", "SHAMPO Sec. 6: contextual-bandit reductions and the Banditron (USPS)")
def shampo_bandits(options=RunOptions()):
    """Sec. 6: test error of the bandit reductions and the Banditron on USPS.

    Parameters
    ----------
    options : RunOptions
        How to run: quick or full, seed, workers, cache.
    """
    quick, seed = options.quick, options.seed
    methods = BANDIT_METHODS
    repeats = 1 if quick else 3
    passes = [1] if quick else [1, 5]
    b_grid = [1e-2, 1.0] if quick else [1e-3, 1e-2, 1e-1, 1.0, 10.0]
    gammas = [0.05, 0.2] if quick else [0.01, 0.02, 0.05, 0.1, 0.2, 0.4]
    cells = [{"method": m, "repeat": r, "passes": k, "seed": seed, "quick": quick, "b_grid": b_grid,
              "gammas": gammas} for k in passes for m in methods for r in range(repeats)]
    rows = run_grid(bandit_cell, cells, name="shampo-bandits", options=options)
    measured, std, chosen, selection = {}, {}, {}, {}
    for k in passes:
        key = "one pass" if k == 1 else f"{k} passes"
        measured[key], std[key] = [], []
        for m in methods:
            idx = [i for i, c in enumerate(cells) if c["method"] == m and c["passes"] == k]
            errs = [rows[i]["test_error"] for i in idx]
            measured[key].append(float(np.mean(errs)))
            std[key].append(float(np.std(errs)))
            chosen[f"{m}, {key}"] = [rows[i]["chosen"] for i in idx]
            selection[f"{m}, {key}"] = [{"chosen": rows[i]["chosen"], "validation_error": rows[i]["validation_error"],
                                         "validation_error_by_params": rows[i]["validation_error_by_params"]}
                                        for i in idx]
    return ExperimentResult(
        name="shampo-bandits",
        settings=_settings(quick, seed, data="USPS, 10 classes (the paper's vowel data is not available); "
                                             "train 85 % / validation 15 % of USPS train, USPS test",
                           repeats=repeats, passes=passes, b_grid=b_grid, gammas=gammas, eta=0.2,
                           selection="b and aggressive (reductions), gamma (Banditron) on validation",
                           extra_method="one-vs-one (no update on 0): the plain reduction, for reference",
                           quick_caps="3000 training rounds" if quick else None),
        x=methods, measured=measured, measured_std=std,
        paper={key: [None] * len(methods) for key in measured}, xlabel="learner", ylabel="test error (%)",
        title="SHAMPO Sec. 6: bandit reductions on USPS",
        extra={"selection": {"rule": "per learner and repeat: b and aggressive (reductions) or gamma (Banditron) "
                                     "with the lowest validation error; eta = 0.2 and the passes fixed a priori",
                             "b_grid": b_grid, "gammas": gammas, "passes": passes, **selection},
               "chosen": chosen, "paper_vowel_data": PAPER_BANDITS_VOWEL,
               "paper_note": "paper values are on the vowel (VJ) data, one pass; not comparable in level"})
