"""The package as users get it: one version everywhere, and a wheel that carries its data.

The wheel test builds a wheel from the current sources, installs it into a fresh virtual
environment and runs it from an unrelated folder. The environment sees this one's
dependencies through a ``.pth`` line (installing numpy, scipy, cvxpy, ... again would take
minutes) but medmtl only from the wheel, so a file the wheel lacks fails the test.
"""

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import medmtl
from medmtl.experiments import cli

ROOT = Path(__file__).resolve().parents[1]
BUILD_INPUTS = ("setup.cfg", "setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "medmtl", "data")


def test_the_version_has_one_source(capsys):
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    assert config["metadata"]["version"] == "attr: medmtl.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+", medmtl.__version__)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"medmtl {medmtl.__version__}"


def _run(args, **kw):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc.stdout


@pytest.mark.slow
def test_the_wheel_carries_the_data_and_runs_from_any_folder(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, src / name)
    _run([sys.executable, "-m", "pip", "wheel", src, "--no-deps", "-q", "-w", tmp_path / "dist"])
    wheel, = (tmp_path / "dist").glob("medmtl-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    files = json.loads((ROOT / "data" / "MANIFEST.json").read_text())["files"]
    assert {f"medmtl/datasets/data/{rel}" for rel in [*files, "MANIFEST.json"]} <= names
    assert not any(n.startswith(("data/", "tests/")) for n in names)
    assert wheel.stat().st_size < 40e6  # the data (29 MB, mostly compressed already) and the code

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel])

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MEDMTL_DATA", "PYTHONPATH")}
    out = _run([python, "-c", "import medmtl, medmtl.datasets as d; print(medmtl.__file__); print(d.data_home()); "
                              "print(d.load_dermatology()[0].X.shape, d.load_usps('test')[0].shape)"],
               cwd=elsewhere, env=env).splitlines()
    assert out[0] == str(site / "medmtl" / "__init__.py")
    assert out[1] == str(site / "medmtl" / "datasets" / "data")
    assert out[2] == "(366, 34) (2007, 256)"
    assert _run([venv / "bin" / "medmtl", "--version"], cwd=elsewhere, env=env).strip() == \
        f"medmtl {medmtl.__version__}"
    # Every bundled file arrived intact.
    assert "matches" in _run([python, "-m", "medmtl.datasets", "--files-only"], cwd=elsewhere, env=env)
