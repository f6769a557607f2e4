"""Stage 3 of the data flow: node homophily -> folds -> rounds (train / validation / test).

Fold ids are an integer array ``fold[v] in {0..k-1}``. Round ``i``: test = fold ``i``,
validation = fold ``(i + 1) mod k``, train = the remaining ``k - 2`` folds.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._extras import require
from ._validate import (check_choice, check_folds, check_homophily, check_k, check_labels, check_n_bins, check_seed)
from .covariates import covariate_folds, degree_folds, placebo_folds, strata_kernel, warn_small_classes
from .homophily import bins_of

SPLIT_METHODS = ("random", "stratified", "hpstrat")
"""The paper's three split methods (the default of every sweep)."""
CONTROL_METHODS = ("degree", "placebo")
"""Stratifications that test why HpStrat works (:mod:`hpstrat_lite.core.covariates`): (log-degree quantile
bin, class) and (random-covariate bin, class), the latter with HpStrat's number of strata."""
ALL_METHODS = SPLIT_METHODS + CONTROL_METHODS


def hpstrat_folds(homophily, y, *, k: int = 4, n_bins: int = 10, seed=0) -> np.ndarray:
    """Homophily-aware stratified k-fold assignment (HpStrat, Algorithm A.1).

    Nodes are grouped into strata (homophily bin, class); bins are processed in order (the NaN bin of
    isolated nodes last), classes in order within a bin, the nodes of a stratum in an order shuffled by
    ``seed``. Each stratum is dealt round-robin starting at the lowest-indexed smallest fold.

    Implemented as one sort: processing strata this way equals sorting all nodes by
    (bin, class, shuffled position) and dealing ``fold = rank mod k`` — after ``T`` nodes the larger
    folds are exactly folds ``0..(T mod k)-1``, so the next stratum starts at fold ``T mod k``. The sort
    takes the nodes in shuffled order and sorts them stably by stratum ``bin * C + class`` (a counting sort,
    O(n); a comparison sort only when the strata far outnumber the nodes).
    The literal loop is kept in the tests as an oracle (``tests/core/reference.py``).

    Parameters
    ----------
    homophily : array-like of shape (n,)
        Node homophily in [0, 1], NaN for isolated nodes (see :func:`node_homophily`).
    y : array-like of shape (n,)
        Integer class labels.
    k : int
        Number of folds, ``3 <= k <= n``.
    n_bins : int, default 10
        Number B of equal-width homophily bins on [0, 1].
    seed : int or numpy.random.Generator, default 0

    Returns
    -------
    numpy.ndarray of int64, shape (n,): the fold of each node.

    Examples
    --------
    >>> hpstrat_folds([0.0, 0.0, 1.0, 1.0, 1.0, 0.5], [0, 0, 1, 1, 1, 0], k=3, seed=0).tolist()
    [1, 0, 2, 1, 0, 2]
    """
    labels, h, k, n_bins, rng = _checked(homophily, y, k, n_bins, seed)
    return _hpstrat_kernel(labels, h, k, n_bins, rng)


def _hpstrat_kernel(labels, h, k, n_bins, rng) -> np.ndarray:
    """:func:`hpstrat_folds` on checked inputs (int64 labels, float homophily, ints, a Generator)."""
    return strata_kernel(labels, bins_of(h, n_bins), n_bins, k, rng)


def _checked(homophily, y, k, n_bins, seed):
    """The inputs of :func:`hpstrat_folds`, checked once: labels, homophily, k, n_bins and a Generator."""
    labels = check_labels(y)
    n = labels.shape[0]
    k = check_k(k, n)
    n_bins = check_n_bins(n_bins)
    h = check_homophily(homophily, n)
    rng = check_seed(seed)
    warn_if_all_isolated(h, stacklevel=5)
    warn_small_classes(labels, k, stacklevel=5, name="k")
    return labels, h, k, n_bins, rng


def warn_if_all_isolated(h, stacklevel):
    """Warn when every node is isolated (``h`` NaN everywhere): HpStrat then stratifies by class only."""
    if np.isnan(h).all():
        warnings.warn("every node is isolated (homophily is NaN everywhere): HpStrat falls back to "
                      "stratifying by class only.", UserWarning, stacklevel=stacklevel)


def random_folds(y, *, k: int = 4, seed=0) -> np.ndarray:
    """Random k-fold: scikit-learn ``KFold(n_splits=k, shuffle=True, random_state=seed)``, with
    ``3 <= k <= n`` (a round needs a train, a validation and a test fold)."""
    labels = check_labels(y)
    return _random_kernel(labels, check_k(k, labels.shape[0]), seed)


def _random_kernel(labels, k, seed):
    from sklearn.model_selection import KFold

    return _folds_from_splitter(KFold(n_splits=k, shuffle=True, random_state=_sk_seed(seed)), labels)


def stratified_folds(y, *, k: int = 4, seed=0) -> np.ndarray:
    """Class-stratified k-fold: scikit-learn ``StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)``,
    with ``3 <= k <= n`` (a round needs a train, a validation and a test fold)."""
    labels = check_labels(y)
    return _stratified_kernel(labels, check_k(k, labels.shape[0]), seed)


def _stratified_kernel(labels, k, seed):
    from sklearn.model_selection import StratifiedKFold

    counts = np.bincount(labels)
    if counts.max() < k:
        raise ValueError(f"k={k} is larger than the size of every class (largest has {counts.max()} nodes); "
                         f"class-stratified folds need k <= {counts.max()}.")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The least populated class")
        return _folds_from_splitter(StratifiedKFold(n_splits=k, shuffle=True, random_state=_sk_seed(seed)), labels)


def _sk_seed(seed):
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**31 - 1))
    check_seed(seed)
    return int(seed)


def _folds_from_splitter(splitter, labels):
    folds = np.empty(labels.shape[0], dtype=np.int64)
    for i, (_, test) in enumerate(splitter.split(np.zeros(labels.shape[0]), labels)):
        folds[test] = i
    return folds


def make_folds(method: str, homophily, y, *, k: int = 4, seed=0, n_bins: int = 10, degree=None, covariate=None,
               binning: str = "uniform") -> np.ndarray:
    """Fold ids for one of :data:`ALL_METHODS` or ``"covariate"``.

    "random", "stratified", "hpstrat" are the paper's; "degree" (needs ``degree``, each node's number of
    neighbours) and "placebo" are the controls; "covariate" stratifies on a user's ``covariate`` (one value
    per node) with ``binning`` (:func:`hpstrat_lite.core.covariates.covariate_folds`). ``homophily`` is
    read by "hpstrat" only (pass None otherwise)."""
    check_choice(method, "method", ALL_METHODS + ("covariate",))
    if method == "covariate":
        if covariate is None:
            raise ValueError("method='covariate' needs covariate= (one value per node).")
        return covariate_folds(covariate, y, k=k, n_bins=n_bins, binning=binning, seed=seed)
    if method == "hpstrat":
        return hpstrat_folds(homophily, y, k=k, n_bins=n_bins, seed=seed)
    if method == "degree":
        if degree is None:
            raise ValueError("method='degree' needs degree= (each node's number of neighbours).")
        return degree_folds(degree, y, k=k, n_bins=n_bins, seed=seed)
    if method == "placebo":
        return placebo_folds(y, k=k, n_bins=n_bins, seed=seed)
    labels = check_labels(y)
    return folds_of_method(method, None, labels, check_k(k, labels.shape[0]), seed, n_bins)


def folds_of_method(method, h, labels, k, seed, n_bins, *, degree=None):
    """The folds of ``method`` on checked inputs (``seed`` an int or a Generator; ``h`` only for HpStrat,
    ``degree`` only for "degree"): what :func:`make_folds` and
    :func:`hpstrat_lite.data.quality.quality_table` run after their checks."""
    if method == "random":
        return _random_kernel(labels, k, seed)
    if method == "stratified":
        return _stratified_kernel(labels, k, seed)
    if method == "degree":
        return degree_folds(degree, labels, k=k, n_bins=n_bins, seed=seed)
    if method == "placebo":
        return placebo_folds(labels, k=k, n_bins=n_bins, seed=seed)
    return _hpstrat_kernel(labels, h, k, n_bins, check_seed(seed))


def fold_rounds(folds, *, k: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The k rounds ``(train_idx, val_idx, test_idx)``: round i tests fold i, validates on fold
    (i + 1) mod k and trains on the rest.

    Examples
    --------
    >>> [tuple(a.tolist() for a in r) for r in fold_rounds([0, 1, 2, 0], k=3)][0]
    ([2], [1], [0, 3])
    """
    f = check_folds(folds, k)
    k = check_k(k, max(k, f.shape[0]))
    rounds = []
    for i in range(k):
        test = np.flatnonzero(f == i)
        val = np.flatnonzero(f == (i + 1) % k)
        train = np.flatnonzero((f != i) & (f != (i + 1) % k))
        rounds.append((train, val, test))
    return rounds


def fold_masks(folds, *, k: int):
    """Boolean masks ``(train_mask, val_mask, test_mask)`` of shape ``[num_nodes, k]`` (torch), one column
    per round — the layout of PyTorch Geometric's multi-split datasets."""
    torch = require("torch", extra="pyg")

    f = torch.as_tensor(check_folds(folds, k))
    check_k(k, max(k, f.shape[0]))
    ids = torch.arange(k)
    test = f[:, None] == ids[None, :]
    val = f[:, None] == ((ids + 1) % k)[None, :]
    return ~(test | val), val, test
