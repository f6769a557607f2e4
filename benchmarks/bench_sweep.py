"""How long would the full k=4 sweep take with the current engine? A projection from measured epochs.

The committed sweep (``results/gnn_k4_seed0.csv``) was trained over several sessions by several
engine versions, so the ``seconds`` in its rows do not say what one run of today's code costs. This
script measures it, per (dataset, model), with the same 12 runs (k = 4 folds x 3 split methods,
seed 0) the runner batches:

* ``setup`` and ``per_epoch``: :func:`hpstrat_lite.train.train_runs` is timed for ``--short`` and
  ``--long`` fixed epochs (no early stopping); ``per_epoch = (t_long - t_short) / (long - short)``
  and ``setup = t_short - short * per_epoch`` (operators, feature preparation, final evaluation);
* the committed rows say how many epochs each run trained (``epochs_run``, early stopping with
  patience 100). A batch trains all 12 runs until the last one stops, but drops stopped runs once few
  are left (:func:`hpstrat_lite.train.train_runs`), so its cost lies between

  - ``low  = setup + per_epoch / 12 * sum(epochs_run)`` (every stopped run dropped at once) and
  - ``high = setup + per_epoch * max(epochs_run)`` (no run ever dropped).

Data loading and fold making are timed once per dataset and added to both. The totals are printed
next to the issue's budget (180 minutes). Datasets or models missing from the results file are
reported and left out of the total.

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_sweep.py [--threads 2]
        [--datasets Cora CS] [--models GCN H2GCN] [--short 2 --long 10]
"""
from __future__ import annotations

import argparse
import time

import pandas as pd
import torch

from hpstrat_lite.datasets import load_dataset
from hpstrat_lite.folds import SPLIT_METHODS, fold_masks, make_folds
from hpstrat_lite.homophily import node_homophily
from hpstrat_lite.models import MODELS
from hpstrat_lite.results import read_rows
from hpstrat_lite.train import train_runs

BUDGET_MINUTES = 180


def _masks(data, k=4, seed=0):
    y = data.y.numpy()
    h = node_homophily(data.edge_index, y, data.num_nodes, assume_simple=True)
    cols = [[], [], []]
    for method in SPLIT_METHODS:
        folds = make_folds(method, h, y, k, seed=seed, n_bins=10)
        tr, va, te = fold_masks(folds, k)
        for fold in range(k):
            for store, m in zip(cols, (tr, va, te)):
                store.append(m[:, fold])
    return [torch.stack(c, dim=1) for c in cols]


def _timed(data, model, masks, epochs, threads):
    start = time.perf_counter()
    train_runs(data, model, *masks, seeds=list(range(masks[0].shape[1])), max_epochs=epochs, patience=None,
               device="cpu", num_threads=threads)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results/gnn_k4_seed0.csv")
    parser.add_argument("--datasets", nargs="*")
    parser.add_argument("--models", nargs="*", choices=MODELS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--short", type=int, default=2)
    parser.add_argument("--long", type=int, default=10)
    args = parser.parse_args(argv)
    if not 0 < args.short < args.long:
        parser.error(f"need 0 < --short < --long; got {args.short} and {args.long}.")
    torch.set_num_threads(args.threads)
    rows = read_rows(args.results)
    rows = rows[(rows["k"] == 4) & (rows["seed"] == 0)]
    datasets = args.datasets or list(dict.fromkeys(rows["dataset"]))
    models = args.models or list(MODELS)
    report = []
    for name in datasets:
        start = time.perf_counter()
        data = load_dataset(name)
        masks = _masks(data)
        load_s = time.perf_counter() - start
        for i, model in enumerate(models):
            done = rows[(rows["dataset"] == data.name) & (rows["model"] == model)]
            if len(done) < masks[0].shape[1]:
                print(f"{data.name:10s} {model:9s} not in {args.results} ({len(done)} rows): left out", flush=True)
                continue
            t_short = _timed(data, model, masks, args.short, args.threads)
            t_long = _timed(data, model, masks, args.long, args.threads)
            per_epoch = max(t_long - t_short, 0.0) / (args.long - args.short)
            setup = max(t_short - args.short * per_epoch, 0.0)
            epochs = done["epochs_run"].to_numpy()
            runs = len(epochs)
            extra = load_s if i == 0 else 0.0
            low = extra + setup + per_epoch / runs * epochs.sum()
            high = extra + setup + per_epoch * epochs.max()
            report.append({"dataset": data.name, "model": model, "per_epoch_s": per_epoch, "setup_s": setup,
                           "max_epochs_run": int(epochs.max()), "low_min": low / 60, "high_min": high / 60,
                           "recorded_min": done["seconds"].sum() / 60})
            r = report[-1]
            print(f"{data.name:10s} {model:9s} {per_epoch:7.3f} s/epoch  setup {setup:6.1f} s  "
                  f"{r['max_epochs_run']:4d} epochs  -> {r['low_min']:6.1f}-{r['high_min']:6.1f} min "
                  f"(recorded {r['recorded_min']:6.1f} min)", flush=True)
    table = pd.DataFrame(report)
    if table.empty:
        print("nothing to project")
        return
    low, high, rec = table["low_min"].sum(), table["high_min"].sum(), table["recorded_min"].sum()
    print(f"\n{len(table)} (dataset, model) pairs, {args.threads} thread(s)")
    print(f"projected sweep time with this engine: {low:.0f}-{high:.0f} min "
          f"(budget {BUDGET_MINUTES} min: ratio {low / BUDGET_MINUTES:.2f}-{high / BUDGET_MINUTES:.2f}); "
          f"recorded in the rows (older engines): {rec:.0f} min")
    print(table.groupby("model")[["low_min", "high_min", "recorded_min"]].sum().round(1).to_string())


if __name__ == "__main__":
    main()
