"""Stage 2 of the data flow: graph -> node homophily -> homophily bins.

Node homophily (Pei et al., 2020; HpStrat Section 3): for node ``v`` with neighbour set ``N(v)`` on the
undirected simple graph,

.. math:: h(v) = \\frac{|\\{u \\in N(v) : y_u = y_v\\}|}{|N(v)|},

undefined (NaN) for an isolated node.
"""
from __future__ import annotations

import sys

import numpy as np

from ._validate import (check_edge_index, check_homophily, check_int, check_labels, check_n_bins, check_node_ids,
                        edge_array, to_numpy)
from . import _split_kernels as sk


def simple_undirected_pairs(edge_index, num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Each edge of the undirected simple graph once, as sorted pairs ``(a, b)`` with ``a < b``.

    Self-loops are dropped, ``(u, v)`` and ``(v, u)`` are the same edge, duplicates count once.
    Vectorised: one unique-sort of ``m`` int64 keys ``a * n + b`` (half the work of symmetrising first).
    """
    ei = check_edge_index(edge_index, num_nodes)
    u, v = ei[0], ei[1]
    keep = u != v
    a = np.minimum(u[keep], v[keep])
    b = np.maximum(u[keep], v[keep])
    key = a * np.int64(num_nodes) + b
    del a, b
    # torch.unique on CPU (a radix sort) is ~2x faster than numpy's sort-based np.unique at 62M keys: used when
    # the caller has loaded torch already (PyG users); the core itself never imports it (same sorted keys)
    torch = sys.modules.get("torch")
    key = np.unique(key) if torch is None else torch.unique(torch.from_numpy(key)).numpy()
    return key // num_nodes, key % num_nodes


def is_sorted_simple_undirected(edge_index, num_nodes: int) -> bool:
    """Cheap check (no sort) that ``edge_index`` is sorted by (row, col), duplicate- and loop-free,
    and has matching in/out degrees, as ``load_dataset`` returns it. Necessary for an undirected simple
    graph, O(m); symmetry itself is the caller's promise (``assume_simple=True``)."""
    ei = to_numpy(edge_index)
    if ei.ndim != 2 or ei.shape[0] != 2:
        return False
    if ei.shape[1] == 0:
        return True
    key = ei[0].astype(np.int64) * np.int64(num_nodes) + ei[1]
    if not np.all(key[1:] > key[:-1]) or np.any(ei[0] == ei[1]):
        return False
    return np.array_equal(np.bincount(ei[0], minlength=num_nodes), np.bincount(ei[1], minlength=num_nodes))


def node_homophily(edge_index, y, num_nodes: int | None = None, *, assume_simple: bool = False) -> np.ndarray:
    """Node homophily of every node on the undirected simple graph.

    .. math:: h(v) = |\\{u \\in N(v): y_u = y_v\\}| \\,/\\, |N(v)|, \\quad h(v) = \\mathrm{NaN} \\text{ if } N(v) = \\emptyset

    Parameters
    ----------
    edge_index : array-like of shape (2, m)
        numpy array or torch tensor of node ids. Directed, duplicated edges and self-loops are allowed:
        the graph is symmetrised, deduplicated and self-loops are dropped first.
    y : array-like of shape (n,)
        Integer class labels 0..C-1.
    num_nodes : int, optional
        Number of nodes; defaults to ``len(y)``.
    assume_simple : bool, default False
        Fast path for input that is already undirected and simple (both directions present, no
        duplicates or self-loops), sorted by (source, target), as :func:`hpstrat_lite.load_dataset`
        returns: skips re-normalising and counts ``|N(v)|`` and the same-label neighbours of each source in
        one parallel pass over the edges, which also checks, without a sort, that ids lie in ``0..n-1``,
        keys (source, target) strictly increase, there are no self-loops and in-degree equals out-degree
        (by a 64-bit weighted sum; symmetry itself is the caller's promise).

    Returns
    -------
    numpy.ndarray of float64, shape (n,), NaN for isolated nodes.

    Examples
    --------
    >>> node_homophily([[0, 1, 1], [1, 2, 0]], [0, 0, 1])
    array([1. , 0.5, 0. ])
    """
    n = len(to_numpy(y)) if num_nodes is None else num_nodes
    n = check_int(n, "num_nodes", 1, hint=" (an empty graph cannot be split)")
    labels = check_labels(y, n)
    if assume_simple:
        return _sorted_simple_homophily(edge_index, labels, n)
    a, b = simple_undirected_pairs(edge_index, n)
    return node_homophily_of_pairs(labels, a, b)


def node_homophily_of_pairs(labels: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`node_homophily` from checked integer ``labels`` and the undirected simple edges ``(a, b)``, each
    edge once (as :func:`simple_undirected_pairs` gives them): same-label neighbours over degree, NaN where
    the degree is 0."""
    n = labels.shape[0]
    eq = labels[a] == labels[b]
    deg = (np.bincount(a, minlength=n) + np.bincount(b, minlength=n)).astype(np.float64)
    same = np.bincount(a[eq], minlength=n) + np.bincount(b[eq], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = same / deg
    h[deg == 0] = np.nan
    return h


def _sorted_simple_homophily(edge_index, labels: np.ndarray, n: int) -> np.ndarray:
    """The ``assume_simple=True`` path: one numba pass over the edges counts and checks (see
    :mod:`hpstrat_lite.core._split_kernels`); no copy of ``edge_index`` when it holds int32 or int64, C- or
    F-ordered (a ``[2, m]`` array sorted as ``ei[:, order]`` is F-ordered)."""

    ei = edge_array(edge_index)
    if ei.dtype not in (np.int32, np.int64):
        ei = ei.astype(np.int64)
    h, err = sk.sorted_simple_homophily(ei, labels, n)
    if err & sk.OUT_OF_RANGE:
        check_node_ids(ei, n)
    if err:
        raise ValueError("assume_simple=True but edge_index is not a sorted, duplicate-free, loop-free "
                         "symmetric edge list; pass assume_simple=False to normalise it first.")
    return h


def homophily_bins(homophily, *, n_bins: int = 10) -> np.ndarray:
    """Bin index of each node: B equal-width bins on [0, 1], h = 1 in the last bin (B - 1).

    ``bin(v) = min(floor(h(v) * B), B - 1)``; isolated nodes (NaN) get their own extra bin ``B``,
    processed last by HpStrat. Values outside [0, 1] raise a ValueError.
    """
    return bins_of(check_homophily(homophily, None), check_n_bins(n_bins))


def bins_of(h: np.ndarray, n_bins: int) -> np.ndarray:
    """:func:`homophily_bins` of checked inputs (float homophily in [0, 1] or NaN, an int ``n_bins``)."""
    bins = np.floor(h * n_bins)  # NaN stays NaN through floor and minimum
    np.minimum(bins, n_bins - 1, out=bins)
    bins[np.isnan(bins)] = n_bins
    return bins.astype(np.int64)


def mean_homophily(homophily) -> float:
    """Mean node homophily over non-isolated nodes (NaN excluded); NaN when every node is isolated."""
    h = np.asarray(homophily, dtype=np.float64)
    finite = h[~np.isnan(h)]
    return float(finite.mean()) if finite.size else float("nan")
