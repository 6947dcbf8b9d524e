"""The demo's figure: ROC panels of every task beside the named switch posteriors."""

import numpy as np

from medmtl.experiments import demo


def fake_fold(rng, n_features=5):
    ys = [np.repeat([-1, 1], 15) for _ in range(6)]
    scores = {m: [y + rng.normal(size=30) for y in ys] for m in ("multitask", "independent")}
    return {"test_y": ys, "test_scores": scores, "task_names": list("abcdef"),
            "switch_posterior": rng.random(n_features).tolist(), "chosen": {"C": 1.0, "alpha": 10.0}}


def test_the_figure_shows_every_task_and_the_named_switches(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    figures = []
    monkeypatch.setattr("matplotlib.figure.Figure.savefig", lambda fig, path, **kw: figures.append(fig))
    demo.plot_demo([fake_fold(rng), fake_fold(rng)], tmp_path / "demo.png", [f"f{d}" for d in range(5)])
    fig, = figures
    rocs, switches = fig.axes[:6], fig.axes[6]
    assert [ax.get_title() for ax in rocs] == list("abcdef")
    assert all(ax.get_xlim()[1] == demo.FPR_SHOWN for ax in rocs)
    assert sorted(t.get_text() for t in switches.get_yticklabels()) == [f"f{d}" for d in range(5)]
    # the bars are ordered largest first, one per feature
    widths = [p.get_width() for p in switches.patches]
    assert len(widths) == 5 and widths == sorted(widths, reverse=True)


def test_one_fold_without_switches_draws_the_roc_panels_alone(tmp_path):
    fold = fake_fold(np.random.default_rng(1))
    del fold["switch_posterior"]
    demo.plot_roc(fold, tmp_path / "roc.png")
    assert (tmp_path / "roc.png").stat().st_size > 1000
