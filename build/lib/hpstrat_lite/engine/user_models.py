"""Stage 5 for a user's model: a factory of PyG-style modules, trained under the HpStrat protocol.

Wherever a model name of :data:`hpstrat_lite.engine.models.MODELS` is accepted
(:func:`hpstrat_lite.engine.train.train_runs`, :func:`hpstrat_lite.experiments.sweep.run_experiment`,
:func:`hpstrat_lite.audit`), a *factory* is accepted too::

    def make(in_channels: int, out_channels: int) -> torch.nn.Module: ...

whose module's ``forward(x, edge_index)`` returns logits ``[num_nodes, out_channels]``. Each run builds a
fresh module from the factory and trains it alone with the protocol of the built-in models (HpStrat
Section 5): Adam (lr 0.01, weight decay 5e-4), cross-entropy on the run's training nodes, at most 1000
epochs, early stopping with patience 100 on the validation loss, test accuracy measured once with the
weights of the epoch of lowest validation loss. The run's seed seeds torch's generator inside
``torch.random.fork_rng`` (initial weights, dropout), so the same seed gives the same run and the
caller's global random state is left as it was. Rows name the model by its qualified name
(``module.qualname``; a factory defined in a script or a notebook by its own name); on the command line a
factory is written ``module:function``.

Cost: a factory's R runs train one after the other, so a (graph, factory) pair costs R single runs,
where the built-in models train their R runs as one batched model
(:func:`hpstrat_lite.engine.train.train_runs`). With ``checkpoint=`` every finished run is saved, so a
stopped sweep or audit repeats at most the run it was in. An exception raised by the factory or the
module becomes a :class:`ModelError` naming the model and the run.
"""
from __future__ import annotations

import importlib
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import torch

from ..core._validate import check_int, check_training_fields
from .._io import atomic_write
from ..protocol import PAPER_PROTOCOL, Execution, Protocol, check_protocol_value
from .metrics import run_scores
from .models import MODELS, check_model
from .runs import SMALL_BATCH_ENTRIES, check_graph_runs, data_fingerprint, torch_threads

__all__ = ["ModelError", "model_label", "resolve_model", "train_factory_runs"]


class ModelError(RuntimeError):
    """A user's model raised an exception while it was built or trained; the message names the model and
    the run (``run``: its column in the masks), the original exception is its ``__cause__``."""

    def __init__(self, message: str, *, run: int | None = None):
        super().__init__(message)
        self.run = run


def _is_factory(model) -> bool:
    return callable(model) and not isinstance(model, (str, torch.nn.Module))


def resolve_model(model):
    """A model argument as the library uses it: a canonical built-in name, or a factory.

    Accepts a built-in name (case-insensitive, :func:`hpstrat_lite.engine.models.check_model`), a string
    ``"module:function"`` naming an importable factory, or a callable factory.

    Raises
    ------
    ValueError
        An unknown name, a ``module:function`` that cannot be imported or is not callable, or a
        ``torch.nn.Module`` instance (pass a factory, so that every run starts from its own weights).
    """
    if isinstance(model, torch.nn.Module):
        raise ValueError(f"model is a torch.nn.Module instance ({type(model).__name__}); pass a factory "
                         f"factory(in_channels, out_channels) -> torch.nn.Module instead (e.g. the class itself, or "
                         f"lambda i, o: {type(model).__name__}(i, 64, o)), so that every run starts from its own "
                         f"initial weights.")
    if isinstance(model, str) and ":" in model:
        module, _, attr = model.partition(":")
        try:
            obj = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError, ValueError) as err:
            raise ValueError(f"model={model!r}: cannot import the factory {attr!r} from module {module!r} "
                             f"({type(err).__name__}: {err}); a factory is 'module:function' importable from "
                             f"PYTHONPATH.") from None
        if not _is_factory(obj):
            raise ValueError(f"model={model!r} is a {type(obj).__name__}, not a callable factory "
                             f"factory(in_channels, out_channels) -> torch.nn.Module.")
        return obj
    if isinstance(model, str):
        try:
            return check_model(model)
        except ValueError:
            raise ValueError(f"model must be one of {', '.join(MODELS)} or a factory ('module:function', or a "
                             f"callable factory(in_channels, out_channels) -> torch.nn.Module); got {model!r}.") from None
    if _is_factory(model):
        return model
    raise ValueError(f"model must be one of {', '.join(MODELS)} or a callable factory(in_channels, out_channels) "
                     f"-> torch.nn.Module; got {model!r}.")


def model_label(model) -> str:
    """The name result rows give a model: the built-in name, ``module.qualname`` of a factory, or its
    ``qualname`` alone when it is defined in a script or a notebook (module ``__main__``)."""
    model = resolve_model(model)
    if isinstance(model, str):
        return model
    target = getattr(model, "func", model)  # functools.partial: its function's name
    qualname = getattr(target, "__qualname__", type(target).__qualname__)
    module = getattr(target, "__module__", None) or type(target).__module__
    return qualname if module == "__main__" else f"{module}.{qualname}"  # a script's or notebook's: its name


def train_factory_runs(data, factory: str | Callable[[int, int], torch.nn.Module], train_mask, val_mask, test_mask,
                       seeds, *, protocol: Protocol = PAPER_PROTOCOL, execution: Execution | None = None) -> list[dict]:
    """Train R runs of a user's model factory, one at a time, under the HpStrat protocol (Section 5).

    Run r builds ``factory(num_features, num_classes)`` with torch's generator seeded by ``seeds[r]``,
    trains it with Adam (``lr``, L2 ``weight_decay``) on the cross-entropy over ``train_mask[:, r]``
    (one full-graph step per epoch, ``model.train()``), evaluates the validation loss after every step
    (``model.eval()``, no gradient) and stops after ``patience`` epochs without a strictly lower one (at
    most ``max_epochs``); train, validation and test metrics are measured with the weights of the epoch
    of lowest validation loss. The same bookkeeping as the batched engine of
    :func:`hpstrat_lite.engine.train.train_runs`, so rows of both compare.

    Parameters
    ----------
    data : torch_geometric.data.Data
        ``x`` (dense or sparse; the module receives it dense, float32), ``edge_index``, ``y``.
    factory : callable
        ``factory(in_channels, out_channels) -> torch.nn.Module``, ``forward(x, edge_index)`` -> logits.
    train_mask, val_mask, test_mask : bool tensors ``[N, R]`` (or ``[N]``)
    seeds : sequence of int
        One non-negative seed per run.
    protocol : Protocol
        The training protocol (default :data:`hpstrat_lite.protocol.PAPER_PROTOCOL`): ``lr``, ``weight_decay``,
        ``max_epochs`` and ``patience`` (``None``: exactly ``max_epochs`` epochs) as in
        :func:`hpstrat_lite.engine.train.train_runs`; the module's own width, depth and dropout are the factory's.
    execution : Execution, optional
        ``device`` and ``progress`` as in :func:`hpstrat_lite.engine.train.train_runs`; ``num_threads``
        (``"auto"``: one thread when the graph is small, ``num_nodes * max(num_features, 64)`` below
        :data:`hpstrat_lite.engine.runs.SMALL_BATCH_ENTRIES`: Texas, Cora, where a second thread mostly waits at
        OpenMP barriers on a busy machine, else torch's setting; ``None`` leaves torch's setting);
        ``checkpoint`` (a folder where each finished run saves its row, named by a hash of the model, its
        masks, seed, protocol and data: a call killed midway and repeated with the same arguments trains
        only the runs that had not finished; the files are removed when the call returns).
        ``runs_per_batch`` and ``precision`` do not apply.

    Runs train one at a time: the cost of a factory's pair is R times one run (the built-in models
    train their R runs as one batched model instead).

    Raises
    ------
    ModelError
        The factory or the module's ``forward`` raised; the message names the model, the run and its
        seed, the original exception is its ``__cause__``.

    Returns
    -------
    list of dict
        The keys of :func:`hpstrat_lite.engine.train.train_runs`'s rows; ``model`` is :func:`model_label`,
        ``batch_size`` is 1.
    """
    import torch.nn.functional as F

    protocol, execution = check_protocol_value(protocol, execution=execution)
    device, progress, num_threads, checkpoint = execution.device, execution.progress, execution.num_threads, \
        execution.checkpoint
    factory = resolve_model(factory)
    if isinstance(factory, str):
        raise ValueError(f"factory must be a callable factory(in_channels, out_channels) -> torch.nn.Module; got "
                         f"the built-in name {factory!r} (use hpstrat_lite.engine.train.train_runs for it).")
    label = model_label(factory)
    fields = check_training_fields(protocol)
    lr, weight_decay, max_epochs, patience = (fields["lr"], fields["weight_decay"], fields["max_epochs"],
                                              fields["patience"])
    if not (num_threads is None or (isinstance(num_threads, str) and num_threads == "auto")):
        num_threads = check_int(num_threads, "num_threads", 1)
    n, y, masks, seeds, dev = check_graph_runs(data, (train_mask, val_mask, test_mask), seeds, device)
    x = data.x if data.x.layout == torch.strided else data.x.to_dense()
    x = x.to(device=dev, dtype=torch.float32)
    edge_index = torch.as_tensor(data.edge_index).long().to(dev)
    y = y.long().to(dev)
    num_classes = int(y.max()) + 1
    masks = masks.to(dev)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(seeds), desc=label, leave=False)
    if num_threads == "auto":  # small graphs on one thread, as the batched engine does (runs.SMALL_BATCH_ENTRIES)
        small = n * max(int(x.shape[1]), 64) < SMALL_BATCH_ENTRIES and dev.type == "cpu"
        threads = 1 if small else None
    else:
        threads = num_threads
    fingerprint = data_fingerprint(data) if checkpoint is not None else None
    files = []
    try:
        rows = _train_runs_one_by_one(factory, label, x, edge_index, y, num_classes, masks, seeds, lr, weight_decay,
                                      max_epochs, patience, dev, threads, checkpoint, fingerprint, files, bar, F)
    finally:  # an error's message then follows the bar instead of being overwritten by it
        if bar is not None:
            bar.close()
    for f in files:
        f.unlink(missing_ok=True)
    return rows


def _train_runs_one_by_one(factory, label, x, edge_index, y, num_classes, masks, seeds, lr, weight_decay, max_epochs,
                           patience, dev, threads, checkpoint, fingerprint, files, bar, F) -> list[dict]:
    """The loop of :func:`train_factory_runs` over its runs (``files`` collects the checkpoint files)."""
    rows = []
    for r, seed in enumerate(seeds):
        saved = None
        if checkpoint is not None:
            saved = _run_file(checkpoint, label, masks[:, :, r], seed, (lr, weight_decay, max_epochs, patience),
                              fingerprint)
            files.append(saved)
        if saved is not None and saved.exists():
            row = json.loads(saved.read_text())
        else:
            with torch_threads(threads), torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
                torch.manual_seed(seed)
                try:
                    row = _train_one(factory, label, x, edge_index, y, num_classes, masks[:, :, r], lr,
                                     weight_decay, max_epochs, patience, F)
                except ModelError as err:
                    raise ModelError(f"{err} (run {r}, seed {seed})", run=r) from err.__cause__
            if saved is not None:
                saved.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(saved, lambda tmp: Path(tmp).write_text(json.dumps(row)))
        rows.append({"run": r, "seed": seed, "model": label, **row, "device": str(dev), "precision": "float32"})
        if bar is not None:
            bar.update(1)
    return rows


def _run_file(folder, label, masks, seed, protocol, fingerprint) -> Path:
    """The checkpoint file of one finished run of a factory: named by a hash of everything it depends on."""
    import hashlib
    import re

    digest = hashlib.sha1(repr((label, int(seed), protocol, fingerprint, tuple(masks.shape))).encode())
    digest.update(masks.cpu().numpy().tobytes())
    return Path(folder) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}-{digest.hexdigest()[:16]}.run.json"


def _train_one(factory, label, x, edge_index, y, num_classes, masks, lr, weight_decay, max_epochs, patience, F):
    """One run (see :func:`train_factory_runs`); masks ``[3, N]``."""
    t0 = time.perf_counter()
    tr, va, te = masks[0], masks[1], masks[2]
    try:
        model = factory(int(x.shape[1]), num_classes)
    except Exception as err:
        raise ModelError(f"model {label}: factory({int(x.shape[1])}, {num_classes}) raised {type(err).__name__}: "
                         f"{err}") from err
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model factory {label} returned a {type(model).__name__}; it must return a "
                         f"torch.nn.Module whose forward(x, edge_index) gives logits.")
    model = model.to(x.device)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError(f"model factory {label} returned a module without trainable parameters.")
    opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)

    def logits():
        try:
            out = model(x, edge_index)
        except TypeError as err:  # a forward that does not take (x, edge_index)
            raise ValueError(f"model {label}: forward(x, edge_index) failed: {err}; the module's forward must take "
                             f"the node features and edge_index and return logits.") from None
        except Exception as err:
            raise ModelError(f"model {label}: forward(x, edge_index) raised {type(err).__name__}: {err}") from err
        if not torch.is_tensor(out) or tuple(out.shape) != (x.shape[0], num_classes):
            shape = tuple(out.shape) if torch.is_tensor(out) else type(out).__name__
            raise ValueError(f"model {label}: forward(x, edge_index) must return logits of shape [num_nodes, "
                             f"out_channels] = [{x.shape[0]}, {num_classes}]; got {shape}.")
        return out

    best_loss, best_epoch, bad, epochs_run, stopped = math.inf, 0, 0, max_epochs, False
    best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    for epoch in range(1, max_epochs + 1):
        model.train()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(logits()[tr], y[tr])
        try:
            loss.backward()
        except Exception as err:
            raise ModelError(f"model {label}: the backward pass raised {type(err).__name__}: {err}") from err
        opt.step()
        model.eval()
        with torch.no_grad():
            val_loss = float(F.cross_entropy(logits()[va], y[va]))
        if val_loss < best_loss:
            best_loss, best_epoch, bad = val_loss, epoch, 0
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            bad += 1
        if patience is not None and bad >= patience:
            epochs_run, stopped = epoch, True
            break
    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        out = logits()
        pred = out.argmax(-1)
        metrics = {}
        for split, m in (("train", tr), ("val", va), ("test", te)):
            metrics[f"{split}_acc"] = float((pred[m] == y[m]).float().mean())
            metrics[f"{split}_loss"] = float(F.cross_entropy(out[m], y[m]))
        probs = torch.softmax(out, -1)[None].cpu().numpy()
    scores = run_scores(probs, y.cpu().numpy(), [va.cpu().numpy()[None], te.cpu().numpy()[None]])[0]
    if x.device.type == "cuda":
        torch.cuda.synchronize(x.device)
    wall = time.perf_counter() - t0
    return {"train_acc": metrics["train_acc"], "val_acc": metrics["val_acc"], "test_acc": metrics["test_acc"],
            "train_loss": metrics["train_loss"], "val_loss": metrics["val_loss"], "test_loss": metrics["test_loss"],
            **{k: v for k, v in scores.items() if k not in metrics},
            "best_epoch": best_epoch, "epochs_run": epochs_run, "stopped_early": stopped, "seconds": wall,
            "batch_seconds": wall, "batch_size": 1}
