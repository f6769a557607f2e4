"""How far the long runs are, what is left and the commands that finish it: a tool for whoever runs them.

    python tools/progress.py sweep --k 4 --seeds 0 1 2 3 4 5 [--per-seed]   # the HpStrat sweep of one protocol
    python tools/progress.py studies                                       # Part II's Optuna studies

``sweep`` counts the runs of a protocol's results files (``results/gnn_k<k>_seed*.csv``) per (dataset,
model), scales the measured projection (``results/sweep_projection.csv``, written by
``benchmarks/bench_sweep.py``) by the runs left, lists the batches in flight (their checkpoints beside the results
file: epochs trained, runs stopped early) and prints the ``hpstrat experiment`` commands that finish it.
``studies`` prints each Part II study's trials and evaluation runs, the feature study's coverage and the
``python -m hpstrat_book.part2 tune`` commands that finish them. Every command it prints resumes where its run stopped.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from hpstrat_lite.core.folds import SPLIT_METHODS
from hpstrat_lite.data.datasets import available_datasets
from hpstrat_lite.engine.train import checkpoint_batches
from hpstrat_book.part2.necessity import (LINK_BUDGETS, LINK_DATASETS, NODE_BUDGETS, NODE_DATASETS, WS_DATASETS,
                                                _check_datasets, _check_models, results_file)
from hpstrat_book.paths import RESULTS as RESULTS_DIR, read_rows
from hpstrat_lite.rows import checkpoint_dir
from hpstrat_lite.experiments.sweep import default_results_path
from hpstrat_book.part2.tuning import RESULT_COLUMNS
from hpstrat_book.necessity_tables import _model_family, _rows
from hpstrat_book.progress import feature_study_coverage
from hpstrat_book.timing import PROJECTION_FILE, _run_counts, project_remaining


def protocol_files(k: int, results_dir=None) -> list[Path]:
    """The results files of the k-fold protocol: ``gnn_k<k>_seed*.csv`` in ``results_dir`` (default
    ``results/``): the seed-0 sweep and the seeds 1-5 sweep are separate files of one protocol."""
    return sorted(Path(RESULTS_DIR if results_dir is None else results_dir).glob(f"gnn_k{int(k)}_seed*.csv"))


def protocol_progress(rows: pd.DataFrame, projection: pd.DataFrame, k: int, seeds, *,
                      methods=SPLIT_METHODS) -> pd.DataFrame:
    """Where a protocol (k folds, split ``seeds``, split ``methods``) stands, per (dataset, model) pair of the
    measured sweep.

    A pair of ``projection`` (``results/sweep_projection.csv``: every pair of the k = 4 sweep) needs
    ``len(methods) k`` runs per seed. Columns: ``dataset``, ``model``, ``runs_done``, ``runs_left``, ``seeds_left``
    (the seeds with a run missing, as a tuple), ``low_min`` / ``high_min`` (minutes to finish it, from
    :func:`project_remaining`; 0 for a complete pair).
    """
    seeds = sorted(int(s) for s in seeds)
    cols = ["dataset", "model", "runs_done", "runs_left", "seeds_left", "low_min", "high_min"]
    if projection.empty:
        return pd.DataFrame(columns=cols)
    pairs = projection.drop_duplicates(["dataset", "model"])[["dataset", "model"]].reset_index(drop=True)
    per_seed = len(methods) * int(k)
    counts = _run_counts(rows, k, seeds, ["dataset", "model", "seed"], methods)
    left = project_remaining(rows, projection, k, seeds, methods=methods).set_index(["dataset", "model"])
    table = []
    for d, m in zip(pairs["dataset"], pairs["model"]):
        done = [counts.get((d, m, s), 0) for s in seeds]
        table.append({"dataset": d, "model": m, "runs_done": sum(done), "runs_left": per_seed * len(seeds) - sum(done),
                      "seeds_left": tuple(s for s, n in zip(seeds, done) if n < per_seed),
                      "low_min": float(left["low_min"].get((d, m), 0.0)),
                      "high_min": float(left["high_min"].get((d, m), 0.0))})
    return pd.DataFrame(table, columns=cols)


def _methods_flags(methods, out) -> str:
    """The ``--methods`` and ``--out`` flags of a command that resumes a sweep of other methods than the paper's
    (into the file the rows live in); nothing for the paper's sweep."""
    if tuple(methods) == tuple(SPLIT_METHODS):
        return ""
    return f" --methods {' '.join(methods)}" + (f" --out {out}" if out else "")


def resume_commands(progress: pd.DataFrame, k: int, *, methods=SPLIT_METHODS, out=None) -> list[str]:
    """The ``hpstrat experiment`` commands that finish the pairs :func:`protocol_progress` lists as
    incomplete: one per dataset and set of missing seeds, models in the order of ``progress``. Without
    ``--out`` the runner appends to :func:`default_results_path` of those seeds, the file the rows of
    those seeds already live in: seed 0 gets a command of its own (``gnn_k4_seed0.csv``), the other
    seeds share one (``gnn_k4_seeds1-5.csv`` for seeds 1-5). Another sweep's ``methods`` (the controls:
    ``placebo degree``) keep all its seeds in one file, ``out``, which each command names."""
    todo = progress[progress["runs_left"] > 0]
    parts = []
    paper = tuple(methods) == tuple(SPLIT_METHODS)
    for row in todo.itertuples(index=False):
        rest = tuple(s for s in row.seeds_left if s != 0)
        groups = [(0,), rest] if paper and 0 in row.seeds_left and rest else [tuple(row.seeds_left)]
        parts += [{"dataset": row.dataset, "model": row.model, "seeds": g} for g in groups]
    commands = []
    if not parts:
        return commands
    for (dataset, seeds), group in pd.DataFrame(parts).groupby(["dataset", "seeds"], sort=False):
        commands.append(f"hpstrat experiment --datasets {dataset} --models {' '.join(group['model'])} "
                        f"--k {int(k)} --seeds {' '.join(str(s) for s in seeds)}{_methods_flags(methods, out)}")
    return commands


def seed_commands(progress: pd.DataFrame, k: int, seeds) -> list[tuple[str, float]]:
    """One ``hpstrat experiment`` command per (dataset, split seed) with runs missing, and its minutes.

    The commands of :func:`resume_commands` train all missing seeds of a pair as one batch (60 runs for
    seeds 1-5), whose rows land only when the whole batch has stopped; a batch checkpoint does not
    outlive the machine it was written on. A command per seed trains 3 k runs per pair, so its pairs
    land one by one in a fraction of the time: pick the ones that fit the hours at hand. ``--out`` names
    the file of the seed's group (seed 0: ``gnn_k<k>_seed0.csv``; the others: the file of all the
    protocol's other ``seeds``), so the rows join the ones already there. Minutes: the pair's projected
    ``low_min`` shared evenly among its missing seeds (about).
    """
    todo = progress[progress["runs_left"] > 0]
    rest = sorted(int(s) for s in seeds if int(s) != 0)
    parts = [{"dataset": row.dataset, "model": row.model, "seed": int(seed),
              "minutes": row.low_min / len(row.seeds_left)}
             for row in todo.itertuples(index=False) for seed in row.seeds_left]
    commands = []
    if not parts:
        return commands
    for (dataset, seed), group in pd.DataFrame(parts).groupby(["dataset", "seed"], sort=False):
        out = default_results_path(k, [0] if seed == 0 else rest)
        commands.append((f"hpstrat experiment --datasets {dataset} --models {' '.join(group['model'])} --k {int(k)} "
                         f"--seeds {seed} --out {out.parent.name}/{out.name}", float(group["minutes"].sum())))
    return commands


def batches_in_flight(folder) -> pd.DataFrame:
    """The batches in a sweep's checkpoint ``folder`` (:func:`hpstrat_lite.engine.train.checkpoint_batches`),
    one row each, ``saved`` as a UTC time; an absent folder gives an empty frame."""
    cols = ["batch", "model", "state", "runs", "stopped", "epochs", "minutes", "saved"]
    table = pd.DataFrame(checkpoint_batches(folder), columns=cols)
    table["saved"] = pd.to_datetime(table["saved"], unit="s", utc=True).dt.strftime("%Y-%m-%d %H:%M")
    return table


def study_progress(task="node", rows=None, datasets=None, models=("MLP", "GCN"), *, n_eval=5, k=5,
                   root=None):
    """How far the Part II studies of ``task`` are with the default budgets, and the command that
    finishes each (the runners resume: finished trials and evaluation runs are read back).

    A study (dataset, model; node classification: the HpStrat protocol with ``k`` folds) needs its
    budget of trials (:data:`NODE_BUDGETS` / :data:`LINK_BUDGETS`), then ``n_eval`` evaluation seeds
    of the best configuration: ``n_eval * k`` runs for node classification, ``n_eval`` edge splits
    for link prediction.

    Parameters
    ----------
    task : {"node", "link"}
        The feature study has :func:`feature_study_coverage`.
    rows : pandas.DataFrame, str, os.PathLike or None
        Result rows or their file (default ``results/part2_<task>.csv``).
    datasets : sequence of str, optional
        Default: the task's datasets (:data:`NODE_DATASETS`; :data:`WS_DATASETS` + :data:`LINK_DATASETS`).
    models : sequence of {"MLP", "GCN"}
    n_eval, k : int
        Evaluation seeds and folds per seed of the default runs.
    root : str or os.PathLike, optional
        Data root used to tell which real datasets have their raw files (default as the loaders).

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``model``, ``trials`` ("done/budget"), ``eval runs`` ("done/expected"),
        ``status`` ("done", "evaluating", "tuning", "not started" or "raw files absent") and
        ``command`` (empty when done; with ``--eval-batch 1`` when only node classification's
        evaluation is left, so its rows land one seed at a time).
    """
    if task not in ("node", "link"):
        raise ValueError(f"task must be 'node' or 'link' (the feature study: feature_study_coverage), got {task!r}")
    budgets = NODE_BUDGETS if task == "node" else LINK_BUDGETS
    datasets = _check_datasets(datasets if datasets is not None else
                               NODE_DATASETS if task == "node" else WS_DATASETS + LINK_DATASETS)
    models = _check_models(models, ("MLP", "GCN"))
    present = set(available_datasets(root))
    df = _rows(rows, task)
    if df is None or df.empty:
        df = pd.DataFrame(columns=RESULT_COLUMNS)
    df = df.assign(model=_model_family(df["model"]))
    if task == "node":
        df = df[(df["protocol"] == "hpstrat") & (df["k"].astype(float) == k)]
    expected = n_eval * (k if task == "node" else 1)
    out = []
    for ds in datasets:
        budget = budgets.get(ds, 10)
        for m in models:
            g = df[(df["dataset"] == ds) & (df["model"] == m)]
            trials = int(g.loc[g["phase"] == "trial", "trial"].nunique())
            ev = g[(g["phase"] == "eval") & (g["n_trials"].astype(float) == budget)]
            runs = len(ev.drop_duplicates(["eval_seed", "round"]))
            if trials >= budget and runs >= expected:
                status = "done"
            elif not ds.startswith("WS1000") and ds not in present and not len(g):
                status = "raw files absent"
            else:
                status = "not started" if not len(g) else "tuning" if trials < budget else "evaluating"
            out.append({"dataset": ds, "model": m, "trials": f"{min(trials, budget)}/{budget}",
                        "eval runs": f"{runs}/{expected}", "status": status,
                        "command": "" if status == "done" else
                        f"python -m hpstrat_book.part2 tune {task} --datasets {ds} --models {m}"
                        # only the evaluation left: land it seed by seed (a large graph's takes hours)
                        + (" --eval-batch 1" if task == "node" and status == "evaluating" else "")})
    return pd.DataFrame(out)


def sweep_status(args) -> int:
    """``sweep``: per dataset, the pairs complete and the runs and minutes left; then the commands that
    finish the protocol."""
    files = [Path(f) for f in args.results] if args.results else protocol_files(args.k)
    projection_file = Path(args.projection) if args.projection else PROJECTION_FILE
    projection = read_rows(projection_file)
    if projection.empty:
        raise FileNotFoundError(f"{projection_file} has no rows: run `python benchmarks/bench_sweep.py` to measure "
                                "the pairs first.")
    methods = tuple(args.methods)
    if methods != tuple(SPLIT_METHODS) and len(files) != 1:
        raise ValueError(f"--methods {' '.join(methods)} needs the one results file of that sweep in --results "
                         f"(e.g. results/controls_k4_seeds0-2.csv); got {len(files)} file(s).")
    table = protocol_progress(read_rows(files), projection, args.k, args.seeds, methods=methods)
    left = table[table["runs_left"] > 0]
    per_dataset = table.groupby("dataset", sort=False).agg(
        pairs=("model", "size"), complete=("runs_left", lambda r: int((r == 0).sum())), runs_done=("runs_done", "sum"),
        runs_left=("runs_left", "sum"), low_min=("low_min", "sum"), high_min=("high_min", "sum"))
    per_dataset["models_left"] = left.groupby("dataset", sort=False)["model"].agg(" ".join)
    per_dataset["models_left"] = per_dataset["models_left"].fillna("")
    print(f"k = {args.k}, split seeds {sorted(args.seeds)}, methods {', '.join(methods)}; rows from "
          f"{', '.join(str(f) for f in files) or 'no file'}")
    print(per_dataset.to_string(float_format=lambda v: f"{v:.0f}"))
    if left.empty:
        print(f"\nall {len(table)} (dataset, model) pairs complete.")
        return 0
    print(f"\n{len(table) - len(left)} of {len(table)} (dataset, model) pairs complete; {int(left['runs_left'].sum())} runs "
          f"left, about {left['low_min'].sum() / 60:.1f} h ({left['high_min'].sum() / 60:.1f} h if no run were dropped), "
          f"scaled from {projection_file.name} ({int(projection['threads'].iloc[-1])} threads).")
    flight = pd.concat([batches_in_flight(checkpoint_dir(f)) for f in files])
    if len(flight):
        print("\nbatches in flight (a restarted command continues them from their checkpoint):")
        print(flight.to_string(index=False, float_format=lambda v: f"{v:.0f}"))
    if args.per_seed and methods == tuple(SPLIT_METHODS):
        for command, minutes in seed_commands(table, args.k, args.seeds):
            print(f"{command}   # about {minutes:.0f} min")
        return 0
    for command in resume_commands(table, args.k, methods=methods, out=files[0] if len(files) == 1 else None):
        print(command)
    return 0


def studies_status(results_dir, n_eval) -> int:
    """``studies``: the node and link studies, the feature study, then the commands that finish what is left."""
    commands = []
    rows = {task: read_rows(results_file(task, results_dir=results_dir)) for task in ("node", "link", "features")}
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        for task in ("node", "link"):
            table = study_progress(task, rows[task], n_eval=n_eval)
            done = int((table["status"] == "done").sum())
            print(f"{task}: {done} of {len(table)} studies done ({results_file(task, results_dir=results_dir)})")
            print(table.drop(columns="command").to_string(index=False), end="\n\n")
            commands += [c for c, st in zip(table["command"], table["status"]) if c and st != "raw files absent"]
        cov = feature_study_coverage(rows["features"], rows["node"], min_eval=n_eval)
        print(f"feature study ({results_file('features', results_dir=results_dir)})")
        print(cov[["dataset", "status", "increment", "points", "trials", "projected (h)"]].round(1)
              .to_string(index=False), end="\n\n")
    present = set(available_datasets())
    todo = cov["status"].str.startswith("partial") | ((cov["status"] == "not started") & cov["dataset"].isin(present))
    for ds, hours in cov.loc[todo, ["dataset", "projected (h)"]].itertuples(index=False):
        estimate = f"  # about {hours:.1f} h left here" if pd.notna(hours) else ""
        commands.append(f"python -m hpstrat_book.part2 tune features --datasets {ds}{estimate}")
    print("to finish (each resumes where it stopped):" if commands else "nothing left to run.")
    for c in commands:
        print(" ", c)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tools/progress.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sweep", help="how far a protocol's sweep is, the hours left and the commands that finish it")
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--results", nargs="+", default=None, help="results CSVs (default: results/gnn_k<k>_seed*.csv)")
    p.add_argument("--projection", default=None, help="default: results/sweep_projection.csv")
    p.add_argument("--methods", nargs="+", default=list(SPLIT_METHODS),
                   help="split methods of the sweep (default: random stratified hpstrat; the controls' sweep: "
                        "placebo degree, with its file in --results)")
    p.add_argument("--per-seed", action="store_true",
                   help="one command per (dataset, seed) with its minutes, instead of one per dataset")
    p = sub.add_parser("studies", help="how far the Part II studies are and the commands that finish them")
    p.add_argument("--results-dir", default=None, help="folder of the part2_*.csv files (default results/)")
    p.add_argument("--n-eval", type=int, default=5, help="evaluation seeds a finished study has (default 5)")
    args = parser.parse_args(argv)
    try:
        if args.command == "sweep":
            return sweep_status(args)
        return studies_status(args.results_dir, args.n_eval)
    except (ValueError, FileNotFoundError) as err:
        print(f"{parser.prog} {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
