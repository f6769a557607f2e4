"""Claims tables for reading (nothing cut, no index, no Python lists), the generated findings, and the front
page's glue wiring."""
import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from hpstrat_lite.reports import display

REPO = Path(__file__).resolve().parents[2]
LONG = "tuned MLP within 2 points of GCN on Computers, Photo, CS, Physics " * 4


def card():
    return pd.DataFrame([
        {"section": "Table 2", "claim": "sizes tie", "paper": "15/15", "rule": "by construction", "ours": "3/3",
         "verdict": "holds by construction", "chapter": "02b_fold_metrics_summary"},
        {"section": "Section 5.2, k = 4, seed 0", "claim": "HpStrat's std is smaller than class-stratified k-fold's",
         "paper": "smaller", "rule": "Wilcoxon p < 0.05", "verdict": "inconclusive", "chapter": "03_gnn_experiments",
         "ours": "median difference -0.01; Wilcoxon p = 0.17, r = +0.17; reruns: a p = 0.18 (fails)"},
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
    assert "1 claims tested: 0 agree, 0 disagree, 1 inconclusive." in text
    assert display.counts_sentence(card()).endswith("1 more hold by construction (counted apart).")
    assert "No claim" in display.key_findings(card(), chapter="09_link_benchmarks")


def test_front_page_findings_leave_construction_rows_to_the_scorecard():
    front = display.front_claims(card().iloc[:2], card().iloc[2:])
    assert list(front["study"]) == ["HpStrat", "Does the graph matter?"]
    table = display.findings_table(front, link_base="executed/")
    assert 'href="executed/03_gnn_experiments.html"' in table.loc[0, "chapter"]
    text = display.findings_sentences(card().iloc[:2], card().iloc[2:])
    assert "*inconclusive* with k = 4, seed 0 (p = 0.17; not on every committed rerun)" in text
    assert "<strong>" in display.markdown_to_html("**a**")


def test_gnn_page_scope_names_what_each_protocol_adds():
    assert "k = 5 folds" in display.gnn_page_scope(k=5, seeds=[0])
    assert "seeds 0-5" in display.gnn_page_scope(k=4, seeds=range(6))
    assert "main protocol" in display.gnn_page_scope(k=4, seeds=[0])


def glued_keys(source: str) -> set:
    return set(re.findall(r"""glue\(\s*["']([\w-]+)["']""", source))


def test_the_front_page_pastes_findings_the_scorecard_glues():
    intro = (REPO / "book" / "intro.md").read_text()
    pasted = re.findall(r"```\{glue:any\} ([\w-]+)\n:doc: /?([\w/.-]+)", intro)
    assert {k for k, _ in pasted} >= {"findings_table", "findings_summary"}
    for key, doc in pasted:
        source = "".join(c.source for c in nbformat.read(REPO / "notebooks" / Path(doc).name, 4).cells)
        assert key in glued_keys(source), (key, doc)
        executed = nbformat.read(REPO / doc, 4)
        names = {o.get("metadata", {}).get("scrapbook", {}).get("name") for c in executed.cells
                 for o in c.get("outputs", [])}
        assert key in names, f"{doc} has no glued {key!r}: re-execute it"
