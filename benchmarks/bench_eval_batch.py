"""Evaluation seeds one batch at a time vs all together (``part2 ... --eval-batch 1`` vs the default).

Part II evaluates a tuned configuration on several split seeds of the HpStrat k-fold protocol, k runs
per seed. ``--eval-batch 1`` trains each seed's k runs as one batch (its rows land as it ends);
the default trains all the seeds' runs as one batch. For each (dataset, model) case this script
trains, for a fixed number of epochs (no early stopping), ``k`` runs and ``k x seeds`` runs of the
tuned shape (hidden 256, 3 layers, standard feature scaling), repeated ``--repeats`` times in
alternation (small, large, small, ...) so that a change in the load of a shared machine hits both,
and prints the best-of-repeats seconds per run of each and their ratio (small / large: above 1
means the larger batch trains a run faster).

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_eval_batch.py [--datasets Photo]
        [--models GCN] [--k 5] [--seeds 4] [--epochs 30] [--repeats 2] [--threads 2]
"""
from __future__ import annotations

import argparse
import time
import warnings

import torch

from hpstrat_lite.data.datasets import load_dataset
from hpstrat_lite._host import host_cpu
from hpstrat_lite.engine.train import train_runs
from hpstrat_book.part2.tuning import protocol_masks
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution


def _seconds_per_run(data, model, masks, epochs, threads):
    tr, va, te = masks
    t0 = time.perf_counter()
    train_runs(data, model, tr, va, te, list(range(tr.shape[1])),
               protocol=PAPER_PROTOCOL.replace(hidden=256, num_layers=3, dropout=0.5, lr=0.003, weight_decay=1e-3, max_epochs=epochs, patience=None, feature_norm="standard"),
               execution=Execution(device="cpu", num_threads=threads))
    return (time.perf_counter() - t0) / tr.shape[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["Photo"])
    ap.add_argument("--models", nargs="+", default=["GCN"])
    ap.add_argument("--k", type=int, default=5, help="folds: runs per evaluation seed")
    ap.add_argument("--seeds", type=int, default=4,
                    help="evaluation seeds trained together by default (seed 0 reuses the tuning's runs)")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    print(f"host: {host_cpu()}, {a.threads} threads, {a.epochs} epochs, hidden 256 x 3 layers")
    for ds in a.datasets:
        data = load_dataset(ds)
        # one seed's k rounds, and the rounds of seeds 1..seeds stacked (as the default evaluation)
        small = protocol_masks(data, protocol="hpstrat", seeds=(1,), k=a.k)[:3]
        large = protocol_masks(data, protocol="hpstrat", seeds=range(1, a.seeds + 1), k=a.k)[:3]
        for model in a.models:
            best = {"small": float("inf"), "large": float("inf")}
            for _ in range(a.repeats):
                for name, masks in (("small", small), ("large", large)):
                    best[name] = min(best[name], _seconds_per_run(data, model, masks, a.epochs, a.threads))
            print(f"{ds:10s} {model:5s} {a.k:3d} runs a batch: {best['small']:6.2f} s/run   "
                  f"{a.k * a.seeds:3d} runs a batch: {best['large']:6.2f} s/run   "
                  f"ratio {best['small'] / best['large']:.2f}x", flush=True)


if __name__ == "__main__":
    main()
