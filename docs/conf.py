"""Sphinx configuration of medmtl's documentation site (``make docs``).

The API reference is generated from the package: autosummary walks ``medmtl`` and gives every
name in a subpackage's or module's ``__all__`` a page. The notebooks in ``notebooks/`` (reached
through the ``docs/notebooks`` link) are executed by myst-nb during the build, and a failing
cell fails it; the gallery page shows each one's first figure. The tables of solution methods
are generated from the solver registry at every build (``_ext/method_registry.py``).
"""

import importlib
import os
import pkgutil
import shutil
import sys
import tempfile
from pathlib import Path

import medmtl

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "medmtl"
author = "the medmtl developers"
copyright = "the medmtl developers"
release = version = medmtl.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
    "notebook_gallery",
    "method_registry",
]

exclude_patterns = ["_build", "_templates", "jupyter_execute", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]

# --- API reference -------------------------------------------------------------------------
autosummary_generate = True
autosummary_ignore_module_all = False  # a module's __all__ decides what is public
autodoc_typehints = "none"  # the numpydoc sections carry the types
numpydoc_show_class_members = False  # the class template documents members with autodoc
numpydoc_attributes_as_param_list = False
numpydoc_class_members_toctree = False
# a public name has a docstring, and its Parameters section matches its signature
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "PR03", "PR10"}
numpydoc_validation_overrides = {"GL08": [r"\S"]}  # a docstring inherited from a base counts
# Public instances whose class is documented: a mapping (no docstring of its own) and a
# scorer (its signature is its class's __call__, not the class's parameters).
numpydoc_validation_exclude = {r"^medmtl\.med\.METHODS$", r"^medmtl\.model_selection\.mean_auc_scorer$"}


def _public_names():
    """``{module: its __all__}`` for every public module of medmtl (the module template lists
    them all, data included, where autosummary alone lists only documented data)."""
    names = {"medmtl": list(getattr(medmtl, "__all__", []))}
    for info in pkgutil.walk_packages(medmtl.__path__, "medmtl."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names[info.name] = list(getattr(importlib.import_module(info.name), "__all__", []))
    return names


autosummary_context = {"public_names": _public_names()}
# autosummary writes a page per public name here at every build; a name that has left the
# package must not linger (its page would no longer import)
shutil.rmtree(Path(__file__).parent / "api" / "generated", ignore_errors=True)


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out the members a class inherits from scikit-learn, river or ``object``: their
    own documentation covers them, and their docstrings do not follow this site's format."""
    if what != "class":
        return None
    target = getattr(obj, "fget", obj)
    target = getattr(target, "__func__", target)
    module = getattr(target, "__module__", None) or ""
    return True if not module.startswith("medmtl") else None


# --- notebooks -----------------------------------------------------------------------------
nb_execution_mode = "force"  # every build runs every notebook (the test suite relies on it)
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 600  # seconds per cell
nb_merge_streams = True

# The notebooks' kernels inherit this process's environment. `make test` exports
# MPLBACKEND=Agg, under which `plt.show()` draws nothing into a notebook; without it the kernel
# uses its inline backend.
os.environ.pop("MPLBACKEND", None)
# The experiments' cells are computed afresh at every build (cells cached by older code would
# put their numbers on the site), unless MEDMTL_CACHE names a cache (the test suite shares one).
_FRESH_CACHE = None if "MEDMTL_CACHE" in os.environ else tempfile.mkdtemp(prefix="medmtl-docs-")
if _FRESH_CACHE:
    os.environ["MEDMTL_CACHE"] = _FRESH_CACHE

# --- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"medmtl {version}"
html_static_path = ["_static"]
html_css_files = ["gallery.css"]
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_show_sourcelink = False


def _remove_fresh_cache(app, exception):
    if _FRESH_CACHE:
        shutil.rmtree(_FRESH_CACHE, ignore_errors=True)


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("build-finished", _remove_fresh_cache)
