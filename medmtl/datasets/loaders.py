"""Loaders for the real data sets bundled in ``data/`` (each folder has a README).

Every loader reads the original files with numpy / scipy / the standard library and returns
either a :class:`MultiTaskDataset` or, for multi-class and matrix-shaped sources, plain
arrays that :func:`multiclass_tasks` or an experiment turns into tasks. The files come from
:func:`~medmtl.datasets.data_home` (``$MEDMTL_DATA`` overrides it). Each file is checked
against the data manifest before it is parsed and the parsed shape after, so a damaged or
different file raises :class:`~medmtl.datasets.DataFileError` naming it.
"""

from __future__ import annotations

import csv
import gzip
import struct
import tarfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.io as sio
import scipy.sparse as sp

from medmtl.datasets.base import MultiTaskDataset, Task, multiclass_tasks
from medmtl.datasets.manifest import DataFileError, _identity, check_shape, verified_path

__all__ = [
    "load_landmine", "load_dermatology", "load_splice", "load_statlog_dna",
    "load_heart", "load_housing", "load_spam", "load_sentiment", "load_20newsgroups",
    "load_usps", "load_mnist_test", "load_nci60",
]

SENTIMENT_DOMAINS = ("books", "dvd", "electronics", "kitchen")
DERMATOLOGY_CLASSES = ("psoriasis", "seboreic dermatitis", "lichen planus", "pityriasis rosea",
                       "cronic dermatitis", "pityriasis rubra pilaris")
HEART_FEATURES = ("age", "sex", "chest pain type", "resting blood pressure", "serum cholesterol",
                  "fasting blood sugar", "resting ecg", "max heart rate", "exercise angina",
                  "oldpeak", "slope", "major vessels", "thal")
HOUSING_FEATURES = ("CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX",
                    "PTRATIO", "B", "LSTAT")


@dataclass(frozen=True)
class _Source:
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
    source = _SOURCES[key]
    try:
        parsed = source.parse(*paths)
        return parsed, source.shape(parsed)
    except DataFileError:
        raise
    except Exception as exc:  # a parser's own error does not say which file it was reading
        files = ", ".join(str(p) for p in paths)
        raise DataFileError(f"could not parse {files} for {source.loader}: {type(exc).__name__}: {exc}") from exc


def _parsed_shape(key, home):
    """The shape parsed from data set ``key``'s files in folder ``home``, unchecked (for the manifest)."""
    return _parse(key, [Path(home) / f for f in _SOURCES[key].files])[1]


def _verified(key):
    """Data set ``key``'s files, checked against the manifest, and their versions.

    A version is (resolved path, size, modification time): what a memoised parse is keyed on.
    """
    paths = [verified_path(f) for f in _SOURCES[key].files]
    return paths, tuple(_identity(p) for p in paths)


_parsed = {}  # key -> (file versions, parse) of the memoised data sets


def _read(key):
    """Data set ``key`` parsed from the data folder: files checked before parsing, shape after."""
    source = _SOURCES[key]
    paths, versions = _verified(key)
    if source.memoise and key in _parsed and _parsed[key][0] == versions:
        return _parsed[key][1]
    parsed, found = _parse(key, paths)
    check_shape(key, found, paths)
    if source.memoise:
        _parsed[key] = (versions, parsed)
    return parsed


def _maybe_tasks(X, labels, scheme, name):
    return (X, labels) if scheme is None else multiclass_tasks(X, labels, scheme, name=name)


def _parse_landmine(path):
    d = sio.loadmat(path)
    features, labels = d["feature"], d["label"]
    if features.shape != labels.shape or features.shape[0] != 1:
        raise DataFileError(f"{path}: 'feature' {features.shape} and 'label' {labels.shape} must both be 1 x tasks")
    tasks = [(np.asarray(features[0, m], dtype=np.float64), labels[0, m].ravel().astype(np.int64))
             for m in range(features.shape[1])]
    for m, (X, y) in enumerate(tasks):
        if X.ndim != 2 or X.shape[0] != len(y):
            raise DataFileError(f"{path}: field {m + 1} has features {X.shape} for {len(y)} labels")
    return tasks


def load_landmine(tasks=None):
    """The Duke landmine data: 29 tasks (minefields), 9 features, labels in {-1, +1}.

    Parameters
    ----------
    tasks : list of int, optional
        0-based task indices to keep (e.g. the 19-task subset ``[*range(10), *range(15, 24)]``).

    Examples
    --------
    >>> ds = load_landmine()
    >>> len(ds), ds[0].X.shape, sorted(set(ds[0].y.tolist()))
    (29, (690, 9), [-1, 1])
    """
    all_tasks = [Task(X, y * 2 - 1, f"field {m + 1}") for m, (X, y) in enumerate(_read("landmine"))]
    keep = range(len(all_tasks)) if tasks is None else tasks
    return MultiTaskDataset([all_tasks[m] for m in keep], "landmine",
                            [f"f{i + 1}" for i in range(9)],
                            "Xue et al. (2007) landmine detection; one task per minefield")


def _parse_dermatology(path):
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


def load_dermatology(impute_age=True):
    """UCI Dermatology as 6 one-vs-rest tasks over the same 366 patients and 34 features.

    Parameters
    ----------
    impute_age : bool, default=True
        Replace the 8 missing ages by the mean age; when False, drop those patients.

    Returns
    -------
    MultiTaskDataset

    Examples
    --------
    >>> ds = load_dermatology()
    >>> len(ds), ds[0].X.shape, int((ds[0].y == 1).sum())
    (6, (366, 34), 112)
    """
    X, labels = _read("dermatology")
    X = X.copy()
    missing = np.isnan(X[:, 33])
    if impute_age:
        X[missing, 33] = np.nanmean(X[:, 33])
    else:
        X, labels = X[~missing], labels[~missing]
    ds = multiclass_tasks(X, labels, "one-vs-rest", name="dermatology")
    ds.tasks = [Task(t.X, t.y, DERMATOLOGY_CLASSES[k]) for k, t in enumerate(ds.tasks)]
    ds.description = "UCI Dermatology, one-vs-rest per disease"
    return ds


_NUCLEOTIDES = {"A": 0, "C": 1, "G": 2, "T": 3}
_SPLICE_CLASSES = ("EI", "IE", "N")
_SPLICE_LETTERS = frozenset("ACGTDNSR")  # D, N, S and R are ambiguity codes


def _parse_splice(path):
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


def load_splice(window=None, positive="EI", negative=None):
    """UCI splice junctions, one-hot nucleotides (4 features per position), one binary task.

    Parameters
    ----------
    window : int, optional
        Keep the ``window`` positions centred on the junction (25 gives the lecture's 100
        features); default all 60 positions (240 features).
    positive : {"EI", "IE", "N"}
        The class labelled +1.
    negative : str or None
        The class labelled -1; ``None`` for all other classes.

    Examples
    --------
    >>> ds = load_splice(window=25)
    >>> ds[0].X.shape, int((ds[0].y == 1).sum())
    ((3190, 100), 767)
    """
    onehot, labels = _read("splice")
    if window is not None:
        if not 1 <= window <= 60:
            raise ValueError(f"window must be in 1..60, got {window}")
        start = 30 - window // 2
        onehot = onehot[:, start:start + window]
    X = onehot.reshape(len(labels), -1)
    if negative is None:
        keep = np.ones(len(labels), bool)
        name = f"{positive} vs rest"
    else:
        keep = np.isin(labels, [positive, negative])
        name = f"{positive} vs {negative}"
    y = np.where(labels[keep] == positive, 1, -1)
    positions = range(-(X.shape[1] // 8), X.shape[1] // 8) if window is None else range(X.shape[1] // 4)
    names = [f"pos{p}:{n}" for p in positions for n in "ACGT"]
    return MultiTaskDataset([Task(X[keep], y, name)], "splice", names[:X.shape[1]],
                            "UCI splice-junction DNA, one-hot A/C/G/T per position")


def _parse_statlog_dna(path):
    from sklearn.datasets import load_svmlight_file

    X, labels = load_svmlight_file(str(path), n_features=180)
    if not np.isin(labels, (1, 2, 3)).all():
        raise DataFileError(f"{path}: class labels must be 1, 2 or 3")
    return X.tocsr(), labels.astype(np.int64)


def load_statlog_dna(split="train", scheme=None):
    """StatLog DNA (LIBSVM ``dna.scale``): 180 binary features, classes 1=EI, 2=IE, 3=neither.

    Parameters
    ----------
    split : {"train", "test"}
    scheme : {None, "one-vs-rest", "one-vs-one"}
        ``None`` returns the multi-class arrays; a scheme returns the binary tasks as a
        :class:`MultiTaskDataset` (see :func:`multiclass_tasks`).

    Returns
    -------
    X : sparse CSR matrix of shape (n_samples, 180)
    labels : ndarray of shape (n_samples,), values in {1, 2, 3}

    Examples
    --------
    >>> X, labels = load_statlog_dna("test")
    >>> X.shape, np.bincount(labels).tolist()
    ((1186, 180), [0, 303, 280, 603])
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    X, labels = _read(f"statlog_dna/{split}")
    return _maybe_tasks(X, labels, scheme, f"statlog_dna-{split}")


def _parse_table(path, columns, skiprows=0):
    """A whitespace-separated numeric table with ``columns`` values per row."""
    D = np.loadtxt(path, skiprows=skiprows, ndmin=2)
    if D.shape[1] != columns:
        raise DataFileError(f"{path}: expected {columns} values per row, got {D.shape[1]}")
    return D


def _parse_heart(path):
    D = _parse_table(path, 14, skiprows=1)
    if not np.isin(D[:, 13], (1, 2)).all():
        raise DataFileError(f"{path}: class labels (last column) must be 1 or 2")
    return D


def load_heart(n_tasks=10, scale=True):
    """UCI Statlog Heart split into ``n_tasks`` age groups of (nearly) equal size.

    Label +1 is presence of heart disease.

    Parameters
    ----------
    n_tasks : int, default=10
        The number of age groups (tasks).
    scale : bool, default=True
        Scale features into [0, 1] (column min/max over all patients), as in the JMLR
        paper's adaptive-pooling experiment.

    Returns
    -------
    MultiTaskDataset

    Examples
    --------
    >>> ds = load_heart()
    >>> len(ds), sum(t.n_samples for t in ds), ds[0].X.shape[1]
    (10, 270, 13)
    """
    d = _read("heart")
    X, y = d[:, :13], np.where(d[:, 13] == 2, 1, -1)
    age = X[:, 0]
    if scale:
        lo, hi = X.min(axis=0), X.max(axis=0)
        X = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    order = np.argsort(age, kind="stable")
    groups = np.array_split(order, n_tasks)
    tasks = [Task(X[g], y[g], f"age {age[g].min():.0f}-{age[g].max():.0f}") for g in groups]
    return MultiTaskDataset(tasks, "heart", list(HEART_FEATURES), "UCI Statlog Heart, tasks by age")


def load_housing():
    """Boston housing: 506 x 13 inputs, target MEDV (in $1000s), one regression task.

    Examples
    --------
    >>> ds = load_housing()
    >>> ds[0].X.shape, round(float(ds[0].y.mean()), 2)
    ((506, 13), 22.53)
    """
    D = _read("housing")
    return MultiTaskDataset([Task(D[:, :13], D[:, 13], "MEDV")], "housing", list(HOUSING_FEATURES),
                            "Boston housing (Harrison & Rubinfeld 1978)")


def _parse_spam(path):
    d = sio.loadmat(path)
    X, Y = d["X"], d["Y"]
    if X.shape != Y.shape or X.shape[0] != 1:
        raise DataFileError(f"{path}: 'X' {X.shape} and 'Y' {Y.shape} must both be 1 x users")
    users = [(sp.csr_matrix(X[0, u], dtype=np.float64), Y[0, u].ravel().astype(np.int64))
             for u in range(X.shape[1])]
    for u, (Xu, yu) in enumerate(users):
        if Xu.shape[0] != len(yu):
            raise DataFileError(f"{path}: user {u + 1} has {Xu.shape[0]} emails for {len(yu)} labels")
    return users


def load_spam():
    """ECML/PKDD 2006 spam task B: 15 user inboxes, 400 emails each, CSR counts x 152,543.

    Label +1 is spam.

    Examples
    --------
    >>> ds = load_spam()
    >>> len(ds), ds[0].X.shape, ds[0].X.format
    (15, (400, 152543), 'csr')
    """
    tasks = [Task(X, y * 2 - 1, f"user {u + 1}") for u, (X, y) in enumerate(_read("spam"))]
    return MultiTaskDataset(tasks, "spam", None, "ECML/PKDD 2006 Discovery Challenge task B")


def _read_reviews(path, polarity):
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


def _parse_sentiment_domain(positive_path, negative_path):
    pos, neg = _read_reviews(positive_path, "positive"), _read_reviews(negative_path, "negative")
    return pos + neg, np.array([1] * len(pos) + [-1] * len(neg), dtype=np.int64)


def load_sentiment(domains=SENTIMENT_DOMAINS):
    """Blitzer et al. multi-domain sentiment: one task per domain, CSR unigram+bigram counts.

    All domains share one vocabulary (sorted tokens), so the tasks live in one input space.
    Label +1 is a positive review.

    Parameters
    ----------
    domains : sequence of str, default=SENTIMENT_DOMAINS
        The domains to load, one task each.

    Returns
    -------
    MultiTaskDataset

    Examples
    --------
    >>> ds = load_sentiment()
    >>> len(ds), ds[0].X.shape[0], ds[0].X.format, ds.n_features == len(ds.feature_names)
    (4, 2000, 'csr', True)
    """
    for dom in domains:
        if dom not in SENTIMENT_DOMAINS:
            raise ValueError(f"unknown sentiment domain {dom!r}; choose from {SENTIMENT_DOMAINS}")
    per_domain = [(dom, *_read(f"sentiment/{dom}")) for dom in domains]
    vocab = sorted({w for _, docs, _ in per_domain for d in docs for w in d})
    index = {w: i for i, w in enumerate(vocab)}
    tasks = []
    for dom, docs, ys in per_domain:
        indptr, indices, values = [0], [], []
        for d in docs:
            cols = sorted(index[w] for w in d)
            indices += cols
            values += [d[vocab[c]] for c in cols]
            indptr.append(len(indices))
        X = sp.csr_matrix((np.array(values, float), np.array(indices), np.array(indptr)),
                          shape=(len(docs), len(vocab)))
        tasks.append(Task(X, ys, dom))
    return MultiTaskDataset(tasks, "sentiment", vocab, "Blitzer et al. (2007) processed_acl, labelled part")


def _parse_newsgroups(path):
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


def load_20newsgroups(subset="all"):
    """The 20 Newsgroups bydate posts as raw text.

    Parameters
    ----------
    subset : {"all", "train", "test"}, default="all"
        Which part of the bydate split to load.

    Returns
    -------
    docs : list of str
        Each post, headers included.
    group_names : list of str
        The 20 newsgroup names, sorted.
    labels : ndarray of int
        Index into ``group_names`` for each post.

    Examples
    --------
    >>> docs, names, labels = load_20newsgroups("train")
    >>> len(docs), len(names), int((labels == names.index("alt.atheism")).sum())
    (11314, 20, 480)
    """
    if subset not in ("train", "test", "all"):
        raise ValueError(f"subset must be 'train', 'test' or 'all', got {subset!r}")
    docs, groups, parts = _read("20newsgroups")
    names = sorted(set(groups))
    keep = [i for i, p in enumerate(parts) if subset == "all" or p == subset]
    index = {g: k for k, g in enumerate(names)}
    return [docs[i] for i in keep], names, np.array([index[groups[i]] for i in keep], dtype=np.int64)


def _parse_usps(path, split):
    import h5py

    with h5py.File(path, "r") as f:
        X = np.asarray(f[f"{split}/data"][:], dtype=np.float64)
        labels = np.asarray(f[f"{split}/target"][:], dtype=np.int64)
    if X.ndim != 2 or X.shape[0] != len(labels):
        raise DataFileError(f"{path}: {split}/data {X.shape} does not match {len(labels)} {split}/target labels")
    return X, labels


def load_usps(split="train", scheme=None):
    """USPS digits: 16x16 grey images flattened to 256 values in [0, 1], digit labels 0-9.

    Parameters
    ----------
    split : {"train", "test"}, default="train"
        Which part of the data to load.
    scheme : {None, "one-vs-one", "one-vs-rest"}, default=None
        None returns ``(X, labels)``; a scheme returns the binary digit tasks as a
        :class:`MultiTaskDataset`.

    Returns
    -------
    (ndarray, ndarray) or MultiTaskDataset

    Examples
    --------
    >>> X, labels = load_usps("test")
    >>> X.shape, X.dtype, int(labels.max())
    ((2007, 256), dtype('float64'), 9)
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    X, labels = _read(f"usps/{split}")
    return _maybe_tasks(X, labels, scheme, f"usps-{split}")


def _read_idx(path):
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


def _parse_mnist(images_path, labels_path):
    images, labels = _read_idx(images_path), _read_idx(labels_path)
    if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
        raise DataFileError(f"{images_path} {images.shape} and {labels_path} {labels.shape} "
                            "must hold n images and n labels")
    return images, labels


def load_mnist_test(scheme=None):
    """MNIST's 10,000 test digits (the only split bundled): 784 values in [0, 1], labels 0-9.

    Parameters
    ----------
    scheme : {None, "one-vs-one", "one-vs-rest"}, default=None
        As in :func:`load_usps`: the binary digit tasks instead of ``(X, labels)``.

    Returns
    -------
    (ndarray, ndarray) or MultiTaskDataset

    Examples
    --------
    >>> X, labels = load_mnist_test()
    >>> X.shape, np.bincount(labels)[:3].tolist()
    ((10000, 784), [980, 1135, 1032])
    """
    images, labels = _read("mnist_test")
    X = images.reshape(len(images), -1).astype(np.float64) / 255.0
    return _maybe_tasks(X, labels.astype(np.int64), scheme, "mnist-test")


def _parse_nci60(path):
    with gzip.open(path, "rt") as fh:
        lines = [line.rstrip("\n").split(",") for line in fh]
    header, rows = lines[0], lines[1:]
    short = [i for i, r in enumerate(rows, start=2) if len(r) != len(header)]
    if short:
        raise DataFileError(f"{path}: line {short[0]} has a different number of values than the header")
    labels = np.array([r[0].strip('"') for r in rows])
    X = np.array([[float(v) for v in r[1:]] for r in rows])
    return X, labels


def load_nci60(targets=None):
    """NCI60 expression: 64 cell-line samples x 6,830 genes, and each sample's cancer type.

    Parameters
    ----------
    targets : list of int, optional
        Cell lines (row indices) to predict. If given, returns a regression
        :class:`MultiTaskDataset` whose examples are genes: task ``k`` predicts cell line
        ``targets[k]``'s expression (y) from the other 63 cell lines' (X), as in the
        lecture's cancer-data regression.

    Returns
    -------
    X : ndarray of shape (64, 6830)
    labels : ndarray of str, shape (64,)

    Examples
    --------
    >>> X, labels = load_nci60()
    >>> X.shape, int((labels == "RENAL").sum())
    ((64, 6830), 9)
    """
    X, labels = _read("nci60")
    if targets is None:
        return X, labels
    tasks = []
    for k in targets:
        others = np.delete(np.arange(X.shape[0]), k)
        tasks.append(Task(X[others].T.copy(), X[k].copy(), f"line {k} ({labels[k]})"))
    return MultiTaskDataset(tasks, "nci60", None, "NCI60: genes as examples, other cell lines as inputs")


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


# Every data set a loader reads, by its key in the manifest's ``loaders`` table.
_SOURCES = {
    "landmine": _Source("load_landmine()", ("landmine/LandmineData.mat",), _parse_landmine, _tasks_shape),
    "dermatology": _Source("load_dermatology()", ("uci_dermatology/dermatology.data",), _parse_dermatology,
                           lambda p: _shape(len(p[0]), p[0].shape[1], 1, _n_classes(p[1])), memoise=True),
    "splice": _Source("load_splice()", ("uci_splice/splice.csv",), _parse_splice, _arrays_shape, memoise=True),
    **{f"statlog_dna/{split}": _Source(f"load_statlog_dna({split!r})", (f"statlog_dna/{name}",),
                                       _parse_statlog_dna, _arrays_shape)
       for split, name in (("train", "dna.scale"), ("test", "dna.scale.t"))},
    "heart": _Source("load_heart()", ("uci_statlog_heart/heart.dat",), _parse_heart,
                     lambda D: _table_shape(D, _n_classes(D[:, -1]))),
    "housing": _Source("load_housing()", ("boston_housing/housing.data",), partial(_parse_table, columns=14),
                       lambda D: _table_shape(D, None)),
    "spam": _Source("load_spam()", ("ecml2006_spam_taskB/emails.mat",), _parse_spam, _tasks_shape),
    **{f"sentiment/{dom}": _Source(f"load_sentiment([{dom!r}])", _domain_files(dom), _parse_sentiment_domain,
                                   lambda p: _shape(len(p[0]), len(set().union(*p[0])), 1, _n_classes(p[1])))
       for dom in SENTIMENT_DOMAINS},
    "20newsgroups": _Source("load_20newsgroups()", ("20newsgroups/20news-bydate.tar.gz",), _parse_newsgroups,
                            lambda p: _shape(len(p[0]), None, 1, len(set(p[1]))), memoise=True),
    **{f"usps/{split}": _Source(f"load_usps({split!r})", ("usps/usps.h5",), partial(_parse_usps, split=split),
                                _arrays_shape)
       for split in ("train", "test")},
    "mnist_test": _Source("load_mnist_test()", ("mnist_test_only/t10k-images-idx3-ubyte.gz",
                                                "mnist_test_only/t10k-labels-idx1-ubyte.gz"),
                          _parse_mnist, _arrays_shape),
    "nci60": _Source("load_nci60()", ("nci60/NCI60.csv.gz",), _parse_nci60, _arrays_shape),
}
