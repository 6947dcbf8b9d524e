"""The store of finished experiment cells: plain files, keyed on everything that made them.

A cell's value is kept as ``CACHE/NAME/KEY.json``, plus ``KEY.npz`` when it holds numpy
arrays. Nothing is ever unpickled: the JSON is parsed, and the arrays are read with
``allow_pickle=False``, so a file placed in a shared cache folder can give at worst a
wrong number (which the checksum below catches unless it was forged on purpose), never run
code.

The key
    A SHA-256 of the experiment's name, the cell's settings, and two fingerprints:
    :func:`code_fingerprint` (medmtl's own source files and the versions of the numerical
    libraries under it) and :func:`data_fingerprint` (every data file the loaders may read,
    as it is on disk now). Editing the code, upgrading scikit-learn or pointing
    ``MEDMTL_DATA`` at other data therefore reaches new keys: old numbers are never returned
    for new inputs.

The entry
    The JSON holds the format label, the name, the settings and the fingerprints it was
    keyed on, the encoded value (:func:`encode_value`), the SHA-256 of the ``.npz`` if any,
    and a SHA-256 of all of that. An entry whose checksums, key or settings disagree, or that
    cannot be parsed (empty, truncated, random bytes, hand-edited), is reported with a
    :class:`CacheWarning` naming the file, deleted, and recomputed.

Files are written to a temporary name in the same folder and renamed into place, the
``.npz`` first: a reader sees a whole entry or none.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import os
import sys
import tempfile
import warnings
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np
import platformdirs

__all__ = ["CacheWarning", "CacheNotWritable", "CellCache", "encode_value", "decode_value", "code_fingerprint",
           "data_fingerprint", "clear_cache", "default_cache_dir"]

FORMAT = "medmtl-cell-1"

# Libraries whose upgrade may change an experiment's numbers (solvers, libsvm, BLAS-backed
# linear algebra, compiled loops): their versions are part of the code fingerprint.
NUMERICAL_LIBRARIES = ("numpy", "scipy", "scikit-learn", "cvxpy", "osqp", "clarabel", "numba")

# The suffixes of the files a cache folder holds: entries, their arrays, unfinished writes,
# and the pickles older versions wrote (never read, removed by clear_cache).
_CACHE_SUFFIXES = (".json", ".npz", ".tmp", ".pkl")

# numpy scalar kinds kept inline in the JSON (bool, signed and unsigned int, float)
_SCALAR_KINDS = "biuf"
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class CacheWarning(UserWarning):
    """A damaged cache entry was found (it is deleted and its cell recomputed), or the
    default cache folder cannot be written (the run goes on without the cache)."""


class CacheNotWritable(PermissionError):
    """The cache folder the user chose cannot be written; raised before any cell runs."""


class _Damaged(Exception):
    """Why a cache entry cannot be used."""


# ------------------------------------------------------------------------------------ codec
def encode_value(value, where="value"):
    """A cell's value as JSON-ready data and the numpy arrays to store beside it.

    Python ``None``, ``bool``, ``int``, ``float`` and ``str``, lists, tuples, dicts, numpy
    scalars (bool, integer, float) and numpy arrays of any non-object dtype round-trip
    exactly through :func:`decode_value`: types, dtypes and shapes are kept, floats to the
    bit (NaN and infinities included). A node the JSON cannot spell plainly is a one-key
    dict whose key starts with ``$``: ``{"$float": "nan"}``, ``{"$scalar": ["float32", 0.5]}``,
    ``{"$tuple": [...]}``, ``{"$array": "a0"}``, and ``{"$dict": [[key, value], ...]}`` for
    a dict with keys other than strings (or a key starting with ``$``).

    Parameters
    ----------
    value : object
        What a cell function returned.
    where : str, default="value"
        How error messages name ``value``.

    Returns
    -------
    tree : JSON-serialisable object
    arrays : dict of str to ndarray
        The arrays ``tree`` refers to by name.

    Raises
    ------
    TypeError
        A node that cannot be stored exactly (a set, a complex number, an object array, a
        masked array, any other object), named by its place in ``value``.

    Examples
    --------
    >>> import numpy as np
    >>> tree, arrays = encode_value({"auc": 0.5, "n": np.int64(3), "scores": np.zeros(2)})
    >>> tree
    {'auc': 0.5, 'n': {'$scalar': ['int64', 3]}, 'scores': {'$array': 'a0'}}
    >>> encode_value({"seen": {1, 2}})
    Traceback (most recent call last):
    ...
    TypeError: value['seen'] is a set, which the experiment cache cannot store exactly; ...
    """
    arrays = {}
    return _encode(value, where, arrays), arrays


def _encode(value, where, arrays):
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    # .item() is exact for these (floats up to float64); a long double has no Python twin
    if isinstance(value, np.generic) and value.dtype.kind in _SCALAR_KINDS and value.dtype.itemsize <= 8:
        return {"$scalar": [value.dtype.name, _encode(value.item(), where, arrays)]}
    if type(value) is np.ndarray and not value.dtype.hasobject:
        name = f"a{len(arrays)}"
        arrays[name] = value
        return {"$array": name}
    if type(value) is list:
        return [_encode(v, f"{where}[{i}]", arrays) for i, v in enumerate(value)]
    if type(value) is tuple:
        return {"$tuple": [_encode(v, f"{where}[{i}]", arrays) for i, v in enumerate(value)]}
    if type(value) is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: _encode(v, f"{where}[{k!r}]", arrays) for k, v in value.items()}
        return {"$dict": [[_encode(k, f"{where} key {k!r}", arrays), _encode(v, f"{where}[{k!r}]", arrays)]
                          for k, v in value.items()]}
    kind = f"an array of dtype {value.dtype}" if type(value) is np.ndarray else \
        f"{'an' if type(value).__name__[0] in 'aeiou' else 'a'} {type(value).__name__}"
    raise TypeError(f"{where} is {kind}, which the experiment cache cannot store exactly; "
                    "return None, bools, ints, floats, strings, lists, tuples, dicts, numpy "
                    "scalars or numpy arrays of numbers")


def decode_value(tree, arrays):
    """The value :func:`encode_value` encoded as ``tree`` and ``arrays``.

    Parameters
    ----------
    tree : JSON-ready object
        The first part of what :func:`encode_value` returns (or that, read back from JSON).
    arrays : mapping of str to ndarray
        The arrays ``tree`` names.

    Returns
    -------
    object

    Raises
    ------
    ValueError
        ``tree`` holds a malformed tagged node or names a missing array.

    Examples
    --------
    >>> import numpy as np
    >>> value = {"x": (1, np.float32(0.1), float("nan")), 3: np.arange(2)}
    >>> back = decode_value(*encode_value(value))
    >>> back[3], type(back["x"][1]).__name__, back["x"][2]
    (array([0, 1]), 'float32', nan)
    """
    if isinstance(tree, list):
        return [decode_value(v, arrays) for v in tree]
    if not isinstance(tree, dict):
        return tree
    if len(tree) == 1:
        (tag, body), = tree.items()
        if tag.startswith("$"):
            return _decode_tagged(tag, body, arrays)
    return {k: decode_value(v, arrays) for k, v in tree.items()}


def _decode_tagged(tag, body, arrays):
    if tag == "$float" and body in _NONFINITE:
        return _NONFINITE[body]
    if tag == "$scalar" and isinstance(body, list) and len(body) == 2 and isinstance(body[0], str):
        dtype = np.dtype(body[0])
        if dtype.kind in _SCALAR_KINDS:
            return dtype.type(decode_value(body[1], arrays))
    if tag == "$tuple" and isinstance(body, list):
        return tuple(decode_value(v, arrays) for v in body)
    if tag == "$array" and isinstance(body, str) and body in arrays:
        return arrays[body]
    if tag == "$dict" and isinstance(body, list) and all(isinstance(p, list) and len(p) == 2 for p in body):
        return {decode_value(k, arrays): decode_value(v, arrays) for k, v in body}
    raise ValueError(f"malformed {tag} node: {body!r:.80}")


# ----------------------------------------------------------------------------- fingerprints
@functools.cache
def code_fingerprint():
    """A SHA-256 of medmtl's source files and the versions of Python and its numerical libraries.

    Computed once per process: a process runs the code it imported, and its cells are keyed
    on that code (after editing medmtl, restart the kernel or interpreter).

    Returns
    -------
    str
        64 hexadecimal digits.

    Examples
    --------
    >>> len(code_fingerprint())
    64
    """
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    versions = {"python": ".".join(map(str, sys.version_info[:2]))}
    for library in NUMERICAL_LIBRARIES:
        try:
            versions[library] = metadata.version(library)
        except metadata.PackageNotFoundError:
            versions[library] = None
    digest.update(json.dumps(versions, sort_keys=True).encode())
    return digest.hexdigest()


def data_fingerprint():
    """A SHA-256 of every data file the loaders may read, as the files are now.

    The loaders read only files their folder's manifest lists (see
    :mod:`medmtl.datasets.manifest`), so the fingerprint covers the manifest that applies to
    :func:`~medmtl.datasets.data_home` and the SHA-256 of each listed file there (or its
    absence). The whole folder is fingerprinted rather than the files of each cell: cells
    would have to declare their files, and a declaration that falls behind the code would
    bring old numbers back silently. Digests are kept per file version, so the folder is
    hashed once per process.

    Returns
    -------
    str
        The digest, in the form of :func:`code_fingerprint`'s.

    Examples
    --------
    >>> data_fingerprint() == data_fingerprint()  # the files have not changed in between
    True
    """
    from medmtl.datasets.manifest import data_home, file_sha256, read_manifest

    digest = hashlib.sha256()
    try:
        home = data_home()
        manifest_path, manifest = read_manifest(home)
    except (OSError, ValueError) as exc:
        # Cells that read data fail with this same error; the others still run and are cached.
        digest.update(f"no data: {exc}".encode())
        return digest.hexdigest()
    digest.update(file_sha256(manifest_path).encode())
    for relpath in sorted(manifest["files"]):
        path = home / relpath
        digest.update(f"{relpath}\0{file_sha256(path) if path.is_file() else 'missing'}\0".encode())
    return digest.hexdigest()


# ------------------------------------------------------------------------------------ store
def _canonical(obj, sort_keys=False):
    # Insertion order is kept for the stored value (a dict's order is part of it); the key
    # sorts, so that the same settings in another order find the same entry.
    return json.dumps(obj, sort_keys=sort_keys, separators=(",", ":"), allow_nan=False)


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _write_atomic(path, data):
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _npz_bytes(arrays):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, array, allow_pickle=False)
    return buffer.getvalue()


def _parse_json(data):
    def refuse(token):
        raise ValueError(f"non-standard JSON constant {token}")

    return json.loads(data.decode("utf-8"), parse_constant=refuse)


def _write_problem(folder):
    """Why entries cannot be written in ``folder``, or None if they can.

    Asked of the folder itself, or of its nearest existing parent if it is still to be
    made (nothing is created here): the kernel's ``access`` answers for permissions, a
    read-only file system and the user (root writes anywhere); a path under a regular file
    is no folder at all.
    """
    existing = next(p for p in [folder, *folder.parents] if os.path.lexists(p))
    if not existing.is_dir():
        return f"{existing} is not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is read-only for this user"
    return None


def default_cache_dir():
    """The cache folder when nobody chooses one: ``$MEDMTL_CACHE`` if set, else
    ``experiments`` in medmtl's folder of the user's cache directory (``~/.cache/medmtl`` on
    Linux, as :func:`platformdirs.user_cache_dir` gives it), never the working directory.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import os
    >>> default_cache_dir() == (Path(os.environ["MEDMTL_CACHE"]) if "MEDMTL_CACHE" in os.environ
    ...                         else Path(platformdirs.user_cache_dir("medmtl")) / "experiments")
    True
    """
    chosen = os.environ.get("MEDMTL_CACHE")
    if chosen:
        return Path(chosen)
    return Path(platformdirs.user_cache_dir("medmtl")) / "experiments"


def _is_default_folder(folder):
    """Whether ``folder`` is the cache folder nobody chose: no MEDMTL_CACHE, no cache_dir."""
    return "MEDMTL_CACHE" not in os.environ and Path(folder) == default_cache_dir()


class CellCache:
    """The stored cells of one experiment grid, under one code and data fingerprint.

    Whether the folder can be written is checked when the cache is made, before any cell
    runs: a folder the user chose (``cache_dir``, ``--cache-dir``, ``MEDMTL_CACHE``) that
    cannot be written is a :class:`CacheNotWritable` error naming it; the default folder
    (:func:`default_cache_dir`) gives a :class:`CacheWarning` and the cache is off: nothing
    is read or stored, every cell is computed.

    Parameters
    ----------
    folder : path-like
        The cache folder; the entries live in ``folder/name``.
    name : str
        The grid's name (the experiment's, or another experiment's whose cells it reuses).
    code, data : str, optional
        The fingerprints the keys include (default: :func:`code_fingerprint` and
        :func:`data_fingerprint` now).

    Attributes
    ----------
    enabled : bool
        False when the default folder cannot be written.

    Raises
    ------
    CacheNotWritable
        A folder other than the default cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> cache = CellCache(tempfile.mkdtemp(), "demo")
    >>> cache.load({"a": 1})
    (False, None)
    >>> cache.store({"a": 1}, {"auc": 0.75, "scores": [0.5, float("inf")]})
    >>> cache.load({"a": 1})
    (True, {'auc': 0.75, 'scores': [0.5, inf]})
    """

    def __init__(self, folder, name, *, code=None, data=None):
        self.folder = Path(folder) / name
        self.name = name
        self.code = code_fingerprint() if code is None else code
        self.data = data_fingerprint() if data is None else data
        self.enabled = True
        problem = _write_problem(self.folder)
        if problem is None:
            return
        if not _is_default_folder(folder):
            raise CacheNotWritable(f"the experiment cache folder {self.folder} cannot be written ({problem}); "
                                   "choose a writable one (cache_dir=..., --cache-dir or MEDMTL_CACHE) or run "
                                   "without the cache (use_cache=False or --no-cache)")
        warnings.warn(f"the default experiment cache folder {self.folder.resolve()} cannot be written ({problem}); "
                      "running without the cache: every cell is computed and none is stored. Set MEDMTL_CACHE "
                      "or cache_dir to a writable folder to keep them", CacheWarning, stacklevel=2)
        self.enabled = False

    def _header(self, cell):
        tree, arrays = encode_value(cell, where="cell")
        if arrays:
            raise TypeError(f"a cell of {self.name!r} holds numpy arrays; cell settings must be "
                            f"plain JSON values: {cell!r:.200}")
        return {"format": FORMAT, "experiment": self.name, "cell": tree, "code": self.code, "data": self.data}

    def _locate(self, cell):
        header = self._header(cell)
        return header, self.folder / f"{_sha256(_canonical(header, sort_keys=True).encode())[:32]}.json"

    def path(self, cell):
        """The JSON file of ``cell``'s entry (it may not exist).

        Its name is 32 hexadecimal digits of the SHA-256 of the grid's name, the settings
        (in any order) and the fingerprints.

        Parameters
        ----------
        cell : dict
            One cell's settings: plain JSON values.

        Returns
        -------
        pathlib.Path
        """
        return self._locate(cell)[1]

    def load(self, cell):
        """The stored value of ``cell``, if it has a sound entry.

        A damaged entry gives a :class:`CacheWarning` naming its file and is deleted.
        Nothing is found when the cache is off (:attr:`enabled`).

        Parameters
        ----------
        cell : dict
            One cell's settings.

        Returns
        -------
        found : bool
        value : object
            The value stored (None if not found).
        """
        if not self.enabled:
            return False, None
        header, path = self._locate(cell)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return False, None
        try:
            return True, self._read(path, data, header)
        except _Damaged as exc:
            warnings.warn(f"damaged experiment cache entry {path}: {exc}; it is deleted and the "
                          f"cell recomputed", CacheWarning, stacklevel=3)
            path.unlink(missing_ok=True)
            path.with_suffix(".npz").unlink(missing_ok=True)
            return False, None

    def _read(self, path, data, header):
        try:
            entry = _parse_json(data)
        except (ValueError, RecursionError) as exc:
            raise _Damaged(f"not a readable JSON file ({type(exc).__name__}: {exc})") from None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            raise _Damaged(f"not a {FORMAT} entry")
        stated = entry.pop("sha256", None)
        if stated != _sha256(_canonical(entry).encode()):
            raise _Damaged("its content does not match its checksum (altered or incomplete)")
        if {k: entry.get(k) for k in header} != header:
            raise _Damaged("it was stored for other settings or fingerprints than its name says")
        arrays = {}
        if entry.get("arrays") is not None:
            arrays = self._read_arrays(path.with_suffix(".npz"), entry["arrays"])
        try:
            return decode_value(entry.get("value"), arrays)
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise _Damaged(f"its value cannot be decoded ({exc})") from None

    @staticmethod
    def _read_arrays(path, expected_sha256):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise _Damaged(f"its arrays file {path.name} is missing") from None
        if _sha256(data) != expected_sha256:
            raise _Damaged(f"its arrays file {path.name} does not match its checksum")
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                return {name: npz[name] for name in npz.files}
        except Exception as exc:  # noqa: BLE001 - a forged file fails in zipfile, zlib or numpy alike
            raise _Damaged(f"its arrays file {path.name} cannot be read ({type(exc).__name__}: {exc})") from None

    def store(self, cell, value):
        """Write ``value`` as ``cell``'s entry; nothing is written when the cache is off
        (:attr:`enabled`).

        Parameters
        ----------
        cell : dict
            One cell's settings.
        value : object
            What the cell function returned (see :func:`encode_value`).

        Raises
        ------
        TypeError
            ``value`` holds something :func:`encode_value` cannot store exactly; nothing is
            written.
        """
        header, path = self._locate(cell)
        tree, arrays = encode_value(value)
        if not self.enabled:
            return
        entry = {**header, "value": tree, "arrays": None}
        self.folder.mkdir(parents=True, exist_ok=True)
        if arrays:
            data = _npz_bytes(arrays)
            entry["arrays"] = _sha256(data)
            _write_atomic(path.with_suffix(".npz"), data)
        else:
            path.with_suffix(".npz").unlink(missing_ok=True)
        entry["sha256"] = _sha256(_canonical(entry).encode())
        _write_atomic(path, _canonical(entry).encode())


def clear_cache(folder, name=None):
    """Delete the stored cells of experiment grid ``name`` (of every grid if None).

    Only the cache's own files (``.json``, ``.npz``, unfinished ``.tmp`` writes and the
    ``.pkl`` files of older versions) in the grids' folders are removed, then the folders if
    empty.

    Parameters
    ----------
    folder : path-like
        The cache folder.
    name : str, optional
        One grid's name.

    Returns
    -------
    int
        How many files were deleted.

    Raises
    ------
    CacheNotWritable
        A file or folder cannot be deleted (a read-only cache).

    Examples
    --------
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> CellCache(folder, "demo").store({"a": 1}, 0.5)
    >>> clear_cache(folder, "demo"), CellCache(folder, "demo").load({"a": 1})
    (1, (False, None))
    """
    folder = Path(folder)
    grids = [folder / name] if name is not None else [p for p in folder.glob("*") if p.is_dir()]
    removed = 0
    for grid in grids:
        if not grid.is_dir():
            continue
        try:
            for path in grid.iterdir():
                if path.is_file() and path.suffix in _CACHE_SUFFIXES:
                    path.unlink()
                    removed += 1
            if not any(grid.iterdir()):
                grid.rmdir()
        except PermissionError as exc:
            raise CacheNotWritable(f"cannot clear the experiment cache folder {grid}: {exc.strerror} ({removed} "
                                   "file(s) deleted before)") from None
    return removed
