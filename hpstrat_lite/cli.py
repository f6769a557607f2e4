"""The ``hpstrat`` command line: what people run from a shell.

    hpstrat datasets                                   # Table 1 summary of the datasets
    hpstrat split --dataset Cora --method hpstrat --k 4 --seed 0 --out folds.npy
    hpstrat quality --dataset Cora --k 4 --seeds 10    # SDD / CDD / CHD / W1 of the three methods
    hpstrat experiment --datasets Cora Texas --models GCN GAT --k 4 --seeds 0
    hpstrat experiment --datasets Cora Texas --executor ray --ray-address 10.0.0.1:6379   # on a Ray cluster
    hpstrat audit --data graph.npz --models GCN mypkg.nets:make --k 4 --seeds 0 1 2 --out audit/
    hpstrat necessity --data graph.npz [--metric roc_auc]   # does the graph help? cheap estimates, a verdict

A ``--dataset`` / ``--datasets`` / ``--data`` value is a dataset name or the path of a graph file
(:func:`hpstrat_lite.data.graphs.load_graph`: a torch.save'd ``Data`` or an ``.npz``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .audit_report import format_audit, render_report
from .auditing import audit
from .core._validate import check_int
from .core.covariates import node_degree
from .core.folds import make_folds
from .core.homophily import node_homophily
from .experiments.probes import necessity
from .experiments.ladder import (LADDER_DESIGN, LADDER_GRAPH_SEEDS, LADDER_LAMS, LADDER_METHODS, LADDER_MODELS,
                                 LADDER_SIZES, LadderDesign, run_csbm_ladder)
from .experiments.sweep import COVARIATE_METHOD, run_experiment
from .protocol import PAPER_PROTOCOL, Execution, Protocol


def _cmd_datasets(args) -> int:
    from .data.graphs import dataset_summary

    table = dataset_summary(args.names or None, root=args.root, download=args.download)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


def _load_with_homophily(name, root):
    from .data.graphs import as_graph

    data = as_graph(name, root=root)  # a dataset name or a graph file
    y = data.y.numpy()
    return data, y, node_homophily(data.edge_index, y, data.num_nodes, assume_simple=True)


def _cmd_split(args) -> int:
    import numpy as np

    data, y, h = _load_with_homophily(args.dataset, args.root)
    covariate = None
    if args.method == "covariate":
        if args.covariate is None:
            raise ValueError("--method covariate needs --covariate FILE.npy (one value per node).")
        covariate = _load_covariate(args.covariate)
    elif args.covariate is not None:
        raise ValueError(f"--covariate is read by --method covariate only; got --method {args.method}.")
    degree = node_degree(data.edge_index, data.num_nodes, assume_simple=True)
    folds = make_folds(args.method, h, y, k=args.k, seed=args.seed, n_bins=args.bins, degree=degree,
                       covariate=covariate, binning=args.binning)
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
    from .data.quality import quality_table

    check_int(args.seeds, "--seeds")
    table = quality_table([args.dataset], k=args.k, seeds=range(args.seeds), n_bins=args.bins, root=args.root,
                          methods=args.methods)
    summary = table.groupby("method")[["sdd", "cdd", "chd", "w1"]].agg(["mean", "std"])
    print(f"{args.dataset}, k={args.k}, B={args.bins}, {args.seeds} seeds (mean and std over seeds):")
    print(summary.to_string(float_format=lambda v: f"{v:.4f}"))
    return 0


def _add_training_args(p) -> None:
    """The training options of ``experiment`` and ``audit``: one per :class:`Protocol` field, defaults the paper's."""
    d = PAPER_PROTOCOL
    p.add_argument("--max-epochs", type=int, default=d.max_epochs)
    p.add_argument("--patience", type=int, default=d.patience)
    p.add_argument("--lr", type=float, default=d.lr, help=f"Adam learning rate (default {d.lr:g})")
    p.add_argument("--weight-decay", type=float, default=d.weight_decay,
                   help=f"Adam L2 weight decay (default {d.weight_decay:g})")
    p.add_argument("--hidden", type=int, default=d.hidden,
                   help=f"hidden channels of the built-in models (default {d.hidden})")
    p.add_argument("--num-layers", type=int, default=d.num_layers,
                   help=f"layers of the built-in models (default {d.num_layers})")
    p.add_argument("--dropout", type=float, default=d.dropout, help=f"dropout probability (default {d.dropout:g})")
    p.add_argument("--feature-norm", choices=("none", "row", "standard"), default=d.feature_norm or "none",
                   help="feature preprocessing of the built-in models (default none)")


def _protocol(args) -> Protocol:
    """The protocol of ``--k --bins --max-epochs --patience --lr --weight-decay --hidden --num-layers --dropout
    --feature-norm`` (each the paper's when not given). Rows record every field, and a results file named by
    default names each field that differs from the paper's (``gnn_k4_seed0_lr0.005.csv``)."""
    return PAPER_PROTOCOL.replace(k=args.k, n_bins=args.bins, max_epochs=args.max_epochs, patience=args.patience,
                                  lr=args.lr, weight_decay=args.weight_decay, hidden=args.hidden,
                                  num_layers=args.num_layers, dropout=args.dropout,
                                  feature_norm=None if args.feature_norm == "none" else args.feature_norm)


def _execution(args) -> Execution:
    """How the pairs train: ``--device``, a progress bar, and ``--executor`` (default ``ray`` when ``--workers``
    > 1, ``--fresh-process`` or ``--ray-address`` asks for it, else ``local``) with its options."""
    workers, fresh = getattr(args, "workers", 1), getattr(args, "fresh_process", False)
    address = getattr(args, "ray_address", None)
    executor = getattr(args, "executor", None) or ("ray" if workers > 1 or fresh or address is not None else "local")
    return Execution(device=args.device, progress=True, executor=executor, workers=workers, ray_address=address,
                     cpus_per_pair=getattr(args, "cpus_per_pair", None), fresh_process=fresh,
                     num_threads=args.threads or "auto",
                     reuse_freed_memory=_reuse_setting(getattr(args, "reuse_freed_memory", None)))


def _reuse_setting(flag) -> bool | str:
    """``Execution.reuse_freed_memory`` from ``--[no-]reuse-freed-memory`` (neither given: ``"auto"``)."""
    return "auto" if flag is None else bool(flag)


def _add_threads_arg(p) -> None:
    """``--threads``: the torch threads of a local run (default: one for small batches, all for large ones)."""
    p.add_argument("--threads", type=int, default=None,
                   help="torch threads of a local run (default: one for small batches, all for large ones); 1 when "
                        "another process trains beside it, since threads beyond the cores stall each other")


def _cmd_experiment(args) -> int:
    run_experiment(args.datasets, models=args.models, seeds=args.seeds, methods=args.methods,
                   protocol=_protocol(args), out=args.out, root=args.root, execution=_execution(args))
    return 0


def _load_covariate(path):
    """A node covariate saved with ``numpy.save`` (``--covariate FILE.npy``)."""
    import numpy as np

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--covariate {str(path)!r} does not exist; expected a .npy file of one value per "
                                f"node (numpy.save).")
    try:
        return np.load(path, allow_pickle=False)
    except Exception as err:  # not an .npy file
        raise ValueError(f"--covariate {str(path)!r} cannot be read as .npy (numpy.save): {type(err).__name__}: "
                         f"{err}") from None


def _cmd_audit(args) -> int:
    covariate = None
    if args.covariate is not None:
        covariate = _load_covariate(args.covariate)
        if COVARIATE_METHOD not in args.methods:
            args.methods = [*args.methods, COVARIATE_METHOD]
    data = args.data
    if args.root is not None:  # a dataset name under another data root: read it there
        from .data.graphs import as_graph

        data = as_graph(data, root=args.root)
    result = audit(data, args.models, seeds=args.seeds, methods=args.methods, metric=args.metric,
                   covariate=covariate, protocol=_protocol(args), out=args.out,
                   execution=_execution(args), necessity=not args.no_necessity)
    print(format_audit(result))
    print(f"\nrows: {Path(args.out) / 'rows.csv'}")
    if args.no_report:
        return 0
    try:
        print(f"report: {render_report(args.out)}")
    except RuntimeError as err:
        print(f"hpstrat audit: report not written: {err}", file=sys.stderr)
        return 1
    return 0


def _cmd_ladder(args) -> int:
    design = LadderDesign(snr=args.snr, num_features=args.features, avg_degree=args.degree)
    run_csbm_ladder(args.lams, sizes=args.sizes, graph_seeds=args.graph_seeds, seeds=args.seeds,
                    models=args.models, methods=args.methods, design=design, out=args.out, execution=_execution(args))
    return 0


def _cmd_necessity(args) -> int:
    print(necessity(args.data, metric=args.metric, k=args.k, seed=args.seed, root=args.root,
                    threshold=args.threshold))
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
    p.add_argument("--method", choices=["random", "stratified", "hpstrat", "degree", "placebo", "covariate"],
                   default="hpstrat", help="degree and placebo: the control stratifications; covariate: your own "
                                           "(--covariate)")
    p.add_argument("--covariate", default=None, metavar="FILE.npy", help="one value per node, for --method covariate")
    p.add_argument("--binning", choices=["uniform", "quantile"], default="uniform",
                   help="bins of --covariate (default uniform between its min and max)")
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bins", type=int, default=10, help="number of homophily bins B")
    p.add_argument("--out", required=True, help="output file (.npy or .csv)")
    p.set_defaults(func=_cmd_split)

    p = sub.add_parser("quality", help="SDD, CDD, CHD, W1 of the split methods over seeds")
    p.add_argument("--dataset", required=True)
    p.add_argument("--methods", nargs="+", default=None,
                   help="default: random stratified hpstrat; also degree placebo (the controls)")
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
    _add_training_args(p)
    _add_threads_arg(p)
    p.add_argument("--executor", choices=("local", "ray"), default=None,
                   help="local: the pairs one after the other in this process (default); ray: each (dataset, "
                        "model) pair a Ray task, its rows appended here as it ends")
    p.add_argument("--ray-address", default=None,
                   help="Ray cluster to join, e.g. 10.0.0.1:6379 or auto (default: a local Ray for the run, "
                        "sized to this machine)")
    p.add_argument("--workers", type=int, default=1,
                   help="shorthand for --executor ray on a local Ray of N CPUs, one thread per pair (default 1)")
    p.add_argument("--cpus-per-pair", type=int, default=None,
                   help="CPUs (torch threads) each Ray task declares (default 1)")
    p.add_argument("--fresh-process", action="store_true",
                   help="train every (dataset, model) pair in a new Ray worker process (max_calls=1), so that "
                        "none inherits the heap fragmented by the pairs before it (implies --executor ray)")
    p.add_argument("--reuse-freed-memory", action=argparse.BooleanOptionalAction, default=None,
                   help="keep freed memory mapped between epochs (glibc; faster epochs, higher peak memory; "
                        "default: on CPU); --no-reuse-freed-memory keeps the allocator's own settings")
    p.add_argument("--traceback", action="store_true", help="on an error, print the full traceback")
    p.set_defaults(func=_cmd_experiment)

    p = sub.add_parser("audit", help="audit a graph: spread of test accuracy over folds per model and split method, "
                                     "ranks, Friedman test, best model, fold quality, an HTML report")
    p.add_argument("--data", required=True, help="dataset name or graph file (.pt: a saved Data; .npz: edges / "
                                                 "edge_index, node_labels / y, optional node_features / x)")
    p.add_argument("--models", nargs="+", required=True,
                   help="built-in model names and/or factories 'module:function' importable from PYTHONPATH")
    p.add_argument("--methods", nargs="+", default=["random", "stratified", "hpstrat"],
                   help="split methods: random stratified hpstrat (default), the controls degree and placebo, "
                        "covariate (with --covariate)")
    p.add_argument("--covariate", default=None, metavar="FILE.npy",
                   help="a node covariate (numpy.save, one value per node): adds the split method covariate")
    p.add_argument("--metric", default="accuracy", choices=("accuracy", "balanced_accuracy", "macro_f1", "roc_auc"),
                   help="test metric of the tables (default accuracy; every run records all four; model "
                        "selection stays on the validation loss)")
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--bins", type=int, default=10)
    p.add_argument("--device", default="auto")
    _add_training_args(p)
    _add_threads_arg(p)
    p.add_argument("--executor", choices=("local", "ray"), default=None,
                   help="local (default) or ray: each (graph, model) pair a Ray task, factories included")
    p.add_argument("--ray-address", default=None, help="Ray cluster to join (default: a local Ray for the run)")
    p.add_argument("--out", required=True, help="folder for rows.csv, quality.csv, baselines.csv, audit.json and "
                                                "report.html (a rerun resumes; another graph's folder is refused)")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report (papermill + nbconvert)")
    p.add_argument("--no-necessity", action="store_true", help="skip the cheap 'does the graph help?' estimate")
    p.add_argument("--traceback", action="store_true", help="on an error, print the full traceback")
    p.set_defaults(func=_cmd_audit)

    p = sub.add_parser("ladder", help="the controls on contextual SBMs of set homophily and size: train the models "
                                      "under the split methods on every (size, lam) graph (resumable)")
    p.add_argument("--lams", type=float, nargs="+", default=list(LADDER_LAMS),
                   help="graph signal lam, |lam| < sqrt(degree) (default: edge homophily about 0.16 ... 0.84)")
    p.add_argument("--sizes", type=int, nargs="+", default=list(LADDER_SIZES), help="numbers of nodes")
    p.add_argument("--graph-seeds", type=int, nargs="+", default=list(LADDER_GRAPH_SEEDS),
                   help="graphs per (size, lam)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="split seeds")
    p.add_argument("--models", nargs="+", default=list(LADDER_MODELS))
    p.add_argument("--methods", nargs="+", default=list(LADDER_METHODS))
    p.add_argument("--snr", type=float, default=LADDER_DESIGN.snr, help="features' signal-to-noise ratio at every size")
    p.add_argument("--features", type=int, default=LADDER_DESIGN.num_features, help="feature dimension")
    p.add_argument("--degree", type=float, default=LADDER_DESIGN.avg_degree, help="mean degree")
    p.add_argument("--out", default=None, help="results CSV (default results/controls_csbm_ladder.csv)")
    p.add_argument("--device", default="cpu")
    _add_threads_arg(p)
    p.set_defaults(func=_cmd_ladder)

    p = sub.add_parser("necessity", help="does the graph help? label-only measures and linear probes on HpStrat "
                                         "folds: the expected GNN - MLP gap per model family (aggregation, "
                                         "heterophily-aware, best of both) with its interval and a verdict (seconds)")
    p.add_argument("--data", required=True, help="dataset name or graph file (.pt: a saved Data; .npz: edges / "
                                                 "edge_index, node_labels / y, node_features / x)")
    p.add_argument("--metric", default="accuracy", choices=["accuracy", "roc_auc"],
                   help="roc_auc: ROC AUC of the class-1 score (binary labels only)")
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threshold", type=float, default=0.5,
                   help="practical threshold of the verdicts, points (default 0.5: smaller estimated gaps are no "
                        "help or harm)")
    p.set_defaults(func=_cmd_necessity)

    return parser


def main(argv=None) -> int:
    return run_command(build_parser().parse_args(argv), "hpstrat")


def run_command(args, prog: str) -> int:
    """Run the parsed command ``args.func(args)``; a user's error (a bad value, a missing file, a model that
    fails, a lost task) prints one line ``<prog> <command> [<what>]: error: ...`` on stderr and returns 2,
    anything else (or any error under ``--traceback``) raises with its traceback."""
    try:
        return args.func(args)
    except Exception as err:
        model_error = _is_error(err, "hpstrat_lite.engine.user_models", "ModelError")
        if getattr(args, "traceback", False) or not (
                isinstance(err, (ValueError, FileNotFoundError)) or model_error
                or _is_error(err, "hpstrat_lite.experiments.executors", "LostTaskError")):
            raise
        what = f" {args.what}" if hasattr(args, "what") else ""
        hint = " (--traceback for the full trace)" if model_error and hasattr(args, "traceback") else ""
        print(f"{prog} {args.command}{what}: error: {err}{hint}", file=sys.stderr)
        return 2


def _is_error(err, module: str, name: str) -> bool:
    """``err`` is an instance of ``module.name`` (checked without importing the module: one that raised
    it is loaded already; the CLI does not load torch for commands that need none)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(err, getattr(loaded, name))


if __name__ == "__main__":
    sys.exit(main())
