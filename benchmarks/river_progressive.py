"""river's progressive_val_score over medmtl's bandit learners on USPS (the first 2,000 training
digits), beside the same learner driven by a plain predict-then-learn loop (equal accuracy) and
behind river's StandardScaler; times the river path.

    python benchmarks/river_progressive.py
"""
import time

import numpy as np
from river import evaluate, metrics, preprocessing, stream
from sklearn.base import clone

from medmtl.datasets import load_usps
from medmtl.online import Banditron, OneVsRestBandit, RiverClassifier

X, labels = load_usps("train")
X, labels = X[:2000], labels[:2000]
classes = np.unique(labels).tolist()
for learner in (Banditron(gamma=0.1, random_state=1), OneVsRestBandit(b=0.1, random_state=0)):
    t = time.perf_counter()
    score = evaluate.progressive_val_score(stream.iter_array(X, labels), RiverClassifier(learner, classes=classes),
                                           metrics.Accuracy())
    seconds = time.perf_counter() - t
    naive, codes, hits, seen = clone(learner), np.searchsorted(classes, labels), 0, 0
    for row, code in zip(X, codes):
        if hasattr(naive, "n_rounds_"):
            seen += 1
            hits += int(naive.predict_one(row) == code)
            naive.learn_one(row, code)
        else:
            naive.learn_one(row, oracle=naive._make_oracle(np.array([code]), len(classes)), index=0)
    scaled = evaluate.progressive_val_score(stream.iter_array(X, labels),
                                            preprocessing.StandardScaler() | RiverClassifier(learner, classes=classes),
                                            metrics.Accuracy())
    print(f"{type(learner).__name__:16s} river progressive_val_score accuracy {score.get():.4f} ({seconds:.2f} s); "
          f"naive loop {hits / seen:.4f}; StandardScaler | adapter {scaled.get():.4f}")
