"""Stage 5: folds -> training runs -> result rows (the HpStrat GNN experiment, Section 5).

The grid is datasets x models x split methods x seeds x folds. All pending runs of one
(dataset, model) — every fold of every split method and seed — are trained together in one batched
model (:func:`hpstrat_lite.engine.train.train_runs`), then their rows are appended atomically to a CSV under
``results/``. Restarting the same command skips runs whose rows exist, so a killed sweep loses only
the batch it was in, and not even that: a batch saves its training state every few minutes
(``results/.<file>.checkpoints/``, see :func:`hpstrat_lite.engine.train.train_runs`) and the restarted command
continues it, so a batch that takes hours (H2GCN on Amazon-Computers) survives being stopped.
"""
from __future__ import annotations

import dataclasses
import time
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from ..core._validate import check_covariate, check_k, check_n_bins, check_seeds, check_training_fields
from ..core.folds import ALL_METHODS, SPLIT_METHODS, fold_masks, make_folds
from ..core.homophily import node_homophily
from .._host import host_name
from .executors import check_executor, factory_modules, run_pairs_on_ray
from ..protocol import PAPER_PROTOCOL, Execution, Protocol, check_protocol_value
from ..rows import (results_dir, TRAINING_COLUMNS, append_rows, check_protocol, checkpoint_dir, code_version, key_value,
                    read_rows, training_values, with_training_columns)
from .._names import MODELS
from ..core.covariates import covariate_folds, node_degree

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from torch import nn
    from torch_geometric.data import Data

#: Suffixes of the metric columns every row has on validation and test besides accuracy (``val_<s>``, ``test_<s>``;
#: :mod:`hpstrat_lite.engine.metrics`).
METRIC_SUFFIXES = ("balanced_acc", "macro_f1", "roc_auc")

RUN_KEY = ["dataset", "model", "method", "k", "seed", "fold", "n_bins", "max_epochs", "patience",
           *TRAINING_COLUMNS]
"""Columns that identify one run; a row with the same key is never trained twice. Every field of the
:class:`hpstrat_lite.protocol.Protocol` is in it (``feature_norm`` ``None`` written ``"none"``), so two
protocols never share a key; rows written before ``lr`` ... ``feature_norm`` were recorded read as the paper
protocol's (:func:`hpstrat_lite.rows.with_training_columns`)."""

#: Short names of the :data:`hpstrat_lite.rows.TRAINING_COLUMNS` in a default results file name.
_PATH_TAGS = {"lr": "lr", "weight_decay": "wd", "hidden": "h", "num_layers": "l", "dropout": "do",
              "feature_norm": "fn"}


def default_results_path(k: int, seeds, *, max_epochs: int = 1000, patience: int = 100, n_bins: int = 10,
                         **training) -> Path:
    """``results/gnn_k<k>_seed<s>.csv`` for one seed, ``results/gnn_k<k>_seeds<a>-<b>.csv`` for several, under
    the paper's protocol (1000 epochs, patience 100, B = 10, and :data:`PAPER_PROTOCOL`'s ``lr``,
    ``weight_decay``, ``hidden``, ``num_layers``, ``dropout``, ``feature_norm``, given in ``training``);
    another protocol's file names it, e.g. ``gnn_k4_seed0_e20_p20.csv`` or ``gnn_k4_seed0_lr0.005_h32.csv``,
    so a quick try never lands in a committed sweep."""
    unknown = sorted(set(training) - set(TRAINING_COLUMNS))
    if unknown:
        raise ValueError(f"default_results_path has no protocol field {', '.join(map(repr, unknown))}; the others "
                         f"are {', '.join(TRAINING_COLUMNS)}.")
    seeds = sorted(seeds)
    tag = f"seed{seeds[0]}" if len(seeds) == 1 else f"seeds{seeds[0]}-{seeds[-1]}"
    if (max_epochs, patience) != (1000, 100):
        tag += f"_e{max_epochs}_p{patience}"
    if n_bins != 10:
        tag += f"_b{n_bins}"
    paper = training_values(PAPER_PROTOCOL)
    for field, short in _PATH_TAGS.items():
        value = "none" if field == "feature_norm" and training.get(field) is None else training.get(field, paper[field])
        if key_value(value) != key_value(paper[field]):
            tag += f"_{short}{value:g}" if isinstance(value, float) else f"_{short}{value}"
    return results_dir() / f"gnn_k{k}_{tag}.csv"


def run_seed(seed: int, fold: int) -> int:
    """Initial-weight / dropout seed of the run on fold ``fold`` of split seed ``seed``.

    The same for every split method, so methods differ only in their folds."""
    return 1000 * int(seed) + int(fold)


def run_experiment(datasets: str | PathLike | Data | Sequence[str | PathLike | Data], *,
                   models: Sequence[str | Callable[[int, int], nn.Module]] | None = None,
                   seeds: Iterable[int] = (0,), methods: Sequence[str] | None = None,
                   protocol: Protocol = PAPER_PROTOCOL, out: str | PathLike | None = None,
                   root: str | PathLike | None = None, execution: Execution | None = None,
                   covariate: ArrayLike | None = None) -> pd.DataFrame:
    """Run (or resume) the grid and return every row of the results file.

    Parameters
    ----------
    datasets : sequence of str, paths or Data (or one of them)
        Names for :func:`hpstrat_lite.load_dataset`, paths of graph files
        (:func:`hpstrat_lite.data.graphs.load_graph`) or ``Data`` objects, made undirected and simple by
        :func:`hpstrat_lite.data.graphs.as_graph`; rows name a user's graph by its ``name``.
    models : sequence of str or callables, optional
        Default: every model of :data:`hpstrat_lite.engine.models.MODELS` (7 GNNs and the MLP reference). A
        factory ``factory(in_channels, out_channels) -> torch.nn.Module`` (or ``"module:function"``)
        trains one run at a time under the same protocol (:mod:`hpstrat_lite.engine.user_models`); its rows
        name it ``module.qualname``. With ``execution.workers > 1`` or ``execution.fresh_process`` a factory
        must be importable by the worker processes (defined in a module, not in a notebook).
    seeds, methods
        Split seeds, split methods (default random, stratified, hpstrat; the controls "degree" and
        "placebo" of :data:`hpstrat_lite.core.folds.CONTROL_METHODS` on request, and "covariate" with
        ``covariate=``).
    protocol : Protocol
        The training protocol (:class:`hpstrat_lite.protocol.Protocol`, default the paper's,
        :data:`hpstrat_lite.protocol.PAPER_PROTOCOL`: 1000 epochs, patience 100 on the validation loss,
        k = 4 folds, B = 10 bins). Each row records every field (``k``, ``n_bins``, ``max_epochs``,
        ``patience``, ``lr``, ``weight_decay``, ``hidden``, ``num_layers``, ``dropout``, ``feature_norm``)
        in its run key (:data:`RUN_KEY`), so rows of different protocols never share a key; a results file
        holds one protocol.
    out : path, optional
        Results CSV (default :func:`default_results_path`). Rows already there are not rerun.
    root : path, optional
        Data root of the built-in datasets.
    execution : Execution, optional
        How the runs train (:class:`hpstrat_lite.protocol.Execution`; default ``Execution(progress=True)``):
        ``device``, ``runs_per_batch``, ``num_threads``, ``progress`` (a bar over the pairs; a factory's
        runs show one over runs) and where the pairs train (:mod:`hpstrat_lite.experiments.executors`):

        - ``executor="local"``: one after the other in this process. ``"ray"``: each pending (dataset,
          model) pair is a Ray task declaring its CPUs (``cpus_per_pair``) and, on CUDA, one GPU; tasks
          return their rows and this process alone appends them to ``out`` as each task ends, so resuming
          and deduplication are the local ones.
        - ``ray_address``: a Ray cluster to join (``"<head>:6379"``, or ``"auto"`` for the one
          ``ray start`` runs here). Default: a local Ray started for the call, of ``workers`` CPUs when
          ``workers > 1``, else sized to this machine, and shut down when the call ends.
        - ``workers=n > 1``: a local Ray of ``n`` CPUs, one thread per pair. Worth it for small graphs,
          whose batches train on one thread anyway (``num_threads="auto"`` of
          :func:`hpstrat_lite.engine.train.train_runs`). No gain for the large ones on a 2-core machine,
          whose batches already use both threads well: two one-thread processes side by side share the
          memory bandwidth and caches that bound these products, so each runs at about half the speed of
          one two-thread process and no more pairs finish per hour (``benchmarks/README.md``,
          ``bench_sweep.py``).
        - ``fresh_process``: every pair in a new Ray worker process (``max_calls=1``), so that no pair
          inherits the heap of the pairs before it: in one long process glibc's heap fragments and late
          pairs run slower than alone (``benchmarks/README.md``, ``bench_sweep.py``). Each pair then pays
          the start of a worker process, which imports torch and this library (about 10 s for the first
          training call on the 2-core machine). Without ``workers`` the pairs train one at a time, each on
          all of the machine's CPUs.
        - ``cpus_per_pair``: CPUs (and torch threads) each Ray task declares. Default 1; with
          ``fresh_process`` and no ``workers``, all of the local Ray's CPUs.

        The sweep saves each batch's training state beside ``out`` (``checkpoint`` overrides the folder)
        and trains in float32 (``precision`` is not recorded in the rows).
    covariate : array-like of shape (num_nodes,), optional
        A node covariate of the user's (one real value per node, NaN allowed): the split method
        ``"covariate"`` stratifies on its uniform bins and the classes
        (:func:`hpstrat_lite.core.covariates.covariate_folds`). Its rows are named ``"covariate"``, so
        one results file holds the runs of one covariate.

    Returns
    -------
    pandas.DataFrame with one row per run: the run key, ``best_epoch``, ``epochs_run``, ``train_acc``,
    ``val_acc``, ``test_acc``, the other scores of validation and test (:data:`METRIC_SUFFIXES`:
    ``val_balanced_acc``, ``test_macro_f1``, ``test_roc_auc``, ...), ``test_homophily`` (mean over the test fold's non-isolated nodes),
    ``test_isolated``, ``seconds``, ``batch_size``, ``device``, ``code_version``, ``finished_at``.

    Examples
    --------
    >>> from hpstrat_lite import PAPER_PROTOCOL, Execution                            # doctest: +SKIP
    >>> rows = run_experiment(["Texas", "Cornell"], models=["GCN", "MLP"], seeds=[0, 1],
    ...                       protocol=PAPER_PROTOCOL.replace(max_epochs=200, patience=50),
    ...                       execution=Execution(device="cpu"), out="texas.csv")   # doctest: +SKIP
    """
    from tqdm.auto import tqdm

    from ..data.datasets import get_spec
    from ..data.graphs import as_graph, is_dataset_name, is_single_graph
    from ..engine.train import train_runs
    from ..engine.user_models import model_label, resolve_model

    version = code_version()  # of the code imported now, which trains every run of this call
    models = list(MODELS) if models is None else [resolve_model(m) for m in models]
    factories = {model_label(m): m for m in models if not isinstance(m, str)}
    models = [model_label(m) for m in models]
    methods = list(SPLIT_METHODS) if methods is None else list(methods)
    allowed = ALL_METHODS + ((COVARIATE_METHOD,) if covariate is not None else ())
    for m in methods:
        if m not in allowed:
            hint = " ('covariate' needs covariate=)" if m == COVARIATE_METHOD else ""
            raise ValueError(f"methods must be a subset of {allowed}{hint}; got {m!r}.")
    seeds = check_seeds(seeds)
    # before any graph is read or any bar shown
    execution = Execution(progress=True) if execution is None else execution
    protocol, execution, executor = check_sweep_protocol(protocol, execution, where="run_experiment")
    k, n_bins, max_epochs, patience = protocol.k, protocol.n_bins, protocol.max_epochs, protocol.patience
    datasets = [datasets] if is_single_graph(datasets) else list(datasets)
    # every name is checked before any training; a user's graph (file or Data) is read and checked here
    datasets = [get_spec(d).name if is_dataset_name(d) else as_graph(d, root=root) for d in datasets]
    graphs = {g.name: g for g in datasets if not isinstance(g, str)}
    datasets = [d if isinstance(d, str) else d.name for d in datasets]
    training = training_values(protocol)
    out = Path(out) if out is not None else default_results_path(k, seeds, max_epochs=max_epochs, patience=patience,
                                                                 n_bins=n_bins, **training)
    check_protocol(out, max_epochs=max_epochs, patience=patience, n_bins=n_bins, **training)
    if covariate is not None:
        covariate = check_covariate(covariate, None)
    grid = dict(protocol=protocol, execution=execution, seeds=seeds, methods=methods, out=out, root=root,
                version=version, graphs=graphs, factories=factories, covariate=covariate)
    bar = tqdm(total=len(datasets) * len(models), desc="(dataset, model)", disable=not execution.progress)
    done = _finished_keys(read_rows(out))
    # a finished pair costs nothing: no dataset loaded, no process started
    todo = [(name, model) for name in datasets for model in models if not _pair_keys(name, model, grid) <= done]
    bar.update(len(datasets) * len(models) - len(todo))
    try:
        if executor == "ray" and todo:
            _run_pairs_on_ray(todo, grid, done, bar)
        else:
            for name in dict.fromkeys(name for name, _ in todo):
                dataset = _dataset_plan(name, grid)
                for model in (m for n, m in todo if n == name):
                    bar.set_postfix_str(f"{name} / {model}")
                    done |= _run_pair(dataset, model, grid, done, train_runs)
                    bar.update(1)
    finally:  # an error's message then follows the bar instead of being overwritten by it
        bar.close()
    return with_training_columns(read_rows(out))


def check_sweep_protocol(protocol: Protocol, execution: Execution, *, where: str) -> tuple[Protocol, Execution, str]:
    """``(protocol, execution, executor)`` of a sweep after checking them: their types, ``k``, ``n_bins``,
    ``max_epochs`` and ``patience`` (``None`` allowed), ``lr``, ``weight_decay``, ``hidden``, ``num_layers``,
    ``dropout`` and ``feature_norm`` (as :func:`hpstrat_lite.engine.train.train_runs` does), float32
    ``precision`` (the rows do not record it) and how the pairs run
    (:func:`hpstrat_lite.experiments.executors.check_executor`). ``where`` names the caller in the messages."""
    protocol, execution = check_protocol_value(protocol, execution=execution)
    check_k(protocol.k, None)
    check_n_bins(protocol.n_bins)
    # the training fields too, before anything is read or written (train_runs checks them again)
    check_training_fields(protocol)
    if execution.precision != "float32":
        raise ValueError(f"execution.precision={execution.precision!r}: {where} trains in 'float32' "
                         f"(its rows do not record the precision).")
    return protocol, execution, check_executor(execution)


def _dataset_plan(name, grid):
    """``(data, h, plan)``: the loaded dataset, its node homophily and the folds of every (method, seed)."""
    from ..data.datasets import load_dataset

    data = grid.get("graphs", {}).get(name)  # a user's graph, already made undirected and simple
    if data is None:
        data = load_dataset(name, root=grid["root"], sparse_features=True)
    y, h = _labels_and_homophily(data)
    degree = node_degree(data.edge_index, data.num_nodes, assume_simple=True) if "degree" in grid["methods"] else None
    protocol = grid["protocol"]
    plan = [(method, seed, split_folds(method, h, y, k=protocol.k, seed=seed, n_bins=protocol.n_bins, degree=degree,
                                       covariate=grid.get("covariate")))
            for method in grid["methods"] for seed in grid["seeds"]]
    return data, h, plan


#: The split method of a user's node covariate (``covariate=`` of :func:`run_experiment`).
COVARIATE_METHOD = "covariate"


def split_folds(method, h, y, *, k, seed, n_bins, degree=None, covariate=None):
    """The folds of one split method: :func:`hpstrat_lite.core.folds.make_folds` for
    :data:`hpstrat_lite.core.folds.ALL_METHODS`, and for ``"covariate"`` the (covariate bin, class) folds of
    a user's covariate (:func:`hpstrat_lite.core.covariates.covariate_folds`, ``n_bins`` uniform bins)."""
    if method == COVARIATE_METHOD:
        if covariate is None:
            raise ValueError("method='covariate' needs covariate= (one real value per node).")
        return covariate_folds(covariate, y, k=k, n_bins=n_bins, seed=seed)
    return make_folds(method, h, y, k=k, seed=seed, n_bins=n_bins, degree=degree)


def _run_key(dataset: str, model: str, method: str, seed: int, fold: int, grid) -> tuple:
    """The :data:`RUN_KEY` of one run of the grid."""
    p = grid["protocol"]
    return _key((dataset, model, method, p.k, seed, fold, p.n_bins, p.max_epochs, p.patience,
                 *training_values(p).values()))


def _key(values) -> tuple:
    """A run key with its values compared as :func:`hpstrat_lite.rows.key_value` reads them."""
    return tuple(key_value(v) for v in values)


def _pair_keys(dataset: str, model: str, grid) -> set:
    """The run keys of every run of one (dataset, model) pair (canonical dataset name)."""
    return {_run_key(dataset, model, method, seed, fold, grid)
            for method in grid["methods"] for seed in grid["seeds"] for fold in range(grid["protocol"].k)}


def _run_pair(dataset, model, grid, done, train_runs) -> set:
    """Train the runs of one (dataset, model) that ``done`` lacks, append their rows; returns their keys."""
    data, h, plan = dataset
    runs = [(method, seed, fold, folds) for method, seed, folds in plan for fold in range(grid["protocol"].k)
            if _run_key(data.name, model, method, seed, fold, grid) not in done]
    if not runs:
        return set()
    out, execution = grid["out"], grid["execution"]
    model = grid.get("factories", {}).get(model, model)
    execution = dataclasses.replace(execution, checkpoint=_checkpoint(grid),
                                    progress=execution.progress and not isinstance(model, str))
    rows = _train_and_describe(data, model, runs, h, grid["protocol"], execution, train_runs, grid["version"])
    append_rows(out, rows)
    return {_key(r[c] for c in RUN_KEY) for r in rows}


def _checkpoint(grid):
    """The checkpoint folder of the sweep's batches: ``execution.checkpoint``, else ``.<out>.checkpoints``
    beside the results file."""
    return grid["execution"].checkpoint or checkpoint_dir(grid["out"])


def _run_pairs_on_ray(todo, grid, done, bar):
    """The pending pairs as Ray tasks (:func:`hpstrat_lite.experiments.executors.run_pairs_on_ray`), sized as
    :func:`run_experiment` documents for ``workers``, ``fresh_process`` and ``cpus_per_pair``."""
    import os

    execution = grid["execution"]
    workers, fresh_process, ray_address = execution.workers, execution.fresh_process, execution.ray_address
    cpus_per_pair = execution.cpus_per_pair
    num_cpus = workers if workers > 1 else None
    if cpus_per_pair is None:
        cpus_per_pair = (os.cpu_count() or 1) if fresh_process and workers == 1 and ray_address is None else 1
    grid["out"].parent.mkdir(parents=True, exist_ok=True)
    tasks = [(f"{name} / {model}", (name, model, grid, frozenset(_pair_keys(name, model, grid) & done)))
             for name, model in todo]

    def on_rows(rows):  # the driver is the only process that writes the results file
        append_rows(grid["out"], rows)
        done.update(_key(r[c] for c in RUN_KEY) for r in rows)

    run_pairs_on_ray(tasks, _pair_task, on_rows, bar, device=execution.device, address=ray_address, num_cpus=num_cpus,
                     cpus_per_pair=cpus_per_pair, fresh_process=fresh_process,
                     modules=factory_modules(grid.get("factories", {})))


_LOADED = {}  # the one dataset a Ray worker process keeps loaded between tasks: {plan key: (data, h, plan)}


def _pair_task(name, model, grid, done, *, device, threads):
    """The rows of one (dataset, model) pair's runs that ``done`` lacks, trained in a Ray worker on
    ``threads`` torch threads (the body of the Ray task; nothing is written here)."""
    import torch

    from ..engine.train import train_runs

    torch.set_num_threads(threads)
    cov, protocol = grid.get("covariate"), grid["protocol"]
    key = (name, grid["root"], protocol.k, tuple(grid["seeds"]), tuple(grid["methods"]), protocol.n_bins,
           None if cov is None else cov.tobytes())
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = _dataset_plan(name, grid)
    data, h, plan = _LOADED[key]
    runs = [(method, seed, fold, folds) for method, seed, folds in plan for fold in range(protocol.k)
            if _run_key(data.name, model, method, seed, fold, grid) not in done]
    if not runs:
        return []
    # checkpoints beside the results file where this machine has its folder (the driver's machine); the
    # task's torch threads are its CPUs
    checkpoint = _checkpoint(grid)
    execution = dataclasses.replace(grid["execution"], device=device, num_threads="auto", progress=False,
                                    checkpoint=checkpoint if Path(checkpoint).parent.is_dir() else None)
    model = grid.get("factories", {}).get(model, model)  # a user's factory travels with the grid
    return _train_and_describe(data, model, runs, h, protocol, execution, train_runs, grid["version"])


def _finished_keys(table: pd.DataFrame) -> set:
    if table.empty:
        return set()
    table = with_training_columns(table)  # rows written before the training fields were recorded: the paper's
    return set(map(_key, table[RUN_KEY].itertuples(index=False, name=None)))


def _train_and_describe(data, model, runs, h, protocol, execution, train_runs, version) -> list[dict]:
    """Train ``runs`` (``(method, seed, fold, folds)``) of one model on ``data`` under ``protocol`` and
    ``execution`` and return their rows.

    A factory's runs show a progress bar over runs when ``execution.progress`` (they train one at a time); an
    exception in a factory's model becomes a :class:`hpstrat_lite.engine.user_models.ModelError` naming
    the model, the graph, the split method, the split seed and the fold."""
    from ..engine.user_models import ModelError

    k, n_bins, max_epochs, patience = protocol.k, protocol.n_bins, protocol.max_epochs, protocol.patience
    train_mask, val_mask, test_mask = _run_masks([(folds, fold) for _, _, fold, folds in runs], k)
    try:
        results = train_runs(data, model, train_mask, val_mask, test_mask,
                             seeds=[run_seed(seed, fold) for _, seed, fold, _ in runs],
                             protocol=protocol, execution=execution)
    except ModelError as err:
        if err.run is None:
            raise
        method, seed, fold, _ = runs[err.run]
        raise ModelError(f"{err}; on {data.name}, split method {method}, split seed {seed}, fold {fold}",
                         run=err.run) from err.__cause__
    if not isinstance(model, str):  # a user's factory: rows name it module.qualname
        from ..engine.user_models import model_label

        model = model_label(model)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    rows = []
    for (method, seed, fold, folds), res, test in zip(runs, results, test_mask.T):
        ht = h[test.numpy()]
        rows.append({"dataset": data.name, "model": model, "method": method, "k": k, "seed": seed, "fold": fold,
                     "n_bins": n_bins, "max_epochs": max_epochs, "patience": patience, **training_values(protocol),
                     "run_seed": res["seed"], "best_epoch": res["best_epoch"], "epochs_run": res["epochs_run"],
                     "train_acc": res["train_acc"], "val_acc": res["val_acc"], "test_acc": res["test_acc"],
                     **{f"{split}_{name}": res.get(f"{split}_{name}", float("nan"))
                        for name in METRIC_SUFFIXES for split in ("val", "test")},
                     "val_loss": res["val_loss"],
                     "test_homophily": float(np.nanmean(ht)) if np.isfinite(ht).any() else float("nan"),
                     "test_isolated": int(np.isnan(ht).sum()), "seconds": res["seconds"],
                     "batch_size": res["batch_size"], "device": res["device"], "host": host_name(res["device"]),
                     "code_version": version, "finished_at": stamp})
    return rows


def _labels_and_homophily(data):
    """Class labels (numpy) and node homophily of ``data``: the inputs of :func:`make_folds`."""
    y = data.y.numpy()
    return y, node_homophily(data.edge_index, y, data.num_nodes, assume_simple=True)


def _run_masks(fold_runs, k: int):
    """``(train, val, test)`` boolean masks ``[N, runs]`` for runs given as ``(folds, test fold)`` pairs
    (round i: test fold i, validation fold i + 1 mod k, train the rest)."""
    import torch

    masks = [[], [], []]
    for folds, fold in fold_runs:
        tr, va, te = fold_masks(folds, k=k)
        for store, m in zip(masks, (tr, va, te)):
            store.append(m[:, fold])
    return tuple(torch.stack(m, dim=1) for m in masks)


def sweep_masks(data, *, k: int = 4, seed: int = 0):
    """``(train, val, test)`` masks ``[N, 3 k]`` of one dataset's runs in the sweep: every round of the three
    split methods' k-fold (:data:`hpstrat_lite.core.folds.SPLIT_METHODS`, in that order) with split seed ``seed``,
    the batch one (dataset, model) pair trains (for the benchmarks that time it)."""
    y, h = _labels_and_homophily(data)
    return _run_masks([(make_folds(method, h, y, k=k, seed=seed), fold) for method in SPLIT_METHODS
                       for fold in range(k)], k)
