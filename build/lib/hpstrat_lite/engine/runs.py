"""What every training loop of the engine shares: checked inputs of a batch of runs, the device, the thread count,
a fingerprint of the data a checkpoint belongs to. Used by the batched loop (:mod:`hpstrat_lite.engine.train`)
and by the loop over a user's models (:mod:`hpstrat_lite.engine.user_models`).
"""
from __future__ import annotations

import contextlib
import hashlib
import numbers

import torch

from ..core._validate import check_int
from ..data.feature_layout import engine_features


#: ``num_threads="auto"`` trains on one thread while a batch's hidden state ``[R, N, hidden]`` has fewer
#: entries than this: on small graphs every op is too small to share, and an OpenMP barrier waiting for a
#: descheduled second thread costs milliseconds per op on a busy 2-core machine (``benchmarks/README.md``, Hosts).
SMALL_BATCH_ENTRIES = 2 ** 22


def _check_masks(masks, n: int) -> torch.Tensor:
    names = ("train_mask", "val_mask", "test_mask")
    out = []
    for name, m in zip(names, masks):
        m = torch.as_tensor(m)
        if m.dtype != torch.bool:
            raise ValueError(f"{name} must be a boolean tensor of shape [num_nodes, runs]; got dtype {m.dtype}.")
        if m.dim() == 1:
            m = m[:, None]
        if m.dim() != 2 or m.shape[0] != n:
            raise ValueError(f"{name} must have shape [num_nodes, runs] = [{n}, R]; got {tuple(m.shape)}.")
        out.append(m.cpu())
    if not (out[0].shape == out[1].shape == out[2].shape):
        raise ValueError(f"train_mask, val_mask and test_mask must have the same shape [num_nodes, runs]; got "
                         f"{tuple(out[0].shape)}, {tuple(out[1].shape)} and {tuple(out[2].shape)}.")
    for name, m in zip(names, out):
        empty = (m.sum(0) == 0).nonzero().view(-1)
        if empty.numel():
            raise ValueError(f"{name} selects no node in run(s) {empty.tolist()}; every run needs at least one "
                             f"training, validation and test node.")
    overlap = ((out[0] & out[1]) | (out[0] & out[2]) | (out[1] & out[2])).sum(0)
    if overlap.any():
        r = int(overlap.nonzero()[0])
        raise ValueError(f"train_mask, val_mask and test_mask overlap in run {r} ({int(overlap[r])} node(s)); "
                         f"a node may be in at most one of them per run.")
    return torch.stack(out)  # [3, N, R]


def _check_seeds(seeds, runs: int) -> list[int]:
    if isinstance(seeds, numbers.Integral) and not isinstance(seeds, bool):
        seeds = [seeds]
    try:
        seeds = list(seeds)
    except TypeError:
        raise ValueError(f"seeds must be a sequence of {runs} non-negative integers (one per run); "
                         f"got {seeds!r}.") from None
    if len(seeds) != runs:
        raise ValueError(f"seeds has {len(seeds)} entries but the masks have {runs} run column(s); "
                         f"give one seed per run.")
    return [check_int(s, "seeds", 0) for s in seeds]


def check_graph_runs(data, masks, seeds, device):
    """The checked inputs of a batch of runs on ``data`` (built-in or user model): ``(num_nodes, labels y,
    masks [3, N, R], one seed per run, device)``; a ``ValueError`` names what is missing or malformed."""
    for attr in ("x", "edge_index", "y"):
        if getattr(data, attr, None) is None:
            raise ValueError(f"data must have node features x, edge_index and labels y; data.{attr} is missing.")
    n = int(data.num_nodes)
    y = torch.as_tensor(data.y).view(-1)
    if y.numel() != n or y.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8):
        raise ValueError(f"data.y must hold one integer class id per node ({n}); got shape {tuple(y.shape)} "
                         f"and dtype {y.dtype}.")
    if int(y.min()) < 0:
        raise ValueError(f"data.y must hold class ids 0..C-1; got {int(y.min())}.")
    if data.x.shape[0] != n:
        raise ValueError(f"data.x has {data.x.shape[0]} rows but the graph has {n} nodes.")
    masks = _check_masks(masks, n)
    return n, y, masks, _check_seeds(seeds, masks.shape[2]), resolve_device(device)


def resolve_device(device) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; otherwise ``"cpu"``, ``"cuda"``, ``"cuda:i"`` or a
    ``torch.device``."""
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:<i>'; got {device!r}.") from None
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:<i>'; got {device!r}.")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} but CUDA is not available here; use 'cpu' or 'auto'.")
    return dev


@contextlib.contextmanager
def torch_threads(n):
    """Run the block with ``torch.set_num_threads(n)`` (``None``: unchanged), restoring the old value."""
    old = torch.get_num_threads()
    if n is not None and n != old:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != old:
            torch.set_num_threads(old)


def data_fingerprint(data) -> str:
    """A hash of the graph and features a call trains on, stored in its checkpoints: a checkpoint of
    the same runs on other data (e.g. another feature subset) is not continued."""
    digest = hashlib.sha1(data.edge_index.cpu().numpy().tobytes())
    x = engine_features(data.x)
    if x.layout == torch.sparse_csr:
        parts = (x.crow_indices(), x.col_indices(), x.values())
    elif x.is_sparse:
        x = x.coalesce()
        parts = (x.indices(), x.values())
    else:
        parts = (x,)
    for part in parts:
        digest.update(part.detach().cpu().contiguous().numpy().tobytes())
    digest.update(repr(tuple(x.shape)).encode())
    return digest.hexdigest()
