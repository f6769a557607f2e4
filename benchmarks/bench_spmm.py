"""The CPU sparse kernel behind every propagation against the plain loop it replaced, on real operators.

:func:`hpstrat_lite.engine.kernels._spmm` (local accumulator, four entries per pass) and
:func:`hpstrat_lite.engine.kernels._spmm_plain` (one entry at a time into the output) compute the same
floats; this prints both times and the ratio, measured in the same process, for H2GCN's 2-hop surplus
matrix and the GCN operator of a dataset, 12 runs, operand widths 64, 128 (H2GCN's two rounds) and the
number of classes (APPNP / GPR-GNN propagate logits), and checks the outputs are bit-identical. For
width 128 it also times the kernel on the two 64-wide halves (what H2GCN's second round multiplies since
its trunk works on 64-wide pieces) against one 128-wide product: there the "plain s" column is the
128-wide kernel and "kernel s" the two pieces together.

The last two lines time H2GCN's last round as the engine runs it (:class:`hpstrat_lite.engine.operators.RunRows`,
the sweep's 12 runs of k = 4 folds x 3 split methods): the 64-wide surplus product computed only at the
rows a run reads (its training and validation nodes) against every row ("plain s": the full kernel), and
its backward pass through a per-run copy of the matrix without the columns whose gradient is zero (the
test and validation nodes) against the full transpose; "same" checks the floats at every row that is used.

Usage::

    HPSTRAT_DATA=../shared/datasets python benchmarks/bench_spmm.py [--dataset Computers] [--threads 1]
"""
from __future__ import annotations

import argparse
import math
import time

import numba
import numpy as np
import torch

from hpstrat_lite.data import datasets
from hpstrat_lite.engine import models
from hpstrat_lite.engine.kernels import _spmm, _spmm_plain, csr_arrays
from hpstrat_lite.engine import operators


def _time(kernel, csr, h, out, repeats):
    kernel(*csr, h, out)  # compile / warm up
    start = time.perf_counter()
    for _ in range(repeats):
        kernel(*csr, h, out)
    return (time.perf_counter() - start) / repeats


def _time_selection(data, matrix, h, full, repeats):
    """H2GCN's last round on the rows each run reads (forward) and the live columns (backward), against the
    full products ``full = A h`` already computed; prints two lines."""
    from hpstrat_lite.experiments.sweep import sweep_masks
    from hpstrat_lite.engine.kernels import _spmm_select

    tr, va, _ = sweep_masks(data)
    runs, n = h.shape[0], h.shape[1]
    tr, va = tr.t()[:runs], va.t()[:runs]  # every run of the sweep's batch, or the first --runs of them
    rows = operators.RunRows(tr | va, tr)
    need, need_ptr = rows.needed
    crow, col, val = csr_arrays(matrix)
    forward = (np.tile(crow.astype(np.int64), (runs, 1)), col, val)  # the layout spmm_select passes
    out = np.zeros_like(full)
    t_sel = _time(lambda *a: _spmm_select(*a, need, need_ptr), forward, h, out, repeats)
    t_full = _time(_spmm, (crow, col, val), h, np.empty_like(full), repeats)
    read = (tr | va).numpy()[:, :, None]
    print(f"{'  rows a run reads':22s} {int(rows.needed[1][-1] / runs / n * 100):9d}% {h.shape[2]:5d} {t_full:8.3f} "
          f"{t_sel:8.3f} {t_full / t_sel:5.2f}x  {np.array_equal(out, full * read)}")
    g = h * tr.numpy()[:, :, None]  # a gradient that is zero outside the training rows
    transposed = matrix.t().to_sparse_csr()
    transpose, filtered = csr_arrays(transposed), rows.filtered(transposed)
    want, got = np.empty_like(full), np.zeros_like(full)
    t_full = _time(_spmm, transpose, g, want, repeats)
    t_sel = _time(lambda *a: _spmm_select(*a, *rows.every), filtered, g, got, repeats)
    print(f"{'  backward, live cols':22s} {int(filtered[1].size / (col.size * runs) * 100):9d}% {h.shape[2]:5d} "
          f"{t_full:8.3f} {t_sel:8.3f} {t_full / t_sel:5.2f}x  {np.array_equal(got, want)}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="Computers")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=12)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    numba.set_num_threads(args.threads)
    data = datasets.load_dataset(args.dataset)
    # the operators exactly as the engine builds them (factor_share=inf: the factorised 2-hop form always)
    surplus = operators.two_hop_operator(data, "cpu", factor_share=math.inf).surplus.matrix
    gcn = operators.gcn_operator(data, "cpu").matrix
    matrices = {"H2GCN 2-hop surplus": csr_arrays(surplus), "GCN operator": csr_arrays(gcn)}
    n = data.num_nodes
    classes = int(data.y.max()) + 1
    rng = np.random.default_rng(0)
    print(f"{args.dataset}: {n} nodes, {args.runs} runs, {args.threads} thread(s)")
    print(f"{'operator':22s} {'entries':>10s} {'width':>5s} {'plain s':>8s} {'kernel s':>8s} {'ratio':>6s}  same")
    for name, csr in matrices.items():
        repeats = 2 if csr[1].size > 5_000_000 else 20
        for width in (64, 128, classes):
            h = rng.standard_normal((args.runs, n, width)).astype(np.float32)
            plain, fast = np.empty((args.runs, n, width), np.float32), np.empty((args.runs, n, width), np.float32)
            t_plain = _time(_spmm_plain, csr, h, plain, repeats)
            t_fast = _time(_spmm, csr, h, fast, repeats)
            print(f"{name:22s} {csr[1].size:10d} {width:5d} {t_plain:8.3f} {t_fast:8.3f} {t_plain / t_fast:5.2f}x  "
                  f"{np.array_equal(plain, fast)}")
            if width == 64 and name.startswith("H2GCN"):
                _time_selection(data, surplus, h, fast, repeats)
            if width == 128:  # H2GCN's second round: one product on [A1 r || A2 r], or one per 64-wide piece
                pieces = [np.ascontiguousarray(h[:, :, :64]), np.ascontiguousarray(h[:, :, 64:])]
                outs = [np.empty_like(pieces[0]), np.empty_like(pieces[1])]
                t_pieces = sum(_time(_spmm, csr, p, o, repeats) for p, o in zip(pieces, outs))
                print(f"{'  as two 64-wide pieces':22s} {csr[1].size:10d} {width:5d} {t_fast:8.3f} {t_pieces:8.3f} "
                      f"{t_fast / t_pieces:5.2f}x  {np.array_equal(np.concatenate(outs, axis=2), fast)}")


if __name__ == "__main__":
    main()
