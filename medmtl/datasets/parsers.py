"""Parsers of the bundled data files: each reads one file format and returns plain arrays.

A parser checks the structure it relies on (field shapes, label values, line formats) and
raises :class:`~medmtl.datasets.manifest.DataFileError` naming the file when the structure is
not there. Which file each data set reads, and the shape its parse must have, is in
:mod:`medmtl.datasets.sources`.
"""

from __future__ import annotations

import csv
import gzip
import struct
import tarfile

import numpy as np
import scipy.io as sio
import scipy.sparse as sp

from medmtl.datasets.manifest import DataFileError

_NUCLEOTIDES = {"A": 0, "C": 1, "G": 2, "T": 3}
_SPLICE_CLASSES = ("EI", "IE", "N")
_SPLICE_LETTERS = frozenset("ACGTDNSR")  # D, N, S and R are ambiguity codes



def _mat_cells(path, inputs, labels, what, as_inputs):
    """The (inputs, labels) pairs of a MAT-file holding two 1 x tasks cell arrays.

    ``as_inputs`` converts one cell of ``inputs`` (to a float array or a CSR matrix); the
    labels become int64 vectors. ``what`` names one cell in messages ("field", "user").
    """
    d = sio.loadmat(path)
    A, B = d[inputs], d[labels]
    if A.shape != B.shape or A.shape[0] != 1:
        raise DataFileError(f"{path}: {inputs!r} {A.shape} and {labels!r} {B.shape} must both be 1 x tasks")
    pairs = [(as_inputs(A[0, m]), B[0, m].ravel().astype(np.int64)) for m in range(A.shape[1])]
    for m, (X, y) in enumerate(pairs):
        if X.ndim != 2 or X.shape[0] != len(y):
            raise DataFileError(f"{path}: {what} {m + 1} has inputs of shape {X.shape} for {len(y)} labels")
    return pairs


def parse_landmine(path):
    return _mat_cells(path, "feature", "label", "field", lambda c: np.asarray(c, dtype=np.float64))


def parse_spam(path):
    return _mat_cells(path, "X", "Y", "user", lambda c: sp.csr_matrix(c, dtype=np.float64))


def parse_dermatology(path):
    D = np.genfromtxt(path, delimiter=",", missing_values="?", filling_values=np.nan)
    if D.ndim != 2 or D.shape[1] != 35:
        raise DataFileError(f"{path}: expected rows of 35 comma-separated values, got an array of shape {D.shape}")
    D = D[~np.all(np.isnan(D), axis=1)]
    # Only the age (column 33) has missing values; anything else unreadable is damage.
    bad = np.argwhere(np.isnan(np.delete(D, 33, axis=1)))
    if bad.size:
        raise DataFileError(f"{path}: row {bad[0, 0] + 1} has a missing or non-numeric value outside the age column")
    if not np.isin(D[:, 34], np.arange(1, 7)).all():
        raise DataFileError(f"{path}: class labels (last column) must be 1..6")
    return D[:, :34], D[:, 34].astype(int)



def parse_splice(path):
    with open(path, newline="") as fh:
        rows = [[c.strip() for c in r] for r in csv.reader(fh)][1:]
    for line, r in enumerate(rows, start=2):
        if len(r) != 3 or r[0] not in _SPLICE_CLASSES or len(r[2]) != 60 or not _SPLICE_LETTERS.issuperset(r[2]):
            raise DataFileError(f"{path}: line {line} is not 'class (EI/IE/N), donor, 60 nucleotides'")
    labels = np.array([r[0] for r in rows])
    seqs = [r[2] for r in rows]
    onehot = np.zeros((len(seqs), 60, 4))
    for i, s in enumerate(seqs):
        for j, ch in enumerate(s):
            k = _NUCLEOTIDES.get(ch)
            if k is not None:  # ambiguity codes stay all-zero
                onehot[i, j, k] = 1.0
    return onehot, labels



def parse_statlog_dna(path):
    from sklearn.datasets import load_svmlight_file

    X, labels = load_svmlight_file(str(path), n_features=180)
    if not np.isin(labels, (1, 2, 3)).all():
        raise DataFileError(f"{path}: class labels must be 1, 2 or 3")
    return X.tocsr(), labels.astype(np.int64)



def parse_table(path, columns, skiprows=0):
    """A whitespace-separated numeric table with ``columns`` values per row."""
    D = np.loadtxt(path, skiprows=skiprows, ndmin=2)
    if D.shape[1] != columns:
        raise DataFileError(f"{path}: expected {columns} values per row, got {D.shape[1]}")
    return D



def parse_heart(path):
    D = parse_table(path, 14, skiprows=1)
    if not np.isin(D[:, 13], (1, 2)).all():
        raise DataFileError(f"{path}: class labels (last column) must be 1 or 2")
    return D



def read_reviews(path, polarity):
    """The reviews of one file, each a dict token -> count; every line must end in the file's label."""
    label = f"#label#:{polarity}"
    docs = []
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line_no, line in enumerate(fh, start=1):
            toks = line.split()
            if not toks:
                continue
            if toks[-1] != label:
                raise DataFileError(f"{path}: line {line_no} does not end with {label}")
            doc = {}
            for tok in toks[:-1]:
                word, count = tok.rsplit(":", 1)
                doc[word] = int(count)
            docs.append(doc)
    return docs



def parse_sentiment_domain(positive_path, negative_path):
    pos, neg = read_reviews(positive_path, "positive"), read_reviews(negative_path, "negative")
    return pos + neg, np.array([1] * len(pos) + [-1] * len(neg), dtype=np.int64)



def parse_newsgroups(path):
    docs, groups, parts = [], [], []
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            pieces = member.name.split("/")
            if len(pieces) != 3:
                continue
            part, group, _ = pieces
            docs.append(tar.extractfile(member).read().decode("latin-1"))
            groups.append(group)
            parts.append("train" if part.endswith("train") else "test")
    return tuple(docs), tuple(groups), tuple(parts)



def parse_usps(path, split):
    import h5py

    with h5py.File(path, "r") as f:
        X = np.asarray(f[f"{split}/data"][:], dtype=np.float64)
        labels = np.asarray(f[f"{split}/target"][:], dtype=np.int64)
    if X.ndim != 2 or X.shape[0] != len(labels):
        raise DataFileError(f"{path}: {split}/data {X.shape} does not match {len(labels)} {split}/target labels")
    return X, labels



def read_idx(path):
    """An IDX file of unsigned bytes (the MNIST format): 0, 0, 0x08, ndim, big-endian dims, data."""
    with gzip.open(path) as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[:3] != b"\x00\x00\x08":
        raise DataFileError(f"{path}: not an IDX file of unsigned bytes")
    ndim = raw[3]
    header = 4 + 4 * ndim
    dims = struct.unpack(">" + "I" * ndim, raw[4:header])
    if len(raw) - header != int(np.prod(dims)):
        raise DataFileError(f"{path}: the header gives dimensions {dims} but {len(raw) - header} bytes follow it")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims)



def parse_mnist(images_path, labels_path):
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
        raise DataFileError(f"{images_path} {images.shape} and {labels_path} {labels.shape} "
                            "must hold n images and n labels")
    return images, labels



def parse_nci60(path):
    with gzip.open(path, "rt") as fh:
        lines = [line.rstrip("\n").split(",") for line in fh]
    header, rows = lines[0], lines[1:]
    short = [i for i, r in enumerate(rows, start=2) if len(r) != len(header)]
    if short:
        raise DataFileError(f"{path}: line {short[0]} has a different number of values than the header")
    labels = np.array([r[0].strip('"') for r in rows])
    X = np.array([[float(v) for v in r[1:]] for r in rows])
    return X, labels
