"""The built HTML book (smoke profile): every chapter page shows its figures and tables, and no page
shows a traceback or a warning. Shares its executed notebooks with tests/book/test_notebooks.py."""
import re
from html.parser import HTMLParser

import pytest

import hpstrat_book.build as book

from conftest import SMOKE_OUT, build_smoke_book

# the smoke book is built once, in one test worker, for both files (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("smoke_book")

#: Chapters whose pages must show at least one figure (all show tables).
WITH_FIGURES = {"01_method", "02_fold_metrics", "02b_fold_metrics_summary", "03_gnn_experiments",
                "04_appendix_b",
                "05_appendix_g"}
#: Section headings (tables and figures) each chapter page must show, beside its images and tables.
HEADINGS = {"03_gnn_experiments": ["Cross-fold standard deviation per model and method", "Table 3: mean rank per model",
                                   "Table 4: mean rank per dataset", "Table C.4", "Appendix E", "Friedman test over all"],
            "04_appendix_b": ["One fit per (dataset, model) pair", "Summary over the pairs", "significant on"]}
#: Least number of figures and of tables on each chapter page.
MIN_FIGURES = {"03_gnn_experiments": 2, "04_appendix_b": 1}
MIN_TABLES = {"03_gnn_experiments": 7, "04_appendix_b": 2}


class _Text(HTMLParser):
    """Visible text of a page (scripts and styles left out)."""

    def __init__(self):
        super().__init__()
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return re.sub(r"\s+", " ", "".join(parser.parts))


@pytest.fixture(scope="module")
def html(data_root):
    return build_smoke_book(build=True)["html"]


@pytest.mark.slow
def test_each_chapter_page_shows_its_figures_and_tables_and_no_traceback(html):
    assert (html / "index.html").exists()
    jobs = book.plan("smoke")
    pages = {job["output"]: job["name"] for job in jobs}
    sections = {job["name"]: job["section_of"] for job in jobs}
    for output, name in pages.items():
        page = html / output.replace(".ipynb", ".html")
        assert page.exists(), page
        content = page.read_text()
        assert content.count("<table") >= MIN_TABLES.get(name, 1), f"{page.name}: too few tables"
        if name in WITH_FIGURES:
            assert "<img" in content and "_images/" in content, f"{page.name}: no figure"
            images = re.findall(r'<img[^>]*src="([^"]*_images/[^"]+)"', content)
            assert len(images) >= MIN_FIGURES.get(name, 1), f"{page.name}: too few figures"
            assert all((page.parent / src).resolve().is_file() for src in images), f"{page.name}: missing image"
        text = visible_text(content)
        for heading in HEADINGS.get(name, []):
            assert heading in text, f"{output}: no {heading!r}"
        for bad in ("Traceback", "Warning", "Error:"):
            assert bad not in text, f"{output}: {bad!r} in the page"
        cells = [visible_text(c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", content, re.S)]
        assert "NaN" not in cells and "nan" not in cells, f"{output}: a table cell reads NaN"
        # the chapter holds the exercises: this page, its hand-written chapter page, or the first page of the
        # chapter it is a section of (a section rerunning that chapter's notebook does not repeat them)
        chapter = {name, sections.get(name)} - {None}
        texts = [text] + [visible_text((html / f).read_text()) for f in
                          {j["output"].replace(".ipynb", ".html") for j in jobs if j["name"] in chapter and j["first"]}
                          | {f"{j['page']}.html" for j in jobs if j["name"] in chapter and j["page"]}]
        assert any("Solution to Exercise" in t and "Exercises" in t for t in texts), f"{output}: no exercises"


@pytest.mark.slow
def test_book_has_intro_part_opener_and_scorecard(html):
    intro = visible_text((html / "book" / "intro.html").read_text())
    assert "papermill notebooks/01_method.ipynb out.ipynb -p dataset Texas" in intro
    assert (html / "book" / "part1.html").exists()
    card = visible_text((html / "book" / "executed" / "scorecard.html").read_text())
    assert "agree" in card and "PubMed" in card
    for section in ("Table 2", "Appendix G", "Table 3", "Table 4", "Table C.4", "Appendix E", "Appendix B",
                    "Part II", "Section 4.1, Tables 1-2", "Section 5, Figure 2", "Section 6, Table 4"):
        assert section in card, f"scorecard lacks {section}"
    index = (html / "book" / "intro.html").read_text()
    for output in {job["output"] for job in book.plan("smoke")}:
        assert output.replace(".ipynb", ".html").split("/")[-1] in index, f"{output} not in the navigation"


@pytest.mark.slow
def test_pages_open_with_their_title_and_render_maths_offline(html):
    """No page shows a parameters cell before its title (the cells are removed from the page, the tags stay
    in the notebooks), result chapters fold their code, and MathJax is served from the book itself."""
    for job in book.plan("smoke"):
        page = (html / job["output"].replace(".ipynb", ".html")).read_text()
        body = page[page.index('<div id="searchbox"></div>'):] if '<div id="searchbox"></div>' in page else page
        main = body[body.index("<h1"):] if "<h1" in body else body
        before_title = body[:body.index("<h1")] if "<h1" in body else ""
        assert "cell_input" not in before_title and "# Parameters" not in page, job["output"]
        assert "injected-parameters" not in page or "remove-cell" not in page, job["output"]
        if not job["show_code"]:
            assert "tag_hide-input" in main or "cell_input" not in main, job["output"]
        scripts = re.findall(r'<script[^>]*src="([^"]*mathjax[^"]*)"', page, flags=re.I)
        assert all(not s.startswith(("http:", "https:", "//")) for s in scripts), scripts  # never from a CDN
        if 'class="math' in page:  # Sphinx loads MathJax on the pages that have maths
            assert scripts, job["output"]
    intro = (html / "book" / "intro.html").read_text()
    assert re.findall(r'<script[^>]*src="(\.\./_static/mathjax/tex-chtml\.js[^"]*)"', intro)
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file() and (html / "_static" / "hpstrat.css").is_file()


def test_tag_for_reading_removes_parameters_and_folds_code():
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell("k = 4", metadata={"tags": ["parameters"]}),
                             new_code_cell("k = 5", metadata={"tags": ["injected-parameters"]}),
                             new_markdown_cell("# Title"), new_code_cell("print(k)")])
    book.tag_for_reading(nb)
    assert [c.metadata.get("tags") for c in nb.cells] == [["parameters", "remove-cell"],
                                                           ["injected-parameters", "remove-cell"], None, ["hide-input"]]
    shown = book.tag_for_reading(new_notebook(cells=[new_code_cell("x")]), show_code=True)
    assert shown.cells[0].metadata["tags"] == []
    kept = book.tag_for_reading(new_notebook(cells=[new_code_cell("audit(graph, models)",
                                                                  metadata={"tags": ["show-code"]})]))
    assert kept.cells[0].metadata["tags"] == ["show-code"]  # the call a student writes stays on the page


@pytest.mark.slow
def test_front_page_opens_with_the_generated_findings(html):
    """The front page opens with the scorecard's answer in sentences, then one captioned table of at most ten
    headline claims with their verdicts, each linked to the scorecard."""
    from hpstrat_book.verdicts import VERDICTS

    page = (html / "book" / "intro.html").read_text()
    start = page.index("<h1")
    first = page[start:page.index("</table>", start)]
    assert "In short." in visible_text(first) and first.count("<table") == 1 and "<caption" in first
    rows = re.findall(r"<tr>", first[first.index("<tbody"):])
    assert 1 <= len(rows) <= 10 and any(v in visible_text(first) for v in VERDICTS)
    assert "executed/scorecard.html#" in first


@pytest.mark.slow
def test_captions_references_exercises_and_citations_render(html):
    """What Sphinx makes of the book's directives (the build treats warnings as errors, so an unresolved
    reference fails it): numbered figure captions with alt text and {numref} links to them, numbered tables
    whose labels a shared notebook's second page suffixes, numbered exercises with their solutions, and
    citations resolved against the bibliography."""
    import nbformat

    executed = html / "book" / "executed"
    ch05 = (executed / "05_appendix_g.html").read_text()
    nb = nbformat.read(SMOKE_OUT / "book" / "executed" / "05_appendix_g.ipynb", as_version=4)
    figure = next(c.metadata["mystnb"]["figure"] for c in nb.cells if "figure" in c.metadata.get("mystnb", {}))
    alt = next(c.metadata["mystnb"]["image"]["alt"] for c in nb.cells if "image" in c.metadata.get("mystnb", {}))
    assert figure["name"] and re.search(r"<figcaption>\s*<p><span class=\"caption-number\">Fig\. [\d.]+ </span>", ch05)
    assert f'alt="{alt}"' in ch05
    assert re.search(r"Before looking at <a[^>]*><span[^>]*>Fig\. [\d.]+", ch05)
    numbers = set(re.findall(r"Exercise (\d+\.\d+)", ch05))  # numbered through the chapter, one per exercise
    assert len(numbers) == sum(c.source.count("{exercise}") for c in nb.cells if c.cell_type == "markdown") >= 2
    assert ch05.count("Solution to") == len(numbers) and "dropdown" in ch05
    ch03, ch03b = ((executed / f"{n}.html").read_text() for n in ("03_gnn_experiments", "03b_gnn_experiments_k5"))
    assert 'id="fig-03-cross-fold-std"' in ch03 and 'id="fig-03-cross-fold-std-03b-gnn-experiments-k5"' in ch03b
    assert re.search(r'<table[^>]*id="tbl-03-ranks">\s*<caption><span class="caption-number">Table [\d.]+ </span>', ch03)
    assert re.search(r'<a class="reference internal" href="#tbl-03-ranks"><span class="std std-numref">Table [\d.]+</span>',
                     ch03)
    assert 'id="tbl-03-ranks-03b-gnn-experiments-k5"' in ch03b and 'href="#tbl-03-ranks-03b-gnn-experiments-k5"' in ch03b
    assert not re.search(r"<table id=\"T_", ch03)  # the Styler's HTML is not what the book shows
    ch02 = (html / "book" / "ch02_fold_metrics.html").read_text()
    assert "Exercise 2.1" in ch02 and "Solution to" in ch02
    notation = (html / "book" / "notation.html").read_text()
    cited = re.search(r'<a class="reference internal" href="references\.html#(id\d+)" title="Milton Friedman\. The use of '
                      r'ranks[^"]*">Fri37</a>', notation)  # {cite:p}`friedman1937`, linked to its entry
    references = (html / "book" / "references.html").read_text()
    assert cited and f'id="{cited.group(1)}"' in references
    assert "the use of ranks" in visible_text(references).lower()
