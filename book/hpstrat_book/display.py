"""Numbers as the book shows them: each kind of value rounded to the precision that carries meaning.

==================  ================================================  ==========================
kind                rule                                              example
==================  ================================================  ==========================
``homophily``       2 decimals (a node's or a graph's homophily)      0.825158 -> ``0.83``
``fold homophily``  3 decimals (a fold's mean: folds differ there)    0.82516 -> ``0.825``
``accuracy``        1 decimal (percentage points, also their std)     81.2743 -> ``81.3``
``p``               2 significant digits                              0.000123456 -> ``0.00012``
``metric``          3 significant digits (SDD, CDD, CHD, W1, ratios)  12.2825 -> ``12.3``
``rank``            2 decimals                                        1.6667 -> ``1.67``
``integer``         no decimals                                       8.0 -> ``8``
``share``           a fraction as a whole percentage                  0.6667 -> ``67%``
``text``            as it is                                          ``"GCN"``
``code``            as it is, shown as code (a command)               ``"hpstrat experiment"``
an int ``d``        ``d`` decimals
==================  ================================================  ==========================

A ``metric`` below 0.001 is written as ``1.23e-04``, so that no number shows more than 4 decimals. A
value that rounds to zero is shown without a sign (``-0.0004`` -> ``0.00``, never ``-0.00``); a
missing value (None, NaN) is ``n/a``; a boolean is ``yes`` / ``no``; a list is written as words
(``GCN, MLP``) and a mapping as ``key value`` pairs (``max epochs 1000, patience 100``), never as a Python
repr. A column header is shown in words: ``max_epochs`` -> ``max epochs``. :func:`format_table` applies the
rules to a table's columns, guessing a column's kind from its name and values where it is not given.

Numbered tables
---------------

Every table of a chapter with a caption is numbered ("Table N", referenced in prose as {numref}`tbl-...`):
``format_table(df, caption=...)`` (with ``name="tbl-..."`` for a table the prose references; without one the
label is made from the caption) returns a :class:`NumberedTable`, whose Markdown is a MyST
``{table}`` directive around a pipe table of the formatted cells. The book renders it because ``_config.yml``
parses Markdown outputs as MyST (``nb_render_markdown_format: myst``) and prefers them to HTML
(``nb_mime_priority_overrides``); Jupyter shows its HTML (the captioned ``Styler``).

Claims tables and findings
--------------------------

Claims tables and findings for reading: every claims table of the book goes through :func:`claims_table`,
every "Key findings" box through :func:`key_findings`, the front page's answer and headline claims through
:func:`answer_in_short` and :func:`headline_table`.

A claims table is a frame with (some of) the columns ``section, claim, paper, rule, ours / evidence,
verdict`` (:func:`hpstrat_book.scorecard.scorecard`, :func:`hpstrat_book.necessity.part2_claims`).
Shown here: no index column, no cut cell (a pandas ``Styler`` renders every character; long text wraps),
lists written as words, each verdict in bold.
"""
from __future__ import annotations

import html
import math
import numbers
import re

import numpy as np
import pandas as pd

from .verdicts import APART, BY_CONSTRUCTION, EXPLORATORY, VERDICTS

from hpstrat_lite._format import KINDS, NA, _check_kind, findings_box, format_number  # noqa: F401  (one rule set)

_METRIC_NAMES = ("sdd", "cdd", "chd", "w1")


def format_mean_std(mean, std, *, kind="metric") -> str:
    """``mean ± std`` with ``mean`` by the rule of ``kind`` and ``std`` to the same decimal place (or in the
    same exponent notation); ``n/a`` when the mean is missing, the mean alone when the std is.

    Examples
    --------
    >>> format_mean_std(12.28250, 0.41875), format_mean_std(0.0123456, 0.00211), format_mean_std(81.27, 1.234, kind="accuracy")
    ('12.3 ± 0.4', '0.0123 ± 0.0021', '81.3 ± 1.2')
    """
    m = format_number(mean, kind=kind)
    sd = format_number(std, kind="metric")
    if m == NA or sd == NA:
        return m
    if "e" in m:
        digits = len(m.split("e")[0].split(".")[1]) if "." in m else 0
        sd = f"{abs(float(std)):.{digits}e}"
    else:
        digits = len(m.split(".")[1]) if "." in m else 0
        sd = f"{abs(float(std)):.{digits}f}"
    return f"{m} ± {sd}"


def column_kind(name, values) -> str:
    """The kind of a column guessed from its name (the last level of a tuple) and values: p-values
    (``p``, ``p-value``, ``friedman_p``, ``... p``), ``homophily``, accuracies (``acc``), the fold metrics
    (``sdd``, ``cdd``, ``chd``, ``w1``), ranks; otherwise ``integer`` when every value is a whole number,
    ``text`` for a column that is not numeric, else ``metric``."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    label = str(name[-1] if isinstance(name, tuple) else name).strip().lower()
    values = pd.Series(values)
    if is_bool_dtype(values) or not is_numeric_dtype(values):
        return "text"
    words = label.replace("_", " ").replace("-", " ").split()
    if label in ("p", "p-value", "p_value", "pvalue") or (words and (words[0] == "p" or words[-1] in ("p", "pvalue"))) \
            or "p-value" in label or "p value" in label.replace("_", " "):
        return "p"
    if "homophily" in label:
        return "homophily"
    if "acc" in label or "roc auc" in label or "auc" in words:
        return "accuracy"
    if words and words[0] in _METRIC_NAMES:
        return "metric"
    if "rank" in label:
        return "rank"
    finite = values.astype(float)
    finite = finite[np.isfinite(finite)]
    if len(finite) and np.all(finite == np.round(finite)):
        return "integer"
    return "metric"


def format_frame(df: pd.DataFrame, *, kinds: dict | None = None) -> pd.DataFrame:
    """``df`` with every cell formatted as a string (:func:`format_number`), each column by its kind in
    ``kinds`` (column name -> kind) or, for the others, by :func:`column_kind`; the index too."""
    kinds = _check_kinds(df, kinds)
    out = pd.DataFrame({col: [format_number(v, kind=kinds[col]) for v in df[col]] for col in df.columns},
                       index=df.index, columns=df.columns)
    return out.rename(index=_index_label)


def format_table(df: pd.DataFrame, *, kinds: dict | None = None, caption: str | None = None,
                 hide_index: bool = False, name: str | None = None):
    """A table as the book displays it: a pandas ``Styler`` of ``df`` (the frame is unchanged) whose numbers
    follow the rules of the module docstring; with a ``name``, a numbered table (:class:`NumberedTable`).

    Parameters
    ----------
    df : pandas.DataFrame
    kinds : dict, optional
        Column name -> kind (``"homophily"``, ``"accuracy"``, ``"p"``, ``"metric"``, ``"rank"``,
        ``"integer"``, ``"share"``, ``"text"``, ``"code"`` or a number of decimals). Columns not named are guessed by
        :func:`column_kind`.
    caption : str, optional
        The table's caption (MyST inline Markdown in a numbered table).
    hide_index : bool, default False
    name : str, optional
        The label of a numbered table (``tbl-`` and lowercase words joined by hyphens), which prose references
        as {numref}`tbl-...`; needs a ``caption``.

    Examples
    --------
    >>> df = pd.DataFrame({"mean homophily": [0.825158], "p": [0.0123456], "nodes": [2708.0]})
    >>> format_table(df).to_html().count("0.83"), format_frame(df).iloc[0].tolist()
    (1, ['0.83', '0.012', '2708'])
    >>> print(format_table(df, caption="One graph", name="tbl-one", hide_index=True)._repr_markdown_())
    ```{table} One graph
    :name: tbl-one
    <BLANKLINE>
    | mean homophily | p | nodes |
    | --: | --: | --: |
    | 0.83 | 0.012 | 2708 |
    ```
    """
    if name is None and caption and " ".join(str(caption).split()):
        name = caption_label(caption)
    if name is not None:
        return NumberedTable(df, kinds=kinds, caption=caption, name=name, hide_index=hide_index)
    return _styler(df, _check_kinds(df, kinds), caption, hide_index)


def _styler(df, kinds, caption, hide_index):
    """The formatted ``Styler`` of :func:`format_table` (``kinds`` checked)."""
    styler = df.style.format({col: (lambda v, k=kinds[col]: _html_cell(v, k)) for col in df.columns})
    styler = styler.format_index(_index_label).format_index(header_words, axis=1)
    if caption:
        styler = styler.set_caption(caption)
    return styler.hide(axis="index") if hide_index else styler


def caption_label(caption: str) -> str:
    """A table label made from a caption: ``tbl-`` and its first six words (letters, digits), lowercase.

    >>> caption_label("Mean homophily of each fold (k = 4)!")
    'tbl-mean-homophily-of-each-fold-k'
    """
    words = re.findall(r"[a-z0-9]+", str(caption).lower())[:6]
    return "tbl-" + "-".join(words or ["table"])


def header_words(label) -> str:
    """A column header in words: underscores as spaces (``max_epochs`` -> ``max epochs``)."""
    return str(label).replace("_", " ") if isinstance(label, str) else label


def _html_cell(value, kind) -> str:
    text = format_number(value, kind=kind)
    return f"<code>{html.escape(text)}</code>" if kind == "code" else text


#: A numbered table's label: ``tbl-`` and lowercase words (letters, digits) joined by hyphens.
TABLE_NAME = r"tbl-[a-z0-9]+(?:-[a-z0-9]+)*"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>$|&~])")


class NumberedTable:
    """A table the book numbers and captions ("Table N"), referenced in prose as {numref}`name`.

    ``_repr_markdown_`` is a MyST ``{table}`` directive (caption, ``:name:``) around a pipe table of the cells
    formatted by :func:`format_frame`: numbers (and text that reads as numbers) right-aligned, cell text escaped,
    ``code`` cells as inline code, the index as the first columns unless ``hide_index``, column levels joined by
    spaces. ``_repr_html_`` is the captioned :func:`format_table` ``Styler`` (what Jupyter shows). Raises
    ``ValueError`` for a missing caption, a bad ``name``, or a frame with no column to show.
    """

    def __init__(self, df: pd.DataFrame, *, kinds: dict | None = None, caption: str | None = None, name: str,
                 hide_index: bool = False, bold=(), raw=()):
        self.kinds = _check_kinds(df, kinds)
        if not isinstance(name, str) or not re.fullmatch(TABLE_NAME, name):
            raise ValueError(f"name={name!r} is not a table label; use 'tbl-' and lowercase words (letters, "
                             "digits) joined by hyphens, e.g. 'tbl-03-ranks'.")
        caption = " ".join(str(caption or "").split())
        if not caption:
            raise ValueError(f"a numbered table needs a caption; got caption={caption!r} for name={name!r}.")
        if df.shape[1] == 0 and hide_index:
            raise ValueError(f"table {name!r} has no column to show (df has no columns and hide_index=True).")
        self.df, self.caption, self.name, self.hide_index = df, caption, name, hide_index
        self.bold = [c for c in bold if c in df.columns]
        self.raw = [c for c in raw if c in df.columns]  # cells that are MyST already (a {doc} link): not escaped

    def _repr_markdown_(self) -> str:
        cells = format_frame(self.df, kinds=self.kinds)
        index = [] if self.hide_index else [header_words(_words(n)) if n is not None else ""
                                            for n in cells.index.names]
        header = [_md_text(n) for n in index] + [_md_text(_column_label(c)) for c in cells.columns]
        align = [":--"] * len(index) + ["--:" if _numeric(cells[c], self.kinds[c]) else ":--" for c in cells.columns]
        lines = [_md_row(header), _md_row(align)]
        for key, row in zip(cells.index, cells.itertuples(index=False)):
            keys = [] if self.hide_index else list(key) if isinstance(key, tuple) else [key]
            lines.append(_md_row([_md_text(_words(k)) for k in keys]
                                 + [_md_code(v) if self.kinds[c] == "code" else
                                    " ".join(str(v).split()).replace("|", "\\|") if c in self.raw else
                                    f"**{_md_text(v)}**" if c in self.bold and str(v).strip() else _md_text(v)
                                    for c, v in zip(cells.columns, row)]))
        return "\n".join([f"```{{table}} {self.caption}", f":name: {self.name}", "", *lines, "```"])

    def _repr_html_(self) -> str:
        return _styler(self.df, self.kinds, self.caption, self.hide_index).to_html()

    def __repr__(self) -> str:
        return f"NumberedTable(name={self.name!r}, caption={self.caption!r}, shape={self.df.shape})"


#: A cell that reads as a number: ``81.3``, ``-0.5``, ``67%``, ``1.23e-04``, ``86.2 ± 0.3``, ``n/a``.
_NUMBER_CELL = re.compile(r"[-+]?\d[\d.,]*(?:e[-+]?\d+)?%?(?: ± \d[\d.]*(?:e[-+]?\d+)?)?|n/a|")


def _numeric(cells: pd.Series, kind) -> bool:
    """Whether a column is right-aligned: a numeric kind, or text whose every cell reads as a number."""
    if kind == "code":
        return False
    shown = [str(v) for v in cells]
    return kind != "text" or any(shown) and all(_NUMBER_CELL.fullmatch(v) for v in shown)


def _column_label(col) -> str:
    return header_words(" ".join(str(c) for c in col if str(c)) if isinstance(col, tuple) else str(col))


def _md_text(text) -> str:
    """Cell text for a pipe table: on one line, Markdown's special characters escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _md_code(text) -> str:
    """Cell text as inline code: the backtick run longer than any inside it, ``|`` escaped (a pipe table
    splits its cells before it parses code spans)."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if text.startswith("`") or text.endswith("`") else f"{fence}{text}{fence}"


def _md_row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


def _index_label(v):
    """An index label: a whole float as an integer (``2.0`` -> ``2``), other floats with 3 significant digits."""
    if isinstance(v, (float, np.floating)):
        return format_number(v, kind="integer" if float(v).is_integer() else "metric")
    return v


def _check_kinds(df, kinds) -> dict:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df must be a pandas DataFrame; got {type(df).__name__}.")
    kinds = dict(kinds or {})
    unknown = [c for c in kinds if c not in df.columns]
    if unknown:
        raise ValueError(f"kinds names column(s) {unknown} that df does not have; its columns are {list(df.columns)}.")
    for kind in kinds.values():
        _check_kind(kind)
    if df.columns.has_duplicates:
        raise ValueError(f"df has duplicate column names {sorted(set(df.columns[df.columns.duplicated()]))}; "
                         "rename them first.")
    return {col: kinds.get(col, column_kind(col, df[col])) for col in df.columns}


# --------------------------------------------------------------------------------------------------
# Claims tables and findings

#: The columns a claims table shows, in this order (those present).
CLAIM_COLUMNS = ("id", "study", "section", "source", "claim", "paper", "rule", "ours", "evidence", "missing", "p (units)",
                 "verdict")

#: Chapter notebooks and the title a link to them shows.
CHAPTER_TITLES = {
    "02b_fold_metrics_summary": "Fold metrics: summary", "03_gnn_experiments": "GNN experiments",
    "03b_gnn_experiments_k5": "GNN experiments, k = 5", "03c_gnn_experiments_seeds": "GNN experiments, six seeds",
    "03d_controls": "Is it the homophily?",
    "04_appendix_b": "Appendix B of the HpStrat paper", "05_appendix_g": "Appendix G of the HpStrat paper",
    "06_mlp_vs_gnn": "MLP vs GNN",
    "07_feature_study": "Feature study", "08_synthetic_ws": "Synthetic WS benchmarks",
    "09_link_benchmarks": "Link benchmarks",
}


def _words(value) -> str:
    """A cell as words: a list or tuple joined with commas (empty: an em dash), a mapping as ``key value``
    pairs, a boolean as yes / no, NaN as an empty cell."""
    if isinstance(value, dict):
        return ", ".join(f"{header_words(k)} {_words(v)}" for k, v in value.items()) if value else "—"
    if isinstance(value, (list, tuple, set)):
        return ", ".join(map(_words, value)) if value else "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
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


def claims_table(claims: pd.DataFrame, *, columns=CLAIM_COLUMNS, link_base: str | None = None,
                 caption: str | None = None, name: str | None = None):
    """A claims table for reading: no index column, every cell whole and wrapping at spaces, lists as words and
    the verdict in bold. With a ``caption`` (and no ``link_base``) a numbered table (:class:`NumberedTable`),
    else a ``pandas.io.formats.style.Styler``.

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
    if caption:
        raw = []
        if link_base is not None and "chapter" in claims.columns:
            frame["chapter"] = [_doc_link(c, link_base) for c in claims["chapter"]]
            raw = ["chapter"]
        return NumberedTable(frame, kinds={c: "text" for c in frame.columns}, caption=caption,
                             name=name or caption_label(caption), hide_index=True, bold=["verdict"], raw=raw)
    if link_base is not None and "chapter" in claims.columns:
        frame["chapter"] = [_link(c, link_base) for c in claims["chapter"]]
    styler = frame.style.hide(axis="index")
    styler = styler.map(lambda v: "font-weight: bold", subset=["verdict"]).format_index(header_words, axis=1)
    if caption:
        styler = styler.set_caption(caption)
    styler = styler.set_table_styles([  # words wrap at spaces only; a wide table scrolls (book/_static/hpstrat.css)
        {"selector": "td, th", "props": "white-space: normal; word-break: normal; overflow-wrap: normal; "
                                        "text-align: left; vertical-align: top"},
        {"selector": "td", "props": "min-width: 6em; max-width: 32em"},
    ])
    return styler


def _doc_link(chapter, base: str) -> str:
    """A chapter as a MyST link to its page (``{doc}`title <base + chapter>```), empty for no chapter."""
    chapter = _words(chapter)
    if not chapter:
        return ""
    return f"{{doc}}`{CHAPTER_TITLES.get(chapter, chapter)} <{base}{chapter}>`"


class Folded:
    """A displayed object folded under a title: in the book a MyST ``{dropdown}`` around its Markdown (a numbered
    table keeps its number and caption inside), in Jupyter an HTML ``<details>`` element."""

    def __init__(self, obj, title: str):
        if not " ".join(str(title or "").split()):
            raise ValueError(f"a folded block needs a title; got title={title!r}.")
        self.obj, self.title = obj, " ".join(str(title).split())

    def _repr_markdown_(self) -> str:
        inner = self.obj._repr_markdown_() if hasattr(self.obj, "_repr_markdown_") else str(self.obj)
        fence = "`" * (max((len(r) for r in re.findall(r"^`{3,}", inner, re.M)), default=3) + 1)
        return f"{fence}{{dropdown}} {self.title}\n{inner}\n{fence}"

    def _repr_html_(self) -> str:
        inner = self.obj._repr_html_() if hasattr(self.obj, "_repr_html_") else html.escape(str(self.obj))
        return f"<details><summary>{html.escape(self.title)}</summary>{inner}</details>"


def _link(chapter, base: str) -> str:
    chapter = _words(chapter)
    if not chapter:
        return ""
    title = CHAPTER_TITLES.get(chapter, chapter)
    return f'<a href="{html.escape(base + chapter)}.html">{html.escape(title)}</a>'


def verdict_counts(claims: pd.DataFrame) -> dict:
    """How many claims got each verdict of :data:`hpstrat_book.verdicts.VERDICTS` (zeros included)."""
    counts = claims["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def _count(n: int, noun: str) -> str:
    """``"1 claim"``, ``"3 claims"`` (``noun`` is the plural)."""
    return f"{n} {noun[:-1] if n == 1 and noun.endswith('s') else noun}"


def counts_sentence(claims: pd.DataFrame, *, what: str = "claims") -> str:
    """"n claims tested: a agree, d disagree, i inconclusive; c more hold by construction, e exploratory (counted
    apart)."

    Singular for one claim, only the verdicts that occur, and an empty string when there is no claim."""
    c = verdict_counts(claims)
    tested = len(claims) - sum(c[v] for v in APART)
    parts = [f"{c[v]} {v if c[v] == 1 else w}" for v, w in (("agrees", "agree"), ("disagrees", "disagree"),
                                                            ("inconclusive", "inconclusive")) if c[v]]
    text = f"{_count(tested, what)} tested: {', '.join(parts)}" if tested else ""
    apart = []
    if c[BY_CONSTRUCTION]:
        n = c[BY_CONSTRUCTION]
        who = f"{n} more" if text else _count(n, what)
        apart.append(f"{who} {'holds' if n == 1 else 'hold'} by construction")
    if c[EXPLORATORY]:
        apart.append(f"{c[EXPLORATORY]} exploratory (on the rows an effect was found on)")
    if apart:
        text = f"{text}; " + ", ".join(apart) + " (counted apart)" if text else ", ".join(apart)
    return text + "." if text else ""


def key_findings(claims: pd.DataFrame, *, chapter: str | None = None, limit: int = 6,
                 source: str = "this page's rows") -> str:
    """The "Key findings" box of a chapter, as Markdown computed from its claims rows (:func:`findings_box`).

    ``chapter`` keeps the rows whose ``chapter`` column names it (all rows when None). One bullet per claim
    (the first ``limit``): the claim, the verdict in bold and our figure; then the counts
    (:func:`counts_sentence`). Rows with no numbers yet say so. ``source`` names what the findings are
    computed from (the heading), for a page that summarises another page's claims.
    """
    if chapter is not None and "chapter" in claims.columns:
        claims = claims[claims["chapter"] == chapter]
    if claims.empty:
        return f"**Key findings.** No claim of the papers is checked on {source} yet."
    ours = "ours" if "ours" in claims.columns else "evidence"
    bullets = []
    for _, r in claims.head(limit).iterrows():
        figure = _words(r.get(ours, "")) or "no numbers yet"
        cid = f" [{r['id']}]" if "id" in claims.columns and _words(r.get("id")) else ""
        bullets.append(f"{_words(r['claim'])}: **{r['verdict']}**{cid} ({_short(figure)})")
    if len(claims) > limit:
        bullets.append(f"... and {len(claims) - limit} more in the claims table below.")
    return findings_box(bullets, source=source, closing=counts_sentence(claims))


def _a_rerun_fails(text: str) -> bool:
    """Whether an ``ours`` cell says that a committed rerun broke the claim ("holds on 2 of 3 committed reruns")."""
    m = re.search(r"holds on (\d+) of (\d+) committed rerun", text)
    return bool(m) and int(m.group(1)) < int(m.group(2))


def _short(text: str, limit: int = 160) -> str:
    """``text`` up to its first "; reruns:" or its last "; " break within ``limit`` characters (a findings bullet
    gives the headline figure; the full cell is in the claims table), saying when a committed rerun fails."""
    head, *reruns = text.split("; reruns:")
    note = "; not on every committed rerun" if reruns and _a_rerun_fails(reruns[0]) else ""
    if len(head) > limit:
        cut = head.rfind("; ", 0, limit)
        head = head[:cut] + "; ..." if cut > 0 else head
    return head + note


def markdown_to_html(text: str) -> str:
    """``text`` (Markdown) as HTML, for a value glued into another page (myst-nb pastes ``text/html`` across
    pages, not ``text/markdown``). Needs ``markdown-it-py`` (installed with the book's dependencies)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(text)


def _by_id(claims: pd.DataFrame, claim_id: str):
    sel = claims[claims["id"] == claim_id] if "id" in claims.columns else claims.iloc[:0]
    return sel.iloc[0] if len(sel) else None


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




# --------------------------------------------------------------------------------------------------
# The front page: the answer in a few sentences, the headline claims in one narrow table

_PARENTHESES = re.compile(r"\s*\([^()]*\)")


def headline_figure(text, *, limit: int = 90) -> str:
    """A claims cell shortened for a narrow table: the reruns' verdicts and parenthetical asides dropped, then its
    ``"; "``-separated clauses
    as long as they fit in ``limit`` characters (always the first), ``"; …"`` when some are left out.

    >>> headline_figure("Cora: MLP 75.9, GCN 88.2 (gap +12.4, Welch p 8.2e-08; 30/30 trials); CiteSeer: MLP 73.5", limit=30)
    'Cora: MLP 75.9, GCN 88.2; …'
    """
    text = re.split(r";\s*(?:independent )?reruns?:", " ".join(_words(text).split()))[0]  # reruns: the scorecard's
    while _PARENTHESES.search(text):
        text = _PARENTHESES.sub("", text)
    text = text.replace(" :", ":").replace(" ,", ",").replace(" ;", ";").strip(" ;")
    clauses = [c.strip() for c in text.split("; ") if c.strip()]
    if not clauses:
        return ""
    kept = [clauses[0]]
    for c in clauses[1:]:
        if len("; ".join(kept + [c])) > limit:
            break
        kept.append(c)
    return "; ".join(kept) + ("; …" if len(kept) < len(clauses) else "")


def headline_table(claims: pd.DataFrame, ids, *, caption: str, link_base: str = "",
                   anchors: dict | None = None) -> str:
    """The front page's table of headline claims, as HTML: one row per id of ``ids`` (in that order, those
    present), four narrow columns (the claim, the verdict, the paper's figure and ours, each shortened by
    :func:`headline_figure`), a ``caption``; each claim's id links to the scorecard (``link_base``, with the anchor
    of its part from ``anchors``: id prefix -> anchor). The verdict comes second, so a phone shows it without
    scrolling. Raises ``ValueError`` for more than ten ids or an empty caption."""
    ids = list(ids)
    if len(ids) > 10:
        raise ValueError(f"ids has {len(ids)} claims; a headline table shows at most 10.")
    if not " ".join(str(caption or "").split()):
        raise ValueError(f"a headline table needs a caption; got caption={caption!r}.")
    anchors = anchors or {}
    rows = []
    for cid in ids:
        r = _by_id(claims, cid)
        if r is None:
            continue
        href = html.escape(link_base + (f"#{anchors[cid[0]]}" if cid[0] in anchors else ""))
        rows.append(
            f'<tr><td>{html.escape(_words(r["claim"]))} <a href="{href}">[{html.escape(cid)}]</a></td>'
            f'<td class="verdict"><strong>{html.escape(_words(r["verdict"]))}</strong></td>'
            f'<td>{html.escape(headline_figure(r.get("paper", ""), limit=60))}</td>'
            f'<td>{html.escape(headline_figure(r.get("ours", "")))}</td></tr>')
    head = "".join(f"<th>{h}</th>" for h in ("Claim", "Verdict", "Paper", "Ours"))
    return (f'<div class="table-wrapper"><table class="headline-claims"><caption>{html.escape(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def _and(items) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [str(i) for i in items if str(i)]
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def _tested_counts(claims: pd.DataFrame) -> tuple[int, str]:
    """(how many claims were tested, their verdicts as words: "2 agree, 1 disagrees and 12 are inconclusive");
    zero counts left out."""
    c = verdict_counts(claims)
    tested = len(claims) - sum(c[v] for v in APART)
    parts = []
    if c["agrees"]:
        parts.append(f"{c['agrees']} {'agrees' if c['agrees'] == 1 else 'agree'}")
    if c["disagrees"]:
        parts.append(f"{c['disagrees']} {'disagrees' if c['disagrees'] == 1 else 'disagree'}")
    if c["inconclusive"]:
        n = c["inconclusive"]
        parts.append(f"{'all ' if n == tested and n > 1 else ''}{n} {'is' if n == 1 else 'are'} inconclusive")
    return tested, _and(parts)


def _paper_sentence(claims: pd.DataFrame, whose: str) -> str:
    """"Of the 15 tested claims of the HpStrat paper, 2 agree, 1 disagrees and 12 are inconclusive (5 more hold by
    construction)." or an empty string without claims."""
    tested, words = _tested_counts(claims)
    c = verdict_counts(claims)
    apart = []
    if c[BY_CONSTRUCTION]:
        n = c[BY_CONSTRUCTION]
        apart.append(f"{n} more {'holds' if n == 1 else 'hold'} by construction")
    if c[EXPLORATORY]:
        apart.append(f"{c[EXPLORATORY]} more {'is' if c[EXPLORATORY] == 1 else 'are'} exploratory")
    tail = f" ({'; '.join(apart)})" if apart else ""
    if not tested:
        return f"None of {whose}’s claims could be tested{tail}." if len(claims) else ""
    if tested == 1:
        return f"{whose[0].upper() + whose[1:]}’s one tested claim {words.split(' ', 1)[1]}{tail}."
    return f"Of {whose}’s {tested} tested claims, {words}{tail}."


#: What a claim of the second paper says, in a few words, for the front page's answer.
PART2_GIST = {"N1": "the tuned MLP matching the GCN on Amazon and Coauthor graphs",
              "N2": "the GCN’s lead on Cora and CiteSeer",
              "N6": "the GCN’s lead on Twitch and Facebook links", "N9": "the paper’s tuned-MLP numbers"}


def _gist_sentence(claims: pd.DataFrame) -> str:
    """"Our runs confirm a, b and c, contradict d, and leave e open." from the verdicts of the rows of ``claims``
    whose id :data:`PART2_GIST` names."""
    by: dict = {}
    for _, r in claims.iterrows():
        if r.get("id") in PART2_GIST:
            by.setdefault(r["verdict"], []).append(PART2_GIST[r["id"]])
    parts = [f"{verb} {_and(by[v])}" for v, verb in (("agrees", "confirm"), ("disagrees", "do not reproduce"),
                                                      ("inconclusive", "leave open")) if by.get(v)]
    return f"Our runs {'; they '.join(parts)}." if parts else ""


def _protocols(claims, pairs) -> dict:
    """verdict -> [(protocol, p text)] for the (id, protocol) ``pairs`` present in ``claims``."""
    out: dict = {}
    for cid, protocol in pairs:
        r = _by_id(claims, cid)
        if r is not None:
            out.setdefault(r["verdict"], []).append((protocol, f"{r['p']:.2g}" if r.get("p") == r.get("p") else ""))
    return out


def _central(by: dict, first: str) -> str:
    """The verdicts of one claim under several protocols as a clause: "is inconclusive under all three protocols
    (p = 0.3, 0.11 and 0.68)" or "agrees with k = 5 (p = 0.0015) and is inconclusive with k = 4 and ..."."""
    def ps(items):
        got = [p for _, p in items if p]
        return f" (p = {_and(got)})" if got else ""
    if len(by) == 1:
        (v, items), = by.items()
        how = {2: "under both protocols", 3: "under all three protocols"}.get(
            len(items), "with " + _and(p for p, _ in items))
        return f"{first} {'is ' if v not in ('agrees', 'disagrees') else ''}{v} {how}{ps(items)}"
    parts = [f"{'is ' if v not in ('agrees', 'disagrees') else ''}{v} with {_and(p for p, _ in items)}"
             f"{ps(items) if v in ('agrees', 'disagrees') else ''}" for v, items in sorted(by.items(), key=lambda kv: kv[0] not in ("agrees", "disagrees"))]
    return f"{first} {_and(parts)}"


def answer_in_short(part1: pd.DataFrame, part2: pd.DataFrame, own: pd.DataFrame) -> str:
    """The front page's answer in a few sentences (Markdown), from the registry's rows
    (:func:`hpstrat_book.claims.claims_frame`): the verdict counts of each paper and of this book's own claims, and
    the HpStrat paper's central claim (ids H6, H12, H14 against class-stratified, H7, H13, H15 against random)
    under each protocol. Zero counts are left out; one claim is "1 claim"."""
    protocols = ("k = 4", "k = 5", "six split seeds")
    out = [f"**In short.** {_paper_sentence(part1, 'the HpStrat paper')}"]
    strat = _protocols(part1, zip(("H6", "H12", "H14"), protocols))
    rand = _protocols(part1, zip(("H7", "H13", "H15"), protocols))
    if strat:
        out.append(_central(strat, "Its central claim, a smaller cross-fold spread than class-stratified k-fold,") + ".")
    if rand:
        out.append(_central(rand, "Against random k-fold it") + ".")
    p2 = _paper_sentence(part2, "the second paper")
    if p2:
        out.append(p2 + (" " + _gist_sentence(part2) if _gist_sentence(part2) else ""))
    mine = _paper_sentence(own, "this book")
    if mine:
        out.append("New beyond the papers: control folds and synthetic graphs test *why* HpStrat’s folds might "
                   "differ. " + mine)
    return " ".join(out)
