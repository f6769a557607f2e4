"""The book as a book: numbered table of contents, chapter pages of per-dataset chapters, the Sphinx
extensions, references and citation files (what Sphinx renders of them: tests/book/test_book.py)."""
import ast
import re
from pathlib import Path

import nbformat
import pytest
import yaml

import hpstrat_book.build as book



REPO = Path(__file__).resolve().parents[2]


def _entries(chapter: dict):
    """A toc chapter entry and all its (nested) sections."""
    yield chapter
    for section in chapter.get("sections", []):
        yield from _entries(section)


def test_generated_toc_is_numbered_and_every_per_dataset_page_sits_under_its_chapter_page():
    cfg = book.load_config()
    jobs = book.plan("full", cfg)
    toc = book.toc(jobs, cfg)
    numbered = [part for part in toc["parts"] if part.get("numbered")]
    assert numbered, "no numbered part in the generated toc"
    numbered_files = {e["file"] for part in numbered for ch in part["chapters"] for e in _entries(ch)}
    for part in cfg["parts"]:
        if part.get("numbered"):  # every executed page of a numbered part is numbered, its opener is not
            assert {j["output"].removesuffix(".ipynb") for j in jobs if j["part"] == cfg["parts"].index(part)} \
                <= numbered_files
            assert part.get("opener") not in numbered_files
    chapters = {ch["file"]: ch for part in toc["parts"] for ch in part["chapters"]}
    per_dataset = [ch for part in cfg["parts"] for ch in part.get("chapters", []) if ch.get("per_dataset")]
    assert per_dataset
    for ch in per_dataset:
        assert ch.get("page"), f"per-dataset chapter {ch['name']} has no chapter page"
        assert (REPO / f"{ch['page']}.md").is_file()
        pages = [j["output"].removesuffix(".ipynb") for j in jobs if j["name"] == ch["name"]]
        assert len(pages) == len(cfg["datasets"]["full"])
        sections = [s["file"] for s in chapters[ch["page"]].get("sections", [])]
        assert pages == sections[:len(pages)], f"{ch['name']}: per-dataset pages are not the chapter page's sections"
        assert not set(pages) & set(chapters), f"{ch['name']}: a per-dataset page is a chapter of its own"
    for ch in (c for part in cfg["parts"] for c in part.get("chapters", []) if c.get("section_of")):
        parent = next(c for part in cfg["parts"] for c in part.get("chapters", []) if c["name"] == ch["section_of"])
        parent_file = parent.get("page") or next(j["output"] for j in jobs if j["name"] == parent["name"]).removesuffix(
            ".ipynb")
        assert f"{book.EXECUTED}/{ch['name']}" in [s["file"] for s in chapters[parent_file]["sections"]]


SMALL = {"datasets": {"full": ["A", "B"], "smoke": ["A"]}, "root": "book/intro",
         "parts": [{"caption": "Front", "pages": ["book/setup"]},
                   {"caption": "One", "opener": "book/one", "numbered": True,
                    "chapters": [{"name": "m", "per_dataset": True, "page": "book/m"},
                                 {"name": "s", "section_of": "m"},
                                 {"name": "t"}, {"name": "t2", "notebook": "t", "section_of": "t"},
                                 {"name": "d", "per_dataset": True}]},
                   {"caption": "Two", "numbered": True, "chapters": [{"name": "u"}]},
                   {"caption": "Back", "chapters": [{"name": "v"}]}]}


def test_toc_numbers_chapters_keeps_openers_unnumbered_and_nests_sections():
    toc = book.toc(book.plan("full", SMALL), SMALL)
    parts = toc["parts"]
    assert parts[0] == {"caption": "Front", "chapters": [{"file": "book/setup"}]}
    assert parts[1] == {"caption": "One", "chapters": [{"file": "book/one"}]}  # the opener: unnumbered
    assert parts[2]["numbered"] is True and "caption" not in parts[2]  # its chapters right below, numbered
    m, t, d = parts[2]["chapters"]
    assert m == {"file": "book/m", "sections": [{"file": "book/executed/m/a"}, {"file": "book/executed/m/b"},
                                                {"file": "book/executed/s"}]}
    assert t == {"file": "book/executed/t", "sections": [{"file": "book/executed/t2"}]}
    assert d == {"file": "book/executed/d/a", "sections": [{"file": "book/executed/d/b"}]}  # no page: first is parent
    assert parts[3] == {"caption": "Two", "numbered": True, "chapters": [{"file": "book/executed/u"}]}
    assert parts[4] == {"caption": "Back", "chapters": [{"file": "book/executed/v"}]}


def test_section_of_must_name_an_earlier_chapter_of_the_same_part(tmp_path):
    bad = {**SMALL, "parts": [{"caption": "One", "chapters": [{"name": "s", "section_of": "m"}, {"name": "m"}]}]}
    path = tmp_path / "notebooks.yml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ValueError, match=r"chapter 's' has section_of='m'.*earlier chapter of the same part: \[\]"):
        book.load_config(path)


def test_sphinx_config_loads_the_bibliography_and_exercise_extensions():
    from jupyter_book.config import get_final_config

    config, _ = get_final_config(user_yaml=REPO / "_config.yml", cli_config={"latex_individualpages": False},
                                 sourcedir=REPO, raise_on_invalid=True)
    assert {"sphinx_exercise", "sphinxcontrib.bibtex", "sphinx_multitoc_numbering"} <= set(config["extensions"])
    assert all((REPO / f).is_file() for f in config["bibtex_bibfiles"])


def _bib_keys() -> set[str]:
    from pybtex.database import parse_file

    return set(parse_file(str(REPO / "book" / "references.bib")).entries)


def test_every_citation_of_the_book_pages_is_in_the_bibliography():
    keys = _bib_keys()
    cited = set()
    for page in (REPO / "book").glob("*.md"):
        for group in re.findall(r"\{cite(?::[a-z]+)?\}`([^`]+)`", page.read_text()):
            cited |= {k.strip() for k in group.split(",")}
    assert cited, "no page cites anything"
    assert not cited - keys, f"cited keys missing from book/references.bib: {sorted(cited - keys)}"
    assert {"HpStrat", "katsman2024necessity", "fey2019pyg", "akiba2019optuna", "friedman1937", "wilcoxon1945",
            "welch1947"} <= cited


def test_citation_cff_describes_the_software_and_names_both_papers():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["title"] and cff["message"] and cff["authors"]
    assert cff["license"] == "MIT"
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    assert cff["version"] == version
    from pybtex.database import parse_file

    bib = parse_file(str(REPO / "book" / "references.bib")).entries
    titles = {re.sub(r"[{}]", "", bib[k].fields["title"]) for k in ("HpStrat", "katsman2024necessity")}
    assert titles <= {ref["title"] for ref in cff["references"]}


# --------------------------------------------------------------------------------------------------
# Chapters as course material: captioned figures, learning objectives, numbered exercises


def _notebooks():
    return {p.stem: nbformat.read(p, as_version=4) for p in sorted((REPO / "notebooks").glob("*.ipynb"))}


def _makes_a_figure(source: str) -> bool:
    """A code cell makes a figure when it assigns a matplotlib figure (``fig = ...``, the notebooks' idiom)."""
    return re.search(r"^\s*fig\s*=", source, re.M) is not None


def _shows_a_value_at_the_end(source: str) -> bool:
    """The cell's last statement is an expression other than a ``print`` call: Jupyter displays its value."""
    last = ast.parse(source).body[-1]
    return isinstance(last, ast.Expr) and not (isinstance(last.value, ast.Call)
                                               and getattr(last.value.func, "id", None) == "print")


def test_every_figure_cell_has_a_caption_a_unique_name_and_alt_text():
    names = []
    for stem, nb in _notebooks().items():
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or not _makes_a_figure(cell.source):
                continue
            where = f"notebooks/{stem}.ipynb cell {i}"
            meta = cell.metadata.get("mystnb", {})
            figure, image = meta.get("figure", {}), meta.get("image", {})
            assert len(figure.get("caption", "")) >= 40, f"{where}: no caption saying what to see"
            assert re.fullmatch(r"fig-[a-z0-9]+(-[a-z0-9]+)+", figure.get("name", "")), f"{where}: no figure name"
            assert len(image.get("alt", "")) >= 20 and "/" not in image["alt"], f"{where}: no alt text in words"
            # myst-nb wraps every displayed output of the cell in the figure: one display only, or the label repeats
            assert not _shows_a_value_at_the_end(cell.source), f"{where}: the figure cell also displays a value"
            names.append(figure["name"])
    assert len(names) >= 15
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def _chapter_sources():
    """(chapter name, source, text of the page that opens the chapter): the hand-written chapter page of a
    per-dataset chapter, else the markdown cells of the chapter's notebook (several chapters may share one)."""
    cfg = book.load_config()
    notebooks = _notebooks()
    for part in cfg["parts"]:
        for ch in part.get("chapters", []):
            if ch.get("page") and ch.get("per_dataset"):
                yield ch["name"], ch["page"], (REPO / f"{ch['page']}.md").read_text()
            elif ch.get("page"):  # a short chapter page (no sections of its own), then the notebook's page
                nb = notebooks[ch.get("notebook", ch["name"])]
                yield ch["name"], ch.get("notebook", ch["name"]), "\n\n".join(c.source for c in nb.cells
                                                                               if c.cell_type == "markdown")
            else:
                nb = notebooks[ch.get("notebook", ch["name"])]
                yield ch["name"], ch.get("notebook", ch["name"]), "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _objectives(text: str) -> str:
    """The learning-objectives section: from its heading to the quick-run line (or the next heading)."""
    # a heading, or on a chapter page whose sections are its per-dataset pages, a rubric (not a numbered section)
    match = re.search(r"^(?:## |```\{rubric\} )Learning objectives\n(?:```\n)?(.*?(?:\*\*Quick run:\*\*[^\n]*|(?=^#)|\Z))",
                      text, re.M | re.S)
    return match.group(1) if match else ""


def test_every_chapter_opens_with_learning_objectives_prerequisites_and_its_quick_run_time():
    chapters = list(_chapter_sources())
    assert len(chapters) >= 14
    cfg = book.load_config()
    paged = {ch.get("notebook", ch["name"]) for part in cfg["parts"] for ch in part.get("chapters", [])
             if ch.get("page") and ch.get("per_dataset")}
    for name, source, text in chapters:
        if source in paged and source != name:  # a section rerunning a paged chapter's notebook: its page opens it
            continue
        block = _objectives(text)
        assert block, f"{name}: no 'Learning objectives' section"
        assert 2 <= len(re.findall(r"^- ", block, re.M)) <= 4, f"{name}: 2-4 learning objectives"
        assert "**Prerequisites:**" in block and re.search(r"\{(ref|doc)\}`", block), f"{name}: no linked prerequisites"
        assert re.search(r"\*\*Quick run:\*\* (about|less than) \d+ minutes? .*2-core CPU", block), f"{name}: no quick-run time"
        assert re.search(r"`python -m hpstrat_book.build --profile smoke --no-build --only \w+`", block), name
    for stem, nb in _notebooks().items():  # in a notebook: a cell of its own, right after the title or key findings
        cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and _objectives(c.source)]
        if stem in {"01_method", "02_fold_metrics"}:  # per-dataset: on the chapter page, once
            assert not cells, stem
            continue
        assert len(cells) == 1 and cells[0] <= 3, f"{stem}: learning objectives are not at the top"
        assert nb.cells[cells[0]].source.startswith("## Learning objectives"), stem


EXERCISE = re.compile(r"^(`{3,})\{exercise\}\n:label: (\S+)\n", re.M)
SOLUTION = re.compile(r"^(`{3,})\{solution\} (\S+)\n:label: (\S+)\n", re.M)


def test_every_chapter_has_numbered_exercises_with_linked_solutions_and_no_admonition_exercises():
    labels, sources = [], set()
    for name, source, text in _chapter_sources():
        exercises = [m.group(2) for m in EXERCISE.finditer(text)]
        solved = [m.group(2) for m in SOLUTION.finditer(text)]
        assert len(exercises) >= 2, f"{name}: fewer than two exercise directives"
        assert solved == exercises, f"{name}: every exercise needs one solution referring to it, in order"
        heading = re.search(r"^(?:## |```\{rubric\} )Exercises$", text, re.M)  # a chapter page's rubric, or a heading
        assert heading and heading.start() < text.index("{exercise}"), f"{name}: exercises outside their section"
        if source not in sources:  # a notebook run as several chapters is suffixed per page (tested below)
            labels += exercises + [m.group(3) for m in SOLUTION.finditer(text)]
            sources.add(source)
    sources = [(p.name, p.read_text()) for p in (REPO / "book").glob("*.md")]
    sources += [(stem, "\n".join(c.source for c in nb.cells)) for stem, nb in _notebooks().items()]
    for where, text in sources:
        assert not re.search(r"\{admonition\}\s*Solution", text), f"{where}: an admonition solution is left"
    assert len(labels) == len(set(labels)), sorted(n for n in labels if labels.count(n) > 1)


def test_suffix_labels_renames_figures_exercises_and_their_references_only():
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("fig = plot()")
    code.metadata["mystnb"] = {"figure": {"name": "fig-a", "caption": "As {numref}`fig-a` shows."}}
    nb.cells = [code, nbformat.v4.new_markdown_cell(
        "See {numref}`fig-a` and {ref}`ex-a-1`, not `fig-ab` or {ref}`ex-a-10` or {ref}`notation`.\n\n"
        "```{exercise}\n:label: ex-a-1\n\nQ\n```\n\n```{solution} ex-a-1\n:label: sol-a-1\n\nA\n```\n\n(sec-a)=\n## S")]
    assert book.page_labels(nb) == ["fig-a", "ex-a-1", "sol-a-1", "sec-a"]
    book.suffix_labels(nb, "texas")
    assert code.metadata["mystnb"]["figure"] == {"name": "fig-a-texas", "caption": "As {numref}`fig-a-texas` shows."}
    text = nb.cells[1].source
    assert "{numref}`fig-a-texas` and {ref}`ex-a-1-texas`, not `fig-ab` or {ref}`ex-a-10` or {ref}`notation`" in text
    assert ":label: ex-a-1-texas" in text and "{solution} ex-a-1-texas\n:label: sol-a-1-texas" in text
    assert "(sec-a-texas)=" in text
    assert book.page_labels(nbformat.v4.new_notebook()) == []


def test_suffix_labels_renames_a_numbered_table_in_its_output_and_the_references_to_it():
    import pandas as pd

    from hpstrat_book.display import format_table

    table = format_table(pd.DataFrame({"a": [1.0]}), caption="One row", name="tbl-a")
    code = nbformat.v4.new_code_cell("format_table(df, caption='One row', name='tbl-a')")
    code.outputs = [nbformat.v4.new_output("execute_result", execution_count=1, data={
        "text/markdown": table._repr_markdown_(), "text/html": table._repr_html_(), "text/plain": repr(table)})]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("{numref}`tbl-a` and `tbl-ab`"), code])
    assert book.page_labels(nb) == ["tbl-a"]
    book.suffix_labels(nb, "texas")
    assert ":name: tbl-a-texas\n" in code.outputs[0]["data"]["text/markdown"]
    assert nb.cells[0].source == "{numref}`tbl-a-texas` and `tbl-ab`"
    assert code.source == "format_table(df, caption='One row', name='tbl-a')"  # the code stays as it ran


def _table_cells(nb):
    """``(cell, name, caption)`` of every code cell that shows a numbered table: a call with a ``name="tbl-..."``
    keyword (:func:`hpstrat_book.display.format_table`, :func:`hpstrat_book.plots.book_table`); the
    caption is the call's ``caption`` keyword as written (an f-string's literal parts)."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if not isinstance(node, ast.Call):
                continue
            keywords = {k.arg: k.value for k in node.keywords}
            name = keywords.get("name")
            if isinstance(name, ast.Constant) and str(name.value).startswith("tbl-"):
                caption = keywords.get("caption")
                parts = [caption] if isinstance(caption, ast.Constant) else getattr(caption, "values", [])
                text = "".join(str(p.value) for p in parts if isinstance(p, ast.Constant))
                yield cell, name.value, text


def test_every_numbered_table_has_a_caption_a_unique_name_and_every_table_reference_resolves_on_its_page():
    names = []
    for stem, nb in _notebooks().items():
        tables = {name: caption for _, name, caption in _table_cells(nb)}
        for name, caption in tables.items():
            assert re.fullmatch(r"tbl-[a-z0-9]+(-[a-z0-9]+)+", name), f"{stem}: table name {name!r}"
            assert len(caption) >= 40, f"{stem}: {name} has no caption saying what the table shows"
        names += list(tables)
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        for ref in re.findall(r"\{numref\}`(?:[^`<]*<)?(tbl-[\w-]+)>?`", text):
            assert ref in tables, f"{stem}: {{numref}}`{ref}` names no table of this page"
    assert len(names) >= 15
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_every_label_of_the_book_is_defined_once_after_the_runner_suffixes_shared_notebooks():
    seen = {}
    for profile in book.PROFILES:
        seen.clear()
        for job in book.plan(profile):
            nb = nbformat.read(REPO / job["notebook"], as_version=4)
            if Path(job["output"]).stem != Path(job["notebook"]).stem:
                book.suffix_labels(nb, book._slug(Path(job["output"]).stem))
            for label in book.page_labels(nb):
                assert label not in seen, f"{profile}: {label} defined by {job['output']} and {seen[label]}"
                seen[label] = job["output"]
        for page in (REPO / "book").glob("*.md"):
            for label in re.findall(r"^(?::label:\s*(\S+)|\(([\w-]+)\)=)\s*$", page.read_text(), re.M):
                label = label[0] or label[1]
                assert label not in seen, f"{label} defined by {page.name} and {seen[label]}"
                seen[label] = page.name


def test_a_section_repeating_its_chapters_notebook_drops_the_first_page_only_explanations():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_markdown_cell("## Exercises", metadata={"tags": [book.FIRST_PAGE_ONLY]}),
        nbformat.v4.new_code_cell("x = 1", metadata={"tags": [book.FIRST_PAGE_ONLY]}),  # code always stays
    ])
    kept = book.drop_first_page_only(nb).cells
    assert [c.source for c in kept] == ["# Title", "x = 1"]


def test_the_full_build_notes_each_pages_measured_time_on_its_quick_run_line(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Intro.\n\n**Quick run:** about 1 minute."),
                                         nbformat.v4.new_code_cell("x = 1")])
    path = tmp_path / "page.ipynb"
    nbformat.write(nb, path)
    assert book.note_run_time(path, 30.0, "03_gnn_experiments")
    assert book.note_run_time(path, 185.0, "03_gnn_experiments")  # a rebuild replaces the line, never adds one
    text = nbformat.read(path, as_version=4).cells[0].source
    assert text.count("**Full run:**") == 1 and "about 3 minutes" in text and "--only 03_gnn_experiments" in text
    assert text.startswith("Intro.\n\n**Quick run:** about 1 minute.\n\n**Full run:**")
    other = tmp_path / "other.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("No line here.")]), other)
    assert not book.note_run_time(other, 10.0, "x")
    assert nbformat.read(other, as_version=4).cells[0].source == "No line here."
