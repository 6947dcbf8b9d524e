"""The documentation site builds as ``make docs`` builds it, warnings as errors.

The build executes every notebook in notebooks/ (myst-nb, quick mode) and fails on a failing
cell, so this is also the notebooks' test. One test builds once and checks the result: every
notebook rendered with a figure, a gallery card per notebook, a page per public name.
"""

import importlib
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import medmtl

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
BUILD_TIMEOUT = 1200  # seconds: the notebooks take about two minutes of one core


def documented_names():
    """``module.name`` for every name in the ``__all__`` of a subpackage or module of medmtl
    (a subpackage without ``__all__``, such as ``experiments``, stands for its modules)."""
    names = []
    for info in pkgutil.iter_modules(medmtl.__path__, "medmtl."):
        if info.name.rsplit(".", 1)[1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        if info.ispkg and not hasattr(module, "__all__"):
            modules = [importlib.import_module(sub.name)
                       for sub in pkgutil.iter_modules(module.__path__, info.name + ".")
                       if not sub.name.rsplit(".", 1)[1].startswith("_")]
        else:
            modules = [module]
        names += [f"{m.__name__}.{name}" for m in modules for name in getattr(m, "__all__", [])]
    return names


def build(tmp_path):
    """``make docs`` on a copy of docs/ (so that the stubs autosummary writes into its source
    folder never meet another build's), output in ``tmp_path``."""
    source = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", source, symlinks=True,
                    ignore=shutil.ignore_patterns("_build", "generated"))
    (source / "notebooks").unlink()
    (source / "notebooks").symlink_to(ROOT / "notebooks", target_is_directory=True)
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-T", "-b", "html",
               "-d", str(tmp_path / "doctrees"), str(source), str(tmp_path / "html")]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert done.returncode == 0, f"the docs build failed:\n{done.stderr[-20000:]}"
    return tmp_path / "html"


@pytest.mark.slow
def test_docs_build_with_every_notebook_figure_and_public_name(tmp_path):
    assert NOTEBOOKS, "notebooks/ is empty"
    html = build(tmp_path)

    for notebook in NOTEBOOKS:
        page = (html / "notebooks" / f"{notebook.stem}.html").read_text()
        assert re.search(r'<img [^>]*src="\.\./_images/[^"]+\.png"', page), \
            f"{notebook.name} rendered without a figure"

    gallery = (html / "gallery.html").read_text()
    cards = re.findall(r'<div class="notebook-gallery-card docutils container">(.*?)</div>',
                       gallery, re.S)
    assert len(cards) == len(NOTEBOOKS)
    for notebook in NOTEBOOKS:
        card = next((c for c in cards if f'href="notebooks/{notebook.stem}.html"' in c), None)
        assert card is not None and "<img " in card, f"no card with a figure: {notebook.name}"

    names = documented_names()
    assert "medmtl.evaluation.mean_auc" in names
    missing = [name for name in names if not (html / "api" / "generated" / f"{name}.html").exists()]
    assert not missing, f"no API page (is the subpackage in docs/api/index.rst?): {missing}"
