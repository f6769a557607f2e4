"""Audit a graph: do the split methods change what a k-fold evaluation of your models says?

:func:`audit` runs HpStrat's GNN experiment (Section 5) on one graph — a built-in dataset, a graph file
or a PyG ``Data`` (:func:`hpstrat_lite.data.graphs.as_graph`) — for a few models (built-in names and/or
factories of your own, :mod:`hpstrat_lite.engine.user_models`) and several split methods (random,
class-stratified and HpStrat k-fold by default; the controls "degree" and "placebo" and a covariate of
your own on request), and reads the result the way the paper's tables do, on the metric you choose
(``metric=``: accuracy, balanced accuracy, macro-F1 or ROC-AUC; every run records all four):

* ``std``: the cross-fold standard deviation of the test metric (points x 100), per model and method,
  averaged over split seeds (Section 5.2): lower means a protocol whose folds give more alike scores;
* ``score``: the mean test metric (points) per model and method, with ``baselines`` beside it: the
  majority-class score and a feature-only logistic regression trained on the same folds. A model whose
  score is within its own cross-fold std of the majority baseline under every method is listed in
  ``at_majority``: its spread measures how the folds hold the classes, not what it learned;
* ``ranks``: the methods ranked on the cross-fold std within each (model, split seed) block
  (1 = lowest spread), mean over seeds per model and overall (Table 3, :func:`hpstrat_lite.core.ranking.rank_methods`);
* ``friedman``: a Friedman test of the methods with the (model, split seed) pairs as blocks, so that
  seeds add blocks: with ``n`` blocks and ``m`` methods the smallest p-value the design can reach is
  :math:`P(\\chi^2_{m-1} \\geq n (m - 1))` (every block ranks the methods alike); the result states it and
  how many blocks a significant answer needs at the observed agreement (Kendall's
  :math:`W = \\chi^2 / (n (m - 1))`). With ``pvalue >= 0.05`` the audit is *inconclusive*;
* ``best_model``: the model with the highest mean test metric under each split method (Appendix E); a
  lead counts only when it exceeds the cross-seed spread of that lead (:func:`best_model_rule`), and the
  best model *changes* only when two methods have different leaders that both count;
* ``quality``: SDD, CDD, CHD and W1 of every method's folds (Section 4.2, :func:`hpstrat_lite.fold_quality`),
  mean over split seeds.

Model selection and early stopping stay on the validation loss under every metric (the paper's protocol).
"""
from __future__ import annotations

import dataclasses
import json
import math
import sys
import tempfile
import warnings
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from ._extras import require
from .core._validate import check_bool, check_choice, check_covariate, check_int, check_k, check_seeds
from .core.covariates import node_degree
from .core.homophily import node_homophily
from .core.quality import fold_quality
from .experiments.probes import necessity
from .experiments.sweep import COVARIATE_METHOD, check_sweep_protocol, run_experiment, split_folds
from .protocol import PAPER_PROTOCOL, Execution, Protocol, check_protocol_value
from ._format import findings_box, format_number
from .rows import METRICS, key_value, read_rows, training_values
from ._io import atomic_write
from .core.ranking import rank_methods

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from torch import nn
    from torch_geometric.data import Data

#: Files an audit with ``out=`` writes: the result rows (one per run, resumable), the fold quality of every
#: (method, seed), the baselines' rows of every (method, seed, fold) and what the folder audits (graph, metric).
ROWS_FILE, QUALITY_FILE, BASELINES_FILE, META_FILE = "rows.csv", "quality.csv", "baselines.csv", "audit.json"
#: The necessity estimate of the graph (:func:`hpstrat_lite.experiments.probes.necessity`): one row per estimate.
NECESSITY_FILE = "necessity.csv"
#: Below this Friedman p-value the split methods' spreads are said to differ.
ALPHA = 0.05
METRIC_NAMES = {"accuracy": "accuracy", "balanced_accuracy": "balanced accuracy", "macro_f1": "macro-F1",
                "roc_auc": "ROC-AUC"}
#: Two classes whose larger one holds at least this share of the nodes count as imbalanced: the summary
#: then suggests ``metric="roc_auc"``, which a majority-class predictor cannot raise above 50.
IMBALANCED_SHARE = 0.65
#: The default split methods of an audit.
DEFAULT_METHODS = ("random", "stratified", "hpstrat")


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


def best_model_rule(per_seed: pd.DataFrame) -> pd.DataFrame:
    """The best model under each split method, and whether its lead is beyond the cross-seed spread.

    ``per_seed`` has one row per (model, method, seed) with ``mean`` (the mean test metric over folds).
    For each method the leader is the model of highest mean over seeds and the runner-up the next; the
    lead is the mean over seeds of the per-seed difference leader - runner-up, the spread its sample std
    over seeds (ddof = 1). The lead *counts* when lead > spread (a leader that loses on some seeds by
    as much as it wins on others does not count); with one split seed the spread is unknown and no lead
    counts.

    Returns one row per method: ``best``, ``runner_up``, ``lead``, ``spread``, ``counts``.
    """
    out = {}
    for method, part in per_seed.groupby("method", sort=False):
        wide = part.pivot(index="seed", columns="model", values="mean")
        order = wide.mean().sort_values(ascending=False)
        best = order.index[0]
        if len(order) < 2:
            out[method] = {"best": best, "runner_up": None, "lead": float("nan"), "spread": float("nan"),
                           "counts": False}
            continue
        second = order.index[1]
        diff = (wide[best] - wide[second]).dropna()
        lead = float(diff.mean())
        spread = float(diff.std(ddof=1)) if len(diff) > 1 else float("nan")
        out[method] = {"best": best, "runner_up": second, "lead": lead, "spread": spread,
                       "counts": bool(spread == spread and lead > spread)}
    return pd.DataFrame.from_dict(out, orient="index")


def best_model_changes(rule: pd.DataFrame) -> bool:
    """True when two split methods have different best models and both leads count (:func:`best_model_rule`)."""
    counted = rule[rule["counts"]]
    return bool(counted["best"].nunique() > 1)


# ----------------------------------------------------------------------------------------------
# The result
# ----------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, repr=False)
class AuditResult:
    """What :func:`audit` found on one graph (see the module docstring for each table).

    Attributes
    ----------
    rows : DataFrame
        One row per (model, method, seed, fold), the columns of :func:`hpstrat_lite.experiments.sweep.run_experiment`.
    metric : str
        The metric of the tables (a key of :data:`hpstrat_lite.rows.METRICS`).
    std, score : DataFrame
        Cross-fold std and mean of the test metric (points x 100) per model and method, mean over seeds.
    baselines : DataFrame
        Mean test metric (points) of the ``majority`` and ``logistic`` baselines per method (empty when
        the folder has no baselines file).
    at_majority : list of str
        Models within noise of the majority baseline under every method.
    ranks : DataFrame
        Mean rank of each method per model (over seeds), and a last row ``mean`` over every block.
    friedman : FriedmanResult
    best : DataFrame
        :func:`best_model_rule` per method.
    best_model : Series
        The best model per method, and ``changes`` (:func:`best_model_changes`).
    quality : DataFrame
        SDD, CDD, CHD, W1 per method, mean over seeds.
    dataset : str
    class_counts : list of int or None
        Nodes per class of the graph (from the folder's ``audit.json``).
    necessity : DataFrame or None
        Does the graph help? The cheap estimate of :func:`hpstrat_lite.experiments.probes.necessity` on the
        same graph (``estimate``, ``value``, ``low``, ``high``, ``verdict``, ``gap``), or None when it could not
        be computed (a graph without features).
    """

    rows: pd.DataFrame
    metric: str
    std: pd.DataFrame
    score: pd.DataFrame
    baselines: pd.DataFrame
    at_majority: list
    ranks: pd.DataFrame
    friedman: FriedmanResult
    best: pd.DataFrame
    best_model: pd.Series
    quality: pd.DataFrame
    dataset: str
    class_counts: list | None = None
    necessity: pd.DataFrame | None = None

    @classmethod
    def from_rows(cls, rows: pd.DataFrame, quality: pd.DataFrame, *, metric: str = "accuracy",
                  baselines: pd.DataFrame | None = None, class_counts=None) -> "AuditResult":
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
        best = best_model_rule(per_seed).reindex(methods)
        best_model = pd.Series({**best["best"].to_dict(), "changes": best_model_changes(best)}, name="best model")
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
        counts = None if class_counts is None else [int(c) for c in class_counts]
        return cls(rows=rows.reset_index(drop=True), metric=metric, std=std, score=score, baselines=base,
                   at_majority=at_majority, ranks=ranks, friedman=friedman, best=best, best_model=best_model,
                   quality=quality, dataset=str(datasets[0]), class_counts=counts)

    @property
    def metric_name(self) -> str:
        return METRIC_NAMES[self.metric]

    @property
    def conclusive(self) -> bool:
        """True when the Friedman test says the methods' spreads differ (p < :data:`ALPHA`)."""
        return bool(self.friedman.pvalue < ALPHA)  # NaN (too few blocks or methods) compares False

    @property
    def imbalanced_binary(self) -> bool:
        """Two classes, the larger holding at least :data:`IMBALANCED_SHARE` of the nodes."""
        counts = [c for c in (self.class_counts or []) if c > 0]
        return len(counts) == 2 and max(counts) / sum(counts) >= IMBALANCED_SHARE

    def best_model_line(self) -> str:
        """One line: the best model under each split method, whether its lead counts, and whether it changes."""
        parts = []
        for method, r in self.best.iterrows():
            if r["runner_up"] is None or r["runner_up"] != r["runner_up"]:
                parts.append(f"{method}: {r['best']}")
                continue
            spread = "unknown with one seed" if r["spread"] != r["spread"] else f"{r['spread']:.2f}"
            parts.append(f"{method}: {r['best']} (lead {r['lead']:+.2f} over {r['runner_up']}, cross-seed spread "
                         f"{spread}: {'counts' if r['counts'] else 'within noise'})")
        per = "; ".join(parts)
        what = f"best model (highest mean test {self.metric_name}; a lead counts when it exceeds its cross-seed spread)"
        if self.best_model["changes"]:
            return f"{what} CHANGES with the split method: {per}."
        if not self.best["counts"].any():
            return f"{what}: no clear best model under any split method; {per}."
        return f"{what}: does not change with the split method; {per}."

    def design_line(self) -> str:
        """What the Friedman design can answer: its smallest p-value and the blocks a significant answer needs."""
        f = self.friedman
        n_models = len(self.std)
        if f.n_methods < 2:
            return "the Friedman test needs at least 2 split methods."
        if f.blocks_needed is None:
            return ""
        seeds_needed = math.ceil(f.blocks_needed / max(n_models, 1))
        line = (f"design: the blocks are (model, split seed) pairs, {f.n_blocks} here; the smallest p-value "
                f"{f.n_blocks} blocks and {f.n_methods} methods can give is {f.min_pvalue:.3g} (every block ranking "
                f"the methods alike), and such a perfectly consistent ordering reaches p < {ALPHA} from "
                f"{f.blocks_needed} blocks on ({seeds_needed} split seed(s) with {n_models} model(s))")
        if f.pvalue == f.pvalue and f.pvalue >= ALPHA:
            if f.blocks_needed_observed is None:
                line += "; at the observed agreement (Kendall's W = 0) no number of blocks would."
            else:
                more = math.ceil(f.blocks_needed_observed / max(n_models, 1))
                line += (f"; at the observed agreement (Kendall's W = {f.kendall_w:.2f}) about "
                         f"{f.blocks_needed_observed} blocks ({more} split seeds with {n_models} model(s)).")
        else:
            line += "."
        return line

    def verdict(self) -> str:
        """The result in words: which method gives the most stable folds, whether that is significant, and
        whether the models it rests on learned more than the majority class."""
        mean = self.ranks.loc["mean"].sort_values()
        lowest = mean.index[0]
        f = self.friedman
        p, stat = f.pvalue, f.statistic
        what = f"cross-fold spread of test {self.metric_name}"
        if p != p:
            head = (f"inconclusive: the Friedman test needs at least 2 blocks and 2 split methods "
                    f"(got {f.n_blocks} (model, seed) block(s), {f.n_methods} method(s)).")
        elif p >= ALPHA:
            head = (f"inconclusive: Friedman p = {p:.3g} >= {ALPHA} over {f.n_blocks} (model, seed) blocks; the split "
                    f"methods' {what} differ no more than chance would make them (the design's smallest "
                    f"reachable p is {f.min_pvalue:.3g}).")
        else:
            head = (f"the split methods differ (Friedman chi2 = {stat:.2f}, p = {p:.3g} < {ALPHA}, {f.n_blocks} "
                    f"(model, seed) blocks): {lowest} gives the lowest {what} (mean rank {mean.iloc[0]:.2f}).")
        models = list(self.std.index)
        if self.at_majority and len(self.at_majority) == len(models):
            head += (" Every model scores within noise of the majority-class baseline, so this rests only on "
                     "models that learned no more than the class shares: the spreads measure how the folds hold "
                     "the classes, not the models.")
        elif self.at_majority:
            head += (f" Models within noise of the majority-class baseline (their spreads measure the folds' class "
                     f"shares): {', '.join(map(str, self.at_majority))}.")
        ranking = ", ".join(f"{m} {r:.2f}" for m, r in mean.items())
        return f"{head} Mean ranks (1 = lowest spread): {ranking}. {self.best_model_line()}"

    def key_findings(self) -> str:
        """The audit's "Key findings" box, in Markdown (:func:`hpstrat_book.display.findings_box`): the
        Friedman verdict on the split methods' spreads, the measured cross-fold std of each method (mean over
        the models and split seeds), whether the best model changes, the models within noise of the majority
        baseline, and the methods with the lowest CHD and CDD."""
        f, name = self.friedman, self.metric_name
        mean = self.ranks.loc["mean"].sort_values()
        if f.pvalue != f.pvalue:
            answer = (f"**inconclusive** (the Friedman test needs at least 2 blocks and 2 split methods; got "
                      f"{f.n_blocks} (model, seed) block(s), {f.n_methods} method(s))")
        elif f.pvalue >= ALPHA:
            answer = (f"**inconclusive** (Friedman p = {format_number(f.pvalue, kind='p')} >= {ALPHA} over "
                      f"{f.n_blocks} (model, seed) blocks; the smallest p this design can reach is "
                      f"{format_number(f.min_pvalue, kind='p')})")
        else:
            answer = (f"**yes**: {mean.index[0]} gives the lowest (mean rank {mean.iloc[0]:.2f}; Friedman p = "
                      f"{format_number(f.pvalue, kind='p')} < {ALPHA} over {f.n_blocks} (model, seed) blocks)")
        spread = self.std.mean()
        lowest = self.std.idxmin(axis=1).dropna()
        bullets = [f"Do the split methods change the cross-fold spread of test {name}? {answer}.",
                   f"Cross-fold std of test {name} (points, mean over the models and split seeds): "
                   + ", ".join(f"{m} {v:.2f}" for m, v in spread.items())
                   + "; lowest per model: " + ", ".join(f"{model}: {m}" for model, m in lowest.items()) + "."]
        leaders = ", ".join(f"{m}: {b}" for m, b in self.best["best"].items())
        if self.best_model["changes"]:
            bullets.append(f"The best model **changes** with the split method ({leaders}).")
        elif not self.best["counts"].any():
            bullets.append(f"No model leads by more than its cross-seed spread under any split method ({leaders}).")
        else:
            bullets.append(f"The best model does not change with the split method ({leaders}).")
        if self.at_majority:
            bullets.append("Within noise of the majority-class baseline (their spreads measure the folds' class "
                           f"shares): {', '.join(map(str, self.at_majority))}.")
        elif "majority" in self.baselines.index:
            bullets.append("Every model scores beyond its own spread of the majority-class baseline.")
        if {"chd", "cdd"} <= set(self.quality.columns) and len(self.quality):
            def lowest_of(metric):  # every method at the lowest value (ties within 1e-12)
                col = self.quality[metric]
                return f"{' and '.join(col.index[col <= col.min() + 1e-12])} ({format_number(col.min())})"

            bullets.append(f"Fold quality: lowest CHD {lowest_of('chd')}, lowest CDD {lowest_of('cdd')}.")
        return findings_box(bullets, source="this audit's runs")

    def score_table(self) -> pd.DataFrame:
        """The models' mean test metric with the baselines below them and a ``vs majority`` column."""
        table = pd.concat([self.score, self.baselines.rename(index=lambda b: f"[{b} baseline]")])
        if len(self.baselines):
            table["vs majority"] = ["within noise" if m in self.at_majority else "" for m in self.score.index] + \
                                   [""] * len(self.baselines)
        return table

    def summary(self) -> str:
        """A plain-text report: the tables, the Friedman test and its design, the verdict, fold quality."""
        n_seeds = self.rows["seed"].nunique()
        k = int(self.rows["k"].iloc[0])
        fmt = {"float_format": lambda v: f"{v:.2f}"}
        f = self.friedman
        lines = [f"audit of {self.dataset}: k = {k}, {n_seeds} split seed(s), {len(self.std)} model(s), "
                 f"{len(self.rows)} runs; metric: test {self.metric_name} (points x 100; model selection and early "
                 f"stopping on the validation loss)"]
        if self.imbalanced_binary and self.metric != "roc_auc":
            share = max(self.class_counts) / sum(self.class_counts)
            lines.append(f"note: the labels are binary and imbalanced (the larger class holds {share:.0%} of the "
                         f"nodes); metric='roc_auc' (--metric roc_auc) scores what a majority-class predictor cannot.")
        lines += ["", f"cross-fold std of test {self.metric_name} (points; lower = more stable folds), mean over seeds:",
                  self.std.to_string(**fmt),
                  "", f"mean test {self.metric_name} (points), with the baselines on the same folds:",
                  self.score_table().to_string(**fmt),
                  "", "ranks of the split methods per model (1 = lowest std; mean over seeds):",
                  self.ranks.to_string(**fmt),
                  "", f"Friedman test over (model, seed) blocks: statistic = {f.statistic:.3f}, p = {f.pvalue:.4g}"
                      + (" (inconclusive)" if not self.conclusive else ""),
                  self.design_line(),
                  self.best_model_line(),
                  "", "fold quality (mean over seeds; lower is better):",
                  self.quality.to_string(float_format=lambda v: f"{v:.4f}"),
                  "", "verdict: " + self.verdict()]
        lines += ["", self.necessity_line()]
        return "\n".join(lines)

    def necessity_line(self) -> str:
        """Whether a graph model is worth it on this graph: the verdict of the cheap estimate."""
        if self.necessity is None or self.necessity.empty:
            return "does the graph help? not estimated (the graph has no node features)."
        n = self.necessity.iloc[0]
        gains = self.necessity[np.isfinite(self.necessity["low"].astype(float))]
        probe = gains[gains["estimate"] == "probe_gain"]
        interval = (f" [{probe['low'].iloc[0]:+.2f}, {probe['high'].iloc[0]:+.2f}]" if len(probe) else "")
        return (f"does the graph help? {n['verdict']} (cheap estimate: linear probe on propagated features minus "
                f"on features alone, {n['gap']:+.2f} points{interval}; hpstrat necessity)")

    def __repr__(self) -> str:
        return (f"AuditResult(dataset={self.dataset!r}, metric={self.metric!r}, models={list(self.std.index)}, "
                f"methods={list(self.std.columns)}, runs={len(self.rows)}, friedman_p={self.friedman.pvalue:.4g})\n"
                + self.summary())

    def plot(self, ax=None):
        """Figure of the cross-fold spread: per model, each method's std of the test metric (points)."""
        plt = require("matplotlib.pyplot", extra="reports")

        if ax is None:
            _, ax = plt.subplots(figsize=(1.6 + 1.1 * len(self.std), 3.2))
        self.std.plot.bar(ax=ax, rot=0, width=0.8)
        ax.set_ylabel(f"cross-fold std of test {self.metric_name} (points)")
        ax.set_xlabel("")
        ax.set_title(f"{self.dataset}: spread of test {self.metric_name} over folds")
        ax.legend(title="split method", fontsize="small")
        return ax


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
# Baselines, folds, checks
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


def _graph_id(graph) -> str:
    import hashlib

    digest = hashlib.sha1(graph.edge_index.numpy().tobytes())
    digest.update(graph.y.numpy().tobytes())
    return digest.hexdigest()[:16]


def _check_out_folder(folder: Path, meta: dict) -> None:
    """Refuse an ``out`` folder that holds the audit of another graph (or of another covariate)."""
    path = folder / META_FILE
    if path.is_file():
        old = json.loads(path.read_text())
        if old.get("graph") != meta["graph"]:
            raise ValueError(f"out={str(folder)!r} holds the audit of another graph ({old.get('dataset')!r}, "
                             f"{old.get('num_nodes')} nodes); this one is {meta['dataset']!r} ({meta['num_nodes']} "
                             f"nodes): name another folder.")
        if old.get("covariate") != meta["covariate"] and meta["covariate"] is not None and old.get("covariate"):
            raise ValueError(f"out={str(folder)!r} holds an audit of another covariate; name another folder.")
        return
    rows = folder / ROWS_FILE
    if rows.is_file():
        names = sorted(map(str, read_rows(rows).get("dataset", pd.Series(dtype=str)).unique()))
        if names and names != [meta["dataset"]]:
            raise ValueError(f"out={str(folder)!r} holds the rows of another graph ({', '.join(names)}); this one is "
                             f"{meta['dataset']!r}: name another folder.")


def _show_progress() -> bool:
    """True when attached to a terminal or running in a Jupyter kernel."""
    if sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
        return True
    shell = sys.modules.get("IPython")
    try:
        return shell is not None and shell.get_ipython() is not None and "ipykernel" in sys.modules
    except Exception:  # an IPython without a running shell
        return False


#: Every split method an audit knows, in the order of its tables.
ALL_AUDIT_METHODS = ("random", "stratified", "hpstrat", "degree", "placebo", "covariate")


# ----------------------------------------------------------------------------------------------
# The audit
# ----------------------------------------------------------------------------------------------

def audit(data: str | PathLike | Data,
          models: str | Callable[[int, int], nn.Module] | Sequence[str | Callable[[int, int], nn.Module]], *,
          seeds: Iterable[int] = (0,), methods: str | Sequence[str] = DEFAULT_METHODS, metric: str = "accuracy",
          covariate: ArrayLike | None = None, protocol: Protocol = PAPER_PROTOCOL,
          out: str | PathLike | None = None, root: str | PathLike | None = None,
          execution: Execution | None = None) -> AuditResult:
    """Audit one graph: train ``models`` on the folds of each split method and compare the spreads.

    The HpStrat protocol (Section 5): k-fold splits of each method and split seed (round i: test fold i,
    validation fold i + 1 mod k), each model trained on every round (Adam with ``protocol.lr`` and
    ``protocol.weight_decay``, the paper's 0.01 and 5e-4 by default, early stopping with
    ``protocol.patience`` on the validation loss, at most ``protocol.max_epochs`` epochs), every
    metric measured once with the best validation weights. Built-in models train batched
    (:func:`hpstrat_lite.engine.train.train_runs`); a factory's runs train one at a time (a pair costs R
    single runs) with the same protocol, folds and run seeds, each finished run saved so that a stopped
    audit resumes (:mod:`hpstrat_lite.engine.user_models`). The baselines (majority class, logistic
    regression on the features) are scored on the same folds.

    Every argument is checked before any work starts.

    Parameters
    ----------
    data : str, os.PathLike or torch_geometric.data.Data
        A dataset name, a graph file or a ``Data`` (:func:`hpstrat_lite.data.graphs.as_graph`).
    models : sequence
        Built-in model names (:data:`hpstrat_lite.engine.models.MODELS`), ``"module:function"`` strings or
        factories ``factory(in_channels, out_channels) -> torch.nn.Module``.
    seeds : iterable of int
        Split seeds.
    methods : sequence of str
        Split methods among :data:`ALL_AUDIT_METHODS`: "random", "stratified", "hpstrat" (default), the
        controls "degree" and "placebo" (:mod:`hpstrat_lite.core.covariates`) and "covariate" (needs
        ``covariate``).
    metric : {"accuracy", "balanced_accuracy", "macro_f1", "roc_auc"}
        The test metric of the tables (every run records all four). Binary imbalanced labels call for
        ``"roc_auc"``; the summary says so.
    covariate : array-like of shape (num_nodes,), optional
        A node covariate of yours for the split method "covariate" (uniform bins, then classes).
    protocol : Protocol
        The protocol (:class:`hpstrat_lite.protocol.Protocol`, default the paper's,
        :data:`hpstrat_lite.protocol.PAPER_PROTOCOL`): folds ``k`` (4), bins ``n_bins`` B of homophily,
        degree, placebo or your covariate (10), ``max_epochs`` (1000), ``patience`` (100), and the optimiser
        and architecture of the built-in models (``lr``, ``weight_decay``, ``hidden``, ``num_layers``,
        ``dropout``, ``feature_norm``); the rows record every field
        (:func:`hpstrat_lite.experiments.sweep.run_experiment`), and a folder holds the rows of one protocol.
    out : path, optional
        A folder: the rows go to ``out/rows.csv``, the fold quality to ``out/quality.csv``, the baselines to
        ``out/baselines.csv`` and what it audits to ``out/audit.json``; a rerun with the same ``out``
        trains only the runs missing there. A folder that holds another graph's audit is refused. Without
        it the files live in a temporary folder.
    root : path, optional
        Data root of the built-in datasets.
    execution : Execution, optional
        How the runs train (:class:`hpstrat_lite.protocol.Execution`): ``device``, ``progress`` (bars) and
        where the (graph, model) pairs train, ``executor="local"`` or ``"ray"`` with its ``ray_address``,
        ``workers``, ``cpus_per_pair`` and ``fresh_process`` (see
        :func:`hpstrat_lite.experiments.sweep.run_experiment`); factories travel with their task (a
        factory defined in a module must be importable on the Ray workers). Default: ``Execution()`` with
        progress bars when attached to a terminal or running in a notebook.

    Returns
    -------
    AuditResult
        ``.rows``, ``.std``, ``.score``, ``.baselines``, ``.at_majority``, ``.ranks``, ``.friedman``,
        ``.best_model``, ``.quality``; ``print(result)`` or ``result.summary()`` gives the report in text.

    Examples
    --------
    >>> from hpstrat_lite import audit                                             # doctest: +SKIP
    >>> result = audit("graph.npz", ["GCN", "mypkg.nets:make"], seeds=[0, 1, 2], metric="roc_auc",
    ...                out="audit")                                                # doctest: +SKIP
    >>> quick = PAPER_PROTOCOL.replace(max_epochs=200, patience=50)                # doctest: +SKIP
    >>> result = audit("Texas", ["GCN", "MLP"], protocol=quick, execution=Execution(device="cpu"),
    ...                out="audit-texas")                                          # doctest: +SKIP
    >>> print(result.summary())                                                    # doctest: +SKIP
    """
    from .data.graphs import as_graph
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
    resolve_device(execution.device)

    graph = as_graph(data, root=root)
    y = graph.y.numpy().astype(np.int64)
    check_k(k, graph.num_nodes)
    if covariate is not None:
        covariate = check_covariate(covariate, graph.num_nodes)
    counts = _class_warnings(y, k)
    meta = {"dataset": graph.name, "graph": _graph_id(graph), "num_nodes": int(graph.num_nodes),
            "class_counts": counts.tolist(), "metric": metric,
            "covariate": None if covariate is None else __import__("hashlib").sha1(covariate.tobytes()).hexdigest()[:16]}
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
    result = AuditResult.from_rows(mine, quality, metric=metric, baselines=baselines, class_counts=counts)
    table = necessity_table(graph, metric=metric, k=k, seed=seeds[0])
    if table is not None and out is not None:
        atomic_write(Path(out) / NECESSITY_FILE, lambda t: table.to_csv(t, index=False))
    return dataclasses.replace(result, necessity=table)


def necessity_table(graph, *, metric: str, k: int, seed: int) -> pd.DataFrame | None:
    """The necessity estimate of ``graph`` as a table (one row per estimate, with the ``verdict`` and the
    estimated ``gap``); ROC-AUC when the audit scores ROC-AUC, else accuracy. None for a graph without
    node features (the probes need them)."""

    if getattr(graph, "x", None) is None:
        return None
    estimate = necessity(graph, metric="roc_auc" if metric == "roc_auc" else "accuracy", k=k, seed=seed)
    return estimate.table().assign(verdict=estimate.verdict, gap=estimate.gap)


def load_audit(out, *, metric: str | None = None) -> AuditResult:
    """The :class:`AuditResult` of an audit written to the folder ``out`` (``rows.csv``, ``quality.csv``,
    and ``baselines.csv`` / ``audit.json`` where present), on ``metric`` (default: the audit's own)."""

    folder = Path(out)
    for name in (ROWS_FILE, QUALITY_FILE):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{str(folder / name)!r} does not exist; run audit(..., out={str(folder)!r}) "
                                    f"(or hpstrat audit --out {folder}) first.")
    meta = json.loads((folder / META_FILE).read_text()) if (folder / META_FILE).is_file() else {}
    baselines = pd.read_csv(folder / BASELINES_FILE) if (folder / BASELINES_FILE).is_file() else None
    result = AuditResult.from_rows(read_rows(folder / ROWS_FILE), pd.read_csv(folder / QUALITY_FILE),
                                   metric=metric or meta.get("metric", "accuracy"), baselines=baselines,
                                   class_counts=meta.get("class_counts"))
    if (folder / NECESSITY_FILE).is_file():
        result = dataclasses.replace(result, necessity=pd.read_csv(folder / NECESSITY_FILE))
    return result


#: The notebook :func:`render_report` executes (shipped with the package).
REPORT_TEMPLATE = Path(__file__).resolve().parent / "templates" / "audit_report.ipynb"
REPORT_FILE = "report.html"


def render_report(out, *, template=None, kernel_name: str = "python3") -> Path:
    """Write the one-page report ``out/report.html`` of an audit written to the folder ``out``.

    The template notebook (default :data:`REPORT_TEMPLATE`) is executed with papermill (parameter
    ``out``: it reads ``rows.csv`` and ``quality.csv`` there with :func:`load_audit`) and converted to
    HTML without its code cells by nbconvert: the fold-quality table, a figure of the cross-fold spread
    per model and method, the tables of the audit and the verdict in words. Needs papermill, nbconvert
    and a Jupyter kernel ``kernel_name`` that imports this library (the ``book`` extra installs them).

    Raises
    ------
    FileNotFoundError
        ``out`` lacks the audit's files, or the template is missing.
    RuntimeError
        The template notebook failed (the message names the error).
    """
    import nbformat

    try:
        import papermill as pm
        from nbconvert import HTMLExporter
    except ImportError as err:
        raise RuntimeError(f"the HTML report needs papermill and nbconvert ({err}); install them with "
                           f"pip install 'hpstrat_lite[book]'.") from None
    folder = Path(out).absolute()
    load_audit(folder)  # the files are there and readable, before a kernel starts
    template = Path(template) if template is not None else REPORT_TEMPLATE
    if not template.is_file():
        raise FileNotFoundError(f"report template {str(template)!r} does not exist.")
    with tempfile.TemporaryDirectory(prefix="hpstrat-report-") as tmp:
        executed = Path(tmp) / "report.ipynb"
        try:
            pm.execute_notebook(str(template), str(executed), parameters={"out": str(folder)},
                                kernel_name=kernel_name, cwd=str(folder), progress_bar=False, log_output=False)
        except pm.PapermillExecutionError as err:
            raise RuntimeError(f"the report notebook failed: {err.ename}: {err.evalue}") from None
        nb = nbformat.read(executed, as_version=4)
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)

    path = folder / REPORT_FILE
    atomic_write(path, lambda tmp: Path(tmp).write_text(body, encoding="utf-8"))
    return path
