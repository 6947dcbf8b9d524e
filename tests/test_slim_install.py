"""The base install (``pip install .`` without extras) imports and fits models.

A fresh virtual environment gets the distributions that setup.cfg's ``install_requires`` pull
in (the closure of their own requirements, linked from this environment's site-packages, so
nothing is downloaded) and medmtl from this checkout through a ``.pth`` line, as
``pip install --no-deps -e .`` would give it. Nothing else is there: no matplotlib, tqdm,
pandas, river, skglm, dask, Jupyter, Sphinx or pytest. In it, every library module of medmtl
is imported and the quick start's model is fitted; a base module that imports an extra at
import time, or a fit that needs one, fails the test.
"""

import configparser
import os
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest

packaging_requirements = pytest.importorskip("packaging.requirements")
packaging_utils = pytest.importorskip("packaging.utils")

ROOT = Path(__file__).resolve().parents[1]

# Modules that are extras by design: the paper experiments (the `experiments` extra) and the
# adapter to river (the `river` extra), which says so when river is missing.
EXTRA_MODULES = ("medmtl.experiments", "medmtl.online.river_compat")

PROGRAM = r"""
import importlib, pkgutil, sys, time
import medmtl

extras = sys.argv[1].split(",")
modules = [m.name for m in pkgutil.walk_packages(medmtl.__path__, "medmtl.")
           if not m.name.startswith(tuple(extras))]
for name in modules:
    importlib.import_module(name)

from medmtl.datasets import load_dermatology
from medmtl.med import MultiTaskMEDClassifier
from medmtl.evaluation import mean_auc

train, val, test = load_dermatology().split(train=100, validation=0.5, random_state=0)
start = time.perf_counter()
model = MultiTaskMEDClassifier(selection="features", C=1.0, alpha=10.0).fit(train.Xs, train.ys)
seconds = time.perf_counter() - start
print(len(modules), round(mean_auc(test.ys, model.decision_function(test.Xs)), 3), f"{seconds:.1f}")
for absent in ("matplotlib", "tqdm", "pandas", "river", "skglm", "dask", "pytest", "sphinx", "IPython"):
    try:
        importlib.import_module(absent)
    except ImportError:
        continue
    raise SystemExit(f"{absent} is importable: the environment is not the base install")
"""


def base_requirements():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    lines = config["options"]["install_requires"].strip().splitlines()
    return [packaging_requirements.Requirement(line.strip()).name for line in lines if line.strip()]


def closure(names):
    """The distributions ``names`` need, with what those need in turn (no extras)."""
    seen, todo = {}, list(names)
    while todo:
        name = packaging_utils.canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen[name] = dist = metadata.distribution(name)
        for line in dist.requires or []:
            requirement = packaging_requirements.Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return seen.values()


def link_distributions(dists, site):
    """Link each distribution's top-level files and folders (and its metadata) into ``site``."""
    for dist in dists:
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            source = Path(dist.locate_file(top))
            if source.exists() and not (site / top).exists():
                (site / top).symlink_to(source, target_is_directory=source.is_dir())


@pytest.mark.slim
def test_the_base_install_imports_every_library_module_and_fits(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    link_distributions(closure(base_requirements()), site)
    (site / "medmtl-checkout.pth").write_text(f"{ROOT}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "MEDMTL_DATA")}
    env["MPLBACKEND"] = "Agg"
    done = subprocess.run([python, "-c", PROGRAM, ",".join(EXTRA_MODULES)], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=600)
    assert done.returncode == 0, f"the base install failed:\n{done.stdout}\n{done.stderr[-6000:]}"
    n_modules, auc, seconds = done.stdout.split()
    print(f"base install: {n_modules} modules imported, mean AUC {auc}, fit {seconds} s")
    assert int(n_modules) > 40 and float(auc) > 0.9
    # The environment really is separate from this one.
    assert sysconfig.get_paths()["purelib"] != str(site)
