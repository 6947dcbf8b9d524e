"""The stream on which the AMLC authors' published code was run for ``authors_code_landmine.json``.

The fixture holds figures from ``committee()`` and ``peer()`` of ``humble_peer.py`` (GitHub
``JingxiXu/humble-peer-amtl``, commit f425116), run outside this project on the stream below:
all 29 Landmine fields, 160 training rows per field (the code's own split size), each row
given a bias feature and scaled to unit norm as that code does it, row by row. Its random
draws were replaced by medmtl's: the stream order is the permutation
``np.random.default_rng(seed).permutation(n)`` that ``fit`` draws, and every
``np.random.binomial(1, q)`` returned ``u < q`` for the uniform ``u`` that medmtl's learner
uses on the same round (two a round for PEER: its own confidence, then its peers'). The code
was not changed otherwise.
"""

import json
from pathlib import Path

import numpy as np

from medmtl.datasets import load_landmine

FIXTURE = Path(__file__).with_name("authors_code_landmine.json")
N_TRAIN = 160
SPLIT_SEED = 2026


def their_rows(X):
    """Each row with a bias feature, divided by its norm, one row at a time as the code does."""
    out = []
    for r in np.asarray(X, dtype=np.float64):
        x = np.concatenate((r, np.asarray([1])))
        out.append(x / np.linalg.norm(x))
    return np.array(out)


def landmine_split():
    """Raw (train, test) lists of (X, y) per field, labels in {-1, +1}; fields in file order."""
    train, test = [], []
    for m, task in enumerate(load_landmine()):
        perm = np.random.default_rng([SPLIT_SEED, m]).permutation(task.X.shape[0])
        train.append((task.X[perm[:N_TRAIN]], task.y[perm[:N_TRAIN]]))
        test.append((task.X[perm[N_TRAIN:]], task.y[perm[N_TRAIN:]]))
    return train, test


def load_fixture():
    return json.loads(FIXTURE.read_text())
