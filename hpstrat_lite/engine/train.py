"""Stage 5 of the data flow: train many runs of one (dataset, model) as one batched model.

:func:`train_runs` trains R runs (one column of the ``[N, R]`` masks and one seed each) of one
architecture from :mod:`hpstrat_lite.engine.models` together. The HpStrat protocol (Section 5 of the paper):
Adam (lr 0.01, weight decay 5e-4), cross-entropy on the training nodes, at most 1000 epochs, early
stopping with patience 100 on the validation loss, and the test accuracy measured once with the
weights of the epoch of lowest validation loss.

How R runs become one model
---------------------------
* Parameters of all runs are stacked along a run axis; the loss is the *sum* of the runs'
  mean cross-entropies, so the gradient of run r's parameters is exactly the gradient of its own
  loss. One Adam optimises all stacked parameters: Adam (with L2 weight decay) is elementwise, so
  this is R independent Adams.
* Each run keeps its own early-stopping state (best validation loss, epoch, patience counter) and a
  snapshot of its best weights. A stopped run's loss is masked out of the sum and its snapshot is
  final; at the end of the epoch in which a run stops, it is dropped from the model and from Adam's
  state (so a batch costs what its active runs cost, at the price of one extra trunk pass per
  drop); the batch ends when every run has stopped.
* Everything before a model's first dropout (its *trunk*: the input projection ``X @ W_in``, the
  only product with the feature matrix, and for instance GCN's first propagation or all of H2GCN's
  1- and 2-hop products) depends on the weights only, not on dropout, so it is computed once per
  epoch: the evaluation of epoch t and the training step of epoch t + 1 share it. GAT on CPU goes one
  step further: its first attention layer sees the same inputs in both passes, so the evaluation pass
  draws the next step's dropout mask ahead (:meth:`hpstrat_lite.engine.models.RunRandom.peek`, the same bits)
  and computes both outputs in one pass over the edges (:func:`hpstrat_lite.engine.kernels.gat_layer_ahead`).
* Products whose output only the runs' training and validation rows read (H2GCN's last round, which
  feeds the classifier alone) compute those rows only, and their backward pass gathers only the training
  rows, where the gradient can be non-zero (:class:`hpstrat_lite.engine.models.RunRows`): the same floats for
  a fraction of the rows (figures: ``benchmarks/README.md``, ``bench_spmm.py``). The final
  test pass computes every row.
* Runs whose activations would not fit a memory budget (H2GCN on large graphs; GAT on CUDA, where
  its attention is a few tensors per edge, run and head) are split into several batches; results
  do not depend on the split. On CPU, GAT's attention is one fused kernel per layer
  (:mod:`hpstrat_lite.engine.kernels`) that keeps no per-edge tensor but the dropout mask.
* Small batches train on one CPU thread (``num_threads="auto"``): their ops are too small to
  share, and on a busy machine a second OpenMP thread mostly waits.
* With ``checkpoint=`` (the experiment runner always sets it) a batch saves its whole training
  state every :data:`CHECKPOINT_SECONDS` and a repeated call continues from it with the same numbers.
* ``precision="bfloat16"`` is mixed-precision training (:func:`hpstrat_lite.engine.models.matmul_precision`):
  the dense matrix products take bfloat16 operands (float32 accumulation), an MLP's hidden
  activations stay bfloat16, and parameters, Adam, sparse products and losses stay float32. It pays on
  CPUs with AMX units (or GPUs) for the wide MLPs and GCNs of Part II, whose time is dense products
  (figures: ``benchmarks/README.md``, ``bench_precision.py``); the default float32 is the reference the
  committed results use.
* Features and graph operators (normalised adjacency, H2GCN's 2-hop matrix, GAT's edge blocks) are
  built once per dataset and device and cached, keyed by the identity of ``data.x`` /
  ``data.edge_index``.
* While a batch trains, glibc keeps the memory of freed activations mapped for the next epoch
  (:func:`reuse_freed_memory`; on CPU unless ``Execution(reuse_freed_memory=False)``) instead of unmapping it
  and page-faulting it in again: the same numbers, without a page fault per page per epoch, at the price of a
  higher peak memory (figures: ``benchmarks/README.md``, ``bench_memory.py``).
"""
from __future__ import annotations

import contextlib
import json
import math
import time
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path

import torch

from .._io import atomic_write
from ..protocol import PAPER_PROTOCOL, Execution, Protocol, check_protocol_value
from ..core._validate import check_choice, check_int, check_training_fields
from . import models as _models
from ..data.feature_layout import engine_features
from .models import (BF16_CPU_FLAGS, MODELS, PRECISIONS, build_model, check_model, check_precision, matmul_precision,
                     native_bfloat16)
from .metrics import run_scores
from .operators import RunRows, SparseOp, graph_operators
from .randomness import RunRandom
from .runs import (SMALL_BATCH_ENTRIES, check_graph_runs as _check_graph_runs, data_fingerprint as _data_fingerprint,
                   resolve_device, torch_threads as _torch_threads)
from .user_models import train_factory_runs

__all__ = ["MODELS", "FEATURE_NORMS", "PRECISIONS", "Features", "checkpoint_batches", "resolve_device",
           "reuse_freed_memory", "reuse_freed_memory_applies", "train_runs"]

FEATURE_NORMS = (None, "row", "standard")

#: Budget (float32 entries) of the largest per-batch activation; batches are split to stay under it.
ACTIVATION_BUDGET = 2 ** 27


# ----------------------------------------------------------------------------------------------
# Input checks
# ----------------------------------------------------------------------------------------------

# ----------------------------------------------------------------------------------------------
# Features
# ----------------------------------------------------------------------------------------------

#: Sparse features denser than this (share of non-zero entries) are multiplied as a dense matrix:
#: Amazon Photo / Computers ship as sparse tensors with 35% non-zeros, where MKL's dense GEMM is about
#: twice as fast as the CSR kernel; the bag-of-words of Cora or Coauthor (about 1% or less) stay sparse.
DENSE_ABOVE = 0.2


def _density(x: torch.Tensor) -> float:
    nnz = x._nnz() if x.layout == torch.sparse_coo else x.values().numel()
    return nnz / max(1, x.shape[0] * x.shape[1])


class Features:
    """The node features on a device, ready for the input projection ``X @ W`` of all runs.

    Sparse features (torch sparse CSR or COO) stay sparse: the projection is one CSR-times-dense
    matmul whose backward uses a precomputed ``X^T`` (CSR); only features denser than
    :data:`DENSE_ABOVE` are densified. ``feature_norm``:

    * ``None``: raw features;
    * ``"row"``: each row divided by its sum of absolute values (L1; rows of zeros stay zero),
      sparsity kept;
    * ``"standard"``: each column standardised over all nodes, :math:`(x - \\mu) / \\sigma`
      (constant columns become zero). For sparse features the centring is folded into the product,
      :math:`X_{std} W = X (s \\odot W) - \\mu^\\top (s \\odot W)` with :math:`s = 1/\\sigma` (0 for a
      constant column), so X stays sparse.
    """

    def __init__(self, x, feature_norm, device):
        check_choice(feature_norm, "feature_norm", FEATURE_NORMS)
        if not torch.is_tensor(x):
            raise ValueError(f"data.x must be a torch tensor of node features; got {type(x).__name__}.")
        sparse = x.layout in (torch.sparse_csr, torch.sparse_coo)
        if x.dim() != 2:
            raise ValueError(f"data.x must be a 2-D [num_nodes, num_features] tensor; got shape {tuple(x.shape)}.")
        if sparse and _density(x) > DENSE_ABOVE:
            x, sparse = x.to_dense(), False  # a dense GEMM beats a sparse kernel on such a matrix
        self.shape = tuple(x.shape)
        self.shift = None
        self._dense_lowp = None
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta.*")
            if sparse:
                coo = x.to_sparse_coo().coalesce().to(torch.float32).cpu()
                idx, val = coo.indices(), coo.values()
                n, d = self.shape
                if feature_norm == "row":
                    rs = torch.zeros(n).index_add_(0, idx[0], val.abs())
                    val = val / rs.clamp(min=1e-12)[idx[0]]
                self.scale = None
                if feature_norm == "standard":
                    mu = torch.zeros(d, dtype=torch.float64).index_add_(0, idx[1], val.double()) / n
                    sq = torch.zeros(d, dtype=torch.float64).index_add_(0, idx[1], val.double() ** 2) / n
                    sd = (sq - mu ** 2).clamp(min=0).sqrt()
                    s = torch.where(sd > 0, 1.0 / sd.clamp(min=1e-300), torch.zeros_like(sd))
                    self.scale = s.float().to(device)
                    self.shift = mu.float().to(device)
                self.op = SparseOp.from_edges(idx[0], idx[1], val, self.shape, device)
                self.dense = None
            else:
                xd = x.to(torch.float32)
                if feature_norm == "row":
                    xd = xd / xd.abs().sum(1, keepdim=True).clamp(min=1e-12)
                elif feature_norm == "standard":
                    sd = xd.std(0, unbiased=False)
                    xd = torch.where(sd > 0, (xd - xd.mean(0)) / sd.clamp(min=1e-30), torch.zeros_like(xd))
                self.dense = xd.contiguous().to(device)
                self.op = None

    def project(self, w: torch.Tensor, blocks: int = 1) -> torch.Tensor:
        """``X_norm @ w[r]`` for all runs' input weights ``w`` ``[R, F, blocks * c]``: ``[R, N, c]`` for one
        block, else ``[blocks, R, N, c]`` (block-major, see :meth:`SparseOp.project`)."""
        if self.dense is not None:
            # One GEMM X [N, F] @ [F, R * width] for all runs: torch.matmul(X, w) would broadcast X to
            # [R, N, F] (a copy of X per run, forward and backward) and run R small products.
            R, f, width = w.shape
            w2 = w.permute(1, 0, 2).reshape(f, R * width)
            if _models._MATMUL_DTYPE is None:
                out = torch.mm(self.dense, w2).view(-1, R, width)
            else:  # the rounded feature matrix is made once (0/1 bag-of-words entries stay exact)
                if self._dense_lowp is None or self._dense_lowp.dtype != _models._MATMUL_DTYPE:
                    self._dense_lowp = _models.lowp(self.dense)
                out = torch.mm(self._dense_lowp, _models.lowp(w2)).view(-1, R, width)
            out = out.transpose(0, 1) if blocks == 1 else out.view(-1, R, blocks, width // blocks).permute(2, 1, 0, 3)
            if out.dtype == torch.float32:
                return out.contiguous()
            return out.to(torch.float32, memory_format=torch.contiguous_format)  # cast and run-major copy in one pass
        if self.shift is None:
            return self.op.project(w, blocks)
        ws = w * self.scale[None, :, None]
        shift = torch.matmul(self.shift, ws)  # [R, blocks * c]
        shift = shift.unsqueeze(1) if blocks == 1 else shift.view(w.shape[0], blocks, -1).transpose(0, 1).unsqueeze(2)
        return self.op.project(ws, blocks) - shift


_FEATURE_CACHE: dict = {}


def features(x, feature_norm, device) -> Features:
    """:class:`Features` of ``x``, built once per tensor, normalisation and device (cached while ``x`` lives)."""
    key = id(x)
    if key not in _FEATURE_CACHE:
        _FEATURE_CACHE[key] = {}
        weakref.finalize(x, _FEATURE_CACHE.pop, key, None)
    cache = _FEATURE_CACHE[key]
    ck = (feature_norm, str(device))
    if ck not in cache:  # a dense x made from sparse features is multiplied in that sparse form
        cache[ck] = Features(engine_features(x), feature_norm, device)
    return cache[ck]


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------

def _run_losses(logits: torch.Tensor, y: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Per-run mean cross-entropy: ``logits`` ``[R, N, C]``, ``weight`` ``[R, N]`` = mask / mask count.

    The log-softmax runs over dim 1 of the ``[R, C, N]`` transpose: torch's kernel is about 10x
    faster there than over a last dimension of a few classes.
    """
    logp = torch.log_softmax(logits.transpose(1, 2).contiguous(), dim=1)  # [R, C, N]
    nll = -logp.gather(1, y.view(1, 1, -1).expand(logits.shape[0], 1, -1)).squeeze(1)  # [R, N]
    return (torch.where(weight > 0, nll, 0.0) * weight).sum(1)


def _detach(state):
    return tuple(t.detach() for t in state) if isinstance(state, tuple) else state.detach()


def _activation_per_run(model: str, n: int, ops: dict, hidden: int, num_layers: int,
                        device_type: str = "cpu") -> int:
    """Rough size (float32 entries) of the largest activation of one run, to split big batches."""
    if model == "GAT" and device_type == "cuda":  # a few [heads, E] attention tensors and CSR indices per run
        return ops["gat"].num_edges * 8 * 4
    if model == "GAT":  # fused CPU kernel: node-level states and a [heads, E] uint8 dropout mask per run
        return n * hidden * 4 + ops["gat"].num_edges * 2
    if model == "H2GCN":
        return n * hidden * (2 ** (num_layers + 1) - 1)
    if model == "MixHop":
        return n * hidden * 3
    return n * hidden * 2


#: glibc's ``mallopt`` parameters (``<malloc.h>``).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -3, -4
#: Set on the way out of :func:`reuse_freed_memory`: glibc's default count of mmapped blocks, and the mmap and trim
#: thresholds at which glibc's own dynamic rule settles in a process that frees large blocks (64-bit
#: ``DEFAULT_MMAP_THRESHOLD_MAX`` = 32 MiB, trim threshold twice the mmap threshold). Any ``mallopt`` call turns that
#: dynamic rule off for good, so these are set explicitly instead of the 128 KiB start values.
_AFTER_REUSE = {_M_MMAP_MAX: 65536, _M_MMAP_THRESHOLD: 32 * 2 ** 20, _M_TRIM_THRESHOLD: 64 * 2 ** 20}
_LIBC = []  # [ctypes.CDLL or None], looked up once


def _libc_mallopt():
    """glibc's ``mallopt`` and ``malloc_trim`` (``None`` where the C library has no ``mallopt``: macOS,
    Windows)."""
    if not _LIBC:
        import ctypes
        import ctypes.util

        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC.append(libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None)
        except OSError:
            _LIBC.append(None)
    return _LIBC[0]


def reuse_freed_memory_applies(setting, device) -> bool:
    """Whether a call with ``Execution(reuse_freed_memory=setting)`` trains inside :func:`reuse_freed_memory`:
    ``True`` / ``False`` as given; ``"auto"`` (the default) on CPU, where activations live in host memory."""
    if isinstance(setting, bool):
        return setting
    if isinstance(setting, str) and setting == "auto":
        return torch.device(device).type == "cpu"
    raise ValueError(f"reuse_freed_memory must be 'auto', True or False; got {setting!r}.")


@contextlib.contextmanager
def reuse_freed_memory(enabled: bool = True):
    """Run the block with glibc's allocator keeping freed memory for reuse instead of returning it.

    An epoch allocates and frees the same large activations (``[R, N, d]`` float32 tensors of megabytes to
    hundreds of MB) every time. With glibc's defaults a block above its mmap threshold comes from a fresh
    ``mmap`` and is unmapped when freed, and freed memory at the top of the heap is returned to the system, so
    every epoch pays a page fault per 4 KiB page at first touch (Cora GCN, 12 runs: about 3,000-5,000 faults
    and 13-20 ms of system time per epoch; the dropout output of H2GCN's ``[12, 13752, 448]`` concatenation
    on Amazon-Computers, 0.4 s). Inside the block ``mallopt(M_MMAP_MAX, 0)`` (no ``mmap`` for large blocks: they
    come from the heap) and ``mallopt(M_TRIM_THRESHOLD, 2 GiB)`` (freed heap memory is not given back), so from
    the second epoch on the activations land in pages already mapped. On exit ``malloc_trim(0)`` returns the
    memory to the system and the thresholds are set to :data:`_AFTER_REUSE`. Same numbers (only where the
    memory comes from changes; torch aligns every tensor to 64 bytes either way), at the price of a higher
    peak resident memory (up to 1.3-1.6x on the largest graphs; figures: ``benchmarks/README.md``,
    ``bench_memory.py``).

    :func:`train_runs` enters it unless ``Execution(reuse_freed_memory=False)`` (the default ``"auto"``: on CPU,
    :func:`reuse_freed_memory_applies`); ``enabled=False`` and a C library without ``mallopt`` make it a no-op.
    """
    libc = _libc_mallopt() if enabled else None
    if libc is None:
        yield
        return
    libc.mallopt(_M_MMAP_MAX, 0)
    libc.mallopt(_M_TRIM_THRESHOLD, 2 ** 31 - 1)  # a C int: 2 GiB
    try:
        yield
    finally:
        libc.malloc_trim(0)
        for param, value in _AFTER_REUSE.items():
            libc.mallopt(param, value)


def _batches(runs: int, per_run: int, runs_per_batch) -> list[range]:
    if runs_per_batch is None:
        runs_per_batch = max(1, ACTIVATION_BUDGET // max(per_run, 1))
    n_batches = math.ceil(runs / runs_per_batch)
    size = math.ceil(runs / n_batches)
    return [range(i, min(i + size, runs)) for i in range(0, runs, size)]


def _optimizer(model, hp):
    """One Adam over all stacked parameters (no weight decay on ``model.no_decay``), in PyTorch's multi-tensor
    (``foreach``) form: the same floats as its default one-tensor-at-a-time loop on CPU, in about half the time
    (``benchmarks/README.md``)."""
    decay = [p for k, p in model.named_parameters() if k not in model.no_decay]
    no_decay = [p for k, p in model.named_parameters() if k in model.no_decay]
    groups = [{"params": decay, "weight_decay": hp["weight_decay"]}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    return torch.optim.Adam(groups, lr=hp["lr"], foreach=True)


def _compact(model, opt, keep, hp):
    """Keep only runs ``keep`` (slot indices) in ``model`` and in Adam's state; returns the new Adam.

    Runs are independent and Adam is elementwise, so dropping stopped runs changes nothing for the
    others; it only stops paying for them.
    """
    old = dict(model.named_parameters())
    states = {k: opt.state.get(p, {}) for k, p in old.items()}
    for k, p in old.items():
        model._parameters[k] = torch.nn.Parameter(p.detach()[keep].clone())
    model.R = int(keep.numel())
    new_opt = _optimizer(model, hp)
    for k, p in model.named_parameters():
        new_opt.state[p] = {key: (v[keep].clone() if torch.is_tensor(v) and v.dim() > 0 else
                                  v.clone() if torch.is_tensor(v) else v) for key, v in states[k].items()}
    return new_opt


#: With ``checkpoint=`` set, a batch saves its training state at most this often (seconds of wall time).
CHECKPOINT_SECONDS = 300.0


#: Parameters with at least this many entries per run have their improved runs copied one run at a time by
#: :func:`_keep_best` (each run's slab is one contiguous block): on Cora GAT's ``[12, 1433, 64]`` input weights
#: with half the runs improved, 0.26-0.32 ms against 0.89-0.91 ms for ``torch.where`` over every run, which reads
#: both tensors whole (``benchmarks/README.md``).
RUN_COPY_MIN = 16384


def _keep_best(best: dict, model, improved, idx, orig, aligned: bool) -> None:
    """Copy the weights of the runs that ``improved`` (their slots ``idx``, original indices ``orig``) into
    ``best`` in place, with no new tensor: a plain copy when every run improved (and no run has been dropped:
    ``aligned``, slot r is run r); otherwise, for a parameter of at least :data:`RUN_COPY_MIN` entries per run,
    one copy per improved run; for a smaller one ``torch.where`` over the run axis (aligned) or a gather and a
    scatter."""
    every = aligned and idx.numel() == improved.numel()
    pairs = None
    for k, p in model.named_parameters():
        p = p.detach()
        if every:
            best[k].copy_(p)
        elif p[0].numel() >= RUN_COPY_MIN:
            pairs = pairs or list(zip(idx.tolist(), orig.tolist()))
            for slot, run in pairs:
                best[k][run].copy_(p[slot])
        elif aligned:
            torch.where(improved.view(-1, *([1] * (p.dim() - 1))), p, best[k], out=best[k])
        else:
            best[k].index_copy_(0, orig, p.index_select(0, idx))


def _batch_key(model_name, masks, seeds, hp, feature_norm, num_classes) -> str:
    """A name for one batch's checkpoint: a hash of everything that determines its runs."""
    import hashlib

    digest = hashlib.sha1()
    digest.update(repr((model_name, list(seeds), sorted(hp.items()), feature_norm, num_classes,
                        tuple(masks.shape))).encode())
    digest.update(masks.cpu().numpy().tobytes())
    return f"{model_name}-{digest.hexdigest()[:16]}"


def _save_checkpoint(path, model, opt, rnd, loop, fingerprint=None) -> None:
    """Atomically save a batch's training state (active runs' weights, Adam state, dropout generators,
    early-stopping bookkeeping) so that :func:`_train_batch` can continue it bit for bit."""
    params = dict(model.named_parameters())
    state = {"params": {k: p.detach().cpu() for k, p in params.items()}, "R": model.R,
             "adam": {k: {key: (v.cpu() if torch.is_tensor(v) else v) for key, v in opt.state.get(p, {}).items()}
                      for k, p in params.items()},
             "gens": rnd.states(), "data": fingerprint,
             "loop": {k: (v.cpu() if torch.is_tensor(v) else
                          {kk: vv.cpu() for kk, vv in v.items()} if isinstance(v, dict) else v)
                      for k, v in loop.items()}}
    atomic_write(path, lambda tmp: torch.save(state, tmp))


def _load_checkpoint(path, model, rnd, hp, device, fingerprint=None):
    """Restore :func:`_save_checkpoint`'s state into a freshly built ``model``; returns (Adam, loop), or
    None (with a warning) when the checkpoint was written for other data."""
    state = torch.load(path, map_location=device, weights_only=False)
    if state.get("data") is not None and fingerprint is not None and state["data"] != fingerprint:
        warnings.warn(f"checkpoint {path} was written for other data (graph or features); training from "
                      "the start and overwriting it.", stacklevel=3)
        return None
    for k, p in state["params"].items():
        model._parameters[k] = torch.nn.Parameter(p.to(device))
    model.R = state["R"]
    opt = _optimizer(model, hp)
    for k, p in model.named_parameters():
        opt.state[p] = {key: (v.to(device) if torch.is_tensor(v) and v.dim() > 0 else v)
                        for key, v in state["adam"][k].items()}
    rnd.gens = rnd.gens[:len(state["gens"])]
    for g, g_state in zip(rnd.gens, state["gens"]):
        g.set_state(g_state)
    return opt, state["loop"]


def checkpoint_batches(folder) -> list[dict]:
    """The batches of :func:`train_runs` calls that are training, or were when they stopped, in a checkpoint
    ``folder`` (``execution.checkpoint``; the sweep's ``results/.<file>.checkpoints/``). A batch saves its state
    as ``<key>.pt`` every :data:`CHECKPOINT_SECONDS`, keeps its rows in ``<key>.rows.json`` once it has
    finished, and both are deleted when every batch of the call has finished.

    One dict per batch: ``batch`` (the key: model and a hash of the batch's runs), ``model``, ``state``
    ("training": a ``.pt`` state a repeated call continues from; "finished": rows waiting for the call's other
    batches), ``runs``, ``stopped`` (runs stopped early), ``epochs`` (training steps done), ``minutes``
    (training time so far) and ``saved`` (the file's modification time, seconds since the epoch). An absent
    folder gives none."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    finished = {path.name.split(".")[0] for path in folder.glob("*.rows.json")}
    batches = []
    for path in sorted(folder.glob("*.pt")) + sorted(folder.glob("*.rows.json")):
        key = path.name.split(".")[0]
        if path.suffix == ".pt" and key in finished:  # its last state, kept until the call's batches all finish
            continue
        batch = {"batch": key, "model": key.rsplit("-", 1)[0], "saved": path.stat().st_mtime}
        if path.suffix == ".pt":
            loop = torch.load(path, map_location="cpu", weights_only=False)["loop"]
            batch.update(state="training", runs=len(loop["stopped"]), stopped=int(loop["stopped"].sum()),
                         epochs=int(loop["epoch"]), minutes=float(loop["seconds"]) / 60)
        else:
            part = json.loads(path.read_text())["rows"]
            batch.update(state="finished", runs=len(part), stopped=len(part),
                         epochs=max(int(r["epochs_run"]) for r in part),
                         minutes=float(part[0]["batch_seconds"]) / 60)
        batches.append(batch)
    return batches


def _train_batch(model_name, feats, y, masks, seeds, ops, num_classes, hp, device, progress, desc,
                 checkpoint=None, fingerprint=None):
    """Train one batch of runs; returns per-run result dicts (without the run/seed bookkeeping).

    With ``checkpoint`` (a file path), the training state is saved there every
    :data:`CHECKPOINT_SECONDS` and, when the file exists at the start, training continues from it
    (same numbers as an uninterrupted batch; ``seconds`` counts the time before the interruption too)."""
    t0 = time.perf_counter()
    R = len(seeds)
    model = build_model(model_name, seeds, feats.shape[1], num_classes, ops, hidden=hp["hidden"],
                        num_layers=hp["num_layers"], dropout=hp["dropout"]).to(device)
    masks = masks.transpose(1, 2).to(device)  # [3, R, N]
    all_weights = masks.float() / masks.sum(2, keepdim=True).float()
    weights = all_weights
    opt = _optimizer(model, hp)
    rnd = RunRandom(seeds, device)
    best = {k: p.detach().clone() for k, p in model.named_parameters()}  # per run, by original index
    best_loss = torch.full((R,), math.inf, device=device)
    best_epoch = torch.zeros(R, dtype=torch.long, device=device)
    bad = torch.zeros(R, dtype=torch.long, device=device)
    stopped = torch.zeros(R, dtype=torch.bool, device=device)
    epochs_run = torch.full((R,), hp["max_epochs"], dtype=torch.long, device=device)
    slots = torch.arange(R, device=device)  # original index of each run still in the model
    patience = hp["patience"]
    start_epoch, spent = 1, 0.0
    resumed = _load_checkpoint(checkpoint, model, rnd, hp, device, fingerprint) if (
        checkpoint is not None and checkpoint.exists()) else None
    if resumed is not None:
        opt, loop = resumed
        best, best_loss, best_epoch, bad = loop["best"], loop["best_loss"], loop["best_epoch"], loop["bad"]
        stopped, epochs_run, slots = loop["stopped"], loop["epochs_run"], loop["slots"]
        weights = all_weights[:, slots]
        start_epoch, spent = loop["epoch"] + 1, loop["seconds"]
    saved_at = time.perf_counter()
    # between the test pass's full products, only the rows a run trains or validates on are computed
    model.rows = RunRows(masks[0] | masks[1], masks[0]).subset(slots.cpu())

    def trunk():
        return model.trunk(feats.project(model.w_in, model.in_blocks))

    def evaluate(state, epoch):
        """Early-stopping bookkeeping for the weights after ``epoch`` training steps."""
        with torch.no_grad():
            model.lookahead = rnd
            try:
                vl = _run_losses(model.head(_detach(state), None), y, weights[1])
            finally:
                model.lookahead = None
            active = ~stopped[slots]
            improved = (vl < best_loss[slots]) & active
            if bool(improved.any()):
                idx = improved.nonzero().view(-1)
                orig = slots[idx]
                _keep_best(best, model, improved, idx, orig, slots.numel() == R)
                best_loss[orig] = vl[idx]
                best_epoch[orig] = epoch
            bad[slots] = torch.where(improved, 0, bad[slots] + active.long())
            if patience is not None:
                newly = slots[active & (bad[slots] >= patience)]
                epochs_run[newly] = epoch
                stopped[newly] = True
        return bool(stopped.all())

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=hp["max_epochs"], initial=start_epoch - 1, desc=desc, leave=False)
    state = trunk()
    for epoch in range(start_epoch, hp["max_epochs"] + 1):
        logits = model.head(state, rnd)
        loss = (_run_losses(logits, y, weights[0]) * (~stopped[slots]).float()).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        del logits, loss, state
        opt.step()
        state = trunk()  # weights after this step: evaluated now, trained on at the next epoch
        done = evaluate(state, epoch)
        if bar is not None:
            bar.update(1)
            bar.set_postfix(active=int((~stopped).sum()))
        if done:
            break
        keep = (~stopped[slots]).nonzero().view(-1)
        if keep.numel() < slots.numel():  # drop the runs that stopped this epoch from the batch
            del state
            opt = _compact(model, opt, keep, hp)
            rnd.subset(keep.tolist())
            model.rows = model.rows.subset(keep.cpu())
            slots, weights = slots[keep], weights[:, keep]
            state = trunk()
        if checkpoint is not None and time.perf_counter() - saved_at >= CHECKPOINT_SECONDS:
            _save_checkpoint(checkpoint, model, opt, rnd, {
                "epoch": epoch, "seconds": spent + time.perf_counter() - t0, "best": best, "best_loss": best_loss,
                "best_epoch": best_epoch, "bad": bad, "stopped": stopped, "epochs_run": epochs_run, "slots": slots},
                fingerprint)
            saved_at = time.perf_counter()
    if bar is not None:
        bar.close()

    with torch.no_grad():  # test once, with each run's best weights
        for k in best:
            model._parameters[k] = torch.nn.Parameter(best[k])
        model.R, model.rows, model.ahead = R, None, None
        logits = model.head(trunk(), None)
        losses = [_run_losses(logits, y, all_weights[i]) for i in range(3)]
        correct = (logits.argmax(-1) == y[None, :]).float()  # [R, N]
        accs = [(correct * all_weights[i]).sum(1) for i in range(3)]
        probs = torch.softmax(logits, -1).cpu().numpy()
    scores = run_scores(probs, y.cpu().numpy(), [masks[1].cpu().numpy(), masks[2].cpu().numpy()])
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    wall = spent + time.perf_counter() - t0
    rows = []
    cols = {"train_acc": accs[0], "val_acc": accs[1], "test_acc": accs[2], "train_loss": losses[0],
            "val_loss": losses[1], "test_loss": losses[2], "best_epoch": best_epoch, "epochs_run": epochs_run}
    cols = {k: v.cpu().tolist() for k, v in cols.items()}
    for r in range(R):
        row = {k: v[r] for k, v in cols.items()}
        row.update({k: v for k, v in scores[r].items() if k not in row})  # accuracy: the torch figure above
        row.update(stopped_early=bool(stopped[r]), seconds=wall / R, batch_seconds=wall, batch_size=R)
        rows.append(row)
    return rows


def train_runs(data, model: str | Callable[[int, int], torch.nn.Module], train_mask, val_mask, test_mask, seeds, *,
               protocol: Protocol = PAPER_PROTOCOL, execution: Execution | None = None) -> list[dict]:
    """Train R runs of ``model`` on the graph ``data``, all in one batched model.

    Run r trains on ``train_mask[:, r]``, early-stops on the cross-entropy over ``val_mask[:, r]``
    (patience ``patience``, at most ``max_epochs`` epochs) and is tested once on ``test_mask[:, r]``
    with the weights of its epoch of lowest validation loss. Its weights and dropout masks come from
    ``seeds[r]`` alone, so it gives the same numbers (up to float rounding) in any batch as alone.

    Parameters
    ----------
    data : torch_geometric.data.Data
        ``x`` (dense, or sparse CSR/COO: kept sparse; the dense ``x`` of :func:`hpstrat_lite.load_dataset`
        is multiplied in the sparse form it was made from, :mod:`hpstrat_lite.data.feature_layout`), ``edge_index`` (messages flow
        ``edge_index[0] -> edge_index[1]``; :func:`hpstrat_lite.load_dataset` gives the undirected
        simple graph), ``y`` (class ids ``0..C-1``).
    model : str or callable
        One of :data:`hpstrat_lite.engine.models.MODELS`, or a factory ``factory(in_channels, out_channels)``
        returning a ``torch.nn.Module`` whose ``forward(x, edge_index)`` gives logits: its runs are
        trained one at a time under the same protocol (:func:`hpstrat_lite.engine.user_models.train_factory_runs`;
        ``hidden``, ``num_layers``, ``dropout``, ``feature_norm``, ``runs_per_batch`` and ``precision`` do
        not apply to it; ``checkpoint`` saves each finished run).
    train_mask, val_mask, test_mask : torch.Tensor of bool, shape ``[N, R]`` (or ``[N]`` for R = 1)
        One column per run (PyG's multi-split layout, e.g. :func:`hpstrat_lite.fold_masks`).
    seeds : sequence of int
        R non-negative seeds, one per run (initial weights and dropout masks).
    protocol : Protocol
        The training protocol (:class:`hpstrat_lite.protocol.Protocol`; default the paper's,
        :data:`hpstrat_lite.protocol.PAPER_PROTOCOL`): ``hidden``, ``num_layers``, ``dropout``, Adam's ``lr``
        and ``weight_decay``, ``max_epochs``, ``patience`` (stop a run after this many epochs without a
        strictly lower validation loss; ``None`` trains every run for exactly ``max_epochs`` epochs) and
        ``feature_norm`` (see :class:`Features`). ``k`` and ``n_bins`` concern the splits, not this call.
    execution : Execution, optional
        How the runs train (:class:`hpstrat_lite.protocol.Execution`): ``device``; ``progress`` (a tqdm bar
        over epochs); ``runs_per_batch`` (largest number of runs trained together; by default as many as
        fit :data:`ACTIVATION_BUDGET`: all of them except for H2GCN, and GAT on CUDA, on large graphs);
        ``num_threads`` (``"auto"`` uses 1 for small batches, see :data:`SMALL_BATCH_ENTRIES`);
        ``checkpoint`` (a folder where each batch saves its training state every :data:`CHECKPOINT_SECONDS`
        and its rows when it finishes: a call killed midway and repeated with the same arguments continues
        from there and returns the same numbers; the files are removed when the call returns);
        ``precision`` (of the dense matrix products, :func:`hpstrat_lite.engine.models.matmul_precision`:
        ``"bfloat16"`` is mixed-precision training, bfloat16 operands with float32 accumulation, parameters,
        sparse products and losses, several times faster on CPUs with AMX and on GPUs; its numbers differ
        from float32 training at the level of run-to-run noise); ``reuse_freed_memory`` (default ``"auto"``: on
        CPU, glibc keeps the memory of freed activations mapped while a built-in model's batch trains,
        :func:`reuse_freed_memory`; ``False`` leaves the allocator alone). Default
        :class:`~hpstrat_lite.protocol.Execution()`.

    Returns
    -------
    list of dict
        One dict per run, in mask-column order: ``run``, ``seed``, ``model``, ``best_epoch``,
        ``epochs_run``, ``stopped_early``, ``train_acc``, ``val_acc``, ``test_acc``,
        ``train_loss``, ``val_loss``, ``test_loss``, and on validation and test the other scores of
        :data:`hpstrat_lite.engine.metrics.METRICS` (``val_balanced_acc``, ``test_macro_f1``,
        ``test_roc_auc``, ...; all measured with the best weights),
        ``seconds`` (its batch's wall time / batch size), ``batch_seconds``, ``batch_size``,
        ``device``, ``precision``.

    Examples
    --------
    >>> from hpstrat_lite import load_dataset, random_folds, fold_masks   # doctest: +SKIP
    >>> data = load_dataset("Cora")                                       # doctest: +SKIP
    >>> tr, va, te = fold_masks(random_folds(data.y, k=4, seed=0), k=4)    # doctest: +SKIP
    >>> rows = train_runs(data, "GCN", tr, va, te, seeds=[0, 1, 2, 3])     # doctest: +SKIP
    >>> quick = PAPER_PROTOCOL.replace(max_epochs=200, patience=20)         # doctest: +SKIP
    >>> rows = train_runs(data, "GCN", tr, va, te, seeds=[0, 1, 2, 3], protocol=quick,
    ...                   execution=Execution(device="cpu", runs_per_batch=2))  # doctest: +SKIP
    """
    protocol, execution = check_protocol_value(protocol, execution=execution)
    if not isinstance(model, str):  # a user's model factory (a module instance gets a ValueError there)
        return train_factory_runs(data, model, train_mask, val_mask, test_mask, seeds, protocol=protocol,
                                  execution=execution)
    feature_norm, hidden = protocol.feature_norm, protocol.hidden
    device, progress, runs_per_batch = execution.device, execution.progress, execution.runs_per_batch
    num_threads, checkpoint, precision = execution.num_threads, execution.checkpoint, execution.precision
    model = check_model(model)
    hp = check_training_fields(protocol, feature_norms=FEATURE_NORMS)
    precision = check_precision(precision)
    if model == "GAT" and hp["num_layers"] > 1 and hp["hidden"] % 8:
        raise ValueError(f"hidden={hidden} must be divisible by the 8 GAT heads for model='GAT'.")
    if runs_per_batch is not None:
        runs_per_batch = check_int(runs_per_batch, "runs_per_batch", 1)
    if not (num_threads is None or (isinstance(num_threads, str) and num_threads == "auto")):
        num_threads = check_int(num_threads, "num_threads", 1)
    n, y, masks, seeds, dev = _check_graph_runs(data, (train_mask, val_mask, test_mask), seeds, device)

    feats = features(data.x, feature_norm, dev)
    ops = graph_operators(data, model, dev)
    num_classes = int(y.max()) + 1
    y = y.long().to(dev)
    per_run = _activation_per_run(model, n, ops, hp["hidden"], hp["num_layers"], dev.type)
    chunks = _batches(len(seeds), per_run, runs_per_batch)
    if num_threads == "auto":
        small = n * len(chunks[0]) * max(hp["hidden"], num_classes) < SMALL_BATCH_ENTRIES
        num_threads = 1 if small and dev.type == "cpu" else None
    if precision == "bfloat16" and not native_bfloat16(dev):
        warnings.warn(f"precision='bfloat16' on a CPU without native bfloat16 products (none of the flags "
                      f"{', '.join(BF16_CPU_FLAGS)} in /proc/cpuinfo): PyTorch emulates them, many times slower "
                      f"than the default precision='float32' here.", RuntimeWarning, stacklevel=2)
    reuse = reuse_freed_memory_applies(execution.reuse_freed_memory, dev)
    rows, files = [], []
    fingerprint = _data_fingerprint(data) if checkpoint is not None else None
    for b, chunk in enumerate(chunks):
        idx = list(chunk)
        desc = f"{model} runs {idx[0]}-{idx[-1]}" if len(chunks) > 1 else model
        state_file = finished_file = None
        if checkpoint is not None:
            key = _batch_key(model, masks[:, :, idx], [seeds[i] for i in idx],
                             hp if precision == "float32" else {**hp, "precision": precision}, feature_norm,
                             num_classes)
            state_file = Path(checkpoint) / f"{key}.pt"
            finished_file = Path(checkpoint) / f"{key}.rows.json"
            state_file.parent.mkdir(parents=True, exist_ok=True)
            files += [state_file, finished_file]
        finished = json.loads(finished_file.read_text()) if finished_file is not None and finished_file.exists() else {}
        if finished.get("data") == fingerprint and "rows" in finished:
            part = finished["rows"]
        else:
            with (_torch_threads(num_threads), matmul_precision(precision),
                  reuse_freed_memory(reuse)):
                part = _train_batch(model, feats, y, masks[:, :, idx], [seeds[i] for i in idx], ops, num_classes,
                                    hp, dev, progress, desc, checkpoint=state_file, fingerprint=fingerprint)
            if finished_file is not None:
                atomic_write(finished_file, lambda tmp: Path(tmp).write_text(json.dumps({"data": fingerprint,
                                                                                          "rows": part})))
        for i, row in zip(idx, part):
            rows.append({"run": i, "seed": seeds[i], "model": model, **row, "device": str(dev),
                         "precision": precision})
    for f in files:  # with the temporary files of a save that was killed midway
        for leftover in [f, *f.parent.glob(f".{f.name}.*.tmp")]:
            leftover.unlink(missing_ok=True)
    return rows
