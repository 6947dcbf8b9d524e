"""Loaders for the real data sets bundled in ``data/`` (each folder has a README).

Every loader reads the original files with numpy / scipy / the standard library and returns
either a :class:`MultiTaskDataset` or, for multi-class and matrix-shaped sources, plain
arrays that :func:`multiclass_tasks` or an experiment turns into tasks. ``$MEDMTL_DATA``
overrides the data folder.
"""

from __future__ import annotations

import csv
import gzip
import os
import struct
import tarfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.io as sio
import scipy.sparse as sp

from medmtl.datasets.base import MultiTaskDataset, Task, multiclass_tasks

__all__ = [
    "data_dir", "load_landmine", "load_dermatology", "load_splice", "load_statlog_dna",
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


def data_dir():
    """The folder holding the bundled data sets (``$MEDMTL_DATA`` or the repository's ``data/``)."""
    env = os.environ.get("MEDMTL_DATA")
    path = Path(env) if env else Path(__file__).resolve().parents[2] / "data"
    if not path.is_dir():
        raise FileNotFoundError(f"data folder {path} not found; set MEDMTL_DATA to the folder "
                                "holding landmine/, uci_dermatology/, ...")
    return path


def _file(*parts):
    path = data_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"missing data file {path}")
    return path


def _maybe_tasks(X, labels, scheme, name):
    return (X, labels) if scheme is None else multiclass_tasks(X, labels, scheme, name=name)


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
    d = sio.loadmat(_file("landmine", "LandmineData.mat"))
    all_tasks = [Task(np.asarray(d["feature"][0, m], dtype=np.float64),
                      d["label"][0, m].ravel().astype(np.int64) * 2 - 1, f"field {m + 1}")
                 for m in range(d["feature"].shape[1])]
    keep = range(len(all_tasks)) if tasks is None else tasks
    return MultiTaskDataset([all_tasks[m] for m in keep], "landmine",
                            [f"f{i + 1}" for i in range(9)],
                            "Xue et al. (2007) landmine detection; one task per minefield")


@lru_cache(maxsize=1)
def _dermatology_raw():
    D = np.genfromtxt(_file("uci_dermatology", "dermatology.data"), delimiter=",",
                      missing_values="?", filling_values=np.nan)
    D = D[~np.all(np.isnan(D), axis=1)]
    return D[:, :34], D[:, 34].astype(int)


def load_dermatology(impute_age=True):
    """UCI Dermatology as 6 one-vs-rest tasks over the same 366 patients and 34 features.

    The 8 missing ages are replaced by the mean age when ``impute_age`` (the default), or
    those rows are dropped otherwise.

    Examples
    --------
    >>> ds = load_dermatology()
    >>> len(ds), ds[0].X.shape, int((ds[0].y == 1).sum())
    (6, (366, 34), 112)
    """
    X, labels = _dermatology_raw()
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


@lru_cache(maxsize=1)
def _splice_raw():
    with open(_file("uci_splice", "splice.csv"), newline="") as fh:
        rows = [[c.strip() for c in r] for r in csv.reader(fh)][1:]
    labels = np.array([r[0] for r in rows])
    seqs = [r[2] for r in rows]
    onehot = np.zeros((len(seqs), 60, 4))
    for i, s in enumerate(seqs):
        for j, ch in enumerate(s):
            k = _NUCLEOTIDES.get(ch)
            if k is not None:  # ambiguity codes (D, N, S, R) stay all-zero
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
    onehot, labels = _splice_raw()
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
    from sklearn.datasets import load_svmlight_file

    name = {"train": "dna.scale", "test": "dna.scale.t"}.get(split)
    if name is None:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    X, labels = load_svmlight_file(str(_file("statlog_dna", name)), n_features=180)
    return _maybe_tasks(X.tocsr(), labels.astype(np.int64), scheme, f"statlog_dna-{split}")


def load_heart(n_tasks=10, scale=True):
    """UCI Statlog Heart split into ``n_tasks`` age groups of (nearly) equal size.

    Features are scaled into [0, 1] (column min/max over all patients) when ``scale``, as in
    the JMLR paper's adaptive-pooling experiment. Label +1 is presence of heart disease.

    Examples
    --------
    >>> ds = load_heart()
    >>> len(ds), sum(t.n_samples for t in ds), ds[0].X.shape[1]
    (10, 270, 13)
    """
    d = np.loadtxt(_file("uci_statlog_heart", "heart.dat"), skiprows=1)
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
    D = np.loadtxt(_file("boston_housing", "housing.data"))
    return MultiTaskDataset([Task(D[:, :13], D[:, 13], "MEDV")], "housing", list(HOUSING_FEATURES),
                            "Boston housing (Harrison & Rubinfeld 1978)")


def load_spam():
    """ECML/PKDD 2006 spam task B: 15 user inboxes, 400 emails each, CSR counts x 152,543.

    Label +1 is spam.

    Examples
    --------
    >>> ds = load_spam()
    >>> len(ds), ds[0].X.shape, ds[0].X.format
    (15, (400, 152543), 'csr')
    """
    d = sio.loadmat(_file("ecml2006_spam_taskB", "emails.mat"))
    tasks = [Task(sp.csr_matrix(d["X"][0, u], dtype=np.float64),
                  d["Y"][0, u].ravel().astype(np.int64) * 2 - 1, f"user {u + 1}")
             for u in range(d["X"].shape[1])]
    return MultiTaskDataset(tasks, "spam", None, "ECML/PKDD 2006 Discovery Challenge task B")


def _read_reviews(path):
    docs, ys = [], []
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            toks = line.split()
            if not toks:
                continue
            ys.append(1 if toks[-1] == "#label#:positive" else -1)
            doc = {}
            for tok in toks[:-1]:
                word, count = tok.rsplit(":", 1)
                doc[word] = int(count)
            docs.append(doc)
    return docs, ys


def load_sentiment(domains=SENTIMENT_DOMAINS):
    """Blitzer et al. multi-domain sentiment: one task per domain, CSR unigram+bigram counts.

    All domains share one vocabulary (sorted tokens), so the tasks live in one input space.
    Label +1 is a positive review.

    Examples
    --------
    >>> ds = load_sentiment()
    >>> len(ds), ds[0].X.shape[0], ds[0].X.format, ds.n_features == len(ds.feature_names)
    (4, 2000, 'csr', True)
    """
    per_domain = []
    for dom in domains:
        docs, ys = [], []
        for pol in ("positive", "negative"):
            d, y = _read_reviews(_file("blitzer_sentiment", "processed_acl", dom, f"{pol}.review.gz"))
            docs += d
            ys += y
        per_domain.append((dom, docs, np.array(ys, dtype=np.int64)))
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


@lru_cache(maxsize=1)
def _newsgroups_raw():
    docs, groups, parts = [], [], []
    with tarfile.open(_file("20newsgroups", "20news-bydate.tar.gz")) as tar:
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
    docs, groups, parts = _newsgroups_raw()
    names = sorted(set(groups))
    keep = [i for i, p in enumerate(parts) if subset == "all" or p == subset]
    index = {g: k for k, g in enumerate(names)}
    return [docs[i] for i in keep], names, np.array([index[groups[i]] for i in keep], dtype=np.int64)


def load_usps(split="train", scheme=None):
    """USPS digits: 16x16 grey images flattened to 256 values in [0, 1], digit labels 0-9.

    ``scheme="one-vs-one"`` or ``"one-vs-rest"`` returns the binary digit tasks as a
    :class:`MultiTaskDataset` instead of ``(X, labels)``.

    Examples
    --------
    >>> X, labels = load_usps("test")
    >>> X.shape, X.dtype, int(labels.max())
    ((2007, 256), dtype('float64'), 9)
    """
    import h5py

    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    with h5py.File(_file("usps", "usps.h5"), "r") as f:
        X = np.asarray(f[f"{split}/data"][:], dtype=np.float64)
        labels = np.asarray(f[f"{split}/target"][:], dtype=np.int64)
    return _maybe_tasks(X, labels, scheme, f"usps-{split}")


def _read_idx(path):
    raw = gzip.open(path).read()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_mnist_test(scheme=None):
    """MNIST's 10,000 test digits (the only split bundled): 784 values in [0, 1], labels 0-9.

    ``scheme="one-vs-one"`` or ``"one-vs-rest"`` returns the binary digit tasks as a
    :class:`MultiTaskDataset` instead of ``(X, labels)``.

    Examples
    --------
    >>> X, labels = load_mnist_test()
    >>> X.shape, np.bincount(labels)[:3].tolist()
    ((10000, 784), [980, 1135, 1032])
    """
    images = _read_idx(_file("mnist_test_only", "t10k-images-idx3-ubyte.gz"))
    labels = _read_idx(_file("mnist_test_only", "t10k-labels-idx1-ubyte.gz"))
    X = images.reshape(len(images), -1).astype(np.float64) / 255.0
    return _maybe_tasks(X, labels.astype(np.int64), scheme, "mnist-test")


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
    with gzip.open(_file("nci60", "NCI60.csv.gz"), "rt") as fh:
        rows = [line.rstrip("\n").split(",") for line in fh][1:]
    labels = np.array([r[0].strip('"') for r in rows])
    X = np.array([[float(v) for v in r[1:]] for r in rows])
    if targets is None:
        return X, labels
    tasks = []
    for k in targets:
        others = np.delete(np.arange(X.shape[0]), k)
        tasks.append(Task(X[others].T.copy(), X[k].copy(), f"line {k} ({labels[k]})"))
    return MultiTaskDataset(tasks, "nci60", None, "NCI60: genes as examples, other cell lines as inputs")
