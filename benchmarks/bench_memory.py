"""Training with glibc's allocator reusing freed memory against its default, on the sweep's largest pairs.

:func:`hpstrat_lite.train.reuse_freed_memory` (on by default inside :func:`~hpstrat_lite.train.train_runs`)
keeps the large activations an epoch frees in mapped memory, so the next epoch does not page-fault them
in again. For each (dataset, model) this times the same 12 runs (k = 4 folds x 3 split methods, as in
the sweep) for ``--short`` and ``--long`` fixed epochs, off and on alternately (``HPSTRAT_REUSE_MEMORY``
= 0 / 1, in the same process), and prints the per-epoch times, their ratio, and whether every run's
numbers are equal.

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_memory.py [--threads 2]
        [--pairs Computers/H2GCN Physics/MixHop] [--short 2 --long 10]
"""
from __future__ import annotations

import argparse
import os
import time

import torch

from hpstrat_lite import datasets, train
from hpstrat_lite.experiment import _labels_and_homophily, _run_masks
from hpstrat_lite.folds import SPLIT_METHODS, make_folds

PAIRS = ["Computers/H2GCN", "Physics/H2GCN", "Physics/MixHop", "Computers/MixHop", "Computers/GAT", "Physics/GAT"]
KEYS = ("best_epoch", "train_loss", "val_loss", "test_loss", "test_acc")


def _masks(data, k=4):
    """The sweep's 12 runs of a dataset: every round of the three split methods' k-fold (seed 0)."""
    y, h = _labels_and_homophily(data)
    return _run_masks([(make_folds(method, h, y, k, seed=0), fold) for method in SPLIT_METHODS
                       for fold in range(k)], k)


def _per_epoch(data, model, masks, threads, short, long, reuse):
    os.environ[train.REUSE_MEMORY_ENV] = "1" if reuse else "0"
    times, rows = [], None
    for epochs in (short, long):
        start = time.perf_counter()
        rows = train.train_runs(data, model, *masks, seeds=list(range(masks[0].shape[1])), max_epochs=epochs,
                                patience=None, device="cpu", num_threads=threads)
        times.append(time.perf_counter() - start)
    return (times[1] - times[0]) / (long - short), rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="*", default=PAIRS, help="dataset/model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--short", type=int, default=2)
    parser.add_argument("--long", type=int, default=10)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"{'pair':18s} {'default s/epoch':>15s} {'reused s/epoch':>14s} {'ratio':>6s}  same numbers")
    loaded = {}
    for pair in args.pairs:
        name, model = pair.split("/")
        if name not in loaded:
            data = datasets.load_dataset(name)
            loaded = {name: (data, _masks(data))}
        data, masks = loaded[name]
        measured = {False: [], True: []}
        rows = {}
        for reuse in (False, True, False, True):  # alternate, so both see the same hour of a shared host
            t, rows[reuse] = _per_epoch(data, model, masks, args.threads, args.short, args.long, reuse)
            measured[reuse].append(t)
        off, on = min(measured[False]), min(measured[True])
        same = all(a[key] == b[key] for a, b in zip(rows[False], rows[True]) for key in KEYS)
        print(f"{pair:18s} {off:15.3f} {on:14.3f} {off / on:5.2f}x  {same}", flush=True)


if __name__ == "__main__":
    main()
