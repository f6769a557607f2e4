"""Stage 5: folds -> training runs -> result rows (the HpStrat GNN experiment, Section 5).

The grid is datasets x models x split methods x seeds x folds. All pending runs of one
(dataset, model) — every fold of every split method and seed — are trained together in one batched
model (:func:`hpstrat_lite.train.train_runs`), then their rows are appended atomically to a CSV under
``results/``. Restarting the same command skips runs whose rows exist, so a killed sweep loses only
the batch it was in.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from .folds import SPLIT_METHODS, fold_masks, make_folds
from .homophily import node_homophily
from .results import RESULTS_DIR, append_rows, code_version, read_rows

RUN_KEY = ["dataset", "model", "method", "k", "seed", "fold", "n_bins", "max_epochs", "patience"]
"""Columns that identify one run; a row with the same key is never trained twice."""


def default_results_path(k: int, seeds) -> Path:
    """``results/gnn_k<k>_seed<s>.csv`` for one seed, ``results/gnn_k<k>_seeds<a>-<b>.csv`` for several."""
    seeds = sorted(seeds)
    tag = f"seed{seeds[0]}" if len(seeds) == 1 else f"seeds{seeds[0]}-{seeds[-1]}"
    return RESULTS_DIR / f"gnn_k{k}_{tag}.csv"


def run_seed(seed: int, fold: int) -> int:
    """Initial-weight / dropout seed of the run on fold ``fold`` of split seed ``seed``.

    The same for every split method, so methods differ only in their folds."""
    return 1000 * int(seed) + int(fold)


def run_experiment(datasets, models=None, k: int = 4, seeds=(0,), methods=None, n_bins: int = 10, out=None,
                   root=None, device="auto", max_epochs: int = 1000, patience: int = 100,
                   runs_per_batch: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Run (or resume) the grid and return every row of the results file.

    Parameters
    ----------
    datasets : sequence of str
        Names for :func:`hpstrat_lite.load_dataset`.
    models : sequence of str, optional
        Default: every model of :data:`hpstrat_lite.models.MODELS` (7 GNNs and the MLP reference).
    k, seeds, methods, n_bins
        Folds per split, split seeds, split methods (default random, stratified, hpstrat), bins B.
    out : path, optional
        Results CSV (default :func:`default_results_path`). Rows already there are not rerun.
    max_epochs, patience
        Training protocol (HpStrat: 1000 epochs, patience 100 on validation loss).

    Returns
    -------
    pandas.DataFrame with one row per run: the run key, ``best_epoch``, ``epochs_run``, ``train_acc``,
    ``val_acc``, ``test_acc``, ``test_homophily`` (mean over the test fold's non-isolated nodes),
    ``test_isolated``, ``seconds``, ``batch_size``, ``device``, ``code_version``, ``finished_at``.
    """
    from tqdm.auto import tqdm

    from .datasets import load_dataset
    from .models import MODELS, check_model
    from .train import train_runs

    version = code_version()  # of the code imported now, which trains every run of this call
    models = list(MODELS) if models is None else [check_model(m) for m in models]
    methods = list(SPLIT_METHODS) if methods is None else list(methods)
    for m in methods:
        if m not in SPLIT_METHODS:
            raise ValueError(f"methods must be a subset of {SPLIT_METHODS}; got {m!r}.")
    if isinstance(seeds, int):
        seeds = [seeds]
    seeds = [int(s) for s in seeds]
    out = Path(out) if out is not None else default_results_path(k, seeds)
    done = _finished_keys(read_rows(out))
    bar = tqdm(total=len(datasets) * len(models), desc="(dataset, model)", disable=not progress)
    for name in datasets:
        data = load_dataset(name, root=root)
        y = data.y.numpy()
        h = node_homophily(data.edge_index, y, data.num_nodes, assume_simple=True)
        plan = [(method, seed, make_folds(method, h, y, k, seed=seed, n_bins=n_bins))
                for method in methods for seed in seeds]
        for model in models:
            bar.set_postfix_str(f"{data.name} / {model}")
            runs = [(method, seed, fold, folds) for method, seed, folds in plan for fold in range(k)
                    if (data.name, model, method, k, seed, fold, n_bins, max_epochs, patience) not in done]
            if runs:
                rows = _train_and_describe(data, model, runs, k, h, n_bins, max_epochs, patience, device,
                                           runs_per_batch, train_runs, version)
                append_rows(out, rows)
                done |= {tuple(r[c] for c in RUN_KEY) for r in rows}
            bar.update(1)
    bar.close()
    return read_rows(out)


def _finished_keys(table: pd.DataFrame) -> set:
    if table.empty:
        return set()
    return set(map(tuple, table[RUN_KEY].itertuples(index=False, name=None)))


def _train_and_describe(data, model, runs, k, h, n_bins, max_epochs, patience, device, runs_per_batch,
                        train_runs, version) -> list[dict]:
    import torch

    masks = [[], [], []]
    for _, _, fold, folds in runs:
        tr, va, te = fold_masks(folds, k)
        for store, m in zip(masks, (tr, va, te)):
            store.append(m[:, fold])
    train_mask, val_mask, test_mask = (torch.stack(m, dim=1) for m in masks)
    results = train_runs(data, model, train_mask, val_mask, test_mask,
                         seeds=[run_seed(seed, fold) for _, seed, fold, _ in runs],
                         max_epochs=max_epochs, patience=patience, device=device, runs_per_batch=runs_per_batch)
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
                     "batch_size": res["batch_size"], "device": res["device"], "code_version": version,
                     "finished_at": stamp})
    return rows
