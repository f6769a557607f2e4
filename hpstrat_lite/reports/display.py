"""Claims tables and findings for reading: every claims table of the book goes through :func:`claims_table`,
every "Key findings" box and the front page's findings through :func:`key_findings` and
:func:`findings_table`.

A claims table is a frame with (some of) the columns ``section, claim, paper, rule, ours / evidence,
verdict`` (:func:`hpstrat_lite.reports.scorecard.scorecard`, :func:`hpstrat_lite.reports.necessity.part2_claims`).
Shown here: no index column, no cut cell (a pandas ``Styler`` renders every character; long text wraps),
lists written as words, each verdict in bold.
"""
from __future__ import annotations

import html

import pandas as pd

from .verdicts import BY_CONSTRUCTION, VERDICTS

#: The columns a claims table shows, in this order (those present).
CLAIM_COLUMNS = ("study", "section", "source", "claim", "paper", "rule", "ours", "evidence", "missing", "verdict")

#: Chapter notebooks and the title a link to them shows.
CHAPTER_TITLES = {
    "02b_fold_metrics_summary": "Fold metrics: summary", "03_gnn_experiments": "GNN experiments",
    "03b_gnn_experiments_k5": "GNN experiments, k = 5", "03c_gnn_experiments_seeds": "GNN experiments, six seeds",
    "04_appendix_b": "Appendix B", "05_appendix_g": "Appendix G", "06_mlp_vs_gnn": "MLP vs GNN",
    "07_feature_study": "Feature study", "08_synthetic_ws": "Synthetic WS benchmarks",
    "09_link_benchmarks": "Link benchmarks",
}


def _words(value) -> str:
    """A cell as words: a list or tuple joined with commas (empty: an em dash), NaN as an empty cell."""
    if isinstance(value, (list, tuple, set)):
        return ", ".join(map(str, value)) if value else "—"
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value)


def claims_frame(claims: pd.DataFrame, *, columns=CLAIM_COLUMNS) -> pd.DataFrame:
    """``claims`` reduced to the columns a reader needs (in :data:`CLAIM_COLUMNS` order), every cell a string
    (lists as words), a fresh 0..n-1 index. Raises ``ValueError`` when it has no ``verdict`` column."""
    if "verdict" not in claims.columns:
        raise ValueError(f"claims must have a 'verdict' column; got columns {list(claims.columns)}.")
    keep = [c for c in columns if c in claims.columns]
    return claims[keep].map(_words).reset_index(drop=True)


def claims_table(claims: pd.DataFrame, *, columns=CLAIM_COLUMNS, link_base: str | None = None):
    """A claims table for reading: a ``pandas.io.formats.style.Styler`` with no index column, every cell whole
    and wrapping, lists as words and the verdict in bold.

    Parameters
    ----------
    claims : pandas.DataFrame
        Rows with a ``verdict`` column and any of :data:`CLAIM_COLUMNS`.
    columns : sequence of str
        The columns to show, in order (those present).
    link_base : str, optional
        When given and ``claims`` has a ``chapter`` column, a last column links each row to its chapter's page
        (``link_base + chapter + ".html"``).
    """
    frame = claims_frame(claims, columns=columns)
    if link_base is not None and "chapter" in claims.columns:
        frame["chapter"] = [_link(c, link_base) for c in claims["chapter"]]
    styler = frame.style.hide(axis="index")
    styler = styler.map(lambda v: "font-weight: bold", subset=["verdict"])
    styler = styler.set_table_styles([
        {"selector": "td, th", "props": "white-space: normal; word-break: normal; overflow-wrap: anywhere; "
                                        "text-align: left; vertical-align: top"},
        {"selector": "td", "props": "min-width: 6em; max-width: 32em"},
    ])
    return styler


def _link(chapter, base: str) -> str:
    chapter = _words(chapter)
    if not chapter:
        return ""
    title = CHAPTER_TITLES.get(chapter, chapter)
    return f'<a href="{html.escape(base + chapter)}.html">{html.escape(title)}</a>'


def verdict_counts(claims: pd.DataFrame) -> dict:
    """How many claims got each verdict of :data:`hpstrat_lite.reports.verdicts.VERDICTS` (zeros included)."""
    counts = claims["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def counts_sentence(claims: pd.DataFrame, *, what: str = "claims") -> str:
    """"n claims tested: a agree, d disagree, i inconclusive; c more hold by construction (counted apart)."."""
    c = verdict_counts(claims)
    tested = len(claims) - c[BY_CONSTRUCTION]
    text = (f"{tested} {what} tested: {c['agrees']} agree, {c['disagrees']} disagree, "
            f"{c['inconclusive']} inconclusive")
    if c[BY_CONSTRUCTION]:
        text += f"; {c[BY_CONSTRUCTION]} more hold by construction (counted apart)"
    return text + "."


def key_findings(claims: pd.DataFrame, *, chapter: str | None = None, limit: int = 6) -> str:
    """The "Key findings" box of a chapter, as Markdown computed from its claims rows.

    ``chapter`` keeps the rows whose ``chapter`` column names it (all rows when None). One bullet per claim
    (the first ``limit``): the claim, the verdict in bold and our figure; then the counts
    (:func:`counts_sentence`). Rows with no numbers yet say so.
    """
    if chapter is not None and "chapter" in claims.columns:
        claims = claims[claims["chapter"] == chapter]
    if claims.empty:
        return "**Key findings.** No claim of the papers is checked on this page's rows yet."
    ours = "ours" if "ours" in claims.columns else "evidence"
    lines = ["**Key findings** (computed from this page's rows):", ""]
    for _, r in claims.head(limit).iterrows():
        figure = _words(r.get(ours, "")) or "no numbers yet"
        lines.append(f"- {_words(r['claim'])}: **{r['verdict']}** ({_short(figure)})")
    if len(claims) > limit:
        lines.append(f"- ... and {len(claims) - limit} more in the claims table below.")
    lines += ["", counts_sentence(claims)]
    return "\n".join(lines)


def _short(text: str, limit: int = 160) -> str:
    """``text`` up to its first "; reruns:" or its last "; " break within ``limit`` characters (a findings bullet
    gives the headline figure; the full cell is in the claims table), saying when a committed rerun fails."""
    head, *reruns = text.split("; reruns:")
    note = "; not on every committed rerun" if reruns and "(fails)" in reruns[0] else ""
    if len(head) > limit:
        cut = head.rfind("; ", 0, limit)
        head = head[:cut] + "; ..." if cut > 0 else head
    return head + note


def findings_table(claims: pd.DataFrame, *, link_base: str = "") -> pd.DataFrame:
    """The front page's table: one row per claim with ``claim``, ``paper``, ``ours``, ``verdict`` and a link
    to the chapter that shows it (``chapter``), rerun details left to the scorecard."""
    frame = claims_frame(claims, columns=("study", "claim", "paper", "ours", "verdict"))
    frame["paper"] = frame["paper"].map(_short)
    frame["ours"] = frame["ours"].map(_short)
    if "chapter" in claims.columns:
        frame["chapter"] = [_link(c, link_base) for c in claims["chapter"]]
    return frame


def markdown_to_html(text: str) -> str:
    """``text`` (Markdown) as HTML, for a value glued into another page (myst-nb pastes ``text/html`` across
    pages, not ``text/markdown``). Needs ``markdown-it-py`` (installed with the book's dependencies)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(text)


def _pick(claims: pd.DataFrame, section: str, word: str):
    sel = claims[claims["section"].astype(str).str.startswith(section) & claims["claim"].str.contains(word, regex=False)]
    return sel.iloc[0] if len(sel) else None


def _p_of(row) -> str:
    """The Wilcoxon p-value of a Section 5.2 row, and whether a committed rerun broke it."""
    import re

    ours = _words(row["ours"]) if row is not None else ""
    m = re.search(r"Wilcoxon p = ([0-9.e+-]+)", ours)
    text = f"p = {m.group(1)}" if m else "no test"
    return text + ("; not on every committed rerun" if "(fails)" in ours else "")


def findings_sentences(part1: pd.DataFrame, part2: pd.DataFrame) -> str:
    """Two or three sentences, in Markdown, that say what this reproduction found: the verdict counts of each
    paper (:func:`counts_sentence`) and the central claim of each, read from the scorecard rows
    (:func:`hpstrat_lite.reports.scorecard.scorecard`, :func:`hpstrat_lite.reports.scorecard.part2_scorecard`)."""
    out = [f"**HpStrat** (Part I): {counts_sentence(part1)}"]
    central = []
    for protocol in ("k = 4, seed 0", "k = 5, seed 0", "k = 4, seeds 0-5"):
        row = _pick(part1, f"Section 5.2, {protocol}", "class-stratified")
        if row is not None:
            central.append(f"*{row['verdict']}* with {protocol} ({_p_of(row)})")
    rnd = _pick(part1, "Section 5.2, k = 4, seed 0", "random")
    if central:
        out.append("Its central claim, a smaller cross-fold spread than class-stratified k-fold, is "
                   + "; ".join(central) + (f"; against random k-fold it is *{rnd['verdict']}* ({_p_of(rnd)})"
                                           if rnd is not None else "") + ".")
    out.append(f"**Does the graph matter?** (Part II): {counts_sentence(part2)}")
    return " ".join(out)


def gnn_page_scope(*, k: int, seeds) -> str:
    """What a page of the GNN chapter adds, from its protocol (``k`` folds, split ``seeds``), in Markdown: the
    main protocol (k = 4, seed 0), another number of folds, or several split seeds."""
    seeds = [int(s) for s in seeds]
    if len(seeds) > 1:
        return (f"**This page** runs the paper's protocol over split seeds {seeds[0]}-{seeds[-1]} (k = {k}): the std of "
                "each (dataset, model, method) is averaged over the seeds before ranking, so one lucky or unlucky split "
                "weighs less, and Appendix E's best-model changes are judged against their cross-seed spread. The "
                "scorecard sets its tests beside those of k = 4 and k = 5 with one seed.")
    if k != 4:
        return (f"**This page** repeats the main experiment with k = {k} folds (split seed {seeds[0]}): each test fold "
                f"holds 1/{k} of the nodes instead of 1/4, a second check that the main protocol's conclusions do not "
                "hang on the number of folds. The scorecard sets its tests beside those of k = 4 and of six seeds.")
    return (f"**This page** is the paper's main protocol (k = {k}, split seed {seeds[0]}). Its ordering claims are "
            "checked against every committed rerun of the same sweep; the k = 5 and six-seed pages repeat it with "
            "other folds and seeds.")


def front_claims(part1: pd.DataFrame, part2: pd.DataFrame) -> pd.DataFrame:
    """The headline claims for the front page, from the two scorecards: Part I's tested claims of the main
    protocol (the Section 5.2 tests, the first row of each other section; the k = 5 and six-seed orders) and
    every Part II claim; rows that hold by construction are left to the scorecard. A ``study`` column names
    the paper."""
    p1 = part1[part1["verdict"] != BY_CONSTRUCTION]
    main = p1["section"].astype(str).str.startswith("Section 5.2, k = 4, seed 0")
    first = ~p1["section"].astype(str).str.startswith("Section 5.2") & ~p1["section"].duplicated()
    p1 = p1[main | first].assign(study="HpStrat")
    p2 = part2[part2["verdict"] != BY_CONSTRUCTION].assign(study="Does the graph matter?")
    return pd.concat([p1, p2], ignore_index=True)
