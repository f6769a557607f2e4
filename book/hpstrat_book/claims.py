"""The claims registry: every claim the book judges, defined once; every page renders it from here by id.

A :class:`Claim` states its id (shown beside its verdict on every page), its source (paper section / table, or
"this book"), the paper's figure, the rows it reads (:class:`hpstrat_book.claim_checks.Sources` fields), its unit
of analysis, its test (a function of :mod:`hpstrat_lite.stats`), its rule, whether it is checked on the committed
reruns, and whether its rows are the ones an effect was found on (*discovery*: shown as *exploratory*, no
verdict) or rows not used to find it (*held-out*). :func:`evaluate` turns a claim into a :class:`ClaimResult`
(verdict, our figure, p, unit name and count), cached per process and sources, so a claim has one verdict and
one figure wherever it appears: the front page, the key-findings boxes, the chapters and the scorecard
(:func:`claims_frame`). :func:`change_log` compares the verdicts with those of the previous rules
(``book/claims_before.csv``, written by the previous scorecard code).

Ids: ``H`` the HpStrat paper (Part I), ``N`` "Revisiting the Necessity of Graph Learning" (Part II), ``B`` this
book's own claims.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import pandas as pd

from . import claim_checks as cc
from .claim_checks import Evidence, Sources
from .paper_values import PAPER_GLOBAL_MEAN_RANK, PAPER_HPSTRAT_FIRST_DATASETS
from .paths import REPO, read_rows
from .scorecard import appendix_b_claims, bins_claims, bins_table, fold_metric_claims, part2_scorecard
from .verdicts import AGREES, DISAGREES, INCONCLUSIVE, VERDICTS

ALPHA = cc.ALPHA
ROLES = ("confirmation", "construction", "discovery", "held-out")


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim, defined once. ``rows``: the :class:`Sources` fields it reads; ``reruns``: checked on the
    independent committed reruns of the k = 4, seed 0 sweep; ``role``: one of :data:`ROLES`; ``check``: sources ->
    :class:`Evidence`; ``revision``: how its rule changed in the current rules (the change log's reason)."""

    id: str
    source: str
    statement: str
    paper: str
    rows: tuple
    unit: str
    test: str
    rule: str
    check: Callable
    chapter: str
    reruns: bool = False
    role: str = "confirmation"
    revision: str = ""

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}; got {self.role!r}.")


@dataclasses.dataclass(frozen=True)
class ClaimResult:
    """A claim and what its test found: ``claim`` (:class:`Claim`) and ``evidence`` (:class:`Evidence`)."""

    claim: Claim
    evidence: Evidence

    @property
    def verdict(self) -> str:
        return self.evidence.verdict

    @property
    def id(self) -> str:
        return self.claim.id

    def p_text(self) -> str:
        """``p = 0.023 over 36 (dataset, seed) units``, or what stands in for a test."""
        e = self.evidence
        if e.p == e.p:
            return f"{cc.p_text(e.p)} over {e.n} {e.unit} units" if e.unit else cc.p_text(e.p)
        return f"{e.n} {e.unit} units" if e.unit and e.n else "no p-value"

    def row(self) -> dict:
        c, e = self.claim, self.evidence
        return {"id": c.id, "section": c.source, "claim": c.statement, "paper": c.paper, "rule": c.rule,
                "ours": e.ours, "p (units)": self.p_text(), "p": e.p, "unit": e.unit, "n": e.n,
                "verdict": e.verdict, "chapter": c.chapter, "role": c.role, "rows": ", ".join(c.rows),
                "test": c.test}


# --------------------------------------------------------------------------------------------------
# The checks of the claims that wrap existing tables (fold metrics, Appendix B, Part II)


@functools.lru_cache(maxsize=4)
def _fold_claims(src: Sources) -> pd.DataFrame:
    from hpstrat_lite.data.datasets import load_dataset
    from hpstrat_lite.data.quality import quality_table

    graphs = [load_dataset(d, root=src.root, sparse_features=True) for d in src.datasets]
    quality = quality_table(graphs, k=src.k, seeds=src.seeds, n_bins=src.n_bins)
    return pd.concat([fold_metric_claims(quality), bins_claims(bins_table(graphs, bins=src.bins, k=src.k,
                                                                          seeds=src.seeds))], ignore_index=True)


def _fold(i):
    def check(src):
        r = _fold_claims(src).iloc[i]
        return Evidence(r["verdict"], r["ours"], unit="dataset", n=len(src.datasets))
    return check


@functools.lru_cache(maxsize=4)
def _appendix_b(src: Sources) -> pd.DataFrame:
    rows = read_rows([cc._path(src.appendix_b)])
    return appendix_b_claims(rows) if not rows.empty else pd.DataFrame()


def _appendix_b_check(i):
    def check(src):
        t = _appendix_b(src)
        if t.empty:
            return Evidence(INCONCLUSIVE, "not run: no Appendix B rows")
        r = t.iloc[i]
        # symmetric: too few significant slopes is no evidence against the claim
        verdict = INCONCLUSIVE if (i == 0 and r["verdict"] == DISAGREES) else r["verdict"]
        return Evidence(verdict, r["ours"], unit="random split", n=0)
    return check


@functools.lru_cache(maxsize=4)
def _part2(src: Sources) -> pd.DataFrame:
    return part2_scorecard(*src.part2)


def _part2_check(i):
    def check(src):
        r = _part2(src).iloc[i]
        return Evidence(r["verdict"], r["ours"], unit="evaluation seed", n=0)
    return check


def _part2_field(i, field):
    """A Part II claim's text as its own table states it (the rule thresholds come from the paper's numbers)."""
    return lambda src: _part2(src).iloc[i][field]


# --------------------------------------------------------------------------------------------------
# The registry


def _paper_ranks() -> str:
    return " / ".join(f"{PAPER_GLOBAL_MEAN_RANK[m]:.2f}" for m in ("hpstrat", "stratified", "random"))


def _sweep(field, fn, *, reruns=False, **kw):
    """A check of the rows of one :class:`Sources` field, with the one rerun rule when ``reruns``."""
    def check(src):
        paths = getattr(src, field)
        rows = cc._rows(tuple(paths) if isinstance(paths, (list, tuple)) else (paths,))
        if reruns:
            _, variants = cc.reruns_of(src)
            return cc.with_reruns(lambda r: fn(r, **kw), rows, variants)
        return fn(rows, **kw)
    return check


UNIT_DS = "(dataset, seed)"
PAIRED = "hpstrat_lite.stats.wilcoxon_test at the unit (paired_test_at_unit)"
RERUN_RULE = "; the same verdict on every independent committed rerun (near-copies of the sweep count once)"
UNITS_NOTE = ("tested over (dataset, seed) units (the GNNs of one graph and split seed share its folds), before over "
              "(dataset, GNN) pairs")

_C = []


def _add(**kw):
    _C.append(Claim(**kw))


for i, (key, text) in enumerate((("sdd", "all three methods tie on SDD, on every dataset"),
                                 ("cdd1", "class-stratified has the lowest CDD, on every dataset"),
                                 ("cdd2", "HpStrat has the second-lowest CDD, on every dataset"),
                                 ("chd", "HpStrat has the lowest CHD, on every dataset"))):
    _add(id=f"H{i + 1}", source="HpStrat Table 2", statement=text, paper="15/15 datasets", rows=("datasets",),
         unit="dataset", test="by construction (fold_metric_claims)",
         rule="by construction: checked on the mean over the seeds of every dataset (ties within 1e-12)",
         check=_fold(i), chapter="02b_fold_metrics_summary", role="construction")
_add(id="H5", source="HpStrat Appendix G", statement="HpStrat keeps the lowest CHD for every B",
     paper="B = 10 in the main text; Appendix G varies B", rows=("datasets",), unit="(dataset, B)",
     test="by construction (bins_claims)", rule="by construction: the lowest mean CHD on every (dataset, B) pair",
     check=_fold(4), chapter="05_appendix_g", role="construction")
for cid, other, name in (("H6", "stratified", "class-stratified"), ("H7", "random", "random")):
    _add(id=cid, source="HpStrat Section 5.2, k = 4, seed 0",
         statement=f"HpStrat's cross-fold std is smaller than {name} k-fold's",
         paper=f"smaller (mean ranks {_paper_ranks()}, HpStrat / class-stratified / random)", rows=("gnn", "reruns"),
         unit=UNIT_DS, test=PAIRED,
         rule=f"two-sided Wilcoxon of the GNN-mean cross-fold std over (dataset, seed) units, p < {ALPHA:g}: agrees "
              f"with HpStrat smaller, disagrees with HpStrat larger" + RERUN_RULE,
         check=_sweep("gnn", cc.stability, reruns=True, other=other), chapter="03_gnn_experiments", reruns=True,
         revision=UNITS_NOTE + "; one rerun rule")
_add(id="H8", source="HpStrat Table 3", statement="global mean rank of cross-fold std: HpStrat < class-stratified < random",
     paper=f"{_paper_ranks()} (15 datasets x 7 GNNs)", rows=("gnn", "reruns"), unit=UNIT_DS, test=PAIRED,
     rule=f"each adjacent pair tested (Wilcoxon over (dataset, seed) units, p < {ALPHA:g}): agrees when both hold, "
          "disagrees when one is significantly reversed" + RERUN_RULE,
     check=_sweep("gnn", cc.global_order, reruns=True), chapter="03_gnn_experiments", reruns=True,
     revision=UNITS_NOTE + "; disagrees needs a significant reversal")
_add(id="H9", source="HpStrat Table 3", statement="HpStrat has the best mean rank for every GNN", paper="7/7 GNNs",
     rows=("gnn", "reruns"), unit="dataset", test="hpstrat_lite.stats.posthoc (pairwise Wilcoxon, Holm), per GNN",
     rule=f"agrees when the post-hoc test names HpStrat best for every GNN; disagrees when another method is "
          f"significantly better than HpStrat for some GNN (Holm p < {ALPHA:g})" + RERUN_RULE,
     check=_sweep("gnn", cc.best_every_gnn, reruns=True), chapter="03_gnn_experiments", reruns=True,
     revision="disagrees needed no test (3/7 GNNs); now a winner or a loser needs the pairwise post-hoc test")
_add(id="H10", source="HpStrat Table 4", statement="HpStrat has the best mean rank on most datasets",
     paper=f"{PAPER_HPSTRAT_FIRST_DATASETS[0]}/{PAPER_HPSTRAT_FIRST_DATASETS[1]} datasets", rows=("gnn", "reruns"),
     unit="dataset", test="binomial test (scipy.stats.binomtest)",
     rule=f"\"most\": more than half the datasets, two-sided binomial test against one half, p < {ALPHA:g}" + RERUN_RULE,
     check=_sweep("gnn", cc.most_datasets, reruns=True), chapter="03_gnn_experiments", reruns=True,
     revision="the count now needs a binomial test")
_add(id="H11", source="HpStrat Table C.4", statement="HpStrat's cross-fold std is lower than random k-fold's on most pairs",
     paper="on most (dataset, model) pairs", rows=("gnn", "reruns"), unit=UNIT_DS, test="hpstrat_lite.stats.sign_test",
     rule=f"the paper's share of (dataset, GNN) pairs shown; two-sided sign test over (dataset, seed) units, "
          f"p < {ALPHA:g}" + RERUN_RULE,
     check=_sweep("gnn", cc.lower_than_random, reruns=True), chapter="03_gnn_experiments", reruns=True,
     revision=UNITS_NOTE + "; the rerun rule of H7 (it read the reruns' share only)")
for cid, other, name in (("H12", "stratified", "class-stratified"), ("H13", "random", "random")):
    _add(id=cid, source="HpStrat Section 5.2, k = 5, seed 0",
         statement=f"HpStrat's cross-fold std is smaller than {name} k-fold's (k = 5)", paper="smaller (k = 4)",
         rows=("gnn_k5",), unit=UNIT_DS, test=PAIRED,
         rule=f"two-sided Wilcoxon over (dataset, seed) units, p < {ALPHA:g}, symmetric",
         check=_sweep("gnn_k5", cc.stability, other=other), chapter="03b_gnn_experiments_k5", revision=UNITS_NOTE)
for cid, other, name in (("H14", "stratified", "class-stratified"), ("H15", "random", "random")):
    _add(id=cid, source="HpStrat Section 5.2, k = 4, seeds 0-5",
         statement=f"HpStrat's cross-fold std is smaller than {name} k-fold's (six split seeds)",
         paper="smaller (seed 0)", rows=("gnn_seeds",), unit=UNIT_DS, test=PAIRED,
         rule=f"two-sided Wilcoxon over (dataset, seed) units, p < {ALPHA:g}, symmetric",
         check=_sweep("gnn_seeds", cc.stability, other=other), chapter="03c_gnn_experiments_seeds",
         revision=UNITS_NOTE + " (averaged over seeds)")
_add(id="H16", source="HpStrat Table 3, k = 5", statement="global mean rank with k = 5 keeps HpStrat < class-stratified < random",
     paper=f"{_paper_ranks()} (k = 4; order only)", rows=("gnn_k5",), unit=UNIT_DS, test=PAIRED,
     rule="as H8, without reruns", check=_sweep("gnn_k5", cc.global_order), chapter="03b_gnn_experiments_k5",
     revision=UNITS_NOTE)
_add(id="H17", source="HpStrat Table 3, 6 seeds",
     statement="global mean rank over split seeds 0-5 keeps HpStrat < class-stratified < random",
     paper=f"{_paper_ranks()} (k = 4, seed 0; order only)", rows=("gnn_seeds",), unit=UNIT_DS, test=PAIRED,
     rule="as H8, without reruns", check=_sweep("gnn_seeds", cc.global_order), chapter="03c_gnn_experiments_seeds",
     revision=UNITS_NOTE)
_add(id="H18", source="HpStrat Appendix E", statement="the best model of a dataset changes with the split method",
     paper="8/15 datasets", rows=("gnn_seeds",), unit="dataset", test="Fisher's exact test (scipy.stats.fisher_exact)",
     rule=f"like with like: the paper's simple count (best model's name differs, split seed 0) against 8/15 by "
          f"Fisher's exact test (two-sided, p < {ALPHA:g}: disagrees); agrees when not and at least one change "
          "survives the cross-seed spread (strict count, shown beside)",
     check=_sweep("gnn_seeds", cc.appendix_e), chapter="03c_gnn_experiments_seeds",
     revision="our strict count was compared with the paper's simple count; now simple with simple")
_add(id="H19", source="HpStrat Appendix B", statement="test accuracy grows with test-fold mean homophily (OLS slope)",
     paper="several (dataset, model) pairs", rows=("appendix_b",), unit="random split", test="OLS t-test",
     rule="OLS slope of test accuracy on test-fold homophily, p < 0.05, on at least 2 pairs; fewer is inconclusive",
     check=_appendix_b_check(0), chapter="04_appendix_b", revision="fewer than 2 significant pairs was disagrees")
_add(id="H20", source="HpStrat Appendix B", statement="R² of the significant fits in the paper's range",
     paper="R² in the paper's range", rows=("appendix_b",), unit="random split", test="OLS R²",
     rule="the R² of every significant pair inside the paper's range", check=_appendix_b_check(1),
     chapter="04_appendix_b")

_PART2 = (("N1", "06_mlp_vs_gnn", "the line is compared at one decimal (3.2 was read as 3.2000000000000028); "
                                  "disagrees needs a gap above the line by test on a study of at least 30 trials"),
          ("N2", "06_mlp_vs_gnn", "symmetric line test"), ("N3", "08_synthetic_ws", ""),
          ("N4", "08_synthetic_ws", ""), ("N5", "08_synthetic_ws", ""),
          ("N6", "09_link_benchmarks", "disagrees needs a gap below the line by test on a study of at least 30 "
                                       "trials; these studies ran 5-12"),
          ("N7", "07_feature_study", ""), ("N8", "06_mlp_vs_gnn", ""), ("N9", "06_mlp_vs_gnn", ""),
          ("N10", "09_link_benchmarks", ""))


for i, (cid, chapter, revision) in enumerate(_PART2):
    _add(id=cid, source="Part II", statement=f"Part II claim {i + 1}", paper="", rows=("part2",),
         unit="evaluation seed", test="Welch's t-test (necessity_tables.welch_p)", rule="", check=_part2_check(i),
         chapter=chapter, revision=revision)

for cid, (a, b), text in (
        ("B1", ("hpstrat", "placebo"), "HpStrat's cross-fold std is smaller than placebo stratification's (same strata count)"),
        ("B2", ("hpstrat", "degree"), "HpStrat's cross-fold std is smaller than degree stratification's"),
        ("B3", ("placebo", "stratified"), "finer strata alone (placebo) give a smaller std than class-stratified k-fold"),
        ("B4", ("degree", "stratified"), "degree stratification gives a smaller std than class-stratified k-fold"),
        ("B5", ("hpstrat", "stratified"), "HpStrat's cross-fold std is smaller than class-stratified k-fold's "
                                          "(graphs and seeds of the controls)")):
    _add(id=cid, source="Controls (this book)", statement=text, paper="not tested by the paper", rows=("controls",),
         unit=UNIT_DS, test=PAIRED,
         rule=f"two-sided Wilcoxon of the 8-model mean cross-fold std over the 36 (graph, seed) units, Holm over "
              f"the five comparisons, p < {ALPHA:g}, symmetric",
         check=(lambda src, a=a, b=b: cc.control(src, a, b)), chapter="03d_controls",
         revision="tested over 288 (graph, model, seed) blocks, which share folds; now over (graph, seed) units")

_TREND = "HpStrat's advantage over class-stratified k-fold grows with the graph's homophily"
_TREND_RULE = (f"one point per graph: HpStrat's minus class-stratified's spread, mean over its (dataset, seed) units; "
               f"Spearman (permutation p < {ALPHA:g}) with the graphs' mean node homophily, rho < 0, and the partial "
               f"Spearman with size fixed p < {ALPHA:g}; disagrees: rho > 0 with p < {ALPHA:g}")
_add(id="B6", source="Homophily trend (this book)", statement=_TREND + " (k = 4, seeds 0-2, every model: where it was found)",
     paper="not tested by the paper", rows=("controls",), unit="graph", test="hpstrat_lite.stats.spearman",
     rule="discovery rows: exploratory, no verdict (judged on B7-B10)",
     check=lambda src: cc.trend(cc.held_out_rows(src, "discovery"), role="discovery"), chapter="03d_controls",
     role="discovery", revision="judged on the rows it was found on; now exploratory there")
_add(id="B7", source="Homophily trend, held out (this book)", statement=_TREND + " (GNNs, k = 4, split seeds 3-5)",
     paper="not tested by the paper", rows=("gnn_seeds",), unit="graph", test="hpstrat_lite.stats.spearman",
     rule=_TREND_RULE, check=lambda src: cc.trend(cc.held_out_rows(src, "k4"), role="held-out"),
     chapter="03d_controls", role="held-out", revision="per-graph effect at the (dataset, seed) unit; permutation p")
_add(id="B8", source="Homophily trend, held out (this book)", statement=_TREND + " (GNNs, k = 5, split seed 0)",
     paper="not tested by the paper", rows=("gnn_k5",), unit="graph", test="hpstrat_lite.stats.spearman",
     rule=_TREND_RULE, check=lambda src: cc.trend(cc.held_out_rows(src, "k5"), role="held-out"),
     chapter="03d_controls", role="held-out", revision="per-graph effect at the (dataset, seed) unit; permutation p")
_add(id="B9", source="Homophily ladder (this book)", statement=_TREND + " (GCN, GraphSAGE on the homophily ladder)",
     paper="not tested by the paper", rows=("ladder",), unit="cell", test="hpstrat_lite.stats.spearman",
     rule=_TREND_RULE.replace("per graph", "per cell (n, lam)").replace("graphs'", "cells'"),
     check=cc.ladder, chapter="03d_controls", role="held-out",
     revision="per-cell effect at the (graph, seed) unit; permutation p")
_add(id="B10", source="Homophily groups, held out (this book)",
     statement="HpStrat's spread relative to class-stratified's is smaller on homophilous graphs (homophily >= 0.72) "
               "than on heterophilous ones (<= 0.30) (GNNs, k = 4, split seeds 3-5)",
     paper="not tested by the paper", rows=("gnn_seeds",), unit="graph", test="Mann-Whitney (scipy.stats.mannwhitneyu)",
     rule=f"the two clusters of graphs compared directly: Mann-Whitney of the per-graph effects, p < {ALPHA:g}; "
          "the heterophilous graphs' own sign (Wilcoxon over their (dataset, seed) units) beside it",
     check=lambda src: cc.groups(cc.held_out_rows(src, "k4"), role="held-out"), chapter="03d_controls",
     role="held-out", revision="new: the benchmark graphs form two clusters, so the trend is tested as a contrast")
_add(id="B11", source="Homophily groups (this book)",
     statement="the same two groups on the rows the trend was found on (k = 4, seeds 0-2, every model)",
     paper="not tested by the paper", rows=("controls",), unit="graph", test="Mann-Whitney (scipy.stats.mannwhitneyu)",
     rule="discovery rows: exploratory, no verdict (judged on B10)",
     check=lambda src: cc.groups(cc.held_out_rows(src, "discovery"), role="discovery"), chapter="03d_controls",
     role="discovery", revision="new")

#: Every claim of the book, by id, in the scorecard's order.
REGISTRY = {c.id: c for c in _C}
del _C


def claim(claim_id: str, src: Sources = Sources()) -> Claim:
    """The registered claim ``claim_id`` (Part II claims take their statement, paper figure and rule from the Part
    II table, whose thresholds come from the paper's numbers)."""
    if claim_id not in REGISTRY:
        raise ValueError(f"claim_id {claim_id!r} is not registered; registered: {', '.join(REGISTRY)}.")
    c = REGISTRY[claim_id]
    if c.source == "Part II":
        i = int(c.id[1:]) - 1
        t = _part2(src).iloc[i]
        c = dataclasses.replace(c, source=t["section"], statement=t["claim"], paper=t["paper"], rule=t["rule"])
    return c


@functools.lru_cache(maxsize=256)
def evaluate(claim_id: str, src: Sources = Sources()) -> ClaimResult:
    """The claim ``claim_id`` judged on ``src``: its :class:`ClaimResult` (computed once per process and sources,
    so every page that shows it shows the same verdict and figure)."""
    c = claim(claim_id, src)
    e = c.check(src)
    if e.verdict not in VERDICTS:
        raise ValueError(f"claim {claim_id} gave the verdict {e.verdict!r}; allowed: {VERDICTS}.")
    return ClaimResult(c, e)


def ids(prefix: str = "", *, chapter: str | None = None) -> list:
    """Registered ids starting with ``prefix`` (``"H"``, ``"N"``, ``"B"``), optionally those of one ``chapter``."""
    return [i for i, c in REGISTRY.items() if i.startswith(prefix) and (chapter is None or c.chapter == chapter)]


def claims_frame(claim_ids=None, src: Sources = Sources()) -> pd.DataFrame:
    """The claims ``claim_ids`` (default: all) as a table, one row each (:meth:`ClaimResult.row`): ``id``,
    ``section``, ``claim``, ``paper``, ``rule``, ``ours``, ``p (units)``, ``verdict``, ``chapter``, ``role`` and the
    numbers behind them."""
    claim_ids = list(REGISTRY) if claim_ids is None else list(claim_ids)
    return pd.DataFrame([evaluate(i, src).row() for i in claim_ids])


#: The headline claims the front page shows (at most ten): each paper's central claims and the results a reader
#: of the papers asks about first; every other claim is on the scorecard.
HEADLINE = ("H6", "H7", "H13", "H10", "H18", "H19", "N1", "N2", "N6", "N9")


def rerun_table(src: Sources = Sources()) -> pd.DataFrame:
    """Which committed reruns of the k = 4, seed 0 sweep are independent (:func:`claim_checks.rerun_independence`)."""
    table, _ = cc.reruns_of(src)
    return table


def _said(r: ClaimResult) -> str:
    return f"[{r.id}] {r.evidence.ours}"


def controls_reading(src: Sources = Sources()) -> str:
    """The controls page's reading, by fixed rules from the registry's verdicts (B1-B11), as a Markdown list:
    HpStrat smaller than the placebo (B1 *agrees*): homophily carries information beyond the number of strata;
    else the placebo smaller than class-stratified (B3): the gain comes from finer strata; else the controls
    cannot say where a gain comes from. Then the homophily trend: exploratory where it was found (B6, B11),
    its verdicts on held-out rows (B7-B10) and the sign of HpStrat's effect in each group of graphs."""
    r = {i: evaluate(i, src) for i in ("B1", "B2", "B3", "B5", "B6", "B7", "B8", "B9", "B10", "B11")}
    out = []
    if r["B1"].verdict == AGREES:
        out.append(f"HpStrat's spread is smaller than the placebo's at the (graph, seed) unit: homophily carries "
                   f"information beyond the number of strata ({_said(r['B1'])}).")
    elif r["B3"].verdict == AGREES:
        out.append(f"The placebo's spread is smaller than class-stratified's ({_said(r['B3'])}) and HpStrat's is not "
                   f"distinguishable from the placebo's ({_said(r['B1'])}): the gain comes from finer strata.")
    else:
        out.append(f"At the (graph, seed) unit neither HpStrat against the placebo ({_said(r['B1'])}) nor the placebo "
                   f"against class-stratified ({_said(r['B3'])}) differs beyond noise: the controls cannot say whether "
                   "homophily carries information beyond the number of strata (**inconclusive**).")
    out.append(f"Against degree stratification: **{r['B2'].verdict}** ({_said(r['B2'])}); against class-stratified "
               f"on the same units: **{r['B5'].verdict}** ({_said(r['B5'])}).")
    out.append(f"The homophily trend where it was found, k = 4 seeds 0-2 (**exploratory**, no verdict): {_said(r['B6'])}.")
    held = "; ".join(f"{REGISTRY[i].statement[REGISTRY[i].statement.rfind('(') + 1:-1]} **{r[i].verdict}** "
                     f"({_said(r[i])})" for i in ("B7", "B8", "B9"))
    out.append(f"On rows not used to find it: {held}.")
    g, d = r["B10"].evidence, r["B11"].evidence
    sign = lambda x: "larger" if x > 0 else "smaller"  # noqa: E731
    out.append(f"Read as two groups of graphs (the benchmarks have none between homophily 0.30 and 0.72): "
               f"**{r['B10'].verdict}** on the held-out seeds ({_said(r['B10'])}). Where it was found, HpStrat's spread "
               f"is {sign(d.number('het'))} than class-stratified's on the heterophilous graphs "
               f"({d.number('het'):+.2f} points) and {sign(d.number('hom'))} on the homophilous ones "
               f"({d.number('hom'):+.2f}); on the held-out seeds {sign(g.number('het'))} ({g.number('het'):+.2f}) and "
               f"{sign(g.number('hom'))} ({g.number('hom'):+.2f}).")
    return "\n".join(f"- {x}" for x in out)


BEFORE = "book/claims_before.csv"
"""The verdicts of the previous rules, one row per claim id (written by the previous scorecard code)."""


def change_log(current: pd.DataFrame | None = None, *, before=BEFORE) -> pd.DataFrame:
    """Which verdicts moved from the previous rules (``before``) to the current ones, and why: one row per claim
    whose verdict differs (``id``, ``claim``, ``before``, ``after``, ``why``: the claim's ``revision``); claims new
    in the registry are listed with ``before`` "new"."""
    current = claims_frame() if current is None else current
    old = pd.read_csv(REPO / before) if isinstance(before, str) else before
    old = old.set_index("id")["verdict"]
    out = []
    for _, r in current.iterrows():
        was = old.get(r["id"], "new")
        if was != r["verdict"]:
            out.append({"id": r["id"], "claim": r["claim"], "before": was, "after": r["verdict"],
                        "why": REGISTRY[r["id"]].revision or "the rows or rules it reads changed"})
    return pd.DataFrame(out, columns=["id", "claim", "before", "after", "why"])


__all__ = ["Claim", "ClaimResult", "Sources", "Evidence", "REGISTRY", "HEADLINE", "claim", "evaluate", "ids", "claims_frame",
           "rerun_table", "change_log", "controls_reading", "AGREES", "DISAGREES", "INCONCLUSIVE"]
