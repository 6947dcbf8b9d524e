"""Synthetic multi-task data whose labels depend on a few features shared by the tasks."""

import numpy as np
from benchopt import BaseDataset


class Dataset(BaseDataset):
    """``n_tasks`` tasks of Gaussian inputs; each task's labels are the sign of its own
    weights on the first ``n_relevant`` features plus noise. The data are drawn from ``seed``
    alone, so that benchopt's repetitions time the same dual."""

    name = "synthetic"
    parameters = {"n_tasks": [4], "n_samples": [200], "n_features": [50], "n_relevant": [5], "seed": [0]}

    def get_data(self):
        """Per-task inputs and +-1 labels."""
        rng = np.random.default_rng(self.seed)
        Xs, ys = [], []
        for _ in range(self.n_tasks):
            X = rng.standard_normal((self.n_samples, self.n_features))
            w = np.zeros(self.n_features)
            w[:self.n_relevant] = rng.standard_normal(self.n_relevant)
            score = X @ w + 0.5 * rng.standard_normal(self.n_samples)
            Xs.append(X)
            ys.append(np.where(score > 0, 1, -1))
        return dict(Xs=Xs, ys=ys)
