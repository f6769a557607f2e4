"""The eight node classifiers of the HpStrat experiment, written so that R independent runs train as one.

A *batched* model holds the parameters of R runs of the same architecture, stacked along a run axis
(first), and computes the logits of all of them in one forward pass: hidden states are ``[R, N, d]``,
each sparse propagation is one autograd op over all runs (:class:`SparseOp`: one CSR matmul on the
``[N, R * d]`` channel stack for narrow states, one cache-sized CSR matmul per run for wide ones,
which is faster on a memory-bound CPU), GAT's R x heads attention maps are one fused numba kernel
per layer on CPU (:mod:`hpstrat_lite.kernels`) and one block-diagonal sparse matmul on CUDA, and
every dense transform is one batched matmul with per-run weights. Runs never mix:
every op is per run or elementwise, so run ``r``'s logits (and, with the summed loss, its
gradients) are exactly those of the same run trained alone.

Each run draws its initial weights from its own ``torch.Generator`` (seeded from the run's seed, in
a fixed order) and its dropout masks from another one (:class:`RunRandom`), so a run gives the same
numbers inside any batch as alone.

Architectures (HpStrat protocol: hidden 64, two layers, dropout 0.5 between layers, as in PyG's
``BasicGNN`` models; no dropout on the raw input features):

=========  ==================================================================================
MLP        ``Linear -> ReLU -> dropout -> Linear`` (feature-only reference; ``num_layers`` >= 1)
GCN        Kipf & Welling 2017, ``GCNConv``: :math:`H' = \\hat A H W + b`,
           :math:`\\hat A = D^{-1/2}(A+I)D^{-1/2}` (PyG ``gcn_norm``)
GAT        Velickovic et al. 2018, ``GATConv``: hidden layers 8 heads x ``hidden/8`` channels
           (concatenated), ELU, output layer 1 head; attention dropout = ``dropout``
GraphSAGE  Hamilton et al. 2017, ``SAGEConv`` (mean): :math:`h_i' = W_l\\,\\mathrm{mean}_{j\\in N(i)} h_j
           + b + W_r h_i`
MixHop     Abu-El-Haija et al. 2019, ``MixHopConv`` powers {0, 1, 2}:
           :math:`H' = \\Vert_{p} \\hat A^p H W_p + b`; ``num_layers`` MixHop layers (ReLU,
           dropout) and a linear classifier on the last ``3 * hidden`` channels (the layer stack of
           PyG's MixHop example, without its batch norm and input dropout, with the paper's ReLU)
APPNP      Gasteiger et al. 2019: MLP logits :math:`Z^{(0)}`, then K=10 steps
           :math:`Z^{(k+1)} = (1-\\alpha)\\hat A Z^{(k)} + \\alpha Z^{(0)}`, alpha = 0.1
H2GCN      Zhu et al. 2020, H2GCN-2 (K = ``num_layers`` = 2 rounds): :math:`r^{(0)} = \\mathrm{ReLU}(XW_e)`,
           :math:`r^{(k)} = [\\bar A_1 r^{(k-1)} \\Vert \\bar A_2 r^{(k-1)}]` with
           :math:`\\bar A_i = D_i^{-1/2} A_i D_i^{-1/2}` over the exact 1-hop and exact 2-hop
           neighbourhoods (no self loops: ego/neighbour separation), classifier on the dropout of
           :math:`[r^{(0)} \\Vert r^{(1)} \\Vert r^{(2)}]`
GPRGNN     Chien et al. 2021: MLP logits :math:`H`, then :math:`Z = \\sum_{k=0}^{10} \\gamma_k \\hat A^k H`
           with learnable :math:`\\gamma` initialised to PPR weights :math:`\\gamma_k = \\alpha(1-\\alpha)^k`,
           :math:`\\gamma_K = (1-\\alpha)^K`, alpha = 0.1, no weight decay on :math:`\\gamma`
=========  ==================================================================================

Every model starts with a linear projection of the node features, ``X @ W_in`` (a sparse CSR matmul
for bag-of-words features); the training loop (:mod:`hpstrat_lite.train`) computes it and the
model's :meth:`~BatchedModel.trunk` (everything before the first dropout) once per epoch.

Mixed precision (``precision="bfloat16"``, see :func:`matmul_precision`): the dense matrix products
(the per-run linear layers, a dense feature matrix's input projection, GAT's attention scores,
MixHop's power blocks) take bfloat16 operands and accumulate in float32, and an MLP's hidden
activations stay bfloat16 between its products, while parameters, optimiser state, sparse propagation
and losses stay float32 -- the usual mixed-precision training. On CPUs with AMX tiles (Intel Sapphire
Rapids and later) these products run about 5x faster; bfloat16 keeps 8 significant bits, so numbers
differ from float32 training at the level of run-to-run noise, not bit for bit.
"""
from __future__ import annotations

import contextlib
import functools
import math
import warnings
import weakref

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .results import cpu_flags

MODELS = ("MLP", "GCN", "GAT", "GraphSAGE", "MixHop", "APPNP", "H2GCN", "GPRGNN")

GAT_HEADS = 8
#: Use the fused numba kernel (:mod:`hpstrat_lite.kernels`) for GAT attention on CPU; the PyTorch-op
#: path (always used on CUDA) is kept for reference and tests.
FUSED_ATTENTION = True
#: Sparse products on CPU with the numba kernel :func:`hpstrat_lite.kernels.spmm` (``torch.mm`` if False).
NUMBA_SPMM = True
#: Products whose output only the runs' training and validation rows read (H2GCN's last round) compute
#: those rows only, with the same floats (:class:`RunRows`); False computes every row (tests, benchmarks).
SELECT_ROWS = True
MIXHOP_POWERS = (0, 1, 2)
APPNP_K, APPNP_ALPHA = 10, 0.1
GPRGNN_K, GPRGNN_ALPHA = 10, 0.1

#: Graph operators each model needs (see :func:`graph_operators`).
OPERATORS = {"MLP": (), "GCN": ("gcn",), "GAT": ("gat",), "GraphSAGE": ("mean",), "MixHop": ("gcn",),
             "APPNP": ("gcn",), "H2GCN": ("hop1", "hop2"), "GPRGNN": ("gcn",)}


# ----------------------------------------------------------------------------------------------
# Sparse operators
# ----------------------------------------------------------------------------------------------

def _bmm_sparse(a: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """``a @ h[r]`` for every run r: ``h`` ``[R, n_in, d]`` -> ``[R, n_out, d]``.

    Hidden layers use one product per run rather than one on the ``[n_in, R * d]`` channel stack:
    the products are memory-bound, and a ``[n_in, d]`` operand stays in cache while ``[n_in, R * d]``
    does not (about 2x faster on the 2-core CPU here, from Cora to Coauthor-Physics). Narrow inputs
    (logits: at most :data:`_NARROW_COLUMNS` per run, or :data:`_STACK_COLUMNS` in all) use one product
    on the stack: a row of a few floats per run costs an index lookup each, so the per-run kernel is
    3-8x slower there (Coauthor-CS, 12 runs x 15 classes: 57 ms against 7-18 ms stacked, one thread).
    On CPU the products are :func:`hpstrat_lite.kernels.spmm` (1.3-2x faster than PyTorch's CSR matmul
    here), on CUDA ``torch.mm``.
    """
    R, n, d = h.shape
    if 1 < R and (R * d <= _STACK_COLUMNS or d <= _NARROW_COLUMNS):
        out = _bmm_sparse(a, h.transpose(0, 1).reshape(1, n, R * d))
        return out.view(a.shape[0], R, d).transpose(0, 1).contiguous()
    if NUMBA_SPMM and h.device.type == "cpu":
        from .kernels import csr_arrays, spmm

        return spmm(csr_arrays(a), a.shape, h)
    out = torch.empty(R, a.shape[0], d, dtype=h.dtype, device=h.device)
    for r in range(R):
        torch.mm(a, h[r], out=out[r])
    return out


#: Use one product on the ``[n, R * d]`` channel stack while it has at most this many columns
#: (logits: R x classes), or while each run has at most ``_NARROW_COLUMNS``; one product per run
#: otherwise (hidden layers).
_STACK_COLUMNS = 128
_NARROW_COLUMNS = 16


class _SpMM(torch.autograd.Function):
    """``A @ H[r]`` for every run, constant sparse CSR ``A``; the backward pass uses a precomputed
    ``A^T`` (CSR)."""

    @staticmethod
    def forward(ctx, a, a_t, h):
        ctx.a_t = a_t
        out = _bmm_sparse(a, h)
        return out if out._base is None else out.clone()  # callers may modify it in place

    @staticmethod
    def backward(ctx, grad):
        return None, None, _bmm_sparse(ctx.a_t, grad.contiguous())


class _ProjectSpMM(torch.autograd.Function):
    """Input projection ``X @ W[r][:, block b]`` for every run r and column block b: ``[R, N, c]`` for one
    block, else ``[B, R, N, c]`` (block-major, so that each block of all runs is one contiguous
    ``[R, N, c]`` slab); one sparse product per run and block (:func:`_bmm_sparse` on the ``B * R``
    blocks), and ``X^T @ G[b, r]`` in the backward pass."""

    @staticmethod
    def forward(ctx, a, a_t, w, blocks):
        runs, n_in, width = w.shape
        c = width // blocks
        ctx.a, ctx.a_t = a, a_t
        if blocks == 1:
            return _bmm_sparse(a, w)
        w_blocks = w.view(runs, n_in, blocks, c).permute(2, 0, 1, 3).reshape(blocks * runs, n_in, c)
        return _bmm_sparse(a, w_blocks).view(blocks, runs, a.shape[0], c)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        if grad.dim() == 3:
            return None, None, _bmm_sparse_t(ctx.a, ctx.a_t, grad), None
        blocks, runs, n, c = grad.shape
        gw = _bmm_sparse_t(ctx.a, ctx.a_t, grad.view(blocks * runs, n, c))
        return None, None, gw.view(blocks, runs, -1, c).permute(1, 2, 0, 3).reshape(runs, -1, blocks * c), None


def _bmm_sparse_t(a: torch.Tensor, a_t: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """``a^T @ g[r]`` for every run r (``a_t`` is ``a^T`` in CSR): the gradient of a sparse product.

    On CPU, with at least two runs per thread and wide rows, :func:`hpstrat_lite.kernels.spmm_t` scatters
    from ``a``'s rows, parallel over runs (the same floats, 1.25x faster for the sparse-feature projection
    on Coauthor-CS); otherwise :func:`_bmm_sparse` on ``a_t``."""
    R, _, d = g.shape
    if NUMBA_SPMM and g.device.type == "cpu" and d > _NARROW_COLUMNS and R >= 2 * torch.get_num_threads():
        from .kernels import csr_arrays, spmm_t

        return spmm_t(csr_arrays(a), a.shape, g)
    return _bmm_sparse(a_t, g)


class RunRows:
    """The output rows each run of a batch reads, for products whose output only its training and
    validation nodes use (H2GCN's last round, whose output goes straight to the classifier).

    ``need[r, i]``: run r reads row i (its training and validation nodes: the training loss and the
    validation loss of early stopping); ``live[r, i]``: the gradient of that output can be non-zero at
    row i (its training nodes). :meth:`SparseOp.select` computes only the needed rows (zeros elsewhere),
    and its backward pass gathers only the live rows of the gradient, through a copy of :math:`A^T` per
    run that keeps only the entries of live columns. Every row that is read is the same float sum as the
    full product's, and the dropped gradient terms are exact zeros, so training gives the same numbers
    while the products read the entries of 75% of the rows forward and 50% of the columns backward
    (k = 4 folds: train 2, validation 1, test 1). The final test pass uses the full products.

    ``subset(keep)`` follows the batch when stopped runs are dropped (the per-run copies are shared).
    """

    def __init__(self, need: torch.Tensor, live: torch.Tensor):
        if need.shape != live.shape or need.dim() != 2 or need.dtype != torch.bool or live.dtype != torch.bool:
            raise ValueError(f"need and live must be boolean [runs, nodes] masks of one shape; got "
                             f"{need.dtype} {tuple(need.shape)} and {live.dtype} {tuple(live.shape)}.")
        self.need, self.live = need.cpu().numpy(), live.cpu().numpy()  # [R, N] bool, by original run
        self.runs = np.arange(len(self.need))
        self._filtered: dict = {}  # id(matrix) -> (crow [R0, n + 1], col, val) over the original runs

    def subset(self, keep) -> "RunRows":
        out = object.__new__(RunRows)
        out.need, out.live, out._filtered = self.need, self.live, self._filtered
        out.runs = self.runs[np.asarray(keep)]
        return out

    @functools.cached_property
    def needed(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, rows_ptr)``: the needed rows of the current runs, concatenated (int64)."""
        need = self.need[self.runs]
        return np.nonzero(need)[1].astype(np.int64), np.concatenate([[0], np.cumsum(need.sum(1))]).astype(np.int64)

    @functools.cached_property
    def every(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, rows_ptr)`` listing every row for each current run."""
        R, n = len(self.runs), self.need.shape[1]
        return np.tile(np.arange(n, dtype=np.int64), R), np.arange(R + 1, dtype=np.int64) * n

    def filtered(self, matrix: torch.Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(crow [R, n + 1], col, val)``: for each current run, ``matrix`` (CPU CSR) without the entries
        of columns that are not live, in :func:`hpstrat_lite.kernels.spmm_select`'s layout."""
        from .kernels import csr_arrays

        key = id(matrix)
        if key not in self._filtered:
            crow, col, val = csr_arrays(matrix)
            crows, cols, vals, offset = [], [], [], 0
            for live in self.live:
                keep = live[col]
                seen = np.zeros(len(col) + 1, np.int64)
                np.cumsum(keep, out=seen[1:])
                crows.append(seen[crow] + offset)
                cols.append(col[keep])
                vals.append(val[keep])
                offset += int(seen[-1])
            self._filtered[key] = (np.stack(crows), np.concatenate(cols), np.concatenate(vals))
        crow, col, val = self._filtered[key]
        return crow[self.runs], col, val


class _SelectSpMM(torch.autograd.Function):
    """``A @ H[r]`` at the rows ``rows`` (a :class:`RunRows`) needs, zero elsewhere; the backward pass
    multiplies by ``A^T`` without the columns of rows whose gradient is zero (not live)."""

    @staticmethod
    def forward(ctx, a, a_t, rows, h):
        from .kernels import csr_arrays, spmm_select

        ctx.a_t, ctx.rows = a_t, rows
        crow, col, val = csr_arrays(a)
        need, need_ptr = rows.needed
        crow = np.broadcast_to(crow.astype(np.int64), (h.shape[0], len(crow)))
        return spmm_select(crow, col, val, h, need, need_ptr, a.shape[0])

    @staticmethod
    def backward(ctx, grad):
        from .kernels import spmm_select

        crow, col, val = ctx.rows.filtered(ctx.a_t)
        return None, None, None, spmm_select(crow, col, val, grad, *ctx.rows.every, ctx.a_t.shape[0])


class SparseOp:
    """A constant sparse matrix ``A`` ``[n_out, n_in]`` (CSR) with its transpose for the backward pass.

    ``op @ h`` maps all runs' channels ``h`` ``[R, n_in, d]`` to ``[R, n_out, d]`` (see
    :func:`_bmm_sparse`).
    """

    def __init__(self, matrix: torch.Tensor, transpose: torch.Tensor):
        self.matrix, self.transpose = matrix, transpose
        self.shape = tuple(matrix.shape)

    @classmethod
    def from_edges(cls, row, col, value, shape, device) -> "SparseOp":
        """Operator with entries ``A[row[e], col[e]] = value[e]`` (duplicates summed)."""
        return cls(_csr(row, col, value, shape, device), _csr(col, row, value, shape[::-1], device))

    def __matmul__(self, h: torch.Tensor) -> torch.Tensor:
        return _SpMM.apply(self.matrix, self.transpose, h.contiguous())

    def select(self, h: torch.Tensor, rows: "RunRows | None") -> torch.Tensor:
        """``self @ h`` at the rows each run reads (see :class:`RunRows`), zero elsewhere; the full
        product when ``rows`` is None, on CUDA, or for operands narrow enough to share one product
        (:func:`_bmm_sparse`)."""
        R, _, d = h.shape
        if rows is None or not (SELECT_ROWS and NUMBA_SPMM) or h.device.type != "cpu" or (
                1 < R and (R * d <= _STACK_COLUMNS or d <= _NARROW_COLUMNS)):
            return self @ h
        return _SelectSpMM.apply(self.matrix, self.transpose, rows, h.contiguous())

    def project(self, w: torch.Tensor, blocks: int = 1) -> torch.Tensor:
        """``self @ w[r]`` for weights ``w`` ``[R, n_in, blocks * c]``: ``[R, n_out, c]`` for one block,
        else ``[blocks, R, n_out, c]`` (see :class:`_ProjectSpMM`)."""
        return _ProjectSpMM.apply(self.matrix, self.transpose, w, blocks)

    @property
    def nnz(self) -> int:
        return int(self.matrix.values().numel())


def _csr(row, col, value, shape, device) -> torch.Tensor:
    """A float32 CSR tensor from COO triplets (vectorised, via a coalesced COO tensor), with int32
    indices when they fit: MKL takes 32-bit indices, and int64 ones are converted on every matmul
    (about 25% of a transposed feature matmul on Coauthor-CS)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Ss]parse.*")
        coo = torch.sparse_coo_tensor(torch.stack([torch.as_tensor(row), torch.as_tensor(col)]),
                                      torch.as_tensor(value, dtype=torch.float32), size=tuple(shape),
                                      check_invariants=False).coalesce()
        csr = coo.to_sparse_csr()
        if csr.values().numel() < 2 ** 31 and max(shape) < 2 ** 31:
            csr = torch.sparse_csr_tensor(csr.crow_indices().int(), csr.col_indices().int(), csr.values(),
                                          size=tuple(shape), check_invariants=False)
        return csr.to(device)


def _edges(data) -> tuple[torch.Tensor, torch.Tensor, int]:
    """``(src, dst, N)`` of ``data.edge_index`` (messages flow src -> dst, PyG's default)."""
    ei = data.edge_index.to("cpu", torch.long)
    return ei[0], ei[1], int(data.num_nodes)


def gcn_operator(data, device, self_loops: bool = True) -> SparseOp:
    """:math:`\\hat A = D^{-1/2}(A + I)D^{-1/2}` (``self_loops=False``: :math:`D^{-1/2} A D^{-1/2}`),
    computed with PyG's ``gcn_norm``; row = target node, column = source node."""
    from torch_geometric.nn.conv.gcn_conv import gcn_norm

    src, dst, n = _edges(data)
    ei, w = gcn_norm(torch.stack([src, dst]), None, n, add_self_loops=self_loops)
    return SparseOp.from_edges(ei[1], ei[0], w, (n, n), device)


def mean_operator(data, device) -> SparseOp:
    """Mean aggregation of SAGEConv: :math:`(D^{-1} A)_{ij} = 1/\\deg(i)` for each edge j -> i
    (a node without neighbours aggregates to zero, as in PyG)."""
    src, dst, n = _edges(data)
    deg = torch.bincount(dst, minlength=n).clamp(min=1).to(torch.float32)
    return SparseOp.from_edges(dst, src, 1.0 / deg[dst], (n, n), device)


def _two_hop_matrices(data):
    """``(a, c, b2)`` as scipy CSR ``[N, N]`` (row = target): the binary adjacency ``a`` without self
    loops, the 2-step path counts ``c = a @ a`` and the binary exact 2-hop matrix ``b2`` (nodes reachable
    in two steps, not neighbours, not the node itself)."""
    import scipy.sparse as sp

    src, dst, n = _edges(data)
    a = sp.csr_matrix((np.ones(src.numel(), np.float32), (dst.numpy(), src.numpy())), shape=(n, n))
    a.sum_duplicates()
    a.data[:] = 1.0
    a.setdiag(0)
    a.eliminate_zeros()
    c = (a @ a).tocsr()
    b2 = c.copy()
    b2.data[:] = 1.0
    b2 = b2 - b2.multiply(a)  # drop 1-hop neighbours
    b2.setdiag(0)
    b2.eliminate_zeros()
    return a, c, b2.tocsr()


def two_hop_edges(data) -> tuple[torch.Tensor, torch.Tensor]:
    """Edges ``(src, dst)`` of the exact 2-hop neighbourhood :math:`N_2(v)` of H2GCN: nodes at shortest
    distance exactly 2 (reachable in two steps, not a neighbour, not v itself), from one sparse product."""
    a2 = _two_hop_matrices(data)[2].tocoo()
    return torch.from_numpy(a2.col.astype(np.int64)), torch.from_numpy(a2.row.astype(np.int64))


#: :func:`two_hop_operator` factorises the 2-hop product when that reads at most this share of the
#: entries the explicit 2-hop matrix has (the extra element-wise passes cost a little).
TWO_HOP_FACTOR_SHARE = 0.8


class TwoHopOp:
    """H2GCN's normalised exact 2-hop operator :math:`A_2 = S B_2 S` (:math:`S = D_2^{-1/2}`) applied as
    :math:`S\\,(A (A (S h)) - M (S h))` without the explicit :math:`B_2`.

    With :math:`C = A A` the 2-step path counts, :math:`B_2 = [C > 0] - [C > 0] \\circ A - [C > 0] \\circ I`,
    so :math:`M = C - B_2` holds the surplus paths: :math:`C_{ij} - 1` for 2-hop pairs joined by several
    paths, :math:`C_{ij}` on edges and on the diagonal. On clustered graphs :math:`M` has far fewer
    entries than :math:`B_2` (Amazon-Computers: 13.5 M against 24.9 M, with 0.5 M in :math:`A`), and
    the 2-hop products are most of H2GCN's time. The operator is the same matrix; only the float
    rounding of the sums differs.
    """

    def __init__(self, adjacency: SparseOp, surplus: SparseOp, scale: torch.Tensor):
        self.adjacency, self.surplus, self.scale = adjacency, surplus, scale[:, None]
        self.shape = adjacency.shape

    def __matmul__(self, h: torch.Tensor) -> torch.Tensor:
        return self.select(h, None)

    def select(self, h: torch.Tensor, rows: "RunRows | None") -> torch.Tensor:
        """:meth:`SparseOp.select` of this operator: the outer products run on the needed rows only (every
        row when ``rows`` is None)."""
        y = h * self.scale
        return (self.adjacency.select(self.adjacency @ y, rows) - self.surplus.select(y, rows)).mul_(self.scale)

    @property
    def nnz(self) -> int:
        return 2 * self.adjacency.nnz + self.surplus.nnz


def two_hop_operator(data, device, factor_share: float | None = None):
    """H2GCN's :math:`D_2^{-1/2} B_2 D_2^{-1/2}` over the exact 2-hop neighbourhood (see
    :func:`two_hop_edges`): a :class:`TwoHopOp` when its products read at most ``factor_share``
    (default :data:`TWO_HOP_FACTOR_SHARE`; 0 always builds the explicit matrix) of the entries of
    :math:`B_2`, else the explicit :class:`SparseOp`."""
    if factor_share is None:
        factor_share = TWO_HOP_FACTOR_SHARE
    a, c, b2 = _two_hop_matrices(data)
    n = a.shape[0]
    surplus = (c - b2).tocoo()
    surplus.eliminate_zeros()
    b2 = b2.tocoo()
    if 2 * a.nnz + surplus.nnz > factor_share * b2.nnz:
        return _sym_norm(torch.from_numpy(b2.col.astype(np.int64)), torch.from_numpy(b2.row.astype(np.int64)),
                         n, device)
    deg = torch.from_numpy(np.bincount(b2.row, minlength=n).astype(np.float32))
    scale = deg.pow(-0.5).masked_fill(deg == 0, 0.0)
    a = a.tocoo()

    def op(m):
        return SparseOp.from_edges(torch.from_numpy(m.row.astype(np.int64)), torch.from_numpy(m.col.astype(np.int64)),
                                   torch.from_numpy(m.data.astype(np.float32)), (n, n), device)

    return TwoHopOp(op(a), op(surplus), scale.to(device))


def _sym_norm(src, dst, n, device) -> SparseOp:
    """:math:`D^{-1/2} A D^{-1/2}` of the edge set ``(src, dst)`` (no self loops added)."""
    deg = torch.bincount(dst, minlength=n).to(torch.float32)
    inv = deg.pow(-0.5).masked_fill(deg == 0, 0.0)
    return SparseOp.from_edges(dst, src, inv[dst] * inv[src], (n, n), device)


class AttentionGraph:
    """Edges for attention layers (GATConv): one self loop per node added, sorted by (target, source).

    Attention of all runs and heads is applied as one block-diagonal sparse matmul: block b (a run
    and a head) is the ``[N, N]`` matrix with entry ``alpha[b, e]`` at (target, source) of edge e.
    The block structures (CSR indices of the matrix and of its transpose) are built once per number
    of blocks and cached.
    """

    def __init__(self, data, device):
        from torch_geometric.utils import add_self_loops, remove_self_loops

        src, dst, n = _edges(data)
        ei, _ = remove_self_loops(torch.stack([src, dst]))
        ei, _ = add_self_loops(ei, num_nodes=n)
        order = torch.argsort(ei[1] * n + ei[0])
        src, dst = ei[0, order], ei[1, order]
        self.n, self.num_edges, self.device = n, int(src.numel()), torch.device(device)
        self.src, self.dst = src.to(device), dst.to(device)
        self._crow = _crow(dst, n)
        self._perm = torch.argsort(src * n + dst)  # value order of the transpose (CSR by source)
        self._crow_t = _crow(src, n)
        self._blocks: dict = {}
        self._cpu_index = None

    def cpu_index(self):
        """``(crow, src)``: the CSR by target (row pointer, sources) as int64 numpy arrays for
        :mod:`hpstrat_lite.kernels`."""
        if self._cpu_index is None:
            self._cpu_index = (self._crow.long().numpy(), self.src.cpu().long().numpy())
        return self._cpu_index

    def offsets(self, runs: int, heads: int) -> torch.Tensor:
        """CSR row pointer expanded to ``[runs, heads, N + 1]`` for ``torch.segment_reduce``."""
        key = ("offsets", runs, heads)
        if key not in self._blocks:
            index = torch.int32 if self.num_edges < 2 ** 31 else torch.long
            self._blocks[key] = self._crow.to(self.device, index).expand(runs, heads, -1).contiguous()
        return self._blocks[key]

    def blocks(self, b: int):
        """``(crow, col, crow_t, col_t, perm)`` of the block-diagonal matrix with ``b`` blocks."""
        if b not in self._blocks:
            n, e = self.n, self.num_edges
            shift_e = (torch.arange(b) * e)[:, None]
            shift_n = (torch.arange(b) * n)[:, None]
            crow = torch.cat([torch.zeros(1, dtype=torch.long), (self._crow[1:][None] + shift_e).view(-1)])
            crow_t = torch.cat([torch.zeros(1, dtype=torch.long), (self._crow_t[1:][None] + shift_e).view(-1)])
            col = (self.src.cpu()[None] + shift_n).view(-1)
            col_t = (self.dst.cpu()[self._perm][None] + shift_n).view(-1)
            perm = (self._perm[None] + shift_e).view(-1)
            index = torch.int32 if b * max(n, e) < 2 ** 31 else torch.long  # half the index traffic
            sizes = [k for k in self._blocks if isinstance(k, int)]
            for k in sizes[:-3]:  # keep a few recent sizes: a batch shrinks as its runs stop
                del self._blocks[k]
            self._blocks[b] = tuple(t.to(self.device, index) for t in (crow, col, crow_t, col_t, perm))
        return self._blocks[b]


def _crow(rows: torch.Tensor, n: int) -> torch.Tensor:
    """CSR row pointer of sorted row ids."""
    out = torch.zeros(n + 1, dtype=torch.long)
    out[1:] = torch.cumsum(torch.bincount(rows, minlength=n), 0)
    return out


class _AttentionSpMM(torch.autograd.Function):
    """``out[b] = A_b @ x[b]`` with ``A_b[dst_e, src_e] = alpha[b, e]``, for all blocks b at once.

    Forward and the gradient for ``x`` are CSR matmuls with the block-diagonal matrix and its
    transpose; the gradient for ``alpha`` is the sampled product :math:`(G X^\\top)_{dst_e, src_e}`
    (``torch.sparse.sampled_addmm``). No ``[blocks, E, C]`` message tensor is ever formed.
    """

    @staticmethod
    def forward(ctx, alpha, x, graph):
        b, n, c = x.shape
        crow, col, _, _, _ = graph.blocks(b)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse.*")
            a = torch.sparse_csr_tensor(crow, col, alpha.reshape(-1), size=(b * n, b * n), check_invariants=False)
            out = a @ x.reshape(b * n, c)
        ctx.save_for_backward(alpha, x)
        ctx.graph = graph
        return out.view(b, n, c)

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        b, n, c = x.shape
        crow, col, crow_t, col_t, perm = ctx.graph.blocks(b)
        g = grad.reshape(b * n, c).contiguous()
        grad_alpha = grad_x = None
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse.*")
            if ctx.needs_input_grad[1]:
                at = torch.sparse_csr_tensor(crow_t, col_t, alpha.reshape(-1)[perm], size=(b * n, b * n),
                                             check_invariants=False)
                grad_x = (at @ g).view(b, n, c)
            if ctx.needs_input_grad[0]:
                a = torch.sparse_csr_tensor(crow, col, alpha.reshape(-1).detach(), size=(b * n, b * n),
                                            check_invariants=False)
                sampled = torch.sparse.sampled_addmm(a, g, x.reshape(b * n, c).t(), beta=0.0)
                grad_alpha = sampled.values().view(alpha.shape)
        return grad_alpha, grad_x, None


_OP_CACHE: dict = {}


def graph_operators(data, model: str, device) -> dict:
    """The graph operators ``model`` needs, built once per graph and device and cached.

    The cache is keyed by the identity of ``data.edge_index`` (an entry is dropped when that tensor
    is freed), so running many batches on one dataset normalises its adjacency once. Do not change
    ``edge_index`` in place after a first call.
    """
    device = torch.device(device)
    ei = data.edge_index
    key = id(ei)
    if key not in _OP_CACHE:
        _OP_CACHE[key] = {}
        weakref.finalize(ei, _OP_CACHE.pop, key, None)
    cache = _OP_CACHE[key]
    out = {}
    for kind in OPERATORS[model]:
        ck = (kind, str(device), int(data.num_nodes))
        if ck not in cache:
            if kind == "gcn":
                cache[ck] = gcn_operator(data, device)
            elif kind == "hop1":
                src, dst, n = _edges(data)
                cache[ck] = _sym_norm(src, dst, n, device)
            elif kind == "hop2":
                cache[ck] = two_hop_operator(data, device)
            elif kind == "mean":
                cache[ck] = mean_operator(data, device)
            elif kind == "gat":
                cache[ck] = AttentionGraph(data, device)
        out[kind] = cache[ck]
    return out


# ----------------------------------------------------------------------------------------------
# Per-run randomness
# ----------------------------------------------------------------------------------------------

def run_seeds(seed: int) -> tuple[int, int]:
    """Two independent 63-bit seeds (weights, dropout) derived from a run's seed by numpy's SeedSequence."""
    a, b = np.random.SeedSequence(int(seed)).generate_state(2, dtype=np.uint64)
    return int(a >> np.uint64(1)), int(b >> np.uint64(1))


class _RunInit:
    """Draws each run's initial weights from its own CPU generator, in the order parameters are made."""

    def __init__(self, seeds):
        self.gens = [torch.Generator().manual_seed(run_seeds(s)[0]) for s in seeds]

    def uniform(self, shape, bound: float) -> torch.Tensor:
        """``[R, *shape]`` uniform on ``[-bound, bound]``, run r from run r's generator."""
        return torch.stack([torch.empty(shape).uniform_(-bound, bound, generator=g) for g in self.gens])


def _glorot(fan_in, fan_out) -> float:
    """Bound of PyG's ``glorot`` (Xavier uniform): :math:`\\sqrt{6 / (f_{in} + f_{out})}`."""
    return math.sqrt(6.0 / (fan_in + fan_out))


def _kaiming(fan_in) -> float:
    """Bound of ``torch.nn.Linear``'s default init (weights and bias): :math:`1 / \\sqrt{f_{in}}`."""
    return 1.0 / math.sqrt(fan_in)


_SHIFTS: dict = {}


def _shift_bits(words: torch.Tensor, n: int) -> torch.Tensor:
    """The first ``n`` bits of each row of ``words`` (``[R, W]`` int64) as uint8 0/1 ``[R, n]``, least
    significant bit of each byte first, bytes in memory order, by PyTorch's shifts (any device; on CPU
    :func:`hpstrat_lite.kernels.unpack_bits` gives the same bits in one pass)."""
    dev = str(words.device)
    if dev not in _SHIFTS:
        _SHIFTS[dev] = torch.arange(8, dtype=torch.uint8, device=words.device)
    bits = torch.bitwise_right_shift(words.contiguous().view(torch.uint8).unsqueeze(-1), _SHIFTS[dev])
    return bits.bitwise_and_(1).view(words.shape[0], -1)[:, :n].contiguous()


class RunRandom:
    """Per-run dropout masks: run ``r`` draws from its own generator, so its masks do not depend on
    which other runs share the batch.

    Parameters
    ----------
    seeds : sequence of int
        One seed per run (the dropout seed is derived from it with :func:`run_seeds`).
    device : torch.device
        Where the masks are drawn (a CUDA generator on GPU).
    """

    def __init__(self, seeds, device):
        self.device = torch.device(device)
        self.gens = [torch.Generator(device=self.device).manual_seed(run_seeds(s)[1]) for s in seeds]
        self._ahead: list = []  # masks drawn by peek(), not yet taken by keep()
        self._states_before_ahead = None

    def peek(self, shape, p: float) -> torch.Tensor:
        """Draw the next :meth:`keep` mask now: the next ``keep(shape, p)`` returns this very tensor, so each
        generator's sequence of draws is unchanged (GAT's evaluation pass computes the next training step's
        first attention layer with it, :func:`hpstrat_lite.kernels.gat_aggregate_ahead`)."""
        if not self._ahead:
            self._states_before_ahead = [g.get_state() for g in self.gens]
        mask = self._draw(shape, p)
        self._ahead.append((tuple(shape), p, mask))
        return mask

    def keep(self, shape, p: float) -> torch.Tensor:
        """Keep-mask ``[R, *shape]`` of 0/1 (uint8): 1 with probability ``1 - p``.

        The dropout scale ``1 / (1 - p)`` is not applied here: the models fold it into the linear map
        that follows each dropout (a small weight tensor), so dropout is one pass over the activations.
        ``p = 0.5`` uses one random bit per entry (fast path); other ``p`` compare a uniform draw.
        Run r's mask comes from run r's generator only.
        """
        if self._ahead:
            want, p_ahead, mask = self._ahead.pop(0)
            if want != tuple(shape) or p_ahead != p:
                raise RuntimeError(f"keep({tuple(shape)}, {p}) after peek({want}, {p_ahead}): masks drawn ahead "
                                   "must be taken in the order they were drawn.")
            return mask
        return self._draw(shape, p)

    def _draw(self, shape, p: float) -> torch.Tensor:
        n, runs = math.prod(shape), len(self.gens)
        if p == 0.5:  # one random bit per entry: 64 per draw of run r's generator
            words = torch.empty(runs, (n + 63) // 64, dtype=torch.int64, device=self.device)
            for r, g in enumerate(self.gens):
                torch.randint(-2 ** 63, 2 ** 63 - 1, words.shape[1:], dtype=torch.int64, generator=g, out=words[r])
            if self.device.type == "cpu":
                from .kernels import unpack_bits

                return unpack_bits(words, n).view(runs, *shape)
            return _shift_bits(words, n).view(runs, *shape)
        out = torch.empty(runs, n, dtype=torch.uint8, device=self.device)
        for r, g in enumerate(self.gens):
            torch.ge(torch.rand(n, generator=g, device=self.device), p, out=out[r])
        return out.view(runs, *shape)

    def subset(self, index) -> None:
        """Keep the runs ``index`` (a list of positions): their generators and masks drawn ahead."""
        self.gens = [self.gens[i] for i in index]
        idx = torch.as_tensor(index, dtype=torch.long, device=self.device)
        self._ahead = [(shape, p, mask.index_select(0, idx)) for shape, p, mask in self._ahead]
        if self._states_before_ahead is not None:
            self._states_before_ahead = [self._states_before_ahead[i] for i in index]

    def states(self) -> list:
        """Each generator's state as it was before the masks drawn ahead and not yet taken (what a
        checkpoint saves: a resumed batch draws those masks again, the same bits)."""
        if self._ahead:
            return [s.clone() for s in self._states_before_ahead]
        return [g.get_state() for g in self.gens]


# ----------------------------------------------------------------------------------------------
# Batched models
# ----------------------------------------------------------------------------------------------

def _apply_keep(h: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """``h * keep`` (uint8 0/1 mask of ``h``'s shape): one fused loop on CPU (:mod:`hpstrat_lite.kernels`)."""
    from .kernels import apply_keep_mask

    return apply_keep_mask(h, keep)


#: Precisions of the dense matrix products (:func:`matmul_precision`).
PRECISIONS = ("float32", "bfloat16")
_MATMUL_DTYPE = None  # None: float32 products; torch.bfloat16 inside matmul_precision("bfloat16")


def check_precision(precision) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else a ValueError naming them."""
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}; got {precision!r}.")
    return precision


#: CPU flags (``/proc/cpuinfo``) of native bfloat16 matrix arithmetic: AMX tiles or AVX-512 BF16.
BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")


def native_bfloat16(device="cpu", flags=None) -> bool:
    """Whether ``device`` multiplies bfloat16 matrices natively: any CUDA device, or a CPU with one of
    :data:`BF16_CPU_FLAGS`. Without them PyTorch emulates bfloat16 GEMMs, far slower than float32 (on an
    AVX2-only AMD EPYC host of this project: 2 GFLOP/s against 42 GFLOP/s for ``[5, 13752, 256] x
    [5, 256, 256]`` on two threads), so ``precision="bfloat16"`` only pays where this is True."""
    if torch.device(device).type == "cuda":
        return True
    flags = cpu_flags() if flags is None else set(flags)
    return any(f in flags for f in BF16_CPU_FLAGS)


@contextlib.contextmanager
def matmul_precision(precision: str = "float32"):
    """Run the dense matrix products of the models (and of :class:`hpstrat_lite.train.Features`) in
    ``precision`` inside the block: ``"float32"`` (the default, exact reference) or ``"bfloat16"``
    (operands rounded to bfloat16, products accumulated in float32 and returned as float32, except
    the hidden activations of an MLP stack, which stay bfloat16 until its last product; gradients flow
    through the same bfloat16 products). Sparse products are unaffected."""
    global _MATMUL_DTYPE
    old = _MATMUL_DTYPE
    _MATMUL_DTYPE = None if check_precision(precision) == "float32" else torch.bfloat16
    try:
        yield
    finally:
        _MATMUL_DTYPE = old


def lowp(t: torch.Tensor) -> torch.Tensor:
    """``t`` as the operand of a dense product under :func:`matmul_precision` (unchanged in float32)."""
    return t if _MATMUL_DTYPE is None else t.to(_MATMUL_DTYPE)


def _bmm(h: torch.Tensor, w: torch.Tensor, lowp_out: bool = False) -> torch.Tensor:
    """``torch.bmm(h, w)`` in the current :func:`matmul_precision`: float32, or left in bfloat16 with
    ``lowp_out``."""
    if _MATMUL_DTYPE is None:
        return torch.bmm(h, w)
    out = torch.bmm(lowp(h), lowp(w))
    return out if lowp_out else out.float()


def _blin(h: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None, lowp_out: bool = False) -> torch.Tensor:
    """Per-run linear map ``h @ w[r].T (+ b[r])``: ``h`` ``[R, N, i]``, ``w`` ``[R, o, i]`` (torch.nn.Linear
    layout, which MKL's batched GEMM handles about twice as fast as ``[R, i, o]`` for few outputs).
    Under :func:`matmul_precision` ``"bfloat16"`` the result is float32, or bfloat16 with ``lowp_out``
    (a hidden activation that only feeds the next product: half the memory traffic, no casts)."""
    if _MATMUL_DTYPE is not None:
        out = _bmm(h, w.transpose(1, 2), lowp_out)
        return out if b is None else out.add_(b.to(out.dtype))
    if b is None:
        return torch.bmm(h, w.transpose(1, 2))
    return torch.baddbmm(b, h, w.transpose(1, 2))


class BatchedModel(nn.Module):
    """Base class: R runs of one architecture with stacked parameters (run axis first).

    A forward pass is split in two: :meth:`trunk` maps the input projection ``xw = X @ W_in[r]``
    (``[R, N, in_cols]``; ``[in_blocks, R, N, in_cols]`` when ``W_in`` has several column blocks, as
    SAGE's ``W_l | W_r`` and MixHop's ``W_0 | W_1 | W_2``) to the activations just before the first
    dropout, which do not depend on the dropout masks, and :meth:`head` maps them to logits
    ``[R, N, C]`` (``rnd``: a
    :class:`RunRandom` in training mode, ``None`` in evaluation mode). The training loop computes
    the trunk once per epoch and uses it for both the evaluation of epoch t and the training step of
    epoch t + 1.

    Subclasses create their parameters in ``__init__`` through :meth:`_input`, :meth:`_weight` and
    :meth:`_bias` (each run's values come from its own generator, in creation order).

    Attributes
    ----------
    w_in : torch.nn.Parameter
        ``[R, F, in_blocks * in_cols]``, the weights applied to the raw features.
    no_decay : set
        Parameter names trained without weight decay.
    """

    def __init__(self, seeds, in_dim: int, num_classes: int, hidden: int, num_layers: int, dropout: float,
                 ops: dict):
        super().__init__()
        self.R, self.in_dim, self.num_classes = len(seeds), int(in_dim), int(num_classes)
        self.hidden, self.num_layers, self.p = int(hidden), int(num_layers), float(dropout)
        self.ops = ops
        self.no_decay: set = set()
        self._init = _RunInit(seeds)
        #: :class:`RunRows` of the runs, set by the training loop (None: every row is computed)
        self.rows: RunRows | None = None
        #: the batch's :class:`RunRandom` while the training loop evaluates: a model may draw the next
        #: training step's first mask from it ahead (GAT on CPU), None otherwise
        self.lookahead: RunRandom | None = None
        #: work an evaluation pass prepared for the next training step (GAT on CPU), or None
        self.ahead = None

    def forward(self, xw, rnd=None):
        return self.head(self.trunk(xw), rnd)

    # parameter factories -------------------------------------------------------------------
    def _param(self, name: str, value: torch.Tensor, decay: bool = True):
        self.register_parameter(name, nn.Parameter(value))
        if not decay:
            self.no_decay.add(name)

    def _input(self, blocks):
        """``w_in`` ``[R, F, B * width]``: B blocks ``(width, bound)`` of equal width drawn one after the other."""
        self._param("w_in", torch.cat([self._init.uniform((self.in_dim, w), b) for w, b in blocks], dim=2))
        self.in_blocks, self.in_cols = len(blocks), blocks[0][0]

    def _weight(self, name, fan_in, fan_out, bound, blocks: int = 1):
        """``[R, blocks * fan_out, fan_in]``: ``blocks`` weight matrices drawn one after the other."""
        ws = [self._init.uniform((fan_in, fan_out), bound) for _ in range(blocks)]
        self._param(name, torch.cat(ws, dim=2).transpose(1, 2).contiguous())

    def _bias(self, name, width, bound=0.0):
        value = self._init.uniform((width,), bound) if bound else torch.zeros(self.R, width)
        self._param(name, value[:, None, :])  # [R, 1, width]: broadcasts over nodes

    # dropout ---------------------------------------------------------------------------------
    def drop(self, h: torch.Tensor, rnd) -> torch.Tensor:
        """``h`` times each run's own 0/1 keep-mask (identity in evaluation mode); the ``1 / (1 - p)``
        scale is applied by :meth:`scaled` to the weights of the linear map that follows."""
        if rnd is None or self.p == 0.0:
            return h
        return _apply_keep(h, rnd.keep(h.shape[1:], self.p))

    def scaled(self, name: str, rnd) -> torch.Tensor:
        """Weight ``name`` times the dropout scale ``1 / (1 - p)`` in training mode:
        :math:`(h \\odot m / (1-p)) W^\\top = (h \\odot m) (W / (1-p))^\\top`."""
        w = getattr(self, name)
        return w if rnd is None or self.p == 0.0 else w * (1.0 / (1.0 - self.p))

    def _mlp_tail(self, h, rnd, start: int):
        """Layers ``start..L-1`` of an MLP whose ``h`` is already activated: dropout, linear, ReLU."""
        for i in range(start, self.num_layers):
            hidden = i < self.num_layers - 1  # under bfloat16 the hidden activations stay bfloat16
            h = _blin(self.drop(h, rnd), self.scaled(f"w{i}", rnd), getattr(self, f"b{i}"), lowp_out=hidden)
            if hidden:
                h = F.relu(h)
        return h

    def _make_mlp(self, out_dim):
        """Linear layers ``in -> hidden ... -> out_dim`` (torch.nn.Linear init), the first one as ``w_in``."""
        dims = [self.in_dim] + [self.hidden] * (self.num_layers - 1) + [out_dim]
        self._input([(dims[1], _kaiming(dims[0]))])
        self._bias("b0", dims[1], _kaiming(dims[0]))
        for i in range(1, self.num_layers):
            self._weight(f"w{i}", dims[i], dims[i + 1], _kaiming(dims[i]))
            self._bias(f"b{i}", dims[i + 1], _kaiming(dims[i]))

    def _mlp_trunk(self, xw):
        h = xw.add_(self.b0)  # in place: xw is a fresh product, and each new [R, N, d] tensor costs page faults
        return lowp(h.relu_()) if self.num_layers > 1 else h  # lowp: the next product's operand, made once


class MLP(BatchedModel):
    """Feature-only MLP: ``num_layers`` linear layers with ReLU and dropout in between."""

    def __init__(self, *args):
        super().__init__(*args)
        self._make_mlp(self.num_classes)

    def trunk(self, xw):
        return self._mlp_trunk(xw)

    def head(self, h, rnd=None):
        return self._mlp_tail(h, rnd, 1)


class GCN(BatchedModel):
    """GCNConv stack: :math:`H^{(l+1)} = \\hat A H^{(l)} W^{(l)} + b^{(l)}`, ReLU and dropout in between."""

    def __init__(self, *args):
        super().__init__(*args)
        dims = [self.in_dim] + [self.hidden] * (self.num_layers - 1) + [self.num_classes]
        self._input([(dims[1], _glorot(dims[0], dims[1]))])
        self._bias("b0", dims[1])
        for i in range(1, self.num_layers):
            self._weight(f"w{i}", dims[i], dims[i + 1], _glorot(dims[i], dims[i + 1]))
            self._bias(f"b{i}", dims[i + 1])

    def trunk(self, xw):
        h = (self.ops["gcn"] @ xw).add_(self.b0)
        return h.relu_() if self.num_layers > 1 else h

    def head(self, h, rnd=None):
        a = self.ops["gcn"]
        for i in range(1, self.num_layers):
            h = a @ _blin(self.drop(h, rnd), self.scaled(f"w{i}", rnd)) + getattr(self, f"b{i}")
            if i < self.num_layers - 1:
                h = F.relu(h)
        return h


class GraphSAGE(BatchedModel):
    """SAGEConv (mean) stack: :math:`h_i' = W_l \\mathrm{mean}_{j \\in N(i)} h_j + b + W_r h_i`."""

    def __init__(self, *args):
        super().__init__(*args)
        dims = [self.in_dim] + [self.hidden] * (self.num_layers - 1) + [self.num_classes]
        self.dims = dims
        b = _kaiming(dims[0])
        self._input([(dims[1], b), (dims[1], b)])  # [W_l | W_r]
        self._bias("b0", dims[1], b)
        for i in range(1, self.num_layers):
            b = _kaiming(dims[i])
            self._weight(f"w{i}", dims[i], dims[i + 1], b, blocks=2)  # [W_l | W_r]
            self._bias(f"b{i}", dims[i + 1], b)

    def _conv(self, z, o, bias):
        return (self.ops["mean"] @ z[..., :o]).add_(z[..., o:]).add_(bias)

    def trunk(self, xw):
        h = (self.ops["mean"] @ xw[0]).add_(xw[1]).add_(self.b0)  # xw: [2, R, N, h] = X W_l | X W_r
        return h.relu_() if self.num_layers > 1 else h

    def head(self, h, rnd=None):
        for i in range(1, self.num_layers):
            z = _blin(self.drop(h, rnd), self.scaled(f"w{i}", rnd))
            h = self._conv(z, self.dims[i + 1], getattr(self, f"b{i}"))
            if i < self.num_layers - 1:
                h = F.relu(h)
        return h


#: GAT on CPU: the evaluation pass also computes the next training step's first attention layer
#: (:func:`hpstrat_lite.kernels.gat_aggregate_ahead`); the same numbers either way (tested)
GAT_AHEAD = True


class GAT(BatchedModel):
    """GATConv stack (Velickovic et al. 2018): hidden layers with 8 heads of ``hidden // 8`` channels
    (concatenated, ELU), output layer with 1 head.

    Per run r and head k: :math:`e_{ij} = \\mathrm{LeakyReLU}_{0.2}(a_{src}^\\top W h_j + a_{dst}^\\top W h_i)`,
    :math:`\\alpha_{ij} = \\mathrm{softmax}_{j \\in N(i) \\cup \\{i\\}}(e_{ij})` (dropout on
    :math:`\\alpha`), :math:`h_i' = \\sum_j \\alpha_{ij} W h_j + b`. On CPU each layer's attention for all
    R x heads blocks is one fused kernel (:class:`hpstrat_lite.kernels.GATAggregate`); on CUDA the
    attention maps are one ``[R, heads, E]`` tensor applied as one block-diagonal sparse matmul
    (:class:`_AttentionSpMM`).
    """

    def __init__(self, *args):
        super().__init__(*args)
        if self.num_layers > 1 and self.hidden % GAT_HEADS:
            raise ValueError(f"hidden={self.hidden} must be divisible by the {GAT_HEADS} GAT heads.")
        self.shape = []  # (heads, channels per head) per layer
        fan_in = self.in_dim
        for i in range(self.num_layers):
            last = i == self.num_layers - 1
            heads, ch = (1, self.num_classes) if last else (GAT_HEADS, self.hidden // GAT_HEADS)
            bound = _glorot(fan_in, heads * ch)
            if i == 0:
                self._input([(heads * ch, bound)])
            else:
                self._weight(f"w{i}", fan_in, heads * ch, bound)
            self._param(f"att_src{i}", self._init.uniform((1, heads, ch), _glorot(heads, ch)))
            self._param(f"att_dst{i}", self._init.uniform((1, heads, ch), _glorot(heads, ch)))
            self._bias(f"b{i}", heads * ch)
            self.shape.append((heads, ch))
            fan_in = heads * ch

    def _scores(self, xw, i):
        """Attention inputs of layer ``i`` from its projected features ``xw`` ``[R, N, H*C]``.

        On CPU: ``(x [R, N, H, C], a_src [R, N, H], a_dst [R, N, H])`` for the fused kernel
        (:class:`hpstrat_lite.kernels.GATAggregate`); the per-head dot products
        :math:`a^\\top W h` are one batched GEMM with a block-diagonal ``[H*C, 2H]`` matrix.
        On CUDA: unnormalised attention :math:`w_{ij} = \\exp(e_{ij} - \\max_k e_{ik})` ``[R, H, E]``,
        its per-target sums ``[R, H, N]`` (>= 1: the max term is exp(0)) and the features
        ``[R*H, N, C]``; maxima and sums are CSR segment reductions over the edges sorted by target."""
        graph = self.ops["gat"]
        R, n = xw.shape[:2]
        heads, ch = self.shape[i]
        att = torch.cat([getattr(self, f"att_src{i}"), getattr(self, f"att_dst{i}")], 1).view(R, 2, heads, ch)
        if FUSED_ATTENTION and not xw.is_cuda:
            eye = torch.eye(heads, dtype=xw.dtype)
            block = (att[:, :, :, :, None] * eye[None, None, :, None, :])  # [R, 2, H, C, H]
            a = _bmm(xw, block.permute(0, 2, 3, 1, 4).reshape(R, heads * ch, 2 * heads))  # [R, N, 2H]
            a = a.view(R, n, 2, heads)
            return xw.view(R, n, heads, ch), a[:, :, 0].contiguous(), a[:, :, 1].contiguous()
        x = xw.view(R, n, heads, ch).transpose(1, 2)  # [R, H, N, C]
        a_src = (x * att[:, 0].view(R, heads, 1, ch)).sum(-1)  # [R, H, N]
        a_dst = (x * att[:, 1].view(R, heads, 1, ch)).sum(-1)
        e = F.leaky_relu(a_src.index_select(2, graph.src) + a_dst.index_select(2, graph.dst), 0.2)
        offsets = graph.offsets(R, heads)
        top = torch.segment_reduce(e.detach(), "max", offsets=offsets, axis=2)
        w = torch.exp(e - top.index_select(2, graph.dst))
        total = torch.segment_reduce(w, "sum", offsets=offsets, axis=2)
        return w, total, x.reshape(R * heads, n, ch)

    def _aggregate(self, scores, i, rnd):
        """:math:`h_i' = \\sum_j d_{ij} w_{ij} x_j / ((1-p) \\sum_j w_{ij})` with dropout mask d: dropout on
        the softmax :math:`\\alpha`, normalised after aggregation. The bias :math:`b_i` is added by the caller
        (:meth:`_activate` for hidden layers, fused with ELU and dropout)."""
        dropping = rnd is not None and self.p > 0
        if scores[0].dim() == 4:  # CPU: fused kernel
            from .kernels import GATAggregate, gat_aggregate_ahead

            x, a_src, a_dst = scores
            R, n, heads, ch = x.shape
            shape, scale = (heads, self.ops["gat"].num_edges), (1.0 / (1.0 - self.p) if self.p > 0 else 1.0)
            if i == 0 and rnd is None and self.lookahead is not None and self.p > 0 and GAT_AHEAD:
                # evaluation while training: the next step's first layer from the same pass over the edges
                keep = self.lookahead.peek(shape, self.p)
                out, self.ahead = gat_aggregate_ahead(x, a_src, a_dst, keep, scale, self.ops["gat"])
                return out.view(R, n, heads * ch)
            keep = rnd.keep(shape, self.p) if dropping else None
            prepared = None
            if i == 0 and dropping:  # a training step takes what the last evaluation prepared, once
                prepared, self.ahead = self.ahead, None
            out = GATAggregate.apply(x, a_src, a_dst, keep, scale if dropping else 1.0, self.ops["gat"], prepared)
            return out.view(R, n, heads * ch)
        w, total, x = scores
        R, heads, n = total.shape
        if dropping:
            w = w * rnd.keep(w.shape[1:], self.p)
            total = total * (1.0 - self.p)
        out = _AttentionSpMM.apply(w.reshape(R * heads, -1), x, self.ops["gat"])
        out = out.view(R, heads, n, -1) / total.unsqueeze(-1)
        return out.transpose(1, 2).reshape(R, n, -1)

    def _activate(self, h, i, rnd):
        """:math:`\\mathrm{ELU}(h + b_i)`, then dropout: one fused op on CPU
        (:func:`hpstrat_lite.kernels.bias_elu_keep`)."""
        from .kernels import bias_elu_keep

        keep = rnd.keep(h.shape[1:], self.p) if rnd is not None and self.p > 0 else None
        return bias_elu_keep(h, getattr(self, f"b{i}"), keep)

    def trunk(self, xw):
        return self._scores(xw, 0)

    def head(self, scores, rnd=None):
        h = self._aggregate(scores, 0, rnd)
        for i in range(1, self.num_layers):
            z = _blin(self._activate(h, i - 1, rnd), self.scaled(f"w{i}", rnd))
            h = self._aggregate(self._scores(z, i), i, rnd)
        return h + getattr(self, f"b{self.num_layers - 1}")


class MixHop(BatchedModel):
    """``num_layers`` MixHopConv layers (powers {0, 1, 2}, ``hidden`` channels per power, ReLU,
    dropout) and a linear classifier on the last ``3 * hidden`` channels:
    :math:`H' = \\Vert_{p \\in \\{0,1,2\\}} \\hat A^p H W_p + b`. With two layers: MixHopConv(F, 64) ->
    ReLU -> dropout -> MixHopConv(192, 64) -> ReLU -> dropout -> Linear(192, C): the layer stack of
    PyG's ``examples/mixhop.py`` (MixHop layers, then a linear classifier), without its batch norm and
    input dropout, and with the ReLU of the MixHop paper, which the example leaves out."""

    def __init__(self, *args):
        super().__init__(*args)
        hp, P = self.hidden, len(MIXHOP_POWERS)
        fan_in = self.in_dim
        for i in range(self.num_layers):
            blocks = [(hp, _kaiming(fan_in)) for _ in MIXHOP_POWERS]  # PyG Linear default init
            if i == 0:
                self._input(blocks)
            else:
                self._weight(f"w{i}", fan_in, hp, _kaiming(fan_in), blocks=P)
            self._bias(f"b{i}", P * hp)
            fan_in = P * hp
        self._weight("w_out", fan_in, self.num_classes, _kaiming(fan_in))
        self._bias("b_out", self.num_classes, _kaiming(fan_in))

    def _hops(self, z, i):
        """Blocks ``(H W_0, H W_1, H W_2)`` (three ``[R, N, h]`` tensors) -> ``(H W_0, A H W_1, A^2 H W_2) + b``,
        ReLU. The power blocks stay separate tensors throughout (no slicing of one stacked tensor, whose
        backward would fill a full-size zero gradient per slice)."""
        a = self.ops["gcn"]
        hp = z[0].shape[-1]
        bias = getattr(self, f"b{i}")  # [R, 1, 3h]
        hops = [z[0], a @ z[1], a @ (a @ z[2])]
        out = [(hops[0] + bias[..., :hp]).relu()]  # z[0] may be a view of the projection: not in place
        out += [h.add_(bias[..., p * hp:(p + 1) * hp]).relu_() for p, h in enumerate(hops) if p > 0]
        return tuple(out)

    def _linear(self, h, w, b=None):
        """Power blocks ``h`` (three ``[R, N, h]``) times per-run ``w`` ``[R, o, 3h]`` -> ``[R, N, o]``."""
        hp = h[0].shape[-1]
        out = _blin(h[0], w[:, :, :hp], b)
        for p in range(1, len(h)):
            wp = w[:, :, p * hp:(p + 1) * hp].transpose(1, 2)
            out = torch.baddbmm(out, h[p], wp) if _MATMUL_DTYPE is None else out + _bmm(h[p], wp)
        return out

    def trunk(self, xw):
        return self._hops(xw.unbind(0), 0)

    def drop(self, h, rnd):
        if rnd is None or self.p == 0.0:
            return h
        keep = rnd.keep((len(h),) + h[0].shape[1:], self.p)  # [R, 3, N, h]: one mask per run
        return tuple(_apply_keep(t, keep[:, p]) for p, t in enumerate(h))

    def head(self, h, rnd=None):
        for i in range(1, self.num_layers):
            z = self._linear(self.drop(h, rnd), self.scaled(f"w{i}", rnd))  # [R, N, 3h]
            R, n, _ = z.shape
            h = self._hops([t.contiguous() for t in z.view(R, n, len(h), -1).unbind(2)], i)
        return self._linear(self.drop(h, rnd), self.scaled("w_out", rnd), self.b_out)


class APPNP(MLP):
    """MLP then personalised-PageRank propagation, K = 10, alpha = 0.1 (Gasteiger et al. 2019)."""

    def head(self, h, rnd=None):
        a = self.ops["gcn"]
        z0 = super().head(h, rnd)
        z = z0
        for _ in range(APPNP_K):
            z = torch.add(APPNP_ALPHA * z0, a @ z, alpha=1 - APPNP_ALPHA)
        return z


class GPRGNN(MLP):
    """MLP then generalised PageRank :math:`Z = \\sum_{k=0}^{K} \\gamma_k \\hat A^k H`, K = 10, with
    learnable per-run :math:`\\gamma` (PPR init, alpha = 0.1; no weight decay), Chien et al. 2021."""

    def __init__(self, *args):
        super().__init__(*args)
        k = torch.arange(GPRGNN_K + 1, dtype=torch.float64)
        gamma = GPRGNN_ALPHA * (1 - GPRGNN_ALPHA) ** k
        gamma[-1] = (1 - GPRGNN_ALPHA) ** GPRGNN_K
        self._param("gamma", gamma.float().repeat(self.R, 1)[:, :, None, None], decay=False)  # [R, K+1, 1, 1]

    def head(self, h, rnd=None):
        a = self.ops["gcn"]
        z = super().head(h, rnd)
        out = z * self.gamma[:, 0]
        for k in range(1, GPRGNN_K + 1):
            z = a @ z
            out = out + z * self.gamma[:, k]
        return out


class H2GCN(BatchedModel):
    """H2GCN-2 (Zhu et al. 2020): ego embedding, ``num_layers`` rounds of separate exact 1-hop and
    2-hop aggregation (no self loops, no non-linearity), concatenation of all intermediate
    representations, dropout, linear classifier. Everything before the dropout is the trunk, so the
    2-hop products run once per epoch."""

    def __init__(self, *args):
        super().__init__(*args)
        b = _kaiming(self.in_dim)
        self._input([(self.hidden, b)])
        self._bias("b0", self.hidden, b)
        width = self.hidden * (2 ** (self.num_layers + 1) - 1)
        self._weight("w_out", width, self.num_classes, _kaiming(width))
        self._bias("b_out", self.num_classes, _kaiming(width))

    def trunk(self, xw):
        """Round t maps :math:`r_{t-1}` to :math:`r_t = [A_1 r_{t-1} \\Vert A_2 r_{t-1}]`; the products run on
        the ``hidden``-wide pieces of :math:`r_{t-1}` (``[R, N, 64]`` each, contiguous) rather than on the
        concatenation, which is the same matrix column for column (bit-identical) but keeps each sparse
        product's operand narrow: on Amazon-Computers' 2-hop matrix one 128-wide product costs 1.2-1.5x
        more than two 64-wide ones (``benchmarks/bench_spmm.py``)."""
        a1, a2 = self.ops["hop1"], self.ops["hop2"]
        r = xw.add_(self.b0).relu_()
        pieces = [r]
        reps = [r]
        for t in range(self.num_layers):
            # the last round feeds only the classifier: its rows are computed where a run reads them
            rows = self.rows if t == self.num_layers - 1 else None
            pieces = [a1.select(p, rows) for p in pieces] + [a2.select(p, rows) for p in pieces]
            reps.extend(pieces)
        return torch.cat(reps, dim=2)

    def head(self, h, rnd=None):
        return _blin(self.drop(h, rnd), self.scaled("w_out", rnd), self.b_out)


_CLASSES = {"MLP": MLP, "GCN": GCN, "GAT": GAT, "GraphSAGE": GraphSAGE, "MixHop": MixHop, "APPNP": APPNP,
            "H2GCN": H2GCN, "GPRGNN": GPRGNN}


def check_model(model) -> str:
    """The name in :data:`MODELS` that ``model`` matches, case-insensitively and ignoring ``-``/``_``
    (``"gcn"`` -> ``"GCN"``, ``"GPR-GNN"`` -> ``"GPRGNN"``); a ValueError listing them otherwise."""
    key = model.lower().replace("-", "").replace("_", "") if isinstance(model, str) else None
    for name in MODELS:
        if name.lower() == key:
            return name
    raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}.")


def build_model(model: str, seeds, in_dim: int, num_classes: int, ops: dict, *, hidden: int = 64,
                num_layers: int = 2, dropout: float = 0.5) -> BatchedModel:
    """A batched ``model`` with one run per seed (weights drawn from each run's own generator).

    Parameters
    ----------
    model : str
        One of :data:`MODELS`.
    seeds : sequence of int
        One seed per run.
    in_dim, num_classes : int
        Feature and class counts.
    ops : dict
        The graph operators from :func:`graph_operators` (already on the training device).
    hidden, num_layers, dropout
        Width, depth (message-passing layers; MLP/APPNP/GPRGNN: linear layers; H2GCN: rounds) and
        dropout probability.
    """
    return _CLASSES[check_model(model)](list(seeds), in_dim, num_classes, hidden, num_layers, dropout, ops)
