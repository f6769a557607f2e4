"""scikit-learn cross-validators over HpStrat's dealing (:func:`hpstrat_folds`, :func:`covariate_folds`).

Both behave as scikit-learn's ``StratifiedKFold`` with a stratification covariate passed as ``groups``:
``BaseCrossValidator`` (public) is the base class; the options are checked in ``__init__``
(``n_splits >= 2``; ``shuffle=False`` by default, scikit-learn's default; ``shuffle=False`` with a
``random_state`` is an error); ``split`` calls ``indexable`` (X, y and groups of different lengths raise
scikit-learn's error), refuses ``n_splits`` above the number of samples, encodes the class labels as
``StratifiedKFold`` does (any labels ``np.unique`` sorts: strings, integers with gaps; binary or multiclass
targets only), and warns (``UserWarning``, scikit-learn's words) when the least populated class has fewer
members than ``n_splits``. ``random_state`` follows scikit-learn (``None``: fresh randomness on every
``split``; an int: the same folds on every call and machine). The class attribute
``__metadata_request__split`` requests ``groups`` (scikit-learn's ``GroupsConsumerMixin`` does the same), so
the splitters work with ``cross_validate(..., params={"groups": h})`` under
``sklearn.set_config(enable_metadata_routing=True)`` and with ``groups=h`` when routing is off. Tested with
the scikit-learn versions ``pyproject.toml`` allows. The PyG transform is
:class:`hpstrat_lite.data.transforms.HpStratSplit`.

The paper shuffles the nodes of each stratum (``shuffle=True``), as :func:`hpstrat_folds` always does; pass
``shuffle=True`` for the paper's folds.
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.model_selection import BaseCrossValidator
from sklearn.utils import indexable
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

from ._validate import check_bool, check_choice, check_covariate, check_homophily, check_n_bins, check_seed
from .covariates import BINNINGS, covariate_bins, strata_kernel, warn_small_classes
from .folds import warn_if_all_isolated
from .homophily import bins_of


def split_generator(random_state) -> np.random.Generator:
    """The Generator of one ``split`` call, with scikit-learn's meaning of ``random_state``.

    ``None``: fresh OS entropy, so every call gives new folds (scikit-learn's ``check_random_state(None)``
    semantics, without reading or changing numpy's global state); an int ``s``: ``default_rng(s)``, the
    folds of :func:`hpstrat_folds` with ``seed=s``; a ``Generator`` or ``RandomState`` instance: drawn from,
    so successive calls differ and the sequence is reproducible.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    return check_seed(random_state, "random_state")


def _check_random_state(random_state) -> None:
    if random_state is None or isinstance(random_state, (np.random.RandomState, np.random.Generator)):
        return
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral) or random_state < 0:
        raise ValueError(f"random_state must be None, a non-negative integer, a numpy.random.Generator or a "
                         f"numpy.random.RandomState; got {random_state!r}.")


def deal_in_index_order(labels: np.ndarray, bins: np.ndarray, k: int) -> np.ndarray:
    """Folds of the unshuffled deal: sort nodes by (bin, class, index) and deal ``fold = rank mod k``
    (HpStrat's stratum-by-stratum loop with the members of a stratum in index order)."""
    n = labels.shape[0]
    order = np.lexsort((np.arange(n), labels, bins))
    folds = np.empty(n, dtype=np.int64)
    folds[order] = np.arange(n, dtype=np.int64) % k
    return folds


def encode_labels(y) -> np.ndarray:
    """Class labels as ``StratifiedKFold`` accepts them (binary or multiclass: strings, integers with gaps,
    ...), encoded ``0..C-1`` in sorted order (``np.unique(y, return_inverse=True)``); integer labels
    ``0..C-1`` stay as they are."""
    y = np.asarray(y)
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"Supported target types are: ('binary', 'multiclass'). Got {kind!r} instead.")
    _, labels = np.unique(column_or_1d(y), return_inverse=True)
    return labels.astype(np.int64).ravel()


class _CovariateKFold(BaseCrossValidator):
    """The shared part: option checks, ``groups`` required, folds -> test masks."""

    __metadata_request__split = {"groups": True}

    def __init__(self, n_splits=4, *, n_bins=10, shuffle=False, random_state=None):
        if isinstance(n_splits, bool) or not isinstance(n_splits, numbers.Integral):
            raise ValueError(f"n_splits must be an integer >= 2; got {n_splits!r}.")
        if n_splits < 2:
            raise ValueError(f"k-fold cross-validation requires at least one train/test split by setting "
                             f"n_splits=2 or more, got n_splits={n_splits}.")
        check_n_bins(n_bins)
        check_bool(shuffle, "shuffle")
        _check_random_state(random_state)
        if not shuffle and random_state is not None:
            raise ValueError("Setting a random_state has no effect since shuffle is False. You should leave "
                             "random_state to its default (None), or set shuffle=True.")
        self.n_splits = int(n_splits)
        self.n_bins = n_bins
        self.shuffle = bool(shuffle)
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None):
        """The number of splitting iterations, ``n_splits`` (the arguments are ignored, as scikit-learn's)."""
        return self.n_splits

    def split(self, X, y, groups=None):
        """Generate ``(train, test)`` index arrays, one pair per fold: test = fold i, train = the others.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (only its length is used; ``np.zeros(n_samples)`` will do).
        y : array-like of shape (n_samples,)
            Class labels (binary or multiclass, any labels ``np.unique`` sorts); folds are stratified by
            class within each covariate bin.
        groups : array-like of shape (n_samples,)
            The stratification covariate, one value per sample (required).

        Yields
        ------
        train : numpy.ndarray
            The training set indices for that split.
        test : numpy.ndarray
            The test set indices for that split.
        """
        X, y, groups = indexable(X, y, groups)
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        if self.n_splits > n:
            raise ValueError(f"Cannot have number of splits n_splits={self.n_splits} greater than the number of "
                             f"samples: n_samples={n}.")
        return super().split(X, y, groups)

    def _iter_test_masks(self, X, y=None, groups=None):
        folds = self.fold_ids(y, groups)
        for i in range(self.n_splits):
            yield folds == i

    def fold_ids(self, y, groups) -> np.ndarray:
        """The fold of each sample, ``0..n_splits-1`` (one call of the random choice)."""
        if groups is None:
            raise ValueError(f"groups ({self._groups_are}, one value per sample) is required by "
                             f"{type(self).__name__}.split; {self._groups_hint}")
        labels = encode_labels(y)
        counts = np.bincount(labels)
        if np.all(self.n_splits > counts):
            raise ValueError(f"n_splits={self.n_splits} cannot be greater than the number of members in each class.")
        warn_small_classes(labels, self.n_splits, stacklevel=4)
        bins = self._bins(groups, labels.shape[0])
        if self.shuffle:
            return strata_kernel(labels, bins, self.n_bins, self.n_splits, split_generator(self.random_state))
        return deal_in_index_order(labels, bins, self.n_splits)


class HomophilyStratifiedKFold(_CovariateKFold):
    """Homophily-aware stratified k-fold cross-validator (HpStrat, Algorithm A.1) for scikit-learn.

    Folds follow :func:`hpstrat_folds`: strata (homophily bin, class), B equal-width bins on [0, 1], the
    NaN bin of isolated nodes last. ``split(X, y, groups=homophily)`` yields ``(train, test)`` index arrays,
    test = fold i, train = every other fold (scikit-learn's convention; use :func:`fold_rounds` for the
    paper's train/validation/test rounds). The node homophily is passed as ``groups`` (metadata routing
    requests it by default).

    Parameters
    ----------
    n_splits : int, default 4
        Number of folds, at least 2 (the paper's train/validation/test rounds need 3:
        :func:`fold_rounds`).
    n_bins : int, default 10
        Number of equal-width homophily bins.
    shuffle : bool, default False
        Shuffle nodes within each stratum (the paper's folds: pass ``True``); with ``False`` they keep their
        index order, as scikit-learn's ``StratifiedKFold`` keeps its default.
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default None
        Seed of the shuffle. ``None``: new folds on every ``split`` call (scikit-learn's meaning); an int
        gives the folds of ``hpstrat_folds(..., seed=random_state)``. Must stay ``None`` when
        ``shuffle=False``.

    See Also
    --------
    hpstrat_lite.core.folds.hpstrat_folds : the fold assignment itself.
    CovariateStratifiedKFold : the same dealing on any node covariate.
    sklearn.model_selection.StratifiedKFold : class-only stratification.

    Examples
    --------
    >>> import numpy as np
    >>> cv = HomophilyStratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    >>> cv
    HomophilyStratifiedKFold(n_bins=10, n_splits=3, random_state=0, shuffle=True)
    >>> y, h = ["cat", "cat", "cat", "dog", "dog", "dog"], [1, 1, 0, 0, 0.5, 0.5]
    >>> [len(test) for _, test in cv.split(np.zeros((6, 1)), y, groups=h)]
    [2, 2, 2]
    """

    _groups_are = "the node homophily"
    _groups_hint = "compute it with hpstrat_lite.node_homophily."

    def __init__(self, n_splits: int = 4, *, n_bins: int = 10, shuffle: bool = False, random_state=None):
        super().__init__(n_splits, n_bins=n_bins, shuffle=shuffle, random_state=random_state)

    def _bins(self, groups, n):
        h = check_homophily(groups, n, "groups")
        warn_if_all_isolated(h, stacklevel=6)
        return bins_of(h, check_n_bins(self.n_bins))


class CovariateStratifiedKFold(_CovariateKFold):
    """k-fold cross-validator stratified by (covariate bin, class), dealt as HpStrat deals.

    The covariate (node degree, a score, any real value per sample; NaN is its own bin, dealt last) is
    passed as ``groups``; folds follow :func:`hpstrat_lite.core.covariates.covariate_folds`. With the node
    homophily as covariate, ``binning="uniform"`` bins on the covariate's range (not on [0, 1]); use
    :class:`HomophilyStratifiedKFold` for HpStrat itself.

    Parameters
    ----------
    n_splits : int, default 4
        Number of folds, at least 2.
    n_bins : int, default 10
        Number B of covariate bins.
    binning : {"uniform", "quantile"}, default "uniform"
        B equal-width bins between the covariate's minimum and maximum, or bins at its ``j / B`` quantiles
        (see :func:`hpstrat_lite.core.covariates.covariate_bins`).
    shuffle : bool, default False
        Shuffle samples within each stratum; with ``False`` (scikit-learn's default) they keep their index
        order.
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default None
        As in :class:`HomophilyStratifiedKFold`.

    Examples
    --------
    >>> import numpy as np
    >>> degree = np.array([1, 1, 2, 2, 8, 9, 1, 2, 9])
    >>> cv = CovariateStratifiedKFold(n_splits=3, n_bins=3, binning="quantile", shuffle=True, random_state=0)
    >>> splits = cv.split(np.zeros((9, 1)), [0] * 9, groups=np.log1p(degree))
    >>> [sorted(degree[test].tolist()) for _, test in splits]  # one node of each degree bin per fold
    [[1, 2, 9], [1, 2, 8], [1, 2, 9]]
    """

    _groups_are = "the covariate"
    _groups_hint = "pass one real value per sample (NaN for none)."

    def __init__(self, n_splits: int = 4, *, n_bins: int = 10, binning: str = "uniform", shuffle: bool = False,
                 random_state=None):
        check_choice(binning, "binning", BINNINGS)
        super().__init__(n_splits, n_bins=n_bins, shuffle=shuffle, random_state=random_state)
        self.binning = binning

    def _bins(self, groups, n):
        return covariate_bins(check_covariate(groups, n, "groups"), n_bins=self.n_bins, binning=self.binning)
