"""Graph normalisation: the undirected simple graph, float32 features (CSR for a bag of words), class ids.

Every graph the library trains on or splits, a built-in dataset or a user's ``Data``, goes through these
functions; :func:`mark_canonical` records a graph that did, so that it is not normalised twice.
"""
from __future__ import annotations

import warnings
import weakref

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import remove_self_loops, to_undirected

#: Features are stored as a sparse CSR tensor when they are non-negative integer counts (a bag of
#: words) with at most this fraction of non-zero entries; real-valued or denser features stay dense.
SPARSE_MAX_DENSITY = 0.5

def simple_undirected(edge_index, num_nodes: int) -> torch.Tensor:
    """Edge index of the undirected simple graph: both directions of every edge, each once, no
    self-loops, sorted by row then column, ``int64``.

    Vectorised with PyG's ``remove_self_loops`` and ``to_undirected`` (which coalesces).
    """
    ei = torch.as_tensor(edge_index).to(torch.long)
    if ei.dim() != 2 or ei.size(0) != 2:
        raise ValueError(f"edge_index must have shape (2, m); got shape {tuple(ei.shape)}.")
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= num_nodes):
        raise ValueError(f"edge_index holds node ids in [{int(ei.min())}, {int(ei.max())}] but num_nodes="
                         f"{num_nodes}; ids must lie in 0..{num_nodes - 1}.")
    ei, _ = remove_self_loops(ei)
    return to_undirected(ei, num_nodes=num_nodes).contiguous()


def feature_tensor(x) -> torch.Tensor:
    """``float32`` node features: a ``torch.sparse_csr_tensor`` for a sparse bag of words, dense otherwise.

    A bag of words here means non-negative integer values (binary or counts) with at most
    :data:`SPARSE_MAX_DENSITY` of the entries non-zero. Accepts a dense tensor / array or a scipy
    sparse matrix.
    """
    import scipy.sparse as sp

    if sp.issparse(x):
        csr = sp.csr_matrix(x, dtype=np.float32)
        csr.sum_duplicates()
        vals = csr.data
        n, d = csr.shape
    else:
        dense = torch.as_tensor(np.asarray(x) if not torch.is_tensor(x) else x).to(torch.float32)
        if dense.layout != torch.strided:
            dense = dense.to_dense()
        n, d = dense.shape
        vals = dense[dense != 0].numpy()
        csr = None
    bag = bool(np.all(vals > 0) and np.all(vals == np.round(vals)))
    sparse = bag and vals.size <= SPARSE_MAX_DENSITY * max(n * d, 1)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        if csr is not None:
            if not sparse:
                return torch.from_numpy(csr.toarray())
            return torch.sparse_csr_tensor(torch.from_numpy(csr.indptr.astype(np.int64)),
                                           torch.from_numpy(csr.indices.astype(np.int64)),
                                           torch.from_numpy(csr.data), size=(n, d), check_invariants=False)
        return dense.to_sparse_csr() if sparse else dense.contiguous()


def class_ids(y) -> tuple[torch.Tensor, int]:
    """Labels mapped to ``0..C-1`` in sorted order of the raw values, and ``C``."""
    classes, inv = np.unique(np.asarray(y), return_inverse=True)
    return torch.from_numpy(inv.reshape(-1).astype(np.int64)), int(classes.size)



_CANONICAL: dict = {}  # id(Data) -> identity and in-place versions of its x, edge_index and y


def _stamp(data) -> tuple:
    return tuple((id(t), t._version) if torch.is_tensor(t) else (id(t), None)
                 for t in (data.x, data.edge_index, data.y))


def mark_canonical(data: Data) -> Data:
    """Record that ``data`` is a canonical graph (as long as its ``x``, ``edge_index`` and ``y`` are
    the same tensors, unchanged in place); :func:`hpstrat_lite.data.graphs.as_graph` then returns it as it is."""
    key = id(data)
    if key not in _CANONICAL:
        weakref.finalize(data, _CANONICAL.pop, key, None)
    _CANONICAL[key] = _stamp(data)
    return data


def is_canonical(data) -> bool:
    """True while ``data`` is a graph :func:`mark_canonical` recorded, with the same ``x``, ``edge_index`` and ``y``."""
    return _CANONICAL.get(id(data)) == _stamp(data)
