"""``python -m hpstrat_book.part2 tune {node,link,features,...}``: Part II's reproduction runs (Optuna studies of
the paper's protocol on the paper's datasets), appending rows to ``results/part2_<task>.csv`` (resumable).

These runners reproduce the second paper's tables; they live beside the book, not in the library's wheel
(the wheel keeps what a user runs on their own graph: splits, training, the audit, the graph-need estimate).
"""
from __future__ import annotations

import argparse
import sys

from hpstrat_lite.cli import run_command
from hpstrat_lite.protocol import Execution

from .plan import FEATURE_BUDGET, LINK_DATASETS, NODE_DATASETS, WS_DATASETS, default_storage


def _cmd_tune(args) -> int:
    """``python -m hpstrat_book.part2 tune {node,link,features} --datasets ...``: tune MLP and GCN with Optuna, evaluate the best
    configuration and append rows to ``results/part2_<task>.csv``; the same command again resumes.
    ``python tools/progress.py studies`` prints how far the default studies are."""
    import logging
    import time

    from .baselines import run_link_baselines
    from .necessity import (LINK_STUDY_PROTOCOL, NODE_STUDY_PROTOCOL, PROTOCOL_DATASETS,
                                        _check_datasets, _check_models, run_feature_studies,
                                        run_hgcn_link_benchmarks, run_link_benchmarks, run_node_benchmarks,
                                        run_node_protocols)
    from .search import Search
    from .tuning import log as tuning_log

    labelled = args.what in ("node", "features", "node-protocols")
    datasets = _check_datasets(args.datasets, labelled=labelled) if args.datasets else None
    if args.protocol in ("per_class", "planetoid") and args.what != "node-protocols":
        raise ValueError(f"--protocol {args.protocol} is one of the paper's splits: use 'python -m hpstrat_book.part2 tune node-protocols'")
    split = args.protocol or "hpstrat"  # a split protocol (--protocol), not the training Protocol
    _check_models(args.models, ("MLP", "GCN"))
    if args.what.startswith("link") and args.precision != "float32":
        raise ValueError("--precision applies to node and features; link prediction trains in float32")
    if args.eval_batch is not None and args.eval_batch < 1:
        raise ValueError(f"--eval-batch must be >= 1, got {args.eval_batch}")
    steps = {}
    for item in args.steps or ():
        ds, _, step = item.partition("=")
        if not step.isdigit() or int(step) < 1:
            raise ValueError(f"--steps entries must look like DATASET=STEP with STEP >= 1, got {item!r}")
        steps[ds] = int(step)
    storage = default_storage(args.results_dir) if args.storage is None else args.storage
    if storage == "none":
        storage = None
    elif storage is not None:
        from .studies import storage_url

        storage = storage_url(storage)  # a bad URL stops here, before any dataset is loaded
    import torch

    torch.set_num_threads(args.threads)

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    handler = logging.StreamHandler(sys.stdout)  # one line per trial (hpstrat_book.part2.tuning.log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    tuning_log.addHandler(handler)
    tuning_log.setLevel(logging.INFO)
    node_protocol = NODE_STUDY_PROTOCOL.replace(max_epochs=args.max_epochs or NODE_STUDY_PROTOCOL.max_epochs)
    link_protocol = None if args.max_epochs is None else LINK_STUDY_PROTOCOL.replace(max_epochs=args.max_epochs)
    search = Search(n_trials=args.n_trials, n_eval=args.n_eval, storage=storage)
    execution = Execution(device=args.device, precision=args.precision, eval_batch=args.eval_batch)
    link_execution = Execution(device=args.device)
    try:
        if args.what == "node":
            run_node_benchmarks(datasets or NODE_DATASETS, models=args.models, split=split, search=search,
                                protocol=node_protocol, results_dir=args.results_dir, execution=execution, log=log)
        elif args.what == "link":
            run_link_benchmarks(datasets or WS_DATASETS + LINK_DATASETS, encoders=args.models, search=search,
                                protocol=link_protocol, results_dir=args.results_dir, execution=link_execution,
                                log=log)
        elif args.what == "node-protocols":
            run_node_protocols(datasets or PROTOCOL_DATASETS, models=args.models, split=args.protocol,
                               search=Search(n_trials=args.n_trials, n_eval=args.n_eval), protocol=node_protocol,
                               results_dir=args.results_dir,
                               execution=Execution(device=args.device, precision=args.precision), log=log)
        elif args.what == "link-hgcn":
            run_hgcn_link_benchmarks(datasets or LINK_DATASETS, encoders=args.models,
                                     search=Search(n_trials=args.n_trials, n_eval=args.n_eval),
                                     protocol=link_protocol, results_dir=args.results_dir, execution=link_execution,
                                     log=log)
        elif args.what == "link-baselines":
            run_link_baselines(datasets or WS_DATASETS + LINK_DATASETS, n_eval=args.n_eval,
                               protocol=f"edge split {args.edge_split}", results_dir=args.results_dir, log=log)
        else:
            run_feature_studies(datasets or ("Cora", "CiteSeer"), models=args.models, steps=steps, split=split,
                                search=Search(n_trials=args.n_trials or FEATURE_BUDGET, n_eval=args.n_eval,
                                              storage=storage),
                                protocol=node_protocol, results_dir=args.results_dir, execution=execution, log=log)
    finally:
        tuning_log.removeHandler(handler)
    log("done")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m hpstrat_book.part2",
                                     description="Part II of the book: the second paper's studies.")
    parser.add_argument("--root", default=None, help="data root (default: $HPSTRAT_DATA or a cache folder)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "tune", help="Part II: tune MLP and GCN with Optuna and append rows to results/part2_<task>.csv (resumable)",
        description="Part II runs: tune MLP and GCN with Optuna, evaluate the best configuration and append one "
                    "row per trial and per evaluation run to results/part2_<task>.csv; the same command again "
                    "resumes where a stopped run ended.",
        epilog="examples:\n"
               "  python -m hpstrat_book.part2 tune node --datasets Cora CiteSeer\n"
               "  python -m hpstrat_book.part2 tune link --datasets WS1000 WS1000_0.4 --n-trials 12\n"
               "  python -m hpstrat_book.part2 tune features --datasets Cora --steps Cora=400\n"
               "  python -m hpstrat_book.part2 tune node-protocols --datasets Cora Photo   # the paper's splits: public Planetoid, 20/30 per class\n"
               "  python -m hpstrat_book.part2 tune link-hgcn --datasets Twitch-PTBR        # HGCN-style pipeline: 85/5/10, Fermi-Dirac decoder\n"
               "  python -m hpstrat_book.part2 tune link-baselines                          # feature cosine, degree product, shuffled-feature MLP\n"
               "  python -m hpstrat_book.part2 tune node --datasets Cora --storage postgresql://user:pw@db-host/studies   # on each machine\n"
               "  python tools/progress.py studies   # how far the Part II studies are",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("node", "link", "features", "node-protocols", "link-hgcn", "link-baselines",
                                    ),
                   help="node classification (chapter 6), link prediction (chapters 8-9), the feature-subset "
                        "study (chapter 7), the paper's node splits (node-protocols), the HGCN-style link "
                        "pipeline (link-hgcn), trivial link baselines (link-baselines)")
    p.add_argument("--datasets", nargs="+", default=None,
                   help="node/features: e.g. Computers Photo CS Physics...; link: WS1000, WS1000_<gamma>, "
                        "Twitch-PTBR, Twitch-EN, Facebook (default: all of the task's)")
    p.add_argument("--models", nargs="+", default=["MLP", "GCN"], help="MLP and/or GCN (default both; any case)")
    p.add_argument("--n-trials", type=int, default=None,
                   help="Optuna trial budget (default: per dataset, experiments.necessity.NODE_BUDGETS / "
                        "LINK_BUDGETS; features: FEATURE_BUDGET)")
    p.add_argument("--n-eval", type=int, default=5, help="evaluation seeds of the best configuration (default 5)")
    p.add_argument("--eval-batch", type=int, default=None,
                   help="node, features: evaluation seeds trained together, their rows written when the batch ends "
                        "(default all; 1 lands each seed's runs as they finish, for large graphs)")
    p.add_argument("--protocol", default=None, choices=("hpstrat", "random", "per_class", "planetoid"),
                   help="node splits: HpStrat k=5 rounds (default of node and features) or random 60/20/20; "
                        "node-protocols: per_class (20/30 nodes per class) or planetoid (public split), "
                        "default the split of the GNN numbers the paper copies for each dataset")
    p.add_argument("--edge-split", default="70/10/20", choices=("70/10/20", "85/5/10"),
                   help="link-baselines: the edge split of the tuned studies (70/10/20, default) or of the "
                        "HGCN-style pipeline (85/5/10)")
    p.add_argument("--max-epochs", type=int, default=None, help="epoch cap (default: node 500, link per dataset)")
    p.add_argument("--results-dir", default=None, help="folder of the part2_*.csv files (default results/)")
    p.add_argument("--steps", nargs="+", default=None, metavar="DATASET=STEP",
                   help="feature-study increments, e.g. Cora=400 (default: the paper's)")
    p.add_argument("--precision", default="float32", choices=("float32", "bfloat16"),
                   help="node, features: precision of the dense matrix products (default float32; bfloat16 "
                        "is mixed-precision training, faster on CPUs with AMX; written in each row)")
    p.add_argument("--storage", default=None, metavar="URL",
                   help="Optuna RDB storage of the studies, shared by every process given the same URL: "
                        "sqlite:///file.db, postgresql://user:pw@host/db, mysql://... (default: "
                        "sqlite:///<results-dir>/part2_studies.db; none: in memory)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    p.add_argument("--device", default="auto", help="auto (CUDA when available), cpu or cuda")
    p.set_defaults(func=_cmd_tune)
    return parser


def main(argv=None) -> int:
    return run_command(build_parser().parse_args(argv), "python -m hpstrat_book.part2")


if __name__ == "__main__":
    sys.exit(main())
