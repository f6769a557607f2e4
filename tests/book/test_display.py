"""Displayed numbers: each kind rounded to the precision that carries meaning, no -0, integers as integers."""
import re

import numpy as np
import pandas as pd
import pytest

from hpstrat_book.display import column_kind, format_frame, format_number, format_table
from hpstrat_book.plots import book_table


@pytest.mark.parametrize("value, kind, shown", [
    (0.825158, "homophily", "0.83"), (81.2743, "accuracy", "81.3"), (0.72, "p", "0.72"),
    (0.000123456, "p", "0.00012"), (3.2e-12, "p", "3.2e-12"), (1.0, "p", "1"), (12.2825, "metric", "12.3"),
    (0.0123456, "metric", "0.0123"), (1234.5678, "metric", "1235"), (0.000123456, "metric", "1.23e-04"), (1.6667, "rank", "1.67"), (8.0, "integer", "8"),
    (np.int64(2708), "integer", "2708"), (-0.0004, "homophily", "0.00"), (-0.04, "accuracy", "0.0"),
    (-0.0, 3, "0.000"), (-1.26, "accuracy", "-1.3"), (float("nan"), "accuracy", "n/a"), (None, "p", "n/a"),
    (pd.NA, "metric", "n/a"), ("GCN", "accuracy", "GCN"), (0.5, 3, "0.500"), (np.inf, "metric", "∞"),
    (0.6667, "share", "67%"), (-0.001, "share", "0%"), ("hpstrat x", "code", "hpstrat x"),
])
def test_format_number_rounds_each_kind(value, kind, shown):
    assert format_number(value, kind=kind) == shown


@pytest.mark.parametrize("kind", ["percent", -1, 13, True, 1.5])
def test_format_number_names_a_bad_kind(kind):
    with pytest.raises(ValueError, match=r"kind=.* is not a kind of value; use one of \['accuracy', 'code', 'fold homophily', 'homophily'"):
        format_number(1.0, kind=kind)


def test_column_kind_from_name_and_values():
    floats = [0.1, 0.2]
    assert [column_kind(name, floats) for name in ("p", "p-value", "friedman_p", "Wilcoxon p", "p (Welch)",
                                                   "mean homophily", "test_acc", "CDD (nodes)", "w1",
                                                   "mean rank", "gap")] == \
        ["p", "p", "p", "p", "p", "homophily", "accuracy", "metric", "metric", "rank", "metric"]
    assert column_kind("nodes", [2708.0, 183.0]) == "integer"
    assert column_kind("nodes", [2708, 183]) == "integer"
    assert column_kind("model", ["GCN", "MLP"]) == "text" and column_kind("same", [True, False]) == "text"
    assert column_kind(("Cora", "p"), floats) == "p"  # the last level of a column MultiIndex


def test_format_table_shows_no_float_with_more_than_the_kinds_digits():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"dataset": ["Cora", "Texas", "Actor"], "mean homophily": rng.uniform(0, 1, 3),
                       "test accuracy": rng.uniform(50, 90, 3), "p": [0.0123456, 0.5, np.nan],
                       "CDD (nodes)": [12.28250, 0.000123, 3.0], "trials": [8.0, 100.0, 3.0],
                       "deviation": [-0.00001, 0.3, -0.2]}, index=pd.Index([2.0, 3.0, 10.0], name="B"))
    shown = format_frame(df, kinds={"deviation": "homophily"})
    assert shown["mean homophily"].str.fullmatch(r"\d\.\d\d").all()
    assert shown["test accuracy"].str.fullmatch(r"\d+\.\d").all()
    assert shown["p"].tolist() == ["0.012", "0.5", "n/a"]
    assert shown["CDD (nodes)"].tolist() == ["12.3", "1.23e-04", "3.00"]
    assert shown["trials"].tolist() == ["8", "100", "3"]
    assert shown["deviation"].tolist() == ["0.00", "0.30", "-0.20"]
    assert list(shown.index) == ["2", "3", "10"]
    html = format_table(df, kinds={"deviation": "homophily"}, caption="Table: a test")._repr_html_()
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert "-0.00" not in cells and "Table: a test" in html
    assert not [c for c in cells if re.fullmatch(r"-?\d+\.\d{5,}", c)], "a float with more than 4 decimals"
    assert df["mean homophily"].dtype == float  # the frame itself is unchanged


def test_format_table_names_bad_arguments():
    df = pd.DataFrame({"a": [1.0]})
    with pytest.raises(ValueError, match=r"kinds names column\(s\) \['b'\] that df does not have; its columns are \['a'\]"):
        format_table(df, kinds={"b": "p"})
    with pytest.raises(ValueError, match=r"kind='pct' is not a kind of value"):
        format_table(df, kinds={"a": "pct"})
    with pytest.raises(ValueError, match=r"df must be a pandas DataFrame; got list"):
        format_table([1, 2])


def _pipe_table(markdown: str) -> str:
    """The pipe table inside a numbered table's ``{table}`` directive, rendered by markdown-it (GFM tables)."""
    from markdown_it import MarkdownIt

    lines = markdown.splitlines()
    assert lines[0].startswith("```{table} ") and lines[-1] == "```" and lines[2] == ""
    return MarkdownIt("commonmark").enable("table").render("\n".join(lines[3:-1]))


def test_numbered_table_is_a_captioned_myst_table_whose_cells_read_as_formatted():
    df = pd.DataFrame({"model": ["GCN", "a|b *c* <i>"], "test acc": [81.2743, np.nan], "p": [0.0123456, 0.5],
                       "command": ["hpstrat experiment --k 4", "x | `y`"]},
                      index=pd.Index(["Cora", "Texas"], name="dataset"))
    table = format_table(df, kinds={"command": "code"}, name="tbl-03-test",
                         caption="Ours beside\n  the paper's (*k* = 4)")
    md = table._repr_markdown_()
    head, name = md.splitlines()[:2]
    assert head == "```{table} Ours beside the paper's (*k* = 4)" and name == ":name: tbl-03-test"
    assert md.splitlines()[4] == "| :-- | :-- | --: | --: | :-- |"  # index and text left, numbers right
    html = _pipe_table(md)
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", html)]
    assert cells[:5] == ["dataset", "model", "test acc", "p", "command"]
    assert cells[5:10] == ["Cora", "GCN", "81.3", "0.012", "hpstrat experiment --k 4"]
    assert cells[11] == "a|b *c* &lt;i&gt;" and cells[12] == "n/a"  # escaped, not markup; NaN as n/a
    assert "<code>hpstrat experiment --k 4</code>" in html and "<code>x | `y`</code>" in html
    assert "Ours beside the paper's" in table._repr_html_() and "81.3" in table._repr_html_()
    shown = format_table(df[["test acc", "p"]], caption="c", name="tbl-a", hide_index=True)._repr_markdown_()
    assert "dataset" not in shown and "Cora" not in shown


def test_numbered_table_names_a_bad_label_a_missing_caption_and_nothing_to_show():
    df = pd.DataFrame({"a": [1.0]})
    for bad in ("Tbl-a", "tbl a", "fig-a", "tbl-", 3):
        with pytest.raises(ValueError, match=r"name=.* is not a table label; use 'tbl-' and lowercase words"):
            format_table(df, caption="c", name=bad)
    with pytest.raises(ValueError, match=r"a numbered table needs a caption; got caption='' for name='tbl-a'"):
        format_table(df, caption="  ", name="tbl-a")
    with pytest.raises(ValueError, match=r"table 'tbl-a' has no column to show"):
        format_table(df[[]], caption="c", name="tbl-a", hide_index=True)


def test_book_table_with_a_name_is_numbered_with_its_digits():
    df = pd.DataFrame({"MLP": [82.5912, -0.01], "Friedman p": [0.000312, np.nan]})
    md = book_table(df, digits=2, caption="Two rows", name="tbl-two")._repr_markdown_()
    assert md.splitlines()[-3:-1] == ["| 0 | 82.59 | 0.00031 |", "| 1 | -0.01 | n/a |"]
    assert not hasattr(book_table(df), "_repr_markdown_")  # unnamed: the Styler, as before


def test_findings_box_says_what_it_is_computed_from():
    box = display.findings_box(["a: **yes** (1.5)", "b"], source="this page's folds", closing="2 claims.")
    assert box.splitlines() == ["**Key findings** (computed from this page's folds):", "", "- a: **yes** (1.5)", "- b",
                                "", "2 claims."]
    assert display.findings_box([], source="x") == "**Key findings.** Nothing is computed from x yet."


def test_book_table_keeps_its_digits_and_follows_the_kinds():
    df = pd.DataFrame({"MLP": [82.5912, -0.01], "p": [0.000312, 0.9], "n_trials": [100.0, 8.0],
                       "homophily": [0.8251, 0.1]})
    html = book_table(df, digits=1).to_html()
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert cells == ["82.6", "0.00031", "100", "0.83", "0.0", "0.9", "8", "0.10"]


def test_mean_std_shares_the_means_decimals():
    from hpstrat_book.display import format_mean_std

    assert format_mean_std(12.28250, 0.41875) == "12.3 ± 0.4"
    assert format_mean_std(0.000412, 0.0000333) == "4.12e-04 ± 3.33e-05"
    assert format_mean_std(float("nan"), 1.0) == "n/a" and format_mean_std(2.5, float("nan")) == "2.50"
    assert format_mean_std(-0.00001, 0.2, kind="homophily") == "0.00 ± 0.20"


def test_metric_summary_rounds_to_three_significant_digits():
    from hpstrat_book.plots import metric_summary

    rows = pd.DataFrame({"dataset": "A", "method": ["hpstrat", "hpstrat", "random", "random"],
                         "cdd": [12.1, 12.4565, 30.0, 31.0]})
    out = metric_summary(rows, metrics=("cdd",))
    assert out["CDD (nodes)"].tolist() == ["30.5 ± 0.7", "12.3 ± 0.3"]  # the book's method order


"""Claims tables for reading (nothing cut, no index, no Python lists), the generated findings, and the front
page's glue wiring."""
import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from hpstrat_book import display

REPO = Path(__file__).resolve().parents[2]
LONG = "tuned MLP within 2 points of GCN on Computers, Photo, CS, Physics " * 4


def card():
    return pd.DataFrame([
        {"section": "Table 2", "claim": "sizes tie", "paper": "15/15", "rule": "by construction", "ours": "3/3",
         "verdict": "holds by construction", "chapter": "02b_fold_metrics_summary"},
        {"section": "Section 5.2, k = 4, seed 0", "claim": "HpStrat's std is smaller than class-stratified k-fold's",
         "paper": "smaller", "rule": "Wilcoxon p < 0.05", "verdict": "inconclusive", "chapter": "03_gnn_experiments",
         "ours": "median difference -0.01; Wilcoxon p = 0.17, r = +0.17; reruns: holds on 0 of 1 committed rerun"},
        {"section": "Section 4.1", "claim": LONG, "paper": "paper", "rule": "a rule", "ours": "ours",
         "verdict": "disagrees", "chapter": "06_mlp_vs_gnn", "missing": ["PubMed"]},
    ])


def test_claims_table_shows_every_character_no_index_and_lists_as_words():
    html = display.claims_table(card(), link_base="").to_html()
    assert LONG.strip() in html  # not cut at 50 characters
    assert "row_heading" not in html  # no index column
    assert "['PubMed']" not in html and ">PubMed<" in html
    assert 'href="06_mlp_vs_gnn.html"' in html and "white-space: normal" in html
    assert display.claims_frame(card()).loc[0, "missing"] == ""  # NaN cell: empty, not "nan"
    with pytest.raises(ValueError, match="verdict"):
        display.claims_frame(pd.DataFrame({"claim": ["x"]}))


def test_key_findings_and_counts_keep_holds_by_construction_apart():
    text = display.key_findings(card(), chapter="03_gnn_experiments")
    assert "**inconclusive**" in text and "reruns:" not in text  # headline figure only, and the rerun that fails
    assert "r = +0.17; not on every committed rerun)" in text
    assert "1 claim tested: 1 inconclusive." in text  # singular, only the verdicts that occur
    assert display.counts_sentence(card()).endswith("1 more holds by construction (counted apart).")
    assert display.counts_sentence(card().iloc[:0]) == ""  # nothing is said of zero claims
    assert display.counts_sentence(card().iloc[[0]]) == "1 claim holds by construction."
    assert "No claim" in display.key_findings(card(), chapter="09_link_benchmarks")


def test_key_findings_of_another_page_name_their_source():
    text = display.key_findings(card(), source="the committed result rows")
    assert text.startswith("**Key findings** (computed from the committed result rows):")
    assert "computed from this page's rows" in display.key_findings(card())


def test_gnn_page_scope_names_what_each_protocol_adds():
    assert "k = 5 folds" in display.gnn_page_scope(k=5, seeds=[0])
    assert "seeds 0-5" in display.gnn_page_scope(k=4, seeds=range(6))
    assert "main protocol" in display.gnn_page_scope(k=4, seeds=[0])


def glued_keys(source: str) -> set:
    return set(re.findall(r"""glue\(\s*["']([\w-]+)["']""", source))


def test_the_front_page_pastes_findings_the_scorecard_glues():
    intro = (REPO / "book" / "intro.md").read_text()
    pasted = re.findall(r"```\{glue:any\} ([\w-]+)\n:doc: /?([\w/.-]+)", intro)
    assert {k for k, _ in pasted} >= {"front_answer", "headline_claims"}
    for key, doc in pasted:
        source = "".join(c.source for c in nbformat.read(REPO / "notebooks" / Path(doc).name, 4).cells)
        assert key in glued_keys(source), (key, doc)
        executed = nbformat.read(REPO / doc, 4)
        names = {o.get("metadata", {}).get("scrapbook", {}).get("name") for c in executed.cells
                 for o in c.get("outputs", [])}
        assert key in names, f"{doc} has no glued {key!r}: re-execute it"
