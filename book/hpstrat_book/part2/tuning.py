"""Bayesian hyperparameter search (Optuna TPE) for node classification and link prediction.

Part II of the book ("Revisiting the Necessity of Graph Learning and Common Graph Benchmarks",
Katsman, Lou and Gilbert, 2024, Section 3) argues that a *well-tuned* feature-only MLP comes close
to a GCN on most common node-classification benchmarks. This module does the tuning, the same way
for every model:

1. Every trial draws a configuration from the search space with Optuna's TPE sampler (seeded,
   offline), trains it and is scored on **validation** accuracy (link prediction: validation
   ROC AUC) only. The test numbers of a trial are recorded but never read by the search. The first
   :data:`N_STARTUP_TRIALS` (10) draws are random; TPE models the scores from the next one on.
2. The best trial (highest validation score; the first one on ties) is re-trained and evaluated on
   test over ``n_eval = 5`` trials (seeds ``0..4``): mean and standard deviation across them, as
   the paper reports. For node classification, evaluation seed ``seed`` is the very training call of
   the tuning trial (same masks, same run seeds), so when the same process trained that trial its
   runs are taken as they are instead of being trained a second time (one evaluation seed of five
   saved per study; the engine is deterministic, so the rows are the ones a retraining would write).

Split protocols for node classification (``split``):

- ``"hpstrat"`` (default): the HpStrat k-fold rounds of Part I (k = 5, B = 10 bins): round i tests
  on fold i, validates on fold (i + 1) mod k, trains on the rest. A tuning trial trains all k rounds
  (one batched call) on the folds of seed ``seed`` and is scored by the mean validation accuracy
  over the rounds; evaluation trial s uses the folds of seed s, and its test accuracy is the mean
  over its k rounds.
- ``"random"``: random 60/20/20 train/validation/test splits; a tuning trial uses the split of
  seed ``seed``, evaluation trial s the split of seed s.
- ``"per_class"``: 20 training and 30 validation nodes per class, every other node tests
  (:func:`per_class_split_masks`): the split of Shchur et al. (2018), from which the paper copies
  the GNN numbers of its Table 1 (Amazon, Coauthor). Seeds as for ``"random"``.
- ``"planetoid"``: the public Planetoid split (Yang et al., 2016; Cora 140 / 500 / 1000 nodes,
  CiteSeer 120 / 500 / 1000), the split of the GCN numbers the paper copies into its Table 2. The
  masks are fixed (``data.train_mask``, ``data.val_mask``, ``data.test_mask``, attached by
  :func:`hpstrat_book.part2.protocols.with_public_split`); seeds change the initial weights only.

The paper states neither split for its tuned MLP (Tables 1 and 2 say "5 trials").

The sampler seed (:attr:`Search.sampler_seed`) is separate from the split seed: by default it equals
``seed`` (the committed HpStrat studies), and :func:`study_sampler_seed` gives every (dataset,
model) a seed of its own, so an MLP study and a GCN study no longer draw the same configurations.

Search space (:data:`SEARCH_SPACE`; :attr:`Search.space` narrows or replaces it):

================  ==========================================  =========================
name              values                                      kind
================  ==========================================  =========================
lr                [1e-3, 1e-1]                                log-uniform
weight_decay      [1e-6, 1e-2]                                log-uniform
hidden            {32, 64, 128, 256}                          categorical
num_layers        {1, 2, 3}                                   categorical
dropout           [0, 0.8]                                    uniform
feature_norm      {"none", "row", "standard"}                 categorical
patience          {50, 100, 200}                              categorical
================  ==========================================  =========================

The budget, the evaluation seeds, the space, the storage and the sampler seed of a search are one value,
:class:`Search`. A trial's training protocol is the ``protocol`` argument (default :data:`TUNING_PROTOCOL`)
with the drawn values in place: ``max_epochs`` (default 1000), ``k`` and ``n_bins`` are fixed, not searched.
For link prediction ``hidden`` is both the hidden and the embedding width.

Long runs write one row per trial and per evaluation run to a CSV (``results=`` path; the runners
:func:`run_tuning` uses ``results/part2_node.csv`` and ``results/part2_link.csv``,
:func:`run_feature_study` ``results/part2_features.csv``), with the code version and the parameters; a restarted run skips what
is already there (finished trials are replayed to the sampler without training, finished
evaluations are not re-trained).

The feature-subset study (paper Section 4 and Appendix A, Figures 1 and 3) uses :func:`feature_subsets` (nested
prefixes of the feature columns, :data:`FEATURE_STEPS` gives the paper's increments) and
:func:`subset_features`.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hpstrat_lite._extras import require
from hpstrat_lite.core._validate import check_choice, check_int

optuna = require("optuna", extra="studies")
torch = require("torch", extra="pyg")
from .linkpred import EdgeSplit, edge_split, run_link_prediction
from hpstrat_lite._host import host_cpu
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution, Protocol, check_protocol_value
from hpstrat_lite.rows import append_rows, checkpoint_dir, code_version, model_name, read_rows
from .search import (N_STARTUP_TRIALS, SEARCH_SPACE, Search, check_search, check_space, run_trial,  # noqa: F401
                     space_distributions, space_id, suggest_config)
from .studies import study_name, tune_shared
from .plan import (FEATURE_COUNTS, FEATURE_STEPS, RESULT_COLUMNS, feature_subsets,  # noqa: F401
                   with_column_defaults)
from hpstrat_lite.engine.models import check_precision
from hpstrat_lite.engine.train import train_runs
from .protocols import (PER_CLASS, PROTOCOLS, per_class_split_masks, protocol_masks,  # noqa: F401 (re-exported)
                        random_split_masks, study_sampler_seed)

#: Progress of the searches (one line per trial and per evaluation); ``python -m hpstrat_book.part2 tune``
#: prints it with a time stamp.
log = logging.getLogger(__name__)

__all__ = [
    "SEARCH_SPACE",
    "N_STARTUP_TRIALS",
    "Search",
    "TUNING_PROTOCOL",
    "PROTOCOLS",
    "FEATURE_STEPS",
    "FEATURE_COUNTS",
    "suggest_config",
    "space_distributions",
    "random_split_masks",
    "per_class_split_masks",
    "study_sampler_seed",
    "protocol_masks",
    "tune",
    "tune_node_classifier",
    "tune_link_predictor",
    "feature_subsets",
    "subset_features",
    "feature_study",
]

NODE_MODELS = ("MLP", "GCN")
LINK_ENCODERS = ("MLP", "GCN")

# ----------------------------------------------------------------------------------------------
# The search loop
# ----------------------------------------------------------------------------------------------

def tune(objective, n_trials, *, seed=0, space=None, done=(), on_trial=None, n_startup_trials=N_STARTUP_TRIALS,
         storage=None, study_name=None):
    """Maximise ``objective(config)["val"]`` over ``space`` with a seeded TPE sampler.

    Parameters
    ----------
    objective : callable
        ``objective(config) -> dict`` with a float ``"val"`` (the validation score, the only value
        the search sees) and any other entries (kept as the trial's user attributes).
    n_trials : int
        Total budget of trials, including those in ``done``.
    seed : int
        Seed of the TPE sampler.
    space : dict, optional
        Search space (default :data:`SEARCH_SPACE`).
    done : sequence of (config, result)
        Finished trials (e.g. read back from a results file), in their order; not re-run. The
        sampler replays its draws for them, so a resumed search proposes the same next
        configurations as an uninterrupted one (when a replayed draw differs from the recorded
        configuration, the recorded one is added as is).
    on_trial : callable, optional
        ``on_trial(number, config, result)`` after every new trial (e.g. to write a row);
        ``number`` counts the completed trials before it (0-based).
    n_startup_trials : int
        Random trials before TPE starts modelling (:data:`N_STARTUP_TRIALS`, Optuna's default 10): with
        ``n_trials <= n_startup_trials`` the search is a seeded random search.
    storage : str, optional
        An Optuna RDB storage (:func:`hpstrat_book.part2.studies.storage_url`: ``sqlite:///...``, ``postgresql://...``,
        ``mysql://...`` or a file path) holding the study named ``study_name``. Every process given the
        same storage and name works on the same study, until it holds ``n_trials`` trials in total
        (:func:`hpstrat_book.part2.studies.tune_shared`); ``done`` then only fills a study the storage does not hold yet. Default:
        the study lives in memory, and ``done`` is replayed into it.
    study_name : str
        Name of the stored study (required with ``storage``; see :func:`hpstrat_book.part2.studies.study_name`).

    Returns
    -------
    optuna.study.Study
        ``study.best_trial.params`` is the configuration with the highest validation score
        (completed trials only; replays that did not match are marked failed).
    """
    check_int(n_trials, "n_trials")
    if storage is not None:
        return tune_shared(objective, n_trials, storage, study_name, seed=seed, space=space, done=done,
                           on_trial=on_trial, n_startup_trials=n_startup_trials)[0]
    space = check_space(space)
    dists = space_distributions(space)
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=n_startup_trials)
    old_level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        study = optuna.create_study(direction="maximize", sampler=sampler)
        for cfg, res in done:
            # replay: the sampler draws again (same seed, same history, same draw), so a resumed
            # search continues exactly as an uninterrupted one; the recorded score is told back
            trial = study.ask()
            drawn = suggest_config(trial, space=space)
            attrs = {k: v for k, v in res.items() if k != "val"}
            if _same_config(drawn, cfg):
                for key, value in attrs.items():
                    trial.set_user_attr(key, value)
                study.tell(trial, float(res["val"]))
            else:  # history differs (e.g. another device's float noise): keep the recorded trial
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                study.add_trial(optuna.trial.create_trial(
                    params=dict(cfg), distributions=dists, value=float(res["val"]),
                    user_attrs=attrs))

        def _objective(trial):  # the trials still to run complete one at a time, in this process
            return run_trial(trial, objective, space, on_trial, len(_complete(study)))

        remaining = n_trials - len(done)
        if remaining > 0:
            study.optimize(_objective, n_trials=remaining)
    finally:
        optuna.logging.set_verbosity(old_level)
    return study


def _same_config(a, b):
    if set(a) != set(b):
        return False
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, float) or isinstance(y, float):
            if not np.isclose(float(x), float(y), rtol=1e-9, atol=0):
                return False
        elif x != y:
            return False
    return True


def _complete(study):
    return [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]


# ----------------------------------------------------------------------------------------------
# Results rows (resumable)
# ----------------------------------------------------------------------------------------------

def _params_json(cfg):
    return json.dumps(cfg, sort_keys=True)


def _existing(results, key):
    if results is None:
        return pd.DataFrame(columns=RESULT_COLUMNS)
    df = read_rows(results)
    if df.empty:
        return pd.DataFrame(columns=RESULT_COLUMNS)
    df = with_column_defaults(df)
    sel = np.ones(len(df), dtype=bool)
    for col, val in key.items():
        sel &= df[col].astype(str).to_numpy() == str(val)
    return df[sel]


def _num(value):
    return None if value is None or pd.isna(value) else float(value)


def _write(results, rows):
    if results is not None and rows:
        append_rows(results, [{c: r.get(c) for c in RESULT_COLUMNS} for r in rows])


def _run_study(objective, key, n_trials, seed, space, results, eval_fn, n_eval, metric, eval_batch=None,
               storage=None, settings=None, sampler_seed=None):
    """Search (resuming from ``results``), then evaluate the best config on ``n_eval`` seeds,
    ``eval_batch`` seeds at a time (all at once when None); each batch's rows are written when it ends.
    ``sampler_seed`` (default ``seed``) seeds TPE and is part of the study's key.
    With ``storage`` the search is the stored study :func:`hpstrat_book.part2.studies.study_name`
    names (``key`` and ``settings``), shared with other processes
    (:func:`hpstrat_book.part2.studies.tune_shared`), and only the process it designates evaluates."""
    space = check_space(space)
    sampler_seed = seed if sampler_seed is None else check_int(sampler_seed, "sampler_seed", 0)
    key = {**key, "tune_seed": seed, "space_id": space_id(space), "sampler_seed": sampler_seed}
    old = _existing(results, key)
    done_rows = old[old["phase"] == "trial"].sort_values("trial")
    done = [(json.loads(r.params), {"val": float(r.val), "test": _num(r.test),
                                    "best_epoch": _num(r.best_epoch), "seconds": _num(r.seconds)})
            for r in done_rows.itertuples()]
    done = done[:n_trials]
    version = code_version()

    name = f"{key['dataset']} {key['model']}, {key['num_features']} features"

    def on_trial(number, cfg, res):
        log.info("%s: trial %d/%d, validation %s %.4f (%.0f s)", name, number + 1, n_trials, metric,
                 res["val"], res.get("seconds") or 0.0)
        _write(results, [{**key, "phase": "trial", "n_trials": n_trials, "trial": number,
                          "params": _params_json(cfg), "metric": metric, "val": res["val"],
                          "test": res.get("test"), "best_epoch": res.get("best_epoch"),
                          "seconds": res.get("seconds"), "host": host_cpu(), "code_version": version}])

    evaluate = True
    if storage is None:
        study = tune(objective, n_trials, seed=sampler_seed, space=space, done=done, on_trial=on_trial)
    else:
        study, evaluate = tune_shared(objective, n_trials, storage, study_name(key, **(settings or {})),
                                      seed=sampler_seed, space=space, done=done, on_trial=on_trial)
        if not evaluate:
            log.info("%s: search done here; the process that ran its last trial evaluates it", name)
    best = dict(study.best_trial.params)
    best_json = _params_json(best)
    evals = old[(old["phase"] == "eval") & (old["params"].astype(str) == best_json)]
    have = set(evals["eval_seed"].astype(int)) if len(evals) else set()
    missing = [s for s in range(n_eval) if s not in have] if evaluate else []
    step = len(missing) if eval_batch is None else eval_batch
    for start in range(0, len(missing), max(step, 1)):
        seeds = missing[start:start + step]
        log.info("%s: best trial (validation %.4f) on evaluation seed(s) %s", name, study.best_value,
                 ", ".join(map(str, seeds)))
        rows = [{**key, "phase": "eval", "n_trials": n_trials, "params": best_json,
                 "metric": metric, "host": host_cpu(), "code_version": version, **r}
                for r in eval_fn(best, seeds)]
        _write(results, rows)
        new = pd.DataFrame(rows)
        evals = new if evals.empty else pd.concat([evals, new], ignore_index=True)
    evals = evals[evals["eval_seed"].astype(int) < n_eval]
    per_seed = evals.groupby("eval_seed")["test"].mean()
    trials = pd.DataFrame([
        {"trial": t.user_attrs.get("rank", t.number), "val": t.value, **t.params,
         **{k: v for k, v in t.user_attrs.items() if k in ("test", "best_epoch", "seconds")}}
        for t in _complete(study)
    ])
    return {
        "best_params": best,
        "best_val": float(study.best_value),
        "test_mean": float(per_seed.mean()),
        "test_std": float(per_seed.std(ddof=1)),
        "test_per_seed": per_seed.to_numpy(dtype=float),
        "n_trials": n_trials,
        "sampler_seed": sampler_seed,
        "trials": trials,
        "eval": evals.reset_index(drop=True),
        "metric": metric,
    }


# ----------------------------------------------------------------------------------------------
# Node classification
# ----------------------------------------------------------------------------------------------

#: The protocol a tuned study starts from: HpStrat's (Section 5 of the HpStrat paper) with k = 5 folds, the
#: book's choice for Part II (the paper states no split for its tuned MLP; Tables 1-2 report 5 trials). Every
#: trial replaces the fields it draws (:data:`TRIAL_FIELDS` in the search space) by its draw; ``max_epochs``,
#: ``k``, ``n_bins`` and the fields a narrowed space does not draw are this protocol's.
TUNING_PROTOCOL = PAPER_PROTOCOL.replace(k=5)
#: The :class:`~hpstrat_lite.protocol.Protocol` fields a search-space draw sets (the names of :data:`SEARCH_SPACE`).
TRIAL_FIELDS = ("lr", "weight_decay", "hidden", "num_layers", "dropout", "feature_norm", "patience")
#: Trials of one study when ``search.n_trials`` is None.
DEFAULT_TRIALS = 50


def _trial_protocol(cfg, base: Protocol) -> Protocol:
    """The training protocol of one trial: ``base`` with the values ``cfg`` (a search-space draw) sets;
    ``feature_norm="none"`` is no normalisation."""
    casts = {"lr": float, "weight_decay": float, "hidden": int, "num_layers": int, "dropout": float,
             "patience": int, "feature_norm": lambda v: None if v == "none" else v}
    return base.replace(**{name: casts[name](cfg[name]) for name in TRIAL_FIELDS if name in cfg})


def _study_settings(protocol: Protocol, space, names) -> dict:
    """What names a stored study beside its row key: the ``names`` fields of ``protocol`` (``max_epochs``...),
    and each :data:`TRIAL_FIELDS` field the space does not draw whose value is not :data:`TUNING_PROTOCOL`'s
    (the default protocol adds nothing, so the names of the committed studies stay as they are)."""
    fixed = {f: getattr(protocol, f) for f in TRIAL_FIELDS
             if f not in space and getattr(protocol, f) != getattr(TUNING_PROTOCOL, f)}
    return {**{f: getattr(protocol, f) for f in names}, **fixed}


def _study_trials(search: Search) -> int:
    n = DEFAULT_TRIALS if search.n_trials is None else search.n_trials
    return check_int(n, "search.n_trials", hint=" (one study; a dict per dataset is for the runners)")


def tune_node_classifier(data, *, model: str = "MLP", split: str = "hpstrat", search: Search = Search(),
                         protocol: Protocol = TUNING_PROTOCOL, seed: int = 0, results: str | Path | None = None,
                         dataset: str | None = None, execution: Execution | None = None) -> dict:
    """Tune an MLP or a GCN for node classification on validation accuracy; test the best.

    Parameters
    ----------
    data : torch_geometric.data.Data
        Graph with ``x`` (dense or sparse CSR), ``edge_index`` and ``y``.
    model : {"MLP", "GCN"}
        Feature-only MLP or GCN (the batched engine :func:`hpstrat_lite.engine.train.train_runs`), any case.
    split : {"hpstrat", "random", "per_class", "planetoid"}
        Split protocol (see the module docstring); written in the rows' ``protocol`` column.
    search : Search
        Trial budget (``n_trials``, default 50), evaluation seeds of the best configuration (``n_eval``: seeds
        ``0..n_eval-1``), search space (default :data:`SEARCH_SPACE`), Optuna ``storage`` and TPE
        ``sampler_seed`` (default ``seed``; :func:`study_sampler_seed` gives one per dataset and model; written
        in the rows and part of the study's key). With a ``storage`` the search is kept in an Optuna RDB
        storage shared by every process given the same one
        (:func:`hpstrat_book.part2.studies.tune_shared`), the study named by
        :func:`hpstrat_book.part2.studies.study_name` from the task, dataset, model, split, k, features,
        precision, seed, space, ``max_epochs`` and ``n_bins``; without one it lives in memory and resumes
        from ``results``.
    protocol : Protocol
        The protocol every trial starts from (default :data:`TUNING_PROTOCOL`: k = 5, at most 1000 epochs,
        B = 10 bins): a trial replaces the fields its configuration draws; ``k`` folds and ``n_bins``
        homophily bins make the HpStrat folds.
    seed : int
        Seed of the tuning folds / split and of the tuning runs' weights.
    results : str or os.PathLike, optional
        CSV file of result rows (appended atomically; a rerun resumes from it). The training batches
        of the trials and of the evaluation also save checkpoints beside it
        (:func:`hpstrat_lite.rows.checkpoint_dir`, unless ``execution.checkpoint`` names a folder), so a killed run continues a
        long batch where it stopped. Evaluation seed ``seed`` reuses the selected trial's own runs when that
        trial was trained by this call; otherwise it is trained in a call of its own, so the other seeds'
        batches keep their checkpoint names when a killed evaluation is resumed by a new process.
    dataset : str, optional
        Name written in the rows (default ``data.name``).
    execution : Execution, optional
        How the runs train (:class:`hpstrat_lite.protocol.Execution`, passed to
        :func:`hpstrat_lite.engine.train.train_runs`): ``device``, ``num_threads``, ``precision`` (written in
        the rows and part of the study's key, so float32 and bfloat16 studies resume separately) and
        ``eval_batch`` (evaluation seeds trained together in one batch, whose rows are written when it ends;
        default all ``n_eval`` at once, the fastest; on a large graph ``1`` lands each seed's ``k`` runs as
        soon as they finish, so a long evaluation can be stopped and resumed).

    Returns
    -------
    dict
        ``best_params``, ``best_val`` (mean validation accuracy of the best trial), ``test_mean``
        and ``test_std`` (over the ``n_eval`` evaluation trials; each trial's accuracy is its
        mean over rounds), ``test_per_seed``, ``protocol`` (the split, as in the rows), ``k``, ``n_trials``,
        ``sampler_seed``, ``precision``, ``trials`` (a DataFrame, one row per trial) and ``eval`` (one row
        per evaluation run).

    Examples
    --------
    >>> from hpstrat_lite import load_dataset
    >>> out = tune_node_classifier(load_dataset("Cora"), model="GCN", search=Search(n_trials=10, n_eval=3),
    ...                            protocol=TUNING_PROTOCOL.replace(max_epochs=200),
    ...                            execution=Execution(device="cpu", eval_batch=1))  # doctest: +SKIP
    """
    model = check_choice(model_name(model), "model", NODE_MODELS)  # "GCN" or "gcn": rows say "GCN"
    check_choice(split, "split", PROTOCOLS)
    search = check_search(search)
    n_trials = _study_trials(search)
    protocol, execution = check_protocol_value(protocol, execution=execution)
    eval_batch = check_int(execution.eval_batch, "execution.eval_batch", allow_none=True)
    precision = check_precision(execution.precision)
    if getattr(data, "y", None) is None:
        raise ValueError("data has no labels y; node classification needs them")
    k, n_bins = protocol.k, protocol.n_bins
    tr, va, te, _, trial_round = protocol_masks(data, protocol=split, seeds=[seed], k=k, n_bins=n_bins)
    if execution.checkpoint is None:
        execution = dataclasses.replace(execution, checkpoint=checkpoint_dir(results))
    trained = {}  # params JSON -> (rows, seconds per run) of the trials this call trained

    def eval_rows(eval_seed, rounds, runs, sec):
        return [{"eval_seed": int(eval_seed), "round": int(r), "val": run["val_acc"], "test": run["test_acc"],
                 "best_epoch": run["best_epoch"], "seconds": sec} for r, run in zip(rounds, runs)]

    def objective(cfg):
        t0 = time.perf_counter()
        runs = train_runs(data, model, tr, va, te, [seed] * tr.shape[1], protocol=_trial_protocol(cfg, protocol),
                          execution=execution)
        seconds = time.perf_counter() - t0
        # evaluation seed `seed` is this very call (same masks and run seeds): kept for eval_fn
        trained[_params_json(cfg)] = eval_rows(seed, trial_round, runs, seconds / len(runs))
        return {"val": float(np.mean([r["val_acc"] for r in runs])),
                "test": float(np.mean([r["test_acc"] for r in runs])),
                "best_epoch": float(np.mean([r["best_epoch"] for r in runs])),
                "seconds": seconds}

    def eval_fn(cfg, seeds):
        seeds = [int(s) for s in seeds]
        reused = trained.get(_params_json(cfg), []) if seed in seeds else []
        fresh = [s for s in seeds if not (reused and s == seed)]
        rows = {seed: reused} if reused else {}
        # The tuning seed, when it must be trained (its trial was read back from the results file, not
        # trained in this process), is a call of its own: the other seeds then form the same batches,
        # and so the same checkpoint names, whether or not a killed evaluation is resumed by a new process.
        groups = [[seed] if seed in fresh else [], [s for s in fresh if s != seed]]
        for group in [g for g in groups if g]:
            etr, eva, ete, run_seed, run_round = protocol_masks(data, protocol=split, seeds=group, k=k,
                                                                n_bins=n_bins)
            t0 = time.perf_counter()
            runs = train_runs(data, model, etr, eva, ete, [int(s) for s in run_seed],
                              protocol=_trial_protocol(cfg, protocol), execution=execution)
            sec = (time.perf_counter() - t0) / len(runs)
            for s in group:
                pick = np.flatnonzero(np.asarray(run_seed) == s)
                rows[s] = eval_rows(s, np.asarray(run_round)[pick], [runs[i] for i in pick], sec)
        return [row for s in seeds for row in rows[s]]

    key = {"task": "node", "dataset": dataset or getattr(data, "name", "unknown"),
           "model": model, "protocol": split, "k": k if split == "hpstrat" else 1,
           "num_features": int(data.x.shape[1]), "precision": precision}
    space = check_space(search.space)
    out = _run_study(objective, key, n_trials, seed, space, results, eval_fn, search.n_eval, "accuracy",
                     eval_batch, storage=search.storage,
                     settings=_study_settings(protocol, space, ("max_epochs", "n_bins")),
                     sampler_seed=search.sampler_seed)
    out.update(protocol=split, k=key["k"], model=model, precision=precision)
    return out


# ----------------------------------------------------------------------------------------------
# Link prediction
# ----------------------------------------------------------------------------------------------

def tune_link_predictor(data, *, encoder: str = "GCN", decoder: str = "dot", split: EdgeSplit = EdgeSplit(),
                        search: Search = Search(), protocol: Protocol = TUNING_PROTOCOL, seed: int = 0,
                        results: str | Path | None = None, dataset: str | None = None,
                        execution: Execution | None = None) -> dict:
    """Tune an MLP or GCN link predictor on validation ROC AUC; test the best.

    Tuning trials share one edge split (seed ``seed``); evaluation trial s draws a new split and new
    weights with seed s. Each trial runs :func:`hpstrat_book.part2.linkpred.run_link_prediction` with
    ``hidden = out = config["hidden"]``.

    Parameters
    ----------
    data : torch_geometric.data.Data
        Graph with ``x`` and ``edge_index``.
    encoder : {"MLP", "GCN"}
        Any case; the rows say ``"<encoder>-<decoder>"``.
    decoder : {"dot", "mlp", "fd"}
        ``"fd"``: HGCN's Fermi-Dirac distance decoder (:mod:`hpstrat_book.part2.linkpred`).
    split : EdgeSplit
        Edge split fractions (default 70 / 10 / 20; :data:`hpstrat_book.part2.linkpred.HGCN_SPLIT` is
        HGCN's 85 / 5 / 10); its name goes to the rows' ``protocol`` column.
    search, seed, results, dataset
        As in :func:`tune_node_classifier` (a stored study's name has ``max_epochs``, not ``n_bins``).
    protocol : Protocol
        The protocol every trial starts from (default :data:`TUNING_PROTOCOL`; ``k`` and ``n_bins`` do not
        apply).
    execution : Execution, optional
        ``device`` of the runs; ``precision`` must be ``"float32"``.

    Returns
    -------
    dict
        As :func:`tune_node_classifier`, scores are ROC AUC; ``protocol`` is
        ``"edge split <train>/<val>/<test>"``.
    """
    encoder = check_choice(model_name(encoder), "encoder", LINK_ENCODERS)  # rows say "GCN-dot"
    if not isinstance(split, EdgeSplit):
        raise ValueError(f"split must be a hpstrat_book.part2.linkpred.EdgeSplit (e.g. EdgeSplit(val_ratio=0.05, "
                         f"test_ratio=0.1)); got {type(split).__name__}.")
    search = check_search(search)
    n_trials = _study_trials(search)
    protocol, execution = check_protocol_value(protocol, execution=execution)
    tuning_split = edge_split(data.edge_index, int(data.num_nodes), val_ratio=split.val_ratio,
                              test_ratio=split.test_ratio, seed=seed)

    def train(cfg, run_seed, run_split):
        trial = _trial_protocol(cfg, protocol)
        return run_link_prediction(data, encoder=encoder, decoder=decoder, seed=run_seed, split=run_split,
                                   protocol=trial, out=trial.hidden, execution=execution)

    def objective(cfg):
        r = train(cfg, seed, tuning_split)
        return {"val": r["val_auc"], "test": r["test_auc"], "best_epoch": r["best_epoch"],
                "seconds": r["seconds"]}

    def eval_fn(cfg, seeds):
        rows = []
        for s in seeds:  # a few runs, each on its own split
            r = train(cfg, int(s), split)
            rows.append({"eval_seed": int(s), "round": 0, "val": r["val_auc"],
                         "test": r["test_auc"], "best_epoch": r["best_epoch"],
                         "seconds": r["seconds"]})
        return rows

    key = {"task": "link", "dataset": dataset or getattr(data, "name", "unknown"),
           "model": f"{encoder}-{decoder}", "protocol": split.name, "k": 1,
           "num_features": int(data.x.shape[1])}
    space = check_space(search.space)
    out = _run_study(objective, key, n_trials, seed, space, results, eval_fn, search.n_eval, "roc_auc",
                     storage=search.storage, settings=_study_settings(protocol, space, ("max_epochs",)),
                     sampler_seed=search.sampler_seed)
    out.update(protocol=split.name, k=1, model=encoder)
    return out


# ----------------------------------------------------------------------------------------------
# Feature-subset study
# ----------------------------------------------------------------------------------------------

def subset_features(data, cols):
    """A shallow copy of ``data`` whose ``x`` keeps only the columns ``cols`` (dense or sparse CSR)."""
    x = data.x
    cols = np.asarray(cols)
    if cols.ndim != 1 or cols.size == 0 or not np.issubdtype(cols.dtype, np.integer):
        raise ValueError(f"cols must be a non-empty 1-D array of column indices, got {cols!r}")
    if cols.min() < 0 or cols.max() >= x.shape[1]:
        raise ValueError(f"cols must lie in 0..{x.shape[1] - 1} (x has {x.shape[1]} columns), "
                         f"got range [{cols.min()}, {cols.max()}]")
    out = copy.copy(data)  # shallow: the graph tensors are shared, x is replaced
    if x.layout == torch.strided:
        out.x = x[:, torch.from_numpy(cols)]
        return out
    csr = x.to_sparse_csr() if x.layout != torch.sparse_csr else x
    m = sp.csr_matrix((csr.values().numpy(), csr.col_indices().numpy(), csr.crow_indices().numpy()),
                      shape=tuple(x.shape))[:, cols].tocsr()
    m.sort_indices()
    out.x = torch.sparse_csr_tensor(torch.from_numpy(m.indptr).long(),
                                    torch.from_numpy(m.indices).long(),
                                    torch.from_numpy(m.data), size=m.shape,
                                    check_invariants=False)  # scipy's sorted CSR: valid by construction
    return out


def feature_study(data, *, model: str = "MLP", step: int | None = None, split: str = "hpstrat",
                  search: Search = Search(n_trials=20), protocol: Protocol = TUNING_PROTOCOL, seed: int = 0,
                  results: str | Path | None = None, dataset: str | None = None,
                  execution: Execution | None = None) -> pd.DataFrame:
    """Tuned node classification on nested feature subsets (paper Section 4 and Appendix A).

    For every subset of :func:`feature_subsets` (``step`` defaults to the paper's increment for
    ``data.name``), :func:`tune_node_classifier` tunes and evaluates ``model`` on the features
    restricted to that subset, with ``split``, ``search`` (``n_trials`` None: 20 per subset), ``protocol``,
    ``seed`` and ``execution``. Rows carry ``num_features``, so one results file holds the study.

    Returns
    -------
    pandas.DataFrame
        One row per subset: ``num_features``, ``test_mean``, ``test_std``, ``best_val``,
        ``protocol``, ``n_trials``.
    """
    search = check_search(search)
    if search.n_trials is None:
        search = dataclasses.replace(search, n_trials=20)
    name = dataset or getattr(data, "name", None)
    if step is None:
        if name not in FEATURE_STEPS:
            raise ValueError(f"step is needed for dataset {name!r}; the paper's steps are known for "
                             f"{sorted(FEATURE_STEPS)}")
        step = FEATURE_STEPS[name]
    rows = []
    for cols in feature_subsets(int(data.x.shape[1]), step):
        out = tune_node_classifier(subset_features(data, cols), model=model, split=split, search=search,
                                   protocol=protocol, seed=seed, results=results, dataset=name,
                                   execution=execution)
        rows.append({"num_features": len(cols), "test_mean": out["test_mean"],
                     "test_std": out["test_std"], "best_val": out["best_val"],
                     "protocol": out["protocol"], "n_trials": out["n_trials"], "model": model})
    return pd.DataFrame(rows)
