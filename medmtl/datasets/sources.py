"""Every bundled data set as stored: its files, its parser, and the shape its parse must have.

:data:`SOURCES` maps each data set's key in the manifest's ``loaders`` table to its
:class:`Source`. :func:`read` is what a loader calls: the files are checked against the
manifest (:mod:`medmtl.datasets.manifest`) before they are parsed and the parse's shape
after. :func:`build_manifest` and :func:`check_folder` write and compare a folder's manifest
from the same table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np

import medmtl.datasets.parsers as parsers
from medmtl.datasets.manifest import (
    MANIFEST_NAME,
    DataFileError,
    _identity,
    check_shape,
    data_home,
    file_sha256,
    read_manifest,
    verified_path,
)

__all__ = ["Source", "SOURCES", "SENTIMENT_DOMAINS", "read", "verified", "build_manifest", "check_folder"]

SENTIMENT_DOMAINS = ("books", "dvd", "electronics", "kitchen")


@dataclass(frozen=True)
class Source:
    """One data set as stored: its files, how to parse them, and the shape of the parse."""

    loader: str                 # the call that reads it, for messages and the manifest
    files: tuple                # paths inside the data folder
    parse: Callable             # parse(*paths) -> the parsed data
    shape: Callable             # shape(parsed) -> rows, features, tasks, classes
    memoise: bool = False       # keep the parse for later calls (outputs must not share it)


def _shape(rows, features, tasks, classes):
    return {"rows": int(rows), "features": features, "tasks": int(tasks), "classes": classes}


def _n_classes(labels):
    return int(np.unique(np.asarray(labels)).size)


def _n_features(blocks):
    """The common column count of per-task blocks, or the sorted distinct counts if they differ."""
    widths = sorted({int(b.shape[1]) for b in blocks})
    return widths[0] if len(widths) == 1 else widths


def _parse(key, paths):
    """Parse data set ``key`` from ``paths``; any failure becomes a DataFileError naming the files."""
    source = SOURCES[key]
    try:
        parsed = source.parse(*paths)
        return parsed, source.shape(parsed)
    except DataFileError:
        raise
    except Exception as exc:  # a parser's own error does not say which file it was reading
        files = ", ".join(str(p) for p in paths)
        raise DataFileError(f"could not parse {files} for {source.loader}: {type(exc).__name__}: {exc}") from exc


def parsed_shape(key, home):
    """The shape parsed from data set ``key``'s files in folder ``home``, unchecked (for the manifest)."""
    return _parse(key, [Path(home) / f for f in SOURCES[key].files])[1]


def verified(key):
    """Data set ``key``'s files, checked against the manifest, and their versions.

    A version is (resolved path, size, modification time): what a memoised parse is keyed on.
    """
    paths = [verified_path(f) for f in SOURCES[key].files]
    return paths, tuple(_identity(p) for p in paths)


_parsed = {}  # key -> (file versions, parse) of the memoised data sets


def read(key):
    """Data set ``key`` parsed from the data folder: files checked before parsing, shape after."""
    source = SOURCES[key]
    paths, versions = verified(key)
    if source.memoise and key in _parsed and _parsed[key][0] == versions:
        return _parsed[key][1]
    parsed, found = _parse(key, paths)
    check_shape(key, found, paths)
    if source.memoise:
        _parsed[key] = (versions, parsed)
    return parsed


def _table_shape(D, classes):
    return _shape(len(D), D.shape[1] - 1, 1, classes)


def _arrays_shape(parsed):
    X, labels = parsed
    return _shape(X.shape[0], int(np.prod(X.shape[1:])), 1, _n_classes(labels))


def _tasks_shape(tasks):
    return _shape(sum(len(y) for _, y in tasks), _n_features([X for X, _ in tasks]), len(tasks),
                  _n_classes(np.concatenate([y for _, y in tasks])))


def _domain_files(domain):
    return tuple(f"blitzer_sentiment/processed_acl/{domain}/{pol}.review.gz" for pol in ("positive", "negative"))


SOURCES = {
    "landmine": Source("load_landmine()", ("landmine/LandmineData.mat",), parsers.parse_landmine, _tasks_shape),
    "dermatology": Source("load_dermatology()", ("uci_dermatology/dermatology.data",), parsers.parse_dermatology,
                           lambda p: _shape(len(p[0]), p[0].shape[1], 1, _n_classes(p[1])), memoise=True),
    "splice": Source("load_splice()", ("uci_splice/splice.csv",), parsers.parse_splice, _arrays_shape, memoise=True),
    **{f"statlog_dna/{split}": Source(f"load_statlog_dna({split!r})", (f"statlog_dna/{name}",),
                                       parsers.parse_statlog_dna, _arrays_shape)
       for split, name in (("train", "dna.scale"), ("test", "dna.scale.t"))},
    "heart": Source("load_heart()", ("uci_statlog_heart/heart.dat",), parsers.parse_heart,
                     lambda D: _table_shape(D, _n_classes(D[:, -1]))),
    "housing": Source("load_housing()", ("boston_housing/housing.data",), partial(parsers.parse_table, columns=14),
                       lambda D: _table_shape(D, None)),
    "spam": Source("load_spam()", ("ecml2006_spam_taskB/emails.mat",), parsers.parse_spam, _tasks_shape),
    **{f"sentiment/{dom}": Source(f"load_sentiment([{dom!r}])", _domain_files(dom), parsers.parse_sentiment_domain,
                                   lambda p: _shape(len(p[0]), len(set().union(*p[0])), 1, _n_classes(p[1])))
       for dom in SENTIMENT_DOMAINS},
    "20newsgroups": Source("load_20newsgroups()", ("20newsgroups/20news-bydate.tar.gz",), parsers.parse_newsgroups,
                            lambda p: _shape(len(p[0]), None, 1, len(set(p[1]))), memoise=True),
    **{f"usps/{split}": Source(f"load_usps({split!r})", ("usps/usps.h5",), partial(parsers.parse_usps, split=split),
                                _arrays_shape)
       for split in ("train", "test")},
    "mnist_test": Source("load_mnist_test()", ("mnist_test_only/t10k-images-idx3-ubyte.gz",
                                                "mnist_test_only/t10k-labels-idx1-ubyte.gz"),
                          parsers.parse_mnist, _arrays_shape),
    "nci60": Source("load_nci60()", ("nci60/NCI60.csv.gz",), parsers.parse_nci60, _arrays_shape),
}

def _data_files(home):
    home = Path(home)
    return sorted(p.relative_to(home).as_posix() for p in home.rglob("*")
                  if p.is_file() and p.name not in ("README.md", MANIFEST_NAME))


def build_manifest(home, shapes=True):
    """The manifest of a data folder as it is now: every file's hash and size, every data set's shape.

    Parameters
    ----------
    home : path-like
        The data folder.
    shapes : bool, default=True
        Parse every data set whose files the folder holds, for the ``loaders`` table (the
        slow part); ``False`` leaves the table empty.

    Returns
    -------
    dict
        The ``files`` and ``loaders`` tables (see :mod:`medmtl.datasets.manifest`).

    Examples
    --------
    >>> manifest = build_manifest(data_home(), shapes=False)
    >>> manifest["files"]["uci_statlog_heart/heart.dat"]["size"]
    16623
    """
    home = Path(home)
    files = {rel: {"sha256": file_sha256(home / rel), "size": (home / rel).stat().st_size}
             for rel in _data_files(home)}
    # A folder may hold only some of the data sets; the manifest describes those it holds.
    loaders = {key: {"loader": source.loader, "files": list(source.files), **parsed_shape(key, home)}
               for key, source in SOURCES.items()
               if shapes and all(rel in files for rel in source.files)}
    return {"about": "SHA-256 and size of each data file, and the shape each loader parses; "
                     "regenerate with: python -m medmtl.datasets --write",
            "files": files, "loaders": loaders}


def check_folder(home=None, shapes=True):
    """Every difference between a data folder and the manifest that applies to it.

    Parameters
    ----------
    home : path-like, optional
        The data folder; default :func:`data_home`.
    shapes : bool, default=True
        Also parse every data set and compare its shape (slow); ``False`` compares the
        files' hashes and sizes only.

    Returns
    -------
    list of str
        One line per file or data set that differs; empty when the folder matches.

    Examples
    --------
    >>> check_folder(shapes=False)
    []
    """
    home = data_home() if home is None else Path(home)
    manifest_path, manifest = read_manifest(home)
    actual = build_manifest(home, shapes)
    problems = []
    for table in ("files", "loaders") if shapes else ("files",):
        want, have = manifest[table], actual[table]
        for name in sorted(set(want) | set(have)):
            if name not in have:
                problems.append(f"{table}: {name} is in {manifest_path} but not in {home}")
            elif name not in want:
                problems.append(f"{table}: {name} is in {home} but not in {manifest_path}")
            elif want[name] != have[name]:
                problems.append(f"{table}: {name} is {have[name]}; {manifest_path} has {want[name]}")
    return problems
