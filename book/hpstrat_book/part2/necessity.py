"""Part II runners ("Does the graph matter?"): tuned MLP and GCN studies that write result rows.

Katsman, Lou and Gilbert (2024), "Revisiting the Necessity of Graph Learning and Common Graph
Benchmarks". The runners tune with :mod:`hpstrat_book.part2.tuning` (Optuna TPE, selection on
validation only, the best configuration evaluated on ``n_eval = 5`` seeds) and append rows under
``results/`` (``part2_node.csv``, ``part2_link.csv``, ``part2_features.csv``), resumable:

- :func:`run_node_benchmarks` (chapter 6, paper Tables 1 and 2) and :func:`run_random_baseline`;
- :func:`run_feature_studies` (chapter 7, Figures 1 and 3);
- :func:`run_link_benchmarks` (chapters 8 and 9, Tables 3 and 4);
- the paper's protocols beside the book's: :func:`run_node_protocols` (20 / 30 nodes per class on
  Amazon / Coauthor, the public Planetoid split on Cora / CiteSeer / PubMed: the splits of the GNN
  numbers the paper copies; rows in ``part2_node_protocols.csv``) and :func:`run_hgcn_link_benchmarks`
  (HGCN-style link prediction: 85 / 5 / 10 edges, Fermi-Dirac decoder, signed row-sum normalisation
  in the search space; rows in ``part2_link_hgcn.csv``);
- trivial link baselines: :func:`hpstrat_book.part2.baselines.run_link_baselines`
  (``part2_link_baselines.csv``).

Every runner takes the same few values: the training ``protocol`` (a :class:`hpstrat_lite.protocol.Protocol`;
:data:`NODE_STUDY_PROTOCOL` and :data:`LINK_STUDY_PROTOCOL` are the book's), the ``search`` (a
:class:`hpstrat_book.part2.search.Search`: trial budget, evaluation seeds, space, storage, sampler seed;
its ``None`` fields are the runner's: budgets :data:`NODE_BUDGETS` / :data:`LINK_BUDGETS`..., spaces
:data:`NODE_SPACE` / :data:`LINK_SPACE`...) and the ``execution`` (a :class:`hpstrat_lite.protocol.Execution`:
device, CPU threads, precision, evaluation batches). From a shell:
``python -m hpstrat_book.part2 tune node|link|features --datasets ...`` (see :mod:`hpstrat_lite.cli`).
"""
from __future__ import annotations

import contextlib
import dataclasses
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from hpstrat_lite.core._validate import check_int
from hpstrat_lite.engine.models import check_precision
from hpstrat_lite._host import host_cpu
from hpstrat_lite.protocol import Execution, Protocol, check_protocol_value
from hpstrat_lite.rows import append_rows, code_version, model_name, read_rows

with warnings.catch_warnings():  # tqdm.auto (imported by optuna) warns in a kernel without widgets
    warnings.filterwarnings("ignore", message=".*IProgress not found.*")
    from .tuning import (SEARCH_SPACE, TUNING_PROTOCOL, feature_study, tune_link_predictor,
                         tune_node_classifier)
from .search import Search, check_search
from .linkpred import HGCN_SPLIT, EdgeSplit, run_link_prediction
from .plan import (FEATURE_BUDGET, FEATURE_STEPS, LINK_DATASETS, NODE_DATASETS, RESULT_COLUMNS, RESULTS_FILES, WS_DATASETS,
                   results_file)
from hpstrat_lite.data.datasets import get_spec, load_dataset
from hpstrat_lite.engine.runs import torch_threads as _torch_threads
from .protocols import paper_protocol, with_public_split
from .tuning import study_sampler_seed
from hpstrat_lite.data.synthetic import make_ws1000


# ----------------------------------------------------------------------------------------------
# Datasets, budgets, search spaces
# ----------------------------------------------------------------------------------------------

#: Optuna trial budgets of the book's node-classification runs on HpStrat folds (the paper ran far larger
#: Bayesian sweeps): 30 on the small Planetoid graphs (three times TPE's 10 random start-up trials), fewer
#: on the larger graphs, where one trial of k = 5 rounds costs minutes on two CPU cores; every table states
#: them. They are the budgets of the committed studies, so a rerun of chapter 6 resumes them rather than
#: extending them (a larger budget adds trials and re-evaluates).
NODE_BUDGETS = {"Cora": 30, "CiteSeer": 30, "Photo": 3, "Computers": 5, "CS": 5, "Physics": 4,
                "PubMed": 8}
#: Trial budgets of the book's link-prediction runs.
LINK_BUDGETS = {**{d: 12 for d in WS_DATASETS}, "Twitch-PTBR": 12, "Twitch-EN": 8, "Facebook": 5}
#: Epoch budget of the link-prediction runs (early stopping on validation ROC AUC ends most far
#: earlier); Facebook (22k nodes) gets fewer.
LINK_MAX_EPOCHS = {"Facebook": 200}
LINK_DEFAULT_MAX_EPOCHS = 400
#: Epoch budget of the node-classification runs.
NODE_MAX_EPOCHS = 500
#: Training protocol of the book's node-classification studies (chapters 6 and 7, the paper's Section 3
#: Tables 1-2, Section 4 and Appendix A): :data:`hpstrat_book.part2.tuning.TUNING_PROTOCOL` (HpStrat
#: folds with k = 5, B = 10) with at most :data:`NODE_MAX_EPOCHS` epochs; each trial draws the rest. The paper
#: states neither its split nor its epochs.
NODE_STUDY_PROTOCOL = TUNING_PROTOCOL.replace(max_epochs=NODE_MAX_EPOCHS)
#: Training protocol of the book's link-prediction studies (chapters 8 and 9, the paper's Sections 5-6
#: Tables 3-4 and Figure 2): :data:`hpstrat_book.part2.tuning.TUNING_PROTOCOL` with at most
#: :data:`LINK_DEFAULT_MAX_EPOCHS` epochs, fewer for the datasets of :data:`LINK_MAX_EPOCHS` (the runners'
#: ``protocol=None``); ``k`` and ``n_bins`` do not apply.
LINK_STUDY_PROTOCOL = TUNING_PROTOCOL.replace(max_epochs=LINK_DEFAULT_MAX_EPOCHS)

#: Link-prediction search space: :data:`hpstrat_book.part2.tuning.SEARCH_SPACE` with shorter patience
#: (link predictors peak on validation ROC AUC after a few dozen epochs).
LINK_SPACE = {**SEARCH_SPACE, "patience": ("cat", (20, 50, 100))}
#: Node-classification search space: the default one with patience {50, 100}.
NODE_SPACE = {**SEARCH_SPACE, "patience": ("cat", (50, 100))}
#: HGCN-style link-prediction search space: :data:`LINK_SPACE` with HGCN's signed row-sum feature
#: normalisation as a fourth option.
HGCN_LINK_SPACE = {**LINK_SPACE, "feature_norm": ("cat", ("none", "row", "standard", "signed_rowsum"))}
#: Trial budgets of the paper-protocol node studies (:func:`run_node_protocols`): 30 on every graph
#: (three times TPE's 10 random start-up trials); a trial trains on 20 / 30 nodes per class or the public
#: Planetoid split, seconds on two CPU cores.
#: The graphs of the paper's node tables that have a protocol of their own (:func:`run_node_protocols`).
PROTOCOL_DATASETS = ("Cora", "CiteSeer", "Photo", "Computers", "CS", "Physics")
PROTOCOL_BUDGETS = {"Cora": 30, "CiteSeer": 30, "PubMed": 30, "Photo": 30, "Computers": 30, "CS": 30,
                    "Physics": 30}
#: Trial budgets of the HGCN-style link studies (:func:`run_hgcn_link_benchmarks`).
HGCN_BUDGETS = {"Twitch-PTBR": 10, "Twitch-EN": 10, "Facebook": 10}


# ----------------------------------------------------------------------------------------------
# Runners (results under results/)
# ----------------------------------------------------------------------------------------------

def check_part2_dataset(name):
    """Validate a Part II dataset name without loading anything; return the synthetic gamma.

    ``"WS1000"`` gives ``None``, ``"WS1000_<gamma>"`` the float gamma (>= 0), any name
    :func:`hpstrat_lite.data.datasets.get_spec` knows gives ``None`` as well.

    Raises
    ------
    ValueError
        For a malformed WS name or an unknown dataset (the message lists the allowed names).
    """
    if isinstance(name, str) and name.startswith("WS1000"):
        rest = name[len("WS1000"):]
        if rest == "":
            return None
        try:
            gamma = float(rest.lstrip("_"))
        except ValueError:
            gamma = None
        if not rest.startswith("_") or gamma is None or not gamma >= 0:
            raise ValueError(f"dataset {name!r}: synthetic names are 'WS1000' or 'WS1000_<gamma>' "
                             f"with gamma >= 0, e.g. 'WS1000_0.4'")
        return gamma

    get_spec(name)
    return None


def load_part2_dataset(name, root=None, *, seed=0):
    """A dataset by name: ``"WS1000"``, ``"WS1000_<gamma>"`` (e.g. ``"WS1000_0.4"``) or any name
    :func:`hpstrat_lite.load_dataset` knows (Cora, Twitch-PTBR, Facebook...); see
    :func:`check_part2_dataset`.

    ``seed`` is the generator seed of the synthetic graphs (ignored for real data).
    """
    gamma = check_part2_dataset(name)
    if name.startswith("WS1000"):
        return make_ws1000(gamma, seed=seed)

    return load_dataset(name, root=root, sparse_features=True)  # feature subsets slice the sparse form


def run_tuning(dataset: str, *, task: str = "node", model: str = "MLP", results_dir: str | Path | None = None,
               root: str | Path | None = None, results_task: str | None = None, **kwargs) -> dict:
    """Tune and evaluate ``model`` on a named dataset, writing rows to the results folder.

    Parameters
    ----------
    dataset : str
        Dataset name (see :func:`load_part2_dataset`).
    task : {"node", "link"}
        Node classification (:func:`tune_node_classifier`, rows in ``part2_node.csv``) or link
        prediction (:func:`tune_link_predictor`, rows in ``part2_link.csv``).
    model : {"MLP", "GCN"}
    results_dir : str or os.PathLike, optional
        Folder of the result files (default ``$HPSTRAT_RESULTS`` or the checkout's ``results/``).
    root : str, optional
        Data root for real datasets.
    results_task : str, optional
        Key of :data:`RESULTS_FILES` to write to (default ``task``).
    **kwargs
        Passed to the tuner: ``search``, ``protocol``, ``seed``, ``execution``; ``split`` (a split protocol
        name for node classification, an :class:`~hpstrat_book.part2.linkpred.EdgeSplit` for link
        prediction), ``decoder`` (link prediction).

    Returns
    -------
    dict
        The tuner's result; a rerun with the same arguments resumes from the rows on disk.
    """
    if task not in ("node", "link"):
        raise ValueError(f"task must be one of ('node', 'link'), got {task!r}")
    data = load_part2_dataset(dataset, root=root)
    path = results_file(results_task or task, results_dir=results_dir)
    if task == "node" and kwargs.get("split") == "planetoid":
        data = with_public_split(data, root)
    if task == "node":
        return tune_node_classifier(data, model=model, results=path, dataset=data.name, **kwargs)
    return tune_link_predictor(data, encoder=model, results=path, dataset=data.name, **kwargs)


def run_feature_study(dataset: str, *, model: str = "MLP", step: int | None = None,
                      results_dir: str | Path | None = None, root: str | Path | None = None, **kwargs) -> pd.DataFrame:
    """:func:`feature_study` on a named dataset, rows in ``results/part2_features.csv`` (the file
    chapter 7 and :func:`hpstrat_book.part2.necessity.run_feature_studies` read and write); ``kwargs``
    (``split``, ``search``, ``protocol``, ``seed``, ``execution``) go to :func:`feature_study`."""
    data = load_part2_dataset(dataset, root=root)
    return feature_study(data, model=model, step=step, results=results_file("features", results_dir=results_dir),
                         dataset=data.name, **kwargs)

# ----------------------------------------------------------------------------------------------
# Runners
# ----------------------------------------------------------------------------------------------

#: Result files of Part II (:data:`hpstrat_book.part2.plan.RESULTS_FILES`): chapter 6 (node), chapters 8-9
#: (link), chapter 7 (features).
PART2_FILES = RESULTS_FILES


def _budget(n_trials, dataset, budgets):
    """The trial budget of ``dataset``: ``n_trials`` (an int, or a dict dataset -> int), else ``budgets`` (a dict
    dataset -> int, 10 for a dataset it lacks; or one int for every dataset)."""
    default = budgets.get(dataset, 10) if isinstance(budgets, Mapping) else budgets
    if n_trials is None:
        n_trials = default
    elif isinstance(n_trials, Mapping):
        n_trials = n_trials.get(dataset, default)
    check_int(n_trials, "search.n_trials", hint=f" (or a dict dataset -> integer; dataset {dataset!r})")
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


def _runner_plan(task, datasets, models, search, protocol, execution, budgets, default_space):
    """The checked arguments every Part II runner starts from, before any training: ``(datasets, models,
    search per dataset, execution, CPU threads)``. ``task`` is ``"node"`` (labelled graphs, ``models``) or
    ``"link"`` (``encoders``, float32 only); each dataset's search has its budget (``search.n_trials`` or
    ``budgets``) and a space (``search.space`` or ``default_space``)."""
    datasets = _check_datasets(datasets, labelled=task == "node")
    models = _check_models(models, ("MLP", "GCN"), "models" if task == "node" else "encoders")
    search = check_search(search)
    _, execution = check_protocol_value(protocol, execution=execution)
    if task == "node":
        check_precision(execution.precision)
    elif execution.precision != "float32":
        raise ValueError(f"execution.precision must be 'float32' for link prediction (it trains in float32); "
                         f"got {execution.precision!r}")
    threads = execution.num_threads
    threads = None if threads in (None, "auto") else check_int(threads, "execution.num_threads")
    space = default_space if search.space is None else search.space
    searches = {ds: dataclasses.replace(search, n_trials=_budget(search.n_trials, ds, budgets), space=space)
                for ds in datasets}
    return datasets, models, searches, execution, threads


def _check_models(models, allowed, name="models"):
    """``models`` as a tuple of names from ``allowed`` in :func:`~hpstrat_lite.rows.model_name`'s
    spelling (``"gcn"`` and ``"GCN"`` both give ``"GCN"``)."""
    models = tuple(model_name(m) for m in models)
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

    with _torch_threads(check_int(threads, "threads", allow_none=True)), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Ss]parse.*", category=UserWarning)
        warnings.filterwarnings("ignore", message=".*IProgress not found.*")
        yield


def _missing_row(dataset, model, err):
    return {"dataset": dataset, "model": model, "status": "missing", "reason": str(err).split(".")[0]}


def _study_row(dataset, task, model, search, threads, log, **tuning_kwargs) -> dict:
    """Run (or resume) one tuning study with :func:`run_tuning` and return its summary row: ``status``
    ``"done"`` with the test mean / std over the evaluation runs, or the :func:`_missing_row` of a
    dataset whose files are absent. ``log`` (or None) gets one line either way."""
    t0 = time.perf_counter()
    try:
        with _quiet(threads):
            out = run_tuning(dataset, task=task, model=model, search=search, **tuning_kwargs)
    except FileNotFoundError as err:
        row = _missing_row(dataset, model, err)
        if log:
            log(f"{dataset} {model}: missing ({row['reason']})")
        return row
    budget = search.n_trials
    row = {"dataset": dataset, "model": model, "status": "done", "test_mean": out["test_mean"],
           "test_std": out["test_std"], "n_trials": budget, "seconds": time.perf_counter() - t0,
           "protocol": out.get("protocol"), "sampler_seed": out.get("sampler_seed")}
    if log:
        log(f"{dataset} {model}: {out['test_mean']:.4f} +- {out['test_std']:.4f} "
            f"({budget} trials, {row['seconds']:.0f} s)")
    return row


def run_node_benchmarks(datasets: Sequence[str] = NODE_DATASETS, *, models: Sequence[str] = ("MLP", "GCN"),
                        split: str = "hpstrat", search: Search = Search(),
                        protocol: Protocol = NODE_STUDY_PROTOCOL, results_dir: str | Path | None = None,
                        root: str | Path | None = None, execution: Execution | None = None,
                        log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Tune and evaluate MLP and GCN node classifiers (chapter 6, paper Section 3, Tables 1 and 2).

    Each (dataset, model) is one :func:`run_tuning` call writing to ``results/part2_node.csv``; a rerun
    resumes. A dataset whose raw files are absent (PubMed offline) is skipped and reported with
    ``status = "missing"``.

    Parameters
    ----------
    datasets : sequence of str
    models : sequence of {"MLP", "GCN"}
    split : {"hpstrat", "random"}
        HpStrat k-fold rounds (default, k = ``protocol.k``) or random 60/20/20 splits.
    search : Search
        ``n_trials``: an int, a dict per dataset, or None for :data:`NODE_BUDGETS`; ``n_eval`` evaluation
        seeds of the best configuration (5); ``space`` (None: :data:`NODE_SPACE`); ``storage``, an Optuna RDB
        storage of the searches (``sqlite:///...``, ``postgresql://...``, ``mysql://...``;
        :func:`hpstrat_book.part2.plan.default_storage` is the one ``python -m hpstrat_book.part2 tune`` uses), shared by
        every process given the same one (:func:`hpstrat_book.part2.studies.tune_shared`), or None:
        each search lives in memory and resumes from the results file; ``sampler_seed`` (None: the seed).
    protocol : Protocol
        The protocol every trial starts from (default :data:`NODE_STUDY_PROTOCOL`: k = 5, at most 500 epochs).
    results_dir, root
        Folder of the result files (default ``$HPSTRAT_RESULTS`` or ``results/``) and data root.
    execution : Execution, optional
        ``device``; ``num_threads`` (an int sets torch's CPU threads during the runs and restores them
        afterwards; ``"auto"`` / None leave them); ``precision`` (``"bfloat16"``: mixed-precision training,
        faster on CPUs with AMX, recorded in each row); ``eval_batch`` (evaluation seeds per training batch,
        default all; see :func:`hpstrat_book.part2.tuning.tune_node_classifier`).
    log : callable, optional
        Progress messages (e.g. ``print``).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, model): ``status`` ("done" / "missing"), ``test_mean``,
        ``test_std``, ``n_trials``, ``seconds``.

    Examples
    --------
    >>> from hpstrat_lite.protocol import Execution
    >>> run_node_benchmarks(["Cora"], models=["MLP"], search=Search(n_trials=3, n_eval=2),
    ...                     protocol=NODE_STUDY_PROTOCOL.replace(max_epochs=50),
    ...                     execution=Execution(num_threads=1), results_dir="/tmp/part2")  # doctest: +SKIP
    """
    datasets, models, searches, execution, threads = _runner_plan("node", datasets, models, search, protocol,
                                                                  execution, NODE_BUDGETS, NODE_SPACE)
    rows = []
    for ds in datasets:
        for model in models:
            rows.append(_study_row(ds, "node", model, searches[ds], threads, log, results_dir=results_dir,
                                   root=root, split=split, protocol=protocol, execution=execution))
    return pd.DataFrame(rows)


def run_random_baseline(dataset: str, *, n_eval: int = 5, split: EdgeSplit = EdgeSplit(),
                        results_dir: str | Path | None = None, root: str | Path | None = None) -> pd.DataFrame:
    """Random link scores on ``n_eval`` edge splits (Table 3's "random" row); rows to the results.

    Evaluation seed s splits the edges with seed s (fractions ``split``, default 70 / 10 / 20) and scores
    every pair uniformly at random (:func:`hpstrat_book.part2.linkpred.run_link_prediction` with
    ``encoder="random"``). Rows already in the results file are not recomputed.

    Returns
    -------
    pandas.DataFrame
        The ``n_eval`` evaluation rows (``phase = "eval"``, ``model = "random"``).
    """

    check_int(n_eval, "n_eval")
    path = results_file("link", results_dir=results_dir)
    with _quiet():
        data = load_part2_dataset(dataset, root=root)
    protocol = split.name
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
        r = run_link_prediction(data, encoder="random", seed=s, split=split)
        new.append({**key, "eval_seed": s, "round": 0, "val": r["val_auc"], "test": r["test_auc"],
                    "best_epoch": 0, "seconds": r["seconds"], "host": host_cpu(),
                    "code_version": code_version()})
    if new:
        append_rows(path, [{c: row.get(c) for c in RESULT_COLUMNS} for row in new])
    rows = read_rows(path)
    rows = rows[(rows["dataset"] == data.name) & (rows["model"] == "random")
                & (rows["protocol"] == protocol)]
    return rows[rows["eval_seed"].astype(int) < n_eval].reset_index(drop=True)


def _link_protocol(protocol, dataset):
    """The link protocol of ``dataset``: ``protocol``, or for None :data:`LINK_STUDY_PROTOCOL` with the
    dataset's epochs (:data:`LINK_MAX_EPOCHS`)."""
    if protocol is not None:
        return protocol
    return LINK_STUDY_PROTOCOL.replace(max_epochs=LINK_MAX_EPOCHS.get(dataset, LINK_STUDY_PROTOCOL.max_epochs))


def run_link_benchmarks(datasets: Sequence[str] = WS_DATASETS + LINK_DATASETS, *,
                        encoders: Sequence[str] = ("MLP", "GCN"), search: Search = Search(),
                        protocol: Protocol | None = None, random: bool = True,
                        results_dir: str | Path | None = None, root: str | Path | None = None,
                        execution: Execution | None = None, log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Tune and evaluate MLP and GCN link predictors (chapters 8 and 9, paper Sections 5-6, Tables 3 and 4,
    Figure 2).

    Each (dataset, encoder) is one :func:`run_tuning` call (task ``"link"``, edge split 70/10/20,
    dot-product decoder) writing to ``results/part2_link.csv``; a rerun resumes. With ``random=True``
    WS1000 also gets the random baseline (:func:`run_random_baseline`).

    Parameters
    ----------
    datasets : sequence of str
        WS names (``"WS1000"``, ``"WS1000_<gamma>"``) or MUSAE names.
    encoders : sequence of {"MLP", "GCN"}
    search : Search
        As in :func:`run_node_benchmarks`; ``n_trials`` None: :data:`LINK_BUDGETS`; ``space`` None:
        :data:`LINK_SPACE`; each evaluation seed is a new edge split.
    protocol : Protocol, optional
        The protocol every trial starts from; None: :data:`LINK_STUDY_PROTOCOL` (at most 400 epochs), with
        the epochs of :data:`LINK_MAX_EPOCHS` for the datasets it names.
    random : bool
        Add the random baseline for datasets named ``"WS1000"``.
    results_dir, root, execution, log
        As in :func:`run_node_benchmarks` (``execution.precision`` must be float32).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, encoder), as :func:`run_node_benchmarks`.
    """
    checked = LINK_STUDY_PROTOCOL if protocol is None else protocol
    datasets, encoders, searches, execution, threads = _runner_plan("link", datasets, encoders, search, checked,
                                                                    execution, LINK_BUDGETS, LINK_SPACE)
    rows = []
    for ds in datasets:
        if random and ds == "WS1000":
            r = run_random_baseline(ds, n_eval=searches[ds].n_eval, results_dir=results_dir, root=root)
            rows.append({"dataset": ds, "model": "random", "status": "done",
                         "test_mean": float(r["test"].mean()), "test_std": float(r["test"].std(ddof=1)),
                         "n_trials": 0, "seconds": float(r["seconds"].sum())})
        for enc in encoders:
            rows.append(_study_row(ds, "link", enc, searches[ds], threads, log, results_dir=results_dir, root=root,
                                   protocol=_link_protocol(protocol, ds), execution=execution))
    return pd.DataFrame(rows)


def run_feature_studies(datasets: Sequence[str] = ("Cora", "CiteSeer"), *, models: Sequence[str] = ("MLP", "GCN"),
                        steps: Mapping[str, int] | None = None, split: str = "hpstrat", search: Search = Search(),
                        protocol: Protocol = NODE_STUDY_PROTOCOL, results_dir: str | Path | None = None,
                        root: str | Path | None = None, execution: Execution | None = None,
                        log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """The feature-subset study (chapter 7, paper Section 4 and Appendix A, Figures 1 and 3) for several datasets.

    For each dataset and model, :func:`hpstrat_book.part2.tuning.feature_study`: nested prefixes of
    the feature columns in the paper's increments (:data:`hpstrat_book.part2.plan.FEATURE_STEPS`, or
    ``steps[dataset]``), each tuned with ``search.n_trials`` trials (None: :data:`FEATURE_BUDGET`; a dict per
    dataset) and evaluated on ``search.n_eval`` seeds; with ``search.storage`` each subset's search is a stored
    study of its own. Rows go to ``results/part2_features.csv`` (``num_features`` tells the subsets apart).
    Other arguments as in :func:`run_node_benchmarks`.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, model, subset): ``num_features``, ``test_mean``, ``test_std``...
        Datasets whose files are missing get one ``status = "missing"`` row.
    """
    datasets, models, searches, execution, threads = _runner_plan("node", datasets, models, search, protocol,
                                                                  execution, FEATURE_BUDGET, NODE_SPACE)
    steps = steps or {}
    frames = []
    for ds in datasets:
        step = steps.get(ds, FEATURE_STEPS.get(ds))
        for model in models:
            t0 = time.perf_counter()
            try:
                with _quiet(threads):
                    data = load_part2_dataset(ds, root=root)
                    df = feature_study(data, model=model, step=step, split=split, search=searches[ds],
                                       protocol=protocol, results=results_file("features", results_dir=results_dir),
                                       dataset=data.name, execution=execution)
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


def run_node_protocols(datasets: Sequence[str] = PROTOCOL_DATASETS, *, models: Sequence[str] = ("MLP", "GCN"),
                       split: str | None = None, search: Search = Search(), protocol: Protocol = NODE_STUDY_PROTOCOL,
                       results_dir: str | Path | None = None, root: str | Path | None = None,
                       execution: Execution | None = None, log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Tune MLP and GCN on the paper's node-classification splits (paper Section 3, Tables 1 and 2).

    ``split=None`` runs each dataset on the split of the GNN numbers the paper copies
    (:data:`hpstrat_book.part2.plan.NODE_PROTOCOLS`: ``"per_class"``, 20 / 30 nodes per class,
    on Amazon and Coauthor; ``"planetoid"``, the public split, on Cora, CiteSeer and PubMed); a name
    forces one split for all. Every (dataset, model) gets a TPE sampler seed of its own
    (:func:`hpstrat_book.part2.tuning.study_sampler_seed`) unless ``search.sampler_seed`` names one.
    Rows go to ``results/part2_node_protocols.csv`` (resumable). Budgets default to
    :data:`PROTOCOL_BUDGETS`; other arguments as in :func:`run_node_benchmarks`.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, model): ``status``, ``protocol``, ``sampler_seed``, ``test_mean``,
        ``test_std``, ``n_trials``, ``seconds``.
    """

    datasets, models, searches, execution, threads = _runner_plan("node", datasets, models, search, protocol,
                                                                  execution, PROTOCOL_BUDGETS, NODE_SPACE)
    rows = []
    for ds in datasets:
        prot = split or paper_protocol(ds)
        for model in models:
            rows.append(_study_row(ds, "node", model, _own_sampler_seed(searches[ds], ds, model), threads, log,
                                   results_dir=results_dir, root=root, results_task="node_protocols", split=prot,
                                   protocol=protocol, execution=execution))
    return pd.DataFrame(rows)


def _own_sampler_seed(search, dataset, model):
    """``search`` with the sampler seed of (dataset, model) where it names none (:func:`study_sampler_seed`)."""
    if search.sampler_seed is not None:
        return search
    return dataclasses.replace(search, sampler_seed=study_sampler_seed(dataset, model))


def run_hgcn_link_benchmarks(datasets: Sequence[str] = LINK_DATASETS, *, encoders: Sequence[str] = ("MLP", "GCN"),
                             search: Search = Search(), protocol: Protocol | None = None,
                             results_dir: str | Path | None = None, root: str | Path | None = None,
                             execution: Execution | None = None,
                             log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Tune MLP and GCN link predictors in the HGCN-style pipeline (paper Table 4's setting).

    The paper's supplementary code is built on HGCN (Chami et al., 2019; paper Appendix C names
    ``graphdatasets_hgcn/``): 85 / 5 / 10 edge split (:data:`hpstrat_book.part2.linkpred.HGCN_SPLIT`),
    Fermi-Dirac distance decoder, feature normalisation searched over :data:`HGCN_LINK_SPACE` (with
    HGCN's signed row-sum; ``search.space`` replaces it). Each (dataset, encoder) gets its own sampler seed
    unless ``search.sampler_seed`` names one; rows go to ``results/part2_link_hgcn.csv`` (resumable).
    Budgets default to :data:`HGCN_BUDGETS`; ``protocol`` and the other arguments as in
    :func:`run_link_benchmarks`.

    Returns
    -------
    pandas.DataFrame
        As :func:`run_link_benchmarks`.
    """

    checked = LINK_STUDY_PROTOCOL if protocol is None else protocol
    datasets, encoders, searches, execution, threads = _runner_plan("link", datasets, encoders, search, checked,
                                                                    execution, HGCN_BUDGETS, HGCN_LINK_SPACE)
    rows = []
    for ds in datasets:
        for enc in encoders:
            rows.append(_study_row(ds, "link", enc, _own_sampler_seed(searches[ds], ds, enc), threads, log,
                                   results_dir=results_dir, root=root, results_task="link_hgcn", decoder="fd",
                                   split=HGCN_SPLIT, protocol=_link_protocol(protocol, ds), execution=execution))
    return pd.DataFrame(rows)
