"""The sweep on a local Ray against the local executor: one command each, timed from the shell's view.

Each executor runs the same ``hpstrat experiment`` command (its own results file in a temporary folder)
in a new process, so both times include starting Python, importing torch and the library, loading the
datasets, and for Ray starting a local Ray sized to the machine and its worker processes. The rows of
the two runs are checked to be the same, then the times and their ratio (ray / local) are printed.

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_executor.py
        [--datasets Texas Cornell Wisconsin Chameleon] [--models MLP GCN] [--max-epochs 100]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

RUN_KEY = ["dataset", "model", "method", "k", "seed", "fold"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["Texas", "Cornell", "Wisconsin", "Chameleon"])
    parser.add_argument("--models", nargs="+", default=["MLP", "GCN"])
    parser.add_argument("--max-epochs", type=int, default=100)
    parser.add_argument("--patience", type=int, default=100)
    parser.add_argument("--k", type=int, default=4)
    args = parser.parse_args(argv)
    times, rows = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for executor in ("local", "ray"):
            out = Path(tmp) / f"{executor}.csv"
            cmd = [sys.executable, "-m", "hpstrat_lite.cli", "experiment", "--datasets", *args.datasets,
                   "--models", *args.models, "--k", str(args.k), "--max-epochs", str(args.max_epochs),
                   "--patience", str(args.patience), "--out", str(out), "--executor", executor]
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
            times[executor] = time.perf_counter() - start
            rows[executor] = pd.read_csv(out)
            print(f"{executor}: {times[executor]:.1f} s, {len(rows[executor])} rows", flush=True)
    merged = rows["local"].merge(rows["ray"], on=RUN_KEY, suffixes=("", "_ray"))
    same = len(merged) == len(rows["local"]) and np.array_equal(merged["test_acc"], merged["test_acc_ray"])
    print(f"same test accuracies: {same}")
    print(f"ray / local: {times['ray'] / times['local']:.2f}")


if __name__ == "__main__":
    main()
