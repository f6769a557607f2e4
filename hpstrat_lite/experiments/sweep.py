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

import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..core._validate import check_k, check_n_bins, check_seeds
from ..core.folds import SPLIT_METHODS, fold_masks, make_folds
from ..core.homophily import node_homophily
from .._host import host_cpu, host_name
from .executors import check_executor, run_pairs_on_ray
from .results import RESULTS_DIR, append_rows, check_protocol, code_version, read_rows

RUN_KEY = ["dataset", "model", "method", "k", "seed", "fold", "n_bins", "max_epochs", "patience"]
"""Columns that identify one run; a row with the same key is never trained twice."""


def default_results_path(k: int, seeds, *, max_epochs: int = 1000, patience: int = 100, n_bins: int = 10) -> Path:
    """``results/gnn_k<k>_seed<s>.csv`` for one seed, ``results/gnn_k<k>_seeds<a>-<b>.csv`` for several, under
    the paper's protocol (1000 epochs, patience 100, B = 10); another protocol's file names it, e.g.
    ``gnn_k4_seed0_e20_p20.csv``, so a quick try never lands in a committed sweep."""
    seeds = sorted(seeds)
    tag = f"seed{seeds[0]}" if len(seeds) == 1 else f"seeds{seeds[0]}-{seeds[-1]}"
    if (max_epochs, patience) != (1000, 100):
        tag += f"_e{max_epochs}_p{patience}"
    if n_bins != 10:
        tag += f"_b{n_bins}"
    return RESULTS_DIR / f"gnn_k{k}_{tag}.csv"


def run_seed(seed: int, fold: int) -> int:
    """Initial-weight / dropout seed of the run on fold ``fold`` of split seed ``seed``.

    The same for every split method, so methods differ only in their folds."""
    return 1000 * int(seed) + int(fold)


def run_experiment(datasets, models=None, k: int = 4, seeds=(0,), methods=None, n_bins: int = 10, out=None,
                   root=None, device="auto", max_epochs: int = 1000, patience: int = 100,
                   runs_per_batch: int | None = None, progress: bool = True, workers: int = 1,
                   fresh_process: bool = False,
                   executor: str | None = None, ray_address: str | None = None,
                   cpus_per_pair: int | None = None) -> pd.DataFrame:
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
        name it ``module.qualname``. With ``workers > 1`` or ``fresh_process`` a factory must be
        importable by the worker processes (defined in a module, not in a notebook).
    k, seeds, methods, n_bins
        Folds per split, split seeds, split methods (default random, stratified, hpstrat), bins B.
    out : path, optional
        Results CSV (default :func:`default_results_path`). Rows already there are not rerun.
    max_epochs, patience
        Training protocol (HpStrat: 1000 epochs, patience 100 on validation loss).
    executor : {"local", "ray"}, optional
        Where the pairs train (:mod:`hpstrat_lite.experiments.executors`). ``"local"``: one after the
        other in this process. ``"ray"``: each pending (dataset, model) pair is a Ray task declaring its
        CPUs (``cpus_per_pair``) and, on CUDA, one GPU; tasks return their rows and this process alone
        appends them to ``out`` as each task ends, so resuming and deduplication are the local ones.
        Default: ``"ray"`` when ``workers > 1``, ``fresh_process`` or ``ray_address`` asks for it,
        else ``"local"``.
    ray_address : str, optional
        A Ray cluster to join (``"<head>:6379"``, or ``"auto"`` for the one ``ray start`` runs here).
        Default: a local Ray started for the call, of ``workers`` CPUs when ``workers > 1``, else sized
        to this machine, and shut down when the call ends.
    workers : int
        ``n > 1``: shorthand for ``executor="ray"`` on a local Ray of ``n`` CPUs, one thread per pair.
        Worth it for small graphs, whose batches train on one thread anyway (``num_threads="auto"`` of
        :func:`hpstrat_lite.engine.train.train_runs`). No gain for the large ones on a 2-core machine,
        whose batches already use both threads well: two one-thread processes running side by side
        were each 1.9-2.2x slower per epoch than one two-thread process (measured 2026-11-30 with the
        12 runs of the k = 4 sweep, `project_sweep_time`).
    fresh_process : bool
        Train every pair in a new Ray worker process (``max_calls=1``), so that no pair inherits the heap
        of the pairs before it: in one long process glibc's heap fragments, and H2GCN on
        Amazon-Computers took 1.27x its projection as the 86th pair of the timed k = 4 sweep
        (``benchmarks/README.md``). Each pair then pays the start of a worker process, which imports
        torch and this library (about 10 s for the first training call on the 2-core machine). Without
        ``workers`` the pairs train one at a time, each on all of the machine's CPUs.
    cpus_per_pair : int, optional
        CPUs (and torch threads) each Ray task declares. Default 1; with ``fresh_process`` and no
        ``workers``, all of the local Ray's CPUs.

    Returns
    -------
    pandas.DataFrame with one row per run: the run key, ``best_epoch``, ``epochs_run``, ``train_acc``,
    ``val_acc``, ``test_acc``, ``test_homophily`` (mean over the test fold's non-isolated nodes),
    ``test_isolated``, ``seconds``, ``batch_size``, ``device``, ``code_version``, ``finished_at``.
    """
    from tqdm.auto import tqdm

    from ..data.datasets import get_spec
    from ..data.graphs import as_graph, is_dataset_name, is_single_graph
    from ..engine.models import MODELS
    from ..engine.train import train_runs
    from ..engine.user_models import model_label, resolve_model

    version = code_version()  # of the code imported now, which trains every run of this call
    models = list(MODELS) if models is None else [resolve_model(m) for m in models]
    factories = {model_label(m): m for m in models if not isinstance(m, str)}
    models = [model_label(m) for m in models]
    methods = list(SPLIT_METHODS) if methods is None else list(methods)
    for m in methods:
        if m not in SPLIT_METHODS:
            raise ValueError(f"methods must be a subset of {SPLIT_METHODS}; got {m!r}.")
    seeds = check_seeds(seeds)
    check_k(k, None)
    check_n_bins(n_bins)
    datasets = [datasets] if is_single_graph(datasets) else list(datasets)
    # every name is checked before any training; a user's graph (file or Data) is read and checked here
    datasets = [get_spec(d).name if is_dataset_name(d) else as_graph(d, root=root) for d in datasets]
    graphs = {g.name: g for g in datasets if not isinstance(g, str)}
    datasets = [d if isinstance(d, str) else d.name for d in datasets]
    executor = check_executor(executor, ray_address=ray_address, workers=workers, fresh_process=fresh_process,
                              cpus_per_pair=cpus_per_pair)
    out = Path(out) if out is not None else default_results_path(k, seeds, max_epochs=max_epochs, patience=patience,
                                                                 n_bins=n_bins)
    check_protocol(out, max_epochs=max_epochs, patience=patience, n_bins=n_bins)
    grid = dict(k=k, seeds=seeds, methods=methods, n_bins=n_bins, out=out, root=root, device=device,
                max_epochs=max_epochs, patience=patience, runs_per_batch=runs_per_batch, version=version,
                graphs=graphs, factories=factories)
    bar = tqdm(total=len(datasets) * len(models), desc="(dataset, model)", disable=not progress)
    done = _finished_keys(read_rows(out))
    # a finished pair costs nothing: no dataset loaded, no process started
    todo = [(name, model) for name in datasets for model in models if not _pair_keys(name, model, grid) <= done]
    bar.update(len(datasets) * len(models) - len(todo))
    if executor == "ray" and todo:
        _run_pairs_on_ray(todo, grid, done, bar, ray_address, workers, fresh_process, cpus_per_pair)
    else:
        for name in dict.fromkeys(name for name, _ in todo):
            dataset = _dataset_plan(name, grid)
            for model in (m for n, m in todo if n == name):
                bar.set_postfix_str(f"{name} / {model}")
                done |= _run_pair(dataset, model, grid, done, train_runs)
                bar.update(1)
    bar.close()
    return read_rows(out)


def _dataset_plan(name, grid):
    """``(data, h, plan)``: the loaded dataset, its node homophily and the folds of every (method, seed)."""
    from ..data.datasets import load_dataset

    data = grid.get("graphs", {}).get(name)  # a user's graph, already made undirected and simple
    if data is None:
        data = load_dataset(name, root=grid["root"], sparse_features=True)
    y, h = _labels_and_homophily(data)
    plan = [(method, seed, make_folds(method, h, y, k=grid["k"], seed=seed, n_bins=grid["n_bins"]))
            for method in grid["methods"] for seed in grid["seeds"]]
    return data, h, plan


def _run_key(dataset: str, model: str, method: str, seed: int, fold: int, grid) -> tuple:
    """The :data:`RUN_KEY` of one run of the grid."""
    return dataset, model, method, grid["k"], seed, fold, grid["n_bins"], grid["max_epochs"], grid["patience"]


def _pair_keys(dataset: str, model: str, grid) -> set:
    """The run keys of every run of one (dataset, model) pair (canonical dataset name)."""
    return {_run_key(dataset, model, method, seed, fold, grid)
            for method in grid["methods"] for seed in grid["seeds"] for fold in range(grid["k"])}


def _run_pair(dataset, model, grid, done, train_runs) -> set:
    """Train the runs of one (dataset, model) that ``done`` lacks, append their rows; returns their keys."""
    data, h, plan = dataset
    k, n_bins, max_epochs, patience = grid["k"], grid["n_bins"], grid["max_epochs"], grid["patience"]
    runs = [(method, seed, fold, folds) for method, seed, folds in plan for fold in range(k)
            if _run_key(data.name, model, method, seed, fold, grid) not in done]
    if not runs:
        return set()
    out = grid["out"]
    rows = _train_and_describe(data, grid.get("factories", {}).get(model, model), runs, k, h, n_bins, max_epochs,
                               patience, grid["device"],
                               grid["runs_per_batch"], train_runs, grid["version"],
                               checkpoint=out.parent / f".{out.stem}.checkpoints")
    append_rows(out, rows)
    return {tuple(r[c] for c in RUN_KEY) for r in rows}


def _run_pairs_on_ray(todo, grid, done, bar, ray_address, workers, fresh_process, cpus_per_pair):
    """The pending pairs as Ray tasks (:func:`hpstrat_lite.experiments.executors.run_pairs_on_ray`), sized as
    :func:`run_experiment` documents for ``workers``, ``fresh_process`` and ``cpus_per_pair``."""
    import os

    num_cpus = workers if workers > 1 else None
    if cpus_per_pair is None:
        cpus_per_pair = (os.cpu_count() or 1) if fresh_process and workers == 1 and ray_address is None else 1
    run_pairs_on_ray(todo, grid, done, bar, address=ray_address, num_cpus=num_cpus, cpus_per_pair=cpus_per_pair,
                     fresh_process=fresh_process)


def _finished_keys(table: pd.DataFrame) -> set:
    if table.empty:
        return set()
    return set(map(tuple, table[RUN_KEY].itertuples(index=False, name=None)))


def _train_and_describe(data, model, runs, k, h, n_bins, max_epochs, patience, device, runs_per_batch,
                        train_runs, version, checkpoint=None) -> list[dict]:

    train_mask, val_mask, test_mask = _run_masks([(folds, fold) for _, _, fold, folds in runs], k)
    results = train_runs(data, model, train_mask, val_mask, test_mask,
                         seeds=[run_seed(seed, fold) for _, seed, fold, _ in runs],
                         max_epochs=max_epochs, patience=patience, device=device, runs_per_batch=runs_per_batch,
                         checkpoint=checkpoint)
    if not isinstance(model, str):  # a user's factory: rows name it module.qualname
        from ..engine.user_models import model_label

        model = model_label(model)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    rows = []
    for (method, seed, fold, folds), res, test in zip(runs, results, test_mask.T):
        ht = h[test.numpy()]
        rows.append({"dataset": data.name, "model": model, "method": method, "k": k, "seed": seed, "fold": fold,
                     "n_bins": n_bins, "max_epochs": max_epochs, "patience": patience,
                     "run_seed": res["seed"], "best_epoch": res["best_epoch"], "epochs_run": res["epochs_run"],
                     "train_acc": res["train_acc"], "val_acc": res["val_acc"], "test_acc": res["test_acc"],
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


def sweep_masks(data, k: int = 4, seed: int = 0):
    """``(train, val, test)`` masks ``[N, 3 k]`` of one dataset's runs in the sweep: every round of the three
    split methods' k-fold (:data:`hpstrat_lite.core.folds.SPLIT_METHODS`, in that order) with split seed ``seed``,
    the batch one (dataset, model) pair trains (for the benchmarks that time it)."""
    y, h = _labels_and_homophily(data)
    return _run_masks([(make_folds(method, h, y, k=k, seed=seed), fold) for method in SPLIT_METHODS
                       for fold in range(k)], k)


def project_sweep_time(rows: pd.DataFrame, datasets=None, models=None, *, threads: int = 2, short: int = 2,
                       long: int = 10, root=None, out=None, progress: bool = True) -> pd.DataFrame:
    """What the finished (dataset, model) pairs of a sweep would cost with the engine imported now.

    A sweep trained in several runs by several engine versions does not say, in its ``seconds``,
    what one pass of today's code costs. For each pair with rows in ``rows`` (k, seed and protocol
    taken from them), the same runs are built (every fold of every split method) and
    :func:`hpstrat_lite.engine.train.train_runs` is timed on CPU for ``short`` and ``long`` fixed epochs (no early
    stopping):

    .. math:: c = \\frac{t_{long} - t_{short}}{long - short},\\qquad s = t_{short} - short \\cdot c.

    The rows give each run's trained epochs :math:`e_r` (early stopping). A batch drops each run in the
    epoch it stops, so its cost is close to :math:`s + \\tfrac{c}{R}\\sum_r e_r` (``low``; per-epoch
    cost taken as proportional to the runs still training); :math:`s + c \\max_r e_r` (``high``) is
    what it would cost if no run were dropped (engines before 2026-11-30 dropped runs only once a
    third of the batch had stopped, so their cost lay in between); loading the
    dataset and making its folds (timed) is added to its first model. One row per pair, stamped with
    the code version and parameters, is appended to ``out`` when given (pairs already there for this
    code version and thread count are skipped, so the runner resumes).
    """
    from tqdm.auto import tqdm

    from ..data.datasets import load_dataset
    from ..engine.models import MODELS
    from ..engine.train import train_runs

    if rows.empty:
        raise ValueError("rows is empty: there is no sweep to project (run hpstrat experiment first).")
    if not 0 < short < long:
        raise ValueError(f"need 0 < short < long epochs; got short={short}, long={long}.")
    version = code_version()
    done = read_rows(out) if out is not None else pd.DataFrame()
    if not done.empty:
        done = done[(done["code_version"] == version) & (done["threads"] == threads)]
    datasets = list(dict.fromkeys(rows["dataset"])) if datasets is None else list(datasets)
    models = [m for m in MODELS if models is None or m in models]
    pairs = [(d, m) for d in datasets for m in models if ((rows["dataset"] == d) & (rows["model"] == m)).any()]
    bar = tqdm(pairs, desc="(dataset, model)", disable=not progress)
    report, loaded = [], None  # loaded: (name, data, y, h) of the dataset in memory
    for name, model in bar:
        bar.set_postfix_str(f"{name} / {model}")
        measured = done[(done["dataset"] == name) & (done["model"] == model)] if not done.empty else done
        if not measured.empty:
            report.append(measured.iloc[-1].to_dict())
            continue
        pair = rows[(rows["dataset"] == name) & (rows["model"] == model)]
        load_s = 0.0
        if loaded is None or loaded[0] != name:
            start = time.perf_counter()
            data = load_dataset(name, root=root, sparse_features=True)
            loaded = (name, data, *_labels_and_homophily(data))
            load_s = time.perf_counter() - start
        _, data, y, h = loaded
        keys = pair[["method", "seed", "fold", "k", "n_bins"]].drop_duplicates().itertuples(index=False)
        plans = {}
        fold_runs = []
        for method, seed, fold, k, n_bins in keys:
            if (method, seed) not in plans:
                plans[method, seed] = make_folds(method, h, y, k=int(k), seed=int(seed), n_bins=int(n_bins))
            fold_runs.append((plans[method, seed], int(fold)))
        masks = _run_masks(fold_runs, int(pair["k"].iloc[0]))
        timed = []
        for epochs in (short, long):
            start = time.perf_counter()
            train_runs(data, model, *masks, seeds=list(range(len(fold_runs))), max_epochs=epochs, patience=None,
                       device="cpu", num_threads=threads)
            timed.append(time.perf_counter() - start)
        per_epoch = max(timed[1] - timed[0], 0.0) / (long - short)
        setup = max(timed[0] - short * per_epoch, 0.0)
        epochs_run = pair["epochs_run"].to_numpy()
        row = {"dataset": name, "model": model, "runs": len(epochs_run), "per_epoch_s": per_epoch,
               "setup_s": setup, "load_s": load_s, "sum_epochs_run": int(epochs_run.sum()),
               "max_epochs_run": int(epochs_run.max()),
               "low_min": (load_s + setup + per_epoch / len(epochs_run) * epochs_run.sum()) / 60,
               "high_min": (load_s + setup + per_epoch * epochs_run.max()) / 60,
               "recorded_min": pair["seconds"].sum() / 60, "threads": threads, "short": short, "long": long,
               "device": "cpu", "host": host_cpu(), "code_version": version,
               "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
        report.append(row)
        if out is not None:
            append_rows(out, [row])
    bar.close()
    return pd.DataFrame(report)


def projection_history(projection: pd.DataFrame) -> pd.DataFrame:
    """One row per measurement of :func:`project_sweep_time` (code version, threads): ``pairs``,
    ``started`` and ``finished`` (the first and last pair's ``finished_at``), ``host`` (the CPU its rows
    name; empty for rows written before rows recorded it), and the summed ``low_min`` and ``high_min``,
    in the order they were measured.

    Consecutive measurements differ by the engine changes between them, by the host (the project's
    machine is not always the same CPU) and by the host's speed in that hour; a total is comparable
    only with one measured on the same host in the same hour (``benchmarks/bench_sweep.py --datasets ...
    --out`` on both engines).
    """
    cols = ["code_version", "threads", "pairs", "started", "finished", "host", "low_min", "high_min"]
    if projection.empty:
        return pd.DataFrame(columns=cols)
    projection = projection.assign(host=projection["host"].fillna("") if "host" in projection else "")
    out = (projection.groupby(["code_version", "threads"], sort=False)
           .agg(pairs=("dataset", "size"), started=("finished_at", "min"), finished=("finished_at", "max"),
                host=("host", "last"), low_min=("low_min", "sum"), high_min=("high_min", "sum"))
           .reset_index())
    return out.sort_values("started", kind="stable", ignore_index=True)[cols]


#: Runs of one (dataset, model) in the measured projection: k = 4 folds x 3 split methods, one seed.
PROJECTED_RUNS = 12
#: Where ``benchmarks/bench_sweep.py`` writes :func:`project_sweep_time`'s rows.
PROJECTION_FILE = RESULTS_DIR / "sweep_projection.csv"


def _run_counts(rows: pd.DataFrame, k: int, seeds, by) -> dict:
    """Distinct runs of the protocol (``k`` folds, split ``seeds``) in ``rows``, counted per ``by`` columns."""
    if rows.empty:
        return {}
    mine = rows[(rows["k"] == k) & rows["seed"].isin(seeds)]
    return mine.drop_duplicates(["dataset", "model", "method", "seed", "fold"]).groupby(by).size().to_dict()


def project_remaining(rows: pd.DataFrame, projection: pd.DataFrame, k: int, seeds) -> pd.DataFrame:
    """Minutes still needed to complete a protocol's (dataset, model) pairs with today's engine.

    Scales :func:`project_sweep_time`'s measurement (``results/sweep_projection.csv``: the k = 4,
    seed 0 pairs, 12 runs each, on CPU) to the runs a pair still lacks: the protocol trains
    ``3 * k * len(seeds)`` runs per pair, minus those with a row in ``rows``. The batched engine's
    per-epoch cost grows about linearly with the runs (its products are memory-bound), and the runs
    are assumed to train as many epochs as the k = 4, seed 0 ones did. Checkpoints of runs in progress
    are not subtracted.

    Parameters
    ----------
    rows : DataFrame
        The protocol's result rows so far (may be empty).
    projection : DataFrame
        Rows of ``results/sweep_projection.csv``; the newest measurement of each pair is used.
    k, seeds : the protocol (folds, split seeds).

    Returns
    -------
    pandas.DataFrame
        One row per pair with runs left: ``dataset``, ``model``, ``runs_left``, ``low_min``,
        ``high_min`` (the scaled projection), ``code_version`` and ``threads`` of the measurement.
    """
    seeds = [int(s) for s in seeds]
    cols = ["dataset", "model", "runs_left", "low_min", "high_min", "code_version", "threads"]
    if projection.empty:
        return pd.DataFrame(columns=cols)
    latest = projection.drop_duplicates(["dataset", "model"], keep="last").copy()
    total = len(SPLIT_METHODS) * k * len(seeds)
    present = _run_counts(rows, k, seeds, ["dataset", "model"])
    latest["runs_left"] = [total - present.get((d, m), 0) for d, m in zip(latest["dataset"], latest["model"])]
    latest = latest[latest["runs_left"] > 0]
    scale = latest["runs_left"] / PROJECTED_RUNS
    latest["low_min"] = latest["low_min"] * scale
    latest["high_min"] = latest["high_min"] * scale
    return latest[cols].reset_index(drop=True)


def protocol_files(k: int, results_dir=None) -> list[Path]:
    """The results files of the k-fold protocol: ``gnn_k<k>_seed*.csv`` in ``results_dir`` (default
    ``results/``): the seed-0 sweep and the seeds 1-5 sweep are separate files of one protocol."""
    return sorted(Path(RESULTS_DIR if results_dir is None else results_dir).glob(f"gnn_k{int(k)}_seed*.csv"))


def protocol_progress(rows: pd.DataFrame, projection: pd.DataFrame, k: int, seeds) -> pd.DataFrame:
    """Where a protocol (k folds, split ``seeds``) stands, per (dataset, model) pair of the measured sweep.

    A pair of ``projection`` (``results/sweep_projection.csv``: every pair of the k = 4 sweep) needs
    ``3 k`` runs per seed. Columns: ``dataset``, ``model``, ``runs_done``, ``runs_left``, ``seeds_left``
    (the seeds with a run missing, as a tuple), ``low_min`` / ``high_min`` (minutes to finish it, from
    :func:`project_remaining`; 0 for a complete pair).
    """
    seeds = sorted(int(s) for s in seeds)
    cols = ["dataset", "model", "runs_done", "runs_left", "seeds_left", "low_min", "high_min"]
    if projection.empty:
        return pd.DataFrame(columns=cols)
    pairs = projection.drop_duplicates(["dataset", "model"])[["dataset", "model"]].reset_index(drop=True)
    per_seed = len(SPLIT_METHODS) * int(k)
    counts = _run_counts(rows, k, seeds, ["dataset", "model", "seed"])
    left = project_remaining(rows, projection, k, seeds).set_index(["dataset", "model"])
    table = []
    for d, m in zip(pairs["dataset"], pairs["model"]):
        done = [counts.get((d, m, s), 0) for s in seeds]
        table.append({"dataset": d, "model": m, "runs_done": sum(done), "runs_left": per_seed * len(seeds) - sum(done),
                      "seeds_left": tuple(s for s, n in zip(seeds, done) if n < per_seed),
                      "low_min": float(left["low_min"].get((d, m), 0.0)),
                      "high_min": float(left["high_min"].get((d, m), 0.0))})
    return pd.DataFrame(table, columns=cols)


def resume_commands(progress: pd.DataFrame, k: int) -> list[str]:
    """The ``hpstrat experiment`` commands that finish the pairs :func:`protocol_progress` lists as
    incomplete: one per dataset and set of missing seeds, models in the order of ``progress``. Without
    ``--out`` the runner appends to :func:`default_results_path` of those seeds, the file the rows of
    those seeds already live in: seed 0 gets a command of its own (``gnn_k4_seed0.csv``), the other
    seeds share one (``gnn_k4_seeds1-5.csv`` for seeds 1-5)."""
    todo = progress[progress["runs_left"] > 0]
    parts = []
    for row in todo.itertuples(index=False):
        rest = tuple(s for s in row.seeds_left if s != 0)
        groups = [(0,), rest] if 0 in row.seeds_left and rest else [tuple(row.seeds_left)]
        parts += [{"dataset": row.dataset, "model": row.model, "seeds": g} for g in groups]
    commands = []
    if not parts:
        return commands
    for (dataset, seeds), group in pd.DataFrame(parts).groupby(["dataset", "seeds"], sort=False):
        commands.append(f"hpstrat experiment --datasets {dataset} --models {' '.join(group['model'])} "
                        f"--k {int(k)} --seeds {' '.join(str(s) for s in seeds)}")
    return commands


def seed_commands(progress: pd.DataFrame, k: int, seeds) -> list[tuple[str, float]]:
    """One ``hpstrat experiment`` command per (dataset, split seed) with runs missing, and its minutes.

    The commands of :func:`resume_commands` train all missing seeds of a pair as one batch (60 runs for
    seeds 1-5), whose rows land only when the whole batch has stopped; a batch checkpoint does not
    outlive the machine it was written on. A command per seed trains 3 k runs per pair, so its pairs
    land one by one in a fraction of the time: pick the ones that fit the hours at hand. ``--out`` names
    the file of the seed's group (seed 0: ``gnn_k<k>_seed0.csv``; the others: the file of all the
    protocol's other ``seeds``), so the rows join the ones already there. Minutes: the pair's projected
    ``low_min`` shared evenly among its missing seeds (about).
    """
    todo = progress[progress["runs_left"] > 0]
    rest = sorted(int(s) for s in seeds if int(s) != 0)
    parts = [{"dataset": row.dataset, "model": row.model, "seed": int(seed),
              "minutes": row.low_min / len(row.seeds_left)}
             for row in todo.itertuples(index=False) for seed in row.seeds_left]
    commands = []
    if not parts:
        return commands
    for (dataset, seed), group in pd.DataFrame(parts).groupby(["dataset", "seed"], sort=False):
        out = default_results_path(k, [0] if seed == 0 else rest)
        commands.append((f"hpstrat experiment --datasets {dataset} --models {' '.join(group['model'])} --k {int(k)} "
                         f"--seeds {seed} --out {out.parent.name}/{out.name}", float(group["minutes"].sum())))
    return commands
