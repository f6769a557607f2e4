"""Part II of the book: runners, tables and figures of "Does the graph matter?".

Katsman, Lou and Gilbert (2024), "Revisiting the Necessity of Graph Learning and Common Graph
Benchmarks", compare a well-tuned feature-only MLP with a GCN. The four chapters of Part II are:

- chapter 6, **MLP vs GNN** (paper Tables 1 and 2): tuned node classification on Computers, Photo,
  CS, Physics, Cora, CiteSeer (PubMed when its raw files are present);
- chapter 7, **feature study** (Figures 1 and 3): the same on nested subsets of the feature columns;
- chapter 8, **synthetic Watts-Strogatz** (Table 3, Figure 2): link prediction on WS1000 and
  WS1000_gamma;
- chapter 9, **suggested benchmarks** (Table 4): link prediction on Twitch-PTBR, Twitch-EN and
  Facebook.

The tuning itself lives in :mod:`hpstrat_lite.tuning` (Optuna TPE, selection on validation only,
the best configuration evaluated on ``n_eval = 5`` seeds). This module holds

1. the **runners** (:func:`run_node_benchmarks`, :func:`run_link_benchmarks`,
   :func:`run_random_baseline`, :func:`run_feature_studies`) that write result rows under
   ``results/`` (``part2_node.csv``, ``part2_link.csv``, ``part2_features.csv``), resumable, with
   the trial budgets of :data:`NODE_BUDGETS` / :data:`LINK_BUDGETS` by default;
2. the **table builders** that read those rows (:func:`summarize`, :func:`node_table`,
   :func:`link_table`, :func:`ws_gamma_table`, :func:`feature_study_table`,
   :func:`paper_comparison`), and two figures (:func:`plot_ws_gamma`,
   :func:`plot_feature_study`);
3. the **papers' reported numbers** (:data:`PAPER_NODE`, :data:`PAPER_LINK`), each labelled
   with its table / figure. A value that could not be read from the paper on this offline
   machine is ``None`` and shows as missing, never as a guess.

Every table carries the split protocol and the trial budget its numbers come from.

Command line (the background runners of the book)::

    python -m hpstrat_lite.part2 link --datasets WS1000 WS1000_0.2 --n-trials 12
    python -m hpstrat_lite.part2 node --datasets Cora CiteSeer --n-trials 15
    python -m hpstrat_lite.part2 features --datasets Cora --n-trials 3 --steps Cora=400
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ._validate import check_int
from .datasets import available_datasets
from .models import PRECISIONS, check_precision
from .results import append_rows, code_version, host_cpu, read_rows

with warnings.catch_warnings():  # tqdm.auto (imported by optuna) warns in a kernel without widgets
    warnings.filterwarnings("ignore", message=".*IProgress not found.*")
    from .synthetic import WS_GAMMAS
    from .tuning import (FEATURE_COUNTS, FEATURE_STEPS, RESULT_COLUMNS, RESULTS_FILES, SEARCH_SPACE,
                         check_part2_dataset, feature_study, feature_subsets, load_part2_dataset, results_file,
                         run_tuning, with_column_defaults)
    from .tuning import log as tuning_log

__all__ = [
    "NODE_DATASETS",
    "LINK_DATASETS",
    "WS_DATASETS",
    "NODE_BUDGETS",
    "FEATURE_BUDGET",
    "N_EVAL",
    "LINK_BUDGETS",
    "LINK_SPACE",
    "LINK_MAX_EPOCHS",
    "NODE_SPACE",
    "NODE_MAX_EPOCHS",
    "PAPER",
    "PAPER_NODE",
    "PAPER_LINK",
    "PART2_FILES",
    "results_file",
    "run_node_benchmarks",
    "run_link_benchmarks",
    "run_random_baseline",
    "run_feature_studies",
    "summarize",
    "selection_optimism",
    "node_table",
    "part1_table",
    "link_table",
    "ws_gamma_table",
    "feature_study_table",
    "study_progress",
    "feature_study_coverage",
    "full_features_vs_chapter6",
    "paper_comparison",
    "part2_claims",
    "ws_summary",
    "plot_mlp_vs_gcn",
    "plot_ws_gamma",
    "plot_feature_study",
    "main",
]

# ----------------------------------------------------------------------------------------------
# Datasets, budgets, search spaces
# ----------------------------------------------------------------------------------------------

#: Node-classification datasets of the paper's Tables 1 and 2 (PubMed is not in the offline mirror).
NODE_DATASETS = ("Computers", "Photo", "CS", "Physics", "Cora", "CiteSeer", "PubMed")
#: The paper's suggested link-prediction benchmarks (Table 4).
LINK_DATASETS = ("Twitch-PTBR", "Twitch-EN", "Facebook")
#: WS1000 and the WS1000_gamma family (Table 3, Figure 2).
WS_DATASETS = ("WS1000",) + tuple(f"WS1000_{g}" for g in WS_GAMMAS)

#: Optuna trial budgets of the book's node-classification runs (the paper ran far larger Bayesian
#: sweeps). Small because the book is built on two shared CPU cores; every table states them. They
#: are the budgets of the committed studies, so a rerun of chapter 6 resumes them rather than
#: extending them (Photo ran with 3; a larger budget here would add trials and re-evaluate).
NODE_BUDGETS = {"Cora": 10, "CiteSeer": 10, "Photo": 3, "Computers": 5, "CS": 5, "Physics": 4,
                "PubMed": 8}
#: Optuna trial budget of every point of the feature study (chapter 7; the committed studies).
FEATURE_BUDGET = 3
#: Evaluation seeds of every committed study (the runners' default ``n_eval``): the book counts a
#: feature-study point once all of them have landed.
N_EVAL = 5
#: Trial budgets of the book's link-prediction runs.
LINK_BUDGETS = {**{d: 12 for d in WS_DATASETS}, "Twitch-PTBR": 12, "Twitch-EN": 8, "Facebook": 5}
#: Epoch budget of the link-prediction runs (early stopping on validation ROC AUC ends most far
#: earlier); Facebook (22k nodes) gets fewer.
LINK_MAX_EPOCHS = {"Facebook": 200}
LINK_DEFAULT_MAX_EPOCHS = 400
#: Epoch budget of the node-classification runs.
NODE_MAX_EPOCHS = 500

#: Link-prediction search space: :data:`hpstrat_lite.tuning.SEARCH_SPACE` with shorter patience
#: (link predictors peak on validation ROC AUC after a few dozen epochs).
LINK_SPACE = {**SEARCH_SPACE, "patience": ("cat", (20, 50, 100))}
#: Node-classification search space: the default one with patience {50, 100}.
NODE_SPACE = {**SEARCH_SPACE, "patience": ("cat", (50, 100))}

# ----------------------------------------------------------------------------------------------
# The papers' reported numbers (reference constants, never computed here)
# ----------------------------------------------------------------------------------------------

#: Where each reference number comes from. ``None`` values below could not be read on this
#: offline machine; fill them from the paper (arXiv:2412.06173) -- the tables then show them.
PAPER = {
    "title": "Revisiting the Necessity of Graph Learning and Common Graph Benchmarks",
    "authors": "Katsman, Lou and Gilbert",
    "year": 2024,
    "arxiv": "2412.06173",
    "node_source": "Tables 1 and 2 (test accuracy %, mean over 5 trials)",
    "ws_source": "Table 3 (WS1000 link prediction, test ROC AUC x 100)",
    "gamma_source": "Figure 2 (WS1000_gamma link prediction, test ROC AUC vs gamma)",
    "link_source": "Table 4 (suggested benchmarks, link prediction test ROC AUC x 100)",
    # the one count readable offline (the arXiv abstract): a well-tuned feature-only MLP against graph
    # methods on seven common datasets gains "little benefit from using graph structure on five"
    "abstract_claim": (5, 7),
}

#: Paper Tables 1 and 2: test accuracy (%) of the tuned MLP and of the GCN, ``(mean, std)``.
PAPER_NODE = {d: {"mlp": None, "gcn": None} for d in NODE_DATASETS}

#: Paper Tables 3 and 4 and Figure 2: link prediction test ROC AUC (x 100), ``(mean, std)`` or a
#: bare mean. Table 3's random baseline is 50 by construction of ROC AUC (issue 5 quotes it).
PAPER_LINK = {
    "WS1000": {"random": (50.0, None), "mlp": None, "gcn": None},
    **{f"WS1000_{g}": {"mlp": None, "gcn": None} for g in WS_GAMMAS},
    **{d: {"mlp": None, "gcn": None} for d in LINK_DATASETS},
}


def _paper_value(table, dataset, model):
    v = table.get(dataset, {}).get(model)
    if v is None:
        return np.nan, np.nan
    if isinstance(v, tuple):
        return float(v[0]), (np.nan if v[1] is None else float(v[1]))
    return float(v), np.nan


# ----------------------------------------------------------------------------------------------
# Runners
# ----------------------------------------------------------------------------------------------

#: Result files of Part II (:data:`hpstrat_lite.tuning.RESULTS_FILES`): chapter 6 (node), chapters 8-9
#: (link), chapter 7 (features).
PART2_FILES = RESULTS_FILES


def _budget(n_trials, dataset, budgets):
    if n_trials is None:
        n_trials = budgets.get(dataset, 10)
    elif isinstance(n_trials, dict):
        n_trials = n_trials.get(dataset, budgets.get(dataset, 10))
    check_int(n_trials, "n_trials", hint=f" (or a dict dataset -> integer; dataset {dataset!r})")
    return int(n_trials)


def _check_datasets(datasets, labelled=False):
    """``datasets`` as a tuple of names, every one checked before any training starts (a typo in the
    last name would otherwise surface hours into a sweep); a single string is one dataset.
    ``labelled=True`` (node classification, the feature study) also refuses the synthetic WS graphs,
    which have no node labels."""
    datasets = (datasets,) if isinstance(datasets, str) else tuple(datasets)
    if not datasets:
        raise ValueError("datasets must name at least one dataset")
    for ds in datasets:
        check_part2_dataset(ds)
        if labelled and ds.startswith("WS1000"):  # the synthetic names check_part2_dataset accepts
            raise ValueError(f"dataset {ds!r} is a synthetic link-prediction graph without node labels; node "
                             f"classification and the feature study run on labelled graphs such as "
                             f"{', '.join(NODE_DATASETS)}")
    return datasets


def _check_models(models, allowed, name="models"):
    """``models`` as a tuple of lower-case names from ``allowed`` (matched case-insensitively)."""
    models = tuple(m.lower() if isinstance(m, str) else m for m in models)
    bad = [m for m in models if m not in allowed]
    if bad or not models:
        raise ValueError(f"{name} must be a non-empty sequence from {allowed}, got {models!r}")
    return models


@contextlib.contextmanager
def _quiet(threads=None):
    """Silence torch's one-time notices about sparse tensors; optionally set torch's CPU threads.

    The notices are emitted the first time a sparse tensor is built in a process and say nothing
    about the run (a notebook that shows them would fail the book's no-warnings check).
    ``threads`` (an integer >= 1) sets ``torch.set_num_threads`` for the block and restores it
    after: one thread is much faster for these small graphs on a busy machine (no
    oversubscription).
    """
    import torch

    old = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(check_int(threads, "threads"))
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse.*", category=UserWarning)
            warnings.filterwarnings("ignore", message=".*IProgress not found.*")
            yield
    finally:
        torch.set_num_threads(old)


def _missing_row(dataset, model, err):
    return {"dataset": dataset, "model": model, "status": "missing", "reason": str(err).split(".")[0]}


def _study_row(dataset, task, model, budget, threads, log, **tuning_kwargs) -> dict:
    """Run (or resume) one tuning study with :func:`run_tuning` and return its summary row: ``status``
    ``"done"`` with the test mean / std over the evaluation runs, or the :func:`_missing_row` of a
    dataset whose files are absent. ``log`` (or None) gets one line either way."""
    t0 = time.perf_counter()
    try:
        with _quiet(threads):
            out = run_tuning(dataset, task, model, budget, **tuning_kwargs)
    except FileNotFoundError as err:
        row = _missing_row(dataset, model, err)
        if log:
            log(f"{dataset} {model}: missing ({row['reason']})")
        return row
    row = {"dataset": dataset, "model": model, "status": "done", "test_mean": out["test_mean"],
           "test_std": out["test_std"], "n_trials": budget, "seconds": time.perf_counter() - t0}
    if log:
        log(f"{dataset} {model}: {out['test_mean']:.4f} +- {out['test_std']:.4f} "
            f"({budget} trials, {row['seconds']:.0f} s)")
    return row


def run_node_benchmarks(datasets=NODE_DATASETS, models=("mlp", "gcn"), n_trials=None, *,
                        n_eval=5, protocol="hpstrat", k=5, max_epochs=NODE_MAX_EPOCHS,
                        space=None, results_dir=None, root=None, device="auto", threads=None,
                        eval_batch=None, precision="float32", log=None):
    """Tune and evaluate MLP and GCN node classifiers (chapter 6, paper Tables 1 and 2).

    Each (dataset, model) is one :func:`hpstrat_lite.tuning.run_tuning` call writing to
    ``results/part2_node.csv``; a rerun resumes. A dataset whose raw files are absent (PubMed
    offline) is skipped and reported with ``status = "missing"``.

    Parameters
    ----------
    datasets : sequence of str
    models : sequence of {"mlp", "gcn"}
    n_trials : int, dict or None
        Trial budget; a dict per dataset; ``None``: :data:`NODE_BUDGETS`.
    n_eval : int
        Evaluation seeds of the best configuration.
    protocol : {"hpstrat", "random"}
        HpStrat k-fold rounds (default, k = 5) or random 60/20/20 splits.
    k, max_epochs, space, results_dir, root, device
        Passed to the tuner (``space`` default :data:`NODE_SPACE`).
    threads : int, optional
        Torch CPU threads during the runs (restored afterwards); ``None`` leaves them as they are.
    eval_batch : int, optional
        Evaluation seeds per training batch (default all; see
        :func:`hpstrat_lite.tuning.tune_node_classifier`).
    precision : {"float32", "bfloat16"}
        Precision of the dense matrix products (:func:`hpstrat_lite.train.train_runs`; bfloat16 is
        mixed-precision training, faster on CPUs with AMX); recorded in each row.
    log : callable, optional
        Progress messages (e.g. ``print``).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, model): ``status`` ("done" / "missing"), ``test_mean``,
        ``test_std``, ``n_trials``, ``seconds``.
    """
    datasets = _check_datasets(datasets, labelled=True)
    models = _check_models(models, ("mlp", "gcn"))
    check_int(threads, "threads", allow_none=True)
    check_precision(precision)
    budgets = {ds: _budget(n_trials, ds, NODE_BUDGETS) for ds in datasets}
    space = NODE_SPACE if space is None else space
    rows = []
    for ds in datasets:
        for model in models:
            rows.append(_study_row(ds, "node", model, budgets[ds], threads, log, results_dir=results_dir,
                                   root=root, protocol=protocol, k=k, n_eval=n_eval, max_epochs=max_epochs,
                                   space=space, device=device, eval_batch=eval_batch, precision=precision))
    return pd.DataFrame(rows)


def run_random_baseline(dataset, n_eval=5, *, val_ratio=0.1, test_ratio=0.2, results_dir=None,
                        root=None):
    """Random link scores on ``n_eval`` edge splits (Table 3's "random" row); rows to the results.

    Evaluation seed s splits the edges with seed s and scores every pair uniformly at random
    (:func:`hpstrat_lite.linkpred.run_link_prediction` with ``encoder="random"``). Rows already in
    the results file are not recomputed.

    Returns
    -------
    pandas.DataFrame
        The ``n_eval`` evaluation rows (``phase = "eval"``, ``model = "random"``).
    """
    from .linkpred import run_link_prediction

    check_int(n_eval, "n_eval")
    path = results_file("link", results_dir)
    with _quiet():
        data = load_part2_dataset(dataset, root=root)
    protocol = (f"edge split {round(100 * (1 - val_ratio - test_ratio))}/{round(100 * val_ratio)}/"
                f"{round(100 * test_ratio)}")
    key = {"task": "link", "dataset": data.name, "model": "random", "protocol": protocol, "k": 1,
           "tune_seed": 0, "space_id": "none", "num_features": int(data.x.shape[1]),
           "n_trials": 0, "params": "{}", "metric": "roc_auc", "phase": "eval"}
    old = read_rows(path)
    if not old.empty:
        old = old[(old["dataset"] == data.name) & (old["model"] == "random")
                  & (old["protocol"] == protocol)]
    have = set(old["eval_seed"].astype(int)) if not old.empty else set()
    new = []
    for s in range(n_eval):
        if s in have:
            continue
        r = run_link_prediction(data, "random", seed=s, val_ratio=val_ratio, test_ratio=test_ratio)
        new.append({**key, "eval_seed": s, "round": 0, "val": r["val_auc"], "test": r["test_auc"],
                    "best_epoch": 0, "seconds": r["seconds"], "host": host_cpu(),
                    "code_version": code_version()})
    if new:
        append_rows(path, [{c: row.get(c) for c in RESULT_COLUMNS} for row in new])
    rows = read_rows(path)
    rows = rows[(rows["dataset"] == data.name) & (rows["model"] == "random")
                & (rows["protocol"] == protocol)]
    return rows[rows["eval_seed"].astype(int) < n_eval].reset_index(drop=True)


def run_link_benchmarks(datasets=WS_DATASETS + LINK_DATASETS, encoders=("mlp", "gcn"),
                        n_trials=None, *, n_eval=5, max_epochs=None, space=None, random=True,
                        results_dir=None, root=None, device="auto", threads=None, log=None):
    """Tune and evaluate MLP and GCN link predictors (chapters 8 and 9, Tables 3 and 4, Figure 2).

    Each (dataset, encoder) is one :func:`hpstrat_lite.tuning.run_tuning` call (task ``"link"``,
    edge split 70/10/20, dot-product decoder) writing to ``results/part2_link.csv``; a rerun
    resumes. With ``random=True`` WS1000 also gets the random baseline
    (:func:`run_random_baseline`).

    Parameters
    ----------
    datasets : sequence of str
        WS names (``"WS1000"``, ``"WS1000_<gamma>"``) or MUSAE names.
    encoders : sequence of {"mlp", "gcn"}
    n_trials : int, dict or None
        Trial budget (``None``: :data:`LINK_BUDGETS`).
    n_eval : int
        Evaluation seeds (each a new edge split) of the best configuration.
    max_epochs : int or None
        Epoch budget (``None``: :data:`LINK_MAX_EPOCHS`, else 400).
    space : dict, optional
        Search space (default :data:`LINK_SPACE`).
    random : bool
        Add the random baseline for datasets named ``"WS1000"``.
    results_dir, root, device, threads, log
        As in :func:`run_node_benchmarks`.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, encoder), as :func:`run_node_benchmarks`.
    """
    datasets = _check_datasets(datasets)
    encoders = _check_models(encoders, ("mlp", "gcn"), "encoders")
    check_int(threads, "threads", allow_none=True)
    budgets = {ds: _budget(n_trials, ds, LINK_BUDGETS) for ds in datasets}
    space = LINK_SPACE if space is None else space
    rows = []
    for ds in datasets:
        if random and ds == "WS1000":
            r = run_random_baseline(ds, n_eval, results_dir=results_dir, root=root)
            rows.append({"dataset": ds, "model": "random", "status": "done",
                         "test_mean": float(r["test"].mean()), "test_std": float(r["test"].std(ddof=0)),
                         "n_trials": 0, "seconds": float(r["seconds"].sum())})
        for enc in encoders:
            epochs = max_epochs or LINK_MAX_EPOCHS.get(ds, LINK_DEFAULT_MAX_EPOCHS)
            rows.append(_study_row(ds, "link", enc, budgets[ds], threads, log, results_dir=results_dir, root=root,
                                   n_eval=n_eval, max_epochs=epochs, space=space, device=device))
    return pd.DataFrame(rows)


def run_feature_studies(datasets=("Cora", "CiteSeer"), models=("mlp", "gcn"), n_trials=FEATURE_BUDGET, *,
                        steps=None, n_eval=5, protocol="hpstrat", k=5, max_epochs=NODE_MAX_EPOCHS,
                        space=None, results_dir=None, root=None, device="auto", threads=None,
                        eval_batch=None, precision="float32", log=None):
    """The feature-subset study (chapter 7, paper Figures 1 and 3) for several datasets.

    For each dataset and model, :func:`hpstrat_lite.tuning.feature_study`: nested prefixes of
    the feature columns in the paper's increments (:data:`hpstrat_lite.tuning.FEATURE_STEPS`, or
    ``steps[dataset]``), each tuned with ``n_trials`` trials (default :data:`FEATURE_BUDGET`) and
    evaluated on ``n_eval`` seeds.
    Rows go to ``results/part2_features.csv`` (``num_features`` tells the subsets apart). Other
    arguments as in :func:`run_node_benchmarks`.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, model, subset): ``num_features``, ``test_mean``, ``test_std``...
        Datasets whose files are missing get one ``status = "missing"`` row.
    """
    datasets = _check_datasets(datasets, labelled=True)
    models = _check_models(models, ("mlp", "gcn"))
    check_int(threads, "threads", allow_none=True)
    check_precision(precision)
    space = NODE_SPACE if space is None else space
    steps = steps or {}
    frames = []
    for ds in datasets:
        step = steps.get(ds, FEATURE_STEPS.get(ds))
        for model in models:
            t0 = time.perf_counter()
            try:
                with _quiet(threads):
                    data = load_part2_dataset(ds, root=root)
                    df = feature_study(data, model, step, n_trials,
                                       results=results_file("features", results_dir),
                                       dataset=data.name, protocol=protocol, k=k, n_eval=n_eval,
                                       max_epochs=max_epochs, space=space, device=device,
                                       eval_batch=eval_batch, precision=precision)
            except FileNotFoundError as err:
                frames.append(pd.DataFrame([_missing_row(ds, model, err)]))
                continue
            df.insert(0, "dataset", ds)
            df["status"] = "done"
            frames.append(df)
            if log:
                log(f"{ds} {model}: feature study, {len(df)} subsets, "
                    f"{time.perf_counter() - t0:.0f} s")
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


# ----------------------------------------------------------------------------------------------
# Table builders (read result rows)
# ----------------------------------------------------------------------------------------------

def _rows(rows, task):
    if rows is None:
        rows = results_file(task, None)
    if isinstance(rows, (str, Path)):
        rows = read_rows(rows)
    if rows is not None and not rows.empty:
        rows = with_column_defaults(rows)  # rows older than the precision column trained in float32
    return rows


STUDY_KEY = ["task", "dataset", "model", "protocol", "k", "tune_seed", "space_id", "num_features", "precision"]


def summarize(rows=None, task="node"):
    """One line per tuned study: the best configuration's test score over its evaluation seeds.

    A *study* is one (dataset, model, protocol, k, tune seed, search space, number of features)
    with a trial budget ``n_trials``. Its evaluation rows (``phase = "eval"``) hold the test score
    of the best configuration per evaluation seed and round; a seed's score is its mean over
    rounds (HpStrat: the k folds), and the study's score is the mean and the population standard
    deviation over seeds, as :func:`hpstrat_lite.tuning.tune_node_classifier` returns. When a
    study was run with several budgets, the largest budget is kept; with both precisions at that
    budget, the float32 one.

    Parameters
    ----------
    rows : pandas.DataFrame, str, os.PathLike or None
        Result rows, or their file (default ``results/part2_<task>.csv``).
    task : {"node", "link", "features"}
        Used only to find the default file.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, protocol, k, num_features, n_trials, trials_done, n_eval,
        test_mean, test_std, best_val, params, precision``; scores as fractions (accuracy or ROC AUC).
        ``model`` is ``mlp`` / ``gcn`` / ``random`` (the link decoder suffix is dropped).
    """
    df = _rows(rows, task)
    cols = ["dataset", "model", "protocol", "k", "num_features", "n_trials", "trials_done",
            "n_eval", "test_mean", "test_std", "best_val", "params", "precision"]
    if df is None or df.empty:
        return pd.DataFrame(columns=cols)
    out = []
    for rec, _, per_seed, t in _studies(df):
        best_val = np.nan
        if len(t):
            match = t[t["params"] == rec["params"]]
            best_val = float(match["val"].max()) if len(match) else float(t["val"].max())
        out.append({**rec, "trials_done": int(t["trial"].nunique()), "n_eval": int(per_seed.size),
                    "test_mean": float(per_seed.mean()), "test_std": float(per_seed.std(ddof=0)),
                    "best_val": best_val})
    return _largest_budget(pd.DataFrame(out))[cols]


def _studies(df):
    """``(record, evaluation rows, per-seed test, trial rows)`` of every evaluated study in the rows ``df``: the
    record holds :data:`STUDY_KEY`, ``n_trials`` and the evaluated ``params``; a seed's test score is its mean
    over rounds."""
    df = df.copy()
    df["space_id"] = df["space_id"].astype(str)
    trials = df[df["phase"] == "trial"]
    for key, g in df[df["phase"] == "eval"].groupby(STUDY_KEY + ["n_trials", "params"], dropna=False, sort=False):
        rec = dict(zip(STUDY_KEY + ["n_trials", "params"], key))
        t = trials
        for c in STUDY_KEY:
            t = t[t[c].astype(str) == str(rec[c])]
        yield rec, g, g.groupby("eval_seed")["test"].mean(), t[t["trial"] < rec["n_trials"]]


def _model_family(models: pd.Series) -> pd.Series:
    """``mlp`` / ``gcn`` / ``random``: link model names lose their decoder suffix (``gcn-dot`` -> ``gcn``)."""
    return models.astype(str).str.replace(r"-(dot|mlp)$", "", regex=True)


def _largest_budget(res):
    """One row per study (the largest trial budget it was run with; float32 before bfloat16 at equal
    budgets), sorted; link models lose their decoder suffix."""
    res = res.copy()
    res["model"] = _model_family(res["model"])
    res["_f32"] = res["precision"] == "float32"
    res = res.sort_values(["n_trials", "_f32"]).drop(columns="_f32").groupby(
        ["dataset", "model", "protocol", "k", "num_features", "tune_seed", "space_id"],
        dropna=False, sort=False).tail(1)
    return res.sort_values(["dataset", "model", "num_features"]).reset_index(drop=True)


def selection_optimism(rows=None, task="node"):
    """How much the evaluation seed that repeats the tuning split flatters a study (points x 100).

    The tuning trials train on the split of seed ``tune_seed`` (0) and the best configuration is then
    evaluated on the splits of seeds ``0..n_eval-1``, with the same initial weights per seed. The
    evaluation seed equal to ``tune_seed`` therefore re-trains the selected trial itself (same folds, same
    weights: ``tuning_seed_test`` equals ``best_trial_test`` when both ran on the same code version,
    ``same_code``; another engine's float rounding can move early stopping), and it shares the luck that
    made that trial win on validation; the other seeds are fresh splits.
    ``optimism = tuning_seed_test - other_seeds_test``: positive where the tuning split flatters.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, num_features, n_trials, best_trial_test, tuning_seed_test, other_seeds_test,
        optimism`` (test accuracy or ROC AUC x 100), ``same_code``; one row per study with both kinds of seed.
    """
    df = _rows(rows, task)
    cols = ["dataset", "model", "num_features", "n_trials", "best_trial_test", "tuning_seed_test",
            "other_seeds_test", "optimism", "same_code"]
    if df is None or df.empty:
        return pd.DataFrame(columns=cols)
    out = []
    for rec, evals, per_seed, t in _studies(df):
        seed = int(rec["tune_seed"])
        others = per_seed[per_seed.index != seed]
        if seed not in per_seed.index or others.empty:
            continue
        match = t[t["params"] == rec["params"]]
        best = match.loc[match["val"].idxmax()] if len(match) else None
        mine, rest = 100 * float(per_seed[seed]), 100 * float(others.mean())
        out.append({**rec, "best_trial_test": np.nan if best is None else 100 * float(best["test"]),
                    "tuning_seed_test": mine, "other_seeds_test": rest, "optimism": mine - rest,
                    "same_code": best is not None and set(evals["code_version"]) == {best["code_version"]}})
    if not out:
        return pd.DataFrame(columns=cols)
    return _largest_budget(pd.DataFrame(out))[cols]


def _pct(summary, dataset, model, num_features=None):
    s = summary[(summary["dataset"] == dataset) & (summary["model"] == model)]
    if num_features is not None:
        s = s[s["num_features"] == num_features]
    elif len(s):
        s = s[s["num_features"] == s["num_features"].max()]
    if s.empty:
        return np.nan, np.nan, np.nan, ""
    r = s.sort_values("n_trials").iloc[-1]
    return 100 * r["test_mean"], 100 * r["test_std"], r["n_trials"], r["protocol"]


def _fmt(mean, std, digits=1):
    if mean is None or not np.isfinite(mean):
        return "n/a"
    if std is None or not np.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def node_table(rows=None, datasets=NODE_DATASETS, missing=()):
    """Chapter 6's table: tuned MLP and GCN accuracy (%), ours beside the paper's (Tables 1, 2).

    Parameters
    ----------
    rows : DataFrame, path or None
        Node-classification result rows (default ``results/part2_node.csv``) or a
        :func:`summarize` output.
    datasets : sequence of str
        Row order; datasets without results show ``n/a``.
    missing : sequence of str
        Datasets known to be absent (their ``note`` says so).

    Returns
    -------
    pandas.DataFrame
        Index ``dataset``; columns ``MLP (ours)``, ``MLP (paper)``, ``GCN (ours)``,
        ``GCN (paper)`` (strings "mean ± std"), numeric ``gap ours`` and ``gap paper``
        (GCN - MLP, points), ``trials MLP/GCN``, ``protocol``, ``note``.
    """
    summary = _as_summary(rows, "node")
    out = []
    for ds in datasets:
        mm, ms, mt, mp = _pct(summary, ds, "mlp")
        gm, gs, gt, gp = _pct(summary, ds, "gcn")
        pm, pms = _paper_value(PAPER_NODE, ds, "mlp")
        pg, pgs = _paper_value(PAPER_NODE, ds, "gcn")
        note = ""
        if ds in missing:
            note = "raw files absent offline: not run"
        elif not np.isfinite(mm) and not np.isfinite(gm):
            note = "no results yet"
        out.append({"dataset": ds, "MLP (ours)": _fmt(mm, ms), "MLP (paper)": _fmt(pm, pms),
                    "GCN (ours)": _fmt(gm, gs), "GCN (paper)": _fmt(pg, pgs),
                    "gap ours": gm - mm, "gap paper": pg - pm,
                    "trials MLP/GCN": f"{_int(mt)}/{_int(gt)}", "protocol": mp or gp, "note": note})
    return pd.DataFrame(out).set_index("dataset")


def part1_table(part1_rows=None, node_rows=None, datasets=NODE_DATASETS, k=5, seed=0):
    """Chapter 6's second table: the tuned MLP and GCN beside Part I's untuned MLP and seven GNNs.

    Part I's k = 5 sweep (``part1_rows``; default ``results/gnn_k5_seed0.csv``, the file of
    ``hpstrat experiment --k 5 --seeds 0``, :func:`hpstrat_lite.experiment.default_results_path`)
    trains every model with the HpStrat paper's fixed hyperparameters (2 layers, 64 hidden, dropout
    0.5, Adam lr 0.01, weight decay 5e-4, patience 100 on validation loss) on the HpStrat k = 5 folds
    of split seed 0: the protocol of this chapter's tuning trials. A Part I cell is the mean test accuracy (%) over the k test folds
    ± its std over the folds; a model shows ``n/a`` until all k folds are in the file. The tuned
    columns are :func:`node_table`'s (mean ± std over the evaluation seeds).

    Returns
    -------
    pandas.DataFrame
        Index ``dataset``; columns ``MLP tuned``, ``GCN tuned``, then ``MLP`` and each GNN of
        :data:`hpstrat_lite.models.MODELS` (Part I, strings "mean ± std"), ``best Part I GNN``,
        ``tuned MLP - best GNN`` and ``tuned MLP - Part I MLP`` (what the search bought; points,
        NaN where a number is missing).
    """
    from .experiment import default_results_path
    from .models import MODELS

    summary = _as_summary(node_rows, "node")
    if part1_rows is None:
        part1_rows = default_results_path(k, [seed])
    p1 = part1_rows if isinstance(part1_rows, pd.DataFrame) else read_rows(part1_rows)
    cells = pd.DataFrame(columns=["dataset", "model", "mean", "std"])
    if not p1.empty:
        p1 = p1[(p1["method"] == "hpstrat") & (p1["k"] == k) & (p1["seed"] == seed)]
        p1 = p1.drop_duplicates(["dataset", "model", "fold"], keep="last")
        g = p1.groupby(["dataset", "model"])["test_acc"]
        cells = g.agg(mean="mean", std=lambda a: a.std(ddof=0), folds="size").reset_index()
        cells = cells[cells["folds"] == k]
    out = []
    for ds in datasets:
        mm, ms, *_ = _pct(summary, ds, "mlp")
        gm, gs, *_ = _pct(summary, ds, "gcn")
        row = {"dataset": ds, "MLP tuned": _fmt(mm, ms), "GCN tuned": _fmt(gm, gs)}
        gnn, part1_mlp = {}, np.nan
        for m in MODELS:
            c = cells[(cells["dataset"] == ds) & (cells["model"] == m)]
            mean, std = (100 * c["mean"].iloc[0], 100 * c["std"].iloc[0]) if len(c) else (np.nan, np.nan)
            row[m] = _fmt(mean, std)
            if m == "MLP":
                part1_mlp = mean
            elif np.isfinite(mean):
                gnn[m] = mean
        best = max(gnn, key=gnn.get) if gnn else None
        row["best Part I GNN"] = best or "n/a"
        row["tuned MLP - best GNN"] = mm - gnn[best] if best else np.nan
        row["tuned MLP - Part I MLP"] = mm - part1_mlp
        out.append(row)
    return pd.DataFrame(out).set_index("dataset")


def _int(v):
    return "-" if v is None or not np.isfinite(v) else str(int(v))


def _as_summary(rows, task):
    df = _rows(rows, task)
    if df is not None and "phase" not in df.columns and "test_mean" in df.columns:
        return df
    return summarize(df, task)


def link_table(rows=None, datasets=LINK_DATASETS, models=("mlp", "gcn")):
    """Chapters 8 and 9: link-prediction test ROC AUC (x 100), ours beside the paper's.

    Parameters
    ----------
    rows : DataFrame, path or None
        Link result rows (default ``results/part2_link.csv``) or a :func:`summarize` output.
    datasets : sequence of str
        Table 3: ``("WS1000",)`` with ``models=("random", "mlp", "gcn")``; Table 4:
        :data:`LINK_DATASETS`.
    models : sequence of str

    Returns
    -------
    pandas.DataFrame
        Index ``dataset``; for each model ``<MODEL> (ours)`` and ``<MODEL> (paper)``; then
        ``gap ours`` (GCN - MLP, points), ``trials`` and ``protocol``.
    """
    summary = _as_summary(rows, "link")
    out = []
    for ds in datasets:
        rec = {"dataset": ds}
        vals, trials, protocol = {}, [], ""
        for m in models:
            mean, std, nt, p = _pct(summary, ds, m)
            pm, ps = _paper_value(PAPER_LINK, ds, m)
            rec[f"{m.upper()} (ours)"] = _fmt(mean, std)
            rec[f"{m.upper()} (paper)"] = _fmt(pm, ps)
            vals[m] = mean
            if m != "random":
                trials.append(_int(nt))
            protocol = protocol or p
        if "mlp" in vals and "gcn" in vals:
            rec["gap ours"] = vals["gcn"] - vals["mlp"]
        rec["trials " + "/".join(m.upper() for m in models if m != "random")] = "/".join(trials)
        rec["protocol"] = protocol
        out.append(rec)
    return pd.DataFrame(out).set_index("dataset")


def ws_gamma_table(rows=None, gammas=WS_GAMMAS, include_base=True):
    """Figure 2's data: test ROC AUC of the tuned MLP and GCN against gamma.

    Returns
    -------
    pandas.DataFrame
        One row per (gamma, model): ``gamma`` (0 for WS1000's i.i.d. features when
        ``include_base``), ``model``, ``dataset``, ``test_mean``, ``test_std``, ``n_trials``,
        ``n_eval`` (fractions, not percent). Missing runs are left out.
    """
    summary = _as_summary(rows, "link")
    names = ([("WS1000", 0.0)] if include_base else []) + [(f"WS1000_{g}", float(g)) for g in gammas]
    out = []
    for name, g in names:
        for m in ("mlp", "gcn"):
            s = summary[(summary["dataset"] == name) & (summary["model"] == m)]
            if s.empty:
                continue
            r = s.sort_values("n_trials").iloc[-1]
            out.append({"gamma": g, "model": m, "dataset": name, "test_mean": r["test_mean"],
                        "test_std": r["test_std"], "n_trials": int(r["n_trials"]),
                        "n_eval": int(r["n_eval"])})
    return pd.DataFrame(out, columns=["gamma", "model", "dataset", "test_mean", "test_std",
                                      "n_trials", "n_eval"])


def feature_study_table(rows=None, datasets=None, min_eval: int = 1):
    """Figures 1 and 3's data: accuracy against the number of features, MLP and GCN.

    ``rows``: feature-study rows (default ``results/part2_features.csv``), their file or a
    :func:`summarize` output. ``min_eval``: a point counts once this many evaluation seeds have
    landed (the book passes its ``n_eval``, :data:`N_EVAL`, so a point whose evaluation is still
    running is left out rather than shown as a mean of fewer seeds).

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, num_features, test_mean, test_std, n_trials, n_eval, protocol``
        (fractions), sorted; only (dataset, model) pairs with at least two feature counts (a
        single full-feature run is not a study).
    """
    summary = _as_summary(rows, "features")
    cols = ["dataset", "model", "num_features", "test_mean", "test_std", "n_trials", "n_eval",
            "protocol"]
    if summary.empty:
        return pd.DataFrame(columns=cols)
    s = summary if datasets is None else summary[summary["dataset"].isin(list(datasets))]
    s = s[s["n_eval"] >= check_int(min_eval, "min_eval", 1)]
    counts = s.groupby(["dataset", "model"])["num_features"].transform("nunique")
    s = s[counts >= 2]
    # one budget per curve: the budget used by most of its points (the full-feature point may also
    # exist with the larger budget of chapter 6)
    keep = []
    for _, g in s.groupby(["dataset", "model"]):
        budget = g.groupby("n_trials")["num_features"].nunique().idxmax()
        g = g[g["n_trials"] == budget] if (g["n_trials"] == budget).sum() >= 2 else g
        keep.append(g.sort_values("n_trials").groupby("num_features").head(1))
    s = pd.concat(keep) if keep else s.iloc[:0]
    return s[cols].sort_values(["dataset", "model", "num_features"]).reset_index(drop=True)


def study_progress(task="node", rows=None, datasets=None, models=("mlp", "gcn"), *, n_eval=5, k=5,
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
    models : sequence of {"mlp", "gcn"}
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
    models = _check_models(models, ("mlp", "gcn"))
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
                        f"python -m hpstrat_lite.part2 {task} --datasets {ds} --models {m}"
                        # only the evaluation left: land it seed by seed (a large graph's takes hours)
                        + (" --eval-batch 1" if task == "node" and status == "evaluating" else "")})
    return pd.DataFrame(out)


def _full_feature_count(dataset, *seen) -> int:
    """The full feature count of ``dataset``: :data:`hpstrat_lite.tuning.FEATURE_COUNTS` where it is
    known, else the largest of the feature counts ``seen`` in its rows."""
    return max(FEATURE_COUNTS.get(dataset, 0), *(int(n) for n in seen))


def feature_study_coverage(feature_rows=None, node_rows=None, datasets=tuple(FEATURE_STEPS),
                           models=("mlp", "gcn"), budget: int = FEATURE_BUDGET, min_eval: int = 1):
    """Chapter 7's coverage: which of the paper's feature-study datasets were run, with what budget,
    how far, and what the others would cost here.

    A studied dataset (rows in ``feature_rows``, default ``results/part2_features.csv``) shows its
    increment (smallest subset), points (subsets with an evaluated point), the trials and evaluation
    seeds of its points, and its status: "complete" when every model of ``models`` has every subset
    ``s, 2s, ..., F`` (``F`` the feature count: :data:`hpstrat_lite.tuning.FEATURE_COUNTS` where
    known, else the largest subset of its rows or of chapter 6's full-feature tuning), else "partial" with the points per model (e.g. ``mlp 7/7, gcn 2/7``).
    A point counts once ``min_eval`` evaluation seeds have landed; a point with fewer is named in the
    status as still evaluating (e.g. ``evaluating gcn 200 (1/5 seeds)``).
    For one not studied, the paper's increment (:data:`hpstrat_lite.tuning.FEATURE_STEPS`) and, when
    chapter 6 finished tuning both its MLP and its GCN (``node_rows``, default
    ``results/part2_node.csv``), an estimate from the recorded ``seconds`` of that tuning on the full
    features: one point costs, per model, ``budget`` (default :data:`FEATURE_BUDGET`, the feature
    study's trials) times its mean trial time plus its evaluation runs' time, and there is one point
    per subset (an upper bound: smaller subsets train a little faster).
    For a partial study (raw rows with ``seconds``), the estimate covers the points still to run: per
    model, its remaining subsets times the mean recorded time of its finished points here (trials
    plus evaluation runs), or chapter 6's estimate above for a model with no finished point yet.
    Both count the evaluation seed that repeats the selected trial's runs at the trial's time, so
    they lean high by about one trial a point.

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``status`` ("complete" / "partial (...)" / "not run"), ``increment``, ``points``,
        ``trials``, ``eval seeds``, ``one point (min)`` and ``projected (h)`` (estimates, not-run
        datasets only).
    """
    raw = _rows(feature_rows, "features")
    summary = _as_summary(feature_rows, "features")  # every evaluated point, single ones included
    min_eval = check_int(min_eval, "min_eval", 1)
    table = summary[summary["n_eval"] >= min_eval] if len(summary) else summary
    pending = summary[summary["n_eval"] < min_eval] if len(summary) else summary
    node = _rows(node_rows, "node")
    out = []
    for ds in datasets:
        t = table[table["dataset"] == ds]
        wait = pending[pending["dataset"] == ds] if len(pending) else pending
        n = node[node["dataset"] == ds] if node is not None and len(node) else pd.DataFrame()
        full = int(n["num_features"].max()) if len(n) else 0  # chapter 6 tunes on all the features
        chapter6 = _chapter6_point_minutes(n, full, models, budget)
        row = {"dataset": ds, "status": "not run", "increment": np.nan,
               "points": np.nan, "trials": "", "eval seeds": "", "one point (min)": np.nan,
               "projected (h)": np.nan}
        if len(t) or len(wait):
            both = pd.concat([t, wait])
            step = int(both["num_features"].min())
            expected = len(feature_subsets(_full_feature_count(ds, full, both["num_features"].max()), step))
            done = {m: int(t.loc[t["model"] == m, "num_features"].nunique()) for m in models}
            status = ("complete" if all(v == expected for v in done.values()) else
                      "partial (" + ", ".join(f"{m} {v}/{expected}" for m, v in done.items()) + ")")
            if len(wait):
                status += "; evaluating " + ", ".join(
                    f"{r.model} {r.num_features} ({r.n_eval}/{min_eval} seeds)"
                    for r in wait.sort_values(["model", "num_features"]).itertuples())
            row.update(status=status, increment=step, points=int(t["num_features"].nunique()),
                       trials="/".join(str(v) for v in sorted(both["n_trials"].unique())),
                       **{"eval seeds": "/".join(str(v) for v in sorted(t["n_eval"].unique()))})
            if status != "complete" and raw is not None and {"phase", "seconds"} <= set(raw.columns):
                finished = t.groupby("model")["num_features"].agg(set).to_dict()
                measured = _feature_point_minutes(raw[raw["dataset"] == ds], finished)
                per_model = {m: measured.get(m, chapter6.get(m)) for m in models}
                left = {m: expected - done[m] for m in models}
                if all(per_model[m] is not None for m in models if left[m]):
                    row.update(**{"one point (min)": sum(v for v in per_model.values() if v is not None),
                                  "projected (h)": sum(left[m] * per_model[m] for m in models if left[m]) / 60})
        else:
            step = FEATURE_STEPS.get(ds)
            row["increment"] = step
            if step and all(m in chapter6 for m in models):  # chapter 6 finished both studies
                points = len(feature_subsets(full, step))
                minutes = sum(chapter6[m] for m in models)
                row.update(points=points, trials=str(budget),
                           **{"one point (min)": minutes, "projected (h)": points * minutes / 60})
        out.append(row)
    return pd.DataFrame(out)


def _chapter6_point_minutes(node_rows, full, models, budget) -> dict:
    """Per model of ``models`` whose chapter-6 tuning (``node_rows`` of one dataset) finished: the
    minutes of one feature-study point estimated from it, ``budget`` x its mean trial time + its
    evaluation runs' time on the ``full`` features."""
    if not len(node_rows) or not {"phase", "seconds"} <= set(node_rows.columns):
        return {}
    n = node_rows[node_rows["num_features"] == full]
    finished = set(n.loc[n["phase"] == "eval", "model"])
    trials = n[n["phase"] == "trial"].groupby("model")["seconds"].mean()
    return {m: (float(trials.get(m, 0.0)) * budget
                + float(n.loc[(n["phase"] == "eval") & (n["model"] == m), "seconds"].sum())) / 60
            for m in models if m in finished}


def full_features_vs_chapter6(feature_rows=None, node_rows=None, min_eval: int = 1):
    """Each feature-study curve's last point (all the feature columns) beside chapter 6's tuning of
    the same dataset and model on the same features.

    The two are the same experiment (same protocol, search space and seeds), so they differ only by
    the trial budget (TPE's first draws are the same seeded random configurations, so a larger budget
    sees the smaller one's trials and more) and by the code version and host that trained them. A
    difference here measures how much the feature study's small budget costs at full features.

    Parameters
    ----------
    feature_rows, node_rows : pandas.DataFrame, str, os.PathLike or None
        Feature-study rows (default ``results/part2_features.csv``) and chapter 6's rows (default
        ``results/part2_node.csv``), or their files.
    min_eval : int
        A feature-study point counts once this many evaluation seeds have landed.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, features, feature study (%), study trials, chapter 6 (%), chapter 6 trials,
        difference (points)`` (feature study minus chapter 6) and ``same configuration`` (both
        selected the same hyperparameters); one row per curve that reached the full feature count,
        chapter 6 columns empty where chapter 6 has no evaluated study.
    """
    cols = ["dataset", "model", "features", "feature study (%)", "study trials", "chapter 6 (%)",
            "chapter 6 trials", "difference (points)", "same configuration"]
    points = _as_summary(feature_rows, "features")  # the rows are read and summarised once
    curves = feature_study_table(points, min_eval=min_eval)
    node = summarize(node_rows, "node")
    out = []
    for (ds, model), g in curves.groupby(["dataset", "model"]):
        n = node[(node["dataset"] == ds) & (node["model"] == model)]
        full = _full_feature_count(ds, g["num_features"].max(), *n["num_features"])
        last = g[g["num_features"] == full]
        if last.empty:
            continue  # the curve has not reached the full features yet
        last = last.iloc[0]
        p = points[(points["dataset"] == ds) & (points["model"] == model) & (points["num_features"] == full)
                   & (points["n_trials"] == last["n_trials"])]
        c = n[n["num_features"] == full]
        row = {"dataset": ds, "model": model, "features": full,
               "feature study (%)": 100 * last["test_mean"], "study trials": int(last["n_trials"]),
               "chapter 6 (%)": np.nan, "chapter 6 trials": np.nan, "difference (points)": np.nan,
               "same configuration": None}
        if len(c):
            c = c.iloc[0]
            row.update({"chapter 6 (%)": 100 * c["test_mean"], "chapter 6 trials": int(c["n_trials"]),
                        "difference (points)": 100 * (last["test_mean"] - c["test_mean"]),
                        "same configuration": bool(len(p)) and p.iloc[0]["params"] == c["params"]})
        out.append(row)
    return pd.DataFrame(out, columns=cols)


def _feature_point_minutes(rows, finished) -> dict:
    """Per model: the mean recorded minutes (trial rows + evaluation rows) of its ``finished``
    feature-study points (``{model: {num_features, ...}}``) in ``rows`` (one dataset's raw rows)."""
    out = {}
    for m, sizes in finished.items():
        r = rows[(rows["model"] == m) & rows["num_features"].isin(sizes)]
        if len(r):
            out[m] = float(r["seconds"].sum()) / 60 / len(sizes)
    return out


def paper_comparison(node_rows=None, link_rows=None, node_datasets=NODE_DATASETS,
                     link_datasets=WS_DATASETS + LINK_DATASETS, missing=()):
    """Every number of Part II beside the paper's, with its source and our trial budget.

    Parameters
    ----------
    node_rows, link_rows : DataFrame, path or None
        Result rows (defaults: the results files) or :func:`summarize` outputs.
    node_datasets, link_datasets : sequences of str
    missing : sequence of str
        Datasets absent offline (noted).

    Returns
    -------
    pandas.DataFrame
        One row per (task, dataset, model): ``ours`` and ``paper`` (numbers x 100: accuracy %
        or ROC AUC x 100), ``ours std``, ``paper std``, ``difference`` (ours - paper), ``source``
        (paper table / figure), ``metric``, ``protocol``, ``n_trials`` and ``n_eval`` of our run,
        and a ``note``.
    """
    out = []
    node = _as_summary(node_rows, "node")
    link = _as_summary(link_rows, "link")
    for task, summary, datasets, ref, models in (
        ("node", node, node_datasets, PAPER_NODE, ("mlp", "gcn")),
        ("link", link, link_datasets, PAPER_LINK, ("random", "mlp", "gcn")),
    ):
        for ds in datasets:
            for m in models:
                if m == "random" and ds != "WS1000":
                    continue
                mean, std, nt, prot = _pct(summary, ds, m)
                s = summary[(summary["dataset"] == ds) & (summary["model"] == m)]
                n_eval = int(s.sort_values("n_trials")["n_eval"].iloc[-1]) if len(s) else 0
                pm, ps = _paper_value(ref, ds, m)
                if task == "node":
                    source, metric = PAPER["node_source"], "accuracy %"
                elif ds == "WS1000":
                    source, metric = PAPER["ws_source"], "ROC AUC x 100"
                elif ds.startswith("WS1000_"):
                    source, metric = PAPER["gamma_source"], "ROC AUC x 100"
                else:
                    source, metric = PAPER["link_source"], "ROC AUC x 100"
                notes = []
                if ds in missing:
                    notes.append("dataset absent offline: not run")
                elif not np.isfinite(mean):
                    notes.append("no result yet")
                if not np.isfinite(pm):
                    notes.append("paper value not available offline")
                out.append({"task": task, "dataset": ds, "model": m, "ours": mean, "ours std": std,
                            "paper": pm, "paper std": ps, "difference": mean - pm,
                            "metric": metric, "source": source, "protocol": prot,
                            "n_trials": nt, "n_eval": n_eval, "note": "; ".join(notes)})
    return pd.DataFrame(out)


def _verdict(ok):
    if ok is None:
        return "no data"
    return "holds" if ok else "does not hold"


def part2_claims(node_rows=None, link_rows=None, feature_rows=None, close=2.0, gap=2.0,
                 chance=0.03, min_eval: int = 1):
    """The paper's qualitative claims, checked on our numbers (the scorecard's Part II rows).

    1. On Computers, Photo, CS and Physics the tuned MLP is close to the GCN: GCN - MLP <=
       ``close`` accuracy points on each.
    2. On Cora and CiteSeer the GCN is clearly better: GCN - MLP > ``gap`` points on each.
    3. On WS1000 the feature-only MLP is at chance (|ROC AUC - 0.5| <= ``chance``) and the GCN is
       above the MLP.
    4. On WS1000_gamma the MLP's ROC AUC rises with gamma, read within the noise of our
       estimates: from gamma = 0 (WS1000) to the largest gamma it gains more than twice the
       larger of the two standard deviations, and no step between consecutive gammas loses more
       than twice the larger standard deviation of the pair (a plateau counts as rising; a real
       drop does not). The Spearman correlation is reported as evidence.
    5. On Twitch-PTBR, Twitch-EN and Facebook the GCN is clearly above the MLP: GCN - MLP >
       ``gap`` ROC AUC points (x 100) on each.

    6. Feature study: on every studied dataset the GCN - MLP gap at the smallest feature subset
       is larger than at the full feature set (the MLP catches up as features are added). A
       dataset is judged once both models reach its full feature count
       (:data:`hpstrat_lite.tuning.FEATURE_COUNTS`; other datasets: their largest subset); a
       partial study is shown in ``evidence`` as "not judged" and stays in ``missing``. A point
       counts once ``min_eval`` evaluation seeds have landed (:func:`feature_study_table`).

    A claim without the numbers it needs reads "no data"; a claim is judged on the datasets that
    have numbers, which ``evidence`` lists, and ``missing`` names the ones it still lacks.
    ``node_rows``, ``link_rows``, ``feature_rows``: result rows, their files or :func:`summarize`
    outputs (defaults: ``results/part2_node.csv``, ``part2_link.csv``, ``part2_features.csv``).

    Returns
    -------
    pandas.DataFrame
        ``claim``, ``source`` (paper section / table), ``paper`` (what the paper reports, in words:
        its numbers could not be read on the offline machine, see :data:`PAPER_NODE`), ``evidence``
        (our numbers), ``missing`` (datasets or gammas without numbers yet), ``verdict``.
    """
    from scipy.stats import spearmanr

    node = _as_summary(node_rows, "node")
    link = _as_summary(link_rows, "link")

    def gaps(summary, datasets):
        out = {}
        for ds in datasets:
            mm = _pct(summary, ds, "mlp")[0]
            gm = _pct(summary, ds, "gcn")[0]
            if np.isfinite(mm) and np.isfinite(gm):
                out[ds] = (mm, gm, gm - mm)
        return out

    def text(g):
        return "; ".join(f"{d}: MLP {m:.1f}, GCN {c:.1f} (gap {x:+.1f})" for d, (m, c, x) in g.items())

    def absent(expected, have):
        return [d for d in expected if d not in have]

    rows = []
    close_sets = ("Computers", "Photo", "CS", "Physics")
    g1 = gaps(node, close_sets)
    rows.append({"claim": f"tuned MLP within {close:g} points of GCN on Computers, Photo, CS, "
                          f"Physics", "source": "Section 4.1, Tables 1-2",
                 "paper": "little benefit from the graph: the tuned MLP close to the GCN (abstract: on {} of {} "
                          "common datasets)".format(*PAPER["abstract_claim"]),
                 "evidence": text(g1), "missing": absent(close_sets, g1),
                 "verdict": _verdict(all(x <= close for *_, x in g1.values()) if g1 else None)})
    g2 = gaps(node, ("Cora", "CiteSeer"))
    rows.append({"claim": f"GCN above tuned MLP by more than {gap:g} points on Cora and CiteSeer",
                 "source": "Section 4.1, Tables 1-2", "paper": "a clear gap: the graph helps",
                 "evidence": text(g2), "missing": absent(("Cora", "CiteSeer"), g2),
                 "verdict": _verdict(all(x > gap for *_, x in g2.values()) if g2 else None)})
    g3 = gaps(link, ("WS1000",))
    ok3 = None
    if g3:
        mm, gm, _ = g3["WS1000"]
        ok3 = abs(mm - 50) <= 100 * chance and gm > mm
    rows.append({"claim": f"WS1000: MLP at chance (ROC AUC 0.5 +- {chance:g}), GCN above the MLP",
                 "source": "Section 5, Table 3", "paper": "MLP about 50 (random guessing), GCN above it",
                 "evidence": text(g3), "missing": absent(("WS1000",), g3), "verdict": _verdict(ok3)})
    wt = ws_gamma_table(link)
    mlp = wt[wt["model"] == "mlp"].sort_values("gamma")
    ok4, ev4 = None, ""
    if len(mlp) >= 2:
        m, sd = mlp["test_mean"].to_numpy(), mlp["test_std"].fillna(0).to_numpy()
        gain = m[-1] - m[0] > 2 * max(sd[0], sd[-1])
        no_drop = bool(np.all(np.diff(m) >= -2 * np.maximum(sd[1:], sd[:-1])))
        ok4 = bool(gain and no_drop)
        rho = float(spearmanr(mlp["gamma"], m).statistic) if len(mlp) >= 3 else np.nan
        ev4 = (", ".join(f"γ={g:g}: {100 * v:.1f}" for g, v in zip(mlp["gamma"], m))
               + f"; Spearman rho {rho:.2f}")
    have_gammas = {float(g) for g in mlp["gamma"]}  # 0 = WS1000
    rows.append({"claim": "WS1000_gamma: the MLP's ROC AUC rises with gamma (gain from gamma 0 "
                          "beyond 2 std, no drop beyond 2 std)",
                 "source": "Section 5, Figure 2", "paper": "the MLP's ROC AUC rises with gamma",
                 "evidence": ev4, "missing": [f"gamma {g:g}" for g in (0.0,) + tuple(WS_GAMMAS)
                                              if float(g) not in have_gammas],
                 "verdict": _verdict(ok4)})
    g5 = gaps(link, LINK_DATASETS)
    rows.append({"claim": f"GCN above MLP by more than {gap:g} ROC AUC points on Twitch-PTBR, "
                          f"Twitch-EN, Facebook", "source": "Section 6, Table 4",
                 "paper": "GCN far above the tuned MLP: benchmarks that need the graph",
                 "evidence": text(g5), "missing": absent(LINK_DATASETS, g5),
                 "verdict": _verdict(all(x > gap for *_, x in g5.values()) if g5 else None)})
    ft = feature_study_table(feature_rows, min_eval=min_eval)
    ev6, oks, studied = [], [], set()
    for ds, g in ft.groupby("dataset", sort=False):
        wide = g.pivot(index="num_features", columns="model", values="test_mean").dropna()
        if {"mlp", "gcn"} <= set(wide.columns) and len(wide) >= 2:
            d = 100 * (wide["gcn"] - wide["mlp"])
            gap_text = (f"gap {d.iloc[0]:+.1f} at {d.index[0]} features, {d.iloc[-1]:+.1f} at "
                        f"{d.index[-1]}")
            full = _full_feature_count(ds, d.index[-1])
            if d.index[-1] < full:  # a partial study: its last common point is not the full set
                ev6.append(f"{ds}: partial, both models up to {d.index[-1]} of {full} features "
                           f"({gap_text}; not judged)")
                continue
            oks.append(d.iloc[0] > d.iloc[-1])
            studied.add(ds)
            ev6.append(f"{ds}: {gap_text}")
    rows.append({"claim": "feature study: the GCN - MLP gap shrinks from the smallest feature "
                          "subset to the full features", "source": "Section 4.2, Figures 1 and 3",
                 "paper": "with few features the GCN leads; the MLP catches up as features are added",
                 "evidence": "; ".join(ev6), "missing": absent(tuple(FEATURE_STEPS), studied),
                 "verdict": _verdict(all(oks) if oks else None)})
    return pd.DataFrame(rows)


def ws_summary(gammas=(None,) + WS_GAMMAS, seed=0):
    """The WS1000 family at a glance: graph size, degree and how much a node's features tell about
    its BFS parent.

    For each gamma (``None`` = WS1000), :func:`hpstrat_lite.synthetic.make_ws1000` with ``seed``;
    ``parent_corr`` is the mean over non-root nodes of the Pearson correlation between ``x(v)``
    and ``x(parent(v))`` (0 for i.i.d. features; ``gamma / sqrt(1 + gamma^2)`` for a child of a
    root and larger deeper down), ``edge_cos`` the mean cosine similarity of the features of the
    two ends of an edge, ``nonedge_cos`` the same for as many random non-adjacent pairs.

    Returns
    -------
    pandas.DataFrame
        One row per gamma: ``dataset, gamma, nodes, edges, mean_degree, parent_corr, edge_cos,
        nonedge_cos``.
    """
    from .linkpred import sample_negative_pairs
    from .synthetic import make_ws1000, ws_features

    out = []
    for g in gammas:
        d = make_ws1000(g, seed=seed)
        n = int(d.num_nodes)
        ei = d.edge_index.numpy()
        graph_seed, feat_seed = np.random.SeedSequence(int(seed)).spawn(2)
        _, parent = ws_features(d.edge_index, n, dim=int(d.x.shape[1]), gamma=g, seed=feat_seed,
                                return_parents=True)
        x = d.x.numpy().astype(np.float64)
        xc = x - x.mean(1, keepdims=True)
        xn = xc / np.linalg.norm(xc, axis=1, keepdims=True)
        child = np.flatnonzero(parent >= 0)
        corr = float(np.mean(np.sum(xn[child] * xn[parent[child]], 1))) if child.size else 0.0
        once = ei[:, ei[0] < ei[1]]
        unit = x / np.linalg.norm(x, axis=1, keepdims=True)
        ecos = float(np.mean(np.sum(unit[once[0]] * unit[once[1]], 1)))
        keys = np.sort(once[0].astype(np.int64) * n + once[1])
        neg = sample_negative_pairs(keys, n, once.shape[1], np.random.default_rng(seed))
        ncos = float(np.mean(np.sum(unit[neg[0]] * unit[neg[1]], 1)))
        out.append({"dataset": d.name, "gamma": 0.0 if g is None else float(g), "nodes": n,
                    "edges": once.shape[1], "mean_degree": ei.shape[1] / n,
                    "parent_corr": corr, "edge_cos": ecos, "nonedge_cos": ncos})
    return pd.DataFrame(out)


# ----------------------------------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------------------------------

MODEL_COLORS = {"mlp": "#0072B2", "gcn": "#D55E00", "random": "#7f7f7f"}
MODEL_LABELS = {"mlp": "tuned MLP (features only)", "gcn": "tuned GCN", "random": "random scores"}


def plot_mlp_vs_gcn(rows=None, datasets=NODE_DATASETS, task="node"):
    """Tuned MLP vs GCN per dataset, bars with one-std error bars (chapters 6 and 9).

    ``rows``: result rows, their file or a :func:`summarize` output; ``task`` ``"node"`` (test
    accuracy, %) or ``"link"`` (test ROC AUC x 100). Datasets without both numbers are left out.
    """
    import matplotlib.pyplot as plt

    if task not in ("node", "link"):
        raise ValueError(f"task must be one of ('node', 'link'), got {task!r}")
    summary = _as_summary(rows, task)
    names = [d for d in datasets if all(np.isfinite(_pct(summary, d, m)[0]) for m in ("mlp", "gcn"))]
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    label = "test accuracy (%)" if task == "node" else "test ROC AUC (x 100)"
    ax.set_ylabel(label)
    ax.set_title("Tuned MLP vs GCN, " + ("node classification" if task == "node"
                                        else "link prediction"))
    if not names:
        ax.text(0.5, 0.5, "no results yet", ha="center", va="center", transform=ax.transAxes)
        return fig
    xs = np.arange(len(names))
    for j, m in enumerate(("mlp", "gcn")):
        vals = [_pct(summary, d, m) for d in names]
        ax.bar(xs + (j - 0.5) * 0.38, [v[0] for v in vals], width=0.38, yerr=[v[1] for v in vals],
               capsize=3, color=MODEL_COLORS[m], label=MODEL_LABELS[m])
    lo = min(_pct(summary, d, m)[0] for d in names for m in ("mlp", "gcn"))
    ax.set_ylim(max(0, 10 * np.floor(lo / 10) - 10), 100)
    ax.set_xticks(xs, names)
    ax.legend(loc="lower right")
    return fig


def plot_ws_gamma(table, ax=None, random_level=0.5):
    """Figure 2 analogue: test ROC AUC against gamma, MLP and GCN, one-std error bars.

    ``table`` is :func:`ws_gamma_table`'s output (gamma 0 is WS1000's i.i.d. features).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
    else:
        fig = ax.figure
    for m in ("mlp", "gcn"):
        t = table[table["model"] == m].sort_values("gamma")
        if t.empty:
            continue
        ax.errorbar(t["gamma"], t["test_mean"], yerr=t["test_std"], marker="o", capsize=3,
                    color=MODEL_COLORS[m], label=f"{MODEL_LABELS[m]} ({int(t['n_trials'].max())} "
                    f"trials, {int(t['n_eval'].min())} seeds)")
    ax.axhline(random_level, color=MODEL_COLORS["random"], linestyle="--", linewidth=1,
               label="random guess (0.5)")
    ax.set_xlabel(r"$\gamma$ (weight of the BFS parent's features; 0 = WS1000, i.i.d.)")
    ax.set_ylabel("test ROC AUC")
    ax.set_title("Link prediction on WS1000 and WS1000$_\\gamma$")
    ax.legend(loc="best")
    return fig


def plot_feature_study(table, datasets=None, ncols=2):
    """Figures 1 / 3 analogue: accuracy against the number of features, one panel per dataset.

    Lines are the mean test accuracy of the tuned MLP and GCN, bands one standard deviation over
    the evaluation seeds. ``table`` is :func:`feature_study_table`'s output.
    """
    import matplotlib.pyplot as plt

    names = list(datasets) if datasets is not None else list(dict.fromkeys(table["dataset"]))
    if not names:
        raise ValueError("table has no feature-study rows to plot (no dataset with >= 2 subsets)")
    ncols = min(ncols, len(names))
    nrows = int(np.ceil(len(names) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.5, 3.0 * nrows), squeeze=False)
    for ax, ds in zip(axes.ravel(), names):
        for m in ("mlp", "gcn"):
            t = table[(table["dataset"] == ds) & (table["model"] == m)].sort_values("num_features")
            if t.empty:
                continue
            x, y, s = t["num_features"], 100 * t["test_mean"], 100 * t["test_std"]
            ax.plot(x, y, marker="o", markersize=3, color=MODEL_COLORS[m],
                    label=f"{m.upper()} ({int(t['n_trials'].iloc[0])} trials)")
            ax.fill_between(x, y - s, y + s, color=MODEL_COLORS[m], alpha=0.2)
        ax.set_title(ds)
        ax.set_xlabel("number of features (first columns)")
        ax.set_ylabel("test accuracy (%)")
        ax.legend(loc="lower right")
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    return fig


# ----------------------------------------------------------------------------------------------
# Command line: the background runners
# ----------------------------------------------------------------------------------------------

def _print_progress(results_dir, n_eval):
    """``part2 progress``: the node and link studies (:func:`study_progress`) and the feature study
    (:func:`feature_study_coverage`), then the commands that finish what is left."""
    commands = []
    rows = {task: read_rows(results_file(task, results_dir)) for task in ("node", "link", "features")}
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        for task in ("node", "link"):
            table = study_progress(task, rows[task], n_eval=n_eval)
            done = int((table["status"] == "done").sum())
            print(f"{task}: {done} of {len(table)} studies done ({results_file(task, results_dir)})")
            print(table.drop(columns="command").to_string(index=False), end="\n\n")
            commands += [c for c, st in zip(table["command"], table["status"]) if c and st != "raw files absent"]
        cov = feature_study_coverage(rows["features"], rows["node"], min_eval=n_eval)
        print(f"feature study ({results_file('features', results_dir)})")
        print(cov[["dataset", "status", "increment", "points", "trials", "projected (h)"]].round(1)
              .to_string(index=False), end="\n\n")
    present = set(available_datasets())
    todo = cov["status"].str.startswith("partial") | ((cov["status"] == "not run") & cov["dataset"].isin(present))
    for ds, hours in cov.loc[todo, ["dataset", "projected (h)"]].itertuples(index=False):
        # what is left of it (or all of it), with its estimate when there is one
        estimate = f"  # about {hours:.1f} h left here" if pd.notna(hours) else ""
        commands.append(f"python -m hpstrat_lite.part2 features --datasets {ds}{estimate}")
    print("to finish (each resumes where it stopped):" if commands else "nothing left to run.")
    for c in commands:
        print(" ", c)
    return 0


def main(argv=None):
    """``python -m hpstrat_lite.part2 {node,link,features} --datasets ... [--n-trials N]``: tune,
    evaluate and append rows to ``results/part2_<task>.csv``; a rerun of the same command resumes.

    Returns the exit status: 0, or 2 after printing ``error: ...`` for a bad argument (unknown
    dataset or model, malformed ``--steps``), before any training starts.
    """
    p = argparse.ArgumentParser(
        prog="python -m hpstrat_lite.part2",
        description="Part II runs: tune MLP and GCN with Optuna, evaluate the best configuration and\n"
                    "append one row per trial and per evaluation run to results/part2_<task>.csv;\n"
                    "the same command again resumes where a stopped run ended.",
        epilog="examples:\n"
               "  python -m hpstrat_lite.part2 node --datasets Cora CiteSeer\n"
               "  python -m hpstrat_lite.part2 link --datasets WS1000 WS1000_0.4 --n-trials 12\n"
               "  python -m hpstrat_lite.part2 features --datasets Cora --steps Cora=400\n"
               "  python -m hpstrat_lite.part2 progress",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("node", "link", "features", "progress"),
                   help="node classification (chapter 6), link prediction (chapters 8-9), the "
                        "feature-subset study (chapter 7), or progress: how far the default studies are "
                        "and the commands that finish them")
    p.add_argument("--datasets", nargs="+", default=None,
                   help=f"node/features: e.g. {' '.join(NODE_DATASETS[:4])}...; link: WS1000, "
                        f"WS1000_<gamma>, {', '.join(LINK_DATASETS)} (default: all of the task's)")
    p.add_argument("--models", nargs="+", default=["mlp", "gcn"], help="mlp and/or gcn (default both)")
    p.add_argument("--n-trials", type=int, default=None,
                   help="Optuna trial budget (default: per dataset, part2.NODE_BUDGETS / LINK_BUDGETS; "
                        f"features: {FEATURE_BUDGET})")
    p.add_argument("--n-eval", type=int, default=5, help="evaluation seeds of the best configuration (default 5)")
    p.add_argument("--eval-batch", type=int, default=None,
                   help="node, features: evaluation seeds trained together, their rows written when the batch ends "
                        "(default all; 1 lands each seed's runs as they finish, for large graphs)")
    p.add_argument("--protocol", default="hpstrat", choices=("hpstrat", "random"),
                   help="node splits: HpStrat k=5 rounds (default) or random 60/20/20")
    p.add_argument("--max-epochs", type=int, default=None,
                   help=f"epoch cap (default: node {NODE_MAX_EPOCHS}, link per dataset)")
    p.add_argument("--results-dir", default=None, help="folder of the part2_*.csv files (default results/)")
    p.add_argument("--steps", nargs="+", default=None, metavar="DATASET=STEP",
                   help="feature-study increments, e.g. Cora=400 (default: the paper's)")
    p.add_argument("--precision", default="float32", choices=PRECISIONS,
                   help="node, features: precision of the dense matrix products (default float32; bfloat16 "
                        "is mixed-precision training, faster on CPUs with AMX; written in each row)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    p.add_argument("--device", default="auto", help="auto (CUDA when available), cpu or cuda")
    a = p.parse_args(argv)
    name = f"{p.prog} {a.what}"
    try:
        datasets = _check_datasets(a.datasets, labelled=a.what in ("node", "features")) if a.datasets else None
        _check_models(a.models, ("mlp", "gcn"))
        if a.what == "link" and a.precision != "float32":
            raise ValueError("--precision applies to node and features; link prediction trains in float32")
        if a.eval_batch is not None and a.eval_batch < 1:
            raise ValueError(f"--eval-batch must be >= 1, got {a.eval_batch}")
        steps = {}
        for item in a.steps or ():
            ds, _, step = item.partition("=")
            if not step.isdigit() or int(step) < 1:
                raise ValueError(f"--steps entries must look like DATASET=STEP with STEP >= 1, got {item!r}")
            steps[ds] = int(step)
    except ValueError as err:
        print(f"{name}: error: {err}", file=sys.stderr)
        return 2
    if a.what == "progress":
        return _print_progress(a.results_dir, a.n_eval)
    import torch

    torch.set_num_threads(a.threads)

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    handler = logging.StreamHandler(sys.stdout)  # one line per trial (hpstrat_lite.tuning.log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    tuning_log.addHandler(handler)
    tuning_log.setLevel(logging.INFO)
    try:
        if a.what == "node":
            run_node_benchmarks(datasets or NODE_DATASETS, a.models, a.n_trials, n_eval=a.n_eval,
                                protocol=a.protocol, max_epochs=a.max_epochs or NODE_MAX_EPOCHS,
                                results_dir=a.results_dir, device=a.device, eval_batch=a.eval_batch,
                                precision=a.precision, log=log)
        elif a.what == "link":
            run_link_benchmarks(datasets or WS_DATASETS + LINK_DATASETS, a.models, a.n_trials,
                                n_eval=a.n_eval, max_epochs=a.max_epochs, results_dir=a.results_dir,
                                device=a.device, log=log)
        else:
            run_feature_studies(datasets or ("Cora", "CiteSeer"), a.models, a.n_trials or FEATURE_BUDGET,
                                steps=steps, n_eval=a.n_eval, protocol=a.protocol,
                                max_epochs=a.max_epochs or NODE_MAX_EPOCHS, results_dir=a.results_dir,
                                device=a.device, eval_batch=a.eval_batch, precision=a.precision, log=log)
    except ValueError as err:
        print(f"{name}: error: {err}", file=sys.stderr)
        return 2
    finally:
        tuning_log.removeHandler(handler)
    log("done")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
