"""Is it the homophily? Rows of the control stratifications -> paired tests and the reading.

HpStrat stratifies on (homophily bin, class). Two controls ask where its lower cross-fold spread comes from
(:mod:`hpstrat_lite.core.covariates`): ``placebo`` stratifies on (random-covariate bin, class), the same number
of strata without information, and ``degree`` on (log-degree quantile bin, class). The unit of comparison is
one block (dataset, model, split seed): the standard deviation (ddof = 1) of test accuracy over the k folds
of that seed, in accuracy points (or, with ``metric=``, in points of another test score recorded by the
rows: balanced accuracy, macro-F1, ROC-AUC). Every method of a block shares the run seeds (weights, dropout), so
methods differ only in their folds.
"""
from __future__ import annotations

import pandas as pd

from .. import stats
from ..core.folds import ALL_METHODS
from ..experiments.ladder import LADDER_METHODS, ladder_knobs, with_ladder_knobs
from ..rows import read_rows, score_column
from .display import format_number
from .hpstrat import paired_verdict, signed_rank_test
from ..stats import holm

#: The paired comparisons the chapter tests, (a, b): is a's cross-fold std different from b's?
CONTROL_COMPARISONS = (("hpstrat", "placebo"), ("hpstrat", "degree"), ("placebo", "stratified"),
                       ("degree", "stratified"), ("hpstrat", "stratified"))

METHOD_LABELS = {"random": "random", "stratified": "class-stratified", "hpstrat": "HpStrat",
                 "degree": "degree-stratified", "placebo": "placebo-stratified"}

#: The split methods of the HpStrat paper.
PAPER_METHODS = ("random", "stratified", "hpstrat")

#: The comparisons whose per-graph effect :func:`control_tests` relates to the graphs' homophily.
TREND_COMPARISONS = (("hpstrat", "stratified"), ("hpstrat", "placebo"), ("hpstrat", "degree"))



def complete_blocks(rows: pd.DataFrame, *, methods=ALL_METHODS, seeds=(0, 1, 2)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of the (dataset, model, seed) blocks that have every fold of every method in ``methods``.

    Returns ``(rows, coverage)``; ``coverage`` has one row per dataset: blocks complete and blocks expected
    (models of ``rows`` x ``seeds``)."""
    rows = rows[rows["method"].isin(methods) & rows["seed"].isin(list(seeds))]
    if rows.empty:
        raise ValueError(f"rows hold no run of the methods {tuple(methods)} with seeds {tuple(seeds)}.")
    folds = rows.groupby(["dataset", "model", "seed", "method"])["fold"].nunique()
    k = rows.groupby(["dataset", "model", "seed", "method"])["k"].first()
    per_block = (folds == k).groupby(["dataset", "model", "seed"]).agg(["all", "size"])
    ok = per_block.index[per_block["all"] & (per_block["size"] == len(methods))]
    keep = rows.set_index(["dataset", "model", "seed"]).index.isin(ok)
    n_models = rows["model"].nunique()
    done = pd.Series(1, index=ok).groupby(level="dataset").size() if len(ok) else pd.Series(dtype=int)
    coverage = pd.DataFrame({"dataset": sorted(rows["dataset"].unique())})
    coverage["blocks complete"] = coverage["dataset"].map(done).fillna(0).astype(int)
    coverage["blocks expected"] = n_models * len(seeds)
    return rows[keep], coverage


def block_std(rows: pd.DataFrame, *, metric: str = "accuracy") -> pd.DataFrame:
    """Cross-fold std (ddof = 1, points) of the test ``metric`` in every (dataset, model, seed) block, one
    column per method (``metric``: see :func:`hpstrat_lite.rows.score_column`)."""
    per_block = stats.cross_fold_std(rows, score_column(rows, metric), by=["dataset", "model", "seed", "method"])
    return per_block.pivot_table(index=["dataset", "model", "seed"], columns="method", values="std")


def _complete_std(rows: pd.DataFrame, methods, metric: str) -> pd.DataFrame:
    """:func:`block_std` of the blocks that have every method of ``methods``; a clear error when none has."""
    wide = block_std(rows, metric=metric).reindex(columns=list(methods)).dropna()
    if wide.empty:
        raise ValueError(f"no (dataset, model, seed) block has all of {tuple(methods)}; run the control sweep.")
    return wide


def control_tests(rows: pd.DataFrame, *, comparisons=CONTROL_COMPARISONS, alpha: float = 0.05,
                  methods=ALL_METHODS, metric: str = "accuracy", homophily=None, size=None) -> dict:
    """Paired tests over (dataset, model, seed) blocks of the cross-fold std of the test ``metric``
    (:func:`block_std`).

    Each comparison (a, b) is a two-sided Wilcoxon signed-rank test of the paired stds with its rank-biserial
    r (:func:`hpstrat_lite.reports.hpstrat.signed_rank_test`); the comparisons are one family, so their
    p-values are Holm-adjusted (:func:`hpstrat_lite.stats.holm`) and the verdict is read from the adjusted p: "a smaller" /
    "a larger" when it is below ``alpha``, else "inconclusive" (also with too few non-zero differences for a
    test).

    Returns a dict: ``pairwise`` (one row per comparison of :data:`CONTROL_COMPARISONS`: blocks, median
    difference a - b in points, share of blocks where a is smaller, Wilcoxon W and p, rank-biserial r,
    Holm-adjusted p over the comparisons, verdict from the Holm p), ``friedman`` (the Friedman test of
    ``methods`` over the blocks, with Kendall's :math:`W = \\chi^2_F / (n (k - 1))`: :func:`hpstrat_lite.stats.friedman`), ``mean_std`` and
    ``mean_rank`` per method (rank 1 = smallest std in a block), and ``blocks``. With ``homophily`` (dataset ->
    mean node homophily), also ``by_graph`` (each comparison of :data:`TREND_COMPARISONS` ->
    :func:`paired_tests_by_graph`) and ``trends`` (:func:`homophily_trends`, holding graph size fixed too
    with ``size``: dataset -> number of nodes)."""
    wide = _complete_std(rows, methods, metric)
    pairwise = _pairwise_tests(wide, comparisons, alpha)
    f = stats.friedman(wide[list(methods)], unit="(dataset, model, seed)", alpha=alpha)
    out = {"pairwise": pairwise, "blocks": len(wide), "mean_std": wide.mean(), "mean_rank": wide.rank(axis=1).mean(),
           "friedman": {"statistic": f.statistic, "p_value": f.pvalue, "kendall_w": f.kendall_w,
                        "blocks": len(wide), "methods": len(methods)}}
    if homophily is not None:
        others = tuple(b for a, b in TREND_COMPARISONS if a in methods and b in methods)
        out.update(split_method_trends(rows, homophily, size=size, others=others, methods=methods, alpha=alpha,
                                       metric=metric))
    return out


def _pairwise_tests(wide: pd.DataFrame, comparisons, alpha: float) -> pd.DataFrame:
    """One Wilcoxon signed-rank test per comparison (a, b) over every block of ``wide`` (blocks x methods),
    Holm-adjusted as one family, the verdict read from the adjusted p."""
    pairwise = pd.DataFrame([{"a": a, "b": b, **signed_rank_test(wide[a], wide[b])} for a, b in comparisons])
    pairwise["p_holm"] = holm(pairwise["p_value"])
    pairwise["verdict"] = [paired_verdict(p, r, alpha=alpha) for p, r in zip(pairwise["p_holm"],
                                                                             pairwise["rank_biserial_r"])]
    return pairwise


def paired_tests_by_graph(rows: pd.DataFrame, *, a: str = "hpstrat", b: str = "placebo", alpha: float = 0.05,
                           methods=ALL_METHODS, metric: str = "accuracy") -> pd.DataFrame:
    """One comparison (a, b) of :func:`control_tests` on each graph alone: a two-sided Wilcoxon signed-rank test
    over that graph's (model, seed) blocks (:func:`hpstrat_lite.reports.hpstrat.signed_rank_test`), the graphs'
    p-values Holm-adjusted as one family (:func:`hpstrat_lite.stats.holm`), the verdict read from the adjusted p.

    Returns one row per dataset (the blocks with all ``methods``, as in :func:`control_tests`): ``dataset``,
    ``pairs``, ``median_diff`` (a - b, points), ``share_a_smaller``, ``wilcoxon_W``, ``p_value``,
    ``rank_biserial_r``, ``p_holm``, ``verdict``."""
    return _tests_by_graph(_complete_std(rows, methods, metric), a, b, alpha)


def _tests_by_graph(wide: pd.DataFrame, a: str, b: str, alpha: float) -> pd.DataFrame:
    """:func:`paired_tests_by_graph` on the cross-fold stds of the complete blocks (:func:`_complete_std`)."""
    per_graph = pd.DataFrame([{"dataset": d, **signed_rank_test(g[a], g[b])}
                              for d, g in wide.groupby(level="dataset", sort=True)])
    per_graph["p_holm"] = holm(per_graph["p_value"])
    per_graph["verdict"] = [paired_verdict(p, r, alpha=alpha) for p, r in zip(per_graph["p_holm"],
                                                                              per_graph["rank_biserial_r"])]
    return per_graph


def effect_homophily_correlation(by_graph: pd.DataFrame, homophily, *, size=None, alpha: float = 0.05) -> dict:
    """Does a comparison's effect grow with the graph's homophily? Spearman's rank correlation between each
    graph's rank-biserial r (:func:`paired_tests_by_graph`; negative: a smaller) and its mean node homophily
    (``homophily``: a mapping or Series, dataset -> value), over the graphs that have both; the same
    correlation with each graph left out in turn, to see whether one graph carries it; and, with ``size``
    (dataset -> number of nodes), the partial correlation holding the graph's size fixed
    (:func:`hpstrat_lite.stats.partial_spearman`), since on common benchmarks the homophilous graphs are also the larger ones.

    Returns a dict: ``graphs``, ``rho``, ``p_value`` (two-sided, scipy's t approximation; NaN with fewer than
    4 graphs), ``verdict`` (``"effect grows with homophily"``: rho < 0, a is further below b on more homophilous
    graphs; ``"effect shrinks with homophily"``; when p < ``alpha``, else ``"inconclusive"``), ``loo_p_max``
    (the largest p with one graph left out; NaN with fewer than 5 graphs), ``loo_without`` (that graph),
    ``rho_given_size`` and ``p_given_size`` (NaN without ``size`` or with fewer than 5 graphs)."""
    h = pd.Series(homophily, dtype=float)
    both = by_graph.assign(h=by_graph["dataset"].map(h)).dropna(subset=["h", "rank_biserial_r"])
    rho, p = _spearman(both["rank_biserial_r"], both["h"])
    rest = {d: both[both["dataset"] != d] for d in both["dataset"]} if len(both) >= 5 else {}
    loo = {d: _spearman(t["rank_biserial_r"], t["h"])[1] for d, t in rest.items()}
    without = max(loo, key=lambda d: loo[d]) if loo else None
    rho_size, p_size = float("nan"), float("nan")
    if size is not None:
        n = both["dataset"].map(pd.Series(size, dtype=float))
        if n.notna().all() and len(both) >= 5:
            fixed = stats.partial_spearman(both["rank_biserial_r"], both["h"], n, unit="graph")
            rho_size, p_size = fixed.rho, fixed.pvalue
    return {"graphs": int(len(both)), "rho": rho, "p_value": p, "verdict": _trend_verdict(p, rho, alpha),
            "loo_p_max": loo[without] if without is not None else float("nan"), "loo_without": without,
            "rho_given_size": rho_size, "p_given_size": p_size}


def _trend_verdict(p: float, rho: float, alpha: float, *, driver: str = "homophily") -> str:
    """``"effect grows with <driver>"`` (rho < 0) or ``"effect shrinks with <driver>"`` when ``p`` < ``alpha``,
    else ``"inconclusive"`` (also for a NaN p)."""
    if not p < alpha:
        return "inconclusive"
    return f"effect {'grows' if rho < 0 else 'shrinks'} with {driver}"


def _spearman(x, y) -> tuple[float, float]:
    """Spearman's (rho, p) of ``x`` against ``y`` (:func:`hpstrat_lite.stats.spearman`, scipy's t-approximation
    p); NaN with fewer than 4 values."""
    if len(x) < 4:
        return float("nan"), float("nan")
    r = stats.spearman(x, y, n_boot=0, n_perm=0)
    return r.rho, r.pvalue_t


def homophily_trends(by_graph: dict, homophily, *, size=None, alpha: float = 0.05) -> pd.DataFrame:
    """:func:`effect_homophily_correlation` of each comparison in ``by_graph`` ((a, b) ->
    :func:`paired_tests_by_graph`), the comparisons' p-values Holm-adjusted as one family and the verdict read
    from the adjusted p. One row per comparison: ``a``, ``b``, ``graphs``, ``rho``, ``p_value``, ``p_holm``,
    ``verdict``, ``loo_p_max`` and ``loo_without`` (the largest unadjusted p with one graph left out, and that
    graph), ``rho_given_size`` and ``p_given_size`` (the partial correlation holding the graph's size fixed,
    unadjusted; NaN without ``size``)."""
    columns = ["a", "b", "graphs", "rho", "p_value", "verdict", "loo_p_max", "loo_without", "rho_given_size",
               "p_given_size"]
    rows = [{"a": a, "b": b, **effect_homophily_correlation(t, homophily, size=size, alpha=alpha)}
            for (a, b), t in by_graph.items()]
    trends = pd.DataFrame(rows, columns=columns)
    trends["p_holm"] = holm(trends["p_value"])
    trends["verdict"] = [_trend_verdict(p, rho, alpha) for p, rho in zip(trends["p_holm"], trends["rho"])]
    return trends[["a", "b", "graphs", "rho", "p_value", "p_holm", "verdict", "loo_p_max", "loo_without",
                   "rho_given_size", "p_given_size"]]


def trends_table(trends: pd.DataFrame) -> pd.DataFrame:
    """:func:`homophily_trends` as a page shows it, one row per comparison: ``comparison``, ``graphs``,
    ``Spearman rho``, ``Holm p``, ``verdict``, ``one graph out`` (the largest unadjusted p, and the graph left
    out) and ``size held fixed`` (partial rho and its p; ``n/a`` without graph sizes)."""
    def partial(rho, p):
        return "n/a" if rho != rho or p != p else f"rho {rho:+.2f}, p {format_number(p, kind='p')}"

    return pd.DataFrame({
        "comparison": [f"{METHOD_LABELS[a]} vs {METHOD_LABELS[b]}" for a, b in zip(trends["a"], trends["b"])],
        "graphs": trends["graphs"].to_numpy(),
        "Spearman rho": trends["rho"].to_numpy(),
        "Holm p": trends["p_holm"].to_numpy(),
        "verdict": trends["verdict"].to_numpy(),
        "one graph out": ["n/a" if p != p else f"p {format_number(p, kind='p')} (without {g})"
                          for p, g in zip(trends["loo_p_max"], trends["loo_without"])],
        "size held fixed": [partial(r, p) for r, p in zip(trends["rho_given_size"], trends["p_given_size"])],
    })


def _find(tests, a, b):
    pw = tests["pairwise"]
    row = pw[(pw["a"] == a) & (pw["b"] == b)]
    return None if row.empty else row.iloc[0]


def _said(t) -> str:
    p = "no test (too few pairs)" if t["p_value"] != t["p_value"] else f"Holm p = {t['p_holm']:.2g}"
    return (f"{METHOD_LABELS[t['a']]} vs {METHOD_LABELS[t['b']]}: median difference {t['median_diff']:+.2f} points "
            f"over {t['pairs']} blocks, {p}, r = {t['rank_biserial_r']:+.2f}")


def control_reading(tests: dict, *, alpha: float = 0.05) -> str:
    """The reading a page states, computed from :func:`control_tests` by fixed rules:

    - HpStrat smaller than placebo (Holm p < ``alpha``): homophily carries information beyond the number of
      strata.
    - HpStrat not distinguishable from placebo while placebo is smaller than class-stratified: the gain
      comes from finer strata, not from homophily.
    - Neither: the controls cannot tell where a gain comes from; if HpStrat is not smaller than
      class-stratified either, there is no gain over class stratification to explain.
    The same rules read the degree control. With per-graph trends (``control_tests(..., homophily=...)``), one
    sentence per comparison of :data:`TREND_COMPARISONS` says whether its effect grows or shrinks with the
    graph's homophily (Spearman, Holm p < ``alpha``) or is inconclusive, and on which graphs alone it holds.
    Returns the sentences as a Markdown list, one bullet each.
    """
    hp_pl, hp_deg = _find(tests, "hpstrat", "placebo"), _find(tests, "hpstrat", "degree")
    pl_st, deg_st = _find(tests, "placebo", "stratified"), _find(tests, "degree", "stratified")
    hp_st = _find(tests, "hpstrat", "stratified")
    out = []
    if hp_st is not None:
        if hp_st["verdict"] == "a smaller":
            out.append(f"HpStrat's cross-fold spread is smaller than class-stratified k-fold's ({_said(hp_st)}).")
        elif hp_st["verdict"] == "a larger":
            out.append(f"HpStrat's cross-fold spread is larger than class-stratified k-fold's ({_said(hp_st)}).")
        else:
            out.append(f"Against class-stratified k-fold, HpStrat's spread is **inconclusive** on these blocks "
                       f"({_said(hp_st)}).")
    if hp_pl is not None:
        if hp_pl["verdict"] == "a smaller":
            out.append(f"HpStrat's spread is smaller than the placebo's, which has as many strata and no "
                       f"information: homophily carries information beyond the number of strata ({_said(hp_pl)}).")
        elif pl_st is not None and pl_st["verdict"] == "a smaller":
            out.append(f"The placebo, with HpStrat's number of strata and no information, is smaller than "
                       f"class-stratified ({_said(pl_st)}) and not distinguishable from HpStrat ({_said(hp_pl)}): "
                       f"the gain comes from finer strata, not from homophily.")
        elif hp_pl["verdict"] == "a larger":
            out.append(f"HpStrat's spread is larger than the placebo's ({_said(hp_pl)}).")
        else:
            out.append(f"HpStrat and the placebo are not distinguishable ({_said(hp_pl)}), and the placebo is not "
                       f"distinguishable from class-stratified either"
                       + (f" ({_said(pl_st)})" if pl_st is not None else "")
                       + ": on these blocks neither homophily nor finer strata change the spread measurably "
                         "(**inconclusive**).")
    if hp_deg is not None:
        if hp_deg["verdict"] == "a smaller":
            out.append(f"HpStrat's spread is smaller than degree stratification's ({_said(hp_deg)}).")
        elif hp_deg["verdict"] == "a larger":
            out.append(f"Degree stratification gives a smaller spread than HpStrat ({_said(hp_deg)}).")
        else:
            out.append(f"HpStrat and degree stratification are not distinguishable ({_said(hp_deg)})"
                       + (f"; degree vs class-stratified: {deg_st['verdict'].replace('a ', 'degree ')} "
                          f"({_said(deg_st)})" if deg_st is not None else "") + ".")
    out.extend(_trend_sentences(tests, alpha=alpha))
    f = tests["friedman"]
    if f["p_value"] == f["p_value"]:
        out.append(f"Over the {f['methods']} methods, the Friedman test gives p = {f['p_value']:.2g} "
                   f"(Kendall's W = {f['kendall_w']:.2f}, {f['blocks']} blocks): "
                   + ("the methods' ranks differ by more than chance" if f["p_value"] < alpha
                      else "their ranks do not differ by more than chance")
                   + " (mean ranks, 1 = smallest std: "
                   + ", ".join(f"{METHOD_LABELS[m]} {r:.2f}" for m, r in tests["mean_rank"].sort_values().items())
                   + ").")
    return "\n".join(f"- {sentence}" for sentence in out)


def _trend_sentences(tests: dict, *, alpha: float = 0.05) -> list[str]:
    """The reading of ``tests["trends"]`` and ``tests["by_graph"]`` (nothing when ``tests`` has no trends)."""
    trends = tests.get("trends")
    if trends is None or trends.empty:
        return []
    return trend_sentences(tests["by_graph"], trends, alpha=alpha)


def trend_sentences(by_graph: dict, trends: pd.DataFrame, *, alpha: float = 0.05) -> list[str]:
    """One sentence per row of :func:`homophily_trends` by fixed rules: the trend (Holm p < ``alpha``) or
    **inconclusive**, with rho and its p; the graphs where a alone is smaller or larger
    (:func:`paired_tests_by_graph`, Holm over the graphs); and for a trend, whether it survives leaving any one
    graph out (else the graph it rests on)."""
    out = []
    for _, t in trends.iterrows():
        first, other = METHOD_LABELS[t["a"]], METHOD_LABELS[t["b"]]
        said = (f"Spearman rho = {t['rho']:+.2f} between each graph's r and its homophily over {t['graphs']} graphs, "
                + ("no test (too few graphs)" if t["p_value"] != t["p_value"] else f"Holm p = {t['p_holm']:.2g}"))
        table = by_graph[(t["a"], t["b"])]
        smaller = table.loc[table["verdict"] == "a smaller", "dataset"].tolist()
        larger = table.loc[table["verdict"] == "a larger", "dataset"].tolist()
        said += (f"; alone (Holm over the graphs), {first} is smaller on {', '.join(smaller) or 'no graph'}"
                 + (f" and larger on {', '.join(larger)}" if larger else ""))
        if t["verdict"] != "inconclusive" and t["loo_p_max"] == t["loo_p_max"]:
            said += (f"; leaving out one graph at a time, the largest unadjusted p is {t['loo_p_max']:.2g} (without "
                     f"{t['loo_without']}): " + ("no single graph carries the trend" if t["loo_p_max"] < alpha
                                                 else f"the trend rests on {t['loo_without']}"))
        if t["verdict"] != "inconclusive" and t["p_given_size"] == t["p_given_size"]:
            said += (f"; holding the graphs' size fixed, partial rho = {t['rho_given_size']:+.2f}, p = "
                     f"{t['p_given_size']:.2g}: " + ("size does not explain it" if t["p_given_size"] < alpha
                                                     else "size could explain it"))
        if t["verdict"] == "effect grows with homophily":
            out.append(f"Graph by graph, the more homophilous the graph, the smaller {first}'s spread relative to "
                       f"{other}'s ({said}).")
        elif t["verdict"] == "effect shrinks with homophily":
            out.append(f"Graph by graph, the less homophilous the graph, the smaller {first}'s spread relative to "
                       f"{other}'s ({said}).")
        else:
            out.append(f"Graph by graph, whether {first}'s spread against {other}'s depends on the graph's "
                       f"homophily is **inconclusive** ({said}).")
    return out


def control_claims(tests: dict, *, alpha: float = 0.05, with_trends: bool = True) -> pd.DataFrame:
    """This book's own claims about the controls, in the scorecard's columns (``section``, ``claim``,
    ``paper``, ``rule``, ``ours``, ``verdict``, ``chapter``): the statement, the rule, our figure and a verdict
    from :data:`hpstrat_lite.reports.verdicts.VERDICTS`: *agrees* when the test supports the statement at
    Holm p < ``alpha``, *disagrees* when it is significant the other way, else *inconclusive*. With
    ``with_trends`` and trends in ``tests``, also the homophily trends (:func:`trend_claims`) on these rows,
    where they were found; the scorecard leaves them out and judges the trend on held-out rows
    (:func:`held_out_claims`)."""
    statements = {
        ("hpstrat", "placebo"): "HpStrat's cross-fold std is smaller than placebo stratification's (same strata count)",
        ("hpstrat", "degree"): "HpStrat's cross-fold std is smaller than degree stratification's",
        ("placebo", "stratified"): "finer strata alone (placebo) give a smaller std than class-stratified k-fold",
        ("degree", "stratified"): "degree stratification gives a smaller std than class-stratified k-fold",
        ("hpstrat", "stratified"): "HpStrat's cross-fold std is smaller than class-stratified k-fold's (blocks "
                                   "with every control)",
    }
    out = []
    for _, t in tests["pairwise"].iterrows():
        verdict = {"a smaller": "agrees", "a larger": "disagrees"}.get(t["verdict"], "inconclusive")
        out.append({"section": "Controls (this book)",
                    "claim": statements.get((t["a"], t["b"]), f"{t['a']} smaller than {t['b']}"),
                    "paper": "not tested by the paper",
                    "rule": f"two-sided Wilcoxon over (dataset, model, seed) blocks, Holm-adjusted p < {alpha}",
                    "ours": (f"median {t['median_diff']:+.2f} points, {t['share_a_smaller']:.0%} of {t['pairs']} "
                             f"blocks smaller, Holm p = {t['p_holm']:.2g}, r = {t['rank_biserial_r']:+.2f}"),
                    "verdict": verdict, "chapter": "03d_controls"})
    trends = tests.get("trends")
    if with_trends and trends is not None and not trends.empty:
        out.extend(trend_claims(trends, scope="controls' blocks, split seeds 0-2, where the trend was found",
                                chapter="03d_controls", alpha=alpha).to_dict("records"))
    return pd.DataFrame(out)


def trend_claims(trends: pd.DataFrame, *, scope: str, chapter: str, blocks: str = "(model, seed)",
                 section: str = "Controls (this book)", alpha: float = 0.05, unit: str = "graph") -> pd.DataFrame:
    """This book's claims that HpStrat's advantage grows with the graph's homophily, one per row of
    :func:`homophily_trends`, in the scorecard's columns. *agrees* when the trend holds (rho < 0, Holm p <
    ``alpha``), still has p < ``alpha`` with any one graph left out and, where ``trends`` has it, with the
    graphs' size held fixed; *disagrees* when it holds the other way; else *inconclusive* (also when one graph
    or the graphs' size could carry it). ``scope`` names the rows in the claim (e.g.
    "GNNs, split seeds 0-5"), ``blocks`` what one graph's Wilcoxon pairs, ``section`` the scorecard section,
    ``unit`` what one point of the correlation is (a graph; a cell of the ladder, :func:`ladder_claims`)."""
    out = []
    for _, t in trends.iterrows():
        verdict = {"effect grows with homophily": "agrees",
                   "effect shrinks with homophily": "disagrees"}.get(t["verdict"], "inconclusive")
        if not t["loo_p_max"] < alpha:  # one graph carries the trend (or too few graphs to tell)
            verdict = "inconclusive"
        sized = t["p_given_size"] == t["p_given_size"]  # NaN without graph sizes
        if sized and not t["p_given_size"] < alpha:  # the graphs' size could explain it
            verdict = "inconclusive"
        out.append({"section": section,
                    "claim": f"HpStrat's advantage over {METHOD_LABELS[t['b']]} k-fold grows with the graph's "
                             f"homophily ({scope})",
                    "paper": "not tested by the paper",
                    "rule": (f"Spearman rho < 0 between each {unit}'s rank-biserial r (Wilcoxon over its {blocks} "
                             f"blocks) and its mean node homophily, Holm-adjusted over {len(trends)} "
                             f"comparison(s), p < {alpha}; p < {alpha} with any one {unit} left out"
                             + (f" and with the {unit}s' size held fixed (partial Spearman)" if sized else "")),
                    "ours": (f"rho = {t['rho']:+.2f} over {t['graphs']} {unit}s, Holm p = {t['p_holm']:.2g}; one {unit} "
                             f"out: largest p = {t['loo_p_max']:.2g} (without {t['loo_without']})"
                             + (f"; size fixed: rho = {t['rho_given_size']:+.2f}, p = {t['p_given_size']:.2g}"
                                if sized else "")),
                    "verdict": verdict, "chapter": chapter})
    return pd.DataFrame(out, columns=["section", "claim", "paper", "rule", "ours", "verdict", "chapter"])


CONTROL_RESULTS = ["results/gnn_k4_seed0.csv", "results/gnn_k4_seeds1-5.csv", "results/controls_k4_seeds0-2.csv"]
"""The rows the controls page and the scorecard read: the paper methods' k = 4 sweeps and the controls' sweep."""


def controls_from_files(paths=CONTROL_RESULTS, *, seeds=(0, 1, 2), k: int = 4, max_epochs: int = 1000,
                        patience: int = 100, metric: str = "accuracy", root=None) -> tuple[dict, pd.DataFrame]:
    """``(tests, coverage)`` of the control experiment read from its results files (the paper's protocol
    by default): :func:`control_tests` of the test ``metric`` on the complete blocks, with the per-graph trends
    against each graph's homophily (:func:`graph_properties`, the graphs loaded from ``root``), and their
    coverage per dataset."""
    rows = read_rows(list(paths))
    if rows.empty:
        raise FileNotFoundError(f"no rows in {list(paths)}: run `hpstrat experiment --methods placebo degree`.")
    rows = rows[(rows["k"] == k) & (rows["max_epochs"] == max_epochs) & (rows["patience"] == patience)]
    complete, coverage = complete_blocks(rows, methods=ALL_METHODS, seeds=seeds)
    graphs = graph_properties(sorted(complete["dataset"].unique()), root=root)
    return control_tests(complete, metric=metric, homophily=graphs["homophily"], size=graphs["nodes"]), coverage


def split_method_trends(rows: pd.DataFrame, homophily, *, size=None, others=("stratified", "random"),
                        methods=PAPER_METHODS, alpha: float = 0.05, metric: str = "accuracy") -> dict:
    """HpStrat against each method of ``others`` graph by graph, on the blocks that have every split method of
    ``methods`` (default: the paper's three): ``by_graph`` ((a, b) -> :func:`paired_tests_by_graph`) and
    ``trends`` (:func:`homophily_trends` against ``homophily``, dataset -> mean node homophily, and ``size``,
    dataset -> number of nodes)."""
    wide = _complete_std(rows, methods, metric)
    by_graph = {("hpstrat", b): _tests_by_graph(wide, "hpstrat", b, alpha) for b in others}
    return {"by_graph": by_graph, "trends": homophily_trends(by_graph, homophily, size=size, alpha=alpha)}


def trend_by_seed(rows: pd.DataFrame, homophily, *, b: str = "stratified", metric: str = "accuracy") -> pd.DataFrame:
    """The trend of HpStrat vs ``b`` (:func:`split_method_trends`) on each split seed of ``rows`` alone: how much a
    one-seed sweep can say. One row per seed: ``seed``, ``graphs``, ``rho``, ``p_value`` (unadjusted)."""
    out = []
    for seed in sorted(rows["seed"].unique()):
        one = rows[rows["seed"] == seed]
        t = split_method_trends(one, homophily, others=(b,), metric=metric)["trends"].iloc[0]
        out.append({"seed": int(seed), "graphs": int(t["graphs"]), "rho": t["rho"], "p_value": t["p_value"]})
    return pd.DataFrame(out, columns=["seed", "graphs", "rho", "p_value"])


def split_trends_from_files(paths=CONTROL_RESULTS[:2], *, seeds=range(6), k: int = 4, max_epochs: int = 1000,
                            patience: int = 100, others=("stratified", "random"), root=None) -> dict:
    """:func:`split_method_trends` of the GNNs (every model but the MLP) on the paper's k-fold protocol over
    ``seeds`` (default: the six-seed sweep), HpStrat against each of ``others``, read from its results files;
    the graphs' homophily and size from ``root`` (:func:`graph_properties`). Also returns ``blocks`` (how many
    (dataset, GNN, seed) blocks have all three methods)."""
    rows = read_rows(list(paths))
    if rows.empty:
        raise FileNotFoundError(f"no rows in {list(paths)}: run `hpstrat experiment --seeds ...`.")
    rows = rows[(rows["k"] == k) & (rows["max_epochs"] == max_epochs) & (rows["patience"] == patience)
                & (rows["model"] != "MLP")]
    complete, _ = complete_blocks(rows, methods=PAPER_METHODS, seeds=tuple(seeds))
    graphs = graph_properties(sorted(complete["dataset"].unique()), root=root)
    out = split_method_trends(complete, graphs["homophily"], size=graphs["nodes"], others=others)
    out["blocks"] = complete.groupby(["dataset", "model", "seed"]).ngroups
    return out


#: Rows the homophily trend was not found on, to test it (:func:`held_out_claims`): the trend of HpStrat
#: against class-stratified k-fold was first seen on the controls' blocks (k = 4, split seeds 0-2); these are
#: the k = 4 sweep's split seeds 3-5 and the k = 5 sweep (label, results files, seeds, k).
HELD_OUT = (("GNNs, k = 4, held-out split seeds 3-5", CONTROL_RESULTS[:2], (3, 4, 5), 4),
            ("GNNs, k = 5, split seed 0", ["results/gnn_k5_seed0.csv"], (0,), 5))


def held_out_claims(*, held_out=HELD_OUT, root=None, alpha: float = 0.05) -> pd.DataFrame:
    """The claim "HpStrat's advantage over class-stratified k-fold grows with the graph's homophily" tested on
    rows it was not found on (:data:`HELD_OUT`), one :func:`trend_claims` row each (one comparison, so no
    adjustment), plus ``blocks`` and the trend's numbers (``graphs``, ``rho``, ``p_value``, ``loo_p_max``, ``loo_without``,
    ``rho_given_size``, ``p_given_size``). A sweep whose file is missing gives no row."""
    out = []
    for label, paths, seeds, k in held_out:
        try:
            found = split_trends_from_files(paths, seeds=seeds, k=k, others=("stratified",), root=root)
        except (FileNotFoundError, ValueError):
            continue
        claim = trend_claims(found["trends"], scope=label, chapter="03d_controls", blocks="(GNN, seed)",
                             section="Homophily trend, held out (this book)", alpha=alpha)
        numbers = found["trends"][["graphs", "rho", "p_value", "loo_p_max", "loo_without", "rho_given_size",
                                   "p_given_size"]]
        out.append(pd.concat([claim, numbers.reset_index(drop=True)], axis=1).assign(blocks=found["blocks"]))
    columns = ["section", "claim", "paper", "rule", "ours", "verdict", "chapter", "blocks", "graphs", "rho",
               "p_value", "loo_p_max", "loo_without", "rho_given_size", "p_given_size"]
    return pd.concat(out, ignore_index=True)[columns] if out else pd.DataFrame(columns=columns)


def held_out_reading(held_out: pd.DataFrame, *, alpha: float = 0.05) -> str:
    """What :func:`held_out_claims` says, one bullet per row by fixed rules: the trend replicates (p <
    ``alpha`` and rho < 0), and whether one graph or the graphs' size could carry it; or it does not."""
    if held_out.empty:
        return "- No held-out rows yet: run the k = 4 sweep's split seeds 3-5 or the k = 5 sweep."
    out = []
    for _, t in held_out.iterrows():
        scope = t["claim"][t["claim"].rfind("(") + 1:-1]
        said = f"rho = {t['rho']:+.2f}, p = {t['p_value']:.2g} over {t['graphs']} graphs, {t['blocks']} blocks"
        if t["p_value"] < alpha and t["rho"] < 0:
            one_out = ("survives leaving any one graph out" if t["loo_p_max"] < alpha else
                       f"rests on {t['loo_without']} (p = {t['loo_p_max']:.2g} without it)")
            sized = ("holds with the graphs' size fixed" if t["p_given_size"] < alpha else
                     f"does not hold with the graphs' size fixed (partial rho = {t['rho_given_size']:+.2f}, "
                     f"p = {t['p_given_size']:.2g}): size could explain it")
            out.append(f"{scope}: the trend replicates ({said}); it {one_out} and {sized} (**{t['verdict']}**).")
        else:
            out.append(f"{scope}: the trend does not replicate ({said}; **{t['verdict']}**).")
    return "\n".join(f"- {sentence}" for sentence in out)


_GRAPH_PROPERTIES: dict = {}
"""(dataset, data root) -> (name, mean node homophily, nodes): :func:`graph_properties` loads each graph once per
process (its raw files do not change while a page runs)."""


def graph_properties(datasets, *, root=None) -> pd.DataFrame:
    """Mean node homophily (HpStrat Table 1's column, isolated nodes excluded) and number of nodes of each
    graph, indexed by dataset; a graph whose raw files are missing is left out. Each graph is loaded once per
    process and data root (:func:`hpstrat_lite.data.graphs.dataset_summary`)."""
    from ..data.datasets import data_root
    from ..data.graphs import dataset_summary

    where, names = str(data_root(root)), list(dict.fromkeys(datasets))
    todo = [d for d in names if (d, where) not in _GRAPH_PROPERTIES]
    if todo:
        table = dataset_summary(todo, root=root)  # one row per name, in order
        for name, row in zip(todo, table.itertuples(index=False)):
            if row.status == "ok":
                _GRAPH_PROPERTIES[(name, where)] = (row.dataset, float(row.homophily), float(row.nodes))
    found = [_GRAPH_PROPERTIES[(d, where)] for d in names if (d, where) in _GRAPH_PROPERTIES]
    return pd.DataFrame(found, columns=["dataset", "homophily", "nodes"]).set_index("dataset")


# --------------------------------------------------------------------------------------------------
# The homophily ladder: graphs whose homophily and size are set by design

#: The ladder's comparisons: HpStrat against class-stratified k-fold and against the placebo, and the placebo
#: (finer strata without information) against class-stratified k-fold.
LADDER_COMPARISONS = (("hpstrat", "stratified"), ("hpstrat", "placebo"), ("placebo", "stratified"))


def ladder_cells(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per cell (n, lam) of the ladder's rows (:mod:`hpstrat_lite.experiments.ladder`): ``cell`` (its
    label), ``n``, ``lam``, ``expected_homophily``, ``homophily`` (measured: the mean over the cell's runs of
    the test fold's mean node homophily, the rows' ``test_homophily``) and ``graphs``."""
    runs = with_ladder_knobs(rows)
    cells = (runs.groupby(["n", "lam"])
             .agg(expected_homophily=("expected_homophily", "first"), homophily=("test_homophily", "mean"),
                  graphs=("dataset", "nunique"))
             .reset_index())
    cells.insert(0, "cell", [ladder_cell(n, lam) for n, lam in zip(cells["n"], cells["lam"])])
    return cells


def ladder_cell(n: int, lam: float) -> str:
    """The label of one cell of the ladder, e.g. ``"n=1000, lam=+0.75"``."""
    return f"n={int(n)}, lam={lam:+g}"


def ladder_tests(rows: pd.DataFrame, *, comparisons=LADDER_COMPARISONS, methods=LADDER_METHODS,
                 models=None, alpha: float = 0.05, metric: str = "accuracy") -> dict:
    """The controls on the homophily ladder: does HpStrat's advantage follow the graph's homophily when the
    graph's size is set apart from it?

    A block is one (graph, model, split seed), its value the cross-fold std of the test ``metric``
    (:func:`block_std`), as on the benchmarks; a cell (n, lam) holds the blocks of its graphs
    (:func:`ladder_cells`). For each comparison (a, b) of ``comparisons``:

    - ``pooled``: the two-sided Wilcoxon signed-rank test over every block with its rank-biserial r, Holm over
      the comparisons (as :func:`control_tests`);
    - ``by_cell``: the same test on each cell alone, Holm over the cells (:func:`paired_tests_by_graph` with
      the cells as graphs);
    - ``trends``: Spearman's rho between each cell's r and its measured homophily over the cells, Holm over
      the comparisons, the largest p with one cell left out, and the partial rho holding the cell's size
      fixed (:func:`homophily_trends`; rho < 0: a further below b on more homophilous graphs);
    - ``size_trends``: Spearman's rho between each cell's r and its number of nodes, and the partial rho
      holding homophily fixed (:func:`hpstrat_lite.stats.partial_spearman`), Holm over the comparisons; ``verdict`` "effect
      grows with size" (rho < 0) / "effect shrinks with size" / "inconclusive".

    ``models`` keeps the blocks of those models only (default: every model of ``rows``). Also returns
    ``cells`` (:func:`ladder_cells` with each cell's ``blocks``), ``blocks`` and ``models``."""
    if models is not None:
        rows = rows[rows["model"].isin(list(models))]
        if rows.empty:
            raise ValueError(f"rows hold no run of the models {tuple(models)}.")
    wide = _complete_std(rows, methods, metric)
    cells = ladder_cells(rows)
    graph = wide.index.get_level_values("dataset")
    knobs = ladder_knobs(graph)
    cell = [ladder_cell(n, lam) for n, lam in zip(knobs["n"], knobs["lam"])]
    wide.index = pd.MultiIndex.from_arrays([cell, graph, wide.index.get_level_values("model"),
                                            wide.index.get_level_values("seed")],
                                           names=["dataset", "graph", "model", "seed"])
    cells = cells.assign(blocks=cells["cell"].map(pd.Series(cell).value_counts()).fillna(0).astype(int))
    pooled = _pairwise_tests(wide, comparisons, alpha)
    by_cell = {(a, b): _tests_by_graph(wide, a, b, alpha) for a, b in comparisons}
    homophily = cells.set_index("cell")["homophily"]
    size = cells.set_index("cell")["n"]
    trends = homophily_trends(by_cell, homophily, size=size, alpha=alpha)
    sizes = []
    for (a, b), table in by_cell.items():
        r = table["rank_biserial_r"].to_numpy(float)
        n, h = table["dataset"].map(size).to_numpy(float), table["dataset"].map(homophily).to_numpy(float)
        rho, p = _spearman(r, n)
        fixed = stats.partial_spearman(r, n, h, unit="cell")
        rho_h, p_h = fixed.rho, fixed.pvalue
        sizes.append({"a": a, "b": b, "cells": len(table), "rho": rho, "p_value": p, "rho_given_homophily": rho_h,
                      "p_given_homophily": p_h})
    size_trends = pd.DataFrame(sizes)
    size_trends["p_holm"] = holm(size_trends["p_value"])
    size_trends["verdict"] = [_trend_verdict(p, rho, alpha, driver="size")
                              for p, rho in zip(size_trends["p_holm"], size_trends["rho"])]
    return {"pooled": pooled, "by_cell": by_cell, "trends": trends, "size_trends": size_trends, "cells": cells,
            "blocks": len(wide), "models": sorted(rows["model"].unique())}


def ladder_table(tests: dict, *, a: str = "hpstrat", b: str = "stratified") -> pd.DataFrame:
    """One comparison of :func:`ladder_tests` cell by cell, as a page shows it: ``n``, ``lam``, ``homophily``
    (measured), ``blocks``, ``median a - b`` (points), ``r`` (rank-biserial, below 0: a smaller), ``Holm p``
    (over the cells) and ``verdict``."""
    cells = tests["cells"].set_index("cell")
    t = tests["by_cell"][(a, b)].set_index("dataset")
    t = t.loc[[c for c in cells.index if c in t.index]]
    return pd.DataFrame({"n": cells.loc[t.index, "n"].to_numpy(int), "lam": cells.loc[t.index, "lam"].to_numpy(),
                         "homophily": cells.loc[t.index, "homophily"].to_numpy(), "blocks": t["pairs"].to_numpy(),
                         f"median {METHOD_LABELS[a]} - {METHOD_LABELS[b]}": t["median_diff"].to_numpy(),
                         "r": t["rank_biserial_r"].to_numpy(), "Holm p": t["p_holm"].to_numpy(),
                         "verdict": t["verdict"].to_numpy()})


def ladder_trends_table(tests: dict) -> pd.DataFrame:
    """The ladder's trends as a page shows them, one row per comparison: ``comparison``, ``cells``, the trend with
    homophily (``with homophily``: rho and Holm p; ``size fixed``: the partial p; ``verdict``) and with size
    (``with size``: rho and Holm p; ``homophily fixed``: the partial p; ``verdict (size)``)."""
    trends, sizes = tests["trends"], tests["size_trends"]

    def said(rho, p):
        return "n/a" if rho != rho else f"rho {rho:+.2f}, Holm p {format_number(p, kind='p')}"

    def partial(p):
        return "n/a" if p != p else f"p {format_number(p, kind='p')}"

    return pd.DataFrame({
        "comparison": [f"{METHOD_LABELS[a]} vs {METHOD_LABELS[b]}" for a, b in zip(trends["a"], trends["b"])],
        "cells": trends["graphs"].to_numpy(),
        "with homophily": [said(r, p) for r, p in zip(trends["rho"], trends["p_holm"])],
        "size fixed": [partial(p) for p in trends["p_given_size"]],
        "verdict": trends["verdict"].to_numpy(),
        "with size": [said(r, p) for r, p in zip(sizes["rho"], sizes["p_holm"])],
        "homophily fixed": [partial(p) for p in sizes["p_given_homophily"]],
        "verdict (size)": sizes["verdict"].to_numpy(),
    })


def ladder_reading(tests: dict, *, alpha: float = 0.05) -> str:
    """What :func:`ladder_tests` says, one bullet per comparison by fixed rules: the pooled verdict; whether the
    effect follows homophily (Holm p < ``alpha``, still below ``alpha`` with the size held fixed) and whether
    it follows size (Holm p < ``alpha``, still below with homophily held fixed); and the conclusion for the
    benchmarks' trend: homophily and not size, size and not homophily, both, or neither (**inconclusive**)."""
    out = []
    for (_, pooled), (_, trend), (_, size) in zip(tests["pooled"].iterrows(), tests["trends"].iterrows(),
                                                  tests["size_trends"].iterrows()):
        first, other = METHOD_LABELS[pooled["a"]], METHOD_LABELS[pooled["b"]]
        verdict = {"a smaller": f"{first}'s spread is smaller", "a larger": f"{first}'s spread is larger"}.get(
            pooled["verdict"], "the difference is **inconclusive**")
        by_h = trend["verdict"] != "inconclusive" and trend["p_given_size"] < alpha
        by_n = size["verdict"] != "inconclusive" and size["p_given_homophily"] < alpha
        h_said = (f"with homophily rho = {trend['rho']:+.2f}, Holm p = {format_number(trend['p_holm'], kind='p')}, "
                  f"size fixed p = {format_number(trend['p_given_size'], kind='p')}")
        n_said = (f"with size rho = {size['rho']:+.2f}, Holm p = {format_number(size['p_holm'], kind='p')}, "
                  f"homophily fixed p = {format_number(size['p_given_homophily'], kind='p')}")
        if by_h and not by_n:
            follows = (f"over the cells the {trend['verdict']} and not with size "
                       f"({h_said}; {n_said}): set apart from size, homophily moves it")
        elif by_n and not by_h:
            follows = (f"over the cells the {size['verdict']} and not with homophily "
                       f"({n_said}; {h_said}): size moves it, homophily does not")
        elif by_h and by_n:
            follows = (f"over the cells the {trend['verdict']} and {size['verdict'].removeprefix('effect ')} "
                       f"({h_said}; {n_said}): both move it")
        else:
            follows = (f"whether the effect follows homophily or size is **inconclusive** over the cells ({h_said}; "
                       f"{n_said})")
        out.append(f"{first} vs {other}: pooled over {pooled['pairs']} blocks, {verdict} (median "
                   f"{pooled['median_diff']:+.2f} points, Holm p = {format_number(pooled['p_holm'], kind='p')}, "
                   f"r = {pooled['rank_biserial_r']:+.2f}); {follows}.")
    return "\n".join(f"- {sentence}" for sentence in out)


LADDER_RESULTS = "results/controls_csbm_ladder.csv"
"""The ladder's rows (:func:`hpstrat_lite.experiments.ladder.run_csbm_ladder`)."""


def ladder_claims(tests: dict, *, alpha: float = 0.05) -> pd.DataFrame:
    """This book's claim that HpStrat's advantage over class-stratified k-fold grows with homophily, judged on
    the ladder (:func:`ladder_tests`, of the GNN blocks as the held-out claims: ``ladder_from_file(...,
    gnns_only=True)``), where size is set apart from homophily by design: the rules of
    :func:`trend_claims` over the cells for this one comparison (the hypothesis the benchmarks raised, so no
    adjustment), plus *inconclusive* when the effect also follows size, with and without homophily held fixed
    (unadjusted p < ``alpha``)."""
    cells = tests["cells"].set_index("cell")
    # the one comparison the benchmarks' hypothesis names, so no adjustment over the ladder's comparisons
    trend = homophily_trends({("hpstrat", "stratified"): tests["by_cell"][("hpstrat", "stratified")]},
                             cells["homophily"], size=cells["n"], alpha=alpha)
    size = tests["size_trends"].set_index(["a", "b"]).loc[("hpstrat", "stratified")]
    models = sorted(tests["models"])
    graphs = int(cells["graphs"].max())
    scope = (f"{', '.join(models)} on contextual SBMs of set homophily and size, {len(cells)} cells of {graphs} "
             f"graph{'s' if graphs != 1 else ''}, {tests['blocks']} blocks")
    claims = trend_claims(trend, scope=scope, chapter="03d_controls",
                          blocks="(graph, model, seed)", section="Homophily ladder (this book)", alpha=alpha,
                          unit="cell")
    if size["p_value"] < alpha and size["p_given_homophily"] < alpha:
        claims["verdict"] = "inconclusive"
    claims["rule"] = claims["rule"] + f"; inconclusive when the effect also follows the cells' size (p < {alpha})"
    claims["ours"] = claims["ours"] + (f"; with size: rho = {size['rho']:+.2f}, p = {size['p_value']:.2g}, "
                                       f"homophily fixed p = {size['p_given_homophily']:.2g}")
    return claims


def ladder_from_file(path=LADDER_RESULTS, *, alpha: float = 0.05, models=None, gnns_only: bool = False) -> dict:
    """:func:`ladder_tests` of the ladder's rows read from ``path`` (of ``models``, or with ``gnns_only`` of every
    model but the MLP, as the held-out claims); a clear error when there are none."""
    rows = read_rows(path)
    if rows.empty:
        raise FileNotFoundError(f"no rows in {path}: run `hpstrat ladder`.")
    if gnns_only:
        models = sorted(m for m in (rows["model"].unique() if models is None else models) if m != "MLP")
    return ladder_tests(rows, alpha=alpha, models=models)


def ladder_accuracy(rows: pd.DataFrame, *, metric: str = "accuracy") -> pd.DataFrame:
    """Mean test ``metric`` (points) of each model at each homophily level of the ladder, over its sizes, graphs,
    split methods, seeds and folds: whether the graph helps or hurts the GNN in each cell, against the MLP,
    which reads no edges. Index ``lam`` and ``expected homophily``, one column per model."""
    runs = with_ladder_knobs(rows, columns=["lam", "expected_homophily"])
    runs = runs.assign(h=runs["expected_homophily"].round(2), score=100 * runs[score_column(runs, metric)])
    table = runs.pivot_table(index=["lam", "h"], columns="model", values="score", aggfunc="mean")
    return table.rename_axis(index=["lam", "expected homophily"], columns=None)


def balance_table(quality_by_family: dict, *, methods=LADDER_METHODS) -> pd.DataFrame:
    """How much homophily imbalance between folds each split method leaves, per family of graphs: mean CHD and
    W1 (:func:`hpstrat_lite.data.quality.quality_table` rows, e.g. the benchmarks' and
    :func:`hpstrat_lite.experiments.ladder.ladder_quality`'s per size) of each method of ``methods``, and
    HpStrat's CHD as a share of class-stratified k-fold's. One row per family (the keys of
    ``quality_by_family``)."""
    out = []
    for family, q in quality_by_family.items():
        mean = q[q["method"].isin(list(methods))].groupby("method")[["chd", "w1"]].mean()
        row = {"graphs": family}
        row.update({f"CHD {METHOD_LABELS[m]}": mean.at[m, "chd"] for m in methods if m in mean.index})
        row.update({f"W1 {METHOD_LABELS[m]}": mean.at[m, "w1"] for m in methods if m in mean.index})
        if {"hpstrat", "stratified"} <= set(mean.index):
            row["CHD HpStrat / class-stratified"] = mean.at["hpstrat", "chd"] / mean.at["stratified", "chd"]
        out.append(row)
    return pd.DataFrame(out)
