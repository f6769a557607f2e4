"""No typed measured figure in prose: every decimal number in a hand-written page (``book/*.md``) or a
markdown cell of a notebook is one of the papers' values, a stated setting, or glued from an executed cell."""
import re
from pathlib import Path

import nbformat
import pytest

from hpstrat_book.paper_values import paper_figures

REPO = Path(__file__).resolve().parents[2]
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
#: Settings a page may state (not measured): the significance threshold 0.05, a learning rate / one
#: accuracy point 0.01, dropout / WS rewiring / chance ROC AUC 0.5, the bounds 0.0 and 1.0 of a score, and the
#: factor 1.5 over a projection that flags a busy machine (appendix on running the sweep).
SETTINGS = {"0.05", "0.01", "0.5", "0.0", "1.0", "1.5"}
SECTION = re.compile(r"\b(?:Sections?|Appendix|Appendices)\s+[A-Z]?\d+(?:\.\d+)*(?:(?:\s*(?:,|and|-)\s*)[A-Z]?\d+(?:\.\d+)*)*")


def prose(text: str) -> str:
    """``text`` without what is not prose: fenced code, inline code and glue roles, maths, section numbers."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$\n]*\$", " ", text)
    return SECTION.sub(" ", text)


def typed_figures(text: str, allowed) -> list[str]:
    """The decimal figures of ``text``'s prose that are not in ``allowed``."""
    return [f for f in DECIMAL.findall(prose(text)) if f not in allowed]


def pages():
    for path in sorted((REPO / "book").glob("*.md")):
        yield str(path.relative_to(REPO)), path.read_text()
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                yield f"{path.relative_to(REPO)} (markdown cell {i})", cell.source


def test_the_scan_finds_a_typed_figure_and_passes_papers_values_settings_and_glue():
    allowed = paper_figures() | SETTINGS
    assert typed_figures("our GCN reproduces Computers (82.1 against 82.6, Welch p 0.72)", allowed) == ["82.1", "0.72"]
    assert typed_figures("the paper's 82.6 and 1.49, p < 0.05, Section 4.1, $\\gamma = 0.35$", allowed) == []
    assert typed_figures("ours: {glue:text}`executed/06::gcn_computers:.1f` points", allowed) == []
    assert typed_figures("```python\nx = 3.14\n```", allowed) == []


@pytest.mark.parametrize("name,text", list(pages()), ids=lambda v: v if isinstance(v, str) and len(v) < 80 else "")
def test_no_measured_figure_is_typed_in_prose(name, text):
    bad = typed_figures(text, paper_figures() | SETTINGS)
    assert not bad, (f"{name} types the figure(s) {bad}: compute them in a code cell, glue them "
                     "({glue:text}), or quote a paper value from hpstrat_book.paper_values")
