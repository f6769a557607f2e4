"""The paper's HpStrat loop written literally (Algorithm A.1): the test oracle of the fast implementation."""
import numpy as np

from hpstrat_lite.core.folds import _checked
from hpstrat_lite.core.homophily import homophily_bins


def hpstrat_folds_reference(homophily, y, k: int, n_bins: int = 10, seed=0) -> np.ndarray:
    """Literal, loop-by-loop implementation of Algorithm A.1 (slow; the oracle for tests).

    For each bin in order, for each class in order: take the stratum's nodes in shuffled order, start at
    the smallest fold with the lowest index, and assign nodes round-robin.
    """
    labels, h, k, n_bins, rng = _checked(homophily, y, k, n_bins, seed)
    priority = rng.permutation(labels.shape[0])
    bins = homophily_bins(h, n_bins=n_bins)
    folds = np.full(labels.shape[0], -1, dtype=np.int64)
    sizes = [0] * k
    for b in range(int(n_bins) + 1):
        for c in range(int(labels.max()) + 1):
            stratum = [v for v in range(labels.shape[0]) if bins[v] == b and labels[v] == c]
            stratum.sort(key=lambda v: priority[v])
            smallest = min(sizes)
            fold = sizes.index(smallest)
            for v in stratum:
                folds[v] = fold
                sizes[fold] += 1
                fold = (fold + 1) % k
    return folds
