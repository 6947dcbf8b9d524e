"""Where the bundled data lives, and the manifest that says what each file must be.

The data folder holds a ``MANIFEST.json`` with two tables:

``files``
    each data file's SHA-256 and size in bytes, keyed by its path in the folder (READMEs
    and the manifest itself are not listed);
``loaders``
    for each data set a loader reads, the call that reads it, its files, and the shape of
    what it parses: ``rows`` (examples over all tasks), ``features`` (input columns; null for
    raw text), ``tasks`` (tasks stored in the files; 1 for a single table) and ``classes``
    (distinct labels; null for a regression target).

Loaders check every file against ``files`` before parsing it, so a damaged file never
reaches a parser, and the parsed data against ``loaders`` afterwards. A folder named by
``MEDMTL_DATA`` may carry its own manifest (for data changed on purpose); without one, the
bundled manifest applies. Check a folder with ``python -m medmtl.datasets``; regenerate
its manifest after an intended change with ``python -m medmtl.datasets --write``
(:func:`medmtl.datasets.sources.build_manifest` and ``check_folder``, which know the data
sets; this module knows only files).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

__all__ = ["MANIFEST_NAME", "DataFileError", "data_home", "read_manifest", "verified_path",
           "file_sha256", "check_shape"]

MANIFEST_NAME = "MANIFEST.json"
SHAPE_FIELDS = ("rows", "features", "tasks", "classes")

# A clone keeps the data at the top level (data/ beside medmtl/); a built wheel carries a copy
# inside the package (setup.py copies it there at build time).
_CHECKOUT_DATA = Path(__file__).resolve().parents[2] / "data"
_PACKAGE_DATA = Path(__file__).resolve().parent / "data"

_digests = {}    # (resolved path, size, mtime_ns) -> SHA-256 hex digest
_manifests = {}  # (resolved path, size, mtime_ns) -> parsed manifest


class DataFileError(ValueError):
    """A data file that is damaged, cannot be parsed, or differs from its manifest."""


def _bundled_home():
    for folder in (_CHECKOUT_DATA, _PACKAGE_DATA):
        if (folder / MANIFEST_NAME).is_file():
            return folder
    raise FileNotFoundError(f"no bundled data found (looked for {_CHECKOUT_DATA} and {_PACKAGE_DATA}); "
                            "set MEDMTL_DATA to the folder holding landmine/, uci_dermatology/, ...")


def data_home():
    """The folder the loaders read.

    In this order: ``$MEDMTL_DATA`` if set (it must name a folder); else the checkout's
    top-level ``data/`` (a clone or an editable install); else the copy shipped inside the
    installed package.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> (data_home() / "uci_dermatology" / "dermatology.data").is_file()
    True
    """
    env = os.environ.get("MEDMTL_DATA")
    if env:
        path = Path(env)
        if not path.is_dir():
            raise FileNotFoundError(f"MEDMTL_DATA names {path}, which is not a folder; unset it to use "
                                    "the bundled data, or point it at a copy of the data folder")
        return path
    return _bundled_home()


def _identity(path):
    """What a cached result of reading ``path`` is keyed on: resolved name, size, modification time."""
    path = Path(path).resolve()
    stat = path.stat()
    return str(path), stat.st_size, stat.st_mtime_ns


def file_sha256(path):
    """The SHA-256 of a file as a hex string, computed once per process for each version of it.

    Examples
    --------
    >>> len(file_sha256(data_home() / "uci_statlog_heart" / "heart.dat"))
    64
    """
    key = _identity(path)
    if key not in _digests:
        digest = hashlib.sha256()
        with open(key[0], "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        _digests[key] = digest.hexdigest()
    return _digests[key]


def _manifest_path(home):
    own = Path(home) / MANIFEST_NAME
    return own if own.is_file() else _bundled_home() / MANIFEST_NAME


def read_manifest(home=None):
    """The manifest that applies to a data folder: its own ``MANIFEST.json``, else the bundled one.

    Parameters
    ----------
    home : path-like, optional
        The data folder; default :func:`data_home`.

    Returns
    -------
    path : pathlib.Path
        The manifest file read.
    manifest : dict
        With the tables ``files`` and ``loaders`` described in the module docstring.

    Examples
    --------
    >>> path, manifest = read_manifest()
    >>> manifest["loaders"]["dermatology"]["rows"], manifest["loaders"]["dermatology"]["classes"]
    (366, 6)
    """
    path = _manifest_path(data_home() if home is None else home)
    key = _identity(path)
    if key not in _manifests:
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(manifest.get("files"), dict) or not isinstance(manifest.get("loaders"), dict):
                raise ValueError("it needs the tables 'files' and 'loaders'")
        except ValueError as exc:
            raise DataFileError(f"data manifest {path} cannot be read: {exc}") from exc
        _manifests[key] = manifest
    return path, _manifests[key]


def _regenerate_hint(home):
    return (f"restore the bundled file, or, if the change is intended, regenerate the folder's "
            f"manifest: MEDMTL_DATA={home} python -m medmtl.datasets --write")


def verified_path(relpath):
    """The path of a data file in :func:`data_home`, after checking its size and SHA-256.

    Parameters
    ----------
    relpath : str
        The file's path inside the data folder, with ``/`` separators.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    DataFileError
        The file is empty, or its size or SHA-256 differs from the manifest's.

    Examples
    --------
    >>> verified_path("uci_statlog_heart/heart.dat").name
    'heart.dat'
    """
    home = data_home()
    path = home / relpath
    if not path.is_file():
        raise FileNotFoundError(f"missing data file {path}")
    manifest_path, manifest = read_manifest(home)
    expected = manifest["files"].get(relpath)
    if expected is None:
        raise DataFileError(f"data file {path} is not listed in {manifest_path}")
    size = path.stat().st_size
    if size == 0:
        raise DataFileError(f"data file {path} is empty; {_regenerate_hint(home)}")
    if size != expected["size"]:
        raise DataFileError(f"data file {path} has {size} bytes but {manifest_path} expects "
                            f"{expected['size']}: it is damaged or not the bundled version; "
                            f"{_regenerate_hint(home)}")
    digest = file_sha256(path)
    if digest != expected["sha256"]:
        raise DataFileError(f"data file {path} has SHA-256 {digest} but {manifest_path} expects "
                            f"{expected['sha256']}: it is damaged or not the bundled version; "
                            f"{_regenerate_hint(home)}")
    return path


def check_shape(key, found, paths):
    """Compare the shape parsed from data set ``key``'s files with the manifest's.

    Parameters
    ----------
    key : str
        The data set's entry in the manifest's ``loaders`` table.
    found : dict
        ``rows``, ``features``, ``tasks`` and ``classes`` as parsed.
    paths : list of path-like
        The files parsed, named in the error.

    Raises
    ------
    DataFileError
        A field differs from the manifest's, naming the files and the expected values.

    Examples
    --------
    >>> found = {"rows": 270, "features": 13, "tasks": 1, "classes": 2}
    >>> check_shape("heart", found, ["heart.dat"])
    >>> check_shape("heart", dict(found, rows=135), ["heart.dat"])
    Traceback (most recent call last):
    ...
    medmtl.datasets.manifest.DataFileError: heart.dat parsed to rows=135; ... expects rows=270 for load_heart()
    """
    manifest_path, manifest = read_manifest()
    expected = manifest["loaders"].get(key)
    files = ", ".join(str(p) for p in paths)
    if expected is None:
        raise DataFileError(f"{manifest_path} gives no shape for data set {key!r} ({files})")
    wrong = [f for f in SHAPE_FIELDS if found[f] != expected.get(f)]
    if wrong:
        raise DataFileError(f"{files} parsed to " + ", ".join(f"{f}={found[f]}" for f in wrong)
                            + f"; {manifest_path} expects " + ", ".join(f"{f}={expected.get(f)}" for f in wrong)
                            + f" for {expected.get('loader', key)}")
