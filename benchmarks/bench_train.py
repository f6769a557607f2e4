"""Batched training engine vs a plain per-run PyG training loop.

For each (dataset, model) case, R runs (one fold column and one seed each) train for a fixed number
of epochs (no early stopping on either side), with the same thread count, each side in a new Python process of
its own (the baseline first), so that neither inherits the other's process state (glibc's allocator thresholds
and heap, thread pools, caches):

* baseline: the way reference scripts do it: one PyG model at a time (``GCNConv`` / ``GATConv``
  stack), dense feature matrix, Adam, and per epoch one training step, one evaluation forward pass
  for the validation loss, and a copy of the state dict when it improves; test with the best state;
* batched: :func:`hpstrat_lite.engine.train.train_runs` with all R runs in one batched model (sparse
  features stay sparse).

Before its clock starts, each side trains ``--warmup-epochs`` epochs (default 2), untimed,
so that one-off costs (numba compiling its kernels, or loading them from its cache; first calls into PyG,
MKL or CUDA) are not counted as training time; ``--warmup-epochs 0`` times them too.

Prints the per-case wall and CPU times (the timing process's CPU time, less sensitive to other processes
on a shared machine) and their ratios, and the overall ratios (sum of baseline times / sum of
batched times). ``--baseline-runs`` times only the first few baseline runs and scales the time to R
(the runs cost the same; the report says when it did).

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_train.py [--datasets Cora CS]
        [--models GCN GAT] [--runs 12] [--epochs 200] [--baseline-runs 12] [--threads 2]
        [--early-stop-datasets Cora Physics] [--device cuda] [--warmup-epochs 2]

``--device cuda`` runs both sides on the GPU (the baseline's model, features and masks moved there), and
the clocks wait for the GPU's queue before they stop.

``--early-stop-datasets`` additionally times one full early-stopped batch (max 1000 epochs, patience
100) per model on each named dataset, to size the experiment sweep.
"""
from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from hpstrat_lite import fold_masks, random_folds
from hpstrat_lite.data.datasets import load_dataset
from hpstrat_lite.engine.models import MODELS
from hpstrat_lite.engine.train import train_runs
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution


def _pyg_model(name: str, in_dim: int, num_classes: int) -> torch.nn.Module:
    from torch_geometric.nn import GATConv, GCNConv

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if name == "GCN":
                self.conv1, self.conv2 = GCNConv(in_dim, 64), GCNConv(64, num_classes)
            else:
                self.conv1 = GATConv(in_dim, 8, heads=8, dropout=0.5)
                self.conv2 = GATConv(64, num_classes, heads=1, concat=False, dropout=0.5)

        def forward(self, x, edge_index):
            h = self.conv1(x, edge_index)
            h = F.relu(h) if name == "GCN" else F.elu(h)
            h = F.dropout(h, p=0.5, training=self.training)
            return self.conv2(h, edge_index)

    return Net()


def baseline_run(name, x, edge_index, y, train, val, test, seed, epochs):
    """One run of a plain PyG training loop (on the tensors' device); returns its test accuracy at the best
    validation loss."""
    torch.manual_seed(seed)
    model = _pyg_model(name, x.shape[1], int(y.max()) + 1).to(x.device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    best_loss, best_state = float("inf"), None
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        out = model(x, edge_index)
        F.cross_entropy(out[train], y[train]).backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            val_loss = float(F.cross_entropy(model(x, edge_index)[val], y[val]))
        if val_loss < best_loss:
            best_loss, best_state = val_loss, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        pred = model(x, edge_index).argmax(-1)
    return float((pred[test] == y[test]).float().mean())


def _masks(data, runs):
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    reps = -(-runs // 4)
    return [torch.cat([m] * reps, 1)[:, :runs] for m in (tr, va, te)]


class _Clock:
    """Wall time and this process's CPU time (the latter is less sensitive to other processes on a
    shared machine); with CUDA in use, both stop once the GPU has finished the work queued in the block."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def _time_side(side, data, name, runs, epochs, baseline_runs, device="cpu", warmup_epochs=2):
    """One side of a case in this process: (wall, cpu, mean test accuracy of the first ``baseline_runs`` runs,
    warm-up seconds). ``side``: "baseline" (``baseline_runs`` PyG runs) or "batched" (all ``runs``)."""
    tr, va, te = _masks(data, runs)
    seeds = list(range(runs))
    if side == "baseline":  # the tensors on the device, made once for the warm-up and the timed runs
        x = (data.x.to_dense() if data.x.layout != torch.strided else data.x).to(device)
        edge_index, y = data.edge_index.to(device), data.y.to(device)
        btr, bva, bte = (m.to(device) for m in (tr, va, te))

        def train(n_epochs, n_runs):
            return [baseline_run(name, x, edge_index, y, btr[:, r], bva[:, r], bte[:, r], seeds[r], n_epochs)
                    for r in range(n_runs)]
    else:
        def train(n_epochs, n_runs):
            rows = train_runs(data, name, tr, va, te, seeds,
                              protocol=PAPER_PROTOCOL.replace(max_epochs=n_epochs, patience=None),
                              execution=Execution(device=device, num_threads=None))
            return [r["test_acc"] for r in rows[:n_runs]]
    with _Clock() as warm:
        if warmup_epochs:
            train(warmup_epochs, 1)
    with _Clock() as clock:
        accs = train(epochs, baseline_runs)
    return clock.wall, clock.cpu, sum(accs) / len(accs), warm.wall


def _side_in_new_process(side, dataset, name, runs, epochs, baseline_runs, device, warmup_epochs, threads):
    """:func:`_time_side` in a new Python process (this script with ``--side``): neither side inherits the
    other's process state (glibc's allocator thresholds and heap, thread pools, caches)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--side", side, "--datasets", dataset, "--models", name,
           "--runs", str(runs), "--epochs", str(epochs), "--baseline-runs", str(baseline_runs),
           "--device", device, "--warmup-epochs", str(warmup_epochs)]
    if threads:
        cmd += ["--threads", str(threads)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the {side} side of {dataset} {name} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_case(dataset, name, runs, epochs, baseline_runs, device="cpu", warmup_epochs=2, threads=None):
    """(baseline wall, baseline cpu, batched wall, batched cpu, baseline acc, batched acc, warm-up seconds),
    each side timed in its own new process, the baseline first.

    Before its clock starts, each side trains ``warmup_epochs`` epochs once, untimed: one-off costs (numba
    compiling or loading its cached kernels, PyG's and MKL's first calls, CUDA context) are not per-run
    training time."""
    sides = {side: _side_in_new_process(side, dataset, name, runs, epochs, baseline_runs, device, warmup_epochs,
                                        threads) for side in ("baseline", "batched")}
    base, batched = sides["baseline"], sides["batched"]
    scale = runs / baseline_runs
    return (base["wall"] * scale, base["cpu"] * scale, batched["wall"], batched["cpu"], base["acc"], batched["acc"],
            base["warm"] + batched["warm"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=["Cora", "CS"])
    ap.add_argument("--models", nargs="+", default=["GCN", "GAT"], choices=["GCN", "GAT"])
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--baseline-runs", type=int, default=None,
                    help="time only this many baseline runs and scale to --runs (default: all)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads for both sides (default: torch's)")
    ap.add_argument("--early-stop-datasets", nargs="*", default=[])
    ap.add_argument("--es-models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--device", default="cpu", help="cpu or cuda: where both sides train (default cpu)")
    ap.add_argument("--warmup-epochs", type=int, default=2,
                    help="untimed epochs each side trains first, per case (0: none; default 2)")
    ap.add_argument("--side", choices=["baseline", "batched"], default=None,
                    help=argparse.SUPPRESS)  # internal: time one side of one case here, print it as JSON
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.side:
        k = min(args.baseline_runs or args.runs, args.runs)
        wall, cpu, acc, warm = _time_side(args.side, load_dataset(args.datasets[0]), args.models[0], args.runs,
                                          args.epochs, k, args.device, args.warmup_epochs)
        print(json.dumps({"wall": wall, "cpu": cpu, "acc": acc, "warm": warm}))
        return
    where = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else \
        f"cpu, {torch.get_num_threads()} thread(s)"
    print(f"torch {torch.__version__}, {where}, {args.runs} runs, {args.epochs} epochs, no early stopping")
    tot = [0.0] * 4
    for ds in args.datasets:
        for name in args.models:
            k = min(args.baseline_runs or args.runs, args.runs)
            bw, bc, ew, ec, acc_b, acc_e, warm = bench_case(ds, name, args.runs, args.epochs, k, args.device,
                                                            args.warmup_epochs, args.threads)
            tot = [a + b for a, b in zip(tot, (bw, bc, ew, ec))]
            note = "" if k == args.runs else f"  (baseline: {k} runs timed, scaled to {args.runs})"
            note += f"  (warm-up {warm:.1f} s, untimed)" if args.warmup_epochs else ""
            print(f"{ds:8s} {name:4s} wall: baseline {bw:8.1f} s, batched {ew:7.1f} s, ratio {bw / ew:5.1f}x | "
                  f"cpu: {bc:8.1f} s, {ec:7.1f} s, ratio {bc / ec:5.1f}x | test acc {acc_b:.3f} / {acc_e:.3f}{note}",
                  flush=True)
    if tot[2]:
        print(f"overall wall: baseline {tot[0]:.1f} s, batched {tot[2]:.1f} s, ratio {tot[0] / tot[2]:.1f}x; "
              f"cpu: baseline {tot[1]:.1f} s, batched {tot[3]:.1f} s, ratio {tot[1] / tot[3]:.1f}x")
    for ds in args.early_stop_datasets:
        data = load_dataset(ds)
        tr, va, te = _masks(data, args.runs)
        for name in args.es_models:
            with _Clock() as clock:
                rows = train_runs(data, name, tr, va, te, list(range(args.runs)),
                                  execution=Execution(device=args.device))
            ep = [r["epochs_run"] for r in rows]
            acc = sum(r["test_acc"] for r in rows) / len(rows)
            print(f"early-stopped {ds:8s} {name:9s} wall {clock.wall:8.1f} s cpu {clock.cpu:8.1f} s  "
                  f"epochs {min(ep)}-{max(ep)}  "
                  f"runs per batch {max(r['batch_size'] for r in rows)}  test acc {acc:.3f}", flush=True)


if __name__ == "__main__":
    main()
