"""Stratifying on any node covariate: covariate bins x class, dealt like HpStrat.

HpStrat (Algorithm A.1) deals the strata (homophily bin, class). The same dealing works for any node
covariate c: bin c, then deal the strata (covariate bin, class). HpStrat is the case c = node homophily
with B uniform bins on [0, 1]. Two named covariates serve as controls of *why* HpStrat works:

- ``"degree"``: log(1 + degree), B quantile bins (degree is heavy-tailed; quantile bins hold about the
  same number of nodes each, ties kept in one bin).
- ``"placebo"``: a covariate drawn uniform on [0, 1] per seed, B uniform bins: the same number of strata
  as HpStrat and no information about the graph. If placebo folds match HpStrat's spread, the gain comes
  from finer strata, not from homophily.

A NaN covariate (an isolated node's homophily) is its own extra bin ``B``, dealt last.
"""
from __future__ import annotations

import warnings

import numpy as np

from ._validate import (check_choice, check_covariate, check_edge_index, check_int, check_k, check_labels,
                        check_n_bins, check_seed, to_numpy)
from . import _split_kernels
from .homophily import simple_undirected_pairs

BINNINGS = ("uniform", "quantile")


def covariate_bins(covariate, *, n_bins: int = 10, binning: str = "uniform", bin_range=None) -> np.ndarray:
    """Bin index of each node's covariate, in ``0..B-1``; NaN in the extra bin ``B``.

    - ``"uniform"``: B equal-width bins on ``bin_range = (lo, hi)`` (default: the finite values' min and
      max), ``bin(v) = min(floor((c(v) - lo) / (hi - lo) * B), B - 1)``; with ``bin_range=(0, 1)`` this is
      :func:`hpstrat_lite.core.homophily.homophily_bins`. A constant covariate puts every node in bin 0.
    - ``"quantile"``: bin edges at the ``j / B`` quantiles of the finite values (``j = 1..B-1``),
      ``bin(v) = #{edges <= c(v)}``; tied values share a bin, so a covariate with few distinct values
      fills fewer than B bins.

    Examples
    --------
    >>> covariate_bins([0.0, 0.5, 1.0, float("nan")], n_bins=2).tolist()
    [0, 1, 1, 2]
    >>> covariate_bins([1, 1, 2, 3, 4, 5, 6, 7], n_bins=4, binning="quantile").tolist()
    [0, 0, 1, 1, 2, 2, 3, 3]
    """
    n_bins = check_n_bins(n_bins)
    check_choice(binning, "binning", BINNINGS)
    c = check_covariate(covariate, None)
    nan = np.isnan(c)
    finite = c[~nan]
    bins = np.full(c.shape, n_bins, dtype=np.int64)
    if finite.size == 0:
        return bins
    if binning == "uniform":
        lo, hi = (finite.min(), finite.max()) if bin_range is None else _check_range(bin_range, finite)
        width = hi - lo
        scaled = np.zeros_like(finite) if width == 0 else (finite - lo) / width * n_bins
        bins[~nan] = np.minimum(np.floor(scaled).astype(np.int64), n_bins - 1)
    else:
        edges = np.quantile(finite, np.arange(1, n_bins) / n_bins)
        bins[~nan] = np.searchsorted(edges, finite, side="right")
    return bins


def covariate_folds(covariate, y, *, k: int = 4, n_bins: int = 10, binning: str = "uniform", bin_range=None,
                    seed=0) -> np.ndarray:
    """k folds stratified by (covariate bin, class), dealt as HpStrat deals (homophily bin, class).

    Strata are processed in (bin, class) order, the NaN bin last, the nodes of a stratum in an order
    shuffled by ``seed``, each stratum dealt round-robin from the lowest-indexed smallest fold (one
    stable sort, see :func:`hpstrat_lite.core.folds.hpstrat_folds`). With ``covariate`` = node homophily,
    ``binning="uniform"`` and ``bin_range=(0, 1)`` the folds equal :func:`hpstrat_folds` for every seed.

    Parameters
    ----------
    covariate : array-like of shape (n,)
        One real value per node (NaN allowed: its own bin); no infinities.
    y : array-like of shape (n,)
        Integer class labels.
    k : int, default 4
        Number of folds, ``3 <= k <= n``.
    n_bins : int, default 10
        Number B of covariate bins.
    binning : {"uniform", "quantile"}
        See :func:`covariate_bins`.
    bin_range : (float, float), optional
        The interval of the uniform bins (default: min and max of the covariate).
    seed : int or numpy.random.Generator, default 0

    Examples
    --------
    >>> covariate_folds([3.0, 1.0, 2.0, 5.0, 4.0, 6.0], [0, 0, 0, 1, 1, 1], k=3, n_bins=1).tolist()
    [1, 0, 2, 2, 0, 1]
    """
    labels = check_labels(y)
    n = labels.shape[0]
    k = check_k(k, n)
    warn_small_classes(labels, k, stacklevel=3, name="k")
    c = check_covariate(covariate, n)
    bins = covariate_bins(c, n_bins=n_bins, binning=binning, bin_range=bin_range)
    finite = c[~np.isnan(c)]
    if finite.size == 0 or finite.min() == finite.max():
        what = "NaN at every node" if finite.size == 0 else f"constant ({finite[0]:g})"
        warnings.warn(f"the covariate is {what}: the folds are stratified by class only.",
                      UserWarning, stacklevel=2)
    return strata_kernel(labels, bins, n_bins, k, check_seed(seed))


def dense_ids(n_ids: int, n: int) -> bool:
    """Whether ``n_ids`` ids (``0..n_ids-1``) of ``n`` items are few enough for one counter per id (at most
    ``4 n + 1024``): then an O(n) count beats an O(n log n) sort."""
    return n_ids <= 4 * n + 1024


def warn_small_classes(labels, k: int, *, stacklevel: int, name: str = "n_splits") -> None:
    """Warn (``UserWarning``, scikit-learn's ``StratifiedKFold`` words) when the least populated class of
    ``labels`` (``0..C-1``; absent labels do not count) has fewer members than ``k``: some folds then hold none
    of it."""
    if dense_ids(int(labels.max()) + 1, labels.shape[0]):  # class ids of an encoded label vector: a count per id
        counts = np.bincount(labels)
        smallest = int(counts[counts > 0].min())
    else:  # sparse large ids: the counts of the ids present
        smallest = int(np.unique(labels, return_counts=True)[1].min())
    if smallest < k:
        warnings.warn(f"The least populated class in y has only {smallest} members, which is less than "
                      f"{name}={k}.", UserWarning, stacklevel=stacklevel)


def strata_kernel(labels, bins, n_bins, k, rng) -> np.ndarray:
    """Deal the strata ``(bins, labels)`` (``bins`` in ``0..n_bins``) into k folds (checked inputs).

    Sorting all nodes by (bin, class, shuffled position) and dealing ``fold = rank mod k`` equals the
    paper's stratum-by-stratum loop (after ``T`` nodes the larger folds are exactly folds
    ``0..(T mod k)-1``). The sort takes the nodes in shuffled order and sorts them stably by the stratum
    ``bin * C + class``: a counting sort (:func:`hpstrat_lite.core._split_kernels.deal_strata`, O(n)) unless the
    strata far outnumber the nodes."""
    n = labels.shape[0]
    priority = rng.permutation(n)  # the shuffled position of each node within its stratum
    n_classes = int(labels.max()) + 1
    strata = (n_bins + 1) * n_classes
    if dense_ids(strata, n):  # a counting sort (numba), two passes over the nodes
        return _split_kernels.deal_strata(priority, bins, labels, n_classes, strata, k)
    if strata < 2**62:  # many empty strata: a sort
        node_at = np.empty(n, dtype=np.int64)  # node_at[p]: the node at shuffled position p
        node_at[priority] = np.arange(n, dtype=np.int64)
        order = node_at[np.argsort((bins * n_classes + labels)[node_at], kind="stable")]
    else:  # a stratum id would overflow int64
        order = np.lexsort((priority, labels, bins))
    folds = np.empty(n, dtype=np.int64)
    folds[order] = np.arange(n, dtype=np.int64) % k
    return folds


def node_degree(edge_index, num_nodes: int, *, assume_simple: bool = False) -> np.ndarray:
    """Degree of every node on the undirected simple graph: its number of distinct neighbours,
    :math:`d(v) = |N(v)|` (self-loops and duplicate edges left out), the covariate of :func:`degree_folds`.

    Parameters
    ----------
    edge_index : array-like of shape (2, m)
        numpy array or torch tensor of node ids in ``0..num_nodes-1``; directed and duplicated edges and
        self-loops are allowed (the graph is symmetrised and deduplicated first).
    num_nodes : int
        Number of nodes n (isolated nodes have degree 0).
    assume_simple : bool, default False
        Fast path for a graph already undirected and simple, each edge once in each direction (as
        :func:`hpstrat_lite.load_dataset` returns it): :math:`d(v)` is then the number of edges leaving v,
        one ``bincount`` and no sort.

    Returns
    -------
    numpy.ndarray of int64, shape (n,).

    Examples
    --------
    >>> node_degree([[0, 1, 1, 2], [1, 0, 2, 2]], 4).tolist()
    [1, 2, 1, 0]
    >>> node_degree([[0, 1, 1, 2], [1, 0, 2, 1]], 4, assume_simple=True).tolist()
    [1, 2, 1, 0]
    """
    n = check_int(num_nodes, "num_nodes", 1)
    if assume_simple:
        return np.bincount(check_edge_index(edge_index, n)[0], minlength=n)
    a, b = simple_undirected_pairs(edge_index, n)
    return np.bincount(a, minlength=n) + np.bincount(b, minlength=n)


def degree_folds(degree, y, *, k: int = 4, n_bins: int = 10, seed=0) -> np.ndarray:
    """Folds stratified by (log-degree quantile bin, class): the ``"degree"`` split method.

    ``degree`` is each node's number of neighbours on the undirected simple graph (:func:`node_degree`); the
    covariate is
    ``log(1 + degree)`` with B quantile bins (:func:`covariate_bins`)."""
    d = to_numpy(degree).astype(np.float64, copy=False)
    if d.ndim == 1 and np.isfinite(d).all() and (d < 0).any():
        raise ValueError(f"degree must be non-negative; got minimum {d.min()}.")
    return covariate_folds(np.log1p(d), y, k=k, n_bins=n_bins, binning="quantile", seed=seed)


def placebo_covariate(n: int, *, seed=0) -> np.ndarray:
    """The ``"placebo"`` covariate: ``n`` values uniform on [0, 1] drawn from ``seed`` (same seed, same
    values on every machine)."""
    n = check_int(n, "n", 1)
    return check_seed(seed).random(n)


def placebo_folds(y, *, k: int = 4, n_bins: int = 10, seed=0) -> np.ndarray:
    """Folds stratified by (placebo bin, class): the ``"placebo"`` split method, a control.

    One Generator from ``seed`` draws the placebo covariate (:func:`placebo_covariate`), then shuffles the
    strata; B uniform bins on [0, 1], as HpStrat's: the same number of strata, no information.
    Deterministic per seed."""
    labels = check_labels(y)
    k = check_k(k, labels.shape[0])
    rng = check_seed(seed)
    c = rng.random(labels.shape[0])
    n_bins = check_n_bins(n_bins)
    return strata_kernel(labels, covariate_bins(c, n_bins=n_bins, bin_range=(0.0, 1.0)), n_bins, k, rng)


def _check_range(bin_range, finite):
    try:
        lo, hi = (float(v) for v in bin_range)
    except (TypeError, ValueError):
        raise ValueError(f"bin_range must be a pair (lo, hi) of numbers; got {bin_range!r}.") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bin_range must be finite with lo < hi; got {bin_range!r}.")
    if finite.min() < lo or finite.max() > hi:
        raise ValueError(f"covariate values must lie in bin_range [{lo:g}, {hi:g}]; "
                         f"got range [{finite.min():g}, {finite.max():g}].")
    return lo, hi
