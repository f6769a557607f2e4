"""The scikit-learn front end over :func:`hpstrat_folds` (the PyG transform is :class:`hpstrat_lite.data.transforms.HpStratSplit`)."""
from __future__ import annotations

import numpy as np

from ._validate import check_bool, check_homophily, check_k, check_labels, check_n_bins, check_seed
from .folds import hpstrat_folds


class HomophilyStratifiedKFold:
    """Homophily-aware stratified k-fold cross-validator with the scikit-learn splitter interface.

    Folds follow :func:`hpstrat_folds`; ``split(X, y, groups=homophily)`` yields ``(train, test)`` index
    arrays, test = fold i, train = every other fold (scikit-learn's convention; use :func:`fold_rounds`
    for the paper's train/validation/test rounds). The node homophily is passed as ``groups``, because
    scikit-learn passes ``groups`` through ``cross_val_score`` and friends.

    Parameters
    ----------
    n_splits : int, default 4
        Number of folds, at least 3.
    n_bins : int, default 10
        Number of equal-width homophily bins.
    shuffle : bool, default True
        Shuffle nodes within each stratum; with ``False`` they keep their index order.
    random_state : int, numpy.random.Generator or None
        Seed of the shuffle; ``None`` means 0 so that repeated calls give the same folds.

    Examples
    --------
    >>> cv = HomophilyStratifiedKFold(n_splits=3, random_state=0)
    >>> cv
    HomophilyStratifiedKFold(n_splits=3, n_bins=10, shuffle=True, random_state=0)
    >>> [len(test) for _, test in cv.split(None, [0, 0, 0, 1, 1, 1], groups=[1, 1, 0, 0, 0.5, 0.5])]
    [2, 2, 2]
    """

    def __init__(self, n_splits: int = 4, *, n_bins: int = 10, shuffle: bool = True, random_state=None):
        check_k(n_splits, None, "n_splits")
        check_n_bins(n_bins)
        check_bool(shuffle, "shuffle")
        if random_state is not None:
            check_seed(random_state, "random_state")
        self.n_splits = n_splits
        self.n_bins = n_bins
        self.shuffle = shuffle
        self.random_state = random_state

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(n_splits={self.n_splits}, n_bins={self.n_bins}, "
                f"shuffle={self.shuffle}, random_state={self.random_state})")

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_splits

    def fold_ids(self, y, homophily) -> np.ndarray:
        """The fold of each sample (see :func:`hpstrat_folds`)."""
        if homophily is None:
            raise ValueError("groups (the node homophily, one value per sample) is required by "
                             "HomophilyStratifiedKFold.split; compute it with hpstrat_lite.node_homophily.")
        labels = check_labels(y)
        check_k(self.n_splits, labels.shape[0], "n_splits")
        if self.shuffle:
            seed = 0 if self.random_state is None else self.random_state
            return hpstrat_folds(homophily, labels, k=self.n_splits, n_bins=self.n_bins, seed=seed)
        # no shuffle: stratum members keep index order (identity priority)
        from .homophily import homophily_bins

        bins = homophily_bins(check_homophily(homophily, labels.shape[0], "groups"), n_bins=self.n_bins)
        order = np.lexsort((np.arange(labels.shape[0]), labels, bins))
        folds = np.empty(labels.shape[0], dtype=np.int64)
        folds[order] = np.arange(labels.shape[0]) % self.n_splits
        return folds

    def split(self, X, y, groups=None):
        """Yield ``(train_idx, test_idx)`` for each of the ``n_splits`` folds."""
        folds = self.fold_ids(y, groups)
        for i in range(self.n_splits):
            yield np.flatnonzero(folds != i), np.flatnonzero(folds == i)
