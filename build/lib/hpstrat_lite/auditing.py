"""Audit a graph: do the split methods change what a k-fold evaluation of your models says?

:func:`audit` runs HpStrat's GNN experiment (Section 5) on one graph — a built-in dataset, a graph file
or a PyG ``Data`` (:func:`hpstrat_lite.data.graphs.as_graph`) — for a few models (built-in names and/or
factories of your own, :mod:`hpstrat_lite.engine.user_models`) and several split methods (random,
class-stratified and HpStrat k-fold by default; the controls "degree" and "placebo" and a covariate of
your own on request), and computes the tables of :class:`AuditResult` on the metric you choose
(``metric=``: accuracy, balanced accuracy, macro-F1 or ROC-AUC, one-vs-rest macro for more than two
classes; every run records all four). :mod:`hpstrat_lite.audit_report` puts them in words and HTML.

* ``std`` / ``score``: the cross-fold standard deviation / mean of the test metric (points x 100) per model
  and method, mean over split seeds (Section 5.2), with ``baselines`` (majority class, feature-only logistic
  regression) on the same folds; ``at_majority``: the models within their std of the majority baseline;
* ``ranks`` and ``friedman``: the methods ranked on the cross-fold std within each (model, split seed)
  block and the Friedman test over those blocks, with the smallest p-value the design can reach;
* ``method_posthoc`` and ``model_posthoc``: the pairwise post-hoc tests that alone name a winner (the
  split method of lowest spread; the best model under each method): :func:`hpstrat_lite.stats.posthoc`,
  Wilcoxon signed-rank tests of every pair over the independent units (the split seeds: the models of
  one seed share its folds), Holm-corrected; a winner beats every other at p < :data:`ALPHA`;
* ``convergence``: per model, the share of runs that stopped at ``max_epochs`` instead of early;
* ``quality``: SDD, CDD, CHD and W1 of every method's folds (Section 4.2), mean over split seeds.

Model selection and early stopping stay on the validation loss under every metric (the paper's protocol).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import tempfile
import warnings
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ._io import atomic_write
from ._names import MODELS
from .core._validate import check_bool, check_choice, check_covariate, check_int, check_k, check_seeds
from .core.covariates import node_degree
from .core.homophily import node_homophily
from .core.quality import fold_quality
from .core.ranking import rank_methods
from .experiments.probes import necessity as necessity_estimate
from .experiments.sweep import COVARIATE_METHOD, check_sweep_protocol, run_experiment, split_folds
from .protocol import PAPER_PROTOCOL, Execution, Protocol, check_protocol_value
from .rows import METRICS, check_protocol, key_value, read_rows, training_values
from .stats import FriedmanResult, PosthocResult, cross_fold_std, friedman, posthoc

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from torch import nn
    from torch_geometric.data import Data

#: Files an audit with ``out=`` writes: the result rows (one per run, resumable), the fold quality of every
#: (method, seed), the baselines' rows of every (method, seed, fold) and what the folder audits (graph, metric).
ROWS_FILE, QUALITY_FILE, BASELINES_FILE, META_FILE = "rows.csv", "quality.csv", "baselines.csv", "audit.json"
#: The necessity estimate of the graph (:func:`hpstrat_lite.experiments.probes.necessity`): one row per estimate.
NECESSITY_FILE = "necessity.csv"
#: The significance level of the Friedman test and of the Holm-corrected pairwise tests.
ALPHA = 0.05
METRIC_NAMES = {"accuracy": "accuracy", "balanced_accuracy": "balanced accuracy", "macro_f1": "macro-F1",
                "roc_auc": "ROC-AUC"}
#: Two classes whose larger one holds at least this share of the nodes count as imbalanced: the summary
#: then suggests ``metric="roc_auc"``, which a majority-class predictor cannot raise above 50.
IMBALANCED_SHARE = 0.65
#: A model with more than this share of its runs stopped at ``max_epochs`` (not early) is flagged: its
#: scores may still be rising.
CAPPED_SHARE = 0.25
#: The default split methods of an audit, and every split method an audit knows, in the order of its tables.
DEFAULT_METHODS = ("random", "stratified", "hpstrat")
ALL_AUDIT_METHODS = ("random", "stratified", "hpstrat", "degree", "placebo", "covariate")
#: The independent unit of the pairwise tests: the models of one split seed share its folds.
UNIT = "split seed"
#: The fold functions' small-class warning, which the audit gives once (``_class_warnings``), not per fold set.
SMALL_CLASS_WARNING = "The least populated class in y"


# ----------------------------------------------------------------------------------------------
# Statistics
# ----------------------------------------------------------------------------------------------

def method_friedman(per_seed: pd.DataFrame, methods: Sequence[str]) -> FriedmanResult:
    """:func:`hpstrat_lite.stats.friedman` of the methods' cross-fold std over the (model, split seed) blocks
    (seeds add blocks; the smallest p the design can reach is part of the result). A single method: NaN."""
    blocks = per_seed.assign(block=per_seed["model"].astype(str) + " / seed " + per_seed["seed"].astype(str))
    wide = blocks.pivot(index="block", columns="method", values="std").reindex(columns=list(methods))
    if len(methods) >= 2:
        return friedman(wide, unit="(model, split seed) block", alpha=ALPHA)
    nan = float("nan")
    return FriedmanResult(nan, nan, nan, n_blocks=int(wide.dropna().shape[0]), n_methods=len(methods),
                          unit="(model, split seed) block", methods=tuple(methods), mean_ranks=(1.0,) * len(methods),
                          min_pvalue=nan, blocks_needed=None, blocks_needed_observed=None, alpha=ALPHA)


def method_posthoc(per_seed: pd.DataFrame, methods: Sequence[str]) -> PosthocResult | None:
    """:func:`hpstrat_lite.stats.posthoc` of the methods' cross-fold std (lower is better) over the split seeds,
    the std averaged over the models of a seed (they share its folds: one unit). None for a single method."""
    if len(methods) < 2:
        return None
    wide = per_seed.groupby(["seed", "method"])["std"].mean().unstack().reindex(columns=list(methods))
    return posthoc(wide, lower_is_better=True, unit=UNIT, alpha=ALPHA)


def model_posthoc(per_seed: pd.DataFrame, methods: Sequence[str]) -> dict[str, PosthocResult]:
    """Under each split method, :func:`hpstrat_lite.stats.posthoc` of the models' mean test score (higher is
    better) over the split seeds; empty with a single model (nothing to compare, no best)."""
    if per_seed["model"].nunique() < 2:
        return {}
    return {method: posthoc(part.pivot(index="seed", columns="model", values="mean"), lower_is_better=False,
                            unit=UNIT, alpha=ALPHA)
            for method in methods if not (part := per_seed[per_seed["method"] == method]).empty}


def convergence_table(rows: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """Per model: ``runs``, ``capped`` (runs that trained all ``max_epochs`` epochs, not stopped early),
    ``share`` (capped / runs), ``max_epochs`` and ``mean_best_epoch``. Empty when the rows lack the columns."""
    need = {"epochs_run", "max_epochs"}
    if not need <= set(rows.columns):
        return pd.DataFrame(columns=["runs", "capped", "share", "max_epochs", "mean_best_epoch"], dtype=float)
    capped = rows["epochs_run"].astype(float) >= rows["max_epochs"].astype(float)
    best = rows["best_epoch"].astype(float) if "best_epoch" in rows else pd.Series(np.nan, index=rows.index)
    table = pd.DataFrame({"model": rows["model"], "capped": capped, "best": best, "max": rows["max_epochs"]})
    g = table.groupby("model", sort=False)
    out = pd.DataFrame({"runs": g.size(), "capped": g["capped"].sum().astype(int), "max_epochs": g["max"].max(),
                        "mean_best_epoch": g["best"].mean()}).reindex(list(models))
    out.insert(2, "share", out["capped"] / out["runs"])
    return out


# ----------------------------------------------------------------------------------------------
# The result
# ----------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, repr=False)
class AuditResult:
    """What :func:`audit` found on one graph (see the module docstring for each table);
    :func:`hpstrat_lite.audit_report.format_audit` gives it in words.

    Attributes
    ----------
    rows : DataFrame
        One row per (model, method, seed, fold), the columns of :func:`hpstrat_lite.experiments.sweep.run_experiment`.
    metric : str
        The metric of the tables (a key of :data:`hpstrat_lite.rows.METRICS`).
    std, score : DataFrame
        Cross-fold std and mean of the test metric (points x 100) per model and method, mean over seeds.
    baselines : DataFrame
        Mean test metric (points) of the ``majority`` and ``logistic`` baselines per method (empty without them).
    at_majority : tuple of str
        Models within noise of the majority baseline under every method.
    ranks : DataFrame
        Mean rank of each method per model (over seeds), and a last row ``mean`` over every block.
    friedman : hpstrat_lite.stats.FriedmanResult
        The omnibus test of the methods' spreads over the (model, split seed) blocks (:func:`method_friedman`).
    method_posthoc : hpstrat_lite.stats.PosthocResult or None
        The methods' spreads compared pairwise over split seeds (:func:`method_posthoc`); None for one method.
    model_posthoc : dict of str to hpstrat_lite.stats.PosthocResult
        Per split method, the models' scores compared pairwise over split seeds (:func:`model_posthoc`).
    convergence : DataFrame
        :func:`convergence_table`: per model, the runs that stopped at ``max_epochs``.
    quality : DataFrame
        SDD, CDD, CHD, W1 per method, mean over seeds.
    dataset : str
    class_counts : tuple of int or None
        Nodes per class of the graph.
    necessity : DataFrame or None
        The cheap estimate of :func:`hpstrat_lite.experiments.probes.necessity` on the same graph
        (``estimate``, ``value``, ``low``, ``high``, ``verdict``, ``gap``, ``metric``), or None.
    graph_changes : dict
        What loading changed in the graph (:func:`hpstrat_lite.data.graphs.graph_changes`).
    """

    rows: pd.DataFrame
    metric: str
    std: pd.DataFrame
    score: pd.DataFrame
    baselines: pd.DataFrame
    at_majority: tuple
    ranks: pd.DataFrame
    friedman: FriedmanResult
    method_posthoc: PosthocResult | None
    model_posthoc: Mapping[str, PosthocResult]
    convergence: pd.DataFrame
    quality: pd.DataFrame
    dataset: str
    class_counts: tuple | None = None
    necessity: pd.DataFrame | None = None
    graph_changes: Mapping = dataclasses.field(default_factory=dict)

    @classmethod
    def from_rows(cls, rows: pd.DataFrame, quality: pd.DataFrame, *, metric: str = "accuracy",
                  baselines: pd.DataFrame | None = None, class_counts=None, graph_changes=None) -> "AuditResult":
        """Build the result from an audit's rows, its fold-quality table (long, one row per (method,
        seed); or already averaged per method) and optionally its baselines' rows (one per (baseline,
        method, seed, fold), the ``test_*`` metric columns)."""

        check_choice(metric, "metric", tuple(METRICS))
        if rows.empty:
            raise ValueError("rows is empty: the audit trained no run.")
        datasets = rows["dataset"].unique()
        if len(datasets) != 1:
            raise ValueError(f"an audit covers one graph; rows hold {sorted(map(str, datasets))}.")
        column = metric_column(metric)
        if column not in rows.columns or rows[column].isna().any():
            missing = len(rows) if column not in rows.columns else int(rows[column].isna().sum())
            raise ValueError(f"metric={metric!r}: {missing} of the {len(rows)} rows have no {column!r} (rows written "
                             f"before runs recorded it); use metric='accuracy', or remove the rows file and rerun.")
        present = list(dict.fromkeys(rows["method"]))
        methods = [m for m in ALL_AUDIT_METHODS if m in present] + [m for m in present if m not in ALL_AUDIT_METHODS]
        models = list(dict.fromkeys(rows["model"]))
        per_seed = cross_fold_std(rows, column, by=["model", "method", "seed"])
        std = _wide(per_seed, "std", models, methods)
        score = _wide(per_seed, "mean", models, methods)
        blocks = per_seed.assign(block=per_seed["model"].astype(str) + " / seed " + per_seed["seed"].astype(str))
        ranked = rank_methods(blocks, "std", blocks=("block",))
        ranks = ranked.groupby(["model", "method"])["rank"].mean().unstack().reindex(index=models, columns=methods)
        ranks.loc["mean"] = ranked.groupby("method")["rank"].mean().reindex(methods)
        if "seed" in quality.columns:
            quality = quality.groupby("method")[["sdd", "cdd", "chd", "w1"]].mean()
        quality = quality.reindex([m for m in methods if m in quality.index])
        base = pd.DataFrame(columns=methods, dtype=float)
        at_majority = []
        if baselines is not None and not baselines.empty:
            b = baselines[baselines["method"].isin(methods)]
            base_seed = (b.assign(v=100 * b[column]).groupby(["baseline", "method", "seed"])["v"].mean()
                         .groupby(["baseline", "method"]).mean().unstack().reindex(columns=methods))
            base = base_seed.reindex([x for x in ("majority", "logistic") if x in base_seed.index])
            if "majority" in base.index:
                gap = (score - base.loc["majority"]).abs()
                at_majority = [m for m in models if bool((gap.loc[m] <= std.loc[m].fillna(0) + 1e-9).all())]
        for table in (std, score, ranks, base):
            table.columns.name = "method"
        counts = None if class_counts is None else tuple(int(c) for c in class_counts)
        return cls(rows=rows.reset_index(drop=True), metric=metric, std=std, score=score, baselines=base,
                   at_majority=tuple(at_majority), ranks=ranks, friedman=method_friedman(per_seed, methods),
                   method_posthoc=method_posthoc(per_seed, methods), model_posthoc=model_posthoc(per_seed, methods), convergence=convergence_table(rows, models),
                   quality=quality, dataset=str(datasets[0]), class_counts=counts,
                   graph_changes=dict(graph_changes or {}))

    @property
    def metric_name(self) -> str:
        return METRIC_NAMES[self.metric]

    @property
    def n_seeds(self) -> int:
        return int(self.rows["seed"].nunique())

    @property
    def conclusive(self) -> bool:
        """True when the Friedman test says the methods' spreads differ (p < :data:`ALPHA`)."""
        return bool(self.friedman.pvalue < ALPHA)  # NaN (too few blocks or methods) compares False

    @property
    def best_method(self) -> str | None:
        """The split method of lowest spread, named only when the Friedman test is significant and the
        method differs from every other in the Holm-corrected pairwise tests; else None."""
        return self.method_posthoc.winner if self.conclusive and self.method_posthoc is not None else None

    @property
    def best_model(self) -> dict[str, str | None]:
        """Per split method, the model the pairwise tests name best (None: no lead counts, or a single model)."""
        return {method: (r.winner if (r := self.model_posthoc.get(method)) else None) for method in self.std.columns}

    @property
    def best_model_changes(self) -> bool:
        """True when two split methods have different confirmed best models."""
        return len({b for b in self.best_model.values() if b is not None}) > 1

    @property
    def imbalanced_binary(self) -> bool:
        """Two classes, the larger holding at least :data:`IMBALANCED_SHARE` of the nodes."""
        counts = [c for c in (self.class_counts or []) if c > 0]
        return len(counts) == 2 and max(counts) / sum(counts) >= IMBALANCED_SHARE

    @property
    def capped_models(self) -> list[str]:
        """Models with more than :data:`CAPPED_SHARE` of their runs stopped at ``max_epochs``."""
        c = self.convergence
        return [str(m) for m in c.index[c["share"] > CAPPED_SHARE]] if len(c) else []

    @property
    def graph_gap(self) -> tuple[str, float] | None:
        """``(model, gap)``: the built-in graph model of highest mean score and its lead over the built-in MLP
        (points, mean over the split methods); None without the MLP and a built-in graph model."""
        graph_models = [m for m in self.score.index if m in MODELS and m != "MLP"]
        if "MLP" not in self.score.index or not graph_models:
            return None
        means = self.score.mean(axis=1)
        best = max(graph_models, key=lambda m: means[m])
        return best, float(means[best] - means["MLP"])

    @property
    def necessity_disagrees(self) -> bool | None:
        """True when the measured gap (:attr:`graph_gap`) lies outside the 95 % interval of the necessity
        estimate's probe gain; None when either is missing or the estimate was on another metric."""
        gap, n = self.graph_gap, self.necessity
        if gap is None or n is None or n.empty or n.get("metric", pd.Series([self.metric])).iloc[0] != self.metric:
            return None
        probe = n[n["estimate"] == "probe_gain"]
        if probe.empty or not np.isfinite(float(probe["low"].iloc[0])):
            return None
        return bool(not float(probe["low"].iloc[0]) <= gap[1] <= float(probe["high"].iloc[0]))

    def score_table(self) -> pd.DataFrame:
        """The models' mean test metric with the baselines below them and a ``vs majority`` column."""
        table = pd.concat([self.score, self.baselines.rename(index=lambda b: f"[{b} baseline]")])
        if len(self.baselines):
            table["vs majority"] = ["within noise" if m in self.at_majority else "" for m in self.score.index] + \
                                   [""] * len(self.baselines)
        return table

    def __repr__(self) -> str:
        return (f"AuditResult(dataset={self.dataset!r}, metric={self.metric!r}, models={list(self.std.index)}, "
                f"methods={list(self.std.columns)}, seeds={self.n_seeds}, runs={len(self.rows)}, "
                f"friedman_p={self.friedman.pvalue:.4g}, best_method={self.best_method!r})")


def metric_column(metric: str) -> str:
    """The row column of a metric's test score: ``"roc_auc"`` -> ``"test_roc_auc"``."""
    return f"test_{METRICS[metric]}"


def _wide(per_seed, value, models, methods):
    return (per_seed.groupby(["model", "method"], sort=False)[value].mean().unstack()
            .reindex(index=models, columns=methods))


# ----------------------------------------------------------------------------------------------
# The audit
# ----------------------------------------------------------------------------------------------

def audit(data: str | PathLike | Data,
          models: str | Callable[[int, int], nn.Module] | Sequence[str | Callable[[int, int], nn.Module]], *,
          seeds: Iterable[int] = (0,), methods: str | Sequence[str] = DEFAULT_METHODS, metric: str = "accuracy",
          covariate: ArrayLike | None = None, protocol: Protocol = PAPER_PROTOCOL,
          out: str | PathLike | None = None, execution: Execution | None = None,
          necessity: bool = True) -> AuditResult:
    """Audit one graph: train ``models`` on the folds of each split method and compare the spreads.

    The HpStrat protocol (Section 5): k-fold splits of each method and split seed (round i: test fold i,
    validation fold i + 1 mod k), each model trained on every round (Adam with ``protocol.lr`` and
    ``protocol.weight_decay``, the paper's 0.01 and 5e-4 by default, early stopping with
    ``protocol.patience`` on the validation loss, at most ``protocol.max_epochs`` epochs), every
    metric measured once with the best validation weights; a factory's runs train one at a time, each
    finished run saved so that a stopped audit resumes. The baselines are scored on the same folds.

    Every argument is checked, and the graph read and checked, before any file is written or any run trains.

    Parameters
    ----------
    data : str, os.PathLike or torch_geometric.data.Data
        A dataset name (read from the data root ``$HPSTRAT_DATA``; another root: pass
        ``load_dataset(name, root=...)``), a graph file or a ``Data`` (:func:`hpstrat_lite.data.graphs.as_graph`: string labels
        are encoded as scikit-learn encodes them; a graph without features gets identity features, with a
        warning). What loading changed (self-loops, duplicate edges, relabelled classes) is in
        ``result.graph_changes`` and the report.
    models : sequence
        Built-in model names (:data:`hpstrat_lite.engine.models.MODELS`), ``"module:function"`` strings or
        factories ``factory(in_channels, out_channels) -> torch.nn.Module``.
    seeds : iterable of int
        Split seeds: the independent units of the pairwise tests (a winner needs several).
    methods : sequence of str
        Split methods among :data:`ALL_AUDIT_METHODS` ("covariate" needs ``covariate``).
    metric : {"accuracy", "balanced_accuracy", "macro_f1", "roc_auc"}
        The test metric of the tables (every run records all four; ROC-AUC is one-vs-rest macro for more
        than two classes, as scikit-learn's ``roc_auc_score(multi_class="ovr")``).
    covariate : array-like of shape (num_nodes,), optional
        A node covariate of yours for the split method "covariate" (uniform bins, then classes).
    protocol : Protocol
        The protocol (:class:`hpstrat_lite.protocol.Protocol`, default :data:`hpstrat_lite.protocol.PAPER_PROTOCOL`):
        ``k``, ``n_bins``, ``max_epochs``, ``patience`` and the built-in models' optimiser and architecture;
        the rows record every field, and a folder holds the rows of one protocol.
    out : path, optional
        A folder for ``rows.csv``, ``quality.csv``, ``baselines.csv``, ``necessity.csv`` and ``audit.json``
        (the graph's identity: content hashes of its edges, labels and features, and the protocol); a rerun
        with the same ``out`` trains only the runs missing there. A folder that holds another graph's audit
        (any of edges, labels or features differ) or another protocol's is refused before anything is
        written. Without it the files live in a temporary folder.
    execution : Execution, optional
        How the runs train (:class:`hpstrat_lite.protocol.Execution`): ``device``, ``progress`` and
        ``executor="local"`` or ``"ray"`` (a factory defined in a module must be importable on the Ray
        workers: that is checked on a worker before any pair is sent). Default: progress bars when
        attached to a terminal or a notebook.
    necessity : bool
        Also compute the cheap "does the graph help?" estimate (:func:`hpstrat_lite.experiments.probes.necessity`).

    Returns
    -------
    AuditResult
        ``print(hpstrat_lite.audit_report.format_audit(result))`` gives the report in text.

    Examples
    --------
    >>> result = audit("graph.npz", ["GCN", "mypkg.nets:make"], seeds=range(8), out="audit")  # doctest: +SKIP
    """
    from .data.graphs import as_graph, graph_changes
    from .engine.train import resolve_device
    from .engine.user_models import model_label, resolve_model

    # every argument first, before the graph is read or anything trains
    if isinstance(models, str) or callable(models):
        models = [models]
    models = [resolve_model(m) for m in models]
    if not models:
        raise ValueError("models is empty; name at least one model (a built-in name or a factory).")
    labels = [model_label(m) for m in models]
    if len(set(labels)) != len(labels):
        raise ValueError(f"models name the same model twice: {labels}.")
    seeds = check_seeds(seeds)
    protocol, execution = check_protocol_value(
        protocol, execution=Execution(progress=_show_progress()) if execution is None else execution)
    patience = check_int(protocol.patience, "patience", 1)  # the audit's runs stop early
    protocol, execution, _ = check_sweep_protocol(protocol, execution, where="audit")
    k, n_bins, max_epochs = protocol.k, protocol.n_bins, protocol.max_epochs
    check_choice(metric, "metric", tuple(METRICS))
    methods = [methods] if isinstance(methods, str) else list(methods)
    if not methods:
        raise ValueError(f"methods is empty; name at least one of {ALL_AUDIT_METHODS}.")
    for m in methods:
        check_choice(m, "methods", ALL_AUDIT_METHODS)
    if len(set(methods)) != len(methods):
        raise ValueError(f"methods names a split method twice: {methods}.")
    if (COVARIATE_METHOD in methods) != (covariate is not None):
        raise ValueError("method 'covariate' and covariate= go together: give both or neither "
                         f"(methods={methods}, covariate {'given' if covariate is not None else 'not given'}).")
    check_bool(execution.progress, "progress")
    check_bool(necessity, "necessity")
    resolve_device(execution.device)

    graph = as_graph(data)
    y = graph.y.numpy().astype(np.int64)
    if int(graph.num_classes) < 2:
        raise ValueError(f"data.y has a single class ({graph.num_nodes} nodes, all of one label): there is nothing "
                         f"to classify; an audit needs at least two classes.")
    check_k(k, graph.num_nodes)
    if covariate is not None:
        covariate = check_covariate(covariate, graph.num_nodes)
    counts = _class_warnings(y, k)
    changes = graph_changes(graph)
    identity = graph_identity(graph)
    meta = {"dataset": graph.name, "graph": _combined(identity), "identity": identity,
            "num_nodes": int(graph.num_nodes), "class_counts": counts.tolist(), "metric": metric,
            "protocol": {"k": k, "n_bins": n_bins, "max_epochs": max_epochs, "patience": patience,
                         **training_values(protocol)}, "changes": changes,
            "covariate": None if covariate is None else hashlib.sha1(covariate.tobytes()).hexdigest()[:16]}
    if out is not None:
        _check_out_folder(Path(out), meta)

    # the folds of every (method, seed), their quality and the baselines: cheap, and written before training
    h = node_homophily(graph.edge_index, y, graph.num_nodes, assume_simple=True)
    degree = node_degree(graph.edge_index, graph.num_nodes, assume_simple=True)
    with warnings.catch_warnings():  # the small-class warning was given once above, not once per (method, seed)
        warnings.filterwarnings("ignore", message=SMALL_CLASS_WARNING)
        plan = [(m, s, split_folds(m, h, y, k=k, seed=s, n_bins=n_bins, degree=degree, covariate=covariate))
                for m in methods for s in seeds]
    quality = pd.DataFrame([{"dataset": graph.name, "method": m, "seed": s, "k": k, "n_bins": n_bins,
                             **fold_quality(folds, y, h, k=k)} for m, s, folds in plan])
    baselines = baseline_rows(graph, plan, k=k)

    grid = dict(seeds=seeds, methods=methods, protocol=protocol, execution=execution, covariate=covariate)
    with tempfile.TemporaryDirectory(prefix="hpstrat-audit-") as tmp:
        folder = Path(out) if out is not None else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)

        atomic_write(folder / META_FILE, lambda t: Path(t).write_text(json.dumps(meta, indent=1)))
        atomic_write(folder / QUALITY_FILE, lambda t: quality.to_csv(t, index=False))
        atomic_write(folder / BASELINES_FILE, lambda t: baselines.to_csv(t, index=False))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=SMALL_CLASS_WARNING)
            rows = run_experiment([graph], models=models, out=folder / ROWS_FILE, **grid)
    mine = rows[(rows["dataset"] == graph.name) & rows["model"].isin(labels) & rows["method"].isin(methods)
                & rows["seed"].isin(seeds) & (rows["k"] == k) & (rows["n_bins"] == n_bins)
                & (rows["max_epochs"] == max_epochs) & (rows["patience"] == patience)
                & np.logical_and.reduce([rows[c].map(key_value) == key_value(v)
                                         for c, v in training_values(protocol).items()])]
    mine = mine.drop_duplicates(["model", "method", "seed", "fold"], keep="last")
    order = {m: i for i, m in enumerate(labels)}
    mine = mine.sort_values(["model", "method", "seed", "fold"], key=lambda c: c.map(order) if c.name == "model"
                            else c.map({m: i for i, m in enumerate(methods)}) if c.name == "method" else c,
                            kind="stable")
    result = AuditResult.from_rows(mine, quality, metric=metric, baselines=baselines, class_counts=counts,
                                   graph_changes=changes)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=SMALL_CLASS_WARNING)
        table = necessity_table(graph, metric=metric, k=k, seed=seeds[0]) if necessity else None
    if table is not None and out is not None:
        atomic_write(Path(out) / NECESSITY_FILE, lambda t: table.to_csv(t, index=False))
    return dataclasses.replace(result, necessity=table)


def necessity_table(graph, *, metric: str, k: int, seed: int) -> pd.DataFrame | None:
    """The necessity estimate of ``graph`` as a table (one row per estimate, with the ``verdict``, the
    estimated ``gap`` and its ``metric``): ROC-AUC when the audit scores ROC-AUC on two classes, else
    accuracy (the estimate's ROC-AUC is binary). None for a graph without node features (identity
    features included: the probes need features)."""
    from .data.graphs import graph_changes

    if getattr(graph, "x", None) is None or graph_changes(graph).get("identity_features"):
        return None
    metric = "roc_auc" if metric == "roc_auc" and int(graph.num_classes) == 2 else "accuracy"
    estimate = necessity_estimate(graph, metric=metric, k=k, seed=seed)
    return estimate.table().assign(verdict=estimate.verdict, gap=estimate.gap, metric=metric)


def load_audit(out, *, metric: str | None = None) -> AuditResult:
    """The :class:`AuditResult` of an audit written to the folder ``out`` (``rows.csv``, ``quality.csv``,
    and ``baselines.csv`` / ``audit.json`` / ``necessity.csv`` where present), on ``metric`` (default: the
    audit's own)."""

    folder = Path(out)
    for name in (ROWS_FILE, QUALITY_FILE):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{str(folder / name)!r} does not exist; run audit(..., out={str(folder)!r}) "
                                    f"(or hpstrat audit --out {folder}) first.")
    meta = json.loads((folder / META_FILE).read_text()) if (folder / META_FILE).is_file() else {}
    baselines = pd.read_csv(folder / BASELINES_FILE) if (folder / BASELINES_FILE).is_file() else None
    result = AuditResult.from_rows(read_rows(folder / ROWS_FILE), pd.read_csv(folder / QUALITY_FILE),
                                   metric=metric or meta.get("metric", "accuracy"), baselines=baselines,
                                   class_counts=meta.get("class_counts"), graph_changes=meta.get("changes"))
    if (folder / NECESSITY_FILE).is_file():
        result = dataclasses.replace(result, necessity=pd.read_csv(folder / NECESSITY_FILE))
    return result


# ----------------------------------------------------------------------------------------------
# Baselines, checks
# ----------------------------------------------------------------------------------------------

def baseline_rows(graph, plan, *, k: int) -> pd.DataFrame:
    """The majority-class and feature-only logistic-regression baselines on every round of ``plan``.

    ``plan`` is a list of ``(method, seed, folds)``; round i trains on the folds other than i and i + 1
    mod k, is scored on fold i (test) and i + 1 (validation), as the models are. ``majority`` predicts the
    training nodes' most frequent class with a constant score (ROC-AUC 50); ``logistic`` is
    scikit-learn's ``LogisticRegression`` (L2, C = 1, lbfgs) on the standardised node features, no graph.
    Returns one row per (baseline, method, seed, fold) with the ``val_*`` and ``test_*`` columns of
    :data:`hpstrat_lite.engine.metrics.METRICS`.
    """
    import scipy.sparse as sp
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from .engine.metrics import classification_scores

    y = graph.y.numpy().astype(np.int64)
    n_classes = int(y.max()) + 1
    x = getattr(graph, "x", None)
    features = None
    if x is not None:
        x = x.to_dense() if x.layout != __import__("torch").strided else x
        dense = x.numpy().astype(np.float64)
        if (dense != 0).mean() < 0.2:
            features = StandardScaler(with_mean=False).fit_transform(sp.csr_matrix(dense))
        else:
            features = StandardScaler().fit_transform(dense)
    rows = []
    for method, seed, folds in plan:
        for fold in range(k):
            test, val = folds == fold, folds == (fold + 1) % k
            train = ~(test | val)
            majority = np.zeros((len(y), n_classes))
            majority[:, np.bincount(y[train], minlength=n_classes).argmax()] = 1.0
            scored = [("majority", majority)]
            if features is not None:
                model = LogisticRegression(max_iter=300)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model.fit(features[train], y[train])
                probs = np.zeros((len(y), n_classes))
                probs[:, model.classes_] = model.predict_proba(features)
                scored.append(("logistic", probs))
            for name, probs in scored:
                row = {"baseline": name, "method": method, "seed": seed, "fold": fold}
                for split, mask in (("val", val), ("test", test)):
                    for metric, value in classification_scores(probs, y, mask=mask).items():
                        row[f"{split}_{METRICS[metric]}"] = value
                rows.append(row)
    return pd.DataFrame(rows)


def _class_warnings(y: np.ndarray, k: int) -> np.ndarray:
    """Warn (``UserWarning``) for a class smaller than k, as scikit-learn's ``StratifiedKFold`` does, and
    for a class of a single node; returns the nodes per class."""
    counts = np.bincount(y)
    present = np.flatnonzero(counts)
    single = [int(c) for c in present if counts[c] == 1]
    if single:
        warnings.warn(f"class(es) {single} have a single node: no fold can both train on and test such a class.",
                      UserWarning, stacklevel=3)
    small = [int(c) for c in present if counts[c] < k]
    if small:
        warnings.warn(f"the least populated class ({small[0]}) has {int(counts[small[0]])} node(s), fewer than "
                      f"k={k}: some folds test none of class(es) {small} (as scikit-learn's StratifiedKFold warns).",
                      UserWarning, stacklevel=3)
    return counts


def graph_identity(graph) -> dict[str, str]:
    """Content hashes (SHA-1, 16 hex digits, of the shape, dtype and bytes) of what changes an audit's runs:
    the canonical graph's ``edges`` (``edge_index``), ``labels`` (``y``) and ``features`` (``x``)."""
    def digest(array) -> str:
        array = np.ascontiguousarray(array)
        h = hashlib.sha1(f"{array.shape}{array.dtype}".encode())
        h.update(array.tobytes())
        return h.hexdigest()[:16]

    return {"edges": digest(graph.edge_index.numpy()), "labels": digest(graph.y.numpy()),
            "features": digest(graph.x.numpy())}


def _combined(identity: Mapping[str, str]) -> str:
    return hashlib.sha1("".join(identity[k] for k in sorted(identity)).encode()).hexdigest()[:16]


def _check_out_folder(folder: Path, meta: dict) -> None:
    """Refuse, before anything is written, an ``out`` folder that holds the audit of another graph (edges,
    labels or features differ), of another covariate, or rows of another protocol."""
    path = folder / META_FILE
    refuse = f"name another folder (nothing in {str(folder)!r} was changed)."
    if path.is_file():
        old = json.loads(path.read_text())
        if "identity" not in old:
            raise ValueError(f"out={str(folder)!r} holds an audit of {old.get('dataset')!r} written before audits "
                             f"recorded the graph's features, so its runs cannot be matched to this graph; {refuse}")
        differ = [part for part in meta["identity"] if old["identity"].get(part) != meta["identity"][part]]
        if differ:
            raise ValueError(f"out={str(folder)!r} holds the audit of another graph ({old.get('dataset')!r}, "
                             f"{old.get('num_nodes')} nodes, id {old.get('graph')}); this one is {meta['dataset']!r} "
                             f"({meta['num_nodes']} nodes, id {meta['graph']}), its {' and '.join(differ)} differ: "
                             f"{refuse}")
        if old.get("covariate") != meta["covariate"] and meta["covariate"] is not None and old.get("covariate"):
            raise ValueError(f"out={str(folder)!r} holds an audit of another covariate; {refuse}")
    rows = folder / ROWS_FILE
    if rows.is_file():
        names = sorted(map(str, read_rows(rows).get("dataset", pd.Series(dtype=str)).unique()))
        if names and names != [meta["dataset"]]:
            raise ValueError(f"out={str(folder)!r} holds the rows of another graph ({', '.join(names)}); this one is "
                             f"{meta['dataset']!r}: {refuse}")
        check_protocol(rows, **meta["protocol"])


def _show_progress() -> bool:
    """True when attached to a terminal or running in a Jupyter kernel."""
    if sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
        return True
    shell = sys.modules.get("IPython")
    try:
        return shell is not None and shell.get_ipython() is not None and "ipykernel" in sys.modules
    except Exception:  # an IPython without a running shell
        return False
