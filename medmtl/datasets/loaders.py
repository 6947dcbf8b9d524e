"""Loaders for the real data sets bundled in ``data/`` (each folder has a README).

Every loader reads the original files with numpy / scipy / the standard library and returns
either a :class:`MultiTaskDataset` or, for multi-class and matrix-shaped sources, plain
arrays that :func:`multiclass_tasks` or an experiment turns into tasks. The files come from
:func:`~medmtl.datasets.data_home` (``$MEDMTL_DATA`` overrides it). Each file is checked
against the data manifest before it is parsed and the parsed shape after, so a damaged or
different file raises :class:`~medmtl.datasets.DataFileError` naming it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from medmtl.datasets.base import MultiTaskDataset, Task, multiclass_tasks
from medmtl.datasets.sources import SENTIMENT_DOMAINS, read

__all__ = [
    "load_landmine", "load_dermatology", "load_splice", "load_statlog_dna",
    "load_heart", "load_housing", "load_spam", "load_sentiment", "load_20newsgroups",
    "load_usps", "load_mnist_test", "load_nci60",
]

DERMATOLOGY_CLASSES = ("psoriasis", "seboreic dermatitis", "lichen planus", "pityriasis rosea",
                       "cronic dermatitis", "pityriasis rubra pilaris")
# The 34 attributes in the order of dermatology.names: 11 clinical, 22 histopathological, age.
DERMATOLOGY_FEATURES = (
    "erythema", "scaling", "definite borders", "itching", "koebner phenomenon", "polygonal papules",
    "follicular papules", "oral mucosal involvement", "knee and elbow involvement", "scalp involvement",
    "family history", "melanin incontinence", "eosinophils in the infiltrate", "PNL infiltrate",
    "fibrosis of the papillary dermis", "exocytosis", "acanthosis", "hyperkeratosis", "parakeratosis",
    "clubbing of the rete ridges", "elongation of the rete ridges",
    "thinning of the suprapapillary epidermis", "spongiform pustule", "munro microabcess",
    "focal hypergranulosis", "disappearance of the granular layer",
    "vacuolisation and damage of basal layer", "spongiosis", "saw-tooth appearance of retes",
    "follicular horn plug", "perifollicular parakeratosis", "inflammatory monoluclear inflitrate",
    "band-like infiltrate", "age")
HEART_FEATURES = ("age", "sex", "chest pain type", "resting blood pressure", "serum cholesterol",
                  "fasting blood sugar", "resting ecg", "max heart rate", "exercise angina",
                  "oldpeak", "slope", "major vessels", "thal")
HOUSING_FEATURES = ("CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX",
                    "PTRATIO", "B", "LSTAT")


def _maybe_tasks(X, labels, scheme, name, feature_names):
    if scheme is None:
        return X, labels
    ds = multiclass_tasks(X, labels, scheme, name=name)
    ds.feature_names = list(feature_names)
    return ds


def _pixel_names(side):
    """``"pixel (row, column)"`` of a ``side`` x ``side`` image, in row-major order."""
    return [f"pixel ({r}, {c})" for r in range(side) for c in range(side)]



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
    all_tasks = [Task(X, y * 2 - 1, f"field {m + 1}") for m, (X, y) in enumerate(read("landmine"))]
    keep = range(len(all_tasks)) if tasks is None else tasks
    return MultiTaskDataset([all_tasks[m] for m in keep], "landmine",
                            [f"f{i + 1}" for i in range(9)],
                            "Xue et al. (2007) landmine detection; one task per minefield")



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
    >>> ds.feature_names[0], ds.feature_names[-1]
    ('erythema', 'age')
    """
    X, labels = read("dermatology")
    X = X.copy()
    missing = np.isnan(X[:, 33])
    if impute_age:
        X[missing, 33] = np.nanmean(X[:, 33])
    else:
        X, labels = X[~missing], labels[~missing]
    tasks = multiclass_tasks(X, labels, "one-vs-rest").tasks
    return MultiTaskDataset([Task(t.X, t.y, DERMATOLOGY_CLASSES[k]) for k, t in enumerate(tasks)],
                            "dermatology", list(DERMATOLOGY_FEATURES), "UCI Dermatology, one-vs-rest per disease")



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
    onehot, labels = read("splice")
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
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    X, labels = read(f"statlog_dna/{split}")
    # Each of the 60 positions is coded by three indicator features (the source's order).
    names = [f"pos{p}:b{b}" for p in range(-30, 30) for b in (1, 2, 3)]
    return _maybe_tasks(X, labels, scheme, f"statlog_dna-{split}", names)



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
    d = read("heart")
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
    D = read("housing")
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
    tasks = [Task(X, y * 2 - 1, f"user {u + 1}") for u, (X, y) in enumerate(read("spam"))]
    return MultiTaskDataset(tasks, "spam", None, "ECML/PKDD 2006 Discovery Challenge task B")



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
    per_domain = [(dom, *read(f"sentiment/{dom}")) for dom in domains]
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
    docs, groups, parts = read("20newsgroups")
    names = sorted(set(groups))
    keep = [i for i, p in enumerate(parts) if subset == "all" or p == subset]
    index = {g: k for k, g in enumerate(names)}
    return [docs[i] for i in keep], names, np.array([index[groups[i]] for i in keep], dtype=np.int64)



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
    X, labels = read(f"usps/{split}")
    return _maybe_tasks(X, labels, scheme, f"usps-{split}", _pixel_names(16))



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
    images, labels = read("mnist_test")
    X = images.reshape(len(images), -1).astype(np.float64) / 255.0
    return _maybe_tasks(X, labels.astype(np.int64), scheme, "mnist-test", _pixel_names(28))



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
    X, labels = read("nci60")
    if targets is None:
        return X, labels
    tasks = []
    for k in targets:
        others = np.delete(np.arange(X.shape[0]), k)
        tasks.append(Task(X[others].T.copy(), X[k].copy(), f"line {k} ({labels[k]})"))
    return MultiTaskDataset(tasks, "nci60", None, "NCI60: genes as examples, other cell lines as inputs")

