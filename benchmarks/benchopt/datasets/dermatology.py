"""Dermatology, bundled with medmtl: six one-vs-rest tasks, 366 patients, 34 features."""

from benchopt import BaseDataset
from sklearn.preprocessing import StandardScaler

from medmtl.datasets import load_dermatology


class Dataset(BaseDataset):
    """All 366 patients in each of the six tasks, the features standardised."""

    name = "dermatology"
    # medmtl itself is installed from its repository (pip install .), not by benchopt
    requirements = []
    parameters = {}

    def get_data(self):
        """Each task's standardised inputs and its +-1 labels."""
        data = load_dermatology()
        scaler = StandardScaler().fit(data.Xs[0])
        return dict(Xs=[scaler.transform(X) for X in data.Xs], ys=list(data.ys))
