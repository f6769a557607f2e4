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
* ``method_posthoc`` and ``model_posthoc``: the pairwise post-hoc tests that name a winner (the split
  method of lowest spread; the best model under each method): the leader against every other, a
  Wilcoxon signed-rank test over the independent units (the split seeds: the models of one seed share
  its folds), Holm-corrected; a winner is named only when every corrected p is below :data:`ALPHA`;
* ``convergence``: per model, the share of runs that stopped at ``max_epochs`` instead of early;
* ``quality``: SDD, CDD, CHD and W1 of every method's folds (Section 4.2), mean over split seeds.

Model selection and early stopping stay on the validation loss under every metric (the paper's protocol).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
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


# ----------------------------------------------------------------------------------------------
# Statistics
# ----------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class FriedmanResult:
    """Friedman test of the split methods (treatments) over the blocks ((model, split seed) pairs).

    ``min_pvalue`` is the smallest p-value ``n_blocks`` blocks and ``n_methods`` methods can give (every
    block ranks the methods alike); ``blocks_needed`` the fewest blocks with which that perfect agreement
    reaches p < :data:`ALPHA`; ``blocks_needed_observed`` the fewest with which the observed agreement
    (Kendall's W) would (``None`` when W = 0)."""

    statistic: float
    pvalue: float
    n_blocks: int
    n_methods: int = 3
    min_pvalue: float = float("nan")
    blocks_needed: int | None = None
    blocks_needed_observed: int | None = None

    @property
    def kendall_w(self) -> float:
        """Kendall's coefficient of concordance :math:`W = \\chi^2 / (n (m - 1))` (0: no agreement, 1: all
        blocks rank the methods alike)."""
        if self.n_blocks < 1 or self.n_methods < 2 or self.statistic != self.statistic:
            return float("nan")
        return self.statistic / (self.n_blocks * (self.n_methods - 1))


def friedman_blocks(table: pd.DataFrame) -> FriedmanResult:
    """Friedman test of the columns (methods) of ``table`` over its rows (blocks), lower or higher alike.

    :math:`\\chi^2_F = \\frac{12}{n m (m + 1)} \\sum_j R_j^2 - 3 n (m + 1)` on the within-block average ranks
    (column rank sums :math:`R_j`), divided by the tie correction
    :math:`1 - \\sum (t^3 - t) / (n m (m^2 - 1))` as ``scipy.stats.friedmanchisquare`` does;
    :math:`p = P(\\chi^2_{m-1} \\geq \\chi^2_F)`. Defined for ``m >= 2`` methods and ``n >= 2`` complete
    blocks (rows with a NaN are dropped); NaN otherwise.

    Examples
    --------
    >>> t = pd.DataFrame({"a": [1.0, 1, 1, 1, 1, 1], "b": [2.0, 2, 2, 2, 2, 2], "c": [3.0, 3, 3, 3, 3, 3]})
    >>> r = friedman_blocks(t)
    >>> round(r.statistic, 3), round(r.pvalue, 4), round(r.min_pvalue, 4), r.blocks_needed
    (12.0, 0.0025, 0.0025, 3)
    """
    from scipy.stats import chi2, rankdata

    wide = table.dropna()
    n, m = wide.shape
    min_p = float(chi2.sf(n * (m - 1), m - 1)) if m >= 2 and n >= 1 else float("nan")
    needed = _blocks_needed(1.0, m)
    if m < 2 or n < 2:
        return FriedmanResult(float("nan"), float("nan"), int(n), int(m), min_p, needed, None)
    values = wide.to_numpy(dtype=float)
    ranks = rankdata(values, axis=1)
    sums = ranks.sum(0)
    stat = 12.0 / (n * m * (m + 1)) * float((sums ** 2).sum()) - 3.0 * n * (m + 1)
    ties = 0.0
    for row in values:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts ** 3 - counts).sum())
    correction = 1.0 - ties / (n * m * (m * m - 1))
    if correction <= 0:  # every block a complete tie
        return FriedmanResult(0.0, 1.0, int(n), int(m), min_p, needed, None)
    stat = max(stat / correction, 0.0)
    p = float(chi2.sf(stat, m - 1))
    w = stat / (n * (m - 1))
    return FriedmanResult(float(stat), p, int(n), int(m), min_p, needed, _blocks_needed(w, m))


def _blocks_needed(w: float, m: int, *, limit: int = 100_000) -> int | None:
    """The fewest blocks n with :math:`P(\\chi^2_{m-1} \\geq W n (m - 1)) <` :data:`ALPHA` (None if W = 0)."""
    from scipy.stats import chi2

    if m < 2 or not w > 0:
        return None
    target = chi2.isf(ALPHA, m - 1)  # the statistic a significant answer needs
    n = max(1, math.ceil(target / (w * (m - 1))))
    while chi2.sf(w * n * (m - 1), m - 1) >= ALPHA and n < limit:  # strict inequality at the boundary
        n += 1
    return n if n < limit else None


@dataclasses.dataclass(frozen=True)
class PosthocResult:
    """The leader against every other treatment: Wilcoxon signed-rank tests over the independent units,
    Holm-corrected (the comparisons with the leader after an omnibus test, Demšar 2006, Section 3.2.2).

    ``others`` run from the closest to the leader (the runner-up) to the farthest; ``differences`` are
    the mean over units of how much better the leader is (points, positive: the leader is better);
    ``pvalues`` the two-sided Wilcoxon p-values, ``holm`` the same after Holm's step-down correction;
    ``min_pvalue`` the smallest two-sided p ``n_units`` units can give (:math:`2^{1 - n}`, every unit
    favouring the leader). ``best`` is the leader when every corrected p is below ``alpha``, else None."""

    leader: str
    others: tuple[str, ...]
    differences: tuple[float, ...]
    pvalues: tuple[float, ...]
    holm: tuple[float, ...]
    n_units: int
    unit: str = UNIT
    min_pvalue: float = float("nan")
    alpha: float = ALPHA

    @property
    def runner_up(self) -> str | None:
        return self.others[0] if self.others else None

    @property
    def best(self) -> str | None:
        """The leader when it differs from every other after correction; None otherwise."""
        if not self.others or not all(p < self.alpha for p in self.holm):  # NaN compares False
            return None
        return self.leader


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values: :math:`\\tilde p_{(i)} = \\max_{j \\leq i} \\min(1, (m - j + 1) p_{(j)})`
    over the p-values sorted ascending (Holm 1979); NaN stays NaN.

    >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    out[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    return out


def posthoc_vs_leader(wide: pd.DataFrame, *, higher_is_better: bool, unit: str = UNIT,
                      alpha: float = ALPHA) -> PosthocResult:
    """The best column of ``wide`` (one row per independent unit; best mean, highest when ``higher_is_better``)
    against each other: two-sided Wilcoxon signed-rank tests of the paired differences
    (``scipy.stats.wilcoxon``; all differences zero: p = 1), Holm-corrected (:func:`holm`). Rows with a NaN
    are dropped; with fewer than two rows every p is NaN (no spread to judge a lead).

    Examples
    --------
    >>> w = pd.DataFrame({"a": [80.0, 81, 79, 82, 80, 81, 83], "b": [70.0, 71, 69, 72, 71, 70, 69]})
    >>> r = posthoc_vs_leader(w, higher_is_better=True)
    >>> r.leader, r.best, round(r.pvalues[0], 4), r.n_units
    ('a', 'a', 0.0156, 7)
    """
    from scipy.stats import wilcoxon

    wide = wide.dropna()
    n = len(wide)
    means = wide.mean().sort_values(ascending=not higher_is_better, kind="stable")
    leader, others = str(means.index[0]), [str(c) for c in means.index[1:]]
    sign = 1.0 if higher_is_better else -1.0
    diffs, pvalues = [], []
    for other in others:
        d = sign * (wide[leader] - wide[other]).to_numpy(dtype=float)
        diffs.append(float(d.mean()) if n else float("nan"))
        if n < 2:
            pvalues.append(float("nan"))
        elif not np.any(d != 0):
            pvalues.append(1.0)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # scipy's note on ties / small samples
                pvalues.append(float(wilcoxon(d, alternative="two-sided").pvalue))
    min_p = float(min(1.0, 2.0 ** (1 - n))) if n >= 1 else float("nan")
    return PosthocResult(leader, tuple(others), tuple(diffs), tuple(pvalues), tuple(holm(pvalues).tolist()), int(n),
                         unit, min_p, alpha)


def method_units(per_seed: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    """The cross-fold std of each method per split seed, mean over the models (the seed is the unit)."""
    return per_seed.groupby(["seed", "method"])["std"].mean().unstack().reindex(columns=list(methods))


def model_posthoc(per_seed: pd.DataFrame, methods: Sequence[str]) -> dict[str, PosthocResult]:
    """Under each split method, the best model by mean test score against each other model, over split seeds
    (:func:`posthoc_vs_leader` on the per-seed means; a single model has no comparison and no best)."""
    out = {}
    for method in methods:
        part = per_seed[per_seed["method"] == method]
        if part.empty:
            continue
        out[method] = posthoc_vs_leader(part.pivot(index="seed", columns="model", values="mean"),
                                        higher_is_better=True)
    return out


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
    friedman : FriedmanResult
        The omnibus test of the methods' spreads over the (model, split seed) blocks.
    method_posthoc : PosthocResult
        The split method of lowest spread against each other method, over split seeds (:func:`posthoc_vs_leader`).
    model_posthoc : dict of str to PosthocResult
        Per split method, the model of highest mean score against each other model, over split seeds.
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
    method_posthoc: PosthocResult
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
        per_seed = per_seed_table(rows, column)
        std = _wide(per_seed, "std", models, methods)
        score = _wide(per_seed, "mean", models, methods)
        blocks = per_seed.assign(block=per_seed["model"].astype(str) + " / seed " + per_seed["seed"].astype(str))
        ranked = rank_methods(blocks, "std", blocks=("block",))
        ranks = ranked.groupby(["model", "method"])["rank"].mean().unstack().reindex(index=models, columns=methods)
        ranks.loc["mean"] = ranked.groupby("method")["rank"].mean().reindex(methods)
        friedman = friedman_blocks(blocks.pivot(index="block", columns="method", values="std")[methods])
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
                   at_majority=tuple(at_majority), ranks=ranks, friedman=friedman,
                   method_posthoc=posthoc_vs_leader(method_units(per_seed, methods), higher_is_better=False),
                   model_posthoc=model_posthoc(per_seed, methods), convergence=convergence_table(rows, models),
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
        return self.method_posthoc.best if self.conclusive else None

    @property
    def best_model(self) -> dict[str, str | None]:
        """Per split method, the model whose lead the pairwise tests confirm (None: no lead counts)."""
        return {method: r.best for method, r in self.model_posthoc.items()}

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


def per_seed_table(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """Std (ddof = 1) and mean over folds of ``100 * rows[column]`` per (model, method, seed)."""
    return (rows.assign(v=100 * rows[column]).groupby(["model", "method", "seed"], sort=False)["v"]
            .agg(["std", "mean"]).reset_index())


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
          out: str | PathLike | None = None, root: str | PathLike | None = None,
          execution: Execution | None = None, necessity: bool = True) -> AuditResult:
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
        A dataset name, a graph file or a ``Data`` (:func:`hpstrat_lite.data.graphs.as_graph`: string labels
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
    root : path, optional
        Data root of the built-in datasets.
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

    graph = as_graph(data, root=root)
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
