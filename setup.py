"""Build hook: the wheel carries the top-level data/ folder as the package data medmtl/datasets/data.

The checkout keeps the data where its users know it (data/, one README per data set); a wheel
has no such folder, so the build copies it into the package, where
``medmtl.datasets.data_home()`` finds it. Everything else is declared in setup.cfg.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithData(build_py):
    def run(self):
        super().run()
        if not self.editable_mode:  # an editable install reads data/ where it is
            shutil.copytree(Path(__file__).parent / "data",
                            Path(self.build_lib, "medmtl", "datasets", "data"), dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildPyWithData})
