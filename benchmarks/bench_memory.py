"""Training with glibc's allocator reusing freed memory against its own settings, on the sweep's largest pairs.

:func:`hpstrat_lite.engine.train.reuse_freed_memory` (on CPU by default; ``Execution(reuse_freed_memory=False)``
leaves glibc's settings alone)
keeps the large activations an epoch frees in mapped memory, so the next epoch does not page-fault them
in again. For each (dataset, model) this times the same 12 runs (k = 4 folds x 3 split methods, as in
the sweep) for ``--short`` and ``--long`` fixed epochs, off and on alternately (``Execution.reuse_freed_memory``
= 0 / 1), each measurement in a fresh Python process (once ``mallopt`` has run, glibc's allocator no longer
behaves as in a new process, even with its default settings back), and prints the best per-epoch time of
each setting, their ratio, and whether every run's numbers are equal.

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_memory.py [--threads 2]
        [--pairs Computers/H2GCN Physics/MixHop] [--short 2 --long 10] [--repeats 2]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import torch

from hpstrat_lite.data import datasets
from hpstrat_lite.engine import train
from hpstrat_lite.experiments.sweep import sweep_masks
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution

PAIRS = ["Computers/H2GCN", "Physics/H2GCN", "Physics/MixHop", "Computers/MixHop", "Computers/GAT", "Physics/GAT"]
KEYS = ("best_epoch", "train_loss", "val_loss", "test_loss", "test_acc")


def _measure(pair, args, reuse):
    """One measurement in a fresh process: ``(seconds per epoch, the runs' numbers)``."""
    cmd = [sys.executable, __file__, "--child", pair, "--threads", str(args.threads), "--short", str(args.short),
           "--long", str(args.long)] + (["--reuse"] if reuse else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["per_epoch"], result["numbers"]


def _child(pair, args):
    name, model = pair.split("/")
    torch.set_num_threads(args.threads)
    data = datasets.load_dataset(name)
    masks = sweep_masks(data)  # the sweep's 12 runs, made once, outside the timed calls
    times, rows = [], None
    for epochs in (args.short, args.long):
        start = time.perf_counter()
        rows = train.train_runs(data, model, *masks, seeds=list(range(masks[0].shape[1])),
                                protocol=PAPER_PROTOCOL.replace(max_epochs=epochs, patience=None),
                                execution=Execution(device="cpu", num_threads=args.threads,
                                                    reuse_freed_memory=args.reuse))
        times.append(time.perf_counter() - start)
    numbers = [[row[key] for key in KEYS] for row in rows]
    print(json.dumps({"per_epoch": (times[1] - times[0]) / (args.long - args.short), "numbers": numbers}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="*", default=PAIRS, help="dataset/model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--short", type=int, default=2)
    parser.add_argument("--long", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2, help="measurements of each setting, alternated")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--reuse", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.child, args)
    print(f"{'pair':18s} {'glibc s/epoch':>15s} {'reused s/epoch':>14s} {'ratio':>6s}  same numbers")
    for pair in args.pairs:
        measured, numbers = {False: [], True: []}, {}
        for _ in range(args.repeats):  # alternate, so both settings see the same hour of a shared host
            for reuse in (False, True):
                t, numbers[reuse] = _measure(pair, args, reuse)
                measured[reuse].append(t)
        off, on = min(measured[False]), min(measured[True])
        print(f"{pair:18s} {off:15.3f} {on:14.3f} {off / on:5.2f}x  {numbers[False] == numbers[True]}", flush=True)


if __name__ == "__main__":
    main()
