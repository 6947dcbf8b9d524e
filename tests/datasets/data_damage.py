"""Damaged copies of the bundled data files, and a tally of what the loaders make of them.

A damaged copy is a data folder in which one file is damaged and every other file is a
symbolic link to the bundled one; ``MEDMTL_DATA`` points the loaders at it. Every file a
loader reads gets the byte-level damages (cut to half, emptied, 64 bytes flipped, one bit
flipped); text files also get damages to their content (a text value in place of a number,
a row cut mid-line, only the first half of the rows), and gzip files get the content
damages inside a valid gzip stream, where the gzip checksum cannot see them.

Run as a script to count the outcomes (each load in its own process, so a crash is counted
rather than fatal)::

    python tests/datasets/data_damage.py [--bypass-checksums] [--jobs 2]

``--bypass-checksums`` gives each damaged folder its own manifest with the damaged file's
new hash, so only the parsers' and the shape checks' defences remain.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

# The public call that reads each data set of the manifest's ``loaders`` table.
READERS = {
    "landmine": lambda d: d.load_landmine(),
    "dermatology": lambda d: d.load_dermatology(),
    "splice": lambda d: d.load_splice(),
    "statlog_dna/train": lambda d: d.load_statlog_dna("train"),
    "statlog_dna/test": lambda d: d.load_statlog_dna("test"),
    "heart": lambda d: d.load_heart(),
    "housing": lambda d: d.load_housing(),
    "spam": lambda d: d.load_spam(),
    "sentiment/books": lambda d: d.load_sentiment(["books"]),
    "sentiment/dvd": lambda d: d.load_sentiment(["dvd"]),
    "sentiment/electronics": lambda d: d.load_sentiment(["electronics"]),
    "sentiment/kitchen": lambda d: d.load_sentiment(["kitchen"]),
    "20newsgroups": lambda d: d.load_20newsgroups(),
    "usps/train": lambda d: d.load_usps("train"),
    "usps/test": lambda d: d.load_usps("test"),
    "mnist_test": lambda d: d.load_mnist_test(),
    "nci60": lambda d: d.load_nci60(),
}

# The files each data set reads (as in the manifest; kept here so that the tally also runs
# against code that has no manifest).
FILES = {
    "landmine": ["landmine/LandmineData.mat"],
    "dermatology": ["uci_dermatology/dermatology.data"],
    "splice": ["uci_splice/splice.csv"],
    "statlog_dna/train": ["statlog_dna/dna.scale"],
    "statlog_dna/test": ["statlog_dna/dna.scale.t"],
    "heart": ["uci_statlog_heart/heart.dat"],
    "housing": ["boston_housing/housing.data"],
    "spam": ["ecml2006_spam_taskB/emails.mat"],
    **{f"sentiment/{d}": [f"blitzer_sentiment/processed_acl/{d}/{p}.review.gz" for p in ("positive", "negative")]
       for d in ("books", "dvd", "electronics", "kitchen")},
    "20newsgroups": ["20newsgroups/20news-bydate.tar.gz"],
    "usps/train": ["usps/usps.h5"],
    "usps/test": ["usps/usps.h5"],
    "mnist_test": ["mnist_test_only/t10k-images-idx3-ubyte.gz", "mnist_test_only/t10k-labels-idx1-ubyte.gz"],
    "nci60": ["nci60/NCI60.csv.gz"],
}

BYTE_DAMAGES = ("truncated", "empty", "flipped", "one bit")
TEXT_DAMAGES = ("text value", "row cut", "half the rows")
BINARY_CONTENT_DAMAGES = ("content truncated", "content flipped")
# Where a text value goes: a number, except in the splice file, which has none that matter.
_VALUE = {"uci_splice/splice.csv": re.compile(r"^[A-Z]+")}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _is_text(rel):
    return not rel.endswith((".mat", ".h5", ".tar.gz", "-ubyte.gz"))


def damages_of(rel):
    """The damages tried on the data file ``rel``."""
    if _is_text(rel):
        return BYTE_DAMAGES + TEXT_DAMAGES
    return BYTE_DAMAGES + (BINARY_CONTENT_DAMAGES if rel.endswith(".gz") else ())


@dataclass(frozen=True)
class Damage:
    file: str  # the damaged file's path inside the data folder
    kind: str

    @property
    def readers(self):
        """The data sets that read the damaged file."""
        return [key for key, files in FILES.items() if self.file in files]

    def __str__(self):
        return f"{self.file} ({self.kind})"


def all_damages():
    files = sorted({f for fs in FILES.values() for f in fs})
    return [Damage(rel, kind) for rel in files for kind in damages_of(rel)]


def _rng(rel, kind):
    return np.random.default_rng(zlib.crc32(f"{rel}|{kind}".encode()))


def _flip(raw, rng, start=0):
    out = bytearray(raw)
    for i in start + rng.choice(len(raw) - start, size=min(64, len(raw) - start), replace=False):
        out[i] ^= 0xFF
    return bytes(out)


def _damage_text(text, rel, kind):
    lines = text.split("\n")
    mid = len(lines) // 2
    if kind == "half the rows":
        return "\n".join(lines[:mid]) + "\n"
    if kind == "row cut":
        lines[mid] = lines[mid][:len(lines[mid]) // 2]
        return "\n".join(lines)
    matches = list(_VALUE.get(rel, _NUMBER).finditer(lines[mid]))
    m = matches[len(matches) // 2]
    lines[mid] = lines[mid][:m.start()] + "abc" + lines[mid][m.end():]
    return "\n".join(lines)


@lru_cache(maxsize=2)
def _decompressed(raw):
    return gzip.decompress(raw)


def damaged_bytes(raw, damage):
    """The bytes of ``damage.file`` (given as ``raw``) after the damage."""
    rel, kind = damage.file, damage.kind
    rng = _rng(rel, kind)
    if kind == "truncated":
        return raw[:len(raw) // 2]
    if kind == "empty":
        return b""
    if kind == "flipped":
        return _flip(raw, rng)
    if kind == "one bit":
        out = bytearray(raw)
        out[len(raw) // 2] ^= 0x01
        return bytes(out)
    packed = rel.endswith(".gz")
    content = _decompressed(raw) if packed else raw
    if kind == "content truncated":
        content = content[:len(content) // 2]
    elif kind == "content flipped":
        content = _flip(content, rng, start=min(1024, len(content) // 2))  # past the headers
    else:
        content = _damage_text(content.decode("latin-1"), rel, kind).encode("latin-1")
    return gzip.compress(content, compresslevel=1, mtime=0) if packed else content


def make_damaged_copy(pristine, damage, dest, bypass_checksums=False):
    """Write the data folder ``dest``: ``damage`` applied to its file, links to ``pristine`` elsewhere.

    With ``bypass_checksums``, ``dest`` also gets a manifest that lists the damaged file's own
    hash and size (the bundled shapes unchanged), so that only the parsers' checks remain.
    """
    pristine, dest = Path(pristine), Path(dest)
    for src in pristine.rglob("*"):
        if src.is_file() and src.name != "MANIFEST.json":
            target = dest / src.relative_to(pristine)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(src.resolve())
    target = dest / damage.file
    target.unlink()
    target.write_bytes(damaged_bytes((pristine / damage.file).read_bytes(), damage))
    if bypass_checksums:
        manifest = json.loads((pristine / "MANIFEST.json").read_text())
        content = target.read_bytes()
        manifest["files"][damage.file] = {"sha256": hashlib.sha256(content).hexdigest(), "size": len(content)}
        (dest / "MANIFEST.json").write_text(json.dumps(manifest))
    return dest


def digest(obj):
    """A hash of a loader's output (arrays, sparse matrices, datasets, lists), to compare loads."""
    h = hashlib.sha256()

    def feed(o):
        if hasattr(o, "tasks"):
            feed([(t.name, t.X, t.y) for t in o.tasks])
            feed(o.feature_names)
        elif sp.issparse(o):
            feed((o.shape, o.data, o.indices, o.indptr))
        elif isinstance(o, np.ndarray):
            h.update(f"{o.dtype.str}{o.shape}".encode())
            h.update(np.ascontiguousarray(o).tobytes())
        elif isinstance(o, (list, tuple)):
            h.update(f"[{len(o)}".encode())
            for x in o:
                feed(x)
        else:
            h.update(repr(o).encode())

    feed(obj)
    return h.hexdigest()


def load(key):
    """Read data set ``key`` with its public loader; the outcome as a dict."""
    from medmtl import datasets

    try:
        out = READERS[key](datasets)
    except Exception as exc:  # every failure is an outcome to classify
        return {"error": type(exc).__name__, "message": str(exc)}
    return {"digest": digest(out)}


def classify(result, damage, pristine_digest):
    """caught (a clear error naming the file), unclear error, silently wrong, or unchanged."""
    if "error" in result:
        named = Path(damage.file).name in result["message"]
        clear = result["error"] in ("DataFileError", "ValueError", "FileNotFoundError", "OSError")
        return "caught" if named and clear else "unclear error"
    return "unchanged" if result["digest"] == pristine_digest else "silently wrong"


_WORST = ("crashed", "silently wrong", "unclear error", "unchanged", "caught")


def _load_in_subprocess(key, home):
    env = dict(os.environ, MEDMTL_DATA=str(home), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, __file__, "--load", key], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"crashed": proc.returncode, "stderr": proc.stderr[-300:]}
    return json.loads(proc.stdout.splitlines()[-1])


def tally(bypass_checksums=False, jobs=2, pristine=None):
    """Try every damaged copy, each load in its own process; the outcome of each copy."""
    if pristine is None:
        from medmtl.datasets import data_home
        pristine = data_home()
    pristine_digests = {key: _load_in_subprocess(key, pristine)["digest"] for key in READERS}

    def one(damage):
        with tempfile.TemporaryDirectory() as tmp:
            make_damaged_copy(pristine, damage, tmp, bypass_checksums)
            outcomes = []
            for key in damage.readers:
                result = _load_in_subprocess(key, tmp)
                outcomes.append("crashed" if "crashed" in result
                                else classify(result, damage, pristine_digests[key]))
                detail = result.get("message") or result.get("stderr") or ""
        return damage, min(outcomes, key=_WORST.index), detail

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, all_damages()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bypass-checksums", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--data", help="the pristine data folder (default: the bundled data)")
    parser.add_argument("--verbose", action="store_true", help="one line per damaged copy")
    parser.add_argument("--load", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.load:
        print(json.dumps(load(args.load)))
        return 0
    results = tally(args.bypass_checksums, args.jobs, args.data)
    counts = {name: sum(outcome == name for _, outcome, _ in results) for name in reversed(_WORST)}
    if args.verbose:
        for damage, outcome, detail in results:
            print(f"{outcome:15s} {damage}: {detail.strip().splitlines()[-1][:150] if detail.strip() else ''}")
    print(f"damaged copies tried: {len(results)}; " + "; ".join(f"{k}: {v}" for k, v in counts.items()))
    return 0 if counts["caught"] == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
