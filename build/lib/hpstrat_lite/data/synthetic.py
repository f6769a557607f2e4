"""Synthetic graphs: the Watts-Strogatz benchmarks WS1000 and WS1000_gamma, and contextual SBMs.

Part II of the book ("Revisiting the Necessity of Graph Learning and Common Graph Benchmarks",
Katsman, Lou and Gilbert, 2024, Section 5) proposes link prediction on a Watts-Strogatz
small-world graph as a benchmark on which the graph must matter:

- **WS1000**: N = 1000 nodes, mean degree K = 4, rewiring probability beta = 0.5, node features
  drawn i.i.d. from N(0, I_1000). The features carry no information about the edges, so a
  feature-only model cannot beat a random guess (ROC AUC 0.5).
- **WS1000_gamma**: the same graph, features built along a breadth-first traversal from a root
  chosen uniformly at random: ``x(root) = nu * z(root)`` and
  ``x(v) = gamma * x(parent(v)) + nu * z(v)`` with fresh noise ``z(v) ~ N(0, I)`` and ``nu = 1``,
  for gamma in {0.2, 0.4, 0.6, 0.8, 1.0}. The larger gamma, the more a node's features tell about
  its BFS parent (one of its neighbours), and the better a feature-only model can do.

The graph and the noise depend only on ``seed``, so every member of the family shares the same
graph, the same root and the same noise: only gamma changes. A dataset is released as an edge
list CSV (``edges.csv``, one row per undirected edge) and an npz of features (``features.npz``),
like the paper's release; :func:`save_ws` / :func:`load_ws` write and read that layout.

The contextual stochastic block model (:func:`make_csbm`, the synthetic family of the GPR-GNN paper,
Chien et al., ICLR 2021, Section 5, after Deshpande et al., 2018) has two knobs, one per source of
information: ``lam`` (how much the edges say about the two classes: homophilous above 0,
heterophilous below) and ``mu`` (how much the features say).
"""

from __future__ import annotations

import json
from numbers import Integral
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components, shortest_path
import torch
from torch_geometric.data import Data

from ..core._validate import check_edge_index, check_int, check_real
from .._io import atomic_write
from .graphs import canonical_graph

__all__ = [
    "watts_strogatz_graph",
    "ws_features",
    "bfs_parents",
    "make_ws1000",
    "save_ws",
    "load_ws",
    "make_csbm",
    "csbm_edge_homophily",
]


EDGES_FILE = "edges.csv"
FEATURES_FILE = "features.npz"


def watts_strogatz_graph(n=1000, *, k=4, beta=0.5, seed=0):
    """Watts-Strogatz small-world graph, as an undirected ``edge_index``.

    Start from the ring lattice in which node ``u`` is joined to ``u + j (mod n)`` for
    ``j = 1..k/2`` (``n * k / 2`` edges, every degree ``k``). Each lattice edge ``(u, u + j)`` is
    rewired with probability ``beta``: its far end is replaced by a node ``w`` drawn uniformly
    among the nodes that are neither ``u`` nor already joined to ``u`` (Watts and Strogatz, 1998).
    The number of edges stays ``n * k / 2``, so the mean degree stays ``k``.

    Vectorised: all edges picked for rewiring draw their new end at once; a draw that would make a
    self-loop, repeat an edge of the current graph (the lattice edges still waiting count as
    present, as in the sequential algorithm) or repeat another draw of the same round is drawn
    again in the next round. After 1000 rounds an edge that still has not found a free end keeps
    its lattice end (only possible in nearly complete graphs). The result is the same model as the
    sequential algorithm (``networkx.watts_strogatz_graph``), not the same sample.

    Parameters
    ----------
    n : int
        Number of nodes, ``n >= 3``.
    k : int
        Mean degree: each node is joined to its ``k // 2`` nearest neighbours on each side of the
        ring. Even, ``2 <= k < n``.
    beta : float
        Rewiring probability in [0, 1].
    seed : int or numpy.random.Generator
        Seed of every random choice.

    Returns
    -------
    torch.LongTensor
        ``edge_index`` of shape ``[2, n * k]``: every undirected edge in both directions, sorted by
        (source, target), no self-loops, no duplicates.

    Examples
    --------
    >>> ei = watts_strogatz_graph(100, k=4, beta=0.5, seed=0)
    >>> tuple(ei.shape)
    (2, 400)
    """
    n = check_int(n, "n", 3)
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 2 or k % 2 or k >= n:
        raise ValueError(f"k must be an even integer with 2 <= k < n={n}, got {k!r}")
    k = int(k)
    check_real(beta, "beta", 0.0, 1.0)
    rng = np.random.default_rng(seed)

    u = np.tile(np.arange(n, dtype=np.int64), k // 2)
    v = (u + np.repeat(np.arange(1, k // 2 + 1, dtype=np.int64), n)) % n
    pending = np.flatnonzero(rng.random(u.size) < beta)

    def keys(a, b):
        return np.minimum(a, b) * n + np.maximum(a, b)

    for _ in range(1000):
        if pending.size == 0:
            break
        # candidate far end, uniform over the n - 1 nodes other than u
        w = (u[pending] + 1 + rng.integers(0, n - 1, size=pending.size)) % n
        cand = keys(u[pending], w)
        present = np.sort(keys(u, v))  # the current graph, pending lattice edges included
        pos = np.searchsorted(present, cand).clip(max=present.size - 1)
        ok = present[pos] != cand
        # among draws of this round, keep the first of each repeated pair
        _, first = np.unique(cand, return_index=True)
        unique_mask = np.zeros(cand.size, dtype=bool)
        unique_mask[first] = True
        ok &= unique_mask
        v[pending[ok]] = w[ok]
        pending = pending[~ok]

    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    order = np.lexsort((dst, src))
    return torch.from_numpy(np.stack([src[order], dst[order]]))


def bfs_parents(edge_index, n, *, seed=0):
    """Breadth-first forest with one uniformly chosen root per connected component.

    Parameters
    ----------
    edge_index : array-like or torch.Tensor, shape [2, E]
        Edges of the graph (read as undirected).
    n : int
        Number of nodes.
    seed : int or numpy.random.Generator
        Seed of the root choice.

    Returns
    -------
    parent : numpy.ndarray of int, shape [n]
        BFS parent of every node; ``-1`` for a root.
    depth : numpy.ndarray of int, shape [n]
        Hop distance to the root of the node's component (``0`` for roots).
    """
    n = check_int(n, "n", 1)
    ei = check_edge_index(edge_index, n)
    rng = np.random.default_rng(seed)
    adj = sp.coo_matrix((np.ones(ei.shape[1]), (ei[0], ei[1])), shape=(n, n)).tocsr()
    _, comp = connected_components(adj, directed=False)
    # a uniform root per component: the node with the smallest random key in its component
    order = np.lexsort((rng.random(n), comp))
    is_first = np.r_[True, comp[order][1:] != comp[order][:-1]]
    roots = order[is_first]
    # BFS from a virtual node n joined to every root gives the whole forest in one call
    s = n
    rows = np.concatenate([ei[0], ei[1], np.full(roots.size, s)])
    cols = np.concatenate([ei[1], ei[0], roots])
    big = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n + 1, n + 1)).tocsr()
    _, pred = breadth_first_order(big, s, directed=False, return_predecessors=True)
    dist = shortest_path(big, directed=False, unweighted=True, indices=s)
    parent = pred[:n].astype(np.int64)
    parent[parent == s] = -1
    depth = dist[:n].astype(np.int64) - 1
    return parent, depth


def ws_features(edge_index, n, *, dim=1000, gamma=None, nu=1.0, seed=0, return_parents=False):
    """Node features of WS1000 (``gamma=None``) and WS1000_gamma.

    ``gamma=None``: i.i.d. rows ``x(v) ~ N(0, I_dim)``.
    Otherwise a root is chosen uniformly at random in every connected component and the graph is
    traversed breadth-first; with ``z(v) ~ N(0, I_dim)`` i.i.d.,

    .. math::

        x(\\text{root}) = \\nu z(\\text{root}), \\qquad
        x(v) = \\gamma\\, x(\\text{parent}(v)) + \\nu z(v).

    Computed one BFS level at a time (no loop over nodes). The noise ``z`` and the roots depend
    only on ``seed``: two calls with the same seed and different gamma share them.

    Parameters
    ----------
    edge_index : array-like or torch.Tensor, shape [2, E]
        Edges of the graph (read as undirected).
    n : int
        Number of nodes.
    dim : int
        Feature dimension.
    gamma : float or None
        Parent coefficient (``gamma >= 0``); ``None`` for i.i.d. features.
    nu : float
        Noise scale, ``nu > 0``.
    seed : int or numpy.random.SeedSequence
        Seed of the noise and of the root choice.
    return_parents : bool
        Also return the BFS parent of every node (``-1`` for roots; all ``-1`` when gamma is
        None, where no traversal is made).

    Returns
    -------
    x : torch.FloatTensor of shape [n, dim]
    parent : numpy.ndarray of int, shape [n]
        Only when ``return_parents`` is true.
    """
    n = check_int(n, "n", 1)
    dim = check_int(dim, "dim", 1)
    check_real(gamma, "gamma", 0.0, np.inf, allow_none=True)
    check_real(nu, "nu", 0.0, np.inf, low_open=True)
    ei = check_edge_index(edge_index, n)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    noise_seed, root_seed = ss.spawn(2)
    z = np.random.default_rng(noise_seed).standard_normal((n, dim))
    if gamma is None:
        x = torch.from_numpy(z.astype(np.float32))
        return (x, np.full(n, -1, dtype=np.int64)) if return_parents else x
    parent, depth = bfs_parents(ei, n, seed=np.random.default_rng(root_seed))
    x = nu * z
    for d in range(1, int(depth.max()) + 1):
        level = np.flatnonzero(depth == d)
        x[level] += gamma * x[parent[level]]
    x = torch.from_numpy(x.astype(np.float32))
    return (x, parent) if return_parents else x


def make_ws1000(gamma=None, *, seed=0, n=1000, k=4, beta=0.5, dim=1000, nu=1.0):
    """The WS1000 (``gamma=None``) or WS1000_gamma dataset as a PyG ``Data``.

    The graph comes from :func:`watts_strogatz_graph` and the features from :func:`ws_features`,
    each with its own stream spawned from ``seed`` (``numpy.random.SeedSequence``), so the graph
    does not depend on gamma and all members of the family share one graph.

    Parameters
    ----------
    gamma : float or None
        ``None`` for WS1000, else the parent coefficient (the paper uses 0.2, 0.4, ..., 1.0).
    seed : int
        Seed of the graph, the root and the noise.
    n, k, beta, dim, nu
        Number of nodes, mean degree, rewiring probability, feature dimension and noise scale
        (the paper's values are the defaults).

    Returns
    -------
    torch_geometric.data.Data
        ``x`` [n, dim] float32, ``edge_index`` [2, n*k] (both directions), ``num_nodes``,
        ``name`` ("WS1000" or "WS1000_<gamma>") and the generator parameters ``gamma`` (NaN for
        WS1000), ``nu``, ``beta``, ``mean_degree``, ``seed``.
    """
    check_int(seed, "seed", 0)
    graph_seed, feat_seed = np.random.SeedSequence(int(seed)).spawn(2)
    edge_index = watts_strogatz_graph(n, k=k, beta=beta, seed=np.random.default_rng(graph_seed))
    x = ws_features(edge_index, n, dim=dim, gamma=gamma, nu=nu, seed=feat_seed)
    name = "WS1000" if gamma is None else f"WS1000_{float(gamma)}"
    if n != 1000:
        name = name.replace("WS1000", f"WS{n}")
    return Data(
        x=x,
        edge_index=edge_index,
        num_nodes=n,
        name=name,
        gamma=float("nan") if gamma is None else float(gamma),
        nu=float(nu),
        beta=float(beta),
        mean_degree=int(k),
        seed=int(seed),
    )


def save_ws(data, folder):
    """Write a WS dataset as ``folder/edges.csv`` and ``folder/features.npz``.

    ``edges.csv`` has a header ``source,target`` and one row per undirected edge (source <
    target). ``features.npz`` holds ``x`` (float32 [n, dim]) and ``meta`` (a JSON string with the
    name and generator parameters). Both files are written atomically (temporary file and
    ``os.replace``).

    Parameters
    ----------
    data : torch_geometric.data.Data
        A dataset from :func:`make_ws1000` (any ``Data`` with ``x`` and ``edge_index`` works).
    folder : str or os.PathLike
        Output folder, created if missing.

    Returns
    -------
    pathlib.Path
        The folder.
    """
    if getattr(data, "x", None) is None or getattr(data, "edge_index", None) is None:
        raise ValueError("data must be a torch_geometric Data with x and edge_index")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ei = data.edge_index.cpu().numpy()
    once = ei[:, ei[0] < ei[1]]
    x = data.x.to_dense() if data.x.layout != torch.strided else data.x
    meta = {"name": getattr(data, "name", None), "num_nodes": int(data.num_nodes)}
    for key in ("gamma", "nu", "beta", "mean_degree", "seed"):
        if key in data:
            val = data[key]
            meta[key] = None if isinstance(val, float) and np.isnan(val) else val

    def write_csv(tmp):
        with open(tmp, "w") as fh:
            fh.write("source,target\n")
            np.savetxt(fh, once.T, fmt="%d", delimiter=",")

    def write_npz(tmp):
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, x=x.cpu().numpy().astype(np.float32), meta=json.dumps(meta))

    atomic_write(folder / EDGES_FILE, write_csv)
    atomic_write(folder / FEATURES_FILE, write_npz)
    return folder


def load_ws(folder):
    """Read a WS dataset written by :func:`save_ws`.

    Parameters
    ----------
    folder : str or os.PathLike
        Folder holding ``edges.csv`` and ``features.npz``.

    Returns
    -------
    torch_geometric.data.Data
        Same fields as :func:`make_ws1000`; ``edge_index`` in both directions, sorted.
    """
    folder = Path(folder)
    for fname in (EDGES_FILE, FEATURES_FILE):
        if not (folder / fname).is_file():
            raise FileNotFoundError(
                f"folder={str(folder)!r} has no {fname}; a WS dataset folder holds {EDGES_FILE} "
                f"and {FEATURES_FILE} (written by save_ws)"
            )
    with np.load(folder / FEATURES_FILE) as npz:
        x = npz["x"].astype(np.float32)
        meta = json.loads(str(npz["meta"])) if "meta" in npz else {}
    n = x.shape[0]
    edges = np.loadtxt(folder / EDGES_FILE, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    edges = edges.reshape(-1, 2).T
    ei = check_edge_index(edges, n)
    src = np.concatenate([ei[0], ei[1]])
    dst = np.concatenate([ei[1], ei[0]])
    order = np.lexsort((dst, src))
    data = Data(
        x=torch.from_numpy(x),
        edge_index=torch.from_numpy(np.stack([src[order], dst[order]])),
        num_nodes=n,
        name=meta.get("name") or folder.name,
    )
    for key in ("nu", "beta", "mean_degree", "seed"):
        if meta.get(key) is not None:
            data[key] = meta[key]
    if "gamma" in meta:
        data.gamma = float("nan") if meta["gamma"] is None else float(meta["gamma"])
    return data


def csbm_edge_homophily(lam, *, avg_degree=5.0) -> float:
    """Expected edge homophily of :func:`make_csbm` with balanced classes and many nodes:
    ``p_in / (p_in + p_out) = 1/2 + lam / (2 sqrt(d))``."""
    return 0.5 + float(lam) / (2.0 * np.sqrt(float(avg_degree)))


def make_csbm(n=1000, *, lam=1.0, mu=1.0, avg_degree=5.0, num_features=None, seed=0):
    """A two-class contextual stochastic block model (cSBM) as a PyG ``Data``.

    As in GPR-GNN (Chien et al., 2021, Section 5): labels ``v_i = ±1`` (balanced, ``y = (v + 1) / 2``);
    an edge joins ``i < j`` independently with probability

    .. math:: p_{in} = \\frac{d + \\lambda \\sqrt{d}}{n} \\text{ if } v_i = v_j, \\qquad
              p_{out} = \\frac{d - \\lambda \\sqrt{d}}{n} \\text{ otherwise},

    so the mean degree is about ``d`` and the edge homophily about :func:`csbm_edge_homophily`; features

    .. math:: x_i = \\sqrt{\\mu / n}\\, v_i\\, u + z_i / \\sqrt{F}, \\qquad
              u \\sim N(0, I_F / F), \\; z_i \\sim N(0, I_F),

    so ``mu = 0`` gives features independent of the labels. GPR-GNN ties the knobs by
    ``lam**2 + mu**2 / xi = 1 + xi`` (``xi = n / F``) and sweeps ``phi = (2/pi) arctan(lam sqrt(xi) / mu)``;
    here they are free, to lay a grid.

    Parameters
    ----------
    n : int
        Number of nodes (edges are drawn over all pairs, O(n^2) work: meant for a few thousand nodes).
    lam : float
        Graph signal, ``|lam| < sqrt(avg_degree)``.
    mu : float
        Feature signal, ``>= 0``.
    avg_degree : float
        Expected degree ``d``.
    num_features : int, optional
        Feature dimension ``F``; default ``n // 2`` (GPR-GNN's ``xi = n / F`` is 2.5).
    seed : int
        Seed of labels, edges and features.

    Returns
    -------
    torch_geometric.data.Data
        The canonical undirected simple graph (:func:`hpstrat_lite.data.graphs.canonical_graph`): ``x``
        [n, F] float32, ``edge_index``, ``y``, ``name`` (``cSBM_lam<lam>_mu<mu>_s<seed>``), ``num_classes``,
        and the generator's ``csbm_u`` (the direction ``u``), ``lam``, ``mu``, ``avg_degree``, ``seed``.
    """
    n = check_int(n, "n", 4)
    d = check_real(avg_degree, "avg_degree", 0.0, float(n - 1), low_open=True)
    lim = float(np.sqrt(d))
    lam = check_real(lam, "lam", -lim, lim, low_open=True, high_open=True)
    mu = check_real(mu, "mu", 0.0, np.inf)
    f = check_int(n // 2 if num_features is None else num_features, "num_features", 1)
    seed = check_int(seed, "seed", 0)
    rng = np.random.default_rng(seed)
    v = np.where(rng.permutation(n) < n // 2, -1.0, 1.0)
    p_in, p_out = (d + lam * lim) / n, (d - lam * lim) / n
    src, dst = [], []
    chunk = max(1, 2 ** 22 // n)
    for start in range(0, n, chunk):  # one uniform per pair, a block of rows at a time
        rows = np.arange(start, min(n, start + chunk))
        p = np.where(v[rows, None] == v[None, :], p_in, p_out)
        hit = (rng.random((rows.size, n)) < p) & (np.arange(n)[None, :] > rows[:, None])
        r, c = np.nonzero(hit)
        src.append(rows[r])
        dst.append(c)
    src, dst = np.concatenate(src), np.concatenate(dst)
    edge_index = torch.as_tensor(np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])]))
    u = rng.normal(size=f) / np.sqrt(f)
    x = np.sqrt(mu / n) * v[:, None] * u[None, :] + rng.normal(size=(n, f)) / np.sqrt(f)
    data = Data(x=torch.as_tensor(x, dtype=torch.float32), edge_index=edge_index,
                y=torch.as_tensor(((v + 1) / 2).astype(np.int64)), num_nodes=n)
    out = canonical_graph(data, name=f"cSBM_lam{lam:g}_mu{mu:g}_s{seed}")
    out.csbm_u = torch.as_tensor(u)
    out.lam, out.mu, out.avg_degree, out.seed = lam, mu, d, seed
    return out
