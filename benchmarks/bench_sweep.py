"""How long would the full k=4 sweep take with the current engine? A projection from measured epochs.

The committed sweep (``results/gnn_k4_seed0.csv``) was trained in several runs by several
engine versions, so the ``seconds`` in its rows do not say what one pass of today's code costs.
:func:`project_sweep_time` measures it per (dataset, model): per-epoch and
setup cost of the same 12 runs (k = 4 folds x 3 split methods) on CPU, times the epochs the committed
runs trained (a low and a high bound, see its docstring). The rows go to
``results/sweep_projection.csv`` (resumable; chapter 03 reads them) and the totals are printed next
to the budget of 180 minutes.

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_sweep.py [--threads 2]
        [--datasets Cora CS] [--models GCN H2GCN] [--short 2 --long 10]
"""
from __future__ import annotations

import argparse
from pathlib import Path
import time

import pandas as pd
import torch

from hpstrat_lite._host import host_cpu
from hpstrat_lite.core.folds import make_folds
from hpstrat_lite.data.datasets import load_dataset
from hpstrat_lite.engine.models import MODELS
from hpstrat_lite.engine.train import train_runs
from hpstrat_lite.rows import append_rows, code_version, read_rows

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"  # the checkout's committed rows
from hpstrat_lite.experiments.sweep import _labels_and_homophily, _run_masks
from hpstrat_book.timing import PROJECTION_FILE
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution

BUDGET_MINUTES = 180


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
            train_runs(data, model, *masks, seeds=list(range(len(fold_runs))),
                       protocol=PAPER_PROTOCOL.replace(max_epochs=epochs, patience=None),
                       execution=Execution(device="cpu", num_threads=threads))
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



def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(RESULTS_DIR / "gnn_k4_seed0.csv"))
    parser.add_argument("--out", default=str(PROJECTION_FILE))
    parser.add_argument("--datasets", nargs="*")
    parser.add_argument("--models", nargs="*", choices=MODELS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--short", type=int, default=2)
    parser.add_argument("--long", type=int, default=10)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    table = project_sweep_time(read_rows(args.results), args.datasets, args.models, threads=args.threads,
                               short=args.short, long=args.long, out=args.out)
    cols = ["dataset", "model", "per_epoch_s", "setup_s", "max_epochs_run", "low_min", "high_min", "recorded_min"]
    print(table[cols].round(3).to_string(index=False))
    low, high, rec = table["low_min"].sum(), table["high_min"].sum(), table["recorded_min"].sum()
    print(f"\n{len(table)} (dataset, model) pairs, {args.threads} thread(s), code {table['code_version'].iloc[-1]}")
    print(f"projected sweep time with this engine: {low:.0f}-{high:.0f} min; budget {BUDGET_MINUTES} min: "
          f"ratio {low / BUDGET_MINUTES:.2f}-{high / BUDGET_MINUTES:.2f}; recorded in the rows (older engines): {rec:.0f} min")
    print(table.groupby("model", sort=False)[["low_min", "high_min", "recorded_min"]].sum().round(1).to_string())


if __name__ == "__main__":
    main()
