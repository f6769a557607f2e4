"""The eight node classifiers of the HpStrat experiment, written so that R independent runs train as one.

A *batched* model holds the parameters of R runs of the same architecture, stacked along a run axis
(first), and computes the logits of all of them in one forward pass: hidden states are ``[R, N, d]``,
each sparse propagation is one autograd op over all runs (:class:`SparseOp`: one CSR matmul on the
``[N, R * d]`` channel stack for narrow states, one cache-sized CSR matmul per run for wide ones,
which is faster on a memory-bound CPU), GAT's R x heads attention maps are one fused numba kernel
per layer on CPU (:mod:`hpstrat_lite.engine.kernels`) and one block-diagonal sparse matmul on CUDA, and
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
for bag-of-words features); the training loop (:mod:`hpstrat_lite.engine.train`) computes it and the
model's :meth:`~BatchedModel.trunk` (everything before the first dropout; GCN and GraphSAGE stop before the
ReLU that precedes it, which the head fuses with the dropout) once per epoch.

Mixed precision (``precision="bfloat16"``, see :func:`matmul_precision`): the dense matrix products
(the per-run linear layers, a dense feature matrix's input projection, GAT's attention scores,
MixHop's power blocks) take bfloat16 operands and accumulate in float32, and an MLP's hidden
activations stay bfloat16 between its products, while parameters, optimiser state, sparse propagation
and losses stay float32 -- the usual mixed-precision training. On CPUs with AMX tiles (Intel Sapphire
Rapids and later) these products run natively in bfloat16 and several times faster than in float32
(``benchmarks/README.md``, ``bench_precision.py``); bfloat16 keeps 8 significant bits, so numbers
differ from float32 training at the level of run-to-run noise, not bit for bit.
"""
from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from torch import nn

from .._host import cpu_flags
from .operators import RunRows, _AttentionSpMM
from .randomness import RunRandom, _glorot, _kaiming, _RunInit
from ..core._validate import check_choice
from .._names import MODELS, match_model
from .kernels import apply_keep_mask, bias_elu_keep, GATLayer, gat_layer_ahead, relu_keep

GAT_HEADS = 8
#: Use the fused numba kernel (:mod:`hpstrat_lite.engine.kernels`) for GAT attention on CPU; the PyTorch-op
#: path (always used on CUDA) is kept for reference and tests.
FUSED_ATTENTION = True
MIXHOP_POWERS = (0, 1, 2)
APPNP_K, APPNP_ALPHA = 10, 0.1
GPRGNN_K, GPRGNN_ALPHA = 10, 0.1




# ----------------------------------------------------------------------------------------------
# Batched models
# ----------------------------------------------------------------------------------------------

def _apply_keep(h: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """``h * keep`` (uint8 0/1 mask of ``h``'s shape): one fused loop on CPU (:mod:`hpstrat_lite.engine.kernels`)."""

    return apply_keep_mask(h, keep)


#: Precisions of the dense matrix products (:func:`matmul_precision`).
PRECISIONS = ("float32", "bfloat16")
_MATMUL_DTYPE = None  # None: float32 products; torch.bfloat16 inside matmul_precision("bfloat16")


def check_precision(precision) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else a ValueError naming them."""
    return check_choice(precision, "precision", PRECISIONS)


#: CPU flags (``/proc/cpuinfo``) of native bfloat16 matrix arithmetic: AMX tiles or AVX-512 BF16.
BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")


def native_bfloat16(device="cpu", *, flags=None) -> bool:
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
    """Run the dense matrix products of the models (and of :class:`hpstrat_lite.engine.train.Features`) in
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
    if not h.is_cuda:
        return _RunLinear.apply(h, w, b)
    if b is None:
        return torch.bmm(h, w.transpose(1, 2))
    return torch.baddbmm(b, h, w.transpose(1, 2))


class _RunLinear(torch.autograd.Function):
    """``h @ w[r].T (+ b[r])`` (float32) whose backward pass multiplies in the layouts MKL's batched GEMM
    handles fastest: :math:`\\partial L/\\partial h = G w`, :math:`\\partial L/\\partial w = G^\\top h` straight
    into ``w``'s ``[R, o, i]`` layout, :math:`\\partial L/\\partial b = \\sum_n G`. Autograd's ``bmm`` backward
    forms :math:`h^\\top G` (``[R, i, N] x [R, N, o]``) and transposes it, about 2x the time of the whole
    backward pass here for few outputs (GCN's and GAT's output layers; figures: ``benchmarks/README.md``)."""

    @staticmethod
    def forward(ctx, h, w, b=None):
        ctx.save_for_backward(h, w)
        ctx.has_bias = b is not None
        wt = w.transpose(1, 2)
        return torch.bmm(h, wt) if b is None else torch.baddbmm(b, h, wt)

    @staticmethod
    def backward(ctx, g):
        h, w = ctx.saved_tensors
        g_h = torch.bmm(g, w) if ctx.needs_input_grad[0] else None
        g_w = torch.bmm(g.transpose(1, 2), h) if ctx.needs_input_grad[1] else None
        g_b = g.sum(1, keepdim=True) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return g_h, g_w, g_b


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

    def relu_drop(self, z: torch.Tensor, rnd) -> torch.Tensor:
        """``self.drop(ReLU(z), rnd)`` as one op (:func:`hpstrat_lite.engine.kernels.relu_keep`): the activation
        of a hidden layer and the dropout after it, one pass each way; plain ReLU in evaluation mode."""
        if rnd is None or self.p == 0.0:
            return torch.relu(z)
        return relu_keep(z, rnd.keep(z.shape[1:], self.p))

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
        return (self.ops["gcn"] @ xw).add_(self.b0)  # before the ReLU: the head fuses it with the dropout

    def head(self, z, rnd=None):
        a = self.ops["gcn"]
        for i in range(1, self.num_layers):
            z = a @ _blin(self.relu_drop(z, rnd), self.scaled(f"w{i}", rnd)) + getattr(self, f"b{i}")
        return z


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
        # xw: [2, R, N, h] = X W_l | X W_r; before the ReLU: the head fuses it with the dropout
        return (self.ops["mean"] @ xw[0]).add_(xw[1]).add_(self.b0)

    def head(self, z, rnd=None):
        for i in range(1, self.num_layers):
            lin = _blin(self.relu_drop(z, rnd), self.scaled(f"w{i}", rnd))
            z = self._conv(lin, self.dims[i + 1], getattr(self, f"b{i}"))
        return z


#: GAT on CPU: the evaluation pass also computes the next training step's first attention layer
#: (:func:`hpstrat_lite.engine.kernels.gat_layer_ahead`); the same numbers either way (tested)
GAT_AHEAD = True
#: GAT on CPU while training: the output layer computes only the rows the loss reads, the runs' training rows in a
#: training step and their validation rows in the evaluation (:class:`RunRows`); the same numbers either way
#: (tested), False computes every row
GAT_SELECT_ROWS = True


class GAT(BatchedModel):
    """GATConv stack (Velickovic et al. 2018): hidden layers with 8 heads of ``hidden // 8`` channels
    (concatenated, ELU), output layer with 1 head.

    Per run r and head k: :math:`e_{ij} = \\mathrm{LeakyReLU}_{0.2}(a_{src}^\\top W h_j + a_{dst}^\\top W h_i)`,
    :math:`\\alpha_{ij} = \\mathrm{softmax}_{j \\in N(i) \\cup \\{i\\}}(e_{ij})` (dropout on
    :math:`\\alpha`), :math:`h_i' = \\sum_j \\alpha_{ij} W h_j + b`. On CPU each layer's attention for all
    R x heads blocks, scores included, is one fused kernel (:class:`hpstrat_lite.engine.kernels.GATLayer`); on CUDA the
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

        On CPU: ``(x [R, N, H, C], att_src [R, H, C], att_dst [R, H, C])`` for the fused layer
        (:class:`hpstrat_lite.engine.kernels.GATLayer`), which computes the per-head dot products
        :math:`a^\\top W h` itself and adds their gradient into that of ``x`` in its backward pass.
        On CUDA: unnormalised attention :math:`w_{ij} = \\exp(e_{ij} - \\max_k e_{ik})` ``[R, H, E]``,
        its per-target sums ``[R, H, N]`` (>= 1: the max term is exp(0)) and the features
        ``[R*H, N, C]``; maxima and sums are CSR segment reductions over the edges sorted by target."""
        graph = self.ops["gat"]
        R, n = xw.shape[:2]
        heads, ch = self.shape[i]
        if FUSED_ATTENTION and not xw.is_cuda:  # the scores are computed inside the fused layer
            return (xw.view(R, n, heads, ch), getattr(self, f"att_src{i}").view(R, heads, ch),
                    getattr(self, f"att_dst{i}").view(R, heads, ch))
        att = torch.cat([getattr(self, f"att_src{i}"), getattr(self, f"att_dst{i}")], 1).view(R, 2, heads, ch)
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

            x, att_src, att_dst = scores
            R, n, heads, ch = x.shape
            shape, scale = (heads, self.ops["gat"].num_edges), (1.0 / (1.0 - self.p) if self.p > 0 else 1.0)
            if i == 0 and rnd is None and self.lookahead is not None and self.p > 0 and GAT_AHEAD:
                # evaluation while training: the next step's first layer from the same pass over the edges
                keep = self.lookahead.peek(shape, self.p)
                out, self.ahead = gat_layer_ahead(x, att_src, att_dst, keep, scale, self.ops["gat"])
                return out.view(R, n, heads * ch)
            keep = rnd.keep(shape, self.p) if dropping else None
            prepared = None
            if i == 0 and dropping:  # a training step takes what the last evaluation prepared, once
                prepared, self.ahead = self.ahead, None
            rows = None
            if 0 < i == self.num_layers - 1 and self.rows is not None and GAT_SELECT_ROWS:
                # the output layer while training: only the rows the step's loss (or the validation loss) reads
                rows = self.rows.training if rnd is not None else self.rows.validation
            out = GATLayer.apply(x, att_src, att_dst, keep, scale if dropping else 1.0, self.ops["gat"], prepared,
                                 rows)
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
        (:func:`hpstrat_lite.engine.kernels.bias_elu_keep`)."""

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
    name = match_model(model)
    if name is None:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}.")
    return name


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
