"""The training protocol as one value, and how a call runs it.

:class:`Protocol` is what decides the numbers: the HpStrat paper's protocol (Section 5: Adam with learning
rate 0.01 and weight decay 5e-4, 64 hidden channels, 2 layers, dropout 0.5, at most 1000 epochs with early
stopping after 100 epochs without a lower validation loss, k = 4 folds, B = 10 homophily bins) is its default
instance, :data:`PAPER_PROTOCOL`. :class:`Execution` is how a call runs (device, batching, threads,
checkpoints, a progress bar, the precision of the matrix products, and where a sweep's (dataset, model) pairs
train: in this process or as Ray tasks): it changes the time a run takes, not its numbers (bfloat16 products
excepted, see :attr:`Execution.precision`).

Both are frozen dataclasses passed down the layers (:func:`hpstrat_lite.experiments.sweep.run_experiment`,
:func:`hpstrat_lite.audit`, :func:`hpstrat_lite.engine.train.train_runs`,
:func:`hpstrat_lite.engine.user_models.train_factory_runs`); change a field with :func:`dataclasses.replace`
or :meth:`Protocol.replace`. Plain values only: no torch.

Examples
--------
>>> PAPER_PROTOCOL.max_epochs, PAPER_PROTOCOL.patience, PAPER_PROTOCOL.lr, PAPER_PROTOCOL.k
(1000, 100, 0.01, 4)
>>> PAPER_PROTOCOL.replace(max_epochs=20, patience=20).max_epochs
20
"""
from __future__ import annotations

import dataclasses
from pathlib import Path


@dataclasses.dataclass(frozen=True, kw_only=True)
class Protocol:
    """The training protocol of every run (HpStrat Section 5 by default).

    Attributes
    ----------
    max_epochs : int
        Upper bound on training epochs (1000).
    patience : int or None
        Stop a run after this many epochs without a strictly lower validation loss (100); ``None`` trains
        every run for exactly ``max_epochs`` epochs.
    lr, weight_decay : float
        Adam learning rate (0.01) and L2 weight decay (5e-4).
    hidden, num_layers : int
        Hidden channels (64) and layers (2) of a built-in model.
    dropout : float
        Dropout probability (0.5).
    feature_norm : {None, "row", "standard"}
        Feature preprocessing of a built-in model (None).
    k : int
        Folds of a k-fold split (4).
    n_bins : int
        Homophily bins B of HpStrat (10).
    """

    max_epochs: int = 1000
    patience: int | None = 100
    lr: float = 0.01
    weight_decay: float = 5e-4
    hidden: int = 64
    num_layers: int = 2
    dropout: float = 0.5
    feature_norm: str | None = None
    k: int = 4
    n_bins: int = 10

    def replace(self, **changes) -> Protocol:
        """A copy with ``changes`` (field names as keywords); an unknown name raises ``ValueError``."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ValueError(f"Protocol has no field {', '.join(map(repr, unknown))}; its fields are "
                             f"{', '.join(f.name for f in dataclasses.fields(self))}.")
        return dataclasses.replace(self, **changes)


#: The HpStrat paper's protocol (Section 5).
PAPER_PROTOCOL = Protocol()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Execution:
    """How a call trains its runs; the numbers do not depend on it (but see ``precision``).

    Attributes
    ----------
    device : str or torch.device
        ``"auto"`` (CUDA if available, else CPU), ``"cpu"``, ``"cuda"`` or ``"cuda:<i>"``.
    runs_per_batch : int, optional
        Largest number of runs trained together (default: as many as fit the engine's activation budget).
    num_threads : "auto", int or None
        CPU threads while training: ``"auto"`` uses 1 for small batches and torch's setting otherwise;
        ``None`` leaves torch's setting.
    checkpoint : path, optional
        A folder where training state is saved, so that a killed call repeated with the same arguments
        continues and returns the same numbers.
    progress : bool
        Show a progress bar.
    precision : {"float32", "bfloat16"}
        Precision of the dense matrix products of a built-in model: ``"bfloat16"`` is mixed-precision
        training, faster on CPUs with AMX and on GPUs, with numbers that differ from float32 training at
        the level of run-to-run noise.
    executor : {"local", "ray"}
        Where the (dataset, model) pairs of a sweep train (:mod:`hpstrat_lite.experiments.executors`):
        ``"local"``, one after the other in this process; ``"ray"``, each pending pair a Ray task declaring
        its CPUs (``cpus_per_pair``) and, on CUDA, one GPU, whose rows this process alone appends to the
        results file as each task ends.
    workers : int
        With ``executor="ray"``: ``n > 1`` starts a local Ray of ``n`` CPUs (one thread per pair); 1 sizes
        it to this machine. Cannot be combined with ``ray_address``.
    ray_address : str, optional
        With ``executor="ray"``: a Ray cluster to join (``"<head>:6379"``, or ``"auto"`` for the one
        ``ray start`` runs here). Default: a local Ray started for the call and shut down when it ends.
    cpus_per_pair : int, optional
        With ``executor="ray"``: CPUs (and torch threads) each pair's task declares. Default 1; with
        ``fresh_process``, ``workers=1`` and no ``ray_address``, all of the local Ray's CPUs (the pairs then
        train one at a time, each on the whole machine).
    fresh_process : bool
        With ``executor="ray"``: train every pair in a new Ray worker process (``max_calls=1``), so that no
        pair inherits the heap the pairs before it fragmented (each pays the start of a process).
    reuse_freed_memory : "auto" or bool
        While a built-in model's batch trains, glibc's allocator keeps freed memory for reuse instead of
        unmapping it (:func:`hpstrat_lite.engine.train.reuse_freed_memory`): no page fault per page of every
        new activation, so faster epochs (1.1-1.5x on Cora and Coauthor-CS, up to 3x on the largest graphs), at
        the price of a higher peak memory (up to 1.3-1.6x); the memory is given back when the batch ends.
        ``"auto"`` (default): on CPU; ``False`` keeps the allocator's own settings, e.g. where memory is tight.
    eval_batch : int, optional
        Part II tuning: evaluation seeds of the best configuration trained together in one batch, whose rows
        are written when it ends (default: all at once, the fastest); ``1`` lands each seed's runs as soon as
        they finish, so a long evaluation can be stopped and resumed.
    """

    device: object = "auto"
    runs_per_batch: int | None = None
    num_threads: int | str | None = "auto"
    checkpoint: str | Path | None = None
    progress: bool = False
    precision: str = "float32"
    executor: str = "local"
    workers: int = 1
    ray_address: str | None = None
    cpus_per_pair: int | None = None
    fresh_process: bool = False

    # Part II (tuning)
    eval_batch: int | None = None

    # a process-wide setting, in force while a batch trains
    reuse_freed_memory: bool | str = "auto"


def check_protocol_value(protocol, *, execution=None) -> tuple[Protocol, Execution]:
    """``(protocol, execution)`` after checking their types (``None`` execution: the default
    :class:`Execution`); a ``ValueError`` names the argument and what it must be."""
    if not isinstance(protocol, Protocol):
        raise ValueError(f"protocol must be a hpstrat_lite.protocol.Protocol (e.g. PAPER_PROTOCOL.replace("
                         f"max_epochs=200)); got {type(protocol).__name__}.")
    execution = Execution() if execution is None else execution
    if not isinstance(execution, Execution):
        raise ValueError(f"execution must be a hpstrat_lite.protocol.Execution (e.g. Execution(device='cpu')); "
                         f"got {type(execution).__name__}.")
    return protocol, execution
