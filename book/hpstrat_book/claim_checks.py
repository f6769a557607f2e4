"""The evidence behind each claim of the registry (:mod:`hpstrat_book.claims`): rows -> a test at its unit ->
a typed :class:`Evidence` (verdict, our figure, p, unit and count).

Every test runs on independent units (:mod:`hpstrat_lite.stats`): the models of one (graph, split seed) share
its folds, so their cross-fold stds are averaged to one value per (dataset, seed) before a paired test
(:func:`hpstrat_lite.stats.paired_test_at_unit`); a trend across graphs has one point per graph (or per cell
of the ladder). Verdicts follow the symmetric rules of :mod:`hpstrat_book.verdicts`.
"""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import pandas as pd

from hpstrat_lite import stats
from hpstrat_lite._names import MODELS
from hpstrat_lite.core.folds import ALL_METHODS
from hpstrat_lite.experiments.ladder import LADDER_METHODS, with_ladder_knobs
from .controls import PAPER_METHODS, complete_blocks, graph_properties
from .hpstrat import RUN_ID, complete_pairs
from .paths import REPO, read_rows
from .verdicts import (AGREES, DISAGREES, EXPLORATORY, INCONCLUSIVE, at_precision, best_model_changes, rerun_verdict,
                       tested_verdict)

ALPHA = 0.05
#: A rerun whose share of test accuracies identical to the committed sweep's (over the runs it trained) is above
#: this is a near-copy of the sweep: it counts once, as the sweep, not as an independent confirmation.
NEAR_COPY_SHARE = 0.5
#: The two groups of benchmark graphs by mean node homophily (no benchmark graph lies between them).
HETEROPHILOUS_MAX, HOMOPHILOUS_MIN = 0.30, 0.72
UNIT = ("dataset", "seed")


@dataclasses.dataclass(frozen=True)
class Sources:
    """The rows the registry's claims read (paths relative to the repository) and the fold-metric protocol.

    ``gnn`` (k = 4, split seed 0), ``gnn_k5``, ``gnn_seeds`` (k = 4, seeds 0-5), ``reruns`` (committed reruns of
    the k = 4, seed 0 sweep), ``controls`` (the paper methods' and the controls' k = 4 rows), ``ladder``,
    ``appendix_b``; ``part2`` (node, link, features files; None: the Part II runner's own files); ``datasets``,
    ``k``, ``seeds``, ``n_bins``, ``bins`` of the fold-metric claims (Table 2, Appendix G); ``root``: data root."""

    gnn: str = "results/gnn_k4_seed0.csv"
    gnn_k5: str = "results/gnn_k5_seed0.csv"
    gnn_seeds: tuple = ("results/gnn_k4_seed0.csv", "results/gnn_k4_seeds1-5.csv")
    reruns: tuple = ("results/timed_k4_seed0.csv", "results/timed_k4_seed0_amd.csv",
                     "results/timed_k4_seed0_h200.csv", "results/timed_k4_seed0_intel2.csv",
                     "results/retimed_k4_seed0.csv", "results/rerun_photo_k4_seed0.csv")
    controls: tuple = ("results/gnn_k4_seed0.csv", "results/gnn_k4_seeds1-5.csv", "results/controls_k4_seeds0-2.csv")
    ladder: str = "results/controls_csbm_ladder.csv"
    appendix_b: str = "results/appendix_b.csv"
    part2: tuple = (None, None, None)
    datasets: tuple = ("Cora", "CiteSeer", "Texas")
    k: int = 4
    seeds: tuple = tuple(range(10))
    n_bins: int = 10
    bins: tuple = (2, 3, 5, 10, 20, 50)
    root: str | None = None


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What one claim's test found: ``verdict`` (:data:`hpstrat_book.verdicts.VERDICTS`), ``ours`` (our figure as
    the pages show it), ``p`` (the p-value the verdict reads; NaN without a test), ``unit`` and ``n`` (the
    independent unit of that test and how many), ``numbers`` (named figures, for the pages' tables)."""

    verdict: str
    ours: str
    p: float = float("nan")
    unit: str = ""
    n: int = 0
    numbers: tuple = ()

    def number(self, name, default=float("nan")):
        """One of ``numbers`` by name."""
        return dict(self.numbers).get(name, default)


def _path(p) -> Path:
    p = Path(p)
    return p if p.is_absolute() else REPO / p


@functools.lru_cache(maxsize=32)
def _rows(paths: tuple) -> pd.DataFrame:
    return read_rows([_path(p) for p in paths])


def p_text(p) -> str:
    """``p = 0.012`` (two significant digits), or "no test"."""
    return f"p = {p:.2g}" if p == p else "no test (too few units)"


def gnn_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The complete (dataset, GNN) pairs of ``rows`` (every fold of the three split methods on every seed; the MLP
    reference is not ranked, as in the paper)."""
    if rows.empty:
        return rows
    rows, _ = complete_pairs(rows, seeds=sorted(rows["seed"].unique()))
    return rows[rows["model"].isin([m for m in MODELS if m != "MLP"])]


def block_stds(rows: pd.DataFrame) -> pd.DataFrame:
    """Cross-fold std (points) of test accuracy per (dataset, model, method, seed): one row per block
    (:func:`hpstrat_lite.stats.cross_fold_std`)."""
    return stats.cross_fold_std(rows, "test_acc", by=["dataset", "model", "method", "seed"])


def unit_stds(rows: pd.DataFrame, methods=PAPER_METHODS) -> pd.DataFrame:
    """The block stds averaged over the models of each (dataset, seed): one row per independent unit, one
    column per method (:func:`hpstrat_lite.stats.unit_means`), units that lack a method dropped."""
    wide = stats.unit_means(block_stds(rows), "std", unit=UNIT)
    out = wide.reindex(columns=list(methods)).dropna()
    out.attrs["unit"] = wide.attrs["unit"]
    return out


def paired(wide: pd.DataFrame, a: str, b: str) -> stats.PairedTest:
    """Wilcoxon of ``a`` against ``b`` over the rows (units) of ``wide``."""
    return stats.wilcoxon_test(wide[a], wide[b], unit=wide.attrs.get("unit", "unit"))


def paired_text(t: stats.PairedTest, a: str = "HpStrat", b: str = "") -> str:
    return (f"{a} - {b} median {t.median_diff:+.2f} points over {t.n} {t.unit} units "
            f"(smaller on {t.share_a_smaller:.0%}), Wilcoxon {p_text(t.pvalue)}, r = {t.rank_biserial_r:+.2f}")


# --------------------------------------------------------------------------------------------------
# Reruns


def rerun_independence(committed: pd.DataFrame, reruns: dict, *, threshold: float = NEAR_COPY_SHARE) -> pd.DataFrame:
    """Which committed reruns are independent of the sweep: one row per rerun with ``runs`` (the runs it trained),
    ``identical`` (the share of them whose test accuracy equals the sweep's run for run) and ``independent``
    (``identical <= threshold``). A near-copy repeats the sweep's numbers; it counts once, as the sweep."""
    out = []
    for name, rows in reruns.items():
        m = rows[RUN_ID + ["test_acc"]].merge(committed[RUN_ID + ["test_acc"]], on=RUN_ID, suffixes=("", "_sweep"))
        share = float((m["test_acc"] == m["test_acc_sweep"]).mean()) if len(m) else float("nan")
        out.append({"rerun": name, "runs": int(len(rows)), "identical": share, "independent": bool(share <= threshold)})
    return pd.DataFrame(out, columns=["rerun", "runs", "identical", "independent"])


def rerun_variant(committed: pd.DataFrame, rerun: pd.DataFrame) -> pd.DataFrame:
    """The committed sweep as a rerun saw it: the rerun's runs replace the sweep's (matched on
    :data:`hpstrat_book.hpstrat.RUN_ID`), the runs it lacks are kept (a rerun of a few pairs changes only those)."""
    keys = pd.MultiIndex.from_frame(rerun[RUN_ID])
    kept = committed[~pd.MultiIndex.from_frame(committed[RUN_ID]).isin(keys)]
    return pd.concat([kept, rerun[[c for c in rerun.columns if c in committed.columns]]], ignore_index=True)


#: The committed reruns as the pages name them (results file stem -> words); the page "Data, reruns and
#: provenance" (book/provenance.md) says what each one ran.
RERUN_LABELS = {
    "timed_k4_seed0": "timed rerun",
    "retimed_k4_seed0": "busy pairs retrained",
    "timed_k4_seed0_intel2": "second-machine rerun",
    "timed_k4_seed0_amd": "AMD rerun",
    "timed_k4_seed0_h200": "GPU rerun",
    "rerun_photo_k4_seed0": "Photo rerun",
}


def rerun_label(stem: str) -> str:
    """A committed rerun in words (:data:`RERUN_LABELS`); an unlisted file: its stem with spaces for underscores."""
    return RERUN_LABELS.get(stem, str(stem).replace("_", " "))


@functools.lru_cache(maxsize=8)
def reruns_of(src: Sources) -> tuple[pd.DataFrame, dict]:
    """``(independence, variants)``: :func:`rerun_independence` of the committed reruns of ``src.gnn`` and the
    sweep as each independent rerun saw it (:func:`rerun_variant`), each rerun named in words (:func:`rerun_label`);
    missing files are skipped."""
    committed = _rows((src.gnn,))
    found = {rerun_label(Path(p).stem): _rows((p,)) for p in src.reruns if _path(p).is_file()}
    found = {k: v for k, v in found.items() if not v.empty}
    table = rerun_independence(committed, found)
    variants = {r: rerun_variant(committed, found[r]) for r in table.loc[table["independent"], "rerun"]}
    return table, variants


def with_reruns(check, rows: pd.DataFrame, variants: dict) -> Evidence:
    """``check(rows)`` with the one rerun rule (:func:`hpstrat_book.verdicts.rerun_verdict`): the same check on each
    independent rerun must give the same verdict; each rerun's verdict and p are named in ``ours``."""
    main = check(rows)
    again = {name: check(v) for name, v in variants.items()}
    if not again:
        return main
    verdict = rerun_verdict(main.verdict, {n: e.verdict for n, e in again.items()})
    said = "; independent reruns: " + ", ".join(f"{n} {e.verdict} ({p_text(e.p)})" for n, e in again.items())
    return dataclasses.replace(main, verdict=verdict, ours=main.ours + said)


# --------------------------------------------------------------------------------------------------
# Part I: the GNN sweeps


def stability(rows: pd.DataFrame, other: str, *, alpha: float = ALPHA) -> Evidence:
    """Section 5.2: HpStrat's cross-fold std smaller than ``other``'s, Wilcoxon over (dataset, seed) units."""
    g = gnn_rows(rows)
    if g.empty:
        return Evidence(INCONCLUSIVE, "not run: no complete (dataset, GNN) pair yet")
    wide = unit_stds(g)
    t = paired(wide, "hpstrat", other)
    name = {"stratified": "class-stratified", "random": "random"}[other]
    return Evidence(tested_verdict(t.rank_biserial_r, t.pvalue, alpha=alpha),
                    paired_text(t, b=name) + f"; {g[['dataset', 'model']].drop_duplicates().shape[0]} (dataset, GNN) "
                    "pairs", t.pvalue, t.unit, t.n, (("r", t.rank_biserial_r), ("median", t.median_diff)))


def mean_ranks(rows: pd.DataFrame) -> pd.Series:
    """Global mean rank of each split method over the (dataset, GNN) pairs (std averaged over seeds first)."""
    std = block_stds(rows).groupby(["dataset", "model", "method"])["std"].mean().unstack("method")
    return std[list(PAPER_METHODS)].rank(axis=1).mean()


def global_order(rows: pd.DataFrame, *, alpha: float = ALPHA) -> Evidence:
    """Table 3: global mean ranks in the order HpStrat < class-stratified < random, each adjacent pair tested at
    the (dataset, seed) unit; *disagrees* when an adjacent pair is significantly reversed."""
    g = gnn_rows(rows)
    if g.empty:
        return Evidence(INCONCLUSIVE, "not run: no complete (dataset, GNN) pair yet")
    ranks = mean_ranks(g)
    wide = unit_stds(g)
    hs, sr = paired(wide, "hpstrat", "stratified"), paired(wide, "stratified", "random")
    words = [tested_verdict(t.rank_biserial_r, t.pvalue, alpha=alpha) for t in (hs, sr)]
    verdict = AGREES if words == [AGREES, AGREES] else DISAGREES if DISAGREES in words else INCONCLUSIVE
    text = (" / ".join(f"{ranks[m]:.2f}" for m in ("hpstrat", "stratified", "random"))
            + f" (HpStrat / class-stratified / random); HpStrat vs class-stratified {p_text(hs.pvalue)}, "
              f"class-stratified vs random {p_text(sr.pvalue)}, over {hs.n} {hs.unit} units")
    return Evidence(verdict, text, max(hs.pvalue, sr.pvalue), hs.unit, hs.n,
                    tuple((f"rank {m}", float(ranks[m])) for m in PAPER_METHODS))


def best_every_gnn(rows: pd.DataFrame, *, alpha: float = ALPHA) -> Evidence:
    """Table 3: HpStrat has the best mean rank for every GNN. Per GNN the pairwise post-hoc test over datasets
    (:func:`hpstrat_lite.stats.posthoc`, std averaged over seeds; within one GNN the datasets are independent):
    *agrees* when it names HpStrat the winner for every GNN, *disagrees* when for some GNN another method is
    significantly better than HpStrat, else *inconclusive*."""
    g = gnn_rows(rows)
    if g.empty:
        return Evidence(INCONCLUSIVE, "not run: no complete (dataset, GNN) pair yet")
    std = block_stds(g).groupby(["model", "dataset", "method"])["std"].mean().unstack("method")[list(PAPER_METHODS)]
    first, named, beaten = [], [], []
    for model, t in std.groupby(level="model"):
        r = stats.posthoc(t.droplevel("model"), unit="dataset", alpha=alpha)
        if r.leader == "hpstrat":
            first.append(model)
        if r.winner == "hpstrat":
            named.append(model)
        mine = r.pairs[(r.pairs["a"] == "hpstrat") | (r.pairs["b"] == "hpstrat")]
        if mine["better"].notna().any() and (mine["better"].dropna() != "hpstrat").any():
            beaten.append(model)
    n = std.index.get_level_values("model").nunique()
    datasets = std.index.get_level_values("dataset").nunique()
    verdict = AGREES if len(named) == n else DISAGREES if beaten else INCONCLUSIVE
    text = (f"HpStrat's mean rank the best for {len(first)}/{n} GNNs; the post-hoc test (Wilcoxon-Holm over "
            f"{datasets} datasets per GNN) names HpStrat best for {len(named)}/{n}; another method significantly "
            f"better than HpStrat for {len(beaten)}/{n}" + (f" ({', '.join(beaten)})" if beaten else ""))
    return Evidence(verdict, text, float("nan"), "dataset", datasets, (("first", len(first)), ("gnns", n)))


def most_datasets(rows: pd.DataFrame, *, paper=(0, 0), alpha: float = ALPHA) -> Evidence:
    """Table 4: HpStrat's mean rank over the GNNs the lowest on most datasets ("most": more than half). The
    count over datasets (independent units) is judged by a two-sided binomial test against one half."""
    from scipy.stats import binomtest

    g = gnn_rows(rows)
    if g.empty:
        return Evidence(INCONCLUSIVE, "not run: no complete (dataset, GNN) pair yet")
    std = block_stds(g).groupby(["dataset", "model", "method"])["std"].mean().unstack("method")[list(PAPER_METHODS)]
    per_ds = std.rank(axis=1).groupby(level="dataset").mean()
    first = per_ds["hpstrat"] <= per_ds.min(axis=1) + 1e-12
    n, k = len(per_ds), int(first.sum())
    p = float(binomtest(k, n, 0.5).pvalue) if n else float("nan")
    verdict = tested_verdict(0.5 - k / n, p, alpha=alpha) if n else INCONCLUSIVE
    bad = list(per_ds.index[~first])
    return Evidence(verdict, f"{k}/{n} datasets" + (f" (not on {', '.join(bad)})" if bad else "")
                    + f"; binomial test against one half {p_text(p)}", p, "dataset", n, (("first", k),))


def lower_than_random(rows: pd.DataFrame, *, alpha: float = ALPHA) -> Evidence:
    """Table C.4: HpStrat's std lower than random k-fold's on most pairs. The paper's measure (share of
    (dataset, model) pairs) is shown; the test is the two-sided sign test over (dataset, seed) units."""
    g = gnn_rows(rows)
    if g.empty:
        return Evidence(INCONCLUSIVE, "not run: no complete (dataset, GNN) pair yet")
    std = block_stds(g).groupby(["dataset", "model", "method"])["std"].mean().unstack("method")
    share = float((std["hpstrat"] < std["random"]).mean())
    wide = unit_stds(g)
    t = stats.sign_test(wide["hpstrat"], wide["random"], unit=wide.attrs["unit"])
    effect = t.n_greater - t.n_less
    return Evidence(tested_verdict(effect, t.pvalue, alpha=alpha),
                    f"lower on {share:.0%} of {len(std)} (dataset, GNN) pairs; lower on {t.n_less}/{t.n} {t.unit} "
                    f"units, sign test {p_text(t.pvalue)}", t.pvalue, t.unit, t.n, (("share", share),))


def appendix_e(rows: pd.DataFrame, *, paper=(8, 15), alpha: float = ALPHA) -> Evidence:
    """Appendix E, like with like: the paper's simple count (the best model's name differs between split methods,
    on split seed 0 as the paper's one split) against its 8/15, Fisher's exact test (two-sided); our strict count
    (a change beyond the cross-seed spread, :func:`hpstrat_lite.stats.best_model_change`) beside it. *Disagrees*
    when Fisher p < ``alpha``; *agrees* when not and at least one change is established beyond the seed-to-seed
    spread; else *inconclusive* (the changes could all be noise)."""
    from scipy.stats import fisher_exact

    g = gnn_rows(rows)
    if g.empty:
        return Evidence(INCONCLUSIVE, "not run: no complete (dataset, GNN) pair yet")
    seeds = sorted(int(s) for s in g["seed"].unique())
    simple = best_model_changes(g[g["seed"] == seeds[0]])
    strict = best_model_changes(g)
    n, k = len(simple), int(simple["changes"].sum())
    est = list(strict.index[strict["established"]])
    p = float(fisher_exact([[k, n - k], [paper[0], paper[1] - paper[0]]]).pvalue)
    verdict = DISAGREES if p < alpha else AGREES if est else INCONCLUSIVE
    text = (f"simple count (split seed {seeds[0]}): best model differs on {k}/{n} datasets against the paper's "
            f"{paper[0]}/{paper[1]}, Fisher's exact {p_text(p)}; strict count (beyond the spread over split seeds "
            f"{seeds[0]}-{seeds[-1]}): {len(est)}/{len(strict)}" + (f" ({', '.join(est)})" if est else ""))
    return Evidence(verdict, text, p, "dataset", n, (("simple", k), ("strict", len(est))))


# --------------------------------------------------------------------------------------------------
# This book: the controls and the homophily trend


@functools.lru_cache(maxsize=4)
def control_rows(src: Sources, seeds=(0, 1, 2)) -> pd.DataFrame:
    """The complete (dataset, model, seed) blocks of the five methods, k = 4, the paper's protocol."""
    rows = _rows(tuple(src.controls))
    rows = rows[(rows["k"] == 4) & (rows["max_epochs"] == 1000) & (rows["patience"] == 100)]
    complete, _ = complete_blocks(rows, methods=ALL_METHODS, seeds=seeds)
    return complete


#: The controls' comparisons (a, b) and the claim each states (a's spread smaller than b's).
CONTROL_COMPARISONS = (("hpstrat", "placebo"), ("hpstrat", "degree"), ("placebo", "stratified"),
                       ("degree", "stratified"), ("hpstrat", "stratified"))


@functools.lru_cache(maxsize=4)
def control_tests(src: Sources, *, alpha: float = ALPHA) -> pd.DataFrame:
    """:func:`control_table` of the controls' committed rows (:func:`control_rows`)."""
    return control_table(control_rows(src), alpha=alpha)


def control_table(rows: pd.DataFrame, *, alpha: float = ALPHA) -> pd.DataFrame:
    """The controls' five comparisons at the (dataset, seed) unit (the eight models of one graph and split seed
    share its folds: one unit), Holm over the five; beside it the same test over graph means and on each split
    seed alone (unadjusted), to show whether one seed carries it. One row per comparison: ``a``, ``b``, ``n``,
    ``unit``, ``median`` (a - b, points), ``share`` (a smaller), ``r``, ``p``, ``p_holm``, ``verdict``, ``graphs``,
    ``p_graph``, ``p_by_seed``, ``mean_std_a``, ``mean_std_b``."""
    wide = unit_stds(rows, methods=ALL_METHODS)
    out = []
    for a, b in CONTROL_COMPARISONS:
        t = paired(wide, a, b)
        seeds = {int(s): paired(w, a, b).pvalue for s, w in wide.groupby(level="seed")}
        graph = wide.groupby(level="dataset").mean()
        graph.attrs["unit"] = "graph"
        tg = paired(graph, a, b)
        out.append({"a": a, "b": b, "n": t.n, "unit": t.unit, "median": t.median_diff, "share": t.share_a_smaller,
                    "r": t.rank_biserial_r, "p": t.pvalue, "graphs": tg.n, "p_graph": tg.pvalue,
                    "p_by_seed": seeds, "mean_std_a": float(wide[a].mean()), "mean_std_b": float(wide[b].mean())})
    table = pd.DataFrame(out)
    table["p_holm"] = stats.holm(table["p"].to_numpy(float))
    table["verdict"] = [tested_verdict(r, p, alpha=alpha) for r, p in zip(table["r"], table["p_holm"])]
    return table


def control(src: Sources, a: str, b: str) -> Evidence:
    t = control_tests(src).set_index(["a", "b"]).loc[(a, b)]
    seeds = ", ".join(f"seed {s}: {p:.2g}" for s, p in t["p_by_seed"].items())
    text = (f"median {t['median']:+.2f} points (mean spread {t['mean_std_b']:.1f}), smaller on {t['share']:.0%} of "
            f"{t['n']} {t['unit']} units, Wilcoxon p = {t['p']:.2g}, Holm p = {t['p_holm']:.2g}, r = {t['r']:+.2f}; over {t['graphs']} graph "
            f"means p = {t['p_graph']:.2g}; each split seed alone (unadjusted): {seeds}")
    return Evidence(t["verdict"], text, float(t["p_holm"]), t["unit"], int(t["n"]),
                    (("median", t["median"]), ("r", t["r"]), ("p_graph", t["p_graph"])))


def graph_effects(rows: pd.DataFrame, *, b: str = "stratified", methods=PAPER_METHODS) -> pd.DataFrame:
    """Per graph: HpStrat's spread minus ``b``'s (points), the mean over the graph's (dataset, seed) units, with
    the graph's homophily, size and group (heterophilous: homophily <= 0.30, homophilous: >= 0.72)."""
    wide = unit_stds(rows, methods=methods)
    diff = (wide["hpstrat"] - wide[b]).groupby(level="dataset")
    out = pd.DataFrame({"effect": diff.mean(), "units": diff.size()})
    props = graph_properties(list(out.index))
    out = out.join(props, how="inner")
    shown = out["homophily"].map(lambda h: at_precision(h, 2))  # the groups as the pages show homophily
    out["group"] = np.where(shown <= HETEROPHILOUS_MAX, "heterophilous",
                            np.where(shown >= HOMOPHILOUS_MIN, "homophilous", "between"))
    return out


def trend(rows: pd.DataFrame, *, role: str, alpha: float = ALPHA, unit: str = "graph") -> Evidence:
    """This book's claim: HpStrat's advantage over class-stratified k-fold grows with homophily. One point per graph
    (its mean (dataset, seed) effect), Spearman with permutation p (:func:`hpstrat_lite.stats.spearman`) and the
    partial Spearman with the graph's size held fixed. On the rows it was found on (``role="discovery"``):
    *exploratory*, no verdict. Held out: *agrees* when rho < 0 with p < ``alpha`` and the size-fixed p < ``alpha``,
    *disagrees* when rho > 0 with p < ``alpha``, else *inconclusive*. The two groups of graphs are tested too
    (Mann-Whitney of their effects), since a rank correlation over two clusters is a contrast of the two."""
    from scipy.stats import mannwhitneyu

    eff = graph_effects(rows)
    rho = stats.spearman(eff["effect"], eff["homophily"], unit=unit, n_boot=1000)
    part = stats.partial_spearman(eff["effect"], eff["homophily"], eff["nodes"], unit=unit)
    het, hom = eff.loc[eff["group"] == "heterophilous", "effect"], eff.loc[eff["group"] == "homophilous", "effect"]
    p_groups = float(mannwhitneyu(het, hom).pvalue) if len(het) and len(hom) else float("nan")
    text = (f"rho = {rho.rho:+.2f} [{rho.low:+.2f}, {rho.high:+.2f}] over {rho.n} graphs, permutation "
            f"{p_text(rho.pvalue)}; size fixed: rho = {part.rho:+.2f}, {p_text(part.pvalue)}; two groups: "
            f"heterophilous ({len(het)} graphs) mean {het.mean():+.2f}, homophilous ({len(hom)}) {hom.mean():+.2f} "
            f"points, Mann-Whitney {p_text(p_groups)}")
    numbers = (("rho", rho.rho), ("p", rho.pvalue), ("p_size", part.pvalue), ("p_groups", p_groups),
               ("het", float(het.mean()) if len(het) else float("nan")),
               ("hom", float(hom.mean()) if len(hom) else float("nan")))
    if role == "discovery":
        return Evidence(EXPLORATORY, text + " (the rows the trend was found on)", rho.pvalue, rho.unit, rho.n, numbers)
    verdict = tested_verdict(rho.rho, rho.pvalue, alpha=alpha)
    if verdict == AGREES and not part.pvalue < alpha:
        verdict = INCONCLUSIVE
    return Evidence(verdict, text, rho.pvalue, rho.unit, rho.n, numbers)


def groups(rows: pd.DataFrame, *, role: str, alpha: float = ALPHA) -> Evidence:
    """The trend read as two clusters: HpStrat's spread minus class-stratified's differs between the
    heterophilous and the homophilous graphs (Mann-Whitney of the per-graph effects), and on the heterophilous
    graphs alone HpStrat's spread is larger (Wilcoxon over their (dataset, seed) units)."""
    from scipy.stats import mannwhitneyu

    eff = graph_effects(rows)
    het, hom = eff[eff["group"] == "heterophilous"], eff[eff["group"] == "homophilous"]
    p = float(mannwhitneyu(het["effect"], hom["effect"]).pvalue) if len(het) and len(hom) else float("nan")
    wide = unit_stds(rows)
    w_het = wide[wide.index.get_level_values("dataset").isin(het.index)]
    w_het.attrs["unit"] = wide.attrs["unit"]
    t = paired(w_het, "hpstrat", "stratified")
    text = (f"heterophilous graphs ({', '.join(het.index)}): mean {het['effect'].mean():+.2f} points; homophilous "
            f"({len(hom)} graphs): {hom['effect'].mean():+.2f}; Mann-Whitney {p_text(p)} over {len(eff)} graphs; "
            f"on the heterophilous graphs alone " + paired_text(t, b="class-stratified"))
    numbers = (("het", float(het["effect"].mean())), ("hom", float(hom["effect"].mean())), ("p_het", t.pvalue))
    if role == "discovery":
        return Evidence(EXPLORATORY, text, p, "graph", len(eff), numbers)
    # claimed: the homophilous group's effect below the heterophilous group's
    verdict = tested_verdict(hom["effect"].mean() - het["effect"].mean(), p, alpha=alpha)
    return Evidence(verdict, text, p, "graph", len(eff), numbers)


def held_out_rows(src: Sources, which: str) -> pd.DataFrame:
    """The GNN rows of the paper's three methods on rows the trend was not found on: ``"k4"`` (k = 4, seeds 3-5)
    or ``"k5"`` (k = 5, seed 0); ``"discovery"``: the controls' k = 4 seeds 0-2 (every model, where it was found)."""
    if which == "discovery":
        return control_rows(src)
    if which == "k4":
        rows = _rows(tuple(src.gnn_seeds))
        rows = rows[(rows["k"] == 4) & rows["seed"].isin([3, 4, 5])]
    else:
        rows = _rows((src.gnn_k5,))
    return gnn_rows(rows)


def ladder(src: Sources, *, alpha: float = ALPHA) -> Evidence:
    """The trend on the homophily ladder (GNNs): one point per cell (n, lam), its effect the mean over the cell's
    (graph, seed) units of HpStrat's spread minus class-stratified's; Spearman against the cell's measured
    homophily, partial with the cell's size fixed; the same rule as :func:`trend` held out."""
    rows = _rows((src.ladder,))
    if rows.empty:
        return Evidence(INCONCLUSIVE, "not run: no ladder rows")
    rows = rows[rows["model"] != "MLP"]
    complete, _ = complete_blocks(rows, methods=LADDER_METHODS, seeds=tuple(sorted(rows["seed"].unique())))
    wide = stats.unit_means(block_stds(complete), "std", unit=UNIT).dropna()
    knobs = with_ladder_knobs(complete).groupby("dataset").agg(n=("n", "first"), lam=("lam", "first"),
                                                               h=("test_homophily", "mean"))
    d = (wide["hpstrat"] - wide["stratified"]).rename("effect").reset_index().merge(knobs, on="dataset")
    cells = d.groupby(["n", "lam"]).agg(effect=("effect", "mean"), h=("h", "mean"), units=("effect", "size"))
    rho = stats.spearman(cells["effect"], cells["h"], unit="cell", n_boot=1000)
    part = stats.partial_spearman(cells["effect"], cells["h"], cells.index.get_level_values("n"), unit="cell")
    verdict = tested_verdict(rho.rho, rho.pvalue, alpha=alpha)
    if verdict == AGREES and not part.pvalue < alpha:
        verdict = INCONCLUSIVE
    text = (f"rho = {rho.rho:+.2f} [{rho.low:+.2f}, {rho.high:+.2f}] over {rho.n} cells ({len(d)} (graph, seed) "
            f"units), permutation {p_text(rho.pvalue)}; size fixed: rho = {part.rho:+.2f}, {p_text(part.pvalue)}")
    return Evidence(verdict, text, rho.pvalue, "cell", rho.n, (("rho", rho.rho), ("p_size", part.pvalue)))
