"""Fused CPU kernels (numba) for graph attention: GATConv's softmax-weighted aggregation for R runs x H
heads in one pass over the edges, with no per-edge tensor in memory.

For a target node i with incoming edges e = (j -> i) (self loop included), run r and head h:

.. math::

    s_e = a^{src}_{r j h} + a^{dst}_{r i h},\\quad l_e = \\mathrm{LeakyReLU}_{0.2}(s_e),\\quad
    w_e = \\exp(l_e - m_i),\\quad m_i = \\max_{e \\to i} l_e,\\quad T_i = \\sum_{e \\to i} w_e,

    o_i = \\frac{k}{T_i} \\sum_{e \\to i} d_e\\, w_e\\, x_{r j h},

with the attention-dropout keep-mask :math:`d_e \\in \\{0, 1\\}` and :math:`k = 1/(1-p)` (no mask and
:math:`k = 1` in evaluation). This is exactly PyG's ``GATConv`` (softmax over the incoming edges,
dropout on the coefficients) for every (run, head) block.

Gradients (:math:`G_i = \\partial L / \\partial o_i`; :math:`m_i` is a constant, softmax being
shift-invariant):

.. math::

    \\frac{\\partial L}{\\partial x_j} = \\sum_{e: j \\to i} \\frac{k d_e w_e}{T_i} G_i,\\qquad
    \\frac{\\partial L}{\\partial w_e} = \\frac{k d_e}{T_i} G_i \\cdot x_j - \\frac{G_i \\cdot o_i}{T_i},\\qquad
    \\frac{\\partial L}{\\partial s_e} = w_e \\frac{\\partial L}{\\partial w_e} \\cdot (1 \\text{ if } s_e > 0
    \\text{ else } 0.2),

summed into :math:`a^{src}_j` over the edges leaving j and into :math:`a^{dst}_i` over the edges
entering i. The backward pass recomputes :math:`w_e` from the node-level :math:`a, m, T` in one pass over the
edges by target (parallel over runs, so the scatters into the sources never race; a target whose gradient
row is zero, as outside the loss's rows at the output layer, adds nothing and is skipped), so memory stays at
O(R H N C) plus the uint8 dropout mask, and the per-edge work is a handful of flops per (run, head), with
no ``[R, H, E]`` intermediate tensors as the same maths in PyTorch ops would need (figures:
``benchmarks/README.md``, ``bench_train.py``). The forward pass is one parallel loop over (run, target node) pairs, run-major (a run's
features stay in cache).

The weights themselves come from node-level exponentials (:func:`_forward_factored`: 4 per node, run
and head instead of one per edge, and no pass for the per-target maxima), unless a (run, head)'s source
scores span more than :data:`FACTORED_SPAN`, where :func:`_forward` takes one exponential per edge.

While training, the evaluation pass and the next training step see the same inputs at the first layer:
:func:`gat_aggregate_ahead` computes both outputs (without, and with that step's mask drawn ahead) in one
pass over the edges, which saves about 12 % of GAT's epoch on Coauthor-CS.

The edge loops wait on memory more than on arithmetic (each edge gathers its source's feature row, in an order
with no locality): they ask for the source's rows :data:`PREFETCH_EDGES` edges ahead (:func:`_prefetch_row`).

The torch path (:class:`hpstrat_lite.engine.models._AttentionSpMM`) stays in use on CUDA; a test checks that
both give the same outputs and gradients.
"""
from __future__ import annotations

import numba
import numpy as np
import torch

from .._host import start_numba_threads
from .._prefetch import LINE_BYTES, prefetch

_NEG = np.float32(0.2)  # LeakyReLU slope of GATConv
_ZERO = np.float32(0.0)  # float32 accumulators: mixing in float64 would block SIMD
_FAST = {"reassoc", "contract", "arcp"}  # reorder sums, fuse multiply-adds; no assumptions about inf or nan

#: How many edges ahead the edge loops ask for the rows they will gather (:func:`_prefetch_row`).
PREFETCH_EDGES = 4


@numba.njit(inline="always")
def _prefetch_row(arr, row):
    """Ask for every cache line of ``arr[row]`` (``arr`` C-contiguous, at least 2-D): the edge loops gather
    rows of node features by source, a random walk through arrays larger than the L2 cache, and a load
    that misses stalls the loop for the memory's latency; asked for :data:`PREFETCH_EDGES` edges ahead, the
    row is in cache when the loop reaches it. On Coauthor-CS (12 runs, one thread) GAT's first-layer kernels
    take 1.5-1.9x less time (``benchmarks/README.md``); the floats are the same."""
    width = arr.size // arr.shape[0]
    step = max(1, LINE_BYTES // arr.itemsize)
    for q in range(0, width, step):
        prefetch(arr, row * width + q)


@numba.njit(inline="always")
def _prefetch_source_grads(j, xr, gxr, asr, gsr):
    """Ask for what the backward passes read and add into at source ``j``: its features and their gradient, its
    source score and that score's gradient (:func:`_prefetch_row` of each)."""
    _prefetch_row(xr, j)
    _prefetch_row(gxr, j)
    _prefetch_row(asr, j)
    _prefetch_row(gsr, j)


@numba.njit(inline="always")
def _ahead(src, e, far):
    """The source node :data:`PREFETCH_EDGES` edges after edge ``e`` (in the next targets' rows once past this
    one's): the rows to :func:`_prefetch_row` now; -1 past the last edge, or when the gathered rows are not
    ``far`` (narrower than a cache line, as at an output layer: there the requests cost more than they save)."""
    e = e + PREFETCH_EDGES
    return src[e] if far and e < src.shape[0] else -1


@numba.njit(inline="always")
def _wide_rows(x):
    """Whether the rows ``x[r, j]`` of a ``[R, N, H, C]`` feature array span a cache line or more."""
    return x.shape[2] * x.shape[3] * x.itemsize >= LINE_BYTES


@numba.njit(inline="always", fastmath=_FAST)
def _score_max(lo, hi, src, a_src_r, ad, m):
    """:math:`m_i = \\max_{e \\to i} \\mathrm{LeakyReLU}_{0.2}(a^{src}_{j} + a^{dst}_i)` per head, over the edges
    ``lo:hi`` of target i (``ad`` = :math:`a^{dst}_i`), into ``m``: the softmax shift of both forward kernels."""
    m[:] = -np.inf
    for e in range(lo, hi):
        a = a_src_r[src[e]]
        for h in range(m.shape[0]):
            s = a[h] + ad[h]
            l = s if s > 0 else _NEG * s
            if l > m[h]:
                m[h] = l


@numba.njit(inline="always", fastmath=_FAST)
def _accumulate(o, oe, h, w, xh, d, use_mask, dual, t):
    """Edge weight ``w`` of head ``h``: ``t[h] += w``, ``o[h] += d w x_h`` (``d`` the keep-mask bit) and, with
    ``dual``, ``oe += w x_h`` (``oe`` = the evaluation output's row of head ``h``)."""
    t[h] += w
    wd = w * d if use_mask else w  # branch-free: a dropped edge adds 0 * x
    C = xh.shape[0]
    for c in range(C):
        o[h, c] += wd * xh[c]
    if dual:
        for c in range(C):
            oe[c] += w * xh[c]


@numba.njit(inline="always", fastmath=_FAST)
def _normalise(o, oe, k, t, dual):
    """``o[h] *= k / t[h]`` (and, with ``dual``, ``oe[h] *= 1 / t[h]``): the softmax's normalisation."""
    H, C = o.shape
    for h in range(H):
        scale = k / t[h]
        for c in range(C):
            o[h, c] *= scale
        if dual:
            scale = np.float32(1.0) / t[h]
            for c in range(C):
                oe[h, c] *= scale


@numba.njit(inline="always", fastmath=_FAST)
def _forward_target(r, i, crow, src, x, a_src, a_dst, mask, use_mask, k, out, top, total, dual, out_eval, far):
    """Output row ``out[r, i]`` of :func:`_forward` (and ``out_eval[r, i]`` with ``dual``)."""
    H = x.shape[2]
    lo, hi = crow[i], crow[i + 1]
    m, t, o, ad = top[r, i], total[r, i], out[r, i], a_dst[r, i]
    o[:] = _ZERO
    if dual:
        out_eval[r, i] = _ZERO
    _score_max(lo, hi, src, a_src[r], ad, m)
    t[:] = _ZERO
    xr = x[r]
    for e in range(lo, hi):
        jn = _ahead(src, e, far)
        if jn >= 0:
            _prefetch_row(xr, jn)
        j = src[e]
        a, xj = a_src[r, j], x[r, j]
        for h in range(H):
            s = a[h] + ad[h]
            l = s if s > 0 else _NEG * s
            w = np.exp(l - m[h])
            _accumulate(o, out_eval[r, i, h] if dual else o[h], h, w, xj[h], mask[r, h, e] if use_mask
                        else np.uint8(1), use_mask, dual, t)
    _normalise(o, out_eval[r, i] if dual else o, k, t, dual)


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _forward(crow, src, x, a_src, a_dst, mask, use_mask, k, out, top, total, dual, out_eval, rows, rows_ptr):
    """With ``dual``, ``out_eval`` also receives the output without mask and scale (evaluation mode),
    from the same weights in the same pass. With a non-empty ``rows``, only the listed target rows are
    computed (run r's ``rows[rows_ptr[r]:rows_ptr[r + 1]]``, as in :func:`_spmm_select`; the others are left
    as they are)."""
    R, N, H, C = x.shape
    far = _wide_rows(x)
    if rows.shape[0]:
        for t in numba.prange(rows.shape[0]):
            _forward_target(np.searchsorted(rows_ptr, t, side="right") - 1, rows[t], crow, src, x, a_src, a_dst,
                            mask, use_mask, k, out, top, total, dual, out_eval, far)
    else:
        # one parallel region; each thread's share is run-major (runs stay in cache)
        for ri in numba.prange(R * N):
            r = ri // N
            _forward_target(r, ri - r * N, crow, src, x, a_src, a_dst, mask, use_mask, k, out, top, total, dual,
                            out_eval, far)


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _backward(crow, src, x, a_src, a_dst, mask, use_mask, k, out, top, total, grad, g_x, g_src, g_dst):
    """One pass over the edges by target, parallel over runs (each thread owns whole runs, so the
    scatters into the sources' gradients never race)."""
    R, N, H, C = x.shape
    far = _wide_rows(x)
    for r in numba.prange(R):
        go, inv = np.empty(H, dtype=x.dtype), np.empty(H, dtype=x.dtype)
        g_x[r] = _ZERO  # outputs arrive uninitialised (a torch.zeros fill is one more pass)
        g_src[r] = _ZERO
        g_dst[r] = _ZERO
        xr, gxr, asr, gsr = x[r], g_x[r], a_src[r], g_src[r]
        for i in range(N):
            gi, ad, m, t, gd = grad[r, i], a_dst[r, i], top[r, i], total[r, i], g_dst[r, i]
            live = False
            for h in range(H):
                v = _ZERO
                for c in range(C):
                    v += gi[h, c] * out[r, i, h, c]
                    live |= gi[h, c] != _ZERO
                go[h] = v
                inv[h] = np.float32(1.0) / t[h]  # one division per target, not one per edge
            if not live:  # a zero gradient row adds nothing (rows outside the loss, e.g. the output layer's)
                continue
            for e in range(crow[i], crow[i + 1]):
                jn = _ahead(src, e, far)
                if jn >= 0:
                    _prefetch_source_grads(jn, xr, gxr, asr, gsr)
                j = src[e]
                a, xj, gx, gs = a_src[r, j], x[r, j], g_x[r, j], g_src[r, j]
                for h in range(H):
                    s = a[h] + ad[h]
                    l = s if s > 0 else _NEG * s
                    w = np.exp(l - m[h]) * inv[h]
                    kd = k * mask[r, h, e] if use_mask else k
                    alpha = kd * w
                    dot = _ZERO
                    for c in range(C):
                        dot += gi[h, c] * xj[h, c]
                        gx[h, c] += alpha * gi[h, c]
                    ds = w * (kd * dot - go[h])
                    if s <= 0:
                        ds *= _NEG
                    gd[h] += ds
                    gs[h] += ds


#: The factorised exponentials (:func:`_forward_factored`) are used while every (run, head)'s source
#: scores span at most this much (:math:`\\max_j a^{src} - \\min_j a^{src}`): then every edge weight is at
#: least :math:`e^{-80} \\approx 1.8 \\cdot 10^{-35}`, inside float32's normal range (from
#: :math:`1.2 \\cdot 10^{-38} \\approx e^{-87.3}`); wider spans take the per-edge exponentials. On Coauthor-CS
#: (12 runs, 200 epochs) the first layer's scores span up to about 85 early in training: 15 of 202 calls
#: span more than 80 (51 more than 60).
FACTORED_SPAN = 80.0


@numba.njit(inline="always", fastmath=_FAST)
def _factored_target(r, i, crow, src, x, e_src, f_dst, mask, use_mask, k, out, total, dual, out_eval, far):
    """Output row ``out[r, i]`` of :func:`_forward_factored` (and ``out_eval[r, i]`` with ``dual``)."""
    H = x.shape[2]
    t, o, f = total[r, i], out[r, i], f_dst[r, i]
    o[:] = _ZERO
    if dual:
        out_eval[r, i] = _ZERO
    t[:] = _ZERO
    xr, er = x[r], e_src[r]
    for e in range(crow[i], crow[i + 1]):
        jn = _ahead(src, e, far)
        if jn >= 0:
            _prefetch_row(xr, jn)
            _prefetch_row(er, jn)
        j = src[e]
        ej, xj = e_src[r, j], x[r, j]
        for h in range(H):
            w = max(ej[0, h] * f[0, h], ej[1, h] * f[1, h])
            _accumulate(o, out_eval[r, i, h] if dual else o[h], h, w, xj[h], mask[r, h, e] if use_mask
                        else np.uint8(1), use_mask, dual, t)
    _normalise(o, out_eval[r, i] if dual else o, k, t, dual)


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _forward_factored(crow, src, x, e_src, f_dst, mask, use_mask, k, out, total, dual, out_eval, rows, rows_ptr):
    """:func:`_forward` with the edge weights as products of node-level exponentials, and no pass for the
    per-target maxima.

    With :math:`c = \\max_j a^{src}_j` per run and head, the shift :math:`m'_i = \\mathrm{LeakyReLU}(a^{dst}_i + c)`
    bounds every score of target i from above (LeakyReLU is increasing), so the softmax (shift-invariant)
    may take it instead of :math:`m_i`. Then, with the source factors
    :math:`E^+_j = e^{a^{src}_j - c}`, :math:`E^-_j = e^{0.2 (a^{src}_j - c)}` (``e_src[r, j] = (E^+, E^-)``)
    and the target factors :math:`F^+_i = e^{a^{dst}_i + c - m'_i}`, :math:`F^-_i = e^{0.2 (a^{dst}_i + c) - m'_i}`
    (``f_dst[r, i]``), all computed by the caller,

    .. math:: w_e = e^{\\mathrm{LeakyReLU}(s_e) - m'_i} = \\max(E^+_j F^+_i,\\ E^-_j F^-_i),

    since :math:`e^{\\max(s, 0.2 s)} = \\max(e^s, e^{0.2 s})`. Every factor and weight is at most 1, and,
    LeakyReLU being increasing and 1-Lipschitz, every weight is at least :math:`e^{-(c - \\min_j a^{src}_j)}`,
    which the span check of :data:`FACTORED_SPAN` keeps inside float32's normal range. The edge loop gathers
    only the source's features and one cache line of its factors (no scores, no exponentials), so it is
    faster than :func:`_forward`, whose edge loop computes one exponential per edge (figures:
    ``benchmarks/README.md``, ``bench_train.py``). The same weights up to float rounding. ``rows``, ``rows_ptr``: as
    in :func:`_forward`.
    """
    R, N, H, C = x.shape
    far = _wide_rows(x)
    if rows.shape[0]:
        for t in numba.prange(rows.shape[0]):
            _factored_target(np.searchsorted(rows_ptr, t, side="right") - 1, rows[t], crow, src, x, e_src, f_dst,
                             mask, use_mask, k, out, total, dual, out_eval, far)
    else:
        for ri in numba.prange(R * N):  # one parallel region, as in _forward
            r = ri // N
            _factored_target(r, ri - r * N, crow, src, x, e_src, f_dst, mask, use_mask, k, out, total, dual,
                             out_eval, far)


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _backward_factored(crow, src, x, a_src, a_dst, e_src, f_dst, mask, use_mask, k, out, total, grad, g_x, g_src,
                       g_dst):
    """:func:`_backward` with the weights of :func:`_forward_factored` (no exponentials at all). The
    LeakyReLU branch is the sign of :math:`s_e` itself, as in PyG, not the larger of the two products (which
    can differ where :math:`|s_e|` is within rounding of 0)."""
    R, N, H, C = x.shape
    far = _wide_rows(x)
    for r in numba.prange(R):
        go = np.empty(H, dtype=x.dtype)
        fp, fn = np.empty(H, dtype=x.dtype), np.empty(H, dtype=x.dtype)
        g_x[r] = _ZERO
        g_src[r] = _ZERO
        g_dst[r] = _ZERO
        xr, gxr, asr, gsr, er = x[r], g_x[r], a_src[r], g_src[r], e_src[r]
        for i in range(N):
            gi, ad, t, gd = grad[r, i], a_dst[r, i], total[r, i], g_dst[r, i]
            live = False
            for h in range(H):
                v = _ZERO
                for c in range(C):
                    v += gi[h, c] * out[r, i, h, c]
                    live |= gi[h, c] != _ZERO
                go[h] = v
                # the target's factors divided by its total once, not once per edge
                fp[h] = f_dst[r, i, 0, h] / t[h]
                fn[h] = f_dst[r, i, 1, h] / t[h]
            if not live:
                continue
            for e in range(crow[i], crow[i + 1]):
                jn = _ahead(src, e, far)
                if jn >= 0:
                    _prefetch_source_grads(jn, xr, gxr, asr, gsr)
                    _prefetch_row(er, jn)
                j = src[e]
                a, xj, gx, gs, ej = a_src[r, j], x[r, j], g_x[r, j], g_src[r, j], e_src[r, j]
                for h in range(H):
                    positive = a[h] + ad[h] > 0
                    w = ej[0, h] * fp[h] if positive else ej[1, h] * fn[h]
                    kd = k * mask[r, h, e] if use_mask else k
                    alpha = kd * w
                    dot = _ZERO
                    for c in range(C):
                        dot += gi[h, c] * xj[h, c]
                        gx[h, c] += alpha * gi[h, c]
                    ds = w * (kd * dot - go[h])
                    if not positive:
                        ds *= _NEG
                    gd[h] += ds
                    gs[h] += ds


def _factors(a_src, a_dst, c):
    """The node-level factors of :func:`_forward_factored`: ``e_src`` ``[R, N, 2, H]`` = :math:`(E^+, E^-)` and
    ``f_dst`` ``[R, N, 2, H]`` = :math:`(F^+, F^-)` for the per-(run, head) maxima ``c`` ``[R, H]``; interleaved,
    so one node's factors are one cache line for 8 heads."""
    R, N, H = a_src.shape
    c = c[:, None]
    e_src, f_dst = torch.empty(R, N, 2, H, dtype=a_src.dtype), torch.empty(R, N, 2, H, dtype=a_src.dtype)
    torch.sub(a_src, c, out=e_src[:, :, 0])
    torch.mul(e_src[:, :, 0], float(_NEG), out=e_src[:, :, 1])
    z = a_dst + c
    shift = torch.nn.functional.leaky_relu(z, float(_NEG))  # m' = LeakyReLU(a_dst + c)
    torch.sub(z, shift, out=f_dst[:, :, 0])
    torch.mul(z, float(_NEG), out=f_dst[:, :, 1]).sub_(shift)
    return e_src.exp_(), f_dst.exp_()


#: Byte value -> its 8 bits as 8 bytes of 0/1 (least significant bit first), each row one uint64.
_BYTE_BITS = np.array([[(v >> b) & 1 for b in range(8)] for v in range(256)], np.uint8).view(np.uint64).ravel()


@numba.njit(parallel=True, cache=True)
def _unpack_bits(words, out, table):
    """``out[r, k] = table[words[r, k]]``: each byte of ``words`` (uint8) to its 8 bits, 8 bytes at a time."""
    R, W = out.shape
    blocks = (W + 4095) // 4096
    for t in numba.prange(R * blocks):
        r, lo = t // blocks, (t % blocks) * 4096
        w, o = words[r], out[r]
        for k in range(lo, min(lo + 4096, W)):
            o[k] = table[w[k]]


def unpack_bits(words: torch.Tensor, n: int) -> torch.Tensor:
    """The first ``n`` bits of each row of ``words`` (``[R, W]`` int64, CPU) as uint8 0/1 ``[R, n]``, least
    significant bit of each byte first, bytes in memory order: what ``torch.bitwise_right_shift`` of the
    bytes by ``0..7`` and ``& 1`` give (``models._shift_bits``, used off CPU), through a 256-entry table in one parallel
    pass, instead of eight shift-and-mask passes over the bytes (figures: ``benchmarks/README.md``, ``bench_train.py``)."""
    R, W = words.shape
    if n > W * 64:
        raise ValueError(f"{n} bits asked of {W} 64-bit words per row.")
    _match_torch_threads()
    n8 = (n + 7) // 8
    out = torch.empty(R, 8 * n8, dtype=torch.uint8)
    _unpack_bits(words.contiguous().view(torch.uint8).numpy(), out.numpy().view(np.uint64), _BYTE_BITS)
    return out if 8 * n8 == n else out[:, :n].contiguous()


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().contiguous().numpy()


def _mask_array(keep) -> np.ndarray:
    """The keep-mask as a numpy array, or a 1-element placeholder when there is none (eval mode)."""
    return _np(keep) if keep is not None else np.zeros((1, 1, 1), np.uint8)


def _match_torch_threads():
    """Run numba's parallel loops on as many threads as torch uses (numba's pool started by
    :func:`hpstrat_lite._host.start_numba_threads`; in the engine it runs on PyTorch's libgomp)."""
    start_numba_threads()
    numba.set_num_threads(max(1, min(torch.get_num_threads(), numba.config.NUMBA_NUM_THREADS)))


_EVERY = (np.zeros(0, np.int64), np.zeros(1, np.int64))  # no rows listed: every row


def _gat_forward(x, a_src, a_dst, keep, k, graph, dual=False, rows=None):
    """The fused forward pass: ``(out, aux, out_eval)`` with ``aux = (top, total, extra, factored)`` for the
    backward pass, and with ``dual`` the evaluation-mode output (no mask, no scale) from the same pass.

    ``rows``: ``(rows, rows_ptr)``, the target rows each run reads (as :class:`~hpstrat_lite.engine.operators.RunRows`
    lists them), or None for all; the other rows of ``out`` are zero (and their totals one), so a backward pass
    whose gradient is zero there skips them. Each computed row is the float the full pass gives."""
    _match_torch_threads()
    R, N, H, C = x.shape
    select = rows is not None
    out = (torch.zeros if select else torch.empty)(R, N, H, C, dtype=x.dtype)
    out_eval = torch.empty(R, N, H, C, dtype=x.dtype) if dual else torch.zeros(1, 1, 1, 1, dtype=x.dtype)
    top = torch.empty(R, N, H, dtype=x.dtype)  # the per-target maxima: written by the per-edge path only
    total = (torch.ones if select else torch.empty)(R, N, H, dtype=x.dtype)
    rows, rows_ptr = rows if select else _EVERY
    use_mask = keep is not None
    mask = _mask_array(keep)
    crow, src = graph.cpu_index()
    low, c = torch.aminmax(a_src, dim=1)  # [R, H] each
    factored = bool((c - low).max() <= FACTORED_SPAN)
    if select and not len(rows):  # no row listed: nothing to compute (an empty list means every row below)
        return out, (top, total, _factors(a_src, a_dst, c) if factored else (), factored), None
    if factored:
        e_src, f_dst = _factors(a_src, a_dst, c)
        _forward_factored(crow, src, _np(x), e_src.numpy(), f_dst.numpy(), mask, use_mask, np.float32(k),
                          out.numpy(), total.numpy(), dual, out_eval.numpy(), rows, rows_ptr)
        extra = (e_src, f_dst)
    else:
        _forward(crow, src, _np(x), _np(a_src), _np(a_dst), mask, use_mask, np.float32(k), out.numpy(),
                 top.numpy(), total.numpy(), dual, out_eval.numpy(), rows, rows_ptr)
        extra = ()
    return out, (top, total, extra, factored), out_eval if dual else None


class PreparedAggregate:
    """A training-mode :class:`GATAggregate` output computed ahead, by :func:`gat_aggregate_ahead` in the
    evaluation pass on the same inputs; :meth:`matches` says whether a later call may use it. ``scores``: the
    attention scores ``(a_src, a_dst)`` when the inputs are :class:`GATLayer`'s score vectors (:func:`gat_layer_ahead`)."""

    def __init__(self, x, a_src, a_dst, keep, k, out, aux, scores=None):
        self.key, self.keep, self.out, self.aux = self._key(x, a_src, a_dst, k), keep, out, aux
        self.scores = scores

    @staticmethod
    def _key(x, a_src, a_dst, k) -> tuple:
        """The inputs' storage and shapes, and the scale: a detached view of the same tensor has the same key."""
        return tuple((t.data_ptr(), tuple(t.shape)) for t in (x, a_src, a_dst)) + (float(k),)

    def matches(self, x, a_src, a_dst, keep, k) -> bool:
        return keep is self.keep and self._key(x, a_src, a_dst, k) == self.key


def gat_aggregate_ahead(x, a_src, a_dst, keep, k, graph):
    """Evaluation-mode output of the fused aggregation, and (one pass over the edges for both) the
    training-mode output for dropout mask ``keep`` and scale ``k`` as a :class:`PreparedAggregate`.

    The evaluation of epoch t and the training step of epoch t + 1 see the same weights, so their
    attention weights are the same: computed once, and the second edge pass (about 0.1 s per epoch for
    GAT's first layer on Coauthor-CS, 12 runs) is saved. Both outputs are the floats the separate calls
    give."""
    x, a_src, a_dst = x.detach(), a_src.detach(), a_dst.detach()
    out, aux, out_eval = _gat_forward(x, a_src, a_dst, keep, k, graph, dual=True)
    return out_eval, PreparedAggregate(x, a_src, a_dst, keep, k, out, aux)


class GATAggregate(torch.autograd.Function):
    """``o = GATAggregate.apply(x, a_src, a_dst, keep, k, graph, prepared=None)``: the fused attention
    aggregation above.

    ``x`` ``[R, N, H, C]``, ``a_src`` / ``a_dst`` ``[R, N, H]`` (float32, CPU), ``keep`` a ``[R, H, E]``
    uint8 keep-mask over ``graph``'s edges in target order, or ``None``; ``k`` the dropout scale;
    ``graph`` an :class:`hpstrat_lite.engine.models.AttentionGraph`; ``prepared`` a :class:`PreparedAggregate`
    (used when it :meth:`~PreparedAggregate.matches` these inputs). Returns ``[R, N, H, C]``.
    """

    @staticmethod
    def forward(ctx, x, a_src, a_dst, keep, k, graph, prepared=None):
        if prepared is not None and prepared.matches(x, a_src, a_dst, keep, k):
            out, (top, total, extra, factored) = prepared.out, prepared.aux
        else:
            out, (top, total, extra, factored), _ = _gat_forward(x, a_src, a_dst, keep, k, graph)
        use_mask = keep is not None
        ctx.save_for_backward(x, a_src, a_dst, out, top, total, keep if use_mask else torch.empty(0), *extra)
        ctx.k, ctx.use_mask, ctx.graph, ctx.factored = float(k), use_mask, graph, factored
        return out

    @staticmethod
    def backward(ctx, grad):
        x, a_src, a_dst, out, top, total, keep, *extra = ctx.saved_tensors
        g_x, g_src, g_dst = _aggregate_backward(ctx, grad, x, a_src, a_dst, out, top, total, keep, extra)
        return g_x, g_src, g_dst, None, None, None, None


def _aggregate_backward(ctx, grad, x, a_src, a_dst, out, top, total, keep, extra):
    """Gradients ``(g_x, g_src, g_dst)`` of the fused aggregation (:func:`_backward_factored` or :func:`_backward`)."""
    _match_torch_threads()
    crow, src = ctx.graph.cpu_index()
    mask = _mask_array(keep if ctx.use_mask else None)
    g_x, g_src, g_dst = torch.empty_like(x), torch.empty_like(top), torch.empty_like(top)
    if ctx.factored:
        _backward_factored(crow, src, _np(x), _np(a_src), _np(a_dst), *map(_np, extra), mask, ctx.use_mask,
                           np.float32(ctx.k), _np(out), _np(total), _np(grad), g_x.numpy(), g_src.numpy(),
                           g_dst.numpy())
    else:
        _backward(crow, src, _np(x), _np(a_src), _np(a_dst), mask, ctx.use_mask, np.float32(ctx.k), _np(out),
                  _np(top), _np(total), _np(grad), g_x.numpy(), g_src.numpy(), g_dst.numpy())
    return g_x, g_src, g_dst


# ----------------------------------------------------------------------------------------------
# A whole attention layer: scores and aggregation
# ----------------------------------------------------------------------------------------------

@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _att_scores(x, att_src, att_dst, a_src, a_dst):
    """:math:`a^{src}_{r n h} = \\sum_c x_{r n h c}\\, a^{src}_{r h c}` (and :math:`a^{dst}`), one parallel loop
    over (run, node) pairs."""
    R, N, H, C = x.shape
    for ri in numba.prange(R * N):
        r = ri // N
        n = ri - r * N
        xn, s, d = x[r, n], att_src[r], att_dst[r]
        for h in range(H):
            vs = _ZERO
            vd = _ZERO
            for c in range(C):
                vs += xn[h, c] * s[h, c]
                vd += xn[h, c] * d[h, c]
            a_src[r, n, h] = vs
            a_dst[r, n, h] = vd


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _att_scores_backward(x, att_src, att_dst, g_src, g_dst, g_x, g_att_src, g_att_dst):
    """The scores' gradients: ``g_x += g_src a^{src} + g_dst a^{dst}`` (into the aggregation's own ``g_x``) and
    :math:`\\partial L / \\partial a^{src}_{r h c} = \\sum_n g^{src}_{r n h} x_{r n h c}` (and dst); parallel over
    runs (each thread sums its own runs' vectors)."""
    R, N, H, C = x.shape
    for r in numba.prange(R):
        acc_s = np.zeros((H, C), dtype=x.dtype)
        acc_d = np.zeros((H, C), dtype=x.dtype)
        s, d = att_src[r], att_dst[r]
        for n in range(N):
            xn, gx, gs, gd = x[r, n], g_x[r, n], g_src[r, n], g_dst[r, n]
            for h in range(H):
                a = gs[h]
                b = gd[h]
                for c in range(C):
                    gx[h, c] += a * s[h, c] + b * d[h, c]
                    acc_s[h, c] += a * xn[h, c]
                    acc_d[h, c] += b * xn[h, c]
        g_att_src[r] = acc_s
        g_att_dst[r] = acc_d


def attention_scores(x: torch.Tensor, att_src: torch.Tensor, att_dst: torch.Tensor) -> tuple:
    """``(a_src, a_dst)`` ``[R, N, H]``: each head's score vectors dotted with its features ``x`` ``[R, N, H, C]``
    (``att_*`` ``[R, H, C]``; float32, CPU), GATConv's :math:`a^\\top W h` per node."""
    _match_torch_threads()
    R, N, H, _ = x.shape
    a_src, a_dst = torch.empty(R, N, H, dtype=x.dtype), torch.empty(R, N, H, dtype=x.dtype)
    _att_scores(_np(x), _np(att_src), _np(att_dst), a_src.numpy(), a_dst.numpy())
    return a_src, a_dst


def gat_layer_ahead(x, att_src, att_dst, keep, k, graph):
    """:func:`gat_aggregate_ahead` for :class:`GATLayer`: the scores from ``x`` and the score vectors, then the
    evaluation output and the next training step's output (prepared, with its scores) from one pass."""
    x, att_src, att_dst = x.detach(), att_src.detach(), att_dst.detach()
    a_src, a_dst = attention_scores(x, att_src, att_dst)
    out, aux, out_eval = _gat_forward(x, a_src, a_dst, keep, k, graph, dual=True)
    return out_eval, PreparedAggregate(x, att_src, att_dst, keep, k, out, aux, scores=(a_src, a_dst))


class GATLayer(torch.autograd.Function):
    """``o = GATLayer.apply(x, att_src, att_dst, keep, k, graph, prepared=None)``: GATConv's attention layer
    from the projected features ``x`` ``[R, N, H, C]`` and the score vectors ``att_src`` / ``att_dst``
    ``[R, H, C]``: the scores :func:`attention_scores` and :class:`GATAggregate`'s aggregation, with one backward
    pass for both. The scores' gradient is added into the aggregation's ``g_x`` by one kernel
    (:func:`_att_scores_backward`), where as separate ops it takes a block-diagonal ``[H*C, 2H]`` GEMM forward,
    two GEMMs backward (8x the useful work for 8 heads) and a sum of the two ``[R, N, H*C]`` gradients of ``x``.
    ``prepared``: the :class:`PreparedAggregate` of :func:`gat_layer_ahead` for these inputs, if any. ``rows``:
    ``(rows, rows_ptr)``, the only output rows each run reads (zeros elsewhere; see :func:`_gat_forward`): the
    output layer's training or validation rows while training, whose other rows get no gradient."""

    @staticmethod
    def forward(ctx, x, att_src, att_dst, keep, k, graph, prepared=None, rows=None):
        if prepared is not None and prepared.matches(x, att_src, att_dst, keep, k):
            (a_src, a_dst), out, (top, total, extra, factored) = prepared.scores, prepared.out, prepared.aux
        else:
            a_src, a_dst = attention_scores(x, att_src, att_dst)
            out, (top, total, extra, factored), _ = _gat_forward(x, a_src, a_dst, keep, k, graph, rows=rows)
        use_mask = keep is not None
        ctx.save_for_backward(x, att_src, att_dst, a_src, a_dst, out, top, total,
                              keep if use_mask else torch.empty(0), *extra)
        ctx.k, ctx.use_mask, ctx.graph, ctx.factored = float(k), use_mask, graph, factored
        return out

    @staticmethod
    def backward(ctx, grad):
        x, att_src, att_dst, a_src, a_dst, out, top, total, keep, *extra = ctx.saved_tensors
        g_x, g_src, g_dst = _aggregate_backward(ctx, grad, x, a_src, a_dst, out, top, total, keep, extra)
        g_att_src, g_att_dst = torch.empty_like(att_src), torch.empty_like(att_src)
        _att_scores_backward(_np(x), _np(att_src), _np(att_dst), g_src.numpy(), g_dst.numpy(), g_x.numpy(),
                             g_att_src.numpy(), g_att_dst.numpy())
        return g_x, g_att_src, g_att_dst, None, None, None, None, None


# ----------------------------------------------------------------------------------------------
# Dropout: activations times a 0/1 keep-mask
# ----------------------------------------------------------------------------------------------

@numba.njit(parallel=True, cache=True)
def _mul_mask(h, keep, out):
    for i in numba.prange(h.shape[0]):
        out[i] = h[i] * keep[i]


def _masked(h: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    _match_torch_threads()
    h, keep = h.contiguous(), keep.contiguous()
    out = torch.empty_like(h)
    _mul_mask(h.view(-1).numpy(), keep.view(-1).numpy(), out.view(-1).numpy())
    return out


class MaskMul(torch.autograd.Function):
    """``h * keep`` for a float32 CPU tensor ``h`` and a uint8 0/1 mask of the same shape, forward and
    backward as one vectorised loop each: PyTorch's mixed-dtype ``mul`` casts every element through a
    slow path (figures: ``benchmarks/README.md``, ``bench_train.py``)."""

    @staticmethod
    def forward(ctx, h, keep):
        ctx.save_for_backward(keep)
        return _masked(h.detach(), keep)

    @staticmethod
    def backward(ctx, grad):
        (keep,) = ctx.saved_tensors
        return _masked(grad, keep), None


def _cpu_mask_kernel_applies(h: torch.Tensor, keep: torch.Tensor) -> bool:
    """Whether the elementwise numba kernels (:class:`MaskMul`, :class:`ReluKeep`) take ``h`` and ``keep``: a
    float32 CPU tensor and a mask of its very shape (else PyTorch's ops, which broadcast)."""
    return not h.is_cuda and h.dtype == torch.float32 and h.shape == keep.shape


def apply_keep_mask(h: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """``h * keep`` (dropout without its scale): :class:`MaskMul` on CPU float32, PyTorch's ``mul`` otherwise."""
    if not _cpu_mask_kernel_applies(h, keep):
        return h * keep
    return MaskMul.apply(h, keep)


@numba.njit(parallel=True, cache=True)
def _relu_keep(z, keep, out):
    """``out = ReLU(z) * keep`` (flat arrays): the positive entries kept by the mask, zero elsewhere."""
    for i in numba.prange(z.shape[0]):
        v = z[i]
        kept = v * keep[i]  # read both operands either way: a select, not a branch, so the loop vectorises
        out[i] = kept if v > _ZERO else _ZERO


@numba.njit(parallel=True, cache=True)
def _relu_keep_backward(grad, z, keep, out):
    """``out = grad * keep`` where ``z > 0``, zero elsewhere: the mask's backward and then ReLU's, in one pass."""
    for i in numba.prange(z.shape[0]):
        kept = grad[i] * keep[i]
        out[i] = kept if z[i] > _ZERO else _ZERO


class ReluKeep(torch.autograd.Function):
    """``ReLU(z) * keep`` for a float32 CPU tensor ``z`` and a uint8 0/1 mask of its shape: a hidden layer's
    activation and the dropout after it, one pass forward and one backward (``grad * keep`` where ``z > 0``),
    instead of ReLU, the mask product and two backward passes with a new tensor each. The same numbers as
    ``torch.relu`` then :class:`MaskMul` (ReLU's gradient at 0 is 0, as in PyTorch)."""

    @staticmethod
    def forward(ctx, z, keep):
        _match_torch_threads()
        z, keep = z.detach().contiguous(), keep.contiguous()
        out = torch.empty_like(z)
        _relu_keep(z.view(-1).numpy(), keep.view(-1).numpy(), out.view(-1).numpy())
        ctx.save_for_backward(z, keep)
        return out

    @staticmethod
    def backward(ctx, grad):
        z, keep = ctx.saved_tensors
        _match_torch_threads()
        out = torch.empty_like(z)
        _relu_keep_backward(_np(grad).reshape(-1), z.view(-1).numpy(), keep.view(-1).numpy(), out.view(-1).numpy())
        return out, None


def relu_keep(z: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """``ReLU(z) * keep`` (dropout without its scale after a ReLU): :class:`ReluKeep` on CPU float32, PyTorch's
    ops otherwise."""
    if not _cpu_mask_kernel_applies(z, keep):
        return torch.relu(z) * keep
    return ReluKeep.apply(z, keep)


# ----------------------------------------------------------------------------------------------
# GAT's hidden activation: bias, ELU and dropout in two passes
# ----------------------------------------------------------------------------------------------

_ROWS_PER_BLOCK = 512  # rows of one run per parallel block of the passes below


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _bias_keep(h, b, keep, use_mask, out):
    """``out[r, i] = (h[r, i] + b[r]) * keep[r, i]`` (``h``, ``out`` ``[R, N, D]``, ``b`` ``[R, D]``)."""
    R, N, D = h.shape
    blocks = (N + _ROWS_PER_BLOCK - 1) // _ROWS_PER_BLOCK
    for t in numba.prange(R * blocks):
        r, lo = t // blocks, (t % blocks) * _ROWS_PER_BLOCK
        br = b[r]
        for i in range(lo, min(N, lo + _ROWS_PER_BLOCK)):
            hi, oi = h[r, i], out[r, i]
            if use_mask:
                ki = keep[r, i]
                for c in range(D):
                    oi[c] = (hi[c] + br[c]) * ki[c]
            else:
                for c in range(D):
                    oi[c] = hi[c] + br[c]


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _elu_keep_backward(grad, y, keep, use_mask, g_h, g_b_blocks):
    """``g_h = grad * ELU'(v) * keep`` with ``ELU'(v) = 1`` if ``y > 0`` else ``y + 1`` (``y = ELU(v)``:
    :math:`\\frac{d}{dv}(e^v - 1) = e^v = y + 1`), and per block of rows the column sums of ``g_h``
    (``g_b_blocks`` ``[R * blocks, D]``): the bias gradient, summed by the caller."""
    R, N, D = grad.shape
    blocks = (N + _ROWS_PER_BLOCK - 1) // _ROWS_PER_BLOCK
    for t in numba.prange(R * blocks):
        r, lo = t // blocks, (t % blocks) * _ROWS_PER_BLOCK
        acc = np.zeros(D, dtype=grad.dtype)
        for i in range(lo, min(N, lo + _ROWS_PER_BLOCK)):
            gi, yi, oi = grad[r, i], y[r, i], g_h[r, i]
            for c in range(D):
                v = gi[c] if yi[c] > _ZERO else gi[c] * (yi[c] + np.float32(1.0))
                if use_mask:
                    v = v * keep[r, i, c]
                oi[c] = v
                acc[c] += v
        g_b_blocks[t] = acc


class BiasEluKeep(torch.autograd.Function):
    """``y = BiasEluKeep.apply(h, b, keep)`` = ``ELU(h + b) * keep`` for ``h`` ``[R, N, D]``, ``b`` ``[R, 1, D]``
    and a uint8 0/1 ``keep`` of ``h``'s shape (or ``None``): GAT's hidden activation and the dropout after it.

    Forward: one pass writes ``(h + b) * keep``, then PyTorch's vectorised ELU runs in place on it
    (:math:`\\mathrm{ELU}(0) = 0`, so masking first is exact). Backward: one pass for ``h``'s gradient and
    the bias gradient's partial sums, from ``y`` alone. Three passes in all instead of the six of
    ``add``, ``elu``, the mask and their backwards (and one new ``[R, N, D]`` tensor each way, not three).
    """

    @staticmethod
    def forward(ctx, h, b, keep):
        _match_torch_threads()
        use_mask = keep is not None
        y = torch.empty(h.shape, dtype=h.dtype)
        _bias_keep(_np(h), _np(b)[:, 0], _mask_array(keep), use_mask, y.numpy())
        torch.nn.functional.elu(y, inplace=True)
        ctx.save_for_backward(y, keep if use_mask else torch.empty(0))
        ctx.use_mask = use_mask
        return y

    @staticmethod
    def backward(ctx, grad):
        y, keep = ctx.saved_tensors
        _match_torch_threads()
        R, N, D = y.shape
        blocks = -(-N // _ROWS_PER_BLOCK)
        g_h, g_b = torch.empty_like(y), torch.empty(R * blocks, D, dtype=y.dtype)
        _elu_keep_backward(_np(grad), _np(y), _mask_array(keep if ctx.use_mask else None), ctx.use_mask,
                           g_h.numpy(), g_b.numpy())
        return g_h, g_b.view(R, blocks, D).sum(1, keepdim=True), None


def bias_elu_keep(h: torch.Tensor, b: torch.Tensor, keep: torch.Tensor | None) -> torch.Tensor:
    """``ELU(h + b) * keep`` (``keep`` ``None``: no dropout): :class:`BiasEluKeep` on CPU float32, PyTorch's
    ops otherwise."""
    if h.is_cuda or h.dtype != torch.float32 or h.dim() != 3 or (keep is not None and keep.shape != h.shape):
        y = torch.nn.functional.elu(h + b)
        return y if keep is None else y * keep
    return BiasEluKeep.apply(h, b, keep)


@numba.njit(inline="always", fastmath=_FAST)
def _row_sum(e, hi, col, val, hr, o):
    """``o = sum_{e <= t < hi} val[t] * hr[col[t]]`` into the zeroed local accumulator ``o``.

    Four entries per pass, added left to right: the same sum, in the same order, as one entry at a time,
    so the results are bit-identical to the plain loop (and unchanged when zero terms are left out)."""
    D = o.shape[0]
    while e + 4 <= hi:
        v0, v1, v2, v3 = val[e], val[e + 1], val[e + 2], val[e + 3]
        x0, x1, x2, x3 = hr[col[e]], hr[col[e + 1]], hr[col[e + 2]], hr[col[e + 3]]
        for c in range(D):
            o[c] = o[c] + v0 * x0[c] + v1 * x1[c] + v2 * x2[c] + v3 * x3[c]
        e += 4
    while e < hi:
        v, x = val[e], hr[col[e]]
        for c in range(D):
            o[c] = o[c] + v * x[c]
        e += 1


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _spmm(crow, col, val, h, out):
    R, N, D = out.shape
    # one parallel region over (run, row): each thread's contiguous share is run-major, so one run's operand
    # stays in cache; R regions of N rows each cost far more in fork/join than they save (benchmarks/README.md)
    for ri in numba.prange(R * N):
        r = ri // N
        i = ri - r * N
        # a fresh local accumulator: no alias with h or out, so it stays in registers
        o = np.zeros(D, dtype=out.dtype)
        _row_sum(crow[i], crow[i + 1], col, val, h[r], o)
        out[r, i] = o


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _spmm_select(crow, col, val, h, out, rows, rows_ptr):
    """:func:`_spmm` with a matrix and a set of output rows per run: run r multiplies the matrix whose row
    i holds the entries ``crow[r, i]:crow[r, i + 1]`` of ``col`` / ``val`` and writes only the rows
    ``rows[rows_ptr[r]:rows_ptr[r + 1]]`` of ``out[r]`` (the others are left as they are)."""
    R, N, D = out.shape
    for t in numba.prange(rows_ptr[R]):  # one parallel region over every (run, row) pair, as in _spmm
        r = np.searchsorted(rows_ptr, t, side="right") - 1
        i = rows[t]
        cr = crow[r]
        o = np.zeros(D, dtype=out.dtype)
        _row_sum(cr[i], cr[i + 1], col, val, h[r], o)
        out[r, i] = o


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _spmm_plain(crow, col, val, h, out):
    """The plain loop :func:`_spmm` must match bit for bit: one entry at a time, accumulated in ``out``
    (kept as the tests' reference and the baseline of ``bench_spmm.py``)."""
    R, N, D = out.shape
    for ri in numba.prange(R * N):
        r = ri // N
        i = ri - r * N
        o = out[r, i]
        o[:] = _ZERO
        hr = h[r]
        for e in range(crow[i], crow[i + 1]):
            v, x = val[e], hr[col[e]]
            for c in range(D):
                o[c] += v * x[c]


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _project(crow, col, val, w_rows, out):
    """``out[b, r, i] = sum_e val[e] * w_rows[col[e], (r B + b) D : (r B + b + 1) D]`` (``out`` ``[B, R, N, D]``,
    ``w_rows`` ``[F, R * B * D]``): one parallel loop over the output rows, each row's sum for every run and
    block at once in a local accumulator (:func:`_row_sum` on the whole stacked row)."""
    B, R, N, D = out.shape
    width = w_rows.shape[1]
    for i in numba.prange(N):
        o = np.zeros(width, dtype=out.dtype)
        _row_sum(crow[i], crow[i + 1], col, val, w_rows, o)
        for r in range(R):
            for b in range(B):
                lo = (r * B + b) * D
                out[b, r, i] = o[lo:lo + D]


def project(csr: tuple, shape: tuple, w: torch.Tensor, *, blocks: int = 1) -> torch.Tensor:
    """The input projection ``A @ w[r][:, block b]`` for every run r and column block b: sparse ``A``
    ``[n_out, n_in]`` as :func:`csr_arrays`, weights ``w`` ``[R, n_in, blocks * D]`` (float32, CPU) ->
    ``[R, n_out, D]`` for one block, else ``[blocks, R, n_out, D]``.

    :math:`o_{b r i} = \\sum_{e \\in \\mathrm{row}(i)} a_e w_{r, \\mathrm{col}(e), b}`. The weights are first laid
    out by input row (``[n_in, R * blocks * D]``, one copy of ``w``), so each entry of ``A`` reads one contiguous
    row holding every run's and block's weights, and each output row is summed for all runs in one pass over
    its entries. :func:`spmm` per run reads a ``[n_in, D]`` slab at random instead, one run after the other;
    on Coauthor-CS (1.09 M entries, 6,805 inputs, 12 runs x 64 columns) the stacked pass takes about half the
    time (figures: ``benchmarks/README.md``). Each output is the same sum, in the same order, as :func:`spmm`
    gives for it, so the same floats."""
    _match_torch_threads()
    R, n_in, width = w.shape
    w_rows = w.detach().permute(1, 0, 2).reshape(n_in, R * width).contiguous()  # a copy unless R = 1
    d = width // blocks
    out = torch.empty((R, shape[0], d) if blocks == 1 else (blocks, R, shape[0], d), dtype=w.dtype)
    _project(*csr, w_rows.numpy(), out.view(blocks, R, shape[0], d).numpy())
    return out  # not a view: callers add the bias in place


def csr_arrays(a: torch.Tensor) -> tuple:
    """``(crow, col, values)`` numpy views of a CPU CSR tensor, for :func:`spmm`."""
    return _np(a.crow_indices()), _np(a.col_indices()), _np(a.values())


def spmm(csr: tuple, shape: tuple, h: torch.Tensor) -> torch.Tensor:
    """``A @ h[r]`` for every run r: sparse ``A`` ``[n_out, n_in]`` given as :func:`csr_arrays`, dense
    ``h`` ``[R, n_in, d]`` (float32, CPU) -> ``[R, n_out, d]``.

    :math:`o_{r i} = \\sum_{e \\in \\mathrm{row}(i)} a_e h_{r, \\mathrm{col}(e)}`, one parallel loop over all (run, output row)
    pairs, run-major. Faster than PyTorch's CSR matmul for 64-wide operands, because no index
    conversion or output zeroing pass is needed. The row's sum is accumulated in a local array four
    entries per pass (left to right, so bit-identical to one entry at a time), which keeps the partial sum
    in registers instead of reading and writing ``out`` for every entry (figures: ``benchmarks/README.md``,
    ``bench_spmm.py``).
    """
    _match_torch_threads()
    h = h.contiguous()
    out = torch.empty(h.shape[0], shape[0], h.shape[2], dtype=h.dtype)
    _spmm(*csr, _np(h), _np(out))
    return out


@numba.njit(parallel=True, cache=True, fastmath=_FAST)
def _spmm_t(crow, col, val, g, out):
    R, N, D = g.shape
    for r in numba.prange(R):  # each thread owns whole runs: the scatter into out[r] never races
        o, gr = out[r], g[r]
        o[:] = _ZERO
        for i in range(N):
            gi = gr[i]
            for e in range(crow[i], crow[i + 1]):
                v, oj = val[e], o[col[e]]
                for c in range(D):
                    oj[c] += v * gi[c]


def spmm_t(csr: tuple, shape: tuple, g: torch.Tensor) -> torch.Tensor:
    """``A^T @ g[r]`` for every run r, from ``A``'s own CSR (:func:`csr_arrays`; ``A`` ``[n_out, n_in]``,
    ``g`` ``[R, n_out, d]`` -> ``[R, n_in, d]``): row i of ``A`` scatters ``a_e g_{r i}`` into row
    ``col(e)`` of run r's output, parallel over runs.

    The same sums in the same order (each output row adds its terms by increasing i) as :func:`spmm` on
    the transposed CSR, so the same floats; faster when ``A^T``'s output is the smaller operand and there
    are runs for every thread, because the rows of ``g`` stream in order and the scattered-into
    ``[n_in, d]`` output stays in cache (figures: ``benchmarks/README.md``, ``bench_spmm.py``).
    """
    _match_torch_threads()
    g = g.contiguous()
    out = torch.empty(g.shape[0], shape[1], g.shape[2], dtype=g.dtype)
    _spmm_t(*csr, _np(g), out.numpy())
    return out


def spmm_select(crow: np.ndarray, col: np.ndarray, val: np.ndarray, h: torch.Tensor, rows: np.ndarray,
                rows_ptr: np.ndarray, n_out: int) -> torch.Tensor:
    """``o_{r i} = \\sum_{e \\in \\mathrm{row}_r(i)} a_e h_{r, \\mathrm{col}(e)}`` for the rows
    ``i \\in rows[rows_ptr[r]:rows_ptr[r + 1]]`` of each run r, zero elsewhere: ``h`` ``[R, n_in, d]``
    (float32, CPU) -> ``[R, n_out, d]``, run r's matrix given by ``crow[r]`` (``[R, n_out + 1]`` offsets into
    ``col`` / ``val``; see :func:`_spmm_select`). Each computed row is the same sum, in the same order, as
    :func:`spmm` gives for it."""
    _match_torch_threads()
    h = h.contiguous()
    out = torch.zeros(h.shape[0], n_out, h.shape[2], dtype=h.dtype)
    # one layout for every caller (a broadcast view, a gathered copy, a one-run view): numba compiles, or loads
    # from its cache, one kernel per argument layout, and each compile costs seconds
    crow = np.require(crow, np.int64, ["C", "W"])
    _spmm_select(crow, col, val, _np(h), _np(out), rows, rows_ptr)
    return out
