"""float32 vs bfloat16 matrix products in the batched engine (``train_runs(precision=...)``).

For each (dataset, model, width) case, R runs (the k = 5 HpStrat folds of seed 0, one seed each)
train for a fixed number of epochs (no early stopping) twice in the same process, with the same
thread count: once with ``precision="float32"`` and once with ``precision="bfloat16"``, repeated
``--repeats`` times in alternation (float32, bfloat16, float32, ...) so that a change in the load of
a shared machine hits both. Prints the per-case best-of-repeats wall times, their ratio, and the
overall ratio (sum of float32 times / sum of bfloat16 times), and then, on full early-stopped runs
(``--check-epochs``, patience 100), how far the two precisions' test accuracies and best epochs lie
apart.

The default cases are Part II's tuned shapes (hidden 256, 2-3 layers; dense features on Photo and
Computers, sparse on CS) and Part I's GCN (64 wide, 2 layers). The gain needs a CPU with bfloat16
matrix units (AMX, Intel Sapphire Rapids and later; ``lscpu | grep amx``) or a GPU; elsewhere
bfloat16 products are emulated and far slower than float32 (the script prints which case it runs on:
:func:`hpstrat_lite.engine.models.native_bfloat16`).

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_precision.py [--datasets Photo CS]
        [--models MLP GCN] [--epochs 20] [--repeats 2] [--threads 2] [--check-epochs 1000]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch

from hpstrat_lite.data.datasets import load_dataset
from hpstrat_lite.engine.models import BF16_CPU_FLAGS, native_bfloat16
from hpstrat_lite._host import cpu_flags
from hpstrat_lite.engine.train import train_runs
from hpstrat_book.part2.tuning import protocol_masks
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution

#: (hidden, num_layers) of each timed case: Part II's tuned width, and Part I's protocol.
SHAPES = ((256, 3), (64, 2))


def _time(data, model, masks, hidden, layers, epochs, precision, threads, patience=None):
    tr, va, te = masks
    t0 = time.perf_counter()
    rows = train_runs(data, model, tr, va, te, list(range(tr.shape[1])),
                      protocol=PAPER_PROTOCOL.replace(hidden=hidden, num_layers=layers, max_epochs=epochs, patience=patience),
                      execution=Execution(device="cpu", num_threads=threads, precision=precision))
    return time.perf_counter() - t0, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["Photo", "Computers", "CS"])
    ap.add_argument("--models", nargs="+", default=["MLP", "GCN"])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--check-epochs", type=int, default=1000,
                    help="max epochs of the accuracy check (patience 100); 0 skips it")
    a = ap.parse_args(argv)
    print(f"threads {a.threads}, {a.epochs} epochs per timing, best of {a.repeats}")
    native = native_bfloat16("cpu")
    print("native bfloat16 products on this CPU:", "yes" if native else "no", "(flags found: "
          + (", ".join(sorted(cpu_flags() & set(BF16_CPU_FLAGS))) or "none of " + ", ".join(BF16_CPU_FLAGS)) + ")")
    warnings.filterwarnings("ignore", message="precision='bfloat16' on a CPU without native")  # said once above
    print(f"{'dataset':10} {'model':5} {'shape':7} {'runs':>4} {'float32 s':>10} {'bfloat16 s':>10} {'ratio':>6}")
    totals = np.zeros(2)
    checks = []  # accuracy-check lines, printed after the timings
    for ds in a.datasets:
        data = load_dataset(ds)
        masks = protocol_masks(data, protocol="hpstrat", seeds=[0], k=5, n_bins=10)[:3]
        runs = masks[0].shape[1]
        for model in a.models:
            for hidden, layers in SHAPES:
                times = {"float32": [], "bfloat16": []}
                _time(data, model, masks, hidden, layers, 2, "bfloat16", a.threads)  # warm-up
                for _ in range(a.repeats):
                    for p in times:
                        times[p].append(_time(data, model, masks, hidden, layers, a.epochs, p, a.threads)[0])
                t32, t16 = min(times["float32"]), min(times["bfloat16"])
                totals += (t32, t16)
                print(f"{ds:10} {model:5} {hidden}x{layers:<3} {runs:>4} {t32:10.2f} {t16:10.2f} "
                      f"{t32 / t16:6.2f}", flush=True)
            if a.check_epochs:
                res = {}
                for p in ("float32", "bfloat16"):
                    rows = _time(data, model, masks, 256, 3, a.check_epochs, p, a.threads, patience=100)[1]
                    res[p] = (np.array([r["test_acc"] for r in rows]), np.array([r["best_epoch"] for r in rows]))
                (acc32, ep32), (acc16, ep16) = res["float32"], res["bfloat16"]
                checks.append(f"{ds:10} {model:5} {acc32.mean():9.4f} {acc16.mean():9.4f} "
                              f"{np.abs(acc32 - acc16).max():8.4f} {int((ep32 == ep16).sum()):>9} of {len(ep32)}")
    print(f"overall: float32 {totals[0]:.1f} s, bfloat16 {totals[1]:.1f} s, ratio {totals[0] / totals[1]:.2f}")
    if checks:
        print(f"\naccuracy check: early-stopped runs (max {a.check_epochs} epochs, patience 100), hidden 256 x 3")
        print(f"{'dataset':10} {'model':5} {'test f32':>9} {'test bf16':>9} {'max |d|':>8} {'same best epoch':>15}")
        print("\n".join(checks))


if __name__ == "__main__":
    main()
