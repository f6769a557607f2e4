"""Sparse graph operators of the batched models: one autograd op propagates every run at once.

:class:`SparseOp` holds a graph's normalised adjacency as CSR (and its transpose for the backward
pass); its product with ``[R, N, d]`` hidden states of R runs is one CSR matmul on the ``[N, R * d]``
channel stack for narrow states and one cache-sized matmul per run for wide ones. GCN's
:math:`\\hat A = D^{-1/2}(A+I)D^{-1/2}` (:func:`gcn_operator`), GraphSAGE's mean (:func:`mean_operator`),
H2GCN's exact 1-hop and 2-hop neighbourhoods (:func:`two_hop_operator`) and GAT's attention graph
(:class:`AttentionGraph`) are built here; :func:`graph_operators` gives the operators a model needs.
"""
from __future__ import annotations

import functools
import warnings
import weakref

import numpy as np
import torch

from .kernels import csr_arrays, project, spmm, spmm_select, spmm_t


#: Sparse products on CPU with the numba kernel :func:`hpstrat_lite.engine.kernels.spmm` (``torch.mm`` if False).
NUMBA_SPMM = True
#: Products whose output only the runs' training and validation rows read (H2GCN's last round) compute
#: those rows only, with the same floats (:class:`RunRows`); False computes every row (tests, benchmarks).
SELECT_ROWS = True
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
    does not. Narrow inputs (logits: at most :data:`_NARROW_COLUMNS` per run, or :data:`_STACK_COLUMNS`
    in all) use one product on the stack: a row of a few floats per run costs an index lookup each, so
    there the per-run kernel spends its time on indices rather than arithmetic. On CPU the products are
    :func:`hpstrat_lite.engine.kernels.spmm` (faster than PyTorch's CSR matmul), on CUDA ``torch.mm``.
    Figures: ``benchmarks/README.md``, ``bench_spmm.py``.
    """
    R, n, d = h.shape
    if 1 < R and (R * d <= _STACK_COLUMNS or d <= _NARROW_COLUMNS):
        out = _bmm_sparse(a, h.transpose(0, 1).reshape(1, n, R * d))
        return out.view(a.shape[0], R, d).transpose(0, 1).contiguous()
    if NUMBA_SPMM and h.device.type == "cpu":
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
    ``[R, N, c]`` slab), and ``X^T @ G[b, r]`` in the backward pass. On CPU one pass over X's rows sums every
    run and block at once (:func:`hpstrat_lite.engine.kernels.project`); on CUDA one sparse product per run
    and block (:func:`_bmm_sparse` on the ``B * R`` blocks)."""

    @staticmethod
    def forward(ctx, a, a_t, w, blocks):
        runs, n_in, width = w.shape
        c = width // blocks
        ctx.a, ctx.a_t = a, a_t
        if NUMBA_SPMM and w.device.type == "cpu" and w.dtype == torch.float32:
            return project(csr_arrays(a), a.shape, w, blocks=blocks)
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

    On CPU, with at least two runs per thread and wide rows, :func:`hpstrat_lite.engine.kernels.spmm_t` scatters
    from ``a``'s rows, parallel over runs (the same floats; each thread owns whole runs, so the scatter never
    races, and the rows of ``g`` stream in order); otherwise :func:`_bmm_sparse` on ``a_t``."""
    R, _, d = g.shape
    if NUMBA_SPMM and g.device.type == "cpu" and d > _NARROW_COLUMNS and R >= 2 * torch.get_num_threads():
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
    (k = 4 folds: train 2, validation 1, test 1). The final test pass uses the full products. GAT's output
    layer, whose input differs between a training step and the evaluation (dropout), takes :attr:`training`
    in the one and :attr:`validation` in the other.

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
        return _row_lists(self.need[self.runs])

    @functools.cached_property
    def training(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, rows_ptr)``: the rows the current runs train on (``live``), as :attr:`needed` lists rows: the
        only output rows a training step's loss reads."""
        return _row_lists(self.live[self.runs])

    @functools.cached_property
    def validation(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, rows_ptr)``: the needed rows the current runs do not train on (their validation rows): the
        only output rows the evaluation of early stopping reads."""
        return _row_lists(self.need[self.runs] & ~self.live[self.runs])

    @functools.cached_property
    def every(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, rows_ptr)`` listing every row for each current run."""
        R, n = len(self.runs), self.need.shape[1]
        return np.tile(np.arange(n, dtype=np.int64), R), np.arange(R + 1, dtype=np.int64) * n

    def filtered(self, matrix: torch.Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(crow [R, n + 1], col, val)``: for each current run, ``matrix`` (CPU CSR) without the entries
        of columns that are not live, in :func:`hpstrat_lite.engine.kernels.spmm_select`'s layout."""
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


def _row_lists(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, rows_ptr)`` of a ``[R, N]`` boolean mask: run r's true rows are ``rows[rows_ptr[r]:rows_ptr[r + 1]]``,
    increasing (int64)."""
    return np.nonzero(mask)[1].astype(np.int64), np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(np.int64)


class _SelectSpMM(torch.autograd.Function):
    """``A @ H[r]`` at the rows ``rows`` (a :class:`RunRows`) needs, zero elsewhere; the backward pass
    multiplies by ``A^T`` without the columns of rows whose gradient is zero (not live)."""

    @staticmethod
    def forward(ctx, a, a_t, rows, h):
        ctx.a_t, ctx.rows = a_t, rows
        crow, col, val = csr_arrays(a)
        need, need_ptr = rows.needed
        crow = np.broadcast_to(crow.astype(np.int64), (h.shape[0], len(crow)))
        return spmm_select(crow, col, val, h, need, need_ptr, a.shape[0])

    @staticmethod
    def backward(ctx, grad):
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


def gcn_operator(data, device, *, self_loops: bool = True) -> SparseOp:
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


def two_hop_operator(data, device, *, factor_share: float | None = None):
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
        :mod:`hpstrat_lite.engine.kernels`."""
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


