"""The ``hpstrat`` command line: what people run from a shell.

    hpstrat datasets                                   # Table 1 summary of the datasets
    hpstrat split --dataset Cora --method hpstrat --k 4 --seed 0 --out folds.npy
    hpstrat quality --dataset Cora --k 4 --seeds 10    # SDD / CDD / CHD / W1 of the three methods
    hpstrat experiment --datasets Cora Texas --models GCN GAT --k 4 --seeds 0
    hpstrat progress --k 4 --seeds 0 1 2 3 4 5         # pairs complete, hours left, commands that finish it
    hpstrat progress --k 4 --seeds 0 1 2 3 4 5 --per-seed   # one command per (dataset, seed), with minutes
    hpstrat book [--profile smoke] [--force]           # execute notebooks, build the HTML book
    hpstrat audit --data graph.npz --models GCN mypkg.nets:make --k 4 --seeds 0 1 2 --out audit/

A ``--dataset`` / ``--datasets`` / ``--data`` value is a dataset name or the path of a graph file
(:func:`hpstrat_lite.graphs.load_graph`: a torch.save'd ``Data`` or an ``.npz``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _cmd_datasets(args) -> int:
    from .datasets import dataset_summary

    table = dataset_summary(args.names or None, root=args.root, download=args.download)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


def _load_with_homophily(name, root):
    from .graphs import as_graph
    from .homophily import node_homophily

    data = as_graph(name, root=root)  # a dataset name or a graph file
    y = data.y.numpy()
    return data, y, node_homophily(data.edge_index, y, data.num_nodes, assume_simple=True)


def _cmd_split(args) -> int:
    import numpy as np

    from .folds import make_folds

    data, y, h = _load_with_homophily(args.dataset, args.root)
    folds = make_folds(args.method, h, y, args.k, seed=args.seed, n_bins=args.bins)
    out = Path(args.out)
    if out.suffix == ".npy":
        np.save(out, folds)
    elif out.suffix == ".csv":
        np.savetxt(out, np.stack([np.arange(len(folds)), folds], 1), fmt="%d", delimiter=",",
                   header="node,fold", comments="")
    else:
        raise ValueError(f"--out must end in .npy or .csv; got {args.out!r}.")
    sizes = np.bincount(folds, minlength=args.k)
    print(f"{data.name}: {args.method} k={args.k} seed={args.seed} -> {out} (fold sizes {sizes.tolist()})")
    return 0


def _cmd_quality(args) -> int:
    from ._validate import check_int
    from .quality import quality_table

    check_int(args.seeds, "--seeds")
    table = quality_table([args.dataset], k=args.k, seeds=range(args.seeds), n_bins=args.bins, root=args.root)
    summary = table.groupby("method")[["sdd", "cdd", "chd", "w1"]].agg(["mean", "std"])
    print(f"{args.dataset}, k={args.k}, B={args.bins}, {args.seeds} seeds (mean and std over seeds):")
    print(summary.to_string(float_format=lambda v: f"{v:.4f}"))
    return 0


def _cmd_experiment(args) -> int:
    from .experiment import run_experiment

    run_experiment(datasets=args.datasets, models=args.models, k=args.k, seeds=args.seeds,
                   methods=args.methods, n_bins=args.bins, out=args.out, root=args.root,
                   device=args.device, max_epochs=args.max_epochs, patience=args.patience, progress=True,
                   workers=args.workers, fresh_process=args.fresh_process)
    return 0


def _cmd_progress(args) -> int:
    from .experiment import PROJECTION_FILE, protocol_files, protocol_progress, resume_commands, seed_commands
    from .results import read_rows

    files = [Path(f) for f in args.results] if args.results else protocol_files(args.k)
    projection_file = Path(args.projection) if args.projection else PROJECTION_FILE
    projection = read_rows(projection_file)
    if projection.empty:
        raise FileNotFoundError(f"{projection_file} has no rows: run `python benchmarks/bench_sweep.py` to measure "
                                "the pairs first.")
    table = protocol_progress(read_rows(files), projection, args.k, args.seeds)
    left = table[table["runs_left"] > 0]
    per_dataset = table.groupby("dataset", sort=False).agg(
        pairs=("model", "size"), complete=("runs_left", lambda r: int((r == 0).sum())), runs_done=("runs_done", "sum"),
        runs_left=("runs_left", "sum"), low_min=("low_min", "sum"), high_min=("high_min", "sum"))
    per_dataset["models_left"] = left.groupby("dataset", sort=False)["model"].agg(" ".join)
    per_dataset["models_left"] = per_dataset["models_left"].fillna("")
    print(f"k = {args.k}, split seeds {sorted(args.seeds)}; rows from {', '.join(str(f) for f in files) or 'no file'}")
    print(per_dataset.to_string(float_format=lambda v: f"{v:.0f}"))
    if left.empty:
        print(f"\nall {len(table)} (dataset, model) pairs complete.")
        return 0
    print(f"\n{len(table) - len(left)} of {len(table)} (dataset, model) pairs complete; {int(left['runs_left'].sum())} runs "
          f"left, about {left['low_min'].sum() / 60:.1f} h ({left['high_min'].sum() / 60:.1f} h if no run were dropped), "
          f"scaled from {projection_file.name} ({int(projection['threads'].iloc[-1])} threads).")
    if args.per_seed:
        for command, minutes in seed_commands(table, args.k, args.seeds):
            print(f"{command}   # about {minutes:.0f} min")
        return 0
    for command in resume_commands(table, args.k):
        print(command)
    return 0


def _cmd_audit(args) -> int:
    from .audit import audit, render_report

    result = audit(args.data, args.models, k=args.k, seeds=args.seeds, methods=args.methods, n_bins=args.bins,
                   max_epochs=args.max_epochs, patience=args.patience, out=args.out, root=args.root,
                   device=args.device, progress=True)
    print(result.summary())
    print(f"\nrows: {Path(args.out) / 'rows.csv'}")
    if args.no_report:
        return 0
    try:
        print(f"report: {render_report(args.out)}")
    except RuntimeError as err:
        print(f"hpstrat audit: report not written: {err}", file=sys.stderr)
        return 1
    return 0


def _cmd_book(args) -> int:
    from .book import build_book

    build_book(profile=args.profile, force=args.force, build=not args.no_build)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hpstrat", description="Homophily-aware stratified GNN evaluation.")
    parser.add_argument("--root", default=None, help="data root (default: $HPSTRAT_DATA or a cache folder)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("datasets", help="print the Table 1 summary (nodes, edges, classes, homophily)")
    p.add_argument("names", nargs="*", help="dataset names or graph files (default: all datasets)")
    p.add_argument("--download", action="store_true",
                   help="download a missing dataset from its upstream URL (default: report it as missing)")
    p.set_defaults(func=_cmd_datasets)

    p = sub.add_parser("split", help="compute fold ids and save them as .npy or .csv")
    p.add_argument("--dataset", required=True)
    p.add_argument("--method", choices=["random", "stratified", "hpstrat"], default="hpstrat")
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bins", type=int, default=10, help="number of homophily bins B")
    p.add_argument("--out", required=True, help="output file (.npy or .csv)")
    p.set_defaults(func=_cmd_split)

    p = sub.add_parser("quality", help="SDD, CDD, CHD, W1 of the three split methods over seeds")
    p.add_argument("--dataset", required=True)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--seeds", type=int, default=10, help="number of seeds 0..N-1")
    p.add_argument("--bins", type=int, default=10)
    p.set_defaults(func=_cmd_quality)

    p = sub.add_parser("experiment", help="train the GNN grid and append rows to a results file (resumable)")
    p.add_argument("--datasets", nargs="+", required=True)
    p.add_argument("--models", nargs="+", default=None,
                   help="built-in names and/or factories 'module:function' (default: all built-in models)")
    p.add_argument("--methods", nargs="+", default=None, help="default: random stratified hpstrat")
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--bins", type=int, default=10)
    p.add_argument("--out", default=None,
                   help="results CSV (default: results/gnn_k<k>_seed<s>.csv for one seed, "
                        "results/gnn_k<k>_seeds<a>-<b>.csv for several)")
    p.add_argument("--device", default="auto")
    p.add_argument("--max-epochs", type=int, default=1000)
    p.add_argument("--patience", type=int, default=100)
    p.add_argument("--workers", type=int, default=1,
                   help="worker processes, one CPU thread each, taking (dataset, model) pairs in order (default 1)")
    p.add_argument("--fresh-process", action="store_true",
                   help="train every (dataset, model) pair in a new process, so that none inherits the heap "
                        "fragmented by the pairs before it (the longest pairs of a full sweep)")
    p.set_defaults(func=_cmd_experiment)

    p = sub.add_parser("progress", help="how far a protocol's sweep is, the hours left and the commands that finish it")
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--results", nargs="+", default=None, help="results CSVs (default: results/gnn_k<k>_seed*.csv)")
    p.add_argument("--projection", default=None, help="default: results/sweep_projection.csv")
    p.add_argument("--per-seed", action="store_true",
                   help="one command per (dataset, seed) with its minutes, instead of one per dataset")
    p.set_defaults(func=_cmd_progress)

    p = sub.add_parser("audit", help="audit a graph: spread of test accuracy over folds per model and split method, "
                                     "ranks, Friedman test, best model, fold quality, an HTML report")
    p.add_argument("--data", required=True, help="dataset name or graph file (.pt: a saved Data; .npz: edges / "
                                                 "edge_index, node_labels / y, optional node_features / x)")
    p.add_argument("--models", nargs="+", required=True,
                   help="built-in model names and/or factories 'module:function' importable from PYTHONPATH")
    p.add_argument("--methods", nargs="+", default=["random", "stratified", "hpstrat"])
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--bins", type=int, default=10)
    p.add_argument("--max-epochs", type=int, default=1000)
    p.add_argument("--patience", type=int, default=100)
    p.add_argument("--device", default="auto")
    p.add_argument("--out", required=True, help="folder for rows.csv, quality.csv and report.html (a rerun resumes)")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report (papermill + nbconvert)")
    p.set_defaults(func=_cmd_audit)

    p = sub.add_parser("book", help="execute the notebooks with papermill and build the HTML book")
    p.add_argument("--profile", default="full", help="parameter profile from the book config (full, smoke)")
    p.add_argument("--force", action="store_true", help="re-execute every notebook, changed or not")
    p.add_argument("--no-build", action="store_true", help="execute notebooks only, skip jupyter-book")
    p.set_defaults(func=_cmd_book)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as err:
        print(f"hpstrat {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
