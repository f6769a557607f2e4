"""How long would the full k=4 sweep take with the current engine? A projection from measured epochs.

The committed sweep (``results/gnn_k4_seed0.csv``) was trained in several runs by several
engine versions, so the ``seconds`` in its rows do not say what one pass of today's code costs.
:func:`hpstrat_lite.experiments.sweep.project_sweep_time` measures it per (dataset, model): per-epoch and
setup cost of the same 12 runs (k = 4 folds x 3 split methods) on CPU, times the epochs the committed
runs trained (a low and a high bound, see its docstring). The rows go to
``results/sweep_projection.csv`` (resumable; chapter 03 reads them) and the totals are printed next
to the issue's budget of 180 minutes.

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_sweep.py [--threads 2]
        [--datasets Cora CS] [--models GCN H2GCN] [--short 2 --long 10]
"""
from __future__ import annotations

import argparse

import torch

from hpstrat_lite.experiments.sweep import PROJECTION_FILE, project_sweep_time
from hpstrat_lite.engine.models import MODELS
from hpstrat_lite.experiments.results import RESULTS_DIR, read_rows

BUDGET_MINUTES = 180


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
