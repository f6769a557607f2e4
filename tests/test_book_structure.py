"""The book as a book: numbered table of contents, chapter pages of per-dataset chapters, the Sphinx
extensions (bibliography, exercises), references and citation files."""
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hpstrat_lite import book

REPO = Path(__file__).resolve().parents[1]


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


def test_exercises_are_numbered_and_citations_resolve_in_a_sphinx_build(tmp_path):
    """A one-page Sphinx build with the book's bibliography file: a numbered exercise, its linked solution,
    a citation and the bibliography, warnings as errors."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "extensions = ['myst_parser', 'sphinx_exercise', 'sphinxcontrib.bibtex']\n"
        "myst_enable_extensions = ['dollarmath']\n"
        f"bibtex_bibfiles = [{str(REPO / 'book' / 'references.bib')!r}]\n")
    (src / "index.md").write_text(
        "# Page\n\n```{exercise}\n:label: ex-one\n\nRank three methods {cite:p}`friedman1937`.\n```\n\n"
        "```{exercise}\n:label: ex-two\n\nAnother.\n```\n\n"
        "```{solution} ex-two\n:label: sol-two\n\nSee {ref}`ex-two`.\n```\n\n"
        "```{bibliography}\n```\n")
    out = tmp_path / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src), str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (out / "index.html").read_text()
    assert "Exercise 1" in html and "Exercise 2" in html and "Solution to" in html
    assert "Friedman" in html and "the use of ranks" in html.lower()


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
